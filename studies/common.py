"""Helpers the studies share: a resumable cache of evaluations, averages, number formatting, and writing a
generated table between markers of ``docs/validation.md``."""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np

import rfmodel
from rfmodel.cache import source_hash
from rfmodel.io import write_text
from rfmodel.runner import ResultLog, make_runner

#: the package's source, in every evaluation's key; a simulation does not depend on the analytic engine's
#: calibration file, so recalibrating does not redo the studies' simulations
SOURCE = source_hash()
SIM_SOURCE = source_hash(exclude=("data/calibration",))

#: the scalar results a study keeps of one evaluation (those the design reports)
SCALARS = (
    "ipc", "cycles", "warps", "rf_reads", "rf_writes", "bank_conflict_stall_cycles", "slow_bank_wait_cycles",
    "rf_cache_hit_rate", "main_rf_reads", "main_rf_writes", "prefetches", "prefetch_bank_conflicts",
    "conflict_free_prefetch_fraction", "main_rf_read_cycles", "main_rf_write_cycles", "energy_pj_total",
    "power_mw", "area_mm2_total", "l1d_hit_rate",
)  # fmt: skip


def _evaluate_job(point: tuple) -> dict:
    return evaluate_point(*point)


def evaluate_point(
    design: str, workload: str, gpu: str, method: str, params: dict, trace_source: str = "auto"
) -> dict:
    """One evaluation of ``design`` on ``workload``: its scalar results (:data:`SCALARS`, None when the
    design does not report one or it is not a number) and the seconds it took.  ``trace_source``
    ``"expand"`` / ``"execute"`` makes a built-in kernel's trace that way (the workload prefix)."""
    t0 = time.perf_counter()
    ref = workload if trace_source == "auto" else f"{trace_source}:{workload}"
    # a workload that does not fit the point gives NaN (None) results instead of stopping the study
    ds = rfmodel.evaluate(design, ref, gpu, method=method, params=params, on_no_fit="nan")
    out = {"design": design, "workload": workload, "gpu": gpu, "method": method, "params": params}
    if trace_source != "auto":
        out["trace_source"] = trace_source
    for m in SCALARS:
        if m in ds:
            v = float(np.asarray(ds[m].values).ravel()[0])
            out[m] = None if math.isnan(v) else v
    out["seconds"] = time.perf_counter() - t0
    return out


class Evaluations:
    """Evaluations run in ``jobs`` worker processes and kept one JSON line each in ``path``, keyed by design,
    workload, GPU, engine, parameters and a hash of rfmodel's source: a rerun only does what is missing, and
    an edit of the package redoes everything."""

    def __init__(self, path: Path, jobs: int = 2, runner=None, job=None):
        self.path = path
        self.jobs = jobs
        self.runner = runner if runner is not None else make_runner(jobs)
        self.log = ResultLog(path)
        #: the function a point (a tuple) is run with; a study that keeps more than :data:`SCALARS` gives its
        #: own (a module-level function, for the worker processes) and its own :meth:`key`
        self.job = job if job is not None else _evaluate_job

    @property
    def done(self) -> dict[str, dict]:
        return self.log.done

    @staticmethod
    def key(design, workload, gpu, method, params, trace_source="auto") -> str:
        source = SIM_SOURCE if method == "simulate" else SOURCE
        extra = [] if trace_source == "auto" else [trace_source]
        return json.dumps([design, workload, gpu, method, params, source, *extra], sort_keys=True)

    def get(self, design, workload, gpu, method, params, trace_source="auto") -> dict:
        return self.log[self.key(design, workload, gpu, method, params, trace_source)]

    def ensure(self, points) -> None:
        """Run the ``(design, workload, gpu, method, params[, trace_source])`` points not yet done, appending
        each result as it finishes, with progress on stderr."""
        todo = {self.key(*p): p for p in points}
        t0, n = time.time(), 0
        total = sum(k not in self.log for k in todo)
        for _, r in self.log.run(self.runner, self.job, todo):
            n += 1
            what = r.get("design", r.get("label", ""))
            print(f"  [{n}/{total}] {r.get('method', '')} {what} {r['workload']} {r.get('params', '')} "
                  f"ipc={fmt(r.get('ipc'), '.3f')} ({time.time() - t0:.0f} s)", file=sys.stderr)  # fmt: skip


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return float(np.exp(np.mean(np.log(xs)))) if xs else float("nan")


def mean(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return float(np.mean(xs)) if xs else float("nan")


def median(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return float(np.median(xs)) if xs else float("nan")


def fmt(x, spec=".2f", suffix="", scale=1.0):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * scale:{spec}}{suffix}"


def pct(x):
    """A ratio as a signed percentage change: 1.32 -> '+32 %'."""
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{(x - 1) * 100:+.0f} %"


def command_line(script: str, argv) -> str:
    """The command that produced a study's table (for its note)."""
    return ("python studies/" + script + " " + " ".join(argv if argv is not None else sys.argv[1:])).strip()


def publish(text: str, out: Path, *, docs: bool, mark: str, gpu: str, section: str, title: str) -> None:
    """A study's result: printed, kept in ``OUT/summary.md`` and, with ``docs``, written into
    docs/validation.md between the study's markers (``mark`` formatted with ``gpu`` and begin/end)."""
    write_text(out / "summary.md", text)
    print(text)
    if docs:
        begin, end = mark.format(gpu=gpu, end="begin"), mark.format(gpu=gpu, end="end")
        write_marked(Path("docs/validation.md"), begin, end, text, section, title)


def write_marked(doc: Path, begin: str, end: str, block: str, section: str, title: str) -> None:
    """Put ``block`` between the ``begin`` and ``end`` markers of ``doc``; without them, as a new subsection
    ``title`` at the end of ``section`` (a ``## `` heading, created at the end of the file if missing)."""
    text = doc.read_text()
    block = f"{begin}\n{block}{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        sub = f"### {title}\n\n{block}\n"
        if section in text:
            nxt = text.find("\n## ", text.index(section) + len(section))
            at = len(text) if nxt < 0 else nxt + 1
            text = text[:at].rstrip() + "\n\n" + sub + ("\n" + text[at:] if at < len(text) else "")
        else:
            text = text.rstrip() + f"\n\n{section}\n\n" + sub
    write_text(doc, text)
