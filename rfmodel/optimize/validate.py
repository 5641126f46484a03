"""The optimizer's front in the cycle simulator: the K most different Pareto points in both engines.

:func:`validate` picks the points by farthest-point sampling over the front's objectives
(:func:`most_different`), runs each in both engines' default ``evaluate`` path (:func:`simulate_point`, a job
any :mod:`rfmodel.runner` runner can run) and sets the figures side by side with the relative error and the
share of pairs of points both engines order alike; and each point's IPC effect against the baseline at the
same SM point (:func:`reference_params`) in both engines, with the error in points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rfmodel.errors import expect_int
from rfmodel.evaluate import evaluate, resolve_gpu
from rfmodel.optimize.problem import OptimizeResult, metric
from rfmodel.runner import SerialRunner

#: metrics compared between the engines by :func:`validate`
VALIDATED = ("time_ns", "ipc", "power_mw", "energy_pj")


def most_different(f: np.ndarray, k: int) -> list[int]:
    """``k`` rows of ``f`` spread over the front: objectives scaled to [0, 1], the best of the first objective
    first, then each time the row farthest from those already taken (farthest-point sampling)."""
    f = np.asarray(f, dtype=np.float64)
    if len(f) == 0 or k <= 0:
        return []
    lo, hi = f.min(axis=0), f.max(axis=0)
    z = (f - lo) / np.where(hi > lo, hi - lo, 1.0)
    taken = [int(np.argmin(z[:, 0]))]
    d = np.linalg.norm(z - z[taken[0]], axis=1)
    while len(taken) < min(k, len(f)):
        nxt = int(np.argmax(d))
        taken.append(nxt)
        d = np.minimum(d, np.linalg.norm(z - z[nxt], axis=1))
    return taken


@dataclass
class PointJob:
    """One Pareto point to simulate: its design, its parameters, the workloads and the SM."""

    design: str
    params: dict
    workloads: list
    sm: object
    eval_kw: dict


def reference_params(params: dict, sm) -> dict:
    """The baseline's point that a design point's effect is taken against: the point's SM fields, collector
    units and the baseline's own parameters (``main_rf_latency_x``, ...), as in the calibration's effect
    report (``rfmodel.calibrate.effects.shared_keys``)."""
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import ANCHOR_DESIGN

    keep = set(sm.to_dict()) | {"collector_units"} | set(get_design(ANCHOR_DESIGN).parameters)
    return {k: v for k, v in params.items() if k in keep}


def simulate_point(job: PointJob) -> dict:
    """The point's metrics (:data:`VALIDATED`) from both engines: ``{"analytic": ..., "simulated": ...}``."""
    out = {}
    params = {k: [v] for k, v in job.params.items()}
    for method, key in (("analytic", "analytic"), ("simulate", "simulated")):
        ds = evaluate(
            job.design, job.workloads, job.sm, method=method, params=params, mode="points", **job.eval_kw
        )
        out[key] = {m: float(metric(ds, m, job.sm)[0]) for m in VALIDATED}
    return out


def validate(
    result: OptimizeResult, k: int = 5, workloads=None, gpu=None, runner=None, progress=None, **eval_kw
) -> list[dict]:
    """Simulate the ``k`` most different points of ``result``'s front (:func:`most_different` over its
    objectives) and set the analytic figures beside the simulated ones, with the relative error, and each
    point's IPC effect against the baseline at its SM point in both engines (``<engine>_ipc_effect``;
    ``error_ipc_effect_points``: the analytic minus the simulated effect, in points); every
    row's ``order_kept`` tells whether the two engines order the points alike (the fraction of pairs
    ranked the same way by ``time_ns``), and ``kendall_tau_<metric>`` is Kendall's tau between the two
    engines' orders of the points by each metric of :data:`VALIDATED` (:func:`ranking_agreement`).  On an
    SM with typed collector sets, a point's ``collector_units``
    (one pool in the analytic model) is simulated, and modelled again, as that many generic collectors."""
    from rfmodel.designs.base import get_design

    ds = result.pareto
    from rfmodel.limits import MAX_VALIDATE

    k = expect_int("validate: the number of points", k, low=1, high=MAX_VALIDATE)
    sm = resolve_gpu(gpu if gpu is not None else ds.attrs.get("gpu"))
    workloads = list(workloads or ds.attrs["workloads"].split(","))
    f = np.stack([o.sign * ds[o.name].values for o in result.objectives], axis=1)
    picks = most_different(f, k)
    jobs, rows = [], []
    sm_fields = set(sm.to_dict())
    for i in picks:
        design = str(ds["design"].values[i])
        d = get_design(design)
        params = {}
        for name in ds.data_vars:
            if name in d.parameters or name in sm_fields or name == "collector_units":
                v = ds[name].values[i]
                if isinstance(v, str) and not v or (not isinstance(v, str) and np.isnan(v)):
                    continue
                if isinstance(v, str):
                    params[name] = str(v)
                else:
                    params[name] = int(v) if float(v).is_integer() else float(v)
        point_sm = sm
        if "collector_units" in params and sm.collectors.specialized:
            # the analytic model counts collector_units as one pool; the simulator needs the same units as
            # generic collectors (it cannot resize typed sets), and the analytic figures are taken there too
            n = int(params.pop("collector_units"))
            typed = {f: 0 for f in ("sp", "sfu", "mem", "tensor", "dp", "int")}
            point_sm = sm.replace(collectors=sm.collectors.replace(gen=n, **typed))
            params_note = {"collector_units": n, "collectors": f"{n} generic"}
        else:
            params_note = {}
        jobs.append(PointJob(design, params, workloads, point_sm, eval_kw))
        rows.append({"point": int(i), "design": design, **params, **params_note})
    # the baseline at each point's SM point (the reference of its effect), each distinct one once
    from rfmodel.evaluate import ANCHOR_DESIGN

    refs, ref_of = {}, []
    for job in jobs:
        rp = reference_params(job.params, job.sm)
        key = (repr(sorted(rp.items())), repr(job.sm.to_dict()))
        if key not in refs:
            refs[key] = (len(jobs) + len(refs), PointJob(ANCHOR_DESIGN, rp, workloads, job.sm, eval_kw))
        ref_of.append(refs[key][0])
    runner = SerialRunner() if runner is None else runner
    every = jobs + [j for _, j in refs.values()]
    done, results = 0, {}
    for j, both in runner.run(simulate_point, every):
        results[j] = both
        done += 1
        if progress is not None:
            progress(done, len(every))
    for j in range(len(jobs)):
        both, base = results[j], results[ref_of[j]]
        for m in VALIDATED:
            rows[j][f"analytic_{m}"] = both["analytic"][m]
            rows[j][f"simulated_{m}"] = both["simulated"][m]
        for key in ("analytic", "simulated"):
            b = base[key]["ipc"]
            rows[j][f"{key}_ipc_effect"] = both[key]["ipc"] / b - 1.0 if b > 0 else float("nan")
        rows[j]["error_ipc_effect_points"] = 100.0 * (
            rows[j]["analytic_ipc_effect"] - rows[j]["simulated_ipc_effect"]
        )
    for r in rows:
        for m in VALIDATED:
            a, b = r[f"analytic_{m}"], r[f"simulated_{m}"]
            r[f"error_{m}"] = (a - b) / b if b and np.isfinite(a) and np.isfinite(b) else float("nan")
    pairs = [(p, q) for p in range(len(rows)) for q in range(p + 1, len(rows))]
    a, b = [r["analytic_time_ns"] for r in rows], [r["simulated_time_ns"] for r in rows]
    agree = [np.sign(a[p] - a[q]) == np.sign(b[p] - b[q]) for p, q in pairs]
    kept = float(np.mean(agree)) if agree else 1.0
    taus = {
        m: ranking_agreement([r[f"analytic_{m}"] for r in rows], [r[f"simulated_{m}"] for r in rows])
        for m in VALIDATED
    }
    for r in rows:
        r["order_kept"] = kept
        for m, t in taus.items():
            r[f"kendall_tau_{m}"] = t
    return rows


def ranking_agreement(analytic, simulated) -> float:
    """Kendall's tau (b) between the two engines' orders of the points by one metric (1: the same order;
    NaN with fewer than two points or a metric constant in one engine)."""
    from scipy.stats import kendalltau

    a, b = np.asarray(analytic, dtype=np.float64), np.asarray(simulated, dtype=np.float64)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return float("nan")
    return float(kendalltau(a[ok], b[ok]).statistic)
