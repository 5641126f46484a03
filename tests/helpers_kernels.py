"""A tiny builder of hand-written kernels for the tests (and :func:`synthetic_kernel`, small generated ones).

One instruction per line::

    [label:] [@[!]pred] opcode [dst ...] [= src ...] [-> label]

* registers ``R<n>`` are GPRs; ``P<n>`` are predicates ``n``; the names
  ``p`` and ``q`` are predicates 0 and 1; ``U<n>`` are uniform registers;
* operands left of ``=`` are written, right of ``=`` are read (a guard is
  also read); anything else (immediates, symbols) is ignored;
* ``bra``/``call`` take their target after ``->``; ``ret`` returns;
  ``exit`` ends the thread;
* ``.func name`` starts a subroutine (the code before the first ``.func``
  is the kernel itself, function ``"main"``).

Blocks start at branch/call targets and function entries and after every
control instruction; ``succs`` list the fall-through block first, then the
branch target.  ``bra`` is unconditional unless guarded.  A block ending in
``call`` has the callee entry as successor and ``call_return`` = the next
block; a block ending in ``ret`` has every return site of its function.
"""

from __future__ import annotations

from rfmodel.ir import BasicBlock, Instr, Kernel, OpClass
from rfmodel.workload.synthetic import SyntheticParams, generate

_CLASSES = {
    "ld.local": OpClass.LD_LOCAL,
    "st.local": OpClass.ST_LOCAL,
    "ld.global": OpClass.LD_GLOBAL,
    "ldg": OpClass.LD_GLOBAL,
    "st.global": OpClass.ST_GLOBAL,
    "stg": OpClass.ST_GLOBAL,
    "lds": OpClass.LD_SHARED,
    "sts": OpClass.ST_SHARED,
    "ffma": OpClass.FP32,
    "fadd": OpClass.FP32,
    "fmul": OpClass.FP32,
    "mufu": OpClass.SFU,
    "bra": OpClass.BRANCH,
    "call": OpClass.BRANCH,
    "ret": OpClass.BRANCH,
    "exit": OpClass.EXIT,
    "bar": OpClass.BARRIER,
}
_PRED_NAMES = {"p": 0, "q": 1}


def _operand(tok: str):
    """('gpr'|'pred'|'ureg', n) or None for an ignored token."""
    t = tok.strip(",;[]")
    if t in _PRED_NAMES:
        return "pred", _PRED_NAMES[t]
    if len(t) > 1 and t[0] in "RPU" and t[1:].isdigit():
        return {"R": "gpr", "P": "pred", "U": "ureg"}[t[0]], int(t[1:])
    return None


def build_kernel(text: str, name: str = "k", regs_per_thread: int = 32) -> Kernel:
    """Build a :class:`Kernel` from the compact description in the module docstring."""
    rows = []  # (func, label, guard, opcode, dsts, srcs, target)
    func = "main"
    pending_labels: list[str] = []
    entries: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith(".func"):
            func = line.split()[1]
            entries[func] = ""
            continue
        while ":" in line.split()[0]:
            lab, line = line.split(":", 1)
            pending_labels.append(lab.strip())
            line = line.strip()
            if not line:
                break
        if not line:
            continue
        guard = None
        if line.startswith("@"):
            guard, line = line.split(None, 1)
            guard = guard[1:]
        target = None
        if "->" in line:
            line, target = (s.strip() for s in line.split("->"))
        if "=" in line:
            left, right = line.split("=", 1)
        else:
            left, right = line, ""
        toks = left.split()
        opcode, dst_toks = toks[0], toks[1:]
        rows.append((func, pending_labels, guard, opcode, dst_toks, right.split(), target))
        if func in entries and entries[func] == "":
            entries[func] = len(rows) - 1
        pending_labels = []

    label_at: dict[str, int] = {}
    for i, row in enumerate(rows):
        for lab in row[1]:
            label_at[lab] = i
    for f, i in entries.items():
        label_at[f] = i

    instrs = []
    for i, (_f, _labs, guard, opcode, dst_toks, src_toks, target) in enumerate(rows):
        dst, src, pdst, psrc, udst, usrc = [], [], [], [], [], []
        for t in dst_toks:
            op = _operand(t)
            if op:
                {"gpr": dst, "pred": pdst, "ureg": udst}[op[0]].append(op[1])
        if guard is not None:
            op = _operand(guard.lstrip("!"))
            psrc.append(op[1])
        for t in src_toks:
            op = _operand(t)
            if op:
                {"gpr": src, "pred": psrc, "ureg": usrc}[op[0]].append(op[1])
        base = opcode.lower()
        cls = _CLASSES.get(base, _CLASSES.get(base.split(".")[0], OpClass.INT))
        if base.startswith("ld.local") or base.startswith("st.local"):
            cls = _CLASSES[base[:8]]
        instrs.append(
            Instr(
                pc=16 * i,
                opcode=opcode.upper(),
                op_class=cls,
                dst=tuple(dst),
                src=tuple(src),
                reuse=(False,) * len(src),
                guard=guard,
                pdst=tuple(pdst),
                psrc=tuple(psrc),
                udst=tuple(udst),
                usrc=tuple(usrc),
                targets=(label_at[target],) if target else (),
                line=i + 1,
            )
        )

    # leaders
    n = len(instrs)
    leaders = {0} | set(entries.values())
    for i, ins in enumerate(instrs):
        if ins.targets:
            leaders.add(ins.targets[0])
        if ins.op_class in (OpClass.BRANCH, OpClass.EXIT) and i + 1 < n:
            leaders.add(i + 1)
    starts = sorted(leaders)
    bounds = list(zip(starts, starts[1:] + [n], strict=True))
    block_at = {s: j for j, (s, _e) in enumerate(bounds)}
    func_of = [row[0] for row in rows]

    succs: list[list[int]] = []
    call_return: list[int | None] = []
    for s, e in bounds:
        last = instrs[e - 1]
        base = last.base.lower()
        out: list[int] = []
        cr = None
        falls = e < n and func_of[e] == func_of[s]
        if base == "bra":
            if last.guard is not None and falls:
                out.append(block_at[e])
            out.append(block_at[last.targets[0]])
        elif base == "call":
            out.append(block_at[last.targets[0]])
            cr = block_at[e]
        elif base in ("ret", "exit"):
            if last.guard is not None and falls:
                out.append(block_at[e])
        elif falls:
            out.append(block_at[e])
        succs.append(out)
        call_return.append(cr)
    # RET edges: every return site of the function
    for j, (s, e) in enumerate(bounds):
        if instrs[e - 1].base.lower() == "ret":
            f = func_of[s]
            for c, (_cs, ce) in enumerate(bounds):
                if call_return[c] is not None and instrs[ce - 1].targets[0] == entries[f]:
                    succs[j].append(call_return[c])
    blocks = [
        BasicBlock(
            id=j,
            start=s,
            end=e,
            succs=tuple(succs[j]),
            func=func_of[s],
            call_return=call_return[j],
            label=next(iter(rows[s][1]), ""),
        )
        for j, (s, e) in enumerate(bounds)
    ]
    functions = {"main": 0} | {f: block_at[i] for f, i in entries.items()}
    return Kernel(
        name=name,
        instrs=instrs,
        blocks=blocks,
        regs_per_thread=regs_per_thread,
        functions=functions,
        source="tests/helpers_kernels.py",
    )


#: Listing 1 of the Latency-Tolerant Register File paper (PTX, registers already allocated):
#: compare two 100-element arrays, set R6 if all elements are equal.
LISTING1 = """
    mov R0 = A              # 1  mov.u32 R0, A
    mov R1 = B              # 2  mov.u32 R1, B
    mov R2 = 0              # 3  mov.u32 R2, 0
    mov R3 = 100            # 4  mov.u32 R3, 100
L1: ld.local R4 = R0        # 5  ld.local.u32 R4, [R0]
    ld.local R5 = R1        # 6  ld.local.u32 R5, [R1]
    set.eq p = R4 R5        # 7  set.eq.u32.u32 p, R4, R5
    @!p bra -> L2           # 8
    add R0 = R0 4           # 9
    add R1 = R1 4           # 10
    add R2 = R2 1           # 11
    set.lt q = R2 R3        # 12 set.lt.u32.u32 q, R2, R3
    @q bra -> L1            # 13
    mov R6 = 1              # 14
    bra -> L3               # 15
L2: mov R6 = 0              # 16
L3: exit                    # 17
"""


def listing1() -> Kernel:
    return build_kernel(LISTING1, name="ltrf_listing1")


def synthetic_kernel(seed: int, depth: int = 2, ifs: int = 1, **changes) -> Kernel:
    """A small generated kernel: ``depth`` nested loops of two trips, ``ifs`` if-blocks, a quarter of its
    instructions memory accesses; ``changes``: other :class:`SyntheticParams` fields."""
    p = SyntheticParams(
        loop_depth=depth,
        trip_counts=(2,) * depth,
        body_size=16,
        outer_body_size=4,
        prologue_size=4,
        epilogue_size=2,
        if_blocks=ifs,
        if_size=3,
        mem_fraction=0.25,
        mem_mix={"ld_global": 0.6, "st_global": 0.2, "ld_shared": 0.2},
    ).replace(**changes)
    return generate(p, seed=seed)[0]
