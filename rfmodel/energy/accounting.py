"""Energy, power and area accounting: one function for every engine and design.

A design lists the :class:`Structure` s it is built from (per-access read and
write energies, leakage, area, and how many copies); an engine (simulator or
analytic model) supplies event counts per structure and the run time.  Then::

    dynamic_pj[s] = reads[s] * read_pj[s] + writes[s] * write_pj[s]
    leakage_pj[s] = leakage_mw[s] * copies[s] * active_fraction[s] * time_s * 1e9
    power_mw      = sum_s (dynamic_pj[s] + leakage_pj[s]) / time_s * 1e-9

Read, write and leakage stay separate end to end.  Every structure carries
its provenance (which table or fit it came from).  Arrays broadcast, so a
design grid is accounted in one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Structure:
    """One kind of hardware structure, costed per copy."""

    name: str
    read_pj: np.ndarray | float  # energy per read access of one copy
    write_pj: np.ndarray | float  # energy per write access
    leakage_mw: np.ndarray | float  # static power of one copy
    area_mm2: np.ndarray | float  # area of one copy
    copies: np.ndarray | float = 1
    provenance: str = ""


def account(structures, events, cycles, clock_mhz, active_fraction=None):
    """Energy by structure, power and area.

    ``events[name] = (reads, writes)`` counts for the whole run (arrays
    broadcast with the structures' costs); ``cycles`` is the run time in core
    cycles; ``active_fraction[name]`` (default 1) scales leakage, for power
    gating of unallocated entries.  Returns a dict with per-structure arrays
    ``dynamic_pj``, ``leakage_pj``, ``energy_pj``, ``area_mm2`` (lists in
    ``structures`` order) and totals ``energy_pj_total``, ``power_mw``,
    ``area_mm2_total``.
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
    dyn, leak, area = [], [], []
    for s in structures:
        reads, writes = events.get(s.name, (0.0, 0.0))
        dyn.append(
            np.asarray(reads, dtype=np.float64) * s.read_pj
            + np.asarray(writes, dtype=np.float64) * s.write_pj
        )
        frac = active_fraction.get(s.name, 1.0)
        lk = np.asarray(s.leakage_mw, dtype=np.float64) * s.copies * frac
        with np.errstate(invalid="ignore"):  # an idle structure leaks nothing, even over an infinite run
            leak.append(np.where(lk == 0, 0.0, lk * time_s * 1e9))
        area.append(np.asarray(s.area_mm2, dtype=np.float64) * s.copies)
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
        "energy_pj_total": total,
        "power_mw": power,
        "area_mm2_total": sum(area),
    }
