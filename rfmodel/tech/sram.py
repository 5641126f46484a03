"""SRAM register-bank costs from CACTI 7 runs (first estimate).

Source data: ``rfmodel/data/tech/cacti7_sram_banks.csv``, single-bank
scratch-RAM runs of CACTI 7.0.3 at 350 K (matched cell/periphery device
types ``itrs-hp``, ``itrs-lstp``, ``itrs-lop``; 22-90 nm; 2-128 KB; 128- to
1024-bit rows; ``1rw``/``1r1w``/``2r1w`` ports).

Model: for each (cell, node, ports) group, every metric ``m`` is fitted as a
log-linear surface in capacity ``C`` (KB) and row width ``w`` (bits)::

    ln m = a0 + a1 ln C + a2 ln w + a3 ln C ln w + a4 (ln w)^2

by least squares over the group's rows.  The surface is smooth and is not a
nearest-row lookup, so CACTI's step-wise organisation choices are averaged
out; :func:`fit_report` gives the residuals.  Queries outside the fitted
capacity/width box raise :class:`~rfmodel.errors.RfmodelError`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

import numpy as np

from rfmodel.errors import RfmodelError, UnknownNameError

METRICS = ("read_energy_pj", "write_energy_pj", "leakage_mw", "area_mm2", "access_ns")
_COLUMNS = {
    "read_energy_pj": ("read_energy_nJ", 1000.0),
    "write_energy_pj": ("write_energy_nJ", 1000.0),
    "leakage_mw": ("leakage_total_mW", 1.0),
    "area_mm2": ("area_mm2", 1.0),
    "access_ns": ("access_time_ns", 1.0),
}
CELLS = {"sram-hp": "itrs-hp", "sram-lstp": "itrs-lstp", "sram-lop": "itrs-lop"}
PORTS = ("1rw", "1r1w", "2r1w")
DATA_FILE = "cacti7_sram_banks.csv"
PROVENANCE = "CACTI 7.0.3 single-bank scratch RAM, 350 K, ED^2 (rfmodel/data/tech/" + DATA_FILE + ")"


@dataclass(frozen=True)
class BankCost:
    """Per-bank costs; arrays broadcast like the query's capacity/width."""

    read_energy_pj: np.ndarray
    write_energy_pj: np.ndarray
    leakage_mw: np.ndarray
    area_mm2: np.ndarray
    access_ns: np.ndarray
    provenance: str


@lru_cache(maxsize=1)
def _rows() -> list[dict]:
    text = resources.files("rfmodel.data.tech").joinpath(DATA_FILE).read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    return list(csv.DictReader(lines))


def _design(lc: np.ndarray, lw: np.ndarray) -> np.ndarray:
    lc, lw = np.broadcast_arrays(lc, lw)
    return np.stack([np.ones_like(lc), lc, lw, lc * lw, lw * lw], axis=-1)


@cache
def _fit(cell: str, node_nm: int, ports: str):
    dev = CELLS[cell]
    rows = [
        r for r in _rows() if r["cell_type"] == dev and int(r["node_nm"]) == node_nm and r["ports"] == ports
    ]
    if len(rows) < 8:
        raise RfmodelError(
            f"no CACTI data for cell '{cell}' at {node_nm} nm with ports '{ports}' "
            f"(nodes with data: {sorted({int(r['node_nm']) for r in _rows() if r['cell_type'] == dev})})"
        )
    cap = np.array([float(r["capacity_KB"]) for r in rows])
    width = np.array([float(r["block_bits"]) for r in rows])
    x = _design(np.log(cap), np.log(width))
    coefs, resid = {}, {}
    for m, (col, scale) in _COLUMNS.items():
        y = np.log(np.array([float(r[col]) * scale for r in rows]))
        c, *_ = np.linalg.lstsq(x, y, rcond=None)
        coefs[m] = c
        resid[m] = np.exp(x @ c - y) - 1.0
    box = (cap.min(), cap.max(), width.min(), width.max())
    return coefs, resid, box, len(rows)


def sram_bank(
    capacity_kb,
    width_bits=1024,
    *,
    cell: str = "sram-hp",
    node_nm: int = 45,
    ports: str = "1rw",
) -> BankCost:
    """Costs of one SRAM bank of ``capacity_kb`` KB delivering ``width_bits`` per access."""
    if cell not in CELLS:
        raise UnknownNameError("SRAM cell", cell, CELLS)
    if ports not in PORTS:
        raise UnknownNameError("port configuration", ports, PORTS)
    coefs, _, (cmin, cmax, wmin, wmax), _ = _fit(cell, int(node_nm), ports)
    c = np.asarray(capacity_kb, dtype=np.float64)
    w = np.asarray(width_bits, dtype=np.float64)
    # a tolerance of half a grid step on each side of the fitted box
    if np.any(c < cmin / 1.5) or np.any(c > cmax * 1.5) or np.any(w < wmin / 1.5) or np.any(w > wmax * 1.5):
        raise RfmodelError(
            f"SRAM bank query outside the CACTI data: capacity {np.min(c)}-{np.max(c)} KB "
            f"(data {cmin:g}-{cmax:g} KB), width {np.min(w)}-{np.max(w)} bits (data {wmin:g}-{wmax:g})"
        )
    x = _design(np.log(c), np.log(w))
    out = {m: np.exp(x @ coefs[m]) for m in METRICS}
    return BankCost(**out, provenance=f"{PROVENANCE}; cell={cell}, node={node_nm} nm, ports={ports}")


def fit_report(cell: str = "sram-hp", node_nm: int = 45, ports: str = "1rw") -> dict[str, dict[str, float]]:
    """Median and maximum relative error of the fit on its own rows, per metric."""
    _, resid, _, n = _fit(cell, int(node_nm), ports)
    return {
        m: {"median_rel_err": float(np.median(np.abs(r))), "max_rel_err": float(np.max(np.abs(r))), "rows": n}
        for m, r in resid.items()
    }
