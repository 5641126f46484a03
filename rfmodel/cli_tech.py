"""``rfmodel tech``: show the technology tables, query the array model, import CACTI/NVSim output.

    rfmodel tech show [--fit | --validation] [--json]
    rfmodel tech query --cell stt-ram --node 32 --capacity-kb 8 --width-bits 1024 [--ports 1rw|1r1w|2r1w]
                       [--banks N] [--clock-mhz F] [--periph hp|lstp|lop] [--source S] [--extrapolate]
                       [--data FILE ...] [--json]
    rfmodel tech import cacti|nvsim FILE... [--out FILE.csv] [--node NM] [--temperature K] [--cell NAME]
                       [--cell-type itrs-hp ...] [--periph-type itrs-hp ...]

Handlers return an exit code; bad input raises :class:`rfmodel.errors.RfmodelError`
(the main CLI prints it as one line and exits with status 2).  Values are
parsed here rather than by argparse so that every bad value gets that one-line
error.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

from rfmodel import limits as L
from rfmodel.errors import RfmodelError, UnknownNameError


def _number(text, what: str, high: float, *, integer: bool = False, positive: bool = True):
    """``text`` as a finite number (``integer``: a whole one) above 0 (``positive``) and at most ``high``."""
    if text is None:
        return None
    try:
        v = float(text)
    except (TypeError, ValueError) as e:
        raise RfmodelError(f"{what} = '{text}' is not a number") from e
    if not math.isfinite(v) or (positive and v <= 0):
        raise RfmodelError(f"{what} = '{text}' must be a positive number (at most {high})")
    if v > high:
        raise RfmodelError(f"{what} = '{text}' is out of range: expected a number above 0, at most {high}")
    if integer:
        if v != int(v):
            raise RfmodelError(f"{what} = '{text}' must be a whole number")
        return int(v)
    return v


#: the numeric options of ``tech query`` and ``tech import``: their largest value and whether they take
#: whole numbers only (parsed by :func:`_option`; their help states the range)
_NUMERIC = {
    "--node": (L.MAX_TECH_NODE_NM, False),
    "--capacity-kb": (L.MAX_CAPACITY_KB, False),
    "--width-bits": (L.MAX_WIDTH_BITS, False),
    "--banks": (L.MAX_BANKS, True),
    "--clock-mhz": (L.MAX_CLOCK_MHZ, False),
    "--temperature": (L.MAX_TEMPERATURE_K, False),
}


def _option(args, flag: str):
    """The value of the numeric option ``flag`` (:data:`_NUMERIC`), checked; None when not given."""
    high, integer = _NUMERIC[flag]
    return _number(getattr(args, flag[2:].replace("-", "_")), flag, high, integer=integer)


def _add_numeric(parser, flag: str, help: str, **kw) -> None:
    """Add the numeric option ``flag`` (:data:`_NUMERIC`), its help ending in its range."""
    high, integer = _NUMERIC[flag]
    parser.add_argument(flag, help=f"{help} [{'1 to' if integer else 'above 0 and'} at most {high}]", **kw)


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _print_table(rows: list[dict]) -> None:
    if not rows:
        print("(empty)")
        return
    cols = list(rows[0])
    cells = [[_fmt(r[c]) for c in cols] for r in rows]
    widths = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for x in cells:
        print("  ".join(v.ljust(w) for v, w in zip(x, widths, strict=True)))


# --------------------------------------------------------------------------- show
def cells_table(lib=None) -> list[dict]:
    """One row per cell technology: sources, nodes, the data's capacity/width range and ports."""
    import numpy as np

    from rfmodel.tech.array import CELLS, PORTS, Query, default_library

    lib = lib or default_library()
    base = {
        "stt-ram-relaxed": ("nvsim", "stt-ram"),
        "tfet": ("cacti", "sram-hp"),
        "dwm": ("cacti", "sram-hp"),
        "stt-ram-paper": ("cacti", "sram-hp"),
    }
    rows = []
    for cell, desc in CELLS.items():
        src, data_cell = base.get(cell, ("cacti" if cell.startswith("sram") else "nvsim", cell))
        est = lib.estimator(src)
        fams = {}
        for p in PORTS:
            if (src == "nvsim" or cell == "dwm") and p != "1rw":
                continue
            f = est.family(Query(data_cell, 32.0, None, None, p))
            if f is not None:
                fams[p] = f
        f = next(iter(fams.values()))
        (c0, c1), (w0, w1) = f.box()
        # the ports a query can ask for: the data's, and those an estimator derives (multi-ported banks of a
        # single-ported cell: the "ports" source) at a bank inside the data's range
        mid = np.sqrt([c0 * c1, w0 * w1])
        probe = [Query(cell, f.nodes[-1], np.array(mid[0]), np.array(mid[1]), p) for p in PORTS]
        ports = [q.ports for q in probe if any(e.check(q) is None for e in lib.estimators_for(cell))]
        rows.append(
            {
                "cell": cell,
                "sources": ",".join(e.source for e in lib.estimators_for(cell)),
                "nodes_nm": ",".join(f"{n:g}" for n in f.nodes),
                "data_range": f"{c0:g}-{c1:g} KB x {w0:g}-{w1:g} bit",
                "ports": ",".join(ports),
                "description": desc,
            }
        )
    return rows


def cmd_show(args) -> int:
    from rfmodel.tech.array import default_library

    lib = default_library()
    if args.validation or args.fit:
        from rfmodel.tech.validate import fit_errors

        modes = ("in-sample",) if args.fit else ("in-sample", "loco", "5-fold")
        errs = fit_errors(lib, modes=modes)
        if args.json:
            out = {"fit_errors": errs}
            if args.validation:
                from rfmodel.tech.papers import all_tables

                out["paper_tables"] = all_tables(lib)
            print(json.dumps(out, default=str))
            return 0
        print("Fit error (relative, median / max) against the reference grids")
        _print_table(
            [
                {
                    "technology": e["technology"],
                    "metric": e["metric"],
                    "mode": e["mode"],
                    "median_%": round(100 * e["median"], 1),
                    "max_%": round(100 * e["max"], 1),
                    "rows": e["n"],
                }
                for e in errs
            ]
        )
        if args.validation:
            from rfmodel.tech.papers import all_tables

            print("\nPapers' tables as ratios (rel_err = model / paper - 1)")
            _print_table(
                [
                    {
                        "table": r["table"],
                        "item": r["item"],
                        "paper": r["paper"],
                        "model": round(r["model"], 4),
                        "rel_err_%": round(100 * r["rel_err"], 1),
                    }
                    for r in all_tables(lib)
                ]
            )
        return 0
    rows = cells_table(lib)
    if args.json:
        print(json.dumps({"cells": rows}))
    else:
        _print_table(rows)
        print(
            "\nrows: CACTI 7 grid and NVSim grid shipped in rfmodel/data/tech; query one configuration with "
            "'rfmodel tech query'"
        )
    return 0


# --------------------------------------------------------------------------- query
def cmd_query(args) -> int:
    from rfmodel.tech.array import TechExtrapolationWarning, TechLibrary, default_library

    node, cap, width, banks, clock = (
        _option(args, f) for f in ("--node", "--capacity-kb", "--width-bits", "--banks", "--clock-mhz")
    )
    lib = TechLibrary(args.data) if args.data else default_library()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TechExtrapolationWarning)
        cost = lib.array_cost(
            args.cell,
            node,
            cap,
            width,
            ports=args.ports,
            banks=banks,
            periph=args.periph,
            source=args.source,
            out_of_range="extrapolate" if args.extrapolate else "error",
            temperature_k=_option(args, "--temperature"),
        )
    for w in caught:
        print(f"rfmodel: warning: {w.message}", file=sys.stderr)
    d = cost.as_dict(clock)
    if args.json:
        print(json.dumps(d))
        return 0
    skip = {"provenance", "notes"}
    width_key = max(len(k) for k in d)
    for k, v in d.items():
        if k not in skip:
            print(f"{k.ljust(width_key)}  {_fmt(v)}")
    print("\nprovenance:")
    for k, v in d["provenance"].items():
        print(f"  {k}: {v}")
    for n in d["notes"]:
        print(f"note: {n}")
    return 0


# --------------------------------------------------------------------------- import
def cmd_import(args) -> int:
    from rfmodel.io import write_text
    from rfmodel.tech.importers import import_files, rows_to_csv

    tool = args.tool
    if tool not in ("cacti", "nvsim"):
        raise UnknownNameError("tool to import from", tool, ("cacti", "nvsim"))
    if args.out and Path(args.out).suffix.lower() != ".csv":  # the rows are CSV text whatever the name
        raise RfmodelError(f"--out {args.out}: the imported rows are CSV; name a file ending in .csv")
    if tool == "cacti":
        opts = {
            "cell_type": args.cell_type,
            "periph_type": args.periph_type,
            "temperature_k": _option(args, "--temperature"),
        }
        for flag in ("node", "cell"):
            if getattr(args, flag) is not None:
                raise RfmodelError(f"--{flag} applies to 'import nvsim' only (CACTI prints it in its report)")
    else:
        opts = {
            "node_nm": _option(args, "--node"),
            "temperature_k": _option(args, "--temperature") or 350.0,
            "cell": args.cell,
        }
        for flag in ("cell_type", "periph_type"):
            if getattr(args, flag) is not None:
                raise RfmodelError(f"--{flag.replace('_', '-')} applies to 'import cacti' only")
    rows = import_files(tool, args.files, **opts)
    text = rows_to_csv(rows, tool, args.files)
    if args.out:
        write_text(args.out, text)
        print(f"wrote {len(rows)} row(s) to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


# --------------------------------------------------------------------------- parser
def register(subparsers) -> None:
    """Add the ``tech`` subcommand (show, query, import) to the main CLI's subparsers."""
    t = subparsers.add_parser(
        "tech", help="technology tables: show, query the array model, import CACTI/NVSim"
    )
    tsub = t.add_subparsers(dest="tcommand", metavar="SUBCOMMAND")

    s = tsub.add_parser("show", help="the cell technologies and their data (or fit errors)")
    s.add_argument("--fit", action="store_true", help="in-sample fit error per technology and metric")
    s.add_argument(
        "--validation", action="store_true", help="fit errors in and out of sample, papers' tables"
    )
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_show)

    q = tsub.add_parser("query", help="costs of one bank configuration")
    q.add_argument("--cell", required=True, help="sram-hp, sram-lstp, sram-lop, tfet, dwm, stt-ram, ...")
    _add_numeric(q, "--node", "process node in nm (22-90 for SRAM)", required=True, metavar="NM")
    _add_numeric(q, "--capacity-kb", "capacity of one bank", required=True, metavar="KB")
    _add_numeric(q, "--width-bits", "bits per access (multiple of 32)", default="1024", metavar="BITS")
    q.add_argument("--ports", default="1rw", help="1rw | 1r1w | 2r1w (default 1rw)")
    _add_numeric(q, "--banks", "number of banks for the totals (default 1)", default="1")
    _add_numeric(q, "--clock-mhz", "also give read/write cycles at this clock", default=None, metavar="MHZ")
    q.add_argument("--periph", default=None, help="SRAM periphery device type hp | lstp | lop")
    q.add_argument("--source", default=None, help="force one estimator: cacti | nvsim | relaxed | paper")
    _add_numeric(q, "--temperature", "temperature of the data to use (350)", default="350", metavar="K")
    q.add_argument("--extrapolate", action="store_true", help="extrapolate outside the data (with a warning)")
    q.add_argument(
        "--data", action="append", metavar="FILE.csv", help="extra rows from 'tech import' (repeatable)"
    )
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q.set_defaults(func=cmd_query)

    i = tsub.add_parser("import", help="parse CACTI 7 / NVSim output files into table rows (CSV)")
    i.add_argument("tool", help="cacti | nvsim")
    i.add_argument("files", nargs="+", metavar="FILE")
    i.add_argument("--out", metavar="FILE.csv", help="write the rows here (default: stdout)")
    _add_numeric(i, "--node", "NVSim: process node (not in its output)", default=None, metavar="NM")
    _add_numeric(i, "--temperature", "temperature if the output lacks it", default=None, metavar="K")
    i.add_argument("--cell", default=None, help="NVSim: cell label for the rows (default from the cell area)")
    i.add_argument("--cell-type", default=None, help="CACTI: data-array cell type if the output lacks it")
    i.add_argument("--periph-type", default=None, help="CACTI: peripheral type if the output lacks it")
    i.set_defaults(func=cmd_import)

    t.set_defaults(func=lambda a: (t.print_help(), 0)[1])
