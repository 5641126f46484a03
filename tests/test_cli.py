"""The command line: outputs, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import rfmodel
from rfmodel.cli import main


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "rfmodel.cli", *args], capture_output=True, text=True, timeout=600
    )


def test_python_dash_m_rfmodel_is_the_command():
    """``python -m rfmodel`` runs the same command as the ``rfmodel`` script: its version, and a bad command's
    one-line error with status 2."""
    import rfmodel

    ok = subprocess.run(
        [sys.executable, "-m", "rfmodel", "--version"], capture_output=True, text=True, timeout=120
    )
    assert ok.returncode == 0 and rfmodel.__version__ in ok.stdout, ok.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "rfmodel", "no-such-command"], capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 2 and bad.stderr.startswith("rfmodel: error: ") and bad.stderr.count("\n") == 1


def test_help_lists_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for cmd in ("optimize", "evaluate", "workload", "spec"):
        assert cmd in out


@pytest.mark.parametrize(
    "search",
    [
        # the default suite: one small generation in this process
        pytest.param(["--pop", "4", "--generations", "1", "--workers", "1"], id="serial"),
        # a longer search on every core (worker processes): about 16 CPU-s
        pytest.param(["--pop", "12", "--generations", "3"], marks=pytest.mark.slow, id="every-core"),
    ],
)
def test_optimize_writes_pareto_files(tmp_path, capsys, search):
    rc = main(["optimize", "--quiet", "--workload", "saxpy", *search, "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "Pareto set" in out and "hypervolume" in out
    for f in ("pareto.csv", "pareto.nc", "pareto.png", "pareto_parallel.png", "hypervolume.png"):
        assert (tmp_path / f).stat().st_size > 0
    header = (tmp_path / "pareto.csv").read_text().splitlines()[0]
    cols = header.split(",")
    assert cols[:2] == ["point", "design"] and cols[-4:] == ["capacity_kb", "area_mm2", "power_mw", "time_ns"]
    assert {"num_banks", "regs_per_sm", "collector_units", "main_cell"} <= set(cols)
    import pandas as pd
    import xarray as xr

    ds = xr.load_dataset(tmp_path / "pareto.nc")
    assert "hypervolume" in ds.attrs and ds.sizes["point"] >= 1
    assert ds["time_ns"].attrs["units"] == "ns" and ds["power_mw"].attrs["units"] == "mW"
    # a row's point is the NetCDF's point of the same values (the two files list them in other orders)
    for _, row in pd.read_csv(tmp_path / "pareto.csv").iterrows():
        p = ds.isel(point=int(row["point"]))
        assert str(p["design"].values) == row["design"] and float(p["time_ns"]) == row["time_ns"]
    assert not list(tmp_path.glob(".*tmp"))  # nothing half-written left behind


def test_evaluate_json_and_netcdf(tmp_path, capsys):
    out = tmp_path / "r.nc"
    rc = main(["evaluate", "--workload", "saxpy", "--param", "num_banks=8,16", "--json", "--out", str(out)])
    assert rc == 0
    obj = json.loads(capsys.readouterr().out)
    assert len(obj["rows"]) == 2 and obj["attrs"]["engine"] == "analytic"
    assert out.stat().st_size > 0


def test_evaluate_takes_the_apis_mode_max_warps_compat_and_on_no_fit(capsys):
    """``rfmodel evaluate`` offers ``rfmodel.evaluate``'s ``mode``, ``max_warps``, ``sim_options`` (as
    ``--compat``) and ``on_no_fit`` under the same names, with the same answers; a value that would not act
    is refused as the API refuses it (exit 2, one line)."""
    import numpy as np

    import rfmodel

    args = ["evaluate", "--workload", "saxpy", "--gpu", "fermi-gtx480", "--json"]
    grid = ["--param", "num_banks=8,16", "--param", "collector_units=4,8"]
    assert main([*args, *grid, "--mode", "points", "--max-warps", "8"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    ds = rfmodel.evaluate(
        "baseline",
        "saxpy",
        "fermi-gtx480",
        params={"num_banks": [8, 16], "collector_units": [4, 8]},
        mode="points",
        max_warps=8,
    )
    assert len(rows) == 2  # points: the i-th values together, not their 4 combinations
    assert np.allclose([r["ipc"] for r in rows], ds["ipc"].values.ravel(), rtol=1e-12)
    grid_api = {"num_banks": [8, 16], "collector_units": [4, 8]}
    auto = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", params=grid_api, mode="points")["ipc"]
    assert not np.allclose(auto.values.ravel(), ds["ipc"].values.ravel(), rtol=1e-12, atol=0)  # 8 warps act
    assert main([*args, "--method", "simulate", "--compat", "gpgpusim", "--max-warps", "8"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["attrs"]["calibration"] == "reference cycle simulator (compat=gpgpusim)"
    # a point where not one CTA fits (saxpy's 256 threads, 128 at most): an error, or 0 warps if asked
    small = ["--param", "max_threads_per_cta=128"]
    assert main([*args, *small]) == 2
    assert "max_threads_per_cta" in capsys.readouterr().err
    assert main([*args, *small, "--max-warps", "auto", "--on-no-fit", "nan"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["warps"] == 0
    assert main([*args, "--compat", "gpgpusim"]) == 2  # the analytic engine has no pipeline choice
    assert "simulate" in capsys.readouterr().err
    assert main([*args, "--max-warps", "0"]) == 2
    assert "'auto' or an integer" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["evaluate", "simulate"])
def test_a_result_file_of_another_ending_is_refused_before_anything_runs(command, tmp_path, capsys):
    """``--out`` writes NetCDF or CSV by the file's ending: ``r.txt`` is one error (exit 2) naming the
    endings, nothing is written and nothing runs (no table printed); ``R.CSV`` is CSV."""
    out = tmp_path / "r.txt"
    assert main([command, "--workload", "saxpy", "--out", str(out)]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and ".nc (NetCDF), .csv (CSV)" in cap.err and cap.err.count("\n") == 1
    assert not out.exists()
    # a result file where none can be written is refused before the run as well (no table printed)
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert main([command, "--workload", "saxpy", "--out", str(blocked / "r.nc")]) == 2
    cap = capsys.readouterr()
    assert "engine=" not in cap.out and "r.nc" in cap.err
    upper = tmp_path / "R.CSV"
    assert main(["evaluate", "--workload", "saxpy", "--out", str(upper)]) == 0
    assert "ipc" in upper.read_text().splitlines()[0].split(",")  # a CSV header, not NetCDF's bytes


def test_evaluate_config_file(tmp_path, capsys):
    cfg = tmp_path / "e.toml"
    cfg.write_text(
        'design = "baseline"\nworkloads = ["saxpy"]\ngpu = "volta-v100"\n[params]\nnum_banks = [8, 16]\n'
    )
    assert main(["evaluate", "--config", str(cfg)]) == 0
    assert "volta-v100" in capsys.readouterr().out


def test_a_refused_optimize_run_draws_no_progress_bar(tmp_path, capsys):
    """The bar was drawn before optimize checked its arguments: a refused run printed an empty "NSGA3: 0it"
    bar above its error.  Now the bar appears with the first progress, and the error is the one line."""
    out = tmp_path / "o"
    assert main(["optimize", "--workload", "saxpy", "--objective", "ipc:max", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "name at least two different metrics" in err and "NSGA3" not in err


def test_evaluate_config_takes_every_option_the_command_line_does(tmp_path, capsys):
    """A config file's reference, mode, preset and on_no_fit reach the run as their options do (they were
    refused as unknown keys), and the command line's value still wins over the file's."""
    cfg = tmp_path / "e.toml"
    cfg.write_text(
        'design = ["baseline", "bow"]\nreference = "bow"\nworkloads = ["saxpy"]\nmode = "points"\n'
        'on_no_fit = "nan"\n[params]\nnum_banks = [8, 16]\ncollector_units = [4, 8]\n'
    )
    assert main(["evaluate", "--config", str(cfg), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["attrs"]["reference"] == "bow" and len(res["rows"]) == 2 * 2  # points: 2 points x 2 designs
    assert main(["evaluate", "--config", str(cfg), "--reference", "baseline", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attrs"]["reference"] == "baseline"
    one = tmp_path / "one.toml"
    one.write_text('design = "baseline"\nreference = "bow"\nworkloads = ["saxpy"]\n')
    assert main(["evaluate", "--config", str(one)]) == 2
    assert "--reference applies when several" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text('workloads = ["saxpy"]\nmode = "grid"\n')
    assert main(["evaluate", "--config", str(bad)]) == 2
    assert "mode 'grid' is invalid; allowed: product, points" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, needle",
    [
        (["evaluate", "--workload", "/no/such/file.sass"], "no/such"),
        (["evaluate", "--gpu", "gtx9999", "--workload", "saxpy"], "unknown SM preset"),
        (["evaluate", "--workload", "saxpy", "--param", "num_banks=0"], "num_banks"),
        (["evaluate", "--workload", "saxpy", "--param", "num_banks=x"], "integer in [1, 1024]"),
        (["workload", "info", "nosuchkernel"], "nosuchkernel"),
        (["spec", "show", "gtx9999"], "gtx9999"),
    ],
)
def test_bad_input_one_line_exit_2(args, needle, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert needle in err


def test_malformed_toml_and_garbage_sass(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("design = [\n")
    assert main(["evaluate", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.toml" in err and err.count("\n") == 1
    junk = tmp_path / "junk.sass"
    junk.write_text("this is not SASS\n\x00\x01garbage\n")
    assert main(["workload", "info", str(junk)]) == 2
    err = capsys.readouterr().err
    assert "junk.sass" in err and err.count("\n") == 1


def test_subprocess_error_has_no_traceback():
    r = run("evaluate", "--gpu", "nonexistent.config", "--workload", "saxpy")
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_the_result_csv_holds_every_value_once(tmp_path):
    """The CSV was the Dataset's long form: each structure's energy repeated once per stall reason, so the
    column summed to six times the total.  Now a row per point, the parts in columns of their own."""
    import pandas as pd

    out = tmp_path / "r.csv"
    args = ["evaluate", "--workload", "saxpy", "--gpu", "fermi-gtx480", "--param", "num_banks=8,16"]
    assert main([*args, "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert len(df) == 2 and list(df["num_banks"]) == [8, 16]
    energy = df[[c for c in df if c.startswith("energy_pj.")]]
    assert energy.shape[1] >= 3
    np.testing.assert_allclose(energy.sum(axis=1), df["energy_pj_total"], rtol=1e-12)
    stalls = [c for c in df if c.startswith("stall_cycles.")]
    assert "stall_cycles.memory" in stalls and "stall_cycles" not in df
    # several designs: a row per (design, workload, point)
    from rfmodel.evaluate import result_table

    ds = rfmodel.evaluate(
        ["baseline", "rfc"], ["saxpy", "sgemm_tiled"], "fermi-gtx480", params={"num_banks": [8, 16]}
    )
    t = result_table(ds)
    assert len(t) == 2 * 2 * 2 and list(t.columns[:3]) == ["design", "workload", "num_banks"]
    assert t.set_index(["design", "workload", "num_banks"]).index.is_unique
    row = t[(t.design == "rfc") & (t.workload == "sgemm_tiled") & (t.num_banks == 16)].iloc[0]
    want = ds["energy_pj"].sel(design="rfc", workload="sgemm_tiled", num_banks=16, structure="rf_cache")
    assert row["energy_pj.rf_cache"] == float(want)


def test_workload_list_as_json(capsys):
    """Every command that prints a table has --json; workload list had none."""
    assert main(["workload", "list", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    names = {r["workload"] for r in out["rows"]}
    assert {"saxpy", "sgemm_tiled"} <= names and out["gpu"] == "fermi-gtx480"
    saxpy = next(r for r in out["rows"] if r["workload"] == "saxpy")
    assert saxpy["rf_demand_x"] > 0 and len(saxpy["description"]) > 0
