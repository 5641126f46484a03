"""Several designs at the same points (``rfmodel.compare``, ``rfmodel evaluate --design A --design B``): each
design's result as evaluate gives it, and its effect against the reference design."""

import warnings

import numpy as np
import pytest

import rfmodel
from rfmodel.cli import main
from rfmodel.errors import RfmodelError

warnings.filterwarnings("ignore", category=UserWarning)


@pytest.mark.parametrize("method", ["analytic", "simulate"])
def test_each_design_is_its_evaluate_and_effects_are_ratios(method):
    kw = dict(method=method, max_warps=8, params={"num_banks": [4, 16]})
    ds = rfmodel.compare(["baseline", "malekeh", "corf"], "saxpy", "fermi-gtx480", **kw)
    assert list(ds["design"].values) == ["baseline", "malekeh", "corf"]
    assert ds.attrs["reference"] == "baseline"
    for d in ("baseline", "malekeh", "corf"):
        one = rfmodel.evaluate(d, "saxpy", "fermi-gtx480", **kw)
        np.testing.assert_array_equal(ds["ipc"].sel(design=d).values, one["ipc"].values)
        np.testing.assert_array_equal(
            ds["energy_pj_total"].sel(design=d).values, one["energy_pj_total"].values
        )
    base = ds.sel(design="baseline")
    np.testing.assert_array_equal(base["ipc_effect"].values, 0.0)
    got = ds["ipc_effect"].sel(design="corf").values
    np.testing.assert_allclose(got, ds["ipc"].sel(design="corf").values / base["ipc"].values - 1, rtol=1e-12)
    # a design's own metric is NaN where the design has none
    assert np.isnan(ds["rf_cache_hit_rate"].sel(design="baseline").values).all()
    assert np.isfinite(ds["rf_cache_hit_rate"].sel(design="malekeh").values).all()


def test_reference_design_and_refusals():
    ds = rfmodel.compare(["baseline", "bow"], "saxpy", "fermi-gtx480", reference="bow", max_warps=8)
    np.testing.assert_array_equal(ds["ipc_effect"].sel(design="bow").values, 0.0)
    for designs, kw, msg in [
        (["baseline"], {}, "two designs or more"),
        ("baseline", {}, "list of design names"),
        (["baseline", "baseline"], {}, "given twice"),
        (["baseline", "bow"], {"reference": "corf"}, "not among the designs"),
        (["baseline", "rfc"], {"params": {"rfc_kb": [8]}}, "not one of baseline's"),
        (["baseline", "nosuch"], {}, "nosuch"),
    ]:
        with pytest.raises(RfmodelError, match=msg):
            rfmodel.compare(designs, "saxpy", "fermi-gtx480", max_warps=8, **kw)


def test_cli_several_designs_print_one_table_with_effects(capsys):
    assert (
        main(
            [
                "evaluate",
                "--design",
                "baseline",
                "--design",
                "malekeh",
                "--design",
                "corf",
                "--workload",
                "saxpy",
                "--method",
                "analytic",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "ipc_effect" in lines[0] and "power_mw_effect" in lines[0] and lines[0].split()[0] == "design"
    rows = [ln.split() for ln in lines[2:5]]
    assert [r[0] for r in rows] == ["baseline", "malekeh", "corf"]
    assert float(rows[0][lines[0].split().index("ipc_effect")]) == 0.0
    assert "design=baseline, malekeh, corf" in out and "of baseline - 1" in out
    # the IPC effect's interval from the calibrated effect error, beside it
    head = lines[0].split()
    at = head.index("ipc_effect")
    assert head[at + 1 : at + 3] == ["ipc_effect_lo", "ipc_effect_hi"]
    assert "interval from the calibration's held-out effect error" in out
    # before, only the last --design was evaluated, with no word
    for argv, msg in [
        (["--design", "baseline", "--design", "malekeh", "--preset", "x"], "--preset"),
        (["--design", "baseline", "--reference", "bow"], "--reference"),
    ]:
        assert main(["evaluate", *argv, "--workload", "saxpy"]) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_evaluate_takes_a_list_of_designs_as_compare_does():
    a = rfmodel.evaluate(["baseline", "bow"], "saxpy", "fermi-gtx480", max_warps=8)
    b = rfmodel.compare(["baseline", "bow"], "saxpy", "fermi-gtx480", max_warps=8)
    assert a.identical(b) and "ipc_effect" in a


def test_the_effects_interval_carries_the_calibrated_effect_error():
    """``ipc_effect_lo``/``_hi``: ``(1 + effect) exp(z sd) - 1`` with the design's calibrated effect error
    (``model_log_effect_sd``), 0 wide for the reference, NaN (and said) for a design the calibration has no
    effect error for; none from the simulator."""
    import copy

    from rfmodel.analytic.calibration import load_calibration

    cal = copy.deepcopy(load_calibration())
    cal["designs"]["bow"]["model_log_effect_sd"] = 0.1
    cal["designs"]["bow"].pop("model_log_effect_sd_by_bank_speed", None)  # (the scale per speed: below)
    cal["designs"]["malekeh"].pop("model_log_effect_sd", None)
    cal["designs"]["malekeh"].pop("model_log_effect_sd_by_bank_speed", None)
    ds = rfmodel.compare(
        ["baseline", "bow", "malekeh"], "saxpy", "fermi-gtx480", max_warps=8, calibration=cal, level=0.9
    )

    def at(name, d):
        return ds[name].sel(design=d).values.ravel()

    e = at("ipc_effect", "bow")
    np.testing.assert_allclose(at("ipc_effect_lo", "bow"), (1 + e) * np.exp(-1.6448536 * 0.1) - 1, rtol=1e-6)
    np.testing.assert_allclose(at("ipc_effect_hi", "bow"), (1 + e) * np.exp(1.6448536 * 0.1) - 1, rtol=1e-6)
    assert (at("ipc_effect_lo", "baseline") == 0.0).all() and (at("ipc_effect_hi", "baseline") == 0.0).all()
    assert np.isnan(at("ipc_effect_lo", "malekeh")).all()
    said = ds.attrs["effect_interval"]
    assert "none for malekeh" in said and "90 % interval" in said
    sim = rfmodel.compare(["baseline", "bow"], "saxpy", "fermi-gtx480", max_warps=8, method="simulate")
    assert "ipc_effect_lo" not in sim and "effect_interval" not in sim.attrs


def test_the_effects_interval_follows_the_banks_speed():
    """Where the calibration measured the effect error per speed of the banks, a point takes the scale at
    its banks' read cycles: the one measured at a measured speed (1x 0.02, 6x 0.1), between two linear in
    the logarithm of the cycles (3x: 0.02 + 0.08 log 3 / log 6), the nearest one's beyond them (8x: 0.1);
    a design without a table keeps its one scale at every point."""
    import copy

    from rfmodel.analytic.calibration import load_calibration

    cal = copy.deepcopy(load_calibration())
    cal["designs"]["bow"]["model_log_effect_sd_by_bank_speed"] = {"1": 0.02, "6": 0.1}
    cal["designs"]["malekeh"]["model_log_effect_sd"] = 0.05
    cal["designs"]["malekeh"].pop("model_log_effect_sd_by_bank_speed", None)
    ds = rfmodel.compare(
        ["baseline", "bow", "malekeh"],
        "saxpy",
        "fermi-gtx480",
        max_warps=8,
        calibration=cal,
        level=0.9,
        params={"main_rf_latency_x": [1, 3, 6, 8]},
    )
    z = 1.6448536

    def at(name, d, x):
        return ds[name].sel(design=d, main_rf_latency_x=x).values.ravel()

    for x, sd in ((1, 0.02), (3, 0.02 + 0.08 * np.log(3) / np.log(6)), (6, 0.1), (8, 0.1)):
        e = at("ipc_effect", "bow", x)
        np.testing.assert_allclose(at("ipc_effect_hi", "bow", x), (1 + e) * np.exp(z * sd) - 1, rtol=1e-6)
        np.testing.assert_allclose(at("ipc_effect_lo", "bow", x), (1 + e) * np.exp(-z * sd) - 1, rtol=1e-6)
        m = at("ipc_effect", "malekeh", x)
        np.testing.assert_allclose(
            at("ipc_effect_hi", "malekeh", x), (1 + m) * np.exp(z * 0.05) - 1, rtol=1e-6
        )
    assert "per speed of the banks for bow" in ds.attrs["effect_interval"]


def test_an_effect_against_another_reference_combines_both_designs_errors():
    import copy

    from rfmodel.analytic.calibration import load_calibration

    cal = copy.deepcopy(load_calibration())
    cal["designs"]["bow"]["model_log_effect_sd"] = 0.1
    cal["designs"]["malekeh"]["model_log_effect_sd"] = 0.2
    for d in ("bow", "malekeh"):  # one scale each (the scale per speed of the banks: above)
        cal["designs"][d].pop("model_log_effect_sd_by_bank_speed", None)
    ds = rfmodel.compare(
        ["bow", "baseline", "malekeh"], "saxpy", "fermi-gtx480", max_warps=8, calibration=cal
    )
    z = 1.959964
    for d, sd in (("bow", 0.0), ("baseline", 0.1), ("malekeh", np.hypot(0.1, 0.2))):
        e = ds["ipc_effect"].sel(design=d).values.ravel()
        hi = ds["ipc_effect_hi"].sel(design=d).values.ravel()
        np.testing.assert_allclose(hi, (1 + e) * np.exp(z * sd) - 1, rtol=1e-6)
    assert "combined with bow's against baseline" in ds.attrs["effect_interval"]
