"""The static kernel a trace was expanded from: rebuilt from the trace's ``kernel_source`` when it can be.

Designs whose compiler pass works on the static program (register-intervals, reuse hints, operand slots)
find it here; kernels built in memory (tests, notebooks) are made known with :func:`register_kernel`.
"""

from __future__ import annotations

import functools

import numpy as np

from rfmodel.trace import NONE

#: kernels built in memory (tests, notebooks) that traces may name: (source, name) -> Kernel
_KNOWN_KERNELS: dict = {}


def register_kernel(kernel) -> None:
    """Make an in-memory static kernel known, so that traces expanded from it get its intervals.

    A trace names its kernel by ``attrs['kernel_source']`` and ``Trace.kernel``; built-in SASS kernels and
    synthetic presets are rebuilt from those, other kernels must be registered here.
    """
    _KNOWN_KERNELS[(str(kernel.source), kernel.name)] = kernel


@functools.lru_cache(maxsize=8)
def _load_static(source: str, name: str):
    """The static kernel a trace was expanded from (None when it cannot be rebuilt)."""
    try:
        if source.startswith("synthetic:"):
            import json

            from rfmodel.workload.synthetic import SYNTHETIC_PRESETS, generate

            meta = json.loads(source[len("synthetic:") :])
            pname = meta.get("params", {}).get("name")
            if pname in SYNTHETIC_PRESETS:
                k, _ = generate(SYNTHETIC_PRESETS[pname], seed=int(meta.get("seed", 0)))
                return k if k.source == source else None
            return None
        from rfmodel.workload.suite import path_exists

        source = packaged_source(source)
        if not path_exists(source):
            return None
        from rfmodel.workload.cubin import read_kernel_file

        for k in read_kernel_file(source):
            if k.name == name:
                return k
    except Exception:  # noqa: BLE001 - any failure means: form intervals on the trace instead
        return None
    return None


#: where a shipped kernel's listing lives inside the package (a trace names it by its absolute path)
PACKAGED_KERNELS = "/rfmodel/workload/kernels/"


def packaged_source(source: str) -> str:
    """``source`` as this package's own file where it names a shipped kernel's listing of another copy of
    the package (a cached trace keeps the absolute path of the checkout or install that made it; that
    copy may be gone or hold another version, and a design's compiler pass would then fall back to the
    trace, or read the wrong listing: ``corf`` on ``rk4_duffing_dp``, `volta-v100`, simulated 137,515
    cycles from a trace made in a deleted checkout, 137,383 from a fresh one)."""
    i = source.replace("\\", "/").rfind(PACKAGED_KERNELS)
    if i < 0:
        return source
    from rfmodel.workload.suite import _kernels_dir

    return str(_kernels_dir().joinpath(*source.replace("\\", "/")[i + len(PACKAGED_KERNELS) :].split("/")))


def static_kernel(trace, kernel=None):
    """The trace's static kernel if it can be loaded (or is ``kernel``, the one the workload came with) and
    its instructions match the trace; else None."""
    src = str(trace.attrs.get("kernel_source", ""))
    k = kernel
    if k is None and not src:
        return None
    if k is None:
        k = _KNOWN_KERNELS.get((src, trace.kernel))
    if k is None:
        k = _load_static(src, trace.kernel)
    if k is None or len(trace.sidx) == 0:
        return None
    sidx = np.asarray(trace.sidx)
    if sidx.min() < 0 or sidx.max() >= len(k.instrs):
        return None
    # every step-th row (about 2,000): its operation class is its instruction's, and the registers it names
    # (the non-NONE sources, in order) are the first of the instruction's sources below 255
    rows = np.arange(0, len(sidx), max(1, len(sidx) // 2000))
    si = sidx[rows].astype(np.int64)
    src = np.asarray(trace.src)[rows]
    width = src.shape[1]
    used, at = np.unique(si, return_inverse=True)  # the static instructions the sampled rows execute
    want = np.full((len(used), width), -1, dtype=np.int64)
    ops = np.empty(len(used), dtype=np.int64)
    for i, j in enumerate(used.tolist()):
        ins = k.instrs[j]
        regs = [x for x in ins.src if x < 255][:width]
        want[i, : len(regs)] = regs
        ops[i] = int(ins.op_class)
    named = src != NONE
    first = np.argsort(~named, axis=1, kind="stable")  # each row's named registers first, in their order
    got = np.take_along_axis(src.astype(np.int64), first, axis=1)
    named = np.take_along_axis(named, first, axis=1)
    if np.any(named & (got != want[at])) or np.any(np.asarray(trace.op)[rows].astype(np.int64) != ops[at]):
        return None
    return k
