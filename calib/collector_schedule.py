"""The baseline over slow register banks: the profile's list schedule with and without operand collectors,
against the simulator (docs/validation.md, "The effects at slow banks carry both engines' errors").

    python calib/collector_schedule.py                                   # stencil2d_regtile, volta-v100, 6x
    python calib/collector_schedule.py --workload sgemm_tiled --latency-x 3 --collectors 8 16 32
    python calib/collector_schedule.py --checkpoints calib/checkpoints    # every baseline record vs the model

For each SM collector count the simulator runs the baseline at the bank speed and reports its IPC and the
cycles an instruction held a collector (``coll_busy / issued``).  The profile's list schedule of the
resident CTAs (``rfmodel.analytic.profile.sched_table``, the table the analytic model reads, built without
collectors) is then taken at that collection time (``extra`` = held cycles - 1, interpolated on the table's
grid of collection cycles, as the model reads it) twice: as the model has it, and with the SM's collectors
per scheduler, each held by its instruction for its collection (``collectors=``).  A warp with about one
collector collects its independent instructions one after another, which the schedule without collectors
(and the soft minimum of the model's collector and dependence bounds) does not compound.  The memory
latency is the table's lowest (every load an L1D hit) and its middle column.

With ``--checkpoints`` (a calibration's, ``python calib/run.py``): every baseline record at 1x and slower
banks on the GPU, the model's IPC against the simulator's, beside the schedule with the SM's collectors per
scheduler taken at the model's own collection time and loaded latency at the point, raw and scaled by the
model's answer at 1x: whether the collectors in the schedule, alone, would do better than the model.
"""

from __future__ import annotations

import argparse
import functools
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


@functools.lru_cache(maxsize=64)
def schedule(workload: str, gpu: str, collectors: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The list schedule's cycles per instruction ``[collection cycles, memory latency]`` of the group of
    CTAs the profile's table holds nearest above the resident ones, with ``collectors`` per scheduler (0:
    none), its memory-latency grid and that group's CTAs."""
    from rfmodel.analytic import profile as P
    from rfmodel.analytic.engine import issue_resources, resident_warps, workload_profile
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu(gpu)
    prof = workload_profile(workload, sm)
    src = prof.source
    hit = src._kept()
    load_terms = P.trace_load_terms(hit["trace"], hit["rank"], src.caches, src.l1_hit_latency)
    ctas = int(np.asarray(resident_warps(prof, sm, {}))) // max(prof.warps_per_cta, 1)
    level = min(int(np.searchsorted(P.SCHED_CTAS, max(ctas, 1))), len(P.SCHED_CTAS) - 1)
    cells = np.zeros((len(P.SCHED_CTAS), len(P.CHAIN2_EXTRA), len(P.MEM_LAT_GRID)), dtype=np.bool_)
    cells[level] = True
    cpi = P.sched_table(
        hit["trace"], src.latencies, src.exec_latencies, issue_resources(sm), load_terms, cells, collectors
    )[level]
    return cpi, P.mem_latency_grid(*load_terms), int(P.SCHED_CTAS[level])


def schedule_ipc(cpi: np.ndarray, grid: np.ndarray, extra: float, latency: float) -> float:
    """The schedule's IPC at ``extra`` collection cycles and a mean memory latency ``latency`` (linear in
    each, as the model reads its tables)."""
    from rfmodel.analytic.profile import CHAIN2_EXTRA

    rows = np.array([np.interp(latency, grid, cpi[k]) for k in range(cpi.shape[0])])
    return 1.0 / float(np.interp(extra, CHAIN2_EXTRA, rows))


def scheduled(workload: str, gpu: str, collectors: int, extra: float) -> tuple[list[float], int]:
    """:func:`schedule`'s IPC at ``extra`` collection cycles in its lowest and middle memory-latency
    columns, and its group's CTAs."""
    cpi, grid, ctas = schedule(workload, gpu, collectors)
    return [schedule_ipc(cpi, grid, extra, grid[j]) for j in (0, len(grid) // 2)], ctas


def versus_model(checkpoints: Path, gpu: str, per_scheduler: int) -> None:
    """Every baseline record of a calibration's checkpoints on ``gpu`` at 1x and slower banks: the
    simulator's IPC, the model's, and the list schedule with ``per_scheduler`` collectors at the model's
    own collection time and loaded memory latency at the point, raw and scaled by the model's answer at 1x
    (its anchor and other bounds, which the schedule lacks); the mean |error| per bank speed."""
    import json

    import rfmodel
    import rfmodel.analytic.throughput as T

    sims = {}
    with open(Path(checkpoints) / "results.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r["design"] == "baseline" and r["gpu"] == gpu and not set(r["params"]) - {"main_rf_latency_x"}:
                sims[(r["workload"], float(r["params"].get("main_rf_latency_x", 1)))] = r["sim"]["ipc"]
    seen = []
    real = T.interval_model

    def spy(*a, **kw):
        """The shared SM model as it is, keeping its collection time and loaded latency at the point."""
        m = real(*a, **kw)
        seen.append((float(np.ravel(m["t_collect"])[0]), float(np.ravel(m["load_latency"])[0])))
        return m

    T.interval_model = spy
    errs: dict = {}
    try:
        for w in sorted({w for w, _ in sims}):
            xs = sorted(x for ww, x in sims if ww == w)
            if 1.0 not in xs:
                continue
            got = {}
            for x in xs:
                seen.clear()
                ds = rfmodel.evaluate("baseline", w, gpu, params={"main_rf_latency_x": [x]})
                t_c, lat = seen[-1]
                cpi, grid, _ = schedule(w, gpu, per_scheduler)
                got[x] = (
                    float(ds["ipc"].values.ravel()[0]),
                    schedule_ipc(cpi, grid, max(t_c - 1.0, 0.0), lat),
                )
            for x in xs[1:]:
                sim, (model, raw) = sims[(w, x)], got[x]
                scaled = got[1.0][0] * raw / got[1.0][1]
                e = (model / sim - 1, raw / sim - 1, scaled / sim - 1)
                errs.setdefault(x, []).append(e)
                print(
                    f"{w:28s} {x:3.0f}x  sim {sim:.3f}  model {model:.3f} ({e[0]:+.0%})  schedule {raw:.3f} "
                    f"({e[1]:+.0%})  scaled {scaled:.3f} ({e[2]:+.0%})",
                    flush=True,
                )
    finally:
        T.interval_model = real
    for x, v in sorted(errs.items()):
        a = np.abs(np.array(v)) * 100
        print(
            f"{x:3.0f}x  mean |error| over {len(v)} kernels: model {a[:, 0].mean():.1f} %, schedule "
            f"{a[:, 1].mean():.1f} %, scaled {a[:, 2].mean():.1f} %"
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default=None, help="default stencil2d_regtile")
    ap.add_argument("--gpu", default="volta-v100")
    ap.add_argument("--latency-x", type=float, default=None, help="main_rf_latency_x (default 6)")
    ap.add_argument(
        "--collectors", type=int, nargs="+", default=None, help="SM collector units (default 8 16 32)"
    )
    ap.add_argument(
        "--checkpoints",
        default=None,
        help="instead: every baseline record of these calibration checkpoints on the GPU against the model "
        "and the schedule with the SM's own collectors (calib/run.py's --checkpoints folder)",
    )
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    from rfmodel.errors import RfmodelError

    try:
        _run(args)
    except (RfmodelError, OSError) as e:
        print(f"collector_schedule.py: error: {e}", file=sys.stderr)
        return 2
    return 0


def _run(args) -> None:
    """:func:`main` after its arguments: a bad one is an ``RfmodelError``."""
    from rfmodel.errors import RfmodelError
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu(args.gpu)
    typed = {k: v for k, v in sm.collectors.to_dict().items() if k != "gen" and v}
    if typed:  # the schedule's collectors are one generic pool per scheduler
        raise RfmodelError(
            f"{args.gpu} has typed collector sets ({typed}); this check takes an SM with generic collectors "
            "only (e.g. volta-v100)"
        )
    sched = sm.schedulers_per_sm
    if args.checkpoints is not None:
        given = [
            f"--{k.replace('_', '-')}" for k in ("workload", "latency_x", "collectors") if getattr(args, k)
        ]
        if given:  # every record of the checkpoints at the SM's own collectors: these would change nothing
            raise RfmodelError(
                f"--checkpoints takes every baseline record; {', '.join(given)} not allowed with it"
            )
        versus_model(Path(args.checkpoints), args.gpu, max(sm.collectors.gen // sched, 1))
        return
    args.workload = args.workload or "stencil2d_regtile"
    args.latency_x = 6.0 if args.latency_x is None else args.latency_x
    args.collectors = args.collectors or [8, 16, 32]
    bad = [n for n in args.collectors if n <= 0 or n % sched]
    if bad:
        raise RfmodelError(f"--collectors {bad}: each must be a positive multiple of the {sched} schedulers")
    print(f"{args.workload} on {args.gpu}, baseline at main_rf_latency_x {args.latency_x:g}")
    print(
        "collectors | simulator IPC | held cycles | schedule without collectors | with them (per scheduler)"
    )
    _table(args, sched)


def _table(args, sched: int) -> None:
    """The rows of :func:`main`'s table, one per collector count."""
    for n in args.collectors:
        ipc, held = simulated(
            args.workload, args.gpu, {"main_rf_latency_x": args.latency_x, "collector_units": n}
        )
        extra = max(held - 1.0, 0.0)
        without, ctas = scheduled(args.workload, args.gpu, 0, extra)
        per = n // sched
        with_c, _ = scheduled(args.workload, args.gpu, per, extra)
        print(
            f"{n:10d} | {ipc:13.3f} | {held:11.2f} | {without[0]:.3f} / {without[1]:.3f}"
            f"{'':13s}| {with_c[0]:.3f} / {with_c[1]:.3f} ({per}; {ctas} CTAs scheduled)"
        )


if __name__ == "__main__":
    raise SystemExit(main())
