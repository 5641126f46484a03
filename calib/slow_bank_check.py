"""The baseline over slow register banks against the simulator: every baseline simulation of the calibration
at ``main_rf_latency_x`` 1 (no parameter), 3 and 6 (docs/models.md, "Anchor"; docs/validation.md).

    python calib/slow_bank_check.py [--checkpoints calib/checkpoints] [--calibration FILE] [--quiet]

Reads the calibration's baseline records whose only parameter is ``main_rf_latency_x`` (its checkpoint file,
from ``python calib/run.py``) and answers each with the analytic engine (the package's calibration, or
``--calibration``).  Prints each record and the mean absolute relative error of the IPC per bank speed and
GPU: where a design's gain over slow banks (LTRF, RFC, Malekeh) is read against this baseline, its error
here is the effect's.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    import rfmodel

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    ap.add_argument("--calibration", default=None, help="calibration file (default: the package's)")
    ap.add_argument("--quiet", action="store_true", help="the summary only")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    sims = {}
    with open(Path(a.checkpoints) / "results.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r["design"] != "baseline" or set(r["params"]) - {"main_rf_latency_x"}:
                continue
            x = float(r["params"].get("main_rf_latency_x", 1))
            sims[(r["gpu"], r["workload"], x)] = r["sim"]["ipc"]
    err = defaultdict(list)
    for (gpu, w, x), sim in sorted(sims.items()):
        point = {"main_rf_latency_x": [x]}
        ds = rfmodel.evaluate("baseline", w, gpu, params=point, calibration=a.calibration)
        m = float(ds["ipc"].values.ravel()[0])
        e = m / sim - 1.0
        err[(gpu, x)].append(abs(e))
        if not a.quiet:
            print(f"{gpu:14s} {w:28s} {x:3.0f}x  sim {sim:.3f}  model {m:.3f} ({100 * e:+.0f} %)", flush=True)
    for (gpu, x), v in sorted(err.items()):
        print(f"{gpu:14s} {x:3.0f}x  mean |error| {100 * np.mean(v):5.1f} %  over {len(v)} kernels")
    slow = [e for (_, x), v in err.items() if x > 1 for e in v]
    print(f"slow banks (3x, 6x): mean |error| {100 * np.mean(slow):.1f} % over {len(slow)} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
