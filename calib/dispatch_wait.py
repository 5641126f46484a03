"""Collector occupancy taken apart: the collectors that collect operands and those whose instruction waits
for its execution unit, in the simulator and in the analytic model (docs/models.md, "Collector occupancy").

    python calib/dispatch_wait.py                                  # the calibration's workloads, both GPUs
    python calib/dispatch_wait.py --gpu volta-v100 --workload is_aes nbody_forces
    python calib/dispatch_wait.py --design stt --point '{"main_rf_latency_x": 6}' --gpu volta-v100

The simulator counts, each cycle, the collectors whose operands have all been read but whose instruction
waits for its unit's dispatch register (``coll_wait``; of memory instructions, waiting for the load/store
unit: ``coll_wait_mem``); the rest of ``coll_busy`` is collection.  The model's collection is ``IPC x``
the collection time (Little's law) and its waiting the dispatch queue
(``rfmodel.analytic.throughput.dispatch_queue``), here also taken apart into its load/store pipeline and
its other units (each part bounded by the free collectors alone, so the parts may sum to more than the
whole).  Both per SM, in collectors; the occupancy error in points of the SM's collectors.  Last, the
memory instructions that wait for the load/store unit in the issue schedule of the same trace
(``rfmodel.analytic.stream.issue_schedule``, the order the profile reads the L1D in: it holds the warps'
dependences, barriers and phases, and the unit's lines and MSHRs, but counts the issue buffers and dispatch
registers too) and the share of its cycles the unit is busy there: the model's load/store part is this
queue's collectors' share (the profile's ``sched_lsu``) at the model's pace.  ``--design`` at ``--point``
(default: the baseline at each GPU's defaults), on the workload's whole SM share (as ``rfmodel.evaluate``
runs it).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def model_parts(workload: str, gpu: str, design: str = "baseline", point: dict | None = None) -> dict:
    """The design's analytic collecting and waiting collectors (all, load/store, other units) at
    ``point`` (SM fields and the design's parameters)."""
    import rfmodel
    import rfmodel.analytic.throughput as T

    seen = []
    real = T.dispatch_queue

    def spy(rows, *args):
        """The dispatch queue as it is, keeping its inputs."""
        seen.append((rows, *args))
        return real(rows, *args)

    T.dispatch_queue = spy
    try:
        grid = {k: [v] for k, v in (point or {}).items()}
        ds = rfmodel.evaluate(design, workload, gpu, params=grid or None)
    finally:
        T.dispatch_queue = real
    rows, ipc, mem_rate, collecting, *rest = seen[-1]
    is_mem = rows[2]

    def part(keep):
        """The queue of the unit rows ``keep`` alone."""
        sub = (*(a[keep] for a in rows[:4]), rows[4], rows[5][keep])
        return float(np.ravel(real(sub, ipc, mem_rate, collecting, *rest))[0])

    return {
        "collecting": float(np.ravel(collecting)[0]),
        "waiting": float(np.ravel(real(rows, ipc, mem_rate, collecting, *rest))[0]),
        "waiting_mem": part(is_mem),
        "waiting_alu": part(~is_mem),
        "occupancy": float(ds["collector_occupancy"].values.ravel()[0]),
    }


def sim_parts(workload: str, gpu: str, design: str = "baseline", point: dict | None = None) -> dict:
    """The design's simulated collecting and waiting collectors (all, load/store), per cycle, at
    ``point``; the issue schedule's load/store queue on the SM's own."""
    from rfmodel.analytic.engine import memory_pipeline
    from rfmodel.analytic.stream import issue_schedule
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import _point_sm, _simulate_workload, resolve_gpu
    from rfmodel.sim import simulate_trace

    sm = resolve_gpu(gpu)
    _, trace = _simulate_workload(workload, sm, arch="sm_80", seed=0, max_warps=None)
    scheduled = issue_schedule(trace, memory_pipeline(trace, sm), stats=True)
    d = get_design(design)
    point = dict(point or {})
    typed = d.resolve({k: v for k, v in point.items() if k in d.parameters})
    sm_pt = _point_sm(sm, point)
    run = simulate_trace(trace, sm_pt, d, typed)
    cyc = run.metrics["cycles"]
    c = run.counts
    return {
        "collecting": (c["coll_busy"] - c["coll_wait"]) / cyc,
        "waiting": c["coll_wait"] / cyc,
        "waiting_mem": c["coll_wait_mem"] / cyc,
        "occupancy": run.metrics["collector_occupancy"],
        "collectors": sm_pt.collectors.total,
        "schedule_lsu": (np.nan, np.nan) if scheduled is None else tuple(scheduled[2].values()),
    }


def main(argv=None) -> int:
    from rfmodel.calibrate import DEFAULT_SWEEP
    from rfmodel.errors import RfmodelError

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", nargs="+", default=list(DEFAULT_SWEEP["gpus"]))
    ap.add_argument("--workload", nargs="+", default=list(DEFAULT_SWEEP["workloads"]))
    ap.add_argument("--design", default="baseline")
    ap.add_argument("--point", default="{}", help="a design point as JSON, e.g. '{\"main_rf_latency_x\": 6}'")
    a = ap.parse_args(argv)
    try:
        point = json.loads(a.point)
    except json.JSONDecodeError as e:
        ap.error(f"--point {a.point!r} is not JSON: {e}")
    if not isinstance(point, dict):
        ap.error(f"--point {a.point!r}: a JSON object of parameter names and values")
    warnings.simplefilter("ignore")
    for gpu in a.gpu:
        print(
            f"{gpu}: collectors per SM collecting / waiting (load/store + other units), simulator | model | "
            "the issue schedule's load/store queue"
        )
        err = {"occupancy": [], "collecting": [], "waiting": []}
        for w in a.workload:
            try:  # first: the model refuses a design or parameter it does not know
                m = model_parts(w, gpu, a.design, point)
            except RfmodelError as e:
                ap.error(str(e))
            s = sim_parts(w, gpu, a.design, point)
            n = s["collectors"]
            print(
                f"  {w:30s} sim {s['collecting']:5.2f} / {s['waiting']:5.2f} "
                f"({s['waiting_mem']:4.2f} + {s['waiting'] - s['waiting_mem']:4.2f}) | model "
                f"{m['collecting']:5.2f} / {m['waiting']:5.2f} ({m['waiting_mem']:4.2f} + "
                f"{m['waiting_alu']:4.2f}) | schedule {s['schedule_lsu'][0]:5.2f} (unit "
                f"{s['schedule_lsu'][1]:.2f} busy)  occupancy {s['occupancy']:.3f} / {m['occupancy']:.3f}",
                flush=True,
            )
            err["occupancy"].append(abs(m["occupancy"] - s["occupancy"]) * 100)
            err["collecting"].append(abs(m["collecting"] - s["collecting"]) / n * 100)
            err["waiting"].append(abs(m["waiting"] - s["waiting"]) / n * 100)
        print(
            f"  mean |error| in points of the SM's collectors over {len(a.workload)} workloads: occupancy "
            f"{np.mean(err['occupancy']):.1f}, collecting {np.mean(err['collecting']):.1f}, waiting "
            f"{np.mean(err['waiting']):.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
