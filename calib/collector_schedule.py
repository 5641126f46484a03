"""The baseline over slow register banks: the profile's list schedule with and without operand collectors,
against the simulator (docs/validation.md, "The effects at slow banks carry both engines' errors").

    python calib/collector_schedule.py                                   # stencil2d_regtile, volta-v100, 6x
    python calib/collector_schedule.py --workload sgemm_tiled --latency-x 3 --collectors 8 16 32

For each SM collector count the simulator runs the baseline at the bank speed and reports its IPC and the
cycles an instruction held a collector (``coll_busy / issued``).  The profile's list schedule of the
resident CTAs (``rfmodel.analytic.profile.sched_table``, the table the analytic model reads, built without
collectors) is then taken at that collection time (``extra`` = held cycles - 1, interpolated on the table's
grid of collection cycles, as the model reads it) twice: as the model has it, and with the SM's collectors
per scheduler, each held by its instruction for its collection (``collectors=``).  A warp with about one
collector collects its independent instructions one after another, which the schedule without collectors
(and the soft minimum of the model's collector and dependence bounds) does not compound.  The memory
latency is the table's lowest (every load an L1D hit) and its middle column.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def simulated(workload: str, gpu: str, point: dict) -> tuple[float, float]:
    """The simulator's baseline IPC at ``point`` and the cycles an instruction held a collector."""
    from rfmodel.calibrate import DEFAULT_ARCH
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import _point_sm, _simulate_workload, resolve_gpu
    from rfmodel.sim.engine import SimOptions, simulate_trace

    sm = resolve_gpu(gpu)
    d = get_design("baseline")
    _, trace = _simulate_workload(workload, sm, arch=DEFAULT_ARCH, seed=0, max_warps=None)
    own = {k: v for k, v in point.items() if k in d.parameters}  # the bank speed is the design's
    run = simulate_trace(trace, _point_sm(sm, point), d, own, SimOptions())
    c = run.counts
    return float(run.metrics["ipc"]), c["coll_busy"] / max(c["issued"], 1)


def scheduled(workload: str, gpu: str, collectors: int, extra: float) -> tuple[list[float], int]:
    """The list schedule's IPC at ``extra`` collection cycles (lowest and middle memory-latency columns) of
    the group of CTAs the table holds nearest above the resident ones, with ``collectors`` per scheduler (0:
    none), and that group's CTAs."""
    from rfmodel.analytic import profile as P
    from rfmodel.analytic.engine import issue_resources, resident_warps, workload_profile
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu(gpu)
    prof = workload_profile(workload, sm)
    src = prof.source
    hit = src._kept()
    load_terms = P.trace_load_terms(hit["trace"], hit["rank"], src.caches, src.l1_hit_latency)
    ctas = int(np.asarray(resident_warps(prof, sm, {}))) // max(prof.warps_per_cta, 1)
    level = int(np.searchsorted(P.SCHED_CTAS, max(ctas, 1)))
    level = min(level, len(P.SCHED_CTAS) - 1)
    cells = np.zeros((len(P.SCHED_CTAS), len(P.CHAIN2_EXTRA), len(P.MEM_LAT_GRID)), dtype=np.bool_)
    cells[level] = True
    cpi = P.sched_table(
        hit["trace"], src.latencies, src.exec_latencies, issue_resources(sm), load_terms, cells, collectors
    )[level]
    cols = (0, cpi.shape[1] // 2)
    return [1.0 / float(np.interp(extra, P.CHAIN2_EXTRA, cpi[:, j])) for j in cols], int(P.SCHED_CTAS[level])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="stencil2d_regtile")
    ap.add_argument("--gpu", default="volta-v100")
    ap.add_argument("--latency-x", type=float, default=6.0, help="main_rf_latency_x (default 6)")
    ap.add_argument("--collectors", type=int, nargs="+", default=[8, 16, 32], help="SM collector units")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    from rfmodel.errors import RfmodelError
    from rfmodel.evaluate import resolve_gpu

    try:
        sm = resolve_gpu(args.gpu)
    except RfmodelError as e:
        print(f"collector_schedule.py: error: {e}", file=sys.stderr)
        return 2
    typed = {k: v for k, v in sm.collectors.to_dict().items() if k != "gen" and v}
    if typed:  # the schedule's collectors are one generic pool per scheduler
        print(
            f"collector_schedule.py: error: {args.gpu} has typed collector sets ({typed}); this check takes "
            "an SM with generic collectors only (e.g. volta-v100)",
            file=sys.stderr,
        )
        return 2
    sched = sm.schedulers_per_sm
    print(f"{args.workload} on {args.gpu}, baseline at main_rf_latency_x {args.latency_x:g}")
    print(
        "collectors | simulator IPC | held cycles | schedule without collectors | with them (per scheduler)"
    )
    try:
        _table(args, sched)
    except RfmodelError as e:
        print(f"collector_schedule.py: error: {e}", file=sys.stderr)
        return 2
    return 0


def _table(args, sched: int) -> None:
    """The rows of :func:`main`'s table, one per collector count."""
    for n in args.collectors:
        ipc, held = simulated(
            args.workload, args.gpu, {"main_rf_latency_x": args.latency_x, "collector_units": n}
        )
        extra = max(held - 1.0, 0.0)
        without, ctas = scheduled(args.workload, args.gpu, 0, extra)
        per = max(n // sched, 1)
        with_c, _ = scheduled(args.workload, args.gpu, per, extra)
        print(
            f"{n:10d} | {ipc:13.3f} | {held:11.2f} | {without[0]:.3f} / {without[1]:.3f}"
            f"{'':13s}| {with_c[0]:.3f} / {with_c[1]:.3f} ({per}; {ctas} CTAs scheduled)"
        )


if __name__ == "__main__":
    raise SystemExit(main())
