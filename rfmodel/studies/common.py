"""Helpers the studies share: their argument parser, a resumable cache of evaluations, averages, number
formatting, verdicts, and writing a generated table between markers of ``docs/validation.md``."""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from rfmodel.cache import source_hash
from rfmodel.designs.mainrf import TIMING_METRICS
from rfmodel.errors import RfmodelError
from rfmodel.evaluate import evaluate
from rfmodel.io import write_text
from rfmodel.limits import MAX_LATENCY_X
from rfmodel.results import SCALAR_METRICS
from rfmodel.runner import ResultLog, make_runner

#: the package data no evaluation depends on: the papers' claims the studies are checked against and the
#: measured workload classes they split their workloads by (read when a report is written)
NOT_EVALUATED = ("data/claims.json", "data/workload_classes.json")
#: the package's source, in every evaluation's key; a simulation does not depend on the analytic engine's
#: calibration file, so recalibrating does not redo the studies' simulations
SOURCE = source_hash(exclude=NOT_EVALUATED)
SIM_SOURCE = source_hash(exclude=("data/calibration", *NOT_EVALUATED))

#: what a design with a register-file cache (or a main RF behind one) reports of it
RF_CACHE_SCALARS = (
    "rf_cache_hit_rate",
    "main_rf_reads",
    "main_rf_writes",
    "prefetches",
    "prefetch_bank_conflicts",
    "conflict_free_prefetch_fraction",
)
#: the scalar results a study keeps of one evaluation (those the design reports)
SCALARS = (
    *(m for m in SCALAR_METRICS if m != "l1d_hit_rate"),
    "slow_bank_wait_cycles",
    *RF_CACHE_SCALARS,
    *TIMING_METRICS,
    "energy_pj_total",
    "power_mw",
    "area_mm2_total",
    "l1d_hit_rate",
)


#: ``study_parser(gpu=...)`` of the studies on the LTRF paper's SM (its Table 3)
LTRF_GPU = ("maxwell-ltrf", "the LTRF paper's Table 3 SM")


class StudyParser(argparse.ArgumentParser):
    """A study's options: a bad one is an :class:`~rfmodel.errors.RfmodelError` (one line, exit status 2 on
    the command line; an exception from :func:`rfmodel.studies.run`)."""

    def error(self, message):
        raise RfmodelError(f"{message} (see '{self.prog} --help')")

    #: whether ``--out`` names a folder (a study's report folder; the claims table is a file)
    out_folder = False

    def parse_args(self, args=None, namespace=None):
        """The options, with ``--out`` checked before the study runs: a file or folder that can be made
        here (not under a file; a report folder not an existing file either)."""
        from pathlib import Path

        from rfmodel.io import check_writable

        a = super().parse_args(args, namespace)
        out = getattr(a, "out", None)
        if out:
            if self.out_folder and Path(out).exists() and not Path(out).is_dir():
                raise RfmodelError(f"--out {out}: is a file; a study writes a folder")
            check_writable(out)
        return a


def study_parser(
    prog: str,
    doc: str,
    *,
    out: str,
    jobs: int,
    quick: str,
    gpu: tuple[str, str] | None = None,
    paper: str | None = None,
) -> StudyParser:
    """The parser every study starts from: its docstring's first line, ``--quick``, ``--out``, ``--jobs``
    and ``--docs``; with ``gpu = (preset, which)`` then ``--gpu`` (default ``preset``, described as
    ``which``), and with ``paper`` then ``--workloads`` and ``--suite`` (:func:`add_workload_options`)."""
    ap = StudyParser(prog=prog, description=doc.split("\n")[0])
    ap.out_folder = True
    ap.add_argument("--quick", action="store_true", help=quick)
    ap.add_argument(
        "--out", default=out, metavar="DIR", help=f"the report folder and run log (default: {out})"
    )
    ap.add_argument(
        "--jobs", type=positive_int, default=jobs, metavar="N", help=f"worker processes (default: {jobs})"
    )
    ap.add_argument("--docs", action="store_true", help="write the tables into docs/validation.md")
    if gpu is not None:
        preset, which = gpu
        ap.add_argument("--gpu", default=preset, help=f"GPU preset (default: {which})")
    if paper is not None:
        add_workload_options(ap, paper)
    return ap


def quick_help(workloads, *, kind: str = "workloads", warps: int | None = None, then: str = "") -> str:
    """``--quick``'s help: the ``workloads`` it runs (``kind``: what to call them), at ``warps`` warps where
    it caps them, and ``then``."""
    if warps is None:
        at, unless = "", "--workloads says otherwise"
    else:
        at, unless = f" at {warps} warps", "--workloads / --max-warps say otherwise"
    return f"{len(workloads)} {kind} ({', '.join(workloads)}){at} unless {unless}{then}"


def add_workload_options(ap: argparse.ArgumentParser, paper: str) -> None:
    """``--workloads`` and ``--suite``: a full run takes the paper's benchmarks (``--suite papers``, the
    default; :func:`rfmodel.workload.suite.paper_workloads` of ``paper``) or the built-in suite."""
    ap.add_argument("--workloads", nargs="*", help="workloads (default: those of --suite)")
    ap.add_argument(
        "--suite",
        choices=("papers", "builtin"),
        default=None,
        help="a full run's workloads: 'papers', the paper's benchmarks (the kernels of the "
        "papers' suite that its text names, or of the public suites it names: rfmodel workload "
        "list --suite papers), or 'builtin', the built-in suite (default: papers)",
    )
    ap.set_defaults(paper=paper)


def study_workloads(a, quick=()) -> list[str]:
    """The workloads a study runs: ``--workloads``, else with ``--quick`` its ``quick`` subset, else those of
    ``--suite``.  ``--suite`` beside either of the others would be ignored, so it is refused."""
    from rfmodel.workload.suite import default_workloads, paper_workloads

    if a.suite is not None and (a.workloads or a.quick):
        raise RfmodelError(
            f"--suite {a.suite} chooses a full run's workloads, and "
            f"{'--workloads names them' if a.workloads else '--quick runs its own subset'}: "
            "give one of the two"
        )
    if a.workloads:
        return list(a.workloads)
    if a.quick:
        return list(quick)
    return default_workloads() if a.suite == "builtin" else paper_workloads(a.paper)


def measured_classes(workload: str) -> list[str]:
    """A workload's classes as measured (:mod:`rfmodel.classes`, the shipped measurements), else as its
    manifest declares them (a kernel not measured)."""
    from rfmodel.classes import load_classes
    from rfmodel.workload.suite import manifest

    row = load_classes()["rows"].get(workload)
    if row is not None:
        return list(row["classes"])
    return list(manifest()["kernels"].get(workload, {}).get("category", []))


def suite_of(a) -> str:
    """Where a study's workloads come from, in words."""
    if a.workloads or a.quick:
        return "named" if a.workloads else "the quick subset"
    if a.suite == "builtin":
        return "the built-in suite"
    return f"the papers' benchmarks of the {a.paper} paper"


def suite_words(a, workloads) -> str:
    """What a report says of its workloads: how many, and from where."""
    if a.workloads or a.quick:
        return f"{len(workloads)} kernels ({', '.join(workloads)})"
    return f"{len(workloads)} kernels ({suite_of(a)})"


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive integer")
    return v


def number_above(low: float, high: float, what: str):
    """An argparse type: a number above ``low`` and at most ``high`` (``what`` it is, for the error)."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = float("nan")
        if not low < v <= high:
            most = f" and at most {high:g}" if high < float("inf") else ""
            raise argparse.ArgumentTypeError(f"{text!r}: expected {what} above {low:g}{most}")
        return v

    return parse


#: the tolerable-latency rule's IPC loss, the search's upper end and its resolution
loss_share = number_above(0.0, 1.0, "a share of the IPC lost")
above_one = number_above(1.0, float(MAX_LATENCY_X), "a main-RF latency multiple")
positive_float = number_above(0.0, float("inf"), "a number")


def known(kind: str, choices):
    """An argparse type: a name among ``choices`` (checked when parsed, named in the error)."""
    choices = list(choices)

    def parse(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"unknown {kind} {text!r} (choose from {', '.join(choices)})")
        return text

    parse.__name__ = kind
    return parse


def add_names_option(
    ap: argparse.ArgumentParser, flag: str, names, *, kind: str, metavar: str, help: str
) -> None:
    """``flag NAME ...``: some of ``names`` (each checked by :func:`known`, ``kind`` naming them in an
    error), all of them by default."""
    ap.add_argument(flag, nargs="*", default=list(names), type=known(kind, names), metavar=metavar, help=help)


def check_inputs(workloads=(), gpu=None) -> None:
    """Unknown workloads and GPUs as one error before any simulation (a workload's trace is not built)."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.workload.suite import SYNTHETIC_PREFIX, load_kernel, manifest

    kernels = manifest()["kernels"]
    for w in workloads:
        if not (w in kernels or w.startswith(SYNTHETIC_PREFIX)):
            load_kernel(w)  # a file: its error names what is wrong
    if gpu is not None:
        resolve_gpu(gpu)


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
    ds = evaluate(design, ref, gpu, method=method, params=params, on_no_fit="nan")
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

    def __init__(self, path: Path, jobs: int = 2, runner=None, job=None, key=None):
        self.path = path
        self.jobs = jobs
        self.runner = runner if runner is not None else make_runner(jobs)
        self.log = ResultLog(path)
        #: the function a point (a tuple) is run with; a study that keeps more than :data:`SCALARS` gives its
        #: own (a module-level function, for the worker processes) and its own ``key`` (the point's key in
        #: the log, in place of :meth:`key`)
        self.job = job if job is not None else _evaluate_job
        if key is not None:
            self.key = key

    @property
    def done(self) -> dict[str, dict]:
        return self.log.done

    @staticmethod
    def key(design, workload, gpu, method, params, trace_source="auto") -> str:
        source = SIM_SOURCE if method == "simulate" else SOURCE
        extra = [] if trace_source == "auto" else [trace_source]
        return json.dumps([design, workload, gpu, method, params, source, *extra], sort_keys=True)

    def get(self, *point) -> dict:
        """The result of a point done (as :meth:`key` takes it)."""
        return self.log[self.key(*point)]

    def ensure(self, points) -> None:
        """Run the ``(design, workload, gpu, method, params[, trace_source])`` points not yet done, appending
        each result as it finishes, with progress on stderr."""
        todo = {self.key(*p): p for p in points}
        t0, n = time.time(), 0
        total = sum(k not in self.log for k in todo)
        print(f"  {len(todo)} runs: {len(todo) - total} in {self.path.name}, {total} to run", file=sys.stderr)
        for _, r in self.log.run(self.runner, self.job, todo):
            n += 1
            what = r.get("design", r.get("label", r.get("config", "")))
            print(
                f"  [{n}/{total}] {r.get('method', '')} {what} {r['workload']} {r.get('params', '')} "
                f"ipc={fmt(r.get('ipc'), '.3f')} ({time.time() - t0:.0f} s)",
                file=sys.stderr,
            )


def simulated_figures(run, metrics, counts) -> dict:
    """A simulation's figures as a study's run keeps them: each of ``metrics`` (``None`` where the run
    has none or NaN), then ``counts``: those of ``counts`` that the run has."""
    out = {}
    for m in metrics:
        v = run.metrics.get(m)
        out[m] = None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
    out["counts"] = {k: int(run.counts[k]) for k in counts if k in run.counts}
    return out


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


def structure_total(structure, what: str = "capacity_bits") -> float:
    """A design structure's ``what`` (``capacity_bits``, ``area_mm2``) over all its copies, at the largest
    grid value (the studies read the structures of one design point)."""
    return float(np.max(getattr(structure, what)) * np.max(structure.copies))


def pct(x):
    """A ratio as a signed percentage change: 1.32 -> '+32 %'."""
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{(x - 1) * 100:+.0f} %"


def command_line(prog: str, argv) -> str:
    """The command that produced a study's table (for its note): ``prog`` (``rfmodel study corf``,
    ``python studies/corf.py``) and its options."""
    return (prog + " " + " ".join(argv if argv is not None else sys.argv[1:])).strip()


def verdict(ours, paper, *, base: float = 1.0, tol: float = 0.30) -> str:
    """Our change from ``base`` against the paper's: its sign, and its size within ``tol`` relative."""
    if ours is None or paper is None or ours != ours:
        return "n/a"
    if abs(paper - base) < 1e-12:  # the paper's: no change
        near = abs(ours - base) <= 0.02 * max(abs(base), 1.0)
        return "no change, as the paper's (within 2 %)" if near else "a change where the paper has none"
    if (ours - base) * (paper - base) <= 0:
        return "sign differs"
    if abs(ours - paper) <= tol * abs(paper - base):
        return f"same sign, within {tol * 100:.0f} %"
    return "same sign, size differs"


def rises_with(rows, x: str, y: str) -> str:
    """A verdict on "``y`` rises with ``x``" over the workloads: the sign of their rank correlation
    (Spearman's), with it in brackets."""
    pts = [(r.get(x), r.get(y)) for r in rows]
    pts = [(a, b) for a, b in pts if a is not None and b is not None and a == a and b == b]
    if len(pts) < 3:
        return "n/a"
    from scipy.stats import spearmanr

    rho = float(spearmanr([a for a, _ in pts], [b for _, b in pts]).statistic)
    if rho != rho:
        return "n/a"
    return f"{'same ordering' if rho > 0 else 'ordering differs'} (rank correlation {rho:+.2f}, all)"


def publish(text: str, a, *, mark: str, section: str, title: str, gpu: str | None = None) -> None:
    """A study's result: printed, kept in ``OUT/summary.md`` and, with ``--docs``, written into
    docs/validation.md between the study's markers (``mark`` formatted with ``gpu``, by default ``--gpu``,
    and begin/end) with the commit that produced it (:func:`rfmodel.studies.report.commit`).  ``a``: the
    study's options."""
    from rfmodel.studies.report import commit

    write_text(Path(a.out) / "summary.md", text)
    print(text)
    if a.docs:
        gpu = a.gpu if gpu is None else gpu
        begin, end = mark.format(gpu=gpu, end="begin"), mark.format(gpu=gpu, end="end")
        stamped = text.rstrip("\n") + f"\n\nGenerated at {commit()}.\n"
        write_marked(Path("docs/validation.md"), begin, end, stamped, section, title)


def write_marked(doc: Path, begin: str, end: str, block: str, section: str, title: str) -> None:
    """Put ``block`` between the ``begin`` and ``end`` markers of ``doc``; without them, as a new subsection
    ``title`` at the end of ``section`` (a ``## `` heading, created at the end of the file if missing)."""
    text = doc.read_text()
    block = f"{begin}\n{block}{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        sub = f"### {title}\n\n{block}\n"
        if section in text:
            nxt = text.find("\n## ", text.index(section) + len(section))
            at = len(text) if nxt < 0 else nxt + 1
            text = text[:at].rstrip() + "\n\n" + sub + ("\n" + text[at:] if at < len(text) else "")
        else:
            text = text.rstrip() + f"\n\n{section}\n\n" + sub
    write_text(doc, text)


def write_csv(path: Path, rows, fieldnames=None, **kw) -> None:
    """``rows`` (dicts) as a CSV table at ``path``: a column each of ``fieldnames``, by default every key of
    the rows in the order they first appear; ``kw`` goes to :class:`csv.DictWriter`."""
    with csv_file(path) as f:
        wr = csv.DictWriter(f, fieldnames=list(fieldnames or dict.fromkeys(k for r in rows for k in r)), **kw)
        wr.writeheader()
        wr.writerows(rows)


@contextlib.contextmanager
def csv_file(path: Path):
    """A text buffer for a CSV table, written to ``path`` when the block ends (atomically, through
    :func:`rfmodel.io.write_text`: never onto a named pipe or device, never half-written)."""
    from rfmodel.io import write_text

    buf = io.StringIO(newline="")
    yield buf
    write_text(path, buf.getvalue())
