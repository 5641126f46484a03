"""Operand reuse cache driven by SASS .reuse flags: known answers, warp interleaving, flag sources."""

from __future__ import annotations

import numpy as np
import pytest
from test_sim_known import make_sm, workload_trace
from test_slow_bank_collectors import check_invariants as cache_invariants
from test_slow_bank_collectors import one_bank_pair_at_4x

from rfmodel.designs.base import get_design
from rfmodel.sim import simulate_trace, trace_from_warps


def flagged(warps, flags, **kw):
    """A hand-built trace; ``flags[row]`` = bit mask of the sources carrying ``.reuse``."""
    tr = trace_from_warps(warps, **kw)
    tr.reuse[:] = np.asarray(flags, dtype=np.uint16)
    return tr


def check_invariants(r, trace):
    cache_invariants(r, trace, "reuse_cache")


def test_slot_reuse_known_answer():
    # I0 reads R1 in slot A with .reuse: kept.  I1 reads R1 in slot A: hit (no flag: slot emptied).
    # I2 reads R1 in slot A again: miss.  R2/R3 in slot B never carry the flag.
    # 1 hit, 5 misses, 1 fill.
    tr = flagged([[("IADD3", [10], [1, 2]), ("IADD3", [11], [1, 3]), ("IADD3", [12], [1, 3])]], [1, 0, 0])
    r = simulate_trace(tr, make_sm(), "reuse_cache")
    c = r.counts
    assert (c["reuse_hits"], c["reuse_misses"], c["reuse_fills"]) == (1, 5, 1)
    assert r.metrics["reuse_source"] == "sass" and r.metrics["reuse_slot_source"] == "position"
    check_invariants(r, tr)


def test_other_slot_does_not_hit():
    # R1 cached in slot A; the next instruction reads it in slot B: a miss (the cache is per slot)
    tr = flagged([[("IADD3", [10], [1, 2]), ("IADD3", [11], [3, 1])]], [1, 0])
    assert simulate_trace(tr, make_sm(), "reuse_cache").counts["reuse_hits"] == 0


@pytest.mark.parametrize("policy, hits, lost", [("lrr", 0, 2), ("gto", 2, 0)])
def test_warp_interleaving_loses_the_entry(policy, hits, lost):
    # Two warps, each: R10 = R1 (.reuse) ; R11 = R1.  Round-robin issue interleaves the warps, so
    # the other warp's read of slot A replaces the entry before the reuse (0 hits, 2 lost);
    # greedy-then-oldest keeps each warp's pair together (2 hits).
    w0 = [("IADD3", [10], [1]), ("IADD3", [11], [1])]
    w1 = [("IADD3", [10], [5]), ("IADD3", [11], [5])]
    tr = flagged([w0, w1], [1, 0, 1, 0], warps_per_cta=2)
    r = simulate_trace(tr, make_sm(scheduler=policy), "reuse_cache")
    assert (r.counts["reuse_hits"], r.counts["reuse_lost"]) == (hits, lost)
    check_invariants(r, tr)


def test_write_invalidates():
    # R1 flagged, then overwritten by the same warp before its next read: no stale hit
    tr = flagged([[("IADD3", [10], [1]), ("IADD3", [1], []), ("IADD3", [11], [1])]], [1, 0, 0])
    r = simulate_trace(tr, make_sm(), "reuse_cache")
    assert r.counts["reuse_hits"] == 0 and r.counts["reuse_write_invalidations"] == 1


@pytest.mark.parametrize(
    "rank, schedulers, share", [([0, 2, 1, 3], 1, 0.0), ([0, 1, 2, 3], 1, 0.5), ([0, 2, 1, 3], 2, 0.5)]
)
def test_the_profiles_reuse_table_follows_the_schedule(rank, schedulers, share):
    # the interleaving test's trace (4 reads, each warp's second read of R1 / R5 a reuse): in the round-robin
    # order on one scheduler the other warp's read of slot A takes the entry first (the simulator's 0 hits),
    # in the greedy order each warp keeps it (2 hits), and on two schedulers each warp has its own slots
    from rfmodel.designs.reuse_cache import reuse_tables

    w0 = [("IADD3", [10], [1]), ("IADD3", [11], [1])]
    w1 = [("IADD3", [10], [5]), ("IADD3", [11], [5])]
    tr = flagged([w0, w1], [1, 0, 1, 0], warps_per_cta=2)
    t = reuse_tables(tr, np.array(rank), {"schedulers": schedulers})
    assert t["reuse_sched"] == share and t["reuse_alone"] == 0.5 and t["reuse_flagged"] == 0.5
    assert reuse_tables(tr)["reuse_sched"] == 0.5  # without a schedule: each warp alone
    # the known answers above: one hit in six reads; a write of the register first leaves none
    one = flagged([[("IADD3", [10], [1, 2]), ("IADD3", [11], [1, 3]), ("IADD3", [12], [1, 3])]], [1, 0, 0])
    assert reuse_tables(one)["reuse_alone"] == 1 / 6
    gone = flagged([[("IADD3", [10], [1]), ("IADD3", [1], []), ("IADD3", [11], [1])]], [1, 0, 0])
    assert reuse_tables(gone)["reuse_alone"] == 0.0
    assert reuse_tables(trace_from_warps([w0, w1], warps_per_cta=2))["reuse_flagged"] == 0.0


def test_no_flags_no_hits_and_said_so():
    tr = trace_from_warps([[("IADD3", [10], [1]), ("IADD3", [11], [1])]])
    r = simulate_trace(tr, make_sm(), "reuse_cache")
    assert r.counts["reuse_hits"] == 0
    assert r.metrics["reuse_source"].startswith("none")


def test_builtin_sass_flags_drive_it():
    sm, tr = workload_trace("volta-v100", "crc32_murmur3", max_warps=16)
    assert tr.reuse.any()  # the shipped SASS carries .reuse flags and the trace keeps them
    r = simulate_trace(tr, sm, "reuse_cache")
    check_invariants(r, tr)
    assert r.metrics["reuse_source"] == "sass"
    assert r.metrics["reuse_slot_source"] == "static kernel (src_slots)"
    assert 0 < r.metrics["rf_cache_hit_rate"] <= r.metrics["reuse_flag_fraction"]
    from rfmodel.designs.reuse_cache import reuse_tables

    # the analytic profile's flagged share is the simulator's, counted on the same trace
    assert reuse_tables(tr)["reuse_flagged"] == pytest.approx(r.metrics["reuse_flag_fraction"], rel=1e-12)
    _, syn = workload_trace("volta-v100", "synthetic:fp-heavy", max_warps=8)
    r = simulate_trace(syn, sm, "reuse_cache")
    assert r.counts["reuse_hits"] == 0 and r.metrics["reuse_source"].startswith("none")


# ------------------------------------------------------------------------------------ slow main RF
def test_slow_banks_known_answer():
    # no flags: both sources miss
    tr = one_bank_pair_at_4x("reuse_cache", make_sm(), check_invariants)
    # a hit still needs no bank: only the miss pays the slow access
    tr2 = flagged([[("IADD3", [3], [1]), ("IADD3", [4], [1])]], [1, 0])
    r = simulate_trace(tr2, make_sm(), "reuse_cache", {"main_rf_latency_x": 4})
    assert r.counts["reuse_hits"] == 1 and r.counts["bank_read_acc"] == 1
    with pytest.raises(Exception, match="main_rf_latency_x"):
        simulate_trace(tr, make_sm(), "reuse_cache", {"main_rf_latency_x": 0})
    assert get_design("reuse_cache").parameters == ("main_rf_latency_x", "main_cell")
