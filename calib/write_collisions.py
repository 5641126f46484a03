"""Which bank stalls are reads meeting writes: the sweep's records simulated again with a write port per bank.

    python calib/write_collisions.py                    # the baseline
    python calib/write_collisions.py ltrf --checkpoints DIR --port-checkpoints DIR2

A read waits at its bank when another access holds the bank's port in its cycle: another read (of its own
instruction or another's) or a result written back, which takes the port first.  Simulated again with the
same point plus ``bank_write_ports = 1`` (every bank a port of its own for writes), the stalls left are the
reads meeting reads; the rest of the record's bank stalls were reads meeting writes.  Over the design's
records of the calibration's sweep at one-cycle banks (read from ``--checkpoints``, simulated where missing,
as ``calib/run.py`` does; the variants from ``--port-checkpoints``), per GPU: the median share of the
simulator's stall cycles that were reads meeting writes, the median change of the IPC with the write port,
and the model's bank-stall error (the report's, :func:`rfmodel.calibrate.stall_error`, with the shipped
calibration) by that share.  Records whose simulator counts fewer stall cycles than 0.2 % of the
instructions have no share to speak of and are left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: the bins of the write-collision share the model's error is summarized by
BINS = ((0.0, 0.3), (0.3, 0.6), (0.6, 0.9), (0.9, 1.0))
#: stall cycles per instruction below which a record has no share to speak of
MIN_STALLS = 0.002


def collision_rows(design: str, checkpoints: str, port_checkpoints: str, workers: int) -> list[dict]:
    """Per record of ``design`` in the default sweep at one-cycle banks: GPU, workload, point, instructions,
    the simulator's stall cycles and IPC as swept and with a write port per bank, and the model's stall
    cycles (:mod:`calib.diagnose`'s reading of the shipped calibration)."""
    from rfmodel.analytic.calibration import load_calibration
    from rfmodel.calibrate import coef_for, run_jobs, sweep_groups

    entry = load_calibration()["designs"][design]
    chosen = []
    for g in sweep_groups(design, checkpoints, workers=workers):
        pred = g.predict(coef_for(entry, g.recs[0]["gpu"]))
        for i, r in enumerate(g.recs):
            if r["params"].get("main_rf_latency_x", 1) != 1 or g.sm.bank_write_ports > 0:
                continue  # slow banks take a write's hold apart; an SM with write ports has nothing to take
            chosen.append((r, float(pred["bank_conflict_stall_cycles"][i])))
    jobs = [
        {k: r[k] for k in ("design", "gpu", "workload", "max_warps", "seed")}
        | {"params": {**r["params"], "bank_write_ports": 1}, "point": r["point"] + "+write_port"}
        for r, _ in chosen
    ]
    ported, _ = run_jobs(jobs, port_checkpoints, workers=workers)
    out = []
    for (r, model), p in zip(chosen, ported, strict=True):
        row = {"gpu": r["gpu"], "workload": r["workload"], "point": json.dumps(r["params"], sort_keys=True)}
        row |= {"instructions": float(r["sim"]["warp_instructions"]), "model": model}
        for suffix, rec in (("", r), ("_port", p)):  # as swept, and with a write port per bank
            row["sim" + suffix] = float(rec["sim"]["bank_conflict_stall_cycles"])
            row["ipc" + suffix] = float(rec["sim"]["ipc"])
        out.append(row)
    return out


def summary(rows: list[dict]) -> dict:
    """Per GPU of ``rows`` (:func:`collision_rows`), over those with at least :data:`MIN_STALLS` stall cycles
    per instruction: ``n``, the median share of the stall cycles that were reads meeting writes
    (``write_share``), the median |IPC change| with the write port (``ipc_change``), and per bin of
    :data:`BINS` the records, the median log(model / simulator) (both padded by 1 % of the instructions)
    and the median |error| as the report takes it (``bins``: ``(lo, hi, n, log_ratio, error)``)."""
    from rfmodel.calibrate.metrics import COUNT_FLOOR

    out = {}
    for gpu in sorted({x["gpu"] for x in rows}):
        xs = [x for x in rows if x["gpu"] == gpu and x["sim"] >= MIN_STALLS * x["instructions"]]
        if not xs:
            continue
        share = np.array([1.0 - x["sim_port"] / x["sim"] for x in xs])
        pad = np.array([COUNT_FLOOR * x["instructions"] for x in xs])
        sim = np.array([x["sim"] for x in xs])
        mod = np.array([x["model"] for x in xs])
        log_ratio = np.log((mod + pad) / (sim + pad))
        err = np.abs(mod - sim) / np.maximum(sim, pad)
        bins = []
        for lo, hi in BINS:
            m = (share >= lo) & ((share < hi) if hi < 1.0 else (share <= hi))
            if m.any():
                bins.append((lo, hi, int(m.sum()), float(np.median(log_ratio[m])), float(np.median(err[m]))))
        ipc = np.array([abs(x["ipc_port"] / x["ipc"] - 1.0) for x in xs if x["ipc"] > 0])
        out[gpu] = {
            "n": len(xs),
            "write_share": float(np.median(share)),
            "ipc_change": float(np.median(ipc)) if ipc.size else float("nan"),
            "bins": bins,
        }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("design", nargs="?", default="baseline")
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    ap.add_argument(
        "--port-checkpoints",
        default=str(ROOT / "calib" / "checkpoints" / "write_port"),
        help="where the simulations with a write port per bank are kept (default: %(default)s)",
    )
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    rows = collision_rows(a.design, a.checkpoints, a.port_checkpoints, a.workers)
    for gpu, s in summary(rows).items():
        print(
            f"{a.design} on {gpu}: {s['n']} records; reads meeting writes, median share of the stall cycles "
            f"{100 * s['write_share']:.0f} %; IPC with a write port per bank, median change "
            f"{100 * s['ipc_change']:.2f} %"
        )
        print("  share of reads meeting writes   records   model / simulator (median)   median |error|")
        for lo, hi, n, lr, e in s["bins"]:
            ratio = np.exp(lr)
            print(f"  {lo:.1f}-{hi:.1f}                          {n:7d}   {ratio:26.2f}   {100 * e:12.0f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
