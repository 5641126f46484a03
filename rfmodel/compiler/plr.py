"""Reader of the register-liveness column of ``nvdisasm -c -plr``, an oracle for our liveness.

``nvdisasm -plr`` (``--print-life-ranges``) appends to every instruction a
table row with one cell per register of each kind present in the section
(``GPR``, ``PRED``, ``UGPR``, ``UPRED``) and a count ``#``.  The cell marks
(the tool's own legend in brackets):

* ``^`` the instruction writes the register ("register assignment");
* ``v`` it reads it ("register usage");
* ``x`` it reads and writes it ("usage and reassignment");
* ``:`` the register holds a live value across the instruction
  ("register in use") without being touched;
* blank: not live.

What a row means (worked out on compiled kernels; see docs/compiler.md):
the marked set is ``live_in | written``, the registers occupied at some
moment of the instruction.  A register whose last read is this instruction
is marked ``v`` here and is blank on the next row; a register written and
never read (a dead definition) is still marked ``^``; ``#`` is the size of
the marked set.  So for an unguarded instruction ``live_in`` is the set of
``:``, ``v`` and ``x`` marks, and ``live_out`` is the union of the
successors' ``live_in``; it is not printed on the row itself.

Three widths exist (``-lrm wide`` is the default, ``narrow`` packs one
character per register and spells register numbers vertically in the
header, ``count`` prints only ``#``).  :func:`parse_plr` reads all three; in
``count`` mode the marks are empty.  Label lines also carry a row (the set
live at the label); they are not returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rfmodel.errors import ParseError

__all__ = [
    "OracleComparison",
    "PlrRow",
    "abi_call_sets",
    "compare_liveness",
    "nvdisasm_view",
    "parse_plr",
    "read_plr",
]

_INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s*(.*?)\s*;?\s*(?://.*)?$")
_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
_SYMBOL = re.compile(r"^([^\s:./][^\s:]*|\$[^\s:]+):\s*(?://.*)?$")
_GROUPS = {"GPR": "gpr", "PRED": "pred", "UGPR": "ugpr", "UPRED": "upred"}
MARKS = frozenset(":^vx")


@dataclass(frozen=True, eq=False)
class PlrRow:
    """The liveness row of one instruction.

    ``addr`` is the byte offset in the section; ``func`` the symbol whose
    code holds it (the kernel, or a subroutine ``$kernel$callee``);
    ``marks`` (GPRs), ``pred``, ``ugpr`` and ``upred`` map register number to
    its mark; ``count`` is the tool's ``#`` for GPRs (None if not printed).
    """

    addr: int
    text: str
    func: str
    line: int
    count: int | None
    marks: dict[int, str] = field(default_factory=dict)
    pred: dict[int, str] = field(default_factory=dict)
    ugpr: dict[int, str] = field(default_factory=dict)
    upred: dict[int, str] = field(default_factory=dict)
    pred_count: int | None = None

    @property
    def guarded(self) -> bool:
        return self.text.startswith("@")

    @property
    def opcode(self) -> str:
        parts = self.text.split()
        return parts[1] if self.guarded and len(parts) > 1 else (parts[0] if parts else "")

    @property
    def used(self) -> frozenset[int]:
        """GPRs the tool says the instruction reads (``v``, ``x``)."""
        return frozenset(r for r, m in self.marks.items() if m in "vx")

    @property
    def assigned(self) -> frozenset[int]:
        """GPRs the tool says the instruction writes (``^``, ``x``)."""
        return frozenset(r for r, m in self.marks.items() if m in "^x")

    @property
    def occupied(self) -> frozenset[int]:
        """Every marked GPR: ``live_in | written``."""
        return frozenset(self.marks)

    @property
    def live_in(self) -> frozenset[int]:
        """GPRs live before the instruction (``:``, ``v``, ``x``).

        For a guarded write that does not read its destination the row cannot
        tell whether the old value was live before; it is left out here.
        """
        return frozenset(r for r, m in self.marks.items() if m in ":vx")


def _columns(header: list[str], lo: int, hi: int) -> tuple[int, dict[int, int]]:
    """Position of ``#`` and {position: register number} of one group of the header."""
    hash_line = next((h for h in header if "#" in h[lo:hi]), None)
    if hash_line is None:
        raise ValueError("no '#' in the table header")
    hpos = hash_line.index("#", lo)
    runs = [(m.start(), m.group()) for m in re.finditer(r"\d+", hash_line[hpos + 1 : hi])]
    cols: dict[int, int] = {}
    if runs and runs[0][1].startswith("0") and len(runs[0][1]) > 1:  # narrow: digits stacked
        for start, run in runs:
            for j in range(len(run)):
                c = hpos + 1 + start + j
                digits = "".join(h[c] for h in header if c < len(h) and h[c].isdigit())
                cols[c] = int(digits)
    else:
        for start, run in runs:
            cols[hpos + 1 + start + len(run) - 1] = int(run)
    return hpos, cols


def _table(header: list[str]) -> list[tuple[str, int, int, int, dict[int, int]]]:
    """Groups of a table header: (kind, lo, hi, '#' position, columns)."""
    first = header[0]
    bars = [i for i, ch in enumerate(first) if ch == "|"]
    groups = []
    for lo, hi in zip(bars, bars[1:], strict=False):
        name = first[lo + 1 : hi].strip()
        kind = _GROUPS.get(name)
        if kind is None:
            continue
        hpos, cols = _columns(header[1:], lo, hi)
        groups.append((kind, lo, hi, hpos, cols))
    return groups


def parse_plr(text: str, path: str = "<text>") -> dict[str, list[PlrRow]]:
    """Rows of every code section of ``nvdisasm -c -plr`` output, keyed by kernel name.

    Rows are in address order and include the subroutines placed in the
    kernel's section.  Raises :class:`~rfmodel.errors.ParseError` on a row
    that does not fit its table header.
    """
    out: dict[str, list[PlrRow]] = {}
    section = None
    func = ""
    groups: list = []
    header: list[str] | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        m = _SECTION.match(raw)
        if m:
            section = m.group(1)
            func = section
            out.setdefault(section, [])
            groups, header = [], None
            continue
        cpos = raw.find("//")
        comment = raw[cpos + 2 :] if cpos >= 0 else ""
        code = raw[:cpos] if cpos >= 0 else raw
        c = comment.lstrip(" ")
        if header is not None:  # inside a table header
            if c.startswith("+"):
                try:
                    groups = _table(header)
                except (ValueError, IndexError) as e:
                    raise ParseError(path, lineno, f"unreadable -plr table header: {e}") from e
                header = None
            else:
                header.append(comment)
            continue
        if c.startswith("+-") and not groups and section is not None:
            header = []
            continue
        if section is None:
            continue
        sm = _SYMBOL.match(code.strip()) if code.strip() else None
        if sm and not code.strip().startswith(".L_"):
            name = sm.group(1)
            if not name.startswith(".text."):
                func = name
            continue
        im = _INSTR.match(code)
        if not im:
            continue
        addr = int(im.group(1), 16)
        instr_text = im.group(2).strip().rstrip(";").strip()
        cells: dict[str, dict[int, str]] = {k: {} for k in _GROUPS.values()}
        counts: dict[str, int | None] = {}
        for kind, lo, hi, _hpos, cols in groups:
            seg = comment[lo + 1 : min(cols) if cols else hi]
            counts[kind] = int(seg) if seg.strip().isdigit() else None
            for pos, reg in cols.items():
                ch = comment[pos] if pos < len(comment) else " "
                if ch in MARKS:
                    cells[kind][reg] = ch
                elif ch != " ":
                    raise ParseError(path, lineno, f"unexpected mark {ch!r} in the {kind} column of R{reg}")
        out[section].append(
            PlrRow(
                addr=addr,
                text=instr_text,
                func=func,
                line=lineno,
                count=counts.get("gpr"),
                marks=cells["gpr"],
                pred=cells["pred"],
                ugpr=cells["ugpr"],
                upred=cells["upred"],
                pred_count=counts.get("pred"),
            )
        )
    return out


def read_plr(path: str | Path) -> dict[str, list[PlrRow]]:
    """:func:`parse_plr` of a file."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ParseError(str(p), None, f"cannot read: {e.strerror}") from e
    return parse_plr(text, str(p))


# --------------------------------------------------------------------------------------------------
# the tool's view of a kernel, and the comparison with our liveness


def abi_call_sets(regs_per_thread: int) -> tuple[frozenset[int], frozenset[int]]:
    """``(clobbered, preserved)`` GPRs of a call as ``nvdisasm -plr`` models it.

    Clobbered: R0, R3-R15 and, from R32 up, the low four of every group of
    eight, below ``regs_per_thread - 2`` (the two registers the compiler
    reserves beyond the highest one used are never clobbered); preserved:
    R1, R2, R16-R31 and the high four of every group of eight from R36,
    below ``regs_per_thread``.
    """
    n = max(int(regs_per_thread), 0)
    clob = {0, *range(3, 16)} | {r for r in range(32, n) if r % 8 < 4}
    pres = {1, 2, *range(16, 32)} | {r for r in range(32, n) if r % 8 >= 4}
    return frozenset(r for r in clob if r < n - 2), frozenset(r for r in pres if r < n)


def nvdisasm_view(kernel):
    """The kernel as ``nvdisasm -plr`` analyses it (see docs/compiler.md).

    Every function is analysed on its own, with calls modelled by the calling
    convention: a ``CALL`` (to a subroutine or, as ptxas also emits, to a
    local label) reads R0 and R1, writes R0 and the clobbered set
    (:func:`abi_call_sets`) and falls through to the next instruction; a
    ``RET`` reads the preserved set and leaves.  Used with
    ``liveness(view, exit_live=(1,))`` (the stack pointer is live at exit).
    """
    from dataclasses import replace

    clob, pres = abi_call_sets(kernel.regs_per_thread)
    instrs = list(kernel.instrs)
    starting = {(s.start, s.func): s.id for s in kernel.blocks}
    blocks = []
    for b in kernel.blocks:
        last = instrs[b.end - 1] if b.end > b.start else None
        succs, cr = b.succs, b.call_return
        nxt = [starting[(b.end, b.func)]] if (b.end, b.func) in starting else []
        if last is not None and last.base == "CALL":
            instrs[b.end - 1] = replace(
                last, src=tuple(sorted({*last.src, 0, 1})), dst=tuple(sorted({*last.dst, *clob}))
            )
            succs, cr = tuple(nxt), None
        elif last is not None and last.base == "RET":
            instrs[b.end - 1] = replace(last, src=tuple(sorted({*last.src, *pres})))
            succs = tuple(nxt) if last.guard is not None else ()
        blocks.append(replace(b, succs=succs, call_return=cr))
    return replace(kernel, instrs=instrs, blocks=blocks)


@dataclass
class OracleComparison:
    """Per instruction of a kernel: the tool's occupied set and which reading explains it.

    ``cls[i]`` is one of:

    * ``"exact"``: our liveness (``exit_live=(1,)``) gives the tool's set;
    * ``"abi"``: it differs, and the kernel contains calls, and our liveness
      of :func:`nvdisasm_view` (calls by the ABI) gives the tool's set;
    * ``"guarded"``: the tool's set lies between the view's liveness with
      guarded writes killing and not killing (ours), without equalling the
      latter: the tool let some guarded write (a guarded ``CALL`` 's
      clobbers included) kill;
    * ``"missing"``: no row of the tool at this address;
    * ``"other"``: unexplained.
    """

    kernel: str
    addr: list[int]
    tool: list[frozenset[int]]
    ours: list[frozenset[int]]
    cls: list[str]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.cls:
            out[c] = out.get(c, 0) + 1
        return out


def compare_liveness(kernel, rows: list[PlrRow]) -> OracleComparison:
    """Compare our GPR liveness of ``kernel`` with the tool's rows (matched by address).

    Our set at instruction ``i`` is ``live_in[i] | dst(i)``, the same quantity
    as the tool's marks.
    """
    from dataclasses import replace

    from rfmodel.compiler.liveness import bits, liveness, mask

    by_addr = {r.addr: r for r in rows}
    ours = liveness(kernel, exit_live=(1,))
    has_calls = any(i.base == "CALL" for i in kernel.instrs)
    view = nvdisasm_view(kernel)
    nk = liveness(view, exit_live=(1,))
    killing = replace(
        view, instrs=[replace(i, guard=None) if i.guard is not None and i.dst else i for i in view.instrs]
    )
    kk = liveness(killing, exit_live=(1,))
    addr, tool, mine, cls = [], [], [], []
    for i, ins in enumerate(kernel.instrs):
        row = by_addr.get(ins.pc)
        o = ours.live_in[i] | mask(ins.dst)
        addr.append(ins.pc)
        mine.append(frozenset(bits(o)))
        if row is None:
            tool.append(frozenset())
            cls.append("missing")
            continue
        t = mask(row.occupied)
        tool.append(row.occupied)
        v_nk = nk.live_in[i] | mask(view.instrs[i].dst)
        v_k = kk.live_in[i] | mask(view.instrs[i].dst)
        if t == o:
            cls.append("exact")
        elif has_calls and t == v_nk:
            cls.append("abi")
        elif v_k & ~t == 0 and t & ~v_nk == 0:
            cls.append("guarded")
        else:
            cls.append("other")
    return OracleComparison(kernel.name, addr, tool, mine, cls)
