"""Register liveness, dead-operand bits, def-use chains and live ranges (webs).

Definitions
-----------
A register is *live* at a point if some path from that point reads it before
an unconditional write to it.  For an instruction ``i``:

* ``live_out[i]``: live just after ``i`` (on the edges leaving it);
* ``live_in[i] = use(i) | (live_out[i] - kill(i))``: live just before it.

``use(i)`` is the set of registers ``i`` reads (``Instr.src``; for predicates
``Instr.psrc``, which includes the guard).  ``kill(i)`` is the set it writes
*unless the instruction is guarded*: a guarded write (``@P0 MOV R4, R5``)
may not happen, so the old value may still be read afterwards and the write
kills nothing.  It is still a definition (for def-use chains and webs).

Three register spaces are analysed separately: ``"gpr"`` (``src``/``dst``),
``"pred"`` (``psrc``/``pdst``) and ``"ureg"`` (``usrc``/``udst``).  Sets
are Python ints used as bitsets (bit ``r`` set: register ``r``).

Calls
-----
Subroutines share the caller's registers (no save/restore), so liveness
flows through callees.  The default, ``context="sensitive"``, follows only
*valid* paths (a ``RET`` returns to the site that made the call): every
function gets a summary ``T(X) = GEN | (X & THRU)`` of what is live at its
entry given ``X`` live after it returns (exact for gen/kill problems, where
each register is independent), a call block's live-out is ``T`` of its
return block's live-in, and the live set inside a callee is the union over
its call sites.  ``context="insensitive"`` runs the plain fixed point on the
supergraph edges (a ``RET`` flows to every return site of the function),
which over-approximates when a function is called from several sites.  A
call block whose callee is unknown (no function entry among its successors)
is treated as a no-op that falls through to ``call_return``.

Complexity: O((instructions + edges) x passes) big-int operations; passes are
bounded by loop nesting depth + 2 per function and a few rounds over the call
graph.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from rfmodel.compiler.cfg import _function_entries, _is_ret, intra_succs
from rfmodel.errors import RfmodelError
from rfmodel.ir import Instr, Kernel, OpClass

__all__ = [
    "DefUse",
    "Liveness",
    "Web",
    "bits",
    "dead_defs",
    "dead_operands",
    "def_use_chains",
    "live_ranges",
    "liveness",
    "mask",
]

KINDS = ("gpr", "pred", "ureg")
CONTEXTS = ("sensitive", "insensitive")


def mask(regs) -> int:
    """Bitset of an iterable of register numbers."""
    m = 0
    for r in regs:
        m |= 1 << r
    return m


def bits(m: int) -> list[int]:
    """Register numbers in bitset ``m``, ascending."""
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


def _operands(kind: str) -> Callable[[Instr], tuple[tuple[int, ...], tuple[int, ...]]]:
    if kind == "gpr":
        return lambda ins: (ins.src, ins.dst)
    if kind == "pred":
        return lambda ins: (ins.psrc, ins.pdst)
    if kind == "ureg":
        return lambda ins: (ins.usrc, ins.udst)
    raise RfmodelError(f"unknown register kind {kind!r}; allowed: {', '.join(KINDS)}")


def _check_context(context: str) -> None:
    if context not in CONTEXTS:
        raise RfmodelError(f"unknown context {context!r}; allowed: {', '.join(CONTEXTS)}")


# --------------------------------------------------------------------------------------------------
# the program structure the solvers need


@dataclass
class _Call:
    callee: str | None  # None: unknown callee
    ret: int  # call_return block
    guarded: bool


@dataclass
class _Program:
    main: str
    funcs: dict[str, list[int]]  # function -> its blocks, reachable ones in postorder first
    entry: dict[str, int]
    func_of: list[str]
    succs: list[tuple[int, ...]]  # intraprocedural successors, a call block's return block excluded
    preds: list[list[int]]  # inverse of succs
    ret_preds: list[list[int]]  # block -> the call blocks that return to it
    calls: dict[int, _Call]
    rets: set[int]  # blocks ending in RET
    exits: set[int]  # blocks ending in EXIT
    call_sites: dict[str, list[int]]  # function -> call blocks calling it


def _program(kernel: Kernel) -> _Program:
    blocks = kernel.blocks
    if not blocks:
        raise RfmodelError(f"kernel '{kernel.name}' has no basic blocks")
    entries = _function_entries(kernel)
    entry_func = {e: f for f, e in entries.items()}
    n = len(blocks)
    succs: list[tuple[int, ...]] = []
    calls: dict[int, _Call] = {}
    rets: set[int] = set()
    exits: set[int] = set()
    for b in blocks:
        if b.end > b.start and kernel.instrs[b.end - 1].op_class == OpClass.EXIT:
            exits.add(b.id)
        s = intra_succs(kernel, b)
        if b.call_return is not None:
            callee_entries = [t for t in b.succs if t in entry_func and t != b.call_return]
            callee = entry_func[callee_entries[0]] if callee_entries else None
            guarded = b.end > b.start and kernel.instrs[b.end - 1].guard is not None
            calls[b.id] = _Call(callee, b.call_return, guarded)
            s = tuple(t for t in s if t != b.call_return)
        elif _is_ret(kernel, b):
            rets.add(b.id)
        succs.append(s)
    preds: list[list[int]] = [[] for _ in range(n)]
    ret_preds: list[list[int]] = [[] for _ in range(n)]
    for b in range(n):
        for s in succs[b]:
            preds[s].append(b)
    for c, call in calls.items():
        ret_preds[call.ret].append(c)
    funcs: dict[str, list[int]] = {}
    for b in blocks:
        funcs.setdefault(b.func, []).append(b.id)
    for f, nodes in funcs.items():
        # reachable blocks in postorder (over succs + call returns), then the rest
        start = entries[f]
        seen = {start}
        order: list[int] = []
        stack = [(start, iter(succs[start] + ((calls[start].ret,) if start in calls else ())))]
        while stack:
            node, it = stack[-1]
            for t in it:
                if t not in seen and blocks[t].func == f:
                    seen.add(t)
                    nxt = succs[t] + ((calls[t].ret,) if t in calls else ())
                    stack.append((t, iter(nxt)))
                    break
            else:
                stack.pop()
                order.append(node)
        order += [b for b in nodes if b not in seen]
        funcs[f] = order
    call_sites: dict[str, list[int]] = {f: [] for f in funcs}
    for c, call in calls.items():
        if call.callee is not None:
            call_sites[call.callee].append(c)
    return _Program(
        main=blocks[0].func,
        funcs=funcs,
        entry=entries,
        func_of=[b.func for b in blocks],
        succs=succs,
        preds=preds,
        ret_preds=ret_preds,
        calls=calls,
        rets=rets,
        exits=exits,
        call_sites=call_sites,
    )


# --------------------------------------------------------------------------------------------------
# generic gen/kill solvers (union meet)


def _transfer(b: int, x: int, gen: list[int], kill: list[int], meet: list[int], result: list[int]) -> bool:
    """Block ``b``'s gen/kill step: the met set ``x`` stored on the meet side (entry forward, exit backward),
    the transferred set on the other; whether that one changed."""
    meet[b] = x
    y = gen[b] | (x & ~kill[b])
    if y != result[b]:
        result[b] = y
        return True
    return False


def _iterate(order, inflow, forward: bool, gen: list[int], kill: list[int], bin_: list[int], bout: list[int]):
    """Round-robin fixed point over the blocks in ``order``, in place in ``bin_``/``bout``: each block's met
    set ``inflow(b)`` through its gen/kill step (:func:`_transfer`), until no block's set changes."""
    meet, result = (bin_, bout) if forward else (bout, bin_)
    changed = True
    while changed:
        changed = False
        for b in order:
            changed |= _transfer(b, inflow(b), gen, kill, meet, result)


def _solve_function(
    p: _Program,
    f: str,
    gen: list[int],
    kill: list[int],
    summary: dict[str, tuple[int, int]],
    boundary: int,
    forward: bool,
    bin_: list[int],
    bout: list[int],
    exit_value: int = 0,
) -> None:
    """Fixed point for one function, in place in ``bin_``/``bout`` (block entry / exit sets).

    Backward: ``boundary`` is what is live after the function's ``RET`` s and
    ``exit_value`` what is live after an ``EXIT``.  Forward: ``boundary`` is
    what holds at the function's entry.
    """

    def through(callee: str | None, x: int) -> int:
        if callee is None:
            return x
        g, t = summary[callee]
        return g | (x & t)

    entry = p.entry[f]

    def forward_in(b: int) -> int:
        x = boundary if b == entry else 0
        for q in p.preds[b]:
            x |= bout[q]
        for c in p.ret_preds[b]:
            call = p.calls[c]
            x |= through(call.callee, bout[c])
            if call.guarded:
                x |= bout[c]
        return x

    def backward_in(b: int) -> int:
        x = boundary if b in p.rets else 0
        if b in p.exits:
            x |= exit_value
        for s in p.succs[b]:
            x |= bin_[s]
        call = p.calls.get(b)
        if call is not None:
            x |= through(call.callee, bin_[call.ret])
            if call.guarded:
                x |= bin_[call.ret]
        return x

    nodes = p.funcs[f][::-1] if forward else p.funcs[f]  # forward: reverse postorder first
    _iterate(nodes, forward_in if forward else backward_in, forward, gen, kill, bin_, bout)


def _solve(
    kernel: Kernel,
    p: _Program,
    gen: list[int],
    kill: list[int],
    *,
    forward: bool,
    boundary: int,
    universe: int,
    context: str,
) -> tuple[list[int], list[int]]:
    """Block entry/exit sets of a gen/kill problem with union meet.

    ``boundary`` holds at the kernel's entry (forward) or after every
    ``EXIT`` (backward: normally empty).
    """
    n = len(kernel.blocks)
    bin_, bout = [0] * n, [0] * n
    if context == "insensitive":
        spreds = kernel.preds()
        start = p.entry[p.main]

        def forward_in(b: int) -> int:
            x = boundary if b == start else 0
            for q in spreds[b]:
                x |= bout[q]
            return x

        def backward_in(b: int) -> int:
            x = boundary if b in p.exits else 0
            for s in kernel.blocks[b].succs:
                x |= bin_[s]
            return x

        order = range(n) if forward else range(n - 1, -1, -1)
        _iterate(order, forward_in if forward else backward_in, forward, gen, kill, bin_, bout)
        return bin_, bout

    exit_value = 0 if forward else boundary
    # 1) function summaries, from the bottom element up (recursion converges too)
    summary = dict.fromkeys(p.funcs, (0, 0))
    callees = [f for f in p.funcs if p.call_sites[f]]
    changed = True
    while changed:
        changed = False
        for f in callees:
            res = []
            for x in (0, universe):
                i2, o2 = [0] * n, [0] * n
                _solve_function(p, f, gen, kill, summary, x, forward, i2, o2, exit_value)
                if forward:
                    r = 0
                    for b in p.funcs[f]:
                        if b in p.rets:
                            r |= o2[b]
                else:
                    r = i2[p.entry[f]]
                res.append(r)
            new = (res[0], res[1])
            if new != summary[f]:
                summary[f] = new
                changed = True

    # 2) boundaries of the callees from their call sites, then the final sets
    bnd = dict.fromkeys(p.funcs, 0)
    if forward:
        bnd[p.main] = boundary
    changed = True
    while changed:
        changed = False
        for f in p.funcs:
            _solve_function(p, f, gen, kill, summary, bnd[f], forward, bin_, bout, exit_value)
        for g, sites in p.call_sites.items():
            if g == p.main:
                continue
            x = 0
            for c in sites:
                x |= bout[c] if forward else bin_[p.calls[c].ret]
            if x != bnd[g]:
                bnd[g] = x
                changed = True
    return bin_, bout


# --------------------------------------------------------------------------------------------------
# liveness


@dataclass
class Liveness:
    """Per-instruction and per-block live sets (bitsets) of one register space."""

    kind: str
    context: str
    live_in: list[int]
    live_out: list[int]
    block_in: list[int]
    block_out: list[int]

    def regs_in(self, i: int) -> frozenset[int]:
        """Registers live just before instruction ``i``."""
        return frozenset(bits(self.live_in[i]))

    def regs_out(self, i: int) -> frozenset[int]:
        """Registers live just after instruction ``i``."""
        return frozenset(bits(self.live_out[i]))

    def n_live_in(self) -> np.ndarray:
        """Number of registers live before each instruction (int32)."""
        return np.array([x.bit_count() for x in self.live_in], dtype=np.int32)

    def n_live_out(self) -> np.ndarray:
        """Number of registers live after each instruction (int32)."""
        return np.array([x.bit_count() for x in self.live_out], dtype=np.int32)

    def max_live(self) -> int:
        """Largest number of registers live at any instruction boundary."""
        return max((x.bit_count() for x in self.live_in + self.live_out), default=0)


def _instr_sets(kernel: Kernel, kind: str) -> tuple[list[int], list[int]]:
    """Per instruction: use bitset and kill bitset (empty for guarded writes)."""
    ops = _operands(kind)
    use, kill = [], []
    for ins in kernel.instrs:
        s, d = ops(ins)
        use.append(mask(s))
        kill.append(0 if ins.guard is not None else mask(d))
    return use, kill


def liveness(kernel: Kernel, *, kind: str = "gpr", context: str = "sensitive", exit_live=()) -> Liveness:
    """Live-in/live-out of every instruction and block, for one register space.

    ``kind``: ``"gpr"``, ``"pred"`` or ``"ureg"``.  ``context``:
    ``"sensitive"`` (valid call/return paths only) or ``"insensitive"``
    (plain supergraph).  Guarded writes kill nothing.  ``exit_live`` lists
    registers treated as read when the kernel exits (default none;
    ``nvdisasm -plr`` behaves as if the stack pointer R1 were, see
    docs/compiler.md).
    """
    _check_context(context)
    use, kill = _instr_sets(kernel, kind)
    p = _program(kernel)
    gen_b, kill_b = [], []
    for b in kernel.blocks:
        g = k = 0
        for i in range(b.end - 1, b.start - 1, -1):
            g = use[i] | (g & ~kill[i])
            k |= kill[i]
        gen_b.append(g)
        kill_b.append(k)
    universe = (1 << 256) - 1
    bin_, bout = _solve(
        kernel, p, gen_b, kill_b, forward=False, boundary=mask(exit_live), universe=universe, context=context
    )
    n = len(kernel.instrs)
    li, lo = [0] * n, [0] * n
    for b in kernel.blocks:
        x = bout[b.id]
        for i in range(b.end - 1, b.start - 1, -1):
            lo[i] = x
            x = use[i] | (x & ~kill[i])
            li[i] = x
    return Liveness(kind, context, li, lo, bin_, bout)


def dead_operands(
    kernel: Kernel, live: Liveness | None = None, *, per: str = "value"
) -> list[tuple[bool, ...]]:
    """Dead-operand bits: for every instruction, one flag per ``src`` slot.

    ``per="value"`` (default): the flag is set when the value read is never
    read again -- the register is not live after the instruction, or the
    instruction itself overwrites it unconditionally (``IADD3 R5, R5, 1``).
    ``per="register"``: set only when the register is not live after the
    instruction.  A register named in two slots gets the same flag in both.
    A guarded write does not overwrite (the old value may survive).
    """
    if per not in ("value", "register"):
        raise RfmodelError(f"unknown per={per!r}; allowed: value, register")
    live = live if live is not None else liveness(kernel)
    if live.kind != "gpr":
        raise RfmodelError("dead_operands needs a GPR liveness")
    out = []
    for i, ins in enumerate(kernel.instrs):
        after = live.live_out[i]
        if per == "value" and ins.guard is None:
            after &= ~mask(ins.dst)
        out.append(tuple(not (after >> r) & 1 for r in ins.src))
    return out


def dead_defs(kernel: Kernel, live: Liveness | None = None) -> list[tuple[bool, ...]]:
    """For every instruction, one flag per ``dst`` register: the value written is never read."""
    live = live if live is not None else liveness(kernel)
    return [tuple(not (live.live_out[i] >> r) & 1 for r in ins.dst) for i, ins in enumerate(kernel.instrs)]


# --------------------------------------------------------------------------------------------------
# def-use chains and webs

ENTRY_DEF = -1  # "instruction index" of the pseudo-definition of a value live on kernel entry


@dataclass
class DefUse:
    """Reaching-definition chains of one register space.

    ``ud[(i, k)]``: the instructions whose definition of register ``src[k]``
    of instruction ``i`` may reach that read (``ENTRY_DEF`` = -1: the value
    may come from before the kernel).  ``du[(d, r)]``: the reads ``(i, k)``
    reached by instruction ``d``'s definition of ``r`` (``d`` may be -1).
    """

    kind: str
    ud: dict[tuple[int, int], tuple[int, ...]]
    du: dict[tuple[int, int], tuple[tuple[int, int], ...]]


def _reaching(kernel: Kernel, kind: str, context: str):
    """Def sites, per-register masks and per-block reaching sets."""
    ops = _operands(kind)
    sites: list[tuple[int, int]] = []  # def id -> (instruction or -1, register)
    gen_i: list[int] = []
    regmask: dict[int, int] = {}
    for i, ins in enumerate(kernel.instrs):
        g = 0
        for r in dict.fromkeys(ops(ins)[1]):
            regmask[r] = regmask.get(r, 0) | (1 << len(sites))
            g |= 1 << len(sites)
            sites.append((i, r))
        gen_i.append(g)
    used = sorted({r for ins in kernel.instrs for r in ops(ins)[0]} | set(regmask))
    entry_defs = 0
    for r in used:
        regmask[r] = regmask.get(r, 0) | (1 << len(sites))
        entry_defs |= 1 << len(sites)
        sites.append((ENTRY_DEF, r))
    kill_i = []
    for ins in kernel.instrs:
        k = 0
        if ins.guard is None:
            for r in ops(ins)[1]:
                k |= regmask[r]
        kill_i.append(k)
    gen_b, kill_b = [], []
    for b in kernel.blocks:
        g = k = 0
        for i in range(b.start, b.end):
            g = gen_i[i] | (g & ~kill_i[i])
            k |= kill_i[i]
        gen_b.append(g)
        kill_b.append(k)
    p = _program(kernel)
    universe = (1 << len(sites)) - 1
    bin_, _ = _solve(
        kernel, p, gen_b, kill_b, forward=True, boundary=entry_defs, universe=universe, context=context
    )
    return sites, regmask, gen_i, kill_i, bin_


def def_use_chains(kernel: Kernel, *, kind: str = "gpr", context: str = "sensitive") -> DefUse:
    """Use-def and def-use chains from reaching definitions (guarded writes do not kill)."""
    _check_context(context)
    ops = _operands(kind)
    sites, regmask, gen_i, kill_i, bin_ = _reaching(kernel, kind, context)
    ud: dict[tuple[int, int], tuple[int, ...]] = {}
    du: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for b in kernel.blocks:
        x = bin_[b.id]
        for i in range(b.start, b.end):
            for k, r in enumerate(ops(kernel.instrs[i])[0]):
                ids = bits(x & regmask[r])
                ud[(i, k)] = tuple(sorted(sites[d][0] for d in ids))
                for d in ids:
                    du.setdefault(sites[d], []).append((i, k))
            x = gen_i[i] | (x & ~kill_i[i])
    for i, r in sites:
        if i != ENTRY_DEF:
            du.setdefault((i, r), [])
    return DefUse(kind, ud, {key: tuple(v) for key, v in sorted(du.items())})


@dataclass(frozen=True)
class Web:
    """A live range: the definitions and reads of one register that share values.

    Def-use chains that share a read are merged (union-find).  ``defs`` are
    instruction indices (-1: the value is live on kernel entry); ``uses`` are
    ``(instruction, src slot)``; ``instrs`` are the instructions where the
    value is live before or after, or written (sorted); ``blocks`` the blocks
    holding them.
    """

    id: int
    reg: int
    defs: tuple[int, ...]
    uses: tuple[tuple[int, int], ...]
    instrs: tuple[int, ...]
    blocks: tuple[int, ...]


def union_root(parent: list[int], a: int) -> int:
    """The root of ``a`` in the union-find forest ``parent`` (each node's parent; a root is its own),
    halving the path on the way."""
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


def live_ranges(
    kernel: Kernel, live: Liveness | None = None, *, kind: str = "gpr", context: str = "sensitive"
) -> list[Web]:
    """The webs of a register space, ordered by (register, first definition).

    A dead definition forms a web with no uses.  A value read but never
    written in the kernel has the pseudo-definition -1.
    """
    _check_context(context)
    live = live if live is not None else liveness(kernel, kind=kind, context=context)
    if live.kind != kind:
        raise RfmodelError(f"live_ranges: liveness of kind {live.kind!r} given for kind {kind!r}")
    ops = _operands(kind)
    sites, regmask, gen_i, kill_i, bin_ = _reaching(kernel, kind, context)
    parent = list(range(len(sites)))

    reached = [False] * len(sites)
    uses_of: list[list[tuple[int, int]]] = [[] for _ in sites]
    span: list[set[int]] = [set() for _ in sites]
    # pass 1: merge defs sharing a read
    for b in kernel.blocks:
        x = bin_[b.id]
        for i in range(b.start, b.end):
            for k, r in enumerate(ops(kernel.instrs[i])[0]):
                ids = bits(x & regmask[r])
                for d in ids:
                    reached[d] = True
                if ids:
                    root = union_root(parent, ids[0])
                    uses_of[root].append((i, k))
                    for d in ids[1:]:
                        rd = union_root(parent, d)
                        if rd != root:
                            parent[rd] = root
                            uses_of[root] += uses_of[rd]
                            uses_of[rd] = []
            x = gen_i[i] | (x & ~kill_i[i])
    # pass 2: the instructions each web is live at
    for b in kernel.blocks:
        x = bin_[b.id]
        for i in range(b.start, b.end):
            y = gen_i[i] | (x & ~kill_i[i])
            for r in bits(live.live_in[i]):  # values live on entry to i
                for d in bits(x & regmask.get(r, 0)):
                    span[union_root(parent, d)].add(i)
            for r in bits(live.live_out[i]):  # values live on exit from i
                for d in bits(y & regmask.get(r, 0)):
                    span[union_root(parent, d)].add(i)
            for d in bits(gen_i[i]):
                span[union_root(parent, d)].add(i)
            x = y
    groups: dict[int, list[int]] = {}
    for d, (i, _r) in enumerate(sites):
        if i == ENTRY_DEF and not reached[d]:
            continue
        groups.setdefault(union_root(parent, d), []).append(d)
    block_of = kernel.block_of()
    webs = []
    for root, ds in groups.items():
        reg = sites[ds[0]][1]
        instrs = tuple(sorted(span[root]))
        webs.append(
            (
                reg,
                tuple(sorted(sites[d][0] for d in ds)),
                tuple(sorted(uses_of[root])),
                instrs,
                tuple(sorted({block_of[i] for i in instrs})),
            )
        )
    webs.sort(key=lambda w: (w[0], w[1]))
    return [Web(j, *w) for j, w in enumerate(webs)]


def dead_source_mask(kernel: Kernel, per: str = "value", max_src: int = 4):
    """Per static instruction, bit ``k`` set when the ``k``-th source register of its trace row (``Instr.src``
    without RZ, at most ``max_src``) is read for the last time (:func:`dead_operands` with ``per``); a
    register named twice carries the bit on its last slot only.  An int64 array."""
    from rfmodel.trace import NONE

    flags = dead_operands(kernel, per=per)
    out = np.zeros(len(kernel.instrs), dtype=np.int64)
    for i, ins in enumerate(kernel.instrs):
        regs = [(r, f) for r, f in zip(ins.src, flags[i], strict=True) if r < NONE]
        m = 0
        for k, (r, f) in enumerate(regs[:max_src]):
            if f and all(r2 != r for r2, _ in regs[k + 1 : max_src]):
                m |= 1 << k
        out[i] = m
    return out


@njit(cache=True)
def trace_dead_masks(warp_ptr, src, dst):
    """The dead bits a trace's own rows give, without a static kernel (each warp's rows in program order):
    per row, bit k of the first array set when source slot k is its register's last read before the
    register is written again or the warp ends (a register named twice in a row: both slots), and bit k of
    the second when the value destination slot k writes is never read."""
    n = src.shape[0]
    out = np.zeros(n, dtype=np.int64)
    defs = np.zeros(n, dtype=np.int64)
    live = np.zeros(256, dtype=np.uint8)
    for w in range(len(warp_ptr) - 1):
        live[:] = 0  # after the warp's last row nothing is read
        for r in range(warp_ptr[w + 1] - 1, warp_ptr[w] - 1, -1):
            d = 0
            for k in range(dst.shape[1]):
                x = dst[r, k]
                if x != 255:
                    if live[x] == 0:
                        d |= 1 << k
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
            out[r] = m
            defs[r] = d
    return out, defs
