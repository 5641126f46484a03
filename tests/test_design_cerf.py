"""Cache-Emulated Register File (rfmodel/designs/cerf.py): re-indexing known answers, an LRU-fair spill and
refill with hand-computed cycles, LRU-prioritized's dead-register frees and no spills, every register read
served, the analytic terms."""

import numpy as np
import pytest
from test_sim_known import LINE, l1d, l2_path_sm

import rfmodel
from rfmodel.designs.base import get_design
from rfmodel.designs.cerf import locate, reg_address, reg_mem_address, reindex
from rfmodel.errors import SpecError
from rfmodel.sim import simulate_trace, trace_from_warps

CERF = get_design("cerf")


# ------------------------------------------------------------------ re-indexing (section III-C)
def test_reindexing_known_answers():
    """256 sets in 4 tag banks: bits 8:7 of the reg-mem address pick the tag bank, 14:9 the set in it,
    31:15 are the tag; the 15-bit prefix is 0x7FFF, so a reg-mem address is 0xFFFE0000 | addr << 7."""
    # warp 0, R0 (21 registers per thread): register address 0
    assert reindex(0, 0, 21) == {
        "reg_addr": 0,
        "address": 0xFFFE0000,
        "tag_bank": 0,
        "bank_set": 0,
        "set": 0,
        "tag": 0x1FFFC,
    }
    # warp 3, R5: 3 x 21 + 5 = 68 = 0b00_0100_0100: tag bank 0, set 17 in it; 0xFFFE0000 + 68 x 128
    assert reindex(3, 5, 21) == {
        "reg_addr": 68,
        "address": 0xFFFE2200,
        "tag_bank": 0,
        "bank_set": 17,
        "set": 17,
        "tag": 0x1FFFC,
    }
    # warp 47, R20: 1007 = 0b11_1110_1111: tag bank 3, set 59 in it (global set 3 x 64 + 59 = 251); its top
    # two bits 11 go into the tag
    assert reindex(47, 20, 21) == {
        "reg_addr": 1007,
        "address": 0xFFFFF780,
        "tag_bank": 3,
        "bank_set": 59,
        "set": 251,
        "tag": 0x1FFFF,
    }
    # consecutive registers of a warp go to consecutive tag banks
    assert [reindex(2, r, 21)["tag_bank"] for r in range(4)] == [2, 3, 0, 1]
    # a data address keeps its linear mapping: 0x12345680 -> line 0x2468AD: bank 1, set 43 in it, tag 0x2468
    assert locate(0x12345680) == (1, 43, 64 + 43, 0x2468)
    assert reg_address(1, 0, 63) == 63 and reg_mem_address(1) == 0xFFFE0080


def test_every_set_holds_at_most_ways_registers_of_a_full_register_file():
    """1,024 warp registers (48 warps x 21) over 256 sets x 4 ways: at most 4 register addresses per set,
    so LRU-prioritized never needs to evict a register."""
    sets = np.bincount([reindex(w, r, 21)["set"] for w in range(48) for r in range(21)], minlength=256)
    assert sets.max() == 4 and sets.sum() == 48 * 21


def test_presets_and_parameters():
    assert CERF.resolve(CERF.preset("CERF-fair")) == CERF.resolve()
    assert CERF.preset("CERF-prioritized")["policy"] == "lru-prioritized"
    with pytest.raises(SpecError, match="policy"):
        CERF.resolve({"policy": "lru"})
    with pytest.raises(SpecError, match="ways"):
        CERF.resolve({"ways": 3})


# ------------------------------------------------------------------ the simulator, hand-computed


def _tiny_sm():
    """One scheduler, a 4-line array (128 registers), L1D hit 5, L2 50 (no L2 slice: every line from DRAM
    at latency 0 plus one line of bandwidth), integer latency 4, loads 1; no interconnect ports (the known
    answers count the L1D and L2 path alone)."""
    return l2_path_sm(regs_per_sm=128, num_banks=4, max_regs_per_thread=4, regs_per_cta_limit=128, l1d=l1d(4))


def _run(trace, **params):
    p = {"ways": 1, "tag_banks": 4, **params}
    return simulate_trace(trace, _tiny_sm(), "cerf", p)


# direct-mapped, 4 sets: register R of warp 0 in set R mod 4, line n in set n mod 4
SPILL = trace_from_warps(
    [
        [
            ("IADD3", [1], []),  # R1 -> set 1
            ("LDG.E", [2], [1], {"lines": [5 * LINE]}),  # line 5 -> set 1: evicts R1 (LRU-fair: spilled)
            ("IADD3", [3], [1, 2]),  # waits for R2, then refills R1 from L2
        ]
    ],
    regs_per_thread=4,
)


@pytest.mark.parametrize("tag", [0, 1])
def test_lru_fair_a_line_evicts_a_register_that_is_refilled_from_l2(tag):
    """T = tag_cycles.  R1 is written back at 5 + T (issue 0; no source to read, dispatch 1; latency 4; the
    tagging stage T); the load issues then, is dispatched at 7 + T and misses: its line takes set 1 and R1
    is spilled (a store to L2).  Fill at 7 + T + 5 (L1) + 8 (one line of DRAM bandwidth) + 50 (L2) =
    70 + T, R2 written at 70 + T + 1 + T.  The third instruction then finds R1 in L2: its refill leaves at
    71 + 2T and returns 63 cycles later, at 134 + 2T; it issues then, is dispatched at 136 + 2T and writes
    R3 at 140 + 3T: 141 + 3T cycles."""
    sm = _tiny_sm()
    service = int(np.ceil(LINE / sm.mem_bw_bytes_per_cycle))
    assert service == 8
    r = _run(SPILL, tag_cycles=tag)
    c = r.counts
    assert r.metrics["cycles"] == 141 + 3 * tag
    assert (c["spills"], c["refills"], c["refills_at_operand"]) == (1, 1, 0)
    assert c["refill_wait_cycles"] == 63 and r.stalls["register_refill"] >= 63
    assert c["evict_rc"] == 1 and c["evict_cr"] == 1  # the line evicted R1, then R1 evicted the line
    assert c["mem_requests"] == 2 and c["line_misses"] == 1
    # every register read was served: from the array or after its refill
    assert c["reg_reads"] == 3 and c["reg_read_hits"] == 3
    assert c["reads_unwritten"] == 0 and c["reads_after_death"] == 0 and c["queue_full"] == 0
    assert r.metrics["cerf_spills"] == 1 and r.metrics["cerf_refills"] == 1


def test_lru_prioritized_keeps_the_register_and_does_not_cache_the_line():
    """The same program: the line may not evict R1 (the set's one way is a register), so it is not cached
    and nothing spills; the third instruction issues when R2 is written (71 + 2T), 78 + 3T cycles."""
    r = _run(SPILL, policy="lru-prioritized", tag_cycles=1)
    c = r.counts
    assert r.metrics["cycles"] == 78 + 3
    assert (c["spills"], c["refills"], c["line_bypass"]) == (0, 0, 1)
    assert c["reg_read_hits"] == c["reg_reads"] == 3


def test_lru_prioritized_frees_a_dead_register_at_its_last_read():
    """R1's last read (by the second instruction) frees its entry, so the load's line takes it; with a
    later read of R1 the entry stays a register's and the line is not cached."""
    dead = trace_from_warps(
        [[("IADD3", [1], []), ("IADD3", [2], [1]), ("LDG.E", [3], [2], {"lines": [5 * LINE]})]],
        regs_per_thread=4,
    )
    r = _run(dead, policy="lru-prioritized")
    c = r.counts
    assert c["dead_frees"] >= 1 and c["line_bypass"] == 0 and c["line_fills"] == 1 and c["evict_cr"] == 0
    live = trace_from_warps(
        [
            [
                ("IADD3", [1], []),
                ("IADD3", [2], [1]),
                ("LDG.E", [3], [2], {"lines": [5 * LINE]}),
                ("IADD3", [0], [1, 3]),
            ]
        ],
        regs_per_thread=4,
    )
    r2 = _run(live, policy="lru-prioritized")
    assert r2.counts["line_bypass"] == 1 and r2.counts["spills"] == 0
    assert r2.counts["reads_after_death"] == 0


def test_a_load_hit_in_the_array_and_a_dirty_line_written_back():
    """A second load of line 5 hits the array at the L1D's hit latency; a store hit makes the line dirty
    (not written through); when R1 takes its set back the dirty line is written back to L2."""
    tr = trace_from_warps(
        [
            [
                ("LDG.E", [2], [], {"lines": [5 * LINE]}),
                ("LDG.E", [3], [2], {"lines": [5 * LINE]}),
                ("STG.E", [], [3], {"lines": [5 * LINE]}),
                ("IADD3", [1], [3]),  # R1 -> set 1: the dirty line goes
            ]
        ],
        regs_per_thread=4,
    )
    r = _run(tr, policy="lru-prioritized")
    c = r.counts
    assert c["line_hits"] == 1 and c["store_hits"] == 1 and c["writebacks"] == 1
    assert c["l2_acc"] == 2  # the first miss and the write-back (the store hit stayed in the array)
    assert r.metrics["l1d_hit_rate"] == pytest.approx(2 / 3)


def _store_then_read(lines):
    return trace_from_warps(
        [
            [
                ("STG.E", [], [], {"lines": lines}),
                ("IADD3", [3], [1]),  # R1 of warp 0: register address 1, tag bank 1
            ]
        ],
        regs_per_thread=4,
    )


def test_a_line_lookup_takes_its_tag_bank_before_a_register_lookup():
    """The store issues at 0, has no source, is dispatched at 1, and the load/store unit looks its lines up
    one per cycle, at 1 and 2.  The add issues at 1, its collector asks for R1 (tag bank 1) at 2, reads it
    then, is dispatched at 3 and writes R3 at 3 + 4 + T(1) = 8: 9 cycles.  Lines 4 and 6 (tag banks 0 and 2)
    leave tag bank 1 free; lines 4 and 5 put the second lookup in tag bank 1 at cycle 2: the register lookup
    waits one cycle (line lookups first), 10 cycles, one tag-bank conflict caused by a line lookup."""
    free = _run(_store_then_read([4 * LINE, 6 * LINE]))
    busy = _run(_store_then_read([4 * LINE, 5 * LINE]))
    assert free.metrics["cycles"] == 9 and busy.metrics["cycles"] == 10
    assert (free.counts["claim_waits"], free.counts["bank_conflicts"]) == (0, 0)
    assert (busy.counts["claim_waits"], busy.counts["bank_conflicts"]) == (1, 1)
    for r in (free, busy):
        assert r.counts["tag_line_lookups"] == 2 and r.counts["tag_claims_lost"] == 0
    assert busy.metrics["tag_line_waits"] == 1 and busy.metrics["tag_line_lookups"] == 2
    # the same line twice in one instruction is one lookup (the unit coalesces it)
    assert _run(_store_then_read([5 * LINE, 5 * LINE])).counts["tag_line_lookups"] == 1


def test_bank_claims_ring():
    """``claim_bank`` counts claims per (bank, cycle), overwrites a slot whose cycle is past and refuses one
    whose slot still holds a later cycle (more than CLAIM_RING cycles ahead)."""
    from rfmodel.designs.base import CLAIM_MUL, CLAIM_RING, claim_bank, claim_words

    ints = np.zeros(claim_words(2), dtype=np.int64)
    assert claim_bank(ints, 0, 1, 7) and claim_bank(ints, 0, 1, 7)
    assert ints[CLAIM_RING + 7] == 7 * CLAIM_MUL + 2
    assert claim_bank(ints, 0, 1, 7 + CLAIM_RING)  # cycle 7 is past: the slot is reused
    assert ints[CLAIM_RING + 7] == (7 + CLAIM_RING) * CLAIM_MUL + 1
    assert not claim_bank(ints, 0, 1, 7)  # the slot holds a later cycle
    assert ints[7] == 0  # bank 0 untouched


# ------------------------------------------------------------------ invariants on built-in workloads
FEW = ["saxpy", "sgemm_tiled", "bfs_expand"]


def _workload_runs(names, max_warps=8, gpu="fermi-gtx480"):
    from rfmodel.evaluate import _simulation_input, resolve_gpu

    sm = resolve_gpu(gpu)
    for name in names:
        _, tr, kernel = _simulation_input(name, sm, arch="sm_80", seed=0, max_warps=max_warps)
        yield name, (tr, kernel), sm


def _check_invariants(tk, sm, policy):
    tr, kernel = tk
    params = {"policy": policy}
    r = simulate_trace(tr, sm, "cerf", params, program=CERF.program_for(tr, params, sm, kernel))
    assert "compiler liveness" in r.setup.info["cerf_liveness"] or policy == "lru-fair"
    c = r.counts
    assert c["reg_no_room"] == 0 and c["queue_full"] == 0
    # every register read is served: a hit, or a refill; nothing is read that no one wrote
    assert c["reg_read_hits"] + c["refills_at_operand"] + c["reads_unwritten"] == c["reg_reads"]
    assert c["reads_after_death"] == 0
    # every line lookup took its tag bank (none lost from the claims ring)
    assert c["tag_line_lookups"] == c["line_loads"] + c["store_hits"] + c["store_misses"]
    assert c["tag_claims_lost"] == 0
    if policy == "lru-prioritized":
        assert c["spills"] == 0 and c["refills"] == 0 and c["evict_rr"] == 0 and c["evict_rc"] == 0
    else:
        assert c["refills"] <= c["spills"] + c["clean_reg_evictions"]
    return r


@pytest.mark.parametrize("policy", ["lru-prioritized", "lru-fair"])
def test_invariants_on_a_few_builtin_workloads(policy):
    names = [n for n in FEW if n in _suite()]
    assert names
    for _name, tr, sm in _workload_runs(names):
        _check_invariants(tr, sm, policy)


def test_a_last_read_served_before_an_earlier_read_waits_for_it():
    """LRU-prioritized: operand reads of one warp are served out of program order (a store's sources wait in
    the memory collector while a later instruction's are read), so the read that carries the compiler's
    last-read bit may come first. Its entry is freed only when the earlier reads are served
    (``deferred_frees``); freeing it at once left 45 reads of freed registers on bicg_like at two warps."""
    ((_name, tk, sm),) = _workload_runs(["bicg_like"], max_warps=2)
    r = _check_invariants(tk, sm, "lru-prioritized")
    assert r.counts["deferred_frees"] > 0 and r.counts["dead_frees"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["lru-prioritized", "lru-fair"])
def test_invariants_on_every_builtin_workload(policy):
    for _name, tr, sm in _workload_runs(_suite(), max_warps=48):
        _check_invariants(tr, sm, policy)


def _suite():
    from rfmodel.workload.suite import builtin_names

    return builtin_names()


# ------------------------------------------------------------------ analytic
def test_analytic_hit_rate_grows_with_the_lines_registers_leave():
    """The array's L1D lines are what the registers leave: more than a 16 KB L1D, so the model's hit rate
    is at least the baseline's; the tagging stage costs cycles."""
    base = rfmodel.evaluate("baseline", "bfs_expand", "fermi-gtx480", method="analytic")
    ds = rfmodel.evaluate(
        "cerf", "bfs_expand", "fermi-gtx480", method="analytic", params={"tag_cycles": [0, 2]}
    )
    h = ds["l1d_hit_rate"].values.ravel()
    assert np.all(h >= base["l1d_hit_rate"].values.ravel()[0] - 1e-12)
    # the tagging stage lengthens every result's latency (not the collection): it shows where few warps
    # hide latency (one CTA per SM: the simulator's cycles grow 7.6 % from 0 to 2 tag cycles, the model's
    # 4.4 %; with every CTA resident the simulator's grow 1.3 %, the model's not at all)
    ds = rfmodel.evaluate(
        "cerf",
        "kmeans_assign",
        "fermi-gtx480",
        method="analytic",
        params={"tag_cycles": [0, 2], "max_ctas_per_sm": 1},
    )
    c = ds["cycles"].values.ravel()
    assert c[1] > 1.02 * c[0]


def test_shared_lru_stack_of_registers_and_lines_known_answer():
    """One warp: R1 = f(R0); R2 = load(R1) of line 5; R3 = R1 + R2.  The merged stream is R0 R1 | R1 L5 R2 |
    R1 R2 R3 (sources, lines, results), 8 accesses.  Reuse times: registers 1 2 1 5 3 2 8 (a first access at
    position i counts i + 1), the line 4.  Distinct per window of w: sum of min(g, w) / 8: w = 1: 7/8 and
    1/8; w = 2: 12/8 and 2/8; w = 4: 17/8 and 4/8.  An array of 1.75 entries (the w = 2 windows' 14/8)
    holds 1.5 registers and 0.25 lines."""
    from types import SimpleNamespace

    from rfmodel.designs.cerf import SHARED_WINDOWS, shared_footprint, shared_stack

    tr = trace_from_warps(
        [[("IADD3", [1], [0]), ("LDG.E", [2], [1], {"lines": [5 * LINE]}), ("IADD3", [3], [1, 2])]],
        regs_per_thread=4,
    )
    d = shared_stack(tr)[0]
    at = {w: int(np.searchsorted(SHARED_WINDOWS, w)) for w in (1, 2, 4)}
    assert SHARED_WINDOWS[at[2]] == 2 and SHARED_WINDOWS[at[4]] == 4
    assert d[:, at[1]] * 8 == pytest.approx([7, 1])
    assert d[:, at[2]] * 8 == pytest.approx([12, 2])
    assert d[:, at[4]] * 8 == pytest.approx([17, 4])
    regs, lines = shared_footprint(SimpleNamespace(shared_distinct=d, source=None), 1.75)
    assert (float(regs), float(lines)) == (pytest.approx(1.5), pytest.approx(0.25))
    assert shared_footprint(SimpleNamespace(shared_distinct=None, source=None), 4) is None


def test_open_shared_stack_and_refills_known_answer():
    """The stream of the known answer above read as an open one (a first access's entry is never seen
    again within any window): the first accesses R0, R1, R2, R3 and L5 count ``w`` in every window, the
    other register reuse times are 1, 3, 2.  Distinct registers per window: w = 2: (1 + 2 + 2 + 4 x 2) / 8
    = 13/8, w = 4: (1 + 3 + 2 + 16) / 8 = 22/8; lines w / 8.  The reads R0 (first), R1 (reuse 1), R1 (3),
    R2 (2) of 3 instructions: those beyond w = 2 are R0 and the second R1 (2/3 per instruction), beyond
    w = 4 R0 alone (1/3).  The written values, each dirty until its next write or the warp's last access
    (position 7): R1 written at 1, reused after 1 and 3 and last read 2 before the end (longest 3); R2
    written at 4, reused after 2, 1 (2); R3 written at 7 (0): beyond w = 2 R1 is spilled (1/3), beyond
    w = 4 none.  An array of 15/8 entries (the w = 2 windows') refills 2/3 reads per instruction and
    spills 1/3, one of 26/8 entries 1/3 and 0; two warps resident where the stream ran one read it at
    half.  With one register allocated a window holds at most one: 1 + w / 8 entries, an array of 12/8
    has w = 4."""
    from types import SimpleNamespace

    from rfmodel.designs.cerf import SHARED_WINDOWS, resident_refills, shared_refills, shared_stack

    tr = trace_from_warps(
        [[("IADD3", [1], [0]), ("LDG.E", [2], [1], {"lines": [5 * LINE]}), ("IADD3", [3], [1, 2])]],
        regs_per_thread=4,
    )
    d = shared_stack(tr)[1]
    at = {w: int(np.searchsorted(SHARED_WINDOWS, w)) for w in (2, 4)}
    assert d[:2, at[2]] * 8 == pytest.approx([13, 2])
    assert d[:2, at[4]] * 8 == pytest.approx([22, 4])
    assert (d[2:, [at[2], at[4]]] * 3).ravel() == pytest.approx([2, 1, 1, 0])
    prof = SimpleNamespace(shared_misses=d, source=None, n_warps=1, regs_per_thread=4)
    refills, spills = shared_refills(prof, np.array([15 / 8, 26 / 8]))
    assert (refills, spills) == (pytest.approx([2 / 3, 1 / 3]), pytest.approx([1 / 3, 0]))
    assert [float(x) for x in resident_refills(prof, 15 / 4, 2.0, 1.0)] == pytest.approx([2 / 3, 1 / 3])
    # at most one register held (one allocated): 1 + w / 8 entries, 12/8 at w = 4
    assert [float(x) for x in shared_refills(prof, 12 / 8, 1.0)] == pytest.approx([1 / 3, 0])
    prof.regs_per_thread = 1
    assert [float(x) for x in resident_refills(prof, 12 / 8, 1.0, 1.0)] == pytest.approx([1 / 3, 0])
    assert shared_refills(SimpleNamespace(shared_misses=None, source=None), 4) is None


def test_set_associative_shared_array_known_answer():
    """The array's sets, by hand.  Two sets, direct-mapped: a written R0 evicted dirty by a load's line of
    its set is a spill, its next read a refill (held clean), and a line that evicts it again spills
    nothing; a store miss takes no entry; two ways keep the more recently used.  The stream of the known
    answers above, R0 R1 | R1 L5 R2 | R1 R2 R3 (registers at slot x 4 + register), in two sets of one way:
    L5 evicts the written R1 (a spill), R2 the never-written R0 that its read held dirty (a spill), the
    second read of R1 refills it, R3 evicts it clean: 1/3 refills and 2/3 spills per instruction; with two
    ways nothing leaves but L5.  The table reads a point exactly and interpolates between points of the
    same ways in entries per resident warp; a ways value it lacks takes the nearest in log2."""
    from types import SimpleNamespace

    from rfmodel.analytic.profile import WorkloadProfile
    from rfmodel.designs.cerf import (
        SH_LOAD,
        SH_READ,
        SH_STORE,
        SH_WRITE,
        _shared_set_lru,
        shared_set_hits,
        shared_set_refills,
        shared_set_stream,
        shared_set_table,
    )

    def run(acc, sets, ways):
        kind = np.array([a for a, _ in acc], np.int8)
        return _shared_set_lru(kind, np.array([b for _, b in acc], np.int64), sets, ways, 16)

    R, L, S, W = SH_READ, SH_LOAD, SH_STORE, SH_WRITE
    # (the last two: registers and lines held, summed over the accesses, each before its own)
    assert run([(W, 0), (L, 2), (R, 0), (L, 4), (R, 0)], 2, 1) == (2, 1, 0, 2, 0, 0, 2, 2)
    assert run([(W, 0), (S, 2), (R, 0)], 2, 1) == (0, 0, 0, 0, 0, 1, 2, 0)
    assert run([(W, 0), (L, 1), (R, 0)], 2, 1) == (0, 0, 0, 1, 0, 0, 2, 1)  # the line's set is the other
    assert run([(W, 0), (W, 2), (R, 0), (L, 4), (R, 2)], 2, 2) == (1, 2, 0, 1, 0, 0, 6, 1)  # R2, R0 leave
    # a load's line hits once it is held; a store hits a held line and takes none on a miss
    assert run([(L, 2), (L, 2), (S, 2), (S, 4), (L, 4)], 2, 2) == (0, 0, 1, 3, 1, 2, 0, 4)
    tr = trace_from_warps(
        [[("IADD3", [1], [0]), ("LDG.E", [2], [1], {"lines": [5 * LINE]}), ("IADD3", [3], [1, 2])]],
        regs_per_thread=4,
    )
    kind, entry = shared_set_stream(tr, None, 1)
    assert kind.tolist() == [R, W, R, L, W, R, R, W]
    assert entry.tolist() == [0, 1, 1, 5, 2, 1, 2, 3]
    t = shared_set_table(tr, [(1, 2, 1), (2, 4, 1)], {1.0: None})
    assert (t[:, 3:5] * 3).ravel() == pytest.approx([1, 2, 0, 0])
    assert t[:, 5:7].ravel().tolist() == [0, 0, 0, 0]  # L5 is loaded once: no hit
    # entries held before each of the 8 accesses, of 2 and of 4: one way 0 1 2 2 1 1 2 2 registers and
    # 0 0 0 0 1 1 0 0 lines; two ways registers 0 1 2 2 2 3 3 3, lines 0 0 0 0 1 1 1 1
    assert (t[:, 7:] * 8).ravel() == pytest.approx([11 / 2, 2 / 2, 16 / 4, 4 / 4])
    tab = np.array(
        [
            [4, 1024, 32, 0.10, 0.20, 0.5, 0.4],
            [4, 1024, 16, 0.02, 0.04, 0.8, 0.7],
            [1, 1024, 32, 0.5, 0.6, 0.1, 0.1],
        ]
    )
    prof = SimpleNamespace(shared_sets=tab, source=None, hit_rate_factor=None)
    prof.scaled_hits = lambda h: WorkloadProfile.scaled_hits(prof, h)
    refills, spills = shared_set_refills(prof, [4, 4, 4, 8, 1], 1024, [32, 16, 24, 32, 32])
    # entries per warp 32 and 64 tabulated; 1024 / 24 = 42.7 lies a third of the way from 32 to 64
    assert refills == pytest.approx([0.10, 0.02, 0.10 - (0.08 / 3), 0.10, 0.5])
    assert spills == pytest.approx([0.20, 0.04, 0.20 - (0.16 / 3), 0.20, 0.6])
    every, loads = shared_set_hits(prof, 4, 1024, [32, 24])
    assert every == pytest.approx([0.4, 0.4 + 0.3 / 3]) and loads == pytest.approx([0.5, 0.5 + 0.3 / 3])
    assert shared_set_refills(SimpleNamespace(shared_sets=None, source=None), 4, 8, 1) is None


def test_resident_footprint_at_another_occupancy_and_at_most_the_allocated_registers():
    """The profile's shared stack was taken with ``warps0`` warps resident; ``warps`` of them share the array
    as ``warps0`` would share ``lines x warps0 / warps``, and hold at most their allocated registers.  The
    stack of the known answer above (1.75 entries: 1.5 registers, 0.25 lines) with 2 warps resident: one
    warp's array of 0.875 entries is the other's half, so 2 warps of 3.5 entries hold 3.0 and 0.5; with 4
    registers a thread and one warp, at most 4 registers.  A stream of fewer warps than the SM's occupancy
    is read at its own warps (the same answer with ``warps0`` 2 and one sampled warp)."""
    from types import SimpleNamespace

    from rfmodel.designs.cerf import resident_footprint, shared_stack

    tr = trace_from_warps(
        [[("IADD3", [1], [0]), ("LDG.E", [2], [1], {"lines": [5 * LINE]}), ("IADD3", [3], [1, 2])]],
        regs_per_thread=4,
    )
    prof = SimpleNamespace(shared_distinct=shared_stack(tr)[0], source=None, regs_per_thread=4, n_warps=1)
    regs, lines = resident_footprint(prof, 3.5, 2.0, 1.0)
    assert (float(regs), float(lines)) == (pytest.approx(3.0), pytest.approx(0.5))
    # an SM whose own occupancy is 2 warps, but the profile sampled one: its stream ran one warp at a time
    regs, lines = resident_footprint(prof, 3.5, 2.0, 2.0)
    assert (float(regs), float(lines)) == (pytest.approx(3.0), pytest.approx(0.5))
    regs, lines = resident_footprint(prof, 1.75, 1.0, 1.0)
    assert (float(regs), float(lines)) == (pytest.approx(1.5), pytest.approx(0.25))
    prof.regs_per_thread = 1  # one register a warp allocated: the stack's 1.5 are capped
    assert float(resident_footprint(prof, 1.75, 1.0, 1.0)[0]) == pytest.approx(1.0)


def test_analytic_array_at_half_the_occupancy_leaves_the_lines_the_simulator_keeps():
    """``is_aes`` on `volta-v100` at 16,384 registers runs 16 warps where the profile's stream ran 32: read
    at 32 warps' occupancy the shared stack gave the registers 495 of the 512 entries and the lines an L1D
    hit rate of 0.10 (IPC 0.63); the simulator holds 289 registers and hits 0.82 (IPC 1.06).  Neither
    engine refills a register here: the open shared stack's windows (read at 1,024 entries, the stream's
    32 warps) would hold 949 registers, but those 32 warps allocate 704 (``WorkloadProfile.shared_refills``'s
    ``max_regs``; without it the model refilled 0.011 reads per instruction and ran at 0.86)."""
    kw = {"params": {"regs_per_sm": [16384]}, "max_warps": None}
    ana = rfmodel.evaluate("cerf", "is_aes", "volta-v100", **kw)
    sim = rfmodel.evaluate("cerf", "is_aes", "volta-v100", method="simulate", **kw)
    ha, hs = float(ana["l1d_hit_rate"].values.ravel()[0]), float(sim["l1d_hit_rate"].values.ravel()[0])
    assert abs(ha - hs) < 0.1
    ra, rs = (float(d["cerf_reg_entries"].values.ravel()[0]) for d in (ana, sim))
    assert abs(ra / rs - 1.0) < 0.15
    assert float(ana["ipc"].values.ravel()[0]) > 0.9 * float(sim["ipc"].values.ravel()[0])
    assert float(ana["cerf_refills"].values.ravel()[0]) == 0.0


def test_tag_conflicts_known_answer():
    """r = 2 lookups, w = 1 write sharing the one read/write port, l = 0.5 line lookups per instruction, 4
    tag banks, IPC 1: the banks' utilization is (2 + 1 + 0.5) / 4 = 0.875, so 2 x 0.875 = 1.75 lookups wait
    beyond the instruction's own serialization (0.25 here); 2 x 0.5 / 4 = 0.25 of them behind a line lookup.
    Separate write ports take the writes out: (2 + 0.5) / 4; at IPC 4 every bank-cycle is taken (1)."""
    from types import SimpleNamespace

    from rfmodel.designs.cerf import tag_conflicts

    prof = SimpleNamespace(
        reads_per_instr=2.0,
        writes_per_instr=1.0,
        ser_excess=lambda b, p, slots: 0.25 + 0 * np.asarray(b, dtype=float),
    )
    sm = SimpleNamespace(bank_read_ports=0, bank_rw_ports=1, bank_write_ports=0)
    c, line = tag_conflicts(prof, sm, 4, 1.0, 0.5)
    assert (float(c), float(line)) == (pytest.approx(0.25 + 1.75), pytest.approx(0.25))
    sep = SimpleNamespace(bank_read_ports=1, bank_rw_ports=0, bank_write_ports=1)
    assert float(tag_conflicts(prof, sep, 4, 1.0, 0.5)[0]) == pytest.approx(0.25 + 2 * 2.5 / 4)
    c4, line4 = tag_conflicts(prof, sm, 4, 4.0, 0.5)
    assert (float(c4), float(line4)) == (pytest.approx(2.25), pytest.approx(1.0))


def test_tag_conflicts_with_two_ports_and_sub_core_banks():
    """Two read/write ports a bank: a lookup waits when both are held, Erlang's C of two servers at offered
    load a = (2 + 1 + 0.5) / 4 = 0.875, a^2 / (2 + a) = 0.2663 (not the chance of one busy port, a / 2 =
    0.4375), behind a line lookup when its bank-cycle has one and the other port is held (0.125 a); an
    instruction's own lookups spread over the banks of its sub-core (``pool_banks``): the
    serialization table is read at 2 banks of the SM's 8 (here 1 / banks)."""
    from types import SimpleNamespace

    from rfmodel.designs.cerf import tag_conflicts

    prof = SimpleNamespace(
        reads_per_instr=2.0,
        writes_per_instr=1.0,
        ser_excess=lambda b, p, slots: 1.0 / np.asarray(b, dtype=float),
    )
    two = SimpleNamespace(bank_read_ports=0, bank_rw_ports=2, bank_write_ports=0)
    a = 3.5 / 4
    c, line = tag_conflicts(prof, two, 4, 1.0, 0.5)
    # a lookup held back by a line lookup: its bank-cycle has one (0.5 / 4) and the other port is taken too
    # (Erlang's C of one server at a: a), as the simulator counts a claim's wait only where no port is left
    assert float(c) == pytest.approx(0.25 + 2 * a * a / (2 + a))
    assert float(line) == pytest.approx(2 * 0.125 * a)
    a8 = 3.5 / 8
    c8, _ = tag_conflicts(prof, two, 8, 1.0, 0.5, pool_banks=2)
    assert float(c8) == pytest.approx(0.5 + 2 * a8 * a8 / (2 + a8))


def test_bank_claims_queue_before_the_reads_in_the_shared_model():
    """Claims of 0 are the model itself (bit for bit); more claims per instruction raise the read wait and
    the collection time, and the bank bound counts them (IPC, the fixed point of those queues, is not
    checked step by step: it moves by 0.1 % here)."""
    from rfmodel.analytic.model import sm_interval
    from rfmodel.analytic.throughput import coefficient_defaults
    from rfmodel.evaluate import resolve_gpu, workload_profile

    sm = resolve_gpu("fermi-gtx480")
    prof = workload_profile("spmv_csr", sm, max_warps=16, share=False)
    coef = coefficient_defaults()
    grid = {"num_banks": 4}
    base = sm_interval(prof, sm, grid, coef)
    assert float(sm_interval(prof, sm, grid, coef, bank_claims=0.0)["ipc"]) == float(base["ipc"])
    waits, tcs, rates = [], [], []
    for c in (0.0, 0.5, 1.0):
        m = sm_interval(prof, sm, grid, coef, bank_claims=c)
        waits.append(float(m["bank_wait"]))
        tcs.append(float(m["t_collect"]))
        rates.append(float(m["rate_bank"]))
    assert waits[0] < waits[1] < waits[2] and tcs[0] < tcs[1] < tcs[2]
    r, w = prof.reads_per_instr, prof.writes_per_instr
    assert rates[2] == pytest.approx(4 / (r + w + 1.0))


def test_tag_conflicts_under_monte_carlo_and_more_tag_banks():
    """The workload factors arrive as arrays over samples; more tag banks spread the lookups: fewer
    conflicts and fewer waits behind line lookups."""
    unc = {"mem_fraction": ("normal", 0.1), "reads_per_instr": ("normal", 0.1)}
    ds = rfmodel.evaluate(
        "cerf",
        "saxpy",
        "fermi-gtx480",
        method="montecarlo",
        params={"tag_banks": [4, 16]},
        uncertainty=unc,
        samples=8,
        seed=1,
    )
    for k in ("tag_bank_conflicts", "tag_line_waits"):
        v = ds[k].values.ravel()
        assert np.all(np.isfinite(v)) and v[0] > v[1] > 0, k


#: the simulator's full-share counts on fermi-gtx480 against the model's (docs/designs.md, "Cache-Emulated
#: Register File"): register lookups that waited for their tag bank, and those a line lookup held back.
#: The counts are the whole share's (the model scales a ``max_warps`` cut to it, the simulator does not), so
#: the default run keeps the two quick kernels and ``-m slow`` adds the two long ones (about 13 and 10 CPU-s).
TAG_WORKLOADS = (
    "saxpy",
    "spmv_csr",
    pytest.param("kmeans_assign", marks=pytest.mark.slow),
    pytest.param("sgemm_tiled", marks=pytest.mark.slow),
)


@pytest.mark.parametrize("name", TAG_WORKLOADS)
def test_tag_conflicts_model_against_the_simulator(name):
    """Within 15 % for the tag-bank conflicts and 30 % for the waits behind line lookups (measured: +5.5,
    +4.8, +3.2, +11.4 % and -22.2, -9.1, -20.7, -6.8 %); bfs_expand, left out, is 34 % low on both (its
    loads come in bursts the utilization does not see)."""
    sim = rfmodel.evaluate("cerf", name, "fermi-gtx480", method="simulate")
    ana = rfmodel.evaluate("cerf", name, "fermi-gtx480", method="analytic")

    def v(ds, k):
        return float(ds[k].values.ravel()[0])

    assert v(ana, "tag_line_lookups") == pytest.approx(v(sim, "tag_line_lookups"), rel=0.1), name
    assert v(ana, "tag_bank_conflicts") == pytest.approx(v(sim, "tag_bank_conflicts"), rel=0.15), name
    assert v(ana, "tag_line_waits") == pytest.approx(v(sim, "tag_line_waits"), rel=0.3), name
    # LRU-fair's registers held, from one LRU stack of registers and lines (measured: -25, +4, +7, +11 %)
    assert v(ana, "cerf_reg_entries") == pytest.approx(v(sim, "cerf_reg_entries"), rel=0.3), name


def test_optimizer_searches_ways_tag_banks_and_policy_not_the_tag_stage_latency():
    from rfmodel.optimize.problem import default_design_params

    names = default_design_params("cerf")
    assert {"ways", "tag_banks", "policy"} <= set(names) and "tag_cycles" not in names


# ------------------------------------------------------------------ storage and Table III (E-18, E-21)
def test_storage_is_130_375_kb_against_about_144_kb():
    """Section III-E: 1,024 lines of 128 B, 4-way (256 sets): 17-bit tags (32 - 7 - 8) = 2.125 KB, 2 state
    bits per entry = 0.25 KB; the baseline's 128 KB register file, 16 KB L1D (32 sets: 20-bit tags) and its
    tags and state bits make about 144 KB."""
    from rfmodel.designs.cerf import storage_kb

    s = storage_kb(1024, 4)
    assert (s["tag_bits"], s["tag_kb"], s["state_kb"], s["total_kb"]) == (17, 2.125, 0.25, 130.375)
    base = 128.0 + storage_kb(128, 4)["total_kb"]
    assert storage_kb(128, 4)["tag_bits"] == 20
    assert base == pytest.approx(144.34, abs=0.01)  # 128 + 16 + 0.3125 + 0.03125
    assert abs(base - 144.0) < 0.5 and s["total_kb"] < base


def test_table_iii_structures_and_l2_events():
    from rfmodel.designs.cerf import TABLE_III, table3_structure

    s = table3_structure("x", "integrated_tag", tag_banks=4)
    assert (s.read_pj, s.write_pj, s.leakage_mw) == (0.75, 0.78, pytest.approx(4 * 0.32))
    rf = table3_structure("x", "integrated", capacity_bytes=128 * 1024)  # 32 banks of 4 KB, 8 per access
    assert (rf.read_pj, rf.leakage_mw) == (pytest.approx(8 * 4.62), pytest.approx(32 * 1.78))
    assert TABLE_III["integrated"] == TABLE_III["rf"]
    ds = rfmodel.evaluate("cerf", "spmv_csr", "fermi-gtx480", method="simulate", max_warps=8)
    rs, ws = ds.structure_reads.values.ravel(), ds.structure_writes.values.ravel()
    ev = {str(k): (float(r), float(w)) for k, r, w in zip(ds.structure.values, rs, ws, strict=True)}
    assert ev["l2_tag"][0] == ev["l2_data"][0] + ev["l2_data"][1] > 0  # every L2 access reads its tags
    names = list(ds.structure.values)
    l2 = np.asarray(ds.dynamic_energy_pj.values).ravel()[names.index("l2_data")]
    assert l2 == pytest.approx(ev["l2_data"][0] * 8 * 5.52 + ev["l2_data"][1] * 8 * 3.95)


def test_tag_array_area_counts_every_tag_bank_and_the_l1d_structures_take_the_technology_layers():
    """Table III gives no area.  The integrated tag array is the technology layer's tag array of one tag
    bank (64 sets x 4 ways of 17-bit tags and 2 state bits at 4 banks) times the banks, so its area grows
    with them; the separate L1D (the unified design's ``separate`` partition, the baseline's L1D) takes the
    area of a 16 KB SRAM array of 1,024-bit lines and of its tags (32 sets x 4 ways, 20-bit tags); with
    ``launch`` the lines are the banks' rows (no data area of their own)."""
    from rfmodel.designs.cerf import tag_area_mm2
    from rfmodel.tech.array import array_cost
    from rfmodel.tech.structures import tag_array

    ds = rfmodel.evaluate("cerf", "saxpy", "fermi-gtx480", params={"tag_banks": [1, 4, 16]})
    a = ds["area_mm2"].sel(structure="cerf_tag").values.ravel()
    one = tag_array(256, 4, 17, node_nm=45, banks=4).area_mm2  # one bank of 64 sets
    assert a[1] == pytest.approx(4 * one) and a[0] < a[1] < a[2]
    assert tag_area_mm2(128 * 1024, 4, {}, banks=4) == pytest.approx(4 * one)
    un = rfmodel.evaluate("unified", "saxpy", "fermi-gtx480", params={"partition": ["launch", "separate"]})
    tag = un["area_mm2"].sel(structure="l1d_tag").values.ravel()
    data = un["area_mm2"].sel(structure="l1d_data").values.ravel()
    assert tag[1] > 0 and tag[1] == pytest.approx(tag_array(32, 4, 20, node_nm=45).area_mm2)
    assert data[0] == 0 and data[1] > 0
    assert data[1] == pytest.approx(array_cost("sram-hp", 45, 16, 1024).area_mm2)
    assert tag_area_mm2(0, 4, {}) == 0.0


def test_a_last_read_served_after_a_later_write_frees_nothing():
    """The simulator lets a later instruction's write land before an earlier instruction's read of the same
    register is served (no write-after-read check).  A marked last read served that late read a value that
    is already replaced: LRU-prioritized must not free the new one (`stale_last_reads`).  On saxpy and
    bfs_expand with every warp slot filled (48) no register is then read after its entry was freed; before
    the write order was kept, saxpy had 3 such reads and bfs_expand 110."""
    for _name, (tr, kernel), sm in _workload_runs(["saxpy", "bfs_expand"], max_warps=48):
        params = {"policy": "lru-prioritized"}
        r = simulate_trace(tr, sm, "cerf", params, program=CERF.program_for(tr, params, sm, kernel))
        assert r.counts["reads_after_death"] == 0
        assert r.counts["stale_last_reads"] > 0  # the case happens here


def test_held_lines_are_a_time_average_from_an_empty_array(monkeypatch):
    """Known answers of ``held_line_entries``: the lines the registers leave, capped by the lines the
    workload keeps, averaged over a run that touches its ``D`` distinct lines evenly from an empty array
    (``L (1 - L / 2D)``; ``D / 2`` when all fit)."""
    from types import SimpleNamespace

    from rfmodel.designs.cerf import held_line_entries

    hist = np.array([50, 0, 0, 200])  # 200 loads' cold misses: 200 distinct lines in the sampled profile
    prof = SimpleNamespace(
        nwa_stack_hist=np.stack([hist, hist]), n_instrs=1000, attrs={}, shared_distinct=None, source=None
    )
    # every distinct line fits in the 900 entries 100 registers leave: half of them on average
    assert held_line_entries(prof, 1000.0, 100.0, True) == pytest.approx(100.0)
    # 150 entries left: reached at 150/200 of the run, 150 (1 - 150/400) = 93.75 on average
    assert held_line_entries(prof, 1000.0, 850.0, True) == pytest.approx(93.75)
    # the profile samples a third of the SM's share: three times the distinct lines
    scaled = SimpleNamespace(**{**vars(prof), "attrs": {"sampled_instrs": 1000}, "n_instrs": 3000})
    assert held_line_entries(scaled, 1000.0, 850.0, True) == pytest.approx(150 * (1 - 150 / 1200))
    # ... unless its hit tables come from the whole share (``sched_share``): then they count its lines
    whole = SimpleNamespace(**{**vars(scaled), "attrs": {"sampled_instrs": 1000, "sched_share": True}})
    assert held_line_entries(whole, 1000.0, 850.0, True) == pytest.approx(93.75)
    # and at most what the sets the lines fall in hold: here 40 lines at any set count with a free way, and
    # a set of 4 ways has none with probability 0.85^4 (850 of 1000 entries hold registers)
    sets = SimpleNamespace(**{**vars(prof), "set_fill": np.full((17, 16), 40.0)})
    assert held_line_entries(sets, 1000.0, 850.0, True, ways=4) == pytest.approx(40.0 * (1 - 0.85**4))
    assert held_line_entries(sets, 1000.0, 850.0, True) == pytest.approx(93.75)  # without ways: no bound
    # LRU-fair keeps the shared stack's lines (here 120 of them), not every distinct line
    kept = (np.asarray(300.0), np.asarray(120.0))
    monkeypatch.setattr(rfmodel.designs.cerf, "shared_footprint", lambda p, c: kept)
    assert held_line_entries(prof, 1000.0, 100.0, False) == pytest.approx(120 * (1 - 120 / 400))


def test_analytic_utilization_is_not_pinned_at_one():
    """The array's time-averaged utilization follows the run (the simulator's definition): a kernel that
    touches few lines leaves much of the array empty in both engines; before, the model counted every entry
    the registers leave as a held line (1.0 at every point)."""
    a = rfmodel.evaluate("cerf", "fft_radix16", "fermi-gtx480", method="analytic")
    s = rfmodel.evaluate("cerf", "fft_radix16", "fermi-gtx480", method="simulate")
    ua, us = float(a["cerf_utilization"].values.ravel()[0]), float(s["cerf_utilization"].values.ravel()[0])
    assert ua < 0.8 and us < 0.8
    assert abs(ua - us) < 0.15


def test_analytic_array_where_the_lines_fall_in_few_sets_and_stores_take_none():
    """``pb_bicg_1`` on `volta-v100`: its loads walk a matrix column, so their lines fall in 88 of the
    array's 512 sets, and it stores each iteration to a line no load brings (the array writes a store miss
    through without a line).  Simulated: utilization 0.137, L1D hit rate 0.332, 16,320 load hits and
    16,448 misses.  Before, the model held a line in every entry the registers left (0.944) and let the
    stores allocate (hit rate 0.665, 32,703 hits)."""
    a = rfmodel.evaluate("cerf", "pb_bicg_1", "volta-v100", method="analytic")
    s = rfmodel.evaluate("cerf", "pb_bicg_1", "volta-v100", method="simulate")
    one = {
        k: (float(a[k].values.ravel()[0]), float(s[k].values.ravel()[0]))
        for k in ("cerf_utilization", "l1d_hit_rate", "cerf_l1d_hits", "cerf_l1d_misses")
    }
    assert one["cerf_utilization"][0] == pytest.approx(one["cerf_utilization"][1], abs=0.05)
    assert one["l1d_hit_rate"][0] == pytest.approx(one["l1d_hit_rate"][1], abs=0.02)
    for k in ("cerf_l1d_hits", "cerf_l1d_misses"):
        assert one[k][0] == pytest.approx(one[k][1], rel=0.05)


def test_set_shared_hits_takes_every_register_count_at_once_as_one_at_a_time():
    """The profile's own hit rates are asked for every register count of a set in one call; a profile whose
    hit rates another layer wraps (a Monte-Carlo sample's) is asked once per count: the same figures, bit
    for bit, and the known ends (no register: the plain cache of the whole array's ways; every set full of
    registers: no hit)."""
    from dataclasses import replace

    from rfmodel.designs.cerf import set_shared_hits
    from rfmodel.evaluate import resolve_gpu, workload_profile

    prof = workload_profile("kmeans_assign", resolve_gpu("fermi-gtx480"))
    lines = np.array([256.0, 512.0, 1024.0, 512.0, 2048.0])
    ways = np.array([4.0, 8.0, 8.0, 16.0, 4.0])
    regs = np.array([0.0, 100.0, 300.0, 512.0, 700.0])
    own = set_shared_hits(prof, lines, ways, regs)
    calls = []
    wrapped = replace(prof)

    def counted(*a, **k):
        calls.append(np.shape(a[0]))
        return prof.l1d_hit_rate(*a, **k)

    object.__setattr__(wrapped, "l1d_hit_rate", counted)
    one = set_shared_hits(wrapped, lines, ways, regs)
    assert len(calls) == 2 * 16 and set(calls) == {(5,)}  # each count alone, the grid's shape
    calls.clear()
    for a, b in zip(own, one, strict=True):
        np.testing.assert_array_equal(a, b)
    # one array size for every point (a grid that does not search the ways)
    for a, b in zip(
        set_shared_hits(prof, lines, 8.0, regs), set_shared_hits(wrapped, lines, 8.0, regs), strict=True
    ):
        np.testing.assert_array_equal(a, b)
    plain = prof.l1d_hit_rate(lines[:1], ways[:1], write_allocate=False)
    assert own[0][0] == pytest.approx(plain[0], abs=1e-12)
    assert own[0][3] == 0.0 and own[1][3] == 0.0  # 512 registers fill all 512 entries


def test_analytic_cerf_slows_with_its_refills_as_the_register_file_shrinks():
    """``fft_radix16`` on `volta-v100` (whole share): the simulator runs CERF at IPC 1.908 with the default
    register file and 1.231 at 16,384 registers, with 96 register refills there (none at the default) and
    register refills 32 % of its scheduler-cycles (the calibration's records).  The profile's stream run
    through the array's sets gives the same 96 refills and none at the default; each holds its warp for an
    L2 hit (193 cycles against the simulator's mean wait of 180), and the model slows to 1.44 (17 % above
    the simulator: a refill's wait overlaps the warp's other waits in the model's soft minimum more than
    in the simulator).  The fully associative reading of one LRU stack had put 0.017 refills per
    instruction there, 1.7 times the simulator's."""
    ds = rfmodel.evaluate(
        "cerf", "fft_radix16", "volta-v100", params={"regs_per_sm": [65536, 16384]}, max_warps=None
    )
    ipc = ds["ipc"].values.ravel()
    refills = ds["cerf_refills"].values.ravel()
    assert refills[0] == 0.0 and refills[1] == pytest.approx(96, rel=0.05)
    assert ipc[1] / ipc[0] < 0.8  # the simulator's 0.645
    assert ipc[1] == pytest.approx(1.231, rel=0.2)


def test_refill_queue_is_passed_over_from_its_first_possible_completion():
    """The refill queue is passed over only from the first cycle at which a request in it can have
    completed (``H_Q_NEXT``): the cycle after one is queued (the simulator sends it at the end of that
    cycle and writes its completion), else the earliest completion it holds; a pass drops what completed
    and marks a refilled register arrived."""
    from rfmodel.designs import cerf
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    d = get_design("cerf")
    ints = d.sim_setup(sm, d.resolve({}), None, trace=SPILL).ints.copy()
    q, loc = ints[cerf.H_O_Q], ints[cerf.H_O_LOC]
    cerf._harvest(ints, 10)
    assert ints[q] == 0 and ints[cerf.H_Q_NEXT] == cerf.NEVER
    a = 3  # a register of warp slot 0, its refill in flight
    ints[loc + a] = cerf.LOC_PENDING
    assert cerf._enqueue(ints, cerf.REG_LINE_BASE + a, cerf.MQ_LOAD, 10)
    assert cerf._enqueue(ints, cerf.REG_LINE_BASE + 7, cerf.MQ_STORE, 10)
    assert ints[cerf.H_Q_NEXT] == 11
    ints[q + 2 + 2], ints[q + 2 + 5] = 50, 10  # sent: the load fills at 50, the store left at 10
    cerf._harvest(ints, 11)  # the store is dropped, the load kept until 50
    assert ints[q] == 1 and ints[cerf.H_Q_NEXT] == 50
    cerf._harvest(ints, 49)
    assert ints[q] == 1 and ints[loc + a] == cerf.LOC_PENDING
    cerf._harvest(ints, 50)
    assert ints[q] == 0 and ints[loc + a] == cerf.LOC_ARRIVED and ints[cerf.H_Q_NEXT] == cerf.NEVER


@pytest.mark.parametrize("tag_banks,per_bank", [(4, 64), (4, 48), (3, 64), (1, 1)])
def test_set_and_tag_bank_without_division_match_the_division(tag_banks, per_bank):
    """Where the tag banks and sets per bank are powers of two the set and tag bank of a line come from
    masks and shifts: the same as ``(line % banks) * per_bank + (line // banks) % per_bank`` and ``line %
    banks % arbiters`` at every line; other sizes divide."""
    from rfmodel.designs import cerf

    ints = np.zeros(len(cerf._HEADER), dtype=np.int64)
    ints[cerf.H_TB], ints[cerf.H_PER_BANK], ints[cerf.H_NB], ints[cerf.H_SCHEDS] = tag_banks, per_bank, 2, 4
    pow2 = cerf._log2(per_bank) >= 0
    ints[cerf.H_TB_SHIFT] = cerf._log2(tag_banks) if pow2 else -1
    for line in [*range(0, 3000, 7), cerf.REG_LINE_BASE + 12345]:
        assert cerf._set_of(ints, line) == (line % tag_banks) * per_bank + (line // tag_banks) % per_bank
        for split in (0, 1):
            ints[cerf.H_SPLIT] = split
            bank = (line % tag_banks) % 2 + (5 % 4) * 2 * split
            assert cerf._bank(ints, 5, line) == bank


def test_row_words_count_the_source_slots_up_to_the_last_register():
    """CERF's hooks read a row's source slots up to its last register (bits 32-35 of the row's second
    word): none for a row without sources, the slot after the last one even past an empty slot."""
    from types import SimpleNamespace

    from rfmodel.designs.cerf import SLOTS_SHIFT, _row_words
    from rfmodel.trace import NONE

    N = NONE
    src = np.array([[N] * 10, [4, N, 6] + [N] * 7, list(range(10))], dtype=np.uint8)
    words = _row_words(SimpleNamespace(src=src), np.zeros(3, dtype=np.int64)).reshape(3, 2)
    assert ((words[:, 1] >> SLOTS_SHIFT) & 15).tolist() == [0, 3, 10]
