"""``rfmodel workload info``: a workload's static and dynamic summary."""

from __future__ import annotations

import numpy as np

from rfmodel.workload.ir import N_OPCLASSES, OpClass
from rfmodel.workload.suite import DEFAULT_ARCH, load_workload
from rfmodel.workload.trace import NONE


def workload_info(ref: str, *, arch: str = DEFAULT_ARCH, seed: int = 0, max_warps: int = 64) -> dict:
    """Registers, instructions, blocks, loops, op mix and reuse distances of a workload.

    Dynamic figures come from expanding up to ``max_warps`` warps (whole CTAs).
    """
    from rfmodel.compiler.cfg import function_names, natural_loops
    from rfmodel.compiler.reuse import reuse_distances

    wl = load_workload(ref, arch=arch, seed=seed, max_warps=max_warps)
    t = wl.trace
    info: dict = {"workload": wl.name, "source": wl.source}
    k = wl.kernel
    if k is not None:
        loops = [lp for f in function_names(k) for lp in natural_loops(k, f)]
        info.update(
            {
                "kernel": k.name,
                "arch": k.arch or arch,
                "registers_per_thread": k.regs_per_thread,
                "static_instructions": k.n_instrs,
                "basic_blocks": len(k.blocks),
                "functions": len(k.functions) or 1,
                "natural_loops": len(loops),
                "max_loop_depth": max((lp.depth for lp in loops), default=0),
                "threads_per_cta": k.threads_per_cta,
                "ctas": k.ctas,
                "shared_mem_bytes": k.shared_mem_bytes,
            }
        )
    else:
        info["registers_per_thread"] = t.regs_per_thread
    counts = np.bincount(t.op.astype(np.int64), minlength=N_OPCLASSES)
    info["dynamic_instructions"] = int(t.n_instrs)
    info["warps_expanded"] = int(t.n_warps)
    info["op_mix"] = {
        OpClass(c).name.lower(): round(float(counts[c]) / max(t.n_instrs, 1), 4)
        for c in range(N_OPCLASSES)
        if counts[c]
    }
    info["gpr_reads_per_instr"] = float((t.src != NONE).sum()) / max(t.n_instrs, 1)
    info["gpr_writes_per_instr"] = float((t.dst != NONE).sum()) / max(t.n_instrs, 1)
    rd = reuse_distances(t.src, t.dst, t.warp_ptr)
    finite = rd[rd >= 0]
    info["register_reuse_distance"] = {
        "reuses": int(len(finite)),
        "first_touches": int((rd < 0).sum()),
        "median": float(np.median(finite)) if len(finite) else float("nan"),
        "p90": float(np.percentile(finite, 90)) if len(finite) else float("nan"),
        "fraction_le_8": float((finite <= 8).mean()) if len(finite) else float("nan"),
    }
    return info
