"""The order in which an SM's memory instructions reach its L1D: a schedule of the SM's issue and memory
pipeline over the trace (no register banks, no operand collection beyond a fixed delay).

Which warps' lines lie between two uses of a line decides the L1D's and the L2 slice's hit rates, and the
order comes from the warp scheduler: under greedy-then-oldest the oldest warps take the load/store unit
and the MSHRs whenever their loads return, and a memory-bound kernel's young warps starve; a loose
round-robin scheduler interleaves every warp.  A fixed interleaving cannot follow both, so the profile
takes the order from this schedule (:func:`issue_rank`), which holds:

* CTAs launched in order into the SM's ``resident_ctas`` slots, a finished CTA's slot taken by the next;
  warp ``k`` of slot ``c`` on scheduler ``(c * warps_per_cta + k) mod schedulers``;
* per scheduler and cycle up to ``issue_width`` instructions: greedy-then-oldest (the last issuer first,
  then by launch age), oldest first, or loose round-robin (from the slot after the last issuer);
* a scoreboard of register and predicate results; ALU classes at their latency, one initiation per
  ``initiation`` cycles of the scheduler's unit; barriers release a CTA one cycle after its last arrival;
* memory instructions in a FIFO to the SM's one load/store unit, ``pipe`` cycles after issue, at most
  ``queue_sched`` of one scheduler's and ``queue_sm`` in all waiting (its issue buffer, collector units
  and dispatch register); the unit handles one line a cycle; loads and stores look up an LRU L1D (sets by
  line number, write-allocate; a hit on a line still in flight waits for it; with ``l1_reserve`` a load's
  miss holds its way until the fill, and a load whose set has every way waiting waits), a load miss takes
  an MSHR (the unit waits for one when all are taken) and the L2 slice (LRU) or DRAM (a server of
  ``line_cycles`` per line); atomics go to the L2 slice.

The simulator's pipeline (``rfmodel.sim.core``: issue buffer, collectors, dispatch, the LSU taking the
oldest buffered instruction) has the same shape; against its L1D hit rate the scheduled stream is off by
1.3 points on average over 22 built-in kernels on `fermi-gtx480` and 0.5 over 24 on `volta-v100`, where the
round-robin stream in waves with a fixed age skew was off by 6.6 and 1.4 (``python calib/l1d_order.py``;
docs/models.md).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from rfmodel.ir import OpClass
from rfmodel.setassoc import lru_access, lru_access_at, lru_access_reserve, lru_probe, set_of, take_mshr
from rfmodel.trace import NONE, Trace

#: memory kinds of op classes in the schedule: 0 none, 1 load through the L1D, 2 store through the L1D,
#: 3 load or atomic straight to the L2 slice, 4 store straight to the L2 slice
MK_NONE, MK_LOAD, MK_STORE, MK_L2, MK_L2_STORE = 0, 1, 2, 3, 4
#: warp schedulers: loose round-robin, greedy-then-oldest, oldest first
POL_LRR, POL_GTO, POL_OLDEST = 0, 1, 2
POLICIES = {"lrr": POL_LRR, "gto": POL_GTO, "oldest": POL_OLDEST}


class IssueShape(NamedTuple):
    """The SM's issue side as :func:`_schedule` takes it."""

    wpc: int  # warps per CTA (the widest CTA of the trace)
    n_slots: int  # CTAs resident at once
    n_sched: int  # warp schedulers
    width: int  # instructions per scheduler and cycle
    policy: int  # POL_*


class ClassTables(NamedTuple):
    """Per op class: latency, memory kind (MK_*), unit, initiation interval; the units' dispatch slots, the
    load/store unit's index and the barrier's class."""

    lat: np.ndarray
    kind: np.ndarray
    unit: np.ndarray
    ii: np.ndarray
    u_slots: np.ndarray
    lsu_unit: int
    barrier_op: int


class MemoryPath(NamedTuple):
    """The L1D, L2 slice, DRAM and memory pipeline as :func:`_schedule` and :func:`_memory_lines` see
    them."""

    l1_sets: int
    l1_ways: int
    l1_lat: float
    l1_reserve: bool  # a load miss reserves its line until the fill
    l2_sets: int
    l2_ways: int
    l2_lat: float
    dram_lat: float
    line_cycles: float  # DRAM cycles per line
    n_mshr: int
    queue_sched: int  # memory instructions one scheduler may have waiting
    queue_sm: int  # and the SM
    pipe: float  # cycles from issue to the load/store unit
    l1_walloc: bool  # a store miss allocates its line (else it is written through alone)
    l1_index: int  # the L1D's set index function (rfmodel.setassoc.SET_INDEX) and the line's address bits
    line_shift: int


@njit(cache=True, inline="always")
def operands_ready(ready, pready, q, i, start, src, dst, psrc, extra, waw):
    """The earliest cycle from ``start`` at which instruction ``i`` of warp row ``q`` has its source
    registers (``ready[q, r]``) and predicates (``pready[q, p]``) and, with ``waw``, no write of its
    destination registers pending beyond ``extra`` cycles (the scoreboard's write-after-write check)."""
    for j in range(src.shape[1]):
        r = src[i, j]
        if r != NONE and ready[q, r] > start:
            start = ready[q, r]
    if waw:
        for j in range(dst.shape[1]):
            r = dst[i, j]
            if r != NONE and ready[q, r] - extra > start:
                start = ready[q, r] - extra
    pm = psrc[i]
    p = 0
    while pm:
        if pm & 1 and pready[q, p] > start:
            start = pready[q, p]
        pm >>= 1
        p += 1
    return start


def unit_slots_of(resources: dict, unit) -> np.ndarray:
    """Dispatch slots per unit type of issue resources (``analytic.engine.issue_resources``; one per
    scheduler where they do not say)."""
    if "slots" in resources:
        return np.asarray(resources["slots"], dtype=np.int64)
    return np.full(int(np.max(unit)) + 1, int(resources["schedulers"]), dtype=np.int64)


@njit(cache=True, inline="always")
def _launch_ctas(wp, cta_wstart, wpc, n_slots, n_cta, next_cta, running, dyn, warps):
    """:func:`_schedule`'s launch: the next CTAs into the free slots, their warps' state reset.  Returns
    the next CTA, the running CTAs, the next launch age and whether to launch again (a CTA without
    instructions left its slot at once).  ``warps``: the CTA slots' CTAs and the warps' state,
    ``(slot_cta, pc, end, live, at_bar, age, ready, pready)``."""
    slot_cta, pc, end, live, at_bar, age, ready, pready = warps
    again = False
    for cs in range(n_slots):
        if slot_cta[cs] < 0 and next_cta < n_cta:
            cta = next_cta
            next_cta += 1
            slot_cta[cs] = cta
            running += 1
            for k in range(cta_wstart[cta + 1] - cta_wstart[cta]):
                w = cs * wpc + k
                tw = cta_wstart[cta] + k
                pc[w] = wp[tw]
                end[w] = wp[tw + 1]
                live[w] = pc[w] < end[w]
                at_bar[w] = False
                age[w] = dyn
                dyn += 1
                ready[w, :] = 0.0
                pready[w, :] = 0.0
            if not live[cs * wpc : cs * wpc + cta_wstart[cta + 1] - cta_wstart[cta]].any():
                slot_cta[cs] = -1  # a CTA without instructions
                running -= 1
                again = True
    return next_cta, running, dyn, again


@njit(cache=True, inline="always")
def _memory_lines(mk, j0, j1, lines, lat_c, done, tt, stamp, dram_free, caches, mem):
    """:func:`_schedule`'s memory instruction of kind ``mk``: its lines ``lines[j0:j1]``, one per cycle
    from ``tt``, through the L1D (hits, MSHRs, stores written through, allocating a missed line with
    ``l1_walloc``; with ``l1_reserve`` a
    load's miss holds its line until the fill and a load finding every way of its set waiting waits for the
    first fill, as the simulator's L1D) and the L2 slice and DRAM.  Returns the cycle its result is ready
    (``done`` or later), the cycle after its last line, the LRU stamp and the cycle DRAM is free.
    ``caches``: the L1D's tags, stamps and fill cycles, the L2's tags and stamps, and the MSHRs' free cycles,
    ``(l1_tag, l1_stamp, l1_ready, l2_tag, l2_stamp, mshr)``; ``mem``: :class:`MemoryPath`."""
    l1_tag, l1_stamp, l1_ready, l2_tag, l2_stamp, mshr = caches
    l1_sets, l1_ways, l1_lat, l1_reserve = mem.l1_sets, mem.l1_ways, mem.l1_lat, mem.l1_reserve
    l2_sets, l2_ways, l2_lat, dram_lat = mem.l2_sets, mem.l2_ways, mem.l2_lat, mem.dram_lat
    line_cycles, n_mshr = mem.line_cycles, mem.n_mshr
    for jj in range(j0, j1):
        if mk == MK_NONE:
            break
        line = lines[jj]
        at = tt
        stamp += 1
        if mk == MK_L2 or mk == MK_L2_STORE:
            hit2, _w = lru_access(l2_tag, l2_stamp, l2_sets, l2_ways, line, stamp)
            if mk == MK_L2:
                if hit2:
                    at = tt + l2_lat
                else:
                    dram_free = max(tt, dram_free) + line_cycles
                    at = dram_free + l2_lat + dram_lat
        else:
            s1 = set_of(line, l1_sets, mem.line_shift, mem.l1_index)
            if l1_reserve and mk == MK_LOAD:
                hit, way, tt = lru_access_reserve(l1_tag, l1_stamp, l1_ready, s1, l1_ways, line, stamp, tt)
            elif mk == MK_STORE and not mem.l1_walloc:  # a store miss takes no line
                hit, way = lru_probe(l1_tag, l1_stamp, s1, l1_ways, line, stamp)
            else:
                hit, way = lru_access_at(l1_tag, l1_stamp, s1, l1_ways, line, stamp)
            if mk == MK_STORE:  # (write-allocate: the missed line's way); through to the L2 slice
                if not hit and way >= 0:
                    l1_ready[way] = tt
                stamp += 1
                lru_access(l2_tag, l2_stamp, l2_sets, l2_ways, line, stamp)
            elif hit:
                at = max(tt + l1_lat, l1_ready[way])
            else:
                slot = -1
                if n_mshr > 0:  # the unit waits for the first MSHR to free when none is
                    slot, tt = take_mshr(mshr, n_mshr, tt, 1e300)
                stamp += 1
                hit2, _w = lru_access(l2_tag, l2_stamp, l2_sets, l2_ways, line, stamp)
                if hit2:
                    fill = tt + l1_lat + l2_lat
                else:
                    dram_free = max(tt + l1_lat, dram_free) + line_cycles
                    fill = dram_free + l2_lat + dram_lat
                if slot >= 0:
                    mshr[slot] = fill
                l1_ready[way] = fill
                at = fill
        if mk != MK_STORE and mk != MK_L2_STORE and at + lat_c > done:
            done = at + lat_c
        tt += 1.0
    return done, tt, stamp, dram_free


@njit(cache=True, inline="always")
def _warp_orders(S, W, live, age, policy, order, n_ord):
    """Each scheduler's live warps into ``order[s, :n_ord[s]]``: by launch age (gto, oldest; an insertion
    sort, stable) or by slot (lrr)."""
    for s in range(S):
        nc = 0
        for w in range(s, W, S):
            if live[w]:
                order[s, nc] = w
                nc += 1
        n_ord[s] = nc
        if policy != POL_LRR:
            for a in range(1, nc):
                x = order[s, a]
                b = a - 1
                while b >= 0 and age[order[s, b]] > age[x]:
                    order[s, b + 1] = order[s, b]
                    b -= 1
                order[s, b + 1] = x


@njit(cache=True, inline="always")
def _lsu_place(waiting, s, t, start, queue_sched, queue_sm):
    """The cycle from which scheduler ``s``'s memory instruction, ready at ``start``, finds a place in the
    memory pipeline at ``t``: its scheduler's ``queue_sched`` places and the SM's ``queue_sm`` (``waiting``:
    each scheduler's last memory instructions' LSU start cycles); the earliest of them to leave when full."""
    mine = 0
    total = 0
    frees = 1e300
    for s2 in range(waiting.shape[0]):
        for k2 in range(queue_sched):
            if waiting[s2, k2] > t:
                total += 1
                if s2 == s:
                    mine += 1
                if waiting[s2, k2] < frees:
                    frees = waiting[s2, k2]
    if (mine >= queue_sched or total >= queue_sm) and frees > start:
        start = frees
    return start


@njit(cache=True, inline="always")
def _cta_check(n_slots, wpc, slot_cta, live, at_bar, running):
    """Barriers and finished CTAs: a CTA slot whose warps have all finished is freed, one whose live warps
    all wait at a barrier releases them.  Returns ``(running, a CTA finished, a barrier released)``."""
    finished = False
    released = False
    for cs in range(n_slots):
        if slot_cta[cs] < 0:
            continue
        n_wait = 0
        n_run = 0
        for w in range(cs * wpc, cs * wpc + wpc):
            if live[w]:
                if at_bar[w]:
                    n_wait += 1
                else:
                    n_run += 1
        if n_run == 0 and n_wait == 0:
            slot_cta[cs] = -1
            running -= 1
            finished = True
        elif n_run == 0:
            for w in range(cs * wpc, cs * wpc + wpc):
                at_bar[w] = False
            released = True
    return running, finished, released


@njit(cache=True)
def _schedule(wp, cta_wstart, op, dst, src, pdst, psrc, mem_ptr, lines, passes, shape, cls, mem):
    """:func:`issue_rank`'s schedule (issue sequence number of every trace row, cycles, the cycles memory
    instructions waited for the load/store unit beyond the pipeline's delay, the unit's busy cycles, and
    each row's issue cycle and the cycle its results are ready) of the trace's warps,
    CTAs, rows and lines on :class:`IssueShape`, :class:`ClassTables` and :class:`MemoryPath`; ``passes``:
    a shared access's passes through the banks (``Trace.smem_passes``), the unit's cycles."""
    wpc, n_slots, n_sched, width, policy = shape
    lat, kind, unit, ii, u_slots, lsu_unit, barrier_op = cls
    l1_sets, l1_ways, l2_sets, l2_ways = mem.l1_sets, mem.l1_ways, mem.l2_sets, mem.l2_ways
    n_mshr, queue_sched, queue_sm, pipe = mem.n_mshr, mem.queue_sched, mem.queue_sm, mem.pipe
    n = op.shape[0]
    rank = np.full(n, -1, np.int64)
    t_issue = np.full(n, -1.0)
    t_done = np.full(n, -1.0)
    n_cta = cta_wstart.shape[0] - 1
    W = n_slots * wpc
    S = n_sched
    ready = np.zeros((W, 256))
    pready = np.zeros((W, 16))
    pc = np.zeros(W, np.int64)
    end = np.zeros(W, np.int64)
    age = np.zeros(W, np.int64)
    live = np.zeros(W, np.bool_)
    opnd = np.zeros(W)  # the operands' ready cycle of trace row opnd_row[w], warp w's next instruction
    opnd_row = np.full(W, -1, np.int64)
    at_bar = np.zeros(W, np.bool_)
    slot_cta = np.full(n_slots, -1, np.int64)
    warps = (slot_cta, pc, end, live, at_bar, age, ready, pready)
    n_units = 0
    for c in range(unit.shape[0]):
        if unit[c] + 1 > n_units:
            n_units = unit[c] + 1
    ufree = np.zeros((S, n_units))
    lsu_free = 0.0
    last = np.full(S, -1, np.int64)
    n1 = max(l1_sets * l1_ways, 1)
    n2 = max(l2_sets * l2_ways, 1)
    l1_tag = np.full(n1, -1, np.int64)
    l1_stamp = np.full(n1, -1, np.int64)
    l1_ready = np.zeros(n1)
    l2_tag = np.full(n2, -1, np.int64)
    l2_stamp = np.full(n2, -1, np.int64)
    mshr = np.zeros(max(n_mshr, 1))
    caches = (l1_tag, l1_stamp, l1_ready, l2_tag, l2_stamp, mshr)
    waiting = np.zeros((S, queue_sched))  # LSU start cycles of each scheduler's last memory instructions
    order = np.zeros((S, W), np.int64)  # each scheduler's live warps in the order it tries them
    n_ord = np.zeros(S, np.int64)
    dirty = True  # a CTA launched or a warp finished since the orders were taken
    dram_free = 0.0
    lsu_wait = 0.0  # cycles memory instructions waited for the load/store unit beyond its pipeline's delay
    lsu_busy = 0.0  # cycles the load/store unit held an instruction
    stamp = 0
    seq = 0
    next_cta = 0
    dyn = 0
    running = 0
    t = 0.0
    launch = True
    while True:
        if launch:
            dirty = True
            next_cta, running, dyn, launch = _launch_ctas(
                wp, cta_wstart, wpc, n_slots, n_cta, next_cta, running, dyn, warps
            )
        if running == 0:
            if next_cta >= n_cta:
                break
            continue
        if dirty:  # each scheduler's live warps: by launch age (gto, oldest) or by slot (lrr)
            dirty = False
            _warp_orders(S, W, live, age, policy, order, n_ord)
        nxt = 1e300
        issued = False
        check = False
        for si in range(S):
            s = (si + int(t)) % S  # the schedulers take turns at the LSU's queue
            nc = n_ord[s]
            lead = -1  # under gto the last issuer before all
            if policy == POL_GTO and last[s] >= 0 and live[last[s]]:
                lead = last[s]
            a0 = 0  # loose round-robin: from the slot after the last issuer
            if policy == POL_LRR:
                while a0 < nc and order[s, a0] <= last[s]:
                    a0 += 1
            slots = width
            for a in range(nc + (1 if lead >= 0 else 0)):
                if slots == 0:
                    break
                if lead >= 0:
                    if a == 0:
                        w = lead
                    else:
                        w = order[s, a - 1]
                        if w == lead:
                            continue
                elif policy == POL_LRR:
                    w = order[s, (a + a0) % nc]
                else:
                    w = order[s, a]
                while slots > 0 and live[w] and not at_bar[w]:
                    i = pc[w]
                    if opnd_row[w] == i:  # only the warp's own issues move its operands' ready times
                        start = opnd[w]
                    else:
                        start = operands_ready(ready, pready, w, i, 0.0, src, dst, psrc, 0.0, True)
                        opnd[w] = start
                        opnd_row[w] = i
                    c = op[i]
                    u = unit[c]
                    if u == lsu_unit:  # a place in the memory pipeline: the scheduler's and the SM's
                        start = _lsu_place(waiting, s, t, start, queue_sched, queue_sm)
                    elif ufree[s % u_slots[u], u] > start:
                        start = ufree[s % u_slots[u], u]
                    if start > t:
                        if start < nxt:
                            nxt = start
                        break
                    rank[i] = seq
                    seq += 1
                    done = t + lat[c]
                    if u == lsu_unit:
                        t0 = max(t + pipe, lsu_free)
                        k0 = 0
                        for k2 in range(1, queue_sched):
                            if waiting[s, k2] < waiting[s, k0]:
                                k0 = k2
                        waiting[s, k0] = t0
                        lsu_wait += t0 - (t + pipe)
                        tt = t0
                        done = t0 + lat[c]
                        done, tt, stamp, dram_free = _memory_lines(
                            kind[c],
                            mem_ptr[i],
                            mem_ptr[i + 1],
                            lines,
                            lat[c],
                            done,
                            tt,
                            stamp,
                            dram_free,
                            caches,
                            mem,
                        )
                        if passes[i] > 1:  # shared memory's bank conflicts: a pass a cycle
                            done += passes[i] - 1
                            tt = max(tt, t0 + passes[i])
                        lsu_free = max(t0 + ii[c], tt)
                        lsu_busy += lsu_free - t0
                    else:
                        ufree[s % u_slots[u], u] = t + ii[c]
                    t_issue[i] = t
                    t_done[i] = done
                    for j in range(dst.shape[1]):
                        r = dst[i, j]
                        if r != NONE:
                            ready[w, r] = done
                    pm = np.int64(pdst[i])
                    p = 0
                    while pm:
                        if pm & 1:
                            pready[w, p] = done
                        pm >>= 1
                        p += 1
                    last[s] = w
                    slots -= 1
                    issued = True
                    pc[w] = i + 1
                    if pc[w] >= end[w]:
                        live[w] = False
                        dirty = True
                        check = True
                    elif c == barrier_op:
                        at_bar[w] = True
                        check = True
        if check:  # barriers and finished CTAs
            running, finished, released = _cta_check(n_slots, wpc, slot_cta, live, at_bar, running)
            if finished:
                launch = True
            if released:
                issued = True
        if issued or nxt >= 1e300:
            t += 1.0
        else:
            t = max(t + 1.0, nxt)
    return rank, t, lsu_wait, lsu_busy, t_issue, t_done


def issue_rank(trace: Trace, pipeline: dict) -> np.ndarray | None:
    """Issue sequence number of every row of ``trace`` in the schedule of the module docstring (int64,
    one per trace row), or ``None`` when the SM holds no CTA of the trace.  ``pipeline``: the SM as the
    schedule sees it (:func:`rfmodel.analytic.engine.memory_pipeline`)."""
    out = issue_schedule(trace, pipeline)
    return None if out is None else out[0]


def issue_schedule(trace: Trace, pipeline: dict, stats: bool = False, times: bool = False) -> tuple | None:
    """:func:`issue_rank` and the schedule's cycles (the last issue's cycle plus one); with ``stats`` also
    ``{"lsu_queue": ..., "lsu_busy": ...}``: the mean number of memory instructions that wait in the
    schedule for the load/store unit beyond the pipeline's fixed delay (in its issue buffers, collectors and
    dispatch registers; Little's law over the schedule's cycles) and the share of its cycles the unit is
    busy (a line a cycle, a shared access's passes, a load that waits for an MSHR or a line in flight);
    with ``times`` last ``(issued, ready)``: each trace row's issue cycle and the cycle its results are
    ready (float64; -1 for a row the schedule never issued)."""
    p = pipeline
    wp = trace.warp_ptr.astype(np.int64)
    n_w = len(wp) - 1
    if trace.n_instrs == 0 or n_w == 0 or int(p["resident_ctas"]) <= 0:
        return None
    wc = np.asarray(trace.warp_cta, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, wc[1:] != wc[:-1]])
    cta_wstart = np.r_[starts, n_w].astype(np.int64)
    wpc = max(int(np.diff(cta_wstart).max()), 1)
    kind = np.zeros(len(p["latency"]), np.int64)
    l1_on = int(p["l1_sets"]) > 0
    for c in (OpClass.LD_GLOBAL, OpClass.LD_LOCAL):
        kind[int(c)] = MK_LOAD if l1_on and not (p["l1_bypass"] and c == OpClass.LD_GLOBAL) else MK_L2
    for c in (OpClass.ST_GLOBAL, OpClass.ST_LOCAL):
        kind[int(c)] = MK_STORE if l1_on else MK_L2_STORE
    kind[int(OpClass.ATOMIC)] = MK_L2
    shape = IssueShape(
        wpc, int(p["resident_ctas"]), int(p["schedulers"]), int(p["issue_width"]), POLICIES[p["policy"]]
    )
    cls = ClassTables(
        np.asarray(p["latency"], np.float64),
        kind,
        np.asarray(p["unit"], np.int64),
        np.asarray(p["initiation"], np.float64),
        unit_slots_of(p, p["unit"]),
        int(p["lsu_unit"]),
        int(OpClass.BARRIER),
    )
    mem = MemoryPath(
        int(p["l1_sets"]),
        int(p["l1_ways"]),
        float(p["l1_hit_latency"]),
        bool(p["l1_reserve"]),
        int(p["l2_sets"]),
        int(p["l2_ways"]),
        float(p["l2_hit_latency"]),
        float(p["dram_latency"]),
        float(p["line_cycles"]),
        int(p["mshr"]),
        int(p["queue_sched"]),
        int(p["queue_sm"]),
        float(p["pipe"]),
        bool(p.get("l1_walloc", True)),
        int(p.get("l1_index", 0)),
        int(trace.line_bytes).bit_length() - 1,
    )
    rank, cycles, lsu_wait, lsu_busy, t_issue, t_done = _schedule(
        wp,
        cta_wstart,
        trace.op,
        trace.dst,
        trace.src,
        trace.pdst,
        trace.psrc,
        trace.mem_ptr.astype(np.int64),
        (trace.mem_line // trace.line_bytes).astype(np.int64),
        trace.smem_passes.astype(np.int64),
        shape,
        cls,
        mem,
    )
    out = (rank, float(cycles))
    if stats:
        n = max(float(cycles), 1.0)
        out += ({"lsu_queue": lsu_wait / n, "lsu_busy": lsu_busy / n},)
    return out + ((t_issue, t_done),) if times else out
