"""Register renumbering against prefetch bank conflicts (LTRFconf): Listing 1 with Figures 9-10 of the
Latency-Tolerant Register File paper, then semantic and conflict invariants on random kernels."""

from __future__ import annotations

import pytest
from helpers_kernels import build_kernel, listing1, synthetic_kernel
from hypothesis import given, settings
from hypothesis import strategies as st
from test_intervals import random_kernels

from rfmodel.compiler import (
    bank_conflicts,
    def_use_chains,
    live_ranges,
    liveness,
    prefetch_sets,
    register_intervals,
    register_live_ranges,
    renumber,
    strands,
)
from rfmodel.compiler.renumber import _reachable_instrs, kernel_facts
from rfmodel.errors import RfmodelError
from rfmodel.workload.suite import builtin_names, load_kernel


def pair_bank(r: int) -> int:
    """Figure 9's register file: four banks of two registers, bank i = {R2i, R2i+1}."""
    return r // 2


# --------------------------------------------------------------------------------------------------
# Listing 1, Figures 9 and 10
#
# Register-intervals (tests/test_intervals.py): #1 = B0, #2 = B1 + add R0/R1, #3 = the rest of B2 + B3,
# #4 = B4, #5 = B5.  Live ranges (webs, ordered by register): 0 R0, 1 R1, 2 R2, 3 R3, 4 R4, 5 R5,
# 6 R6 (mov R6, 1), 7 R6 (mov R6, 0).  Intervals accessing them: R0, R1 -> #1, #2; R2, R3 -> #1, #3;
# R4, R5 -> #2; R6 (1) -> #3; R6 (0) -> #4.  The ICG joins the live ranges of a common interval:
LISTING1_ICG = (
    {1, 2, 3, 4, 5},
    {0, 2, 3, 4, 5},
    {0, 1, 3, 6},
    {0, 1, 2, 6},
    {0, 1, 5},
    {0, 1, 4},
    {2, 3},
    set(),
)
# Colouring order (smallest degree first out, ties highest id first out): 7 (0), 6 (2), then 5, 4, 3,
# 2, 1, 0 -- popped 0, 1, ..., 7.  Select, four banks (green 0, blue 1, yellow 2, red 3):
#   R0: nothing coloured, own bank 0 -> 0.        R1: bank 0 would conflict in #1 and #2 -> 1.
#   R2: banks 2 and 3 are free in #1 -> 2.         R3: -> 3 (the only bank free in #1).
#   R4: in #2 banks 2, 3 are free, used once each; own bank (R4 is in bank 2) -> 2.   R5 -> 3.
#   R6 (1): in #3 banks 0, 1 are free -> 0.       R6 (0): alone in #4, least used bank -> 1.
# Renumbering in program order, a free register of the bank (own register first, else the lowest):
#   R0 -> R0; R1 -> R2 ("R1 is renumbered to R2"); R2 -> R4; R3 -> R6; R4 -> R5 (R4 now holds the old
#   R2, live at the same time); R5 -> R7; R6 (1) -> R0 (R0's value is dead by then); R6 (0) -> R2.
LISTING1_NEW_REG = (0, 2, 4, 6, 5, 7, 0, 2)


def test_listing1_renumbering():
    k = listing1()
    ri = register_intervals(k, 4)
    rn = renumber(k, ri, n_banks=4, bank=pair_bank, n_regs=8)
    assert [(lr.reg, lr.intervals) for lr in rn.live_ranges] == [
        (0, {0, 1}),
        (1, {0, 1}),
        (2, {0, 2}),
        (3, {0, 2}),
        (4, {1}),
        (5, {1}),
        (6, {2}),
        (6, {3}),
    ]
    assert tuple(set(a) for a in rn.icg) == LISTING1_ICG
    assert rn.new_reg == LISTING1_NEW_REG
    assert rn.icg_color == rn.color == (0, 1, 2, 3, 2, 3, 0, 1)
    assert rn.mapping() == {0: (0,), 1: (2,), 2: (4,), 3: (6,), 4: (5,), 5: (7,), 6: (0, 2)}
    assert rn.applied
    # Figure 8: #1 holds R0/R1 and R2/R3 pairs, #2 R0/R1 and R4/R5, #3 R2/R3 -- one conflict each
    assert rn.conflicts_before == (1, 1, 1, 0, 0)
    # Figure 10: every prefetch needs one access per bank
    assert rn.conflicts_after == (0, 0, 0, 0, 0)
    after = prefetch_sets(rn.kernel, ri)
    assert after[1] == frozenset({0, 2, 5, 7})  # R0, R1 -> R2, R4 -> R5, R5 -> R7: banks 0, 1, 2, 3
    assert len({pair_bank(r) for r in after[1]}) == 4
    # the code of Figure 10
    new = rn.kernel.instrs
    assert [(x.dst, x.src) for x in new[:7]] == [
        ((0,), ()),
        ((2,), ()),
        ((4,), ()),
        ((6,), ()),
        ((5,), (0,)),
        ((7,), (2,)),
        ((), (5, 7)),
    ]
    assert [(x.dst, x.src) for x in new[8:12]] == [((0,), (0,)), ((2,), (2,)), ((4,), (4,)), ((), (4, 6))]
    assert new[13].dst == (0,) and new[15].dst == (2,)
    # same program: every read sees the same definitions
    assert def_use_chains(rn.kernel).ud == def_use_chains(k).ud
    assert k.instrs[1].dst == (1,)  # the input is untouched


def test_listing1_register_budget_matters():
    # With only R0..R6 (the registers the code names), bank 3 holds R6 alone.  The colouring is the
    # same, but R5 (colour 3) finds R6 taken by R3's value, live at the same time: it falls back to
    # R1 (bank 0, R0's bank), and interval #2 keeps one conflict.  A conflict-free numbering exists
    # (R0 -> R6, R1 -> R0, R2 -> R2, R3 -> R4, R4 -> R3, R5 -> R5); the heuristic does not find it.
    k = listing1()
    ri = register_intervals(k, 4)
    rn = renumber(k, ri, n_banks=4, bank=pair_bank)
    assert rn.new_reg == (0, 2, 4, 6, 5, 1, 0, 2)
    assert rn.icg_color[5] == 3 and rn.color[5] == 0
    assert rn.conflicts_after == (0, 1, 0, 0, 0) and rn.total_before == 3
    assert def_use_chains(rn.kernel).ud == def_use_chains(k).ud
    assert rn.kernel.max_reg() <= 6


def test_bank_conflicts_definition():
    # "A register-interval has N register bank conflicts if at most N+1 registers reside in the same bank"
    assert bank_conflicts([], 16) == 0
    assert bank_conflicts([0, 1, 2, 3], 16) == 0
    assert bank_conflicts([0, 16, 32, 1], 16) == 2  # R0, R16, R32 share bank 0
    assert bank_conflicts([0, 1, 4, 5], 4, pair_bank) == 1
    assert bank_conflicts(range(8), 4, pair_bank) == 1


def test_values_live_on_entry_keep_their_register():
    k = build_kernel("""
        add R0 = R5 R6        # R5, R6: read before any write, the value comes from outside
        add R1 = R5
        stg = R0 R1 R6
        exit
    """)
    ri = register_intervals(k, 16)
    rn = renumber(k, ri, n_banks=2)
    pinned = {lr.reg for lr in rn.live_ranges if lr.pinned}
    assert pinned == {5, 6}
    assert rn.kernel.instrs[0].src == (5, 6) and rn.kernel.instrs[2].src[2] == 6
    assert def_use_chains(rn.kernel).ud == def_use_chains(k).ud


def test_live_ranges_merge_webs_of_one_register_in_one_interval():
    # R1 carries two unrelated values inside one interval: they are one live range, so renaming can
    # never make the working set larger
    k = build_kernel("""
        mov R1 = 1
        stg = R1
        mov R1 = 2
        stg = R1
        exit
    """)
    ri = register_intervals(k, 16)
    webs = live_ranges(k)
    assert len([w for w in webs if w.reg == 1]) == 2
    lrs = register_live_ranges(k, ri, webs)
    assert [(lr.reg, len(lr.webs)) for lr in lrs] == [(1, 2)]


# --------------------------------------------------------------------------------------------------
# invariants


def check_renumbering(k, ri, rn, n_banks: int, n_regs: int | None = None) -> None:
    new = rn.kernel
    # the program is the same: every read sees the same definitions ...
    assert def_use_chains(new).ud == def_use_chains(k).ud

    # ... the webs map one-to-one (same definitions and reads), each to its new register ...
    def key(kernel, w):  # definitions (with the written slot: dead writes of one instruction), reads
        return w.defs, w.uses, tuple(kernel.instrs[d].dst.index(w.reg) for d in w.defs if d >= 0)

    old_w = {key(k, w): w for w in live_ranges(k)}
    new_w = {key(new, w): w for w in live_ranges(new)}
    assert old_w.keys() == new_w.keys()
    for key, w in old_w.items():
        assert new_w[key].reg == rn.web_reg[w.id]
    # ... and no two values live at once share a register.  Equal reaching definitions imply it (a
    # value clobbered by another one sharing its register would be read with the wrong definition);
    # when all the code is reachable, also as many registers are live at every point of the kernel's
    # own code.  (Inside a subroutine the live set is the union over its call sites, where values of
    # one old register may now sit in two; and unreachable code is left alone.)
    if len(_reachable_instrs(k)) == len(k.instrs):
        main = [i for b in k.blocks if b.func == k.blocks[0].func for i in range(b.start, b.end)]
        for old_l, new_l in ((liveness(k), liveness(new)),):
            assert new_l.n_live_in()[main].tolist() == old_l.n_live_in()[main].tolist()
            assert new_l.n_live_out()[main].tolist() == old_l.n_live_out()[main].tolist()
    # live-on-entry values keep their registers; the register footprint does not grow
    for lr, r in zip(rn.live_ranges, rn.new_reg, strict=True):
        if lr.pinned:
            assert r == lr.reg
    assert new.max_reg() < (n_regs if n_regs is not None else k.max_reg() + 1)
    # conflicts: recomputed, never more in total; no working set grows
    before = prefetch_sets(k, ri)
    after = prefetch_sets(new, ri)
    assert rn.conflicts_before == tuple(bank_conflicts(s, n_banks) for s in before)
    assert rn.conflicts_after == tuple(bank_conflicts(s, n_banks) for s in after)
    assert rn.total_after <= rn.total_before
    assert all(len(a) <= len(b) for a, b in zip(after, before, strict=True))
    if not rn.applied:
        assert new is k


def test_a_function_called_from_dead_code_keeps_its_registers():
    """f (R1 = R0 + R1) is called from the entry and again from code no path reaches (after L4's branch),
    whose return site branches back to L4 and on to the load that reads R9: f's write of R1 reaches that
    read through the dead call (reaching definitions flow through dead code), so R9's live range may not
    take R1 (it took R1 before, and the read's definitions changed); it takes R2."""
    k = build_kernel("""
        add R0 =
        add R0 =
        call -> f
        add R9 =
    L4: bra -> L13
        add R0 =
        call -> f
        bra -> L4
    L13: add R0 =
        ld.global R1 = R9
        exit
    .func f
        add R1 = R0 R1
        ret
    """)
    ri = register_intervals(k, 1)
    rn = renumber(k, ri, n_banks=3)
    check_renumbering(k, ri, rn, 3)
    r9 = next(i for i, ins in enumerate(k.instrs) if ins.dst == (9,))
    assert rn.kernel.instrs[r9].dst == (2,)


@settings(max_examples=120, deadline=None)
@given(random_kernels(), st.integers(1, 12), st.integers(1, 6))
def test_renumbering_invariants_random_kernels(k, n, n_banks):
    ri = register_intervals(k, n)
    rn = renumber(k, ri, n_banks=n_banks)
    check_renumbering(k, ri, rn, n_banks)
    # strands are prefetch regions too
    s = strands(k, n)
    check_renumbering(k, s, renumber(k, s, n_banks=n_banks), n_banks)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(0, 3),
    st.integers(0, 2),
    st.integers(4, 16),
    st.sampled_from([2, 4, 8, 16]),
)
def test_renumbering_invariants_synthetic(seed, depth, ifs, n, n_banks):
    k = synthetic_kernel(seed, depth, ifs)
    ri = register_intervals(k, n)
    rn = renumber(k, ri, n_banks=n_banks)
    check_renumbering(k, ri, rn, n_banks)


def test_one_kernels_facts_serve_every_pass_of_it():
    """LTRFconf's profile renumbers one kernel for many limits and bank counts on the kernel's facts,
    computed once: each pass the same as one that computes them itself; another kernel's are refused."""
    for seed in range(6):
        k = synthetic_kernel(seed, 2, 1)
        facts = kernel_facts(k)
        for n, n_banks in ((4, 2), (8, 4), (16, 8), (6, 16)):
            ri = register_intervals(k, n)
            alone, shared = renumber(k, ri, n_banks=n_banks), renumber(k, ri, n_banks=n_banks, facts=facts)
            assert (shared.new_reg, shared.color, shared.icg_color, shared.applied) == (
                alone.new_reg,
                alone.color,
                alone.icg_color,
                alone.applied,
            )
            assert (shared.conflicts_before, shared.conflicts_after) == (
                alone.conflicts_before,
                alone.conflicts_after,
            )
            assert shared.kernel.instrs == alone.kernel.instrs
    other = synthetic_kernel(99)
    with pytest.raises(RfmodelError, match="another kernel"):
        renumber(other, register_intervals(other, 8), n_banks=4, facts=facts)


def test_balanced_colouring_usually_lowers_conflicts():
    # 40 synthetic kernels, 8 registers per interval, 8 banks: every kernel starts with conflicts
    lowered = same = 0
    for seed in range(40):
        k = synthetic_kernel(seed)
        ri = register_intervals(k, 8)
        rn = renumber(k, ri, n_banks=8)
        assert rn.total_after <= rn.total_before
        if rn.total_before:
            lowered += rn.total_after < rn.total_before
            same += rn.total_after == rn.total_before
    assert lowered >= 30 and lowered > 3 * same


#: the four built-in kernels that take longest to renumber (about 3.5 of the 6.5 CPU-s of all 24): under
#: ``-m slow``; the default run's 20 still lower the conflicts by a third and keep fft_radix16's numbering
SLOW_TO_RENUMBER = ("gemm_micro8x8", "gemm_regblock16x8", "sgemm_tiled", "stencil2d_regtile")


@pytest.mark.parametrize(
    "names",
    [
        pytest.param([n for n in builtin_names() if n not in SLOW_TO_RENUMBER], id="quick"),
        pytest.param(builtin_names(), marks=pytest.mark.slow, id="all"),
    ],
)
def test_builtin_kernels_renumbering(names):
    tot_before = tot_after = 0
    kept = []
    for name in names:
        k = load_kernel(name, "sm_80")
        ri = register_intervals(k, 16)
        rn = renumber(k, ri, n_banks=16)
        if not rn.applied:  # no free register for some live range: the numbering is kept, unchanged
            assert rn.kernel is k and rn.total_after == rn.total_before, name
            kept.append(name)
        assert def_use_chains(rn.kernel).ud == def_use_chains(k).ud, name
        assert list(liveness(rn.kernel).n_live_in()) == list(liveness(k).n_live_in()), name
        assert rn.total_after <= rn.total_before
        tot_before += rn.total_before
        tot_after += rn.total_after
    assert tot_after < 0.8 * tot_before
    assert kept == ["fft_radix16"]  # its 64 registers are all taken by live ranges that overlap
