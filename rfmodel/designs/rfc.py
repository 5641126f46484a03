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

import numpy as np
from numba import njit

from rfmodel.designs.base import (
    BANK_HEADER_LEN,
    NEVER,
    Design,
    SimHooks,
    SimSetup,
    bank_header,
    register,
    standard_bank,
)
from rfmodel.errors import SpecError

#: cycles of one access of a baseline RF bank in the simulator (the 1x of ``main_rf_latency_x``)
BANK_CYCLES = 1
#: cycles one warp register takes through the main-RF network: full width, 4x narrower
XFER_CYCLES = {0: 1, 1: 4}
WARP_REG_BYTES = 128


# ----------------------------------------------------------------------------- parameters
def _check(design: str, name: str, value, lo, hi, integer: bool):
    """One validated design parameter (an :class:`SpecError` names it and the allowed range)."""
    v = value.item() if isinstance(value, np.generic) else value
    allowed = f"{'integer' if integer else 'number'} in [{lo}, {hi}]"
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise SpecError(f"design '{design}'", name, value, allowed)
    if integer and float(v) != int(v):
        raise SpecError(f"design '{design}'", name, value, f"integer in [{lo}, {hi}]")
    if not lo <= v <= hi:
        raise SpecError(f"design '{design}'", name, value, allowed)
    return int(v) if integer else float(v)


#: the main-RF parameters both RFC and the LTRF family share: (default, low, high, integer)
MAIN_RF_PARAMS = {
    "active_warps": (8, 1, 64, True),
    "main_rf_latency_x": (1.0, 1.0, 64.0, False),
    "main_rf_banks": (None, 1, 256, True),  # None: the SM's num_banks
    "narrow_crossbar": (0, 0, 1, True),
    # consecutive registers per main-RF bank row: 1 = interleaved (r, r+1 in different banks);
    # 2 = the LTRF paper's Figure 9 register file (bank i holds R2i and R2i+1)
    "main_rf_bank_regs": (1, 1, 256, True),
}


def resolve_params(design: str, spec: dict, sm, params: dict) -> dict:
    """Defaults filled in and every value checked; unknown names are an error."""
    out = {}
    for k in params:
        if k not in spec:
            from rfmodel.errors import UnknownNameError

            raise UnknownNameError(f"parameter of design '{design}'", k, spec)
    for k, (default, lo, hi, integer) in spec.items():
        v = params.get(k, default)
        if v is None and k == "main_rf_banks":
            v = sm.num_banks
        out[k] = _check(design, k, v, lo, hi, integer)
    return out


def main_rf_timing(p: dict) -> tuple[int, int, int]:
    """(latency, occupancy, extra arrival cycles) of one main-RF warp-register access."""
    lat = max(1, int(round(p["main_rf_latency_x"] * BANK_CYCLES)))
    xfer = XFER_CYCLES[int(p["narrow_crossbar"])]
    return lat, max(lat, xfer), xfer - 1


def two_level(sm) -> bool:
    return sm.scheduler == "two-level"


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
R_C0 = 18
#: per-warp block: in_pool, count, then E entries of (reg, stamp)
RW_IN, RW_N, RW_E0 = 0, 1, 2


@njit(cache=True)
def main_access(ints, off_bank, bank, cycle, occ):
    """Start one access of main-RF ``bank`` at or after ``cycle``; returns the start cycle."""
    s = ints[off_bank + bank]
    if s < cycle:
        s = cycle
    ints[off_bank + bank] = s + occ
    return s


@njit(cache=True)
def main_bank(reg, warp, regs_per_bank, banks):
    """Main-RF bank of register ``reg`` of warp slot ``warp``: ``(reg // regs_per_bank + warp) mod banks``."""
    return (reg // regs_per_bank + warp) % banks


@njit(cache=True)
def _rfc_writeback(ints, w, reg, cycle):
    b = main_bank(reg, w, ints[R_G], ints[R_MB])
    main_access(ints, ints[R_OFF_BANK], b, cycle, ints[R_OCC])
    ints[R_C0 + 4] += 1


@njit(cache=True)
def rfc_operand(ints, floats, warp, row, k, reg, cycle):
    e = ints[R_E]
    base = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    n = ints[base + RW_N]
    for i in range(n):
        if ints[base + RW_E0 + 2 * i] == reg:
            ints[R_C0 + 0] += 1
            if ints[R_POLICY] == 1:
                ints[R_STAMP] += 1
                ints[base + RW_E0 + 2 * i + 1] = ints[R_STAMP]
            return standard_bank(ints, warp, reg)
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
    base = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    if ints[base + RW_IN] == 0:  # the warp is out of the pool: the result goes to the main RF
        _rfc_writeback(ints, warp, reg, cycle)
        return -1
    ints[R_C0 + 2] += 1
    ints[R_STAMP] += 1
    n = ints[base + RW_N]
    for i in range(n):
        if ints[base + RW_E0 + 2 * i] == reg:
            if ints[R_POLICY] == 1:
                ints[base + RW_E0 + 2 * i + 1] = ints[R_STAMP]
            return standard_bank(ints, warp, reg)
    if n < e:
        ints[base + RW_E0 + 2 * n] = reg
        ints[base + RW_E0 + 2 * n + 1] = ints[R_STAMP]
        ints[base + RW_N] = n + 1
        return standard_bank(ints, warp, reg)
    # evict the entry with the smallest stamp (insertion order: FIFO; last use: LRU)
    v = 0
    for i in range(1, n):
        if ints[base + RW_E0 + 2 * i + 1] < ints[base + RW_E0 + 2 * v + 1]:
            v = i
    _rfc_writeback(ints, warp, ints[base + RW_E0 + 2 * v], cycle)
    ints[R_C0 + 5] += 1
    ints[base + RW_E0 + 2 * v] = reg
    ints[base + RW_E0 + 2 * v + 1] = ints[R_STAMP]
    return standard_bank(ints, warp, reg)


@njit(cache=True)
def _rfc_flush(ints, warp, cycle):
    e = ints[R_E]
    base = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    for i in range(ints[base + RW_N]):
        _rfc_writeback(ints, warp, ints[base + RW_E0 + 2 * i], cycle)
    ints[base + RW_N] = 0


@njit(cache=True)
def rfc_pool(ints, floats, warp, event, scheduler, d, cycle):
    e = ints[R_E]
    base = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    if event == 1:
        ints[base + RW_IN] = 1
        ints[R_C0 + 6] += 1
    else:
        _rfc_flush(ints, warp, cycle)
        ints[base + RW_IN] = 0
        ints[R_C0 + 7] += 1
    return 0


@njit(cache=True)
def rfc_activate(ints, floats, warp, cta, scheduler, d, cycle):
    e = ints[R_E]
    base = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    ints[base + RW_N] = 0
    if ints[R_TWO] == 0:  # no two-level scheduler: every resident warp is active
        ints[base + RW_IN] = 1
        ints[R_C0 + 6] += 1
    else:
        ints[base + RW_IN] = 0
    return 0


@njit(cache=True)
def rfc_deactivate(ints, floats, warp, cta, scheduler, d, cycle):
    e = ints[R_E]
    base = ints[R_OFF_WARP] + warp * (2 + 2 * e)
    ints[base + RW_N] = 0  # a finished warp's registers are dead: nothing to write back
    ints[base + RW_IN] = 0
    return 0


# ----------------------------------------------------------------------------- slow banks (any design)
# A block of ``SLOW_LEN + banks`` ints at any offset ``base`` of a design's state (the design's bank
# header stays at ints[0:6]): arrival cycles, occupancy, banks, three counters, per-bank busy-until.
SLOW_ARR, SLOW_OCC, SLOW_BANKS, SLOW_WAIT, SLOW_READS, SLOW_WRITES = range(6)
SLOW_LEN = 6
#: the block's counters (name -> position in the block); :func:`slow_counters` gives their indices
SLOW_COUNTER_FIELDS = {
    "slow_bank_wait_cycles": SLOW_WAIT, "slow_bank_read_acc": SLOW_READS, "slow_bank_write_acc": SLOW_WRITES,
}


def slow_counters(base: int) -> dict:
    """``SimSetup.counters`` entries of a slow-bank block at ``ints[base:]``."""
    return {name: base + i for name, i in SLOW_COUNTER_FIELDS.items()}


#: the baseline's block follows its bank header (ints[6:12], busy-until from ints[12])
S_BASE = BANK_HEADER_LEN
SLOW_COUNTERS = slow_counters(S_BASE)


@njit(cache=True)
def slow_read(ints, base, warp, reg, cycle):
    """One operand read from a register file whose banks take ``lat`` cycles per access.

    The register's bank is the SM's bank function (the header at ``ints[0:6]``); the access starts when the
    bank is free (per-bank serialization, :func:`main_access`), holds it for the block's occupancy and
    delivers the data the block's arrival cycles after it starts.  Returns the operand hook's "served
    elsewhere" answer (so the simulator's one-cycle arbiter is bypassed); the block is at ``ints[base:]``.
    """
    b = standard_bank(ints, warp, reg)
    s = main_access(ints, base + SLOW_LEN, b, cycle, ints[base + SLOW_OCC])
    ints[base + SLOW_WAIT] += s - cycle
    ints[base + SLOW_READS] += 1
    return -(1 + s - cycle + ints[base + SLOW_ARR] - 1)


@njit(cache=True)
def slow_write(ints, base, warp, reg, cycle):
    """One register write to :func:`slow_read`'s register file: it occupies its bank; returns -1 (the
    write hook's "no bank access of the simulator's")."""
    b = standard_bank(ints, warp, reg)
    main_access(ints, base + SLOW_LEN, b, cycle, ints[base + SLOW_OCC])
    ints[base + SLOW_WRITES] += 1
    return -1


def slow_block(sm, latency_x: float):
    """A slow-bank block to place at some offset ``base`` of a design's ints, or None when an access takes
    one cycle (then the design keeps the simulator's own banks and arbiter, bit-identical to 1x).

    One warp-register access takes ``rows`` bank accesses (narrow banks) of ``lat =
    round(latency_x x BANK_CYCLES)`` cycles each: the bank is busy ``rows x lat`` cycles and the data
    arrives ``rows x lat`` cycles after the access starts (the simulator's banks at 1x: ``rows`` cycles).
    """
    lat = max(1, int(round(latency_x * BANK_CYCLES)))
    if lat == 1:
        return None
    rows = int(sm.rows_per_warp_register)
    block = np.zeros(SLOW_LEN + sm.num_banks, dtype=np.int64)
    block[SLOW_ARR] = block[SLOW_OCC] = rows * lat
    block[SLOW_BANKS] = sm.num_banks
    return block


def main_rf_latency(design: str, params: dict) -> float:
    """The validated ``main_rf_latency_x`` of ``params`` (default 1; the range of :data:`MAIN_RF_PARAMS`)."""
    default, lo, hi, _i = MAIN_RF_PARAMS["main_rf_latency_x"]
    return _check(design, "main_rf_latency_x", params.get("main_rf_latency_x", default), lo, hi, False)


def with_slow_block(ints: np.ndarray, sm, params: dict, design: str, slot: int) -> np.ndarray:
    """``ints`` with the slow-bank block of ``params["main_rf_latency_x"]`` appended and its offset stored
    at ``ints[slot]`` (0 and nothing appended at 1x: the simulator's own banks)."""
    block = slow_block(sm, main_rf_latency(design, params))
    ints[slot] = 0
    if block is None:
        return ints
    base = len(ints)
    out = np.concatenate([ints, block])
    out[slot] = base
    return out


def slow_block_counters(ints: np.ndarray, slot: int) -> dict:
    """The counters of the block whose offset is at ``ints[slot]`` (empty without one)."""
    return slow_counters(int(ints[slot])) if ints[slot] else {}


def slow_bank_accesses(sm, setup, counts) -> tuple[float, float]:
    """Bank accesses (rows per warp register) of the reads and writes timed by a slow-bank block."""
    if "slow_bank_read_acc" not in setup.counters:
        return 0.0, 0.0
    rows = float(sm.rows_per_warp_register)
    return rows * float(counts["slow_bank_read_acc"]), rows * float(counts["slow_bank_write_acc"])


def slow_bank_reads(setup, counts) -> float:
    """Warp registers read through a slow-bank block (0 without one)."""
    return float(counts["slow_bank_read_acc"]) if "slow_bank_read_acc" in setup.counters else 0.0


@njit(cache=True)
def slow_bank_operand(ints, floats, warp, row, k, reg, cycle):
    """Operand hook of the baseline with slow banks: :func:`slow_read` with its block after the header."""
    return slow_read(ints, S_BASE, warp, reg, cycle)


@njit(cache=True)
def slow_bank_write(ints, floats, warp, row, k, reg, cycle):
    """Write hook of :func:`slow_bank_operand`'s register file: :func:`slow_write`."""
    return slow_write(ints, S_BASE, warp, reg, cycle)


def slow_bank_state(sm, latency_x: float, reg_offset: int = 0):
    """The baseline's state with slow banks (bank header, then the block of :func:`slow_block`), or None
    when an access takes one cycle."""
    block = slow_block(sm, latency_x)
    if block is None:
        return None
    return np.concatenate([bank_header(sm, reg_offset), block])


def entries_per_warp(p: dict, sm) -> int:
    regs = p["rfc_kb"] * 1024 // WARP_REG_BYTES
    return max(1, int(regs // (p["active_warps"] * sm.schedulers_per_sm)))


@register
class Rfc(Design):
    name = "rfc"
    description = "hardware register-file cache (Gebhart et al. 2011) over a main RF; two-level scheduler"
    SPEC = {
        **MAIN_RF_PARAMS,
        "rfc_kb": (16, 1, 1024, True),
        "rfc_policy": (0, 0, 1, True),  # 0 FIFO, 1 LRU
    }
    parameters = tuple(SPEC)
    metrics = (
        "rf_cache_hit_rate", "rf_cache_reads", "main_rf_reads", "main_rf_writes", "rfc_evictions",
        "warp_activations", "warp_deactivations", "main_rf_wait_cycles",
    )

    def params(self, sm, params: dict) -> dict:
        return resolve_params(self.name, self.SPEC, sm, params)

    # ------------------------------------------------------------------ simulator
    def sim_setup(self, sm, params, options, trace=None):
        p = self.params(sm, params)
        lat, occ, xex = main_rf_timing(p)
        e = entries_per_warp(p, sm)
        W = sm.warps_per_sm
        offset = 1 if getattr(options, "compat", "none") == "gpgpusim" else 0
        off_warp = R_C0 + len(RFC_COUNTERS)
        off_bank = off_warp + W * (2 + 2 * e)
        ints = np.zeros(off_bank + p["main_rf_banks"], dtype=np.int64)
        ints[:BANK_HEADER_LEN] = bank_header(sm, offset)
        ints[R_LAT], ints[R_OCC], ints[R_XEX] = lat, occ, xex
        ints[R_MB], ints[R_E], ints[R_POLICY] = p["main_rf_banks"], e, p["rfc_policy"]
        ints[R_TWO], ints[R_W] = int(two_level(sm)), W
        ints[R_OFF_WARP], ints[R_OFF_BANK] = off_warp, off_bank
        ints[R_G] = p["main_rf_bank_regs"]
        hooks = SimHooks(
            operand=rfc_operand, write=rfc_write, activate=rfc_activate, deactivate=rfc_deactivate,
            pool=rfc_pool,
        )
        return SimSetup(
            hooks=hooks,
            ints=ints,
            counters={c: R_C0 + i for i, c in enumerate(RFC_COUNTERS)},
            pool=p["active_warps"],
        )

    def sim_metrics(self, sm, params, setup, counts):
        hits, miss = float(counts["rfc_read_hits"]), float(counts["rfc_read_misses"])
        reads = float(counts["reads"])
        mr, mw = float(counts["main_rf_reads"]), float(counts["main_rf_writes"])
        return {
            "rf_cache_hit_rate": hits / (hits + miss) if hits + miss else 0.0,
            "rf_cache_reads": hits,
            "rfc_evictions": float(counts["rfc_evictions"]),
            "warp_activations": float(counts["warp_activations"]),
            "warp_deactivations": float(counts["warp_deactivations"]),
            "main_rf_wait_cycles": float(counts["main_rf_wait_cycles"]),
            "main_rf_reads": mr,
            "main_rf_writes": mw,
            "events": {
                "rf_cache": (float(counts["bank_read_acc"]), float(counts["bank_write_acc"])),
                "main_rf_bank": (mr, mw),
                "main_network": (mr + mw, 0.0),
                "crossbar": (reads + float(counts["writes"]), 0.0),
                "collector": (reads, reads),
            },
        }

    # ------------------------------------------------------------------ analytic
    def analytic(self, profile, sm, grid):
        from rfmodel.analytic.caching import analytic_rfc

        return analytic_rfc(self, profile, sm, grid)

    def structures(self, sm, grid, tech):
        from rfmodel.designs.ltrf import hierarchy_structures

        return hierarchy_structures(self, sm, grid, tech, wcb=False)


__all__ = ["Rfc", "NEVER"]
