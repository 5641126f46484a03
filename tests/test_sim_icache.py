"""Known answers of the simulator's instruction cache (GPGPU-Sim mode): GPGPU-Sim's fetch stage, where a warp
with an empty instruction buffer looks up the line of its PC in a set-associative LRU cache, a miss waits
for the line from the L2 or DRAM, and at most ``mshr_entries`` lines are in flight."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.sim import SimOptions, simulate_trace, trace_from_warps
from rfmodel.spec import ICacheSpec, get_preset
from rfmodel.spec.occupancy import not_modelled

IC = ICacheSpec(size_bytes=2048, assoc=4, line_bytes=128, mshr_entries=2, fetch_per_cycle=1)
PERFECT = IC.replace(size_bytes=0)
PER_LINE = 8  # 16-byte instructions in a 128-byte line


def sm_with(icache):
    sm = get_preset("volta-v100")
    return sm.replace(latency=sm.latency.replace(int=(2, 1)), icache=icache)


def code(pcs_per_warp):
    """Independent integer instructions (no register dependence within 16), one warp per list of static
    indices (PC = 16 x index)."""
    warps = [[("IADD3", [10 + i % 16], [2]) for i in range(len(p))] for p in pcs_per_warp]
    tr = trace_from_warps(warps, warps_per_cta=len(warps))
    tr.sidx[:] = np.concatenate([np.asarray(p, dtype=np.int32) for p in pcs_per_warp])
    return tr


def run(tr, icache, **opts):
    return simulate_trace(tr, sm_with(icache), "baseline", None, {"compat": "gpgpusim", **opts})


def test_straight_code_misses_once_per_line_and_waits_for_dram():
    n_lines = 8
    tr = code([range(n_lines * PER_LINE)])
    r = run(tr, IC)
    # a fetch takes two instructions: 4 fetches a line, the first a miss answered when the line arrives
    assert r.counts["il1_acc"] == n_lines * PER_LINE // 2
    assert r.counts["il1_miss"] == n_lines
    assert r.counts["il1_fail"] == 0
    assert r.counts["l2_acc"] == n_lines and r.counts["l2_hit"] == 0  # no data access: only code lines
    perfect = run(tr, PERFECT)
    assert perfect.counts["il1_acc"] == 0 and perfect.counts["issued"] == r.counts["issued"]
    # one warp waits out each line's trip to DRAM in turn (L2 hit latency + DRAM latency, one line of DRAM
    # bandwidth), less what the perfect cache's run overlaps
    sm = sm_with(IC)
    trip = sm.l2_hit_latency_cycles + sm.dram_latency_cycles
    extra = r.metrics["cycles"] - perfect.metrics["cycles"]
    assert n_lines * trip <= extra <= n_lines * (trip + 20)


def test_warps_on_the_same_code_share_its_lines():
    n_lines = 6
    tr = code([range(n_lines * PER_LINE)] * 4)
    r = run(tr, IC)
    assert r.counts["l2_acc"] == n_lines  # a line on its way is waited for, not requested again
    assert r.counts["il1_miss"] >= n_lines
    assert r.counts["il1_acc"] == 4 * n_lines * PER_LINE // 2


@pytest.mark.parametrize("body_lines, expect_misses", [(12, 13), (16, 26), (20, 62)])
def test_a_loop_larger_than_the_cache_thrashes_it(body_lines, expect_misses):
    # 2 KB, 4 ways, 128 B lines: 4 sets.  12 lines fit, and line 12 that the back edges fetch too (Accel-Sim,
    # ten passes with the EXIT there: 13).  16 would (4 a set), but each of the two back edges
    # fetches the line after the body first (the fall-through, below), a fifth line in set 0: 16 + 2 + 8 more
    # (Accel-Sim: 27 for the same three passes with an EXIT in line 16).  20 put 5 lines in every set, which
    # LRU evicts in turn: every line of every pass misses, plus the two fall-through lines (Accel-Sim, ten
    # passes with the EXIT: 210 = 21 x 10)
    body = list(range(body_lines * PER_LINE))
    r = run(code([body * 3]), IC)
    assert r.counts["il1_miss"] == expect_misses
    assert r.counts["l2_acc"] == expect_misses


def test_mshrs_limit_the_lines_in_flight():
    # two warps on disjoint code: with one MSHR the second warp's miss finds it taken and fetches nothing
    tr = code([range(0, 4 * PER_LINE), range(1000 * PER_LINE, 1004 * PER_LINE)])
    one = run(tr, IC.replace(mshr_entries=1))
    two = run(tr, IC)
    assert one.counts["il1_fail"] > 0 and two.counts["il1_fail"] == 0
    assert one.counts["il1_miss"] == two.counts["il1_miss"] == 8
    assert one.metrics["cycles"] > two.metrics["cycles"]


def test_fetch_width_comes_from_the_sm_unless_the_options_say():
    tr = code([range(64)] * 8)
    from_sm = run(tr, PERFECT.replace(fetch_per_cycle=1))
    from_opts = run(tr, PERFECT.replace(fetch_per_cycle=4), fetch_per_cycle=1)
    four = run(tr, PERFECT.replace(fetch_per_cycle=4))
    assert from_sm.counts == from_opts.counts
    assert four.metrics["cycles"] < from_sm.metrics["cycles"]
    assert SimOptions().fetch_per_cycle is None


def test_the_sm_without_an_instruction_cache_fetches_four_a_cycle_and_never_misses():
    tr = code([range(64)] * 8)
    none = run(tr, None)
    assert none.counts == run(tr, PERFECT.replace(fetch_per_cycle=4)).counts
    assert none.counts["il1_acc"] == 0


def test_rfmodel_pipeline_has_no_instruction_cache_and_says_so():
    tr = code([range(64)] * 2)
    a = simulate_trace(tr, sm_with(IC), "baseline")
    b = simulate_trace(tr, sm_with(None), "baseline")
    assert a.counts == b.counts and a.counts["il1_acc"] == 0
    fermi = get_preset("fermi-gtx480").replace(icache=IC)  # SM2_GTX480's instruction cache
    assert not_modelled(get_preset("fermi-gtx480"), "analytic") == []  # the preset leaves it out
    assert any(s.startswith("icache.size_bytes = 2048") for s in not_modelled(fermi, "simulate"))
    assert any(s.startswith("icache.size_bytes = 2048") for s in not_modelled(fermi, "analytic"))
    assert not any("icache" in s for s in not_modelled(fermi, "simulate", compat=True))
    perfect = get_preset("volta-v100").replace(icache=PERFECT.replace(fetch_per_cycle=4))  # SM7_QV100's
    assert not any("icache" in s for s in not_modelled(perfect, "analytic"))


@pytest.mark.parametrize(
    "field, value", [("fetch_per_cycle", 2), ("ibuffer_entries", 4), ("result_buses", 2)]
)
def test_gpgpusim_pipeline_options_are_refused_outside_that_mode(field, value):
    """The fetch stage, instruction buffers and result buses exist only in GPGPU-Sim mode: a value set for
    them in rfmodel's own pipeline would be ignored, so it is refused, naming the field and the mode."""
    from rfmodel.errors import SpecError

    with pytest.raises(SpecError, match=f"{field}.*compat = 'gpgpusim'"):
        SimOptions(**{field: value})
    assert getattr(SimOptions(compat="gpgpusim", **{field: value}), field) == value


@pytest.mark.parametrize(
    "lines, expected",
    [
        ([0, 1, 2], 3),  # straight code: one miss a line
        (
            [0, 4],
            3,
        ),  # a jump: the fall-through line (1) is fetched, then the target's line once it is past it
        ([0, 2], 3),
        ([0, 4, 8], 5),  # two jumps, two fall-through lines
    ],
)
def test_a_fetch_after_a_jump_looks_up_the_line_the_code_falls_through_to(lines, expected):
    """GPGPU-Sim's trace-driven fetch goes to the PC of the warp's last issued instruction plus 16 (its
    ``shd_warp_t::get_pc``), not to the next instruction's own PC.  Accel-Sim at the reference commit, one
    warp on SM2_GTX480_1SM's 4 x 4 instruction cache, requests 4 lines for lines 0 and 4 and 6 for 0, 4, 8
    (each with an EXIT in the next line, which the warp's last fetch looks up)."""
    pcs = [line * PER_LINE + i for line in lines for i in range(PER_LINE)]
    r = run(code([pcs]), IC)
    assert r.counts["il1_acc"] == len(pcs) // 2
    assert r.counts["l2_acc"] == expected  # distinct line requests (no data access)


def test_allocation_on_fill_never_runs_out_of_ways():
    """Four warps on code in four lines of one 2-way set, four MSHRs: allocating on miss, a miss that finds
    both ways waiting for fills fetches nothing (a reservation failure, tried again); allocating on fill
    (GPGPU-Sim's ``f``, its instruction caches' letter) the set keeps its lines until the fills and no fetch
    fails."""
    tr = code([range(k * 1000 * PER_LINE, k * 1000 * PER_LINE + 2) for k in range(4)])  # one fetch a warp
    ic = IC.replace(size_bytes=256, assoc=2, mshr_entries=4)
    on_miss = run(tr, ic.replace(allocate_on_miss=True))
    on_fill = run(tr, ic)
    assert on_miss.counts["il1_fail"] > 0 and on_fill.counts["il1_fail"] == 0
    assert on_miss.counts["l2_acc"] == on_fill.counts["l2_acc"] == 4
