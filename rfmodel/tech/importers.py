"""Parsers of real CACTI 7 and NVSim text output into technology-table rows.

``parse_cacti(text, path)`` reads the report CACTI 7 prints for a UCA scratch-RAM
run: its echo of the input parameters (``Cache size : ...``, ``Data array cell
type : 0`` ...) and its result block (``Access time (ns): ...``, ``Total dynamic
read energy per access (nJ): ...`` ...).  A file may hold several runs one after
another.  A run that CACTI could not organise ("no valid data array
organizations found") becomes a row with its ``error`` column filled, as in the
shipped grid.

``parse_nvsim(text, path, node_nm=..., temperature_k=..., cell=...)`` reads
NVSim's report for a RAM design target (``DESIGN SPECIFICATION`` with capacity,
data width and optimisation target, then ``CONFIGURATION``/``RESULT`` blocks).
NVSim does not print the process node or the temperature, so the caller gives
them.  A file may hold several result blocks (several runs, or a build that
prints the best design of all eight targets in NVSim's enum order).

Both return rows in the package's CSV schemas (:data:`rfmodel.tech.data.CACTI_COLUMNS`,
:data:`rfmodel.tech.data.NVSIM_COLUMNS`); :func:`rows_to_csv` writes them.  Anything
malformed raises :class:`rfmodel.errors.ParseError` naming the file and line.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

from rfmodel.errors import ParseError
from rfmodel.tech.data import CACTI_COLUMNS, CACTI_DEVICE_TYPES, NVSIM_COLUMNS

_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
CACTI_OPT = {"0": "weighted", "1": "ED", "2": "ED^2"}
NVSIM_TARGETS = {
    "read latency": "ReadLatency",
    "write latency": "WriteLatency",
    "read energy": "ReadDynamicEnergy",
    "write energy": "WriteDynamicEnergy",
    "read energy-delay-product": "ReadEDP",
    "write energy-delay-product": "WriteEDP",
    "leakage power": "LeakagePower",
    "area": "Area",
}
#: NVSim's optimisation-target enum order (a build printing all eight designs prints them in this order)
NVSIM_TARGET_ORDER = tuple(NVSIM_TARGETS.values())


def _ports_label(rw: int, r: int, w: int, path: str) -> str:
    """The technology tables' name of a bank's ports; any other configuration is refused (its rows would be
    imported under a name no query asks for)."""
    known = {(1, 0, 0): "1rw", (0, 1, 1): "1r1w", (0, 2, 1): "2r1w"}
    if (rw, r, w) not in known:
        raise ParseError(
            path,
            None,
            f"ports: {rw} read-write, {r} read and {w} write port(s); the technology tables take banks of "
            "1rw, 1r1w or 2r1w (one read-write port, or one or two read ports and one write port)",
        )
    return known[(rw, r, w)]


def _find(lines, pattern, path, what, start=0, end=None, required=True):
    rx = re.compile(pattern)
    for i in range(start, len(lines) if end is None else end):
        m = rx.search(lines[i])
        if m:
            return m, i
    if required:
        raise ParseError(path, None, f"no {what} found (expected a line matching '{pattern}')")
    return None, None


def _blocks(starts: list[int], end: int, path: str, missing: str) -> list[tuple[int, int]]:
    """A report's blocks (runs, results) as ``(first line, end)``: each from its ``starts`` line to the next
    one's, the last to ``end``; a report without one raises ParseError ``missing``."""
    if not starts:
        raise ParseError(path, None, missing)
    return list(zip(starts, [*starts[1:], end], strict=True))


# --------------------------------------------------------------------------- CACTI
def parse_cacti(
    text: str,
    path: str = "<cacti output>",
    *,
    cell_type: str | None = None,
    periph_type: str | None = None,
    temperature_k: float | None = None,
) -> list[dict]:
    """Rows (CACTI schema) of every run in a CACTI 7 report; options fill what the report does not print."""
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if re.match(r"\s*Cache size\s*:", ln)]
    if not starts:
        starts = [i for i, ln in enumerate(lines) if "CACTI (version" in ln]
    missing = "not a CACTI report: no 'Cache size :' input echo and no 'CACTI (version' banner"
    return [
        _cacti_run(lines, s, e, path, k, cell_type, periph_type, temperature_k)
        for k, (s, e) in enumerate(_blocks(starts, len(lines), path, missing))
    ]


#: report fields that must be strictly positive (a size, a node, a temperature)
POSITIVE_FIELDS = frozenset(
    {"cache size", "block size", "technology size", "technology (um)", "bank count", "temperature"}
)


def _cacti_run(lines, s, e, path, k, cell_type, periph_type, temperature_k) -> dict:
    def get(pattern, what, required=True, cast=float):
        m, i = _find(lines, pattern, path, what, s, e, required)
        if m is None:
            return None
        try:
            v = cast(m.group(1))
        except ValueError as err:
            raise ParseError(path, i + 1, f"{what}: '{m.group(1)}' is not a number") from err
        if cast is not str:
            bad = not math.isfinite(v) or v < 0 or (v == 0 and what in POSITIVE_FIELDS)
            if bad:
                need = "> 0" if what in POSITIVE_FIELDS else ">= 0"
                raise ParseError(path, i + 1, f"{what}: {m.group(1)} is invalid (a finite number {need})")
        return v

    block = "\n".join(lines[s:e])
    failed = "no valid data array organizations found" in block
    size = get(r"^\s*(?:Cache size\s*:|Total cache size \(bytes\):)\s*" + _NUM, "cache size")
    block_b = get(r"^\s*Block size(?:\s*:| \(bytes\):)\s*" + _NUM, "block size")
    atype, ai = _find(lines, r"array type\s*:\s*(.+)$", path, "array type", s, e, required=False)
    if atype is not None and atype.group(1).strip() != "Scratch RAM":
        raise ParseError(
            path,
            ai + 1,
            f"array type '{atype.group(1).strip()}': import scratch-RAM runs (cache type \"ram\") only",
        )
    rw = get(r"^\s*(?:Read write ports\s*:|Read/write Ports:)\s*" + _NUM, "read/write ports", cast=int)
    rd = get(r"^\s*(?:Read only ports\s*:|Read ports:)\s*" + _NUM, "read ports", cast=int)
    wr = get(r"^\s*(?:Write only ports\s*:|Write ports:)\s*" + _NUM, "write ports", cast=int)
    node = get(r"^\s*Technology size \(nm\):\s*" + _NUM, "technology size", required=False)
    if node is None:
        um = get(r"^\s*Technology\s*:\s*" + _NUM, "technology (um)")
        node = um * 1000.0
    banks = get(r"^\s*(?:Number of banks:|Cache banks \(UCA\)\s*:)\s*" + _NUM, "bank count", required=False)
    if banks is not None and banks != 1:
        raise ParseError(
            path,
            None,
            f"run {k + 1}: {banks:g} banks; import single-bank runs (CACTI reports one bank plus routing)",
        )
    temp = get(r"^\s*Temperature\s*:\s*" + _NUM, "temperature", required=False)
    temp = temp if temp is not None else temperature_k
    if temp is None:
        raise ParseError(path, None, "the report does not print the temperature; pass --temperature")
    devices = []
    for label, given in (("Data array cell type", cell_type), ("Data array peripheral type", periph_type)):
        code = get(r"^\s*" + label + r"\s*:\s*(\d+)", label, required=False, cast=str)
        if code is not None:
            if int(code) > 2:
                raise ParseError(
                    path,
                    None,
                    f"{label} {code}: only SRAM device types (0-2: {CACTI_DEVICE_TYPES}) are supported",
                )
            devices.append(CACTI_DEVICE_TYPES[int(code)])
        elif given is not None:
            if given not in CACTI_DEVICE_TYPES:
                raise ParseError(
                    path, None, f"device type '{given}': allowed {', '.join(CACTI_DEVICE_TYPES)}"
                )
            devices.append(given)
        else:
            raise ParseError(path, None, f"the report does not print the '{label}'; pass it as an option")
    opt = get(r"^\s*Optimization target\s*:\s*(\d+)", "optimization target", required=False, cast=str)
    row = dict.fromkeys(CACTI_COLUMNS, "")
    row.update(
        run_id=f"{Path(path).name}#{k + 1}",
        capacity_KB=f"{size / 1024:g}",
        block_bits=f"{block_b * 8:g}",
        ports=_ports_label(rw, rd, wr, path),
        node_nm=f"{node:g}",
        cell_type=devices[0],
        periph_type=devices[1],
        temperature_K=f"{temp:g}",
        opt_target=CACTI_OPT.get(opt, "ED^2") if opt is not None else "ED^2",
    )
    if failed:
        row["error"] = "ERROR: no valid data array organizations found"
        return row
    outputs = (
        ("access_time_ns", r"^\s*Access time \(ns\):\s*", "access time"),
        ("cycle_time_ns", r"^\s*Cycle time \(ns\):\s*", "cycle time"),
        ("read_energy_nJ", r"Total dynamic read energy per access \(nJ\):\s*", "read energy"),
        ("write_energy_nJ", r"Total dynamic write energy per access \(nJ\):\s*", "write energy"),
    )
    for col, pattern, what in outputs:
        row[col] = f"{get(pattern + _NUM, what):g}"
    sub = get(r"^\s*Total leakage power of a bank \(mW\):\s*" + _NUM, "leakage power")
    gate = (
        get(r"^\s*Total gate leakage power of a bank \(mW\):\s*" + _NUM, "gate leakage", required=False)
        or 0.0
    )
    row["leakage_total_mW"] = f"{sub + gate:g}"
    m, i = _find(
        lines, r"Cache height x width \(mm\):\s*" + _NUM + r"\s*x\s*" + _NUM, path, "height x width", s, e
    )
    h, w = float(m.group(1)), float(m.group(2))
    row["height_mm"], row["width_mm"] = f"{h:g}", f"{w:g}"
    area = get(r"Data array: Area \(mm2\):\s*" + _NUM, "data array area", required=False)
    row["area_mm2"] = f"{area if area is not None else h * w:g}"
    ht = get(
        r"Total energy in H-tree \(that includes both address and data transfer\) \(nJ\):\s*" + _NUM,
        "H-tree energy",
        required=False,
    )
    hin = get(r"H-tree input delay \(ns\):\s*" + _NUM, "H-tree input delay", required=False)
    hout = get(r"H-tree output delay \(ns\):\s*" + _NUM, "H-tree output delay", required=False)
    for col, v in (("read_energy_htree_nJ", ht), ("delay_htree_in_ns", hin), ("delay_htree_out_ns", hout)):
        row[col] = "" if v is None else f"{v:g}"
    for col in ("access_time_ns", "read_energy_nJ", "area_mm2"):
        if float(row[col]) <= 0:
            raise ParseError(path, None, f"run {k + 1}: {col} = {row[col]} is not positive")
    return row


# --------------------------------------------------------------------------- NVSim
_UNITS = {
    "s": 1e9,
    "ms": 1e6,
    "us": 1e3,
    "ns": 1.0,
    "ps": 1e-3,  # -> ns
    "J": 1e12,
    "mJ": 1e9,
    "uJ": 1e6,
    "nJ": 1e3,
    "pJ": 1.0,  # -> pJ
    "W": 1e3,
    "mW": 1.0,
    "uW": 1e-3,
    "nW": 1e-6,
    "pW": 1e-9,  # -> mW
    "m^2": 1e6,
    "mm^2": 1.0,
    "um^2": 1e-6,
    "nm^2": 1e-12,  # -> mm^2
}


def _value(m, path, line, what) -> float:
    num, unit = m.group(1), m.group(2)
    if unit not in _UNITS:
        raise ParseError(path, line + 1, f"{what}: unknown unit '{unit}'")
    return float(num) * _UNITS[unit]


#: the array organisation lines of an NVSim report: (pattern, what, (rows column, columns column))
_ORGANISATION = (
    (r"Bank Organization:\s*(\d+)\s*x\s*(\d+)", "bank organisation", ("mats_rows", "mats_cols")),
    (
        r"Subarray Size\s*:\s*(\d+)\s*Rows\s*x\s*(\d+)\s*Columns",
        "subarray",
        ("subarray_rows", "subarray_cols"),
    ),
)


def parse_nvsim(
    text: str,
    path: str = "<nvsim output>",
    *,
    node_nm: float | None = None,
    temperature_k: float = 350.0,
    cell: str | None = None,
) -> list[dict]:
    """Rows (NVSim schema) of every RESULT block in an NVSim report, or in several reports one after the
    other (each run's own cell, capacity, width and organisations)."""
    if node_nm is None:
        raise ParseError(path, None, "NVSim does not print the process node; pass --node (nm)")
    lines = text.splitlines()
    runs = [i for i, ln in enumerate(lines) if re.match(r"\s*Memory Cell:", ln)]
    if len(runs) > 1:  # concatenated reports: each run from its 'Memory Cell:' line to the next one's
        out: list[dict] = []
        for a, b in zip(runs, [*runs[1:], len(lines)], strict=True):
            part = parse_nvsim(
                "\n".join(lines[: runs[0]] + lines[a:b]) if a == runs[0] else "\n".join(lines[a:b]),
                path,
                node_nm=node_nm,
                temperature_k=temperature_k,
                cell=cell,
            )
            for r in part:
                r["run_id"] = f"{Path(path).name}#{len(out) + 1}"
                out.append(r)
        return out
    m, _ = _find(lines, r"Memory Cell:\s*(.+)$", path, "'Memory Cell:' line")
    mem = m.group(1).strip()
    m, _ = _find(lines, r"Cell Area \(F\^2\)\s*:\s*" + _NUM, path, "cell area", required=False)
    cell_area = float(m.group(1)) if m else None
    m, i = _find(lines, r"Design Target:\s*(.+)$", path, "design target")
    if m.group(1).strip() != "Random Access Memory":
        raise ParseError(path, i + 1, f"design target '{m.group(1).strip()}': import RAM designs only")
    m, i = _find(lines, r"^Capacity\s*:\s*" + _NUM + r"\s*(KB|MB|GB)", path, "capacity")
    cap_kb = float(m.group(1)) * {"KB": 1, "MB": 1024, "GB": 1024 * 1024}[m.group(2)]
    m, j = _find(lines, r"^Data Width\s*:\s*" + _NUM + r"\s*Bits", path, "data width")
    width = float(m.group(1))
    for what, v, at in (("capacity", cap_kb, i), ("data width", width, j)):
        if not (math.isfinite(v) and v > 0):
            raise ParseError(path, at + 1, f"{what}: {v:g} is invalid (a finite number > 0)")
    if cell is None:
        if mem == "SRAM":
            cell = "SRAM"
        elif mem.startswith("MRAM"):
            cell = {54.0: "STTRAM", 34.5: "STTRAM_aggressive"}.get(cell_area, f"MRAM-{cell_area:g}F2")
        else:
            raise ParseError(
                path, None, f"memory cell '{mem}': only SRAM and MRAM (STT-RAM) reports are supported"
            )
    targets = [
        (i, NVSIM_TARGETS.get(mm.group(1).strip()))
        for i, ln in enumerate(lines)
        if (mm := re.search(r"optimized for (.+?)\s*\.\.\.", ln))
    ]
    results = [i for i, ln in enumerate(lines) if ln.strip() == "RESULT"]
    missing = "no RESULT block (NVSim found no valid design, or the output was cut short)"
    rows = []
    for k, (r0, r1) in enumerate(_blocks(results, len(lines), path, missing)):
        before = [t for i, t in targets if i < r0]
        if len(results) == len(NVSIM_TARGET_ORDER) and len(targets) <= 1:
            target = NVSIM_TARGET_ORDER[k]
        elif before and before[-1] is not None:
            target = before[-1]
        else:
            raise ParseError(
                path, r0 + 1, "cannot tell which optimisation target this RESULT block belongs to"
            )

        def q(label, what, r0=r0, r1=r1, required=True):
            mm, i = _find(
                lines, r"-\s+" + label + r"\s*=\s*" + _NUM + r"\s*([a-zA-Z^2]+)", path, what, r0, r1, required
            )
            return None if mm is None else _value(mm, path, i, what)

        m, i = _find(lines, r"Total Area\s*=.*=\s*" + _NUM + r"\s*([a-zA-Z^2]+)", path, "total area", r0, r1)
        area = _value(m, path, i, "total area")
        m, i = _find(
            lines, r"Write Pulse Duration\s*=\s*" + _NUM + r"\s*([a-zA-Z]+)", path, "pulse", r0, r1, False
        )
        pulse = _value(m, path, i, "write pulse") if m else 0.0
        if not (math.isfinite(area) and area > 0):
            raise ParseError(path, None, f"run {k + 1}: total area = {area:g} is not positive")
        row = dict.fromkeys(NVSIM_COLUMNS, "")
        row.update(
            run_id=f"{Path(path).name}#{k + 1}",
            cell=cell,
            cell_file=mem,
            capacity_KB=f"{cap_kb:g}",
            word_bits=f"{width:g}",
            node_nm=f"{float(node_nm):g}",
            opt_target=target,
            temperature_K=f"{float(temperature_k):g}",
            read_latency_ns=f"{q('Read Latency', 'read latency'):g}",
            write_latency_ns=f"{q('Write Latency', 'write latency'):g}",
            read_energy_pJ=f"{q('Read Dynamic Energy', 'read energy'):g}",
            write_energy_pJ=f"{q('Write Dynamic Energy', 'write energy'):g}",
            leakage_mW=f"{q('Leakage Power', 'leakage power'):g}",
            area_mm2=f"{area:g}",
            write_pulse_ns=f"{pulse:g}",
        )
        # this block's organisation: after the previous block's RESULT line, before its own
        after = results[k - 1] + 1 if k else 0
        for pattern, what, (rows_key, cols_key) in _ORGANISATION:
            m, _ = _find(lines, pattern, path, what, after, r0, required=False)
            if m:
                row[rows_key], row[cols_key] = m.group(1), m.group(2)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- output
def rows_to_csv(rows: list[dict], tool: str, sources=()) -> str:
    """CSV text in the package schema of ``tool`` ('cacti' | 'nvsim'), with a provenance header."""
    cols = CACTI_COLUMNS if tool == "cacti" else NVSIM_COLUMNS
    buf = io.StringIO()
    buf.write(
        f"# imported by 'rfmodel tech import {tool}' from: {', '.join(str(s) for s in sources) or '-'}\n"
    )
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in cols})
    return buf.getvalue()


def import_files(tool: str, paths, **options) -> list[dict]:
    """Parse every file of ``paths`` with the ``tool`` parser."""
    from rfmodel.errors import RfmodelError, UnknownNameError

    if tool not in ("cacti", "nvsim"):
        raise UnknownNameError("tool", tool, ("cacti", "nvsim"))
    rows = []
    for p in paths:
        f = Path(p)
        if not f.is_file():
            raise RfmodelError(
                f"{p}: {'a folder; name the report files in it' if f.is_dir() else 'no such file'}"
            )
        try:
            text = f.read_text()
        except UnicodeDecodeError as e:
            raise ParseError(str(p), None, "not a text file") from e
        if tool == "cacti":
            rows += parse_cacti(text, str(p), **options)
        else:
            rows += parse_nvsim(text, str(p), **options)
    return rows
