"""STT-RAM register file with BDI compression, group write drivers and a write buffer.

"Architecting Energy-efficient STT-RAM Based Register File on GPGPUs via Delta Compression" (DAC 2016):
the SM's banks are built from STT-RAM (the main-RF component's ``main_cell``: a read holds its bank one
cycle, a write 4, or 2 with the 10 ms retention cell), an SRAM write buffer absorbs writes to busy banks
(centralized: one pool shared by all banks; or the per-bank buffers of earlier work), and each written warp
register is BDI-compressed so that only the 32-bit write-driver groups holding its compressed bytes are
driven (32 groups of 32 columns).  The paper's configurations are the design's :attr:`Stt.presets`.

The write buffer is the simulator's (``SimSetup.write_buffer_entries``, docs/simulator.md); the hooks here
only count the groups each written value drives.  Analytic terms: the shared interval model with the
cell's asymmetric bank times, and the buffer as a finite queue (docs/models.md, "STT-RAM register file").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS
from rfmodel.analytic.model import Effects, sm_param
from rfmodel.analytic.profile import TableGroup, register_table_group
from rfmodel.analytic.reuse import near_consumer_share
from rfmodel.designs import base, mainrf
from rfmodel.energy.accounting import Structure, structure_over_grid
from rfmodel.errors import RfmodelError
from rfmodel.spec import param
from rfmodel.tech.array import CELLS
from rfmodel.trace import COMPRESS_UNKNOWN, NONE, WARP_VALUE_BYTES, compressed_bytes

#: write-driver groups of a 1024-bit row (Fig. 3: 32 groups of 32 columns) and the bits of one group
GROUPS = 32
GROUP_BITS = 32
#: the packed per-row group count of a value whose compressed size the trace does not give
UNKNOWN_GROUPS = 63


@dataclass(frozen=True)
class SttParams(mainrf.SlowBankParams, kind="design.stt"):
    """The STT-RAM register file's parameters (defaults: the paper's proposal, STT+BDI)."""

    main_cell: str = param(
        "stt-ram",
        type=str,
        choices=tuple(CELLS),
        doc="memory cell of the banks: stt-ram (10-year retention, 4-cycle writes at 700 MHz), "
        "stt-ram-relaxed (10 ms, 2 cycles), sram-hp (the paper's Base), or any other cell",
    )
    wb_entries: int = param(
        16,
        bounds=(0, 256),
        doc="write-buffer entries (warp registers): in all (wb_shared = 1) or per bank (wb_shared = 0); "
        "0: no buffer",
    )
    wb_shared: int = param(1, choices=(0, 1), doc="1: one buffer shared by all banks; 0: per bank")
    bdi: int = param(
        1,
        choices=(0, 1),
        doc="1: BDI-compress every written warp register and drive only the 32-bit groups it fills",
    )
    codec_cycles: int = param(
        0,
        bounds=(0, 8),
        doc="pipeline cycles of the BDI compressor and decompressor together (with bdi = 1; added to every "
        "instruction's result latency): 0, as the paper calls their latency negligible",
    )


def _pack_groups(trace) -> tuple[np.ndarray, float]:
    """Per trace row, the write-driver groups of its destinations in write order (6 bits each, the k-th
    written destination at bits 6k; :data:`UNKNOWN_GROUPS` where the size is unknown), and the share of
    written values whose size is known."""
    dst = np.asarray(trace.dst)
    packed = np.empty(len(dst), dtype=np.int64)
    counts = np.zeros(2, dtype=np.int64)
    _pack_groups_rows(dst, np.asarray(trace.compress), CODE_BYTES, packed, counts)
    n, known = int(counts[0]), int(counts[1])
    return packed, (float(known) / n if n else 0.0)


#: the bytes each compress code stores (:func:`~rfmodel.trace.compressed_bytes`; NaN: unknown)
CODE_BYTES = compressed_bytes(np.arange(256))


@njit(cache=True)
def _pack_groups_rows(dst, code, code_bytes, packed, counts):  # pragma: no cover - compiled
    """:func:`_pack_groups` a row at a time: the simulator writes a row's non-empty destinations in column
    order, so the k-th of them is write k; a known size drives ``ceil(bytes / 4)`` groups (1 to
    :data:`GROUPS`; ``code_bytes``: :data:`CODE_BYTES`).  ``counts``: the values written, those of known
    size."""
    for i in range(dst.shape[0]):
        word = np.int64(0)
        k = 0
        for j in range(dst.shape[1]):
            if dst[i, j] == NONE:
                continue
            g = np.int64(UNKNOWN_GROUPS)
            c = code[i, j]
            if c != COMPRESS_UNKNOWN:
                g = np.int64(min(max(np.ceil(code_bytes[c] / (GROUP_BITS // 8)), 1.0), float(GROUPS)))
                counts[1] += 1
            counts[0] += 1
            word |= g << (6 * k)
            k += 1
        packed[i] = word


# design ints: bank header, then the counters, then one packed word per trace row
I_BDI = base.BANK_HEADER_LEN
I_GROUPS = I_BDI + 1  # write-driver groups driven
I_WRITES = I_BDI + 2  # values written (hook calls)
I_COMPRESSED = I_BDI + 3  # values BDI stored in fewer than 32 groups
I_UNKNOWN = I_BDI + 4  # values of unknown size (written uncompressed)
I_ROWS = I_BDI + 5
COUNTERS = {"groups": I_GROUPS, "values": I_WRITES, "compressed": I_COMPRESSED, "unknown_size": I_UNKNOWN}


@njit(cache=True)
def stt_write_hook(ints, floats, warp, row, k, reg, cycle):
    """Count the groups the value drives (BDI on: ``ceil(bytes / 4)``, unknown sizes 32; off: 32), then
    write it to its bank (the simulator's arbiter and write buffer do the timing)."""
    g = UNKNOWN_GROUPS
    if k < 4:
        g = (ints[I_ROWS + row] >> (6 * k)) & 63
    ints[I_WRITES] += 1
    if g == UNKNOWN_GROUPS or g == 0:
        ints[I_UNKNOWN] += 1
        g = GROUPS
    if ints[I_BDI] == 0:
        g = GROUPS
    elif g < GROUPS:
        ints[I_COMPRESSED] += 1
    ints[I_GROUPS] += g
    return base.standard_bank(ints, warp, reg)


STT_METRICS = mainrf.TIMING_METRICS + (
    "wb_writes",
    "wb_hits",
    "wb_hit_rate",
    "wb_full_stall_cycles",
    "wb_occupancy_mean",
    "wb_occupancy_max",
    "reads_behind_write",
    "groups_written",
    "groups_per_write",
    "bdi_compressed_share",
    "bdi_size_known_share",
)

#: the buffer's queueing terms (docs/models.md, "STT-RAM register file"): a scale on the blocking
#: probability, on the wait a consumer keeps behind its producer's direct write (in the latency), and on
#: the part of that wait its near consumers spend at the bank (the bank-stall count)
STT_CALIBRATION = {
    "wb_block_scale": (1.0, 0.1, 10.0),
    "wb_hold_scale": (1.0, 0.0, 2.0),
    "wb_busy_scale": (1.0, 0.3, 1.0),
    "wb_hit_scale": (1.0, 0.3, 2.0),
    "wb_near_stall": (1.0, 0.0, 2.0),
}


# ----------------------------------------------------------------------------------- profile tables
def bdi_write_stats(trace, rank=None, inputs=None) -> dict:
    """The profile's ``bdi_writes`` group of ``trace`` (registered below, built on first use):
    ``write_groups``, the mean number of 32-bit groups a BDI-compressed written warp register fills
    (``ceil(bytes / 4)``, at least 1; a value of unknown size counts as uncompressed, 32);
    ``write_size_known``, the share of written values whose compressed size the trace gives;
    ``write_compressed``, the share that fill fewer than 32 groups.  (The stream order and the SM's inputs do
    not matter.)"""
    full = WARP_VALUE_BYTES // 4
    written = trace.dst != NONE
    nw = int(written.sum())
    if nw == 0:
        return {"write_groups": float(full), "write_size_known": 0.0, "write_compressed": 0.0}
    code = trace.compress[written]
    known = code != COMPRESS_UNKNOWN
    groups = np.full(nw, full, dtype=np.float64)
    groups[known] = np.clip(np.ceil(compressed_bytes(code[known]) / 4.0), 1, full)
    return {
        "write_groups": float(groups.mean()),
        "write_size_known": float(known.mean()),
        "write_compressed": float((groups < full).mean()),
    }


BDI_WRITES = register_table_group(
    TableGroup("bdi_writes", ("write_groups", "write_size_known", "write_compressed"), bdi_write_stats)
)


@base.register
class Stt(mainrf.SlowBanks, base.Design):
    name = "stt"
    description = (
        "STT-RAM register file: BDI compression, group write drivers, centralized or per-bank write buffer"
    )
    Params = SttParams
    metrics = STT_METRICS
    calibration_params = {**INTERVAL_COEFFICIENTS, **STT_CALIBRATION}
    not_searched = ("codec_cycles",)  # the BDI codec's latency: more cycles never help
    #: the write buffer off, and one entry per bank, beside the default 16-entry centralized one, so that
    #: its queueing terms are identifiable
    calibration_points = ({"wb_entries": 0}, {"wb_entries": 1, "wb_shared": 0})
    supports_simulate = True
    needs_trace = True
    size_parameters = {"wb_entries": ("write_buffer",)}
    tech_options = ("wb_capacity_kb",)  # the write buffer costed at another capacity (the paper's 8 KB)
    #: the paper's configurations (section 4.1) and the per-bank buffer of Fig. 7 (``STT+WB-perbank``: one
    #: entry per bank, i.e. the paper's wb_perbank_16 on 16 banks; set ``wb_entries`` for others)
    presets = {
        "Base": {"main_cell": "sram-hp", "wb_entries": 0, "bdi": 0},
        "SRAM+BDI": {"main_cell": "sram-hp", "wb_entries": 0, "bdi": 1},
        "STT": {"main_cell": "stt-ram", "wb_entries": 0, "bdi": 0},
        "STT+WB": {"main_cell": "stt-ram", "wb_entries": 16, "wb_shared": 1, "bdi": 0},
        "STT+BDI": {"main_cell": "stt-ram", "wb_entries": 16, "wb_shared": 1, "bdi": 1},
        "STT+BDI+RE": {"main_cell": "stt-ram-relaxed", "wb_entries": 16, "wb_shared": 1, "bdi": 1},
        "STT+WB-perbank": {"main_cell": "stt-ram", "wb_entries": 1, "wb_shared": 0, "bdi": 0},
    }
    neutral = {"main_cell": "sram-hp", "wb_entries": 0, "bdi": 0, "codec_cycles": 0}

    # ------------------------------------------------------------------ simulator hooks
    def sim_setup(self, sm, p, options, trace=None, program=None):
        """The standard banks with the cell's read/write times, the simulator's write buffer, and a write
        hook that counts the groups each value drives (sizes from the trace's ``compress`` column)."""
        header = base.header_state(sm, options)
        if trace is None:
            raise RfmodelError("design 'stt' needs the trace being simulated (the written values' sizes)")
        packed, known = _pack_groups(trace)
        counters = np.zeros(I_ROWS - I_BDI, dtype=np.int64)
        counters[0] = p.bdi
        ints = np.concatenate([header, counters, packed])
        source = trace.attrs.get("trace_source", trace.attrs.get("source", "?"))
        info = {
            "bdi_sizes": f"trace compress column ({source}): {known:.1%} of the written values have a known "
            "compressed size; the others are written uncompressed (32 groups)"
        }
        return base.SimSetup(
            hooks=base.SimHooks(write=stt_write_hook),
            ints=ints,
            info=info,
            counters=dict(COUNTERS),
            write_buffer_entries=p.wb_entries,
            write_buffer_shared=bool(p.wb_shared),
            extra_result_latency=p.codec_cycles if p.bdi else 0,
            **self.bank_cycles(sm, p),
        )

    def sim_metrics(self, sm, p, setup, counts):
        reads, writes = float(counts["reads"]), float(counts["writes"])
        bank_r, bank_w = float(counts["bank_read_acc"]), float(counts["bank_write_acc"])
        hits = float(counts["wbuf_hits"])
        groups = float(counts["groups"])
        vals = float(counts["values"])
        bdi = float(p.bdi)
        wb_cycles = counts.get("wbuf_cycles", 0)
        return {
            **mainrf.bank_timing_metrics(sm, p),
            "wb_writes": float(counts["wbuf_writes"]),
            "wb_hits": hits,
            "wb_hit_rate": base.rate(hits, reads),
            "wb_full_stall_cycles": float(counts["wbuf_full_waits"]),
            "wb_occupancy_mean": base.rate(counts.get("wbuf_occupancy_sum", 0), wb_cycles),
            "wb_occupancy_max": float(counts["wbuf_max"]),
            "reads_behind_write": float(counts["reads_behind_write"]),
            "groups_written": groups,
            "groups_per_write": base.rate(groups, vals),
            "bdi_compressed_share": base.rate(counts["compressed"], vals),
            "bdi_size_known_share": base.rate(vals - counts["unknown_size"], vals),
            "events": {
                "rf_bank": (bank_r, bank_w),
                "rf_write_groups": (0.0, groups * bdi),
                "crossbar": (reads + writes, 0.0),
                "collector": (reads, reads),
                **wb_events(
                    float(counts["wbuf_drains"]) + hits,
                    float(counts["wbuf_writes"]),
                    base.rate(groups, vals) if bdi > 0 and vals > 0 else GROUPS,
                ),
                "bdi_compressor": (0.0, writes * bdi),
                "bdi_decompressor": ((bank_r + hits) * bdi, 0.0),
            },
        }

    # ------------------------------------------------------------------ analytic
    def analytic(self, ctx):
        """The interval model with the cell's read and write bank times; with a buffer, a write that finds
        its bank busy is absorbed unless the buffer blocks, waits behind the reads, and its near consumers
        read it from the buffer (docs/models.md, "STT-RAM register file")."""
        grid = {**ctx.grid, "main_cell": self.grid_param(ctx.sm, ctx.grid, "main_cell")}
        read_x, write_x = mainrf.grid_bank_timing(ctx.sm, grid)
        R, W = np.maximum(read_x, 1.0), np.maximum(write_x, 1.0)
        K = ctx.param("wb_entries")
        shared = ctx.param("wb_shared")
        bdi = ctx.param("bdi")
        codec = np.where(bdi > 0, ctx.param("codec_cycles"), 0.0)
        B = np.asarray(sm_param(ctx.sm, ctx.grid, "num_banks"), dtype=np.float64)
        prof = ctx.profile.need("bdi_writes")
        c = ctx.coef
        near = near_consumer_share(prof)
        m = ctx.model(Effects(bank_cycles=R, bank_write_cycles=W, extra_collect=codec))
        absorbed = p_block = p_first = hit = 0.0 * R
        for _ in range(3):  # the buffer's terms depend on the model's IPC: a short fixed point
            rs = 1.0 - hit
            absorbed, p_block, p_first = wb_queue(
                m["ipc"],
                prof.reads_per_instr * rs,
                prof.writes_per_instr,
                B,
                R,
                W,
                K,
                shared,
                c["wb_block_scale"],
                c["wb_busy_scale"],
            )
            hit = np.where(K > 0, np.clip(absorbed * near * c["wb_hit_scale"], 0.0, 0.95), 0.0)
            # a write that finds its bank free starts at once and one that finds it busy is buffered; a full
            # buffer drains before a waiting read, so the writes it blocks and those that fill it go first
            seen = wb_busy(
                m["ipc"], prof.reads_per_instr * rs, prof.writes_per_instr, B, R, W, c["wb_busy_scale"]
            )
            defer = np.where(K > 0, 1.0 - seen * p_first, 0.0)
            hold = (
                wb_hold(
                    m["ipc"],
                    prof.reads_per_instr * (1.0 - hit),
                    prof.writes_per_instr,
                    B,
                    R,
                    W,
                    K,
                    p_block,
                    c["wb_busy_scale"],
                )
                * c["wb_hold_scale"]
            )
            # the shared model scales the hold by the read share (a read served elsewhere does not wait); a
            # buffer hit's consumer is already out of ``hold``
            m = ctx.model(
                Effects(
                    bank_cycles=R,
                    bank_write_cycles=W,
                    write_hold=hold / (1.0 - hit),
                    extra_collect=codec,
                    read_share=1.0 - hit,
                    write_defer=defer,
                )
            )
        r, w = ctx.reads, ctx.writes
        bank_r = prof.reads_per_instr * (1.0 - hit)
        near_r = wb_near_reads(m["ipc"], bank_r, prof.writes_per_instr, B, R, W, K, near, c["wb_busy_scale"])
        # a near consumer of a value written straight to its bank waits there while the write holds it, and
        # the simulator counts that wait as bank stall cycles (the shared model's count is its queues')
        stall = m["conflict_per_instr"] + near_r * (W - 1.0) * c["wb_near_stall"]
        m = {**m, "conflict_per_instr": stall}
        groups = w * np.where(bdi > 0, prof.write_groups, GROUPS)
        wb_w = w * absorbed
        hits = r * hit
        nan = np.full(np.shape(R), np.nan)
        metrics = {
            **mainrf.timing_metrics(read_x, write_x),
            "wb_writes": wb_w,
            "wb_hits": hits,
            "wb_hit_rate": hit + 0 * R,
            # a write waits for a full buffer only where there is one (without, it waits for its bank)
            "wb_full_stall_cycles": np.where(
                K > 0,
                w
                * wb_busy(m["ipc"], bank_r, prof.writes_per_instr, B, R, W, c["wb_busy_scale"])
                * p_block
                * wb_slot_wait(W, B, K, shared),
                0.0,
            ),
            "wb_occupancy_mean": wb_occupancy(
                m["ipc"],
                prof.writes_per_instr,
                absorbed,
                wb_residence(m["ipc"], bank_r, prof.writes_per_instr, B, R, W),
                np.where(shared > 0, K, K * B),
            ),
            "wb_occupancy_max": nan,
            "reads_behind_write": ctx.n
            * wb_reads_behind_write(
                m["ipc"], bank_r, prof.writes_per_instr, B, R, W, K, near, c["wb_busy_scale"]
            ),
            "groups_written": groups,
            "groups_per_write": groups / np.maximum(w, 1e-12),
            "bdi_compressed_share": np.where(bdi > 0, prof.write_compressed, 0.0) + 0 * R,
            "bdi_size_known_share": prof.write_size_known + 0 * R,
        }
        events = {
            "rf_bank": (r - hits, w),
            "rf_write_groups": (0.0, groups * bdi),
            "crossbar": (r + w, 0.0),
            "collector": (r, r),
            **wb_events(wb_w + hits, wb_w, np.where(bdi > 0, prof.write_groups, GROUPS)),
            "bdi_compressor": (0.0, w * bdi),
            "bdi_decompressor": (r * bdi, 0.0),
        }
        return ctx.result(m, events=events, metrics=metrics)

    # ------------------------------------------------------------------ energy and area
    def structures(self, sm, grid, tech):
        """The SM's banks in the cell (a BDI write pays the row's fixed part in ``rf_bank`` and each driven
        group in ``rf_write_groups``), collectors, crossbar, the SRAM write buffer and the BDI codec."""
        from rfmodel.tech.structures import bdi_codec, tag_array, write_buffer

        g = {**grid, "main_cell": self.grid_param(sm, grid, "main_cell")}
        sm_grid = {k: v for k, v in g.items() if k in sm.to_dict() or k in ("collector_units", "main_cell")}
        bank, coll, xbar = mainrf.sm_structures(sm, sm_grid, tech)
        bdi = np.asarray(self.grid_param(sm, grid, "bdi"))
        fixed = bank.write_pj if bank.write_fixed_pj is None else bank.write_fixed_pj
        z = 0 * np.asarray(bank.write_pj)
        rf_bank = replace(bank, write_pj=_s(np.where(bdi > 0, fixed, bank.write_pj) + z))
        drivers = Structure(
            "rf_write_groups",
            0.0,
            _s(np.where(bdi > 0, bank.write_group_pj, 0.0) + z),
            0.0,
            0.0,
            provenance="one driven group of 32 write drivers (32 cells' bit energy of the bank's write); the "
            "paper's 64 transistors and 5-to-32 decoder are not costed: " + bank.provenance,
        )
        node = tech.get("node_nm", 45)
        cell = tech.get("cell", "sram-hp")
        cap = tech.get("wb_capacity_kb")  # None: the entries' 128 B each; the paper's model: 8 (KB, 8-way)
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float)) or not cap > 0):
            raise RfmodelError(
                f"tech['wb_capacity_kb'] = {cap!r}: give the write buffer's data capacity in "
                "KB (> 0), or leave it out for wb_entries x 128 B"
            )
        values = {
            "entries": self.grid_param(sm, grid, "wb_entries"),
            "shared": self.grid_param(sm, grid, "wb_shared"),
            "banks": sm_param(sm, grid, "num_banks"),
        }

        def wb_parts(entries, shared, banks):
            """(tags, data per 32-bit group) of the buffer: values are stored compressed, so a buffered
            value moves its groups through the data array and one entry's tags."""
            n = int(entries)
            if n == 0:
                none = "no write buffer (wb_entries = 0)"
                return (
                    Structure("write_buffer", 0.0, 0.0, 0.0, 0.0, copies=0, provenance=none),
                    Structure("write_buffer_data", 0.0, 0.0, 0.0, 0.0, copies=0, provenance=none),
                )
            copies = 1 if int(shared) else int(banks)
            cost = write_buffer(n, WARP_VALUE_BYTES * 8, node_nm=node, capacity_kb=cap, cell=cell)
            rows = n if cap is None else max(int(round(cap * 8192 / (WARP_VALUE_BYTES * 8))), 1)
            tags = tag_array(max(rows // WB_WAYS, 1), WB_WAYS, 16, node_nm=node, cell=cell)
            prov = "write_buffer: " + cost.provenance.get("read_pj", "")
            tag_s = Structure(
                "write_buffer",
                tags.read_pj,
                tags.write_pj,
                tags.leakage_mw,
                tags.area_mm2,
                copies=copies,
                provenance="tags of " + prov,
            )
            data_s = Structure(
                "write_buffer_data",
                (cost.read_pj - tags.read_pj) / GROUPS,
                (cost.write_pj - tags.write_pj) / GROUPS,
                cost.leakage_mw - tags.leakage_mw,
                cost.area_mm2 - tags.area_mm2,
                copies=copies,
                provenance=f"data array of {prov}, per 32-bit group (1/{GROUPS} of a row access)",
            )
            return tag_s, data_s

        def wb_at(entries, shared, banks):
            return wb_parts(entries, shared, banks)[0]

        def wb_data_at(entries, shared, banks):
            return wb_parts(entries, shared, banks)[1]

        codec = bdi_codec(WARP_VALUE_BYTES * 8, node_nm=node)

        def codec_at(part):
            def make(bdi):
                return codec[part].structure(f"bdi_{part}", copies=int(bdi))

            return structure_over_grid(f"bdi_{part}", {"bdi": bdi}, make)

        return [
            rf_bank,
            coll,
            xbar,
            drivers,
            structure_over_grid("write_buffer", values, wb_at),
            structure_over_grid("write_buffer_data", values, wb_data_at),
            codec_at("compressor"),
            codec_at("decompressor"),
        ]


#: the tag array's associativity in :func:`rfmodel.tech.structures.write_buffer`
WB_WAYS = 8


def wb_events(reads, writes, groups_per_value) -> dict:
    """The write buffer's events: one tag access per value read (drained or hit) or written, and the
    value's 32-bit groups through the data array (values are stored compressed; ``groups_per_value`` is
    32 without BDI, else the run's mean over written values)."""
    return {
        "write_buffer": (reads, writes),
        "write_buffer_data": (reads * groups_per_value, writes * groups_per_value),
    }


def _s(a):
    """A plain number for a 0-d array (the structures' convention)."""
    a = np.asarray(a, dtype=np.float64)
    return float(a) if a.ndim == 0 else a


def _bank_rates(ipc, reads_per_instr, writes_per_instr, banks, R, W):
    """Per bank: read and write arrivals per cycle, the reads' and writes' utilizations and the bank's."""
    ipc = np.asarray(ipc, dtype=np.float64)
    B = np.maximum(np.asarray(banks, dtype=np.float64), 1.0)
    lam_r = ipc * reads_per_instr / B
    lam_w = ipc * writes_per_instr / B
    u_r = np.clip(lam_r * R, 0.0, 0.98)
    u_w = np.clip(lam_w * W, 0.0, 0.999)
    return lam_r, lam_w, u_r, u_w, np.clip(u_r + u_w, 0.0, 0.999)


def wb_busy(ipc, reads_per_instr, writes_per_instr, banks, R, W, busy_scale=1.0):
    """The share of results that find their bank busy (or with older values buffered, which a
    work-conserving bank only has while busy): the bank's utilization ``rho`` times ``wb_busy_scale``."""
    rho = _bank_rates(ipc, reads_per_instr, writes_per_instr, banks, R, W)[4]
    return np.clip(rho * np.asarray(busy_scale, dtype=np.float64), 0.0, 1.0)


def wb_queue(ipc, reads_per_instr, writes_per_instr, banks, R, W, K, shared, block_scale=1.0, busy_scale=1.0):
    """``(absorbed, p_block, p_first)``: the share of writes the buffer absorbs (they find their bank busy
    and the buffer has room), the probability that such a write finds the buffer full, and the probability
    that it goes before a waiting read: blocked, or absorbed as the value that fills the buffer, which then
    drains before the reads (docs/models.md, "STT-RAM register file").  Per bank, reads (``R`` cycles each)
    and writes (``W``) arrive at ``ipc x per-instruction / banks``; a write finds its bank busy with
    probability ``seen`` (:func:`wb_busy`); a buffered value stays :func:`wb_residence` cycles ``T``, so a
    busy bank holds ``x = lam_w T`` values on average and all banks ``m = B lam_w seen T`` (Little), each
    count taken as geometric of ratio ``g``: per-bank buffers of ``K`` block with ``g^K``, ``g = x / (1 +
    x)``, a shared one with ``g = m / (1 + m)``; an absorbed write fills the buffer when it finds ``K - 1``
    values, with probability ``g^(K-1) (1 - g) / (1 - g^K)`` (1 for a buffer of one entry)."""
    lam_r, lam_w, _u_r, _u_w, _rho = _bank_rates(ipc, reads_per_instr, writes_per_instr, banks, R, W)
    B = np.maximum(np.asarray(banks, dtype=np.float64), 1.0)
    seen = wb_busy(ipc, reads_per_instr, writes_per_instr, banks, R, W, busy_scale)
    T = wb_residence(ipc, reads_per_instr, writes_per_instr, banks, R, W)
    K = np.asarray(K, dtype=np.float64)
    x = lam_w * T
    mq = B * x * seen
    g = np.where(np.asarray(shared) > 0, mq / (1.0 + mq), x / (1.0 + x))
    p_block = np.power(g, K) * np.asarray(block_scale)
    p_block = np.where(K > 0, np.clip(p_block, 0.0, 1.0), 1.0)
    absorbed = np.where(K > 0, seen * (1.0 - p_block), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        fills = np.power(g, K - 1.0) * (1.0 - g) / (1.0 - np.power(g, K))
    fills = np.where((K <= 1) | ~np.isfinite(fills), 1.0, np.clip(fills, 0.0, 1.0))
    p_first = p_block + (1.0 - p_block) * fills
    return absorbed, p_block, p_first


def wb_hold(ipc, reads_per_instr, writes_per_instr, banks, R, W, K, p_block, busy_scale=1.0):
    """Cycles a consumer waits behind its producer's write beyond a one-cycle write (the shared model's
    ``write_hold``): a value written directly (its bank was free) holds the bank ``W - 1`` more cycles; an
    absorbed one is read from the buffer (0); one that finds the buffer full waits about a drain, ``W``,
    then writes.  Without a buffer every write first waits for its bank, writes before reads: the
    non-preemptive priority wait ``W0 / (1 - u_w)``, ``W0 = (u_r R + u_w W) / 2``, where writes are slower
    than the baseline's one cycle (a one-cycle write's wait is the shared model's bank queue already, so the
    neutral point, an SRAM cell without a buffer, is the baseline)."""
    _lr, _lw, u_r, u_w, _rho = _bank_rates(ipc, reads_per_instr, writes_per_instr, banks, R, W)
    seen = wb_busy(ipc, reads_per_instr, writes_per_instr, banks, R, W, busy_scale)
    wait = (u_r * R + u_w * W) / 2.0 / (1.0 - u_w)
    buffered = (W - 1.0) * (1.0 - seen) + seen * np.asarray(p_block) * (2.0 * W - 1.0)
    return np.where(np.asarray(K) > 0, buffered, W - 1.0 + np.where(np.asarray(W) > 1.0, wait, 0.0))


def wb_slot_wait(W, banks, K, shared):
    """Cycles a result that finds the write buffer full waits for a slot: until the first of the banks whose
    values fill it starts its next drain, at the end of the write each is doing (a full buffer drains before
    the reads): the least of ``n`` residuals uniform on ``(0, W)``, ``W / (n + 1)``.  ``n``: the distinct
    banks among a full shared buffer's ``K`` values, ``B (1 - (1 - 1/B)^K)``; one, the result's own bank,
    for a buffer per bank."""
    B = np.maximum(np.asarray(banks, dtype=np.float64), 1.0)
    spread = B * (1.0 - np.power(1.0 - 1.0 / B, np.asarray(K, dtype=np.float64)))
    n = np.where(np.asarray(shared) > 0, spread, 1.0)
    return np.asarray(W, dtype=np.float64) / (np.maximum(n, 1.0) + 1.0)


def wb_near_reads(ipc, bank_reads_per_instr, writes_per_instr, banks, R, W, K, near, busy_scale=1.0):
    """Bank reads per instruction by the near consumers (``near``) of a value written straight to its bank
    (every value without a buffer; with one, those whose write found the bank free): they arrive while
    their producer's write holds the bank."""
    seen = wb_busy(ipc, bank_reads_per_instr, writes_per_instr, banks, R, W, busy_scale)
    direct = np.where(np.asarray(K) > 0, 1.0 - seen, 1.0)
    return bank_reads_per_instr * near * direct


def wb_reads_behind_write(ipc, bank_reads_per_instr, writes_per_instr, banks, R, W, K, near, busy_scale=1.0):
    """Bank reads per instruction that find their bank busy with a write: any read while a write holds the
    bank (the writes' utilization ``u_w``), and the near consumers of a value written straight to its bank
    (:func:`wb_near_reads`)."""
    _lr, _lw, _u_r, u_w, _rho = _bank_rates(ipc, bank_reads_per_instr, writes_per_instr, banks, R, W)
    args = (ipc, bank_reads_per_instr, writes_per_instr, banks, R, W, K, near, busy_scale)
    return bank_reads_per_instr * u_w + wb_near_reads(*args)


def wb_residence(ipc, reads_per_instr, writes_per_instr, banks, R, W):
    """Mean cycles a value stays in the write buffer (docs/models.md, "STT-RAM register file"): it was
    absorbed because its bank was busy with a write that began about a cycle earlier (an instruction's
    results come on consecutive cycles), so it waits ``W - 1``, then for the work queued ahead of it on its
    bank, reads first: ``W rho_w / (1 - rho)``."""
    lam_r, lam_w = _bank_rates(ipc, reads_per_instr, writes_per_instr, banks, R, W)[:2]
    rho = np.clip(lam_r * R + lam_w * W, 0.0, 0.999)
    rho_w = np.clip(lam_w * W / np.maximum(1.0 - lam_r * R, 1e-6), 0.0, 0.999)
    return (W - 1.0) + W * rho_w / (1.0 - rho)


def wb_occupancy(ipc, writes_per_instr, absorbed, residence, capacity):
    """Mean values in the buffer by Little's law: absorbed writes per cycle times their residence, at most
    the buffer's capacity (0 without a buffer)."""
    occ = np.asarray(ipc, dtype=np.float64) * writes_per_instr * absorbed * residence
    return np.clip(occ, 0.0, np.asarray(capacity, dtype=np.float64))
