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


# ---- gemm_micro8x8: 128x128 tiles, 8x8 per thread, float4 loads (no edge handling: sizes are multiples)
def _gemm_micro8x8(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("gemm_micro8x8")["threads_per_cta"]
    M = 128 * _size(1, scale)
    N = 128 * _size(2, scale)
    K = 8 * _size(3, scale)
    alpha, beta = 0.75, 0.5
    return _gemm_recipe("gemm_micro8x8", M, N, K, alpha, beta, (N // 128, M // 128), block, 7)


def _gemm_recipe(name, M, N, K, alpha, beta, grid, block, seed) -> Recipe:
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
        kernel=name,
        shared_bytes=_shared(name),
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
        seed=seed,
        reference=ref,
        tolerance={"C": tol},
    )


# ---- stencil2d_regtile: a 5x5 stencil, each thread a 16-wide strip slid down the rows in registers
def _stencil2d_regtile(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("stencil2d_regtile")["threads_per_cta"]
    strips = _size(40, scale)
    nx = 16 * strips + 4 + 5  # five columns past the last full strip stay untouched
    ny = _size(12, scale, lo=5)
    grid = ctas or max(1, -(-strips // block))

    def ref(ins, sc):
        x = ins["in"].astype(np.float64).reshape(ny, nx)
        wt = ins["w"].astype(np.float64).reshape(5, 5)
        out = ins["out"].astype(np.float64).reshape(ny, nx).copy()
        for y in range(2, ny - 2):
            for s in range(strips):
                for i in range(16):
                    c = 16 * s + i
                    out[y, c + 2] = np.sum(wt * x[y - 2 : y + 3, c : c + 5])
        return {"out": out}

    def tol(ins):
        return 0.0, 30 * EPS32 * 25 * np.abs(ins["in"]).max() * np.abs(ins["w"]).max()

    return Recipe(
        kernel="stencil2d_regtile",
        grid=(grid,),
        block=(block,),
        params=[
            Param("nx", "i32", nx),
            Param("ny", "i32", ny),
            Param("in", "ptr", array="in"),
            Param("out", "ptr", array="out"),
            Param("w", "ptr", array="w"),
        ],
        arrays={
            "in": ArraySpec("float32", (ny * nx,), "normal"),
            "out": ArraySpec("float32", (ny * nx,), "full", value=7.0),
            "w": ArraySpec("float32", (25,), "uniform", -1.0, 1.0),
        },
        outputs=["out"],
        seed=8,
        reference=ref,
        tolerance={"out": tol},
    )


# ---- nbody_tile16: 16 bodies per thread against all bodies; rsqrtf is MUFU.RSQ
def _nbody_tile16(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("nbody_tile16")["threads_per_cta"]
    n = 16 * _size(20, scale)
    soft2 = 0.01
    grid = ctas or max(1, -(-(n // 16) // block))

    def terms(ins):
        p = ins["pos"].astype(np.float64).reshape(n, 4)
        d = p[None, :, :3] - p[:, None, :3]  # d[i, j] = q_j - p_i
        r2 = np.sum(d * d, axis=2) + np.float64(np.float32(soft2))
        return d * (p[None, :, 3] * r2**-1.5)[:, :, None]

    def ref(ins, sc):
        out = np.zeros((n, 4))
        out[:, :3] = terms(ins).sum(axis=1)
        return {"force": out.reshape(-1)}

    def tol(ins):
        # n serial FMAs per component; each term carries the few-ulp error of the float32 r2,
        # rsqrt and products (MUFU.RSQ itself is modelled as correctly rounded)
        mag = np.zeros((n, 4))
        mag[:, :3] = np.abs(terms(ins)).sum(axis=1)
        return 0.0, ((n + 16) * EPS32 * mag).reshape(-1)

    return Recipe(
        kernel="nbody_tile16",
        grid=(grid,),
        block=(block,),
        params=[
            Param("n", "i32", n),
            Param("soft2", "f32", soft2),
            Param("pos", "ptr", array="pos"),
            Param("force", "ptr", array="force"),
        ],
        arrays={
            "pos": ArraySpec("float32", (n * 4,), "uniform", 0.1, 1.0),
            "force": ArraySpec("float32", (n * 4,), "full", value=3.0),
        },
        outputs=["force"],
        seed=9,
        reference=ref,
        tolerance={"force": tol},
    )


# ---- conv2d_const: a 7x7 filter in __constant__ memory (bank 3) over shared-memory tiles
def _conv2d_const(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    width = _size(40, scale)
    height = _size(36, scale)
    tiles_x = -(-width // 16)
    tiles_y = -(-height // 16)
    grid = (tiles_x, max(1, tiles_y - 1))  # fewer CTA rows than tiles: the grid-stride loop runs twice

    def ref(ins, sc):
        x = ins["in"].astype(np.float64).reshape(height, width)
        f = ins["filter"].astype(np.float64).reshape(7, 7)
        pad = np.zeros((height + 6, width + 6))
        pad[3:-3, 3:-3] = x
        out = np.zeros((height, width))
        for fy in range(7):
            for fx in range(7):
                out += f[fy, fx] * pad[fy : fy + height, fx : fx + width]
        return {"out": out.reshape(-1)}

    def tol(ins):
        return 0.0, 52 * EPS32 * 49 * np.abs(ins["in"]).max() * np.abs(ins["filter"]).max()

    return Recipe(
        kernel="conv2d_const",
        shared_bytes=_shared("conv2d_const"),
        grid=grid,
        block=(16, 16),
        params=[
            Param("width", "i32", width),
            Param("height", "i32", height),
            Param("in", "ptr", array="in"),
            Param("out", "ptr", array="out"),
        ],
        arrays={
            "in": ArraySpec("float32", (height * width,), "normal"),
            "out": ArraySpec("float32", (height * width,), "zeros"),
            "filter": ArraySpec("float32", (49,), "uniform", -1.0, 1.0),
        },
        constants={3: "filter"},
        outputs=["out"],
        seed=10,
        reference=ref,
        tolerance={"out": tol},
    )


# ---- crc32_murmur3: per record a MurmurHash3 and a bitwise CRC-32, then a bucket histogram (integers)
def _rotl(x, r):
    return ((x << np.uint32(r)) | (x >> np.uint32(32 - r))).astype(np.uint32)


def _crc32_murmur3(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("crc32_murmur3")["threads_per_cta"]
    nrec = _size(700, scale)
    words = 5
    nbuckets = 61
    seed = 0x9747B28C
    grid = ctas or 2

    def ref(ins, sc):
        d = ins["data"].reshape(nrec, words).astype(np.uint32)
        with np.errstate(over="ignore"):
            h = np.full(nrec, seed, np.uint32)
            crc = np.full(nrec, 0xFFFFFFFF, np.uint32)
            for w in range(words):
                k = d[:, w] * np.uint32(0xCC9E2D51)
                k = _rotl(k, 15) * np.uint32(0x1B873593)
                h = _rotl(h ^ k, 13) * np.uint32(5) + np.uint32(0xE6546B64)
                crc = crc ^ d[:, w]
                for _ in range(32):
                    crc = (crc >> np.uint32(1)) ^ (
                        np.uint32(0xEDB88320) & (np.uint32(0) - (crc & np.uint32(1)))
                    )
            h = h ^ np.uint32(words * 4)
            h ^= h >> np.uint32(16)
            h *= np.uint32(0x85EBCA6B)
            h ^= h >> np.uint32(13)
            h *= np.uint32(0xC2B2AE35)
            h ^= h >> np.uint32(16)
            crc = ~crc
        hashes = np.stack([h, crc], axis=1).reshape(-1)
        b = (h ^ _rotl(crc, 7)) % np.uint32(nbuckets)
        return {"hashes": hashes, "counts": np.bincount(b, minlength=nbuckets).astype(np.uint32)}

    return Recipe(
        kernel="crc32_murmur3",
        grid=(grid,),
        block=(block,),
        params=[
            Param("nrec", "i32", nrec),
            Param("words", "i32", words),
            Param("seed", "u32", seed),
            Param("data", "ptr", array="data"),
            Param("hashes", "ptr", array="hashes"),
            Param("nbuckets", "u32", nbuckets),
            Param("counts", "ptr", array="counts"),
        ],
        arrays={
            "data": ArraySpec("uint32", (nrec * words,), "randint", 0, 2**32),
            "hashes": ArraySpec("uint32", (2 * nrec,), "zeros"),
            "counts": ArraySpec("uint32", (nbuckets,), "zeros"),
        },
        outputs=["hashes", "counts"],
        seed=11,
        reference=ref,
    )


# ---- kmeans_assign: nearest centroid per point (integers: the memberships and the change count)
def _kmeans_assign(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("kmeans_assign")["threads_per_cta"]
    n = _size(900, scale)
    d, k = 5, 7
    grid = ctas or 2

    def ref(ins, sc):
        pts = ins["points"].reshape(d, n)
        cen = ins["centroids"].reshape(k, d)
        dist = np.zeros((k, n), np.float32)
        for f in range(d):
            diff = (pts[f][None, :] - cen[:, f][:, None]).astype(np.float32)
            # one FMA per feature: the float64 product is exact, one rounding to float32
            dist = (diff.astype(np.float64) ** 2 + dist).astype(np.float32)
        arg = np.zeros(n, np.int64)
        best = np.full(n, np.float32(3.402823466e38))
        for c in range(k):  # strict '<' keeps the first of equal distances, as the kernel does
            better = dist[c] < best
            best = np.where(better, dist[c], best)
            arg = np.where(better, c, arg)
        changed = int(np.sum(ins["membership"] != arg))
        return {"membership": arg.astype(np.int32), "changed": np.array([changed], np.int32)}

    return Recipe(
        kernel="kmeans_assign",
        shared_bytes=_shared("kmeans_assign"),
        grid=(grid,),
        block=(block,),
        params=[
            Param("n", "i32", n),
            Param("d", "i32", d),
            Param("k", "i32", k),
            Param("points", "ptr", array="points"),
            Param("centroids", "ptr", array="centroids"),
            Param("membership", "ptr", array="membership"),
            Param("changed", "ptr", array="changed"),
        ],
        arrays={
            "points": ArraySpec("float32", (d * n,), "normal"),
            "centroids": ArraySpec("float32", (k * d,), "normal"),
            "membership": ArraySpec("int32", (n,), "randint", 0, k),
            "changed": ArraySpec("int32", (1,), "zeros"),
        },
        outputs=["membership", "changed"],
        seed=12,
        reference=ref,
    )


BUILTIN_RECIPES = {
    "crc32_murmur3": _crc32_murmur3,
    "kmeans_assign": _kmeans_assign,
    "gemm_micro8x8": _gemm_micro8x8,
    "stencil2d_regtile": _stencil2d_regtile,
    "nbody_tile16": _nbody_tile16,
    "conv2d_const": _conv2d_const,
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
