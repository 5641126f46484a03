"""Estimators for the structures the register-file designs add.

Each function returns a :class:`StructureCost` (per-access read and write
energy, leakage, area, access latency, capacity) whose every number has a
provenance string; ``.structure(name, copies)`` turns it into an
:class:`rfmodel.energy.accounting.Structure`.

Storage structures (register cache, collector storage, tag arrays, renaming
table, free map, write buffer, warp control blocks) are SRAM arrays costed by
:func:`rfmodel.tech.array.array_cost`; entries narrower than 32 bits are packed
several to a 32-bit row.  Most of them are far smaller or narrower than any
CACTI run (fewer than 32 rows, rows narrower than 128 bits), so they are
*extrapolated* from the fitted surfaces, and their provenance says so.  Logic
blocks (BDI compressor and decompressor, CORF's packers, unpackers and width
detectors) take their numbers from the papers (:mod:`rfmodel.tech.data`) and
are moved across nodes by :mod:`rfmodel.tech.scaling`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from rfmodel.errors import RfmodelError
from rfmodel.tech.data import assumptions, paper_tables
from rfmodel.tech.scaling import node_ratio


@dataclass(frozen=True)
class StructureCost:
    """One copy of a structure; energies in pJ per access, leakage in mW, area in mm^2, latency in ns."""

    kind: str
    read_pj: float | np.ndarray
    write_pj: float | np.ndarray
    leakage_mw: float | np.ndarray
    area_mm2: float | np.ndarray
    latency_ns: float | np.ndarray
    capacity_bits: float = 0.0
    provenance: dict = field(default_factory=dict)
    actions: dict = field(default_factory=dict)  # other per-event energies (pJ), e.g. {"compare": ...}

    def structure(self, name: str | None = None, copies=1):
        from rfmodel.energy.accounting import Structure

        return Structure(
            name or self.kind,
            self.read_pj,
            self.write_pj,
            self.leakage_mw,
            self.area_mm2,
            copies=copies,
            provenance=f"{self.kind}: " + self.provenance.get("read_pj", ""),
            capacity_bits=self.capacity_bits,
            actions=dict(self.actions),
        )


def _lib(lib):
    from rfmodel.tech.array import default_library

    return default_library() if lib is None else lib


def _positive_int(name: str, v) -> int:
    if not (isinstance(v, (int, np.integer)) and v >= 1):
        raise RfmodelError(f"{name} = {v!r} must be a whole number >= 1")
    return int(v)


#: fewest rows CACTI organises (every 16-row run of the grid failed, every 32-row run succeeded)
MIN_SRAM_ROWS = 32


def _array(lib, cell, node_nm, entries, entry_bits, ports, what):
    """An SRAM array of ``entries`` x ``entry_bits``, packed into 32-bit-multiple rows.

    Below :data:`MIN_SRAM_ROWS` rows the storage is a latch/flip-flop register file rather than an SRAM with
    sense amplifiers: it takes the area and leakage *per bit* of the smallest organisable array of the same
    row width (scaled down with the rows) and that array's per-access energy and latency.  With the
    package's own library the result is remembered (a design search asks for the same arrays again).
    """
    entries = _positive_int(f"{what} entries", entries)
    entry_bits = _positive_int(f"{what} entry bits", entry_bits)
    if lib is None:
        return _default_array(cell, float(node_nm), entries, entry_bits, ports)
    return _build_array(lib, cell, node_nm, entries, entry_bits, ports)


@functools.lru_cache(maxsize=4096)
def _default_array(cell, node_nm, entries, entry_bits, ports):
    return _build_array(None, cell, node_nm, entries, entry_bits, ports)


def _build_array(lib, cell, node_nm, entries, entry_bits, ports):
    row_bits = 32 * math.ceil(entry_bits / 32)
    per_row = max(row_bits // entry_bits, 1)
    rows = math.ceil(entries / per_row)
    cap_kb = rows * row_bits / 8192.0
    layout = (
        f"{entries} x {entry_bits} bit as {rows} rows x {row_bits} bit ({cap_kb:.3g} KB, {cell}, {ports})"
    )
    if rows >= MIN_SRAM_ROWS:
        a = _lib(lib).array_cost(
            cell, node_nm, cap_kb, row_bits, ports=ports, out_of_range="extrapolate", warn=False
        )
        return a, layout, entries * entry_bits
    edge = MIN_SRAM_ROWS * row_bits / 8192.0
    a = _lib(lib).array_cost(
        cell, node_nm, edge, row_bits, ports=ports, out_of_range="extrapolate", warn=False
    )
    f = rows / MIN_SRAM_ROWS
    note = (
        f"latch storage: area and leakage x{f:.3g} of the {MIN_SRAM_ROWS}-row array, "
        "its access energy and latency"
    )
    prov = {k: v + "; " + note for k, v in a.provenance.items()}
    a = replace(
        a,
        capacity_kb=np.asarray(cap_kb),
        leakage_mw=a.leakage_mw * f,
        area_mm2=a.area_mm2 * f,
        provenance=prov,
    )
    return a, layout, entries * entry_bits


def _from_array(kind, a, layout, bits, extra_prov="") -> StructureCost:
    p = a.provenance_summary + ("; " + extra_prov if extra_prov else "")
    prov = {m: f"{layout}: {p}" for m in ("read_pj", "write_pj", "leakage_mw", "area_mm2", "latency_ns")}
    return StructureCost(
        kind,
        a.read_energy_pj,
        a.write_energy_pj,
        a.leakage_mw,
        a.area_mm2,
        a.access_ns,
        capacity_bits=bits,
        provenance=prov,
    )


# --------------------------------------------------------------------------- storage
def sram_table(
    entries: int, entry_bits: int, *, node_nm: float, cell: str = "sram-hp", ports: str = "1rw", lib=None
):
    """A generic table of ``entries`` x ``entry_bits`` (one entry per access)."""
    a, layout, bits = _array(lib, cell, node_nm, entries, entry_bits, ports, "table")
    return _from_array("table", a, layout, bits)


def register_cache(
    capacity_kb: float = 16.0,
    banks: int = 16,
    width_bits: int = 1024,
    *,
    node_nm: float,
    cell: str = "sram-hp",
    ports: str = "1r1w",
    lib=None,
) -> StructureCost:
    """One bank of a banked register-file cache (LTRF: 16 KB in 16 banks of 8 warp registers)."""
    banks = _positive_int("register cache banks", banks)
    if not capacity_kb > 0:
        raise RfmodelError(f"register cache capacity_kb = {capacity_kb!r} must be > 0")
    entries = max(int(round(capacity_kb * 8192 / banks / width_bits)), 1)
    a, layout, bits = _array(lib, cell, node_nm, entries, width_bits, ports, "register cache")
    return _from_array("register_cache", a, layout, bits, "one bank; banks as copies")


def operand_collector(
    operands: int = 3, width_bits: int = 1024, *, node_nm: float, cell: str = "sram-hp", lib=None
) -> StructureCost:
    """Operand storage of one collector unit (one warp register per source operand)."""
    a, layout, bits = _array(lib, cell, node_nm, operands, width_bits, "1r1w", "collector")
    return _from_array("collector", a, layout, bits, "per collector unit")


def tag_array(
    sets: int,
    ways: int,
    tag_bits: int,
    *,
    state_bits: int = 2,
    node_nm: float,
    banks: int = 1,
    cell: str = "sram-hp",
    lib=None,
) -> StructureCost:
    """Tags of a ``ways``-way cache: a read fetches and compares one set's tags; a write updates one way."""
    sets = _positive_int("tag sets", sets)
    ways = _positive_int("tag ways", ways)
    banks = _positive_int("tag banks", banks)
    entry = _positive_int("tag bits", tag_bits) + max(int(state_bits), 0)
    per_bank_sets = math.ceil(sets / banks)
    a, layout, _ = _array(lib, cell, node_nm, per_bank_sets, entry * ways, "1rw", "tag")
    cmp = comparator_pj(ways * tag_bits, node_nm, lib=lib)
    prov_a = a.provenance_summary
    write = a.write_energy_pj * (entry / (32 * math.ceil(entry * ways / 32)))  # one way's bits of the row
    prov = {
        "read_pj": f"{layout} read + {ways} x {tag_bits}-bit compare ({cmp[1]}); {prov_a}",
        "write_pj": f"one way's share of a row write; {prov_a}",
        "leakage_mw": f"{layout}; {prov_a}",
        "area_mm2": f"{layout}; {prov_a}",
        "latency_ns": f"{layout}; {prov_a}",
    }
    return StructureCost(
        "tag_array",
        a.read_energy_pj + cmp[0],
        write,
        a.leakage_mw,
        a.area_mm2,
        a.access_ns,
        capacity_bits=per_bank_sets * ways * entry,
        provenance=prov,
        actions={"compare": cmp[0]},
    )


def renaming_table(
    entries: int = 3024,
    entry_bits: int = 14,
    banks: int = 4,
    *,
    node_nm: float,
    read_ports: int = 2,
    cell: str = "sram-hp",
    lib=None,
) -> StructureCost:
    """One bank of a register renaming table (CORF: 48 warps x 63 regs x (10-bit register + 4-bit mask))."""
    banks = _positive_int("renaming table banks", banks)
    ports = {1: "1r1w", 2: "2r1w"}.get(read_ports)
    if ports is None:
        raise RfmodelError(f"renaming table read_ports = {read_ports!r}: allowed 1 or 2")
    a, layout, bits = _array(
        lib, cell, node_nm, math.ceil(entries / banks), entry_bits, ports, "renaming table"
    )
    return _from_array("renaming_table", a, layout, bits, "one bank; banks as copies")


def free_map(bits: int = 4096, *, node_nm: float, cell: str = "sram-hp", lib=None) -> StructureCost:
    """Free-register bit map (CORF: 1024 registers x 4 byte slices), read and written 32 bits at a time."""
    bits = _positive_int("free map bits", bits)
    a, layout, cap = _array(lib, cell, node_nm, math.ceil(bits / 32), 32, "1rw", "free map")
    return _from_array("free_map", a, layout, cap)


def write_buffer(
    entries: int = 16,
    entry_bits: int = 1024,
    *,
    node_nm: float,
    capacity_kb: float | None = 8.0,
    ways: int = 8,
    cell: str = "sram-hp",
    lib=None,
) -> StructureCost:
    """Centralized write buffer (STT-RAM paper: 16 entries, modelled as an 8 KB 8-way SRAM cache).

    Data array of ``capacity_kb`` (default the paper's 8 KB; ``None`` = entries x entry_bits), full-entry rows
    plus a tag array indexed by (bank, register); a lookup reads the tags and, on a hit, one data row.
    """
    entries = _positive_int("write buffer entries", entries)
    cap = entries * entry_bits / 8192.0 if capacity_kb is None else float(capacity_kb)
    if not cap > 0:
        raise RfmodelError(f"write buffer capacity_kb = {capacity_kb!r} must be > 0")
    rows = max(int(round(cap * 8192 / entry_bits)), 1)
    data, layout, bits = _array(lib, cell, node_nm, rows, entry_bits, "1rw", "write buffer")
    tags = tag_array(max(rows // ways, 1), ways, 16, node_nm=node_nm, cell=cell, lib=lib)
    note = f"data {layout} + tags ({max(rows // ways, 1)} sets x {ways} ways x 16 bits)"
    prov = {
        m: f"{note}; {data.provenance_summary}" for m in ("read_pj", "write_pj", "leakage_mw", "area_mm2")
    }
    prov["latency_ns"] = f"tag then data access; {note}"
    return StructureCost(
        "write_buffer",
        data.read_energy_pj + tags.read_pj,
        data.write_energy_pj + tags.write_pj,
        data.leakage_mw + tags.leakage_mw,
        data.area_mm2 + tags.area_mm2,
        data.access_ns + tags.latency_ns,
        capacity_bits=bits,
        provenance=prov,
    )


def collector_cache(
    slots: int = 8, width_bits: int = 1024, *, node_nm: float, cell: str = "sram-hp", lib=None
) -> StructureCost:
    """A caching collector unit's cache table.

    Malekeh: 8 slots of a warp register, each with an 8-bit tag, lock and hint bits and a 3-bit LRU.

    Read = tag compare over all slots + one data slot; write = one slot with its metadata.
    """
    m = paper_tables()["malekeh"]
    meta = m["tag_bits"] + m["lock_bits"] + m["hint_bits"] + m["lru_bits"]
    data = operand_collector(slots, width_bits, node_nm=node_nm, cell=cell, lib=lib)
    tags, tlayout, tbits = _array(lib, cell, node_nm, slots, meta, "1r1w", "cache table metadata")
    cmp_pj, cmp_prov = comparator_pj(slots * m["tag_bits"], node_nm, lib=lib)
    prov = {
        k: f"{slots}-slot data ({data.provenance[k]}) + metadata {tlayout} ({m['provenance']})"
        for k in ("read_pj", "write_pj", "leakage_mw", "area_mm2", "latency_ns")
    }
    prov["read_pj"] += f" + {slots} x {m['tag_bits']}-bit compare ({cmp_prov})"
    return StructureCost(
        "collector_cache",
        data.read_pj + tags.read_energy_pj + cmp_pj,
        data.write_pj + tags.write_energy_pj,
        data.leakage_mw + tags.leakage_mw,
        data.area_mm2 + tags.area_mm2,
        np.maximum(data.latency_ns, tags.access_ns),
        capacity_bits=data.capacity_bits + tbits,
        provenance=prov,
        actions={"compare": cmp_pj},
    )


def warp_control_block(
    warps: int = 64,
    regs_per_warp: int = 256,
    entry_bits: int = 5,
    offset_bits: int = 3,
    *,
    node_nm: float,
    cell: str = "sram-hp",
    lib=None,
) -> StructureCost:
    """LTRF's warp control blocks for all warps of an SM (register-cache address table + vectors).

    Address table: warps x regs entries of ``entry_bits`` (2 read ports, as the paper states); the working-set
    valid and liveness vectors and the warp offset: one row of ``2 regs + offset`` bits per warp.
    A read looks up one address entry; a write updates one warp's vectors.
    """
    warps = _positive_int("warps", warps)
    regs = _positive_int("registers per warp", regs_per_warp)
    table, tl, tb = _array(lib, cell, node_nm, warps * regs, entry_bits, "2r1w", "WCB address table")
    vec, vl, vb = _array(lib, cell, node_nm, warps, 2 * regs + offset_bits, "1rw", "WCB vectors")
    prov = {
        k: f"address table {tl} + vectors {vl}; {table.provenance_summary}"
        for k in ("read_pj", "write_pj", "leakage_mw", "area_mm2", "latency_ns")
    }
    return StructureCost(
        "warp_control_block",
        table.read_energy_pj,
        vec.write_energy_pj,
        table.leakage_mw + vec.leakage_mw,
        table.area_mm2 + vec.area_mm2,
        table.access_ns,
        capacity_bits=tb + vb,
        provenance=prov,
    )


# --------------------------------------------------------------------------- logic
def _logic_pj_per_bit(node_nm: float, lib=None) -> tuple[float, str]:
    """Energy of simple per-bit datapath logic (width detection, packing) per processed bit."""
    c = paper_tables()["corf_table2"]
    lg = paper_tables()["corf_logic"]
    frac = lg["dynamic_overhead_fraction"] - c["rt_access_pj"] / c["rf_access_pj"]
    pj = frac * c["rf_access_pj"] / 1024.0 * node_ratio("read_energy_pj", c["node_nm"], node_nm, _lib(lib))
    prov = (
        f"({lg['dynamic_overhead_fraction']:g} - {c['rt_access_pj']}/{c['rf_access_pj']}) x "
        f"{c['rf_access_pj']} pJ "
        f"per 1024-bit register access at {c['node_nm']} nm ({lg['provenance']}; {c['provenance']}), "
        f"moved to {float(node_nm):g} nm by the CACTI reference bank's dynamic-energy ratio"
    )
    return pj, prov


def comparator_pj(bits: int, node_nm: float, lib=None) -> tuple[float, str]:
    """Energy of comparing ``bits`` bits (XOR + match), costed as that many bits of simple datapath logic."""
    pj, prov = _logic_pj_per_bit(node_nm, lib)
    return bits * pj, "per-bit datapath logic energy " + prov


def _logic_static(area_mm2_at_45: float, node_nm: float, lib) -> tuple[float, float]:
    lg = paper_tables()["corf_logic"]
    area = area_mm2_at_45 * node_ratio("area_mm2", lg["node_nm"], node_nm, lib)
    leak = (
        lg["static_mw"]
        / lg["area_mm2"]
        * area_mm2_at_45
        * node_ratio("leakage_mw", lg["node_nm"], node_nm, lib)
    )
    return area, leak


def packing_logic(collectors: int = 4, width_bits: int = 1024, *, node_nm: float, lib=None) -> StructureCost:
    """CORF's register-packing logic: width detectors, packers and unpackers (2+2 per collector), allocation.

    Per register access: the paper's 3% dynamic overhead less the renaming-table share, as per-bit logic
    (a write is width-detected and packed, a read unpacked).  Area and leakage: the synthesized block
    (0.05 mm^2, 0.2 mW at 45 nm for 4 collectors) scaled with the number of collectors and the node.
    """
    collectors = _positive_int("collectors", collectors)
    lib = _lib(lib)
    lg = paper_tables()["corf_logic"]
    pj_bit, prov = _logic_pj_per_bit(node_nm, lib)
    area, leak = _logic_static(lg["area_mm2"] * collectors / lg["collectors"], node_nm, lib)
    e = pj_bit * width_bits
    sprov = (
        f"{lg['area_mm2']} mm^2 / {lg['static_mw']} mW for {lg['collectors']} collectors "
        f"at {lg['node_nm']} nm "
        f"({lg['provenance']}), scaled by collectors and node (CACTI reference bank area, leakage ratios)"
    )
    return StructureCost(
        "packing_logic",
        e,
        e,
        leak,
        area,
        0.0,
        provenance={
            "read_pj": prov,
            "write_pj": prov,
            "leakage_mw": sprov,
            "area_mm2": sprov,
            "latency_ns": "in the existing collector-allocation cycle (CORF section 6)",
        },
    )


def bdi_codec(width_bits: int = 1024, *, node_nm: float, lib=None) -> dict[str, StructureCost]:
    """BDI compressor and decompressor of the STT-RAM register file.

    Returns ``{"compressor": StructureCost, "decompressor": StructureCost}``.

    Area: the paper's 0.07 mm^2 for both at 32 nm (from Warped-Compression), split 3:1 like the logic each
    runs (three base/delta encodings tried in parallel vs one add per lane), moved across nodes by the area
    ratio.
    Energy per 1024-bit register: that many units of per-bit datapath logic (the paper's Table 4 is not in its
    text; it calls the energy negligible).  Leakage: CORF's synthesized logic density (0.2 mW per 0.05 mm^2 at
    45 nm) times the area.
    """
    lib = _lib(lib)
    sa = paper_tables()["stt_area"]
    lg = paper_tables()["corf_logic"]
    a = assumptions()["logic"]
    pj_bit, prov = _logic_pj_per_bit(node_nm, lib)
    units = {"compressor": a["bdi_compress_units"], "decompressor": a["bdi_decompress_units"]}
    total_units = sum(units.values())
    out = {}
    for k, u in units.items():
        area = sa["codec_area_mm2"] * u / total_units * node_ratio("area_mm2", 32, node_nm, lib)
        area45 = sa["codec_area_mm2"] * u / total_units * node_ratio("area_mm2", 32, lg["node_nm"], lib)
        leak = (
            lg["static_mw"] / lg["area_mm2"] * area45 * node_ratio("leakage_mw", lg["node_nm"], node_nm, lib)
        )
        e = u * pj_bit * width_bits
        eprov = f"{u:g} x per-bit logic x {width_bits} bits ({a['provenance']}); {prov}"
        aprov = f"{u:g}/{total_units:g} of {sa['codec_area_mm2']} mm^2 at 32 nm ({sa['provenance']})"
        out[k] = StructureCost(
            f"bdi_{k}",
            e if k == "decompressor" else 0.0,
            e if k == "compressor" else 0.0,
            leak,
            area,
            0.0,
            provenance={
                "read_pj": eprov,
                "write_pj": eprov,
                "leakage_mw": aprov + "; leakage density of CORF's synthesized logic",
                "area_mm2": aprov,
                "latency_ns": "one extra pipeline stage (not a bank latency)",
            },
        )
    return out
