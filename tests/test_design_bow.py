"""BOW (sliding operand window): hand-computed forwarding and write bypass, flushes, invariants."""

from __future__ import annotations

import numpy as np
import pytest
from test_sim_known import make_sm, workload_trace
from test_slow_bank_collectors import check_invariants as cache_invariants
from test_slow_bank_collectors import one_bank_pair_at_4x

import rfmodel
from rfmodel.designs.base import get_design
from rfmodel.sim import simulate_trace, trace_from_warps


def check_invariants(r, trace):
    cache_invariants(r, trace, "bow")
    c = r.counts
    assert c["bow_bypassed_writes"] + c["bow_rf_writes"] == c["writes"]


def _known_trace():
    """One warp of five instructions, the forwarding known answer's (below)."""
    return trace_from_warps(
        [
            [
                ("IADD3", [10], [1, 2]),
                ("IADD3", [11], [1, 3]),
                ("IADD3", [12], [2, 10]),
                ("IADD3", [13], [2, 1]),
                ("IADD3", [14], [3, 11]),
            ]
        ]
    )


def test_window_forwarding_known_answer():
    # Window of 3: a value read or written by one of the 2 previous instructions is forwarded.
    #   I0: R10 = R1, R2    both miss
    #   I1: R11 = R1, R3    R1 (I0, 1 back) hit; R3 miss
    #   I2: R12 = R2, R10   R2 (I0, 2 back) hit; R10 (written by I0, 2 back) hit
    #   I3: R13 = R2, R1    R2 (I2) hit; R1 (I1, 2 back) hit
    #   I4: R14 = R3, R11   R3 (I1, 3 back) miss; R11 (written by I1, 3 back) miss
    # 5 hits, 5 misses.  Writes: R10 is read only by I2, inside I0's window: bypassed; R11 is read
    # 3 instructions later: written; R12..R14 are never read: written (4 bank writes).
    tr = _known_trace()
    r = simulate_trace(tr, make_sm(), "bow")
    c = r.counts
    assert (c["bow_hits"], c["bow_misses"]) == (5, 5)
    assert (c["bow_bypassed_writes"], c["bow_rf_writes"], c["bank_write_acc"]) == (1, 4, 4)
    check_invariants(r, tr)
    # without the write bypass every result is written
    r = simulate_trace(tr, make_sm(), "bow", {"write_bypass": 0})
    assert (r.counts["bow_bypassed_writes"], r.counts["bank_write_acc"]) == (0, 5)
    # a window of 1 forwards nothing
    r = simulate_trace(tr, make_sm(), "bow", {"window": 1})
    assert r.counts["bow_hits"] == 0 and r.counts["bow_bypassed_writes"] == 0


def _branch_trace(taken: bool):
    tr = trace_from_warps([[("IADD3", [10], [1]), ("BRA", [], []), ("IADD3", [11], [1, 10])]])
    if taken:
        tr.sidx[2] = 7  # the instruction after the branch is not its fall-through
    return tr


def test_taken_branch_flushes_the_window():
    # Not taken: R1 (I0, 2 back) and R10 (written by I0) are forwarded to I2, and R10's write is
    # bypassed.  Taken: the window is flushed, both are read from the banks and R10 is written.
    r = simulate_trace(_branch_trace(False), make_sm(), "bow")
    assert (r.counts["bow_hits"], r.counts["bow_bypassed_writes"]) == (2, 1)
    r = simulate_trace(_branch_trace(True), make_sm(), "bow")
    assert (r.counts["bow_hits"], r.counts["bow_bypassed_writes"]) == (0, 0)
    assert r.metrics["bow_flushes"] == 1


def test_partial_write_is_not_bypassed():
    # R10 written with half of the lanes active: the old value lives on in the other lanes, which
    # the window never held, so the write goes to the bank and the next read of R10 too
    tr = trace_from_warps([[("IADD3", [10], [1], {"active": 16}), ("IADD3", [11], [10])]])
    r = simulate_trace(tr, make_sm(), "bow")
    assert r.counts["bow_bypassed_writes"] == 0 and r.counts["bow_hits"] == 0
    # all lanes: forwarded and bypassed
    tr = trace_from_warps([[("IADD3", [10], [1]), ("IADD3", [11], [10])]])
    r = simulate_trace(tr, make_sm(), "bow")
    assert r.counts["bow_bypassed_writes"] == 1 and r.counts["bow_hits"] == 1


@pytest.mark.parametrize(
    "gpu, workload",
    [("fermi-gtx480", "saxpy"), ("volta-v100", "reduce_sum"), ("volta-v100", "synthetic:fp-heavy")],
)
def test_builtin_workloads(gpu, workload):
    sm, tr = workload_trace(gpu, workload, max_warps=16)
    r = simulate_trace(tr, sm, "bow")
    check_invariants(r, tr)
    assert r.metrics["rf_cache_hit_rate"] > 0.05


def test_analytic_hit_rate_grows_with_window():
    from rfmodel.analytic.engine import run_analytic
    from rfmodel.evaluate import resolve_gpu, workload_profile

    sm = resolve_gpu("fermi-gtx480")
    prof = workload_profile("saxpy", sm)
    grid = {"window": np.array([1.0, 2.0, 3.0, 5.0])}
    m = run_analytic(get_design("bow"), prof, sm, grid)
    h = m["rf_cache_hit_rate"]
    # a window of 1 forwards only a register's second slot in one instruction (as the simulator does)
    assert h[0] < 0.05 and np.all(np.diff(h) > 0) and h[-1] <= 1
    assert set(m["events"]) == {"rf_bank", "crossbar", "bow_buffer"}


def test_profile_window_tables_known_answer():
    """The trace of the forwarding known answer above, in the analytic profile's ``bow`` tables: at a window
    of 3, 5 of its 10 operand slots forwarded and 1 result bypassed in 5 instructions; at 1, none."""
    from rfmodel.designs.bow import BOW_WINDOWS, window_tables

    t = window_tables(_known_trace())
    at = {int(w): j for j, w in enumerate(BOW_WINDOWS)}
    fwd, byp = t["bow_forwarded"], t["bow_bypassed"]
    assert fwd[at[3]] == pytest.approx(5 / 5) and byp[at[3]] == pytest.approx(1 / 5)
    assert fwd[at[1]] == 0 and byp[at[1]] == 0
    # a window of 4 reaches R3 and R11 from I4 (3 back): every read but I0's two and I1's R3 forwarded,
    # and R11 bypassed too
    assert fwd[at[4]] == pytest.approx(7 / 5) and byp[at[4]] == pytest.approx(2 / 5)
    assert np.all(np.diff(fwd) >= 0)


@pytest.mark.parametrize("gpu", ["fermi-gtx480", "volta-v100"])
def test_analytic_window_counts_are_the_simulators(gpu):
    """The window's decisions depend on no timing, so the analytic hit rate and bypassed writes, from the
    profile's tables by the simulator's own rule, equal the simulator's on the same warps (measured equal to
    the fourth decimal on saxpy, sgemm_tiled and fft_radix8; the IPC differs)."""
    kw = dict(params={"window": [1, 3, 8], "write_bypass": [1]}, max_warps=8)
    a = rfmodel.evaluate("bow", "fft_radix8", gpu, **kw)
    s = rfmodel.evaluate("bow", "fft_radix8", gpu, method="simulate", **kw)
    np.testing.assert_allclose(a["rf_cache_hit_rate"].values, s["rf_cache_hit_rate"].values, atol=1e-9)
    per = [ds["bow_bypassed_writes"].values / ds["warp_instructions"].values for ds in (a, s)]
    np.testing.assert_allclose(per[0], per[1], atol=1e-9)
    assert float(s["rf_cache_hit_rate"].values.max()) > 0.5


# ------------------------------------------------------------------------------------ slow main RF
def test_slow_banks_known_answer():
    tr = one_bank_pair_at_4x("bow", make_sm(), check_invariants)
    with pytest.raises(Exception, match="main_rf_latency_x"):
        simulate_trace(tr, make_sm(), "bow", {"main_rf_latency_x": 65})
    assert "main_rf_latency_x" in get_design("bow").parameters


@pytest.mark.parametrize("name", ["saxpy", "reduce_sum"])
def test_analytic_flushes_are_the_taken_branches_the_simulator_counts(name):
    """The analytic ``bow_flushes`` come from the profile's taken branches by the simulator's own rule
    (``window_masks``), not from every branch (an upper bound: 0.084 per instruction on reduce_sum and 0.037
    on saxpy, where the simulator counts 0.070 and 0.028); the profile samples the SM's warps, so the two
    agree where the sample's branches are the share's (measured: equal on both)."""
    ana = rfmodel.evaluate("bow", name, "fermi-gtx480")
    sim = rfmodel.evaluate("bow", name, "fermi-gtx480", method="simulate")

    def per_instr(ds):
        return float(ds["bow_flushes"].values.ravel()[0]) / float(ds["warp_instructions"].values.ravel()[0])

    assert per_instr(sim) > 0 and per_instr(ana) == pytest.approx(per_instr(sim), rel=0.02)


def test_profile_bank_loads_known_answer():
    """The loads the window leaves to the banks, in the trace of the forwarding known answer: at a window of
    3 the banks see I0's R1 and R2, I1's R3 and I4's R3 and R11 (I2 and I3 are forwarded whole); at 2
    banks (reg mod 2) the largest load is 1, 1, 0, 0, 2, at 1 bank 2, 1, 0, 0, 2.  At a window of 1 nothing
    is forwarded: the trace's own distinct-source table (1, 2, 2, 1, 2 at 2 banks)."""
    from rfmodel.analytic.profile import bank_load_table
    from rfmodel.designs.bow import BOW_WINDOWS, window_tables

    tr = _known_trace()
    t = window_tables(tr)
    at = {int(w): j for j, w in enumerate(BOW_WINDOWS)}
    w3 = t["bow_bank_loads"][t["bow_bank_load_index"][at[3]]]
    np.testing.assert_allclose(w3[2, :3], [2 / 5, 2 / 5, 1 / 5])
    np.testing.assert_allclose(w3[1, :3], [2 / 5, 1 / 5, 2 / 5])
    w1 = t["bow_bank_loads"][t["bow_bank_load_index"][at[1]]]
    np.testing.assert_allclose(w1[2, :3], [0.0, 2 / 5, 3 / 5])
    np.testing.assert_array_equal(w1, bank_load_table(tr.src))
    # the tables are kept once: from a window of 4 (I4 reaches I1) the five instructions forward no more,
    # so windows 1, 2, 3 and 4-64 hold four tables
    assert len(t["bow_bank_loads"]) == 4
    assert set(t["bow_bank_load_index"][at[4] :].tolist()) == {t["bow_bank_load_index"][at[4]]}


def test_load_cycles_are_the_profiles_serialization():
    """``load_cycles`` of the profile's own table is its ``ser_ports`` and ``ser_excess``; stacked tables
    read by index give each its own."""
    from rfmodel.analytic.profile import load_cycles
    from rfmodel.evaluate import resolve_gpu, workload_profile

    prof = workload_profile("saxpy", resolve_gpu("fermi-gtx480"))
    banks, ports = np.array([1, 2, 4, 16]), np.array([1.0, 2.0, 1.0, 2.0])
    np.testing.assert_array_equal(load_cycles(prof.ser_pmf, banks, ports), prof.ser_ports(banks, ports))
    np.testing.assert_array_equal(
        load_cycles(prof.ser_pmf_slots, banks, ports, beyond_first=True),
        prof.ser_excess(banks, ports, slots=True),
    )
    both = np.stack([prof.ser_pmf, prof.ser_pmf_slots])
    np.testing.assert_array_equal(
        load_cycles(both, banks, ports, index=np.array([1, 0, 1, 0])),
        [
            prof.ser_ports(b, p, slots=s)
            for b, p, s in zip(banks, ports, (True, False, True, False), strict=True)
        ],
    )


def test_analytic_bank_stalls_follow_the_windows_loads_at_one_bank_a_sub_core():
    """On volta-v100 at 4 banks (one a sub-core, two ports) the window forwards whole dependence chains:
    the simulator's bank stalls of BOW are a small share of the baseline's (pb_bicg_1: 0.04 against 0.64
    stall cycles an instruction in the calibration's records), far below the read share the window leaves
    (0.74).  The analytic ratio, from the loads the window leaves (not the read share), follows it."""
    kw = dict(params={"num_banks": [4]}, max_warps=16)
    ratio = {}
    for method in ("analytic", "simulate"):
        runs = {
            d: rfmodel.evaluate(d, "pb_bicg_1", "volta-v100", method=method, **kw)
            for d in ("bow", "baseline")
        }
        st = {d: float(ds["bank_conflict_stall_cycles"].values.ravel()[0]) for d, ds in runs.items()}
        ratio[method] = st["bow"] / st["baseline"]
    assert ratio["simulate"] < 0.25
    assert ratio["analytic"] == pytest.approx(ratio["simulate"], abs=0.05)  # measured 0.066 and 0.062


@pytest.mark.parametrize("bank_cycles", [1.0, 4.0])
def test_bank_loads_of_every_read_are_the_profiles_own(bank_cycles):
    """Loads that keep every read (the profile's own distinct-source table) give the banks' terms of the
    default path exactly: the collection, the excess cycles and the share of instructions that queue."""
    from rfmodel.analytic.throughput import _bank_terms
    from rfmodel.evaluate import resolve_gpu, workload_profile

    prof = workload_profile("fft_radix8", resolve_gpu("fermi-gtx480"))
    Bi, P = np.array([1, 2, 4, 16]), np.array([1.0, 2.0, 1.0, 1.0])
    args = (prof, "interleaved", Bi, P, False, bank_cycles, None, (1.0, 1.0, None))
    own = _bank_terms(*args)
    given = _bank_terms(*args, loads=(prof.ser_pmf[None], np.zeros(4, dtype=np.int64)))
    for a, b in zip(own, given, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)
