"""Technology-node scaling, in one place.

Equations (and where their numbers come from):

* **Node ratio of a metric** (used to move a paper's number from its node to another):
  ``r(metric, n0 -> n1) = m_ref(n1) / m_ref(n0)`` where ``m_ref`` is the CACTI 7 fit of a reference bank
  (``sram-hp``, 16 KB, 1024-bit rows, ``1rw``, 350 K).  Dynamic energy, leakage, area and delay each follow
  their own ratio; leakage in particular is not monotone in the node (the ITRS device tables behind CACTI), so
  no single exponent is used anywhere.
* **Wires**: energy per bit per mm and delay per mm are the medians, per node, of CACTI's in-bank H-tree
  energy (``read_energy_htree / block_bits``) and delay (``(delay_htree_in + delay_htree_out) / 2``, one
  traversal) divided by the length of one traversal, taken as half the bank's perimeter, over the grid rows
  that have an H-tree (HP periphery, ``1rw``/``1r1w``, Global_30 repeated wires).
  Between data nodes both are interpolated geometrically in the node.
* **Gate delay**: FO4 = 360 ps per um of drawn gate length (the rule of thumb of "The Future of Wires",
  Ho, Mai and Horowitz).
* **Area of a feature-size-defined cell**: ``A = a_F2 * (node)^2``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rfmodel.errors import RfmodelError
from rfmodel.tech.array import REFERENCE_BANK, default_library
from rfmodel.tech.data import assumptions

_METRICS = ("read_energy_pj", "write_energy_pj", "leakage_mw", "area_mm2", "access_ns")


def _lib(lib):
    if lib is None:
        return default_library()
    return lib


def reference_bank(node_nm: float, lib=None):
    """The reference bank's costs at the node (remembered per library: every node ratio reads it)."""
    if lib is None:
        return _default_reference_bank(float(node_nm))
    key = ("reference_bank", float(node_nm))
    if key not in lib._cache:
        r = REFERENCE_BANK
        lib._cache[key] = lib.array_cost(
            r["cell"], node_nm, r["capacity_kb"], r["width_bits"], ports=r["ports"]
        )
    return lib._cache[key]


@lru_cache(maxsize=64)
def _default_reference_bank(node_nm: float):
    r = REFERENCE_BANK
    return _lib(None).array_cost(r["cell"], node_nm, r["capacity_kb"], r["width_bits"], ports=r["ports"])


def node_ratio(metric: str, from_nm: float, to_nm: float, lib=None) -> float:
    """``m_ref(to_nm) / m_ref(from_nm)`` for the reference CACTI bank (see the module docstring)."""
    if metric not in _METRICS:
        raise RfmodelError(f"node scaling of '{metric}': allowed metrics {', '.join(_METRICS)}")
    if float(from_nm) == float(to_nm):
        return 1.0
    a = getattr(reference_bank(from_nm, lib), metric)
    b = getattr(reference_bank(to_nm, lib), metric)
    return float(np.asarray(b) / np.asarray(a))


def scale(value, metric: str, from_nm: float, to_nm: float, lib=None):
    """``value`` (a number given at ``from_nm``) moved to ``to_nm`` by :func:`node_ratio`."""
    return np.asarray(value, dtype=float) * node_ratio(metric, from_nm, to_nm, lib)


def fo4_ns(node_nm: float) -> float:
    """Fan-out-of-4 inverter delay (ns) at the node."""
    return assumptions()["interconnect"]["fo4_ps_per_um"] * float(node_nm) / 1000.0 / 1000.0


def feature_area_mm2(area_f2: float, node_nm: float) -> float:
    """Area (mm^2) of a layout of ``area_f2`` F^2 at the node."""
    return float(area_f2) * (float(node_nm) * 1e-6) ** 2


@lru_cache(maxsize=8)
def _wire_table(lib) -> dict[float, tuple[float, float, int]]:
    per_node: dict[float, list[tuple[float, float]]] = {}
    for r in lib.rows:
        if r.tool != "cacti" or not r.ok or r.htree_energy_pj <= 0 or r.half_perimeter_mm <= 0:
            continue
        if not r.family.endswith("/itrs-hp") or r.ports == "2r1w":
            continue
        # one traversal runs about half the bank's perimeter; the delay adds the input and output trees
        half = r.half_perimeter_mm / 2.0
        per_node.setdefault(r.node_nm, []).append(
            (r.htree_energy_pj / r.width_bits / half, r.htree_delay_ns / (2.0 * half))
        )
    return {
        n: (float(np.median([e for e, _ in v])), float(np.median([t for _, t in v])), len(v))
        for n, v in sorted(per_node.items())
    }


def wire_constants(node_nm: float, lib=None) -> tuple[float, float, str]:
    """(energy pJ per bit per mm, delay ns per mm, provenance) of a repeated global wire at the node."""
    lib = _lib(lib)
    table = _wire_table(lib)
    nodes = sorted(table)
    n = float(node_nm)
    if not nodes or n < nodes[0] or n > nodes[-1]:
        raise RfmodelError(
            f"wire constants at {n:g} nm: the CACTI H-tree data cover {', '.join(f'{x:g}' for x in nodes)} nm"
        )
    if n in table:
        e, t, k = table[n]
        where = f"median of {k} CACTI rows with an in-bank H-tree at {n:g} nm"
    else:
        lo = max(x for x in nodes if x < n)
        hi = min(x for x in nodes if x > n)
        w = (np.log(n) - np.log(lo)) / (np.log(hi) - np.log(lo))
        e = float(np.exp((1 - w) * np.log(table[lo][0]) + w * np.log(table[hi][0])))
        t = float(np.exp((1 - w) * np.log(table[lo][1]) + w * np.log(table[hi][1])))
        where = f"CACTI H-tree medians interpolated between {lo:g} and {hi:g} nm"
    return e, t, f"repeated global wire ({where}; HP periphery, Global_30)"
