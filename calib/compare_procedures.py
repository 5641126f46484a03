"""Compare fitting procedures on one design: cross-validated and held-out errors of IPC and bank stalls.

    python calib/compare_procedures.py baseline '[{}, {"per_gpu": false}, {"prior": 0.1}]'
    python calib/compare_procedures.py rfc '[{}, {"stall_loss": "log"}]'

Each variant is a dict of sweep keys that :func:`rfmodel.calibrate.fit_procedure` reads (``prior``,
``per_gpu``, ``stall_loss``) over the default sweep; the simulations come from ``calib/checkpoints`` (run
``calib/run.py`` first, or they are simulated here).  Prints one line per variant: the cross-validated
figures (training workloads left out in turn: what a procedure should be chosen by) and the held-out ones.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    from rfmodel.calibrate import (
        DEFAULT_SWEEP,
        cv_spread,
        fit_procedure,
        heldout_errors,
        run_jobs,
        split,
        sweep_jobs,
    )

    argv = sys.argv[1:] if argv is None else argv
    design = argv[0] if argv else "baseline"
    variants = json.loads(argv[1]) if len(argv) > 1 else [{}]
    recs, _ = run_jobs(sweep_jobs(DEFAULT_SWEEP, designs=[design]), ROOT / "calib" / "checkpoints", workers=2)
    train, test = split(recs, DEFAULT_SWEEP["holdout_fraction"], DEFAULT_SWEEP["seed"])
    for v in variants:
        sweep = {**DEFAULT_SWEEP, **v}
        coef = fit_procedure(design, train, sweep, None, 30)
        rep = heldout_errors(design, test, coef, sweep)
        st = []
        cv = cv_spread(design, train, sweep, init=None, max_nfev=10, stall_errs=st)
        cv_st = float(np.median(np.abs(st))) if st else float("nan")
        h_st = rep["bank_stall_rel_err"] if rep["bank_stall_rel_err"] is not None else float("nan")
        print(
            f"{json.dumps(v):28s} cross-validated: log-IPC RMS {cv:.3f}, bank stall {100 * cv_st:5.1f} % | "
            f"held out: IPC MAPE {100 * rep['ipc_mape']:5.1f} %, bank stall {100 * h_st:5.1f} %",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
