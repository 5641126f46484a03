"""CUDA SDK samples (NVIDIA cuda-samples) of the papers' benchmarks: recipes and numpy references.

Each kernel is our own implementation of the sample's algorithm with the sample's launch shape (see the
``original`` key in the kernel's header). The default problem is small; ``scale`` grows it towards the
sample's own size.
"""

from __future__ import annotations

import numpy as np

from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

from ._common import EPS32, Registry, check, manifest_entry, option_arrays, same_arrays, shared_bytes, size

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()

U = EPS32
#: 1 ulp of a normal float32 y is at most 2 * EPS32 * |y|
ULP = 2 * EPS32


# ---- BlackScholes: BlackScholesGPU
_CND_C = (0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429)
_RSQRT2PI = 0.39894228040143267794


def _cnd_parts(d):
    """The sample's polynomial CDF in float64: (value, k, poly, exp(-d^2/2))."""
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    poly = np.zeros_like(k)
    for c in _CND_C[::-1]:
        poly = (poly + c) * k
    e = np.exp(-0.5 * d * d)
    tail = _RSQRT2PI * e * poly
    return np.where(d > 0, 1.0 - tail, tail), k, poly, e


def _cnd_err(d, e_d):
    """Bound on |float32 cnd(d~) - cnd(d)| for |d~ - d| <= e_d (first order, CUDA's documented bounds:
    __fdividef 2 ulp, __expf 2 + floor(1.173 |x|) ulp)."""
    _, k, poly, e = _cnd_parts(d)
    tail = _RSQRT2PI * e * poly
    mag = sum(abs(c) * k ** (i + 1) for i, c in enumerate(_CND_C))  # sum of |terms| of the polynomial
    dmag = sum((i + 1) * abs(c) * k ** (i + 1) for i, c in enumerate(_CND_C))  # k * |dpoly/dk|
    x = 0.5 * d * d
    r_k = U + 2 * ULP  # the fma in 1 + 0.2316419|d|, then __fdividef
    e_poly = dmag * r_k + 10 * U * mag  # k's error through the polynomial, Horner's roundings
    r_exp = 2 * U * x + ULP * (2 + np.floor(1.173 * x))  # the argument's 2 roundings, __expf's bound
    e_tail = tail * (r_exp + 3 * U) + _RSQRT2PI * e * e_poly
    # the slope of the CDF is at most 1/sqrt(2 pi) < 0.4 (0.5 covers the polynomial's own slope); at d ~ 0
    # the formula's two branches differ by |1 - 2 tail(0)|
    jump = abs(1.0 - 2.0 * _RSQRT2PI * sum(_CND_C))
    return 0.5 * e_d + e_tail + U + np.where(np.abs(d) <= e_d, jump, 0.0)


@FAMILY.recipe(1953.125, "4M options (OPT_N = 4000000), 2 per thread")
def _sdk_blackscholes(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """BlackScholesGPU's launch: 128 threads, each pricing two options; the sample prices 4M options
    (15625 CTAs, ``scale`` ~1950); the default is 2048 options (8 CTAs)."""
    block = manifest_entry("sdk_blackscholes")["threads_per_cta"]
    assert block == 128
    n = 2 * size(1024, scale, 64)
    grid = -(-(n // 2) // block)
    rate, vol = 0.02, 0.30  # the sample's riskless rate and volatility
    r, v = float(np.float32(rate)), float(np.float32(vol))

    def inter(ins):
        s, x, t = (ins[k].astype(np.float64) for k in ("spot", "strike", "years"))
        root = np.sqrt(t)
        num = np.log(s / x) + (r + 0.5 * v * v) * t
        d1 = num / (v * root)
        d2 = d1 - v * root
        disc = np.exp(-r * t)
        return s, x, t, root, num, d1, d2, disc

    def ref(ins, sc):
        s, x, t, root, num, d1, d2, disc = inter(ins)
        n1, n2 = _cnd_parts(d1)[0], _cnd_parts(d2)[0]
        return {"call": s * n1 - x * disc * n2, "put": x * disc * (1 - n2) - s * (1 - n1)}

    def errs(ins):
        # first-order propagation of each operation's bound (CUDA's documented ulp bounds: __logf absolute
        # 2^-21.41 on [0.5, 2], else 3 ulp; rsqrtf 2 ulp; __fdividef 2 ulp; __expf 2 + floor(1.173|x|) ulp)
        s, x, t, root, num, d1, d2, disc = inter(ins)
        lq = np.log(s / x)
        e_log = U + 2.0**-21.41 + 3 * ULP * np.abs(lq)  # s/x rounded, then __logf
        a = (r + 0.5 * v * v) * t
        e_num = e_log + 3 * U * np.abs(a) + U * np.abs(num)
        den = v * root
        r_den = 2 * ULP + 2 * ULP + U  # rsqrtf, __fdividef(1, .), v * root
        e_d1 = np.abs(d1) * (2 * ULP + r_den) + e_num / den
        e_d2 = e_d1 + r_den * den + U * np.abs(d2)
        n1, n2 = _cnd_parts(d1)[0], _cnd_parts(d2)[0]
        e_n1, e_n2 = _cnd_err(d1, e_d1), _cnd_err(d2, e_d2)
        e_disc = disc * (U * r * t + ULP * (2 + np.floor(1.173 * r * t)))
        xd = x * disc
        e_call = s * e_n1 + xd * e_n2 + x * n2 * e_disc + 3 * U * (s * n1 + xd * n2)
        e_put = xd * e_n2 + x * (1 - n2) * e_disc + s * e_n1 + 4 * U * (xd * (1 - n2) + s * (1 - n1))
        return {"call": e_call, "put": e_put}

    return Recipe(
        kernel="sdk_blackscholes",
        grid=(grid,),
        block=(block,),
        params=[
            *pointers("call", "put", "spot", "strike", "years"),
            *scalars("f32", rate=rate, vol=vol),
            *scalars("i32", n=n),
        ],
        arrays={
            **same_arrays(("call", "put"), ArraySpec("float32", (n,), "full", value=-1.0)),
            **option_arrays(n),
        },
        seed=101,
        **check(("call", "put"), ref, bounds=errs),
    )


# ---- binomialOptions: binomialOptionsKernel
BIN_MAX_STEPS = 2048


@FAMILY.recipe(512, "1024 options, NUM_STEPS 2048", tested=128)
def _sdk_binomial(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """binomialOptionsKernel's launch: one 128-thread CTA per option. The sample prices 1024 options on
    2048-step trees; the default is 2 options on 256-step trees (``scale`` 8 reaches 2048 steps), the
    option data in constant bank 3 as the sample's ``__constant__`` array."""
    assert manifest_entry("sdk_binomial")["threads_per_cta"] == 128
    steps = min(size(256, scale, 16), BIN_MAX_STEPS)
    nopt = size(2, scale)
    rng = np.random.default_rng(202)
    S = rng.uniform(5.0, 30.0, nopt).astype(np.float32)
    X = rng.uniform(1.0, 30.0, nopt).astype(np.float32)  # the sample: 1 .. 100 (most out of the money)
    T = rng.uniform(0.25, 10.0, nopt).astype(np.float32)
    R, V = 0.06, 0.10  # the sample's rate and volatility
    # the host's preprocessing (as the sample's binomialOptionsGPU), stored as float32
    dt = T.astype(np.float64) / steps
    vdt = V * np.sqrt(dt)
    df = np.exp(-R * dt)
    up, down = np.exp(vdt), np.exp(-vdt)
    pu = (np.exp(R * dt) - down) / (up - down)
    # (the kernel's table has room for 1024 options; the bank is filled with the ones launched)
    table = np.zeros((nopt, 5), np.float32)
    table[:] = np.stack([S, X, vdt, pu * df, (1.0 - pu) * df], axis=1).astype(np.float32)

    def leaves(opt):
        s, x, v = (table[:nopt, c].astype(np.float64)[:, None] for c in range(3))
        arg = v * (2.0 * np.arange(steps + 1) - steps)
        e = np.exp(arg)
        return np.maximum(s * e - x, 0.0), s * e, np.abs(arg)

    def walk(vals, errs=None):
        pud, pdd = table[:nopt, 3].astype(np.float64)[:, None], table[:nopt, 4].astype(np.float64)[:, None]
        for _ in range(steps):
            if errs is not None:  # two roundings per node (a product, then a fused multiply-add)
                errs = (
                    pud * errs[:, 1:] + pdd * errs[:, :-1] + 2 * U * (pud * vals[:, 1:] + pdd * vals[:, :-1])
                )
            vals = pud * vals[:, 1:] + pdd * vals[:, :-1]
        return vals[:, 0], (None if errs is None else errs[:, 0])

    def ref(ins, sc):
        return {"result": walk(leaves(None)[0])[0]}

    def tol(ins):
        # leaves: __expf's 2 + floor(1.173|x|) ulp, the argument's rounding (u|x| relative), the fused
        # s*e - x (one rounding); max(., 0) does not grow an error; then each level's two roundings
        pay, se, ax = leaves(None)
        e_leaf = se * (ULP * (2 + np.floor(1.173 * ax)) + U * ax + U) + U * pay
        return 0.0, walk(pay, e_leaf)[1]

    return Recipe(
        kernel="sdk_binomial",
        shared_bytes=shared_bytes("sdk_binomial"),
        grid=(nopt,),
        block=(128,),
        params=[*pointers("result"), *scalars("i32", steps=steps)],
        arrays={
            "result": ArraySpec("float32", (nopt,), "full", value=-1.0),
            "options": ArraySpec("float32", (nopt * 5,), "zeros"),
        },
        fixed={"options": table.reshape(-1)},
        constants={3: "options"},
        seed=202,
        **check("result", ref, tol),
    )


# ---- matrixMul: MatrixMulCUDA<32>
@FAMILY.recipe(5, "A 320x320, B 640x320")
def _sdk_matrixmul(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """MatrixMulCUDA<32>'s launch: 32x32 threads per CTA, one per element of a 32x32 tile of C. The sample
    multiplies A 320x320 by B (640 wide, 320 tall) (20x10 CTAs, 10 tile steps; ``scale`` 5); the default
    is A 64x64, B 128 wide (4x2 CTAs, 2 tile steps). The sample's shape: B twice as wide as A."""
    assert manifest_entry("sdk_matrixmul")["threads_per_cta"] == 1024
    wA = 32 * size(2, scale)
    hA, wB = wA, 2 * wA

    def ref(ins, sc):
        A = ins["A"].astype(np.float64).reshape(hA, wA)
        B = ins["B"].astype(np.float64).reshape(wA, wB)
        return {"C": (A @ B).reshape(-1)}

    def tol(ins):
        # wA fused multiply-adds in sequence: at most wA roundings of partial sums bounded by sum |a||b|
        A = np.abs(ins["A"].astype(np.float64).reshape(hA, wA))
        B = np.abs(ins["B"].astype(np.float64).reshape(wA, wB))
        return 0.0, (wA * U * (A @ B)).reshape(-1)

    return Recipe(
        kernel="sdk_matrixmul",
        shared_bytes=shared_bytes("sdk_matrixmul"),
        grid=(wB // 32, hA // 32),
        block=(32, 32),
        params=[*pointers("C", "A", "B"), *scalars("i32", wA=wA, wB=wB)],
        arrays={
            "C": ArraySpec("float32", (hA * wB,), "full", value=-1.0),
            "A": ArraySpec("float32", (hA * wA,), "uniform", -1.0, 1.0),
            "B": ArraySpec("float32", (wA * wB,), "uniform", -1.0, 1.0),
        },
        seed=303,
        **check("C", ref, tol),
    )


# ---- scan: scanExclusiveShared, scanExclusiveShared2, uniformUpdate (unsigned ints, wrapping sums)
SCAN_SEG = 1024  # elements per first-pass CTA (256 threads x uint4)


def _seg_exclusive(x: np.ndarray, seg: int) -> np.ndarray:
    """Exclusive prefix sums of uint32 ``x`` within segments of ``seg`` elements, wrapping as uint32."""
    y = x.reshape(-1, seg).astype(np.uint64)
    inc = np.cumsum(y, axis=1) % (1 << 32)
    return ((inc - y) % (1 << 32)).astype(np.uint32).reshape(-1)


@FAMILY.recipe(1664, "N = 13*2^20/2 uints, segments of 1024 (6656 CTAs)")
def _sdk_scan_exclusive(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """scanExclusiveShared's launch as the sample's large-array path: 256 threads, segments of 1024 (8
    doubling steps). The sample scans 13*2^20/2 uints (6656 CTAs, ``scale`` 1664); the default is 4 CTAs."""
    assert manifest_entry("sdk_scan_exclusive")["threads_per_cta"] == 256
    n = SCAN_SEG * size(4, scale)

    def ref(ins, sc):
        return {"dst": _seg_exclusive(ins["src"], SCAN_SEG)}

    return Recipe(
        kernel="sdk_scan_exclusive",
        shared_bytes=shared_bytes("sdk_scan_exclusive"),
        grid=(n // SCAN_SEG,),
        block=(256,),
        params=[*pointers("dst", "src"), *scalars("u32", size=SCAN_SEG)],
        arrays={
            "dst": ArraySpec("uint32", (n,), "zeros"),
            "src": ArraySpec("uint32", (n,), "randint", 0, 2**31),
        },  # rand()'s range, as the sample
        seed=404,
        **check("dst", ref),
    )


@FAMILY.recipe(22.1867, "6656 segment totals (26 CTAs)")
def _sdk_scan_exclusive2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """scanExclusiveShared2's launch: 256 threads, one segment total each, scanned in groups of 256
    segments (the sample's 2^18-element arrays: 8 doubling steps); the last CTA is partly idle. The sample
    has 6656 segments (26 CTAs, ``scale`` ~22); the default is 300 (2 CTAs). Its inputs are the first
    pass's output and the input, as in the sample."""
    assert manifest_entry("sdk_scan_exclusive2")["threads_per_cta"] == 256
    segs = size(300, scale)
    group = 256
    rng = np.random.default_rng(505)
    src = rng.integers(0, 2**31, segs * SCAN_SEG).astype(np.uint32)
    first = _seg_exclusive(src, SCAN_SEG)
    grid = -(-segs // 256)

    def ref(ins, sc):
        tops = (
            ins["first_pass"].reshape(-1, SCAN_SEG)[:, -1].astype(np.uint64)
            + ins["src"].reshape(-1, SCAN_SEG)[:, -1]
        ) % (1 << 32)
        pad = np.zeros(grid * 256, np.uint32)
        pad[:segs] = tops.astype(np.uint32)
        out = _seg_exclusive(pad, group)[:segs]
        return {"offsets": out}

    return Recipe(
        kernel="sdk_scan_exclusive2",
        shared_bytes=shared_bytes("sdk_scan_exclusive2"),
        grid=(grid,),
        block=(256,),
        params=[*pointers("offsets", "first_pass", "src"), *scalars("u32", segments=segs, size=group)],
        arrays={
            "offsets": ArraySpec("uint32", (segs,), "zeros"),
            **same_arrays(("first_pass", "src"), ArraySpec("uint32", (segs * SCAN_SEG,), "zeros")),
        },
        fixed={"first_pass": first, "src": src},
        seed=505,
        **check("offsets", ref),
    )


@FAMILY.recipe(832, "N = 13*2^20/2 uints (6656 CTAs)")
def _sdk_scan_update(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """uniformUpdate's launch: 256 threads, one 1024-element segment per CTA. The sample updates
    13*2^20/2 uints (6656 CTAs, ``scale`` 832); the default is 8 CTAs."""
    assert manifest_entry("sdk_scan_update")["threads_per_cta"] == 256
    segs = size(8, scale)

    def ref(ins, sc):
        d = ins["data"].reshape(segs, SCAN_SEG).astype(np.uint64) + ins["offsets"][:, None]
        return {"data": (d % (1 << 32)).astype(np.uint32).reshape(-1)}

    return Recipe(
        kernel="sdk_scan_update",
        shared_bytes=shared_bytes("sdk_scan_update"),
        grid=(segs,),
        block=(256,),
        params=[*pointers("data", "offsets")],
        arrays={
            "data": ArraySpec("uint32", (segs * SCAN_SEG,), "randint", 0, 2**32),
            "offsets": ArraySpec("uint32", (segs,), "randint", 0, 2**32),
        },
        seed=606,
        **check("data", ref),
    )


# ---- dct8x8: CUDAkernel2DCT
def _dct_matrix() -> np.ndarray:
    """The orthonormal 8-point DCT-II: row k, column n."""
    k, n = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    c = np.where(k == 0, np.sqrt(1 / 8), 0.5)
    return c * np.cos((2 * n + 1) * k * np.pi / 16)


@FAMILY.recipe(8, "512x512 image")
def _sdk_dct8x8(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """CUDAkernel2DCT's launch: 8x4x2 threads per 32x16 tile. The sample transforms a 512x512 image
    (16x32 CTAs, ``scale`` 8); the default is 64x64 (2x4 CTAs); the row pitch is the width, as the sample's
    pitched allocation of a 512-wide image."""
    assert manifest_entry("sdk_dct8x8")["threads_per_cta"] == 64
    w = h = 32 * size(2, scale)
    C = _dct_matrix()

    def blocks(img):
        return img.astype(np.float64).reshape(h // 8, 8, w // 8, 8).transpose(0, 2, 1, 3)

    def unblock(b):
        return b.transpose(0, 2, 1, 3).reshape(-1)

    def ref(ins, sc):
        return {"dst": unblock(C @ blocks(ins["src"]) @ C.T)}

    def tol(ins):
        # One butterfly pass: every output is 1/sqrt(8) times at most K1+K3+K5+K7 = 3.625 times sums of its
        # inputs; along any output's path there are at most 8 rounding sites (2 butterfly levels, a product
        # and 3 fused multiply-adds, the 1/sqrt(8) scaling, the two float32 constants), and the sites of
        # one level see disjoint inputs: error <= 8 u * 0.3536 * 3.625 * sum |inputs|. The second pass
        # carries the first pass's errors through |C| and adds its own.
        g = 8 * U * 0.3535533905932737 * 3.625
        X = blocks(ins["src"])
        e1 = g * np.abs(X).sum(axis=3, keepdims=True) * np.ones((1, 1, 1, 8))  # row pass, per row
        Y1 = X @ C.T
        e2 = np.abs(C) @ e1 + g * np.abs(Y1).sum(axis=2, keepdims=True)
        return 0.0, unblock(e2)

    return Recipe(
        kernel="sdk_dct8x8",
        shared_bytes=shared_bytes("sdk_dct8x8"),
        grid=(w // 32, h // 16),
        block=(8, 4, 2),
        params=[*pointers("dst", "src"), *scalars("i32", stride=w)],
        arrays={
            "dst": ArraySpec("float32", (h * w,), "full", value=-1.0),
            # 8-bit pixels, as the sample's image
            "src": ArraySpec("float32", (h * w,), "uniform", 0.0, 255.0),
        },
        seed=707,
        **check("dst", ref, tol),
    )


# ---- mergeSort: mergeSortSharedKernel<1>
MS_TILE = 1024


def sorted_runs(ins: dict, run: int) -> dict:
    """mergeSort's outputs: each run of ``run`` keys of ``src_key`` sorted, stably (ties keep their order, as
    the merges do), into ``dst_key``, the values of ``src_val`` carried along into ``dst_val``."""
    k = ins["src_key"].reshape(-1, run)
    order = np.argsort(k, axis=1, kind="stable")
    v = ins["src_val"].reshape(-1, run)
    return {
        "dst_key": np.take_along_axis(k, order, 1).reshape(-1),
        "dst_val": np.take_along_axis(v, order, 1).reshape(-1),
    }


@FAMILY.recipe(2048, "N = 4M keys (4194304), 4096 CTAs of 1024", tested=512)
def _sdk_mergesort_shared(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """mergeSortSharedKernel<1>'s launch: 512 threads sort 1024 pairs per CTA (10 merge rounds). The sample
    sorts 4M keys below 65536 with values 0, 1, 2 ... (4096 CTAs, ``scale`` 2048); the default is 2 CTAs."""
    assert manifest_entry("sdk_mergesort_shared")["threads_per_cta"] == 512
    n = MS_TILE * size(2, scale)

    def ref(ins, sc):
        return sorted_runs(ins, MS_TILE)

    return Recipe(
        kernel="sdk_mergesort_shared",
        shared_bytes=shared_bytes("sdk_mergesort_shared"),
        grid=(n // MS_TILE,),
        block=(512,),
        params=[*pointers("dst_key", "dst_val", "src_key", "src_val"), *scalars("u32", length=MS_TILE)],
        arrays={
            **same_arrays(("dst_key", "dst_val"), ArraySpec("uint32", (n,), "zeros")),
            "src_key": ArraySpec("uint32", (n,), "randint", 0, 65536),  # the sample's numValues
            "src_val": ArraySpec("uint32", (n,), "arange"),
        },
        seed=808,
        **check(("dst_key", "dst_val"), ref),
    )
