"""Calibration: resumable sweeps, a disjoint train/test split, the fitted file and its default loading."""

import json

import numpy as np
import pytest

import rfmodel
from rfmodel.calibrate import fit_design, run_jobs, split, sweep_jobs, write_calibration

TINY = {
    "name": "tiny",
    "gpus": ["fermi-gtx480"],
    "workloads": ["saxpy", "reduce_sum", "fft_radix8"],
    "points": [{}, {"num_banks": 8}, {"num_banks": 32}, {"rfc_kb": 8}],
    "max_warps": 4,
    "seed": 0,
    "holdout_fraction": 0.34,
}


def _log(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]


def _same(a: list[dict], b: list[dict]) -> bool:
    """The same simulations of the same jobs (whichever tree made them)."""

    def strip(rs):
        return [{k: v for k, v in r.items() if k != "sim_version"} for r in rs]

    return strip(a) == strip(b)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    ckpt = tmp_path_factory.mktemp("ckpt")
    jobs = sweep_jobs(TINY, designs=["baseline"])
    # the rfc-only point does not apply to the baseline
    assert len(jobs) == 3 * 3 and all(j["params"] != {"rfc_kb": 8} for j in jobs)
    recs, ran = run_jobs(jobs, ckpt, workers=1, limit=4)  # "interrupted" after 4 simulations
    assert ran == 4 and len(recs) == 4
    assert len(_log(ckpt)) == 4 and not list(ckpt.glob("*.json"))  # one log, no file per simulation
    recs, ran = run_jobs(jobs, ckpt, workers=1)  # resumes: only the 5 missing ones run
    assert ran == 5 and len(recs) == 9
    recs, ran = run_jobs(jobs, ckpt, workers=1)
    assert ran == 0 and len(recs) == 9
    return recs


def test_resumable_and_checkpoints_hold_the_simulation(records):
    r = records[0]
    assert {"ipc", "cycles", "bank_conflict_stall_cycles", "warp_instructions"} <= set(r["sim"])
    assert r["sim"]["ipc"] > 0


def test_split_is_disjoint_by_workload_and_design_point(records):
    train, test = split([dict(r) for r in records], 0.34, seed=0)
    assert len(train) + len(test) == len(records)
    held_w = {r["workload"] for r in test if "workload" in r["heldout"]}
    held_p = {r["point"] for r in test if "point" in r["heldout"]}
    assert held_w and held_p
    assert not {r["workload"] for r in train} & held_w
    assert not {r["point"] for r in train} & held_p
    # every held-out record is held out for a reason
    assert all(r["workload"] in held_w or r["point"] in held_p for r in test)


def test_fit_writes_a_file_evaluate_loads(records, tmp_path):
    train, test = split([dict(r) for r in records], 0.34, seed=0)
    coef = fit_design("baseline", train, TINY, max_nfev=4)
    params = rfmodel.analytic.calibration.params_of(rfmodel.designs.base.get_design("baseline"))
    assert set(coef) == set(params)
    for k, (_, lo, hi) in params.items():
        assert lo <= coef[k] <= hi
    path = tmp_path / "cal.json"
    data = write_calibration(path, {"baseline": coef}, TINY, {}, "test-sim")
    assert json.loads(path.read_text())["simulator_version"] == "test-sim"
    ds = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", calibration=str(path))
    assert data["version"] in ds.attrs["calibration"]
    # an explicit coefficient changes the result: the file is really used (away from the baseline's
    # defaults, where the anchor on the profile's schedule fixes its IPC whatever the coefficients)
    point = {"main_rf_latency_x": [3]}
    ds = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", calibration=str(path), params=point)
    worse = {k: v for k, v in coef.items()}
    worse["latency_scale"] = params["latency_scale"][2]
    write_calibration(path, {"baseline": worse}, TINY, {}, "test-sim")
    ds2 = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", calibration=str(path), params=point)
    assert not np.allclose(ds.ipc.values, ds2.ipc.values)


def test_default_calibration_file_loads_and_is_recorded():
    from rfmodel.analytic.calibration import DEFAULT_FILE, load_calibration

    cal = load_calibration()
    assert DEFAULT_FILE.is_file() and cal is not None
    assert {"baseline", "rfc", "ltrf"} <= set(cal["designs"])
    assert cal["simulator_version"] and cal["created"] and cal["sweep"]["points"]
    ds = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480")
    assert "analytic.json" in ds.attrs["calibration"] and cal["version"] in ds.attrs["calibration"]
    off = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", calibration=False)
    assert off.attrs["calibration"].startswith("uncalibrated")


def test_cli_calibrate_tiny_sweep_resumes(tmp_path, capsys):
    from rfmodel.cli import main

    sweep = dict(TINY, workloads=["saxpy", "reduce_sum"], points=[{}, {"num_banks": 8}])
    (tmp_path / "sweep.json").write_text(json.dumps(sweep))
    args = [
        "calibrate",
        "--sweep",
        str(tmp_path / "sweep.json"),
        "--workers",
        "1",
        "--design",
        "baseline",
        "--checkpoints",
        str(tmp_path / "ck"),
        "--out",
        str(tmp_path / "a.json"),
        "--report",
        str(tmp_path / "r.json"),
        "--coverage-samples",
        "0",
        "--quiet",
        "--json",
    ]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["simulated_now"] == 4 and (tmp_path / "a.json").is_file()
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["simulated_now"] == 0
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["designs"]["baseline"]["n_heldout"] >= 1


def test_checkpoint_key_ignores_the_commit_but_not_the_sources(tmp_path):
    """A new commit reuses the checkpoints; a different source hash does not."""
    jobs = sweep_jobs(dict(TINY, workloads=["saxpy"], points=[{}]), designs=["baseline"])
    _, ran = run_jobs(jobs, tmp_path, workers=1, sim_version="rfmodel 0.1.0 (aaaaaaa)#abc")
    assert ran == 1
    _, ran = run_jobs(jobs, tmp_path, workers=1, sim_version="rfmodel 0.1.0 (bbbbbbb-dirty)#abc")
    assert ran == 0
    recs, ran = run_jobs(jobs, tmp_path, workers=1, sim_version="rfmodel 0.1.0 (bbbbbbb)#def")
    assert ran == 1 and recs[0]["stalls"] and all(v > 0 for v in recs[0]["stalls"].values())


def test_checkpoint_files_of_the_older_layout_count_as_done_and_move_into_the_log(tmp_path, records):
    """A folder of one ``<key>.json`` per simulation (the older layout) is read: nothing is simulated, the
    records are the same and are copied into the log, after which the files are not needed.  A damaged file
    is reported and its simulation redone; an unfinished atomic write (``.tmp-*``) is ignored."""
    import warnings

    from rfmodel.calibrate import job_key
    from rfmodel.version import __version__

    jobs = sweep_jobs(TINY, designs=["baseline"])
    sv = "rfmodel 0.1.0 (aaaaaaa)#abc"
    keys = [job_key(r, f"rfmodel {__version__}#abc") for r in records]
    for k, r in zip(keys, records, strict=True):
        (tmp_path / f"{k}.json").write_text(json.dumps(r, sort_keys=True))
    (tmp_path / ".tmp-x1y2.json").write_text("{ half")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        recs, ran = run_jobs(jobs, tmp_path, workers=1, sim_version=sv)
    assert ran == 0 and recs == records
    assert sorted(r["key"] for r in _log(tmp_path)) == sorted(keys)
    for k in keys:
        (tmp_path / f"{k}.json").unlink()
    recs, ran = run_jobs(jobs, tmp_path, workers=1, sim_version=sv)
    assert ran == 0 and recs == records  # from the log alone
    # a damaged file of the older layout: reported, and only its simulation is redone
    (tmp_path / "results.jsonl").unlink()
    for k, r in zip(keys, records, strict=True):
        (tmp_path / f"{k}.json").write_text(json.dumps(r, sort_keys=True))
    (tmp_path / f"{keys[2]}.json").write_text('{"design": "baseline"}')
    with pytest.warns(UserWarning, match=f"{keys[2]}.json: damaged record"):
        recs, ran = run_jobs(jobs, tmp_path, workers=1, sim_version=sv)
    assert ran == 1 and _same(recs, records)


def test_a_cut_last_line_is_redone_and_removed(tmp_path):
    """A run killed while appending leaves a cut last line: it is reported, its simulation is redone, and the
    log is whole again (the same text as before the cut)."""
    import warnings

    jobs = sweep_jobs(dict(TINY, points=[{}]), designs=["baseline"])
    recs, ran = run_jobs(jobs, tmp_path, workers=1)
    log = tmp_path / "results.jsonl"
    whole = log.read_text()
    lines = whole.splitlines(keepends=True)
    assert ran == 3 and len(lines) == 3
    log.write_text(lines[0] + lines[1] + lines[2][: len(lines[2]) // 2])
    with pytest.warns(UserWarning, match="line 3: damaged record"):
        again, ran = run_jobs(jobs, tmp_path, workers=1)
    assert ran == 1 and again == recs and log.read_text() == whole
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_jobs(jobs, tmp_path, workers=1)[1] == 0


def test_worker_processes_give_the_serial_records(tmp_path, records):
    """The same sweep on two worker processes: the fixture's (serial) records, in the same order, and one
    log line per simulation (only the parent writes it)."""
    jobs = sweep_jobs(TINY, designs=["baseline"])
    recs, ran = run_jobs(jobs, tmp_path, workers=2)
    assert ran == 9 and _same(recs, records)
    assert len(_log(tmp_path)) == 9 and len({r["key"] for r in _log(tmp_path)}) == 9


def test_kill_9_then_resume_gives_the_records_of_a_whole_run(tmp_path, records):
    """``kill -9`` of a calibration on worker processes right after its 4th record: the log holds those 4, and
    a rerun simulates only the 5 others, to the records of an uninterrupted run."""
    import signal
    import subprocess
    import sys

    script = f"""
import os, signal
from rfmodel.calibrate import run_jobs, sweep_jobs

def progress(done, total):
    if done == 4:
        os.kill(os.getpid(), signal.SIGKILL)

run_jobs(sweep_jobs({TINY!r}, designs=["baseline"]), {str(tmp_path)!r}, workers=2, progress=progress)
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    assert len(_log(tmp_path)) == 4
    recs, ran = run_jobs(sweep_jobs(TINY, designs=["baseline"]), tmp_path, workers=1)
    assert ran == 5 and _same(recs, records)


def test_reordered_points_reuse_the_simulations_at_their_new_places(tmp_path):
    """The key leaves out a point's place in the sweep: a sweep with its points reordered simulates nothing,
    and its records come in the new order, each named by its point's parameters."""
    from rfmodel.calibrate import point_id

    sweep = dict(TINY, workloads=["saxpy"], points=[{}, {"num_banks": 8}])
    assert run_jobs(sweep_jobs(sweep, ["baseline"]), tmp_path, workers=1)[1] == 2
    flipped = dict(sweep, points=sweep["points"][::-1])
    recs, ran = run_jobs(sweep_jobs(flipped, ["baseline"]), tmp_path, workers=1)
    assert ran == 0 and [r["params"] for r in recs] == flipped["points"]
    assert (
        [r["point"] for r in recs] == ['{"num_banks": 8}', "{}"] == [point_id(p) for p in flipped["points"]]
    )


def test_a_design_declares_its_own_calibration_points():
    """A design's ``calibration_points`` join the sweep's shared points for that design alone (after them,
    once, unless the sweep's ``design_points`` is false); the default sweep's shared points are the
    baseline's."""
    from rfmodel.calibrate import DEFAULT_SWEEP, design_points, point_applies
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    rfc, base = get_design("rfc"), get_design("baseline")
    own = {"rfc_kb": 8, "main_rf_latency_x": 3}
    assert own in rfc.calibration_points
    sweep = dict(TINY, points=[{}, {"main_rf_latency_x": 3}])
    assert design_points(sweep, rfc, sm) == [{}, {"main_rf_latency_x": 3}, *rfc.calibration_points]
    assert design_points(dict(sweep, points=[own, {}]), rfc, sm) == [own, {}]  # listed once
    assert design_points(dict(sweep, design_points=False), rfc, sm) == sweep["points"]
    assert design_points(sweep, base, sm) == sweep["points"]
    assert all(point_applies(base, sm, p) for p in DEFAULT_SWEEP["points"])  # the baseline's, shared
    jobs = sweep_jobs(dict(DEFAULT_SWEEP, gpus=["fermi-gtx480"], workloads=["saxpy"]), ["rfc", "corf"])
    assert sum(j["params"] == own for j in jobs) == 1


def test_a_calibration_point_a_design_does_not_understand_is_refused(monkeypatch):
    """A design's own point with a name it does not know (a typo) is one error naming it, not a point
    silently left out of its calibration."""
    from rfmodel.calibrate import design_points
    from rfmodel.designs.base import get_design
    from rfmodel.errors import RfmodelError
    from rfmodel.evaluate import resolve_gpu

    rfc = get_design("rfc")
    monkeypatch.setattr(type(rfc), "calibration_points", ({"rfc_kbytes": 8},))
    with pytest.raises(RfmodelError, match=r"design 'rfc': its calibration point .*\['rfc_kbytes'\]"):
        design_points(TINY, rfc, resolve_gpu("fermi-gtx480"))


def test_the_split_of_a_point_does_not_move_when_others_are_added():
    """The held-out split draws a design's points by their parameters, not their places: the same points in
    another order split alike, and a point added leaves the others' sides alone unless it takes a held-out
    place itself; the held-out points are the ones with the smallest seeded hashes of their parameters."""
    from rfmodel.calibrate import _bucket, point_id

    def held(points):
        recs = [
            {"design": "baseline", "workload": w, "point": point_id(p), "params": p}
            for p in points
            for w in "abcdefghij"
        ]
        _, test = split(recs, 0.3, seed=0)
        return {r["point"] for r in test if "point" in r["heldout"]}

    points = [{"num_banks": b} for b in (2, 4, 8, 16, 32, 64)] + [{}]
    before = held(points)
    ids = sorted(point_id(p) for p in points)
    assert before == set(sorted(ids, key=lambda x: _bucket(f"point:baseline:{x}", 0))[:2])
    assert held(points[::-1]) == before
    added = point_id({"num_banks": 6})
    more = held([*points, {"num_banks": 6}])  # 8 points: still 2 held out
    assert more == before or (added in more and len(more & before) == 1)


def test_cv_spread_is_out_of_sample(records):
    """The cross-validated error scale is positive and at least the training error in this tiny sweep."""
    from rfmodel.calibrate import cv_spread, training_spread

    train = [dict(r) for r in records]
    coef = fit_design("baseline", train, TINY, max_nfev=12)
    tr = training_spread("baseline", train, {"coefficients": coef}, TINY)
    cv = cv_spread("baseline", train, TINY, init=None, folds=3, max_nfev=12)
    assert cv > 0 and tr > 0
    assert cv >= 0.8 * tr


def test_a_designs_folds_are_anchored_on_the_baselines_fold_fits(records, monkeypatch):
    """A design's out-of-fold predictions (its model-error scale) take the baseline's fit of the same fold
    both as their shared coefficients and as their anchor, as the calibration anchors a design on the
    baseline fit it takes its coefficients from; the baseline anchors on its own coefficients."""
    import rfmodel.calibrate as cal

    base = [dict(r) for r in records]
    train = base + [{**r, "design": "bow"} for r in base]
    folds = cal.cv_folds(train, TINY, 3)
    entry = {"coefficients": fit_design("baseline", base, TINY, max_nfev=2)}
    inits = {out: {**entry, "fold": i} for i, out in enumerate(folds)}
    seen = []
    groups = cal._groups

    def spy(recs, sweep):
        seen.append(
            ({r["workload"] for r in recs}, {r["design"] for r in recs}, sweep.get(cal.ANCHOR_SWEEP_KEY))
        )
        return groups(recs, sweep)

    monkeypatch.setattr(cal, "_groups", spy)
    cal.cv_spread("bow", train, TINY, init=entry, folds=3, max_nfev=2, fold_inits=inits)
    for out in folds:  # the left-out workloads' predictions
        anchors = [a for w, d, a in seen if w and w <= set(out) and d == {"bow"}]
        assert anchors and all(a is inits[out] for a in anchors)
    seen.clear()
    cal.cv_spread("baseline", train, TINY, init=None, folds=3, max_nfev=2, fold_inits=inits)
    assert seen and all(a is None for _, _, a in seen)


def _six_x_copies(records):
    """Each record copied at 6x banks (the point's main_rf_latency_x and the simulated banks' read cycles)
    with the simulator's 1x IPC: the model at 6x is far below it."""
    return [
        {
            **r,
            "params": {**r["params"], "main_rf_latency_x": 6},
            "sim": {**r["sim"], "main_rf_read_cycles": 6.0},
        }
        for r in records
    ]


def test_monte_carlo_coverage_is_also_given_per_bank_speed(records):
    """The Monte-Carlo coverage of the held-out IPCs, apart by the banks' read cycles: the overall share is
    the records'-weighted mean of the speeds' shares, and a 6x copy of each record falls outside a narrow
    interval; a model-error scale per speed that is wide at 6x covers more of them, the same at 1x."""
    from rfmodel.calibrate import default_uncertainty, mc_coverage

    base = [dict(r) for r in records]
    slow = _six_x_copies(base)
    coef = {"coefficients": fit_design("baseline", base, TINY, max_nfev=2)}
    mc = mc_coverage("baseline", base + slow, coef, TINY, default_uncertainty(0.05), samples=8)
    by = mc["coverage_by_bank_speed"]
    assert list(by) == ["1", "6"]
    assert mc["coverage"] == pytest.approx((by["1"] * len(base) + by["6"] * len(slow)) / mc["n"], rel=1e-12)
    assert by["6"] < by["1"]
    unc = default_uncertainty(0.05, {"1": 0.05, "6": 1.0})
    assert unc["ipc_factor"] == ("lognormal", {"1": 0.05, "6": 1.0})
    wide = mc_coverage("baseline", base + slow, coef, TINY, unc, samples=8)["coverage_by_bank_speed"]
    assert wide["6"] > by["6"]
    # at 1x the same scale on the same standard normals (exp(Z) ** 0.05 is exp(0.05 Z)): the same coverage
    assert wide["1"] == by["1"]


def test_model_error_is_also_given_per_bank_speed(records):
    """The cross-validated IPC error apart by the banks' read cycles: the RMS over all records is the
    records'-weighted quadratic mean of the speeds' RMS, and the 6x copies (simulator IPC at 1x) are far
    off where the 1x records are close."""
    import rfmodel.calibrate as cal

    base = [dict(r) for r in records]
    train = base + _six_x_copies(base)
    by: dict = {}
    rms = cal.cv_spread("baseline", train, TINY, init=None, folds=3, max_nfev=2, by_speed_out=by)
    assert sorted(by) == ["1", "6"]
    assert rms**2 == pytest.approx((by["1"] ** 2 + by["6"] ** 2) / 2, rel=1e-9)  # as many records each
    assert by["6"] > 2 * by["1"]
    few: dict = {}
    cal.cv_spread("baseline", base + _six_x_copies(base[:3]), TINY, init=None, max_nfev=2, by_speed_out=few)
    assert list(few) == ["1"]  # three 6x records: too few for a scale


def test_a_coefficient_no_point_depends_on_keeps_its_start_value(records):
    """The baseline's banks are one-cycle: the slow-bank queue term moves no residual, so the fit leaves it
    at its default instead of wherever the solver's steps happen to take it."""
    params = rfmodel.analytic.calibration.params_of(rfmodel.designs.base.get_design("baseline"))
    coef = fit_design("baseline", [dict(r) for r in records], TINY, max_nfev=4)
    assert coef["slow_queue"] == params["slow_queue"][0]
    assert any(coef[k] != params[k][0] for k in ("softmin_q", "mem_scale", "latency_scale"))


def test_stall_loss_choices(records):
    """Both bank-stall residuals fit within the bounds; an unknown one is one clear error; the out-of-fold
    stall errors come back with the cross-validated scale."""
    from rfmodel.calibrate import calibrate, cv_spread
    from rfmodel.errors import RfmodelError

    train = [dict(r) for r in records]
    params = rfmodel.analytic.calibration.params_of(rfmodel.designs.base.get_design("baseline"))
    for loss in ("relative", "log"):
        coef = fit_design("baseline", train, dict(TINY, stall_loss=loss), max_nfev=4)
        assert all(lo <= coef[k] <= hi for k, (_, lo, hi) in params.items())
    with pytest.raises(RfmodelError, match="stall_loss.*allowed: relative, log"):
        fit_design("baseline", train, dict(TINY, stall_loss="l1"), max_nfev=4)
    with pytest.raises(RfmodelError, match="stall_loss"):
        calibrate(dict(TINY, stall_loss="l1"), checkpoint_dir="/nonexistent/never-created")
    errs = []
    log_sweep = dict(TINY, stall_loss="log")
    cv_spread("baseline", train, log_sweep, init=None, folds=3, max_nfev=2, stall_errs=errs)
    assert errs and all(np.isfinite(errs)) and all(e >= -1.0 for e in errs)


def test_a_rejected_point_is_reported_not_fatal_in_worker_processes(tmp_path):
    sweep = dict(TINY, workloads=["saxpy"], points=[{}, {"warps_per_sm": 8}])  # 8 warps < one 1024-thread CTA
    jobs = sweep_jobs(sweep, designs=["baseline"])
    recs, ran = run_jobs(jobs, tmp_path, workers=2)
    assert ran == 1 and len(recs) == 1
    (f,) = run_jobs.failed
    assert f["params"] == {"warps_per_sm": 8}
    assert "SpecError" in f["error"] and "max_threads_per_cta" in f["error"]


def test_a_dask_cluster_runs_the_sweep_to_the_same_records(tmp_path, records):
    from distributed import Client, LocalCluster

    from rfmodel.runner import DaskRunner

    jobs = sweep_jobs(TINY, designs=["baseline"])[:3]
    kw = dict(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    with LocalCluster(**kw) as cluster, Client(cluster) as client:
        recs, ran = run_jobs(jobs, tmp_path, runner=DaskRunner(client))
    assert ran == 3
    by_key = {(r["workload"], json.dumps(r["params"], sort_keys=True)): r for r in records}
    for r in recs:
        ref = by_key[(r["workload"], json.dumps(r["params"], sort_keys=True))]
        assert r["sim"] == ref["sim"] and r["stalls"] == ref["stalls"]


def test_simulation_checkpoints_are_keyed_by_each_designs_own_sources(with_package_file_edited):
    """A design's simulations are keyed by the shared sources and its own module with the design modules it
    imports: designs of one module share a key; an edit of cerf.py changes cerf's and corf's (corf imports
    cerf) but not the baseline's."""
    import rfmodel.calibrate as cal

    h = cal._sim_source_hash
    assert h("ltrf") == h("strands") == h("ltrf_plus")
    assert len({h("baseline"), h("cerf"), h("corf"), h("stt")}) == 4
    before = {d: h(d) for d in ("baseline", "cerf", "corf")}
    after = with_package_file_edited("cerf.py", lambda: {d: h(d) for d in ("baseline", "cerf", "corf")})
    assert after["baseline"] == before["baseline"]
    assert after["cerf"] != before["cerf"] and after["corf"] != before["corf"]


def test_simulation_checkpoints_follow_the_modules_the_simulator_calls(with_package_file_edited):
    """The simulator's caches look lines up in ``rfmodel/setassoc.py``, a module at the package's top: an
    edit of it changes every design's checkpoint key (checkpoints made before such an edit were reused), and
    an edit of a module the simulator does not call (the analytic engine's) changes none."""
    import rfmodel.calibrate as cal

    designs = ("baseline", "cerf", "ltrf")

    def keys(name):
        return with_package_file_edited(
            name, lambda: {d: cal._sim_source_hash(d) for d in designs} | {None: cal._sim_source_hash()}
        )

    before = keys("no-such-file.py")
    after = keys("setassoc.py")
    assert all(after[d] != before[d] for d in before)
    assert keys("throughput.py") == before


def test_effects_of_the_calibration_follow_both_engines_by_hand(tmp_path):
    """The design effects the calibration reports: the simulator's effect is the ratio of the two records'
    IPC, its energy per instruction is what ``evaluate(method="simulate")`` charges at that point, the model's
    effect is the ratio of the model's values, and the summary counts the held-out rows."""
    from rfmodel.calibrate import calibrate
    from rfmodel.calibrate.effects import SIGN_THRESHOLD, effect_report, summarize

    sweep = dict(TINY, workloads=["saxpy", "reduce_sum", "fft_radix8"], points=[{}, {"num_banks": 8}])
    res = calibrate(
        sweep, checkpoint_dir=tmp_path / "ck", designs=["baseline", "malekeh", "bow"], workers=1, max_nfev=2
    )
    recs, _ = run_jobs(sweep_jobs(sweep, ["baseline", "malekeh", "bow"]), tmp_path / "ck", workers=1)
    split(recs, sweep["holdout_fraction"], sweep["seed"])
    fitted = {
        d: {k: v for k, v in r.items() if k in ("coefficients", "per_gpu")} for d, r in res["designs"].items()
    }
    from rfmodel.calibrate import ANCHOR_SWEEP_KEY, record_values

    rep = effect_report(recs, record_values(recs, fitted, {**sweep, ANCHOR_SWEEP_KEY: fitted["baseline"]}))
    rows = rep["rows"]
    assert len(rows) == 2 * 3 * 2  # two designs x three workloads x two SM points, each with its baseline
    by = {(r["design"], r["workload"], r["params"].get("num_banks")): r for r in recs}
    for row in rows:
        d, b = (
            by[(row["design"], row["workload"], row["params"].get("num_banks"))],
            by[("baseline", row["workload"], row["params"].get("num_banks"))],
        )
        assert row["ipc_effect_sim"] == pytest.approx(d["sim"]["ipc"] / b["sim"]["ipc"] - 1, rel=1e-12)
        assert row["ipc_effect_model"] == pytest.approx(row["ipc_model"] / _model_ipc(rows, recs, row) - 1)
    one = next(r for r in rows if r["design"] == "malekeh" and r["workload"] == "saxpy" and not r["params"])
    ds = rfmodel.evaluate("malekeh", "saxpy", "fermi-gtx480", method="simulate", max_warps=4)
    e = float(ds["energy_pj_total"].values.ravel()[0]) / float(ds["warp_instructions"].values.ravel()[0])
    assert one["energy_per_instr_sim"] == pytest.approx(e, rel=1e-9)
    p = float(ds["power_mw"].values.ravel()[0])
    assert one["power_sim"] == pytest.approx(p, rel=1e-9)
    # the report holds each design's held-out summary and the ranking over the held-out workloads
    for d in ("malekeh", "bow"):
        held = [r for r in rows if r["design"] == d and r["heldout"]]
        s = res["designs"][d]["effects"]
        assert s == summarize(held) and s["n_effect"] == len(held) > 0
        # the effect error the intervals of rfmodel.compare carry: RMS of the log ratio of 1 + effect
        sd = np.sqrt(
            np.mean([np.log((1 + r["ipc_effect_model"]) / (1 + r["ipc_effect_sim"])) ** 2 for r in held])
        )
        assert s["ipc_effect_log_sd"] == pytest.approx(sd, rel=1e-12)
        assert res["designs"][d]["model_log_effect_sd"] == s["ipc_effect_log_sd"]
        # one speed of the banks in this sweep: no table per speed in the calibration
        assert set(s["ipc_effect_log_sd_by_bank_speed"]) <= {"1"}
        assert "model_log_effect_sd_by_bank_speed" not in res["designs"][d]
        big = [r for r in held if abs(r["ipc_effect_sim"]) >= SIGN_THRESHOLD]
        assert s["n_sign"] == len(big)
    assert "n_groups" in res["ranking"]


def _model_ipc(rows, recs, row):
    """The model IPC of a row's baseline reference: a row of the same workload and SM point's baseline has
    ``ipc_model / (1 + ipc_effect_model)`` for every design, so every row of that group agrees."""
    same = [
        r
        for r in rows
        if r["workload"] == row["workload"] and r["params"].get("num_banks") == row["params"].get("num_banks")
    ]
    vals = {r["ipc_model"] / (1 + r["ipc_effect_model"]) for r in same}
    assert max(vals) == pytest.approx(min(vals), rel=1e-12)
    return vals.pop()


def test_every_metric_both_engines_report_is_held_out_by_its_kind(tmp_path):
    """Each design's metrics in the calibration report: a share by its mean absolute error, a count per
    instruction by its median relative error, each compared on the held-out records only."""
    from rfmodel.calibrate import calibrate
    from rfmodel.calibrate.report import metrics_section
    from rfmodel.designs.base import get_design

    sweep = dict(TINY, workloads=["saxpy", "reduce_sum", "fft_radix8"], points=[{}, {"num_banks": 8}])
    res = calibrate(
        sweep, checkpoint_dir=tmp_path / "ck", designs=["baseline", "malekeh"], workers=1, max_nfev=2
    )
    m = res["designs"]["malekeh"]["metrics"]
    assert get_design("malekeh").metric_kind("rf_cache_hit_rate") == "share"
    assert m["rf_cache_hit_rate"]["kind"] == "share" and m["rf_cache_hit_rate"]["goal"] == 0.05
    stall = m["bank_conflict_stall_cycles"]
    assert stall["kind"] == "count" and stall["goal"] == 0.2
    # one definition: the first table's bank-stall figure is this table's, over the same held-out records
    assert res["designs"]["malekeh"]["bank_stall_rel_err"] == pytest.approx(stall["error"], rel=1e-9)
    assert res["designs"]["malekeh"]["n_stall"] == stall["n"]
    assert m["warps"]["kind"] == "level" and m["warps"]["goal"] is None
    assert m["rf_cache_hit_rate"]["n"] == res["designs"]["malekeh"]["n_heldout"]
    # the share's error is the mean |model - sim| of the held-out rows the IPC report lists too
    rows = [r for r in res["designs"]["malekeh"]["rows"] if "rf_cache_hit_rate_sim" in r]
    mae = np.mean([abs(r["rf_cache_hit_rate_model"] - r["rf_cache_hit_rate_sim"]) for r in rows])
    assert m["rf_cache_hit_rate"]["error"] == pytest.approx(mae, rel=1e-9)
    worst = max(rows, key=lambda r: abs(r["rf_cache_hit_rate_model"] - r["rf_cache_hit_rate_sim"]))
    assert m["rf_cache_hit_rate"]["worst"]["workload"] == worst["workload"]
    assert m["rf_cache_hit_rate"]["worst"]["params"] == worst["params"]
    # each structure's energy per instruction, held out as a count without a goal: the simulator's side is
    # the simulated Dataset's energy_pj of that structure over its warp instructions
    assert {"energy_pj[rf_bank]", "energy_pj[crossbar]", "energy_pj[ccu]"} <= set(m)
    e = m["energy_pj[ccu]"]
    assert e["kind"] == "count" and e["goal"] is None and e["n"] == m["rf_cache_hit_rate"]["n"]
    sims = []
    for r in rows:
        params = {k: [v] for k, v in r["params"].items()} or None
        ds = rfmodel.evaluate(
            "malekeh", r["workload"], r["gpu"], params=params, method="simulate", max_warps=4
        )
        n = float(ds["warp_instructions"].values.ravel()[0])
        sims.append(float(ds["energy_pj"].sel(structure="ccu").values.ravel()[0]) / n)
    assert e["sim_mean"] == pytest.approx(np.mean(sims), rel=1e-9)
    text = "\n".join(metrics_section(res))
    assert "| malekeh | `rf_cache_hit_rate` | share |" in text and "| baseline | `warps` | level |" in text
    assert "| malekeh | `energy_pj[ccu]` | count |" in text
    missed = [
        (d, k)
        for d, r in res["designs"].items()
        for k, x in r["metrics"].items()
        if x["goal"] is not None and not x["met"]
    ]
    for d, k in missed:  # each miss has its worst record named, with the simulator's stalls there
        assert f"- {d} `{k}`, {res['designs'][d]['metrics'][k]['worst']['workload']} on " in text


def test_the_bank_stall_error_of_a_run_counts_runs_without_stalls_against_the_floor():
    """``stall_error``: relative to the simulator's count, or to 1 % of a stall cycle an instruction where
    that is larger; a run where the simulator saw no bank stall counts (a model that predicts some errs)."""
    from rfmodel.calibrate import stall_error

    sim = {"bank_conflict_stall_cycles": 0.0, "warp_instructions": 1000.0, "bank_conflicts": 0.0}
    assert stall_error(5.0, sim) == pytest.approx(0.5)  # 5 cycles over a floor of 10
    assert stall_error(0.0, sim) == 0.0
    sim = {"bank_conflict_stall_cycles": 200.0, "warp_instructions": 1000.0, "bank_conflicts": 50.0}
    assert stall_error(150.0, sim) == pytest.approx(-0.25)


def test_the_worst_record_of_a_metric_is_the_one_its_own_error_picks():
    from rfmodel.calibrate.metrics import summarize_metrics
    from rfmodel.calibrate.report import _stall_shares

    # per instruction: relative errors 0.5 (a), 0.2 (b, the larger absolute error), 1.0 (c, at the floor)
    pairs = [
        {"x_stall_cycles": ("count", 0.02, 0.03)},
        {"x_stall_cycles": ("count", 1.0, 1.2)},
        {"x_stall_cycles": ("count", 0.0, 0.01)},
    ]
    labels = [{"workload": w, "gpu": "g", "params": {}, "stalls": {"memory": 3, "raw": 1}} for w in "abc"]
    m = summarize_metrics(pairs, labels)["x_stall_cycles"]
    assert m["error"] == pytest.approx(0.5) and m["goal"] == 0.2 and m["met"] is False
    assert m["worst"]["workload"] == "c" and (m["worst_sim"], m["worst_model"]) == (0.0, 0.01)
    assert _stall_shares(m["worst"]["stalls"]) == "; simulator stalls: memory 75 %, raw 25 %"
    assert "worst" not in summarize_metrics(pairs)["x_stall_cycles"]


def test_a_metric_the_same_everywhere_in_both_engines_has_no_goal():
    """A share both engines give as 1 at every record (the LTRF family's register-cache hit rate) is reported
    as such, not as a goal met; one that moves anywhere keeps its goal."""
    from rfmodel.calibrate.metrics import summarize_metrics
    from rfmodel.calibrate.report import metrics_section

    pairs = [
        {"rf_cache_hit_rate": ("share", 1.0, 1.0), "x_share": ("share", 0.2, 0.2)},
        {"rf_cache_hit_rate": ("share", 1.0, 1.0), "x_share": ("share", 0.2, 0.3)},
    ]
    m = summarize_metrics(pairs)
    assert m["rf_cache_hit_rate"]["constant"] and m["rf_cache_hit_rate"]["goal"] is None
    assert m["rf_cache_hit_rate"]["met"] is None
    assert not m["x_share"]["constant"] and m["x_share"]["goal"] == 0.05 and m["x_share"]["met"] is True
    text = "\n".join(metrics_section({"designs": {"ltrf": {"metrics": m}}}))
    row = "| ltrf | `rf_cache_hit_rate` | share | 2 | 0.0 points | 1 | 1 | – (1 in both engines everywhere) |"
    assert row in text
    # and in the IPC table's register-cache column: said as such, not as an error of 0
    from rfmodel.calibrate.report import _design_hit

    assert _design_hit({"rf_cache_hit_rate_mae": 0.0, "metrics": m}) == "n/a (1 in both)"
    moving = summarize_metrics(
        [{"rf_cache_hit_rate": ("share", 0.5, 0.5)}, {"rf_cache_hit_rate": ("share", 0.6, 0.5)}]
    )
    assert _design_hit({"rf_cache_hit_rate_mae": 0.05, "metrics": moving}) == "5.0 %"


def test_ranking_counts_the_pairs_the_simulator_tells_apart():
    """By hand: one group of three designs (simulated IPC 1.00, 1.01, 1.20; model 1.05, 1.00, 0.90) and one
    of two (1.0 and 0.5; model 2.0 and 1.0).  Pairs at least 2 % apart in the simulator: C-A (+20 %), C-B
    (+18.8 %) and the second group's (+100 %); A-B (+1 %) is inside the threshold.  The model orders only
    the last as the simulator does (1 of 3); its worst is the widest it gets wrong, C ahead of A, where the
    model has C 14.3 % behind.  Kendall's tau counts only groups of three: the first, reversed (-1)."""
    from rfmodel.calibrate.effects import ranking

    def rec(design, wl, sim, model):
        r = {"gpu": "fermi-gtx480", "workload": wl, "params": {}, "design": design, "heldout": "workload"}
        return r, {"sim": {"ipc": sim}, "model": {"ipc": model}}

    pairs = [
        rec("a", "w1", 1.00, 1.05),
        rec("b", "w1", 1.01, 1.00),
        rec("c", "w1", 1.20, 0.90),
        rec("a", "w2", 1.0, 2.0),
        rec("b", "w2", 0.5, 1.0),
    ]
    records = [r for r, _ in pairs]
    values = {id(r): v for r, v in pairs}
    out = ranking(records, values)
    assert out["n_pairs"] == 3 and out["pair_agreement"] == pytest.approx(1 / 3)
    worst = out["worst_pairs"]
    assert [(w["faster"]["design"], w["slower"]["design"]) for w in worst] == [("c", "a"), ("c", "b")]
    assert worst[0]["sim_gap"] == pytest.approx(0.2)
    assert worst[0]["model_gap"] == pytest.approx(0.9 / 1.05 - 1)
    assert out["n_groups"] == 1 and out["kendall_tau_median"] == pytest.approx(-1.0)
    # by gap: 2 %, 5 % and 10 % see all three; 20 % C-A (exactly +20 %) and the second group's; 40 % that
    # alone
    by = {g["gap"]: (g["n_pairs"], g["agreement"]) for g in out["pair_agreement_by_gap"]}
    assert by[0.02] == by[0.05] == by[0.10] == (3, pytest.approx(1 / 3))
    assert by[0.20] == (2, pytest.approx(0.5)) and by[0.40] == (1, pytest.approx(1.0))
    # a record outside the held-out workloads does not count
    records[0]["heldout"] = ""
    assert ranking(records, values)["n_pairs"] == 2


def test_a_failed_fit_comes_back_as_a_picklable_error():
    """A design's fit that raises one of the library's errors (whose pickling a process pool cannot count
    on) comes back as a RuntimeError naming the design and the original error."""
    import pickle

    from rfmodel.calibrate import DEFAULT_SWEEP, _fit_job

    with pytest.raises(RuntimeError, match="fitting no-such-design: ") as info:
        _fit_job(("no-such-design", [], [], DEFAULT_SWEEP, None, 1))
    assert pickle.loads(pickle.dumps(info.value)).args == info.value.args


def test_a_designs_fit_pairs_each_record_with_the_baselines_error_at_its_point(records):
    """The effect residual of a design's fit: each record's baseline error at the same GPU, workload and
    shared point (the baseline's own keys; a design's own parameter is left out), NaN where the training
    records hold no baseline there.  The baseline paired with itself gives its own errors."""
    from rfmodel.calibrate import _baseline_errors, _groups, params_of
    from rfmodel.designs.base import get_design

    coef = {k: v[0] for k, v in params_of(get_design("baseline")).items()}
    recs = [dict(r) for r in records]
    groups = _groups(recs, TINY)
    errs = _baseline_errors(groups, recs, TINY, coef)
    for g, e in zip(groups, errs, strict=True):
        own = np.log(np.asarray(g.predict(coef)["ipc"]) / np.array([r["sim"]["ipc"] for r in g.recs]))
        assert e == pytest.approx(own, rel=1e-9)
    # a record at a point with a design parameter is paired with the baseline at the rest of its point
    mine = dict(recs[0], design="rfc", params={**recs[0]["params"], "rfc_kb": 8})
    alone = dict(recs[0], design="rfc", params={"num_banks": 12})  # no baseline record there
    g = _groups([mine, alone], TINY)
    e = np.concatenate(_baseline_errors(g, recs, TINY, coef))
    first = _baseline_errors(_groups([recs[0]], TINY), recs, TINY, coef)[0][0]
    assert e[0] == pytest.approx(first, rel=1e-9) and np.isnan(e[1])


def test_adopted_simulations_are_checked_then_kept_under_this_trees_keys(tmp_path):
    """Records made by other sources (here: keyed by a made-up source hash) are simulated again, one a design,
    and taken under this tree's keys, so the sweep then runs nothing; a record this tree simulates otherwise
    refuses the whole log and nothing is adopted."""
    from rfmodel.calibrate import adopt_simulations
    from rfmodel.errors import RfmodelError

    jobs = sweep_jobs(dict(TINY, workloads=["saxpy"], points=[{}, {"num_banks": 8}]), designs=["baseline"])
    old, new = tmp_path / "old", tmp_path / "new"
    made, ran = run_jobs(jobs, old, workers=1, sim_version="rfmodel 0.1.0 (0000000)#0ldh4sh")
    assert ran == 2
    got = adopt_simulations(old, new, verify=1)
    assert got == {"read": 2, "verified": 1, "adopted": 2}
    recs, ran = run_jobs(jobs, new, workers=1)  # this tree's keys: nothing left to simulate
    assert ran == 0
    assert [r["sim"] for r in recs] == [r["sim"] for r in made]
    assert all(r["sim_version"].endswith("#0ldh4sh") and r["adopted"]["verified"] == 1 for r in recs)
    assert adopt_simulations(old, new)["adopted"] == 0  # already there

    # a record whose counters this tree does not reproduce: refused, nothing written
    lines = (old / "results.jsonl").read_text().splitlines()
    bad = [json.loads(x) for x in lines]
    for r in bad:
        r["sim"]["cycles"] += 1
    (old / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bad))
    other = tmp_path / "other"
    with pytest.raises(RfmodelError, match="simulates otherwise.*cycles"):
        adopt_simulations(old, other, verify=2)
    assert not (other / "results.jsonl").exists()
    with pytest.raises(RfmodelError, match="at least 1"):
        adopt_simulations(old, other, verify=0)
    with pytest.raises(RfmodelError, match="no checkpoint log"):
        adopt_simulations(tmp_path / "nowhere", other)


def test_cli_calibrate_adopt_error_is_one_line_exit_2(tmp_path, capsys):
    from rfmodel.cli import main

    rc = main(
        [
            "calibrate",
            "--sweep",
            "quick",
            "--checkpoints",
            str(tmp_path / "c"),
            "--adopt",
            str(tmp_path / "nowhere"),
            "--out",
            str(tmp_path / "a.json"),
            "--report",
            str(tmp_path / "r.json"),
            "--quiet",
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "no checkpoint log" in err and "Traceback" not in err
    assert not (tmp_path / "a.json").exists()


def _effect_row(params, sim, model, **more):
    """A row of the effect report with only the IPC effect set (the energy and power effects 0)."""
    return {
        "params": params,
        "ipc_effect_sim": sim,
        "ipc_effect_model": model,
        "heldout": "point",
        "energy_per_instr_effect_sim": 0.0,
        "energy_per_instr_effect_model": 0.0,
        "power_effect_sim": 0.0,
        "power_effect_model": 0.0,
        "gpu": "g",
        "workload": "w",
        **more,
    }


def test_effect_error_is_also_given_per_bank_speed():
    """The IPC effect MAE apart by the point's main_rf_latency_x (1x where the point sets none), by hand."""
    from rfmodel.calibrate.effects import summarize

    row = _effect_row
    rows = [
        row({}, 0.10, 0.12),
        row({"num_banks": 8}, 0.0, -0.04),
        row({"main_rf_latency_x": 3}, 0.5, 0.2),
        row({"main_rf_latency_x": 6}, 1.0, 1.6),
        row({"main_rf_latency_x": 6}, 0.8, 1.0),
    ]
    out = summarize(rows)
    by = out["ipc_effect_mae_by_bank_speed"]
    assert list(by) == ["1x", "3x", "6x"]
    assert by["1x"] == pytest.approx(3.0) and by["3x"] == pytest.approx(30.0)
    assert by["6x"] == pytest.approx(40.0)
    assert out["ipc_effect_mae"] == pytest.approx((2 + 4 + 30 + 60 + 20) / 5)


def test_a_designs_scale_is_grown_as_the_baselines_beyond_its_training():
    """Speeds the baseline's training measured beyond a design's slowest: the design's slowest scale times the
    baseline's growth from there (by hand; the baseline's scale interpolated in log cycles where it has
    no entry at the design's speed); nothing to grow without a baseline table, with one speed, or where
    the design reaches the baseline's slowest."""
    from rfmodel.calibrate import grown_by_baseline

    base = {"1": 0.05, "3": 0.08, "6": 0.112}
    table, grown = grown_by_baseline({"1": 0.04, "3": 0.08}, base)
    assert grown == ["6"] and table == pytest.approx({"1": 0.04, "3": 0.08, "6": 0.112})
    at2 = 0.05 + 0.03 * np.log(2) / np.log(3)
    table, grown = grown_by_baseline({"1": 0.06, "2": 0.09}, base)
    assert grown == ["3", "6"]
    assert table["3"] == pytest.approx(0.09 * 0.08 / at2) and table["6"] == pytest.approx(0.09 * 0.112 / at2)
    for by, b in (({"1": 0.04, "3": 0.08}, None), ({"1": 0.04}, base), ({"1": 0.04, "6": 0.1}, base)):
        assert grown_by_baseline(by, b) == (by, [])


def test_a_records_bank_speed_is_its_banks_read_cycles():
    """The speed the report splits by and the intervals look up: the simulated banks' read cycles (STT-RAM
    banks at 1x read in 2), the point's main_rf_latency_x where the run does not report them, else 1; an
    effect row carries its design record's."""
    from rfmodel.calibrate.effects import bank_speed

    assert bank_speed({"params": {"main_rf_latency_x": 1}, "sim": {"main_rf_read_cycles": 2.0}}) == 2.0
    assert bank_speed({"params": {"main_rf_latency_x": 3}, "sim": {}}) == 3.0
    assert bank_speed({"params": {"main_rf_latency_x": 3}, "sim": {"main_rf_read_cycles": None}}) == 3.0
    assert bank_speed({"params": {}}) == 1.0
    assert bank_speed({"params": {"main_rf_latency_x": 6}, "bank_read_cycles": 12.0}) == 12.0


def test_effect_error_scale_is_also_given_per_bank_speed():
    """The effect intervals' scale, RMS of log((1 + model effect) / (1 + simulated effect)), over every row
    and apart by the point's main_rf_latency_x, by hand; a speed with fewer than four rows gets none."""
    from rfmodel.calibrate.effects import summarize

    row = _effect_row
    ones = [(0.10, 0.12), (0.0, -0.04), (0.2, 0.2), (-0.1, -0.05)]
    sixes = [(1.0, 1.6), (0.8, 1.0), (1.5, 1.2), (0.6, 0.5)]
    rows = [row({}, a, b) for a, b in ones] + [row({"main_rf_latency_x": 6}, a, b) for a, b in sixes]
    rows.append(row({"main_rf_latency_x": 3}, 0.5, 0.2))

    def rms(pairs):
        return np.sqrt(np.mean([np.log((1 + m) / (1 + s)) ** 2 for s, m in pairs]))

    out = summarize(rows)
    assert out["ipc_effect_log_sd"] == pytest.approx(rms(ones + sixes + [(0.5, 0.2)]), rel=1e-12)
    by = out["ipc_effect_log_sd_by_bank_speed"]
    assert list(by) == ["1", "6"]
    assert by["1"] == pytest.approx(rms(ones), rel=1e-12) and by["6"] == pytest.approx(rms(sixes), rel=1e-12)
    assert by["6"] > 3 * by["1"]


def test_effect_error_is_taken_apart_into_the_design_and_the_baseline():
    """The IPC effect's log error is the design's IPC log error less the baseline's at the same point, by
    hand: an error the two share cancels, an exact design leaves the baseline's whole, per bank speed; the
    worst rows say whose IPC the model has off."""
    from rfmodel.calibrate.effects import summarize

    def row(x, d_sim, d_mod, b_sim, b_mod):
        params = {"main_rf_latency_x": x} if x != 1 else {}
        ipcs = {"ipc_sim": d_sim, "ipc_model": d_mod, "ipc_base_sim": b_sim, "ipc_base_model": b_mod}
        return _effect_row(params, d_sim / b_sim - 1, d_mod / b_mod - 1, **ipcs)

    rows = [
        row(1, 1.0, 1.0, 1.0, 0.9),  # the baseline 10 % low: the effect 11 % high
        row(1, 2.0, 2.2, 1.0, 1.1),  # both 10 % high: the effect exact
        row(6, 0.5, 0.5, 0.2, 0.25),  # the baseline 25 % high at slow banks
        row(6, 0.6, 0.54, 0.3, 0.3),  # the design 10 % low
    ]
    ed = np.log([1.0, 1.1, 1.0, 0.9])
    eb = np.log([0.9, 1.1, 1.25, 1.0])
    parts = summarize(rows)["ipc_effect_error_parts"]
    assert list(parts) == ["all", "1x", "6x"]
    a = parts["all"]
    assert a["n"] == 4 and a["design"] == pytest.approx(np.sqrt(np.mean(ed**2)))
    assert a["baseline"] == pytest.approx(np.sqrt(np.mean(eb**2)))
    assert a["effect"] == pytest.approx(np.sqrt(np.mean((ed - eb) ** 2)))
    assert a["corr"] == pytest.approx(np.corrcoef(ed, eb)[0, 1])
    # the effect's log error is the one the intervals carry: log((1 + model effect) / (1 + sim effect))
    le = [np.log((1 + r["ipc_effect_model"]) / (1 + r["ipc_effect_sim"])) for r in rows]
    assert a["effect"] == pytest.approx(np.sqrt(np.mean(np.square(le))))
    assert parts["1x"]["effect"] == pytest.approx(abs(np.log(0.9)) / np.sqrt(2))  # the shared error cancels
    assert parts["6x"]["design"] == pytest.approx(abs(np.log(0.9)) / np.sqrt(2))
    assert parts["6x"]["baseline"] == pytest.approx(np.log(1.25) / np.sqrt(2))
    worst = summarize(rows)["worst_effects"][0]  # the 6x row whose baseline is 25 % high
    assert "the design's +0.0 %, the baseline's +25.0 %" in worst["explanation"]
    # rows without the baseline's IPC (a report of an earlier version) give no parts
    bare = [{k: v for k, v in r.items() if not k.startswith("ipc_base")} for r in rows]
    assert summarize(bare)["ipc_effect_error_parts"] == {}


def test_adopt_compares_nan_results_as_equal():
    """A point where the workload does not fit simulates to NaN metrics; simulated again it is the same
    result, which adoption must not take for a change (NaN != NaN in Python)."""
    from rfmodel.calibrate import _same

    nan = float("nan")
    assert _same({"ipc": nan, "stalls": [1.0, nan]}, {"ipc": nan, "stalls": [1.0, nan]})
    assert not _same({"ipc": nan}, {"ipc": 1.0}) and not _same({"ipc": 1.0}, {"ipc": 2.0})
    assert not _same({"ipc": 1.0}, {"ipc": 1.0, "cycles": 3})


def test_a_record_whose_simulation_ran_nothing_is_left_out_of_the_held_out_figures():
    """A point where no CTA fits the SM (the simulator runs no instruction, its IPC and L1D hit rate 0) is
    no measurement: it is counted apart (``n_not_run``), not entered into the IPC MAPE as an exact answer,
    and its metrics are not compared."""
    from rfmodel.analytic.calibration import coefficient_defaults, load_calibration
    from rfmodel.calibrate import _groups, heldout_errors
    from rfmodel.calibrate.effects import group_values

    ran = {"ipc": 0.5, "l1d_hit_rate": 0.3, "bank_conflict_stall_cycles": 10.0, "bank_conflicts": 5.0}
    ran.update(rf_reads=1000.0, rf_writes=500.0, warp_instructions=800.0, cycles=1600.0, warps=4.0)
    none = {k: 0.0 for k in ran} | {"bank_conflict_stall_cycles": np.nan, "cycles": np.inf}

    def rec(sim):
        return {"design": "baseline", "gpu": "fermi-gtx480", "workload": "saxpy", "params": {}, "sim": sim}

    recs = [rec(ran) | {"heldout": "workload"}, rec(none) | {"heldout": "workload"}]
    coef = {**coefficient_defaults(), **load_calibration()["designs"]["baseline"]["per_gpu"]["fermi-gtx480"]}
    out = heldout_errors("baseline", recs, coef, TINY)
    assert out["n_heldout"] == 1 and out["n_not_run"] == 1
    model = out["rows"][0]["ipc_model"]
    assert out["ipc_mape"] == pytest.approx(abs(model - 0.5) / 0.5, rel=1e-12)
    (g,) = _groups(recs, TINY)
    values = group_values(g, coef)
    assert values[0]["metrics"] and values[1]["metrics"] == {}


def test_a_report_names_the_calibration_file_alike_wherever_it_was_made(tmp_path):
    """The package's calibration is named from the project's folder (a report made in a checkout elsewhere
    named it by its absolute path, which the shipped report then had to have edited); another file keeps
    its absolute path."""
    from pathlib import Path

    from rfmodel.analytic.calibration import DEFAULT_FILE
    from rfmodel.calibrate import shown_path

    root = Path(__file__).resolve().parent.parent
    assert shown_path(DEFAULT_FILE) == "rfmodel/data/calibration/analytic.json"
    assert json.loads((root / "calib" / "report.json").read_text())["file"] == shown_path(DEFAULT_FILE)
    elsewhere = tmp_path / "cal.json"
    assert shown_path(elsewhere) == str(elsewhere.resolve())
