"""Write any workload as an Accel-Sim trace (``kernelslist.g`` + ``kernel-1.traceg``).

The files follow tracer format version 5 as :mod:`rfmodel.workload.accelsim`
reads it (its module docstring is the format reference), so a user with
Accel-Sim can run our workloads there, and our own reader reads them back.

What a :class:`~rfmodel.workload.trace.Trace` keeps and the format carries:

* op class: written as one representative SASS opcode per class (``IADD3``,
  ``FFMA``, ``DFMA``, ``MUFU.EX2``, ``HMMA.16816.F32``, ``LDG.E``, ``STG.E``,
  ``LDS``, ``STS``, ``LDL``, ``STL``, ``LDC``, ``ATOMG.E.ADD``, ``BRA``,
  ``BAR.SYNC``, ``EXIT``, and ``S2R`` / ``NOP`` for the rest), each of which
  the reader classifies back to the same class;
* destination and source registers in order (``RZ`` reads counted in
  ``attrs["rz_src"]`` are appended as ``R255``), at most :data:`ACCELSIM_MAX_DST`
  (1) destination and :data:`ACCELSIM_MAX_SRC` (4) sources, the limits of
  Accel-Sim's trace parser (``MAX_DST``, ``MAX_SRC``): the first ones are
  kept, as its tracer writes the first register of a wide value, and the
  others are counted (``dropped_destinations``, ``dropped_sources``);
* active lanes (the low ``active`` bits of the mask); an ``EXIT`` that is not
  its warp's last instruction (a guarded exit that was not taken) is written
  with mask 0, as the tracer writes active & predicate lanes, since Accel-Sim
  retires the lanes of an ``EXIT``'s mask (``masked_exits``);
* the cache lines of global, local and atomic accesses: active lane ``k``
  reads 4 bytes of line ``k mod lines`` (address mode 0), so the reader
  recovers the same set of lines; shared and constant accesses get a
  contiguous 4-byte-per-lane pattern (mode 1), which the reader drops;
* PC = 16 x static instruction index (``-binary version = 70``); rows
  without one (the expander's synthetic ``EXIT``) get the PC after the
  highest index.

Not carried (the format has no place for them): predicate and uniform
registers, ``.reuse`` flags, value width and compressibility, and opcode
modifiers beyond the class.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rfmodel.errors import RfmodelError, expect_int
from rfmodel.io import atomic_path, output_set
from rfmodel.workload.ir import L1D_CLASSES, MEMORY_CLASSES, OpClass
from rfmodel.workload.trace import NONE, Trace

__all__ = ["ACCELSIM_MAX_DST", "ACCELSIM_MAX_SRC", "OPCODE_OF_CLASS", "check_traceg", "export_accelsim",
           "write_traceg"]

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


def _cta_ranges(trace: Trace):
    wc = np.asarray(trace.warp_cta, dtype=np.int64)
    if len(wc) and np.any(np.diff(wc) < 0):
        raise RfmodelError(f"trace '{trace.kernel}': warps are not grouped by CTA")
    bounds = np.flatnonzero(np.diff(wc)) + 1 if len(wc) else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], bounds, [len(wc)]]).astype(np.int64) if len(wc) else np.zeros(1, np.int64)
    return [(int(starts[i]), int(starts[i + 1])) for i in range(len(starts) - 1)]


def write_traceg(trace: Trace, path: str | Path) -> dict:
    """Write ``trace`` as one ``.traceg`` file (atomically); returns counts of what was lost.

    ``lost_lines``: rows with more cache lines than active lanes keep only as
    many lines as lanes (a lane names one line); ``lost_predicates``: rows
    whose predicate or uniform-register operands the format cannot carry;
    ``dropped_destinations`` / ``dropped_sources``: register operands beyond
    Accel-Sim's limits; ``masked_exits``: ``EXIT`` rows before the warp's last
    instruction, written with mask 0.
    """
    rz = trace.attrs.get("rz_src")
    rz = np.asarray(rz) if rz is not None and len(rz) == trace.n_instrs else None
    sidx = np.asarray(trace.sidx, dtype=np.int64)
    exit_pc = (int(sidx.max()) + 1 if len(sidx) else 0) * 16
    opcode = {int(k): v for k, v in OPCODE_OF_CLASS.items()}
    lines_of = trace.mem_line
    mem_ptr = trace.mem_ptr
    lost_lines = 0
    dropped_dst = dropped_src = masked_exits = 0
    lost_pred = int(np.count_nonzero((trace.psrc | trace.pdst) != 0)) + int(
        np.count_nonzero((trace.usrc | trace.udst) != 0)
    )
    line_bytes = int(trace.line_bytes)
    ctas = _cta_ranges(trace)
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        f.write(
            _HEADER.format(
                name=trace.kernel,
                ctas=len(ctas),
                threads=int(trace.threads_per_cta),
                shmem=int(trace.shared_mem_bytes),
                nregs=int(trace.regs_per_thread),
            )
        )
        for c, (w0, w1) in enumerate(ctas):
            f.write(f"\n#BEGIN_TB\n\nthread block = {c},0,0\n")
            for wi, w in enumerate(range(w0, w1)):
                r0, r1 = int(trace.warp_ptr[w]), int(trace.warp_ptr[w + 1])
                f.write(f"\nwarp = {wi}\ninsts = {r1 - r0}\n")
                out = []
                for i in range(r0, r1):
                    op = int(trace.op[i])
                    if op == OpClass.MISC and np.any(trace.dst[i] != NONE):
                        name = "S2R"
                    else:
                        name = opcode[op]
                    dsts = [f"R{r}" for r in trace.dst[i] if r != NONE]
                    srcs = [f"R{r}" for r in trace.src[i] if r != NONE]
                    if rz is not None and rz[i] > 0:
                        srcs += ["R255"] * int(rz[i])
                    dropped_dst += max(len(dsts) - ACCELSIM_MAX_DST, 0)
                    dropped_src += max(len(srcs) - ACCELSIM_MAX_SRC, 0)
                    dsts, srcs = dsts[:ACCELSIM_MAX_DST], srcs[:ACCELSIM_MAX_SRC]
                    active = int(trace.active[i])
                    mask = (1 << active) - 1 if active < 32 else 0xFFFFFFFF
                    if op == OpClass.EXIT and i < r1 - 1:  # not taken: no lane leaves
                        mask = 0
                        masked_exits += 1
                    pc = int(sidx[i]) * 16 if sidx[i] >= 0 else exit_pc
                    mem = "0"
                    if op in MEMORY_CLASSES:
                        if op in L1D_CLASSES:
                            ln = lines_of[mem_ptr[i] : mem_ptr[i + 1]]
                            if active > 0 and len(ln):
                                if len(ln) > active:
                                    lost_lines += 1
                                k = np.arange(active)
                                addrs = ln[k % len(ln)] + (k // len(ln)) * 4 % line_bytes
                                mem = "4 0 " + " ".join(f"0x{int(a):x}" for a in addrs)
                            elif active > 0:
                                mem = "4 1 0x0 4"
                        else:
                            mem = "4 1 0x0 4" if active > 0 else "4 0"
                    out.append(
                        f"{pc:04x} {mask:08x} {len(dsts)}"
                        + ("" if not dsts else " " + " ".join(dsts))
                        + f" {name} {len(srcs)}"
                        + ("" if not srcs else " " + " ".join(srcs))
                        + f" {mem} 0\n"
                    )
                f.write("".join(out))
            f.write("\n#END_TB\n")
    return {
        "lost_lines": lost_lines,
        "lost_predicates": lost_pred,
        "dropped_destinations": dropped_dst,
        "dropped_sources": dropped_src,
        "masked_exits": masked_exits,
    }


def check_traceg(path: str | Path) -> list[str]:
    """The rules of Accel-Sim's trace parser a ``.traceg`` file breaks (empty when it follows them): per
    instruction line at most :data:`ACCELSIM_MAX_DST` destinations and :data:`ACCELSIM_MAX_SRC` sources,
    registers written ``R<n>``, hexadecimal PC and mask, an opcode; every warp's ``insts`` count matching
    its lines, and an ``EXIT`` with lanes in its mask only as a warp's last instruction."""
    from rfmodel.io import read_text

    errors: list[str] = []
    lines = read_text(path, what="Accel-Sim trace").splitlines()
    want, got, last_exit_mask, warp_at = None, 0, 0, 0

    def close(at):
        if want is not None and got != want:
            errors.append(f"line {at}: warp has {got} instructions, header says {want}")

    for no, line in enumerate(lines, 1):
        t = line.split()
        if not t or line.startswith(("-", "#")):
            continue
        if t[0] == "warp":
            close(warp_at)
            want, got, warp_at, last_exit_mask = None, 0, no, 0
            continue
        if t[0] == "insts":
            want = int(t[-1])
            continue
        if t[0] in ("thread", "kernel"):
            continue
        try:
            int(t[0], 16), int(t[1], 16)
            nd = int(t[2])
        except (ValueError, IndexError):
            errors.append(f"line {no}: not an instruction: {line[:60]!r}")
            continue
        if nd > ACCELSIM_MAX_DST:
            errors.append(f"line {no}: {nd} destinations (at most {ACCELSIM_MAX_DST})")
        regs = t[3 : 3 + nd]
        op = t[3 + nd] if len(t) > 3 + nd else ""
        ns = int(t[4 + nd]) if len(t) > 4 + nd and t[4 + nd].isdigit() else -1
        if ns < 0 or not op:
            errors.append(f"line {no}: no opcode or source count")
            continue
        if ns > ACCELSIM_MAX_SRC:
            errors.append(f"line {no}: {ns} sources (at most {ACCELSIM_MAX_SRC})")
        regs += t[5 + nd : 5 + nd + ns]
        if any(not (r.startswith("R") and r[1:].isdigit()) for r in regs):
            errors.append(f"line {no}: a register is not R<n>: {regs}")
        if got and last_exit_mask:
            errors.append(f"line {no}: an instruction follows an EXIT with lanes {last_exit_mask:#x}")
        last_exit_mask = int(t[1], 16) if op == "EXIT" else 0
        got += 1
    close(len(lines))
    return errors


def export_accelsim(workload, outdir, *, arch: str | None = None, num_sms: int = 1, max_warps=None,
                    seed: int = 0, line_bytes: int = 128) -> dict:
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
            workload, arch=arch or DEFAULT_ARCH, num_sms=num_sms, seed=seed, max_warps=max_warps,
            line_bytes=line_bytes,
        ).trace  # fmt: skip
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
        "instructions": trace.n_instrs,
        "warps": trace.n_warps,
        "ctas": len(_cta_ranges(trace)),
        **lost,
    }
