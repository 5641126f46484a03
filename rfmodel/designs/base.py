"""The design plug-in interface.

A design says everything about itself in one place: its parameters (a spec),
the compiler pass it needs, its analytic terms, the hooks it gives the cycle
simulator and the structures it adds for energy and area accounting.  The
engines ask the design; they never test its name.

Analytic contract: :meth:`Design.analytic` receives the workload profile, the
SM spec and a *grid* -- a dict of parameter arrays that broadcast against each
other (SM fields such as ``rf_banks`` and the design's own fields) -- and
returns a dict of metric arrays with at least ``ipc``, ``rf_reads``,
``rf_writes``, ``bank_conflict_stall_cycles`` and the event counts
``events[structure] = (reads, writes)`` for :func:`rfmodel.energy.account`.

Simulator contract
------------------
:meth:`Design.sim_setup` returns a :class:`SimSetup`: ten compiled *hook*
functions (:class:`SimHooks`) and the design's own state, one int64 and one
float64 array that only the hooks read and write.  The compiled cycle loop
(``rfmodel.sim.core``) calls the hooks at fixed points; it never calls Python
while it runs.  Every hook is a numba ``@njit`` function with the same
signature::

    hook(ints: int64[::1], floats: float64[::1], a: int64, b: int64, c: int64, d: int64,
         cycle: int64) -> int64

=============  =============================  ===============================================
hook           a, b, c, d                     called / returns
=============  =============================  ===============================================
operand        warp, row, k, reg              once per source operand when its instruction
                                              takes a collector unit; returns the bank
                                              (``>= 0``) the operand is read from through the
                                              arbiter, or ``-(1 + L)``: served outside the
                                              banks, arriving ``L`` cycles later (no bank
                                              access); ``bank + d * OPERAND_DELAY``: that
                                              bank's read, granted ``d`` cycles later than
                                              it could be (the design's own port conflict;
                                              the bank's queue waits behind it).  ``k`` is
                                              the operand slot; ``reg`` 255 is ``RZ``
                                              (GPGPU-Sim mode only).
write          warp, row, k, reg              once per destination register when its result
                                              is written back; returns the bank written
                                              (``>= 0``, arbitrated for a write port) or
                                              ``-1`` (the write goes elsewhere; no bank port)
may_issue      warp, row, scheduler, n        before an instruction that passed the
                                              scoreboard issues (``n`` = instructions this
                                              warp already issued this cycle); 0 allows it,
                                              ``j >= 1`` blocks it with the design's j-th
                                              extra stall reason
issued         warp, row, scheduler, record   after an instruction issued
activate       warp, cta, scheduler, 0        a warp slot receives a warp of a new CTA
deactivate     warp, cta, scheduler, 0        a warp finished (EXIT and nothing in flight)
upkeep         0, 0, 0, 0                     at cycle 0 and then at the cycle it returned
                                              last time; returns the next cycle it needs
                                              (``NEVER``: no more calls).  A design whose
                                              answers change with time alone must ask for
                                              upkeep then: idle cycles are skipped.
pool           warp, event, scheduler, 0      two-level scheduler only: the warp entered
                                              (event 1, also its first entry) or left
                                              (event 0: its next instruction waits on a
                                              long-latency result or a barrier) the active
                                              pool; a finishing warp gets ``deactivate``
prefer         warp, row, scheduler, 0        only when ``SimSetup.prefer`` is set: each
                                              scheduler first tries the warps for which it
                                              returns non-zero, in its policy's order, then
                                              the others in the same order
l1             warp, line, kind, 0            every global/local load or store line an L1D
                                              would see (``kind``: the memory kind of
                                              ``rfmodel.sim.core``, ``line`` the cache-line
                                              number); ``-1``: the SM's own L1D (the
                                              default), ``L >= 0``: the design's structure
                                              serves it ``L`` cycles later, ``-2``: its miss,
                                              sent to L2 through the SM's MSHRs; then called
                                              again with kind ``L1_FILL`` and the fill cycle
                                              as the fourth argument.  Stores write through
                                              to L2 unless answered ``L1_ABSORB`` (kept).
=============  =============================  ===============================================

A design can also issue memory traffic of its own (register spills and fills to L2):
``SimSetup.mem_queue`` is the offset ``q`` of a queue in its int state, ``ints[q]`` the
entries in use, ``ints[q + 1]`` the capacity, then per entry ``(line, kind, done)`` with
kind ``MQ_LOAD`` or ``MQ_STORE``.  A hook appends an entry with ``done = -1``; at the end
of that cycle the simulator sends it (a store writes to L2; a load takes an MSHR and
fills from L2 or DRAM) and writes the cycle it completes to ``done``.  The design
reuses entries (setting ``ints[q]`` back) once it has read them.

``warp`` is the hardware warp slot, ``row`` the trace row of the instruction
(a design that needs per-instruction data copies it into its state, indexed by
row, in ``sim_setup``).  A design's extra counters live in its int64 state;
:attr:`SimSetup.counters` names them.  :meth:`Design.sim_metrics` turns the
run's counts into the structure events for the energy accounting.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np
from numba import njit

from rfmodel.errors import RfmodelError, SpecError, UnknownNameError
from rfmodel.spec.base import Spec

#: "no further upkeep": returned by ``upkeep`` hooks that need no more calls
NEVER = 1 << 62

# the memory-side hooks' numbers (the simulator, rfmodel.sim.core, uses these)
#: ``kind`` of an ``l1`` hook call for a load line and for a store line
L1_LOAD, L1_STORE = 1, 2
#: ``kind`` of the ``l1`` hook's second call for a miss it sent to L2 (its fourth argument: the fill cycle)
L1_FILL = 100
#: the ``l1`` hook's answer for a store its structure keeps (a write-back cache): not written through to L2
L1_ABSORB = -3
#: an ``operand`` hook's answer ``bank + d * OPERAND_DELAY`` delays that bank read by ``d`` cycles
OPERAND_DELAY = 1 << 16
OPERAND_BANK_MASK = OPERAND_DELAY - 1
#: kinds of a design memory request (``SimSetup.mem_queue``): a line load (a fill) or store (a spill)
MQ_LOAD, MQ_STORE = 0, 1
#: bank claims (``SimSetup.bank_claims``): slots per SM bank (a power of two: claims at most this many
#: cycles ahead of the arbiter), and the word of a slot, ``cycle * CLAIM_MUL + accesses claimed``
CLAIM_RING = 1024
CLAIM_MUL = 256


def claim_words(num_banks: int) -> int:
    """Ints a design reserves for its bank claims on an SM of ``num_banks`` banks."""
    return int(num_banks) * CLAIM_RING


@njit(cache=True)
def claim_bank(ints, o, bank, t):
    """Claim one access of SM bank ``bank`` in cycle ``t`` for the design's own use (the claims ring at
    ``o`` in its ints, ``SimSetup.bank_claims``): the arbiter grants that many fewer reads of the bank in
    that cycle.  False when the slot still holds a claim of another cycle not yet past (``t`` more than
    :data:`CLAIM_RING` cycles ahead of it) or the slot is full; the claim is then not made."""
    i = o + bank * CLAIM_RING + (t & (CLAIM_RING - 1))
    w = ints[i]
    c = w // CLAIM_MUL
    if c == t:
        if w % CLAIM_MUL >= CLAIM_MUL - 1:
            return False
        ints[i] = w + 1
        return True
    if c > t:
        return False
    ints[i] = t * CLAIM_MUL + 1
    return True


def source_words(trace, dead) -> np.ndarray:
    """``[rows, 2]`` int64 words a design's hooks read a trace row's sources from: word 0 holds source
    registers 0-7 (8 bits each), word 1 sources 8-9 (bits 0-15) and ``dead``'s per-slot bits (16-25: the
    compiler's last-read bits of the row's sources); bits 32 and up of word 1 are left to the design."""
    src = np.asarray(trace.src)
    out = np.empty((len(src), 2), dtype=np.int64)
    _pack_sources(src, np.asarray(dead, dtype=np.int64).reshape(len(src)), out)
    return out


@njit(cache=True)
def _pack_sources(src, dead, out):  # pragma: no cover - compiled
    """:func:`source_words` into ``out``, a row at a time (the trace's rows are the simulator's)."""
    mask = np.int64((1 << src.shape[1]) - 1)
    for i in range(src.shape[0]):
        w0, w1 = source_row_words(src, i)
        out[i, 0] = w0
        out[i, 1] = w1 | ((dead[i] & mask) << 16)


@njit(cache=True, inline="always")
def source_row_words(src, i):  # pragma: no cover - compiled
    """Row ``i``'s source registers packed as :func:`source_words` packs them: sources 0-7 in the first
    word, 8 bits each, the rest from bit 0 of the second."""
    w0 = np.int64(0)
    w1 = np.int64(0)
    for k in range(src.shape[1]):
        r = np.int64(src[i, k])
        if k < 8:
            w0 |= r << (8 * k)
        else:
            w1 |= r << (8 * (k - 8))
    return w0, w1


@njit(cache=True)
def no_op_hook(ints, floats, a, b, c, d, cycle):
    """A hook that does nothing and allows everything (returns 0)."""
    return 0


@njit(cache=True)
def never_hook(ints, floats, a, b, c, d, cycle):
    """An upkeep hook that never needs to be called again."""
    return NEVER


@njit(cache=True)
def own_l1_hook(ints, floats, warp, line, kind, fill, cycle):
    """L1D hook of a design without its own: every access goes to the SM's L1D (returns -1)."""
    return -1


# ---------------------------------------------------------------- the SM's register-to-bank function
MAPPING_IDS = {"gpgpusim": 0, "subcore": 1, "warp-per-bank": 2, "reg-mod": 3}
#: ints of the standard bank header: mapping, banks, banks per sub-core, split, schedulers, reg offset
BANK_HEADER_LEN = 6


def bank_header(sm, reg_offset: int = 0) -> np.ndarray:
    """The int64 header :func:`standard_bank` reads: the SM's bank mapping in numbers.

    ``reg_offset`` is added to every register number first (GPGPU-Sim's trace
    mode numbers SASS ``R0`` as 1, so its compatible mode passes 1).
    """
    split = sm.banks_split
    return np.array(
        [
            MAPPING_IDS[sm.bank_mapping],
            sm.num_banks,
            sm.banks_per_subcore,
            int(split),
            sm.schedulers_per_sm,
            reg_offset,
        ],
        dtype=np.int64,
    )


def header_state(sm, options, size: int = BANK_HEADER_LEN) -> np.ndarray:
    """A design's int64 state of ``size`` words: the bank header (:func:`bank_header`, registers shifted
    as the run's mode needs: :func:`gpgpusim_offset`) at its start, zeros after it."""
    ints = np.zeros(size, np.int64)
    ints[:BANK_HEADER_LEN] = bank_header(sm, gpgpusim_offset(options))
    return ints


@njit(cache=True)
def standard_bank(h, warp, reg):
    """Bank of register ``reg`` of warp slot ``warp``, as :meth:`SMSpec.bank_of` (header at ``h[0:6]``)."""
    mapping = h[0]
    split = h[3] != 0
    n = h[2] if split else h[1]
    r = reg + h[5]
    if mapping == 0 or mapping == 1:
        local = (r + warp) % n
    elif mapping == 2:
        local = ((warp // h[4]) if split else warp) % n
    else:
        local = r % n
    if split:
        return (warp % h[4]) * n + local
    return local


@njit(cache=True)
def standard_bank_hook(ints, floats, warp, row, k, reg, cycle):
    """Operand/write hook: every access goes to the register's bank (the header at ``ints[0:6]``)."""
    return standard_bank(ints, warp, reg)


@njit(cache=True)
def served_or_bank(ints, hit, hits_at, misses_at, warp, reg):
    """Operand/write hook result of an access a design's own store serves when ``hit`` (counted at
    ``ints[hits_at]``; -1: no bank), else the register's bank (counted at ``ints[misses_at]``)."""
    if hit:
        ints[hits_at] += 1
        return -1
    ints[misses_at] += 1
    return standard_bank(ints, warp, reg)


#: the SM fields of its banks' ports: a bank that takes more than one cycle serves one access at a time, so
#: where a design's banks are slow at every point they have no effect (:meth:`Design.not_modelled`)
BANK_PORT_FIELDS = ("bank_read_ports", "bank_write_ports", "bank_rw_ports")


class SimHooks(NamedTuple):
    """The ten simulator hooks of a design (see the module docstring); defaults do nothing.  Where the
    operand, write, may-issue or issued hook is its default, the cycle loop does its work itself instead of
    calling it through its function pointer (``rfmodel.sim.core.C_HOOKS_STD``), with the same result."""

    operand: object = standard_bank_hook
    write: object = standard_bank_hook
    may_issue: object = no_op_hook
    issued: object = no_op_hook
    activate: object = no_op_hook
    deactivate: object = no_op_hook
    upkeep: object = never_hook
    pool: object = no_op_hook
    prefer: object = no_op_hook
    l1: object = own_l1_hook


@dataclass
class SimSetup:
    """What a design gives the simulator for one run.

    ``ints``/``floats`` are the design's state (the hooks' first two
    arguments); ``stall_reasons`` names the design's extra stall reasons (the
    j-th is returned by ``may_issue`` as ``j``, 1-based); ``counters`` maps the
    names of the design's extra counters to their index in ``ints``;
    ``pool`` is the active-warp pool per scheduler of the two-level scheduler;
    ``prefer`` switches the schedulers' preference pass on (the ``prefer`` hook is
    only called when it is set, so designs without it pay nothing); ``bank_read_cycles`` and
    ``bank_write_cycles`` time the SM's banks (slow cells: one access at a time per bank, docs/simulator.md).
    """

    hooks: SimHooks
    ints: np.ndarray
    floats: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.float64))
    stall_reasons: tuple[str, ...] = ()
    counters: dict[str, int] = field(default_factory=dict)
    pool: int = 8
    prefer: bool = False
    #: the SM's banks: cycles one read access holds its bank and takes to deliver, cycles one write holds it
    #: (the main RF's cell; 1 and 1: the simulator's one-cycle banks with their ports)
    bank_read_cycles: int = 1
    bank_write_cycles: int = 1
    #: offset in ``ints`` of the design's memory-request queue (-1: none; module docstring)
    mem_queue: int = -1
    #: offset in ``ints`` of the design's bank claims (-1: none): ``claim_words(num_banks)`` ints, one ring of
    #: :data:`CLAIM_RING` slots per SM bank, filled by :func:`claim_bank` (an access of the design's own,
    #: a line lookup in a tag bank for instance, that takes one of the bank's read ports in its cycle)
    bank_claims: int = -1
    #: a write buffer in front of slow banks (docs/simulator.md, "Write buffer"): entries (0: none), and
    #: whether they form one pool shared by all banks (True) or are that many per bank (False)
    write_buffer_entries: int = 0
    write_buffer_shared: bool = True
    #: cycles added to every instruction class's result latency: a design's extra pipeline stages between
    #: the register file and the units (e.g. the STT-RAM register file's BDI compressor and decompressor)
    extra_result_latency: int = 0
    #: provenance of this run's setup (where hints or intervals came from, ...); reported in the result
    info: dict = field(default_factory=dict)
    #: the trace the simulator runs instead of the one it was given (None: that one), e.g. with the design's
    #: own instructions added (``rfmodel.trace.prepend_rows``); the hooks' ``row`` indexes it
    trace: object = None

    def __post_init__(self):
        self.ints = np.ascontiguousarray(self.ints, dtype=np.int64)
        self.floats = np.ascontiguousarray(self.floats, dtype=np.float64)
        if self.ints.ndim != 1 or self.floats.ndim != 1 or len(self.ints) == 0 or len(self.floats) == 0:
            raise ValueError("SimSetup: ints and floats must be non-empty 1-D arrays")
        for name, i in self.counters.items():
            if not 0 <= i < len(self.ints):
                raise ValueError(f"SimSetup: counter '{name}' index {i} is outside ints")
        if not 0 <= int(self.write_buffer_entries) <= 4096:
            raise ValueError("SimSetup: write_buffer_entries must lie in [0, 4096]")
        if self.bank_claims >= 0 and self.bank_claims + CLAIM_RING > len(self.ints):
            raise ValueError("SimSetup: the bank claims do not fit in ints")
        if self.mem_queue >= 0:
            q = self.mem_queue
            if q + 2 > len(self.ints) or q + 2 + 3 * int(self.ints[q + 1]) > len(self.ints):
                raise ValueError("SimSetup: the memory-request queue does not fit in ints")


@dataclass(frozen=True)
class DesignParams(Spec):
    """Base of every design's parameter spec: frozen, validated, versioned (``rfmodel.spec.base``).

    A design declares its parameters as a subclass with ``param(default, unit=, bounds=, doc=)``
    fields and the kind ``design.<name>``; engines validate every grid value through it, the optimizer
    takes its bounds from it, and it round-trips through TOML (``rfmodel.spec.dumps_spec``).
    """


@dataclass(frozen=True)
class NoParams(DesignParams, kind=""):
    """A design without parameters of its own."""


#: metric names whose kind their ending does not tell (:meth:`Design.metric_kind`); the main RF's access
#: times are per access
METRIC_KINDS = {
    "main_rf_read_cycles": "level",
    "main_rf_write_cycles": "level",
    "main_rf_network_cycles": "level",
    "rf_occupancy": "share",
    "ipc_program": "level",
    "code_size_increase": "share",
    "warps": "level",
}
#: name endings of a share (a fraction of 0 to 1) and of a level (entries held, a mean, a per-event figure)
SHARE_SUFFIXES = ("_rate", "_share", "_fraction", "_utilization")
LEVEL_SUFFIXES = (
    "_mean",
    "_max",
    "_entries",
    "_kb",
    "_per_write",
    "_per_value",
    "_length_dynamic",
    "_length_static",
    "_latency_cycles",
    "_max_bank_load",
)


@functools.cache
def _default_params(params: type[DesignParams], name: str) -> DesignParams:
    """``params`` at its defaults, validated once (:attr:`Design.default_params`)."""
    return params.from_dict({}, where=f"design '{name}'")


class Design:
    """Base class of design plug-ins: every member an engine reads is declared here.

    Subclasses set the class attributes and override the methods an engine uses; a design object is
    configuration only (it holds no state of a run: a run's provenance goes into its result, e.g.
    :attr:`SimSetup.info`).
    """

    #: registry name (``evaluate(design=...)``)
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: the design's parameter spec (a :class:`DesignParams` subclass); ``parameters`` are its field names
    Params: ClassVar[type[DesignParams]] = NoParams
    parameters: ClassVar[tuple[str, ...]] = ()
    #: names of the design's own scalar metrics (``rf_cache_hit_rate``, ``prefetches``, ...) that
    #: ``sim_metrics`` and ``analytic`` report beside the common ones; ``evaluate`` puts each in the
    #: Dataset of either engine
    metrics: ClassVar[tuple[str, ...]] = ()
    #: the kind of each of ``metrics`` where its name does not tell it (:meth:`metric_kind`)
    metric_kinds: ClassVar[dict[str, str]] = {}
    #: what the design's collectors read from the banks: every operand slot (a register named twice by one
    #: instruction is read twice, as the simulator's own collectors do) or, ``False``, each distinct source
    #: register once; the analytic bank model follows it (``Effects.operand_slots``)
    operand_slots: ClassVar[bool] = True
    #: the analytic model's free coefficients ``{name: (default, lower, upper)}`` that ``rfmodel calibrate``
    #: fits; the engine passes their values in the grid as ``calib.<name>``
    calibration_params: ClassVar[dict] = {}
    #: parameters ``rfmodel optimize`` leaves at their defaults unless named (``--design-param``): properties
    #: of the design's logic rather than knobs (a codec's latency: more cycles never help)
    not_searched: ClassVar[tuple[str, ...]] = ()
    #: the design's own points of the calibration sweep (``rfmodel.calibrate.sweep_jobs``), beside the
    #: sweep's shared points: dicts of its parameters (and SM fields) whose terms the shared points leave
    #: unidentified (another configuration of the design, its structure at a size the defaults never take)
    calibration_points: ClassVar[tuple[dict, ...]] = ()
    #: metrics (counts or levels) ``rfmodel calibrate`` fits beside the IPC, as log ratios against the
    #: simulator's: what the design's own coefficients size (e.g. the registers a prefetch fetches, its
    #: latency), so that the fit cannot trade a wrong size for a wrong speed
    fit_metrics: ClassVar[tuple[str, ...]] = ()
    #: the design's own stall reasons in the simulator (``may_issue`` returns the j-th as ``j``)
    stall_reasons: ClassVar[tuple[str, ...]] = ()
    #: the keys of ``evaluate``'s ``tech`` the design's structures read beyond every design's (``cell``,
    #: ``node_nm``, ``main_cell``): another key is refused, not ignored
    tech_options: ClassVar[tuple[str, ...]] = ()
    #: capability tags: the design has simulator hooks; the hooks need the trace being simulated
    supports_simulate: ClassVar[bool] = False
    needs_trace: ClassVar[bool] = False
    #: power gating: ``{structure: metric}``, the design metric (both engines report it) that gives the share
    #: of that structure powered during the run, the rest gated off (its leakage scales by it); structures
    #: not named leak whole
    leakage_active: ClassVar[dict[str, str]] = {}
    #: structures whose area, energy or leakage grow with a parameter: ``{parameter: (structure, ...)}``
    #: (the conformance suite checks that they never fall as it grows)
    size_parameters: ClassVar[dict] = {}
    #: named configurations of the design (a paper's evaluated variants): ``{name: {parameter: value}}``;
    #: ``evaluate(design, params=d.preset(name))``, ``rfmodel evaluate --preset NAME``
    presets: ClassVar[dict] = {}
    #: the parameters that switch the design's own mechanism off, where it has such a point (the SM's own
    #: register file, no write buffer, SRAM banks): there both engines give the baseline's IPC
    #: (``tests/test_design_conformance.py``); ``None``: none (a structure of the design stays in the path)
    neutral: ClassVar[dict | None] = None
    #: conformance checks (:mod:`rfmodel.testing`) the design is known to fail: ``{check name: reason}``;
    #: ``check_design`` reports them with the reason instead of failing, a pytest suite marks them xfail
    known_check_failures: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "Params" in cls.__dict__:
            cls.parameters = cls.Params.field_names()

    # ------------------------------------------------------------------ parameters
    def resolve(self, params: dict | DesignParams | None = None) -> DesignParams:
        """The typed parameters of one design point (defaults filled in, every value validated; an unknown
        name is a :class:`SpecError` naming the nearest valid one).  The engines resolve a point once, at
        their boundary, and hand the typed object to every stage (:meth:`launch_sm`, :meth:`compile`,
        :meth:`sim_setup`, :meth:`sim_metrics`); typed parameters of this design come back as they are."""
        if type(params) is self.Params:
            return params
        if isinstance(params, DesignParams):  # another design's (a subclass's fields would go unread)
            allowed = f"a dict or {self.Params.__name__}"
            raise SpecError(f"design '{self.name}'", "parameters", type(params).__name__, allowed)
        values = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in (params or {}).items()}
        return self.Params.from_dict(values, where=f"design '{self.name}'")

    @property
    def default_params(self) -> DesignParams:
        """The design's typed parameters at their defaults, resolved once per parameter spec (what every
        engine takes for a parameter a point does not set; kept outside the design object, which holds
        configuration only)."""
        return _default_params(self.Params, self.name)

    def grid_param(self, sm, grid: dict, name: str):
        """A design parameter over ``grid``: the grid's values where it sets them, else the default on
        ``sm`` (an optional parameter left out takes the SM field its declaration names)."""
        return grid[name] if name in grid else self.default_params.value_on(name, sm)

    def param_value(self, sm, name: str):
        """The value a point takes for ``name`` when it does not set it: the SM's field (``collector_units``:
        its collectors' count), else the design's default, an optional parameter left out taking the SM
        field it names (``param(sm_default=...)``).  ``KeyError`` for a name that is neither."""
        if name == "collector_units":
            return sm.collectors.total
        if name in sm.to_dict():
            return getattr(sm, name)
        if name in self.parameters:
            return self.default_params.value_on(name, sm)
        raise KeyError(f"no default for parameter '{name}' of design '{self.name}'")

    def check_grid(self, grid: dict) -> None:
        """Validate every value the grid gives a design parameter (one :class:`SpecError` otherwise): each
        distinct value once, by its field's own rules where the spec has none across fields
        (:meth:`~rfmodel.spec.base.Spec.accepts_alone`), else as a point of its own; a value refused is
        resolved as a point, whose error names it."""
        for k, v in grid.items():
            if k in self.parameters:
                for x in np.unique(np.asarray(v).ravel()):
                    if not self.Params.accepts_alone(k, x.item() if isinstance(x, np.generic) else x):
                        self.resolve({k: x})

    def bank_cycles(self, sm, params: DesignParams) -> dict:
        """The SM's own banks' timing at a design point, as the simulator's arbiter takes it
        (``SimSetup.bank_read_cycles`` and ``bank_write_cycles``): one cycle each, unless the design's banks
        are its main RF at the point's speed (:class:`rfmodel.designs.mainrf.SlowBanks`).  Where either is
        above one a bank serves one access at a time, in both engines, and its port counts act no more."""
        return {"bank_read_cycles": 1, "bank_write_cycles": 1}

    def not_modelled(self, sm, grid: dict, engine: str) -> list[str]:
        """The design parameters a run of ``engine`` over ``grid`` on ``sm`` sets to no effect, in words: a
        value other than the default of a parameter the engine does not model (its declaration's
        ``engines``: the answer is the default's), or one set where it cannot act at any point of the grid
        (``acts_with``: another parameter or SM field never takes a value it acts with).  Each is said once
        per process (a warning); the engines list them in ``ds.attrs["not_modelled"]``."""
        from rfmodel.spec.occupancy import warn_once

        d0 = self.Params()
        dflt = {k: getattr(d0, k) for k in self.parameters}
        out = []
        for k in self.parameters:
            if k not in grid:
                continue
            info = self.Params.field_info(k)
            values = list(dict.fromkeys(np.asarray(grid[k]).ravel().tolist()))
            set_ = [v for v in values if v != dflt[k]]
            if not set_:
                continue
            shown = ", ".join(str(v) for v in set_)
            if engine not in info.engines:
                out.append(f"{k} = {shown} (answered as {dflt[k]})")
                by = ", ".join(info.engines)
                warn_once(
                    f"the {engine} engine of design '{self.name}' does not model {k}: its answer is "
                    f"the one for {k} = {dflt[k]} (modelled by: {by}; the result's "
                    "attrs['not_modelled'] lists the values set)"
                )
                continue
            for other, acting in info.acts_with:
                if other in grid:
                    there = list(dict.fromkeys(np.asarray(grid[other]).ravel().tolist()))
                else:
                    there = [dflt[other] if other in dflt else getattr(sm, other)]
                if not any(t in acting for t in there):
                    allowed = " or ".join(repr(a) for a in acting)
                    out.append(f"{k} = {shown} (no effect unless {other} = {allowed})")
                    now = ", ".join(repr(t) for t in there)
                    warn_once(
                        f"design '{self.name}': {k} has no effect unless {other} = {allowed} ({other} "
                        f"is {now}; the result's attrs['not_modelled'] lists the values "
                        "set)"
                    )
                    break
        return out + self._ports_without_effect(sm, grid)

    def _ports_without_effect(self, sm, grid: dict) -> list[str]:
        """The banks' port counts the grid sets (:data:`BANK_PORT_FIELDS`) where no point of it has
        one-cycle banks (:meth:`bank_cycles` at each distinct combination of the design's own parameters
        the grid sets): a slow bank serves one access at a time, whatever its ports."""
        from rfmodel.spec.occupancy import warn_once

        ports = [k for k in BANK_PORT_FIELDS if k in grid]
        if not ports:
            return []
        own = [k for k in self.parameters if k in grid]
        arrays = np.broadcast_arrays(*(np.asarray(grid[k]) for k in own)) if own else []
        combos = dict.fromkeys(zip(*(a.ravel().tolist() for a in arrays), strict=True)) if own else [()]
        for combo in combos:
            c = self.bank_cycles(sm, self.resolve(dict(zip(own, combo, strict=True))))
            if c["bank_read_cycles"] <= 1 and c["bank_write_cycles"] <= 1:
                return []  # one-cycle banks at this point: the ports act there
        out = []
        for k in ports:
            shown = ", ".join(str(v) for v in dict.fromkeys(np.asarray(grid[k]).ravel().tolist()))
            out.append(f"{k} = {shown} (no effect: every point's banks take more than one cycle)")
        verb = "has" if len(ports) == 1 else "have"
        warn_once(
            f"design '{self.name}': {', '.join(ports)} {verb} no effect where the banks take more than one "
            "cycle, as at every point here: a slow bank serves one access at a time (the result's "
            "attrs['not_modelled'] lists the values set)"
        )
        return out

    def preset(self, name: str) -> dict:
        """The parameters of the named configuration (:attr:`presets`), validated; an unknown name is one
        :class:`UnknownNameError` listing the known ones."""
        if name not in self.presets:
            raise UnknownNameError(f"preset of design '{self.name}'", name, self.presets)
        values = dict(self.presets[name])
        self.resolve(values)
        return values

    def defaults(self) -> dict:
        """The design parameters' default values."""
        return self.Params().to_dict()

    # ------------------------------------------------------------------ the stages an engine calls
    #: the parameters the compiler pass depends on (a compiled program is reused across the others)
    compile_params: ClassVar[tuple[str, ...]] = ()

    def compile(self, kernel, params: DesignParams, sm):
        """The design's compiler pass over the static kernel a trace was expanded from, for the typed
        parameters ``params`` on ``sm``: the *program* its simulator hooks read (``sim_setup(program=...)``);
        None by default (no pass).  The engines run it once per (kernel, ``compile_params`` values)."""
        return None

    def program_for(self, trace, params: dict | DesignParams, sm, kernel=None):
        """The compiled program of one simulation: the pass over the trace's static kernel (``kernel`` if the
        workload came with it, else the one its ``kernel_source`` names, when it matches the trace), or
        None when there is no pass or no static kernel (designs then work on the dynamic trace).
        ``params``: the point's typed parameters (a dict is resolved here)."""
        if type(self).compile is Design.compile:
            return None
        from rfmodel.workload.static import static_kernel

        k = static_kernel(trace, kernel)
        return None if k is None else self.compile(k, self.resolve(params), sm)

    def launch_sm(self, sm, p: DesignParams, trace):
        """The SM a kernel runs on under this design: ``sm`` itself by default; a design that
        re-partitions its on-chip memory when a kernel is launched (from the kernel's register demand)
        returns the spec with the SM fields it chose (``regs_per_sm``, ``l1d``, ...).  The simulator calls
        it once per run, before :meth:`compile` and :meth:`sim_setup`, and runs the kernel on what it
        returns; the analytic terms make the same choice from the workload profile themselves."""
        return sm

    def analytic(self, ctx) -> dict:
        """Metric arrays over the grid from the shared SM model (``ctx``: an
        :class:`~rfmodel.analytic.model.AnalyticContext`): the standard metrics, the design's ``metrics``
        and ``events = {structure: (reads, writes)}``."""
        raise NotImplementedError(f"design '{self.name}' has no analytic model")

    def structures(self, sm, grid: dict, tech: dict) -> list:
        """The structures the energy accounting charges, their costs broadcast over the grid."""
        raise NotImplementedError(f"design '{self.name}' declares no structures")

    def sim_setup(self, sm, p: DesignParams, options, trace=None, program=None) -> SimSetup:
        """Hooks and state for one simulation of this design (``p``: the design point's typed parameters,
        :meth:`resolve`'s, resolved once by the simulator).

        ``trace``: the :class:`~rfmodel.ir.Trace` being simulated, for designs whose
        state holds per-row data (interval entries, dead-operand bits, reuse hints); the
        simulator always passes it.  ``program``: what :meth:`compile` made of the trace's static
        kernel (None: no static kernel, the design works on the dynamic trace).
        """
        raise RfmodelError(f"design '{self.name}' does not support the cycle simulator (no sim_setup)")

    def metric_kind(self, name: str) -> str:
        """How a metric is compared between the engines (:mod:`rfmodel.calibrate.metrics`): ``"share"`` (a
        fraction of 0 to 1), ``"count"`` (events over the run, compared per instruction) or ``"level"`` (a
        time-averaged or per-event quantity).  The design's :attr:`metric_kinds`, else
        :data:`METRIC_KINDS`, else from the name (:data:`SHARE_SUFFIXES`, :data:`LEVEL_SUFFIXES`), else a
        count."""
        kind = self.metric_kinds.get(name) or METRIC_KINDS.get(name)
        if kind:
            return kind
        if name.endswith(SHARE_SUFFIXES):
            return "share"
        return "level" if name.endswith(LEVEL_SUFFIXES) else "count"

    def sim_metrics(self, sm, p: DesignParams, setup: SimSetup, counts: dict) -> dict:
        """Structure events (``{"events": {structure: (reads, writes)}}``) and the design's metrics from a
        run's counts (``p``: the point's typed parameters, as :meth:`sim_setup` got them).

        ``counts`` holds the simulator's counters by name (``reads``, ``writes``,
        ``bank_read_acc``, ``bank_write_acc``, ...; see ``rfmodel.sim.core.K_FIELDS``)
        and the design's own counters (``SimSetup.counters``) under their names, and the scheduler-cycles
        without an issue per stall reason, the simulator's and the design's own (``stall_<reason>``).
        """
        raise RfmodelError(f"design '{self.name}' does not support the cycle simulator (no sim_metrics)")


def rate(num, den) -> float:
    """``num / den``, 0 when ``den`` is 0 (hit rates of runs without accesses)."""
    return float(num) / float(den) if den else 0.0


def gpgpusim_offset(options) -> int:
    """Register-number offset of the bank function: 1 in GPGPU-Sim's compatible mode (SASS ``R0`` is 1)."""
    return 1 if options is not None and options.compat == "gpgpusim" else 0


_REGISTRY: dict[str, type[Design]] = {}
#: entry-point group through which other packages add designs
ENTRY_POINT_GROUP = "rfmodel.designs"


def register(cls: type[Design]) -> type[Design]:
    """Class decorator adding a design to the registry under ``cls.name``."""
    if not cls.name:
        raise ValueError(f"design class {cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def design_names() -> list[str]:
    _load_designs()
    return sorted(_REGISTRY)


def design_classes() -> dict[str, type[Design]]:
    """Every registered design class by name (built-in and from installed packages)."""
    _load_designs()
    return dict(_REGISTRY)


def get_design(name: str | Design) -> Design:
    if isinstance(name, Design):
        return name
    if isinstance(name, str) and name not in _REGISTRY:
        _load_design_module(name)
    if not isinstance(name, str) or name not in _REGISTRY:
        _load_designs()
    if not isinstance(name, str) or name not in _REGISTRY:
        raise UnknownNameError("design", name, _REGISTRY)
    return _REGISTRY[name]()


def _load_design_module(name: str) -> None:
    """Import the module of this package named like the design (``baseline`` -> ``baseline.py``), which
    registers it, so that using one design does not import every design; a name that no module here has
    (``ltrf_plus``, a plug-in's) is found by importing them all (:func:`_load_designs`)."""
    from pathlib import Path

    if name.isidentifier() and (Path(__file__).resolve().parent / f"{name}.py").is_file():
        import importlib

        importlib.import_module(f"rfmodel.designs.{name}")


_LOADED = False
#: environment variable naming design modules that are not installed: paths of ``.py`` files, separated by
#: the system's path separator; loaded with the registry (``rfmodel --design-file PATH.py`` adds to it)
DESIGNS_ENV = "RFMODEL_DESIGNS"
#: design files loaded so far: resolved path -> the design names each registered
_FILES: dict[str, list[str]] = {}


def load_design_file(path) -> list[str]:
    """Import the design module at ``path`` (a ``.py`` file that is not installed: its ``@register``
    classes join the registry) and return the names of the designs it registered.  Loading one file twice
    does nothing more.  A missing file, one that fails to import, that registers no design or a name the
    registry already holds is one :class:`RfmodelError` naming the file."""
    import hashlib
    import importlib.util
    import sys
    from pathlib import Path

    p = Path(path).expanduser()
    if not p.is_file():
        raise RfmodelError(f"design file {path}: no such file")
    if p.suffix != ".py":
        raise RfmodelError(f"design file {path}: not a Python file (.py)")
    key = str(p.resolve())
    if key in _FILES:
        return list(_FILES[key])
    _load_designs()  # the built-in designs first, so that a name the file reuses is seen
    before = dict(_REGISTRY)
    module = f"rfmodel_design_file_{p.stem}_{hashlib.sha1(key.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(module, p)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod  # dataclasses and pickle look the module up by name
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - any error of the user's module is reported as one line
        sys.modules.pop(module, None)
        _REGISTRY.clear()
        _REGISTRY.update(before)
        raise RfmodelError(f"design file {path}: importing it failed: {type(e).__name__}: {e}") from e
    clash = sorted(n for n, c in before.items() if _REGISTRY.get(n) is not c)
    added = sorted(set(_REGISTRY) - set(before))
    if clash:
        _REGISTRY.clear()
        _REGISTRY.update(before)
        raise RfmodelError(f"design file {path}: registers '{clash[0]}', a name a design already has")
    if not added:
        raise RfmodelError(f"design file {path}: registers no design (a Design subclass under @register)")
    _FILES[key] = added
    return added


def _load_designs() -> None:
    """Import every module of this package (each built-in design registers itself) and every entry point
    of the ``rfmodel.designs`` group (a third-party design module registers itself the same way)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib
    import pkgutil
    from importlib.metadata import entry_points
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    modules = [f"rfmodel.designs.{info.name}" for info in pkgutil.iter_modules([here])]
    for module in modules:
        importlib.import_module(module)
    # the registry in module order, whichever design get_design imported first (a stable sort keeps each
    # module's own order; classes from elsewhere follow)
    rank = {m: i for i, m in enumerate(modules)}
    ordered = sorted(_REGISTRY.items(), key=lambda item: rank.get(item[1].__module__, len(rank)))
    _REGISTRY.clear()
    _REGISTRY.update(ordered)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001 - a broken plug-in is named, not fatal to the others
            import warnings

            warnings.warn(f"design plug-in '{ep.name}' ({ep.value}) failed to load: {e}", stacklevel=2)
            continue
        if isinstance(obj, type) and issubclass(obj, Design) and obj.name not in _REGISTRY:
            register(obj)
    import os

    for path in os.environ.get(DESIGNS_ENV, "").split(os.pathsep):
        if path.strip():
            load_design_file(path.strip())
