"""How the order of the L1D access stream decides the analytic L1D hit rate: the cycle simulator's hit
rate per built-in kernel against the SM's L1D simulated on the executed trace's line stream in two
orders (:func:`rfmodel.analytic.profile.stream_order`): round-robin over every warp, and the profile's,
from the schedule of the SM's issue and memory pipeline (:func:`rfmodel.analytic.stream.issue_rank`).

    python calib/l1d_order.py                    # fermi-gtx480, every built-in kernel that fits
    python calib/l1d_order.py --gpu volta-v100 --workloads bicg_like syrk_like

Prints one row per kernel (with the schedule's cycles against the simulator's, and the schedule's own
seconds) and the mean absolute error (points) of each order and of the schedule's cycles.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    import numpy as np

    from rfmodel.analytic.engine import memory_pipeline
    from rfmodel.analytic.profile import _lru_hit_flags, l1d_stream
    from rfmodel.analytic.stream import issue_schedule
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import _simulation_input, resolve_gpu
    from rfmodel.sim.engine import SimOptions, simulate_trace
    from rfmodel.workload.suite import builtin_names

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", default="fermi-gtx480")
    ap.add_argument("--workloads", nargs="+", default=None)
    args = ap.parse_args(argv)

    d = get_design("baseline")
    sm = resolve_gpu(args.gpu)
    sets = sm.l1d.size_bytes // sm.l1d.line_bytes // sm.l1d.assoc
    orders = ["round-robin", "scheduled"]
    errs: dict[str, list[float]] = {o: [] for o in orders}
    print(f"{args.gpu}: L1D {sets} sets x {sm.l1d.assoc} ways; simulator against the stream orders")
    print(
        "kernel".ljust(20)
        + "simulator".rjust(10)
        + "".join(o.rjust(16) for o in orders)
        + "cycles: sim / schedule".rjust(26)
        + "schedule s".rjust(12)
    )
    cyc_err = []
    for w in args.workloads or builtin_names():
        _name, tr, kernel = _simulation_input(w, sm, arch="sm_80", seed=0, max_warps=None)
        run = simulate_trace(tr, sm, d, {}, SimOptions(), program=d.program_for(tr, {}, sm, kernel))
        if run.metrics["warps"] == 0:
            continue  # one CTA does not fit the SM
        if not len(l1d_stream(tr)[0]):
            continue  # no L1D accesses
        t0 = time.perf_counter()
        rank, cycles = issue_schedule(tr, memory_pipeline(tr, sm))
        secs = time.perf_counter() - t0
        cyc_err.append(abs(cycles / run.metrics["cycles"] - 1.0))
        sim_h = run.metrics["l1d_hit_rate"]
        cells = []
        for label, r in zip(orders, (None, rank), strict=True):
            lines, _rows, _loads = l1d_stream(tr, r)
            h = float(_lru_hit_flags(lines, sets, sm.l1d.assoc).mean())
            errs[label].append(abs(h - sim_h))
            cells.append(f"{h:.3f}".rjust(16))
        cyc = f"{run.metrics['cycles']:.0f} / {cycles:.0f}"
        row = "".join(cells) + cyc.rjust(26) + f"{secs:.3f}".rjust(12)
        print(w.ljust(20) + f"{sim_h:.3f}".rjust(10) + row)
    means = "".join(f"{100 * np.mean(v):.1f} pts".rjust(16) for v in errs.values())
    print("mean abs. error".ljust(30) + means + f"{100 * np.mean(cyc_err):.1f} %".rjust(26))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
