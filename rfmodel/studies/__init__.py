"""The source papers' comparisons reproduced with ``rfmodel``: ``rfmodel study NAME`` and :func:`run`.

Each study simulates (and, where it says so, evaluates analytically) the paper's configurations on the paper's
benchmarks (``--suite papers``, the default) or the built-in workloads, keeps every run in ``OUT/runs.jsonl``
(an interrupted study resumes, a rerun only formats), and writes a report folder: ``report.md`` (what was run,
the claim table with the paper's figure beside ours and a verdict, the summary tables), PNG figures, and every
run's data as ``runs.csv`` and ``runs.nc`` (one xarray Dataset). With ``--docs`` its tables also go into
``docs/validation.md``.

The registry below is read without importing the studies (they load the models): ``rfmodel --help`` stays
fast.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

from rfmodel.errors import RfmodelError

LTRF = (
    "Enabling High-Capacity, Latency-Tolerant, and Highly-Concurrent GPU Register Files via "
    "Software/Hardware Cooperation"
)
MALEKEH = "Malekeh: Reducing Register File Energy by Caching Operands"


@dataclasses.dataclass(frozen=True)
class Study:
    """One study: its module under ``rfmodel.studies``, the papers it reproduces (titles), what it shows,
    and option defaults that differ from the module's (a configuration of a shared study)."""

    module: str
    papers: tuple[str, ...]
    what: str
    defaults: tuple[tuple[str, object], ...] = ()


STUDIES: dict[str, Study] = {
    "ltrf": Study(
        "ltrf_capacity",
        (LTRF,),
        "Table 2's larger, slower main RFs: IPC of BL, Ideal, RFC, LTRF, LTRFconf; area, power",
    ),
    "caching": Study(
        "caching_designs",
        (LTRF, MALEKEH),
        "the register-caching designs on the LTRF paper's SM: IPC against main-RF latency, "
        "tolerable latency, hit rates",
    ),
    "malekeh": Study(
        "caching_designs",
        (MALEKEH,),
        "the caching study on Malekeh's configuration: turing-rtx2060, baseline, Malekeh, BOW, "
        "the reuse cache",
        (
            ("gpu", "turing-rtx2060"),
            ("designs", ["baseline", "malekeh", "bow", "reuse_cache"]),
            ("out", "studies/out/caching_designs_turing"),
            ("paper", "malekeh"),
        ),
    ),
    "corf": Study(
        "corf",
        ("CORF: Coalescing Operand Register File for GPUs",),
        "packing, first-fit, CORF, CORF++ against the baseline on the paper's 4-bank SM and fermi-gtx480",
    ),
    "stt": Study(
        "stt_rf",
        ("Architecting Energy-efficient STT-RAM Based Register File on GPGPUs via Delta Compression",),
        "STT-RAM banks, write buffers and BDI compression: IPC, RF energy, area",
    ),
    "cerf": Study(
        "cerf",
        (
            "Cache-Emulated Register File: An Integrated On-Chip Memory Architecture for High "
            "Performance GPGPUs",
        ),
        "the integrated register file and L1D against separate and unified memories",
    ),
    "claims": Study(
        "claims",
        (),
        "every claim ID of the five papers in one table (studies/claims.csv), gathered from the "
        "paper studies' report folders",
    ),
    "default-path": Study(
        "default_path",
        (),
        "the analytic engine's IPC error against the simulator through each engine's "
        "default call (the tool itself, no paper)",
    ),
}


def names() -> list[str]:
    return list(STUDIES)


def describe(name: str) -> str:
    """One line of ``rfmodel study --help``: the papers' titles (or what it checks)."""
    s = STUDIES[name]
    return "; ".join(f'"{t}"' for t in s.papers) if s.papers else s.what


def get(name: str) -> Study:
    if name not in STUDIES:
        raise RfmodelError(f"unknown study '{name}' (choose from {', '.join(STUDIES)})")
    return STUDIES[name]


def module(name: str):
    return importlib.import_module(f"rfmodel.studies.{get(name).module}")


def parser(name: str, prog: str | None = None):
    """The study's argument parser (its own options, with the registry's defaults)."""
    import re

    s = get(name)
    p = module(name).build_parser(prog or f"rfmodel study {name}")
    if s.defaults:
        defaults = dict(s.defaults)
        p.set_defaults(**defaults)
        p.description = f"{p.description} Here: {s.what}."
        for action in p._actions:  # the help states this study's defaults
            if action.dest in defaults and action.help:
                value = defaults[action.dest]
                shown = " ".join(value) if isinstance(value, list) else value
                action.help = re.sub(r"\s*\(default[^)]*\)", "", action.help) + f" (default: {shown})"
    return p


def main(name: str, argv: list[str], prog: str | None = None) -> int:
    """Run study ``name`` with its command-line options ``argv`` (what ``rfmodel study NAME ARGS`` does);
    a bad option is an :class:`~rfmodel.errors.RfmodelError`."""
    prog = prog or f"rfmodel study {name}"
    args = parser(name, prog).parse_args(argv)
    return module(name).run_study(args, argv, prog=prog, study=name)


def launch(name: str, script: str) -> int:
    """What ``python studies/SCRIPT`` runs: the study with ``sys.argv``'s options, an error one line on
    stderr and exit status 2."""
    import sys

    from rfmodel.errors import error_line

    try:
        return main(name, sys.argv[1:], prog=f"python studies/{script}")
    except RfmodelError as e:
        print(error_line(e), file=sys.stderr)
        return 2


def run(
    name: str, *, quick: bool = False, out: str | Path | None = None, jobs: int | None = None, **options
) -> Path:
    """Run study ``name`` as ``rfmodel study NAME`` does and return its report folder.  ``options`` are the
    study's own options by their Python names (``max_warps=8``, ``workloads=["saxpy"]``, ``docs=True``);
    ``rfmodel study NAME --help`` lists them.

    >>> rfmodel.studies.run("corf", quick=True, out="corf-report")  # doctest: +SKIP
    """
    argv: list[str] = []
    for key, value in {"quick": quick, "out": out, "jobs": jobs, **options}.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, list | tuple):
            argv += [flag, *map(str, value)]
        else:
            argv += [flag, str(value)]
    p = parser(name)
    args = p.parse_args(argv)
    rc = module(name).run_study(args, argv, prog=f"rfmodel study {name}", study=name)
    if rc:
        raise RfmodelError(f"study '{name}' produced no result (status {rc})")
    return Path(args.out)
