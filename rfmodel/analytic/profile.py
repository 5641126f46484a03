"""Workload profile: the distributions the analytic models consume.

A profile is extracted once from a dynamic :class:`~rfmodel.workload.trace.Trace`
(one pass of compiled loops) and is then reused for every design point, so the
analytic engine never touches the trace again.  What it holds:

* instruction counts (total and per warp) and the op-class mix;
* register reads and writes per instruction (GPRs only, ``RZ`` excluded);
* **bank serialization table** ``ser[B]``: the mean, over instructions, of the
  largest number of *distinct* source registers that fall in one bank when
  registers are interleaved over ``B`` banks (``bank = (reg + warp) mod B``;
  the warp offset rotates banks and does not change the maximum, so the table
  is exact for that mapping and for plain ``reg mod B``), for ``B = 1..64``;
  also ``ser_warp``: the same when all of a warp's registers sit in one bank;
* **single-warp dependency time** ``chain[k]``: the cycles one warp needs on its
  own when every instruction waits for its producers' latencies plus ``k``
  extra cycles of operand collection (issue one instruction per cycle,
  ``t_i = max(t_{i-1} + 1, max_p(t_p + L_p + k))``), for ``k = 0..K``;
* the L1D line-reuse profile (LRU stack distances of line addresses, all warps
  interleaved in trace order) for hit-rate estimates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from rfmodel.workload.ir import L1D_CLASSES, N_OPCLASSES, OpClass
from rfmodel.workload.trace import MAX_SRC, NONE, Trace

MAX_BANKS = 64
CHAIN_EXTRA = np.arange(0, 17, dtype=np.int64)  # extra operand-collection cycles tabulated


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
    ser_warp: float  # mean distinct sources per instruction (all in one bank)
    chain_extra: np.ndarray  # int64 [K]: extra collection cycles tabulated
    chain: np.ndarray  # float64 [K]: mean single-warp cycles per instruction
    mem_lines_per_instr: float  # L1D line accesses per instruction
    line_stack_hist: np.ndarray  # int64: histogram of log2(stack distance + 1); last bin = cold
    regs_per_thread: int
    threads_per_cta: int
    ctas: int
    shared_mem_bytes: int
    attrs: dict = field(default_factory=dict)

    def l1d_hit_rate(self, lines: np.ndarray | float) -> np.ndarray:
        """Hit rate of a fully associative LRU cache of ``lines`` lines (stack-distance model)."""
        lines = np.asarray(lines, dtype=np.float64)
        h = self.line_stack_hist.astype(np.float64)
        total = h.sum()
        if total == 0:
            return np.zeros_like(lines)
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


@njit(cache=True)
def _ser_table(src, max_banks):
    """Sum over rows of the largest per-bank count of distinct source registers."""
    n = src.shape[0]
    out = np.zeros(max_banks + 1, dtype=np.float64)
    distinct_total = 0.0
    regs = np.empty(src.shape[1], dtype=np.int64)
    counts = np.zeros(max_banks, dtype=np.int64)
    for i in range(n):
        k = 0
        for j in range(src.shape[1]):
            r = src[i, j]
            if r == NONE:
                continue
            dup = False
            for q in range(k):
                if regs[q] == r:
                    dup = True
                    break
            if not dup:
                regs[k] = r
                k += 1
        distinct_total += k
        if k == 0:
            continue
        for b in range(1, max_banks + 1):
            m = 0
            for q in range(k):
                c = counts[regs[q] % b] + 1
                counts[regs[q] % b] = c
                if c > m:
                    m = c
            for q in range(k):
                counts[regs[q] % b] = 0
            out[b] += m
    return out, distinct_total


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
                start = t + 1.0
                for j in range(src.shape[1]):
                    r = src[i, j]
                    if r != NONE and ready[e, r] > start:
                        start = ready[e, r]
                pm = psrc[i]
                p = 0
                while pm:
                    if pm & 1 and pready[e, p] > start:
                        start = pready[e, p]
                    pm >>= 1
                    p += 1
                t = start
                done = t + lat[op[i]] + extra[e]
                for j in range(dst.shape[1]):
                    r = dst[i, j]
                    if r != NONE:
                        ready[e, r] = done
                pm = pdst[i]
                p = 0
                while pm:
                    if pm & 1:
                        pready[e, p] = t + lat[op[i]]
                    pm >>= 1
                    p += 1
            total[e] += t + 1.0
    return total


@njit(cache=True)
def _line_stack_hist(lines, nbins):
    """Histogram of floor(log2(d + 1)) of LRU stack distances d; bin nbins-1 counts cold misses.

    O(n log n) with a Fenwick tree over access times.
    """
    n = lines.shape[0]
    hist = np.zeros(nbins, dtype=np.int64)
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
            hist[b] += 1
            i = p + 1
            while i <= n:
                tree[i] -= 1
                i += i & (-i)
        else:
            hist[nbins - 1] += 1
        last[key] = t
        i = t + 1
        while i <= n:
            tree[i] += 1
            i += i & (-i)
    return hist


def profile_trace(trace: Trace, latencies: np.ndarray, name: str | None = None) -> WorkloadProfile:
    """Extract the analytic profile of ``trace``.

    ``latencies[c]`` is the dependent-issue latency in cycles of op class ``c``
    (loads at their expected latency); it only feeds the ``chain`` table.
    """
    n = trace.n_instrs
    if n == 0:
        raise ValueError(f"trace {trace.kernel!r} has no instructions")
    lat = np.asarray(latencies, dtype=np.float64)
    if lat.shape != (N_OPCLASSES,):
        raise ValueError(f"latencies must have {N_OPCLASSES} entries, one per op class")
    mix = np.bincount(trace.op.astype(np.int64), minlength=N_OPCLASSES)[:N_OPCLASSES] / n
    reads = float((trace.src != NONE).sum()) / n
    writes = float((trace.dst != NONE).sum()) / n
    ser_sum, distinct = _ser_table(trace.src, MAX_BANKS)
    chain_total = _chain_cycles(
        trace.warp_ptr.astype(np.int64),
        trace.op,
        trace.dst,
        trace.src,
        trace.pdst,
        trace.psrc,
        lat,
        CHAIN_EXTRA.astype(np.float64),
    )
    is_l1 = np.isin(trace.op, np.array(sorted(int(c) for c in L1D_CLASSES), dtype=np.int8))
    counts = np.diff(trace.mem_ptr)
    rows = np.repeat(is_l1, counts)
    lines = trace.mem_line[rows]
    hist = _line_stack_hist(lines // trace.line_bytes, 32) if len(lines) else np.zeros(32, np.int64)
    assert MAX_SRC == trace.src.shape[1]
    return WorkloadProfile(
        name=name or trace.kernel,
        n_instrs=n,
        n_warps=trace.n_warps,
        mix=mix.astype(np.float64),
        reads_per_instr=reads,
        distinct_reads_per_instr=distinct / n,
        writes_per_instr=writes,
        ser=ser_sum / n,
        ser_warp=distinct / n,
        chain_extra=CHAIN_EXTRA.copy(),
        chain=chain_total / n,
        mem_lines_per_instr=len(lines) / n,
        line_stack_hist=hist,
        regs_per_thread=int(trace.regs_per_thread),
        threads_per_cta=int(trace.threads_per_cta),
        ctas=int(trace.ctas),
        shared_mem_bytes=int(trace.shared_mem_bytes),
        attrs={"trace": dict(trace.attrs), "latencies": lat.tolist()},
    )


def mix_of(profile: WorkloadProfile, *classes: OpClass) -> float:
    return float(sum(profile.mix[int(c)] for c in classes))
