"""How far half-damped steps ``x <- (x + g(x)) / 2`` of the interval model's fixed point stay from its root.

    python calib/fixed_point_check.py                 # the default workloads, both GPUs, seven designs

Runs ``rfmodel.evaluate`` over the default workloads on ``fermi-gtx480`` and ``volta-v100`` (4-32 banks, 2-16
collector units, main-RF banks 1, 2 and 6x slow) for the baseline, BOW, LTRF, Malekeh, the RFC, STT-RAM and
strands, keeps every distinct fixed point the model solved (its inputs and Brent's root), and runs from the
same start the 16 half-damped steps the model took before (and 3,000 of them) with the same queues
(``throughput._queues``): their distance from the root, and how many evaluations of the queues Brent's method
took a point (docs/models.md).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rfmodel.analytic.throughput as T  # noqa: E402
from rfmodel.analytic.throughput import _queues  # noqa: E402

DESIGNS = ("baseline", "bow", "ltrf", "malekeh", "rfc", "stt", "strands")
GRID = {"num_banks": [4, 8, 16, 32], "collector_units": [2, 4, 8, 16], "main_rf_latency_x": [1, 2, 6]}


@njit
def _damped(x, steps, tables, out):
    res = np.empty(9)
    for i in range(x.shape[1]):
        ipc = max(min(x[4, i], x[5, i]) * 0.3, 1e-3)
        for _ in range(steps):
            _queues(ipc, x, i, tables, res)
            ipc = 0.5 * ipc + 0.5 * res[0]
        out[i] = ipc


#: ``throughput._steady``'s arguments (its ``tables`` as :data:`~rfmodel.analytic.throughput.STEADY_TABLES`)
STEADY_ARGS = list(inspect.signature(T._steady.py_func).parameters)


def _without_cells(tables: tuple) -> tuple:
    """``tables`` with no list-schedule cell to build (the damped steps read the tables as they are)."""
    t = dict(zip(T.STEADY_TABLES, tables, strict=True))
    t["todo"] = np.zeros((0, 0, 0), dtype=np.bool_)
    t["touched"] = np.zeros((0, 0, 0), dtype=np.uint8)
    return tuple(t.values())


def main() -> int:
    from rfmodel.evaluate import evaluate
    from rfmodel.workload.suite import default_workloads

    calls = []
    real = T._steady

    def spy(*args):
        """``_steady`` as it is, keeping each call's points, roots and arguments for ``_damped``."""
        a = dict(zip(STEADY_ARGS, args, strict=True))
        evals = np.zeros(a["x"].shape[1], dtype=np.int64)  # the evaluations of the queues each point took
        real(*args[:-1], evals)
        if not a["tables"][T.STEADY_TABLES.index("touched")].any():
            calls.append((a["x"].copy(), a["out"][0].copy(), _without_cells(a["tables"]), evals))

    T._steady = spy
    wls = list(default_workloads())
    for gpu in ("fermi-gtx480", "volta-v100"):
        for d in DESIGNS:
            try:
                evaluate(d, wls, gpu, params=GRID)
            except Exception as e:  # a workload that cannot run on the GPU at any point
                print(f"{gpu} {d}: {str(e)[:100]}", file=sys.stderr)
    T._steady = real
    dist = {16: [], 3000: []}
    counts = np.concatenate([ev[x[0] > 0] for x, _, _, ev in calls])
    for x, root, rest, _ in calls:
        keep = x[0] > 0
        for steps in dist:
            got = np.empty(x.shape[1])
            _damped(x, steps, rest, got)
            dist[steps].append(np.abs(got[keep] / root[keep] - 1.0))
    print(f"distinct fixed points with resident warps: {sum(d.size for d in dist[16])}")
    print(
        f"Brent's evaluations of the queues a point: mean {counts.mean():.2f}, {counts.min()} to "
        f"{counts.max()}"
    )
    for steps, parts in dist.items():
        d = np.concatenate(parts)
        # the damped steps may pass through list-schedule cells the solver never needed, so never built (NaN
        # in the tables it was given: how many depends on the cells earlier runs left in the cache)
        unbuilt = int(np.isnan(d).sum())
        d = d[~np.isnan(d)]
        print(
            f"{steps:5d} half-damped steps from the root: median {np.median(d):.2e}, more than 1e-3 on "
            f"{int((d > 1e-3).sum())}, more than 1 % on {int((d > 1e-2).sum())}, at most {d.max():.2e}"
            f" ({unbuilt} points left out: their steps read a cell not built)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
