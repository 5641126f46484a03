"""Bad input gives one clear error (exit 2 in the CLI, one line on stderr, no traceback), never a traceback
or a silent wrong answer: one named test per case found by trying rfmodel as a new user would."""

from __future__ import annotations

import json
import os

import pytest

import rfmodel
from rfmodel.cli import main
from rfmodel.errors import RfmodelError


def run_cli(args, capsys) -> str:
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("rfmodel: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_non_utf8_config_file(tmp_path, capsys):
    f = tmp_path / "l.toml"
    f.write_bytes(b'name = "caf\xe9"\n')
    assert "not UTF-8" in run_cli(["evaluate", "--config", f], capsys)


def test_non_utf8_sweep_and_technology_data(tmp_path, capsys):
    f = tmp_path / "s.json"
    f.write_bytes(b"\xff\xfe{}")
    assert "not UTF-8" in run_cli(["calibrate", "--sweep", f, "--out", tmp_path / "a.json"], capsys)
    query = ["tech", "query", "--cell", "sram-hp", "--node", "45", "--capacity-kb", "16",
             "--width-bits", "128"]  # fmt: skip
    assert "not UTF-8" in run_cli([*query, "--data", f], capsys)


@pytest.mark.parametrize(("sweep", "needle"), [
    ({"name": "x"}, "missing key 'gpus'"),
    ({"gpus": ["fermi-gtx480"], "workloads": 5, "points": [{}]}, "'workloads'"),
    ({"gpus": ["fermi-gtx480"], "workloads": ["saxpy"], "points": [{}], "gpu": 1}, "unknown key 'gpu'"),
    ([1, 2], "JSON object"),
])  # fmt: skip
def test_malformed_sweep(tmp_path, capsys, sweep, needle):
    f = tmp_path / "s.json"
    f.write_text(json.dumps(sweep))
    out = tmp_path / "a.json"
    assert needle in run_cli(["calibrate", "--sweep", f, "--out", out], capsys)
    assert not out.exists()


def test_device_or_pipe_as_input_file(tmp_path, capsys):
    # /dev/zero was read until memory ran out (workload info, evaluate, simulate): a device or pipe is refused
    for args in (["workload", "info", "/dev/zero"], ["simulate", "--workload", "/dev/zero"],
                 ["evaluate", "--config", "/dev/zero"]):  # fmt: skip
        assert "not a regular file" in run_cli(args, capsys)
    fifo = tmp_path / "pipe.sass"
    os.mkfifo(fifo)
    assert "not a regular file" in run_cli(["evaluate", "--workload", fifo], capsys)


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


@pytest.mark.parametrize(("value", "needle"), [
    ("99999999999999999999999", "out of range"), ("nan", "not a finite number"),
    ("inf", "not a finite number"), ("-3", "main_rf_latency_x"),
])  # fmt: skip
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
    assert "resolution" in run_cli(["tolerance", "--design", "rfc", "--workload", "saxpy", "--method",
                                    "analytic", "--resolution", "1e-300"], capsys)  # fmt: skip
    from rfmodel.tolerance import bisect_tolerance

    # the bisection also stops when the interval cannot be split any more
    res = bisect_tolerance(lambda x: 1.0 if x <= 2.0 else 0.0, 1.0, hi=4.0, resolution=1e-6)
    assert abs(res["latency_x"] - 2.0) < 1e-5


@pytest.mark.parametrize("args", [
    ["evaluate", "--workload", "saxpy", "--method", "montecarlo", "--samples", "1000000000"],
    ["evaluate", "--workload", "saxpy", "--param", "num_banks=" + ",".join(["16"] * 2100),
     "--param", "regs_per_sm=" + ",".join(["32768"] * 2100)],
    ["simulate", "--workload", "saxpy", "--param", "num_banks=" + ",".join(["16"] * 400),
     "--param", "collector_units=" + ",".join(["8"] * 400)],
    ["optimize", "--pop", "1000000", "--quiet"],
])  # fmt: skip
def test_requests_beyond_the_bounds_are_refused_before_they_run(args, capsys, tmp_path):
    if args[0] == "optimize":
        args = [*args, "--out", str(tmp_path / "o")]
    assert "at most" in run_cli(args, capsys)


SIZE = "Cache size                    : "


@pytest.mark.parametrize(("field", "bad"), [(SIZE + "16384", SIZE + "0"),
                                            ("Technology size (nm): 32", "Technology size (nm): -32")])
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
    args = ["calibrate", "--sweep", f, "--workers", "1", "--design", "baseline", "--out", out,
            "--checkpoints", tmp_path / "ck", "--report", tmp_path / "r.json", "--quiet"]  # fmt: skip
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


def test_every_sm_field_in_a_grid_changes_the_analytic_model_or_is_refused(capsys):
    """dram_latency_cycles used to be ignored by the analytic engine (identical rows from 0 to 10,000)."""
    ipc = [float(rfmodel.evaluate("baseline", "saxpy", params={"dram_latency_cycles": [v]})["ipc"].item())
           for v in (100, 500, 2000)]  # fmt: skip
    assert ipc[0] > ipc[1] > ipc[2]
    err = run_cli(["evaluate", "--workload", "saxpy", "--param", "dram_latency_cycles=100,500"], capsys)
    assert "one value of it per call" in err
    s = rfmodel.sensitivity("baseline", "saxpy", param="dram_latency_cycles", metrics=("ipc",))
    assert float(s["d_ipc"].item()) < 0


@pytest.mark.parametrize("spec", ["normal:nan", "normal:-1", "uniform:1.5", "lognormal:inf"])
def test_bad_uncertainty_widths(capsys, spec):
    err = run_cli(["evaluate", "--workload", "saxpy", "--method", "montecarlo", "--samples", "10",
                   "--uncertainty", f"mem_fraction={spec}"], capsys)  # fmt: skip
    assert "mem_fraction" in err


def test_export_accelsim_needs_at_least_one_sm(tmp_path, capsys):
    args = ["workload", "export-accelsim", "saxpy", tmp_path / "ex", "--num-sms", "0"]
    assert "num_sms" in run_cli(args, capsys)
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

    proc = subprocess.Popen([sys.executable, "-m", "rfmodel.cli", "workload", "info", "saxpy"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    proc.stdout.close()  # before the child has started writing
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err.decode()
    assert b"Traceback" not in err and b"BrokenPipeError" not in err
