"""The Latency-Tolerant Register File family: ``ltrf``, ``ltrf_plus``, ``ltrfconf``, ``strands``.

"Enabling High-Capacity, Latency-Tolerant, and Highly-Concurrent GPU Register Files via
Software/Hardware Cooperation" (the LTRF paper): a small register-file cache in front of a
large, slow main RF.  The compiler cuts the program into *register-intervals* (single-entry
regions whose working set fits ``regs_per_interval`` = N registers, default 16;
:mod:`rfmodel.compiler.reg_intervals`, Algorithms 1 and 2); a prefetch at each interval entry
brings the working set into the warp's private cache partition, so every register access
inside the interval hits the cache.  Our reading (also ``docs/designs.md``, "LTRF family"):

* **Cache.**  N banks, each holding one register per active warp; a warp's registers sit one
  per bank (16 KB = 16 banks x 8 warps x 128 B for 1 scheduler; we give each scheduler's
  ``active_warps`` a partition).  Cache reads and writes go through the simulator's banks and
  arbiter with the SM's bank mapping (the cache's port model is the baseline RF's).
* **Prefetch.**  At an interval entry the warp stalls (stall reason ``prefetch``) until the
  working-set registers not already cached have been read from the main RF.  Registers of
  the previous interval that are not in the new working set leave the partition; those
  written since they were fetched (and, for LTRF+, still live) are written back.  Main-RF
  bank ``(reg // main_rf_bank_regs + warp) mod main_rf_banks``; each access occupies its bank
  ``max(lat, xfer)`` cycles and arrives ``lat + xfer - 1`` cycles after it starts (``lat`` =
  ``main_rf_latency_x`` x :data:`~rfmodel.designs.rfc.BANK_CYCLES`, ``xfer`` 1 or 4 with
  ``narrow_crossbar``), so registers in one bank are fetched one after the other and the
  prefetch of ``k`` registers in its fullest bank, on idle banks, takes
  ``(k - 1) max(lat, xfer) + lat + xfer - 1`` cycles.  Prefetch bank conflicts are counted
  as the paper defines them (fullest bank load - 1).  Reads are issued before the
  write-backs of the same prefetch.
* **Two-level scheduler** (``active_warps`` per scheduler, default 8).  A warp leaving the
  pool (its next instruction waits on a long-latency result or a barrier) writes back its
  partition -- LTRF: the whole working set, as the paper says; LTRF+: only live registers --
  and frees it; when it re-enters, the current interval's working set (LTRF+: its live
  registers) is fetched again before it may issue.  A result arriving while its warp is out
  of the pool, or for a register not in the partition, is written to the main RF.
* **LTRF+** (``ltrf_plus``; the paper's "LTRF+"): liveness bits.  A register becomes live
  when written and dead when an instruction reads it for the last time (its dead-operand
  bit).  Only live registers are written back and fetched; a dead working-set register gets
  a slot only.  Dead-operand bits come from the trace (the exact next-use), the upper bound
  of the paper's conservative compile-time bits.
* **LTRFconf**: the renumbering pass (:func:`rfmodel.compiler.renumber.renumber`, the
  Interval Conflict Graph coloured with ``main_rf_banks`` colours, the bank of register ``r``
  being ``(r // main_rf_bank_regs) mod main_rf_banks``, registers up to the kernel's register
  count) renames the registers; the design then runs the renumbered program: every operand
  and result of a trace row is looked up in a per-static-instruction map, so the cache state,
  the prefetch sets, write-backs and main-RF banks all use the new registers (the simulator's
  scoreboard keeps the trace's, which have the same dependences).  The pass minimises the
  static sum of the intervals' conflicts; the simulator counts them per executed prefetch.
* **strands**: prefetch regions are strands (:func:`rfmodel.compiler.reg_intervals.strands`,
  cut at consumers of long-latency results and at backward branches; the "LTRF (strand)"
  comparison point of the paper's section 7.6).

Intervals come from the static kernel when the trace names one we can load (built-in SASS
kernels, synthetic presets: ``trace.attrs['kernel_source']``) and its instructions match the
trace; otherwise they are formed on each warp's dynamic stream by the same rules (greedy:
an interval ends where the working set would exceed N -- the paper's "optimal" interval of
Table 4; strands also end at a long-latency consumer or a backward jump of the static
index).  Renumbering needs the static kernel; without one ``ltrfconf`` equals ``ltrf``
(``SimSetup.interval_source`` says which was used, ``SimSetup.renumbered`` whether the
renumbering applied).  Kernels built in memory are made known with :func:`register_kernel`.
"""

from __future__ import annotations

import functools

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
from rfmodel.designs.rfc import (
    MAIN_RF_PARAMS,
    main_access,
    main_bank,
    main_rf_timing,
    resolve_params,
    two_level,
)
from rfmodel.errors import RfmodelError
from rfmodel.workload.ir import OpClass
from rfmodel.workload.trace import NONE

LONG_LATENCY_OPS = (int(OpClass.LD_GLOBAL), int(OpClass.LD_LOCAL), int(OpClass.ATOMIC))

# ----------------------------------------------------------------------------- state layout
# ints: [0:6] bank header | parameters | counters | warps | banks | rows | interval CSR
(P_LAT, P_OCC, P_XEX, P_MB, P_PLUS, P_TWO, P_W, P_OFF_WARP, P_OFF_BANK, P_OFF_ROW, P_OFF_IVP,
 P_OFF_IVE, P_G, P_OFF_MAP, P_MAP_SRC) = range(6, 21)
COUNTERS = (
    "rfc_read_hits",
    "rfc_read_misses",
    "rfc_writes",
    "main_rf_reads",
    "main_rf_writes",
    "prefetches",
    "prefetch_cycles",
    "prefetch_regs",
    "prefetch_bank_conflicts",
    "prefetches_with_conflict",
    "warp_activations",
    "warp_deactivations",
    "dynamic_intervals",
    "refetches",
    "static_intervals",
    "static_interval_instrs",
    "static_prefetch_conflicts",
)
P_C0 = 21
(C_HIT, C_MISS, C_CW, C_MR, C_MW, C_PF, C_PFCYC, C_PFREG, C_PFCONF, C_PFCONF1, C_ACT, C_DEACT, C_DYN,
 C_REFETCH, C_SIV, C_SIVI, C_SCONF) = range(P_C0, P_C0 + len(COUNTERS))
#: per-warp block
WB = 18
W_IV, W_PFROW, W_READY, W_IN, W_CACHED, W_DIRTY, W_LIVE, W_LAST, W_FENCE = 0, 1, 2, 3, 4, 8, 12, 16, 17
#: an interval entry word: reg | bank << 8 | live-in << 20
E_BANK_SHIFT, E_LIVE_SHIFT = 8, 20
#: a row word: dead-operand bits (0..15) | prefetched interval + 1 (16..39) | static instruction + 1 (40..)
ROW_IV_SHIFT, ROW_IV_MASK, ROW_SIDX_SHIFT = 16, (1 << 24) - 1, 40


@njit(cache=True)
def _reg_of(ints, row, slot, reg):
    """The register the design works with: LTRFconf's renumbered one (slot: source k, or
    ``P_MAP_SRC + k`` for destination k), else the trace's."""
    om = ints[P_OFF_MAP]
    if om == 0 or reg >= 255:
        return reg
    s = (ints[ints[P_OFF_ROW] + row] >> ROW_SIDX_SHIFT) - 1
    if s < 0:
        return reg
    return ints[om + s * (ints[P_MAP_SRC] + 4) + slot]


@njit(cache=True)
def _bit(ints, base, reg):
    return (ints[base + (reg >> 6)] >> (reg & 63)) & 1


@njit(cache=True)
def _set(ints, base, reg):
    ints[base + (reg >> 6)] |= np.int64(1) << (reg & 63)


@njit(cache=True)
def _clr(ints, base, reg):
    ints[base + (reg >> 6)] &= ~(np.int64(1) << (reg & 63))


@njit(cache=True)
def _fetch(ints, w, iv, cycle, refetch):
    """Prefetch interval ``iv``'s working set for warp ``w``; returns the cycle it is complete.

    ``refetch``: the warp re-enters the pool in the middle of ``iv`` (its partition is empty).
    """
    wb = ints[P_OFF_WARP] + w * WB
    ob = ints[P_OFF_BANK]
    mb = ints[P_MB]
    plus = ints[P_PLUS]
    occ = ints[P_OCC]
    p0 = ints[ints[P_OFF_IVP] + iv]
    p1 = ints[ints[P_OFF_IVP] + iv + 1]
    oe = ints[P_OFF_IVE]
    # write back the registers of the old partition that leave it
    new = np.zeros(4, dtype=np.int64)
    for j in range(p0, p1):
        r = ints[oe + j] & 255
        new[r >> 6] |= np.int64(1) << (r & 63)
    load = np.zeros(mb, dtype=np.int64)
    done = cycle
    nfetch = 0
    for j in range(p0, p1):
        x = ints[oe + j]
        r = x & 255
        if refetch == 0:
            if _bit(ints, wb + W_CACHED, r):
                continue  # still valid from the previous interval
            if plus != 0:  # liveness at the entry (compile-time live-in)
                if (x >> E_LIVE_SHIFT) & 1:
                    _set(ints, wb + W_LIVE, r)
                else:
                    _clr(ints, wb + W_LIVE, r)
        _clr(ints, wb + W_DIRTY, r)
        if plus != 0 and _bit(ints, wb + W_LIVE, r) == 0:
            continue  # dead: a slot, no data
        b = (((x >> E_BANK_SHIFT) & 4095) + w) % mb
        load[b] += 1
        s = main_access(ints, ob, b, cycle, occ)
        t = s + ints[P_LAT] + ints[P_XEX]
        if t > done:
            done = t
        nfetch += 1
    # registers of the old partition that are not in the new working set
    if refetch == 0:
        for q in range(4):
            old = ints[wb + W_CACHED + q] & ~new[q]
            while old != 0:
                low = old & -old
                bitpos = 0
                y = low
                while y > 1:
                    y >>= 1
                    bitpos += 1
                old ^= low
                r = q * 64 + bitpos
                dirty = _bit(ints, wb + W_DIRTY, r)
                if dirty != 0 and (plus == 0 or _bit(ints, wb + W_LIVE, r) != 0):
                    main_access(ints, ob, main_bank(r, w, ints[P_G], mb), cycle, occ)
                    ints[C_MW] += 1
    for q in range(4):
        ints[wb + W_CACHED + q] = new[q]
        ints[wb + W_DIRTY + q] &= new[q]
    mx = 0
    for b in range(mb):
        if load[b] > mx:
            mx = load[b]
    if nfetch > 0:
        ints[C_PF] += 1
        ints[C_PFREG] += nfetch
        ints[C_MR] += nfetch
        ints[C_PFCYC] += done - cycle
        if mx > 1:
            ints[C_PFCONF] += mx - 1
            ints[C_PFCONF1] += 1
    return done


@njit(cache=True)
def _writeback_all(ints, w, cycle):
    """The warp leaves the pool: LTRF writes back its working set, LTRF+ its live registers."""
    wb = ints[P_OFF_WARP] + w * WB
    mb = ints[P_MB]
    iv = ints[wb + W_IV]
    if iv >= 0:
        p0 = ints[ints[P_OFF_IVP] + iv]
        p1 = ints[ints[P_OFF_IVP] + iv + 1]
        oe = ints[P_OFF_IVE]
        for j in range(p0, p1):
            x = ints[oe + j]
            r = x & 255
            if _bit(ints, wb + W_CACHED, r) == 0:
                continue
            if ints[P_PLUS] != 0 and _bit(ints, wb + W_LIVE, r) == 0:
                continue
            b = (((x >> E_BANK_SHIFT) & 4095) + w) % mb
            main_access(ints, ints[P_OFF_BANK], b, cycle, ints[P_OCC])
            ints[C_MW] += 1
    for q in range(4):
        ints[wb + W_CACHED + q] = 0
        ints[wb + W_DIRTY + q] = 0


@njit(cache=True)
def ltrf_operand(ints, floats, warp, row, k, reg, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    word = ints[ints[P_OFF_ROW] + row]
    if reg >= 255:  # RZ (GPGPU-Sim mode): read like a cached register
        return standard_bank(ints, warp, reg)
    reg = _reg_of(ints, row, k, reg)
    if (word >> k) & 1:  # dead-operand bit: the register dies with this read
        _clr(ints, wb + W_LIVE, reg)
    if _bit(ints, wb + W_CACHED, reg) or row <= ints[wb + W_FENCE]:
        # an instruction issued before its partition was replaced (it waited for a collector)
        # reads before the write-back: the hardware lets pending operand reads finish first
        ints[C_HIT] += 1
        return standard_bank(ints, warp, reg)
    # not in the partition (never for a register of the interval): read from the main RF
    ints[C_MISS] += 1
    ints[C_MR] += 1
    b = main_bank(reg, warp, ints[P_G], ints[P_MB])
    s = main_access(ints, ints[P_OFF_BANK], b, cycle, ints[P_OCC])
    return -(1 + s - cycle + ints[P_LAT] - 1 + ints[P_XEX])


@njit(cache=True)
def ltrf_write(ints, floats, warp, row, k, reg, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    reg = _reg_of(ints, row, ints[P_MAP_SRC] + k, reg)
    if reg < 256:
        _set(ints, wb + W_LIVE, reg)
    if ints[wb + W_IN] != 0 and reg < 256 and _bit(ints, wb + W_CACHED, reg):
        _set(ints, wb + W_DIRTY, reg)
        ints[C_CW] += 1
        return standard_bank(ints, warp, reg)
    main_access(ints, ints[P_OFF_BANK], main_bank(reg, warp, ints[P_G], ints[P_MB]), cycle, ints[P_OCC])
    ints[C_MW] += 1
    return -1


@njit(cache=True)
def ltrf_may_issue(ints, floats, warp, row, scheduler, n, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    iv = ((ints[ints[P_OFF_ROW] + row] >> ROW_IV_SHIFT) & ROW_IV_MASK) - 1
    if iv >= 0 and ints[wb + W_PFROW] != row:
        ints[wb + W_PFROW] = row
        ints[wb + W_FENCE] = row - 1
        ints[wb + W_IV] = iv
        ints[C_DYN] += 1
        ints[wb + W_READY] = _fetch(ints, warp, iv, cycle, 0)
    if cycle < ints[wb + W_READY]:
        return 1
    return 0


@njit(cache=True)
def ltrf_issued(ints, floats, warp, row, scheduler, record, cycle):
    ints[ints[P_OFF_WARP] + warp * WB + W_LAST] = row
    return 0


@njit(cache=True)
def ltrf_pool(ints, floats, warp, event, scheduler, d, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    if event == 1:
        ints[wb + W_IN] = 1
        ints[C_ACT] += 1
        if ints[wb + W_IV] >= 0:
            ints[C_REFETCH] += 1
            t = _fetch(ints, warp, ints[wb + W_IV], cycle, 1)
            if t > ints[wb + W_READY]:
                ints[wb + W_READY] = t
    else:
        _writeback_all(ints, warp, cycle)
        ints[wb + W_FENCE] = ints[wb + W_LAST]
        ints[wb + W_IN] = 0
        ints[C_DEACT] += 1
    return 0


@njit(cache=True)
def ltrf_activate(ints, floats, warp, cta, scheduler, d, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    for i in range(WB):
        ints[wb + i] = 0
    ints[wb + W_IV] = -1
    ints[wb + W_PFROW] = -1
    ints[wb + W_LAST] = -1
    ints[wb + W_FENCE] = -1
    for q in range(4):
        ints[wb + W_LIVE + q] = -1  # until known, every register counts as live
    if ints[P_TWO] == 0:
        ints[wb + W_IN] = 1
        ints[C_ACT] += 1
    return 0


@njit(cache=True)
def ltrf_deactivate(ints, floats, warp, cta, scheduler, d, cycle):
    wb = ints[P_OFF_WARP] + warp * WB
    ints[wb + W_IN] = 0
    for q in range(4):
        ints[wb + W_CACHED + q] = 0
        ints[wb + W_DIRTY + q] = 0
    return 0


@njit(cache=True)
def ltrf_upkeep(ints, floats, a, b, c, d, cycle):
    """Wake the loop when a prefetch completes; while none is pending, every stepped cycle.

    A prefetch starts inside ``may_issue``/``pool`` and ends at a cycle only this design knows;
    the upkeep schedule is the only way to ask the loop for that cycle, so with nothing pending
    upkeep returns ``cycle + 1`` (the upkeep that follows a new prefetch then reports it).
    """
    nxt = NEVER
    base = ints[P_OFF_WARP]
    for w in range(ints[P_W]):
        t = ints[base + w * WB + W_READY]
        if cycle < t < nxt:
            nxt = t
    if nxt == NEVER:
        return cycle + 1
    return nxt


# ----------------------------------------------------------------------------- per-row tables
@njit(cache=True)
def _dead_bits(warp_ptr, src, dst):
    """Per row, bit k set when source ``k`` is the register's last read before its next write."""
    n = src.shape[0]
    out = np.zeros(n, dtype=np.int64)
    live = np.zeros(256, dtype=np.uint8)
    for w in range(len(warp_ptr) - 1):
        live[:] = 0  # after the warp's last row nothing is read
        for r in range(warp_ptr[w + 1] - 1, warp_ptr[w] - 1, -1):
            for k in range(dst.shape[1]):
                x = dst[r, k]
                if x != 255:
                    live[x] = 0
            m = 0
            for k in range(src.shape[1]):
                x = src[r, k]
                if x != 255 and live[x] == 0:
                    m |= 1 << k
            for k in range(src.shape[1]):
                x = src[r, k]
                if x != 255:
                    live[x] = 1
            # the same register twice in one row: only its last slot is the dead one
            out[r] = m
    return out


@njit(cache=True)
def _dynamic_intervals(warp_ptr, src, dst, op, sidx, n, strand, long_ops):
    """Intervals formed on each warp's stream: (row -> instance id or -1, CSR ptr, CSR entries)."""
    rows = src.shape[0]
    start = np.full(rows, -1, dtype=np.int64)
    ptr = [0]
    ent = []
    seen = np.zeros(256, dtype=np.int64)  # instance id + 1 that last saw the register
    livein = np.zeros(256, dtype=np.uint8)
    pend = np.zeros(256, dtype=np.uint8)
    inst = 0
    regs = np.zeros(256, dtype=np.int64)
    for w in range(len(warp_ptr) - 1):
        cnt = 0
        nreg = 0
        for r in range(warp_ptr[w], warp_ptr[w + 1]):
            add = 0
            for k in range(src.shape[1]):
                x = src[r, k]
                if x != 255 and seen[x] != inst:
                    add += 1
            for k in range(dst.shape[1]):
                x = dst[r, k]
                if x != 255 and seen[x] != inst:
                    add += 1
            cut = r == warp_ptr[w] or (cnt > 0 and nreg + add > n)
            if strand and not cut and cnt > 0:
                if r > warp_ptr[w] and sidx[r] >= 0 and sidx[r] <= sidx[r - 1]:
                    cut = True
                for k in range(src.shape[1]):
                    x = src[r, k]
                    if x != 255 and pend[x] != 0:
                        cut = True
                for k in range(dst.shape[1]):
                    x = dst[r, k]
                    if x != 255 and pend[x] != 0:
                        cut = True
            if cut:
                if cnt > 0 or r > warp_ptr[w]:
                    for i in range(nreg):
                        x = regs[i]
                        ent.append(x | (x << 8) | (np.int64(livein[x]) << 20))
                    ptr.append(len(ent))
                inst += 1
                start[r] = inst - 1
                cnt = 0
                nreg = 0
                pend[:] = 0
            for k in range(src.shape[1]):
                x = src[r, k]
                if x != 255 and seen[x] != inst:
                    seen[x] = inst
                    livein[x] = 1
                    regs[nreg] = x
                    nreg += 1
            for k in range(dst.shape[1]):
                x = dst[r, k]
                if x != 255 and seen[x] != inst:
                    seen[x] = inst
                    livein[x] = 0
                    regs[nreg] = x
                    nreg += 1
            is_long = False
            for q in range(len(long_ops)):
                if op[r] == long_ops[q]:
                    is_long = True
            for k in range(dst.shape[1]):
                x = dst[r, k]
                if x != 255:
                    pend[x] = 1 if is_long else 0
            cnt += 1
        if cnt > 0:
            for i in range(nreg):
                x = regs[i]
                ent.append(x | (x << 8) | (np.int64(livein[x]) << 20))
            ptr.append(len(ent))
    # instance ids were counted from 1 in ``seen``; start[] holds id - 1 ... shift
    return start, np.array(ptr, dtype=np.int64), np.array(ent, dtype=np.int64)


#: kernels built in memory (tests, notebooks) that traces may name: (source, name) -> Kernel
_KNOWN_KERNELS: dict = {}


def register_kernel(kernel) -> None:
    """Make an in-memory static kernel known, so that traces expanded from it get its intervals.

    A trace names its kernel by ``attrs['kernel_source']`` and ``Trace.kernel``; built-in SASS kernels and
    synthetic presets are rebuilt from those, other kernels must be registered here.
    """
    _KNOWN_KERNELS[(str(kernel.source), kernel.name)] = kernel


@functools.lru_cache(maxsize=8)
def _load_static(source: str, name: str):
    """The static kernel a trace was expanded from (None when it cannot be rebuilt)."""
    try:
        if source.startswith("synthetic:"):
            import json

            from rfmodel.workload.synthetic import SYNTHETIC_PRESETS, generate

            meta = json.loads(source[len("synthetic:"):])
            pname = meta.get("params", {}).get("name")
            if pname in SYNTHETIC_PRESETS:
                k, _ = generate(SYNTHETIC_PRESETS[pname], seed=int(meta.get("seed", 0)))
                return k if k.source == source else None
            return None
        from pathlib import Path

        if not Path(source).exists():
            return None
        from rfmodel.workload.sass import read_sass

        for k in read_sass(source):
            if k.name == name:
                return k
    except Exception:  # noqa: BLE001 - any failure means: form intervals on the trace instead
        return None
    return None


def static_kernel(trace):
    """The trace's static kernel if it can be loaded and its instructions match the trace."""
    src = str(trace.attrs.get("kernel_source", ""))
    if not src:
        return None
    k = _KNOWN_KERNELS.get((src, trace.kernel))
    if k is None:
        k = _load_static(src, trace.kernel)
    if k is None or len(trace.sidx) == 0:
        return None
    sidx = np.asarray(trace.sidx)
    if sidx.min() < 0 or sidx.max() >= len(k.instrs):
        return None
    step = max(1, len(sidx) // 2000)
    for r in range(0, len(sidx), step):
        ins = k.instrs[int(sidx[r])]
        got = tuple(int(x) for x in trace.src[r] if x != NONE)
        if got != tuple(x for x in ins.src if x < 255)[: len(got)] or int(trace.op[r]) != int(ins.op_class):
            return None
    return k


def _compile(kernel, n: int, kind: str, conf: bool, n_banks: int, regs_per_bank: int = 1):
    """:func:`compile_intervals`, plus the renumbered kernel (None when not renumbered) and the
    per-interval conflicts of the whole working sets (the compiler's objective)."""
    from rfmodel.compiler.reg_intervals import register_intervals, strands
    from rfmodel.compiler.renumber import bank_conflicts, prefetch_sets, renumber

    def bank(r):
        return (r // regs_per_bank) % n_banks

    ivs = strands(kernel, n) if kind == "strand" else register_intervals(kernel, n)
    new = None
    if conf:
        n_regs = max(kernel.max_reg() + 1, min(int(kernel.regs_per_thread or 0), 255))
        ren = renumber(kernel, ivs, n_banks=n_banks, bank=bank, n_regs=n_regs)
        if ren.applied:
            new = ren.kernel
    k = new if new is not None else kernel
    ws = prefetch_sets(k, ivs)
    live = prefetch_sets(k, ivs, live_only=True)
    entries = [[(r, bank(r), int(r in live[i])) for r in sorted(ws[i])] for i in range(len(ws))]
    conflicts = [bank_conflicts(s, n_banks, bank) for s in ws]
    return ivs, entries, new, conflicts


def compile_intervals(kernel, n: int, kind: str, conf: bool, n_banks: int, regs_per_bank: int = 1):
    """The design's compiler pass on a static kernel: intervals (or strands), renumbering.

    Returns ``(intervals, entries)`` where ``entries[i]`` lists ``(reg, bank, live_in)`` of
    interval ``i``'s working set: ``reg`` the register the design works with (LTRFconf: the
    renumbered one, when the renumbering was applied), ``bank`` its main-RF bank before the
    warp rotation, ``(reg // regs_per_bank) mod n_banks``.  The renumbering colours with the
    same bank function and may use every register up to the kernel's register count.
    """
    ivs, entries, _new, _c = _compile(kernel, n, kind, conf, n_banks, regs_per_bank)
    return ivs, entries


def _remap_table(trace, new):
    """Per static instruction: the renumbered register of each source slot, then of each destination slot."""
    ns, nd = trace.src.shape[1], trace.dst.shape[1]
    tab = np.full((len(new.instrs), ns + 4), 255, dtype=np.int64)
    if nd > 4:
        raise RfmodelError(f"ltrfconf: trace rows with {nd} destination slots (at most 4 supported)")
    for i, b in enumerate(new.instrs):  # the renumbered copy has the same instructions, renamed
        s = [x for x in b.src if x < 255]
        d = [x for x in b.dst if x < 255]
        tab[i, : min(len(s), ns)] = s[:ns]
        tab[i, ns: ns + min(len(d), 4)] = d[:4]
    return tab.ravel()


def row_tables(trace, n: int, kind: str, conf: bool, n_banks: int, regs_per_bank: int = 1):
    """Per-row prefetch words, the interval CSR and (LTRFconf) the register map; cached per trace.

    Returns ``(words, ptr, entries, remap, info)``; ``remap`` is None unless the renumbering applies.
    """
    key = (id(trace), n, kind, conf, n_banks, regs_per_bank)
    hit = _TABLES.get(key)
    if hit is not None and hit[0] is trace:
        return hit[1]
    dead = _dead_bits(np.asarray(trace.warp_ptr, np.int64), trace.src, trace.dst)
    kernel = static_kernel(trace)
    remap = None
    sidx = np.asarray(trace.sidx, dtype=np.int64)
    if kernel is not None:
        ivs, entries, new, conflicts = _compile(kernel, n, kind, conf, n_banks, regs_per_bank)
        iv_of = np.asarray(ivs.interval_of, dtype=np.int64)
        cur = iv_of[sidx]
        first = np.zeros(len(sidx), dtype=bool)
        first[np.asarray(trace.warp_ptr[:-1], np.int64)[np.diff(trace.warp_ptr) > 0]] = True
        prev_iv = np.concatenate(([-1], cur[:-1]))
        prev_s = np.concatenate(([-1], sidx[:-1]))
        start = first | (cur != prev_iv)
        if ivs.restart_on_back_edge:
            entry = np.array([iv.entry for iv in ivs.intervals], dtype=np.int64)
            start |= (sidx == entry[cur]) & (prev_s >= sidx)
        pf = np.where(start, cur, -1)
        ptr = np.zeros(len(entries) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(e) for e in entries])
        ent = np.array([r | (b << 8) | (lv << 20) for e in entries for r, b, lv in e], dtype=np.int64)
        lens = ivs.lengths()
        if new is not None:
            remap = _remap_table(trace, new)
        info = {"source": "static", "static_intervals": int(len(lens)), "static_instrs": int(lens.sum()),
                "static_conflicts": int(sum(conflicts)), "renumbered": new is not None}
    else:
        pf, ptr, ent = _dynamic_intervals(
            np.asarray(trace.warp_ptr, np.int64), trace.src, trace.dst, trace.op.astype(np.int64),
            trace.sidx.astype(np.int64), n, kind == "strand", np.array(LONG_LATENCY_OPS, dtype=np.int64),
        )
        if len(ent):
            ent = (ent & ~(np.int64(4095) << 8)) | ((((ent & 255) // regs_per_bank) % n_banks) << 8)
        niv = len(ptr) - 1
        sc = 0
        for i in range(niv):
            b = (ent[ptr[i]:ptr[i + 1]] >> 8) & 4095
            sc += int(np.bincount(b).max()) - 1 if len(b) else 0
        info = {"source": "dynamic", "static_intervals": niv, "static_instrs": int(len(pf)),
                "static_conflicts": sc, "renumbered": False}
    if len(pf) and int(pf.max()) + 1 > ROW_IV_MASK:
        raise RfmodelError(f"too many prefetch regions ({int(pf.max()) + 1}) for the row table")
    words = ((pf + 1) << ROW_IV_SHIFT) | dead | ((np.maximum(sidx, -1) + 1) << ROW_SIDX_SHIFT)
    out = (words, ptr, ent, remap, info)
    if len(_TABLES) > 4:
        _TABLES.clear()
    _TABLES[key] = (trace, out)
    return out


_TABLES: dict = {}


# ----------------------------------------------------------------------------- the designs
class _LtrfBase(Design):
    kind = "register-interval"
    plus = False
    conf = False
    SPEC = {**MAIN_RF_PARAMS, "regs_per_interval": (16, 1, 256, True)}
    parameters = tuple(SPEC)
    metrics = (
        "rf_cache_hit_rate", "rf_cache_reads", "main_rf_reads", "main_rf_writes", "prefetches",
        "prefetch_regs", "prefetch_latency_cycles", "prefetch_bank_conflicts",
        "conflict_free_prefetch_fraction",
        "static_prefetch_conflicts", "warp_activations", "warp_deactivations", "refetches",
        "interval_length_dynamic", "interval_length_static",
    )

    def params(self, sm, params: dict) -> dict:
        return resolve_params(self.name, self.SPEC, sm, params)

    def compile(self, kernel, n: int = 16, n_banks: int = 16):
        """The design's compiler pass: ``(intervals, per-interval (reg, bank, live-in) lists)``."""
        kind = "strand" if self.kind == "strand" else "interval"
        return compile_intervals(kernel, n, kind, self.conf, n_banks)

    def sim_setup(self, sm, params, options, trace=None):
        p = self.params(sm, params)
        if trace is None:
            raise RfmodelError(
                f"design '{self.name}' needs the trace being simulated: sim_setup(..., trace=...)"
            )
        if p["main_rf_banks"] > 4095:
            raise RfmodelError("main_rf_banks above 4095 are not supported")
        words, ptr, ent, remap, info = row_tables(
            trace, p["regs_per_interval"], "strand" if self.kind == "strand" else "interval", self.conf,
            p["main_rf_banks"], p["main_rf_bank_regs"],
        )
        lat, occ, xex = main_rf_timing(p)
        W = sm.warps_per_sm
        offset = 1 if getattr(options, "compat", "none") == "gpgpusim" else 0
        off_warp = P_C0 + len(COUNTERS)
        off_bank = off_warp + W * WB
        off_row = off_bank + p["main_rf_banks"]
        off_ivp = off_row + len(words)
        off_ive = off_ivp + len(ptr)
        off_map = off_ive + max(len(ent), 1)
        ints = np.zeros(off_map + (0 if remap is None else len(remap)), dtype=np.int64)
        ints[:BANK_HEADER_LEN] = bank_header(sm, offset)
        ints[P_LAT], ints[P_OCC], ints[P_XEX], ints[P_MB] = lat, occ, xex, p["main_rf_banks"]
        ints[P_PLUS], ints[P_TWO], ints[P_W] = int(self.plus), int(two_level(sm)), W
        ints[P_OFF_WARP], ints[P_OFF_BANK], ints[P_OFF_ROW] = off_warp, off_bank, off_row
        ints[P_OFF_IVP], ints[P_OFF_IVE] = off_ivp, off_ive
        ints[off_row:off_ivp] = words
        ints[off_ivp:off_ive] = ptr
        ints[off_ive:off_ive + len(ent)] = ent
        ints[C_SIV] = info["static_intervals"]
        ints[C_SIVI] = info["static_instrs"]
        ints[C_SCONF] = info["static_conflicts"]
        ints[P_G] = p["main_rf_bank_regs"]
        ints[P_MAP_SRC] = trace.src.shape[1]
        if remap is not None:
            ints[P_OFF_MAP] = off_map
            ints[off_map:] = remap
        for w in range(W):
            ints[off_warp + w * WB + W_IV] = -1
            ints[off_warp + w * WB + W_PFROW] = -1
            ints[off_warp + w * WB + W_LAST] = -1
            ints[off_warp + w * WB + W_FENCE] = -1
        hooks = SimHooks(
            operand=ltrf_operand, write=ltrf_write, may_issue=ltrf_may_issue, issued=ltrf_issued,
            activate=ltrf_activate,
            deactivate=ltrf_deactivate, upkeep=ltrf_upkeep, pool=ltrf_pool,
        )
        setup = SimSetup(
            hooks=hooks,
            ints=ints,
            stall_reasons=("prefetch",),
            counters={c: P_C0 + i for i, c in enumerate(COUNTERS)},
            pool=p["active_warps"],
        )
        setup.interval_source = info["source"]  # type: ignore[attr-defined]
        setup.renumbered = info["renumbered"]  # type: ignore[attr-defined]
        return setup

    def sim_metrics(self, sm, params, setup, counts):
        hits, miss = float(counts["rfc_read_hits"]), float(counts["rfc_read_misses"])
        reads = float(counts["reads"])
        mr, mw = float(counts["main_rf_reads"]), float(counts["main_rf_writes"])
        pf = float(counts["prefetches"])
        dyn = float(counts["dynamic_intervals"])
        siv = float(counts["static_intervals"])
        return {
            "rf_cache_hit_rate": hits / (hits + miss) if hits + miss else 0.0,
            "main_rf_reads": mr,
            "main_rf_writes": mw,
            "rf_cache_reads": hits,
            "prefetches": pf,
            "prefetch_regs": float(counts["prefetch_regs"]),
            "static_prefetch_conflicts": float(counts["static_prefetch_conflicts"]),
            "refetches": float(counts["refetches"]),
            "prefetch_latency_cycles": float(counts["prefetch_cycles"]) / pf if pf else 0.0,
            "prefetch_bank_conflicts": float(counts["prefetch_bank_conflicts"]),
            "conflict_free_prefetch_fraction": (
                1.0 - float(counts["prefetches_with_conflict"]) / pf if pf else 1.0
            ),
            "warp_activations": float(counts["warp_activations"]),
            "warp_deactivations": float(counts["warp_deactivations"]),
            "interval_length_dynamic": float(counts["issued"]) / dyn if dyn else 0.0,
            "interval_length_static": float(counts["static_interval_instrs"]) / siv if siv else 0.0,
            "events": {
                "rf_cache": (float(counts["bank_read_acc"]), float(counts["bank_write_acc"])),
                "main_rf_bank": (mr, mw),
                "main_network": (mr + mw, 0.0),
                "crossbar": (reads + float(counts["writes"]), 0.0),
                "collector": (reads, reads),
                "warp_control_block": (
                    reads + float(counts["writes"]), pf + float(counts["warp_activations"])
                ),
            },
        }

    def analytic(self, profile, sm, grid):
        from rfmodel.analytic.caching import analytic_ltrf

        return analytic_ltrf(self, profile, sm, grid)

    def structures(self, sm, grid, tech):
        return hierarchy_structures(self, sm, grid, tech, wcb=True)


@register
class Ltrf(_LtrfBase):
    name = "ltrf"
    description = "Latency-Tolerant Register File: register-interval prefetch into a partitioned RF cache"


@register
class LtrfPlus(_LtrfBase):
    name = "ltrf_plus"
    description = "LTRF+ : LTRF with liveness bits (only live registers written back / fetched)"
    plus = True


@register
class LtrfConf(_LtrfBase):
    name = "ltrfconf"
    description = "LTRFconf: LTRF with register renumbering against prefetch bank conflicts"
    conf = True


@register
class Strands(_LtrfBase):
    name = "strands"
    description = "LTRF hardware with strand prefetch regions (cut at long-latency uses and back edges)"
    kind = "strand"


# ----------------------------------------------------------------------------- structures
def hierarchy_structures(design, sm, grid, tech, *, wcb: bool):
    """Main RF banks, collectors and crossbar (the baseline's), RF cache, main-RF network, WCB.

    The baseline's ``rf_bank`` becomes ``main_rf_bank`` (its cell: ``tech['main_cell']``, default
    ``tech['cell']``); the RF cache is SRAM (``tech['cell']``) of ``N x active warps x schedulers``
    warp registers in N banks (RFC: ``rfc_kb`` in the SM's bank count); the main RF reaches the
    cache through a crossbar (``narrow_crossbar``: 4x narrower) or, beyond 64 banks, a flattened
    butterfly.  Design parameters are taken at their first grid value (structure costs do not
    vary over the design's own grid; the SM fields do, as in the baseline).
    """
    from rfmodel.designs.baseline import Baseline
    from rfmodel.energy.accounting import Structure
    from rfmodel.tech.interconnect import crossbar, flattened_butterfly
    from rfmodel.tech.structures import register_cache, warp_control_block

    node = tech.get("node_nm", 45)
    cell = tech.get("cell", "sram-hp")
    main_tech = {**tech, "cell": tech.get("main_cell", cell)}
    sm_grid = {k: v for k, v in grid.items() if k in sm.to_dict() or k == "collector_units"}
    base = Baseline().structures(sm, sm_grid, main_tech)

    def first(name, default):
        v = grid.get(name, default)
        return np.asarray(v).ravel()[0].item() if np.size(v) else default

    active = int(first("active_warps", 8))
    width = sm.bank_width_bits
    if wcb:
        n = int(first("regs_per_interval", 16))
        cache_banks = n
        cache_kb = n * active * sm.schedulers_per_sm * 128 / 1024.0
    else:
        cache_kb = float(first("rfc_kb", 16))
        cache_banks = sm.num_banks
    rc = register_cache(cache_kb, cache_banks, 1024, node_nm=node, cell=cell)
    main_banks = int(first("main_rf_banks", sm.num_banks))
    narrow = int(first("narrow_crossbar", 0))
    span = float(np.sqrt(np.max(np.asarray(base[0].area_mm2) * np.asarray(base[0].copies))))
    net_width = width // 4 if narrow else width
    if main_banks > 64:
        net = flattened_butterfly(main_banks, cache_banks, net_width, node, span)
    else:
        net = crossbar(main_banks, cache_banks, net_width, node, span)
    net_s = net.structure("main_network")
    if net_width != width:  # a transfer moves one warp register in 4 flits of a quarter width
        import dataclasses

        net_s = dataclasses.replace(net_s, read_pj=net.transfer_pj * 4)
    out = [
        Structure("main_rf_bank", **{k: getattr(base[0], k) for k in (
            "read_pj", "write_pj", "leakage_mw", "area_mm2", "copies", "provenance", "write_group_pj",
            "write_fixed_pj", "capacity_bits")}),
        base[1],
        base[2],
        rc.structure("rf_cache", copies=cache_banks),
        net_s,
    ]
    if wcb:
        wcb_s = warp_control_block(sm.warps_per_sm, 256, node_nm=node, cell=cell)
        out.append(wcb_s.structure("warp_control_block"))
    return out
