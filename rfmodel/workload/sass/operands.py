"""Operand text of one SASS instruction -> the registers it reads and writes.

:func:`split_operands` cuts the operand text at top-level commas,
:func:`parse_operand` classifies one operand, and :func:`analyze` applies the
role and register-group rules (docs/sass-reader.md, "Operands") to give the
destination/source GPRs, predicates and uniform registers of the instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rfmodel.ir import MEMORY_CLASSES, OpClass
from rfmodel.workload.sass.opcodes import (
    CARRY_OUT_OPS,
    FP64_OPS,
    GLOBAL_ADDRESS_OPS,
    LOAD_DATA_OPS,
    NO_DST_OPS,
    OPCODE_CLASS,
    PRED_THEN_REG_OPS,
    STORE_DATA_OPS,
    TWO_PRED_DST_OPS,
)

__all__ = [
    "ADD_SLOT_C_OPS",
    "UNARY_SLOT_B_OPS",
    "Operand",
    "Semantics",
    "analyze",
    "mma_fragment_regs",
    "parse_operand",
    "split_operands",
]

# operand kinds
GPR, UGPR, PRED, UPRED, PREDSET, MEM, CONST, IMM, LABEL, SPECIAL, OTHER = (
    "R",
    "UR",
    "P",
    "UP",
    "PR",
    "MEM",
    "CONST",
    "IMM",
    "LABEL",
    "SR",
    "OTHER",
)
_REG_KINDS = (GPR, UGPR)
_PRED_KINDS = (PRED, UPRED)

_ANNOT_RE = re.compile(r'\(\*"([^"]*)"\*\)')
_REG_RE = re.compile(
    r"^(?:(RZ|URZ|PT|UPT|PR|UPR|SRZ)|(UR|R|UP|P|SB|B)(\d+)|(SR_[A-Za-z0-9_]+))((?:\.[A-Za-z0-9_]+)*)$"
)
_SIGNED_REG_RE = re.compile(r"^(?:UR|R|UP|P)[-+]\d")  # "R-5": a register number with a sign
_IMM_RE = re.compile(r"^[-+]?(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|INF|QNAN|SNAN|NAN)$")
_INNER_RE = re.compile(r"(?<![A-Za-z0-9_])(URZ|RZ|UR\d+|R\d+)((?:\.[A-Za-z0-9]+)*)")
_LABEL_RE = re.compile(r"^`\(([^()`]*)\)$")
_MMA_SHAPE_RE = re.compile(r"^(\d+)x(\d+)x(\d+)$")
_FLOAT_TYPES = ("F16", "BF16", "TF32", "F32", "F64", "E4M3", "E5M2")
_TEXTURE_OPS = frozenset({"TEX", "TLD", "TLD4", "TMML", "TXD"})
_NO_SLOT_KINDS = (PRED, UPRED, PREDSET, LABEL)
_GMMA_OPS = frozenset({"HGMMA", "IGMMA", "QGMMA", "BGMMA"})

#: single-source ops that encode their source in slot B (measured on the encodings:
#: the register number sits in bits 32-39 of the low word)
UNARY_SLOT_B_OPS = frozenset(
    {"MOV", "IABS", "MUFU", "POPC", "FLO", "BREV", "I2F", "F2I", "F2F", "FRND", "I2FP", "I2I", "UMOV"}
)
#: two-source adds whose second source's reuse bit is slot C (they are FMAs a*1+c)
ADD_SLOT_C_OPS = frozenset({"FADD", "DADD", "HADD2"})
_TEX_DIMS = {"1D": 1, "2D": 2, "3D": 3, "CUBE": 3, "ARRAY_1D": 2, "ARRAY_2D": 3, "ARRAY_CUBE": 4}


@dataclass(slots=True)
class Operand:
    """One operand as written.

    ``index`` is the register number (``None`` for RZ/URZ/PT/UPT and for
    non-register kinds); ``neg`` is a leading ``!``/``~``/``-``; ``inner``
    lists the registers inside a bracketed memory or constant operand as
    ``(kind, index, suffixes, group)`` where ``group`` counts brackets
    (``desc[UR4][R2.64]``: UR4 is in group 0, R2 in group 1).  A constant operand
    may carry the register modifiers (``-c[..]``, ``~c[..]``, ``|c[..]|``): it stays
    ``CONST`` with ``prefix`` ``c`` (``neg`` for ``-``/``~``; the text keeps ``|``).
    """

    text: str
    kind: str
    index: int | None = None
    neg: bool = False
    reuse: bool = False
    suffixes: tuple[str, ...] = ()
    prefix: str = ""  # text before the first '[' of MEM/CONST operands ('c', 'desc', ...)
    inner: list[tuple[str, int, tuple[str, ...], int]] = field(default_factory=list)
    label: str | None = None
    value: int | None = None  # integer value of hex immediates


@dataclass(slots=True)
class Semantics:
    dst: list[int] = field(default_factory=list)
    src: list[int] = field(default_factory=list)
    reuse: list[bool] = field(default_factory=list)
    pdst: list[int] = field(default_factory=list)
    psrc: list[int] = field(default_factory=list)
    udst: list[int] = field(default_factory=list)
    usrc: list[int] = field(default_factory=list)
    mem_bytes: int = 0
    # register groups wider than one register: (kind, first register, width)
    groups: list[tuple[str, int, int]] = field(default_factory=list)
    # encoding slot (0 = A, 1 = B, 2 = C, ...) of every entry of ``src``
    slots: list[int] = field(default_factory=list)
    # operand positions of the destinations, and of the GPR source operands
    dst_ops: list[int] = field(default_factory=list)
    reg_src_ops: list[int] = field(default_factory=list)


# --------------------------------------------------------------------------------------------------
# lexing


def split_operands(text: str) -> tuple[list[str], str | None]:
    """Operand strings of an instruction and its ``(*"..."*)`` annotation, if any.

    Commas split operands only at the top level (not inside ``[...]``,
    ``(...)`` or backquotes); an operand that still contains blanks at the top
    level (``BRX R10 -0x220``, ``RET.REL.NODEC R12 `(k)``) is split at them.
    Raises ``ValueError`` for unbalanced brackets.
    """
    annotation = None
    m = _ANNOT_RE.search(text)
    if m:
        annotation = m.group(1)
        text = text[: m.start()] + text[m.end() :]
    out: list[str] = []
    depth = 0
    quoted = False
    cur: list[str] = []

    def flush() -> None:
        piece = "".join(cur).strip()
        cur.clear()
        if piece:
            out.extend(_split_blanks(piece))
        elif out or text.strip():
            raise ValueError("empty operand")

    for ch in text:
        if ch == "`":
            quoted = True
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced '{ch}'")
            if depth == 0 and ch == ")":
                quoted = False
        if ch == "," and depth == 0 and not quoted:
            flush()
        else:
            cur.append(ch)
    if depth != 0:
        raise ValueError("unbalanced brackets")
    if "".join(cur).strip() or out:
        flush()
    return out, annotation


def _split_blanks(piece: str) -> list[str]:
    if " " not in piece and "\t" not in piece:
        return [piece]
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in piece:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch in " \t" and depth == 0:
            if cur:
                parts.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        parts.append("".join(cur))
    return parts


def parse_operand(text: str) -> Operand:
    """Classify one operand string (see :class:`Operand`)."""
    if text.startswith("`"):
        m = _LABEL_RE.match(text)
        if not m:
            raise ValueError(f"bad label operand {text!r}")
        return Operand(text, LABEL, label=m.group(1).strip())
    if "[" in text:
        return _parse_bracketed(text)
    core = text.replace("|", "")
    neg = False
    while core[:1] in ("-", "!", "~"):
        neg = True
        core = core[1:]
    if _SIGNED_REG_RE.match(core):
        raise ValueError(f"register {text!r} out of range")
    m = _REG_RE.match(core)
    if m:
        named, letters, digits, sreg, suf = m.groups()
        suffixes = tuple(s for s in suf.split(".") if s)
        reuse = "reuse" in suffixes
        if named:
            kind = {"RZ": GPR, "URZ": UGPR, "PT": PRED, "UPT": UPRED, "PR": PREDSET, "UPR": PREDSET}.get(
                named, SPECIAL
            )
            return Operand(text, kind, None, neg, reuse, suffixes, prefix=named)
        if sreg:
            return Operand(text, SPECIAL, None, neg, False, suffixes)
        idx = int(digits)
        kind = {"R": GPR, "UR": UGPR, "P": PRED, "UP": UPRED}.get(letters, OTHER)
        if kind == GPR and idx > 254 or kind == UGPR and idx > 62 or kind in _PRED_KINDS and idx > 6:
            raise ValueError(f"register {text!r} out of range")
        return Operand(text, kind, idx, neg, reuse, suffixes)
    if _IMM_RE.match(text.strip()):
        t = text.strip().lstrip("+")
        value = None
        if "x" in t or "X" in t:
            value = int(t, 16)
        return Operand(text, IMM, value=value)
    return Operand(text, OTHER)


def _parse_bracketed(text: str) -> Operand:
    first = text.index("[")
    lead = text[:first].strip()
    core = lead.lstrip("-~|")
    neg = False
    if core in ("c", "cx"):
        # a constant with an operand modifier, as registers take them: ``-c[..]``, ``~c[..]``
        # (bitwise not), ``|c[..]|``, ``-|c[..]|``; ``neg`` is set by ``-`` or ``~``
        kind, prefix = CONST, core
        neg = "-" in lead or "~" in lead
    else:
        prefix = lead.lstrip("-")
        kind = MEM
    inner: list[tuple[str, int, tuple[str, ...], int]] = []
    group = 0
    pos = first
    while pos < len(text):
        if text[pos] != "[":
            # trailing text after a bracket (".tnspB" etc.) carries no registers
            break
        close = text.find("]", pos)
        if close < 0:
            raise ValueError(f"unbalanced '[' in {text!r}")
        body = text[pos + 1 : close]
        for name, suf in _INNER_RE.findall(body):
            if name in ("RZ", "URZ"):
                continue
            k = UGPR if name.startswith("U") else GPR
            idx = int(name[2:] if k == UGPR else name[1:])
            if k == GPR and idx > 254 or k == UGPR and idx > 62:
                raise ValueError(f"register {name!r} out of range")
            inner.append((k, idx, tuple(s for s in suf.split(".") if s), group))
        group += 1
        pos = close + 1
    return Operand(text, kind, neg=neg, prefix=prefix, inner=inner)


# --------------------------------------------------------------------------------------------------
# semantics


def _pred_index(op: Operand) -> int | None:
    if op.index is None:
        return None
    return op.index + (8 if op.kind == UPRED else 0)


def _mask_preds(ops: list[Operand], uniform: bool) -> list[int]:
    """Predicates selected by the immediate mask of P2R/R2P (all seven if none)."""
    mask = 0x7F
    for op in reversed(ops):
        if op.kind == IMM and op.value is not None:
            mask = op.value
            break
    base = 8 if uniform else 0
    return [base + p for p in range(7) if mask >> p & 1]


def _add_preds(out: list[int], op: Operand, ops: list[Operand]) -> None:
    """Append to ``out`` the predicates operand ``op`` of ``ops`` names: a predicate (none for PT), or
    those a P2R/R2P's predicate set selects."""
    if op.kind == PREDSET:
        out.extend(_mask_preds(ops, op.prefix == "UPR"))
        return
    p = _pred_index(op)
    if p is not None:
        out.append(p)


def _data_regs(base: str, mods: tuple[str, ...]) -> int:
    if base in ("LDSM", "STSM", "LDSM16", "MOVM"):
        if "4" in mods:
            return 4
        if "2" in mods:
            return 2
        return 1
    if "128" in mods:
        return 4
    if "64" in mods or "U64" in mods or "S64" in mods or "F64" in mods:
        return 2
    return 1


def _mem_bytes(base: str, mods: tuple[str, ...]) -> int:
    if base in ("LDSM", "STSM"):
        return 4 * _data_regs(base, mods)
    if "U8" in mods or "S8" in mods:
        return 1
    if "U16" in mods or "S16" in mods:
        return 2
    return 4 * _data_regs(base, mods)


def _type_bits(t: str | None, default: int) -> int:
    if t is None:
        return default
    return {
        "F16": 16,
        "BF16": 16,
        "TF32": 32,
        "F32": 32,
        "F64": 64,
        "E4M3": 8,
        "E5M2": 8,
        "S8": 8,
        "U8": 8,
        "S4": 4,
        "U4": 4,
        "B1": 1,
        "S32": 32,
    }.get(t, default)


def mma_fragment_regs(base: str, mods: tuple[str, ...]) -> tuple[int, int, int, int] | None:
    """Registers per thread of the D, A, B and C fragments of an MMA instruction.

    The shape modifier gives M, N, K (``16816`` -> 16x8x16, ``8x8x4`` ->
    8x8x4); the type modifiers give the element widths (defaults: F16 inputs
    for HMMA, 8-bit for IMMA, 1-bit for BMMA, FP64 for DMMA; FP32/S32
    accumulators).  A fragment of ``rows x cols`` elements of ``b`` bits
    spread over a warp takes ``rows * cols * b / (32 * 32)`` registers per
    thread (x4 threads for the warpgroup ``*GMMA`` forms).  ``None`` if the
    shape cannot be read.
    """
    shape = next((m for m in mods if m[:1].isdigit()), None)
    if shape is None:
        return None
    m = _MMA_SHAPE_RE.match(shape)
    if m:
        M, N, K = (int(x) for x in m.groups())
    else:
        if not shape.isdigit():
            return None
        M = 16 if shape.startswith("16") else 8
        rest = shape[len(str(M)) :]
        if len(rest) < 2 or rest[0] != "8":
            return None
        N, K = 8, int(rest[1:])
    types = [t for t in mods if t in _FLOAT_TYPES or t in ("S8", "U8", "S4", "U4", "B1", "S32")]
    if base == "DMMA":
        ab = cd = 64
    elif base in ("IMMA", "IGMMA"):
        ab = _type_bits(types[0] if types else None, 8)
        cd = 32
    elif base in ("BMMA", "BGMMA"):
        ab, cd = 1, 32
    else:  # HMMA, HGMMA, QGMMA ...: accumulator type first, then input type
        cd = _type_bits(types[0] if types else None, 32)
        ab = _type_bits(types[1] if len(types) > 1 else None, 16 if base != "QGMMA" else 8)
    threads_bits = 32 * 32 * (4 if base.endswith("GMMA") else 1)

    def regs(rows: int, cols: int, bits: int) -> int:
        return max(1, -(-rows * cols * bits // threads_bits))

    a_k = K // 2 if "SP" in mods else K
    d = regs(M, N, cd)
    return d, regs(M, a_k, ab), regs(K, N, ab), d


def _conversion_widths(base: str, mods: tuple[str, ...]) -> tuple[int, int]:
    """(destination, source) widths of I2F/F2I/F2F/FRND/I2I."""
    wide_int = "S64" in mods or "U64" in mods
    if base == "I2F":
        return (2 if "F64" in mods else 1), (2 if wide_int else 1)
    if base == "F2I":
        return (2 if wide_int else 1), (2 if "F64" in mods else 1)
    if base == "F2F":
        types = [m for m in mods if m in _FLOAT_TYPES]
        if not types:
            return 1, 1
        d = types[0]
        s = types[1] if len(types) > 1 else d
        return (2 if d == "F64" else 1), (2 if s == "F64" else 1)
    if base == "FRND":
        w = 2 if "F64" in mods else 1
        return w, w
    if base == "I2I":
        return (2 if wide_int else 1), (2 if wide_int else 1)
    return 1, 1


_LIMIT = {GPR: 254, UGPR: 62}


def _expand(sem: Semantics, kind: str, first: int, width: int, into: list[int]) -> None:
    """Append registers ``first .. first+width-1``; ValueError past the last register."""
    last = first + width - 1
    if last > _LIMIT[kind]:
        name = "R" if kind == GPR else "UR"
        raise ValueError(f"register group {name}{first} of {width} runs past {name}{_LIMIT[kind]}")
    if width > 1:
        sem.groups.append((kind, first, width))
    into.extend(range(first, last + 1))


def _destinations(base: str, ops: list[Operand], known: bool) -> list[int]:
    """The positions of an instruction's destination operands: the first operand unless it cannot be
    written (memory, constant, label, immediate, a negated predicate) or the opcode writes none; a second
    predicate or register where the opcode writes two; carry-out predicates after a register (up to two,
    one for ``VOTE``; an unknown opcode may have them); texture ops' second register."""
    n = len(ops)
    dst_pos: list[int] = []
    if n and base not in NO_DST_OPS and ops[0].kind not in (MEM, CONST, LABEL, IMM, OTHER):
        first = ops[0]
        if first.kind in _PRED_KINDS and first.neg:
            pass  # a negated predicate can only be read
        else:
            dst_pos.append(0)
            if first.kind in _PRED_KINDS and n > 1:
                second = ops[1]
                if base in TWO_PRED_DST_OPS and second.kind in _PRED_KINDS and not second.neg:
                    dst_pos.append(1)
                elif base in PRED_THEN_REG_OPS and second.kind in _REG_KINDS and not second.neg:
                    dst_pos.append(1)
            elif first.kind in _REG_KINDS:
                if base in ("VOTE", "VOTEU"):
                    cap = 1
                elif base in CARRY_OUT_OPS or not known:
                    cap = 2
                else:
                    cap = 0
                j = 1
                while cap and j < n - 1 and ops[j].kind in _PRED_KINDS and not ops[j].neg:
                    dst_pos.append(j)
                    j += 1
                    cap -= 1
    # texture ops write two register operands (Rd, Rd2) ahead of the coordinates
    if base in _TEXTURE_OPS and dst_pos == [0] and n > 1 and ops[1].kind == GPR:
        dst_pos.append(1)
    return dst_pos


def analyze(opcode: str, ops: list[Operand], arch: str, hidden_desc: int | None = None) -> Semantics:
    """Registers read and written by ``opcode ops`` (the guard is not included).

    ``hidden_desc`` is the uniform register holding the 64-bit global-memory
    descriptor that sm_80-89 global/generic memory instructions read without
    printing it (the latest ``ULDC.64 URn, c[0x0][0x118]``); ``None`` if not
    known or not applicable.
    """
    parts = opcode.split(".")
    base = parts[0]
    mods = tuple(parts[1:])
    sem = Semantics()
    n = len(ops)
    known = base in OPCODE_CLASS

    # ---- which operands are destinations
    dst_pos = _destinations(base, ops, known)
    dst_set = set(dst_pos)
    sem.dst_ops = dst_pos

    # ---- register-group widths
    src_reg_positions = [i for i in range(n) if i not in dst_set and ops[i].kind in _REG_KINDS]
    width: dict[int, int] = {}
    data = _data_regs(base, mods)
    mma = mma_fragment_regs(base, mods) if OPCODE_CLASS.get(base) == OpClass.TENSOR else None
    if base in FP64_OPS:
        for i in range(n):
            width[i] = 2
    elif base in ("IMAD", "UIMAD") and ("WIDE" in mods or "HI" in mods):
        if "WIDE" in mods:
            for i in dst_pos:
                width[i] = 2
        # Rc, the third source operand (registers or not), is a 64-bit addend
        srcs = [i for i in range(n) if i not in dst_set and ops[i].kind not in _PRED_KINDS]
        if len(srcs) >= 3:
            width[srcs[2]] = 2
    elif base in ("I2F", "F2I", "F2F", "FRND", "I2I"):
        dw, sw = _conversion_widths(base, mods)
        for i in range(n):
            width[i] = dw if i in dst_set else sw
    elif base == "CS2R":
        if "32" not in mods:
            for i in dst_pos:
                width[i] = 2
    elif base in ("LEPC", "ULEPC"):
        for i in dst_pos:
            width[i] = 2
    elif base in ("BRX", "JMX", "RET", "CALL"):
        # indirect targets and return addresses are 64-bit register pairs
        for i in src_reg_positions:
            width[i] = 2
    elif base in _TEXTURE_OPS:
        # the first source register holds the coordinates (one per dimension); a
        # uniform texture handle is 64-bit
        dims = next((_TEX_DIMS[o.text] for o in ops if o.kind == OTHER and o.text in _TEX_DIMS), 1)
        if src_reg_positions:
            width[src_reg_positions[0]] = dims
        for i in src_reg_positions:
            if ops[i].kind == UGPR:
                width[i] = 2
    elif mma is not None and base in _GMMA_OPS:
        # warpgroup MMA: D, then A (registers) or the shared-memory descriptors, then C
        d, a, _b, _c = mma
        if dst_pos:
            width[dst_pos[0]] = d
        for i in src_reg_positions:
            width[i] = a if i == 1 else d
    elif mma is not None:
        d, a, b, c = mma
        for pos, w in zip((0, 1, 2, 3), (d, a, b, c), strict=True):
            if pos < n:
                width[pos] = w
    else:
        if base in LOAD_DATA_OPS:
            for i in dst_pos:
                if ops[i].kind in _REG_KINDS:
                    width[i] = data
        if base in STORE_DATA_OPS:
            for i in src_reg_positions:
                width[i] = data

    # ---- memory operands
    cls = OPCODE_CLASS.get(base)
    is_memory = cls in MEMORY_CLASSES or base == "ULDC"
    global_op = base in GLOBAL_ADDRESS_OPS
    mem_seen = 0
    has_desc = False
    bare_global = False  # old-style encoding: 64-bit address printed as a bare [Rn]

    # ---- encoding slots of the source operands (reuse bit i belongs to slot i)
    slot_of: dict[int, int] = {}
    slot_ops = [i for i in range(n) if i not in dst_set and ops[i].kind not in _NO_SLOT_KINDS]
    for rank, i in enumerate(slot_ops):
        slot_of[i] = rank
    if len(slot_ops) == 1 and base in UNARY_SLOT_B_OPS:
        slot_of[slot_ops[0]] = 1
    if len(slot_ops) == 2 and base in ADD_SLOT_C_OPS:
        slot_of[slot_ops[1]] = 2

    # ---- collect
    for i, op in enumerate(ops):
        k = op.kind
        if i in dst_set:
            if k in _REG_KINDS:
                if op.index is not None:
                    w = width.get(i, 1)
                    _expand(sem, k, op.index, w, sem.dst if k == GPR else sem.udst)
            elif k in _PRED_KINDS or k == PREDSET:
                _add_preds(sem.pdst, op, ops)
            continue
        if k == GPR:
            if op.index is not None:
                w = width.get(i, 1)
                _expand(sem, k, op.index, w, sem.src)
                sem.reuse.extend([op.reuse] * w)
                sem.slots.extend([slot_of.get(i, -1)] * w)
                sem.reg_src_ops.append(i)
        elif k == UGPR:
            if op.index is not None:
                _expand(sem, k, op.index, width.get(i, 1), sem.usrc)
        elif k in _PRED_KINDS or k == PREDSET:
            _add_preds(sem.psrc, op, ops)
        elif k == CONST:
            for rk, idx, _suf, _g in op.inner:
                (sem.src if rk == GPR else sem.usrc).append(idx)
                if rk == GPR:
                    sem.reuse.append(False)
                    sem.slots.append(slot_of.get(i, -1))
        elif k == MEM:
            desc = op.prefix in ("desc", "gdesc")
            has_desc = has_desc or desc
            # LDGSTS: the first address is shared memory, the second global
            addr_global = global_op and (base != "LDGSTS" or mem_seen == 1)
            mem_seen += 1
            for rk, idx, suf, g in op.inner:
                if desc and g == 0:
                    # a warpgroup MMA reading both A and B from shared memory takes two descriptors
                    w = 4 if base in _GMMA_OPS and i == 1 else 2
                elif rk == GPR:
                    if "64" in suf:
                        w = 2
                    elif addr_global and "E" in mods and "U32" not in suf:
                        w = 2  # sm_75 (and sm_80+ CAS): a 64-bit address printed as [Rn]
                        bare_global = True
                    else:
                        w = 1
                else:
                    w = 2 if addr_global else 1
                if rk == GPR:
                    _expand(sem, rk, idx, w, sem.src)
                    sem.reuse.extend([False] * w)
                    sem.slots.extend([slot_of.get(i, -1)] * w)
                else:
                    _expand(sem, rk, idx, w, sem.usrc)

    if (
        hidden_desc is not None
        and global_op
        and "E" in mods
        and not has_desc
        and not bare_global
        and arch in ("sm_80", "sm_86", "sm_87", "sm_88", "sm_89")
    ):
        sem.usrc.extend((hidden_desc, hidden_desc + 1))

    if is_memory:
        sem.mem_bytes = _mem_bytes(base, mods)
    return sem
