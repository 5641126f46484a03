"""Register-cache statistics of a workload's profile, shared by the designs with a per-warp register cache:
the register file cache (``rfmodel/designs/rfc.py``) and the LTRF family's deactivation points
(``rfmodel/designs/ltrf.py``).  The profile group ``reg_cache`` (:data:`REG_CACHE`), built on first use:

* ``rc_fifo_hist[f, d]`` / ``rc_lru_hist[f, d]``: per-warp register-cache stack distances of
  every source read, ``d = 0..RC_DMAX-1`` exact, ``RC_DMAX``: at least that far, ``RC_DMAX + 1``:
  the register was never written by the warp (a write-allocate cache cannot hold it).  FIFO:
  distinct registers *written* since the last write of the register; LRU: distinct registers
  accessed since its last access.  ``f = 0`` ignores warp deactivations, ``f = 1`` counts a read
  as cold when the warp passed a deactivation point (a barrier, or the first consumer of a
  global/local load or atomic) since the write -- the two-level scheduler flushes the
  partition there (``deact_per_instr``: such points per instruction).  A partitioned cache
  with ``e`` entries per warp hits a read with ``d < e``: exact for a write-allocate FIFO when
  no register is rewritten while cached (a rewrite counts as an insertion here: an upper bound
  on evictions), the LRU stack approximation otherwise; warps never evict each other, so the
  per-warp distances are the interleaved ones;
* ``rc_hits[policy, f, e]``: the same caches simulated exactly, every partition size
  ``e = 1..RC_EMAX`` (FIFO, LRU; kept or flushed at deactivation points): the fraction of source
  reads that hit.

A warp's reads and writes meet its partition in time, not in program order: an instruction reads its
sources when it issues and its results arrive when they are ready, so a load's value that arrives late,
after the warp's later and quicker results, is the newest entry when its consumer reads it.  Where the
analytic engine's profile has the SM's issue schedule (:func:`~rfmodel.analytic.stream.issue_schedule`),
the tables take each warp's events in that schedule's order (:func:`event_rows`: a row's reads at its issue
cycle, its results at their ready cycle, results first in a cycle); without one (a profile built on its
own), in program order.  The deactivation points (``deact_per_instr``) are the program's, counted in
program order either way.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rfmodel.analytic.engine import memory_pipeline
from rfmodel.analytic.profile import TableGroup, _memory_classes, leading_warps, register_table_group
from rfmodel.analytic.stream import issue_schedule
from rfmodel.ir import OpClass
from rfmodel.trace import NONE

#: exact register-cache stack distances tabulated (``rc_*_hist``)
RC_DMAX = 64
#: partition sizes (entries per warp) simulated exactly in ``rc_hits``
RC_EMAX = 32


@njit(cache=True, inline="always")
def _deactivates(op, src, pend, i, barrier_op):
    """Instruction ``i`` is a deactivation point: a barrier, or the first consumer of a long-latency load
    still pending (``pend[r]``)."""
    if op[i] == barrier_op:
        return True
    for j in range(src.shape[1]):
        r = src[i, j]
        if r != NONE and pend[r]:
            return True
    return False


@njit(cache=True)
def _reg_cache_hists(warp_ptr, op, dst, src, dmax, barrier_op, is_ll):
    """Per-warp FIFO/LRU register stack distances of source reads (module docstring)."""
    fifo = np.zeros((2, dmax + 2), dtype=np.float64)
    lru = np.zeros((2, dmax + 2), dtype=np.float64)
    points = 0
    wt = np.empty(256, dtype=np.int64)  # time of the last write
    at = np.empty(256, dtype=np.int64)  # time of the last access
    pend = np.zeros(256, dtype=np.bool_)  # destination of an outstanding long-latency load
    for w in range(warp_ptr.shape[0] - 1):
        a, b = warp_ptr[w], warp_ptr[w + 1]
        wt[:] = -1
        at[:] = -1
        pend[:] = False
        last_flush = -1
        for i in range(a, b):
            t = i - a
            if _deactivates(op, src, pend, i, barrier_op):
                last_flush = t
                pend[:] = False
                points += 1
            for j in range(src.shape[1]):
                r = src[i, j]
                if r == NONE:
                    continue
                if wt[r] < 0:
                    fifo[0, dmax + 1] += 1
                    fifo[1, dmax + 1] += 1
                    lru[0, dmax + 1] += 1
                    lru[1, dmax + 1] += 1
                else:
                    df = 0
                    dl = 0
                    for q in range(256):
                        if q != r:
                            if wt[q] > wt[r]:
                                df += 1
                            if at[q] > at[r]:
                                dl += 1
                    df = min(df, dmax)
                    dl = min(dl, dmax)
                    fifo[0, df] += 1
                    lru[0, dl] += 1
                    if wt[r] < last_flush:
                        fifo[1, dmax + 1] += 1
                        lru[1, dmax + 1] += 1
                    else:
                        fifo[1, df] += 1
                        lru[1, dl] += 1
            for j in range(src.shape[1]):
                r = src[i, j]
                if r != NONE:
                    at[r] = t
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r != NONE:
                    wt[r] = t
                    at[r] = t
                    pend[r] = is_ll[op[i]]
    return fifo, lru, points


@njit(cache=True, inline="always")
def _rc_empty(fl, emax, ring, head, cnt, inset, stk, slen, depth):
    """Empty every partition size of flush variant ``fl`` of ``_reg_cache_sim`` (FIFO rings, LRU stack)."""
    for e in range(1, emax + 1):
        for k in range(cnt[fl, e]):
            inset[fl, e, ring[fl, e, (head[fl, e] + k) % e]] = False
        cnt[fl, e] = 0
        head[fl, e] = 0
    for k in range(slen[fl]):
        depth[fl, stk[fl, k]] = -1
    slen[fl] = 0


@njit(cache=True)
def _reg_cache_sim(warp_ptr, op, dst, src, emax, barrier_op, is_ll):
    """Read hits of write-allocate, read-no-allocate per-warp partitions of ``e = 0..emax`` entries, and the
    write-backs their evictions and flushes send to the main RF (every evicted or flushed entry).

    Each ``[policy (0 FIFO, 1 LRU), flush (0 kept, 1 flushed at deactivation points), e]``, counts.

    One pass over the trace serves every size.  FIFO: one ring buffer per size, membership by
    flags.  LRU with read-no-allocate keeps inclusion (a larger partition holds everything a
    smaller one holds, and a register's recency is its last access in every partition holding
    it), so one priority stack ordered by position serves all sizes (Mattson et al., "Evaluation
    techniques for storage hierarchies"): a write moves the register to the top and, above its
    old position, carries the least recently accessed register down; a read at position ``p``
    hits every partition of more than ``p`` entries and only refreshes the recency.
    """
    hits = np.zeros((2, 2, emax + 1), dtype=np.float64)
    # write-backs to the main RF: a write that finds its partition full evicts an entry, a flush empties it
    wbk = np.zeros((2, 2, emax + 1), dtype=np.float64)
    lru_at = np.zeros((2, emax + 1), dtype=np.float64)  # LRU read hits by stack position
    ring = np.zeros((2, emax + 1, emax), dtype=np.int64)
    head = np.zeros((2, emax + 1), dtype=np.int64)
    cnt = np.zeros((2, emax + 1), dtype=np.int64)
    inset = np.zeros((2, emax + 1, 256), dtype=np.bool_)
    stk = np.zeros((2, emax), dtype=np.int64)
    slen = np.zeros(2, dtype=np.int64)
    depth = np.full((2, 256), -1, dtype=np.int64)
    acc = np.zeros(256, dtype=np.int64)
    pend = np.zeros(256, dtype=np.bool_)
    tick = 0
    for w in range(warp_ptr.shape[0] - 1):
        pend[:] = False
        for fl in range(2):
            _rc_empty(fl, emax, ring, head, cnt, inset, stk, slen, depth)
        for i in range(warp_ptr[w], warp_ptr[w + 1]):
            if _deactivates(op, src, pend, i, barrier_op):
                pend[:] = False
                for e in range(1, emax + 1):  # the flushed partitions' entries go back to the main RF
                    wbk[0, 1, e] += cnt[1, e]
                    wbk[1, 1, e] += min(slen[1], e)
                _rc_empty(1, emax, ring, head, cnt, inset, stk, slen, depth)
            for j in range(src.shape[1]):
                r = src[i, j]
                if r == NONE:
                    continue
                tick += 1
                acc[r] = tick
                for fl in range(2):
                    for e in range(1, emax + 1):
                        if inset[fl, e, r]:
                            hits[0, fl, e] += 1
                    p = depth[fl, r]
                    if p >= 0:
                        lru_at[fl, p] += 1
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r == NONE:
                    continue
                pend[r] = is_ll[op[i]]
                for fl in range(2):
                    for e in range(1, emax + 1):
                        if inset[fl, e, r]:
                            continue
                        if cnt[fl, e] == e:  # evict the oldest insertion
                            wbk[0, fl, e] += 1
                            inset[fl, e, ring[fl, e, head[fl, e]]] = False
                            head[fl, e] = (head[fl, e] + 1) % e
                            cnt[fl, e] -= 1
                        ring[fl, e, (head[fl, e] + cnt[fl, e]) % e] = r
                        inset[fl, e, r] = True
                        cnt[fl, e] += 1
                    p = depth[fl, r]
                    for e in range(1, emax + 1):  # a miss in a full partition of e entries evicts one
                        if (p < 0 or p >= e) and slen[fl] >= e:
                            wbk[1, fl, e] += 1
                    if p < 0:
                        p = slen[fl]
                    if p > 0:
                        carry = stk[fl, 0]
                        for k in range(1, p):
                            q = stk[fl, k]
                            if acc[q] < acc[carry]:
                                stk[fl, k] = carry
                                depth[fl, carry] = k
                                carry = q
                        if p < emax:
                            stk[fl, p] = carry
                            depth[fl, carry] = p
                        else:
                            depth[fl, carry] = -1
                    stk[fl, 0] = r
                    depth[fl, r] = 0
                    if p == slen[fl] and slen[fl] < emax:
                        slen[fl] += 1
                tick += 1
                acc[r] = tick
    for fl in range(2):
        run = 0.0
        for e in range(1, emax + 1):
            run += lru_at[fl, e - 1]
            hits[1, fl, e] = run
    return hits, wbk


def event_rows(warp_ptr, op, dst, src, issued, ready) -> tuple:
    """``(warp_ptr, op, dst, src)`` of the warps' register events in time: each row split into a row of
    its reads at ``issued[row]`` and a row of its results at ``ready[row]`` (none where it writes none),
    ordered within each warp by cycle, results before reads in a cycle (a read waits for the results it
    depends on), then by row.  The tables' passes (:func:`_reg_cache_sim`) take it as they take a trace."""
    warp_ptr = np.asarray(warp_ptr, dtype=np.int64)
    n = int(warp_ptr[-1])
    warp = np.repeat(np.arange(len(warp_ptr) - 1, dtype=np.int64), np.diff(warp_ptr))
    rows = np.arange(n, dtype=np.int64)
    writes = rows[(np.asarray(dst[:n]) != NONE).any(axis=1)]
    row = np.concatenate([rows, writes])
    kind = np.concatenate([np.ones(n, np.int64), np.zeros(len(writes), np.int64)])  # 0: results, 1: reads
    when = np.concatenate([np.asarray(issued[:n], np.float64), np.asarray(ready, np.float64)[writes]])
    order = np.lexsort((row, kind, when, warp[row]))
    row, kind = row[order], kind[order]
    ev_src = np.where((kind == 1)[:, None], src[row], NONE).astype(src.dtype)
    ev_dst = np.where((kind == 0)[:, None], dst[row], NONE).astype(dst.dtype)
    per_warp = np.bincount(warp[row], minlength=len(warp_ptr) - 1)
    ptr = np.concatenate([[0], np.cumsum(per_warp)]).astype(np.int64)
    return ptr, np.ascontiguousarray(op[row]), ev_dst, ev_src


def reg_cache_tables(trace, rank=None, inputs=None) -> dict:
    """The ``reg_cache`` profile group of ``trace`` (module docstring; ``rank`` unused, ``inputs``: the SM's
    issue and ready cycles of every row, :func:`_sm_inputs`) over the leading whole warps up to the
    profile's per-warp sample (``rfmodel.analytic.profile.TABLE_MAX_INSTRS`` instructions)."""
    from rfmodel.analytic import profile as _profile  # its sample size read at call time

    wp_t = leading_warps(trace.warp_ptr.astype(np.int64), _profile.TABLE_MAX_INSTRS)
    n_t = max(int(wp_t[-1]), 1)
    is_ll = _memory_classes()
    barrier = int(OpClass.BARRIER)
    fifo, lru, dpoints = _reg_cache_hists(wp_t, trace.op, trace.dst, trace.src, RC_DMAX, barrier, is_ll)
    rows = (wp_t, trace.op, trace.dst, trace.src)
    issued = (inputs or {}).get("issued")
    if issued is not None and np.all(np.asarray(issued[: int(wp_t[-1])]) >= 0):  # every sampled row issued
        rows = event_rows(*rows, issued, inputs["ready"])
        fifo, lru, _ = _reg_cache_hists(*rows, RC_DMAX, barrier, is_ll)
    rc_hits, wbk = _reg_cache_sim(*rows, RC_EMAX, barrier, is_ll)
    return {
        "rc_fifo_hist": fifo,
        "rc_lru_hist": lru,
        "deact_per_instr": dpoints / n_t,
        "rc_hits": rc_hits / max(float((trace.src[:n_t] != NONE).sum()), 1.0),
        "rc_writebacks": wbk / n_t,
    }


def _sm_inputs(source) -> dict:
    """Every profiled row's issue cycle and the cycle its results are ready in the SM's schedule of the
    profile's trace, for :func:`reg_cache_tables` (none where the SM holds none of its CTAs)."""
    trace = source._trace_and_rank()[0]
    done = issue_schedule(trace, memory_pipeline(trace, source.sm), times=True)
    return {} if done is None else {"issued": done[-1][0], "ready": done[-1][1]}


#: the register-cache tables, built on first use with the profile
REG_CACHE = register_table_group(
    TableGroup(
        "reg_cache",
        ("rc_fifo_hist", "rc_lru_hist", "rc_hits", "deact_per_instr", "rc_writebacks"),
        reg_cache_tables,
        sm_inputs=_sm_inputs,
    )
)


def reg_cache_hit_rate(profile, entries, policy="fifo", flush=1.0) -> np.ndarray:
    """Hit rate from ``profile`` of a per-warp, write-allocate register cache of ``entries`` registers.

    Up to ``RC_EMAX`` entries from ``rc_hits`` (each partition size simulated exactly on every
    warp's stream), beyond from the stack-distance histograms.

    ``policy``: ``"fifo"`` or ``"lru"``; ``flush``: weight of the deactivation-flush table
    (0: warps keep their partitions, 1: flushed at every deactivation point).  Vectorized
    over ``entries`` and ``flush``.
    """
    p = profile.need("reg_cache")
    f = np.clip(np.asarray(flush, dtype=np.float64), 0.0, 1.0)
    if p.rc_hits is not None:  # exact per-warp partitions of up to RC_EMAX entries
        t = p.rc_hits[0 if policy == "fifo" else 1]
        e = np.clip(np.asarray(entries, dtype=np.float64), 0.0, RC_EMAX)
        lo = np.floor(e).astype(np.int64)
        hi = np.minimum(lo + 1, RC_EMAX)
        fr = e - lo
        h0 = t[0, lo] * (1 - fr) + t[0, hi] * fr
        h1 = t[1, lo] * (1 - fr) + t[1, hi] * fr
        exact = (1.0 - f) * h0 + f * h1
        if np.all(np.asarray(entries) <= RC_EMAX):
            return exact
    h = p.rc_fifo_hist if policy == "fifo" else p.rc_lru_hist
    e = np.clip(np.asarray(entries, dtype=np.float64), 0.0, RC_DMAX)
    c0 = np.concatenate([[0.0], np.cumsum(h[0])[:RC_DMAX]])
    c1 = np.concatenate([[0.0], np.cumsum(h[1])[:RC_DMAX]])
    tot = max(float(h[0].sum()), 1e-12)
    lo = np.floor(e).astype(np.int64)
    fr = e - lo
    hi = np.minimum(lo + 1, RC_DMAX)
    h0 = (c0[lo] * (1 - fr) + c0[hi] * fr) / tot
    h1 = (c1[lo] * (1 - fr) + c1[hi] * fr) / tot
    approx = (1.0 - f) * h0 + f * h1
    if p.rc_hits is not None:
        return np.where(np.asarray(entries) <= RC_EMAX, exact, approx)
    return approx


def reg_cache_writebacks(profile, entries, policy="fifo", flush=1.0) -> np.ndarray:
    """Main-RF write-backs per instruction of a per-warp, write-allocate register cache of ``entries``
    registers (``rc_writebacks``: its evictions, and with ``flush`` the entries a flush at each deactivation
    point writes back; linear between whole sizes, the largest tabulated size beyond; ``policy`` and
    ``flush`` as in :func:`reg_cache_hit_rate`).  Vectorized over ``entries`` and ``flush``."""
    t = profile.need("reg_cache").rc_writebacks[0 if policy == "fifo" else 1]
    f = np.clip(np.asarray(flush, dtype=np.float64), 0.0, 1.0)
    e = np.clip(np.asarray(entries, dtype=np.float64), 1.0, RC_EMAX)
    lo = np.floor(e).astype(np.int64)
    hi = np.minimum(lo + 1, RC_EMAX)
    fr = e - lo
    return (1.0 - f) * (t[0, lo] * (1 - fr) + t[0, hi] * fr) + f * (t[1, lo] * (1 - fr) + t[1, hi] * fr)
