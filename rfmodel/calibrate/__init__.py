"""Calibration of the analytic models against the reference cycle simulator.

    from rfmodel.calibrate import QUICK_SWEEP, calibrate
    result = calibrate(QUICK_SWEEP, checkpoint_dir="calib/checkpoints", out="analytic.json")

Steps (docs/calibration.md):

1. :func:`sweep_jobs` expands a *sweep* (designs x GPUs x design points x workloads)
   into simulation jobs; every design registered in :func:`rfmodel.designs.base.design_names`
   that supports the simulator and declares ``calibration_params`` takes part, at the sweep's shared
   points it understands and its own ``calibration_points`` (:func:`design_points`).
2. :func:`run_jobs` simulates them through a runner (:mod:`rfmodel.runner`: local processes or
   Dask), each result appended to ``<checkpoint_dir>/results.jsonl`` (:class:`rfmodel.runner.ResultLog`,
   the studies' resume mechanism too) under ``key`` = hash of (design, params, workload, GPU, simulator
   version); existing results are reused, so an interrupted calibration resumes without redoing finished
   simulations.
3. :func:`split` holds out workloads *and* design points (by their names and parameters);
   :func:`fit_design` fits the design's coefficients on the training part with
   ``scipy.optimize.least_squares``.
4. :func:`heldout_errors` reports the error on the held-out part only;
   :func:`write_calibration` writes the versioned JSON file with provenance.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import subprocess
from pathlib import Path

import numpy as np

from rfmodel.analytic.calibration import SPEED_SCALE_KEY, params_of
from rfmodel.cache import SIM_SOURCES, source_hash
from rfmodel.calibrate.metrics import COUNT_FLOOR, ran
from rfmodel.errors import RfmodelError, unknown_key_message
from rfmodel.io import write_text
from rfmodel.runner import ResultLog, make_runner
from rfmodel.version import __version__
from rfmodel.workload.suite import DEFAULT_ARCH

FORMAT_VERSION = 1

#: the default sweep (``calib/run.py``): built-in and synthetic workloads on two GPUs; the points
#: apply to every design that understands all of their keys (SM fields or design parameters)
DEFAULT_SWEEP = {
    "name": "default",
    "gpus": ["fermi-gtx480", "volta-v100"],
    "workloads": [
        "saxpy",
        "sgemm_tiled",
        "fft_radix8",
        "reduce_sum",
        "spmv_csr",
        "histogram256",
        "black_scholes",
        "stencil7_3d",
        "kmeans_assign",
        "nbody_forces",
        "bfs_expand",
        # register-sensitive kernels (64-109 registers per thread) that fit both GPUs
        "gemm_micro8x8",
        "stencil2d_regtile",
        "fft_radix16",
        "rk4_duffing_dp",
        "synthetic:register-sensitive",
        "synthetic:cache-sensitive",
        "synthetic:fp-heavy",
        "synthetic:integer-heavy",
        # the papers' benchmarks (written here, executed traces; `rfmodel workload list --suite papers`), one
        # or two of each measured class: register-sensitive (sad, CFD flux), cache-sensitive and irregular
        # (bicg, bfs), compute-bound (hotspot, AES) and memory-bound (an LSTM step)
        "pa_sad",
        "rd_cfd_flux",
        "pb_bicg_1",
        "rd_bfs_1",
        "rd_hotspot",
        "is_aes",
        "dnn_lstm_step",
    ],
    "points": [
        {},
        {"num_banks": 4},
        {"num_banks": 8},
        {"num_banks": 32},
        {"regs_per_sm": 16384},  # a smaller register file: fewer resident warps (occupancy)
        {"main_rf_latency_x": 3},
        {"main_rf_latency_x": 6},
        {"main_rf_latency_x": 3, "active_warps": 4},
    ],
    # and each design's own points (``Design.calibration_points``: RFC's smaller cache, LTRF's shorter
    # intervals, STT's write buffers, CORF's other coalescing configurations)
    "design_points": True,
    # every run simulates the SM's whole share of the grid, as the default evaluate call does (its analytic
    # profile is then the same 32-warp share, scaled)
    "max_warps": None,
    "seed": 0,
    "holdout_fraction": 0.3,
}
#: a small sweep for tests and smoke runs
QUICK_SWEEP = {
    "name": "quick",
    "gpus": ["fermi-gtx480"],
    "workloads": ["saxpy", "fft_radix8", "reduce_sum", "synthetic:register-sensitive"],
    "points": [{"num_banks": 4}, {}, {"num_banks": 32}, {"main_rf_latency_x": 3}],
    "design_points": False,
    "max_warps": 8,
    "seed": 0,
    "holdout_fraction": 0.34,
}
SYNTHETIC = [
    "synthetic:register-sensitive",
    "synthetic:register-insensitive",
    "synthetic:cache-sensitive",
    "synthetic:cache-insensitive",
    "synthetic:integer-heavy",
    "synthetic:fp-heavy",
]
METRICS = (
    "ipc",
    "l1d_hit_rate",
    "bank_conflict_stall_cycles",
    "rf_reads",
    "rf_writes",
    "cycles",
    "warp_instructions",
)
#: design shares the fit and the report compare when both engines give them, by absolute error like a hit
#: rate (a register cache's hits, a write buffer's share of reads, the coalesced share of a coalescing
#: RF's multi-source instructions, a virtualized RF's allocated share of the file and of its resident
#: warps' registers), each with its weight in the fit relative to WEIGHTS["hit"]: a write buffer's hits
#: only shorten the banks' queue, so the IPC residuals outweigh them more
HIT_METRICS = ("rf_cache_hit_rate", "wb_hit_rate", "coalesced_share", "rf_active_fraction", "rf_occupancy")
HIT_WEIGHTS = {
    "rf_cache_hit_rate": 1.0,
    "wb_hit_rate": 0.3,
    "coalesced_share": 1.0,
    "rf_active_fraction": 0.5,
    "rf_occupancy": 0.5,
}


# ------------------------------------------------------------------------------------------ provenance
def simulator_version() -> str:
    """``git describe`` of the source tree (with the package version), else the package version."""
    root = Path(__file__).resolve().parent.parent.parent
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if out.returncode == 0 and out.stdout.strip():
            return f"rfmodel {__version__} ({out.stdout.strip()})"
    except (OSError, subprocess.SubprocessError):
        pass
    return f"rfmodel {__version__}"


def _sim_source_hash(design: str | None = None) -> str:
    """Hash of what decides a simulation's result (``rfmodel.cache.SIM_SOURCES``: the simulator, the designs'
    hooks and compiler passes, the workload generators and kernel files, the specs, and the modules at the
    package's top the simulator calls): checkpoints made by edited sources are not reused (a checkpoint of
    the simulator's L1D before an edit of ``rfmodel/setassoc.py`` was reused when the hash left it out).
    With ``design``, of the design folder only that design's module, the design modules it imports
    (transitively) and the shared ``base.py``: an edit of one design re-simulates only the designs
    that import its module (a design from another package: every design module counts)."""
    if design is None:
        return source_hash(*SIM_SOURCES)
    return _design_source_hash(design)


@functools.cache
def _design_source_hash(design: str) -> str:
    import re

    from rfmodel.cache import PKG_DIR
    from rfmodel.designs.base import get_design

    mod = type(get_design(design)).__module__
    folder = PKG_DIR / "designs"
    if not mod.startswith("rfmodel.designs."):
        return source_hash(*SIM_SOURCES)
    todo, seen = [mod.rsplit(".", 1)[-1]], set()
    while todo:
        name = todo.pop()
        f = folder / f"{name}.py"
        if name in seen or not f.is_file():
            continue
        seen.add(name)
        todo.extend(re.findall(r"rfmodel\.designs\.(\w+)", f.read_text(encoding="utf-8")))
    h = hashlib.sha1(source_hash(*(s for s in SIM_SOURCES if s != "designs")).encode())
    for name in sorted(seen | {"base", "__init__"}):
        h.update(name.encode())
        h.update((folder / f"{name}.py").read_bytes())
    return h.hexdigest()[:12]


#: the fields of a sweep job that decide its simulation (with the sources' hash: :func:`job_key`)
JOB_FIELDS = ("design", "params", "workload", "gpu", "max_warps", "seed")


def job_key(job: dict, sim_version: str) -> str:
    blob = json.dumps({**{k: job[k] for k in JOB_FIELDS}, "sim": sim_version}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


# ------------------------------------------------------------------------------------------ the sweep
#: the keys of a sweep: required, then optional with their types
SWEEP_REQUIRED = {"gpus": list, "workloads": (list, str), "points": list}
SWEEP_OPTIONAL = {
    "name": str,
    "max_warps": (int, type(None)),
    "seed": int,
    "holdout_fraction": (int, float),
    "designs": list,
    "stall_loss": str,
    "prior": (int, float),
    "per_gpu": bool,
    "effect_weight": (int, float),
    "design_points": bool,
}


def check_sweep(sweep, where: str = "sweep") -> dict:
    """A sweep (the JSON of ``rfmodel calibrate --sweep``) checked key by key: one error naming the key."""
    if not isinstance(sweep, dict):
        raise RfmodelError(f"{where}: a sweep is a JSON object with keys {', '.join(SWEEP_REQUIRED)}")
    known = {**SWEEP_REQUIRED, **SWEEP_OPTIONAL}
    for k in sweep:
        if k not in known:
            raise RfmodelError(f"{where}: {unknown_key_message(k, known)}")
    for k in SWEEP_REQUIRED:
        if k not in sweep:
            raise RfmodelError(f"{where}: missing key '{k}' ({', '.join(SWEEP_REQUIRED)} are required)")
    for k, t in known.items():
        if k in sweep and (not isinstance(sweep[k], t) or (t is int and isinstance(sweep[k], bool))):
            raise RfmodelError(f"{where}: key '{k}' = {sweep[k]!r} has the wrong type")
    if not sweep["gpus"] or not all(isinstance(g, str) for g in sweep["gpus"]):
        raise RfmodelError(f"{where}: 'gpus' must be a non-empty list of GPU names")
    if isinstance(sweep["workloads"], str) and sweep["workloads"] not in ("builtin", "builtin+synthetic"):
        raise RfmodelError(f"{where}: 'workloads' is a list of names, 'builtin' or 'builtin+synthetic'")
    if not sweep["points"] or not all(isinstance(p, dict) for p in sweep["points"]):
        raise RfmodelError(f"{where}: 'points' must be a non-empty list of parameter tables")
    if not 0 < sweep.get("holdout_fraction", 0.3) < 1:
        raise RfmodelError(f"{where}: 'holdout_fraction' must lie in (0, 1)")
    if not sweep.get("effect_weight", 0) >= 0:
        raise RfmodelError(f"{where}: 'effect_weight' must be at least 0 (0: no effect residuals in the fit)")
    # every job would fail later, one by one, with the sweep's fault (or none, for a duplicate)
    if sweep.get("max_warps") is not None and sweep["max_warps"] < 1:
        raise RfmodelError(f"{where}: 'max_warps' = {sweep['max_warps']} must be at least 1 (or null)")
    for k in ("seed", "prior"):
        if k in sweep and not sweep[k] >= 0:
            raise RfmodelError(f"{where}: '{k}' = {sweep[k]!r} must be at least 0")
    for k in ("gpus", "points") + (("workloads",) if isinstance(sweep["workloads"], list) else ()):
        seen = [json.dumps(x, sort_keys=True) for x in sweep[k]]
        twice = [x for i, x in enumerate(seen) if x in seen[:i]]
        if twice:
            raise RfmodelError(f"{where}: '{k}' lists {twice[0]} twice (its simulations would run twice)")
    return sweep


def sweep_workloads(sweep: dict) -> list[str]:
    from rfmodel.workload.suite import default_workloads

    wl = sweep["workloads"]
    if wl == "builtin+synthetic":
        return list(default_workloads()) + SYNTHETIC
    if wl == "builtin":
        return list(default_workloads())
    return list(wl)


def calibratable_designs(designs=None) -> list[str]:
    """Registered designs with the simulator hooks and ``calibration_params``."""
    from rfmodel.designs.base import Design, design_names, get_design

    out = []
    for name in designs or design_names():
        d = get_design(name)
        if not params_of(d):
            continue
        if type(d).sim_setup is Design.sim_setup:
            continue
        out.append(name)
    return out


def _unknown_names(design, sm, point: dict) -> list[str]:
    """The names of ``point`` that are neither an SM field nor one of ``design``'s parameters."""
    known = set(sm.to_dict()) | {"collector_units"} | set(design.parameters)
    return sorted(set(point) - known)


def point_applies(design, sm, point: dict) -> bool:
    """A sweep point applies to a design that understands every one of its keys."""
    return not _unknown_names(design, sm, point)


def point_id(point: dict) -> str:
    """A sweep point's identity: its parameters as canonical JSON (what the held-out split draws by, so
    that adding, moving or removing a point leaves every other point's side of the split alone)."""
    return json.dumps(point, sort_keys=True, default=str)


def design_points(sweep: dict, design, sm) -> list[dict]:
    """The points of ``sweep`` that apply to ``design`` on ``sm``: the sweep's shared ``points`` that it
    understands, then (unless the sweep's ``design_points`` is false) the design's own
    ``calibration_points`` not among them."""
    points = [p for p in sweep["points"] if point_applies(design, sm, p)]
    if sweep.get("design_points", True):
        seen = {point_id(p) for p in points}
        for p in design.calibration_points:
            unknown = _unknown_names(design, sm, p)
            if unknown:  # a design's own point is never dropped unread
                raise RfmodelError(
                    f"design {design.name!r}: its calibration point {p} names "
                    f"{unknown}, which is neither one of its parameters "
                    f"({', '.join(design.parameters) or 'none'}) nor an SM field"
                )
            if point_id(p) not in seen:
                seen.add(point_id(p))
                points.append(dict(p))
    return points


def sweep_jobs(sweep: dict, designs=None) -> list[dict]:
    """One job per (design, GPU, applicable point, workload) (:func:`design_points`)."""
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu

    jobs = []
    for d in calibratable_designs(designs or sweep.get("designs")):
        for gpu in sweep["gpus"]:
            for point in design_points(sweep, get_design(d), resolve_gpu(gpu)):
                for w in sweep_workloads(sweep):
                    jobs.append(
                        {
                            "design": d,
                            "gpu": gpu,
                            "params": dict(point),
                            "point": point_id(point),
                            "workload": w,
                            "max_warps": sweep.get("max_warps"),
                            "seed": sweep.get("seed", 0),
                        }
                    )
    return jobs


def simulate_job(job: dict) -> dict:
    """One simulation (run in a worker process); returns the record.  An error comes back as a
    ``RuntimeError`` with the original message (the library's exception types need not pickle)."""
    try:
        return _simulate_job(job)
    except Exception as exc:
        raise RuntimeError(f"{type(exc).__name__}: {exc}") from None


def _simulate_job(job: dict) -> dict:
    import warnings

    warnings.filterwarnings("ignore")
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import _point_sm, _simulate_workload, resolve_gpu
    from rfmodel.sim.engine import SimOptions, simulate_trace

    d = get_design(job["design"])
    sm = resolve_gpu(job["gpu"])
    _, trace = _simulate_workload(
        job["workload"], sm, arch=DEFAULT_ARCH, seed=job["seed"], max_warps=job["max_warps"]
    )
    point = dict(job["params"])
    typed = d.resolve({k: v for k, v in point.items() if k in d.parameters})
    run = simulate_trace(trace, _point_sm(sm, point), d, typed, SimOptions())
    rec = {
        k: float(v) for k, v in run.metrics.items() if isinstance(v, (int, float, np.integer, np.floating))
    }
    stalls = {str(k): float(v) for k, v in (run.stalls or {}).items() if float(v) > 0}
    # the structure events, for the energy and power of the design effects (rfmodel.calibrate.effects)
    from rfmodel.calibrate.effects import event_kinds

    events = {
        s: {k: float(v) for k, v in event_kinds(ev).items()}
        for s, ev in run.metrics.get("events", {}).items()
    }
    return {**job, "sim": rec, "stalls": stalls, "events": events}


def _try_simulate(job: dict) -> tuple[bool, object]:
    """``(True, record)``, or ``(False, the exception)`` when the simulation fails (any runner)."""
    try:
        return True, simulate_job(job)
    except Exception as exc:
        return False, exc


def _fit_job(args: tuple):
    """One design's fit (in a worker process); an error comes back as a ``RuntimeError`` with the original
    type and message, as :func:`simulate_job`'s (the library's exception types need not pickle, and one that
    does not takes the whole pool down as a "worker process died")."""
    try:
        return _fit_one(*args)
    except Exception as exc:
        raise RuntimeError(f"fitting {args[0] if args else '?'}: {type(exc).__name__}: {exc}") from None


#: the simulations' log inside the checkpoint folder (:class:`rfmodel.runner.ResultLog`)
LOG_NAME = "results.jsonl"


def _has_simulation(rec: dict) -> bool:
    return "sim" in rec


#: what a record's simulation is compared on when :func:`adopt_simulations` verifies it
ADOPT_FIELDS = ("sim", "stalls", "events")


def _same(a, b) -> bool:
    """Equal simulation results, a NaN equal to a NaN (a point where a workload does not fit, say), in
    nested dicts and lists too."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return a == b


def adopt_simulations(source, checkpoint_dir, *, verify: int = 1, seed: int = 0, progress=None) -> dict:
    """Take the simulations of another checkpoint log (``source``: a folder with ``results.jsonl``, or the
    file) into ``checkpoint_dir``'s under this tree's keys, after simulating a sample of them again.

    A record's key holds the hash of the sources that decide a simulation (:func:`job_key`), so an edit of
    any of them (a new kernel file, a simulator feature the presets leave off) makes every record of the
    sweep run again.  Where the edit leaves the sweep's simulations as they were, this reuses them: per
    design, ``verify`` records (at least one; chosen by a seeded hash of their keys) are simulated now and
    must give every counter, stall and event of the record (:data:`ADOPT_FIELDS`); then every record is kept
    under its new key with its own ``sim_version`` (the tree that made it) and ``adopted`` (the tree it was
    checked against and how many of its design's records were simulated again).  One record that differs
    refuses the whole log (:class:`RfmodelError` naming it and the first counters that differ) and nothing
    is written.  Records already in the destination stay.  Returns ``{"read", "verified", "adopted"}``."""
    source = Path(source)
    path = source / LOG_NAME if source.is_dir() else source
    if not path.is_file():
        raise RfmodelError(f"--adopt {source}: no checkpoint log ({LOG_NAME}) there")
    if int(verify) < 1:
        raise RfmodelError(f"--adopt-verify {verify}: at least 1 (records simulated again per design)")
    old = ResultLog(path, check=_has_simulation)
    described = simulator_version()
    svs: dict[str, str] = {}
    keyed = []
    for r in old.done.values():
        if not all(k in r for k in JOB_FIELDS):
            continue
        d = r["design"]
        if d not in svs:
            svs[d] = f"{described}#{_sim_source_hash(d)}"
        keyed.append((job_key(r, f"rfmodel {__version__}#{svs[d].rsplit('#', 1)[-1]}"), r))
    by_design: dict[str, list] = {}
    for k, r in keyed:
        by_design.setdefault(r["design"], []).append((k, r))
    sample = []
    for _d, items in sorted(by_design.items()):
        items = sorted(items, key=lambda kr: _bucket(f"adopt:{kr[0]}", seed))
        sample.extend(items[: int(verify)])
    for i, (_, r) in enumerate(sample):
        job = {k: r[k] for k in JOB_FIELDS}
        now = simulate_job({**job, "point": r.get("point", 0)})
        differ = [f for f in ADOPT_FIELDS if not _same(now.get(f), r.get(f))]
        if differ:
            f = differ[0]
            a, b = r.get(f) or {}, now.get(f) or {}
            moved = [k for k in sorted(set(a) | set(b)) if not _same(a.get(k), b.get(k))][:4]
            raise RfmodelError(
                f"--adopt {source}: {job['design']} on {job['workload']} ({job['gpu']}, {job['params']}) "
                f"simulates otherwise in this tree ({f}: "
                + ", ".join(f"{k} {a.get(k)} -> {b.get(k)}" for k in moved)
                + "): its simulations cannot be reused; nothing was adopted"
            )
        if progress:
            progress(i + 1, len(sample))
    log = ResultLog(Path(checkpoint_dir) / LOG_NAME, check=_has_simulation)
    n_per = {d: min(len(v), int(verify)) for d, v in by_design.items()}
    new = [(k, r) for k, r in keyed if k not in log]
    for k, r in new:
        log.add(k, {**r, "adopted": {"by": svs[r["design"]], "verified": n_per[r["design"]]}})
    return {"read": len(keyed), "verified": len(sample), "adopted": len(new)}


def run_jobs(
    jobs: list[dict],
    checkpoint_dir,
    *,
    workers: int = 2,
    progress=None,
    sim_version=None,
    limit: int | None = None,
    runner=None,
) -> tuple[list[dict], int]:
    """Simulate every job not yet in ``checkpoint_dir``; return (all records, simulations run now).

    The records are kept in ``<checkpoint_dir>/results.jsonl`` (:class:`rfmodel.runner.ResultLog`, keyed by
    :func:`job_key`); the folder's ``<key>.json`` files of earlier versions are read too, and copied into
    the log.  ``runner`` (:mod:`rfmodel.runner`; default: ``workers`` local processes) runs the
    simulations; only this process writes the log.  ``limit`` stops after that many new simulations (for
    tests of resumability).  Records come in the order of ``jobs``.
    """
    ckpt = Path(checkpoint_dir)
    ckpt.mkdir(parents=True, exist_ok=True)
    # results are keyed by what decides them (package version and the sources' hash), not by the commit:
    # a commit that leaves the simulator, a design and the workloads alone reuses that design's checkpoints
    if sim_version is not None:
        svs = {j["design"]: sim_version for j in jobs}
    else:
        described = simulator_version()
        svs = {d: f"{described}#{_sim_source_hash(d)}" for d in sorted({j["design"] for j in jobs})}
    log = ResultLog(ckpt / LOG_NAME, legacy=ckpt, check=_has_simulation)
    keys = [job_key(j, f"rfmodel {__version__}#{svs[j['design']].rsplit('#', 1)[-1]}") for j in jobs]
    waiting: dict[str, list[dict]] = {}  # the jobs of each key not yet simulated
    for k, j in zip(keys, jobs, strict=True):
        if k not in log:
            waiting.setdefault(k, []).append(j)
    todo = list(waiting)[:limit]
    done = len(jobs) - sum(len(v) for v in waiting.values())
    if progress:
        progress(done, len(jobs))
    ran = 0
    failed = []
    if runner is None:
        runner = make_runner(workers if len(todo) > 1 else 1)
    for i, (ok, value) in runner.run(_try_simulate, [waiting[k][0] for k in todo]):
        k = todo[i]
        if ok:
            log.add(k, {**value, "sim_version": svs[value["design"]]})
            ran += 1
        else:  # a design point a design rejects: reported, not fatal
            failed.extend({**j, "error": f"{type(value).__name__}: {value}"} for j in waiting[k])
        done += len(waiting[k])
        if progress:
            progress(done, len(jobs))
    run_jobs.failed = failed
    # the job's own fields over the record's: the key leaves out the point's place in the sweep
    kept = ((log[k], j) for k, j in zip(keys, jobs, strict=True) if k in log)
    return [{**{f: v for f, v in r.items() if f != "key"}, **j} for r, j in kept], ran


# ------------------------------------------------------------------------------------------ split
def _bucket(text: str, seed: int) -> float:
    return int(hashlib.sha256(f"{seed}:{text}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def split(records: list[dict], fraction: float = 0.3, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """Training records (workload and design point both in training) and held-out records (the rest).

    The held-out workloads are the ``round(fraction x n)`` ones (at least one, at most ``n - 1``) with the
    smallest seeded hash of their names; each design's held-out design points (of the points that apply to
    it, by the hash of their parameters, :func:`point_id`) likewise.  A record is held out when its
    workload *or* its point is.
    """
    wls = sorted({r["workload"] for r in records})

    def pick(items, tag):
        k = min(max(int(round(fraction * len(items))), 1), max(len(items) - 1, 0))
        return set(sorted(items, key=lambda x: _bucket(f"{tag}{x}", seed))[:k])

    hw = pick(wls, "")
    hp = {
        d: pick(sorted({r["point"] for r in records if r["design"] == d}), f"point:{d}:")
        for d in {r["design"] for r in records}
    }
    train, test = [], []
    for r in records:
        in_w, in_p = r["workload"] in hw, r["point"] in hp[r["design"]]
        if in_w or in_p:
            r["heldout"] = "+".join(x for x, y in (("workload", in_w), ("point", in_p)) if y)
            test.append(r)
        else:
            r.pop("heldout", None)
            train.append(r)
    return train, test


# ------------------------------------------------------------------------------------------ the model side
class _Group:
    """Records of one (design, GPU, workload) with the profile and a points-mode grid."""

    def __init__(self, design, gpu, workload, recs, max_warps, seed, reference_entry=None):
        from rfmodel.designs.base import get_design
        from rfmodel.evaluate import ANCHOR_DESIGN, PROFILE_WARPS, resolve_gpu, workload_profile

        self.d = get_design(design)
        self.sm = resolve_gpu(gpu)
        self.recs = recs
        # the anchor's reference (rfmodel.analytic.engine.anchor_factor): the baseline with its fitted
        # coefficients; the baseline's own fit anchors on the coefficients it is trying
        self.ref = get_design(ANCHOR_DESIGN)
        self.ref_coef = None if self.d.name == ANCHOR_DESIGN else coef_for(reference_entry or {}, gpu)
        self._anchors: dict = {}
        # the profile of exactly the simulated warps (the whole share when the sweep has no max_warps)
        mw = PROFILE_WARPS if max_warps is None else max_warps
        self.prof = workload_profile(workload, self.sm, seed=seed, max_warps=mw, share=max_warps is None)
        keys = sorted({k for r in recs for k in r["params"]})
        self.grid = {
            k: np.array([r["params"].get(k, self.d.param_value(self.sm, k)) for r in recs]) for k in keys
        }
        self.n_sim = np.array([r["sim"]["warp_instructions"] for r in recs])

    def predict(self, coef: dict, events: bool = False) -> dict:
        """The model's values at the group's records for coefficients ``coef``; ``events``: also the
        structure events and cycles (the profile's instructions) and the shares the design powers its
        structures by, for the energy accounting (:mod:`rfmodel.calibrate.effects`)."""
        g = {**self.grid, **{"calib." + k: v for k, v in coef.items()}}
        if not self.grid:
            g["_n"] = np.zeros(len(self.recs))
        from rfmodel.analytic.engine import run_analytic

        m = run_analytic(self.d, self.prof, self.sm, g, anchor=self.anchor(coef))
        n = len(self.recs)
        # the analytic counts are for the profile's instruction count; compare per instruction
        scale = self.n_sim / float(self.prof.n_instrs)
        out = {k: np.broadcast_to(m[k], (n,)).astype(float) for k in HIT_METRICS if k in m}
        for k in self.d.fit_metrics:  # a count for the profile's instructions is scaled to the simulated ones
            v = np.asarray(m[k], dtype=np.float64) * (scale if self.d.metric_kind(k) == "count" else 1.0)
            out[k] = np.broadcast_to(v, (n,)).astype(float)
        if events:
            from rfmodel.calibrate.effects import event_kinds

            out["cycles"] = np.broadcast_to(m["cycles"], (n,)).astype(float)
            out["events"] = {
                s: {k: np.broadcast_to(v, (n,)).astype(float) for k, v in event_kinds(ev).items()}
                for s, ev in m["events"].items()
            }
            for k in self.d.leakage_active.values():
                if k in m:
                    out[k] = np.broadcast_to(m[k], (n,)).astype(float)
            # every metric as the model gives it (counts for the profile's instructions)
            from rfmodel.calibrate.metrics import STANDARD

            out["metrics"] = {
                k: np.broadcast_to(np.asarray(m[k], dtype=np.float64), (n,))
                for k in (*STANDARD, *self.d.metrics)
                if k in m
            }
        return {
            **out,
            "ipc": np.broadcast_to(m["ipc"], (n,)).astype(float),
            "l1d_hit_rate": np.broadcast_to(m["l1d_hit_rate"], (n,)).astype(float),
            "bank_conflict_stall_cycles": np.broadcast_to(m["bank_conflict_stall_cycles"], (n,)) * scale,
            "rf_reads": np.broadcast_to(m["rf_reads"], (n,)) * scale,
            "rf_writes": np.broadcast_to(m["rf_writes"], (n,)) * scale,
        }

    def anchor(self, coef: dict):
        """The anchor of this group's profile (:class:`rfmodel.analytic.model.Anchor`: the factor of
        :func:`rfmodel.analytic.engine.anchor_factor`, and its curve over the L1D hit rate built on first
        use), as ``rfmodel.evaluate`` anchors: the reference's coefficients are ``coef`` for the baseline's
        own groups, else the fitted baseline's."""
        from rfmodel.analytic.engine import anchor_factor, lazy_anchor

        ref = coef if self.ref_coef is None else self.ref_coef
        # the Monte-Carlo model error does not enter the anchor (rfmodel.analytic.engine._reference_run)
        ref = {k: v for k, v in ref.items() if k not in ("ipc_factor", SPEED_SCALE_KEY)}
        key = tuple(sorted((k, float(v)) for k, v in ref.items()))
        if key not in self._anchors:
            if len(self._anchors) > 64:
                self._anchors.clear()
            grid = {"calib." + k: v for k, v in ref.items()}
            factor = anchor_factor(self.ref, self.prof, self.sm, grid)
            self._anchors[key] = lazy_anchor(self.ref, self.prof, self.sm, grid, factor)
        return self._anchors[key]


#: sweep key (added by :func:`calibrate`, never written) holding the fitted baseline entry that anchors the
#: other designs' groups (:meth:`_Group.anchor`)
ANCHOR_SWEEP_KEY = "_anchor"


def anchor_entry(sweep: dict):
    """The baseline entry that anchors the other designs: the sweep's :data:`ANCHOR_SWEEP_KEY`, else the
    package calibration's baseline."""
    if sweep.get(ANCHOR_SWEEP_KEY) is not None:
        return sweep[ANCHOR_SWEEP_KEY]
    from rfmodel.analytic.calibration import load_calibration
    from rfmodel.evaluate import ANCHOR_DESIGN

    return (load_calibration() or {}).get("designs", {}).get(ANCHOR_DESIGN)


def sweep_groups(design: str, checkpoints, *, workers: int = 2) -> list[_Group]:
    """The default sweep's records of ``design`` (read from ``checkpoints``, simulated where missing, as
    ``calib/run.py`` does), split into training and held out as the calibration splits them, in model
    groups (one per GPU and workload): what the diagnostic scripts of ``calib/`` read."""
    sweep = dict(DEFAULT_SWEEP)
    recs, _ = run_jobs(sweep_jobs(sweep, [design]), checkpoints, workers=workers)
    split(recs, sweep["holdout_fraction"], sweep["seed"])
    return _groups(recs, sweep)


def _groups(records, sweep) -> list[_Group]:
    by = {}
    for r in records:  # one group (one vectorized model call) per design, GPU and workload
        by.setdefault((r["design"], r["gpu"], r["workload"]), []).append(r)
    from rfmodel.evaluate import ANCHOR_DESIGN

    entry = anchor_entry(sweep) if any(d != ANCHOR_DESIGN for d, _g, _w in by) else None
    return [
        _Group(d, g, w, rs, sweep.get("max_warps"), sweep.get("seed", 0), entry)
        for (d, g, w), rs in sorted(by.items())
    ]


def record_values(records: list[dict], fitted: dict, sweep: dict) -> dict:
    """``{id(record): both engines' IPC, energy per instruction, power and metrics}``
    (:func:`rfmodel.calibrate.effects.group_values`) for every record of a fitted design, with its own
    coefficients, anchored as ``sweep`` anchors the calibration's groups."""
    from rfmodel.calibrate.effects import group_values

    values = {}
    for d in sorted({r["design"] for r in records}):
        if d not in fitted:
            continue
        for g in _groups([r for r in records if r["design"] == d], sweep):
            for r, v in zip(g.recs, group_values(g, coef_for(fitted[d], g.recs[0]["gpu"])), strict=True):
                values[id(r)] = v
    return values


#: default strength of the pull toward the declared defaults (see :func:`fit_design`)
PRIOR = 0.0
#: weights of the residual blocks: log IPC ratio, hit-rate error in units of 5 points, bank-stall error,
#: the design's own sizes (``Design.fit_metrics``: log ratio, counts per instruction), and a design's IPC
#: effect against the baseline at the same point (log ratio of the two engines' effects; sweep key
#: ``effect_weight`` overrides it)
WEIGHTS = {"ipc": 1.0, "hit": 0.5, "stall": 0.3, "size": 0.3, "effect": 3.0}
#: the bank-stall residual (sweep key ``stall_loss``): ``"relative"``, ``(model - sim) / max(sim, f)``, or
#: ``"log"``, ``log((model + f) / (sim + f))``, with ``f`` = :data:`FIT_COUNT_PAD` of the instructions, over
#: the runs where the simulator counted a bank conflict or stall (:func:`stall_measured`)
STALL_LOSS = "log"
STALL_LOSSES = ("relative", "log")
#: the pad of a count's residual in the fit, per instruction: twice the report's floor
#: (:data:`rfmodel.calibrate.metrics.COUNT_FLOOR`); at the report's own floor, or over every run as the
#: report counts, the fit weighs the smallest counts, which the report's median passes over, and came out
#: no better (docs/calibration.md, "Choices tried and kept")
FIT_COUNT_PAD = 2 * COUNT_FLOOR


def stall_loss_of(sweep: dict) -> str:
    """The sweep's ``stall_loss`` (default :data:`STALL_LOSS`); an unknown one is an error naming the
    allowed ones."""
    from rfmodel.errors import RfmodelError

    loss = sweep.get("stall_loss", STALL_LOSS)
    if loss not in STALL_LOSSES:
        raise RfmodelError(f"sweep key 'stall_loss' is {loss!r}; allowed: {', '.join(STALL_LOSSES)}")
    return loss


def fit_design(
    design: str,
    train: list[dict],
    sweep: dict,
    init: dict | None = None,
    max_nfev: int = 60,
    prior: float = 0.0,
    lock=None,
) -> dict:
    """Least-squares fit of every coefficient the design declares (``params_of``) on its training records.

    Residuals, stacked: ``log(IPC_model / IPC_sim)``; for the design metrics both engines give
    (``rf_cache_hit_rate``) the error over 0.05; and the bank-stall error relative to
    ``max(stall_sim, 2 % of the instructions)`` (:data:`FIT_COUNT_PAD`), over the runs where the simulator
    counted bank stalls (:func:`stall_measured`; or their log ratio, each padded by that 2 %: sweep key
    ``stall_loss``, :data:`STALL_LOSS`); the design's own counts padded alike; weighted by
    :data:`WEIGHTS`.  ``init``: start values (e.g. the baseline's fitted coefficients) for the names it
    holds.  Every coefficient but ``lock``
    (names: a design's :func:`shared_coefficients`, held at the baseline's values) moves.  Bounds are the
    declared ones; ``scipy.optimize.least_squares`` (trust-region reflective).
    """
    from scipy.optimize import least_squares

    from rfmodel.designs.base import get_design

    params = params_of(get_design(design))
    coef = {k: v[0] for k, v in params.items()}
    if init:
        coef.update({k: float(v) for k, v in init.items() if k in params})
    groups = _groups([r for r in train if r["design"] == design], sweep)
    if not groups or not params:
        return coef
    from rfmodel.analytic.throughput import NOT_FITTED

    names = [k for k in params if k not in NOT_FITTED and k not in (lock or ())]
    ipc_sim = [np.array([r["sim"]["ipc"] for r in g.recs]) for g in groups]
    st_sim = [np.array([r["sim"]["bank_conflict_stall_cycles"] for r in g.recs]) for g in groups]
    st_ok = [np.array([stall_measured(r["sim"]) for r in g.recs]) for g in groups]
    hit_sim = [{k: np.array([r["sim"].get(k, np.nan) for r in g.recs]) for k in HIT_METRICS} for g in groups]
    size_sim = [
        {k: np.array([float(r["sim"].get(k, np.nan)) for r in g.recs]) for k in g.d.fit_metrics}
        for g in groups
    ]
    stall_loss = stall_loss_of(sweep)
    # a design fitted over the baseline's coefficients also fits its effects: the baseline's own log IPC
    # error at each record's point, which the design's error less it is the effect's
    w_eff = float(sweep.get("effect_weight", WEIGHTS["effect"])) if lock else 0.0
    base_err = _baseline_errors(groups, train, sweep, coef) if w_eff > 0 else None

    def residuals(x):
        c = {**coef, **dict(zip(names, x, strict=True))}
        out = []
        for i, (g, s_ipc, s_st, ok, s_hit, s_size) in enumerate(
            zip(groups, ipc_sim, st_sim, st_ok, hit_sim, size_sim, strict=True)
        ):
            pr = g.predict(c)
            e_ipc = np.log(np.maximum(pr["ipc"], 1e-6) / np.maximum(s_ipc, 1e-6))
            out.append(WEIGHTS["ipc"] * e_ipc)
            if base_err is not None:  # 0 where no baseline record pairs with the design's
                b = base_err[i]
                out.append(w_eff * np.where(np.isfinite(b), e_ipc - np.nan_to_num(b), 0.0))
            floor = FIT_COUNT_PAD * g.n_sim
            if stall_loss == "log":  # symmetric: an overestimate by x costs what an underestimate by 1/x does
                e_st = np.log((np.maximum(pr["bank_conflict_stall_cycles"], 0.0) + floor) / (s_st + floor))
            else:
                e_st = (pr["bank_conflict_stall_cycles"] - s_st) / np.maximum(s_st, floor)
            out.append(WEIGHTS["stall"] * ok * e_st)
            for k in HIT_METRICS:
                if k in pr and np.isfinite(s_hit[k]).all():
                    out.append(WEIGHTS["hit"] * HIT_WEIGHTS[k] * (pr[k] - s_hit[k]) / 0.05)
            for k, s_k in s_size.items():  # log ratio, a count padded by FIT_COUNT_PAD
                pad = floor if g.d.metric_kind(k) == "count" else 1e-3
                seen = np.isfinite(s_k)
                e = np.log((np.maximum(pr[k], 0.0) + pad) / (np.where(seen, s_k, 0.0) + pad))
                out.append(WEIGHTS["size"] * np.where(seen, e, 0.0))
        if prior > 0:  # pull each coefficient toward its default, in units of its allowed range
            out.append(prior * np.sqrt(n_data) * (np.asarray(x) - x_prior) / (hi - lo))
        r = np.concatenate(out)
        return np.where(np.isfinite(r), r, 10.0)

    lo = np.array([params[k][1] for k in names], dtype=float)
    hi = np.array([params[k][2] for k in names], dtype=float)
    x_prior = np.array([params[k][0] for k in names], dtype=float)
    n_data = sum(len(g.recs) for g in groups)
    x0 = np.clip([coef[k] for k in names], lo + 1e-9 * (hi - lo), hi - 1e-9 * (hi - lo))
    # a coefficient no training point depends on (e.g. a configuration the sweep does not run) keeps its
    # start value: without a gradient the solver would move it anywhere inside its bounds
    r0 = residuals(x0)
    n_data_res = len(r0) - (len(names) if prior > 0 else 0)  # the prior's own terms move always
    r0 = r0[:n_data_res]
    active = np.zeros(len(names), dtype=bool)
    for i in range(len(names)):
        for to in (lo[i] + 0.1 * (hi[i] - lo[i]), hi[i] - 0.1 * (hi[i] - lo[i])):
            x = x0.copy()
            x[i] = to
            if np.any(np.abs(residuals(x)[:n_data_res] - r0) > 1e-12):
                active[i] = True
                break
    if not active.any():
        return {**coef, **dict(zip(names, map(float, x0), strict=True))}
    fixed = x0.copy()

    def reduced(xa):
        x = fixed.copy()
        x[active] = xa
        return residuals(x)

    r = least_squares(reduced, x0[active], bounds=(lo[active], hi[active]), diff_step=1e-3, max_nfev=max_nfev)
    x = fixed.copy()
    x[active] = r.x
    return {**coef, **dict(zip(names, map(float, x), strict=True))}


def _baseline_errors(groups, train: list[dict], sweep: dict, coef: dict) -> list[np.ndarray]:
    """Per group of a design's records, the baseline's analytic log IPC error (``log(model / sim)``) at
    each record's point (:func:`rfmodel.calibrate.effects.shared_point`: the baseline's own keys of it),
    with the baseline's coefficients in ``coef`` (the design's start, which holds them); NaN where
    ``train`` has no baseline record there."""
    from rfmodel.calibrate.effects import shared_keys, shared_point
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import ANCHOR_DESIGN

    base = [r for r in train if r["design"] == ANCHOR_DESIGN]
    bcoef = {k: v for k, v in coef.items() if k in params_of(get_design(ANCHOR_DESIGN))}
    err = {}
    for g in _groups(base, sweep):
        pr = np.asarray(g.predict(bcoef)["ipc"], dtype=np.float64)
        keys = shared_keys(g.recs[0]["gpu"])
        for r, m in zip(g.recs, pr, strict=True):
            at = (r["gpu"], r["workload"], shared_point(r, keys))
            err[at] = np.log(max(m, 1e-6) / max(r["sim"]["ipc"], 1e-6))
    out = []
    for g in groups:
        keys = shared_keys(g.recs[0]["gpu"])
        at = [(r["gpu"], r["workload"], shared_point(r, keys)) for r in g.recs]
        out.append(np.array([err.get(a, np.nan) for a in at]))
    return out


def stall_error(model: float, sim: dict) -> float:
    """The bank-stall error of one run, the report's one definition of a count's error
    (:mod:`rfmodel.calibrate.metrics`): ``(model - sim) / max(sim, f)`` with ``f`` =
    :data:`~rfmodel.calibrate.metrics.COUNT_FLOOR` of a stall cycle per instruction, over every run that
    ran (one where every operand found its bank free counts too: a model that predicts stalls there errs)."""
    s = sim["bank_conflict_stall_cycles"]
    return (float(model) - s) / max(s, COUNT_FLOOR * sim["warp_instructions"])


def stall_measured(sim: dict) -> bool:
    """Whether the simulator counted a bank conflict or a bank-stall cycle in this run: the runs the fit's
    stall residual covers (:data:`STALL_LOSS`)."""
    return sim.get("bank_conflicts", 0.0) > 0 or sim.get("bank_conflict_stall_cycles", 0.0) > 0


def coef_for(entry: dict, gpu: str) -> dict:
    """A design's coefficients for one GPU: ``entry`` is a plain coefficient dict or a fitted entry
    ``{"coefficients": shared, "per_gpu": {gpu: values}}``."""
    if "coefficients" not in entry:
        return entry
    return {**entry["coefficients"], **entry.get("per_gpu", {}).get(gpu, {})}


def heldout_errors(design: str, test: list[dict], coef: dict, sweep: dict) -> dict:
    """Errors of the calibrated model on held-out records: per-design summary and worst cases.

    ``coef``: coefficients, or a fitted entry with per-GPU values (:func:`coef_for`).  A record whose
    simulation ran no instruction (no CTA fits the point's SM; the model then has no warps either) is left
    out of every figure, counted as ``n_not_run``: its zero IPC, hit rate and counts would enter the means as
    exact answers."""

    mine = [r for r in test if r["design"] == design]
    groups = _groups([r for r in mine if ran(r["sim"])], sweep)
    not_run = len(mine) - sum(len(g.recs) for g in groups)
    rows = []
    for g in groups:
        pred = g.predict(coef_for(coef, g.recs[0]["gpu"]))
        for i, rec in enumerate(g.recs):
            s = rec["sim"]
            rows.append(
                {
                    "gpu": rec["gpu"],
                    "workload": rec["workload"],
                    "params": rec["params"],
                    "heldout": rec["heldout"],
                    "ipc_sim": s["ipc"],
                    "ipc_model": float(pred["ipc"][i]),
                    "ipc_ape": abs(pred["ipc"][i] - s["ipc"]) / max(s["ipc"], 1e-9),
                    "sim_stalls": rec.get("stalls", {}),
                    "hit_rate_ae": abs(pred["l1d_hit_rate"][i] - s["l1d_hit_rate"]),
                    "bank_stall_sim": s["bank_conflict_stall_cycles"],
                    "bank_stall_model": float(pred["bank_conflict_stall_cycles"][i]),
                    "bank_stall_rel_err": stall_error(pred["bank_conflict_stall_cycles"][i], s),
                    "rf_access_rel_err": (
                        pred["rf_reads"][i] + pred["rf_writes"][i] - s["rf_reads"] - s["rf_writes"]
                    )
                    / max(s["rf_reads"] + s["rf_writes"], 1.0),
                    **{f"{k}_sim": s[k] for k in HIT_METRICS if k in s and k in pred},
                    **{f"{k}_model": float(pred[k][i]) for k in HIT_METRICS if k in s and k in pred},
                }
            )
    if not rows:
        return {"n_heldout": 0, "n_not_run": not_run}
    ape = np.array([r["ipc_ape"] for r in rows])
    bs = np.array([r["bank_stall_rel_err"] for r in rows])
    tot_sim = sum(r["bank_stall_sim"] for r in rows)
    tot_model = sum(r["bank_stall_model"] for r in rows)
    worst = sorted(rows, key=lambda r: -r["ipc_ape"])[:5]
    for w in worst:
        w["explanation"] = _explain(w)
    extra = {}
    for k in HIT_METRICS:
        design_hit = [abs(r[f"{k}_model"] - r[f"{k}_sim"]) for r in rows if f"{k}_sim" in r]
        if design_hit:
            extra[f"{k}_mae"] = float(np.mean(design_hit))
    return {
        "n_heldout": len(rows),
        "n_not_run": not_run,
        **extra,
        "ipc_mape": float(ape.mean()),
        "ipc_ape_p90": float(np.quantile(ape, 0.9)),
        "hit_rate_mae": float(np.mean([r["hit_rate_ae"] for r in rows])),
        "n_stall": int(len(bs)),
        "bank_stall_rel_err": float(np.median(np.abs(bs))) if len(bs) else None,
        "bank_stall_rel_err_mean": float(np.mean(np.abs(bs))) if len(bs) else None,
        "bank_stall_within_20pct": float(np.mean(np.abs(bs) <= 0.2)) if len(bs) else None,
        "bank_stall_total_rel_err": (tot_model - tot_sim) / tot_sim if tot_sim > 0 else None,
        "rf_access_rel_err": float(np.mean([abs(r["rf_access_rel_err"]) for r in rows])),
        "per_gpu_ipc_mape": {
            g: float(np.mean([r["ipc_ape"] for r in rows if r["gpu"] == g]))
            for g in sorted({r["gpu"] for r in rows})
        },
        "worst": worst,
        "rows": rows,
    }


def _explain(row: dict) -> str:
    """What is known about a held-out miss: the direction, the simulator's dominant stall reasons and the
    facts that single out the point (slow banks, a poor L1D estimate)."""
    over = row["ipc_model"] > row["ipc_sim"]
    parts = [f"model {'over' if over else 'under'}estimates IPC"]
    st = row.get("sim_stalls") or {}
    total = sum(st.values())
    if total > 0:
        top = sorted(st.items(), key=lambda kv: -kv[1])[:3]
        parts.append("simulator stalls: " + ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in top))
    x = row["params"].get("main_rf_latency_x", 1)
    if x and x > 1:
        parts.append(
            f"main-RF banks at {x:g}x: the simulator times every access in its bank (reads and result "
            "writes); the model adds the bank time to each dependence and queue"
        )
    if row["hit_rate_ae"] > 0.1:
        parts.append(f"its L1D hit rate (LRU from stack distances) is off by {row['hit_rate_ae']:.2f}")
    return "; ".join(parts)


# ------------------------------------------------------------------------------------------ output
def write_calibration(path, fitted: dict, sweep: dict, report: dict, sim_version: str) -> dict:
    data = {
        "format": FORMAT_VERSION,
        "version": _dt.datetime.now(_dt.UTC).strftime("%Y%m%d.%H%M%S"),
        "file": Path(path).name,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "simulator_version": sim_version,
        "rfmodel_version": __version__,
        "sweep": sweep,
        "seed": sweep.get("seed", 0),
        "designs": {
            d: {
                **(c if "coefficients" in c else {"coefficients": c}),
                "heldout": {k: v for k, v in report.get(d, {}).items() if k not in ("rows", "worst")},
            }
            for d, c in fitted.items()
        },
    }
    write_text(Path(path), json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    return data


def fit_procedure(design, train, sweep, init, max_nfev, prior=None, per_gpu_fit=None) -> dict:
    """Shared coefficients over every GPU, then (``per_gpu_fit``) per-GPU values refined from them:
    ``{"coefficients": shared, "per_gpu": {gpu: values}}``.  ``prior``: :func:`fit_design`'s pull
    toward the declared defaults.  Defaults: the sweep's ``prior`` and ``per_gpu`` (else
    :data:`PRIOR`, True)."""
    prior = sweep.get("prior", PRIOR) if prior is None else prior
    per_gpu_fit = sweep.get("per_gpu", True) if per_gpu_fit is None else per_gpu_fit
    base = init if init and "coefficients" in init else ({"coefficients": init} if init else None)
    gpus = sorted({r["gpu"] for r in train if r["design"] == design})
    if design != "baseline" and base is not None:
        return _fit_on_baseline(design, train, sweep, base, gpus, max_nfev, prior, per_gpu_fit)
    init = base["coefficients"] if base else None
    shared = fit_design(design, train, sweep, init=init, max_nfev=max_nfev, prior=prior)
    per_gpu = {}
    if len(gpus) > 1 and per_gpu_fit:
        for g in gpus:
            sub = [r for r in train if r["gpu"] == g]
            per_gpu[g] = fit_design(
                design, sub, sweep, init=shared, max_nfev=max(max_nfev // 2, 5), prior=prior
            )
    return {"coefficients": shared, "per_gpu": per_gpu}


def shared_coefficients(design) -> set:
    """The coefficients ``design`` shares with the baseline (the interval model's and the banks'): a design
    takes the baseline's fitted values of them, per GPU, so that the two engines' errors the baseline and
    the design have in common (dependence chains, memory, the schedule) cancel in the design's effect."""
    from rfmodel.designs.base import get_design

    return set(params_of(get_design("baseline"))) & set(params_of(get_design(design)))


def _fit_on_baseline(design, train, sweep, base, gpus, max_nfev, prior, per_gpu_fit) -> dict:
    """:func:`fit_procedure` of a design over the baseline's fit ``base``: only the design's own terms move,
    over every GPU (with the baseline's shared coefficients) and then per GPU (with the baseline's values
    on that GPU)."""
    lock = shared_coefficients(design)
    shared = fit_design(
        design, train, sweep, init=base["coefficients"], max_nfev=max_nfev, prior=prior, lock=lock
    )
    per_gpu = {}
    if len(gpus) > 1 and per_gpu_fit:
        for g in gpus:
            start = {**shared, **{k: v for k, v in base.get("per_gpu", {}).get(g, {}).items() if k in lock}}
            sub = [r for r in train if r["gpu"] == g]
            per_gpu[g] = fit_design(
                design, sub, sweep, init=start, max_nfev=max(max_nfev // 2, 5), prior=prior, lock=lock
            )
    return {"coefficients": shared, "per_gpu": per_gpu}


def _fit_one(design, train, test, sweep, init, max_nfev, coverage_samples=0, fold_inits=None):
    """:func:`fit_procedure`, its held-out report and, with ``coverage_samples``, the model-error scale
    (:func:`cv_spread`, started from ``fold_inits``) and the Monte-Carlo coverage.  Returns
    ``(coefficients, report, fold fits)``."""
    fold_fits = {}
    coef = fit_procedure(design, train, sweep, init, max_nfev)
    rep = heldout_errors(design, test, coef, sweep)
    rep["n_train"] = sum(1 for r in train if r["design"] == design)
    if coverage_samples:
        rep["train_log_ipc_rms"] = training_spread(design, train, coef, sweep)
        # the model's error on workloads it was not fitted on (cross-validation inside the training set):
        # the training error alone understates it
        by_speed: dict = {}
        spread = cv_spread(
            design,
            train,
            sweep,
            init=init,
            max_nfev=max(max_nfev // 3, 5),
            fold_inits=fold_inits,
            fits_out=fold_fits,
            by_speed_out=by_speed,
        )
        rep["cv_log_ipc_rms"] = spread
        coef["model_log_ipc_sd"] = spread
        if len(by_speed) > 1:  # and per speed of the banks, where the sweep has more than the SM's own
            rep["cv_log_ipc_rms_by_bank_speed"] = dict(by_speed)
            base = (init or {}).get("model_log_ipc_sd_by_bank_speed") if design != "baseline" else None
            by_speed, grown = grown_by_baseline(by_speed, base)
            if grown:
                rep["cv_log_ipc_rms_grown_by_baseline"] = {k: by_speed[k] for k in grown}
            coef["model_log_ipc_sd_by_bank_speed"] = by_speed
        unc = default_uncertainty(spread, by_speed)
        rep["mc_coverage"] = mc_coverage(
            design, test, coef, sweep, unc, coverage_samples, sweep.get("seed", 0)
        )
    return coef, rep, fold_fits


def calibrate(
    sweep: dict | None = None,
    *,
    checkpoint_dir="calib/checkpoints",
    out=None,
    report_path=None,
    workers: int = 2,
    progress=None,
    designs=None,
    limit=None,
    max_nfev: int = 30,
    progress_fit=None,
    coverage_samples: int = 0,
    runner=None,
) -> dict:
    """Run the sweep (resumable), fit every calibratable design, report held-out errors, write files.
    ``runner`` (:mod:`rfmodel.runner`; default ``workers`` local processes) runs the simulations and the
    designs' fits."""
    from rfmodel.errors import expect_int
    from rfmodel.limits import MAX_COVERAGE_SAMPLES

    coverage_samples = expect_int("coverage_samples", coverage_samples, low=0, high=MAX_COVERAGE_SAMPLES)
    sweep = dict(sweep or DEFAULT_SWEEP)
    stall_loss_of(sweep)  # a bad fitting key fails before any simulation
    sv = f"{simulator_version()}#{_sim_source_hash()}"
    jobs = sweep_jobs(sweep, designs)
    records, ran = run_jobs(
        jobs, checkpoint_dir, workers=workers, progress=progress, limit=limit, runner=runner
    )
    failed = getattr(run_jobs, "failed", [])
    result = {
        "sweep": sweep,
        "simulations": len(records),
        "simulated_now": ran,
        "jobs": len(jobs),
        "simulator_version": sv,
        "workloads": sweep_workloads(sweep),
        "failed": [{k: f[k] for k in ("design", "gpu", "params", "workload", "error")} for f in failed],
        "designs": {},
    }
    if len(records) + len(failed) < len(jobs):
        result["incomplete"] = True
        return result
    if not records:
        first = failed[0]["error"] if failed else "no jobs"
        raise RfmodelError(
            f"calibration: none of the {len(jobs)} simulations succeeded (first error: "
            f"{first}); nothing was fitted or written"
        )
    train, test = split(records, sweep.get("holdout_fraction", 0.3), sweep.get("seed", 0))
    fitted, report = {}, {}
    order = sorted({r["design"] for r in records}, key=lambda d: (d != "baseline", d))
    base_folds = None
    if "baseline" in order:
        # the baseline's fold fits are the other designs' fold start points (cv_spread)
        fitted["baseline"], report["baseline"], base_folds = _fit_one(
            "baseline", train, test, sweep, None, max_nfev, coverage_samples
        )
        if progress_fit:
            progress_fit("baseline", report["baseline"])
    rest = [d for d in order if d != "baseline"]
    # other designs start from the baseline's fitted interval coefficients and are anchored on its fit (or,
    # without the baseline in this run, on the package's); fitted in parallel
    fit_runner = runner if runner is not None else make_runner(workers if len(rest) > 1 else 1)
    anchored = {**sweep, ANCHOR_SWEEP_KEY: fitted.get("baseline") or anchor_entry(sweep)}
    fit_jobs = [
        (d, train, test, anchored, fitted.get("baseline"), max_nfev, coverage_samples, base_folds)
        for d in rest
    ]
    for k, (fit, rep, _) in fit_runner.run(_fit_job, fit_jobs):
        d = rest[k]
        fitted[d], report[d] = fit, rep
        if progress_fit:
            progress_fit(d, report[d])
    result["designs"] = {d: {**fitted[d], **report[d]} for d in fitted}
    # the design effects against the baseline at the same point, per design over its held-out records
    from rfmodel.calibrate.effects import effect_report

    eff = effect_report(records, record_values(records, fitted, anchored))
    for d, e in eff["designs"].items():
        result["designs"][d]["effects"] = e
        if e.get("ipc_effect_log_sd") is not None:  # the effect intervals' scale (rfmodel.evaluate.compare)
            sd = e["ipc_effect_log_sd"]
            fitted[d]["model_log_effect_sd"] = result["designs"][d]["model_log_effect_sd"] = sd
            by = e.get("ipc_effect_log_sd_by_bank_speed") or {}
            if len(by) > 1:  # and per speed of the banks, where the sweep has more than the SM's own
                fitted[d]["model_log_effect_sd_by_bank_speed"] = by
                result["designs"][d]["model_log_effect_sd_by_bank_speed"] = by
    for d, e in eff["metrics"].items():
        result["designs"][d]["metrics"] = e
    result["ranking"] = eff["ranking"]
    if out:
        write_calibration(out, fitted, sweep, report, sv)
        result["file"] = shown_path(out)
    if report_path:
        slim = {d: {k: v for k, v in r.items() if k != "rows"} for d, r in result["designs"].items()}
        write_text(Path(report_path), json.dumps({**result, "designs": slim}, indent=2, default=str) + "\n")
    return result


def shown_path(path) -> str:
    """``path`` as a report names it: relative to the project's folder (the package's parent) where it lies
    inside it, so that a report made anywhere names the package's own calibration alike, else absolute."""
    p = Path(path).resolve()
    root = Path(__file__).resolve().parent.parent.parent
    return p.relative_to(root).as_posix() if p.is_relative_to(root) else str(p)


# ------------------------------------------------------------------------------------------ MC coverage
def training_spread(design: str, train: list[dict], coef: dict, sweep: dict) -> float:
    """RMS of ``log(IPC_model / IPC_sim)`` on the training records: the model's own error scale."""
    groups = _groups([r for r in train if r["design"] == design], sweep)
    errs = [
        np.log(
            np.maximum(g.predict(coef_for(coef, g.recs[0]["gpu"]))["ipc"], 1e-6)
            / np.maximum([r["sim"]["ipc"] for r in g.recs], 1e-6)
        )
        for g in groups
    ]
    return float(np.sqrt(np.mean(np.concatenate(errs) ** 2))) if errs else 0.0


def cv_folds(train: list[dict], sweep: dict, folds: int = 3) -> list[frozenset]:
    """The training workloads in ``folds`` groups (seeded hash): the workloads each fold leaves out."""
    wls = sorted({r["workload"] for r in train}, key=lambda w: _bucket(f"cv{w}", sweep.get("seed", 0)))
    return [frozenset(wls[k::folds]) for k in range(min(folds, len(wls)))] if len(wls) > 1 else []


def cv_spread(
    design: str,
    train: list[dict],
    sweep: dict,
    *,
    init,
    folds: int = 3,
    max_nfev: int = 10,
    fold_inits: dict | None = None,
    fits_out: dict | None = None,
    stall_errs: list | None = None,
    by_speed_out: dict | None = None,
) -> float:
    """RMS of ``log(IPC_model / IPC_sim)`` out of fold: each group of :func:`cv_folds` is predicted by
    :func:`fit_procedure` (at most ``max_nfev`` evaluations) on the other training workloads.  The
    start point is ``fold_inits[fold]`` when given (the baseline's fit on that fold's training part,
    so that no coefficient has seen the left-out workloads), else ``init``; a design other than the
    baseline is then also anchored on that fold fit (:data:`ANCHOR_SWEEP_KEY`), as the calibration anchors
    it on the baseline's fit whose shared coefficients it takes: anchored on the full fit while its shared
    coefficients were the fold's, BOW's scale was 0.219 where its folds' own error is 0.052
    (calib/report.json's ``cv_log_ipc_rms`` before and after).  ``fits_out``
    receives the fold fits.  The training error understates the error on new workloads; this is the
    model-error scale the Monte-Carlo engine carries (``model_log_ipc_sd``).  ``stall_errs`` receives the
    out-of-fold bank-stall errors (the report's, on the runs that measure stalls); ``by_speed_out`` the same
    RMS per speed of the register banks (:func:`rfmodel.calibrate.effects.bank_speed`, keyed by its read
    cycles as text; speeds with at least ``LOG_SD_MIN_RECORDS`` records): at slow banks the error is several
    times the SM's own (``model_log_ipc_sd_by_bank_speed``)."""
    from rfmodel.calibrate.effects import LOG_SD_MIN_RECORDS, bank_speed
    from rfmodel.evaluate import ANCHOR_DESIGN

    recs = [r for r in train if r["design"] == design]
    errs, speeds = [], []
    for out in cv_folds(train, sweep, folds):
        start = (fold_inits or {}).get(out, init)
        fold_sweep = sweep
        if design != ANCHOR_DESIGN and out in (fold_inits or {}):
            fold_sweep = {**sweep, ANCHOR_SWEEP_KEY: fold_inits[out]}
        fit = fit_procedure(
            design, [r for r in recs if r["workload"] not in out], fold_sweep, start, max_nfev
        )
        if fits_out is not None:
            fits_out[out] = fit
        for g in _groups([r for r in recs if r["workload"] in out], fold_sweep):
            sim = np.array([r["sim"]["ipc"] for r in g.recs])
            pr = g.predict(coef_for(fit, g.recs[0]["gpu"]))
            errs.append(np.log(np.maximum(pr["ipc"], 1e-6) / np.maximum(sim, 1e-6)))
            speeds.extend(bank_speed(r) for r in g.recs)
            if stall_errs is not None:
                st = pr["bank_conflict_stall_cycles"]
                stall_errs.extend(stall_error(st[i], r["sim"]) for i, r in enumerate(g.recs) if ran(r["sim"]))
    if not errs:
        return 0.0
    e, x = np.concatenate(errs), np.asarray(speeds)
    if by_speed_out is not None:
        for c in np.unique(x):
            if np.sum(x == c) >= LOG_SD_MIN_RECORDS:
                by_speed_out[f"{c:g}"] = float(np.sqrt(np.mean(e[x == c] ** 2)))
    return float(np.sqrt(np.mean(e**2)))


def mc_coverage(
    design: str,
    test: list[dict],
    coef: dict,
    sweep: dict,
    uncertainty: dict,
    samples: int = 40,
    seed: int = 0,
) -> dict:
    """Fraction of held-out simulator IPCs inside the Monte-Carlo 95 % interval of the calibrated model.

    Each sample perturbs the workload profile (:func:`rfmodel.analytic.montecarlo.perturb_profile`) and
    the coefficients named in ``uncertainty`` exactly as ``evaluate(method="montecarlo")`` does.
    """
    from rfmodel.analytic.montecarlo import (
        QUANTILES,
        WORKLOAD_KEYS,
        draw,
        model_error_entries,
        perturb_coefficients,
        perturb_profile,
    )
    from rfmodel.calibrate.effects import bank_speed

    groups = _groups([r for r in test if r["design"] == design], sweep)
    rng = np.random.Generator(np.random.PCG64(seed))
    inside, widths, speeds = [], [], []
    for g in groups:
        f = {k: draw(uncertainty[k], samples, rng) for k in sorted(uncertainty)}
        prof0 = g.prof
        ipcs = []
        for i in range(samples):
            fi = {k: float(v[i]) for k, v in f.items()}
            g.prof = perturb_profile(prof0, {k: v for k, v in fi.items() if k in WORKLOAD_KEYS})
            c = perturb_coefficients(coef_for(coef, g.recs[0]["gpu"]), fi)
            ipcs.append(g.predict({**c, **model_error_entries(uncertainty)})["ipc"])
        g.prof = prof0
        ipcs = np.array(ipcs)
        lo, hi = np.quantile(ipcs, QUANTILES[0], axis=0), np.quantile(ipcs, QUANTILES[1], axis=0)
        sim = np.array([r["sim"]["ipc"] for r in g.recs])
        inside.extend(((sim >= lo) & (sim <= hi)).tolist())
        widths.extend(((hi - lo) / np.maximum(sim, 1e-9)).tolist())
        speeds.extend(bank_speed(r) for r in g.recs)
    # and per speed of the register banks (:func:`rfmodel.calibrate.effects.bank_speed`): the model's error
    # is several times larger at slow banks than at the SM's own
    inside_a, speeds_a = np.asarray(inside, dtype=bool), np.asarray(speeds)
    by_speed = {f"{x:g}": float(np.mean(inside_a[speeds_a == x])) for x in np.unique(speeds_a)}
    return {
        "n": len(inside),
        "coverage": float(np.mean(inside)) if inside else float("nan"),
        "coverage_by_bank_speed": by_speed,
        "median_rel_width": float(np.median(widths)) if widths else float("nan"),
        "uncertainty": {k: list(v) for k, v in uncertainty.items()},
        "samples": samples,
    }


def grown_by_baseline(by_speed: dict, base: dict | None) -> tuple[dict, list[str]]:
    """A design's model-error scale per bank speed (``{read_cycles: scale}``, :func:`cv_spread`) carried to
    the slower speeds the baseline's training measured and the design's did not, grown as the baseline's
    grows from the design's slowest speed (the baseline's scale interpolated there as
    :class:`rfmodel.analytic.montecarlo.BankSpeedScale` does): a design whose slow points are all held out
    (BOW, Malekeh, LTRF+ and LTRFconf at 6x in the default sweep) would otherwise take its slowest trained
    speed's scale at 6x, where its IPC errors are about the baseline's (the report's error parts: BOW 0.097
    against the baseline's 0.095 at 6x).  Returns the table and the speeds added, as text."""
    from rfmodel.analytic.montecarlo import BankSpeedScale

    if not base or len(by_speed) < 2:
        return by_speed, []
    top = max(by_speed, key=float)
    ref = BankSpeedScale.of(base)
    at_top = float(ref.at(float(top)))
    grown = [k for k in sorted(base, key=float) if float(k) > float(top)]
    if at_top <= 0.0 or not grown:
        return by_speed, []
    out = dict(by_speed)
    for k in grown:
        out[k] = by_speed[top] * float(ref.at(float(k))) / at_top
    return out, grown


def default_uncertainty(spread: float, by_speed: dict | None = None) -> dict:
    """The uncertainty spec of the coverage check: workload parameters +-10 %, and the model's own
    error scale ``spread`` carried by ``ipc_factor`` (lognormal), per bank speed where ``by_speed`` has more
    than one (``{read_cycles: scale}``), as ``model_error="calibrated"`` does."""
    if by_speed and len(by_speed) > 1:
        width = {k: max(v, 0.01) for k, v in by_speed.items()}
    else:
        width = max(spread, 0.01)
    return {
        "mem_fraction": ("normal", 0.1),
        "hit_rate": ("normal", 0.1),
        "reads_per_instr": ("normal", 0.05),
        "ipc_factor": ("lognormal", width),
    }
