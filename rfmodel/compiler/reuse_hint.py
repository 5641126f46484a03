"""Malekeh's compiler hint: static reuse distance of every register operand, near or far.

"Lightweight Register File Caching in Collector Units for GPUs" (Malekeh)
encodes one bit per source and destination register in the instruction: the
value's reuse distance compared with a threshold RTHLD ("reuses above RTHLD
as far, and those below this threshold as near").  The cache tables use the
bit to pick victims (random among far entries) and to decide whether a
written value is cached at all (only near ones are).

The paper states neither the unit of the distance nor how the compiler
follows branches, so this module fixes them:

* **Unit: instructions of the warp's own stream.**  The distance of an
  operand of instruction ``i`` is the number of instructions executed after
  ``i`` up to and including the next instruction that *reads* the same value
  (1: the very next instruction reads it).  Instructions of other warps do
  not count (the compiler cannot see them).
* **Value, not register.**  A read followed by an unconditional overwrite of
  the register before any read has no reuse (the cached copy would be
  stale); neither does a read by an instruction that itself overwrites the
  register (``IADD3 R5, R5, 1``: the value read dies there).  A guarded
  write may not happen, so it does not end the value.
* **Branches and loops: the nearest reuse over all paths** -- the minimum
  over control-flow paths leaving ``i`` (a backward dataflow problem solved
  to its fixed point).  A loop-carried value is reused around the back edge
  at the distance of the loop body; of the two arms of a branch the one that
  reads the value sooner decides.  Calls follow the kernel's supergraph
  edges (into the callee, and from a ``RET`` to every return site of the
  function), so a callee's reads count.
* Distance ``-1``: no reuse on any path.  **Near** means
  ``1 <= distance <= rthld``.

Cost: O((instructions + edges) x registers x passes) with numpy vectors over
the registers; passes are bounded by the loop nesting depth plus two on
structured code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rfmodel.errors import RfmodelError
from rfmodel.ir import Kernel

__all__ = ["DEFAULT_RTHLD", "ReuseHints", "dynamic_distances", "reuse_hints"]

#: the paper does not give RTHLD; this default equals the eight entries of a cache table
DEFAULT_RTHLD = 8

_INF = np.int64(1) << 40


@dataclass(frozen=True)
class ReuseHints:
    """Per instruction, per operand: reuse distance (``-1``: none) and the near bit.

    ``src_distance[i][k]`` belongs to ``kernel.instrs[i].src[k]`` (a register
    named in two slots gets the same value twice); ``dst_distance[i][k]`` to
    ``dst[k]``.  ``src_near``/``dst_near`` are ``1 <= distance <= rthld``.
    """

    rthld: int
    src_distance: tuple[tuple[int, ...], ...]
    dst_distance: tuple[tuple[int, ...], ...]
    src_near: tuple[tuple[bool, ...], ...]
    dst_near: tuple[tuple[bool, ...], ...]

    def near_fraction(self) -> float:
        """Fraction of all source operands marked near (NaN if there are none)."""
        flat = [b for row in self.src_near for b in row]
        return float(np.mean(flat)) if flat else float("nan")


def _next_read(kernel: Kernel) -> np.ndarray:
    """``after[i, r]``: instructions from ``i`` to the next read of the value of ``r`` live after ``i``."""
    n = len(kernel.instrs)
    nr = max(kernel.max_reg() + 1, 1)
    reads = np.zeros((n, nr), dtype=bool)
    kills = np.zeros((n, nr), dtype=bool)
    for i, ins in enumerate(kernel.instrs):
        if ins.src:
            reads[i, list(ins.src)] = True
        if ins.dst and ins.guard is None:
            kills[i, list(ins.dst)] = True
    kills &= ~reads
    after = np.full((n, nr), _INF, dtype=np.int64)
    blocks = sorted(kernel.blocks, key=lambda b: b.start)
    head = {b.id: np.full(nr, _INF, dtype=np.int64) for b in kernel.blocks}  # distance seen before start
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            out = np.full(nr, _INF, dtype=np.int64)
            for s in b.succs:
                np.minimum(out, head[s], out=out)
            for j in range(b.end - 1, b.start - 1, -1):
                after[j] = out
                out = np.where(reads[j], 1, np.where(kills[j], _INF, np.minimum(out + 1, _INF)))
            if not np.array_equal(out, head[b.id]):
                head[b.id] = out
                changed = True
    return after


def reuse_hints(kernel: Kernel, rthld: int = DEFAULT_RTHLD) -> ReuseHints:
    """The static reuse distance and near/far bit of every GPR operand of ``kernel``.

    See the module docstring for the definition.  ``rthld`` (>= 0) is the
    near/far threshold in instructions.
    """
    if isinstance(rthld, bool) or not isinstance(rthld, int | np.integer) or rthld < 0:
        raise RfmodelError(f"rthld must be an integer >= 0, got {rthld!r}")
    if not kernel.blocks:
        raise RfmodelError(f"kernel '{kernel.name}' has no basic blocks")
    after = _next_read(kernel)

    def dist(i: int, r: int) -> int:
        d = int(after[i, r])
        return -1 if d >= _INF else d

    src_d, dst_d = [], []
    for i, ins in enumerate(kernel.instrs):
        killed = set(ins.dst) if ins.guard is None else set()
        src_d.append(tuple(-1 if r in killed else dist(i, r) for r in ins.src))
        dst_d.append(tuple(dist(i, r) for r in ins.dst))

    def near(row):
        return tuple(1 <= d <= rthld for d in row)

    return ReuseHints(
        rthld=int(rthld),
        src_distance=tuple(src_d),
        dst_distance=tuple(dst_d),
        src_near=tuple(near(r) for r in src_d),
        dst_near=tuple(near(r) for r in dst_d),
    )


@njit(cache=True)
def dynamic_distances(warp_ptr, src, dst):  # pragma: no cover - compiled
    """The same distance on a dynamic trace (columnar rows, register 255: no operand): per row and slot,
    the instructions of the warp's own stream up to the next read of the value (-1: none; a row that
    writes the register ends the value, a read by a row that overwrites it is its last)."""
    sd = np.full(src.shape, -1, np.int64)
    dd = np.full(dst.shape, -1, np.int64)
    nxt = np.empty(256, np.int64)
    for w in range(warp_ptr.shape[0] - 1):
        nxt[:] = -1
        for i in range(warp_ptr[w + 1] - 1, warp_ptr[w] - 1, -1):
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r != 255 and nxt[r] >= 0:
                    dd[i, j] = nxt[r] - i
            for j in range(src.shape[1]):
                r = src[i, j]
                if r == 255:
                    continue
                killed = False
                for q in range(dst.shape[1]):
                    if dst[i, q] == r:
                        killed = True
                if not killed and nxt[r] >= 0:
                    sd[i, j] = nxt[r] - i
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r != 255:
                    nxt[r] = -1
            for j in range(src.shape[1]):
                r = src[i, j]
                if r != 255:
                    nxt[r] = i
    return sd, dd
