"""Interconnect between operand collectors and register banks.

Two topologies, both built from the same wire and switch constants
(:mod:`rfmodel.tech.scaling`):

**Crossbar** (``inputs`` sources x ``outputs`` destinations, ``width_bits`` per transfer).  The banks form a
square of side ``span_mm``; a transfer runs from a bank to the collector row over the bank array (mean route
``span_mm``) and through a ``ceil(log2 inputs)``-level multiplexer at its destination::

    E_bit   = e_wire * span + levels * e_wire * l_switch          (pJ per bit)
    t       = t_wire * span + levels * FO4                         (ns)
    A       = inputs * outputs * width * a_crosspoint              (mm^2; wires run over the arrays)
    P_leak  = inputs * outputs * width * p_crosspoint

**Flattened butterfly** (Kim, Balfour and Dally, "Flattened butterfly topology for on-chip networks"), the
network the Latency-Tolerant Register File uses when banks grow 8x.  ``routers`` routers (default: one per
collector) each concentrate ``ceil(inputs / routers)`` banks and sit in a ``k1 x k2`` grid, fully connected
along rows and columns (radix ``c + 1 + (k1 - 1) + (k2 - 1)``).  A transfer crosses
``h = 1 + (1 - 1/k1) + (1 - 1/k2)`` routers on average, each a small crossbar of the router's radix over the
router's own tile, plus ``h - 1`` inter-router links of mean length ``span / 3`` and the local wires into and
out of the tile.  Router traversal adds ``router_overhead_fo4`` FO4 of allocation to its switch delay.

The per-crosspoint area (one 6T SRAM cell) and leakage (that of one bit of the reference HP SRAM bank), the
switch's wire-equivalent length and the router overhead are assumptions (``assumptions.toml``); the wire
constants are CACTI's own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rfmodel.errors import RfmodelError
from rfmodel.tech.data import assumptions
from rfmodel.tech.scaling import feature_area_mm2, fo4_ns, reference_bank, wire_constants

TOPOLOGIES = ("crossbar", "flattened-butterfly")


@dataclass(frozen=True)
class NetworkCost:
    """Costs of one network; energies per transfer of ``width_bits`` bits."""

    topology: str
    inputs: int
    outputs: int
    width_bits: int
    node_nm: float
    span_mm: float
    energy_pj_per_bit: float
    leakage_mw: float
    area_mm2: float
    latency_ns: float
    hops: float
    provenance: dict

    @property
    def transfer_pj(self) -> float:
        return self.energy_pj_per_bit * self.width_bits

    def cycles(self, clock_mhz: float, data_bits: int | None = None) -> int:
        """Cycles to move ``data_bits`` (default one transfer): wire/switch latency plus serialization."""
        from rfmodel.tech.array import cycles

        flits = 1 if data_bits is None else max(math.ceil(data_bits / self.width_bits), 1)
        return int(cycles(self.latency_ns, clock_mhz)) + flits - 1

    def structure(self, name: str = "interconnect"):
        from rfmodel.energy.accounting import Structure

        return Structure(
            name,
            self.transfer_pj,
            0.0,
            self.leakage_mw,
            self.area_mm2,
            provenance=f"{self.topology} {self.inputs}x{self.outputs}x{self.width_bits} bit "
            f"@ {self.node_nm:g} nm: " + self.provenance["energy_pj_per_bit"],
        )


def _check(inputs, outputs, width_bits, span_mm):
    for name, v in (("inputs", inputs), ("outputs", outputs), ("width_bits", width_bits)):
        if not (isinstance(v, (int, np.integer)) and v >= 1):
            raise RfmodelError(f"network {name} = {v!r} must be a whole number >= 1")
    if width_bits % 32:
        raise RfmodelError(f"network width_bits = {width_bits} must be a multiple of 32 bits")
    if not (np.isfinite(span_mm) and span_mm > 0):
        raise RfmodelError(f"network span_mm = {span_mm!r} must be > 0 mm")


def _crosspoint(node_nm: float, lib=None) -> tuple[float, float]:
    a = assumptions()["interconnect"]
    area = feature_area_mm2(a["crosspoint_area_f2"], node_nm)
    ref = reference_bank(node_nm, lib)
    leak = float(ref.leakage_mw) / (float(ref.capacity_kb) * 8192.0)
    return area, leak


def crossbar_costs(inputs, outputs, width_bits: int, node_nm: float, span_mm, lib=None):
    """``(transfer_pj, leakage_mw, area_mm2)`` of :func:`crossbar` at every point of the arrays ``inputs``,
    ``outputs`` and ``span_mm`` (broadcast together; the same figures, element by element, as one
    :func:`crossbar` per point)."""
    inputs, outputs = np.asarray(inputs), np.asarray(outputs)
    span_mm = np.asarray(span_mm, dtype=np.float64)
    for name, v in (("inputs", inputs), ("outputs", outputs)):
        if v.dtype.kind not in "iu" or np.any(v < 1):
            bad = v.ravel()[0] if v.dtype.kind not in "iu" else v[v < 1].ravel()[0]
            raise RfmodelError(f"network {name} = {bad!r} must be a whole number >= 1")
    _check(1, 1, width_bits, 1.0)
    if not np.all(np.isfinite(span_mm) & (span_mm > 0)):
        bad = span_mm[~(np.isfinite(span_mm) & (span_mm > 0))].ravel()[0]
        raise RfmodelError(f"network span_mm = {bad!r} must be > 0 mm")
    a = assumptions()["interconnect"]
    e_wire, _t, _p = wire_constants(node_nm, lib)
    levels = np.maximum(np.ceil(np.log2(inputs)), 0.0)
    l_sw = a["switch_wire_equiv_um"] / 1000.0
    e_bit = e_wire * span_mm + levels * e_wire * l_sw
    xp_area, xp_leak = _crosspoint(node_nm, lib)
    n_xp = inputs.astype(np.int64) * outputs.astype(np.int64) * int(width_bits)
    return e_bit * width_bits, n_xp * xp_leak, n_xp * xp_area


def crossbar(
    inputs: int, outputs: int, width_bits: int, node_nm: float, span_mm: float, lib=None
) -> NetworkCost:
    """An ``inputs`` x ``outputs`` crossbar of ``width_bits``-bit ports over banks of side ``span_mm``."""
    _check(inputs, outputs, width_bits, span_mm)
    a = assumptions()["interconnect"]
    e_wire, t_wire, wprov = wire_constants(node_nm, lib)
    levels = max(math.ceil(math.log2(inputs)), 0)
    l_sw = a["switch_wire_equiv_um"] / 1000.0
    e_bit = e_wire * span_mm + levels * e_wire * l_sw
    lat = t_wire * span_mm + levels * fo4_ns(node_nm)
    xp_area, xp_leak = _crosspoint(node_nm, lib)
    n_xp = inputs * outputs * width_bits
    prov = {
        "energy_pj_per_bit": f"wire over the bank array (span {span_mm:.3g} mm) + {levels} mux levels; "
        + wprov,
        "latency_ns": f"wire delay x span + {levels} FO4 (The Future of Wires); {wprov}",
        "area_mm2": f"{n_xp} crosspoints x {a['crosspoint_area_f2']:g} F^2 (one 6T cell each; assumption)",
        "leakage_mw": f"{n_xp} crosspoints x the leakage of one bit of the reference HP SRAM bank "
        "(assumption)",
    }
    return NetworkCost(
        "crossbar",
        inputs,
        outputs,
        width_bits,
        float(node_nm),
        float(span_mm),
        e_bit,
        n_xp * xp_leak,
        n_xp * xp_area,
        lat,
        1.0,
        prov,
    )


def flattened_butterfly(
    inputs: int,
    outputs: int,
    width_bits: int,
    node_nm: float,
    span_mm: float,
    routers: int | None = None,
    lib=None,
) -> NetworkCost:
    """A 2-D flattened butterfly joining ``inputs`` banks and ``outputs`` collectors over ``span_mm``."""
    _check(inputs, outputs, width_bits, span_mm)
    a = assumptions()["interconnect"]
    r = outputs if routers is None else routers
    if not (isinstance(r, (int, np.integer)) and r >= 1):
        raise RfmodelError(f"flattened butterfly routers = {routers!r} must be a whole number >= 1")
    conc = math.ceil(inputs / r) + math.ceil(outputs / r)  # banks + collectors attached to each router
    k1 = 2 ** (int(math.log2(r)) // 2) if r & (r - 1) == 0 else max(int(math.isqrt(r)), 1)
    k2 = math.ceil(r / k1)
    radix = conc + (k1 - 1) + (k2 - 1)
    hops = 1.0 + (1.0 - 1.0 / k1) + (1.0 - 1.0 / k2)
    tile = span_mm / math.sqrt(r)
    router = crossbar(radix, radix, width_bits, node_nm, tile, lib)
    e_wire, t_wire, wprov = wire_constants(node_nm, lib)
    link_len = span_mm / 3.0
    links = hops - 1.0
    e_bit = hops * router.energy_pj_per_bit + links * e_wire * link_len
    t_router = router.latency_ns + a["router_overhead_fo4"] * fo4_ns(node_nm)
    lat = hops * t_router + links * t_wire * link_len
    prov = {
        "energy_pj_per_bit": (
            f"{hops:.3g} router traversals (radix-{radix} crossbars over {tile:.3g} mm tiles) + "
            f"{links:.3g} links of "
            f"span/3; {r} routers in a {k1}x{k2} grid; {wprov}"
        ),
        "latency_ns": f"{hops:.3g} x (router switch + {a['router_overhead_fo4']:g} FO4) + link wires; "
        + wprov,
        "area_mm2": f"{r} routers x radix-{radix}^2 x {width_bits} crosspoints (wires over the arrays)",
        "leakage_mw": "routers' crosspoints (see crossbar)",
    }
    return NetworkCost(
        "flattened-butterfly",
        inputs,
        outputs,
        width_bits,
        float(node_nm),
        float(span_mm),
        e_bit,
        r * router.leakage_mw,
        r * router.area_mm2,
        lat,
        hops,
        prov,
    )


def network(
    topology: str, inputs: int, outputs: int, width_bits: int, node_nm: float, span_mm: float, lib=None
):
    """Dispatch on ``topology`` ('crossbar' | 'flattened-butterfly')."""
    if topology == "crossbar":
        return crossbar(inputs, outputs, width_bits, node_nm, span_mm, lib)
    if topology == "flattened-butterfly":
        return flattened_butterfly(inputs, outputs, width_bits, node_nm, span_mm, lib=lib)
    from rfmodel.errors import UnknownNameError

    raise UnknownNameError("network topology", topology, TOPOLOGIES)
