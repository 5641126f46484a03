"""Energy, power and area accounting: one function for every engine and design.

A design lists the :class:`Structure` s it is built from (per-access read and
write energies, leakage, area, and how many copies); an engine (simulator or
analytic model) supplies event counts per structure and the run time.  Then::

    dynamic_pj[s] = reads[s] * read_pj[s] + writes[s] * write_pj[s]
                  + partial_writes[s] * write_fixed_pj[s] + groups_written[s] * write_group_pj[s]
                  + sum_a count_a[s] * actions[s][a]
    leakage_pj[s] = leakage_mw[s] * copies[s] * active_fraction[s] * time_s * 1e9
    power_mw      = sum_s (dynamic_pj[s] + leakage_pj[s]) / time_s * 1e-9

``events[name]`` is either ``(reads, writes)`` or a dict with any of
``reads``, ``writes``, ``partial_writes`` (writes that enable only some bit
groups, e.g. BDI's group-based write drivers: each costs ``write_fixed_pj``
plus ``write_group_pj`` per enabled group, counted in ``groups_written``) and
the names of the structure's extra ``actions`` (e.g. a racetrack's ``shift``).
``active_fraction`` (0..1, default 1) is the powered share of a structure's
copies: power gating of unallocated registers.

Read, write and leakage stay separate end to end.  Every structure carries
its provenance (which table or fit it came from).  Arrays broadcast, so a
design grid is accounted in one call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from rfmodel.errors import RfmodelError


@dataclass(frozen=True)
class Structure:
    """One kind of hardware structure, costed per copy."""

    name: str
    read_pj: np.ndarray | float  # energy per read access of one copy
    write_pj: np.ndarray | float  # energy per (full) write access
    leakage_mw: np.ndarray | float  # static power of one copy
    area_mm2: np.ndarray | float  # area of one copy
    copies: np.ndarray | float = 1
    provenance: str = ""
    write_group_pj: np.ndarray | float = 0.0  # per enabled write-driver group of a partial write
    write_fixed_pj: np.ndarray | float | None = (
        None  # per partial write, whatever the groups (default write_pj)
    )
    capacity_bits: np.ndarray | float = 0.0  # storage of one copy (0 for logic and wires)
    actions: Mapping[str, float] = field(default_factory=dict)  # other per-event energies, pJ


_EVENT_KEYS = ("reads", "writes", "partial_writes", "groups_written")


def event_counts(name: str, ev, actions: Mapping[str, float]) -> dict:
    """Structure ``name``'s events in their dict form (``ev``: ``(reads, writes)`` or a dict of counts)."""
    if isinstance(ev, Mapping):
        unknown = set(ev) - set(_EVENT_KEYS) - set(actions)
        if unknown:
            raise RfmodelError(
                f"events of structure '{name}': unknown event kinds {sorted(unknown)} "
                f"(allowed: {', '.join(_EVENT_KEYS + tuple(actions))})"
            )
        return {k: np.asarray(v, dtype=np.float64) for k, v in ev.items()}
    try:
        reads, writes = ev
    except (TypeError, ValueError) as e:
        raise RfmodelError(f"events of structure '{name}' must be (reads, writes) or a dict of counts") from e
    return {"reads": np.asarray(reads, dtype=np.float64), "writes": np.asarray(writes, dtype=np.float64)}


def account(structures, events, cycles, clock_mhz, active_fraction=None):
    """Energy by structure, power, area and capacity.

    ``events[name]`` counts events for the whole run (arrays broadcast with the
    structures' costs; see the module docstring for the forms); ``cycles`` is the
    run time in core cycles at ``clock_mhz``; ``active_fraction[name]`` (default 1)
    scales leakage, for power gating of unallocated entries.  Returns a dict with
    per-structure lists (in ``structures`` order) ``dynamic_pj``, ``leakage_pj``,
    ``energy_pj``, ``area_mm2``, ``capacity_bits``, ``provenance`` and totals
    ``energy_pj_total``, ``dynamic_pj_total``, ``leakage_pj_total``, ``power_mw``,
    ``area_mm2_total``, ``capacity_kb_total``.
    """
    active_fraction = active_fraction or {}
    cycles = np.asarray(cycles, dtype=np.float64)
    time_s = cycles / (np.asarray(clock_mhz, dtype=np.float64) * 1e6)
    names = [s.name for s in structures]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate structure names: {names}")
    unknown = set(events) - set(names)
    if unknown:
        raise ValueError(f"events for unknown structures: {sorted(unknown)}")
    unknown = set(active_fraction) - set(names)
    if unknown:
        raise ValueError(f"active_fraction for unknown structures: {sorted(unknown)}")
    dyn, leak, area, cap = [], [], [], []
    for s in structures:
        c = event_counts(s.name, events.get(s.name, (0.0, 0.0)), s.actions)
        fixed = s.write_pj if s.write_fixed_pj is None else s.write_fixed_pj
        d = (
            c.get("reads", 0.0) * np.asarray(s.read_pj, dtype=np.float64)
            + c.get("writes", 0.0) * np.asarray(s.write_pj, dtype=np.float64)
            + c.get("partial_writes", 0.0) * np.asarray(fixed, dtype=np.float64)
            + c.get("groups_written", 0.0) * np.asarray(s.write_group_pj, dtype=np.float64)
        )
        for a, pj in s.actions.items():
            d = d + c.get(a, 0.0) * pj
        dyn.append(np.asarray(d, dtype=np.float64))
        frac = np.asarray(active_fraction.get(s.name, 1.0), dtype=np.float64)
        if np.any(frac < 0) or np.any(frac > 1):
            raise RfmodelError(f"active_fraction['{s.name}'] must lie in [0, 1] (got {frac})")
        lk = np.asarray(s.leakage_mw, dtype=np.float64) * s.copies * frac
        with np.errstate(invalid="ignore"):  # an idle structure leaks nothing, even over an infinite run
            leak.append(np.where(lk == 0, 0.0, lk * time_s * 1e9))
        area.append(np.asarray(s.area_mm2, dtype=np.float64) * s.copies)
        cap.append(np.asarray(s.capacity_bits, dtype=np.float64) * s.copies)
    energy = [d + lk for d, lk in zip(dyn, leak, strict=True)]
    total = sum(energy)
    with np.errstate(divide="ignore", invalid="ignore"):
        power = np.where(time_s > 0, total * 1e-9 / time_s, 0.0)
    return {
        "structures": names,
        "dynamic_pj": dyn,
        "leakage_pj": leak,
        "energy_pj": energy,
        "area_mm2": area,
        "capacity_bits": cap,
        "provenance": [s.provenance for s in structures],
        "energy_pj_total": total,
        "dynamic_pj_total": sum(dyn),
        "leakage_pj_total": sum(leak),
        "power_mw": power,
        "area_mm2_total": sum(area),
        "capacity_kb_total": sum(cap) / 8192.0,
    }


_COST_FIELDS = (
    "read_pj",
    "write_pj",
    "leakage_mw",
    "area_mm2",
    "copies",
    "write_group_pj",
    "write_fixed_pj",
    "capacity_bits",
)


def structure_over_grid(name: str, values: Mapping[str, object], make) -> Structure:
    """A structure whose costs follow a parameter grid.

    ``values`` maps parameter names to arrays that broadcast against each other (a design's grid);
    ``make(**point)`` returns the :class:`Structure` of one point (plain Python numbers).  It is called
    once per distinct combination of values, and every cost becomes an array of the broadcast shape
    (a plain number when every array is a scalar).  Provenance lists the distinct provenances.
    """
    arrays = {k: np.asarray(v) for k, v in values.items()}
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
    flat = {k: np.broadcast_to(a, shape).ravel() for k, a in arrays.items()}
    n = int(np.prod(shape)) if shape else 1
    memo: dict = {}
    picks = []
    for i in range(n):
        point = {k: (a[i].item() if a.size else None) for k, a in flat.items()}
        key = tuple(point.values())
        if key not in memo:
            memo[key] = make(**point)
        picks.append(memo[key])
    first = picks[0]
    fields = {}
    for f in _COST_FIELDS:
        if f == "write_fixed_pj" and all(getattr(s, f) is None for s in picks):
            fields[f] = None
            continue
        col = np.array(
            [getattr(s, f) if getattr(s, f) is not None else s.write_pj for s in picks], dtype=np.float64
        ).reshape(shape)
        fields[f] = float(col) if col.ndim == 0 else col
    provs = list(dict.fromkeys(s.provenance for s in memo.values()))
    return Structure(name, provenance=" | ".join(provs), actions=dict(first.actions), **fields)
