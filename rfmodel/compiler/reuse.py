"""Register reuse distances: static (per basic block or program order) and dynamic (traces).

An *access stream* lists, row by row, the registers each instruction touches:
its reads (``src`` slots in order) and then its writes (``dst`` slots), a
register named twice by one instruction counted once (its ``rw`` bits say
whether it was read, written or both).  For every access of key ``k`` (a
register, or a ``(warp, register)`` pair in an interleaved multi-warp stream):

* ``instr_distance``: rows since the previous access of ``k`` (1 = the
  previous instruction of the stream; -1 = first access);
* ``stack_distance``: the number of *distinct other keys* accessed strictly
  between the previous access of ``k`` and this one, in stream order (the
  LRU stack distance; -1 = first access).  In a fully associative LRU cache
  of ``C`` entries updated by every access in this order, the access hits
  exactly when ``0 <= stack_distance < C``.

The stack distances are computed in O(n log n) by the usual marker method: a
Fenwick tree over access positions holds a 1 at the latest access of every
key, so the distinct keys seen since position ``p`` are the markers after
``p``.  The loop is compiled with numba.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rfmodel.errors import RfmodelError
from rfmodel.ir import Kernel
from rfmodel.trace import NONE

__all__ = [
    "ReuseDistances",
    "access_stream",
    "interleave_round_robin",
    "reuse_distances",
    "reuse_profile",
    "stack_distances",
    "static_reuse",
    "trace_reuse",
]

READ, WRITE = 1, 2
_ACCESS_KINDS = {"read": READ, "write": WRITE, "both": READ | WRITE}


@njit(cache=True)
def _add_accesses(ops, i, bit, start, m, rows, regs, warps, rws, w):  # pragma: no cover - compiled
    """Add row ``i``'s registers ``ops`` (255: none) as accesses of kind ``bit``, merging with the row's
    accesses from ``start`` on; returns the new count."""
    for j in range(ops.shape[0]):
        r = ops[j]
        if r == 255:
            continue
        found = False
        for q in range(start, m):
            if regs[q] == r:
                rws[q] |= bit
                found = True
                break
        if not found:
            rows[m] = i
            regs[m] = r
            warps[m] = w
            rws[m] = bit
            m += 1
    return m


@njit(cache=True)
def _flatten(src, dst, warp, want):  # pragma: no cover - compiled
    """Access arrays (row, reg, warp, rw) of a register stream, deduplicated per row."""
    n = src.shape[0]
    cap = n * (src.shape[1] + dst.shape[1])
    rows = np.empty(cap, np.int64)
    regs = np.empty(cap, np.int16)
    warps = np.empty(cap, np.int32)
    rws = np.empty(cap, np.uint8)
    m = 0
    for i in range(n):
        start = m
        if want & 1:
            m = _add_accesses(src[i], i, 1, start, m, rows, regs, warps, rws, warp[i])
        if want & 2:
            m = _add_accesses(dst[i], i, 2, start, m, rows, regs, warps, rws, warp[i])
    return rows[:m], regs[:m], warps[:m], rws[:m]


@njit(cache=True)
def _stack_distance_kernel(keys, n_keys):  # pragma: no cover - compiled
    """Previous position and LRU stack distance of every access (-1: first access)."""
    n = keys.shape[0]
    tree = np.zeros(n + 1, np.int64)  # Fenwick tree over positions 1..n
    last = np.full(n_keys, -1, np.int64)
    prev = np.full(n, -1, np.int64)
    sd = np.full(n, -1, np.int64)
    for t in range(n):
        k = keys[t]
        p = last[k]
        if p >= 0:
            # markers in positions p+1 .. t-1 (0-based) = prefix(t) - prefix(p+1) in 1-based terms
            s = 0
            i = t
            while i > 0:
                s += tree[i]
                i -= i & -i
            i = p + 1
            while i > 0:
                s -= tree[i]
                i -= i & -i
            sd[t] = s
            prev[t] = p
            i = p + 1
            while i <= n:
                tree[i] -= 1
                i += i & -i
        i = t + 1
        while i <= n:
            tree[i] += 1
            i += i & -i
        last[k] = t
    return prev, sd


def stack_distances(keys) -> tuple[np.ndarray, np.ndarray]:
    """``(previous access position, LRU stack distance)`` of every element of ``keys``.

    ``keys`` is any 1-D integer (or hashable-valued numpy) sequence; -1 marks
    a first access.  O(n log n).
    """
    keys = np.asarray(keys)
    if keys.ndim != 1:
        raise RfmodelError("stack_distances: keys must be one-dimensional")
    if len(keys) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    if keys.dtype.kind in "iu" and keys.min() >= 0 and keys.max() < max(4 * len(keys), 1 << 20):
        dense = np.ascontiguousarray(keys, dtype=np.int64)  # small non-negative keys: index directly
    else:
        _, dense = np.unique(keys, return_inverse=True)
        dense = dense.astype(np.int64).ravel()
    return _stack_distance_kernel(dense, int(dense.max()) + 1)


@dataclass
class ReuseDistances:
    """Per-access reuse distances of a register stream (see the module docstring).

    ``row`` indexes the stream the accesses came from (trace rows, or static
    instruction indices); ``rw`` has bit 1 for a read and bit 2 for a write.
    """

    row: np.ndarray  # int64
    reg: np.ndarray  # int16
    warp: np.ndarray  # int32 (block id for the per-block static stream)
    rw: np.ndarray  # uint8
    instr_distance: np.ndarray  # int64, -1 first access
    stack_distance: np.ndarray  # int64, -1 first access

    def __len__(self) -> int:
        return len(self.row)

    def _select(self, reads_only: bool) -> np.ndarray:
        return (self.rw & READ) != 0 if reads_only else np.ones(len(self.row), bool)

    def histogram(
        self, which: str = "stack", max_distance: int = 64, reads_only: bool = False
    ) -> tuple[np.ndarray, int]:
        """``(counts, cold)``: ``counts[d]`` accesses at distance ``d`` for ``d <= max_distance``,
        ``counts[max_distance + 1]`` those beyond; ``cold`` the first accesses."""
        if which not in ("stack", "instr"):
            raise RfmodelError(f"histogram: which={which!r}; allowed: stack, instr")
        d = (self.stack_distance if which == "stack" else self.instr_distance)[self._select(reads_only)]
        cold = int(np.count_nonzero(d < 0))
        d = np.minimum(d[d >= 0], max_distance + 1)
        return np.bincount(d, minlength=max_distance + 2).astype(np.int64), cold

    def hit_rate(self, capacity: int, reads_only: bool = False) -> float:
        """Fraction of accesses that hit a fully associative LRU cache of ``capacity`` entries."""
        d = self.stack_distance[self._select(reads_only)]
        if len(d) == 0:
            return float("nan")
        return float(np.count_nonzero((d >= 0) & (d < capacity)) / len(d))

    def summary(self, capacities=(1, 2, 4, 8, 16, 32, 64)) -> dict:
        """Counts, cold fraction, mean/median distances and LRU hit rates, as plain numbers."""
        sd, idist = self.stack_distance, self.instr_distance
        warm = sd >= 0
        n = len(sd)
        return {
            "accesses": n,
            "reads": int(np.count_nonzero(self.rw & READ)),
            "writes": int(np.count_nonzero(self.rw & WRITE)),
            "cold_fraction": float(np.count_nonzero(~warm) / n) if n else float("nan"),
            "mean_stack_distance": float(sd[warm].mean()) if warm.any() else float("nan"),
            "median_stack_distance": float(np.median(sd[warm])) if warm.any() else float("nan"),
            "mean_instr_distance": float(idist[warm].mean()) if warm.any() else float("nan"),
            "lru_hit_rate": {int(c): self.hit_rate(c) for c in capacities},
            "lru_read_hit_rate": {int(c): self.hit_rate(c, reads_only=True) for c in capacities},
        }


def _as_regs(a, name: str) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise RfmodelError(f"{name} must be a [rows, slots] array")
    return np.ascontiguousarray(a, dtype=np.uint8)


def access_stream(src, dst=None, *, warp=None, accesses: str = "both"):
    """Flatten per-row register arrays into ``(row, reg, warp, rw)`` access arrays.

    ``src``/``dst`` are ``[rows, slots]`` arrays padded with 255 (the trace
    layout); ``warp`` gives each row's warp (default all 0).
    """
    if accesses not in _ACCESS_KINDS:
        raise RfmodelError(f"unknown accesses={accesses!r}; allowed: {', '.join(_ACCESS_KINDS)}")
    src = _as_regs(src, "src")
    dst = _as_regs(dst, "dst") if dst is not None else np.full((len(src), 1), NONE, np.uint8)
    if len(dst) != len(src):
        raise RfmodelError("src and dst must have the same number of rows")
    warp = np.zeros(len(src), np.int32) if warp is None else np.ascontiguousarray(warp, dtype=np.int32)
    if len(warp) != len(src):
        raise RfmodelError("warp must have one entry per row")
    return _flatten(src, dst, warp, _ACCESS_KINDS[accesses])


def _warps(n: int, warp_ptr, warp) -> np.ndarray | None:
    if warp_ptr is None:
        return warp
    if warp is not None:
        raise RfmodelError("give either warp_ptr or warp, not both")
    warp_ptr = np.asarray(warp_ptr, dtype=np.int64)
    if warp_ptr[0] != 0 or warp_ptr[-1] != n or np.any(np.diff(warp_ptr) < 0):
        raise RfmodelError("warp_ptr is not a monotone partition of the rows")
    return np.repeat(np.arange(len(warp_ptr) - 1, dtype=np.int32), np.diff(warp_ptr))


def reuse_profile(src, dst=None, warp_ptr=None, *, warp=None, accesses: str = "both") -> ReuseDistances:
    """Reuse distances of a register stream given row by row, rows in issue order.

    Keys are ``(warp, register)``.  ``warp_ptr`` (the trace layout: warp
    ``w`` owns rows ``warp_ptr[w]:warp_ptr[w+1]``) makes every warp's stream
    independent.  ``warp`` (one id per row) instead allows the rows to be an
    interleaving of several warps, whose other rows and keys then count in
    the distances.  Neither: one stream.
    """
    warp = _warps(len(np.asarray(src)), warp_ptr, warp)
    rows, regs, warps, rws = access_stream(src, dst, warp=warp, accesses=accesses)
    keys = warps.astype(np.int64) * 256 + regs
    prev, sd = stack_distances(keys)
    idist = np.where(prev >= 0, rows - rows[np.maximum(prev, 0)], -1)
    return ReuseDistances(rows, regs, warps, rws, idist.astype(np.int64), sd)


def reuse_distances(
    src, dst=None, warp_ptr=None, *, warp=None, accesses: str = "both", which: str = "stack"
) -> np.ndarray:
    """Per-access distances (int64, -1 for a first access) of :func:`reuse_profile`.

    ``which="stack"``: LRU stack distances; ``"instr"``: rows between accesses.
    """
    if which not in ("stack", "instr"):
        raise RfmodelError(f"reuse_distances: which={which!r}; allowed: stack, instr")
    rd = reuse_profile(src, dst, warp_ptr, warp=warp, accesses=accesses)
    return rd.stack_distance if which == "stack" else rd.instr_distance


def _static_arrays(kernel: Kernel) -> tuple[np.ndarray, np.ndarray]:
    n = len(kernel.instrs)
    ws = max((len(i.src) for i in kernel.instrs), default=0) or 1
    wd = max((len(i.dst) for i in kernel.instrs), default=0) or 1
    src = np.full((n, ws), NONE, np.uint8)
    dst = np.full((n, wd), NONE, np.uint8)
    for j, ins in enumerate(kernel.instrs):
        src[j, : len(ins.src)] = ins.src
        dst[j, : len(ins.dst)] = ins.dst
    return src, dst


def static_reuse(kernel: Kernel, *, scope: str = "block", accesses: str = "both") -> ReuseDistances:
    """Reuse distances over the static program.

    ``scope="block"``: within each basic block in program order (a register's
    first access in a block is cold; ``warp`` holds the block id).
    ``scope="program"``: along the instruction list in program order, across
    block boundaries (a straight-line reading that ignores branches).
    ``row`` is the instruction index.
    """
    if scope not in ("block", "program"):
        raise RfmodelError(f"unknown scope={scope!r}; allowed: block, program")
    src, dst = _static_arrays(kernel)
    if scope == "block":
        warp = np.asarray(kernel.block_of(), dtype=np.int32)
    else:
        warp = np.zeros(len(kernel.instrs), np.int32)
    return reuse_profile(src, dst, warp=warp, accesses=accesses)


def interleave_round_robin(warp_ptr) -> np.ndarray:
    """Row order of a loose round-robin issue over the warps of a trace.

    Each warp issues its next instruction in turn (warps that have finished
    drop out): the ``j``-th instruction of every warp comes before the
    ``j+1``-th of any warp, ties broken by warp id.
    """
    warp_ptr = np.asarray(warp_ptr, dtype=np.int64)
    lengths = np.diff(warp_ptr)
    w = np.repeat(np.arange(len(lengths)), lengths)
    j = np.arange(int(warp_ptr[-1])) - warp_ptr[w]
    return np.lexsort((w, j)).astype(np.int64)


def trace_reuse(trace, *, interleaved: bool = False, accesses: str = "both") -> ReuseDistances:
    """Reuse distances of a :class:`~rfmodel.trace.Trace`.

    ``interleaved=False``: each warp's stream on its own (keys ``(warp, reg)``
    over the concatenated streams).  ``interleaved=True``: the warps'
    streams merged by :func:`interleave_round_robin`, so other warps'
    accesses count in the distances (``instr_distance`` counts rows of the
    merged stream); ``row`` then holds the original trace row of each access.
    """
    if not interleaved:
        return reuse_profile(trace.src, trace.dst, trace.warp_ptr, accesses=accesses)
    warp = _warps(len(trace.src), trace.warp_ptr, None)
    order = interleave_round_robin(trace.warp_ptr)
    rd = reuse_profile(trace.src[order], trace.dst[order], warp=warp[order], accesses=accesses)
    rd.row = order[rd.row]
    return rd
