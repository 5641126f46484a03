"""The main register file behind a design's caches: typed parameters, timing, banks, structures.

Shared by every design that keeps (part of) its registers in a main RF reached through a network (RFC and
the LTRF family) and by every design whose banks may be slower than one cycle (``main_rf_latency_x``: the
baseline, BOW, Malekeh, the operand reuse cache).  Compiled helpers for the simulator hooks:

* :func:`main_access` / :func:`main_bank`: per-bank serialization of main-RF accesses and the main RF's
  register-to-bank function;

:func:`sim_bank_cycles`: the SM's own banks' read and write cycles for the simulator's arbiter
(``SimSetup``); and :func:`hierarchy_structures`: main RF banks, RF cache, main-RF network and warp control
block for the energy and area accounting.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from numba import njit

from rfmodel.analytic.model import BANK_CYCLES, main_rf_timing, sm_param
from rfmodel.designs.base import DesignParams
from rfmodel.energy.accounting import Structure
from rfmodel.spec import param
from rfmodel.tech.array import CELLS, array_cost, cycles
from rfmodel.tech.interconnect import crossbar, crossbar_costs
from rfmodel.tech.structures import operand_collector

WARP_REG_BYTES = 128
#: source operands a collector unit buffers (one warp register each)
COLLECTOR_OPERANDS = 3
#: bank port configurations with technology data, by total ports per bank (the nearest is used)
BANK_PORTS_BY_COUNT = {1: "1rw", 2: "1r1w", 3: "2r1w"}


@dataclasses.dataclass(frozen=True)
class SlowBankParams(DesignParams):
    """The banks' memory cell and access time, for every design with register-file banks."""

    main_rf_latency_x: float = param(
        1.0,
        unit="x",
        bounds=(1.0, 64.0),
        doc="bank (main-RF) access time as a multiple of the SRAM reference's one cycle; > 1: slow banks, "
        "one access at a time",
    )
    main_cell: str = param(
        optional=True,
        type=str,
        choices=tuple(CELLS),
        doc="memory cell of the banks (main RF): its read and write times at the SM clock, relative to the "
        "SRAM-HP bank of the same shape, multiply main_rf_latency_x; its costs replace tech['cell']'s "
        "(left out: SRAM timing, the technology's cell for the costs)",
    )


@dataclasses.dataclass(frozen=True)
class MainRFParams(SlowBankParams):
    """The main-RF parameters RFC and the LTRF family share."""

    active_warps: int = param(8, bounds=(1, 64), doc="warps per scheduler in the two-level scheduler's pool")
    main_rf_banks: int = param(
        optional=True,
        type=int,
        bounds=(1, 4095),
        sm_default="num_banks",
        doc="single-ported main-RF banks (left out: the SM's num_banks)",
    )
    narrow_crossbar: int = param(0, choices=(0, 1), doc="1: a 4x narrower main-RF network")
    main_rf_bank_regs: int = param(
        1,
        bounds=(1, 256),
        engines=("simulate",),
        doc="consecutive registers per main-RF bank row (1: interleaved; 2: the LTRF paper's Figure 9)",
    )

    def banks(self, sm) -> int:
        """Main-RF banks: the parameter, else the SM's bank count."""
        return int(self.value_on("main_rf_banks", sm))


#: the node the cells' access times are taken at (the technology tables' reference node)
TIMING_NODE_NM = 45


@functools.lru_cache(maxsize=512)
def cell_timing(cell: str | None, bank_kb: float, width_bits: int, clock_mhz: float) -> tuple[float, float]:
    """``(read, write)``: cycles at ``clock_mhz`` of one access of a ``bank_kb`` bank of ``cell`` (rows of
    ``width_bits``), each divided by the read cycles of the SRAM-HP bank of the same shape (the reference of
    ``main_rf_latency_x``); ``(1, 1)`` for SRAM-HP or no cell.  From the technology layer at 45 nm."""
    if cell is None or cell == "sram-hp":
        return 1.0, 1.0
    kw = dict(ports="1rw", out_of_range="extrapolate", warn=False)
    ref = array_cost("sram-hp", TIMING_NODE_NM, bank_kb, width_bits, **kw)
    a = array_cost(cell, TIMING_NODE_NM, bank_kb, width_bits, **kw)
    r0 = float(cycles(ref.access_ns, clock_mhz))
    return float(cycles(a.access_ns, clock_mhz)) / r0, float(cycles(a.write_ns, clock_mhz)) / r0


#: beyond this many main-RF banks the network is a flattened butterfly instead of a crossbar (the Latency-
#: Tolerant Register File's Table 2: 8x banks behind a flattened butterfly)
CROSSBAR_MAX_BANKS = 64


def network_topology(banks: int) -> str:
    """The main-RF network over ``banks`` banks: ``crossbar`` up to :data:`CROSSBAR_MAX_BANKS`, else
    ``flattened-butterfly``."""
    return "crossbar" if int(banks) <= CROSSBAR_MAX_BANKS else "flattened-butterfly"


@functools.lru_cache(maxsize=512)
def _network_ns(cell: str, banks: int, bank_kb_: float, width_bits: int, outputs: int) -> float:
    """Latency (ns, at :data:`TIMING_NODE_NM`) of the main-RF network over ``banks`` banks of ``cell``,
    spanning their footprint (:func:`network_topology`)."""
    from rfmodel.tech.interconnect import network

    kw = dict(ports="1rw", out_of_range="extrapolate", warn=False)
    a = array_cost(cell, TIMING_NODE_NM, bank_kb_, width_bits, banks=int(banks), **kw)
    span = float(np.sqrt(float(a.total_area_mm2)))
    net = network(network_topology(banks), int(banks), int(outputs), width_bits, TIMING_NODE_NM, span)
    return float(net.latency_ns)


def network_cycles(sm, cell: str | None, banks: int) -> int:
    """Cycles the main-RF network adds to an access beyond the SM's own bank-to-collector crossbar (which
    the one-cycle SRAM reference includes): whole cycles at the SM clock of the network over ``banks``
    banks of ``cell`` (the SM's registers spread over them) less those of the crossbar over the SM's
    HP-SRAM banks, at least 0.  Both networks serve the SM's collector units."""
    outputs = max(int(sm.collectors.total), 1)
    return _network_cycles(
        int(sm.num_banks),
        float(sm.regs_per_sm),
        int(sm.bank_width_bits),
        outputs,
        float(sm.clock_mhz),
        cell or "sram-hp",
        int(banks),
    )


@functools.lru_cache(maxsize=4096)
def _network_cycles(num_banks, regs, width, outputs, clock, cell, banks) -> int:
    own = _network_ns("sram-hp", num_banks, _bank_kb(regs, num_banks), width, outputs)
    net = _network_ns(cell, banks, _bank_kb(regs, banks), width, outputs)
    return max(int(cycles(net, clock)) - int(cycles(own, clock)), 0)


def _over_cells(grid: dict, banks, default_banks, one) -> np.ndarray:
    """``one(cell, banks)`` at every point of the grid's ``main_cell`` and ``banks`` (once per distinct pair):
    an array of the broadcast shape."""
    cell = np.asarray(grid.get("main_cell", "sram-hp"), dtype=object)
    nb = np.asarray(default_banks if banks is None else banks)
    cell_b, nb_b = np.broadcast_arrays(cell, nb)
    keys = list(zip(cell_b.ravel().tolist(), nb_b.ravel().tolist(), strict=True))
    memo = {k: one(k[0] or None, k[1]) for k in dict.fromkeys(keys)}
    return np.array([memo[k] for k in keys], dtype=np.float64).reshape(*cell_b.shape, -1)


def grid_main_banks(sm, grid: dict, default=None):
    """The main RF's bank count over a grid, as the simulator takes it at each point
    (``MainRFParams.banks``): the grid's ``main_rf_banks`` where it gives them, else ``default`` (a design's
    own default, when it sets one), else the point's SM bank count (the grid's ``num_banks``, else the
    SM's)."""
    if "main_rf_banks" in grid:
        return grid["main_rf_banks"]
    if default is not None:
        return default
    field = MainRFParams.field_info("main_rf_banks").sm_default
    return grid.get(field, getattr(sm, field))


def grid_network_cycles(sm, grid: dict, banks=None) -> np.ndarray:
    """:func:`network_cycles` over a grid's ``main_cell`` and (``banks``) main-RF bank counts."""
    return _over_cells(grid, banks, sm.num_banks, lambda c, n: (network_cycles(sm, c, int(n)),))[..., 0]


def bank_kb(sm, banks=None) -> float:
    """Capacity of one bank when the SM's registers are spread over ``banks`` (default: the SM's)."""
    return _bank_kb(sm.regs_per_sm, banks or sm.num_banks)


def _bank_kb(regs, banks) -> float:
    return regs * 4.0 / float(banks) / 1024.0


def bank_timing(sm, p: SlowBankParams, banks=None) -> tuple[float, float]:
    """``(read_x, write_x)`` of the design's banks: ``main_rf_latency_x`` times the cell's relative read and
    write times (:func:`cell_timing`)."""
    r, w = cell_timing(p.main_cell, bank_kb(sm, banks), sm.bank_width_bits, float(sm.clock_mhz))
    return p.main_rf_latency_x * r, p.main_rf_latency_x * w


def grid_bank_timing(sm, grid: dict, banks=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bank_timing` over a grid: arrays of the read and write multiples for the grid's
    ``main_rf_latency_x``, ``main_cell`` and (``banks``) bank counts."""
    x = np.asarray(grid.get("main_rf_latency_x", 1.0), dtype=np.float64)
    rw = _over_cells(
        grid,
        banks,
        sm.num_banks,
        lambda c, n: cell_timing(c, bank_kb(sm, float(n)), sm.bank_width_bits, float(sm.clock_mhz)),
    )
    return x * rw[..., 0], x * rw[..., 1]


#: the design metrics of the banks' timing (every design with ``SlowBankParams``)
TIMING_METRICS = ("main_rf_read_cycles", "main_rf_write_cycles")
#: and of a main RF behind a network (RFC and the LTRF family): its extra cycles (:func:`network_cycles`)
NETWORK_METRICS = ("main_rf_network_cycles",)


def timing_metrics(read_x, write_x) -> dict:
    """The banks' read and write occupancy in whole cycles (the simulator's rounding) from their multiples."""
    r = np.maximum(np.round(np.asarray(read_x, dtype=np.float64) * BANK_CYCLES), 1.0)
    w = np.maximum(np.round(np.asarray(write_x, dtype=np.float64) * BANK_CYCLES), 1.0)
    return {"main_rf_read_cycles": r, "main_rf_write_cycles": w}


def bank_timing_metrics(sm, p: SlowBankParams, banks=None) -> dict:
    """:func:`timing_metrics` of the design's banks at one point of its parameters (:func:`bank_timing`)."""
    return timing_metrics(*bank_timing(sm, p, banks))


def bank_effects(ctx, banks=None) -> tuple[dict, dict]:
    """For a design's analytic terms: the ``Effects`` fields of its banks' timing over the grid
    (``bank_cycles``, ``bank_write_cycles``) and the timing metrics (:data:`TIMING_METRICS`)."""
    read_x, write_x = grid_bank_timing(ctx.sm, ctx.grid, banks)
    fields = {"bank_cycles": np.maximum(read_x, 1.0), "bank_write_cycles": np.maximum(write_x, 1.0)}
    return fields, timing_metrics(read_x, write_x)


def sim_main_rf_timing(p: MainRFParams, sm) -> tuple[int, int, int, int]:
    """(latency, read occupancy, extra arrival cycles, write occupancy) of one main-RF warp-register access
    in the simulator: :func:`rfmodel.analytic.model.main_rf_timing` (a read holds its bank ``max(lat,
    xfer)`` cycles, ``xfer`` 1, or 4 with ``narrow_crossbar``; the operand arrives ``xfer - 1`` plus the
    network's own extra cycles, :func:`network_cycles`, after the bank access) at the banks' read and write
    times rounded to whole cycles, as :func:`timing_metrics` rounds them."""
    banks = p.banks(sm)
    whole = bank_timing_metrics(sm, p, banks)
    grid = {"narrow_crossbar": p.narrow_crossbar}
    network = network_cycles(sm, p.main_cell, banks)
    lat, occ, xex = main_rf_timing(grid, whole["main_rf_read_cycles"] / BANK_CYCLES, network)
    wocc = main_rf_timing(grid, whole["main_rf_write_cycles"] / BANK_CYCLES)[1]
    return int(lat), int(occ), int(xex), int(wocc)


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


def sim_bank_cycles(sm, p: SlowBankParams) -> dict:
    """``SimSetup``'s timing of the SM's banks for a design's parameters: whole cycles one read access holds
    its bank and takes to deliver, and one write holds it (:func:`bank_timing`, rounded as
    :func:`timing_metrics`); the simulator's arbiter serves one access at a time per bank when either is
    above one."""
    m = bank_timing_metrics(sm, p)
    read, write = int(m["main_rf_read_cycles"]), int(m["main_rf_write_cycles"])
    return {"bank_read_cycles": read, "bank_write_cycles": write}


class SlowBanks:
    """A design whose SM banks are its main RF (:class:`SlowBankParams` set their speed): the simulator's
    arbiter takes their timing from :func:`sim_bank_cycles` (``Design.bank_cycles``).  Put it before
    ``Design`` among the bases."""

    def bank_cycles(self, sm, params: SlowBankParams) -> dict:
        return sim_bank_cycles(sm, params)


def sm_structures(sm, grid: dict, tech: dict) -> list:
    """The SM's RF banks, collector storage and the collector<->bank crossbar (rfmodel.tech models).

    ``tech``: ``cell`` (collectors, and banks unless said otherwise) and ``node_nm``, and ``out_of_range``
    (default 'extrapolate': bank shapes outside the CACTI/NVSim data, which grid sweeps reach, are
    extrapolated and their provenance says so).  The banks' cell: the grid's ``main_cell`` at each point,
    else ``tech['main_cell']``, else ``tech['cell']``.  Bank ports: the data's configuration with the same
    total port count (1, 2, 3+).
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
    bank_cell = np.asarray(grid.get("main_cell", tech.get("main_cell", cell)), dtype=object)
    shape = np.broadcast_shapes(
        np.shape(banks), np.shape(regs), np.shape(coll), np.shape(nports), np.shape(bank_cell)
    )
    banks_b = np.broadcast_to(banks, shape).astype(float)
    bank_kb = np.broadcast_to(regs * 4.0 / banks / 1024.0, shape).astype(float)
    nports_b = np.broadcast_to(nports, shape)
    cell_b = np.broadcast_to(bank_cell, shape)
    costs = {k: np.zeros(shape) for k in ("read", "write", "leak", "area", "group", "fixed")}
    provs = []
    for n, c in sorted({(int(n), str(c)) for n, c in zip(nports_b.ravel(), cell_b.ravel(), strict=True)}):
        label = BANK_PORTS_BY_COUNT[int(min(max(n, 1), 3))]
        sel = (nports_b == n) & (cell_b == c)
        b = array_cost(c, node, bank_kb[sel], width, ports=label, out_of_range=mode, warn=False)
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
        provs.append(f"{c}, {n} port(s) -> {label}: {b.provenance_summary}")
    # collector storage: COLLECTOR_OPERANDS warp registers per collector unit
    col = operand_collector(COLLECTOR_OPERANDS, sm.threads_per_warp * 32, node_nm=node, cell=cell)
    # crossbar: banks x collectors, over the banks' square footprint
    span = np.sqrt(banks_b * costs["area"])
    coll_b = np.broadcast_to(coll, shape)
    # the span rounded to 1e-9 mm, as a crossbar's key (each distinct value once, Python's rounding)
    values, inverse = np.unique(span, return_inverse=True)
    span_r = np.array([round(float(v), 9) for v in values])[inverse].reshape(shape)
    e, leak, area = crossbar_costs(
        banks_b.astype(np.int64), np.maximum(coll_b, 1).astype(np.int64), width, node, span_r
    )
    xb = {
        "e": np.broadcast_to(e, shape),
        "leak": np.broadcast_to(leak, shape),
        "area": np.broadcast_to(area, shape),
    }

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
            + crossbar(
                int(banks_b.flat[0]), int(max(coll_b.flat[0], 1)), width, node, float(span_r.flat[0])
            ).provenance["energy_pj_per_bit"],
        ),
    ]


def hierarchy_sim_metrics(sm, p: MainRFParams, counts) -> dict:
    """The simulator's metrics of a register cache over the main RF (RFC, the LTRF family) from the counters
    both keep: the main RF's bank timing and network cycles, the cache's hit rate and reads, the main RF's
    reads and writes, the warps' activations, and the events of the cache, the main RF's banks and network,
    the crossbar and the collectors."""
    hits, miss = float(counts["rfc_read_hits"]), float(counts["rfc_read_misses"])
    reads = float(counts["reads"])
    mr, mw = float(counts["main_rf_reads"]), float(counts["main_rf_writes"])
    return {
        **bank_timing_metrics(sm, p, p.banks(sm)),
        "main_rf_network_cycles": float(network_cycles(sm, p.main_cell, p.banks(sm))),
        "rf_cache_hit_rate": hits / (hits + miss) if hits + miss else 0.0,
        "rf_cache_reads": hits,
        "main_rf_reads": mr,
        "main_rf_writes": mw,
        "warp_activations": float(counts["warp_activations"]),
        "warp_deactivations": float(counts["warp_deactivations"]),
        "events": {
            "rf_cache": (float(counts["bank_read_acc"]), float(counts["bank_write_acc"])),
            "main_rf_bank": (mr, mw),
            "main_network": (mr + mw, 0.0),
            "crossbar": (reads + float(counts["writes"]), 0.0),
            "collector": (reads, reads),
        },
    }


def hierarchy_structures(sm, grid: dict, tech: dict, params: type[DesignParams], *, cache: str) -> list:
    """Main RF banks, collectors and crossbar (the SM's), RF cache, main-RF network and (LTRF) WCB.

    The main RF's banks (``main_rf_bank``) hold the SM's registers in ``main_rf_banks`` banks (default: the
    SM's ``num_banks``; their cell: the grid's ``main_cell``, else ``tech['main_cell']``, else
    ``tech['cell']``); the RF cache is SRAM (``tech['cell']``): ``cache="interval"`` (the LTRF family)
    holds ``N x active warps x schedulers`` warp registers in N banks (``N = regs_per_interval``) and adds
    the warp control block, ``cache="rfc"`` holds ``rfc_kb`` in the SM's bank count; the main RF reaches
    the cache through a crossbar (``narrow_crossbar``: 4x narrower) or, beyond 64 banks, a flattened
    butterfly.  Every cost follows the grid: the SM fields and the design's parameters (defaults from
    ``params``) at each point.
    """
    from rfmodel.energy.accounting import structure_over_grid
    from rfmodel.tech.interconnect import flattened_butterfly
    from rfmodel.tech.structures import register_cache, warp_control_block

    node = tech.get("node_nm", 45)
    cell = tech.get("cell", "sram-hp")
    sm_grid = {k: v for k, v in grid.items() if k in sm.to_dict() or k in ("collector_units", "main_cell")}
    d = params()
    main_banks = grid_main_banks(sm, grid, d.main_rf_banks)
    base = sm_structures(sm, sm_grid, tech)
    # the main RF: the SM's registers in main_rf_banks banks (their shape sets cost and timing alike)
    main = sm_structures(sm, {**sm_grid, "num_banks": main_banks}, tech)[0]
    width = sm.bank_width_bits
    size_name = "regs_per_interval" if cache == "interval" else "rfc_kb"
    values = {
        "active": grid.get("active_warps", d.active_warps),
        "size": grid.get(size_name, getattr(d, size_name)),
        "main_banks": main_banks,
        "narrow": grid.get("narrow_crossbar", d.narrow_crossbar),
        # the main RF's footprint: the network spans it
        "span": np.round(np.sqrt(np.asarray(main.area_mm2) * np.asarray(main.copies)), 9),
    }

    def geometry(size, active):
        if cache == "interval":
            n = int(size)
            return n, n * int(active) * sm.schedulers_per_sm * WARP_REG_BYTES / 1024.0
        return sm.num_banks, float(size)

    def cache_at(active, size, main_banks, narrow, span):
        banks, kb = geometry(size, active)
        return register_cache(kb, banks, 1024, node_nm=node, cell=cell).structure("rf_cache", copies=banks)

    def network_at(active, size, main_banks, narrow, span):
        banks, _kb = geometry(size, active)
        net_width = width // 4 if int(narrow) else width
        make = crossbar if network_topology(main_banks) == "crossbar" else flattened_butterfly
        net = make(int(main_banks), banks, net_width, node, float(span))
        st = net.structure("main_network")
        if net_width != width:  # a transfer moves one warp register in 4 flits of a quarter width
            st = dataclasses.replace(st, read_pj=net.transfer_pj * 4)
        return st

    out = [
        Structure(
            "main_rf_bank",
            **{
                k: getattr(main, k)
                for k in (
                    "read_pj",
                    "write_pj",
                    "leakage_mw",
                    "area_mm2",
                    "copies",
                    "provenance",
                    "write_group_pj",
                    "write_fixed_pj",
                    "capacity_bits",
                )
            },
        ),
        base[1],
        base[2],
        structure_over_grid("rf_cache", values, cache_at),
        structure_over_grid("main_network", values, network_at),
    ]
    if cache == "interval":
        wcb_s = warp_control_block(sm.warps_per_sm, 256, node_nm=node, cell=cell)
        out.append(wcb_s.structure("warp_control_block"))
    return out
