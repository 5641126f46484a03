"""CORF and CORF++: register packing with coalesced operand reads.

"CORF: Coalescing Operand Register File for GPUs" (ASPLOS 2019).  Narrow values (1-3 of a register's 4
bytes over all 32 lanes) are packed into byte slices of shared physical warp registers through a renaming
table ``(warp, register) -> (physical register, 4-bit allocation mask)`` and a free map of byte slices
(register packing, the paper's starting point).  Two source operands of one instruction are read with one
bank access when they sit in the same physical register (CORF) or, with the re-architected file (CORF++:
all registers of a warp in one bank, byte-plane sub-banks, dual-addressable banks), whenever their
allocation masks AND to 0000.  A compiler pass steers the allocation: exclusive common pairs from the
register affinity graph (CORF) or left/right alignment by a bipartite-edge-frustration heuristic (CORF++).
Register virtualization frees a register's slices at its last read.

Configurations are the design's :attr:`Corf.presets`.  The pure parts (affinity graph, pairs, alignment,
the allocator) are plain functions testable on their own; the allocator is the same compiled code the
simulator's hooks run (:class:`Allocator` wraps it for tests and tools).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS
from rfmodel.analytic.model import Effects, sm_param
from rfmodel.analytic.profile import TableGroup, register_table_group
from rfmodel.designs.base import (
    BANK_HEADER_LEN,
    OPERAND_DELAY,
    Design,
    DesignParams,
    SimHooks,
    SimSetup,
    header_state,
    rate,
    register,
    source_words,
    standard_bank,
)
from rfmodel.designs.mainrf import sm_structures
from rfmodel.energy.accounting import structure_over_grid
from rfmodel.errors import RfmodelError
from rfmodel.spec import param
from rfmodel.trace import MAX_DST, MAX_SRC, NONE

COALESCE = ("none", "same-entry", "sub-banks")
#: tests set this: every allocation of a simulation checks the renaming table for overlapping slices
DEBUG_CHECKS = False
ALLOC = ("first-fit", "pairs", "align")
#: the affinity graph's instruction weights (CorfParams.affinity)
AFFINITY = ("trips", "depth")
#: CORF++ alignment labels
DONT_CARE, LEFT, RIGHT = 0, 1, 2


@dataclass(frozen=True)
class CorfParams(DesignParams, kind="design.corf"):
    """CORF's parameters (defaults: CORF++ with virtualization, the paper's Table 1 row)."""

    coalesce: str = param(
        "sub-banks",
        type=str,
        choices=COALESCE,
        doc="none: packing only; same-entry: two sources in one physical register are read together "
        "(CORF); sub-banks: any two sources of one bank whose allocation masks AND to 0000 (CORF++'s "
        "dual-addressable byte-plane sub-banks)",
    )
    alloc: str = param(
        "align",
        type=str,
        choices=ALLOC,
        doc="first-fit (packing); pairs: the compiler's exclusive common pairs share an entry (CORF); "
        "align: the compiler's left/right alignment (CORF++)",
    )
    warp_bank: int = param(1, choices=(0, 1), doc="1: all registers of a warp in one bank (CORF++)")
    virtualize: int = param(1, choices=(0, 1), doc="1: a register's slices are freed at its last read")
    rt_ports: int = param(
        2,
        bounds=(0, 16),
        doc="renaming-table lookups one RT bank serves per cycle (the paper's dual-ported RT, one bank per "
        "register bank); a lookup beyond them delays its register read a cycle; 0: no limit",
    )
    metadata: int = param(
        1,
        choices=(0, 1),
        engines=("simulate",),
        acts_with={"alloc": ("pairs",)},
        doc="1: every warp first executes the kernel's metadata instructions (CORF's pairs, 4 per 64-bit "
        "instruction; a misc-class instruction without operands each); 0: counted in code size only",
    )
    affinity: str = param(
        "trips",
        type=str,
        choices=AFFINITY,
        engines=("simulate",),
        doc="affinity-graph weights of the static kernel's instructions: trips = each instruction's "
        "executions per warp in the trace being run (its loops' trip counts as the kernel's inputs set them, "
        "1 outside loops: the compiler's static trip counts where it could know them); depth = "
        "loop_weight^(loop depth), the paper's fixed weight for every loop",
    )
    loop_weight: int = param(
        8,
        bounds=(1, 1000),
        engines=("simulate",),
        acts_with={"affinity": ("depth",)},
        doc="affinity-graph weight of a source pair per loop level with affinity = depth (the paper's "
        "unstated fixed weight; an instruction at loop depth d weighs loop_weight^d)",
    )


# ============================================================================ compiler pass (pure)
def affinity_graph(sources, weights=None) -> dict[tuple[int, int], float]:
    """The register affinity graph: ``{(a, b): weight}`` with ``a < b``, summed over instructions whose
    distinct register sources include both (``sources``: one iterable of registers per instruction;
    ``weights``: each instruction's estimated dynamic count, default 1)."""
    g: dict[tuple[int, int], float] = {}
    for i, srcs in enumerate(sources):
        regs = sorted({int(r) for r in srcs if 0 <= int(r) < NONE})
        w = 1.0 if weights is None else float(weights[i])
        for x in range(len(regs)):
            for y in range(x + 1, len(regs)):
                e = (regs[x], regs[y])
                g[e] = g.get(e, 0.0) + w
    return g


def kernel_affinity(kernel, loop_weight: int = 8, executions=None) -> dict[tuple[int, int], float]:
    """The affinity graph of a static kernel: with ``executions`` (per static instruction, its dynamic
    count per warp) those counts; else 1 per instruction outside loops and ``loop_weight`` per nesting level
    inside."""
    if executions is not None:
        return affinity_graph([ins.src for ins in kernel.instrs], executions)
    from rfmodel.compiler.cfg import loop_depth

    depth = loop_depth(kernel)
    weights = []
    block_of = np.zeros(len(kernel.instrs), dtype=np.int64)
    for b in kernel.blocks:
        block_of[b.start : b.end] = b.id
    for i in range(len(kernel.instrs)):
        weights.append(float(loop_weight) ** depth.get(int(block_of[i]), 0))
    return affinity_graph([ins.src for ins in kernel.instrs], weights)


def exclusive_pairs(graph: dict[tuple[int, int], float]) -> list[tuple[int, int]]:
    """CORF's exclusive common pairs: while a register has more than one edge, drop the lightest edge
    that touches such a register (ties: the smaller register pair first); then restore original edges
    between registers left with none, heaviest first.  Returns sorted pairs ``(a, b)``, ``a < b``."""
    edges = dict(graph)
    deg: dict[int, int] = {}
    for a, b in edges:
        deg[a] = deg.get(a, 0) + 1
        deg[b] = deg.get(b, 0) + 1
    while True:
        cand = [(w, e) for e, w in edges.items() if deg[e[0]] > 1 or deg[e[1]] > 1]
        if not cand:
            break
        _, e = min(cand)
        del edges[e]
        deg[e[0]] -= 1
        deg[e[1]] -= 1
    paired = {r for e in edges for r in e}
    for e, _w in sorted(graph.items(), key=lambda t: (-t[1], t[0])):
        if e[0] not in paired and e[1] not in paired:
            edges[e] = graph[e]
            paired.update(e)
    return sorted(edges)


def odd_cycles(edges, max_len: int = 9, budget: int = 200_000):
    """The simple odd cycles (as frozensets of edges) of an undirected graph, up to ``max_len`` edges;
    ``None`` when the search would take more than ``budget`` steps."""
    adj: dict[int, list[int]] = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    for v in adj:
        adj[v].sort()
    found: set[frozenset] = set()
    steps = 0
    for s in sorted(adj):
        stack = [(s, [s])]
        while stack:
            v, path = stack.pop()
            steps += 1
            if steps > budget:
                return None
            for u in adj[v]:
                if u == s and len(path) >= 3 and len(path) % 2 == 1 and path[1] < path[-1]:
                    n = len(path)
                    found.add(frozenset(tuple(sorted((path[i], path[(i + 1) % n]))) for i in range(n)))
                elif u > s and u not in path and len(path) < max_len:
                    stack.append((u, path + [u]))
    return found


def alignment(graph: dict[tuple[int, int], float], max_len: int = 9) -> tuple[dict[int, int], list]:
    """CORF++'s register alignment: remove, one at a time, the edge on an odd cycle with the lowest
    weight / (odd cycles its removal breaks) (ties: the smaller pair), re-scoring after each removal,
    until no odd cycle is left; then 2-colour each component (its smallest register RIGHT).  Registers
    without edges are DONT_CARE.  Returns ``({register: LEFT | RIGHT}, removed edges in order)``.
    Odd cycles longer than ``max_len`` (or a search over budget) are left to the colouring, which
    follows a maximum-weight spanning forest, so an edge it cannot honour is the lightest one."""
    edges = dict(graph)
    removed = []
    while True:
        cyc = odd_cycles(edges, max_len)
        if not cyc:
            break
        count: dict[tuple[int, int], int] = {}
        for c in cyc:
            for e in c:
                count[e] = count.get(e, 0) + 1
        _, e = min((edges[e] / n, e) for e, n in count.items())
        del edges[e]
        removed.append(e)
    # 2-colour along a maximum-weight spanning forest (Prim from each component's smallest register)
    adj: dict[int, list[tuple[float, int]]] = {}
    for (a, b), w in edges.items():
        adj.setdefault(a, []).append((w, b))
        adj.setdefault(b, []).append((w, a))
    colour: dict[int, int] = {}
    import heapq

    for s in sorted(adj):
        if s in colour:
            continue
        colour[s] = RIGHT
        heap = [(-w, u, s) for w, u in adj[s]]
        heapq.heapify(heap)
        while heap:
            _, u, v = heapq.heappop(heap)
            if u in colour:
                continue
            colour[u] = LEFT if colour[v] == RIGHT else RIGHT
            for w, x in adj[u]:
                if x not in colour:
                    heapq.heappush(heap, (-w, x, u))
    return colour, removed


@dataclass(frozen=True)
class CorfProgram:
    """The compiler's hints for one kernel: ``partner[r]`` (-1: none) and ``align[r]`` per register."""

    partner: np.ndarray
    align: np.ndarray
    pairs: tuple
    source: str
    #: instructions of the static kernel the hints come from (0: profiled from a trace)
    static_instructions: int = 0
    #: per static instruction, its destination registers whose value is never read (a dead definition:
    #: virtualization frees its slices once written), NONE elsewhere; None without a static kernel
    dead_def_regs: np.ndarray | None = None

    @property
    def metadata_instructions(self) -> int:
        """64-bit metadata instructions at kernel start: CORF's pairs, 4 per instruction."""
        return (len(self.pairs) + 3) // 4


def hints(graph, source: str) -> CorfProgram:
    pairs = exclusive_pairs(graph)
    colour, _ = alignment(graph)
    partner = np.full(NONE, -1, dtype=np.int64)
    for a, b in pairs:
        partner[a], partner[b] = b, a
    align = np.zeros(NONE, dtype=np.int64)
    for r, c in colour.items():
        align[r] = c
    return CorfProgram(partner, align, tuple(pairs), source)


def trace_affinity(trace) -> dict[tuple[int, int], float]:
    """Profiling's affinity graph (the paper's alternative to static analysis): every dynamic instruction
    of the trace's first warp counts once."""
    wp = np.asarray(trace.warp_ptr, dtype=np.int64)
    src = np.asarray(trace.src)[wp[0] : wp[1]]
    keys, counts = np.unique(src, axis=0, return_counts=True)
    return affinity_graph(keys, counts)


# ============================================================================ allocator (compiled)
# int state header (after the bank header)
_H = BANK_HEADER_LEN
H_COAL, H_ALLOC, H_WBANK, H_VIRT = _H, _H + 1, _H + 2, _H + 3
H_P, H_NBT, H_NB, H_SPLIT, H_SCHEDS, H_R = _H + 4, _H + 5, _H + 6, _H + 7, _H + 8, _H + 9
H_O_RTP, H_O_RTM, H_O_USED, H_O_PART, H_O_ALIGN, H_O_ROWS = (_H + 10 + i for i in range(6))
H_NALLOC, H_LAST_T, H_ACTIVE, H_CUR_ROW, H_CUR_N, H_CUR_COAL = (_H + 16 + i for i in range(6))
H_O_SCR = _H + 22
H_DEBUG = _H + 23  # 1: every allocation checks the renaming table for an overlap (tests)
H_RT_PORTS, H_O_RTB = _H + 24, _H + 25  # RT lookups per bank and cycle (0: no limit); per-bank port state
COUNTER_NAMES = (
    "multi_src",
    "coalesced_instr",
    "reads_saved",
    "reallocations",
    "values",
    "allocations",
    "dead_frees",
    "unknown_width",
    "unmapped_reads",
    "phys_cycles",
    "warp_cycles",
    "rt_reads",
    "rt_writes",
    "buddy_tries",
    "buddy_packed",
    "overflow",
    "alloc_fail",
    "src_operands",
    "exit_frees",
    "overlaps",
    "rt_conflicts",
    "rt_delay_cycles",
    "dead_def_frees",
    "bytes_written",
)
C0 = _H + 26
C = {name: C0 + i for i, name in enumerate(COUNTER_NAMES)}
(
    C_MULTI,
    C_COAL,
    C_SAVED,
    C_REALLOC,
    C_VALUES,
    C_ALLOCS,
    C_DEAD,
    C_UNKNOWN,
    C_UNMAPPED,
    C_PHYS_CYC,
    C_WARP_CYC,
    C_RT_R,
    C_RT_W,
    C_BUDDY,
    C_BUDDY_OK,
    C_OVERFLOW,
    C_FAIL,
    C_SRC,
    C_EXIT,
    C_OVERLAP,
    C_RT_CONF,
    C_RT_DELAY,
    C_DEAD_DEF,
    C_BYTES,
) = (C0 + i for i in range(len(COUNTER_NAMES)))
HEADER_LEN = C0 + len(COUNTER_NAMES)
SCRATCH = 2 * MAX_SRC  # (physical register, mask | paired << 8) per source of the current instruction


@njit(cache=True)
def _tick(ints, cycle):
    """Integrate allocated physical registers and resident warps up to ``cycle``."""
    dt = cycle - ints[H_LAST_T]
    if dt > 0:
        ints[C_PHYS_CYC] += ints[H_NALLOC] * dt
        ints[C_WARP_CYC] += ints[H_ACTIVE] * dt
        ints[H_LAST_T] = cycle


@njit(cache=True)
def _place(used, width, pref):
    """Byte position of a ``width``-byte value in a register whose used slices are ``used`` (bit i: byte
    Bi): RIGHT needs B0.., LEFT ..B3, DONT_CARE the lowest free run; -1 if it does not fit."""
    full = (1 << width) - 1
    if pref == RIGHT:
        return 0 if used & full == 0 else -1
    if pref == LEFT:
        return 4 - width if used & (full << (4 - width)) == 0 else -1
    for s in range(5 - width):
        if used & (full << s) == 0:
            return s
    return -1


@njit(cache=True)
def phys_bank(ints, p):
    return p % ints[H_NBT]


@njit(cache=True)
def _home_banks(ints, warp):
    """(first bank, count, stride) of the banks a warp allocates in: its one bank (warp_bank), else every
    bank of its sub-core (or of the SM)."""
    nb = ints[H_NB]
    g = warp % ints[H_SCHEDS] if ints[H_SPLIT] != 0 else 0
    if ints[H_WBANK] != 0:
        local = ((warp // ints[H_SCHEDS]) if ints[H_SPLIT] != 0 else warp) % nb
        return g * nb + local, 1
    return g * nb, nb


@njit(cache=True)
def alloc_reg(ints, warp, reg, width, cycle):
    """Map register ``reg`` of ``warp`` to ``width`` free bytes by the policy; returns the physical
    register (-1: the file is full)."""
    R = ints[H_R]
    rtp = H_O_RTP
    b0, nb = _home_banks(ints, warp)
    p, s = -1, -1
    pol = ints[H_ALLOC]
    pref = DONT_CARE
    if pol == 2:
        pref = ints[ints[H_O_ALIGN] + reg]
    elif pol == 1 and width < 4:
        partner = ints[ints[H_O_PART] + reg]
        if partner >= 0:
            pp = ints[ints[rtp] + warp * R + partner]
            if pp >= 0:  # the buddy: into its partner's entry if it fits (at the free end)
                ints[C_BUDDY] += 1
                s = _place(ints[ints[H_O_USED] + pp], width, LEFT)
                if s < 0:
                    s = _place(ints[ints[H_O_USED] + pp], width, DONT_CARE)
                if s >= 0:
                    p = pp
                    ints[C_BUDDY_OK] += 1
            else:  # the first member: a free full-width register, keeping the rest for the buddy
                p, s = _scan_empty(ints, b0, nb)
    if p < 0:
        p, s = _scan_policy(ints, b0, nb, width, pref)
    if p < 0 and ints[H_WBANK] != 0:  # the warp's bank is full: any bank of its group
        g = warp % ints[H_SCHEDS] if ints[H_SPLIT] != 0 else 0
        p, s = _scan_policy(ints, g * ints[H_NB], ints[H_NB], width, pref)
        if p >= 0:
            ints[C_OVERFLOW] += 1
    if p < 0:
        ints[C_FAIL] += 1
        return -1
    _tick(ints, cycle)
    used = ints[H_O_USED] + p
    if ints[used] == 0:
        ints[H_NALLOC] += 1
    m = ((1 << width) - 1) << s
    if ints[H_DEBUG] != 0:  # an independent look at the renaming table: nobody else holds these slices
        o_p, o_m = ints[H_O_RTP], ints[H_O_RTM]
        for j in range(ints[H_O_RTM] - ints[H_O_RTP]):
            if ints[o_p + j] == p and ints[o_m + j] & m:
                ints[C_OVERLAP] += 1
    ints[used] |= m
    ints[ints[rtp] + warp * R + reg] = p
    ints[ints[H_O_RTM] + warp * R + reg] = m
    ints[C_ALLOCS] += 1
    return p


@njit(cache=True)
def _scan_empty(ints, b0, nb):
    nbt = ints[H_NBT]
    per = ints[H_P] // nbt
    o = ints[H_O_USED]
    for e in range(per):
        for b in range(b0, b0 + nb):
            p = e * nbt + b
            if ints[o + p] == 0:
                return p, 0
    return -1, -1


@njit(cache=True)
def _scan_policy(ints, b0, nb, width, pref):
    nbt = ints[H_NBT]
    per = ints[H_P] // nbt
    o = ints[H_O_USED]
    for attempt in range(2):
        want = pref if attempt == 0 else DONT_CARE
        for e in range(per):
            for b in range(b0, b0 + nb):
                p = e * nbt + b
                s = _place(ints[o + p], width, want)
                if s >= 0:
                    return p, s
        if pref == DONT_CARE:
            break
    return -1, -1


@njit(cache=True)
def free_reg(ints, warp, reg, cycle):
    """Release the slices of ``reg`` of ``warp`` (no-op when unmapped); returns 1 if it was mapped."""
    i = warp * ints[H_R] + reg
    p = ints[ints[H_O_RTP] + i]
    if p < 0:
        return 0
    _tick(ints, cycle)
    used = ints[H_O_USED] + p
    ints[used] &= ~ints[ints[H_O_RTM] + i]
    if ints[used] == 0:
        ints[H_NALLOC] -= 1
    ints[ints[H_O_RTP] + i] = -1
    ints[ints[H_O_RTM] + i] = 0
    return 1


@njit(cache=True)
def write_reg(ints, warp, reg, width, cycle):
    """A ``width``-byte value written to ``reg``: first write allocates; a wider value than its slices
    reallocates (counted); a narrower one keeps the mapping.  Returns the physical register (-1: none)."""
    i = warp * ints[H_R] + reg
    p = ints[ints[H_O_RTP] + i]
    if p >= 0:
        m = ints[ints[H_O_RTM] + i]
        have = 0
        for b in range(4):
            have += (m >> b) & 1
        if width <= have:
            return p
        free_reg(ints, warp, reg, cycle)
        ints[C_REALLOC] += 1
    return alloc_reg(ints, warp, reg, width, cycle)


@njit(cache=True)
def can_coalesce(ints, p1, m1, p2, m2):
    """Whether two mapped sources are read with one access: the same entry (CORF), or one bank and
    disjoint masks (CORF++)."""
    mode = ints[H_COAL]
    if mode == 0 or p1 < 0 or p2 < 0:
        return False
    if p1 == p2:
        return True
    return mode == 2 and phys_bank(ints, p1) == phys_bank(ints, p2) and (m1 & m2) == 0


# ---------------------------------------------------------------------------- simulator hooks
@njit(cache=True)
def rt_bank(ints, warp, reg):
    """The RT bank holding (warp, reg)'s entry: one RT bank per register bank, the entry in the bank the
    architectural register is allocated in (the warp's bank with ``warp_bank``, else the SM's mapping)."""
    if ints[H_WBANK] != 0:
        b0, _ = _home_banks(ints, warp)
        return b0
    return standard_bank(ints, warp, reg)


@njit(cache=True)
def rt_lookup(ints, warp, reg, cycle):
    """One RT read lookup in ``cycle``: its delay in cycles when its RT bank's ports are taken (lookups
    are served in the order they come, ``rt_ports`` per bank and cycle; counted)."""
    ports = ints[H_RT_PORTS]
    if ports <= 0:
        return 0
    o = ints[H_O_RTB] + 2 * rt_bank(ints, warp, reg)
    if ints[o] < cycle:  # (first cycle with a free port, ports taken in it)
        ints[o] = cycle
        ints[o + 1] = 0
    d = ints[o] - cycle
    ints[o + 1] += 1
    if ints[o + 1] >= ports:
        ints[o] += 1
        ints[o + 1] = 0
    if d > 0:
        ints[C_RT_CONF] += 1
        ints[C_RT_DELAY] += d
    return d


@njit(cache=True)
def corf_operand(ints, floats, warp, row, k, reg, cycle):
    """A source operand at collector allocation: the RT lookup, then one bank access unless it coalesces
    with an earlier source of the instruction that has no partner yet (then it arrives with that read:
    no bank access, no collector port)."""
    w1 = ints[ints[H_O_ROWS] + 2 * row + 1]
    if ints[H_CUR_ROW] != row:
        ints[H_CUR_ROW] = row
        ints[H_CUR_N] = 0
        ints[H_CUR_COAL] = 0
        if (w1 >> 48) & 15 >= 2:
            ints[C_MULTI] += 1
    ints[C_SRC] += 1
    if reg == NONE:
        return standard_bank(ints, warp, reg)
    ints[C_RT_R] += 1
    delay = rt_lookup(ints, warp, reg, cycle)
    i = warp * ints[H_R] + reg
    p = ints[ints[H_O_RTP] + i]
    m = ints[ints[H_O_RTM] + i]
    scr = H_O_SCR
    o = ints[scr]
    n = ints[H_CUR_N]
    res = 0
    if p < 0:
        ints[C_UNMAPPED] += 1
        res = standard_bank(ints, warp, reg)
    else:
        res = phys_bank(ints, p)
        for j in range(n):
            pj = ints[o + 2 * j]
            mj = ints[o + 2 * j + 1]
            if mj >> 8 == 0 and can_coalesce(ints, pj, mj & 15, p, m):
                ints[o + 2 * j + 1] = mj | 256
                ints[C_SAVED] += 1
                if ints[H_CUR_COAL] == 0:
                    ints[H_CUR_COAL] = 1
                    ints[C_COAL] += 1
                res = -1
                break
    if n < MAX_SRC:
        ints[o + 2 * n] = p
        ints[o + 2 * n + 1] = m | (256 if res < 0 else 0)
        ints[H_CUR_N] = n + 1
    if ints[H_VIRT] != 0 and (w1 >> (16 + k)) & 1:
        ints[C_DEAD] += free_reg(ints, warp, reg, cycle)
    if delay > 0:  # the RT port conflict delays the read (a coalesced one: its arrival)
        return -(1 + delay) if res < 0 else res + delay * OPERAND_DELAY
    return res


@njit(cache=True)
def corf_write(ints, floats, warp, row, k, reg, cycle):
    """Width detection and allocation at write-back; the value is written to its physical register's
    bank (a partial write of its slices)."""
    ints[C_VALUES] += 1
    ints[C_RT_W] += 1
    w = 4
    if k < MAX_DST:
        w = (ints[ints[H_O_ROWS] + 2 * row + 1] >> (32 + 4 * k)) & 15
    if w == 0:
        ints[C_UNKNOWN] += 1
        w = 4
    ints[C_BYTES] += w  # the byte slices written (a partial write of the physical register)
    p = write_reg(ints, warp, reg, w, cycle)
    if p < 0:
        return standard_bank(ints, warp, reg)
    bank = phys_bank(ints, p)
    if ints[H_VIRT] != 0 and k < MAX_DST and (ints[ints[H_O_ROWS] + 2 * row + 1] >> (52 + k)) & 1:
        ints[C_DEAD_DEF] += free_reg(ints, warp, reg, cycle)  # a value nobody reads: freed once written
    return bank


@njit(cache=True)
def corf_activate(ints, floats, warp, cta, sched, x, cycle):
    _tick(ints, cycle)
    ints[H_ACTIVE] += 1
    return 0


@njit(cache=True)
def corf_deactivate(ints, floats, warp, cta, sched, x, cycle):
    """A finished warp's registers are released."""
    _tick(ints, cycle)
    ints[H_ACTIVE] -= 1
    for r in range(ints[H_R]):
        ints[C_EXIT] += free_reg(ints, warp, r, cycle)
    return 0


HOOKS = SimHooks(operand=corf_operand, write=corf_write, activate=corf_activate, deactivate=corf_deactivate)


# ---------------------------------------------------------------------------- state layout
def new_state(
    *,
    phys: int,
    banks: int,
    warps: int,
    regs: int,
    coalesce: int = 2,
    alloc: int = 2,
    warp_bank: int = 1,
    virtualize: int = 1,
    partner=None,
    align=None,
    rows=None,
    header=None,
    banks_per_group: int | None = None,
    split: int = 0,
    schedulers: int = 1,
    debug: int = 0,
    rt_ports: int = 0,
) -> np.ndarray:
    """The int state the hooks and the allocator run on: header, counters, renaming table (physical
    register, mask), free map (used bytes per physical register), hints, per-row words, scratch."""
    if phys % banks:
        raise RfmodelError(f"design 'corf': {phys} physical registers do not split over {banks} banks")
    rows = np.zeros(0, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    h = np.zeros(HEADER_LEN, dtype=np.int64)
    if header is not None:
        h[:BANK_HEADER_LEN] = header
    else:
        h[:BANK_HEADER_LEN] = [2, banks, banks, 0, schedulers, 0]
    n_rt = warps * regs
    o = HEADER_LEN
    offs = {}
    for name, size in (
        ("rtp", n_rt),
        ("rtm", n_rt),
        ("used", phys),
        ("part", NONE),
        ("align", NONE),
        ("rows", len(rows)),
        ("scr", SCRATCH),
        ("rtb", 2 * banks),
    ):
        offs[name] = (o, size)
        o += size
    ints = np.zeros(o, dtype=np.int64)
    ints[:HEADER_LEN] = h
    vals = {
        H_COAL: coalesce,
        H_ALLOC: alloc,
        H_WBANK: warp_bank,
        H_VIRT: virtualize,
        H_P: phys,
        H_NBT: banks,
        H_NB: banks if banks_per_group is None else banks_per_group,
        H_SPLIT: split,
        H_SCHEDS: schedulers,
        H_R: regs,
        H_O_RTP: offs["rtp"][0],
        H_O_RTM: offs["rtm"][0],
        H_O_USED: offs["used"][0],
        H_O_PART: offs["part"][0],
        H_O_ALIGN: offs["align"][0],
        H_O_ROWS: offs["rows"][0],
        H_CUR_ROW: -1,
        H_DEBUG: debug,
        H_RT_PORTS: rt_ports,
        H_O_RTB: offs["rtb"][0],
    }
    for k, v in vals.items():
        ints[k] = v
    ints[H_O_SCR] = offs["scr"][0]
    ints[offs["rtp"][0] : offs["rtp"][0] + n_rt] = -1
    part = np.full(NONE, -1, dtype=np.int64) if partner is None else np.asarray(partner, dtype=np.int64)
    al = np.zeros(NONE, dtype=np.int64) if align is None else np.asarray(align, dtype=np.int64)
    ints[offs["part"][0] : offs["part"][0] + NONE] = part
    ints[offs["align"][0] : offs["align"][0] + NONE] = al
    ints[offs["rows"][0] : offs["rows"][0] + len(rows)] = rows
    return ints


class Allocator:
    """The runtime allocator on its own (the simulator runs the same compiled functions): a renaming
    table, a free map of byte slices and the coalescing rule, for tests and tools."""

    def __init__(
        self,
        phys: int,
        banks: int = 1,
        warps: int = 1,
        regs: int = 64,
        *,
        coalesce="sub-banks",
        alloc="align",
        warp_bank=1,
        partner=None,
        align=None,
    ):
        self.ints = new_state(
            phys=phys,
            banks=banks,
            warps=warps,
            regs=regs,
            coalesce=COALESCE.index(coalesce),
            alloc=ALLOC.index(alloc),
            warp_bank=warp_bank,
            partner=partner,
            align=align,
            debug=1,
        )
        self.t = 0

    def write(self, reg: int, width: int, warp: int = 0) -> int:
        self.t += 1
        return int(write_reg(self.ints, warp, reg, width, self.t))

    def free(self, reg: int, warp: int = 0) -> None:
        self.t += 1
        free_reg(self.ints, warp, reg, self.t)

    def mapping(self, reg: int, warp: int = 0) -> tuple[int, int]:
        """(physical register, 4-bit mask; bit 3 = B3) of a register; (-1, 0) when unmapped."""
        i = warp * self.ints[H_R] + reg
        return int(self.ints[self.ints[H_O_RTP] + i]), int(self.ints[self.ints[H_O_RTM] + i])

    def coalesce(self, a: int, b: int, warp: int = 0) -> bool:
        pa, ma = self.mapping(a, warp)
        pb, mb = self.mapping(b, warp)
        return bool(can_coalesce(self.ints, pa, ma, pb, mb))

    def used(self) -> np.ndarray:
        o = self.ints[H_O_USED]
        return self.ints[o : o + self.ints[H_P]].copy()

    def counter(self, name: str) -> int:
        return int(self.ints[C[name]])

    def check(self) -> None:
        """No two mapped registers overlap in a physical register's slices, and the free map is the
        union of the mapped masks."""
        check_state(self.ints)


def check_state(ints) -> None:
    n = ints[H_R]
    P = ints[H_P]
    rtp = ints[ints[H_O_RTP] : ints[H_O_RTP] + len_rt(ints)]
    rtm = ints[ints[H_O_RTM] : ints[H_O_RTM] + len_rt(ints)]
    acc = np.zeros(P, dtype=np.int64)
    for i in np.flatnonzero(rtp >= 0):
        p, m = rtp[i], rtm[i]
        if acc[p] & m:
            raise AssertionError(f"register {i % n} of warp {i // n} overlaps in physical register {p}")
        acc[p] |= m
    used = ints[ints[H_O_USED] : ints[H_O_USED] + P]
    if not np.array_equal(acc, used):
        raise AssertionError("the free map differs from the renaming table's masks")
    if int((used != 0).sum()) != ints[H_NALLOC]:
        raise AssertionError("allocated physical registers miscounted")


def len_rt(ints) -> int:
    return int(ints[H_O_RTM] - ints[H_O_RTP])


def _row_words(trace, dead, dead_def_regs=None) -> np.ndarray:
    """Two words per row: sources 0-7 (8 bits each); sources 8-9 (bits 0-15), dead bits (16-25), the
    written values' width classes in write order (4 bits each from bit 32), register sources (48-51), the
    written values never read, in write order (52-55; ``dead_def_regs`` of the static kernel)."""
    out = source_words(trace, dead)
    dd = np.zeros((0, MAX_DST), dtype=np.int64)
    if dead_def_regs is not None and len(dead_def_regs):
        dd = np.asarray(dead_def_regs, dtype=np.int64)
    _pack_writes(
        np.asarray(trace.src), np.asarray(trace.dst), np.asarray(trace.width), np.asarray(trace.sidx), dd, out
    )
    return out.ravel()


@njit(cache=True)
def _pack_writes(src, dst, width, sidx, dead_defs, out):  # pragma: no cover - compiled
    """:func:`_row_words`' bits from 32 up in word 1 of ``out``: the k-th written destination (column
    order) gives its width class (clipped to 0-4) at bit 32 + 4k and, where ``dead_defs`` (per static
    instruction, NONE-padded) holds its register, bit 52 + k; the register sources (at most 15) at 48."""
    n_static = dead_defs.shape[0]
    for i in range(src.shape[0]):
        w1 = out[i, 1]
        s = np.int64(sidx[i])
        k = 0
        for j in range(dst.shape[1]):
            r = np.int64(dst[i, j])
            if r == NONE:
                continue
            w = min(max(np.int64(width[i, j]), 0), 4)
            w1 |= w << (32 + 4 * k)
            if 0 <= s < n_static:
                for c in range(dead_defs.shape[1]):
                    if dead_defs[s, c] == r:
                        w1 |= np.int64(1) << (52 + k)
                        break
            k += 1
        n = 0
        for j in range(src.shape[1]):
            if src[i, j] != NONE:
                n += 1
        out[i, 1] = w1 | (np.int64(min(n, 15)) << 48)


def dead_def_registers(kernel) -> np.ndarray:
    """``[instructions, MAX_DST]``: the destination registers whose written value no instruction reads
    (the compiler's liveness: not live after the write), NONE elsewhere."""
    from rfmodel.compiler.liveness import dead_defs

    out = np.full((len(kernel.instrs), MAX_DST), NONE, dtype=np.int64)
    for i, (ins, flags) in enumerate(zip(kernel.instrs, dead_defs(kernel), strict=True)):
        regs = [int(r) for r, f in zip(ins.dst, flags, strict=True) if f and 0 <= int(r) < NONE]
        out[i, : min(len(regs), MAX_DST)] = regs[:MAX_DST]
    return out


def value_dead_bits(kernel) -> np.ndarray:
    """Per static instruction, bit k set when the value its k-th source register holds is read for the last
    time: the register is dead after it or the instruction overwrites it (``dead_source_mask(per="value")``;
    virtualization frees its slices before the new value is allocated)."""
    from rfmodel.compiler.liveness import dead_source_mask

    return dead_source_mask(kernel, per="value", max_src=MAX_SRC)


# ============================================================================ the design
CORF_METRICS = (
    "coalesced_share",
    "reads_saved",
    "bank_reads",
    "multi_src_instructions",
    "reallocations",
    "reallocation_share",
    "phys_regs_mean",
    "rf_occupancy",
    "buddy_packed_share",
    "width_known_share",
    "rt_accesses",
    "rt_conflict_share",
    "rt_delay_cycles",
    "metadata_instructions",
    "code_size_increase",
    "metadata_issued",
    "ipc_program",
    "rf_active_fraction",
    "bytes_per_value",
)


# ----------------------------------------------------------------------------------- profile tables
@njit(cache=True)
def _source_pairs(wp, dst, src, width):
    """(multi-source instructions, those with a register in two slots, those with two sources whose values
    fit one 4-byte entry and no such repeat), each warp in program order."""
    multi = 0
    same = 0
    fit = 0
    rw = np.full(256, 4, dtype=np.int64)
    ws = np.zeros(src.shape[1], dtype=np.int64)
    rs = np.zeros(src.shape[1], dtype=np.int64)
    for w in range(len(wp) - 1):
        rw[:] = 4
        for r in range(wp[w], wp[w + 1]):
            n = 0
            for k in range(src.shape[1]):
                x = src[r, k]
                if x != NONE:
                    ws[n] = rw[x]
                    rs[n] = x
                    n += 1
            if n >= 2:
                multi += 1
                rep = False
                nar = False
                for i in range(n):
                    for j in range(i + 1, n):
                        if rs[i] == rs[j]:
                            rep = True
                        elif ws[i] + ws[j] <= 4:
                            nar = True
                if rep:
                    same += 1
                elif nar:
                    fit += 1
            for k in range(dst.shape[1]):
                d = dst[r, k]
                if d != NONE:
                    v = width[r, k]
                    rw[d] = 4 if v <= 0 or v > 4 else v
    return multi, same, fit


def source_pair_stats(trace, rank=None, inputs=None) -> dict:
    """The profile's ``source_pairs`` group of ``trace`` (registered below, built on first use): what decides
    how often a coalescing register file reads two sources with one access (a register named twice is one
    entry, and two narrow values can share an entry or a bank's byte-planes) and how many bytes a packed one
    holds.  ``multi_src_share``: the share of the instructions with two or more register source slots; of
    those, ``src_same_reg`` the share that read one register in two slots and ``src_narrow_fit`` the share
    (without such a repeat) with two sources whose values' widths fit one 4-byte entry together (the byte
    widths of the values they read, from the trace's written widths; a value never written or of unknown
    width counts as 4 bytes); ``write_bytes``, the written values' mean byte width over all lanes (the
    trace's ``width`` column, 1-4: the packed slices; unknown: 4).  (The stream order and the SM's inputs do
    not matter.)"""
    n = max(int(trace.n_instrs), 1)
    m, same, fit = _source_pairs(
        trace.warp_ptr.astype(np.int64), trace.dst, trace.src, trace.width.astype(np.int64)
    )
    written = trace.dst != NONE
    width = np.asarray(trace.width)[written].astype(np.float64)
    wbytes = float(np.where((width > 0) & (width <= 4), width, 4.0).mean()) if written.any() else 4.0
    return {
        "multi_src_share": m / n,
        "src_same_reg": same / max(m, 1),
        "src_narrow_fit": fit / max(m, 1),
        "write_bytes": wbytes,
    }


SOURCE_PAIRS = register_table_group(
    TableGroup(
        "source_pairs",
        ("multi_src_share", "src_same_reg", "src_narrow_fit", "write_bytes"),
        source_pair_stats,
    )
)


@register
class Corf(Design):
    name = "corf"
    description = (
        "CORF/CORF++: register packing with coalesced operand reads (compiler pairs or "
        "alignment, dual-addressable byte-plane sub-banks), register virtualization"
    )
    Params = CorfParams
    metrics = CORF_METRICS
    #: CORF (compiler pairs) and first-fit beside the default CORF++, so that each allocation policy's share
    #: of the fitting narrow pairs it coalesces (``corf_coal_pairs``, ``corf_coal_first_fit``) is fitted
    calibration_points = (
        {"coalesce": "same-entry", "alloc": "pairs", "warp_bank": 0},
        {"coalesce": "same-entry", "alloc": "first-fit", "warp_bank": 0},
    )
    #: unallocated physical registers are power-gated: the banks leak in the allocated share only
    leakage_active = {"rf_bank": "rf_active_fraction"}
    calibration_params = {
        **INTERVAL_COEFFICIENTS,
        # of the multi-source instructions with two narrow sources that fit one entry together (the
        # profile's src_narrow_fit), the share the allocation policy places so that they coalesce (a
        # register named twice always does), per allocation policy; the default sweep runs the three
        # (CORF++, CORF, first-fit). Defaults: the paper's coalesced shares, 4 % (first-fit) and 23 %
        # (pairs) against 48 % (C-05, C-06, C-10), scaled to CORF++'s 0.9
        "corf_coal_align": (0.9, 0.3, 1.0),
        "corf_coal_pairs": (0.43, 0.0, 1.0),
        "corf_coal_first_fit": (0.075, 0.0, 1.0),
        # one bank per warp under greedy-then-oldest schedulers: warps sharing a scheduler's issue at once,
        # 1 + k c1 / b (Effects.greedy_spread); 2 fits the default sweep's fermi rows before calibration
        "corf_greedy_spread": (2.0, 0.5, 6.0),
        # allocated physical registers per architectural register of the resident warps without
        # virtualization (the paper's 0.65, C-12; the sweep runs virtualization, so it is not fitted)
        "corf_occupancy_packing": (0.65, 0.1, 1.0),
        # with virtualization: allocated physical registers per live register's written bytes (live
        # registers x bytes / 4 of each value; fragmentation and values held past their last read above 1),
        # per allocation policy: first-fit puts a value in any free slices, pairs keeps a register's other
        # slices for its buddy, align puts a value at its register's right or left end (two values share
        # a register only at opposite ends); the default sweep runs the three (first-fit, CORF, CORF++)
        "corf_live_slices": (1.0, 0.3, 3.0),
        "corf_live_slices_pairs": (1.0, 0.3, 3.0),
        "corf_live_slices_align": (1.0, 0.3, 3.0),
        # a warp's write-backs against its reads the renaming table paces: the share of those reads' cycles
        # a result takes a port in, per write per bank and cycle (write_collisions; 2 fits the default
        # sweep's volta-v100 rows, where a warp's registers sit in its one bank, before calibration)
        "corf_write_collide": (2.0, 0.0, 8.0),
    }
    supports_simulate = True
    needs_trace = True
    compile_params = ("affinity", "loop_weight")
    #: the paper's configurations (Table 1; ``first-fit`` is Fig. 4/13's packing that coalesces what
    #: first-fit happens to pack together)
    presets = {
        "packing": {"coalesce": "none", "alloc": "first-fit", "warp_bank": 0, "virtualize": 0},
        "packing+virt": {"coalesce": "none", "alloc": "first-fit", "warp_bank": 0, "virtualize": 1},
        "first-fit": {"coalesce": "same-entry", "alloc": "first-fit", "warp_bank": 0, "virtualize": 1},
        "CORF": {"coalesce": "same-entry", "alloc": "pairs", "warp_bank": 0, "virtualize": 1},
        "CORF++": {"coalesce": "sub-banks", "alloc": "align", "warp_bank": 1, "virtualize": 1},
    }

    def compile(self, kernel, params, sm, executions=None):
        """Affinity graph, exclusive pairs and alignment of the static kernel, and its dead-operand bits.
        ``executions``: each static instruction's executions per warp (``affinity = "trips"``; without
        them the loop-depth weights)."""
        p = self.resolve(params)
        from dataclasses import replace

        if p.affinity == "trips" and executions is not None:
            graph = kernel_affinity(kernel, executions=executions)
            how = "static affinity graph of the kernel, weighted by its executed trip counts"
        else:
            graph = kernel_affinity(kernel, p.loop_weight)
            how = f"static affinity graph of the kernel, loop_weight {p.loop_weight} per loop level"
        prog = replace(
            hints(graph, how),
            static_instructions=len(kernel.instrs),
            dead_def_regs=dead_def_registers(kernel),
        )
        return prog, value_dead_bits(kernel)

    def program_for(self, trace, params: dict | CorfParams, sm, kernel=None):
        """The compiler pass over the trace's static kernel, with each static instruction's executions per
        warp in the trace as its affinity weight (``affinity = "trips"``)."""
        from rfmodel.workload.static import static_kernel

        k = static_kernel(trace, kernel)
        if k is None:
            return None
        p = self.resolve(params)
        ex = None
        if p.affinity == "trips":
            sidx = np.asarray(trace.sidx, dtype=np.int64)
            warps = max(int((np.diff(np.asarray(trace.warp_ptr)) > 0).sum()), 1)
            ex = np.bincount(sidx[sidx >= 0], minlength=len(k.instrs))[: len(k.instrs)] / warps
        return self.compile(k, p, sm, executions=ex)

    # ------------------------------------------------------------------ simulator hooks
    def sim_setup(self, sm, p, options, trace=None, program=None):
        if trace is None:
            raise RfmodelError("design 'corf' needs the trace being simulated (the written values' widths)")
        from rfmodel.designs.cerf import _dead_rows

        if program is None:
            program = self.program_for(trace, p, sm)
        meta = 0
        if program is not None and p.alloc == "pairs":
            meta = program[0].metadata_instructions
        run_trace = None
        if p.metadata and meta:  # the metadata instructions run first in every warp (no operands)
            from rfmodel.ir import OpClass
            from rfmodel.trace import prepend_rows

            trace = run_trace = prepend_rows(trace, meta, int(OpClass.MISC))
        if program is None:
            prog = hints(
                trace_affinity(trace), "profiled affinity graph (the trace's first warp; no static kernel)"
            )
            dead, dsrc = _dead_rows(trace, None)
        else:
            prog, static = program
            dead, dsrc = _dead_rows(trace, static)
        src = np.asarray(trace.src)
        dst = np.asarray(trace.dst)
        top = max(
            int(src[src != NONE].max()) + 1 if np.any(src != NONE) else 1,
            int(dst[dst != NONE].max()) + 1 if np.any(dst != NONE) else 1,
        )
        regs = max(int(trace.regs_per_thread), top)
        split = sm.banks_split
        header = header_state(sm, options)
        phys = sm.regs_per_sm // 32
        ints = new_state(
            phys=phys,
            banks=sm.num_banks,
            warps=sm.warps_per_sm,
            regs=regs,
            coalesce=COALESCE.index(p.coalesce),
            alloc=ALLOC.index(p.alloc),
            warp_bank=p.warp_bank,
            virtualize=p.virtualize,
            partner=prog.partner,
            align=prog.align,
            rows=_row_words(trace, dead, prog.dead_def_regs),
            header=header,
            banks_per_group=sm.banks_per_subcore if split else sm.num_banks,
            split=int(split),
            schedulers=sm.schedulers_per_sm,
            debug=int(DEBUG_CHECKS),
            rt_ports=p.rt_ports,
        )
        source = trace.attrs.get("trace_source", trace.attrs.get("source", "?"))
        width = np.asarray(trace.width)[dst != NONE]
        known = float((width > 0).mean()) if width.size else 0.0
        info = {
            "corf_widths": f"trace width column ({source}): {known:.1%} of the written values have a "
            "known width class; the others are allocated full width",
            "corf_hints": f"{prog.source}: {len(prog.pairs)} pairs ({prog.metadata_instructions} metadata "
            f"instructions, counted in code size, {'executed' if run_trace is not None else 'not executed'}"
            f"), {int((prog.align > 0).sum())} aligned registers",
            "corf_liveness": dsrc if p.virtualize else "not used (no virtualization)",
        }
        meta = prog.metadata_instructions if p.alloc == "pairs" else 0
        code = meta / prog.static_instructions if prog.static_instructions else float("nan")
        issued_meta = meta * trace.n_warps if run_trace is not None else 0
        return SimSetup(
            hooks=HOOKS,
            ints=ints,
            counters=dict(C),
            info=info,
            trace=run_trace,
            floats=np.array([meta, code, issued_meta], dtype=np.float64),
        )

    def sim_metrics(self, sm, p, setup, counts):
        reads, writes = float(counts["reads"]), float(counts["writes"])
        bank_r, bank_w = float(counts["bank_read_acc"]), float(counts["bank_write_acc"])
        saved = float(counts["reads_saved"])
        multi = float(counts["multi_src"])
        values = float(counts["values"])
        warp_cyc = float(counts["warp_cycles"])
        regs = float(setup.ints[H_R])
        phys = float(setup.ints[H_P])  # physical registers: the gating's unit
        rt = float(counts["rt_reads"] + counts["rt_writes"])
        allocs = float(counts["allocations"])
        frees = float(
            counts["dead_frees"] + counts["exit_frees"] + counts["dead_def_frees"] + counts["reallocations"]
        )
        cycles = max(float(counts["last_retire"] + 1 if counts["retired"] else 0), 1.0)
        return {
            "coalesced_share": rate(counts["coalesced_instr"], multi),
            "reads_saved": saved,
            "bank_reads": bank_r,
            "multi_src_instructions": multi,
            "reallocations": float(counts["reallocations"]),
            "reallocation_share": rate(counts["reallocations"], values),
            "phys_regs_mean": float(counts["phys_cycles"]) / cycles,
            "rf_active_fraction": min(float(counts["phys_cycles"]) / cycles / max(phys, 1.0), 1.0),
            "rf_occupancy": rate(counts["phys_cycles"], warp_cyc * regs),
            "buddy_packed_share": rate(counts["buddy_packed"], counts["buddy_tries"]),
            "width_known_share": rate(values - counts["unknown_width"], values),
            "rt_accesses": rt,
            "rt_conflict_share": rate(counts["rt_conflicts"], counts["rt_reads"]),
            "rt_delay_cycles": float(counts["rt_delay_cycles"]),
            "metadata_instructions": float(setup.floats[0]),
            "code_size_increase": float(setup.floats[1]),
            "metadata_issued": float(setup.floats[2]),
            "ipc_program": (float(counts["issued"]) - float(setup.floats[2])) / cycles,
            "bytes_per_value": rate(counts["bytes_written"], values),
            "events": corf_events(
                bank_reads=bank_r,
                bank_writes=bank_w,
                reads=reads,
                writes=writes,
                saved=saved,
                rt=(float(counts["rt_reads"]), float(counts["rt_writes"])),
                allocations=allocs,
                frees=frees,
                bytes_per_value=float(counts["bytes_written"]) / values if values else 4.0,
                row_groups=sm.bank_width_bits / 32,
            ),
        }

    # ------------------------------------------------------------------ analytic
    def analytic(self, ctx):
        """Coalesced reads from the profile's source pairs: a multi-source instruction coalesces when it
        names a register twice (any coalescing mode) or, by a calibrated share per allocation policy,
        when two of its sources' values fit one entry (``src_narrow_fit``); each coalesced instruction
        saves one bank read.  CORF++'s warp-per-bank mapping serializes a warp's sources in its bank.
        Occupancy of physical registers: with virtualization the live registers' written bytes (the
        profile's live_regs and write_bytes) times a calibrated factor, without it a packing ratio."""
        pr = ctx.profile.need("source_pairs")
        coal = np.asarray(self.grid_param(ctx.sm, ctx.grid, "coalesce"))
        alloc = np.asarray(self.grid_param(ctx.sm, ctx.grid, "alloc"))
        virt = ctx.param("virtualize")
        realize = np.where(
            alloc == "align",
            ctx.coef["corf_coal_align"],
            np.where(alloc == "pairs", ctx.coef["corf_coal_pairs"], ctx.coef["corf_coal_first_fit"]),
        )
        fit = np.asarray(realize, dtype=np.float64) * pr.src_narrow_fit
        share = np.asarray(np.where(coal == "none", 0.0, pr.src_same_reg + fit), dtype=np.float64)
        saved = share * pr.multi_src_share / max(pr.reads_per_instr, 1e-9)  # per operand read
        wb = ctx.param("warp_bank") > 0
        spread = ctx.coef["corf_greedy_spread"]
        r, w = ctx.reads, ctx.writes
        live = pr.live_regs / max(float(pr.regs_per_thread), 1.0) * pr.write_bytes / 4.0
        slices = np.where(
            alloc == "align",
            ctx.coef["corf_live_slices_align"],
            np.where(alloc == "pairs", ctx.coef["corf_live_slices_pairs"], ctx.coef["corf_live_slices"]),
        )
        occ = np.where(virt > 0, np.minimum(slices * live, 1.0), ctx.coef["corf_occupancy_packing"])
        phys = np.asarray(ctx.grid.get("regs_per_sm", ctx.sm.regs_per_sm), dtype=np.float64) / 32.0
        # the renaming table's lookups come first: one RT bank per register bank (the warp's own with
        # warp_bank, whatever bank the register overflowed to), rt_ports lookups a cycle
        rt = np.asarray(ctx.param("rt_ports"), dtype=np.float64)
        ports = np.asarray(sm_param(ctx.sm, ctx.grid, "bank_rw_ports")) + np.asarray(
            sm_param(ctx.sm, ctx.grid, "bank_read_ports")
        )
        nb = np.asarray(sm_param(ctx.sm, ctx.grid, "num_banks"))
        spread_rows = (
            np.maximum(nb // np.asarray(sm_param(ctx.sm, ctx.grid, "schedulers_per_sm")), 1)
            if ctx.sm.banks_split
            else nb
        )
        rt_rows = np.where(wb, 1, spread_rows)
        t0 = rt_port_terms(pr, spread_rows, rt_rows, ports, rt)
        # the allocator places registers in the physical registers it finds free, whatever their numbers: an
        # instruction's sources fall in the banks of the warp's pool as if at random
        # the results written per instruction through the ports the reads take (none where the banks have
        # write ports of their own)
        w_ports = pr.writes_per_instr * (np.asarray(sm_param(ctx.sm, ctx.grid, "bank_write_ports")) == 0)
        m = ctx.model(Effects(read_share=1.0 - saved, extra_collect=t0["extra"], scattered_banks=True))
        m = _rt_attributed(m, t0, ctx.coef, 1.0 - saved, write_collisions(m["ipc"], w_ports, nb, ctx.coef))
        t = t0
        if np.any(wb):
            # a warp's registers fill its bank first and overflow into its group's other banks: the share
            # at home reads as one bank per warp, the rest as spread over the banks
            t1 = rt_port_terms(pr, 1, 1, ports, rt)
            m1 = ctx.model(
                Effects(
                    read_share=1.0 - saved,
                    warp_per_bank=True,
                    greedy_spread=spread,
                    extra_collect=t1["extra"],
                )
            )
            # only the banks that hold a warp take its results
            used = np.minimum(nb, np.maximum(m1["warps"], 1.0))
            m1 = _rt_attributed(
                m1, t1, ctx.coef, 1.0 - saved, write_collisions(m1["ipc"], w_ports, used, ctx.coef)
            )
            per_warp = occ * max(float(pr.regs_per_thread), 1.0)
            home = np.where(wb, home_share(per_warp, m1["warps"], phys, nb), 0.0)
            m = blend_models(m, m1, home)
            t = {k: home * t1[k] + (1.0 - home) * t0[k] for k in t0}
        # the allocated share of the file: occupancy x the resident warps' registers / the file's
        active = np.clip(occ * m["warps"] * max(float(pr.regs_per_thread), 1.0) / phys, 0.0, 1.0)
        nan = np.full(np.shape(saved), np.nan) + 0 * r
        metrics = {
            "coalesced_share": share + 0 * r,
            "reads_saved": r * saved,
            "bank_reads": r * (1.0 - saved),
            "multi_src_instructions": ctx.n * pr.multi_src_share + 0 * saved,
            "reallocations": nan,
            "reallocation_share": nan,
            "phys_regs_mean": nan,
            "rf_occupancy": occ + 0 * r,
            "buddy_packed_share": nan,
            "width_known_share": nan,
            "rt_accesses": r + w,
            "rt_conflict_share": t["delayed"] / max(pr.reads_per_instr, 1e-9) + 0 * r,
            "rt_delay_cycles": ctx.n * t["delay"] + 0 * r,
            "metadata_instructions": nan,
            "code_size_increase": nan,
            "metadata_issued": nan,
            "ipc_program": nan,
            "rf_active_fraction": active + 0 * r,
            "bytes_per_value": pr.write_bytes + 0 * r,
        }
        # the free map: with virtualization every value is allocated and freed; without, each of a warp's
        # registers once
        allocs = np.where(virt > 0, w, np.minimum(w, float(pr.n_warps) * max(float(pr.regs_per_thread), 1.0)))
        events = corf_events(
            bank_reads=r * (1.0 - saved),
            bank_writes=w,
            reads=r,
            writes=w,
            saved=r * saved,
            rt=(r, w),
            allocations=allocs,
            frees=allocs,
            bytes_per_value=pr.write_bytes,
            row_groups=ctx.sm.bank_width_bits / 32,
        )
        return ctx.result(m, events=events, metrics=metrics)

    # ------------------------------------------------------------------ energy and area
    def structures(self, sm, grid, tech):
        """The baseline's banks (written a byte slice at a time), collectors and crossbar, plus the
        renaming table (one bank per register bank, dual-ported), the free map of byte slices and the
        packing logic, from the technology layer at the chosen node (``rfmodel.tech.structures``)."""
        from rfmodel.tech.structures import free_map, packing_logic, renaming_table

        bank, coll, xbar = sm_structures(sm, grid, tech)
        node = tech.get("node_nm", 45)
        cell = tech.get("cell", "sram-hp")
        entries = sm.warps_per_sm * sm.max_regs_per_thread
        phys = np.asarray(sm_param(sm, grid, "regs_per_sm")) // 32

        def rt_at(banks, phys):
            # an entry: the physical register's number and the 4-bit allocation mask
            bits = max(int(np.ceil(np.log2(max(phys, 2)))), 1) + 4
            return renaming_table(entries, bits, banks, node_nm=node, read_ports=2, cell=cell).structure(
                "renaming_table", copies=banks
            )

        rt = structure_over_grid(
            "renaming_table", {"banks": sm_param(sm, grid, "num_banks"), "phys": phys}, rt_at
        )
        fm = free_map(int(np.max(phys)) * 4, node_nm=node, cell=cell).structure("free_map")
        logic = packing_logic(sm.collectors.total, sm.threads_per_warp * 32, node_nm=node).structure(
            "packing_logic"
        )
        return [bank, coll, xbar, rt, fm, logic]


def rt_port_terms(prof, bank_rows, rt_rows, bank_ports, rt_ports) -> dict:
    """Per instruction, the renaming table's lookups against the banks' reads (the simulator's
    ``corf_operand``: each source operand looks its register up first, ``rt_ports`` lookups an RT bank
    serves a cycle, 0 no limit; a lookup beyond them delays its read a cycle).  ``M``, the most operands
    in one bank (or RT bank), from the profile's operand-slot table at ``bank_rows`` and ``rt_rows`` banks
    (1: a warp's one bank).  ``extra``: the cycles the lookups take beyond the bank's,
    ``E[max(ceil(M_rt / rt) - ceil(M / ports), 0)]`` (where the two rows differ, of the means);
    ``bank_share``: 1 where the banks still see the instruction's reads at once and serialize them (no RT
    limit, or more lookups a cycle than bank ports), 0 where the lookups pace them (the RT delays what the
    simulator would else count as bank stalls); ``delay``: the delayed lookups' cycles summed,
    ``E[sum_{i<M_rt} floor(i / rt)]``; ``delayed``: ``E[max(M_rt - rt, 0)]``."""
    table = np.asarray(prof.ser_pmf_slots, dtype=np.float64)
    m = np.arange(table.shape[1], dtype=np.float64)
    rt = np.asarray(rt_ports, dtype=np.float64)[..., None]
    p = np.maximum(np.asarray(bank_ports, dtype=np.float64), 1.0)[..., None]
    free = rt <= 0
    r1 = np.maximum(rt, 1.0)
    bank = table[np.clip(np.asarray(bank_rows, dtype=np.int64), 1, table.shape[0] - 1)]
    look = table[np.clip(np.asarray(rt_rows, dtype=np.int64), 1, table.shape[0] - 1)]
    c_rt = np.where(free, np.minimum(m, 1.0), np.ceil(m / r1))
    q = np.floor(m / r1)
    sums = np.where(free, 0.0, r1 * q * (q - 1.0) / 2.0 + q * (m - r1 * q))
    same = np.asarray(bank_rows) == np.asarray(rt_rows)
    extra_same = (look * np.maximum(c_rt - np.ceil(m / p), 0.0)).sum(axis=-1)
    extra_mean = np.maximum((look * c_rt).sum(axis=-1) - (bank * np.ceil(m / p)).sum(axis=-1), 0.0)
    return {
        "extra": np.where(same, extra_same, extra_mean),
        "bank_share": np.where(free[..., 0] | (rt[..., 0] > p[..., 0]), 1.0, 0.0),
        "excess": (bank * np.maximum(np.ceil(m / p) - 1.0, 0.0)).sum(axis=-1),
        "delay": (look * sums).sum(axis=-1),
        "delayed": np.where(free[..., 0], 0.0, (look * np.maximum(m - r1, 0.0)).sum(axis=-1)),
    }


def write_collisions(ipc, writes, banks, coef):
    """The share of an RT-paced read's cycles in which a result written back takes a port of its bank:
    ``corf_write_collide`` times the bank's writes per cycle (``writes`` per instruction through the read
    ports at ``ipc``, over ``banks`` banks; at most 1).  The coefficient (calibrated) is the correlation of
    a warp's write-backs with its reads: its results land in the bank its next instructions read from,
    while it issues, more often than their mean rate says."""
    rate = np.asarray(ipc, dtype=np.float64) * writes / np.maximum(np.asarray(banks, np.float64), 1.0)
    return np.clip(np.asarray(coef["corf_write_collide"]) * rate, 0.0, 1.0)


def _rt_attributed(m: dict, terms: dict, coef, read_share, collide) -> dict:
    """The interval model's outputs ``m`` with the bank stalls the RT lookups pace taken out where
    ``terms["bank_share"]`` is 0: of the serialization part of ``conflict_per_instr`` (``ser_stall`` per
    cycle beyond the first, of the reads that reach the banks), the share ``1 - collide``.  A read whose
    lookup waits for an RT port is not ready for its bank while it waits (the simulator counts those cycles
    as ``rt_delay_cycles``, not as bank stalls), and the bank would have served its instruction's earlier
    reads first anyway; but where a result written back takes a port of the bank when the delay ends (the
    share ``collide`` of the cycles, :func:`write_collisions`) the read waits on, a bank stall.  In the
    simulator the writes are most of it: CORF++ on ``volta-v100`` (two read/write ports a bank, two RT
    ports, every register of a warp in its bank) counts 0.113 stall cycles per instruction on ``saxpy``,
    0.449 on ``sgemm_tiled`` and 0.152 on ``gemm_micro8x8``; 0.000, 0.006 and 0.060 with a write port of
    the banks' own (``bank_write_ports = 1``); 0.193, 0.728 and 0.989 with unlimited RT ports
    (``rt_ports = 0``), at the same IPC."""
    ser = np.asarray(coef["ser_stall"]) * terms["excess"] * np.clip(read_share, 0.0, 1.0)
    paced = (1.0 - terms["bank_share"]) * ser * (1.0 - np.asarray(collide, dtype=np.float64))
    return {**m, "conflict_per_instr": np.maximum(m["conflict_per_instr"] - paced, 0.0)}


def home_share(per_warp, warps, phys, banks):
    """Share of a warp's allocated physical registers (``per_warp``) that its one bank holds when every warp
    allocates in its own bank first (``warp_bank``): ``phys / banks`` registers a bank, shared by
    ``max(1, warps / banks)`` warps; the rest overflow into the other banks of its group.  Sub-cores divide
    banks and warps alike, so the SM's totals give the same ratio."""
    per_bank = np.asarray(phys, dtype=np.float64) / np.maximum(banks, 1)
    sharing = np.maximum(np.asarray(warps, dtype=np.float64) / np.maximum(banks, 1), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = per_bank / (np.asarray(per_warp, dtype=np.float64) * sharing)
    return np.clip(np.where(np.isfinite(h), h, 1.0), 0.0, 1.0)


def blend_models(m0: dict, m1: dict, h) -> dict:
    """The interval model's outputs of a mix of instructions, a share ``h`` as ``m1`` and the rest as
    ``m0``: cycles per instruction (and every other per-instruction term) mix linearly, IPC harmonically."""
    h = np.asarray(h, dtype=np.float64)
    out = {}
    for key, v0 in m0.items():
        v1 = m1[key]
        # (a point without grid axes gives numpy scalars: they mix as the arrays do)
        if key == "warps" or not isinstance(v0, (np.ndarray, np.number, float)):
            out[key] = v0
        elif key == "ipc":
            with np.errstate(divide="ignore", invalid="ignore"):
                inv = h / v1 + (1.0 - h) / v0
                out[key] = np.where((v0 > 0) & (v1 > 0), 1.0 / inv, np.where(h >= 1.0, v1, v0))
        else:  # h = 0 or 1 takes one run whole (an infinite time of the other, e.g. no resident warp, unread)
            with np.errstate(invalid="ignore"):
                mix = h * v1 + (1.0 - h) * v0
            out[key] = np.where(h <= 0.0, v0, np.where(h >= 1.0, v1, mix))
    return out


def corf_events(
    *, bank_reads, bank_writes, reads, writes, saved, rt, allocations, frees, bytes_per_value, row_groups
) -> dict:
    """Both engines' structure events: a bank write enables the written value's byte slices only (its
    ``bytes_per_value`` of 4 bytes of each lane: a partial write of that share of the row's ``row_groups``
    32-bit write-driver groups); every operand read is unpacked and every written value width-detected and
    packed by the logic; an allocation reads and writes the free map, a free writes it."""
    frac = np.asarray(bytes_per_value, dtype=np.float64) / 4.0
    return {
        "rf_bank": {
            "reads": bank_reads,
            "partial_writes": bank_writes,
            "groups_written": bank_writes * frac * row_groups,
        },
        "crossbar": (reads - saved + writes, 0.0),
        "collector": (reads, reads),
        "renaming_table": rt,
        "free_map": (allocations, allocations + frees),
        "packing_logic": (reads, writes),
    }
