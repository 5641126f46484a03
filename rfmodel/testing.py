"""Conformance checks for register-file designs, shipped for plug-in authors and used by the project's own
suite (in the spirit of scikit-learn's estimator checks).

Every check takes a design (a registered name, a :class:`~rfmodel.designs.base.Design` subclass or an
instance) and holds it to what every engine of rfmodel assumes of a design; no check names a design, and a
check that needs a capability (the simulator, a neutral point, size parameters) runs only for designs that
declare it.  ::

    from rfmodel.testing import check_design
    check_design(MyDesign)                 # every check that applies; AssertionError naming each failure

    # in a pytest suite: one test per (design, check), a design's known failures marked xfail
    from rfmodel.testing import check_params, run_check

    @pytest.mark.parametrize(("design", "check"), check_params(["my_design"]))
    def test_conformance(design, check):
        run_check(design, check)

A design may declare a check it is known to fail, with the reason, in ``known_check_failures``
(``{check name: reason}``): :func:`check_design` skips it and reports the reason, :func:`check_params`
marks it xfail.  A design module that is not installed is loaded with ``RFMODEL_DESIGNS`` or
``rfmodel --design-file PATH.py`` (:func:`rfmodel.designs.base.load_design_file`).
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "CHECKS",
    "DesignCheckError",
    "check_design",
    "check_names",
    "check_params",
    "every_profile_table",
    "run_check",
]

#: the workload and GPU the checks run on (small: one kernel, a few warps)
WORKLOAD = "saxpy"
GPU = "maxwell-ltrf"
#: the workloads and GPU of :func:`check_a_point_does_not_depend_on_the_points_beside_it` (analytic only):
#: a register-heavy kernel of few CTAs whose L1D matters, and one whose warps outnumber a collector cache's
#: tables at slow banks
GRID_WORKLOADS = (("gemm_micro8x8", "fermi-gtx480"), ("kmeans_assign", "fermi-gtx480"))
#: simulations run this many warps
SIM_WARPS = 8
#: the technology the structure checks cost at
TECH = {"cell": "sram-hp", "node_nm": 45}


class DesignCheckError(AssertionError):
    """One or more conformance checks failed; the message names each with its reason."""


@dataclass
class _Check:
    name: str
    fn: Callable
    doc: str
    applies: Callable = field(default=lambda d: True)


CHECKS: dict[str, _Check] = {}


def _check(applies=None):
    def wrap(fn):
        name = fn.__name__.removeprefix("check_")
        CHECKS[name] = _Check(
            name, fn, (fn.__doc__ or "").strip().split("\n")[0], applies or (lambda d: True)
        )
        return fn

    return wrap


def _design(design):
    """A design instance from a registered name, a Design subclass or an instance."""
    from rfmodel.designs.base import Design, get_design

    return design() if isinstance(design, type) and issubclass(design, Design) else get_design(design)


#: the engines' answers at the defaults, by (design class, workload, GPU, calibration): computed once per
#: process, since several checks read them and a design object holds configuration only
_RUNS: dict = {}


class _Context:
    """One design under check and its engines' answers on the checks' workload."""

    def __init__(self, design, workload: str, gpu: str, calibration):
        self.design = _design(design)
        self.workload, self.gpu, self.calibration = workload, gpu, calibration

    def evaluate(self, method="analytic", **kw):
        from rfmodel.evaluate import evaluate

        if method != "simulate":
            kw.setdefault("calibration", self.calibration)
        return evaluate(self.design, self.workload, self.gpu, method=method, **kw)

    def runs(self):
        """The analytic and the simulated Dataset (None without the simulator) at the defaults."""
        key = (type(self.design), self.workload, self.gpu, repr(self.calibration))
        if key not in _RUNS:
            a = self.evaluate("analytic")
            s = self.evaluate("simulate", max_warps=SIM_WARPS) if self.design.supports_simulate else None
            _RUNS[key] = (a, s)
        return _RUNS[key]


def _resolve_calibration(design, calibration):
    """``None``: the package calibration where it holds the design, else the designs' default coefficients."""
    if calibration is not None:
        return calibration
    from rfmodel.analytic.calibration import load_calibration

    return None if design.name in load_calibration().get("designs", {}) else False


def _bad_value(d):
    """A parameter of ``d`` and a value outside what its spec allows (None: no bounded parameter)."""
    for name in d.parameters:
        info = d.Params.field_info(name)
        if info.choices is not None and info.type in (int, float):
            return name, max(info.choices) + 7
        if info.bounds is not None and info.type in (int, float) and info.bounds[0] is not None:
            return name, info.bounds[0] - 3
    return None


def _raises(exc, match: str, fn, *args, **kw) -> str:
    """Call ``fn``; the error message when it did not raise ``exc`` with ``match`` in its text, else ''."""
    import re

    try:
        fn(*args, **kw)
    except exc as e:
        return "" if re.search(match, str(e)) else f"{type(e).__name__} without {match!r}: {e}"
    except Exception as e:  # noqa: BLE001 - the wrong error is the finding
        return f"{type(e).__name__} instead of {exc.__name__}: {e}"
    return f"no {exc.__name__}"


# ----------------------------------------------------------------------------- parameters
@_check()
def check_params_round_trip(ctx):
    """The parameters are a DesignParams record that round-trips through TOML, a non-default value too."""
    from rfmodel.designs.base import DesignParams
    from rfmodel.spec import dumps_spec, loads_spec

    d = ctx.design
    assert issubclass(d.Params, DesignParams), "Params is not a DesignParams subclass"
    assert d.parameters == d.Params.field_names(), "parameters differ from Params' fields"
    p = d.resolve()
    assert loads_spec(dumps_spec(p)) == p, "the defaults do not round-trip through TOML"
    for name in d.parameters:
        info = d.Params.field_info(name)
        if info.type is int and info.bounds is not None and info.bounds[1] is not None:
            q = d.resolve({name: info.bounds[1]})
            assert loads_spec(dumps_spec(q)) == q and q != p, f"{name} at its upper bound does not round-trip"
            break


@_check()
def check_bad_value_is_one_spec_error(ctx):
    """A value outside a parameter's range is one SpecError naming it in every engine; a misspelt name too."""
    from rfmodel.errors import SpecError

    d = ctx.design
    bad = _bad_value(d)
    if bad is None:
        return
    name, value = bad
    methods = ["analytic", "montecarlo"] + (["simulate"] if d.supports_simulate else [])
    for method in methods:
        kw = {"max_warps": SIM_WARPS} if method == "simulate" else {}
        msg = _raises(SpecError, name, ctx.evaluate, method, params={name: [value]}, **kw)
        assert not msg, f"{method} with {name}={value}: {msg}"
    msg = _raises(SpecError, "nearest|unknown", d.resolve, {name + "x": 1})
    assert not msg, f"a misspelt parameter: {msg}"


@_check()
def check_bounds_refuse_values_outside(ctx):
    """Every bounded or enumerated parameter refuses a value outside its range."""
    from rfmodel.errors import SpecError

    d = ctx.design
    for name in d.parameters:
        info = d.Params.field_info(name)
        bad = []
        if info.choices is not None and info.type in (int, float):
            bad.append(max(info.choices) + 1)
        elif info.bounds is not None and info.type in (int, float):
            lo, hi = info.bounds
            bad += [lo - 1] if lo is not None else []
            bad += [hi * 2 + 1] if hi is not None else []
        for v in bad:
            msg = _raises(SpecError, name, d.resolve, {name: v})
            assert not msg, f"{name}={v}: {msg}"


@_check()
def check_calibration_coefficients_start_inside_their_bounds(ctx):
    """Each calibration coefficient's default lies inside its bounds."""
    for k, (default, lo, hi) in ctx.design.calibration_params.items():
        assert lo <= default <= hi, f"{k}: default {default} outside [{lo}, {hi}]"


# ----------------------------------------------------------------------------- the engines
@_check(applies=lambda d: d.supports_simulate and d.needs_trace)
def check_needing_the_trace_is_said(ctx):
    """A design that needs the trace being simulated says so when set up without one."""
    from rfmodel.errors import RfmodelError
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.sim import SimOptions

    d = ctx.design
    msg = _raises(RfmodelError, "trace", d.sim_setup, resolve_gpu(ctx.gpu), d.default_params, SimOptions())
    assert not msg, msg


@_check(applies=lambda d: d.supports_simulate)
def check_engines_return_the_same_variables(ctx):
    """The analytic engine and the simulator return the same variables, dims, units, stall reasons and
    structures; every metric of the design is in both; the banks' timing is one answer."""
    a, s = ctx.runs()
    assert set(a.data_vars) == set(s.data_vars), f"variables differ: {set(a.data_vars) ^ set(s.data_vars)}"
    for v in a.data_vars:
        assert a[v].dims == s[v].dims, f"{v}: dims {a[v].dims} against {s[v].dims}"
        assert a[v].attrs.get("units") == s[v].attrs.get("units"), f"{v}: units differ"
    assert list(a.stall_reason.values) == list(s.stall_reason.values), "stall reasons differ"
    assert list(a.structure.values) == list(s.structure.values), "structures differ"
    for m in ctx.design.metrics:
        assert m in a and m in s, f"metric {m} missing from an engine"
    if "rf_cache_hit_rate" in a:
        h = float(a["rf_cache_hit_rate"].item())
        assert 0.0 <= h <= 1.0, f"rf_cache_hit_rate {h}"
    for m in ("main_rf_read_cycles", "main_rf_write_cycles"):
        if m in a:
            assert a[m].values.tolist() == s[m].values.tolist(), f"{m} differs between the engines"


@_check()
def check_events_match_the_structures(ctx):
    """Every event names a structure the design costs, and every structure gets events in every engine."""
    from rfmodel.analytic.engine import run_analytic, workload_profile
    from rfmodel.evaluate import resolve_gpu

    d = ctx.design
    sm = resolve_gpu(ctx.gpu)
    m = run_analytic(d, workload_profile(ctx.workload, sm), sm, {})
    names = {s.name for s in d.structures(sm, {}, TECH)}
    assert set(m["events"]) == names, f"events {sorted(m['events'])} against structures {sorted(names)}"
    for method, ds in zip(("analytic", "simulate"), ctx.runs(), strict=True):
        if ds is None:
            continue
        ev = ds["structure_reads"] + ds["structure_writes"]
        idle = [str(x) for x in ev.structure.values if not np.all(ev.sel(structure=x).values > 0)]
        assert not idle, f"structures without events ({method}): {idle}"


@_check()
def check_power_gating_names_a_structure_and_a_metric(ctx):
    """``leakage_active`` maps structures the design costs to metrics it reports."""
    from rfmodel.evaluate import resolve_gpu

    d = ctx.design
    names = {s.name for s in d.structures(resolve_gpu(ctx.gpu), {}, TECH)}
    for s, metric in d.leakage_active.items():
        assert s in names, f"leakage_active names {s}, not a structure of the design"
        assert metric in d.metrics, f"leakage_active's {metric} is not a metric of the design"


@_check(applies=lambda d: bool(d.size_parameters))
def check_costs_never_fall_as_a_size_grows(ctx):
    """Area and leakage of the structures a size parameter sizes never fall as it grows, and grow overall."""
    from rfmodel.evaluate import resolve_gpu

    d = ctx.design
    sm = resolve_gpu(ctx.gpu)
    for param, structs in d.size_parameters.items():
        lo, hi = d.Params.field_info(param).bounds
        default = getattr(d.resolve(), param)
        values = np.array(sorted({max(lo, default // 2), default, min(hi, default * 2)}))
        by_name = {s.name: s for s in d.structures(sm, {param: values}, TECH)}
        for sname in structs:
            s = by_name[sname]
            for cost in ("area_mm2", "leakage_mw"):
                total = np.broadcast_to(np.asarray(getattr(s, cost)) * np.asarray(s.copies), values.shape)
                assert np.all(np.diff(total) >= 0), f"{param} {values}: {sname} {cost} falls: {total}"
                assert total[-1] > total[0], f"{param} {values}: {sname} {cost} does not grow: {total}"


@_check()
def check_defaults_given_change_nothing(ctx):
    """Every parameter of the design given at its own default (``Design.Params``) gives the analytic answer
    the design gives without it, bit for bit: its terms read a default from the parameter record, not from a
    value typed again beside it."""
    d = ctx.design
    given = {k: [v] for k, v in d.Params().to_dict().items() if k in d.parameters and v is not None}
    if not given:
        return
    a0, a1 = ctx.runs()[0], ctx.evaluate("analytic", params=given)
    for k in a0.data_vars:
        if k in a1 and a0[k].dtype.kind == "f":
            x, y = np.asarray(a0[k].values, float).ravel(), np.asarray(a1[k].values, float).ravel()
            assert np.array_equal(x, y, equal_nan=True), f"{k}: {y} with every default given, {x} without"


@_check()
def check_a_point_does_not_depend_on_the_points_beside_it(ctx):
    """The analytic answer at a point is the same evaluated alone and in a grid beside points of other
    occupancy (half the register file, and an eighth, where few or no CTAs fit): nothing a design or the
    shared model decides for a whole grid (a code path, a cache's geometry, an anchor) may move a point.
    On :data:`GRID_WORKLOADS`, with the banks 6x slower where the design has ``main_rf_latency_x`` (designs
    that hold warps back do so there)."""
    from rfmodel.spec import get_preset

    d = ctx.design
    base = {"main_rf_latency_x": [6]} if "main_rf_latency_x" in d.parameters else {}
    for workload, gpu in GRID_WORKLOADS:
        regs = get_preset(gpu).regs_per_sm
        run = _Context(d, workload, gpu, ctx.calibration).evaluate
        a0 = run("analytic", params=base or None)
        a1 = run("analytic", params={**base, "regs_per_sm": [regs, regs // 2, regs // 8]})
        for k in a0.data_vars:
            if k in a1 and a0[k].dtype.kind == "f" and "regs_per_sm" in a1[k].dims:
                x = np.asarray(a0[k].values, float).ravel()
                y = np.asarray(a1[k].sel(regs_per_sm=regs).values, float).ravel()
                same = np.allclose(x, y, rtol=1e-9, atol=0.0, equal_nan=True)
                assert same, f"{workload} on {gpu}, {k}: {y} in the grid, {x} alone"


@_check()
def check_a_run_repeats_and_leaves_the_design_unchanged(ctx):
    """The same seed gives the same Dataset in every engine, and a run leaves the design object unchanged."""
    d = ctx.design
    before = pickle.dumps(copy.deepcopy(vars(d)))
    a1, a2 = (ctx.evaluate("analytic", seed=3) for _ in range(2))
    assert a1.identical(a2), "two analytic runs with one seed differ"
    if d.supports_simulate:
        s1, s2 = (ctx.evaluate("simulate", seed=3, max_warps=4) for _ in range(2))
        assert s1.identical(s2), "two simulations with one seed differ"
    assert pickle.dumps(copy.deepcopy(vars(d))) == before, "a run changed the design object"


def every_profile_table(source, sm) -> dict:
    """Every table of a default-path profile built at once from its ``source`` (``Profile.source``) on SM
    ``sm``: the fields that the tables built on first use must equal."""
    from rfmodel.analytic import engine
    from rfmodel.analytic.profile import TABLE_GROUPS, profile_tables

    trace, rank = source._trace_and_rank()
    return profile_tables(
        trace,
        tuple(TABLE_GROUPS),
        source.latencies,
        source.exec_latencies,
        source.caches,
        rank,
        source.l1_hit_latency,
        sched=engine.issue_resources(sm),
        group_inputs=engine.group_inputs(source, TABLE_GROUPS),
    )


@_check()
def check_tables_built_on_first_use_agree(ctx):
    """The analytic answer on the default path's profile (tables built on first use) equals the answer on
    the same profile with every table built at once, bit for bit, on a two-level and on a GTO SM."""
    from dataclasses import replace

    from rfmodel.analytic import engine
    from rfmodel.evaluate import resolve_gpu

    for gpu in ("maxwell-ltrf", "fermi-gtx480"):
        sm = resolve_gpu(gpu)
        engine._PROFILE_CACHE.clear()
        lazy = engine.workload_profile(ctx.workload, sm)
        eager = replace(lazy, source=None).with_fields(every_profile_table(lazy.source, sm))
        a, b = engine.run_analytic(ctx.design, eager, sm, {}), engine.run_analytic(ctx.design, lazy, sm, {})
        for k in ("ipc", "cycles", "rf_cache_hit_rate", "bank_conflict_stall_cycles"):
            if k in a:
                x, y = np.asarray(a[k], float), np.asarray(b[k], float)
                assert np.array_equal(x, y, equal_nan=True), f"{gpu} {k}: {x} eager, {y} on first use"


@_check(applies=lambda d: d.neutral is not None)
def check_neutral_point_is_the_baseline(ctx):
    """At its neutral point (``Design.neutral``) the design is the baseline: the calibrated analytic IPC to
    1e-6 (the shared coefficients; a design without a calibration entry of its own runs under the
    baseline's), and the simulator's cycles exactly where the design simulates, on a Fermi and a Volta SM."""
    from rfmodel.evaluate import evaluate

    neutral = {k: [v] for k, v in ctx.design.neutral.items()}
    for gpu in ("fermi-gtx480", "volta-v100"):
        wl = [ctx.workload, "black_scholes"]
        a0 = evaluate("baseline", wl, gpu, calibration=ctx.calibration)["ipc"].values.ravel()
        a1 = evaluate(ctx.design, wl, gpu, params=neutral, calibration=ctx.calibration)["ipc"].values.ravel()
        np.testing.assert_allclose(a1, a0, rtol=1e-6, err_msg=f"{gpu}: analytic IPC at the neutral point")
        if not ctx.design.supports_simulate:
            continue
        s0 = evaluate("baseline", ctx.workload, gpu, method="simulate", max_warps=16)
        s1 = evaluate(ctx.design, ctx.workload, gpu, method="simulate", params=neutral, max_warps=16)
        c0, c1 = float(s0["cycles"].max()), float(s1["cycles"].max())
        assert c1 == c0, f"{gpu}: {c1} simulated cycles at the neutral point, the baseline's {c0}"


# ----------------------------------------------------------------------------- running them
def check_names(design=None) -> list[str]:
    """The checks, in order; with ``design``, those that apply to it."""
    if design is None:
        return list(CHECKS)
    d = _design(design)
    return [n for n, c in CHECKS.items() if c.applies(d)]


def _known(d) -> dict:
    return dict(getattr(d, "known_check_failures", None) or {})


def run_check(design, check: str, *, workload: str = WORKLOAD, gpu: str = GPU, calibration=None) -> None:
    """Run one check on ``design``; an ``AssertionError`` (or the error it met) when it fails.  A check that
    does not apply to the design is refused (ValueError)."""
    if check not in CHECKS:
        from rfmodel.errors import UnknownNameError

        raise UnknownNameError("conformance check", check, CHECKS)
    d = _design(design)
    if not CHECKS[check].applies(d):
        raise ValueError(f"check {check!r} does not apply to design {d.name!r}")
    CHECKS[check].fn(_Context(d, workload, gpu, _resolve_calibration(d, calibration)))


def check_design(
    design, *, workload: str = WORKLOAD, gpu: str = GPU, checks: Iterable[str] | None = None, calibration=None
) -> dict[str, str]:
    """Run every check that applies to ``design`` (or those named in ``checks``) and return ``{check:
    "passed" | "known failure: REASON" | "does not apply"}``; raises :class:`DesignCheckError` naming every
    check that failed, with its message.  ``calibration``: as :func:`rfmodel.evaluate` takes it (default: the
    package calibration where it holds the design, else the designs' default coefficients)."""
    d = _design(design)
    names = list(checks) if checks is not None else list(CHECKS)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        from rfmodel.errors import UnknownNameError

        raise UnknownNameError("conformance check", unknown[0], CHECKS)
    ctx = _Context(d, workload, gpu, _resolve_calibration(d, calibration))
    known = _known(d)
    out, failed = {}, []
    for name in names:
        if not CHECKS[name].applies(d):
            out[name] = "does not apply"
        elif name in known:
            out[name] = f"known failure: {known[name]}"
        else:
            try:
                CHECKS[name].fn(ctx)
                out[name] = "passed"
            except Exception as e:  # noqa: BLE001 - every failure is reported, not only the first
                out[name] = f"failed: {type(e).__name__}: {e}"
                failed.append(f"{name}: {type(e).__name__}: {e}")
    if failed:
        raise DesignCheckError(
            f"design '{d.name}' fails {len(failed)} conformance check(s):\n  " + "\n  ".join(failed)
        )
    return out


def check_params(designs: Iterable | None = None) -> list:
    """pytest parameters ``(design name, check name)`` for every applicable check of each design (default:
    every registered design), ids ``design-check``; a design's known failures are marked xfail with their
    reason."""
    import pytest

    from rfmodel.designs.base import design_names

    out = []
    for name in designs if designs is not None else design_names():
        d = _design(name)
        known = _known(d)
        for check in check_names(d):
            marks = [pytest.mark.xfail(reason=known[check], strict=True)] if check in known else []
            out.append(pytest.param(d.name, check, id=f"{d.name}-{check}", marks=marks))
    return out
