"""Bank-conflict stalls per instruction, model against simulator, by workload and by point: where the
analytic bank-stall count errs (docs/validation.md, "Reading the analytic-model errors").

    python calib/stall_by_workload.py [--design baseline] [--checkpoints calib/checkpoints]

Reads the calibration's simulations (its checkpoint file, from ``python calib/run.py``) and the package's
calibrated coefficients; prints, per workload and per (GPU, point), the records, the median relative error
``|model - sim| / max(sim, 0.01)`` and the means of both counts per instruction.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rows(records: list[dict], design: str) -> list[dict]:
    from rfmodel.analytic.calibration import load_calibration
    from rfmodel.calibrate import DEFAULT_SWEEP, _groups, coef_for
    from rfmodel.calibrate.metrics import ran

    cal = load_calibration()
    out = []
    for g in _groups([r for r in records if r["design"] == design and r.get("sim")], dict(DEFAULT_SWEEP)):
        pred = g.predict(coef_for(cal["designs"][design], g.recs[0]["gpu"]))
        for i, r in enumerate(g.recs):
            s = r["sim"]
            if ran(s):
                n = s["warp_instructions"]
                out.append(
                    {
                        "gpu": r["gpu"],
                        "workload": r["workload"],
                        "params": r["params"],
                        "sim": s["bank_conflict_stall_cycles"] / n,
                        "model": float(pred["bank_conflict_stall_cycles"][i]) / n,
                    }
                )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", default="baseline")
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    a = ap.parse_args(argv)
    path = Path(a.checkpoints) / "results.jsonl"
    if not path.is_file():
        print(f"{path}: no calibration simulations (run python calib/run.py first)", file=sys.stderr)
        return 2
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rs = rows(recs, a.design)
    for key in ("workload", "point"):
        by = defaultdict(list)
        for r in rs:
            k = r["workload"] if key == "workload" else (r["gpu"], json.dumps(r["params"], sort_keys=True))
            by[k].append(r)
        print(f"by {key}:")
        for k, v in sorted(by.items()):
            rel = np.median([abs(r["model"] - r["sim"]) / max(r["sim"], 0.01) for r in v])
            sim, model = np.mean([r["sim"] for r in v]), np.mean([r["model"] for r in v])
            print(
                f"  {k}: {len(v)} records, median error {100 * rel:.0f} %, sim {sim:.3f} model {model:.3f} "
                "per instruction"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
