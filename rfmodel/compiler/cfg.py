"""Control-flow-graph analyses over the workload IR.

The kernel's blocks carry *supergraph* edges (a ``CALL`` block points at the
callee's entry, a ``RET`` block at every return site).  The analyses in this
module are intraprocedural: they work on one function at a time, on the
*function graph* in which a call block's successor is its ``call_return``
block and a ``RET`` block has no successor (it is an exit of the function).
Liveness, which must see through calls, lives in :mod:`rfmodel.compiler.liveness`
and uses the supergraph.

Contents
--------
* :func:`function_graph` -- the intraprocedural graph of one function.
* :func:`reverse_postorder` -- depth-first reverse postorder from the entry.
* :func:`dominators` -- immediate dominators, by the iterative algorithm of
  "A Simple, Fast Dominance Algorithm" (Cooper, Harvey and Kennedy).
* :func:`dominator_tree`, :func:`dominates`.
* :func:`back_edges`, :func:`natural_loops`, :func:`loop_depth`.
* :func:`intervals`, :func:`derived_sequence` -- the interval partition and the
  derived sequence of interval graphs (Allen and Cocke; Hecht's "Flow Analysis
  of Computer Programs"), the starting point of the register-interval formation
  in the Latency-Tolerant Register File paper.
* :func:`is_reducible`.

All analyses cost O(blocks + edges) per pass; dominators and the interval
partition converge in a few passes on structured code (O(n * passes)).
"""

from __future__ import annotations

from dataclasses import dataclass

from rfmodel.errors import RfmodelError
from rfmodel.ir import BasicBlock, Kernel

__all__ = [
    "FuncGraph",
    "Interval",
    "Loop",
    "back_edges",
    "derived_sequence",
    "dominates",
    "dominator_tree",
    "dominators",
    "function_graph",
    "function_names",
    "intervals",
    "intra_succs",
    "is_reducible",
    "loop_depth",
    "natural_loops",
    "reverse_postorder",
]


# --------------------------------------------------------------------------------------------------
# function graphs


@dataclass(frozen=True)
class FuncGraph:
    """The intraprocedural graph of one function.

    ``nodes`` lists the function's block ids in id order (reachable or not);
    ``succs``/``preds`` map every node to its intraprocedural neighbours.
    """

    name: str
    entry: int
    nodes: tuple[int, ...]
    succs: dict[int, tuple[int, ...]]
    preds: dict[int, tuple[int, ...]]


def _is_ret(kernel: Kernel, b: BasicBlock) -> bool:
    return b.end > b.start and kernel.instrs[b.end - 1].base == "RET"


def _function_entries(kernel: Kernel) -> dict[str, int]:
    """Entry block of every function named by the blocks."""
    entries = dict(kernel.functions)
    for b in kernel.blocks:
        if b.func not in entries:
            entries[b.func] = b.id  # blocks are in id order: the first one found
    return entries


def function_names(kernel: Kernel) -> list[str]:
    """Names of the kernel's functions, the one holding block 0 first."""
    names: list[str] = []
    for b in kernel.blocks:
        if b.func not in names:
            names.append(b.func)
    return names


def _resolve_func(kernel: Kernel, func: str | None) -> str:
    if not kernel.blocks:
        raise RfmodelError(f"kernel '{kernel.name}' has no basic blocks")
    if func is None:
        return kernel.blocks[0].func
    if all(b.func != func for b in kernel.blocks):
        known = ", ".join(repr(n) for n in function_names(kernel))
        raise RfmodelError(f"kernel '{kernel.name}' has no function {func!r} (has {known})")
    return func


def intra_succs(kernel: Kernel, b: BasicBlock) -> tuple[int, ...]:
    """Successors of block ``b`` inside its own function.

    A call block continues at its ``call_return`` block (the callee's entry
    is dropped); a ``RET`` block leaves the function, so its return sites are
    dropped (a guarded ``RET`` keeps its fall-through block).
    """
    blocks = kernel.blocks
    entries = set(_function_entries(kernel).values())
    if b.call_return is not None:
        out = [b.call_return]
        out += [s for s in b.succs if s != b.call_return and s not in entries and blocks[s].func == b.func]
        return tuple(out)
    if _is_ret(kernel, b):
        guarded = kernel.instrs[b.end - 1].guard is not None
        return tuple(s for s in b.succs if guarded and blocks[s].func == b.func and blocks[s].start == b.end)
    return tuple(s for s in b.succs if blocks[s].func == b.func)


def function_graph(kernel: Kernel, func: str | None = None) -> FuncGraph:
    """The intraprocedural graph of ``func`` (default: the function of block 0)."""
    func = _resolve_func(kernel, func)
    entry = _function_entries(kernel)[func]
    nodes = tuple(b.id for b in kernel.blocks if b.func == func)
    succs = {n: intra_succs(kernel, kernel.blocks[n]) for n in nodes}
    preds: dict[int, list[int]] = {n: [] for n in nodes}
    for n in nodes:
        for s in succs[n]:
            preds[s].append(n)
    return FuncGraph(func, entry, nodes, succs, {n: tuple(p) for n, p in preds.items()})


def _graph(kernel_or_graph, func: str | None) -> FuncGraph:
    if isinstance(kernel_or_graph, FuncGraph):
        return kernel_or_graph
    return function_graph(kernel_or_graph, func)


# --------------------------------------------------------------------------------------------------
# orders and dominators


def _postorder(g: FuncGraph) -> list[int]:
    """Iterative depth-first postorder of the nodes reachable from the entry."""
    seen = {g.entry}
    order: list[int] = []
    stack = [(g.entry, iter(g.succs[g.entry]))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(g.succs[s])))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def reverse_postorder(kernel: Kernel | FuncGraph, func: str | None = None) -> list[int]:
    """Block ids reachable from the function's entry, in depth-first reverse postorder.

    Successors are visited in the order ``succs`` lists them, so the result is
    deterministic.  Every forward and tree edge goes from earlier to later in
    this order; only retreating edges go backwards.
    """
    return _postorder(_graph(kernel, func))[::-1]


def dominators(kernel: Kernel | FuncGraph, func: str | None = None) -> dict[int, int]:
    """Immediate dominator of every reachable block; the entry maps to itself.

    Cooper, Harvey and Kennedy's iterative algorithm: process the nodes in
    reverse postorder, intersect the dominator-tree paths of the processed
    predecessors (walking up by postorder number) until nothing changes.
    """
    g = _graph(kernel, func)
    rpo = reverse_postorder(g)
    po_num = {n: i for i, n in enumerate(reversed(rpo))}
    idom: dict[int, int] = {g.entry: g.entry}

    def intersect(a: int, b: int) -> int:
        while a != b:
            while po_num[a] < po_num[b]:
                a = idom[a]
            while po_num[b] < po_num[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for n in rpo[1:]:
            new = None
            for p in g.preds[n]:
                if p in idom:
                    new = p if new is None else intersect(p, new)
            if new is not None and idom.get(n) != new:
                idom[n] = new
                changed = True
    return idom


def dominator_tree(idom: dict[int, int]) -> dict[int, list[int]]:
    """Children of every node in the dominator tree given by ``idom``."""
    tree: dict[int, list[int]] = {n: [] for n in idom}
    for n, d in sorted(idom.items()):
        if n != d:
            tree[d].append(n)
    return tree


def dominates(idom: dict[int, int], a: int, b: int) -> bool:
    """Whether block ``a`` dominates block ``b`` (every block dominates itself)."""
    if b not in idom or a not in idom:
        return False
    while True:
        if a == b:
            return True
        parent = idom[b]
        if parent == b:
            return False
        b = parent


# --------------------------------------------------------------------------------------------------
# loops


@dataclass(frozen=True)
class Loop:
    """A natural loop: all back edges into ``header`` merged.

    ``body`` includes the header; ``latches`` are the sources of the back
    edges; ``exits`` are the edges ``(inside, outside)`` that leave the loop;
    ``depth`` is 1 for an outermost loop; ``parent`` is the header of the
    innermost enclosing loop (``None`` if outermost).
    """

    header: int
    body: frozenset[int]
    latches: tuple[int, ...]
    exits: tuple[tuple[int, int], ...]
    depth: int
    parent: int | None


def back_edges(kernel: Kernel | FuncGraph, func: str | None = None) -> list[tuple[int, int]]:
    """Edges ``(tail, head)`` whose head dominates their tail, sorted."""
    g = _graph(kernel, func)
    idom = dominators(g)
    return sorted((t, h) for t in idom for h in g.succs[t] if dominates(idom, h, t))


def natural_loops(kernel: Kernel | FuncGraph, func: str | None = None) -> list[Loop]:
    """Natural loops of the function, outermost first (then by header id).

    The body of the loop of back edge ``t -> h`` is ``h`` plus every block
    that reaches ``t`` without passing through ``h``.  Loops sharing a header
    are merged.  Nesting is by body inclusion.
    """
    g = _graph(kernel, func)
    idom = dominators(g)
    edges = back_edges(g)
    bodies: dict[int, set[int]] = {}
    latches: dict[int, list[int]] = {}
    for t, h in edges:
        body = bodies.setdefault(h, {h})
        latches.setdefault(h, []).append(t)
        work = [t]
        while work:
            n = work.pop()
            if n not in body:
                body.add(n)
                work.extend(p for p in g.preds[n] if p in idom)  # reachable blocks only
    headers = sorted(bodies, key=lambda h: (-len(bodies[h]), h))
    parent: dict[int, int | None] = {}
    depth: dict[int, int] = {}
    for i, h in enumerate(headers):  # larger bodies first: an enclosing loop is already placed
        enclosing = [o for o in headers[:i] if h in bodies[o] and bodies[h] <= bodies[o]]
        par = min(enclosing, key=lambda o: len(bodies[o])) if enclosing else None
        parent[h] = par
        depth[h] = 1 if par is None else depth[par] + 1
    loops = []
    for h in headers:
        body = bodies[h]
        exits = tuple(sorted((n, s) for n in body for s in g.succs[n] if s not in body))
        loops.append(Loop(h, frozenset(body), tuple(sorted(latches[h])), exits, depth[h], parent[h]))
    loops.sort(key=lambda lp: (lp.depth, lp.header))
    return loops


def loop_depth(kernel: Kernel | FuncGraph, func: str | None = None) -> dict[int, int]:
    """Loop-nesting depth of every block of the function (0: in no loop)."""
    g = _graph(kernel, func)
    depth = dict.fromkeys(g.nodes, 0)
    for lp in natural_loops(g):
        for n in lp.body:
            depth[n] = max(depth[n], lp.depth)
    return depth


# --------------------------------------------------------------------------------------------------
# intervals


@dataclass(frozen=True)
class Interval:
    """A maximal single-entry region: the header and the blocks added to it, in order."""

    header: int
    blocks: tuple[int, ...]


def _interval_partition(
    entry: int, succs: dict[int, tuple[int, ...]], preds: dict[int, tuple[int, ...]]
) -> list[tuple[int, list[int]]]:
    """Allen-Cocke/Hecht interval partition of the nodes reachable from ``entry``.

    Start an interval at a header ``h``; repeatedly add any unassigned node
    (other than the entry) all of whose predecessors are already in the
    interval; when none is left, every unassigned node with a predecessor in
    the interval becomes a new header.  Headers are processed first-in
    first-out; blocks join in breadth-first order from the header.
    """
    owner: dict[int, int] = {}
    headers = [entry]
    queued = {entry}
    out: list[tuple[int, list[int]]] = []
    qi = 0
    while qi < len(headers):
        h = headers[qi]
        qi += 1
        members = [h]
        owner[h] = h
        inside: dict[int, int] = {}  # node -> number of its predecessor edges from this interval
        k = 0
        while k < len(members):  # members doubles as the worklist: O(edges) per interval
            m = members[k]
            k += 1
            for s in succs[m]:
                if s in owner:
                    continue
                inside[s] = inside.get(s, 0) + 1
                if s != entry and s not in queued and inside[s] == len(preds[s]):
                    owner[s] = h
                    members.append(s)
        out.append((h, members))
        for m in members:
            for s in succs[m]:
                if s not in owner and s not in queued:
                    queued.add(s)
                    headers.append(s)
    return out


def intervals(kernel: Kernel | FuncGraph, func: str | None = None) -> list[Interval]:
    """The interval partition of the function's reachable blocks, in header discovery order.

    Each interval has one entry (its header), and every cycle inside an
    interval passes through the header; a loop header always starts an
    interval of its own.
    """
    g = _graph(kernel, func)
    rpo = reverse_postorder(g)
    reach = set(rpo)
    succs = {n: tuple(s for s in g.succs[n] if s in reach) for n in rpo}
    preds = {n: tuple(p for p in g.preds[n] if p in reach) for n in rpo}
    return [Interval(h, tuple(m)) for h, m in _interval_partition(g.entry, succs, preds)]


def derived_sequence(kernel: Kernel | FuncGraph, func: str | None = None) -> list[list[Interval]]:
    """The derived sequence of interval graphs, each level in original block ids.

    Level 0 is :func:`intervals`.  Level ``k+1`` partitions the interval graph
    of level ``k`` (one node per interval, an edge where a block of one
    interval branches to the header of another); its intervals are reported
    with the original header block and the union of the original blocks.  The
    sequence stops at a level with a single interval (the graph is reducible)
    or at the last level that shrank the graph (it is not reducible).
    """
    g = _graph(kernel, func)
    rpo = reverse_postorder(g)
    reach = set(rpo)
    # current graph: nodes are representative block ids, each standing for a set of blocks
    members: dict[int, list[int]] = {n: [n] for n in rpo}
    nodes = list(rpo)
    succs = {n: tuple(s for s in g.succs[n] if s in reach) for n in rpo}
    preds = {n: tuple(p for p in g.preds[n] if p in reach) for n in rpo}
    levels: list[list[Interval]] = []
    while True:
        part = _interval_partition(g.entry, succs, preds)
        if levels and len(part) == len(nodes):
            return levels  # the limit graph: not reducible
        level = []
        new_members: dict[int, list[int]] = {}
        owner: dict[int, int] = {}
        for h, ms in part:
            blocks = [b for m in ms for b in members[m]]
            new_members[h] = blocks
            level.append(Interval(h, tuple(blocks)))
            for m in ms:
                owner[m] = h
        levels.append(level)
        if len(part) == 1:
            return levels
        nodes = [h for h, _ in part]
        nsucc: dict[int, list[int]] = {h: [] for h in nodes}
        for n, ss in succs.items():
            for s in ss:
                a, b = owner[n], owner[s]
                if a != b and b not in nsucc[a]:
                    nsucc[a].append(b)
        npred: dict[int, list[int]] = {h: [] for h in nodes}
        for a, ss in nsucc.items():
            for b in ss:
                npred[b].append(a)
        succs = {h: tuple(v) for h, v in nsucc.items()}
        preds = {h: tuple(v) for h, v in npred.items()}
        members = new_members


def is_reducible(kernel: Kernel | FuncGraph, func: str | None = None) -> bool:
    """Whether the function's reachable graph is reducible.

    A graph is reducible exactly when every retreating edge of a depth-first
    search is a back edge (its head dominates its tail); equivalently its
    derived sequence of interval graphs ends in a single node.
    """
    g = _graph(kernel, func)
    rpo = reverse_postorder(g)
    pos = {n: i for i, n in enumerate(rpo)}
    idom = dominators(g)
    for t in rpo:
        for h in g.succs[t]:
            if pos[h] <= pos[t] and not dominates(idom, h, t):
                return False
    return True
