"""The Latency-Tolerant Register File family: ``ltrf``, ``ltrf_plus``, ``ltrfconf``, ``strands``.

"Enabling High-Capacity, Latency-Tolerant, and Highly-Concurrent GPU Register Files via
Software/Hardware Cooperation" (the LTRF paper): a small register-file cache in front of a
large, slow main RF.  The compiler cuts the program into *register-intervals* (single-entry
regions whose working set fits ``regs_per_interval`` = N registers, default 16;
:mod:`rfmodel.compiler.reg_intervals`, Algorithms 1 and 2); a prefetch at each interval entry
brings the working set into the warp's private cache partition, so every register access
inside the interval hits the cache.  Our reading (also ``docs/designs.md``, "LTRF family"):

* **Cache.**  N banks, each holding one register per active warp; a warp's registers sit one
  per bank (16 KB = 16 banks x 8 warps x 128 B for 1 scheduler; we give each scheduler's
  ``active_warps`` a partition).  Cache reads and writes go through the simulator's banks and
  arbiter with the SM's bank mapping (the cache's port model is the baseline RF's).
* **Prefetch.**  At an interval entry the warp stalls (stall reason ``prefetch``) until the
  working-set registers not already cached have been read from the main RF.  Registers of
  the previous interval that are not in the new working set leave the partition; those
  written since they were fetched (and, for LTRF+, still live) are written back.  Main-RF
  bank ``(reg // main_rf_bank_regs + warp) mod main_rf_banks``; each access occupies its bank
  ``max(lat, xfer)`` cycles and arrives ``lat + xfer - 1`` cycles after it starts (``lat`` =
  ``main_rf_latency_x`` x :data:`~rfmodel.analytic.model.BANK_CYCLES`, ``xfer`` 1 or 4 with
  ``narrow_crossbar``), so registers in one bank are fetched one after the other and the
  prefetch of ``k`` registers in its fullest bank, on idle banks, takes
  ``(k - 1) max(lat, xfer) + lat + xfer - 1`` cycles.  Prefetch bank conflicts are counted
  as the paper defines them (fullest bank load - 1).  Reads are issued before the
  write-backs of the same prefetch.
* **Two-level scheduler** (``active_warps`` per scheduler, default 8).  A warp leaving the
  pool (its next instruction waits on a long-latency result or a barrier) writes back its
  partition -- LTRF: the whole working set, as the paper says; LTRF+: only live registers --
  and frees it; when it re-enters, the current interval's working set (LTRF+: its live
  registers) is fetched again before it may issue.  A result arriving while its warp is out
  of the pool, or for a register not in the partition, is written to the main RF.
* **LTRF+** (``ltrf_plus``; the paper's "LTRF+"): liveness bits.  A register becomes live
  when written and dead when an instruction reads it for the last time (its dead-operand
  bit).  Only live registers are written back and fetched; a dead working-set register gets
  a slot only.  Dead-operand bits come from the trace (the exact next-use), the upper bound
  of the paper's conservative compile-time bits.
* **LTRFconf**: the renumbering pass (:func:`rfmodel.compiler.renumber.renumber`, the
  Interval Conflict Graph coloured with ``main_rf_banks`` colours, the bank of register ``r``
  being ``(r // main_rf_bank_regs) mod main_rf_banks``, registers up to the kernel's register
  count) renames the registers; the design then runs the renumbered program: every operand
  and result of a trace row is looked up in a per-static-instruction map, so the cache state,
  the prefetch sets, write-backs and main-RF banks all use the new registers (the simulator's
  scoreboard keeps the trace's, which have the same dependences).  The pass minimises the
  static sum of the intervals' conflicts; the simulator counts them per executed prefetch.
* **strands**: prefetch regions are strands (:func:`rfmodel.compiler.reg_intervals.strands`,
  cut at consumers of long-latency results and at backward branches; the "LTRF (strand)"
  comparison point of the paper's section 7.6).

Intervals come from the static kernel when the trace names one we can load (built-in SASS
kernels, synthetic presets: ``trace.attrs['kernel_source']``) and its instructions match the
trace; otherwise they are formed on each warp's dynamic stream by the same rules (greedy:
an interval ends where the working set would exceed N -- the paper's "optimal" interval of
Table 4; strands also end at a long-latency consumer or a backward jump of the static
index).  Renumbering needs the static kernel; without one ``ltrfconf`` equals ``ltrf``
(``SimSetup.interval_source`` says which was used, ``SimSetup.renumbered`` whether the
renumbering applied).  Kernels built in memory are made known with :func:`register_kernel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit, prange

from rfmodel.analytic.model import main_rf_timing as analytic_timing
from rfmodel.analytic.model import two_level as two_level_flag
from rfmodel.analytic.profile import (
    TableGroup,
    _grid_pos,
    _memory_classes,
    leading_warps,
    register_table_group,
)
from rfmodel.analytic.throughput import INTERVAL_COEFFICIENTS, _inv_q
from rfmodel.compiler.liveness import trace_dead_masks
from rfmodel.designs import base, mainrf
from rfmodel.designs.mainrf import main_access, main_bank
from rfmodel.designs.regcache import REG_CACHE
from rfmodel.errors import RfmodelError
from rfmodel.ir import OpClass
from rfmodel.spec import param
from rfmodel.trace import NONE
from rfmodel.workload.static import static_kernel

LONG_LATENCY_OPS = (int(OpClass.LD_GLOBAL), int(OpClass.LD_LOCAL), int(OpClass.ATOMIC))


@dataclass(frozen=True)
class LtrfParams(mainrf.MainRFParams, kind="design.ltrf"):
    """The LTRF family's parameters: the main RF's and the register-interval limit."""

    regs_per_interval: int = param(
        16, bounds=(1, 256), doc="N: registers of an interval's working set (the RF cache's banks)"
    )


@dataclass(frozen=True)
class LtrfPlusParams(LtrfParams, kind="design.ltrf_plus"):
    """LTRF+'s parameters (LTRF's)."""


@dataclass(frozen=True)
class LtrfConfParams(LtrfParams, kind="design.ltrfconf"):
    """LTRFconf's parameters (LTRF's)."""


@dataclass(frozen=True)
class StrandsParams(LtrfParams, kind="design.strands"):
    """The strand variant's parameters (LTRF's)."""


#: the LTRF family's free coefficients (the interval model's and its own): (default, lower, upper)
LTRF_CALIBRATION = {
    **INTERVAL_COEFFICIENTS,
    "ws_fill": (1.0, 0.2, 2.0),  # registers fetched per prefetch / working set (or live-ins, LTRF+)
    "conflict_spread": (1.0, 0.0, 3.0),  # weight of the mapping's excess max bank load over an even spread
    "pf_scale": (1.0, 0.2, 4.0),  # scale on the exposed prefetch time (issue / wake-up overheads)
    "pf_queue": (1.0, 0.0, 4.0),  # a prefetch's wait behind the main-RF banks' backlog, per mean backlog
    "pf_overlap": (2.0, 1.0, 16.0),  # k-norm of a warp's prefetch pause and its memory waits (1: they add)
    "deact_weight": (1.0, 0.0, 3.0),  # warp deactivations per deactivation point of the profile
    "wb_fraction": (1.0, 0.0, 2.0),  # main-RF write-backs per dirty register leaving the partition
}

# ----------------------------------------------------------------------------- state layout
# ints: [0:6] bank header | parameters | counters | warps | banks | rows | interval CSR
(
    P_LAT,
    P_OCC,
    P_XEX,
    P_MB,
    P_PLUS,
    P_TWO,
    P_W,
    P_OFF_WARP,
    P_OFF_BANK,
    P_OFF_ROW,
    P_OFF_IVP,
    P_OFF_IVE,
    P_G,
    P_OFF_MAP,
    P_MAP_SRC,
) = range(6, 21)
COUNTERS = (
    "rfc_read_hits",
    "rfc_read_misses",
    "rfc_writes",
    "main_rf_reads",
    "main_rf_writes",
    "prefetches",
    "prefetch_cycles",
    "prefetch_regs",
    "prefetch_bank_conflicts",
    "prefetches_with_conflict",
    "warp_activations",
    "warp_deactivations",
    "dynamic_intervals",
    "refetches",
    "static_intervals",
    "static_interval_instrs",
    "static_prefetch_conflicts",
)
#: write occupancy of one main-RF bank access (a write-back holds its bank this long)
P_WOCC = 21
P_C0 = 22
(
    C_HIT,
    C_MISS,
    C_CW,
    C_MR,
    C_MW,
    C_PF,
    C_PFCYC,
    C_PFREG,
    C_PFCONF,
    C_PFCONF1,
    C_ACT,
    C_DEACT,
    C_DYN,
    C_REFETCH,
    C_SIV,
    C_SIVI,
    C_SCONF,
) = range(P_C0, P_C0 + len(COUNTERS))
#: per-warp block
WB = 18
W_IV, W_PFROW, W_READY, W_IN, W_CACHED, W_DIRTY, W_LIVE, W_LAST, W_FENCE = 0, 1, 2, 3, 4, 8, 12, 16, 17
#: an interval entry word: reg | bank << 8 | live-in << 20
E_BANK_SHIFT, E_LIVE_SHIFT = 8, 20
#: a row word: dead-operand bits (0..15) | prefetched interval + 1 (16..39) | static instruction + 1 (40..)
ROW_IV_SHIFT, ROW_IV_MASK, ROW_SIDX_SHIFT = 16, (1 << 24) - 1, 40


@njit(cache=True)
def _reg_of(ints, row, slot, reg):
    """The register the design works with: LTRFconf's renumbered one (slot: source k, or
    ``P_MAP_SRC + k`` for destination k), else the trace's."""
    om = ints[P_OFF_MAP]
    if om == 0 or reg >= 255:
        return reg
    s = (ints[ints[P_OFF_ROW] + row] >> ROW_SIDX_SHIFT) - 1
    if s < 0:
        return reg
    return ints[om + s * (ints[P_MAP_SRC] + 4) + slot]


@njit(cache=True)
def _bit(ints, at, reg):
    return (ints[at + (reg >> 6)] >> (reg & 63)) & 1


@njit(cache=True)
def _set(ints, at, reg):
    ints[at + (reg >> 6)] |= np.int64(1) << (reg & 63)


@njit(cache=True)
def _clr(ints, at, reg):
    ints[at + (reg >> 6)] &= ~(np.int64(1) << (reg & 63))


@njit(cache=True)
def _fetch(ints, w, iv, cycle, refetch):
    """Prefetch interval ``iv``'s working set for warp ``w``; returns the cycle it is complete.

    ``refetch``: the warp re-enters the pool in the middle of ``iv`` (its partition is empty).
    """
    wb = ints[P_OFF_WARP] + w * WB
    ob = ints[P_OFF_BANK]
    mb = ints[P_MB]
    plus = ints[P_PLUS]
    occ = ints[P_OCC]
    p0 = ints[ints[P_OFF_IVP] + iv]
    p1 = ints[ints[P_OFF_IVP] + iv + 1]
    oe = ints[P_OFF_IVE]
    # write back the registers of the old partition that leave it
    new = np.zeros(4, dtype=np.int64)
    for j in range(p0, p1):
        r = ints[oe + j] & 255
        new[r >> 6] |= np.int64(1) << (r & 63)
    load = np.zeros(mb, dtype=np.int64)
    done = cycle
    nfetch = 0
    for j in range(p0, p1):
        x = ints[oe + j]
        r = x & 255
        if refetch == 0:
            if _bit(ints, wb + W_CACHED, r):
                continue  # still valid from the previous interval
            if plus != 0:  # liveness at the entry (compile-time live-in)
                if (x >> E_LIVE_SHIFT) & 1:
                    _set(ints, wb + W_LIVE, r)
                else:
                    _clr(ints, wb + W_LIVE, r)
        _clr(ints, wb + W_DIRTY, r)
        if plus != 0 and _bit(ints, wb + W_LIVE, r) == 0:
            continue  # dead: a slot, no data
        b = (((x >> E_BANK_SHIFT) & 4095) + w) % mb
        load[b] += 1
        s = main_access(ints, ob, b, cycle, occ)
        t = s + ints[P_LAT] + ints[P_XEX]
        if t > done:
            done = t
        nfetch += 1
    # registers of the old partition that are not in the new working set
    if refetch == 0:
        for q in range(4):
            old = ints[wb + W_CACHED + q] & ~new[q]
            while old != 0:
                low = old & -old
                bitpos = 0
                y = low
                while y > 1:
                    y >>= 1
                    bitpos += 1
                old ^= low
                r = q * 64 + bitpos
                dirty = _bit(ints, wb + W_DIRTY, r)
                if dirty != 0 and (plus == 0 or _bit(ints, wb + W_LIVE, r) != 0):
                    main_access(ints, ob, main_bank(r, w, ints[P_G], mb), cycle, ints[P_WOCC])
                    ints[C_MW] += 1
    for q in range(4):
        ints[wb + W_CACHED + q] = new[q]
        ints[wb + W_DIRTY + q] &= new[q]
    mx = 0
    for b in range(mb):
        if load[b] > mx:
            mx = load[b]
    if nfetch > 0:
        ints[C_PF] += 1
        ints[C_PFREG] += nfetch
        ints[C_MR] += nfetch
        ints[C_PFCYC] += done - cycle
        if mx > 1:
            ints[C_PFCONF] += mx - 1
            ints[C_PFCONF1] += 1
    return done


@njit(cache=True)
def _writeback_all(ints, w, cycle):
    """The warp leaves the pool: LTRF writes back its working set, LTRF+ its live registers."""
    wb = ints[P_OFF_WARP] + w * WB
    mb = ints[P_MB]
    iv = ints[wb + W_IV]
    if iv >= 0:
        p0 = ints[ints[P_OFF_IVP] + iv]
        p1 = ints[ints[P_OFF_IVP] + iv + 1]
        oe = ints[P_OFF_IVE]
        for j in range(p0, p1):
            x = ints[oe + j]
            r = x & 255
            if _bit(ints, wb + W_CACHED, r) == 0:
                continue
            if ints[P_PLUS] != 0 and _bit(ints, wb + W_LIVE, r) == 0:
                continue
            b = (((x >> E_BANK_SHIFT) & 4095) + w) % mb
            main_access(ints, ints[P_OFF_BANK], b, cycle, ints[P_WOCC])
            ints[C_MW] += 1
    for q in range(4):
        ints[wb + W_CACHED + q] = 0
        ints[wb + W_DIRTY + q] = 0


@njit(cache=True)
def ltrf_operand(ints, floats, warp, row, k, reg, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    word = ints[ints[P_OFF_ROW] + row]
    if reg >= 255:  # RZ (GPGPU-Sim mode): read like a cached register
        return base.standard_bank(ints, warp, reg)
    reg = _reg_of(ints, row, k, reg)
    if (word >> k) & 1:  # dead-operand bit: the register dies with this read
        _clr(ints, wb + W_LIVE, reg)
    if _bit(ints, wb + W_CACHED, reg) or row <= ints[wb + W_FENCE]:
        # an instruction issued before its partition was replaced (it waited for a collector)
        # reads before the write-back: the hardware lets pending operand reads finish first
        ints[C_HIT] += 1
        return base.standard_bank(ints, warp, reg)
    # not in the partition (never for a register of the interval): read from the main RF
    ints[C_MISS] += 1
    ints[C_MR] += 1
    b = main_bank(reg, warp, ints[P_G], ints[P_MB])
    s = main_access(ints, ints[P_OFF_BANK], b, cycle, ints[P_OCC])
    return -(1 + s - cycle + ints[P_LAT] - 1 + ints[P_XEX])


@njit(cache=True)
def ltrf_write(ints, floats, warp, row, k, reg, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    reg = _reg_of(ints, row, ints[P_MAP_SRC] + k, reg)
    if reg < 256:
        _set(ints, wb + W_LIVE, reg)
    if ints[wb + W_IN] != 0 and reg < 256 and _bit(ints, wb + W_CACHED, reg):
        _set(ints, wb + W_DIRTY, reg)
        ints[C_CW] += 1
        return base.standard_bank(ints, warp, reg)
    main_access(ints, ints[P_OFF_BANK], main_bank(reg, warp, ints[P_G], ints[P_MB]), cycle, ints[P_WOCC])
    ints[C_MW] += 1
    return -1


@njit(cache=True)
def ltrf_may_issue(ints, floats, warp, row, scheduler, n, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    iv = ((ints[ints[P_OFF_ROW] + row] >> ROW_IV_SHIFT) & ROW_IV_MASK) - 1
    if iv >= 0 and ints[wb + W_PFROW] != row:
        ints[wb + W_PFROW] = row
        ints[wb + W_FENCE] = row - 1
        ints[wb + W_IV] = iv
        ints[C_DYN] += 1
        ints[wb + W_READY] = _fetch(ints, warp, iv, cycle, 0)
    if cycle < ints[wb + W_READY]:
        return 1
    return 0


@njit(cache=True)
def ltrf_issued(ints, floats, warp, row, scheduler, record, cycle):
    ints[ints[P_OFF_WARP] + warp * WB + W_LAST] = row
    return 0


@njit(cache=True)
def ltrf_pool(ints, floats, warp, event, scheduler, d, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    if event == 1:
        ints[wb + W_IN] = 1
        ints[C_ACT] += 1
        if ints[wb + W_IV] >= 0:
            ints[C_REFETCH] += 1
            t = _fetch(ints, warp, ints[wb + W_IV], cycle, 1)
            if t > ints[wb + W_READY]:
                ints[wb + W_READY] = t
    else:
        _writeback_all(ints, warp, cycle)
        ints[wb + W_FENCE] = ints[wb + W_LAST]
        ints[wb + W_IN] = 0
        ints[C_DEACT] += 1
    return 0


@njit(cache=True)
def ltrf_activate(ints, floats, warp, cta, scheduler, d, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    for i in range(WB):
        ints[wb + i] = 0
    ints[wb + W_IV] = -1
    ints[wb + W_PFROW] = -1
    ints[wb + W_LAST] = -1
    ints[wb + W_FENCE] = -1
    for q in range(4):
        ints[wb + W_LIVE + q] = -1  # until known, every register counts as live
    if ints[P_TWO] == 0:
        ints[wb + W_IN] = 1
        ints[C_ACT] += 1
    return 0


@njit(cache=True)
def ltrf_deactivate(ints, floats, warp, cta, scheduler, d, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    ints[wb + W_IN] = 0
    for q in range(4):
        ints[wb + W_CACHED + q] = 0
        ints[wb + W_DIRTY + q] = 0
    return 0


@njit(cache=True)
def ltrf_upkeep(ints, floats, a, b, c, d, cycle):
    """Wake the loop when a prefetch completes; while none is pending, every stepped cycle.

    A prefetch starts inside ``may_issue``/``pool`` and ends at a cycle only this design knows;
    the upkeep schedule is the only way to ask the loop for that cycle, so with nothing pending
    upkeep returns ``cycle + 1`` (the upkeep that follows a new prefetch then reports it).
    """
    nxt = base.NEVER
    warps0 = ints[P_OFF_WARP]
    for w in range(ints[P_W]):
        t = ints[warps0 + w * WB + W_READY]
        if cycle < t < nxt:
            nxt = t
    if nxt == base.NEVER:
        return cycle + 1
    return nxt


# ----------------------------------------------------------------------------- per-row tables
@njit(cache=True)
def _dynamic_intervals(warp_ptr, src, dst, op, sidx, n, strand, long_ops):
    """Intervals formed on each warp's stream: (row -> instance id or -1, CSR ptr, CSR entries)."""
    rows = src.shape[0]
    start = np.full(rows, -1, dtype=np.int64)
    ptr = [0]
    ent = []
    seen = np.zeros(256, dtype=np.int64)  # instance id + 1 that last saw the register
    livein = np.zeros(256, dtype=np.uint8)
    pend = np.zeros(256, dtype=np.uint8)
    inst = 0
    regs = np.zeros(256, dtype=np.int64)
    for w in range(len(warp_ptr) - 1):
        cnt = 0
        nreg = 0
        for r in range(warp_ptr[w], warp_ptr[w + 1]):
            add = 0
            for k in range(src.shape[1]):
                x = src[r, k]
                if x != 255 and seen[x] != inst:
                    add += 1
            for k in range(dst.shape[1]):
                x = dst[r, k]
                if x != 255 and seen[x] != inst:
                    add += 1
            cut = r == warp_ptr[w] or (cnt > 0 and nreg + add > n)
            if strand and not cut and cnt > 0:
                if r > warp_ptr[w] and sidx[r] >= 0 and sidx[r] <= sidx[r - 1]:
                    cut = True
                for k in range(src.shape[1]):
                    x = src[r, k]
                    if x != 255 and pend[x] != 0:
                        cut = True
                for k in range(dst.shape[1]):
                    x = dst[r, k]
                    if x != 255 and pend[x] != 0:
                        cut = True
            if cut:
                if cnt > 0 or r > warp_ptr[w]:
                    for i in range(nreg):
                        x = regs[i]
                        ent.append(x | (x << 8) | (np.int64(livein[x]) << 20))
                    ptr.append(len(ent))
                inst += 1
                start[r] = inst - 1
                cnt = 0
                nreg = 0
                pend[:] = 0
            for k in range(src.shape[1]):
                x = src[r, k]
                if x != 255 and seen[x] != inst:
                    seen[x] = inst
                    livein[x] = 1
                    regs[nreg] = x
                    nreg += 1
            for k in range(dst.shape[1]):
                x = dst[r, k]
                if x != 255 and seen[x] != inst:
                    seen[x] = inst
                    livein[x] = 0
                    regs[nreg] = x
                    nreg += 1
            is_long = False
            for q in range(len(long_ops)):
                if op[r] == long_ops[q]:
                    is_long = True
            for k in range(dst.shape[1]):
                x = dst[r, k]
                if x != 255:
                    pend[x] = 1 if is_long else 0
            cnt += 1
        if cnt > 0:
            for i in range(nreg):
                x = regs[i]
                ent.append(x | (x << 8) | (np.int64(livein[x]) << 20))
            ptr.append(len(ent))
    # instance ids were counted from 1 in ``seen``; start[] holds id - 1 ... shift
    return start, np.array(ptr, dtype=np.int64), np.array(ent, dtype=np.int64)


#: working-set limits and bank counts of the register-interval tables (``iv_*``, :data:`INTERVALS`)
IV_N = np.array([4, 8, 12, 16, 24, 32, 48, 64], dtype=np.int64)
IV_BANKS = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256], dtype=np.int64)


@njit(cache=True, parallel=True)
def _interval_tables(warp_ptr, op, sidx, dst, src, ivn, banks, is_ll):
    """Greedy register-interval and strand statistics (module docstring)."""
    ns, nn, nb = 2, ivn.shape[0], banks.shape[0]
    cnt = np.zeros((ns, nn))
    ilen = np.zeros((ns, nn))
    ws = np.zeros((ns, nn))
    live = np.zeros((ns, nn))
    mload = np.zeros((ns, nn, nb))
    even = np.zeros((ns, nn, nb))
    fetch = np.zeros((ns, nn))
    lfetch = np.zeros((ns, nn))
    wbs = np.zeros((ns, nn))
    nz = np.zeros((ns, nn))
    lnz = np.zeros((ns, nn))
    for x in prange(ns * nn):  # the (strategy, limit) pairs are independent
        s = x // nn
        n_i = x % nn
        N = ivn[n_i]
        inset = np.zeros(256, dtype=np.bool_)
        written = np.zeros(256, dtype=np.bool_)
        pend = np.zeros(256, dtype=np.bool_)
        members = np.empty(256, dtype=np.int64)
        load = np.zeros(256, dtype=np.int64)
        readfirst = np.zeros(256, dtype=np.bool_)
        cached = np.zeros(256, dtype=np.bool_)  # the previous interval's set, still in the partition
        dirty = np.zeros(256, dtype=np.bool_)  # written since fetched (kept while a register stays)
        pmembers = np.empty(256, dtype=np.int64)
        for w in range(warp_ptr.shape[0] - 1):
            a, b = warp_ptr[w], warp_ptr[w + 1]
            if b <= a:
                continue
            inset[:] = False
            written[:] = False
            pend[:] = False
            readfirst[:] = False
            cached[:] = False
            dirty[:] = False
            pm = 0
            m = 0
            nlive = 0
            length = 0
            for i in range(a, b + 1):
                cut = i == b
                new = 0
                if not cut:
                    for j in range(src.shape[1]):
                        r = src[i, j]
                        if r != NONE and not inset[r]:
                            new += 1
                    for j in range(dst.shape[1]):
                        r = dst[i, j]
                        if r != NONE and not inset[r]:
                            new += 1
                    if length > 0 and m + new > N:
                        cut = True
                    if s == 1 and length > 0:
                        if i > a and sidx[i] <= sidx[i - 1]:
                            cut = True
                        for j in range(src.shape[1]):
                            r = src[i, j]
                            if r != NONE and pend[r]:
                                cut = True
                if cut and length > 0:
                    cnt[s, n_i] += 1
                    ilen[s, n_i] += length
                    ws[s, n_i] += m
                    live[s, n_i] += nlive
                    for bi in range(nb):
                        B = banks[bi]
                        mx = 0
                        for q in range(m):
                            load[members[q] % B] = 0
                        for q in range(m):
                            k = members[q] % B
                            load[k] += 1
                            if load[k] > mx:
                                mx = load[k]
                        mload[s, n_i, bi] += mx
                        even[s, n_i, bi] += (m + B - 1) // B
                    # the entry's fetch (registers not left cached by the previous interval) and the
                    # write-backs of the previous interval's dirty registers that leave the partition
                    got = 0
                    lgot = 0
                    for q in range(m):
                        r = members[q]
                        if not cached[r]:
                            got = 1
                            fetch[s, n_i] += 1
                            if readfirst[r]:
                                lgot = 1
                                lfetch[s, n_i] += 1
                    nz[s, n_i] += got
                    lnz[s, n_i] += lgot
                    for q in range(pm):
                        r = pmembers[q]
                        if not inset[r]:
                            if dirty[r]:
                                wbs[s, n_i] += 1
                            dirty[r] = False
                            cached[r] = False
                    for q in range(m):
                        r = members[q]
                        cached[r] = True
                        if written[r]:
                            dirty[r] = True
                        pmembers[q] = r
                    pm = m
                    for q in range(m):
                        inset[members[q]] = False
                        written[members[q]] = False
                        readfirst[members[q]] = False
                    pend[:] = False
                    m = 0
                    nlive = 0
                    length = 0
                if i == b:
                    break
                for j in range(src.shape[1]):
                    r = src[i, j]
                    if r != NONE and not inset[r]:
                        inset[r] = True
                        members[m] = r
                        m += 1
                        nlive += 1
                        readfirst[r] = True
                for j in range(dst.shape[1]):
                    r = dst[i, j]
                    if r != NONE:
                        if not inset[r]:
                            inset[r] = True
                            members[m] = r
                            m += 1
                        written[r] = True
                        pend[r] = is_ll[op[i]]
                length += 1
    for s in range(ns):
        for n_i in range(nn):
            c = max(cnt[s, n_i], 1.0)
            ilen[s, n_i] /= c
            ws[s, n_i] /= c
            live[s, n_i] /= c
            fetch[s, n_i] /= c
            lfetch[s, n_i] /= c
            wbs[s, n_i] /= c
            nz[s, n_i] /= c
            lnz[s, n_i] /= c
            for bi in range(nb):
                mload[s, n_i, bi] /= c
                even[s, n_i, bi] /= c
    return ilen, ws, live, mload, even, fetch, lfetch, wbs, nz, lnz


def static_starts(sidx: np.ndarray, warp_ptr: np.ndarray, ivs) -> np.ndarray:
    """Per trace row (static indices ``sidx``, warps ``warp_ptr``), the interval of ``ivs`` (the compiler
    pass's intervals or strands) whose prefetch starts there, else -1: a warp's first row, a row whose
    interval differs from the row before it, and (strands) a jump back to its strand's entry."""
    sidx = np.asarray(sidx, dtype=np.int64)
    iv_of = np.asarray(ivs.interval_of, dtype=np.int64)
    cur = iv_of[sidx]
    first = np.zeros(len(sidx), dtype=bool)
    heads = warp_ptr[:-1][np.diff(warp_ptr) > 0]
    first[heads[heads < len(sidx)]] = True
    prev_iv = np.concatenate(([-1], cur[:-1]))
    prev_s = np.concatenate(([-1], sidx[:-1]))
    start = first | (cur != prev_iv)
    if ivs.restart_on_back_edge:
        entry = np.array([iv.entry for iv in ivs.intervals], dtype=np.int64)
        start |= (sidx == entry[cur]) & (prev_s >= sidx)
    return np.where(start, cur, -1)


def entry_table(entries) -> tuple[np.ndarray, np.ndarray]:
    """The intervals' working sets ``entries`` (:func:`_compile`) as a CSR ``(ptr, ent)``, each entry
    ``reg | bank << 8 | live_in << 20``."""
    ptr = np.zeros(len(entries) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(e) for e in entries])
    ent = np.array([r | (b << 8) | (lv << 20) for e in entries for r, b, lv in e], dtype=np.int64)
    return ptr, ent


@njit(cache=True)
def _start_tables(warp_ptr, pf, ptr, ent, dst, banks):
    """The register-interval statistics of :func:`_interval_tables` (one strategy and limit) for intervals
    given as their starts: ``pf[r]`` the interval whose prefetch starts at row ``r`` (else -1; every warp's
    first row starts one), ``ptr``/``ent`` their working sets (:func:`entry_table`).  A prefetch reads the
    working set's registers the previous interval did not leave in the partition, and writes back those of
    the previous interval that leave it written since they were fetched, as the simulator's partition
    (``_fetch``).  Returns the interval count and the sums of the lengths, working sets, live-ins, largest
    bank loads and even-spread bounds (per ``banks``), fetches, live-in fetches, write-backs, and the
    prefetches that read any register (any live-in one)."""
    nb = banks.shape[0]
    mload = np.zeros(nb)
    even = np.zeros(nb)
    cnt = 0.0
    ilen = ws = live = fetch = lfetch = wbs = nz = lnz = 0.0
    cached = np.zeros(256, dtype=np.bool_)
    dirty = np.zeros(256, dtype=np.bool_)
    inset = np.zeros(256, dtype=np.bool_)
    load = np.zeros(256, dtype=np.int64)
    for w in range(warp_ptr.shape[0] - 1):
        cached[:] = False
        dirty[:] = False
        for i in range(warp_ptr[w], warp_ptr[w + 1]):
            iv = pf[i]
            if iv >= 0:
                p0, p1 = ptr[iv], ptr[iv + 1]
                m = p1 - p0
                cnt += 1.0
                ws += m
                inset[:] = False
                got = 0.0
                lgot = 0.0
                for j in range(p0, p1):
                    r = ent[j] & 255
                    inset[r] = True
                    lv = (ent[j] >> 20) & 1
                    live += lv
                    if not cached[r]:
                        fetch += 1.0
                        lfetch += lv
                        got = 1.0
                        if lv:
                            lgot = 1.0
                nz += got
                lnz += lgot
                for r in range(256):
                    if cached[r] and not inset[r]:
                        if dirty[r]:
                            wbs += 1.0
                        dirty[r] = False
                    cached[r] = inset[r]
                for bi in range(nb):
                    B = banks[bi]
                    mx = 0
                    for j in range(p0, p1):
                        load[(ent[j] & 255) % B] = 0
                    for j in range(p0, p1):
                        k = (ent[j] & 255) % B
                        load[k] += 1
                        if load[k] > mx:
                            mx = load[k]
                    mload[bi] += mx
                    even[bi] += (m + B - 1) // B
            ilen += 1.0
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r != NONE and cached[r]:
                    dirty[r] = True
    return cnt, ilen, ws, live, mload, even, fetch, lfetch, wbs, nz, lnz


def _static_interval_tables(kernel, trace, wp_t) -> tuple:
    """:func:`_interval_tables`' arrays for the compiler pass's intervals (``s = 0``) and strands (``s =
    1``) of the static ``kernel`` at each limit of :data:`IV_N`, over the sample warps ``wp_t`` of
    ``trace``: the intervals the simulator prefetches (:func:`row_tables`)."""
    nn, nb = len(IV_N), len(IV_BANKS)
    out = [np.zeros((2, nn)) for _ in range(3)] + [np.zeros((2, nn, nb)) for _ in range(2)]
    out += [np.zeros((2, nn)) for _ in range(5)]
    end = int(wp_t[-1])
    sidx = np.asarray(trace.sidx[:end], dtype=np.int64)
    dst = np.ascontiguousarray(trace.dst[:end])
    for s, kind in enumerate(("interval", "strand")):
        for i, n in enumerate(IV_N):
            ivs, entries, _, _ = _compile(kernel, int(n), kind, False, 1)
            pf = static_starts(sidx, wp_t, ivs)
            ptr, ent = entry_table(entries)
            c, *sums = _start_tables(wp_t, pf, ptr, ent, dst, IV_BANKS)
            c = max(c, 1.0)
            for arr, v in zip(out, sums, strict=True):
                arr[s, i] = np.asarray(v) / c
    return tuple(out)


def interval_tables(trace, rank=None, inputs=None) -> dict:
    """The ``intervals`` profile group of ``trace`` (:data:`INTERVALS`): over the leading whole warps up to
    the profile's per-warp sample (``rfmodel.analytic.profile.TABLE_MAX_INSTRS`` instructions), the
    register-interval tables of each warp's dynamic stream in trace order (``rank`` and ``inputs`` unused),
    for the intervals the simulator prefetches: the compiler pass's on the trace's static kernel when it
    has one (:func:`static_starts`; working sets over every path, live-ins at the entry), else formed on
    the dynamic stream by the same rules:

    * ``iv_len[s, n]``, ``iv_ws[s, n]``, ``iv_live[s, n]``, ``iv_maxload[s, n, b]``,
    ``iv_even[s, n, b]``: register-interval statistics for a working-set limit
    ``IV_N[n]`` registers (formed greedily on a dynamic stream: ``s = 0``: intervals
    end when the working set would exceed ``N``; ``s = 1``: strands, which also end at a
    backward jump and before the first consumer of a long-latency load): mean instructions per
    interval, mean working-set size, mean live-in registers (first access a read), and the mean
    largest bank load of the working set when registers are interleaved over ``IV_BANKS[b]``
    banks (``reg mod B``; the warp offset rotates banks and keeps the maximum) and its evenly
    spread lower bound ``ceil(ws / B)`` (what a perfect renumbering reaches);
    ``iv_fetch[s, n]``, ``iv_live_fetch[s, n]``, ``iv_wb[s, n]``: per interval, the registers of its
    working set that the previous interval did not leave in the partition (what its prefetch reads), those
    of them live-in (LTRF+), and the previous interval's registers written since they were fetched that
    leave the partition at its entry (write-backs; a register kept from one interval to the next stays
    dirty), the partition of the LTRF simulator; ``iv_nz[s, n]``, ``iv_live_nz[s, n]``: the share of the
    intervals whose prefetch reads any register (any live-in one): the simulator counts only those, and
    the others cost no time.
    """
    from rfmodel.analytic import profile as _profile  # its sample size read at call time

    wp_t = leading_warps(trace.warp_ptr.astype(np.int64), _profile.TABLE_MAX_INSTRS)
    kernel = static_kernel(trace)
    if kernel is not None:  # the compiler pass's intervals, as the simulator prefetches them
        iv = _static_interval_tables(kernel, trace, wp_t)
    else:
        sidx = trace.sidx.astype(np.int64)
        iv = _interval_tables(wp_t, trace.op, sidx, trace.dst, trace.src, IV_N, IV_BANKS, _memory_classes())
    return dict(zip(INTERVAL_FIELDS, iv, strict=True))


#: the fields of the ``intervals`` group, in the order :func:`_interval_tables` returns them
INTERVAL_FIELDS = (
    "iv_len",
    "iv_ws",
    "iv_live",
    "iv_maxload",
    "iv_even",
    "iv_fetch",
    "iv_live_fetch",
    "iv_wb",
    "iv_nz",
    "iv_live_nz",
)
#: the register-interval tables only the LTRF family reads, built on first use with the profile
INTERVALS = register_table_group(TableGroup("intervals", INTERVAL_FIELDS, interval_tables))


def renumbered_tables(trace, rank=None, inputs=None, cells=None) -> dict:
    """The ``renumbered`` profile group of ``trace``: ``iv_conf_maxload[n, b]``, the mean largest bank load
    of the compiler pass's register-interval working sets (``s = 0`` of ``iv_maxload``) after LTRFconf's
    renumbering for ``IV_BANKS[b]`` banks (:func:`_compile` with ``conf``), at each limit ``IV_N[n]``, over
    the intervals the simulator prefetches on the profile's sample warps (as :func:`interval_tables`).  The
    renumbering colours each limit's interval conflict graph for one bank count, so every cell is a pass of
    its own (0.1-3.4 CPU-s for all 72 of a built-in kernel, the kernel's own facts computed once for all,
    :func:`~rfmodel.compiler.renumber.kernel_facts`): a cell-wise group, of which a query builds the
    ``cells`` it reads (NaN elsewhere; ``None``: all).  Without a static kernel the simulator renumbers
    nothing (:func:`row_tables`): the cells are ``iv_maxload``'s."""
    from rfmodel.analytic import profile as _profile  # its sample size read at call time
    from rfmodel.compiler.renumber import kernel_facts

    shape = (len(IV_N), len(IV_BANKS))
    todo = np.ones(shape, dtype=bool) if cells is None else np.asarray(cells, dtype=bool)
    out = np.full(shape, np.nan)
    kernel = static_kernel(trace)
    if kernel is None:
        out[todo] = interval_tables(trace)["iv_maxload"][0][todo]
        return {"iv_conf_maxload": out}
    wp_t = leading_warps(trace.warp_ptr.astype(np.int64), _profile.TABLE_MAX_INSTRS)
    end = int(wp_t[-1])
    sidx = np.asarray(trace.sidx[:end], dtype=np.int64)
    dst = np.ascontiguousarray(trace.dst[:end])
    facts = kernel_facts(kernel) if todo.any() else None  # what every cell's pass reads of the kernel alone
    for i, j in zip(*np.nonzero(todo), strict=True):
        ivs, entries, _, _ = _compile(kernel, int(IV_N[i]), "interval", True, int(IV_BANKS[j]), facts=facts)
        ptr, ent = entry_table(entries)
        pf = static_starts(sidx, wp_t, ivs)
        c, _, _, _, mload, *_ = _start_tables(wp_t, pf, ptr, ent, dst, IV_BANKS[j : j + 1])
        out[i, j] = mload[0] / max(c, 1.0)
    return {"iv_conf_maxload": out}


#: LTRFconf's renumbered bank loads, cell by cell on first use with the profile (only LTRFconf reads them)
RENUMBERED = register_table_group(
    TableGroup("renumbered", ("iv_conf_maxload",), renumbered_tables, cells=(len(IV_N), len(IV_BANKS)))
)


def interval_stats(profile, n_regs, banks, strands=False) -> dict:
    """Register-interval statistics of ``profile`` at working-set limit ``n_regs`` over ``banks`` banks.

    Linear interpolation over ``IV_N`` and over ``log2`` of ``IV_BANKS`` (vectorized).
    Returns ``length``, ``ws``, ``live``, ``maxload``, ``even``, ``fetch``, ``live_fetch``, ``wb``, ``nz``
    and ``live_nz`` arrays.
    """
    t = profile.need("intervals")
    s = 1 if strands else 0
    lb = np.log2(np.maximum(np.asarray(banks, dtype=np.float64), 1.0))
    n, lb = np.broadcast_arrays(np.asarray(n_regs, dtype=np.float64), lb)
    i, fi = _grid_pos(IV_N.astype(np.float64), n)
    j, fj = _grid_pos(np.log2(IV_BANKS.astype(np.float64)), lb)

    def one(f):
        v = getattr(t, f)
        return v[s, i] * (1 - fi) + v[s, i + 1] * fi

    def two(f):
        v = getattr(t, f)
        return (
            v[s, i, j] * (1 - fi) * (1 - fj)
            + v[s, i + 1, j] * fi * (1 - fj)
            + v[s, i, j + 1] * (1 - fi) * fj
            + v[s, i + 1, j + 1] * fi * fj
        )

    return {
        "length": one("iv_len"),
        "ws": one("iv_ws"),
        "live": one("iv_live"),
        "maxload": two("iv_maxload"),
        "even": two("iv_even"),
        "fetch": one("iv_fetch"),
        "live_fetch": one("iv_live_fetch"),
        "wb": one("iv_wb"),
        "nz": one("iv_nz"),
        "live_nz": one("iv_live_nz"),
    }


def prefetch_max_load(profile, fetched, banks, n_regs, strands, conf, c):
    """Mean largest main-RF bank load of one prefetch of ``fetched`` registers.

    The profile's interval table gives, for working sets formed at limit ``n_regs``, the exact mean
    largest bank load under ``reg mod B`` (``maxload``; LTRFconf: after its renumbering for ``B`` banks,
    the ``renumbered`` table) and its even-spread bound ``ceil(ws / B)`` (``even``); a fetch of a part of
    the working set keeps the excess in proportion, a share ``conflict_spread`` of it (calibrated).
    """
    st = interval_stats(profile, n_regs, banks, strands)
    ws = np.maximum(st["ws"], 1e-9)
    frac = np.clip(fetched / ws, 0.0, 1.0)
    even = np.maximum(
        np.ceil(np.maximum(fetched, 1e-9) / np.maximum(banks, 1.0)), np.where(fetched > 0, 1.0, 0.0)
    )
    maxload = renumbered_maxload(profile, n_regs, banks) if conf else st["maxload"]
    excess = np.maximum(maxload - st["even"], 0.0) * frac
    return even + np.asarray(c["conflict_spread"]) * excess


def renumbered_maxload(profile, n_regs, banks) -> np.ndarray:
    """LTRFconf's mean largest bank load of a working set after renumbering (``iv_conf_maxload``) at limit
    ``n_regs`` over ``banks`` banks: bilinear over ``IV_N`` and ``log2`` of ``IV_BANKS``, as
    :func:`interval_stats`."""
    lb = np.log2(np.maximum(np.asarray(banks, dtype=np.float64), 1.0))
    n, lb = np.broadcast_arrays(np.asarray(n_regs, dtype=np.float64), lb)
    i, fi = _grid_pos(IV_N.astype(np.float64), n)
    j, fj = _grid_pos(np.log2(IV_BANKS.astype(np.float64)), lb)
    corners = [(i, j, (1 - fi) * (1 - fj)), (i + 1, j, fi * (1 - fj)), (i, j + 1, (1 - fi) * fj)]
    corners.append((i + 1, j + 1, fi * fj))
    mask = np.zeros((len(IV_N), len(IV_BANKS)), dtype=bool)
    for a, b, w in corners:  # only the cells the points read (a weight of 0 reads none)
        mask[a[w > 0], b[w > 0]] = True
    t = profile.need_cells(RENUMBERED.name, mask).iv_conf_maxload
    return sum(np.where(w > 0, t[a, b], 0.0) * w for a, b, w in corners)


def _compile(kernel, n: int, kind: str, conf: bool, n_banks: int, regs_per_bank: int = 1, facts=None):
    """The design's compiler pass on a static kernel: intervals (or strands), renumbering.

    Returns ``(intervals, entries, renumbered kernel or None, conflicts)`` where ``entries[i]`` lists
    ``(reg, bank, live_in)`` of interval ``i``'s working set: ``reg`` the register the design works with
    (LTRFconf: the renumbered one, when the renumbering was applied), ``bank`` its main-RF bank before the
    warp rotation, ``(reg // regs_per_bank) mod n_banks``, and ``conflicts`` the per-interval conflicts of
    the whole working sets (the compiler's objective).  The renumbering colours with the same bank function
    and may use every register up to the kernel's register count."""
    from rfmodel.compiler.reg_intervals import register_intervals, strands
    from rfmodel.compiler.renumber import bank_conflicts, prefetch_sets, renumber

    def bank(r):
        return (r // regs_per_bank) % n_banks

    ivs = strands(kernel, n) if kind == "strand" else register_intervals(kernel, n)
    new = None
    if conf:
        n_regs = max(kernel.max_reg() + 1, min(int(kernel.regs_per_thread or 0), 255))
        ren = renumber(kernel, ivs, n_banks=n_banks, bank=bank, n_regs=n_regs, facts=facts)
        if ren.applied:
            new = ren.kernel
    k = new if new is not None else kernel
    ws = prefetch_sets(k, ivs)
    live = prefetch_sets(k, ivs, live_only=True)
    entries = [[(r, bank(r), int(r in live[i])) for r in sorted(ws[i])] for i in range(len(ws))]
    conflicts = [bank_conflicts(s, n_banks, bank) for s in ws]
    return ivs, entries, new, conflicts


def _remap_table(trace, new):
    """Per static instruction: the renumbered register of each source slot, then of each destination slot."""
    ns, nd = trace.src.shape[1], trace.dst.shape[1]
    tab = np.full((len(new.instrs), ns + 4), 255, dtype=np.int64)
    if nd > 4:
        raise RfmodelError(f"ltrfconf: trace rows with {nd} destination slots (at most 4 supported)")
    for i, b in enumerate(new.instrs):  # the renumbered copy has the same instructions, renamed
        s = [x for x in b.src if x < 255]
        d = [x for x in b.dst if x < 255]
        tab[i, : min(len(s), ns)] = s[:ns]
        tab[i, ns : ns + min(len(d), 4)] = d[:4]
    return tab.ravel()


#: ``row_tables(program=...)`` left out: look the static kernel up
_FIND = object()


def row_tables(trace, n: int, kind: str, conf: bool, n_banks: int, regs_per_bank: int = 1, program=_FIND):
    """Per-row prefetch words, the interval CSR and (LTRFconf) the register map; cached per trace.

    ``program``: the compiler pass's output on the trace's static kernel (:func:`_compile`; None: form the
    intervals on the dynamic trace; left out: compile the kernel the trace names, if it can be found).
    Returns ``(words, ptr, entries, remap, info)``; ``remap`` is None unless the renumbering applies.
    """
    if program is _FIND:
        kernel = static_kernel(trace)
        program = None if kernel is None else _compile(kernel, n, kind, conf, n_banks, regs_per_bank)
    key = (id(trace), n, kind, conf, n_banks, regs_per_bank, id(program))
    hit = _TABLES.get(key)
    if hit is not None and hit[0] is trace and hit[1] is program:
        return hit[2]
    dead = trace_dead_masks(np.asarray(trace.warp_ptr, np.int64), trace.src, trace.dst)[0]
    remap = None
    sidx = np.asarray(trace.sidx, dtype=np.int64)
    if program is not None:
        ivs, entries, new, conflicts = program
        pf = static_starts(sidx, np.asarray(trace.warp_ptr, np.int64), ivs)
        ptr, ent = entry_table(entries)
        lens = ivs.lengths()
        if new is not None:
            remap = _remap_table(trace, new)
        info = {
            "source": "static",
            "static_intervals": int(len(lens)),
            "static_instrs": int(lens.sum()),
            "static_conflicts": int(sum(conflicts)),
            "renumbered": new is not None,
        }
    else:
        pf, ptr, ent = _dynamic_intervals(
            np.asarray(trace.warp_ptr, np.int64),
            trace.src,
            trace.dst,
            trace.op.astype(np.int64),
            trace.sidx.astype(np.int64),
            n,
            kind == "strand",
            np.array(LONG_LATENCY_OPS, dtype=np.int64),
        )
        if len(ent):
            ent = (ent & ~(np.int64(4095) << 8)) | ((((ent & 255) // regs_per_bank) % n_banks) << 8)
        niv = len(ptr) - 1
        sc = 0
        for i in range(niv):
            b = (ent[ptr[i] : ptr[i + 1]] >> 8) & 4095
            sc += int(np.bincount(b).max()) - 1 if len(b) else 0
        info = {
            "source": "dynamic",
            "static_intervals": niv,
            "static_instrs": int(len(pf)),
            "static_conflicts": sc,
            "renumbered": False,
        }
    if len(pf) and int(pf.max()) + 1 > ROW_IV_MASK:
        raise RfmodelError(f"too many prefetch regions ({int(pf.max()) + 1}) for the row table")
    words = ((pf + 1) << ROW_IV_SHIFT) | dead | ((np.maximum(sidx, -1) + 1) << ROW_SIDX_SHIFT)
    out = (words, ptr, ent, remap, info)
    if len(_TABLES) > 4:
        _TABLES.clear()
    _TABLES[key] = (trace, program, out)
    return out


_TABLES: dict = {}


# ----------------------------------------------------------------------------- the designs
#: bisection steps of the prefetch fixed point (:func:`_prefetch_fixed_point`)
PF_BISECT_STEPS = 40


@njit(cache=True, inline="always", error_model="numpy")
def _prefetch_at(x, p):
    """The prefetch time and the IPC the prefetch allows at IPC ``x`` (:meth:`Ltrf.analytic`); ``p``: one
    point's ``ipc_b, warps, pf_per_instr, work, s_mean, per_bank, a_tot, t_idle, pf_queue, run, cpi,
    pf_scale, softmin_q, rate_lat, pf_overlap``."""
    ipc_b, warps, pf_per_instr, work, s_mean, per_bank, a_tot = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
    t_idle, pf_queue, run, cpi, pf_scale, q, rate_lat, k = p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14]
    u = min(x * pf_per_instr * work, 0.98)
    # at most the other active warps' prefetches are ahead of one (a closed system: a warp waits for its
    # own prefetch before it starts another)
    backlog = min(u * s_mean * (1.0 + per_bank) / (2.0 * (1.0 - u)), max(a_tot - 1.0, 0.0) * work)
    t = t_idle + pf_queue * backlog
    rate = a_tot * run / (run * cpi + pf_scale * t)
    if not warps > 0:
        return t, 0.0
    # a warp waits for its own prefetch, a pause of pf_per_instr t cycles per instruction, which overlaps the
    # warp's own memory waits (m: its cycles per instruction under the latency bound, warps / rate_lat, beyond
    # its dependence pace cpi) as their k-norm: the pause adds to them at k = 1 and hides behind them as
    # k grows; the paced bound replaces the latency term in the shared model's soft minimum
    pause = pf_per_instr * t
    c_w = warps / rate_lat
    m = max(c_w - cpi, 0.0)
    joint = (m**k + pause**k) ** (1.0 / k) if m > 0.0 else pause
    lat_inv = _inv_q(rate_lat, q)
    inv = max(_inv_q(ipc_b, q) - lat_inv, 0.0) + _inv_q(warps / (c_w + joint - m), q)
    inv += _inv_q(rate, q)  # the active warps' issue pace with their prefetches
    if inv == 0.0:
        return t, np.inf
    return t, inv ** (-1.0 / q)


@njit(cache=True, error_model="numpy")
def _prefetch_fixed_point(P, ipc_out, t_out):
    """Per point (column of ``P``, rows as :func:`_prefetch_at` takes them), the IPC ``x`` with ``at(x) =
    x`` by :data:`PF_BISECT_STEPS` bisection steps on ``[0, ipc_b]`` (``at(x) - x`` falls with ``x``), and
    the prefetch time there."""
    for i in range(P.shape[1]):
        p = P[:, i]
        lo, hi = 0.0, p[0]
        for _ in range(PF_BISECT_STEPS):
            mid = 0.5 * (lo + hi)
            if _prefetch_at(mid, p)[1] > mid:
                lo = mid
            else:
                hi = mid
        x = 0.5 * (lo + hi)
        ipc_out[i] = x
        t_out[i] = _prefetch_at(x, p)[0]


def launch_burst(profile, n, n_pf, warps, pool, ws, banks, occ, sm):
    """What the warps' first prefetches add to the mean prefetch time (cycles, over all ``n_pf`` prefetches
    of the ``n`` instructions): the resident CTAs launch together, so every resident warp (two-level: every
    warp of the active pools, ``pool``) enters its first interval at the kernel's start and fetches its
    working set (``ws`` registers, LTRF+ none: nothing is live at a kernel's entry) onto the ``banks``
    main-RF banks at once; a warp's fetch waits for those of the warps before it, ``ws / banks`` accesses
    of ``occ`` cycles a bank each, so the ``k``-th warp of a wave waits ``(k - 1) ws occ / banks``.  The
    first wave is the resident warps; a CTA launched later, when one retires, is a wave of its own warps
    (two-level: a warp entering the pool later fetches alone).  The mean over the share's warps, times the
    share of the prefetches that are first ones (the share's warps over ``n_pf``)."""
    total = n / max(float(profile.instrs_per_warp), 1.0)
    two = two_level_flag(sm)
    first = np.minimum(pool if two else warps, total)
    later_wait = 0.0 if two else (max(int(profile.warps_per_cta), 1) - 1) / 2.0
    waits = first * (first - 1.0) / 2.0 + np.maximum(total - first, 0.0) * later_wait  # in warps ahead
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(n_pf > 0, np.minimum(total / np.where(n_pf > 0, n_pf, 1.0), 1.0), 0.0)
    per_warp = np.asarray(ws, dtype=np.float64) * occ / np.maximum(banks, 1.0)
    return share * waits / np.maximum(total, 1.0) * per_warp


def prefetch_stall_share(ipc, sched, pf_per_instr, t_pf, active):
    """Scheduler-cycles per instruction without an issue that the simulator lays to a prefetch: it names the
    reason of a scheduler's idle cycle by the first warp of its order that cannot issue, so of the ``S / IPC
    - 1`` idle scheduler-cycles per instruction, the share in which that warp waits for its prefetch: the
    share of an active warp's time it spends so, ``pf_per_instr t_pf`` of the ``active / IPC`` cycles it takes
    per instruction (``active`` warps share the IPC)."""
    ipc = np.asarray(ipc, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        idle = np.maximum(sched / ipc - 1.0, 0.0)
        waiting = np.minimum(pf_per_instr * t_pf * ipc / np.maximum(active, 1.0), 1.0)
        return np.where(ipc > 0, idle * waiting, np.inf)


def prefetch_exposed_share(stall_cycles, prefetch_cycles):
    """The share of the prefetches' time that left a scheduler without an instruction to issue: the
    scheduler-cycles laid to a warp waiting for its prefetch (``prefetch_stall_cycles``) over the cycles the
    prefetches took, summed over them (0 without any).  0: the other warps hid every prefetch (the latency
    tolerance the design is for); 1: each prefetch cycle idled a scheduler.  The LTRF family's
    register-cache metric: every operand is read from the interval cache by construction (a hit rate of 1
    in both engines), so what tells designs apart is how much of the fetching the warps hide."""
    stall = np.asarray(stall_cycles, dtype=np.float64)
    cyc = np.asarray(prefetch_cycles, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(cyc > 0, stall / np.where(cyc > 0, cyc, 1.0), 0.0)
    return float(out) if out.ndim == 0 else out


@base.register
class Ltrf(base.Design):
    """LTRF; its variants are subclasses that set the class flags below (and their own parameter kind)."""

    name = "ltrf"
    description = "Latency-Tolerant Register File: register-interval prefetch into a partitioned RF cache"
    #: prefetch regions: register-intervals, or strands
    kind: ClassVar[str] = "register-interval"
    #: liveness bits (LTRF+): only live registers are written back and fetched
    plus: ClassVar[bool] = False
    #: register renumbering against prefetch bank conflicts (LTRFconf)
    conf: ClassVar[bool] = False
    Params = LtrfParams
    #: shorter intervals over slow banks: more prefetches, each with fewer registers (every variant)
    calibration_points = ({"regs_per_interval": 8, "main_rf_latency_x": 3},)
    stall_reasons = ("prefetch",)
    metrics = (
        (
            "rf_cache_hit_rate",
            "rf_cache_reads",
            "main_rf_reads",
            "main_rf_writes",
            "prefetches",
            "prefetch_regs",
            "prefetch_latency_cycles",
            "prefetch_stall_cycles",
            "prefetch_bank_conflicts",
            "prefetch_max_bank_load",
            "prefetch_exposed_share",
            "conflict_free_prefetch_fraction",
            "static_prefetch_conflicts",
            "warp_activations",
            "warp_deactivations",
            "refetches",
            "interval_length_dynamic",
            "interval_length_static",
        )
        + mainrf.TIMING_METRICS
        + mainrf.NETWORK_METRICS
    )
    calibration_params = LTRF_CALIBRATION
    #: the registers each prefetch fetches and writes back, its latency and its bank conflicts, as the
    #: simulator counts them, size ``ws_fill``, ``wb_fraction``, ``pf_queue`` and the conflicts' spread in the
    #: fit (not the IPC alone)
    fit_metrics = ("prefetch_regs", "main_rf_writes", "prefetch_latency_cycles", "prefetch_bank_conflicts")
    supports_simulate = True
    needs_trace = True
    size_parameters = {"regs_per_interval": ("rf_cache",), "active_warps": ("rf_cache",)}

    compile_params = ("regs_per_interval", "main_rf_banks", "main_rf_bank_regs")

    def compile(self, kernel, params, sm):
        """The compiler pass: register-intervals (or strands) at ``regs_per_interval``, their working sets
        with main-RF banks and live-ins, and (LTRFconf) the renumbered kernel (:func:`_compile`)."""
        kind = "strand" if self.kind == "strand" else "interval"
        return _compile(
            kernel, params.regs_per_interval, kind, self.conf, params.banks(sm), params.main_rf_bank_regs
        )

    def sim_setup(self, sm, p, options, trace=None, program=None):
        if trace is None:
            raise RfmodelError(
                f"design '{self.name}' needs the trace being simulated: sim_setup(..., trace=...)"
            )
        mb = p.banks(sm)
        words, ptr, ent, remap, info = row_tables(
            trace,
            p.regs_per_interval,
            "strand" if self.kind == "strand" else "interval",
            self.conf,
            mb,
            p.main_rf_bank_regs,
            program=program,
        )
        lat, occ, xex, wocc = mainrf.sim_main_rf_timing(p, sm)
        W = sm.warps_per_sm
        off_warp = P_C0 + len(COUNTERS)
        off_bank = off_warp + W * WB
        off_row = off_bank + mb
        off_ivp = off_row + len(words)
        off_ive = off_ivp + len(ptr)
        off_map = off_ive + max(len(ent), 1)
        ints = base.header_state(sm, options, off_map + (0 if remap is None else len(remap)))
        ints[P_LAT], ints[P_OCC], ints[P_XEX], ints[P_MB], ints[P_WOCC] = lat, occ, xex, mb, wocc
        ints[P_PLUS], ints[P_TWO], ints[P_W] = int(self.plus), int(two_level_flag(sm)), W
        ints[P_OFF_WARP], ints[P_OFF_BANK], ints[P_OFF_ROW] = off_warp, off_bank, off_row
        ints[P_OFF_IVP], ints[P_OFF_IVE] = off_ivp, off_ive
        ints[off_row:off_ivp] = words
        ints[off_ivp:off_ive] = ptr
        ints[off_ive : off_ive + len(ent)] = ent
        ints[C_SIV] = info["static_intervals"]
        ints[C_SIVI] = info["static_instrs"]
        ints[C_SCONF] = info["static_conflicts"]
        ints[P_G] = p.main_rf_bank_regs
        ints[P_MAP_SRC] = trace.src.shape[1]
        if remap is not None:
            ints[P_OFF_MAP] = off_map
            ints[off_map:] = remap
        for w in range(W):
            ints[off_warp + w * WB + W_IV] = -1
            ints[off_warp + w * WB + W_PFROW] = -1
            ints[off_warp + w * WB + W_LAST] = -1
            ints[off_warp + w * WB + W_FENCE] = -1
        hooks = base.SimHooks(
            operand=ltrf_operand,
            write=ltrf_write,
            may_issue=ltrf_may_issue,
            issued=ltrf_issued,
            activate=ltrf_activate,
            deactivate=ltrf_deactivate,
            upkeep=ltrf_upkeep,
            pool=ltrf_pool,
        )
        setup = base.SimSetup(
            hooks=hooks,
            ints=ints,
            stall_reasons=self.stall_reasons,
            counters={c: P_C0 + i for i, c in enumerate(COUNTERS)},
            pool=p.active_warps,
            info={"interval_source": info["source"], "renumbered": info["renumbered"]},
        )
        return setup

    def sim_metrics(self, sm, p, setup, counts):
        pf = float(counts["prefetches"])
        dyn = float(counts["dynamic_intervals"])
        siv = float(counts["static_intervals"])
        out = mainrf.hierarchy_sim_metrics(sm, p, counts)
        # the LTRF family's own structure: the warp control block
        out["events"]["warp_control_block"] = (
            float(counts["reads"]) + float(counts["writes"]),
            pf + float(counts["warp_activations"]),
        )
        return {
            **out,
            "prefetches": pf,
            "prefetch_regs": float(counts["prefetch_regs"]),
            "static_prefetch_conflicts": float(counts["static_prefetch_conflicts"]),
            "refetches": float(counts["refetches"]),
            "prefetch_latency_cycles": float(counts["prefetch_cycles"]) / pf if pf else 0.0,
            "prefetch_stall_cycles": float(counts["stall_prefetch"]),
            "prefetch_exposed_share": prefetch_exposed_share(
                float(counts["stall_prefetch"]), float(counts["prefetch_cycles"])
            ),
            "prefetch_bank_conflicts": float(counts["prefetch_bank_conflicts"]),
            "prefetch_max_bank_load": 1.0 + float(counts["prefetch_bank_conflicts"]) / pf if pf else 0.0,
            "conflict_free_prefetch_fraction": (
                1.0 - float(counts["prefetches_with_conflict"]) / pf if pf else 1.0
            ),
            "interval_length_dynamic": float(counts["issued"]) / dyn if dyn else 0.0,
            "interval_length_static": float(counts["static_interval_instrs"]) / siv if siv else 0.0,
        }

    def analytic(self, ctx):
        """Register-interval prefetch into a partitioned cache over a slow main RF.

        Per prefetch: ``f`` registers fetched (the working set's registers the previous interval did not
        leave cached, LTRF+: those live-in; times ``ws_fill``), the
        fullest main-RF bank holds ``M`` of them (:func:`prefetch_max_load`), so on idle banks the
        prefetch takes ``t_pf = (M - 1) occ + lat + xex`` plus its wait behind the banks' backlog.  Prefetches
        per instruction: ``z / L`` (``L`` the interval length, ``z`` the share of the intervals whose prefetch
        reads any register; ``f`` and the write-backs are those of such a prefetch) plus deactivations
        (two-level scheduler).

        The backlog: every prefetch puts its ``f`` reads and its ``w`` write-backs on the
        ``B`` main-RF banks at once (reads ``occ`` cycles each, write-backs ``wocc``; ``w`` the previous
        interval's dirty registers that leave, times ``wb_fraction``), ``a = (f + w) / B`` of
        them on a bank on average; with prefetches arriving at ``lambda = IPC / L`` per cycle a bank is busy
        ``u = lambda (f occ + w wocc) / B``, and its mean backlog is the M/G/1 workload of batches of
        ``k ~ Poisson(a)`` accesses, ``V = u s (1 + a) / (2 (1 - u))`` (``s`` the accesses' mean occupancy).
        The backlog is at most the other active warps' prefetches, ``(A_tot - 1)`` times one's work on a
        bank (each warp waits for its prefetch before it starts another).  A prefetch waits for the last of
        the banks it reads, ``pf_queue V`` (calibrated: the largest of several backlogs over their mean).
        A warp waits for its own prefetch, ``P = t_pf / L`` cycles per instruction, which
        joins its memory waits ``m`` (its cycles per instruction under the shared model's latency bound,
        ``W / R_lat``, beyond its dependence pace ``c``) as their ``pf_overlap``-norm: the paced bound
        ``R'_lat = W / (W / R_lat + (m^k + P^k)^(1/k) - m)`` replaces ``R_lat``'s term in the shared model's
        soft minimum.  An active warp alternates ``L`` instructions at pace ``c`` and a prefetch, so the
        scheduler's ``A`` active warps also bound the IPC by ``R_pf = S A L / (L c + pf_scale t_pf)``.  ``u``
        grows with the IPC and both bounds fall with it, so the IPC is the one fixed point of
        ``IPC^-q = IPC_shared^-q - R_lat^-q + R'_lat(IPC)^-q + R_pf(IPC)^-q`` (bisection; docs/models.md).
        """
        c, profile, sm = ctx.coef, ctx.profile, ctx.sm
        strands = self.kind == "strand"
        n_reg = ctx.param("regs_per_interval")
        mb = mainrf.grid_main_banks(sm, ctx.grid)
        banks = np.asarray(mb, dtype=np.float64)
        active = ctx.param("active_warps")
        read_x, write_x = mainrf.grid_bank_timing(sm, ctx.grid, mb)
        net = mainrf.grid_network_cycles(sm, ctx.grid, mb)
        lat, occ, xex = analytic_timing(ctx.grid, read_x, net)
        sched = float(sm.schedulers_per_sm)
        st = interval_stats(profile, n_reg, banks, strands)
        length = np.maximum(st["length"], 1.0)
        # the intervals whose prefetch reads anything (the others cost no time), and what each of them reads
        # and writes back
        nz = np.asarray(st["live_nz"] if self.plus else st["nz"], dtype=np.float64)
        taking = nz > 0.0
        share = np.where(taking, nz, 1.0)
        fetched = np.asarray(c["ws_fill"]) * (st["live_fetch"] if self.plus else st["fetch"]) / share
        mx = prefetch_max_load(profile, fetched, banks, n_reg, strands, self.conf, c)
        deact_points = profile.need(REG_CACHE.name).deact_per_instr
        deact = two_level_flag(sm) * np.asarray(c["deact_weight"]) * deact_points
        pf_per_instr = np.where(taking, nz, 0.0) / length + deact
        # instructions between two prefetches of a warp (none: LTRF+ where no interval fetches a live-in)
        run = 1.0 / np.maximum(pf_per_instr, 1e-12)
        m = ctx.model()
        ipc_b = m["ipc"]
        warps = np.asarray(m["warps"], dtype=np.float64)
        a_tot = np.minimum(warps, active * sched)
        # an active warp's cycles per instruction between long-latency operations: a warp that waits for
        # one leaves the active pool (two-level scheduler), so the pool bounds only the issuing part; the
        # memory waits overlap across all resident warps, which the shared model's IPC (ipc_b) accounts for
        k0 = np.maximum(np.asarray(m["t_collect"]) - 1.0, 0.0)
        cpi = np.asarray(c["latency_scale"]) * np.maximum(profile.chain_at2(k0, 0.0, "chain2"), 1.0)
        wb_per_pf = np.asarray(c["wb_fraction"]) * st["wb"] / share
        wocc = analytic_timing(ctx.grid, write_x)[1]
        nb = np.maximum(np.asarray(banks, dtype=np.float64), 1.0)
        work = (fetched * occ + wb_per_pf * wocc) / nb  # bank cycles one prefetch puts on a bank, mean
        per_bank = (fetched + wb_per_pf) / nb
        s_mean = work / np.maximum(per_bank, 1e-12)
        t_idle = (mx - 1.0) * occ + lat + xex

        # the fixed point of the paced soft minimum (docstring), compiled per point
        rate_lat = ctx.latency_rate(m)
        args = np.broadcast_arrays(
            *(
                np.asarray(v, dtype=np.float64)
                for v in (
                    ipc_b,
                    warps,
                    pf_per_instr,
                    work,
                    s_mean,
                    per_bank,
                    a_tot,
                    t_idle,
                    c["pf_queue"],
                    run,
                    cpi,
                    c["pf_scale"],
                    c["softmin_q"],
                    rate_lat,
                    c["pf_overlap"],
                )
            )
        )
        shape = args[0].shape
        ipc, t_pf = np.empty(shape), np.empty(shape)
        _prefetch_fixed_point(np.stack([a.reshape(-1) for a in args]), ipc.reshape(-1), t_pf.reshape(-1))
        n = ctx.n
        with np.errstate(divide="ignore", invalid="ignore"):
            cycles = np.where(ipc > 0, n / ipc, np.inf)
        reads, writes = ctx.reads, ctx.writes
        n_pf = n * pf_per_instr
        fetched_total = n_pf * fetched
        # the mean prefetch time with the warps' first prefetches, which queue behind each other at the launch
        first_ws = 0.0 if self.plus else st["ws"]
        t_mean = t_pf + launch_burst(profile, n, n_pf, warps, a_tot, first_ws, nb, occ, sm)
        # a prefetch that fetches nothing costs no time; at most ``fetched`` of them fetch anything
        pf_taking = pf_per_instr * np.minimum(fetched, 1.0)
        pf_stall = n * prefetch_stall_share(ipc, sched, pf_taking, t_pf, a_tot)
        wb = n_pf * wb_per_pf
        # each warp's first activation (at its launch, or its first entry into a two-level pool) and, on a
        # two-level SM, one after each deactivation point, as the simulator counts them
        activations = n * (1.0 / max(float(profile.instrs_per_warp), 1.0) + deact)
        events = {
            "rf_cache": (reads, writes),
            "main_rf_bank": (fetched_total, wb),
            "main_network": (fetched_total + wb, 0.0),
            "crossbar": (reads + writes, 0.0),
            "collector": (reads, reads),
            "warp_control_block": (reads + writes, n_pf + activations),
        }
        metrics = {
            "rf_cache_hit_rate": 1.0,
            "rf_cache_reads": reads,
            "main_rf_reads": fetched_total,
            "main_rf_writes": wb,
            "prefetches": n_pf,
            "prefetch_regs": fetched_total,
            "prefetch_latency_cycles": t_mean,
            "prefetch_stall_cycles": pf_stall,
            # the steady state's share: the launch's waits idle no scheduler in the stall model above, so
            # they stay out of the time it is a share of too
            "prefetch_exposed_share": prefetch_exposed_share(pf_stall, n * pf_taking * t_pf),
            "prefetch_max_bank_load": mx,
            "prefetch_bank_conflicts": n_pf * np.maximum(mx - 1.0, 0.0),
            "interval_length_dynamic": length,
            "warp_activations": activations,
            **mainrf.timing_metrics(read_x, write_x),
            "main_rf_network_cycles": net,
        }
        return ctx.result(m, events=events, metrics=metrics, ipc=ipc, cycles=cycles)

    def structures(self, sm, grid, tech):
        return mainrf.hierarchy_structures(sm, grid, tech, self.Params, cache="interval")


@base.register
class LtrfPlus(Ltrf):
    name = "ltrf_plus"
    description = "LTRF+ : LTRF with liveness bits (only live registers written back / fetched)"
    plus = True
    Params = LtrfPlusParams


@base.register
class LtrfConf(Ltrf):
    name = "ltrfconf"
    description = "LTRFconf: LTRF with register renumbering against prefetch bank conflicts"
    conf = True
    Params = LtrfConfParams


@base.register
class Strands(Ltrf):
    name = "strands"
    description = "LTRF hardware with strand prefetch regions (cut at long-latency uses and back edges)"
    kind = "strand"
    Params = StrandsParams
