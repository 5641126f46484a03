"""Multi-objective design-space exploration with pymoo.

The *problem* (what) is a thin pymoo ``Problem`` over :func:`rfmodel.evaluate`
with the analytic engine: a whole population is one vectorized ``evaluate``
call in ``mode="points"``.  The *algorithm* (how) is NSGA-II with integer
operators, seeded.  Objectives: IPC (maximized; geometric mean over the
workloads), RF area (mm^2) and average RF power (mW, mean over the workloads).
A design point that cannot host one CTA of some workload violates the
constraint ``min warps >= 1``.

Because the analytic engine is cheap, the default space is also enumerated
exhaustively; the reported hypervolume ratio compares NSGA-II's front with
that brute-force front (1.0 = the true front was found).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from rfmodel.errors import RfmodelError
from rfmodel.evaluate import evaluate, resolve_gpu, workload_profile
from rfmodel.workload.suite import default_workloads

OBJECTIVES = ("ipc", "area_mm2", "power_mw")
#: bounds of one search (a population is one vectorized evaluation; memory grows with it)
MAX_POP, MAX_EVALUATIONS = 100_000, 10_000_000
SENSE = {"ipc": -1.0, "area_mm2": 1.0, "power_mw": 1.0}  # multiply to get a minimization


@dataclass(frozen=True)
class Variable:
    """One integer design variable: its values are ``values[k]`` for index ``k``."""

    name: str
    values: tuple

    def decode(self, idx):
        return np.asarray(self.values)[np.clip(np.rint(idx).astype(int), 0, len(self.values) - 1)]


def design_variable(design, name: str, max_values: int = 16) -> Variable:
    """A search variable over one of a design's parameters, its values taken from the parameter's
    declaration (``Design.Params``): the choices, else at most ``max_values`` values between the bounds
    (every integer when they fit, else geometrically spaced, bounds included)."""
    from rfmodel.designs.base import get_design

    d = get_design(design)
    if name not in d.parameters:
        raise RfmodelError(f"design '{d.name}' has no parameter '{name}'; allowed: {', '.join(d.parameters)}")
    info = d.Params.field_info(name)
    if info.choices is not None:
        return Variable(name, tuple(info.choices))
    bounded = info.bounds is not None and None not in info.bounds
    if not bounded or info.type not in (int, float):
        raise RfmodelError(f"parameter '{name}' of design '{d.name}' has no bounded numeric range to search")
    lo, hi = info.bounds
    if info.type is int and hi - lo + 1 <= max_values:
        return Variable(name, tuple(range(int(lo), int(hi) + 1)))
    if lo > 0 and hi / lo >= 10:
        values = np.geomspace(lo, hi, max_values)
    else:
        values = np.linspace(lo, hi, max_values)
    if info.type is int:
        return Variable(name, tuple(sorted({int(round(v)) for v in values} | {int(lo), int(hi)})))
    return Variable(name, tuple(float(v) for v in values))


DEFAULT_SPACE = (
    # bank sizes stay inside the SRAM table's data (2-128 KB per bank)
    Variable("num_banks", (4, 8, 16, 32)),
    Variable("regs_per_sm", tuple(range(16384, 131072 + 1, 4096))),
    Variable("collector_units", tuple(range(1, 33))),
)


@dataclass
class OptimizeResult:
    pareto: xr.Dataset  # the non-dominated design points found
    brute_force: xr.Dataset | None
    hypervolume: float
    hypervolume_brute_force: float | None
    evaluations: int
    seconds: float
    history: list = field(default_factory=list)

    @property
    def hypervolume_ratio(self) -> float | None:
        if not self.hypervolume_brute_force:
            return None
        return self.hypervolume / self.hypervolume_brute_force


def _objectives(ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray, dict]:
    """Objective matrix (minimization), constraint values and the per-point aggregates."""
    ipc = ds["ipc"].values  # [workload, point]
    with np.errstate(divide="ignore"):
        geo = np.exp(np.mean(np.log(np.maximum(ipc, 1e-12)), axis=0))
    geo = np.where(np.all(ipc > 0, axis=0), geo, 0.0)
    area = ds["area_mm2_total"].values
    power = ds["power_mw"].values
    power = np.where(np.isfinite(power), power, 0.0).mean(axis=0)
    agg = {"ipc": geo, "area_mm2": area, "power_mw": power}
    f = np.stack([SENSE[k] * agg[k] for k in OBJECTIVES], axis=1)
    g = (1.0 - ds["warps"].values.min(axis=0))[:, None]
    return f, g, agg


def _evaluate_points(design, workloads, sm, space, idx, **kw):
    params = {v.name: v.decode(idx[:, i]) for i, v in enumerate(space)}
    ds = evaluate(design, workloads, sm, method="analytic", params=params, mode="points", on_no_fit="nan",
                  **kw)  # fmt: skip
    return ds


def _front_mask(f: np.ndarray, feasible: np.ndarray) -> np.ndarray:
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    mask = np.zeros(len(f), dtype=bool)
    ids = np.flatnonzero(feasible)
    if len(ids):
        front = NonDominatedSorting().do(f[ids], only_non_dominated_front=True)
        mask[ids[front]] = True
    return mask


def _hypervolume(f: np.ndarray, ideal: np.ndarray, nadir: np.ndarray) -> float:
    from pymoo.indicators.hv import HV

    span = np.where(nadir - ideal > 0, nadir - ideal, 1.0)
    return float(HV(ref_point=np.full(f.shape[1], 1.1))((f - ideal) / span))


def optimize(
    design: str = "baseline",
    workloads=None,
    gpu=None,
    *,
    space=DEFAULT_SPACE,
    design_params=(),
    pop_size: int = 40,
    generations: int = 30,
    seed: int = 0,
    brute_force: bool = True,
    progress=None,
    **eval_kw,
) -> OptimizeResult:
    """Run NSGA-II over ``space`` plus the design's parameters named in ``design_params`` (their ranges from
    the design's declaration, :func:`design_variable`); ``progress(generation, generations)`` is called per
    generation."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.callback import Callback
    from pymoo.core.problem import Problem
    from pymoo.operators.crossover.sbx import SBX
    from pymoo.operators.mutation.pm import PM
    from pymoo.operators.repair.rounding import RoundingRepair
    from pymoo.operators.sampling.rnd import IntegerRandomSampling
    from pymoo.optimize import minimize
    from pymoo.termination import get_termination

    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (pop_size, generations)):
        raise RfmodelError(f"pop_size and generations must be integers (got {pop_size!r}, {generations!r})")
    if pop_size < 4 or generations < 1:
        raise RfmodelError(f"pop_size must be >= 4 and generations >= 1 (got {pop_size}, {generations})")
    if pop_size > MAX_POP or pop_size * generations > MAX_EVALUATIONS:
        raise RfmodelError(f"pop_size {pop_size} x generations {generations}: at most a population of "
                           f"{MAX_POP} and {MAX_EVALUATIONS} evaluations per run")  # fmt: skip
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise RfmodelError(f"seed: expected a non-negative integer (got {seed!r})")
    t0 = time.perf_counter()
    space = (*space, *(design_variable(design, n) for n in design_params))
    sm = resolve_gpu(gpu)
    workloads = list(workloads or default_workloads())
    for w in workloads:  # build the profiles once, before the timed loop
        workload_profile(w, sm, **{k: v for k, v in eval_kw.items() if k in ("arch", "seed", "max_warps")})
    counter = {"n": 0}

    class RFProblem(Problem):
        def __init__(self):
            super().__init__(
                n_var=len(space),
                n_obj=len(OBJECTIVES),
                n_ieq_constr=1,
                xl=np.zeros(len(space)),
                xu=np.array([len(v.values) - 1 for v in space]),
                vtype=int,
            )

        def _evaluate(self, x, out, *args, **kwargs):
            ds = _evaluate_points(design, workloads, sm, space, np.asarray(x), **eval_kw)
            out["F"], out["G"], _ = _objectives(ds)
            counter["n"] += len(x)

    class Progress(Callback):
        def notify(self, algorithm):
            if progress is not None:
                progress(algorithm.n_gen, generations)

    algorithm = NSGA2(
        pop_size=pop_size,
        sampling=IntegerRandomSampling(),
        crossover=SBX(prob=0.9, eta=15, vtype=float, repair=RoundingRepair()),
        mutation=PM(eta=20, vtype=float, repair=RoundingRepair()),
        eliminate_duplicates=True,
    )
    res = minimize(
        RFProblem(),
        algorithm,
        get_termination("n_gen", generations),
        seed=seed,
        callback=Progress(),
        verbose=False,
    )
    x = np.atleast_2d(res.X) if res.X is not None else np.zeros((0, len(space)))
    if len(x) == 0:
        raise RfmodelError("no feasible design point found (every point leaves some workload without a CTA)")
    # de-duplicate and evaluate the final front once more, keeping the full dataset
    x = np.unique(np.rint(x).astype(int), axis=0)
    pareto = _evaluate_points(design, workloads, sm, space, x, **eval_kw)
    f_front, _, agg = _objectives(pareto)
    for k, v in agg.items():
        pareto[f"objective_{k}"] = ("point", v)

    bf = None
    hv_bf = None
    if brute_force:
        grid = np.array(list(itertools.product(*[range(len(v.values)) for v in space])))
        bf_ds = _evaluate_points(design, workloads, sm, space, grid, **eval_kw)
        f_all, g_all, agg_all = _objectives(bf_ds)
        mask = _front_mask(f_all, g_all[:, 0] <= 0)
        bf = bf_ds.isel(point=np.flatnonzero(mask))
        for k, v in agg_all.items():
            bf[f"objective_{k}"] = ("point", v[mask])
        f_true = f_all[mask]
        ideal, nadir = f_true.min(axis=0), f_true.max(axis=0)
        hv_bf = _hypervolume(f_true, ideal, nadir)
    else:
        ideal, nadir = f_front.min(axis=0), f_front.max(axis=0)
    hv = _hypervolume(f_front, ideal, nadir)
    seconds = time.perf_counter() - t0
    attrs = {
        "algorithm": f"NSGA-II pop={pop_size} generations={generations}",
        "seed": seed,
        "objectives": "maximize ipc (geomean over workloads); minimize area_mm2; minimize power_mw (mean)",
        "space": "; ".join(f"{v.name}={list(v.values)}" for v in space),
        "workloads": ",".join(map(str, workloads)),
        "hypervolume": hv,
        "evaluations": counter["n"],
    }
    if hv_bf:
        attrs["hypervolume_brute_force"] = hv_bf
        attrs["hypervolume_ratio"] = hv / hv_bf
    pareto.attrs.update(attrs)
    return OptimizeResult(
        pareto=pareto,
        brute_force=bf,
        hypervolume=hv,
        hypervolume_brute_force=hv_bf,
        evaluations=counter["n"],
        seconds=seconds,
    )


def pareto_table(ds: xr.Dataset, space=None) -> list[dict]:
    """Rows of the Pareto set (design variables and objectives), best IPC first; the variables are those
    of ``space`` (default: the ones the search recorded in ``ds.attrs['space']``)."""
    if space is None:
        names = [part.split("=", 1)[0] for part in ds.attrs.get("space", "").split("; ") if part]
    else:
        names = [v.name for v in space]
    rows = []
    for i in range(ds.sizes["point"]):
        row = {n: ds[n].values[i].item() for n in names if n in ds}
        row.update({k: float(ds[f"objective_{k}"].values[i]) for k in OBJECTIVES})
        rows.append(row)
    rows.sort(key=lambda r: -r["ipc"])
    return rows
