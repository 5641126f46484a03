"""Calibrate the analytic models against the cycle simulator (resumable).

    python calib/run.py                      # the default sweep, 2 worker processes
    python calib/run.py --sweep quick --workers 1

Simulations are kept one JSON line each in ``calib/checkpoints/results.jsonl`` (re-running skips the
finished ones; the ``<key>.json`` files of earlier versions are read and copied into it); the fitted
coefficients go to ``rfmodel/data/calibration/analytic.json`` (what ``rfmodel.evaluate`` loads by
default), the held-out report to ``calib/report.json``, and the section "Analytic models versus the
simulator" of ``docs/validation.md`` is regenerated from it.
Same as ``rfmodel calibrate``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    from rfmodel.cli import run_calibration

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", default="default", help="default | quick | a sweep JSON file")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--design", action="append", help="only these designs (default: every calibratable one)")
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    ap.add_argument("--out", default=None, help="calibration file (default: the package's analytic.json)")
    ap.add_argument("--report", default=str(ROOT / "calib" / "report.json"))
    ap.add_argument("--validation-doc", default=str(ROOT / "docs" / "validation.md"))
    ap.add_argument("--coverage-samples", type=int, default=40)
    ap.add_argument(
        "--adopt",
        metavar="DIR",
        default=None,
        help="reuse another checkpoint folder's simulations after simulating --adopt-verify of "
        "each design's again (rfmodel calibrate --adopt)",
    )
    ap.add_argument("--adopt-verify", type=int, default=1, metavar="N")
    a = ap.parse_args(argv)
    from rfmodel.errors import RfmodelError

    try:
        res = run_calibration(a)
    except RfmodelError as e:  # bad input (a sweep, --adopt): one line, and nothing written
        print(f"calib/run.py: error: {e}", file=sys.stderr)
        return 2
    if res.get("incomplete"):
        print("incomplete sweep", file=sys.stderr)
        return 1
    for d, r in sorted(res["designs"].items()):
        e = r.get("effects", {})
        mae = e.get("ipc_effect_mae")
        print(
            f"{d:10s} held-out {r.get('n_heldout', 0):4d}  "
            f"IPC MAPE {100 * r.get('ipc_mape', float('nan')):5.1f} %"
            + ("" if mae is None else f"  IPC effect MAE {mae:5.2f} points")
        )
    rk = res.get("ranking", {})
    if rk.get("n_groups"):
        print(
            f"Kendall tau of the designs' order: median {rk['kendall_tau_median']:.2f} over "
            f"{rk['n_groups']} groups"
        )
    if rk.get("n_pairs"):
        print(
            f"pairs the simulator separates by 2 % or more: {100 * rk['pair_agreement']:.1f} % "
            "ordered alike "
            f"({rk['n_pairs']} pairs)"
            + "".join(
                f"; by {100 * g['gap']:.0f} % {100 * g['agreement']:.1f} % ({g['n_pairs']})"
                for g in rk.get("pair_agreement_by_gap", [])[1:]
                if g["n_pairs"]
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
