"""PolyBench-ACC (CUDA) kernels of the papers' benchmarks: recipes and numpy references.

The originals fix their extents at compile time (the standard dataset); ours keep the originals' row
strides as constants (they shape the address arithmetic and the register count) and take the extents as
parameters, so the default problem is a corner of the standard layout and ``scale`` grows it to the full
standard size (``scale`` 8 for gemm).
"""

from __future__ import annotations

import numpy as np

from rfmodel.workload.execute.recipe import Recipe, pointers, scalars

from ._common import EPS32, Registry, check, manifest_entry, size, uniform_arrays

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()

#: the standard dataset's extent, and the row stride of every matrix of the kernels below
STD = 512


@FAMILY.recipe(8, "standard 512x512x512")
def _pb_gemm(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """gemm_kernel's launch: 32 x 8 threads, one per element of C, a grid over (columns, rows)."""
    assert manifest_entry("pb_gemm")["threads_per_cta"] == 256
    n = min(size(64, scale, 8), STD)
    ni = nj = nk = n
    block = (32, 8)
    grid = (-(-nj // 32), -(-ni // 8))
    alpha, beta = 1.5, 1.2  # the original's constants

    def view(a, rows):
        return a.astype(np.float64).reshape(rows, STD)

    def ref(ins, sc):
        A, B, C = view(ins["A"], STD)[:ni, :nk], view(ins["B"], STD)[:nk, :nj], view(ins["C"], STD)
        out = C.copy()
        out[:ni, :nj] = np.float64(np.float32(beta)) * C[:ni, :nj] + np.float64(np.float32(alpha)) * (A @ B)
        return {"C": out}

    def tol(ins):
        A, B = np.abs(view(ins["A"], STD)[:ni, :nk]), np.abs(view(ins["B"], STD)[:nk, :nj])
        C = np.abs(view(ins["C"], STD))
        bound = np.zeros((STD, STD))
        bound[:ni, :nj] = (2 * nk + 2) * EPS32 * (abs(alpha) * (A @ B) + abs(beta) * C[:ni, :nj])
        return 0.0, bound.reshape(-1)

    return Recipe(
        kernel="pb_gemm",
        grid=grid,
        block=block,
        params=[
            *scalars("i32", ni=ni, nj=nj, nk=nk),
            *scalars("f32", alpha=alpha, beta=beta),
            *pointers("A", "B", "C"),
        ],
        arrays=uniform_arrays(("A", "B", "C"), (STD * STD,)),
        seed=40,
        **check("C", ref, tol),
    )
