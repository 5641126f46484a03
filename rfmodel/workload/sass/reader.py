"""Read ``cuobjdump -sass`` / ``nvdisasm -c [-hex] [-plr]`` text into :class:`Kernel` s.

The reader works in three steps:

1. :class:`_Scanner` walks the lines once, classifies every line (instruction,
   second encoding word, label, directive, comment, known header) and groups
   the instructions into functions (one per ``Function :`` block or
   ``.text.<name>`` section).  Any other line is a :class:`ParseError`.
2. :func:`_build_kernel` strips the end-of-function padding, turns every
   instruction's operand text into register sets (:mod:`.operands`) and
   classes (:mod:`.opcodes`), and resolves branch targets.
3. :mod:`.cfg` cuts the instructions into basic blocks with supergraph edges.

See ``docs/sass-reader.md`` for the rules.
"""

from __future__ import annotations

import collections
import copy
import functools
import hashlib
import re
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from rfmodel.errors import ParseError
from rfmodel.io import read_text
from rfmodel.ir import Instr, Kernel, OpClass
from rfmodel.workload.sass import cfg as _cfg
from rfmodel.workload.sass.opcodes import classify
from rfmodel.workload.sass.operands import IMM, LABEL, analyze, parse_operand, split_operands

__all__ = ["SUPPORTED_ARCHS", "Ctrl", "decode_ctrl", "normalize_arch", "parse_sass", "read_sass"]

SUPPORTED_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90")


class Ctrl(NamedTuple):
    """Scheduling control field of one instruction (``hi >> 41`` of the encoding).

    ``wbar``/``rbar`` are the write/read scoreboard set (7 = none), ``wait``
    the 6-bit wait mask over SB0-SB5, ``reuse`` the 4 operand-reuse bits
    (bit 0 = slot A, bit 1 = slot B, bit 2 = slot C).
    """

    stall: int
    yield_: int
    wbar: int
    rbar: int
    wait: int
    reuse: int


def decode_ctrl(hi: int) -> Ctrl:
    """The control field of an instruction from the high 64-bit word of its encoding."""
    c = hi >> 41
    return Ctrl(c & 0xF, (c >> 4) & 1, (c >> 5) & 7, (c >> 8) & 7, (c >> 11) & 0x3F, (c >> 17) & 0xF)


# --------------------------------------------------------------------------------------------------
# line patterns (compiled once)

_INSTR_RE = re.compile(
    r"^\s*/\*([0-9a-fA-F]+)\*/\s+"
    r"(?:@(!?U?P[0-6T])\s+)?"
    r"([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)"
    r"(?:\s+([^;]*?))?\s*;"
    r"\s*(?:/\*\s*(0x[0-9a-fA-F]{1,16})\s*\*/)?\s*$"
)
_HEX2_RE = re.compile(r"^\s*/\*\s*(0x[0-9a-fA-F]{1,16})\s*\*/\s*$")
_DATA_RE = re.compile(r"^\s*/\*[0-9a-fA-F]+\*/\s+\.[A-Za-z_]\w*(?:\s.*)?$")
_LABEL_RE = re.compile(r"^\s*([A-Za-z_.$][\w.$@]*):\s*$")
_DIRECTIVE_RE = re.compile(r"^\s*\.([A-Za-z_]\w*)(?:\s+(.*?))?\s*$")
_SECTION_RE = re.compile(r"^([^,\s]+)")
_SHI_RE = re.compile(r"SHI_REGISTERS=(\d+)")
_SM_RE = re.compile(r"\bsm_?(\d+)([af]?)\b", re.IGNORECASE)
_EF_SM_RE = re.compile(r"EF_CUDA_SM(\d+)")
_TYPE_RE = re.compile(r"^([^,\s]+)\s*,\s*@function\b")
_SIZE_RE = re.compile(r"^([^,\s]+)\s*,\s*\(\s*([^\s-]+)\s*-\s*([^\s)]+)\s*\)$")
_OTHER_RE = re.compile(r"^([^,\s]+)\s*,\s*@\"([^\"]*)\"")
_CODEFOR_RE = re.compile(r"^\s*code for (sm_\d+[af]?)\s*$")
_FUNCTION_RE = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")
_DOTS_RE = re.compile(r"^\s*\.{3,}\s*$")
_FATBIN_RE = re.compile(r"^\s*Fatbin (?:elf|ptx) code:\s*$")
_EQ_RE = re.compile(r"^\s*=+\s*$")
_KV_RE = re.compile(r"^\s*(arch|code version|host|compile_size|identifier|producer|ptxasOptions)\s*=.*$")
_RES_FUNC_RE = re.compile(r"^\s*Function (\S+):\s*$")
_RES_VALUES_RE = re.compile(r"^\s*(?:[A-Z_]+(?:\[\d+\])?:\d+\s*)+$")
_RES_ITEM_RE = re.compile(r"([A-Z_]+)(?:\[\d+\])?:(\d+)")


def normalize_arch(arch: str) -> str:
    """``'sm_80'``, ``'sm80'``, ``'80'``, ``'sm_90a'`` -> ``'sm_80'``, ``'sm_90'``.

    Raises ValueError for text that is not an architecture or one not in :data:`SUPPORTED_ARCHS`.
    """
    m = re.fullmatch(r"(?:sm_?)?(\d+)[af]?", str(arch).strip(), re.IGNORECASE)
    if not m:
        raise ValueError(f"bad architecture {arch!r}")
    a = f"sm_{m.group(1)}"
    if a not in SUPPORTED_ARCHS:
        raise ValueError(f"unsupported architecture {a} (supported: {', '.join(SUPPORTED_ARCHS)})")
    return a


@dataclass(slots=True)
class _Raw:
    line: int
    pc: int
    guard: str | None
    opcode: str
    optext: str
    lo: int | None
    hi: int | None = None


@dataclass
class _Func:
    name: str
    fmt: str  # "cuobjdump" | "nvdisasm"
    line: int
    arch: str | None
    raws: list[_Raw] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # local label -> pc
    label_lines: dict[str, int] = field(default_factory=dict)
    syms: dict[str, int] = field(default_factory=dict)  # function symbol -> pc
    typed: set[str] = field(default_factory=set)
    pending: list[tuple[str, bool]] = field(default_factory=list)  # labels waiting for their pc
    shi_regs: int | None = None
    res: dict | None = None
    entry: bool | None = None
    end_label: str | None = None
    closed: bool = False


class _Scanner:
    """One pass over the text; produces :class:`_Func` s."""

    def __init__(self, text: str, path: str, arch: str | None):
        self.text = text
        self.path = path
        self.given_arch = arch
        self.arch: str | None = None  # arch currently in force from headers
        self.funcs: list[_Func] = []
        self.cur: _Func | None = None
        self.in_text = False  # inside a code section/function
        self.await_hi: _Raw | None = None
        self.res_block: dict[str, dict] = {}
        self.res_name: str | None = None
        self.seen_arch: set[str] = set()

    def err(self, line: int, msg: str) -> ParseError:
        return ParseError(self.path, line, msg)

    def _set_arch(self, raw: str, lineno: int, *, function_level: bool = False) -> None:
        m = _SM_RE.search(raw)
        if not m:
            raise self.err(lineno, f"bad architecture {raw!r}")
        a = f"sm_{m.group(1)}"  # checked against SUPPORTED_ARCHS when a kernel of it is built
        self.seen_arch.add(a)
        if function_level and self.cur is not None:
            self.cur.arch = a
        else:
            self.arch = a

    # -------------------------------------------------------------------------------------------
    def run(self) -> list[_Func]:
        lines = self.text.splitlines()
        lineno = 0
        for lineno, raw_line in enumerate(lines, 1):
            line = raw_line
            # the -plr liveness column (and any other trailing comment)
            cpos = line.find("//")
            if cpos >= 0:
                head = line[:cpos]
                if not head.strip():
                    self._no_pending_hi(lineno)
                    continue  # comment line
                line = head
            s = line.strip()
            if not s:
                continue
            c = s[0]
            if c == "/":
                self._slash_line(line, lineno)
                continue
            self._no_pending_hi(lineno)
            if c == ".":
                if _DOTS_RE.match(s):
                    self._close(lineno)
                    continue
                m = _LABEL_RE.match(s)
                if m:
                    self._label(m.group(1), lineno)
                    continue
                m = _DIRECTIVE_RE.match(s)
                if m:
                    self._directive(m.group(1), m.group(2) or "", lineno)
                    continue
                raise self.err(lineno, f"unrecognized line {s[:60]!r}")
            if not self._header_or_label(s, lineno):
                raise self.err(
                    lineno,
                    f"unrecognized line {s[:60]!r} (expected an instruction, encoding word, label, "
                    "directive, comment or cuobjdump header)",
                )
        if self.await_hi is not None:
            raise self.err(
                lineno + 1,
                f"truncated: expected the second encoding word of the instruction at line "
                f"{self.await_hi.line}",
            )
        self._finish_func(lineno + 1, eof=True)
        if not self.funcs:
            raise self.err(
                max(lineno, 1), "no kernels found (expected cuobjdump -sass or nvdisasm -c output)"
            )
        return self.funcs

    def _no_pending_hi(self, lineno: int) -> None:
        if self.await_hi is not None:
            raise self.err(
                lineno, f"expected the second encoding word of the instruction at line {self.await_hi.line}"
            )

    # -------------------------------------------------------------------------------------------
    def _slash_line(self, line: str, lineno: int) -> None:
        m = _HEX2_RE.match(line)
        if m:
            if self.await_hi is None:
                raise self.err(lineno, "encoding word without an instruction before it")
            self.await_hi.hi = int(m.group(1), 16)
            self.await_hi = None
            return
        self._no_pending_hi(lineno)
        m = _INSTR_RE.match(line)
        if m:
            self._instruction(m, lineno)
            return
        if _DATA_RE.match(line):
            if self.in_text:
                raise self.err(lineno, "data directive inside a code section")
            return
        raise self.err(lineno, f"unrecognized line {line.strip()[:60]!r}")

    def _instruction(self, m: re.Match, lineno: int) -> None:
        f = self.cur
        if f is None or not self.in_text:
            raise self.err(
                lineno, "instruction outside a function (expected a 'Function :' header or a .text section)"
            )
        pc = int(m.group(1), 16)
        if f.raws and pc <= f.raws[-1].pc:
            raise self.err(lineno, f"instruction address 0x{pc:04x} does not follow 0x{f.raws[-1].pc:04x}")
        lo = m.group(5)
        raw = _Raw(lineno, pc, m.group(2), m.group(3), m.group(4) or "", int(lo, 16) if lo else None)
        f.raws.append(raw)
        for name, is_sym in f.pending:
            (f.syms if is_sym else f.labels)[name] = pc
        f.pending.clear()
        if lo:
            self.await_hi = raw

    # -------------------------------------------------------------------------------------------
    def _label(self, name: str, lineno: int) -> None:
        f = self.cur
        if f is None or not self.in_text:
            return  # labels of data sections (.nv.info ...)
        if name in f.labels or name in f.syms or any(n == name for n, _ in f.pending):
            raise self.err(lineno, f"label '{name}' defined twice")
        if name == f".text.{f.name}":
            return
        is_sym = name == f.name or name in f.typed
        f.label_lines[name] = lineno
        f.pending.append((name, is_sym))

    def _directive(self, name: str, rest: str, lineno: int) -> None:
        if name == "section":
            m = _SECTION_RE.match(rest)
            sec = m.group(1) if m else ""
            self._finish_func(lineno)
            if sec.startswith(".text."):
                self._start_func(sec[len(".text.") :], "nvdisasm", lineno)
            else:
                self.in_text = False
            return
        if name == "target":
            m = _SM_RE.search(rest)
            if not m:
                raise self.err(lineno, f"bad .target {rest!r}")
            self._set_arch(m.group(0), lineno)
            return
        if name == "headerflags":
            m = _EF_SM_RE.search(rest)
            if m:
                self._set_arch(f"sm_{m.group(1)}", lineno, function_level=True)
            return
        f = self.cur
        if f is None or not self.in_text:
            return
        if name == "sectioninfo":
            m = _SHI_RE.search(rest)
            if m:
                f.shi_regs = int(m.group(1))
        elif name == "type":
            m = _TYPE_RE.match(rest)
            if m:
                f.typed.add(m.group(1))
        elif name == "size":
            m = _SIZE_RE.match(rest)
            if m and m.group(1) == f.name:
                f.end_label = m.group(2)
        elif name == "other":
            m = _OTHER_RE.match(rest)
            if m and m.group(1) == f.name:
                f.entry = "STO_CUDA_ENTRY" in m.group(2)

    def _header_or_label(self, s: str, lineno: int) -> bool:
        if _EQ_RE.match(s) or s in ("compressed", "Common:"):
            return True
        m = _LABEL_RE.match(s)
        if m and not s.startswith("Function"):
            self._label(m.group(1), lineno)
            return True
        m = _FUNCTION_RE.match(s)
        if m:
            self._finish_func(lineno)
            self._start_func(m.group(1), "cuobjdump", lineno)
            return True
        m = _CODEFOR_RE.match(s)
        if m:
            self._finish_func(lineno)
            self._set_arch(m.group(1), lineno)
            return True
        if _FATBIN_RE.match(s):
            self._finish_func(lineno)
            self.arch = None
            self.res_block = {}
            return True
        if _KV_RE.match(s):
            if s.startswith("arch"):
                m = _SM_RE.search(s)
                if m:
                    self._set_arch(m.group(0), lineno)
            return True
        if s == "Resource usage:":
            self._finish_func(lineno)
            self.res_block = {}
            self.res_name = None
            return True
        m = _RES_FUNC_RE.match(s)
        if m:
            self.res_name = m.group(1)
            return True
        if _RES_VALUES_RE.match(s):
            if self.res_name is not None:
                self.res_block[self.res_name] = {k: int(v) for k, v in _RES_ITEM_RE.findall(s)}
            return True
        return False

    # -------------------------------------------------------------------------------------------
    def _start_func(self, name: str, fmt: str, lineno: int) -> None:
        f = _Func(name, fmt, lineno, self.arch)
        self.cur = f
        self.in_text = True
        self.funcs.append(f)

    def _close(self, lineno: int) -> None:
        """The ``..........`` line that ends a cuobjdump function."""
        f = self.cur
        if f is None or f.fmt != "cuobjdump" or not self.in_text:
            raise self.err(lineno, "end-of-function marker without a 'Function :' header")
        f.closed = True
        self._finish_func(lineno)

    def _finish_func(self, lineno: int, eof: bool = False) -> None:
        f = self.cur
        if f is None or not self.in_text:
            self.in_text = False
            return
        end_pc = f.raws[-1].pc + 16 if f.raws else 0
        for name, is_sym in f.pending:
            (f.syms if is_sym else f.labels)[name] = end_pc
        f.pending.clear()
        if f.fmt == "cuobjdump" and not f.closed:
            raise self.err(lineno, f"truncated: function '{f.name}' has no '..........' end marker")
        if f.end_label is not None and f.end_label not in f.labels and f.end_label not in f.syms:
            raise self.err(
                lineno, f"truncated: section of '{f.name}' ends before its end label '{f.end_label}'"
            )
        if not f.raws:
            raise self.err(lineno, f"function '{f.name}' has no instructions")
        if f.res is None and f.name in self.res_block:
            f.res = self.res_block[f.name]
        if f.arch is None:
            f.arch = self.arch
        self.cur = None
        self.in_text = False


# --------------------------------------------------------------------------------------------------
# kernel construction


# where sm_80-89 keep the 64-bit global memory descriptor (loaded with ULDC.64 into a UR pair)
_DESC_CONST = "c[0x0][0x118]"
# texture ops use the reuse field of the control word for something else
_NO_REUSE_BITS = frozenset({"TEX", "TLD", "TLD4", "TMML", "TXD", "TXQ"})


def _is_self_branch(raw: _Raw, labels: dict[str, int]) -> bool:
    if raw.guard is not None or raw.opcode != "BRA":
        return False
    t = raw.optext.strip()
    if t.startswith("`("):
        name = t[2:].rstrip(")` ").strip()
        return labels.get(name) == raw.pc
    try:
        return int(t, 16) == raw.pc
    except ValueError:
        return False


@functools.lru_cache(maxsize=1 << 16)
def _semantics(opcode: str, optext: str, arch: str, hidden_desc: int | None):
    """Operands and register sets of one instruction text (memoised: listings repeat a lot).

    The results are shared between calls and must not be modified.
    """
    texts, annot = split_operands(optext)
    ops = [parse_operand(t) for t in texts]
    return ops, annot, analyze(opcode, ops, arch, hidden_desc)


def _resource_int(res: dict, key: str, name: str, path: str) -> int:
    v = res[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ParseError(path, None, f"resources['{name}']['{key}'] = {v!r} is not a non-negative integer")
    return v


def _without_padding(raws: list, labels: dict[str, int]) -> tuple[list, int]:
    """``raws`` without the end padding (trailing NOPs, then the self-branch) and how many were stripped."""
    n_strip = 0
    while raws and raws[-1].opcode == "NOP" and raws[-1].guard is None:
        raws = raws[:-1]
        n_strip += 1
    if raws and _is_self_branch(raws[-1], labels):
        raws = raws[:-1]
        n_strip += 1
    return raws, n_strip


def _reconvergence_points(f: _Func, bases, opss, index_of) -> dict[int, int]:
    """The BSSY instructions' reconvergence points (instruction index -> index of its target; used to bound
    the targets of a BRX without a target list)."""
    reconv: dict[int, int] = {}
    for i in range(len(bases)):
        if bases[i] != "BSSY":
            continue
        ops = opss[i][0]
        pc = None
        for o in ops:
            if o.kind == LABEL:
                pc = f.labels.get(o.label)
            elif o.kind == IMM and o.value is not None:
                pc = o.value
        if pc is not None and pc in index_of:
            reconv[i] = index_of[pc]
    return reconv


def _conditional(raws, bases, sems) -> list[bool]:
    """Whether each instruction may or may not transfer control: a guard other than ``PT``, or a branch
    that reads a predicate or a uniform register, or diverges (``.DIV``, ``.CONV``)."""
    cond = []
    for i, r in enumerate(raws):
        c = r.guard is not None and r.guard != "PT"
        if not c and bases[i] in ("BRA", "JMP"):
            mods = r.opcode.split(".")[1:]
            c = bool(sems[i].psrc or sems[i].usrc) or "DIV" in mods or "CONV" in mods
        cond.append(c)
    return cond


def _kernel_resources(f: _Func, sems, resources: dict | None, arch: str, path: str):
    """Registers per thread and static shared memory of a kernel, each with where it came from (the
    listing's ``SHI_REGISTERS`` or resource usage, the ``resources`` mapping, or the highest register the
    code names): ``(regs, regs source, regs computed, shared bytes, shared source)``."""
    max_reg = max((max(s.dst + s.src) for s in sems if s.dst or s.src), default=-1)
    computed = min(255, max(max_reg + 1 + 2, 2))
    res = (resources or {}).get(f.name) or {}
    if not isinstance(res, dict):
        raise ParseError(path, None, f"resources['{f.name}'] must be a dict, got {type(res).__name__}")
    if isinstance(res.get(arch), dict):  # {"sm_80": {"regs": ..}, ...} per architecture
        res = res[arch]
    shared = 0
    if f.shi_regs is not None:
        regs, source = f.shi_regs, "SHI_REGISTERS"
    elif f.res is not None and "REG" in f.res:
        regs, source = f.res["REG"], "res-usage"
    elif "regs" in res:
        regs, source = _resource_int(res, "regs", f.name, path), "resources"
    else:
        regs, source = computed, "computed"
    if max_reg + 1 > regs:  # the code names a register beyond the declared count: it needs that many
        regs, source = max_reg + 1, f"highest register written or read (R{max_reg}; {source} said {regs})"
    shared_source = None  # a plain -sass listing does not state the static shared memory
    if f.res is not None and "SHARED" in f.res:
        shared, shared_source = f.res["SHARED"], "res-usage"
    elif "shared" in res:
        shared, shared_source = _resource_int(res, "shared", f.name, path), "resources"
    return regs, source, computed, shared, shared_source


def _build_kernel(f: _Func, path: str, resources: dict | None) -> Kernel:
    def err(line: int | None, msg: str) -> ParseError:
        return ParseError(path, line, msg)

    arch = f.arch
    raws, n_strip = _without_padding(f.raws, f.labels)
    if not raws:
        raise err(f.line, f"function '{f.name}' has no instructions besides padding")
    end_pc = raws[-1].pc + 16
    index_of = {r.pc: i for i, r in enumerate(raws)}
    n = len(raws)

    def resolve_pc(pc: int, line: int, what: str) -> int:
        i = index_of.get(pc)
        if i is None:
            raise err(line, f"{what} 0x{pc:x} is not the address of an instruction of '{f.name}'")
        return i

    def resolve_label(name: str, line: int) -> int:
        pc = f.labels.get(name)
        if pc is None:
            pc = f.syms.get(name)
        if pc is None:
            raise err(line, f"branch target '{name}' is not defined in '{f.name}'")
        if pc >= end_pc:
            raise err(line, f"branch target '{name}' lies past the end of '{f.name}'")
        return resolve_pc(pc, line, f"branch target '{name}' at")

    # ---- operands, semantics, classes
    sems = []
    opss = []
    bases = []
    hidden_desc: int | None = None
    unknown: list[tuple[int, str, str]] = []
    classes: list[OpClass] = []
    for i, r in enumerate(raws):
        try:
            ops, annot, sem = _semantics(r.opcode, r.optext, arch, hidden_desc)
        except ValueError as e:
            raise err(r.line, f"bad operands {r.optext!r}: {e}") from None
        base = r.opcode.split(".", 1)[0]
        if r.opcode == "ULDC.64" and len(ops) == 2 and ops[1].text == _DESC_CONST:
            hidden_desc = ops[0].index
        cls, rule = classify(base)
        if rule is not None:
            unknown.append((i, r.opcode, rule))
        sems.append(sem)
        opss.append((ops, annot))
        bases.append(base)
        classes.append(cls)

    # ---- branch targets
    targets: list[list[int]] = [[] for _ in range(n)]
    unresolved_brx: list[int] = []
    external_calls: list[int] = []
    for i, r in enumerate(raws):
        base = bases[i]
        if base not in ("BRA", "BRX", "JMP", "JMX", "CALL"):
            continue
        ops, annot = opss[i]
        mods = r.opcode.split(".")[1:]
        if base in ("BRX", "JMX"):
            if annot is not None:
                if not annot.startswith("BRANCH_TARGETS"):
                    raise err(r.line, f"unexpected annotation {annot!r} on {base}")
                names = [t.strip() for t in annot[len("BRANCH_TARGETS") :].split(",") if t.strip()]
                if not names:
                    raise err(r.line, f"{base} with an empty BRANCH_TARGETS list")
                targets[i] = [resolve_label(nm, r.line) for nm in names]
            else:
                unresolved_brx.append(i)
            continue
        lab = next((o for o in ops if o.kind == LABEL), None)
        if lab is not None:
            if base == "CALL" and "ABS" in mods and lab.label not in f.syms and lab.label not in f.labels:
                external_calls.append(i)
                continue
            targets[i] = [resolve_label(lab.label, r.line)]
            continue
        imm = ops[-1] if ops and ops[-1].kind == IMM and ops[-1].value is not None else None
        if base == "CALL" and ("ABS" in mods or imm is None):
            external_calls.append(i)  # relocated absolute or register-indirect call
            continue
        if imm is None:
            if base == "JMP" or base == "BRA":
                raise err(r.line, f"{r.opcode} without a target")
            continue
        targets[i] = [resolve_pc(imm.value, r.line, "branch target")]

    reconv = _reconvergence_points(f, bases, opss, index_of)

    # ---- CFG (blocks, functions, edges)
    sym_entries = {}
    if f.typed or f.syms:
        for name, pc in f.syms.items():
            if pc < end_pc:
                sym_entries[resolve_pc(pc, f.label_lines.get(name, f.line), f"symbol '{name}' at")] = name
    cond = _conditional(raws, bases, sems)
    graph = _cfg.build(
        kernel_name=f.name,
        pcs=[r.pc for r in raws],
        bases=bases,
        cond=cond,
        targets=targets,
        unresolved=unresolved_brx,
        external=external_calls,
        sym_entries=sym_entries if (f.typed or f.syms) else None,
        labels={pc: name for name, pc in f.labels.items()},
        reconv=reconv,
    )

    # ---- instructions
    instrs: list[Instr] = []
    ctrls: list[Ctrl | None] = []
    encodings: list[tuple[int, int] | None] = []
    have_hex = False
    reuse_mismatch: list[int] = []
    misaligned: list[int] = []
    slots: list[tuple[int, ...]] = []
    for i, r in enumerate(raws):
        sem = sems[i]
        guard = r.guard
        psrc = list(sem.psrc)
        if guard is not None:
            g = guard.lstrip("!")
            if g not in ("PT", "UPT"):
                psrc.insert(0, int(g[-1]) + (8 if g.startswith("U") else 0))
        if any(first % (2 if w == 2 else 4) for _k, first, w in sem.groups):
            misaligned.append(i)
        ctrl = None
        reuse = tuple(sem.reuse)
        if r.hi is not None and r.lo is not None:
            have_hex = True
            ctrl = decode_ctrl(r.hi)
            encodings.append((r.lo, r.hi))
            if bases[i] not in _NO_REUSE_BITS and (ctrl.reuse or True in reuse):
                from_bits = tuple(s >= 0 and bool(ctrl.reuse >> s & 1) for s in sem.slots)
                text_bits = sum(1 for j in sem.reg_src_ops if opss[i][0][j].reuse)
                if from_bits == reuse and bin(ctrl.reuse).count("1") == text_bits:
                    reuse = from_bits
                else:
                    reuse_mismatch.append(i)  # the text (the disassembler's own mapping) wins
        else:
            encodings.append(None)
        ctrls.append(ctrl)
        slots.append(tuple(sem.slots))
        instrs.append(
            Instr(
                pc=r.pc,
                opcode=r.opcode,
                op_class=classes[i],
                dst=tuple(sem.dst),
                src=tuple(sem.src),
                reuse=reuse,
                guard=guard,
                pdst=tuple(sem.pdst),
                psrc=tuple(psrc),
                udst=tuple(sem.udst),
                usrc=tuple(sem.usrc),
                targets=tuple(graph.targets[i]),
                mem_bytes=sem.mem_bytes,
                line=r.line,
            )
        )

    regs, source, computed, shared, shared_source = _kernel_resources(f, sems, resources, arch, path)

    attrs: dict = {
        "format": f.fmt,
        "regs_source": source,
        "shared_source": shared_source,
        "regs_computed": computed,
        "unknown_opcodes": unknown,
        "padding_stripped": n_strip,
        "unresolved_brx": unresolved_brx,
        "external_calls": external_calls,
        "entry": f.entry if f.entry is not None else True,
        "labels": {name: index_of[pc] for name, pc in f.labels.items() if pc in index_of},
        "misaligned_groups": misaligned,
    }
    attrs["src_slots"] = slots
    attrs["optext"] = [r.optext for r in raws]  # operand text as written (the functional executor decodes it)
    if have_hex:
        attrs["ctrl"] = ctrls
        attrs["encoding"] = encodings
        attrs["reuse_slot_mismatch"] = reuse_mismatch
    return Kernel(
        name=f.name,
        instrs=instrs,
        blocks=graph.blocks,
        regs_per_thread=regs,
        shared_mem_bytes=shared,
        arch=arch,
        source=path,
        functions=graph.functions,
        attrs=attrs,
    )


# --------------------------------------------------------------------------------------------------
# public API


def parse_sass(
    text: str, path: str = "<string>", arch: str | None = None, resources: dict | None = None
) -> list[Kernel]:
    """Kernels of a ``cuobjdump -sass`` or ``nvdisasm -c [-hex] [-plr]`` listing.

    ``arch`` (``"sm_80"``...) is used where the text does not say which
    architecture it is; where the text names several (a fatbinary dump) only
    the kernels of ``arch`` are returned.  ``resources`` maps kernel names to
    ``{"regs": N, "shared": S}`` for listings that carry no register count.
    Every problem in the input raises :class:`~rfmodel.errors.ParseError`.
    """
    if not isinstance(text, str):
        raise ParseError(path, None, f"expected text, got {type(text).__name__}")
    if resources is not None and not isinstance(resources, dict):
        raise ParseError(path, None, f"resources must be a dict, got {type(resources).__name__}")
    given = None
    if arch is not None:
        try:
            given = normalize_arch(arch)
        except ValueError as e:
            raise ParseError(path, None, str(e)) from None
    scanner = _Scanner(text, path, given)
    funcs = scanner.run()
    kernels: list[Kernel] = []
    for f in funcs:
        if f.arch is None:
            if given is None:
                raise ParseError(
                    path, f.line, f"architecture of '{f.name}' not stated in the text; pass arch='sm_XX'"
                )
            f.arch = given
        elif given is not None and f.arch != given:
            continue
        if f.arch not in SUPPORTED_ARCHS:
            raise ParseError(
                path, f.line, f"unsupported architecture {f.arch} (supported: {', '.join(SUPPORTED_ARCHS)})"
            )
        kernels.append(_build_kernel(f, path, resources))
    if not kernels:
        have = ", ".join(sorted(scanner.seen_arch))
        raise ParseError(path, None, f"no kernels for {given} (the text has {have})")
    return kernels


#: the parsed kernels of the last few listings read, by (path, arch, resources, text): a first answer reads
#: one listing for its profiled warps and again for the SM's whole share (each read gets its own copy,
#: :func:`_own_copy`)
_READ_MEMO: collections.OrderedDict = collections.OrderedDict()
_READ_MEMO_SIZE = 8
#: guards the memo's order and evictions (threads of one process read listings at once: a reader between
#: another's look-up and its move to the end would find its entry evicted)
_READ_MEMO_LOCK = threading.Lock()


def _own_copy(k: Kernel) -> Kernel:
    """A kernel of the memo as a read of its own: every field, block, and the ``functions`` and ``attrs``
    mappings its own to change; the instructions (frozen records) one list shared by every read of the
    same text, which the readers of a kernel never change (a trace's static columns are remembered by it,
    :func:`rfmodel.workload.expand.static_columns`)."""
    return replace(
        k,
        blocks=[copy.copy(b) for b in k.blocks],
        functions=dict(k.functions),
        attrs=dict(k.attrs),
    )


def read_sass(path, arch: str | None = None, resources: dict | None = None) -> list[Kernel]:
    """:func:`parse_sass` on a file (a listing read again with the same text is not parsed again)."""
    p = Path(path)
    text = read_text(p, "SASS file")
    key = (
        str(p),
        arch,
        repr(sorted(resources.items())) if isinstance(resources, dict) else repr(resources),
        hashlib.sha256(text.encode()).digest(),
    )
    with _READ_MEMO_LOCK:
        got = _READ_MEMO.get(key)
        if got is not None:
            _READ_MEMO.move_to_end(key)
    if got is None:
        got = parse_sass(text, str(p), arch=arch, resources=resources)
        with _READ_MEMO_LOCK:
            _READ_MEMO[key] = got
            while len(_READ_MEMO) > _READ_MEMO_SIZE:
                _READ_MEMO.popitem(last=False)
    return [_own_copy(k) for k in got]
