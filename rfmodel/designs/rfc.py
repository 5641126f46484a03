"""RFC: a hardware register-file cache in front of a (possibly slow) main register file.

The design of "Energy-efficient mechanisms for managing thread context in throughput
processors" (Gebhart et al., ISCA 2011) as "Enabling High-Capacity, Latency-Tolerant, and
Highly-Concurrent GPU Register Files via Software/Hardware Cooperation" (the LTRF paper)
uses it as its comparison point "RFC": a 16 KB register-file cache, no prefetching.

Our reading (also in ``docs/designs.md``, section "RFC"):

* **Two-level scheduler.**  Only warps in the active pool (``active_warps`` per scheduler,
  default 8) own cache space.  The cache is split evenly into one partition per active warp:
  ``entries = rfc_kb * 1024 / 128 B / (active_warps * schedulers)`` warp registers (16 KB,
  8 active warps and 4 schedulers: 4 entries; the original paper has 6 entries per thread).
  Partitions are private, so warps never evict each other.
* **Write-allocate, read-no-allocate.**  Every result is written into the warp's partition
  (the original paper's RFC holds produced values); a source operand that is in the
  partition is read from it (a hit), else from the main RF (a miss, not allocated).
* **Replacement** per partition: ``rfc_policy`` 0 = FIFO (the original paper's choice),
  1 = LRU.  An evicted entry is dirty (only results are cached) and is written back to the
  main RF.  (The original also drops dead values using compiler liveness hints; we write
  every evicted value back, an upper bound on write-back traffic.)
* **Flush.**  When a warp leaves the active pool (its next instruction waits on a
  long-latency result or a barrier) all of its entries are written back and the partition is
  freed.  A result that arrives while its warp is out of the pool goes to the main RF.
* **Main RF.**  ``main_rf_banks`` single-ported banks (default: the SM's bank count),
  register ``r`` of warp slot ``w`` in bank ``(r // main_rf_bank_regs + w) mod banks``
  (``main_rf_bank_regs`` = 1: interleaved).  An access occupies its
  bank for ``occ = max(lat, xfer)`` cycles and its data arrives ``lat + xfer - 1`` cycles
  after it starts, where ``lat = round(main_rf_latency_x x BANK_CYCLES)`` and ``xfer`` is 1
  (full-width crossbar) or 4 (``narrow_crossbar``: a 4x narrower main-RF network, the LTRF
  paper's section 5.1 option).  Requests to a busy bank wait (per-bank serialization).
  At 1x a miss costs what a baseline bank read costs.
* **Cache banks.**  Hits and cache writes go through the simulator's banks and arbiter with
  the SM's bank mapping: the cache's port model is the baseline RF's.

Without the two-level scheduler (SM ``scheduler`` other than ``two-level``) every resident
warp keeps its partition for its whole life (nothing is flushed): a cache sized for all
warps, which is not the paper's configuration.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS
from rfmodel.analytic.model import Effects, ipc_fixed_point
from rfmodel.analytic.model import main_rf_timing as analytic_timing
from rfmodel.analytic.model import two_level as two_level_flag
from rfmodel.designs import base, mainrf
from rfmodel.designs.mainrf import main_access, main_bank
from rfmodel.designs.regcache import reg_cache_hit_rate, reg_cache_writebacks
from rfmodel.spec import param


@dataclass(frozen=True)
class RfcParams(mainrf.MainRFParams, kind="design.rfc"):
    """RFC's parameters: the main RF's and the cache's."""

    rfc_kb: int = param(16, unit="KB", bounds=(1, 1024), doc="register-file cache capacity")
    rfc_policy: int = param(0, choices=(0, 1), doc="replacement: 0 FIFO (the original paper's), 1 LRU")


#: RFC's free coefficients (the interval model's and its own): (default, lower, upper)
RFC_CALIBRATION = {
    **INTERVAL_COEFFICIENTS,
    "rfc_flush": (1.0, 0.0, 1.0),  # weight of the deactivation-flush stack-distance table
    "rfc_miss_scale": (1.0, 0.2, 4.0),  # scale on the extra collection cycles of a main-RF read
    # entries a warp's partition effectively gains beyond the profile's schedule-ordered tables: the
    # simulator's collectors take a warp's instructions ahead of a busy unit and read their operands before
    # the results in between are written (volta-v100's two-cycle units; docs/models.md, RFC)
    "rfc_late_entries": (0.0, 0.0, 8.0),
    # the main-RF banks' wait over the Poisson queue's: the misses of one instruction arrive together and the
    # evictions follow the results' write-backs, both burstier than independent arrivals
    "rfc_queue_burst": (1.0, 0.5, 6.0),
}


# ----------------------------------------------------------------------------- state layout
# ints: [0:6] bank header | parameters | counters | per-warp blocks | per-bank busy-until
R_LAT, R_OCC, R_XEX, R_MB, R_E, R_POLICY, R_TWO, R_W, R_OFF_WARP, R_OFF_BANK, R_STAMP, R_G = range(6, 18)
RFC_COUNTERS = (
    "rfc_read_hits",
    "rfc_read_misses",
    "rfc_writes",
    "main_rf_reads",
    "main_rf_writes",
    "rfc_evictions",
    "warp_activations",
    "warp_deactivations",
    "main_rf_wait_cycles",
)
#: write occupancy of one main-RF bank access (write-backs)
R_WOCC = 18
R_C0 = 19
#: per-warp block: in_pool, count, then E entries of (reg, stamp)
RW_IN, RW_N, RW_E0 = 0, 1, 2


@njit(cache=True)
def _rfc_writeback(ints, w, reg, cycle):
    b = main_bank(reg, w, ints[R_G], ints[R_MB])
    main_access(ints, ints[R_OFF_BANK], b, cycle, ints[R_WOCC])
    ints[R_C0 + 4] += 1


@njit(cache=True)
def rfc_operand(ints, floats, warp, row, k, reg, cycle):
    e = ints[R_E]
    rec = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    n = ints[rec + RW_N]
    for i in range(n):
        if ints[rec + RW_E0 + 2 * i] == reg:
            ints[R_C0 + 0] += 1
            if ints[R_POLICY] == 1:
                ints[R_STAMP] += 1
                ints[rec + RW_E0 + 2 * i + 1] = ints[R_STAMP]
            return base.standard_bank(ints, warp, reg)
    # miss: read from the main RF (not allocated)
    ints[R_C0 + 1] += 1
    ints[R_C0 + 3] += 1
    b = main_bank(reg, warp, ints[R_G], ints[R_MB])
    s = main_access(ints, ints[R_OFF_BANK], b, cycle, ints[R_OCC])
    ints[R_C0 + 8] += s - cycle
    lat = s - cycle + ints[R_LAT] - 1 + ints[R_XEX]
    return -(1 + lat)


@njit(cache=True)
def rfc_write(ints, floats, warp, row, k, reg, cycle):
    e = ints[R_E]
    rec = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    if ints[rec + RW_IN] == 0:  # the warp is out of the pool: the result goes to the main RF
        _rfc_writeback(ints, warp, reg, cycle)
        return -1
    ints[R_C0 + 2] += 1
    ints[R_STAMP] += 1
    n = ints[rec + RW_N]
    for i in range(n):
        if ints[rec + RW_E0 + 2 * i] == reg:
            if ints[R_POLICY] == 1:
                ints[rec + RW_E0 + 2 * i + 1] = ints[R_STAMP]
            return base.standard_bank(ints, warp, reg)
    if n < e:
        ints[rec + RW_E0 + 2 * n] = reg
        ints[rec + RW_E0 + 2 * n + 1] = ints[R_STAMP]
        ints[rec + RW_N] = n + 1
        return base.standard_bank(ints, warp, reg)
    # evict the entry with the smallest stamp (insertion order: FIFO; last use: LRU)
    v = 0
    for i in range(1, n):
        if ints[rec + RW_E0 + 2 * i + 1] < ints[rec + RW_E0 + 2 * v + 1]:
            v = i
    _rfc_writeback(ints, warp, ints[rec + RW_E0 + 2 * v], cycle)
    ints[R_C0 + 5] += 1
    ints[rec + RW_E0 + 2 * v] = reg
    ints[rec + RW_E0 + 2 * v + 1] = ints[R_STAMP]
    return base.standard_bank(ints, warp, reg)


@njit(cache=True)
def _rfc_flush(ints, warp, cycle):
    e = ints[R_E]
    rec = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    for i in range(ints[rec + RW_N]):
        _rfc_writeback(ints, warp, ints[rec + RW_E0 + 2 * i], cycle)
    ints[rec + RW_N] = 0


@njit(cache=True)
def rfc_pool(ints, floats, warp, event, scheduler, d, cycle):
    e = ints[R_E]
    rec = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    if event == 1:
        ints[rec + RW_IN] = 1
        ints[R_C0 + 6] += 1
    else:
        _rfc_flush(ints, warp, cycle)
        ints[rec + RW_IN] = 0
        ints[R_C0 + 7] += 1
    return 0


@njit(cache=True)
def rfc_activate(ints, floats, warp, cta, scheduler, d, cycle):
    e = ints[R_E]
    rec = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    ints[rec + RW_N] = 0
    if ints[R_TWO] == 0:  # no two-level scheduler: every resident warp is active
        ints[rec + RW_IN] = 1
        ints[R_C0 + 6] += 1
    else:
        ints[rec + RW_IN] = 0
    return 0


@njit(cache=True)
def rfc_deactivate(ints, floats, warp, cta, scheduler, d, cycle):
    e = ints[R_E]
    rec = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    ints[rec + RW_N] = 0  # a finished warp's registers are dead: nothing to write back
    ints[rec + RW_IN] = 0
    return 0


def entries_per_warp(p: RfcParams, sm) -> int:
    regs = p.rfc_kb * 1024 // mainrf.WARP_REG_BYTES
    return max(1, int(regs // (p.active_warps * sm.schedulers_per_sm)))


def analytic_entries(ctx) -> np.ndarray:
    """Cache entries (warp registers) per active warp: ``rfc_kb`` split over ``active_warps x S``."""
    kb = ctx.param("rfc_kb")
    active = ctx.param("active_warps")
    return np.maximum(
        1.0, np.floor(kb * 1024.0 / mainrf.WARP_REG_BYTES / (active * ctx.sm.schedulers_per_sm))
    )


#: at most this many model runs of the main-RF queue's fixed point in ``Rfc.analytic``
#: (:func:`rfmodel.analytic.model.ipc_fixed_point`; on the calibration's sweep it settles in 1-6)
MAIN_QUEUE_STEPS = 8


@base.register
class Rfc(base.Design):
    name = "rfc"
    description = "hardware register-file cache (Gebhart et al. 2011) over a main RF; two-level scheduler"
    Params = RfcParams
    #: the cache's hit rate and reads, then its counters from the main RF's reads on, as counted
    metrics = (
        ("rf_cache_hit_rate", "rf_cache_reads")
        + RFC_COUNTERS[3:]
        + mainrf.TIMING_METRICS
        + mainrf.NETWORK_METRICS
    )
    calibration_params = RFC_CALIBRATION
    #: fitted beside the IPC: the main-RF queue's wait, which sets what a miss costs
    fit_metrics = ("main_rf_wait_cycles",)
    #: a smaller cache over slow banks, so that its misses weigh in the fit
    calibration_points = ({"rfc_kb": 8, "main_rf_latency_x": 3},)
    supports_simulate = True
    size_parameters = {"rfc_kb": ("rf_cache",)}

    # ------------------------------------------------------------------ simulator
    def sim_setup(self, sm, p, options, trace=None, program=None):
        lat, occ, xex, wocc = mainrf.sim_main_rf_timing(p, sm)
        e = entries_per_warp(p, sm)
        W = sm.warps_per_sm
        mb = p.banks(sm)
        off_warp = R_C0 + len(RFC_COUNTERS)
        off_bank = off_warp + W * (2 + 2 * e)
        ints = base.header_state(sm, options, off_bank + mb)
        ints[R_LAT], ints[R_OCC], ints[R_XEX], ints[R_WOCC] = lat, occ, xex, wocc
        ints[R_MB], ints[R_E], ints[R_POLICY] = mb, e, p.rfc_policy
        ints[R_TWO], ints[R_W] = int(two_level_flag(sm)), W
        ints[R_OFF_WARP], ints[R_OFF_BANK] = off_warp, off_bank
        ints[R_G] = p.main_rf_bank_regs
        hooks = base.SimHooks(
            operand=rfc_operand,
            write=rfc_write,
            activate=rfc_activate,
            deactivate=rfc_deactivate,
            pool=rfc_pool,
        )
        return base.SimSetup(
            hooks=hooks,
            ints=ints,
            counters={c: R_C0 + i for i, c in enumerate(RFC_COUNTERS)},
            pool=p.active_warps,
        )

    def sim_metrics(self, sm, p, setup, counts):
        return {
            **mainrf.hierarchy_sim_metrics(sm, p, counts),
            "rfc_evictions": float(counts["rfc_evictions"]),
            "main_rf_wait_cycles": float(counts["main_rf_wait_cycles"]),
        }

    # ------------------------------------------------------------------ analytic
    def analytic(self, ctx):
        """Hit rate from the profile's per-warp FIFO/LRU register stack distances; a miss reads the main RF
        (latency, network, per-bank queue) during operand collection: ``Effects.extra_collect``, at the
        main-RF queue at the IPC it leaves (:func:`~rfmodel.analytic.model.ipc_fixed_point`)."""
        c, profile, sm = ctx.coef, ctx.profile, ctx.sm
        e = analytic_entries(ctx) + np.asarray(c["rfc_late_entries"])
        policy = ctx.param("rfc_policy")
        flush = two_level_flag(sm) * np.asarray(c["rfc_flush"])
        hit = np.where(
            policy > 0,
            reg_cache_hit_rate(profile, e, "lru", flush),
            reg_cache_hit_rate(profile, e, "fifo", flush),
        )
        mb = mainrf.grid_main_banks(sm, ctx.grid)
        read_x, write_x = mainrf.grid_bank_timing(sm, ctx.grid, mb)
        net = mainrf.grid_network_cycles(sm, ctx.grid, mb)
        lat, occ, xex = analytic_timing(ctx.grid, read_x, net)
        mbanks = np.asarray(mb, dtype=np.float64)
        rd = np.maximum(profile.distinct_reads_per_instr, 1e-9)
        p_miss_any = 1.0 - np.power(hit, rd)  # an instruction with at least one missing operand
        occ_w = analytic_timing(ctx.grid, write_x, net)[1]
        # the results evicted (and flushed) to the main RF, per instruction
        wr = np.where(
            policy > 0,
            reg_cache_writebacks(profile, e, "lru", flush),
            reg_cache_writebacks(profile, e, "fifo", flush),
        )
        # the cache's banks serve the hits (and the results written into the cache); a miss reads the main
        # RF's banks instead (the simulator's ``rfc_operand``), queued in ``cost`` below, and takes a bank's
        # time there: the collection keeps its reads' whole serialization
        banks = Effects(read_share=hit, collect_share=1.0)
        m = ctx.model(banks)

        def cost(ipc):
            # the main-RF banks' queue at IPC ``ipc``: a bank serves the misses' reads and the results written
            # to it in the order they come, M/D/1 over both (the Pollaczek-Khinchine wait of reads of ``occ``
            # and writes of ``occ_w`` cycles); the misses' collection at that wait
            per_bank = ipc / np.maximum(mbanks, 1.0)
            lam_r, lam_w = per_bank * rd * (1.0 - hit), per_bank * wr
            u = np.minimum(lam_r * occ + lam_w * occ_w, 0.95)
            wait = np.minimum(
                np.asarray(c["rfc_queue_burst"]) * (lam_r * occ**2 + lam_w * occ_w**2) / (2.0 * (1.0 - u)),
                50.0,
            )
            return np.asarray(c["rfc_miss_scale"]) * p_miss_any * (lat - 1.0 + xex + wait), wait

        # the IPC the queue's wait leaves (the wait grows with the IPC, the IPC falls with the wait)
        _, m, wait = ipc_fixed_point(
            lambda e: ctx.model(replace(banks, extra_collect=e)), cost, m["ipc"], steps=MAIN_QUEUE_STEPS
        )
        reads, writes = ctx.reads, ctx.writes
        miss = reads * (1.0 - hit)
        mw = ctx.n * wr
        events = {
            "rf_cache": (reads * hit, writes),
            "main_rf_bank": (miss, mw),
            "main_network": (miss + mw, 0.0),
            "crossbar": (reads + writes, 0.0),
            "collector": (reads, reads),
        }
        # the cycles the main-RF reads waited for their bank, summed as the simulator counts them (``wait``
        # is the mean wait of one read)
        metrics = {
            "rf_cache_hit_rate": hit,
            "rf_cache_reads": reads * hit,
            "main_rf_reads": miss,
            "main_rf_writes": mw,
            "main_rf_wait_cycles": wait * miss,
            "main_rf_network_cycles": net,
            **mainrf.timing_metrics(read_x, write_x),
        }
        return ctx.result(m, events=events, metrics=metrics)

    def structures(self, sm, grid, tech):
        return mainrf.hierarchy_structures(sm, grid, tech, self.Params, cache="rfc")


__all__ = ["Rfc", "RfcParams"]
