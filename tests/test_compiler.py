"""Known-answer tests of the compiler analyses (CFG, liveness, webs, reuse distances).

Every expected value below was worked out by hand; the derivations are in the comments.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from helpers_kernels import build_kernel, listing1
from hypothesis import given, settings
from hypothesis import strategies as st

from rfmodel.compiler import (
    back_edges,
    dead_defs,
    dead_operands,
    def_use_chains,
    derived_sequence,
    dominates,
    dominator_tree,
    dominators,
    function_graph,
    interleave_round_robin,
    intervals,
    is_reducible,
    live_ranges,
    liveness,
    loop_depth,
    natural_loops,
    reuse_distances,
    reuse_profile,
    reverse_postorder,
    stack_distances,
    static_reuse,
    trace_reuse,
)
from rfmodel.errors import RfmodelError

# --------------------------------------------------------------------------------------------------
# Listing 1 of the Latency-Tolerant Register File paper
#
# instr  line  code                         block
#   0     1    mov R0, A                    B0
#   1     2    mov R1, B                    B0
#   2     3    mov R2, 0                    B0
#   3     4    mov R3, 100                  B0
#   4     5    L1: ld.local R4, [R0]        B1
#   5     6    ld.local R5, [R1]            B1
#   6     7    set.eq p, R4, R5             B1
#   7     8    @!p bra L2                   B1  -> B2 (fall through), B4 (L2)
#   8     9    add R0, R0, 4                B2
#   9    10    add R1, R1, 4                B2
#  10    11    add R2, R2, 1                B2
#  11    12    set.lt q, R2, R3             B2
#  12    13    @q bra L1                    B2  -> B3 (fall through), B1 (L1)
#  13    14    mov R6, 1                    B3
#  14    15    bra L3                       B3  -> B5
#  15    16    L2: mov R6, 0                B4  -> B5
#  16    17    L3: exit                     B5


def test_listing1_blocks_and_edges():
    k = listing1()
    assert [(b.start, b.end) for b in k.blocks] == [(0, 4), (4, 8), (8, 13), (13, 15), (15, 16), (16, 17)]
    assert [b.succs for b in k.blocks] == [(1,), (2, 4), (3, 1), (5,), (5,), ()]
    assert [b.label for b in k.blocks] == ["", "L1", "", "", "L2", "L3"]


def test_listing1_dominators_and_order():
    k = listing1()
    # DFS from B0 visiting fall-through first: B0 B1 B2 B3 B5, back up, B4.
    # Postorder B5 B3 B2 B4 B1 B0, reversed:
    assert reverse_postorder(k) == [0, 1, 4, 2, 3, 5]
    # B1 is reached only through B0; B2 and B4 only through B1; B3 only through B2;
    # B5 from B3 and B4, whose common dominator is B1.
    idom = dominators(k)
    assert idom == {0: 0, 1: 0, 2: 1, 3: 2, 4: 1, 5: 1}
    assert dominator_tree(idom) == {0: [1], 1: [2, 4, 5], 2: [3], 3: [], 4: [], 5: []}
    assert dominates(idom, 1, 3) and dominates(idom, 0, 5) and dominates(idom, 4, 4)
    assert not dominates(idom, 2, 5) and not dominates(idom, 4, 5)


def test_listing1_loop():
    k = listing1()
    # "@q bra L1" (B2 -> B1) is the only edge whose head dominates its tail.
    assert back_edges(k) == [(2, 1)]
    (lp,) = natural_loops(k)
    # body: the header plus everything reaching the latch B2 without passing B1
    assert lp.header == 1 and lp.body == frozenset({1, 2}) and lp.latches == (2,)
    # leaving: "@!p bra L2" (B1 -> B4) and the fall-through out of B2 (B2 -> B3)
    assert lp.exits == ((1, 4), (2, 3))
    assert lp.depth == 1 and lp.parent is None
    assert loop_depth(k) == {0: 0, 1: 1, 2: 1, 3: 0, 4: 0, 5: 0}


def test_listing1_intervals():
    k = listing1()
    # I(B0) = {B0}: B1 has a predecessor (B2) outside.  B1 heads the next interval:
    # B2 and B4 have only B1 as predecessor, then B3 (pred B2), then B5 (preds B3, B4).
    assert [(iv.header, iv.blocks) for iv in intervals(k)] == [(0, (0,)), (1, (1, 2, 4, 3, 5))]
    # derived graph: I0 -> I1 only, so the next level is one interval: reducible.
    seq = derived_sequence(k)
    assert len(seq) == 2
    assert [(iv.header, sorted(iv.blocks)) for iv in seq[1]] == [(0, [0, 1, 2, 3, 4, 5])]
    assert is_reducible(k)


# Liveness of Listing 1 (GPRs), backwards:
#   B3, B4, B5 read nothing (R6 is written but never read): nothing live there.
#   Let L = live-in of B1.  In B2: in(12) = L + {} (branch reads only q),
#   in(11) = L + {R2, R3}; 10 reads and writes R2, 9 R1, 8 R0 -> in(8) = L + {R0..R3}.
#   out(7) = in(8) + in(15) = L + {R0..R3}; in(6) adds R4, R5; 5 defines R5 and reads R1;
#   4 defines R4 and reads R0 -> in(4) = {R0..R3} + (L - {R4, R5}).  Fixed point: L = {R0..R3}.
R0123 = [0, 1, 2, 3]
LISTING1_LIVE_IN = (
    [[], [0], [0, 1], [0, 1, 2], R0123, [0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5]] + [R0123] * 6 + [[]] * 4
)
LISTING1_LIVE_OUT = (
    [[0], [0, 1], [0, 1, 2], R0123, [0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5]] + [R0123] * 7 + [[]] * 4
)


def test_listing1_liveness():
    k = listing1()
    lv = liveness(k)
    assert [sorted(lv.regs_in(i)) for i in range(17)] == LISTING1_LIVE_IN
    assert [sorted(lv.regs_out(i)) for i in range(17)] == LISTING1_LIVE_OUT
    # block level: B1 and B2 start with R0..R3 live; B3..B5 with nothing
    assert [sorted(lv_bits(x)) for x in lv.block_in] == [[], R0123, R0123, [], [], []]
    assert lv.max_live() == 6  # before "set.eq p, R4, R5"
    assert list(lv.n_live_in()[4:7]) == [4, 5, 6]


def test_listing1_predicate_liveness():
    k = listing1()
    lv = liveness(k, kind="pred")
    # p (0) lives from "set.eq" (6) to "@!p bra" (7); q (1) from "set.lt" (11) to "@q bra" (12)
    live = {i: (sorted(lv.regs_in(i)), sorted(lv.regs_out(i))) for i in range(17)}
    assert live[6] == ([], [0]) and live[7] == ([0], [])
    assert live[11] == ([], [1]) and live[12] == ([1], [])
    assert all(live[i] == ([], []) for i in live if i not in (6, 7, 11, 12))


def test_listing1_dead_bits_and_webs():
    k = listing1()
    ops = dead_operands(k)
    # ld R4,[R0] and ld R5,[R1]: R0/R1 are read again in B2 -> not dead
    assert ops[4] == (False,) and ops[5] == (False,)
    # set.eq p, R4, R5: last reads of both loaded values
    assert ops[6] == (True, True)
    # add R0, R0, 4: the old value dies (overwritten), the register stays live
    assert ops[8] == (True,) and dead_operands(k, per="register")[8] == (False,)
    # set.lt q, R2, R3: both needed in the next iteration
    assert ops[11] == (False, False)
    # R6 is written on both paths and never read
    assert dead_defs(k)[13] == (True,) and dead_defs(k)[15] == (True,)
    assert dead_defs(k)[0] == (False,)
    webs = {(w.reg, w.defs): w for w in live_ranges(k)}
    # R0: the initial value and the incremented one reach the same loads -> one web
    w0 = webs[(0, (0, 8))]
    assert w0.uses == ((4, 0), (8, 0))
    assert w0.instrs == tuple(range(13)) and w0.blocks == (0, 1, 2)
    assert webs[(3, (3,))].uses == ((11, 1),)
    assert webs[(4, (4,))].instrs == (4, 5, 6) and webs[(5, (5,))].instrs == (5, 6)
    # R6: two unrelated dead definitions, two webs without uses
    assert webs[(6, (13,))].uses == () and webs[(6, (15,))].uses == ()
    assert len(live_ranges(k)) == 8


def lv_bits(x: int) -> list[int]:
    return [r for r in range(256) if (x >> r) & 1]


# --------------------------------------------------------------------------------------------------
# a diamond

DIAMOND = """
      isetp p = R0            # 0  B0
      @p bra -> ELSE          # 1  B0 -> B1, B2
      add R1 = R0             # 2  B1
      bra -> JOIN             # 3  B1 -> B3
ELSE: mov R1 = 7              # 4  B2 -> B3
JOIN: stg = R1 R2             # 5  B3
      exit                    # 6
"""


def test_diamond():
    k = build_kernel(DIAMOND)
    assert [b.succs for b in k.blocks] == [(1, 2), (3,), (3,), ()]
    assert dominators(k) == {0: 0, 1: 0, 2: 0, 3: 0}
    assert back_edges(k) == [] and natural_loops(k) == []
    assert [iv.blocks for iv in intervals(k)] == [(0, 1, 2, 3)]
    lv = liveness(k)
    # R2 is read at 5 and never written: live from the entry on.  R0 is read by 0 and 2.
    assert sorted(lv.regs_in(0)) == [0, 2]
    assert sorted(lv.regs_out(1)) == [0, 2]  # union of B1 {R0,R2} and B2 {R2}
    assert sorted(lv.regs_in(4)) == [2] and sorted(lv.regs_out(4)) == [1, 2]
    assert sorted(lv.regs_in(5)) == [1, 2] and lv.live_out[5] == 0
    webs = {w.reg: w for w in live_ranges(k)}
    # both definitions of R1 reach the one store: one web
    assert webs[1].defs == (2, 4) and webs[1].uses == ((5, 0),)
    assert webs[1].blocks == (1, 2, 3)
    # values read but never written get the pseudo-definition -1
    assert webs[2].defs == (-1,) and webs[0].defs == (-1,)
    ch = def_use_chains(k)
    assert ch.ud[(5, 0)] == (2, 4) and ch.ud[(5, 1)] == (-1,)
    assert ch.du[(2, 1)] == ((5, 0),) and ch.du[(4, 1)] == ((5, 0),)


# --------------------------------------------------------------------------------------------------
# nested loops (the shape of the LTRF paper's Figure 5)

NESTED = """
      mov R0 = 0              # 0  B0
OUT:  mov R1 = 0              # 1  B1  outer header
IN:   add R1 = R1 R0          # 2  B2  inner header (self loop)
      isetp p = R1            # 3
      @p bra -> IN            # 4  B2 -> B3, B2
      add R0 = R0             # 5  B3
      isetp q = R0            # 6
      @q bra -> OUT           # 7  B3 -> B4, B1
      exit                    # 8  B4
"""


def test_nested_loops():
    k = build_kernel(NESTED)
    assert back_edges(k) == [(2, 2), (3, 1)]
    outer, inner = natural_loops(k)
    assert (outer.header, outer.body, outer.depth, outer.parent) == (1, frozenset({1, 2, 3}), 1, None)
    assert (inner.header, inner.body, inner.depth, inner.parent) == (2, frozenset({2}), 2, 1)
    assert outer.exits == ((3, 4),) and inner.exits == ((2, 3),)
    assert loop_depth(k) == {0: 0, 1: 1, 2: 2, 3: 1, 4: 0}
    # level 0: {B0}, {B1} (B2 has the self edge), {B2, B3, B4};
    # level 1: {I0}, {I1, I2}; level 2: one node -- one interval per nesting level removed
    seq = derived_sequence(k)
    assert [[sorted(iv.blocks) for iv in lvl] for lvl in seq] == [
        [[0], [1], [2, 3, 4]],
        [[0], [1, 2, 3, 4]],
        [[0, 1, 2, 3, 4]],
    ]
    assert is_reducible(k)
    lv = liveness(k)
    # R0 is live around both loops; R1 only from its reset to the inner loop's compare
    assert sorted(lv.regs_in(1)) == [0] and sorted(lv.regs_in(2)) == [0, 1]
    assert sorted(lv.regs_out(4)) == [0, 1]  # the inner back edge keeps R1
    assert sorted(lv.regs_out(7)) == [0]


IRREDUCIBLE = """
      isetp p = R0            # 0  B0
      @p bra -> Y             # 1  B0 -> B1 (X), B2 (Y)
X:    add R1 = R1             # 2  B1 -> B2
Y:    add R2 = R2             # 3  B2
      @q bra -> X             # 4  B2 -> B3, B1
      exit                    # 5  B3
"""


def test_irreducible():
    k = build_kernel(IRREDUCIBLE)
    # the cycle B1 <-> B2 has two entries: no back edge, no natural loop
    assert back_edges(k) == [] and natural_loops(k) == []
    assert not is_reducible(k)
    seq = derived_sequence(k)
    assert [(iv.header, iv.blocks) for iv in seq[0]] == [(0, (0,)), (1, (1,)), (2, (2, 3))]
    assert len(seq) == 1  # the interval graph does not shrink


# --------------------------------------------------------------------------------------------------
# calls

CALL1 = """
      mov R7 = 9              # 0  B0
      mov R4 = 1              # 1
      mov R5 = 2              # 2
      call -> f               # 3  B0 -> f, returns to B1
      stg = R6 R7             # 4  B1
      exit                    # 5
.func f
      add R6 = R4 R5          # 6  B2
      ret                     # 7  B2 -> B1
"""


def test_call_liveness_flows_through_callee():
    k = build_kernel(CALL1)
    assert k.blocks[0].succs == (2,) and k.blocks[0].call_return == 1 and k.blocks[2].succs == (1,)
    # intraprocedural view: the call block continues at its return block; RET leaves f
    g = function_graph(k, "main")
    assert g.succs == {0: (1,), 1: ()}
    assert function_graph(k, "f").succs == {2: ()}
    lv = liveness(k)
    # f reads R4, R5 and writes R6; R7 passes through f untouched to the store
    assert sorted(lv.regs_in(6)) == [4, 5, 7] and sorted(lv.regs_out(7)) == [6, 7]
    assert sorted(lv.regs_out(3)) == [4, 5, 7]  # live on entering f
    assert sorted(lv.regs_in(1)) == [7] and sorted(lv.regs_in(2)) == [4, 7]
    assert lv.live_in[0] == 0
    webs = {w.reg: w for w in live_ranges(k)}
    assert webs[6].defs == (6,) and webs[6].uses == ((4, 0),)
    assert webs[7].instrs == (0, 1, 2, 3, 4, 6, 7)  # the value lives through the callee


CALL2 = """
      mov R4 = 1              # 0  B0
      mov R7 = 5              # 1
      call -> f               # 2  returns to B1
      stg = R6 R7             # 3  B1: last read of R7
      mov R8 = 3              # 4
      call -> f               # 5  returns to B2
      stg = R6 R8             # 6  B2
      exit                    # 7
.func f
      add R6 = R4 R4          # 8  B3
      ret                     # 9  B3 -> B1, B2
"""


def test_call_context_sensitivity():
    k = build_kernel(CALL2)
    sens = liveness(k)
    # f's summary: GEN = {R4}, everything but R6 passes through.
    # site 1: out(2) = {R4} + (in(B1) = {R4, R6, R7}) - {R6} = {R4, R7}
    assert sorted(sens.regs_out(2)) == [4, 7]
    assert sorted(sens.regs_out(5)) == [4, 8]
    # inside f: union over the two call sites
    assert sorted(sens.regs_in(8)) == [4, 7, 8]
    assert sens.live_in[0] == 0
    # the plain supergraph lets R8 (live after site 2) flow back through f to site 1 and the entry
    insens = liveness(k, context="insensitive")
    assert sorted(insens.regs_out(2)) == [4, 7, 8]
    assert sorted(insens.regs_in(0)) == [8]
    # webs: the two calls share f's definition of R6
    webs = {w.reg: w for w in live_ranges(k)}
    assert webs[6].uses == ((3, 0), (6, 0))


# --------------------------------------------------------------------------------------------------
# guarded writes, dead-operand bits, webs

GUARDED = """
      mov R1 = 5              # 0
      isetp p = R0            # 1
      @p mov R1 = 7           # 2  may not happen
      @p add R3 = R3          # 3
      stg = R1 R3             # 4
      exit                    # 5
"""


def test_guarded_write_does_not_kill():
    k = build_kernel(GUARDED)
    lv = liveness(k)
    # R1 stays live across the guarded write: the value from 0 may reach the store
    assert 1 in lv.regs_in(2) and 1 in lv.regs_out(0)
    assert dead_defs(k)[0] == (False,)
    # R3 is read before any write: live on entry
    assert sorted(lv.regs_in(0)) == [0, 3]
    # the guarded read-modify-write does not overwrite for sure: R3 not dead there
    assert dead_operands(k)[3] == (False,)
    webs = {w.reg: w for w in live_ranges(k)}
    assert webs[1].defs == (0, 2) and webs[1].uses == ((4, 0),)
    assert webs[3].defs == (-1, 3)
    # the guard predicate is a read
    assert 0 in liveness(k, kind="pred").regs_in(2)


DEADOPS = """
      mov R1 = 1              # 0
      mov R2 = 2              # 1
      add R3 = R1 R2          # 2  R1 read again at 4; R2 never again
      add R3 = R3 R3          # 3  reads R3 twice and overwrites it
      add R4 = R1 R3          # 4  last reads of R1 and R3
      stg = R4                # 5
      exit                    # 6
"""


def test_dead_operand_bits():
    k = build_kernel(DEADOPS)
    assert dead_operands(k) == [(), (), (False, True), (True, True), (True, True), (True,), ()]
    # per register: R3 is still live after 3 (the new value)
    assert dead_operands(k, per="register")[3] == (False, False)
    assert dead_defs(k) == [(False,), (False,), (False,), (False,), (False,), (), ()]
    with pytest.raises(RfmodelError):
        dead_operands(k, per="slot")


REUSED = """
      mov R0 = 1              # 0
      stg = R0                # 1
      mov R0 = 2              # 2
      stg = R0                # 3
      exit                    # 4
"""


def test_two_webs_for_one_register():
    k = build_kernel(REUSED)
    webs = [w for w in live_ranges(k) if w.reg == 0]
    assert [(w.defs, w.uses, w.instrs) for w in webs] == [
        ((0,), ((1, 0),), (0, 1)),
        ((2,), ((3, 0),), (2, 3)),
    ]


UNREACHABLE = """
      mov R0 = 0              # 0  B0
L:    add R0 = R0             # 1  B1 (self loop)
      @p bra -> L             # 2  B1 -> B2, B1
      exit                    # 3  B2
      bra -> L                # 4  B3: nothing reaches it
"""


def test_unreachable_block_stays_out_of_the_structure():
    k = build_kernel(UNREACHABLE)
    assert k.blocks[3].succs == (1,)
    assert reverse_postorder(k) == [0, 1, 2]
    assert 3 not in dominators(k)
    (lp,) = natural_loops(k)
    assert lp.body == frozenset({1})  # B3 -> B1 is an edge into the loop, but B3 is unreachable
    assert loop_depth(k)[3] == 0
    assert all(3 not in iv.blocks for iv in intervals(k))
    # liveness still covers it: it would read R0 through the loop
    assert sorted(liveness(k).regs_in(4)) == [0]


def test_errors():
    k = listing1()
    with pytest.raises(RfmodelError, match="no function"):
        function_graph(k, "nope")
    with pytest.raises(RfmodelError, match="register kind"):
        liveness(k, kind="vector")
    with pytest.raises(RfmodelError, match="context"):
        liveness(k, context="maybe")
    with pytest.raises(RfmodelError, match="kind"):
        live_ranges(k, liveness(k, kind="pred"))


# --------------------------------------------------------------------------------------------------
# reuse distances


def test_stack_distance_hand_sequence():
    # a b c a b b d a
    # 4th (a): b, c since the last a -> 2; 5th (b): c, a -> 2; 6th (b): nothing -> 0;
    # 8th (a): b, b, d -> distinct {b, d} -> 2
    prev, sd = stack_distances(np.array([0, 1, 2, 0, 1, 1, 3, 0]))
    assert list(sd) == [-1, -1, -1, 2, 2, 0, -1, 2]
    assert list(prev) == [-1, -1, -1, 0, 1, 4, -1, 3]
    # keys too sparse to index directly go through a relabelling first: same answer
    _, sd_big = stack_distances(np.array([0, 1, 2, 0, 1, 1, 3, 0]) * 10**12 - 7)
    assert list(sd_big) == list(sd)


def test_reuse_rows_dedupe_and_histogram():
    NONE = 255
    src = np.array([[1, 2, NONE], [3, NONE, NONE], [1, 1, NONE], [2, 3, NONE]], np.uint8)
    dst = np.array([[3], [NONE], [1], [NONE]], np.uint8)
    rd = reuse_profile(src, dst)
    # row 0: R1 R2 (reads) R3 (write); row 1: R3; row 2: R1 (read twice and written: one access);
    # row 3: R2 R3
    assert list(rd.reg) == [1, 2, 3, 3, 1, 2, 3]
    assert list(rd.rw) == [1, 1, 2, 1, 3, 1, 1]
    assert list(rd.instr_distance) == [-1, -1, -1, 1, 2, 3, 2]
    # R3 at row 1: nothing between; R1 at row 2: R2, R3 since -> 2; R2 at row 3: R3, R1 -> 2;
    # R3 at row 3: R1, R2 -> 2
    assert list(rd.stack_distance) == [-1, -1, -1, 0, 2, 2, 2]
    counts, cold = rd.histogram(max_distance=1)
    assert cold == 3 and list(counts) == [1, 0, 3]
    assert rd.hit_rate(1) == pytest.approx(1 / 7) and rd.hit_rate(3) == pytest.approx(4 / 7)
    assert rd.hit_rate(3, reads_only=True) == pytest.approx(4 / 6)
    assert list(reuse_distances(src, dst, accesses="read")) == [-1, -1, -1, 2, 2, 2]
    assert list(reuse_distances(src, dst, which="instr")) == [-1, -1, -1, 1, 2, 3, 2]


def test_static_reuse_listing1():
    k = listing1()
    rd = static_reuse(k)
    d = {(int(r), int(g)): int(s) for r, g, s in zip(rd.row, rd.reg, rd.stack_distance, strict=True)}
    # B1: R0 R4 | R1 R5 | R4 R5  -> R4 at instr 6 has R1, R5 in between; R5 has R4
    assert d[(6, 4)] == 2 and d[(6, 5)] == 1
    # B2: R0 | R1 | R2 | R2 R3 -> R2 reused by the next instruction with nothing between
    assert d[(11, 2)] == 0 and d[(11, 3)] == -1
    # per block, the loads' R0 is a first access of B1
    assert d[(4, 0)] == -1
    prog = static_reuse(k, scope="program")
    p = {
        (int(r), int(g)): (int(s), int(i))
        for r, g, s, i in zip(prog.row, prog.reg, prog.stack_distance, prog.instr_distance, strict=True)
    }
    # straight-line: R0 written at 0, then R1 R2 R3 written, then read at 4
    assert p[(4, 0)] == (3, 4)


def test_trace_reuse_interleaved():
    NONE = 255
    src = np.array([[1], [1], [1], [1]], np.uint8)
    trace = SimpleNamespace(warp_ptr=np.array([0, 2, 4]), src=src, dst=np.full((4, 1), NONE, np.uint8))
    alone = trace_reuse(trace)
    assert list(alone.stack_distance) == [-1, 0, -1, 0]
    assert list(alone.instr_distance) == [-1, 1, -1, 1]
    # round robin: w0 w1 w0 w1 -> the other warp's R1 sits between
    mixed = trace_reuse(trace, interleaved=True)
    assert list(mixed.row) == [0, 2, 1, 3]
    assert list(mixed.stack_distance) == [-1, -1, 1, 1]
    assert list(mixed.instr_distance) == [-1, -1, 2, 2]
    assert list(interleave_round_robin([0, 3, 5, 9])) == [0, 3, 5, 1, 4, 6, 2, 7, 8]
    assert list(reuse_distances(src, None, trace.warp_ptr)) == [-1, 0, -1, 0]


def naive_stack_distances(keys):
    out = []
    for t, k in enumerate(keys):
        p = next((j for j in range(t - 1, -1, -1) if keys[j] == k), None)
        out.append(-1 if p is None else len(set(keys[p + 1 : t])))
    return out


def lru_hits(keys, capacity):
    stack: list[int] = []
    hits = []
    for k in keys:
        hits.append(k in stack)
        if k in stack:
            stack.remove(k)
        stack.insert(0, k)
        del stack[capacity:]
    return hits


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=60), st.integers(1, 5))
def test_stack_distance_matches_naive_and_lru(keys, capacity):
    _, sd = stack_distances(np.array(keys, dtype=np.int64))
    assert list(sd) == naive_stack_distances(keys)
    # an access hits an LRU cache of C entries exactly when 0 <= distance < C
    assert [0 <= d < capacity for d in sd] == lru_hits(keys, capacity)
