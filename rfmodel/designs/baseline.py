"""Baseline: a conventional banked register file with operand collectors.

Every operand is read from single-ported (or multi-ported) SRAM banks through
a crossbar into operand collector units; every result is written back to its
bank.  The other designs are judged against it.
"""

from __future__ import annotations

import numpy as np

from rfmodel.analytic.throughput import baseline_ipc, occupancy_warps
from rfmodel.designs.base import Design, register
from rfmodel.energy.accounting import Structure
from rfmodel.spec.sm import OP_CLASS_NAMES
from rfmodel.tech.sram import sram_bank

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

# First-order wire model of the collector<->bank crossbar (until the technology
# layer's interconnect models replace it): energy per transfer =
# activity * width_bits * C_wire * length * Vdd^2, with the length half the side
# of the banks' square footprint.
WIRE_CAP_PF_PER_MM = 0.2
WIRE_VDD = 1.0
WIRE_ACTIVITY = 0.5


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
        banks = sm_param(sm, grid, "num_banks")
        regs = sm_param(sm, grid, "regs_per_sm")
        coll = sm_param(sm, grid, "collector_units")
        cell = tech.get("cell", "sram-hp")
        node = tech.get("node_nm", 45)
        ports = "1r1w" if sm.bank_write_ports > 0 else "1rw"
        bank_kb = regs * 4.0 / banks / 1024.0
        bank = sram_bank(bank_kb, sm.bank_width_bits, cell=cell, node_nm=node, ports=ports)
        # operand collector storage: 3 operands of one warp register each, costed per byte
        # as the smallest fitted SRAM array (4 KB, 1r1w), i.e. an extrapolation downwards
        small = sram_bank(4.0, 1024, cell=cell, node_nm=node, ports="1r1w")
        coll_kb = 3 * 128 / 1024.0
        side_mm = np.sqrt(banks * bank.area_mm2)
        xbar_pj = WIRE_ACTIVITY * sm.bank_width_bits * WIRE_CAP_PF_PER_MM * (side_mm / 2.0) * WIRE_VDD**2
        return [
            Structure(
                "rf_bank",
                bank.read_energy_pj,
                bank.write_energy_pj,
                bank.leakage_mw,
                bank.area_mm2,
                copies=banks,
                provenance=bank.provenance,
            ),
            Structure(
                "collector",
                small.read_energy_pj,
                small.write_energy_pj,
                small.leakage_mw * coll_kb / 4.0,
                small.area_mm2 * coll_kb / 4.0,
                copies=coll,
                provenance="per-byte scaling of a 4 KB 1r1w array; " + small.provenance,
            ),
            Structure(
                "crossbar",
                xbar_pj,
                0.0,
                0.0,
                0.0,
                provenance=f"wire model: {WIRE_ACTIVITY} x width x {WIRE_CAP_PF_PER_MM} pF/mm "
                f"x half the bank-array side x ({WIRE_VDD} V)^2; area not modelled",
            ),
        ]
