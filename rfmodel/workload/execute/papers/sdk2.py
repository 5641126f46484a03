"""CUDA SDK samples (NVIDIA cuda-samples) of the papers' benchmarks, second group: quasirandomGenerator's two
kernels, mergeSort's merge of elementary intervals and the fft the SDK's FFT samples hand to cuFFT. Recipes
and numpy references.

Each kernel is our own implementation of the sample's algorithm with the sample's launch shape (see the
``original`` key in the kernel's header). The default problem is small; ``scale`` grows it towards the
sample's own size.
"""

from __future__ import annotations

import numpy as np

from rfmodel.workload.execute.launch import Param
from rfmodel.workload.execute.papers.sdk import ULP, U, sorted_runs
from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

from ._common import Registry, check, manifest_entry, same_arrays, shared_bytes, size

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()


# ---- quasirandomGenerator: quasirandomGeneratorKernel
QRNG_DIMS, QRNG_BITS = 3, 31


def _gf2_mul(a: int, b: int) -> int:
    """Product of two GF(2) polynomials (bit i: the coefficient of x^i)."""
    out = 0
    while b:
        if b & 1:
            out ^= a
        a, b = a << 1, b >> 1
    return out


def _gf2_irreducible(count: int) -> list[int]:
    """The first ``count`` irreducible GF(2) polynomials in increasing order, from x (as the sample's)."""
    found: list[int] = []
    cand = 2
    while len(found) < count:
        if all(_gf2_mod(cand, q) != 0 for q in found if q.bit_length() <= cand.bit_length()):
            found.append(cand)
        cand += 1
    return found


def _gf2_mod(a: int, q: int) -> int:
    while a.bit_length() >= q.bit_length():
        a ^= q << (a.bit_length() - q.bit_length())
    return a


def niederreiter_table(dims: int = QRNG_DIMS, bits: int = QRNG_BITS) -> np.ndarray:
    """Base-2 Niederreiter direction numbers (Bratley, Fox and Niederreiter 1992), as the sample's table:
    ``table[d][r]`` is the column of input bit r of dimension d's generator matrix, output bit k (k = 0 the
    most significant) at bit ``bits - 1 - k``. Dimension d uses the d-th irreducible polynomial p (degree
    e); output row k = i e + u reads, shifted by u, the sequence v of the linear recurrence of p^(i+1) whose
    first deg(p^(i+1)) terms are deg(p^i) zeros and then ones."""
    table = np.zeros((dims, bits), np.uint32)
    for d, p in enumerate(_gf2_irreducible(dims)):
        e = p.bit_length() - 1
        v: list[int] = []
        b = 1
        for k in range(bits):
            i, u = divmod(k, e)
            if u == 0:
                m1 = b.bit_length() - 1
                b = _gf2_mul(b, p)
                m = b.bit_length() - 1
                v = [0] * m1 + [1] * (m - m1)
                while len(v) < bits + e:
                    t = len(v)
                    acc = 0
                    for s in range(1, m + 1):
                        acc ^= ((b >> (m - s)) & 1) & v[t - s]
                    v.append(acc)
            for r in range(bits):
                table[d, r] |= np.uint32(v[r + u] << (bits - 1 - k))
    return table


@FAMILY.recipe(16, "128 CTAs, N = 2^20 points per dimension, 3 dimensions", ctas=128)
def _sdk_quasirandom(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """quasirandomGeneratorKernel's launch: 128 x 3 threads (y: the dimension), a grid-stride loop over the
    points. The sample: 128 CTAs, N = 2^20 points per dimension (64 grid strides); here N is 4 * scale grid
    strides of the grid (``ctas`` where given, else 2 CTAs), so ``scale`` 16 at 128 CTAs is the sample's."""
    assert manifest_entry("sdk_quasirandom")["threads_per_cta"] == 384
    grid = ctas or 2
    n = 128 * grid * size(4, scale)
    offset = 0  # the sample's seed
    table = niederreiter_table()
    inv = float(np.float32(1.0) / np.float32(0x80000001))  # the kernel's float32 scale (2^-31)

    def bits_of(idx: np.ndarray) -> np.ndarray:
        out = np.zeros((QRNG_DIMS, idx.size), np.uint32)
        for r in range(QRNG_BITS):
            on = ((idx >> r) & 1).astype(bool)
            out[:, on] ^= table[:, r : r + 1]
        return out

    def ref(ins, sc):
        b = bits_of(np.arange(n, dtype=np.uint64) + offset)
        return {"out": ((b.astype(np.float64) + 1.0) * inv).reshape(-1)}

    def tol(ins):
        # the integer XORs are exact; the conversion of bits + 1 to float rounds once, the product by 2^-31
        # is exact
        return 0.0, U * np.abs(ref(ins, None)["out"])

    return Recipe(
        kernel="sdk_quasirandom",
        grid=(grid,),
        block=(128, QRNG_DIMS),
        params=[*pointers("out"), *scalars("u32", offset=offset, n=n)],
        arrays={
            "out": ArraySpec("float32", (QRNG_DIMS * n,), "full", value=-1.0),
            "dirs": ArraySpec("uint32", (QRNG_DIMS * QRNG_BITS,), "zeros"),
        },
        fixed={"dirs": table.reshape(-1)},
        constants={3: "dirs"},
        seed=111,
        **check("out", ref, tol),
    )


# ---- quasirandomGenerator: inverseCNDKernel (Moro's inverse normal CDF)
def _f32(*c: float) -> tuple[float, ...]:
    """The kernel's float32 constants, as float64."""
    return tuple(float(np.float32(x)) for x in c)


#: Moro's coefficients as the kernel holds them (float32): numerator, denominator (constant term first)
_MORO_A = _f32(2.50662823884, -18.61500062529, 41.39119773534, -25.44106049637)
_MORO_B = _f32(1.0, -8.4735109309, 23.08336743743, -21.06224101826, 3.13082909833)
_MORO_C = _f32(
    0.337475482272615,
    0.976169019091719,
    0.160797971491821,
    2.76438810333863e-02,
    3.8405729373609e-03,
    3.951896511919e-04,
    3.21767881768e-05,
    2.888167364e-07,
    3.960315187e-07,
)
#: the branch point as the kernel's float32 constant: body for p > -0.42f
_MORO_SPLIT = _f32(-0.42)[0]
#: 1 / (2^32 - 1) as the kernel's float32 constant (2^-32)
_MORO_STEP = float(np.float32(1.0) / np.float32(0xFFFFFFFF))


def _horner(c, x):
    """Horner's sum c[k] x^k in float64, its derivative, and the running-error weight sum_k |r_k| |x|^k over
    the partial sums r_k that a fused multiply-add rounds (all but the leading coefficient): first order,
    the float32 evaluation is within u times that weight."""
    r = np.full_like(x, c[-1])
    d = np.zeros_like(x)
    run = np.zeros_like(x)
    ax = np.abs(x)
    for k in range(len(c) - 2, -1, -1):
        d = d * x + r
        r = r * x + c[k]
        run += np.abs(r) * ax**k
    return r, d, run


def _moro_parts(x: np.ndarray):
    """For uint32 samples x, the kernel's arithmetic in float64 (its float32 constants, no roundings):
    (u, p, negate, body, tail), both branches evaluated everywhere."""
    neg = x >= np.uint32(0x80000000)
    xr = np.where(neg, np.uint32(0xFFFFFFFF) - x, x).astype(np.float64)
    u = xr * _MORO_STEP + _MORO_STEP / 2
    p = u - 0.5
    q = p * p
    body = p * _horner(_MORO_A, q)[0] / _horner(_MORO_B, q)[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.log(-np.log(u))
    tail = -_horner(_MORO_C, w)[0]
    return u, p, neg, body, tail


def _moro_err(x: np.ndarray) -> np.ndarray:
    """Bound on |float32 kernel - float64 reference| per sample (first order, each rounding within u of its
    result). u rounds twice (the conversion of the integer, the fused multiply-add), p = u - 1/2 once, q =
    p^2 once; the body: the Horner sums (running-error weights of :func:`_horner`), the product p * A and
    the IEEE division once each; the tail: __logf twice (CUDA's bound outside [0.5, 2]: 3 ulp; here u <= 0.08
    and -log u >= 2.5), then the series' fused multiply-adds. Where a rounding of p may cross the split,
    the branches' difference is added."""
    u, p, neg, body, tail = _moro_parts(x)
    e_u = 2 * U * u
    e_p = e_u + U * np.abs(p)
    q = p * p
    e_q = 2 * np.abs(p) * e_p + U * q
    A, A_der, A_run = _horner(_MORO_A, q)
    B, B_der, B_run = _horner(_MORO_B, q)
    e_A = U * A_run + np.abs(A_der) * e_q
    e_B = U * B_run + np.abs(B_der) * e_q
    e_body = np.abs(A / B) * e_p + np.abs(p / B) * e_A + np.abs(body / B) * e_B + 2 * U * np.abs(body)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = -np.log(u)
        w = np.log(y)
        e_y = e_u / u + 3 * ULP * y
        e_w = e_y / y + 3 * ULP * np.abs(w)
        _, C_der, C_run = _horner(_MORO_C, w)
        e_tail = U * C_run + np.abs(C_der) * e_w
    err = np.where(p > _MORO_SPLIT, e_body, e_tail)
    near = np.abs(p - _MORO_SPLIT) <= e_p
    return err + np.where(near, np.abs(body - tail), 0.0)


@FAMILY.recipe(48, "128 CTAs, n = 3 * 2^20 samples", ctas=128)
def _sdk_inverse_cnd(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """inverseCNDKernel's launch as the sample calls it (no input array: the samples (i + 1) * floor((2^32 -
    1) / (n + 1)) are generated): 128 threads, a grid-stride loop. The sample: 128 CTAs, n = 3 * 2^20 (192
    grid strides); here n is 4 * scale grid strides of the grid (``ctas`` where given, else 2 CTAs), so
    ``scale`` 48 at 128 CTAs is the sample's."""
    assert manifest_entry("sdk_inverse_cnd")["threads_per_cta"] == 128
    grid = ctas or 2
    n = 128 * grid * size(4, scale)
    gap = 0xFFFFFFFF // (n + 1)

    def samples():
        return (np.arange(1, n + 1, dtype=np.uint64) * gap).astype(np.uint32)

    def ref(ins, sc):
        x = samples()
        _, p, neg, body, tail = _moro_parts(x)
        z = np.where(p > _MORO_SPLIT, body, tail)
        return {"out": np.where(neg, -z, z)}

    return Recipe(
        kernel="sdk_inverse_cnd",
        grid=(grid,),
        block=(128,),
        params=[
            Param("out", "ptr", array="out"),
            Param("in", "u64", 0),  # a null pointer, as the sample
            Param("n", "u32", n),
        ],
        arrays={"out": ArraySpec("float32", (n,), "full", value=-99.0)},
        seed=222,
        **check("out", ref, lambda ins: (0.0, _moro_err(samples()))),
    )


# ---- mergeSort: mergeElementaryIntervalsKernel<1>
MSM_SAMPLE = 128  # the sample's SAMPLE_STRIDE: elements between rank samples, threads per CTA
MSM_RUN = 1024  # the first merge stage's run length (SHARED_SIZE_LIMIT: what mergeSortShared leaves sorted)


def merge_limits(keys: np.ndarray, run: int) -> tuple[np.ndarray, np.ndarray]:
    """What the sample's generateSampleRanksKernel and mergeRanksAndIndicesKernel give for ``keys`` (sorted
    runs of ``run``, whole pairs of runs): per segment (a pair of runs a, b), every 128th element of each
    run is a sample; a's sample at j has rank j in a and (elements of b below it) in b, b's sample at j has
    rank j in b and (elements of a at most it) in a. The samples merged in order (ties: a's first) give the
    interval limits: limits_a / limits_b[c] is where interval c starts in a / b."""
    per = 2 * run // MSM_SAMPLE
    segs = keys.size // (2 * run)
    lim_a = np.zeros(segs * per, np.uint32)
    lim_b = np.zeros(segs * per, np.uint32)
    for s in range(segs):
        a = keys[2 * s * run : (2 * s + 1) * run]
        b = keys[(2 * s + 1) * run : (2 * s + 2) * run]
        j = np.arange(0, run, MSM_SAMPLE)
        ra_a, rb_a = j, np.searchsorted(b, a[j], side="left")  # a's samples: ranks in a, in b
        ra_b, rb_b = np.searchsorted(a, b[j], side="right"), j  # b's samples
        for first, second, out in ((ra_a, ra_b, lim_a), (rb_a, rb_b, lim_b)):
            # merge a's samples' ranks with b's (both ascending) as the sample: a's before b's equal ones
            pos1 = np.searchsorted(second, first, side="left") + np.arange(first.size)
            pos2 = np.searchsorted(first, second, side="right") + np.arange(second.size)
            out[s * per + pos1] = first
            out[s * per + pos2] = second
    return lim_a, lim_b


@FAMILY.recipe(1024, "N = 4M keys (4194304), 32768 CTAs per merge stage")
def _sdk_mergesort_merge(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """mergeElementaryIntervalsKernel<1>'s launch: 128 threads, one CTA per elementary interval, N / 128
    CTAs. The sample sorts 4M keys below 65536 (32768 CTAs at each merge stage, ``scale`` 1024 here);
    the default merges 2 pairs of 1024-key runs (the first merge stage; 32 CTAs). The sorted runs are what
    mergeSortSharedKernel leaves (values: the keys' original positions, as the sample's), the limits what
    the sample's two rank kernels compute from them (:func:`merge_limits`); ``ctas`` is not used."""
    assert manifest_entry("sdk_mergesort_merge")["threads_per_cta"] == MSM_SAMPLE
    run = MSM_RUN
    n = 2 * run * size(2, scale)
    rng = np.random.default_rng(333)
    raw = rng.integers(0, 65536, n).astype(np.uint32)  # the sample's numValues
    order = np.argsort(raw.reshape(-1, run), axis=1, kind="stable")
    keys = np.take_along_axis(raw.reshape(-1, run), order, 1).reshape(-1)
    vals = (order + np.arange(0, n, run)[:, None]).astype(np.uint32).reshape(-1)
    lim_a, lim_b = merge_limits(keys, run)

    def ref(ins, sc):
        return sorted_runs(ins, 2 * run)  # a's elements before b's equal ones

    return Recipe(
        kernel="sdk_mergesort_merge",
        shared_bytes=shared_bytes("sdk_mergesort_merge"),
        grid=(n // MSM_SAMPLE,),
        block=(MSM_SAMPLE,),
        params=[
            *pointers("dst_key", "dst_val", "src_key", "src_val", "limits_a", "limits_b"),
            *scalars("u32", run=run, n=n),
        ],
        arrays={
            **same_arrays(("dst_key", "dst_val"), ArraySpec("uint32", (n,), "full", value=0xFFFFFFFF)),
            **same_arrays(("src_key", "src_val"), ArraySpec("uint32", (n,), "zeros")),
            "limits_a": ArraySpec("uint32", (lim_a.size,), "zeros"),
            "limits_b": ArraySpec("uint32", (lim_b.size,), "zeros"),
        },
        fixed={"src_key": keys, "src_val": vals, "limits_a": lim_a, "limits_b": lim_b},
        seed=333,
        **check(("dst_key", "dst_val"), ref),
    )


# ---- fft: the batched complex transform the SDK's FFT samples hand to cuFFT (no original kernel)
FFT_N = 512  # points per signal: one 64-thread CTA, three radix-8 passes


@FAMILY.recipe(128, "a batch of 2048 512-point signals (1M points; no original kernel)")
def _sdk_fft(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """sdk_fft's launch: one 64-thread CTA per 512-point complex signal, a batch of signals. There is no
    sample's size to take (the samples call cuFFT); the manifest's full size is a batch of 2048 signals (1M
    points, ``scale`` 128); the default is 16 signals. ``ctas`` is not used (the grid is the batch)."""
    assert manifest_entry("sdk_fft")["threads_per_cta"] == FFT_N // 8
    batch = size(16, scale)
    n = batch * FFT_N

    def signals(ins):
        x = ins["src"].astype(np.float64).reshape(batch, FFT_N, 2)
        return x[..., 0] + 1j * x[..., 1]

    def ref(ins, sc):
        y = np.fft.fft(signals(ins), axis=1)
        return {"dst": np.stack([y.real, y.imag], axis=-1).reshape(-1)}

    def tol(ins):
        # Every intermediate value is a partial DFT of a subset of the signal's points, so its |re| + |im| is
        # at most theirs, and the later passes carry an error on with unit-modulus weights: each of the three
        # passes adds at most (twiddle error + roundings) times the signal's sum of |re| + |im|. A twiddle
        # comes from __sincosf (MUFU.SIN/COS: absolute error about 2^-21 for these angles; 2^-20 allowed for
        # each of cos and sin, which the complex product turns into at most 2 * 2^-20 of the point's |re| +
        # |im|, 4 * 2^-20 allowed); a point meets at most three butterfly levels, a constant product and the
        # twiddle's product and multiply-add: 16 roundings allowed.
        mag = np.abs(ins["src"].astype(np.float64)).reshape(batch, -1).sum(axis=1)
        per_pass = 4 * 2.0**-20 + 16 * U
        return 0.0, np.repeat(3 * per_pass * mag, 2 * FFT_N)

    return Recipe(
        kernel="sdk_fft",
        shared_bytes=shared_bytes("sdk_fft"),
        grid=(batch,),
        block=(FFT_N // 8,),
        params=[*pointers("dst", "src")],
        arrays={
            "dst": ArraySpec("float32", (2 * n,), "full", value=-99.0),
            "src": ArraySpec("float32", (2 * n,), "uniform", -1.0, 1.0),
        },
        seed=444,
        **check("dst", ref, tol),
    )
