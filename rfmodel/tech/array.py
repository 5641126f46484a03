"""The array model: (cell, node, capacity per bank, row width, ports, banks) -> costs.

Shaped like Accelergy's estimator plug-ins: every cell technology has a list of
estimators, each with a priority; :func:`array_cost` asks them in order and
the first that can answer wins (the others' reasons are kept in
``ArrayCost.notes``).  Every number carries its provenance.

Estimators:

``cacti``   SRAM (``sram-hp``, ``sram-lstp``, ``sram-lop``; any cell/periphery pair of the grid) from
            monotone log-cubic surfaces fitted to the CACTI 7 grid (:mod:`rfmodel.tech.fit`).
``nvsim``   STT-RAM (``stt-ram`` = NVSim's aggressive sample cell, the one that matches the STT-RAM
            register-file paper's 4-cycle writes; ``stt-ram-conservative`` = the conservative sample
            cell) and NVSim SRAM (``source="nvsim"``, for STT-RAM:SRAM ratios computed inside one tool).
``relaxed`` ``stt-ram-relaxed``: 10 ms retention, derived from ``stt-ram`` by halving the write pulse.
``paper``   ``tfet`` and ``dwm``: multipliers on the CACTI HP-SRAM bank derived from the Latency-Tolerant
            Register File's Table 2; ``stt-ram-paper``: the STT-RAM register-file paper's own cell, its
            Table 1's STT-RAM/SRAM ratios on the same bank (:mod:`rfmodel.tech.derive`).
``ports``   multi-ported banks of the single-ported STT-RAM cells (``stt-ram``, ``stt-ram-conservative``,
            ``stt-ram-relaxed``, ``stt-ram-paper``): the cell's ``1rw`` bank with HP SRAM's port overhead.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from rfmodel.errors import RfmodelError, UnknownNameError
from rfmodel.tech.data import Row, assumptions, package_rows, rows_from_file
from rfmodel.tech.fit import LogSurface

PORTS = ("1rw", "1r1w", "2r1w")
OUT_OF_RANGE = ("error", "extrapolate")
SOURCES = ("cacti", "nvsim", "relaxed", "paper", "ports")
DEFAULT_TEMPERATURE_K = 350.0
CACTI_TARGET = "ED^2"
METRICS = ("read_energy_pj", "write_energy_pj", "leakage_mw", "area_mm2", "access_ns", "write_ns", "cycle_ns")

CELLS = {
    "sram-hp": "SRAM, ITRS high-performance cell and periphery (CACTI itrs-hp/itrs-hp)",
    "sram-lstp": "SRAM, ITRS low-standby-power cell and periphery (CACTI itrs-lstp/itrs-lstp)",
    "sram-lop": "SRAM, ITRS low-operating-power cell and periphery (CACTI itrs-lop/itrs-lop)",
    "tfet": "TFET SRAM (paper-derived from the Latency-Tolerant Register File's Table 2)",
    "dwm": "domain-wall (racetrack) memory with shift latency/energy (paper-derived, same table)",
    "stt-ram-paper": "STT-RAM of the STT-RAM register-file paper (its Table 1: 57.5 F^2, 4-cycle writes at "
    "700 MHz; paper-derived ratios on sram-hp)",
    "stt-ram": "STT-RAM, 10-year retention (NVSim sample_STTRAM_aggressive cell: 40.82 uA x 5 ns writes)",
    "stt-ram-relaxed": "STT-RAM, 10 ms retention (write pulse halved, per the STT-RAM register-file paper)",
    "stt-ram-conservative": "STT-RAM, NVSim's conservative sample cell (80 uA x 10 ns writes)",
}
#: the paper-derived cells (``paper`` estimator) and the key of their multipliers in PAPER_CELL_FACTORS
PAPER_CELLS = {"tfet": "ltrf", "dwm": "ltrf", "stt-ram-paper": "stt"}
_SRAM_DEVICE = {"sram-hp": "itrs-hp", "sram-lstp": "itrs-lstp", "sram-lop": "itrs-lop"}
PERIPHERIES = {"hp": "itrs-hp", "lstp": "itrs-lstp", "lop": "itrs-lop"}
_NVSIM_CELL = {"stt-ram": "STTRAM_aggressive", "stt-ram-conservative": "STTRAM", "sram": "SRAM"}


class TechExtrapolationWarning(UserWarning):
    """A technology query outside the fitted data was answered by extrapolation."""


# --------------------------------------------------------------------------- query and result
@dataclass(frozen=True)
class Query:
    cell: str
    node_nm: float
    capacity_kb: np.ndarray
    width_bits: np.ndarray
    ports: str = "1rw"
    banks: int | np.ndarray = 1
    temperature_k: float = DEFAULT_TEMPERATURE_K
    periph: str | None = None


@dataclass(frozen=True)
class ArrayCost:
    """Costs of one bank (arrays broadcast like the query's capacity/width).

    Energies are per access of one bank row (``width_bits`` bits); ``leakage_mw``
    and ``area_mm2`` are per bank, ``total_*`` multiply by ``banks``.  Partial
    writes: a write that drives only ``k`` groups of ``g`` bits costs
    ``write_fixed_pj + k * g * write_pj_per_bit`` (:meth:`partial_write_pj`).
    DWM reports its mean shift per access; the totals already include it.
    """

    cell: str
    node_nm: float
    capacity_kb: np.ndarray
    width_bits: np.ndarray
    ports: str
    banks: int | np.ndarray
    read_energy_pj: np.ndarray
    write_energy_pj: np.ndarray
    leakage_mw: np.ndarray
    area_mm2: np.ndarray
    access_ns: np.ndarray
    write_ns: np.ndarray
    cycle_ns: np.ndarray
    write_bit_fraction: np.ndarray  # share of the write energy that scales with the bits written
    source: str
    provenance: dict[str, str]
    shift_steps_per_access: float = 0.0
    shift_energy_pj: np.ndarray | float = 0.0  # per access (mean shift), included in read/write energy
    shift_ns: np.ndarray | float = 0.0  # per access (mean shift), included in access/write latency
    extrapolated: bool = False
    notes: tuple[str, ...] = ()

    # ---------------------------------------------------------------- derived quantities
    @property
    def write_pj_per_bit(self):
        return self.write_energy_pj * self.write_bit_fraction / self.width_bits

    @property
    def write_fixed_pj(self):
        return self.write_energy_pj * (1.0 - self.write_bit_fraction)

    def write_group_pj(self, group_bits: int = 32):
        """Energy of driving one group of ``group_bits`` write drivers."""
        return self.write_pj_per_bit * group_bits

    def partial_write_pj(self, groups_written, group_bits: int = 32):
        """Energy of a write that enables ``groups_written`` groups of ``group_bits`` bits."""
        g = np.asarray(groups_written, dtype=float)
        if np.any(g < 0) or np.any(g * group_bits > np.asarray(self.width_bits) + 1e-9):
            raise RfmodelError(
                f"partial write of {groups_written} groups x {group_bits} bits does not fit a "
                f"{self.width_bits}-bit row (allowed: 0 .. width/group groups)"
            )
        return self.write_fixed_pj + g * self.write_group_pj(group_bits)

    @property
    def total_leakage_mw(self):
        return self.leakage_mw * self.banks

    @property
    def total_area_mm2(self):
        return self.area_mm2 * self.banks

    @property
    def capacity_bits(self):
        return self.capacity_kb * 8192.0 * self.banks

    def read_cycles(self, clock_mhz):
        return cycles(self.access_ns, clock_mhz)

    def write_cycles(self, clock_mhz):
        return cycles(self.write_ns, clock_mhz)

    def structure(self, name: str, copies=None):
        """This array as an accounting :class:`~rfmodel.energy.accounting.Structure` (copies: ``banks``)."""
        from rfmodel.energy.accounting import Structure

        return Structure(
            name,
            self.read_energy_pj,
            self.write_energy_pj,
            self.leakage_mw,
            self.area_mm2,
            copies=self.banks if copies is None else copies,
            provenance=self.provenance_summary,
            write_group_pj=self.write_group_pj(32),
            write_fixed_pj=self.write_fixed_pj,
            capacity_bits=self.capacity_kb * 8192.0,
        )

    @property
    def provenance_summary(self) -> str:
        return f"{self.cell} @ {self.node_nm:g} nm ({self.source}): {self.provenance['read_energy_pj']}"

    def as_dict(self, clock_mhz: float | None = None) -> dict:
        """Scalar query as a JSON-ready dict (the CLI's ``--json`` object)."""

        def s(v):
            a = np.asarray(v, dtype=float)
            return float(a) if a.ndim == 0 else a.tolist()

        out = {
            "cell": self.cell,
            "node_nm": self.node_nm,
            "capacity_kb": s(self.capacity_kb),
            "width_bits": s(self.width_bits),
            "ports": self.ports,
            "banks": int(self.banks) if np.ndim(self.banks) == 0 else np.asarray(self.banks).tolist(),
            "read_energy_pj": s(self.read_energy_pj),
            "write_energy_pj": s(self.write_energy_pj),
            "leakage_mw": s(self.leakage_mw),
            "area_mm2": s(self.area_mm2),
            "access_ns": s(self.access_ns),
            "write_ns": s(self.write_ns),
            "cycle_ns": s(self.cycle_ns),
            "write_pj_per_bit": s(self.write_pj_per_bit),
            "write_fixed_pj": s(self.write_fixed_pj),
            "leakage_mw_total": s(self.total_leakage_mw),
            "area_mm2_total": s(self.total_area_mm2),
            "source": self.source,
            "extrapolated": self.extrapolated,
            "provenance": dict(self.provenance),
            "notes": list(self.notes),
        }
        if self.shift_steps_per_access:
            out["shift_steps_per_access"] = self.shift_steps_per_access
            out["shift_energy_pj"] = s(self.shift_energy_pj)
            out["shift_ns"] = s(self.shift_ns)
        if clock_mhz is not None:
            out["clock_mhz"] = float(clock_mhz)
            out["read_cycles"] = s(self.read_cycles(clock_mhz))
            out["write_cycles"] = s(self.write_cycles(clock_mhz))
        return out


def cycles(ns, clock_mhz):
    """Whole cycles an ``ns`` latency takes at ``clock_mhz`` (at least 1)."""
    if not np.all(np.asarray(clock_mhz, float) > 0):
        raise RfmodelError(f"clock_mhz = {clock_mhz} must be > 0 MHz")
    c = np.asarray(ns, float) * np.asarray(clock_mhz, float) / 1000.0
    return np.maximum(np.ceil(c - 1e-9), 1).astype(int)


# --------------------------------------------------------------------------- estimators
class _Family:
    """Fitted surfaces of one data family (tool, cell/periphery, ports, temperature, target)."""

    #: polynomial degree in (ln C, ln w): the CACTI grid (7 capacities x 4 widths) supports a cubic, the NVSim
    #: grid (5 capacities x 2 widths) a cubic in capacity, linear in width (see validate.py for the errors)
    DEGREE = {"cacti": 3, "nvsim": 3}

    def __init__(self, rows: list[Row], label: str):
        self.rows = [r for r in rows if r.ok]
        self.label = label
        self.degree = self.DEGREE.get(self.rows[0].tool if self.rows else "", 2)
        if len(self.rows) < 6:
            raise RfmodelError(f"too few rows ({len(self.rows)}) to fit {label}")
        self.nodes = tuple(sorted({r.node_nm for r in self.rows}))
        self.min_rows = min(r.capacity_kb * 8192.0 / r.width_bits for r in self.rows)
        self._surfaces: dict[str, LogSurface] = {}

    def surface(self, metric: str) -> LogSurface:
        if metric not in self._surfaces:
            rs = self.rows
            self._surfaces[metric] = LogSurface.fit(
                [r.capacity_kb for r in rs],
                [r.width_bits for r in rs],
                [r.node_nm for r in rs],
                [getattr(r, metric) for r in rs],
                degree=self.degree,
            )
        return self._surfaces[metric]

    def box(self):
        s = self.surface("area_mm2")
        return s.capacity_range_kb, s.width_range_bits


class Estimator:
    """Base class: ``check`` says why a query cannot be answered (or None), ``estimate`` answers it."""

    source = ""
    priority = 0

    def __init__(self, lib: TechLibrary):
        self.lib = lib

    def check(self, q: Query) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError

    def estimate(self, q: Query, out_of_range: str) -> ArrayCost:  # pragma: no cover - interface
        raise NotImplementedError


class _FittedEstimator(Estimator):
    """Common logic of the tool-fitted estimators (CACTI, NVSim)."""

    tool = ""
    description = ""

    def family_key(self, q: Query):  # pragma: no cover - interface
        raise NotImplementedError

    def family(self, q: Query) -> _Family | None:
        return self.lib.family(*self.family_key(q))

    def _node_check(self, fam: _Family, q: Query) -> str | None:
        node = float(q.node_nm)
        if node in fam.nodes:
            return None
        if fam.nodes[0] < node < fam.nodes[-1]:
            return None
        return (
            f"node {node:g} nm is outside the {self.tool.upper()} data for {q.cell} "
            f"({', '.join(f'{n:g}' for n in fam.nodes)} nm); leakage follows the device tables node by node, "
            "so it is not extrapolated across nodes"
        )

    def check(self, q: Query) -> str | None:
        fam = self.family(q)
        if fam is None:
            return self.missing_reason(q)
        return self._node_check(fam, q)

    def missing_reason(self, q: Query) -> str:
        return f"no {self.tool.upper()} data for {q.cell} with ports {q.ports} at {q.temperature_k:g} K"

    def provenance(self, fam: _Family, q: Query) -> str:
        node = float(q.node_nm)
        where = (
            f"{node:g} nm"
            if node in fam.nodes
            else f"{node:g} nm interpolated between {max(n for n in fam.nodes if n < node):g} and "
            f"{min(n for n in fam.nodes if n > node):g} nm"
        )
        return f"{self.description} [{fam.label}; {len(fam.rows)} rows], {where}"

    def estimate(self, q: Query, out_of_range: str) -> ArrayCost:
        fam = self.family(q)
        (cmin, cmax), (wmin, wmax) = fam.box()
        c, w = q.capacity_kb, q.width_bits
        rows = c * 8192.0 / w
        outside = (
            (c < cmin * (1 - 1e-9))
            | (c > cmax * (1 + 1e-9))
            | (w < wmin * (1 - 1e-9))
            | (w > wmax * (1 + 1e-9))
        )
        too_few_rows = rows < fam.min_rows * (1 - 1e-9)
        notes = []
        extrapolated = bool(np.any(outside | too_few_rows))
        if extrapolated:
            msg = (
                f"{q.cell} query outside the {self.tool.upper()} data: capacity "
                f"{_rng(c)} KB (data {cmin:g}-{cmax:g} KB), width {_rng(w)} bits (data {wmin:g}-{wmax:g}), "
                f"rows per bank {_rng(rows)} (data >= {fam.min_rows:g})"
            )
            if out_of_range == "error":
                raise RfmodelError(msg + "; extrapolate with out_of_range='extrapolate' (CLI: --extrapolate)")
            notes.append(msg + "; extrapolated log-linearly from the data boundary")
        vals = {m: fam.surface(m)(c, w, q.node_nm) for m in METRICS}
        el = fam.surface("write_energy_pj").width_elasticity(c, w, q.node_nm)
        prov = self.provenance(fam, q) + ("; EXTRAPOLATED" if extrapolated else "")
        provenance = {m: prov for m in METRICS}
        provenance["write_bit_fraction"] = (
            "d ln(write energy) / d ln(width) of the same fit, clipped to [0, 1]"
        )
        return ArrayCost(
            cell=q.cell,
            node_nm=float(q.node_nm),
            capacity_kb=c,
            width_bits=w,
            ports=q.ports,
            banks=q.banks,
            **vals,
            write_bit_fraction=np.clip(el, 0.0, 1.0),
            source=self.source,
            provenance=provenance,
            extrapolated=extrapolated,
            notes=tuple(notes),
        )


def _rng(a) -> str:
    a = np.asarray(a, float)
    lo, hi = float(a.min()), float(a.max())
    return f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"


class CactiSram(_FittedEstimator):
    source = "cacti"
    tool = "cacti"
    priority = 10
    description = "CACTI 7.0.3 single-bank scratch-RAM grid, ED^2, monotone log-cubic fit"

    def family_key(self, q: Query):
        dev = _SRAM_DEVICE.get(q.cell)
        periph = PERIPHERIES[q.periph] if q.periph else dev
        return ("cacti", f"{dev}/{periph}", q.ports, float(q.temperature_k), CACTI_TARGET)

    def check(self, q: Query) -> str | None:
        if q.cell not in _SRAM_DEVICE:
            return f"CACTI data covers SRAM cells only ({', '.join(_SRAM_DEVICE)})"
        return super().check(q)


class NvsimArray(_FittedEstimator):
    source = "nvsim"
    tool = "nvsim"
    priority = 10
    description = "NVSim r131 RAM grid, monotone log-polynomial fit"

    def nvsim_cell(self, q: Query) -> str | None:
        if q.cell in _SRAM_DEVICE:
            return "SRAM" if (q.cell == "sram-hp" and q.periph in (None, "hp")) else None
        return _NVSIM_CELL.get(q.cell)

    def family_key(self, q: Query):
        cell = self.nvsim_cell(q)
        target = assumptions()["nvsim_targets"].get(cell, "ReadEDP")
        return ("nvsim", cell, "1rw", float(q.temperature_k), target)

    def check(self, q: Query) -> str | None:
        cell = self.nvsim_cell(q)
        if cell is None:
            return "NVSim data covers sram-hp (HP periphery), stt-ram and stt-ram-conservative"
        if q.ports != "1rw":
            return f"NVSim models single-ported arrays only; {q.cell} supports ports '1rw' (got '{q.ports}')"
        return super().check(q)

    def provenance(self, fam, q):
        return super().provenance(fam, q) + f", NVSim target {self.family_key(q)[4]}"


class RelaxedStt(Estimator):
    """10 ms retention STT-RAM: ``stt-ram`` with the write pulse shortened (same current)."""

    source = "relaxed"
    priority = 10

    def check(self, q: Query) -> str | None:
        if q.cell != "stt-ram-relaxed":
            return "only stt-ram-relaxed"
        return self.lib.estimator("nvsim").check(replace(q, cell="stt-ram"))

    def estimate(self, q: Query, out_of_range: str) -> ArrayCost:
        a = assumptions()
        r = a["relaxed_retention"]["pulse_ratio"] * a["relaxed_retention"]["current_ratio"]
        nv = self.lib.estimator("nvsim")
        base = nv.estimate(replace(q, cell="stt-ram"), out_of_range)
        cons = nv.estimate(replace(q, cell="stt-ram-conservative"), "extrapolate")
        cells = a["nvsim_cells"]
        qa = cells["STTRAM_aggressive"]["write_current_ua"] * cells["STTRAM_aggressive"]["write_pulse_ns"]
        qc = cells["STTRAM"]["write_current_ua"] * cells["STTRAM"]["write_pulse_ns"]
        # NVSim's write energy = periphery + k * (write charge) per bit; k from the two sample cells here
        k = (cons.write_energy_pj - base.write_energy_pj) / (qc - qa)
        e_cell = np.clip(k * qa, 0.0, 0.95 * base.write_energy_pj)
        pulse = cells["STTRAM_aggressive"]["write_pulse_ns"]
        write_e = base.write_energy_pj - (1.0 - r) * e_cell
        write_ns = base.write_ns - pulse * (1.0 - a["relaxed_retention"]["pulse_ratio"])
        # the cell part of the write energy scales with the bits written; the rest keeps the base split
        bit_frac = np.clip(
            (base.write_energy_pj * base.write_bit_fraction - (1.0 - r) * e_cell) / write_e, 0, 1
        )
        prov = dict(base.provenance)
        prov["write_energy_pj"] = (
            f"stt-ram write energy minus {1 - r:g} x its cell part; cell part = "
            "(E_conservative - E_aggressive)/(Q_c - Q_a) x Q_a from NVSim's two sample cells; "
            + a["relaxed_retention"]["provenance"]
        )
        prov["write_ns"] = (
            f"stt-ram write latency minus {(1 - a['relaxed_retention']['pulse_ratio']) * pulse:g} ns of "
            "write pulse; " + a["relaxed_retention"]["provenance"]
        )
        prov["cycle_ns"] = "max(read, write latency)"
        return replace(
            base,
            cell=q.cell,
            write_energy_pj=write_e,
            write_ns=write_ns,
            cycle_ns=np.maximum(base.access_ns, write_ns),
            write_bit_fraction=bit_frac,
            source=self.source,
            provenance=prov,
        )


class PortDerived(Estimator):
    """A multi-ported bank of a cell whose data are single-ported (NVSim's STT-RAM cells, and the STT-RAM
    paper's ``stt-ram-paper``, an NVSim bank in that paper's Table 1): the cell's own
    ``1rw`` bank with the port overhead CACTI gives the HP-SRAM bank of the same capacity, width and node.
    The extra port's wordline, bitlines and access transistors widen the array and load its lines, so area,
    energies and leakage take the SRAM's ratio (``ports`` over ``1rw``) and the latencies its added
    nanoseconds; the cell's own switching (an STT-RAM write pulse) is left as it is."""

    source = "ports"
    priority = 5

    def _base(self, q: Query) -> Estimator | None:
        for e in self.lib.estimators_for(q.cell):
            if e is not self and e.check(replace(q, ports="1rw")) is None:
                return e
        return None

    def check(self, q: Query) -> str | None:
        if q.cell in _SRAM_DEVICE or q.cell in ("tfet", "dwm"):
            return "the cell's own estimator takes its ports"
        if q.ports == "1rw":
            return "single-ported: the cell's own data"
        if self._base(q) is None:
            return f"no single-ported estimate of {q.cell} to derive ports '{q.ports}' from"
        sram = replace(q, cell="sram-hp", periph=None)
        return self.lib.estimator("cacti").check(sram) or self.lib.estimator("cacti").check(
            replace(sram, ports="1rw")
        )

    def estimate(self, q: Query, out_of_range: str) -> ArrayCost:
        one = self._base(q).estimate(replace(q, ports="1rw"), out_of_range)
        cacti = self.lib.estimator("cacti")
        sram = replace(q, cell="sram-hp", periph=None)
        multi = cacti.estimate(sram, "extrapolate")
        single = cacti.estimate(replace(sram, ports="1rw"), "extrapolate")
        how = (
            f"{q.cell} 1rw bank ({one.source}) with CACTI HP-SRAM's {q.ports}/1rw port overhead at the same "
            "capacity, width and node"
        )
        vals, prov = {}, {}
        for m in METRICS:
            if m.endswith("_ns"):
                vals[m] = getattr(one, m) + np.maximum(getattr(multi, m) - getattr(single, m), 0.0)
                prov[m] = f"{how} (+ SRAM's added ns): {one.provenance[m]}"
            else:
                vals[m] = getattr(one, m) * getattr(multi, m) / getattr(single, m)
                prov[m] = f"{how} (x SRAM's ratio): {one.provenance[m]}"
        prov["write_bit_fraction"] = one.provenance["write_bit_fraction"]
        return replace(one, ports=q.ports, **vals, source=self.source, provenance=prov)


class PaperDerived(Estimator):
    """TFET, DWM and the STT-RAM paper's cell as multipliers on the CACTI HP-SRAM bank (see
    :mod:`rfmodel.tech.derive`).  ``stt-ram-paper`` is single-ported here, like NVSim's STT-RAM cells: its
    multi-ported banks come from the ``ports`` estimator (the same port overhead as ``stt-ram``'s)."""

    source = "paper"
    priority = 10

    def check(self, q: Query) -> str | None:
        if q.cell not in PAPER_CELLS:
            return f"only {', '.join(PAPER_CELLS)}"
        if q.cell == "dwm" and q.ports != "1rw":
            return f"dwm (racetrack, one access port per track) supports ports '1rw' only (got '{q.ports}')"
        if q.cell == "stt-ram-paper" and q.ports != "1rw":
            return (
                f"stt-ram-paper is the paper's single-ported NVSim bank (ports '1rw'; got '{q.ports}'); "
                "multi-ported banks by the 'ports' estimator, like stt-ram"
            )
        return self.lib.estimator("cacti").check(replace(q, cell="sram-hp", periph=None))

    def _scaled(
        self, base, q: Query, prov: dict, *, read, write, leakage, area, latency, write_ns_min=0.0
    ) -> ArrayCost:
        """``base`` (the HP-SRAM bank) with each metric times its factor, the write and cycle times at least
        ``write_ns_min``."""
        return replace(
            base,
            cell=q.cell,
            read_energy_pj=base.read_energy_pj * read,
            write_energy_pj=base.write_energy_pj * write,
            leakage_mw=base.leakage_mw * leakage,
            area_mm2=base.area_mm2 * area,
            access_ns=base.access_ns * latency,
            write_ns=np.maximum(base.write_ns * latency, write_ns_min),
            cycle_ns=np.maximum(base.cycle_ns * latency, write_ns_min),
            source=self.source,
            provenance=prov,
        )

    def estimate(self, q: Query, out_of_range: str) -> ArrayCost:
        key = PAPER_CELLS[q.cell]
        if key not in PAPER_CELL_FACTORS:  # pragma: no cover - rfmodel.tech's import registers it
            raise RfmodelError(
                f"the paper-derived cells ({', '.join(PAPER_CELLS)}) need rfmodel.tech.derive to be imported"
            )
        f = PAPER_CELL_FACTORS[key](self.lib)[q.cell]
        base = self.lib.estimator("cacti").estimate(replace(q, cell="sram-hp", periph=None), out_of_range)
        prov = {m: f["provenance"][m] + "; base: " + base.provenance[m] for m in METRICS}
        prov["write_bit_fraction"] = base.provenance["write_bit_fraction"]
        if q.cell in ("stt-ram-paper", "tfet"):
            # tfet: one power factor for every energy; stt: its write (and cycle) time the paper's whole
            # cycles, at least SRAM's
            energy = ("power",) * 3 if q.cell == "tfet" else ("read_energy", "write_energy", "leakage")
            read, write, leakage = (f[k] for k in energy)
            return self._scaled(
                base,
                q,
                prov,
                read=read,
                write=write,
                leakage=leakage,
                area=f["area"],
                latency=f["latency"],
                write_ns_min=f.get("write_ns_min", 0.0),
            )
        # dwm: port access (like the SRAM bank, scaled) + the mean shift per access
        steps = f["mean_shift_steps"]
        node_scale = float(q.node_nm) / f["node_nm"]
        shift_ns = steps * f["shift_ns_per_step"] * node_scale
        e_step_bit = f["shift_pj_per_step_bit"] * _energy_node_scale(self.lib, f["node_nm"], q.node_nm)
        shift_e = steps * e_step_bit * q.width_bits
        port = f["power"] * (1.0 - f["shift_share"])
        read_e = base.read_energy_pj * port + shift_e
        write_e = base.write_energy_pj * port + shift_e
        return replace(
            base,
            cell=q.cell,
            read_energy_pj=read_e,
            write_energy_pj=write_e,
            leakage_mw=base.leakage_mw * f["power"],
            area_mm2=base.area_mm2 * f["area"],
            access_ns=base.access_ns + shift_ns,
            write_ns=base.write_ns + shift_ns,
            cycle_ns=base.cycle_ns + shift_ns,
            write_bit_fraction=np.clip(
                (base.write_energy_pj * port * base.write_bit_fraction + shift_e) / write_e, 0, 1
            ),
            shift_steps_per_access=steps,
            shift_energy_pj=shift_e,
            shift_ns=shift_ns,
            source=self.source,
            provenance=prov,
        )


#: the reference bank of node scaling (``rfmodel.tech.scaling``): its metrics' ratio between two nodes
REFERENCE_BANK = {"cell": "sram-hp", "capacity_kb": 16.0, "width_bits": 1024, "ports": "1rw"}
#: multipliers of paper-derived cells on an SRAM bank, by paper: ``fn(lib) -> {cell: factors}``;
#: ``rfmodel.tech.derive`` registers the Latency-Tolerant Register File's (``"ltrf"``: ``tfet``, ``dwm``) and
#: the STT-RAM register-file paper's (``"stt"``: ``stt-ram-paper``) when the ``rfmodel.tech`` package is
#: imported; :data:`PAPER_CELLS` says which key holds a cell
PAPER_CELL_FACTORS: dict = {}


def _energy_node_scale(lib: TechLibrary, from_nm: float, to_nm: float) -> float:
    """Read-energy ratio of the reference bank between two nodes (``scaling.node_ratio`` of read energy)."""
    if float(from_nm) == float(to_nm):
        return 1.0
    r = REFERENCE_BANK
    a, b = (
        lib.array_cost(r["cell"], n, r["capacity_kb"], r["width_bits"], ports=r["ports"]).read_energy_pj
        for n in (from_nm, to_nm)
    )
    return float(np.asarray(b) / np.asarray(a))


# --------------------------------------------------------------------------- library
class TechLibrary:
    """The rows (package data plus optional user files), the fitted families and the estimators."""

    def __init__(self, extra_files=(), *, include_package: bool = True):
        rows = list(package_rows()) if include_package else []
        for p in extra_files:
            rows += rows_from_file(p)
        self.rows = rows
        self.extra_files = tuple(str(p) for p in extra_files)
        self._families: dict[tuple, _Family | None] = {}
        self._estimators = {
            "cacti": CactiSram(self),
            "nvsim": NvsimArray(self),
            "relaxed": RelaxedStt(self),
            "paper": PaperDerived(self),
            "ports": PortDerived(self),
        }
        self._cache: dict = {}

    @cached_property
    def _index(self) -> dict[tuple, list[Row]]:
        idx: dict[tuple, list[Row]] = {}
        for r in self.rows:
            idx.setdefault((r.tool, r.family, r.ports, float(r.temperature_k), r.target), []).append(r)
        return idx

    def family(self, tool, family, ports, temperature_k, target) -> _Family | None:
        key = (tool, family, ports, float(temperature_k), target)
        if key not in self._families:
            rows = self._index.get(key, [])
            self._families[key] = (
                _Family(rows, f"{tool} {family} {ports} {temperature_k:g} K {target}") if rows else None
            )
        return self._families[key]

    def families(self, tool: str | None = None) -> list[tuple]:
        return sorted(k for k in self._index if tool is None or k[0] == tool)

    def estimator(self, source: str) -> Estimator:
        if source not in self._estimators:
            raise UnknownNameError("technology source", source, self._estimators)
        return self._estimators[source]

    def estimators_for(self, cell: str) -> list[Estimator]:
        order = {
            "sram-hp": ["cacti", "nvsim"],
            "sram-lstp": ["cacti"],
            "sram-lop": ["cacti"],
            "stt-ram": ["nvsim", "ports"],
            "stt-ram-conservative": ["nvsim", "ports"],
            "stt-ram-relaxed": ["relaxed", "ports"],
            "tfet": ["paper"],
            "dwm": ["paper"],
            "stt-ram-paper": ["paper", "ports"],
        }[cell]
        return sorted((self._estimators[s] for s in order), key=lambda e: -e.priority)

    # ---------------------------------------------------------------- the query
    def array_cost(
        self,
        cell: str,
        node_nm: float,
        capacity_kb,
        width_bits=1024,
        *,
        ports: str = "1rw",
        banks=1,
        temperature_k: float = DEFAULT_TEMPERATURE_K,
        periph: str | None = None,
        out_of_range: str = "error",
        source: str | None = None,
        warn: bool = True,
    ) -> ArrayCost:
        q = validate_query(
            cell, node_nm, capacity_kb, width_bits, ports, banks, temperature_k, periph, out_of_range
        )
        ests = self.estimators_for(q.cell)
        if source is not None:
            if source not in SOURCES:
                raise UnknownNameError("technology source", source, SOURCES)
            ests = [e for e in ests if e.source == source]
            if not ests:
                raise RfmodelError(
                    f"cell '{cell}' has no '{source}' estimator (available: "
                    f"{', '.join(e.source for e in self.estimators_for(q.cell))})"
                )
        if q.periph is not None and q.cell not in _SRAM_DEVICE:
            raise RfmodelError(f"periph = '{periph}' applies to SRAM cells only ({', '.join(_SRAM_DEVICE)})")
        reasons = []
        for e in ests:
            why = e.check(q)
            if why is None:
                cost = e.estimate(q, out_of_range)
                if reasons:
                    cost = replace(cost, notes=cost.notes + tuple(reasons))
                if cost.extrapolated and warn:
                    warnings.warn(cost.notes[0], TechExtrapolationWarning, stacklevel=2)
                return cost
            reasons.append(f"{e.source}: {why}")
        raise RfmodelError(
            f"cannot estimate {cell} at {float(node_nm):g} nm, ports {ports}: " + "; ".join(reasons)
        )


def validate_query(
    cell, node_nm, capacity_kb, width_bits, ports, banks, temperature_k, periph, out_of_range
) -> Query:
    """Check every input; one :class:`RfmodelError` naming the value and what is allowed."""
    if cell not in CELLS:
        raise UnknownNameError("cell technology", cell, CELLS)
    if ports not in PORTS:
        raise UnknownNameError("port configuration", ports, PORTS)
    if out_of_range not in OUT_OF_RANGE:
        raise UnknownNameError("out_of_range mode", out_of_range, OUT_OF_RANGE)
    if periph is not None and periph not in PERIPHERIES:
        raise UnknownNameError("periphery device type", periph, PERIPHERIES)
    try:
        node = float(node_nm)
    except (TypeError, ValueError) as e:
        raise RfmodelError(f"node_nm = {node_nm!r} is not a number (nm, e.g. 32)") from e
    if not (math.isfinite(node) and node > 0):
        raise RfmodelError(f"node_nm = {node_nm!r} must be a positive number of nm (e.g. 22, 32, 45)")
    try:
        c = np.asarray(capacity_kb, dtype=float)
        w = np.asarray(width_bits, dtype=float)
        b = np.asarray(banks, dtype=float)
        t = float(temperature_k)
    except (TypeError, ValueError) as e:
        raise RfmodelError(f"capacity/width/banks/temperature must be numbers: {e}") from e
    if c.size == 0 or not np.all(np.isfinite(c)) or np.any(c <= 0):
        raise RfmodelError(f"capacity_kb = {_show(capacity_kb)} must be > 0 KB per bank")
    if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w <= 0) or np.any(np.mod(w, 32) != 0):
        raise RfmodelError(
            f"width_bits = {_show(width_bits)} must be a positive multiple of 32 bits (e.g. 128, 1024)"
        )
    if not np.all(np.isfinite(b)) or np.any(b < 1) or np.any(np.mod(b, 1) != 0):
        raise RfmodelError(f"banks = {_show(banks)} must be a positive whole number")
    if not (math.isfinite(t) and t > 0):
        raise RfmodelError(f"temperature_k = {temperature_k!r} must be a positive number of K (data: 350)")
    c, w = np.broadcast_arrays(c, w)
    return Query(cell, node, c, w, ports, b.astype(int) if b.ndim else int(b), t, periph)


def _show(v) -> str:
    a = np.asarray(v)

    def one(x):
        return f"{x:g}" if isinstance(x, (int, float)) and not isinstance(x, bool) else repr(x)

    return (
        one(a.item())
        if a.ndim == 0
        else f"[{', '.join(one(x) for x in a.ravel()[:6].tolist())}{', ...' if a.size > 6 else ''}]"
    )


_DEFAULT: TechLibrary | None = None


def default_library() -> TechLibrary:
    """The library of the package's own data (built once, fits made lazily)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = TechLibrary()
    return _DEFAULT


def array_cost(cell: str, node_nm: float, capacity_kb, width_bits=1024, **kw) -> ArrayCost:
    """Costs of a bank of ``capacity_kb`` KB delivering ``width_bits`` bits per access.

    Keyword arguments: ``ports`` ('1rw' | '1r1w' | '2r1w'), ``banks`` (copies for the totals),
    ``temperature_k`` (350, the data's), ``periph`` (SRAM periphery 'hp' | 'lstp' | 'lop', default the
    cell's own), ``out_of_range`` ('error' | 'extrapolate' with a :class:`TechExtrapolationWarning`),
    ``source`` (force one estimator: 'cacti' | 'nvsim' | 'relaxed' | 'paper' | 'ports', the last a
    multi-ported STT-RAM bank, ``stt-ram-paper``'s included, from its single-ported estimate and the SRAM's
    port overhead).
    """
    return default_library().array_cost(cell, node_nm, capacity_kb, width_bits, **kw)


def cells() -> dict[str, str]:
    """Known cell technologies and one line on each."""
    return dict(CELLS)
