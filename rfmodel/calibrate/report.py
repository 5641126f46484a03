"""Progress bar, the calibration command and the generated validation section.

``run(...)`` is what ``rfmodel calibrate`` and ``calib/run.py`` call: it runs
:func:`rfmodel.calibrate.calibrate` with a progress bar (``tqdm`` when installed, else a
one-line text bar on stderr), writes ``rfmodel/data/calibration/analytic.json`` and
``calib/report.json``, and regenerates the section "## Analytic models versus the simulator"
of ``docs/validation.md`` from the report (:func:`validation_section`).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path

from rfmodel.io import write_text

SECTION = "## Analytic models versus the simulator"
GOALS = {
    "ipc_mape": 0.10,
    "hit_rate_mae": 0.05,
    "rf_cache_hit_rate_mae": 0.05,
    "wb_hit_rate_mae": 0.05,
    "coalesced_share_mae": 0.05,
    "rf_active_fraction_mae": 0.05,
    "bank_stall_rel_err": 0.20,
}


class Progress:
    """``progress(done, total)`` callable: tqdm if installed, else a simple text bar on stderr."""

    def __init__(self, desc: str = "simulations", stream=None, enabled: bool = True):
        self.desc, self.stream, self.enabled = desc, stream or sys.stderr, enabled
        self.bar = None
        self.t0 = time.time()
        self._last = -1.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            if self.bar is None:
                self.bar = tqdm(total=total, desc=self.desc, file=self.stream, initial=done)
            else:
                self.bar.update(done - self.bar.n)
            return
        now = time.time()
        if done < total and now - self._last < 0.5:
            return
        self._last = now
        frac = done / total if total else 1.0
        bar = "#" * int(30 * frac)
        self.stream.write(f"\r{self.desc} [{bar:<30}] {done}/{total} {now - self.t0:5.0f}s")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def load_sweep(path) -> dict:
    """A sweep from a JSON file, checked (:func:`rfmodel.calibrate.check_sweep`)."""
    from rfmodel.calibrate import check_sweep
    from rfmodel.errors import ParseError
    from rfmodel.io import read_text

    try:
        data = json.loads(read_text(path, "sweep file"))
    except json.JSONDecodeError as e:
        raise ParseError(str(path), e.lineno, f"malformed JSON: {e.msg}") from None
    except RecursionError:
        raise ParseError(str(path), None, "malformed JSON: nested too deeply to read") from None
    return check_sweep(data, str(path))


def run(
    sweep: str | dict = "default",
    *,
    checkpoint_dir="calib/checkpoints",
    out=None,
    report="calib/report.json",
    validation_doc=None,
    workers: int = 2,
    designs=None,
    progress=True,
    coverage_samples: int = 40,
    max_nfev: int = 30,
    runner=None,
    adopt=None,
    adopt_verify: int = 1,
) -> dict:
    """Calibrate; see the module docstring.  ``sweep``: ``"default"``, ``"quick"``, a JSON file or a dict.
    ``adopt``: another checkpoint log whose simulations this tree reuses after simulating ``adopt_verify``
    of each design's again (:func:`rfmodel.calibrate.adopt_simulations`)."""
    from rfmodel.analytic.calibration import DEFAULT_FILE
    from rfmodel.calibrate import DEFAULT_SWEEP, QUICK_SWEEP, calibrate

    if isinstance(sweep, str):
        sweep = {"default": DEFAULT_SWEEP, "quick": QUICK_SWEEP}.get(sweep) or load_sweep(sweep)
    bar = Progress(enabled=progress)

    def fit_note(d, rep):
        if progress:
            sys.stderr.write(
                f"fitted {d}: held-out IPC MAPE {rep.get('ipc_mape', float('nan')):.3f} "
                f"({rep.get('n_heldout', 0)} points)\n"
            )

    from rfmodel.io import folder_lock, output_set

    out = out if out is not None else DEFAULT_FILE
    # one run at a time on a checkpoint folder; the calibration, the report and the validation section
    # are one set of files: all of them are written or none
    lock = folder_lock(checkpoint_dir, "checkpoint folder") if checkpoint_dir else contextlib.nullcontext()
    with lock, output_set([p for p in (out, report, validation_doc) if p]):
        adopted = None
        if adopt is not None:
            from rfmodel.calibrate import adopt_simulations

            if progress:
                sys.stderr.write(
                    f"adopting the simulations of {adopt}: simulating {adopt_verify} of each "
                    "design's again ...\n"
                )
            adopted = adopt_simulations(adopt, checkpoint_dir, verify=adopt_verify)
            if progress:
                sys.stderr.write(
                    f"adopted {adopted['adopted']} of {adopted['read']} simulations "
                    f"({adopted['verified']} simulated again, every one equal)\n"
                )
        res = calibrate(
            sweep,
            checkpoint_dir=checkpoint_dir,
            out=out,
            report_path=report,
            workers=workers,
            runner=runner,
            progress=bar,
            designs=designs,
            max_nfev=max_nfev,
            progress_fit=fit_note,
            coverage_samples=coverage_samples,
        )
        bar.close()
        if adopted is not None:
            res["adopted"] = adopted
        if validation_doc and not res.get("incomplete"):
            update_validation_doc(validation_doc, validation_section(res))
    return res


def _pct(x) -> str:
    return "n/a" if x is None or x != x else f"{100 * x:.1f} %"


def validation_section(res: dict) -> str:
    """Markdown of the held-out comparison (generated from the calibration result)."""
    sw = res["sweep"]
    lines = [
        SECTION,
        "",
        "*Generated by `calib/run.py` from `calib/report.json`; do not edit by hand.*",
        "",
        f"Sweep `{sw['name']}`: {len(sw['gpus'])} GPU(s) ({', '.join(sw['gpus'])}), "
        f"{len(res.get('workloads', [])) or 'the listed'} workloads, {len(sw['points'])} shared design-point "
        "templates (each applied to the designs that understand it)"
        + (" and each design's own (`Design.calibration_points`)" if sw.get("design_points", True) else "")
        + f", `max_warps = {sw.get('max_warps')}`; "
        f"{res['simulations']} simulations, simulator `{res['simulator_version']}`.  Held out: "
        f"{100 * sw.get('holdout_fraction', 0.3):.0f} % of the workloads and, per design, of its design "
        "points (the smallest seeded hashes of their names and parameters); a record is held out if either "
        "is.  Coefficients fitted by `scipy.optimize.least_squares` "
        "on the rest.",
        "",
        "Goals: IPC MAPE ≤ 10 % (5 % aim), cache hit-rate error ≤ 5 points, bank-conflict stall cycles "
        "within 20 %.  `bank stall` is the median of |model − sim| / max(sim, 1 % of instructions) over "
        "every held-out point (their number in brackets; slow banks included: the per-metric table's "
        "definition; the fit's stall residual pads by twice that floor over the runs with a bank conflict, "
        "docs/calibration.md); "
        "`within 20 %` the share of points meeting that; `L1D hit` is the L1D hit-rate mean absolute error; "
        "`RF-cache hit` the design's register-cache hit-rate error (the STT-RAM design's: the share of "
        "reads its write buffer serves, marked `wb`); `MC cover` the share of held-out "
        "simulator IPCs inside the Monte-Carlo 95 % interval (workload ±10 %, and the model's own error at "
        "its cross-validated scale `model_log_ipc_sd`, `cv` in the table, and in brackets per speed of the "
        "register banks where the sweep has more than one: the cycles a read holds its bank, 1x the SM's "
        "own, the STT-RAM banks' 2x at `main_rf_latency_x` 1; each point's interval takes the scale at its "
        "speed; at speeds slower than a design's training measured, its slowest scale grown as the "
        "baseline's grows there, marked `grown`, "
        "`model_log_ipc_sd_by_bank_speed`; `MC width` the median width of that interval relative to the "
        "simulator's IPC).",
        "",
        "| design | held-out points | train points | IPC MAPE | IPC APE p90 | L1D hit MAE | RF-cache hit MAE "
        "| bank stall | within 20 % | RF access err | cv | MC cover | MC width |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for d, r in sorted(res["designs"].items()):
        mc = r.get("mc_coverage", {})
        lines.append(
            f"| {d} | {r.get('n_heldout', 0)} | {r.get('n_train', 0)} | {_pct(r.get('ipc_mape'))} | "
            f"{_pct(r.get('ipc_ape_p90'))} | {_pct(r.get('hit_rate_mae'))} | "
            f"{_design_hit(r)} | "
            f"{_pct(r.get('bank_stall_rel_err'))} ({r.get('n_stall', 0)}) | "
            f"{_pct(r.get('bank_stall_within_20pct'))} | "
            f"{_pct(r.get('rf_access_rel_err'))} | {r.get('cv_log_ipc_rms', float('nan')):.3f}"
            f"{_cv_speeds(r)} | "
            f"{_pct(mc.get('coverage'))} ({mc.get('n', 0)}){_speeds(mc.get('coverage_by_bank_speed'))} | "
            f"{_pct(mc.get('median_rel_width'))} |"
        )
    not_run = {d: r["n_not_run"] for d, r in sorted(res["designs"].items()) if r.get("n_not_run")}
    if not_run:
        lines += [
            "",
            "Held-out records whose simulation ran no instruction (no CTA fits the point's SM), left out "
            "of every figure here and below: " + ", ".join(f"{d} {n}" for d, n in not_run.items()) + ".",
        ]
    lines += ["", "Worst held-out IPC errors per design:", ""]
    for d, r in sorted(res["designs"].items()):
        for w in r.get("worst", [])[:2]:
            lines.append(
                f"- {d}, {w['workload']} on {w['gpu']} {w['params'] or '(defaults)'} "
                f"({w['heldout']} held out): "
                f"model {w['ipc_model']:.3f} vs sim {w['ipc_sim']:.3f} IPC ({_pct(w['ipc_ape'])}). "
                f"{w['explanation']}."
            )
    lines += effects_section(res)
    lines += metrics_section(res)
    goals = []
    for d, r in sorted(res["designs"].items()):
        miss = [k for k, g in GOALS.items() if r.get(k) is not None and r.get(k) > g]
        if miss:
            goals.append(f"{d} ({', '.join(miss)})")
    lines += ["", "Goals missed: " + ("; ".join(goals) if goals else "none") + ".", ""]
    return "\n".join(lines)


def _cv_speeds(r: dict) -> str:
    """`` (1x a / 3x b; 6x c grown)``: a design's cross-validated IPC error scale per bank speed, and the
    speeds it takes from the baseline's growth (:func:`rfmodel.calibrate.grown_by_baseline`)."""
    text = _speeds(r.get("cv_log_ipc_rms_by_bank_speed"), ".3f")
    grown = r.get("cv_log_ipc_rms_grown_by_baseline") or {}
    if text and grown:
        text = text[:-1] + "; " + " / ".join(f"{k}x {v:.3f}" for k, v in grown.items()) + " grown)"
    return text


def _speeds(by: dict | None, fmt: str | None = None) -> str:
    """`` (1x a / 6x b)``: a figure apart by the banks' speed, a percentage or as ``fmt`` (nothing with
    fewer than two speeds)."""
    by = by or {}
    text = (lambda v: _pct(v)) if fmt is None else (lambda v: format(v, fmt))
    return f" ({' / '.join(f'{k}x {text(v)}' for k, v in by.items())})" if len(by) > 1 else ""


def effects_section(res: dict) -> list[str]:
    """Markdown lines of the design effects (:mod:`rfmodel.calibrate.effects`); none when the result has
    none (a calibration of an earlier version)."""
    from rfmodel.calibrate.effects import EFFECT_GOALS, SIGN_THRESHOLD

    eff = {d: r["effects"] for d, r in sorted(res["designs"].items()) if r.get("effects", {}).get("n_effect")}
    if not eff:
        return []

    def pts(x):
        return "–" if x is None else f"{x:.2f}"

    rk = res.get("ranking", {})
    lines = [
        "",
        "### Design effects against the baseline",
        "",
        "A design's effect is `metric(design) / metric(baseline) − 1` at the same GPU, workload and point "
        "(the keys the baseline takes too: SM fields, `main_rf_latency_x`, `active_warps`), in each "
        "engine; the table gives, over each design's held-out records, the mean absolute "
        "error of the analytic effect in points (IPC, and the IPC's apart by the register banks' speed, "
        "the cycles a read holds its bank: 1x is the SM's own; energy per instruction, power; both engines' "
        "energies "
        "from the same accounting at the default technology), the share of the records with a simulator "
        f"|IPC effect| ≥ {100 * SIGN_THRESHOLD:.0f} % whose analytic effect has the same sign (their number "
        "in brackets), the correlation of the two engines' IPC effects, their medians, and the RMS of "
        "log((1 + model effect) / (1 + simulated effect)), the scale of the effect intervals "
        "(`model_log_effect_sd`, `ipc_effect_lo`/`_hi` of `rfmodel.compare`; in brackets per speed of the "
        "banks, the scale an interval takes at a point's bank read cycles).  Goals: IPC "
        f"effect MAE ≤ {EFFECT_GOALS['ipc_effect_mae']} points, sign agreement ≥ "
        f"{100 * EFFECT_GOALS['ipc_sign_agreement']:.0f} %, Kendall's τ of the designs' order ≥ "
        f"{EFFECT_GOALS['kendall_tau_median']} per (workload, GPU, point).",
        "",
        "| design | records | IPC effect MAE | by bank speed | sign agrees | corr. | "
        "median effect sim / model | energy/instr effect MAE | power effect MAE | effect log sd |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for d, e in eff.items():
        corr, sd = e.get("ipc_effect_corr"), e.get("ipc_effect_log_sd")
        by_sd = _speeds(e.get("ipc_effect_log_sd_by_bank_speed"), ".3f")
        speeds = " / ".join(f"{k} {v:.2f}" for k, v in (e.get("ipc_effect_mae_by_bank_speed") or {}).items())
        lines.append(
            f"| {d} | {e['n_effect']} | {pts(e.get('ipc_effect_mae'))} | {speeds or '–'} | "
            f"{_pct(e.get('ipc_sign_agreement'))} "
            f"({e.get('n_sign', 0)}) | {'–' if corr is None else f'{corr:.2f}'} | "
            f"{pts(e.get('ipc_effect_sim_median'))} / {pts(e.get('ipc_effect_model_median'))} % | "
            f"{pts(e.get('energy_per_instr_effect_mae'))} | {pts(e.get('power_effect_mae'))} | "
            f"{'–' if sd is None else f'{sd:.3f}'}{by_sd} |"
        )
    lines += _error_parts_lines(eff)
    if rk.get("n_groups"):
        lines += [
            "",
            "Order of the designs by IPC, per (GPU, held-out workload, shared point) group of "
            f"three records or more ({rk['n_groups']} groups): Kendall's τ median "
            f"{rk['kendall_tau_median']:.2f}, mean {rk['kendall_tau_mean']:.2f}, least "
            f"{rk['kendall_tau_min']:.2f}; {_pct(rk['share_tau_at_least_0_8'])} of the groups at "
            "0.8 or more.",
        ]
    if rk.get("n_pairs"):
        lines += [
            "",
            f"Pairs of records in those groups (two or more) whose simulated IPCs differ by "
            f"{100 * SIGN_THRESHOLD:.0f} % or more ({rk['n_pairs']} pairs): the model orders "
            f"{_pct(rk['pair_agreement'])} of them as the simulator does"
            + "".join(
                f"; by {100 * g['gap']:.0f} % or more {_pct(g['agreement'])} of {g['n_pairs']}"
                for g in rk.get("pair_agreement_by_gap", [])[1:]
                if g["n_pairs"]
            )
            + ". The pairs it orders the other way, largest simulated gap first:",
            "",
        ]
        for w in rk.get("worst_pairs", []):
            fa, sl = w["faster"], w["slower"]
            lines.append(
                f"- {w['workload']} on {w['gpu']} {w['point'] or '(defaults)'}: {fa['design']} "
                f"{fa['params'] or ''} ahead of {sl['design']} {sl['params'] or ''} by "
                f"{100 * w['sim_gap']:+.1f} % in the simulator, {100 * w['model_gap']:+.1f} % in "
                "the model."
            )
    lines += ["", "Worst held-out effect errors per design:", ""]
    for d, e in eff.items():
        for w in e.get("worst_effects", [])[:2]:
            lines.append(
                f"- {d}, {w['workload']} on {w['gpu']} {w['params'] or '(defaults)'} "
                f"({w['heldout']} held out): {w['explanation']}."
            )
    return lines


def _error_parts_lines(eff: dict) -> list[str]:
    """Markdown lines of where each design's IPC effect error comes from
    (:func:`rfmodel.calibrate.effects.error_parts`), over its held-out rows and at each bank speed."""
    have = {d: e["ipc_effect_error_parts"] for d, e in eff.items() if e.get("ipc_effect_error_parts")}
    if not have:
        return []
    speeds = sorted({k for p in have.values() for k in p if k != "all"}, key=lambda k: float(k[:-1]))

    def cell(p):
        return "–" if p is None else f"{p['design']:.3f} / {p['baseline']:.3f} / {p['effect']:.3f}"

    lines = [
        "",
        "Where the IPC effect's error comes from: the RMS of log(model / simulator) of the design's IPC, of "
        "the baseline's at the same points, and of the effect (the first less the second: log((1 + model "
        "effect) / (1 + simulated effect))), over each design's held-out records and per bank speed; the "
        "effect's error would be the first with an exact baseline and the second with an exact design, and "
        "what the two share cancels (their correlation).",
        "",
        "| design | all: design / baseline / effect | corr. | "
        + " | ".join(f"{k}: design / baseline / effect" for k in speeds)
        + " |",
        "| --- | --- | --- |" + " --- |" * len(speeds),
    ]
    for d, p in have.items():
        a = p.get("all")
        corr = "–" if a is None or a.get("corr") is None else f"{a['corr']:.2f}"
        lines.append(f"| {d} | {cell(a)} | {corr} | " + " | ".join(cell(p.get(k)) for k in speeds) + " |")
    return lines


def metrics_section(res: dict) -> list[str]:
    """Markdown lines of every metric both engines report, per design (:mod:`rfmodel.calibrate.metrics`)."""
    from rfmodel.calibrate.metrics import COUNT_FLOOR, METRIC_GOALS

    rows = [
        (d, name, m) for d, r in sorted(res["designs"].items()) for name, m in r.get("metrics", {}).items()
    ]
    if not rows:
        return []

    def err(m):
        return f"{100 * m['error']:.1f} points" if m["kind"] == "share" else f"{100 * m['error']:.0f} %"

    def mean(m, key):
        return f"{m[key]:.3g}" + (" /instr" if m["kind"] == "count" else "")

    lines = [
        "",
        "### Every metric both engines report",
        "",
        "Per design, over its held-out records: a share (a hit rate, a utilization) by its mean absolute "
        "error in points; a count (events over the run) per instruction in each engine by the median of "
        f"|model − sim| / max(sim, {COUNT_FLOOR} per instruction); a level (entries held, a mean latency) "
        "by the median relative error; each structure's energy per instruction (`energy_pj[s]`, dynamic "
        "and leakage: both engines' events and cycles charged by the same technology tables) as a count.  "
        f"Goals: shares within {100 * METRIC_GOALS['share']:.0f} points, "
        f"stall and conflict counts within {100 * METRIC_GOALS['stall']:.0f} % (median); the rest are "
        "reported without a goal, as is a metric whose value is the same at every record in both engines "
        "(it can only agree).",
        "",
        "| design | metric | kind | records | error | sim mean | model mean | goal |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for d, name, m in rows:
        goal = "–" if m["goal"] is None else ("met" if m["met"] else "**missed**")
        if m.get("constant"):
            goal = f"– ({m['sim_mean']:.3g} in both engines everywhere)"
        lines.append(
            f"| {d} | `{name}` | {m['kind']} | {m['n']} | {err(m)} | {mean(m, 'sim_mean')} | "
            f"{mean(m, 'model_mean')} | {goal} |"
        )
    missed = [
        (d, name, m) for d, name, m in rows if m["goal"] is not None and not m["met"] and m.get("worst")
    ]
    if missed:
        lines += [
            "",
            "The worst held-out record of each metric that misses its goal (by the metric's "
            "own error), with the simulator's stall cycles there by reason (their shares):",
            "",
        ]
        for d, name, m in missed:
            w = m["worst"]
            where = f"{w.get('workload')} on {w.get('gpu')} {w.get('params') or '(defaults)'}"
            lines.append(
                f"- {d} `{name}`, {where}: simulator {mean(m, 'worst_sim')}, model "
                f"{mean(m, 'worst_model')}{_stall_shares(w.get('stalls'))}."
            )
    return lines


def _stall_shares(stalls) -> str:
    """``; simulator stalls: a 60 %, b 30 %, c 5 %`` (the three largest reasons), or '' without stalls."""
    total = sum((stalls or {}).values())
    if not total:
        return ""
    top = sorted(stalls.items(), key=lambda kv: -kv[1])[:3]
    return "; simulator stalls: " + ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in top if v)


def update_validation_doc(path, section: str) -> None:
    """Replace (or append) the generated section of ``docs/validation.md``."""
    p = Path(path)
    text = p.read_text() if p.is_file() else ""
    if SECTION in text:
        a = text.index(SECTION)
        b = text.find("\n## ", a + len(SECTION))
        text = text[:a] + section + ("" if b < 0 else text[b:])
    else:
        text = text.rstrip("\n") + "\n\n" + section
    write_text(p, text if text.endswith("\n") else text + "\n")


def _design_hit(r: dict) -> str:
    """The design's own share error: its register cache's hits, else its write buffer's or its coalesced
    share (marked).  A hit rate the same at every record in both engines (the LTRF family's 1: every operand
    read from its interval cache) is said as such, not as an error of 0 (:mod:`rfmodel.calibrate.metrics`)."""
    hit = r.get("metrics", {}).get("rf_cache_hit_rate", {})
    if r.get("rf_cache_hit_rate_mae") is not None and hit.get("constant"):
        return f"n/a ({hit['sim_mean']:.3g} in both)"
    if r.get("rf_cache_hit_rate_mae") is not None:
        return _pct(r.get("rf_cache_hit_rate_mae"))
    if r.get("wb_hit_rate_mae") is not None:
        return f"{_pct(r.get('wb_hit_rate_mae'))} wb"
    if r.get("coalesced_share_mae") is not None:
        occ = r.get("rf_active_fraction_mae")
        return f"{_pct(r.get('coalesced_share_mae'))} coal." + ("" if occ is None else f", {_pct(occ)} occ.")
    return _pct(None)
