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

from rfmodel.errors import RfmodelError, UnknownNameError
from rfmodel.workload.execute.papers import PAPERS_FULL_SIZES, PAPERS_KNOWN_GAPS, PAPERS_RECIPES
from rfmodel.workload.execute.papers._common import (
    EPS32,
    Registry,
    check,
    manifest_entry,
    option_arrays,
    same_arrays,
    shared_bytes,
    size,
)
from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

__all__ = ["BUILTIN_RECIPES", "KNOWN_GAPS", "RECIPES", "builtin_recipe"]

# what every shipped kernel's recipe uses: the manifest's facts and sizes by scale
_manifest, _shared, _size = manifest_entry, shared_bytes, size

#: the built-in kernels' recipes
BUILTIN = Registry()
BUILTIN_RECIPES = BUILTIN.recipes


# ---- saxpy: y = a*x + y (one FFMA per element: exactly the float32 rounding of the float64 value)
@BUILTIN.recipe()
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
        params=[*scalars("i32", n=n), *scalars("f32", a=1.75), *pointers("x", "y")],
        arrays=same_arrays(("x", "y"), ArraySpec("float32", (n,), "normal")),
        seed=1,
        **check("y", ref, (0.0, 0.0)),  # a fused multiply-add rounds once: bit-exact
    )


# ---- reduce_sum: one partial sum per CTA
@BUILTIN.recipe()
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
        params=[*scalars("i32", n=n), *pointers("in", "partial")],
        arrays={
            "in": ArraySpec("float32", (n,), "normal"),
            "partial": ArraySpec("float32", (grid,), "zeros"),
        },
        seed=2,
        **check("partial", ref, tol),
    )


# ---- histogram256: byte histogram of 32-bit words, shared-memory atomics then global atomics
@BUILTIN.recipe()
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
        params=[*scalars("i32", nwords=n), *pointers("data", "hist")],
        arrays={
            "data": ArraySpec("uint32", (n,), "randint", 0, 2**32),
            "hist": ArraySpec("uint32", (256,), "zeros"),
        },
        seed=3,
        **check("hist", ref),
    )


# ---- spmv_csr: one warp per row, lanes stride over the row's nonzeros, shuffle reduction
@BUILTIN.recipe()
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
        params=[*scalars("i32", rows=rows), *pointers("rowptr", "cols", "vals", "x", "y")],
        arrays={
            "rowptr": ArraySpec("int32", (rows + 1,)),
            "cols": ArraySpec("int32", (max(nnz, 1),)),
            "vals": ArraySpec("float32", (max(nnz, 1),), "normal"),
            "x": ArraySpec("float32", (ncols,), "normal"),
            "y": ArraySpec("float32", (rows,), "full", value=-1.0),
        },
        seed=5,
        **check("y", ref, tol),
        fixed={"rowptr": rowptr, "cols": cols if nnz else np.zeros(1, np.int32)},
    )
    return recipe


# ---- sgemm_tiled: C = alpha*A@B + beta*C with 64x64 tiles, 16-deep k-steps, edges predicated
@BUILTIN.recipe()
def _sgemm_tiled(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("sgemm_tiled")["threads_per_cta"]
    M = _size(100, scale)
    N = _size(120, scale)
    K = _size(40, scale)
    grid = (-(-N // 64), -(-M // 64))
    alpha, beta = 1.25, -0.5
    return _gemm_recipe("sgemm_tiled", M, N, K, alpha, beta, grid, block, 6)


# ---- gemm_micro8x8: 128x128 tiles, 8x8 per thread, float4 loads (no edge handling: sizes are multiples)
@BUILTIN.recipe()
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
            *scalars("i32", M=M, N=N, K=K),
            *scalars("f32", alpha=alpha),
            *pointers("A", "B"),
            *scalars("f32", beta=beta),
            *pointers("C"),
        ],
        arrays={
            "A": ArraySpec("float32", (M * K,), "normal"),
            "B": ArraySpec("float32", (K * N,), "normal"),
            "C": ArraySpec("float32", (M * N,), "normal"),
        },
        seed=seed,
        **check("C", ref, tol),
    )


# ---- stencil2d_regtile: a 5x5 stencil, each thread a 16-wide strip slid down the rows in registers
@BUILTIN.recipe()
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
        params=[*scalars("i32", nx=nx, ny=ny), *pointers("in", "out", "w")],
        arrays={
            "in": ArraySpec("float32", (ny * nx,), "normal"),
            "out": ArraySpec("float32", (ny * nx,), "full", value=7.0),
            "w": ArraySpec("float32", (25,), "uniform", -1.0, 1.0),
        },
        seed=8,
        **check("out", ref, tol),
    )


# ---- nbody_tile16: 16 bodies per thread against all bodies; rsqrtf is MUFU.RSQ
@BUILTIN.recipe()
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
        params=[*scalars("i32", n=n), *scalars("f32", soft2=soft2), *pointers("pos", "force")],
        arrays={
            "pos": ArraySpec("float32", (n * 4,), "uniform", 0.1, 1.0),
            "force": ArraySpec("float32", (n * 4,), "full", value=3.0),
        },
        seed=9,
        **check("force", ref, tol),
    )


# ---- conv2d_const: a 7x7 filter in __constant__ memory (bank 3) over shared-memory tiles
@BUILTIN.recipe()
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
        params=[*scalars("i32", width=width, height=height), *pointers("in", "out")],
        arrays={
            "in": ArraySpec("float32", (height * width,), "normal"),
            "out": ArraySpec("float32", (height * width,), "zeros"),
            "filter": ArraySpec("float32", (49,), "uniform", -1.0, 1.0),
        },
        constants={3: "filter"},
        seed=10,
        **check("out", ref, tol),
    )


# ---- crc32_murmur3: per record a MurmurHash3 and a bitwise CRC-32, then a bucket histogram (integers)
def _rotl(x, r):
    return ((x << np.uint32(r)) | (x >> np.uint32(32 - r))).astype(np.uint32)


@BUILTIN.recipe()
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
            *scalars("i32", nrec=nrec, words=words),
            *scalars("u32", seed=seed),
            *pointers("data", "hashes"),
            *scalars("u32", nbuckets=nbuckets),
            *pointers("counts"),
        ],
        arrays={
            "data": ArraySpec("uint32", (nrec * words,), "randint", 0, 2**32),
            "hashes": ArraySpec("uint32", (2 * nrec,), "zeros"),
            "counts": ArraySpec("uint32", (nbuckets,), "zeros"),
        },
        seed=11,
        **check(("hashes", "counts"), ref),
    )


# ---- kmeans_assign: nearest centroid per point (integers: the memberships and the change count)
@BUILTIN.recipe()
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
        params=[*scalars("i32", n=n, d=d, k=k), *pointers("points", "centroids", "membership", "changed")],
        arrays={
            "points": ArraySpec("float32", (d * n,), "normal"),
            "centroids": ArraySpec("float32", (k * d,), "normal"),
            "membership": ArraySpec("int32", (n,), "randint", 0, k),
            "changed": ArraySpec("int32", (1,), "zeros"),
        },
        seed=12,
        **check(("membership", "changed"), ref),
    )


# ---- gemm_regblock16x8: a 16x8 register block per thread, operands straight from global memory
@BUILTIN.recipe()
def _gemm_regblock16x8(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("gemm_regblock16x8")["threads_per_cta"]
    M = 256 * _size(1, scale)
    N = 128 * _size(1, scale)
    K = _size(12, scale)
    return _gemm_recipe("gemm_regblock16x8", M, N, K, 1.5, -0.25, (N // 128, M // 256), block, 13)


# ---- stencil7_3d: a 7-point stencil marching along z with a shared-memory tile per plane
@BUILTIN.recipe()
def _stencil7_3d(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    nx = _size(40, scale, lo=3)
    ny = _size(12, scale, lo=3)
    nz = _size(5, scale, lo=3)
    c0, c1 = 0.4, 0.1

    def ref(ins, sc):
        x = ins["in"].astype(np.float64).reshape(nz, ny, nx)
        out = ins["out"].astype(np.float64).reshape(nz, ny, nx).copy()
        s = x[1:-1, 1:-1, :-2] + x[1:-1, 1:-1, 2:] + x[1:-1, :-2, 1:-1] + x[1:-1, 2:, 1:-1]
        s = s + x[:-2, 1:-1, 1:-1] + x[2:, 1:-1, 1:-1]
        out[1:-1, 1:-1, 1:-1] = (
            np.float64(np.float32(c1)) * s + np.float64(np.float32(c0)) * x[1:-1, 1:-1, 1:-1]
        )
        return {"out": out.reshape(-1)}

    def tol(ins):
        return 0.0, 8 * EPS32 * 7 * np.abs(ins["in"]).max()

    return Recipe(
        kernel="stencil7_3d",
        shared_bytes=_shared("stencil7_3d"),
        grid=(-(-nx // 32), -(-ny // 8)),
        block=(32, 8),
        params=[*scalars("i32", nx=nx, ny=ny, nz=nz), *scalars("f32", c0=c0, c1=c1), *pointers("in", "out")],
        arrays={
            "in": ArraySpec("float32", (nz * ny * nx,), "normal"),
            "out": ArraySpec("float32", (nz * ny * nx,), "full", value=5.0),
        },
        seed=14,
        **check("out", ref, tol),
    )


# ---- gauss_elim_step: one elimination step below pivot k (IEEE division for the multipliers)
@BUILTIN.recipe()
def _gauss_elim_step(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    n = _size(50, scale, lo=4)
    k = n // 3
    grid = ctas or 2

    def ref(ins, sc):
        a = ins["a"].astype(np.float32).reshape(n, n)
        b = ins["b"].astype(np.float32)
        m = (a[k + 1 :, k] / a[k, k]).astype(np.float64)  # float32 division, correctly rounded
        a2 = a.astype(np.float64).copy()
        b2 = b.astype(np.float64).copy()
        a2[k + 1 :, k:] -= m[:, None] * a2[k, k:][None, :]
        b2[k + 1 :] -= m * b2[k]
        return {"a": a2.reshape(-1), "b": b2}

    def tol(ins):
        a = np.abs(ins["a"].astype(np.float64)).reshape(n, n)
        mag = a.copy()
        m = np.abs(a[k + 1 :, k] / a[k, k])
        mag[k + 1 :, k:] += m[:, None] * a[k, k:][None, :]
        bm = np.abs(ins["b"].astype(np.float64))
        bm[k + 1 :] += m * bm[k]
        return {"a": 3 * EPS32 * mag.reshape(-1), "b": 3 * EPS32 * bm}

    return Recipe(
        kernel="gauss_elim_step",
        shared_bytes=_shared("gauss_elim_step"),
        grid=(grid,),
        block=(32, 8),
        params=[*scalars("i32", n=n, k=k), *pointers("a", "b")],
        arrays={
            "a": ArraySpec("float32", (n * n,), "uniform", 0.5, 2.0),
            "b": ArraySpec("float32", (n,), "normal"),
        },
        seed=15,
        **check(("a", "b"), ref, bounds=tol),
    )


# ---- black_scholes: logf, expf, sqrtf and divisions per option
@BUILTIN.recipe()
def _black_scholes(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("black_scholes")["threads_per_cta"]
    n = _size(1500, scale)
    rate, vol = 0.03, 0.25
    grid = ctas or 4

    def cdf(d):
        a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
        kk = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        poly = kk * (a1 + kk * (a2 + kk * (a3 + kk * (a4 + kk * a5))))
        c = 0.39894228040143267794 * np.exp(-0.5 * d * d) * poly
        return np.where(d > 0, 1.0 - c, c)

    def ref(ins, sc):
        s, x, t = (ins[k].astype(np.float64) for k in ("spot", "strike", "years"))
        r, v = np.float64(np.float32(rate)), np.float64(np.float32(vol))
        d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * np.sqrt(t))
        d2 = d1 - v * np.sqrt(t)
        disc = np.exp(-r * t)
        return {"call": s * cdf(d1) - x * disc * cdf(d2), "put": x * disc * (1 - cdf(d2)) - s * (1 - cdf(d1))}

    def tol(ins):
        # float32 evaluation of log, exp, sqrt and a degree-5 polynomial: a few hundred ulps of
        # the operands' scale (prices are differences of terms up to spot and strike)
        scale_ = np.maximum(ins["spot"], ins["strike"]).astype(np.float64)
        return 0.0, 300 * EPS32 * scale_

    return Recipe(
        kernel="black_scholes",
        grid=(grid,),
        block=(block,),
        params=[
            *scalars("i32", n=n),
            *pointers("spot", "strike", "years"),
            *scalars("f32", rate=rate, vol=vol),
            *pointers("call", "put"),
        ],
        arrays={
            **option_arrays(n),
            **same_arrays(("call", "put"), ArraySpec("float32", (n,), "zeros")),
        },
        seed=16,
        **check(("call", "put"), ref, tol),
    )


# ---- nbody_forces: all-pairs forces through a shared-memory tile, then a capped velocity update
@BUILTIN.recipe()
def _nbody_forces(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("nbody_forces")["threads_per_cta"]
    n = _size(300, scale)  # not a multiple of the CTA: the last tile is padded with massless bodies
    dt, soft2, vmax = 0.01, 0.05, 2.0
    grid = -(-n // block)

    def parts(ins):
        p = ins["pos"].astype(np.float64).reshape(n, 4)
        d = p[None, :, :3] - p[:, None, :3]
        r2 = np.sum(d * d, axis=2) + np.float64(np.float32(soft2))
        inv = r2**-0.5
        minv = p[None, :, 3] * inv
        return p, d, minv, minv * inv * inv

    def ref(ins, sc):
        p, d, minv, f = parts(ins)
        a = np.sum(d * f[:, :, None], axis=1)
        pot = -minv.sum(axis=1)
        v = ins["vel"].astype(np.float64).reshape(n, 4).copy()
        v[:, :3] += a * np.float64(np.float32(dt))
        speed = np.sqrt(np.sum(v[:, :3] ** 2, axis=1))
        cap = speed > np.float64(np.float32(vmax))
        v[cap, :3] *= (np.float64(np.float32(vmax)) / speed[cap])[:, None]
        v[:, 3] = 0.5 * p[:, 3] * pot
        return {"vel": v.reshape(-1)}

    def tol(ins):
        p, d, minv, f = parts(ins)
        mag = np.zeros((n, 4))
        mag[:, :3] = np.abs(d * f[:, :, None]).sum(axis=1) * np.float32(dt) + np.abs(
            ins["vel"].reshape(n, 4)[:, :3]
        )
        mag[:, 3] = 0.5 * p[:, 3] * minv.sum(axis=1)
        # a speed at the cap flips the branch within rounding: allow the cap's relative change
        return 0.0, ((block + 16) * EPS32 * (mag + np.float32(vmax))).reshape(-1)

    return Recipe(
        kernel="nbody_forces",
        shared_bytes=_shared("nbody_forces"),
        grid=(grid,),
        block=(block,),
        params=[
            *scalars("i32", n=n),
            *scalars("f32", dt=dt, soft2=soft2, vmax=vmax),
            *pointers("pos", "vel"),
        ],
        arrays={
            "pos": ArraySpec("float32", (n * 4,), "uniform", 0.1, 1.0),
            "vel": ArraySpec("float32", (n * 4,), "uniform", -1.5, 1.5),
        },
        seed=17,
        **check("vel", ref, tol),
    )


# ---- bytecode_vm: a switch-dispatched interpreter per thread (BRX jump tables)
@BUILTIN.recipe()
def _bytecode_vm(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("bytecode_vm")["threads_per_cta"]
    n = _size(300, scale)
    length = 24
    grid = ctas or 2
    rng = np.random.default_rng(18)
    ops = rng.integers(0, 13, length).astype(np.int32)  # 12 is outside the switch: the default case
    ops[length // 2] = 9  # a conditional skip

    def run_one(acc, ops_, args):
        f32 = np.float32
        acc = f32(acc)
        t = f32(1.0)
        cnt = 0
        pc = 0
        while pc < length:
            op = int(ops_[pc])
            arg = f32(args[pc])
            pc += 1
            cnt += 1
            if op == 0:
                acc = f32(acc + t)
            elif op == 1:
                acc = f32(acc * t)
            elif op == 2:
                t = f32(acc - t)
            elif op == 3:
                acc = max(acc, t) if not np.isnan(acc) else t
            elif op == 4:
                acc = min(acc, t) if not np.isnan(acc) else t
            elif op == 5:
                t = arg
            elif op == 6:
                acc = f32(np.float64(acc) * np.float64(arg) + np.float64(t))
            elif op == 7:
                t = acc
            elif op == 8:
                acc = abs(acc)
            elif op == 9:
                if acc < 0:
                    pc += int(arg)
            elif op == 10:
                acc = (np.array(acc, f32).view(np.int32) ^ np.array(arg, f32).view(np.int32)).view(f32)[()]
            elif op == 11:
                pc = length
        return acc, cnt

    def ref(ins, sc):
        out = np.zeros(n, np.float32)
        steps = np.zeros(n, np.int32)
        for i in range(n):
            out[i], steps[i] = run_one(ins["data"][i], ins["ops"], ins["args"])
        return {"data": out, "steps": steps}

    return Recipe(
        kernel="bytecode_vm",
        grid=(grid,),
        block=(block,),
        params=[*scalars("i32", n=n, len=length), *pointers("ops", "args", "data", "steps")],
        arrays={
            "ops": ArraySpec("int32", (length,)),
            "args": ArraySpec("float32", (length,), "uniform", 0.0, 3.0),
            "data": ArraySpec("float32", (n,), "normal"),
            "steps": ArraySpec("int32", (n,), "zeros"),
        },
        fixed={"ops": ops},
        outputs=["data", "steps"],
        seed=19,
        reference=ref,
        tolerance={"data": (0.0, 0.0)},  # the same float32 operations in the same order
    )


# ---- bfs_expand: one top-down BFS level with atomicCAS claims and an atomic frontier append
@BUILTIN.recipe()
def _bfs_expand(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("bfs_expand")["threads_per_cta"]
    nv = _size(600, scale)
    grid = ctas or 2
    rng = np.random.default_rng(20)
    deg = rng.integers(0, 9, nv)
    rowptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int32)
    adj = rng.integers(0, nv, int(rowptr[-1])).astype(np.int32)
    levels = np.full(nv, -1, np.int32)
    frontier = rng.choice(nv, size=max(1, nv // 6), replace=False).astype(np.int32)
    levels[frontier] = 3
    levels[rng.choice(nv, size=nv // 5, replace=False)] = 2  # some vertices visited earlier
    levels[frontier] = 3

    def ref(ins, sc):
        lv = levels.copy()
        new = []
        for v in frontier:
            for u in adj[rowptr[v] : rowptr[v + 1]]:
                if lv[u] < 0:
                    lv[u] = 4
                    new.append(u)
        nf = np.full(nv, -7, np.int32)
        nf[: len(new)] = np.sort(new)
        return {"levels": lv, "next_frontier": nf, "next_size": np.array([len(new)], np.int32)}

    return Recipe(
        kernel="bfs_expand",
        grid=(grid,),
        block=(block,),
        params=[
            *scalars("i32", frontier_size=len(frontier)),
            *pointers("frontier", "rowptr", "adj", "levels"),
            *scalars("i32", level=3),
            *pointers("next_frontier", "next_size"),
        ],
        arrays={
            "frontier": ArraySpec("int32", (len(frontier),)),
            "rowptr": ArraySpec("int32", (nv + 1,)),
            "adj": ArraySpec("int32", (max(1, len(adj)),)),
            "levels": ArraySpec("int32", (nv,)),
            "next_frontier": ArraySpec("int32", (nv,), "full", value=-7),
            "next_size": ArraySpec("int32", (1,), "zeros"),
        },
        fixed={
            "frontier": frontier,
            "rowptr": rowptr,
            "adj": adj if len(adj) else np.zeros(1, np.int32),
            "levels": levels,
        },
        # the order of the appended vertices is the order of the atomics: compare as sets
        unordered=["next_frontier"],
        seed=21,
        **check(("levels", "next_frontier", "next_size"), ref),
    )


# ---- fft_radix8 / fft_radix16: one Stockham-style pass; references replay the kernel's own
# butterfly structure in float64 with exact twiddles
@BUILTIN.recipe()
def _fft_radix8(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("fft_radix8")["threads_per_cta"]
    n = 8 * 8 * _size(4, scale)  # n = 256 at scale 1
    ns = 8
    batches = 3
    grid = ctas or 2
    h = np.float64(np.float32(0.70710678118654752440))

    def ref(ins, sc):
        x = ins["in"].astype(np.float64).reshape(batches, n, 2)
        z = x[..., 0] + 1j * x[..., 1]
        out = np.zeros((batches, n), complex)
        m = n // 8
        for j in range(m):
            k = j % ns
            v = [z[:, j + r * m].copy() for r in range(8)]
            w1 = np.exp(-2j * np.pi * k / (ns * 8))
            for r in range(1, 8):
                v[r] = v[r] * w1**r
            # the radix-8 DFT the three butterfly stages compute; the output digit order is undone
            # by the kernel's stores, so dst[base + q*ns] = sum_r v[r] W8^(r q)
            base = (j // ns) * ns * 8 + k
            for q in range(8):
                out[:, base + q * ns] = sum(v[r] * np.exp(-2j * np.pi * r * q / 8) for r in range(8))
        return {"out": np.stack([out.real, out.imag], axis=-1).reshape(-1)}

    def tol(ins):
        mag = np.abs(ins["in"]).astype(np.float64).reshape(batches, n, 2).sum(axis=2).max()
        return 0.0, 64 * EPS32 * 8 * mag

    _ = h
    return Recipe(
        kernel="fft_radix8",
        grid=(grid,),
        block=(block,),
        params=[*scalars("i32", n=n, ns=ns, batches=batches), *pointers("in", "out")],
        arrays={
            "in": ArraySpec("float32", (batches * n * 2,), "normal"),
            "out": ArraySpec("float32", (batches * n * 2,), "zeros"),
        },
        seed=22,
        **check("out", ref, tol),
    )


@BUILTIN.recipe()
def _fft_radix16(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("fft_radix16")["threads_per_cta"]
    n = 16 * 16 * _size(2, scale)
    stride = 16
    grid = ctas or 1

    def ref(ins, sc):
        x = ins["in"].astype(np.float64).reshape(n, 2)
        z = x[:, 0] + 1j * x[:, 1]
        out = np.zeros(n, complex)
        c = np.float64(np.float32(-6.2831853))
        for g in range(n // 16):
            base = (g // stride) * stride * 16 + (g % stride)
            v = np.array(
                [
                    z[base + i * stride] * np.exp(1j * c * ((g % stride) * i) / (stride * 16))
                    for i in range(16)
                ]
            )
            half = 8
            while half >= 1:
                for i in range(16):
                    if i & half == 0:
                        j = i + half
                        t = v[j] * np.exp(1j * c * ((i % half) * (8 // half)) / 16.0)
                        v[j] = v[i] - t
                        v[i] = v[i] + t
                half //= 2
            for i in range(16):
                out[base + i * stride] = v[i]
        return {"out": np.stack([out.real, out.imag], axis=-1).reshape(-1)}

    def tol(ins):
        # __sincosf, __sinf and __cosf are MUFU.SIN/COS: absolute error about 2^-21 for these angles
        mag = np.abs(ins["in"]).astype(np.float64).reshape(n, 2).sum(axis=1).max()
        return 0.0, 16 * (2.0**-20 + 64 * EPS32) * mag

    return Recipe(
        kernel="fft_radix16",
        grid=(grid,),
        block=(block,),
        params=[*scalars("i32", n=n, stride=stride), *pointers("in", "out")],
        arrays={
            "in": ArraySpec("float32", (n * 2,), "normal"),
            "out": ArraySpec("float32", (n * 2,), "zeros"),
        },
        seed=23,
        **check("out", ref, tol),
    )


# ---- rk4_duffing_dp: RK4 of two coupled driven Duffing oscillators per thread, in double precision
@BUILTIN.recipe()
def _rk4_duffing_dp(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("rk4_duffing_dp")["threads_per_cta"]
    nsys = _size(256, scale)
    steps = 16
    dt, delta, kc, gamma, omega = 0.01, 0.1, 0.2, 0.3, 1.2
    rot_c, rot_s = np.cos(0.5 * dt * omega), np.sin(0.5 * dt * omega)
    grid = ctas or max(1, -(-nsys // block) // 2)  # two systems per thread: the grid-stride loop runs twice

    def run(ins):
        a = ins["alphas"].astype(np.float64)
        bt = ins["betas"].astype(np.float64)
        st = ins["state"].reshape(nsys, 4).astype(np.float64)
        s = [st[:, 0].copy(), st[:, 1].copy(), st[:, 2].copy(), st[:, 3].copy()]

        def deriv(x, drive):
            x1, v1, x2, v2 = x
            return [
                v1,
                -delta * v1 - a * x1 - bt * x1 * x1 * x1 + kc * (x2 - x1) + drive,
                v2,
                -delta * v2 - a * x2 - bt * x2 * x2 * x2 + kc * (x1 - x2),
            ]

        def axpy(x, h, d):
            return [x[k] + h * d[k] for k in range(4)]

        fc, fs = 1.0, 0.0
        amax = np.zeros(nsys)
        esum = np.zeros(nsys)
        terms = np.zeros(nsys)  # the sum of the magnitudes of esum's terms (for the tolerance)
        for _ in range(steps):
            hc, hs = fc * rot_c - fs * rot_s, fs * rot_c + fc * rot_s
            nc, ns = hc * rot_c - hs * rot_s, hs * rot_c + hc * rot_s
            k1 = deriv(s, gamma * fc)
            k2 = deriv(axpy(s, 0.5 * dt, k1), gamma * hc)
            k3 = deriv(axpy(s, 0.5 * dt, k2), gamma * hc)
            k4 = deriv(axpy(s, dt, k3), gamma * nc)
            w = dt / 6.0
            s = [s[k] + w * (k1[k] + 2.0 * k2[k] + 2.0 * k3[k] + k4[k]) for k in range(4)]
            fc, fs = nc, ns
            x1, v1, x2, v2 = s
            amax = np.fmax(amax, np.fmax(np.abs(x1), np.abs(x2)))
            parts = [
                0.5 * (v1 * v1 + v2 * v2),
                0.5 * a * (x1 * x1 + x2 * x2),
                0.25 * bt * (x1**4 + x2**4),
                0.5 * kc * (x1 - x2) ** 2,
            ]
            esum += sum(parts)
            terms += sum(np.abs(p) for p in parts)
        state = np.stack(s, axis=1).reshape(-1)
        stats = np.stack([amax, esum / steps], axis=1).reshape(-1)
        return state, stats, terms / steps

    def ref(ins, sc):
        state, stats, _ = run(ins)
        return {"state": state, "stats": stats}

    def tol(name):
        # fused multiply-adds where numpy rounds twice: a few ulps per operation, 16 steps of about
        # 150 operations each, relative to the magnitudes involved (state: O(1); energy: its terms)
        def f(ins):
            state, stats, terms = run(ins)
            if name == "state":
                return 0.0, 1e-12 * (1.0 + np.abs(state))
            bound = np.stack([1e-12 * (1.0 + np.abs(stats[0::2])), 1e-12 * (1.0 + terms)], axis=1)
            return 0.0, bound.reshape(-1)

        return f

    return Recipe(
        kernel="rk4_duffing_dp",
        grid=(grid,),
        block=(block,),
        params=[
            *scalars("i32", nsys=nsys, steps=steps),
            *scalars("f64", dt=dt, delta=delta, kc=kc, gamma=gamma, rot_c=float(rot_c), rot_s=float(rot_s)),
            *pointers("alphas", "betas", "state", "stats"),
        ],
        arrays={
            "alphas": ArraySpec("float64", (nsys,), "uniform", 0.5, 1.5),
            "betas": ArraySpec("float64", (nsys,), "uniform", 0.1, 1.0),
            "state": ArraySpec("float64", (nsys * 4,), "uniform", -1.0, 1.0),
            "stats": ArraySpec("float64", (nsys * 2,), "full", value=7.0),
        },
        outputs=["state", "stats"],
        seed=21,
        reference=ref,
        tolerance={"state": tol("state"), "stats": tol("stats")},
    )


# ---- bicg_like: q = A*p, one row per thread; per-CTA partials of s = A^T*r over the CTA's rows
@BUILTIN.recipe()
def _bicg_like(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("bicg_like")["threads_per_cta"]
    grid = ctas or 2
    rows = grid * block - 37  # the last CTA's rows partly absent: the row guard and nrows < blockDim
    # a row of 32*odd floats (an odd number of 128-byte lines): a warp's 32 rows spread over the sets
    cols = 32 * (2 * _size(2, scale) + 1) - 5 * (scale < 2)

    def ref(ins, sc):
        A = ins["A"].astype(np.float64).reshape(rows, cols)
        rv = ins["r"].astype(np.float64)
        s = np.zeros((grid, cols))
        for b in range(grid):
            s[b] = rv[b * block : (b + 1) * block] @ A[b * block : (b + 1) * block]
        return {"q": A @ ins["p"].astype(np.float64), "s_part": s.reshape(-1)}

    def tol(ins):
        A = np.abs(ins["A"].astype(np.float64).reshape(rows, cols))
        rv = np.abs(ins["r"].astype(np.float64))
        s = np.zeros((grid, cols))
        for b in range(grid):
            s[b] = rv[b * block : (b + 1) * block] @ A[b * block : (b + 1) * block]
        q = A @ np.abs(ins["p"].astype(np.float64))
        return {"q": (cols + 2) * EPS32 * q, "s_part": (block + 2) * EPS32 * s.reshape(-1)}

    return Recipe(
        kernel="bicg_like",
        grid=(grid,),
        block=(block,),
        params=[*scalars("i32", rows=rows, cols=cols), *pointers("A", "p", "r", "q", "s_part")],
        arrays={
            "A": ArraySpec("float32", (rows * cols,), "normal"),
            "p": ArraySpec("float32", (cols,), "normal"),
            "r": ArraySpec("float32", (rows,), "normal"),
            "q": ArraySpec("float32", (rows,), "full", value=-1.0),
            "s_part": ArraySpec("float32", (grid * cols,), "full", value=-1.0),
        },
        seed=41,
        **check(("q", "s_part"), ref, bounds=tol),
    )


# ---- syrk_like: C = alpha*A*A^T + beta*C, a 32x8 CTA per 8x32 tile of C, A read from global memory
@BUILTIN.recipe()
def _syrk_like(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    # the default n is not a multiple of the tile (the edge CTAs' guard); for a grid of ``ctas``, a
    # square of about that many tiles; k = 32*odd floats (an odd number of lines) from scale 2 on
    n = 73 if ctas is None else 32 * max(2, int(round((ctas * 32 * 8) ** 0.5)) // 32)
    k = 32 * (2 * _size(1, scale) + 1) - 3 * (scale < 2)
    grid = (-(-n // 32), -(-n // 8))
    alpha, beta = 1.5, -0.75

    def ref(ins, sc):
        A = ins["A"].astype(np.float64).reshape(n, k)
        C = ins["C"].astype(np.float64).reshape(n, n)
        out = np.float64(np.float32(alpha)) * (A @ A.T) + np.float64(np.float32(beta)) * C
        return {"C": out.reshape(-1)}

    def tol(ins):
        A = np.abs(ins["A"].astype(np.float64).reshape(n, k))
        C = np.abs(ins["C"].astype(np.float64).reshape(n, n))
        return 0.0, ((k + 3) * EPS32 * (abs(alpha) * (A @ A.T) + abs(beta) * C)).reshape(-1)

    return Recipe(
        kernel="syrk_like",
        grid=grid,
        block=(32, 8),
        params=[*scalars("i32", n=n, k=k), *scalars("f32", alpha=alpha, beta=beta), *pointers("A", "C")],
        arrays={"A": ArraySpec("float32", (n * k,), "normal"), "C": ArraySpec("float32", (n * n,), "normal")},
        seed=43,
        **check("C", ref, tol),
    )


# ---- merge_pass: every thread merges its pair of sorted runs (cut at n) into out
@BUILTIN.recipe()
def _merge_pass(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    block = _manifest("merge_pass")["threads_per_cta"]
    grid = ctas or 2
    # a run of 2.5 lines at scale 2 (a lane's pair starts 5 lines after its neighbour's: all sets used)
    run = _size(40, scale)
    n = grid * block * 2 * run - 3 * run // 2  # the last pair cut inside its second run, the next absent
    rng = np.random.default_rng(47)
    keys = rng.integers(-1000, 1000, n, dtype=np.int32)  # repeated keys: the merge's tie rule
    for s in range(0, n, run):
        keys[s : s + run] = np.sort(keys[s : s + run])

    def ref(ins, sc):
        out = ins["in"].copy()
        for s in range(0, n, 2 * run):
            out[s : s + 2 * run] = np.sort(out[s : s + 2 * run], kind="stable")
        return {"out": out}

    return Recipe(
        kernel="merge_pass",
        grid=(grid,),
        block=(block,),
        params=[*scalars("i32", n=n, run=run), *pointers("in", "out")],
        arrays={"in": ArraySpec("int32", (n,)), "out": ArraySpec("int32", (n,), "full", value=-7)},
        seed=47,
        **check("out", ref, (0.0, 0.0)),
        fixed={"in": keys},
    )


#: every shipped kernel's recipe: the built-in suite's and the papers' benchmarks'
#: (:mod:`rfmodel.workload.execute.papers`)
RECIPES = {**BUILTIN_RECIPES, **PAPERS_RECIPES}

#: kernel x architecture pairs that have a recipe but do not execute yet, and why (each raises
#: one :class:`ExecutionError`; tests check that they still do, so the table stays true)
KNOWN_GAPS: dict[tuple[str, str], str] = {**PAPERS_KNOWN_GAPS}


def full_size(name: str):
    """The original benchmark's input of papers' kernel ``name``
    (:class:`~rfmodel.workload.execute.papers._common.FullSize`): the scale at which its recipe reaches
    it.  The built-in suite's kernels were written here and have none (an error naming the ones that
    do)."""
    if name not in PAPERS_FULL_SIZES:
        if name in RECIPES:
            raise RfmodelError(
                f"kernel '{name}' is of rfmodel's own suite: it has no original benchmark's "
                "input ('full' sizes a papers' benchmark; `rfmodel workload list --suite "
                "papers`)"
            )
        raise UnknownNameError("papers' benchmark", name, PAPERS_FULL_SIZES)
    return PAPERS_FULL_SIZES[name]


def builtin_recipe(name: str, scale: float | str = 1.0, ctas: int | None = None) -> Recipe:
    """The recipe of shipped kernel ``name`` (built-in or papers') at ``scale`` (1.0: the small default
    size; ``"full"``: a papers' benchmark at its original's input, :func:`full_size`)."""
    from rfmodel.limits import MAX_EXECUTE_SCALE

    if name not in RECIPES:
        raise UnknownNameError("kernel with a launch recipe", name, RECIPES)
    if scale == "full":
        full = full_size(name)
        scale, ctas = full.scale, full.ctas if ctas is None else ctas
    number = isinstance(scale, int | float) and not isinstance(scale, bool)
    if not (number and 0 < scale <= MAX_EXECUTE_SCALE):
        from rfmodel.workload.execute.errors import ExecutionError

        raise ExecutionError(f"scale: expected a number in (0, {MAX_EXECUTE_SCALE}] or 'full', got {scale!r}")
    return RECIPES[name](float(scale), ctas)
