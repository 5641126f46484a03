"""Workload profile: the distributions the analytic models consume.

A profile is extracted once from a dynamic :class:`~rfmodel.trace.Trace`
(one pass of compiled loops) and is then reused for every design point, so the
analytic engine never touches the trace again.  What it holds:

* instruction counts (total and per warp) and the op-class mix;
* register reads and writes per instruction (GPRs only, ``RZ`` excluded);
* **bank serialization table** ``ser[B]``: the mean, over instructions, of the
  largest number of *distinct* source registers that fall in one bank when
  registers are interleaved over ``B`` banks (``bank = (reg + warp) mod B``;
  the warp offset rotates banks and does not change the maximum, so the table
  is exact for that mapping and for plain ``reg mod B``), for ``B = 1..64``;
* **single-warp dependency time** ``chain[k]``: the cycles one warp needs on its
  own when every instruction waits for its producers' latencies plus ``k``
  extra cycles of operand collection (issue one instruction per cycle,
  ``t_i = max(t_{i-1} + 1, max_p(t_p + L_p + k))``), for ``k = 0..K``;
* the L1D line-reuse profile (LRU stack distances of line addresses, all warps
  interleaved round-robin: every warp's i-th instruction, then every warp's (i+1)-th) for
  hit-rate estimates.

Added for the calibrated model (docs/models.md):

* ``ser_pmf[B, m]``: the distribution (not only the mean) of the largest number
  of distinct sources in one bank, so that banks with ``p`` ports serialize
  ``ceil(m / p)`` cycles; ``ser_pmf_slots[B, m]`` the same over operand slots (a
  register named twice by one instruction counts twice: the simulator's collectors
  read every slot from its bank);
* ``src_count_pmf[k]`` (distinct sources per instruction) and
  ``reg_hist[r]`` (how often register ``r`` is a distinct source): the
  register-to-bank distribution of any interleaving follows as
  ``P(bank b) = sum_{r mod B = b} reg_hist[r] / sum(reg_hist)``;
* ``chain2[k, j]``: the single-warp table with read-after-write *and*
  write-after-write waits (the simulator's scoreboard) for ``k`` extra cycles
  per dependence and global/local/atomic loads at ``MEM_LAT_GRID[j]`` cycles
  beyond their execution latency;
* ``dep_dist_hist`` / ``reuse_dist_hist``: log2 histograms of the distance
  (in a warp's own instructions) from a source register to its producer and
  from one access of a register to the previous access of the same register,
  per warp; with ``W`` warps interleaved round-robin the interleaved distance
  is about ``W`` times the per-warp one (the models use that scaling);
* ``mem_fraction``: the fraction of instructions that touch the L1D; ``load_lines_per_instr``: the
  L1D lines of loads and atomics only (stores write through and do not wait for DRAM);
  ``instrs_per_warp``: the mean dynamic instructions of one warp.

The tables only some designs read are theirs, registered by the design modules that read them
(:class:`TableGroup`, in ``rfmodel/designs/``): built on first use, cached with the profile, and named by
nothing here.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from rfmodel.analytic.banks import expected_max_load_uniform, flat_float
from rfmodel.analytic.stream import operands_ready, unit_slots_of
from rfmodel.errors import RfmodelError
from rfmodel.ir import L1D_CLASSES, N_OPCLASSES, OpClass
from rfmodel.setassoc import lru_access_at, lru_probe, set_of
from rfmodel.trace import MAX_SRC, NONE, Trace

MAX_BANKS = 64
CHAIN_EXTRA = np.arange(0, 17, dtype=np.int64)  # extra operand-collection cycles tabulated
#: global/local/atomic load latencies (cycles beyond the class's execution latency) tabulated in ``chain2``
MEM_LAT_GRID = np.array([0.0, 64, 128, 256, 384, 512, 1024, 2048])
#: extra collection cycles tabulated in ``chain2`` and ``cta_chain2``
CHAIN2_EXTRA = np.array([0.0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64])
#: log2 bins of the dependency- and reuse-distance histograms (last bin: no producer / first access)
DIST_BINS = 16
#: instructions of whole warps, in trace order, over which the per-warp tables are taken (``chain``,
#: ``chain2``, the distance histograms, the register-cache and register-interval tables, ``live_regs``):
#: each warp's statistics are its own, so a sample of warps estimates them and bounds their cost on
#: long warps
TABLE_MAX_INSTRS = 64_000
#: resident CTAs scheduled together in ``sched_cpi`` (levels; a level above the trace's CTAs is skipped)
SCHED_CTAS = np.array([1, 2, 4, 8], dtype=np.int64)
#: serializes the parallel list schedules (numba's workqueue layer is not thread-safe)
_PARALLEL_LOCK = threading.Lock()
#: guards a profile's list-schedule cells while they are filled or read (``WorkloadProfile.sched_view``)
_FILL_LOCK = threading.Lock()

#: instructions list-scheduled per level: whole groups of CTAs in trace order until at least this many (the
#: cycles per instruction of a sample of groups; bounds the profile's cost on long traces)
SCHED_MAX_INSTRS = 30_000

#: the profile's tables that only some designs read, by group, and the fields each group fills: a profile
#: built without a group (``profile_trace(tables=...)``) builds it on first use (:meth:`WorkloadProfile.need`)
TABLE_GROUPS = {
    "chain2": ("chain2",),  # the two-level scheduler's pool, greedy warp-per-bank, intervals' latency
    # the list schedules of the SM's issue resources (``profile_trace``'s ``sched``), cell by cell: a query
    # builds the cells its fixed point reads (:meth:`WorkloadProfile.build_sched`), ``need`` every one
    "sched": ("sched_cpi",),
    # the schedule at other L1D sizes (designs whose L1D differs): the engine's source builds it (the SM's)
    "l1_anchor": ("sched_l1",),
}
#: what a registered group's builder may take besides the trace, its order and its SM inputs
#: (:class:`TableGroup`'s ``context``): ``latencies``, the result latency of each operation class (float64,
#: indexed by ``OpClass``, as :func:`profile_trace` takes them)
TABLE_CONTEXT = ("latencies",)
#: the groups designs registered (:func:`register_table_group`), and each of their fields' group
_TABLE_REGISTRY: dict = {}
_TABLE_FIELDS: dict = {}
#: prefix of a registered group's arrays in a saved profile (:meth:`WorkloadProfile.save`)
_TABLES_PREFIX = "tables."


@dataclass(frozen=True)
class TableGroup:
    """A group of profile tables that a design's own terms read, registered by its module
    (:func:`register_table_group`): built on first use (:meth:`WorkloadProfile.need`) by ``build(trace,
    rank, inputs) -> {field: value}`` from the profile's trace in its stream order (``rank``: the SM's
    schedule, ``None`` without one) and ``inputs``: ``sm_inputs(source)`` where the analytic engine's
    profile source builds it (the SM's view of the workload: ``rfmodel.analytic.engine.ProfileSource``),
    else ``None``.  The fields are read as the profile's attributes; a group built before its module
    (``build``'s) was edited reads as not built, so the design's own edits rebuild its tables and leave every
    other table on disk valid.  ``context``: the names of :func:`profile_tables`' own arguments that ``build``
    also takes, as keywords (:data:`TABLE_CONTEXT`).  ``cells``: the shape of a group whose every field is
    an array over a grid of cells that each cost a pass of their own: ``build`` then also takes ``cells=``
    (a bool mask of that shape, ``None``: every cell) and fills those (NaN elsewhere), and the profile builds
    only the cells a query reads (:meth:`WorkloadProfile.need_cells`), keeping them."""

    name: str
    fields: tuple
    build: Callable
    sm_inputs: Callable | None = None
    context: tuple = ()
    cells: tuple = ()

    def __post_init__(self):
        unknown = sorted(set(self.context) - set(TABLE_CONTEXT))
        if unknown:
            raise RfmodelError(
                f"table group {self.name!r}: context {unknown} unknown; allowed: {', '.join(TABLE_CONTEXT)}"
            )

    def sources_hash(self) -> str:
        """Hash of the source file of ``build``'s module (cached per process)."""
        return _module_hash(self.build.__module__)


@functools.lru_cache(maxsize=64)
def _module_hash(module: str) -> str:
    import hashlib
    import sys
    from pathlib import Path

    path = getattr(sys.modules.get(module), "__file__", None)
    return hashlib.sha1(Path(path).read_bytes()).hexdigest()[:12] if path else module


def scale_misses(hits, factor):
    """Hit rates ``hits`` with their miss rates ``1 - h`` multiplied by ``factor`` (clipped to [0, 1]): the
    Monte-Carlo engine's ``hit_rate`` factor, wherever a hit rate of the L1D's lines comes from."""
    return np.clip(1.0 - (1.0 - hits) * factor, 0.0, 1.0)


def register_table_group(group: TableGroup) -> TableGroup:
    """Add a design's table group (:class:`TableGroup`) to :data:`TABLE_GROUPS`; registering the same name
    again replaces it (a module reloaded), a name or field of the profile's own is an error."""
    taken = set(TABLE_GROUPS) - set(_TABLE_REGISTRY)
    own = {f.name for f in fields(WorkloadProfile)}
    clash = sorted((set(group.fields) & own) | ({group.name} & taken))
    if clash:
        raise RfmodelError(f"profile table group '{group.name}': {', '.join(clash)} already the profile's")
    old = _TABLE_REGISTRY.get(group.name)
    for f in old.fields if old is not None else ():
        _TABLE_FIELDS.pop(f, None)
    _TABLE_REGISTRY[group.name] = group
    TABLE_GROUPS[group.name] = tuple(group.fields)
    _TABLE_FIELDS.update({f: group for f in group.fields})
    return group


def registered_table_group(name: str) -> TableGroup | None:
    """The design's table group ``name`` (:func:`register_table_group`), or ``None``."""
    return _TABLE_REGISTRY.get(name)


def trace_groups() -> tuple:
    """The groups :func:`profile_tables` builds from the trace (every one but ``l1_anchor``, which needs the
    SM), the registered ones included."""
    return tuple(g for g in TABLE_GROUPS if g != "l1_anchor")


def _grid_pos(x: np.ndarray, v) -> tuple[np.ndarray, np.ndarray]:
    """Lower index ``i`` into the increasing grid ``x`` and the fraction ``f`` of the way to ``x[i + 1]`` of
    each value ``v`` (clamped to the grid's ends): the weights of linear interpolation."""
    v = np.clip(v, x[0], x[-1])
    i = np.clip(np.searchsorted(x, v, side="right") - 1, 0, len(x) - 2)
    return i, np.clip((v - x[i]) / (x[i + 1] - x[i]), 0.0, 1.0)


@dataclass(frozen=True)
class WorkloadProfile:
    name: str
    n_instrs: int
    n_warps: int
    mix: np.ndarray  # float64 [N_OPCLASSES]: fraction of instructions per class
    reads_per_instr: float  # GPR reads (operand slots)
    distinct_reads_per_instr: float
    writes_per_instr: float
    ser: np.ndarray  # float64 [MAX_BANKS + 1]: mean max-bank load, index = banks
    chain_extra: np.ndarray  # int64 [K]: extra collection cycles tabulated
    chain: np.ndarray  # float64 [K]: mean single-warp cycles per instruction
    mem_lines_per_instr: float  # L1D line accesses per instruction
    line_stack_hist: np.ndarray  # int64: histogram of log2(stack distance + 1); last bin = cold
    regs_per_thread: int
    threads_per_cta: int
    ctas: int
    shared_mem_bytes: int
    attrs: dict = field(default_factory=dict)
    # ---- distributions added for the calibrated model (module docstring)
    ser_pmf: np.ndarray | None = None  # float64 [MAX_BANKS + 1, MAX_SRC + 1]: distinct sources
    src_count_pmf: np.ndarray | None = None  # float64 [MAX_SRC + 1]
    reg_hist: np.ndarray | None = None  # float64 [256]
    chain2: np.ndarray | None = None  # float64 [len(CHAIN_EXTRA), len(MEM_LAT_GRID)]
    #: float64 [J]: the mean load latencies at which the ``[K, J]`` tables (``chain2``, ``cta_chain2``,
    #: ``sched_cpi``) are tabulated, :func:`mem_latency_grid` (``None``: :data:`MEM_LAT_GRID`)
    mem_grid: np.ndarray | None = None
    #: float64 [K, J]: mean critical path of one CTA alone (cycles); only without ``sched_cpi`` (which
    #: replaces it)
    cta_chain2: np.ndarray | None = None
    warps_per_cta: int = 1
    dep_dist_hist: np.ndarray | None = None  # int64 [DIST_BINS]
    reuse_dist_hist: np.ndarray | None = None  # int64 [DIST_BINS]
    mem_fraction: float = 0.0
    instrs_per_warp: float = 0.0
    load_lines_per_instr: float | None = None  # L1D lines of loads and atomics (stores excluded)
    #: the load/store unit's cycles of shared-memory accesses per instruction: a pass through the banks each
    #: (``Trace.smem_passes``, at least one an access with active lanes)
    smem_passes_per_instr: float = 0.0
    #: deactivation points (barriers, first consumers of long loads) per instruction
    sched_cpi: np.ndarray | None = None  # float64 [len(SCHED_CTAS), K, J]: cycles per instruction (NaN: none)
    #: bool [len(SCHED_CTAS), K, J]: the cells of ``sched_cpi`` not built yet (``None``: every cell of a
    #: scheduled level is); built on first read from the profile's ``source`` (:meth:`build_sched`)
    sched_todo: np.ndarray | None = None
    ser_pmf_slots: np.ndarray | None = None  # float64 [MAX_BANKS + 1, MAX_SRC + 1]: operand slots
    #: float64 [k, 4]: (lines, ways, hit rate, loads' hit rate) of the caches simulated exactly on the line
    #: stream (set = line mod sets, LRU, as the cycle simulator indexes them); other geometries are
    #: estimated from ``line_stack_hist`` / ``load_stack_hist``
    exact_hits: np.ndarray | None = None
    #: int64: ``line_stack_hist`` of the loads' accesses only (the stores' lines are in the stream, and
    #: move the loads' distances, but a store waits for nothing)
    load_stack_hist: np.ndarray | None = None
    #: int64 [2, 32]: ``line_stack_hist`` (row 0) and ``load_stack_hist`` (row 1) of a cache that does not
    #: allocate a line at a store miss (write-no-allocate): a store reads the stack but moves nothing
    #: (:func:`_line_stack_hist`'s ``touches``), so its hit needs the line loaded since it left
    nwa_stack_hist: np.ndarray | None = None
    #: float64 [len(SET_FILL_SETS), SET_FILL_WAYS]: lines a cache of ``SET_FILL_SETS[i]`` sets and ``j + 1``
    #: ways that loads fill holds, averaged over the stream from an empty cache (:func:`set_fill_table`)
    set_fill: np.ndarray | None = None
    # ---- value statistics of the written warp registers (the trace's ``compress`` column)
    #: mean live registers of a warp at an instruction: values from their write until they are freed (a
    #: register read before any write is live from the warp's start). With the trace's static kernel a
    #: value is freed where the compiler's liveness frees it, as register virtualization does: at a read
    #: whose dead bit is set (``dead_source_mask(per="value")``, conservative over paths), at once if no
    #: instruction reads it (``dead_defs``), else at the warp's end; without one, at its last read in the
    #: trace. ``attrs["live_regs"]`` says which
    live_regs: float = 0.0
    #: IPC of the profiled warps in the schedule of the SM's issue and memory pipeline at the SM's own
    #: occupancy (:mod:`rfmodel.analytic.stream`): the baseline pipeline's pace on this workload, which the
    #: analytic engine anchors every design's IPC on (:func:`rfmodel.analytic.engine.anchor_factor`);
    #: ``None``: not scheduled (a profile built by :func:`profile_trace` alone, or no CTA fits)
    sched_ipc: float | None = None
    #: float64 [2]: the load/store unit in the same schedule as ``sched_ipc``: the memory instructions that
    #: wait for it in collectors (its queue beyond the pipeline's delay times the collectors' share of the
    #: queue's places) and the share of the cycles it is busy
    #: (:func:`rfmodel.analytic.stream.issue_schedule`); ``None``: not scheduled
    sched_lsu: np.ndarray | None = None
    #: float64 [k, 2]: (L1D bytes, IPC) of the same schedule as ``sched_ipc`` on SMs that differ only in the
    #: L1D's size (the anchor of designs whose L1D differs, :func:`rfmodel.analytic.engine.anchor_curve`)
    sched_l1: np.ndarray | None = None
    #: float64 [k, 2]: (resident CTAs, IPC) of the same schedule with that many CTAs at once instead of the
    #: SM's occupancy (the anchor at another occupancy, :func:`rfmodel.analytic.engine.occupancy_factor`):
    #: the counts asked for so far, added by the engine's source as they are (and kept with the profile)
    sched_ctas: np.ndarray | None = None
    #: the Monte-Carlo engine's factor on the miss rates of the L1D's lines (``None``: none;
    #: ``rfmodel.analytic.montecarlo.perturb_profile``): :meth:`scaled_hits` applies it to hit rates a design
    #: reads from its own tables
    hit_rate_factor: float | np.ndarray | None = None
    #: the fields of the table groups designs register (:func:`register_table_group`), by name (read as
    #: attributes), with each built group's sources' hash under ``"<group>@sources"``: a group whose
    #: builder's sources changed since reads as not built
    tables: dict = field(default_factory=dict, compare=False, repr=False)
    #: builds the table groups the profile was built without (``source(group) -> {field: value}``;
    #: :meth:`need`); not saved: a loaded profile gets its source from whoever loads it
    source: Callable[[str], dict] | None = field(default=None, compare=False, repr=False)

    def __getattr__(self, name: str):
        # only for names that are not the dataclass's: a registered group's field, None until built (or when
        # its builder's sources changed since)
        group = _TABLE_FIELDS.get(name)
        if group is None:
            raise AttributeError(name)
        tables = self.__dict__.get("tables") or {}
        if tables.get(group.name + "@sources") != group.sources_hash():
            return None
        return tables.get(name)

    def set_fields(self, values: dict) -> WorkloadProfile:
        """Set fields in place (the tables :meth:`need` builds): a registered group's into :attr:`tables`
        with its sources' hash, the others as attributes.  Returns the profile."""
        for f, v in values.items():
            group = _TABLE_FIELDS.get(f)
            if group is None:
                object.__setattr__(self, f, v)
            else:
                self.tables[f] = v
                self.tables[group.name + "@sources"] = group.sources_hash()
        return self

    def with_fields(self, values: dict) -> WorkloadProfile:
        """A copy with ``values`` set (:meth:`set_fields`; the copy's :attr:`tables` its own)."""
        from dataclasses import replace

        return replace(self, tables=dict(self.tables)).set_fields(values)

    def scaled_hits(self, hits):
        """Hit rates of the L1D's lines with :attr:`hit_rate_factor` applied to their miss rates (as is
        without one); a tuple of them elementwise, ``None`` as is."""
        f = self.hit_rate_factor
        if f is None or hits is None:
            return hits
        if isinstance(hits, tuple):
            return tuple(scale_misses(h, f) for h in hits)
        return scale_misses(hits, f)

    def has(self, group: str) -> bool:
        """Whether the table ``group`` is built or can be (:meth:`need`)."""
        return self.source is not None or self._built(group)

    def _built(self, group: str) -> bool:
        if group == "sched" and self.sched_todo is not None and self.sched_todo.any():
            return False
        return all(getattr(self, f) is not None for f in TABLE_GROUPS[group])

    def need(self, *groups: str) -> WorkloadProfile:
        """This profile with the table ``groups`` (names of :data:`TABLE_GROUPS`) built: those it lacks
        come from its ``source`` (once: the profile keeps them)."""
        for g in groups:
            names = TABLE_GROUPS.get(g)
            if names is None:
                raise RfmodelError(f"profile table '{g}': unknown; allowed: {', '.join(TABLE_GROUPS)}")
            spec = _TABLE_REGISTRY.get(g)
            if spec is not None and spec.cells:  # every cell of a cell-wise group
                self.need_cells(g, np.ones(spec.cells, dtype=bool))
                continue
            if self._built(g):
                continue
            if g == "sched":
                self.build_sched()
                continue
            self._no_source(g)
            self.set_fields(self.source(g))
        return self

    def need_cells(self, group: str, mask) -> WorkloadProfile:
        """This profile with the cells ``mask`` (bool, the shape of the registered group's ``cells``) of the
        cell-wise table ``group`` built: those it lacks (NaN, or the whole group where it is not built or its
        builder's sources changed) come from its ``source`` and are kept (:meth:`fill_cells`)."""
        spec = _TABLE_REGISTRY.get(group)
        if spec is None or not spec.cells:
            raise RfmodelError(f"profile table '{group}': not a cell-wise table group")
        mask = np.asarray(mask, dtype=bool)
        have = getattr(self, spec.fields[0])
        todo = mask if have is None else mask & np.isnan(have)
        if todo.any():
            self._no_source(group)
            self.fill_cells(group, self.source(group, cells=todo), todo)
        return self

    def fill_cells(self, group: str, values: dict, cells) -> None:
        """Set the ``cells`` (bool mask) of the cell-wise table ``group``'s fields to ``values``' (a field not
        built yet starts as NaN everywhere)."""
        spec = _TABLE_REGISTRY[group]
        with _FILL_LOCK:
            out = {}
            for f in spec.fields:
                cur = getattr(self, f)
                cur = np.full(spec.cells, np.nan) if cur is None else np.array(cur, dtype=np.float64)
                cur[cells] = np.asarray(values[f], dtype=np.float64)[cells]
                out[f] = cur
            self.set_fields(out)

    def _no_source(self, group: str) -> None:
        if self.source is None:
            raise RfmodelError(
                f"profile {self.name!r} was built without its '{group}' tables and has no "
                f"source to build them from (profile_trace(tables=...))"
            )

    def build_sched(self, cells: np.ndarray | None = None, *, persist: bool = True) -> WorkloadProfile:
        """This profile with the ``sched_cpi`` cells ``cells`` built (bool, shaped as
        :meth:`sched_pending`: the scheduled levels only; default every cell not built yet), from its
        ``source``.  Each cell is its own list schedule, so a cell built alone equals the same cell of a
        table built at once; the cells are filled in place (copies of the profile share them).  Without
        ``persist`` the source's disk entry is rewritten only at the next :meth:`persist` (a caller that
        builds cells in several rounds writes it once)."""
        todo = self.sched_todo
        if todo is None:
            return self
        want = todo.copy()
        if cells is not None:
            want[:] = False
            want[self._sched_index()] = cells
            want &= todo
        if want.any():
            self._no_source("sched")
            self.fill_sched(self.source("sched", want, persist=persist)["sched_cpi"], want)
        return self

    def persist(self) -> None:
        """Write what the source built since its last write to its disk entry (:meth:`build_sched`)."""
        if self.source is not None:
            self.source.persist()

    def fill_sched(self, values: np.ndarray, cells: np.ndarray) -> None:
        """Set the ``sched_cpi`` ``cells`` (bool ``[len(SCHED_CTAS), K, J]``) to ``values``' and mark them
        built."""
        if self.sched_todo is None or self.sched_cpi is None:
            return
        with _FILL_LOCK:
            self.sched_cpi[cells] = values[cells]
            self.sched_todo[cells] = False

    def save(self, path) -> None:
        """Write the profile to ``path`` (NumPy ``.npz``: the arrays, and the other fields as JSON),
        atomically."""
        from rfmodel.io import write_npz

        arrays, meta = {}, {}
        for f in fields(self):
            if f.name in ("source", "tables"):
                continue
            v = getattr(self, f.name)
            (arrays if isinstance(v, np.ndarray) else meta)[f.name] = v
        meta["tables"] = {}
        for k, v in self.tables.items():  # a registered group's arrays under "tables.<field>"
            if isinstance(v, np.ndarray):
                arrays[_TABLES_PREFIX + k] = v
            else:
                meta["tables"][k] = v
        write_npz(path, arrays, json.loads(json.dumps(meta, default=_json_default)))

    @classmethod
    def load(cls, path) -> WorkloadProfile:
        """A profile written by :meth:`save`."""
        from rfmodel.io import read_npz

        data = read_npz(path)
        tables = dict(data.pop("tables", None) or {})
        for k in [k for k in data if k.startswith(_TABLES_PREFIX)]:
            tables[k.removeprefix(_TABLES_PREFIX)] = data.pop(k)
        return cls(**data, tables=tables)

    def bank_distribution(self, banks: int) -> np.ndarray:
        """``P(bank b)`` of a distinct source register under ``bank = reg mod banks``."""
        h = np.zeros(banks)
        np.add.at(h, np.arange(256) % banks, self.reg_hist)
        t = h.sum()
        return h / t if t > 0 else np.full(banks, 1.0 / banks)

    def ser_ports(self, banks, ports, slots: bool = False) -> np.ndarray:
        """Mean bank cycles ``E[ceil(max load / ports)]`` (vectorized over banks and ports); ``slots``:
        the load counts operand slots (a register named twice is read twice), else distinct sources."""
        return load_cycles(self.ser_pmf_slots if slots else self.ser_pmf, banks, ports)

    def ser_excess(self, banks, ports, slots: bool = False) -> np.ndarray:
        """Mean bank cycles beyond the first, ``E[max(ceil(M / ports) - 1, 0)]`` (vectorized; ``slots``
        as in :meth:`ser_ports`)."""
        return load_cycles(self.ser_pmf_slots if slots else self.ser_pmf, banks, ports, beyond_first=True)

    def ser_scattered(self, banks, ports) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`ser_ports` and :meth:`ser_excess` (vectorized over banks and ports) where each distinct
        source of an instruction sits in any of ``banks`` banks alike, independently (registers an
        allocator placed, not the interleaving of their numbers): over the distinct-source counts
        (``src_count_pmf``), the exact ``E[ceil(M / ports)]`` of uniform banks
        (:func:`~rfmodel.analytic.banks.expected_max_load_uniform`)."""
        b = np.clip(np.asarray(banks, dtype=np.int64), 1, MAX_BANKS)
        p = np.maximum(np.asarray(ports, dtype=np.float64), 1.0)
        ser = np.zeros(np.broadcast_shapes(b.shape, p.shape))
        excess = np.zeros_like(ser)
        for k, share in enumerate(self.src_count_pmf):
            if k and share > 0:  # an instruction with sources takes at least one cycle: the rest is excess
                e = expected_max_load_uniform(k, b, p)
                ser = ser + share * e
                excess = excess + share * (e - 1.0)
        return ser, excess

    def bank_read_share(self, read_share) -> np.ndarray:
        """Of the instructions with a source, the share that still read one from the banks when each distinct
        source reaches them with probability ``read_share``, independently (the rest are served by an
        operand cache): ``sum_k pmf[k] (1 - (1 - s)^k) / sum_{k >= 1} pmf[k]`` over ``src_count_pmf``;
        exactly 1 at ``s = 1`` (vectorized; 1 without the table)."""
        s = np.clip(np.asarray(read_share, dtype=np.float64), 0.0, 1.0)
        pmf = self.src_count_pmf
        if pmf is None or float(np.sum(pmf[1:])) <= 0.0:
            return np.ones_like(s)
        miss = 1.0 - s
        reach = sum(share * (1.0 - miss**k) for k, share in enumerate(pmf) if k and share > 0)
        return np.where(s >= 1.0, 1.0, reach / float(np.sum(pmf[1:])))

    def chain_at2(self, extra, mem_latency, table: str = "chain2") -> np.ndarray:
        """Bilinear interpolation of ``chain2`` (single-warp cycles per instruction) or another ``[K, J]``
        table at ``(extra, mem_latency)`` (vectorized; :func:`bilinear_at` per point)."""
        if table == "chain2":
            self.need("chain2")
        k, L = flat_float(extra, mem_latency)
        out = np.empty(k.shape)
        _bilinear_map(
            np.ascontiguousarray(getattr(self, table), dtype=np.float64),
            k.ravel(),
            L.ravel(),
            out.reshape(-1),
            self.mem_lat_grid(),
        )
        return out

    def mem_lat_grid(self) -> np.ndarray:
        """The mean load latencies of the ``[K, J]`` tables' columns (:func:`mem_latency_grid`)."""
        return MEM_LAT_GRID if self.mem_grid is None else np.asarray(self.mem_grid, dtype=np.float64)

    def sched_levels(self) -> np.ndarray:
        """The resident-CTA counts ``sched_cpi`` holds (empty without the table)."""
        if self.sched_cpi is None:
            return np.zeros(0, dtype=np.int64)
        return self.sched_tables()[0].astype(np.int64)

    def _sched_index(self) -> np.ndarray:
        """The levels of ``sched_cpi`` that are scheduled (built or to be built)."""
        ok = np.isfinite(self.sched_cpi[:, 0, 0])
        if self.sched_todo is not None:
            ok |= self.sched_todo[:, 0, 0]
        return np.flatnonzero(ok)

    def sched_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """``(levels, cpi)``: the tabulated resident-CTA counts (float) and their ``[level, K, J]`` tables,
        the arguments of :func:`sched_rate_at` (cells not built yet are NaN: :meth:`sched_view`)."""
        return self.sched_view()[:2]

    def sched_pending(self) -> np.ndarray | None:
        """bool, shaped as :meth:`sched_tables`' ``cpi``: its cells not built yet (``None`` when all are)."""
        return self.sched_view()[2]

    def sched_cell_counts(self) -> tuple[int, int]:
        """``(built, all)``: the list-schedule cells built so far, and every cell of the scheduled levels."""
        with _FILL_LOCK:
            built = 0 if self.sched_cpi is None else int(np.isfinite(self.sched_cpi).sum())
            todo = 0 if self.sched_todo is None else int(self.sched_todo.sum())
        return built, built + todo

    def sched_view(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(levels, cpi, pending)`` of :meth:`sched_tables` and :meth:`sched_pending` taken together
        (copies: a cell that another thread builds meanwhile is in neither or in both)."""
        with _FILL_LOCK:
            idx = self._sched_index()
            cpi = np.ascontiguousarray(self.sched_cpi[idx], dtype=np.float64)
            todo = self.sched_todo
            pending = None if todo is None or not todo.any() else np.ascontiguousarray(todo[idx])
        return SCHED_CTAS[idx].astype(np.float64), cpi, pending

    def sched_rate(self, ctas, extra, mem_latency) -> np.ndarray:
        """Instructions per cycle of ``ctas`` resident CTAs from the ``sched_cpi`` list schedules
        (vectorized; :func:`sched_rate_at` per point)."""
        levels, cpi = self.need("sched").sched_tables()
        cr, k, L = flat_float(ctas, extra, mem_latency)
        out = np.empty(cr.shape)
        _sched_rate_map(levels, cpi, cr.ravel(), k.ravel(), L.ravel(), out.reshape(-1), self.mem_lat_grid())
        return out

    def l1d_hit_rate(
        self, lines: np.ndarray | float, assoc=None, loads: bool = False, write_allocate: bool = True
    ) -> np.ndarray:
        """Hit rate of an LRU cache of ``lines`` lines from the stack distances: of every access (loads
        and stores: the rate a cache reports), or with ``loads`` of the loads' accesses only (those
        that wait for the line: what sets a load's latency and the misses' traffic).

        Fully associative by default; with ``assoc`` ways (``lines / assoc`` sets, lines mapped to
        sets at random) a reuse at stack distance ``d`` hits when fewer than ``assoc`` of the ``d``
        lines in between fell in its set: ``P(Binomial(d, assoc / lines) < assoc)``.  Without
        ``write_allocate`` a store miss takes no line (``nwa_stack_hist``; a profile without that table
        is refused rather than answered as write-allocate).
        """
        loads = bool(loads) and self.load_stack_hist is not None
        wa = bool(write_allocate)
        if not wa and self.nwa_stack_hist is None:
            raise RfmodelError(
                f"profile {self.name!r} has no write-no-allocate hit table (nwa_stack_hist): "
                "build it again with this version"
            )
        if np.ndim(lines) == 0 and np.ndim(assoc) == 0:  # one cache (the SM's L1D or L2 slice): remembered
            memo = self.__dict__.setdefault("_hit_memo", {})
            key = (float(lines), None if assoc is None else float(assoc), loads, wa)
            if key not in memo:
                memo[key] = self._hit_rate(np.asarray(lines, dtype=np.float64), assoc, loads, wa)
            return memo[key]
        return self._hit_rate(np.asarray(lines, dtype=np.float64), assoc, loads, wa)

    def _hit_rate(self, lines: np.ndarray, assoc, loads: bool = False, write_allocate: bool = True):
        if write_allocate:
            est = self._stack_hit_rate(lines, assoc, self.load_stack_hist if loads else self.line_stack_hist)
        else:
            est = self._stack_hit_rate(lines, assoc, self.nwa_stack_hist[1 if loads else 0])
        if self.exact_hits is None or assoc is None or not len(self.exact_hits):
            return est
        # a geometry simulated on the line stream itself: its set conflicts included (strided
        # addresses that fall in few sets), which the random-set estimate cannot see
        a = np.broadcast_to(np.asarray(assoc, dtype=np.float64), np.shape(est))
        lb = np.broadcast_to(lines, np.shape(est))
        out = np.array(est, dtype=np.float64)
        for row in self.exact_hits:
            if (bool(row[4]) if len(row) > 4 else True) != bool(write_allocate):
                continue  # simulated with the other store policy
            h = row[3] if loads and len(row) > 3 else row[2]
            out = np.where((lb == row[0]) & (a == row[1]), h, out)
        return out if np.ndim(out) else out[()]

    def _stack_hit_rate(self, lines: np.ndarray, assoc, hist) -> np.ndarray:
        h = hist.astype(np.float64)
        total = h.sum()
        if total == 0:
            return np.zeros_like(lines)
        # per cache: set-associative where it has more lines than ways, else fully associative (one set)
        sets = None if assoc is None else np.asarray(assoc, dtype=np.float64) < lines
        if sets is not None and np.ndim(sets) == 0 and sets:
            # one cache (the SM's): its hit probabilities are remembered
            ph = _set_hit_probability(float(assoc), float(lines), len(h) - 1)
            return (ph * h[:-1]).sum(axis=-1) / total
        if sets is not None and np.any(sets):
            nb = len(h) - 1
            # a grid of caches: each distinct geometry's probabilities once (remembered), spread back; a
            # point of one set takes its fully associative rate below (its lines here only keep p < 1)
            ab, lb = np.broadcast_arrays(np.asarray(assoc, dtype=np.float64), lines)
            every = bool(np.all(sets))
            if not every:
                lb = np.where(sets, lb, 2.0 * ab)
            geo, inv = np.unique(np.stack([ab.ravel(), lb.ravel()], axis=1), axis=0, return_inverse=True)
            if len(geo) <= _HIT_PROBABILITY_MEMO // 4:
                tab = np.stack([_set_hit_probability(float(x), float(y), nb) for x, y in geo])
                ph = tab[inv.reshape(-1)].reshape(*ab.shape, nb)
            else:
                ph = _set_hit_probability.__wrapped__(ab, lb, nb)
            set_rate = (ph * h[:nb]).sum(axis=-1) / total
            if every:
                return set_rate
            one_set = self._stack_hit_rate(np.broadcast_to(lines, sets.shape), None, hist)
            return np.where(sets, set_rate, one_set)
        # bin b holds stack distances d with floor(log2(d + 1)) == b; a hit needs d < lines.
        # Within a bin, distances are spread log-uniformly; count the fraction below `lines`.
        nb = len(h) - 1  # last bin: cold misses
        lo = 2.0 ** np.arange(nb) - 1.0
        hi = 2.0 ** (np.arange(nb) + 1) - 1.0
        frac = np.clip(
            (np.log2(lines[..., None] + 1.0) - np.log2(lo + 1.0)) / (np.log2(hi + 1.0) - np.log2(lo + 1.0)),
            0.0,
            1.0,
        )
        return (frac * h[:nb]).sum(axis=-1) / total


#: cache geometries whose set-conflict hit probabilities are remembered
_HIT_PROBABILITY_MEMO = 4096


@functools.lru_cache(maxsize=_HIT_PROBABILITY_MEMO)
def _set_hit_probability(assoc, lines, nb: int) -> np.ndarray:
    """``[..., nb]``: probability that a reuse in stack-distance bin ``b`` hits an LRU cache of ``lines``
    lines in sets of ``assoc`` ways (lines mapped to sets at random), ``P(Binomial(d, assoc / lines) <
    assoc)``, averaged over four distances spread through the bin (:meth:`WorkloadProfile.l1d_hit_rate`);
    read-only (the remembered array is shared)."""
    from scipy.special import bdtr  # the binomial CDF (scipy.stats costs 0.7 s to import)

    a = np.asarray(assoc, dtype=np.float64)[..., None, None]
    p = a / np.asarray(lines, dtype=np.float64)[..., None, None]
    u = np.array([0.125, 0.375, 0.625, 0.875])
    d = np.floor((2.0 ** np.arange(nb) - 1.0)[:, None] + (2.0 ** np.arange(nb))[:, None] * u[None, :])
    n, k = d.astype(np.int64), np.floor(a - 1.0)
    out = np.where(k >= n, 1.0, bdtr(np.minimum(k, n), n, p)).mean(axis=-1)
    out.setflags(write=False)
    return out


@njit(cache=True, inline="always")
def _bracket(x, grid):
    """``(i, f)``: ``grid[i] <= x <= grid[i + 1]`` and the fraction of the way, ``x`` clamped to the grid."""
    n = grid.shape[0]
    x = min(max(x, grid[0]), grid[n - 1])
    i = 0
    while i < n - 2 and grid[i + 1] <= x:
        i += 1
    return i, (x - grid[i]) / (grid[i + 1] - grid[i])


@njit(cache=True, inline="always")
def bilinear_at(c, extra, mem_latency, ke, ml):
    """``c[K, J]`` over the grids ``ke`` x ``ml`` (:data:`CHAIN2_EXTRA` x :data:`MEM_LAT_GRID`, passed in:
    a compiled caller in another module keeps no stale copy of them) interpolated at one point."""
    i, fk = _bracket(extra, ke)
    j, fl = _bracket(mem_latency, ml)
    return _bilinear_cell(c, i, j, fk, fl)


@njit(cache=True, inline="always")
def _bilinear_cell(c, i, j, fk, fl):
    """:func:`bilinear_at` in the cell ``(i, j)`` of the grids at the fractions ``fk``, ``fl`` of its way."""
    return (
        c[i, j] * (1 - fk) * (1 - fl)
        + c[i + 1, j] * fk * (1 - fl)
        + c[i, j + 1] * (1 - fk) * fl
        + c[i + 1, j + 1] * fk * fl
    )


@njit(cache=True, inline="always")
def _sched_pair(levels, ctas):
    """The levels ``(lo, hi)`` that :func:`sched_rate_at` reads at ``ctas`` resident CTAs (one level twice
    below the first and above the last)."""
    n = levels.shape[0]
    if ctas > levels[n - 1]:
        return n - 1, n - 1
    a = -1
    while a < n - 2 and ctas > levels[a + 1]:
        a += 1
    if a < 0:
        return 0, 0
    return a, a + 1


@njit(cache=True, inline="always")
def sched_rate_at(levels, cpi, ctas, extra, mem_latency, ke, ml):
    """Instructions per cycle of ``ctas`` resident CTAs from the list schedules ``cpi[level, K, J]`` of the
    resident-CTA counts ``levels`` (``WorkloadProfile.sched_tables``), at one point (grids ``ke`` x ``ml``
    as :func:`bilinear_at`).

    Between tabulated counts the rate is interpolated linearly; below one CTA it scales with the CTAs,
    above the largest count it grows in proportion to the CTAs (the issue and unit bounds of
    :func:`rfmodel.analytic.throughput.interval_model` then cap it).
    """
    lo, hi = _sched_pair(levels, ctas)
    i, fk = _bracket(extra, ke)  # one cell of the grids for both levels
    j, fl = _bracket(mem_latency, ml)
    b = max(_bilinear_cell(cpi[lo], i, j, fk, fl), 1e-9)
    if lo == hi:
        return (ctas / levels[lo] if ctas > levels[lo] else min(ctas, 1.0)) / b
    r_lo = 1.0 / b
    r_hi = 1.0 / max(_bilinear_cell(cpi[hi], i, j, fk, fl), 1e-9)
    f = min(max((ctas - levels[lo]) / (levels[hi] - levels[lo]), 0.0), 1.0)
    return r_lo + f * (r_hi - r_lo)


@njit(cache=True, inline="always")
def sched_cells_missing(levels, todo, ctas, extra, mem_latency, ke, ml, touched):
    """Whether :func:`sched_rate_at` at this point reads a cell that ``todo`` marks not built; marks those
    cells in ``touched`` (what the caller builds before it asks again)."""
    lo, hi = _sched_pair(levels, ctas)
    i, _ = _bracket(extra, ke)
    j, _ = _bracket(mem_latency, ml)
    miss = False
    for lv in range(lo, hi + 1):
        for a in range(i, i + 2):
            for b in range(j, j + 2):
                if todo[lv, a, b]:
                    touched[lv, a, b] = 1
                    miss = True
    return miss


@njit(cache=True)
def _bilinear_map(c, extra, mem_latency, out, ml):
    for i in range(out.shape[0]):
        out[i] = bilinear_at(c, extra[i], mem_latency[i], CHAIN2_EXTRA, ml)


@njit(cache=True)
def _sched_rate_map(levels, cpi, ctas, extra, mem_latency, out, ml):
    for i in range(out.shape[0]):
        out[i] = sched_rate_at(levels, cpi, ctas[i], extra[i], mem_latency[i], CHAIN2_EXTRA, ml)


def _json_default(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"cannot store {type(v).__name__} in a profile")


@njit(cache=True, inline="always")
def _written(ready, pready, q, i, t, L, extra, dst, pdst):
    """Instruction ``i`` of warp row ``q`` issued at ``t`` with latency ``L``: its registers are ready
    ``L + extra`` cycles later (the collection of the consumer included), its predicates ``L``."""
    done = t + L + extra
    for j in range(dst.shape[1]):
        r = dst[i, j]
        if r != NONE:
            ready[q, r] = done
    pm = pdst[i]
    p = 0
    while pm:
        if pm & 1:
            pready[q, p] = t + L
        pm >>= 1
        p += 1


@njit(cache=True)
def _chain_cycles(warp_ptr, op, dst, src, pdst, psrc, lat, extra):
    """Total single-warp cycles over all warps for each extra-latency value."""
    n_extra = extra.shape[0]
    total = np.zeros(n_extra, dtype=np.float64)
    ready = np.zeros((n_extra, 256), dtype=np.float64)
    pready = np.zeros((n_extra, 16), dtype=np.float64)
    for w in range(warp_ptr.shape[0] - 1):
        a, b = warp_ptr[w], warp_ptr[w + 1]
        if b <= a:
            continue
        for e in range(n_extra):
            for r in range(256):
                ready[e, r] = 0.0
            for p in range(16):
                pready[e, p] = 0.0
            t = -1.0
            for i in range(a, b):
                t = operands_ready(ready, pready, e, i, t + 1.0, src, dst, psrc, 0.0, False)
                _written(ready, pready, e, i, t, lat[op[i]], extra[e], dst, pdst)
            total[e] += t + 1.0
    return total


def _lru_hit_flags(lines, sets, ways, probe=None, index=0, line_shift=7):
    """Per access of the line stream: did it hit a set-associative LRU cache (set = line mod ``sets``, or
    the set index function ``index`` of :mod:`rfmodel.setassoc` with lines of ``2**line_shift`` bytes).
    An access with ``probe[t]`` takes no line at a miss (a store of a write-no-allocate cache; a hit
    refreshes its line, as the simulator's ``lru_probe``); default none."""
    lines = np.asarray(lines, dtype=np.int64)
    probe = np.zeros(len(lines), np.bool_) if probe is None else np.asarray(probe, np.bool_)
    return _lru_flags(lines, int(sets), int(ways), probe, int(index), int(line_shift))


@njit(cache=True)
def _lru_flags(lines, sets, ways, probe, index, line_shift):
    tag = np.full(sets * ways, -1, dtype=np.int64)
    stamp = np.full(sets * ways, -1, dtype=np.int64)
    out = np.zeros(lines.shape[0], dtype=np.bool_)
    for t in range(lines.shape[0]):
        s = set_of(lines[t], sets, line_shift, index)
        if probe[t]:
            out[t] = lru_probe(tag, stamp, s, ways, lines[t], t)[0]
        else:
            out[t] = lru_access_at(tag, stamp, s, ways, lines[t], t)[0]
    return out


class CacheGeometry(NamedTuple):
    """A cache simulated on a profile's line stream (``caches`` of :func:`exact_hit_rates` and the
    profile's builders; a plain ``(lines, ways)`` tuple reads as the defaults)."""

    lines: int
    ways: int
    write_allocate: bool = True  # false: a store miss takes no line
    index: int = 0  # set index function (rfmodel.setassoc.SET_INDEX; 0 linear)
    line_bytes: int = 128


def cache_flags(cache, line_no: np.ndarray, is_load: np.ndarray) -> np.ndarray:
    """:func:`_lru_hit_flags` of a :class:`CacheGeometry` (whole sets) on a line stream whose loads are
    ``is_load`` (its stores are probes where the cache does not allocate at a store miss)."""
    g = CacheGeometry(*cache)
    is_load = np.asarray(is_load, np.bool_)
    probe = np.zeros(len(is_load), np.bool_) if g.write_allocate else ~is_load
    return _lru_hit_flags(
        line_no,
        int(g.lines) // int(g.ways),
        int(g.ways),
        probe,
        int(g.index),
        int(g.line_bytes).bit_length() - 1,
    )


def load_latency_terms(
    n: int, access_row: np.ndarray, hit: np.ndarray, is_load_row: np.ndarray, l1_hit_latency: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(adj, slope)`` per trace row: the latency of a load row at mean load latency ``L`` is its class's
    ``L`` plus ``adj + slope L``, so that a load whose lines all hit the L1D waits ``l1_hit_latency`` and
    one with a miss waits the miss latency that makes the loads' mean ``L``: with ``h`` the loads' line hit
    rate, ``L_miss = (L - h L_hit) / (1 - h)``.  ``access_row[k]`` is the row of access ``k`` of the line
    stream, ``hit[k]`` whether it hit; a row waits for its slowest line."""
    adj = np.zeros(n, dtype=np.float64)
    slope = np.zeros(n, dtype=np.float64)
    ld = is_load_row[access_row]
    if not ld.any():
        return adj, slope
    h = float(hit[ld].mean())
    if h >= 1.0:
        return adj, slope
    all_hit = np.ones(n, dtype=np.bool_)
    np.logical_and.at(all_hit, access_row, hit)
    rows = np.zeros(n, dtype=np.bool_)
    rows[access_row[ld]] = True
    hit_rows = rows & all_hit
    miss_rows = rows & ~all_hit
    adj[hit_rows] = float(l1_hit_latency)
    slope[hit_rows] = -1.0  # L_hit, whatever L
    adj[miss_rows] = -float(l1_hit_latency) * h / (1.0 - h)
    slope[miss_rows] = 1.0 / (1.0 - h) - 1.0
    return adj, slope


def mem_latency_grid(adj: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """The mean load latencies ``L`` at which the ``[K, J]`` tables are tabulated, for the loads' terms
    ``(adj, slope)`` of :func:`load_latency_terms`: those at which a load with a miss waits
    ``MEM_LAT_GRID[j]`` cycles, ``L_j = h L_hit + (1 - h) MEM_LAT_GRID[j]`` (``h`` the loads' L1D hit rate).
    A missing load waits ``(L - h L_hit) / (1 - h)``, which moves ``1 / (1 - h)`` times as fast as ``L``:
    on a grid of ``L`` itself a kernel whose loads hit 99.6 % (``pa_sad`` on ``fermi-gtx480``) had its
    tables' miss latency go from -6,930 to 7,918 cycles between the grid's first two columns, and a mean
    latency of 31 cycles, where such a kernel runs, read the straight line between them (a list schedule
    eleven times slower than the schedule of the same warps).  On this grid the miss latency is
    tabulated, and a table is interpolated where it is smooth.  Without missing loads (no L1D, or every
    load hits): :data:`MEM_LAT_GRID`, the loads' latency itself."""
    miss = np.asarray(slope) > 0.0
    if not miss.any():
        return MEM_LAT_GRID
    s = float(np.asarray(slope)[miss][0])  # h / (1 - h), every missing load's
    h = s / (1.0 + s)
    l_hit = -float(np.asarray(adj)[miss][0]) / s
    grid = h * l_hit + (1.0 - h) * MEM_LAT_GRID
    grid.flags.writeable = False
    return grid


def exact_hit_rates(lines: np.ndarray, caches, is_load: np.ndarray | None = None) -> np.ndarray | None:
    """``[k, 5]`` rows (lines, ways, hit rate, loads' hit rate, write-allocate) of each cache (a
    :class:`CacheGeometry`) in ``caches`` simulated on the line stream (whole
    sets only: ``lines`` a multiple of ``ways``; without write-allocation a store miss takes no line; the
    set index of :mod:`rfmodel.setassoc`, default linear); ``is_load`` marks the loads' accesses (default:
    all)."""
    loads = np.ones(len(lines), np.bool_) if is_load is None else np.asarray(is_load, np.bool_)
    n_ld = int(loads.sum())
    rows = []
    for cache in caches or ():
        n_lines, ways = int(cache[0]), int(cache[1])
        if ways < 1 or n_lines < ways or n_lines % ways:
            continue
        hit = cache_flags(cache, lines, loads) if len(lines) else np.zeros(0, np.bool_)
        h, hl = int(hit.sum()), int(hit[loads].sum())
        rows.append(
            (
                n_lines,
                ways,
                h / max(len(lines), 1),
                hl / n_ld if n_ld else 0.0,
                float(CacheGeometry(*cache).write_allocate),
            )
        )
    return np.array(rows, dtype=np.float64).reshape(-1, 5) if rows else None


@njit(cache=True)
def _line_stack_hist(lines, nbins, loads, touches):
    """Histograms of floor(log2(d + 1)) of LRU stack distances d of every access (row 0) and of the
    accesses ``t`` with ``loads[t]`` (row 1); bin nbins-1 counts cold misses.  The accesses with
    ``touches[t]`` move the stack (every access of a write-allocate cache); the others only read it: a
    store of a write-no-allocate cache, whose line's distance counts the lines touched since the line's
    last touch (a line no access touched yet is cold).  This leaves out one move, a store hit's to the
    top of its set; so it stays a stack algorithm, one histogram for every cache size, and errs only where
    a line is stored to and then loaded again after more distinct lines than the cache holds.

    O(n log n) with a Fenwick tree over access times.
    """
    n = lines.shape[0]
    hist = np.zeros((2, nbins), dtype=np.int64)
    tree = np.zeros(n + 1, dtype=np.int64)
    last = dict()
    for t in range(n):
        key = lines[t]
        if key in last:
            p = last[key]
            # distinct lines touched after time p = live marks in (p, t)
            s = 0
            i = t  # prefix sum over [0, t-1] -> indices 1..t
            while i > 0:
                s += tree[i]
                i -= i & (-i)
            i = p + 1
            s2 = 0
            while i > 0:
                s2 += tree[i]
                i -= i & (-i)
            d = s - s2
            b = 0
            v = d + 1
            while v > 1:
                v >>= 1
                b += 1
            if b > nbins - 2:
                b = nbins - 2
            hist[0, b] += 1
            if loads[t]:
                hist[1, b] += 1
            if touches[t]:
                i = p + 1
                while i <= n:
                    tree[i] -= 1
                    i += i & (-i)
        else:
            hist[0, nbins - 1] += 1
            if loads[t]:
                hist[1, nbins - 1] += 1
        if touches[t]:
            last[key] = t
            i = t + 1
            while i <= n:
                tree[i] += 1
                i += i & (-i)
    return hist


def load_cycles(table, banks, ports, beyond_first: bool = False, index=None) -> np.ndarray:
    """Mean bank cycles of an instruction's reads, ``E[ceil(M / ports)]`` (``beyond_first``: the cycles
    beyond its first, ``E[max(ceil(M / ports) - 1, 0)]``), where ``table[B, m]`` (as
    :attr:`WorkloadProfile.ser_pmf`) is the distribution of ``M``, the largest number of reads in one of
    ``B`` banks; vectorized over ``banks`` and ``ports``.  ``index``: where ``table`` stacks several such
    tables (``[k, B, m]``), which one each point reads (broadcast with ``banks`` and ``ports``)."""
    b = np.clip(np.asarray(banks, dtype=np.int64), 1, MAX_BANKS)
    p = np.maximum(np.asarray(ports, dtype=np.float64), 1.0)
    m = np.arange(table.shape[-1], dtype=np.float64)
    c = np.ceil(m / p[..., None])
    if beyond_first:
        c = np.maximum(c - 1.0, 0.0)
    rows = table[b] if index is None else table[np.asarray(index, dtype=np.int64), b]
    return (rows * c).sum(axis=-1)


def bank_load_table(src, slots: bool = False) -> np.ndarray:
    """``[banks, load]``: per instruction of the rows ``src`` (registers, ``NONE`` for a slot not read),
    the distribution of the largest number of distinct sources (``slots``: operand slots) in one of
    ``banks`` banks under ``bank = reg mod banks``, as :attr:`WorkloadProfile.ser_pmf` is of a trace."""
    pmf, _, _, pmf_slots = _ser_pmf(src, MAX_BANKS)
    return (pmf_slots if slots else pmf) / max(src.shape[0], 1)


def _ser_pmf(src, max_banks):
    """Counts of (banks, max distinct sources in one bank), counts of distinct sources, register histogram,
    counts of (banks, max operand slots in one bank).

    Computed once per distinct source set (a trace repeats few of them), weighted by its count.
    """
    src = np.asarray(src)
    if src.shape[0] == 0:
        return _ser_pmf_rows(src, np.zeros(0), max_banks)
    srt = np.ascontiguousarray(np.sort(src.astype(np.uint8), axis=1))  # registers < 256: a byte each
    key = srt.view(np.dtype((np.void, srt.shape[1]))).ravel()
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return _ser_pmf_rows(src[first], counts.astype(np.float64), max_banks)


@njit(cache=True)
def _ser_pmf_rows(src, weight, max_banks):
    """``_ser_pmf`` of the rows of ``src``, row ``i`` counted ``weight[i]`` times."""
    n = src.shape[0]
    ms = src.shape[1]
    pmf = np.zeros((max_banks + 1, ms + 1), dtype=np.float64)
    pmf_slots = np.zeros((max_banks + 1, ms + 1), dtype=np.float64)
    kcount = np.zeros(ms + 1, dtype=np.float64)
    reg_hist = np.zeros(256, dtype=np.float64)
    regs = np.empty(ms, dtype=np.int64)
    counts = np.zeros(max_banks, dtype=np.int64)
    mult = np.zeros(ms, dtype=np.int64)  # slots naming each distinct source
    for i in range(n):
        k = 0
        for j in range(ms):
            r = src[i, j]
            if r == NONE:
                continue
            dup = False
            for q in range(k):
                if regs[q] == r:
                    mult[q] += 1
                    dup = True
                    break
            if not dup:
                regs[k] = r
                mult[k] = 1
                k += 1
        wt = weight[i]
        kcount[k] += wt
        for q in range(k):
            reg_hist[regs[q]] += wt
        pmf[0, 0] += wt
        pmf_slots[0, 0] += wt
        for b in range(1, max_banks + 1):
            m = 0
            m_slots = 0
            for q in range(k):
                c = counts[regs[q] % b] + 1
                counts[regs[q] % b] = c
                if c > m:
                    m = c
            for q in range(k):
                counts[regs[q] % b] = 0
            for q in range(k):
                c = counts[regs[q] % b] + mult[q]
                counts[regs[q] % b] = c
                if c > m_slots:
                    m_slots = c
            for q in range(k):
                counts[regs[q] % b] = 0
            pmf[b, m] += wt
            pmf_slots[b, m_slots] += wt
    return pmf, kcount, reg_hist, pmf_slots


@njit(cache=True, parallel=True)
def _chain_table(warp_ptr, op, dst, src, pdst, psrc, lat2, is_mem, extra, adj, slope, grid):
    """Single-warp cycles, summed over warps, for every (extra, memory latency) pair.

    Like ``_chain_cycles`` but an instruction also waits for pending writes of
    the registers it writes (WAW), as the simulator's scoreboard does, and the
    latency of instruction ``i`` of class ``c`` is ``lat2[j, c] + adj[i] + slope[i] grid[j]``
    (:func:`load_latency_terms`).
    """
    n_extra = extra.shape[0]
    n_mem = lat2.shape[0]
    total = np.zeros((n_extra, n_mem), dtype=np.float64)
    for x in prange(n_extra * n_mem):  # the (extra, latency) pairs are independent
        e = x // n_mem
        m = x % n_mem
        ready = np.zeros((1, 256), dtype=np.float64)
        pready = np.zeros((1, 16), dtype=np.float64)
        acc = 0.0
        for w in range(warp_ptr.shape[0] - 1):
            a, b = warp_ptr[w], warp_ptr[w + 1]
            if b <= a:
                continue
            ready[:] = 0.0
            pready[:] = 0.0
            t = -1.0
            for i in range(a, b):
                t = operands_ready(ready, pready, 0, i, t + 1.0, src, dst, psrc, extra[e], True)
                _written(
                    ready, pready, 0, i, t, lat2[m, op[i]] + adj[i] + slope[i] * grid[m], extra[e], dst, pdst
                )
            acc += t + 1.0
        total[e, m] = acc
    return total


@njit(cache=True, parallel=True)
def _cta_chain_table(
    warp_ptr, warps_per_cta, op, dst, src, pdst, psrc, lat2, extra, barrier_op, adj, slope, grid
):
    """Critical path of every CTA alone, summed over CTAs, for every (extra, memory latency) pair.

    Each warp runs its own dependency chain (as ``_chain_table``) up to its next
    barrier; a barrier releases every warp of the CTA at the latest arrival.
    """
    n_extra = extra.shape[0]
    n_mem = lat2.shape[0]
    total = np.zeros((n_extra, n_mem), dtype=np.float64)
    n_w = warp_ptr.shape[0] - 1
    for x in prange(n_extra * n_mem):  # the (extra, latency) pairs are independent
        e = x // n_mem
        m = x % n_mem
        ready = np.zeros((warps_per_cta, 256), dtype=np.float64)
        pready = np.zeros((warps_per_cta, 16), dtype=np.float64)
        pos = np.zeros(warps_per_cta, dtype=np.int64)
        tw = np.zeros(warps_per_cta, dtype=np.float64)
        acc = 0.0
        for c0 in range(0, n_w, warps_per_cta):
            nw = min(warps_per_cta, n_w - c0)
            ready[:, :] = 0.0
            pready[:, :] = 0.0
            for q in range(nw):
                pos[q] = warp_ptr[c0 + q]
                tw[q] = -1.0
            live = nw
            while live > 0:
                release = -1.0
                waiting = 0
                for q in range(nw):
                    i = pos[q]
                    end = warp_ptr[c0 + q + 1]
                    if i >= end:
                        continue
                    t = tw[q]
                    while i < end:
                        t = operands_ready(ready, pready, q, i, t + 1.0, src, dst, psrc, extra[e], True)
                        lat_i = lat2[m, op[i]] + adj[i] + slope[i] * grid[m]
                        _written(ready, pready, q, i, t, lat_i, extra[e], dst, pdst)
                        i += 1
                        if op[i - 1] == barrier_op:
                            break
                    pos[q] = i
                    tw[q] = t
                    if i >= end:
                        live -= 1
                    if op[i - 1] == barrier_op and i < end:
                        waiting += 1
                        if t > release:
                            release = t
                if waiting > 0:
                    for q in range(nw):
                        i = pos[q]
                        if i < warp_ptr[c0 + q + 1] and i > warp_ptr[c0 + q] and op[i - 1] == barrier_op:
                            tw[q] = release
            cta_t = 0.0
            for q in range(nw):
                if tw[q] + 1.0 > cta_t:
                    cta_t = tw[q] + 1.0
            acc += cta_t
        total[e, m] = acc
    return total


@njit(cache=True, parallel=True)
def _cta_sched_table(
    warp_ptr,
    warps_per_cta,
    group,
    n_sched,
    width,
    op,
    dst,
    src,
    pdst,
    psrc,
    lat2,
    ii,
    unit,
    u_slots,
    lsu_unit,
    lsu_cycles,
    extra,
    barrier_op,
    max_instrs,
    adj,
    slope,
    grid,
    cells,
    collectors=0,
):
    """Cycles of groups of ``group`` CTAs run together, summed over groups, per (extra, memory latency)
    cell that ``cells`` (bool ``[K, J]``) marks (the others 0), and the instructions scheduled: the groups
    in order until ``max_instrs`` are reached; a group longer than that keeps the same leading share of
    every warp (at least 256 instructions of each).

    A list schedule of the warps' dependency chains (as ``_cta_chain_table``) with the issue and
    execution resources they share: warp ``w`` of a group (CTA-major) issues on scheduler
    ``w mod n_sched``, each scheduler issues at most ``width`` instructions a cycle, oldest warp
    first; an instruction of class ``c`` holds its scheduler's unit ``unit[c]`` for ``ii[c]``
    cycles, except the one load/store unit of the SM (``unit[c] == lsu_unit``), which it holds
    ``lsu_cycles[i]`` cycles (one per L1D line or shared-memory pass); a barrier releases its CTA's
    warps one cycle after the last arrival.  ``collectors`` (0: none): operand collectors per scheduler;
    an instruction issues only when one of its scheduler's is free and holds it ``1 + extra`` cycles (its
    collection), so a warp's independent instructions collect one after another when each warp has about
    one collector (``calib/collector_schedule.py``; the tables the model reads are built without).
    """
    n_extra = extra.shape[0]
    n_mem = lat2.shape[0]
    total = np.zeros((n_extra, n_mem), dtype=np.float64)
    n_w = warp_ptr.shape[0] - 1
    gw = warps_per_cta * group
    done_instrs = 0
    has_mem = False
    for c in range(lat2.shape[1]):
        if lat2[n_mem - 1, c] != lat2[0, c]:
            for i in range(op.shape[0]):
                if op[i] == c:
                    has_mem = True
                    break
    n_m = n_mem if has_mem else 1  # no load waits on memory: every latency column is the first
    sel = np.empty(n_extra * n_m, dtype=np.int64)  # the schedules the marked cells need
    n_sel = 0
    for e in range(n_extra):
        for m in range(n_m):
            want = cells[e, m]
            if not has_mem:
                for m2 in range(n_mem):
                    want = want or cells[e, m2]
            if want:
                sel[n_sel] = e * n_m + m
                n_sel += 1
    wend = np.zeros(gw, dtype=np.int64)
    for c0 in range(0, n_w, gw):
        if done_instrs >= max_instrs:
            break
        nw = min(gw, n_w - c0)
        # a group longer than the budget keeps the same share of every warp (the longest stays longest)
        frac = min(1.0, max_instrs / max(warp_ptr[c0 + nw] - warp_ptr[c0], 1))
        for q in range(nw):
            n_q = warp_ptr[c0 + q + 1] - warp_ptr[c0 + q]
            keep = min(n_q, max(int(np.ceil(n_q * frac)), 256))
            wend[q] = warp_ptr[c0 + q] + keep
            done_instrs += keep
        ends = np.zeros(n_extra * n_m, dtype=np.float64)
        for y in prange(n_sel):  # the (extra, latency) schedules are independent
            x = sel[y]
            ends[x] = _sched_group(
                warp_ptr,
                c0,
                nw,
                wend,
                warps_per_cta,
                n_sched,
                width,
                op,
                dst,
                src,
                pdst,
                psrc,
                lat2[x % n_m],
                ii,
                unit,
                u_slots,
                lsu_unit,
                lsu_cycles,
                extra[x // n_m],
                barrier_op,
                adj,
                slope,
                grid[x % n_m],
                collectors,
            )
        for e in range(n_extra):
            for m in range(n_mem):
                total[e, m] += ends[e * n_m + (m if has_mem else 0)]
    return total, done_instrs


@njit(cache=True)
def _sched_group(
    warp_ptr,
    c0,
    nw,
    wend,
    warps_per_cta,
    n_sched,
    width,
    op,
    dst,
    src,
    pdst,
    psrc,
    lat,
    ii,
    unit,
    u_slots,
    lsu_unit,
    lsu_cycles,
    extra,
    barrier_op,
    adj,
    slope,
    g,
    collectors=0,
):
    """Cycles of one group of warps ``c0 .. c0 + nw`` (up to ``wend``) under ``_cta_sched_table``'s list
    schedule, at latencies ``lat[c] + adj[i] + slope[i] g`` and ``extra`` collection cycles (``collectors``
    per scheduler, each held ``1 + extra`` cycles by the instruction it takes; 0: none)."""
    n_cta_g = (nw + warps_per_cta - 1) // warps_per_cta
    n_units = 0
    for c in range(unit.shape[0]):
        if unit[c] + 1 > n_units:
            n_units = unit[c] + 1
    ready = np.zeros((nw, 256), dtype=np.float64)
    pready = np.zeros((nw, 16), dtype=np.float64)
    pos = np.zeros(nw, dtype=np.int64)
    last = np.zeros(nw, dtype=np.float64)
    at_bar = np.zeros(nw, dtype=np.bool_)
    opnd = np.zeros(nw, dtype=np.float64)
    ufree = np.zeros((n_sched, n_units), dtype=np.float64)
    lsu_free = 0.0
    cfree = np.zeros((n_sched, max(collectors, 1)), dtype=np.float64)  # each collector's next free cycle
    live = 0
    for q in range(nw):
        pos[q] = warp_ptr[c0 + q]
        last[q] = -1.0
        opnd[q] = -1.0
        at_bar[q] = False
        if pos[q] < wend[q]:
            live += 1
    t = 0.0
    end_t = 0.0
    check = False
    # a scheduler none of whose warps could issue at its last scan, and that has issued nothing since, is not
    # scanned again while its earliest start lies ahead: until then its warps' operand cycles and its units'
    # free cycles stay as they were, and only the SM's one load/store unit may have become later, so that
    # start is min(low_unit[s], max(low_lsu[s], lsu_free)) (low_lsu: the earliest operands of the warps
    # whose next instruction takes the load/store unit)
    known = np.zeros(n_sched, dtype=np.bool_)
    low_unit = np.zeros(n_sched, dtype=np.float64)
    low_lsu = np.zeros(n_sched, dtype=np.float64)
    while live > 0:
        nxt = 1e300
        issued = False
        for s in range(n_sched):
            if known[s] and collectors == 0:  # (a collector that frees is not in this bound)
                first = low_unit[s]
                if low_lsu[s] < 1e300:
                    first = min(first, max(low_lsu[s], lsu_free))
                if first > t:
                    if first < nxt:
                        nxt = first
                    continue
            known[s] = True
            low_unit[s] = 1e300
            low_lsu[s] = 1e300
            slots = width
            for q in range(s, nw, n_sched):
                if slots == 0:
                    known[s] = False
                    break
                i = pos[q]
                if i >= wend[q] or at_bar[q]:
                    continue
                start = opnd[q]
                if start < 0.0:  # operand readiness of the warp's next instruction, once
                    start = operands_ready(ready, pready, q, i, last[q] + 1.0, src, dst, psrc, extra, True)
                    opnd[q] = start
                c = op[i]
                u = unit[c]
                if u == lsu_unit:
                    if start < low_lsu[s]:
                        low_lsu[s] = start
                    if lsu_free > start:
                        start = lsu_free
                elif ufree[s % u_slots[u], u] > start:
                    start = ufree[s % u_slots[u], u]
                free_col = 0
                for k in range(1, collectors):  # the scheduler's collector that frees first
                    if cfree[s, k] < cfree[s, free_col]:
                        free_col = k
                if collectors > 0 and cfree[s, free_col] > start:
                    start = cfree[s, free_col]
                if start > t:
                    if u != lsu_unit and start < low_unit[s]:
                        low_unit[s] = start
                    if start < nxt:
                        nxt = start
                    continue
                known[s] = False
                # issue at t
                _written(ready, pready, q, i, t, lat[c] + adj[i] + slope[i] * g, extra, dst, pdst)
                if u == lsu_unit:
                    lsu_free = t + max(lsu_cycles[i], ii[c])
                else:
                    ufree[s % u_slots[u], u] = t + ii[c]
                if collectors > 0:
                    cfree[s, free_col] = t + 1.0 + extra
                last[q] = t
                opnd[q] = -1.0
                if t + 1.0 > end_t:
                    end_t = t + 1.0
                pos[q] = i + 1
                slots -= 1
                issued = True
                if i + 1 >= wend[q]:
                    live -= 1
                    check = True
                elif c == barrier_op:
                    at_bar[q] = True
                    check = True
        # barriers: a CTA whose unfinished warps all wait is released (checked after an arrival
        # or a warp's end)
        if not check:
            if issued or nxt >= 1e300:
                t += 1.0
            else:
                t = max(t + 1.0, nxt)
            continue
        check = False
        for k in range(n_cta_g):
            w0 = k * warps_per_cta
            w1 = min(w0 + warps_per_cta, nw)
            waiting = 0
            running = 0
            for q in range(w0, w1):
                if at_bar[q]:
                    waiting += 1
                elif pos[q] < wend[q]:
                    running += 1
            if waiting > 0 and running == 0:
                for q in range(w0, w1):
                    if at_bar[q]:
                        at_bar[q] = False
                        opnd[q] = -1.0
                        if last[q] < t:
                            last[q] = t
                known[:] = False
                issued = True
        if issued or nxt >= 1e300:
            t += 1.0
        else:
            t = max(t + 1.0, nxt)
    return end_t


@njit(cache=True)
def _log2_bin(d, seen, nbins):
    """Bin of distance ``d`` in a log2 histogram of ``nbins`` bins; the last bin: no earlier access."""
    if not seen:
        return nbins - 1
    k = 0
    while d > 1 and k < nbins - 2:
        d >>= 1
        k += 1
    return k


@njit(cache=True)
def _freed_register_steps(warp_ptr, sidx, dst, src, dead_src, dead_dst):
    """Sum over warps and values of (free - write) in a warp's own instructions when a value is freed at a
    read of (static) instruction ``s = sidx[row]`` whose bit k of ``dead_src[s]`` is set (source slot k),
    once written if bit k of ``dead_dst[s]`` is (destination slot k), or when its register is written
    again; a value never freed lives to the warp's end.  Divided by the instructions: the live registers of
    :attr:`WorkloadProfile.live_regs` as the compiler frees them."""
    born = np.full(256, -1, dtype=np.int64)
    touched = np.zeros(256, dtype=np.bool_)
    total = 0
    for w in range(warp_ptr.shape[0] - 1):
        a, b = warp_ptr[w], warp_ptr[w + 1]
        if b <= a:
            continue
        born[:] = -1
        touched[:] = False
        for i in range(a, b):
            s = sidx[i]
            for j in range(src.shape[1]):
                r = src[i, j]
                if r == NONE:
                    continue
                if born[r] < 0:  # read before any write: live from the warp's start (later: from here)
                    born[r] = i if touched[r] else a
                    touched[r] = True
                if (dead_src[s] >> j) & 1:
                    total += i - born[r]
                    born[r] = -1
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r == NONE:
                    continue
                if born[r] >= 0:
                    total += i - born[r]
                touched[r] = True
                born[r] = -1 if (dead_dst[s] >> j) & 1 else i
        for r in range(256):
            if born[r] >= 0:
                total += b - born[r]
    return total


def live_register_mean(trace: Trace, warp_ptr: np.ndarray, kernel=None) -> tuple[float, str]:
    """(:attr:`WorkloadProfile.live_regs` over the warps of ``warp_ptr``, where it comes from): freed at the
    compiler's dead bits of ``kernel`` (the trace's static kernel, :func:`rfmodel.workload.static.
    static_kernel`), else at each value's last read in the trace (:func:`rfmodel.compiler.liveness.
    trace_dead_masks`)."""
    from rfmodel.compiler.liveness import dead_defs, dead_source_mask, trace_dead_masks

    n = max(int(warp_ptr[-1]), 1)
    if kernel is None:
        rows = int(warp_ptr[-1])
        dead_src, dead_dst = trace_dead_masks(
            np.asarray(warp_ptr, dtype=np.int64), trace.src[:rows], trace.dst[:rows]
        )
        steps = _freed_register_steps(
            warp_ptr, np.arange(rows, dtype=np.int64), trace.dst, trace.src, dead_src, dead_dst
        )
        return float(steps) / n, "the trace's last reads"
    dead_src = dead_source_mask(kernel, per="value", max_src=trace.src.shape[1])
    dead_dst = np.zeros(len(kernel.instrs), dtype=np.int64)
    for i, (ins, flags) in enumerate(zip(kernel.instrs, dead_defs(kernel), strict=True)):
        slots = [f for r, f in zip(ins.dst, flags, strict=True) if 0 <= int(r) < NONE]
        dead_dst[i] = sum(1 << k for k, f in enumerate(slots[: trace.dst.shape[1]]) if f)
    steps = _freed_register_steps(
        warp_ptr, np.asarray(trace.sidx, dtype=np.int64), trace.dst, trace.src, dead_src, dead_dst
    )
    return float(steps) / n, "the compiler's dead bits of the static kernel"


@njit(cache=True)
def _distance_hists(warp_ptr, dst, src, nbins):
    """Per-warp log2 histograms of producer distance (RAW) and register reuse distance."""
    dep = np.zeros(nbins, dtype=np.int64)
    reuse = np.zeros(nbins, dtype=np.int64)
    last_w = np.empty(256, dtype=np.int64)
    last_a = np.empty(256, dtype=np.int64)
    for w in range(warp_ptr.shape[0] - 1):
        a, b = warp_ptr[w], warp_ptr[w + 1]
        last_w[:] = -1
        last_a[:] = -1
        for i in range(a, b):
            t = i - a
            for j in range(src.shape[1]):
                r = src[i, j]
                if r == NONE:
                    continue
                dep[_log2_bin(t - last_w[r], last_w[r] >= 0, nbins)] += 1
                reuse[_log2_bin(t - last_a[r], last_a[r] >= 0, nbins)] += 1
                last_a[r] = t
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r != NONE:
                    last_w[r] = t
                    last_a[r] = t
    return dep, reuse


def stream_order(trace: Trace, instr: np.ndarray, rank: np.ndarray | None = None):
    """The order in which the memory accesses of instructions ``instr`` (trace rows, one entry per
    line) reach the L1D: an index array into ``instr``.

    ``rank``: every trace row's issue sequence number in a schedule of the SM
    (:func:`rfmodel.analytic.stream.issue_rank`); the accesses follow it, those of one instruction in
    the order given.  Without it the warps interleave round-robin (the i-th instruction of every warp,
    then the (i+1)-th), the order a fair scheduler over every warp of the trace at once would give."""
    if rank is not None:
        return np.argsort(np.asarray(rank)[instr], kind="stable")
    wp = trace.warp_ptr.astype(np.int64)
    n = int(wp[-1])
    warp_of = np.repeat(np.arange(len(wp) - 1, dtype=np.int64), np.diff(wp))
    key = np.arange(n, dtype=np.int64) - wp[warp_of]
    return np.lexsort((warp_of[instr], key[instr]))


#: op classes whose accesses wait for their line (loads and atomics; a store waits for nothing)
WAITING_LOADS = np.zeros(N_OPCLASSES, np.bool_)
for _c in (OpClass.LD_GLOBAL, OpClass.LD_LOCAL, OpClass.ATOMIC):
    WAITING_LOADS[int(_c)] = True


def _smem_passes(trace: Trace) -> float:
    """The passes through the shared memory's banks of the trace's shared accesses with active lanes (one
    where none is recorded): the load/store unit's cycles they take."""
    op = np.asarray(trace.op)
    shared = np.isin(op, (int(OpClass.LD_SHARED), int(OpClass.ST_SHARED))) | (
        (op == OpClass.ATOMIC) & (np.diff(trace.mem_ptr) == 0)  # no cache line: a shared-memory atomic
    )
    shared &= np.asarray(trace.active) > 0
    return float(np.maximum(np.asarray(trace.smem_passes)[shared], 1).sum())


def l1d_stream(trace: Trace, rank: np.ndarray | None = None):
    """The L1D's access stream of ``trace`` in :func:`stream_order`'s order: ``(line numbers, trace row of
    each access, whether the access is a load's)`` (global and local loads and stores, atomics)."""
    is_l1 = np.isin(trace.op, np.array(sorted(int(c) for c in L1D_CLASSES), dtype=np.int8))
    counts = np.diff(trace.mem_ptr)
    rows = np.repeat(is_l1, counts)
    instr = np.repeat(np.arange(trace.n_instrs, dtype=np.int64), counts)[rows]
    order = stream_order(trace, instr, rank)
    access_row = instr[order]
    return trace.mem_line[rows][order] // trace.line_bytes, access_row, WAITING_LOADS[trace.op[access_row]]


def stream_hit_tables(line_no: np.ndarray, is_load: np.ndarray, caches) -> dict:
    """The L1D stream's hit tables of a profile (:func:`l1d_stream`'s lines and loads), as its fields: the
    stack-distance histograms over every access and over the loads' (``line_stack_hist``,
    ``load_stack_hist``), the same where a store allocates nothing (``nwa_stack_hist``), the caches
    ``caches`` simulated on it (``exact_hits``, :func:`exact_hit_rates`) and the lines loads leave in
    caches of each set count (``set_fill``, :func:`set_fill_table`)."""
    is_load = np.asarray(is_load, np.bool_)
    wa, nwa = (
        (_line_stack_hist(line_no, 32, is_load, t) if len(line_no) else np.zeros((2, 32), np.int64))
        for t in (np.ones(len(line_no), np.bool_), is_load)
    )
    return {
        "line_stack_hist": wa[0],
        "load_stack_hist": wa[1],
        "nwa_stack_hist": nwa,
        "exact_hits": exact_hit_rates(line_no, caches, is_load),
        "set_fill": set_fill_table(line_no, is_load),
    }


#: set counts of :attr:`WorkloadProfile.set_fill` (powers of two; set = line mod sets) and its most ways
SET_FILL_SETS = 2 ** np.arange(17)
SET_FILL_WAYS = 16


def set_fill_table(line_no: np.ndarray, is_load: np.ndarray) -> np.ndarray:
    """``[len(SET_FILL_SETS), SET_FILL_WAYS]``: the lines held, averaged over the loads of the stream, by a
    cache of ``SET_FILL_SETS[i]`` sets (set = line mod sets) and ``j + 1`` ways into which only loads bring
    lines, from empty.  A set holds ``min(ways, lines first loaded into it so far)`` (a full set stays full
    under any replacement), so a set's ``k``-th distinct line counts from its first load to the end.  Where
    the addresses fall in few sets (a column walk of a matrix whose rows are a power of two of lines apart)
    this is far below ``sets x ways``: what a cache's occupancy is when its data cannot spread."""
    loads = np.asarray(line_no)[np.asarray(is_load, np.bool_)]
    out = np.zeros((len(SET_FILL_SETS), SET_FILL_WAYS))
    if not len(loads):
        return out
    uniq, first = np.unique(loads, return_index=True)
    weight = (len(loads) - first) / len(loads)  # the share of the stream a line is held once loaded
    for i, sets in enumerate(SET_FILL_SETS):
        s = uniq % sets
        order = np.lexsort((first, s))
        ss = s[order]
        rank = np.arange(len(ss)) - np.searchsorted(ss, ss)  # the line's place in its set's order of arrival
        out[i] = np.cumsum(
            np.bincount(np.minimum(rank, SET_FILL_WAYS), weights=weight[order], minlength=SET_FILL_WAYS + 1)[
                :SET_FILL_WAYS
            ]
        )
    return out


def l1d_load_hit_rate(trace: Trace, rank, cache) -> float | None:
    """The loads' hit rate of an LRU L1D ``cache`` (``(lines, ways[, write_allocate[, set index, line
    bytes]])``, as :func:`exact_hit_rates` takes it) simulated on ``trace``'s line stream in ``rank``'s order
    (what a profile's ``l1d_hit_rate(lines, ways, loads=True)`` gives, without the rest of the profile);
    ``None`` unless the geometry is whole sets (the profile then estimates it)."""
    line_no, _, is_load = l1d_stream(trace, rank)
    rows = exact_hit_rates(line_no, [cache], is_load)
    return None if rows is None else float(rows[0, 3])


def _memory_classes() -> np.ndarray:
    """The op classes whose latency includes the memory hierarchy's (global, local loads, atomics)."""
    is_ll = np.zeros(N_OPCLASSES, dtype=np.bool_)
    for c in (OpClass.LD_GLOBAL, OpClass.LD_LOCAL, OpClass.ATOMIC):
        is_ll[int(c)] = True
    return is_ll


def _load_terms(trace: Trace, line_no, access_row, caches, l1_hit_latency) -> tuple[np.ndarray, np.ndarray]:
    """``(adj, slope)`` of :func:`load_latency_terms` on the line stream (zeros without the L1D's
    geometry or hit latency)."""
    n = trace.n_instrs
    if l1_hit_latency is not None and caches and len(line_no):
        l1_lines, l1_ways = int(caches[0][0]), int(caches[0][1])
        if l1_ways >= 1 and l1_lines >= l1_ways and l1_lines % l1_ways == 0:
            flags = cache_flags(caches[0], line_no, WAITING_LOADS[trace.op[access_row]])
            return load_latency_terms(n, access_row, flags, WAITING_LOADS[trace.op], l1_hit_latency)
    return np.zeros(n, dtype=np.float64), np.zeros(n, dtype=np.float64)


def trace_load_terms(trace: Trace, rank, caches, l1_hit_latency) -> tuple[np.ndarray, np.ndarray]:
    """``(adj, slope)`` of each load of ``trace`` as its accesses fare in the L1D (``caches[0]``) on the
    line stream in ``rank``'s order (:func:`load_latency_terms`; zeros without the L1D)."""
    line_no, access_row, _ = l1d_stream(trace, rank)
    return _load_terms(trace, line_no, access_row, caches, l1_hit_latency)


def _latency_grid(latencies, exec_latencies, grid=MEM_LAT_GRID) -> np.ndarray:
    """``lat2[j, c]``: class ``c``'s latency with ``grid[j]`` (the tables' mean load latencies,
    :func:`mem_latency_grid`) added to the memory classes."""
    base = np.asarray(latencies if exec_latencies is None else exec_latencies, dtype=np.float64)
    return base[None, :] + np.asarray(grid, dtype=np.float64)[:, None] * _memory_classes()[None, :]


def _cta_shape(trace: Trace) -> tuple[int, int]:
    """``(warps per CTA, CTAs)`` of ``trace`` (a partial last CTA counts)."""
    wpc = max(1, -(-int(trace.threads_per_cta) // 32))
    return wpc, max(-(-trace.n_warps // wpc), 1)


def sched_cells(trace: Trace) -> np.ndarray:
    """bool ``[len(SCHED_CTAS), K, J]``: the cells of ``trace``'s list-schedule table (``sched_cpi``), every
    cell of the levels it schedules (one CTA, and the larger groups the trace's CTAs fill)."""
    n_ctas = _cta_shape(trace)[1]
    cells = np.zeros((len(SCHED_CTAS), len(CHAIN2_EXTRA), len(MEM_LAT_GRID)), dtype=np.bool_)
    cells[(SCHED_CTAS == 1) | (SCHED_CTAS <= n_ctas)] = True
    return cells


def sched_table(
    trace: Trace, latencies, exec_latencies, sched: dict, load_terms, cells, collectors: int = 0
) -> np.ndarray:
    """The ``sched_cpi`` cells ``cells`` (bool ``[len(SCHED_CTAS), K, J]``; the others NaN): cycles per
    instruction of the list schedules of groups of ``SCHED_CTAS[l]`` resident CTAs on the SM's issue
    resources ``sched`` (:func:`profile_trace`), at ``CHAIN2_EXTRA[k]`` collection cycles and
    ``MEM_LAT_GRID[j]`` cycles of memory latency; ``load_terms``: each load's ``(adj, slope)``;
    ``collectors``: operand collectors per scheduler (:func:`_cta_sched_table`; 0, the profile's: none)."""
    adj, slope = load_terms
    grid = mem_latency_grid(adj, slope)
    lat2 = _latency_grid(np.asarray(latencies, dtype=np.float64), exec_latencies, grid)
    wpc = _cta_shape(trace)[0]
    out = np.full(cells.shape, np.nan)
    # the load/store unit's cycles of a row: a line a cycle, a shared access a pass through the banks
    lsu_cycles = np.maximum(np.diff(trace.mem_ptr), trace.smem_passes).astype(np.float64)
    ii = np.asarray(sched["initiation"], dtype=np.float64)
    unit = np.asarray(sched["unit"], dtype=np.int64)
    u_slots = unit_slots_of(sched, unit)
    for li, group in enumerate(SCHED_CTAS):
        if not cells[li].any():
            continue
        with _PARALLEL_LOCK:  # numba's default thread pool takes one parallel region at a time
            cyc, done = _cta_sched_table(
                trace.warp_ptr.astype(np.int64),
                wpc,
                int(group),
                int(sched["schedulers"]),
                int(sched["issue_width"]),
                trace.op,
                trace.dst,
                trace.src,
                trace.pdst,
                trace.psrc,
                lat2,
                ii,
                unit,
                u_slots,
                int(sched["lsu_unit"]),
                lsu_cycles,
                CHAIN2_EXTRA,
                int(OpClass.BARRIER),
                SCHED_MAX_INSTRS,
                adj,
                slope,
                grid,
                cells[li],
                int(collectors),
            )
        out[li][cells[li]] = (cyc / max(done, 1))[cells[li]]
    return out


def profile_tables(
    trace: Trace,
    groups,
    latencies: np.ndarray,
    exec_latencies: np.ndarray | None = None,
    caches=None,
    rank: np.ndarray | None = None,
    l1_hit_latency: float | None = None,
    load_terms: tuple[np.ndarray, np.ndarray] | None = None,
    sched: dict | None = None,
    cells: np.ndarray | None = None,
    group_inputs: dict | None = None,
) -> dict:
    """The fields of the table ``groups`` (names of :data:`TABLE_GROUPS`) of ``trace``'s profile, with
    :func:`profile_trace`'s arguments (``load_terms``: the ``(adj, slope)`` it already has).  ``sched``
    builds the ``sched`` group (without it the group is empty, as a profile without ``sched``): every
    cell, or with ``cells`` (:func:`sched_cells`' shape) only those (``sched_cpi`` alone, NaN elsewhere).
    ``group_inputs``: a registered group's ``inputs`` by name (:class:`TableGroup`; the SM's:
    ``rfmodel.analytic.engine.group_inputs``; ``None`` without)."""
    unknown = sorted(set(groups) - set(TABLE_GROUPS))
    if unknown:
        raise RfmodelError(f"profile tables {unknown}: unknown; allowed: {', '.join(TABLE_GROUPS)}")
    # (``l1_anchor`` needs the SM: the engine's ProfileSource builds it, and a profile without one lacks it)
    lat = np.asarray(latencies, dtype=np.float64)
    wp = trace.warp_ptr.astype(np.int64)
    wp_t = leading_warps(wp, TABLE_MAX_INSTRS)  # the per-warp tables' sample
    n_t = max(int(wp_t[-1]), 1)
    is_ll = _memory_classes()
    out: dict = {}
    if load_terms is None and ("chain2" in groups or ("sched" in groups and sched is not None)):
        load_terms = trace_load_terms(trace, rank, caches, l1_hit_latency)
    if "sched" in groups and sched is not None:
        out["sched_cpi"] = sched_table(
            trace, lat, exec_latencies, sched, load_terms, sched_cells(trace) if cells is None else cells
        )
        if cells is None:
            out["sched_todo"] = None
    if "chain2" in groups:
        adj, slope = load_terms
        grid = mem_latency_grid(adj, slope)
        chain2 = _chain_table(
            wp_t,
            trace.op,
            trace.dst,
            trace.src,
            trace.pdst,
            trace.psrc,
            _latency_grid(lat, exec_latencies, grid),
            is_ll,
            CHAIN2_EXTRA,
            adj,
            slope,
            grid,
        )
        out["chain2"] = chain2 / n_t
    for g in groups:
        group = _TABLE_REGISTRY.get(g)
        if group is not None:
            context = {"latencies": lat}
            kw = {k: context[k] for k in group.context}
            if group.cells:
                kw["cells"] = cells
            out.update(group.build(trace, rank, (group_inputs or {}).get(g), **kw))
    return out


def leading_warps(warp_ptr: np.ndarray, budget: int) -> np.ndarray:
    """The warp pointers of the leading whole warps in trace order that hold at least ``budget``
    instructions (every warp when they hold fewer; at least one warp)."""
    wp = np.asarray(warp_ptr, dtype=np.int64)
    n_w = max(min(int(np.searchsorted(wp, budget, side="left")), len(wp) - 1), 1)
    return wp[: n_w + 1]


def profile_trace(
    trace: Trace,
    latencies: np.ndarray,
    name: str | None = None,
    exec_latencies: np.ndarray | None = None,
    light: bool = False,
    sched: dict | None = None,
    caches=None,
    rank: np.ndarray | None = None,
    l1_hit_latency: float | None = None,
    tables=None,
    kernel=None,
) -> WorkloadProfile:
    """Extract the analytic profile of ``trace``.

    ``latencies[c]`` is the dependent-issue latency in cycles of op class ``c``
    (loads at their expected latency); it only feeds the ``chain`` table.
    ``exec_latencies`` (default ``latencies``) are the latencies without the
    memory part; ``chain2`` adds ``MEM_LAT_GRID[j]`` to the global, local and
    atomic load classes.  ``light`` skips the two-dimensional tables (for a
    first pass that only needs the hit rate).  ``sched``: the SM's issue resources for the
    ``sched_cpi`` list schedules (keys ``schedulers``, ``issue_width``, ``initiation`` and ``unit``
    per op class, ``lsu_unit``: the unit index of the SM's one load/store unit); without it the
    profile has no ``sched_cpi``.  ``caches``: ``(lines, ways)`` geometries (the SM's L1D and L2
    slice) whose hit rates are simulated exactly on the interleaved line stream (``exact_hits``).
    ``rank``: the order of that stream (:func:`stream_order`; without it, round-robin).
    ``l1_hit_latency``: with it, each load of the tables waits as its own accesses fared in the first
    cache of ``caches`` (the SM's L1D) on that stream (:func:`load_latency_terms`); without, every load
    waits the mean latency.
    ``tables``: the groups of :data:`TABLE_GROUPS` to build (default every one the trace alone gives,
    :func:`trace_groups`; the others stay ``None`` until :meth:`WorkloadProfile.need` builds them from the
    profile's ``source``).  ``kernel``: the trace's static kernel (its rows' ``sidx`` index it); with it
    ``live_regs`` frees values at the compiler's dead bits (:func:`live_register_mean`).
    """
    n = trace.n_instrs
    if n == 0:
        raise RfmodelError(f"trace {trace.kernel!r} has no instructions: nothing to model")
    tables = trace_groups() if tables is None else tables
    lat = np.asarray(latencies, dtype=np.float64)
    if lat.shape != (N_OPCLASSES,):
        raise ValueError(f"latencies must have {N_OPCLASSES} entries, one per op class")
    mix = np.bincount(trace.op.astype(np.int64), minlength=N_OPCLASSES)[:N_OPCLASSES] / n
    reads = float((trace.src != NONE).sum()) / n
    writes = float((trace.dst != NONE).sum()) / n
    # the serialization table and distinct-source count follow from the distribution of the max bank load
    pmf, kcount, reg_hist, pmf_slots = _ser_pmf(trace.src, MAX_BANKS)
    ser_sum = pmf @ np.arange(pmf.shape[1], dtype=np.float64)
    distinct = float(kcount @ np.arange(kcount.shape[0], dtype=np.float64))
    wp_t = leading_warps(trace.warp_ptr, TABLE_MAX_INSTRS)  # the per-warp tables' sample
    n_t = max(int(wp_t[-1]), 1)
    chain_total = _chain_cycles(
        wp_t, trace.op, trace.dst, trace.src, trace.pdst, trace.psrc, lat, CHAIN_EXTRA.astype(np.float64)
    )
    is_l1 = np.isin(trace.op, np.array(sorted(int(c) for c in L1D_CLASSES), dtype=np.int8))
    counts = np.diff(trace.mem_ptr)
    line_no, access_row, is_load = l1d_stream(trace, rank)
    n_acc = len(line_no)
    hit_tables = stream_hit_tables(line_no, is_load, caches)
    adj, slope = _load_terms(trace, line_no, access_row, caches, l1_hit_latency)
    assert MAX_SRC == trace.src.shape[1]
    # the fields of every profile, light or full
    common = dict(
        name=name or trace.kernel,
        n_instrs=n,
        n_warps=trace.n_warps,
        mix=mix.astype(np.float64),
        reads_per_instr=reads,
        distinct_reads_per_instr=distinct / n,
        writes_per_instr=writes,
        ser=ser_sum / n,
        chain_extra=CHAIN_EXTRA.copy(),
        chain=chain_total / n_t,
        mem_lines_per_instr=n_acc / n,
        smem_passes_per_instr=_smem_passes(trace) / n,
        **hit_tables,
        regs_per_thread=int(trace.regs_per_thread),
        threads_per_cta=int(trace.threads_per_cta),
        ctas=int(trace.ctas),
        shared_mem_bytes=int(trace.shared_mem_bytes),
    )
    if light:
        return WorkloadProfile(**common)
    grid = mem_latency_grid(adj, slope)
    lat2 = _latency_grid(lat, exec_latencies, grid)
    wpc, n_ctas = _cta_shape(trace)
    cta_chain = None
    if sched is None:  # the latency bound without the SM's issue resources (the list schedules replace it)
        cta_chain = _cta_chain_table(
            trace.warp_ptr.astype(np.int64),
            wpc,
            trace.op,
            trace.dst,
            trace.src,
            trace.pdst,
            trace.psrc,
            lat2,
            CHAIN2_EXTRA,
            int(OpClass.BARRIER),
            adj,
            slope,
            grid,
        )
    lazy = {}
    if sched is not None and "sched" not in tables:  # built cell by cell on first read (build_sched)
        todo = sched_cells(trace)
        lazy = {"sched_todo": todo, "sched_cpi": np.full(todo.shape, np.nan)}
    dep, reuse = _distance_hists(wp_t, trace.dst, trace.src, DIST_BINS)
    active_warps = max(int((np.diff(trace.warp_ptr) > 0).sum()), 1)
    is_ld = _memory_classes()[trace.op]
    optional = profile_tables(
        trace, tables, lat, exec_latencies, caches, rank, l1_hit_latency, load_terms=(adj, slope), sched=sched
    )
    registered = {k: optional.pop(k) for k in list(optional) if k in _TABLE_FIELDS}
    live, live_from = live_register_mean(trace, wp_t, kernel)
    return WorkloadProfile(
        **common,
        attrs={"trace": dict(trace.attrs), "latencies": lat.tolist(), "live_regs": live_from},
        ser_pmf=pmf / n,
        ser_pmf_slots=pmf_slots / n,
        src_count_pmf=kcount / n,
        reg_hist=reg_hist,
        cta_chain2=None if cta_chain is None else cta_chain / n_ctas,
        mem_grid=None if grid is MEM_LAT_GRID else grid,
        warps_per_cta=wpc,
        dep_dist_hist=dep,
        reuse_dist_hist=reuse,
        mem_fraction=float(is_l1.mean()),
        instrs_per_warp=n / active_warps,
        load_lines_per_instr=float(counts[is_ld].sum()) / n,
        live_regs=live,
        **lazy,
        **optional,
    ).set_fields(registered)
