"""Register-intervals (Algorithms 1 and 2 of the Latency-Tolerant Register File paper) and strands.

Known answers worked out by hand from the paper's own examples (Listing 1 with Figure 8, the
nested loop of Figure 5), then invariants over random kernels and the built-in suite.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from helpers_kernels import build_kernel, listing1, synthetic_kernel
from hypothesis import given, settings
from hypothesis import strategies as st

from rfmodel.compiler import (
    LONG_LATENCY_CLASSES,
    bank_conflicts,
    merge_register_intervals,
    prefetch_sets,
    register_intervals,
    register_intervals_pass1,
    split_blocks,
    strands,
)
from rfmodel.errors import RfmodelError
from rfmodel.ir import BasicBlock, Instr, Kernel, OpClass
from rfmodel.workload.suite import builtin_names, load_kernel

# --------------------------------------------------------------------------------------------------
# Listing 1 with 4 registers per interval (Figure 8)
#
# Blocks (tests/test_compiler.py): B0 = 0-3, B1 = 4-7 (L1), B2 = 8-12, B3 = 13-14, B4 = 15 (L2),
# B5 = 16 (L3).  Pass 1:
#   #1  B0: mov R0..R3 -> {R0, R1, R2, R3} (4, fits).  B1 has a predecessor (B2) outside.
#   #2  B1 heads: ld R4,[R0]; ld R5,[R1]; set.eq R4,R5 -> {R0, R1, R4, R5}.  B2 (only pred B1)
#       joins: add R0, add R1 fit; "add R2" would make 5 -> B2 is cut before instruction 10, the
#       rest becomes a new interval.  B4 (only pred B1): "mov R6" would make 5 -> does not join.
#   #3  B2 from 10: add R2; set.lt R2,R3 -> {R2, R3}; B3 (only pred: that piece) joins with R6.
#       B5 has B4 as a predecessor outside.
#   #4  B4: {R6}.     #5  B5: exit, {}.
# Pass 2: #2 and #3 each have #1/#3 or #2 as other predecessors or too many registers
# ({R0,R1,R4,R5} + {R2,R3,R6} = 7, + {R6} = 5): nothing merges.

LISTING1_INTERVALS = [
    (0, ((0, 4),), {0, 1, 2, 3}),
    (4, ((4, 10),), {0, 1, 4, 5}),
    (10, ((10, 15),), {2, 3, 6}),
    (15, ((15, 16),), {6}),
    (16, ((16, 17),), set()),
]


def test_listing1_register_intervals():
    k = listing1()
    seq = merge_register_intervals(k, 4)
    assert len(seq) == 1  # pass 2 does not reduce the graph
    ri = seq[0]
    assert [(iv.entry, iv.ranges, set(iv.working_set)) for iv in ri.intervals] == LISTING1_INTERVALS
    assert ri.interval_of == (0,) * 4 + (1,) * 6 + (2,) * 5 + (3, 4)
    assert ri.prefetch_points == frozenset({0, 4, 10, 15, 16})
    # interval graph: #2 -> #3 (the cut), #2 -> #4 (@!p bra L2), #3 -> #2 (@q bra L1), #3 -> #5
    assert ri.succs == ((1,), (3, 2), (1, 4), (4,), ())
    assert ri.preds == ((), (0, 2), (1,), (1,), (2, 3))
    # the split kernel: B2 is cut at 10; each interval is whole blocks
    assert [(b.start, b.end) for b in ri.kernel.blocks] == [
        (0, 4),
        (4, 8),
        (8, 10),
        (10, 13),
        (13, 15),
        (15, 16),
        (16, 17),
    ]
    assert [iv.blocks for iv in ri.intervals] == [(0,), (1, 2), (3, 4), (5,), (6,)]
    assert [b.succs for b in ri.kernel.blocks] == [(1,), (2, 5), (3,), (4, 1), (6,), (6,), ()]
    assert ri.merge_passes == 0 and ri.kind == "register-interval" and not ri.restart_on_back_edge
    assert register_intervals(k, 4) == ri
    # the input kernel is not modified
    assert [(b.start, b.end) for b in k.blocks] == [(0, 4), (4, 8), (8, 13), (13, 15), (15, 16), (16, 17)]


def test_listing1_prefetch_bank_conflicts():
    """Four banks of two registers (bank = reg // 2): interval #2 reads R0, R1 (bank 0) and R4, R5
    (bank 2) -- two serial accesses; #3 reads R2, R3 (bank 1) and R6 -- likewise."""
    k = listing1()
    ri = register_intervals(k, 4)
    sets = prefetch_sets(k, ri)
    assert sets[1] == frozenset({0, 1, 4, 5}) and sets[2] == frozenset({2, 3, 6})
    conf = [bank_conflicts(s, 4, lambda r: r // 2) for s in sets]
    assert conf[1] == 1 and conf[2] == 1  # 1 conflict = 2 serial bank accesses
    # interval #1 (B0) also holds two pairs under plain LTRF, but nothing is live at its entry,
    # so the liveness-aware prefetch (LTRF+) reads nothing there; #2 needs only R0, R1 live
    live_sets = prefetch_sets(k, ri, live_only=True)
    assert live_sets[0] == frozenset() and live_sets[1] == frozenset({0, 1})
    assert live_sets[2] == frozenset({2, 3})


def test_listing1_strands():
    """Strands cut where a long-latency result is consumed and at backward branches.

    ld.local R4 (4) and ld.local R5 (5) are long-latency; set.eq (6) reads both: the strand headed
    at B1 ends before 6.  The strand from 6 takes add R0, add R1 of B2 (R0, R1, R4, R5) and is cut at
    "add R2" by the 4-register budget, as for register-intervals.  "@q bra L1" is a backward branch
    into B1, a strand entry.
    """
    k = listing1()
    s = strands(k, 4)
    assert [(iv.entry, iv.ranges, set(iv.working_set)) for iv in s.intervals] == [
        (0, ((0, 4),), {0, 1, 2, 3}),
        (4, ((4, 6),), {0, 1, 4, 5}),
        (6, ((6, 10),), {0, 1, 4, 5}),
        (10, ((10, 15),), {2, 3, 6}),
        (15, ((15, 16),), {6}),
        (16, ((16, 17),), set()),
    ]
    assert s.kind == "strand" and s.restart_on_back_edge
    # ending each strand right after a long-latency operation instead
    p = strands(k, 4, at="producer")
    assert [iv.ranges for iv in p.intervals][:4] == [((0, 4),), ((4, 5),), ((5, 6),), ((6, 10),)]
    # with no long-latency class, strands are the pass-1 intervals (Listing 1 has no backward
    # branch inside an interval)
    plain = strands(k, 4, long_latency=())
    assert [iv.ranges for iv in plain.intervals] == [iv[1] for iv in LISTING1_INTERVALS]
    assert OpClass.LD_GLOBAL in LONG_LATENCY_CLASSES and OpClass.LD_SHARED not in LONG_LATENCY_CLASSES


# --------------------------------------------------------------------------------------------------
# Figure 5: two nested loops


def _kernel(blocks: list[tuple[list[Instr], tuple[int, ...]]], name: str = "k") -> Kernel:
    """A kernel from per-block instruction lists and successor tuples (block ids in list order)."""
    instrs, bbs, start = [], [], 0
    for j, (ins, succs) in enumerate(blocks):
        for x in ins:
            instrs.append(
                Instr(
                    pc=16 * len(instrs),
                    opcode=x.opcode,
                    op_class=x.op_class,
                    dst=x.dst,
                    src=x.src,
                    guard=x.guard,
                    psrc=x.psrc,
                    pdst=x.pdst,
                    targets=x.targets,
                )
            )
        bbs.append(BasicBlock(id=j, start=start, end=start + len(ins), succs=succs, func="main"))
        start += len(ins)
    return Kernel(name=name, instrs=instrs, blocks=bbs, regs_per_thread=32, functions={"main": 0})


def _i(op: str, cls: OpClass = OpClass.INT, dst=(), src=(), **kw) -> Instr:
    return Instr(pc=0, opcode=op, op_class=cls, dst=tuple(dst), src=tuple(src), **kw)


def figure5() -> Kernel:
    """A, B, C of Figure 5, with an exit D.

    A (entry, outer loop header) -> B, D;  B (inner loop header) -> C;  C -> B (inner back edge),
    A (outer back edge).  A's conditional branch leaves the nest; C ends in an indirect branch with
    both back-edge targets.
    """
    return _kernel(
        [
            (
                [
                    _i("IADD3", dst=[0], src=[0]),
                    _i("ISETP", pdst=(0,), src=[0]),
                    _i("BRA", OpClass.BRANCH, guard="P0", psrc=(0,), targets=(7,)),
                ],
                (1, 3),
            ),  # A: 0-2
            ([_i("FADD", OpClass.FP32, dst=[1], src=[1, 0])], (2,)),  # B: 3
            (
                [
                    _i("IADD3", dst=[2], src=[2, 1]),
                    _i("ISETP", pdst=(1,), src=[2]),
                    _i("BRX", OpClass.BRANCH, targets=(3, 0)),
                ],
                (1, 0),
            ),  # C: 4-6
            ([_i("EXIT", OpClass.EXIT)], ()),  # D: 7
        ],
        name="figure5",
    )


def test_figure5_pass2_merges_the_outer_loop():
    """Pass 1: A forms interval 1 (D, reached only from A, joins it).  B cannot join: it has another
    incoming edge, from C.  B forms interval 2 and C (reached only from B) joins it: the inner loop
    is an interval of its own.  Pass 2: interval 2's only predecessor in the interval graph is
    interval 1 (the C -> B edge is inside interval 2), and {R0} + {R0, R1, R2} fits in 4 registers:
    the whole outer loop becomes one register-interval."""
    k = figure5()
    seq = merge_register_intervals(k, 4)
    p1, final = seq[0], seq[-1]
    assert [(iv.entry, iv.ranges, set(iv.working_set)) for iv in p1.intervals] == [
        (0, ((0, 3), (7, 8)), {0}),
        (3, ((3, 7),), {0, 1, 2}),
    ]
    assert p1.succs == ((1,), (0,)) and p1.preds == ((1,), (0,))
    assert len(seq) == 2 and final.merge_passes == 1
    (iv,) = final.intervals
    assert iv.entry == 0 and iv.ranges == ((0, 8),) and set(iv.working_set) == {0, 1, 2}
    assert final.prefetch_points == frozenset({0})
    assert register_intervals_pass1(k, 4) == p1
    assert register_intervals(k, 4, merge=False) == p1


def test_figure5_no_merge_when_registers_do_not_fit():
    # N = 2: C's "IADD3 R2, R2, R1" would make B's list {R0, R1, R2}: C starts interval 3, and no
    # union of two intervals fits in 2 registers.
    k = figure5()
    seq = merge_register_intervals(k, 2)
    assert len(seq) == 1
    got = [(iv.entry, set(iv.working_set)) for iv in seq[0].intervals]
    assert got == [(0, {0}), (3, {0, 1}), (4, {1, 2})]


NEST3 = """
      mov R0 = 0          # 0 B0 preheader
L1:   mov R1 = 0          # 1 B1 outer header
L2:   mov R2 = 0          # 2 B2 middle header
L3:   add R2 = R2 R1      # 3 B3 inner header (self loop)
      @p bra -> L3        # 4
      add R1 = R1 R0      # 5 B4 middle latch
      @p bra -> L2        # 6
      add R0 = R0         # 7 B5 outer latch
      @q bra -> L1        # 8
      exit                # 9 B6
"""


def test_pass2_removes_one_nesting_level_per_repetition():
    # pass 1: {B0} {B1} {B2} and {B3, B4, B5, B6} (every loop header heads an interval; B4, B5, B6
    # each have a single predecessor).  Repetition 1 merges the innermost pair {B2} + {B3..B6},
    # repetition 2 the middle level into {B1}, repetition 3 everything into {B0}.
    k = build_kernel(NEST3)
    seq = merge_register_intervals(k, 16)
    assert [[iv.ranges for iv in ri.intervals] for ri in seq] == [
        [((0, 1),), ((1, 2),), ((2, 3),), ((3, 10),)],
        [((0, 1),), ((1, 2),), ((2, 10),)],
        [((0, 1),), ((1, 10),)],
        [((0, 10),)],
    ]
    assert [ri.merge_passes for ri in seq] == [0, 1, 2, 3]
    assert len(merge_register_intervals(k, 16, max_passes=1)) == 2


# --------------------------------------------------------------------------------------------------
# block splitting, oversize instructions, calls


def test_block_split_by_register_budget():
    k = build_kernel("""
        mov R0 = 0            # 0  {R0}
        add R1 = R0           # 1  {R0, R1}
        add R2 = R1 R0        # 2  {R0, R1, R2} = 3: cut here with N = 2
        add R3 = R2           # 3  new interval {R2, R3}
        add R3 = R3 R2        # 4  {R2, R3}
        stg = R3 R0           # 5  R0 would make 3: cut
        exit                  # 6  no register: stays with 5
    """)
    ri = register_intervals(k, 2)
    ranges = [iv.ranges for iv in ri.intervals]
    assert ranges == [((0, 2),), ((2, 3),), ((3, 5),), ((5, 7),)]
    assert [set(iv.working_set) for iv in ri.intervals] == [{0, 1}, {0, 1, 2}, {2, 3}, {0, 3}]
    # instruction 2 names three registers: alone it exceeds N = 2 (an oversize interval)
    assert len(ri.intervals[1].working_set) == 3


def test_oversize_instruction_keeps_register_free_neighbours():
    k = build_kernel("""
        mma R0 R1 R2 R3 = R4 R5 R6 R7     # 0  8 registers > N = 4
        bra -> X                           # 1  no register: stays with it
    X:  add R0 = R0                        # 2  new block; R0 is in the set, adds nothing -> joins
        exit
    """)
    ri = register_intervals(k, 4)
    assert len(ri.intervals) == 1 and len(ri.intervals[0].working_set) == 8


CALLK = """
      mov R0 = 1          # 0 B0
      add R1 = R0         # 1
      call -> f           # 2   the call alone: B0 is cut before it
      add R2 = R1 R0      # 3 B1 return site
      call -> f           # 4
      stg = R2 R1         # 5 B2
      exit                # 6
.func f
      add R1 = R1 R0      # 7 B3
      ret                 # 8
"""


def test_function_calls_are_intervals_alone():
    k = build_kernel(CALLK)
    ri = register_intervals(k, 16)  # pass 2 would merge everything were it not for the calls
    assert [(iv.entry, iv.ranges, iv.is_call, iv.func) for iv in ri.intervals] == [
        (0, ((0, 2),), False, "main"),
        (2, ((2, 3),), True, "main"),
        (3, ((3, 4),), False, "main"),
        (4, ((4, 5),), True, "main"),
        (5, ((5, 7),), False, "main"),
        (7, ((7, 9),), False, "f"),
    ]
    # supergraph interval edges: call -> callee entry, RET -> both return sites
    assert ri.succs == ((1,), (5,), (3,), (5,), (), (2, 4))
    check_partition(k, ri, 16)


def test_split_blocks():
    k = listing1()
    s = split_blocks(k, [10, 6, 4, 0, 99])
    assert [(b.start, b.end) for b in s.blocks] == [
        (0, 4),
        (4, 6),
        (6, 8),
        (8, 10),
        (10, 13),
        (13, 15),
        (15, 16),
        (16, 17),
    ]
    assert [b.succs for b in s.blocks] == [(1,), (2,), (3, 6), (4,), (5, 1), (7,), (7,), ()]
    assert [b.label for b in s.blocks] == ["", "L1", "", "", "", "", "L2", "L3"]
    assert s.instrs == k.instrs
    assert len(k.blocks) == 6  # untouched
    kc = build_kernel(CALLK)
    sc = split_blocks(kc, [2])
    assert [(b.start, b.end, b.succs, b.call_return) for b in sc.blocks][:2] == [
        (0, 2, (1,), None),
        (2, 3, (4,), 2),
    ]
    assert sc.functions == {"main": 0, "f": 4}


def test_bad_n():
    with pytest.raises(RfmodelError):
        register_intervals(listing1(), 0)
    with pytest.raises(RfmodelError):
        strands(listing1(), 4, at="middle")


# --------------------------------------------------------------------------------------------------
# invariants


def _acc(ins) -> set[int]:
    return set(ins.src) | set(ins.dst)


def check_partition(kernel: Kernel, ri, n: int) -> None:
    """Every invariant a register-interval (or strand) partition must satisfy."""
    ins = kernel.instrs
    count = [0] * len(ins)
    for iv in ri.intervals:
        assert iv.n_instrs > 0
        for i in iv.instrs():
            count[i] += 1
            assert ri.interval_of[i] == iv.id
        # the working set is exactly what the interval's instructions name ...
        ws = set().union(*(_acc(ins[i]) for i in iv.instrs()))
        assert ws == set(iv.working_set)
        # ... at most n registers, unless one instruction alone names them all
        if len(ws) > n:
            assert any(_acc(ins[i]) == ws for i in iv.instrs())
        assert iv.entry == iv.ranges[0][0] or iv.entry in iv.instrs()
    assert count == [1] * len(ins)  # every instruction in exactly one interval
    assert ri.prefetch_points == frozenset(iv.entry for iv in ri.intervals)
    # the split kernel: same instructions, each block inside one interval
    sk = ri.kernel
    assert sk.instrs == kernel.instrs
    for b in sk.blocks:
        assert len({ri.interval_of[i] for i in range(b.start, b.end)}) <= 1
    # single entry: every edge between two intervals (calls and returns included) enters at the entry
    for b in sk.blocks:
        a = ri.interval_of[b.start]
        for s in b.succs:
            t = sk.blocks[s]
            c = ri.interval_of[t.start]
            if c != a:
                assert t.start == ri.intervals[c].entry
                assert c in ri.succs[a] and a in ri.preds[c]
    # each function call is an interval alone
    for b in kernel.blocks:
        if b.call_return is not None:
            iv = ri.intervals[ri.interval_of[b.end - 1]]
            assert iv.is_call and iv.ranges == ((b.end - 1, b.end),)


def check_strands(kernel: Kernel, s, long_latency=LONG_LATENCY_CLASSES) -> None:
    """No backward branch inside a strand except to its entry; no dependence on a long-latency result
    issued in the same strand (forward dataflow of pending results inside each strand)."""
    sk = s.kernel
    preds = sk.preds()
    pend_out: dict[int, set[int]] = {}
    for b in sorted(sk.blocks, key=lambda b: b.start):
        a = s.interval_of[b.start]
        pend: set[int] = set()
        if b.start != s.intervals[a].entry:
            for p in preds[b.id]:
                pb = sk.blocks[p]
                assert s.interval_of[pb.start] == a  # single entry
                assert pb.start < b.start  # forward edge: no backward branch to a non-entry block
                pend |= pend_out[p]
        for i in range(b.start, b.end):
            x = kernel.instrs[i]
            assert not pend & _acc(x), f"instruction {i} depends on a pending long-latency result"
            if x.op_class in long_latency:
                pend |= set(x.dst)
            else:
                pend -= set(x.dst)
        pend_out[b.id] = pend


REG = st.integers(0, 11).map(lambda r: f"R{r}")


@st.composite
def random_kernels(draw) -> Kernel:
    """A random kernel through the test builder: arbitrary forward/backward branches (so possibly
    irreducible), guarded exits, long-latency loads, wide instructions, and calls to a subroutine."""
    n = draw(st.integers(2, 22))
    with_func = draw(st.booleans())
    lines = []
    for i in range(n - 1):
        kind = draw(
            st.sampled_from(
                ["alu"] * 6
                + ["ld", "lds", "st", "bra", "gbra", "gexit", "wide"]
                + (["call"] if with_func else [])
            )
        )
        if kind == "alu":
            srcs = " ".join(draw(st.lists(REG, max_size=3)))
            g = draw(st.sampled_from(["", "", "@p "]))
            lines.append(f"L{i}: {g}add {draw(REG)} = {srcs}")
        elif kind in ("ld", "lds"):
            lines.append(f"L{i}: {'ld.global' if kind == 'ld' else 'lds'} {draw(REG)} = {draw(REG)}")
        elif kind == "st":
            lines.append(f"L{i}: stg = {draw(REG)} {draw(REG)}")
        elif kind in ("bra", "gbra"):
            t = draw(st.integers(0, n - 1))
            lines.append(f"L{i}: {'@q ' if kind == 'gbra' else ''}bra -> L{t}")
        elif kind == "gexit":
            lines.append(f"L{i}: @p exit")
        elif kind == "wide":
            d = " ".join(draw(st.lists(REG, min_size=2, max_size=4)))
            s = " ".join(draw(st.lists(REG, min_size=2, max_size=4)))
            lines.append(f"L{i}: mma {d} = {s}")
        else:
            lines.append(f"L{i}: call -> f")
    lines.append(f"L{n - 1}: exit")
    if with_func:
        lines.append(".func f")
        m = draw(st.integers(1, 5))
        for j in range(m):
            if draw(st.integers(0, 4)) == 0:
                lines.append(f"F{j}: @p bra -> F{draw(st.integers(0, m - 1))}")
            else:
                lines.append(f"F{j}: add {draw(REG)} = {draw(REG)} {draw(REG)}")
        lines.append("ret")
    k = build_kernel("\n".join(lines))
    k.attrs["text"] = "\n".join(lines)  # shown when a property fails
    return k


@settings(max_examples=150, deadline=None)
@given(random_kernels(), st.integers(1, 12))
def test_invariants_random_kernels(k, n):
    seq = merge_register_intervals(k, n)
    for ri in seq:
        check_partition(k, ri, n)
    # pass 2 only merges: each level is a coarsening of the one before
    for a, b in zip(seq, seq[1:], strict=False):
        assert len(b) < len(a)
        for iv in a.intervals:
            assert len({b.interval_of[i] for i in iv.instrs()}) == 1
    s = strands(k, n)
    check_partition(k, s, n)
    check_strands(k, s)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 3), st.integers(0, 3), st.integers(2, 24))
def test_invariants_synthetic_kernels(seed, depth, ifs, n):
    k = synthetic_kernel(
        seed,
        depth,
        ifs,
        regs_per_thread=40,
        mem_mix={"ld_global": 0.4, "st_global": 0.2, "ld_shared": 0.2, "ld_local": 0.2},
        mix={"int": 0.5, "fp32": 0.3, "tensor": 0.1, "fp64": 0.1},
    )
    ri = register_intervals(k, n)
    check_partition(k, ri, n)
    s = strands(k, n)
    check_partition(k, s, n)
    check_strands(k, s)


# --------------------------------------------------------------------------------------------------
# the built-in kernels: static register-interval lengths (the paper's Table 4 is dynamic)


def _reachable_from_entry(kernel: Kernel) -> set[int]:
    seen, work = {0}, deque([0])
    while work:
        b = work.popleft()
        for s in kernel.blocks[b].succs:
            if s not in seen:
                seen.add(s)
                work.append(s)
    return seen


def test_builtin_kernels_interval_lengths(capsys):
    rows = []
    for name in builtin_names():
        k = load_kernel(name, "sm_80")
        ri = register_intervals(k, 16)
        s = strands(k, 16)
        check_partition(k, ri, 16)
        check_partition(k, s, 16)
        check_strands(k, s)
        assert _reachable_from_entry(ri.kernel)  # the split kernel is well formed
        rows.append(
            (
                name,
                len(k.instrs),
                len(ri),
                ri.stats()["mean_length"],
                ri.merge_passes,
                len(s),
                s.stats()["mean_length"],
            )
        )
    n_iv = sum(r[2] for r in rows)
    n_st = sum(r[5] for r in rows)
    # strands are more constrained: at least as many over the suite, and shorter on average
    assert n_st >= n_iv
    assert np.mean([r[6] for r in rows]) < np.mean([r[3] for r in rows])
    with capsys.disabled():
        print("\nstatic lengths, N = 16 (instructions per interval, mean):")
        for r in rows:
            print(
                f"  {r[0]:16s} {r[1]:4d} instrs  {r[2]:3d} intervals {r[3]:6.1f} (pass-2 reps {r[4]})"
                f"  {r[5]:3d} strands {r[6]:5.1f}"
            )


def test_unique_columns_finds_shared_points_bit_for_bit():
    """Known answer: columns 0, 2 and 3 of this matrix are one point, 1 and 4 another (-0.0 is not 0.0: bits
    decide); the distinct columns broadcast back give the matrix; all-distinct columns are not shared."""
    from rfmodel.analytic.throughput import unique_columns

    base = np.array([[1.0, 2.0, 1.0, 1.0, 2.0, -0.0], [3.0, np.inf, 3.0, 3.0, np.inf, 0.0]])
    x = np.tile(base, (1, 50))  # 300 columns: enough to be worth sharing
    xu, inv = unique_columns(x)
    assert xu.shape == (2, 3) and np.array_equal(xu[:, inv], x)
    assert inv[0] == inv[2] == inv[3] and inv[1] == inv[4] and len({inv[0], inv[1], inv[5]}) == 3
    assert unique_columns(np.arange(1000.0).reshape(2, 500)) is None


@pytest.mark.parametrize("design", ["baseline", "malekeh", "ltrf", "cerf"])
def test_the_fixed_point_on_shared_points_is_bit_identical(monkeypatch, design):
    """Every output of an analytic evaluation is the same bit for bit whether the grid's points that share
    all the fixed point's inputs are run once (the default) or each on its own."""
    import rfmodel.analytic.throughput as T
    from rfmodel.evaluate import evaluate

    g = {
        "num_banks": [4, 8, 16, 32],
        "collector_units": [2, 4, 8],
        "regs_per_sm": [32768, 65536, 131072, 262144],
        "warps_per_sm": [32, 48],
    }  # 192 columns, tails too
    a = evaluate(design, "saxpy", "fermi-gtx480", params=g)
    seen = []
    real = T.unique_columns
    monkeypatch.setattr(T, "unique_columns", lambda x: seen.append(real(x)) or None)
    b = evaluate(design, "saxpy", "fermi-gtx480", params=g)
    assert any(s is not None for s in seen)  # the grid has shared points (register counts occupancy ignores)
    for k in a.data_vars:
        if a[k].dtype.kind == "f":
            assert np.array_equal(a[k].values, b[k].values, equal_nan=True), k


def test_set_hit_probabilities_per_distinct_geometry_are_bit_identical(monkeypatch):
    """The set-conflict hit probabilities of a grid of caches, each distinct geometry computed once and
    remembered, equal those computed over the whole grid at once (CERF's shared L1D asks per point)."""
    import rfmodel.analytic.profile as P
    from rfmodel.evaluate import evaluate

    g = {"regs_per_sm": [32768, 65536, 131072], "ways": [2, 4, 8]}
    a = evaluate("cerf", ["saxpy", "bicg_like"], "fermi-gtx480", params=g)
    monkeypatch.setattr(P, "_HIT_PROBABILITY_MEMO", 0)  # every geometry computed in one array call
    b = evaluate("cerf", ["saxpy", "bicg_like"], "fermi-gtx480", params=g)
    for k in a.data_vars:
        if a[k].dtype.kind == "f":
            assert np.array_equal(a[k].values, b[k].values, equal_nan=True), k


def test_the_steady_state_is_the_root_of_the_queues_even_where_they_are_steep(monkeypatch):
    """The interval model's IPC is a fixed point of its queues: at every point of a grid over two GPUs,
    slow banks included, the queues taken at the returned IPC ``y`` allow ``g(y) = y`` (within 10^-7 of
    ``y``; the solver's tolerance is 10^-10).  The grid holds points where ``g`` falls steeper than -3 at
    the root, where a half-damped iteration ``x <- (x + g(x)) / 2`` moves away from it (a two-cycle):
    ``reduce_sum``'s on volta-v100 (24 of its 72).
    The other outputs (the queues' waits, the bounds) are the queues' at that IPC."""
    import inspect

    import rfmodel.analytic.throughput as T
    from rfmodel.evaluate import evaluate

    calls = []
    real = T._steady

    names = list(inspect.signature(real.py_func).parameters)

    def spy(*args):
        real(*args)
        a = dict(zip(names, args, strict=True))
        t = dict(zip(T.STEADY_TABLES, a["tables"], strict=True))
        if not t["touched"].any():
            # the queues read the tables as they are: no list-schedule cell to build
            t["todo"], t["touched"] = np.zeros((0, 0, 0), dtype=np.bool_), np.zeros((0, 0, 0), np.uint8)
            calls.append((a["x"].copy(), a["out"].copy(), tuple(t.values())))

    monkeypatch.setattr(T, "_steady", spy)
    g = {"num_banks": [4, 8, 16], "collector_units": [2, 4, 8], "main_rf_latency_x": [1, 2, 6]}
    for gpu in ("fermi-gtx480", "volta-v100"):
        evaluate("baseline", ["saxpy", "spmv_csr", "sgemm_tiled", "reduce_sum"], gpu, params=g)
    res = np.empty(len(T.STEADY_OUT))

    def g_at(v, x, i, tables):
        T._queues(v, x, i, tables, res)
        return res[0]

    checked = steep = 0
    for x, out, tables in calls:
        ipc = out[0]
        for i in np.flatnonzero((x[0] > 0) & np.isfinite(ipc)):
            y = float(ipc[i])
            assert g_at(y, x, i, tables) == pytest.approx(y, rel=1e-7)
            # and every queue returned is the queues' at that pace (the solver keeps its last evaluations
            # and returns the root's without evaluating it again)
            assert res[1:] == pytest.approx(out[1:, i], rel=1e-6, abs=1e-9)
            slope = (g_at(y * 1.0001, x, i, tables) - g_at(y * 0.9999, x, i, tables)) / (y * 0.0002)
            steep += slope < -3.0
            checked += 1
    assert checked > 400 and steep > 0


def test_broadcast_shape_agrees_with_numpy_on_every_small_combination():
    """The interval model's shape of its inputs (over their distinct shapes) is numpy's broadcast shape, or
    numpy's error, for every combination of up to four small shapes beside numbers and numpy scalars."""
    import itertools

    from rfmodel.analytic.throughput import broadcast_shape

    cases = [(), (1,), (3,), (1, 3), (4, 1), (2, 1, 3), (0,), (4, 0)]
    errors = 0
    for k in range(1, 5):
        for combo in itertools.product(cases, repeat=k):
            values = [np.zeros(c) for c in combo] + [1.0, 2, np.float64(3.0), [5.0]]
            try:
                want = np.broadcast_shapes(*combo, (1,))
            except ValueError:
                with pytest.raises(ValueError):
                    broadcast_shape(values)
                errors += 1
                continue
            assert broadcast_shape(values) == want, combo
    assert errors > 0
