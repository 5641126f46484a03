"""The simulator's Python driver: arrays in, compiled loop, counters out.

:func:`simulate_trace` runs one design on one SM for one dynamic trace (the
SM's share of the grid) and returns a :class:`SimRun` with the counters and
the standard metrics.  :func:`rfmodel.evaluate` (``method="simulate"``) and the
``rfmodel simulate`` command are built on it.  The pipeline itself is
described in ``docs/simulator.md``; the array layout in
:mod:`rfmodel.sim.core`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from rfmodel.designs.base import (
    CLAIM_RING,
    Design,
    DesignParams,
    SimSetup,
    get_design,
    no_op_hook,
    own_l1_hook,
    standard_bank_hook,
)
from rfmodel.errors import RfmodelError, SpecError
from rfmodel.ir import OpClass
from rfmodel.setassoc import SET_INDEX
from rfmodel.sim import core as C
from rfmodel.spec.occupancy import (
    COLLECTOR_SETS,
    UNIT_NAMES,
    carved_l1d,
    class_initiations,
    occupancy_warps,
    unit_collector_sets,
    unit_slots,
    units_of_classes,
)
from rfmodel.spec.sm import parse_address_map
from rfmodel.trace import MAX_SRC, NONE, Trace, _cta_bounds

COMPAT_MODES = ("none", "gpgpusim")


@dataclass(frozen=True)
class SimOptions:
    """How the simulator runs (not what it simulates: that is the SM spec and the design).

    ``compat="gpgpusim"`` switches to the GPGPU-Sim-compatible pipeline
    (``docs/simulator.md``): registers shifted by one for the bank function,
    ``RZ`` read like a register, ``bank_rw_ports`` arbitration steps per
    cycle with writes first, GPGPU-Sim's issue/collector/dispatch registers,
    its execution-unit timing, instruction buffers filled by a fetch stage,
    one CTA launched per cycle, the SM's instruction cache (``SMSpec.icache``).
    ``fetch_per_cycle``, ``ibuffer_entries`` and ``result_buses`` act only in
    that mode and are refused outside it (defaults: the SM's ``icache.fetch_per_cycle``, or 4 (the SM7_QV100
    config's ``-gpgpu_inst_fetch_throughput``) where the SM gives no instruction
    cache; GPGPU-Sim's instruction-buffer size; the EX_WB width).

    ``cta_launch_per_cycle``: -1 = the mode's default, 0 = no limit.
    ``l2_assoc``: ways of the SM's L2 slice (default: the SM's ``l2.assoc``, or 16 where it gives no L2
    spec; refused where the simulator models the SM's L2 banks, whose ways the spec gives).
    ``max_cycles``: a run longer than this is an error.  ``chunk_cycles``: cycles per call of the compiled
    loop (the progress callback runs between calls).  ``check_ports``: stop with an
    error as soon as a bank grants more accesses in a cycle than it has ports
    (the count is kept in every run).  ``skip_idle``: jump over cycles in which
    nothing can change (same results, faster).
    """

    compat: str = "none"
    fetch_per_cycle: int | None = None  # None: the SM's icache.fetch_per_cycle, else 4
    ibuffer_entries: int = 2
    result_buses: int = 8
    cta_launch_per_cycle: int = -1  # -1: 1 in GPGPU-Sim mode, else no limit; 0: no limit
    l2_assoc: int | None = None  # None: the SM's l2_ways
    max_cycles: int = 2_000_000_000
    chunk_cycles: int = 200_000
    check_ports: bool = False
    skip_idle: bool = True

    def __post_init__(self):
        w = "SimOptions"
        if self.compat not in COMPAT_MODES:
            raise SpecError(w, "compat", self.compat, " | ".join(COMPAT_MODES))
        for name, lo, hi in (
            ("fetch_per_cycle", 1, 64),
            ("ibuffer_entries", 1, 64),
            ("result_buses", 1, 1024),
            ("cta_launch_per_cycle", -1, 1024),
            ("l2_assoc", 1, 1024),
            ("max_cycles", 1, 1 << 60),
            ("chunk_cycles", 1, 1 << 40),
        ):
            v = getattr(self, name)
            if v is None and name in ("fetch_per_cycle", "l2_assoc"):
                continue
            if not isinstance(v, int | np.integer) or isinstance(v, bool) or not lo <= v <= hi:
                raise SpecError(w, name, v, f"integer in [{lo}, {hi}]")
        if self.compat != "gpgpusim":  # a value that would not act is refused, not ignored
            for name, default in (("fetch_per_cycle", None), ("ibuffer_entries", 2), ("result_buses", 8)):
                v = getattr(self, name)
                if v != default:
                    was = "unset" if default is None else f"{default} (the default)"
                    raise SpecError(
                        w,
                        name,
                        v,
                        f"{was} unless compat = 'gpgpusim': only "
                        "that pipeline has a fetch stage, instruction buffers and "
                        "result buses",
                    )

    @classmethod
    def from_dict(cls, d) -> SimOptions:
        known = {f.name for f in fields(cls)}
        d = dict(d or {})
        for k in d:
            if k not in known:
                from rfmodel.errors import unknown_key_message

                raise RfmodelError(f"simulator options: {unknown_key_message(k, known)}")
        return cls(**d)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class SimRun:
    """Result of one simulation: counters by name plus the standard metrics."""

    counts: dict
    stalls: dict  # stall reason -> scheduler-cycles
    metrics: dict  # standard metrics (ipc, cycles, ...)
    setup: SimSetup | None = None
    attrs: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- tables
_MEM_OF_CLASS = {
    OpClass.LD_GLOBAL: C.MK_LOAD,
    OpClass.LD_LOCAL: C.MK_LOAD,
    OpClass.ST_GLOBAL: C.MK_STORE,
    OpClass.ST_LOCAL: C.MK_STORE,
    OpClass.LD_SHARED: C.MK_SLOAD,
    OpClass.ST_SHARED: C.MK_SSTORE,
    OpClass.LD_CONST: C.MK_CONST,
    OpClass.ATOMIC: C.MK_ATOM,
}
# GPGPU-Sim: collector allocation visits ID_OC_SP, SFU, MEM, TENSOR, DP, INT, then specialized units;
# execute visits SP, DP, INT, SFU, TENSOR, specialized units, then the LD/ST unit
_ALLOC_ORDER = (C.U_SP, C.U_SFU, C.U_MEM, C.U_TENSOR, C.U_DP, C.U_INT, C.U_BRA)
_EXEC_ORDER = (C.U_SP, C.U_DP, C.U_INT, C.U_SFU, C.U_TENSOR, C.U_BRA, C.U_MEM)


def _check_layout() -> None:
    names = [m.name for m in OpClass]
    assert len(names) == C.N_OP and OpClass.EXIT == C.OP_EXIT and OpClass.BARRIER == C.OP_BAR
    assert OpClass.LD_GLOBAL == C.OP_LDG and OpClass.MISC == C.OP_MISC
    assert NONE == C.NONE_REG
    assert len(C.STATE_FIELDS) == C.N_STATE and len(C.TABLE_FIELDS) == C.N_TABLES
    assert C.N_UNIT == len(UNIT_NAMES)


_check_layout()


def _collector_sets(sm) -> dict[int, int]:
    c = sm.collectors
    return {i: getattr(c, name) for i, name in enumerate(COLLECTOR_SETS)}


def occupancy(trace: Trace, sm) -> tuple[int, int, int]:
    """(resident CTAs, warps per CTA, resident warps) of ``trace`` on ``sm`` (CUDA occupancy rules)."""
    starts, ctas = _cta_bounds(trace)
    n_cta = len(ctas)
    wpc_trace = int(np.max(np.diff(starts))) if n_cta else 0
    wpc = max(-(-int(trace.threads_per_cta) // sm.threads_per_warp), wpc_trace, 1)
    threads = max(int(trace.threads_per_cta), 1)
    warps = int(
        occupancy_warps(
            max(int(trace.regs_per_thread), 1),
            threads,
            int(trace.shared_mem_bytes),
            max(n_cta, 1),
            regs_per_sm=sm.regs_per_sm,
            max_warps=sm.warps_per_sm,
            max_ctas=sm.max_ctas_per_sm,
            max_threads=sm.max_threads_per_sm,
            smem_per_sm=sm.shmem_per_sm_bytes,
            alloc_granularity=sm.reg_alloc_granularity,
            warp_size=sm.threads_per_warp,
            cta_limits=sm,
        )
    )
    per_cta = -(-threads // sm.threads_per_warp)
    res_ctas = warps // per_cta if per_cta else 0
    # a trace CTA with more warps than the launch shape says cannot share the SM that way
    res_ctas = min(res_ctas, sm.warps_per_sm // wpc)
    return res_ctas, wpc, res_ctas * wpc


# --------------------------------------------------------------------------- preparation
@dataclass
class _Prepared:
    arrays: tuple
    cfg: np.ndarray
    fcfg: np.ndarray
    tabs: tuple
    n_instrs: int
    n_cta: int
    resident_ctas: int
    wpc: int


def _sectors(trace: Trace, sector_bytes: int, line_bytes: int) -> np.ndarray:
    """Sector fetches per missed line of each row (GPGPU-Sim mode's load writebacks).

    The trace keeps lines, not sectors: a row's ``active`` lanes of 4 bytes are
    taken as spread evenly over its lines.
    """
    nl = np.diff(trace.mem_ptr)
    per_line = np.where(nl > 0, trace.active.astype(np.int64) * 4 / np.maximum(nl, 1), 0.0)
    sec = np.ceil(per_line / sector_bytes).astype(np.int64)
    return np.clip(sec, 1, max(line_bytes // sector_bytes, 1))


#: GPGPU-Sim's PROGRAM_MEM_START: instruction addresses are PCs above it (apart from the data lines in L2)
PROGRAM_BASE = 0xF0000000


def fetch_per_cycle(sm, opts: SimOptions) -> int:
    """Fetches per cycle in GPGPU-Sim mode: the option if given, else the SM instruction cache's, else 4."""
    if opts.fetch_per_cycle is not None:
        return int(opts.fetch_per_cycle)
    return sm.icache.fetch_per_cycle if sm.icache is not None else 4


#: bytes GPGPU-Sim's trace-driven fetch adds to the PC of a warp's last issued instruction (its ``isize``)
GPGPUSIM_ISIZE = 16


def _pc_lines(trace: Trace, line_bytes: int) -> np.ndarray:
    """The instruction-cache line a warp's fetch looks up when its next row is ``row``.  A row's PC is
    ``sidx x attrs["instr_bytes"]`` (16: a built-in or SASS kernel's instructions; a read Accel-Sim trace
    keeps its own) above :data:`PROGRAM_BASE`; a row without a static index (-1) lies at the end of the
    kernel's code, as the Accel-Sim exporter places it.  As in GPGPU-Sim's trace-driven mode, a fetch goes to
    the PC of the warp's last issued instruction plus :data:`GPGPUSIM_ISIZE` (its ``shd_warp_t::get_pc``,
    set at issue; the trace's own PC is not what it fetches), so after a jump it looks up the line the code
    falls through to, not the target's; a warp's first fetch goes to its first row's PC."""
    sidx = np.asarray(trace.sidx, dtype=np.int64)
    step = int(trace.attrs.get("instr_bytes", 16))
    end = (int(sidx.max()) + 1) if len(sidx) else 0
    pc = np.where(sidx >= 0, sidx, end) * step
    if not len(pc):
        return np.zeros(1, np.int64)
    fetch = np.empty_like(pc)
    fetch[1:] = pc[:-1] + GPGPUSIM_ISIZE
    first = np.asarray(trace.warp_ptr[:-1], dtype=np.int64)
    first = first[first < len(pc)]
    fetch[first] = pc[first]
    return np.ascontiguousarray((PROGRAM_BASE + fetch) // line_bytes, dtype=np.int64)


#: bytes of an L1D sector (GPGPU-Sim's SECTOR_SIZE)
SECTOR_BYTES = 32


def _sector_needs(trace: Trace, line_bytes: int) -> np.ndarray:
    """Per memory line of the trace (``mem_line``), the sectors its row reads of it, a bit mask: the trace
    keeps lines, not addresses, so a row's ``active`` 4-byte lanes are dealt over its lines in turn (lane
    ``k`` to line ``k mod lines``, the next free word of it), as the Accel-Sim exporter writes them: line
    ``q`` of ``L`` gets ``active // L`` lanes, one more when ``q < active mod L``, from the line's start, at
    least one sector."""
    m = len(trace.mem_line)
    if not m:
        return np.zeros(1, np.int64)
    nl = np.diff(trace.mem_ptr).astype(np.int64)
    row = np.repeat(np.arange(trace.n_instrs, dtype=np.int64), nl)
    q = np.arange(m, dtype=np.int64) - np.asarray(trace.mem_ptr, dtype=np.int64)[row]
    act = np.asarray(trace.active, dtype=np.int64)[row]
    lanes = act // nl[row] + (q < act % nl[row])
    per_line = max(line_bytes // SECTOR_BYTES, 1)
    n = np.clip(-(-lanes * 4 // SECTOR_BYTES), 1, per_line)
    return ((np.int64(1) << n) - 1).astype(np.int64)


def _atomics(trace: Trace) -> np.ndarray:
    """Per row, :data:`~rfmodel.sim.core.ATOM_SHARED` for an atomic with active lanes and no cache line (a
    trace keeps the lines of global accesses only, so a shared-memory one), ``ATOM_GLOBAL`` for one with
    lines, 0 for every other row (one zero for an empty trace)."""
    n = trace.n_instrs
    if not n:
        return np.zeros(1, np.int64)
    atomic = (np.asarray(trace.op) == OpClass.ATOMIC) & (np.asarray(trace.active) > 0)
    lines = np.diff(trace.mem_ptr) > 0
    return np.where(atomic, np.where(lines, C.ATOM_GLOBAL, C.ATOM_SHARED), 0).astype(np.int64)


def _noc_flits(trace: Trace, sm, sectors: np.ndarray, compat: bool) -> tuple[np.ndarray, ...]:
    """Per row, the flits of the request each of its lines sends (a read: its header; a store or atomic:
    its data too; GPGPU-Sim mode with a sectored L1D: a store a packet per sector), of the reply each missed
    line of a load or atomic gets (a load: the line, or where replies come a sector a packet one per sector
    fetched; an atomic: its data), and of the acknowledgements each line of a store gets back (one, or one
    per sector written where replies come a sector a packet: ``SMSpec.icnt_ack_flits``).  A row's data is
    its active 4-byte lanes spread evenly over its lines, as the sector counts take it."""
    n = trace.n_instrs
    if not n:
        return np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    cls_mem = np.array([_MEM_OF_CLASS.get(c, C.MK_NONE) for c in OpClass], dtype=np.int64)
    kind = cls_mem[np.asarray(trace.op, dtype=np.int64)]
    nl = np.diff(trace.mem_ptr)
    line = sm.l1d.line_bytes
    data = np.minimum(np.ceil(trace.active.astype(np.float64) * 4 / np.maximum(nl, 1)), line).astype(np.int64)
    written = _sectors(trace, 32, line)
    writes = (kind == C.MK_STORE) | (kind == C.MK_ATOM)
    req = np.where(writes, sm.icnt_flits(data), sm.icnt_flits(0))
    if sm.l1d.sectored and compat:  # one packet per sector the missed line fetches or the store writes
        per_line = sectors * sm.icnt_flits(32)
        req = np.where(kind == C.MK_STORE, written * sm.icnt_flits(32), req)
    else:
        per_line = np.full(n, sm.icnt_line_reply_flits())
    rep = np.where(kind == C.MK_ATOM, sm.icnt_flits(data), np.where(kind == C.MK_LOAD, per_line, 0))
    ack = np.where(kind == C.MK_STORE, sm.icnt_ack_flits(written), 0)
    return tuple(np.ascontiguousarray(x, dtype=np.int64) for x in (req, rep, ack))


def _default_hooks(hooks) -> int:
    """``C_HOOKS_STD``: which of ``hooks`` are the defaults whose work the loop does itself, without a call
    through the function pointer (the operand and write hooks ``standard_bank_hook``, the may-issue and
    issued hooks ``no_op_hook``)."""
    return (
        C.HOOK_STD_OPERAND * (hooks.operand is standard_bank_hook)
        | C.HOOK_STD_WRITE * (hooks.write is standard_bank_hook)
        | C.HOOK_STD_MAY_ISSUE * (hooks.may_issue is no_op_hook)
        | C.HOOK_STD_ISSUED * (hooks.issued is no_op_hook)
    )


def _prepare(trace: Trace, sm, setup: SimSetup, opts: SimOptions) -> _Prepared:
    compat = opts.compat == "gpgpusim"
    n = trace.n_instrs
    if trace.src.shape[1] != MAX_SRC:
        raise RfmodelError(f"trace '{trace.kernel}': {trace.src.shape[1]} source columns, expected {MAX_SRC}")
    starts, ctas = _cta_bounds(trace)
    n_cta = len(ctas)
    res_ctas, wpc, _ = occupancy(trace, sm)
    W = sm.warps_per_sm
    S = sm.schedulers_per_sm

    rzs = np.zeros(n, dtype=np.int8)
    rzd = np.zeros(n, dtype=np.int8)
    if compat:
        if "rz_src" in trace.attrs and len(trace.attrs["rz_src"]) == n:
            rzs = np.ascontiguousarray(trace.attrs["rz_src"], dtype=np.int8)
        if "rz_dst" in trace.attrs and len(trace.attrs["rz_dst"]) == n:
            rzd = np.ascontiguousarray(trace.attrs["rz_dst"], dtype=np.int8)
    arrays = (
        np.ascontiguousarray(trace.op, dtype=np.int8),
        np.ascontiguousarray(trace.src, dtype=np.uint8),
        np.ascontiguousarray(trace.dst, dtype=np.uint8),
        np.ascontiguousarray(trace.psrc, dtype=np.uint16),
        np.ascontiguousarray(trace.pdst, dtype=np.uint16),
        np.ascontiguousarray(trace.usrc, dtype=np.uint64),
        np.ascontiguousarray(trace.udst, dtype=np.uint64),
        rzs,
        rzd,
        np.ascontiguousarray(trace.mem_ptr, dtype=np.int64),
        np.ascontiguousarray(trace.mem_line, dtype=np.int64),
    )

    # collectors: ids ordered by (group, set), a set split evenly over the groups
    counts = _collector_sets(sm)
    groups = S if sm.sub_core else 1
    k_group, k_set = [], []
    gs_start = [0]
    for grp in range(groups):
        for cset in range(C.N_CSET):
            m = counts[cset]
            if groups > 1:
                if m % groups:
                    raise RfmodelError(
                        f"collectors.{C.CSET_NAMES[cset]} = {m} cannot be split over "
                        f"{groups} sub-cores; use a multiple of schedulers_per_sm"
                    )
                m //= groups
            k_group += [grp] * m
            k_set += [cset] * m
            gs_start.append(len(k_group))
    NC = len(k_group)
    gfree = np.zeros(groups * C.N_CSET, dtype=np.int64)
    for grp, cset in zip(k_group, k_set, strict=True):
        gfree[grp * C.N_CSET + cset] += 1
    sets = unit_collector_sets(sm)

    if compat and (sm.bank_read_ports or sm.bank_write_ports):
        raise RfmodelError(
            "GPGPU-Sim mode models reg_file_port_throughput as bank_rw_ports; "
            "bank_read_ports and bank_write_ports must be 0"
        )
    steps = sm.bank_rw_ports if compat else 1

    if setup.bank_claims >= 0 and setup.bank_claims + sm.num_banks * CLAIM_RING > len(setup.ints):
        raise RfmodelError(
            f"SimSetup.bank_claims: {sm.num_banks} banks' claims do not fit in the design's ints"
        )
    if int(setup.extra_result_latency) < 0:
        raise RfmodelError(f"SimSetup.extra_result_latency = {setup.extra_result_latency} must be >= 0")
    lat = np.array(sm.latency.latencies(), dtype=np.int64) + int(setup.extra_result_latency)
    ii = class_initiations(sm)
    cls_unit = units_of_classes(sm)
    cls_mem = np.array([_MEM_OF_CLASS.get(c, C.MK_NONE) for c in OpClass], dtype=np.int64)

    l1 = sm.l1d
    line_bytes = l1.line_bytes
    line_shift = int(round(math.log2(line_bytes)))
    l1_on = l1.size_bytes > 0
    l1_sets = l1.sets if l1_on else 1
    l1_assoc = l1.assoc if l1_on else 1
    max_rec = W * 64 + NC + 16
    per_k = MAX_SRC + 8
    bq_cap = 1 << max(NC * per_k, 1).bit_length()  # a power of two above the most requests
    heap_cap = max_rec + NC * per_k + 64
    n_reasons = C.N_CORE_REASONS + len(setup.stall_reasons)
    if n_reasons > C.MAX_REASONS:
        raise RfmodelError(f"a design may add at most {C.MAX_REASONS - C.N_CORE_REASONS} stall reasons")
    ic = sm.icache
    noc = sm.icnt_flit_bytes is not None
    il1_on = compat and ic is not None and ic.size_bytes > 0
    sect = compat and l1_on and l1.sectored and line_bytes > SECTOR_BYTES  # GPGPU-Sim mode's sectored L1D
    cta_per_cycle = opts.cta_launch_per_cycle
    if cta_per_cycle < 0:
        cta_per_cycle = 1 if compat else 0
    cfgd = {
        "warps": W,
        "scheds": S,
        "subcore": int(sm.sub_core),
        "issue_width": sm.issue_width,
        "diff_units": int(sm.dual_issue_diff_units),
        "policy": C.POLICIES[sm.scheduler],
        "pool": max(int(setup.pool), 1),
        "collectors": NC,
        "coll_ports": sm.collector_read_ports,
        "banks": sm.num_banks,
        "rports": sm.bank_read_ports,
        "wports": sm.bank_write_ports,
        "rwports": sm.bank_rw_ports,
        "rows": sm.rows_per_warp_register,
        "compat": int(compat),
        "steps": steps,
        "wb_width": opts.result_buses,
        "fetch": fetch_per_cycle(sm, opts),
        "ibuf": opts.ibuffer_entries,
        "cta_per_cycle": cta_per_cycle,
        "max_ctas": res_ctas,
        "wpc": wpc,
        "n_cta": n_cta,
        "max_rec": max_rec,
        "bq_cap": bq_cap,
        "heap_cap": heap_cap,
        "l1_sets": l1_sets,
        "l1_assoc": l1_assoc,
        "l1_on": int(l1_on),
        "l1_bypass": int(l1.bypass_global),
        "l1_hit": l1.hit_latency_cycles,
        "mshr": l1.mshr_entries,
        "l1_reserve": int(l1.allocate_on_miss),
        "l1_index": SET_INDEX[l1.set_index],
        "l1_walloc": int(l1.write_allocate),
        "l1_wevict": int(l1.store_hit_evicts),
        "line_shift": line_shift,
        **_l2_fields(sm, opts, line_bytes),
        "l2_lat": sm.l2_hit_latency_cycles,
        "dram_lat": sm.dram_latency_cycles,
        "smem_lat": sm.smem_latency_cycles,
        "n_reasons": n_reasons,
        "rb_size": 1024,
        "bank_rcyc": max(int(setup.bank_read_cycles), 1),
        "bank_wcyc": max(int(setup.bank_write_cycles), 1),
        "memq": int(setup.mem_queue),
        "claims": int(setup.bank_claims),
        "wbuf": int(setup.write_buffer_entries),
        "wbuf_shared": int(bool(setup.write_buffer_shared)),
        "check": int(opts.check_ports),
        "skip": int(opts.skip_idle),
        "prefer": int(setup.prefer),
        "il1_sets": ic.sets if il1_on else 0,
        "il1_assoc": ic.assoc if il1_on else 1,
        "il1_mshr": ic.mshr_entries if il1_on else 1,
        "il1_onmiss": int(bool(ic.allocate_on_miss)) if il1_on else 1,
        "l1_sect": int(sect),
        "l1_step": int(sect and l1.hit_latency_cycles > 0 and setup.hooks.l1 is own_l1_hook),
        "l1_queue": l1.hit_latency_cycles if compat and l1_on else 0,
        "l1_banks": l1.banks,
        "sector_flits": int(sm.icnt_flits(32)) if noc else 0,
        "line_flits": int(sm.icnt_flits(line_bytes)) if noc else 0,
        "line_ack_flits": int(sm.icnt_ack_flits()) if noc else 0,
        "l1_merge": l1.mshr_merge,
        "l1_missq": l1.miss_queue_entries,
        "hooks_std": _default_hooks(setup.hooks),
    }
    cfg = np.array([cfgd[k] for k in C.CONFIG_FIELDS], dtype=np.int64)
    fcfg = np.array([line_bytes / sm.mem_bw_bytes_per_cycle, sm.icnt_flit_cycles], dtype=np.float64)
    gs_list = np.arange(NC, dtype=np.int64)  # ids are already ordered by (group, set)
    sectors = _sectors(trace, 32, line_bytes) if compat else np.zeros(max(n, 1), dtype=np.int64)
    if noc:
        req_flits, rep_flits, ack_flits = _noc_flits(trace, sm, sectors[:n], compat)
    else:  # one zero per row: the load/store unit reads a row's flits whether or not the ports are modelled
        req_flits = rep_flits = ack_flits = np.zeros(max(n, 1), dtype=np.int64)
    tabd = {
        "cls_lat": lat,
        "cls_ii": ii,
        "cls_unit": cls_unit,
        "cls_mem": cls_mem,
        "unit_set1": np.ascontiguousarray(sets[:, 0]),
        "unit_set2": np.ascontiguousarray(sets[:, 1]),
        "k_group": np.array(k_group or [0], dtype=np.int64),
        "k_set": np.array(k_set or [0], dtype=np.int64),
        "gs_start": np.array(gs_start, dtype=np.int64),
        "gs_list": gs_list if NC else np.zeros(1, dtype=np.int64),
        "cta_wstart": np.ascontiguousarray(starts, dtype=np.int64),
        "tw_ptr": np.ascontiguousarray(trace.warp_ptr, dtype=np.int64),
        "alloc_order": np.array(_ALLOC_ORDER, dtype=np.int64),
        "exec_order": np.array(_EXEC_ORDER, dtype=np.int64),
        "sectors": np.ascontiguousarray(sectors, dtype=np.int64),
        # scheduler s dispatches type u at slot u S + (s mod the type's slots): a table, off the hot loop
        "u_slot": (
            np.arange(C.N_UNIT)[:, None] * S + np.arange(S)[None, :] % unit_slots(sm)[:, None]
        ).ravel(),
        "pc_line": _pc_lines(trace, ic.line_bytes) if il1_on else np.zeros(1, dtype=np.int64),
        "req_flits": req_flits,
        "rep_flits": rep_flits,
        "ack_flits": ack_flits,
        "smem_passes": np.maximum(trace.smem_passes, 1) if n else np.ones(1, np.int64),
        "atom": _atomics(trace),
        "sec_need": _sector_needs(trace, line_bytes) if sect or cfg[C.C_L2_SECT] else np.zeros(1, np.int64),
    }
    tabs = tuple(np.ascontiguousarray(tabd[k], dtype=np.int64) for k in C.TABLE_FIELDS)
    return _Prepared(arrays, cfg, fcfg, tabs, n, n_cta, res_ctas, wpc)


#: GPGPU-Sim's IPOLY channel hashes (its hashing.cc, after "Pseudo-randomly interleaved memory", Rau, ISCA
#: 1991): for 16, 32 and 64 sub-partitions, per index bit the address bits above the channel bits whose
#: parity flips it
_IPOLY = {
    16: (
        (11, 10, 9, 8, 6, 4, 3, 0),
        (12, 8, 7, 6, 5, 3, 1, 0),
        (9, 8, 7, 6, 4, 2, 1),
        (10, 9, 8, 7, 5, 3, 2),
    ),
    32: (
        (13, 12, 11, 10, 9, 6, 5, 3, 0),
        (14, 13, 12, 11, 10, 7, 6, 4, 1),
        (14, 10, 9, 8, 7, 6, 3, 2, 0),
        (11, 10, 9, 8, 7, 4, 3, 1),
        (12, 11, 10, 9, 8, 5, 4, 2),
    ),
    64: (
        (18, 17, 16, 15, 12, 10, 6, 5, 0),
        (15, 13, 12, 11, 10, 7, 5, 1, 0),
        (16, 14, 13, 12, 11, 8, 6, 2, 1),
        (17, 15, 14, 13, 12, 9, 7, 3, 2),
        (18, 16, 15, 14, 13, 10, 8, 4, 3),
        (17, 16, 15, 14, 11, 9, 5, 4),
    ),
}


def _dram_masks(d) -> tuple:
    """GPGPU-Sim's address decoding of ``d`` (a DramSpec): (the dramid bit, whether the channel count is not a
    power of two, the channel bits, and the bank, row and channel masks, the channel bits inserted at the
    dramid bit where the channels are a power of two)."""
    start, masks = parse_address_map(d.address_map)
    n = d.channels
    bits = n.bit_length() - 1
    gap = n != 1 << bits
    bk, row, chip = masks["B"], masks["R"], masks["D"]
    if start >= 0 and not gap:
        low = (1 << start) - 1
        bk, row = [((m & ~low) << bits) | (m & low) for m in (bk, row)]
        chip = ((1 << bits) - 1) << start
    elif start < 0:
        start = (chip & -chip).bit_length() - 1 if chip else 0
    return start, gap, bits, bk, row, chip


def _l2_fields(sm, opts: SimOptions, line_bytes: int) -> dict:
    """The L2's config fields: the SM's slice of ``l2_size_bytes / num_sms`` as one cache of the SM's
    (``SMSpec.l2``) or the options' ways, or, where the SM has the whole L2 and its banks are given, the
    banks (``l2_banks``, their sets, set index, sub-partitions a channel and the sub-partition id's address
    bits: GPGPU-Sim's lowest bank bits, ``sub_partition_id_mask``)."""
    l2 = sm.l2
    banked = l2 is not None and sm.num_sms == 1
    if banked and opts.l2_assoc is not None:
        raise RfmodelError(
            f"simulator options: l2_assoc = {opts.l2_assoc} cannot act: the SM's L2 spec "
            f"gives its banks' ways (l2.assoc = {l2.assoc}); leave the option out or change "
            "the spec"
        )
    ways = opts.l2_assoc or sm.l2_ways
    out = {"l2_assoc": ways, "l2_banks": 0, "l2_bsets": 0, "l2_index": 0, "l2_nsub": 0, "l2_submask": 0}
    # a sectored L2 keeps each line's 32-byte sectors apart (the sectors a way holds: state l2_smask)
    out["l2_sect"] = int(bool(sm.l2_sector_bytes) and line_bytes > SECTOR_BYTES)
    out.update({f"l2_poly{i}": 0 for i in range(6)})
    if not banked:
        out["l2_sets"] = sm.l2_size_bytes // max(sm.num_sms, 1) // (ways * line_bytes)
        return out
    bsets = sm.l2_sets_per_bank
    out.update(
        l2_sets=l2.banks * bsets,
        l2_banks=l2.banks,
        l2_bsets=bsets,
        l2_index=("linear", "ipoly", "xor").index(l2.set_index),
    )
    if l2.set_index == "ipoly":
        for i, taps in enumerate(_IPOLY[bsets]):
            out[f"l2_poly{i}"] = sum(1 << a for a in taps)
    if sm.dram is not None:
        nsub = l2.banks // sm.dram.channels
        out["l2_nsub"] = nsub
        bk = _dram_masks(sm.dram)[3]
        mask = 0
        for i in range(64):  # the bank mask's lowest log2(nsub) bits
            if mask.bit_count() >= nsub.bit_length() - 1:
                break
            if bk >> i & 1:
                mask |= 1 << i
        out["l2_submask"] = mask
    return out


def _dram_array(sm) -> np.ndarray:
    """``state[S_DRAM]`` for ``sm.dram``: the D_* header (GPGPU-Sim's address decoding, :func:`_dram_masks`)
    and the banks' and channels' state, every bank closed; ``[0]`` without."""
    d = sm.dram
    if d is None:
        return np.zeros(1, dtype=np.int64)
    start, gap, bits, bk, row, chip = _dram_masks(d)
    n = d.channels

    def fx(cycles):  # DRAM command cycles in core cycles x LINE_FIX
        return int(round(d.cycles(sm.clock_mhz, cycles) * C.LINE_FIX))

    h = np.zeros(C.D_HDR, dtype=np.int64)
    h[[C.D_ON, C.D_NCH, C.D_NBK, C.D_CHIP_S, C.D_GAP, C.D_CHIPBITS]] = 1, n, d.banks, start, int(gap), bits
    h[C.D_NSUB] = d.sub_partitions.bit_length() - 1
    if d.channel_hash == "ipoly":
        ways = (1 << (n - 1).bit_length()) * d.sub_partitions
        h[C.D_HASH] = 2
        for i, taps in enumerate(_IPOLY[ways]):
            h[C.D_IPOLY + i] = sum(1 << a for a in taps)
    elif d.channel_hash == "xor":
        h[C.D_HASH] = 1
    h[[C.D_BK_MASK, C.D_ROW_MASK, C.D_CHIP_MASK]] = bk, row, chip
    step = max(d.t_ccd, d.t_ccdl if d.bank_groups > 1 else 0, d.burst_cycles)
    h[[C.D_RCD, C.D_RP, C.D_RAS, C.D_RC, C.D_RRD]] = [
        fx(x) for x in (d.t_rcd, d.t_rp, d.t_ras, d.t_rc, d.t_rrd)
    ]
    h[[C.D_CCD, C.D_STEP, C.D_CL, C.D_RTP]] = [
        fx(max(d.t_ccd, d.burst_cycles)),
        fx(step),
        fx(d.t_cl),
        fx(d.burst_cycles),
    ]
    h[C.D_NOMINAL] = round(d.cycles(sm.clock_mhz, d.t_rcd + d.t_cl))  # as the import's dram_latency_cycles
    h[[C.D_SECT, C.D_READS_SEC, C.D_ATOM]] = (
        int(bool(sm.l2_sector_bytes)),
        -(-32 // d.atom_bytes),
        d.atom_bytes,
    )
    nb = n * d.banks
    never = -(1 << 40)
    return np.concatenate([h, np.full(nb, -1, np.int64), np.full(2 * nb + 2 * n, never, np.int64)])


def wbuf_capacity(cfg) -> int:
    """Values the write buffer holds at most: its entries (shared) or entries x banks (per bank)."""
    n = int(cfg[C.C_WBUF])
    return n if cfg[C.C_WBUF_SHARED] else n * int(cfg[C.C_BANKS])


def _state(p: _Prepared, sm) -> tuple[tuple, np.ndarray]:
    cfg = p.cfg
    W = int(cfg[C.C_WARPS])
    S = int(cfg[C.C_SCHEDS])
    WS = -(-W // S)
    NC = int(cfg[C.C_COLLECTORS])
    NB = int(cfg[C.C_BANKS])
    max_rec = int(cfg[C.C_MAX_REC])
    groups = S if cfg[C.C_SUBCORE] else 1
    nu = C.N_UNIT * S
    l1n = int(cfg[C.C_L1_SETS] * cfg[C.C_L1_ASSOC])
    l2n = max(int(cfg[C.C_L2_SETS] * cfg[C.C_L2_ASSOC]), 1)
    il1n = int(cfg[C.C_IL1_SETS] * cfg[C.C_IL1_ASSOC])
    bq = int(cfg[C.C_BQ_CAP])
    wbuf = int(cfg[C.C_WBUF])

    def z(n, v=0):
        return np.full(max(int(n), 1), v, dtype=np.int64)

    # the L1D's latency-queue stages (GPGPU-Sim mode, cycle by cycle) and the sectors of its lines
    l1st = int(cfg[C.C_L1_BANKS]) * int(cfg[C.C_L1_QUEUE]) if cfg[C.C_L1_STEP] else 1
    line_sectors = (1 << int(cfg[C.C_LINE_SHIFT])) >> 5

    sizes = {
        "g": z(C.N_G),
        "w_active": z(W),
        "w_pc": z(W),
        "w_end": z(W),
        "w_cta": z(W),
        "w_sched": z(W),
        "w_inflight": z(W),
        "w_exited": z(W),
        "w_bar": z(W),
        "w_sb": z(W),
        "w_dyn": z(W),
        "w_ibuf": z(W),
        "w_ibuf_at": z(W),
        "w_ppend": z(W),
        "w_tw": z(W),
        "reg_pend": z(W * 256),
        "reg_long": z(W * 256),
        "s_last": z(S, -1),
        "s_age": z(S * WS),
        "s_age_n": z(S),
        "s_pool": z(S * WS),
        "s_pool_n": z(S),
        "s_pend": z(S * WS),
        "s_pend_h": z(S),
        "s_pend_n": z(S),
        "s_reason": z(S, -1),
        "c_cta": z(cfg[C.C_MAX_CTAS], -1),
        "c_live": z(cfg[C.C_MAX_CTAS]),
        "c_unexited": z(cfg[C.C_MAX_CTAS]),
        "c_bar": z(cfg[C.C_MAX_CTAS]),
        "r_warp": z(max_rec),
        "r_row": z(max_rec),
        "r_coll": z(max_rec, -1),
        "r_pending": z(max_rec),
        "r_dk": z(max_rec),
        "r_wrem": z(max_rec),
        "r_unit": z(max_rec),
        "r_seq": z(max_rec),
        "r_extra": z(max_rec),
        "r_free": np.arange(max_rec, dtype=np.int64),
        "k_rec": z(NC, -1),
        "k_ready": z(NC, -1),
        "k_gstamp": z(NC, -1),
        "k_gcount": z(NC),
        "k_conf": z(NC, -1),
        "g_free": z(groups * C.N_CSET),
        "bq_k": z(NB * bq),
        "bq_rem": z(NB * bq),
        "bq_wait": z(NB * bq),
        "b_head": z(NB),
        "b_n": z(NB),
        "b_stamp": z(NB, -1),
        "b_w": z(NB),
        "b_rwused": z(NB),
        "b_r": z(NB),
        "b_nonempty": z(NB),
        "b_in_list": z(NB),
        "u_free": z(nu),
        "u_occ": z(nu),
        "u_occ_base": z(nu),
        "ocex": z(nu, -1),
        "idoc": z(nu, -1),
        "rb": z(cfg[C.C_RB_SIZE]),
        "h_t": z(cfg[C.C_HEAP_CAP]),
        "h_v": z(cfg[C.C_HEAP_CAP]),
        "wb": z(max_rec),
        "lsuwb": z(max_rec),
        "l1_tag": z(l1n, -1),
        "l1_lru": z(l1n, -1),
        "l1_ready": z(l1n),
        "l2_tag": z(l2n, -1),
        "l2_lru": z(l2n, -1),
        "l2_smask": z(l2n),
        "l1_st_r": z(l1st, -1),
        "l1_st_j": z(l1st),
        "l1_st_b": z(l1st),
        "l1_sready": z(l1n * max(line_sectors, 1)),
        "r_macc": z(max_rec),
        "r_mdone": z(max_rec),
        "mshr_fill": z(max(int(cfg[C.C_MSHR]), 1)),
        "k": z(C.N_K),
        "b_max": z(NB),
        "b_busy": z(NB),
        "b_wbusy": z(NB),
        "wq": z(NB * wbuf),
        "wq_head": z(NB),
        "wq_n": z(NB),
        "wq_cnt": z(W * 256 if wbuf else 1),
        "wq_hist": z(wbuf_capacity(cfg) + 1),
        "bq_ready": z(NB * bq),
        "il1_tag": z(il1n, -1),
        "il1_lru": z(il1n, -1),
        "il1_fill": z(il1n),
        "il1_mshr": np.concatenate([z(cfg[C.C_IL1_MSHR]), z(cfg[C.C_IL1_MSHR], -1)]),
        "w_imiss": z(W),
        "l1_smask": z(l1n),
        "l1q": z(max(cfg[C.C_L1_BANKS] * (cfg[C.C_L1_QUEUE] + 3), 1) + 2 + cfg[C.C_L1_MISSQ]),
        "dram": _dram_array(sm),
        "l1_merge": z(max(l1n * max((1 << int(cfg[C.C_LINE_SHIFT])) >> 5, 1), 1)),
        "k_cand": z(NC, -1),
    }
    kg = p.tabs[C.T_K_GROUP]
    ks = p.tabs[C.T_K_SET]
    for k in range(NC):
        sizes["g_free"][kg[k] * C.N_CSET + ks[k]] += 1
    g = sizes["g"]
    g[C.G_RTOP] = max_rec
    g[C.G_UPKEEP_NEXT] = 0
    g[C.G_LAST_FETCH] = 0
    g[C.G_LSU_R] = -1
    if cfg[C.C_POLICY] == C.POL_LRR:
        for s in range(S):
            sizes["s_last"][s] = (W - s + S - 1) // S - 1
    st = tuple(sizes[name] for name in C.STATE_FIELDS)
    ust = np.zeros(W, dtype=np.uint64)
    return st, ust


# --------------------------------------------------------------------------- running
#: ``simulate_trace(program=...)`` left out
_UNSET = object()


def simulate_trace(
    trace: Trace,
    sm,
    design: str | Design = "baseline",
    params: dict | DesignParams | None = None,
    options: SimOptions | dict | None = None,
    progress=None,
    program=_UNSET,
) -> SimRun:
    """Simulate ``trace`` (one SM's CTAs, in launch order) on ``sm`` with ``design``.

    ``params`` holds the design point's design parameters (SM fields are
    already in ``sm``), a dict or the design's typed parameters (``Design.resolve``: resolved here once
    and handed to every stage of the design); ``progress(done, total)`` is called between chunks
    of cycles with retired and total warp instructions.  ``program``: the
    design's compiled program (``Design.compile``; the façade compiles once per
    kernel and design point); left out, it is compiled here for this run.
    """
    opts = options if isinstance(options, SimOptions) else SimOptions.from_dict(options)
    d = get_design(design)
    params = d.resolve(params)
    if sm.l1d.shmem_options:  # an adaptive L1D's share of the unified array at this kernel's occupancy
        sm = carved_l1d(sm, trace.shared_mem_bytes, occupancy(trace, sm)[0])
    sm = d.launch_sm(sm, params, trace)  # the SM fields the design chooses at the kernel's launch
    if program is _UNSET:
        program = d.program_for(trace, params, sm)
    if program is None:  # designs without a pass (or without a static kernel) take no program
        setup = d.sim_setup(sm, params, opts, trace=trace)
    else:
        setup = d.sim_setup(sm, params, opts, trace=trace, program=program)
    if setup.trace is not None:  # the design runs its own version of the trace (instructions it adds)
        trace = setup.trace
    p = _prepare(trace, sm, setup, opts)
    attrs = {
        "compat": opts.compat,
        "resident_ctas": p.resident_ctas,
        "warps_per_cta": p.wpc,
        "l1d_bytes": sm.l1d.size_bytes,
    }
    if p.resident_ctas == 0:
        return _no_fit(trace, d, setup, attrs)
    st, ust = _state(p, sm)
    loop = C.compiled_loop()
    h = setup.hooks
    C.compiled_hooks(h)
    total = p.n_instrs
    cycle = 0
    while True:
        stop = min(cycle + opts.chunk_cycles, opts.max_cycles + 1)
        status = loop(
            *p.arrays,
            p.cfg,
            p.fcfg,
            p.tabs,
            st,
            ust,
            setup.ints,
            setup.floats,
            h.operand,
            h.write,
            h.may_issue,
            h.issued,
            h.activate,
            h.deactivate,
            h.upkeep,
            h.pool,
            h.prefer,
            h.l1,
            np.int64(stop),
        )
        cycle = int(st[C.S_G][C.G_CYCLE])
        K = st[C.S_K]
        if progress is not None:
            progress(int(K[C.K_RETIRED]), total)
        if status == 0:
            break
        if status == 2:
            err = int(K[C.K_ERR])
            info = int(K[C.K_ERR_INFO])
            msg = C.ERR_TEXT[err].format(info=info)
            raise RfmodelError(f"simulation of '{trace.kernel}' stopped: {msg}")
        if cycle > opts.max_cycles:
            raise RfmodelError(
                f"simulation of '{trace.kernel}' stopped: "
                + C.ERR_TEXT[C.ERR_CYCLES].format(info=opts.max_cycles)
            )
    K = st[C.S_K]
    counts = {name: int(K[i]) for i, name in enumerate(C.K_FIELDS)}
    for name, i in setup.counters.items():
        counts[name] = int(setup.ints[i])
    reasons = C.STALL_REASONS + tuple(setup.stall_reasons)
    stalls = {r: int(K[C.K_STALL0 + i]) for i, r in enumerate(reasons)}
    # a design's metrics may read the stall cycles too (``stall_<reason>``: scheduler-cycles without an issue)
    counts.update({f"stall_{r}": n for r, n in stalls.items()})
    b_max = st[C.S_B_MAX]
    counts["max_bank_accesses_per_cycle"] = int(b_max.max()) if len(b_max) else 0
    if p.cfg[C.C_WBUF] > 0:  # cycles at each occupancy of the write buffer (0 .. capacity)
        # values still buffered when the last instruction retired reach their banks after the run
        left = int(st[C.S_G][C.G_WBUF_N])
        counts["wbuf_left_at_end"] = left
        counts["wbuf_drains"] += left
        counts["bank_write_acc"] += left * int(p.cfg[C.C_ROWS])
        hist = st[C.S_WQ_HIST]
        attrs["wbuf_occupancy_hist"] = [int(x) for x in hist]
        counts["wbuf_occupancy_sum"] = int(np.dot(hist, np.arange(len(hist))))
        counts["wbuf_cycles"] = int(hist.sum())
    counts["bank_port_limit"] = int(p.cfg[C.C_STEPS] if opts.compat == "gpgpusim" else sm.bank_ports)
    cycles = counts["last_retire"] + 1 if counts["retired"] else 0
    nc = int(p.cfg[C.C_COLLECTORS])
    metrics = {
        "cycles": float(cycles),
        "ipc": counts["issued"] / cycles if cycles else 0.0,
        "warps": float(min(p.resident_ctas * p.wpc, trace.n_warps)),
        "rf_reads": float(counts["reads"]),
        "rf_writes": float(counts["writes"]),
        "bank_conflict_stall_cycles": float(counts["bank_stall_cycles"]),
        "l1d_hit_rate": counts["l1_hit"] / counts["l1_acc"] if counts["l1_acc"] else 0.0,
        "warp_instructions": float(counts["issued"]),
        "bank_conflicts": float(counts["bank_conflicts"]),
        "collector_occupancy": counts["coll_busy"] / (cycles * nc) if cycles and nc else 0.0,
    }
    metrics.update(d.sim_metrics(sm, params, setup, counts))
    return SimRun(counts=counts, stalls=stalls, metrics=metrics, setup=setup, attrs=attrs)


def _no_fit(trace, d, setup, attrs) -> SimRun:
    counts = {name: 0 for name in C.K_FIELDS}
    for name in setup.counters:
        counts[name] = 0
    reasons = C.STALL_REASONS + tuple(setup.stall_reasons)
    metrics = {
        "cycles": float("inf"),
        "ipc": 0.0,
        "warps": 0.0,
        "rf_reads": 0.0,
        "rf_writes": 0.0,
        "bank_conflict_stall_cycles": float("nan"),
        "l1d_hit_rate": 0.0,
        "warp_instructions": 0.0,
        "bank_conflicts": 0.0,
        "collector_occupancy": 0.0,
    }
    attrs = {**attrs, "note": f"one CTA of '{trace.kernel}' does not fit on the SM"}
    run = SimRun(counts=counts, stalls={r: 0 for r in reasons}, metrics=metrics, setup=setup, attrs=attrs)
    run.metrics.update({"events": {}})
    return run
