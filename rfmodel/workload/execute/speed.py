"""Executor speed over the shipped kernels' recipes (the built-in suite's by default; ``--suite papers``:
the papers' benchmarks).

``python -m rfmodel.workload.execute.speed [--arch sm_80] [--scale 2] [--suite builtin|papers|all]``.
Prints JSON: per kernel the executed warp-instructions, seconds and warp-instructions per second
(the second of two runs, so compilation and first-use costs are excluded), and the total.
One process runs on one core.
"""

from __future__ import annotations

import argparse
import json
import time

from rfmodel.workload.execute.builtin import KNOWN_GAPS, RECIPES, builtin_recipe
from rfmodel.workload.execute.decode import decode_kernel
from rfmodel.workload.execute.recipe import run_recipe
from rfmodel.workload.suite import load_kernel, suite_names


def measure(arch: str = "sm_80", scale: float = 2.0, suite: str = "builtin") -> dict:
    out = {"arch": arch, "scale": scale, "suite": suite, "kernels": {}}
    total_n = 0
    total_s = total_c = 0.0
    for name in [n for n in suite_names(suite) if n in RECIPES]:
        if (name, arch) in KNOWN_GAPS:
            continue
        recipe = builtin_recipe(name, scale=scale)
        dec = decode_kernel(load_kernel(name, arch))
        run_recipe(dec, recipe)
        t, c = time.perf_counter(), time.process_time()
        res, _ = run_recipe(dec, recipe)
        dt, dc = time.perf_counter() - t, max(time.process_time() - c, 1e-9)
        out["kernels"][name] = {
            "warp_instructions": res.warp_instructions,
            "seconds": round(dt, 4),
            "cpu_seconds": round(dc, 4),
            "per_second": round(res.warp_instructions / dt),
            "per_cpu_second": round(res.warp_instructions / dc),
        }
        total_n += res.warp_instructions
        total_s += dt
        total_c += dc
    out["total"] = {
        "warp_instructions": total_n,
        "seconds": round(total_s, 3),
        "cpu_seconds": round(total_c, 3),
        "per_second": round(total_n / total_s),
        "per_cpu_second": round(total_n / total_c),
    }
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_80")
    ap.add_argument("--scale", type=float, default=2.0)
    ap.add_argument("--suite", choices=("builtin", "papers", "all"), default="builtin")
    a = ap.parse_args(argv)
    print(json.dumps(measure(a.arch, a.scale, a.suite), indent=1))


if __name__ == "__main__":
    main()
