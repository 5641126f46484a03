"""The error of the analytic engine as a user meets it: ``rfmodel.evaluate`` with its defaults.

For every design with both engines, on the built-in suite and the synthetic presets (the calibration's
sweep uses 15 of the built-in kernels at 16 warps; the synthetic presets and six of the built-in kernels are
outside it), the default call of each engine (``method="analytic"``: the profile of the first warps, the
calibrated coefficients; ``method="simulate"``: the SM's whole share of the grid) on one GPU, and the
analytic IPC's error against the simulator's: mean absolute percentage error per design, its 90th
percentile and worst case, over the workloads inside and outside the calibration sweep.  Evaluations are
kept in ``OUT/runs.jsonl`` (resumable); the report folder has ``OUT/report.md``, a figure, ``OUT/runs.csv``
and ``OUT/runs.nc``; ``--docs`` writes the table into docs/validation.md.

    rfmodel study default-path --jobs 2 --docs     # or: python studies/default_path.py --jobs 2 --docs
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rfmodel.designs.base import design_names, get_design
from rfmodel.io import read_text
from rfmodel.studies.common import (
    Evaluations,
    check_inputs,
    command_line,
    fmt,
    publish,
    quick_help,
    study_parser,
)
from rfmodel.studies.report import Report, progress
from rfmodel.workload.suite import default_workloads, synthetic_names

MARK = "<!-- default-path {gpu}:{end} -->"
SECTION = "## The analytic engine through its default call"


def calibration_workloads() -> set:
    """The workloads of the calibration's default sweep (``calib/report.json``)."""
    import json

    try:
        return set(json.loads(read_text("calib/report.json"))["sweep"]["workloads"])
    except Exception:  # no report: every workload counts as outside
        return set()


#: ``--quick``: two workloads
QUICK_WORKLOADS = ("saxpy", "reduce_sum")


def build_parser(prog: str):
    quick = quick_help(QUICK_WORKLOADS)
    gpu = ("fermi-gtx480", "the CLI's default GPU")
    ap = study_parser(prog, __doc__, out="studies/out/default_path", jobs=2, quick=quick, gpu=gpu)
    ap.add_argument("--designs", nargs="*", help="designs (default: every one with both engines)")
    ap.add_argument("--workloads", nargs="*", help="workloads (default: built-in suite + synthetic presets)")
    ap.add_argument("--exclude", nargs="*", default=[], help="workloads left out of the default list")
    return ap


def run_study(a, argv, *, prog: str, study: str = "default-path") -> int:
    if a.quick and not a.workloads:
        a.workloads = list(QUICK_WORKLOADS)
    for d in a.designs or ():
        get_design(d)  # an unknown design: its one-line error
    designs = a.designs or [d for d in design_names() if get_design(d).supports_simulate]
    wls = [w for w in a.workloads or [*default_workloads(), *synthetic_names()] if w not in a.exclude]
    check_inputs(wls, a.gpu)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ev = Evaluations(out / "runs.jsonl", a.jobs)
    pts = [(d, w, a.gpu, m, {}) for m in ("simulate", "analytic") for d in designs for w in wls]
    progress(study, f"{len(pts)} evaluations (2 engines x {len(designs)} designs x {len(wls)} workloads)")
    ev.ensure(pts)
    inside = calibration_workloads()
    rows = []
    for d in designs:
        errs = {"in": [], "out": []}
        for w in wls:
            s = ev.get(d, w, a.gpu, "simulate", {})["ipc"]
            m = ev.get(d, w, a.gpu, "analytic", {})["ipc"]
            if s and m is not None:
                errs["in" if w in inside else "out"].append(abs(m / s - 1))
        both = errs["in"] + errs["out"]
        rows.append(
            (
                d,
                len(both),
                np.mean(both),
                np.percentile(both, 90),
                np.max(both),
                np.mean(errs["in"]) if errs["in"] else np.nan,
                np.mean(errs["out"]) if errs["out"] else np.nan,
            )
        )
    head = (
        "| design | workloads | IPC MAPE | p90 | worst | inside the calibration sweep | outside it |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
    )

    def pc(x):
        return fmt(x, ".1f", " %", 100)

    body = "".join(
        f"| {d} | {n} | {pc(mape)} | {pc(p90)} | {pc(worst)} | {pc(i)} | {pc(o)} |\n"
        for d, n, mape, p90, worst, i, o in rows
    )
    n_in = len([w for w in wls if w in inside])
    cmd = command_line(prog, argv)
    note = (
        f"GPU `{a.gpu}`, {len(wls)} workloads ({n_in} inside the calibration sweep's workload list, "
        f"{len(wls) - n_in} outside it: {', '.join(w for w in wls if w not in inside)}); each engine's "
        f"default call, the analytic IPC against the simulator's. Produced by `{cmd}`.\n"
    )
    table = head + body
    publish(note + "\n" + table, a, mark=MARK, section=SECTION, title=f"The default path on `{a.gpu}`")
    progress(study, "figures and data")
    rep = Report(out, study, cmd, title=f"The analytic engine through its default call on `{a.gpu}`")
    rep.describe(GPU=a.gpu, designs=designs, workloads=wls)
    rep.bars(
        "error.png",
        "The analytic IPC's mean absolute error against the simulator's, per design",
        [r[0] for r in rows],
        {
            "inside the calibration sweep": [r[5] for r in rows],
            "outside it": [r[6] for r in rows],
            "all": [r[2] for r in rows],
        },
        ylabel="IPC MAPE",
        ref=None,
        mean=None,
    )
    rep.data([{**ev.get(*p), "method": p[3]} for p in pts], ["method", "design", "workload"])
    rep.section("Summary", note + "\n" + table)
    rep.write()
    return 0
