"""Decode: static SASS instructions -> rows of integers for the interpreter.

Every instruction of a kernel is decoded before execution starts; an opcode,
modifier or operand form that is not implemented raises
:class:`UnsupportedInstructionError` naming the opcode, its offset, the kernel
and the architecture.  Each opcode family is one ``_d_<family>`` function that
checks the modifiers it understands and places the operands into the row
(``layout.F_*``); adding an opcode means adding one such function and its
``case`` in the interpreter.
"""

from __future__ import annotations

import struct

import numpy as np

from rfmodel.ir import Kernel
from rfmodel.workload.execute import layout as L
from rfmodel.workload.execute.errors import UnsupportedInstructionError
from rfmodel.workload.sass.operands import (
    CONST,
    GPR,
    IMM,
    LABEL,
    MEM,
    PRED,
    PREDSET,
    SPECIAL,
    UGPR,
    UPRED,
    Operand,
    parse_operand,
    split_operands,
)

__all__ = ["Decoded", "decode_kernel"]


class _Unsupported(Exception):
    """Internal: the reason an instruction cannot be decoded."""


_SPECIAL = {
    "SR_TID.X": L.SR_TID_X,
    "SR_TID.Y": L.SR_TID_Y,
    "SR_TID.Z": L.SR_TID_Z,
    "SR_CTAID.X": L.SR_CTAID_X,
    "SR_CTAID.Y": L.SR_CTAID_Y,
    "SR_CTAID.Z": L.SR_CTAID_Z,
    "SR_LANEID": L.SR_LANEID,
    "SR_CgaCtaId": L.SR_ZERO,  # one CTA per cluster: the CTA's rank in its cluster is 0
    "SRZ": L.SR_ZERO,
    "SR_LEMASK": L.SR_LEMASK,
    "SR_LTMASK": L.SR_LTMASK,
    "SR_GEMASK": L.SR_GEMASK,
    "SR_GTMASK": L.SR_GTMASK,
    "SR_EQMASK": L.SR_EQMASK,
}

_CMP = {
    "F": L.C_F,
    "LT": L.C_LT,
    "EQ": L.C_EQ,
    "LE": L.C_LE,
    "GT": L.C_GT,
    "NE": L.C_NE,
    "GE": L.C_GE,
    "NUM": L.C_NUM,
    "NAN": L.C_NAN,
    "LTU": L.C_LTU,
    "EQU": L.C_EQU,
    "LEU": L.C_LEU,
    "GTU": L.C_GTU,
    "NEU": L.C_NEU,
    "GEU": L.C_GEU,
    "T": L.C_T,
}
_BOOL = {"AND": L.B_AND, "OR": L.B_OR, "XOR": L.B_XOR}
_MUFU = {
    "RCP": L.MU_RCP,
    "RSQ": L.MU_RSQ,
    "SQRT": L.MU_SQRT,
    "EX2": L.MU_EX2,
    "LG2": L.MU_LG2,
    "SIN": L.MU_SIN,
    "COS": L.MU_COS,
    "RCP64H": L.MU_RCP64H,
    "RSQ64H": L.MU_RSQ64H,
    "TANH": L.MU_TANH,
}
_ROUND = {
    "RN": L.R_RN,
    "RZ": L.R_RZ,
    "TRUNC": L.R_RZ,
    "RM": L.R_RM,
    "FLOOR": L.R_RM,
    "RP": L.R_RP,
    "CEIL": L.R_RP,
}


class Decoded:
    """The decoded program: ``rows`` (int64, one row per instruction) plus what error
    messages need (offsets and opcode text)."""

    def __init__(self, kernel: Kernel, rows: np.ndarray):
        self.kernel = kernel
        self.rows = rows
        self.pcs = [ins.pc for ins in kernel.instrs]
        self.opcodes = [ins.opcode for ins in kernel.instrs]


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _f16_bits(x: float) -> int:
    return int(np.array(x, dtype=np.float16).view(np.uint16))


def _imm_value(op: Operand, fp: bool) -> int:
    """An immediate as a 32-bit pattern; ``fp``: decimal text is a float32 value."""
    t = op.text.strip()
    if op.value is not None:  # hex, the sign included
        return op.value & 0xFFFFFFFF
    if fp:
        u = t.upper().lstrip("+")
        sign = -1.0 if u.startswith("-") else 1.0
        u = u.lstrip("-")
        if u == "INF":
            return _f32_bits(sign * float("inf"))
        if u in ("QNAN", "NAN", "SNAN"):
            return 0x7FFFFFFF if sign > 0 else 0xFFFFFFFF
        return _f32_bits(float(t))
    try:
        return int(t, 10) & 0xFFFFFFFF
    except ValueError:
        raise _Unsupported(f"immediate {t!r} in an integer operation") from None


def _imm64(op: Operand) -> int:
    """A double-precision immediate as the 64-bit pattern it stands for (as a signed int64).  The
    instruction encodes the double's high word; the disassembler prints the double it stands for
    (``0.5``) or, for an odd pattern, the high word in hex."""
    t = op.text.strip()
    if op.value is not None:
        bits = (op.value & 0xFFFFFFFF) << 32
    else:
        u = t.upper().lstrip("+")
        sign = -1.0 if u.startswith("-") else 1.0
        u = u.lstrip("-")
        if u == "INF":
            x = sign * float("inf")
        elif u in ("QNAN", "NAN"):
            x = float("nan")
        else:
            try:
                x = float(t)
            except ValueError:
                raise _Unsupported(f"double immediate {t!r}") from None
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
        if bits & 0xFFFFFFFF:
            raise _Unsupported(f"double immediate {t!r} with a nonzero low word")
    return bits - (1 << 64) if bits >> 63 else bits


def _src64(op: Operand) -> tuple[int, int, int, int, int]:
    """A double-precision source: a register pair (``O_64``), two constant words, or an immediate."""
    if op.kind == IMM:
        return L.K_IMM, _imm64(op), 0, 0, 0
    if op.kind == GPR and op.index is None:
        return _src(op, fp=True)
    return _src(op, fp=True, pair=True)


def _parse_offset(t: str) -> int:
    t = t.strip()
    try:
        return int(t, 16) if "x" in t.lower() else int(t, 10)
    except ValueError:
        raise _Unsupported(f"address term {t!r}") from None


def _mem_operand(op: Operand) -> tuple[int, int, int, int, int]:
    """``[R2.64+0x10]``, ``desc[UR4][R2.64]``, ``[R4+UR4+0x8]``, ``[UR4]`` -> a K_MEM operand."""
    text = op.text.strip()
    if op.prefix not in ("", "desc", "gdesc"):
        raise _Unsupported(f"memory operand {text!r}")
    if not text.endswith("]"):
        raise _Unsupported(f"memory operand with a suffix {text!r}")
    body = text[text.rindex("[") + 1 : text.rindex("]")]
    base, ureg, off, mod = -1, -1, 0, 0
    for term in body.replace("+-", "+-").split("+"):
        term = term.strip()
        if not term:
            continue
        if term.startswith("-"):
            off -= _parse_offset(term[1:])
            continue
        name, *suf = term.split(".")
        if name == "RZ" or name == "URZ":
            continue
        if name.startswith("UR") and name[2:].isdigit():
            # the uniform register is 64-bit (a pair) in a global address and 32-bit elsewhere,
            # whatever is printed; no other suffix is known on it
            bad = [s for s in suf if s not in ("64", "reuse")]
            if bad:
                raise _Unsupported(f"address register suffix .{bad[0]} in {text!r}")
            ureg = int(name[2:])
        elif name.startswith("R") and name[1:].isdigit():
            base = int(name[1:])
            for s in suf:
                if s == "64":
                    mod |= L.O_64
                elif s == "U32":
                    # [Rn.U32+URm]: a 32-bit register offset, zero-extended, to the 64-bit URm
                    # (sm_75 global loads); bare [Rn] in a global address is the pair Rn:Rn+1
                    mod |= L.O_U32
                elif s in ("X4", "X8", "X16"):
                    mod |= {"X4": 2, "X8": 3, "X16": 4}[s] << L.O_SCALE_SHIFT
                elif s != "reuse":
                    raise _Unsupported(f"address register suffix .{s} in {text!r}")
            if mod & L.O_64 and mod & L.O_U32:
                raise _Unsupported(f"address register both .64 and .U32 in {text!r}")
        else:
            off += _parse_offset(term)
    return L.K_MEM, off, mod, base, ureg


def _src(op: Operand, fp: bool = False, pair: bool = False) -> tuple[int, int, int, int, int]:
    """A value source operand -> (kind, value, modifiers, aux, aux2)."""
    mod = 0
    t = op.text.strip()
    if op.kind in (GPR, UGPR, CONST, SPECIAL):
        if "|" in t:
            mod |= L.O_ABS
        lead = t.replace("|", "")
        if lead.startswith("-"):
            mod |= L.O_NEG
        elif lead.startswith("~"):
            mod |= L.O_NOT
        elif lead.startswith("!"):
            raise _Unsupported(f"operand {t!r}")
    if pair:
        mod |= L.O_64
    if op.kind == GPR:
        bad = [s for s in op.suffixes if s not in ("reuse", "64")]
        if bad:
            raise _Unsupported(f"register operand suffix .{bad[0]} in {t!r}")
        if op.index is None:
            return L.K_IMM, 0, mod & ~(L.O_NEG | L.O_NOT | L.O_ABS) | (mod & L.O_NOT), 0, 0
        return L.K_R, op.index, mod, 0, 0
    if op.kind == UGPR:
        bad = [s for s in op.suffixes if s not in ("reuse", "64")]
        if bad:
            raise _Unsupported(f"register operand suffix .{bad[0]} in {t!r}")
        if op.index is None:
            return L.K_IMM, 0, mod & L.O_NOT, 0, 0
        return L.K_UR, op.index, mod, 0, 0
    if op.kind == IMM:
        return L.K_IMM, _imm_value(op, fp), 0, 0, 0
    if op.kind == CONST:
        text = t.lstrip("-|~").rstrip("|")
        if not text.startswith("c[") or text.count("[") != 2 or not text.endswith("]"):
            raise _Unsupported(f"constant operand {t!r}")
        bank = _parse_offset(text[2 : text.index("]")])
        inner = text[text.index("]") + 2 : text.rindex("]")]
        idx, off = -1, 0
        for term in inner.split("+"):
            term = term.strip()
            if term in ("RZ", "URZ", ""):
                continue
            if term.startswith("UR") and term[2:].isdigit():
                idx = 256 + int(term[2:])
            elif term.startswith("R") and term[1:].isdigit():
                idx = int(term[1:])
            elif term.startswith("-"):
                off -= _parse_offset(term[1:])
            else:
                off += _parse_offset(term)
        return L.K_C, off, mod, bank, idx
    if op.kind == SPECIAL:
        name = t.lstrip("-~")
        if name not in _SPECIAL:
            raise _Unsupported(f"special register {name}")
        return L.K_SR, _SPECIAL[name], 0, 0, 0
    if op.kind == MEM:
        return _mem_operand(op)
    raise _Unsupported(f"operand {t!r}")


def _pred(op: Operand) -> tuple[int, int]:
    """A predicate source -> (index, negated)."""
    if op.kind not in (PRED, UPRED):
        raise _Unsupported(f"expected a predicate, got {op.text!r}")
    if op.index is None:
        idx = L.PT if op.kind == PRED else L.UPT
    else:
        idx = op.index + (8 if op.kind == UPRED else 0)
    return idx, 1 if op.neg else 0


def _pdst(op: Operand) -> int:
    if op.kind not in (PRED, UPRED) or op.neg:
        raise _Unsupported(f"expected a predicate destination, got {op.text!r}")
    if op.index is None:
        return -1
    return op.index + (8 if op.kind == UPRED else 0)


class _Row:
    def __init__(self):
        self.r = np.zeros(L.NF, dtype=np.int64)
        self.r[L.F_PD0] = -1
        self.r[L.F_PD1] = -1
        self.r[L.F_TGT] = -1
        self.r[L.F_GP] = L.PT
        for j in range(L.NPSRC):
            self.r[L.F_PS + 2 * j] = L.PT
        self.ns = 0
        self.nps = 0

    def dst(self, op: Operand) -> None:
        if op.kind == GPR:
            kind = L.K_R
        elif op.kind == UGPR:
            kind = L.K_UR
        else:
            raise _Unsupported(f"expected a register destination, got {op.text!r}")
        if any(s not in ("reuse",) for s in op.suffixes) or op.neg:
            raise _Unsupported(f"destination {op.text!r}")
        if op.index is None:
            self.r[L.F_DK] = L.K_NONE
        else:
            self.r[L.F_DK] = kind
            self.r[L.F_D] = op.index

    def src(self, fields: tuple[int, int, int, int, int]) -> None:
        if self.ns >= L.NSRC:
            raise _Unsupported("too many operands")
        base = L.F_SRC + 5 * self.ns
        self.r[base : base + 5] = fields
        self.ns += 1
        self.r[L.F_NS] = self.ns

    def psrc(self, op: Operand) -> None:
        if self.nps >= L.NPSRC:
            raise _Unsupported("too many predicate operands")
        idx, neg = _pred(op)
        self.r[L.F_PS + 2 * self.nps] = idx
        self.r[L.F_PS + 2 * self.nps + 1] = neg
        self.nps += 1

    def pdst(self, j: int, op: Operand) -> None:
        self.r[L.F_PD0 + j] = _pdst(op)


def _allow(mods: list[str], allowed: set[str]) -> None:
    for m in mods:
        if m not in allowed:
            raise _Unsupported(f"modifier .{m}")


def _one_of(mods: list[str], table: dict, what: str):
    """``table``'s value for the one modifier of ``mods`` (an instruction taking exactly one of ``table``'s
    modifiers and no other); ``what`` says what is missing otherwise."""
    _allow(mods, set(table))
    if len(mods) != 1:
        raise _Unsupported(what)
    return table[mods[0]]


def _nops(ops: list[Operand], *counts: int) -> None:
    if len(ops) not in counts:
        raise _Unsupported(f"{len(ops)} operands (expected {' or '.join(map(str, counts))})")


def _is_pred(op: Operand) -> bool:
    return op.kind in (PRED, UPRED)


# ---- families ------------------------------------------------------------------------------------

_FP_OPS = frozenset({"FFMA", "FADD", "FMUL", "FSETP", "FMNMX", "FSEL", "MUFU", "F2I", "FCHK", "FRND"})


def _d_mov(row, base, mods, ops, ctx):
    if base in ("MOV", "UMOV"):
        _allow(mods, set())
        _nops(ops, 2, 3)
        if len(ops) == 3 and not (ops[2].kind == IMM and _imm_value(ops[2], False) == 0xF):
            raise _Unsupported("MOV with a lane mask other than 0xf")
        row.r[L.F_OP] = L.OP_MOV
        row.r[L.F_E0] = 1
        row.dst(ops[0])
        row.src(_src(ops[1]))
        return
    # LDC / ULDC: a constant-bank load, 32 or 64 bits
    _allow(mods, {"64", "U8", "S8", "U16", "S16"} if base == "LDC" else {"64"})
    if any(m in mods for m in ("U8", "S8", "U16", "S16")):
        raise _Unsupported("sub-word constant loads")
    _nops(ops, 2)
    if ops[1].kind != CONST:
        raise _Unsupported(f"source {ops[1].text!r}")
    wide = "64" in mods
    row.r[L.F_OP] = L.OP_MOV
    row.r[L.F_E0] = 2 if wide else 1
    row.dst(ops[0])
    row.src(_src(ops[1], pair=wide))


def _d_s2r(row, base, mods, ops, ctx):
    """S2R, S2UR, R2UR: one 32-bit move without modifiers."""
    _allow(mods, set())
    _nops(ops, 2)
    row.r[L.F_OP] = L.OP_MOV
    row.r[L.F_E0] = 1
    row.dst(ops[0])
    row.src(_src(ops[1]))


def _d_cs2r(row, base, mods, ops, ctx):
    _allow(mods, {"32"})
    _nops(ops, 2)
    if ops[1].text.strip() != "SRZ":
        raise _Unsupported(f"special register {ops[1].text}")
    row.r[L.F_OP] = L.OP_MOV
    row.r[L.F_E0] = 1 if "32" in mods else 2
    row.dst(ops[0])
    row.src((L.K_IMM, 0, 0, 0, 0))


def _d_imad(row, base, mods, ops, ctx):
    _allow(mods, {"MOV", "IADD", "SHL", "U32", "WIDE", "HI", "X"})
    m = 0
    if "X" in mods:
        # IMAD.X d, a, b, c, Pcarry: a*b + c + carry (the high word of a 64-bit add)
        if "WIDE" in mods or "HI" in mods:
            raise _Unsupported("IMAD.X with .WIDE or .HI")
        _nops(ops, 5)
        row.psrc(ops[4])
        ops = ops[:4]
        m |= L.M_X
    _nops(ops, 4)
    row.r[L.F_OP] = L.OP_IMAD
    if "U32" in mods:
        m |= L.M_U32
    if "WIDE" in mods:
        m |= L.M_WIDE
    if "HI" in mods:
        m |= L.M_HI
    row.r[L.F_M] = m
    row.dst(ops[0])
    row.src(_src(ops[1]))
    row.src(_src(ops[2]))
    wide = bool(m & (L.M_WIDE | L.M_HI))
    c = _src(ops[3], pair=wide)
    if wide and c[2] & (L.O_NEG | L.O_NOT | L.O_ABS):
        raise _Unsupported(f"a modified 64-bit addend {ops[3].text!r}")  # the interpreter reads it plain
    row.src(c)


def _d_iadd3(row, base, mods, ops, ctx):
    _allow(mods, {"X"})
    row.r[L.F_OP] = L.OP_IADD3
    row.dst(ops[0])
    j = 1
    npd = 0
    while j < len(ops) and _is_pred(ops[j]) and not ops[j].neg and npd < 2 and len(ops) - j > 3:
        row.pdst(npd, ops[j])
        npd += 1
        j += 1
    vals = [o for o in ops[j:] if not _is_pred(o)]
    preds = [o for o in ops[j:] if _is_pred(o)]
    if len(vals) != 3:
        raise _Unsupported(f"{len(vals)} value operands")
    if "X" in mods:
        row.r[L.F_M] = L.M_X
        if len(preds) != 2:
            raise _Unsupported("IADD3.X without its two carry-in predicates")
        for p in preds:
            row.psrc(p)
    elif preds:
        raise _Unsupported("predicate operands without .X")
    for o in vals:
        row.src(_src(o))


def _d_viadd(row, base, mods, ops, ctx):
    _allow(mods, set())
    _nops(ops, 3)
    row.r[L.F_OP] = L.OP_IADD3
    row.dst(ops[0])
    row.src(_src(ops[1]))
    row.src(_src(ops[2]))
    row.src((L.K_IMM, 0, 0, 0, 0))


def _d_lop3(row, base, mods, ops, ctx):
    _allow(mods, {"LUT"})
    if "LUT" not in mods:
        raise _Unsupported("LOP3 without .LUT")
    row.r[L.F_OP] = L.OP_LOP3
    j = 0
    if _is_pred(ops[0]):
        row.pdst(0, ops[0])
        j = 1
    rest = ops[j:]
    _nops(rest, 6)
    row.dst(rest[0])
    for o in rest[1:4]:
        row.src(_src(o))
    if rest[4].kind != IMM:
        raise _Unsupported("LOP3 without an immediate table")
    row.r[L.F_E0] = _imm_value(rest[4], False) & 0xFF
    idx, neg = _pred(rest[5])
    if not (idx in (L.PT, L.UPT) and neg):
        raise _Unsupported("LOP3 with a predicate input other than !PT")


def _d_shf(row, base, mods, ops, ctx):
    _allow(mods, {"L", "R", "U32", "S32", "U64", "S64", "HI", "W"})
    _nops(ops, 4)
    m = L.M_WRAP if "W" in mods else 0
    if "L" in mods:
        m |= L.M_LEFT
    elif "R" not in mods:
        raise _Unsupported("SHF without .L or .R")
    if "HI" in mods:
        m |= L.M_HI
    if "S32" in mods or "S64" in mods:
        m |= L.M_SIGNED
    if "U64" in mods or "S64" in mods:
        m |= L.M_S64
    elif "U32" not in mods and "S32" not in mods:
        raise _Unsupported("SHF without a type")
    row.r[L.F_OP] = L.OP_SHF
    row.r[L.F_M] = m
    row.dst(ops[0])
    for o in ops[1:]:
        row.src(_src(o))


def _d_lea(row, base, mods, ops, ctx):
    _allow(mods, {"HI", "X", "SX32"})
    row.r[L.F_OP] = L.OP_LEA
    row.dst(ops[0])
    j = 1
    npd = 0
    while j < len(ops) and _is_pred(ops[j]) and not ops[j].neg and npd < 1 and j < len(ops) - 3:
        row.pdst(npd, ops[j])
        npd += 1
        j += 1
    vals = [o for o in ops[j:] if not _is_pred(o)]
    preds = [o for o in ops[j:] if _is_pred(o)]
    m = 0
    if "HI" in mods:
        m |= L.M_HI
    if "X" in mods:
        m |= L.M_X
        if len(preds) != 1:
            raise _Unsupported("LEA .X without a carry-in predicate")
        row.psrc(preds[0])
    elif preds:
        raise _Unsupported("predicate operand without .X")
    sx = "SX32" in mods
    if "HI" in mods:
        if sx:
            if len(vals) != 3:
                raise _Unsupported(f"{len(vals)} value operands")
            vals = [vals[0], vals[1], None, vals[2]]
        elif len(vals) != 4:
            raise _Unsupported(f"{len(vals)} value operands")
    else:
        if sx:
            raise _Unsupported("LEA.SX32 without .HI")
        if len(vals) != 3:
            raise _Unsupported(f"{len(vals)} value operands")
        vals = [vals[0], vals[1], None, vals[2]]
    row.r[L.F_M] = m
    row.r[L.F_E0] = 1 if sx else 0
    for o in vals:
        row.src((L.K_IMM, 0, 0, 0, 0) if o is None else _src(o))


def _d_setp(row, base, mods, ops, ctx):
    fp = base == "FSETP"
    cmp_ = [m for m in mods if m in _CMP]
    bools = [m for m in mods if m in _BOOL]
    if len(cmp_) != 1 or len(bools) != 1:
        raise _Unsupported("compare without one comparison and one boolean operation")
    _allow(mods, set(_CMP) | set(_BOOL) | ({"FTZ"} if fp else {"U32", "EX"}))
    if not fp and _CMP[cmp_[0]] > L.C_GE:
        raise _Unsupported(f"integer comparison .{cmp_[0]}")
    ex = "EX" in mods
    _nops(ops, 6 if ex else 5)
    row.r[L.F_OP] = L.OP_FSETP if fp else L.OP_ISETP
    m = 0
    if "U32" in mods:
        m |= L.M_U32
    if ex:
        m |= L.M_X
    if "FTZ" in mods:
        m |= L.M_FTZ
    row.r[L.F_M] = m
    row.r[L.F_E0] = _CMP[cmp_[0]]
    row.r[L.F_E1] = _BOOL[bools[0]]
    row.pdst(0, ops[0])
    row.pdst(1, ops[1])
    row.src(_src(ops[2], fp=fp))
    row.src(_src(ops[3], fp=fp))
    row.psrc(ops[4])
    if ex:
        row.psrc(ops[5])


def _d_plop3(row, base, mods, ops, ctx):
    _allow(mods, {"LUT"})
    _nops(ops, 7)
    row.r[L.F_OP] = L.OP_PLOP3
    row.pdst(0, ops[0])
    row.pdst(1, ops[1])
    for o in ops[2:5]:
        row.psrc(o)
    if ops[5].kind != IMM or ops[6].kind != IMM:
        raise _Unsupported("PLOP3 without its immediate tables")
    row.r[L.F_E0] = _imm_value(ops[5], False) & 0xFF
    row.r[L.F_E1] = _imm_value(ops[6], False) & 0xFF


def _d_sel(row, base, mods, ops, ctx):
    _allow(mods, set())
    _nops(ops, 4)
    row.r[L.F_OP] = L.OP_SEL
    row.r[L.F_M] = 1 if base == "FSEL" else 0
    row.dst(ops[0])
    row.src(_src(ops[1], fp=base == "FSEL"))
    row.src(_src(ops[2], fp=base == "FSEL"))
    row.psrc(ops[3])


def _imnmx_mods(row, mods, base):
    """The type and clamp modifiers of IMNMX, VIMNMX, VIMNMX3 and VIADDMNMX: signed (default, .S32)
    or .U32, two 16-bit halves (.S16x2 / .U16x2: sm_90's DPX forms), and .RELU (signed only: a
    negative result becomes 0)."""
    sm90 = base != "IMNMX"
    _allow(mods, {"U32", "S32"} | ({"S16x2", "U16x2", "RELU"} if sm90 else set()))
    types = [m for m in mods if m in ("U32", "S32", "S16x2", "U16x2")]
    if len(types) > 1:
        raise _Unsupported("two operand types")
    unsigned = bool(types) and types[0] in ("U32", "U16x2")
    if "RELU" in mods and unsigned:
        raise _Unsupported(".RELU with an unsigned type")
    row.r[L.F_M] = (L.M_U32 if unsigned else 0) | (L.M_RELU if "RELU" in mods else 0)
    row.r[L.F_E2] = 1 if types and types[0].endswith("16x2") else 0


def _d_imnmx(row, base, mods, ops, ctx):
    """IMNMX / VIMNMX Rd, Ra, Rb, P: the minimum (P true) or maximum of Ra and Rb; VIMNMX3 Rd, Ra,
    Rb, Rc, P (sm_90): of the three."""
    three = base == "VIMNMX3"
    _imnmx_mods(row, mods, base)
    _nops(ops, 5 if three else 4)
    row.r[L.F_OP] = L.OP_IMNMX
    row.r[L.F_E0] = L.MN_THREE if three else L.MN_TWO
    row.dst(ops[0])
    for o in ops[1:-1]:
        row.src(_src(o))
    row.psrc(ops[-1])


def _d_viaddmnmx(row, base, mods, ops, ctx):
    """VIADDMNMX Rd, Ra, Rb, Rc, P: the minimum (P true) or maximum of Ra + Rb (32-bit, wrapping) and
    Rc, signed or .U32: IMNMX of an IADD, which is how the earlier architectures' code writes it."""
    _imnmx_mods(row, mods, base)
    _nops(ops, 5)
    row.r[L.F_OP] = L.OP_IMNMX
    row.r[L.F_E0] = L.MN_ADD  # the first value is the sum of the first two sources
    row.dst(ops[0])
    for o in ops[1:4]:
        row.src(_src(o))
    row.psrc(ops[4])


def _d_fmnmx(row, base, mods, ops, ctx):
    _allow(mods, {"FTZ"})
    _nops(ops, 4)
    row.r[L.F_OP] = L.OP_FMNMX
    row.r[L.F_M] = L.M_FTZ if "FTZ" in mods else 0
    row.dst(ops[0])
    row.src(_src(ops[1], fp=True))
    row.src(_src(ops[2], fp=True))
    row.psrc(ops[3])


#: FMUL's result scale (E0 of OP_FMUL): the power of two the product is multiplied by.
#: Semantics chosen (no NVIDIA document states it): the scale is applied to the exact product,
#: before FMUL's one rounding: D2 gives round(a*b/2), not round(round(a*b)/2).  A multiplier
#: scales by adding k to the product's exponent ahead of normalisation and rounding, which is
#: one rounding; ptxas folds ``mul.f32 t, a, b; mul.f32 d, t, 0.5`` into ``FMUL.D2 d, a, b``
#: (rd_cfd_flux: ``-area*0.2f*0.5f`` -> ``FMUL.D2 R50, R31, -0.2``) under PTX's licence to
#: optimise a mul without a rounding modifier "aggressively", so the fold does not tell the two
#: readings apart: they give the same bits whenever round(a*b) and the result are normal floats;
#: they differ only where the scaled result is subnormal (one rounding against two) or where
#: a*b overflows but a*b/2^k does not (finite here, infinity with two roundings).  Only FMUL
#: encodes the scale (bits 84-86 hold 4 for none, 3 for D2 on sm_75-sm_90; FADD has 0 there and
#: FFMA's third register), so FFMA/FADD with a scale are refused.
_FMUL_SCALE = {"D2": -1, "D4": -2, "D8": -3, "M2": 1, "M4": 2, "M8": 3}


def _d_fp(row, base, mods, ops, ctx):
    scales = [m for m in mods if m in _FMUL_SCALE]
    if scales and base != "FMUL":
        raise _Unsupported(f"{base}.{scales[0]}: the result scale exists on FMUL only")
    _allow(mods, {"FTZ", "RN", "RZ", "RM", "RP", "SAT"} | set(_FMUL_SCALE))
    n = 4 if base == "FFMA" else 3
    _nops(ops, n)
    rnd = [m for m in mods if m in ("RN", "RZ", "RM", "RP")]
    if len(rnd) > 1:
        raise _Unsupported("two rounding modes")
    if len(scales) > 1:
        raise _Unsupported("two result scales")
    row.r[L.F_OP] = {"FFMA": L.OP_FFMA, "FADD": L.OP_FADD, "FMUL": L.OP_FMUL}[base]
    row.r[L.F_M] = (L.M_FTZ if "FTZ" in mods else 0) | (L.M_SAT if "SAT" in mods else 0)
    row.r[L.F_E1] = _ROUND[rnd[0]] if rnd else L.R_RN
    row.r[L.F_E0] = _FMUL_SCALE[scales[0]] if scales else 0
    row.dst(ops[0])
    for o in ops[1:]:
        row.src(_src(o, fp=True))
    # the interpreter's fast path: all sources plain vector registers, default rounding, nothing else
    plain = all(row.r[L.F_SRC + 5 * j] == L.K_R and row.r[L.F_SRC + 5 * j + 2] == 0 for j in range(n - 1))
    nothing = row.r[L.F_M] == 0 and row.r[L.F_E1] == L.R_RN and row.r[L.F_E0] == 0
    if plain and row.r[L.F_DK] == L.K_R and nothing:
        row.r[L.F_E2] = 1


def _d_dp(row, base, mods, ops, ctx):
    """DFMA, DADD, DMUL: IEEE double precision on register pairs; DADD and DMUL also with a
    directed rounding mode (.RZ, .RM, .RP), which the interpreter gets exactly from the rounding
    error of the nearest result."""
    _allow(mods, {"RN", "RZ", "RM", "RP"})
    n = 4 if base == "DFMA" else 3
    _nops(ops, n)
    rnd = [m for m in mods if m in ("RN", "RZ", "RM", "RP")]
    if len(rnd) > 1:
        raise _Unsupported("two rounding modes")
    if base == "DFMA" and rnd and rnd[0] != "RN":
        raise _Unsupported(f"DFMA rounding mode .{rnd[0]}")
    row.r[L.F_OP] = {"DFMA": L.OP_DFMA, "DADD": L.OP_DADD, "DMUL": L.OP_DMUL}[base]
    row.r[L.F_E1] = _ROUND[rnd[0]] if rnd else L.R_RN
    row.dst(ops[0])
    for o in ops[1:]:
        row.src(_src64(o))


def _d_dsetp(row, base, mods, ops, ctx):
    """DSETP: a double comparison combined with a predicate, as FSETP; or ``.MAX`` / ``.MIN``, the
    compiler's lowering of fmax / fmin: the first destination is set where the first operand is the
    result (it is not NaN, and the second is NaN or not larger / not smaller), the second where both
    operands are NaN (the code then sets the quiet bit of the result); only with ``.AND`` and ``PT``."""
    _nops(ops, 5)
    sel = [m for m in mods if m in ("MAX", "MIN")]
    bools = [m for m in mods if m in _BOOL]
    row.r[L.F_OP] = L.OP_DSETP
    if sel:
        _allow(mods, {"MAX", "MIN", "AND"})
        pt = _is_pred(ops[4]) and ops[4].index is None and not ops[4].neg
        if len(sel) != 1 or bools != ["AND"] or not pt:
            raise _Unsupported("DSETP.MAX/MIN other than .AND with PT")
        row.r[L.F_E2] = L.DS_MAX if sel[0] == "MAX" else L.DS_MIN
    else:
        cmp_ = [m for m in mods if m in _CMP]
        if len(cmp_) != 1 or len(bools) != 1:
            raise _Unsupported("compare without one comparison and one boolean operation")
        _allow(mods, set(_CMP) | set(_BOOL))
        row.r[L.F_E0] = _CMP[cmp_[0]]
        row.r[L.F_E1] = _BOOL[bools[0]]
        row.r[L.F_E2] = L.DS_CMP
    row.pdst(0, ops[0])
    row.pdst(1, ops[1])
    row.src(_src64(ops[2]))
    row.src(_src64(ops[3]))
    row.psrc(ops[4])


def _d_hfma2(row, base, mods, ops, ctx):
    # Only the form the compiler uses to materialize a 32-bit constant: a zero product plus
    # two half-precision immediates (``HFMA2.MMA R6, -RZ, RZ, 0, 2.38e-07``).
    _allow(mods, {"MMA"})
    _nops(ops, 5)
    zero = [o for o in ops[1:3] if o.kind == GPR and o.index is None]
    if not zero or ops[3].kind != IMM or ops[4].kind != IMM:
        raise _Unsupported("HFMA2 other than a constant move (zero product plus two half immediates)")
    hi = _f16_bits(float(ops[3].text))
    lo = _f16_bits(float(ops[4].text))
    row.r[L.F_OP] = L.OP_MOV
    row.r[L.F_E0] = 1
    row.dst(ops[0])
    row.src((L.K_IMM, (hi << 16) | lo, 0, 0, 0))


def _d_i2f(row, base, mods, ops, ctx):
    _nops(ops, 2)
    if base == "I2FP" and "F32" not in mods:
        raise _Unsupported("I2FP other than .F32")
    allowed = {"U32", "S32", "F32", "F64", "RP", "RM", "RZ", "RN"}
    _allow(mods, allowed)
    if "F64" in mods and "F32" in mods:
        raise _Unsupported("two destination types")
    row.r[L.F_OP] = L.OP_I2F
    row.r[L.F_M] = L.M_U32 if "U32" in mods else 0
    row.r[L.F_E2] = 1 if "F64" in mods else 0  # a double in a register pair (exact from 32 bits)
    rnd = [m for m in mods if m in _ROUND]
    row.r[L.F_E1] = _ROUND[rnd[0]] if rnd else L.R_RN
    row.dst(ops[0])
    row.src(_src(ops[1]))


def _d_f2i(row, base, mods, ops, ctx):
    _nops(ops, 2)
    _allow(mods, {"FTZ", "U32", "S32", "TRUNC", "NTZ", "FLOOR", "CEIL", "RZ", "RM", "RP", "RN"})
    row.r[L.F_OP] = L.OP_F2I
    row.r[L.F_M] = L.M_U32 if "U32" in mods else 0
    rnd = [m for m in mods if m in _ROUND]
    row.r[L.F_E1] = _ROUND[rnd[0]] if rnd else L.R_RN
    row.dst(ops[0])
    row.src(_src(ops[1], fp=True))


_F2F_NARROW = {"F16", "BF16", "TF32", "E4M3", "E5M2", "E2M1", "E2M3", "E3M2", "UE8M0", "F16x2", "BF16x2"}


def _d_f2f(row, base, mods, ops, ctx):
    """F2F between single and double precision, the two forms nvcc emits for sm_75..sm_90:
    ``F2F.F64.F32 Rd, Ra`` (float -> double in the pair Rd:Rd+1, exact) and ``F2F.F32.F64[.RZ|.RM|.RP]
    Rd, Ra`` (the pair Ra:Ra+1 -> float, correctly rounded in the stated direction, to nearest
    by default; denormal results kept, overflow to infinity or the largest float as the rounding
    says).  Half-precision forms (.F16, .BF16, ...) and .FTZ are refused."""
    narrow = [m for m in mods if m in _F2F_NARROW]
    if narrow:
        raise _Unsupported(
            f"F2F with .{narrow[0]}: conversions to or from half and narrower precisions are not implemented"
        )
    if "FTZ" in mods:
        raise _Unsupported("F2F.FTZ (nvcc 13 does not emit it: ptxas flushes around a plain F2F)")
    _allow(mods, {"F32", "F64", "RN", "RZ", "RM", "RP"})
    types = [m for m in mods if m in ("F32", "F64")]
    if types not in (["F64", "F32"], ["F32", "F64"]):
        raise _Unsupported("F2F other than .F64.F32 or .F32.F64")
    rnd = [m for m in mods if m in ("RN", "RZ", "RM", "RP")]
    if len(rnd) > 1:
        raise _Unsupported("two rounding modes")
    _nops(ops, 2)
    row.r[L.F_OP] = L.OP_F2F
    row.r[L.F_E1] = _ROUND[rnd[0]] if rnd else L.R_RN  # the widening is exact whatever the mode
    row.dst(ops[0])
    if types[0] == "F64":
        row.r[L.F_E0] = L.F2F_F64_F32
        row.src(_src(ops[1], fp=True))
    else:
        row.r[L.F_E0] = L.F2F_F32_F64
        row.src(_src64(ops[1]))


def _d_mufu(row, base, mods, ops, ctx):
    _nops(ops, 2)
    fn = [m for m in mods if m in _MUFU]
    _allow(mods, set(_MUFU) | {"FTZ"})
    if len(fn) != 1 or fn[0] == "TANH":
        raise _Unsupported("MUFU function")
    row.r[L.F_OP] = L.OP_MUFU
    row.r[L.F_M] = L.M_FTZ if "FTZ" in mods else 0
    row.r[L.F_E0] = _MUFU[fn[0]]
    row.dst(ops[0])
    if fn[0] in ("RCP64H", "RSQ64H"):  # the source is a double's high word (an immediate: that double)
        if "FTZ" in mods:
            raise _Unsupported(f"MUFU.{fn[0]}.FTZ")
        hi = (L.K_IMM, (_imm64(ops[1]) >> 32) & 0xFFFFFFFF, 0, 0, 0) if ops[1].kind == IMM else None
        row.src(hi or _src(ops[1]))
    else:
        row.src(_src(ops[1], fp=True))


_WIDTH = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8, "128": 16}
_MEM_MODS = {"E", "CONSTANT", "SYS", "STRONG", "GPU", "CTA", "U", "EF", "EL", "LU", "EU", "NA", "WEAK", "ZD"}


def _width(mods: list[str]) -> tuple[int, int]:
    ws = [m for m in mods if m in _WIDTH]
    if len(ws) > 1:
        raise _Unsupported("two access widths")
    w = _WIDTH[ws[0]] if ws else 4
    return w, 1 if ws and ws[0] in ("S8", "S16") else 0


def _space(base: str) -> int:
    b = base.lstrip("U")
    if b in ("LDG", "STG", "RED", "REDG", "ATOMG"):
        return L.SP_GLOBAL
    if b in ("LDS", "STS", "ATOMS"):
        return L.SP_SHARED
    if b in ("LDL", "STL"):
        return L.SP_LOCAL
    raise _Unsupported("memory space")


def _check_global_e(base, mods, ctx, sp):
    if sp == L.SP_GLOBAL and "E" not in mods:
        raise _Unsupported("global access without .E (32-bit addressing)")


def _d_ld(row, base, mods, ops, ctx):
    _allow(mods, _MEM_MODS | set(_WIDTH) | {"PRIVATE", "MMIO"} - {"MMIO"})
    _nops(ops, 2)
    sp = _space(base)
    _check_global_e(base, mods, ctx, sp)
    w, sx = _width(mods)
    row.r[L.F_OP] = L.OP_LD
    row.r[L.F_E0], row.r[L.F_E1], row.r[L.F_E2] = sp, w, sx
    row.dst(ops[0])
    if ops[1].kind != MEM:
        raise _Unsupported(f"address {ops[1].text!r}")
    row.src(_mem_operand(ops[1]))


def _d_st(row, base, mods, ops, ctx):
    _allow(mods, _MEM_MODS | set(_WIDTH))
    _nops(ops, 2)
    sp = _space(base)
    _check_global_e(base, mods, ctx, sp)
    w, _ = _width(mods)
    row.r[L.F_OP] = L.OP_ST
    row.r[L.F_E0], row.r[L.F_E1] = sp, w
    if ops[0].kind != MEM:
        raise _Unsupported(f"address {ops[0].text!r}")
    row.src(_mem_operand(ops[0]))
    row.src(_src(ops[1]))


_ATOM = {
    "ADD": L.A_ADD,
    "MIN": L.A_MIN,
    "MAX": L.A_MAX,
    "INC": L.A_INC,
    "DEC": L.A_DEC,
    "AND": L.A_AND,
    "OR": L.A_OR,
    "XOR": L.A_XOR,
    "EXCH": L.A_EXCH,
    "CAS": L.A_CAS,
}


def _d_atom(row, base, mods, ops, ctx):
    sp = _space(base)
    _allow(mods, _MEM_MODS | set(_ATOM) | {"POPC", "32", "S32", "U32", "F32", "FTZ", "RN"})
    _check_global_e(base, mods, ctx, sp)
    if "POPC" in mods:
        if not ("INC" in mods and "32" in mods):
            raise _Unsupported("ATOMS.POPC other than .POPC.INC.32")
        fn = L.A_POPC_INC
    else:
        fns = [m for m in mods if m in _ATOM]
        if len(fns) != 1:
            raise _Unsupported("atomic without one operation")
        fn = _ATOM[fns[0]]
    if fn == L.A_CAS and (base != "ATOMG" or "64" in mods):
        raise _Unsupported("compare-and-swap other than 32-bit ATOMG")
    typ = L.AT_F32 if "F32" in mods else (L.AT_S32 if "S32" in mods else L.AT_U32)
    if typ == L.AT_F32 and fn != L.A_ADD:
        raise _Unsupported("float atomic other than ADD")
    if fn in (L.A_MIN, L.A_MAX) and typ == L.AT_U32 and "U32" not in mods:
        typ = L.AT_S32  # min/max default to signed 32-bit
    row.r[L.F_OP] = L.OP_ATOM
    row.r[L.F_M] = fn
    row.r[L.F_E0] = sp
    row.r[L.F_E1] = typ
    ret = base in ("ATOMS", "ATOMG", "ATOM")
    row.r[L.F_E2] = 1 if ret else 0
    if ret:
        j = 0
        if _is_pred(ops[0]):
            row.pdst(0, ops[0])
            j = 1
        rest = ops[j:]
        if fn == L.A_POPC_INC:
            _nops(rest, 2)
        else:
            _nops(rest, 4 if fn == L.A_CAS else 3)
        row.dst(rest[0])
        if rest[1].kind != MEM:
            raise _Unsupported(f"address {rest[1].text!r}")
        row.src(_mem_operand(rest[1]))
        row.src((L.K_IMM, 1, 0, 0, 0) if fn == L.A_POPC_INC else _src(rest[2], fp=typ == L.AT_F32))
        if fn == L.A_CAS:
            row.src(_src(rest[3]))  # CAS: compare value, then the new value
    else:
        _nops(ops, 2)
        if ops[0].kind != MEM:
            raise _Unsupported(f"address {ops[0].text!r}")
        row.src(_mem_operand(ops[0]))
        row.src(_src(ops[1], fp=typ == L.AT_F32))


_SHFL = {"IDX": L.SH_IDX, "UP": L.SH_UP, "DOWN": L.SH_DOWN, "BFLY": L.SH_BFLY}
_VOTE = {"ALL": L.V_ALL, "ANY": L.V_ANY, "EQ": L.V_EQ}


def _d_shfl(row, base, mods, ops, ctx):
    mode = _one_of(mods, _SHFL, "SHFL without one mode")
    _nops(ops, 5)
    row.r[L.F_OP] = L.OP_SHFL
    row.r[L.F_E0] = mode
    row.pdst(0, ops[0])
    row.dst(ops[1])
    for o in ops[2:5]:
        row.src(_src(o))


def _d_vote(row, base, mods, ops, ctx):
    mode = _one_of(mods, _VOTE, "VOTE without one mode")
    row.r[L.F_OP] = L.OP_VOTE
    row.r[L.F_E0] = mode
    if ops and ops[0].kind in (GPR, UGPR):
        _nops(ops, 3)
        row.dst(ops[0])
        row.pdst(0, ops[1])
        row.psrc(ops[2])
    else:
        _nops(ops, 2)
        row.pdst(0, ops[0])
        row.psrc(ops[1])


def _d_bar(row, base, mods, ops, ctx):
    _allow(mods, {"SYNC", "DEFER_BLOCKING"})
    if "SYNC" not in mods:
        raise _Unsupported("BAR other than BAR.SYNC")
    _nops(ops, 1)
    if ops[0].kind != IMM or _imm_value(ops[0], False) != 0:
        raise _Unsupported("named barriers other than 0 or a thread count")
    row.r[L.F_OP] = L.OP_BAR


def _target(row, ins, ctx):
    if len(ins.targets) != 1:
        raise _Unsupported("branch without exactly one resolved target")
    row.r[L.F_TGT] = ins.targets[0]


def _d_bra(row, base, mods, ops, ctx, ins=None):
    _allow(mods, {"U", "DIV", "CONV"})
    if "CONV" in mods:
        raise _Unsupported("BRA.CONV")
    row.r[L.F_OP] = L.OP_BRA
    _target(row, ins, ctx)
    conds = [o for o in ops if _is_pred(o)]
    vals = [o for o in ops if o.kind not in (LABEL, IMM) and not _is_pred(o)]
    if len(conds) > 1:
        raise _Unsupported("BRA with two predicate operands")
    if conds:
        # BRA Pc, target: taken where the guard and the predicate operand both hold
        row.r[L.F_E0] = 1
        row.psrc(conds[0])
    if "DIV" in mods:
        # BRA.DIV mask, target: taken when the executing lanes differ from the mask's non-exited lanes
        if len(vals) != 1:
            raise _Unsupported("BRA.DIV without a lane mask")
        row.r[L.F_M] = 1
        row.src(_src(vals[0]))
    elif vals:
        raise _Unsupported("BRA with a register or predicate operand")


def _d_exit(row, base, mods, ops, ctx):
    _allow(mods, set())
    _nops(ops, 0)
    row.r[L.F_OP] = L.OP_EXIT


def _barrier_index(op: Operand) -> int:
    t = op.text.strip()
    if not (t.startswith("B") and t[1:].isdigit()) or int(t[1:]) > 15:
        raise _Unsupported(f"convergence barrier {t!r}")
    return int(t[1:])


def _d_bssy(row, base, mods, ops, ctx, ins=None):
    _allow(mods, set())
    _nops(ops, 2)
    row.r[L.F_OP] = L.OP_BSSY
    row.r[L.F_E0] = _barrier_index(ops[0])


def _d_bsync(row, base, mods, ops, ctx):
    _allow(mods, set())
    _nops(ops, 1)
    row.r[L.F_OP] = L.OP_BSYNC
    row.r[L.F_E0] = _barrier_index(ops[0])


def _d_break(row, base, mods, ops, ctx):
    """BREAK Bn: the executing lanes leave convergence barrier Bn (a later BSYNC Bn does not wait for
    them); the compiler's code then branches them past that BSYNC."""
    _allow(mods, set())
    _nops(ops, 1)
    row.r[L.F_OP] = L.OP_BREAK
    row.r[L.F_E0] = _barrier_index(ops[0])


def _d_bmov(row, base, mods, ops, ctx):
    if mods != ["32", "CLEAR"] or len(ops) != 2 or ops[0].text.strip() != "RZ":
        raise _Unsupported("BMOV other than BMOV.32.CLEAR RZ, Bn")
    row.r[L.F_OP] = L.OP_BMOV_CLR
    row.r[L.F_E0] = _barrier_index(ops[1])


def _d_nop(row, base, mods, ops, ctx):
    _allow(mods, set())
    row.r[L.F_OP] = L.OP_NOP


def _d_warpsync(row, base, mods, ops, ctx):
    # WARPSYNC mask / WARPSYNC.ALL / WARPSYNC.COLLECTIVE mask, target: the lanes of the mask
    # must be executing together here (the minimum-offset schedule converges them before);
    # the interpreter stops with an error if they are not, rather than guess.
    _allow(mods, {"ALL", "COLLECTIVE"})
    row.r[L.F_OP] = L.OP_WARPSYNC
    if "ALL" in mods:
        _nops(ops, 0)
        row.src((L.K_IMM, 0xFFFFFFFF, 0, 0, 0))
    else:
        _nops(ops, 2 if "COLLECTIVE" in mods else 1)
        row.src(_src(ops[0]))


def _d_call(row, base, mods, ops, ctx, ins=None):
    # CALL.REL.NOINC: a jump that leaves the return stack alone (the callee returns with
    # RET.REL.NODEC to an address the caller put in a register)
    if mods != ["REL", "NOINC"]:
        raise _Unsupported("calls other than CALL.REL.NOINC")
    row.r[L.F_OP] = L.OP_BRA
    _target(row, ins, ctx)


def _check_offsets(ctx, what: str) -> None:
    """Refuse a jump to a computed offset (``what``) in a listing whose instructions do not stand 16 bytes
    apart from offset 0 (the executor finds the target instruction as offset / 16)."""
    pcs = [x.pc for x in ctx.instrs]
    if pcs != [16 * j for j in range(len(pcs))]:
        raise _Unsupported(f"{what} in a listing whose offsets are not 16 bytes apart from 0")


def _d_ret(row, base, mods, ops, ctx):
    # RET.REL.NODEC Rn base: continue at the offset held in Rn plus the function's offset
    if mods != ["REL", "NODEC"]:
        raise _Unsupported("returns other than RET.REL.NODEC")
    _nops(ops, 2)
    if ops[0].kind != GPR or ops[0].index is None:
        raise _Unsupported("RET without a return-address register")
    _check_offsets(ctx, "RET")
    row.r[L.F_OP] = L.OP_RET
    row.src(_src(ops[0]))
    row.src((L.K_IMM, _imm_value(ops[1], False), 0, 0, 0) if ops[1].kind == IMM else (L.K_IMM, 0, 0, 0, 0))


def _d_popc(row, base, mods, ops, ctx):
    _nops(ops, 2)
    if base in ("FLO", "UFLO"):
        _allow(mods, {"U32", "S32", "SH"})
        if "S32" in mods or "U32" not in mods:
            raise _Unsupported("FLO other than .U32")
        row.r[L.F_M] = 1 if "SH" in mods else 0
    else:
        _allow(mods, set())
    row.r[L.F_OP] = {
        "POPC": L.OP_POPC,
        "UPOPC": L.OP_POPC,
        "FLO": L.OP_FLO,
        "UFLO": L.OP_FLO,
        "BREV": L.OP_BREV,
        "UBREV": L.OP_BREV,
        "IABS": L.OP_IABS,
    }[base]
    row.dst(ops[0])
    row.src(_src(ops[1]))


def _d_prmt(row, base, mods, ops, ctx):
    _allow(mods, set())
    _nops(ops, 4)
    row.r[L.F_OP] = L.OP_PRMT
    row.dst(ops[0])
    for o in ops[1:]:
        row.src(_src(o))


def _d_fchk(row, base, mods, ops, ctx):
    # FCHK P, a, b: whether a / b needs the division slow path (see the interpreter's rule)
    _allow(mods, set())
    _nops(ops, 3)
    row.r[L.F_OP] = L.OP_FCHK
    row.pdst(0, ops[0])
    row.src(_src(ops[1], fp=True))
    row.src(_src(ops[2], fp=True))


def _d_frnd(row, base, mods, ops, ctx):
    _allow(mods, {"FTZ", "TRUNC", "FLOOR", "CEIL", "RN"})
    _nops(ops, 2)
    rnd = [m for m in mods if m in _ROUND]
    row.r[L.F_OP] = L.OP_FRND
    row.r[L.F_E1] = _ROUND[rnd[0]] if rnd else L.R_RN
    row.dst(ops[0])
    row.src(_src(ops[1], fp=True))


_REDUX = {"SUM": 0, "AND": 1, "OR": 2, "XOR": 3}


def _d_redux(row, base, mods, ops, ctx):
    fn = _one_of(mods, _REDUX, "REDUX without one of SUM, AND, OR, XOR")
    _nops(ops, 2)
    row.r[L.F_OP] = L.OP_REDUX
    row.r[L.F_E0] = fn
    row.dst(ops[0])
    row.src(_src(ops[1]))


def _d_brx(row, base, mods, ops, ctx):
    # BRX Rn offset: continue at (this instruction's offset + 16) + Rn + offset, per lane
    _allow(mods, set())
    _nops(ops, 2)
    if ops[0].kind != GPR or ops[0].index is None or ops[1].kind != IMM:
        raise _Unsupported("BRX other than BRX Rn, offset")
    _check_offsets(ctx, "BRX")
    row.r[L.F_OP] = L.OP_BRX
    row.src(_src(ops[0]))
    row.src((L.K_IMM, _imm_value(ops[1], False), 0, 0, 0))


def _predicate_move(row, mods, ops, form: str, op: int) -> None:
    """What P2R and R2P share: no modifier, the operands of ``form`` (``"P2R Rd, PR, Ra, mask"``), the
    predicate set where ``form`` has ``PR``, an immediate mask last, of which the seven predicates' bits are
    kept."""
    names = form.split(" ", 1)[1].split(", ")
    _allow(mods, set())
    _nops(ops, len(names))
    if ops[names.index("PR")].kind != PREDSET or ops[-1].kind != IMM:
        raise _Unsupported(f"{form.split()[0]} other than {form}")
    row.r[L.F_OP] = op
    row.r[L.F_E0] = _imm_value(ops[-1], False) & 0x7F


def _d_p2r(row, base, mods, ops, ctx):
    _predicate_move(row, mods, ops, "P2R Rd, PR, Ra, mask", L.OP_P2R)
    row.dst(ops[0])
    row.src(_src(ops[2]))


#: the byte selectors of R2P's source (``R2P PR, R8.B2, 0x7f``: bits 16-22 of R8 set P0-P6)
_R2P_BYTES = {"B0": 0, "B1": 8, "B2": 16, "B3": 24}


def _d_r2p(row, base, mods, ops, ctx):
    import dataclasses

    _predicate_move(row, mods, ops, "R2P PR, Ra, mask", L.OP_R2P)
    src, sel = ops[1], [s for s in ops[1].suffixes if s in _R2P_BYTES]
    if len(sel) > 1:
        raise _Unsupported(f"R2P source with two byte selectors {src.text!r}")
    if sel:  # the predicates take the bits of that byte
        src = dataclasses.replace(src, suffixes=tuple(s for s in src.suffixes if s not in _R2P_BYTES))
    row.src(_src(src))
    row.r[L.F_E1] = _R2P_BYTES[sel[0]] if sel else 0


_FAMILIES = {
    "MOV": _d_mov,
    "UMOV": _d_mov,
    "LDC": _d_mov,
    "ULDC": _d_mov,
    "S2R": _d_s2r,
    "S2UR": _d_s2r,
    "CS2R": _d_cs2r,
    "IMAD": _d_imad,
    "UIMAD": _d_imad,
    "IADD3": _d_iadd3,
    "UIADD3": _d_iadd3,
    "VIADD": _d_viadd,
    "LOP3": _d_lop3,
    "ULOP3": _d_lop3,
    "SHF": _d_shf,
    "USHF": _d_shf,
    "LEA": _d_lea,
    "ULEA": _d_lea,
    "ISETP": _d_setp,
    "UISETP": _d_setp,
    "FSETP": _d_setp,
    "DSETP": _d_dsetp,
    "DFMA": _d_dp,
    "DADD": _d_dp,
    "DMUL": _d_dp,
    "PLOP3": _d_plop3,
    "UPLOP3": _d_plop3,
    "SEL": _d_sel,
    "USEL": _d_sel,
    "FSEL": _d_sel,
    "IMNMX": _d_imnmx,
    "VIMNMX": _d_imnmx,
    "VIMNMX3": _d_imnmx,
    "VIADDMNMX": _d_viaddmnmx,
    "FMNMX": _d_fmnmx,
    "FFMA": _d_fp,
    "FADD": _d_fp,
    "FMUL": _d_fp,
    "HFMA2": _d_hfma2,
    "I2F": _d_i2f,
    "F2I": _d_f2i,
    "F2F": _d_f2f,
    "MUFU": _d_mufu,
    "LDG": _d_ld,
    "LDS": _d_ld,
    "LDL": _d_ld,
    "STG": _d_st,
    "STS": _d_st,
    "STL": _d_st,
    "ATOMS": _d_atom,
    "ATOMG": _d_atom,
    "RED": _d_atom,
    "REDG": _d_atom,
    "SHFL": _d_shfl,
    "VOTE": _d_vote,
    "VOTEU": _d_vote,
    "BAR": _d_bar,
    "BRA": _d_bra,
    "EXIT": _d_exit,
    "BSSY": _d_bssy,
    "BSYNC": _d_bsync,
    "BREAK": _d_break,
    "BMOV": _d_bmov,
    "NOP": _d_nop,
    "YIELD": _d_nop,
    "WARPSYNC": _d_warpsync,
    "ENDCOLLECTIVE": _d_nop,
    "CALL": _d_call,
    "RET": _d_ret,
    "POPC": _d_popc,
    "UPOPC": _d_popc,
    "FLO": _d_popc,
    "UFLO": _d_popc,
    "BREV": _d_popc,
    "UBREV": _d_popc,
    "IABS": _d_popc,
    "PRMT": _d_prmt,
    "UPRMT": _d_prmt,
    "R2UR": _d_s2r,  # one 32-bit move, as S2R
    "FCHK": _d_fchk,
    "FRND": _d_frnd,
    "REDUX": _d_redux,
    "BRX": _d_brx,
    "I2FP": _d_i2f,
    "P2R": _d_p2r,
    "R2P": _d_r2p,
}
_NEEDS_INSTR = {"BRA", "BSSY", "CALL"}
#: opcodes the executor implements (the base mnemonics; modifiers are checked per family)
IMPLEMENTED = tuple(sorted(_FAMILIES))


def _bssy_target(ins, text_ops: list[Operand], kernel: Kernel) -> int:
    for o in text_ops:
        if o.kind == LABEL:
            idx = kernel.attrs.get("labels", {}).get(o.label)
            if idx is None:
                raise _Unsupported(f"BSSY target {o.label!r} not resolved")
            return idx
        if o.kind == IMM and o.value is not None:
            for j, other in enumerate(kernel.instrs):
                if other.pc == o.value:
                    return j
            raise _Unsupported(f"BSSY target 0x{o.value:x} is not an instruction")
    raise _Unsupported("BSSY without a target")


def decode_kernel(kernel: Kernel) -> Decoded:
    """Decode every instruction of ``kernel`` (read with the SASS reader)."""
    optexts = kernel.attrs.get("optext")
    if optexts is None or len(optexts) != len(kernel.instrs):
        raise UnsupportedInstructionError(
            kernel.name, kernel.arch, 0, "-", "the kernel was not read from SASS text"
        )
    rows = np.zeros((len(kernel.instrs), L.NF), dtype=np.int64)
    for i, ins in enumerate(kernel.instrs):
        parts = ins.opcode.split(".")
        base, mods = parts[0], parts[1:]
        try:
            texts, _annot = split_operands(optexts[i])
            ops = [parse_operand(t) for t in texts]
            fam = _FAMILIES.get(base)
            if fam is None:
                raise _Unsupported("opcode not implemented")
            row = _Row()
            if base.startswith("U") or base in ("S2UR", "R2UR", "REDUX"):
                row.r[L.F_UNI] = 1
            if base in _NEEDS_INSTR:
                fam(row, base, mods, ops, kernel, ins=ins)
            else:
                fam(row, base, mods, ops, kernel)
            if base == "BSSY":
                row.r[L.F_TGT] = _bssy_target(ins, ops, kernel)
            if ins.guard is not None:
                g = ins.guard
                neg = g.startswith("!")
                g = g.lstrip("!")
                if g == "PT":
                    gi = L.PT
                elif g == "UPT":
                    gi = L.UPT
                elif g.startswith("UP"):
                    gi = 8 + int(g[2:])
                else:
                    gi = int(g[1:])
                row.r[L.F_GP] = gi
                row.r[L.F_GN] = 1 if neg else 0
            if row.r[L.F_UNI] and row.r[L.F_DK] == L.K_R:
                raise _Unsupported("uniform instruction writing a vector register")
            rows[i] = row.r
        except _Unsupported as e:
            raise UnsupportedInstructionError(kernel.name, kernel.arch, ins.pc, ins.opcode, str(e)) from None
        except ValueError as e:
            raise UnsupportedInstructionError(
                kernel.name, kernel.arch, ins.pc, ins.opcode, f"operands: {e}"
            ) from None
    return Decoded(kernel, rows)
