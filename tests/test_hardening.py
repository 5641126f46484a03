"""Bad input gives one clear error (exit 2 in the CLI, one line on stderr, no traceback), never a traceback
or a silent wrong answer: one named test per case found by trying rfmodel as a new user would."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from helpers_cli import small_search

import rfmodel
from rfmodel.cli import main
from rfmodel.errors import RfmodelError


def run_cli(args, capsys) -> str:
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:  # the parser's own one-line errors (an option's value out of its range)
        code = e.code
    err = capsys.readouterr().err
    # a first compilation's note (numba's cache is cold after an edit) is not the error
    err = "".join(x for x in err.splitlines(keepends=True) if not x.startswith("rfmodel: compiling "))
    assert code == 2, err
    assert err.startswith("rfmodel: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def run_cli_mem_fraction_uncertainty(spec, capsys) -> str:
    """The CLI's one-line error for a 10-sample Monte Carlo evaluation of saxpy with mem_fraction's
    uncertainty given as ``spec``."""
    args = ["evaluate", "--workload", "saxpy", "--method", "montecarlo", "--samples", "10"]
    return run_cli([*args, "--uncertainty", f"mem_fraction={spec}"], capsys)


def test_non_utf8_config_file(tmp_path, capsys):
    f = tmp_path / "l.toml"
    f.write_bytes(b'name = "caf\xe9"\n')
    assert "not UTF-8" in run_cli(["evaluate", "--config", f], capsys)


def test_non_utf8_sweep_and_technology_data(tmp_path, capsys):
    f = tmp_path / "s.json"
    f.write_bytes(b"\xff\xfe{}")
    assert "not UTF-8" in run_cli(["calibrate", "--sweep", f, "--out", tmp_path / "a.json"], capsys)
    query = [
        "tech",
        "query",
        "--cell",
        "sram-hp",
        "--node",
        "45",
        "--capacity-kb",
        "16",
        "--width-bits",
        "128",
    ]
    assert "not UTF-8" in run_cli([*query, "--data", f], capsys)


@pytest.mark.parametrize(
    ("sweep", "needle"),
    [
        ({"name": "x"}, "missing key 'gpus'"),
        ({"gpus": ["fermi-gtx480"], "workloads": 5, "points": [{}]}, "'workloads'"),
        ({"gpus": ["fermi-gtx480"], "workloads": ["saxpy"], "points": [{}], "gpu": 1}, "unknown key 'gpu'"),
        (
            {"gpus": ["fermi-gtx480"], "workloads": ["saxpy"], "points": [{}], "effect_weight": -1},
            "'effect_weight'",
        ),
        (
            {"gpus": ["fermi-gtx480"], "workloads": ["saxpy"], "points": [{}], "effect_weight": "3"},
            "'effect_weight'",
        ),
        ([1, 2], "JSON object"),
    ],
)
def test_malformed_sweep(tmp_path, capsys, sweep, needle):
    f = tmp_path / "s.json"
    f.write_text(json.dumps(sweep))
    out = tmp_path / "a.json"
    assert needle in run_cli(["calibrate", "--sweep", f, "--out", out], capsys)
    assert not out.exists()


def test_device_or_pipe_as_input_file(tmp_path, capsys):
    # /dev/zero was read until memory ran out (workload info, evaluate, simulate): a device or pipe is refused
    for args in (
        ["workload", "info", "/dev/zero"],
        ["simulate", "--workload", "/dev/zero"],
        ["evaluate", "--config", "/dev/zero"],
    ):
        assert "not a regular file" in run_cli(args, capsys)
    fifo = tmp_path / "pipe.sass"
    os.mkfifo(fifo)
    assert "not a regular file" in run_cli(["evaluate", "--workload", fifo], capsys)
    # a cubin's reader looks at a file's first bytes: a pipe named .cubin is refused, never opened
    cubin = tmp_path / "pipe.cubin"
    os.mkfifo(cubin)
    for args in (["evaluate", "--workload", cubin], ["workload", "info", cubin]):
        assert "not a regular file" in run_cli(args, capsys)


def test_oversized_text_input(tmp_path):
    from rfmodel.io import read_text

    f = tmp_path / "big.sass"
    f.write_text("x" * 2048)
    with pytest.raises(RfmodelError, match="larger than"):
        read_text(f, "SASS file", max_bytes=1024)
    assert read_text(f, "SASS file", max_bytes=4096) == "x" * 2048


def test_malformed_sweep_json(tmp_path, capsys):
    f = tmp_path / "s.json"
    f.write_text('{"gpus": [')
    assert "malformed JSON" in run_cli(["calibrate", "--sweep", f, "--out", tmp_path / "a.json"], capsys)


def test_wrongly_typed_config_values(tmp_path, capsys):
    f = tmp_path / "c.toml"
    f.write_text("workloads = 5\n")
    assert "workload" in run_cli(["evaluate", "--config", f], capsys)


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("99999999999999999999999", "out of range"),
        ("nan", "not a finite number"),
        ("inf", "not a finite number"),
        ("-3", "main_rf_latency_x"),
    ],
)
def test_bad_parameter_values(capsys, value, needle):
    param = "num_banks" if value.startswith("9999") else "main_rf_latency_x"
    assert needle in run_cli(["evaluate", "--workload", "saxpy", "--param", f"{param}={value}"], capsys)


def test_negative_seed(capsys, tmp_path):
    assert "seed" in run_cli(["optimize", "--seed", "-1", "--quiet", "--out", tmp_path / "o"], capsys)
    assert "seed" in run_cli(["evaluate", "--workload", "saxpy", "--seed", "-1"], capsys)


@pytest.mark.parametrize("kind", ["under_a_file", "name_too_long"])
def test_output_path_errors_come_before_the_run(tmp_path, capsys, kind):
    (tmp_path / "f").write_text("")
    out = tmp_path / "f" / "x.nc" if kind == "under_a_file" else tmp_path / ("a" * 300 + ".nc")
    cmds = (["evaluate", "--workload", "saxpy"], ["simulate", "--workload", "saxpy"], ["optimize", "--quiet"])
    for cmd in cmds:
        err = run_cli([*cmd, "--out", out], capsys)
        assert "cannot write here" in err
    assert capsys.readouterr().out == ""  # nothing ran


def test_python_api_bad_calls_raise_the_project_error():
    for call in (
        lambda: rfmodel.evaluate("baseline", 5),
        lambda: rfmodel.evaluate("baseline", "saxpy", params=[1, 2]),
        lambda: rfmodel.evaluate("baseline", "saxpy", params={"num_banks": [None]}),
        lambda: rfmodel.evaluate("baseline", "saxpy", seed=-1),
        lambda: rfmodel.evaluate("baseline", "saxpy", calibration="/no/such/calibration.json"),
    ):
        with pytest.raises(RfmodelError):
            call()


# ----------------------------------------------------------------------------- bounded resources
def test_tolerance_resolution_has_a_floor(capsys):
    """A resolution below the floating-point spacing used to bisect forever."""
    assert "resolution" in run_cli(
        [
            "tolerance",
            "--design",
            "rfc",
            "--workload",
            "saxpy",
            "--method",
            "analytic",
            "--resolution",
            "1e-300",
        ],
        capsys,
    )
    from rfmodel.tolerance import bisect_tolerance

    # the bisection also stops when the interval cannot be split any more
    res = bisect_tolerance(lambda x: 1.0 if x <= 2.0 else 0.0, 1.0, hi=4.0, resolution=1e-6)
    assert abs(res["latency_x"] - 2.0) < 1e-5


def saxpy_grid(command, n):
    """``command`` on saxpy over a product grid of ``n`` main-RF bank speeds by ``n`` collector counts
    (``n`` ** 2 points, every value distinct: a product grid takes each value of an axis once)."""
    speeds = ",".join(f"{1.0 + 7.0 * k / n:.6f}" for k in range(n))
    units = ",".join(str(k) for k in range(1, n + 1))
    params = ["--param", f"main_rf_latency_x={speeds}", "--param", f"collector_units={units}"]
    return [command, "--workload", "saxpy", *params]


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "--workload", "saxpy", "--method", "montecarlo", "--samples", "1000000000"],
        saxpy_grid("evaluate", 2100),
        saxpy_grid("simulate", 400),
        ["optimize", "--pop", "1000000", "--quiet"],
    ],
)
def test_requests_beyond_the_bounds_are_refused_before_they_run(args, capsys, tmp_path):
    if args[0] == "optimize":
        args = [*args, "--out", str(tmp_path / "o")]
    assert "at most" in run_cli(args, capsys)


SIZE = "Cache size                    : "


@pytest.mark.parametrize(
    ("field", "bad"),
    [(SIZE + "16384", SIZE + "0"), ("Technology size (nm): 32", "Technology size (nm): -32")],
)
def test_cacti_import_rejects_impossible_sizes(tmp_path, capsys, field, bad):
    """A zero cache size or a negative node used to be imported and then break every fit (LinAlgError)."""
    from test_tech import CACTI_REPORT

    assert field in CACTI_REPORT
    f = tmp_path / "cacti.out"
    f.write_text(CACTI_REPORT.replace(field, bad))
    err = run_cli(["tech", "import", "cacti", f, "--out", tmp_path / "rows.csv"], capsys)
    assert "invalid" in err and not (tmp_path / "rows.csv").exists()


def test_a_trace_without_instructions_is_one_error():
    from rfmodel.analytic.profile import profile_trace
    from rfmodel.evaluate import memory_latencies, resolve_gpu
    from rfmodel.sim import trace_from_warps

    with pytest.raises(RfmodelError, match="no instructions"):
        profile_trace(trace_from_warps([[]]), memory_latencies(resolve_gpu("fermi-gtx480"), 1.0))


# ----------------------------------------------------------------------------- calibration
def test_calibration_with_every_simulation_failing_writes_nothing(tmp_path, capsys, monkeypatch):
    """Every simulation fails: exit 2, no calibration file, the package's own untouched."""
    import rfmodel.calibrate as cal
    from rfmodel.analytic.calibration import DEFAULT_FILE

    before = DEFAULT_FILE.read_bytes()

    def broken(job):
        raise RuntimeError("simulator unavailable")

    monkeypatch.setattr(cal, "simulate_job", broken)
    sweep = {"gpus": ["fermi-gtx480"], "workloads": ["saxpy"], "points": [{}], "max_warps": 4}
    f = tmp_path / "s.json"
    f.write_text(json.dumps(sweep))
    out = tmp_path / "a.json"
    args = [
        "calibrate",
        "--sweep",
        f,
        "--workers",
        "1",
        "--design",
        "baseline",
        "--out",
        out,
        "--checkpoints",
        tmp_path / "ck",
        "--report",
        tmp_path / "r.json",
        "--quiet",
    ]
    err = run_cli(args, capsys)
    assert "none of the 1 simulations succeeded" in err and "simulator unavailable" in err
    assert not out.exists() and DEFAULT_FILE.read_bytes() == before


def test_a_damaged_checkpoint_is_redone(tmp_path):
    import rfmodel.calibrate as cal

    sweep = {"gpus": ["fermi-gtx480"], "workloads": ["saxpy"], "points": [{}], "max_warps": 4}
    jobs = cal.sweep_jobs(sweep, ["baseline"])
    recs, ran = cal.run_jobs(jobs, tmp_path, workers=1, progress=False)
    assert ran == 1
    (tmp_path / "results.jsonl").write_text("{ damaged")
    with pytest.warns(UserWarning, match="line 1: damaged record"):
        recs2, ran2 = cal.run_jobs(jobs, tmp_path, workers=1, progress=False)
    assert ran2 == 1 and recs2[0]["sim"]["ipc"] == recs[0]["sim"]["ipc"]


def test_outputs_get_the_usual_permissions(tmp_path):
    import os
    import stat

    from rfmodel.calibrate import write_calibration
    from rfmodel.io import write_text
    from rfmodel.spec import write_text_atomic

    old = os.umask(0o022)
    try:
        written = [
            write_text(tmp_path / "x.txt", "hello"),
            write_text_atomic(tmp_path / "gpu.toml", "name = 'x'\n"),
        ]
        write_calibration(tmp_path / "analytic.json", {}, {"name": "t"}, {}, "test")  # calibration output
        written.append(tmp_path / "analytic.json")
    finally:
        os.umask(old)
    for p in written:
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p
    # no temporaries left
    assert sorted(f.name for f in tmp_path.iterdir()) == ["analytic.json", "gpu.toml", "x.txt"]


def test_a_workload_that_never_fits_is_an_error_naming_the_resource(capsys):
    """186 registers x 256 threads do not fit fermi's 32 K registers: an error, not 0 warps and NaN energy."""
    for method in ("analytic", "simulate"):
        err = run_cli(["evaluate", "--workload", "gemm_regblock16x8", "--method", method], capsys)
        assert "47616 registers" in err and "regs_per_sm" in err
    # a grid with a point that fits: that point's results, the others infeasible (0 warps)
    ds = rfmodel.evaluate("baseline", "gemm_regblock16x8", params={"regs_per_sm": [32768, 65536]})
    assert ds["warps"].values.ravel().tolist() == [0.0, 8.0]
    # a search asks for NaN instead
    ds = rfmodel.evaluate("baseline", "gemm_regblock16x8", on_no_fit="nan")
    assert float(ds["warps"].item()) == 0.0
    # what the docstring says such a row holds: nothing ran
    assert float(ds["ipc"].item()) == 0.0
    assert np.isinf(float(ds["cycles"].item())) and np.isinf(float(ds["energy_pj_total"].item()))
    assert np.isnan(float(ds["power_mw"].item())) and np.isnan(float(ds["bank_conflict_stall_cycles"].item()))
    assert np.isnan(float(ds["collector_occupancy"].item())) and float(ds["rf_reads"].item()) > 0


def test_every_sm_field_in_a_grid_changes_the_analytic_model_or_is_refused(capsys):
    """dram_latency_cycles used to be ignored by the analytic engine (identical rows from 0 to 10,000)."""
    ipc = [
        float(rfmodel.evaluate("baseline", "saxpy", params={"dram_latency_cycles": [v]})["ipc"].item())
        for v in (100, 500, 2000)
    ]
    assert ipc[0] > ipc[1] > ipc[2]
    err = run_cli(["evaluate", "--workload", "saxpy", "--param", "dram_latency_cycles=100,500"], capsys)
    assert "one value of it per call" in err
    s = rfmodel.sensitivity("baseline", "saxpy", param="dram_latency_cycles", metrics=("ipc",))
    assert float(s["d_ipc"].item()) < 0


@pytest.mark.parametrize("spec", ["normal:nan", "normal:-1", "uniform:1.5", "lognormal:inf"])
def test_bad_uncertainty_widths(capsys, spec):
    err = run_cli_mem_fraction_uncertainty(spec, capsys)
    assert "mem_fraction" in err


def test_export_accelsim_needs_at_least_one_sm(tmp_path, capsys):
    args = ["workload", "export-accelsim", "saxpy", tmp_path / "ex", "--num-sms", "0"]
    assert "--num-sms" in run_cli(args, capsys)
    assert not (tmp_path / "ex").exists()


def test_montecarlo_without_an_uncertain_parameter_is_refused(capsys):
    """Found by the fuzz harness: no uncertainty gave a sample axis of length 1 and an xarray traceback."""
    err = run_cli(["evaluate", "--workload", "saxpy", "--method", "montecarlo"], capsys)
    assert "at least one uncertain parameter" in err
    with pytest.raises(RfmodelError, match="uncertain parameter"):
        rfmodel.evaluate("baseline", "saxpy", method="montecarlo")


def test_a_closed_output_pipe_ends_quietly():
    """`rfmodel workload info saxpy | head -1`: the reader is gone before rfmodel writes, so every write
    fails; rfmodel stops with the status a shell gives a process that SIGPIPE ended (141), without a
    traceback."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "rfmodel.cli", "workload", "info", "saxpy"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # before the child has started writing
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err.decode()
    assert b"Traceback" not in err and b"BrokenPipeError" not in err


# ----------------------------------------------------------------------------- full disk, shared folders
def _enospc(*_a, **_k):
    import errno

    raise OSError(errno.ENOSPC, "No space left on device")


def test_netcdf_write_beyond_the_file_size_limit_is_one_error_not_a_crash(tmp_path):
    """The HDF5 library ended the process with a segmentation fault when a write failed under it (a full
    disk); a process file-size limit makes the same failing write without a small file system."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))

    out = tmp_path / "x.nc"
    env = {**os.environ, "RFMODEL_CACHE_DIR": "off"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rfmodel.cli",
            "evaluate",
            "--workload",
            "saxpy",
            "--gpu",
            "fermi-gtx480",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=limit,
        timeout=300,
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert str(out) in proc.stderr and "file too large" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no file, no temporary


OPT_ARGS = small_search()


def tiny_calibrate_args(tmp_path, points, report):
    """``rfmodel calibrate`` of baseline on test_calibrate's TINY sweep over saxpy at ``points`` (written to
    ``tmp_path/sweep.json``): one worker, no coverage samples, quiet; checkpoints in ``tmp_path/ck``, the
    calibration in ``tmp_path/a.json`` and its report in ``tmp_path/report``."""
    from test_calibrate import TINY

    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps(dict(TINY, workloads=["saxpy"], points=points)))
    where = ["--checkpoints", tmp_path / "ck", "--out", tmp_path / "a.json", "--report", tmp_path / report]
    run = ["--workers", "1", "--design", "baseline", "--coverage-samples", "0", "--quiet"]
    return ["calibrate", "--sweep", sweep, *run, *where]


@pytest.fixture
def quick_optimize(monkeypatch, small_front):
    import rfmodel.optimize.problem as problem

    monkeypatch.setattr(problem, "optimize", lambda *a, **k: small_front)


@pytest.mark.parametrize("where", ["pareto.csv", "pareto.nc", "pareto.png"])
def test_full_disk_leaves_no_partial_pareto_set(tmp_path, capsys, monkeypatch, quick_optimize, where):
    """A full disk at any member of the front's files: one error, and none of the files (they are written
    to temporary names and renamed together)."""
    import pathlib

    import matplotlib.figure
    import xarray as xr

    out = tmp_path / "opt"
    if where == "pareto.csv":
        real = pathlib.Path.write_text
        monkeypatch.setattr(
            pathlib.Path,
            "write_text",
            lambda self, *a, **k: _enospc() if "pareto.csv" in self.name else real(self, *a, **k),
        )
    elif where == "pareto.nc":
        monkeypatch.setattr(xr.Dataset, "to_netcdf", _enospc)
    else:
        monkeypatch.setattr(matplotlib.figure.Figure, "savefig", _enospc)
    err = run_cli([*OPT_ARGS, "--out", out], capsys)
    assert "no space left on device" in err.lower()
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint"]  # no front file, temporary or lock
    assert not [p for p in (out / "checkpoint").iterdir() if p.name.endswith(".tmp")]


def test_full_disk_leaves_no_partial_sensitivity_set(tmp_path, capsys, monkeypatch):
    import matplotlib.figure
    import numpy as np
    import xarray as xr

    import rfmodel.optimize.sensitivity as sensitivity

    v = ("variable", np.zeros(2))
    ds = xr.Dataset(
        {k: v for k in ("S1", "ST", "S1_conf", "ST_conf")},
        coords={"variable": ["a", "b"]},
        attrs={"metric_description": "time", "gpu": "fermi-gtx480", "points": 8},
    )
    monkeypatch.setattr(sensitivity, "global_sensitivity", lambda *a, **k: ds)
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", _enospc)
    out = tmp_path / "sens"
    assert "no space left on device" in run_cli(["sensitivity", "--out", out], capsys)
    assert not out.exists() or not list(out.iterdir())


def test_full_disk_leaves_no_partial_calibration(tmp_path, capsys, monkeypatch):
    """The calibration file and its report are one set: a failed report leaves no calibration either."""
    import pathlib

    args = tiny_calibrate_args(tmp_path, [{}, {"num_banks": 8}], "report.json")
    real = pathlib.Path.write_text
    monkeypatch.setattr(
        pathlib.Path,
        "write_text",
        lambda self, *a, **k: _enospc() if "report.json" in self.name else real(self, *a, **k),
    )
    assert "no space left on device" in run_cli(args, capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck", "sweep.json"]


def test_output_set_is_complete_or_absent_when_a_rename_fails(tmp_path, monkeypatch):
    from rfmodel.io import output_set, write_text

    (tmp_path / "old.csv").write_text("old")
    calls = []
    real = os.replace

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            _enospc()
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(RfmodelError, match="b.csv: cannot write here: no space left on device"):
        with output_set(folder=tmp_path, stale=[tmp_path / "old.csv"]):
            write_text(tmp_path / "a.csv", "a")
            write_text(tmp_path / "b.csv", "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.csv"]


def _hold_lock(folder):
    """Lock ``folder`` as another rfmodel process would: an flock on its lock file naming the holder."""
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    fh = open(folder / ".rfmodel.lock", "a+")  # noqa: SIM115 - held open by the caller
    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fh.write("pid 4242 on elsewhere\n")
    fh.flush()
    return fh


def test_a_second_optimize_into_a_held_output_folder_is_refused(tmp_path, capsys, quick_optimize):
    out = tmp_path / "opt"
    fh = _hold_lock(out)
    try:
        err = run_cli([*OPT_ARGS, "--out", out], capsys)
        assert "another rfmodel run (pid 4242 on elsewhere)" in err and str(out) in err
        assert "another rfmodel run" in run_cli(["optimize", "--quiet", "--resume", out], capsys)
        assert not (out / "checkpoint").exists() and not (out / "pareto.csv").exists()
    finally:
        fh.close()  # the holder ends: its lock goes with it, the lock file stays behind as a killed run's
    assert (out / ".rfmodel.lock").exists()
    assert main([*OPT_ARGS, "--out", str(out)]) == 0, capsys.readouterr().err
    assert (out / "pareto.csv").is_file() and not (out / ".rfmodel.lock").exists()


def test_a_killed_runs_temporary_files_are_removed_by_the_next_run(tmp_path, capsys, quick_optimize):
    out = tmp_path / "opt"
    (out / "checkpoint").mkdir(parents=True)
    left = [out / ".pareto.nc.k2x9_a0q.tmp", out / "checkpoint" / ".baseline.ckpt.0abcdefg.tmp"]
    for p in left:
        p.write_bytes(b"half")
    assert main([*OPT_ARGS, "--out", str(out)]) == 0, capsys.readouterr().err
    assert not [p for p in left if p.exists()]
    assert (out / "pareto.nc").is_file()


def test_a_second_calibrate_on_a_held_checkpoint_folder_is_refused(tmp_path, capsys):
    args = tiny_calibrate_args(tmp_path, [{}], "r.json")
    fh = _hold_lock(tmp_path / "ck")
    try:
        assert "another rfmodel run (pid 4242 on elsewhere)" in run_cli(args, capsys)
    finally:
        fh.close()
    assert not (tmp_path / "a.json").exists()


# ----------------------------------------------------------------------------- bounds of numeric options
@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["optimize", "--pop", "100000"], "--pop"),
        (["optimize", "--seed", str(2**64)], "--seed"),
        (["optimize", "--generations", "100000"], "--generations"),
        (["optimize", "--workers", "100000"], "--workers"),
        (["optimize", "--validate", "100000"], "--validate"),
        (["calibrate", "--coverage-samples", "1000000000"], "--coverage-samples"),
        (["calibrate", "--workers", "100000"], "--workers"),
        (["bench", "--repeat", "1000000000"], "--repeat"),
        (["bench", "--execute-scale", "1e9"], "--execute-scale"),
        (["evaluate", "--workload", "saxpy", "--seed", str(2**64)], "--seed"),
        (["simulate", "--workload", "saxpy", "--max-warps", str(2**40)], "--max-warps"),
        (["workload", "export-accelsim", "saxpy", "OUT", "--num-sms", str(2**40)], "--num-sms"),
        (
            ["tech", "query", "--cell", "sram-hp", "--node", "45", "--capacity-kb", "1e308", "--extrapolate"],
            "--capacity-kb",
        ),
    ],
)
def test_numeric_options_beyond_their_upper_bound_are_refused_before_work(args, option, capsys, tmp_path):
    args = [str(tmp_path / "x") if a == "OUT" else a for a in args]
    if args[0] in ("optimize", "calibrate"):
        args += ["--out", str(tmp_path / ("o" if args[0] == "optimize" else "a.json"))]
    err = run_cli(args, capsys)
    assert option in err and "at most" in err and args[args.index(option) + 1] in err
    assert capsys.readouterr().out == "" and not (tmp_path / "o").exists()


def _numeric_actions(parser, prog=""):
    import argparse

    from rfmodel.cli import _result_file  # a file name by its ending, not a number

    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _numeric_actions(sub, f"{prog} {name}")
        elif (
            a.type is not None
            and a.type not in (str, _result_file)
            or a.dest in ("node", "capacity_kb", "width_bits", "banks", "clock_mhz", "temperature")
        ):
            yield prog, a


def test_every_numeric_option_states_its_range_in_its_help():
    """Every numeric option of every sub-command has a lower and an upper bound, stated in --help."""
    from rfmodel.cli import build_parser

    found = list(_numeric_actions(build_parser()))
    assert len(found) >= 35
    for prog, a in found:
        assert a.help and ("at most" in a.help or "below" in a.help), (prog, a.option_strings, a.help)
        assert "at least" in a.help or "above" in a.help or "to at most" in a.help, (prog, a.option_strings)


def test_documented_maxima_of_a_search_fit_in_memory():
    """pop 100,000 (the former bound) needed 74.5 GiB in the survival step (its memory grows with the
    population squared: 2.1 GB measured at 10,000 with 2 generations over the default workloads)."""
    from rfmodel.limits import MAX_POP, MAX_SEED
    from rfmodel.optimize import optimize

    assert MAX_POP <= 10_000
    for kw in (
        {"pop_size": MAX_POP + 1},
        {"seed": 2**64},
        {"seed": MAX_SEED, "reference_seeds": 1},
        {"generations": 10**9},
        {"nodes": (float("nan"),)},
        {"uncertainty": {"mem_fraction": ("normal", 0.1)}, "samples": 10**6},
    ):
        with pytest.raises(RfmodelError, match="pop_size|seed|generations|nodes|samples"):
            optimize("baseline", "saxpy", **kw)


def test_seeds_beyond_what_every_consumer_takes_are_refused():
    """A seed of 2**64 ran the whole search, then the NetCDF writer failed on the attribute."""
    from rfmodel.limits import MAX_SEED
    from rfmodel.optimize.sensitivity import global_sensitivity
    from rfmodel.workload.suite import load_workload

    for call in (
        lambda: rfmodel.evaluate("baseline", "saxpy", seed=2**64),
        lambda: rfmodel.evaluate("baseline", "saxpy", seed=MAX_SEED + 1),
        lambda: rfmodel.evaluate("baseline", "saxpy", method="simulate", seed=2**40),
        lambda: global_sensitivity("baseline", "saxpy", seed=2**40),
        lambda: load_workload("saxpy", seed=2**40),
    ):
        with pytest.raises(RfmodelError, match="seed") as e:
            call()
        assert str(MAX_SEED) in str(e.value)
    ds = rfmodel.evaluate("baseline", "saxpy", seed=MAX_SEED)  # the bound itself runs
    assert float(ds["ipc"].item()) > 0


def test_api_bounds_of_bench_calibrate_and_workers():
    from rfmodel.bench import bench
    from rfmodel.calibrate import calibrate
    from rfmodel.runner import ProcessRunner

    with pytest.raises(RfmodelError, match="coverage_samples"):
        calibrate({"gpus": ["fermi-gtx480"], "workloads": ["saxpy"], "points": [{}]}, coverage_samples=10**9)
    with pytest.raises(RfmodelError, match="repeat"):
        bench(repeat=10**9)
    with pytest.raises(RfmodelError, match="execute_scale"):
        bench(execute_scale=1e9)
    with pytest.raises(RfmodelError, match="execute_suite: expected builtin, papers or all"):
        bench(execute_suite="mine")
    with pytest.raises(RfmodelError, match="workers"):
        ProcessRunner(10**6)


@pytest.mark.parametrize("spec", ["normal:1e308", "lognormal:700", "normal:1.5"])
def test_uncertainty_widths_beyond_meaning_are_refused(capsys, spec):
    """mem_fraction=normal:1e308 ran and printed nonsense: a relative sd is at most 1."""
    err = run_cli_mem_fraction_uncertainty(spec, capsys)
    assert "mem_fraction" in err and "sd <= 1" in err


# ----------------------------------------------------------------------------- remaining tracebacks
def test_an_sm_without_an_l2_runs_in_both_engines(tmp_path, capsys):
    """l2_size_bytes = 0 in an SM TOML ended in a ZeroDivisionError in the analytic issue schedule; the
    simulator takes it as an SM without an L2 (every L1 miss goes to DRAM), and so does the analytic
    engine."""
    assert main(["spec", "show", "fermi-gtx480"]) == 0
    text = capsys.readouterr().out
    assert "\nl2_size_bytes = 786432\n" in text
    f = tmp_path / "f.toml"
    f.write_text(text.replace("\nl2_size_bytes = 786432\n", "\nl2_size_bytes = 0\n"))
    assert main(["evaluate", "--gpu", str(f), "--workload", "saxpy"]) == 0, capsys.readouterr().err
    for method in ("analytic", "simulate"):
        without = float(rfmodel.evaluate("baseline", "saxpy", str(f), method=method)["ipc"].item())
        with_l2 = float(rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method=method)["ipc"].item())
        assert 0 < without <= with_l2, (method, without, with_l2)


def test_a_service_that_is_not_a_dask_scheduler_is_one_error(tmp_path, capsys):
    """A TCP service that answers with bytes Dask cannot read (here a frame of 2**62 bytes) gave a
    MemoryError or another traceback from distributed."""
    pytest.importorskip("distributed")
    import socket
    import struct
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(30)

    def answer():
        for _ in range(4):
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(struct.pack("<QQ", 1, 1 << 62) + b"garbage" * 8)
                conn.settimeout(2)
                try:
                    conn.recv(4096)
                except OSError:
                    pass

    threading.Thread(target=answer, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    try:
        from rfmodel.runner import make_runner

        with pytest.raises(RfmodelError, match="Dask scheduler"):
            make_runner(None, address)
        err = run_cli(["optimize", "--quiet", "--scheduler", address, "--out", tmp_path / "o"], capsys)
        assert "Dask scheduler" in err
    finally:
        server.close()


@pytest.mark.parametrize(
    ("content", "needle"),
    [("[1, 2]", "JSON object"), ('{"design": 5}', "'design' = 5"), ('{"pop": "x"}', "'pop'")],
)
def test_resume_from_a_damaged_run_description(tmp_path, capsys, content, needle):
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "checkpoint" / "run.json").write_text(content)
    err = run_cli(["optimize", "--quiet", "--resume", tmp_path], capsys)
    assert "not a run description" in err and needle in err


@pytest.mark.parametrize(("line", "needle"), [('params = "num_banks=4"', "'params'"), ("tech = 5", "'tech'")])
def test_config_tables_of_the_wrong_kind(tmp_path, capsys, line, needle):
    f = tmp_path / "c.toml"
    f.write_text(line + "\n")
    err = run_cli(["evaluate", "--config", f, "--workload", "saxpy"], capsys)
    assert needle in err and "table of names to values" in err


def test_accelsim_pc_wider_than_64_bits_and_a_negative_header_count(tmp_path):
    from test_accelsim import EXIT, write

    from rfmodel.errors import ParseError
    from rfmodel.workload.accelsim import read_traceg

    p = write(tmp_path, {0: {0: ["1" * 20 + " ffffffff 0 NOP 0 0 0", EXIT]}})
    with pytest.raises(ParseError, match="64-bit"):
        read_traceg(p)
    for key in ("shmem", "nregs"):
        p = write(tmp_path, {0: {0: ["0000 ffffffff 0 NOP 0 0 0", EXIT]}})
        old = "-shmem = 0" if key == "shmem" else "-nregs = 24"
        p.write_text(p.read_text().replace(old, f"-{key} = -4096"))
        with pytest.raises(ParseError, match=f"-{key} = -4096"):
            read_traceg(p)


@pytest.mark.parametrize(
    ("field", "bad"),
    [("Capacity   : 128KB", "Capacity   : 0KB"), ("Data Width : 1024Bits", "Data Width : -1024Bits")],
)
def test_nvsim_import_rejects_impossible_sizes(tmp_path, capsys, field, bad):
    """A zero capacity or a negative width was imported and then broke every fit (LinAlgError)."""
    from test_tech import NVSIM_REPORT

    assert field in NVSIM_REPORT
    f = tmp_path / "nvsim.out"
    f.write_text(NVSIM_REPORT.replace(field, bad))
    err = run_cli(["tech", "import", "nvsim", f, "--node", "32", "--out", tmp_path / "rows.csv"], capsys)
    assert "invalid" in err and not (tmp_path / "rows.csv").exists()


def test_a_signed_sass_register_is_an_error():
    """A destination 'R-5' was read as an unknown operand and silently dropped."""
    from test_sass import _frame

    from rfmodel.errors import ParseError
    from rfmodel.workload.sass import parse_sass

    for text in ("IADD3 R-5, R1, R2, RZ ;\nEXIT ;", "IADD3 R5, R1, R+2, RZ ;\nEXIT ;"):
        with pytest.raises(ParseError, match="out of range"):
            parse_sass(_frame(text))
    assert parse_sass(_frame("IADD3 R5, R1, -R2, RZ ;\nEXIT ;"))[0].instrs[0].src == (1, 2)


def test_standard_output_on_a_full_disk_is_one_error(capsys, monkeypatch):
    """`rfmodel spec show P > FULL/f.toml`: the failing write of standard output is one error line."""
    import io
    import sys

    class Full(io.TextIOBase):
        def write(self, s):
            _enospc()

        def flush(self):
            _enospc()

    monkeypatch.setattr(sys, "stdout", Full())
    assert main(["spec", "show", "fermi-gtx480"]) == 2
    err = capsys.readouterr().err
    assert err == "rfmodel: error: standard output: cannot write: no space left on device\n"


def _write_beyond_the_file_size_limit(path):
    """A worker's job: a write that the operating system refuses (the process may write 1 byte), with the
    exception pickling that Dask installs."""
    import resource

    from tblib import pickling_support

    from rfmodel.io import write_text

    pickling_support.install()
    resource.setrlimit(resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
    write_text(path, "more than one byte\n")


def test_a_full_disk_in_a_worker_process_is_the_same_one_error(tmp_path):
    """The write error of a worker process (an island's checkpoint on a full disk) reaches the caller as
    itself, not as a broken process pool."""
    pytest.importorskip("tblib")
    from rfmodel.runner import ProcessRunner

    with pytest.raises(RfmodelError, match=r"x\.csv: cannot write here: file too large"):
        list(ProcessRunner(1).run(_write_beyond_the_file_size_limit, [tmp_path / "x.csv"]))
    assert list(tmp_path.iterdir()) == []


def test_mode_points_without_parameters_is_refused(capsys):
    """A point list with no parameter had no length: an xarray traceback from both the CLI and the API."""
    with pytest.raises(RfmodelError, match="mode 'points'.*none is given"):
        rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", mode="points")
    with pytest.raises(RfmodelError, match="mode 'points'"):
        rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", mode="points", params={})
    assert "--param" in run_cli(["evaluate", "--workload", "saxpy", "--mode", "points"], capsys)


def test_a_result_file_that_is_a_folder_is_refused_before_the_run(tmp_path, capsys):
    (tmp_path / "r.csv").mkdir()
    err = run_cli(["evaluate", "--workload", "saxpy", "--out", tmp_path / "r.csv"], capsys)
    assert "is a folder" in err


@pytest.mark.parametrize("study", ["ltrf", "corf"])
def test_a_study_folder_under_a_file_is_one_error_line(tmp_path, capsys, study):
    """Every study made its folder only after its runs, and under a file that was a traceback."""
    f = tmp_path / "f"
    f.write_text("")
    assert "is a file" in run_cli(["study", study, "--quick", "--out", f / "st"], capsys)
    assert "is a file" in run_cli(["study", study, "--quick", "--out", f], capsys)


def test_an_optimize_run_refused_at_its_start_leaves_the_folder_as_it_was(tmp_path, capsys):
    """run.json was written before the arguments were checked: a refused run left a folder behind, and in
    a folder of an earlier run replaced the description that run resumes from."""
    fresh = tmp_path / "fresh"
    run_cli([*small_search(), "--out", fresh, "--objective", "ipcc:max"], capsys)
    assert not fresh.exists()
    old = tmp_path / "old"
    assert main([*small_search(), "--out", old, "--seed", "3"]) == 0
    described = (old / "checkpoint" / "run.json").read_text()
    run_cli([*small_search(), "--out", old, "--cell", "sram-hpp"], capsys)
    assert (old / "checkpoint" / "run.json").read_text() == described


def test_options_a_run_would_ignore_are_refused(tmp_path, capsys):
    """--percentile and --uncertainty-samples without --uncertainty, and a resumed run's own arguments,
    changed nothing and said nothing."""
    for extra in (["--percentile", "90"], ["--uncertainty-samples", "8"]):
        err = run_cli([*small_search(), "--out", tmp_path / "p", *extra], capsys)
        assert "robust search" in err and extra[0] in err
    from rfmodel.optimize import optimize

    with pytest.raises(RfmodelError, match="percentile"):
        optimize(["baseline"], ["saxpy"], "fermi-gtx480", percentile=90)
    run = tmp_path / "run"
    assert main([*small_search(), "--out", run]) == 0
    capsys.readouterr()
    for extra in (["--seed", "5"], ["--generations", "2"], ["--seed", "0"]):
        err = run_cli(["optimize", "--quiet", "--resume", run, *extra], capsys)
        assert extra[0] in err and "--resume" in err
    assert main(["optimize", "--quiet", "--workers", "1", "--resume", run]) == 0


def test_an_option_given_twice_is_refused_not_overwritten(capsys):
    """The later of two --gpu, --design (one-design commands) or --param of one name replaced the earlier
    without a word."""
    base = ["evaluate", "--workload", "saxpy"]
    assert "given twice" in run_cli([*base, "--gpu", "fermi-gtx480", "--gpu", "volta-v100"], capsys)
    assert "given twice" in run_cli([*base, "--method", "simulate", "--method", "analytic"], capsys)
    sim = ["simulate", "--workload", "saxpy", "--max-warps", "8", "--quiet"]
    assert "--design" in run_cli([*sim, "--design", "baseline", "--design", "malekeh"], capsys)
    assert "num_banks" in run_cli([*base, "--param", "num_banks=4", "--param", "num_banks=32"], capsys)
    unc = ["--method", "montecarlo", "--samples", "10"]
    widths = ["--uncertainty", "mem_fraction=normal:0.1", "--uncertainty", "mem_fraction=uniform:0.5"]
    assert "mem_fraction" in run_cli([*base, *unc, *widths], capsys)
    # several values of one name, and options that take several, stay as they were
    assert main([*base, "--param", "num_banks=4,8", "--design", "baseline", "--design", "bow"]) == 0


def test_settings_that_changed_nothing_are_refused(tmp_path, monkeypatch, capsys):
    """A misspelt tech key, the GPU's name as a parameter (it only lost the GPU's calibration) and a broken
    RFMODEL_DESIGNS file beside a built-in design were taken without a word."""
    with pytest.raises(RfmodelError, match="'nod_nm'.*allowed: cell, node_nm, main_cell"):
        rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", tech={"node_nm": 32, "nod_nm": 22})
    # a design's own option stays allowed, on that design only
    rfmodel.evaluate("stt", "saxpy", "fermi-gtx480", tech={"wb_capacity_kb": 8})
    with pytest.raises(RfmodelError, match="wb_capacity_kb"):
        rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", tech={"wb_capacity_kb": 8})
    capsys.readouterr()  # a first run's compile notes are not the CLI's errors below
    assert "'name'" in run_cli(["evaluate", "--workload", "saxpy", "--param", "name=foo"], capsys)
    monkeypatch.setenv("RFMODEL_DESIGNS", str(tmp_path / "missing.py"))
    assert "missing.py" in run_cli(["evaluate", "--workload", "saxpy", "--design", "baseline"], capsys)


@pytest.mark.parametrize(
    "kw, says",
    [
        ({"rel_step": float("nan")}, "rel_step"),
        ({"rel_step": -0.5}, "rel_step"),
        ({"metrics": ("ipcc",)}, "did you mean 'ipc'"),
        ({"metrics": ()}, "at least one metric"),
        ({"param": "main_cell"}, "not a number"),
        ({"param": "nonexistent"}, "nonexistent"),
        ({"params": {"num_banks": [4, 8]}}, "at="),
        ({"at": -3}, "not a value num_banks takes"),
    ],
)
def test_local_sensitivity_refuses_what_it_cannot_differentiate(kw, says):
    """rfmodel.sensitivity raised ValueError, KeyError or TypeError on these, or dropped them silently
    (a grid of the parameter differentiated; a negative step taken as none)."""
    with pytest.raises(RfmodelError, match=says):
        rfmodel.sensitivity("baseline", "saxpy", "fermi-gtx480", **kw)


def test_local_sensitivity_takes_one_metric_by_name():
    ds = rfmodel.sensitivity("baseline", "saxpy", "fermi-gtx480", metrics="ipc")
    assert set(ds.data_vars) == {"ipc", "d_ipc", "elasticity_ipc"}


def test_global_sensitivity_refuses_an_unknown_metric_before_it_runs(tmp_path, capsys):
    out = tmp_path / "s"
    args = ["sensitivity", "--workload", "saxpy", "--metric", "ipcc", "--samples", "2", "--out", out]
    assert "'ipcc'" in run_cli(args, capsys)
    assert not out.exists()


def test_a_tolerance_resolution_as_wide_as_the_search_is_refused(tmp_path, capsys):
    """At --resolution 30 over [1, 16] nothing was bisected: 1x came back as the answer, with no note."""
    from rfmodel.tolerance import bisect_tolerance

    with pytest.raises(RfmodelError, match="resolution 15"):
        bisect_tolerance(lambda x: 1.0 if x <= 4 else 0.0, 1.0, hi=16.0, resolution=15.0)
    assert (
        bisect_tolerance(lambda x: 1.0 if x <= 4 else 0.0, 1.0, hi=16.0, resolution=14.0)["latency_x"] == 1.0
    )
    args = [
        "tolerance",
        "--design",
        "baseline",
        "--workload",
        "saxpy",
        "--method",
        "analytic",
        "--resolution",
        "30",
    ]
    assert "resolution" in run_cli(args, capsys)
    assert "positive integer" in run_cli(["study", "ltrf", "--active-warps", "-5", "--out", tmp_path], capsys)


def test_small_input_mistakes_get_their_own_message(capsys):
    """A mixed list blamed its number ('4' is invalid), an empty workload name was read as the current
    folder, a misspelt kernel in `workload classes` was taken as one not measured yet, and --compat with
    the analytic engine named an argument of the Python API only."""
    with pytest.raises(RfmodelError, match="mixes numbers and names"):
        rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", params={"num_banks": [4, "x"]})
    with pytest.raises(RfmodelError, match="empty name"):
        rfmodel.evaluate("baseline", "", "fermi-gtx480")
    assert "did you mean 'saxpy'" in run_cli(["workload", "classes", "--workload", "saxpyy"], capsys)
    assert "--compat" in run_cli(["evaluate", "--workload", "saxpy", "--compat", "none"], capsys)


def test_saved_and_printed_results_say_what_they_hold(tmp_path, capsys):
    """rfmodel simulate --out X.csv kept the stall-reason axis without the stall cycles, and the optimize
    table showed a constraint's metric as a design parameter."""
    import pandas as pd

    out = tmp_path / "s.csv"
    args = ["simulate", "--design", "baseline", "--workload", "saxpy", "--max-warps", "8", "--quiet"]
    assert main([*args, "--out", out]) == 0
    table = pd.read_csv(out)
    stalls = table[[c for c in table if c.startswith("stall_cycles.")]]
    assert "stall_cycles.memory" in stalls and stalls.notna().all().all() and stalls.to_numpy().sum() > 0
    capsys.readouterr()
    assert main([*small_search(), "--out", tmp_path / "o", "--constraint", "ipc>=0.1"]) == 0
    printed = capsys.readouterr().out
    assert "ipc=" not in printed


def test_a_spec_file_as_config_beside_gpu_is_refused(tmp_path, capsys):
    """The file's GPU was dropped for --gpu's without a word."""
    spec = tmp_path / "volta.toml"
    assert main(["spec", "show", "volta-v100"]) == 0
    spec.write_text(capsys.readouterr().out)
    err = run_cli(["evaluate", "--config", spec, "--gpu", "fermi-gtx480", "--workload", "saxpy"], capsys)
    assert "SM spec" in err


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "--workload", "synthetic:fp-heavy", "--arch", "sm_75"],
        ["simulate", "--workload", "synthetic:fp-heavy", "--arch", "sm_90", "--max-warps", "4"],
        ["workload", "info", "synthetic:fp-heavy", "--arch", "sm_86"],
        ["sensitivity", "--workload", "synthetic:fp-heavy", "--arch", "sm_75", "--samples", "2"],
    ],
)
def test_an_architecture_no_workload_reads_is_refused(args, capsys, tmp_path):
    """``--arch`` picks a shipped kernel's SASS; for a synthetic preset (or a listing, cubin or Accel-Sim
    trace) it was taken, echoed into ``attrs['arch']`` and changed nothing."""
    assert "would change nothing" in run_cli(
        [*args, *(["--out", tmp_path / "o"] if args[0] == "sensitivity" else [])], capsys
    )


def test_an_architecture_is_refused_only_where_nothing_reads_it(tmp_path, capsys):
    from rfmodel.evaluate import check_arch, reads_arch
    from rfmodel.optimize import optimize

    with pytest.raises(RfmodelError, match="would change nothing"):
        rfmodel.evaluate("baseline", ["synthetic:fp-heavy", "synthetic:cache-sensitive"], arch="sm_75")
    with pytest.raises(RfmodelError, match="would change nothing"):  # the optimizer, before its folder
        optimize(designs=["baseline"], workloads=["synthetic:fp-heavy"], arch="sm_75")
    # read: a shipped kernel, with a trace prefix, with a launch recipe, or among other workloads
    assert reads_arch("saxpy") and reads_arch("expand:saxpy") and reads_arch("execute[r.toml]:saxpy")
    assert not reads_arch("synthetic:fp-heavy") and not reads_arch(str(tmp_path / "k.sass"))
    check_arch("sm_75", ["synthetic:fp-heavy", "saxpy"])
    check_arch("sm_80", "synthetic:fp-heavy")  # the default: nothing was set
    ds = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", arch="sm_75", max_warps=4)
    assert ds.attrs["arch"] == "sm_75"
    capsys.readouterr()  # a first compilation's note
    run_cli(
        [
            "optimize",
            "--quiet",
            "--workload",
            "synthetic:fp-heavy",
            "--arch",
            "sm_75",
            "--out",
            tmp_path / "o",
        ],
        capsys,
    )
    assert not (tmp_path / "o").exists()


def test_a_swept_sm_field_prices_each_simulated_point_at_its_own_value(capsys):
    """The simulator ran each point at its clock and bank width but priced every point at the GPU's own:
    energy and power the same at 700 and 1400 MHz, a 512-bit bank's area that of a 1024-bit one."""
    ds = rfmodel.evaluate(
        "baseline", "saxpy", "fermi-gtx480", method="simulate", max_warps=8, params={"clock_mhz": [700, 1400]}
    )
    one = [rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", method="simulate", max_warps=8,
                            params={"clock_mhz": [c]}) for c in (700, 1400)]  # fmt: skip
    for i, single in enumerate(one):
        for k in ("cycles", "energy_pj_total", "power_mw"):
            assert float(ds[k].isel(clock_mhz=i).item()) == float(single[k].item()), k
    assert float(ds["power_mw"].isel(clock_mhz=1).item()) > float(ds["power_mw"].isel(clock_mhz=0).item())
    ds = rfmodel.evaluate(
        "baseline",
        "saxpy",
        "fermi-gtx480",
        method="simulate",
        max_warps=8,
        params={"bank_width_bits": [512, 1024]},
    )
    area = ds["area_mm2_total"].values.ravel()
    assert area[0] < area[1]


def test_the_analytic_engine_refuses_banks_narrower_than_a_warp_register(tmp_path, capsys):
    """At 512 bits a warp register takes two rows: the simulator doubled the bank reads and halved the
    IPC, the analytic engine priced a narrower access and changed nothing else."""
    assert main(["spec", "show", "fermi-gtx480"]) == 0
    spec = tmp_path / "narrow.toml"
    spec.write_text(capsys.readouterr().out.replace("bank_width_bits = 1024", "bank_width_bits = 512"))
    with pytest.raises(RfmodelError, match="takes 2 rows"):
        rfmodel.evaluate("baseline", "saxpy", str(spec))
    assert "takes 2 rows" in run_cli(["evaluate", "--workload", "saxpy", "--gpu", spec], capsys)


def test_two_references_to_one_kernel_are_refused(capsys):
    """A shipped name and a listing of the same kernel gave two rows named alike, the provenance of one
    lost (attrs['trace_source'] held one entry)."""
    from rfmodel.workload.suite import builtin_sass_path

    listing = str(builtin_sass_path("saxpy", "sm_80"))
    with pytest.raises(RfmodelError, match="both named 'saxpy'"):
        rfmodel.evaluate("baseline", ["saxpy", listing], "volta-v100", max_warps=8)


#: an input array of 40 GB
_HUGE_X = '[arrays.x]\ndtype = "float32"\nshape = [100000, 100000]'


def _user_recipe(tmp_path, edit=lambda t: t) -> tuple[str, str]:
    """The docs' worked example (docs/examples/user_kernel) copied to ``tmp_path`` with its recipe edited:
    ``(listing reference, recipe path)``; the inputs are made as the example makes them."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "docs/examples/user_kernel"
    for f in src.iterdir():
        shutil.copy(f, tmp_path / f.name)
    subprocess.run([sys.executable, "make_inputs.py"], cwd=tmp_path, check=True, capture_output=True)
    recipe = tmp_path / "r.toml"
    recipe.write_text(edit((tmp_path / "axpby.toml").read_text()))
    return f"{tmp_path / 'axpby.sm_80.sass'}:axpby", str(recipe)


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda t: t.replace("value = 5000}", "value = 99999999999}"), "outside i32's range"),
        (lambda t: t.replace("value = 1.5}", "value = 1e300}"), "outside f32's range"),
        (lambda t: t.replace('array = "x"}', 'array = "x", value = 5}'), "give no value"),
        (lambda t: t.replace('kernel = "axpby"', 'kernel = "other"'), "is for kernel 'other'"),
        (lambda t: t.replace("grid = [20]", "grid = [1, 70000]"), "CUDA's grid"),
        (lambda t: t.replace('[arrays.x]\nfile = "x.npy"', _HUGE_X), "GiB together"),
    ],
)
def test_a_recipe_the_executor_cannot_launch_is_one_error(tmp_path, capsys, edit, needle):
    """Values beyond a parameter's type, a pointer given a value, a recipe of another kernel, a grid beyond
    CUDA's or arrays beyond memory: tracebacks (OverflowError, MemoryError) or silently run before."""
    ref, recipe = _user_recipe(tmp_path, edit)
    assert needle in run_cli(["workload", "execute", ref, "--recipe", recipe], capsys)


def test_a_recipe_sets_the_shared_memory_and_checks_only_what_it_expects(tmp_path, capsys):
    """The recipe's shared_bytes reached the executor but not the trace's occupancy (64 resident warps at
    60 KB a CTA); an output without [expect] made --check a KeyError."""
    ref, recipe = _user_recipe(tmp_path, lambda t: t.replace('outputs = ["y"]', 'outputs = ["x", "y"]'))
    assert main(["workload", "execute", ref, "--recipe", recipe, "--check"]) == 0
    capsys.readouterr()
    _, wide = _user_recipe(tmp_path, lambda t: t.replace("grid = [20]", "grid = [1600]"))  # 20 CTAs an SM
    plain = rfmodel.evaluate("baseline", ref, "volta-v100", recipe=wide)
    _, big = _user_recipe(tmp_path, lambda t: t.replace("grid = [20]", "grid = [1600]\nshared_bytes = 60000"))
    shared = rfmodel.evaluate("baseline", ref, "volta-v100", recipe=big)
    assert float(shared["warps"].item()) < float(plain["warps"].item())
    _, huge = _user_recipe(
        tmp_path, lambda t: t.replace("grid = [20]", "grid = [20]\nshared_bytes = 10000000")
    )
    with pytest.raises(RfmodelError, match="shared memory"):
        rfmodel.evaluate("baseline", ref, "volta-v100", recipe=huge)


def test_a_folder_named_like_a_shipped_kernel_is_not_taken_for_it(tmp_path, capsys, monkeypatch):
    """A folder ``saxpy`` in the working folder silently replaced the shipped kernel (as an Accel-Sim trace),
    where a file of that name was ignored."""
    (tmp_path / "saxpy").mkdir()
    monkeypatch.chdir(tmp_path)
    assert "./saxpy for the file or folder" in run_cli(["evaluate", "--workload", "saxpy"], capsys)
    ds = rfmodel.evaluate("baseline", "expand:saxpy", "fermi-gtx480", max_warps=4)
    assert ds.attrs["trace_source"] == '{"expand:saxpy": "expand"}'


def test_a_failed_output_set_puts_back_the_files_it_replaced(tmp_path):
    """A member that could not be renamed into place removed the members renamed before it, and with them
    the earlier run's files they had replaced (a calibration file lost to a report path that was a
    folder)."""
    from rfmodel.io import output_set, write_text

    old, new, blocked = tmp_path / "cal.json", tmp_path / "new.json", tmp_path / "report"
    old.write_text("earlier run")
    blocked.mkdir()
    with pytest.raises(RfmodelError, match="report"):
        with output_set([old, new, blocked]):
            write_text(old, "this run")
            write_text(new, "this run")
            write_text(blocked, "this run")
    assert old.read_text() == "earlier run" and not new.exists() and blocked.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.json", "report"]  # no temporary left
    with output_set([old, new]):
        write_text(old, "this run")
        write_text(new, "this run")
    assert old.read_text() == new.read_text() == "this run"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.json", "new.json", "report"]


def test_calibrate_refuses_one_path_for_two_of_its_files(tmp_path, capsys):
    """--out and --report at one path wrote the report over the calibration, and said it succeeded."""
    args = tiny_calibrate_args(tmp_path, [{}], "a.json")
    assert "name each its own" in run_cli(args, capsys)
    assert not (tmp_path / "a.json").exists()


def test_a_calibration_file_and_monte_carlo_settings_reach_evaluate_from_the_command_line(tmp_path, capsys):
    """calibrate's help sent its file to --config's 'calibration', which the config refused as an unknown
    key (as it did 'samples' and 'uncertainty', which the command then read from it)."""
    ds = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", calibration=False)
    want = float(ds["ipc"].item())
    cal = tmp_path / "none.json"
    cal.write_text(json.dumps({"designs": {}}))
    for extra, cfg in (([f"--calibration={cal}"], ""), ([], f'calibration = "{cal}"\n')):
        (tmp_path / "c.toml").write_text(cfg + 'gpu = "fermi-gtx480"\n')
        assert (
            main(["evaluate", "--workload", "saxpy", "--config", tmp_path / "c.toml", "--json", *extra]) == 0
        )
        out = json.loads(capsys.readouterr().out)
        assert out["rows"][0]["ipc"] == pytest.approx(want, rel=1e-9)
    (tmp_path / "c.toml").write_text(
        'method = "montecarlo"\nsamples = 3\n[uncertainty]\nmem_fraction = ["normal", 0.1]\n'
    )
    assert main(["evaluate", "--workload", "saxpy", "--config", tmp_path / "c.toml", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attrs"]["samples"] == "3"


def test_workload_info_names_the_opcodes_it_classed_by_their_names(tmp_path, capsys):
    """An opcode the tables do not know is classed by its name's letters (FOOBAR as fp32): evaluate and info
    said nothing of it."""
    from rfmodel.workload.suite import builtin_sass_path

    text = builtin_sass_path("saxpy", "sm_80", "cuobjdump").read_text()
    listing = tmp_path / "odd.sass"
    listing.write_text(text.replace("IMAD R3, R3, c[0x0][0x0], R0 ;", "FOOBAR R3, R3, c[0x0][0x0], R0 ;", 1))
    assert main(["workload", "info", str(listing), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["unknown_opcodes"] == [{"instruction": 3, "opcode": "FOOBAR", "classed_as": "fp32"}]
    assert main(["workload", "info", str(builtin_sass_path("saxpy", "sm_80", "cuobjdump")), "--json"]) == 0
    assert "unknown_opcodes" not in json.loads(capsys.readouterr().out)
    # evaluate says so too, in both engines: an attribute of the result and a note on stderr
    for method in ("analytic", "simulate"):
        assert main(["evaluate", "--workload", str(listing), "--method", method, "--json"]) == 0
        cap = capsys.readouterr()
        classed = json.loads(json.loads(cap.out)["attrs"]["opcodes_classed_by_name"])
        assert classed == {"saxpy": [[3, "FOOBAR", "fp32"]]}
        note = "saxpy: opcodes the SASS table does not know, classed by their names: FOOBAR (instruction 3)"
        assert note in cap.err
    assert main(["evaluate", "--workload", "saxpy", "--json"]) == 0
    assert "opcodes_classed_by_name" not in json.loads(capsys.readouterr().out)["attrs"]


def test_calibrate_says_when_simulations_failed_and_refuses_sweeps_that_would_fail_them_all(tmp_path, capsys):
    """A failed point was left out of the fit with exit 0 and a word only in the report; a sweep with
    max_warps 0, a negative seed or a point twice ran (or repeated) every job before."""
    args = tiny_calibrate_args(tmp_path, [{}, {"num_banks": 8}, {"num_banks": 0}], "report.json")
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "simulations failed and were left out of the fit" in captured.err
    assert "free coefficients: they are not identified" in captured.err  # 2 records, 10 coefficients
    assert json.loads(captured.out)["failed"] >= 1
    from test_calibrate import TINY

    from rfmodel.calibrate import check_sweep

    for bad, needle in (
        ({"max_warps": 0}, "'max_warps' = 0"),
        ({"seed": -1}, "'seed' = -1"),
        ({"points": [{}, {}]}, "'points' lists {} twice"),
        ({"gpus": ["fermi-gtx480", "fermi-gtx480"]}, "twice"),
    ):
        with pytest.raises(RfmodelError, match=needle):
            check_sweep({**TINY, "workloads": ["saxpy"], "points": [{}], **bad})


def test_a_main_cell_given_twice_is_refused(tmp_path, capsys):
    """[tech] main_cell beside --param main_cell ran the parameter's cell and recorded the other."""
    with pytest.raises(RfmodelError, match="give it once"):
        rfmodel.evaluate("baseline", "saxpy", params={"main_cell": ["dwm"]}, tech={"main_cell": "tfet"})
    (tmp_path / "c.toml").write_text('[tech]\nmain_cell = "tfet"\n')
    args = ["evaluate", "--workload", "saxpy", "--config", tmp_path / "c.toml", "--param", "main_cell=dwm"]
    assert "give it once" in run_cli(args, capsys)


def test_technology_values_of_the_wrong_kind_are_refused():
    """tech={'node_nm': '32'} ran and was recorded as the string."""
    with pytest.raises(RfmodelError, match="expected a number"):
        rfmodel.evaluate("baseline", "saxpy", tech={"node_nm": "32"})
    with pytest.raises(RfmodelError, match="expected a cell name"):
        rfmodel.evaluate("baseline", "saxpy", tech={"cell": 3})
    ds = rfmodel.evaluate("baseline", "saxpy", tech={"node_nm": np.int64(32)})
    assert json.loads(ds.attrs["tech"])["node_nm"] == 32


def test_a_seed_nothing_draws_from_is_refused():
    """An Accel-Sim trace is fixed: a seed given with it was taken and changed nothing."""
    from helpers_reference import reference_or_skip

    trace = str(reference_or_skip("accelsim-traces", "synthetic", "tiny"))
    with pytest.raises(RfmodelError, match="seed 3: no workload draws from it"):
        rfmodel.evaluate("baseline", trace, "fermi-gtx480", seed=3)
    with pytest.raises(RfmodelError, match="seed 3"):
        rfmodel.evaluate("baseline", trace, "fermi-gtx480", method="simulate", seed=3)
    # beside a kernel whose trace is drawn, or for Monte-Carlo's draws, it is taken
    rfmodel.evaluate("baseline", [trace, "synthetic:fp-heavy"], "fermi-gtx480", seed=3, max_warps=4)
    mc = rfmodel.evaluate("baseline", trace, "fermi-gtx480", method="montecarlo", seed=3, samples=4,
                          uncertainty={"mem_fraction": ("normal", 0.1)})  # fmt: skip
    assert mc.attrs["seed"] == 3


@pytest.mark.parametrize(
    "args",
    [
        ["caching", "--quick", "--tol", "2"],
        ["caching", "--quick", "--hi", "0.5"],
        ["caching", "--quick", "--resolution", "0"],
        ["corf", "--quick", "--max-warps", "0"],
        ["cerf", "--quick", "--max-warps", "-1"],
    ],
)
def test_study_options_are_checked_before_the_runs(args, tmp_path, capsys):
    """study caching --tol 2 ran its 120 simulations, then refused the value (124 lines, runs.jsonl left)."""
    out = tmp_path / "st"
    assert "argument --" in run_cli(["study", *args, "--out", out], capsys)
    assert not out.exists()


def test_a_calibration_file_with_the_simulator_is_refused(capsys):
    """The simulator reads no coefficients: --calibration (even a missing file) was taken with exit 0."""
    args = ["evaluate", "--workload", "saxpy", "--method", "simulate", "--calibration", "/nonexist.json"]
    assert "reads none" in run_cli(args, capsys)


def test_sm_fields_are_checked_as_the_points_set_them(capsys):
    """regs_per_sm 4096 was checked beside the GPU's own max_regs_per_thread (255), not beside the 64 its
    point gives it: points mode refused a combination it never forms, naming the wrong cause."""
    params = {"regs_per_sm": [4096, 65536], "max_regs_per_thread": [64, 255]}
    ds = rfmodel.evaluate(
        "baseline", "saxpy", "volta-v100", params=params, mode="points", method="simulate", max_warps=4
    )
    assert ds.sizes["point"] == 2 and float(ds["ipc"].isel(point=1).item()) > 0
    with pytest.raises(RfmodelError, match="'max_regs_per_thread' = 255 is invalid"):  # (4096, 255) is formed
        rfmodel.evaluate("baseline", "saxpy", "volta-v100", params=params)
