"""Cache-Emulated Register File: one set-associative array for the registers and the L1D's lines.

"Cache-Emulated Register File: An Integrated On-Chip Memory Architecture for High Performance
GPGPUs" (MICRO 2016): the SM's register file and L1D become one cache-structured array (128 KB,
4-way, 256 sets of 128-byte lines on a Fermi-like SM).  A register is located by *re-indexing*:
its warp slot and register number give a register address (the register file's own address
generation), shifted by the 128-byte block and given a per-SM prefix -- the reg-mem address, a line
of a reserved region of global memory.  Bits above the block offset select the tag bank (2 bits for
4 banks) and the set within it (6 bits); the rest is the tag.  A tagging stage between issue and the
register read looks the tags up (tag-bank conflicts serialize; the data follows a confirmed hit in
the next cycle).  Replacement:

* ``lru-fair``: exact LRU over registers and lines alike.  An evicted register that was written since
  it came in is spilled to L2 (a store of its reg-mem line); its next read refills it (a load), and
  the instruction waits for it.
* ``lru-prioritized``: entry states inactive / reg / cache / dirty.  Lines never evict registers;
  the compiler's dead-operand bits free a register's entry at its last read; dirty lines are written
  back to L2 when replaced.  Registers never spill (every set holds at most ``ways`` register
  addresses of the resident warps).

A load writes both its line (through the ``l1`` hook: the array replaces the SM's L1D) and its
destination register (through the write hook): two entries.  Stores that hit a line make it dirty
(write-back, absorbed: ``L1_ABSORB``); a store that misses is written through without
allocation.  docs/designs.md, "Cache-Emulated Register File", has our reading and its limits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rfmodel.analytic.banks import erlang_c
from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS
from rfmodel.analytic.engine import memory_pipeline
from rfmodel.analytic.model import Effects, resident_warps
from rfmodel.analytic.profile import TableGroup, register_table_group, stream_order
from rfmodel.analytic.stream import issue_schedule
from rfmodel.designs.base import (
    L1_ABSORB,
    L1_FILL,
    L1_STORE,
    MQ_LOAD,
    MQ_STORE,
    NEVER,
    Design,
    DesignParams,
    SimHooks,
    SimSetup,
    claim_bank,
    claim_words,
    rate,
    register,
    source_words,
)
from rfmodel.designs.mainrf import sm_structures
from rfmodel.errors import RfmodelError
from rfmodel.ir import L1D_CLASSES, OpClass
from rfmodel.spec import param
from rfmodel.trace import MAX_SRC, NONE, WARP_VALUE_BYTES, Trace

#: the paper's numbers: block (line) bytes, bits of the register address (1,024 warp registers), bits of
#: the per-SM prefix; a 32-bit reg-mem address = prefix (15) | register address (10) | block offset (7)
BLOCK_BYTES = WARP_VALUE_BYTES
BLOCK_BITS = 7
REG_ADDR_BITS = 10
PREFIX_BITS = 15
#: the prefix of this SM's reg-mem region (the top of the 32-bit space; one SM is simulated)
REG_PREFIX = (1 << PREFIX_BITS) - 1
#: line number (address >> 7) of register address 0
REG_LINE_BASE = REG_PREFIX << REG_ADDR_BITS

POLICIES = ("lru-fair", "lru-prioritized")

#: the paper's Table III (CACTI 6.5, node not stated): per bank, (read pJ, write pJ, leakage mW); the
#: integrated data array is the 128 KB register file's
TABLE_III = {
    "rf": (4.62, 5.97, 1.78),
    "l1d": (0.72, 0.61, 0.19),
    "l1d_tag": (0.47, 0.64, 0.20),
    "integrated": (4.62, 5.97, 1.78),
    "integrated_tag": (0.75, 0.78, 0.32),
    "l2_data": (5.52, 3.95, 2.66),
    "l2_tag": (1.05, 1.91, 0.80),
}
#: our reading of "per bank" (the paper gives no bank counts for the L1D and L2): a data array's access of a
#: 128-byte line or warp register drives 8 banks of 16 B (the paper's register-file organization: 32 banks,
#: 8 per warp register), a tag lookup one tag bank; these are the banks one access drives
TABLE_III_ACCESS_BANKS = {
    "rf": 8,
    "l1d": 8,
    "integrated": 8,
    "l2_data": 8,
    "l1d_tag": 1,
    "integrated_tag": 1,
    "l2_tag": 1,
}
#: bytes of one data bank (4 KB: the register file's 32 banks of 128 KB) for the leaking banks of a data
#: array of a given size; a tag array leaks as its tag banks (the L1D's: 1; the integrated: ``tag_banks``)
TABLE_III_BANK_BYTES = 4096
#: one L2 slice (Table I: 64 KB x 12)
L2_SLICE_BYTES = 64 * 1024


def table3_structure(
    name: str,
    row: str,
    *,
    capacity_bytes: float = 0.0,
    tag_banks: float = 1,
    copies: float = 1.0,
    area_mm2: float = 0.0,
    area_source: str = "",
):
    """A :class:`~rfmodel.energy.accounting.Structure` costed by the paper's Table III row ``row``: per
    access the banks one access drives (:data:`TABLE_III_ACCESS_BANKS`), leakage of its banks (a data array
    of ``capacity_bytes``: ``capacity / 4 KB`` banks, at least one; a tag array: ``tag_banks``).  The table
    gives no area: ``area_mm2`` comes from elsewhere (the technology layer's structures, named in
    ``area_source``), default none."""
    from rfmodel.energy.accounting import Structure

    rd, wr, lk = TABLE_III[row]
    k = TABLE_III_ACCESS_BANKS[row]
    tag = row.endswith("tag")
    banks = float(tag_banks) if tag else max(float(capacity_bytes) / TABLE_III_BANK_BYTES, 1.0)
    if capacity_bytes <= 0 and not tag:
        banks = 0.0
    area = f"; area {float(area_mm2):.4g} mm2 from {area_source}" if area_mm2 > 0 else "; no area"
    return Structure(
        name,
        k * rd,
        k * wr,
        lk * banks,
        float(area_mm2),
        copies=copies,
        capacity_bits=0.0,
        provenance=f"Table III of 'Cache-Emulated Register File' ({row}: {rd}/{wr} pJ, {lk} mW per bank; "
        f"{k} bank(s) per access, {banks:g} leaking){area}",
    )


def tag_area_mm2(size_bytes: float, ways: int, tech: dict, banks: int = 1) -> float:
    """Area of the tags of a cache of ``size_bytes`` in 128-byte lines and ``ways`` ways, in ``banks``
    banks, from the technology layer's tag array (``rfmodel.tech.structures.tag_array``: tags of ``32 - 7 -
    log2(sets)`` bits and 2 state bits) at the technology's node and cell; 0 without lines."""
    from rfmodel.tech.structures import tag_array

    lines = int(size_bytes) // BLOCK_BYTES
    if lines < 1:
        return 0.0
    ways = max(min(int(ways), lines), 1)
    sets = max(lines // ways, 1)
    banks = max(min(int(banks), sets), 1)
    bits = 32 - BLOCK_BITS - int(np.log2(sets))
    cost = tag_array(
        sets, ways, bits, node_nm=tech.get("node_nm", 45), banks=banks, cell=tech.get("cell", "sram-hp")
    )
    return float(cost.area_mm2) * banks


def l2_structures(sm) -> list:
    """The SM's share of the L2 (data and tag, Table III): the energy accounting counts its accesses
    (DRAM is not counted, as the paper's); its leakage is the SM's share of the chip's L2 banks."""
    share = sm.l2_size_bytes / max(sm.num_sms, 1)
    # one tag bank per 64 KB slice (Table I: 64 KB x 12), the SM's share of them
    return [
        table3_structure("l2_data", "l2_data", capacity_bytes=share),
        table3_structure("l2_tag", "l2_tag", tag_banks=share / L2_SLICE_BYTES),
    ]


def l2_events_sim(counts: dict, writes: float) -> dict:
    """L2 events of a run: every access of the L2 (``l2_acc``: misses, refills, write-throughs, spills,
    write-backs) reads its tags; ``writes`` of them write data (stores, spills, write-backs), the others
    read a line.  DRAM is not counted (every access is taken as an L2 hit, as the paper does)."""
    acc = float(counts["l2_acc"])
    w = min(float(writes), acc)
    return {"l2_data": (acc - w, w), "l2_tag": (acc, 0.0)}


def l2_events_model(ctx, hit, kept=0.0, extra_reads=0.0, extra_writes=0.0) -> dict:
    """The analytic L2 events: load lines that miss the L1D (``hit``: its hit rate), stores written
    through (every store line, less the share ``kept`` a write-back L1D keeps), plus a design's own."""
    prof = ctx.profile
    loads = ctx.n * (
        prof.load_lines_per_instr if prof.load_lines_per_instr is not None else prof.mem_lines_per_instr
    )
    stores = np.maximum(ctx.n * prof.mem_lines_per_instr - loads, 0.0)
    reads = loads * (1.0 - hit) + extra_reads
    writes = stores * (1.0 - kept) + extra_writes
    return {"l2_data": (reads, writes), "l2_tag": (reads + writes, 0.0 * reads)}


def storage_kb(lines: int, ways: int, *, address_bits: int = 32, state_bits: int = 2) -> dict:
    """Storage of a cache-structured array of ``lines`` 128-byte lines (section III-E): data, tags of
    ``address_bits - 7 - log2(sets)`` bits, state bits, in KB."""
    sets = lines // ways
    tag = address_bits - BLOCK_BITS - int(np.log2(sets))
    out = {
        "data_kb": lines * BLOCK_BYTES / 1024.0,
        "tag_kb": lines * tag / 8192.0,
        "state_kb": lines * state_bits / 8192.0,
        "tag_bits": tag,
    }
    out["total_kb"] = out["data_kb"] + out["tag_kb"] + out["state_kb"]
    return out


@dataclass(frozen=True)
class CerfParams(DesignParams, kind="design.cerf"):
    """The integrated array's parameters (defaults: the paper's Fermi-like proposal, Table I)."""

    ways: int = param(
        4, choices=(1, 2, 4, 8, 16), doc="associativity; sets = lines / ways (256 at 128 KB, 4-way)"
    )
    tag_banks: int = param(
        4,
        choices=(1, 2, 4, 8, 16),
        doc="tag banks (the paper's 4, one per 8 of its 32 narrow data banks); tag lookups of one bank "
        "serialize",
    )
    policy: str = param(
        "lru-fair", type=str, choices=POLICIES, doc="replacement: lru-fair or lru-prioritized"
    )
    tag_cycles: int = param(
        1, bounds=(0, 4), doc="cycles of the tagging stage between issue and the data read"
    )


# ----------------------------------------------------------------------------- re-indexing (pure)
def reg_address(warp: int, reg: int, regs_per_thread: int) -> int:
    """The register address of warp slot ``warp``'s register ``reg``: the register file's own address
    generation (the warp's base, ``warp x registers per thread``, plus the register), 0..1023 on a 128 KB
    register file."""
    return int(warp) * int(regs_per_thread) + int(reg)


def reg_mem_address(addr: int, prefix: int = REG_PREFIX) -> int:
    """The reg-mem byte address of register address ``addr``: shifted by the 128-byte block, under the
    per-SM prefix (32 bits in all)."""
    return (int(prefix) << (REG_ADDR_BITS + BLOCK_BITS)) | (int(addr) << BLOCK_BITS)


def locate(address: int, sets: int = 256, tag_banks: int = 4) -> tuple[int, int, int, int]:
    """``(tag bank, set within the bank, set, tag)`` of a byte address: the bits above the 128-byte
    block pick the tag bank (2 bits for 4 banks), the next ones the set within it (6 bits for 64 sets per
    bank), the rest is the tag; ``set = tag bank x sets per bank + set within the bank``."""
    line = int(address) >> BLOCK_BITS
    per_bank = sets // tag_banks
    tb = line % tag_banks
    sib = (line // tag_banks) % per_bank
    return tb, sib, tb * per_bank + sib, line // sets


def reindex(warp: int, reg: int, regs_per_thread: int, sets: int = 256, tag_banks: int = 4) -> dict:
    """Register re-indexing of (warp slot, register): its register address, reg-mem address, tag bank, set
    within the bank, set and tag."""
    a = reg_address(warp, reg, regs_per_thread)
    addr = reg_mem_address(a)
    tb, sib, s, tag = locate(addr, sets, tag_banks)
    return {"reg_addr": a, "address": addr, "tag_bank": tb, "bank_set": sib, "set": s, "tag": tag}


# ----------------------------------------------------------------------------- the design's state
# entry states (Fig. 6; REG_CLEAN: a refilled register whose L2 copy is current, LRU-fair only)
ST_INACTIVE, ST_REG, ST_CACHE, ST_DIRTY, ST_REG_CLEAN = 0, 1, 2, 3, 4
# where a register's value is
LOC_NONE, LOC_ARRAY, LOC_L2, LOC_PENDING, LOC_ARRIVED, LOC_DEAD = 0, 1, 2, 3, 4, 5

_HEADER = (
    "policy",
    "sets",
    "ways",
    "tag_banks",
    "per_bank",
    "regs",
    "nreg",
    "hit",
    "refill_est",
    "split",
    "nb",
    "scheds",
    "clock",
    "n_reg",
    "n_line",
    "last_t",
    "o_ent",
    "o_loc",
    "o_rows",
    "o_q",
    "o_claims",
    "o_seq",
    "n_warps",
    "o_pend",
    "q_next",
    "tb_shift",
)
H = {k: i for i, k in enumerate(_HEADER)}
(
    H_POLICY,
    H_SETS,
    H_WAYS,
    H_TB,
    H_PER_BANK,
    H_REGS,
    H_NREG,
    H_HIT,
    H_REFILL_EST,
    H_SPLIT,
    H_NB,
    H_SCHEDS,
    H_CLOCK,
    H_NREG_E,
    H_NLINE_E,
    H_LAST_T,
    H_O_ENT,
    H_O_LOC,
    H_O_ROWS,
    H_O_Q,
    H_O_CLAIMS,
    H_O_SEQ,
    H_NB_WARPS,
    H_O_PEND,
    H_Q_NEXT,
    H_TB_SHIFT,
) = range(len(_HEADER))
#: the bit of a row's second word (:func:`_row_words`) from which the source slots in use are counted
SLOTS_SHIFT = 32
# per (warp slot, register): its reads issued and not yet served, and a flag for a last read waiting on them
PEND_FREE = 1 << 40
PEND_MASK = PEND_FREE - 1

#: the design's counters (their names are the simulator result's counts)
COUNTER_NAMES = (
    "reg_reads",
    "reg_read_hits",
    "reg_writes",
    "reg_write_hits",
    "spills",
    "clean_reg_evictions",
    "refills",
    "refill_wait_cycles",
    "refills_at_operand",
    "line_loads",
    "line_hits",
    "line_misses",
    "store_hits",
    "store_misses",
    "line_bypass",
    "writebacks",
    "evict_rr",
    "evict_rc",
    "evict_cr",
    "evict_cc",
    "dead_frees",
    "exit_frees",
    "reads_unwritten",
    "reads_after_death",
    "queue_full",
    "reg_no_room",
    "line_fills",
    "reg_entry_cycles",
    "line_entry_cycles",
    "tag_line_lookups",
    "tag_claims_lost",
    "stale_last_reads",
    "deferred_frees",
)
C0 = len(_HEADER)
C = {k: C0 + i for i, k in enumerate(COUNTER_NAMES)}
(
    C_REG_READS,
    C_REG_READ_HITS,
    C_REG_WRITES,
    C_REG_WRITE_HITS,
    C_SPILLS,
    C_CLEAN_EVICT,
    C_REFILLS,
    C_REFILL_WAIT,
    C_REFILL_AT_OPERAND,
    C_LINE_LOADS,
    C_LINE_HITS,
    C_LINE_MISSES,
    C_STORE_HITS,
    C_STORE_MISSES,
    C_LINE_BYPASS,
    C_WRITEBACKS,
    C_RR,
    C_RC,
    C_CR,
    C_CC,
    C_DEAD_FREES,
    C_EXIT_FREES,
    C_READS_UNWRITTEN,
    C_READS_AFTER_DEATH,
    C_QUEUE_FULL,
    C_NO_ROOM,
    C_LINE_FILLS,
    C_REG_CYCLES,
    C_LINE_CYCLES,
    C_TAG_LINE_LOOKUPS,
    C_TAG_CLAIMS_LOST,
    C_STALE_LAST_READS,
    C_DEFERRED_FREES,
) = range(C0, C0 + len(COUNTER_NAMES))
#: design memory-request queue capacity (entries of (line, kind, done))
QUEUE_CAP = 4096
#: the stall reason of an instruction waiting for a refill
STALL_REASONS = ("register_refill",)


@njit(cache=True)
def _set_of(ints, line):
    tb = ints[H_TB]
    pb = ints[H_PER_BANK]
    sh = ints[H_TB_SHIFT]
    if sh >= 0 and line >= 0:  # powers of two: the same set without dividing
        return _mod(line, tb) * pb + _mod(line >> sh, pb)
    return (line % tb) * pb + (line // tb) % pb


@njit(cache=True)
def _find(ints, s, line, isreg):
    """The entry of ``line`` in set ``s`` (registers match reg states only, lines cache states), or -1."""
    e0 = ints[H_O_ENT]
    n = ints[H_SETS] * ints[H_WAYS]
    for w in range(ints[H_WAYS]):
        e = s * ints[H_WAYS] + w
        st = ints[e0 + n + e]
        if st == ST_INACTIVE or ints[e0 + e] != line:
            continue
        if (st == ST_REG or st == ST_REG_CLEAN) == isreg:
            return e
    return -1


@njit(cache=True)
def _touch(ints, e):
    n = ints[H_SETS] * ints[H_WAYS]
    ints[H_CLOCK] += 1
    ints[ints[H_O_ENT] + 2 * n + e] = ints[H_CLOCK]


@njit(cache=True)
def _occupancy(ints, t):
    """Entry-cycles of registers and lines up to ``t``."""
    if t > ints[H_LAST_T]:
        d = t - ints[H_LAST_T]
        ints[C_REG_CYCLES] += ints[H_NREG_E] * d
        ints[C_LINE_CYCLES] += ints[H_NLINE_E] * d
        ints[H_LAST_T] = t


@njit(cache=True)
def _harvest(ints, t):
    """Drop the queue's requests that completed by ``t``; a refill that completed marks its register
    arrived (it is installed when its instruction next asks).  Notes the first cycle at which another
    pass can drop one (``H_Q_NEXT``: the earliest completion kept, or the next cycle where a request is
    not sent yet: the simulator writes its completion at the end of the cycle it is sent)."""
    q = ints[H_O_Q]
    loc = ints[H_O_LOC]
    j = 0
    nxt = NEVER
    for i in range(ints[q]):
        e = q + 2 + 3 * i
        done = ints[e + 2]
        if done != -1 and done <= t:
            if ints[e + 1] == MQ_LOAD:
                a = ints[e] - REG_LINE_BASE
                if 0 <= a < ints[H_NREG] and ints[loc + a] == LOC_PENDING:
                    ints[loc + a] = LOC_ARRIVED
            continue
        nxt = min(nxt, t + 1 if done == -1 else done)
        if j != i:
            f = q + 2 + 3 * j
            ints[f], ints[f + 1], ints[f + 2] = ints[e], ints[e + 1], ints[e + 2]
        j += 1
    ints[q] = j
    ints[H_Q_NEXT] = nxt


@njit(cache=True)
def _enqueue(ints, line, kind, t):
    q = ints[H_O_Q]
    if ints[q] >= ints[q + 1]:
        _harvest(ints, t)
        if ints[q] >= ints[q + 1]:
            ints[C_QUEUE_FULL] += 1
            return False
    e = q + 2 + 3 * ints[q]
    ints[e], ints[e + 1], ints[e + 2] = line, kind, -1
    ints[q] += 1
    ints[H_Q_NEXT] = min(ints[H_Q_NEXT], t + 1)  # sent at the end of this cycle
    return True


@njit(cache=True)
def _evict(ints, e, newcomer_reg, t):
    """Empty entry ``e`` for a newcomer: a written register spills (store of its reg-mem line), a dirty
    line is written back; the interference counters note who replaced whom."""
    n = ints[H_SETS] * ints[H_WAYS]
    e0 = ints[H_O_ENT]
    st = ints[e0 + n + e]
    if st == ST_INACTIVE:
        return
    _occupancy(ints, t)
    line = ints[e0 + e]
    if st == ST_REG or st == ST_REG_CLEAN:
        ints[H_NREG_E] -= 1
        ints[C_RR if newcomer_reg else C_RC] += 1
        a = line - REG_LINE_BASE
        if st == ST_REG:
            _enqueue(ints, line, MQ_STORE, t)
            ints[C_SPILLS] += 1
        else:
            ints[C_CLEAN_EVICT] += 1
        ints[ints[H_O_LOC] + a] = LOC_L2
    else:
        ints[H_NLINE_E] -= 1
        ints[C_CR if newcomer_reg else C_CC] += 1
        if st == ST_DIRTY:
            _enqueue(ints, line, MQ_STORE, t)
            ints[C_WRITEBACKS] += 1
    ints[e0 + n + e] = ST_INACTIVE


@njit(cache=True)
def _allocate(ints, s, line, isreg, state, t):
    """An entry of set ``s`` for ``line`` in ``state``: an inactive way, else the LRU way the policy lets
    go (LRU-prioritized: lines only, and a line never takes a register's way); -1: not cached (a line
    under LRU-prioritized whose set holds only registers)."""
    n = ints[H_SETS] * ints[H_WAYS]
    e0 = ints[H_O_ENT]
    prio = ints[H_POLICY] == 1
    victim = -1
    best = 1 << 62
    for w in range(ints[H_WAYS]):
        e = s * ints[H_WAYS] + w
        st = ints[e0 + n + e]
        if st == ST_INACTIVE:
            victim = e
            break
        if prio and (st == ST_REG or st == ST_REG_CLEAN):
            continue
        if ints[e0 + 2 * n + e] < best:
            best = ints[e0 + 2 * n + e]
            victim = e
    if victim < 0:
        if not isreg:
            ints[C_LINE_BYPASS] += 1
            return -1
        ints[C_NO_ROOM] += 1  # cannot happen while the resident warps' registers fit (counted, tested)
        for w in range(ints[H_WAYS]):
            e = s * ints[H_WAYS] + w
            if ints[e0 + 2 * n + e] < best:
                best = ints[e0 + 2 * n + e]
                victim = e
    _evict(ints, victim, isreg, t)
    _occupancy(ints, t)
    ints[e0 + victim] = line
    ints[e0 + n + victim] = state
    ints[e0 + 3 * n + victim] = t
    if isreg:
        ints[H_NREG_E] += 1
    else:
        ints[H_NLINE_E] += 1
    _touch(ints, victim)
    return victim


@njit(cache=True)
def _bank(ints, warp, line):
    """The SM bank (arbiter index) of the tag bank of ``line``."""
    tb = _mod(line, ints[H_TB])
    nb = ints[H_NB]
    if ints[H_SPLIT] != 0:
        return _mod(warp, ints[H_SCHEDS]) * nb + _mod(tb, nb)
    return _mod(tb, nb)


@njit(cache=True, inline="always")
def _mod(x, n):
    """``x % n`` (a mask where ``n`` is a power of two and ``x`` not negative: no division)."""
    if x >= 0 and n > 0 and n & (n - 1) == 0:
        return x & (n - 1)
    return x % n


@njit(cache=True)
def _install(ints, a, t):
    """A refilled register enters the array (clean: its L2 copy is current)."""
    line = REG_LINE_BASE + a
    _allocate(ints, _set_of(ints, line), line, True, ST_REG_CLEAN, t)
    ints[ints[H_O_LOC] + a] = LOC_ARRAY


# ----------------------------------------------------------------------------------- profile tables
# The profile's ``shared`` group (registered below, built on first use): one stream of each instruction's
# register reads, L1D lines and register writes, read as one LRU stack (Che's approximation) and run through
# set-associative LRU arrays of registers and lines.  Its fields:
# * ``shared_distinct``, float64 [2, len(SHARED_WINDOWS)]: mean distinct warp registers (row 0) and L1D
#   lines (row 1) in a window of ``SHARED_WINDOWS[j]`` accesses of the stream that merges a warp's register
#   reads and writes with its instructions' lines (one LRU stack of registers and lines,
#   :func:`shared_stack`)
# * ``shared_misses``, float64 [4, len(SHARED_WINDOWS)]: the same stream read as an open one, where a first
#   access is of an entry never seen before or again within any window (the run keeps bringing new lines and
#   new warps' registers): mean distinct registers (row 0) and lines (row 1) in a window of
#   ``SHARED_WINDOWS[j]`` accesses, the register reads per instruction whose reuse time exceeds it (row 2:
#   the reads that miss an LRU array whose characteristic time is that window) and the register writes per
#   instruction whose dirty value is evicted there (row 3: a reuse time from the write to the next write, or
#   to the warp's last access, exceeds it; :func:`shared_stack`)
# * ``shared_sets``, float64 [k, 9]: the same stream run through set-associative LRU arrays of registers and
#   lines (:func:`shared_set_table`), one row per point ``(ways, lines, warps)`` (the array's ways, its
#   entries, the warps resident at that size): the register reads per instruction that find their register
#   evicted (refills, column 3), the written registers evicted dirty (spills, column 4), the hit rate of the
#   loads' lines (column 5) and of every L1D access, loads and stores (column 6), and the shares of the
#   array's entries registers (column 7) and lines (column 8) hold, averaged over the stream

#: window lengths (accesses) of the profile's ``shared_distinct``: 1 to 2^30, eight per octave
SHARED_WINDOWS = np.unique(np.round(2.0 ** (np.arange(0, 30 * 8 + 1) / 8.0)))


def _characteristic_time(distinct: np.ndarray, capacity) -> np.ndarray:
    """``log T`` of an LRU array of ``capacity`` entries on a stream whose mean distinct registers and lines
    in a window of ``SHARED_WINDOWS[j]`` accesses are ``distinct[0, j]`` and ``distinct[1, j]``: the window
    whose entries fill it, interpolated in ``log T`` (the longest window where every window's fit)."""
    tot = distinct[0] + distinct[1]
    # the window's distinct entries never fall as it grows; np.interp needs them increasing
    tot_m = np.maximum.accumulate(tot) + np.arange(len(tot)) * 1e-12
    return np.interp(np.asarray(capacity, dtype=np.float64), tot_m, np.log(SHARED_WINDOWS))


def shared_stack(trace: Trace, rank: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean distinct warp registers and L1D lines in a window of ``w`` accesses (``w`` in
    :data:`SHARED_WINDOWS`) of one stream holding both: each instruction's source reads, its L1D lines and
    its result writes, in :func:`stream_order`'s order (a register is ``(warp, register)``, a warp of a
    later CTA a new one).  Over the stream's accesses ``i`` with reuse time ``g_i`` (accesses since the
    previous access of the same register or line; ``i + 1`` for a first access) the mean distinct count of
    a class in a window of ``w`` is ``sum_i min(g_i, w) / n`` over that class's accesses: access ``i`` is
    the first of its entry in ``min(g_i, w)`` of the windows that hold it.  Returns that ``[2,
    len(windows)]`` table (the profile's ``shared_distinct``) and the open stream's
    (the profile's ``shared_misses``): the same counts with a first access's reuse time unbounded,
    the register reads per instruction whose reuse time exceeds ``w`` and the register writes per
    instruction whose value is spilled at that window."""
    src = np.asarray(trace.src, dtype=np.int64)
    dst = np.asarray(trace.dst, dtype=np.int64)
    n = trace.n_instrs
    wp = trace.warp_ptr.astype(np.int64)
    warp_of = np.repeat(np.arange(len(wp) - 1, dtype=np.int64), np.diff(wp))
    is_l1 = np.isin(trace.op, np.array(sorted(int(c) for c in L1D_CLASSES), dtype=np.int8))
    counts = np.where(is_l1, np.diff(trace.mem_ptr), 0)
    rows = np.repeat(is_l1, np.diff(trace.mem_ptr))
    lines = trace.mem_line[rows] // trace.line_bytes
    # per instruction: sources (slot 0), lines (1), destinations (2); registers as negative entry ids
    sr, sc = np.nonzero(src != NONE)
    dr, dc = np.nonzero(dst != NONE)
    lr = np.repeat(np.arange(n, dtype=np.int64), counts)
    instr = np.concatenate([sr, lr, dr])
    phase = np.concatenate([np.zeros(len(sr), np.int64), np.ones(len(lr), np.int64), np.full(len(dr), 2)])
    entry = np.concatenate(
        [
            -1 - (warp_of[sr] * 256 + src[sr, sc]),
            lines.astype(np.int64),
            -1 - (warp_of[dr] * 256 + dst[dr, dc]),
        ]
    )
    out = np.zeros((2, len(SHARED_WINDOWS)))
    opened = np.zeros((4, len(SHARED_WINDOWS)))
    m = len(instr)
    if m == 0:
        return out, opened
    base = np.lexsort((phase, instr))  # an instruction's accesses in phase order, then the stream's order
    order = base[stream_order(trace, instr[base], rank)]
    e = entry[order]
    pos = np.arange(m, dtype=np.int64)
    by = np.lexsort((pos, e))
    same = e[by][1:] == e[by][:-1]
    first = np.ones(m, dtype=np.bool_)
    first[by[1:][same]] = False
    gap = pos + 1
    gap[by[1:][same]] = pos[by[1:][same]] - pos[by[:-1][same]]
    is_reg = e < 0
    is_read = phase[order] == 0
    for k, sel in enumerate((is_reg, ~is_reg)):
        for table, known in ((out, sel), (opened, sel & ~first)):
            g = np.sort(gap[known]).astype(np.float64)
            below = np.searchsorted(g, SHARED_WINDOWS, side="right")  # gaps <= w count whole, the rest w
            csum = np.concatenate([[0.0], np.cumsum(g)])
            # the open stream's first accesses count w in every window: never seen within it
            beyond = len(g) - below + (int((sel & first).sum()) if table is opened else 0)
            table[k] = (csum[below] + SHARED_WINDOWS * beyond) / m
    g = np.sort(np.where(first, np.inf, gap)[is_read])
    opened[2] = (len(g) - np.searchsorted(g, SHARED_WINDOWS, side="right")) / max(n, 1)
    # a written register stays dirty until its next write: it is spilled once if any of the reuse times
    # from the write to that next write (or to its warp's last access: an exiting warp frees its
    # registers) exceeds the window; in entry order, the segments from each write to the next
    eb, on_reg = e[by], is_reg[by]
    nxt = np.concatenate([same, [False]])
    fwd = np.zeros(m)
    fwd[:-1][nxt[:-1]] = by[1:][same] - by[:-1][same]
    warp = np.where(on_reg, (-1 - eb) // 256, 0)
    last = np.zeros(int(warp.max()) + 1 if m else 1, dtype=np.int64)
    np.maximum.at(last, warp[on_reg], by[on_reg])
    fwd[~nxt] = last[warp[~nxt]] - by[~nxt]
    write = (phase[order][by] == 2) & on_reg
    starts = np.flatnonzero(write | np.concatenate([[True], ~same]))
    g = np.sort(np.maximum.reduceat(fwd, starts)[write[starts]])
    opened[3] = (len(g) - np.searchsorted(g, SHARED_WINDOWS, side="right")) / max(n, 1)
    return out, opened


#: associativities the shared set table simulates (the Cache-Emulated RF's choices)
SHARED_SET_WAYS = (1, 2, 4, 8, 16)
#: register-file sizes (32-bit registers per SM) at which the shared set table simulates the array, in
#: half-octave steps over the optimizer's range (``rfmodel.optimize.problem``), and the SM's own size
SHARED_SET_REGS = np.array([16384, 24576, 32768, 49152, 65536, 98304, 131072])
#: bytes of one entry of the shared array: a warp register (32 lanes of 4 bytes), and an L1D line
SHARED_ENTRY_BYTES = 128
#: kinds of the shared stream's accesses (:func:`shared_set_stream`)
SH_READ, SH_LOAD, SH_STORE, SH_WRITE = 0, 1, 2, 3


def shared_set_stream(trace: Trace, rank: np.ndarray | None, slots: int) -> tuple[np.ndarray, np.ndarray]:
    """The stream of :func:`shared_stack` (each instruction's source reads, its L1D lines, its result
    writes, in :func:`stream_order`'s order) as an array sees it: ``(kind, entry)`` per access, ``kind`` one
    of ``SH_READ``, ``SH_LOAD`` (loads and atomics), ``SH_STORE``, ``SH_WRITE``, ``entry`` a register's
    address ``slot x registers per thread + register`` (a warp takes slot ``warp mod slots``: a later CTA's
    warps take the slots of the earlier ones, as on the SM, where a new warp's registers are the same
    addresses) or a line's number."""
    src = np.asarray(trace.src, dtype=np.int64)
    dst = np.asarray(trace.dst, dtype=np.int64)
    n = trace.n_instrs
    top = max(int(src[src != NONE].max(initial=-1)), int(dst[dst != NONE].max(initial=-1))) + 1
    rpt = max(int(trace.regs_per_thread), top, 1)  # the addresses the design's simulator gives registers
    wp = trace.warp_ptr.astype(np.int64)
    slot = np.repeat(np.arange(len(wp) - 1, dtype=np.int64), np.diff(wp)) % max(int(slots), 1)
    is_l1 = np.isin(trace.op, np.array(sorted(int(c) for c in L1D_CLASSES), dtype=np.int8))
    counts = np.where(is_l1, np.diff(trace.mem_ptr), 0)
    rows = np.repeat(is_l1, np.diff(trace.mem_ptr))
    lines = (trace.mem_line[rows] // trace.line_bytes).astype(np.int64)
    sr, sc = np.nonzero(src != NONE)
    dr, dc = np.nonzero(dst != NONE)
    lr = np.repeat(np.arange(n, dtype=np.int64), counts)
    instr = np.concatenate([sr, lr, dr])
    phase = np.concatenate([np.zeros(len(sr), np.int64), np.ones(len(lr), np.int64), np.full(len(dr), 2)])
    store = np.isin(trace.op[lr], np.array([int(OpClass.ST_GLOBAL), int(OpClass.ST_LOCAL)], dtype=np.int8))
    kind = np.concatenate(
        [np.full(len(sr), SH_READ), np.where(store, SH_STORE, SH_LOAD), np.full(len(dr), SH_WRITE)]
    ).astype(np.int8)
    entry = np.concatenate([slot[sr] * rpt + src[sr, sc], lines, slot[dr] * rpt + dst[dr, dc]])
    if len(instr) == 0:
        return kind, entry
    base = np.lexsort((phase, instr))
    order = base[stream_order(trace, instr[base], rank)]
    return kind[order], entry[order]


@njit(cache=True)
def _shared_set_lru(kind, entry, sets, ways, n_regs):
    """``(refills, spills, load hits, loads, store hits, stores, register entries, line entries)`` of
    :func:`shared_set_stream`'s accesses (the entries held summed over them, each counted before its own
    access) on an LRU array of ``sets x ways`` entries (entry ``e`` in set ``e mod sets``) as the
    Cache-Emulated RF's LRU-fair array treats them: a read or write of a register not held takes an entry
    (a read of an evicted one is a refill, held clean; a write, or a read of a register never written,
    holds it dirty), a load's line takes one, a store hit makes its line dirty and a store miss takes none;
    the victim is a free way, else the least recently used, and a dirty register evicted is a spill."""
    n = sets * ways
    tag = np.full(n, -1, np.int64)
    is_reg = np.zeros(n, np.bool_)
    dirty = np.zeros(n, np.bool_)
    stamp = np.zeros(n, np.int64)
    where = np.zeros(n_regs, np.int8)  # 0: never held, 1: in the array, 2: evicted
    refills = spills = load_hits = loads = store_hits = stores = 0
    n_reg = n_line = 0
    reg_sum = line_sum = 0.0
    for i in range(len(kind)):
        k = kind[i]
        x = entry[i]
        reg_sum += n_reg
        line_sum += n_line
        reg = k == SH_READ or k == SH_WRITE
        s = x % sets
        hit = -1
        for w in range(ways):
            j = s * ways + w
            if tag[j] == x and is_reg[j] == reg:
                hit = j
                break
        if k == SH_LOAD:
            loads += 1
            load_hits += hit >= 0
        elif k == SH_STORE:
            stores += 1
            store_hits += hit >= 0
        if hit >= 0:
            stamp[hit] = i + 1
            if k == SH_WRITE or k == SH_STORE:
                dirty[hit] = True
            continue
        if k == SH_STORE:
            continue
        was = where[x] if reg else 0
        if k == SH_READ and was == 2:
            refills += 1
        v = -1
        oldest = np.int64(1) << 62
        for w in range(ways):
            j = s * ways + w
            if tag[j] < 0:
                v = j
                break
            if stamp[j] < oldest:
                oldest = stamp[j]
                v = j
        if tag[v] >= 0 and is_reg[v]:
            if dirty[v]:
                spills += 1
            where[tag[v]] = 2
            n_reg -= 1
        elif tag[v] >= 0:
            n_line -= 1
        tag[v] = x
        is_reg[v] = reg
        stamp[v] = i + 1
        dirty[v] = reg and (k == SH_WRITE or was == 0)
        if reg:
            where[x] = 1
            n_reg += 1
        else:
            n_line += 1
    return refills, spills, load_hits, loads, store_hits, stores, reg_sum, line_sum


def shared_set_columns(table, ways, lines, warps, cols) -> tuple | None:
    """Columns ``cols`` of a shared set table (the profile's ``shared_sets``) at ``(ways, lines,
    warps)`` (vectorized; ``None`` without a table): a tabulated point's own values, and elsewhere
    interpolated between the points of the same ``ways`` in ``lines / warps`` (the entries a resident
    warp's registers and lines have; of points with equal ``lines / warps`` the smallest array's).  A
    ``ways`` not tabulated takes the nearest tabulated one's (in log2)."""
    if table is None or len(table) == 0:
        return None
    t = np.asarray(table, dtype=np.float64)
    ways, lines, warps = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (ways, lines, warps)))
    x = lines / np.maximum(warps, 1e-9)
    tab_ways = np.unique(t[:, 0])
    dist = np.abs(np.log2(np.maximum(ways, 1.0))[..., None] - np.log2(tab_ways))
    near = tab_ways[np.argmin(dist, axis=-1)]
    out = [np.zeros(x.shape) for _ in cols]
    for w in tab_ways:
        rows = t[t[:, 0] == w]
        rows = rows[np.lexsort((rows[:, 1], rows[:, 1] / np.maximum(rows[:, 2], 1e-9)))]
        tx, first = np.unique(rows[:, 1] / np.maximum(rows[:, 2], 1e-9), return_index=True)
        own = (lines[..., None] == rows[:, 1]) & (warps[..., None] == rows[:, 2])
        has, at = own.any(axis=-1), own.argmax(axis=-1)
        on = near == w
        out = [
            np.where(on, np.where(has, rows[at, c], np.interp(x, tx, rows[first, c])), o)
            for c, o in zip(cols, out, strict=True)
        ]
    return tuple(out)


def shared_set_table(trace: Trace, points, ranks: dict) -> np.ndarray:
    """the profile's ``shared_sets`` of ``trace``: per point ``(ways, lines, warps)`` the refills and
    spills per instruction, the loads' and every access's hit rates (0 without any) and the shares of the
    entries registers and lines hold (averaged over the accesses) of :func:`_shared_set_lru` on
    :func:`shared_set_stream` in the order ``ranks[warps]`` (the SM's schedule at that occupancy) with
    ``warps`` warp slots, at ``lines`` entries; where the trace has fewer warps than ``warps``, with as many
    slots as it has at ``lines x slots / warps`` entries (the share of the array its warps would have)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    out = np.zeros((len(pts), 9))
    out[:, :3] = pts
    n = max(trace.n_instrs, 1)
    for warps in np.unique(pts[:, 2]):
        slots = max(min(int(warps), int(trace.n_warps)), 1)
        kind, entry = shared_set_stream(trace, ranks.get(float(warps)), slots)
        reg = (kind == SH_READ) | (kind == SH_WRITE)
        n_regs = int(entry[reg].max(initial=0)) + 1
        for i in np.flatnonzero(pts[:, 2] == warps):
            ways, lines = max(int(pts[i, 0]), 1), pts[i, 1]
            sets = max(int(round(lines * slots / warps / ways)), 1)
            refills, spills, lh, ld, sh, st, held_r, held_l = _shared_set_lru(kind, entry, sets, ways, n_regs)
            per = max(len(kind), 1) * sets * ways
            out[i, 3:] = (
                refills / n,
                spills / n,
                lh / max(ld, 1),
                (lh + sh) / max(ld + st, 1),
                held_r / per,
                held_l / per,
            )
    return out


def shared_footprint(prof, capacity) -> tuple[np.ndarray, np.ndarray] | None:
    """Registers and lines an LRU array of ``capacity`` entries holds on average when registers and
    lines share one LRU stack (vectorized; ``None`` without the profile's ``shared_distinct``).  The
    characteristic-time reading of LRU ("A unified approach to the performance analysis of caching
    systems", Che's approximation): an entry is held while it was accessed within the last ``T``
    accesses, ``T`` such that the distinct registers and lines of a window of ``T`` fill the array,
    ``D_reg(T) + D_line(T) = capacity`` (interpolated in ``log T``); the array holds ``D_reg(T)``
    registers.  When every window's entries fit, the longest window's are held."""
    if prof.shared_distinct is None and prof.source is not None:
        prof.need("shared")
    if prof.shared_distinct is None:
        return None
    d = np.asarray(prof.shared_distinct, dtype=np.float64)
    lt = _characteristic_time(d, capacity)
    logw = np.log(SHARED_WINDOWS)
    return np.interp(lt, logw, d[0]), np.interp(lt, logw, d[1])


def shared_refills(prof, capacity, max_regs=np.inf) -> tuple[np.ndarray, np.ndarray] | None:
    """``(refills, spills)`` per instruction of an LRU array of ``capacity`` entries when registers and
    lines share one LRU stack (vectorized; ``None`` without the profile's ``shared_misses``): the register
    reads whose reuse time exceeds the characteristic time ``T`` (:func:`shared_footprint`) of the open
    stream, whose first accesses bring entries never seen before (the run keeps bringing new lines and
    new warps' registers, so a streaming kernel's lines push registers out however short its sample),
    and the written values evicted dirty at that ``T``.  A window holds at most ``max_regs`` distinct
    registers (the stream's resident warps' allocated ones: the registers of a warp that has exited
    are freed, not held)."""
    if prof.shared_misses is None and prof.source is not None:
        prof.need("shared")
    if prof.shared_misses is None:
        return None
    d = np.asarray(prof.shared_misses, dtype=np.float64)
    held = np.stack([np.minimum(d[0], max_regs), d[1]])
    lt, logw = _characteristic_time(held, capacity), np.log(SHARED_WINDOWS)
    return np.interp(lt, logw, d[2]), np.interp(lt, logw, d[3])


def shared_set_refills(prof, ways, lines, warps) -> tuple[np.ndarray, np.ndarray] | None:
    """``(refills, spills)`` per instruction of a set-associative LRU array of ``lines`` entries in sets
    of ``ways`` shared by registers and lines while ``warps`` warps are resident (vectorized; ``None``
    without the profile's ``shared_sets``), from the table's simulations (:func:`shared_set_columns`)."""
    if prof.shared_sets is None and prof.source is not None:
        prof.need("shared")
    return shared_set_columns(prof.shared_sets, ways, lines, warps, (3, 4))


def shared_set_hits(prof, ways, lines, warps) -> tuple[np.ndarray, np.ndarray] | None:
    """``(every access, loads)``: the L1D hit rates of the same array (as :func:`shared_set_refills`):
    the lines the loads find there, with registers and lines taking each other's ways as LRU
    decides; the Monte-Carlo engine's ``hit_rate`` factor applies, :meth:`WorkloadProfile.scaled_hits`)."""
    if prof.shared_sets is None and prof.source is not None:
        prof.need("shared")
    return prof.scaled_hits(shared_set_columns(prof.shared_sets, ways, lines, warps, (6, 5)))


def shared_set_held(prof, ways, lines, warps) -> tuple[np.ndarray, np.ndarray] | None:
    """``(registers, lines)``: the shares of the same array's entries each holds, averaged over the
    stream from an empty array (as :func:`shared_set_refills`; the simulator's time-averaged
    ``cerf_reg_entries`` and ``cerf_line_entries`` over the array's entries)."""
    if prof.shared_sets is None and prof.source is not None:
        prof.need("shared")
    return shared_set_columns(prof.shared_sets, ways, lines, warps, (7, 8))


def shared_set_inputs(source) -> tuple:
    """``(trace, points, ranks)`` of a profile's shared set table (:func:`shared_set_table`) from the
    analytic engine's ``source`` of it (``rfmodel.analytic.engine.ProfileSource``).  The points: every
    associativity of ``SHARED_SET_WAYS`` at each register-file size of ``SHARED_SET_REGS`` and the SM's own,
    as an array of its registers' 128-byte entries, with the warps resident at that size (sizes where none is
    are left out).
    The stream is the SM's whole share where the profile's L1D hit tables came from it (``sched_share``: a
    sample of warps holds fewer distinct lines between two uses than the share, `rd_cfd_flux` on
    `fermi-gtx480` 0.88 of the loads hitting in the array from 30 sampled warps against the simulator's
    0.42 over the share's 204), else the sampled warps; ``ranks`` its order at each point's occupancy, the
    SM's schedule with that many warps' CTAs resident (``None``: no schedule)."""
    prof, sm = source.profile, source.sm
    trace = source._anchor_trace() if prof.attrs.get("sched_share") else source._trace_and_rank()[0]
    pts = []
    for regs in np.unique(np.append(SHARED_SET_REGS, sm.regs_per_sm)):
        warps = float(np.asarray(resident_warps(prof, sm, {"regs_per_sm": int(regs)})))
        if warps > 0:
            pts += [(ways, regs * 4.0 / SHARED_ENTRY_BYTES, warps) for ways in SHARED_SET_WAYS]
    points = np.array(pts, dtype=np.float64).reshape(-1, 3)
    wpc = max(int(prof.warps_per_cta), 1)
    ranks = {}
    for warps in np.unique(points[:, 2]):
        pipe = {**memory_pipeline(trace, sm), "resident_ctas": max(int(warps) // wpc, 1)}
        done = issue_schedule(trace, pipe)
        ranks[float(warps)] = None if done is None else done[0]
    return trace, points, ranks


def _shared_tables(trace: Trace, rank, inputs) -> dict:
    """The ``shared`` group's fields of ``trace`` in the stream order ``rank``: the open and the closed
    stacks (:func:`shared_stack`) and, with the SM's ``inputs`` (:func:`shared_set_inputs`), the set table
    (:func:`shared_set_table`; ``None`` without)."""
    distinct, misses = shared_stack(trace, rank)
    return {
        "shared_distinct": distinct,
        "shared_misses": misses,
        "shared_sets": None if inputs is None else shared_set_table(*inputs),
    }


SHARED_TABLES = register_table_group(
    TableGroup(
        "shared", ("shared_distinct", "shared_misses", "shared_sets"), _shared_tables, shared_set_inputs
    )
)


def _registers_in_set(ways, rho, n: int) -> np.ndarray:
    """``[n, ...]``: ``P(k registers in a set)`` for ``k < n``, ``k ~ Binomial(ways, rho)`` (one call for
    every ``k``: each value the one a call for that ``k`` alone gives)."""
    from scipy.stats import binom

    shape = np.broadcast_shapes(np.shape(ways), np.shape(rho))
    return binom.pmf(np.arange(n).reshape(n, *([1] * len(shape))), ways, rho)


def set_shared_hits(prof, lines, ways, reg_lines):
    """The array's L1D hit rates (of every access, of the loads) when registers hold ``reg_lines`` of its
    ``lines`` entries: registers spread over the sets (reg-mem addresses interleave them), so a set holds
    ``k ~ Binomial(ways, reg_lines / lines)`` registers and its lines have ``ways - k`` ways.  Each case
    is an LRU cache of ``sets x (ways - k)`` lines at the profile's stack distances of a cache whose store
    misses take no line (the array writes them through: ``nwa_stack_hist``); the hit rates are their
    mean.  (The remaining lines of one large cache would overstate the hits: a set full of registers
    caches nothing.)"""
    ways = np.asarray(ways, dtype=np.float64)
    lines = np.asarray(lines, dtype=np.float64)
    rho = np.clip(np.asarray(reg_lines, dtype=np.float64) / np.maximum(lines, 1.0), 0.0, 1.0)
    sets = lines / np.maximum(ways, 1.0)
    n = int(np.max(ways))
    pmf = _registers_in_set(ways, rho, n)
    # the profile's own hit rates take every k at once (a leading axis); a profile whose hit rates another
    # layer scales (a Monte-Carlo sample's, with leading axes of its own) is asked once per k, each hit
    # array the grid's shape
    own = getattr(prof.l1d_hit_rate, "__self__", None) is prof
    free_k = ways - np.arange(n).reshape(n, *([1] * sets.ndim))
    f_k = np.maximum(free_k, 1.0)
    out = []
    for loads in (False, True):
        if own:
            hits_k = prof.l1d_hit_rate(sets * f_k, f_k, loads=loads, write_allocate=False)
        h = 0.0
        for k in range(n):  # k registers in a set, and the set's free ways (none: it caches nothing)
            free = ways - k
            f = np.maximum(free, 1.0)
            hits = hits_k[k] if own else prof.l1d_hit_rate(sets * f, f, loads=loads, write_allocate=False)
            h = h + np.where(free > 0, pmf[k], 0.0) * hits
        out.append(h)
    return out[0], out[1]


def array_hits(prof, ways, lines, warps, reg_lines, prio):
    """The array's L1D hit rates ``(every access, loads)``.  LRU-fair: the profile's stream run through the
    array's sets while ``warps`` warps are resident (:func:`shared_set_hits`), where
    registers and lines take each other's ways as LRU decides (`rd_hotspot` on `volta-v100`: the loads hit
    0.684 in the simulator, 0.682 so, 0.121 with the registers holding ``reg_lines`` ways of their sets).
    LRU-prioritized (a line never takes a register's way), or without the profile's table: the lines
    have the ways the registers leave (:func:`set_shared_hits`)."""
    held = set_shared_hits(prof, lines, ways, reg_lines)
    fair = shared_set_hits(prof, ways, lines, warps)
    if fair is None:
        return held
    return tuple(np.where(prio, h, f) for h, f in zip(held, fair, strict=True))


# ----------------------------------------------------------------------------- hooks


def resident_footprint(prof, lines, warps, warps0):
    """``(registers, lines)`` one LRU stack shared by registers and data lines keeps in ``lines`` entries
    (:func:`shared_footprint`) while ``warps`` warps are resident, or ``None`` without the
    profile's merged stream.  The stream is the profile's, run with ``warps0`` warps resident (the SM's own
    occupancy): with ``warps`` of them each warp's share of the array is ``lines / warps``, so the stack is
    read at ``lines x warps0 / warps`` entries and its registers and lines scaled back by ``warps / warps0``.
    The registers held are at most the resident warps' allocated ones: a warp that exits frees its registers
    in the simulator, where the stream's stack keeps them until they age out (``pa_sad`` on `fermi-gtx480`:
    849 registers of 16 warps of 40 each; simulated 604, the L1D hit rate 0.49 against 0.99).  A profile
    that sampled fewer warps than the SM holds ran them all at once: its stream is read as ``n_warps``
    resident (``rd_hotspot`` on `volta-v100`: 32 sampled of 64 resident; 707 registers held where the
    simulator holds 1,608)."""
    warps = np.asarray(warps, dtype=np.float64)
    s = warps / max(min(float(warps0), float(prof.n_warps)), 1.0)
    fp = shared_footprint(prof, np.asarray(lines, dtype=np.float64) / np.maximum(s, 1e-9))
    if fp is None:
        return None
    regs = np.minimum(np.asarray(fp[0]) * s, warps * max(int(prof.regs_per_thread), 1))
    return regs, np.asarray(fp[1]) * s


def resident_refills(prof, lines, warps, warps0, ways=None):
    """``(refills, spills)`` per instruction, the register reads that miss and the written values evicted
    dirty in an array of ``lines`` entries in sets of ``ways`` shared by registers and lines while ``warps``
    warps are resident: the profile's stream run through the array's sets (its set table,
    :func:`shared_set_refills`: where registers fill a set's ways, each line that comes to
    it evicts one, which one LRU stack over the whole array never does).  Without that table (a profile
    built without the SM's geometry) or ``ways``, the fully associative reading of one LRU stack
    (:func:`shared_refills`; ``None`` without the profile's open stack), read, as
    :func:`resident_footprint` reads the held registers, at ``lines x warps0 / warps`` entries of the
    profile's stream (each warp's share of the array)."""
    if ways is not None:
        sets = shared_set_refills(prof, ways, lines, warps)
        if sets is not None:
            return sets
    w0 = max(min(float(warps0), float(prof.n_warps)), 1.0)
    s = np.asarray(warps, dtype=np.float64) / w0
    return shared_refills(
        prof,
        np.asarray(lines, dtype=np.float64) / np.maximum(s, 1e-9),
        w0 * max(int(prof.regs_per_thread), 1),
    )


def held_line_entries(prof, lines, reg_lines, prio, kept_lines=None, ways=None):
    """Time-averaged data lines the array holds (the simulator's ``cerf_line_entries``, the mean over the
    run's cycles).  In steady state the lines the registers leave (``lines - reg_lines``) hold no more than
    the workload keeps: under LRU-fair the lines of the one LRU stack registers and lines share
    (:func:`shared_footprint`), under LRU-prioritized every distinct line of the run.  The
    array starts empty and its lines come with the run's first loads, one per distinct loaded line ``D``
    (the loads' cold misses of the profile's line stream, scaled to the SM's share; a store miss takes no
    line): with the touches spread evenly over the run, ``L`` held lines are reached at ``L / D`` of it, so
    the time average is ``L (1 - L / 2D)`` (``D / 2`` when every line fits).  ``kept_lines``: the shared
    stack's lines at the point's occupancy (:func:`resident_footprint`; default the profile's stack at
    ``lines``).  With ``ways``, at most what the sets the lines map to hold (:func:`set_limited_lines`)."""
    lines = np.asarray(lines, dtype=np.float64)
    room = np.maximum(lines - np.asarray(reg_lines, dtype=np.float64), 0.0)
    # the lines that take an entry: the loads' (a store miss allocates none), each at its first load
    hist = np.asarray(prof.nwa_stack_hist[1], dtype=np.float64)
    # the sample's lines scaled to the SM's share, unless the hit tables came from the whole share (where
    # the profile scheduled it); per Monte-Carlo sample where the instruction count is drawn
    sampled = prof.attrs.get("sampled_instrs")
    scale = 1.0
    if sampled is not None and not prof.attrs.get("sched_share"):
        scale = np.asarray(prof.n_instrs, dtype=np.float64) / max(float(sampled), 1.0)
    distinct = (float(hist[-1]) if len(hist) else 0.0) * scale
    if kept_lines is None:
        fp = shared_footprint(prof, lines)
        kept_lines = None if fp is None else fp[1]
    kept = distinct + 0.0 * lines if kept_lines is None else np.minimum(np.asarray(kept_lines), distinct)
    steady = np.minimum(room, np.where(prio, distinct, kept))
    held = steady * (1.0 - steady / (2.0 * np.maximum(np.maximum(distinct, steady), 1e-9)))
    if ways is None or getattr(prof, "set_fill", None) is None:
        return held
    return np.minimum(held, set_limited_lines(prof, lines, ways, reg_lines) * scale)


def set_limited_lines(prof, lines, ways, reg_lines):
    """Time-averaged lines the array's sets can hold of the profile's loads (its ``set_fill`` table, set =
    line mod sets as the array indexes them): with ``k ~ Binomial(ways, reg_lines / lines)`` registers in
    a set (as :func:`set_shared_hits`), its lines have ``ways - k`` ways.  Set counts between the table's
    powers of two are interpolated in ``log2(sets)``.  Where the loads' lines fall in few sets
    (``pb_bicg_1`` on `volta-v100`: 88 of 512) this, not the lines the registers leave, bounds the lines
    held (simulated 147 of 2,048 entries; 152 here, 1,828 without the bound)."""
    from rfmodel.analytic.profile import SET_FILL_SETS, SET_FILL_WAYS

    ways = np.asarray(ways, dtype=np.float64)
    lines = np.asarray(lines, dtype=np.float64)
    rho = np.clip(np.asarray(reg_lines, dtype=np.float64) / np.maximum(lines, 1.0), 0.0, 1.0)
    x = np.clip(np.log2(np.maximum(lines / np.maximum(ways, 1.0), 1.0)), 0.0, len(SET_FILL_SETS) - 1.0)
    lo = np.minimum(np.floor(x).astype(np.int64), len(SET_FILL_SETS) - 2)
    f = x - lo
    table = np.asarray(prof.set_fill, dtype=np.float64)
    out = 0.0
    n = int(np.max(ways))
    pmf = _registers_in_set(ways, rho, n)
    for k in range(n):
        free = np.clip(ways - k, 0, SET_FILL_WAYS).astype(np.int64)
        held = np.where(free > 0, (1 - f) * table[lo, free - 1] + f * table[lo + 1, free - 1], 0.0)
        out = out + np.where(k < ways, pmf[k], 0.0) * held
    return out


@njit(cache=True)
def cerf_may_issue(ints, floats, warp, row, sched, n, cycle):
    """An instruction issues when each of its source registers is in the array: a spilled one is refilled
    first (a load of its reg-mem line through the MSHRs; the instruction waits: stall 1)."""
    q = ints[H_O_Q]
    if ints[q] > 0 and cycle >= ints[H_Q_NEXT]:  # nothing completed before then
        _harvest(ints, cycle)
    loc = ints[H_O_LOC]
    rows = ints[H_O_ROWS]
    R = ints[H_REGS]
    blocked = 0
    w0 = ints[rows + 2 * row]
    w1 = ints[rows + 2 * row + 1]
    for k in range((w1 >> SLOTS_SHIFT) & 15):
        reg = (w0 >> (8 * k)) & 255 if k < 8 else (w1 >> (8 * (k - 8))) & 255
        if reg == NONE:
            continue
        a = warp * R + reg
        x = ints[loc + a]
        if x == LOC_L2:
            if _enqueue(ints, REG_LINE_BASE + a, MQ_LOAD, cycle):
                ints[loc + a] = LOC_PENDING
                ints[C_REFILLS] += 1
                ints[loc + ints[H_NREG] + a] = cycle
            blocked = 1
        elif x == LOC_PENDING:
            blocked = 1
        elif x == LOC_ARRIVED:
            _install(ints, a, cycle)
            ints[C_REFILL_WAIT] += cycle - ints[loc + ints[H_NREG] + a]
    return blocked


# the write-order words (o_seq): per warp slot its write count, per (warp slot, register) the count at its
# last write, per trace row the warp's count when the row issued
@njit(cache=True)
def cerf_issued(ints, floats, warp, row, sched, n, cycle):
    """LRU-prioritized: remember how many writes the warp had made when this row issued, so that its marked
    last reads free only the values it read (a later instruction's write may land before an earlier
    instruction's read is served: the simulator does not hold writes behind earlier reads)."""
    if ints[H_POLICY] == 1:
        o = ints[H_O_SEQ]
        ints[o + ints[H_NB_WARPS] + ints[H_NREG] + row] = ints[o + warp]
        # its source reads are pending until served (a marked last read may be served before them)
        pend = ints[H_O_PEND] + warp * ints[H_REGS]
        rows = ints[H_O_ROWS]
        w0 = ints[rows + 2 * row]
        w1 = ints[rows + 2 * row + 1]
        for k in range((w1 >> SLOTS_SHIFT) & 15):
            reg = (w0 >> (8 * k)) & 255 if k < 8 else (w1 >> (8 * (k - 8))) & 255
            if reg != NONE:
                ints[pend + reg] += 1
    return 0


@njit(cache=True)
def _free_entry(ints, e, a, cycle):
    """A register's entry is inactive again (LRU-prioritized: its value is dead)."""
    _occupancy(ints, cycle)
    ints[ints[H_O_ENT] + ints[H_SETS] * ints[H_WAYS] + e] = ST_INACTIVE
    ints[H_NREG_E] -= 1
    ints[ints[H_O_LOC] + a] = LOC_DEAD
    ints[C_DEAD_FREES] += 1


@njit(cache=True)
def cerf_operand(ints, floats, warp, row, k, reg, cycle):
    """The tag lookup of a source register in its tag bank (the arbiter serializes a bank's lookups); a
    hit is read the next cycle (the tagging stage, ``extra_result_latency``).  LRU-prioritized: a read
    that carries its dead bit frees the entry."""
    if reg == NONE:
        return -1  # RZ (GPGPU-Sim mode): no array access
    loc = ints[H_O_LOC]
    a = warp * ints[H_REGS] + reg
    line = REG_LINE_BASE + a
    s = _set_of(ints, line)
    ints[C_REG_READS] += 1
    e = _find(ints, s, line, True)
    x = ints[loc + a]
    if e < 0 and x == LOC_ARRIVED:
        _install(ints, a, cycle)
        e = _find(ints, s, line, True)
    out = _bank(ints, warp, line)
    if e >= 0:
        ints[C_REG_READ_HITS] += 1
        _touch(ints, e)
    elif x == LOC_L2 or x == LOC_PENDING:
        # evicted after its instruction passed may_issue: refilled now, at an L2 hit's latency
        if x == LOC_L2:
            _enqueue(ints, line, MQ_LOAD, cycle)
            ints[C_REFILLS] += 1
        ints[C_REFILL_AT_OPERAND] += 1
        e = _allocate(ints, s, line, True, ST_REG_CLEAN, cycle)
        ints[loc + a] = LOC_ARRAY
        out = -(1 + ints[H_REFILL_EST])
    else:  # never written (or dead): nothing to read; the entry is taken as if written
        ints[C_READS_AFTER_DEATH if x == LOC_DEAD else C_READS_UNWRITTEN] += 1
        e = _allocate(ints, s, line, True, ST_REG, cycle)
        ints[loc + a] = LOC_ARRAY
    if ints[H_POLICY] == 1 and e >= 0:
        word = ints[ints[H_O_ROWS] + 2 * row + 1]
        o = ints[H_O_SEQ]
        pa = ints[H_O_PEND] + a
        left = (ints[pa] & PEND_MASK) - 1  # reads of this register issued and not yet served
        if left < 0:
            left = 0
        defer = ints[pa] & PEND_FREE
        rewritten = ints[o + ints[H_NB_WARPS] + a] > ints[o + ints[H_NB_WARPS] + ints[H_NREG] + row]
        if (word >> (16 + k)) & 1 and rewritten:  # a later write already replaced the value it read
            ints[C_STALE_LAST_READS] += 1
        elif (word >> (16 + k)) & 1:  # its last read in program order
            if left > 0:  # earlier instructions' reads still wait: free after the last of them
                defer = PEND_FREE
                ints[C_DEFERRED_FREES] += 1
            else:
                defer = 0
                _free_entry(ints, e, a, cycle)
        elif defer and left == 0:  # the last of the reads a marked last read waited for
            defer = 0
            _free_entry(ints, e, a, cycle)
        ints[pa] = left | defer
    return out


@njit(cache=True)
def cerf_write(ints, floats, warp, row, k, reg, cycle):
    """The tag lookup of a destination register: a hit overwrites, a miss takes an entry (evicting by the
    policy); the write goes through its tag bank."""
    if reg == NONE:
        return -1
    loc = ints[H_O_LOC]
    a = warp * ints[H_REGS] + reg
    line = REG_LINE_BASE + a
    s = _set_of(ints, line)
    ints[C_REG_WRITES] += 1
    if ints[H_POLICY] == 1:  # the write order (cerf_issued)
        o = ints[H_O_SEQ]
        ints[o + warp] += 1
        ints[o + ints[H_NB_WARPS] + a] = ints[o + warp]
        ints[ints[H_O_PEND] + a] &= PEND_MASK  # a new value: a free deferred for the old one is void
    e = _find(ints, s, line, True)
    if e >= 0:
        ints[C_REG_WRITE_HITS] += 1
        ints[ints[H_O_ENT] + ints[H_SETS] * ints[H_WAYS] + e] = ST_REG
        _touch(ints, e)
    else:
        _allocate(ints, s, line, True, ST_REG, cycle)
    ints[loc + a] = LOC_ARRAY  # a refill still in flight is stale now: _harvest ignores it
    return _bank(ints, warp, line)


@njit(cache=True)
def cerf_deactivate(ints, floats, warp, cta, sched, zero, cycle):
    """A finished warp: LRU-prioritized frees its registers' entries (their state bits say reg); LRU-fair
    has no such bits and lets them age out."""
    if ints[H_POLICY] != 1:
        return 0
    loc = ints[H_O_LOC]
    R = ints[H_REGS]
    n = ints[H_SETS] * ints[H_WAYS]
    for reg in range(R):
        a = warp * R + reg
        if ints[loc + a] == LOC_ARRAY:
            line = REG_LINE_BASE + a
            e = _find(ints, _set_of(ints, line), line, True)
            if e >= 0:
                _occupancy(ints, cycle)
                ints[ints[H_O_ENT] + n + e] = ST_INACTIVE
                ints[H_NREG_E] -= 1
                ints[C_EXIT_FREES] += 1
        ints[loc + a] = LOC_NONE
        ints[ints[H_O_SEQ] + ints[H_NB_WARPS] + a] = 0
        ints[ints[H_O_PEND] + a] = 0
    ints[ints[H_O_SEQ] + warp] = 0
    return 0


@njit(cache=True)
def cerf_l1(ints, floats, warp, line, kind, fill, cycle):
    """The array as the SM's L1D: a load hit is served at the L1D's hit latency (or when its fill
    arrives), a miss goes to L2 through the MSHRs and its line takes an entry at the fill; a store hit
    makes the line dirty (kept: written back when replaced), a store miss is written through."""
    if kind == L1_FILL:
        ints[C_LINE_FILLS] += 1
        e = _allocate(ints, _set_of(ints, line), line, False, ST_CACHE, cycle)
        if e >= 0:
            ints[ints[H_O_ENT] + 3 * ints[H_SETS] * ints[H_WAYS] + e] = fill  # ready when the fill arrives
        return 0
    # the line's lookup takes its tag bank in this cycle (before the register lookups queued there)
    ints[C_TAG_LINE_LOOKUPS] += 1
    if not claim_bank(ints, ints[H_O_CLAIMS], _bank(ints, warp, line), cycle):
        ints[C_TAG_CLAIMS_LOST] += 1
    s = _set_of(ints, line)
    e = _find(ints, s, line, False)
    n = ints[H_SETS] * ints[H_WAYS]
    if kind == L1_STORE:
        if e >= 0:
            ints[C_STORE_HITS] += 1
            ints[ints[H_O_ENT] + n + e] = ST_DIRTY
            _touch(ints, e)
            return L1_ABSORB
        ints[C_STORE_MISSES] += 1
        return -2
    ints[C_LINE_LOADS] += 1
    if e >= 0:
        ints[C_LINE_HITS] += 1
        _touch(ints, e)
        return max(ints[H_HIT], ints[ints[H_O_ENT] + 3 * n + e] - cycle)
    ints[C_LINE_MISSES] += 1
    return -2


HOOKS = SimHooks(
    operand=cerf_operand,
    write=cerf_write,
    may_issue=cerf_may_issue,
    issued=cerf_issued,
    deactivate=cerf_deactivate,
    l1=cerf_l1,
)


# ----------------------------------------------------------------------------- per-row tables
def _row_words(trace, dead) -> np.ndarray:
    """Two words per row (:func:`~rfmodel.designs.base.source_words`): the sources and their dead bits, and
    at bit 32 of word 1 the source slots up to the row's last register (the hooks read no further)."""
    out = source_words(trace, dead)
    used = np.asarray(trace.src) != NONE
    slots = np.where(used.any(axis=1), used.shape[1] - np.argmax(used[:, ::-1], axis=1), 0)
    out[:, 1] |= slots.astype(np.int64) << SLOTS_SHIFT
    return out.ravel()


def static_dead_bits(kernel) -> np.ndarray:
    """Per static instruction, bit k set when the k-th source register of the trace row is read for the last
    time (the compiler's liveness, conservative over paths: ``dead_source_mask(per="register")``)."""
    from rfmodel.compiler.liveness import dead_source_mask

    return dead_source_mask(kernel, per="register", max_src=MAX_SRC)


def _dead_rows(trace, program) -> tuple[np.ndarray, str]:
    if program is not None:
        sidx = np.asarray(trace.sidx, dtype=np.int64)
        dead = program[np.clip(sidx, 0, len(program) - 1)] * (sidx >= 0)
        return dead, "compiler liveness of the static kernel"
    from rfmodel.compiler.liveness import trace_dead_masks

    dead = trace_dead_masks(np.asarray(trace.warp_ptr, np.int64), trace.src, trace.dst)[0]
    return dead, "the trace's own last reads (no static kernel)"


def _log2(n: int) -> int:
    """``log2(n)`` of a power of two, else -1."""
    n = int(n)
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else -1


def geometry(sm, p: CerfParams) -> tuple[int, int, int]:
    """``(lines, sets, sets per tag bank)`` of the array on ``sm``: the register file's capacity in
    128-byte lines (``regs_per_sm x 4 B``)."""
    lines = sm.regs_per_sm * 4 // BLOCK_BYTES
    sets = lines // p.ways
    if sets < 1 or sets % p.tag_banks:
        raise RfmodelError(
            f"design 'cerf': {lines} lines in {p.ways} ways give {sets} sets, which {p.tag_banks} tag banks "
            "cannot share evenly"
        )
    return lines, sets, sets // p.tag_banks


def tag_conflicts(prof, sm, banks, ipc, line_lookups, pool_banks=None):
    """Register lookups per instruction that wait for their tag bank, and those of them a line lookup holds
    back (docs/models.md, "Cache-Emulated Register File"): ``r`` operand-slot lookups of an instruction and,
    at ``ipc`` instructions per cycle, every instruction's lookups spread over ``B`` tag banks of ``P``
    ports.  An instruction's own lookups collide in one bank (the profile's serialization table at the
    ``pool_banks`` they spread over, a sub-core's where each has its own, default ``B``: lookups beyond the
    first ``P`` of the busiest bank, ``E[max(ceil(M / P) - 1, 0)]``); a lookup also waits when
    the other instructions' accesses hold all ``P`` ports of its bank: with ``lam = ipc (r + w' + l) / B``
    of them a bank-cycle (``w'``: the result writes where they share the read ports, ``l``: line lookups),
    the queue of ``P`` servers' chance of waiting, Erlang's C at offered load ``lam`` (``lam`` itself at
    one port; at two about ``lam^2 / 2``, where the chance of one busy port, ``lam / P``, put the model's
    waits on `volta-v100`'s two-ported banks at 0.29 per instruction on `sgemm_tiled` against the
    simulator's 0.11).  Line lookups go first: a lookup is held back by one where its bank-cycle has a line
    lookup (``min(ipc l / B, 1)``) and the bank's other ``P - 1`` ports are taken too (the simulator counts
    a read its claims hold back only where the reads left the bank no free port: Erlang's C of ``P - 1``
    servers at ``lam``; 1 at one port).  Before, ``r min(ipc l / (B P), 1)``, the chance of a line
    lookup alone, gave the held-out records on `volta-v100` 0.013 such waits per instruction against the
    simulator's 0.016 in the mean but a median error of 22 % (rd_bfs_1 at 32 banks: 0.026 against 0.010);
    with the other port's chance, 16 %."""
    B = np.maximum(np.asarray(banks, dtype=np.float64), 1.0)
    P = max(float(sm.bank_read_ports + sm.bank_rw_ports), 1.0)
    r = np.asarray(prof.reads_per_instr, dtype=np.float64)
    w = 0.0 if sm.bank_write_ports > 0 else np.asarray(prof.writes_per_instr, dtype=np.float64)
    ipc = np.asarray(ipc, dtype=np.float64)
    load = ipc * (r + w + line_lookups) / B
    busy = erlang_c(P, load)
    pool = banks if pool_banks is None else pool_banks
    own = prof.ser_excess(np.asarray(pool, dtype=np.int64), P, slots=True)
    others = 1.0 if P <= 1.0 else erlang_c(P - 1.0, load)
    line = r * np.minimum(ipc * line_lookups / B, 1.0) * others
    return own + r * busy, line


# ----------------------------------------------------------------------------- the design
@register
class Cerf(Design):
    name = "cerf"
    description = (
        "Cache-Emulated Register File: registers and L1D lines in one set-associative array "
        "(LRU-fair or LRU-prioritized)"
    )
    Params = CerfParams
    metrics = (
        "cerf_spills",
        "cerf_refills",
        "tag_bank_conflicts",
        "cerf_l1d_hits",
        "cerf_l1d_misses",
        "cerf_reg_entries",
        "cerf_line_entries",
        "cerf_utilization",
        "tag_line_lookups",
        "tag_line_waits",
    )
    calibration_params = dict(INTERVAL_COEFFICIENTS)
    not_searched = ("tag_cycles",)  # the tag lookup's latency: more cycles never help
    stall_reasons = STALL_REASONS
    supports_simulate = True
    needs_trace = True
    compile_params = ()
    presets = {
        "CERF-fair": {"policy": "lru-fair"},
        "CERF-prioritized": {"policy": "lru-prioritized"},
        "CERF-2way": {"ways": 2},
        "CERF-8way": {"ways": 8},
    }

    def compile(self, kernel, params, sm):
        """The compiler pass: dead-operand bits per static instruction (LRU-prioritized's liveness bits)."""
        return static_dead_bits(kernel)

    # ------------------------------------------------------------------ simulator hooks
    def sim_setup(self, sm, p, options, trace=None, program=None):
        if trace is None:
            raise RfmodelError("design 'cerf' needs the trace being simulated (its rows' source registers)")
        if program is None:
            program = self.program_for(trace, p, sm)
        lines, sets, per_bank = geometry(sm, p)
        src = np.asarray(trace.src)
        top = int(src[src != NONE].max()) + 1 if np.any(src != NONE) else 1
        dst = np.asarray(trace.dst)
        top = max(top, int(dst[dst != NONE].max()) + 1 if np.any(dst != NONE) else 1)
        regs = max(int(trace.regs_per_thread), top)
        nreg = sm.warps_per_sm * regs
        dead, source = _dead_rows(trace, program)
        rows = _row_words(trace, dead)
        n = sets * p.ways
        split = sm.banks_split
        header = np.zeros(len(_HEADER) + len(COUNTER_NAMES), dtype=np.int64)
        o_ent = len(header)
        o_loc = o_ent + 4 * n
        o_rows = o_loc + 2 * nreg
        o_q = o_rows + len(rows)
        o_claims = o_q + 2 + 3 * QUEUE_CAP
        l1 = sm.l1d
        refill_est = (
            l1.hit_latency_cycles
            + sm.l2_hit_latency_cycles
            + int(np.ceil(BLOCK_BYTES / max(sm.mem_bw_bytes_per_cycle, 1e-9)))
        )
        vals = {
            H_POLICY: POLICIES.index(p.policy),
            H_SETS: sets,
            H_WAYS: p.ways,
            H_TB: p.tag_banks,
            H_PER_BANK: per_bank,
            H_REGS: regs,
            H_NREG: nreg,
            H_HIT: l1.hit_latency_cycles,
            H_REFILL_EST: refill_est,
            H_SPLIT: int(split),
            H_NB: sm.banks_per_subcore if split else sm.num_banks,
            H_SCHEDS: sm.schedulers_per_sm,
            H_O_ENT: o_ent,
            H_O_LOC: o_loc,
            H_O_ROWS: o_rows,
            H_O_Q: o_q,
            H_O_CLAIMS: o_claims,
            H_O_SEQ: o_claims + claim_words(sm.num_banks),
            H_NB_WARPS: sm.warps_per_sm,
            H_O_PEND: o_claims + claim_words(sm.num_banks) + sm.warps_per_sm + nreg + len(rows) // 2,
            H_TB_SHIFT: _log2(p.tag_banks) if _log2(per_bank) >= 0 else -1,
        }
        for i, v in vals.items():
            header[i] = v
        ents = np.zeros(4 * n, dtype=np.int64)
        queue = np.zeros(2 + 3 * QUEUE_CAP, dtype=np.int64)
        queue[1] = QUEUE_CAP
        claims = np.zeros(claim_words(sm.num_banks), dtype=np.int64)
        # the write order (cerf_issued): a count per warp slot, per (warp slot, register), per trace row
        seq = np.zeros(sm.warps_per_sm + nreg + len(rows) // 2, dtype=np.int64)
        pend = np.zeros(nreg, dtype=np.int64)  # reads pending per (warp slot, register) (cerf_issued)
        loc = np.zeros(2 * nreg, dtype=np.int64)
        ints = np.concatenate([header, ents, loc, rows, queue, claims, seq, pend])
        info = {
            "cerf_liveness": source if p.policy == "lru-prioritized" else "not used (lru-fair)",
            "cerf_geometry": f"{lines} lines of {BLOCK_BYTES} B, {sets} sets x {p.ways} ways, "
            f"{p.tag_banks} tag banks; register addresses warp x {regs} + register",
        }
        return SimSetup(
            hooks=HOOKS,
            ints=ints,
            stall_reasons=STALL_REASONS,
            counters=dict(C),
            mem_queue=o_q,
            bank_claims=o_claims,
            extra_result_latency=p.tag_cycles,
            info=info,
        )

    def sim_metrics(self, sm, p, setup, counts):
        ints = setup.ints
        cycles = max(float(counts["last_retire"] + 1 if counts["retired"] else 0), 1.0)
        # the entry-cycles after the last change: the counts at the end, to the run's last cycle
        tail = max(cycles - float(ints[H_LAST_T]), 0.0)
        reg_c = float(counts["reg_entry_cycles"]) + float(ints[H_NREG_E]) * tail
        line_c = float(counts["line_entry_cycles"]) + float(ints[H_NLINE_E]) * tail
        lines = float(geometry(sm, p)[0])
        reads, writes = float(counts["reads"]), float(counts["writes"])
        lh, lm = float(counts["line_hits"]), float(counts["line_misses"])
        sh, sm_ = float(counts["store_hits"]), float(counts["store_misses"])
        reg_r = float(counts["reg_read_hits"]) + float(counts["refills_at_operand"])
        reg_w = float(counts["reg_writes"])
        fills = float(counts["line_fills"]) - float(counts["line_bypass"])
        lookups = float(
            counts["reg_reads"]
            + counts["reg_writes"]
            + counts["line_loads"]
            + counts["store_hits"]
            + counts["store_misses"]
        )
        allocs = float(counts["reg_writes"] - counts["reg_write_hits"]) + fills + float(counts["refills"])
        return {
            "cerf_spills": float(counts["spills"]),
            "cerf_refills": float(counts["refills"]),
            "tag_bank_conflicts": float(counts["bank_conflicts"]),
            # the load/store unit's line lookups in the tag banks, and the register lookups they held back
            "tag_line_lookups": float(counts["tag_line_lookups"]),
            "tag_line_waits": float(counts["claim_waits"]),
            "cerf_l1d_hits": lh,
            "cerf_l1d_misses": lm,
            "cerf_reg_entries": reg_c / cycles,
            "cerf_line_entries": line_c / cycles,
            "cerf_utilization": (reg_c + line_c) / cycles / lines,
            # as the SM's L1D counts it: tag hits per access of loads and stores
            "l1d_hit_rate": rate(lh + sh, lh + lm + sh + sm_),
            "events": {
                "rf_bank": (reg_r + lh, reg_w + fills + sh + float(counts["refills"])),
                "crossbar": (reads + writes, 0.0),
                "collector": (reads, reads),
                "cerf_tag": (lookups, allocs),
                **l2_events_sim(
                    counts, float(counts["store_misses"] + counts["spills"] + counts["writebacks"])
                ),
            },
        }

    # ------------------------------------------------------------------ analytic
    def analytic(self, ctx):
        """The shared interval model with the tag banks as the register banks, the tagging stage as extra
        latency of every result, LRU-fair's refills (the register reads that find their register evicted
        in the profile's stream run through the array's sets, :func:`resident_refills`) each holding its
        instruction for an L2 hit's latency, and the array's L1D hit rates (:func:`array_hits`: under
        LRU-fair from the same run, under LRU-prioritized the lines have the ways the registers leave).
        The registers held (utilization) are the resident warps' live registers (the profile's
        ``live_regs``) under LRU-prioritized and, under LRU-fair, those one LRU stack shared with the lines
        keeps (:func:`shared_footprint` at the array's lines; docs/designs.md, "Cache-Emulated
        Register File")."""
        from rfmodel.analytic.model import AnalyticContext, resident_warps

        sm = ctx.sm
        ways = ctx.param("ways")
        tb = ctx.param("tag_banks")
        tag = ctx.param("tag_cycles")
        prio = np.asarray(self.grid_param(ctx.sm, ctx.grid, "policy"), dtype=object) == "lru-prioritized"
        prof = ctx.profile
        regs_sm = np.asarray(ctx.grid.get("regs_per_sm", sm.regs_per_sm), dtype=np.float64)
        lines = regs_sm * 4.0 / BLOCK_BYTES
        warps = np.asarray(ctx.resident_warps, dtype=np.float64)
        # LRU-prioritized frees a register's entry at its last read: the warps' live registers hold entries
        live = np.minimum(float(prof.live_regs), float(max(prof.regs_per_thread, 1)))
        # LRU-fair: the registers one LRU stack shared with the lines keeps (the profile's merged stream, at
        # the point's resident warps); without that table every allocated register of the resident warps
        fp = resident_footprint(prof, lines, warps, float(np.asarray(resident_warps(prof, sm, {}))))
        fair = warps * max(prof.regs_per_thread, 1) if fp is None else fp[0]
        reg_lines = np.minimum(np.where(prio, live * warps, fair), lines)
        data_lines = np.maximum(lines - reg_lines, ways)
        held = held_line_entries(prof, lines, reg_lines, prio, None if fp is None else fp[1], ways)
        # LRU-fair: the register reads that miss (refills per instruction), each holding its warp's
        # instruction at issue for an L2 hit's latency (Effects.issue_stall); the tagging stage delays each
        # result (the data access follows a confirmed hit), not collection
        rs = resident_refills(prof, lines, warps, float(np.asarray(resident_warps(prof, sm, {}))), ways)
        refill, spill = (0.0, 0.0) if rs is None else rs
        refill, spill = np.where(prio, 0.0, refill), np.where(prio, 0.0, spill)
        refill_lat = (
            sm.l1d.hit_latency_cycles
            + sm.l2_hit_latency_cycles
            + BLOCK_BYTES / max(sm.mem_bw_bytes_per_cycle, 1e-9)
        )
        nb = np.asarray(ctx.grid.get("num_banks", sm.num_banks))
        if sm.banks_split:  # each sub-core's tag banks among its own banks
            sched = np.asarray(ctx.grid.get("schedulers_per_sm", sm.schedulers_per_sm))
            pool_banks = np.minimum(tb, np.maximum(nb // sched, 1))
            banks = sched * pool_banks
        else:
            banks = pool_banks = np.minimum(tb, nb)
        grid = {**ctx.grid, "num_banks": banks}
        inner = AnalyticContext(prof, sm, grid, {})
        inner.coef = ctx.coef
        # the load/store unit's line lookups take their tag bank before the register lookups
        line_lookups = np.asarray(prof.mem_lines_per_instr, dtype=np.float64)
        hits = array_hits(prof, ways, lines, warps, reg_lines, prio)
        m = inner.model(
            Effects(
                extra_latency=tag,
                issue_stall=refill * refill_lat,
                l1d_lines=data_lines,
                l1d_assoc=ways,
                l1d_hits=hits,
                l1d_write_allocate=False,
                bank_claims=line_lookups,
            )
        )
        conflicts, line_waits = tag_conflicts(prof, sm, banks, m["ipc"], line_lookups, pool_banks)
        # the entries held over the run: under LRU-fair the stream's run through the array's sets (registers
        # and lines as LRU leaves them, from an empty array), else the registers and lines above
        reg_held, line_held = reg_lines, held
        shares = shared_set_held(prof, ways, lines, warps)
        if shares is not None:
            reg_held = np.where(prio, reg_lines, shares[0] * lines)
            line_held = np.where(prio, held, shares[1] * lines)
        r, w = ctx.reads, ctx.writes
        n = ctx.n
        mem = n * prof.mem_lines_per_instr
        hit = m["l1d_hit_rate"]
        # the loads' lines (each miss fills a line) and the stores' (a hit is kept dirty, a miss written
        # through without a line), as the simulator counts them
        ld = n * (
            prof.load_lines_per_instr if prof.load_lines_per_instr is not None else prof.mem_lines_per_instr
        )
        ld_hits = ld * np.broadcast_to(hits[1], np.shape(hit))
        st = np.maximum(mem - ld, 0.0)
        st_hits = np.clip(mem * hit - ld_hits, 0.0, st)
        spills, refills = n * spill, n * refill
        metrics = {
            "cerf_spills": spills,
            "cerf_refills": refills,
            "tag_bank_conflicts": n * conflicts,
            "tag_line_lookups": mem * np.ones(np.shape(hit)),
            "tag_line_waits": n * line_waits,
            "cerf_l1d_hits": ld_hits,
            "cerf_l1d_misses": ld - ld_hits,
            "cerf_reg_entries": reg_held,
            "cerf_line_entries": line_held,
            "cerf_utilization": np.minimum((reg_held + line_held) / lines, 1.0),
        }
        events = {
            "rf_bank": (r + ld_hits, w + (ld - ld_hits) + st_hits + refills),
            "crossbar": (r + w, 0.0),
            "collector": (r, r),
            "cerf_tag": (r + w + mem, w + (ld - ld_hits) + refills),
            **l2_events_model(
                ctx,
                ld_hits / np.maximum(ld, 1e-12),
                kept=st_hits / np.maximum(st, 1e-12),
                extra_reads=refills,
                extra_writes=spills,
            ),
        }
        return ctx.result(m, events=events, metrics=metrics)

    # ------------------------------------------------------------------ energy and area
    def structures(self, sm, grid, tech):
        """The data array as the SM's banks (the paper: the 128 KB register file's cells and banks), its
        collectors and crossbar, and the tag array (sets x ways tags of 32 - 7 - log2(sets) bits and 2 state
        bits, in ``tag_banks`` banks)."""
        from rfmodel.energy.accounting import structure_over_grid
        from rfmodel.tech.structures import tag_array

        keep = ("collector_units", "main_cell")
        sm_grid = {k: v for k, v in grid.items() if k in sm.to_dict() or k in keep}
        parts = sm_structures(sm, sm_grid, tech)
        node = tech.get("node_nm", 45)
        cell = tech.get("cell", "sram-hp")
        lines = sm.regs_per_sm * 4 // BLOCK_BYTES

        def tags(ways, tag_banks):
            sets = max(lines // int(ways), 1)
            bits = 32 - BLOCK_BITS - int(np.log2(sets))
            cost = tag_array(sets, int(ways), bits, node_nm=node, banks=int(tag_banks), cell=cell)
            # the cost is one tag bank's: its area, leakage and bits count once per bank
            return cost.structure("cerf_tag", copies=int(tag_banks))

        values = {
            "ways": self.grid_param(sm, grid, "ways"),
            "tag_banks": self.grid_param(sm, grid, "tag_banks"),
        }
        return [*parts, structure_over_grid("cerf_tag", values, tags), *l2_structures(sm)]
