"""``rfmodel workload info``: a workload's static and dynamic summary."""

from __future__ import annotations

import warnings

import numpy as np

from rfmodel.ir import N_OPCLASSES, OpClass
from rfmodel.trace import NONE
from rfmodel.workload.sass.opcodes import classed_by_name
from rfmodel.workload.suite import DEFAULT_ARCH, load_workload

#: the sample of a workload whose warps exceed the expansion limit: warps, and instructions per warp
SAMPLE_WARPS = 8
SAMPLE_WARP_INSTRS = 100_000


def workload_info(
    ref: str, *, arch: str = DEFAULT_ARCH, seed: int = 0, max_warps: int = 64, values: bool = False
) -> dict:
    """Registers, instructions, blocks, loops, op mix and reuse distances of a workload; with
    ``values``, the value statistics of :func:`rfmodel.workload.values.value_stats` too.

    Dynamic figures come from the trace of up to ``max_warps`` warps (whole CTAs): executed for a
    built-in kernel the executor runs, else expanded (``trace_source`` says which).  A warp that would execute
    more than the expansion limit is cut there: the static figures stay exact, the dynamic ones say so
    (``dynamic_truncated``) and name the loops whose trip counts drove the count (``loop_drivers``).
    """
    from rfmodel.compiler.cfg import function_names, natural_loops
    from rfmodel.compiler.reuse import reuse_distances
    from rfmodel.workload.expand import ExpansionLimitError

    truncated = None
    try:
        wl = load_workload(ref, arch=arch, seed=seed, max_warps=max_warps)
    except ExpansionLimitError as e:
        with warnings.catch_warnings():  # a sample: the first warps, cut early
            warnings.simplefilter("ignore")
            wl = load_workload(
                ref,
                arch=arch,
                seed=seed,
                max_warps=min(max_warps, SAMPLE_WARPS),
                on_cap="truncate",
                max_warp_instrs=SAMPLE_WARP_INSTRS,
            )
        truncated = str(e)
    t = wl.trace
    info: dict = {"workload": wl.name, "source": wl.source}
    info.update(_listing_kernels(ref, wl))
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
        unknown = classed_by_name(k)
        if unknown:  # classed by their names' letters (rfmodel/workload/sass/opcodes.py), not by a table
            info["unknown_opcodes"] = [
                {"instruction": i, "opcode": op, "classed_as": c} for i, op, c in unknown
            ]
    else:
        info["registers_per_thread"] = t.regs_per_thread
    if truncated is not None:
        info["dynamic_truncated"] = (
            f"{truncated}; the dynamic figures below are a sample: {SAMPLE_WARPS} warps (whole CTAs) cut "
            f"at {SAMPLE_WARP_INSTRS} instructions. Set the trip "
            f"counts of the loops in loop_drivers (expand.Profile(trip_counts={{latch: n}}), or a built-in "
            f"kernel's manifest loop_trip_counts)"
        )
        if k is not None:
            info["loop_drivers"] = loop_drivers(k, wl)
    counts = np.bincount(t.op.astype(np.int64), minlength=N_OPCLASSES)
    info["trace_source"] = wl.attrs.get("trace_source", t.attrs.get("source", ""))
    info["dynamic_instructions"] = int(t.n_instrs)
    info["warps"] = int(t.n_warps)
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
    if values:
        from rfmodel.workload.values import value_stats

        info["values"] = value_stats(t)
    return info


def _listing_kernels(ref, wl) -> dict:
    """For a SASS listing (or a cubin) of several kernels named without a choice: ``kernels``, each
    kernel's index, mangled and demangled name (:func:`~rfmodel.workload.suite.kernel_table`), and
    ``kernel_choice``, which says that the figures are of the first and how to name another; ``{}``
    otherwise."""
    from rfmodel.workload.cubin import read_kernel_file
    from rfmodel.workload.manifest import manifest
    from rfmodel.workload.suite import (
        CHOICE_FORMS,
        KERNEL_INDEX,
        SYNTHETIC_PREFIX,
        kernel_table,
        path_exists,
        split_kernel_choice,
    )

    ref = str(ref)
    if wl.kernel is None or ref.startswith(SYNTHETIC_PREFIX) or ref in manifest()["kernels"]:
        return {}
    path, which = split_kernel_choice(ref)
    if which or not path_exists(path):
        return {}
    names = [k.name for k in read_kernel_file(path)]
    if len(names) < 2:
        return {}
    return {
        "kernel_choice": (
            f"none given: the figures below are of {KERNEL_INDEX}0, the first of {len(names)} kernels; "
            f"pick another as '{path}:<kernel>' ({CHOICE_FORMS})"
        ),
        "kernels": kernel_table(names),
    }


def loop_drivers(kernel, wl, top: int = 5) -> dict:
    """The loops that multiply a warp's instruction count most: ``latch instruction -> "trip T, depth D,
    iterations I"`` with ``I`` the product of the trip counts of the loop and the loops around it (the
    expansion's defaults or the kernel's profile), largest first."""
    from rfmodel.compiler.cfg import function_names, natural_loops
    from rfmodel.workload.expand import Profile
    from rfmodel.workload.suite import builtin_profile

    profile = builtin_profile(kernel) or Profile()
    loops = {lp.header: lp for f in function_names(kernel) for lp in natural_loops(kernel, f)}

    def trip(lp):
        latch = kernel.blocks[lp.latches[0]].end - 1
        return latch, int(profile.trip_counts.get(latch, profile.default_trip_count))

    rows = []
    for lp in loops.values():
        latch, t = trip(lp)
        total, up = t, lp.parent
        while up is not None and up in loops:
            total *= trip(loops[up])[1]
            up = loops[up].parent
        rows.append((total, latch, t, lp.depth))
    rows.sort(reverse=True)
    return {
        f"instruction {latch}": f"trip {t}, depth {d}, iterations {total}"
        for total, latch, t, d in rows[:top]
    }
