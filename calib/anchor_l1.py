"""How the anchor's factor moves with the L1D: the baseline's anchor factor (the schedule's IPC over the
baseline's analytic IPC at its defaults, :func:`rfmodel.analytic.engine.anchor_factor`) on SMs that differ
from the preset only in the L1D's size, and, for designs that change the capacity the L1D's data gets
(the Cache-Emulated RF, the unified memory), their analytic IPC and hit rate on the preset against the
simulator's, with the factor the baseline has at the design's own hit rate (interpolated between the sizes).

    python calib/anchor_l1.py                                   # bicg_like merge_pass syrk_like, fermi
    python calib/anchor_l1.py --workloads saxpy --designs cerf --sizes 16 64

The anchor today is one number per workload, measured at the preset's L1D: a design whose hit rate lies far
from the baseline's inherits the shared model's error at the baseline's hit rate (docs/validation.md,
"default path").
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
    from rfmodel.evaluate import resolve_gpu

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="fermi-gtx480")
    ap.add_argument("--workloads", nargs="*", default=["bicg_like", "merge_pass", "syrk_like"])
    ap.add_argument("--designs", nargs="*", default=["cerf", "unified"])
    ap.add_argument("--sizes", nargs="*", type=int, default=[16, 32, 48, 64, 128], help="L1D sizes in KB")
    a = ap.parse_args(argv)

    def first(x) -> float:
        return float(np.asarray(x.values).ravel()[0])

    sm0 = resolve_gpu(a.gpu)
    for w in a.workloads:
        hits, factors = [], []
        for kb in sorted(a.sizes):
            sm = replace(sm0, l1d=replace(sm0.l1d, size_bytes=kb * 1024))
            ds = rfmodel.evaluate("baseline", w, sm, method="analytic")
            f = list(json.loads(ds.attrs["anchor"].split(": ", 1)[1]).values())[0]
            hits.append(first(ds.l1d_hit_rate))
            factors.append(f)
            print(f"{w:16s} L1D {kb:4d} KB: baseline hit {hits[-1]:.3f}, anchored IPC {first(ds.ipc):.3f}, "
                  f"raw {first(ds.ipc) / f:.3f}, factor {f:.3f}")  # fmt: skip
        order = np.argsort(hits)
        h_grid, f_grid = np.asarray(hits)[order], np.asarray(factors)[order]
        base = rfmodel.evaluate("baseline", w, sm0, method="analytic")
        f0 = list(json.loads(base.attrs["anchor"].split(": ", 1)[1]).values())[0]
        for d in a.designs:
            an = rfmodel.evaluate(d, w, sm0, method="analytic")
            si = rfmodel.evaluate(d, w, sm0, method="simulate")
            h = first(an.l1d_hit_rate)
            f_h = float(np.interp(h, h_grid, f_grid))
            ipc, sim = first(an.ipc), first(si.ipc)
            print(f"  {d:8s} hit {h:.3f} (simulator {first(si.l1d_hit_rate):.3f}): IPC {ipc:.3f} "
                  f"({ipc / sim - 1:+.1%}), with the factor at its hit rate {ipc / f0 * f_h:.3f} "
                  f"({ipc / f0 * f_h / sim - 1:+.1%}); simulator {sim:.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
