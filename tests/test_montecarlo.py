"""Monte-Carlo: sampled prefetch bank loads vs exact enumeration, seeded reproducibility, and
``evaluate(method="montecarlo")``; the register-cache stack distances the RFC model uses."""

from math import comb

import numpy as np
import pytest

import rfmodel
from rfmodel.analytic.banks import distinct_register_max_load
from rfmodel.analytic.montecarlo import prefetch_max_load
from rfmodel.designs.ltrf import IV_BANKS, IV_N, _interval_tables
from rfmodel.designs.regcache import RC_DMAX, _reg_cache_hists
from rfmodel.errors import RfmodelError
from rfmodel.ir import N_OPCLASSES, OpClass
from rfmodel.trace import NONE


@pytest.mark.parametrize(
    ("n", "banks", "registers"),
    # (8, 8, 24): 735,471 subsets, about 6 CPU-s of enumeration; (8, 8, 16) checks the same n and banks
    [(4, 4, 12), (6, 4, 16), (3, 8, 16), (8, 8, 16), pytest.param(8, 8, 24, marks=pytest.mark.slow)],
)
def test_mc_prefetch_max_load_matches_enumeration(n, banks, registers):
    assert comb(registers, n) < 800_000  # the enumeration stays small
    exact = distinct_register_max_load(n, banks, registers)
    s = prefetch_max_load(n, banks, registers, samples=60_000, seed=1)
    se = s.std(ddof=1) / np.sqrt(len(s))
    # 4.5 standard errors: a false alarm once in ~150,000 runs
    assert abs(s.mean() - exact) < 4.5 * se + 1e-12


def test_mc_detects_a_wrong_answer():
    # the with-replacement (multinomial) value differs from the without-replacement one; the same
    # tolerance must reject it
    from rfmodel.analytic.banks import expected_max_load_uniform

    s = prefetch_max_load(8, 8, 24, samples=60_000, seed=1)
    wrong = expected_max_load_uniform(8, np.array([8]))[0]
    se = s.std(ddof=1) / np.sqrt(len(s))
    assert abs(s.mean() - wrong) > 4.5 * se


def test_mc_seeded():
    a = prefetch_max_load(5, 4, 16, samples=1000, seed=7)
    b = prefetch_max_load(5, 4, 16, samples=1000, seed=7)
    c = prefetch_max_load(5, 4, 16, samples=1000, seed=8)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


# ----------------------------------------------------------------------------- evaluate montecarlo
UNC = {"mem_fraction": ("normal", 0.2), "hit_rate": ("uniform", 0.3), "latency_scale": ("lognormal", 0.1)}


def test_evaluate_montecarlo_variables_and_reproducible():
    kw = {"params": {"num_banks": [8, 16]}, "uncertainty": UNC, "samples": 12}
    ana = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", params={"num_banks": [8, 16]})
    a = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method="montecarlo", seed=3, **kw)
    b = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method="montecarlo", seed=3, **kw)
    c = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method="montecarlo", seed=4, **kw)
    for v in ana.data_vars:
        assert v in a and f"{v}_lo" in a and f"{v}_hi" in a
        assert a[v].dims == ana[v].dims
    assert a.attrs["engine"] == "montecarlo" and "calibration" in a.attrs
    for v in a.data_vars:
        np.testing.assert_array_equal(a[v].values, b[v].values)
    assert not np.array_equal(a["ipc"].values, c["ipc"].values)
    assert (a["ipc_lo"] <= a["ipc"]).all() and (a["ipc"] <= a["ipc_hi"]).all()
    assert (a["ipc_hi"] - a["ipc_lo"] > 0).all()


def test_the_interval_level_sets_the_quantiles_it_reports():
    kw = {"params": {"num_banks": [8, 16]}, "uncertainty": UNC, "samples": 40, "seed": 5}
    wide = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method="montecarlo", **kw)
    narrow = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method="montecarlo", level=0.5, **kw)
    # the same draws: the means agree, the 25-75 % interval lies inside the 2.5-97.5 % one
    np.testing.assert_array_equal(wide["ipc"].values, narrow["ipc"].values)
    assert (narrow["ipc_lo"] >= wide["ipc_lo"]).all() and (narrow["ipc_hi"] <= wide["ipc_hi"]).all()
    assert (narrow["ipc_hi"] - narrow["ipc_lo"] < wide["ipc_hi"] - wide["ipc_lo"]).any()
    assert narrow["ipc_lo"].attrs["quantile"] == 0.25 and narrow.attrs["level"] == 0.5
    assert wide["ipc_hi"].attrs["quantile"] == 0.975
    for bad in (0, 1, 1.5, -0.2, float("nan"), "x"):
        with pytest.raises(RfmodelError, match="strictly between 0 and 1"):
            rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method="montecarlo", level=bad, **kw)


def test_monte_carlo_options_with_another_method_are_refused_not_ignored(capsys):
    """``uncertainty``, ``samples`` and ``level`` change only a Monte-Carlo answer: with another method each
    is one error naming it (before, the analytic answer came back as if they were not given); a comparison
    keeps ``level`` for its effects' intervals, and its default draws stay 200."""
    from rfmodel.cli import main

    for method in ("analytic", "simulate"):
        for kw in ({"uncertainty": UNC}, {"samples": 40}, {"level": 0.5}):
            with pytest.raises(RfmodelError, match=f"{next(iter(kw))}: Monte-Carlo options"):
                rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method=method, **kw)
    assert main(["evaluate", "--workload", "saxpy", "--gpu", "fermi-gtx480", "--samples", "40"]) == 2
    assert "samples: Monte-Carlo options" in capsys.readouterr().err
    pair = rfmodel.evaluate(["baseline", "bow"], "saxpy", "fermi-gtx480", level=0.5)
    full = rfmodel.evaluate(["baseline", "bow"], "saxpy", "fermi-gtx480")
    width = {
        k: (d["ipc_effect_hi"] - d["ipc_effect_lo"]).sel(design="bow")
        for k, d in (("50", pair), ("95", full))
    }
    assert (width["50"] < width["95"]).all()  # the reference's own effect is 0 at any level
    with pytest.raises(RfmodelError, match="level"):
        rfmodel.evaluate(["baseline", "bow"], "saxpy", "fermi-gtx480", method="simulate", level=0.5)
    mc = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method="montecarlo", uncertainty=UNC)
    assert mc.attrs["samples"] == 200 and mc.attrs["level"] == 0.95


def test_montecarlo_unknown_parameter_is_one_error():
    from rfmodel.errors import RfmodelError

    with pytest.raises(RfmodelError, match="unknown parameter 'bogus'"):
        rfmodel.evaluate(
            "baseline", "saxpy", method="montecarlo", uncertainty={"bogus": ("normal", 0.1)}, samples=4
        )


# ----------------------------------------------------------------------------- register-cache distances
def _arrays(dsts, srcs, ops=None):
    n = len(dsts)
    dst = np.full((n, 2), NONE, dtype=np.int16)
    src = np.full((n, 3), NONE, dtype=np.int16)
    for i, (d, s) in enumerate(zip(dsts, srcs, strict=True)):
        dst[i, : len(d)] = d
        src[i, : len(s)] = s
    op = np.asarray(ops if ops is not None else [int(OpClass.INT)] * n, dtype=np.int8)
    return np.array([0, n], dtype=np.int64), op, dst, src


def _is_ll():
    v = np.zeros(N_OPCLASSES, dtype=np.bool_)
    v[int(OpClass.LD_GLOBAL)] = True
    return v


def _fifo_hits(dsts, srcs, entries):
    """Direct write-allocate / read-no-allocate FIFO cache of ``entries`` registers."""
    cache, hits = [], 0
    for d, s in zip(dsts, srcs, strict=True):
        for r in s:
            hits += r in cache
        for r in d:
            if r not in cache:
                cache.append(r)
                if len(cache) > entries:
                    cache.pop(0)
    return hits


def test_fifo_stack_distance_known_answer():
    # write r0..r3, then read r0: three other registers written since -> hits from 4 entries on
    wp, op, dst, src = _arrays([[0], [1], [2], [3], []], [[], [], [], [], [0]])
    fifo, lru, _ = _reg_cache_hists(wp, op, dst, src, RC_DMAX, int(OpClass.BARRIER), _is_ll())
    assert fifo[0, 3] == 1 and fifo[0].sum() == 1 and lru[0, 3] == 1


def test_fifo_hit_rate_matches_direct_cache_when_registers_are_written_once():
    rng = np.random.default_rng(5)
    n = 300
    dsts = [[i] for i in range(n)]  # SSA-like: each register written once, then read later
    srcs = [
        [int(x) for x in {int(i - 1 - rng.geometric(0.25)) for _ in range(2)} if x >= 0] for i in range(n)
    ]
    wp, op, dst, src = _arrays([[d % 200 for d in x] for x in dsts][:200], srcs[:200])
    fifo, _, _ = _reg_cache_hists(wp, op, dst, src, RC_DMAX, int(OpClass.BARRIER), _is_ll())
    for e in (1, 2, 4, 8, 16):
        model = fifo[0, :e].sum()
        assert model == _fifo_hits(dsts[:200], srcs[:200], e), e


def test_deactivation_flush_makes_reads_cold():
    # r0 written, a global load to r1, its consumer (a deactivation point), then r0 read
    ops = [int(OpClass.INT), int(OpClass.LD_GLOBAL), int(OpClass.INT), int(OpClass.INT)]
    wp, op, dst, src = _arrays([[0], [1], [2], []], [[], [], [1], [0]], ops)
    fifo, _, points = _reg_cache_hists(wp, op, dst, src, RC_DMAX, int(OpClass.BARRIER), _is_ll())
    assert points == 1
    assert fifo[1, RC_DMAX + 1] == 1 + 1  # r1 (written before the flush... read at the flush) and r0
    assert fifo[0, RC_DMAX + 1] == 0


def test_interval_table_known_answer():
    # 8 instructions each touching two new registers: limit 4 -> intervals of 2 instructions, ws 4
    wp, op, dst, src = _arrays([[2 * i + 1] for i in range(8)], [[2 * i] for i in range(8)])
    sidx = np.arange(8, dtype=np.int64)
    tables = _interval_tables(wp, op, sidx, dst, src, IV_N, IV_BANKS, _is_ll())
    ln, ws, live, mload, even, fetch, live_fetch, wb, nz, live_nz = tables
    i4 = list(IV_N).index(4)
    assert ln[0, i4] == 2 and ws[0, i4] == 4 and live[0, i4] == 2
    # disjoint working sets: each entry fetches all four (two live-in); the two results of each interval
    # leave at the next entry, so 0, 2, 2, 2 write-backs over the four intervals
    assert fetch[0, i4] == 4 and live_fetch[0, i4] == 2 and wb[0, i4] == 1.5
    assert nz[0, i4] == 1 and live_nz[0, i4] == 1  # every prefetch reads registers, live-in ones too
    # at limit 64 one interval holds all 16 registers (8 live-in): one prefetch, reading them all
    i64 = list(IV_N).index(64)
    assert ln[0, i64] == 8 and fetch[0, i64] == 16 and live_fetch[0, i64] == 8 and nz[0, i64] == 1
    b2 = list(IV_BANKS).index(2)
    # working set {4k, 4k+1, 4k+2, 4k+3} over 2 banks: 2 per bank
    assert mload[0, i4, b2] == 2 and even[0, i4, b2] == 2
    assert mload[0, i4, list(IV_BANKS).index(1)] == 4


UNC2 = {"mem_fraction": ("normal", 0.2), "hit_rate": ("uniform", 0.3)}


def test_model_error_uses_the_calibrated_scale_and_widens_the_interval():
    cal = {"designs": {"baseline": {"coefficients": {}, "model_log_ipc_sd": 0.2}}}
    kw = {"method": "montecarlo", "samples": 40, "seed": 1, "calibration": cal}
    narrow = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", uncertainty=UNC2, **kw)
    wide = rfmodel.evaluate(
        "baseline", "saxpy", "fermi-gtx480", uncertainty={**UNC2, "model_error": "calibrated"}, **kw
    )
    explicit = rfmodel.evaluate(
        "baseline", "saxpy", "fermi-gtx480", uncertainty={**UNC2, "model_error": ("lognormal", 0.2)}, **kw
    )
    w = lambda ds: float((ds["ipc_hi"] - ds["ipc_lo"]).values.max())  # noqa: E731
    assert w(wide) > w(narrow)
    np.testing.assert_array_equal(wide["ipc"].values, explicit["ipc"].values)


def test_a_model_error_scale_per_bank_speed_follows_each_points_banks():
    """A scale per speed of the banks: run_analytic raises a unit draw exp(Z) to the scale at the point's
    read cycles (by hand: 0.02 at 1x, 0.1 at 6x, linear in log cycles between, the nearest beyond), and
    ``model_error="calibrated"`` draws it so: at 6x the interval is about five times as wide in log as at
    1x, where the one scale would give both the same."""
    from rfmodel.analytic.calibration import PREFIX, SPEED_SCALE_KEY
    from rfmodel.analytic.engine import run_analytic, workload_profile
    from rfmodel.analytic.montecarlo import BankSpeedScale
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu

    table = {"1": 0.02, "6": 0.1}
    scale = BankSpeedScale.of(table)
    mid = 0.02 + 0.08 * np.log(3) / np.log(6)
    np.testing.assert_allclose(scale.at([0.5, 1, 3, 6, 12, np.nan]), [0.02, 0.02, mid, 0.1, 0.1, 0.02])
    sm = resolve_gpu("volta-v100")
    prof = workload_profile("saxpy", sm, max_warps=8)
    d = get_design("ltrf")
    grid = {"main_rf_latency_x": np.array([1.0, 3.0, 6.0, 8.0])}
    ref = run_analytic(d, prof, sm, grid)
    drawn = run_analytic(d, prof, sm, {**grid, PREFIX + "ipc_factor": np.e, PREFIX + SPEED_SCALE_KEY: scale})
    np.testing.assert_allclose(ref["main_rf_read_cycles"], [1, 3, 6, 8])
    np.testing.assert_allclose(np.log(drawn["ipc"] / ref["ipc"]), [0.02, mid, 0.1, 0.1], rtol=1e-12)
    cal = {"designs": {"ltrf": {"coefficients": {}, "model_log_ipc_sd": 0.05}}}
    kw = {"method": "montecarlo", "samples": 64, "seed": 2, "params": {"main_rf_latency_x": [1, 6]}}
    one = rfmodel.evaluate(
        "ltrf", "saxpy", "volta-v100", uncertainty={"model_error": "calibrated"}, calibration=cal, **kw
    )
    cal["designs"]["ltrf"]["model_log_ipc_sd_by_bank_speed"] = table
    per = rfmodel.evaluate(
        "ltrf", "saxpy", "volta-v100", uncertainty={"model_error": "calibrated"}, calibration=cal, **kw
    )
    width = lambda ds: np.log(ds["ipc_hi"] / ds["ipc_lo"]).values.ravel()  # noqa: E731
    np.testing.assert_allclose(width(one)[0], width(one)[1], rtol=1e-9)
    # (the quantiles interpolate between samples of the IPC, not of its logarithm: 1e-3)
    np.testing.assert_allclose(width(per)[1] / width(per)[0], 5.0, rtol=1e-3)
    assert "{'1': 0.02, '6': 0.1}" in per.attrs["uncertainty"]
    given = rfmodel.evaluate(
        "ltrf",
        "saxpy",
        "volta-v100",
        uncertainty={"model_error": ("lognormal", table)},
        calibration=cal,
        **kw,
    )
    np.testing.assert_array_equal(given["ipc_lo"].values, per["ipc_lo"].values)
    refused = [{"mem_fraction": ("lognormal", table)}, {"ipc_factor": ("normal", table)}]
    refused += [{"ipc_factor": ("lognormal", t)} for t in ({"0.5": 0.1}, {"1": 1.5}, {"1": "0.1"}, {})]
    for bad in refused:
        with pytest.raises(RfmodelError, match="not a distribution of an allowed width"):
            rfmodel.evaluate(
                "ltrf", "saxpy", method="montecarlo", samples=4, calibration=cal, uncertainty=bad
            )


def test_model_error_without_a_scale_is_one_error():
    from rfmodel.errors import RfmodelError

    with pytest.raises(RfmodelError, match="model_error='calibrated' needs a calibration"):
        rfmodel.evaluate(
            "baseline",
            "saxpy",
            method="montecarlo",
            samples=4,
            calibration=False,
            uncertainty={"model_error": "calibrated"},
        )


def test_cli_uncertainty_parsing_and_errors(capsys):
    from rfmodel.cli import _parse_uncertainty, main
    from rfmodel.errors import RfmodelError

    assert _parse_uncertainty("mem_fraction=normal:0.1") == ("mem_fraction", ("normal", 0.1))
    assert _parse_uncertainty("model_error=calibrated") == ("model_error", "calibrated")
    for bad in ("mem_fraction", "mem_fraction=gauss:0.1", "mem_fraction=normal:x", "=normal:0.1"):
        with pytest.raises(RfmodelError):
            _parse_uncertainty(bad)
    # --uncertainty without montecarlo is refused (exit 2, one line)
    assert main(["evaluate", "--workload", "saxpy", "--uncertainty", "mem_fraction=normal:0.1"]) == 2
    assert "montecarlo" in capsys.readouterr().err


@pytest.mark.parametrize("design", ["baseline", "rfc", "ltrf", "malekeh", "cerf"])
def test_vectorized_samples_equal_one_run_per_sample(design):
    """The samples axis gives, sample by sample, what one analytic run with that sample's factors gives."""
    from rfmodel.analytic.engine import run_analytic, workload_profile
    from rfmodel.analytic.montecarlo import draw, perturb_coefficients, perturb_profile
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu

    unc = {
        "mem_fraction": ("normal", 0.2),
        "reads_per_instr": ("uniform", 0.2),
        "instructions": ("normal", 0.1),
        "hit_rate": ("lognormal", 0.3),
        "softmin_q": ("uniform", 0.3),
    }
    n, seed, gpu = 6, 5, "maxwell-ltrf"
    params = {"num_banks": [8, 16]}
    ds = rfmodel.evaluate(
        design,
        "saxpy",
        gpu,
        method="montecarlo",
        samples=n,
        seed=seed,
        uncertainty=unc,
        params=params,
        calibration=False,
    )
    d = get_design(design)
    sm = resolve_gpu(gpu)
    prof0 = workload_profile("saxpy", sm, seed=seed)  # the seed also expands the workload, as in evaluate
    rng = np.random.Generator(np.random.PCG64(seed))
    f = {k: draw(unc[k], n, rng) for k in sorted(unc)}
    defaults = {k: v[0] for k, v in d.calibration_params.items()}
    ipcs = []
    for i in range(n):
        fi = {k: float(v[i]) for k, v in f.items()}
        prof = perturb_profile(prof0, {k: v for k, v in fi.items() if k not in defaults})
        coef = perturb_coefficients(defaults, fi)
        grid = {"num_banks": np.array([8, 16]), **{"calib." + k: v for k, v in coef.items()}}
        ipcs.append(run_analytic(d, prof, sm, grid)["ipc"])
    ipcs = np.array(ipcs)
    assert np.allclose(ds["ipc"].isel(workload=0).values, ipcs.mean(axis=0), rtol=1e-12)
    assert np.allclose(ds["ipc_lo"].isel(workload=0).values, np.quantile(ipcs, 0.025, axis=0), rtol=1e-12)
    assert np.allclose(ds["ipc_hi"].isel(workload=0).values, np.quantile(ipcs, 0.975, axis=0), rtol=1e-12)


def test_hit_rate_factor_reaches_the_shared_arrays_hit_rates():
    """A Monte-Carlo ``hit_rate`` factor scales the miss rate of every L1D hit rate the profile gives,
    the Cache-Emulated RF's set table's too (its LRU-fair array reads them there, not from the L1D's
    tables): factor 0.5 halves its misses, 2 doubles them (clipped at no hit)."""
    from rfmodel.analytic.engine import workload_profile
    from rfmodel.analytic.montecarlo import perturb_profile
    from rfmodel.designs.cerf import shared_set_hits
    from rfmodel.evaluate import resolve_gpu

    prof0 = workload_profile("kmeans_assign", resolve_gpu("fermi-gtx480"))
    every0, loads0 = shared_set_hits(prof0, 4, 1024, 32)
    assert 0.0 < float(loads0) < 1.0
    for factor in (0.5, 2.0):
        every, loads = shared_set_hits(perturb_profile(prof0, {"hit_rate": factor}), 4, 1024, 32)
        assert float(loads) == pytest.approx(max(1.0 - (1.0 - float(loads0)) * factor, 0.0))
        assert float(every) == pytest.approx(max(1.0 - (1.0 - float(every0)) * factor, 0.0))
