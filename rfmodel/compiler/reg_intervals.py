"""Register-intervals (the Latency-Tolerant Register File's prefetch regions) and strands.

A *register-interval* ("Enabling High-Capacity, Latency-Tolerant, and
Highly-Concurrent GPU Register Files via Software/Hardware Cooperation") is a
piece of the control-flow graph with one entry point whose register working
set (the GPRs its instructions read or write) fits a per-warp partition of
``n`` registers in the register-file cache.  A prefetch of the working set
sits at the entry; every register access inside the interval then hits the
cache.

Formation follows the paper's two algorithms:

* **Pass 1** (Algorithm 1) grows an interval from a header.  A block joins
  when all of its predecessors are already in the interval and the
  interval's register list, extended by the block's instructions one by one,
  stays within ``n``; the first instruction that would overflow cuts the
  block, and the rest of it becomes the header of a new interval.  When no
  block can join, every unassigned successor of the interval heads a new
  one.  Function calls are intervals of their own.
* **Pass 2** (Algorithm 2) merges whole intervals: an interval joins the
  growing next-level interval when all its predecessors are inside it and
  the union of the working sets fits.  It is repeated until a pass no longer
  reduces the number of intervals (each repetition removes one level of
  loop nesting when the registers fit, as in the paper's Figure 5).

Where the algorithms as printed leave room (documented in docs/compiler.md):

* the register list a joining block extends is the *interval's* list so far
  (the union of its blocks), not the union of the block's predecessors'
  lists (Algorithm 1, line 15): the whole working set is prefetched at the
  entry, and with the per-path union two branches that never meet could
  each fill ``n`` registers;
* a block whose first instruction does not fit does not join (rather than
  joining with zero instructions);
* one instruction that alone names more than ``n`` registers (a wide tensor
  op with a small ``n``) forms an interval with the instructions around it
  that add no register: that interval's working set is the instruction's;
* Algorithm 2's fit test is on the union of the two working sets (the
  printed line 12 tests the predecessors' lists only);
* a function call is its ``CALL`` instruction alone: the block is cut before
  the call, nothing joins the call's interval, and pass 2 merges neither it
  nor anything into it, so the callee's entry and the return site always
  start intervals.  Formation runs on each function's own graph
  (:func:`rfmodel.compiler.cfg.function_graph`).

*Strands* (the prefetch subgraph the paper compares against, from "A
Compile-Time Managed Multi-Level Register File Hierarchy") are formed by the
same pass 1 with two more cuts: a strand ends before the first instruction
that depends on (reads or overwrites) the result of a long-latency operation
issued in the same strand, and no backward branch stays inside a strand --
the target of a backward branch is always a strand entry, and taking a
backward branch starts a new strand even when it jumps to the entry of the
strand it leaves (``restart_on_back_edge``).  Pass 2 is not applied to
strands.  See :func:`strands`.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from dataclasses import dataclass

import numpy as np

from rfmodel.compiler.cfg import _function_entries, function_names, intra_succs
from rfmodel.compiler.liveness import bits, mask
from rfmodel.errors import RfmodelError
from rfmodel.ir import BasicBlock, Kernel, OpClass

__all__ = [
    "LONG_LATENCY_CLASSES",
    "RegisterInterval",
    "RegisterIntervals",
    "merge_register_intervals",
    "register_intervals",
    "register_intervals_pass1",
    "split_blocks",
    "strands",
]

#: operations whose result arrives after a long, variable latency (through the L1 data cache and
#: beyond: global and local loads -- texture and surface loads are classed ``LD_GLOBAL`` -- and
#: atomics that return a value).  Shared-memory and constant loads, SFU and tensor operations have
#: a short fixed latency and do not end a strand.
LONG_LATENCY_CLASSES = frozenset({OpClass.LD_GLOBAL, OpClass.LD_LOCAL, OpClass.ATOMIC})


# --------------------------------------------------------------------------------------------------
# splitting blocks


def split_blocks(kernel: Kernel, cuts) -> Kernel:
    """A copy of ``kernel`` whose basic blocks also start at every instruction index in ``cuts``.

    The instructions are shared (they are immutable); blocks are renumbered in
    address order.  A block cut into pieces keeps its label, function and
    incoming edges on the first piece and its successors and ``call_return``
    on the last; each other piece falls through to the next.  Cuts at block
    starts or outside the kernel are ignored.  The input is not modified.
    """
    n = len(kernel.instrs)
    want = sorted({int(c) for c in cuts if 0 < int(c) < n})
    pieces: list[tuple[int, int, int]] = []  # (start, end, old block id)
    k = 0
    for b in sorted(kernel.blocks, key=lambda b: (b.start, b.id)):
        while k < len(want) and want[k] <= b.start:
            k += 1
        s = b.start
        while k < len(want) and want[k] < b.end:
            pieces.append((s, want[k], b.id))
            s = want[k]
            k += 1
        pieces.append((s, b.end, b.id))
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for j, (_s, _e, old) in enumerate(pieces):
        first.setdefault(old, j)
        last[old] = j
    old_blocks = {b.id: b for b in kernel.blocks}
    blocks = []
    for j, (s, e, old) in enumerate(pieces):
        ob = old_blocks[old]
        if j == last[old]:
            succs = tuple(first[t] for t in ob.succs)
            cr = first[ob.call_return] if ob.call_return is not None else None
        else:
            succs, cr = (j + 1,), None
        label = ob.label if j == first[old] else ""
        blocks.append(
            BasicBlock(id=j, start=s, end=e, succs=succs, func=ob.func, call_return=cr, label=label)
        )
    functions = {f: first[b] for f, b in kernel.functions.items()}
    return dataclasses.replace(kernel, blocks=blocks, functions=functions, attrs=dict(kernel.attrs))


# --------------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class RegisterInterval:
    """One register-interval (or strand).

    ``entry`` is the instruction index of its single entry point, where the
    prefetch of ``working_set`` (GPR numbers) sits.  ``ranges`` are its
    instruction ranges ``[start, end)`` in address order (contiguous pieces
    merged); ``blocks`` the ids of its blocks in :attr:`RegisterIntervals.kernel`.
    ``is_call``: the interval is a function call alone.
    """

    id: int
    entry: int
    ranges: tuple[tuple[int, int], ...]
    blocks: tuple[int, ...]
    working_set: frozenset[int]
    func: str
    is_call: bool = False

    @property
    def n_instrs(self) -> int:
        return sum(e - s for s, e in self.ranges)

    def instrs(self) -> list[int]:
        """Instruction indices of the interval, ascending."""
        return [i for s, e in self.ranges for i in range(s, e)]


@dataclass(frozen=True)
class RegisterIntervals:
    """A partition of a kernel's instructions into register-intervals (or strands).

    ``kernel`` is the input with its blocks split at every interval boundary
    (:func:`split_blocks`), so that each interval is a set of whole blocks.
    ``interval_of[i]`` is the interval of instruction ``i``;
    ``prefetch_points`` the interval entries.  ``succs``/``preds`` are the
    interval graph over the kernel's supergraph edges (calls and returns
    included), an edge per pair of distinct intervals.

    When control moves from one interval to another it always arrives at the
    target's entry, where the prefetch executes.  An edge from an interval
    back to its own entry (a loop kept inside it) executes no prefetch --
    unless ``restart_on_back_edge`` is set (strands), in which case taking a
    *backward* branch (target address not after the branch) to the entry
    starts the strand again.  ``n`` is the register budget; ``kind`` is
    ``"register-interval"`` or ``"strand"``; ``merge_passes`` counts the pass-2
    repetitions that reduced the graph.
    """

    kind: str
    n: int
    kernel: Kernel
    intervals: tuple[RegisterInterval, ...]
    interval_of: tuple[int, ...]
    prefetch_points: frozenset[int]
    succs: tuple[tuple[int, ...], ...]
    preds: tuple[tuple[int, ...], ...]
    restart_on_back_edge: bool = False
    merge_passes: int = 0

    def __len__(self) -> int:
        return len(self.intervals)

    def lengths(self) -> np.ndarray:
        """Static length (instructions) of every interval (int64)."""
        return np.array([iv.n_instrs for iv in self.intervals], dtype=np.int64)

    def working_set_sizes(self) -> np.ndarray:
        return np.array([len(iv.working_set) for iv in self.intervals], dtype=np.int64)

    def stats(self) -> dict:
        """Count, mean/min/max static length and mean working-set size, as plain numbers."""
        ln = self.lengths()
        ws = self.working_set_sizes()
        if len(ln) == 0:
            return {
                "intervals": 0,
                "mean_length": float("nan"),
                "min_length": 0,
                "max_length": 0,
                "mean_working_set": float("nan"),
            }
        return {
            "intervals": len(ln),
            "mean_length": float(ln.mean()),
            "min_length": int(ln.min()),
            "max_length": int(ln.max()),
            "mean_working_set": float(ws.mean()),
        }


# --------------------------------------------------------------------------------------------------
# pass 1


@dataclass(eq=False)
class _Piece:
    """A run of instructions ``[start, end)`` of one block: a node of the graph pass 1 cuts."""

    id: int
    start: int
    end: int
    func: str
    succs: list[_Piece]
    preds: list[_Piece]
    call: bool = False
    ivl: int = -1
    pend: int = 0  # strands: registers written by long-latency operations still pending at the end


@dataclass(eq=False)
class _Ivl:
    id: int
    header: _Piece
    members: list[_Piece]
    regs: int = 0
    call: bool = False


class _Former:
    """Algorithm 1 over one kernel; ``strand`` adds the strand cuts."""

    def __init__(self, kernel: Kernel, n: int, *, strand: bool, long_latency, at: str):
        self.kernel = kernel
        self.n = n
        self.strand = strand
        self.at = at
        ins = kernel.instrs
        self.acc = [mask(x.src) | mask(x.dst) for x in ins]
        self.dmask = [mask(x.dst) for x in ins]
        self.ll = [x.op_class in long_latency for x in ins]
        self.pieces: list[_Piece] = []
        self.ivls: list[_Ivl] = []
        self.work: deque[_Piece] = deque()
        self._build_pieces()

    # ---- the graph of pieces
    def _new_piece(self, start: int, end: int, func: str) -> _Piece:
        p = _Piece(len(self.pieces), start, end, func, [], [])
        self.pieces.append(p)
        return p

    def _build_pieces(self) -> None:
        k = self.kernel
        of_block = {b.id: self._new_piece(b.start, b.end, b.func) for b in k.blocks}
        tail = dict(of_block)  # block -> the piece holding its last instruction
        for b in k.blocks:
            if b.call_return is not None and b.end > b.start:
                head = of_block[b.id]
                if b.end - b.start > 1:  # cut before the CALL: the call is an interval alone
                    c = self._new_piece(b.end - 1, b.end, b.func)
                    head.end = b.end - 1
                    head.succs.append(c)
                    c.preds.append(head)
                    tail[b.id] = c
                tail[b.id].call = True
        for b in k.blocks:
            t = tail[b.id]
            for s in intra_succs(k, b):
                sp = of_block[s]
                if sp not in t.succs:
                    t.succs.append(sp)
                    sp.preds.append(t)
        self.entries = {f: of_block[e] for f, e in _function_entries(k).items() if e in of_block}

    def _split(self, p: _Piece, j: int) -> _Piece:
        q = self._new_piece(j, p.end, p.func)
        q.succs = p.succs
        for t in q.succs:
            t.preds[t.preds.index(p)] = q
        q.preds = [p]
        p.end = j
        p.succs = [q]
        return q

    def _open(self, p: _Piece) -> None:
        iv = _Ivl(len(self.ivls), p, [], call=p.call)
        self.ivls.append(iv)
        p.ivl = iv.id
        self.work.append(p)

    # ---- TRAVERSE
    def _traverse(self, p: _Piece, regs: int, pend: int, header: bool):
        """Walk ``p`` from register list ``regs``: ``(cut index or None, regs, pend)``."""
        n, acc = self.n, self.acc
        for j in range(p.start, p.end):
            need = regs | acc[j]
            cut = need != regs and need.bit_count() > n
            if self.strand and not cut and pend:
                cut = True if self.at == "producer" else bool(pend & acc[j])
            if cut and (j > p.start or not header):
                return j, regs, pend
            regs = need
            if self.strand:
                pend = (pend | self.dmask[j]) if self.ll[j] else (pend & ~self.dmask[j])
        return None, regs, pend

    def _backward(self, p: _Piece, s: _Piece) -> bool:
        return s.start < p.end  # the branch at p.end - 1 targets an address not after itself

    def _run(self) -> None:
        while self.work:
            h = self.work.popleft()
            iv = self.ivls[h.ivl]
            cut, regs, pend = self._traverse(h, 0, 0, header=True)
            if cut is not None:
                self._open(self._split(h, cut))
            h.pend = pend
            iv.regs = regs
            iv.members = [h]
            k = 0
            while k < len(iv.members) and not iv.call:
                m = iv.members[k]
                k += 1
                for s in m.succs:
                    if s.ivl != -1 or s.call or any(q.ivl != iv.id for q in s.preds):
                        continue
                    if self.strand and any(self._backward(q, s) for q in s.preds):
                        continue
                    pend_in = 0
                    for q in s.preds:
                        pend_in |= q.pend
                    cut, regs, pend = self._traverse(s, iv.regs, pend_in, header=False)
                    if cut == s.start:
                        continue  # its first instruction does not fit: it does not join
                    s.ivl = iv.id
                    iv.members.append(s)
                    if cut is not None:
                        self._open(self._split(s, cut))
                    s.pend = pend
                    iv.regs = regs
            for m in iv.members:
                for s in m.succs:
                    if s.ivl == -1:
                        self._open(s)

    def form(self) -> None:
        for f in function_names(self.kernel):
            e = self.entries.get(f)
            if e is not None and e.ivl == -1:
                self._open(e)
                self._run()
            for p in sorted((p for p in self.pieces if p.func == f), key=lambda p: p.start):
                if p.ivl == -1 and p.end > p.start:  # unreachable code: an interval of its own
                    self._open(p)
                    self._run()
            for p in self.pieces:  # empty blocks: attach to a predecessor's interval or stand alone
                if p.func == f and p.ivl == -1:
                    self._open(p)
                    self._run()


# --------------------------------------------------------------------------------------------------
# assembling the result


def _result(
    former: _Former, groups: list[tuple[_Ivl, list[_Ivl]]], kind: str, passes: int, restart: bool
) -> RegisterIntervals:
    kernel = former.kernel
    pieces = [p for p in former.pieces]
    owner: dict[int, int] = {}  # piece id -> final interval
    for g, (_base, members) in enumerate(groups):
        for iv in members:
            for p in iv.members:
                owner[p.id] = g
    split = split_blocks(kernel, {p.start for p in pieces if p.end > p.start})
    n_ins = len(kernel.instrs)
    interval_of = [-1] * n_ins
    for p in pieces:
        for i in range(p.start, p.end):
            interval_of[i] = owner[p.id]
    block_at = {b.start: b.id for b in split.blocks if b.end > b.start}
    ivs = []
    for g, (base, members) in enumerate(groups):
        ps = sorted((p for iv in members for p in iv.members), key=lambda p: p.start)
        ranges: list[list[int]] = []
        for p in ps:
            if p.end == p.start:
                continue
            if ranges and ranges[-1][1] == p.start:
                ranges[-1][1] = p.end
            else:
                ranges.append([p.start, p.end])
        regs = 0
        for iv in members:
            regs |= iv.regs
        ivs.append(
            RegisterInterval(
                id=g,
                entry=base.header.start,
                ranges=tuple((s, e) for s, e in ranges),
                blocks=tuple(sorted(block_at[p.start] for p in ps if p.end > p.start)),
                working_set=frozenset(bits(regs)),
                func=base.header.func,
                is_call=base.call,
            )
        )
    succs: list[dict[int, None]] = [{} for _ in ivs]
    preds: list[dict[int, None]] = [{} for _ in ivs]
    for b in split.blocks:
        if b.end == b.start:
            continue
        a = interval_of[b.start]
        for s in b.succs:
            t = split.blocks[s]
            if t.end == t.start:
                continue
            c = interval_of[t.start]
            if c != a:
                succs[a][c] = None
                preds[c][a] = None
    return RegisterIntervals(
        kind=kind,
        n=former.n,
        kernel=split,
        intervals=tuple(ivs),
        interval_of=tuple(interval_of),
        prefetch_points=frozenset(iv.entry for iv in ivs if iv.n_instrs),
        succs=tuple(tuple(d) for d in succs),
        preds=tuple(tuple(d) for d in preds),
        restart_on_back_edge=restart,
        merge_passes=passes,
    )


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise RfmodelError(f"registers per interval must be an integer >= 1, got {n!r}")
    return int(n)


# --------------------------------------------------------------------------------------------------
# pass 2


def _merge(former: _Former, groups: list[tuple[_Ivl, list[_Ivl]]]) -> list[tuple[_Ivl, list[_Ivl]]]:
    """One application of Algorithm 2 to the interval graph ``groups`` (each a base and its members)."""
    n = former.n
    node_of: dict[int, int] = {}  # piece id -> node (index into groups)
    for g, (_b, members) in enumerate(groups):
        for iv in members:
            for p in iv.members:
                node_of[p.id] = g
    regs = []
    for _b, members in groups:
        r = 0
        for iv in members:
            r |= iv.regs
        regs.append(r)
    nsucc: list[dict[int, None]] = [{} for _ in groups]
    npred: list[dict[int, None]] = [{} for _ in groups]
    for g, (_b, members) in enumerate(groups):
        for iv in members:
            for p in iv.members:
                for s in p.succs:
                    t = node_of[s.id]
                    if t != g:
                        nsucc[g][t] = None
                        npred[t][g] = None
    call = [b.call for b, _m in groups]
    nxt = [-1] * len(groups)
    out: list[list[int]] = []  # next-level interval -> its nodes
    work: deque[int] = deque()

    def open_(g: int) -> None:
        nxt[g] = len(out)
        out.append([])
        work.append(g)

    def run() -> None:
        while work:
            i = work.popleft()
            ii = nxt[i]
            members = out[ii]
            members.append(i)
            ii_regs = regs[i]
            k = 0
            while k < len(members) and not call[i]:
                m = members[k]
                k += 1
                for s in nsucc[m]:
                    if nxt[s] != -1 or call[s] or any(nxt[q] != ii for q in npred[s]):
                        continue
                    if (ii_regs | regs[s]).bit_count() > n:
                        continue
                    nxt[s] = ii
                    members.append(s)
                    ii_regs |= regs[s]
            for m in members:
                for s in nsucc[m]:
                    if nxt[s] == -1:
                        open_(s)

    for f in function_names(former.kernel):
        e = former.entries.get(f)
        if e is not None and e.id in node_of and nxt[node_of[e.id]] == -1:
            open_(node_of[e.id])
            run()
        for g, (b, _m) in enumerate(groups):
            if b.header.func == f and nxt[g] == -1:
                open_(g)
                run()
    return [(groups[nodes[0]][0], [iv for g in nodes for iv in groups[g][1]]) for nodes in out]


# --------------------------------------------------------------------------------------------------
# entry points


def _pass1(kernel: Kernel, n: int, *, strand=False, long_latency=LONG_LATENCY_CLASSES, at="consumer"):
    if not kernel.blocks:
        raise RfmodelError(f"kernel '{kernel.name}' has no basic blocks")
    former = _Former(kernel, n, strand=strand, long_latency=frozenset(long_latency), at=at)
    former.form()
    return former, [(iv, [iv]) for iv in former.ivls]


def register_intervals_pass1(kernel: Kernel, n: int = 16) -> RegisterIntervals:
    """Register-intervals after pass 1 only (Algorithm 1: block splitting, calls alone)."""
    former, groups = _pass1(kernel, _check_n(n))
    return _result(former, groups, "register-interval", 0, False)


def merge_register_intervals(
    kernel: Kernel, n: int = 16, *, max_passes: int | None = None
) -> list[RegisterIntervals]:
    """Pass 1, then pass 2 repeated: the result after every pass that reduced the graph.

    Element 0 is the pass-1 result; element ``k`` the graph after the ``k``-th
    reducing application of Algorithm 2; the last element is the final
    register-interval graph.  ``max_passes`` bounds the pass-2 repetitions.
    """
    n = _check_n(n)
    former, groups = _pass1(kernel, n)
    out = [_result(former, groups, "register-interval", 0, False)]
    k = 0
    while max_passes is None or k < max_passes:
        merged = _merge(former, groups)
        if len(merged) >= len(groups):
            break
        groups = merged
        k += 1
        out.append(_result(former, groups, "register-interval", k, False))
    return out


def register_intervals(kernel: Kernel, n: int = 16, *, merge: bool = True) -> RegisterIntervals:
    """The register-intervals of ``kernel`` with ``n`` registers per interval.

    Pass 1 (Algorithm 1) and, with ``merge``, pass 2 (Algorithm 2) repeated
    until it no longer reduces the interval graph.
    """
    if not merge:
        return register_intervals_pass1(kernel, n)
    return merge_register_intervals(kernel, n)[-1]


def strands(
    kernel: Kernel, n: int = 16, *, long_latency=LONG_LATENCY_CLASSES, at: str = "consumer"
) -> RegisterIntervals:
    """Strands: pass-1 intervals that also end at long-latency dependences and backward branches.

    A strand is a single-entry region, within ``n`` registers like a
    register-interval, in which no instruction depends on a long-latency
    operation (``long_latency``: op classes, default
    :data:`LONG_LATENCY_CLASSES`) issued in the same strand, and which no
    backward branch stays inside.  ``at="consumer"`` (the definition of "A
    Compile-Time Managed Multi-Level Register File Hierarchy": all
    dependences on long-latency operations come from a previous strand) cuts
    before the first instruction that reads or overwrites a pending
    long-latency result; ``at="producer"`` ends the strand right after every
    long-latency operation.  Function calls are strands alone, as for
    register-intervals.  The result has ``restart_on_back_edge`` set.
    """
    if at not in ("consumer", "producer"):
        raise RfmodelError(f"strands: unknown at={at!r}; allowed: consumer, producer")
    former, groups = _pass1(kernel, _check_n(n), strand=True, long_latency=long_latency, at=at)
    return _result(former, groups, "strand", 0, True)
