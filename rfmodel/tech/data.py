"""Technology data tables: the package's CACTI/NVSim rows, user rows, paper tables.

Every row keeps where it came from (``source``: file and run id).  Two CSV
schemas exist, one per tool; ``rfmodel tech import`` writes the same schemas,
so rows a user produces with real CACTI or NVSim runs extend the fits
(:class:`rfmodel.tech.array.TechLibrary` with ``extra_files``).
"""

from __future__ import annotations

import csv
import io
import math
import tomllib
from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources

from rfmodel.errors import ParseError

CACTI_FILE = "cacti7_sram_grid.csv"
NVSIM_FILE = "nvsim_arrays.csv"
PAPERS_FILE = "paper_tables.toml"
ASSUMPTIONS_FILE = "assumptions.toml"

#: columns of the CACTI schema (shipped grid and ``rfmodel tech import cacti``)
CACTI_COLUMNS = (
    "run_id",
    "capacity_KB",
    "block_bits",
    "ports",
    "node_nm",
    "cell_type",
    "periph_type",
    "temperature_K",
    "opt_target",
    "access_time_ns",
    "cycle_time_ns",
    "read_energy_nJ",
    "write_energy_nJ",
    "leakage_total_mW",
    "area_mm2",
    "height_mm",
    "width_mm",
    "read_energy_htree_nJ",
    "delay_htree_in_ns",
    "delay_htree_out_ns",
    "error",
)
#: columns of the NVSim schema (shipped grid and ``rfmodel tech import nvsim``)
NVSIM_COLUMNS = (
    "run_id",
    "cell",
    "cell_file",
    "capacity_KB",
    "word_bits",
    "node_nm",
    "opt_target",
    "temperature_K",
    "read_latency_ns",
    "write_latency_ns",
    "read_energy_pJ",
    "write_energy_pJ",
    "leakage_mW",
    "area_mm2",
    "write_pulse_ns",
    "mats_rows",
    "mats_cols",
    "subarray_rows",
    "subarray_cols",
)

CACTI_DEVICE_TYPES = ("itrs-hp", "itrs-lstp", "itrs-lop")


@dataclass(frozen=True)
class Row:
    """One tool run in the common form the fits use (units: KB, bits, nm, K, pJ, mW, mm^2, ns)."""

    tool: str  # "cacti" | "nvsim"
    family: str  # "itrs-hp/itrs-hp" (cell/periphery) for CACTI, NVSim cell label for NVSim
    capacity_kb: float
    width_bits: float
    node_nm: float
    ports: str
    temperature_k: float
    target: str
    read_energy_pj: float
    write_energy_pj: float
    leakage_mw: float
    area_mm2: float
    access_ns: float
    write_ns: float
    cycle_ns: float
    write_pulse_ns: float = 0.0
    htree_energy_pj: float = 0.0
    htree_delay_ns: float = 0.0
    half_perimeter_mm: float = 0.0
    ok: bool = True
    source: str = ""


def _num(text: str, where: str, column: str) -> float:
    if text is None or text.strip() == "":
        return math.nan
    try:
        return float(text)
    except ValueError as e:
        raise ParseError(where, None, f"column '{column}': '{text}' is not a number") from e


def _read_csv_text(text: str, where: str, required) -> list[dict]:
    lines = [ln for ln in text.splitlines() if not ln.startswith("#") and ln.strip()]
    if not lines:
        raise ParseError(where, None, "no rows (empty technology table)")
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    missing = [c for c in required if c not in (reader.fieldnames or [])]
    if missing:
        raise ParseError(where, 1, f"missing columns {missing}; expected the columns {list(required)}")
    return list(reader)


def cacti_rows_from_text(text: str, where: str) -> list[Row]:
    out = []
    for r in _read_csv_text(text, where, CACTI_COLUMNS):
        src = f"{where}:{r['run_id']}"
        err = (r.get("error") or "").strip()

        def f(c, r=r, src=src):
            return _num(r[c], src, c)

        ht = f("read_energy_htree_nJ")
        hd = f("delay_htree_in_ns") + f("delay_htree_out_ns")
        out.append(
            Row(
                tool="cacti",
                family=f"{r['cell_type']}/{r['periph_type']}",
                capacity_kb=f("capacity_KB"),
                width_bits=f("block_bits"),
                node_nm=f("node_nm"),
                ports=r["ports"],
                temperature_k=f("temperature_K"),
                target=r["opt_target"],
                read_energy_pj=f("read_energy_nJ") * 1000.0,
                write_energy_pj=f("write_energy_nJ") * 1000.0,
                leakage_mw=f("leakage_total_mW"),
                area_mm2=f("area_mm2"),
                access_ns=f("access_time_ns"),
                write_ns=f("access_time_ns"),  # CACTI reports one access time for reads and writes
                cycle_ns=f("cycle_time_ns"),
                htree_energy_pj=0.0 if math.isnan(ht) else ht * 1000.0,
                htree_delay_ns=0.0 if math.isnan(hd) else hd,
                half_perimeter_mm=f("height_mm") + f("width_mm"),
                ok=not err,
                source=src,
            )
        )
    return out


def nvsim_rows_from_text(text: str, where: str) -> list[Row]:
    out = []
    for r in _read_csv_text(text, where, NVSIM_COLUMNS):
        src = f"{where}:{r['run_id']}"

        def f(c, r=r, src=src):
            return _num(r[c], src, c)

        out.append(
            Row(
                tool="nvsim",
                family=r["cell"],
                capacity_kb=f("capacity_KB"),
                width_bits=f("word_bits"),
                node_nm=f("node_nm"),
                ports="1rw",
                temperature_k=f("temperature_K"),
                target=r["opt_target"],
                read_energy_pj=f("read_energy_pJ"),
                write_energy_pj=f("write_energy_pJ"),
                leakage_mw=f("leakage_mW"),
                area_mm2=f("area_mm2"),
                access_ns=f("read_latency_ns"),
                write_ns=f("write_latency_ns"),
                cycle_ns=max(f("read_latency_ns"), f("write_latency_ns")),
                write_pulse_ns=0.0 if math.isnan(f("write_pulse_ns")) else f("write_pulse_ns"),
                source=src,
            )
        )
    return out


def _package_text(name: str) -> str:
    return resources.files("rfmodel.data.tech").joinpath(name).read_text()


@lru_cache(maxsize=1)
def package_rows() -> tuple[Row, ...]:
    """The rows shipped with the package (CACTI grid and NVSim grid).  Parsing the 3,000 rows costs every
    process that asks for a cost about 45 ms, loading them parsed a quarter of that: they are kept in the
    on-disk cache (``rfmodel/cache.py``, a checked data file: :mod:`rfmodel.datafile`) keyed by the package's
    data files."""
    from rfmodel.cache import entry_path, read_entry, source_hash, write_with

    path = entry_path("tech-rows", source_hash("data/tech"), ".npz")
    rows = read_entry(path, _load_rows)  # None when absent or damaged: parsed again and rewritten
    if rows is not None:
        return rows
    rows = cacti_rows_from_text(_package_text(CACTI_FILE), f"rfmodel/data/tech/{CACTI_FILE}")
    rows += nvsim_rows_from_text(_package_text(NVSIM_FILE), f"rfmodel/data/tech/{NVSIM_FILE}")
    rows = tuple(rows)
    write_with(path, lambda p: _save_rows(p, rows))  # an unwritable cache: parsed every time
    return rows


#: kind and format version of the cached rows (:mod:`rfmodel.datafile`)
_ROWS_KIND, _ROWS_VERSION = "rfmodel technology rows", 1


def _save_rows(path, rows) -> None:
    """``rows`` as one column array per field of :class:`Row`."""
    import numpy as np

    from rfmodel.datafile import write_checked

    cols = {}
    for f in fields(Row):
        values = [getattr(r, f.name) for r in rows]
        kind = f.type if isinstance(f.type, str) else f.type.__name__
        dtype = {"str": np.str_, "bool": np.bool_}.get(kind, np.float64)
        cols[f.name] = np.array(values, dtype=dtype)
    write_checked(path, _ROWS_KIND, _ROWS_VERSION, cols, {"rows": len(rows)})


def _load_rows(path) -> tuple[Row, ...]:
    """The rows :func:`_save_rows` wrote (its checks passed)."""
    from rfmodel.datafile import read_checked

    meta, cols = read_checked(path, _ROWS_KIND, _ROWS_VERSION)
    n = int(meta["rows"])
    names = [f.name for f in fields(Row)]
    if sorted(cols) != sorted(names) or any(cols[k].shape != (n,) for k in names):
        raise ValueError("not the fields of the rows")
    lists = [cols[k].tolist() for k in names]
    out = []
    for values in zip(*lists, strict=True):  # as unpickling would: the fields set, no frozen __init__ per row
        row = object.__new__(Row)
        row.__dict__.update(zip(names, values, strict=True))
        out.append(row)
    return tuple(out)


def rows_from_file(path) -> list[Row]:
    """Rows of a user CSV in either schema (as written by ``rfmodel tech import``)."""
    from rfmodel.io import read_text

    text = read_text(path, "technology data file")
    header = next((ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")), "")
    cols = [c.strip() for c in header.split(",")]
    if "block_bits" in cols:
        return cacti_rows_from_text(text, str(path))
    if "word_bits" in cols:
        return nvsim_rows_from_text(text, str(path))
    raise ParseError(
        str(path), 1, "not a technology table: expected the CACTI columns (block_bits ...) or the NVSim ones"
    )


@lru_cache(maxsize=1)
def paper_tables() -> dict:
    """The papers' technology tables and per-structure numbers (``paper_tables.toml``)."""
    return tomllib.loads(_package_text(PAPERS_FILE))


@lru_cache(maxsize=1)
def assumptions() -> dict:
    """Modelling assumptions that are not in any tool output or paper (``assumptions.toml``)."""
    return tomllib.loads(_package_text(ASSUMPTIONS_FILE))
