"""CORF / CORF++: known answers from the paper worked by hand, allocator invariants, simulator counters."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.designs.corf import (
    LEFT,
    RIGHT,
    Allocator,
    affinity_graph,
    alignment,
    exclusive_pairs,
    odd_cycles,
)
from rfmodel.trace import NONE


# ----------------------------------------------------------------------------- Figure 5: exclusive pairs
@pytest.mark.parametrize("w24", [3, 9])
def test_figure5_pairs(w24):
    """r1 is read 8 times with r2, 10 with r3, 2 with r4; r2 and r4 are read together w24 times.
    w24 = 3: drop r1-r4 (2), then r2-r4 (3: r2 and r4 still have two edges), then r1-r2 (8); r2 and r4
    are left unpaired and their edge is restored.  w24 = 9: drop r1-r4, then r1-r2 (8).  Both give
    (r1, r3) and (r2, r4)."""
    g = {(1, 2): 8.0, (1, 3): 10.0, (1, 4): 2.0, (2, 4): float(w24)}
    assert exclusive_pairs(g) == [(1, 3), (2, 4)]


def test_affinity_graph_counts_pairs_of_distinct_sources():
    g = affinity_graph([(1, 2), (1, 2, 3), (2, 2), (4,)], weights=[1, 10, 5, 7])
    assert g == {(1, 2): 11.0, (1, 3): 10.0, (2, 3): 10.0}


# ----------------------------------------------------------------------------- Figure 8: alignment
# The graph of Fig. 8 as the text gives it: the four odd cycles (r1,r2,r3), (r3,r4,r6), (r2,r3,r4,r6,r5),
# (r1,r3,r6,r5,r2) fix its eight edges; the figure's weights are not in the text, so ours are stated.
FIG8 = {
    (1, 2): 5.0,
    (1, 3): 6.0,
    (2, 3): 4.0,
    (3, 4): 7.0,
    (3, 6): 3.0,
    (4, 6): 8.0,
    (5, 6): 9.0,
    (2, 5): 10.0,
}


def test_figure8_odd_cycles():
    cyc = odd_cycles(FIG8)
    as_sets = sorted(sorted({v for e in c for v in e}) for c in cyc)
    assert as_sets == [[1, 2, 3], [1, 2, 3, 5, 6], [2, 3, 4, 5, 6], [3, 4, 6]]


def test_figure8_alignment_by_hand():
    """Every edge lies on exactly two of the four odd cycles, so the first score is weight / 2 and
    r3-r6 (3) goes: it breaks (r3,r4,r6) and (r1,r3,r6,r5,r2).  Left: (r1,r2,r3) and (r2,r3,r4,r6,r5);
    r2-r3 lies on both (4 / 2 = 2), lower than r1-r2 (5), r1-r3 (6), r3-r4 (7), ... (each / 1): it goes.
    The rest (r1-r2, r1-r3, r3-r4, r4-r6, r6-r5, r5-r2) is one even cycle: r1 R, r2 L, r3 L, r4 R, r5 R,
    r6 L; every kept edge joins a left and a right register."""
    colour, removed = alignment(FIG8)
    assert removed == [(3, 6), (2, 3)]
    assert colour == {1: RIGHT, 2: LEFT, 3: LEFT, 4: RIGHT, 5: RIGHT, 6: LEFT}
    for a, b in FIG8:
        if (a, b) not in removed:
            assert colour[a] != colour[b]


def test_alignment_bipartite_graph_removes_nothing():
    colour, removed = alignment({(1, 2): 1.0, (2, 3): 1.0, (3, 4): 1.0})
    assert removed == [] and colour[1] != colour[2] != colour[3] != colour[4]


# ----------------------------------------------------------------------------- Figure 12: CORF++ allocation
def test_figure12_sequence():
    """Three physical registers in one bank; r2, r4 right-aligned, r3, r5 left-aligned, r1 don't-care.
    Widths (ours; the figure's values are not in the text): r1 2 B, r2 2 B, r4 1 B, r3 2 B, r5 2 B."""
    align = np.zeros(255, dtype=np.int64)
    align[[2, 4]] = RIGHT
    align[[3, 5]] = LEFT
    a = Allocator(phys=3, banks=1, warps=1, regs=8, coalesce="sub-banks", alloc="align", align=align)
    # B: r1 (don't-care) first fit -> P0's low bytes; r2 (right) -> first free right part: P1
    assert a.write(1, 2) == 0 and a.mapping(1) == (0, 0b0011)
    assert a.write(2, 2) == 1 and a.mapping(2) == (1, 0b0011)
    # C: r4 (right, 1 B) -> P2
    assert a.write(4, 1) == 2 and a.mapping(4) == (2, 0b0001)
    # D: r3 (left) -> first free left part: P0
    assert a.write(3, 2) == 0 and a.mapping(3) == (0, 0b1100)
    # E: r2 and r3 coalesce (0011 & 1100 = 0); r5 (left) -> P1's left part
    assert a.coalesce(2, 3)
    assert a.write(5, 2) == 1 and a.mapping(5) == (1, 0b1100)
    # F: r4 with r5, and r3 with r4
    assert a.coalesce(4, 5) and a.coalesce(3, 4)
    assert not a.coalesce(1, 2)  # both in the low bytes
    a.check()
    assert list(a.used()) == [0b1111, 0b1111, 0b0001]


def test_corf_same_entry_rule_and_pairs():
    """CORF: the first member of a pair takes a free full-width register, its buddy joins it; only the same
    entry coalesces."""
    partner = np.full(255, -1, dtype=np.int64)
    partner[1], partner[3] = 3, 1
    a = Allocator(phys=4, banks=1, regs=8, coalesce="same-entry", alloc="pairs", partner=partner)
    assert a.write(2, 1) == 0  # first fit, P0
    assert a.write(1, 2) == 1  # first member: a fully free register (P0 is partly used)
    assert a.write(3, 2) == 1 and a.mapping(3) == (1, 0b1100)  # the buddy joins it
    assert a.coalesce(1, 3) and not a.coalesce(2, 1)
    assert a.counter("buddy_packed") == 1
    a.check()


def test_width_growth_reallocates_once_and_shrink_keeps():
    a = Allocator(phys=4, banks=1, regs=8, coalesce="same-entry", alloc="first-fit")
    a.write(1, 1)
    a.write(2, 2)
    assert a.mapping(1) == (0, 0b0001) and a.mapping(2) == (0, 0b0110)
    a.write(1, 4)  # grows: one reallocation, to a free full register
    assert a.counter("reallocations") == 1 and a.mapping(1) == (1, 0b1111)
    a.write(1, 2)  # shrinks: mapping kept
    assert a.counter("reallocations") == 1 and a.mapping(1) == (1, 0b1111)
    a.free(1)
    assert a.mapping(1) == (-1, 0)
    a.check()


def test_random_sequences_never_overlap():
    rng = np.random.default_rng(1)
    for alloc in ("first-fit", "pairs", "align"):
        partner = np.full(255, -1, dtype=np.int64)
        partner[[0, 1, 2, 3]] = [1, 0, 3, 2]
        align = rng.integers(0, 3, 255)
        a = Allocator(
            phys=64,
            banks=4,
            warps=4,
            regs=16,
            alloc=alloc,
            warp_bank=int(alloc == "align"),
            partner=partner,
            align=align,
        )
        for _ in range(3000):
            w, r = int(rng.integers(4)), int(rng.integers(16))
            if rng.random() < 0.3:
                a.free(r, w)
            else:
                a.write(r, int(rng.integers(1, 5)), w)
        a.check()


# ----------------------------------------------------------------------------- simulator invariants
FEW = ["saxpy", "crc32_murmur3", "bfs_expand"]


@pytest.mark.parametrize("preset", ["packing", "CORF", "CORF++"])
def test_invariants_on_a_few_builtin_workloads(preset, monkeypatch):
    """No two live registers share a byte slice (checked at every allocation against the renaming table),
    all is freed when the warps finish, and bank reads + reads saved = source operands."""
    import rfmodel.designs.corf as corf_mod
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import _simulation_input, resolve_gpu
    from rfmodel.sim import simulate_trace

    monkeypatch.setattr(corf_mod, "DEBUG_CHECKS", True)
    d = get_design("corf")
    params = d.preset(preset)
    sm = resolve_gpu("fermi-gtx480")
    for name in FEW:
        _, tr, kernel = _simulation_input(name, sm, arch="sm_80", seed=0, max_warps=4)
        r = simulate_trace(tr, sm, "corf", params, program=d.program_for(tr, params, sm, kernel))
        c = r.counts
        assert c["overlaps"] == 0 and c["alloc_fail"] == 0
        assert c["src_operands"] == c["reads"]
        assert c["reads_bank"] + c["reads_saved"] == c["reads"]
        assert c["reads_ext"] == c["reads_saved"]
        if preset == "packing":
            assert c["reads_saved"] == 0
        corf_mod.check_state(r.setup.ints)
        ints = r.setup.ints
        assert ints[corf_mod.H_NALLOC] == 0  # every warp finished: every slice is free again
        assert c["coalesced_instr"] <= c["multi_src"]


# ----------------------------------------------------------------------------- renaming-table ports
def test_rt_lookup_ports_known_answer():
    """Two lookups per RT bank and cycle, served in order: the 3rd and 4th of one cycle wait 1, the 5th 2;
    another RT bank is free; a later cycle starts afresh."""
    from rfmodel.designs.corf import C, new_state, rt_bank, rt_lookup

    gpgpusim = [0, 4, 4, 0, 1, 0]  # the bank header of 4 banks mapped (reg + warp) mod 4
    ints = new_state(phys=16, banks=4, warps=4, regs=8, alloc=0, warp_bank=0, rt_ports=2, header=gpgpusim)
    assert rt_bank(ints, 0, 1) == rt_bank(ints, 0, 5) != rt_bank(ints, 0, 2)
    assert [int(rt_lookup(ints, 0, r, 10)) for r in (1, 5, 1, 5, 1)] == [0, 0, 1, 1, 2]
    assert rt_lookup(ints, 0, 2, 10) == 0
    assert rt_lookup(ints, 0, 1, 20) == 0
    assert ints[C["rt_conflicts"]] == 3 and ints[C["rt_delay_cycles"]] == 4
    free = new_state(phys=16, banks=4, warps=4, regs=8, rt_ports=0)
    assert [int(rt_lookup(free, 0, 1, 10)) for _ in range(5)] == [0] * 5


def _rt_run(rt_ports):
    from rfmodel.sim import simulate_trace, trace_from_warps
    from rfmodel.spec import get_preset
    from rfmodel.spec.sm import CollectorSpec, LatencySpec

    sm = get_preset("fermi-gtx480").replace(
        schedulers_per_sm=1,
        collectors=CollectorSpec(gen=8, sp=0, sfu=0, mem=0),
        num_banks=4,
        latency=LatencySpec(int=(4, 1), fp32=(10, 1), misc=(1, 1)),
        scheduler="lrr",
    )
    # R1 and R5 take physical registers 0 and 1 (banks 0 and 1, first fit), their RT entries one RT bank
    tr = trace_from_warps([[("IADD3", [1], [2]), ("IADD3", [5], [3]), ("IADD3", [10], [1, 5])]])
    params = {"coalesce": "none", "alloc": "first-fit", "warp_bank": 0, "virtualize": 1, "rt_ports": rt_ports}
    return simulate_trace(tr, sm, "corf", params)


def test_rt_port_conflict_delays_the_read_one_cycle():
    """The last instruction reads R1 and R5 from two banks in one cycle; with one RT port their RT bank
    serves the second lookup a cycle later, and the instruction finishes a cycle later; two ports (the
    paper's) or no limit: no delay.  The delayed read is not a bank conflict."""
    free, one, two = _rt_run(0), _rt_run(1), _rt_run(2)
    assert one.metrics["cycles"] == free.metrics["cycles"] + 1
    assert two.metrics["cycles"] == free.metrics["cycles"]
    assert one.counts["rt_conflicts"] >= 1 and two.counts["rt_conflicts"] == 0
    assert one.counts["bank_conflicts"] == free.counts["bank_conflicts"]
    assert one.counts["bank_read_acc"] == free.counts["bank_read_acc"]


def test_rt_port_terms_known_answers():
    """Every instruction has three operands in one bank (and one RT bank).  Two bank ports and two RT ports
    (volta-v100, the paper's RT): the third lookup waits a cycle (delay 0 + 0 + 1, one lookup delayed), and
    its read then finds the bank free: no bank stall left (bank share 0), no cycle beyond the bank's.  No
    RT limit: the three reads reach the bank at once, which serializes them (bank share 1).  One RT port:
    delays 0 + 1 + 2, two delayed, and the lookups take ceil(3/1) - ceil(3/2) = 1 cycle beyond the bank's.
    One bank port with two RT ports (fermi-gtx480): the bank is the slower, its stalls stay (excess 2)."""
    from types import SimpleNamespace

    from rfmodel.designs.corf import rt_port_terms

    table = np.zeros((4, 6))
    table[:, 3] = 1.0
    prof = SimpleNamespace(ser_pmf_slots=table)
    two = rt_port_terms(prof, 1, 1, 2, 2)
    assert (float(two["extra"]), float(two["bank_share"]), float(two["excess"])) == (0.0, 0.0, 1.0)
    assert (float(two["delay"]), float(two["delayed"])) == (1.0, 1.0)
    free = rt_port_terms(prof, 1, 1, 2, 0)
    assert (float(free["bank_share"]), float(free["delay"]), float(free["delayed"])) == (1.0, 0.0, 0.0)
    one = rt_port_terms(prof, 1, 1, 2, 1)
    assert (float(one["extra"]), float(one["delay"]), float(one["delayed"])) == (1.0, 3.0, 2.0)
    fermi = rt_port_terms(prof, 1, 1, 1, 2)
    assert (float(fermi["bank_share"]), float(fermi["excess"]), float(fermi["extra"])) == (1.0, 2.0, 0.0)


def test_analytic_rt_delays_follow_the_simulator_on_two_ported_banks():
    """CORF++ on gemm_micro8x8 (volta-v100, 32 banks, two ports): 89 % of the instructions read three
    registers of the warp's one bank.  The simulator's RT serves two lookups a cycle, so the third read
    comes a cycle later: 0.91 RT delay cycles per instruction, in both engines."""
    import rfmodel

    p = {"num_banks": [32]}
    a = rfmodel.evaluate("corf", "gemm_micro8x8", "volta-v100", params=p, method="analytic")
    s = rfmodel.evaluate("corf", "gemm_micro8x8", "volta-v100", params=p, method="simulate")

    def one(ds, k):
        return float(ds[k].values.ravel()[0])

    assert one(a, "rt_delay_cycles") == pytest.approx(one(s, "rt_delay_cycles"), rel=0.05)
    assert one(a, "rt_conflict_share") == pytest.approx(one(s, "rt_conflict_share"), abs=0.02)


def test_rt_paced_bank_stalls_are_write_backs_in_both_engines():
    """Under the RT's pacing (two lookups a cycle, two ports a bank, every register of a warp in its bank:
    CORF++ on volta-v100) the bank stalls left are reads whose port a result written back took: on
    sgemm_tiled the simulator counts 0.449 per instruction with the shared ports and 0.006 with a write
    port of the banks' own; the model's count falls as far, and without the RT's limit (``rt_ports = 0``:
    the simulator 0.728) it is the interval model's serialization and queue, within 20 %."""
    import rfmodel

    def per_instr(method, **params):
        ds = rfmodel.evaluate(
            "corf", "sgemm_tiled", "volta-v100", params={k: [v] for k, v in params.items()}, method=method
        )
        return float(ds["bank_conflict_stall_cycles"].values.ravel()[0]) / float(
            ds["warp_instructions"].values.ravel()[0]
        )

    sim_shared, sim_own = per_instr("simulate"), per_instr("simulate", bank_write_ports=1)
    model_shared, model_own = per_instr("analytic"), per_instr("analytic", bank_write_ports=1)
    assert sim_own < 0.05 * sim_shared
    assert model_own < 0.1 * model_shared
    assert 0.4 < model_shared / sim_shared < 2.5
    assert per_instr("analytic", rt_ports=0) == pytest.approx(per_instr("simulate", rt_ports=0), rel=0.2)


def test_write_collisions_and_rt_attribution_known_answers():
    """By hand: 1.25 IPC, 1.2 writes per instruction over 8 banks take a port 0.1875 of the cycles, twice
    that with the coefficient 2 (0.375; at most 1).  The serialization the RT paces (``ser_stall`` 1.5 x
    excess 1 x read share 0.8 = 1.2 cycles) stays as stalls in that share: 1.5 - 1.2 x (1 - 0.375) = 0.75;
    where the banks serialize what the RT lets through (bank share 1) nothing is taken out."""
    from rfmodel.designs.corf import _rt_attributed, write_collisions

    coef = {"corf_write_collide": 2.0, "ser_stall": 1.5}
    c = write_collisions(1.25, 1.2, 8, coef)
    assert float(c) == pytest.approx(0.375)
    assert float(write_collisions(1.25, 1.2, 8, {"corf_write_collide": 0.0})) == 0.0
    assert float(write_collisions(5.0, 4.0, 2, coef)) == 1.0
    m = {"conflict_per_instr": np.array(1.5), "ipc": np.array(1.25)}
    paced = _rt_attributed(m, {"excess": 1.0, "bank_share": 0.0}, coef, 0.8, c)
    assert float(paced["conflict_per_instr"]) == pytest.approx(1.5 - 1.2 * 0.625)
    banks = _rt_attributed(m, {"excess": 1.0, "bank_share": 1.0}, coef, 0.8, c)
    assert float(banks["conflict_per_instr"]) == 1.5


def test_metadata_instructions_counted_in_code_size():
    """CORF's pairs cost one 64-bit metadata instruction per 4 pairs of the static kernel (C-17)."""
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import _simulation_input, resolve_gpu
    from rfmodel.sim import simulate_trace

    d = get_design("corf")
    sm = resolve_gpu("fermi-gtx480")
    _, tr, kernel = _simulation_input("bfs_expand", sm, arch="sm_80", seed=0, max_warps=2)
    params = d.preset("CORF")
    prog = d.program_for(tr, params, sm, kernel)
    r = simulate_trace(tr, sm, "corf", params, program=prog)
    pairs = len(prog[0].pairs)
    meta = (pairs + 3) // 4
    assert pairs > 0 and r.metrics["metadata_instructions"] == meta
    assert r.metrics["code_size_increase"] == pytest.approx(meta / len(kernel.instrs))
    # executed: every warp issues them first; the program's IPC leaves them out, the run's counts them
    off = simulate_trace(tr, sm, "corf", {**params, "metadata": 0}, program=prog)
    assert (
        r.counts["issued"]
        == off.counts["issued"] + meta * tr.n_warps
        == off.counts["issued"] + r.metrics["metadata_issued"]
    )
    assert r.metrics["ipc_program"] == pytest.approx(off.counts["issued"] / r.metrics["cycles"])
    # the cycles are not ordered: the extra instructions shift every later load, and with the L1D's line
    # reservation a shift may avoid a wait as well as cause one (here 69,594 cycles with them, 70,959 without)
    assert off.metrics["metadata_issued"] == 0
    assert r.counts["reads"] == off.counts["reads"]  # the metadata instructions read no register


def test_prepend_rows_keeps_each_warps_stream():
    from rfmodel.sim import trace_from_warps
    from rfmodel.trace import prepend_rows

    warps = [[("IADD3", [1], [2])], [("IADD3", [3], [4]), ("IADD3", [5], [3])]]
    tr = trace_from_warps(warps, warps_per_cta=2)
    out = prepend_rows(tr, 2, 16)
    assert list(out.warp_ptr) == [0, 3, 7]
    assert list(out.op[[0, 1, 3, 4]]) == [16] * 4 and list(out.sidx[[0, 1, 3, 4]]) == [-1] * 4
    assert np.array_equal(out.src[[2, 5, 6]], tr.src) and np.array_equal(out.dst[[2, 5, 6]], tr.dst)
    assert np.all(out.src[[0, 1, 3, 4]] == 255) and list(np.diff(out.mem_ptr)) == [0] * 7


# ----------------------------------------------------------------------------- the study's SM and energies
def _study():
    from rfmodel.studies import corf

    return corf


def test_paper_sm_is_the_papers():
    """Section 2 / 7: 128 KB in 4 banks of 256 warp registers, 4 collectors with one read port, 2 two-level
    schedulers; the rest is fermi-gtx480's."""
    study = _study()
    sm = study.paper_sm()
    assert sm.num_banks == 4 and sm.regs_per_bank * 4 == 32 * 1024 and sm.bank_entries == 256
    assert sm.collectors.total == sm.collectors.gen == 4 and sm.collector_read_ports == 1
    assert sm.schedulers_per_sm == 2 and sm.scheduler == "two-level" and sm.warps_per_sm == 48


def test_study_energy_ratios_known_answers():
    """Dynamic: 100 baseline accesses against 80 bank accesses, 100 RT accesses and 100 operand accesses
    through the packing logic.  Leakage: half the
    file resident (f = 0.5), occupancy 0.5, equal cycles: (44.8 x 0.5 + 5.76) / 44.8."""
    study = _study()
    base = {
        "counts": {"bank_read_acc": 60, "bank_write_acc": 40, "reads": 60, "writes": 40},
        "cycles": 1000.0,
    }
    run = {
        "counts": {
            "bank_read_acc": 40,
            "bank_write_acc": 40,
            "rt_reads": 60,
            "rt_writes": 40,
            "reads": 60,
            "writes": 40,
            "warp_cycles": 16 * 1000,
        },
        "cycles": 1000.0,
        "regs": 32,
        "warp_regs_per_sm": 1024,
        "rf_occupancy": 0.5,
    }
    # the logic: the paper's 3 % overhead less the renaming table's 1.83 / 149.76, per operand access
    logic = 0.03 * 149.76 - 1.83
    assert study.dynamic_energy_ratio(run, base) == pytest.approx(
        (80 * 149.76 + 100 * 1.83 + 100 * logic) / (100 * 149.76)
    )
    # every access a renaming-table access, no access saved: exactly the paper's 3 % overhead
    same = {"counts": {**base["counts"], "rt_reads": 60, "rt_writes": 40}}
    assert study.dynamic_energy_ratio(same, base) == pytest.approx(1.03)
    assert study.leakage_ratio(run, base) == pytest.approx((44.8 * 0.5 + 5.76) / 44.8)


def test_coalescable_upper_bound_known_answer():
    """C-05's bound (the profile's source pairs): R1 (1 B) and R2 (2 B) fit one register; R3 (4 B) and R1
    do not; R3 read twice is one read; a one-source instruction does not count."""
    from rfmodel.designs.corf import _source_pairs

    N = 255
    src = np.full((6, 10), N, dtype=np.int64)
    dst = np.full((6, 4), N, dtype=np.int64)
    width = np.zeros((6, 4), dtype=np.int64)
    dst[0, 0], width[0, 0] = 1, 1  # R1: 1 byte
    dst[1, :2], width[1, :2] = (2, 3), (2, 4)  # R2: 2 bytes, R3: 4 bytes
    src[2, :2] = (1, 2)  # fits
    src[3, :2] = (3, 1)  # 4 + 1 > 4
    src[4, :3] = (3, 3, 1)  # R3 twice
    src[5, 0] = 1  # one source
    assert _source_pairs(np.array([0, 6]), dst, src, width) == (3, 1, 1)
    # a second warp starts with every register at 4 bytes: R1 + R2 no longer fit
    assert _source_pairs(np.array([0, 2, 6]), dst, src, width) == (3, 1, 0)


@pytest.mark.parametrize(
    # 16 warps: two of gemm_micro8x8's CTAs (about 8 CPU-s more); 8 warps: its first CTA, which the next
    # test also runs (the same shares: saxpy 0.63 / 0.73, gemm_micro8x8 0.017 / 0.014)
    "max_warps",
    [8, pytest.param(16, marks=pytest.mark.slow)],
)
def test_analytic_coalesced_share_follows_the_simulator(max_warps):
    """The analytic coalesced share (the profile's source pairs, CORF++'s calibrated realization) against
    the simulator's on two kernels far apart (saxpy's narrow indices, gemm's full-width floats): within 12
    points (saxpy: 0.63 against 0.73 with the calibrated realization 0.84; the calibration's mean error is
    4.7 points); the share of reads saved follows."""
    import rfmodel

    for w, lo, hi in (("saxpy", 0.5, 1.0), ("gemm_micro8x8", 0.0, 0.1)):
        a = rfmodel.evaluate("corf", w, "fermi-gtx480", method="analytic", max_warps=max_warps)
        s = rfmodel.evaluate("corf", w, "fermi-gtx480", method="simulate", max_warps=max_warps)
        ca, cs = (float(x["coalesced_share"].values.ravel()[0]) for x in (a, s))
        assert lo <= cs <= hi and abs(ca - cs) < 0.12
        ra, rs = (float(x["reads_saved"].values.ravel()[0] / x["rf_reads"].values.ravel()[0]) for x in (a, s))
        assert abs(ra - rs) <= 0.25 * rs + 0.01


def test_affinity_weights_are_the_executed_trip_counts():
    """``affinity = "trips"``: every static instruction weighs its executions per warp (on a kernel whose
    warps all take the same path, the first warp's counts), a loop's pairs its trip count, and the program
    says which weights it used; ``depth`` keeps the fixed weight per loop level."""
    from rfmodel.designs.base import get_design
    from rfmodel.designs.corf import exclusive_pairs, kernel_affinity
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.workload.suite import load_workload

    sm = resolve_gpu("fermi-gtx480")
    wl = load_workload("sgemm_tiled", num_sms=sm.num_sms, max_warps=4, line_bytes=sm.l1d.line_bytes)
    d = get_design("corf")
    prog, _ = d.program_for(wl.trace, {}, sm, wl.kernel)
    assert "executed trip counts" in prog.source
    sidx = np.asarray(wl.trace.sidx)
    wp = np.asarray(wl.trace.warp_ptr)
    first = np.bincount(sidx[wp[0] : wp[1]], minlength=len(wl.kernel.instrs))
    assert np.all(np.bincount(sidx, minlength=len(wl.kernel.instrs)) == first * (len(wp) - 1))
    g = kernel_affinity(wl.kernel, executions=first)
    assert tuple(exclusive_pairs(g)) == prog.pairs
    assert max(g.values()) > 1  # a loop's pairs weigh its trip count
    depth, _ = d.program_for(wl.trace, {"affinity": "depth"}, sm, wl.kernel)
    assert "loop_weight 8 per loop level" in depth.source


def test_a_value_nobody_reads_is_freed_once_written():
    """With virtualization a dead definition (the compiler's liveness: not live after its write) releases
    its slices right after the write: one free per such dynamic write, counted from the static kernel's
    dead definitions over the trace; none without virtualization."""
    from rfmodel.compiler.liveness import dead_defs
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import _simulation_input, resolve_gpu
    from rfmodel.sim import simulate_trace

    d = get_design("corf")
    sm = resolve_gpu("fermi-gtx480")
    _, tr, kernel = _simulation_input("stencil7_3d", sm, arch="sm_80", seed=0, max_warps=2)
    flags = dead_defs(kernel)
    expect = 0
    for r, i in enumerate(np.asarray(tr.sidx)):
        ins = kernel.instrs[int(i)]
        dead = {int(x) for x, f in zip(ins.dst, flags[int(i)], strict=True) if f}
        expect += sum(1 for x in tr.dst[r] if int(x) in dead)
    assert expect > 0
    prog = d.program_for(tr, {}, sm, kernel)
    r = simulate_trace(tr, sm, "corf", {}, program=prog)
    assert r.counts["dead_def_frees"] == expect
    off = simulate_trace(tr, sm, "corf", {"virtualize": 0}, program=prog)
    assert off.counts["dead_def_frees"] == 0


@pytest.mark.parametrize("method", ["simulate", "analytic"])
def test_unallocated_physical_registers_are_power_gated(method, monkeypatch):
    """The banks leak in the allocated share of the file only (``leakage_active``: the run's
    ``rf_active_fraction``, allocated physical registers over the file's, time-averaged in the simulator);
    the renaming table leaks whole."""
    import rfmodel
    from rfmodel.designs.base import get_design

    ds = rfmodel.evaluate("corf", "saxpy", "fermi-gtx480", method=method, max_warps=16)
    frac = float(ds["rf_active_fraction"].values.ravel()[0])
    assert 0.0 < frac < 1.0
    monkeypatch.setattr(type(get_design("corf")), "leakage_active", {})
    whole = rfmodel.evaluate("corf", "saxpy", "fermi-gtx480", method=method, max_warps=16)
    lk = ds["leakage_energy_pj"].sel(structure="rf_bank").values.ravel()[0]
    lk_whole = whole["leakage_energy_pj"].sel(structure="rf_bank").values.ravel()[0]
    assert lk == pytest.approx(frac * lk_whole, rel=1e-9)
    for s in ("renaming_table", "collector"):
        assert ds["leakage_energy_pj"].sel(structure=s).values.ravel()[0] == pytest.approx(
            whole["leakage_energy_pj"].sel(structure=s).values.ravel()[0], rel=1e-12
        )


@pytest.mark.parametrize("method", ["simulate", "analytic"])
def test_partial_writes_free_map_and_packing_logic_are_charged(method):
    """A bank write enables only the written value's byte slices: fixed part + (bytes / 4) of the row's
    32-bit groups; the free map is read per allocation and written per allocation and free; the packing
    logic works on every operand read and written value.  Both engines, checked against the structures'
    costs; the mean written width is the trace's in both."""
    import rfmodel
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    ds = rfmodel.evaluate("corf", "bfs_expand", sm, method=method, max_warps=16)
    st = {s.name: s for s in get_design("corf").structures(sm, {}, {})}
    one = ds.isel(workload=0).squeeze()

    def at(var, s):
        return float(one[var].sel(structure=s))

    bytes_per = float(one["bytes_per_value"])
    assert 1.0 < bytes_per < 4.0  # bfs_expand writes narrow values
    bank = st["rf_bank"]
    reads, writes = at("structure_reads", "rf_bank"), at("structure_writes", "rf_bank")
    groups = writes * bytes_per / 4.0 * sm.bank_width_bits / 32
    expect = reads * bank.read_pj + writes * bank.write_fixed_pj + groups * bank.write_group_pj
    assert at("dynamic_energy_pj", "rf_bank") == pytest.approx(float(expect), rel=1e-9)
    assert expect < reads * bank.read_pj + writes * bank.write_pj  # cheaper than whole-row writes
    assert at("structure_reads", "packing_logic") == pytest.approx(float(one["rf_reads"]))
    assert at("structure_writes", "packing_logic") == pytest.approx(float(one["rf_writes"]))
    fm_r, fm_w = at("structure_reads", "free_map"), at("structure_writes", "free_map")
    assert 0 < fm_r < fm_w <= 2 * fm_r  # each allocation is freed at most once
    for s in ("free_map", "packing_logic", "renaming_table"):
        assert at("area_mm2", s) > 0 and at("leakage_energy_pj", s) > 0


def test_written_width_of_the_profile_is_the_simulators():
    """The analytic engine's mean written width (the profile's write_bytes) is the simulator's
    bytes_written / values on the same trace."""
    from rfmodel.designs.corf import source_pair_stats
    from rfmodel.evaluate import _simulation_input, resolve_gpu
    from rfmodel.sim import simulate_trace

    sm = resolve_gpu("fermi-gtx480")
    _, tr, kernel = _simulation_input("bfs_expand", sm, arch="sm_80", seed=0, max_warps=4)
    r = simulate_trace(tr, sm, "corf", {}, program=None)
    assert r.metrics["bytes_per_value"] == pytest.approx(source_pair_stats(tr)["write_bytes"], rel=1e-12)


def test_home_bank_share_and_blend_known_answers():
    """A warp of 80 allocated registers in a 1024-register file: 8 banks hold 128 each (all of it at home),
    16 hold 64 (0.8), 32 hold 32 (0.4); 48 warps on 16 banks share a bank three ways.  The blend mixes cycles
    linearly and IPC harmonically."""
    from rfmodel.designs.corf import blend_models, home_share

    h = home_share(80.0, 8, 1024.0, np.array([8, 16, 32]))
    assert h == pytest.approx([1.0, 0.8, 0.4])
    assert home_share(20.0, 48, 1024.0, 16) == pytest.approx(min(1.0, 64 / (20 * 3)))
    m0 = {"ipc": np.array([2.0]), "cycles": np.array([50.0]), "warps": np.array([8.0])}
    m1 = {"ipc": np.array([1.0]), "cycles": np.array([100.0]), "warps": np.array([8.0])}
    b = blend_models(m0, m1, 0.5)
    assert b["cycles"] == pytest.approx([75.0]) and b["ipc"] == pytest.approx([100.0 / 75.0])


def test_analytic_sees_a_warps_registers_overflow_its_bank():
    """CORF++ on gemm_micro8x8 (8 resident warps of ~100 registers): with more banks each bank holds fewer
    registers, a warp's registers overflow into other banks and its reads stop serializing in one; the
    simulator's IPC rises with the banks and so does the model's."""
    import rfmodel

    grid = {"num_banks": [8, 16, 32]}
    sim = rfmodel.evaluate(
        "corf", "gemm_micro8x8", "fermi-gtx480", method="simulate", params=grid, max_warps=8
    ).ipc.values.ravel()
    ana = rfmodel.evaluate(
        "corf", "gemm_micro8x8", "fermi-gtx480", method="analytic", params=grid, max_warps=8
    ).ipc.values.ravel()
    assert sim[0] < sim[1] < sim[2]
    assert ana[0] < ana[1] < ana[2]
    assert ana[2] / ana[0] > 1.3


def test_greedy_banks_known_answer_and_no_load_latency():
    """Under a greedy scheduler with one bank per warp, ``n = 1 + k c1 / b`` warps share a scheduler's
    issue, ``c1`` the warp's own dependence pace at ``b`` collection cycles without memory waits, and their
    banks serve it: by hand with a table ``c1 = 2 + extra / 2 + L / 100``, k = 1, b = 3 cycles (n = 1 +
    3.5 / 3), two schedulers.  Sixteen warps on sixteen banks: each of a scheduler's eight warps has a bank
    of its own, 2 n banks.  On four banks a scheduler's warps (slots of one parity) hold two, four warps
    to a bank, and n of its eight warps at once hit ``2 (1 - (1 - n / 8)^4)`` of them.  Three warps: all
    three.  Four sub-cores of four banks each, 32 warps: ``4 (1 - (1 - n / 8)^2)`` a sub-core.  A load
    latency in the table changes nothing."""
    from rfmodel.analytic.throughput import _greedy_banks

    class Table:
        def chain_at2(self, extra, mem_latency):
            return 2.0 + np.asarray(extra) / 2.0 + np.asarray(mem_latency) / 100.0

    n = 1.0 + 3.5 / 3.0
    got = _greedy_banks(Table(), np.array([16.0, 4.0, 16.0]), 2.0, np.array([16.0, 16.0, 3.0]), 3.0, 1.0)
    assert got == pytest.approx([2.0 * n, 2.0 * 2.0 * (1.0 - (1.0 - n / 8.0) ** 4), 3.0])
    sub = _greedy_banks(Table(), 16.0, 4.0, 32.0, 3.0, 1.0, sub_core=True)
    assert sub == pytest.approx(4.0 * 4.0 * (1.0 - (1.0 - n / 8.0) ** 2))


def test_corf_plus_plus_loss_under_greedy_schedulers_in_both_engines():
    """CORF++ on sgemm_tiled (fermi-gtx480, greedy-then-oldest, 16 warps on 16 banks: each warp's
    registers in its own bank): a scheduler's greedy warp keeps its collectors waiting on its one bank, and
    the simulator runs 44 % under the baseline; the model's loss is most of that (with the loads' latency in
    the warp's pace it read 3.8 warps a scheduler, and lost 16 %)."""
    import rfmodel

    eff = {}
    for method in ("simulate", "analytic"):
        ipc = [
            float(rfmodel.evaluate(d, "sgemm_tiled", "fermi-gtx480", method=method).ipc.values.ravel()[0])
            for d in ("baseline", "corf")
        ]
        eff[method] = ipc[1] / ipc[0] - 1.0
    assert eff["simulate"] < -0.35
    assert eff["analytic"] < -0.2


def _rows(**cols):
    from types import SimpleNamespace

    return SimpleNamespace(**{k: np.asarray(v) for k, v in cols.items()})


def test_row_words_pack_sources_widths_and_dead_values_by_hand():
    """The per-row words CORF's hooks read, by hand: sources 8 bits each (8-9 in word 1), the dead bits at
    16, the k-th written destination's width class (clipped to 0-4) at 32 + 4k, the register sources at 48
    and a written value the static kernel never reads at 52 + k."""
    from rfmodel.designs.base import source_words
    from rfmodel.designs.corf import _row_words

    N = NONE
    src = [[1, 2, 3, N, N, N, N, N, N, N], list(range(10))]
    t = _rows(
        src=np.array(src, dtype=np.uint8),
        dst=np.array([[5, N, 7, N], [N, N, N, N]], dtype=np.uint8),
        width=np.array([[2, -1, 9, 0], [3, 3, 3, 3]], dtype=np.int8),
        sidx=np.array([0, 1], dtype=np.int32),
    )
    dead = np.array([0b101, 1 << 9 | 1 << 12])  # bits past the tenth source are dropped
    w0 = [sum(r << (8 * k) for k, r in enumerate(row[:8])) for row in src]
    w0 = [w - (1 << 64) if w >= 1 << 63 else w for w in w0]  # int64 words: NONE in source 7 sets the sign
    w1 = [(N | N << 8) | 0b101 << 16, (8 | 9 << 8) | (1 << 9) << 16]
    assert source_words(t, dead).tolist() == [[w0[0], w1[0]], [w0[1], w1[1]]]
    dead_defs = np.array([[7, N, N, N], [5, N, N, N]])
    words = _row_words(t, dead, dead_defs).reshape(2, 2)
    # row 0: writes R5 (class 2) then R7 (9 -> 4), three register sources, R7 never read (write 1)
    assert words[0, 1] == w1[0] | 2 << 32 | 4 << 36 | 3 << 48 | 1 << 53
    # row 1: no write, ten sources (at most 15 counted)
    assert words[1, 1] == w1[1] | 10 << 48
    assert words[:, 0].tolist() == w0
    assert _row_words(t, dead, None)[1] == w1[0] | 2 << 32 | 4 << 36 | 3 << 48
