"""How far the profile's list-schedule table (``sched_cpi``) is from monotone in the collection delay ``k``:
a list schedule has scheduling anomalies (a longer delay can reorder the warps' issue so that a group
finishes sooner), and the interval model's fixed point reads the table as if more delay never helped
(docs/models.md, "Known limitation: the table is not monotone in k").

    python calib/sched_monotone.py                       # fermi-gtx480 and volta-v100, every built-in kernel
    python calib/sched_monotone.py --gpus fermi-gtx480 --workloads saxpy bicg_like

Prints, per GPU, the steps from one tabulated ``k`` to the next (every CTA level and memory latency of every
kernel's full table) whose cycles per instruction fall by more than ``--tolerance``, and the largest fall.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    import numpy as np

    from rfmodel.analytic.engine import workload_profile
    from rfmodel.errors import RfmodelError
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.workload.suite import builtin_names

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", nargs="+", default=["fermi-gtx480", "volta-v100"])
    ap.add_argument("--workloads", nargs="+", default=None)
    ap.add_argument("--tolerance", type=float, default=0.01, help="relative fall that counts (default 0.01)")
    args = ap.parse_args(argv)

    for gpu in args.gpus:
        sm = resolve_gpu(gpu)
        steps = falls = 0
        worst = (0.0, "")
        for w in args.workloads or builtin_names():
            try:
                prof = workload_profile(w, sm).need("sched")
            except RfmodelError:
                continue  # one CTA does not fit the SM
            levels, cpi, _pending = prof.sched_view()
            for li, level in enumerate(levels):
                table = cpi[li]
                if not np.isfinite(table).all():
                    continue
                change = np.diff(table, axis=0) / table[:-1]  # from one k to the next, per memory latency
                steps += change.size
                falls += int((change < -args.tolerance).sum())
                if change.min() < worst[0]:
                    worst = (float(change.min()), f"{w}, {int(level)} CTA(s)")
        share = 100.0 * falls / max(steps, 1)
        print(
            f"{gpu}: {falls} of {steps} steps in k fall by more than {100 * args.tolerance:g} % "
            f"({share:.1f} %); largest fall {-100 * worst[0]:.1f} % ({worst[1] or 'none'})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
