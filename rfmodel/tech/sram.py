"""SRAM register banks: a thin convenience layer over :func:`rfmodel.tech.array.array_cost`.

``sram_bank(capacity_kb, width_bits, cell=..., node_nm=..., ports=...)`` returns
the CACTI-fitted costs of one bank as a :class:`BankCost`; :func:`fit_report`
gives the fit's in-sample error for one (cell, node, ports) slice.  New code
should call :func:`rfmodel.tech.array.array_cost` directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rfmodel.errors import UnknownNameError
from rfmodel.tech.array import PORTS, array_cost, default_library

METRICS = ("read_energy_pj", "write_energy_pj", "leakage_mw", "area_mm2", "access_ns")
CELLS = {"sram-hp": "itrs-hp", "sram-lstp": "itrs-lstp", "sram-lop": "itrs-lop"}


@dataclass(frozen=True)
class BankCost:
    """Per-bank costs; arrays broadcast like the query's capacity/width."""

    read_energy_pj: np.ndarray
    write_energy_pj: np.ndarray
    leakage_mw: np.ndarray
    area_mm2: np.ndarray
    access_ns: np.ndarray
    provenance: str


def sram_bank(
    capacity_kb,
    width_bits=1024,
    *,
    cell: str = "sram-hp",
    node_nm: float = 45,
    ports: str = "1rw",
    out_of_range: str = "error",
) -> BankCost:
    """Costs of one SRAM bank of ``capacity_kb`` KB delivering ``width_bits`` per access (CACTI fit)."""
    if cell not in CELLS:
        raise UnknownNameError("SRAM cell", cell, CELLS)
    if ports not in PORTS:
        raise UnknownNameError("port configuration", ports, PORTS)
    a = array_cost(
        cell, node_nm, capacity_kb, width_bits, ports=ports, out_of_range=out_of_range, source="cacti"
    )
    return BankCost(**{m: getattr(a, m) for m in METRICS}, provenance=a.provenance["read_energy_pj"])


def fit_report(cell: str = "sram-hp", node_nm: float = 45, ports: str = "1rw") -> dict[str, dict[str, float]]:
    """Median and maximum relative error of the fit on its own rows at one node, per metric."""
    if cell not in CELLS:
        raise UnknownNameError("SRAM cell", cell, CELLS)
    lib = default_library()
    dev = CELLS[cell]
    fam = lib.family("cacti", f"{dev}/{dev}", ports, 350.0, "ED^2")
    rows = [r for r in fam.rows if r.node_nm == float(node_nm)]
    cap = np.array([r.capacity_kb for r in rows])
    wid = np.array([r.width_bits for r in rows])
    out = {}
    for m in METRICS:
        pred = fam.surface(m)(cap, wid, float(node_nm))
        err = np.abs(pred / np.array([getattr(r, m) for r in rows]) - 1.0)
        out[m] = {
            "median_rel_err": float(np.median(err)),
            "max_rel_err": float(np.max(err)),
            "rows": len(rows),
        }
    return out
