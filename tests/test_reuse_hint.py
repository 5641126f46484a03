"""Malekeh's compiler hint: static reuse distances (instructions to the next read of the value) and
the near/far bit against RTHLD.  Hand-computed sequences, then a brute-force oracle on random kernels."""

from __future__ import annotations

from collections import deque

import pytest
from helpers_kernels import build_kernel, listing1
from hypothesis import given, settings
from hypothesis import strategies as st
from test_intervals import random_kernels

from rfmodel.compiler import DEFAULT_RTHLD, reuse_hints
from rfmodel.errors import RfmodelError
from rfmodel.ir import Kernel

STRAIGHT = """
    mov R1 = R0          # 0
    add R2 = R1 R0       # 1
    mul R3 = R2 R2       # 2
    add R1 = R3          # 3
    add R4 = R1 R0       # 4
    exit                 # 5
"""


def test_straight_line_distances():
    # 0: R0 is read next by 1 -> 1; the R1 written is read by 1 -> 1.
    # 1: its R1 is overwritten by 3 before any read -> none; R0 next read by 4 -> 3; R2 read by 2 -> 1.
    # 2: both slots read R2, never read again -> none; R3 read by 3 -> 1.
    # 3: R3 never read again; the new R1 is read by 4 -> 1.
    # 4: nothing read afterwards.
    h = reuse_hints(build_kernel(STRAIGHT), rthld=2)
    assert h.src_distance == ((1,), (-1, 3), (-1, -1), (-1,), (-1, -1), ())
    assert h.dst_distance == ((1,), (1,), (1,), (1,), (-1,), ())
    # near: 1 <= d <= RTHLD = 2; R0 at distance 3 is far
    assert h.src_near == ((True,), (False, False), (False, False), (False,), (False, False), ())
    assert h.dst_near == ((True,), (True,), (True,), (True,), (False,), ())
    assert reuse_hints(build_kernel(STRAIGHT), rthld=3).src_near[1] == (False, True)
    assert h.near_fraction() == pytest.approx(1 / 8)


LOOP = """
    mov R0 = 0           # 0
L:  add R1 = R0          # 1  loop header
    add R2 = R1          # 2
    add R0 = R0 R2       # 3  the R0 read dies here (overwritten)
    @p bra -> L          # 4  back edge
    mov R3 = 1           # 5
    stg = R0 R3          # 6
    exit                 # 7
"""


def test_loop_distances():
    # 0: R0 read by 1 -> 1.    1: R0 next read by 3 -> 2; R1 read by 2 -> 1.
    # 2: R1 is overwritten by 1 around the loop, never read otherwise -> none; R2 read by 3 -> 1.
    # 3: R0 read and overwritten -> none; R2 overwritten by 2 around the loop -> none.  The new R0:
    #    around the back edge 4 -> 1 reads it at distance 2; leaving the loop 5 -> 6 at distance 3:
    #    the nearest reuse decides -> 2.
    # 5: R3 read by 6 -> 1.
    h = reuse_hints(build_kernel(LOOP), rthld=1)
    assert h.src_distance == ((), (2,), (-1,), (-1, -1), (), (), (-1, -1), ())
    assert h.dst_distance == ((1,), (1,), (1,), (2,), (), (1,), (), ())
    assert h.dst_near[3] == (False,) and h.dst_near[0] == (True,)


BRANCH = """
    mov R0 = 1           # 0
    @p bra -> E          # 1
    add R1 = R1          # 2
    add R1 = R1          # 3
    add R2 = R0          # 4  fall-through arm reads R0 at distance 4
    exit                 # 5
E:  add R2 = R0          # 6  taken arm reads it at distance 2
    exit                 # 7
"""

GUARDED = """
    mov R0 = 1           # 0
    @p mov R0 = 2        # 1  may not happen: R0's old value survives
    stg = R0             # 2
    exit
"""

CALL = """
    mov R4 = 1           # 0
    call -> f            # 1
    exit                 # 2
.func f
    add R5 = R4          # 3  read inside the callee
    ret                  # 4
"""


def test_branch_guard_and_call():
    assert reuse_hints(build_kernel(BRANCH)).dst_distance[0] == (2,)
    assert reuse_hints(build_kernel(GUARDED)).dst_distance[0] == (2,)
    assert reuse_hints(build_kernel(GUARDED.replace("@p ", ""))).dst_distance[0] == (-1,)
    assert reuse_hints(build_kernel(CALL)).dst_distance[0] == (2,)


def test_listing1_hints():
    # ld R4,[R0] (4): R0 is next read by "add R0, R0, 4" (8) -> 4; R4 by set.eq (6) -> 2.
    # add R2, R2, 1 (10): the new R2 is read by set.lt (11) -> 1, and again around the loop.
    # set.lt (11) reads R2, R3; around the loop (12, then 4 .. 11) R2 is next read by "add R2" (10) at
    # distance 8 and R3 by the next set.lt (11) at 9: near and far with RTHLD = 8
    h = reuse_hints(listing1(), rthld=DEFAULT_RTHLD)
    assert h.src_distance[4] == (4,) and h.dst_distance[4] == (2,)
    assert h.dst_distance[10] == (1,)
    assert h.src_distance[11] == (8, 9) and h.src_near[11] == (True, False)
    assert h.dst_distance[13] == (-1,) and h.dst_distance[15] == (-1,)  # R6 is never read
    assert DEFAULT_RTHLD == 8


def test_bad_rthld():
    with pytest.raises(RfmodelError):
        reuse_hints(listing1(), rthld=-1)
    with pytest.raises(RfmodelError):
        reuse_hints(listing1(), rthld=True)


def _oracle(k: Kernel, i: int, r: int) -> int:
    """Breadth-first search over the instruction graph for the nearest read of ``r`` after ``i``."""
    end_of = {}
    for b in k.blocks:
        end_of[b.end - 1] = b

    def succ(j: int) -> list[int]:
        if j in end_of:
            return [k.blocks[s].start for s in end_of[j].succs]
        return [j + 1]

    seen = set()
    q = deque((j, 1) for j in succ(i))
    while q:
        j, d = q.popleft()
        if j in seen:
            continue
        seen.add(j)
        x = k.instrs[j]
        if r in x.src:
            return d
        if r in x.dst and x.guard is None:
            continue
        q.extend((t, d + 1) for t in succ(j))
    return -1


@settings(max_examples=80, deadline=None)
@given(random_kernels(), st.integers(0, 12))
def test_matches_brute_force(k, rthld):
    h = reuse_hints(k, rthld)
    for i, x in enumerate(k.instrs):
        killed = set(x.dst) if x.guard is None else set()
        want_src = tuple(-1 if r in killed else _oracle(k, i, r) for r in x.src)
        assert h.src_distance[i] == want_src
        assert h.dst_distance[i] == tuple(_oracle(k, i, r) for r in x.dst)
        assert h.src_near[i] == tuple(1 <= d <= rthld for d in want_src)
