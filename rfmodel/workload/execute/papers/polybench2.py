"""PolyBench-ACC (CUDA) kernels of the papers' benchmarks, continued: bicg, mvt, syr2k, gramschmidt and
fdtd-2d (CERF's Table II). Recipes and numpy references.

As in :mod:`.polybench`, each kernel keeps its original's row strides as compile-time constants and takes
the extents as parameters: the default problem is a corner of the standard layout, and ``scale`` grows it
to the standard dataset. The matrices are given only the rows a problem touches (rows of the standard
stride), so the inputs grow with the problem rather than always being the standard size.
"""

from __future__ import annotations

import numpy as np

from rfmodel.workload.execute.launch import Param
from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

from ._common import EPS32, Registry, check, manifest_entry, size, uniform_arrays

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()


def _f32(x) -> np.float64:
    """A float32 constant of the kernel as the kernel sees it (rounded to float32), in float64."""
    return np.float64(np.float32(x))


def _mat(a, cols, rows=None) -> np.ndarray:
    """A flat float32 array as float64 rows of ``cols`` (the standard stride)."""
    return a.astype(np.float64).reshape(-1 if rows is None else rows, cols)


# ---- bicg: s = A^T r (kernel 1), q = A p (kernel 2); standard dataset NX = NY = 4096 -----------------

BICG_STD = 4096


def _bicg(name: str, transposed: bool, vin: str, vout: str, seed: int, scale: float) -> Recipe:
    """bicg_kernel1/2's launch: 256 threads, one per element of ``vout``, A^T ``vin`` (kernel 1: one per
    column j < ny, the loop over the nx rows) or A ``vin`` (kernel 2: one per row i < nx, the loop along the
    ny columns); nx = ny = 256 by default, the standard 4096 at scale 16."""
    assert manifest_entry(name)["threads_per_cta"] == 256
    n = min(size(256, scale), BICG_STD)

    def product(A, v):
        return v @ A if transposed else A @ v

    def ref(ins, sc):
        return {vout: product(_mat(ins["A"], BICG_STD)[:n, :n], ins[vin].astype(np.float64))}

    def tol(ins):
        # n multiply-adds in float32 (a product and a sum each, at most): 2n roundings on the terms
        A = np.abs(_mat(ins["A"], BICG_STD)[:n, :n])
        return 0.0, 2 * n * EPS32 * product(A, np.abs(ins[vin].astype(np.float64)))

    return Recipe(
        kernel=name,
        grid=(-(-n // 256),),
        block=(256,),
        params=[*scalars("i32", nx=n, ny=n), *pointers("A", vin, vout)],
        arrays={
            "A": ArraySpec("float32", (n * BICG_STD,), "uniform", -1.0, 1.0),
            **uniform_arrays((vin, vout), (n,)),
        },  # vout is cleared by the kernel
        seed=seed,
        **check(vout, ref, tol),
    )


@FAMILY.recipe(16, "standard NX = NY = 4096")
def _pb_bicg_1(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    return _bicg("pb_bicg_1", True, "r", "s", 41, scale)


@FAMILY.recipe(16, "standard NX = NY = 4096")
def _pb_bicg_2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    return _bicg("pb_bicg_2", False, "p", "q", 42, scale)


# ---- mvt: x1 += A y1 (kernel 1), x2 += A^T y2 (kernel 2); standard dataset N = 4096 -------------------

MVT_STD = 4096


def _mvt(name: str, transposed: bool, seed: int, scale: float) -> Recipe:
    """mvt_kernel1/2's launch: 256 threads, one per element of x; the loop runs over all n."""
    assert manifest_entry(name)["threads_per_cta"] == 256
    n = min(size(256, scale), MVT_STD)  # the standard 4096 at scale 16

    def mat(ins):
        A = _mat(ins["A"], MVT_STD)[:n, :n]
        return A.T if transposed else A

    def ref(ins, sc):
        return {"x": ins["x"].astype(np.float64) + mat(ins) @ ins["y"].astype(np.float64)}

    def tol(ins):
        # the running sum starts at x and takes n multiply-adds: 2n + 1 roundings at most
        S = np.abs(ins["x"].astype(np.float64)) + np.abs(mat(ins)) @ np.abs(ins["y"].astype(np.float64))
        return 0.0, (2 * n + 1) * EPS32 * S

    return Recipe(
        kernel=name,
        grid=(-(-n // 256),),
        block=(256,),
        params=[*scalars("i32", n=n), *pointers("A", "x", "y")],
        arrays={
            "A": ArraySpec("float32", (n * MVT_STD,), "uniform", -1.0, 1.0),
            **uniform_arrays(("x", "y"), (n,)),
        },
        seed=seed,
        **check("x", ref, tol),
    )


@FAMILY.recipe(16, "standard N = 4096")
def _pb_mvt_1(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    return _mvt("pb_mvt_1", False, 43, scale)


@FAMILY.recipe(16, "standard N = 4096")
def _pb_mvt_2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    return _mvt("pb_mvt_2", True, 44, scale)


# ---- syr2k: C = alpha*A*B^T + alpha*B*A^T + beta*C; standard dataset NI = NJ = 1024 ----------------------

SYR2K_STD = 1024


@FAMILY.recipe(16, "standard NI = NJ = 1024", tested=4)
def _pb_syr2k(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """syr2k_kernel's launch: 32 x 8 threads, one per element of the ni x ni matrix C; nj loop steps."""
    assert manifest_entry("pb_syr2k")["threads_per_cta"] == 256
    ni = nj = min(size(64, scale), SYR2K_STD)  # the standard 1024 at scale 16
    alpha, beta = 32412.0, 2123.0  # the original's constants
    a, b = _f32(alpha), _f32(beta)

    def ref(ins, sc):
        A, B = _mat(ins["A"], SYR2K_STD)[:, :nj], _mat(ins["B"], SYR2K_STD)[:, :nj]
        out = _mat(ins["C"], SYR2K_STD).copy()
        out[:, :ni] = b * out[:, :ni] + a * (A @ B.T) + a * (B @ A.T)
        return {"C": out}

    def tol(ins):
        A, B = np.abs(_mat(ins["A"], SYR2K_STD)[:, :nj]), np.abs(_mat(ins["B"], SYR2K_STD)[:, :nj])
        C = np.abs(_mat(ins["C"], SYR2K_STD))
        # each term alpha*a*b: two products; the pair summed, then added to the running C: along any
        # term's path at most nj + 4 roundings (2 * nj + 4 allows a separate multiply and add per step)
        bound = np.zeros(C.shape)
        bound[:, :ni] = (2 * nj + 4) * EPS32 * (b * C[:, :ni] + a * (A @ B.T) + a * (B @ A.T))
        return 0.0, bound.reshape(-1)

    return Recipe(
        kernel="pb_syr2k",
        grid=(-(-ni // 32), -(-ni // 8)),
        block=(32, 8),
        params=[
            *scalars("i32", ni=ni, nj=nj),
            *scalars("f32", alpha=alpha, beta=beta),
            *pointers("A", "B", "C"),
        ],
        arrays=uniform_arrays(("A", "B", "C"), (ni * SYR2K_STD,)),
        seed=45,
        **check("C", ref, tol),
    )


# ---- gramschmidt: the three kernels the host launches for each column k; standard NI = NJ = 2048 ------

GS_STD = 2048


def _gs_setup(name: str, scale: float):
    """ni = nj (256 by default, the standard 2048 at scale 8) and the column k: the middle one (the host
    loops k over all columns; kernel 3's threads right of k are the busy ones, half of them mid-run)."""
    assert manifest_entry(name)["threads_per_cta"] == 256
    n = min(size(256, scale), GS_STD)
    k = n // 2
    params = [*scalars("i32", ni=n, nj=n), *pointers("A", "R", "Q"), *scalars("i32", k=k)]
    return n, k, params


def _gs_arrays(n: int, r_low: float) -> dict:
    return {
        "A": ArraySpec("float32", (n * GS_STD,), "uniform", -1.0, 1.0),
        "R": ArraySpec("float32", (n * GS_STD,), "uniform", r_low, 2.0),
        "Q": ArraySpec("float32", (n * GS_STD,), "uniform", -1.0, 1.0),
    }


@FAMILY.recipe(8, "standard NI = NJ = 2048")
def _pb_gramschmidt_1(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """gramschmidt_kernel1's launch: one CTA of 256 threads, thread 0 alone sums down column k."""
    n, k, params = _gs_setup("pb_gramschmidt_1", scale)

    def ref(ins, sc):
        A = _mat(ins["A"], GS_STD)
        R = _mat(ins["R"], GS_STD).copy()
        R[k, k] = np.sqrt(np.sum(A[:n, k] ** 2))
        return {"R": R}

    def tol(ins):
        # the sum of n non-negative squares: n + 1 roundings relative to itself; the square root halves
        # that relative error and adds its own correct rounding (sqrtf is IEEE by default)
        A = _mat(ins["A"], GS_STD)
        bound = np.zeros((n, GS_STD))
        bound[k, k] = (0.5 * (n + 1) + 1) * EPS32 * np.sqrt(np.sum(A[:n, k] ** 2))
        return 0.0, bound.reshape(-1)

    return Recipe(
        kernel="pb_gramschmidt_1",
        grid=(1,),
        block=(256,),
        params=params,
        arrays=_gs_arrays(n, -1.0),
        seed=46,
        **check("R", ref, tol),
    )


@FAMILY.recipe(8, "standard NI = NJ = 2048")
def _pb_gramschmidt_2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """gramschmidt_kernel2's launch: 256 threads per CTA, one per row; Q[:,k] = A[:,k] / R[k][k]."""
    n, k, params = _gs_setup("pb_gramschmidt_2", scale)

    def ref(ins, sc):
        A, R = _mat(ins["A"], GS_STD), _mat(ins["R"], GS_STD)
        Q = _mat(ins["Q"], GS_STD).copy()
        Q[:n, k] = A[:n, k] / R[k, k]
        return {"Q": Q}

    # one correctly rounded division per element (IEEE division by default): within 2^-24 relative;
    # every other element unchanged
    return Recipe(
        kernel="pb_gramschmidt_2",
        grid=(-(-n // 256),),
        block=(256,),
        params=params,
        arrays=_gs_arrays(n, 0.5),
        seed=47,
        **check("Q", ref, (EPS32, 0.0)),
    )


@FAMILY.recipe(8, "standard NI = NJ = 2048")
def _pb_gramschmidt_3(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """gramschmidt_kernel3's launch: 256 threads per CTA, one per column j (those with k < j < nj work)."""
    n, k, params = _gs_setup("pb_gramschmidt_3", scale)
    cols = np.arange(k + 1, n)

    def parts(ins):
        A, Q = _mat(ins["A"], GS_STD), _mat(ins["Q"], GS_STD)
        q = Q[:n, k]
        r = q @ A[:n, cols]  # R[k][j] for the working columns, exact
        # R[k][j]: n multiply-adds from 0, 2n roundings at most on the terms
        r_err = 2 * n * EPS32 * (np.abs(q) @ np.abs(A[:n, cols]))
        return A, q, r, r_err

    def ref(ins, sc):
        A, q, r, _ = parts(ins)
        R = _mat(ins["R"], GS_STD).copy()
        R[k, cols] = r
        A = A.copy()
        A[:n, cols] -= np.outer(q, r)
        return {"R": R, "A": A}

    def tol_r(ins):
        _, _, _, r_err = parts(ins)
        bound = np.zeros((n, GS_STD))
        bound[k, cols] = r_err
        return 0.0, bound.reshape(-1)

    def tol_a(ins):
        # A[i][j] - Q[i][k] * R[k][j] with the kernel's float32 R (off by r_err): that error times |q|,
        # plus a product and a difference rounded (2 roundings on |A| + |q| |R|)
        A, q, r, r_err = parts(ins)
        aq = np.abs(q)[:, None]
        bound = np.zeros((n, GS_STD))
        bound[:n, cols] = aq * r_err + 2 * EPS32 * (np.abs(A[:n, cols]) + aq * (np.abs(r) + r_err))
        return 0.0, bound.reshape(-1)

    return Recipe(
        kernel="pb_gramschmidt_3",
        grid=(-(-n // 256),),
        block=(256,),
        params=params,
        arrays=_gs_arrays(n, -1.0),
        outputs=["R", "A"],
        seed=48,
        reference=ref,
        tolerance={"R": tol_r, "A": tol_a},
    )


# ---- fdtd-2d: the three field updates of one time step; standard NX = NY = 2048, TMAX = 500 ------------

FDTD_STD = 2048
FDTD_TMAX = 500
FDTD_T = 7  #: the time step the kernels take


def _fdtd_size(name: str, scale: float) -> int:
    """The fields' extent nx = ny: 64 by default, the standard 2048 at scale 32."""
    assert manifest_entry(name)["threads_per_cta"] == 256
    return min(size(64, scale), FDTD_STD)


def _fdtd_recipe(name: str, n: int, with_fict: bool, out: str, seed: int, ref, tol) -> Recipe:
    """32 x 8 threads, one per grid point of the n x n fields ex, ey, hz (and ``fict``, TMAX values, where
    the step reads it) at time step FDTD_T; the step updates field ``out``."""
    params = [*scalars("i32", nx=n, ny=n)]
    params += [Param("fict", "ptr", array="fict")] if with_fict else []
    params += [*pointers("ex", "ey", "hz"), *scalars("i32", t=FDTD_T)]
    arrays = {"fict": ArraySpec("float32", (FDTD_TMAX,), "arange")} if with_fict else {}
    for f in ("ex", "ey", "hz"):
        arrays[f] = ArraySpec("float32", (n * FDTD_STD,), "uniform", -1.0, 1.0)
    return Recipe(
        kernel=name,
        grid=(-(-n // 32), -(-n // 8)),
        block=(32, 8),
        params=params,
        arrays=arrays,
        seed=seed,
        **check(out, ref, tol),
    )


@FAMILY.recipe(32, "standard NX = NY = 2048")
def _pb_fdtd2d_1(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """fdtd_step1_kernel: ey[0][:] = fict[t]; ey[i][j] -= 0.5 * (hz[i][j] - hz[i-1][j]) for i > 0."""
    n = _fdtd_size("pb_fdtd2d_1", scale)

    def ref(ins, sc):
        ey, hz = _mat(ins["ey"], FDTD_STD).copy(), _mat(ins["hz"], FDTD_STD)
        ey[1:n, :n] -= 0.5 * (hz[1:n, :n] - hz[: n - 1, :n])
        ey[0, :n] = ins["fict"][FDTD_T]
        return {"ey": ey}

    def tol(ins):
        # a difference, an exact halving and a second difference: 2 roundings on |ey| + (|hz| + |hz'|) / 2
        ey, hz = np.abs(_mat(ins["ey"], FDTD_STD)), np.abs(_mat(ins["hz"], FDTD_STD))
        bound = np.zeros(ey.shape)
        bound[1:n, :n] = 2 * EPS32 * (ey[1:n, :n] + 0.5 * (hz[1:n, :n] + hz[: n - 1, :n]))
        return 0.0, bound.reshape(-1)

    return _fdtd_recipe("pb_fdtd2d_1", n, True, "ey", 49, ref, tol)


@FAMILY.recipe(32, "standard NX = NY = 2048")
def _pb_fdtd2d_2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """fdtd_step2_kernel: ex[i][j] -= 0.5 * (hz[i][j] - hz[i][j-1]) for j > 0."""
    n = _fdtd_size("pb_fdtd2d_2", scale)

    def ref(ins, sc):
        ex, hz = _mat(ins["ex"], FDTD_STD).copy(), _mat(ins["hz"], FDTD_STD)
        ex[:n, 1:n] -= 0.5 * (hz[:n, 1:n] - hz[:n, : n - 1])
        return {"ex": ex}

    def tol(ins):
        ex, hz = np.abs(_mat(ins["ex"], FDTD_STD)), np.abs(_mat(ins["hz"], FDTD_STD))
        bound = np.zeros(ex.shape)
        bound[:n, 1:n] = 2 * EPS32 * (ex[:n, 1:n] + 0.5 * (hz[:n, 1:n] + hz[:n, : n - 1]))
        return 0.0, bound.reshape(-1)

    return _fdtd_recipe("pb_fdtd2d_2", n, False, "ex", 50, ref, tol)


@FAMILY.recipe(32, "standard NX = NY = 2048")
def _pb_fdtd2d_3(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """fdtd_step3_kernel: hz[i][j] -= 0.7 * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j]), i, j < n - 1."""
    n = _fdtd_size("pb_fdtd2d_3", scale)
    c = _f32(0.7)
    m = n - 1

    def ref(ins, sc):
        ex, ey = _mat(ins["ex"], FDTD_STD), _mat(ins["ey"], FDTD_STD)
        hz = _mat(ins["hz"], FDTD_STD).copy()
        hz[:m, :m] -= c * (ex[:m, 1 : m + 1] - ex[:m, :m] + ey[1 : m + 1, :m] - ey[:m, :m])
        return {"hz": hz}

    def tol(ins):
        # three sums, a product and a difference: 5 roundings on |hz| + 0.7 (|ex'| + |ex| + |ey'| + |ey|)
        ex, ey, hz = (np.abs(_mat(ins[f], FDTD_STD)) for f in ("ex", "ey", "hz"))
        bound = np.zeros(hz.shape)
        S = hz[:m, :m] + c * (ex[:m, 1 : m + 1] + ex[:m, :m] + ey[1 : m + 1, :m] + ey[:m, :m])
        bound[:m, :m] = 5 * EPS32 * S
        return 0.0, bound.reshape(-1)

    return _fdtd_recipe("pb_fdtd2d_3", n, False, "hz", 51, ref, tol)
