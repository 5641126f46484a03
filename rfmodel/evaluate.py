"""``evaluate``: the one façade over the engines.

    ds = evaluate("baseline", "sgemm_tiled", "fermi-gtx480", method="analytic",
                  params={"num_banks": [8, 16, 32]})

returns an :class:`xarray.Dataset` with dims ``workload`` plus one dim per
varied parameter (``mode="product"``: each value of an axis, and each workload,
given once, so that a coordinate names one row) or one ``point`` dim
(``mode="points"``, equal-length lists: one design point per index), and the
standard metrics:

=====================================  ==========  ==============================================
variable                               unit        meaning
=====================================  ==========  ==============================================
``ipc``                                instr/cycle warp instructions per cycle, one SM
``cycles``                             cycles      run time of the SM's share of the grid
``warps``                              warps       resident warps (occupancy)
``rf_reads`` / ``rf_writes``           accesses    main register-file bank accesses (warp registers)
``bank_conflict_stall_cycles``         cycles      collector cycles lost waiting for banks
``l1d_hit_rate``                       1           L1D hit rate
``collector_occupancy``                1           mean fraction of collector units in use
``energy_pj`` (structure)              pJ          dynamic + leakage energy per structure
``dynamic_energy_pj`` (structure)      pJ          dynamic part
``leakage_energy_pj`` (structure)      pJ          leakage part
``area_mm2`` (structure)               mm^2        area per structure
``energy_pj_total``, ``area_mm2_total``            sums over structures
``power_mw``                           mW          average power at the SM clock
``capacity_kb``                        KB          register-file capacity
=====================================  ==========  ==============================================

Provenance (engine, design, GPU preset, technology, workload sources, seed,
package version) is in ``ds.attrs``.

``method="simulate"`` runs the reference cycle simulator (``rfmodel.sim``) at
every design point instead: the same variables with the same dims and units
(so the two engines' results subtract), computed from the whole SM share of
each workload, plus the simulator's own:

=====================================  ================  ==========================================
``warp_instructions``                  instructions      warp instructions issued (= retired)
``bank_conflicts``                     requests          register reads that lost a bank arbitration
``stall_cycles`` (stall_reason)        scheduler-cycles  why a scheduler issued nothing, per cycle
``structure_reads``/``_writes``        events            the events charged to each structure
=====================================  ================  ==========================================
"""

from __future__ import annotations

import functools
import json
import numbers
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import xarray as xr

from rfmodel.designs.base import Design, design_names, get_design
from rfmodel.energy.accounting import event_counts
from rfmodel.errors import RfmodelError, SpecError, UnknownNameError, expect_between, expect_int
from rfmodel.lazy import lazy_getattr
from rfmodel.limits import MAX_SAMPLES, MAX_SEED
from rfmodel.results import SCALAR_METRICS, UNITS, assemble  # noqa: F401
from rfmodel.sim.core import STALL_REASONS
from rfmodel.spec import SMSpec, get_preset, load_spec
from rfmodel.spec.occupancy import not_modelled
from rfmodel.version import __version__
from rfmodel.workload.sass.opcodes import classed_by_name
from rfmodel.workload.suite import (
    DEFAULT_ARCH,
    Workload,
    default_workloads,
    load_workload,
    split_recipe,
    split_trace_prefix,
    trace_source_of,
)

#: the analytic engine's helpers that are part of the façade's API, imported on first use (a simulation
#: does not load the analytic engine)
ENGINE_NAMES = (
    "PROFILE_WARPS",
    "evaluate_analytic",
    "exec_latencies",
    "issue_resources",
    "memory_latencies",
    "resolve_calibration",
    "workload_profile",
)


__getattr__ = lazy_getattr(__name__, "rfmodel.analytic.engine", ENGINE_NAMES)


METHODS = ("analytic", "simulate", "montecarlo")
#: the design whose pipeline the profile's schedule (:mod:`rfmodel.analytic.stream`) models: every design's
#: analytic IPC is anchored on that schedule through this design's analytic IPC at its defaults
#: (:func:`rfmodel.analytic.engine.anchor_factor`)
ANCHOR_DESIGN = "baseline"
DEFAULT_GPU = "fermi-gtx480"
DEFAULT_TECH = {"cell": "sram-hp", "node_nm": 45}


def resolve_gpu(gpu) -> SMSpec:
    """An SMSpec from a spec, a preset name, a TOML file or a ``gpgpusim.config`` path."""
    if isinstance(gpu, SMSpec):
        return gpu
    if gpu is None:
        return get_preset(DEFAULT_GPU)
    if not isinstance(gpu, str | os.PathLike):
        raise RfmodelError(f"gpu: expected a preset name, a spec file or an SMSpec (got {gpu!r})")
    s = str(gpu)
    if s.endswith(".toml"):
        spec = load_spec(s)
        if not isinstance(spec, SMSpec):
            raise RfmodelError(f"{s}: holds a '{type(spec).kind}' spec, not an SM spec")
        return spec
    if s.endswith("gpgpusim.config") or s.endswith(".config"):
        from rfmodel.spec.gpgpusim import from_gpgpusim_config

        return from_gpgpusim_config(s)
    return get_preset(s)


def _plain_numbers(values) -> bool:
    """Whether ``values`` (a parameter's list) are finite integers or floats in an array numpy types as
    such (no bool, no text, no object): the values :func:`_grid` accepts, told at once instead of one by
    one (a points-mode grid of an optimizer's population names thousands)."""
    if isinstance(values, list | tuple) and any(isinstance(x, bool | np.bool_) for x in values):
        return False  # (numpy would type [1, True] as integers)
    a = np.asarray(values) if isinstance(values, list | tuple | np.ndarray) else None
    if a is None or a.dtype.kind not in "iuf" or a.size == 0:
        return False
    if a.dtype.kind == "u" and int(a.max()) >= 2**63:
        return False
    return a.dtype.kind != "f" or bool(np.isfinite(a).all())


def _grid(params: Mapping[str, Iterable] | None, mode: str):
    """Broadcastable parameter arrays, dims and coords."""
    if params is not None and not isinstance(params, Mapping):
        raise RfmodelError(f"params: expected a table of parameter names to value lists (got {params!r})")
    params = dict(params or {})
    if mode not in ("product", "points"):
        raise RfmodelError(f"mode '{mode}' is invalid; allowed: product, points")
    for k, v in params.items():
        if not isinstance(k, str):
            raise RfmodelError(f"params: parameter names are strings (got {k!r})")
        a = np.atleast_1d(np.asarray(v, dtype=object))
        if a.ndim != 1 or len(a) == 0:
            raise RfmodelError(f"parameter '{k}': expected a non-empty list of values")
        if _plain_numbers(v):  # a list of finite numbers, none a bool: nothing for the loop below to refuse
            continue
        for x in a:
            ok = isinstance(x, (str, np.str_)) or (
                isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
            )
            if not ok:
                raise RfmodelError(f"parameter '{k}': {x!r} is neither a number nor a name")
            if isinstance(x, (int, np.integer)) and not -(2**63) <= int(x) < 2**63:
                raise RfmodelError(f"parameter '{k}': {x} is out of range (a 64-bit integer)")
            if isinstance(x, (float, np.floating)) and not np.isfinite(x):
                raise RfmodelError(f"parameter '{k}': {x} is not a finite number")
        if len({isinstance(x, (str, np.str_)) for x in a}) > 1:  # one array of text: 4 became '4'
            raise RfmodelError(f"parameter '{k}': {list(a)!r} mixes numbers and names; give one kind")
    coords, grid, dims = {}, {}, []
    if mode == "product":
        names = list(params)
        for i, k in enumerate(names):
            v = np.atleast_1d(np.asarray(params[k]))
            if v.ndim != 1 or len(v) == 0:
                raise RfmodelError(f"parameter '{k}': expected a non-empty list of values")
            seen = set()
            for x in v.tolist():
                if x in seen:  # an axis whose coordinate names two rows: a selection by value gets both
                    raise RfmodelError(
                        f"parameter '{k}': {x!r} given twice; a product grid takes each value once "
                        "(mode='points' lists points, which may repeat a value)"
                    )
                seen.add(x)
            shape = [1] * len(names)
            shape[i] = len(v)
            grid[k] = v.reshape(shape)
            coords[k] = v
            dims.append(k)
    else:
        if not params:  # the point axis would have nothing to list (and no length to take)
            raise RfmodelError(
                "mode 'points' lists points of the parameters, and none is given: give params (`--param` "
                "on the command line), or leave mode at 'product' for the one default point"
            )
        lengths = {k: len(np.atleast_1d(v)) for k, v in params.items()}
        if len(set(lengths.values())) > 1:
            raise RfmodelError(f"mode 'points' needs equal-length parameter lists, got {lengths}")
        n = next(iter(lengths.values()), 1)
        for k, v in params.items():
            grid[k] = np.atleast_1d(np.asarray(v))
            coords[k] = ("point", grid[k])
        dims = ["point"]
        coords["point"] = np.arange(n)
    return grid, dims, coords


#: Monte-Carlo samples a call draws unless ``samples`` says otherwise
MC_SAMPLES = 200

#: the most evaluations one call does: (design points x workloads [x samples]) per engine; a larger request is
#: refused before it runs (memory grows with it: split the grid into calls, e.g. ``mode="points"`` chunks)
MAX_EVALUATIONS = {"analytic": 4_000_000, "montecarlo": 4_000_000, "simulate": 100_000}


def _check_size(method: str, grid: dict, n_workloads: int, samples: int = 1) -> None:
    shape = np.broadcast_shapes(*(np.shape(v) for v in grid.values())) if grid else ()
    n = int(np.prod(shape, dtype=object)) * n_workloads * samples
    if n > MAX_EVALUATIONS[method]:
        what = f"{int(np.prod(shape, dtype=object))} design points x {n_workloads} workloads"
        what += f" x {samples} samples" if samples > 1 else ""
        limit = MAX_EVALUATIONS[method]
        raise RfmodelError(
            f"this {method} evaluation has {what} = {n}; at most {limit} per call: split the "
            "grid into several calls"
        )


def _tech_cell(design: Design, grid: dict, tech: Mapping | None) -> dict:
    """The grid with ``tech['main_cell']`` as the design's ``main_cell`` parameter when the grid does not vary
    it, so that the banks' timing follows the technology as their costs do."""
    if not tech or "main_cell" not in tech:
        return grid
    if "main_cell" not in design.parameters:
        with_cell = sorted(n for n in design_names() if "main_cell" in get_design(n).parameters)
        raise RfmodelError(
            f"tech['main_cell'] = {tech['main_cell']!r}: design '{design.name}' has no main-RF cell "
            "parameter (its banks keep the SM's one-cycle timing, so the cell would change their energy and "
            f"not their speed); the designs with one: {', '.join(with_cell)}"
        )
    if "main_cell" in grid:  # the grid's would win, the technology's be recorded and ignored
        raise RfmodelError(
            f"main_cell: given as tech['main_cell'] ({tech['main_cell']!r}) and as a parameter of the grid "
            f"({', '.join(map(str, np.unique(np.asarray(grid['main_cell']))))}); give it once"
        )
    return {**grid, "main_cell": np.asarray(tech["main_cell"])}


def _analytic_sm(sm: SMSpec, grid: dict) -> SMSpec:
    """The SM spec of an analytic evaluation: the analytic models take the SM fields of
    :data:`rfmodel.analytic.model.GRID_FIELDS` as grid arrays; any other SM field the grid names (a latency,
    a bandwidth, a cache size) sets the spec itself, so it takes one value per call."""
    from rfmodel.analytic.model import GRID_FIELDS

    changes = {}
    for k, v in grid.items():
        if k in GRID_FIELDS or k not in _sm_fields(sm):
            continue
        values = np.unique(np.asarray(v).ravel())
        if len(values) > 1:
            raise RfmodelError(
                f"parameter '{k}': the analytic engine takes one value of it per call (it sets the SM spec; "
                f"the fields it sweeps in one call are {', '.join(GRID_FIELDS)}): evaluate each value in its "
                "own call, or use method='simulate'"
            )
        changes[k] = values[0].item()
    return sm.replace(**changes) if changes else sm


@functools.lru_cache(maxsize=256)
def _sm_fields(sm: SMSpec) -> frozenset:
    """The fields ``sm`` sets (those of ``to_dict``: a ``None`` field is left out), remembered per spec."""
    return frozenset(sm.to_dict())


@functools.lru_cache(maxsize=8192)
def _valid_value(sm: SMSpec, k: str, x) -> None:
    """Check ``sm`` with field ``k`` set to ``x`` (a :class:`SpecError` naming the field and its allowed
    range), remembered for the values that pass (an optimizer asks for the same ones again)."""
    sm.replace(**{k: x})


def _valid_points(sm: SMSpec, grid: dict, names: list) -> None:
    """Check every distinct combination of the SM fields ``names`` that a point of the grid takes (the
    fields set together: ``max_regs_per_thread`` 255 is valid beside ``regs_per_sm`` 65536, not beside
    4096), one :class:`SpecError` for the first that is not a valid SM."""
    shape = np.broadcast_shapes(*(np.shape(v) for v in grid.values()))
    cols = [np.broadcast_to(np.asarray(grid[k]), shape).ravel().tolist() for k in names]
    for combo in dict.fromkeys(zip(*cols, strict=True)):
        sm.replace(**dict(zip(names, combo, strict=True)))


def _known_params(design: Design, sm: SMSpec) -> set[str]:
    """The names a grid may vary for ``design`` on ``sm``: the SM's fields, the collector units in total
    and the design's own parameters."""
    return set(_sm_fields(sm)) | {"collector_units"} | set(design.parameters)


def _check_params(design: Design, sm: SMSpec, grid: dict) -> None:
    fields = _sm_fields(sm)
    known = _known_params(design, sm)
    for k in grid:
        if k not in known:
            raise UnknownNameError(f"parameter of design '{design.name}'", k, known)
    if "name" in grid:  # the GPU's identity, not a parameter: its calibration is looked up by it
        raise RfmodelError(
            "parameter 'name': the GPU's name names its preset (its calibration is looked up by it), "
            "it is not a parameter to vary; give another GPU (gpu=, --gpu) instead"
        )
    trial = {k: np.unique(np.asarray(v).ravel()) for k, v in grid.items() if k in fields}
    # validate every value through the specs (one error naming the field and allowed range): the fields
    # given one value together (they may depend on each other: warps_per_sm and max_threads_per_cta), then
    # each value of the others on that SM
    singles = {k: v[0].item() for k, v in trial.items() if len(v) == 1}
    base = sm.replace(**singles) if singles else sm
    try:
        for k, v in trial.items():
            if len(v) > 1:
                for x in v:
                    _valid_value(base, k, x.item())
    except SpecError:  # a value invalid beside the SM's own others may be valid beside the grid's
        _valid_points(base, grid, [k for k, v in trial.items() if len(v) > 1])
    # the collector units in total (not an SM field: the SM's collector sets scaled to it)
    for x in np.unique(np.asarray(grid.get("collector_units", 1)).ravel()):  # each distinct value once
        expect_int("parameter 'collector_units'", x.item() if hasattr(x, "item") else x, low=1, high=4096)
    design.check_grid(grid)


def evaluate(
    design="baseline",
    workload=None,
    gpu=None,
    *,
    method: str = "analytic",
    params: Mapping[str, Iterable] | None = None,
    mode: str = "product",
    tech: Mapping | None = None,
    arch: str = DEFAULT_ARCH,
    seed: int = 0,
    max_warps: int | None | str = "auto",
    sim_options: Mapping | None = None,
    progress=None,
    calibration=None,
    uncertainty: Mapping | None = None,
    samples: int | None = None,
    level: float | None = None,
    on_no_fit: str = "error",
    recipe=None,
) -> xr.Dataset:
    """Evaluate a design on workloads; see the module docstring for the result.  A list of designs is
    :func:`compare` (a ``design`` dimension, and each design's effects against the first).

    ``recipe``: a launch recipe (TOML, docs/execute.md) on which the one kernel ``workload`` names (a SASS
    listing's ``FILE.sass:KERNEL``, a cubin's ``FILE.cubin:KERNEL``, or a shipped kernel) is executed for
    its trace, as the reference
    ``execute[RECIPE.toml]:FILE.sass:KERNEL`` names it; ``ds.attrs["trace_source"]`` says, per workload,
    how its trace was made, and ``ds.attrs["opcodes_classed_by_name"]`` (only where there are any) which of
    a listing's opcodes the SASS table does not know and what class their names gave them.

    ``arch``: the compiler target whose SASS of a shipped kernel is read (``sm_75`` to ``sm_90``); any
    other than the default is refused where no workload is a shipped kernel (:func:`check_arch`).

    ``on_no_fit``: a workload that no design point can host (not one CTA fits: too many registers, warps
    or shared memory) is an error naming the limiting resource (``"error"``), or gives rows that say it ran
    nothing (``"nan"``: 0 resident warps, IPC 0, cycles and total energy inf, power, the stall counts and
    the collectors' occupancy NaN; the workload's own counts and hit rates, e.g. ``rf_reads`` and
    ``l1d_hit_rate``, and the structures' area as at any point: a design-space search where such points
    are infeasible; also what the default built-in suite gets, ``workload=None``, on a GPU too small for
    some of its kernels).

    ``max_warps``: ``"auto"`` profiles the first ``PROFILE_WARPS`` warps (analytic) and
    simulates the whole SM share (simulate); an integer keeps that many warps' whole CTAs.
    ``sim_options`` (simulate only): :class:`rfmodel.sim.SimOptions` fields, e.g.
    ``{"compat": "gpgpusim"}``.  ``progress(done, total)``: simulate only, warp
    instructions retired so far over all runs.

    ``calibration`` (analytic, montecarlo): ``None`` loads the default calibration file
    (``rfmodel/data/calibration/analytic.json``), a path or a dict loads that one,
    ``False`` uses the designs' default coefficients; ``ds.attrs["calibration"]`` says which.
    ``method="montecarlo"``: ``uncertainty`` maps parameters to distributions
    (``{"mem_fraction": ("normal", 0.1)}``, see :mod:`rfmodel.analytic.montecarlo`),
    ``samples`` draws (default :data:`MC_SAMPLES`) seeded by ``seed``; the result holds the sample means and
    ``<metric>_lo`` / ``<metric>_hi``, the quantiles of the central interval of probability ``level``
    (default 0.95: the 2.5 % and 97.5 % quantiles).  With another method these three are refused (with
    several designs, ``level`` also sizes the analytic effects' intervals, :func:`compare`).
    """
    workload = recipe_workload(workload, recipe)
    if isinstance(design, list | tuple):  # several designs at the same points: one Dataset, effects included
        return compare(
            design,
            workload,
            gpu,
            method=method,
            params=params,
            mode=mode,
            tech=tech,
            arch=arch,
            seed=seed,
            max_warps=max_warps,
            sim_options=sim_options,
            progress=progress,
            calibration=calibration,
            uncertainty=uncertainty,
            samples=samples,
            level=level,
            on_no_fit=on_no_fit,
        )
    if method not in METHODS:
        raise UnknownNameError("method", method, METHODS)
    for what, value in (("tech", tech), ("uncertainty", uncertainty), ("sim_options", sim_options)):
        if value is not None and not isinstance(value, Mapping):
            raise RfmodelError(
                f"{what}: expected a mapping of names to values, e.g. {{'node_nm': 32}} (got "
                f"{type(value).__name__} {value!r:.60})"
            )
    if on_no_fit not in ("error", "nan"):
        raise UnknownNameError("on_no_fit", on_no_fit, ("error", "nan"))
    require_fit = on_no_fit == "error" and workload is not None
    expect_int("seed", seed, low=0, high=MAX_SEED)
    if method != "montecarlo":
        given = [
            n
            for n, v in (("uncertainty", uncertainty), ("samples", samples), ("level", level))
            if v is not None
        ]
        if given:
            raise RfmodelError(
                f"{', '.join(given)}: Monte-Carlo options, for method='montecarlo' only "
                f"(method is {method!r})"
            )
    check_arch(arch, workload)
    if seed != 0 and method != "montecarlo" and not any(reads_seed(w) for w in _workload_list(workload)):
        raise RfmodelError(
            f"seed {seed}: no workload draws from it (an Accel-Sim trace or a given Workload is fixed, and "
            f"method {method!r} draws nothing), so it would change nothing; leave it out"
        )
    # what every engine takes
    common = dict(arch=arch, seed=seed, require_fit=require_fit)
    if method == "simulate":
        if calibration is not None and calibration is not False:  # a file or table the simulator never reads
            raise RfmodelError(
                "calibration: the analytic engine's coefficients (analytic, montecarlo); method 'simulate' "
                "reads none"
            )
        return _checked(
            _evaluate_simulate(
                _engine_inputs(design, workload, gpu, params, mode, tech, method),
                max_warps=None if max_warps == "auto" else max_warps,
                sim_options=sim_options,
                progress=progress,
                **common,
            ),
            workload,
        )
    if max_warps == "auto":
        from rfmodel.analytic.engine import PROFILE_WARPS

        max_warps = PROFILE_WARPS
    if sim_options is not None:
        raise RfmodelError("sim_options (--compat on the command line) apply to method='simulate' only")
    samples = MC_SAMPLES if samples is None else samples
    return _checked(
        _evaluate_analytic(
            _engine_inputs(design, workload, gpu, params, mode, tech, method, samples),
            max_warps=max_warps,
            calibration=calibration,
            method=method,
            uncertainty=uncertainty,
            samples=samples,
            level=level,
            **common,
        ),
        workload,
    )


def _checked(ds: xr.Dataset, workload) -> xr.Dataset:
    """An engine's result after :func:`check_names` and :func:`check_physical`."""
    return check_physical(check_names(ds, workload))


#: what every engine's answer must hold where a point runs (``warps`` > 0): the variables, and whether 0
#: is allowed (a count or an energy may be 0; the IPC and the cycles may not)
PHYSICAL = {
    "ipc": False,
    "cycles": False,
    "energy_pj": True,
    "dynamic_energy_pj": True,
    "leakage_energy_pj": True,
    "energy_pj_total": True,
    "power_mw": True,
    "area_mm2": True,
    "structure_reads": True,
    "structure_writes": True,
    "rf_reads": True,
    "rf_writes": True,
}


def check_names(ds: xr.Dataset, workload) -> xr.Dataset:
    """``ds`` unchanged, or one error where two workloads of the result carry the same name (two references
    to one kernel: a shipped name and a listing of it, a recipe and a listing), which would be two rows
    no selection tells apart, the provenance of one of them lost."""
    names = ds.indexes["workload"] if "workload" in ds.indexes else None
    if names is None or names.is_unique:
        return ds
    names = [str(x) for x in names]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        refs = [str(w if isinstance(w, str | Path) else w.name) for w in _workload_list(workload)]
        same = [r for r, n in zip(refs, names, strict=False) if n == twice[0]]
        raise RfmodelError(
            f"workloads {', '.join(map(repr, same))} are {'both' if len(same) == 2 else 'all'} named "
            f"{twice[0]!r} (one kernel by two "
            "references): their rows could not be told apart; evaluate them in separate calls"
        )
    return ds


def check_physical(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` unchanged, or one error naming the design, the variable, the workload and the value where a
    point that runs (``warps`` above 0) has an IPC or cycle count that is not finite and above 0, or a
    count, energy, power or area that is negative or not finite: the design's terms (a plug-in's
    ``analytic`` or its simulator hooks) gave what no register file can, which would otherwise be read as
    an answer (a negative IPC ranks first on a minimized time).  In numpy, every array once (an optimizer
    calls this per population): only a variable with a value out of range looks up its points."""
    variables = ds.variables  # the arrays without a DataArray each (this runs per population)
    runs = None
    for name, zero_ok in PHYSICAL.items():
        if name not in variables:
            continue
        x = variables[name].values
        with np.errstate(invalid="ignore"):
            bad = ~(np.isfinite(x) & ((x >= 0) if zero_ok else (x > 0)))
        if not bad.any():
            continue
        dims = variables[name].dims
        if "warps" in variables:  # a point that hosts no CTA gives NaN and 0 by design (on_no_fit="nan")
            w = variables["warps"]
            runs = w.values > 0 if runs is None else runs
            bad &= _aligned(runs, w.dims, dims)
            if not bad.any():
                continue
        v = ds[name]
        at = np.argwhere(bad)[0]
        where = {d: v[d].values[i].item() for d, i in zip(v.dims, at, strict=True) if d in v.coords}
        allowed = "a finite number of 0 or more" if zero_ok else "a finite number above 0"
        raise RfmodelError(
            f"design '{ds.attrs.get('design', '?')}' gave {name} = {float(x[tuple(at)]):.6g} at "
            f"{', '.join(f'{k}={w}' for k, w in where.items()) or 'its point'} ({ds.attrs.get('engine')} "
            f"engine), where a point that runs must give {allowed}: the design's terms are wrong"
        )
    return ds


def _aligned(mask: np.ndarray, mask_dims, dims) -> np.ndarray:
    """``mask`` (over ``mask_dims``) as an array that broadcasts against a variable over ``dims`` (the
    mask's dims the variable lacks: any of them)."""
    mask_dims = list(mask_dims)
    extra = tuple(i for i, d in enumerate(mask_dims) if d not in dims)
    if extra:
        mask = mask.any(axis=extra)
        mask_dims = [d for d in mask_dims if d in dims]
    a = np.transpose(mask, [mask_dims.index(d) for d in dims if d in mask_dims])
    sizes = dict(zip(mask_dims, mask.shape, strict=True))
    return a.reshape([sizes.get(d, 1) for d in dims])


#: the metrics :func:`compare` gives as effects against its reference design, ``<metric>_effect``
EFFECT_METRICS = ("ipc", "energy_pj_total", "power_mw", "area_mm2_total")


#: the axes of a result that label the parts of one point's value (its structures, its stall reasons):
#: :func:`result_table` spreads them over columns
PART_DIMS = ("structure", "stall_reason")


def result_table(ds: xr.Dataset):
    """A result as a table of one row per point (each workload, design and grid point: the result's other
    axes), every value once: a variable over the structures or the stall reasons is one column per part,
    ``<name>.<part>`` (``energy_pj.collector``, ``stall_cycles.memory``), a point's own value (the area)
    stands in each of its workloads' rows.  ``rfmodel evaluate --out FILE.csv`` and ``rfmodel simulate
    --out FILE.csv`` write it; the long form, ``ds.to_dataframe()``, repeats each value once per part of
    every other parted variable, so its columns do not sum to the totals."""
    parts = [d for d in PART_DIMS if d in ds.dims]
    point_dims = [d for d in ds.dims if d not in parts]
    cols = {}
    for name, v in ds.data_vars.items():
        mine = [d for d in parts if d in v.dims]
        if not mine:
            cols[name] = v
            continue
        stacked = v.stack(_part=mine)
        for i, label in enumerate(stacked["_part"].values):
            label = ".".join(map(str, label)) if isinstance(label, tuple) else str(label)
            cols[f"{name}.{label}"] = stacked.isel(_part=i, drop=True)
    coords = {k: c for k, c in ds.coords.items() if not set(c.dims) & set(parts)}
    table = xr.Dataset(cols, coords=coords)
    if not point_dims:
        return table.expand_dims("row").to_dataframe().reset_index(drop=True)
    return table.to_dataframe(dim_order=point_dims).reset_index()


def compare(
    designs,
    workload=None,
    gpu=None,
    *,
    reference=None,
    params: Mapping[str, Iterable] | None = None,
    **kwargs,
) -> xr.Dataset:
    """Several designs at the same points: :func:`evaluate` of each (``kwargs`` as there: ``method``,
    ``mode``, ``tech``, ...), joined along a ``design`` dimension, with each design's effect against the
    ``reference`` design (default: the first), ``<metric>_effect = metric / metric(reference) - 1`` for the
    metrics of :data:`EFFECT_METRICS` (``ipc_effect``: +0.05 is 5 % more IPC).  A design's own metrics
    (a register cache's hit rate) are NaN for the designs without them.  ``params`` apply to every design:
    a key some of the designs do not take is refused (compare at shared SM fields or parameters, or
    evaluate each design on its own)."""
    if isinstance(designs, str) or not isinstance(designs, Iterable):
        raise RfmodelError(f"compare: expected a list of design names (got {designs!r:.60})")
    names = list(designs)
    if len(names) < 2:
        raise RfmodelError(f"compare: give two designs or more (got {names})")
    ds_of = [get_design(d) for d in names]
    dup = sorted({d.name for d in ds_of if sum(e.name == d.name for e in ds_of) > 1})
    if dup:
        raise RfmodelError(f"compare: design {dup[0]!r} given twice")
    reference = names[0] if reference is None else reference
    if get_design(reference).name not in [d.name for d in ds_of]:
        raise RfmodelError(
            f"compare: the reference {reference!r} is not among the designs "
            f"({', '.join(d.name for d in ds_of)})"
        )
    sm = resolve_gpu(gpu)
    shared = set(sm.to_dict()) | {"collector_units"}
    for k in params or {}:
        missing = [d.name for d in ds_of if k not in shared and k not in d.parameters]
        if missing:
            raise RfmodelError(
                f"compare: parameter {k!r} is not one of {', '.join(missing)}'s (allowed: SM "
                "fields and parameters every compared design takes; evaluate each design on "
                "its own to vary its own parameters)"
            )
    method = kwargs.get("method", "analytic")
    if method == "simulate" and kwargs.get("level") is not None:
        raise RfmodelError("level: the interval of analytic and Monte-Carlo results; method is 'simulate'")
    # an analytic comparison takes ``level`` for its effects' intervals (below), not for each design's run
    each = {k: v for k, v in kwargs.items() if not (k == "level" and method != "montecarlo")}
    runs = [evaluate(d.name, workload, sm, params=params, **each) for d in ds_of]
    out = xr.concat(
        runs,
        dim=xr.Variable("design", [d.name for d in ds_of]),
        data_vars="all",
        coords="minimal",
        compat="override",
        join="outer",
        combine_attrs="drop_conflicts",
    )
    ref = out.sel(design=get_design(reference).name)
    for m in EFFECT_METRICS:
        if m in out:
            out[f"{m}_effect"] = out[m] / ref[m] - 1.0
            out[f"{m}_effect"].attrs = {"units": "1", "long_name": f"{m} / {m} of {reference} - 1"}
    out.attrs["design"] = ", ".join(d.name for d in ds_of)
    out.attrs["reference"] = get_design(reference).name
    if "ipc_effect" in out and method in ("analytic", "montecarlo"):
        _effect_interval(out, get_design(reference).name, kwargs.get("calibration"), kwargs.get("level"))
    return out


def _effect_interval(out: xr.Dataset, reference: str, calibration, level) -> None:
    """``ipc_effect_lo`` / ``ipc_effect_hi``: the central ``level`` interval of each analytic IPC effect from
    the calibrated error of the model's effects (``model_log_effect_sd``: the held-out RMS of
    ``log((1 + model effect) / (1 + simulated effect))``, :mod:`rfmodel.calibrate.effects`), drawn as a
    lognormal factor on ``1 + effect``: the error the design and its reference share cancels in it, which
    independent intervals of the two IPCs would count twice.  Where the calibration measured that error per
    speed of the register banks (``model_log_effect_sd_by_bank_speed``, keyed by the simulated banks' read
    cycles), a point takes the scale at its banks' read cycles (``main_rf_read_cycles``; one where the design
    has none; :class:`rfmodel.analytic.montecarlo.BankSpeedScale`): at slow banks the error is several
    times the SM's own.  The
    calibration measures effects against the baseline: against another reference the two designs' scales
    at the point combine (``hypot``).  The reference's own effect is exactly 0; a design the calibration
    has no effect error for gets NaN (``attrs["effect_interval"]`` says which)."""
    from scipy.stats import norm

    from rfmodel.analytic.calibration import design_entry
    from rfmodel.analytic.montecarlo import DEFAULT_LEVEL, BankSpeedScale, interval_quantiles

    lo_q, hi_q = interval_quantiles(DEFAULT_LEVEL if level is None else level)
    by_speed = []

    def against_baseline(d: str):
        if d == ANCHOR_DESIGN:
            return 0.0
        entry = design_entry(calibration, d)
        table = entry.get("model_log_effect_sd_by_bank_speed")
        if not table or "main_rf_read_cycles" not in out:
            return entry.get("model_log_effect_sd", np.nan)
        by_speed.append(d)
        cycles = out["main_rf_read_cycles"].sel(design=d, drop=True)
        return xr.apply_ufunc(BankSpeedScale.of(table).at, cycles)

    # an effect against another reference is the ratio of two effects against the baseline: their errors
    # add (taken as independent)
    ref_sd = against_baseline(reference)
    pieces = []  # each design's scale at each of its points
    for d in out["design"].values:
        zero = xr.zeros_like(out["ipc_effect"].sel(design=d, drop=True), dtype=np.float64)
        pieces.append(zero if str(d) == reference else zero + np.hypot(against_baseline(str(d)), ref_sd))
    sd = xr.concat(pieces, dim=out["design"])
    one = 1.0 + out["ipc_effect"]
    for name, q in (("ipc_effect_lo", lo_q), ("ipc_effect_hi", hi_q)):
        out[name] = one * np.exp(norm.ppf(q) * sd) - 1.0
        out[name].attrs = {
            "units": "1",
            "quantile": q,
            "long_name": f"{100 * q:g} % quantile of ipc_effect from the calibrated effect error",
        }
    missing = [str(d) for d in out["design"].values if not np.all(np.isfinite(np.asarray(sd.sel(design=d))))]
    none = f"; none for {', '.join(missing)} (not in the calibration)" if missing else ""
    via = "" if reference == ANCHOR_DESIGN else f", combined with {reference}'s against {ANCHOR_DESIGN}"
    speed = f", per speed of the banks for {', '.join(sorted(set(by_speed)))}" if by_speed else ""
    out.attrs["effect_interval"] = (
        f"ipc_effect_lo/_hi: {100 * (hi_q - lo_q):g} % interval from the "
        f"calibration's held-out effect error (model_log_effect_sd){speed}{via}{none}"
    )


def _param_value(design: Design, sm: SMSpec, name: str):
    try:
        return design.param_value(sm, name)
    except KeyError:
        raise RfmodelError(
            f"parameter '{name}': no default value for design '{design.name}'; give at="
        ) from None


INTEGER_PARAMS = (
    "num_banks",
    "collector_units",
    "regs_per_sm",
    "warps_per_sm",
    "schedulers_per_sm",
    "issue_width",
    "bank_rw_ports",
    "bank_read_ports",
)


def sensitivity(
    design="baseline",
    workload=None,
    gpu=None,
    param: str = "num_banks",
    *,
    metrics=("ipc", "cycles", "energy_pj_total", "bank_conflict_stall_cycles"),
    at=None,
    params: Mapping[str, Iterable] | None = None,
    rel_step: float = 0.05,
    **kw,
) -> xr.Dataset:
    """Partial derivatives ``d metric / d param`` of the analytic model by central differences.

    The model is evaluated, vectorized, at ``x - h``, ``x`` and ``x + h`` (``x = at``, default the
    GPU's or the design's value; ``h = rel_step x``; integer parameters step to the nearest values
    the spec accepts, e.g. bank counts that divide the register count) over the product grid
    ``params`` of the other parameters.  Returns a Dataset with, per metric,
    ``<metric>`` (at ``x``), ``d_<metric>`` (the derivative, metric units per parameter unit) and
    ``elasticity_<metric>`` (``(x / metric) d metric / d x``: relative change per relative
    change); ``attrs`` name the parameter, ``x`` and the two neighbours.  ``kw`` go to :func:`evaluate`
    (``method`` must stay ``"analytic"``).
    """
    if kw.get("method", "analytic") != "analytic":
        raise RfmodelError("sensitivity differentiates the analytic model (method='analytic')")
    kw.pop("method", None)
    d = get_design(design)
    sm = resolve_gpu(gpu)
    known = _known_params(d, sm)
    if not isinstance(param, str) or param not in known:
        raise UnknownNameError(f"parameter of design '{d.name}'", param, known)
    if param in (params or {}):
        raise RfmodelError(f"params['{param}']: the parameter differentiated is set by at=, not in params")
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    if not metrics:
        raise RfmodelError("metrics: name at least one metric, e.g. ('ipc',)")
    expect_between("rel_step", rel_step, 0.0, 1.0, "0.05")
    value = _param_value(d, sm, param) if at is None else at
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise RfmodelError(f"parameter '{param}' = {value!r}: not a number, so it has no derivative")
    x = float(value)
    if not np.isfinite(x):
        raise RfmodelError(f"at = {at!r}: not a finite number")
    integer = param in INTEGER_PARAMS or (param in d.parameters and d.Params.field_info(param).type is int)
    h = max(abs(x) * rel_step, 1e-6)
    lo, hi = x - h, x + h
    if integer:
        x = int(round(x))
        step = max(1, round(h))

        def valid(v):
            if v < 1:
                return False
            if param not in sm.to_dict():
                return True
            try:
                sm.replace(**{param: v})
            except RfmodelError:
                return False
            return True

        if not valid(x):
            raise RfmodelError(f"at = {at!r}: not a value {param} takes on {sm.name}")
        # the nearest valid values (a bank count must divide the registers, ...); one-sided at a bound
        lo = next((v for v in range(x - step, 0, -1) if valid(v)), x)
        hi = next((v for v in range(x + step, 64 * max(x, 1) + 2) if valid(v)), x)
        if lo == hi:
            raise RfmodelError(f"sensitivity: no valid neighbour of {param} = {x}")
    from rfmodel.analytic.model import GRID_FIELDS

    other = dict(params or {})
    if param in sm.to_dict() and param not in GRID_FIELDS:  # a field that sets the SM spec: one call a value
        runs = [
            evaluate(d, workload, sm, method="analytic", params={**other, param: [v]}, **kw)
            for v in (lo, x, hi)
        ]
        ds = xr.concat(runs, dim=param)
    else:
        ds = evaluate(d, workload, sm, method="analytic", params={**other, param: [lo, x, hi]}, **kw)
    out = xr.Dataset(attrs={**ds.attrs, "sensitivity_param": param, "x": x, "x_lo": lo, "x_hi": hi})
    for m in metrics:
        if m not in ds.data_vars:
            raise UnknownNameError("metric", m, sorted(ds.data_vars))
        y = ds[m]
        y_lo, y0, y_hi = (y.isel({param: i}, drop=True) for i in range(3))
        der = (y_hi - y_lo) / (hi - lo)
        out[m] = y0
        out[f"d_{m}"] = der
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"elasticity_{m}"] = der * x / y0
        out[f"d_{m}"].attrs["units"] = f"{UNITS.get(m, '')} per unit of {param}"
    return out


def recipe_workload(workload, recipe):
    """``workload`` run on the launch recipe ``recipe`` (:func:`rfmodel.workload.suite.with_recipe`), or
    ``workload`` itself without one; a recipe launches one kernel, so ``workload`` must name exactly one."""
    from rfmodel.workload.suite import with_recipe

    if recipe is None:
        return workload
    one = workload[0] if isinstance(workload, list | tuple) and len(workload) == 1 else workload
    if not isinstance(one, str | Path):
        raise RfmodelError(
            f"recipe: a launch recipe runs one kernel; name exactly one workload with it "
            f"(got {workload!r:.80})"
        )
    return with_recipe(str(one), recipe)


def _workload_list(workload) -> list:
    if workload is None:
        workloads = default_workloads()
    elif isinstance(workload, (str, Workload)):
        workloads = [workload]
    elif isinstance(workload, Iterable) and not isinstance(workload, Mapping):
        workloads = list(workload)
    else:
        workloads = None
    if workloads is not None and not all(isinstance(w, (str, Workload)) for w in workloads):
        workloads = None
    if workloads is None:
        raise RfmodelError(
            f"workload: expected a name, a path, a Workload or a list of them (got {workload!r})"
        )
    if not workloads:
        raise RfmodelError("no workloads to evaluate")
    seen = set()
    for w in workloads:
        name = w if isinstance(w, str) else w.name
        if isinstance(w, str) and not w.strip():  # read as the current folder before
            raise RfmodelError("workload '': an empty name; give a built-in name, a path or a preset")
        if name in seen:  # two rows of one name on the result's workload axis
            raise RfmodelError(f"workload {name!r} given twice")
        seen.add(name)
    return workloads


def _kernel_ref(ref) -> tuple[str | None, str]:
    """``(recipe, kernel reference)`` of a workload reference, its trace prefix taken off."""
    recipe, kernel_ref = split_recipe(str(ref))
    return recipe, split_trace_prefix(kernel_ref)[0]


def reads_arch(ref) -> bool:
    """Whether loading the workload ``ref`` reads its ``arch``: a shipped kernel's name (with or without a
    trace prefix or a launch recipe) picks that kernel's SASS for the architecture; a listing or cubin, a
    synthetic preset, an Accel-Sim trace or a loaded :class:`Workload` has its own code."""
    from rfmodel.workload.manifest import manifest

    return isinstance(ref, str | Path) and _kernel_ref(ref)[1] in manifest()["kernels"]


def reads_seed(ref) -> bool:
    """Whether loading the workload ``ref`` reads its ``seed``: a kernel's trace is expanded (branch
    outcomes and addresses drawn from it) or executed on a recipe's seeded inputs; an Accel-Sim trace and
    a loaded :class:`Workload` are fixed."""
    from rfmodel.workload.suite import SYNTHETIC_PREFIX, is_accelsim_path, split_kernel_choice

    if not isinstance(ref, str | Path):
        return False
    recipe, kernel_ref = _kernel_ref(ref)
    if recipe is not None or kernel_ref.startswith(SYNTHETIC_PREFIX):
        return True
    from rfmodel.workload.manifest import manifest

    return kernel_ref in manifest()["kernels"] or not is_accelsim_path(split_kernel_choice(kernel_ref)[0])


def check_arch(arch, workload) -> None:
    """Refuse an ``arch`` other than the default where no workload of ``workload`` (a reference, a list of
    them, or ``None``: the built-in suite) reads it: only a shipped kernel is read at an architecture (its
    SASS of that compiler target, with or without a trace prefix or a launch recipe); a listing or cubin
    of the user's, a synthetic preset and an Accel-Sim trace carry their own code, so the setting would
    change nothing."""
    if arch == DEFAULT_ARCH:
        return
    workloads = _workload_list(workload)
    if not any(reads_arch(w) for w in workloads):
        names = ", ".join(str(w if isinstance(w, str | Path) else w.name) for w in workloads[:3])
        more = f" and {len(workloads) - 3} more" if len(workloads) > 3 else ""
        raise RfmodelError(
            f"arch {arch!r}: only a shipped kernel's SASS is chosen by architecture, and no workload is one "
            f"({names}{more}: a listing, cubin, synthetic preset or Accel-Sim trace has its own code), so "
            "arch would change nothing; leave it out"
        )


def stall_reasons(design: Design) -> tuple[str, ...]:
    """The stall reasons of a design's runs: the simulator core's, then the design's own."""
    return (*STALL_REASONS, *design.stall_reasons)


def _engine_inputs(design, workload, gpu, params, mode, tech, method, samples=1) -> tuple:
    """What every engine runs on, checked: the design, the SM, the technology (``tech`` over the defaults),
    the workloads and the grid of the design's and the SM's parameters (its dimensions and coordinates, the
    technology cell in it), within ``method``'s size limit at ``samples`` draws a point (Monte-Carlo)."""
    d = get_design(design)
    sm = resolve_gpu(gpu)
    allowed = (*DEFAULT_TECH, "main_cell", *d.tech_options)
    unknown = [k for k in (tech or {}) if k not in allowed]
    if unknown:  # a misspelt key changed nothing
        raise RfmodelError(
            f"tech: {', '.join(map(repr, unknown))} is not a technology option of design '{d.name}'; "
            f"allowed: {', '.join(allowed)}"
        )
    for k, v in (tech or {}).items():  # a cell by its name, the rest numbers (a node given as '32')
        named = k in ("cell", "main_cell")
        if (not isinstance(v, str)) if named else (isinstance(v, bool) or not isinstance(v, numbers.Real)):
            raise RfmodelError(
                f"tech[{k!r}] = {v!r}: expected {'a cell name' if named else 'a number'} "
                f"(got {type(v).__name__})"
            )
    tech = {
        **DEFAULT_TECH,
        **{k: v.item() if isinstance(v, np.generic) else v for k, v in (tech or {}).items()},
    }
    workloads = _workload_list(workload)
    grid, dims, coords = _grid(params, mode)
    grid = _tech_cell(d, grid, tech)
    if method == "montecarlo":
        expect_int("samples", samples, low=2, high=MAX_SAMPLES)
    _check_size(method, grid, len(workloads), int(samples) if method == "montecarlo" else 1)
    _check_params(d, sm, grid)
    return d, sm, tech, workloads, grid, dims, coords


def _evaluate_analytic(
    inputs,
    *,
    arch,
    seed,
    max_warps,
    calibration,
    require_fit=True,
    method="analytic",
    uncertainty=None,
    samples=1,
    level=None,
) -> xr.Dataset:
    """The analytic engine (:func:`rfmodel.analytic.engine.evaluate_analytic`) on the checked ``inputs``
    (:func:`_engine_inputs`), or with ``method="montecarlo"`` its Monte-Carlo form
    (:func:`rfmodel.analytic.montecarlo.evaluate_montecarlo`: ``samples`` draws of the ``uncertainty``
    distributions, intervals of probability ``level``)."""
    from rfmodel.analytic.engine import evaluate_analytic

    d, sm, tech, workloads, grid, dims, coords = inputs
    sm = _analytic_sm(sm, grid)
    if sm.rows_per_warp_register > 1:  # every engine term takes one bank access a warp register
        raise RfmodelError(
            f"bank_width_bits {sm.bank_width_bits}: a warp register ({sm.warp_reg_bits} bits) takes "
            f"{sm.rows_per_warp_register} rows of such a bank, and the analytic engine models one access a "
            "register (its extra accesses and bank cycles would be left out, its costs counted per row): "
            "use method='simulate', or banks at least a warp register wide"
        )
    common = {
        "grid": grid,
        "dims": dims,
        "coords": coords,
        "tech": tech,
        "arch": arch,
        "seed": seed,
        "max_warps": max_warps,
        "calibration": calibration,
        "stall_reasons": stall_reasons(d),
        "require_fit": require_fit,
        "reference": get_design(ANCHOR_DESIGN),
    }
    if method == "montecarlo":
        from rfmodel.analytic.montecarlo import DEFAULT_LEVEL, evaluate_montecarlo

        return _by_schedule_group(
            sm,
            grid,
            dims,
            lambda sm_g: evaluate_montecarlo(
                d,
                workloads,
                sm_g,
                uncertainty=uncertainty or {},
                samples=samples,
                level=DEFAULT_LEVEL if level is None else level,
                **common,
            ),
        )
    return _by_schedule_group(sm, grid, dims, lambda sm_g: evaluate_analytic(d, workloads, sm_g, **common))


def _by_schedule_group(sm: SMSpec, grid: dict, dims: list, run) -> xr.Dataset:
    """``run(spec)`` once per group of :func:`_schedule_groups`, each point taken from its group's run."""
    out = None
    for sm_g, mask in _schedule_groups(sm, grid, dims):
        ds = run(sm_g)
        out = ds if out is None else _take_points(out, ds, mask)
    return out


def _schedule_groups(sm: SMSpec, grid: dict, dims: list) -> list:
    """``(SM spec, mask)`` per distinct combination of the grid's
    :data:`rfmodel.analytic.model.SCHEDULE_FIELDS` (a workload's list schedule is built at the spec's
    schedulers and issue width, so each combination is evaluated on a spec that has it)
    (:func:`_field_groups`)."""
    from rfmodel.analytic.model import SCHEDULE_FIELDS

    return _field_groups(sm, grid, dims, [k for k in SCHEDULE_FIELDS if k in grid])


def _spec_fields(sm: SMSpec, grid: dict) -> list:
    """The SM fields the grid sets that the structures' costs take from the spec, not from the grid: every
    one but :data:`rfmodel.analytic.model.GRID_FIELDS` (which the designs' costs read over the grid)."""
    from rfmodel.analytic.model import GRID_FIELDS

    return [k for k in grid if k in _sm_fields(sm) and k not in GRID_FIELDS]


def _field_groups(sm: SMSpec, grid: dict, dims: list, names: list) -> list:
    """``(SM spec, mask)`` per distinct combination of the grid's SM fields ``names``: the spec with those
    values, and its points as a DataArray over ``dims`` (``None`` for the first group, which the others
    overwrite: :func:`_take_points`); ``[(sm, None)]`` without such fields."""
    if not names:
        return [(sm, None)]
    shape = np.broadcast_shapes(*(np.shape(v) for v in grid.values()))
    cols = [np.broadcast_to(np.asarray(grid[k]), shape) for k in names]
    kinds = [type(getattr(sm, k)) for k in names]  # a field's own type (an int field given 2.0 is 2)
    keys = [
        tuple(t(x) if t in (int, float) else x for t, x in zip(kinds, row, strict=True))
        for row in zip(*(c.ravel().tolist() for c in cols), strict=True)
    ]
    groups = []
    for i, combo in enumerate(sorted(set(keys))):
        sm_g = sm.replace(**dict(zip(names, combo, strict=True)))
        mask = None
        if i:
            sel = np.array([k == combo for k in keys], dtype=bool).reshape(shape)
            mask = xr.DataArray(sel, dims=dims)
        groups.append((sm_g, mask))
    return groups


def _take_points(out: xr.Dataset, ds: xr.Dataset, mask: xr.DataArray) -> xr.Dataset:
    """``out`` with the values of ``ds`` at the grid points of ``mask`` (variables over the grid's dims; the
    others do not depend on the point)."""
    res = out.copy()
    for k, v in ds.data_vars.items():
        if set(mask.dims) <= set(v.dims):
            res[k] = xr.where(mask, v, out[k], keep_attrs=True).transpose(*v.dims)
    # what either run says it did not model or apply holds for the points it answers
    for key in ("not_modelled", "limits_not_applied", "not_estimated"):
        said = [x for a in (out.attrs.get(key, ""), ds.attrs.get(key, "")) for x in str(a).split("; ") if x]
        if said:
            res.attrs[key] = "; ".join(dict.fromkeys(said))
    return res


# ------------------------------------------------------------------------------------------- simulate
def _simulate_workload(w, sm: SMSpec, *, arch: str, seed: int, max_warps):
    """The SM's share of a workload as a trace (an Accel-Sim grid is cut to SM 0's CTAs)."""
    name, trace, _kernel = _simulation_input(w, sm, arch=arch, seed=seed, max_warps=max_warps)
    return name, trace


def _simulation_workload(w, sm: SMSpec, *, arch: str, seed: int, max_warps) -> Workload:
    """A workload for the simulator: the SM's share, as :func:`rfmodel.workload.suite.load_workload` cuts
    it for both engines."""
    return load_workload(
        w, arch=arch, num_sms=sm.num_sms, seed=seed, max_warps=max_warps, line_bytes=sm.l1d.line_bytes
    )


def _simulation_input(w, sm: SMSpec, *, arch: str, seed: int, max_warps):
    """``(name, trace, static kernel or None)`` of a workload for the simulator
    (:func:`_simulation_workload`)."""
    wl = _simulation_workload(w, sm, arch=arch, seed=seed, max_warps=max_warps)
    return wl.name, wl.trace, wl.kernel


def _point_sm(sm: SMSpec, point: dict) -> SMSpec:
    fields = {k: v for k, v in point.items() if k in sm.to_dict()}
    if "collector_units" in point:
        n = int(point["collector_units"])
        if sm.collectors.specialized:
            raise RfmodelError(
                "collector_units can be varied in simulate only for SMs with generic collectors; "
                f"'{sm.name}' has typed collector sets"
            )
        fields["collectors"] = sm.collectors.replace(gen=n)
    return sm.replace(**fields) if fields else sm


def _evaluate_simulate(
    inputs, *, arch, seed, max_warps, sim_options, progress, require_fit=True
) -> xr.Dataset:
    """The cycle simulator at every point of the grid on the checked ``inputs`` (:func:`_engine_inputs`)."""
    from rfmodel.sim.engine import SimOptions, simulate_trace

    d, sm, tech, workloads, grid, dims, coords = inputs
    opts = sim_options if isinstance(sim_options, SimOptions) else SimOptions.from_dict(sim_options)
    if not d.supports_simulate:
        raise RfmodelError(f"design '{d.name}' does not support the cycle simulator (method='simulate')")
    structures = d.structures(sm, grid, tech)
    shape = np.broadcast_shapes(*(np.shape(v) for v in grid.values())) if grid else ()
    full_grid = {k: np.broadcast_to(v, shape) for k, v in grid.items()}
    points = list(np.ndindex(shape)) if shape else [()]
    traces = []
    for w in workloads:
        wl = _simulation_workload(w, sm, arch=arch, seed=seed, max_warps=max_warps)
        traces.append((wl.name, wl.trace, wl.kernel, trace_source_of(wl)))
    names = [n for n, _, _, _ in traces]
    sources = {n: how for n, _, _, how in traces}
    classed = {n: c for n, _, k, _ in traces if (c := classed_by_name(k))}
    total = sum(t.n_instrs for _, t, _, _ in traces) * len(points)
    done_before = 0
    metric_names = (
        *SCALAR_METRICS,
        "warp_instructions",
        "bank_conflicts",
        "collector_occupancy",
        *(k for k in d.metrics if k not in SCALAR_METRICS),
    )
    snames = [s.name for s in structures]
    actions = {s.name: s.actions for s in structures}
    reasons = stall_reasons(d)
    per_wl = []
    for _, trace, kernel, _ in traces:
        programs: dict = {}  # the design's compiler pass, once per distinct value of its compile_params
        vals = {k: np.full(shape, np.nan) for k in metric_names}
        ev = {s: {} for s in snames}  # structure -> event kind -> counts over the grid
        stalls = np.zeros((*shape, len(reasons)))
        for idx in points:
            point = {k: v[idx].item() for k, v in full_grid.items()}
            sm_pt = _point_sm(sm, point)
            dparams = {k: v for k, v in point.items() if k in d.parameters}

            def tick(done, _total, _base=done_before):
                if progress is not None:
                    progress(_base + done, total)

            typed = d.resolve(dparams)  # once: every stage of the design takes the typed parameters
            key = (sm_pt.num_banks, *(getattr(typed, k) for k in d.compile_params))
            if key not in programs:
                programs[key] = d.program_for(trace, typed, sm_pt, kernel)
            run = simulate_trace(trace, sm_pt, d, typed, opts, progress=tick, program=programs[key])
            done_before += trace.n_instrs
            for k in metric_names:
                v = run.metrics.get(k)
                if v is not None:
                    vals[k][idx] = v
            for s, e in run.metrics.get("events", {}).items():
                if s not in ev:
                    raise RfmodelError(f"design '{d.name}' reports events for unknown structure '{s}'")
                for kind, v in event_counts(s, e, actions[s]).items():
                    ev[s].setdefault(kind, np.zeros(shape))[idx] = v
            if tuple(run.stalls) != reasons:
                raise RfmodelError(
                    f"design '{d.name}': the run's stall reasons {tuple(run.stalls)} differ "
                    f"from the declared {reasons} (Design.stall_reasons)"
                )
            stalls[idx] = [run.stalls[r] for r in reasons]
        metrics = {k: v for k, v in vals.items() if not np.all(np.isnan(v))}
        per_wl.append(
            {
                "metrics": metrics,
                "events": ev,
                "stalls": stalls,
                "resources": (trace.regs_per_thread, trace.threads_per_cta, trace.shared_mem_bytes),
            }
        )
    attrs = {
        "engine": "simulate",
        "tech": json.dumps(tech),
        "arch": arch,
        "seed": seed,
        "not_modelled": "; ".join(
            not_modelled(sm, "simulate", compat=opts.compat == "gpgpusim")
            + d.not_modelled(sm, grid, "simulate")
        ),
        "rfmodel_version": __version__,
        "sim_options": json.dumps(opts.to_dict()),
        "calibration": f"reference cycle simulator (compat={opts.compat})",
        "trace_source": json.dumps(sources),
        **({"opcodes_classed_by_name": json.dumps(classed)} if classed else {}),
    }
    # each point's costs at its own SM: the fields of the grid that set the spec (a clock, a bank width)
    # price the structures and the time of the points that have them, as they timed their simulations
    out = None
    for sm_g, mask in _field_groups(sm, grid, dims, _spec_fields(sm, grid)):
        ds = assemble(
            design=d,
            sm=sm_g,
            structures=structures if sm_g is sm else d.structures(sm_g, grid, tech),
            workloads=names,
            dims=dims,
            coords=coords,
            shape=shape,
            per_workload=per_wl,
            stall_reasons=reasons,
            grid=grid,
            require_fit=require_fit,
            attrs=attrs,
        )
        out = ds if out is None else _take_points(out, ds, mask)
    return out
