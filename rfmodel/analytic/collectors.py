"""Analytic terms of the collector-cache designs: Malekeh, BOW and the operand reuse cache.

Each design's ``analytic()`` calls its function here; the free coefficients are what a
calibration fits (each design's ``calibration_params``, read with
:func:`rfmodel.analytic.calibration.coefficients`).  The terms are first order and vectorized
over the parameter grid; the equations and their assumptions are in docs/designs.md.
"""

from __future__ import annotations

import numpy as np

from rfmodel.analytic.calibration import coefficients
from rfmodel.analytic.throughput import INTERVAL_COEFFICIENTS
from rfmodel.designs.baseline import resident_warps, sm_param
from rfmodel.workload.ir import OpClass

#: Malekeh's free coefficients (default, lower, upper): ``Malekeh.calibration_params``
MALEKEH_CALIBRATION = {
    "near_hit": (0.85, 0.2, 1.0),  # fraction of near reuses that hit when the warp keeps its CCU
    "flush_per_instr": (0.08, 0.0, 1.0),  # CT flush rate per instruction per unit of CCU over-subscription
    "write_share": (0.5, 0.0, 1.0),  # share of hits that were cached writes (for the CCU write events)
    "dropped_share": (0.05, 0.0, 0.5),  # share of near results dropped at the CCU's one write port
    "ipc_gain_per_saved_read": (0.08, 0.0, 0.5),  # relative IPC gain per bank read saved per instruction
    "sthld_ipc_loss": (0.004, 0.0, 0.05),  # relative IPC loss per STHLD cycle of waiting
    "near_fraction_default": (0.5, 0.0, 1.0),  # when the profile has no reuse-distance histogram
}
#: the defaults alone (kept for callers of the first version)
MALEKEH_COEFFS = {k: v[0] for k, v in MALEKEH_CALIBRATION.items()}
#: BOW's free coefficients
BOW_CALIBRATION = {
    "bow_hit_scale": (0.9, 0.3, 1.2),  # window-forwarded share of the reuses within window - 1
    "bow_bypass_share": (0.5, 0.0, 1.0),  # share of forwarded reads whose write bypasses the RF
    "bow_ipc_gain": (0.04, 0.0, 0.3),  # relative IPC gain per bank read saved per instruction
}
#: the operand reuse cache's free coefficients
REUSE_CACHE_CALIBRATION = {
    "reuse_flag_share": (0.35, 0.0, 1.0),  # flagged share of the reads at reuse distance 1
    "reuse_same_warp": (0.8, 0.0, 1.0),  # chance that the slot is not taken by another warp first
    "reuse_ipc_gain": (0.02, 0.0, 0.2),  # relative IPC gain per bank read saved per instruction
}
#: every coefficient a design's analytic terms read, by design: the baseline's interval model (which
#: these terms scale) and the design's own; the design classes expose them as ``calibration_params``
CALIBRATION_PARAMS = {
    "malekeh": {**INTERVAL_COEFFICIENTS, **MALEKEH_CALIBRATION},
    "bow": {**INTERVAL_COEFFICIENTS, **BOW_CALIBRATION},
    "reuse_cache": {**INTERVAL_COEFFICIENTS, **REUSE_CACHE_CALIBRATION},
}


# ----------------------------------------------------------------------------------- analytic helpers
def near_fraction_from_hist(hist, rthld) -> np.ndarray:
    """Fraction of source reads whose previous access of the register (same warp) is within ``rthld``.

    ``hist`` is the profile's log2 reuse-distance histogram (bin k: distances
    ``[2**k, 2**(k+1))``, last bin: first access); a bin cut by ``rthld`` counts
    in proportion.  Vectorized over ``rthld``.
    """
    h = np.asarray(hist, dtype=np.float64)
    tot = h.sum()
    rth = np.asarray(rthld, dtype=np.float64)
    if tot <= 0:
        return np.zeros_like(rth)
    out = np.zeros_like(rth)
    for k in range(len(h) - 1):
        lo, hi = 2.0**k, 2.0 ** (k + 1)  # distances lo .. hi - 1
        frac = np.clip((rth - lo + 1.0) / (hi - lo), 0.0, 1.0)
        out = out + h[k] * frac
    return out / tot


def mean_near_distance(hist, rthld) -> np.ndarray:
    """Mean distance of the near reuses (the midpoint of each log2 bin, cut at ``rthld``)."""
    h = np.asarray(hist, dtype=np.float64)
    rth = np.asarray(rthld, dtype=np.float64)
    num = np.zeros_like(rth)
    den = np.zeros_like(rth)
    for k in range(len(h) - 1):
        lo, hi = 2.0**k, 2.0 ** (k + 1)
        top = np.minimum(hi - 1.0, rth)
        cnt = h[k] * np.clip((top - lo + 1.0) / (hi - lo), 0.0, 1.0)
        num = num + cnt * (lo + np.maximum(top, lo)) / 2.0
        den = den + cnt
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)


def reuse_hist_from_trace(trace, nbins: int = 16) -> np.ndarray:
    """The profile's per-warp log2 reuse-distance histogram, computed here when a profile lacks it."""
    from rfmodel.analytic.profile import _distance_hists

    _dep, reuse = _distance_hists(trace.warp_ptr, trace.dst, trace.src, nbins)
    return reuse


def profile_reuse_hist(profile):
    h = getattr(profile, "reuse_dist_hist", None)
    if h is None:
        h = (getattr(profile, "attrs", None) or {}).get("reuse_dist_hist")
    return None if h is None else np.asarray(h, dtype=np.float64)


def scaled_baseline(base: dict, reads_saved, ipc_factor, extra_events: dict, drop=(),
                    bank_writes=None) -> dict:
    """The baseline's analytic metrics with ``reads_saved`` operands served outside the banks.

    ``base``: :meth:`rfmodel.designs.baseline.Baseline.analytic` evaluated with the design's bank read
    and write shares (:func:`with_shares`), so its bank queues, serialization and stalls are already the
    design's; ``ipc_factor`` multiplies its IPC (a design's residual terms).

    ``drop``: baseline structures the design replaces (their events are removed, so that the
    events name exactly the design's ``structures()``); ``bank_writes``: results written to the
    banks (default: all of them).
    """
    out = dict(base)
    ipc = base["ipc"] * ipc_factor
    n = base["rf_reads"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["cycles"] = np.where(ipc > 0, base["cycles"] * base["ipc"] / np.where(ipc > 0, ipc, 1.0), np.inf)
    out["ipc"] = ipc
    bank_reads = n - reads_saved
    out["rf_reads"] = n + 0 * ipc
    out["rf_bank_reads"] = bank_reads + 0 * ipc
    out["rf_reads_saved"] = reads_saved + 0 * ipc
    # base["bank_conflict_stall_cycles"] (kept): already those of the bank reads alone
    ev = {k: v for k, v in base["events"].items() if k not in drop}
    writes = base["rf_writes"] if bank_writes is None else bank_writes
    ev["rf_bank"] = (bank_reads + 0 * ipc, writes + 0 * ipc)
    ev["crossbar"] = (bank_reads + base["rf_writes"] + 0 * ipc, 0.0)
    ev.update(extra_events)
    out["events"] = ev
    return out


def with_shares(design, profile, sm, grid, hit, write_share=1.0) -> dict:
    """The baseline's analytic metrics when a share ``hit`` of the operand reads (and ``1 - write_share``
    of the results) do not access the banks: fewer bank accesses to queue and serialize, and no slow-bank
    write hold for the consumers that find their operand in the design's buffer.  The banks see what the
    design's collectors read (``design.operand_slots``): every operand slot (the reuse cache, keyed by
    slot) or the distinct sources (BOW and Malekeh read a register named twice by one instruction once)."""
    from rfmodel.designs.baseline import Baseline

    return Baseline().analytic(profile, sm, grid, read_share=1.0 - np.asarray(hit, dtype=np.float64),
                               write_share=write_share, operand_slots=design.operand_slots)  # fmt: skip


def _ipc_gain(base, hit, reads_per_instr, coef):
    """Residual relative IPC factor of a design that serves a share ``hit`` of the operands outside the
    banks, beyond what the base model with the design's bank shares gives (:func:`with_shares`).

    First order: it grows with the bank reads saved per instruction, fully where the baseline loses
    cycles to bank conflicts and half otherwise; a calibration that finds nothing left fits 0.
    """
    conflicted = np.where(np.asarray(base["bank_conflict_stall_cycles"]) > 0, 1.0, 0.5)
    return 1.0 + coef * hit * reads_per_instr * conflicted


def malekeh_analytic_terms(profile, sm, grid, design=None):
    """First-order hit rate and its effects (docs/designs.md, "Malekeh", analytic model).

    hit = near_fraction(RTHLD) x near_hit x survival, where survival =
    exp(-flush x d_near x oversub / (1 + 0.1 STHLD)) is the chance that the warp keeps its CCU for
    the mean near distance d_near when W warps share C CCUs per group
    (oversub = max(0, 1 - C / W)), raised by STHLD waiting.
    """
    if design is None:
        from rfmodel.designs.malekeh import Malekeh

        design = Malekeh()
    c = coefficients(design, grid)
    rthld = np.asarray(grid.get("rthld", _malekeh_defaults()["rthld"]), dtype=np.float64)
    sthld = np.asarray(grid.get("sthld", _malekeh_defaults()["sthld"]), dtype=np.float64)
    hist = profile_reuse_hist(profile)
    if hist is None:
        near = c["near_fraction_default"] + 0 * rthld
        dnear = np.maximum(rthld / 2.0, 1.0)
    else:
        near = near_fraction_from_hist(hist, rthld)
        dnear = mean_near_distance(hist, rthld)
    G = sm.schedulers_per_sm if sm.sub_core else 1
    ccus = np.maximum(np.asarray(sm_param(sm, grid, "collector_units"), dtype=np.float64) / G, 1.0)
    warps = np.maximum(np.asarray(resident_warps(profile, sm, grid), dtype=np.float64) / G, 1.0)
    oversub = np.maximum(0.0, 1.0 - ccus / warps)
    survival = np.exp(-c["flush_per_instr"] * dnear * oversub / (1.0 + 0.1 * sthld))
    hit = np.clip(near * c["near_hit"] * survival, 0.0, 1.0)
    base = with_shares(design, profile, sm, grid, hit)
    reads = base["rf_reads"]
    saved = reads * hit
    gain = _ipc_gain(base, hit, profile.reads_per_instr, c["ipc_gain_per_saved_read"])
    loss = 1.0 - c["sthld_ipc_loss"] * sthld * oversub
    factor = np.maximum(gain * loss, 0.05)
    writes = base["rf_writes"]
    near_writes = saved * c["write_share"]
    ccu_writes = near_writes + (reads - saved)  # cached results and the fills of misses
    ccu_ev = {"ccu": (reads + 0 * factor, ccu_writes + 0 * factor)}
    out = scaled_baseline(base, saved, factor, ccu_ev, drop=("collector",))
    out["rf_cache_hit_rate"] = hit + 0 * factor
    out["rf_writes"] = writes + 0 * factor
    out["ccu_dropped_writes"] = near_writes * c["dropped_share"] + 0 * factor
    out["sthld_mean"] = sthld + 0 * factor
    n = float(profile.n_instrs)
    out["ccu_flushes"] = n * c["flush_per_instr"] * oversub + 0 * factor
    out["sthld_stall_cycles"] = out["ccu_flushes"] * near * sthld
    return out


def bow_analytic_terms(design, profile, sm, grid):
    """BOW: the reads whose previous access of the register (same warp) is within ``window - 1``.

    hit = bow_hit_scale x near_fraction(window - 1) (the profile's reuse-distance histogram; the
    scale stands for the window flushes at taken branches); bypassed writes =
    bow_bypass_share x hits (results consumed only inside the window).
    """
    from rfmodel.designs.bow import DEFAULTS

    c = coefficients(design, grid)
    window = np.asarray(grid.get("window", DEFAULTS["window"]), dtype=np.float64)
    bypass_on = np.asarray(grid.get("write_bypass", DEFAULTS["write_bypass"]), dtype=np.float64)
    hist = profile_reuse_hist(profile)
    look = np.maximum(window - 1.0, 0.0)
    near = near_fraction_from_hist(hist, look) if hist is not None else 0.3 * np.minimum(look, 3.0) / 3.0
    hit = np.clip(c["bow_hit_scale"] * near, 0.0, 1.0)
    bypass_frac = np.minimum(hit * profile.reads_per_instr * c["bow_bypass_share"] * bypass_on
                             / max(profile.writes_per_instr, 1e-12), 1.0)  # fmt: skip
    base = with_shares(design, profile, sm, grid, hit, write_share=1.0 - bypass_frac)
    reads = base["rf_reads"]
    saved = reads * hit
    factor = np.maximum(_ipc_gain(base, hit, profile.reads_per_instr, c["bow_ipc_gain"]), 0.05)
    writes = base["rf_writes"]
    bypassed = np.minimum(saved * c["bow_bypass_share"] * bypass_on, writes)
    misses = reads - saved
    ev = {"bow_buffer": (reads + 0 * factor, misses + writes + 0 * factor)}
    out = scaled_baseline(base, saved, factor, ev, drop=("collector",), bank_writes=writes - bypassed)
    out["rf_cache_hit_rate"] = hit + 0 * factor
    out["rf_writes"] = writes + 0 * factor
    out["bow_bypassed_writes"] = bypassed + 0 * factor
    # every branch counted as taken: an upper bound of the window flushes
    out["bow_flushes"] = float(profile.n_instrs) * float(profile.mix[int(OpClass.BRANCH)]) + 0 * factor
    return out


def reuse_cache_analytic_terms(design, profile, sm, grid):
    """The operand reuse cache: flagged reads at reuse distance 1 that keep their slot.

    hit = reuse_flag_share x f1 x reuse_same_warp, where f1 is the profile's share of reads
    whose previous access of the register is the previous instruction of the warp (the only
    distance a ``.reuse`` flag can cover), reuse_flag_share the part of them the compiler flags
    (same operand slot, read not written) and reuse_same_warp the chance that no other warp's
    instruction takes the slot in between.  A profile of a trace without flags gives 0.
    """
    c = coefficients(design, grid)
    hist = profile_reuse_hist(profile)
    f1 = near_fraction_from_hist(hist, 1.0) if hist is not None else np.asarray(0.2)
    trace_attrs = (getattr(profile, "attrs", None) or {}).get("trace", {}) or {}
    no_flags = str(trace_attrs.get("source", "")) == "accelsim" or str(
        trace_attrs.get("kernel_source", "")).startswith("synthetic")
    flags = 0.0 if no_flags else 1.0
    hit = np.clip(c["reuse_flag_share"] * f1 * c["reuse_same_warp"] * flags, 0.0, 1.0)
    base = with_shares(design, profile, sm, grid, hit)
    reads = base["rf_reads"]
    saved = reads * hit
    factor = np.maximum(_ipc_gain(base, hit, profile.reads_per_instr, c["reuse_ipc_gain"]), 0.05)
    fills = reads * np.clip(c["reuse_flag_share"] * f1 * flags, 0.0, 1.0)
    ev = {"reuse_cache": (saved + 0 * factor, fills + 0 * factor)}
    out = scaled_baseline(base, saved, factor, ev)
    out["rf_cache_hit_rate"] = hit + 0 * factor
    out["reuse_flag_fraction"] = np.clip(c["reuse_flag_share"] * f1 * flags, 0.0, 1.0) + 0 * factor
    return out


def _malekeh_defaults():
    from rfmodel.designs.malekeh import DEFAULTS

    return DEFAULTS
