"""``rfmodel bench``: speed figures of the engines, as one JSON object.

Every timed step is measured twice, in wall time and in CPU time (this process's user and system time
plus that of the child processes it waited for, :func:`clock`); the machine may be shared, so CPU time is
the figure to compare (a ``*_per_cpu_s`` rate beside each wall-time ``*_per_s`` one, ``cpu_seconds``
beside ``best_seconds``), and the ``context`` member records the load average before and after, the
revision and the Python.  :func:`compare` puts two runs side by side (``rfmodel bench --compare REV``
runs another git revision's bench in a temporary worktree in the same invocation, and this tree's in a
child process likewise, ``--rounds`` times each, alternately: :func:`bench_revision`).

The ``simulate`` member maps every registered design to
``{"warp_instr_per_s": ..., "warp_instr_per_cpu_s": ..., "workload": ..., "instructions": ...}`` (plus the
GPU, the best times and the repeat count): simulated warp instructions per
second, for the SM's whole share of the workload.
Compilation is excluded: each design first simulates a small slice of the
workload (which compiles the cycle loop, or loads it from numba's cache),
then the full run is timed ``repeat`` times and the fastest counts (in each clock).

The ``analytic`` member: ``{"points_per_s": ..., "speedup_vs_simulate": ...}`` for the
baseline on one large grid (``ANALYTIC_GRID``: bank count x collector units x registers x warps
x issue width x ports, 143,360 design points) of the same workload and GPU.  ``points_per_s``
counts design points per second of the vectorized model call (``Design.analytic`` on a ready
profile: the engine a sweep or an optimizer runs; the profile is built once per workload and is
excluded, as compilation is for the simulator); ``evaluate_points_per_s`` is the whole
``rfmodel.evaluate`` call on a smaller grid (energy and area accounting included), and
``evaluate_sizes`` the same call over five workloads at a 10^3- and a 10^5-point grid each
(``EVALUATE_GRIDS``: unique bank speeds, so no two points share a fixed point), in points (grid points times
workloads) per CPU-second.
``speedup_vs_simulate`` divides ``points_per_s`` by the simulator's design points per second
(one point = one simulation of the workload, the ``simulate`` member's best time for the
baseline).

The ``optimize`` member: evaluations per second of one island of ``rfmodel optimize`` over the default
workloads (:func:`bench_optimize`), and the seconds 10,000 evaluations would take at that rate.

The ``profile`` member: a first analytic answer on a SASS listing no cache has seen against one simulation
of it, in seconds, per kernel (:func:`bench_profile`).

The ``execute`` member: executed warp-instructions per second of the functional executor of SASS over the
built-in kernels' recipes (:func:`bench_execute`; ``rfmodel.workload.execute.speed``: each kernel run twice,
the second timed), with the slowest kernel's rate.

The ``cold`` member, run only when asked for (``--part cold``; minutes): what a new installation's first
runs cost, each in a new process whose cache folders are new and empty (:func:`bench_cold`): the first
analytic answers (a built-in workload, a SASS listing), the first simulation and the default
``rfmodel optimize``, compilation and the traces and profiles they build included.
"""

from __future__ import annotations

import os
import time

from rfmodel.analytic.engine import run_analytic
from rfmodel.designs.base import design_names
from rfmodel.evaluate import resolve_gpu


def clock() -> tuple[float, float]:
    """(wall, CPU) seconds now: CPU is this process's user and system time (every thread) plus that of the
    child processes it has waited for."""
    t = os.times()
    return time.perf_counter(), time.process_time() + t.children_user + t.children_system


class Timer:
    """``with Timer() as t: ...`` leaves ``t.wall`` and ``t.cpu`` (seconds) of the block."""

    def __enter__(self):
        self._w, self._c = clock()
        return self

    def __exit__(self, *exc):
        w, c = clock()
        self.wall, self.cpu = w - self._w, c - self._c
        return False


class Best:
    """The fastest of several timed runs, in each clock on its own."""

    def __init__(self):
        self.wall = self.cpu = float("inf")

    def add(self, t: Timer) -> None:
        self.wall, self.cpu = min(self.wall, t.wall), min(self.cpu, t.cpu)


def _rate(n, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


#: the default benchmark: 48 resident warps on the 48-warp Fermi SM, 474k warp instructions
BENCH_WORKLOAD = "crc32_murmur3"
BENCH_GPU = "fermi-gtx480"


def bench_simulate(
    designs=None, *, workload: str = BENCH_WORKLOAD, gpu=BENCH_GPU, repeat: int = 3, arch: str | None = None
) -> dict:
    """Simulator throughput per design (see the module docstring)."""
    from rfmodel.evaluate import _simulate_workload
    from rfmodel.sim.engine import simulate_trace
    from rfmodel.workload.suite import DEFAULT_ARCH

    sm = resolve_gpu(gpu)
    arch = arch or DEFAULT_ARCH
    name, trace = _simulate_workload(workload, sm, arch=arch, seed=0, max_warps=None)
    _, warm = _simulate_workload(workload, sm, arch=arch, seed=0, max_warps=8)
    out = {}
    for d in designs or design_names():
        with Timer() as w:
            simulate_trace(warm, sm, d)  # compile (or load) the loop and the hooks
        best, run = Best(), None
        for _ in range(max(repeat, 1)):
            with Timer() as t:
                run = simulate_trace(trace, sm, d)
            best.add(t)
        instr = int(run.counts["issued"])
        out[d] = {
            "warp_instr_per_s": _rate(instr, best.wall),
            "warp_instr_per_cpu_s": _rate(instr, best.cpu),
            "workload": name,
            "instructions": instr,
            "gpu": sm.name,
            "resident_warps": int(run.metrics["warps"]),
            "cycles": int(run.metrics["cycles"]),
            "best_seconds": best.wall,
            "cpu_seconds": best.cpu,
            "repeat": max(repeat, 1),
            "warmup_seconds": w.wall,
            "warmup_cpu_seconds": w.cpu,
        }
    return out


#: the analytic benchmark grid (baseline; every point a valid spec): 7 x 64 x 16 x 5 x 2 x 2 = 143,360
ANALYTIC_GRID = {
    "num_banks": [1, 2, 4, 8, 16, 32, 64],
    "collector_units": list(range(1, 65)),
    "regs_per_sm": [8192 * k for k in range(1, 17)],
    "warps_per_sm": [32, 40, 48, 56, 64],
    "issue_width": [1, 2],
    "bank_rw_ports": [1, 2],
}


#: the ``evaluate_sizes`` measurement of the analytic member: five built-in workloads of different kinds ...
EVALUATE_WORKLOADS = ("saxpy", "sgemm_tiled", "histogram256", "fft_radix8", "reduce_sum")
#: ... at a 10^3- and a 10^5-point grid each (banks x collector units x main-RF bank speeds)
_AXES = {"num_banks": [4, 8, 16, 32, 64], "collector_units": [4, 8, 16, 32, 64]}
EVALUATE_GRIDS = {"1e3": {**_AXES, "main_rf_latency_x": 40}, "1e5": {**_AXES, "main_rf_latency_x": 4000}}


def _evaluate_sizes(design: str, sm, repeat: int) -> list[dict]:
    """``rfmodel.evaluate`` of ``design`` over :data:`EVALUATE_WORKLOADS` at each grid of
    :data:`EVALUATE_GRIDS` (its bank speeds evenly over 1-8x), after a warm-up on the smallest; the fastest
    of ``repeat`` runs counts (one run for a grid above 10^4 points)."""
    import numpy as np

    from rfmodel.evaluate import evaluate

    out = []
    for label, spec in EVALUATE_GRIDS.items():
        params = {
            k: (list(np.linspace(1.0, 8.0, v)) if k == "main_rf_latency_x" else v) for k, v in spec.items()
        }
        n = int(np.prod([len(v) for v in params.values()]))
        if not out:
            evaluate(design, list(EVALUATE_WORKLOADS), sm, params=params)  # warm-up: profiles, compilation
        best = Best()
        for _ in range(max(repeat, 1) if n <= 10_000 else 1):
            with Timer() as t:
                evaluate(design, list(EVALUATE_WORKLOADS), sm, params=params)
            best.add(t)
        total = n * len(EVALUATE_WORKLOADS)
        out.append(
            {
                "grid": label,
                "points": n,
                "workloads": len(EVALUATE_WORKLOADS),
                "points_per_cpu_s": _rate(total, best.cpu),
                "points_per_s": _rate(total, best.wall),
                "cpu_seconds": best.cpu,
            }
        )
    return out


def bench_analytic(
    *,
    workload: str = BENCH_WORKLOAD,
    gpu=BENCH_GPU,
    repeat: int = 3,
    design="baseline",
    sim_seconds: tuple[float, float] | None = None,
) -> dict:
    """Vectorized analytic throughput in design points per second (see the module docstring)."""
    import numpy as np

    from rfmodel.analytic.calibration import calibrated_grid_entries, load_calibration
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import _grid, evaluate, workload_profile

    sm = resolve_gpu(gpu)
    d = get_design(design)
    prof = workload_profile(workload, sm)
    grid, _, _ = _grid(ANALYTIC_GRID, "product")
    cal, _ = calibrated_grid_entries(d, sm.name, load_calibration())
    g = {**grid, **cal}
    n = int(np.prod([len(v) for v in ANALYTIC_GRID.values()]))
    run_analytic(d, prof, sm, g)  # warm-up
    best = Best()
    for _ in range(max(repeat, 1)):
        with Timer() as t:
            m = run_analytic(d, prof, sm, g)
        best.add(t)
    assert np.size(m["ipc"]) == n
    small = {"num_banks": [4, 8, 16, 32], "collector_units": [2, 4, 8, 16]}
    evaluate(design, workload, sm, params=small)
    ev = Best()
    for _ in range(max(repeat, 1)):
        with Timer() as t:
            evaluate(design, workload, sm, params=small)
        ev.add(t)
    out = {
        "points_per_s": _rate(n, best.wall),
        "points_per_cpu_s": _rate(n, best.cpu),
        "points": n,
        "best_seconds": best.wall,
        "cpu_seconds": best.cpu,
        "design": d.name,
        "workload": workload,
        "gpu": sm.name,
        "grid": {k: len(v) for k, v in ANALYTIC_GRID.items()},
        "evaluate_points_per_s": _rate(16, ev.wall),
        "evaluate_points_per_cpu_s": _rate(16, ev.cpu),
        "evaluate_sizes": _evaluate_sizes(design, sm, repeat),
        "repeat": max(repeat, 1),
    }
    if sim_seconds:  # (wall, CPU) seconds of one simulation
        sw, sc = sim_seconds
        out["simulate_points_per_s"] = 1.0 / sw
        out["speedup_vs_simulate"] = out["points_per_s"] * sw
        out["speedup_vs_simulate_cpu"] = out["points_per_cpu_s"] * sc
    return out


#: the optimize member: one design's island over the default workloads (population x generations)
OPTIMIZE_POP, OPTIMIZE_GENERATIONS = 40, 5


def bench_optimize(*, gpu=BENCH_GPU, repeat: int = 1, design: str = "baseline") -> dict:
    """``rfmodel optimize``'s speed: one island of ``design`` (its default space, every main-RF cell) over
    the default workloads, ``OPTIMIZE_POP`` x ``OPTIMIZE_GENERATIONS`` evaluations, serially, after a
    warm-up that builds (or loads) the profiles; the fastest of ``repeat`` runs counts."""
    from rfmodel.optimize.problem import optimize
    from rfmodel.workload.suite import default_workloads

    workloads = list(default_workloads())
    kw = dict(pop_size=OPTIMIZE_POP, brute_force=False, store=False)  # every point modelled
    optimize([design], workloads, gpu, generations=1, **kw)  # warm-up: profiles, imports
    best, n = Best(), 0
    for _ in range(max(int(repeat), 1)):
        with Timer() as t:
            res = optimize([design], workloads, gpu, generations=OPTIMIZE_GENERATIONS, **kw)
        best.add(t)
        n = res.evaluations
    return {
        "evaluations_per_s": _rate(n, best.wall),
        "evaluations_per_cpu_s": _rate(n, best.cpu),
        "evaluations": n,
        "workloads": len(workloads),
        "design": design,
        "best_seconds": best.wall,
        "cpu_seconds": best.cpu,
        "seconds_per_10000": 10000 * best.wall / n,
        "cpu_seconds_per_10000": 10000 * best.cpu / n,
    }


#: the execute member's architecture and recipe scale
EXECUTE_ARCH, EXECUTE_SCALE = "sm_80", 2.0


def bench_execute(*, arch: str = EXECUTE_ARCH, scale: float = EXECUTE_SCALE, suite: str = "builtin") -> dict:
    """The functional executor's speed over the recipes of ``suite``'s kernels (the built-in suite, the
    papers' benchmarks or all; one core): warp-instructions per second in total and of the slowest
    kernel."""
    from rfmodel.workload.execute.speed import measure

    m = measure(arch, scale, suite)
    slow = min(m["kernels"].items(), key=lambda kv: kv[1]["per_second"])
    total = m["total"]
    return {
        "warp_instr_per_s": total["per_second"],
        "warp_instr_per_cpu_s": total["per_cpu_second"],
        "warp_instructions": total["warp_instructions"],
        "seconds": total["seconds"],
        "cpu_seconds": total["cpu_seconds"],
        "kernels": len(m["kernels"]),
        "arch": arch,
        "scale": scale,
        "suite": suite,
        "slowest": {"kernel": slow[0], "warp_instr_per_s": slow[1]["per_second"]},
    }


#: the parts of :func:`bench` it runs unless told which, in the order it runs them
BENCH_PARTS = ("simulate", "analytic", "optimize", "execute", "profile")
#: the parts it runs only when asked for (minutes each)
ASKED_PARTS = ("cold",)


#: the ``cold`` member's commands (run with this Python), each from an empty cache: a new installation's first
#: analytic answer on a built-in workload (its profile shipped) and on a SASS listing (its profile built), its
#: first simulation, and the default ``rfmodel optimize`` (every point modelled, no evaluation store);
#: ``{out}`` is a new folder
COLD_COMMANDS = {
    "first_answer": ["-c", "import rfmodel; rfmodel.evaluate('baseline', 'saxpy', 'fermi-gtx480')"],
    "first_answer_listing": [
        "-c",
        "import rfmodel; from rfmodel.workload.suite import builtin_sass_path as p; "
        "rfmodel.evaluate('baseline', str(p('saxpy', 'sm_75', 'cuobjdump')), 'fermi-gtx480')",
    ],
    "first_simulation": [
        "-c",
        "import rfmodel; rfmodel.evaluate('baseline', 'saxpy', 'fermi-gtx480', method='simulate')",
    ],
    "optimize": ["-m", "rfmodel.cli", "optimize", "--no-store", "--quiet", "--out", "{out}"],
}


def bench_cold(commands: dict | None = None) -> dict:
    """CPU and wall seconds of each of ``commands`` (default :data:`COLD_COMMANDS`: arguments of this
    Python) in a child process as after an installation: its cache folders (``XDG_CACHE_HOME``,
    ``RFMODEL_CACHE_DIR``, ``NUMBA_CACHE_DIR``) new and empty, so every function it runs is compiled and
    every trace and profile it reads is built (the package's shipped profiles and calibration are read as
    an installation has them); CPU time is the child's and its own children's."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from rfmodel.errors import RfmodelError

    out = {}
    for name, args in (COLD_COMMANDS if commands is None else commands).items():
        with tempfile.TemporaryDirectory(prefix=f"rfmodel-cold-{name}-") as tmp:
            root = Path(tmp)
            env = {
                **os.environ,
                "XDG_CACHE_HOME": str(root / "xdg"),
                "RFMODEL_CACHE_DIR": str(root / "rfmodel"),
                "NUMBA_CACHE_DIR": str(root / "numba"),
            }
            cmd = [sys.executable, *(a.replace("{out}", str(root / "out")) for a in args)]
            with Timer() as t:
                done = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
                raise RfmodelError(f"bench cold {name}: exit status {done.returncode}: {tail[0]}")
        out[name] = {"cpu_seconds": t.cpu, "seconds": t.wall, "command": " ".join(["python", *args])}
    return out


def bench(
    *,
    workload: str = BENCH_WORKLOAD,
    gpu=BENCH_GPU,
    repeat: int = 3,
    designs=None,
    execute_scale: float = EXECUTE_SCALE,
    execute_suite: str = "builtin",
    parts=None,
) -> dict:
    """Benchmark figures: the simulator's per design, the analytic engine's for the baseline, the
    optimizer's evaluations per second, the functional executor's warp-instructions per second and the
    cost of a first answer on a new SASS listing; ``parts`` (default: all of :data:`BENCH_PARTS`) picks
    some of them, or adds those of :data:`ASKED_PARTS` (a new installation's first runs), the result
    holding only those keys.  ``repeat``: 1 to
    :data:`rfmodel.limits.MAX_BENCH_REPEAT`; ``execute_scale``: above 0, at most
    :data:`rfmodel.limits.MAX_BENCH_EXECUTE_SCALE`; ``execute_suite``: whose recipes the execute member runs
    (``builtin``, ``papers`` or ``all``)."""
    from rfmodel.errors import RfmodelError, expect_int
    from rfmodel.limits import MAX_BENCH_EXECUTE_SCALE, MAX_BENCH_REPEAT

    repeat = expect_int("repeat", repeat, low=1, high=MAX_BENCH_REPEAT)
    ok = isinstance(execute_scale, int | float) and not isinstance(execute_scale, bool)
    if not (ok and 0 < execute_scale <= MAX_BENCH_EXECUTE_SCALE):
        raise RfmodelError(
            f"execute_scale: expected a number above 0 and at most "
            f"{MAX_BENCH_EXECUTE_SCALE} (got {execute_scale!r})"
        )
    if execute_suite not in ("builtin", "papers", "all"):
        raise RfmodelError(f"execute_suite: expected builtin, papers or all (got {execute_suite!r})")
    parts = BENCH_PARTS if parts is None else tuple(parts)
    allowed = ", ".join((*BENCH_PARTS, *ASKED_PARTS))
    for p in parts:
        if p not in BENCH_PARTS + ASKED_PARTS:
            raise RfmodelError(f"bench: unknown part {p!r} (allowed: {allowed})")
    if not parts:
        raise RfmodelError(f"bench: no part chosen (allowed: {allowed})")
    out: dict = {"context": {"load_average_before": list(os.getloadavg()), **run_context()}}
    if "simulate" in parts:
        out["simulate"] = bench_simulate(designs, workload=workload, gpu=gpu, repeat=repeat)
    if "analytic" in parts:
        base = out.get("simulate", {}).get("baseline")
        if base is None:
            base = bench_simulate(["baseline"], workload=workload, gpu=gpu, repeat=1)["baseline"]
        out["analytic"] = bench_analytic(
            workload=workload, gpu=gpu, repeat=repeat, sim_seconds=(base["best_seconds"], base["cpu_seconds"])
        )
    if "optimize" in parts:
        out["optimize"] = bench_optimize(gpu=gpu, repeat=repeat)
    if "execute" in parts:
        out["execute"] = bench_execute(scale=execute_scale, suite=execute_suite)
    if "profile" in parts:
        out["profile"] = bench_profile(gpu=gpu)
    if "cold" in parts:
        out["cold"] = bench_cold()
    out["context"]["load_average_after"] = list(os.getloadavg())
    return out


#: kernels of :func:`bench_profile`: built-in SASS listings of a compute-bound, a constant-memory and a
#: branchy memory-bound kernel
PROFILE_KERNELS = ("sgemm_tiled", "conv2d_const", "bfs_expand")


def bench_profile(
    kernels=PROFILE_KERNELS, *, gpu=BENCH_GPU, arch: str | None = None, design: str = "baseline"
) -> dict:
    """The cost of a first analytic answer on a SASS listing the caches have never seen (the profile,
    built on that answer, and the model) against one simulation of it, per kernel: each built-in
    listing is copied with a line that makes it new, and each engine is timed on its own copy (the
    trace's expansion included in both).  Compilation is excluded: a first kernel's copy runs both
    engines untimed; each timed answer starts after a full garbage collection, so a collection of what
    ran before (about 0.05-0.1 CPU-s in a process that holds the compiled engines) is not charged to it."""
    import gc
    import tempfile
    import uuid
    from pathlib import Path

    from rfmodel.evaluate import evaluate, workload_profile
    from rfmodel.workload.suite import DEFAULT_ARCH, builtin_sass_path

    sm = resolve_gpu(gpu)
    arch = arch or DEFAULT_ARCH
    out = {}
    with tempfile.TemporaryDirectory(prefix="rfmodel-bench-") as tmp:

        def fresh(name: str) -> str:
            p = Path(tmp) / f"{name}-{uuid.uuid4().hex[:8]}.cuobjdump.sass"
            text = builtin_sass_path(name, arch, "cuobjdump").read_text()
            p.write_text(text + f"\n// rfmodel bench {uuid.uuid4().hex}\n")
            return str(p)

        for method in ("analytic", "simulate"):  # compile (or load) both engines
            evaluate(design, fresh(kernels[-1]), sm, method=method, arch=arch)
        for k in kernels:
            row = {}
            for method in ("analytic", "simulate"):
                path = fresh(k)
                gc.collect()  # the garbage of what ran before is not charged to this engine's answer
                with Timer() as t:
                    evaluate(design, path, sm, method=method, arch=arch)
                row[f"{method}_seconds"], row[f"{method}_cpu_seconds"] = t.wall, t.cpu
                if method == "analytic":  # the list-schedule cells that answer built (of those it could)
                    prof = workload_profile(path, sm, arch=arch)  # the cached profile
                    row["sched_cells_built"], row["sched_cells"] = prof.sched_cell_counts()
            row["ratio"] = row["analytic_seconds"] / row["simulate_seconds"]
            row["cpu_ratio"] = row["analytic_cpu_seconds"] / max(row["simulate_cpu_seconds"], 1e-9)
            out[k] = row
    return {"kernels": out, "gpu": sm.name, "arch": arch, "design": design}


def run_context() -> dict:
    """Where a bench ran: the package version, the git revision of its source tree (``None`` outside a
    checkout; ``+`` marks uncommitted changes), Python, processors, and when."""
    import datetime
    import platform
    import subprocess
    from pathlib import Path

    from rfmodel.version import __version__

    root = Path(__file__).resolve().parent.parent
    rev = None
    try:
        git = ["git", "-C", str(root)]
        rev = (
            subprocess.run(
                git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
            or None
        )
        dirty = subprocess.run(
            git + ["status", "--porcelain", "--untracked-files=no", "--", "rfmodel"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
        rev = f"{rev}+" if rev and dirty else rev
    except (OSError, subprocess.SubprocessError):
        pass
    return {
        "version": __version__,
        "revision": rev,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


#: the leaves :func:`compare` sets side by side, and whether more is better
_RATE_SUFFIXES = (
    "_per_s",
    "_per_cpu_s",
    "per_second",
    "per_cpu_second",
    "speedup_vs_simulate",
    "speedup_vs_simulate_cpu",
)
_TIME_SUFFIXES = ("seconds", "seconds_per_10000", "ratio")


def _leaves(d, prefix=""):
    for k, v in d.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _leaves(v, path + ".")
        elif isinstance(v, int | float) and not isinstance(v, bool):
            yield path, float(v)


def compare(before: dict, after: dict) -> list[dict]:
    """The speed figures two bench results share, side by side: one row per figure (its dotted path, e.g.
    ``simulate.baseline.warp_instr_per_cpu_s``) with both values, ``change`` (after / before - 1) and
    ``better`` (whether the change is an improvement: a higher rate or a shorter time).  Counts that are
    not speeds (instructions, cycles, points) are left out unless they differ, when the row says so: two
    runs that simulated different work are not comparable."""
    a, b = dict(_leaves(before)), dict(_leaves(after))
    rows = []
    for path in (p for p in b if p in a and not p.startswith("context.")):
        leaf = path.rsplit(".", 1)[-1]
        x, y = a[path], b[path]
        if leaf.startswith("warmup") or leaf == "repeat":
            continue
        if leaf.endswith(_RATE_SUFFIXES):
            more_is_better = True
        elif leaf.endswith(_TIME_SUFFIXES):
            more_is_better = False
        else:
            if x != y:
                rows.append(
                    {
                        "figure": path,
                        "before": x,
                        "after": y,
                        "change": None,
                        "better": None,
                        "note": "differs: not the same work",
                    }
                )
            continue
        change = y / x - 1 if x else None
        better = None if change is None or change == 0 else (change > 0) == more_is_better
        rows.append({"figure": path, "before": x, "after": y, "change": change, "better": better, "note": ""})
    return rows


def best_of(runs: list[dict]) -> dict:
    """One bench result from several runs of the same work: each speed figure the best of the runs (the
    highest rate, the shortest time: what the machine gives when nothing disturbs it), every other value
    the first run's."""
    first = runs[0]
    out = {}
    for k, v in first.items():
        if isinstance(v, dict):
            out[k] = best_of([r[k] if isinstance(r.get(k), dict) else v for r in runs])
        elif isinstance(v, int | float) and not isinstance(v, bool) and k != "repeat":
            vals = [
                r[k] for r in runs if isinstance(r.get(k), int | float) and not isinstance(r.get(k), bool)
            ]
            if k.endswith(_RATE_SUFFIXES):
                out[k] = max(vals)
            elif k.endswith(_TIME_SUFFIXES) and not k.startswith("warmup"):
                out[k] = min(vals)
            else:
                out[k] = v
        else:
            out[k] = v
    return out


def _bench_child(tree, argv: list[str], what: str) -> dict:
    """``rfmodel bench --json`` with ``argv`` in a child process from the source tree ``tree``."""
    import json
    import subprocess
    import sys

    from rfmodel.errors import RfmodelError

    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = "import sys; from rfmodel.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run(
        [sys.executable, "-c", code, "bench", "--json", *argv],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise RfmodelError(f"--compare {what}: the bench failed: {tail[0]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def bench_revision(rev: str, argv: list[str], *, rounds: int = 1, progress=None) -> tuple[dict, dict]:
    """``(before, after)``: the bench of another git revision of this source tree and of this tree itself,
    each in a child process of its own (the revision's from a temporary worktree, ``git worktree add
    --detach``, removed afterwards), with the same arguments (``argv``, without ``--json`` and
    ``--compare``), so that two revisions are measured on the same machine in one session and alike: both
    start from a new process.  ``rounds``: the two run alternately that many times, the revision first,
    and each side's figures are the best of its runs (:func:`best_of`; docs/simulator.md gives the spread
    between processes of one tree).  The revision's engines compile in its worktree first (excluded from the
    timings, as always); the results cache is shared, keyed by each tree's own source hash."""
    import subprocess
    import tempfile
    from pathlib import Path

    from rfmodel.errors import RfmodelError

    root = Path(__file__).resolve().parent.parent
    git = ["git", "-C", str(root)]
    try:
        ok = subprocess.run(
            git + ["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError as e:
        raise RfmodelError(f"--compare {rev}: git is not available ({e})") from None
    if ok.returncode != 0:
        raise RfmodelError(f"--compare {rev}: neither a bench JSON file nor a git revision of {root}")
    with tempfile.TemporaryDirectory(prefix="rfmodel-bench-rev-") as tmp:
        tree = Path(tmp) / "tree"
        made = subprocess.run(
            git + ["worktree", "add", "--detach", "--quiet", str(tree), ok.stdout.strip()],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if made.returncode != 0:
            why = (made.stderr or made.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise RfmodelError(f"--compare {rev}: cannot make a worktree of it: {why[0]}")
        try:
            before, after = [], []
            for k in range(rounds):
                if progress:
                    first = " (it compiles its engines first)" if k == 0 else ""
                    progress(
                        f"bench: round {k + 1}/{rounds}: revision {rev} from a temporary worktree{first}"
                    )
                before.append(_bench_child(tree, argv, rev))
                if progress:
                    progress(f"bench: round {k + 1}/{rounds}: this tree")
                after.append(_bench_child(root, argv, "this tree"))
            return best_of(before), best_of(after)
        finally:
            subprocess.run(
                git + ["worktree", "remove", "--force", str(tree)], capture_output=True, timeout=300
            )
