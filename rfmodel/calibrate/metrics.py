"""Every metric both engines report, held out like the IPC: for each design, each metric that the simulator
and the analytic model both give at a calibration record is compared on the held-out records, by its kind
(:meth:`rfmodel.designs.base.Design.metric_kind`):

* ``share`` (a hit rate, a utilization, a fraction): the mean absolute error in points;
* ``count`` (events over the run: stalls, spills, prefetches): per instruction in each engine (the simulator's
  warp instructions, the profile's), the median relative error ``|model - sim| / max(sim, 1 % of an event
  per instruction)``;
* ``level`` (a time-averaged or per-event quantity: entries held, a mean latency): the median relative error.

Beside the metrics a design names, each structure's energy per instruction (``energy_pj[s]``, the Datasets'
``energy_pj`` at structure ``s``: both engines' events and cycles charged by the same technology tables) is
held out as a count, without a goal (:func:`structure_energy_pairs`).

The goals (:data:`METRIC_GOALS`): shares within 5 points, stall counts within 20 % (median); the other
figures are reported without a goal, and so is a metric that both engines give the same value at every
record (``constant``: the LTRF family's register-cache hit rate of 1, every operand read from its interval
cache by construction), which can tell designs or points apart no better than it can miss.
"""

from __future__ import annotations

import numpy as np

#: the goal of a metric's error, by kind, and for the stall counts (:func:`is_stall`)
METRIC_GOALS = {"share": 0.05, "stall": 0.20}
#: a count's relative error is taken against at least this many events per instruction
COUNT_FLOOR = 0.01
#: the metrics every design reports in both engines and their kinds
STANDARD = {
    "l1d_hit_rate": "share",
    "collector_occupancy": "share",
    "bank_conflict_stall_cycles": "count",
    "warps": "level",
}


def is_stall(name: str) -> bool:
    """Whether a count is a stall or conflict count (held to the stall goal)."""
    return name.endswith(("stall_cycles", "_wait_cycles", "_waits", "_conflicts"))


def ran(sim: dict) -> bool:
    """Whether a simulation ran any instruction (none where no CTA fits the point's SM: its IPC, hit rates,
    shares and counts are then 0 by default and measure nothing)."""
    return sim.get("warp_instructions", 0) > 0


def metric_pairs(design, rec: dict, model: dict, model_instrs: float) -> dict:
    """``{metric: (kind, sim value, model value)}`` of one record, counts per instruction."""
    out = {}
    s_n = max(float(rec["sim"].get("warp_instructions", 0.0)), 1.0)
    names = {**STANDARD, **{m: design.metric_kind(m) for m in design.metrics}}
    for name, kind in names.items():
        if name not in rec["sim"] or name not in model:
            continue
        s, m = float(rec["sim"][name]), float(model[name])
        if not (np.isfinite(s) and np.isfinite(m)):
            continue
        if kind == "count":
            s, m = s / s_n, m / max(model_instrs, 1.0)
        out[name] = (kind, s, m)
    return out


def structure_energy_pairs(sim: dict, model: dict, i: int, n: int, instrs: tuple) -> dict:
    """``{"energy_pj[s]": ("count", sim, model)}`` of record ``i`` of ``n``: each structure's energy (dynamic
    and leakage, ``{structure: energy over the records}`` of both engines' events and cycles charged by the
    same technology tables) per instruction in each engine (``instrs``: the simulator's warp instructions,
    the profile's), for the structures either engine spends energy in."""
    out = {}
    for s in sim.keys() & model.keys():
        a = float(np.broadcast_to(sim[s], (n,))[i]) / max(instrs[0], 1.0)
        b = float(np.broadcast_to(model[s], (n,))[i]) / max(instrs[1], 1.0)
        if np.isfinite(a) and np.isfinite(b) and (a > 0.0 or b > 0.0):
            out[f"energy_pj[{s}]"] = ("count", a, b)
    return out


def summarize_metrics(pairs: list[dict], labels: list[dict] | None = None) -> dict:
    """``{metric: {"kind", "n", "error", "goal", "met", ...}}`` over records' :func:`metric_pairs`; ``error``:
    the mean absolute error of a share (fraction, not points), the median relative error of a count or a
    level.  ``labels`` (one per pair: the record's ``gpu``, ``workload``, ``params`` and the simulator's
    ``stalls``) name the worst record by the kind's own error (``worst``)."""
    by: dict = {}
    for i, p in enumerate(pairs):
        for name, (kind, s, m) in p.items():
            by.setdefault(name, (kind, []))[1].append((s, m, i))
    out = {}
    for name, (kind, vals) in sorted(by.items()):
        s = np.array([v[0] for v in vals])
        m = np.array([v[1] for v in vals])
        if kind == "share":
            each = np.abs(m - s)
            err = float(np.mean(each))
            goal = METRIC_GOALS["share"]
        elif kind == "count":
            each = np.abs(m - s) / np.maximum(np.abs(s), COUNT_FLOOR)
            err = float(np.median(each))
            goal = METRIC_GOALS["stall"] if is_stall(name) else None
        else:
            each = np.abs(m - s) / np.maximum(np.abs(s), 1e-9)
            err = float(np.median(each))
            goal = None
        worst = int(np.argmax(each))
        constant = bool(np.all(s == s[0]) and np.all(m == s[0]))
        if constant:  # the same value everywhere in both engines: nothing to hold to a goal
            goal = None
        out[name] = {
            "kind": kind,
            "n": len(vals),
            "error": err,
            "goal": goal,
            "constant": constant,
            "met": None if goal is None else bool(err <= goal),
            "sim_mean": float(s.mean()),
            "model_mean": float(m.mean()),
            "worst_sim": float(s[worst]),
            "worst_model": float(m[worst]),
        }
        if labels is not None:
            out[name]["worst"] = dict(labels[vals[worst][2]])
    return out
