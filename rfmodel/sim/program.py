"""Small hand-written traces: the simulator's known-answer tests and examples are built from them.

``trace_from_warps`` turns per-warp instruction lists into a :class:`Trace`::

    trace_from_warps([[("IADD3", [1], [1]), ("IADD3", [1], [1])]])   # one warp, a two-long chain

An instruction is ``(opclass, dst registers, src registers)`` or the same
with a fourth item, a dict of extras: ``lines`` (byte addresses of the cache
lines it touches), ``pdst``/``psrc`` (predicate numbers), ``active`` (lanes),
``bytes`` (the BDI-compressed size in bytes of each destination's warp value),
``smem_passes`` (a shared-memory access's passes through the banks).
``opclass`` is an :class:`~rfmodel.ir.OpClass`, its name, or a SASS
mnemonic (classified like the SASS reader does).
"""

from __future__ import annotations

import numpy as np

from rfmodel.ir import OpClass
from rfmodel.trace import MAX_DST, MAX_SRC, Trace, compress_code, empty_columns


def _op(x) -> int:
    if isinstance(x, OpClass | int | np.integer):
        return int(x)
    name = str(x)
    if name.upper() in OpClass.__members__:
        return int(OpClass[name.upper()])
    from rfmodel.workload.accelsim import classify_opcode

    return int(classify_opcode(name))


def trace_from_warps(
    warps,
    *,
    warps_per_cta: int = 1,
    regs_per_thread: int = 32,
    shared_mem_bytes: int = 0,
    line_bytes: int = 128,
    kernel: str = "program",
) -> Trace:
    """A trace of the given warps; consecutive groups of ``warps_per_cta`` warps form a CTA."""
    rows = [ins for w in warps for ins in w]
    n = len(rows)
    cols = empty_columns(n)
    mem_ptr = np.zeros(n + 1, dtype=np.int64)
    lines: list[int] = []
    for i, ins in enumerate(rows):
        opc, dsts, srcs = ins[0], list(ins[1]), list(ins[2])
        extra = ins[3] if len(ins) > 3 else {}
        if len(dsts) > MAX_DST or len(srcs) > MAX_SRC:
            raise ValueError(f"instruction {i}: at most {MAX_DST} destinations and {MAX_SRC} sources")
        cols["op"][i] = _op(opc)
        cols["sidx"][i] = i
        cols["dst"][i, : len(dsts)] = dsts
        cols["src"][i, : len(srcs)] = srcs
        cols["pdst"][i] = sum(1 << p for p in extra.get("pdst", ()))
        cols["psrc"][i] = sum(1 << p for p in extra.get("psrc", ()))
        cols["active"][i] = extra.get("active", 32)
        cols["smem_passes"][i] = extra.get("smem_passes", 0)
        for k, nbytes in enumerate(extra.get("bytes", ())):
            cols["compress"][i, k] = compress_code(nbytes)
        ln = sorted({int(a) // line_bytes * line_bytes for a in extra.get("lines", ())})
        lines += ln
        mem_ptr[i + 1] = mem_ptr[i] + len(ln)
    warp_ptr = np.zeros(len(warps) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in warps], out=warp_ptr[1:])
    warp_cta = (np.arange(len(warps)) // max(warps_per_cta, 1)).astype(np.int32)
    return Trace(
        kernel=kernel,
        warp_ptr=warp_ptr,
        warp_cta=warp_cta,
        mem_ptr=mem_ptr,
        mem_line=np.array(lines, dtype=np.int64),
        regs_per_thread=regs_per_thread,
        threads_per_cta=32 * warps_per_cta,
        ctas=int(warp_cta[-1]) + 1 if len(warps) else 0,
        shared_mem_bytes=shared_mem_bytes,
        line_bytes=line_bytes,
        attrs={"source": "program"},
        **cols,
    )
