"""Global sensitivity (SALib) over a design's space: indices that must come out by construction."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.cli import main
from rfmodel.errors import RfmodelError
from rfmodel.optimize.sensitivity import global_sensitivity


def test_sobol_finds_the_one_variable_a_metric_depends_on():
    # capacity is regs_per_sm x 4 B: all of its variance is regs_per_sm's, none the others'
    names = ["num_banks", "regs_per_sm", "collector_units"]
    ds = global_sensitivity(
        "baseline",
        ["saxpy"],
        "fermi-gtx480",
        metric_name="capacity_kb",
        samples=128,
        variables=names,
        cells=("sram-hp",),
    )
    s1, st = ds["S1"].to_series(), ds["ST"].to_series()
    assert s1["regs_per_sm"] == pytest.approx(1.0, abs=0.1)
    assert st["regs_per_sm"] == pytest.approx(1.0, abs=0.1)
    for v in ("num_banks", "collector_units"):
        assert abs(s1[v]) < 1e-9 and abs(st[v]) < 1e-9
    assert ds.attrs["points"] == 128 * (3 + 2) and ds.attrs["method"] == "sobol"


def test_morris_screens_out_an_inert_variable_and_keeps_the_cell():
    # the two-level scheduler's pool size does nothing on Fermi's GTO scheduler; the cell moves the time
    ds = global_sensitivity(
        "baseline",
        ["saxpy"],
        "fermi-gtx480",
        metric="time_ns",
        method="morris",
        samples=12,
        variables=["main_cell", "active_warps", "num_banks"],
    )
    mu = ds["mu_star"].to_series()
    assert mu["active_warps"] == 0.0 and mu["main_cell"] > 0.0
    assert ds.attrs["points"] == 12 * 4
    assert np.all(ds["mu_star_conf"].values >= 0)


def test_bad_requests_are_refused():
    with pytest.raises(RfmodelError, match="power of two"):
        global_sensitivity("baseline", ["saxpy"], samples=100)
    with pytest.raises(RfmodelError, match="not in design"):
        global_sensitivity("baseline", ["saxpy"], variables=["window", "num_banks"])
    with pytest.raises(RfmodelError, match="does not vary"):
        global_sensitivity(
            "baseline",
            ["saxpy"],
            metric_name="capacity_kb",
            samples=8,
            variables=["num_banks", "collector_units"],
            cells=("sram-hp",),
        )


def test_cli_writes_the_indices_and_the_bar_plot(tmp_path, capsys):
    assert (
        main(
            [
                "sensitivity",
                "--workload",
                "saxpy",
                "--method",
                "morris",
                "--samples",
                "8",
                "--variable",
                "num_banks",
                "--variable",
                "main_cell",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "morris indices of time_ns" in out and "mu_star" in out
    for f in ("sensitivity.csv", "sensitivity.nc", "sensitivity.png"):
        assert (tmp_path / f).stat().st_size > 0
