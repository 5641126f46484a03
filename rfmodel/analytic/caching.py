"""Analytic terms of the register-file-cache designs: RFC and the LTRF family.

Each design's ``analytic()`` calls its function here.  Both sit on the baseline's interval model
(:func:`rfmodel.designs.baseline.sm_interval`: cache reads and writes go through the SM's banks,
collectors and crossbar exactly as a baseline RF access does) and add the main register file.
Equations and assumptions: ``docs/models.md``, sections "RFC" and "LTRF family".

Free coefficients (``RFC_PARAMS``, ``LTRF_PARAMS``: ``name -> (default, lower, upper)``, the
interval model's included) are what ``rfmodel calibrate`` fits; a design reads them with
:func:`rfmodel.analytic.calibration.coefficients`.
"""

from __future__ import annotations

import numpy as np

from rfmodel.analytic.banks import bank_read_wait
from rfmodel.analytic.throughput import INTERVAL_COEFFICIENTS, softmin

#: cycles of one baseline bank access and of one warp register through the main-RF network
#: (full width, 4x narrower); the simulator's values (``rfmodel.designs.rfc``)
BANK_CYCLES = 1
XFER_CYCLES = (1.0, 4.0)
WARP_REG_BYTES = 128

RFC_PARAMS = {
    **INTERVAL_COEFFICIENTS,
    "rfc_flush": (1.0, 0.0, 1.0),  # weight of the deactivation-flush stack-distance table
    "rfc_miss_scale": (1.0, 0.2, 4.0),  # scale on the extra collection cycles of a main-RF read
    # entries a warp's partition effectively gains because the simulator allocates a result when it is
    # written back, later than the profile's trace order (loads: hundreds of cycles), so evictions come later
    "rfc_late_entries": (0.0, 0.0, 8.0),
}
LTRF_PARAMS = {
    **INTERVAL_COEFFICIENTS,
    "ws_fill": (1.0, 0.2, 2.0),  # registers fetched per prefetch / working set (or live-ins, LTRF+)
    "conflict_spread": (1.0, 0.0, 3.0),  # weight of the mapping's excess max bank load over an even spread
    "conf_spread": (0.2, 0.0, 3.0),  # the same after renumbering (LTRFconf)
    "pf_scale": (1.0, 0.2, 4.0),  # scale on the exposed prefetch time (issue / wake-up overheads)
    "deact_weight": (1.0, 0.0, 3.0),  # warp deactivations per deactivation point of the profile
    "wb_fraction": (0.5, 0.0, 1.5),  # main-RF write-backs per fetched register
}
#: calibration parameters of the designs whose analytic terms live here (used when the design
#: class does not declare ``calibration_params`` itself)
CALIBRATION_PARAMS = {
    "rfc": RFC_PARAMS,
    "ltrf": LTRF_PARAMS,
    "ltrf_plus": LTRF_PARAMS,
    "ltrfconf": LTRF_PARAMS,
    "strands": LTRF_PARAMS,
}


def _gp(grid: dict, name: str, default):
    return np.asarray(grid.get(name, default), dtype=np.float64)


def main_rf_timing(grid: dict):
    """``(lat, occ, xex)``: main-RF latency, bank occupancy and extra arrival cycles per access."""
    x = _gp(grid, "main_rf_latency_x", 1.0)
    narrow = _gp(grid, "narrow_crossbar", 0)
    lat = np.maximum(1.0, x * BANK_CYCLES)  # continuous (the simulator rounds to whole cycles)
    xfer = np.where(narrow > 0, XFER_CYCLES[1], XFER_CYCLES[0])
    return lat, np.maximum(lat, xfer), xfer - 1.0


def _coef(design, grid):
    from rfmodel.analytic.calibration import coefficients

    return coefficients(design, grid)


def _two_level(sm) -> float:
    return 1.0 if getattr(sm, "scheduler", "") == "two-level" else 0.0


def _sm_grid(sm, grid):
    return {k: v for k, v in grid.items() if k in sm.to_dict() or k == "collector_units"}


def _interval_coef(c: dict) -> dict:
    return {k: c[k] for k in INTERVAL_COEFFICIENTS if k in c}


# ----------------------------------------------------------------------------- RFC
def rfc_entries(grid, sm):
    """Cache entries (warp registers) per active warp: ``rfc_kb`` split over ``active_warps x S``."""
    kb = _gp(grid, "rfc_kb", 16)
    active = _gp(grid, "active_warps", 8)
    return np.maximum(1.0, np.floor(kb * 1024.0 / WARP_REG_BYTES / (active * sm.schedulers_per_sm)))


def analytic_rfc(design, profile, sm, grid, coeffs=None):
    """RFC: hit rate from the profile's per-warp FIFO/LRU register stack distances; a miss reads
    the main RF (latency, network, per-bank queue) during operand collection."""
    from rfmodel.designs.baseline import sm_interval

    c = {**_coef(design, grid), **(coeffs or {})}
    e = rfc_entries(grid, sm) + np.asarray(c["rfc_late_entries"])
    policy = _gp(grid, "rfc_policy", 0)
    flush = _two_level(sm) * np.asarray(c["rfc_flush"])
    hit = np.where(policy > 0, profile.reg_cache_hit_rate(e, "lru", flush),
                   profile.reg_cache_hit_rate(e, "fifo", flush))  # fmt: skip
    lat, occ, xex = main_rf_timing(grid)
    mbanks = _gp(grid, "main_rf_banks", sm.num_banks)
    rd = max(profile.distinct_reads_per_instr, 1e-9)
    p_miss_any = 1.0 - np.power(hit, rd)  # an instruction with at least one missing operand
    sg = _sm_grid(sm, grid)
    ic = _interval_coef(c)
    m = sm_interval(profile, sm, sg, ic)
    wait = 0.0
    for _ in range(2):  # main-RF bank queue at the current IPC, then the IPC with it
        lam = m["ipc"] * rd * (1.0 - hit) / np.maximum(mbanks, 1.0)  # main-RF reads per bank-cycle
        u = np.minimum(lam * occ, 0.95)
        wait = occ * np.minimum(bank_read_wait(u, 0.0, 1.0, 1.0), 50.0)
        extra = np.asarray(c["rfc_miss_scale"]) * p_miss_any * (lat - 1.0 + xex + wait)
        m = sm_interval(profile, sm, sg, ic, extra_collect=extra)
    n = float(profile.n_instrs)
    reads = n * profile.reads_per_instr
    writes = n * profile.writes_per_instr
    ipc = m["ipc"]
    z = 0 * ipc
    miss = reads * (1.0 - hit)
    mw = writes * (1.0 - hit)
    return {
        "ipc": ipc,
        "cycles": m["cycles"],
        "warps": m["warps"],
        "rf_reads": reads + z,
        "rf_writes": writes + z,
        "bank_conflict_stall_cycles": np.where(m["warps"] > 0, n * m["conflict_per_instr"], np.nan),
        "l1d_hit_rate": m["l1d_hit_rate"],
        "rf_cache_hit_rate": hit + z,
        "main_rf_reads": miss + z,
        "main_rf_writes": mw + z,
        "main_rf_wait_cycles": wait + z,
        "events": {
            "rf_cache": (reads * hit + z, writes + z),
            "main_rf_bank": (miss + z, mw + z),
            "main_network": (miss + mw + z, 0.0),
            "crossbar": (reads + writes + z, 0.0),
            "collector": (reads + z, reads + z),
        },
    }


# ----------------------------------------------------------------------------- LTRF family
def prefetch_max_load(profile, fetched, banks, n_regs, strands, conf, c):
    """Mean largest main-RF bank load of one prefetch of ``fetched`` registers.

    The profile's interval table gives, for working sets formed at limit ``n_regs``, the exact mean
    largest bank load under ``reg mod B`` (``maxload``) and its even-spread bound ``ceil(ws / B)``
    (``even``); a fetch of a part of the working set keeps the excess in proportion.  Renumbering
    (LTRFconf) colours the interval conflict graph with ``B`` colours: what remains of the excess
    is ``conf_spread`` (calibrated; 0 = a perfect colouring).
    """
    st = profile.interval_stats(n_regs, banks, strands)
    ws = np.maximum(st["ws"], 1e-9)
    frac = np.clip(fetched / ws, 0.0, 1.0)
    even = np.maximum(
        np.ceil(np.maximum(fetched, 1e-9) / np.maximum(banks, 1.0)), np.where(fetched > 0, 1.0, 0.0)
    )
    spread = np.where(conf, np.asarray(c["conf_spread"]), np.asarray(c["conflict_spread"]))
    excess = np.maximum(st["maxload"] - st["even"], 0.0) * frac
    return even + spread * excess


def analytic_ltrf(design, profile, sm, grid, coeffs=None):
    """LTRF family: register-interval prefetch into a partitioned cache over a slow main RF.

    Per prefetch: ``f`` registers fetched (working set, LTRF+: live-ins, times ``ws_fill``), the
    fullest main-RF bank holds ``M`` of them (:func:`prefetch_max_load`), so on idle banks the
    prefetch takes ``t_pf = (M - 1) occ + lat + xex`` plus the main-RF bank queue.  Prefetches per
    instruction: ``1 / L`` (interval length) plus deactivations (two-level scheduler).  An active
    warp alternates ``L`` instructions at its latency-bound pace ``c`` and a prefetch, and the
    scheduler's ``A`` active warps overlap each other's prefetches, so the prefetch bound is
    ``R_pf = S A L / (L c + pf_scale t_pf)``, combined with the baseline's IPC by the soft minimum.
    """
    from rfmodel.designs.baseline import sm_interval

    c = {**_coef(design, grid), **(coeffs or {})}
    strands = getattr(design, "kind", "") == "strand"
    plus = bool(getattr(design, "plus", False))
    conf = bool(getattr(design, "conf", False))
    n_reg = _gp(grid, "regs_per_interval", 16)
    banks = _gp(grid, "main_rf_banks", sm.num_banks)
    active = _gp(grid, "active_warps", 8)
    lat, occ, xex = main_rf_timing(grid)
    sched = float(sm.schedulers_per_sm)
    st = profile.interval_stats(n_reg, banks, strands)
    length = np.maximum(st["length"], 1.0)
    fetched = np.asarray(c["ws_fill"]) * (st["live"] if plus else st["ws"])
    mx = prefetch_max_load(profile, fetched, banks, n_reg, strands, conf, c)
    deact = _two_level(sm) * np.asarray(c["deact_weight"]) * profile.deact_per_instr
    pf_per_instr = 1.0 / length + deact
    run = 1.0 / pf_per_instr  # instructions between two prefetches of a warp
    m = sm_interval(profile, sm, _sm_grid(sm, grid), _interval_coef(c))
    ipc_b = m["ipc"]
    warps = np.asarray(m["warps"], dtype=np.float64)
    a_tot = np.minimum(warps, active * sched)
    # an active warp's cycles per instruction between long-latency operations: a warp that waits for
    # one leaves the active pool (two-level scheduler), so the pool bounds only the issuing part; the
    # memory waits overlap across all resident warps, which the baseline's IPC (ipc_b) accounts for
    k0 = np.maximum(np.asarray(m["t_collect"]) - 1.0, 0.0)
    cpi = np.asarray(c["latency_scale"]) * np.maximum(profile.chain_at2(k0, 0.0, "chain2"), 1.0)
    ipc = ipc_b
    t_pf = (mx - 1.0) * occ + lat + xex
    for _ in range(3):  # main-RF bank queue at the current IPC
        lam = ipc * pf_per_instr * fetched / np.maximum(banks, 1.0)
        u = np.minimum(lam * occ, 0.95)
        q = occ * np.minimum(bank_read_wait(u, 0.0, 1.0, 1.0), 50.0)
        t_pf = (mx - 1.0) * occ + lat + xex + q
        rate_pf = a_tot * run / (run * cpi + np.asarray(c["pf_scale"]) * t_pf)
        ipc = np.where(warps > 0, softmin([ipc_b, rate_pf], np.asarray(c["softmin_q"])), 0.0)
    n = float(profile.n_instrs)
    with np.errstate(divide="ignore", invalid="ignore"):
        cycles = np.where(ipc > 0, n / ipc, np.inf)
        exposed = np.where(ipc > 0, (cycles - m["cycles"]) / np.maximum(n * pf_per_instr / a_tot, 1e-9), 0.0)
        hidden = np.where(t_pf > 0, 1.0 - np.clip(exposed / t_pf, 0.0, 1.0), 1.0)
    reads = n * profile.reads_per_instr
    writes = n * profile.writes_per_instr
    n_pf = n * pf_per_instr
    fetched_total = n_pf * fetched
    wb = fetched_total * np.asarray(c["wb_fraction"])
    z = 0 * ipc
    return {
        "ipc": ipc,
        "cycles": cycles,
        "warps": warps,
        "rf_reads": reads + z,
        "rf_writes": writes + z,
        "bank_conflict_stall_cycles": np.where(warps > 0, n * m["conflict_per_instr"], np.nan),
        "l1d_hit_rate": m["l1d_hit_rate"],
        "rf_cache_hit_rate": 1.0 + z,
        "main_rf_reads": fetched_total + z,
        "main_rf_writes": wb + z,
        "prefetches": n_pf + z,
        "prefetch_latency_cycles": t_pf + z,
        "prefetch_max_bank_load": mx + z,
        "prefetch_bank_conflicts": n_pf * np.maximum(mx - 1.0, 0.0) + z,
        "prefetch_hidden_fraction": hidden + z,
        "interval_length_dynamic": length + z,
        "warp_activations": n * deact + z,
        "events": {
            "rf_cache": (reads + z, writes + z),
            "main_rf_bank": (fetched_total + z, wb + z),
            "main_network": (fetched_total + wb + z, 0.0),
            "crossbar": (reads + writes + z, 0.0),
            "collector": (reads + z, reads + z),
            "warp_control_block": (reads + writes + z, n_pf + n * deact + z),
        },
    }
