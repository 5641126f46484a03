"""Global sensitivity of a metric over a design's space: Sobol indices and Morris screening, with SALib.

:func:`rfmodel.sensitivity` differentiates the analytic model at one point; this module asks how much
of a metric's variation over the whole space each variable explains.  The space is the optimizer's
(:func:`rfmodel.optimize.problem.design_space`: the SM's register-file fields, the main-RF cell, the design's
own parameters), each variable taken over its listed values: SALib samples the unit interval per variable
and a sample ``u`` picks value ``floor(u n)`` of the ``n`` (so integer and categorical variables, the cell
among them, get indices like any other).  Every sample of a call is one vectorized analytic evaluation.

* ``method="sobol"``: Saltelli's sampling (``N (D + 2)`` points for ``D`` variables), first-order ``S1``
  and total ``ST`` indices with bootstrap confidence intervals (``SALib.analyze.sobol``);
* ``method="morris"``: ``N`` trajectories (``N (D + 1)`` points), ``mu_star`` (mean absolute elementary
  effect, in the metric's units per unit of the index scaled to [0, 1]), its confidence, and ``sigma``
  (``SALib.analyze.morris``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from rfmodel.errors import RfmodelError, expect_int
from rfmodel.evaluate import evaluate, resolve_gpu
from rfmodel.optimize.problem import DEFAULT_CELLS, METRICS, Variable, check_metric, design_space
from rfmodel.optimize.problem import metric as metric_of
from rfmodel.workload.suite import default_workloads

#: the SM's register-file fields over a range every built-in workload fits on the preset GPUs
SENSITIVITY_SPACE = (
    Variable("num_banks", (4, 8, 16, 32)),
    Variable("regs_per_sm", tuple(range(65536, 131072 + 1, 8192))),
    Variable("collector_units", tuple(range(2, 33, 2))),
)
METHODS = ("sobol", "morris")
#: bound of one call (every sample is a design point of one vectorized evaluation)
MAX_POINTS = 200_000


def global_sensitivity(
    design: str = "baseline",
    workloads=None,
    gpu=None,
    *,
    metric: str = "time_ns",
    variables=None,
    method: str = "sobol",
    samples: int = 256,
    seed: int = 0,
    cells=None,
    **eval_kw,
) -> xr.Dataset:
    """Sobol (first-order and total) or Morris indices of ``metric`` (:data:`METRICS`, or a Dataset
    variable averaged over the workloads) over ``design``'s space (:data:`SENSITIVITY_SPACE`, the main-RF
    cell over ``cells``, the design's default parameters); ``variables`` names a subset.  ``samples`` is
    SALib's ``N``.  Returns a Dataset over ``variable`` with the indices and their confidence intervals.
    ``rfmodel sensitivity`` is this call: ``--metric``, ``--variable`` (repeatable), ``--samples``, ...
    (``metric_name=``, this argument's earlier name, is still taken)."""
    metric_name = eval_kw.pop("metric_name", metric)
    from SALib.analyze import morris as morris_analyze
    from SALib.analyze import sobol as sobol_analyze
    from SALib.sample import morris as morris_sample
    from SALib.sample import sobol as sobol_sample

    if method not in METHODS:
        raise RfmodelError(f"method {method!r}: allowed {', '.join(METHODS)}")
    from rfmodel.limits import MAX_SEED, MAX_SENSITIVITY_SAMPLES

    samples = expect_int("samples", samples, low=2, high=MAX_SENSITIVITY_SAMPLES)
    seed = expect_int("seed", seed, low=0, high=MAX_SEED)
    check_metric(metric_name, design)  # before the model runs, not after
    space = design_space(design, SENSITIVITY_SPACE, DEFAULT_CELLS if cells is None else tuple(cells))
    if variables:
        known = {v.name: v for v in space}
        bad = [n for n in variables if n not in known]
        if bad:
            raise RfmodelError(
                f"variable {bad[0]!r} is not in design '{design}''s space; allowed: {', '.join(known)}"
            )
        space = tuple(known[n] for n in dict.fromkeys(variables))
    space = tuple(v for v in space if len(v.values) > 1)
    if len(space) < 2:
        raise RfmodelError("sensitivity needs at least two variables that take more than one value")
    problem = {"num_vars": len(space), "names": [v.name for v in space], "bounds": [[0.0, 1.0]] * len(space)}
    if method == "sobol":
        if samples & (samples - 1):
            raise RfmodelError(f"samples: Sobol sampling needs a power of two (got {samples})")
        n_points = samples * (len(space) + 2)
    else:
        n_points = samples * (len(space) + 1)
    if n_points > MAX_POINTS:
        raise RfmodelError(f"{n_points} design points: at most {MAX_POINTS} per call (fewer samples)")
    if method == "sobol":
        u = sobol_sample.sample(problem, samples, calc_second_order=False, seed=seed)
    else:
        u = morris_sample.sample(problem, samples, num_levels=4, seed=seed)
    idx = np.minimum(
        (u * np.array([len(v.values) for v in space])).astype(int),
        np.array([len(v.values) - 1 for v in space]),
    )
    params = {v.name: np.asarray(v.values)[idx[:, i]] for i, v in enumerate(space)}
    sm = resolve_gpu(gpu)
    workloads = list(workloads or default_workloads())
    ds = evaluate(
        design, workloads, sm, method="analytic", params=params, mode="points", on_no_fit="nan", **eval_kw
    )
    y = metric_of(ds, metric_name, sm)
    bad = ~np.isfinite(y)
    if bad.any():
        raise RfmodelError(
            f"{metric_name} is undefined at {int(bad.sum())} of {len(y)} samples (a point "
            "that cannot host a CTA of some workload, or a metric the design lacks); narrow "
            "the variables"
        )
    if np.ptp(y) == 0:
        raise RfmodelError(f"{metric_name} does not vary over these variables: no sensitivity to measure")
    names = problem["names"]
    if method == "sobol":
        r = sobol_analyze.analyze(problem, y, calc_second_order=False, seed=seed)
        keys = ("S1", "S1_conf", "ST", "ST_conf")
    else:
        r = morris_analyze.analyze(problem, u, y, num_levels=4, seed=seed)
        keys = ("mu_star", "mu_star_conf", "sigma")
    data = {k: ("variable", np.asarray(r[k], dtype=np.float64)) for k in keys}
    out = xr.Dataset(data, coords={"variable": names})
    out.attrs.update(
        {
            "design": str(design),
            "gpu": getattr(sm, "name", str(gpu)),
            "metric": metric_name,
            "metric_description": METRICS[metric_name][1]
            if metric_name in METRICS
            else "mean over workloads",
            "method": method,
            "samples": int(samples),
            "points": int(len(y)),
            "seed": int(seed),
            "space": "; ".join(f"{v.name}={list(v.values)}" for v in space),
            "workloads": ",".join(map(str, workloads)),
            "engine": "analytic (SALib sampling and analysis)",
            "metric_mean": float(np.mean(y)),
            "metric_std": float(np.std(y)),
        }
    )
    return out
