"""Baseline: a conventional banked register file with operand collectors.

Every operand is read from single-ported (or multi-ported) SRAM banks through
a crossbar into operand collector units; every result is written back to its
bank.  The other designs are judged against it.
"""

from __future__ import annotations

import numpy as np

from rfmodel.analytic.throughput import baseline_ipc, occupancy_warps
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


def sm_param(sm, grid: dict, name: str):
    """A parameter's value: the grid's array if the grid varies it, else the spec's."""
    if name in grid:
        return np.asarray(grid[name])
    if name == "collector_units":
        return np.asarray(sm.collectors.total)
    return np.asarray(getattr(sm, name))


@register
class Baseline(Design):
    name = "baseline"
    description = "conventional banked SRAM register file, operand collectors, crossbar"
    #: design parameters beyond the SM fields: the two-level scheduler's active warps per scheduler
    #: (cycle simulator only; the analytic model does not use it)
    parameters = ("active_warps",)

    # ------------------------------------------------------------------ simulator hooks
    def sim_setup(self, sm, params, options):
        """Every operand is read from, and every result written to, its bank (``SMSpec.bank_of``).

        The hooks are the standard ones of :class:`~rfmodel.designs.base.SimHooks`; the
        state is the bank-mapping header (registers shifted by one in GPGPU-Sim mode).
        """
        offset = 1 if getattr(options, "compat", "none") == "gpgpusim" else 0
        pool = int(params.get("active_warps", 8))
        return SimSetup(hooks=SimHooks(), ints=bank_header(sm, offset), pool=pool)

    def sim_metrics(self, sm, params, setup, counts):
        """Bank accesses feed the banks; every operand and result crosses the crossbar once."""
        reads = float(counts["reads"])
        writes = float(counts["writes"])
        return {
            "events": {
                "rf_bank": (float(counts["bank_read_acc"]), float(counts["bank_write_acc"])),
                "crossbar": (reads + writes, 0.0),
                "collector": (reads, reads),
            }
        }

    def analytic(self, profile, sm, grid):
        p = {k: sm_param(sm, grid, k) for k in GRID_FIELDS}
        warps = occupancy_warps(
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
        initiation = np.array([max(getattr(sm.latency, c)[1], 1) for c in OP_CLASS_NAMES], dtype=np.float64)
        separate = sm.bank_write_ports > 0
        m = baseline_ipc(
            profile,
            warps=warps,
            schedulers=p["schedulers_per_sm"],
            issue_width=p["issue_width"],
            banks=p["num_banks"],
            ports_per_bank=p["bank_rw_ports"] + p["bank_read_ports"],
            separate_write_ports=separate,
            collectors=p["collector_units"],
            initiation=initiation,
            mem_bytes_per_cycle=sm.mem_bw_bytes_per_cycle,
            l1d_lines=max(sm.l1d.size_bytes // sm.l1d.line_bytes, 1),
            line_bytes=sm.l1d.line_bytes,
            mapping="warp-per-bank" if sm.bank_mapping == "warp-per-bank" else "interleaved",
            # with sub-cores a warp's registers interleave over its own sub-core's banks only
            interleave_banks=(
                np.maximum(p["num_banks"] // p["schedulers_per_sm"], 1)
                if sm.sub_core or sm.bank_mapping == "subcore"
                else None
            ),
        )
        n = float(profile.n_instrs)
        reads = n * profile.reads_per_instr
        writes = n * profile.writes_per_instr
        ipc = m["ipc"]
        with np.errstate(divide="ignore"):
            cycles = np.where(ipc > 0, n / ipc, np.inf)
        # collector-cycles lost waiting for banks: serialization inside an instruction
        # (beyond the first access) plus queueing behind other collectors' accesses
        conflict = n * (np.maximum(m["ser"] - 1.0, 0.0) + m["bank_wait"])
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
