"""Known answers and invariants of the first-order analytic models."""

from __future__ import annotations

import numpy as np
import pytest
from helpers_kernels import build_kernel
from hypothesis import given, settings
from hypothesis import strategies as st

from rfmodel.analytic.profile import profile_trace
from rfmodel.analytic.terms import Effects, SmTerms
from rfmodel.analytic.throughput import interval_model, md1_wait, occupancy_warps, softmin
from rfmodel.ir import N_OPCLASSES, OpClass
from rfmodel.trace import NONE, empty_columns
from rfmodel.workload.expand import expand


def _lat(fp=4, default=1):
    lat = np.full(N_OPCLASSES, float(default))
    lat[OpClass.FP32] = fp
    return lat


def _trace(text, warps=1):
    return expand(build_kernel(text), ctas=1, threads_per_cta=32 * warps)


CHAIN = """
ffma R1 = R2 R3
ffma R4 = R1 R5
ffma R6 = R4 R7
ffma R8 = R6 R9
exit
"""


def test_chain_of_dependent_instructions_known_answer():
    # issue times: 0, 4, 8, 12 (each waits the 4-cycle FP latency), EXIT at 13 -> 14 cycles for 5 instructions
    p = profile_trace(_trace(CHAIN), _lat(fp=4))
    assert p.chain[0] == pytest.approx(14 / 5)
    # with k extra collection cycles each dependence waits 4 + k: 3 (4 + k) + 2 cycles
    for k in (1, 3, 7):
        assert p.chain[k] == pytest.approx((3 * (4 + k) + 2) / 5)


def test_independent_instructions_issue_every_cycle():
    text = "\n".join(f"ffma R{10 + i} = R1 R2" for i in range(8)) + "\nexit\n"
    p = profile_trace(_trace(text), _lat(fp=20))
    assert p.chain[0] == pytest.approx(1.0)


def test_serialization_table_known_answer():
    # sources R0 R4 R8: one bank for B in {1, 2, 4}; two share a bank at B = 8 (0 and 8); distinct at 16
    p = profile_trace(_trace("ffma R1 = R0 R4 R8\nexit\n"), _lat())
    # two instructions: the FFMA and the EXIT (no sources) -> mean over 2
    assert p.ser[1] == pytest.approx(3 / 2)
    assert p.ser[4] == pytest.approx(3 / 2)
    assert p.ser[8] == pytest.approx(2 / 2)
    assert p.ser[16] == pytest.approx(1 / 2)
    assert p.distinct_reads_per_instr == pytest.approx(3 / 2)  # all in one bank: warp-per-bank mapping


def test_duplicate_source_register_distinct_and_slot_tables():
    # distinct sources: R2 once; operand slots: R2 three times in one bank (two cycles beyond the first)
    p = profile_trace(_trace("ffma R1 = R2 R2 R2\nexit\n"), _lat())
    assert p.ser[1] == pytest.approx(1 / 2)
    assert p.reads_per_instr == pytest.approx(3 / 2)
    assert p.distinct_reads_per_instr == pytest.approx(1 / 2)
    for banks in (1, 4, 32):
        assert p.ser_ports(banks, 1) == pytest.approx(1 / 2)
        assert p.ser_ports(banks, 1, slots=True) == pytest.approx(3 / 2)
        assert p.ser_excess(banks, 1, slots=True) == pytest.approx(2 / 2)
        assert p.ser_excess(banks, 2, slots=True) == pytest.approx(1 / 2)  # ceil(3 / 2) - 1


@pytest.mark.parametrize("srcs", [[2, 2], [2, 3], [2, 2, 2], [2, 3, 4], [2, 2, 3]])
def test_simulator_reads_every_operand_slot_as_the_slot_table_says(srcs):
    """The simulator's collectors read a register named twice by one instruction twice, from one bank:
    one warp's bank-conflict stall cycles equal the slot table's serialization beyond the first access,
    exactly (and each extra cycle delays the dependent chain by one)."""
    from rfmodel.evaluate import exec_latencies, resolve_gpu
    from rfmodel.sim import simulate_trace, trace_from_warps

    sm = resolve_gpu("fermi-gtx480")
    n = 200
    tr = trace_from_warps([[("IADD3", [1], srcs)] * n])
    sim = simulate_trace(tr, sm, "baseline", {}).metrics
    prof = profile_trace(tr, exec_latencies(sm))
    excess = float(prof.ser_excess(sm.num_banks, 1, slots=True)) * tr.n_instrs
    assert sim["bank_conflict_stall_cycles"] == pytest.approx(excess, abs=1e-9)
    assert excess == n * (len(srcs) - len(set(srcs)))
    assert sim["cycles"] == 1201 + excess  # one dependent chain: n (L + 2) + 1 plus the stalls


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 254), min_size=0, max_size=6), min_size=1, max_size=30))
def test_more_banks_never_raise_serialization_for_power_of_two_banks(rows):
    n = len(rows)
    cols = empty_columns(n)
    for i, r in enumerate(rows):
        cols["src"][i, : len(r)] = r
    from rfmodel.analytic.profile import _ser_pmf

    pmf, _, _, pmf_slots = _ser_pmf(cols["src"], 64)
    for table in (pmf, pmf_slots):
        ser = table @ np.arange(table.shape[1])
        for b in (1, 2, 4, 8, 16, 32):
            # a bank of 2B banks splits a bank of B banks in two, so the max load cannot grow
            assert ser[2 * b] <= ser[b] + 1e-12
    # counting every operand slot never lowers the load
    assert np.all(pmf_slots @ np.arange(pmf.shape[1]) >= pmf @ np.arange(pmf.shape[1]) - 1e-12)
    assert np.all(cols["src"][cols["src"] != NONE] < 255)


def test_occupancy_known_answers():
    # Fermi-like: 32768 regs, 48 warps, 8 CTAs, granularity 64 regs per warp
    kw = dict(
        regs_per_sm=32768,
        max_warps=48,
        max_ctas=8,
        max_threads=1536,
        smem_per_sm=48 * 1024,
        alloc_granularity=64,
    )
    # 20 regs/thread -> 640 regs/warp; 256-thread CTA = 8 warps = 5120 regs -> 6 CTAs by registers, 6 by warps
    assert occupancy_warps(20, 256, 0, 100, **kw) == 48
    # 63 regs/thread -> 2016 -> 2048 regs/warp; CTA of 8 warps = 16384 -> 2 CTAs = 16 warps
    assert occupancy_warps(63, 256, 0, 100, **kw) == 16
    # shared memory: 20 KB per CTA -> 2 CTAs
    assert occupancy_warps(20, 256, 20 * 1024, 100, **kw) == 16
    # the launch gives only one CTA to this SM
    assert occupancy_warps(20, 256, 0, 1, **kw) == 8
    # one CTA does not fit
    assert occupancy_warps(255, 1024, 0, 100, **kw) == 0
    # vectorized over the RF size
    assert list(
        occupancy_warps(63, 256, 0, 100, **{**kw, "regs_per_sm": np.array([16384, 32768, 65536])})
    ) == [8, 16, 32]


def test_md1_and_softmin():
    assert md1_wait(0.5) == pytest.approx(0.5)
    assert md1_wait(0.0) == 0.0
    assert np.isinf(md1_wait(1.0))
    assert softmin([2.0, np.inf]) == pytest.approx(2.0)
    assert softmin([2.0, 2.0]) < 2.0
    assert softmin([1.0, 100.0]) == pytest.approx(1.0, rel=1e-6)


def _profile_mixed():
    text = (
        "\n".join(
            ["ffma R1 = R0 R4 R8", "ffma R2 = R1 R3 R5", "ffma R6 = R2 R7 R9", "ffma R10 = R6 R11 R12"] * 4
        )
        + "\nexit\n"
    )
    return profile_trace(_trace(text, warps=8), _lat(fp=4))


def test_baseline_model_monotone_in_banks_and_collectors():
    p = _profile_mixed()
    ii = np.ones(N_OPCLASSES)
    banks = np.array([1, 2, 4, 8, 16, 32, 64])
    m = interval_model(
        p, SmTerms(warps=8, schedulers=2, issue_width=1, banks=banks, collectors=8, initiation=ii)
    )
    assert np.all(np.diff(m["ipc"]) >= -1e-9)
    assert np.all(np.diff(m["ser"]) <= 1e-12)
    coll = np.array([1, 2, 4, 8, 16])
    m2 = interval_model(
        p, SmTerms(warps=8, schedulers=2, issue_width=1, banks=16, collectors=coll, initiation=ii)
    )
    assert np.all(np.diff(m2["ipc"]) >= -1e-9)
    # never above the issue bound
    assert np.all(m["ipc"] <= 2.0 + 1e-9)
    assert np.all((m["l1d_hit_rate"] >= 0) & (m["l1d_hit_rate"] <= 1))


def test_the_anchor_scales_the_schedules_bounds_not_the_banks_or_collectors():
    # the anchor corrects the pace the SM's schedule measures (latency, issue, units, memory); the register
    # banks and collectors are not in the schedule, so where they bind, the anchor leaves the IPC alone
    p = _profile_mixed()
    kw = dict(warps=8, schedulers=2, issue_width=1, initiation=np.ones(N_OPCLASSES))
    coef = {"dram_queue": 0.0}
    free = SmTerms(banks=4096, collectors=4096, **kw)
    one, half = (interval_model(p, free, anchor=a, coef=coef)["ipc"] for a in (1.0, 0.5))
    assert float(half) == pytest.approx(0.5 * float(one), rel=1e-3)
    # one bank that takes 16 cycles an access: the bank bound (about 0.016 here) sets the pace alone
    slow, slow_banks = SmTerms(banks=1, collectors=4096, **kw), Effects(bank_cycles=16.0)
    bound = float(interval_model(p, slow, slow_banks, coef=coef)["rate_bank"])
    one, half = (float(interval_model(p, slow, slow_banks, anchor=a, coef=coef)["ipc"]) for a in (1.0, 0.5))
    assert half == pytest.approx(one, rel=0.02) and one <= bound
    # a callable anchor gets the L1D hit rate and the resident warps
    seen = []
    interval_model(p, free, anchor=lambda h, w: seen.append((float(h), float(w))) or 0.5, coef=coef)
    assert seen == [(float(interval_model(p, free, coef=coef)["l1d_hit_rate"]), 8.0)]


def test_zero_warps_gives_zero_ipc():
    p = _profile_mixed()
    m = interval_model(
        p,
        SmTerms(
            warps=np.array([0, 8]),
            schedulers=2,
            issue_width=1,
            banks=16,
            collectors=8,
            initiation=np.ones(N_OPCLASSES),
        ),
    )
    assert m["ipc"][0] == 0.0 and m["ipc"][1] > 0


def test_l1d_hit_rate_from_stack_distances():
    # one warp touches lines A B A B ...: every reuse has stack distance 1
    cols = """
ldg R1 = R2
ldg R3 = R4
exit
"""
    from rfmodel.workload.expand import AccessPattern, Profile

    k = build_kernel(cols)
    prof = Profile(
        mem={0: AccessPattern("tile", footprint_bytes=128), 1: AccessPattern("tile", footprint_bytes=128)}
    )
    t = expand(k, prof, ctas=1, threads_per_cta=32 * 4)
    p = profile_trace(t, _lat())
    h = p.l1d_hit_rate(np.array([0, 1, 2, 1024]))
    assert h[0] == 0.0
    assert np.all(np.diff(h) >= 0)
    assert 0.0 <= h[-1] <= 1.0


def test_a_grid_of_caches_gives_each_cache_its_own_hit_rate():
    """Each cache of a grid is set-associative where it has more lines than ways, fully associative (one
    set) where not, whatever else the grid holds: a one-line placeholder (the unified memory's split that
    leaves no L1D) once turned every cache of its grid fully associative (gemm_micro8x8 on fermi-gtx480,
    224 lines of 4 ways: 0.489 instead of 0.350), and so moved the other points' IPC."""
    import rfmodel
    from rfmodel.analytic.engine import workload_profile
    from rfmodel.spec import get_preset

    sm = get_preset("fermi-gtx480")
    prof = workload_profile("gemm_micro8x8", sm)
    lines = np.array([224.0, 1.0, 3.0, 4.0, 5.0, 512.0])
    ways = np.array([4.0, 4.0, 4.0, 4.0, 4.0, 8.0])
    grid = prof.l1d_hit_rate(lines, ways)
    each = [prof.l1d_hit_rate(float(n), float(a)) for n, a in zip(lines, ways, strict=True)]
    assert grid == pytest.approx(each, abs=1e-12)
    assert grid[0] < prof.l1d_hit_rate(224.0) - 0.05  # set conflicts: below the fully associative rate
    # through the API: a point's answer does not depend on a point beside it where no CTA fits
    kw = dict(method="analytic")
    both = rfmodel.evaluate("unified", "gemm_micro8x8", sm, params={"regs_per_sm": [32768, 16384]}, **kw)
    alone = rfmodel.evaluate("unified", "gemm_micro8x8", sm, params={"regs_per_sm": [32768]}, **kw)
    ipc = both["ipc"].values.ravel()
    assert ipc[1] == 0.0 and ipc[0] == pytest.approx(float(alone["ipc"].values.ravel()[0]), rel=1e-9)


def test_an_l1d_of_no_lines_is_off_loads_go_to_the_l2_without_its_latency_or_mshrs():
    """``l1d_lines=0``: no hits, the miss path without the L1D's lookup latency, and no MSHR bound (as the
    simulator's loads without an L1D); a one-line L1D keeps both."""
    cols = """
ldg R1 = R2
ffma R3 = R1 R1 R1
exit
"""
    from rfmodel.workload.expand import AccessPattern, Profile

    k = build_kernel(cols)
    t = expand(k, Profile(mem={0: AccessPattern("stream")}), ctas=2, threads_per_cta=32 * 4)
    p = profile_trace(t, _lat())
    kw = dict(
        warps=8,
        schedulers=2,
        issue_width=1,
        banks=16,
        collectors=8,
        initiation=np.ones(N_OPCLASSES),
        l1_hit_latency=30.0,
        miss_latency=400.0,
        mshr=4,
    )
    off = interval_model(p, SmTerms(l1d_lines=0, **kw), coef={"mem_scale": 1.0})
    tiny = interval_model(p, SmTerms(l1d_lines=1, **kw), coef={"mem_scale": 1.0})
    assert off["l1d_hit_rate"] == 0.0 and off["load_hit_rate"] == 0.0
    assert np.isinf(off["rate_mshr"]) and np.isfinite(tiny["rate_mshr"])
    # no DRAM bandwidth limit: the load latency is the miss path's, 400 - 30 cycles without the L1D
    assert float(off["load_latency"]) == pytest.approx(370.0)
    h = float(tiny["load_hit_rate"])
    assert float(tiny["load_latency"]) == pytest.approx(30.0 * h + 400.0 * (1 - h))
    assert off["ipc"] > tiny["ipc"]


def test_register_cache_table_equals_a_direct_cache_on_a_real_trace():
    """The profile's exact partition table (one pass serving every size) against a direct FIFO / LRU
    cache per size, kept and flushed at deactivation points (barriers and the first consumer of a
    load: sgemm_tiled has both), up to the largest tabulated size, on the warps' reads and results in the
    order of the SM's schedule (each row's reads at its issue, its results when ready) as the profile
    takes them."""
    from rfmodel.analytic.profile import TABLE_MAX_INSTRS, leading_warps
    from rfmodel.designs.regcache import RC_EMAX, _sm_inputs, event_rows, reg_cache_hit_rate
    from rfmodel.evaluate import workload_profile
    from rfmodel.ir import OpClass
    from rfmodel.spec import get_preset
    from rfmodel.trace import NONE

    sm = get_preset("fermi-gtx480")
    prof = workload_profile("sgemm_tiled", sm, max_warps=4, share=False)
    tr = prof.source._trace_and_rank()[0]
    times = _sm_inputs(prof.source)
    # the tables' warps: the leading whole warps up to the profile's per-warp sample
    wp = leading_warps(tr.warp_ptr.astype(np.int64), TABLE_MAX_INSTRS)
    ptr, op, dst, src = event_rows(wp, tr.op, tr.dst, tr.src, times["issued"], times["ready"])
    assert int(ptr[-1]) > int(wp[-1])  # every row's reads, and its results
    long_lat = {int(OpClass.LD_GLOBAL), int(OpClass.LD_LOCAL), int(OpClass.ATOMIC)}
    # each warp's events as Python lists, and where the deactivation points fall (they do not depend on the
    # cache): read once, replayed for every policy and size
    ops, srcs_all, dsts_all = op.tolist(), src.tolist(), dst.tolist()
    barrier, none = int(OpClass.BARRIER), int(NONE)
    warps = []
    flushes = 0
    for w in range(len(ptr) - 1):
        rows, pending = [], set()
        for i in range(int(ptr[w]), int(ptr[w + 1])):
            srcs = [r for r in srcs_all[i] if r != none]
            dsts = [r for r in dsts_all[i] if r != none]
            deact = ops[i] == barrier or not pending.isdisjoint(srcs)
            if deact:
                pending = set()
                flushes += 1
            if ops[i] in long_lat:  # its results are pending until first read
                pending.update(dsts)
            else:
                pending.difference_update(dsts)
            rows.append((deact, srcs, dsts))
        warps.append(rows)
    for policy in ("fifo", "lru"):
        lru = policy == "lru"
        for flush in (0, 1):
            for e in (1, 3, 8, RC_EMAX):
                hits = reads = 0
                for rows in warps:
                    cache = {}  # registers in insertion (FIFO) or recency (LRU) order
                    for deact, srcs, dsts in rows:
                        if deact and flush:
                            cache = {}
                        for r in srcs:
                            reads += 1
                            if r in cache:
                                hits += 1
                                if lru:
                                    del cache[r]
                                    cache[r] = None
                        for r in dsts:
                            if r in cache:
                                if lru:
                                    del cache[r]
                                    cache[r] = None
                                continue
                            cache[r] = None
                            if len(cache) > e:
                                del cache[next(iter(cache))]
                got = reg_cache_hit_rate(prof, e, policy, float(flush))
                assert got == pytest.approx(hits / reads, abs=1e-12), (policy, flush, e)
    assert flushes > 0
    assert reg_cache_hit_rate(prof, RC_EMAX, "lru", 1.0) < reg_cache_hit_rate(prof, RC_EMAX, "lru", 0.0)


def test_slow_bank_dependent_chain_matches_the_simulator():
    """One warp, a chain of dependent adds: each dependence waits for the producer's write to leave the
    bank and then for the slow read, so the simulator adds about 2 (x - 1) cycles per instruction at
    main-RF latency x; the interval model with its default coefficients follows within 10 %, and keeps
    growing beyond the old 16-cycle end of its table."""
    from rfmodel.analytic.model import sm_interval
    from rfmodel.analytic.throughput import coefficient_defaults
    from rfmodel.evaluate import exec_latencies, resolve_gpu
    from rfmodel.sim import simulate_trace, trace_from_warps

    sm = resolve_gpu("fermi-gtx480")
    n = 200
    tr = trace_from_warps([[("IADD3", [1], [1, 2])] * n])
    prof = profile_trace(tr, exec_latencies(sm))
    model = {}
    for x in (1, 3, 6, 12, 16):
        m = sm_interval(prof, sm, {}, coefficient_defaults(), bank_cycles=x)
        model[x] = float(np.ravel(m["cycles"])[0])
        if x <= 6:
            sim = simulate_trace(tr, sm, "baseline", {"main_rf_latency_x": x}).metrics["cycles"]
            if x > 1:
                assert (sim - 1201) / n == pytest.approx(2 * (x - 1), abs=1.0)  # 1x: n (L + 2) + 1
            assert model[x] == pytest.approx(sim, rel=0.10)
    assert model[16] > model[12] > model[6]


def _sched(n_sched=2, width=1, ii=None):
    """Issue resources for ``profile_trace(sched=...)``: one unit per class (class index), LSU = class 5."""
    ii = ii or {}
    return {
        "schedulers": n_sched,
        "issue_width": width,
        "initiation": [ii.get(c, 1) for c in range(N_OPCLASSES)],
        "unit": [int(c) if c not in (5, 6, 7, 8, 9, 10, 11, 12) else 5 for c in range(N_OPCLASSES)],
        "lsu_unit": 5,
    }


def test_list_schedule_serializes_a_shared_unit_known_answer():
    """Eight warps of one CTA each issue one SFU op (initiation 8) and EXIT, two schedulers: warps 0, 2, 4,
    6 share scheduler 0's SFU and issue it at 0, 8, 16, 24; the last EXIT issues at 25, so the CTA takes 26
    cycles for 16 instructions.  The single-warp chain table cannot see the shared unit (2 cycles)."""
    tr = _trace("mufu R1 = R2\nexit\n", warps=8)
    p = profile_trace(tr, _lat(), sched=_sched(ii={int(OpClass.SFU): 8}))
    assert list(p.sched_levels()) == [1]
    assert p.sched_cpi[0, 0, 0] == pytest.approx(26 / 16)
    # the single-CTA critical path is built only without the issue resources, which replace it
    assert p.cta_chain2 is None
    assert profile_trace(tr, _lat()).cta_chain2[0, 0] == pytest.approx(2.0)
    # one CTA resident: the rate is its instructions over its cycles
    assert float(p.sched_rate(1, 0.0, 0.0)) == pytest.approx(16 / 26)


def test_list_schedule_initiation_interval_of_one_warp():
    """Independent INT instructions of one warp issue every cycle with initiation 1, every second with 2."""
    text = "\n".join(f"iadd R{10 + i} = R1 R2" for i in range(8)) + "\nexit\n"
    tr = _trace(text)
    one = profile_trace(tr, _lat(), sched=_sched())
    two = profile_trace(tr, _lat(), sched=_sched(ii={int(OpClass.INT): 2}))
    assert one.sched_cpi[0, 0, 0] == pytest.approx(1.0)
    # INT at 0, 2, ..., 14; EXIT (its own unit here) at 15 -> 16 cycles for 9 instructions
    assert two.sched_cpi[0, 0, 0] == pytest.approx(16 / 9)


def test_list_schedule_with_collectors_known_answer():
    """The list schedule with operand collectors (``calib/collector_schedule.py``): one warp of eight
    independent INT instructions and EXIT on one scheduler with one collector, each instruction holding it
    ``1 + extra`` cycles, issues at 0, 1 + e, ..., 8 (1 + e): 8 (1 + e) + 1 cycles for 9 instructions; with
    two collectors every second instruction waits; with more collectors than an instruction's collection
    can fill, the schedule is the one without (the profile's, every cell equal)."""
    from rfmodel.analytic.profile import CHAIN2_EXTRA, MEM_LAT_GRID, SCHED_CTAS, sched_table

    text = "\n".join(f"iadd R{10 + i} = R1 R2" for i in range(8)) + "\nexit\n"
    tr = _trace(text)
    zeros = (np.zeros(tr.n_instrs), np.zeros(tr.n_instrs))
    cells = np.zeros((len(SCHED_CTAS), len(CHAIN2_EXTRA), len(MEM_LAT_GRID)), dtype=np.bool_)
    cells[0] = True
    one, two, none, many = (
        sched_table(tr, _lat(), None, _sched(n_sched=1), zeros, cells, collectors=c)[0] for c in (1, 2, 0, 80)
    )
    for k, e in enumerate(CHAIN2_EXTRA):
        assert one[k, 0] == pytest.approx((8 * (1 + e) + 1) / 9)
        # two collectors: pairs issue at 0, 1, then 1 + e, 2 + e, ...: the ninth at 4 (1 + e)
        assert two[k, 0] == pytest.approx((4 * (1 + e) + 1) / 9 if e > 0 else 1.0)
    assert np.array_equal(none, many)
    assert none[:, 0] == pytest.approx(1.0)


def test_list_schedule_barrier_releases_at_the_last_arrival():
    """Warp 0 runs a 3-deep FP chain (latency 4) before the barrier, warp 1 nothing: warp 1 arrives at cycle
    0 and waits until warp 0 arrives at 9; both EXIT at 10 -> 11 cycles for 7 instructions."""
    from rfmodel.sim import trace_from_warps

    chain = [("FFMA", [1], [1, 2])] * 3
    tail = [("BAR", [], []), ("EXIT", [], [])]
    tr = trace_from_warps([chain + tail, tail], warps_per_cta=2)
    p = profile_trace(tr, _lat(fp=4), sched=_sched())
    assert p.sched_cpi[0, 0, 0] == pytest.approx(11 / 7)


def test_list_schedule_matches_the_simulator_on_independent_warps():
    """Eight warps of independent FP32 work on the Volta preset (initiation 2 per sub-core unit): the list
    schedule's cycles are within 10 % of the simulator's, the single-warp chain table is off by more."""
    from rfmodel.evaluate import exec_latencies, issue_resources, resolve_gpu
    from rfmodel.sim import simulate_trace, trace_from_warps

    sm = resolve_gpu("volta-v100")
    w = [("FFMA", [10 + (i % 8)], [1, 2, 3]) for i in range(100)]
    tr = trace_from_warps([w] * 8, warps_per_cta=8)
    p = profile_trace(tr, exec_latencies(sm), sched=issue_resources(sm))
    sim = simulate_trace(tr, sm, "baseline", {}).metrics["cycles"]
    assert p.sched_cpi[0, 0, 0] * tr.n_instrs == pytest.approx(sim, rel=0.10)
    assert abs(profile_trace(tr, exec_latencies(sm)).cta_chain2[0, 0] - sim) / sim > 0.3


def test_bank_shares_take_reads_writes_and_the_write_hold_off_the_banks():
    """A design that serves operands elsewhere (read_share < 1) queues and serializes less at the banks and
    skips part of the slow-bank write hold: at 6x banks its IPC rises with the share kept off the banks,
    shares of 1 are the baseline itself, and with nothing reaching the banks the slow banks cost nothing."""
    from rfmodel.analytic.model import sm_interval
    from rfmodel.analytic.throughput import coefficient_defaults
    from rfmodel.evaluate import resolve_gpu, workload_profile

    sm = resolve_gpu("fermi-gtx480")
    prof = workload_profile("saxpy", sm, max_warps=16, share=False)
    coef = coefficient_defaults()
    base = sm_interval(prof, sm, {}, coef, bank_cycles=6.0)
    same = sm_interval(prof, sm, {}, coef, bank_cycles=6.0, read_share=1.0, write_share=1.0)
    assert float(same["ipc"]) == float(base["ipc"])
    ipcs, stalls = [], []
    for rs in (1.0, 0.75, 0.5, 0.25):
        m = sm_interval(prof, sm, {}, coef, bank_cycles=6.0, read_share=rs)
        ipcs.append(float(m["ipc"]))
        stalls.append(float(m["conflict_per_instr"]))
    assert all(b > a for a, b in zip(ipcs, ipcs[1:], strict=False))
    assert all(b < a for a, b in zip(stalls, stalls[1:], strict=False))
    off = sm_interval(prof, sm, {}, coef, bank_cycles=6.0, read_share=0.0, write_share=0.0)
    fast_off = sm_interval(prof, sm, {}, coef, bank_cycles=1.0, read_share=0.0, write_share=0.0)
    assert float(off["ipc"]) == pytest.approx(float(fast_off["ipc"]), rel=1e-9)


def test_reads_served_elsewhere_at_a_banks_time_keep_their_collection():
    """``collect_share``: the share of an instruction's reads' serialization its collection keeps (default
    the read share; 1 for reads that leave these banks for other banks, a register-file cache's misses):
    the default is the read share exactly; keeping it whole collects longer and so issues less, with the
    bank queue's own terms (the reads that reach the banks) unchanged at the same pace.  What a share below
    1 takes off is the serialization beyond an instruction's first access: the collectors' read stage stays
    (at the SM's own banks, ``first + share x excess`` bank cycles, ``first`` the instructions with a
    register source)."""
    from rfmodel.analytic.model import sm_interval
    from rfmodel.analytic.throughput import _bank_terms, coefficient_defaults
    from rfmodel.evaluate import resolve_gpu, workload_profile

    sm = resolve_gpu("fermi-gtx480")
    prof = workload_profile("saxpy", sm, max_warps=16, share=False)
    coef = coefficient_defaults()
    half = sm_interval(prof, sm, {}, coef, read_share=0.5)
    same = sm_interval(prof, sm, {}, coef, read_share=0.5, collect_share=0.5)
    whole = sm_interval(prof, sm, {}, coef, read_share=0.5, collect_share=1.0)
    assert float(same["ipc"]) == float(half["ipc"])
    assert float(whole["t_collect"]) > float(half["t_collect"])
    assert float(whole["ipc"]) < float(half["ipc"])
    args = (prof, "interleaved", 16, 1, True, 1.0, None)
    t_half, t_whole = _bank_terms(*args, (0.5, 1.0, None)), _bank_terms(*args, (0.5, 1.0, 1.0))
    full = _bank_terms(*args, (1.0, 1.0, None))
    assert float(t_whole[0]) == pytest.approx(float(full[0]), rel=1e-12)
    first = float(prof.ser_ports(16, 1, slots=True) - prof.ser_excess(16, 1, slots=True))
    excess = float(prof.ser_excess(16, 1, slots=True))
    assert 0.5 < first <= 1.0 and excess > 0.0
    assert float(full[0]) == pytest.approx(first + excess, rel=1e-12)
    assert float(t_half[0]) == pytest.approx(first + 0.5 * excess, rel=1e-12)
    for k in range(1, 8):  # the banks' own terms follow the read share alone
        np.testing.assert_array_equal(np.asarray(t_half[k]), np.asarray(t_whole[k]))


def test_each_design_declares_what_its_collectors_read_as_the_simulator_does():
    """``Design.operand_slots`` (the analytic bank model's choice of table) agrees with the simulator: a
    one-warp chain naming a register twice per instruction takes one cycle more per instruction than naming
    two registers exactly for the designs that read every slot, and no more for those that read it once."""
    from rfmodel.designs.base import design_names, get_design
    from rfmodel.errors import RfmodelError
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.sim import simulate_trace, trace_from_warps

    sm = resolve_gpu("fermi-gtx480")
    n = 100
    seen = set()
    for name in design_names():
        d = get_design(name)
        cyc = {}
        try:
            for srcs in ([2, 2], [2, 3]):
                tr = trace_from_warps([[("IADD3", [1], srcs)] * n])
                cyc[srcs[1]] = simulate_trace(tr, sm, name, {}).metrics["cycles"]
        except RfmodelError:  # a design without simulator support
            continue
        assert cyc[2] - cyc[3] == (n if d.operand_slots else 0), name
        seen.add(d.operand_slots)
    assert seen == {True, False}


def test_two_level_pool_bounds_the_issuing_warps_as_in_the_simulator():
    """On a two-level SM (``maxwell-ltrf``) only the active pool issues: a compute-bound kernel's IPC rises
    with ``active_warps`` in both engines, and with 1 or 2 warps per scheduler the model's IPC (the pool's
    warps at their dependence-chain pace) is within 15 % of the simulator's.  On an SM without the
    two-level scheduler the pool changes neither engine."""
    import rfmodel

    # The pool's structure, uncalibrated: the coefficients fitted on the executed traces put pipe_extra at its
    # lower bound and overestimate this kernel by 26-38 % at every pool size (docs/validation.md), which is
    # not the pool's doing.
    pools = [1, 2, 8]
    sim = rfmodel.evaluate(
        "baseline", "black_scholes", "maxwell-ltrf", method="simulate", params={"active_warps": pools}
    )["ipc"].values.ravel()
    ana = rfmodel.evaluate(
        "baseline",
        "black_scholes",
        "maxwell-ltrf",
        method="analytic",
        params={"active_warps": pools},
        calibration=False,
    )["ipc"].values.ravel()
    assert np.all(np.diff(sim) > 0) and np.all(np.diff(ana) > 0)
    assert ana[0] < 0.4 * ana[2] and sim[0] < 0.4 * sim[2]
    assert np.all(np.abs(ana[:2] / sim[:2] - 1) < 0.15)
    other = rfmodel.evaluate(
        "baseline", "black_scholes", "fermi-gtx480", method="analytic", params={"active_warps": [1, 8]}
    )["ipc"].values.ravel()
    assert other[0] == other[1]


# ---- the L1D access stream: order, loads' hit rate, each load's own latency ----------------------------


def _warps_with_lines(per_warp):
    """One warp per entry: a load (``LDG.E``) of each of its line numbers, in order."""
    from rfmodel.sim.program import trace_from_warps

    def load(k, ln):
        return ("LDG.E", [10 + k % 8], [2], {"lines": [ln * 128]})

    return trace_from_warps([[load(k, ln) for k, ln in enumerate(lines)] for lines in per_warp])


def test_stream_order_is_round_robin_or_follows_the_issue_rank():
    from rfmodel.analytic.profile import stream_order

    t = _warps_with_lines([[1, 2], [3, 4], [5, 6]])  # three one-warp CTAs
    instr = np.arange(t.n_instrs)
    lines = t.mem_line // 128

    def seq(rank=None):
        return lines[stream_order(t, instr, rank)].tolist()

    assert seq() == [1, 3, 5, 2, 4, 6]  # round-robin: every warp's first load, then the second
    assert seq(np.array([0, 1, 4, 5, 2, 3])) == [1, 2, 5, 6, 3, 4]  # in issue order


def test_loads_hit_rate_leaves_out_the_stores():
    """A store to the line its own load just brought in hits; no load waits less for it."""
    from rfmodel.sim.program import trace_from_warps

    w = []
    for ln in range(6):  # stream: load line, store the same line; each line once
        w += [("LDG.E", [10], [2], {"lines": [ln * 128]}), ("STG.E", [], [10, 2], {"lines": [ln * 128]})]
    t = trace_from_warps([w])
    p = profile_trace(t, _lat(), caches=[(8, 2)])
    assert p.l1d_hit_rate(8, 2) == pytest.approx(0.5)  # every store hits
    assert p.l1d_hit_rate(8, 2, loads=True) == 0.0
    assert p.l1d_hit_rate(64) == pytest.approx(0.5)  # the stack-distance estimate too
    assert p.l1d_hit_rate(64, loads=True) == 0.0


def test_write_no_allocate_hit_rates_leave_a_stored_line_out_until_it_is_loaded():
    """A cache that takes no line at a store miss (``write_allocate=False``): a store reads the stack but
    moves nothing.  Stream (line, kind): (1, load) (2, store) (2, load) (1, load).  Write-allocate: the
    load of 2 hits the store's line (distance 0) and the last load is at distance 1.  Write-no-allocate:
    the store misses and brings nothing, so the load of 2 is cold; the last load of 1 is again at distance
    1 (line 2, loaded since).  Stack-distance histograms by hand; the hit rates at one and four lines
    follow."""
    from dataclasses import replace

    from rfmodel.analytic.profile import stream_hit_tables
    from rfmodel.errors import RfmodelError
    from rfmodel.sim.program import trace_from_warps

    t = stream_hit_tables(np.array([1, 2, 2, 1]), np.array([True, False, True, True]), [])
    wa_all, wa_ld, nwa = t["line_stack_hist"], t["load_stack_hist"], t["nwa_stack_hist"]
    assert (wa_all[0], wa_all[1], wa_all[-1]) == (1, 1, 2) and (wa_ld[0], wa_ld[1], wa_ld[-1]) == (1, 1, 1)
    assert (nwa[0, 0], nwa[0, 1], nwa[0, -1]) == (0, 1, 3) and (nwa[1, 0], nwa[1, 1], nwa[1, -1]) == (0, 1, 2)
    w = [
        ("LDG.E", [10], [2], {"lines": [128]}),
        ("STG.E", [], [10, 2], {"lines": [256]}),
        ("LDG.E", [11], [2], {"lines": [256]}),
        ("LDG.E", [12], [2], {"lines": [128]}),
    ]
    p = profile_trace(trace_from_warps([w]), _lat())
    assert float(p.l1d_hit_rate(1.0)) == pytest.approx(0.25)  # the load of 2 after its store
    assert float(p.l1d_hit_rate(1.0, write_allocate=False)) == 0.0
    assert float(p.l1d_hit_rate(4.0, write_allocate=False)) == pytest.approx(0.25)  # the last load
    assert float(p.l1d_hit_rate(4.0, loads=True, write_allocate=False)) == pytest.approx(1 / 3)
    with pytest.raises(RfmodelError, match="write-no-allocate"):
        replace(p, nwa_stack_hist=None).l1d_hit_rate(2.0, write_allocate=False)


def test_an_l1d_without_write_allocation_in_the_stream_and_against_the_simulator():
    """The simulator's known answer (tests/test_sim_known.py) on the profile's exact L1D: store A, load A,
    load B, store B, load B in a 4-line cache.  Write-allocate: the load of A, the store to B and the second
    load of B hit (3 of 5); without, the store to A takes no line (2 of 5).  Then ``pb_bicg_1`` on
    `fermi-gtx480`, which stores each iteration to a line no load brings: the L1D hit rate is 0.666 with
    write-allocation and 0.333 without, in both engines."""
    from dataclasses import replace

    import rfmodel
    from rfmodel.analytic.profile import exact_hit_rates
    from rfmodel.evaluate import resolve_gpu

    lines, is_load = np.array([0, 0, 1, 1, 1]), np.array([False, True, True, False, True])
    rows = exact_hit_rates(lines, [(4, 4), (4, 4, False)], is_load)
    assert rows[0, 2] == pytest.approx(3 / 5) and rows[1, 2] == pytest.approx(2 / 5)
    assert (rows[0, 4], rows[1, 4]) == (1.0, 0.0)
    sm0 = resolve_gpu("fermi-gtx480")
    got = {}
    for walloc in (True, False):
        sm = replace(sm0, l1d=replace(sm0.l1d, write_allocate=walloc))
        a = rfmodel.evaluate("baseline", "pb_bicg_1", sm, method="analytic")
        s = rfmodel.evaluate("baseline", "pb_bicg_1", sm, method="simulate")
        assert a.attrs["not_modelled"] == ""
        got[walloc] = (float(a["l1d_hit_rate"].values.ravel()[0]), float(s["l1d_hit_rate"].values.ravel()[0]))
        assert got[walloc][0] == pytest.approx(got[walloc][1], abs=0.01)
    assert got[True][1] == pytest.approx(0.666, abs=0.005)
    assert got[False][1] == pytest.approx(0.333, abs=0.005)


def test_an_l1d_with_the_fermi_hash_in_the_stream_and_against_the_simulator():
    """The Fermi set index (``l1d.set_index = "fermi-hash"``, rfmodel.setassoc.set_of) in the profile's exact
    L1D: lines 0 and 64 of 128 bytes in a 32-set, 1-way cache share set 0 under linear indexing (the stream
    0 64 0 64 never hits) and fall in sets 0 and 1 under the hash (address bit 13 is line 64's bit 6): two
    hits of four.  Then ``gemm_micro8x8`` on `fermi-gtx480`, whose loads step by a power of two: L1D hit
    rate 0.00 linear and 0.23 hashed in the simulator; the analytic engine follows both (its schedule of the
    loads and its exact L1D rows index as the simulator)."""
    from dataclasses import replace

    import rfmodel
    from rfmodel.analytic.profile import exact_hit_rates
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.setassoc import SET_INDEX

    lines = np.array([0, 64, 0, 64])
    rows = exact_hit_rates(
        lines, [(32, 1, True, SET_INDEX["linear"], 128), (32, 1, True, SET_INDEX["fermi-hash"], 128)]
    )
    assert (rows[0, 2], rows[1, 2]) == (0.0, 0.5)
    sm0 = resolve_gpu("fermi-gtx480")
    hashed = replace(sm0, l1d=replace(sm0.l1d, set_index="fermi-hash"))
    a = rfmodel.evaluate("baseline", "gemm_micro8x8", hashed, method="analytic")
    s = rfmodel.evaluate("baseline", "gemm_micro8x8", hashed, method="simulate")
    lin = rfmodel.evaluate("baseline", "gemm_micro8x8", sm0, method="analytic")
    assert a.attrs["not_modelled"] == ""
    ha, hs = float(a["l1d_hit_rate"].values.ravel()[0]), float(s["l1d_hit_rate"].values.ravel()[0])
    assert hs > 0.2 and ha == pytest.approx(hs, abs=0.02)
    assert float(lin["l1d_hit_rate"].values.ravel()[0]) < 0.01


def test_set_fill_counts_the_lines_loads_leave_in_each_set():
    """``set_fill_table`` by hand.  Loads of lines 0 4 8 0 1 (a store of 12 between them brings nothing):
    first loads at 0, 1, 2 and 4 of 5 loads, held for 1, 0.8, 0.6 and 0.2 of the stream.  With 4 sets,
    lines 0, 4, 8 share set 0 and line 1 has set 1: one way holds 1 + 0.2, two 2.0, three and more 2.6;
    with one set the lines arrive 0, 4, 8, 1: 1, 1.8, 2.4, then 2.6."""
    from rfmodel.analytic.profile import SET_FILL_SETS, set_fill_table

    lines = np.array([0, 4, 12, 8, 0, 1])
    tab = set_fill_table(lines, np.array([True, True, False, True, True, True]))
    four, one = tab[list(SET_FILL_SETS).index(4)], tab[0]
    assert four[:4] == pytest.approx([1.2, 2.0, 2.6, 2.6]) and four[-1] == pytest.approx(2.6)
    assert one[:4] == pytest.approx([1.0, 1.8, 2.4, 2.6])


def test_each_load_waits_as_its_own_lines_fared():
    """Hit rows wait the L1D hit latency, missing rows the miss latency that keeps the loads' mean."""
    from rfmodel.analytic.profile import load_latency_terms

    n = 4
    row = np.array([0, 1, 1, 2])  # row 1 has two lines; row 3 is not a load
    hit = np.array([True, True, False, False])
    is_load = np.array([True, True, True, False])
    adj, slope = load_latency_terms(n, row, hit, is_load, 30.0)
    L = 100.0  # mean over the loads' lines: h = 0.5, so L_miss = (100 - 0.5 * 30) / 0.5 = 170
    lat = adj + slope * L + L
    assert lat[0] == pytest.approx(30.0)
    assert lat[1] == pytest.approx(170.0)  # one of its two lines missed: it waits for that one
    assert lat[2] == pytest.approx(170.0)
    assert adj[3] == 0.0 and slope[3] == 0.0
    # on a dependent chain the table sees them: two loads in a row, the second needs the first
    from rfmodel.sim.program import trace_from_warps

    t = trace_from_warps(
        [
            [
                ("LDG.E", [10], [2], {"lines": [0]}),
                ("LDG.E", [11], [10], {"lines": [0]}),
                ("LDG.E", [12], [11], {"lines": [128]}),
            ]
        ]
    )
    flat = profile_trace(t, _lat(), caches=[(8, 2)])
    split = profile_trace(t, _lat(), caches=[(8, 2)], l1_hit_latency=30.0)
    # flat: at a mean load latency of 256 cycles the chain runs to the last issue 0, 257, 514 (+1); split:
    # h = 1/3, its column of a 256-cycle miss is at the mean L = h 30 + (1 - h) 256 = 180.67, where the
    # chain runs 0, 257 (a miss), 288 (a hit, 31) (+1)
    from rfmodel.analytic.profile import CHAIN2_EXTRA, MEM_LAT_GRID

    e, j = 0, list(MEM_LAT_GRID).index(256.0)
    assert CHAIN2_EXTRA[e] == 0
    assert flat.mem_grid is None and flat.mem_lat_grid()[j] == 256.0
    assert flat.chain2[e, j] * 3 == pytest.approx(515.0)
    assert split.mem_lat_grid()[j] == pytest.approx(10.0 + 2.0 / 3.0 * 256.0)
    assert split.chain2[e, j] * 3 == pytest.approx(289.0)
    # between columns the table is read at the mean latency: at L = 100 (L_miss = 135) the chain is
    # 0, 136, 167 (+1), interpolated linearly between the columns of 128- and 256-cycle misses
    assert split.chain_at2(0.0, 100.0) * 3 == pytest.approx(168.0)


def test_live_registers_from_write_to_last_read():
    """R1 written at 0, last read at 2; R2 written at 1, read at 3; R3 written at 2, never read (dead at
    once); R4 read at 3 without a write (live from the warp's start): (2 + 2 + 0 + 3) / 4 instructions."""
    from rfmodel.sim.program import trace_from_warps

    t = trace_from_warps(
        [[("IADD3", [1], [5]), ("IADD3", [2], [5]), ("IADD3", [3], [1]), ("IADD3", [6], [2, 4])]]
    )
    p = profile_trace(t, _lat())
    # R5 is read at 0 and 1 from the start too: 1 more step; R6 written last, never read
    assert p.live_regs == pytest.approx((2 + 2 + 0 + 3 + 1) / 4)


GUARDED_WRITE = """
      mov R1 = 5              # 0
      isetp p = R0            # 1
      @p mov R1 = 7           # 2  may not happen: the value of 0 may reach 4
      @p add R3 = R3          # 3
      stg = R1 R3             # 4
      exit                    # 5
"""


def test_live_registers_freed_at_the_compilers_dead_bits():
    """With the static kernel a value lives until the compiler frees it: R1's value of 0 is live-out (the
    guarded write at 2 may not happen), so it lives until it is written again at 2 (2 steps), where the
    trace, in which it is never read, frees it at once. The rest as in the trace: R0 live from the start,
    dead at 1 (1); R3 live from the start, written at 3 (3), read for the last time at 4 (1); R1's second
    value 2 -> 4 (2): 9 steps over 6 instructions, against the trace's 7."""
    from rfmodel.analytic.profile import live_register_mean

    k = build_kernel(GUARDED_WRITE)
    t = expand(k, ctas=1, threads_per_cta=64)  # two warps of the same six rows
    assert live_register_mean(t, t.warp_ptr, k) == (1.5, "the compiler's dead bits of the static kernel")
    assert live_register_mean(t, t.warp_ptr) == (pytest.approx(7 / 6), "the trace's last reads")
    assert profile_trace(t, _lat(), kernel=k).live_regs == 1.5
    assert profile_trace(t, _lat()).live_regs == pytest.approx(7 / 6)


def test_live_registers_of_a_shipped_kernel_hold_at_least_the_traces():
    """The compiler's liveness is conservative over paths: a value it frees is never read again in the trace,
    so the live registers it gives are at least the trace's last reads give, on a real kernel with loops."""
    from rfmodel.analytic.profile import live_register_mean
    from rfmodel.workload.static import static_kernel
    from rfmodel.workload.suite import load_workload

    wl = load_workload("sgemm_tiled", num_sms=15, max_warps=8)
    k = static_kernel(wl.trace, wl.kernel)
    assert k is not None
    static, how = live_register_mean(wl.trace, wl.trace.warp_ptr, k)
    dynamic, _ = live_register_mean(wl.trace, wl.trace.warp_ptr)
    assert how.startswith("the compiler's") and dynamic <= static <= wl.trace.regs_per_thread
    assert static > 1.2 * dynamic  # values read in a loop are held past its last trip


def test_scattered_sources_serialize_as_uniform_banks():
    """Every instruction reads two distinct registers: where an allocator placed them (any of B banks
    alike) they share a bank with probability 1 / B: 1 + 1/B bank cycles, 1/B beyond the first, and with
    two ports one cycle; by their numbers (R2, R3 interleaved over 16 banks) they never share one. Three
    sources over two banks: the fullest holds two (3/4) or three (1/4): 2.25 cycles on one port, 1.25 on
    two."""
    two = profile_trace(_trace("ffma R1 = R2 R3\nffma R4 = R2 R3\nexit\n"), _lat())
    assert two.src_count_pmf[2] == pytest.approx(2 / 3)  # the exit reads nothing
    ser, excess = two.ser_scattered(np.array([16, 4]), 1)
    assert ser == pytest.approx([2 / 3 * (1 + 1 / 16), 2 / 3 * (1 + 1 / 4)])
    assert excess == pytest.approx([2 / 3 / 16, 2 / 3 / 4])
    assert two.ser_scattered(16, 2)[1] == pytest.approx(0.0)
    assert two.ser_excess(16, 1) == pytest.approx(0.0)
    three = profile_trace(_trace("ffma R1 = R2 R3 R4\nexit\n"), _lat())
    assert three.ser_scattered(2, 1)[0] == pytest.approx(0.5 * 2.25)
    assert three.ser_scattered(2, 2)[0] == pytest.approx(0.5 * 1.25)


def test_bank_read_share_known_answer():
    """Of the instructions with sources, those that still read a bank when each distinct source reaches it
    with probability s: one source 2/3 of them (s), three sources 1/3 (1 - (1 - s)^3); at s = 1/2:
    2/3 x 1/2 + 1/3 x 7/8 = 5/8; 1 at s = 1 (the baseline's), 0 at s = 0."""
    prof = profile_trace(_trace("ffma R1 = R2 R2\nffma R4 = R1 R5 R6\nmov R7 = R2\nexit\n"), _lat())
    assert prof.src_count_pmf[1] == pytest.approx(2 / 4) and prof.src_count_pmf[3] == pytest.approx(1 / 4)
    np.testing.assert_allclose(prof.bank_read_share(np.array([0.0, 0.5, 1.0])), [0.0, 5 / 8, 1.0])


def test_instructions_served_by_an_operand_cache_wait_in_no_bank_queue():
    """An instruction whose every operand an operand cache serves collects without a bank's queue: at a read
    share of 0 the collection time is the collectors' own cycle and, for an instruction with a register
    source, the read stage (one cycle, not the slow banks' six), whatever the banks' queue is doing under the
    writes; in between the queue's wait is charged to the share of
    instructions that still read a bank (``bank_read_share``) among those with a register source, and an
    instruction with none (``src_count_pmf[0]``) waits in no queue, as in the simulator."""
    from rfmodel.analytic.engine import workload_profile
    from rfmodel.analytic.model import sm_interval
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    prof = workload_profile("black_scholes", sm)
    none = sm_interval(prof, sm, {}, {}, bank_cycles=6.0, read_share=0.0)
    assert float(none["bank_wait"]) > 1.0  # the writes still queue at the slow banks
    first = float(prof.ser_ports(16, 1, slots=True) - prof.ser_excess(16, 1, slots=True))
    assert float(none["t_collect"]) == pytest.approx(1.0 + first, rel=1e-12)
    part = sm_interval(prof, sm, {}, {}, bank_cycles=6.0, read_share=0.25)
    ser = float(part["ser"])
    share = float(prof.bank_read_share(0.25))
    assert 0.25 < share < 1.0
    sourced = 1.0 - float(prof.src_count_pmf[0])  # an instruction with no register source waits in no queue
    assert 0.5 < sourced < 1.0
    t_c = 1.0 + ser + sourced * share * float(part["bank_wait"])
    assert float(part["t_collect"]) == pytest.approx(t_c, rel=1e-9)
    whole = sm_interval(prof, sm, {}, {}, bank_cycles=6.0)  # every source reaches the banks
    t_c = 1.0 + float(whole["ser"]) + sourced * float(whole["bank_wait"])
    assert float(whole["t_collect"]) == pytest.approx(t_c, rel=1e-9)


def test_bank_wait_is_at_most_the_other_collectors_accesses():
    """A closed population: on volta-v100 a sub-core's two collectors share its four banks, so a read waits
    behind at most the other collector's instruction's accesses in its bank, (r x 6 + w x 6) / 4 cycles at 6x
    banks (r, w its reads and writes); kmeans_assign runs there near the banks' load, where the open queue's
    wait is longer, so the bound is the wait; with one collector a sub-core there is no other instruction to
    wait behind.  On fermi-gtx480 (16 collectors over 16 banks) the bound is well above the queue's wait."""
    from rfmodel.analytic.engine import workload_profile
    from rfmodel.analytic.model import sm_interval
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("volta-v100")
    prof = workload_profile("kmeans_assign", sm)
    m = sm_interval(prof, sm, {}, {}, bank_cycles=6.0)
    bound = (prof.reads_per_instr * 6.0 + prof.writes_per_instr * 6.0) / 4.0
    assert float(m["bank_wait"]) == pytest.approx(bound, rel=1e-12)
    sourced = 1.0 - float(prof.src_count_pmf[0])  # the wait of the instructions with a register source
    assert float(m["t_collect"]) == pytest.approx(1.0 + float(m["ser"]) + sourced * bound, rel=1e-9)
    one = sm_interval(prof, sm, {"collector_units": np.array([4])}, {}, bank_cycles=6.0)
    assert float(np.ravel(one["bank_wait"])[0]) == 0.0
    fermi = resolve_gpu("fermi-gtx480")
    fp = workload_profile("kmeans_assign", fermi)
    f = sm_interval(fp, fermi, {}, {}, bank_cycles=6.0)
    # the bound (the 15 other collectors' accesses in the bank) does not bind: the open queue's wait decides
    closed = 15 * (fp.reads_per_instr + fp.writes_per_instr) * 6.0 / 16
    assert 0.0 < float(f["bank_wait"]) < 0.75 * closed


def test_leading_warps_known_answer():
    """Whole warps in trace order until the budget is reached (at least one, at most all)."""
    from rfmodel.analytic.profile import leading_warps

    wp = np.array([0, 10, 20, 30])
    assert list(leading_warps(wp, 15)) == [0, 10, 20]
    assert list(leading_warps(wp, 10)) == [0, 10]
    assert list(leading_warps(wp, 1)) == [0, 10]
    assert list(leading_warps(wp, 100)) == [0, 10, 20, 30]


def test_per_warp_tables_from_a_sample_of_identical_warps_match_all_warps(monkeypatch):
    """Eight identical warps: the per-warp tables (chains, register cache, intervals, live registers,
    distances) taken over the two leading warps (``TABLE_MAX_INSTRS`` below one CTA's instructions) equal
    the tables over all eight per instruction, and the distance histograms are a quarter of the counts."""
    import rfmodel.analytic.profile as P
    from rfmodel.designs.base import design_classes

    design_classes()  # the designs register the tables they read (the register cache's, the intervals')

    text = "\n".join(f"ffma R{10 + i % 6} = R{10 + (i + 3) % 6} R2 R3" for i in range(40)) + "\nbar\nexit\n"
    tr = _trace(text, warps=8)
    full = profile_trace(tr, _lat(fp=4))
    per_warp = tr.n_instrs // 8
    monkeypatch.setattr(P, "TABLE_MAX_INSTRS", per_warp + 1)  # two whole warps
    part = profile_trace(tr, _lat(fp=4))
    for f in (
        "chain",
        "chain2",
        "rc_hits",
        "rc_fifo_hist",
        "iv_len",
        "iv_maxload",
        "deact_per_instr",
        "live_regs",
    ):
        a, b = np.asarray(getattr(full, f), float), np.asarray(getattr(part, f), float)
        if f == "rc_fifo_hist":  # counts of the sampled warps
            a = a / a.sum()
            b = b / b.sum()
        assert np.allclose(a, b), f
    assert np.array_equal(full.dep_dist_hist, 4 * part.dep_dist_hist)
    # the warp-independent parts are the whole trace's
    assert part.n_instrs == full.n_instrs and np.array_equal(part.ser, full.ser)


def test_the_anchor_factor_is_remembered_per_profile_sm_and_coefficients():
    """A second call with the same reference, profile object, SM and coefficients gives the factor computed
    the first time without running the reference again; another SM or coefficient is computed anew."""
    from unittest import mock

    from rfmodel.analytic import engine
    from rfmodel.analytic.engine import (
        anchor_factor,
        cached_anchor_factor,
        resolve_calibration,
        workload_profile,
    )
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    ref = get_design("baseline")
    prof = workload_profile("saxpy", sm)
    grid = resolve_calibration(ref, sm, None)[0]
    engine._ANCHORS.clear()
    first = cached_anchor_factor(ref, prof, sm, grid)
    assert first == anchor_factor(ref, prof, sm, grid)
    with mock.patch.object(engine, "anchor_factor", side_effect=AssertionError("ran again")):
        assert cached_anchor_factor(ref, prof, sm, grid) == first
    other = {**grid, "calib.latency_scale": grid["calib.latency_scale"] * 1.5}
    assert cached_anchor_factor(ref, prof, sm, other) == anchor_factor(ref, prof, sm, other) != first
    # coefficients that are arrays (drawn per sample) are never remembered
    drawn = {**grid, "calib.latency_scale": np.array([1.0, 2.0])}
    with mock.patch.object(engine, "anchor_factor", return_value=0.5) as run:
        cached_anchor_factor(ref, prof, sm, drawn)
        cached_anchor_factor(ref, prof, sm, drawn)
    assert run.call_count == 2


def test_the_anchor_curve_is_remembered_and_read_only():
    """The L1D anchor curve of a profile is built once per (reference, profile, SM, coefficients) and shared
    read-only between the calls that use it (CERF and the unified memory read it at every evaluation)."""
    from rfmodel.analytic import engine
    from rfmodel.analytic.engine import lazy_anchor, resolve_calibration, workload_profile
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    ref = get_design("baseline")
    prof = workload_profile("spmv_csr", sm)
    grid = resolve_calibration(ref, sm, None)[0]
    engine._ANCHORS.clear()
    a = lazy_anchor(ref, prof, sm, grid, 1.0).curve()
    b = lazy_anchor(ref, prof, sm, grid, 1.0).curve()
    assert a[0] is b[0] and a[1] is b[1] and len(a[0]) > 1
    assert not a[0].flags.writeable and not a[1].flags.writeable
    fresh = engine.anchor_curve(ref, prof, sm, grid)
    assert np.array_equal(fresh[0], a[0]) and np.array_equal(fresh[1], a[1])


def test_collector_set_shares_by_hand():
    """fermi-gtx480's typed collectors (6 SP, 8 SFU, 2 MEM of 16): integer work goes to the SP set (no INT
    units), shared-memory loads to MEM, SFU work to SFU; generic units give one pool (``None``)."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.spec.occupancy import collector_set_shares

    sm = resolve_gpu("fermi-gtx480")
    mix = np.zeros(N_OPCLASSES)
    mix[OpClass.INT], mix[OpClass.LD_SHARED], mix[OpClass.SFU] = 0.5, 0.3, 0.2
    np.testing.assert_allclose(collector_set_shares(sm, mix), [[6 / 16, 0.5], [8 / 16, 0.2], [2 / 16, 0.3]])
    assert collector_set_shares(resolve_gpu("volta-v100"), mix) is None


def test_typed_collector_sets_bound_their_own_instructions():
    """On a typed-collector SM the two memory collectors serve the memory instructions alone: is_aes (65 %
    memory instructions) on fermi-gtx480 at 6x banks is bounded by 2 / (t_hold x 0.65); the simulator
    runs it at 0.343 IPC, where one pool of 16 collectors gave the calibrated model 0.61.  One generic pool
    of the same 16 units gives the single-pool answer, and a grid's collector_units counts generic units
    (as optimize's --validate simulates them)."""
    from rfmodel.analytic.engine import workload_profile
    from rfmodel.analytic.model import sm_interval
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    gen = sm.replace(collectors=sm.collectors.replace(gen=16, sp=0, sfu=0, mem=0))
    prof = workload_profile("is_aes", sm)
    typed = sm_interval(prof, sm, {}, {}, bank_cycles=6.0)
    pool = sm_interval(prof, gen, {}, {}, bank_cycles=6.0)
    hold = float(typed["t_collect"])  # a collector is held for the collection
    mem = float(
        prof.mix[
            [OpClass.LD_GLOBAL, OpClass.ST_GLOBAL, OpClass.LD_SHARED, OpClass.ST_SHARED, OpClass.LD_CONST]
        ].sum()
    )
    assert float(typed["rate_collectors"]) == pytest.approx(2.0 / (hold * mem), rel=1e-9)
    assert float(pool["rate_collectors"]) == pytest.approx(16.0 / float(pool["t_collect"]), rel=1e-9)
    assert float(typed["ipc"]) < 0.75 * float(pool["ipc"])
    grid = sm_interval(prof, sm, {"collector_units": np.array([16])}, {}, bank_cycles=6.0)
    assert np.asarray(grid["ipc"]).item() == pytest.approx(float(pool["ipc"]), rel=1e-12)


def test_reads_per_written_value_known_answer():
    """Each value's reads until its register is written again or the warp ends (the Cache-Emulated Register
    File paper's Fig. 2a): R1's first value is read by two instructions (the second names it twice: one
    read), its second value once; R4's once; R6's never; R2 and R3 were never written here (not values)."""
    from rfmodel.workload.values import reads_per_value

    text = """
ffma R1 = R2 R3
ffma R4 = R1 R3
ffma R5 = R1 R1
ffma R1 = R4 R2
ffma R6 = R1 R5
exit
"""
    # values: R1 (2 reads), R4 (1), R5 (1), R1' (1), R6 (0) -> shares of 0, 1, 2, >= 3 reads
    assert reads_per_value(_trace(text)) == [0.2, 0.6, 0.2, 0.0]
    # two warps run the same code: the same shares
    assert reads_per_value(_trace(text, warps=2)) == [0.2, 0.6, 0.2, 0.0]


def test_ipc_fixed_point_is_exact_in_two_runs_where_the_cpi_is_affine_in_the_cost():
    """With ``1 / IPC = 2 + 0.5 e`` and an M/D/1-like cost ``e = 4 x / (1 - x / 2)`` the secant on the CPI is
    the model itself: the second run is at the root, to the cheap side's search (2^-20; by hand: x (2 + 2 x /
    (1 - x / 2)) = 1, i.e. x^2 + 2.5 x - 1 = 0 times 1 - x / 2: x = (sqrt(10.25) - 2.5) / 2)."""
    from rfmodel.analytic.model import ipc_fixed_point

    runs = []

    def run(e):
        runs.append(e)
        return {"ipc": 1.0 / (2.0 + 0.5 * np.asarray(e))}

    def cost(x):
        return 4.0 * x / (1.0 - np.minimum(x / 2.0, 0.95)), x

    x, out, aux = ipc_fixed_point(run, cost, np.array([0.5]))
    root = (-2.5 + np.sqrt(10.25)) / 2.0
    assert len(runs) == 2 and x[0] == pytest.approx(root, rel=1e-5)
    assert out["ipc"][0] == pytest.approx(root, rel=1e-5) and aux[0] == x[0]


def test_ipc_fixed_point_settles_per_point_where_a_damped_iteration_does_not():
    """Steep queues (``g(x) = run(cost(x))`` falls at -6.8 and -10.8 at the roots of k = 2 and 3: a
    half-damped iteration's error grows 2.9x and 4.9x a step there) and a curved CPI: each point's root
    within ``rtol`` (against scipy's brentq), and a point's answer does not depend on the points it is
    solved beside (bit-identical alone and in a grid)."""
    from scipy.optimize import brentq

    from rfmodel.analytic.model import ipc_fixed_point

    k = np.array([0.2, 1.0, 2.0, 3.0, 6.0])

    def run(e):
        e = np.asarray(e)
        return {"ipc": 1.5 / np.sqrt(1.0 + (0.4 * e) ** 2 + 0.3 * e)}

    def cost(x, k=k):
        u = np.minimum(k * x, 0.95)
        return np.minimum(k * x / (1.0 - u), 50.0), u

    x, out, _ = ipc_fixed_point(run, cost, run(0.0 * k)["ipc"])
    for i, ki in enumerate(k):

        def f(v, ki=ki):
            return float(run(cost(np.array([v]), np.array([ki]))[0])["ipc"][0]) - v

        root = brentq(f, 1e-9, 1.5)
        assert x[i] == pytest.approx(root, rel=2e-3) and out["ipc"][i] == pytest.approx(root, rel=2e-3)
        alone, _, _ = ipc_fixed_point(run, lambda v, ki=ki: cost(v, np.array([ki])), run(np.zeros(1))["ipc"])
        assert alone[0] == x[i]
    # sixteen half-damped steps from the same start end far from the roots of the steep points
    for i in (2, 3):
        v = float(run(np.zeros(1))["ipc"][0])
        for _ in range(16):
            v = 0.5 * v + 0.5 * float(run(cost(np.array([v]), k[i : i + 1])[0])["ipc"][0])
        assert abs(v - x[i]) > 0.1 * x[i]


def test_issue_stall_holds_every_warp_whatever_its_dependences():
    """``Effects.issue_stall``: cycles per instruction a warp is held at issue.  Zero changes nothing; a
    stall far above a warp's own cycles per instruction leaves the latency bound at the resident warps
    over the stall (each warp issues once per ``s`` cycles), whatever the kernel's dependences."""
    from rfmodel.analytic.model import AnalyticContext, Effects
    from rfmodel.evaluate import resolve_gpu, workload_profile

    sm = resolve_gpu("fermi-gtx480")
    prof = workload_profile("black_scholes", sm)
    ctx = AnalyticContext(prof, sm, {}, {})
    base, zero = ctx.model(), ctx.model(Effects(issue_stall=0.0))
    assert float(zero["ipc"]) == float(base["ipc"])
    s = 2000.0
    held = ctx.model(Effects(issue_stall=s))
    warps = float(held["warps"])
    assert float(held["ipc"]) == pytest.approx(warps / s, rel=0.03)
    assert float(ctx.model(Effects(issue_stall=5.0))["ipc"]) < float(base["ipc"])


def test_a_design_parameter_is_the_grids_or_its_typed_default():
    """``ctx.param``: the grid's values where the grid sets the parameter, else the design's default, typed
    once (``Design.default_params``, the same object each time, kept off the design object); an optional
    parameter left out takes the SM field it names (the RFC's ``main_rf_banks``: the SM's banks);
    ``Design.grid_param`` the same for ``structures``; a context without a design's defaults refuses."""
    from rfmodel.analytic.model import AnalyticContext
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu, workload_profile

    sm = resolve_gpu("fermi-gtx480")
    prof = workload_profile("saxpy", sm)
    stt, rfc = get_design("stt"), get_design("rfc")
    assert stt.default_params is stt.default_params and "default_params" not in vars(stt)
    ctx = AnalyticContext(prof, sm, {"wb_entries": np.array([0, 4])}, {}, stt.default_params)
    assert ctx.param("wb_entries").tolist() == [0.0, 4.0]
    assert float(ctx.param("bdi")) == float(stt.default_params.bdi)
    rctx = AnalyticContext(prof, sm, {}, {}, rfc.default_params)
    assert float(rctx.param("main_rf_banks")) == sm.num_banks
    assert rfc.grid_param(sm, {"num_banks": 8}, "rfc_kb") == rfc.default_params.rfc_kb
    assert rfc.grid_param(sm, {"rfc_kb": [4, 8]}, "rfc_kb") == [4, 8]
    with pytest.raises(KeyError, match="wb_entries"):
        AnalyticContext(prof, sm, {}, {}).param("wb_entries")


def test_a_trace_is_its_static_kernels_only_while_its_checked_rows_match():
    """``static_kernel`` takes the kernel while every checked row names a prefix of its instruction's sources
    (below RZ) and has its operation class; a changed register or class in a checked row refuses it, a row
    naming fewer of the sources does not."""
    import copy

    from rfmodel.trace import NONE
    from rfmodel.workload.static import static_kernel
    from rfmodel.workload.suite import load_workload

    wl = load_workload("sgemm_tiled", max_warps=4)
    k, tr = wl.kernel, wl.trace
    assert static_kernel(tr, k) is k
    src, op = np.array(tr.src), np.array(tr.op)
    step = max(1, len(src) // 2000)  # the check reads every step-th row
    r = 0
    while (src[r] != NONE).sum() < 2:  # a checked row that names two sources or more
        r += step

    def with_columns(s, o):
        t = copy.copy(tr)
        object.__setattr__(t, "src", s)
        object.__setattr__(t, "op", o)
        return t

    named = np.flatnonzero(src[r] != NONE)
    fewer = src.copy()
    fewer[r, named[-1]] = NONE
    assert static_kernel(with_columns(fewer, op), k) is k
    other = src.copy()
    other[r, named[0]] = (int(src[r, named[0]]) + 1) % 250
    assert static_kernel(with_columns(other, op), k) is None
    cls = op.copy()
    cls[r] = (int(op[r]) + 1) % 8
    assert static_kernel(with_columns(src, cls), k) is None


def test_shared_memory_bank_passes_slow_both_engines_alike():
    """Half the instructions shared loads of ``p`` passes through the banks (bank conflicts), the other half
    independent FFMAs: the load/store unit, a pass a cycle, bounds IPC at 1 / (p / 2) in both engines; the
    analytic effect of more passes, IPC(p) / IPC(1), follows the simulator's within 10 %, and the profile
    counts the passes (``smem_passes_per_instr``: 64 loads of p passes in 129 instructions a warp)."""
    from rfmodel.analytic.engine import run_analytic, workload_profile
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.sim import simulate_trace, trace_from_warps
    from rfmodel.workload.suite import Workload

    sm = resolve_gpu("volta-v100")
    ipc = {}
    for p in (1, 2, 4, 8):
        warp = []
        for i in range(64):
            load = ("LDS", [10 + 2 * (i % 8)], [2], {"smem_passes": p})
            warp += [load, ("FFMA", [40 + (i % 8)], [3, 4, 5])]
        t = trace_from_warps([[*warp, ("EXIT", [], [])]] * 32, warps_per_cta=8)
        prof = workload_profile(Workload(f"lds{p}", t), sm, max_warps=None, share=False)
        assert prof.smem_passes_per_instr == pytest.approx(64 * p / 129)
        a = float(np.asarray(run_analytic(get_design("baseline"), prof, sm, {})["ipc"]))
        s = simulate_trace(t, sm).metrics["ipc"]
        assert a <= 2 / p + 1e-9 and s <= 2 / p + 0.01
        ipc[p] = (a, s)
    for p in (2, 4, 8):
        assert ipc[p][0] / ipc[1][0] == pytest.approx(ipc[p][1] / ipc[1][1], rel=0.10)


def test_the_bank_queues_wait_at_another_pace():
    """``bank_wait_at`` takes the interval model's bank queue at any pace: at the model's own steady IPC it
    is the model's ``bank_wait``; it grows with the pace and is 0 at none."""
    from rfmodel.analytic.throughput import bank_wait_at

    p = _profile_mixed()
    ii = np.ones(N_OPCLASSES)
    banks = np.array([1, 2, 4, 8, 16])
    m = interval_model(
        p, SmTerms(warps=8, schedulers=2, issue_width=1, banks=banks, collectors=8, initiation=ii)
    )
    q = m["bank_queue"]
    np.testing.assert_allclose(bank_wait_at(q, m["ipc_steady"]), m["bank_wait"], rtol=1e-6, atol=1e-12)
    paces = np.linspace(0.0, 1.0, 6)[:, None] * m["ipc_steady"]
    waits = bank_wait_at(q, paces)
    assert np.all(waits[0] == 0.0) and np.all(np.diff(waits, axis=0) >= 0.0)
    assert np.all(waits[-1, :2] > 0.0)  # one and two banks queue


def test_a_designs_own_pace_takes_the_bank_queues_stalls():
    """Where a design bounds the IPC below the shared model's (``AnalyticContext.result(ipc=...)``: the
    LTRF family's prefetches), the bank queue's stalls are those of its own pace; the serialization
    within an instruction stays; at the model's own IPC nothing changes."""
    from rfmodel.analytic.model import AnalyticContext
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu, workload_profile

    sm = resolve_gpu("fermi-gtx480")
    prof = workload_profile("sgemm_tiled", sm)
    base = get_design("baseline")
    ctx = AnalyticContext(prof, sm, {"num_banks": np.array([2, 4, 8])}, base.calibration_params)
    m = ctx.model()
    same = ctx.result(m, events={}, ipc=m["ipc"] + 0.0)["bank_conflict_stall_cycles"]
    own = ctx.result(m, events={})["bank_conflict_stall_cycles"]
    np.testing.assert_allclose(same, own, rtol=1e-12)
    slow = ctx.result(m, events={}, ipc=0.5 * m["ipc"])["bank_conflict_stall_cycles"]
    serial = ctx.n * m["conflict_serial"]
    assert np.all(slow < own) and np.all(slow >= serial * (1 - 1e-12))
