"""Workload classes measured, not declared: each paper's own definition, on the paper's kind of GPU, in the
reference cycle simulator (``rfmodel workload classes``).

* **register-sensitive** ("LTRF: Enabling High-Capacity Register Files for GPUs via Hardware/Software
  Cooperative Register Prefetching": a workload whose thread-level parallelism the register file limits,
  so that its IPC grows with a larger one): the simulator's IPC on ``maxwell-ltrf`` with an 8x register
  file (``regs_per_sm`` x 8) at least :data:`SENSITIVE_GAIN` above the 1x IPC.
* **cache-sensitive** (the Cache-Emulated Register File paper's Table II: IPC with a larger L1D): the
  simulator's IPC on ``fermi-gtx480`` (the paper's Fermi-like SM) with a 64 KB L1D at least
  :data:`SENSITIVE_GAIN` above the 16 KB one.
* **integer-heavy** / **fp-heavy** ("CORF: Coalescing Operand Register File for GPUs": integer-intensive
  workloads have narrow values, floating-point ones fill all 32 bits): the share of register operations
  narrower than 4 bytes on the executed trace (:func:`rfmodel.workload.values.value_stats`) at least
  :data:`NARROW_SHARE`, else fp-heavy.

Each test simulates the first :data:`WAVES` x (the GPU's warp limit) warps' CTAs of the SM's share of the
grid: enough CTAs for the larger register file or cache to fill the SM twice over (a share smaller than
that is simulated whole), at a cost that does not grow with the paper-size grids.

The measured figures (not only the classes) are kept in ``rfmodel/data/workload_classes.json`` with the
thresholds and the rfmodel version that measured them; ``rfmodel workload list --class NAME`` selects by
them, and ``rfmodel workload classes --update`` measures again.
"""

from __future__ import annotations

import json
import math
from importlib import resources

from rfmodel.errors import RfmodelError, UnknownNameError

#: the smallest IPC gain (as a fraction) that makes a workload register- or cache-sensitive
SENSITIVE_GAIN = 0.05
#: the smallest share of narrow (< 4-byte) register operations that makes a workload integer-heavy
NARROW_SHARE = 0.5
#: register-file multiple and GPU of the register test; L1D sizes (KB) and GPU of the cache test
RF_MULTIPLE, RF_GPU = 8, "maxwell-ltrf"
L1D_SMALL_KB, L1D_LARGE_KB, L1D_GPU = 16, 64, "fermi-gtx480"
#: the measured classes, in the order they are tested
CLASSES = ("register-sensitive", "cache-sensitive", "integer-heavy", "fp-heavy")
#: how many times the SM's warp limit the simulated CTAs hold
WAVES = 2
DATA_FILE = "workload_classes.json"


def _ipc(ds) -> list[float]:
    return [float(v) for v in ds["ipc"].values.ravel()]


def measure(name: str, *, arch: str = "sm_80") -> dict:
    """The figures and classes of one workload: ``register_gain`` and ``cache_gain`` (IPC ratio - 1; NaN
    where the kernel cannot run on the test's SM at all),
    ``narrow_share`` (NaN where the trace has no value attributes: an expanded trace), ``classes``."""
    from rfmodel.evaluate import evaluate, resolve_gpu
    from rfmodel.workload.suite import load_workload
    from rfmodel.workload.values import value_stats

    sm = resolve_gpu(RF_GPU)
    regs = int(sm.regs_per_sm)
    ds = evaluate(
        "baseline",
        name,
        sm,
        method="simulate",
        arch=arch,
        max_warps=WAVES * sm.warps_per_sm,
        params={"regs_per_sm": [regs, regs * RF_MULTIPLE]},
    )
    small, large = _ipc(ds)
    register_gain = large / small - 1 if small > 0 else math.nan
    base = resolve_gpu(L1D_GPU)
    ipc = []
    try:
        for kb in (L1D_SMALL_KB, L1D_LARGE_KB):
            sm_kb = base.replace(l1d=base.l1d.replace(size_bytes=kb * 1024))
            warps = WAVES * base.warps_per_sm
            ds = evaluate("baseline", name, sm_kb, method="simulate", arch=arch, max_warps=warps)
            ipc.append(_ipc(ds)[0])
        cache_gain = ipc[1] / ipc[0] - 1 if ipc[0] > 0 else math.nan
    except RfmodelError as e:  # the kernel does not fit the cache test's SM (too many registers ...)
        if "cannot run on" not in str(e):
            raise
        cache_gain = math.nan
    wl = load_workload(name, arch=arch, num_sms=base.num_sms, max_warps=WAVES * base.warps_per_sm)
    narrow = value_stats(wl.trace)["narrow_operations"]
    classes = []
    if register_gain >= SENSITIVE_GAIN:
        classes.append("register-sensitive")
    if cache_gain >= SENSITIVE_GAIN:  # (NaN: not measured, no class)
        classes.append("cache-sensitive")
    if narrow == narrow:  # known
        classes.append("integer-heavy" if narrow >= NARROW_SHARE else "fp-heavy")
    return {
        "workload": name,
        "register_gain": round(register_gain, 4),
        "cache_gain": round(cache_gain, 4),
        "narrow_share": narrow,
        "trace_source": wl.attrs.get("trace_source", ""),
        "classes": classes,
        "simulator": simulator_hash(),
    }


def thresholds() -> dict:
    return {
        "waves": WAVES,
        "sensitive_gain": SENSITIVE_GAIN,
        "narrow_share": NARROW_SHARE,
        "rf_multiple": RF_MULTIPLE,
        "rf_gpu": RF_GPU,
        "l1d_kb": [L1D_SMALL_KB, L1D_LARGE_KB],
        "l1d_gpu": L1D_GPU,
    }


def load_classes(path=None) -> dict:
    """The measurements kept in ``path`` (default: the shipped ones): ``{"thresholds": ...,
    "rfmodel_version": ..., "rows": {name: row}}`` (no rows where none were measured)."""
    from pathlib import Path

    from rfmodel.io import read_text

    if path is None:
        try:
            text = resources.files("rfmodel.data").joinpath(DATA_FILE).read_text()
        except OSError:
            return {"rows": {}}
    elif not Path(path).exists():
        return {"rows": {}}
    else:
        text = read_text(path, "classes file")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise RfmodelError(f"{path or DATA_FILE}: not a classes file (malformed JSON)") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rows", {}), dict):
        raise RfmodelError(f"{path or DATA_FILE}: not a classes file (no table of rows)")
    return {"rows": {}, **doc}


def with_class(names, cls: str) -> list[str]:
    """The workloads of ``names`` measured to be of class ``cls``; one error for a class that is not
    measured or a workload without measurements."""
    if cls not in CLASSES:
        raise UnknownNameError("workload class", cls, CLASSES)
    rows = load_classes()["rows"]
    missing = [n for n in names if n not in rows]
    if missing:
        more = " ..." if len(missing) > 5 else ""
        raise RfmodelError(
            f"no measured classes for {', '.join(missing[:5])}{more} (rfmodel workload "
            "classes --update measures them)"
        )
    return [n for n in names if cls in rows[n]["classes"]]


def save_classes(rows: dict, path=None) -> None:
    """Write the measurements (``rows`` by workload name) with the thresholds and the version that
    measured them, to ``path`` (default: the package's data file)."""
    from pathlib import Path

    from rfmodel.io import write_text
    from rfmodel.version import __version__

    where = Path(path) if path is not None else Path(__file__).resolve().parent / "data" / DATA_FILE
    doc = {
        "measured_by": "rfmodel workload classes --update",
        "rfmodel_version": __version__,
        "thresholds": thresholds(),
        "rows": {k: rows[k] for k in sorted(rows)},
    }
    write_text(where, json.dumps(doc, indent=1) + "\n")


def simulator_hash() -> str:
    """The hash of the sources a simulation's result depends on (``rfmodel.cache.SIM_SOURCES``): kept with
    the measurements, so that measurements of another simulator are known for what they are."""
    from rfmodel.cache import SIM_SOURCES, source_hash

    return source_hash(*SIM_SOURCES)


def stale(doc: dict) -> str:
    """Why some measurements of ``doc`` may not be this simulator's (``""`` when all are): each row keeps
    the simulator sources that measured it (``simulator``); rows of others, or of none said, are named."""
    now = simulator_hash()
    old = sorted(n for n, r in doc.get("rows", {}).items() if r.get("simulator") != now)
    if not old:
        return ""
    more = " ..." if len(old) > 3 else ""
    return (
        f"{len(old)} of {len(doc['rows'])} kernels' classes ({', '.join(old[:3])}{more}) were measured "
        f"by other simulator sources than these ({now})"
    )


#: the markers of the generated table in a documentation file
DOC_BEGIN = "<!-- BEGIN GENERATED: rfmodel.classes.classes_table_markdown -->"
DOC_END = "<!-- END GENERATED -->"


def update_docs(path, doc: dict | None = None) -> bool:
    """Replace the generated table of the papers' kernels' classes between its markers in ``path``; True
    when the file changed."""
    from pathlib import Path

    from rfmodel.io import read_text, write_text

    text = read_text(path, "Markdown file")
    start = text.find(DOC_BEGIN)
    end = text.find(DOC_END, start)
    if start < 0 or end < 0:
        raise RfmodelError(f"{path}: no generated-table markers ({DOC_BEGIN} ... {DOC_END})")
    new = text[: start + len(DOC_BEGIN)] + "\n" + classes_table_markdown(doc) + text[end:]
    if new != text:
        write_text(Path(path), new)
    return new != text


def classes_table_markdown(doc: dict | None = None, suite: str = "papers") -> str:
    """The measured classes of ``suite``'s kernels beside the class their header states (the paper's
    classification where it gives one), with the mean gains over each measured class."""
    from rfmodel.workload.suite import manifest, suite_names

    doc = load_classes() if doc is None else doc
    rows = doc.get("rows", {})
    names = [n for n in suite_names(suite) if n in rows]
    head = ["kernel", "IPC gain, 8x registers", "IPC gain, 64 KB L1D", "narrow share", "measured", "declared"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for n in names:
        r = rows[n]
        declared = [c for c in manifest()["kernels"][n].get("category", []) if c in CLASSES]
        share = "-" if r["narrow_share"] != r["narrow_share"] else f"{r['narrow_share']:.2f}"
        gains = " | ".join(
            "-" if r[k] != r[k] else f"{100 * r[k]:+.1f} %" for k in ("register_gain", "cache_gain")
        )
        out.append(f"| `{n}` | {gains} | {share} | {', '.join(r['classes'])} | {', '.join(declared)} |")
    lines = ["\n".join(out), ""]
    for cls, key in (("register-sensitive", "register_gain"), ("cache-sensitive", "cache_gain")):
        members = [rows[n][key] for n in names if cls in rows[n]["classes"]]
        declared = [rows[n][key] for n in names if cls in manifest()["kernels"][n].get("category", [])]
        declared = [v for v in declared if v == v]  # measured
        mean = f"{100 * sum(members) / len(members):+.1f} %" if members else "-"
        dmean = f"{100 * sum(declared) / len(declared):+.1f} %" if declared else "-"
        lines.append(
            f"- {cls}: {len(members)} of {len(names)} measured so (mean {key.replace('_', ' ')} "
            f"{mean}); {len(declared)} declared so (their mean {dmean})."
        )
    t = doc.get("thresholds", thresholds())
    version = doc.get("rfmodel_version", "?")
    sims = sorted({str(rows[n].get("simulator")) for n in names})
    sim = f", simulator sources {', '.join(sims)}" if sims else ""
    lines.append(
        f"\nMeasured by `rfmodel workload classes --update` (rfmodel {version}{sim}): the first "
        f"{t['waves']} x warp-limit warps' CTAs of the SM's share; a class needs a gain of at least "
        f"{100 * t['sensitive_gain']:.0f} %, integer-heavy a narrow share of at least "
        f"{t['narrow_share']}."
    )
    return "\n".join(lines) + "\n"
