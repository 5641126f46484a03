"""The search across designs and main-RF cells: a real front, checked against the exhaustive one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers_cli import small_search
from helpers_workers import warning_job

from rfmodel.errors import RfmodelError
from rfmodel.optimize import Constraint, Objective, Variable, optimize, pareto_table
from rfmodel.optimize.problem import default_design_params, design_space, design_variable

WLS = ["synthetic:register-sensitive", "saxpy"]
#: a space small enough to enumerate: two designs, three cells, two SM fields
SMALL = (
    Variable("num_banks", (4, 8, 16, 32)),
    Variable("regs_per_sm", tuple(range(16384, 131072 + 1, 8192))),
)
CELLS = ("sram-hp", "tfet", "dwm")
#: a search on one cell over the SM fields alone (no design parameters), without the exhaustive front
ONE_CELL = dict(cells=("sram-hp",), design_params=(), brute_force=False)


def _dominated(f: np.ndarray) -> np.ndarray:
    return np.array([(np.all(f <= f[i], axis=1) & np.any(f < f[i], axis=1)).any() for i in range(len(f))])


def test_joint_front_over_designs_and_cells_is_nondominated_and_near_the_exhaustive_one():
    calls = []
    res = optimize(
        ["baseline", "bow"],
        WLS,
        "fermi-gtx480",
        space=SMALL,
        cells=CELLS,
        design_params=(),
        pop_size=24,
        generations=15,
        seed=1,
        progress=lambda g, n, **info: calls.append((g, n, info)),
    )
    # first each workload's profile made ready (its own phase), then the search
    ready = [c for c in calls if c[2].get("phase") == "profiles"]
    assert [(g, n, c["workload"]) for g, n, c in ready] == [(i, len(WLS), w) for i, w in enumerate(WLS)]
    assert calls[: len(ready)] == ready
    calls = calls[len(ready) :]
    assert calls[-1][:2] == (30, 30)  # 15 generations of each of the two islands
    # the evaluation count never falls and ends at the run's; the last call names the finished islands
    counts = [c[2]["evaluations"] for c in calls]
    assert counts == sorted(counts) and counts[-1] == res.evaluations
    assert calls[-1][2]["islands"] == "2/2" and calls[-1][2]["front"] >= 1
    # the live hypervolume: of the finished islands' front, in its own bounds (so at most 1.1^m)
    assert 0 < calls[-1][2]["hv"] <= 1.1 ** len(res.objectives)
    rows = pareto_table(res.pareto)
    assert {r["design"] for r in rows} == {"baseline", "bow"}
    assert len({r["main_cell"] for r in rows}) >= 2
    objs = res.objectives
    f = np.array([[o.sign * r[o.name] for o in objs] for r in rows])
    assert not _dominated(f).any()
    # the exhaustive front: 2 designs x 4 x 15 x 3 points, every one evaluated
    bf = res.brute_force
    assert bf is not None and bf.sizes["point"] >= 3
    fb = np.stack([o.sign * bf[o.name].values for o in objs], axis=1)
    assert not _dominated(fb).any()
    assert res.hypervolume_ratio >= 0.99, res.hypervolume_ratio
    assert res.pareto.attrs["hypervolume_ratio"] == pytest.approx(res.hypervolume_ratio)
    # the front of a growing set of points: its hypervolume never falls, and ends at the front's
    hv = np.asarray(res.hypervolume_by_generation)
    assert len(hv) == 15 and np.all(np.diff(hv) >= -1e-12)
    assert hv[-1] == pytest.approx(res.hypervolume, rel=1e-9)


def test_default_objectives_follow_the_mission_and_capacity_is_the_registers():
    res = optimize("baseline", ["saxpy"], "fermi-gtx480", space=SMALL, pop_size=8, generations=2, **ONE_CELL)
    names = [str(o) for o in res.objectives]
    assert names == ["capacity_kb:max", "area_mm2:min", "power_mw:min", "time_ns:min"]
    for r in pareto_table(res.pareto):
        assert r["capacity_kb"] == r["regs_per_sm"] * 4 / 1024
        assert r["time_ns"] > 0 and r["main_rf_read_cycles"] == 1


def test_same_seed_same_front():
    kw = dict(
        space=SMALL[:1], cells=CELLS, design_params=(), pop_size=8, generations=3, seed=7, brute_force=False
    )
    a = optimize(["baseline", "rfc"], WLS[:1], "fermi-gtx480", **kw)
    b = optimize(["baseline", "rfc"], WLS[:1], "fermi-gtx480", **kw)
    assert pareto_table(a.pareto) == pareto_table(b.pareto)


def test_constraints_by_name_hold_on_the_front():
    res = optimize(
        ["baseline", "malekeh"],
        ["saxpy"],
        "fermi-gtx480",
        space=SMALL,
        cells=CELLS,
        design_params=(),
        objectives=["ipc:max", "area_mm2:min"],
        constraints=["area_mm2<=2.0", "ipc>=0.9*baseline"],
        pop_size=12,
        generations=4,
        brute_force=False,
    )
    ref = float(res.pareto.attrs["reference"].split("=")[1])
    rows = pareto_table(res.pareto)
    assert rows
    assert all(r["area_mm2"] <= 2.0 and r["ipc"] >= 0.9 * ref for r in rows)
    assert rows == sorted(rows, key=lambda r: -r["ipc"])  # best first objective first


def test_objective_and_constraint_parsing():
    assert Objective.parse("time_ns:min") == Objective("time_ns", "min")
    assert Objective.parse("capacity_kb:max").sign == -1.0
    c = Constraint.parse("ipc >= 0.95*baseline")
    assert (c.name, c.op, c.value, c.relative) == ("ipc", ">=", 0.95, True)
    assert c.violation(np.array([1.0, 0.5, np.nan]), 1.0) == pytest.approx([-0.05, 0.45, 1e30])
    for bad in ("time_ns:fast", "1x:min"):
        with pytest.raises(RfmodelError, match="objective"):
            Objective.parse(bad)
    for bad in ("area_mm2<1.5", "ipc>=nan", "ipc>=x*baseline"):
        with pytest.raises(RfmodelError, match="constraint"):
            Constraint.parse(bad)
    with pytest.raises(RfmodelError, match="at least two"):
        optimize("baseline", ["saxpy"], objectives=["ipc:max"])
    with pytest.raises(RfmodelError, match="algorithm"):
        optimize("baseline", ["saxpy"], algorithm="random")
    with pytest.raises(RfmodelError, match="not a cell"):
        optimize("baseline", ["saxpy"], cells=("sram-hp", "unobtainium"))


def test_each_design_searches_its_declared_parameters_and_the_cell():
    from rfmodel.designs.base import get_design

    v = design_variable("rfc", "rfc_kb")
    lo, hi = get_design("rfc").Params.field_info("rfc_kb").bounds
    assert v.values[0] == lo and v.values[-1] == hi and len(v.values) <= 18
    assert list(v.values) == sorted(v.values)
    assert design_variable("rfc", "rfc_policy").values == (0, 1)
    with pytest.raises(RfmodelError, match="no parameter"):
        design_variable("rfc", "window")
    # defaults: not the latency override, the seed, the compiler pass's parameters, nor wide tuning ranges
    rfc = default_design_params("rfc")
    assert "rfc_kb" in rfc and "main_rf_latency_x" not in rfc
    assert "regs_per_interval" not in default_design_params("ltrf")  # a compiler-pass parameter
    assert "rthld" not in default_design_params("malekeh") and "seed" not in default_design_params("malekeh")
    names = [x.name for x in design_space("bow", SMALL, CELLS)]
    assert names == ["num_banks", "regs_per_sm", "main_cell", "window", "write_bypass"]
    res = optimize(
        "rfc",
        ["saxpy"],
        "maxwell-ltrf",
        space=(),
        cells=("sram-hp",),
        design_params=("rfc_kb",),
        pop_size=8,
        generations=2,
        brute_force=False,
    )
    rows = pareto_table(res.pareto)
    assert rows and all(r["rfc_kb"] in v.values for r in rows)
    assert "rfc_kb=" in res.pareto.attrs["space"]


# ----------------------------------------------------------------------------- runners, checkpoints
RUN = dict(
    space=SMALL,
    cells=("sram-hp", "dwm"),
    design_params=(),
    pop_size=8,
    generations=4,
    seed=3,
    brute_force=False,
)


def test_process_runner_gives_the_serial_front(monkeypatch):
    import rfmodel.optimize.problem as problem
    from rfmodel.runner import ProcessRunner, make_runner

    serial = optimize(["baseline", "rfc"], ["saxpy"], "fermi-gtx480", **RUN)
    heard = []
    monkeypatch.setattr(problem, "_fixed_point_cached", lambda: False)  # as on a first run
    procs = optimize(
        ["baseline", "rfc"],
        ["saxpy"],
        "fermi-gtx480",
        runner=ProcessRunner(2),
        progress=lambda done, total=None, phase=None, **info: heard.append((phase, info.get("design"))),
        **RUN,
    )
    assert pareto_table(procs.pareto) == pareto_table(serial.pareto)
    assert procs.evaluations == serial.evaluations
    # before the workers start, this process runs each island's model once (the workers then load the
    # compiled code from numba's cache instead of each compiling it); not where the cache holds it
    assert [d for p, d in heard if p == "compiling"] == ["baseline", "rfc"]
    monkeypatch.setattr(problem, "_fixed_point_cached", lambda: True)
    heard.clear()
    again = optimize(
        ["baseline"],
        ["saxpy"],
        "fermi-gtx480",
        runner=ProcessRunner(2),
        progress=lambda done, total=None, phase=None, **info: heard.append(phase),
        **RUN,
    )
    assert "compiling" not in heard and again.evaluations > 0
    # this process has computed hypervolumes (an OpenMP library): a new worker must still start (two of
    # them, each spawned anew: test_process_runner_starts_new_workers_after_hypervolumes, under -m slow)
    from rfmodel.optimize.validate import validate

    assert len(validate(procs, 2, runner=ProcessRunner(1))) == 2
    assert str(make_runner()) == "serial" and str(make_runner(workers=2)) == "2 local processes"
    with pytest.raises(RfmodelError, match="workers"):
        make_runner(workers=0)
    with pytest.raises(RfmodelError, match="Dask scheduler"):
        make_runner(scheduler="tcp://127.0.0.1:1")


@pytest.mark.slow
def test_process_runner_starts_new_workers_after_hypervolumes():
    """Two fresh workers (spawned interpreters) validate a front after this process has computed
    hypervolumes (an OpenMP library), each point's rows back in their place."""
    from rfmodel.optimize.validate import validate
    from rfmodel.runner import ProcessRunner, SerialRunner

    res = optimize(["baseline", "rfc"], ["saxpy"], "fermi-gtx480", **RUN)
    rows = validate(res, 2, runner=ProcessRunner(2))
    assert len(rows) == 2
    assert rows == validate(res, 2, runner=SerialRunner())


def test_worker_warnings_are_said_once_by_the_caller():
    """Each worker process used to print the engines' notes itself (the register-limit note four times in
    a default optimize); now they come back with the results and the caller says each once."""
    import warnings

    from rfmodel import runner as rn

    rn._RELAYED.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = dict(rn.ProcessRunner(2).run(warning_job, range(6)))
    assert out == {i: 2 * i for i in range(6)}
    said = [(w.category, str(w.message)) for w in caught]
    assert said.count((UserWarning, "a note every job gives")) == 1
    assert said.count((RuntimeWarning, "a note of parity 0")) == 1
    assert said.count((RuntimeWarning, "a note of parity 1")) == 1


@pytest.mark.slow
def test_dask_runners_give_the_serial_front():
    from distributed import Client, LocalCluster

    from rfmodel.runner import DaskRunner, make_runner

    serial = optimize(["baseline", "rfc"], ["saxpy"], "fermi-gtx480", **RUN)
    kw = dict(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    with LocalCluster(**kw) as cluster:
        with Client(cluster) as client:
            dask = optimize(["baseline", "rfc"], ["saxpy"], "fermi-gtx480", runner=DaskRunner(client), **RUN)
        # as the command line's --scheduler ADDRESS does
        by_address = optimize(
            ["baseline", "rfc"],
            ["saxpy"],
            "fermi-gtx480",
            runner=make_runner(scheduler=cluster.scheduler_address),
            **RUN,
        )
    assert pareto_table(dask.pareto) == pareto_table(serial.pareto) == pareto_table(by_address.pareto)


def test_a_finished_checkpoint_is_the_run_and_a_foreign_one_starts_over(tmp_path):
    a = optimize(["baseline"], ["saxpy"], "fermi-gtx480", checkpoint=tmp_path, **RUN)
    again = optimize(["baseline"], ["saxpy"], "fermi-gtx480", checkpoint=tmp_path, resume=True, **RUN)
    assert pareto_table(again.pareto) == pareto_table(a.pareto)
    assert again.evaluations == a.evaluations and again.history[0]["resumed_at"] == RUN["generations"]
    other = {**RUN, "seed": 4}
    with pytest.warns(UserWarning, match="different run"):
        b = optimize(["baseline"], ["saxpy"], "fermi-gtx480", checkpoint=tmp_path, resume=True, **other)
    assert b.history[0]["resumed_at"] == 0
    (tmp_path / "baseline.ckpt").write_bytes(b"not a checkpoint")  # damaged: refused, never guessed at
    with pytest.raises(RfmodelError, match="baseline.ckpt: not a readable rfmodel optimize checkpoint"):
        optimize(["baseline"], ["saxpy"], "fermi-gtx480", checkpoint=tmp_path, resume=True, **RUN)


def _checkpoint_at(tmp_path, generation, **kw):
    """A run's checkpoint as it was after ``generation`` (copied aside), and the finished run."""
    import shutil

    saved = tmp_path / "at" / "baseline.ckpt"
    saved.parent.mkdir()

    def copy(step, steps, **info):
        if step == generation and "phase" not in info:
            shutil.copy(tmp_path / "run" / "baseline.ckpt", saved)

    run = optimize(
        ["baseline"],
        ["saxpy"],
        "fermi-gtx480",
        checkpoint=tmp_path / "run",
        progress=copy,
        store=False,
        **{**RUN, **kw},
    )
    return saved, run


@pytest.mark.parametrize("algorithm", ["nsga3", "nsga2"])
def test_a_checkpoint_is_data_and_resumes_the_run_exactly(tmp_path, algorithm):
    """A checkpoint holds data only (the population, generation and random generator as numbers, with a
    format version and a checksum): resumed mid-run it reaches the front, evaluation count and archive of
    the run never stopped."""
    from rfmodel.datafile import read_checked
    from rfmodel.optimize.problem import CHECKPOINT_KIND, CHECKPOINT_VERSION

    saved, run = _checkpoint_at(tmp_path, 2, algorithm=algorithm)
    meta, arrays = read_checked(saved, CHECKPOINT_KIND, CHECKPOINT_VERSION)
    assert meta["n_iter"] == 3 and all(a.dtype != object for a in arrays.values())
    resumed = optimize(
        ["baseline"],
        ["saxpy"],
        "fermi-gtx480",
        checkpoint=saved.parent,
        resume=True,
        store=False,
        algorithm=algorithm,
        **RUN,
    )
    assert resumed.history[0]["resumed_at"] == 2
    assert pareto_table(resumed.pareto) == pareto_table(run.pareto)
    same = ("evaluations", "computed", "requested", "front")
    assert resumed.evaluations == run.evaluations
    assert [resumed.history[0][k] for k in same] == [run.history[0][k] for k in same]
    assert resumed.hypervolume_by_generation == run.hypervolume_by_generation


def test_resume_never_unpickles_a_checkpoint(tmp_path, capsys):
    """A checkpoint that would run code if unpickled (a pickle whose ``__reduce__`` writes a file) is refused
    with one error naming it, and its code never runs: through the API and ``rfmodel optimize --resume``."""
    import json
    import pickle

    from rfmodel.cli import main

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    out = tmp_path / "out"
    args = [*small_search(pop=8, generations=2), "--no-store", "--out", str(out)]
    assert main(args) == 0
    capsys.readouterr()
    ckpt = out / "checkpoint" / "baseline.ckpt"
    assert ckpt.is_file() and json.loads((out / "checkpoint" / "run.json").read_text())["pop"] == 8
    ckpt.write_bytes(pickle.dumps({"signature": "x", "algorithm": Payload()}))
    assert main(["optimize", "--resume", str(out), "--quiet", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rfmodel: error: cannot resume from ") and err.count("\n") == 1
    assert str(ckpt) in err and "not a readable rfmodel optimize checkpoint" in err
    with pytest.raises(RfmodelError, match="baseline.ckpt: not a readable"):
        optimize(["baseline"], ["saxpy"], "fermi-gtx480", checkpoint=out / "checkpoint", resume=True, **RUN)
    assert not marker.exists()


def test_a_checkpoint_that_fails_its_checksum_is_refused(tmp_path):
    """A checkpoint whose content was changed after it was written (one number of its population), or of
    another format version, is refused with one error naming the file and what is wrong."""
    import numpy as np

    from rfmodel.io import write_npz

    saved, _ = _checkpoint_at(tmp_path, 2)
    with np.load(saved, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays.pop("__meta__")))
    arrays["pop.F"] = arrays["pop.F"].copy()
    arrays["pop.F"][0, 0] += 1.0
    write_npz(saved, arrays, header)
    resume = dict(checkpoint=saved.parent, resume=True, store=False, **RUN)
    with pytest.raises(RfmodelError, match=r"baseline.ckpt: its checksum does not match its content"):
        optimize(["baseline"], ["saxpy"], "fermi-gtx480", **resume)
    arrays["pop.F"][0, 0] -= 1.0
    write_npz(saved, arrays, {**header, "version": 99})
    with pytest.raises(RfmodelError, match=r"baseline.ckpt: rfmodel optimize checkpoint format version 99"):
        optimize(["baseline"], ["saxpy"], "fermi-gtx480", **resume)


def test_the_evaluation_store_is_checked_data_and_a_damaged_one_is_modelled_again(tmp_path, monkeypatch):
    """The evaluation store is a checked data file (no pickle); a truncated or tampered store costs only the
    modelling it would have saved: the same front, its points modelled again."""
    import pickle

    import rfmodel.cache as cache
    from rfmodel.datafile import read_checked
    from rfmodel.optimize.problem import STORE_KIND, STORE_VERSION

    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_CHANGED", set())  # on, whatever package files change while the tests run
    monkeypatch.setattr(cache, "_LOADED_AT", float("inf"))
    first = optimize(["baseline"], ["saxpy"], "fermi-gtx480", **RUN)
    (store,) = (tmp_path / "evaluations").glob("*.npz")
    meta, arrays = read_checked(store, STORE_KIND, STORE_VERSION)
    assert len(arrays["x"]) == first.evaluations and not list((tmp_path / "evaluations").glob("*.pkl"))
    again = optimize(["baseline"], ["saxpy"], "fermi-gtx480", **RUN)
    assert again.computed == 0 and pareto_table(again.pareto) == pareto_table(first.pareto)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    for bad in (store.read_bytes()[:-100], pickle.dumps(Payload())):
        store.write_bytes(bad)
        redone = optimize(["baseline"], ["saxpy"], "fermi-gtx480", **RUN)
        assert redone.computed == first.evaluations
        assert pareto_table(redone.pareto) == pareto_table(first.pareto)
        assert not marker.exists()


@pytest.mark.slow
def test_kill_9_then_resume_reaches_the_same_front_and_evaluation_count(tmp_path):
    """With the default runner (one worker process per core): the workers die with the killed run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    args = [
        "optimize",
        "--quiet",
        "--design",
        "baseline",
        "--design",
        "bow",
        "--workload",
        "saxpy",
        "--cell",
        "sram-hp",
        "--cell",
        "dwm",
        "--pop",
        "8",
        "--generations",
        "60",
        "--no-brute-force",
    ]
    cmd = [sys.executable, "-m", "rfmodel.cli", *args]
    full = subprocess.run([*cmd, "--out", str(tmp_path / "full")], capture_output=True, text=True)
    assert full.returncode == 0, full.stderr
    killed = tmp_path / "killed"
    # a cache of its own: the killed run models its points instead of reading the full run's evaluation store
    env = {**os.environ, "RFMODEL_CACHE_DIR": str(tmp_path / "cache")}
    pipe = subprocess.PIPE
    proc = subprocess.Popen([*cmd, "--out", str(killed)], stdout=pipe, stderr=pipe, env=env)
    first = killed / "checkpoint" / "baseline.ckpt"
    deadline = time.time() + 120
    while not first.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (killed / "pareto.csv").exists()

    def ours():  # processes of the killed run (its worker processes carry its command line)
        out = []
        for p in Path("/proc").glob("[0-9]*"):
            try:
                if str(killed).encode() in (p / "cmdline").read_bytes():
                    out.append(p.name)
            except OSError:
                pass
        return out

    deadline = time.time() + 10
    while ours() and time.time() < deadline:
        time.sleep(0.05)
    assert not ours(), "the killed run's worker processes live on"
    resume = [sys.executable, "-m", "rfmodel.cli", "optimize", "--resume", str(killed), "--quiet"]
    resumed = subprocess.run(resume, capture_output=True, text=True, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert (killed / "pareto.csv").read_text() == (tmp_path / "full" / "pareto.csv").read_text()

    def count(out):
        line = [x for x in out.splitlines() if "evaluations in" in x][0]
        return line.split(";")[-1].split(" in ")[0]

    assert count(resumed.stdout) == count(full.stdout)


def test_validate_puts_the_simulator_beside_the_most_different_points():
    from rfmodel.optimize.validate import VALIDATED, most_different, validate

    f = np.array([[0.0, 1.0], [0.1, 0.9], [1.0, 0.0], [0.5, 0.5], [0.95, 0.05]])
    assert most_different(f, 3) == [0, 2, 3]  # the best first objective, its opposite end, the middle
    assert most_different(f, 9) == [0, 2, 3, 1, 4] and most_different(f[:0], 2) == []
    res = optimize(["baseline", "rfc"], ["saxpy"], "fermi-gtx480", **RUN)
    rows = validate(res, 2)
    assert len(rows) == 2 and {r["design"] for r in rows} <= {"baseline", "rfc"}
    for r in rows:
        for m in VALIDATED:
            a, s = r[f"analytic_{m}"], r[f"simulated_{m}"]
            assert a > 0 and s > 0 and r[f"error_{m}"] == pytest.approx((a - s) / s)
        assert 0.0 <= r["order_kept"] <= 1.0
        # the IPC effect against the baseline at the point's SM point, in both engines: none for the baseline
        assert np.isfinite(r["analytic_ipc_effect"]) and np.isfinite(r["simulated_ipc_effect"])
        assert r["error_ipc_effect_points"] == pytest.approx(
            100 * (r["analytic_ipc_effect"] - r["simulated_ipc_effect"])
        )
        if r["design"] == "baseline":
            assert r["analytic_ipc_effect"] == r["simulated_ipc_effect"] == 0.0
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.optimize.validate import reference_params

    # the reference keeps the SM fields, the collector units and the baseline's own parameters
    point = {"num_banks": 8, "collector_units": 4, "main_rf_latency_x": 3.0, "rfc_kb": 16, "active_warps": 4}
    assert reference_params(point, resolve_gpu("fermi-gtx480")) == {
        "num_banks": 8,
        "collector_units": 4,
        "main_rf_latency_x": 3.0,
        "active_warps": 4,
    }
    from rfmodel.optimize.validate import ranking_agreement

    # Kendall's tau of the two engines' orders: +1 for the same order, -1 reversed, NaN when undecided
    assert ranking_agreement([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert ranking_agreement([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert ranking_agreement([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert np.isnan(ranking_agreement([1.0], [2.0])) and np.isnan(ranking_agreement([1, 1], [1, 2]))
    t = ranking_agreement([r["analytic_time_ns"] for r in rows], [r["simulated_time_ns"] for r in rows])
    assert all(r["kendall_tau_time_ns"] == t or np.isnan(t) for r in rows)
    with pytest.raises(RfmodelError, match=r"in \[1, 1000\]"):
        validate(res, 0)
    # Fermi's collectors are typed sets: a point's collector_units is simulated as that many generic ones
    space = (Variable("collector_units", (2, 8, 16)), Variable("num_banks", (8, 16)))
    res = optimize("baseline", ["saxpy"], "fermi-gtx480", space=space, pop_size=4, generations=1, **ONE_CELL)
    row = validate(res, 1)[0]
    assert row["collectors"] == f"{row['collector_units']} generic" and row["simulated_ipc"] > 0


def test_a_seeded_run_repeats_when_its_population_holds_infeasible_points():
    """pymoo 0.6.2's NSGA-III breaks a tie of two equally infeasible points with an unseeded generator;
    the search uses its own tournament, so a space where most points cannot host a CTA still repeats."""
    space = (
        Variable("regs_per_sm", (2048, 3072, 4096, 6144, 8192, 12288, 65536)),
        Variable("num_banks", (4, 8, 16, 32)),
        Variable("collector_units", tuple(range(1, 33))),
    )
    kw = dict(
        space=space,
        cells=("sram-hp", "dwm", "tfet"),
        design_params=(),
        pop_size=12,
        generations=8,
        seed=5,
        brute_force=False,
    )
    runs = [optimize("baseline", ["gemm_regblock16x8", "saxpy"], "fermi-gtx480", **kw) for _ in range(3)]
    tables = [pareto_table(r.pareto) for r in runs]
    assert tables[0] == tables[1] == tables[2]
    assert all(r["regs_per_sm"] == 65536 for r in tables[0])  # the small files host no CTA of the GEMM


def test_a_robust_front_takes_each_objective_at_its_pessimistic_end():
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.optimize.problem import DEFAULT_OBJECTIVES, _Island

    sm = resolve_gpu("fermi-gtx480")
    space = design_space("baseline", SMALL, ("sram-hp", "dwm"), ())
    x = np.array([[0, 3, 0], [2, 10, 1], [3, 14, 0]])
    args = ("baseline", space, ["saxpy", "sgemm_tiled"], sm, DEFAULT_OBJECTIVES, (), {}, {})
    _, _, _, mean = _Island(*args).evaluate(x)
    _, _, _, worst = _Island(*args, {"mem_fraction": ("normal", 0.2)}, 16).evaluate(x)
    assert np.all(worst["time_ns"] > mean["time_ns"])  # slower at the 97.5 % quantile than on average
    assert np.array_equal(worst["capacity_kb"], mean["capacity_kb"])  # nothing uncertain about capacity
    assert np.allclose(worst["area_mm2"], mean["area_mm2"])
    res = optimize(
        "baseline", ["saxpy"], "fermi-gtx480", uncertainty={"mem_fraction": ("normal", 0.2)}, samples=8, **RUN
    )
    assert "pessimistic end" in res.pareto.attrs["engine"] and pareto_table(res.pareto)


def test_the_node_and_the_structures_cell_are_technology_variables():
    res = optimize(
        ["baseline", "rfc"],
        ["saxpy"],
        "fermi-gtx480",
        nodes=(22, 45),
        structure_cells=("sram-hp", "sram-lop"),
        **RUN,
    )
    rows = pareto_table(res.pareto)
    assert any(r["node_nm"] == 22 for r in rows)
    assert {r["structure_cell"] for r in rows} <= {"sram-hp", "sram-lop"}
    # the node changes area and power, never the cycles: one point at both nodes
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.optimize.problem import DEFAULT_OBJECTIVES, _Island

    space = design_space("rfc", SMALL, ("sram-hp",), (), nodes=(22, 45))
    assert [v.name for v in space] == ["num_banks", "regs_per_sm", "main_cell", "node_nm"]
    island = _Island("rfc", space, ["saxpy"], resolve_gpu("fermi-gtx480"), DEFAULT_OBJECTIVES, (), {}, {})
    _, _, params, v = island.evaluate(np.array([[2, 8, 0, 0], [2, 8, 0, 1]]))
    assert params["node_nm"].tolist() == [22, 45]
    assert v["time_ns"][0] == v["time_ns"][1] and v["area_mm2"][0] < v["area_mm2"][1]
    assert "node_nm=[22, 45]" in res.pareto.attrs["space"]
    with pytest.raises(RfmodelError, match="stt-ram at 65 nm"):
        optimize("baseline", ["saxpy"], "fermi-gtx480", nodes=(45, 65), **{**RUN, "cells": ("stt-ram",)})


def test_the_best_front_of_several_seeds_is_the_reference_of_a_space_too_large_to_enumerate():
    kw = {**RUN, "brute_force": True, "design_params": None}  # rfc's own parameters: far too many points
    one = optimize("rfc", ["saxpy"], "fermi-gtx480", **kw)
    assert one.hypervolume_ratio is None and "not computed" in one.pareto.attrs["hypervolume_brute_force"]
    res = optimize("rfc", ["saxpy"], "fermi-gtx480", reference_seeds=2, **kw)
    assert res.pareto.attrs["hypervolume_reference"] == "best of seeds 3..5"
    assert 0 < res.hypervolume_ratio <= 1.0 + 1e-12
    # the seeds' evaluations count too (each run evaluates a point it was asked for again only once)
    assert one.evaluations < res.evaluations <= 3 * RUN["pop_size"] * RUN["generations"]
    with pytest.raises(RfmodelError, match="reference_seeds"):
        optimize("rfc", ["saxpy"], reference_seeds=-1)


def test_a_point_asked_for_again_is_not_evaluated_again():
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.optimize.problem import DEFAULT_OBJECTIVES, _Island, _IslandProblem

    island = _Island(
        "baseline",
        design_space("baseline", SMALL, ("sram-hp",), ()),
        ["saxpy"],
        resolve_gpu("fermi-gtx480"),
        DEFAULT_OBJECTIVES,
        (),
        {},
        {},
    )
    p = _IslandProblem(island)
    x = np.array([[0, 1, 0], [1, 2, 0], [0, 1, 0]])
    out1, out2 = {}, {}
    p._evaluate(x, out1)
    assert (p.evaluations, p.requested) == (2, 3)  # the repeated row once
    p._evaluate(x[::-1], out2)
    assert (p.evaluations, p.requested) == (2, 6)  # all from the cache
    assert np.array_equal(out2["F"], out1["F"][::-1]) and np.array_equal(out1["F"][0], out1["F"][2])


def test_the_evaluation_store_answers_a_repeated_run_and_only_an_identical_one(tmp_path, monkeypatch):
    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path / "cache"))
    first = optimize(["baseline"], ["saxpy"], "fermi-gtx480", **RUN)
    assert first.computed == first.evaluations > 0
    stores = list((tmp_path / "cache" / "evaluations").glob("*.npz"))
    assert len(stores) == 1
    # the same run again models nothing and finds the same front, bit for bit
    again = optimize(["baseline"], ["saxpy"], "fermi-gtx480", **RUN)
    assert (again.computed, again.evaluations) == (0, first.evaluations)
    assert pareto_table(again.pareto) == pareto_table(first.pareto)
    # another seed asks for other points too: those it shares with the store are not modelled again
    other = optimize(["baseline"], ["saxpy"], "fermi-gtx480", **{**RUN, "seed": 7})
    assert 0 < other.computed < other.evaluations
    # other inputs (a constraint) have a store of their own
    constrained = optimize(["baseline"], ["saxpy"], "fermi-gtx480", constraints=("area_mm2<=100",), **RUN)
    assert constrained.computed == constrained.evaluations
    # a damaged store is modelled again (and rewritten)
    stores[0].write_bytes(b"not a store")
    damaged = optimize(["baseline"], ["saxpy"], "fermi-gtx480", **RUN)
    assert damaged.computed == damaged.evaluations
    assert pareto_table(damaged.pareto) == pareto_table(first.pareto)
    # with the cache off nothing is kept
    monkeypatch.setenv("RFMODEL_CACHE_DIR", "off")
    off = optimize(["baseline"], ["saxpy"], "fermi-gtx480", **RUN)
    assert off.computed == off.evaluations


def test_a_robust_front_takes_the_chosen_percentile(tmp_path, monkeypatch):
    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path / "cache"))
    unc = {"mem_fraction": ("normal", 0.2)}
    kw = dict(uncertainty=unc, samples=8, **RUN)
    high = optimize(["baseline"], ["saxpy"], "fermi-gtx480", percentile=97.5, **kw)
    low = optimize(["baseline"], ["saxpy"], "fermi-gtx480", percentile=60, **kw)
    assert "97.5 % quantile" in high.pareto.attrs["engine"] and "60 % quantile" in low.pareto.attrs["engine"]
    # a lower percentile is a less pessimistic execution time at every point the two fronts share
    key = ("num_banks", "regs_per_sm", "main_cell")
    t_high = {tuple(r[k] for k in key): r["time_ns"] for r in pareto_table(high.pareto)}
    t_low = {tuple(r[k] for k in key): r["time_ns"] for r in pareto_table(low.pareto)}
    shared = set(t_high) & set(t_low)
    assert shared and all(t_low[p] < t_high[p] for p in shared)
    for bad in (50, 100, 30, float("nan")):
        with pytest.raises(RfmodelError, match="percentile"):
            optimize(["baseline"], ["saxpy"], "fermi-gtx480", percentile=bad, **kw)
