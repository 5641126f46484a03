"""``evaluate``: the one façade over the engines.

    ds = evaluate("baseline", "sgemm_tiled", "fermi-gtx480", method="analytic",
                  params={"num_banks": [8, 16, 32]})

returns an :class:`xarray.Dataset` with dims ``workload`` plus one dim per
varied parameter (``mode="product"``) or one ``point`` dim
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
``collector_occupancy``                1                 mean fraction of collector units in use
``stall_cycles`` (stall_reason)        scheduler-cycles  why a scheduler issued nothing, per cycle
``structure_reads``/``_writes``        events            the events charged to each structure
=====================================  ================  ==========================================
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import replace

import numpy as np
import xarray as xr

import rfmodel
from rfmodel.analytic.profile import WorkloadProfile, profile_trace
from rfmodel.cache import entry_path, source_hash
from rfmodel.designs.base import Design, get_design, run_analytic
from rfmodel.energy.accounting import account
from rfmodel.errors import RfmodelError, UnknownNameError
from rfmodel.spec import SMSpec, get_preset, load_spec
from rfmodel.spec.sm import OP_CLASS_NAMES
from rfmodel.workload.ir import OpClass
from rfmodel.workload.suite import (
    DEFAULT_ARCH,
    SYNTHETIC_PREFIX,
    Workload,
    builtin_names,
    default_workloads,
    load_workload,
)

METHODS = ("analytic", "simulate", "montecarlo")
DEFAULT_GPU = "fermi-gtx480"
DEFAULT_TECH = {"cell": "sram-hp", "node_nm": 45}
SCALAR_METRICS = (
    "ipc",
    "cycles",
    "warps",
    "rf_reads",
    "rf_writes",
    "bank_conflict_stall_cycles",
    "l1d_hit_rate",
)
UNITS = {
    "ipc": "warp instructions / cycle",
    "cycles": "cycles",
    "warps": "warps",
    "rf_reads": "accesses",
    "rf_writes": "accesses",
    "bank_conflict_stall_cycles": "cycles",
    "l1d_hit_rate": "1",
    "energy_pj": "pJ",
    "dynamic_energy_pj": "pJ",
    "leakage_energy_pj": "pJ",
    "area_mm2": "mm2",
    "energy_pj_total": "pJ",
    "area_mm2_total": "mm2",
    "power_mw": "mW",
    "capacity_kb": "KB",
    "warp_instructions": "warp instructions",
    "bank_conflicts": "requests",
    "collector_occupancy": "1",
    "stall_cycles": "scheduler-cycles",
    "structure_reads": "events",
    "structure_writes": "events",
}


def resolve_gpu(gpu) -> SMSpec:
    """An SMSpec from a spec, a preset name, a TOML file or a ``gpgpusim.config`` path."""
    if isinstance(gpu, SMSpec):
        return gpu
    if gpu is None:
        return get_preset(DEFAULT_GPU)
    s = str(gpu)
    if s.endswith(".toml"):
        spec = load_spec(s)
        if not isinstance(spec, SMSpec):
            raise RfmodelError(f"{s}: holds a '{type(spec).kind}' spec, not an SM spec")
        return spec
    if s.endswith("gpgpusim.config") or s.endswith(".config"):
        return SMSpec.from_gpgpusim_config(s)
    return get_preset(s)


def memory_latencies(sm: SMSpec, hit_rate: float) -> np.ndarray:
    """Dependent-issue latency of every op class, loads at their expected latency."""
    lat = np.array([getattr(sm.latency, c)[0] for c in OP_CLASS_NAMES], dtype=np.float64)
    miss = sm.l2_hit_latency_cycles + 0.5 * sm.dram_latency_cycles
    l1 = hit_rate * sm.l1d.hit_latency_cycles + (1.0 - hit_rate) * miss
    for c in (OpClass.LD_GLOBAL, OpClass.LD_LOCAL, OpClass.ATOMIC):
        lat[c] += l1
    lat[OpClass.LD_SHARED] += sm.smem_latency_cycles
    lat[OpClass.LD_CONST] += sm.l1d.hit_latency_cycles
    return lat


def exec_latencies(sm: SMSpec) -> np.ndarray:
    """Dependent-issue latency of every op class without the L1D/L2/DRAM part of global loads."""
    lat = memory_latencies(sm, 1.0)
    for c in (OpClass.LD_GLOBAL, OpClass.LD_LOCAL, OpClass.ATOMIC):
        lat[c] -= sm.l1d.hit_latency_cycles
    return lat


def issue_resources(sm: SMSpec) -> dict:
    """The SM's issue resources as the profile's list schedules see them (``profile_trace(sched=...)``):
    schedulers, issue width, and per op class the initiation interval and execution unit (the
    simulator's class-to-unit map; memory classes share the SM's one load/store unit)."""
    from rfmodel.sim import core as C
    from rfmodel.sim.engine import _UNIT_OF_CLASS

    return {
        "schedulers": sm.schedulers_per_sm,
        "issue_width": sm.issue_width,
        "initiation": [max(v, 1) for v in sm.latency.initiations()],
        "unit": [int(_UNIT_OF_CLASS.get(c, C.U_MEM)) for c in OpClass],
        "lsu_unit": int(C.U_MEM),
    }


def _sm_key(sm: SMSpec) -> str:
    return hashlib.sha1(json.dumps(sm.to_dict(), sort_keys=True, default=str).encode()).hexdigest()[:16]


_PROFILE_CACHE: dict = {}


#: warps expanded per workload for the analytic profile (whole CTAs; at least one CTA)
PROFILE_WARPS = 32


def workload_profile(
    workload,
    sm: SMSpec,
    *,
    arch: str = DEFAULT_ARCH,
    seed: int = 0,
    max_warps: int | None = PROFILE_WARPS,
    share: bool = True,
) -> WorkloadProfile:
    """The analytic profile of a workload on an SM (cached per workload, SM and seed; built-in and
    synthetic workloads also on disk, :mod:`rfmodel.cache`).

    The distributions come from the first ``max_warps`` warps of the SM's share
    of the grid (``None``: all of them); with ``share`` the instruction count is
    scaled to the whole share and occupancy sees every CTA of the share, without
    it the profile describes exactly the expanded warps (what ``simulate`` runs with
    the same ``max_warps``; calibration compares like with like).
    """
    name = workload.name if isinstance(workload, Workload) else str(workload)
    key = (name, arch, seed, max_warps, _sm_key(sm), share)
    if key in _PROFILE_CACHE and not isinstance(workload, Workload):
        return _PROFILE_CACHE[key]
    # built-in and synthetic workloads are named by what generates them: their profiles persist on disk
    stored = None
    if not isinstance(workload, Workload) and (name in builtin_names() or name.startswith(SYNTHETIC_PREFIX)):
        blob = json.dumps([*key, source_hash(exclude=("data/calibration",))], default=str)
        stored = entry_path("profiles", hashlib.sha1(blob.encode()).hexdigest()[:24], ".npz")
        if stored is not None and stored.is_file():
            try:
                prof = WorkloadProfile.load(stored)
            except (OSError, ValueError, KeyError, TypeError):  # damaged entry: recompute it
                pass
            else:
                _PROFILE_CACHE[key] = prof
                return prof
    wl = load_workload(
        workload, arch=arch, num_sms=sm.num_sms, seed=seed, max_warps=max_warps, line_bytes=sm.l1d.line_bytes
    )
    lines = max(sm.l1d.size_bytes // sm.l1d.line_bytes, 1)
    # two passes: the first gives the hit rate that sets the expected load latency
    first = profile_trace(wl.trace, memory_latencies(sm, 1.0), name=wl.name, light=True)
    hit = float(first.l1d_hit_rate(lines)) if sm.l1d.size_bytes else 0.0
    prof = profile_trace(
        wl.trace, memory_latencies(sm, hit), name=wl.name, exec_latencies=exec_latencies(sm),
        sched=issue_resources(sm),
    )
    n_share = int(wl.attrs.get("ctas_per_sm", wl.trace.ctas))
    if share and n_share > wl.trace.ctas:
        scale = n_share / wl.trace.ctas
        prof = replace(
            prof,
            n_instrs=int(round(prof.n_instrs * scale)),
            ctas=n_share,
            attrs={**prof.attrs, "sampled_instrs": prof.n_instrs, "sampled_ctas": wl.trace.ctas},
        )
    _PROFILE_CACHE[key] = prof
    if stored is not None:
        try:
            prof.save(stored)
        except OSError:  # a read-only or full cache folder costs only the recomputation next time
            pass
    return prof


def _grid(params: Mapping[str, Iterable] | None, mode: str):
    """Broadcastable parameter arrays, dims and coords."""
    params = dict(params or {})
    if mode not in ("product", "points"):
        raise RfmodelError(f"mode '{mode}' is invalid; allowed: product, points")
    coords, grid, dims = {}, {}, []
    if mode == "product":
        names = list(params)
        for i, k in enumerate(names):
            v = np.atleast_1d(np.asarray(params[k]))
            if v.ndim != 1 or len(v) == 0:
                raise RfmodelError(f"parameter '{k}': expected a non-empty list of values")
            shape = [1] * len(names)
            shape[i] = len(v)
            grid[k] = v.reshape(shape)
            coords[k] = v
            dims.append(k)
    else:
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


def _check_params(design: Design, sm: SMSpec, grid: dict) -> None:
    known = set(sm.to_dict()) | {"collector_units"} | set(design.parameters)
    for k in grid:
        if k not in known:
            raise UnknownNameError(f"parameter of design '{design.name}'", k, known)
    trial = {k: v for k, v in grid.items() if k in sm.to_dict()}
    # validate every value through the spec (one error naming the field and allowed range)
    for k, v in trial.items():
        for x in np.unique(np.asarray(v).ravel()):
            sm.replace(**{k: x.item()})


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
    samples: int = 200,
) -> xr.Dataset:
    """Evaluate a design on workloads; see the module docstring for the result.

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
    ``samples`` draws seeded by ``seed``; the result holds the sample means and
    ``<metric>_lo`` / ``<metric>_hi`` (2.5 % and 97.5 % quantiles).
    """
    if method not in METHODS:
        raise UnknownNameError("method", method, METHODS)
    if method == "simulate":
        return _evaluate_simulate(
            design, workload, gpu, params=params, mode=mode, tech=tech, arch=arch, seed=seed,
            max_warps=None if max_warps == "auto" else max_warps, sim_options=sim_options, progress=progress,
        )  # fmt: skip
    if max_warps == "auto":
        max_warps = PROFILE_WARPS
    if sim_options is not None:
        raise RfmodelError("sim_options apply to method='simulate' only")
    if method == "montecarlo":
        from rfmodel.analytic.montecarlo import evaluate_montecarlo

        return evaluate_montecarlo(
            design, workload, gpu, params=params, mode=mode, tech=tech, arch=arch, seed=seed,
            max_warps=max_warps, calibration=calibration, uncertainty=uncertainty or {}, samples=samples,
        )  # fmt: skip
    return _evaluate_analytic(
        design, workload, gpu, params=params, mode=mode, tech=tech, arch=arch, seed=seed,
        max_warps=max_warps, calibration=calibration,
    )  # fmt: skip


def _param_value(design: Design, sm: SMSpec, name: str):
    if name == "collector_units":
        return sm.collectors.total
    if name in sm.to_dict():
        return getattr(sm, name)
    resolve = getattr(design, "params", None)
    if callable(resolve):
        return resolve(sm, {})[name]
    raise RfmodelError(f"parameter '{name}': no default value for design '{design.name}'; give at=")


INTEGER_PARAMS = ("num_banks", "collector_units", "regs_per_sm", "warps_per_sm", "schedulers_per_sm",
                  "issue_width", "bank_rw_ports", "bank_read_ports")  # fmt: skip


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
    x = float(_param_value(d, sm, param) if at is None else at)
    integer = param in INTEGER_PARAMS or (param in getattr(d, "SPEC", {}) and d.SPEC[param][3] is True)
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

        # the nearest valid values (a bank count must divide the registers, ...); one-sided at a bound
        lo = next((v for v in range(x - step, 0, -1) if valid(v)), x)
        hi = next((v for v in range(x + step, 64 * max(x, 1) + 2) if valid(v)), x)
        if lo == hi:
            raise RfmodelError(f"sensitivity: no valid neighbour of {param} = {x}")
    grid = {**dict(params or {}), param: [lo, x, hi]}
    ds = evaluate(d, workload, sm, method="analytic", params=grid, **kw)
    out = xr.Dataset(attrs={**ds.attrs, "sensitivity_param": param, "x": x, "x_lo": lo, "x_hi": hi})
    for m in metrics:
        y = ds[m]
        y_lo, y0, y_hi = (y.isel({param: i}, drop=True) for i in range(3))
        der = (y_hi - y_lo) / (hi - lo)
        out[m] = y0
        out[f"d_{m}"] = der
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"elasticity_{m}"] = der * x / y0
        out[f"d_{m}"].attrs["units"] = f"{UNITS.get(m, '')} per unit of {param}"
    return out


def resolve_calibration(design: Design, sm: SMSpec, calibration) -> tuple[dict, str]:
    """Grid entries of the calibrated coefficients and the ``calibration`` attribute text."""
    from rfmodel.analytic.calibration import calibrated_grid_entries, load_calibration

    if calibration is False:
        return {}, "uncalibrated: design defaults (calibration=False)"
    if isinstance(calibration, Mapping):
        return calibrated_grid_entries(design, sm.name, dict(calibration))
    return calibrated_grid_entries(design, sm.name, load_calibration(calibration))


def _evaluate_analytic(
    design, workload, gpu, *, params, mode, tech, arch, seed, max_warps, calibration, transform=None
) -> xr.Dataset:
    """The analytic engine.  ``transform(profile, structures, grid) -> (profile, structures, grid)``
    lets the Monte-Carlo engine perturb one evaluation."""
    d = get_design(design)
    sm = resolve_gpu(gpu)
    tech = {**DEFAULT_TECH, **(tech or {})}
    if workload is None:
        workloads = default_workloads()
    elif isinstance(workload, (str, Workload)):
        workloads = [workload]
    else:
        workloads = list(workload)
    if not workloads:
        raise RfmodelError("no workloads to evaluate")
    grid, dims, coords = _grid(params, mode)
    _check_params(d, sm, grid)
    structures = d.structures(sm, grid, tech)
    snames = [s.name for s in structures]
    cal_grid, cal_desc = resolve_calibration(d, sm, calibration)
    per_wl = []
    names = []
    for w in workloads:
        prof = workload_profile(w, sm, arch=arch, seed=seed, max_warps=max_warps)
        names.append(prof.name)
        g, structs = {**grid, **cal_grid}, structures
        if transform is not None:
            prof, structs, g = transform(prof, structs, g)
        m = run_analytic(d, prof, sm, g)
        acc = account(structs, m["events"], m["cycles"], sm.clock_mhz)
        per_wl.append((m, acc))
    shape = np.broadcast_shapes(*(np.shape(v) for v in grid.values())) if grid else ()
    full = ["workload", *dims]
    data = {}
    for k in SCALAR_METRICS:
        data[k] = (full, np.stack([np.broadcast_to(m[k], shape) for m, _ in per_wl]).astype(np.float64))
    for k, src in (
        ("energy_pj", "energy_pj"),
        ("dynamic_energy_pj", "dynamic_pj"),
        ("leakage_energy_pj", "leakage_pj"),
        ("area_mm2", "area_mm2"),
    ):
        arr = np.stack(
            [np.stack([np.broadcast_to(x, shape) for x in acc[src]], axis=-1) for _, acc in per_wl]
        )
        data[k] = ([*full, "structure"], arr.astype(np.float64))
    data["energy_pj_total"] = (
        full,
        np.stack([np.broadcast_to(a["energy_pj_total"], shape) for _, a in per_wl]),
    )
    data["power_mw"] = (full, np.stack([np.broadcast_to(a["power_mw"], shape) for _, a in per_wl]))
    data["area_mm2_total"] = (dims, np.broadcast_to(per_wl[0][1]["area_mm2_total"], shape).astype(np.float64))
    regs = grid.get("regs_per_sm", sm.regs_per_sm)
    data["capacity_kb"] = (dims, np.broadcast_to(np.asarray(regs) * 4.0 / 1024.0, shape).astype(np.float64))
    ds = xr.Dataset(data, coords={**coords, "workload": names, "structure": snames})
    for k, u in UNITS.items():
        if k in ds:
            ds[k].attrs["units"] = u
    ds.attrs.update(
        {
            "engine": "analytic",
            "design": d.name,
            "gpu": sm.name,
            "gpu_source": sm.source,
            "tech": json.dumps(tech),
            "structure_provenance": json.dumps({s.name: s.provenance for s in structures}),
            "arch": arch,
            "seed": seed,
            "rfmodel_version": rfmodel.__version__,
            "calibration": cal_desc,
        }
    )
    return ds


# ------------------------------------------------------------------------------------------- simulate
def _simulate_workload(w, sm: SMSpec, *, arch: str, seed: int, max_warps):
    """The SM's share of a workload as a trace (an Accel-Sim grid is cut to SM 0's CTAs)."""
    from rfmodel.sim.engine import sm_share

    wl = load_workload(
        w, arch=arch, num_sms=sm.num_sms, seed=seed, max_warps=max_warps, line_bytes=sm.l1d.line_bytes
    )
    trace = wl.trace
    if trace.attrs.get("source") == "accelsim":
        trace = sm_share(trace, sm.num_sms)
        if max_warps is not None:
            from rfmodel.sim.engine import select_ctas

            wpc = max(1, -(-trace.threads_per_cta // 32))
            trace = select_ctas(trace, list(range(min(trace.ctas, max(1, max_warps // wpc)))))
    return wl.name, trace


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
    design, workload, gpu, *, params, mode, tech, arch, seed, max_warps, sim_options, progress
) -> xr.Dataset:
    from rfmodel.sim.core import STALL_REASONS
    from rfmodel.sim.engine import SimOptions, simulate_trace

    d = get_design(design)
    sm = resolve_gpu(gpu)
    tech = {**DEFAULT_TECH, **(tech or {})}
    opts = sim_options if isinstance(sim_options, SimOptions) else SimOptions.from_dict(sim_options)
    if workload is None:
        workloads = default_workloads()
    elif isinstance(workload, (str, Workload)):
        workloads = [workload]
    else:
        workloads = list(workload)
    if not workloads:
        raise RfmodelError("no workloads to evaluate")
    grid, dims, coords = _grid(params, mode)
    _check_params(d, sm, grid)
    structures = d.structures(sm, grid, tech)
    snames = [s.name for s in structures]
    shape = np.broadcast_shapes(*(np.shape(v) for v in grid.values())) if grid else ()
    full_grid = {k: np.broadcast_to(v, shape) for k, v in grid.items()}
    points = list(np.ndindex(shape)) if shape else [()]
    traces = [_simulate_workload(w, sm, arch=arch, seed=seed, max_warps=max_warps) for w in workloads]
    names = [n for n, _ in traces]
    total = sum(t.n_instrs for _, t in traces) * len(points)
    done_before = 0

    metric_names = (
        *SCALAR_METRICS,
        "warp_instructions",
        "bank_conflicts",
        "collector_occupancy",
        *(k for k in d.metrics if k not in SCALAR_METRICS),
    )
    reasons = None
    per_wl = []
    for _, trace in traces:
        vals = {k: np.zeros(shape) for k in metric_names}
        ev_r = {s: np.zeros(shape) for s in snames}
        ev_w = {s: np.zeros(shape) for s in snames}
        stalls = None
        for idx in points:
            point = {k: v[idx].item() for k, v in full_grid.items()}
            sm_pt = _point_sm(sm, point)
            dparams = {k: v for k, v in point.items() if k in d.parameters}

            def tick(done, _total, _base=done_before):
                if progress is not None:
                    progress(_base + done, total)

            run = simulate_trace(trace, sm_pt, d, dparams, opts, progress=tick)
            done_before += trace.n_instrs
            for k in metric_names:
                vals[k][idx] = run.metrics.get(k, np.nan) if k in d.metrics else run.metrics[k]
            for s, ev in run.metrics.get("events", {}).items():
                if s not in ev_r:
                    raise RfmodelError(f"design '{d.name}' reports events for unknown structure '{s}'")
                ev_r[s][idx], ev_w[s][idx] = ev
            if stalls is None:
                reasons = list(run.stalls)
                stalls = np.zeros((*shape, len(reasons)))
            stalls[idx] = [run.stalls[r] for r in reasons]
        events = {s: (ev_r[s], ev_w[s]) for s in snames}
        acc = account(structures, events, vals["cycles"], sm.clock_mhz)
        per_wl.append((vals, acc, stalls, ev_r, ev_w))

    full = ["workload", *dims]
    data = {}
    for k in metric_names:
        data[k] = (full, np.stack([v[k] for v, *_ in per_wl]).astype(np.float64))
    for k, src in (
        ("energy_pj", "energy_pj"),
        ("dynamic_energy_pj", "dynamic_pj"),
        ("leakage_energy_pj", "leakage_pj"),
        ("area_mm2", "area_mm2"),
    ):
        arr = np.stack(
            [np.stack([np.broadcast_to(x, shape) for x in acc[src]], axis=-1) for _, acc, *_ in per_wl]
        )
        data[k] = ([*full, "structure"], arr.astype(np.float64))
    data["energy_pj_total"] = (
        full,
        np.stack([np.broadcast_to(a["energy_pj_total"], shape) for _, a, *_ in per_wl]),
    )
    data["power_mw"] = (full, np.stack([np.broadcast_to(a["power_mw"], shape) for _, a, *_ in per_wl]))
    data["area_mm2_total"] = (dims, np.broadcast_to(per_wl[0][1]["area_mm2_total"], shape).astype(np.float64))
    regs = grid.get("regs_per_sm", sm.regs_per_sm)
    data["capacity_kb"] = (dims, np.broadcast_to(np.asarray(regs) * 4.0 / 1024.0, shape).astype(np.float64))
    data["stall_cycles"] = ([*full, "stall_reason"], np.stack([s for *_, s, _, _ in per_wl]))
    data["structure_reads"] = (
        [*full, "structure"],
        np.stack([np.stack([r[s] for s in snames], axis=-1) for *_, r, _ in per_wl]),
    )
    data["structure_writes"] = (
        [*full, "structure"],
        np.stack([np.stack([w[s] for s in snames], axis=-1) for *_, w in per_wl]),
    )
    ds = xr.Dataset(
        data,
        coords={
            **coords,
            "workload": names,
            "structure": snames,
            "stall_reason": reasons or list(STALL_REASONS),
        },
    )
    for k, u in UNITS.items():
        if k in ds:
            ds[k].attrs["units"] = u
    ds.attrs.update(
        {
            "engine": "simulate",
            "design": d.name,
            "gpu": sm.name,
            "gpu_source": sm.source,
            "tech": json.dumps(tech),
            "structure_provenance": json.dumps({s.name: s.provenance for s in structures}),
            "arch": arch,
            "seed": seed,
            "rfmodel_version": rfmodel.__version__,
            "sim_options": json.dumps(opts.to_dict()),
            "calibration": f"reference cycle simulator (compat={opts.compat})",
        }
    )
    return ds
