"""Which of a warp's own loads an LTRF prefetch could overlap, and how much of the prefetches' time the
simulator shows (docs/models.md, LTRF family, "Which loads a prefetch could overlap").

    python calib/ltrf_overlap.py sgemm_tiled gemm_micro8x8
    python calib/ltrf_overlap.py sgemm_tiled --regs 8 --gpu volta-v100

From the trace: the simulator starts a warp's prefetch only when its interval's first instruction passes the
scoreboard, so the prefetch overlaps the warp's own load only where the load was issued before the interval
began and is first read after the interval's first instruction (``straddle``); a load first read by an
interval's first instruction holds the prefetch back (``blocked``).  Counted over the profile's sample warps
(``rfmodel.analytic.profile.TABLE_MAX_INSTRS``) at the compiler pass's intervals of ``--regs`` registers.

From the simulator (the sweep's LTRF records at 1x, 3x and 6x banks in ``--checkpoints``, simulated where
missing, as ``calib/run.py`` does): the share of the prefetches' longer time that shows in the run,
``delta(cycles / instructions) x W / (p x delta(t_pf))`` against 1x (``W`` the resident warps, ``p`` the
prefetches per instruction, ``t_pf`` the mean prefetch time): 1 where each warp's pause adds in full,
0 where the other warps hide it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rfmodel.trace import NONE  # noqa: E402


@njit(cache=True)
def _straddle(warp_ptr, starts, op, src, dst, long_latency):
    """(loads read at all, those first read after a later interval's first instruction, those first read by
    it) over each warp's rows ``warp_ptr[w]:warp_ptr[w + 1]``; ``starts[i] >= 0`` where an interval starts."""
    pending = np.zeros(256, dtype=np.bool_)
    epoch_of = np.zeros(256, dtype=np.int64)
    read = straddle = blocked = 0
    for w in range(warp_ptr.shape[0] - 1):
        pending[:] = False
        epoch = 0
        for i in range(warp_ptr[w], warp_ptr[w + 1]):
            first = starts[i] >= 0 and i > warp_ptr[w]
            if first:
                epoch += 1
            for j in range(src.shape[1]):
                r = src[i, j]
                if r != NONE and pending[r]:
                    pending[r] = False
                    read += 1
                    if epoch_of[r] < epoch:
                        if first and epoch_of[r] == epoch - 1:
                            blocked += 1
                        else:
                            straddle += 1
            for j in range(dst.shape[1]):
                r = dst[i, j]
                if r != NONE:
                    pending[r] = long_latency[op[i]]
                    epoch_of[r] = epoch
    return read, straddle, blocked


def trace_shares(workload: str, regs: int) -> tuple[int, float, float]:
    """(loads read, share straddling an interval's start, share read by an interval's first instruction)."""
    from rfmodel.analytic import profile as prof
    from rfmodel.designs import ltrf
    from rfmodel.workload.static import static_kernel
    from rfmodel.workload.suite import load_workload

    tr = load_workload(workload).trace
    warps = prof.leading_warps(tr.warp_ptr.astype(np.int64), prof.TABLE_MAX_INSTRS)
    kernel = static_kernel(tr)
    if kernel is None:
        raise SystemExit(f"{workload}: no static kernel, so no compiler-pass intervals")
    ivs = ltrf._compile(kernel, regs, "interval", False, 1)[0]
    end = int(warps[-1])
    starts = ltrf.static_starts(np.asarray(tr.sidx[:end], dtype=np.int64), warps, ivs)
    n, s, b = _straddle(
        warps,
        starts,
        np.asarray(tr.op[:end], dtype=np.int64),
        np.ascontiguousarray(tr.src[:end]),
        np.ascontiguousarray(tr.dst[:end]),
        prof._memory_classes(),
    )
    return n, s / max(n, 1), b / max(n, 1)


def exposure(workloads, gpu: str, checkpoints: str, workers: int) -> dict:
    """``{(workload, x): shown share}`` of the sweep's LTRF records at ``x`` = 3 and 6 against 1."""
    from rfmodel.calibrate import DEFAULT_SWEEP, run_jobs, sweep_jobs

    recs, _ = run_jobs(sweep_jobs(dict(DEFAULT_SWEEP), ["ltrf"]), checkpoints, workers=workers)
    at = {}
    for r in recs:
        if r["gpu"] == gpu and r["workload"] in workloads and set(r["params"]) <= {"main_rf_latency_x"}:
            at[(r["workload"], r["params"].get("main_rf_latency_x", 1))] = r["sim"]
    out = {}
    for w in workloads:
        one = at.get((w, 1))
        for x in (3, 6):
            s = at.get((w, x))
            if one is None or s is None:
                continue
            n = one["warp_instructions"]
            p = one["prefetches"] / n
            dt = s["prefetch_latency_cycles"] - one["prefetch_latency_cycles"]
            out[(w, x)] = (
                (s["cycles"] - one["cycles"]) / n * one["warps"] / (p * dt) if p * dt > 0 else np.nan
            )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="+")
    ap.add_argument(
        "--regs", type=int, default=16, help="registers per interval of the trace counts (default 16)"
    )
    ap.add_argument("--gpu", default="volta-v100")
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    from rfmodel.calibrate import DEFAULT_SWEEP
    from rfmodel.designs.base import get_design

    if a.gpu not in DEFAULT_SWEEP["gpus"]:
        ap.error(f"--gpu {a.gpu}: the sweep simulates {', '.join(DEFAULT_SWEEP['gpus'])}")
    if a.regs < 1:
        ap.error(f"--regs {a.regs}: at least 1")
    # the sweep's LTRF records run at the design's default interval size, whatever --regs counts the trace at
    swept = get_design("ltrf").resolve({}).regs_per_interval
    shown = exposure(set(a.workloads) & set(DEFAULT_SWEEP["workloads"]), a.gpu, a.checkpoints, a.workers)
    print(
        f"{'workload':28s} {'loads':>7s} {'straddle':>9s} {'blocked':>8s}   (at {a.regs} registers an "
        f"interval)   shown at 3x / 6x ({a.gpu}, {swept} registers an interval)"
    )
    for w in a.workloads:
        n, s, b = trace_shares(w, a.regs)
        if w in DEFAULT_SWEEP["workloads"]:
            tail = f"{shown.get((w, 3), np.nan):.2f} / {shown.get((w, 6), np.nan):.2f}"
        else:
            tail = "- (not in the calibration sweep)"
        print(f"{w:28s} {n:7d} {100 * s:8.1f}% {100 * b:7.1f}%   {tail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
