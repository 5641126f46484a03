"""Closed-form throughput model of one SM's register-file pipeline (equations: docs/models.md).

Every function here is vectorized: parameters are numpy arrays that broadcast
against each other, so a whole design grid is evaluated in one call.

* :func:`interval_model`: the calibrated interval/occupancy model: operand collection
  (serialization within an instruction, per-bank queues with writes competing, collector
  blocking; :mod:`rfmodel.analytic.banks`), the CTA critical path with that collection time
  added per dependence, and throughput bounds (issue, banks, collectors, execution units,
  LSU, MSHRs, DRAM bandwidth) combined by a soft minimum ``(sum_j R_j^-q)^(-1/q)``; waves of
  CTAs and a partial last wave.  Its free coefficients are :data:`INTERVAL_COEFFICIENTS`.
"""

from __future__ import annotations

import numpy as np

from rfmodel.analytic.profile import WorkloadProfile
from rfmodel.spec.occupancy import occupancy_warps  # noqa: F401  (re-exported for callers of the model)
from rfmodel.workload.ir import N_OPCLASSES

SOFTMIN_Q = 4.0


def md1_wait(rho):
    """Mean queueing delay (in service times) of an M/D/1 queue; inf at rho >= 1."""
    rho = np.asarray(rho, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rho < 1.0, rho / (2.0 * (1.0 - rho)), np.inf)


def softmin(rates, q=SOFTMIN_Q):
    """Smooth minimum of non-negative rates: ``(sum r^-q)^(-1/q)`` (0 when any rate is 0)."""
    with np.errstate(divide="ignore"):
        inv = sum(np.power(np.asarray(r, dtype=np.float64), -q) for r in rates)
    return np.power(inv, -1.0 / q)


# ============================================================================ calibrated interval model
#: coefficients of :func:`interval_model`: name -> (default, lower bound, upper bound)
INTERVAL_COEFFICIENTS = {
    "softmin_q": (4.0, 1.5, 16.0),  # sharpness of the soft minimum over bounds
    "pipe_extra": (1.0, -1.0, 4.0),  # extra cycles per dependence beyond collection (pipeline stages)
    "mem_scale": (1.0, 0.3, 3.0),  # scale on the modelled L1D-miss latency
    "dram_queue": (1.0, 0.0, 8.0),  # burstiness of the DRAM queue (1: M/D/1 with Poisson arrivals)
    "latency_scale": (1.0, 0.3, 3.0),  # scale on the CTA critical path (barriers, imbalance)
    "queue_burst": (1.0, 0.0, 8.0),  # burstiness of bank arrivals (1 = Poisson batches)
    "align_burst": (1.0, 0.2, 16.0),  # extra burstiness when a pool's warps share one bank rotation
    "slow_queue": (1.0, 0.0, 8.0),  # queueing across cycles when an access holds its bank several cycles
    "tail_weight": (0.5, 0.0, 1.0),  # weight of the wave/tail model against the steady state
    "ser_stall": (1.0, 0.0, 8.0),  # stall cycles per cycle of serialization beyond the first
    "queue_stall": (1.0, 0.1, 8.0),  # stall cycles per cycle of queueing wait
    # multiplies every design's modelled IPC (applied once, by rfmodel.designs.base.run_analytic); not
    # fitted (1 in every calibration): the Monte-Carlo engine draws the model's own error on it
    "ipc_factor": (1.0, 0.1, 10.0),
}
#: coefficients that calibration leaves at their defaults
NOT_FITTED = ("ipc_factor",)


def coefficient_defaults(table=INTERVAL_COEFFICIENTS) -> dict:
    return {k: v[0] for k, v in table.items()}


def interval_model(
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
    l1_hit_latency=30.0,
    miss_latency=250.0,
    mshr=64,
    sub_core=False,
    mapping: str = "interleaved",
    interleave_banks=None,
    coef: dict | None = None,
    iterations=16,
    hit_rate=None,
    extra_collect=0.0,
    rotations=None,
    bank_cycles=1.0,
    bank_write_cycles=None,
    l2_lines=None,
    l2_hit_latency=None,
    l1d_assoc=None,
    l2_assoc=None,
    read_share=1.0,
    write_share=1.0,
    operand_slots=True,
    pool_warps=None,
):
    """Calibrated interval/occupancy model of one SM (equations in docs/models.md).

    All arguments broadcast; ``coef`` maps the names of
    :data:`INTERVAL_COEFFICIENTS` to scalars or arrays (the calibration).
    ``extra_collect`` adds cycles to every operand collection (designs that
    read operands from elsewhere).  ``rotations``: the number of distinct bank rotations
    among the warps that share a pool of banks (``None``: as many as banks, i.e. none shared);
    warps with the same rotation read the same banks when they run the same code, which
    makes bank arrivals burstier by ``1 + align_burst / rotations``.  ``bank_cycles``: cycles one
    bank access holds its bank and takes to deliver (slow main-RF banks); serialization, queueing
    and the bank bound scale with it.  ``bank_write_cycles``: cycles a write holds its bank (default
    ``bank_cycles``; STT-RAM's are longer): the writes' share of the bank bound and queue, and the wait
    of a consumer behind its producer's write.  ``l2_lines``/``l2_hit_latency``: the SM's L2 slice; an L1D
    miss that hits it costs ``L1 + L2`` latency and no DRAM bandwidth (default: every L1D miss goes
    to DRAM at ``miss_latency``).  ``l1d_assoc``/``l2_assoc``: ways (set-associative LRU hit
    rates from the stack distances; default fully associative).  ``operand_slots``: every operand slot
    is a bank read (a register named twice by one instruction is read twice, as the simulator's
    collectors do); ``False`` for designs that read it once (distinct sources).  ``pool_warps``: the
    two-level scheduler's active warps per SM (``None``: every resident warp may issue); the warps of the
    pool issue, and a warp that waits on a long-latency result leaves it, so the pool bounds IPC by
    ``rate_pool``: the pool's warps, each at its single-warp dependence pace without memory waits.
    Returns a dict of
    arrays (``ipc``, ``cycles``, ``bank_conflict_stall_cycles`` per instruction as
    ``conflict_per_instr``, bounds, waits).
    """
    c = {**coefficient_defaults(), **(coef or {})}
    q = np.asarray(c["softmin_q"], dtype=np.float64)
    warps = np.asarray(warps, dtype=np.float64)
    S = np.asarray(schedulers, dtype=np.float64)
    B = np.asarray(banks, dtype=np.float64)
    P = np.maximum(np.asarray(ports_per_bank, dtype=np.float64), 1.0)
    N_oc = np.asarray(collectors, dtype=np.float64)
    Bi = banks if interleave_banks is None else interleave_banks
    # the bank reads of one instruction: every operand slot (a register named twice is read twice, as the
    # simulator's collectors do) or, for designs whose collectors read such a register once, its distinct
    # sources
    reads_i = profile.reads_per_instr if operand_slots else profile.distinct_reads_per_instr
    if mapping == "warp-per-bank":
        ser = np.ceil(reads_i / P) + 0 * np.asarray(Bi, dtype=np.float64)
        excess = np.maximum(ser - 1.0, 0.0)
    else:
        ser = profile.ser_ports(Bi, P, slots=operand_slots)
        excess = profile.ser_excess(Bi, P, slots=operand_slots)
    bc = np.maximum(np.asarray(bank_cycles, dtype=np.float64), 1.0)
    # a write's bank occupancy (default: a read's); as a ratio to the read's, so that equal times give
    # exactly the symmetric model
    bcw = bc if bank_write_cycles is None else np.maximum(np.asarray(bank_write_cycles, np.float64), 1.0)
    wr = bcw / bc
    rs = np.clip(np.asarray(read_share, dtype=np.float64), 0.0, 1.0)
    ser = ser * bc * rs
    excess = excess * rs
    r = reads_i * rs
    w = profile.writes_per_instr * np.clip(np.asarray(write_share, dtype=np.float64), 0.0, 1.0)
    hit = (
        profile.l1d_hit_rate(l1d_lines, l1d_assoc)
        if hit_rate is None
        else np.asarray(hit_rate, dtype=np.float64)
    )
    lines = profile.mem_lines_per_instr
    ld_lines = lines if profile.load_lines_per_instr is None else profile.load_lines_per_instr
    misses = ld_lines * (1.0 - hit)  # L1D misses a load waits for
    if l2_lines is None:
        h2 = hit
        miss_lat = np.asarray(miss_latency, dtype=np.float64)
    else:  # L2 slice hits: stack distances below the slice's lines (LRU inclusion)
        h2 = np.maximum(profile.l1d_hit_rate(l2_lines, l2_assoc), hit)
        l2_path = l1_hit_latency + np.asarray(l2_hit_latency, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            miss_lat = np.where(hit < 1.0, ((h2 - hit) * l2_path + (1.0 - h2) * np.asarray(miss_latency))
                                / np.maximum(1.0 - hit, 1e-12), l2_path)  # fmt: skip
    dram = ld_lines * (1.0 - h2)  # lines per instruction that need DRAM bandwidth
    L_mem = np.asarray(c["mem_scale"]) * (hit * l1_hit_latency + (1.0 - hit) * miss_lat)
    # cycles one line takes on the SM's share of DRAM bandwidth: loads that go to DRAM queue there
    line_cycles = np.asarray(line_bytes, dtype=np.float64) / np.asarray(mem_bytes_per_cycle, dtype=np.float64)
    mshr_n = np.asarray(mshr, dtype=np.float64)
    # throughput bounds (warp instructions per cycle)
    rate_iss = S * np.asarray(issue_width, dtype=np.float64)
    per_bank_access = r if separate_write_ports else r + w * wr
    rate_bank = B * P / np.maximum(per_bank_access, 1e-9) / bc
    ii = np.asarray(initiation, dtype=np.float64)
    exec_rates = [
        S / (ii[..., k] * profile.mix[k]) for k in range(N_OPCLASSES) if profile.mix[k] > 0 and ii[..., k] > 0
    ]
    with np.errstate(divide="ignore"):
        rate_mem = np.where(dram > 0, np.asarray(mem_bytes_per_cycle) / (dram * line_bytes), np.inf)
        lines_a = np.asarray(lines, dtype=np.float64)
        rate_lsu = np.where(lines_a > 0, 1.0 / np.where(lines_a > 0, lines_a, 1.0), np.inf)
    pools = np.where(np.asarray(sub_core), S, 1.0)
    rot = np.asarray(Bi if rotations is None else rotations, dtype=np.float64)
    burst = np.asarray(c["queue_burst"]) * (1.0 + np.asarray(c["align_burst"]) / np.maximum(rot, 1.0))
    # a one-cycle arbiter resolves same-cycle requests (serialization above); requests queue across
    # cycles when an access holds its bank for several
    burst = burst + np.asarray(c["slow_queue"]) * (1.0 - 1.0 / np.maximum(bc, bcw))
    # a result's register sits in the bank its consumer reads: with slow banks (bank_cycles > 1) the
    # consumer's read starts only after the producer's write has held that bank, bank_cycles - 1 cycles
    # beyond the one-cycle write of the simulator's own banks (measured on a dependent chain:
    # tests/test_analytic.py)
    write_hold = (bcw - 1.0) * rs  # a consumer that finds its operand in an operand cache does not wait
    wpc = float(max(profile.warps_per_cta, 1))
    n_cta = profile.instrs_per_warp * wpc  # instructions of one CTA
    ctas_total = float(max(profile.ctas, 1))

    from rfmodel.analytic.banks import bank_read_wait, collector_wait

    sched = profile.sched_cpi is not None
    top = float(profile.sched_levels()[-1]) if sched else 0.0

    c_dram, c_mem = np.asarray(c["dram_queue"]), np.asarray(c["mem_scale"])
    c_pipe, c_lat = np.asarray(c["pipe_extra"]), np.asarray(c["latency_scale"])

    def steady(wp):
        """Steady-state IPC with ``wp`` resident warps (fixed point over the queues)."""
        cr = np.maximum(wp / wpc, 1e-9)
        ipc = np.maximum(np.minimum(rate_iss, rate_bank) * 0.3, 1e-3) + 0 * wp
        if sched:  # the issue and unit bounds are inside the list schedules up to the largest CTA count
            inside = cr <= top
            issue = [np.where(inside, np.inf, x) for x in (rate_iss, *exec_rates)]
        else:
            issue = [rate_iss, *exec_rates]
        for _ in range(iterations):
            # DRAM queueing: an M/D/1 wait at the SM's bandwidth share, scaled by its burstiness
            rho_d = np.minimum(ipc * dram * line_cycles, 0.95)
            w_dram = c_dram * line_cycles * md1_wait(rho_d)
            L_q = L_mem + c_mem * (1.0 - h2) * w_dram
            with np.errstate(divide="ignore"):
                rate_mshr = np.where(misses > 0, mshr_n / (misses * np.maximum(L_q, 1)), np.inf)
            lam_r = ipc * r / B * bc
            lam_w = 0.0 if separate_write_ports else ipc * w / B * bcw
            wq = bc * bank_read_wait(np.minimum(lam_r, 0.98 * P), np.minimum(lam_w, 0.5 * P), P, burst)
            wq = np.minimum(wq, 50.0)
            t_c = np.asarray(rf_latency, dtype=np.float64) + ser + wq + extra_collect
            hold = t_c + 1.0
            wcol = collector_wait(N_oc / pools, np.minimum(ipc / pools * hold, 0.98 * N_oc / pools), hold)
            wcol = np.minimum(wcol, 50.0)
            k = np.maximum(t_c - 1.0 + wcol + c_pipe + write_hold, 0.0)
            if sched:  # list schedules of the resident CTAs with their issue slots and execution units
                rate_lat = profile.sched_rate(cr, k, L_q) / c_lat
                t_cta = cr * n_cta / np.maximum(rate_lat, 1e-12)
            else:
                t_cta = c_lat * profile.chain_at2(k, L_q, "cta_chain2")
                rate_lat = cr * n_cta / np.maximum(t_cta, 1e-9)
            rate_col = N_oc / hold
            rates = [rate_lat, rate_bank, rate_col, rate_mem, rate_mshr, rate_lsu, *issue]
            if pool_warps is not None:
                rates.append(pool_rate(np.minimum(wp, pool_warps), k))
            new = softmin(rates, q)
            ipc = 0.5 * ipc + 0.5 * new
        return ipc, wq, t_c, wcol, rate_lat, t_cta, rate_col, rate_mshr, L_q

    def pool_rate(active, k):
        """Warp instructions per cycle of ``active`` issuing warps that never wait on memory."""
        return active / (c_lat * np.maximum(profile.chain_at2(k, 0.0, "chain2"), 1.0))

    ipc_w, wq, t_c, wcol, rate_lat, t_cta, rate_col, rate_mshr, L_q = steady(warps)
    # waves: full waves of resident CTAs, then a partial wave (tail) with fewer warps
    cr = np.maximum(np.floor(warps / wpc), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        full = np.where(cr > 0, np.floor(ctas_total / np.maximum(cr, 1)), 0.0)
        rem = ctas_total - full * cr
        ipc_rem, *_ = steady(np.maximum(rem * wpc, wpc))
        t_waves = full * cr * n_cta / ipc_w + np.where(rem > 0, rem * n_cta / ipc_rem, 0.0)
        t_steady = ctas_total * n_cta / ipc_w
    beta = np.asarray(c["tail_weight"])
    n = np.asarray(profile.n_instrs, dtype=np.float64)
    cycles = ((1.0 - beta) * t_steady + beta * t_waves) * n / (ctas_total * n_cta)
    ipc = np.where(warps > 0, n / cycles, 0.0)
    conflict = np.asarray(c["ser_stall"]) * excess * bc + np.asarray(c["queue_stall"]) * r * wq
    return {
        "ipc": ipc,
        "cycles": np.where(warps > 0, cycles, np.inf),
        "ipc_steady": ipc_w,
        "t_collect": t_c,
        "bank_wait": wq,
        "collector_wait": wcol,
        "ser": ser + 0 * ipc,
        "conflict_per_instr": conflict + 0 * ipc,
        "rate_latency": rate_lat,
        "rate_issue": rate_iss + 0 * ipc,
        "rate_bank": rate_bank + 0 * ipc,
        "rate_collectors": rate_col + 0 * ipc,
        "rate_dram": rate_mem + 0 * ipc,
        "rate_mshr": rate_mshr + 0 * ipc,
        "rate_lsu": rate_lsu + 0 * ipc,
        "load_latency": L_q + 0 * ipc,
        "l1d_hit_rate": hit + 0 * ipc,
        "cta_critical_path": t_cta,
        "warps": warps,
    }
