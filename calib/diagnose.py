"""Where the analytic model misses: held-out errors by GPU and workload, by GPU and design point.

    python calib/diagnose.py baseline                 # the shipped calibration
    python calib/diagnose.py bow --worst 20           # and the 20 largest errors (training rows too)
    python calib/diagnose.py baseline --coef fit.json # coefficients from another fit
    python calib/diagnose.py rfc --metric bank_stall  # bank-conflict stall cycles instead of IPC
    python calib/diagnose.py baseline --metric bank_stall --workload saxpy  # every row of one workload
    python calib/diagnose.py malekeh --metric hit     # the register cache's hit rate (model - sim, points)
    python calib/diagnose.py ltrf --metric prefetch_latency_cycles --workload gemm_micro8x8  # any metric
    python calib/diagnose.py malekeh --effects         # each held-out IPC effect against the baseline
    python calib/diagnose.py ltrf --metric bank_stall --less-baseline  # the shared model's part taken out

Reads the sweep's simulations from ``calib/checkpoints/`` (simulating what is missing, as ``calib/run.py``
does) and the same train/held-out split as the calibration; prints the mean signed error (bias) and the
mean absolute error of the model's IPC against the simulator's, per group.  With ``--metric bank_stall``
the error is the report's: ``(model - sim) / max(sim, 1 % of instructions)``, on every row
(``calibrate.stall_error``).  Any other metric both engines report (a
design's ``metrics``) is compared by its kind (:mod:`rfmodel.calibrate.metrics`): a count per instruction and
a level by ``model / sim - 1``, a share by ``model - sim``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rows_of(design: str, coef_entry, checkpoints: str, workers: int, metric: str = "ipc") -> list[dict]:
    """One row per simulation of ``design`` in the default sweep: model and simulator values of ``metric``
    (``ipc``, ``bank_stall``, ``hit`` or a metric both engines report), split tag."""
    import numpy as np

    from rfmodel.analytic.calibration import load_calibration
    from rfmodel.calibrate import coef_for, stall_error, sweep_groups
    from rfmodel.calibrate.metrics import metric_pairs

    entry = coef_entry if coef_entry is not None else load_calibration()["designs"][design]
    out = []
    other = metric not in ("ipc", "bank_stall", "hit")
    for g in sweep_groups(design, checkpoints, workers=workers):
        gpu = g.recs[0]["gpu"]
        pred = g.predict(coef_for(entry, gpu), events=other)
        for i, r in enumerate(g.recs):
            s = r["sim"]
            if other:
                pair = metric_pairs(g.d, r, {k: v[i] for k, v in pred["metrics"].items()}, g.prof.n_instrs)
                if metric not in pair:
                    continue
                kind, sim, mod = pair[metric]
                err = mod - sim if kind == "share" else (mod / sim - 1.0 if sim > 0 else np.nan)
            elif metric == "bank_stall":
                sim, mod = s["bank_conflict_stall_cycles"], float(pred["bank_conflict_stall_cycles"][i])
                err = stall_error(mod, s)
            elif metric == "hit":
                if "rf_cache_hit_rate" not in pred or "rf_cache_hit_rate" not in s:
                    continue
                sim, mod = s["rf_cache_hit_rate"], float(pred["rf_cache_hit_rate"][i])
                err = mod - sim
            else:
                sim, mod = s["ipc"], float(pred["ipc"][i])
                err = mod / sim - 1.0 if sim > 0 else np.nan
            hit_s = s.get("rf_cache_hit_rate", np.nan)
            hit_m = float(pred["rf_cache_hit_rate"][i]) if "rf_cache_hit_rate" in pred else np.nan
            out.append(
                {
                    "gpu": gpu,
                    "workload": r["workload"],
                    "point": json.dumps(r["params"], sort_keys=True),
                    "split": r.get("heldout", "train"),
                    "instructions": float(s["warp_instructions"]),
                    "sim": sim,
                    "model": mod,
                    "err": err,
                    "hit_sim": hit_s,
                    "hit_model": hit_m,
                }
            )
    return out


def effect_lines(design: str, coef_entry, checkpoints: str, workers: int) -> list[str]:
    """The design's held-out IPC effects against the baseline at the same point, both engines
    (:func:`rfmodel.calibrate.effects.effect_rows`), one line each; ``SIGN`` marks a record whose simulated
    effect is at least 2 % and whose analytic effect has the other sign (or none)."""
    from rfmodel.analytic.calibration import load_calibration
    from rfmodel.calibrate import ANCHOR_SWEEP_KEY, DEFAULT_SWEEP, record_values, run_jobs, split, sweep_jobs
    from rfmodel.calibrate.effects import SIGN_THRESHOLD, effect_rows

    sweep = dict(DEFAULT_SWEEP)
    recs, _ = run_jobs(sweep_jobs(sweep, ["baseline", design]), checkpoints, workers=workers)
    split(recs, sweep["holdout_fraction"], sweep["seed"])
    cal = load_calibration()["designs"]
    fitted = {"baseline": cal["baseline"], design: coef_entry if coef_entry is not None else cal[design]}
    fitted = {d: {k: v for k, v in e.items() if k in ("coefficients", "per_gpu")} for d, e in fitted.items()}
    values = record_values(recs, fitted, {**sweep, ANCHOR_SWEEP_KEY: fitted["baseline"]})

    def order(r):
        return r["gpu"], r["workload"], json.dumps(r["params"], sort_keys=True)

    rows = sorted((r for r in effect_rows(recs, values) if r["heldout"]), key=order)
    out = []
    for r in rows:
        s, m = r["ipc_effect_sim"], r["ipc_effect_model"]
        flag = " SIGN" if abs(s) >= SIGN_THRESHOLD and s * m <= 0 else ""
        out.append(
            f"  {r['gpu']:13s} {r['workload']:28s} {json.dumps(r['params'], sort_keys=True):46s} "
            f"sim {100 * s:+7.1f} %  model {100 * m:+7.1f} %{flag}"
        )
    return out


def less_baseline(rows: list[dict], base: list[dict]) -> tuple[list[dict], int]:
    """``rows`` (bank stalls) with the shared model's own error at each record's workload taken out: each
    model count divided by the baseline's median model / simulator ratio over the baseline's training rows
    of the same GPU and workload (both counts padded by the error's floor,
    :data:`~rfmodel.calibrate.metrics.COUNT_FLOOR` of the instructions); a row whose workload the baseline
    trained on nowhere keeps its value.  Returns the rows with ``err`` recomputed and how many moved."""
    import numpy as np

    from rfmodel.calibrate.metrics import COUNT_FLOOR

    logs = defaultdict(list)
    for b in base:
        if b["split"] == "train" and np.isfinite(b["model"]):
            pad = COUNT_FLOOR * b["instructions"]
            logs[(b["gpu"], b["workload"])].append(np.log((b["model"] + pad) / (b["sim"] + pad)))
    factor = {k: float(np.exp(np.median(v))) for k, v in logs.items()}
    out, moved = [], 0
    for x in rows:
        f = factor.get((x["gpu"], x["workload"]))
        if f is None:
            out.append(x)
            continue
        moved += 1
        mod = x["model"] / f
        err = (mod - x["sim"]) / max(x["sim"], COUNT_FLOOR * x["instructions"])
        out.append({**x, "model": mod, "err": err})
    return out, moved


def by_sign(rows: list[dict]) -> list[tuple]:
    """Per GPU of ``rows`` (every row, training and held out): the rows, the median signed error, the median
    |error| and the share of rows whose model value is above the simulator's (the errors' definition is the
    rows' own: the report's for bank stalls)."""
    import numpy as np

    out = []
    for gpu in sorted({x["gpu"] for x in rows}):
        e = np.array([x["err"] for x in rows if x["gpu"] == gpu and np.isfinite(x["err"])])
        if e.size:
            out.append(
                (gpu, int(e.size), float(np.median(e)), float(np.median(np.abs(e))), float(np.mean(e > 0)))
            )
    return out


def summarize(rows: list[dict], key) -> list[tuple]:
    import numpy as np

    by = defaultdict(list)
    for x in rows:
        by[key(x)].append(x["err"])
    return [(k, len(v), float(np.nanmean(v)), float(np.nanmean(np.abs(v)))) for k, v in sorted(by.items())]


def main(argv=None) -> int:
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("design")
    ap.add_argument("--coef", help="JSON: a fitted entry {'coefficients', 'per_gpu'} or a plain dict")
    ap.add_argument("--worst", type=int, default=0, help="also list this many largest errors")
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--metric",
        default="ipc",
        help="ipc (default), bank_stall, hit, or any metric both "
        "engines report (a design's metrics, e.g. prefetch_latency_cycles)",
    )
    ap.add_argument("--workload", help="also list every row (training and held out) of this workload")
    less = "with --metric bank_stall: also the error less the baseline's own per workload (the shared part)"
    ap.add_argument("--less-baseline", action="store_true", help=less)
    ap.add_argument(
        "--effects",
        action="store_true",
        help="instead, each held-out IPC effect against the baseline at the same point in both engines",
    )
    a = ap.parse_args(argv)
    entry = json.loads(Path(a.coef).read_text()) if a.coef else None
    if a.effects:
        lines = effect_lines(a.design, entry, a.checkpoints, a.workers)
        print(f"{a.design}: held-out IPC effects against the baseline ({len(lines)} records)")
        print("\n".join(lines))
        return 0
    if a.less_baseline and a.metric != "bank_stall":
        print("diagnose.py: --less-baseline goes with --metric bank_stall", file=sys.stderr)
        return 2
    rows = rows_of(a.design, entry, a.checkpoints, a.workers, a.metric)
    held = [x for x in rows if x["split"] != "train"]
    train = [x for x in rows if x["split"] == "train"]
    if not rows:
        print(f"{a.design}: no rows with {a.metric} in the sweep", file=sys.stderr)
        return 2
    label = {"ipc": "IPC", "bank_stall": "bank-stall", "hit": "RF-cache hit"}.get(a.metric, a.metric)
    kind, unit = ("abs. error", " points") if a.metric == "hit" else ("abs. rel. error", " %")
    mape = {k: 100 * np.nanmean([abs(x["err"]) for x in v]) for k, v in (("held", held), ("train", train))}
    med = {k: 100 * np.nanmedian([abs(x["err"]) for x in v]) for k, v in (("held", held), ("train", train))}
    print(
        f"{a.design}: held-out {label} mean {kind} {mape['held']:.1f}{unit} "
        f"(median {med['held']:.1f}{unit}, {len(held)} points), "
        f"training {mape['train']:.1f}{unit} (median {med['train']:.1f}{unit}, {len(train)})"
    )
    if a.less_baseline:
        base = rows_of("baseline", None, a.checkpoints, a.workers, "bank_stall")
        adj, moved = less_baseline(held, base)
        print(
            f"less the baseline's per-workload error ({moved} of {len(held)} held-out rows scaled): "
            f"median abs. rel. error {100 * np.nanmedian([abs(x['err']) for x in adj]):.1f} % "
            f"(mean {100 * np.nanmean([abs(x['err']) for x in adj]):.1f} %)"
        )
    if a.metric not in ("ipc", "hit"):  # a count: relative errors explode where the simulator counts few
        sim = np.array([x["sim"] for x in rows], dtype=np.float64)
        mod = np.array([x["model"] for x in rows], dtype=np.float64)
        ok = np.isfinite(sim) & np.isfinite(mod)
        print(
            f"every row: simulator mean {sim[ok].mean():.4g}, model mean {mod[ok].mean():.4g}, mean "
            f"|model - simulator| {np.abs(mod - sim)[ok].mean():.4g} ({int(ok.sum())} rows; per "
            "instruction where the metric is a count)"
        )
    if a.metric == "bank_stall":
        print("every row, by GPU:               n   median signed   median |error|   model above")
        for gpu, n, med_s, med_a, above in by_sign(rows):
            print(
                f"  {gpu:30s} {n:4d}   {100 * med_s:+12.0f} %   {100 * med_a:13.0f} %   {100 * above:9.0f} %"
            )
    print("held out, by GPU and workload:   n   bias   MAPE")
    for k, n, b, m in summarize(held, lambda x: (x["gpu"], x["workload"])):
        print(f"  {k[0]:14s} {k[1]:30s} {n:3d} {100 * b:+6.1f} {100 * m:6.1f}")
    print("held out, by GPU and design point:")
    for k, n, b, m in summarize(held, lambda x: (x["gpu"], x["point"])):
        print(f"  {k[0]:14s} {k[1]:46s} {n:3d} {100 * b:+6.1f} {100 * m:6.1f}")
    listed = []
    if a.worst:
        worst = sorted((x for x in rows if np.isfinite(x["err"])), key=lambda x: -abs(x["err"]))[: a.worst]
        listed.append((f"largest {a.worst} errors (all rows):", worst))
    if a.workload:
        listed.append((f"every row of {a.workload}:", [x for x in rows if x["workload"] == a.workload]))
    for title, chosen in listed:
        print(title)
        for x in chosen:
            hit = "" if np.isnan(x["hit_sim"]) else f"  hit sim {x['hit_sim']:.3f} model {x['hit_model']:.3f}"
            print(
                f"  {x['gpu']:13s} {x['workload']:28s} {x['point']:46s} {x['split']:15s} "
                f"sim {x['sim']:.3f} model {x['model']:.3f} {100 * x['err']:+6.1f} %{hit}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
