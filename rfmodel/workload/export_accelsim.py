"""Write any workload as an Accel-Sim trace (``kernelslist.g`` + ``kernel-1.traceg``).

The files follow tracer format version 5 as :mod:`rfmodel.workload.accelsim`
reads it (its module docstring is the format reference), so a user with
Accel-Sim can run our workloads there, and our own reader reads them back.

What a :class:`~rfmodel.trace.Trace` keeps and the format carries:

* op class: written as one representative SASS opcode per class (``IADD3``,
  ``FFMA``, ``DFMA``, ``MUFU.EX2``, ``HMMA.16816.F32``, ``LDG.E``, ``STG.E``,
  ``LDS``, ``STS``, ``LDL``, ``STL``, ``LDC``, ``ATOMG.E.ADD``, ``BRA``,
  ``BAR.SYNC``, ``EXIT``, and ``S2R`` / ``NOP`` for the rest), each of which
  the reader classifies back to the same class; an atomic with no cache line
  (the trace keeps lines of global accesses only) is a shared-memory one and
  written ``ATOMS``;
* destination and source registers in order (``RZ`` reads counted in
  ``attrs["rz_src"]`` are appended as ``R255``), at most :data:`ACCELSIM_MAX_DST`
  (1) destination and :data:`ACCELSIM_MAX_SRC` (4) sources, the limits of
  Accel-Sim's trace parser (``MAX_DST``, ``MAX_SRC``): the first ones are
  kept, as its tracer writes the first register of a wide value, and the
  others are counted (``dropped_destinations``, ``dropped_sources``);
* active lanes: a row keeps only how many lanes were active, so the mask
  names lanes by position (:func:`warp_masks`).  Accel-Sim finishes a warp
  once every lane its block dimension gives it has been retired by an
  ``EXIT`` whose mask holds it, and retires a lane at most once; an
  instruction may follow an ``EXIT`` that retires some of the lanes, but
  nothing after the one that retires the last is fetched.  So an ``EXIT``
  taken by ``a`` lanes before the warp's last row retires the top ``a``
  lanes still running (every other row names lanes from 0 up, so later rows
  keep to the running ones), leaving as many as the later rows name and at
  least one; the warp's last ``EXIT`` retires every lane still running,
  lanes that left the stream without an ``EXIT`` included; a warp whose
  rows do not end in ``EXIT`` gets one more ``EXIT`` row that does.  A row
  with no active lane (every lane predicated off) is written with mask 0,
  as the tracer writes the active & predicate-true lanes;
* the cache lines of global, local and atomic accesses: active lane ``k``
  reads 4 bytes of line ``k mod lines`` (address mode 0), so the reader
  recovers the same set of lines; shared and constant accesses get a
  contiguous 4-byte-per-lane pattern (mode 1), a shared access of more than
  one pass through the banks (``smem_passes``) lanes on as many words of one
  bank (mode 0), so the reader, and GPGPU-Sim, count the same passes.  A
  memory row always carries a width (4, what Accel-Sim also reads from the
  opcodes written here): with mask 0 it has an empty address list, as the
  tracer writes a predicated-off access (Accel-Sim asserts a width on every
  load and store and skips one with no active lane);
* PC = 16 x static instruction index (``-binary version = 70``); rows
  without one (the expander's synthetic ``EXIT``, an added ``EXIT``) get the
  PC after the highest index.

A CTA must have ``ceil(threads / 32)`` warps: Accel-Sim gives each of them a
stream from the file.  :func:`check_traceg` lists what a ``.traceg`` file
does that Accel-Sim cannot run.

Not carried (the format has no place for them): predicate and uniform
registers, ``.reuse`` flags, value width and compressibility, and opcode
modifiers beyond the class.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rfmodel.errors import RfmodelError, expect_int
from rfmodel.io import atomic_path, output_set
from rfmodel.ir import L1D_CLASSES, MEMORY_CLASSES, OpClass
from rfmodel.trace import NONE, SMEM_BANKS, Trace

__all__ = [
    "ACCELSIM_MAX_DST",
    "ACCELSIM_MAX_SRC",
    "MEMORY_OPCODES",
    "OPCODE_OF_CLASS",
    "check_traceg",
    "export_accelsim",
    "warp_masks",
    "write_traceg",
]

#: register operands per instruction Accel-Sim's trace parser accepts (its ``MAX_DST``, ``MAX_SRC``)
ACCELSIM_MAX_DST = 1
ACCELSIM_MAX_SRC = 4

#: the opcode written for each op class (the reader's table maps it back to the class)
OPCODE_OF_CLASS = {
    OpClass.INT: "IADD3",
    OpClass.FP32: "FFMA",
    OpClass.FP64: "DFMA",
    OpClass.SFU: "MUFU.EX2",
    OpClass.TENSOR: "HMMA.16816.F32",
    OpClass.LD_GLOBAL: "LDG.E",
    OpClass.ST_GLOBAL: "STG.E",
    OpClass.LD_SHARED: "LDS",
    OpClass.ST_SHARED: "STS",
    OpClass.LD_LOCAL: "LDL",
    OpClass.ST_LOCAL: "STL",
    OpClass.LD_CONST: "LDC",
    OpClass.ATOMIC: "ATOMG.E.ADD",
    OpClass.BRANCH: "BRA",
    OpClass.BARRIER: "BAR.SYNC",
    OpClass.EXIT: "EXIT",
    OpClass.MISC: "NOP",
}

_HEADER = """-kernel name = {name}
-kernel id = 1
-grid dim = ({ctas},1,1)
-block dim = ({threads},1,1)
-shmem = {shmem}
-nregs = {nregs}
-binary version = 70
-cuda stream id = 0
-shmem base_addr = 0x00007f0000000000
-local mem base_addr = 0x00007f0001000000
-nvbit version = 1.7
-accelsim tracer version = 5
-enable lineinfo = 0

#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width \
[adrrescompress?] [mem_addresses] immediate

"""


WARP_SIZE = 32
_FULL = (1 << WARP_SIZE) - 1

#: base opcodes whose rows Accel-Sim's trace front end requires a memory width for (it asserts
#: ``data_size > 0`` on them, and takes the width from a non-zero width field only)
MEMORY_OPCODES = frozenset(
    {"LDG", "STG", "LDL", "STL", "LDS", "STS", "LD", "ST", "ATOM", "ATOMG", "ATOMS", "RED", "LDSM", "LDGSTS"}
)


def _shared_addresses(active: int, passes: int) -> str:
    """The address part of a shared (or constant) access of ``active`` lanes taking ``passes`` passes
    through the banks (:func:`~rfmodel.trace.bank_passes`): contiguous words (mode 1) for one
    pass, else lanes ``0 .. passes-1`` on distinct words of bank 0 and the others on one word each of the
    other banks (mode 0)."""
    p = min(max(passes, 1), active)
    if p == 1:
        return "4 1 0x0 4"
    words = [SMEM_BANKS * k for k in range(p)] + [1 + (k - p) % (SMEM_BANKS - 1) for k in range(p, active)]
    return "4 0 " + " ".join(f"0x{4 * w:x}" for w in words)


def _cta_ranges(trace: Trace):
    wc = np.asarray(trace.warp_cta, dtype=np.int64)
    if len(wc) and np.any(np.diff(wc) < 0):
        raise RfmodelError(f"trace '{trace.kernel}': warps are not grouped by CTA")
    bounds = np.flatnonzero(np.diff(wc)) + 1 if len(wc) else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], bounds, [len(wc)]]).astype(np.int64) if len(wc) else np.zeros(1, np.int64)
    return [(int(starts[i]), int(starts[i + 1])) for i in range(len(starts) - 1)]


def _low(n: int) -> int:
    """The mask of lanes ``0..n-1``."""
    return (1 << n) - 1


def _warp_lane_count(threads: int, warp: int) -> int:
    """Lanes of warp ``warp`` (index in its CTA) in a CTA of ``threads`` threads."""
    return max(0, min(WARP_SIZE, threads - WARP_SIZE * warp))


def warp_masks(ops, active, lanes: int = WARP_SIZE) -> tuple[list[int], dict]:
    """Accel-Sim active masks for one warp's rows (op classes ``ops``, active lane counts ``active``) in a
    warp of ``lanes`` lanes.

    Returns the masks, one per row and one more when the rows do not end in ``EXIT`` (the mask of an
    ``EXIT`` row to append), and counts: ``partial_exits`` (``EXIT`` rows before the last that retire
    lanes), ``exits_added`` (0 or 1), ``lanes_retired_at_end`` (lanes the last ``EXIT`` row, or the added
    one, retires beyond its own count: lanes that left without an ``EXIT``), ``deferred_exit_lanes``
    (lanes an earlier ``EXIT`` counted but could not retire, because later rows still name them or the
    warp would end there) and ``clipped_rows`` (rows counting more lanes than the warp has running,
    written with those it has).

    Lanes still running are always ``0..live-1``: a row with ``a`` active lanes names lanes ``0..a-1``, and
    an ``EXIT`` before the last row retires the top lanes, so every lane is retired exactly once, the
    last one by the warp's final row.
    """
    n = len(ops)
    act = np.asarray(active, dtype=np.int64)
    ops = np.asarray(ops)
    # most lanes any later row names: the lanes an early EXIT must leave running
    later = np.zeros(n, dtype=np.int64)
    if n > 1:
        later[:-1] = np.maximum.accumulate(act[::-1])[::-1][1:]
    exit_op = int(OpClass.EXIT)
    live = int(lanes)
    masks: list[int] = []
    cnt = {
        "partial_exits": 0,
        "exits_added": 0,
        "lanes_retired_at_end": 0,
        "deferred_exit_lanes": 0,
        "clipped_rows": 0,
    }
    for i in range(n):
        a = int(act[i])
        if a > live:
            cnt["clipped_rows"] += 1
            a = live
        if int(ops[i]) != exit_op:
            masks.append(_low(a))
        elif i == n - 1:  # the warp's last row: every lane still running leaves here
            masks.append(_low(live))
            cnt["lanes_retired_at_end"] += live - a
            live = 0
        else:  # taken by a lanes: retire the top ones, keeping what later rows name (and one at least)
            k = max(0, min(a, live - max(int(later[i]), 1)))
            cnt["deferred_exit_lanes"] += a - k
            cnt["partial_exits"] += int(k > 0)
            masks.append(_low(live) ^ _low(live - k))
            live -= k
    if live > 0:  # rows that do not end in EXIT (or no rows): one more EXIT retires the rest
        masks.append(_low(live))
        cnt["exits_added"] += 1
        cnt["lanes_retired_at_end"] += live
    return masks, cnt


def write_traceg(trace: Trace, path: str | Path) -> dict:
    """Write ``trace`` as one ``.traceg`` file (atomically); returns counts of what was lost or changed.

    ``lost_lines``: rows with more cache lines than active lanes keep only as
    many lines as lanes (a lane names one line); ``lost_predicates``: rows
    whose predicate or uniform-register operands the format cannot carry;
    ``dropped_destinations`` / ``dropped_sources``: register operands beyond
    Accel-Sim's limits; ``partial_exits``, ``exits_added``,
    ``lanes_retired_at_end``, ``deferred_exit_lanes``, ``clipped_rows``: the
    sums of :func:`warp_masks`'s counts; ``rows``: instruction rows written.
    Raises :class:`~rfmodel.errors.RfmodelError` when a CTA does not have
    ``ceil(threads_per_cta / 32)`` warps.
    """
    rz = trace.attrs.get("rz_src")
    passes = trace.smem_passes
    rz = np.asarray(rz) if rz is not None and len(rz) == trace.n_instrs else None
    sidx = np.asarray(trace.sidx, dtype=np.int64)
    exit_pc = (int(sidx.max()) + 1 if len(sidx) else 0) * 16
    opcode = {int(k): v for k, v in OPCODE_OF_CLASS.items()}
    lines_of = trace.mem_line
    mem_ptr = trace.mem_ptr
    lost_lines = 0
    dropped_dst = dropped_src = rows = 0
    lane_counts = dict.fromkeys(
        ("partial_exits", "exits_added", "lanes_retired_at_end", "deferred_exit_lanes", "clipped_rows"), 0
    )
    lost_pred = int(np.count_nonzero((trace.psrc | trace.pdst) != 0)) + int(
        np.count_nonzero((trace.usrc | trace.udst) != 0)
    )
    line_bytes = int(trace.line_bytes)
    threads = int(trace.threads_per_cta)
    ctas = _cta_ranges(trace)
    want_warps = -(-threads // WARP_SIZE)
    for c, (w0, w1) in enumerate(ctas):
        if w1 - w0 != want_warps:
            raise RfmodelError(
                f"trace '{trace.kernel}': CTA {c} has {w1 - w0} warps, but {threads} threads per CTA make "
                f"{want_warps}; Accel-Sim runs that many warps per CTA, each from its own stream in the file"
            )
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        f.write(
            _HEADER.format(
                name=trace.kernel,
                ctas=len(ctas),
                threads=threads,
                shmem=int(trace.shared_mem_bytes),
                nregs=int(trace.regs_per_thread),
            )
        )
        for c, (w0, w1) in enumerate(ctas):
            f.write(f"\n#BEGIN_TB\n\nthread block = {c},0,0\n")
            for wi, w in enumerate(range(w0, w1)):
                r0, r1 = int(trace.warp_ptr[w]), int(trace.warp_ptr[w + 1])
                masks, cnt = warp_masks(trace.op[r0:r1], trace.active[r0:r1], _warp_lane_count(threads, wi))
                for k, v in cnt.items():
                    lane_counts[k] += v
                f.write(f"\nwarp = {wi}\ninsts = {len(masks)}\n")
                rows += len(masks)
                out = []
                for i in range(r0, r1):
                    op = int(trace.op[i])
                    if op == OpClass.MISC and np.any(trace.dst[i] != NONE):
                        name = "S2R"
                    elif op == OpClass.ATOMIC and mem_ptr[i] == mem_ptr[i + 1]:
                        name = "ATOMS"  # no cache line: a shared-memory atomic (not one at L2 on address 0)
                    else:
                        name = opcode[op]
                    dsts = [f"R{r}" for r in trace.dst[i] if r != NONE]
                    srcs = [f"R{r}" for r in trace.src[i] if r != NONE]
                    if rz is not None and rz[i] > 0:
                        srcs += ["R255"] * int(rz[i])
                    dropped_dst += max(len(dsts) - ACCELSIM_MAX_DST, 0)
                    dropped_src += max(len(srcs) - ACCELSIM_MAX_SRC, 0)
                    dsts, srcs = dsts[:ACCELSIM_MAX_DST], srcs[:ACCELSIM_MAX_SRC]
                    mask = masks[i - r0]
                    active = mask.bit_count()  # lanes 0..active-1 on every row but an EXIT
                    pc = int(sidx[i]) * 16 if sidx[i] >= 0 else exit_pc
                    mem = "0"
                    if op in MEMORY_CLASSES:
                        # a width on every memory row (Accel-Sim asserts one); no address without a lane
                        mem = "4 0"
                        if op in L1D_CLASSES and name != "ATOMS":
                            ln = lines_of[mem_ptr[i] : mem_ptr[i + 1]]
                            if active > 0 and len(ln):
                                if len(ln) > active:
                                    lost_lines += 1
                                k = np.arange(active)
                                addrs = ln[k % len(ln)] + (k // len(ln)) * 4 % line_bytes
                                mem = "4 0 " + " ".join(f"0x{int(a):x}" for a in addrs)
                            elif active > 0:
                                mem = _shared_addresses(active, int(passes[i]))
                        elif active > 0:
                            mem = _shared_addresses(active, int(passes[i]))
                    out.append(
                        f"{pc:04x} {mask:08x} {len(dsts)}"
                        + ("" if not dsts else " " + " ".join(dsts))
                        + f" {name} {len(srcs)}"
                        + ("" if not srcs else " " + " ".join(srcs))
                        + f" {mem} 0\n"
                    )
                if len(masks) > r1 - r0:
                    out.append(f"{exit_pc:04x} {masks[-1]:08x} 0 EXIT 0 0 0\n")
                f.write("".join(out))
            f.write("\n#END_TB\n")
    return {
        "lost_lines": lost_lines,
        "lost_predicates": lost_pred,
        "dropped_destinations": dropped_dst,
        "dropped_sources": dropped_src,
        "rows": rows,
        **lane_counts,
    }


def _header_dim(value: str) -> tuple[int, int, int] | None:
    try:
        x, y, z = (int(v) for v in value.strip().strip("()").split(","))
    except ValueError:
        return None
    return (x, y, z) if min(x, y, z) >= 1 else None


def check_traceg(path: str | Path) -> list[str]:
    """What in a ``.traceg`` file Accel-Sim's trace-driven front end cannot run (empty when nothing).

    Per instruction line: a hexadecimal PC and a 32-bit mask, at most :data:`ACCELSIM_MAX_DST`
    destinations and :data:`ACCELSIM_MAX_SRC` sources written ``R<n>``, an opcode; a width on every
    load, store and atomic (:data:`MEMORY_OPCODES`: Accel-Sim asserts ``data_size > 0``); after a width,
    address mode 0 with one address per lane of the mask, mode 1 (base, stride) only over one run of
    lanes, or mode 2 (base and deltas); the immediate of tracer version 5; lanes only of the warp
    (``-block dim`` gives a CTA ``ceil(threads/32)`` warps, the last one ``threads mod 32`` lanes when
    not 0) and not already retired.  Per warp: a warp id the CTA has, once per thread block, an ``insts``
    count matching its lines, each lane retired by exactly one ``EXIT`` whose mask holds it (a warp with
    a lane never retired never finishes; a lane retired twice fails Accel-Sim's assertion), and no line
    after the ``EXIT`` that retires the last lane (Accel-Sim fetches none, and the warp's barrier
    partners then wait for it).  Per thread block: every warp of the CTA present with an instruction;
    per file: as many thread blocks as ``-grid dim`` gives, a ``#`` line (the format comment, which
    Accel-Sim's header reader consumes) between the ``-key = value`` header and the first ``#BEGIN_TB``,
    nothing but blank lines outside thread blocks, and no ``#`` or ``-`` line inside one but its
    markers (Accel-Sim would read it as an instruction).  A mask of 0 (an instruction every lane has
    predicated off, as the tracer writes it) is accepted."""
    from rfmodel.io import read_text

    errors: list[str] = []
    lines = read_text(path, what="Accel-Sim trace").splitlines()
    header: dict[str, str] = {}
    block = grid = None
    threads = WARP_SIZE
    n_warps = 1
    version, lineinfo = 5, False
    n_tbs = 0
    in_tb = False
    tb_warps: dict[int, int] = {}  # warp id -> instruction lines, in the current thread block
    warp = None  # [warp id, header line, expected count, lines seen, lanes, retired, line of last EXIT]

    def close_warp():
        nonlocal warp
        if warp is None:
            return
        wid, at, want, got, lanes, retired, _ = warp
        if want is None:
            errors.append(f"line {at}: warp {wid} has no 'insts' line")
        elif got != want:
            errors.append(f"line {at}: warp {wid} has {got} instructions, header says {want}")
        if retired != lanes:
            errors.append(
                f"line {at}: warp {wid}: lanes {lanes & ~retired:#010x} are never retired by an EXIT "
                "(Accel-Sim never finishes the warp)"
            )
        tb_warps[wid] = got
        warp = None

    def close_tb(at):
        close_warp()
        missing = [w for w in range(n_warps) if not tb_warps.get(w)]
        if missing:
            errors.append(
                f"line {at}: thread block lacks instructions for warp(s) {missing[:8]} of its {n_warps}"
            )
        tb_warps.clear()

    stage = "header"  # Accel-Sim reads "-key = value" lines up to the first '#' line, then thread blocks
    for no, line in enumerate(lines, 1):
        t = line.split()
        if not t:
            continue
        if stage == "header":
            if line.startswith("-"):
                if "=" in line:
                    k, v = line[1:].split("=", 1)
                    header[" ".join(k.split())] = v.strip()
                continue
            if not line.startswith("#"):
                continue  # the header reader passes over it
            stage = "blocks"  # it takes this first '#' line as the format comment: the CTA's shape is known
            block = _header_dim(header.get("block dim", ""))
            grid = _header_dim(header.get("grid dim", ""))
            if block is None or grid is None:
                errors.append(f"line {no}: missing or bad '-block dim' / '-grid dim' header")
            else:
                threads = block[0] * block[1] * block[2]
                n_warps = -(-threads // WARP_SIZE)
            try:
                version = int(header.get("accelsim tracer version", "5"))
                lineinfo = int(header.get("enable lineinfo", "0")) != 0
            except ValueError:
                errors.append(f"line {no}: bad '-accelsim tracer version' or '-enable lineinfo' header")
            if t[0] != "#BEGIN_TB":
                continue
            errors.append(
                f"line {no}: #BEGIN_TB right after the header: Accel-Sim's header reader takes the first "
                "'#' line for the format comment, and its block reader then finds no #BEGIN_TB"
            )
        if t[0] == "#BEGIN_TB":
            if in_tb:
                errors.append(f"line {no}: a thread block starts before the previous one ends")
                close_tb(no)
            in_tb = True
            n_tbs += 1
            continue
        if t[0] == "#END_TB":
            if not in_tb:
                errors.append(f"line {no}: #END_TB without #BEGIN_TB")
            close_tb(no)
            in_tb = False
            continue
        if not in_tb:
            errors.append(f"line {no}: {line[:40]!r} outside a thread block (Accel-Sim's reader asserts)")
            continue
        if line.startswith(("#", "-")):
            errors.append(f"line {no}: {line[:40]!r} in a thread block would be read as an instruction")
            continue
        if t[0] == "thread":
            continue
        if t[0] == "warp":
            close_warp()
            try:
                wid = int(t[-1])
            except ValueError:
                errors.append(f"line {no}: bad warp line {line[:60]!r}")
                wid = -1
            if not 0 <= wid < n_warps:
                errors.append(
                    f"line {no}: warp {wid}, but a CTA of {threads} threads has warps 0..{n_warps - 1}"
                )
            elif wid in tb_warps:
                errors.append(f"line {no}: warp {wid} appears twice in one thread block")
            lanes = _low(_warp_lane_count(threads, wid)) if 0 <= wid < n_warps else 0
            warp = [wid, no, None, 0, lanes, 0, None]
            continue
        if t[0] == "insts":
            try:
                want = int(t[-1])
            except ValueError:
                errors.append(f"line {no}: bad insts line {line[:60]!r}")
                continue
            if warp is None:
                errors.append(f"line {no}: 'insts' outside a warp")
            else:
                warp[2] = want
            continue
        if warp is None:
            errors.append(f"line {no}: an instruction outside a warp: {line[:60]!r}")
            continue
        j = 1 if lineinfo else 0
        try:
            int(t[j], 16)
            mask = int(t[j + 1], 16)
            nd = int(t[j + 2])
        except (ValueError, IndexError):
            errors.append(f"line {no}: not an instruction: {line[:60]!r}")
            continue
        if not 0 <= mask <= _FULL:
            errors.append(f"line {no}: mask {t[j + 1]} is not a 32-bit mask")
            mask &= _FULL
        if nd > ACCELSIM_MAX_DST:
            errors.append(f"line {no}: {nd} destinations (at most {ACCELSIM_MAX_DST})")
        k = j + 3 + max(nd, 0)
        regs = t[j + 3 : k]
        op = t[k] if len(t) > k else ""
        ns = int(t[k + 1]) if len(t) > k + 1 and t[k + 1].isdigit() else -1
        if ns < 0 or not op or op[0].isdigit():
            errors.append(f"line {no}: no opcode or source count")
            continue
        if ns > ACCELSIM_MAX_SRC:
            errors.append(f"line {no}: {ns} sources (at most {ACCELSIM_MAX_SRC})")
        regs += t[k + 2 : k + 2 + ns]
        if any(not (r.startswith("R") and r[1:].isdigit() and int(r[1:]) <= 255) for r in regs):
            errors.append(f"line {no}: a register is not R<n> (n <= 255): {regs}")
        rest = t[k + 2 + ns :]
        errors += [f"line {no}: {e}" for e in _check_memory(op, mask, rest, version)]
        wid, _, _, got, lanes, retired, last_exit = warp
        if got and retired == lanes and last_exit is not None:
            errors.append(
                f"line {no}: an instruction follows the EXIT on line {last_exit} that retires the warp's "
                "last lanes (Accel-Sim fetches nothing after it)"
            )
        if mask & ~lanes:
            errors.append(
                f"line {no}: mask {mask:#010x} names lanes {mask & ~lanes:#010x} warp {wid} does not have"
            )
        if mask & retired:
            what = "retires again" if op.split(".")[0] == "EXIT" else "names"
            errors.append(f"line {no}: {what} lanes {mask & retired:#010x} that an EXIT already retired")
        if op.split(".")[0] == "EXIT":
            warp[5] = retired | (mask & lanes)
            warp[6] = no
        warp[3] = got + 1
    if stage == "header":
        errors.append("no '#' line ends the header: no thread block follows")
    if in_tb:
        errors.append(f"line {len(lines)}: the last thread block has no #END_TB")
        close_tb(len(lines))
    if grid is not None and n_tbs != grid[0] * grid[1] * grid[2]:
        errors.append(f"{n_tbs} thread blocks, but '-grid dim' gives {grid[0] * grid[1] * grid[2]}")
    return errors


def _check_memory(op: str, mask: int, rest: list[str], version: int) -> list[str]:
    """What is wrong with the width, address and immediate tokens ``rest`` of an instruction line."""
    imm = 1 if version >= 5 else 0
    base = op.split(".")[0]
    try:
        width = int(rest[0])
    except (ValueError, IndexError):
        return ["no memory width"]
    if width < 0:
        return [f"memory width {width}"]
    if width == 0:
        if base in MEMORY_OPCODES:
            return [f"{base} with memory width 0 (Accel-Sim asserts data_size > 0)"]
        extra = len(rest) - 1 - imm
        return [f"{extra} unexpected token(s) after the width"] if len(rest) - 1 not in (0, imm) else []
    lanes = mask.bit_count()
    try:
        mode = int(rest[1])
    except (ValueError, IndexError):
        return ["a memory width without an address mode"]
    nums = rest[2:]
    if mode == 0:
        if len(nums) != lanes + imm:
            return [f"address mode 0 with {len(nums) - imm} addresses for {lanes} lanes of the mask"]
    elif mode == 1:
        if len(nums) != 2 + imm:
            return ["address mode 1 needs 'base stride'"]
        low = mask & -mask
        if mask and (mask + low) & mask:
            return [f"address mode 1 over mask {mask:#010x}, which is not one run of lanes"]
    elif mode == 2:
        if not max(lanes - 1, 0) + imm <= len(nums) - 1 <= lanes + imm:
            return [f"address mode 2 with {len(nums) - 1} numbers for {lanes} lanes of the mask"]
    else:
        return [f"unknown address mode {mode}"]
    try:  # addresses and bases are hexadecimal, strides and deltas decimal
        if mode == 0:
            [int(a, 16) for a in nums[:lanes]]
        else:
            int(nums[0], 16), [int(d) for d in nums[1 : len(nums) - imm]]
    except ValueError:
        return ["an address, stride or delta is not a number"]
    return []


def export_accelsim(
    workload,
    outdir,
    *,
    arch: str | None = None,
    num_sms: int = 1,
    max_warps=None,
    seed: int = 0,
    line_bytes: int = 128,
) -> dict:
    """Write ``kernelslist.g`` and ``kernel-1.traceg`` for a workload of ours into ``outdir``.

    ``workload`` is a :class:`Trace`, a :class:`~rfmodel.workload.suite.Workload` or a
    workload reference (built-in name, ``synthetic:<preset>``, SASS or trace path),
    expanded for ``num_sms`` SMs (1: the whole grid) and cut to ``max_warps``.
    Returns the paths written and what the format could not carry.
    """
    from rfmodel.limits import MAX_NUM_SMS
    from rfmodel.workload.suite import DEFAULT_ARCH, Workload, load_workload

    num_sms = expect_int("num_sms", num_sms, low=1, high=MAX_NUM_SMS)
    if isinstance(workload, Trace):
        trace = workload
    elif isinstance(workload, Workload):
        trace = workload.trace
    else:
        trace = load_workload(
            workload,
            arch=arch or DEFAULT_ARCH,
            num_sms=num_sms,
            seed=seed,
            max_warps=max_warps,
            line_bytes=line_bytes,
        ).trace
    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise RfmodelError(f"{out}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    kernel = out / "kernel-1.traceg"
    with output_set([kernel, out / "kernelslist.g"]):  # both files or neither
        lost = write_traceg(trace, kernel)
        with atomic_path(out / "kernelslist.g") as tmp:
            tmp.write_text("kernel-1.traceg\n")
    return {
        "kernelslist": str(out / "kernelslist.g"),
        "traceg": str(kernel),
        "instructions": lost.pop("rows"),  # the trace's rows and any EXIT added
        "warps": trace.n_warps,
        "ctas": len(_cta_ranges(trace)),
        **lost,
    }
