"""Reader for Accel-Sim SASS traces (``kernelslist.g`` and ``kernel-*.traceg[.xz]``).

An Accel-Sim trace is the dynamic instruction stream of one kernel launch,
recorded by its NVBit tracer and regrouped by thread block and warp.  This
module turns one ``.traceg`` file into a :class:`~rfmodel.trace.Trace`
(all CTAs of the launch, warps in CTA order).

Supported format
----------------
Tracer format versions 3, 4 and 5 (header ``-accelsim tracer version = N``);
they share one instruction-line layout, version 5 (the current tracer) adds a
trailing immediate, which is read and ignored when present.  Version 1/2 traces
(thread block and warp ids at the start of every line) are rejected.  A file
starts with ``-key = value`` header lines (``-grid dim = (x,y,z)``, ``-block dim
= (x,y,z)``, ``-nregs``, ``-shmem``, ``-binary version``, ``-enable lineinfo``
...), then ``#``-comment lines, then per thread block::

    #BEGIN_TB
    thread block = x,y,z
    warp = w
    insts = n
    <n instruction lines>
    warp = ...
    #END_TB

and one instruction line per dynamic warp instruction::

    [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [mode addresses] [immediate]

* ``line_num`` (decimal) only when the header says ``-enable lineinfo = 1``.
* ``PC`` hex byte offset; ``mask`` hex, the active *and* predicate-true lanes
  (a fully predicated-off instruction has mask 0 and 0 active lanes).
* registers are ``R<n>`` in SASS numbering (Accel-Sim adds 1 internally, the
  file does not); ``R255`` is ``RZ``.
* ``mem_width`` is the bytes per thread for memory instructions, 0 otherwise;
  when it is non-zero an address-compression ``mode`` follows:

  - ``0``: one hex address per active lane (``popcount(mask)`` of them; a full
    list of 32 with inactive lanes included is also accepted);
  - ``1``: ``base stride``: the k-th active lane accesses ``base + k*stride``
    (the tracer emits it only for a contiguous run of active lanes);
  - ``2``: ``base d1 d2 ...``: each active lane after the first accesses the
    previous lane's address plus the next delta.  The tracer writes
    ``popcount - 1`` deltas; Accel-Sim's reader consumes ``popcount`` numbers
    (the last one being the immediate, unused), so up to one surplus number is
    accepted.

Conversion to a Trace
---------------------
* ``RZ`` (``R255``) is dropped from ``dst``/``src``: it is not a register-file
  access.  Accel-Sim itself reads ``RZ`` from a bank and counts it as a read, so
  ``attrs["rz_src"]`` / ``attrs["rz_dst"]`` keep the per-row ``RZ`` operand
  counts (``int8``) for an Accel-Sim-compatible count.
* op classes come from the SASS reader's opcode table (:func:`classify_opcode`).
* ``active`` is ``popcount(mask)``; ``sidx`` is ``PC // 16`` (``PC // 8`` for
  binary versions below 70), which equals the static instruction index of the
  function when its code starts at offset 0; ``attrs["instr_bytes"]`` keeps the
  divisor (the simulator's instruction cache takes the PC back from it).
* Memory: the per-lane addresses of active lanes of global, local and atomic
  instructions (:data:`~rfmodel.ir.L1D_CLASSES`, except the shared
  ``ATOMS``) become the distinct ``line_bytes``-aligned line addresses each
  instruction touches (a lane's access of ``width`` bytes touches the lines of
  its first and last byte), ascending per instruction.  ``width`` is taken from
  the opcode as Accel-Sim does (``.64`` -> 8, ``.128`` -> 16, ``.U8`` -> 1,
  otherwise 4).  A shared-memory access's addresses give its passes through the banks
  (``smem_passes``, :func:`~rfmodel.trace.bank_passes`); constant addresses are read and
  dropped.
* Predicate, uniform-register, ``.reuse`` and value attributes are not in the
  trace: their columns stay zero / unknown.

Malformed input raises :class:`~rfmodel.errors.ParseError` with the file and
line.  Parsing keeps per-line Python work small: non-memory lines are cached by
their text (a kernel's warps repeat the same lines), memory lines are split
once, and the line addresses are derived with numpy at the end.
"""

from __future__ import annotations

import lzma
import warnings
from array import array
from pathlib import Path

import numpy as np

from rfmodel.errors import ParseError
from rfmodel.ir import L1D_CLASSES, OpClass
from rfmodel.trace import MAX_DST, MAX_SRC, NONE, Trace, empty_columns, passes_by_row
from rfmodel.workload.sass.opcodes import classify as _sass_classify

__all__ = ["SUPPORTED_VERSIONS", "classify_opcode", "read_kernelslist", "read_traceg"]

SUPPORTED_VERSIONS = (3, 4, 5)
WARP_SIZE = 32
RZ = 255

# ---------------------------------------------------------------------------------------------
# opcode classes


def classify_opcode(opcode: str) -> OpClass:
    """Op class of a SASS opcode (with or without modifiers).

    Uses the SASS reader's opcode table (:func:`rfmodel.workload.sass.opcodes.classify`),
    so traces and SASS listings classify every mnemonic the same way.
    """
    return OpClass(_sass_classify(opcode.split(".", 1)[0])[0])


def _access_width(opcode: str) -> int:
    """Bytes per thread of a memory opcode, by Accel-Sim's rule (first ``.N`` or ``.UN`` modifier / 8)."""
    for tok in opcode.split(".")[1:]:
        if tok.isdigit():
            return max(1, int(tok) // 8)
        if tok[:1] == "U" and tok[1:].isdigit():
            return max(1, int(tok[1:]) // 8)
    return 4


# ---------------------------------------------------------------------------------------------
# kernelslist


def read_kernelslist(path: str | Path) -> list[Path]:
    """Kernel trace files named by a ``kernelslist.g``, in launch order.

    Lines starting with ``kernel`` name a trace file relative to the list's
    directory (when the named file is missing but ``<name>.xz`` exists, that
    one is returned); ``MemcpyHtoD``/``MemcpyDtoH`` lines and blank lines are
    skipped.  Anything else raises :class:`ParseError`.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ParseError(str(path), None, f"cannot read kernels list: {e.strerror or e}") from e
    out: list[Path] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("Memcpy") or line.startswith("#"):
            continue
        if not line.startswith("kernel"):
            raise ParseError(
                str(path), lineno, f"expected a 'kernel-*.traceg' or 'Memcpy...' line, got {line!r}"
            )
        p = path.parent / line
        if not p.exists() and Path(str(p) + ".xz").exists():
            p = Path(str(p) + ".xz")
        out.append(p)
    return out


# ---------------------------------------------------------------------------------------------
# traceg


def _open_text(path: Path):
    if path.name.endswith(".xz"):
        return lzma.open(path, "rt", encoding="ascii", errors="replace")
    return open(path, encoding="ascii", errors="replace")  # noqa: SIM115


def _parse_dim(path: str, lineno: int, key: str, value: str) -> tuple[int, int, int]:
    v = value.strip().strip("()")
    try:
        parts = tuple(int(x) for x in v.split(","))
    except ValueError:
        parts = ()
    if len(parts) != 3 or min(parts) < 1:
        raise ParseError(
            path, lineno, f"bad '{key}' value {value.strip()!r}; expected (x,y,z) with x,y,z >= 1"
        )
    return parts  # type: ignore[return-value]


def _reg(tok: str) -> int:
    if tok[:1] != "R":
        raise ValueError(f"expected a register R<n>, got {tok!r}")
    r = int(tok[1:])
    if not 0 <= r <= 255:
        raise ValueError(f"register {tok} out of range R0..R255")
    return r


def _reg_list(toks: list[str], i: int, what: str) -> tuple[list[int], int]:
    """The registers of a count-prefixed list (the count at ``toks[i]``; ``what``: ``destination`` or
    ``source``, for the errors) and the index of the token after them."""
    n = int(toks[i])
    if n < 0:
        raise ValueError(f"negative {what} count")
    regs = [_reg(t) for t in toks[i + 1 : i + 1 + n]]
    if len(regs) != n:
        raise IndexError(f"line ends inside the {what} list")
    return regs, i + 1 + n


class _Parser:
    """State of one ``.traceg`` parse; see :func:`read_traceg`."""

    def __init__(self, path: Path, line_bytes: int):
        self.path = str(path)
        self.line_bytes = line_bytes
        self.header: dict[str, str] = {}
        self.version = 0
        self.lineinfo = False
        self.instr_bytes = 16
        # templates: one per distinct static part of an instruction line
        self.tkey: dict[str, int] = {}
        self.templates: list[tuple] = []
        self.line_cache: dict[str, int] = {}
        self.rows = array("i")  # template id per row, file order
        # memory lanes: explicit (row, address) pairs and base+stride runs
        self.m_row = array("q")
        self.m_addr = array("q")
        self.s_row = array("q")
        self.s_base = array("q")
        self.s_stride = array("q")
        self.s_n = array("q")
        # the lanes' addresses of shared-memory accesses (row, address), for their bank passes
        self.h_row = array("q")
        self.h_addr = array("q")

    # -- instruction lines ---------------------------------------------------------------------
    def instr(self, line: str, lineno: int) -> int | None:
        """Parse one new instruction line; the template id when the line may be cached."""
        toks = line.split()
        try:
            return self._instr(toks)
        except (ValueError, IndexError, OverflowError) as e:
            msg = f"malformed instruction line ({e}): {line.strip()!r}"
            raise ParseError(self.path, lineno, msg) from None

    def _instr(self, toks: list[str]) -> int | None:
        i = 1 if self.lineinfo else 0
        if self.lineinfo:
            int(toks[0])
        pc = int(toks[i], 16)
        if not 0 <= pc < 1 << 64:
            raise ValueError("PC is not a 64-bit value")
        mask = int(toks[i + 1], 16)
        if not 0 <= mask <= 0xFFFFFFFF:
            raise ValueError("mask is not a 32-bit value")
        dsts, k = _reg_list(toks, i + 2, "destination")
        opcode = toks[k]
        if opcode[:1].isdigit() or opcode[:1] == "R":
            raise ValueError(f"expected an opcode, got {opcode!r}")
        srcs, k = _reg_list(toks, k + 1, "source")
        mem_width = int(toks[k])
        if mem_width < 0:
            raise ValueError("negative memory width")
        static_end = k + 1
        rest = len(toks) - static_end
        row = len(self.rows)
        active = mask.bit_count()
        if mem_width == 0:
            if rest > 1:
                raise ValueError(f"{rest - 1} unexpected trailing token(s)")
            key = " ".join(toks[i:static_end])
            tid = self._template(key, pc, opcode, dsts, srcs, active)
            self.rows.append(tid)
            return tid
        mode = int(toks[static_end])
        a = static_end + 1
        if mode == 0:
            n_addr = len(toks) - a
            if n_addr in (active, active + 1):
                addrs = [int(t, 16) for t in toks[a : a + active]]
            elif n_addr in (WARP_SIZE, WARP_SIZE + 1) and active < WARP_SIZE - 1:
                full = [int(t, 16) for t in toks[a : a + WARP_SIZE]]
                addrs = [full[s] for s in range(WARP_SIZE) if mask >> s & 1]
            else:
                raise ValueError(f"address mode 0 needs {active} addresses, found {n_addr}")
        elif mode == 1:
            if len(toks) - a not in (2, 3):
                raise ValueError("address mode 1 needs 'base stride'")
            base = int(toks[a], 16)
            stride = int(toks[a + 1])
            addrs = None
        elif mode == 2:
            base = int(toks[a], 16)
            nd_ = max(active - 1, 0)
            n_num = len(toks) - a - 1
            if not nd_ <= n_num <= nd_ + 2:
                raise ValueError(f"address mode 2 needs {nd_} deltas, found {n_num} numbers")
            addrs = []
            if active:
                cur = base
                addrs.append(cur)
                for t in toks[a + 1 : a + 1 + nd_]:
                    cur += int(t)
                    addrs.append(cur)
        else:
            raise ValueError(f"unknown address compression mode {mode}")
        key = " ".join(toks[i:static_end])
        tid = self._template(key, pc, opcode, dsts, srcs, active)
        self.rows.append(tid)
        if active and self.templates[tid][9]:  # a shared-memory access: its lanes' banks
            sh = addrs if addrs is not None else [base + q * stride for q in range(active)]
            self.h_row.extend([row] * len(sh))
            self.h_addr.extend(sh)
        if not self.templates[tid][7] or active == 0:
            return None
        if addrs is None:
            self.s_row.append(row)
            self.s_base.append(base)
            self.s_stride.append(stride)
            self.s_n.append(active)
        else:
            self.m_row.extend([row] * len(addrs))
            self.m_addr.extend(addrs)
        return None

    def _template(self, key: str, pc: int, opcode: str, dsts, srcs, active: int) -> int:
        tid = self.tkey.get(key)
        if tid is not None:
            return tid
        cls = classify_opcode(opcode)
        dst = [r for r in dsts if r != RZ]
        src = [r for r in srcs if r != RZ]
        if len(dst) > MAX_DST or len(src) > MAX_SRC:
            raise ValueError(f"more than {MAX_DST} destinations or {MAX_SRC} sources")
        base_op = opcode.split(".", 1)[0]
        lines = cls in L1D_CLASSES and base_op != "ATOMS"
        shared = cls in (OpClass.LD_SHARED, OpClass.ST_SHARED) or base_op == "ATOMS"
        tid = len(self.templates)
        self.templates.append(
            (
                int(cls),
                tuple(dst),
                tuple(src),
                active,
                pc // self.instr_bytes,
                len(srcs) - len(src),
                len(dsts) - len(dst),
                lines,
                _access_width(opcode) if lines else 0,
                shared,
            )
        )
        self.tkey[key] = tid
        return tid

    # -- header ----------------------------------------------------------------------------------
    def header_line(self, line: str, lineno: int) -> None:
        body = line[1:]
        if "=" not in body:
            raise ParseError(self.path, lineno, f"header line without '=': {line.strip()!r}")
        k, v = body.split("=", 1)
        self.header[" ".join(k.split())] = v.strip()

    def finish_header(self, lineno: int) -> None:
        h = self.header
        v = h.get("accelsim tracer version")
        if v is None:
            raise ParseError(
                self.path, lineno, "no '-accelsim tracer version' header; supported versions: 3, 4, 5"
            )
        try:
            self.version = int(v)
        except ValueError:
            raise ParseError(self.path, lineno, f"bad tracer version {v!r}") from None
        if self.version < min(SUPPORTED_VERSIONS):
            raise ParseError(
                self.path, lineno, f"tracer version {self.version} is not supported (supported: 3, 4, 5)"
            )
        if self.version > max(SUPPORTED_VERSIONS):
            warnings.warn(
                f"{self.path}: tracer version {self.version} is newer than 5; read with the version-5 layout",
                stacklevel=3,
            )
        try:
            self.lineinfo = int(h.get("enable lineinfo", "0")) != 0
            bv = int(h.get("binary version", "70"))
        except ValueError as e:
            raise ParseError(self.path, lineno, f"bad header value: {e}") from None
        self.instr_bytes = 16 if bv >= 70 else 8
        for key in ("grid dim", "block dim"):
            if key not in h:
                raise ParseError(self.path, lineno, f"missing '-{key}' header")


def read_traceg(path: str | Path, *, line_bytes: int = 128) -> Trace:
    """Read one Accel-Sim ``kernel-*.traceg`` (or ``.traceg.xz``) file into a :class:`Trace`.

    All thread blocks of the launch are kept, in file order, and within a
    block the warps by warp id; ``warp_cta`` gives each warp's CTA index (file
    order) and ``attrs["cta_ids"]`` the CTA coordinates.  See the module
    docstring for the format and the conversion rules.
    """
    if line_bytes <= 0 or line_bytes & (line_bytes - 1):
        raise ValueError(f"line_bytes must be a power of two, got {line_bytes}")
    path = Path(path)
    p = _Parser(path, line_bytes)
    spath = str(path)
    in_header = True
    in_tb = False
    cta_ids: list[tuple[int, int, int]] = []
    # warp blocks: (cta index, warp id, first row, expected count, header line)
    wblocks: list[tuple[int, int, int, int, int]] = []
    cur: list | None = None  # [cta, warp id, first row, expected, lineno]
    warp_id = None
    ids_seen: set[int] = set()
    rows = p.rows
    cache = p.line_cache

    def close_warp(lineno: int) -> None:
        nonlocal cur
        if cur is None:
            return
        got = len(rows) - cur[2]
        if got != cur[3]:
            raise ParseError(
                spath, cur[4], f"warp {cur[1]} says insts = {cur[3]} but {got} instruction lines follow"
            )
        wblocks.append(tuple(cur))  # type: ignore[arg-type]
        cur = None

    try:
        f = _open_text(path)
    except OSError as e:
        raise ParseError(spath, None, f"cannot open trace: {e.strerror or e}") from e
    lineno = 0
    try:
        with f:
            for lineno, line in enumerate(f, 1):
                tid = cache.get(line)
                if tid is not None:
                    rows.append(tid)
                    continue
                c = line[:1]
                if c in " \t":
                    line = line.lstrip(" \t")
                    c = line[:1]
                if not c or c in "\r\n":
                    continue
                if in_header:
                    if c == "-":
                        p.header_line(line, lineno)
                        continue
                    p.finish_header(lineno)
                    in_header = False
                if c == "#":
                    s = line.strip()
                    if s == "#BEGIN_TB":
                        if in_tb:
                            raise ParseError(spath, lineno, "#BEGIN_TB inside a thread block")
                        in_tb = True
                        warp_id = None
                        ids_seen = set()
                        cta_ids.append((-1, -1, -1))
                    elif s == "#END_TB":
                        if not in_tb:
                            raise ParseError(spath, lineno, "#END_TB outside a thread block")
                        close_warp(lineno)
                        in_tb = False
                    continue
                if c in "tw" or line.startswith("insts"):
                    key, _, val = line.partition("=")
                    key = key.strip()
                    if not in_tb:
                        raise ParseError(spath, lineno, f"'{key}' outside #BEGIN_TB/#END_TB")
                    try:
                        if key == "thread block":
                            xyz = tuple(int(x) for x in val.split(","))
                            if len(xyz) != 3:
                                raise ValueError
                            cta_ids[-1] = xyz  # type: ignore[assignment]
                        elif key == "warp":
                            close_warp(lineno)
                            warp_id = int(val)
                            if warp_id < 0 or warp_id in ids_seen:
                                raise ParseError(spath, lineno, f"duplicate or negative warp id {warp_id}")
                            ids_seen.add(warp_id)
                        elif key == "insts":
                            if warp_id is None or cur is not None:
                                raise ParseError(spath, lineno, "'insts' without a preceding 'warp' line")
                            n = int(val)
                            if n < 0:
                                raise ValueError
                            cur = [len(cta_ids) - 1, warp_id, len(rows), n, lineno]
                        else:
                            raise ParseError(spath, lineno, f"unknown line {line.strip()!r}")
                    except ValueError:
                        raise ParseError(spath, lineno, f"bad value in {line.strip()!r}") from None
                    continue
                # an instruction line not seen before
                if cur is None:
                    raise ParseError(
                        spath, lineno, "instruction line outside a warp ('warp'/'insts' missing)"
                    )
                tid = p.instr(line, lineno)
                if tid is not None:
                    cache[line] = tid
    except (EOFError, lzma.LZMAError) as e:
        raise ParseError(spath, lineno or None, f"corrupt compressed trace: {e}") from None
    if in_header:
        p.finish_header(lineno)
    if in_tb:
        raise ParseError(spath, lineno, "file ends inside a thread block (#END_TB missing)")
    # rows outside any warp block can only come from cached lines appearing in a wrong place
    counted = sum(b[3] for b in wblocks)
    if counted != len(rows):
        raise ParseError(spath, None, "instruction lines outside a warp block")
    return _build(p, cta_ids, wblocks)


def _build(p: _Parser, cta_ids, wblocks) -> Trace:
    h = p.header
    grid = _parse_dim(p.path, 0, "grid dim", h["grid dim"])
    block = _parse_dim(p.path, 0, "block dim", h["block dim"])
    T = len(p.templates)
    t_op = np.zeros(T + 1, np.int8)
    t_dst = np.full((T + 1, MAX_DST), NONE, np.uint8)
    t_src = np.full((T + 1, MAX_SRC), NONE, np.uint8)
    t_active = np.zeros(T + 1, np.int8)
    t_sidx = np.zeros(T + 1, np.int64)
    t_rzs = np.zeros(T + 1, np.int8)
    t_rzd = np.zeros(T + 1, np.int8)
    t_width = np.zeros(T + 1, np.int64)
    for t, (op, dst, src, active, sidx, rzs, rzd, _lines, width, _shared) in enumerate(p.templates):
        t_op[t] = op
        t_dst[t, : len(dst)] = dst
        t_src[t, : len(src)] = src
        t_active[t] = active
        t_sidx[t] = sidx
        t_rzs[t] = rzs
        t_rzd[t] = rzd
        t_width[t] = width
    if t_sidx.max(initial=0) > np.iinfo(np.int32).max:
        raise ParseError(p.path, None, "PC too large for a static instruction index")
    tid = np.frombuffer(p.rows, dtype=np.int32).astype(np.int64) if len(p.rows) else np.zeros(0, np.int64)
    n = len(tid)

    # warp order: CTAs in file order, warps of a CTA by warp id
    wb = sorted(wblocks, key=lambda b: (b[0], b[1]))
    starts = np.array([b[2] for b in wb], dtype=np.int64)
    counts = np.array([b[3] for b in wb], dtype=np.int64)
    in_order = all(wb[k] is wblocks[k] for k in range(len(wb)))
    if in_order:
        perm = None
    else:
        perm = _ranges(starts, counts)
        tid = tid[perm]

    cols = empty_columns(n)
    cols["op"][:] = t_op[tid]
    cols["sidx"][:] = t_sidx[tid]
    cols["dst"][:] = t_dst[tid]
    cols["src"][:] = t_src[tid]
    cols["active"][:] = t_active[tid]
    cols["width"][:] = 0
    if len(p.h_row):  # file-order rows, mapped through the permutation
        h_row = np.frombuffer(p.h_row, dtype=np.int64)
        first = np.flatnonzero(np.r_[True, h_row[1:] != h_row[:-1]])
        h_pass = passes_by_row(np.frombuffer(p.h_addr, dtype=np.int64), first, np.r_[first[1:], len(h_row)])
        at = h_row[first]
        if perm is not None:
            inv = np.empty(n, dtype=np.int64)
            inv[perm] = np.arange(n, dtype=np.int64)
            at = inv[at]
        cols["smem_passes"][at] = h_pass

    # memory lanes -> lines; rows are file-order rows, mapped through the permutation
    L = p.line_bytes
    m_row = np.frombuffer(p.m_row, dtype=np.int64) if len(p.m_row) else np.zeros(0, np.int64)
    m_addr = np.frombuffer(p.m_addr, dtype=np.int64) if len(p.m_addr) else np.zeros(0, np.int64)
    if len(p.s_row):
        s_n = np.frombuffer(p.s_n, dtype=np.int64)
        s_row = np.repeat(np.frombuffer(p.s_row, dtype=np.int64), s_n)
        k = np.arange(len(s_row), dtype=np.int64) - np.repeat(np.cumsum(s_n) - s_n, s_n)
        s_addr = np.repeat(np.frombuffer(p.s_base, dtype=np.int64), s_n) + k * np.repeat(
            np.frombuffer(p.s_stride, dtype=np.int64), s_n
        )
        m_row = np.concatenate([m_row, s_row])
        m_addr = np.concatenate([m_addr, s_addr])
    file_tid = np.frombuffer(p.rows, dtype=np.int32) if n else np.zeros(0, np.int32)
    width = t_width[file_tid[m_row]] if len(m_row) else np.zeros(0, np.int64)
    first = m_addr & ~np.int64(L - 1)
    last = (m_addr + width - 1) & ~np.int64(L - 1)
    two = last != first
    l_row = np.concatenate([m_row, m_row[two]])
    l_line = np.concatenate([first, last[two]])
    if perm is not None and len(l_row):
        inv = np.empty(n, dtype=np.int64)
        inv[perm] = np.arange(n, dtype=np.int64)
        l_row = inv[l_row]
    order = np.lexsort((l_line, l_row))
    l_row, l_line = l_row[order], l_line[order]
    keep = np.ones(len(l_row), dtype=bool)
    if len(l_row) > 1:
        keep[1:] = (l_row[1:] != l_row[:-1]) | (l_line[1:] != l_line[:-1])
    l_row, l_line = l_row[keep], l_line[keep]
    mem_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(l_row, minlength=n), out=mem_ptr[1:])

    warp_ptr = np.zeros(len(wb) + 1, dtype=np.int64)
    np.cumsum(counts, out=warp_ptr[1:])
    warp_cta = np.array([b[0] for b in wb], dtype=np.int32)
    rz_src = t_rzs[tid]
    rz_dst = t_rzd[tid]
    try:
        nregs = int(h.get("nregs", "0"))
        shmem = int(h.get("shmem", "0"))
    except ValueError as e:
        raise ParseError(p.path, None, f"bad header value: {e}") from None
    for key, value in (("nregs", nregs), ("shmem", shmem)):
        if not 0 <= value < 1 << 31:
            raise ParseError(p.path, None, f"header '-{key} = {value}': expected a count from 0 to 2^31 - 1")
    return Trace(
        kernel=h.get("kernel name", Path(p.path).name),
        warp_ptr=warp_ptr,
        warp_cta=warp_cta,
        mem_ptr=mem_ptr,
        mem_line=l_line.astype(np.int64, copy=False),
        regs_per_thread=nregs,
        threads_per_cta=block[0] * block[1] * block[2],
        ctas=len(cta_ids),
        shared_mem_bytes=shmem,
        line_bytes=L,
        attrs={
            "source": "accelsim",
            "path": p.path,
            "tracer_version": p.version,
            "instr_bytes": p.instr_bytes,  # PC = sidx x instr_bytes (the simulator's instruction cache)
            "header": dict(h),
            "grid_dim": grid,
            "block_dim": block,
            "cta_ids": np.array(cta_ids, dtype=np.int32).reshape(-1, 3),
            "warp_ids": np.array([b[1] for b in wb], dtype=np.int32),
            "rz_src": rz_src,
            "rz_dst": rz_dst,
        },
        **cols,
    )


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + c)`` for each pair."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    off = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return np.arange(total, dtype=np.int64) + off
