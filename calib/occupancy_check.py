"""A grid's register count against an SM spec that has it, both against the simulator: the baseline at the
calibration's register points (docs/validation.md, "Reading the analytic-model errors"; docs/models.md,
"Anchor").

    python calib/occupancy_check.py [--regs 16384] [--checkpoints calib/checkpoints]

Reads the calibration's baseline simulations at ``regs_per_sm`` = ``--regs`` (its checkpoint file, from
``python calib/run.py``) and answers each point with the package's calibration twice: from a grid
(``params={"regs_per_sm": [R]}``) and from the SM spec with ``R`` registers.  Prints each record and the
mean absolute relative error of both against the simulator.
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


def main(argv=None) -> int:
    import rfmodel
    from rfmodel.errors import RfmodelError
    from rfmodel.evaluate import _point_sm, resolve_gpu

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--regs", type=int, default=16384)
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    point = {"regs_per_sm": a.regs}
    sims = {}
    with open(Path(a.checkpoints) / "results.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r["design"] == "baseline" and r["params"] == point:
                sims[(r["gpu"], r["workload"])] = r["sim"]["ipc"]
    err_grid, err_spec = [], []
    for (gpu, w), sim in sorted(sims.items()):
        try:
            g = rfmodel.evaluate("baseline", w, gpu, params={k: [v] for k, v in point.items()})
            g = g["ipc"].values.ravel()[0]
            s = rfmodel.evaluate("baseline", w, _point_sm(resolve_gpu(gpu), point))["ipc"].values.ravel()[0]
        except RfmodelError:  # a kernel that does not fit the registers
            continue
        err_grid.append(abs(g / sim - 1.0))
        err_spec.append(abs(s / sim - 1.0))
        print(
            f"{gpu:14s} {w:30s} sim {sim:.3f}  grid {g:.3f} ({100 * (g / sim - 1):+.0f} %)  "
            f"spec {s:.3f} ({100 * (s / sim - 1):+.0f} %)",
            flush=True,
        )
    print(
        f"mean |error| over {len(err_grid)} points: grid {100 * np.mean(err_grid):.1f} %, "
        f"spec {100 * np.mean(err_spec):.1f} %"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
