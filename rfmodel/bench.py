"""``rfmodel bench``: speed figures of the engines, as one JSON object.

The ``simulate`` member maps every registered design to
``{"warp_instr_per_s": ..., "workload": ..., "instructions": ...}`` (plus the
GPU, the best time and the repeat count): simulated warp instructions per
second of wall time on one core, for the SM's whole share of the workload.
Compilation is excluded: each design first simulates a small slice of the
workload (which compiles the cycle loop, or loads it from numba's cache),
then the full run is timed ``repeat`` times and the fastest counts.  Later
issues add ``analytic`` and ``optimize`` members.
"""

from __future__ import annotations

import time

from rfmodel.designs.base import design_names
from rfmodel.evaluate import resolve_gpu

#: the default benchmark: 48 resident warps on the 48-warp Fermi SM, 474k warp instructions
BENCH_WORKLOAD = "crc32_murmur3"
BENCH_GPU = "fermi-gtx480"


def bench_simulate(designs=None, *, workload: str = BENCH_WORKLOAD, gpu=BENCH_GPU, repeat: int = 3,
                   arch: str | None = None) -> dict:
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


def bench(*, workload: str = BENCH_WORKLOAD, gpu=BENCH_GPU, repeat: int = 3, designs=None) -> dict:
    """All benchmark figures (today: the simulator's)."""
    return {"simulate": bench_simulate(designs, workload=workload, gpu=gpu, repeat=repeat)}
