"""The collectors' occupancy in both engines: the analytic estimate by Little's law (the instructions
collecting at once over the units, docs/models.md) and its agreement with the simulator where collection is
all that holds a collector."""

from __future__ import annotations

import numpy as np
import pytest

import rfmodel
from rfmodel.analytic.calibration import PREFIX
from rfmodel.analytic.engine import run_analytic, workload_profile
from rfmodel.analytic.model import sm_interval
from rfmodel.analytic.throughput import dispatch_queue, dispatch_rows, md1_queue
from rfmodel.designs.base import get_design
from rfmodel.evaluate import resolve_gpu
from rfmodel.ir import N_OPCLASSES, OpClass
from rfmodel.spec.occupancy import COLLECTOR_SETS, CS_MEM, CS_SP, U_MEM, UNIT_OF_CLASS

UNITS = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])


@pytest.fixture(scope="module")
def volta():
    sm = resolve_gpu("volta-v100")
    return sm, workload_profile("sgemm_tiled", sm)


def test_occupancy_is_littles_law_over_the_units(volta):
    """The instructions collecting (IPC x collection time) and those waiting in their collectors for their
    unit (:func:`dispatch_queue` at the model's pace, within the units no collecting instruction holds)."""
    sm, prof = volta
    grid = {"collector_units": UNITS}
    m = run_analytic(get_design("baseline"), prof, sm, grid)
    ipc, hold = np.asarray(m["ipc"]), np.asarray(m["collector_cycles"])
    occ = np.asarray(m["collector_occupancy"])
    assert occ.shape == UNITS.shape
    shared = sm_interval(prof, sm, grid, {})
    waiting = np.asarray(shared["dispatch_queue"])
    assert np.all(waiting >= 0) and np.all(waiting <= np.maximum(UNITS - ipc * hold, 0) + 1e-12)
    np.testing.assert_allclose(occ, np.minimum((ipc * hold + waiting) / UNITS, 1.0), rtol=1e-12)
    assert np.all((occ > 0) & (occ <= 1))
    # fewer units run fuller (up to all busy): the one-unit SM's collector busy nearly every cycle, 32 units
    # mostly idle
    assert np.all(np.diff(occ) <= 0) and occ[0] > 0.9 and occ[-1] < 0.2


def test_occupancy_follows_the_monte_carlo_ipc_factor(volta):
    sm, prof = volta
    d = get_design("baseline")
    ref = run_analytic(d, prof, sm, {})
    half = run_analytic(d, prof, sm, {PREFIX + "ipc_factor": np.array(0.5)})
    np.testing.assert_allclose(half["ipc"], 0.5 * np.asarray(ref["ipc"]), rtol=1e-12)
    np.testing.assert_allclose(half["collector_occupancy"], 0.5 * np.asarray(ref["collector_occupancy"]))


@pytest.mark.parametrize("design", ["malekeh", "bow"])
def test_a_designs_residual_ipc_factor_scales_the_occupancy_with_the_ipc(volta, design):
    """Designs whose terms multiply the shared model's IPC (``AnalyticContext.scaled``) scale the occupancy
    with it: at least the scaled IPC times the collection time, and half of it at half the IPC."""
    sm, prof = volta
    d = get_design(design)
    m = run_analytic(d, prof, sm, {})
    units = sm.collectors.total
    collecting = np.minimum(np.asarray(m["ipc"]) * np.asarray(m["collector_cycles"]) / units, 1.0)
    assert np.all(np.asarray(m["collector_occupancy"]) >= collecting - 1e-12)
    half = run_analytic(d, prof, sm, {PREFIX + "ipc_factor": np.array(0.5)})
    np.testing.assert_allclose(half["collector_occupancy"], 0.5 * np.asarray(m["collector_occupancy"]))


def test_md1_queue_known_answers():
    """M/D/1 by hand: Lq = rho^2 / (2 (1 - rho)): 0.25 at rho = 0.5, 0.0625 / 1.5 at 0.25, 0.81 / 0.2 at 0.9;
    an empty queue at rho = 0; more load, more waiting."""
    assert md1_queue(0.5) == pytest.approx(0.25, rel=1e-12)
    assert md1_queue(0.25) == pytest.approx(0.0625 / 1.5, rel=1e-12)
    assert md1_queue(0.9) == pytest.approx(4.05, rel=1e-12)
    assert md1_queue(0.0) == 0.0
    rho = np.linspace(0.0, 0.99, 50)
    assert np.all(np.diff([md1_queue(r) for r in rho]) > 0)


def _one_class_mix(k: int = 0):
    mix = np.zeros(N_OPCLASSES)
    mix[k] = 1.0
    return mix


def test_dispatch_queue_known_answers():
    """A unit type of one slot whose class is every instruction, at half its pace: the M/D/1 queue's
    waiting, 0.25; a unit at twice the initiation interval is as busy at
    half the pace; two slots share the arrivals (each as busy, twice the waiting); no room in the
    collectors holds none, and at saturation the waiting fill what room there is (the units less the
    collecting instructions)."""
    mix = _one_class_mix()  # op class 0, integer
    ii = np.ones(N_OPCLASSES)
    one, two = np.ones(len(UNIT_OF_CLASS)), np.full(len(UNIT_OF_CLASS), 2.0)
    expect = 0.25

    def waiting(ipc, ii, slots, units, collecting=0.0):
        rows = dispatch_rows(mix, ii, None, slots)
        return float(dispatch_queue(rows, np.array(ipc), np.inf, collecting, units))

    assert waiting(0.5, ii, one, 8.0) == pytest.approx(expect)
    assert waiting(0.25, 2 * ii, one, 8.0) == pytest.approx(expect)
    assert waiting(1.0, ii, two, 8.0) == pytest.approx(2 * expect)
    assert waiting(0.99, ii, one, 0.0) == 0.0
    assert waiting(5.0, ii, one, 3.0) == 3.0
    assert waiting(5.0, ii, one, 3.0, collecting=2.5) == 0.5


def test_a_memory_instruction_waits_for_the_load_store_pipeline():
    """The memory classes share one load/store pipeline, bounded also by ``mem_rate`` (the lines a cycle and
    the MSHRs), whatever its slots: at a quarter of the pace against a memory pace of half, the M/D/1 queue
    at rho = 0.5 (0.25 waiting, four slots or one); the same pace without that bound is a quarter as busy
    (0.0625 / 1.5)."""
    mem = next(k for k in range(N_OPCLASSES) if UNIT_OF_CLASS[k] == U_MEM)
    rows = dispatch_rows(_one_class_mix(mem), np.ones(N_OPCLASSES), None, np.full(len(UNIT_OF_CLASS), 4.0))
    got = dispatch_queue(rows, np.array(0.25), 0.5, 0.0, 8.0)
    assert float(got) == pytest.approx(0.25, rel=1e-12)
    one = dispatch_rows(_one_class_mix(mem), np.ones(N_OPCLASSES), None, np.ones(len(UNIT_OF_CLASS)))
    assert float(dispatch_queue(one, np.array(0.25), 0.5, 0.0, 8.0)) == pytest.approx(0.25, rel=1e-12)
    got = dispatch_queue(rows, np.array(0.25), np.inf, 0.0, 8.0)
    assert float(got) == pytest.approx(0.0625 / 1.5, rel=1e-12)


def test_a_slot_of_one_scheduler_queues_in_discrete_time():
    """A dispatch slot that takes the instructions of one scheduler (one slot a scheduler) sees at most one
    arrival a cycle: its queue is the Geo/G/1 queue's, E[S(S-1)] / E[S]^2 of the M/D/1 queue at the same
    utilization: none with an initiation interval of one cycle, half with two, and with half its
    instructions at one cycle and half at three (E[S] = 2, E[S^2] = 5) three quarters; a slot shared by two
    schedulers keeps the M/D/1 queue."""
    mix = _one_class_mix(0)
    slots = np.full(len(UNIT_OF_CLASS), 2.0)
    for ii0, factor in ((1.0, 0.0), (2.0, 0.5)):
        ii = np.full(N_OPCLASSES, ii0)
        rows = dispatch_rows(mix, ii, None, slots, None, 2)
        assert rows[5][0] == pytest.approx(factor, abs=1e-15)
        got = float(dispatch_queue(rows, np.array(0.5), np.inf, 0.0, 8.0))
        assert got == pytest.approx(2 * factor * md1_queue(0.5 * ii0 / 2), rel=1e-12)
    misc = int(OpClass.MISC)  # a second class on the integer unit
    assert UNIT_OF_CLASS[misc] == UNIT_OF_CLASS[0]
    two = np.zeros(N_OPCLASSES)
    two[0], two[misc] = 0.5, 0.5
    ii = np.ones(N_OPCLASSES)
    ii[misc] = 3.0
    assert dispatch_rows(two, ii, None, slots, None, 2)[5][0] == pytest.approx(0.75, rel=1e-12)
    assert dispatch_rows(two, ii, None, slots, None, 4)[5][0] == 1.0


def test_the_load_store_queue_follows_the_issue_schedules_at_the_models_pace():
    """With the schedule's load/store queue (1.5 instructions in collectors, the unit 60 % busy at the
    schedule's pace of 2 instructions a cycle): at that pace the waiting is the schedule's 1.5; at half the
    pace it is scaled as an M/D/1 queue's, 1.5 x md1(0.3) / md1(0.6) = 1.5 x (0.09 / 1.4) / (0.36 / 0.8);
    bounded by the free collectors (2 less 1 collecting) at three times it; none where the schedule's
    unit was never busy; the pipeline's own rate (here a line a cycle and no MSHR bound) no longer counts."""
    mem = next(k for k in range(N_OPCLASSES) if UNIT_OF_CLASS[k] == U_MEM)
    rows = dispatch_rows(_one_class_mix(mem), np.ones(N_OPCLASSES), None, np.ones(len(UNIT_OF_CLASS)))
    lsu = (1.5, 0.6, 2.0)
    got = dispatch_queue(rows, np.array([2.0, 1.0, 6.0]), np.inf, 0.0, 8.0, None, lsu)
    assert got[0] == pytest.approx(1.5, rel=1e-12)
    assert got[1] == pytest.approx(1.5 * (0.09 / 1.4) / (0.36 / 0.8), rel=1e-12)
    assert float(dispatch_queue(rows, np.array(6.0), np.inf, 1.0, 2.0, None, lsu)) == pytest.approx(1.0)
    assert float(dispatch_queue(rows, np.array(1.0), np.inf, 0.0, 8.0, None, (0.0, 0.0, 2.0))) == 0.0


@pytest.mark.parametrize(
    ("workload", "sim", "before"), [("fft_radix8", 0.279, 0.198), ("dnn_lstm_step", 0.081, 0.184)]
)
def test_engines_agree_where_the_loads_queue_in_bursts_or_the_mshr_bound_is_loose(workload, sim, before):
    """`fermi-gtx480`'s two load/store collectors: `fft_radix8`'s loads come in bursts that an M/D/1 queue at
    the pipeline's rate kept short (the simulator's collectors 0.279 busy, the model's 0.198 before the
    queue came from the issue schedule), `dnn_lstm_step`'s MSHR bound by Little's law lies below its IPC,
    which filled both collectors (0.081 against 0.184); with the schedule's queue both within 0.02."""
    s = rfmodel.evaluate("baseline", workload, "fermi-gtx480", method="simulate")
    a = rfmodel.evaluate("baseline", workload, "fermi-gtx480")
    so = float(s["collector_occupancy"].values.ravel()[0])
    ao = float(a["collector_occupancy"].values.ravel()[0])
    assert so == pytest.approx(sim, abs=1e-3)
    assert abs(ao - so) <= 0.02 < abs(before - so)


def test_typed_sets_bound_their_own_units_waiting():
    """With typed collector sets each unit's waiting fill only its own set's free units: a kernel half
    integer (two cycles a unit), half memory, at one instruction a cycle: the integer unit saturated fills
    the SP set's six units less its half of the one collecting instruction; the load/store pipeline, half
    busy, holds its M/D/1 queue (0.25) in the MEM set."""
    mix = np.zeros(N_OPCLASSES)
    mem = next(k for k in range(N_OPCLASSES) if UNIT_OF_CLASS[k] == U_MEM)
    mix[0], mix[mem] = 0.5, 0.5
    ii = np.ones(N_OPCLASSES)
    ii[0] = 2.0
    set_of_unit = np.full(len(UNIT_OF_CLASS), CS_SP)
    set_of_unit[U_MEM] = CS_MEM
    units = np.zeros(len(COLLECTOR_SETS))
    units[CS_SP], units[CS_MEM] = 6.0, 2.0
    rows = dispatch_rows(mix, ii, None, np.ones(len(UNIT_OF_CLASS)), set_of_unit)
    got = float(dispatch_queue(rows, np.array(1.0), np.inf, 1.0, 16.0, units))
    assert got == pytest.approx((6.0 - 0.5) + 0.25, rel=1e-9)


@pytest.mark.parametrize(
    ("workload", "gpu"),
    [("crc32_murmur3", "volta-v100"), ("saxpy", "fermi-gtx480"), ("reduce_sum", "fermi-gtx480")],
)
def test_engines_agree_where_instructions_wait_for_their_unit(workload, gpu):
    """Where collectors hold instructions that wait for a busy unit, the model counts them as the simulator
    does, to the metrics goal of 5 points: `crc32_murmur3` on `volta-v100` (its integer units saturated:
    the simulator's collectors 98.4 % busy, collection alone 47.5 % in the model before it counted the
    waits, 100 % after) and `fermi-gtx480`'s two load/store collectors behind its load/store pipeline
    (`saxpy` 0.130 against 0.064 before, 0.166 after; `reduce_sum` 0.191 against 0.106, 0.214)."""
    s = rfmodel.evaluate("baseline", workload, gpu, method="simulate")
    a = rfmodel.evaluate("baseline", workload, gpu)
    so = float(s["collector_occupancy"].values.ravel()[0])
    ao = float(a["collector_occupancy"].values.ravel()[0])
    assert abs(ao - so) <= 0.05


def test_engines_agree_where_collection_is_all_a_collector_holds():
    """A memory-bound kernel whose collectors never wait for an execution unit: the simulator's occupancy
    (busy collector-cycles over collector-cycles) and the model's agree to a point (0.1292 against 0.1291
    when written)."""
    kw = dict(params={"num_banks": [16]})
    s = rfmodel.evaluate("baseline", "synthetic:fp-heavy", "volta-v100", method="simulate", **kw)
    a = rfmodel.evaluate("baseline", "synthetic:fp-heavy", "volta-v100", **kw)
    so = float(s["collector_occupancy"].values.ravel()[0])
    ao = float(a["collector_occupancy"].values.ravel()[0])
    assert 0.05 < so < 0.5
    assert abs(ao - so) < 0.01


def test_a_design_that_bounds_the_ipc_further_counts_the_waits_at_its_own_pace():
    """LTRFconf's prefetches hold its warps (its IPC below the shared model's): the instructions waiting
    for their unit are counted at the design's pace, not the shared model's, where they would fill every
    free collector (`rk4_duffing_dp` on `volta-v100` at 3x main-RF banks, 8 registers an interval: the
    simulator's collectors 22.7 % busy, the model's 87.7 % at the shared model's pace; at the design's
    23.6 % with each unit's dispatch register taken out of its queue, 35.3 % with the whole queue counted,
    which over-counts this kernel's double-precision chains, whose dependences space their arrivals)."""
    kw = dict(params={"regs_per_interval": [8], "main_rf_latency_x": [3]}, max_warps=64)
    s = rfmodel.evaluate("ltrfconf", "rk4_duffing_dp", "volta-v100", method="simulate", **kw)
    a = rfmodel.evaluate("ltrfconf", "rk4_duffing_dp", "volta-v100", **kw)
    so = float(s["collector_occupancy"].values.ravel()[0])
    ao = float(a["collector_occupancy"].values.ravel()[0])
    assert ao < 0.5  # at the shared model's pace: 0.877
    assert abs(ao - so) <= 0.15


def test_near_consumer_share_known_answer():
    """The share of source reads whose producer is one of the warp's two previous instructions, from the
    log2 histogram of dependence distances (bin k: distances 2^k .. 2^(k+1) - 1, the last bin: no producer):
    all of bin 0 (distance 1) and half of bin 1 (distances 2 and 3): (4 + 6 / 2) / 20."""
    from types import SimpleNamespace

    from rfmodel.analytic.reuse import NEAR_DISTANCE, near_consumer_share

    assert NEAR_DISTANCE == 2
    hist = np.array([4, 6, 5, 0, 5], dtype=np.int64)
    assert near_consumer_share(SimpleNamespace(dep_dist_hist=hist)) == pytest.approx(7.0 / 20.0)
    assert near_consumer_share(SimpleNamespace(dep_dist_hist=np.zeros(5, np.int64))) == 0.0
    assert near_consumer_share(SimpleNamespace()) == 0.0


def test_slow_banks_hold_the_near_consumers_collectors_behind_their_producers_writes(volta):
    """At slow banks a near consumer's read waits in its collector while its producer's write holds the
    bank: the occupancy counts half of that hold, ``write_wait = COLLECTOR_WRITE_WAIT x near x reads x (x -
    1)`` per instruction, on top of the collection; at the SM's own banks (x = 1) there is none.  The IPC
    does not move with it (the latency bound carries the hold as the dependences' ``write_hold``)."""
    from rfmodel.analytic.model import collector_hold
    from rfmodel.analytic.reuse import near_consumer_share
    from rfmodel.analytic.throughput import COLLECTOR_WRITE_WAIT

    sm, prof = volta
    x = np.array([1.0, 3.0, 6.0])
    shared = sm_interval(prof, sm, {"main_rf_latency_x": x}, {}, bank_cycles=x)
    expect = COLLECTOR_WRITE_WAIT * near_consumer_share(prof) * prof.reads_per_instr * (x - 1.0)
    assert near_consumer_share(prof) > 0.05
    np.testing.assert_allclose(shared["write_wait"], expect, rtol=1e-12)
    np.testing.assert_allclose(collector_hold(shared), np.asarray(shared["t_collect"]) + expect, rtol=1e-12)
    m = run_analytic(get_design("baseline"), prof, sm, {"main_rf_latency_x": x})
    units = sm.collectors.total
    ipc = np.asarray(m["ipc"])
    waiting = sm_interval(prof, sm, {"main_rf_latency_x": x}, {}, bank_cycles=x)["dispatch_queue"]
    assert np.asarray(m["collector_occupancy"])[0] == pytest.approx(
        min((ipc[0] * np.asarray(m["collector_cycles"])[0] + waiting[0]) / units, 1.0), rel=1e-12
    )
    assert np.all(
        np.asarray(m["collector_occupancy"])[1:] > np.asarray(m["collector_cycles"])[1:] * ipc[1:] / units
    )


def test_a_pools_one_bank_holds_its_collectors_as_a_closed_network():
    """Four banks over volta-v100's four sub-cores leave a pool of two collectors one bank: Schweitzer's
    mean-value analysis of that closed network puts ``Q = U / (1 - U (n - 1) / n)`` instructions at the bank,
    by hand 0.97 / (1 - 0.485) = 1.8835 at a utilization of 0.97, 0.9417 of the pool's two collectors; nothing
    where a pool has more banks than one or the SM one pool of every bank (fermi-gtx480)."""
    from rfmodel.analytic.model import one_bank_pool_occupancy

    volta, fermi = resolve_gpu("volta-v100"), resolve_gpu("fermi-gtx480")
    grid = {"num_banks": np.array([4, 8, 4])}
    ipc = np.array([0.97, 0.97, 0.5])
    got = one_bank_pool_occupancy(volta, grid, ipc, {"rate_bank": 1.0}, 8.0)
    np.testing.assert_allclose(got, [0.97 / (1 - 0.97 / 2) / 2, 0.0, 0.5 / (1 - 0.25) / 2], rtol=1e-12)
    assert np.all(one_bank_pool_occupancy(fermi, grid, ipc, {"rate_bank": 1.0}, 16.0) == 0.0)
    # in the engine: STT-RAM's slow writes keep a sub-core's one bank nearly always busy, and its collectors
    # are held at least as the network says, beyond what the closed bound on the collection time allows
    sm = volta
    prof = workload_profile("fft_radix8", sm)
    g = {"num_banks": np.array([4])}
    d = get_design("stt")
    m = run_analytic(d, prof, sm, g)
    occ = float(np.asarray(m["collector_occupancy"]).ravel()[0])
    assert 0.7 < occ <= 1.0
