"""First-order closed-form throughput model of one SM's register-file pipeline.

Every function here is vectorized: parameters are numpy arrays that broadcast
against each other, so a whole design grid is evaluated in one call.

Model (one SM, steady state; symbols per instruction unless noted)
------------------------------------------------------------------
*Occupancy* ``W``: resident warps from the CUDA occupancy rules (registers
allocated per warp in units of ``alloc_granularity``, warps, threads, CTAs
and shared memory per SM), capped by the warps the launch provides.

*Operand collection*: an instruction whose ``k`` distinct source registers
fall into single-ported banks needs ``ser(B)`` bank cycles, the largest per-bank
load (exact from the profile's mapping table).  Across collectors, each bank is a
discrete-time queue with deterministic unit service and utilisation
``rho = IPC (r + w) / (B p)`` (reads ``r`` and writes ``w`` share the ports when
they are read/write ports); its mean wait is the M/D/1 value
``Wq = rho / (2 (1 - rho))``.  The collection time is
``t_c = L_rf + ser(B) + Wq``.

*Rates* (instructions per cycle), each a bound on IPC:

* latency: ``R_lat = W / chain(k)`` with ``chain(k)`` the profile's single-warp
  cycles per instruction when each dependence also waits ``k = t_c - 1`` extra
  cycles (the warp interleaving hides latency up to this bound);
* issue: ``R_iss = S * issue_width``;
* banks: ``R_bank = B p / (r + w)`` (or reads only, with separate write ports);
* collectors: ``R_col = N_oc / t_c``;
* execution units, per op class ``c``: ``R_c = S / (II_c * mix_c)``;
* memory bandwidth: ``R_mem = BW / (misses * line_bytes)``.

The bounds are combined with a soft minimum, ``1/IPC = (sum_j R_j^-q)^(1/q)``
(``q = 4`` until calibration fits it), since near the knee several
bottlenecks act at once; the queue/IPC fixed point is solved by damped
iteration.  This follows the bound-and-bottleneck reasoning of MWP-CWP-style
GPU analytic models; calibration against the cycle simulator replaces the
constants later.
"""

from __future__ import annotations

import numpy as np

from rfmodel.analytic.profile import MAX_BANKS, WorkloadProfile
from rfmodel.workload.ir import N_OPCLASSES

SOFTMIN_Q = 4.0


def occupancy_warps(
    regs_per_thread,
    threads_per_cta,
    smem_per_cta,
    ctas_available,
    *,
    regs_per_sm,
    max_warps,
    max_ctas,
    max_threads,
    smem_per_sm,
    alloc_granularity=256,
    warp_size=32,
):
    """Resident warps per SM (0 when one CTA does not fit)."""
    rpt = np.asarray(regs_per_thread, dtype=np.int64)
    wpc = -(-np.asarray(threads_per_cta, dtype=np.int64) // warp_size)
    regs_per_warp = -(-(rpt * warp_size) // alloc_granularity) * alloc_granularity
    by_regs = np.asarray(regs_per_sm, dtype=np.int64) // np.maximum(regs_per_warp * wpc, 1)
    by_warps = np.asarray(max_warps, dtype=np.int64) // wpc
    by_threads = np.asarray(max_threads, dtype=np.int64) // (wpc * warp_size)
    smem = np.asarray(smem_per_cta, dtype=np.int64)
    by_smem = np.where(smem > 0, np.asarray(smem_per_sm, dtype=np.int64) // np.maximum(smem, 1), 1 << 30)
    ctas = np.minimum.reduce(
        np.broadcast_arrays(
            by_regs,
            by_warps,
            by_threads,
            by_smem,
            np.asarray(max_ctas, np.int64),
            np.asarray(ctas_available, np.int64),
        )
    )
    return np.maximum(ctas, 0) * wpc


def md1_wait(rho):
    """Mean queueing delay (in service times) of an M/D/1 queue; inf at rho >= 1."""
    rho = np.asarray(rho, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rho < 1.0, rho / (2.0 * (1.0 - rho)), np.inf)


def softmin(rates, q=SOFTMIN_Q):
    """Smooth minimum of positive rates: ``(sum r^-q)^(-1/q)``."""
    inv = sum(np.power(np.asarray(r, dtype=np.float64), -q) for r in rates)
    return np.power(inv, -1.0 / q)


def ser_of(profile: WorkloadProfile, banks, mapping: str = "interleaved"):
    """Mean bank cycles to read one instruction's distinct operands."""
    if mapping == "warp-per-bank":
        return np.full(np.shape(banks), profile.ser_warp, dtype=np.float64)
    b = np.clip(np.asarray(banks, dtype=np.int64), 1, MAX_BANKS)
    return profile.ser[b]


def chain_at(profile: WorkloadProfile, extra):
    """Single-warp cycles per instruction at ``extra`` collection cycles (linear interpolation)."""
    return np.interp(np.asarray(extra, dtype=np.float64), profile.chain_extra, profile.chain)


def baseline_ipc(
    profile: WorkloadProfile,
    *,
    warps,
    schedulers,
    issue_width,
    banks,
    ports_per_bank=1,
    separate_write_ports=False,
    collectors,
    rf_latency=1,
    initiation,
    mem_bytes_per_cycle=np.inf,
    l1d_lines=128,
    line_bytes=128,
    mapping: str = "interleaved",
    interleave_banks=None,
    q=SOFTMIN_Q,
    iterations=30,
):
    """IPC and its components for a conventional banked RF; all arguments broadcast.

    ``initiation`` is an array ``[N_OPCLASSES]`` of initiation intervals
    (cycles between issues to one unit of the class).  ``interleave_banks`` is
    the number of banks a warp's registers interleave over (default ``banks``;
    with sub-cores, the banks of one sub-core).
    Returns a dict of arrays: ``ipc``, ``t_collect``, ``bank_wait``, ``ser``, ``rho``
    and each bound ``rate_*``.
    """
    warps = np.asarray(warps, dtype=np.float64)
    sched = np.asarray(schedulers, dtype=np.float64)
    banks_a = np.asarray(banks, dtype=np.float64)
    ports = np.asarray(ports_per_bank, dtype=np.float64)
    coll = np.asarray(collectors, dtype=np.float64)
    ser = ser_of(profile, banks if interleave_banks is None else interleave_banks, mapping)
    r = profile.distinct_reads_per_instr
    w = profile.writes_per_instr
    per_access = r if separate_write_ports else r + w
    rate_iss = sched * np.asarray(issue_width, dtype=np.float64)
    rate_bank = banks_a * ports / max(per_access, 1e-9)
    ii = np.asarray(initiation, dtype=np.float64)
    if ii.shape[-1] != N_OPCLASSES:
        raise ValueError("initiation must have one entry per op class")
    exec_rates = [
        sched / (ii[..., c] * profile.mix[c])
        for c in range(N_OPCLASSES)
        if profile.mix[c] > 0 and ii[..., c] > 0
    ]
    hit = profile.l1d_hit_rate(l1d_lines)
    misses = profile.mem_lines_per_instr * (1.0 - hit)
    with np.errstate(divide="ignore"):
        rate_mem = np.where(misses > 0, np.asarray(mem_bytes_per_cycle) / (misses * line_bytes), np.inf)
    ipc = np.minimum(rate_iss, rate_bank) * 0.5 + 0 * warps
    ipc = np.maximum(ipc, 1e-6)
    wait = np.zeros_like(ipc)
    for _ in range(iterations):
        rho = np.minimum(ipc * per_access / (banks_a * ports), 0.999)
        wait = md1_wait(rho)
        t_c = np.asarray(rf_latency, dtype=np.float64) + ser + wait
        rate_lat = np.where(warps > 0, warps / chain_at(profile, np.maximum(t_c - 1.0, 0.0)), 1e-9)
        rate_col = coll / t_c
        new = softmin([rate_lat, rate_iss, rate_bank, rate_col, rate_mem, *exec_rates], q)
        ipc = 0.5 * ipc + 0.5 * new
    t_c = np.asarray(rf_latency, dtype=np.float64) + ser + wait
    return {
        "ipc": np.where(warps > 0, ipc, 0.0),
        "t_collect": t_c,
        "bank_wait": wait,
        "ser": ser + 0 * ipc,
        "rho": rho,
        "rate_latency": rate_lat,
        "rate_issue": rate_iss + 0 * ipc,
        "rate_bank": rate_bank + 0 * ipc,
        "rate_collector": rate_col,
        "l1d_hit_rate": hit + 0 * ipc,
    }
