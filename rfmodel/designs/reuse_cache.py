"""The compiler-managed operand reuse cache of NVIDIA GPUs since Maxwell.

Every source operand slot (A, B, C) of a scheduler's register-file read stage has a one-entry
cache.  The compiler sets the ``.reuse`` flag on a source operand when the next instruction of
the warp reads the same register in the same slot; the hardware then keeps the value and the
next read hits instead of reading a bank.  "Dissecting and Modeling the Architecture of Modern
GPU Cores" (Huerta et al., MICRO 2025) describes this register file cache as private to a
sub-core and shared by its warps, driven only by the compiler's flags.  docs/designs.md
("Compiler-managed operand reuse cache") gives the reading implemented here; in short:

* One cache per scheduler (the warp's sub-core, ``warp mod schedulers``), one entry per operand
  slot.  An entry holds the (warp, register) of the last read of that slot that carried
  ``.reuse``; any later read of the slot on the scheduler replaces it (flagged) or empties it
  (not flagged).  A read hits when the entry holds its own warp's register.  A register pair or
  quad read through one slot keeps every register of the group (up to 4).
* A write of a cached register by the same warp empties the entry (the compiler does not flag
  such values; this keeps the cache coherent whatever the flags say).
* Flags come from the trace's ``reuse`` column, which the SASS reader fills from the real
  ``.reuse`` marks of the shipped SASS; slots from the static kernel's ``src_slots`` when the
  kernel can be reloaded (else the operand's position).  A trace with no flag at all
  (synthetic, Accel-Sim) gets no hits: ``reuse_source`` says "none", nothing is invented.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS
from rfmodel.analytic.model import Effects
from rfmodel.analytic.profile import TableGroup, register_table_group
from rfmodel.analytic.reuse import ipc_gain, served_outside
from rfmodel.designs import base, mainrf
from rfmodel.errors import RfmodelError
from rfmodel.trace import MAX_SRC, NONE
from rfmodel.workload.static import static_kernel


@dataclass(frozen=True)
class ReuseCacheParams(mainrf.SlowBankParams, kind="design.reuse_cache"):
    """The operand reuse cache's parameters: the banks' access time only (the flags decide the rest)."""


#: the operand reuse cache's own free coefficients (default, lower, upper)
REUSE_CACHE_CALIBRATION = {
    "reuse_same_warp": (1.0, 0.0, 1.5),  # the scheduled hits that survive the simulator's timing
    "reuse_ipc_gain": (0.02, 0.0, 0.2),  # relative IPC gain per bank read saved per instruction
}

#: operand slots per scheduler (A, B, C, and a fourth for the rare wider encodings)
SLOTS = 4
#: registers of one slot's group (pair, quad) an entry holds
SUB = 4
E_N = SLOTS * SUB

# ----------------------------------------------------------------------------------- state layout
I_S, I_OFF_ENT, I_OFF_ROW = base.BANK_HEADER_LEN, base.BANK_HEADER_LEN + 1, base.BANK_HEADER_LEN + 2
C0 = base.BANK_HEADER_LEN + 3
COUNTERS = (
    "reuse_hits",  # source operands served by the reuse cache
    "reuse_misses",  # source operands read from the banks
    "reuse_fills",  # flagged reads (the value is kept in the slot's entry)
    "reuse_lost",  # flagged values replaced before their reuse (another warp's read of the slot)
    "reuse_write_invalidations",  # cached registers overwritten by their warp
)
CNT = {name: C0 + i for i, name in enumerate(COUNTERS)}
K_HITS, K_MISSES, K_FILLS, K_LOST, K_WINV = (C0 + i for i in range(5))
HEADER = C0 + len(COUNTERS)
# per entry: warp, register, 1 if filled and not yet hit
F_W, F_R, F_NEW = range(3)
E_F = 3
# per row (one int64): bits 5k..5k+4 = slot (3 bits, 7 = none) and index in the slot's group (2 bits)
# of source k; bits 50..59 = the .reuse flag of source k
FLAG_SHIFT = 50
NO_SLOT = 7


@njit(cache=True)
def reuse_operand(ints, floats, w, row, k, reg, cyc):
    if k >= MAX_SRC or reg == 255:
        ints[K_MISSES] += 1
        return base.standard_bank(ints, w, reg)
    word = ints[ints[I_OFF_ROW] + row]
    code = (word >> (5 * k)) & 31
    slot = code & 7
    if slot == NO_SLOT:
        ints[K_MISSES] += 1
        return base.standard_bank(ints, w, reg)
    sub = code >> 3
    s = w % ints[I_S]
    p = ints[I_OFF_ENT] + ((s * SLOTS + slot) * SUB + sub) * E_F
    hit = ints[p + F_W] == w and ints[p + F_R] == reg
    if not hit and ints[p + F_NEW] != 0:
        ints[K_LOST] += 1
    if (word >> (FLAG_SHIFT + k)) & 1:
        ints[p + F_W] = w
        ints[p + F_R] = reg
        ints[p + F_NEW] = 1
        ints[K_FILLS] += 1
    else:
        ints[p + F_W] = -1
        ints[p + F_R] = -1
        ints[p + F_NEW] = 0
    return base.served_or_bank(ints, hit, K_HITS, K_MISSES, w, reg)


@njit(cache=True)
def reuse_write(ints, floats, w, row, k, reg, cyc):
    s = w % ints[I_S]
    ent0 = ints[I_OFF_ENT] + s * E_N * E_F
    for e in range(E_N):
        p = ent0 + e * E_F
        if ints[p + F_W] == w and ints[p + F_R] == reg:
            ints[p + F_W] = -1
            ints[p + F_R] = -1
            ints[p + F_NEW] = 0
            ints[K_WINV] += 1
    return base.standard_bank(ints, w, reg)


HOOKS = base.SimHooks(operand=reuse_operand, write=reuse_write)


def slot_table(kernel):
    """The compiler's operand slots per static instruction (``attrs["src_slots"]`` of the kernel), as a
    table with one last row of -1 for rows without a static index; None when the kernel has none."""
    slots = kernel.attrs.get("src_slots")
    if not slots or len(slots) != len(kernel.instrs):
        return None
    table = np.full((len(slots) + 1, MAX_SRC), -1, np.int64)
    for i, row in enumerate(slots):
        r = [int(x) for x in row][:MAX_SRC]
        table[i, : len(r)] = r
    return table


def operand_slots(trace, table=None) -> tuple[np.ndarray, str]:
    """Per row and source: the operand slot (0 = A ..., -1 none) and where it came from.

    From ``table`` (:func:`slot_table` of the kernel the trace was expanded from) where it gives one;
    else the source's position among the row's sources.
    """
    n = trace.n_instrs
    pos = np.tile(np.arange(MAX_SRC, dtype=np.int64), (n, 1))
    pos[trace.src == NONE] = -1
    if table is None:
        return pos, "position"
    last = len(table) - 1
    sidx = np.asarray(trace.sidx, dtype=np.int64)
    sidx = np.where((sidx >= 0) & (sidx < last), sidx, last)
    out = table[sidx]
    missing = (out < 0) & (trace.src != NONE)
    out[missing] = pos[missing]
    out[trace.src == NONE] = -1
    return out, "static kernel (src_slots)"


@njit(cache=True)
def _pack(slots, reuse):  # pragma: no cover - compiled
    n = slots.shape[0]
    words = np.zeros(n, np.int64)
    seen = np.zeros(SLOTS, np.int64)
    for i in range(n):
        seen[:] = 0
        w = np.int64(0)
        for k in range(slots.shape[1]):
            s = slots[i, k]
            code = NO_SLOT
            if s >= 0 and s < SLOTS and seen[s] < SUB:
                code = s | (seen[s] << 3)
                seen[s] += 1
            w |= np.int64(code) << (5 * k)
        words[i] = w | ((np.int64(reuse[i]) & ((1 << MAX_SRC) - 1)) << FLAG_SHIFT)
    return words


def pack_rows(trace, slots: np.ndarray) -> np.ndarray:
    """One int64 per row: slot and group index of every source, and the ``.reuse`` flags."""
    return _pack(np.ascontiguousarray(slots, dtype=np.int64), trace.reuse)


@njit(cache=True)
def _scheduled_hits(order, warp_of, words, src, dst, S):  # pragma: no cover - compiled
    """Source reads served by the schedulers' reuse caches with the rows issued in ``order`` (warp
    ``warp_of[row]`` on scheduler ``warp mod S``): :func:`reuse_operand` and :func:`reuse_write` in that
    order, a result's write at its instruction."""
    hits = 0
    held_w = np.full((S, E_N), -1, np.int64)
    held_r = np.full((S, E_N), -1, np.int64)
    for j in range(order.shape[0]):
        i = order[j]
        w = warp_of[i]
        s = w % S
        word = words[i]
        for k in range(src.shape[1]):
            r = np.int64(src[i, k])
            if r == NONE:
                continue
            code = (word >> (5 * k)) & 31
            if code & 7 == NO_SLOT:
                continue
            e = (code & 7) * SUB + (code >> 3)
            if held_w[s, e] == w and held_r[s, e] == r:
                hits += 1
            if (word >> (FLAG_SHIFT + k)) & 1:
                held_w[s, e] = w
                held_r[s, e] = r
            else:
                held_w[s, e] = -1
                held_r[s, e] = -1
        for k in range(dst.shape[1]):
            r = np.int64(dst[i, k])
            if r != NONE:
                for e in range(E_N):
                    if held_w[s, e] == w and held_r[s, e] == r:
                        held_w[s, e] = -1
                        held_r[s, e] = -1
    return hits


def reuse_tables(trace, rank=None, inputs=None) -> dict:
    """The ``reuse`` profile group of ``trace`` (every warp of it: the interleaving needs them all):
    ``reuse_sched``, the share of the source reads the schedulers' reuse caches serve with the rows issued
    in the SM's schedule (``rank``; ``inputs``: the SM's schedulers, :func:`_sm_inputs`), the trace's
    ``.reuse`` flags and the static kernel's operand slots taken as the simulator takes them
    (:meth:`ReuseCache.sim_setup`); ``reuse_alone``, the same with each warp alone on its scheduler (what
    ``reuse_sched`` is without a schedule); and ``reuse_flagged``, the flagged share of the source reads (the
    simulator's ``reuse_flag_fraction``).  A trace without flags gives 0 for all three."""
    wp = trace.warp_ptr.astype(np.int64)
    end = int(wp[-1])
    srcs = max(int(np.count_nonzero(trace.src[:end] != NONE)), 1)
    flags = int(np.unpackbits(np.ascontiguousarray(trace.reuse[:end]).view(np.uint8)).sum())
    if flags == 0:
        return {"reuse_sched": 0.0, "reuse_alone": 0.0, "reuse_flagged": 0.0}
    kernel = static_kernel(trace)
    slots, _ = operand_slots(trace, None if kernel is None else slot_table(kernel))
    words = pack_rows(trace, slots)
    n_w = len(wp) - 1
    warp_of = np.repeat(np.arange(n_w, dtype=np.int64), np.diff(wp))
    # each warp alone: its rows in trace order, a scheduler of its own
    alone = _scheduled_hits(np.arange(end, dtype=np.int64), warp_of, words, trace.src, trace.dst, n_w) / srcs
    sched = alone
    S = int((inputs or {}).get("schedulers", 0))
    if rank is not None and S > 0:
        order = np.argsort(np.asarray(rank)[:end], kind="stable").astype(np.int64)
        sched = _scheduled_hits(order, warp_of, words, trace.src, trace.dst, S) / srcs
    return {"reuse_sched": sched, "reuse_alone": alone, "reuse_flagged": flags / srcs}


def _sm_inputs(source) -> dict:
    """The SM's schedulers, for :func:`reuse_tables`."""
    return {"schedulers": int(source.sm.schedulers_per_sm)}


#: the reuse cache's profile tables, built on first use with the profile
REUSE_TABLES = register_table_group(
    TableGroup("reuse", ("reuse_sched", "reuse_alone", "reuse_flagged"), reuse_tables, sm_inputs=_sm_inputs)
)


@base.register
class ReuseCache(mainrf.SlowBanks, base.Design):
    name = "reuse_cache"
    description = "compiler-managed operand reuse cache (SASS .reuse flags), one entry per operand slot"
    Params = ReuseCacheParams
    metrics = (
        "rf_cache_hit_rate",
        "rf_reads_saved",
        "rf_bank_reads",
        "reuse_flag_fraction",
    ) + mainrf.TIMING_METRICS
    #: free coefficients of the analytic model (default, lower, upper): the interval model's and the
    #: design's own
    calibration_params = {**INTERVAL_COEFFICIENTS, **REUSE_CACHE_CALIBRATION}
    supports_simulate = True
    needs_trace = True

    def compile(self, kernel, params, sm):
        """The operand slots the compiler gave each static instruction's sources (:func:`slot_table`)."""
        return slot_table(kernel)

    def sim_setup(self, sm, p, options, trace=None, program=None):
        if trace is None:
            raise RfmodelError(
                "design 'reuse_cache' needs the trace being simulated: sim_setup(..., trace=trace)"
            )
        flagged = int(np.count_nonzero(trace.reuse))
        srcs = int(np.count_nonzero(trace.src != NONE))
        if flagged:
            reuse_source = "sass"
            slots, slot_source = operand_slots(trace, program)
        else:
            kind = trace.attrs.get("source", "trace")
            reuse_source = f"none ({kind} trace carries no .reuse flags; no hits)"
            slots, slot_source = np.full(trace.src.shape, -1, np.int64), "none"
        flag_fraction = base.rate(int(np.unpackbits(trace.reuse.view(np.uint8)).sum()), srcs)
        rows = pack_rows(trace, slots)
        S = max(int(sm.schedulers_per_sm), 1)
        off_ent = HEADER
        off_row = off_ent + S * E_N * E_F
        ints = base.header_state(sm, options, off_row + len(rows))
        ints[I_S], ints[I_OFF_ENT], ints[I_OFF_ROW] = S, off_ent, off_row
        ent = ints[off_ent:off_row].reshape(-1, E_F)
        ent[:, F_W] = -1
        ent[:, F_R] = -1
        ints[off_row:] = rows
        info = {"flag_fraction": flag_fraction, "reuse_source": reuse_source, "slot_source": slot_source}
        return base.SimSetup(hooks=HOOKS, ints=ints, counters=dict(CNT), info=info, **self.bank_cycles(sm, p))

    def sim_metrics(self, sm, p, setup, counts):
        hits = float(counts["reuse_hits"])
        reads = float(counts["reads"])
        writes = float(counts["writes"])
        bank_r, bank_w = float(counts["bank_read_acc"]), float(counts["bank_write_acc"])
        return {
            **mainrf.bank_timing_metrics(sm, p),
            "rf_cache_hit_rate": base.rate(hits, reads),
            "rf_reads_saved": hits,
            "rf_bank_reads": float(counts["reuse_misses"]),
            "reuse_flag_fraction": float(setup.info["flag_fraction"]),
            "reuse_source": setup.info["reuse_source"],
            "reuse_slot_source": setup.info["slot_source"],
            "events": {
                "rf_bank": (bank_r, bank_w),
                "crossbar": (float(counts["reuse_misses"]) + writes, 0.0),
                "collector": (reads, reads),
                "reuse_cache": (hits, float(counts["reuse_fills"])),
            },
        }

    def analytic(self, ctx):
        """The reads the trace's flags serve, kept from other warps.

        hit = reuse_sched x reuse_same_warp: ``reuse_sched`` the profile's share of the source reads the
        schedulers' caches serve in the order of the SM's schedule (:func:`reuse_tables`: the trace's own
        ``.reuse`` flags and operand slots, as the simulator takes them), ``reuse_same_warp`` what of it
        survives the simulator's timing (calibrated).  A trace without flags gives 0.
        """
        c, profile = ctx.coef, ctx.profile
        t = profile.need(REUSE_TABLES.name)
        hit = np.clip(float(t.reuse_sched) * np.asarray(c["reuse_same_warp"]), 0.0, 1.0)
        timing, timing_m = mainrf.bank_effects(ctx)
        m = ctx.model(Effects(read_share=1.0 - hit, operand_slots=self.operand_slots, **timing))
        factor = np.maximum(ipc_gain(m, ctx, hit, c["reuse_ipc_gain"]), 0.05)
        flagged = float(t.reuse_flagged) + 0 * hit
        reads = ctx.reads
        out = served_outside(ctx, m, hit, factor, {"reuse_cache": (reads * hit, reads * flagged)})
        out["rf_cache_hit_rate"] = hit + 0 * factor
        out["reuse_flag_fraction"] = flagged + 0 * factor
        out.update({k: v + 0 * out["ipc"] for k, v in timing_m.items()})
        return out

    def structures(self, sm, grid, tech):
        """The SM's structures plus one operand-slot cache (3 warp registers) per scheduler."""
        from rfmodel.tech.structures import operand_collector

        node = tech.get("node_nm", 45)
        cell = tech.get("cell", "sram-hp")
        rc = operand_collector(3, sm.threads_per_warp * 32, node_nm=node, cell=cell)
        return [
            *mainrf.sm_structures(sm, grid, tech),
            rc.structure("reuse_cache", copies=sm.schedulers_per_sm),
        ]


__all__ = ["ReuseCache", "ReuseCacheParams", "operand_slots", "pack_rows"]
