"""Where the LTRF family's prefetch-stall error lies: the idle cycles, the prefetches' time, or the naming.

    python calib/prefetch_naming.py ltrf
    python calib/prefetch_naming.py strands --worst 12 --checkpoints DIR

Both engines give the scheduler-cycles without an issue that the simulator lays to a warp waiting for its
prefetch (``prefetch_stall_cycles``) as a product of three factors, per instruction:

* ``idle``: scheduler-cycles without an issue (the simulator's stall cycles of every reason; the model's
  ``S / IPC - 1``);
* ``p``: the share of a resident warp's time spent waiting for its own prefetch (the prefetches' cycles
  over ``W x cycles``; the model's prefetches that read anything times its ``t_pf``);
* ``naming``: the stall cycles over ``idle x p``.  The model takes 1 (``ltrf.prefetch_stall_share``: the
  warp that names an idle cycle is any resident warp); the simulator names an idle cycle by the first warp
  of its scheduler's order that cannot issue (GTO: the last to issue, then the oldest).

Per design and GPU over the sweep's records (read from ``--checkpoints``, simulated where missing, as
``calib/run.py`` does, with the shipped calibration): the median of |log(model / simulator)| of each factor
and of the product, the median naming in each engine, the exposed share's mean absolute error (points),
and the records whose exposed share is furthest apart with their factors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DESIGNS = ("ltrf", "ltrf_plus", "ltrfconf", "strands")


def factors(stall: float, pf_cycles: float, idle: float, ipc: float, warps: float) -> dict:
    """The three factors of the prefetch stall cycles an instruction (module docstring): ``idle``, ``p`` (the
    prefetches' cycles an instruction ``pf_cycles`` over a warp's cycles an instruction, ``warps / ipc``),
    ``naming`` (``stall / (idle p)``), with ``stall`` itself and the exposed share ``stall / pf_cycles``."""
    p = pf_cycles * ipc / warps
    return {
        "idle": idle,
        "p": p,
        "stall": stall,
        "naming": stall / (idle * p) if idle * p > 0 else np.nan,
        "share": stall / pf_cycles if pf_cycles > 0 else 0.0,
    }


def factor_rows(design: str, checkpoints: str, workers: int) -> list[dict]:
    """Per record of ``design`` in the default sweep whose simulation prefetched: the three factors and
    the exposed share of each engine (``sim_*``, ``model_*``), GPU, workload, point and split."""
    from rfmodel.analytic.calibration import load_calibration
    from rfmodel.calibrate import coef_for, sweep_groups

    entry = load_calibration()["designs"][design]
    out = []
    for g in sweep_groups(design, checkpoints, workers=workers):
        gpu = g.recs[0]["gpu"]
        sched = float(g.sm.schedulers_per_sm)
        pred = g.predict(coef_for(entry, gpu), events=True)
        met = pred["metrics"]

        def at(name, i, met=met, pred=pred):
            v = np.asarray(met[name] if name in met else pred[name], dtype=np.float64).reshape(-1)
            return float(v[i] if v.size > 1 else v[0])

        n = float(g.prof.n_instrs)
        for i, r in enumerate(g.recs):
            s = r["sim"]
            if not s.get("prefetches") or not s.get("prefetch_latency_cycles"):
                continue
            row = {"gpu": gpu, "workload": r["workload"], "point": json.dumps(r["params"], sort_keys=True)}
            row["split"] = "held" if r.get("heldout") else "train"
            sim_stall = float(s["prefetch_stall_cycles"]) / n
            sim_pf = float(s["prefetches"]) * float(s["prefetch_latency_cycles"]) / n
            sim_idle = sum(float(v) for v in r["stalls"].values()) / n
            mod_stall, mod_share = at("prefetch_stall_cycles", i) / n, at("prefetch_exposed_share", i)
            # the model's prefetch time of the share (the stall over its exposed share; the mean prefetch time
            # where nothing is exposed)
            mod_pf = (
                mod_stall / mod_share
                if mod_share > 0
                else at("prefetches", i) * at("prefetch_latency_cycles", i) / n
            )
            mod_ipc = at("ipc", i)
            mod_idle = max(sched / mod_ipc - 1.0, 0.0) if mod_ipc > 0 else np.inf
            warps = float(s["warps"])
            for who, stall, pf, idle, ipc in (
                ("sim", sim_stall, sim_pf, sim_idle, float(s["ipc"])),
                ("model", mod_stall, mod_pf, mod_idle, mod_ipc),
            ):
                row.update({f"{who}_{k}": v for k, v in factors(stall, pf, idle, ipc, warps).items()})
            row["warps_per_scheduler"] = warps / sched
            row["sim_util"] = float(s["ipc"]) / sched
            out.append(row)
    return out


def _log_err(rows, key) -> float:
    m = np.array([x[f"model_{key}"] for x in rows], dtype=np.float64)
    s = np.array([x[f"sim_{key}"] for x in rows], dtype=np.float64)
    ok = (m > 0) & (s > 0) & np.isfinite(m) & np.isfinite(s)
    return float(np.median(np.abs(np.log(m[ok] / s[ok])))) if ok.any() else np.nan


def _count(text: str) -> int:
    """A whole number of records, 0 or more (argparse's type: anything else is one clear error)."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number of records, 0 or more")
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("design", choices=DESIGNS)
    ap.add_argument("--checkpoints", default=str(ROOT / "calib" / "checkpoints"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worst", type=_count, default=8, help="list this many records (default 8)")
    a = ap.parse_args(argv)
    rows = factor_rows(a.design, a.checkpoints, a.workers)
    if not rows:
        print(f"{a.design}: no record with prefetches in the sweep", file=sys.stderr)
        return 2
    print(f"{a.design}: {len(rows)} records with prefetches; median |log(model / simulator)| of each factor")
    print("  gpu              n   idle      p  naming  stall | naming sim (median)  model | share MAE")
    for gpu in sorted({x["gpu"] for x in rows}):
        sel = [x for x in rows if x["gpu"] == gpu]
        share = np.mean([abs(x["model_share"] - x["sim_share"]) for x in sel])
        print(
            f"  {gpu:14s} {len(sel):4d} {_log_err(sel, 'idle'):6.3f} {_log_err(sel, 'p'):6.3f} "
            f"{_log_err(sel, 'naming'):7.3f} {_log_err(sel, 'stall'):6.3f} | "
            f"{np.nanmedian([x['sim_naming'] for x in sel]):19.2f} "
            f"{np.nanmedian([x['model_naming'] for x in sel]):6.2f} | {100 * share:5.1f} points"
        )
    print("exposed share's mean absolute error (points, every record) under other namings,")
    print("at the simulator's own issue share u and warps a scheduler k:")
    sim = np.array([x["sim_share"] for x in rows])
    u = np.array([x["sim_util"] for x in rows])
    k = np.array([x["warps_per_scheduler"] for x in rows])
    forms = {"the model's": np.array([x["model_share"] for x in rows]), "1 - u (its warp first)": 1.0 - u}
    forms.update({f"(1 - u) k^-{e:g}": (1.0 - u) * k**-e for e in (0.3, 0.5, 0.7, 1.0)})
    for name, e in forms.items():
        print(f"  {name:24s} {100 * np.mean(np.abs(e - sim)):5.1f}")
    print(f"largest {a.worst} exposed-share errors (all rows): simulator / model")
    for x in sorted(rows, key=lambda x: -abs(x["model_share"] - x["sim_share"]))[: a.worst]:
        print(
            f"  {x['gpu']:13s} {x['workload']:28s} {x['point']:46s} {x['split']:5s} "
            f"share {x['sim_share']:.2f}/{x['model_share']:.2f}  "
            f"idle {x['sim_idle']:.2f}/{x['model_idle']:.2f}  "
            f"p {x['sim_p']:.3f}/{x['model_p']:.3f}  naming {x['sim_naming']:.2f}/{x['model_naming']:.2f}  "
            f"warps/scheduler {x['warps_per_scheduler']:g}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
