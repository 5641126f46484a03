"""Multi-objective design-space exploration with pymoo, across designs and memory technologies.

The *space* is joint: every registered design with an analytic model (or the ones asked for), the main
RF's memory cell (``main_cell``) of the designs that have one, the SM's register-file fields (banks,
capacity, collector units) and each design's own parameters over the ranges its spec declares.  A
design's parameters exist only when that design is chosen, so each design is searched as its own
sub-population (an *island*, one pymoo run over its integer-coded space, seeded from the run's seed and
the design's name) and the Pareto front is the non-dominated union of the islands' fronts.  pymoo's
mixed-variable GA would search one population with a categorical design variable, but it has no notion
of conditional variables: the parameters of the designs not chosen would drift and breed duplicates of
one phenotype, while islands keep every design's space exact and the runs independent.

The *problem* (what) is a pymoo ``Problem`` over :func:`rfmodel.evaluate` with the analytic engine: a
whole population is one vectorized ``evaluate`` call in ``mode="points"``.  *Objectives* and
*constraints* are named metrics of the result Dataset (:data:`METRICS`), each with a direction; the
defaults follow the mission: capacity (max), RF area (min), RF power (min) and the workloads' execution
time (min, geometric mean).  A point that cannot host one CTA of some workload violates the built-in
constraint ``min warps >= 1``.  The *algorithm* (how) is NSGA-III (suited to three or more objectives;
Das-Dennis reference directions) or NSGA-II, with integer SBX and polynomial mutation.

Where every island's space is small enough (:data:`BRUTE_FORCE_MAX` points) they are also enumerated, and
the hypervolume of the front found is reported against that exhaustive front.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr
from pymoo.core.problem import Problem

from rfmodel.errors import RfmodelError, expect_between, expect_int
from rfmodel.evaluate import MAX_EVALUATIONS as EVALUATE_LIMITS
from rfmodel.evaluate import check_arch, evaluate, resolve_gpu, workload_profile
from rfmodel.limits import (
    MAX_GENERATIONS,
    MAX_NODE_NM,
    MAX_POP,
    MAX_REFERENCE_SEEDS,
    MAX_ROBUST_SAMPLES,
    MAX_SEED,
)
from rfmodel.runner import ProcessRunner, SerialRunner
from rfmodel.spec.occupancy import no_fit_reason
from rfmodel.workload.suite import DEFAULT_ARCH, default_workloads

#: bounds of one search (also :mod:`rfmodel.limits`): the evaluations of a run
MAX_EVALUATIONS = 10_000_000
#: the most Monte-Carlo evaluations (points x workloads x samples) of one generation's population
MAX_MC_EVALUATIONS = EVALUATE_LIMITS["montecarlo"]
#: an island's space is enumerated for the exhaustive reference front up to this many points
BRUTE_FORCE_MAX = 20_000
#: a robust search's Monte-Carlo draws per point and percentile unless it says otherwise (``optimize``'s
#: ``samples`` and ``percentile``, given only with ``uncertainty``)
ROBUST_SAMPLES, ROBUST_PERCENTILE = 32, 97.5
#: the main-RF cells searched by default (the technology layer's cells with timing and costs)
DEFAULT_CELLS = ("sram-hp", "sram-lstp", "sram-lop", "tfet", "dwm", "stt-ram", "stt-ram-relaxed")
#: design parameters never searched by default: the latency override (a sweep knob, not a technology),
#: the cell (the technology variable of its own) and random seeds; a design names its own
#: (``Design.not_searched``)
NOT_SEARCHED = ("main_rf_latency_x", "main_cell", "seed")
#: a declared range wider than this is a tuning constant (thresholds, interval lengths), not searched by
#: default; name it in ``design_params`` to search it
MAX_DEFAULT_RANGE = 4096


# ----------------------------------------------------------------------------------------- variables
@dataclass(frozen=True)
class Variable:
    """One integer-coded design variable: its values are ``values[k]`` for index ``k``."""

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


def default_design_params(design, sm=None, searched=()) -> tuple[str, ...]:
    """The design parameters searched by default: every declared one with choices or a bounded range of at
    most :data:`MAX_DEFAULT_RANGE` values, except :data:`NOT_SEARCHED` and the design's ``not_searched``, the
    parameters of the design's compiler pass (each value recompiles every kernel) and those the analytic
    engine does not model; with
    ``sm``, also those that act only with an SM field the SM does not set so (``acts_with``) and the search
    does not vary (``searched``: the names of the other variables)."""
    from rfmodel.designs.base import get_design

    d = get_design(design)
    out = []
    for name in d.parameters:
        info = d.Params.field_info(name)
        left = (*NOT_SEARCHED, *d.not_searched, *d.compile_params)
        if name in left or "analytic" not in info.engines:
            continue
        idle = [
            o
            for o, acting in info.acts_with
            if sm is not None and o not in d.parameters and o not in searched and getattr(sm, o) not in acting
        ]
        if idle:
            continue
        if info.choices is not None:
            out.append(name)
        elif info.bounds is not None and None not in info.bounds and info.type in (int, float):
            if info.type is float or info.bounds[1] - info.bounds[0] + 1 <= MAX_DEFAULT_RANGE:
                out.append(name)
    return tuple(out)


DEFAULT_SPACE = (
    # bank sizes stay inside the SRAM table's data (2-128 KB per bank)
    Variable("num_banks", (4, 8, 16, 32)),
    Variable("regs_per_sm", tuple(range(16384, 131072 + 1, 4096))),
    Variable("collector_units", tuple(range(1, 33))),
)


def design_space(
    design,
    space=DEFAULT_SPACE,
    cells=DEFAULT_CELLS,
    design_params=None,
    nodes=(),
    structure_cells=(),
    sm=None,
) -> tuple:
    """One island's variables: ``space`` (SM fields), ``main_cell`` over ``cells`` where the design has
    it, the technology node over ``nodes`` and the other structures' cell over ``structure_cells`` (when
    more than one is given), and the design's parameters (``design_params``; default
    :func:`default_design_params` on ``sm``)."""
    from rfmodel.designs.base import get_design

    d = get_design(design)
    out = list(space)
    if cells and "main_cell" in d.parameters:
        allowed = d.Params.field_info("main_cell").choices or ()
        bad = [c for c in cells if c not in allowed]
        if bad:
            raise RfmodelError(
                f"main_cell {bad[0]!r} is not a cell of design '{d.name}'; allowed: {', '.join(allowed)}"
            )
        out.append(Variable("main_cell", tuple(cells)))
    if design_params is None:
        names = default_design_params(d, sm, searched=tuple(v.name for v in space))
    else:
        names = [n for n in design_params if n in d.parameters]
    if len(nodes) > 1:
        out.append(Variable("node_nm", tuple(nodes)))
    if len(structure_cells) > 1:
        out.append(Variable("structure_cell", tuple(structure_cells)))
    taken = {v.name for v in out}
    out += [design_variable(d, n) for n in names if n not in taken]
    return tuple(out)


# ----------------------------------------------------------------------------------------- metrics
def _geomean(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.exp(np.mean(np.log(np.maximum(x, 1e-300)), axis=0))
    return np.where(np.all(np.isfinite(x) & (x > 0), axis=0), g, np.nan)


def _mean(x: np.ndarray) -> np.ndarray:
    """Mean over the workloads (axis 0); NaN where a workload has none (a point that cannot host it)."""
    return np.where(np.all(np.isfinite(x), axis=0), np.mean(np.nan_to_num(x), axis=0), np.nan)


def _time_ns(ds, sm):
    clock = ds["clock_mhz"].values if "clock_mhz" in ds else float(sm.clock_mhz)
    return _geomean(ds["cycles"].values * 1e3 / clock)


#: objective and constraint metrics by name: ``(per-point value from the Dataset, description)``; any other
#: variable of the Dataset works too (its mean over the workloads)
METRICS = {
    "time_ns": (_time_ns, "execution time per workload at the SM clock, geometric mean over the workloads"),
    "ipc": (lambda ds, sm: _geomean(ds["ipc"].values), "IPC, geometric mean over the workloads"),
    "capacity_kb": (lambda ds, sm: ds["capacity_kb"].values, "register-file capacity (KB)"),
    "area_mm2": (lambda ds, sm: ds["area_mm2_total"].values, "RF area (mm^2), every structure"),
    "power_mw": (lambda ds, sm: _mean(ds["power_mw"].values), "RF power (mW), mean over the workloads"),
    "energy_pj": (
        lambda ds, sm: _mean(ds["energy_pj_total"].values),
        "RF energy per workload run (pJ), mean over the workloads",
    ),
}
#: the units of :data:`METRICS` whose name is not a Dataset variable's (the others: ``rfmodel.results.UNITS``)
METRIC_UNITS = {
    "time_ns": "ns",
    "area_mm2": "mm2",
    "energy_pj": "pJ",
    **dict.fromkeys(("main_rf_read_cycles", "main_rf_write_cycles", "main_rf_network_cycles"), "cycles"),
}
#: search variables that are technology choices, not grid parameters: the name ``evaluate``'s ``tech``
#: gives each (the node of every structure; the cell of the structures other than the main RF's banks)
TECH_VARIABLES = {"node_nm": "node_nm", "structure_cell": "cell"}
#: metrics reported beside the objectives (where the design has them)
REPORTED = ("main_rf_read_cycles", "main_rf_write_cycles", "main_rf_network_cycles")


def point_metrics(design) -> set[str]:
    """The names :func:`metric` takes a point's value of for ``design``: :data:`METRICS`, the design's scalar
    metrics and the per-point totals its Dataset has beside them (``rfmodel.results.assemble``; the
    per-structure variables have a structure axis, which one value a point cannot take)."""
    from rfmodel.designs.base import get_design
    from rfmodel.results import metric_names

    totals = ("energy_pj_total", "power_mw", "area_mm2_total", "capacity_kb")
    return set(METRICS) | set(metric_names(get_design(design))) | set(totals)


def check_metric(name: str, design) -> None:
    """Refuse, before anything runs, a metric name :func:`metric` would not find for ``design``: one of
    :func:`point_metrics`, or another design's own (NaN where this one has none)."""
    from rfmodel.designs.base import design_classes

    known = point_metrics(design)
    if name in known or any(name in cls.metrics for cls in design_classes().values()):
        return
    raise RfmodelError(f"metric {name!r}: not a metric of the result; allowed: {', '.join(sorted(known))}")


def metric(ds: xr.Dataset, name: str, sm) -> np.ndarray:
    """Per-point values of metric ``name`` (:data:`METRICS`, else a Dataset variable averaged over the
    workloads; NaN where the design does not have it)."""
    if name in METRICS:
        return np.asarray(METRICS[name][0](ds, sm), dtype=np.float64)
    if name not in ds:
        from rfmodel.designs.base import design_classes

        if not any(name in cls.metrics for cls in design_classes().values()):
            allowed = sorted(set(METRICS) | {str(k) for k in ds.data_vars})
            raise RfmodelError(f"metric {name!r}: not a metric of the result; allowed: {', '.join(allowed)}")
        return np.full(ds.sizes["point"], np.nan)
    v = ds[name]
    if "workload" in v.dims:
        v = v.mean("workload")
    return np.asarray(v.values, dtype=np.float64).reshape(ds.sizes["point"])


@dataclass(frozen=True)
class Objective:
    """A metric to minimize or maximize (``"time_ns:min"``)."""

    name: str
    sense: str = "min"

    @classmethod
    def parse(cls, text) -> Objective:
        if isinstance(text, Objective):
            return text
        name, _, sense = str(text).partition(":")
        sense = sense or "min"
        if sense not in ("min", "max") or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise RfmodelError(f"objective {text!r}: expected NAME:min or NAME:max (e.g. time_ns:min)")
        return cls(name, sense)

    @property
    def sign(self) -> float:
        return -1.0 if self.sense == "max" else 1.0

    def __str__(self) -> str:
        return f"{self.name}:{self.sense}"


@dataclass(frozen=True)
class Constraint:
    """``metric <= bound`` or ``metric >= bound``; ``bound`` may be a multiple of the baseline design's
    value at its defaults on the same SM and workloads (``"ipc>=0.95*baseline"``)."""

    name: str
    op: str
    value: float
    relative: bool = False

    @classmethod
    def parse(cls, text) -> Constraint:
        if isinstance(text, Constraint):
            return text
        pattern = r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=)\s*([-+0-9.eE]+)\s*(\*\s*baseline)?\s*"
        m = re.fullmatch(pattern, str(text))
        if not m:
            raise RfmodelError(
                f"constraint {text!r}: expected NAME<=VALUE, NAME>=VALUE or NAME>=X*baseline "
                "(e.g. area_mm2<=1.5, ipc>=0.95*baseline)"
            )
        try:
            value = float(m.group(3))
        except ValueError:
            raise RfmodelError(f"constraint {text!r}: {m.group(3)!r} is not a number") from None
        if not np.isfinite(value):
            raise RfmodelError(f"constraint {text!r}: the bound must be finite")
        return cls(m.group(1), m.group(2), value, m.group(4) is not None)

    def violation(self, values: np.ndarray, reference: float) -> np.ndarray:
        """pymoo's ``G`` (<= 0: satisfied); NaN values violate."""
        bound = self.value * reference if self.relative else self.value
        g = values - bound if self.op == "<=" else bound - values
        return np.where(np.isfinite(g), g, 1e30)

    def __str__(self) -> str:
        return f"{self.name}{self.op}{self.value:g}" + ("*baseline" if self.relative else "")


DEFAULT_OBJECTIVES = (
    Objective("capacity_kb", "max"),
    Objective("area_mm2", "min"),
    Objective("power_mw", "min"),
    Objective("time_ns", "min"),
)


# ----------------------------------------------------------------------------------------- result
@dataclass
class OptimizeResult:
    pareto: xr.Dataset  # the non-dominated design points found, over every design (dimension ``point``)
    brute_force: xr.Dataset | None  # the exhaustive front of the islands small enough to enumerate
    hypervolume: float
    hypervolume_brute_force: float | None
    evaluations: int
    seconds: float
    objectives: tuple = DEFAULT_OBJECTIVES
    #: of the evaluations, the points modelled in this run (the others came from the evaluation store)
    computed: int = 0
    history: list = field(default_factory=list)
    #: hypervolume of the front of all points evaluated after each generation (the islands side by side)
    hypervolume_by_generation: list = field(default_factory=list)

    @property
    def hypervolume_ratio(self) -> float | None:
        if not self.hypervolume_brute_force:
            return None
        return self.hypervolume / self.hypervolume_brute_force


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

    if len(f) == 0:
        return 0.0
    span = np.where(nadir - ideal > 0, nadir - ideal, 1.0)
    return float(HV(ref_point=np.full(f.shape[1], 1.1))((f - ideal) / span))


class _Island:
    """One design's search: its variables, and the evaluation of integer-coded points into objectives
    (minimization), constraint values and the rows of the result."""

    def __init__(
        self,
        design,
        space,
        workloads,
        sm,
        objectives,
        constraints,
        reference,
        eval_kw,
        uncertainty=None,
        samples=None,
        percentile=None,
    ):
        self.design, self.space, self.workloads, self.sm = design, space, workloads, sm
        self.objectives, self.constraints = objectives, constraints
        self.reference, self.eval_kw = reference, eval_kw
        self.uncertainty = uncertainty
        self.samples = ROBUST_SAMPLES if samples is None else samples
        self.percentile = ROBUST_PERCENTILE if percentile is None else percentile

    def inputs(self) -> tuple:
        """What decides the island's values, as text (part of a checkpoint's signature and of the evaluation
        store's key)."""
        return (
            self.design,
            [(v.name, list(map(str, v.values))) for v in self.space],
            list(map(str, self.workloads)),
            repr(self.sm),
            list(map(str, self.objectives)),
            list(map(str, self.constraints)),
            sorted(self.reference.items()),
            sorted(map(str, self.eval_kw.items())),
            sorted(map(str, (self.uncertainty or {}).items())),
            self.samples,
            self.percentile,
        )

    def evaluate(self, idx: np.ndarray):
        """Objectives (minimization), constraint values, the points' parameters and their metrics.  The
        technology variables (:data:`TECH_VARIABLES`) go to ``evaluate``'s ``tech``: the points are
        evaluated in one call per technology."""
        params = {v.name: v.decode(idx[:, i]) for i, v in enumerate(self.space)}
        grid = {k: v for k, v in params.items() if k not in TECH_VARIABLES}
        techs = [k for k in TECH_VARIABLES if k in params]
        keys = list(zip(*(params[k].tolist() for k in techs), strict=True)) if techs else [()] * len(idx)
        values: dict = {}
        warps = np.zeros(len(idx))
        for key in dict.fromkeys(keys):
            rows = np.array([i for i, k in enumerate(keys) if k == key])
            chosen = {TECH_VARIABLES[t]: v for t, v in zip(techs, key, strict=True)}
            tech = {**(self.eval_kw.get("tech") or {}), **chosen}
            part = self._evaluate_points({k: v[rows] for k, v in grid.items()}, tech)
            for name, v in part.items():
                values.setdefault(name, np.full(len(idx), np.nan))[rows] = v
            warps[rows] = part.pop("__warps")
        values.pop("__warps", None)
        f = np.stack([o.sign * values[o.name] for o in self.objectives], axis=1)
        f = np.where(np.isfinite(f), f, 1e30)
        g = [1.0 - warps]
        for c in self.constraints:
            g.append(c.violation(values[c.name], self.reference.get(c.name, np.nan)))
        return f, np.stack(g, axis=1), params, values

    def _evaluate_points(self, grid: dict, tech: dict) -> dict:
        """Per-point metrics of one technology's points: objectives, constraints, the reported metrics and
        the fewest resident warps over the workloads (``__warps``)."""
        kw = {**self.eval_kw, "tech": tech or None}
        if self.uncertainty:
            # the interval whose ends are the chosen percentile (minimized metrics) and its mirror (maximized)
            kw.update(
                method="montecarlo",
                uncertainty=self.uncertainty,
                samples=self.samples,
                level=2.0 * self.percentile / 100.0 - 1.0,
            )
        else:
            kw["method"] = "analytic"
        ds = evaluate(self.design, self.workloads, self.sm, params=grid, mode="points", on_no_fit="nan", **kw)
        values = {o.name: metric(_pessimistic(ds, o.sense), o.name, self.sm) for o in self.objectives}
        for c in self.constraints:
            values.setdefault(c.name, metric(ds, c.name, self.sm))
        for name in REPORTED:
            if name in ds:
                values.setdefault(name, metric(ds, name, self.sm))
        values["__warps"] = np.nan_to_num(ds["warps"].values, nan=0.0).min(axis=0)
        return values


class _IslandProblem(Problem):
    """pymoo's view of an island: integer indices into its variables' values; every point it evaluates is
    kept (``archive``) so that the island's result is the front of everything it saw, and a point asked for
    again is answered from ``cache`` instead of being evaluated again (``evaluations`` counts the distinct
    points the run needed, ``requested`` the points the algorithm asked for).  A point the evaluation store
    of an earlier run with the same inputs holds (``stored``, :func:`_store_path`) is taken from it, not
    modelled again (``computed`` counts the points modelled)."""

    def __init__(self, island):
        n = len(island.space)
        super().__init__(
            n_var=n,
            n_obj=len(island.objectives),
            n_ieq_constr=1 + len(island.constraints),
            xl=np.zeros(n),
            xu=np.array([len(v.values) - 1 for v in island.space]),
            vtype=int,
        )
        self.island = island
        self.archive = []
        self.cache = {}
        self.stored = {}
        #: the names of the metrics each cache entry's third array holds (set by the first evaluation)
        self.value_names = None
        self.evaluations = 0
        self.computed = 0
        self.requested = 0

    def state(self, arrays: dict) -> dict:
        """The problem's part of a checkpoint: the archive (as arrays, added to ``arrays``) and the counts.
        The cache is the archive's content by point, and the store is read again from its own file."""
        sizes = [len(a[0]) for a in self.archive]
        arrays["archive.sizes"] = np.array(sizes, dtype=np.int64)
        for j, name in enumerate("xfgv"):
            if sizes:
                arrays[f"archive.{name}"] = np.concatenate([a[j] for a in self.archive])
        return {
            "evaluations": int(self.evaluations),
            "computed": int(self.computed),
            "requested": int(self.requested),
            "value_names": None if self.value_names is None else list(self.value_names),
        }

    def restore(self, meta: dict, arrays: dict) -> None:
        """Set the state :meth:`state` saved (``ValueError`` and the like where it does not fit)."""
        sizes = [int(n) for n in arrays["archive.sizes"]]
        parts = []
        if sizes:
            width = {"x": self.n_var, "f": self.n_obj, "g": self.n_ieq_constr, "v": None}
            for name in "xfgv":
                a = arrays[f"archive.{name}"]
                if a.ndim != 2 or len(a) != sum(sizes) or width[name] not in (None, a.shape[1]):
                    raise ValueError(f"archive.{name} has shape {a.shape}")
                parts.append(np.split(a, np.cumsum(sizes)[:-1]))
        self.archive = list(zip(*parts, strict=True)) if parts else []
        self.evaluations = int(meta["evaluations"])
        self.computed = int(meta["computed"])
        self.requested = int(meta["requested"])
        names = meta["value_names"]
        self.value_names = None if names is None else tuple(str(n) for n in names)
        self.stored = {}
        self.cache = {}
        for x, f, g, v in self.archive:
            for i, row in enumerate(x):
                self.cache.setdefault(row.tobytes(), (f[i], g[i], v[i]))

    def _evaluate(self, x, out, *args, **kwargs):
        x = np.rint(np.asarray(x)).astype(int)
        keys = [row.tobytes() for row in x]
        new, seen = [], set()
        for i, k in enumerate(keys):
            if k not in self.cache and k not in seen:  # each new point once
                seen.add(k)
                new.append(i)
        fresh = []
        for i in new:
            if keys[i] in self.stored:
                self.cache[keys[i]] = self.stored[keys[i]]
            else:
                fresh.append(i)
        if fresh:
            f, g, _, values = self.island.evaluate(x[fresh])
            if self.value_names is None:
                self.value_names = tuple(values)
            v = np.stack([values[n] for n in self.value_names], axis=1)
            for j, i in enumerate(fresh):
                self.cache[keys[i]] = (f[j], g[j], v[j])
        out["F"] = np.stack([self.cache[k][0] for k in keys])
        out["G"] = np.stack([self.cache[k][1] for k in keys])
        self.evaluations += len(new)
        self.computed += len(fresh)
        self.requested += len(x)
        # with each point's metrics, from which the island's front rows are made
        self.archive.append((x, out["F"], out["G"], np.stack([self.cache[k][2] for k in keys])))


@dataclass
class IslandJob:
    """One design's search, runnable anywhere (:mod:`rfmodel.runner`): after every generation its state
    (the pymoo algorithm's population, generation and random generator, the archive, the evaluation
    counts) is written atomically to ``checkpoint`` as a checked data file (:mod:`rfmodel.datafile`), from
    which a later run continues."""

    island: _Island
    algorithm: str
    pop_size: int
    generations: int
    seed: int
    checkpoint: Path | None = None
    progress: object = None
    #: keep and use the evaluation store between runs (:func:`_store_path`)
    store: bool = True

    def signature(self) -> str:
        """What makes two runs of the island the same run (a checkpoint of another is not resumed)."""
        from rfmodel.version import __version__

        run = (self.algorithm, self.pop_size, self.generations, self.seed)
        parts = (__version__, self.island.inputs(), *run)
        return hashlib.sha256(repr(parts).encode()).hexdigest()


def _island_progress(progress, done_gens, evaluated, k, steps):
    def update(n_gen, evaluations):
        done_gens[k], evaluated[k] = n_gen, evaluations
        progress(sum(done_gens), steps, evaluations=sum(evaluated))

    return update


#: kind and format version of an island's checkpoint and of the evaluation store (:mod:`rfmodel.datafile`)
CHECKPOINT_KIND, CHECKPOINT_VERSION = "rfmodel optimize checkpoint", 1
STORE_KIND, STORE_VERSION = "rfmodel evaluation store", 1


def _population_state(pop, prefix: str, arrays: dict) -> dict | None:
    """A pymoo population as arrays under ``prefix`` (added to ``arrays``) and its JSON part: each
    individual's variables, objectives, constraints, cached violation, what it has evaluated and its
    scalar attributes (rank, crowding, niche ...) with their Python or NumPy types."""
    if pop is None:
        return None
    n = len(pop)
    if n:
        for k in ("X", "F", "G", "H"):
            arrays[f"{prefix}.{k}"] = np.stack([np.asarray(getattr(ind, k)) for ind in pop])
        has_cv = [ind._CV is not None for ind in pop]
        if any(has_cv):
            cv = [ind._CV if h else np.full(1, np.nan) for ind, h in zip(pop, has_cv, strict=True)]
            arrays[f"{prefix}.CV"] = np.stack(cv)
            arrays[f"{prefix}.has_CV"] = np.array(has_cv)
    data = {}
    for key in dict.fromkeys(k for ind in pop for k in ind.data):
        # per individual: 0 without the attribute, 1 with None, 2 with a number
        held = np.array([0 if key not in ind.data else 1 if ind.data[key] is None else 2 for ind in pop])
        values = [ind.data[key] for ind, h in zip(pop, held, strict=True) if h == 2]
        kinds = {type(v) for v in values}
        if len(kinds) > 1 or any(not np.isscalar(v) or isinstance(v, (str, bytes)) for v in values[:1]):
            raise TypeError(f"population attribute {key!r}: not one type of number ({kinds})")
        kind = kinds.pop() if kinds else float
        python = kind in (int, float, bool)
        filled = [ind.data[key] if h == 2 else 0 for ind, h in zip(pop, held, strict=True)]
        arrays[f"{prefix}.data.{key}"] = np.array(filled, dtype=None if python else kind)
        arrays[f"{prefix}.held.{key}"] = held.astype(np.int8)
        data[key] = kind.__name__ if python else np.dtype(kind).str
    return {"n": n, "evaluated": [sorted(ind.evaluated or ()) for ind in pop], "data": data}


def _population(meta: dict | None, prefix: str, arrays: dict, problem):
    """The population :func:`_population_state` saved (``ValueError`` and the like where it does not fit
    ``problem``)."""
    from pymoo.core.individual import Individual
    from pymoo.core.population import Population

    if meta is None:
        return None
    n = int(meta["n"])
    if n == 0:
        return Population.empty()
    cols = {k: arrays[f"{prefix}.{k}"] for k in ("X", "F", "G", "H")}
    width = {"X": problem.n_var, "F": problem.n_obj, "G": problem.n_ieq_constr, "H": problem.n_eq_constr}
    for k, a in cols.items():
        if a.shape != (n, width[k]):
            raise ValueError(f"{prefix}.{k} has shape {a.shape}, not {(n, width[k])}")
    has_cv = arrays.get(f"{prefix}.has_CV", np.zeros(n, dtype=bool))
    cv = arrays.get(f"{prefix}.CV")
    data = {}
    for key, kind in meta["data"].items():
        a, held = arrays[f"{prefix}.data.{key}"], arrays[f"{prefix}.held.{key}"]
        if a.shape != (n,) or held.shape != (n,):
            raise ValueError(f"{prefix}.data.{key} has shape {a.shape}")
        cast = {"int": int, "float": float, "bool": bool}.get(kind)
        values = [cast(v) for v in a.tolist()] if cast else list(a.astype(np.dtype(kind)))
        data[key] = [(None, None, v)[int(h)] for v, h in zip(values, held, strict=True)], held
    if len(meta["evaluated"]) != n or len(has_cv) != n:
        raise ValueError(f"{prefix}: {n} individuals, not as many attributes")
    inds = []
    for i in range(n):
        ind = Individual()
        ind._X, ind._F, ind._G, ind._H = (cols[k][i].copy() for k in ("X", "F", "G", "H"))
        ind._CV = cv[i].copy() if has_cv[i] else None
        ind.evaluated = {str(e) for e in meta["evaluated"][i]}
        ind.data = {key: values[i] for key, (values, held) in data.items() if held[i]}
        inds.append(ind)
    return Population(inds)


def _checkpoint_state(job: IslandJob, algo, problem) -> tuple[dict, dict]:
    """``(meta, arrays)`` of a checkpoint: the run's signature, the algorithm's generation, population,
    random generator (as numbers), termination and survival state (NSGA-III's normalization points and
    optimum), and the problem's archive and counts.  Only data: reading it back runs no code."""
    arrays: dict = {}
    term = algo.termination
    meta = {
        "signature": job.signature(),
        "algorithm": job.algorithm,
        "n_iter": int(algo.n_iter),
        "is_initialized": bool(algo.is_initialized),
        "n_eval": int(algo.evaluator.n_eval),
        "random_state": algo.random_state.bit_generator.state,
        "termination": {"perc": float(term.perc), "force": bool(term.force_termination)},
        "data": algo.data,
        "pop": _population_state(algo.pop, "pop", arrays),
        "problem": problem.state(arrays),
    }
    norm = getattr(algo.survival, "norm", None)
    if norm is not None:  # NSGA-III's reference-direction survival
        meta["survival_opt"] = _population_state(algo.survival.opt, "survival.opt", arrays)
        for k in ("ideal_point", "worst_point", "nadir_point", "extreme_points"):
            if getattr(norm, k) is not None:
                arrays[f"norm.{k}"] = np.asarray(getattr(norm, k), dtype=np.float64)
    return meta, arrays


def _restore(algo, problem, meta: dict, arrays: dict) -> None:
    """Set a freshly set-up algorithm and problem to the state :func:`_checkpoint_state` saved."""
    problem.restore(meta["problem"], arrays)
    algo.n_iter = int(meta["n_iter"])
    algo.is_initialized = bool(meta["is_initialized"])
    algo.evaluator.n_eval = int(meta["n_eval"])
    algo.random_state.bit_generator.state = meta["random_state"]
    algo.termination.perc = float(meta["termination"]["perc"])
    algo.termination.force_termination = bool(meta["termination"]["force"])
    algo.data = dict(meta["data"])
    algo.start_time = time.time()  # pymoo's result() times the run from here
    algo.pop = _population(meta["pop"], "pop", arrays, problem)
    algo.off = None
    norm = getattr(algo.survival, "norm", None)
    if norm is not None:
        algo.survival.opt = _population(meta.get("survival_opt"), "survival.opt", arrays, problem)
        for k in ("ideal_point", "worst_point", "nadir_point", "extreme_points"):
            if f"norm.{k}" in arrays:
                setattr(norm, k, arrays[f"norm.{k}"].copy())
    if algo.is_initialized:
        if algo.pop is None:
            raise ValueError("an initialized run without a population")
        algo._set_optimum()  # as after the saved generation (the optimum is the population's)


def _load_checkpoint(job: IslandJob):
    """The saved state of ``job`` as ``(meta, arrays)``, or None.  A checkpoint file that fails its checks
    (not a checkpoint, another format version, a checksum that does not match its content) is refused with
    one :class:`RfmodelError` naming it; one of another run is set aside with a warning (the island starts
    over)."""
    import warnings

    from rfmodel.datafile import read_checked

    if job.checkpoint is None or not job.checkpoint.exists():
        return None
    try:
        meta, arrays = read_checked(job.checkpoint, CHECKPOINT_KIND, CHECKPOINT_VERSION)
    except RfmodelError as e:
        raise RfmodelError(
            f"cannot resume from {e}; delete it to start the search of '{job.island.design}' over"
        ) from None
    if not isinstance(meta, dict) or meta.get("signature") != job.signature():
        why = "it belongs to a different run (design, space, workloads or settings differ)"
        warnings.warn(f"{job.checkpoint}: not resumed ({why}); the island starts over", stacklevel=2)
        job.checkpoint.replace(job.checkpoint.with_suffix(".ckpt.bad"))
        return None
    return meta, arrays


def _start(job: IslandJob):
    """``(algorithm, problem, generations done)`` of ``job``: set up afresh, then set to its checkpoint's
    state where there is one (:func:`_load_checkpoint`)."""
    problem = _IslandProblem(job.island)
    algo = _algorithm(job.algorithm, job.pop_size, len(job.island.objectives))
    algo.setup(problem, termination=("n_gen", job.generations), seed=job.seed, verbose=False)
    state = _load_checkpoint(job)
    if state is None:
        return algo, problem, 0
    try:
        _restore(algo, problem, *state)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise RfmodelError(
            f"cannot resume from {job.checkpoint}: its content is not a state of this search "
            f"({e}); delete it to start the search of '{job.island.design}' over"
        ) from None
    # pymoo counts the next generation
    return algo, problem, int(algo.n_gen) - 1 if algo.is_initialized else 0


def _store_path(job: IslandJob) -> Path | None:
    """The evaluation store of ``job``'s island: the objective and constraint values of every point it has
    modelled, kept between runs (:mod:`rfmodel.cache`) under a key of everything that decides them (the
    package's source and calibration data, the design and its search space, the workloads (files by content),
    the SM, objectives, constraints and their reference values, the engine's settings); ``None`` with the
    cache off or when a workload or calibration is an in-memory object."""
    from rfmodel.analytic.engine import _file_digest
    from rfmodel.cache import entry_path, source_hash

    i = job.island
    if not job.store or any(not isinstance(w, (str, Path)) for w in i.workloads):
        return None
    cal = i.eval_kw.get("calibration")
    if cal is not None and not isinstance(cal, (str, Path, bool)):
        return None
    parts = (
        source_hash(),
        i.inputs(),
        [_file_digest(str(w)) for w in i.workloads],
        _file_digest(str(cal)) if isinstance(cal, (str, Path)) else None,
    )
    return entry_path("evaluations", hashlib.sha256(repr(parts).encode()).hexdigest()[:24], ".npz")


def _read_store(path: Path) -> tuple[dict, tuple]:
    from rfmodel.datafile import read_checked

    meta, arrays = read_checked(path, STORE_KIND, STORE_VERSION)
    x, f, g, v = (arrays[k] for k in ("x", "f", "g", "v"))
    names = tuple(str(n) for n in meta["names"])
    if x.dtype != np.dtype(int) or any(a.ndim != 2 or len(a) != len(x) for a in (x, f, g, v)):
        raise ValueError("not the arrays of a store")
    if v.shape[1] != len(names):
        raise ValueError("not one metric name per column")
    return {x[j].tobytes(): (f[j], g[j], v[j]) for j in range(len(x))}, names


def _load_store(path: Path | None) -> tuple[dict, tuple | None]:
    """The points of an evaluation store and the names of their metrics (empty when there is none or it
    cannot be used: a damaged store costs only the modelling it would have saved)."""
    from rfmodel.cache import read_entry

    data = read_entry(path, _read_store)
    return data if data is not None else ({}, None)


def _save_store(path: Path | None, points: dict, names) -> None:
    """Write the store (a read-only or full cache folder: the next run models the points again)."""
    from rfmodel.cache import write_with
    from rfmodel.datafile import write_checked

    if path is None or not points or names is None:
        return
    keys = list(points)
    arrays = {
        "x": np.stack([np.frombuffer(k, dtype=int) for k in keys]),
        "f": np.stack([points[k][0] for k in keys]),
        "g": np.stack([points[k][1] for k in keys]),
        "v": np.stack([points[k][2] for k in keys]),
    }
    write_with(path, lambda p: write_checked(p, STORE_KIND, STORE_VERSION, arrays, {"names": list(names)}))


def run_island(job: IslandJob) -> dict:
    """Run (or continue) one island to its last generation: its feasible front's rows and objectives."""
    from rfmodel.datafile import write_checked

    algo, problem, resumed_at = _start(job)
    store = _store_path(job)
    problem.stored, names = _load_store(store)
    if problem.value_names is None:
        problem.value_names = names
    elif names is not None and names != problem.value_names:  # not this island's metrics: not used
        problem.stored = {}
    known = len(problem.stored)
    while algo.has_next():
        algo.next()
        if job.checkpoint is not None:
            meta, arrays = _checkpoint_state(job, algo, problem)
            write_checked(job.checkpoint, CHECKPOINT_KIND, CHECKPOINT_VERSION, arrays, meta)
        if job.progress is not None:
            job.progress(int(algo.n_gen) - 1, problem.evaluations)
    if len(problem.cache) > known or problem.computed:  # something the store did not hold
        _save_store(store, {**problem.stored, **problem.cache}, problem.value_names)
    island = job.island
    # each generation's feasible objective vectors (the hypervolume by generation is taken over them)
    by_gen = [a[1][np.all(a[2] <= 0, axis=1)] for a in problem.archive]
    out = {
        "design": island.design,
        "rows": [],
        "f": np.zeros((0, len(island.objectives))),
        "evaluations": problem.evaluations,
        "requested": problem.requested,
        "resumed_at": resumed_at,
        "computed": problem.computed,
        "by_generation": by_gen,
    }
    xa, fa, ga, va = (np.concatenate([a[j] for a in problem.archive]) for j in range(4))
    xa, first = np.unique(xa, axis=0, return_index=True)
    fa, ga, va = fa[first], ga[first], va[first]
    keep = _front_mask(fa, np.all(ga <= 0, axis=1))  # feasible points only
    if keep.any():
        params = {v.name: v.decode(xa[keep][:, i]) for i, v in enumerate(island.space)}
        values = {n: va[keep][:, j] for j, n in enumerate(problem.value_names)}
        out["rows"] = _rows(island.design, params, values, np.ones(int(keep.sum()), dtype=bool))
        out["f"] = fa[keep]
    return out


def _objective_matrix(ds: xr.Dataset, objectives) -> np.ndarray:
    """A front's objectives as the search minimizes them."""
    return np.stack([o.sign * ds[o.name].values for o in objectives], axis=1)


def _hypervolume_by_generation(islands: list[list[np.ndarray]], ideal, nadir) -> list[float]:
    """The hypervolume of the front of everything all islands had evaluated after each generation (the
    islands run side by side in this count), in the final normalization."""
    gens = max((len(g) for g in islands), default=0)
    front = np.zeros((0, len(ideal)))
    out = []
    for k in range(gens):
        new = [g[k] for g in islands if k < len(g) and len(g[k])]
        if new:
            pts = np.concatenate([front, *new])
            front = pts[_front_mask(pts, np.ones(len(pts), dtype=bool))]
        out.append(_hypervolume(front, ideal, nadir))
    return out


def _pessimistic(ds: xr.Dataset, sense: str) -> xr.Dataset:
    """A Monte-Carlo result seen from an objective's worst side: every variable with an interval replaced by
    its upper end (``<v>_hi``, the chosen percentile) for a minimized objective, its lower end (the mirror
    percentile) for a maximized one; a Dataset without intervals is returned as it is."""
    end = "_hi" if sense == "min" else "_lo"
    swap = {v: ds[f"{v}{end}"] for v in ds.data_vars if f"{v}{end}" in ds}
    return ds.assign(swap) if swap else ds


def _rows(design, params, values, mask) -> list[dict]:
    rows = []
    for i in np.flatnonzero(mask):
        row = {"design": design}
        row.update({k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in params.items()})
        row.update({k: float(v[i]) for k, v in values.items()})
        rows.append(row)
    return rows


def _dataset(rows: list[dict], attrs: dict) -> xr.Dataset:
    """The points of ``rows`` as a Dataset over ``point``: a variable a design lacks is NaN (numbers) or
    empty (text) there."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    data = {}
    for k in keys:
        col = [r.get(k) for r in rows]
        if any(isinstance(x, str) for x in col if x is not None):
            data[k] = ("point", np.array(["" if x is None else str(x) for x in col]))
        else:
            data[k] = ("point", np.array([np.nan if x is None else float(x) for x in col]))
    ds = xr.Dataset(data, coords={"point": np.arange(len(rows))})
    ds.attrs.update(attrs)
    from rfmodel.results import UNITS

    for k in ds.data_vars:  # each metric's unit and what it is over the workloads (the Dataset's own)
        units = METRIC_UNITS.get(k, UNITS.get(k))
        if units is not None:
            ds[k].attrs.update(units=units, long_name=_describe(k))
    return ds


def _technologies(nodes, structure_cells, cells, eval_kw) -> tuple[tuple, tuple]:
    """The nodes and structure cells as tuples, each cell checked at each node against the technology
    tables (one error naming the pairs they do not cover); a single choice goes into ``eval_kw['tech']``."""
    from rfmodel.tech.array import CELLS, array_cost

    nodes = tuple(float(n) if not float(n).is_integer() else int(n) for n in np.atleast_1d(nodes))
    structure_cells = tuple(str(c) for c in np.atleast_1d(structure_cells))
    if not nodes or not structure_cells:
        raise RfmodelError("nodes and structure_cells: give at least one each")
    unknown = [c for c in structure_cells if c not in CELLS]
    if unknown:
        raise RfmodelError(f"structure cell {unknown[0]!r} is not a cell; allowed: {', '.join(CELLS)}")
    missing = []
    for c in dict.fromkeys(c for c in (*cells, *structure_cells) if c in CELLS):  # others: design_space
        for n in nodes:
            try:
                array_cost(c, n, 16, 1024, warn=False)
            except RfmodelError:
                missing.append(f"{c} at {n} nm")
    if missing:
        raise RfmodelError(
            f"the technology tables do not cover {', '.join(missing)}: choose other nodes or cells"
        )
    tech = dict(eval_kw.get("tech") or {})
    if len(nodes) == 1:
        tech["node_nm"] = nodes[0]
    if len(structure_cells) == 1:
        tech["cell"] = structure_cells[0]
    eval_kw["tech"] = tech
    return nodes, structure_cells


def _reference_values(constraints, workloads, sm, eval_kw) -> dict:
    """The baseline design's value at its defaults of each constraint relative to it."""
    names = sorted({c.name for c in constraints if c.relative})
    if not names:
        return {}
    ds = evaluate(
        "baseline",
        workloads,
        sm,
        method="analytic",
        params={"num_banks": [sm.num_banks]},
        mode="points",
        on_no_fit="nan",
        **eval_kw,
    )
    return {n: float(metric(ds, n, sm)[0]) for n in names}


def _cv_then_random(pop, P, random_state=None, **kwargs):
    """NSGA-III's binary tournament (pymoo's ``comp_by_cv_then_random``: the smaller constraint violation
    wins, else a random one) with every random choice drawn from the algorithm's own generator.  pymoo
    0.6.2's version breaks a tie of two equally infeasible points with a fresh, unseeded generator, so a
    seeded run whose population held infeasible points was not repeatable."""
    cv = np.asarray(pop.get("CV"), dtype=np.float64).reshape(len(pop), -1).max(axis=1)
    S = np.empty(len(P), dtype=int)
    for i in range(len(P)):
        a, b = int(P[i, 0]), int(P[i, 1])
        if (cv[a] > 0.0 or cv[b] > 0.0) and cv[a] != cv[b]:
            S[i] = a if cv[a] < cv[b] else b
        else:
            S[i] = random_state.choice([a, b])
    return S[:, None]


def _algorithm(name: str, pop_size: int, n_obj: int):
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.algorithms.moo.nsga3 import NSGA3
    from pymoo.operators.crossover.sbx import SBX
    from pymoo.operators.mutation.pm import PM
    from pymoo.operators.repair.rounding import RoundingRepair
    from pymoo.operators.sampling.rnd import IntegerRandomSampling
    from pymoo.operators.selection.tournament import TournamentSelection
    from pymoo.util.ref_dirs import get_reference_directions

    kw = dict(
        pop_size=pop_size,
        sampling=IntegerRandomSampling(),
        crossover=SBX(prob=0.9, eta=15, vtype=float, repair=RoundingRepair()),
        mutation=PM(eta=20, vtype=float, repair=RoundingRepair()),
        eliminate_duplicates=True,
    )
    if name == "nsga2":
        return NSGA2(**kw)
    # the most Das-Dennis directions that fit the population
    p = 1
    while len(get_reference_directions("das-dennis", n_obj, n_partitions=p + 1)) <= pop_size:
        p += 1
    return NSGA3(
        ref_dirs=get_reference_directions("das-dennis", n_obj, n_partitions=p),
        selection=TournamentSelection(func_comp=_cv_then_random),
        **kw,
    )


ALGORITHMS = ("nsga3", "nsga2")


def _designs(designs) -> list[str]:
    from rfmodel.designs.base import Design, design_classes, get_design

    if designs is None:
        return [n for n, cls in design_classes().items() if cls.analytic is not Design.analytic]
    if isinstance(designs, str):
        designs = [designs]
    out = []
    for d in designs:
        out.append(get_design(d).name)
    if not out:
        raise RfmodelError("designs: name at least one design")
    return list(dict.fromkeys(out))


def _checked_search(arguments: dict):
    """:func:`optimize`'s search arguments (``arguments``: its arguments by name) checked (one error naming
    what is wrong) and normalized: ``(pop_size, generations, reference_seeds, seed, samples, percentile,
    objectives, constraints, design names)``."""
    a = arguments
    uncertainty, samples, percentile = a["uncertainty"], a["samples"], a["percentile"]
    objectives, constraints, design_params = a["objectives"], a["constraints"], a["design_params"]
    pop_size = expect_int("pop_size", a["pop_size"], low=4, high=MAX_POP)
    generations = expect_int("generations", a["generations"], low=1, high=MAX_GENERATIONS)
    reference_seeds = expect_int("reference_seeds", a["reference_seeds"], low=0, high=MAX_REFERENCE_SEEDS)
    # the reference runs take the next seeds
    seed = expect_int("seed", a["seed"], low=0, high=MAX_SEED - reference_seeds)
    if not uncertainty:  # a robust search's settings: they would change nothing without the uncertainty
        named = (("samples (--uncertainty-samples)", samples), ("percentile (--percentile)", percentile))
        given = [n for n, v in named if v is not None]
        if given:
            raise RfmodelError(
                f"{' and '.join(given)}: settings of a robust search, which needs uncertainty "
                "(--uncertainty: the inputs' widths, e.g. {'mem_fraction': 'normal:0.1'}); without it "
                "each point is evaluated once"
            )
    samples = ROBUST_SAMPLES if samples is None else samples
    percentile = ROBUST_PERCENTILE if percentile is None else percentile
    if uncertainty:
        from rfmodel.analytic.montecarlo import check_widths

        check_widths(uncertainty)
        samples = expect_int("samples", samples, low=2, high=MAX_ROBUST_SAMPLES)
    percentile = expect_between(
        "percentile (the pessimistic end of a robust front)", percentile, 50.0, 100.0, "90 or 97.5"
    )
    for n in np.atleast_1d(a["nodes"]):
        expect_between("nodes (nm)", n, 0.0, MAX_NODE_NM, "45")
    if a["algorithm"] not in ALGORITHMS:
        raise RfmodelError(f"algorithm {a['algorithm']!r}: allowed {', '.join(ALGORITHMS)}")
    if isinstance(objectives, str):
        objectives = [objectives]
    if isinstance(constraints, str):
        constraints = [constraints]
    objectives = tuple(Objective.parse(o) for o in objectives)
    constraints = tuple(Constraint.parse(c) for c in constraints)
    if len(objectives) < 2 or len({o.name for o in objectives}) != len(objectives):
        raise RfmodelError("objectives: name at least two different metrics")
    names = _designs(a["designs"])
    if design_params is not None:
        from rfmodel.designs.base import get_design

        for n in design_params:
            if not any(n in get_design(d).parameters for d in names):
                raise RfmodelError(
                    f"design parameter {n!r} belongs to none of the designs searched ({', '.join(names)})"
                )
    if pop_size > MAX_POP or pop_size * generations * len(names) > MAX_EVALUATIONS:
        raise RfmodelError(
            f"pop_size {pop_size} x generations {generations} x {len(names)} designs: at "
            f"most a population of {MAX_POP} and {MAX_EVALUATIONS} evaluations per run"
        )
    return pop_size, generations, reference_seeds, seed, samples, percentile, objectives, constraints, names


def _ready_workloads(workloads, named, sm, space, eval_kw, progress):
    """Every workload's profile, with every design's tables, made ready before the search (a cold run
    builds traces and profiles here, and loads the compiled code; ``progress`` hears of each), and the
    workloads that no point of the search can host: an error when the user named them, left out of the
    default suite otherwise.  Returns ``(workloads kept, {left out: why})``."""
    from rfmodel.analytic.profile import TABLE_GROUPS

    most_regs = max([sm.regs_per_sm, *[max(v.values) for v in space if v.name == "regs_per_sm"]])
    skipped = {}
    for i, w in enumerate(workloads):
        if progress is not None:
            progress(i, len(workloads), phase="profiles", workload=str(w))
        kw = {k: v for k, v in eval_kw.items() if k in ("arch", "seed", "max_warps")}
        prof = workload_profile(w, sm, **kw).need(*TABLE_GROUPS)
        why = no_fit_reason(
            prof.regs_per_thread, prof.threads_per_cta, prof.shared_mem_bytes, sm, regs_per_sm=most_regs
        )
        if why is not None and named:
            raise RfmodelError(
                f"workload '{prof.name}' cannot run on {sm.name} at any point of the search: {why}"
            )
        if why is not None:
            skipped[w] = why
    workloads = [w for w in workloads if w not in skipped]
    if not workloads:
        raise RfmodelError(f"no built-in workload can run on {sm.name} at any point of the search")
    return workloads, skipped


def _fixed_point_cached() -> bool:
    """Whether numba's cache on disk holds the analytic model's compiled fixed point (most of what a first
    run compiles) for its current source; True when that cannot be told (the simulator's check)."""
    from rfmodel.analytic.throughput import _steady
    from rfmodel.cache import numba_cached

    return numba_cached(_steady)


def _compile_first(islands, progress) -> None:
    """Each island's analytic model once in this process, at the first value of every variable on the first
    workload, before a local process runner starts its workers: the model's compiled kernels are then in
    numba's cache on disk for every worker to load, where on a first run each fresh worker would compile
    them itself, all at once (the fixed point alone takes about 10 CPU-s).  Nothing of the run's results
    comes from here.  Skipped when the cache already holds the fixed point (:func:`_fixed_point_cached`)."""
    for i, island in enumerate(islands):
        if progress is not None:
            progress(i, len(islands), phase="compiling", design=island.design)
        params = {v.name: v.decode(np.zeros(1, dtype=np.int64)) for v in island.space}
        grid = {k: v for k, v in params.items() if k not in TECH_VARIABLES}
        kw = {**island.eval_kw, "method": "analytic", "mode": "points", "on_no_fit": "nan"}
        evaluate(island.design, island.workloads[:1], island.sm, params=grid, **kw)


def _run_islands(jobs, runner, generations, progress) -> list[dict]:
    """Every island's search through ``runner``; ``progress`` hears of each generation (serial runs) or
    island (as they finish) with the front so far and its hypervolume in its own bounds (the final
    figure is taken in the bounds of the whole front)."""
    steps = generations * len(jobs)
    done_gens, evaluated = [0] * len(jobs), [0] * len(jobs)
    if isinstance(runner, SerialRunner) and progress is not None:
        for k, job in enumerate(jobs):
            job.progress = _island_progress(progress, done_gens, evaluated, k, steps)
    results = [None] * len(jobs)
    for k, result in runner.run(run_island, jobs):
        results[k] = result
        done_gens[k], evaluated[k] = generations, result["evaluations"]
        if progress is not None:
            f = [r["f"] for r in results if r is not None and len(r["f"])]
            info = {}
            if f:
                pts = np.concatenate(f)
                pts = pts[_front_mask(pts, np.ones(len(pts), bool))]
                hv = _hypervolume(pts, pts.min(axis=0), pts.max(axis=0))
                info = {"front": len(pts), "hv": round(hv, 4)}
            progress(
                sum(done_gens),
                steps,
                evaluations=sum(evaluated),
                **info,
                islands=f"{sum(r is not None for r in results)}/{len(jobs)}",
            )
    return results


def _exhaustive_front(islands) -> tuple[list[dict], np.ndarray]:
    """The reference front of every island's whole space (each point evaluated): its rows and objectives."""
    bf_rows, f_bf = [], []
    for island in islands:
        grid = np.array(list(itertools.product(*[range(len(v.values)) for v in island.space])))
        f, g, params, values = island.evaluate(grid)
        ok = np.all(g <= 0, axis=1)
        m = _front_mask(f, ok)
        bf_rows += _rows(island.design, params, values, m)
        f_bf.append(f[m])
    fb = np.concatenate(f_bf)
    m = _front_mask(fb, np.ones(len(fb), dtype=bool))
    return [r for r, keep in zip(bf_rows, m, strict=True) if keep], fb[m]


def _check_mc_budget(uncertainty, pop_size: int, workloads: list, samples: int) -> None:
    """Refuse a robust (Monte-Carlo) search whose generations would take more than
    :data:`MAX_MC_EVALUATIONS` evaluations each."""
    if uncertainty and pop_size * len(workloads) * samples > MAX_MC_EVALUATIONS:
        n = pop_size * len(workloads) * samples
        raise RfmodelError(
            f"pop_size {pop_size} x {len(workloads)} workloads x {samples} samples = {n} "
            f"Monte-Carlo evaluations per generation; at most {MAX_MC_EVALUATIONS}: a smaller "
            "population, fewer samples or fewer workloads"
        )


def _island_jobs(
    islands, algorithm, pop_size, generations, seed, checkpoint, resume, store
) -> list[IslandJob]:
    """One job per island, seeded from ``seed`` and its design's name, with its checkpoint file in the folder
    ``checkpoint`` (a fresh run clears the folder's checkpoints; ``resume``: every checkpoint is checked
    here, before any island runs)."""
    if checkpoint is not None:
        checkpoint = Path(checkpoint)
        if not resume and checkpoint.exists():
            for old in checkpoint.glob("*.ckpt"):
                old.unlink()
    jobs = [
        IslandJob(
            i,
            algorithm,
            pop_size,
            generations,
            (seed + zlib.crc32(i.design.encode())) % 2**31,
            None if checkpoint is None else checkpoint / f"{i.design}.ckpt",
            store=store,
        )
        for i in islands
    ]
    if checkpoint is not None and resume:
        for job in jobs:  # every checkpoint checked here, before any island runs
            _start(job)
    return jobs


def _gather_islands(results: list[dict]) -> tuple[list[dict], np.ndarray, list[dict], int, int]:
    """The islands' results together: the rows and objectives of their joint front, each island's history
    and the points evaluated and modelled; no feasible point in any island raises."""
    rows, f_found, history = [], [], []
    evaluations = 0  # points evaluated (each island evaluates a repeated point once)
    computed = 0  # of which modelled here (the others from the evaluation store)
    for result in results:
        evaluations += result["evaluations"]
        computed += result["computed"]
        history.append(
            {k: result[k] for k in ("design", "evaluations", "computed", "requested", "resumed_at")}
        )
        history[-1]["front"] = len(result["rows"])
        rows += result["rows"]
        if len(result["f"]):
            f_found.append(result["f"])
    if not rows:
        raise RfmodelError(
            "no feasible design point found (every point leaves some workload without a CTA "
            "or breaks a constraint)"
        )
    f_all = np.concatenate(f_found)
    mask = _front_mask(f_all, np.ones(len(f_all), dtype=bool))
    rows = [r for r, m in zip(rows, mask, strict=True) if m]
    f_front = f_all[mask]
    return rows, f_front, history, evaluations, computed


def _settings_attrs(
    algorithm, pop_size, generations, seed, sm, gpu, names, objectives, constraints, reference
) -> dict:
    """The front's attributes that describe the search: the algorithm and its settings, the GPU, the designs,
    the objectives and the constraints with the baseline's reference values."""
    return {
        "algorithm": f"{algorithm.upper()} pop={pop_size} generations={generations} per design (islands)",
        "seed": seed,
        "gpu": getattr(sm, "name", str(gpu)),
        "designs": ",".join(names),
        "objectives": "; ".join(f"{o.sense}imize {o.name}: {_describe(o.name)}" for o in objectives),
        "constraints": "; ".join(["min warps >= 1", *map(str, constraints)]),
        "reference": "; ".join(f"baseline {k} = {v:.6g}" for k, v in reference.items()),
    }


def _scope_attrs(islands, workloads, skipped, uncertainty, samples, percentile) -> dict:
    """The front's attributes that describe what was searched: each island's space, the workloads (and
    those left out) and the engine (the model, or its Monte-Carlo with the pessimistic quantiles)."""
    return {
        "space": " | ".join(
            f"{i.design}: " + "; ".join(f"{v.name}={list(v.values)}" for v in i.space) for i in islands
        ),
        "workloads": ",".join(map(str, workloads)),
        "workloads_left_out": "; ".join(f"{w}: {why}" for w, why in skipped.items()),
        "engine": "analytic"
        if not uncertainty
        else (
            f"analytic Monte-Carlo, {samples} samples of {dict(uncertainty)}: each objective at its "
            f"pessimistic end ({percentile:g} % quantile of a minimized metric's per-workload values, "
            f"{100 - percentile:g} % of a maximized one)"
        ),
    }


def _reference_attrs(attrs: dict, hv, hv_bf, reference_kind, brute_force, too_big) -> None:
    """Add the reference front's hypervolume (and the found front's ratio to it) to ``attrs``, or why it was
    not computed."""
    if hv_bf:
        attrs["hypervolume_brute_force"] = hv_bf
        attrs["hypervolume_ratio"] = hv / hv_bf
        attrs["hypervolume_reference"] = reference_kind
    elif brute_force:
        big = ", ".join(too_big)
        attrs["hypervolume_brute_force"] = f"not computed: {big} have more than {BRUTE_FORCE_MAX} points"


#: :func:`optimize`'s arguments a reference run (``reference_seeds``) does not take from the run it serves
_OWN_TO_A_RUN = frozenset(
    ("designs", "workloads", "gpu", "recipe", "seed", "reference_seeds", "progress", "checkpoint", "resume")
)


def optimize(
    designs=None,
    workloads=None,
    gpu=None,
    *,
    objectives=DEFAULT_OBJECTIVES,
    constraints=(),
    space=DEFAULT_SPACE,
    cells=DEFAULT_CELLS,
    design_params=None,
    algorithm: str = "nsga3",
    pop_size: int = 40,
    generations: int = 30,
    seed: int = 0,
    brute_force: bool = True,
    progress=None,
    runner=None,
    checkpoint=None,
    resume: bool = False,
    uncertainty=None,
    samples: int | None = None,
    percentile: float | None = None,
    nodes=(45,),
    structure_cells=("sram-hp",),
    reference_seeds: int = 0,
    store: bool = True,
    recipe=None,
    **eval_kw,
) -> OptimizeResult:
    """Search ``designs`` (default: every registered design with an analytic model) jointly with the main-RF
    cell (``cells``) over ``space`` and each design's parameters (``design_params``: names searched in every
    design that has them, default :func:`default_design_params`), one island per design of ``pop_size`` for
    ``generations`` generations, for ``objectives`` (``"name:min|max"`` or :class:`Objective`) subject to
    ``constraints`` (``"name<=value"``, ``"name>=x*baseline"``).  ``progress(step, steps, **info)`` is called
    per generation of each island (with another runner: as islands finish) with ``info``: ``evaluations``
    (points evaluated so far), and as islands finish ``front`` (points on the front of the finished islands),
    ``hv`` (its hypervolume, normalized by its own ideal and nadir points)
    and ``islands`` (finished / all); before the search, once per workload whose profile is made ready
    (built on a cold run), with ``phase="profiles"`` and the ``workload``.  ``brute_force``: enumerate the
    islands of at most :data:`BRUTE_FORCE_MAX` points for the exhaustive reference front.

    ``runner`` (:mod:`rfmodel.runner`; default serial) runs the islands, in any order: each is seeded from
    ``seed`` and its design's name, so the front does not depend on the runner.  ``checkpoint``: a folder
    where each island's state is written after every generation; ``resume=True`` continues from it (a
    fresh run clears it), with no evaluation lost or repeated and the same front as a run never stopped.

    ``recipe``: a launch recipe (TOML) on which the one kernel ``workloads`` names is executed for its trace
    (as :func:`rfmodel.evaluate`'s ``recipe``).

    ``reference_seeds``: where a space is too large to enumerate, the reference front is the best front of
    this run and that many more seeds (the evaluation count includes theirs).  ``store``: take points from,
    and add them to, the evaluation store kept between runs (:func:`_store_path`; ``False``: model every
    point, as a timing run must).

    ``nodes`` (nm) and ``structure_cells`` (the cell of the structures other than the main RF's banks:
    collectors, caches, buffers, networks) are technology variables when more than one is given, else the
    technology of every point; each (cell, node) pair is checked against the technology tables first.

    ``uncertainty`` (``{"mem_fraction": ("normal", 0.1)}``, as :func:`rfmodel.evaluate`'s Monte-Carlo): a
    robust front; each point is evaluated with ``samples`` Monte-Carlo draws and each objective taken at its
    pessimistic end (the ``percentile`` of a minimized metric, 97.5 by default, and ``100 - percentile`` of a
    maximized one, per workload), instead of the model's mean."""
    arguments = {**{k: v for k, v in locals().items() if k != "eval_kw"}, **eval_kw}  # as given, for reruns
    if recipe is not None:
        from rfmodel.evaluate import recipe_workload

        workloads = [recipe_workload(workloads, recipe)]
    pop_size, generations, reference_seeds, seed, samples, percentile, objectives, constraints, names = (
        _checked_search(arguments)
    )
    t0 = time.perf_counter()
    sm = resolve_gpu(gpu)
    named = bool(workloads)
    workloads = list(workloads or default_workloads())
    check_arch(eval_kw.get("arch", DEFAULT_ARCH), workloads)
    _check_mc_budget(uncertainty, pop_size, workloads, samples)
    workloads, skipped = _ready_workloads(workloads, named, sm, space, eval_kw, progress)
    reference = _reference_values(constraints, workloads, sm, eval_kw)
    nodes, structure_cells = _technologies(nodes, structure_cells, cells, eval_kw)
    shared = (workloads, sm, objectives, constraints, reference, eval_kw)  # what every island searches for
    robust = {"uncertainty": uncertainty or None, "samples": samples, "percentile": percentile}
    spaces = {d: design_space(d, space, cells, design_params, nodes, structure_cells, sm=sm) for d in names}
    islands = [_Island(d, spaces[d], *shared, **robust) for d in names]
    jobs = _island_jobs(islands, algorithm, pop_size, generations, seed, checkpoint, resume, store)
    if isinstance(runner, ProcessRunner) and not _fixed_point_cached():
        _compile_first(islands, progress)
    results = _run_islands(jobs, SerialRunner() if runner is None else runner, generations, progress)
    rows, f_front, history, evaluations, computed = _gather_islands(results)

    bf, hv_bf, bf_rows = None, None, []
    too_big = [i.design for i in islands if int(np.prod([len(v.values) for v in i.space])) > BRUTE_FORCE_MAX]
    enumerate_all = brute_force and not too_big  # a reference front needs every island's
    reference_kind = None
    if enumerate_all:
        bf_rows, f_true = _exhaustive_front(islands)
        ideal, nadir = f_true.min(axis=0), f_true.max(axis=0)
        hv_bf = _hypervolume(f_true, ideal, nadir)
        reference_kind = "exhaustive"
    elif reference_seeds:
        # the best front of several seeds: this run's and ``reference_seeds`` more, each with this run's
        # arguments (every one, so that none is forgotten) but its own seed, no reference of its own, no
        # progress or checkpoint, and the designs, workloads, GPU and objectives as resolved here
        same = {k: v for k, v in arguments.items() if k not in _OWN_TO_A_RUN}
        same.update(objectives=objectives, constraints=constraints, brute_force=False)
        others = [
            optimize(names, workloads, sm, seed=seed + k, **same) for k in range(1, int(reference_seeds) + 1)
        ]
        fb = np.concatenate([f_front, *[_objective_matrix(o.pareto, objectives) for o in others]])
        f_true = fb[_front_mask(fb, np.ones(len(fb), dtype=bool))]
        ideal, nadir = f_true.min(axis=0), f_true.max(axis=0)
        hv_bf = _hypervolume(f_true, ideal, nadir)
        reference_kind = f"best of seeds {seed}..{seed + int(reference_seeds)}"
        evaluations += sum(o.evaluations for o in others)
        computed += sum(o.computed for o in others)
    else:
        ideal, nadir = f_front.min(axis=0), f_front.max(axis=0)
    hv = _hypervolume(f_front, ideal, nadir)
    hv_by_gen = _hypervolume_by_generation([r["by_generation"] for r in results], ideal, nadir)
    seconds = time.perf_counter() - t0
    attrs = {
        **_settings_attrs(
            algorithm, pop_size, generations, seed, sm, gpu, names, objectives, constraints, reference
        ),
        **_scope_attrs(islands, workloads, skipped, uncertainty, samples, percentile),
        "hypervolume": hv,
        "hypervolume_by_generation": np.asarray(hv_by_gen, dtype=np.float64),
        "evaluations": evaluations,
        "evaluations_modelled": computed,
    }
    _reference_attrs(attrs, hv, hv_bf, reference_kind, brute_force, too_big)
    pareto = _dataset(rows, attrs)
    if bf_rows and hv_bf:
        bf = _dataset(bf_rows, {**attrs, "front": "exhaustive"})
    return OptimizeResult(
        pareto=pareto,
        brute_force=bf,
        hypervolume=hv,
        hypervolume_brute_force=hv_bf,
        evaluations=evaluations,
        seconds=seconds,
        objectives=objectives,
        computed=computed,
        history=history,
        hypervolume_by_generation=hv_by_gen,
    )


def pareto_table(ds: xr.Dataset, objectives=None) -> list[dict]:
    """Rows of the Pareto set: its index in ``ds`` (``point``), design, its variables (those it has) and the
    objectives, ordered by the first objective (best first)."""
    objectives = tuple(Objective.parse(o) for o in (objectives or _recorded_objectives(ds)))
    skip = {o.name for o in objectives}
    columns = {k: ds[k].values for k in ds.data_vars if k not in skip}  # each variable's values once
    scores = {o.name: ds[o.name].values for o in objectives}
    rows = []
    for i in range(ds.sizes["point"]):
        row = {"point": i}  # the point's index in the Dataset (pareto.nc, validate.csv): rows sort below
        for k, col in columns.items():
            v = col[i]
            if (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v):
                continue
            v = v.item() if hasattr(v, "item") else v
            row[k] = int(v) if isinstance(v, float) and v.is_integer() else v
        row.update({name: float(col[i]) for name, col in scores.items()})
        rows.append(row)
    first = objectives[0]
    rows.sort(key=lambda r: first.sign * r[first.name])
    return rows


def _describe(name: str) -> str:
    return METRICS[name][1] if name in METRICS else "mean over the workloads"


def _recorded_objectives(ds: xr.Dataset) -> tuple:
    text = ds.attrs.get("objectives", "")
    out = []
    for part in text.split("; "):
        m = re.match(r"(min|max)imize ([A-Za-z0-9_]+)", part)
        if m:
            out.append(Objective(m.group(2), m.group(1)))
    return tuple(out) or DEFAULT_OBJECTIVES
