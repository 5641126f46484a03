"""Launch recipes and numpy references of the built-in kernels.

Each recipe takes ``scale`` (the problem size relative to the default, small one)
and ``ctas`` (the grid; default: the manifest's, shrunk to what the problem needs).
Floating-point outputs are compared with a tolerance derived from the
computation: a float32 result of ``m`` rounded operations on terms whose
magnitudes sum to ``S`` lies within ``m * 2**-24 * S`` of the exact value (the
reference is computed in float64); integers must match exactly.
"""

from __future__ import annotations

import numpy as np

from rfmodel.errors import UnknownNameError
from rfmodel.workload.execute.launch import Param
from rfmodel.workload.execute.recipe import ArraySpec, Recipe

__all__ = ["BUILTIN_RECIPES", "builtin_recipe"]

EPS32 = 2.0**-24


def _manifest(name: str) -> dict:
    from rfmodel.workload.suite import manifest

    return manifest()["kernels"][name]


def _shared(name: str) -> int:
    """Static shared memory of the kernel (the manifest's resources; the same on every arch)."""
    return max(r.get("shared", 0) for r in _manifest(name)["resources"].values())


def _size(base: int, scale: float, lo: int = 1) -> int:
    return max(lo, int(round(base * scale)))


# ---- saxpy: y = a*x + y (one FFMA per element: exactly the float32 rounding of the float64 value)
def _saxpy(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    m = _manifest("saxpy")
    n = _size(5000, scale)
    block = m["threads_per_cta"]
    grid = ctas or min(m["ctas"], -(-n // block) // 2 + 1)

    def ref(ins, sc):
        a = np.float64(np.float32(sc["a"]))
        return {"y": (a * ins["x"].astype(np.float64) + ins["y"]).astype(np.float32)}

    return Recipe(
        kernel="saxpy",
        grid=(grid,),
        block=(block,),
        params=[
            Param("n", "i32", n),
            Param("a", "f32", 1.75),
            Param("x", "ptr", array="x"),
            Param("y", "ptr", array="y"),
        ],
        arrays={"x": ArraySpec("float32", (n,), "normal"), "y": ArraySpec("float32", (n,), "normal")},
        outputs=["y"],
        seed=1,
        reference=ref,
        tolerance={"y": (0.0, 0.0)},  # a fused multiply-add rounds once: bit-exact
    )


# ---- reduce_sum: one partial sum per CTA
def _reduce_sum(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    m = _manifest("reduce_sum")
    block = m["threads_per_cta"]
    n = _size(20000, scale)
    grid = ctas or min(m["ctas"], max(1, n // (2 * block * 4)))

    def cta_of(n_):
        i = np.arange(n_)
        return (i % (2 * block * grid)) // (2 * block)

    def ref(ins, sc):
        x = ins["in"].astype(np.float64)
        return {"partial": np.bincount(cta_of(x.size), weights=x, minlength=grid)}

    def tol(ins):
        # per thread ~n/(2*block*grid) serial adds, then 8 tree/shuffle levels
        mags = np.bincount(cta_of(n), weights=np.abs(ins["in"].astype(np.float64)), minlength=grid)
        steps = n / (2 * block * grid) + 10
        return 0.0, steps * EPS32 * mags

    return Recipe(
        kernel="reduce_sum",
        shared_bytes=_shared("reduce_sum"),
        grid=(grid,),
        block=(block,),
        params=[
            Param("n", "i32", n),
            Param("in", "ptr", array="in"),
            Param("partial", "ptr", array="partial"),
        ],
        arrays={
            "in": ArraySpec("float32", (n,), "normal"),
            "partial": ArraySpec("float32", (grid,), "zeros"),
        },
        outputs=["partial"],
        seed=2,
        reference=ref,
        tolerance={"partial": tol},
    )


# ---- histogram256: byte histogram of 32-bit words, shared-memory atomics then global atomics
def _histogram256(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    m = _manifest("histogram256")
    block = m["threads_per_cta"]
    n = _size(6000, scale)
    grid = ctas or min(m["ctas"], 6)

    def ref(ins, sc):
        b = ins["data"].view(np.uint8).astype(np.int64)
        return {"hist": np.bincount(b, minlength=256).astype(np.uint32)}

    return Recipe(
        kernel="histogram256",
        shared_bytes=_shared("histogram256"),
        grid=(grid,),
        block=(block,),
        params=[
            Param("nwords", "i32", n),
            Param("data", "ptr", array="data"),
            Param("hist", "ptr", array="hist"),
        ],
        arrays={
            "data": ArraySpec("uint32", (n,), "randint", 0, 2**32),
            "hist": ArraySpec("uint32", (256,), "zeros"),
        },
        outputs=["hist"],
        seed=3,
        reference=ref,
    )


# ---- spmv_csr: one warp per row, lanes stride over the row's nonzeros, shuffle reduction
def _spmv_csr(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    m = _manifest("spmv_csr")
    block = m["threads_per_cta"]
    rows = _size(120, scale)
    ncols = _size(200, scale)
    grid = ctas or min(m["ctas"], 8)
    rng = np.random.default_rng(4)
    # row lengths from 0 (empty rows) to 80 (more than two rounds of 32 lanes)
    lengths = rng.integers(0, 81, rows)
    rowptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(rowptr[-1])
    cols = np.concatenate([np.sort(rng.choice(ncols, size=k, replace=False)) for k in lengths]).astype(
        np.int32
    )

    def ref(ins, sc):
        y = np.zeros(rows)
        v = ins["vals"].astype(np.float64)
        x = ins["x"].astype(np.float64)
        for r in range(rows):
            s, e = rowptr[r], rowptr[r + 1]
            y[r] = np.dot(v[s:e], x[cols[s:e]])
        return {"y": y}

    def tol(ins):
        v = np.abs(ins["vals"].astype(np.float64))
        x = np.abs(ins["x"].astype(np.float64))
        mag = np.array(
            [np.dot(v[rowptr[r] : rowptr[r + 1]], x[cols[rowptr[r] : rowptr[r + 1]]]) for r in range(rows)]
        )
        return 0.0, (np.diff(rowptr) / 32 + 8) * EPS32 * mag

    recipe = Recipe(
        kernel="spmv_csr",
        grid=(grid,),
        block=(block,),
        params=[
            Param("rows", "i32", rows),
            Param("rowptr", "ptr", array="rowptr"),
            Param("cols", "ptr", array="cols"),
            Param("vals", "ptr", array="vals"),
            Param("x", "ptr", array="x"),
            Param("y", "ptr", array="y"),
        ],
        arrays={
            "rowptr": ArraySpec("int32", (rows + 1,)),
            "cols": ArraySpec("int32", (max(nnz, 1),)),
            "vals": ArraySpec("float32", (max(nnz, 1),), "normal"),
            "x": ArraySpec("float32", (ncols,), "normal"),
            "y": ArraySpec("float32", (rows,), "full", value=-1.0),
        },
        outputs=["y"],
        seed=5,
        reference=ref,
        tolerance={"y": tol},
        fixed={"rowptr": rowptr, "cols": cols if nnz else np.zeros(1, np.int32)},
    )
    return recipe


# ---- sgemm_tiled: C = alpha*A@B + beta*C with 64x64 tiles, 16-deep k-steps, edges predicated
def _sgemm_tiled(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("sgemm_tiled")["threads_per_cta"]
    M = _size(100, scale)
    N = _size(120, scale)
    K = _size(40, scale)
    grid = (-(-N // 64), -(-M // 64))
    alpha, beta = 1.25, -0.5

    def ref(ins, sc):
        A = ins["A"].astype(np.float64).reshape(M, K)
        B = ins["B"].astype(np.float64).reshape(K, N)
        C = ins["C"].astype(np.float64).reshape(M, N)
        return {"C": np.float64(np.float32(alpha)) * (A @ B) + np.float64(np.float32(beta)) * C}

    def tol(ins):
        A = np.abs(ins["A"].astype(np.float64).reshape(M, K))
        B = np.abs(ins["B"].astype(np.float64).reshape(K, N))
        C = np.abs(ins["C"].astype(np.float64).reshape(M, N))
        return 0.0, ((K + 3) * EPS32 * (abs(alpha) * (A @ B) + abs(beta) * C)).reshape(-1)

    return Recipe(
        kernel="sgemm_tiled",
        shared_bytes=_shared("sgemm_tiled"),
        grid=grid,
        block=(block,),
        params=[
            Param("M", "i32", M),
            Param("N", "i32", N),
            Param("K", "i32", K),
            Param("alpha", "f32", alpha),
            Param("A", "ptr", array="A"),
            Param("B", "ptr", array="B"),
            Param("beta", "f32", beta),
            Param("C", "ptr", array="C"),
        ],
        arrays={
            "A": ArraySpec("float32", (M * K,), "normal"),
            "B": ArraySpec("float32", (K * N,), "normal"),
            "C": ArraySpec("float32", (M * N,), "normal"),
        },
        outputs=["C"],
        seed=6,
        reference=ref,
        tolerance={"C": tol},
    )


BUILTIN_RECIPES = {
    "saxpy": _saxpy,
    "reduce_sum": _reduce_sum,
    "histogram256": _histogram256,
    "spmv_csr": _spmv_csr,
    "sgemm_tiled": _sgemm_tiled,
}


def builtin_recipe(name: str, scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """The recipe of built-in kernel ``name`` at ``scale`` (1.0: the small default size)."""
    if name not in BUILTIN_RECIPES:
        raise UnknownNameError("kernel with a launch recipe", name, BUILTIN_RECIPES)
    if not (isinstance(scale, int | float) and not isinstance(scale, bool) and 0 < scale <= 1000):
        from rfmodel.workload.execute.errors import ExecutionError

        raise ExecutionError(f"scale: expected a number in (0, 1000], got {scale!r}")
    return BUILTIN_RECIPES[name](float(scale), ctas)
