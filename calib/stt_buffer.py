"""Where the STT-RAM design's write-buffer forms come from (docs/models.md, "STT-RAM register file"): the
simulator's buffer counters on the default sweep's ``stt`` points against the analytic forms evaluated at
each simulation's own rates (its IPC, reads, writes, banks, bank times), so that the forms are checked
apart from the rest of the model.

    python calib/stt_buffer.py                  # the default sweep's stt simulations (calib/checkpoints)
    python calib/stt_buffer.py --gpu fermi-gtx480

Reads the simulations from ``calib/checkpoints/`` (simulating what is missing, as ``calib/run.py`` does)
and prints, per GPU and point: the share of writes the simulator buffers against the banks' utilization,
the buffer's residence (occupancy x cycles / buffered writes) against ``wb_residence``, the buffer hits per
buffered value; then the fit of the hit share to the profile's dependence distances and the error of
``wb_reads_behind_write``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rows_of(checkpoints: str, workers: int, gpu: str | None) -> list[dict]:
    """One row per buffered or unbuffered ``stt`` simulation of the default sweep: the simulator's rates
    and counters per instruction, the banks and bank times, and the profile's dependence histogram."""
    import numpy as np

    from rfmodel.analytic.model import sm_param
    from rfmodel.calibrate import DEFAULT_SWEEP, _groups, run_jobs, sweep_jobs

    sweep = dict(DEFAULT_SWEEP)
    recs, _ = run_jobs(sweep_jobs(sweep, ["stt"]), checkpoints, workers=workers)
    out = []
    for g in _groups(recs, sweep):
        for r in g.recs:
            s = r["sim"]
            if (gpu and r["gpu"] != gpu) or not s.get("ipc") or "wb_writes" not in s:
                continue
            n = s["ipc"] * s["cycles"]
            params = dict(r["params"])
            out.append(
                {
                    "gpu": r["gpu"],
                    "point": json.dumps(params, sort_keys=True),
                    "workload": r["workload"],
                    "K": params.get("wb_entries", 16),
                    "ipc": s["ipc"],
                    "B": float(sm_param(g.sm, {k: np.array(v) for k, v in params.items()}, "num_banks")),
                    "R": s["main_rf_read_cycles"],
                    "W": s["main_rf_write_cycles"],
                    "reads": s["rf_reads"] / n,
                    "writes": s["rf_writes"] / n,
                    "buffered": s["wb_writes"] / n,
                    "hits": s["wb_hits"] / n,
                    "occupancy": s["wb_occupancy_mean"],
                    "behind": s["reads_behind_write"] / n,
                    "dep": np.asarray(g.prof.dep_dist_hist, float),
                }
            )
    return out


def main(argv=None) -> int:
    import numpy as np

    from rfmodel.analytic.reuse import NEAR_DISTANCE, near_fraction_from_hist
    from rfmodel.designs.stt import _bank_rates, wb_reads_behind_write, wb_residence

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", help="one GPU of the sweep (default: both)")
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    rows = rows_of(a.checkpoints, a.workers, a.gpu)
    for r in rows:
        bank_reads = r["reads"] - r["hits"]
        rho = _bank_rates(r["ipc"], bank_reads, r["writes"], r["B"], r["R"], r["W"])[4]
        r["rho"] = float(rho)
        r["T_model"] = float(wb_residence(r["ipc"], bank_reads, r["writes"], r["B"], r["R"], r["W"]))
        r["T_sim"] = r["occupancy"] / (r["ipc"] * r["buffered"]) if r["buffered"] > 0 else np.nan
    by = defaultdict(list)
    for r in rows:
        by[r["gpu"], r["point"]].append(r)
    print(
        "gpu           point                                  runs  buffered/writes  rho   T sim  T model"
        "  hits/buffered"
    )

    def mean(rs, f):
        v = [x for x in (f(r) for r in rs) if np.isfinite(x)]
        return float(np.mean(v)) if v else np.nan

    for (gpu, point), rs in sorted(by.items()):
        cols = (
            mean(rs, lambda r: r["buffered"] / r["writes"]),
            mean(rs, lambda r: r["rho"]),
            mean(rs, lambda r: r["T_sim"]),
            mean(rs, lambda r: r["T_model"]),
            mean(rs, lambda r: r["hits"] / r["buffered"] if r["buffered"] > 0 else np.nan),
        )
        print(
            f"{gpu:13s} {point:38s} {len(rs):4d}  {cols[0]:15.2f}  {cols[1]:4.2f}  {cols[2]:5.1f}  "
            f"{cols[3]:7.1f}  {cols[4]:13.2f}"
        )
    buf = [r for r in rows if r["buffered"] > 0]
    # the share of reads served from the buffer when the producer's value was buffered
    target = np.array([r["hits"] / (r["reads"] * r["buffered"] / r["writes"]) for r in buf])
    print(
        f"\nbuffer hits per read of a buffered value: mean {target.mean():.3f}; "
        f"a constant's mean absolute error {np.abs(target - target.mean()).mean():.3f}"
    )
    for dist in (1, 2, 3, 4, 6, 8):
        near = np.array([float(near_fraction_from_hist(r["dep"], dist)) for r in buf])
        scale = float(target @ near / (near @ near))
        mark = "  (near_consumer_share)" if dist == NEAR_DISTANCE else ""
        print(
            f"  producer within {dist} instructions: least-squares scale {scale:.2f}, mean absolute error "
            f"{np.abs(target - scale * near).mean():.3f}{mark}"
        )
    ratio = []
    for r in rows:
        near = float(near_fraction_from_hist(r["dep"], NEAR_DISTANCE))
        model = wb_reads_behind_write(
            r["ipc"], r["reads"] - r["hits"], r["writes"], r["B"], r["R"], r["W"], r["K"], near
        )
        ratio.append(float(model) / r["behind"])
    ratio = np.array(ratio)
    print(
        f"\nreads behind a write (wb_reads_behind_write at the simulator's IPC) / the simulator's: "
        f"median {np.median(ratio):.2f}, mean absolute error {np.abs(ratio - 1).mean():.0%} over "
        f"{len(ratio)} runs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
