"""How the anchor's factor moves with the L1D: the baseline's anchor factor (the schedule's IPC over the
baseline's analytic IPC at its defaults, :func:`rfmodel.analytic.engine.anchor_factor`) on SMs that differ
from the preset only in the L1D's size, and, for designs that change the capacity the L1D's data gets
(the Cache-Emulated RF, the unified memory), their analytic IPC on the preset anchored by the one factor
and by the factor at their own hit rate (:func:`rfmodel.analytic.engine.anchor_curve`, what
``rfmodel.evaluate`` does), against the simulator's.

    python calib/anchor_l1.py                                   # bicg_like merge_pass syrk_like, fermi
    python calib/anchor_l1.py --workloads saxpy --designs cerf --sizes 16 64

With one number per workload, measured at the preset's L1D, a design whose hit rate lies far from the
baseline's would inherit the shared model's error at the baseline's hit rate (docs/validation.md, "default
path").
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    import numpy as np

    import rfmodel
    from rfmodel.analytic.engine import anchor_factor, resolve_calibration, run_analytic
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu, workload_profile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="fermi-gtx480")
    ap.add_argument("--workloads", nargs="*", default=["bicg_like", "merge_pass", "syrk_like"])
    ap.add_argument("--designs", nargs="*", default=["cerf", "unified"])
    ap.add_argument("--sizes", nargs="*", type=int, default=[16, 32, 48, 64, 128], help="L1D sizes in KB")
    a = ap.parse_args(argv)

    def first_value(x) -> float:
        return float(np.asarray(x, dtype=np.float64).ravel()[0])

    def first(x) -> float:
        return first_value(x.values)

    sm0 = resolve_gpu(a.gpu)
    for w in a.workloads:
        hits, factors = [], []
        for kb in sorted(a.sizes):
            sm = replace(sm0, l1d=replace(sm0.l1d, size_bytes=kb * 1024))
            ds = rfmodel.evaluate("baseline", w, sm, method="analytic")
            f = list(json.loads(ds.attrs["anchor"].split(": ", 1)[1]).values())[0]
            hits.append(first(ds.l1d_hit_rate))
            factors.append(f)
            print(
                f"{w:16s} L1D {kb:4d} KB: baseline hit {hits[-1]:.3f}, anchored IPC {first(ds.ipc):.3f}, "
                f"raw {first(ds.ipc) / f:.3f}, factor {f:.3f}"
            )
        prof = workload_profile(w, sm0)
        base = get_design("baseline")
        f0 = anchor_factor(base, prof, sm0, resolve_calibration(base, sm0, None)[0])
        for d in a.designs:
            design = get_design(d)
            one = first_value(
                run_analytic(design, prof, sm0, resolve_calibration(design, sm0, None)[0], anchor=f0)["ipc"]
            )
            an = rfmodel.evaluate(d, w, sm0, method="analytic")
            si = rfmodel.evaluate(d, w, sm0, method="simulate")
            ipc, sim = first(an.ipc), first(si.ipc)
            hit, sim_hit = first(an.l1d_hit_rate), first(si.l1d_hit_rate)
            print(
                f"  {d:8s} hit {hit:.3f} (simulator {sim_hit:.3f}): IPC with "
                f"one factor {one:.3f} ({one / sim - 1:+.1%}), at its own hit rate {ipc:.3f} "
                f"({ipc / sim - 1:+.1%}); simulator {sim:.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
