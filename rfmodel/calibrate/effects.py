"""Design effects of the calibration: how well the analytic engine follows the simulator on the quantity a
design study reads, a design's effect against the baseline at the same point.

    effect = metric(design) / metric(baseline) - 1

at the same GPU, workload and point: the values of every key the baseline takes too (SM fields and the
baseline's own parameters, such as ``main_rf_latency_x``); the design's other parameters are left out (the
baseline at ``{"main_rf_latency_x": 3}`` is the reference of ``{"rfc_kb": 8, "main_rf_latency_x": 3}``),
for IPC, energy per instruction and power.  Both engines'
energies come from the same accounting (:func:`rfmodel.energy.accounting.account`) of each engine's
structure events at the default technology, so what differs is the events and the cycles.

:func:`effect_report` gives, per design and over its held-out records: the mean absolute error of the
effects in points (percentage points of the baseline's value), the share of the records where the
simulator's |IPC effect| is at least :data:`SIGN_THRESHOLD` whose analytic effect has the same sign, and the
worst records with the simulator's counters; and over the (GPU, workload, SM point) groups of two designs or
more, Kendall's tau between the two engines' orders of the designs by IPC.
"""

from __future__ import annotations

import numpy as np

#: the simulator's |effect| from which the sign of an effect is held to agree
SIGN_THRESHOLD = 0.02
#: goals of the report (docs/validation.md): effect MAE in points, sign agreement, median Kendall tau
EFFECT_GOALS = {"ipc_effect_mae": 1.5, "ipc_sign_agreement": 0.9, "kendall_tau_median": 0.8}
#: the point key of the register banks' speed (a multiple of the SM's bank cycles), where a run does not
#: report its banks' read cycles (:func:`bank_speed`)
BANK_SPEED_KEY = "main_rf_latency_x"
#: the effects reported: result key -> (simulator record key, model prediction key)
EFFECTS = {"ipc": "ipc", "energy_per_instr": "energy_per_instr", "power": "power_mw"}


def bank_speed(rec: dict) -> float:
    """The speed of a record's (or an effect row's) register banks, by which the report splits the errors
    and the intervals take their scale: the cycles one read holds its bank, a multiple of the SM's own one
    cycle (the simulator's ``main_rf_read_cycles``: the point's ``main_rf_latency_x`` times its cell's read
    time, 2 for the STT-RAM banks at 1x), what an interval looks up at a point (the analytic
    ``main_rf_read_cycles``); the point's ``main_rf_latency_x`` where the run does not report it, else 1."""
    c = rec.get("bank_read_cycles", (rec.get("sim") or {}).get("main_rf_read_cycles"))
    if c is None or not np.isfinite(c):
        c = rec["params"].get(BANK_SPEED_KEY, 1)
    return float(c)


def shared_point(rec: dict, keys) -> tuple:
    """The part of a record's point its baseline reference shares (``keys``: :func:`shared_keys`), as a
    key."""
    return tuple(sorted((k, v) for k, v in rec["params"].items() if k in keys))


def shared_keys(gpu: str) -> set:
    """The point keys a design shares with the baseline on ``gpu``: the SM fields, ``collector_units`` and
    the baseline's own parameters."""
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import ANCHOR_DESIGN, resolve_gpu

    return set(resolve_gpu(gpu).to_dict()) | {"collector_units"} | set(get_design(ANCHOR_DESIGN).parameters)


def energy_power(design, sm, grid: dict, events: dict, cycles, metrics: dict | None = None):
    """``(energy_pj_total, power_mw, by_structure)`` over a group's records: the design's structures at the
    default technology for the points of ``grid`` (arrays over the records), charged with
    ``events[s][kind]`` (arrays over the records) for ``cycles``; ``metrics`` holds the shares a design
    powers its structures by (``Design.leakage_active``); ``by_structure``: ``{structure: energy_pj}``, each
    structure's dynamic and leakage energy, as the Datasets' ``energy_pj`` has it."""
    from rfmodel.energy.accounting import account
    from rfmodel.evaluate import DEFAULT_TECH, _tech_cell

    g = _tech_cell(design, dict(grid), DEFAULT_TECH)
    structures = design.structures(sm, g, DEFAULT_TECH)
    names = {s.name for s in structures}
    kinds = {s: ev for s, ev in events.items() if s in names}
    active = {}
    for s, m in design.leakage_active.items():
        v = (metrics or {}).get(m)
        if s in names and v is not None:
            v = np.asarray(v, dtype=np.float64)
            active[s] = np.where(np.isfinite(v), np.clip(v, 0.0, 1.0), 1.0)
    cycles = np.asarray(cycles, dtype=np.float64)
    acc = account(structures, kinds, cycles, sm.clock_mhz, active_fraction=active)
    by = {
        n: np.asarray(e, dtype=np.float64) for n, e in zip(acc["structures"], acc["energy_pj"], strict=True)
    }
    return (
        np.asarray(acc["energy_pj_total"], dtype=np.float64),
        np.asarray(acc["power_mw"], dtype=np.float64),
        by,
    )


def event_kinds(ev) -> dict:
    """A structure's events as ``{kind: counts}`` (from ``(reads, writes)`` or a dict of counts: the forms
    of :mod:`rfmodel.energy.accounting`, checked there when charged)."""
    if isinstance(ev, dict):
        return dict(ev)
    reads, writes = ev
    return {"reads": reads, "writes": writes}


def _stack_events(per_record: list[dict], n: int) -> dict:
    """``{structure: {kind: array over records}}`` from one ``{structure: {kind: value}}`` per record."""
    out: dict = {}
    for i, ev in enumerate(per_record):
        for s, kinds in (ev or {}).items():
            for k, v in kinds.items():
                out.setdefault(s, {}).setdefault(k, np.zeros(n))[i] = float(v)
    return out


def group_values(group, coef: dict) -> list[dict]:
    """Per record of a calibration group (:class:`rfmodel.calibrate._Group`): the simulator's and the
    model's IPC, energy per instruction and power, as ``{"sim": {...}, "model": {...}}``, and every metric
    both give (``"metrics"``: :func:`rfmodel.calibrate.metrics.metric_pairs`, and where the simulator's
    record has its structures' events, each structure's energy per instruction:
    :func:`rfmodel.calibrate.metrics.structure_energy_pairs`); none where the simulation ran no instruction
    (:func:`rfmodel.calibrate.metrics.ran`)."""
    from rfmodel.calibrate.metrics import metric_pairs, ran, structure_energy_pairs

    recs = group.recs
    n = len(recs)
    pred = group.predict(coef, events=True)
    grid = group.grid
    sim_cycles = np.array([r["sim"]["cycles"] for r in recs], dtype=np.float64)
    sim_metrics = {
        m: np.array([r["sim"].get(m, np.nan) for r in recs]) for m in group.d.leakage_active.values()
    }
    sim_e, sim_p, sim_s = energy_power(
        group.d, group.sm, grid, _stack_events([r.get("events") for r in recs], n), sim_cycles, sim_metrics
    )
    mod_e, mod_p, mod_s = energy_power(
        group.d,
        group.sm,
        grid,
        pred["events"],
        pred["cycles"],
        {m: pred.get(m) for m in group.d.leakage_active.values()},
    )
    has_events = np.array([bool(r.get("events")) for r in recs])
    out = []
    for i, r in enumerate(recs):
        s_n = max(float(r["sim"]["warp_instructions"]), 1.0)
        m_n = max(float(group.prof.n_instrs), 1.0)
        out.append(
            {
                "sim": {
                    "ipc": float(r["sim"]["ipc"]),
                    "energy_per_instr": float(sim_e[i]) / s_n if has_events[i] else np.nan,
                    "power_mw": float(sim_p[i]) if has_events[i] else np.nan,
                },
                "model": {
                    "ipc": float(pred["ipc"][i]),
                    "energy_per_instr": float(mod_e[i]) / m_n,
                    "power_mw": float(mod_p[i]),
                },
                "metrics": {
                    **metric_pairs(group.d, r, {k: v[i] for k, v in pred.get("metrics", {}).items()}, m_n),
                    **(structure_energy_pairs(sim_s, mod_s, i, n, (s_n, m_n)) if has_events[i] else {}),
                }
                if ran(r["sim"])
                else {},
            }
        )
    return out


def _effect(a: float, b: float) -> float:
    return a / b - 1.0 if b > 0 and np.isfinite(a) and np.isfinite(b) else np.nan


def effect_rows(records: list[dict], values: dict) -> list[dict]:
    """One row per record of a design other than the baseline whose baseline reference (same GPU, workload
    and shared point, :func:`shared_point`) was simulated: both engines' values (``values``: ``{id(record):
    group_values row}``) and effects, the record's held-out status and the simulator's stall counters of
    both runs."""
    from rfmodel.evaluate import ANCHOR_DESIGN

    fields = {}
    base = {}
    for r in records:
        if r["design"] == ANCHOR_DESIGN and id(r) in values:
            if r["gpu"] not in fields:
                fields[r["gpu"]] = shared_keys(r["gpu"])
            base[(r["gpu"], r["workload"], shared_point(r, fields[r["gpu"]]))] = r
    rows = []
    for r in records:
        if r["design"] == ANCHOR_DESIGN or id(r) not in values or r["gpu"] not in fields:
            continue
        b = base.get((r["gpu"], r["workload"], shared_point(r, fields[r["gpu"]])))
        if b is None:
            continue
        v, vb = values[id(r)], values[id(b)]
        row = {
            "design": r["design"],
            "gpu": r["gpu"],
            "workload": r["workload"],
            "params": r["params"],
            "bank_read_cycles": bank_speed(r),
            "heldout": r.get("heldout", ""),
            "sim_stalls": r.get("stalls", {}),
            "base_stalls": b.get("stalls", {}),
        }
        for name, key in EFFECTS.items():
            row[f"{name}_sim"], row[f"{name}_model"] = v["sim"][key], v["model"][key]
            row[f"{name}_effect_sim"] = _effect(v["sim"][key], vb["sim"][key])
            row[f"{name}_effect_model"] = _effect(v["model"][key], vb["model"][key])
        row["ipc_base_sim"], row["ipc_base_model"] = vb["sim"]["ipc"], vb["model"]["ipc"]
        rows.append(row)
    return rows


def _explain(row: dict) -> str:
    """The simulator's stall reasons that moved between the baseline and the design (per cent of the
    baseline's stall cycles), and the direction of the model's error."""
    m, s_ = row["ipc_effect_model"], row["ipc_effect_sim"]
    if m * s_ > 0:  # the same sign: too much of it or too little
        how = "more" if abs(m) > abs(s_) else "less"
        what = f"{how} {'gain' if s_ > 0 else 'loss'} than the simulator"
    else:
        what = "the opposite sign to the simulator" if m * s_ < 0 else "a different effect from the simulator"
    parts = [f"model effect {100 * m:+.1f} % against {100 * s_:+.1f} % ({what})"]
    ed, eb = _log_errors([row])
    if len(ed):  # whose IPC the model has off: the design's, the baseline's at the same point, or both
        parts.append(
            f"model IPC against the simulator's: the design's {100 * np.expm1(ed[0]):+.1f} %, "
            f"the baseline's {100 * np.expm1(eb[0]):+.1f} %"
        )
    s, b = row.get("sim_stalls") or {}, row.get("base_stalls") or {}
    total = sum(b.values()) or sum(s.values())
    if total > 0:
        moved = sorted(
            ((k, s.get(k, 0.0) - b.get(k, 0.0)) for k in set(s) | set(b)), key=lambda kv: -abs(kv[1])
        )
        parts.append(
            "simulator stalls, design less baseline: "
            + ", ".join(f"{k} {100 * dv / total:+.0f} %" for k, dv in moved[:3] if dv)
        )
    return "; ".join(parts)


def _log_errors(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """``log(model / simulator)`` of each row's design IPC and of its baseline's at the same point (the rows
    where all four are positive and finite).  The effect's log error, ``log((1 + model effect) / (1 +
    simulated effect))``, is the first less the second."""
    keys = ("ipc_model", "ipc_sim", "ipc_base_model", "ipc_base_sim")
    v = np.array([[float(r.get(k, np.nan)) for k in keys] for r in rows], dtype=np.float64).reshape(-1, 4)
    ok = np.all(np.isfinite(v) & (v > 0.0), axis=1)
    v = v[ok]
    return np.log(v[:, 0] / v[:, 1]), np.log(v[:, 2] / v[:, 3])


def error_parts(rows: list[dict]) -> dict | None:
    """Where the IPC effect's error comes from, over ``rows``: the RMS of ``log(model / simulator)`` of the
    design's IPC (``design``: the effect's log error were the baseline's IPC exact), of the baseline's at
    the same points (``baseline``: were the design's exact), and of their difference (``effect``, the
    effect's own log error), with the correlation of the two (errors they share cancel in the effect);
    ``None`` without two rows to compare."""
    ed, eb = _log_errors(rows)
    if len(ed) < 2:
        return None

    def rms(x):
        return float(np.sqrt(np.mean(x**2)))

    corr = float(np.corrcoef(ed, eb)[0, 1]) if np.std(ed) > 0 and np.std(eb) > 0 else None
    return {"n": len(ed), "design": rms(ed), "baseline": rms(eb), "effect": rms(ed - eb), "corr": corr}


def summarize(rows: list[dict]) -> dict:
    """The per-design figures over ``rows`` (normally the held-out ones)."""
    if not rows:
        return {"n_effect": 0}
    out: dict = {"n_effect": len(rows)}
    for name in EFFECTS:
        err = np.array([r[f"{name}_effect_model"] - r[f"{name}_effect_sim"] for r in rows], dtype=np.float64)
        err = err[np.isfinite(err)]
        out[f"{name}_effect_mae"] = float(100 * np.mean(np.abs(err))) if len(err) else None
    # the IPC effect MAE per speed of the register banks (:func:`bank_speed`): the slow-bank points, where
    # the caching designs' effects are large, apart from the SM's own
    by_speed: dict = {}
    for r in rows:
        by_speed.setdefault(bank_speed(r), []).append(r)
    by_speed = dict(sorted(by_speed.items()))
    speeds = {x: [abs(r["ipc_effect_model"] - r["ipc_effect_sim"]) for r in v] for x, v in by_speed.items()}
    speeds = {x: [e for e in v if np.isfinite(e)] for x, v in speeds.items()}
    out["ipc_effect_mae_by_bank_speed"] = {f"{x:g}x": float(100 * np.mean(v)) for x, v in speeds.items() if v}
    # the IPC effect's error taken apart into the design's IPC error and the baseline's, over every row
    # and per bank speed (at slow banks the baseline's own error is as large as the caching designs' own)
    parts = {"all": error_parts(rows)} | {f"{x:g}x": error_parts(v) for x, v in by_speed.items()}
    out["ipc_effect_error_parts"] = {k: v for k, v in parts.items() if v is not None}
    big = [r for r in rows if np.isfinite(r["ipc_effect_sim"]) and abs(r["ipc_effect_sim"]) >= SIGN_THRESHOLD]
    same = [np.sign(r["ipc_effect_model"]) == np.sign(r["ipc_effect_sim"]) for r in big]
    out["n_sign"] = len(big)
    out["ipc_sign_agreement"] = float(np.mean(same)) if big else None
    sim = np.array([r["ipc_effect_sim"] for r in rows])
    mod = np.array([r["ipc_effect_model"] for r in rows])
    ok = np.isfinite(sim) & np.isfinite(mod)
    varied = ok.sum() > 2 and np.std(sim[ok]) > 0 and np.std(mod[ok]) > 0
    out["ipc_effect_corr"] = float(np.corrcoef(sim[ok], mod[ok])[0, 1]) if varied else None
    # the analytic effect's own error scale: RMS of log((1 + model effect) / (1 + simulated effect)), what
    # an effect's interval carries (rfmodel.evaluate.compare)
    out["ipc_effect_log_sd"] = _log_sd(rows, least=2)
    # and apart by the banks' speed: the error at slow banks is several times the SM's own (an interval of
    # the one scale over all points is too wide at one and too narrow at the other)
    by = {f"{x:g}": _log_sd(v) for x, v in by_speed.items()}
    out["ipc_effect_log_sd_by_bank_speed"] = {k: v for k, v in by.items() if v is not None}
    out["ipc_effect_sim_median"] = float(100 * np.median(sim[ok])) if ok.any() else None
    out["ipc_effect_model_median"] = float(100 * np.median(mod[ok])) if ok.any() else None
    worst = sorted(
        (r for r in rows if np.isfinite(r["ipc_effect_model"] - r["ipc_effect_sim"])),
        key=lambda r: -abs(r["ipc_effect_model"] - r["ipc_effect_sim"]),
    )[:5]
    out["worst_effects"] = [
        {
            **{
                k: r[k]
                for k in ("gpu", "workload", "params", "heldout", "ipc_effect_sim", "ipc_effect_model")
            },
            "explanation": _explain(r),
        }
        for r in worst
    ]
    return out


#: the fewest records an effect's error scale at one speed of the banks is given over (:func:`_log_sd`)
LOG_SD_MIN_RECORDS = 4


def _log_sd(rows: list[dict], least: int = LOG_SD_MIN_RECORDS) -> float | None:
    """RMS of ``log((1 + model effect) / (1 + simulated effect))`` of the rows' IPC effects (those finite
    and above -1; ``None`` below ``least`` of them)."""
    sim = np.array([r["ipc_effect_sim"] for r in rows], dtype=np.float64)
    mod = np.array([r["ipc_effect_model"] for r in rows], dtype=np.float64)
    ok = np.isfinite(sim) & np.isfinite(mod) & (sim > -1.0) & (mod > -1.0)
    if ok.sum() < least:
        return None
    return float(np.sqrt(np.mean(np.log((1.0 + mod[ok]) / (1.0 + sim[ok])) ** 2)))


#: the simulated gaps (``faster / slower - 1``) from which :func:`ranking` also counts the pairs ordered alike
PAIR_GAPS = (0.02, 0.05, 0.10, 0.20, 0.40)


def _by_gap(gaps: np.ndarray, right: np.ndarray) -> list[dict]:
    """Per gap of :data:`PAIR_GAPS`: the pairs the simulator separates by it or more and the share the model
    orders alike (``None`` where there are none)."""
    out = []
    for g in PAIR_GAPS:
        sel = gaps >= g - 1e-12
        n = int(sel.sum())
        out.append({"gap": g, "n_pairs": n, "agreement": float(right[sel].mean()) if n else None})
    return out


def ranking(records: list[dict], values_of: dict, heldout_only: bool = True) -> dict:
    """Kendall's tau (b) between the simulator's and the model's order of the designs by IPC, per (GPU,
    workload, shared point) group of three records or more (the designs and their parameter points at that SM
    point); ``heldout_only``: the groups of the held-out workloads.

    Beside it, over every pair of records in a group (two records or more) whose simulated IPCs differ by at
    least :data:`SIGN_THRESHOLD` (the pairs the simulator tells apart, where tau also counts pairs inside its
    noise): the share the model orders the same way (``pair_agreement``, of ``n_pairs``), the same from each
    larger gap of :data:`PAIR_GAPS` (``pair_agreement_by_gap``: a model that gets the near ties wrong and the
    wide gaps right ranks designs better than the reverse), and the ``worst_pairs`` it orders the other way,
    largest simulated difference first."""
    from scipy.stats import kendalltau

    groups: dict = {}
    fields: dict = {}
    for r in records:
        if id(r) not in values_of:
            continue
        if heldout_only and "workload" not in r.get("heldout", ""):
            continue
        f = fields.setdefault(r["gpu"], shared_keys(r["gpu"]))
        groups.setdefault((r["gpu"], r["workload"], shared_point(r, f)), []).append((r, values_of[id(r)]))
    taus = []
    n_pairs = agree = 0
    wrong = []
    gaps, right = [], []  # every separated pair's simulated gap, and whether the model orders it alike
    for (gpu, wl, point), members in groups.items():
        sim = np.array([v["sim"]["ipc"] for _, v in members], dtype=np.float64)
        mod = np.array([v["model"]["ipc"] for _, v in members], dtype=np.float64)
        for i in range(len(members)):
            for j in range(i + 1, len(members)):
                if not (sim[i] > 0 and sim[j] > 0 and np.isfinite(mod[i]) and np.isfinite(mod[j])):
                    continue
                hi, lo = (i, j) if sim[i] >= sim[j] else (j, i)
                gap = sim[hi] / sim[lo] - 1.0
                if gap < SIGN_THRESHOLD:
                    continue
                n_pairs += 1
                gaps.append(gap)
                right.append(bool(mod[hi] > mod[lo]))
                if mod[hi] > mod[lo]:
                    agree += 1
                else:
                    a, b = members[hi][0], members[lo][0]
                    wrong.append(
                        {
                            "gpu": gpu,
                            "workload": wl,
                            "point": dict(point),
                            "faster": {"design": a["design"], "params": a["params"]},
                            "slower": {"design": b["design"], "params": b["params"]},
                            "sim_gap": float(gap),
                            "model_gap": float(mod[hi] / mod[lo] - 1.0),
                        }
                    )
        if len(members) < 3:
            continue
        t = kendalltau(sim, mod).statistic
        if np.isfinite(t):
            taus.append(float(t))
    out = {
        "n_groups": len(taus),
        "n_pairs": n_pairs,
        "pair_agreement": agree / n_pairs if n_pairs else None,
        "pair_agreement_by_gap": _by_gap(np.array(gaps), np.array(right, dtype=bool)),
        "worst_pairs": sorted(wrong, key=lambda w: -w["sim_gap"])[:5],
    }
    if taus:
        t = np.array(taus)
        out.update(
            {
                "kendall_tau_median": float(np.median(t)),
                "kendall_tau_mean": float(t.mean()),
                "kendall_tau_min": float(t.min()),
                "share_tau_at_least_0_8": float(np.mean(t >= 0.8)),
            }
        )
    return out


def effect_report(records: list[dict], values: dict) -> dict:
    """``{"designs": {design: summary of its held-out rows}, "metrics": {design: every metric both engines
    give, over its held-out records (:func:`rfmodel.calibrate.metrics.summarize_metrics`)}, "ranking":
    Kendall's tau over the held-out workloads' groups, "rows": every row}`` (:func:`effect_rows`,
    :func:`summarize`, :func:`ranking`).
    ``records`` carry the calibration split's ``heldout`` marks; ``values``: ``{id(record): group_values
    row}`` of both engines (``rfmodel.calibrate.record_values``)."""
    from rfmodel.calibrate.metrics import summarize_metrics

    rows = effect_rows(records, values)
    designs = {
        d: summarize([r for r in rows if r["design"] == d and r["heldout"]])
        for d in sorted({r["design"] for r in rows})
    }
    # every metric both engines report, over each design's held-out records
    metrics = {}
    for d in sorted({r["design"] for r in records}):
        held = [r for r in records if r["design"] == d and r.get("heldout") and id(r) in values]
        metrics[d] = summarize_metrics(
            [values[id(r)]["metrics"] for r in held],
            [{k: r.get(k) for k in ("gpu", "workload", "params", "stalls")} for r in held],
        )
    return {"designs": designs, "metrics": metrics, "ranking": ranking(records, values), "rows": rows}
