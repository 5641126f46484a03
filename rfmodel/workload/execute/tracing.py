"""Executed traces: the dynamic per-warp trace of a kernel as the executor runs it.

:func:`executed_trace` runs a kernel with a launch recipe and records the first ``ctas`` CTAs
of the launch (one SM's share of the grid), warp-instruction by warp-instruction.  The trace
has the program's own control flow (loop trips, branch outcomes, divergence: the lanes of each
side of a branch are one row each), the executing lanes of every row (``active``), the cache
lines of every global and local access from the lanes' real addresses, and the value
attributes of every written register: its width class and its BDI compressed size.

Value attributes (``Trace.width`` / ``Trace.compress``, one per written register):

* **width class**: the number of bytes (1-4) that hold the value of every one of the warp's
  32 lanes once sign-extended, as the register-packing width detection of "CORF: Coalescing
  Operand Register File for GPUs" unpacks narrow values.  Measured on the register after the
  write, all 32 lanes (lanes the instruction did not write keep their earlier values, which
  the packed register still holds).
* **BDI size**: the 128-byte warp register compressed with the three fixed base-delta
  encodings that "Architecting Energy-efficient STT-RAM Based Register File on GPGPUs via
  Delta Compression" takes from Warped-Compression: a 4-byte base (lane 0) and a signed delta
  of 0, 1 or 2 bytes for each of the 32 lanes, i.e. 4, 36 or 68 bytes; a value none of them
  fits is stored as 128 bytes.  (No implicit zero base, unlike cache BDI.)

Local memory is placed as the hardware interleaves it (word ``k`` of the 32 lanes of a warp in
one 128-byte row, :data:`~rfmodel.workload.execute.layout.LOCAL_TRACE_BASE`); global accesses
use the device addresses of the recipe's arrays.  The lines of an access are the distinct
``line_bytes`` lines of its lanes' first and last bytes, ascending.
"""

from __future__ import annotations

import numpy as np

from rfmodel.ir import Kernel
from rfmodel.trace import COMPRESS_UNKNOWN, MAX_DST, NONE, Trace, compress_code, kernel_trace
from rfmodel.workload.execute.decode import decode_kernel
from rfmodel.workload.execute.errors import ExecutionError
from rfmodel.workload.execute.recipe import Recipe, run_recipe

__all__ = ["executed_trace"]


def executed_trace(
    kernel: Kernel,
    recipe: Recipe,
    *,
    ctas: int,
    line_bytes: int = 128,
    max_warp_instructions: int = 200_000_000,
) -> Trace:
    """Execute ``kernel`` with ``recipe`` and return the trace of its first ``ctas`` CTAs.

    The launch stops after those CTAs; ``ctas`` larger than the recipe's grid is an error (a
    larger ``scale`` of the recipe gives more CTAs)."""
    from rfmodel.workload.expand import static_columns

    grid = int(np.prod(recipe.grid))
    if not isinstance(ctas, int | np.integer) or ctas < 1:
        raise ExecutionError(f"{kernel.name}: ctas to record must be an integer >= 1, got {ctas!r}")
    if ctas > grid:
        raise ExecutionError(
            f"{kernel.name}: {ctas} CTAs to record, but the recipe's grid has {grid} (use a larger scale)"
        )
    if line_bytes < 4 or line_bytes & (line_bytes - 1):
        raise ExecutionError(f"line_bytes: expected a power of two >= 4, got {line_bytes!r}")
    dec = decode_kernel(kernel)
    st = static_columns(kernel)
    sdst = st["dst"][: kernel.n_instrs].astype(np.int64)
    res, _ = run_recipe(
        dec,
        recipe,
        max_warp_instructions=max_warp_instructions,
        record=int(ctas),
        record_dst=sdst,
        line_bytes=int(line_bytes),
    )
    nthreads = int(np.prod(recipe.block))
    nw = -(-nthreads // 32)
    # the columns are filled CTA by CTA, each CTA's record dropped once copied (memory: the trace
    # plus the records not yet copied, 19 bytes a row)
    recs = res.recorded
    n_rows = sum(len(r.sidx) for r in recs)
    n_lines = sum(len(r.lines) for r in recs)
    cols = {k: np.empty((n_rows, *v.shape[1:]), v.dtype) for k, v in st.items()}
    warp_ptr = np.zeros(len(recs) * nw + 1, np.int64)
    mem_ptr = np.zeros(n_rows + 1, np.int64)
    mem_line = np.empty(n_lines, np.int64)
    row = line = 0
    for c in range(len(recs)):
        r = recs[c]
        recs[c] = None
        order = np.argsort(r.warp, kind="stable")
        sidx = r.sidx[order]
        m = len(sidx)
        out = slice(row, row + m)
        for k, col in st.items():
            if k not in ("width", "compress", "active", "smem_passes"):
                np.take(col, sidx, axis=0, out=cols[k][out])
        cols["active"][out] = np.bitwise_count(r.mask[order])
        cols["smem_passes"][out] = r.smem_passes[order]
        has = cols["dst"][out] != NONE
        cols["width"][out] = np.where(has, r.width[order, :MAX_DST], 0)
        cols["compress"][out] = np.where(has, compress_code(r.bdi[order, :MAX_DST]), COMPRESS_UNKNOWN)
        np.cumsum(np.bincount(r.warp, minlength=nw), out=warp_ptr[1 + c * nw : 1 + (c + 1) * nw])
        warp_ptr[1 + c * nw : 1 + (c + 1) * nw] += row
        count = r.n_lines.astype(np.int64)
        start = np.cumsum(count) - count
        cnt = count[order]
        np.cumsum(cnt, out=mem_ptr[row + 1 : row + m + 1])
        mem_ptr[row + 1 : row + m + 1] += line
        total = int(cnt.sum())
        if total:
            first = np.repeat(start[order], cnt)
            within = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            mem_line[line : line + total] = r.lines[first + within]
        row += m
        line += total
        del r
    attrs = {
        "recipe": recipe.kernel,
        "recipe_seed": int(recipe.seed),
        "recipe_grid": list(recipe.grid),
        "launch_ctas": grid,
        "values": "executed",
    }
    warp_cta = np.repeat(np.arange(len(recs), dtype=np.int32), nw)
    cols.update(warp_ptr=warp_ptr, warp_cta=warp_cta, mem_ptr=mem_ptr, mem_line=mem_line)
    trace = kernel_trace(
        kernel, "execute", attrs, line_bytes, threads_per_cta=nthreads, ctas=len(recs), **cols
    )
    trace.validate()
    return trace
