"""Unified on-chip memory, split statically between the register file and the L1D at each kernel launch.

"Unifying Primary Cache, Scratch, and Register File Memories in a Throughput Processor" (MICRO 2012), as
"Cache-Emulated Register File: An Integrated On-Chip Memory Architecture for High Performance GPGPUs" uses it
for comparison: one on-chip memory of ``unified_kb`` (the SM's register file by default: 128 KB on
``fermi-gtx480``), partitioned when a kernel is launched, from its register demand, into a register file and
an L1D.  Once partitioned the two are a conventional banked register file and a conventional L1D (the SM's
own: associativity, line, latency, MSHRs); the partition does not change while the kernel runs.

The split (:func:`partition`): occupancy first, the remainder to the cache.

1. The resident CTAs are the most the SM's occupancy rules allow (warp slots, CTA slots, threads, shared
   memory, the kernel's CTAs on this SM) with ``capacity - min_l1d`` bytes as registers.
2. The register file gets their registers: CTAs x warps per CTA x registers per warp (registers per thread
   x 32, rounded up to the SM's allocation granularity) x 4 bytes.
3. The L1D gets the rest, rounded down to whole sets (``assoc x line_bytes``: 512 B on fermi-gtx480) and
   so that the register file fills whole rows of all its banks (16 banks x 1,024 bits = 2 KB there); the
   bytes the rounding leaves stay with the register file (unallocated registers).  No L1D (0 B) when the
   registers take it all.

Shared memory is not part of the unified memory here: the CERF paper keeps the 48 KB shared memory beside
both designs (its Table I), so the SM's ``shmem_per_sm_bytes`` stays a separate array and limits occupancy as
in the baseline (the MICRO 2012 design unifies it too; not modelled).  ``partition = "separate"`` runs the
SM's own register file and L1D unchanged: the CERF paper's separate baseline with this design's energy
structures (L1D and L2, Table III), for energy comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS
from rfmodel.analytic.model import Effects
from rfmodel.designs.base import (
    BANK_HEADER_LEN,
    L1_STORE,
    Design,
    DesignParams,
    SimHooks,
    SimSetup,
    header_state,
    register,
    standard_bank_hook,
)
from rfmodel.designs.cerf import l2_events_model, l2_events_sim, l2_structures, table3_structure, tag_area_mm2
from rfmodel.designs.mainrf import sm_structures
from rfmodel.spec import param

PARTITIONS = ("launch", "separate")


@dataclass(frozen=True)
class UnifiedParams(DesignParams, kind="design.unified"):
    """The unified memory's parameters (defaults: the CERF paper's comparison point, 128 KB on a Fermi SM)."""

    unified_kb: int = param(
        0,
        unit="KB",
        bounds=(0, 4096),
        doc="the unified memory (register file + L1D); 0: the SM's register file (regs_per_sm x 4 B)",
    )
    min_l1d_kb: int = param(
        0,
        unit="KB",
        bounds=(0, 4096),
        acts_with={"partition": ("launch",)},
        doc="L1D kept before registers are given out (0: occupancy first, as the CERF paper's comparison)",
    )
    partition: str = param(
        "launch",
        type=str,
        choices=PARTITIONS,
        doc="launch: split at each kernel launch from its register demand; separate: the SM's own register "
        "file and L1D (the separate baseline, with this design's L1D and L2 energy structures)",
    )


def capacity_bytes(unified_kb, regs_per_sm):
    """Bytes of the unified memory: ``unified_kb``, or the register file of ``regs_per_sm`` registers where
    it is 0 (either may be an array: an int64 array of their broadcast shape, else an int)."""
    cap = np.where(
        np.asarray(unified_kb) > 0,
        np.asarray(unified_kb, dtype=np.int64) * 1024,
        np.asarray(regs_per_sm, dtype=np.int64) * 4,
    )
    return int(cap) if cap.ndim == 0 else cap


def partition(
    regs_per_thread, threads_per_cta, smem_per_cta, ctas, sm, capacity, min_l1d=0, fields=None
) -> dict:
    """The launch's split of ``capacity`` bytes (module docstring): ``regs_per_sm`` (32-bit registers),
    ``l1d_bytes``, the resident ``ctas`` and ``warps``, and ``reg_bytes_used`` (the resident warps'
    registers).  ``capacity``, ``min_l1d`` (bytes) and ``fields`` (SM fields of :data:`SPLIT_SM_FIELDS`
    a grid sets, name -> values; the others are ``sm``'s) may be arrays: the split of every point at once,
    as int64 arrays of their broadcast shape (Python ints where every input is a scalar)."""

    def f(name):  # the grid's values of an SM field, else the SM's
        return np.asarray((fields or {}).get(name, getattr(sm, name)), dtype=np.int64)

    ws = f("threads_per_warp")
    cap = np.asarray(capacity, dtype=np.int64)
    wpc = np.maximum(-(-int(threads_per_cta) // ws), 1)
    g = f("reg_alloc_granularity")
    per_warp = -(-(max(int(regs_per_thread), 1) * ws) // g) * g
    reg_room = np.maximum(cap - np.asarray(min_l1d, dtype=np.int64), 0) // 4
    limits = [
        f("warps_per_sm") // wpc,
        f("max_ctas_per_sm"),
        max(int(ctas), 1),
        f("max_threads_per_sm") // (wpc * ws),
        reg_room // (wpc * per_warp),
    ]
    if smem_per_cta:
        limits.append(f("shmem_per_sm_bytes") // int(smem_per_cta))
    n = np.maximum(np.minimum.reduce(np.broadcast_arrays(*limits)), 0)
    used = n * wpc * per_warp * 4
    granule = sm.l1d.assoc * sm.l1d.line_bytes
    l1d = np.where(n > 0, (cap - used) // granule * granule, 0)
    # the register file must fill whole bank rows of every bank and whole warp registers: give whole sets
    # back until it does (fermi-gtx480: 16 banks x one 1,024-bit row = 2 KB)
    step = np.lcm(f("num_banks") * f("bank_width_bits") // 32, ws) * 4
    while True:
        short = (l1d > 0) & ((cap - l1d) % step != 0)
        if not short.any():
            break
        l1d = np.where(short, l1d - granule, l1d)
    out = {
        "regs_per_sm": (cap - l1d) // 4,
        "l1d_bytes": l1d,
        "ctas": n,
        "warps": n * wpc,
        "reg_bytes_used": used,
    }
    shape = np.broadcast_shapes(
        np.shape(capacity), np.shape(min_l1d), *(np.shape(v) for v in (fields or {}).values())
    )
    if not shape:
        return {k: int(v) for k, v in out.items()}
    return {k: np.broadcast_to(v, shape) for k, v in out.items()}


def launched_sm(sm, regs_per_sm: int, l1d_bytes: int):
    """``sm`` with the launch's register file and L1D."""
    regs = int(regs_per_sm)
    return sm.replace(
        regs_per_sm=regs,
        l1d=sm.l1d.replace(size_bytes=int(l1d_bytes)),
        max_regs_per_thread=min(sm.max_regs_per_thread, regs // sm.threads_per_warp),
        regs_per_cta_limit=min(sm.regs_per_cta_limit, regs),
    )


@njit(cache=True)
def unified_l1(ints, floats, warp, line, kind, fill, cycle):
    """Counts the store lines the SM's L1D sees (its energy: a store writes the array), then leaves every
    access to it (returns -1)."""
    if kind == L1_STORE:
        ints[BANK_HEADER_LEN] += 1
    return -1


def _ctas(trace) -> int:
    """CTAs of a trace (this SM's share of the grid)."""
    return max(len(np.unique(np.asarray(trace.warp_cta))), 1)


#: the SM fields :func:`partition` reads beside the register count, which a grid point may set
SPLIT_SM_FIELDS = (
    "num_banks",
    "bank_width_bits",
    "warps_per_sm",
    "max_ctas_per_sm",
    "max_threads_per_sm",
    "shmem_per_sm_bytes",
    "threads_per_warp",
    "reg_alloc_granularity",
)

HOOKS = SimHooks(operand=standard_bank_hook, write=standard_bank_hook, l1=unified_l1)


@register
class Unified(Design):
    name = "unified"
    description = "unified on-chip memory split statically between register file and L1D at each launch"
    Params = UnifiedParams
    metrics = ("unified_rf_kb", "unified_l1d_kb", "unified_rf_used_kb")
    calibration_params = dict(INTERVAL_COEFFICIENTS)
    supports_simulate = True
    presets = {"unified-128KB": {"unified_kb": 128}, "separate": {"partition": "separate"}}
    neutral = {"partition": "separate"}

    # ------------------------------------------------------------------ the launch's split
    def split(self, sm, params, regs_per_thread, threads_per_cta, smem_per_cta, ctas) -> dict:
        """The launch's split of the unified array (``params``: the point's typed parameters or a dict)."""
        p = self.resolve(params)
        cap = capacity_bytes(p.unified_kb, sm.regs_per_sm)
        if p.partition == "separate":
            return {"regs_per_sm": sm.regs_per_sm, "l1d_bytes": sm.l1d.size_bytes, "capacity": cap}
        out = partition(regs_per_thread, threads_per_cta, smem_per_cta, ctas, sm, cap, p.min_l1d_kb * 1024)
        return {**out, "capacity": cap}

    def launch_sm(self, sm, p, trace):
        ctas = _ctas(trace)
        s = self.split(sm, p, trace.regs_per_thread, trace.threads_per_cta, trace.shared_mem_bytes, ctas)
        if s["regs_per_sm"] == sm.regs_per_sm and s["l1d_bytes"] == sm.l1d.size_bytes:
            return sm
        return launched_sm(sm, s["regs_per_sm"], s["l1d_bytes"])

    # ------------------------------------------------------------------ simulator hooks
    def sim_setup(self, sm, p, options, trace=None, program=None):
        """The standard banks (the launch's register file: ``launch_sm``) and the SM's L1D (the launch's
        size); the ``l1`` hook only counts store lines."""
        ints = header_state(sm, options, BANK_HEADER_LEN + 2)
        if trace is not None:  # the resident warps' registers (allocated), bytes
            t = trace
            occ = partition(
                t.regs_per_thread, t.threads_per_cta, t.shared_mem_bytes, _ctas(t), sm, sm.regs_per_sm * 4
            )
            ints[BANK_HEADER_LEN + 1] = occ["reg_bytes_used"]
        return SimSetup(
            hooks=HOOKS,
            ints=ints,
            counters={"l1_store_lines": BANK_HEADER_LEN},
            info={
                "unified_split": f"{sm.regs_per_sm * 4 // 1024} KB registers, "
                f"{sm.l1d.size_bytes // 1024} KB L1D"
            },
        )

    def sim_metrics(self, sm, p, setup, counts):
        """``sm`` is the launch's.  Events: the register banks, the L1D's lines (hits read one, fills and
        stores write one: rows of the banks with ``launch``, the separate array otherwise), its tags, and the
        L2."""
        reads, writes = float(counts["reads"]), float(counts["writes"])
        acc, hit = float(counts["l1_acc"]), float(counts["l1_hit"])
        stores = float(counts["l1_store_lines"])
        miss = max(acc - hit, 0.0)
        line_r, line_w = hit, miss + stores
        bank_r, bank_w = float(counts["bank_read_acc"]), float(counts["bank_write_acc"])
        return {
            "unified_rf_kb": sm.regs_per_sm * 4 / 1024.0,
            "unified_l1d_kb": sm.l1d.size_bytes / 1024.0,
            "unified_rf_used_kb": float(setup.ints[BANK_HEADER_LEN + 1]) / 1024.0,
            "events": {
                "rf_bank": (bank_r, bank_w),
                "crossbar": (reads + writes, 0.0),
                "collector": (reads, reads),
                # the L1D's line accesses: rows of the banks (launch) or of the separate L1D's array
                "l1d_data": (line_r, line_w),
                "l1d_tag": (acc, miss),
                # every store is written through to L2
                **l2_events_sim(counts, stores),
            },
        }

    # ------------------------------------------------------------------ analytic
    def analytic(self, ctx):
        """The shared interval model with the launch's register file (the grid's ``regs_per_sm``: its
        occupancy) and L1D (``Effects.l1d_lines``), chosen by :func:`partition` from the profile's
        registers per thread, CTA size, shared memory and CTAs."""
        from rfmodel.analytic.model import AnalyticContext, sm_param

        d = UnifiedParams()
        sm = ctx.sm
        prof = ctx.profile
        regs = np.asarray(sm_param(sm, ctx.grid, "regs_per_sm"))
        cap_kb = np.asarray(ctx.grid.get("unified_kb", d.unified_kb))
        min_kb = np.asarray(ctx.grid.get("min_l1d_kb", d.min_l1d_kb))
        part = np.asarray(ctx.grid.get("partition", d.partition), dtype=object)
        # the SM fields the split reads that the grid varies (the simulator's SM at the point has them)
        fields = {k: np.asarray(ctx.grid[k]) for k in SPLIT_SM_FIELDS if k in ctx.grid}
        shape = np.broadcast_shapes(*(np.shape(a) for a in (regs, cap_kb, min_kb, part, *fields.values())))
        s = partition(
            prof.regs_per_thread,
            prof.threads_per_cta,
            prof.shared_mem_bytes,
            prof.ctas,
            sm,
            capacity_bytes(cap_kb, regs),  # unified_kb, or the point's register file where it is 0
            min_kb.astype(np.int64) * 1024,
            fields,
        )
        sep = part == "separate"  # the SM's own register file and L1D, and no register count used
        rf = np.where(sep, regs, s["regs_per_sm"]).astype(np.float64)
        l1 = np.where(sep, sm.l1d.size_bytes, s["l1d_bytes"]).astype(np.float64)
        used = np.where(sep, np.nan, s["reg_bytes_used"]).astype(np.float64)
        rf, l1, used = (np.broadcast_to(v, shape) for v in (rf, l1, used))
        grid = {**ctx.grid, "regs_per_sm": rf.astype(np.int64) if shape else int(rf)}
        inner = AnalyticContext(prof, sm, grid, {})
        inner.coef = ctx.coef
        lines = np.maximum(l1 // sm.l1d.line_bytes, 0.0)
        m = inner.model(Effects(l1d_lines=lines))  # no lines: the L1D is off (loads go to the L2)
        hit = m["l1d_hit_rate"]
        r, w = ctx.reads, ctx.writes
        n = ctx.n
        loads = n * (
            prof.load_lines_per_instr if prof.load_lines_per_instr is not None else prof.mem_lines_per_instr
        )
        mem = n * prof.mem_lines_per_instr
        # the L1D's accesses as the simulator counts them (``sim_metrics``): every line access looks its tag
        # up, a hit (a store's too: ``hit`` is over every access) reads its line, a miss's fill and each
        # store line write one; none where the split leaves no L1D (its loads and stores go to the L2)
        on = lines > 0
        acc = np.where(on, mem, 0.0)
        miss = acc * (1.0 - hit)
        stores = np.where(on, np.maximum(mem - loads, 0.0), 0.0)
        events = {
            "rf_bank": (r, w),
            "crossbar": (r + w, 0.0),
            "collector": (r, r),
            "l1d_data": (acc * hit, miss + stores),
            "l1d_tag": (acc, miss),
            **l2_events_model(ctx, hit),
        }
        m = {**m, "l1d_hit_rate": hit}
        metrics = {
            "unified_rf_kb": rf * 4 / 1024.0,
            "unified_l1d_kb": l1 / 1024.0,
            "unified_rf_used_kb": used / 1024.0,
        }
        return ctx.result(m, events=events, metrics=metrics)

    # ------------------------------------------------------------------ energy and area
    def structures(self, sm, grid, tech):
        """The banks at the unified memory's capacity (``separate``: the SM's register file) with their
        collectors and crossbar (the technology layer), the L1D's data (``separate``: its own array,
        Table III's 16 KB L1D row, per 4 KB of capacity; with ``launch`` a line access costs the banks' access
        of a warp register and nothing else), the L1D tags (Table III; with ``launch`` tags for
        the whole capacity in lines, as the largest partition needs) and the L2 (Table III)."""
        from rfmodel.energy.accounting import Structure, structure_over_grid

        d = UnifiedParams()
        cap = grid.get("unified_kb", d.unified_kb)
        part = grid.get("partition", d.partition)
        regs = np.asarray(grid.get("regs_per_sm", sm.regs_per_sm))
        cap_regs = capacity_bytes(cap, regs) // 4
        launch = np.asarray(part, dtype=object) == "launch"
        keep = ("collector_units", "main_cell")
        sm_grid = {k: v for k, v in grid.items() if k in sm.to_dict() or k in keep}
        sm_grid["regs_per_sm"] = np.where(launch, cap_regs, regs)
        if not np.shape(sm_grid["regs_per_sm"]):
            sm_grid["regs_per_sm"] = int(sm_grid["regs_per_sm"])
        parts = sm_structures(sm, sm_grid, tech)

        # Table III gives no area: the separate L1D's data array and every L1D tag array take the technology
        # layer's (an SRAM array of the L1D's size delivering a line; rfmodel.tech.structures.tag_array)
        src = f"the technology layer ({tech.get('cell', 'sram-hp')}, {tech.get('node_nm', 45)} nm)"

        def data(capacity_regs, launch):
            size = 0 if launch else sm.l1d.size_bytes
            area = 0.0
            if size > 0:
                from rfmodel.tech.array import array_cost

                area = float(
                    array_cost(
                        tech.get("cell", "sram-hp"),
                        tech.get("node_nm", 45),
                        size / 1024.0,
                        sm.l1d.line_bytes * 8,
                    ).area_mm2
                )
            return table3_structure("l1d_data", "l1d", capacity_bytes=size, area_mm2=area, area_source=src)

        def tags(capacity_regs, launch):
            size = capacity_regs * 4 if launch else sm.l1d.size_bytes
            banks = max(size / (16 * 1024), 1.0)
            area = tag_area_mm2(size, sm.l1d.assoc, tech, banks=int(banks))
            return table3_structure("l1d_tag", "l1d_tag", tag_banks=banks, area_mm2=area, area_source=src)

        values = {"capacity_regs": cap_regs, "launch": launch.astype(np.int64)}
        sep = structure_over_grid("l1d_data", values, data)
        # with ``launch`` the lines are rows of the banks: a line access costs the banks' access of one warp
        # register (their leakage and area are the banks')
        banks = parts[0]
        rows = sm.rows_per_warp_register

        def pick(a, b):
            out = np.where(launch, np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
            return float(out) if out.ndim == 0 else out

        data_s = Structure(
            "l1d_data",
            pick(np.asarray(banks.read_pj) * rows, sep.read_pj),
            pick(np.asarray(banks.write_pj) * rows, sep.write_pj),
            pick(0.0, sep.leakage_mw),
            pick(0.0, sep.area_mm2),
            provenance=f"launch: the banks' access of one warp register ({banks.provenance[:80]}...); "
            f"separate: {sep.provenance}",
        )
        return [*parts, data_s, structure_over_grid("l1d_tag", values, tags), *l2_structures(sm)]
