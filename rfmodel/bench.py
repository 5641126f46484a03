"""``rfmodel bench``: speed figures of the engines, as one JSON object.

The ``simulate`` member maps every registered design to
``{"warp_instr_per_s": ..., "workload": ..., "instructions": ...}`` (plus the
GPU, the best time and the repeat count): simulated warp instructions per
second of wall time on one core, for the SM's whole share of the workload.
Compilation is excluded: each design first simulates a small slice of the
workload (which compiles the cycle loop, or loads it from numba's cache),
then the full run is timed ``repeat`` times and the fastest counts.

The ``analytic`` member: ``{"points_per_s": ..., "speedup_vs_simulate": ...}`` for the
baseline on one large grid (``ANALYTIC_GRID``: bank count x collector units x registers x warps
x issue width x ports, 143,360 design points) of the same workload and GPU.  ``points_per_s``
counts design points per second of the vectorized model call (``Design.analytic`` on a ready
profile: the engine a sweep or an optimizer runs; the profile is built once per workload and is
excluded, as compilation is for the simulator); ``evaluate_points_per_s`` is the whole
``rfmodel.evaluate`` call on a smaller grid (energy and area accounting included).
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
"""

from __future__ import annotations

import time

from rfmodel.analytic.engine import run_analytic
from rfmodel.designs.base import design_names
from rfmodel.evaluate import resolve_gpu

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
        t0 = time.perf_counter()
        simulate_trace(warm, sm, d)  # compile (or load) the loop and the hooks
        warmup = time.perf_counter() - t0
        best = float("inf")
        run = None
        for _ in range(max(repeat, 1)):
            t0 = time.perf_counter()
            run = simulate_trace(trace, sm, d)
            best = min(best, time.perf_counter() - t0)
        instr = int(run.counts["issued"])
        out[d] = {
            "warp_instr_per_s": instr / best if best > 0 else float("inf"),
            "workload": name,
            "instructions": instr,
            "gpu": sm.name,
            "resident_warps": int(run.metrics["warps"]),
            "cycles": int(run.metrics["cycles"]),
            "best_seconds": best,
            "repeat": max(repeat, 1),
            "warmup_seconds": warmup,
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


def bench_analytic(
    *,
    workload: str = BENCH_WORKLOAD,
    gpu=BENCH_GPU,
    repeat: int = 3,
    design="baseline",
    sim_seconds: float | None = None,
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
    best = float("inf")
    for _ in range(max(repeat, 1)):
        t0 = time.perf_counter()
        m = run_analytic(d, prof, sm, g)
        best = min(best, time.perf_counter() - t0)
    assert np.size(m["ipc"]) == n
    small = {"num_banks": [4, 8, 16, 32], "collector_units": [2, 4, 8, 16]}
    evaluate(design, workload, sm, params=small)
    t0 = time.perf_counter()
    evaluate(design, workload, sm, params=small)
    ev = 16 / (time.perf_counter() - t0)
    pps = n / best
    out = {"points_per_s": pps, "points": n, "best_seconds": best, "design": d.name, "workload": workload,
           "gpu": sm.name, "grid": {k: len(v) for k, v in ANALYTIC_GRID.items()}, "evaluate_points_per_s": ev,
           "repeat": max(repeat, 1)}  # fmt: skip
    if sim_seconds:
        out["simulate_points_per_s"] = 1.0 / sim_seconds
        out["speedup_vs_simulate"] = pps * sim_seconds
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
    best, n = float("inf"), 0
    for _ in range(max(int(repeat), 1)):
        t0 = time.perf_counter()
        res = optimize([design], workloads, gpu, generations=OPTIMIZE_GENERATIONS, **kw)
        best = min(best, time.perf_counter() - t0)
        n = res.evaluations
    return {"evaluations_per_s": n / best, "evaluations": n, "workloads": len(workloads), "design": design,
            "best_seconds": best, "seconds_per_10000": 10000 * best / n}  # fmt: skip


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
    return {"warp_instr_per_s": total["per_second"], "warp_instructions": total["warp_instructions"],
            "seconds": total["seconds"], "kernels": len(m["kernels"]), "arch": arch, "scale": scale,
            "suite": suite,
            "slowest": {"kernel": slow[0], "warp_instr_per_s": slow[1]["per_second"]}}  # fmt: skip


#: the parts of :func:`bench`, in the order it runs them
BENCH_PARTS = ("simulate", "analytic", "optimize", "execute", "profile")


def bench(*, workload: str = BENCH_WORKLOAD, gpu=BENCH_GPU, repeat: int = 3, designs=None,
          execute_scale: float = EXECUTE_SCALE, execute_suite: str = "builtin", parts=None) -> dict:
    """Benchmark figures: the simulator's per design, the analytic engine's for the baseline, the
    optimizer's evaluations per second, the functional executor's warp-instructions per second and the
    cost of a first answer on a new SASS listing; ``parts`` (default: all of :data:`BENCH_PARTS`) picks
    some of them, the result holding only those keys.  ``repeat``: 1 to
    :data:`rfmodel.limits.MAX_BENCH_REPEAT`; ``execute_scale``: above 0, at most
    :data:`rfmodel.limits.MAX_BENCH_EXECUTE_SCALE`; ``execute_suite``: whose recipes the execute member runs
    (``builtin``, ``papers`` or ``all``)."""
    from rfmodel.errors import RfmodelError, expect_int
    from rfmodel.limits import MAX_BENCH_EXECUTE_SCALE, MAX_BENCH_REPEAT

    repeat = expect_int("repeat", repeat, low=1, high=MAX_BENCH_REPEAT)
    ok = isinstance(execute_scale, int | float) and not isinstance(execute_scale, bool)
    if not (ok and 0 < execute_scale <= MAX_BENCH_EXECUTE_SCALE):
        raise RfmodelError(f"execute_scale: expected a number above 0 and at most "
                           f"{MAX_BENCH_EXECUTE_SCALE} (got {execute_scale!r})")  # fmt: skip
    if execute_suite not in ("builtin", "papers", "all"):
        raise RfmodelError(f"execute_suite: expected builtin, papers or all (got {execute_suite!r})")
    parts = BENCH_PARTS if parts is None else tuple(parts)
    for p in parts:
        if p not in BENCH_PARTS:
            raise RfmodelError(f"bench: unknown part {p!r} (allowed: {', '.join(BENCH_PARTS)})")
    if not parts:
        raise RfmodelError(f"bench: no part chosen (allowed: {', '.join(BENCH_PARTS)})")
    out: dict = {}
    if "simulate" in parts:
        out["simulate"] = bench_simulate(designs, workload=workload, gpu=gpu, repeat=repeat)
    if "analytic" in parts:
        base = out.get("simulate", {}).get("baseline")
        if base is None:
            base = bench_simulate(["baseline"], workload=workload, gpu=gpu, repeat=1)["baseline"]
        out["analytic"] = bench_analytic(workload=workload, gpu=gpu, repeat=repeat,
                                         sim_seconds=base["best_seconds"])  # fmt: skip
    if "optimize" in parts:
        out["optimize"] = bench_optimize(gpu=gpu, repeat=repeat)
    if "execute" in parts:
        out["execute"] = bench_execute(scale=execute_scale, suite=execute_suite)
    if "profile" in parts:
        out["profile"] = bench_profile(gpu=gpu)
    return out


#: kernels of :func:`bench_profile`: built-in SASS listings of a compute-bound, a constant-memory and a
#: branchy memory-bound kernel
PROFILE_KERNELS = ("sgemm_tiled", "conv2d_const", "bfs_expand")


def bench_profile(kernels=PROFILE_KERNELS, *, gpu=BENCH_GPU, arch: str | None = None,
                  design: str = "baseline") -> dict:
    """The cost of a first analytic answer on a SASS listing the caches have never seen (the profile,
    built on that answer, and the model) against one simulation of it, per kernel: each built-in
    listing is copied with a line that makes it new, and each engine is timed on its own copy (the
    trace's expansion included in both).  Compilation is excluded: a first kernel's copy runs both
    engines untimed."""
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
                t0 = time.perf_counter()
                evaluate(design, path, sm, method=method, arch=arch)
                row[f"{method}_seconds"] = time.perf_counter() - t0
                if method == "analytic":  # the list-schedule cells that answer built (of those it could)
                    prof = workload_profile(path, sm, arch=arch)  # the cached profile
                    row["sched_cells_built"], row["sched_cells"] = prof.sched_cell_counts()
            row["ratio"] = row["analytic_seconds"] / row["simulate_seconds"]
            out[k] = row
    return {"kernels": out, "gpu": sm.name, "arch": arch, "design": design}
