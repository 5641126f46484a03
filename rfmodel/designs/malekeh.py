"""Malekeh: register caching in the operand collector units (Caching Collector Units, CCUs).

"Lightweight Register File Caching in Collector Units for GPUs" turns each
operand collector unit into a small register cache: a cache table (CT) of 8
entries (tag, lock bit, one near/far reuse bit from the compiler, LRU), owned
by one warp at a time and flushed when the CCU is given to another warp.
docs/designs.md ("Malekeh") documents the reading implemented here; in short:

* **Hints.** The near/far bit of every source and destination operand is the
  reuse distance (instructions of the warp's own stream up to the next read of
  the value) against RTHLD.  The compiler pass :func:`rfmodel.compiler.reuse_hints`
  gives it per static instruction of the kernel the trace was expanded from
  (``Malekeh(kernel=...)``, else the kernel reloaded from the trace's source;
  parameter ``static_hints``); without one it is computed from the dynamic trace
  with the same definition (the paper annotated Accel-Sim traces).  The trace is
  required: ``sim_setup`` without it is an error.
* **CCU choice.** The simulator core does not tell the hooks which collector
  an instruction took, so the design keeps its own cache tables, as many per
  scheduler group as the SM has collectors there, and assigns them in
  ``may_issue``/``issued``: the warp's own CT if it has one (the warp waits
  while its CT still holds its previous instruction), else a free CT (one
  whose instruction was dispatched) holding only far values (empty ones first,
  then least recently used), else the least recently used free CT holding near
  values -- after the allocator has stalled STHLD cycles.  A CT is busy from
  the issue of its instruction until ``CCU_HOLD`` cycles after the instruction
  took its collector (the unconflicted dispatch time).
* **Lookups, replacement, writes** as the paper's sections 3-4 (see
  docs/designs.md), with a seeded RNG in the state for "random among far".
* **Scheduler**: the core's ``prefer`` hook puts warps that own a CT first.
* **Adaptive STHLD**: a six-state machine over 10,000-cycle intervals
  (:func:`fsm_step`; the transition table is in docs/designs.md).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS
from rfmodel.analytic.model import BANK_CYCLES, Effects, sm_param
from rfmodel.analytic.profile import TableGroup, _grid_pos, leading_warps, register_table_group
from rfmodel.analytic.reuse import ipc_gain, near_fraction_from_hist, profile_reuse_hist, served_outside
from rfmodel.analytic.throughput import softmin
from rfmodel.compiler.reuse_hint import DEFAULT_RTHLD, dynamic_distances, reuse_hints
from rfmodel.designs import base, mainrf
from rfmodel.errors import RfmodelError
from rfmodel.spec import param
from rfmodel.trace import MAX_DST, MAX_SRC, NONE


# ----------------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class MalekehParams(mainrf.SlowBankParams, kind="design.malekeh"):
    """Malekeh's parameters and the paper's defaults (RTHLD, the initial STHLD, the FSM deltas and the
    small/large IPC-change threshold are not given by the paper: our choices, documented)."""

    rthld: int = param(DEFAULT_RTHLD, bounds=(0, 1 << 20), doc="near: 1 <= reuse distance <= rthld")
    ct_entries: int = param(8, bounds=(1, 64), doc="cache-table entries per CCU (paper: 8)")
    sthld: int = param(
        4, unit="cycles", bounds=(0, 1 << 20), doc="initial (or, with adaptive = 0, fixed) STHLD"
    )
    adaptive: int = param(1, choices=(0, 1), doc="1: the STHLD state machine runs")
    interval_cycles: int = param(
        10_000,
        unit="cycles",
        bounds=(1, 1 << 40),
        acts_with={"adaptive": (1,)},
        doc="adaptive interval (paper: 10,000 cycles)",
    )
    seed: int = param(1, bounds=(0, (1 << 31) - 1), engines=("simulate",), doc="seed of the replacement RNG")
    static_hints: int = param(
        1,
        choices=(0, 1),
        engines=("simulate",),
        doc="1: the compiler pass's static hints where the kernel is known; 0: trace distances",
    )


#: the defaults by name
DEFAULTS = MalekehParams().to_dict()
#: Malekeh's own free coefficients (default, lower, upper)
MALEKEH_CALIBRATION = {
    "near_hit": (1.0, 0.5, 1.5),  # the simulator's hits over the profile's warp-private cache table's
    "ccu_loss": (0.05, 0.0, 2.0),  # CCU loss rate per stalled cycle per unit of CCU over-subscription
    "write_share": (0.5, 0.0, 1.0),  # share of hits that were cached writes (for the CCU write events)
    "dropped_share": (0.05, 0.0, 0.5),  # share of near results dropped at the CCU's one write port
    "ipc_gain_per_saved_read": (0.08, 0.0, 0.5),  # relative IPC gain per bank read saved per instruction
    "sthld_hold": (0.5, 0.0, 1.0),  # share of the takings that wait out STHLD, per idle issue slot
    "near_fraction_default": (0.5, 0.0, 1.0),  # when the profile has no reuse-distance histogram
    "ccu_hold_weight": (1.0, 0.0, 3.0),  # a warp's issue spacing behind its own CT, per cycle of collection
    "alloc_share": (0.7, 0.2, 1.0),  # the most of the cycles in which a group's allocator counts STHLD
}
#: cycles a CT stays busy after its instruction took a collector (issue t, read t + 1, dispatch t + 2)
CCU_HOLD = 2


def miss_hold_cycles(sm, bank_read_cycles):
    """Over slow banks, the cycles beyond ``CCU_HOLD`` that a CT which missed holds its instruction: until
    the bank's read arrives, the bank's read time beyond the one-cycle bank's for each bank row of a warp
    register (0 at one cycle).  The simulator takes it at whole cycles (its state's ``I_MISS_HOLD``), the
    analytic model at the continuous read time."""
    return sm.rows_per_warp_register * np.maximum(np.asarray(bank_read_cycles, dtype=np.float64) - 1.0, 0.0)


#: adaptive STHLD: big and small steps, the bound, and the relative IPC change that counts as "large"
FSM = {"delta_big": 4, "delta_small": 1, "sthld_max": 64, "large_change": 0.05}

# ----------------------------------------------------------------------------------- state layout
I_G, I_NCT, I_E, I_S, I_SUB, I_STHLD, I_ADAPT, I_INTERVAL, I_NEXT_B, I_FSM = range(6, 16)
I_RNG, I_CLOCK, I_ISSUED_IV, I_W, I_OFF_CT, I_OFF_ENT, I_OFF_WCT, I_OFF_GRP, I_OFF_ROW = range(16, 25)
I_D1, I_D2, I_SMAX = 25, 26, 27
I_MISS_HOLD = 28  # slow banks: cycles a bank read delivers later than the one-cycle bank's (0 at 1x)
# counters
C0 = 30
COUNTERS = (
    "ccu_hits",  # source operands served by a CT
    "ccu_misses",  # source operands read from the banks
    "ccu_fills",  # misses installed in a CT (the read value is kept)
    "ccu_writes",  # results written into a CT (near, port free)
    "ccu_dropped_writes",  # near results discarded: the CT's one write port was taken this cycle
    "ccu_write_invalidations",  # results not cached whose register the CT held (entry invalidated)
    "ccu_flushes",  # CTs flushed because another warp took the CCU
    "sthld_stall_cycles",  # group-cycles the allocator waited for STHLD
    "sthld_sum",  # sum of STHLD over completed intervals
    "sthld_intervals",  # completed intervals
    "sthld_last",  # STHLD at the end of the run
    "rf_writes_all",  # results (all written to the banks: write-through)
    "ccu_evictions",  # valid entries replaced (by a miss's fill or a cached result)
)
CNT = {name: C0 + i for i, name in enumerate(COUNTERS)}
# the counters' offsets, in COUNTERS' order
(
    K_CCU_HITS,
    K_CCU_MISSES,
    K_CCU_FILLS,
    K_CCU_WRITES,
    K_CCU_DROPPED_WRITES,
    K_CCU_WRITE_INVALIDATIONS,
    K_CCU_FLUSHES,
    K_STHLD_STALL_CYCLES,
    K_STHLD_SUM,
    K_STHLD_INTERVALS,
    K_STHLD_LAST,
    K_RF_WRITES_ALL,
    K_CCU_EVICTIONS,
) = range(C0, C0 + len(COUNTERS))
HEADER = C0 + len(COUNTERS)
# per CT fields
CT_OWNER, CT_RELEASE, CT_LRU, CT_WCYC, CT_WROW = range(5)
CT_F = 5
# per entry fields
E_TAG, E_NEAR, E_LOCK, E_LRU = range(4)
E_F = 4
# per group fields
# per group: STHLD stall counter, last cycle counted, and the allocation choice memoized for one cycle
G_WAIT, G_LASTSTALL, G_MEMO_CYC, G_MEMO_VAL = range(4)
G_F = 4
# per row: word 0 = source registers 0..7 (8 bits each), word 1 = registers 8..9 (bits 0..15),
# source near mask (bits 16..25), destination near mask (bits 26..29), hit mask (bits 32..41)
R_F = 2
SRC_NEAR_SHIFT, DST_NEAR_SHIFT, HIT_SHIFT = 16, 26, 32
PENDING = 1 << 60  # CT release time while its instruction waits for a collector
INF_LRU = 1 << 62
# choice codes
CH_OWN, CH_FAR, CH_NEAR, CH_NONE, CH_BUSY = 0, 1, 2, 3, 4
# stall reasons (1-based codes of may_issue)
STALL_REASONS = ("ccu_busy", "no_free_ccu", "sthld_wait")
R_BUSY, R_NONE, R_STHLD = 1, 2, 3


def groups_of(sm) -> tuple[int, int, bool]:
    """(groups, collectors per group, sub-core) of the SM's collector units."""
    sub = bool(sm.sub_core)
    groups = sm.schedulers_per_sm if sub else 1
    per = max(sm.collectors.total // groups, 1)
    return groups, per, sub


# ----------------------------------------------------------------------------------- hints
def _static_table(kernel, h, attr: str, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Per static instruction: its operands' distances as the trace stores them (``width`` columns,
    registers outside 0..254 dropped, as the trace expansion does) and their count."""
    n = len(kernel.instrs)
    table = np.full((n + 1, width), -1, np.int64)
    count = np.full(n + 1, -1, np.int64)
    for i, ins in enumerate(kernel.instrs):
        regs = ins.src if attr == "src" else ins.dst
        dist = (h.src_distance if attr == "src" else h.dst_distance)[i]
        keep = [d for r, d in zip(regs, dist, strict=False) if 0 <= r < NONE][:width]
        table[i, : len(keep)] = keep
        count[i] = len(keep)
    return table, count


def trace_distances(trace, kernel=None) -> tuple[np.ndarray, np.ndarray, str]:
    """Reuse distances ``(src [N, MAX_SRC], dst [N, MAX_DST], source)`` of every trace operand.

    With ``kernel`` (the static program the trace was expanded from) the compiler
    pass's static distances (:func:`reuse_hints`) are mapped through ``trace.sidx``;
    rows it cannot map fall back to the distance in the warp's dynamic stream.
    """
    sd, dd = dynamic_distances(trace.warp_ptr, trace.src, trace.dst)
    if kernel is None:
        return sd, dd, "dynamic (trace reuse distances)"
    h = reuse_hints(kernel, 1)
    n_static = len(kernel.instrs)
    st, sc = _static_table(kernel, h, "src", sd.shape[1])
    dt, dc = _static_table(kernel, h, "dst", dd.shape[1])
    sidx = np.asarray(trace.sidx, dtype=np.int64)
    sidx = np.where((sidx >= 0) & (sidx < n_static), sidx, n_static)
    ok = (sc[sidx] == (trace.src != NONE).sum(axis=1)) & (dc[sidx] == (trace.dst != NONE).sum(axis=1))
    ok &= sidx < n_static
    sd[ok] = st[sidx[ok]]
    dd[ok] = dt[sidx[ok]]
    return sd, dd, f"static compiler pass ({int(ok.sum())} of {trace.n_instrs} rows)"


def near_masks(sd: np.ndarray, dd: np.ndarray, rthld: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row: bit ``k`` set when operand ``k``'s reuse distance is near (``1 <= d <= rthld``)."""
    sn = ((sd >= 1) & (sd <= rthld)).astype(np.int64)
    dn = ((dd >= 1) & (dd <= rthld)).astype(np.int64)
    smask = (sn << np.arange(sd.shape[1], dtype=np.int64)).sum(axis=1)
    dmask = (dn << np.arange(dd.shape[1], dtype=np.int64)).sum(axis=1)
    return smask, dmask


# ----------------------------------------------------------------------------------- CT primitives
@njit(cache=True)
def lcg_next(ints):
    """The replacement RNG (an LCG mod 2**31 kept in the state): next value in [0, 2**31)."""
    x = (1103515245 * ints[I_RNG] + 12345) % 2147483648
    ints[I_RNG] = x
    return x


@njit(cache=True)
def ct_find(ints, ct, reg):
    """Entry index (global) of ``reg`` in CT ``ct``, or -1."""
    E = ints[I_E]
    ent0 = ints[I_OFF_ENT] + ct * E * E_F
    for e in range(E):
        if ints[ent0 + e * E_F + E_TAG] == reg:
            return ct * E + e
    return -1


@njit(cache=True)
def ct_victim(ints, ct, cyc, hinted):
    """The entry (global index) to replace in CT ``ct``, or -1 (every entry locked).

    Invalid entries first (the lowest); then, excluding locked entries, a random one among
    the far entries; if all are near, the least recently used.  ``hinted`` = 0: LRU only.
    """
    E = ints[I_E]
    ent0 = ints[I_OFF_ENT] + ct * E * E_F
    busy = ints[ints[I_OFF_CT] + ct * CT_F + CT_RELEASE] > cyc
    n_far = 0
    lru_e = -1
    lru_v = INF_LRU
    for e in range(E):
        p = ent0 + e * E_F
        if ints[p + E_TAG] < 0:
            return ct * E + e
        if ints[p + E_LOCK] != 0 and busy:
            continue
        if ints[p + E_NEAR] == 0:
            n_far += 1
        if ints[p + E_LRU] < lru_v:
            lru_v = ints[p + E_LRU]
            lru_e = e
    if hinted != 0 and n_far > 0:
        pick = lcg_next(ints) % n_far
        for e in range(E):
            p = ent0 + e * E_F
            if (ints[p + E_LOCK] != 0 and busy) or ints[p + E_NEAR] != 0:
                continue
            if pick == 0:
                return ct * E + e
            pick -= 1
    if lru_e < 0:
        return -1
    return ct * E + lru_e


@njit(cache=True)
def ct_flush(ints, ct):
    E = ints[I_E]
    ent0 = ints[I_OFF_ENT] + ct * E * E_F
    valid = 0
    for e in range(E):
        p = ent0 + e * E_F
        if ints[p + E_TAG] >= 0:
            valid += 1
        ints[p + E_TAG] = -1
        ints[p + E_NEAR] = 0
        ints[p + E_LOCK] = 0
        ints[p + E_LRU] = 0
    return valid


@njit(cache=True)
def ct_near_count(ints, ct):
    E = ints[I_E]
    ent0 = ints[I_OFF_ENT] + ct * E * E_F
    n = 0
    for e in range(E):
        p = ent0 + e * E_F
        if ints[p + E_TAG] >= 0 and ints[p + E_NEAR] != 0:
            n += 1
    return n


@njit(cache=True)
def ct_read(ints, ct, reg, near, hinted, cyc):
    """Look up a source operand at CCU allocation: 1 hit, 0 miss installed, -1 miss not cached.

    The entry is locked, its hint set from the instruction and its LRU stamp updated.
    """
    ints[I_CLOCK] += 1
    ent = ct_find(ints, ct, reg)
    res = 1
    if ent < 0:
        ent = ct_victim(ints, ct, cyc, hinted)
        if ent < 0:
            return -1
        res = 0
        if ints[ints[I_OFF_ENT] + ent * E_F + E_TAG] >= 0:
            ints[K_CCU_EVICTIONS] += 1
    p = ints[I_OFF_ENT] + ent * E_F
    ints[p + E_TAG] = reg
    ints[p + E_NEAR] = near
    ints[p + E_LOCK] = 1
    ints[p + E_LRU] = ints[I_CLOCK]
    return res


@njit(cache=True)
def ct_write(ints, ct, row, reg, near, hinted, cyc):
    """A result arriving at the CCU's write port (port D).

    Returns 1 written, 2 dropped (port taken this cycle by another instruction), 3 invalidated
    (not cached, the CT held the register's old value), 0 nothing.
    """
    cb = ints[I_OFF_CT] + ct * CT_F
    ent = ct_find(ints, ct, reg)
    if near == 0:
        if ent >= 0:
            ints[ints[I_OFF_ENT] + ent * E_F + E_TAG] = -1
            ints[ints[I_OFF_ENT] + ent * E_F + E_LOCK] = 0
            return 3
        return 0
    if ints[cb + CT_WCYC] == cyc and ints[cb + CT_WROW] != row:
        if ent >= 0:  # the old value is stale and the new one did not get in
            ints[ints[I_OFF_ENT] + ent * E_F + E_TAG] = -1
            ints[ints[I_OFF_ENT] + ent * E_F + E_LOCK] = 0
        return 2
    if ent < 0:
        ent = ct_victim(ints, ct, cyc, hinted)
        if ent < 0:
            return 2
        if ints[ints[I_OFF_ENT] + ent * E_F + E_TAG] >= 0:
            ints[K_CCU_EVICTIONS] += 1
    ints[cb + CT_WCYC] = cyc
    ints[cb + CT_WROW] = row
    ints[I_CLOCK] += 1
    p = ints[I_OFF_ENT] + ent * E_F
    ints[p + E_TAG] = reg
    ints[p + E_NEAR] = 1
    ints[p + E_LRU] = ints[I_CLOCK]
    return 1


@njit(cache=True)
def choose_ct(ints, w, cyc):
    """The CCU allocation decision for warp ``w`` now: ``code * 2**32 + ct`` (see the CH_* codes)."""
    wct = ints[ints[I_OFF_WCT] + w]
    ctb = ints[I_OFF_CT]
    if wct >= 0:
        if ints[ctb + wct * CT_F + CT_RELEASE] > cyc:
            return CH_BUSY << 32
        return (CH_OWN << 32) + wct
    nct = ints[I_NCT]
    g = (w % ints[I_S]) if ints[I_SUB] != 0 else 0
    gp = ints[I_OFF_GRP] + g * G_F
    if ints[gp + G_MEMO_CYC] == cyc:  # same answer for every warp without a CCU until the state changes
        return ints[gp + G_MEMO_VAL]
    res = choose_free_ct(ints, g * nct, (g + 1) * nct, cyc)
    ints[gp + G_MEMO_CYC] = cyc
    ints[gp + G_MEMO_VAL] = res
    return res


@njit(cache=True)
def memo_clear(ints, ct):
    """The CCU ``ct`` changed: forget its group's memoized allocation choice."""
    ints[ints[I_OFF_GRP] + (ct // ints[I_NCT]) * G_F + G_MEMO_CYC] = -1


@njit(cache=True)
def choose_free_ct(ints, c0, c1, cyc):
    """Among CCUs ``c0 .. c1 - 1``: the free one holding only far values (empty first, then LRU), else
    the least recently used free one holding near values, else none."""
    ctb = ints[I_OFF_CT]
    best_far = -1
    far_key = INF_LRU
    best_near = -1
    near_key = INF_LRU
    for c in range(c0, c1):
        p = ctb + c * CT_F
        if ints[p + CT_RELEASE] > cyc:
            continue
        key = ints[p + CT_LRU] if ints[p + CT_OWNER] >= 0 else -1
        if ct_near_count(ints, c) == 0:
            if key < far_key:
                far_key = key
                best_far = c
        elif key < near_key:
            near_key = key
            best_near = c
    if best_far >= 0:
        return (CH_FAR << 32) + best_far
    if best_near >= 0:
        return (CH_NEAR << 32) + best_near
    return CH_NONE << 32


# ----------------------------------------------------------------------------------- hooks
@njit(cache=True)
def malekeh_may_issue(ints, floats, w, row, s, n, cyc):
    ch = choose_ct(ints, w, cyc)
    code = ch >> 32
    if code == CH_OWN or code == CH_FAR:
        return 0
    if code == CH_BUSY:
        return R_BUSY
    if code == CH_NONE:
        return R_NONE
    # the only free CCU holds near values: the group's allocator stalls until its stall counter
    # reaches STHLD (one count per cycle in which it is stalled), then replaces the CCU
    g = ints[I_OFF_GRP] + ((w % ints[I_S]) if ints[I_SUB] != 0 else 0) * G_F
    if ints[g + G_WAIT] >= ints[I_STHLD]:
        return 0
    if ints[g + G_LASTSTALL] != cyc:
        ints[g + G_LASTSTALL] = cyc
        ints[g + G_WAIT] += 1
        ints[K_STHLD_STALL_CYCLES] += 1
    return R_STHLD


@njit(cache=True)
def malekeh_issued(ints, floats, w, row, s, rec, cyc):
    ints[I_ISSUED_IV] += 1
    ch = choose_ct(ints, w, cyc)
    code = ch >> 32
    ct = ch & 0xFFFFFFFF
    if code == CH_BUSY or code == CH_NONE:  # cannot happen after may_issue allowed it
        return 0
    ctb = ints[I_OFF_CT] + ct * CT_F
    memo_clear(ints, ct)
    if code != CH_OWN:
        old = ints[ctb + CT_OWNER]
        if old >= 0:
            ints[ints[I_OFF_WCT] + old] = -1
        if ct_flush(ints, ct) > 0:
            ints[K_CCU_FLUSHES] += 1
        ints[ctb + CT_OWNER] = w
        ints[ints[I_OFF_WCT] + w] = ct
        # a CCU was allocated to a new warp: the group's stall counter starts again from zero
        ints[ints[I_OFF_GRP] + ((w % ints[I_S]) if ints[I_SUB] != 0 else 0) * G_F + G_WAIT] = 0
    ints[I_CLOCK] += 1
    ints[ctb + CT_LRU] = ints[I_CLOCK]
    ints[ctb + CT_RELEASE] = PENDING  # busy until its operands are collected
    # the new instruction's locks replace the old ones
    E = ints[I_E]
    eb = ints[I_OFF_ENT] + ct * E * E_F
    for e in range(E):
        ints[eb + e * E_F + E_LOCK] = 0
    rb = ints[I_OFF_ROW] + row * R_F
    w0 = ints[rb]
    w1 = ints[rb + 1]
    hits = 0
    nsrc = 0
    for j in range(10):
        reg = (w0 >> (8 * j)) & 255 if j < 8 else (w1 >> (8 * (j - 8))) & 255
        if reg == 255:
            continue
        nsrc += 1
        near = (w1 >> (SRC_NEAR_SHIFT + j)) & 1
        res = ct_read(ints, ct, reg, near, 1, cyc)
        if res == 1:
            hits |= 1 << j
            ints[K_CCU_HITS] += 1
        else:
            ints[K_CCU_MISSES] += 1
            if res == 0:
                ints[K_CCU_FILLS] += 1
    ints[rb + 1] = (w1 & ((1 << HIT_SHIFT) - 1)) | (hits << HIT_SHIFT)
    if nsrc == 0:
        ints[ctb + CT_RELEASE] = cyc + CCU_HOLD
    return 0


@njit(cache=True)
def malekeh_operand(ints, floats, w, row, k, reg, cyc):
    """Source operand at collector allocation: hits (decided at issue) come from the CT, no bank."""
    ct = ints[ints[I_OFF_WCT] + w]
    if ct >= 0:
        p = ints[I_OFF_CT] + ct * CT_F + CT_RELEASE
        if ints[p] == PENDING:  # the instruction took its collector: the CT frees at dispatch
            ints[p] = cyc + CCU_HOLD
    if k < 10 and (ints[ints[I_OFF_ROW] + row * R_F + 1] >> (HIT_SHIFT + k)) & 1:
        return -1
    hold = ints[I_MISS_HOLD]
    if hold > 0 and ct >= 0:  # slow banks: the CCU holds the instruction until the miss arrives
        p = ints[I_OFF_CT] + ct * CT_F + CT_RELEASE
        if ints[p] < cyc + CCU_HOLD + hold:
            ints[p] = cyc + CCU_HOLD + hold
    return base.standard_bank(ints, w, reg)


@njit(cache=True)
def malekeh_write(ints, floats, w, row, k, reg, cyc):
    """Write-through: every result goes to its bank; near results also into the warp's CT (port D)."""
    ints[K_RF_WRITES_ALL] += 1
    b = base.standard_bank(ints, w, reg)
    ct = ints[ints[I_OFF_WCT] + w]
    if ct < 0 or reg == 255 or k >= 4:
        return b
    near = (ints[ints[I_OFF_ROW] + row * R_F + 1] >> (DST_NEAR_SHIFT + k)) & 1
    memo_clear(ints, ct)
    res = ct_write(ints, ct, row, reg, near, 1, cyc)
    if res == 1:
        ints[K_CCU_WRITES] += 1
    elif res == 2:
        ints[K_CCU_DROPPED_WRITES] += 1
    elif res == 3:
        ints[K_CCU_WRITE_INVALIDATIONS] += 1
    return b


@njit(cache=True)
def malekeh_prefer(ints, floats, w, row, s, d, cyc):
    return 1 if ints[ints[I_OFF_WCT] + w] >= 0 else 0


@njit(cache=True)
def malekeh_activate(ints, floats, w, cta, s, d, cyc):
    ints[ints[I_OFF_WCT] + w] = -1
    return 0


@njit(cache=True)
def malekeh_deactivate(ints, floats, w, cta, s, d, cyc):
    ct = ints[ints[I_OFF_WCT] + w]
    if ct >= 0:
        memo_clear(ints, ct)
        ct_flush(ints, ct)
        ints[ints[I_OFF_CT] + ct * CT_F + CT_OWNER] = -1
        ints[ints[I_OFF_CT] + ct * CT_F + CT_LRU] = 0
        ints[ints[I_OFF_WCT] + w] = -1
    return 0


@njit(cache=True)
def fsm_step(state, sthld, rel, d1, d2, smax, large):
    """One transition of the adaptive STHLD machine: ``(new state, new STHLD)`` (see :data:`FSM`)."""
    big = rel >= large or rel <= -large
    up = rel > 0
    if state == 1:
        state, sthld = 2, sthld + d1
    elif state == 2:
        if big and not up:
            state, sthld = 4, sthld - d1
        else:
            sthld += d1
    elif state == 3:
        if big and not up:
            state, sthld = 4, sthld - 2 * d1
        else:
            state, sthld = 2, sthld + d1
    elif state == 4:
        if big and up:
            sthld -= d2
        elif big:
            state, sthld = 6, sthld + d2
        else:
            state, sthld = 5, sthld + d2
    elif state == 5:
        if big and up:
            sthld += d2
        elif big:
            state, sthld = 6, sthld - d2
        else:
            state = 6
    else:
        if big:
            state, sthld = 3, sthld + d1
    if sthld < 0:
        sthld = 0
    if sthld > smax:
        sthld = smax
    return state, sthld


def sthld_climb(cycles, sthld, interval, adaptive=1, top=None):
    """The adaptive STHLD over a run of ``cycles`` whose IPC never falls by :data:`FSM`'s large change from
    one interval to the next (a steady run): the machine of :func:`fsm_step` starts at ``sthld`` and adds
    ``delta_big`` at the end of every ``interval`` cycles (state 1, then 2), up to ``sthld_max``; interval j
    (from 0) runs at ``L_j = sthld`` for j = 0, ``min(sthld + delta_big j, sthld_max)`` after.  Returns
    ``(mean, level)``: the mean over the completed intervals (the simulator's ``sthld_mean``; ``sthld`` when
    none completes) and the time average over the whole run (what the waits cost).  With ``adaptive`` 0
    both are ``sthld``.  A run whose IPC drops by 5 % or more between intervals backs off instead (state 4),
    which this does not follow; ``top`` (per point, default ``sthld_max``): the rung where :func:`climb_top`
    finds it backs off, above which it climbs no further."""
    T = np.asarray(cycles, dtype=np.float64)
    T = np.where(np.isfinite(T), np.maximum(T, 0.0), 0.0)  # nothing resident (no finite run): the initial
    s0 = np.asarray(sthld, dtype=np.float64)
    iv = np.maximum(np.asarray(interval, dtype=np.float64), 1.0)
    d = float(FSM["delta_big"])
    smax = float(FSM["sthld_max"]) if top is None else np.asarray(top, dtype=np.float64)
    k = np.floor(T / iv)  # completed intervals

    def rungs(n):
        # sum of L_j over j = 1..n: the climbing rungs below smax, then smax
        below = np.maximum(np.ceil((smax - s0) / d) - 1.0, 0.0)
        m = np.minimum(n, below)
        return m * s0 + d * m * (m + 1.0) / 2.0 + (n - m) * smax

    done = s0 + rungs(np.maximum(k - 1.0, 0.0))  # sum over the completed intervals j = 0..k-1
    last = np.where(k > 0, np.minimum(s0 + d * k, smax), s0)  # the level of the interval under way
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(k > 0, done / np.maximum(k, 1.0), s0)
        level = np.where(T > 0, (np.where(k > 0, done, 0.0) * iv + (T - k * iv) * last) / T, s0)
    on = np.asarray(adaptive) > 0
    return np.where(on, mean, s0), np.where(on, level, s0)


def climb_top(pace, sthld):
    """Per point, the level the adaptive STHLD machine settles at (:func:`fsm_step`): it climbs from
    ``sthld`` by ``delta_big`` an interval while a rung costs less than the large change of IPC; at the
    first rung that costs more it backs off to the rung below and, as the next large change of IPC sends
    it up again, keeps probing that rung: half the time there (the level ``L + delta_big / 2``).
    ``pace(level)``: the IPC at an STHLD level (arrays over the points).  ``sthld_max`` where no rung costs
    that much."""
    d, smax, large = float(FSM["delta_big"]), float(FSM["sthld_max"]), float(FSM["large_change"])
    level = np.asarray(sthld, dtype=np.float64)
    prev = pace(level)
    top = np.full(np.broadcast(level, prev).shape, smax)
    stopped = np.zeros(top.shape, dtype=bool)
    for _ in range(int(np.ceil(smax / d))):
        nxt = np.minimum(level + d, smax)
        now = pace(nxt)
        stop = ~stopped & (now < (1.0 - large) * prev) & (level < smax)
        top = np.where(stop, np.minimum(level + 0.5 * d, smax), top)
        stopped |= stop
        if stopped.all():
            break
        level, prev = nxt, now
    return top


@njit(cache=True)
def malekeh_upkeep(ints, floats, a, b, c, d, cyc):
    if cyc >= ints[I_NEXT_B]:
        iv = ints[I_INTERVAL]
        ipc = ints[I_ISSUED_IV] / iv
        ints[I_ISSUED_IV] = 0
        ints[K_STHLD_SUM] += ints[I_STHLD]
        ints[K_STHLD_INTERVALS] += 1
        if ints[I_ADAPT] != 0:
            prev = floats[0]
            if prev > 0:
                rel = (ipc - prev) / prev
            else:
                rel = 1.0 if ipc > 0 else 0.0
            st, th = fsm_step(
                ints[I_FSM], ints[I_STHLD], rel, ints[I_D1], ints[I_D2], ints[I_SMAX], floats[1]
            )
            ints[I_FSM] = st
            ints[I_STHLD] = th
        floats[0] = ipc
        ints[I_NEXT_B] += iv
    ints[K_STHLD_LAST] = ints[I_STHLD]
    # answers change with time alone (CT release, the STHLD wait): poll every cycle
    return cyc + 1


HOOKS = base.SimHooks(
    operand=malekeh_operand,
    write=malekeh_write,
    may_issue=malekeh_may_issue,
    issued=malekeh_issued,
    activate=malekeh_activate,
    deactivate=malekeh_deactivate,
    upkeep=malekeh_upkeep,
    prefer=malekeh_prefer,
)


def pack_rows(trace, smask, dmask) -> np.ndarray:
    """Two int64 words per row: source registers and the near masks (layout above)."""
    n = trace.n_instrs
    src = trace.src.astype(np.int64)
    w0 = np.zeros(n, np.int64)
    for j in range(min(8, MAX_SRC)):
        w0 |= src[:, j] << (8 * j)
    w1 = np.zeros(n, np.int64)
    for j in range(8, MAX_SRC):
        w1 |= src[:, j] << (8 * (j - 8))
    w1 |= (smask & 0x3FF) << SRC_NEAR_SHIFT
    w1 |= (dmask & 0xF) << DST_NEAR_SHIFT
    return np.stack([w0, w1], axis=1).reshape(-1)


@njit(cache=True)
def _hint_rows(warp_ptr, src, dst, sidx, st, sc, dt, dc, rthld):  # pragma: no cover - compiled
    """:func:`trace_distances` + :func:`near_masks` + :func:`pack_rows` in one pass (the fast path).

    ``st``/``dt`` are the static distance tables by static index (last row: none) and ``sc``/``dc``
    their operand counts (-1: no static data); returns the packed rows and the rows mapped.
    """
    sd, dd = dynamic_distances(warp_ptr, src, dst)
    n = src.shape[0]
    n_static = st.shape[0] - 1
    out = np.zeros(2 * n, np.int64)
    mapped = 0
    for i in range(n):
        s = sidx[i]
        if s >= 0 and s < n_static:
            ns = 0
            for k in range(src.shape[1]):
                if src[i, k] != 255:
                    ns += 1
            nd = 0
            for k in range(dst.shape[1]):
                if dst[i, k] != 255:
                    nd += 1
            if sc[s] == ns and dc[s] == nd:
                mapped += 1
                for k in range(src.shape[1]):
                    sd[i, k] = st[s, k]
                for k in range(dst.shape[1]):
                    dd[i, k] = dt[s, k]
        w0, w1 = base.source_row_words(src, i)
        for k in range(src.shape[1]):
            d = sd[i, k]
            if d >= 1 and d <= rthld:
                w1 |= np.int64(1) << (SRC_NEAR_SHIFT + k)
        for k in range(dst.shape[1]):
            d = dd[i, k]
            if d >= 1 and d <= rthld:
                w1 |= np.int64(1) << (DST_NEAR_SHIFT + k)
        out[2 * i] = w0
        out[2 * i + 1] = w1
    return out, mapped


def static_hint_tables(kernel):
    """The compiler pass's output on a static kernel: per static instruction, the reuse distances of its
    sources and destinations as the trace stores them (:func:`reuse_hints`), and their counts."""
    h = reuse_hints(kernel, 1)
    st, sc = _static_table(kernel, h, "src", MAX_SRC)
    dt, dc = _static_table(kernel, h, "dst", MAX_DST)
    return st, sc, dt, dc


def hint_rows(trace, tables, rthld: int) -> tuple[np.ndarray, str]:
    """Packed rows (two words per trace row) with the near bits, and where the hints came from
    (``tables``: :func:`static_hint_tables` of the trace's kernel, or None: the trace's own distances)."""
    if tables is not None:
        st, sc, dt, dc = tables
    else:
        st, sc = np.full((1, MAX_SRC), -1, np.int64), np.full(1, -1, np.int64)
        dt, dc = np.full((1, trace.dst.shape[1]), -1, np.int64), np.full(1, -1, np.int64)
    if dt.shape[1] != trace.dst.shape[1]:
        raise RfmodelError(
            f"malekeh: trace rows with {trace.dst.shape[1]} destination slots (the hint "
            f"tables have {dt.shape[1]})"
        )
    rows, mapped = _hint_rows(
        trace.warp_ptr.astype(np.int64),
        trace.src,
        trace.dst,
        np.asarray(trace.sidx, dtype=np.int64),
        st,
        sc,
        dt,
        dc,
        int(rthld),
    )
    if tables is None:
        return rows, "dynamic (trace reuse distances)"
    return rows, f"static compiler pass ({mapped} of {trace.n_instrs} rows)"


def malekeh_state(sm, p: MalekehParams, options, rows_packed: np.ndarray, n_warps: int):
    """The int64/float64 state of a Malekeh run (layout at the top of the module) for the typed
    parameters ``p``."""
    E, sthld, adaptive, interval, seed = p.ct_entries, p.sthld, p.adaptive, p.interval_cycles, p.seed
    G, per, sub = groups_of(sm)
    W = max(int(sm.warps_per_sm), n_warps, 1)
    off_ct = HEADER
    off_ent = off_ct + G * per * CT_F
    off_wct = off_ent + G * per * E * E_F
    off_grp = off_wct + W
    off_row = off_grp + G * G_F
    ints = base.header_state(sm, options, off_row + len(rows_packed))
    ints[I_G], ints[I_NCT], ints[I_E] = G, per, E
    ints[I_S], ints[I_SUB] = sm.schedulers_per_sm, int(sub)
    ints[I_STHLD], ints[I_ADAPT], ints[I_INTERVAL], ints[I_NEXT_B] = sthld, adaptive, interval, interval
    ints[I_FSM] = 1
    ints[I_RNG] = seed % 2147483648
    ints[I_W] = W
    ints[I_OFF_CT], ints[I_OFF_ENT], ints[I_OFF_WCT], ints[I_OFF_GRP], ints[I_OFF_ROW] = (
        off_ct,
        off_ent,
        off_wct,
        off_grp,
        off_row,
    )
    ints[I_D1], ints[I_D2], ints[I_SMAX] = FSM["delta_big"], FSM["delta_small"], FSM["sthld_max"]
    ints[K_STHLD_LAST] = sthld
    ct = ints[off_ct:off_ent].reshape(-1, CT_F)
    ct[:, CT_OWNER] = -1
    ct[:, CT_WCYC] = -1
    ent = ints[off_ent:off_wct].reshape(-1, E_F)
    ent[:, E_TAG] = -1
    ints[off_wct:off_grp] = -1
    grp = ints[off_grp:off_row].reshape(-1, G_F)
    grp[:, G_WAIT] = 0
    grp[:, G_LASTSTALL] = -1
    grp[:, G_MEMO_CYC] = -1
    ints[off_row:] = rows_packed
    floats = np.array([0.0, FSM["large_change"]], np.float64)
    rcyc = mainrf.sim_bank_cycles(sm, p)["bank_read_cycles"]
    ints[I_MISS_HOLD] = int(miss_hold_cycles(sm, rcyc))
    return ints, floats


# ----------------------------------------------------------------------------------- the design
#: RTHLD values and cache-table sizes of the collector-cache table ``ct_hits`` (Malekeh)
CT_RTHLD = np.array([0, 2, 4, 8, 16, 32, 64], dtype=np.int64)
CT_ENTRIES = np.array([1, 2, 4, 8, 16, 32], dtype=np.int64)
#: loss rates per stalled cycle of the collector-cache table ``ct_hits``
CT_LOSS = np.array([0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0])
#: instructions of whole warps, in trace order, over which ``ct_hits`` is taken (bounds its cost)
CT_MAX_INSTRS = 20_000


@njit(cache=True, parallel=True)
def _ct_table(warp_ptr, op, dst, src, sd, dd, lat, rthlds, sizes, losses):
    """Read hits ``[rthld, entries, loss]`` of :func:`_ct_pass` (sums; the passes run in parallel)."""
    nr = rthlds.shape[0]
    ns = sizes.shape[0]
    out = np.zeros((nr, ns, losses.shape[0]), dtype=np.float64)
    for x in prange(nr * ns):
        out[x // ns, x % ns] = _ct_pass(
            warp_ptr, op, dst, src, sd, dd, lat, rthlds[x // ns], sizes[x % ns], losses
        )
    return out


@njit(cache=True, inline="always")
def _issue_time(t, ready, src, i):
    """When a warp issuing alone issues instruction ``i`` after issuing one at ``t``: the next cycle, or
    when the last of its sources is written back (``ready``), whichever is later."""
    t += 1.0
    for j in range(src.shape[1]):
        r = src[i, j]
        if r != NONE and ready[r] > t:
            t = ready[r]
    return t


@njit(cache=True)
def _ct_pass(warp_ptr, op, dst, src, sd, dd, lat, rthld, entries, losses):
    """Source reads that hit one warp-private collector cache table of ``entries`` entries, every warp in
    program order (the module docstring's ``ct_hits``; a hint is near when ``1 <= distance <= rthld``),
    each hit weighted ``exp(-losses[k] G)`` for every ``k``.

    A source is looked up when its instruction issues, a result when it is written back: the warp's
    instructions issue as they would alone (one a cycle, each when its sources' producers have written
    back, ``lat[class]`` cycles after they issued), and a result enters the table once the warp's clock
    passes its write-back, so the reads issued in between see the table without it.  ``G``: the warp's
    stalled cycles (beyond one a cycle) since the entry was filled or written; a result that lands at the
    end of a stall does not count that stall.  Result slots past the fourth are not cached (the
    simulator's CCU write path takes four)."""
    nk = losses.shape[0]
    tag = np.full(entries, -1, dtype=np.int64)
    near = np.zeros(entries, dtype=np.bool_)
    stamp = np.zeros(entries, dtype=np.int64)
    born = np.zeros(entries, dtype=np.float64)  # the warp's stalled cycles when the entry was filled
    locked = np.full(entries, -1, dtype=np.int64)  # row that read the entry (a victim must not be one)
    where = np.full(256, -1, dtype=np.int64)
    ready = np.zeros(256, dtype=np.float64)
    cap = 1024
    q_t = np.zeros(cap, dtype=np.float64)  # results on their way: write-back time, register, near
    q_r = np.zeros(cap, dtype=np.int64)
    q_n = np.zeros(cap, dtype=np.bool_)
    rng = np.ones(1, dtype=np.int64)
    hits = np.zeros(nk, dtype=np.float64)
    for w in range(warp_ptr.shape[0] - 1):
        for k in range(entries):
            if tag[k] >= 0:
                where[tag[k]] = -1
            tag[k] = -1
            locked[k] = -1
        ready[:] = 0.0
        nq = 0
        t_min = 1e300  # the queue's earliest write-back
        clock = 0
        t = -1.0
        stalled = 0.0
        for i in range(warp_ptr[w], warp_ptr[w + 1]):
            t_prev = t
            t = _issue_time(t, ready, src, i)
            stalled += t - t_prev - 1.0
            # results written back by now, in write-back order (a full queue lands its earliest)
            while nq > 0 and (t_min <= t or nq >= cap - 8):
                m = 0
                for k in range(1, nq):
                    if q_t[k] < q_t[m]:
                        m = k
                clock += 1
                e = _ct_result(tag, near, stamp, locked, where, q_r[m], q_n[m], clock, rng)
                if e >= 0:
                    born[e] = stalled
                nq -= 1
                q_t[m], q_r[m], q_n[m] = q_t[nq], q_r[nq], q_n[nq]
                t_min = 1e300
                for k in range(nq):
                    if q_t[k] < t_min:
                        t_min = q_t[k]
            for j in range(src.shape[1]):
                r = src[i, j]
                if r == NONE:
                    continue
                clock += 1
                e = where[r]
                if e >= 0:
                    g = stalled - born[e]
                    for k in range(nk):
                        hits[k] += np.exp(-losses[k] * g)
                else:
                    e = _ct_victim(tag, near, stamp, locked, i, rng)
                    if e < 0:
                        continue
                    if tag[e] >= 0:
                        where[tag[e]] = -1
                    tag[e] = r
                    where[r] = e
                    born[e] = stalled
                near[e] = sd[i, j] >= 1 and sd[i, j] <= rthld
                locked[e] = i
                stamp[e] = clock
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r == NONE:
                    continue
                ready[r] = t + lat[op[i]]
                if j >= 4:
                    continue
                q_t[nq] = t + lat[op[i]]
                q_r[nq] = r
                q_n[nq] = dd[i, j] >= 1 and dd[i, j] <= rthld
                nq += 1
                if q_t[nq - 1] < t_min:
                    t_min = q_t[nq - 1]
    return hits


@njit(cache=True)
def _ct_takings(warp_ptr, op, dst, src, lat, losses):
    """Expected takings of a warp's collector cache table over its instructions, per loss rate: every warp
    issues in program order as alone (one instruction a cycle, each when its sources' producers have
    written back, ``lat[class]`` cycles after they issued, as :func:`_ct_pass` times them), and a stall of
    ``g`` cycles before an instruction takes the table from it with chance ``1 - exp(-losses[k] g)`` (the
    rate at which :func:`_ct_pass` weighs its hits, per stall instead of over a mean stall)."""
    nk = losses.shape[0]
    out = np.zeros(nk, dtype=np.float64)
    ready = np.zeros(256, dtype=np.float64)
    for w in range(warp_ptr.shape[0] - 1):
        ready[:] = 0.0
        t = -1.0
        for i in range(warp_ptr[w], warp_ptr[w + 1]):
            t_prev = t
            t = _issue_time(t, ready, src, i)
            g = t - t_prev - 1.0
            if g > 0.0:
                for k in range(nk):
                    out[k] += 1.0 - np.exp(-losses[k] * g)
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r != NONE:
                    ready[r] = t + lat[op[i]]
    return out


@njit(cache=True, inline="always")
def _ct_result(tag, near, stamp, locked, where, r, is_near, clock, rng):
    """A result written back into the table: a near one is cached (its entry returned), a far one
    invalidates the register's entry (the cached old value is stale; -1 returned)."""
    e = where[r]
    if not is_near:
        if e >= 0:
            tag[e] = -1
            where[r] = -1
        return -1
    if e < 0:
        e = _ct_victim(tag, near, stamp, locked, -2, rng)
        if tag[e] >= 0:
            where[tag[e]] = -1
        tag[e] = r
        where[r] = e
    near[e] = True
    stamp[e] = clock
    return e


@njit(cache=True, inline="always")
def _ct_victim(tag, near, stamp, locked, row, rng):
    """An invalid entry, else one of the far entries not read by ``row`` at random (``rng[0]``: the
    state of a mod-2**31 linear congruential generator), else the least recently used entry not read by
    ``row``; -1 when every entry is."""
    n_far = 0
    any_ = -1
    for k in range(tag.shape[0]):
        if tag[k] < 0:
            return k
        if locked[k] == row:
            continue
        if not near[k]:
            n_far += 1
        if any_ < 0 or stamp[k] < stamp[any_]:
            any_ = k
    if n_far == 0:
        return any_
    rng[0] = (1103515245 * rng[0] + 12345) % 2147483648
    pick = rng[0] % n_far
    for k in range(tag.shape[0]):
        if locked[k] == row or near[k]:
            continue
        if pick == 0:
            return k
        pick -= 1
    return any_


def ct_tables(trace, rank=None, inputs=None, *, latencies) -> dict:
    """The ``ct`` profile group of ``trace`` (:data:`CT_TABLES`; ``rank`` and ``inputs`` unused), over the
    warps in trace order up to ``CT_MAX_INSTRS`` instructions (each warp's table is its own), with the
    profile's result ``latencies``:

    ``ct_hits[r, e, k]``: read hits of a warp-private collector cache table (Malekeh) of
    ``CT_ENTRIES[e]`` entries whose near/far hints come from the trace's own reuse distances at
    ``RTHLD = CT_RTHLD[r]`` (:func:`rfmodel.compiler.reuse_hint.dynamic_distances`): every source
    read allocates at issue, a near result is written in at write-back, a far one invalidates the
    register's entry; victims are an invalid entry, else a far entry not read by the same instruction
    at random (a seeded generator), else the least recently used such entry (:func:`_ct_pass`).  A hit
    counts ``exp(-CT_LOSS[k] G)``, ``G`` the cycles the warp stalled since the entry was filled or
    written: the chance that the table was not taken from the warp meanwhile when each stalled cycle
    loses it at rate ``CT_LOSS[k]`` (``k = 0``: the warp keeps its table).

    ``ct_takings[k]``: the expected takings of a warp's table per instruction at that rate, each stall of
    ``g`` cycles taking it with chance ``1 - exp(-CT_LOSS[k] g)`` (:func:`_ct_takings`).  Both over the
    trace's first warps up to ``CT_MAX_INSTRS`` instructions.
    """
    wp_ct = leading_warps(trace.warp_ptr.astype(np.int64), CT_MAX_INSTRS)
    rows = slice(0, int(wp_ct[-1]))
    sd, dd = dynamic_distances(wp_ct, trace.src[rows], trace.dst[rows])
    hits = _ct_table(
        wp_ct,
        trace.op[rows],
        trace.dst[rows],
        trace.src[rows],
        sd,
        dd,
        np.asarray(latencies, dtype=np.float64),
        CT_RTHLD,
        CT_ENTRIES,
        CT_LOSS,
    )
    lat = np.asarray(latencies, dtype=np.float64)
    takings = _ct_takings(wp_ct, trace.op[rows], trace.dst[rows], trace.src[rows], lat, CT_LOSS)
    return {
        "ct_hits": hits / max(float((trace.src[rows] != NONE).sum()), 1.0),
        "ct_takings": takings / max(float(wp_ct[-1]), 1.0),
    }


#: Malekeh's collector-cache-table hits and takings, built on first use with the profile (the result
#: latencies decide when a result enters the table and how long a warp stalls)
CT_TABLES = register_table_group(
    TableGroup("ct", ("ct_hits", "ct_takings"), ct_tables, context=("latencies",))
)


def ct_takings(profile, loss) -> np.ndarray:
    """Takings of a warp's collector cache table per instruction at the loss rate ``loss`` per stalled
    cycle (``profile``'s ``ct_takings``, linear in ``log(1 + loss / 0.001)`` between tabulated values,
    clamped at the ends; :func:`_ct_takings`).  Vectorized."""
    t = np.asarray(profile.need("ct").ct_takings, dtype=np.float64)
    x = np.log1p(np.maximum(np.asarray(loss, dtype=np.float64), 0.0) / 1e-3)
    i, f = _grid_pos(np.log1p(CT_LOSS / 1e-3), x)
    return t[i] * (1.0 - f) + t[i + 1] * f


def ct_hit_rate(profile, rthld, entries, loss=0.0) -> np.ndarray:
    """Read hit rate of a warp-private collector cache table of ``entries`` entries with near/far hints
    at ``rthld`` that the warp loses at rate ``loss`` per stalled cycle (``profile``'s ``ct_hits``; linear in
    RTHLD, in ``log2`` of the entries and in ``log(1 + loss / 0.001)`` between tabulated values, clamped at
    the ends).  Vectorized."""
    t = np.asarray(profile.need("ct").ct_hits, dtype=np.float64)
    xs = (CT_RTHLD.astype(np.float64), np.log2(CT_ENTRIES.astype(np.float64)), np.log1p(CT_LOSS / 1e-3))
    vals = np.broadcast_arrays(
        np.asarray(rthld, dtype=np.float64),
        np.log2(np.maximum(np.asarray(entries, dtype=np.float64), 1.0)),
        np.log1p(np.maximum(np.asarray(loss, dtype=np.float64), 0.0) / 1e-3),
    )
    idx, frac = zip(*(_grid_pos(x, v) for x, v in zip(xs, vals, strict=True)), strict=True)
    out = np.zeros(vals[0].shape)
    for corner in range(8):  # trilinear
        w = np.ones(vals[0].shape)
        pos = []
        for d in range(3):
            up = (corner >> d) & 1
            w = w * (frac[d] if up else 1.0 - frac[d])
            pos.append(idx[d] + up)
        out = out + w * t[pos[0], pos[1], pos[2]]
    return out


@base.register
class Malekeh(mainrf.SlowBanks, base.Design):
    name = "malekeh"
    operand_slots = False  # a register named twice by one instruction is read once
    description = "Malekeh: caching collector units with compiler near/far reuse hints and adaptive STHLD"
    Params = MalekehParams
    stall_reasons = STALL_REASONS
    metrics = (
        "rf_cache_hit_rate",
        "rf_reads_saved",
        "rf_bank_reads",
        "ccu_dropped_writes",
        "ccu_flushes",
        "sthld_mean",
        "sthld_stall_cycles",
    ) + mainrf.TIMING_METRICS
    #: free coefficients of the analytic model (default, lower, upper): the interval model's and Malekeh's
    calibration_params = {**INTERVAL_COEFFICIENTS, **MALEKEH_CALIBRATION}
    #: the cycles warps wait at STHLD and the cache tables' flushes, as the simulator counts them, size
    #: ``ccu_loss`` in the fit: fitted on IPC alone over the 26-workload sweep it went from 0.04 to 0.14 and
    #: the held-out STHLD stalls from 18 % to 80 % off (calib/report.json at 216083c)
    fit_metrics = ("sthld_stall_cycles", "ccu_flushes")
    supports_simulate = True
    needs_trace = True
    size_parameters = {"ct_entries": ("ccu",)}

    compile_params = ("static_hints",)

    def __init__(self, kernel=None):
        #: the static kernel the traces were expanded from (optional configuration: its compiler hints are
        #: used when the trace names no kernel that can be found)
        self.kernel = kernel

    def compile(self, kernel, params, sm):
        """The compiler pass: static reuse distances of every operand (:func:`static_hint_tables`); None
        with ``static_hints = 0`` (the trace's own distances are used)."""
        return static_hint_tables(kernel) if params.static_hints else None

    def sim_setup(self, sm, p, options, trace=None, program=None):
        """Cache tables, hints packed per trace row; ``trace`` is required (the simulator passes it)."""
        if trace is None:
            raise RfmodelError(
                "design 'malekeh' needs the trace being simulated (its near/far hints are per trace row): "
                "pass it (sim_setup(sm, params, options, trace=trace)), or simulate through "
                "rfmodel.sim.simulate_trace"
            )
        if program is None and self.kernel is not None:
            program = self.program_for(trace, p, sm, self.kernel)
        rows, hint_source = hint_rows(trace, program, p.rthld)
        ints, floats = malekeh_state(sm, p, options, rows, trace.n_warps)
        return base.SimSetup(
            hooks=HOOKS,
            ints=ints,
            floats=floats,
            stall_reasons=STALL_REASONS,
            counters=dict(CNT),
            prefer=True,
            **self.bank_cycles(sm, p),
            info={"hint_source": hint_source},
        )

    def sim_metrics(self, sm, p, setup, counts):
        hits = float(counts["ccu_hits"])
        reads = float(counts["reads"])
        bank_r = float(counts["bank_read_acc"])
        bank_w = float(counts["bank_write_acc"])
        bank_reads = float(counts["reads_bank"])
        writes = float(counts["writes"])
        ccu_w = float(counts["ccu_fills"] + counts["ccu_writes"])
        iv = counts["sthld_intervals"]
        return {
            **mainrf.bank_timing_metrics(sm, p),
            "rf_cache_hit_rate": base.rate(hits, reads),
            "rf_reads_saved": hits,
            "rf_bank_reads": bank_reads,
            "ccu_dropped_writes": float(counts["ccu_dropped_writes"]),
            "ccu_flushes": float(counts["ccu_flushes"]),
            "ccu_evictions": float(counts["ccu_evictions"]),
            "ccu_rf_writes": float(counts["rf_writes_all"]),
            "sthld_mean": base.rate(counts["sthld_sum"], iv) if iv else float(counts["sthld_last"]),
            "sthld_stall_cycles": float(counts["sthld_stall_cycles"]),
            "hint_source": setup.info["hint_source"],
            "events": {
                "rf_bank": (bank_r, bank_w),
                # bank reads and every result (to the banks and port D) cross the crossbar
                "crossbar": (bank_reads + writes, 0.0),
                # every operand is delivered out of the CT; fills and cached results are written
                "ccu": (reads, ccu_w),
            },
        }

    def analytic(self, ctx):
        """Hit rate from the profile's collector-cache table and its effects (docs/designs.md, "Malekeh",
        analytic model).

        hit = near_hit x ct(RTHLD, ct_entries, loss): the read hit rate of a warp-private cache table
        (the profile's ``ct_hits``, :func:`ct_hit_rate`) whose hits survive the warp's stalls since the
        entry was filled at ``exp(-loss x stalled cycles)``, loss = ccu_loss x oversub / (1 + 0.1 STHLD):
        while the warp waits, warps without a CCU take its table, the more so the more warps share C CCUs
        per group (oversub = max(0, 1 - C / W)), the less so with STHLD waiting.  A profile without the
        table falls back to near(RTHLD) x near_hit.
        """
        c, sm, grid = ctx.coef, ctx.sm, ctx.grid
        rthld = ctx.param("rthld")
        sthld = ctx.param("sthld")
        adaptive = ctx.param("adaptive")
        interval = ctx.param("interval_cycles")
        G = sm.schedulers_per_sm if sm.sub_core else 1
        ccus = np.maximum(np.asarray(sm_param(sm, grid, "collector_units"), dtype=np.float64) / G, 1.0)
        warps = np.maximum(np.asarray(ctx.resident_warps, dtype=np.float64) / G, 1.0)
        oversub = np.maximum(0.0, 1.0 - ccus / warps)
        hist = profile_reuse_hist(ctx.profile)
        if hist is None:
            near = c["near_fraction_default"] + 0 * rthld
        else:
            near = near_fraction_from_hist(hist, rthld)
        timing, timing_m = mainrf.bank_effects(ctx)
        # the adaptive STHLD climbs with the run's intervals (sthld_climb): its level over a run at the
        # initial STHLD gives the run's length, and the terms are taken again at the level that length gives
        out, flushes, hold, pace = self._terms(ctx, rthld, sthld, oversub, ccus * G, near, timing)
        if np.any(adaptive > 0):
            # the climb stops where a rung's allocator wait costs more than the machine's large change
            top = climb_top(pace, sthld)
            level = sthld_climb(out["cycles"], sthld, interval, adaptive, top)[1]
            out, flushes, hold, _ = self._terms(ctx, rthld, level, oversub, ccus * G, near, timing)
            # the simulator's mean over the completed intervals, at the run's length at that level
            mean = sthld_climb(out["cycles"], sthld, interval, adaptive, top)[0]
        else:
            mean = sthld + 0 * oversub
        out.update(
            {
                "sthld_mean": mean + 0 * out["ipc"],
                "ccu_flushes": ctx.n * flushes + 0 * out["ipc"],
                "sthld_stall_cycles": ctx.n * hold + 0 * out["ipc"],
            }
        )
        out.update({k: v + 0 * out["ipc"] for k, v in timing_m.items()})
        return out

    def _terms(self, ctx, rthld, sthld, oversub, ccts, near, timing):
        """The outputs of :meth:`analytic` (IPC, events, hit rate) at the STHLD ``sthld`` (cycles), with
        the CTs taken from their warps and the allocator's counted STHLD cycles, both per instruction, and
        the SM's pace as a function of the STHLD level about this point (:func:`climb_top` reads it);
        ``ccts`` the SM's CTs."""
        c = ctx.coef
        entries = ctx.param("ct_entries")
        loss = c["ccu_loss"] * oversub / (1.0 + 0.1 * sthld)
        # a table taken while its warp stalls: per instruction, each stall of the warp alone takes it with
        # chance 1 - exp(-loss g) (the profile's ``ct_takings``; a long stall takes it once, where the
        # chance over the mean stall per instruction took it from a memory-bound warp at nearly every
        # instruction; without the table, that)
        if ctx.profile.has("ct"):
            flushes = ct_takings(ctx.profile, loss)
        else:
            stall = max(float(np.ravel(ctx.profile.chain)[0]) - 1.0, 0.0)
            flushes = 1.0 - np.exp(-loss * stall)
        if ctx.profile.has("ct"):
            hit0 = ct_hit_rate(ctx.profile, rthld, entries, loss)
        else:
            hit0 = near + 0 * loss
        hit = np.clip(hit0 * c["near_hit"], 0.0, 1.0)
        effects = Effects(read_share=1.0 - hit, operand_slots=self.operand_slots, **timing)
        m = ctx.model(effects)
        gain = ipc_gain(m, ctx, hit, c["ipc_gain_per_saved_read"])
        # a CT serves one instruction at a time: it is busy from the issue until CCU_HOLD cycles after the
        # instruction took its collector, h = ccu_hold_weight x collection time + CCU_HOLD cycles, and a
        # warp that owns one issues its next instruction only when it is free again; so the SM issues at
        # most min(warps, CTs) / h instructions a cycle (independent instructions of one warp no longer
        # overlap in the collectors, and the CTs are as few as the collectors: it binds where few CTs a
        # scheduler serve a high IPC, volta-v100's two a sub-core).  Over slow banks an instruction with
        # an operand read from a bank (a share 1 - hit^reads of them) holds its CT until the read arrives
        # (miss_hold_cycles)
        rd = np.maximum(ctx.profile.distinct_reads_per_instr, 1e-9)
        h = (
            np.asarray(c["ccu_hold_weight"]) * np.asarray(m["t_collect"])
            + CCU_HOLD
            + (1.0 - np.power(hit, rd))
            * miss_hold_cycles(ctx.sm, np.asarray(timing["bank_cycles"]) * BANK_CYCLES)
        )
        ipc_m = np.asarray(m["ipc"], dtype=np.float64)
        rate_hold = np.minimum(np.asarray(m["warps"], dtype=np.float64), ccts) / h
        q = np.asarray(c["softmin_q"])
        # a table of near values is taken only after the group's allocator has counted STHLD cycles, and
        # it counts only in the cycles in which no warp before the waiting one issues: per instruction,
        # hold = sthld_hold x takings x the issue slots left idle x STHLD counted cycles (the simulator's
        # counted cycles per taking over STHLD follow the idle share: 0.00 on black_scholes and
        # histogram256, 0.7-0.8 on saxpy and the synthetic memory-bound kernels, fermi-gtx480)
        issue = np.asarray(sm_param(ctx.sm, ctx.grid, "schedulers_per_sm"), dtype=np.float64) * np.asarray(
            sm_param(ctx.sm, ctx.grid, "issue_width"), dtype=np.float64
        )
        idle = np.clip(1.0 - softmin([ipc_m, rate_hold], q) / issue, 0.0, 1.0)
        hold = np.asarray(c["sthld_hold"]) * flushes * idle * sthld
        groups = ctx.sm.schedulers_per_sm if ctx.sm.sub_core else 1
        alloc = np.asarray(c["alloc_share"]) * groups
        pool = self._owners_pace(ctx, m, effects, ccts, rate_hold, q)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_level = np.asarray(hold, dtype=np.float64) / np.maximum(np.asarray(sthld, np.float64), 1e-9)

        def pace(level):
            """The SM's pace at STHLD ``level`` (the allocators' bound ``alloc_share x groups / hold``)."""
            with np.errstate(divide="ignore", invalid="ignore"):
                rate_alloc = alloc / (per_level * np.asarray(level, dtype=np.float64))
            return np.maximum(softmin([ipc_m, rate_hold, rate_alloc], q), np.minimum(pool, ipc_m))

        with np.errstate(divide="ignore", invalid="ignore"):
            held = np.where(ipc_m > 0, pace(sthld) / ipc_m, 1.0)
        factor = np.maximum(gain * held, 0.05)
        reads = ctx.reads
        saved = reads * hit
        near_writes = saved * c["write_share"]
        ccu_writes = near_writes + (reads - saved)  # cached results and the fills of misses
        out = served_outside(ctx, m, hit, factor, {"ccu": (reads, ccu_writes)}, drop=("collector",))
        out.update(
            {
                "rf_cache_hit_rate": hit + 0 * factor,
                "ccu_dropped_writes": near_writes * c["dropped_share"] + 0 * factor,
            }
        )
        # the allocator's counter runs only while a warp waits on it: at most alloc_share of the cycles
        ipc_out = np.asarray(out["ipc"], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            counted = np.where(ipc_out > 0, alloc / ipc_out, hold)
        return out, flushes, np.minimum(hold, counted), pace

    @staticmethod
    def _owners_pace(ctx, m, effects, ccts, rate_hold, q):
        """The pace of the warps that own a CT, alone (0 where every resident warp owns one).

        A warp without a CT takes a free one; one that holds near values only after its group's allocator
        has counted STHLD stalled cycles, one allocation at a time, and the counter runs only in the cycles
        in which a waiting warp reaches it (at most ``alloc_share`` of them): at ``hold`` counted cycles
        per instruction the allocators admit at most ``alloc_share x groups / hold`` instructions a cycle.
        Where that is short of the SM's pace, the warps that own a CT keep issuing, so the SM runs at
        least at the pace of those ``CTs`` warps alone: the interval model's steady state at that many
        warps, with the full run's waves and tail (the simulator's IPC falls to it as STHLD grows,
        docs/designs.md, "Malekeh")."""
        warps = np.asarray(m["warps"], dtype=np.float64)
        if not np.any(warps > ccts):  # every warp owns a CT: no allocations wait
            return 0.0 * warps
        owners = ctx.model(dataclasses.replace(effects, issuing_warps=ccts))
        steady = np.asarray(m["ipc_steady"], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            tails = np.where(steady > 0, np.asarray(m["ipc"], dtype=np.float64) / steady, 1.0)
        pool = softmin([np.asarray(owners["ipc_steady"], dtype=np.float64) * tails, rate_hold], q)
        return np.where(warps > ccts, pool, 0.0)

    def structures(self, sm, grid, tech):
        """The SM's banks and crossbar; the collectors become CCUs with ``ct_entries``-entry cache tables."""
        from rfmodel.energy.accounting import structure_over_grid
        from rfmodel.tech.structures import collector_cache

        shared = [s for s in mainrf.sm_structures(sm, grid, tech) if s.name != "collector"]
        node = tech.get("node_nm", 45)
        cell = tech.get("cell", "sram-hp")
        coll = sm_param(sm, grid, "collector_units")

        def ccu(entries, copies):
            cc = collector_cache(int(entries), sm.threads_per_warp * 32, node_nm=node, cell=cell)
            return cc.structure("ccu", copies=copies)

        values = {"entries": self.grid_param(sm, grid, "ct_entries"), "copies": coll}
        return [*shared, structure_over_grid("ccu", values, ccu)]


__all__ = ["DEFAULTS", "FSM", "Malekeh", "MalekehParams", "near_masks", "trace_distances"]
