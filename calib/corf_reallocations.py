"""Where CORF's reallocations come from (claim C-08 of "CORF: Coalescing Operand Register File for GPUs":
under 0.3 % of written values), on the study's SM and kernels (docs/validation.md, "The papers' claims").

    python calib/corf_reallocations.py                         # CORF, the paper's SM, every kernel, 96 warps
    python calib/corf_reallocations.py --config CORF++ --max-warps 32 --workload rd_pathfinder dnn_conv_gemm

With virtualization a register's slices are freed at its value's last read (the compiler's last-read bits)
or at the write of a value nobody reads, so a value is written over a register that still holds slices only
where the compiler's liveness keeps the old value alive; it is a reallocation when the new value is wider
than those slices.  Each kernel is simulated as `rfmodel study corf` runs it (the design's preset, its
compiler pass, the paper's SM) and each warp's rows are then replayed in program order three times, with
the last-read bits

* ``compiler``: of the compiler's liveness, as the simulator has them (the replay must count what the
  simulator counted: checked per kernel);
* ``guard kills``: of the same liveness with every guarded write taken to end the register's old value (the
  compiler keeps a value alive across ``@P0 MOV R4, ...``, since where the guard is false the old value
  stays);
* ``own reads``: of each warp's own rows (the trace's last read of a value before its register is written
  again, and the values it never reads), the most that any liveness could free on the path the warp took.

Per kernel the share of written values reallocated in each, and the reallocations by whether the value
written over was read at all (a register initialized and then overwritten by a guarded load, whose
merged value is as wide as the load's) or read without a last-read bit.  The mean of the kernels' shares
is the study's figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODES = ("compiler", "guard kills", "own reads")


def replay(warp_ptr, src, dst, width, dead, dead_def) -> tuple[int, int, int]:
    """``(reallocations, of them over a value never read, values written)`` of the rows in program order:
    a source slot with its ``dead`` bit frees its register, a write over a register still holding fewer
    bytes than the new value's width class (0: unknown, 4 bytes) reallocates it, a destination slot with its
    ``dead_def`` bit (in write order) frees it once written.  The simulator's ``corf_operand`` and
    ``corf_write`` on one warp's registers (the order of the warps does not change what a warp holds)."""
    return _replay_warps(
        np.asarray(warp_ptr, dtype=np.int64),
        np.asarray(src, dtype=np.int64),
        np.asarray(dst, dtype=np.int64),
        np.asarray(width, dtype=np.int64),
        np.asarray(dead, dtype=np.int64),
        np.asarray(dead_def, dtype=np.int64),
    )


@njit(cache=True)
def _replay_warps(warp_ptr, src, dst, width, dead, dead_def):
    none = 255
    held = np.zeros(256, dtype=np.int64)  # bytes a register's slices hold (0: unmapped)
    reads = np.zeros(256, dtype=np.int64)  # reads of the value it holds
    realloc = unread = values = 0
    for w in range(warp_ptr.shape[0] - 1):
        held[:] = 0
        reads[:] = 0
        for r in range(warp_ptr[w], warp_ptr[w + 1]):
            for k in range(src.shape[1]):
                g = src[r, k]
                if g == none:
                    continue
                reads[g] += 1
                if (dead[r] >> k) & 1:
                    held[g] = 0
            n = 0
            for k in range(dst.shape[1]):
                g = dst[r, k]
                if g == none:
                    continue
                values += 1
                v = width[r, k]
                if v <= 0 or v > 4:
                    v = 4
                if held[g] > 0 and v > held[g]:
                    realloc += 1
                    if reads[g] == 0:
                        unread += 1
                    held[g] = v
                elif held[g] == 0:
                    held[g] = v
                reads[g] = 0
                if (dead_def[r] >> n) & 1:
                    held[g] = 0
                n += 1
    return realloc, unread, values


def last_read_bits(trace, kernel) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``trace``, the compiler's last-read bits of ``kernel`` and its never-read destinations
    (bit n: the n-th written register), as the design's setup packs them (``_row_words``)."""
    from rfmodel.designs.corf import MAX_DST, _row_words, dead_def_registers, value_dead_bits

    n = len(trace.src)
    per_static = value_dead_bits(kernel)
    sidx = np.asarray(trace.sidx, dtype=np.int64)
    dead = per_static[np.clip(sidx, 0, len(per_static) - 1)] * (sidx >= 0)
    words = _row_words(trace, dead, dead_def_registers(kernel)).reshape(n, 2)[:, 1]
    dead_def = np.zeros(n, dtype=np.int64)
    for k in range(MAX_DST):
        dead_def |= ((words >> (52 + k)) & 1) << k
    return (words >> 16) & 1023, dead_def


def kernel_row(workload: str, config: str, max_warps: int | None) -> dict:
    """One kernel: the simulator's reallocations and each mode's replay."""
    from rfmodel.compiler.liveness import trace_dead_masks
    from rfmodel.designs.base import get_design
    from rfmodel.errors import RfmodelError
    from rfmodel.sim.engine import simulate_trace
    from rfmodel.studies.corf import paper_sm
    from rfmodel.workload.static import static_kernel
    from rfmodel.workload.suite import load_workload

    sm = paper_sm()
    d = get_design("corf")
    params = d.preset(config)
    wl = load_workload(workload, num_sms=sm.num_sms, max_warps=max_warps, line_bytes=sm.l1d.line_bytes)
    kernel = static_kernel(wl.trace, wl.kernel)
    if kernel is None:
        raise RfmodelError(f"{workload}: no static kernel to run the compiler's liveness on")
    run = simulate_trace(wl.trace, sm, d, params, program=d.program_for(wl.trace, params, sm, wl.kernel))
    trace = run.setup.trace if run.setup.trace is not None else wl.trace  # with the metadata rows, if run
    args = (trace.warp_ptr, trace.src, trace.dst, trace.width)
    unguarded = dataclasses.replace(
        kernel, instrs=[dataclasses.replace(i, guard=None) for i in kernel.instrs]
    )
    own = trace_dead_masks(np.asarray(trace.warp_ptr, np.int64), trace.src, trace.dst)
    row = {"workload": workload, "sim": int(run.counts["reallocations"]), "values": int(run.counts["values"])}
    for mode, bits in zip(
        MODES, (last_read_bits(trace, kernel), last_read_bits(trace, unguarded), own), strict=True
    ):
        row[mode] = replay(*args, *bits)
    if row["compiler"][0] != row["sim"] or row["compiler"][2] != row["values"]:
        raise RfmodelError(
            f"{workload}: the replay counts {row['compiler'][0]} reallocations of {row['compiler'][2]} "
            f"values, the simulator {row['sim']} of {row['values']}: the replay no longer follows the design"
        )
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="CORF", help="the corf design's preset (CORF or CORF++)")
    ap.add_argument("--max-warps", type=int, default=96, help="keep that many warps' CTAs (the study's: 96)")
    ap.add_argument("--workload", nargs="+", default=None, help="default: the CORF paper's kernels")
    a = ap.parse_args(argv)
    from rfmodel.designs.base import get_design
    from rfmodel.errors import RfmodelError
    from rfmodel.studies.common import check_inputs
    from rfmodel.workload.suite import paper_workloads

    try:
        if not get_design("corf").preset(a.config).get("virtualize"):
            raise RfmodelError(f"--config {a.config} does not virtualize registers: it reallocates nothing")
        if a.max_warps is not None and a.max_warps < 1:
            raise RfmodelError(f"--max-warps must be at least 1 (got {a.max_warps})")
        workloads = a.workload or paper_workloads("corf")
        check_inputs(workloads)
        rows = []
        print(f"{'kernel':24s} {'values':>9s}  " + "  ".join(f"{m:>22s}" for m in MODES), flush=True)
        for w in workloads:
            r = kernel_row(w, a.config, a.max_warps)
            rows.append(r)
            cells = [f"{x[0]:7d} ({100 * x[0] / max(x[2], 1):5.2f} %, {x[1]:5d})" for x in map(r.get, MODES)]
            print(f"{w:24s} {r['values']:9d}  " + "  ".join(cells), flush=True)
    except RfmodelError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("(each mode: reallocations (share of written values, of them over a value never read))")
    for m in MODES:
        shares = [r[m][0] / max(r[m][2], 1) for r in rows]
        total = sum(r[m][0] for r in rows)
        unread = sum(r[m][1] for r in rows)
        values = sum(r[m][2] for r in rows)
        print(
            f"{m:12s}: mean of the kernels' shares {100 * np.mean(shares):.2f} %, pooled "
            f"{100 * total / max(values, 1):.3f} % ({total} of {values} values; {unread} over a value never "
            f"read), kernels with any: {sum(s > 0 for s in shares)} of {len(rows)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
