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
:meth:`Design.sim_setup` returns a :class:`SimSetup`: nine compiled *hook*
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
                                              access).  ``k`` is the operand slot; ``reg`` 255
                                              is ``RZ`` (GPGPU-Sim mode only).
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
=============  =============================  ===============================================

``warp`` is the hardware warp slot, ``row`` the trace row of the instruction
(a design that needs per-instruction data copies it into its state, indexed by
row, in ``sim_setup``).  A design's extra counters live in its int64 state;
:attr:`SimSetup.counters` names them.  :meth:`Design.sim_metrics` turns the
run's counts into the structure events for the energy accounting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np
from numba import njit

from rfmodel.errors import RfmodelError, UnknownNameError

#: "no further upkeep": returned by ``upkeep`` hooks that need no more calls
NEVER = 1 << 62


@njit(cache=True)
def no_op_hook(ints, floats, a, b, c, d, cycle):
    """A hook that does nothing and allows everything (returns 0)."""
    return 0


@njit(cache=True)
def never_hook(ints, floats, a, b, c, d, cycle):
    """An upkeep hook that never needs to be called again."""
    return NEVER


# ---------------------------------------------------------------- the SM's register-to-bank function
MAPPING_IDS = {"gpgpusim": 0, "subcore": 1, "warp-per-bank": 2, "reg-mod": 3}
#: ints of the standard bank header: mapping, banks, banks per sub-core, split, schedulers, reg offset
BANK_HEADER_LEN = 6


def bank_header(sm, reg_offset: int = 0) -> np.ndarray:
    """The int64 header :func:`standard_bank` reads: the SM's bank mapping in numbers.

    ``reg_offset`` is added to every register number first (GPGPU-Sim's trace
    mode numbers SASS ``R0`` as 1, so its compatible mode passes 1).
    """
    split = bool(sm.sub_core or sm.bank_mapping == "subcore")
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


class SimHooks(NamedTuple):
    """The nine simulator hooks of a design (see the module docstring); defaults do nothing."""

    operand: object = standard_bank_hook
    write: object = standard_bank_hook
    may_issue: object = no_op_hook
    issued: object = no_op_hook
    activate: object = no_op_hook
    deactivate: object = no_op_hook
    upkeep: object = never_hook
    pool: object = no_op_hook
    prefer: object = no_op_hook


@dataclass
class SimSetup:
    """What a design gives the simulator for one run.

    ``ints``/``floats`` are the design's state (the hooks' first two
    arguments); ``stall_reasons`` names the design's extra stall reasons (the
    j-th is returned by ``may_issue`` as ``j``, 1-based); ``counters`` maps the
    names of the design's extra counters to their index in ``ints``;
    ``pool`` is the active-warp pool per scheduler of the two-level scheduler;
    ``prefer`` switches the schedulers' preference pass on (the ``prefer`` hook is
    only called when it is set, so designs without it pay nothing).
    """

    hooks: SimHooks
    ints: np.ndarray
    floats: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.float64))
    stall_reasons: tuple[str, ...] = ()
    counters: dict[str, int] = field(default_factory=dict)
    pool: int = 8
    prefer: bool = False

    def __post_init__(self):
        self.ints = np.ascontiguousarray(self.ints, dtype=np.int64)
        self.floats = np.ascontiguousarray(self.floats, dtype=np.float64)
        if self.ints.ndim != 1 or self.floats.ndim != 1 or len(self.ints) == 0 or len(self.floats) == 0:
            raise ValueError("SimSetup: ints and floats must be non-empty 1-D arrays")
        for name, i in self.counters.items():
            if not 0 <= i < len(self.ints):
                raise ValueError(f"SimSetup: counter '{name}' index {i} is outside ints")


class Design:
    """Base class of design plug-ins."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: names of the grid parameters this design understands beyond the SM fields
    parameters: ClassVar[tuple[str, ...]] = ()
    #: names of the design's own scalar metrics (``rf_cache_hit_rate``, ``prefetches``, ...) that
    #: ``sim_metrics`` and ``analytic`` report beside the common ones; ``evaluate`` puts each in the
    #: Dataset (NaN where an engine does not give it)
    metrics: ClassVar[tuple[str, ...]] = ()
    #: what the design's collectors read from the banks: every operand slot (a register named twice by one
    #: instruction is read twice, as the simulator's own collectors do) or, ``False``, each distinct source
    #: register once; the analytic bank model (``interval_model(operand_slots=...)``) follows it
    operand_slots: ClassVar[bool] = True

    def compile(self, kernel):
        """The design's compiler pass over a static kernel (identity by default)."""
        return kernel

    def analytic(self, profile, sm, grid: dict):  # pragma: no cover - interface
        raise NotImplementedError

    def structures(self, sm, grid: dict, tech: dict):  # pragma: no cover - interface
        raise NotImplementedError

    def sim_setup(self, sm, params: dict, options, trace=None) -> SimSetup:
        """Hooks and state for one simulation of this design (``params``: the design point).

        ``trace``: the :class:`~rfmodel.workload.ir.Trace` being simulated, for designs whose
        state holds per-row data (interval entries, dead-operand bits, reuse hints); the
        simulator always passes it.
        """
        raise RfmodelError(f"design '{self.name}' does not support the cycle simulator (no sim_setup)")

    def sim_metrics(self, sm, params: dict, setup: SimSetup, counts: dict) -> dict:
        """Structure events (``{"events": {structure: (reads, writes)}}``) from a run's counts.

        ``counts`` holds the simulator's counters by name (``reads``, ``writes``,
        ``bank_read_acc``, ``bank_write_acc``, ...; see ``rfmodel.sim.core.K_FIELDS``)
        and the design's own counters (``SimSetup.counters``) under their names.
        """
        raise RfmodelError(f"design '{self.name}' does not support the cycle simulator (no sim_metrics)")


_REGISTRY: dict[str, type[Design]] = {}


def run_analytic(design: Design, profile, sm, grid: dict) -> dict:
    """``design.analytic(profile, sm, grid)`` with the grid's ``calib.ipc_factor`` applied to its IPC and
    cycles (the carrier of the analytic model's own error in Monte-Carlo runs; 1 otherwise).  Every
    engine path that runs a design's analytic model goes through here."""
    m = design.analytic(profile, sm, grid)
    f = grid.get("calib.ipc_factor")
    if f is None:
        return m
    f = np.asarray(f, dtype=np.float64)
    return {**m, "ipc": m["ipc"] * f, "cycles": m["cycles"] / f}


def register(cls: type[Design]) -> type[Design]:
    """Class decorator adding a design to the registry under ``cls.name``."""
    if not cls.name:
        raise ValueError(f"design class {cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def design_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def get_design(name: str | Design) -> Design:
    if isinstance(name, Design):
        return name
    _load_builtin()
    if name not in _REGISTRY:
        raise UnknownNameError("design", name, _REGISTRY)
    return _REGISTRY[name]()


def _load_builtin() -> None:
    from rfmodel.designs import (
        baseline,  # noqa: F401  (registers itself)
        bow,  # noqa: F401
        ltrf,  # noqa: F401
        malekeh,  # noqa: F401
        reuse_cache,  # noqa: F401
        rfc,  # noqa: F401
    )
