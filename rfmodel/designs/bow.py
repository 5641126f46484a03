"""BOW: the operand collectors as a per-warp sliding window of instructions that forwards operands.

"BOW: Breathing Operand Windows to Exploit Bypassing in GPUs" (MICRO 2020), as the paper on
caching collector units ("Lightweight Register File Caching in Collector Units for GPUs")
describes it for its comparison: the operand buffers hold the source operands of a sliding
window of the last ``window`` (3) instructions of a warp and forward register values between
the instructions of the window instead of reading them from the banks; the window is flushed
when a branch jumps to a new window.  docs/designs.md ("BOW") lists the reading implemented
here; in short:

* A source operand of instruction ``i`` is forwarded (no bank read) when the same register was
  read or written by one of the ``window - 1`` previous instructions of the warp's stream and
  no taken branch lies between them (an operand named twice by one instruction is read once).
* A result is written to the window only; its register-file write is skipped (bypassed) when
  every read of the value lies inside the window (at most ``window - 1`` instructions later,
  no taken branch between) and at least one read exists -- the write-bypass variant of the BOW
  paper, whose compiler marks such values.  Other results are written to the banks.
* Since the window is per warp and follows the warp's own stream, the forwarding decisions are
  computed once per trace row in ``sim_setup`` (they do not depend on timing); the hooks only
  route the operand to the window or to its bank and count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS
from rfmodel.analytic.model import Effects, sm_param
from rfmodel.analytic.profile import NONE, TableGroup, bank_load_table, register_table_group
from rfmodel.analytic.reuse import ipc_gain, served_outside
from rfmodel.designs import base, mainrf
from rfmodel.errors import RfmodelError
from rfmodel.ir import OpClass
from rfmodel.spec import param


@dataclass(frozen=True)
class BowParams(mainrf.SlowBankParams, kind="design.bow"):
    """BOW's parameters."""

    window: int = param(
        3, bounds=(1, 64), doc="instructions in the sliding window (the Malekeh paper's comparison: 3)"
    )
    write_bypass: int = param(
        1, choices=(0, 1), doc="1: results consumed only inside the window skip the register-file write"
    )


#: BOW's own free coefficients (default, lower, upper)
BOW_CALIBRATION = {
    "bow_ipc_gain": (0.04, 0.0, 0.3),  # relative IPC gain per bank read saved per instruction
}
#: the window sizes the ``bow`` profile tables hold: every size the parameter allows
BOW_WINDOWS = np.arange(1, 65, dtype=np.int64)

# ----------------------------------------------------------------------------------- state layout
I_OFF_ROW = base.BANK_HEADER_LEN
C0 = base.BANK_HEADER_LEN + 1
COUNTERS = (
    "bow_hits",  # source operands forwarded inside the window
    "bow_misses",  # source operands read from the banks
    "bow_bypassed_writes",  # results not written to the banks (consumed inside the window only)
    "bow_rf_writes",  # results written to the banks
    "bow_flushes",  # window flushes (taken branches), counted when the trace is prepared
)
CNT = {name: C0 + i for i, name in enumerate(COUNTERS)}
K_HITS, K_MISSES, K_BYPASS, K_RFW = (C0 + i for i in range(4))
HEADER = C0 + len(COUNTERS)
DST_SHIFT = 16  # per row: bits 0..9 source k forwarded, bits 16..19 destination k bypasses the RF


@njit(cache=True)
def window_masks(warp_ptr, src, dst, op, sidx, active, window, branch_op):  # pragma: no cover - compiled
    """Per row: the forwarded-source mask, the bypassed-destination mask; and the flush count.

    ``window`` instructions per window (a value is visible to the ``window - 1`` following
    instructions); a flush follows every taken branch (the next row of the warp is not the
    branch's fall-through, or the static index is unknown).
    """
    n = src.shape[0]
    hit = np.zeros(n, np.int64)
    epoch = np.zeros(n, np.int64)
    last = np.empty(256, np.int64)
    last_ep = np.empty(256, np.int64)
    far = np.empty(256, np.int64)
    flushes = 0
    look = window - 1
    for w in range(warp_ptr.shape[0] - 1):
        a, b = warp_ptr[w], warp_ptr[w + 1]
        ep = 0
        for i in range(a, b):
            epoch[i] = ep
            if op[i] == branch_op and i + 1 < b and (sidx[i] < 0 or sidx[i + 1] != sidx[i] + 1):
                ep += 1
                flushes += 1
        # forward pass: sources served by the window
        last[:] = -(1 << 40)
        last_ep[:] = -1
        for i in range(a, b):
            m = 0
            for k in range(src.shape[1]):
                r = src[i, k]
                if r == 255:
                    continue
                if i - last[r] <= look and last_ep[r] == epoch[i]:
                    m |= 1 << k
                last[r] = i
                last_ep[r] = epoch[i]
            for k in range(dst.shape[1]):
                r = dst[i, k]
                if r == 255:
                    continue
                if active[i] == 32 or (i - last[r] <= look and last_ep[r] == epoch[i]):
                    last[r] = i  # a full write, or a partial one merged into the window's copy
                    last_ep[r] = epoch[i]
                else:
                    last[r] = -(1 << 40)
            hit[i] = m
        # backward pass: results whose every read lies inside the window
        far[:] = -1
        for i in range(b - 1, a - 1, -1):
            for k in range(dst.shape[1]):
                r = dst[i, k]
                if r == 255:
                    continue
                f = far[r]
                if active[i] == 32:
                    if f >= 0 and f - i <= look and epoch[f] == epoch[i]:
                        hit[i] |= 1 << (DST_SHIFT + k)
                    far[r] = -1
            for k in range(src.shape[1]):
                r = src[i, k]
                if r != 255 and far[r] < 0:
                    far[r] = i
    return hit, flushes


@njit(cache=True)
def _window_counts(masks, n_src):  # pragma: no cover - compiled
    """Forwarded sources and bypassed destinations over the rows' :func:`window_masks` masks."""
    fwd = 0
    byp = 0
    for i in range(masks.shape[0]):
        m = masks[i]
        for k in range(n_src):
            fwd += (m >> k) & 1
        for k in range(4):
            byp += (m >> (DST_SHIFT + k)) & 1
    return fwd, byp


def window_tables(trace, rank=None, inputs=None) -> dict:
    """The ``bow`` profile group of ``trace``, from the simulator's own rule (:func:`window_masks`, the masks
    its setup computes per trace row, which no timing changes): ``bow_flush_share``, the window flushes per
    instruction (the taken branches: a branch whose warp's next row is not its fall-through);
    ``bow_forwarded[j]`` and ``bow_bypassed[j]``, per instruction, the source operands the window of
    ``BOW_WINDOWS[j]`` instructions forwards (every operand slot, as the simulator's collectors ask for them)
    and the results whose every read it holds (with the write bypass on); ``bow_bank_loads[i]`` (the
    distinct ones only) and ``bow_bank_load_index[j]`` (which one window ``j`` has): the distribution of
    an instruction's largest load on one bank of the distinct sources the window leaves to the banks
    (:func:`~rfmodel.analytic.profile.bank_load_table`): the window forwards whole dependence chains, so
    its reads do not reach the banks independently (pb_bicg_1 on volta-v100 at one bank a sub-core: the
    excess bank cycles fall to 0.06 of the baseline's, where the read share, 0.74, would keep 0.6 of
    them).  The order of the warps does not matter."""
    wp = trace.warp_ptr.astype(np.int64)
    cols = (trace.src, trace.dst, trace.op.astype(np.int64), trace.sidx.astype(np.int64))
    active = trace.active.astype(np.int64)
    n = max(int(wp[-1]), 1)
    fwd = np.zeros(len(BOW_WINDOWS))
    byp = np.zeros(len(BOW_WINDOWS))
    loads, index, seen = [], np.zeros(len(BOW_WINDOWS), dtype=np.int64), {}
    flushes = 0
    for j, window in enumerate(BOW_WINDOWS):
        masks, flushes = window_masks(wp, *cols, active, int(window), int(OpClass.BRANCH))
        fwd[j], byp[j] = _window_counts(masks, trace.src.shape[1])
        table = bank_load_table(_left_to_banks(trace.src, masks))
        key = table.tobytes()
        if key not in seen:  # a larger window forwards no more once it spans the kernel's chains
            seen[key] = len(loads)
            loads.append(table)
        index[j] = seen[key]
    return {
        "bow_flush_share": float(flushes) / n,
        "bow_forwarded": fwd / n,
        "bow_bypassed": byp / n,
        "bow_bank_loads": np.stack(loads),
        "bow_bank_load_index": index,
    }


def _left_to_banks(src, masks) -> np.ndarray:
    """``src`` with the operand slots the window forwards (``masks``' source bits) cleared to ``NONE``."""
    out = src.copy()
    for k in range(src.shape[1]):
        out[((masks >> k) & 1).astype(bool), k] = NONE
    return out


#: BOW's profile tables, built on first use with the profile
BOW_TABLES = register_table_group(
    TableGroup(
        "bow",
        ("bow_flush_share", "bow_forwarded", "bow_bypassed", "bow_bank_loads", "bow_bank_load_index"),
        window_tables,
    )
)


def window_at(table, window) -> np.ndarray:
    """A ``bow`` table's value at the grid's ``window`` sizes (every allowed size is tabulated; linear
    between sizes only for a non-integer one)."""
    t = np.asarray(table, dtype=np.float64)
    x = np.clip(np.asarray(window, dtype=np.float64), BOW_WINDOWS[0], BOW_WINDOWS[-1])
    return np.interp(x, BOW_WINDOWS.astype(np.float64), t)


@njit(cache=True)
def bow_operand(ints, floats, w, row, k, reg, cyc):
    hit = k < 10 and (ints[ints[I_OFF_ROW] + row] >> k) & 1 != 0
    return base.served_or_bank(ints, hit, K_HITS, K_MISSES, w, reg)


@njit(cache=True)
def bow_write(ints, floats, w, row, k, reg, cyc):
    bypass = k < 4 and (ints[ints[I_OFF_ROW] + row] >> (DST_SHIFT + k)) & 1 != 0
    return base.served_or_bank(ints, bypass, K_BYPASS, K_RFW, w, reg)


HOOKS = base.SimHooks(operand=bow_operand, write=bow_write)


@base.register
class Bow(mainrf.SlowBanks, base.Design):
    name = "bow"
    operand_slots = False  # a register named twice by one instruction is read once
    description = "BOW: per-warp sliding window of 3 instructions forwarding operands, write bypass"
    Params = BowParams
    metrics = (
        "rf_cache_hit_rate",
        "rf_reads_saved",
        "rf_bank_reads",
        "bow_bypassed_writes",
        "bow_flushes",
        *mainrf.TIMING_METRICS,
    )
    #: free coefficients of the analytic model (default, lower, upper): the interval model's and BOW's own
    calibration_params = {**INTERVAL_COEFFICIENTS, **BOW_CALIBRATION}
    supports_simulate = True
    needs_trace = True
    size_parameters = {"window": ("bow_buffer",)}

    def sim_setup(self, sm, p, options, trace=None, program=None):
        if trace is None:
            raise RfmodelError("design 'bow' needs the trace being simulated: sim_setup(..., trace=trace)")
        masks, flushes = window_masks(
            trace.warp_ptr.astype(np.int64),
            trace.src,
            trace.dst,
            trace.op.astype(np.int64),
            trace.sidx.astype(np.int64),
            trace.active.astype(np.int64),
            p.window,
            int(OpClass.BRANCH),
        )
        if not p.write_bypass:
            masks &= (1 << DST_SHIFT) - 1
        ints = base.header_state(sm, options, HEADER + len(masks))
        ints[I_OFF_ROW] = HEADER
        ints[HEADER:] = masks
        ints[CNT["bow_flushes"]] = int(flushes)
        return base.SimSetup(hooks=HOOKS, ints=ints, counters=dict(CNT), **self.bank_cycles(sm, p))

    def sim_metrics(self, sm, p, setup, counts):
        hits = float(counts["bow_hits"])
        reads = float(counts["reads"])
        bank_r = float(counts["bank_read_acc"])
        bank_w = float(counts["bank_write_acc"])
        rfw = float(counts["bow_rf_writes"])
        results = rfw + float(counts["bow_bypassed_writes"])
        return {
            **mainrf.bank_timing_metrics(sm, p),
            "rf_cache_hit_rate": base.rate(hits, reads),
            "rf_reads_saved": hits,
            "rf_bank_reads": float(counts["bow_misses"]),
            "bow_bypassed_writes": float(counts["bow_bypassed_writes"]),
            "bow_flushes": float(counts["bow_flushes"]),
            "events": {
                "rf_bank": (bank_r, bank_w),
                # bank reads into the window and results (to the banks and to the window) cross it
                "crossbar": (float(counts["bow_misses"]) + results, 0.0),
                # every operand is read out of the window; bank reads and results are written into it
                "bow_buffer": (reads, float(counts["bow_misses"]) + results),
            },
        }

    def analytic(self, ctx):
        """The window's forwarded operands and bypassed results, as the simulator decides them.

        The profile's ``bow`` tables (:func:`window_tables`) count, per instruction at each window size,
        the operand slots the window forwards (``f``) and the results whose every read it holds (``v``), by
        the simulator's own per-row rule (no timing enters it): hit = f / slots; the banks see the slots it
        does not forward (``slots - f`` of the ``distinct`` sources each instruction's collector reads once:
        a source named twice is always forwarded), in the bank loads the window leaves
        (``bow_bank_loads``: their serialization and the collection), and, with the write bypass, the
        results less ``v``.
        """
        c, profile = ctx.coef, ctx.profile
        window = ctx.param("window")
        bypass_on = ctx.param("write_bypass")
        t = profile.need("bow")
        slots = max(float(profile.reads_per_instr), 1e-12)
        fwd = np.minimum(window_at(t.bow_forwarded, window), slots)
        hit = fwd / slots
        distinct = max(float(profile.distinct_reads_per_instr), 1e-12)
        byp = np.minimum(window_at(t.bow_bypassed, window) * bypass_on, float(profile.writes_per_instr))
        timing, timing_m = mainrf.bank_effects(ctx)
        # the table of each window size (every allowed size is tabulated: a non-integer one takes its
        # nearest)
        j = np.clip(np.rint(np.asarray(window, dtype=np.float64)) - BOW_WINDOWS[0], 0, len(BOW_WINDOWS) - 1)
        m = ctx.model(
            Effects(
                read_share=np.clip((slots - fwd) / distinct, 0.0, 1.0),
                write_share=1.0 - byp / max(float(profile.writes_per_instr), 1e-12),
                bank_loads=(t.bow_bank_loads, t.bow_bank_load_index[j.astype(np.int64)]),
                operand_slots=self.operand_slots,
                **timing,
            )
        )
        factor = np.maximum(ipc_gain(m, ctx, hit, c["bow_ipc_gain"]), 0.05)
        reads, writes = ctx.reads, ctx.writes
        saved = reads * hit
        bypassed = ctx.n * byp
        ev = {"bow_buffer": (reads, reads - saved + writes)}
        out = served_outside(ctx, m, hit, factor, ev, drop=("collector",), bank_writes=writes - bypassed)
        out["rf_cache_hit_rate"] = hit + 0 * factor
        out["bow_bypassed_writes"] = bypassed + 0 * factor
        # the profile's taken branches (the simulator's flushes), not every branch
        out["bow_flushes"] = ctx.n * float(t.bow_flush_share) + 0 * factor
        out.update({k: v + 0 * out["ipc"] for k, v in timing_m.items()})
        return out

    def structures(self, sm, grid, tech):
        """The SM's banks and crossbar; each collector holds a window of instructions' operands."""
        from rfmodel.energy.accounting import structure_over_grid
        from rfmodel.tech.structures import operand_collector

        shared = [s for s in mainrf.sm_structures(sm, grid, tech) if s.name != "collector"]
        node = tech.get("node_nm", 45)
        cell = tech.get("cell", "sram-hp")

        def buffer(window, copies):
            buf = operand_collector(
                int(window) * mainrf.COLLECTOR_OPERANDS, sm.threads_per_warp * 32, node_nm=node, cell=cell
            )
            return buf.structure("bow_buffer", copies=copies)

        coll = sm_param(sm, grid, "collector_units")
        values = {"window": self.grid_param(sm, grid, "window"), "copies": coll}
        return [*shared, structure_over_grid("bow_buffer", values, buffer)]


__all__ = ["Bow", "BowParams", "window_masks"]
