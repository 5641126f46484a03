"""Basic blocks, functions and supergraph edges of one SASS function section.

Rules (docs/sass-reader.md, "Control flow"):

* A block starts at instruction 0, at every resolved branch/call/BRX target,
  at every function entry, and after every BRA/BRX/JMP/JMX/CALL/RET/EXIT/
  KILL/BREAK.  Labels by themselves do not start blocks (nvdisasm also labels
  BSSY reconvergence points and EXITs).
* Functions: the kernel (entry 0) plus the in-section subroutines: the
  ``.type ...,@function`` symbols (nvdisasm), and the CALL targets without a
  symbol (all of them in cuobjdump) from which a RET can be reached.  A CALL
  to any other address (ptxas uses ``CALL.REL.NOINC`` to a label of the same
  function as a jump) is treated as a jump.  A function spans from its entry
  to the next entry.
* Edges: a branch goes to its target(s), plus the fall-through when it is
  conditional; a CALL block goes to the callee entry and names the block
  after the call as ``call_return``; a RET block goes to every return site
  of its function; an unconditional EXIT has no successor.
"""

from __future__ import annotations

from dataclasses import dataclass

from rfmodel.ir import BasicBlock

_JUMPS = ("BRA", "JMP", "BRX", "JMX")
_TERMINATORS = frozenset({"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "KILL", "BREAK"})


@dataclass
class Graph:
    blocks: list[BasicBlock]
    functions: dict[str, int]
    targets: list[list[int]]
    brx_candidates: dict[int, list[int]]
    call_kind: dict[int, str]  # CALL index -> "call" | "jump" | "external"


def _local_succs(i: int, bases, targets, cond, n: int) -> list[int]:
    """Intraprocedural successors used to find which CALL targets return (calls fall through)."""
    b = bases[i]
    if b in _JUMPS:
        out = list(targets[i])
        if cond[i]:
            out.append(i + 1)
    elif b in ("EXIT", "KILL", "RET"):
        out = [i + 1] if cond[i] else []
    else:
        out = [i + 1]
    return [s for s in out if s < n]


def _reaches_ret(start: int, bases, targets, cond, n: int) -> bool:
    seen = {start}
    stack = [start]
    while stack:
        i = stack.pop()
        if bases[i] == "RET":
            return True
        for s in _local_succs(i, bases, targets, cond, n):
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return False


def build(
    kernel_name: str,
    pcs: list[int],
    bases: list[str],
    cond: list[bool],
    targets: list[list[int]],
    unresolved: list[int],
    external: list[int],
    sym_entries: dict[int, str] | None,
    labels: dict[int, str],
    reconv: dict[int, int] | None = None,
) -> Graph:
    """Blocks and edges; see the module docstring.

    ``targets[i]`` are the resolved target indices of instruction ``i``;
    ``unresolved`` lists BRX/JMX without a target list (their targets are
    approximated from the block leaders, see docs/sass-reader.md); ``external`` lists calls out of
    the section; ``sym_entries`` maps instruction index -> function symbol
    (``None`` when the text has no symbols); ``labels`` maps pc -> label;
    ``reconv`` maps the index of each BSSY to the index of its reconvergence point.
    """
    n = len(bases)
    reconv = reconv or {}
    targets = [list(t) for t in targets]
    calls = [i for i in range(n) if bases[i] == "CALL" and i not in external and targets[i]]
    call_targets = {targets[i][0] for i in calls}

    # ---- candidate function entries (used to bound unresolved BRX approximations)
    if sym_entries is not None:
        cand = {0} | set(sym_entries)
    else:
        cand = {0} | call_targets
    after = {i + 1 for i in range(n) if bases[i] in _TERMINATORS and i + 1 < n}
    leaders0 = {0} | cand | after
    for t in targets:
        leaders0.update(t)
    brx_candidates: dict[int, list[int]] = {}
    if unresolved:
        bounds = sorted(cand) + [n]
        for i in unresolved:
            lo = max(b for b in bounds if b <= i)
            hi = min(b for b in bounds if b > i)
            # ptxas wraps a jump-table switch in a BSSY region and places the cases after the
            # BRX: take the leaders after the BRX up to the reconvergence point of the innermost
            # BSSY still open at the BRX (or to the end of the function if there is none)
            for j in range(i - 1, lo - 1, -1):
                r = reconv.get(j)
                if r is not None and r > i:
                    hi = min(hi, r + 1)
                    break
            cands = sorted(x for x in leaders0 if i < x < hi)
            if not cands:
                cands = sorted(x for x in leaders0 if lo <= x < hi)
            targets[i] = cands
            brx_candidates[i] = cands

    # ---- function entries
    entries: dict[int, str] = {0: kernel_name}
    for i, name in (sym_entries or {}).items():
        if i != 0:
            entries[i] = name
    # CALL targets without a function symbol (all of them in cuobjdump text) are
    # subroutines if a RET can be reached from them, else jumps
    for t in sorted(call_targets):
        if t not in entries and _reaches_ret(t, bases, targets, cond, n):
            entries[t] = labels.get(pcs[t]) or f"$sub_{pcs[t]:04x}"
    call_kind: dict[int, str] = {i: "external" for i in external if bases[i] == "CALL"}
    for i in calls:
        call_kind[i] = "call" if targets[i][0] in entries else "jump"

    # ---- blocks
    leaders = {0} | set(entries) | after
    for t in targets:
        leaders.update(t)
    starts = sorted(x for x in leaders if x < n)
    block_of = [0] * n
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else n
        for i in range(s, e):
            block_of[i] = k
    entry_list = sorted(entries)

    def func_of(i: int) -> str:
        lo = 0
        for e in entry_list:
            if e <= i:
                lo = e
            else:
                break
        return entries[lo]

    return_sites: dict[int, list[int]] = {}
    for i in calls:
        if call_kind[i] == "call" and i + 1 < n:
            return_sites.setdefault(targets[i][0], []).append(block_of[i + 1])
    func_entry = {name: e for e, name in entries.items()}

    blocks: list[BasicBlock] = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else n
        last = e - 1
        b = bases[last]
        ft = [block_of[e]] if e < n else []
        call_return = None
        if b in _JUMPS or call_kind.get(last) == "jump":
            succ = [block_of[t] for t in targets[last]] + (ft if cond[last] else [])
        elif b == "CALL":
            if call_kind.get(last) == "call":
                succ = [block_of[targets[last][0]]] + (ft if cond[last] else [])
                call_return = ft[0] if ft else None
            else:
                succ = list(ft)
        elif b == "RET":
            fname = func_of(last)
            succ = list(return_sites.get(func_entry[fname], [])) + (ft if cond[last] else [])
        elif b in ("EXIT", "KILL"):
            succ = list(ft) if cond[last] else []
        else:
            succ = list(ft)
        seen: set[int] = set()
        uniq = [x for x in succ if not (x in seen or seen.add(x))]
        label = entries.get(s) if s in entries else labels.get(pcs[s], "")
        blocks.append(
            BasicBlock(
                id=k,
                start=s,
                end=e,
                succs=tuple(uniq),
                func=func_of(s),
                call_return=call_return,
                label=label or "",
            )
        )
    functions = {name: block_of[e] for e, name in sorted(entries.items())}
    return Graph(blocks, functions, targets, brx_candidates, call_kind)
