"""One Dataset assembly for every engine: the same variables, dims and units from ``analytic`` and
``simulate`` (and ``montecarlo``, which reduces the analytic one over its samples).

Each engine gives, per workload, its metric arrays over the grid (``shape``), the structure events
``{structure: (reads, writes)}`` and, where it has them, the scheduler stall cycles by reason; the
energy accounting and the Dataset are built here.  A metric an engine does not estimate is NaN
(``ds.attrs['not_estimated']`` lists them), so the two engines' results always subtract.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import xarray as xr

from rfmodel.energy.accounting import account, event_counts
from rfmodel.errors import RfmodelError
from rfmodel.spec.occupancy import CTA_LIMITS, REGISTER_LIMITS, limits_not_applied, no_fit_reason, warn_once


def _dask_array_type_on_demand() -> None:
    """Let xarray recognise dask arrays without importing ``dask.array`` before anything else has.

    Where dask is installed, xarray's first Variable imports ``dask.array`` (about 0.2 s of a command's
    start-up) only to test whether its data is a dask array; a process that has not imported
    ``dask.array`` holds none.  The entry installed here answers that test with no type until
    ``dask.array`` is imported, and with xarray's own entry after.  Nothing is installed where xarray
    has already looked dask up, or where its lookup is not the one this knows (``pycompat``'s cache of
    duck-array modules): xarray then behaves as it does alone."""
    try:
        from xarray.namedarray import pycompat
    except ImportError:  # pragma: no cover - another xarray layout
        return
    cache = getattr(pycompat, "_cached_duck_array_modules", None)
    real = getattr(pycompat, "DuckArrayModule", None)
    if not isinstance(cache, dict) or not isinstance(real, type) or "dask" in cache:
        return  # another layout, or xarray has looked dask up already
    if "dask.array" in sys.modules:
        return

    class OnDemand(real):
        def __init__(self) -> None:
            self._entry = None  # xarray's own entry, built when first needed

        def __getattr__(self, name):  # module, version, available: xarray's own entry's
            if self._entry is None:
                self._entry = real("dask")
            return getattr(self._entry, name)

        @property
        def type(self):
            return self.__getattr__("type") if "dask.array" in sys.modules else ()

    cache["dask"] = OnDemand()


_dask_array_type_on_demand()

#: the standard metrics every engine reports
SCALAR_METRICS = (
    "ipc",
    "cycles",
    "warps",
    "rf_reads",
    "rf_writes",
    "bank_conflict_stall_cycles",
    "l1d_hit_rate",
)
#: the simulator's own counts (the analytic engine estimates ``warp_instructions`` and
#: ``collector_occupancy``; ``bank_conflicts`` is NaN there)
RUN_METRICS = ("warp_instructions", "bank_conflicts", "collector_occupancy")
UNITS = {
    "ipc": "warp instructions / cycle",
    "cycles": "cycles",
    "warps": "warps",
    "rf_reads": "accesses",
    "rf_writes": "accesses",
    # a collector's cycles with a read request its bank did not serve, summed over the collectors
    "bank_conflict_stall_cycles": "collector-cycles",
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
    # the main RF's timing that every design with register-file banks reports (rfmodel.designs.mainrf):
    # one access's cycles at the SM clock, and a transfer's through the main RF's network
    "main_rf_read_cycles": "cycles",
    "main_rf_write_cycles": "cycles",
    "main_rf_network_cycles": "cycles",
}


def metric_names(design) -> tuple[str, ...]:
    """Every scalar metric of a design's Dataset: the standard ones, the run counts, the design's own."""
    return (*SCALAR_METRICS, *RUN_METRICS, *(k for k in design.metrics if k not in SCALAR_METRICS))


def assemble(
    *,
    design,
    sm,
    structures: list,
    workloads: list[str],
    dims: list[str],
    coords: dict,
    shape: tuple,
    per_workload: list[dict],
    stall_reasons: tuple[str, ...],
    grid: dict,
    attrs: dict,
    require_fit: bool = True,
) -> xr.Dataset:
    """The Dataset of one evaluation.

    ``per_workload[i]``: ``{"metrics": {name: array}, "events": {structure: (reads, writes) or a dict of
    counts (rfmodel.energy.accounting's forms)},
    "stalls": array (*shape, reasons) or None, "resources": (regs per thread, threads per CTA, shared
    memory per CTA)}``; arrays broadcast to ``shape`` (the grid's, over ``dims``).  ``structures``' costs
    broadcast to ``shape`` too.  ``require_fit``: a workload that no design point can host (no resident warp
    anywhere) is an error naming the limiting resource, not a result of NaNs.
    """
    if require_fit:
        for name, w in zip(workloads, per_workload, strict=True):
            if np.all(np.asarray(w["metrics"]["warps"]) == 0):
                regs = np.max(np.asarray(grid.get("regs_per_sm", sm.regs_per_sm)))
                # the most generous limits the grid gives (a point over none of them names none)
                most = {k: np.max(np.asarray(grid[k])).item() for k in CTA_LIMITS if k in grid}
                why = no_fit_reason(*w["resources"], sm.replace(**most) if most else sm, regs_per_sm=regs)
                why = why or "no CTA can be resident"
                raise RfmodelError(f"workload '{name}' cannot run on {sm.name} at any design point: {why}")
    names = metric_names(design)
    snames = [s.name for s in structures]
    full = ["workload", *dims]
    whole = (len(per_workload), *shape)  # every workload at every point
    missing = set()
    data = {}
    # one accounting over every workload at once: events and cycles gain a leading workload axis
    kinds = {s.name: {"reads": np.zeros(whole), "writes": np.zeros(whole)} for s in structures}
    actions = {s.name: s.actions for s in structures}
    cycles = np.empty(whole)
    for i, w in enumerate(per_workload):
        unknown = set(w["events"]) - set(snames)
        if unknown:
            raise RfmodelError(
                f"design '{design.name}' reports events for unknown structures {sorted(unknown)}"
            )
        for s, ev in w["events"].items():
            for k, v in event_counts(s, ev, actions[s]).items():
                kinds[s].setdefault(k, np.zeros(whole))[i] = v
        cycles[i] = w["metrics"]["cycles"]
    reads = {s: kinds[s]["reads"] for s in snames}
    # a partial write (only some of a row's write-driver groups) is a write of the structure
    writes = {s: kinds[s]["writes"] + kinds[s].get("partial_writes", 0.0) for s in snames}
    # power gating: a structure's leakage scales by the share of it the design kept powered (a run that does
    # not report the share leaks whole)
    active = {}
    for s, metric in design.leakage_active.items():
        if s not in snames:
            raise RfmodelError(f"design '{design.name}': leakage_active names unknown structure '{s}'")
        frac = np.ones(whole)
        for i, w in enumerate(per_workload):
            v = w["metrics"].get(metric)
            if v is not None:
                frac[i] = np.where(np.isfinite(v), np.clip(v, 0.0, 1.0), 1.0)
        active[s] = frac
    acc = account(structures, kinds, cycles, sm.clock_mhz, active_fraction=active)
    for k in names:
        col = np.empty(whole)
        for i, w in enumerate(per_workload):
            v = w["metrics"].get(k)
            if v is None:
                missing.add(k)
                v = np.nan
            col[i] = v
        data[k] = (full, col)
    for k, src in (
        ("energy_pj", "energy_pj"),
        ("dynamic_energy_pj", "dynamic_pj"),
        ("leakage_energy_pj", "leakage_pj"),
        ("area_mm2", "area_mm2"),
    ):
        arr = np.empty((*whole, len(snames)))
        for j, x in enumerate(acc[src]):
            arr[..., j] = x
        data[k] = ([*full, "structure"], arr)
    for k in ("energy_pj_total", "power_mw"):
        col = np.empty(whole)
        col[...] = acc[k]
        data[k] = (full, col)
    area = np.empty(shape)
    area[...] = acc["area_mm2_total"]
    data["area_mm2_total"] = (dims, area)
    regs = np.asarray(grid.get("regs_per_sm", sm.regs_per_sm))
    data["capacity_kb"] = (dims, np.broadcast_to(regs * 4.0 / 1024.0, shape).astype(np.float64))
    stalls = np.full((*whole, len(stall_reasons)), np.nan)
    for i, w in enumerate(per_workload):
        st = w.get("stalls")
        if st is None:
            missing.add("stall_cycles")
        else:
            stalls[i] = st
    data["stall_cycles"] = ([*full, "stall_reason"], stalls)
    for k, counts in (("structure_reads", reads), ("structure_writes", writes)):
        data[k] = ([*full, "structure"], np.stack([counts[s] for s in snames], axis=-1))
    clash = sorted(set(coords) & set(data))
    if clash:
        raise RfmodelError(
            f"design '{design.name}': parameter(s) {', '.join(clash)} share a name with "
            "result variables; a design parameter needs a name of its own"
        )
    over = {}  # the register limits the kernels' code exceeds: run as compiled, said once and kept in attrs
    regs_sm = sm.replace(**{k: np.max(np.asarray(grid[k])).item() for k in REGISTER_LIMITS if k in grid})
    for name, w in zip(workloads, per_workload, strict=True):
        notes = limits_not_applied(w["resources"][0], w["resources"][1], regs_sm)
        if notes:
            over[name] = "; ".join(notes)
            warn_once(
                f"{name} on {sm.name}: {over[name]}: run as compiled, with its own registers (the "
                "limits are not applied to compiled code)",
                stacklevel=4,
            )
    # each variable with its unit (given with its data: setting it afterwards builds every variable again)
    data = {k: (*v, {"units": UNITS[k]}) if k in UNITS else v for k, v in data.items()}
    ds = xr.Dataset(
        data,
        coords={**coords, "workload": workloads, "structure": snames, "stall_reason": list(stall_reasons)},
    )
    for k, u in UNITS.items():
        if k in ds.coords:  # a unit of a coordinate (a parameter's): as before, set on the coordinate
            ds[k].attrs["units"] = u
    ds.attrs.update(
        {
            "design": design.name,
            "gpu": sm.name,
            "gpu_source": sm.source,
            "structure_provenance": json.dumps({s.name: s.provenance for s in structures}),
            **attrs,
            "not_estimated": ", ".join(sorted(missing)),
            "limits_not_applied": "; ".join(f"{k}: {v}" for k, v in over.items()),
        }
    )
    return ds
