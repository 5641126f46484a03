"""Reuse statistics of on-chip data, the Cache-Emulated Register File paper's Figs. 2b and 5 (E-05..E-07).

The paper profiles how often, and how soon, the data an SM holds on chip is used again: register operands
(a register's value, read again by its warp) and cache operands (a global or local memory line, accessed
again by any warp of the SM).  Here, from a trace of the SM's share and the simulated run's IPC and
resident warps:

* **issue times** are estimated, not simulated: the resident warps take turns (warp ``w`` of a wave of ``W``
  issues its ``k``-th instruction in SM issue slot ``k W + (w mod W)`` after the waves before it, each as
  long as its longest warp), and the SM issues ``IPC`` warp-instructions a cycle, so a slot is ``1 / IPC``
  cycles; a reuse time is the difference of two accesses' times;
* a **register reuse** is a read of a register whose previous access by the same warp (a write or a read)
  came earlier; a **cache reuse** is any access to a 128-byte line after the first (an unbounded cache:
  what the data would allow, not what an L1D of a given size keeps);
* an access is one warp-instruction naming the register (once, however many of its slots name it) or
  touching the line (a load or store of the global or local space; an instruction with no executing lane
  accesses nothing).
"""

from __future__ import annotations

import numpy as np

from rfmodel.ir import OpClass
from rfmodel.trace import NONE

#: the instruction classes whose lines are cache operands (the L1D's: global and local loads and stores)
CACHED = (OpClass.LD_GLOBAL, OpClass.ST_GLOBAL, OpClass.LD_LOCAL, OpClass.ST_LOCAL, OpClass.ATOMIC)


def issue_slots(warp_ptr, resident: int) -> np.ndarray:
    """Each trace row's SM issue slot with ``resident`` warps taking turns, wave after wave (the module's
    docstring)."""
    warp_ptr = np.asarray(warp_ptr, dtype=np.int64)
    n_warps = len(warp_ptr) - 1
    w_res = max(int(resident), 1)
    lengths = np.diff(warp_ptr)
    wave = np.arange(n_warps) // w_res
    longest = np.zeros(int(wave.max()) + 1 if n_warps else 0, dtype=np.int64)
    np.maximum.at(longest, wave, lengths)
    wave_start = np.concatenate(([0], np.cumsum(longest)[:-1])) * w_res
    warp_of = np.repeat(np.arange(n_warps), lengths)
    k = np.arange(int(warp_ptr[-1])) - warp_ptr[:-1][warp_of]
    return wave_start[wave[warp_of]] + k * w_res + (warp_of % w_res)


def _pairs(keys: np.ndarray, order_by: np.ndarray):
    """Sorted by (key, ``order_by``): each access that follows an earlier access of the same key, as
    ``(later, earlier)`` indices into the inputs, and the sorted keys."""
    order = np.lexsort((order_by, keys))
    k = keys[order]
    same = k[1:] == k[:-1]
    return order[1:][same], order[:-1][same], k


def reuse_stats(trace, ipc: float, resident: int) -> dict:
    """The reuse figures of one trace (the module's docstring): ``reg_times`` and ``mem_times`` (cycles of
    every register and cache reuse), ``reg_accesses`` and ``mem_accesses`` (all accesses), and
    ``line_reuses`` (per line touched, its accesses after the first)."""
    active = np.asarray(trace.active) != 0
    slots = issue_slots(trace.warp_ptr, resident)
    warp_of = np.repeat(np.arange(len(trace.warp_ptr) - 1), np.diff(np.asarray(trace.warp_ptr, np.int64)))
    per_cycle = 1.0 / ipc if ipc > 0 else np.nan
    # registers: one access per (row, register), reads and writes; reuse = a read after an earlier access
    src, dst = np.asarray(trace.src), np.asarray(trace.dst)
    rows, regs, is_read = [], [], []
    for cols, read in ((src, True), (dst, False)):
        for j in range(cols.shape[1]):
            r = cols[:, j].astype(np.int64)
            ok = (r != NONE) & active
            if read:  # a register named again by the same instruction: one read
                for jj in range(j):
                    ok &= r != cols[:, jj]
            rows.append(np.flatnonzero(ok))
            regs.append(r[ok])
            is_read.append(np.full(int(ok.sum()), read))
    rows_a, regs_a, read_a = np.concatenate(rows), np.concatenate(regs), np.concatenate(is_read)
    # within one row the reads come before the writes: order by slot, then reads first
    at = slots[rows_a]
    later, earlier, _ = _pairs(warp_of[rows_a] * 256 + regs_a, 2 * at + (~read_a))
    reads = read_a[later]
    reg_times = (at[later[reads]] - at[earlier[reads]]).astype(np.float64) * per_cycle
    # cache lines: every access of a cached class's rows
    ops = np.asarray(trace.op).astype(np.int64)
    cached = np.isin(ops, np.array([int(c) for c in CACHED])) & active
    mp = np.asarray(trace.mem_ptr, dtype=np.int64)
    counts = np.where(cached, np.diff(mp), 0)
    take = np.repeat(cached, np.diff(mp))
    lines = np.asarray(trace.mem_line, dtype=np.int64)[take]
    line_slots = np.repeat(slots, counts)
    later, earlier, sorted_lines = _pairs(lines, line_slots)
    _, per_line = np.unique(sorted_lines, return_counts=True)
    mem_times = (line_slots[later] - line_slots[earlier]).astype(np.float64) * per_cycle
    return {
        "reg_times": reg_times,
        "mem_times": mem_times,
        "reg_accesses": int(len(rows_a)),
        "mem_accesses": int(len(lines)),
        "line_reuses": per_line - 1,
    }


def reuse_summary(stats: dict, cycles=(100.0, 1000.0), more_than: int = 3) -> dict:
    """One kernel's E-05..E-07 figures from :func:`reuse_stats`: the share of lines reused more than
    ``more_than`` times, memory accesses' share of all on-chip data accesses, the shares of reuses (both
    kinds) within each of ``cycles``, and the register operands' share of the reuses within the last."""
    lr = stats["line_reuses"]
    every = np.concatenate([stats["reg_times"], stats["mem_times"]])
    total = stats["reg_accesses"] + stats["mem_accesses"]
    out = {
        "lines_reused_more": float(np.mean(lr > more_than)) if len(lr) else np.nan,
        "mem_access_share": stats["mem_accesses"] / total if total else np.nan,
    }
    for c in cycles:
        out[f"within_{c:g}"] = float(np.mean(every <= c)) if len(every) else np.nan
    soon = int(np.sum(every <= cycles[-1]))
    out["reg_share_within"] = float(np.sum(stats["reg_times"] <= cycles[-1]) / soon) if soon else np.nan
    return out


__all__ = ["CACHED", "issue_slots", "reuse_stats", "reuse_summary"]
