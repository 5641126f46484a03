"""Baseline: a conventional banked register file with operand collectors.

Every operand is read from single-ported (or multi-ported) SRAM banks through
a crossbar into operand collector units; every result is written back to its
bank.  The other designs are judged against it.
"""

from __future__ import annotations

import numpy as np

from rfmodel.analytic.calibration import coefficients
from rfmodel.analytic.throughput import INTERVAL_COEFFICIENTS, interval_model, occupancy_warps
from rfmodel.designs.base import Design, SimHooks, SimSetup, bank_header, register
from rfmodel.energy.accounting import Structure
from rfmodel.spec.sm import OP_CLASS_NAMES
from rfmodel.tech.array import array_cost
from rfmodel.tech.interconnect import crossbar
from rfmodel.tech.structures import operand_collector

#: SM fields (and derived totals) the baseline's analytic model reads from the grid
GRID_FIELDS = (
    "num_banks",
    "regs_per_sm",
    "collector_units",
    "warps_per_sm",
    "schedulers_per_sm",
    "issue_width",
    "bank_rw_ports",
    "bank_read_ports",
)

#: source operands a collector unit buffers (one warp register each)
COLLECTOR_OPERANDS = 3
#: bank port configurations with technology data, by total ports per bank (the nearest is used)
BANK_PORTS_BY_COUNT = {1: "1rw", 2: "1r1w", 3: "2r1w"}


def miss_latency(sm) -> float:
    """Latency of an L1D miss served by DRAM in the simulator: L1 + L2 + DRAM + one line of bandwidth."""
    return float(
        sm.l1d.hit_latency_cycles
        + sm.l2_hit_latency_cycles
        + sm.dram_latency_cycles
        + sm.l1d.line_bytes / max(sm.mem_bw_bytes_per_cycle, 1e-9)
    )


def sm_param(sm, grid: dict, name: str):
    """A parameter's value: the grid's array if the grid varies it, else the spec's."""
    if name in grid:
        return np.asarray(grid[name])
    if name == "collector_units":
        return np.asarray(sm.collectors.total)
    return np.asarray(getattr(sm, name))


#: ways of the simulator's L2 slice (docs/simulator.md, "Memory")
L2_ASSOC = 16


def resident_warps(profile, sm, grid: dict):
    """Resident warps per SM (the CUDA occupancy rules) for the grid's SM fields."""
    p = {k: sm_param(sm, grid, k) for k in ("regs_per_sm", "warps_per_sm")}
    return occupancy_warps(
        profile.regs_per_thread,
        profile.threads_per_cta,
        profile.shared_mem_bytes,
        profile.ctas,
        regs_per_sm=p["regs_per_sm"],
        max_warps=p["warps_per_sm"],
        max_ctas=sm.max_ctas_per_sm,
        max_threads=p["warps_per_sm"] * sm.threads_per_warp,
        smem_per_sm=sm.shmem_per_sm_bytes,
        alloc_granularity=sm.reg_alloc_granularity,
        warp_size=sm.threads_per_warp,
    )


def sm_interval(profile, sm, grid: dict, coef: dict, extra_collect=0.0, bank_cycles=1.0, read_share=1.0,
                write_share=1.0, operand_slots=True) -> dict:  # fmt: skip
    """Occupancy and the interval model of one SM for the grid's SM fields (every design's base).

    ``coef``: the interval model's coefficients; ``extra_collect``: cycles added to every operand
    collection (designs that read some operands from a slower structure); ``bank_cycles``: cycles
    one bank access takes (slow banks); ``read_share``/``write_share``: the fractions of operand reads
    and result writes that access the banks (designs with an operand cache or write bypass);
    ``operand_slots``: bank reads count operand slots, else distinct sources (``interval_model``).
    """
    p = {k: sm_param(sm, grid, k) for k in GRID_FIELDS}
    warps = resident_warps(profile, sm, grid)
    initiation = np.array([max(getattr(sm.latency, c)[1], 1) for c in OP_CLASS_NAMES], dtype=np.float64)
    slow = np.asarray(bank_cycles, dtype=np.float64) > 1.0
    split = bool(sm.sub_core or sm.bank_mapping == "subcore")
    sched = p["schedulers_per_sm"]
    bps = np.maximum(p["num_banks"] // sched, 1) if split else p["num_banks"]
    # distinct bank rotations among the warps of one pool of banks: (reg + slot) mod n rotates by the
    # slot; a sub-core's warps have slots congruent mod S, so only n / gcd(S, n) rotations remain
    if sm.bank_mapping == "reg-mod":
        rotations = np.ones_like(np.asarray(bps, dtype=np.float64))
    elif split:
        rotations = bps / np.gcd(np.asarray(sched, dtype=np.int64), np.asarray(bps, dtype=np.int64))
    else:
        rotations = np.minimum(np.maximum(warps, 1), bps)
    m = interval_model(
        profile,
        warps=warps,
        schedulers=sched,
        issue_width=p["issue_width"],
        banks=p["num_banks"],
        # slow banks (bank_cycles > 1) serve one access at a time, reads and writes alike
        ports_per_bank=np.where(slow, 1, p["bank_rw_ports"] + p["bank_read_ports"]),
        separate_write_ports=sm.bank_write_ports > 0 and not np.any(slow),
        collectors=p["collector_units"],
        initiation=initiation,
        mem_bytes_per_cycle=sm.mem_bw_bytes_per_cycle,
        l1d_lines=max(sm.l1d.size_bytes // sm.l1d.line_bytes, 1),
        line_bytes=sm.l1d.line_bytes,
        l1_hit_latency=sm.l1d.hit_latency_cycles,
        miss_latency=miss_latency(sm),
        mshr=sm.l1d.mshr_entries or 1 << 20,
        sub_core=split,
        mapping="warp-per-bank" if sm.bank_mapping == "warp-per-bank" else "interleaved",
        # with sub-cores a warp's registers interleave over its own sub-core's banks only
        interleave_banks=bps if split else None,
        coef=coef,
        extra_collect=extra_collect,
        rotations=rotations,
        bank_cycles=bank_cycles,
        l2_lines=max(sm.l2_size_bytes // max(sm.num_sms, 1) // sm.l1d.line_bytes, 1),
        l2_hit_latency=sm.l2_hit_latency_cycles,
        l1d_assoc=sm.l1d.assoc,
        l2_assoc=L2_ASSOC,
        read_share=read_share,
        write_share=write_share,
        operand_slots=operand_slots,
    )
    return m


@register
class Baseline(Design):
    name = "baseline"
    description = "conventional banked SRAM register file, operand collectors, crossbar"
    #: design parameters beyond the SM fields: the two-level scheduler's active warps per scheduler, and
    #: the banks' access time as a multiple of one cycle (``main_rf_latency_x``, default 1; see
    #: ``sim_setup``); the analytic model uses ``main_rf_latency_x`` (bank service time), not
    #: ``active_warps``
    parameters = ("active_warps", "main_rf_latency_x")
    #: the interval model's free coefficients (default, lower, upper), fitted by ``rfmodel calibrate``
    calibration_params = dict(INTERVAL_COEFFICIENTS)

    # ------------------------------------------------------------------ simulator hooks
    def sim_setup(self, sm, params, options, trace=None):
        """Every operand is read from, and every result written to, its bank (``SMSpec.bank_of``).

        The hooks are the standard ones of :class:`~rfmodel.designs.base.SimHooks`; the
        state is the bank-mapping header (registers shifted by one in GPGPU-Sim mode).
        """
        offset = 1 if getattr(options, "compat", "none") == "gpgpusim" else 0
        pool = int(params.get("active_warps", 8))
        from rfmodel.designs.rfc import (
            SLOW_COUNTERS,
            main_rf_latency,
            slow_bank_operand,
            slow_bank_state,
            slow_bank_write,
        )

        slow = slow_bank_state(sm, main_rf_latency(self.name, params), offset)
        if slow is None:  # one cycle per access: the simulator's own banks and arbiter (bit-identical to 1x)
            return SimSetup(hooks=SimHooks(), ints=bank_header(sm, offset), pool=pool)
        # slower banks (the main-RF latency multiples of the LTRF paper): every access holds its bank
        # ``round(x)`` cycles and delivers its data after as long; the banks are then timed by the hooks
        # (single access at a time per bank), not by the simulator's one-cycle arbiter
        hooks = SimHooks(operand=slow_bank_operand, write=slow_bank_write)
        return SimSetup(hooks=hooks, ints=slow, pool=pool, counters=dict(SLOW_COUNTERS))

    def sim_metrics(self, sm, params, setup, counts):
        """Bank accesses feed the banks; every operand and result crosses the crossbar once."""
        reads = float(counts["reads"])
        writes = float(counts["writes"])
        from rfmodel.designs.rfc import slow_bank_accesses

        # plus the accesses of banks timed by the hooks (main_rf_latency_x > 1)
        slow_r, slow_w = slow_bank_accesses(sm, setup, counts)
        bank_r = float(counts["bank_read_acc"]) + slow_r
        bank_w = float(counts["bank_write_acc"]) + slow_w
        return {
            "events": {
                "rf_bank": (bank_r, bank_w),
                "crossbar": (reads + writes, 0.0),
                "collector": (reads, reads),
            }
        }

    def analytic(self, profile, sm, grid, read_share=1.0, write_share=1.0, operand_slots=True):
        """The calibrated interval model (``rfmodel.analytic.throughput.interval_model``).

        ``read_share``/``write_share`` (designs built on this one): the fractions of operand reads and
        result writes that access the banks; the metrics still count every operand and result.
        ``operand_slots``: the share applies to operand slots (``True``) or to distinct sources.
        """
        # main_rf_latency_x: every bank access holds its bank x cycles and delivers after as long
        # (continuous here; the simulator rounds to whole cycles)
        x = np.maximum(np.asarray(grid.get("main_rf_latency_x", 1.0), dtype=np.float64), 1.0)
        m = sm_interval(profile, sm, grid, coefficients(self, grid), bank_cycles=x, read_share=read_share,
                        write_share=write_share, operand_slots=operand_slots)  # fmt: skip
        warps = m["warps"]
        n = float(profile.n_instrs)
        reads = n * profile.reads_per_instr
        writes = n * profile.writes_per_instr
        ipc = m["ipc"]
        cycles = m["cycles"]
        # collector-cycles lost waiting for banks: serialization inside an instruction
        # (beyond the first access) plus queueing behind other collectors' accesses
        conflict = n * m["conflict_per_instr"]
        return {
            "ipc": ipc,
            "cycles": cycles,
            "warps": warps,
            "rf_reads": reads + 0 * ipc,
            "rf_writes": writes + 0 * ipc,
            "bank_conflict_stall_cycles": np.where(warps > 0, conflict, np.nan),
            "l1d_hit_rate": m["l1d_hit_rate"],
            "collector_cycles": m["t_collect"],
            "events": {
                "rf_bank": (reads + 0 * ipc, writes + 0 * ipc),
                "crossbar": (reads + writes + 0 * ipc, 0.0),
                "collector": (reads + 0 * ipc, reads + 0 * ipc),
            },
        }

    def structures(self, sm, grid, tech):
        """RF banks, collector storage and the collector<->bank crossbar (rfmodel.tech models).

        ``tech``: ``cell`` and ``node_nm`` of the banks, and ``out_of_range`` (default 'extrapolate': bank
        shapes outside the CACTI/NVSim data, which grid sweeps reach, are extrapolated and their provenance
        says so).  Bank ports: the data's configuration with the same total port count (1, 2, 3+).
        """
        banks = sm_param(sm, grid, "num_banks")
        regs = sm_param(sm, grid, "regs_per_sm")
        coll = sm_param(sm, grid, "collector_units")
        nports = sm_param(sm, grid, "bank_rw_ports") + sm_param(sm, grid, "bank_read_ports")
        nports = nports + sm.bank_write_ports
        cell = tech.get("cell", "sram-hp")
        node = tech.get("node_nm", 45)
        mode = tech.get("out_of_range", "extrapolate")
        width = sm.bank_width_bits
        shape = np.broadcast_shapes(np.shape(banks), np.shape(regs), np.shape(coll), np.shape(nports))
        banks_b = np.broadcast_to(banks, shape).astype(float)
        bank_kb = np.broadcast_to(regs * 4.0 / banks / 1024.0, shape).astype(float)
        nports_b = np.broadcast_to(nports, shape)
        costs = {k: np.zeros(shape) for k in ("read", "write", "leak", "area", "group", "fixed")}
        provs = []
        for n in np.unique(nports_b):
            label = BANK_PORTS_BY_COUNT[int(min(max(n, 1), 3))]
            sel = nports_b == n
            b = array_cost(cell, node, bank_kb[sel], width, ports=label, out_of_range=mode, warn=False)
            values = {
                "read": b.read_energy_pj,
                "write": b.write_energy_pj,
                "leak": b.leakage_mw,
                "area": b.area_mm2,
                "group": b.write_group_pj(32),
                "fixed": b.write_fixed_pj,
            }
            for k, v in values.items():
                costs[k][sel] = v
            provs.append(f"{n} port(s) -> {label}: {b.provenance_summary}")
        # collector storage: COLLECTOR_OPERANDS warp registers per collector unit
        col = operand_collector(COLLECTOR_OPERANDS, sm.threads_per_warp * 32, node_nm=node, cell=cell)
        # crossbar: banks x collectors, over the banks' square footprint
        span = np.sqrt(banks_b * costs["area"])
        coll_b = np.broadcast_to(coll, shape)
        memo = {}
        xb = {k: np.zeros(shape) for k in ("e", "leak", "area")}
        for idx in np.ndindex(shape):
            key = (int(banks_b[idx]), int(max(coll_b[idx], 1)), round(float(span[idx]), 9))
            if key not in memo:
                memo[key] = crossbar(key[0], key[1], width, node, key[2])
            net = memo[key]
            xb["e"][idx], xb["leak"][idx], xb["area"][idx] = net.transfer_pj, net.leakage_mw, net.area_mm2

        def s(a):
            return a if a.ndim else float(a)

        return [
            Structure(
                "rf_bank",
                s(costs["read"]),
                s(costs["write"]),
                s(costs["leak"]),
                s(costs["area"]),
                copies=banks,
                provenance="; ".join(provs),
                write_group_pj=s(costs["group"]),
                write_fixed_pj=s(costs["fixed"]),
                capacity_bits=s(bank_kb * 8192.0),
            ),
            col.structure("collector", copies=coll),
            Structure(
                "crossbar",
                s(xb["e"]),
                0.0,
                s(xb["leak"]),
                s(xb["area"]),
                provenance=f"banks x collectors crossbar, {width} bit, over the bank array: "
                + next(iter(memo.values())).provenance["energy_pj_per_bit"],
            ),
        ]
