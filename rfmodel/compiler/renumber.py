"""Register renumbering against prefetch bank conflicts (LTRFconf).

The prefetch at a register-interval's entry reads its working set from the
main register file; registers of the working set that sit in the same
single-ported bank are read one after the other.  Following "Enabling
High-Capacity, Latency-Tolerant, and Highly-Concurrent GPU Register Files
via Software/Hardware Cooperation" (section 4), a pass after register
allocation and interval formation renames registers so that each working set
spreads over the banks:

1. **Register-live-ranges.**  The webs of :func:`~rfmodel.compiler.liveness.live_ranges`
   (definitions and reads that share values), each with the register-intervals
   that access it.  Webs of the same register that are accessed in a common
   interval are merged into one live range, so that an interval's working
   set maps one-to-one onto the live ranges it accesses and renaming can
   never make it larger.
2. **Interval Conflict Graph (ICG).**  One node per live range; an edge
   joins two live ranges accessed in at least one common interval.
3. **Colouring with ``N_B`` colours** (one per bank), Chaitin-style:
   *simplify* removes the node of smallest remaining degree (any node of
   degree below ``N_B`` first, as in Chaitin's algorithm; when none is left
   the smallest-degree node is removed optimistically -- nothing is spilled);
   ties remove the highest-numbered node, so the program's first live ranges
   are coloured first.  *Select* pops the nodes and gives each the colour
   that adds the fewest prefetch conflicts (the number of its intervals in
   which that bank already has the largest load), then the colour used by
   the fewest live ranges so far -- the balancing rule: while colours are
   free of neighbours, the banks fill evenly -- then the live range's
   current bank, then the lowest bank number.
4. **Renumbering.**  "No register has been allocated" and each live range
   takes a free register of its colour's bank: its own register if free, else
   the lowest free one.  A register is free when no live range already placed
   on it interferes (is live where this one is defined or is live).  The live
   ranges are placed in program order (by their first definition or read),
   the order in which a linear scan allocates, because the kernels' register
   counts are tight (they come from an allocator that used them up) and
   placing them in colouring order often runs out of registers.  When the
   colour's bank has no free register, the other banks are tried in the
   order of step 3's ranking, computed from the registers placed so far.

Live ranges whose value may come from before the kernel (a read with no
definition on some path) keep their register: the value arrives there.
Unreachable code is left as it is: live ranges that touch it keep their
registers, and so does every live range of a register it reads or writes, or
that a function it calls (and those that one calls) reads or writes, which no
other live range may take (reaching definitions still flow through dead code,
and from a callee into the return site of a dead call, so the renamed code
could otherwise see different definitions).  If
some live range finds no free register at all, or the renumbering would raise
the total prefetch conflicts, the kernel is returned unchanged
(``applied=False``).

Register groups (64/128-bit operands) are renamed register by register, as
the IR lists them expanded; the result does not keep groups aligned and
consecutive, which real hardware requires -- it is a model of the bank
assignment, not a code generator.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable
from dataclasses import dataclass

from rfmodel.compiler.cfg import _function_entries, intra_succs
from rfmodel.compiler.liveness import Liveness, bits, live_ranges, liveness, mask, union_root
from rfmodel.compiler.reg_intervals import RegisterIntervals
from rfmodel.errors import RfmodelError
from rfmodel.ir import Kernel

__all__ = [
    "KernelFacts",
    "RegisterLiveRange",
    "Renumbering",
    "bank_conflicts",
    "kernel_facts",
    "prefetch_sets",
    "register_live_ranges",
    "renumber",
]


def _bank_fn(n_banks: int, bank: Callable[[int], int] | None) -> Callable[[int], int]:
    if isinstance(n_banks, bool) or not isinstance(n_banks, int) or n_banks < 1:
        raise RfmodelError(f"n_banks must be an integer >= 1, got {n_banks!r}")
    if bank is None:
        return lambda r: r % n_banks
    return bank


# --------------------------------------------------------------------------------------------------
# prefetch sets and conflicts


def prefetch_sets(
    kernel: Kernel, intervals: RegisterIntervals, *, live: Liveness | None = None, live_only: bool = False
) -> list[frozenset[int]]:
    """The registers each interval's prefetch reads, from ``kernel``'s instructions.

    The working set: every GPR the interval's instructions read or write
    (recomputed from ``kernel``, which may be a renumbered copy with the same
    instructions).  ``live_only``: only those live at the entry (the
    liveness-aware variant fetches dead registers not at all).
    """
    if len(kernel.instrs) != len(intervals.interval_of):
        raise RfmodelError("prefetch_sets: the kernel and the intervals have different instruction counts")
    out = []
    if live_only and live is None:
        live = liveness(kernel)
    for iv in intervals.intervals:
        m = 0
        for s, e in iv.ranges:
            for i in range(s, e):
                ins = kernel.instrs[i]
                m |= mask(ins.src) | mask(ins.dst)
        if live_only:
            m &= live.live_in[iv.entry] if iv.n_instrs else 0
        out.append(frozenset(bits(m)))
    return out


def bank_conflicts(regs, n_banks: int = 16, bank: Callable[[int], int] | None = None) -> int:
    """Prefetch bank conflicts of one register set: the largest bank load minus one (0 if empty).

    A set with ``k`` conflicts needs ``k + 1`` serial accesses to the most
    loaded bank.  ``bank`` maps a register to its bank (default
    ``reg % n_banks``).
    """
    fn = _bank_fn(n_banks, bank)
    load: dict[int, int] = {}
    for r in regs:
        b = fn(r)
        load[b] = load.get(b, 0) + 1
    return max(load.values()) - 1 if load else 0


# --------------------------------------------------------------------------------------------------
# register-live-ranges


@dataclass(frozen=True)
class RegisterLiveRange:
    """A renumbering unit: webs of one register joined through the intervals that access them.

    ``webs`` are ids into ``live_ranges(kernel)``; ``intervals`` the intervals
    whose instructions define or read one of them; ``pinned``: the register
    cannot change -- the value may come from before the kernel, or the live
    range touches code that cannot be reached from the kernel's entry, or its
    register is named there.
    """

    id: int
    reg: int
    webs: tuple[int, ...]
    intervals: frozenset[int]
    pinned: bool


def _reachable_instrs(kernel: Kernel) -> set[int]:
    """Instructions on a valid path from the kernel's entry (a ``RET`` returns to its own call site).

    This is the reachability the reaching definitions of
    :mod:`rfmodel.compiler.liveness` see: a return site is reached when its
    call is and the callee can return (or the call is guarded, or the callee
    unknown).
    """
    if not kernel.blocks:
        return set()
    blocks = kernel.blocks
    entries = _function_entries(kernel)
    entry_func = {e: f for f, e in entries.items()}
    seen: set[int] = set()
    work: list[int] = []
    returns: set[str] = set()
    waiting: dict[str, list[int]] = {}

    def mark(b: int) -> None:
        if b not in seen:
            seen.add(b)
            work.append(b)

    mark(entries[blocks[0].func])
    while work:
        b = blocks[work.pop()]
        last = kernel.instrs[b.end - 1] if b.end > b.start else None
        for s in intra_succs(kernel, b):
            if s != b.call_return:
                mark(s)
        if b.call_return is not None:
            callee = next((entry_func[t] for t in b.succs if t in entry_func and t != b.call_return), None)
            if callee is not None:
                mark(entries[callee])
            if callee is None or callee in returns or (last is not None and last.guard is not None):
                mark(b.call_return)
            else:
                waiting.setdefault(callee, []).append(b.call_return)
        elif last is not None and last.base == "RET" and b.func not in returns:
            returns.add(b.func)
            for r in waiting.pop(b.func, []):
                mark(r)
    return {i for b in seen for i in range(blocks[b].start, blocks[b].end)}


def _frozen_regs(kernel: Kernel, reach: set[int]) -> set[int]:
    """Registers that unreachable code reads or writes, or that a function it calls does.

    Reaching definitions still flow through dead code (from its writes, and
    from a callee into the return site of a call that is never made), so
    renaming into or out of such a register could change which definitions
    some read sees; these registers stay as they are.  A function called from
    dead code may itself be reachable (called elsewhere too): its writes reach
    the dead call's return site all the same.
    """
    regs = {r for i, ins in enumerate(kernel.instrs) if i not in reach for r in ins.dst + ins.src}
    entry_func = {e: f for f, e in _function_entries(kernel).items()}

    def callee(b) -> str | None:
        return next((entry_func[t] for t in b.succs if t in entry_func and t != b.call_return), None)

    work = [
        f
        for b in kernel.blocks
        if b.call_return is not None and b.end > b.start and (b.end - 1) not in reach
        for f in (callee(b),)
        if f is not None
    ]
    done: set[str] = set()
    while work:
        f = work.pop()
        if f in done:
            continue
        done.add(f)
        for b in kernel.blocks:
            if b.func == f:
                regs.update(r for ins in kernel.instrs[b.start : b.end] for r in ins.dst + ins.src)
                if b.call_return is not None and callee(b) is not None:
                    work.append(callee(b))
    return regs


def register_live_ranges(kernel: Kernel, intervals: RegisterIntervals, webs=None) -> list[RegisterLiveRange]:
    """The register-live-ranges of ``kernel`` over ``intervals`` (step 1 of the renumbering)."""
    webs = live_ranges(kernel) if webs is None else webs
    reach = _reachable_instrs(kernel)
    return _register_live_ranges(webs, intervals, reach, _frozen_regs(kernel, reach))


def _register_live_ranges(webs, intervals: RegisterIntervals, reach, frozen) -> list[RegisterLiveRange]:
    ivl = intervals.interval_of
    parent = list(range(len(webs)))

    where: list[set[int]] = []
    seen: dict[tuple[int, int], int] = {}  # (register, interval) -> first web accessed there
    for w in webs:
        acc = {ivl[d] for d in w.defs if d >= 0} | {ivl[i] for i, _k in w.uses}
        where.append(acc)
        for iv in acc:
            other = seen.setdefault((w.reg, iv), w.id)
            ra, rb = union_root(parent, other), union_root(parent, w.id)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for w in webs:
        groups.setdefault(union_root(parent, w.id), []).append(w.id)
    out = []
    for j, root in enumerate(sorted(groups)):
        ws = tuple(sorted(groups[root]))
        acc = set().union(*(where[w] for w in ws))
        pinned = webs[root].reg in frozen or any(
            -1 in webs[w].defs or not reach.issuperset(webs[w].instrs) for w in ws
        )
        out.append(RegisterLiveRange(j, webs[root].reg, ws, frozenset(acc), pinned))
    return out


# --------------------------------------------------------------------------------------------------
# interference


def _interference(kernel: Kernel, webs, live: Liveness) -> list[int]:
    """Per web, the bitset of webs it interferes with.

    Two webs interfere when one is live after an instruction that defines the
    other or after which the other is live too, or when both are written by one
    instruction.  Webs of one register never interfere (different values of a
    register are never live at once).
    """
    at: dict[tuple[int, int], list[int]] = {}  # (register, instruction) -> webs of it spanning it
    def_web: dict[tuple[int, int], int] = {}
    for w in webs:
        for i in w.instrs:
            at.setdefault((w.reg, i), []).append(w.id)
        for d in w.defs:
            if d >= 0:
                def_web[(d, w.reg)] = w.id
    out = [0] * len(webs)
    for i, ins in enumerate(kernel.instrs):
        defined = {def_web[(i, r)] for r in ins.dst if (i, r) in def_web}
        live_after = set()
        dregs = set(ins.dst)
        for r in bits(live.live_out[i]):
            if r in dregs and (i, r) in def_web:
                live_after.add(def_web[(i, r)])
            else:  # not written here: the one value of r live across i
                live_after.update(at.get((r, i), ()))
        group = live_after | defined
        m = mask(group)
        for w in group:
            out[w] |= m
    for w in webs:
        out[w.id] &= ~(1 << w.id)
    return out


# --------------------------------------------------------------------------------------------------
# the renumbering


@dataclass(frozen=True)
class Renumbering:
    """The result of :func:`renumber`.

    ``kernel``: the renumbered copy (new :class:`~rfmodel.ir.Instr`
    objects with renamed ``src``/``dst``; the input is untouched).
    ``live_ranges`` and ``icg`` (adjacency sets, by live-range id) are the
    pass's graph; ``icg_color`` the bank the colouring chose per live range,
    ``color`` the bank of the register it got (they differ where that bank had
    no free register) and ``new_reg`` the register; ``web_reg`` maps every
    web id of ``live_ranges(original)`` to its new register.
    ``conflicts_before``/``conflicts_after``: prefetch bank conflicts per
    interval.  ``applied`` is false when the original numbering was kept.
    """

    kernel: Kernel
    live_ranges: tuple[RegisterLiveRange, ...]
    icg: tuple[frozenset[int], ...]
    icg_color: tuple[int, ...]
    color: tuple[int, ...]
    new_reg: tuple[int, ...]
    web_reg: dict[int, int]
    n_banks: int
    conflicts_before: tuple[int, ...]
    conflicts_after: tuple[int, ...]
    applied: bool

    @property
    def total_before(self) -> int:
        return sum(self.conflicts_before)

    @property
    def total_after(self) -> int:
        return sum(self.conflicts_after)

    def mapping(self) -> dict[int, tuple[int, ...]]:
        """Original register -> the new registers its live ranges got (sorted, distinct)."""
        out: dict[int, set[int]] = {}
        for lr, r in zip(self.live_ranges, self.new_reg, strict=True):
            out.setdefault(lr.reg, set()).add(r)
        return {k: tuple(sorted(v)) for k, v in sorted(out.items())}


def _coloring_order(adj: list[set[int]], skip: set[int]) -> list[int]:
    """Chaitin's simplify with smallest-degree-first removal: the colouring order (stack popped)."""
    deg = {v: len(adj[v] - skip) for v in range(len(adj)) if v not in skip}
    heap = [(d, -v) for v, d in deg.items()]
    heapq.heapify(heap)
    removed: set[int] = set()
    stack = []
    while heap:
        d, nv = heapq.heappop(heap)
        v = -nv
        if v in removed or d != deg[v]:
            continue
        removed.add(v)
        stack.append(v)
        for u in adj[v]:
            if u in deg and u not in removed:
                deg[u] -= 1
                heapq.heappush(heap, (deg[u], -u))
    return stack[::-1]


def _color(lrs, order, pinned, n_banks, fn, by_ivl) -> list[int]:
    """Step 3: a bank per live range, balanced (see the module docstring)."""
    color = [-1] * len(lrs)
    used = [0] * n_banks
    load = {iv: [0] * n_banks for iv in by_ivl}
    peak = dict.fromkeys(by_ivl, 0)  # each interval's largest bank load (loads only grow)

    def give(v: int, c: int) -> None:
        color[v] = c
        used[c] += 1
        _add_load(lrs[v], c, load, peak)

    for v in pinned:
        give(v, fn(lrs[v].reg) % n_banks)
    for v in order:
        lr = lrs[v]
        own = fn(lr.reg) % n_banks
        give(v, min(range(n_banks), key=lambda c, lr=lr, own=own: _cost(lr, c, load, peak, used, own)))
    return color


def _add_load(lr, c: int, load, peak) -> None:
    """Live range ``lr`` placed in bank ``c``: one more register there in each of its intervals."""
    for iv in lr.intervals:
        n = load[iv][c] + 1
        load[iv][c] = n
        if n > peak[iv]:
            peak[iv] = n


def _cost(lr, c: int, load, peak, used, own: int) -> tuple:
    """Ranking of bank ``c`` for live range ``lr``: added conflicts (intervals where ``c`` already holds the
    largest load, ``peak``), summed load, use, own bank, number."""
    added = sum(1 for iv in lr.intervals if load[iv][c] == peak[iv])
    return (added, sum(load[iv][c] for iv in lr.intervals), used[c], c != own, c)


def _assign(lrs, order, color, interf, bank_regs, n_banks, fn, by_ivl) -> list[int] | None:
    """Step 4: a free register per live range, in ``order``; None if one finds no register at all."""
    new_reg = [-1] * len(lrs)
    on_reg: dict[int, int] = {}
    used = [0] * n_banks
    load = {iv: [0] * n_banks for iv in by_ivl}
    peak = dict.fromkeys(by_ivl, 0)
    for v in order:
        lr = lrs[v]
        if lr.pinned:
            choice = lr.reg
        else:
            own = fn(lr.reg) % n_banks
            want = color[v]
            rank = [want] + sorted(
                (c for c in range(n_banks) if c != want),
                key=lambda c, lr=lr, own=own: _cost(lr, c, load, peak, used, own),
            )
            choice = None
            for c in rank:
                free = [r for r in bank_regs.get(c, ()) if not on_reg.get(r, 0) & interf[v]]
                if free:
                    choice = lr.reg if lr.reg in free else free[0]
                    break
            if choice is None:
                return None
        new_reg[v] = choice
        on_reg[choice] = on_reg.get(choice, 0) | (1 << v)
        c = fn(choice) % n_banks
        used[c] += 1
        _add_load(lr, c, load, peak)
    return new_reg


@dataclass(frozen=True, eq=False)
class KernelFacts:
    """What the renumbering reads of a kernel alone, whatever its intervals and banks: the webs, the
    instructions reachable from the entry, the registers frozen by unreachable code, and the webs'
    interference (from the liveness: about three quarters of a pass on a built-in kernel).  Computed once by
    :func:`kernel_facts` and handed to :func:`renumber` for each interval limit and bank count of the same
    kernel object (the facts name it, and another kernel is refused: a ``Kernel`` may be changed in place,
    so they are never looked up by content)."""

    kernel: Kernel
    webs: tuple
    reach: frozenset[int]
    frozen: frozenset[int]
    interference: tuple[int, ...]


def kernel_facts(kernel: Kernel) -> KernelFacts:
    """The :class:`KernelFacts` of ``kernel``."""
    live = liveness(kernel)
    webs = tuple(live_ranges(kernel, live))
    reach = _reachable_instrs(kernel)
    frozen = _frozen_regs(kernel, reach)
    wint = tuple(_interference(kernel, webs, live))
    return KernelFacts(kernel, webs, frozenset(reach), frozenset(frozen), wint)


def renumber(
    kernel: Kernel,
    intervals: RegisterIntervals,
    *,
    n_banks: int = 16,
    bank: Callable[[int], int] | None = None,
    n_regs: int | None = None,
    facts: KernelFacts | None = None,
) -> Renumbering:
    """Rename ``kernel``'s registers so that each interval's prefetch spreads over the banks.

    ``intervals`` partitions ``kernel``'s instructions (from
    :func:`~rfmodel.compiler.reg_intervals.register_intervals` or
    :func:`~rfmodel.compiler.reg_intervals.strands` of this kernel; its split copy
    works the same).  ``bank(reg)`` gives a register's bank (default
    ``reg % n_banks``; banks are ``0 .. n_banks-1``).  Registers ``0 ..
    n_regs-1`` may be used (default: up to the highest register the kernel
    names, so the footprint never grows).  ``facts``: ``kernel``'s own
    :func:`kernel_facts`, when several passes renumber one kernel.  See the
    module docstring for the four steps.
    """
    fn = _bank_fn(n_banks, bank)
    n_regs = kernel.max_reg() + 1 if n_regs is None else int(n_regs)
    if n_regs < kernel.max_reg() + 1:
        raise RfmodelError(f"renumber: n_regs={n_regs} is below the kernel's highest register + 1")
    if facts is None:
        facts = kernel_facts(kernel)
    elif facts.kernel is not kernel:
        raise RfmodelError("renumber: the facts given are another kernel's (kernel_facts of this one)")
    webs = facts.webs
    lrs = _register_live_ranges(webs, intervals, facts.reach, facts.frozen)
    n_lr = len(lrs)
    lr_of_web = [0] * len(webs)
    for lr in lrs:
        for w in lr.webs:
            lr_of_web[w] = lr.id
    # ICG
    by_ivl: dict[int, list[int]] = {}
    for lr in lrs:
        for iv in lr.intervals:
            by_ivl.setdefault(iv, []).append(lr.id)
    adj: list[set[int]] = [set() for _ in lrs]
    for members in by_ivl.values():
        for a in members:
            adj[a].update(members)
    for v in range(n_lr):
        adj[v].discard(v)
    # interference between live ranges
    wint = facts.interference
    interf = [0] * n_lr
    for w in webs:
        m = 0
        for u in bits(wint[w.id]):
            m |= 1 << lr_of_web[u]
        interf[lr_of_web[w.id]] |= m
    before_sets = prefetch_sets(kernel, intervals)
    before = tuple(bank_conflicts(s, n_banks, fn) for s in before_sets)

    frozen = facts.frozen
    bank_regs: dict[int, list[int]] = {}
    for r in range(n_regs):
        if r not in frozen:
            bank_regs.setdefault(fn(r) % n_banks, []).append(r)
    pinned = [lr.id for lr in lrs if lr.pinned]
    order = _coloring_order(adj, set(pinned))
    color = _color(lrs, order, pinned, n_banks, fn, by_ivl)
    icg_color = tuple(color)
    first = [
        min(
            min((d for w in lr.webs for d in webs[w].defs if d >= 0), default=1 << 30),
            min((i for w in lr.webs for i, _k in webs[w].uses), default=1 << 30),
        )
        for lr in lrs
    ]
    place_order = pinned + sorted((v for v in range(n_lr) if not lrs[v].pinned), key=lambda v: (first[v], v))
    new_reg = _assign(lrs, place_order, color, interf, bank_regs, n_banks, fn, by_ivl)
    ok = new_reg is not None
    if ok:
        color = [fn(r) % n_banks for r in new_reg]

    web_reg = {w.id: w.reg for w in webs}
    new_kernel = kernel
    after = before
    if ok:
        web_reg = {w.id: new_reg[lr_of_web[w.id]] for w in webs}
        new_kernel = _rename(kernel, webs, web_reg)
        after = tuple(bank_conflicts(s, n_banks, fn) for s in prefetch_sets(new_kernel, intervals))
        if sum(after) > sum(before):
            ok = False
    if not ok:
        web_reg = {w.id: w.reg for w in webs}
        new_kernel, after = kernel, before
        color = [fn(lr.reg) % n_banks for lr in lrs]
        new_reg = [lr.reg for lr in lrs]
    return Renumbering(
        kernel=new_kernel,
        live_ranges=tuple(lrs),
        icg=tuple(frozenset(a) for a in adj),
        icg_color=icg_color,
        color=tuple(color),
        new_reg=tuple(new_reg),
        web_reg=web_reg,
        n_banks=n_banks,
        conflicts_before=before,
        conflicts_after=after,
        applied=ok,
    )


def _rename(kernel: Kernel, webs, web_reg: dict[int, int]) -> Kernel:
    """A copy of ``kernel`` with every read and write renamed to its web's register."""
    use_web: dict[tuple[int, int], int] = {}
    def_web: dict[tuple[int, int], int] = {}
    for w in webs:
        for i, k in w.uses:
            use_web[(i, k)] = w.id
        for d in w.defs:
            if d >= 0:
                def_web[(d, w.reg)] = w.id
    instrs = []
    for i, ins in enumerate(kernel.instrs):
        src = tuple(web_reg[use_web[(i, k)]] if (i, k) in use_web else r for k, r in enumerate(ins.src))
        dst = tuple(web_reg[def_web[(i, r)]] for r in ins.dst)
        instrs.append(ins if (src, dst) == (ins.src, ins.dst) else dataclasses.replace(ins, src=src, dst=dst))
    return dataclasses.replace(kernel, instrs=instrs, attrs=dict(kernel.attrs))
