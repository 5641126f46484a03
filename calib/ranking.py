"""How a calibration orders the designs on the held-out workloads, as the calibration report computes it.

    python calib/ranking.py                                   # the package's calibration
    python calib/ranking.py --calibration old.json            # another file (e.g. `git show REV:...`)

Reads the default sweep's simulations from ``calib/checkpoints/`` (simulating what is missing, as
``calib/run.py`` does), evaluates every record with the file's coefficients and prints the report's ranking
figures (:func:`rfmodel.calibrate.effects.ranking`): the pairs of records the simulator separates by 2 % or
more that the model orders alike, and Kendall's tau median; then, per design, how many of the pairs it is
in the model orders the other way (the pairs of all records less those without the design's).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    from rfmodel.analytic.calibration import DEFAULT_FILE
    from rfmodel.calibrate import ANCHOR_SWEEP_KEY, DEFAULT_SWEEP, record_values, run_jobs, split, sweep_jobs
    from rfmodel.calibrate.effects import ranking

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calibration", default=str(DEFAULT_FILE), help="default: the package's")
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    fitted = json.loads(Path(a.calibration).read_text())["designs"]
    sweep = dict(DEFAULT_SWEEP)
    records, _ = run_jobs(sweep_jobs(sweep), a.checkpoints, workers=a.workers)
    split(records, sweep["holdout_fraction"], sweep["seed"])
    values = record_values(records, fitted, {**sweep, ANCHOR_SWEEP_KEY: fitted.get("baseline")})
    whole = ranking(records, values)
    n, wrong = whole["n_pairs"], round(whole["n_pairs"] * (1.0 - whole["pair_agreement"]))
    print(
        f"{a.calibration}: {n} pairs separated by 2 % or more, {100 * whole['pair_agreement']:.2f} % "
        f"ordered alike; Kendall's tau median {whole['kendall_tau_median']:.4f} over {whole['n_groups']} "
        "groups"
    )
    print("design         pairs  ordered the other way")
    for d in sorted({r["design"] for r in records if id(r) in values}):
        rest = ranking([r for r in records if r["design"] != d], values)
        n_d = n - rest["n_pairs"]
        w_d = wrong - round(rest["n_pairs"] * (1.0 - (rest["pair_agreement"] or 0.0)))
        print(f"{d:12s} {n_d:7d}  {w_d:6d} ({100 * w_d / max(n_d, 1):.1f} %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
