"""Rodinia 3.1 (CUDA) kernels of the papers' benchmarks, part 3: kmeans' invert_mapping, particlefilter's
(float build) normalize_weights_kernel and find_index_kernel, and srad (v1)'s extract, compress and reduce;
recipes and numpy references.

Each recipe's default problem is a small one of the original's shape (the same CTA shape and the same
per-thread work); ``scale`` grows the problem towards the original's standard input (named per recipe).
"""

from __future__ import annotations

import numpy as np

from rfmodel.workload.execute.launch import Param
from rfmodel.workload.execute.papers.rodinia import resampling_recipe
from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

from ._common import EPS32, Registry, check, manifest_entry, same_arrays, shared_bytes, size

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()

INT_MAX = 2**31 - 1


# ---- kmeans -------------------------------------------------------------------------------------------
KM_FEATURES = 34  #: kdd_cup's features


@FAMILY.recipe(241.220703125, "kdd_cup: 494020 points, 34 features")
def _rd_kmeans_invert(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """invert_mapping's launch: 256 threads, one per point, on a 1-D grid of side * side CTAs, side =
    ceil(sqrt(ceil(n / 256))) (the original sizes it for kmeansPoint's square grid); ``ctas`` is not used.
    34 features at every scale (the loop keeps the original's length), 2048 points by default, 2048 * scale;
    scale 241.22 is kdd_cup's 494020 points. A transposition: the output is compared exactly."""
    block = manifest_entry("rd_kmeans_invert")["threads_per_cta"]
    nf = KM_FEATURES
    n = size(2048, scale, 1)
    per = -(-n // block)
    side = int(np.ceil(np.sqrt(per)))
    while side * side < per:
        side += 1

    def ref(ins, sc):
        return {"dst": ins["src"].reshape(n, nf).T.reshape(-1)}

    return Recipe(
        kernel="rd_kmeans_invert",
        grid=(side * side,),
        block=(block,),
        params=[*pointers("src", "dst"), *scalars("i32", npts=n, nfeat=nf)],
        arrays={
            "src": ArraySpec("float32", (n * nf,), "uniform", 0.0, 1.0),
            "dst": ArraySpec("float32", (n * nf,)),
        },
        seed=351,
        **check("dst", ref, (0.0, 0.0)),  # copies: exact
    )


# ---- particlefilter (float build) ---------------------------------------------------------------------
PF_BLOCK = 512
PF_UNIT = 2**20  #: the weights are multiples of 2**-20 summing to exactly 1 (see _rd_pf_normalize)


def _pf_particles(scale: float) -> int:
    """250 particles by default, 250 * scale; scale 4 is the original's run (-np 1000)."""
    return size(250, scale, 2)


def _lcg(seed: int) -> int:
    """The generator's step in C int arithmetic: the product wraps to 32 bits, ``%`` truncates."""
    nxt = (1103515245 * seed + 12345) & 0xFFFFFFFF
    nxt = nxt - 2**32 if nxt >= 2**31 else nxt
    return int(np.fmod(nxt, INT_MAX))


def _pf_first_draw(n: int, s) -> np.float64:
    """The first systematic draw u1 in [0, 1/n): 1/n times |s / INT_MAX| for the generator's value ``s``."""
    return (1.0 / np.float64(n)) * abs(np.float64(s) / np.float64(INT_MAX))


@FAMILY.recipe(4, "-np 1000: 1000 particles")
def _rd_pf_normalize(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """normalize_weights_kernel's launch: 512 threads, one per particle, ceil(n / 512) CTAs (the original's);
    ``ctas`` is not used. Particle 0's thread builds the n-entry table alone (the trip).

    The original has two races between CTAs: thread 0 of CTA 0 reads every weight while other CTAs divide
    theirs, and the other CTAs read draw[0] while CTA 0 writes it. The inputs make both harmless, so the
    result does not depend on the order the CTAs run in: the weights are multiples of 2**-20 that sum to
    exactly 1 and total[0] is that sum, 1.0 (a division that changes nothing, and running sums that are
    exact); draw[0] holds, before the launch, the offset CTA 0 will write. Every operation is then one IEEE
    double operation the reference repeats in the same order: all outputs are compared exactly."""
    assert manifest_entry("rd_pf_normalize")["threads_per_cta"] == PF_BLOCK
    n = _pf_particles(scale)
    rng = np.random.default_rng(361)
    counts = rng.integers(1, 2 * PF_UNIT // n, n)
    counts[-1] = 0
    counts[-1] = PF_UNIT - counts.sum()
    while counts[-1] <= 0:  # keep every weight positive
        k = int(rng.integers(0, n - 1))
        take = min(counts[k] - 1, 1 - counts[-1])
        counts[k] -= take
        counts[-1] += take
    weights = counts.astype(np.float64) / PF_UNIT
    seeds = rng.integers(1, 2**31 - 1, n).astype(np.int32)
    s0 = _lcg(int(seeds[0]))
    offset = _pf_first_draw(n, s0)
    draw0 = np.zeros(n)
    draw0[0] = offset

    def ref(ins, sc):
        w = ins["weights"] / ins["total"][0]
        seed = ins["seed"].copy()
        seed[0] = _lcg(int(seed[0]))
        u1 = _pf_first_draw(n, seed[0])
        return {"weights": w, "cdf": np.cumsum(w), "draw": u1 + np.arange(n) / np.float64(n), "seed": seed}

    exact = (0.0, 0.0)
    return Recipe(
        kernel="rd_pf_normalize",
        grid=(-(-n // PF_BLOCK),),
        block=(PF_BLOCK,),
        params=[*pointers("weights"), *scalars("i32", n=n), *pointers("total", "cdf", "draw", "seed")],
        arrays={
            "weights": ArraySpec("float64", (n,)),
            "total": ArraySpec("float64", (1,), "ones"),
            **same_arrays(("cdf", "draw"), ArraySpec("float64", (n,))),
            "seed": ArraySpec("int32", (n,)),
        },
        fixed={"weights": weights, "draw": draw0, "seed": seeds},
        outputs=["weights", "cdf", "draw", "seed"],
        seed=361,
        shared_bytes=shared_bytes("rd_pf_normalize"),
        reference=ref,
        tolerance={"weights": exact, "cdf": exact, "draw": exact},
    )


@FAMILY.recipe(4, "-np 1000: 1000 particles")
def _rd_pf_find_index(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """find_index_kernel's launch: 512 threads, one per particle, ceil(n / 512) CTAs (the original's);
    ``ctas`` is not used. Weights are random (positive), the draws systematic as the original's (u1 + p / n
    with u1 in [0, 1/n)), so a thread's search runs about n / 2 steps on average; the last draw may lie above
    the table (no entry found: the last particle). Copies: compared exactly."""
    assert manifest_entry("rd_pf_find_index")["threads_per_cta"] == PF_BLOCK
    n = _pf_particles(scale)
    params = [Param("weights", "ptr", array="weights"), Param("n", "i32", n)]
    weights = ArraySpec("float64", (n,), "full", value=1.0 / n)
    return resampling_recipe("rd_pf_find_index", n, PF_BLOCK, (371, 372), params, {"weights": weights})


# ---- srad (v1) ----------------------------------------------------------------------------------------
SRAD1_THREADS = 512
SRAD1_PIXELS = 502 * 458  #: the original's run (./srad 100 0.5 502 458)


def _srad1_pixels(scale: float) -> int:
    """4600 pixels by default (9 CTAs, the last one partly idle), 4600 * scale; scale 49.98 is the
    original's 502 x 458 = 229916."""
    return size(4600, scale, 1)


def _srad1_recipe(name: str, n: int, init: ArraySpec, seed: int, ref, tol) -> Recipe:
    assert manifest_entry(name)["threads_per_cta"] == SRAD1_THREADS
    return Recipe(
        kernel=name,
        grid=(-(-n // SRAD1_THREADS),),
        block=(SRAD1_THREADS,),
        params=[*scalars("i64", npix=n), *pointers("img")],
        arrays={"img": init},
        seed=seed,
        **check("img", ref, tol),
    )


@FAMILY.recipe(49.98174, "502 x 458 = 229916 pixels")
def _rd_srad1_extract(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """extract's launch: 512 threads, one per pixel, ceil(n / 512) CTAs (the original's); ``ctas`` is not
    used. The input is an 8-bit image's pixels (whole numbers 0..255, as the original reads them).

    Tolerance: x / 255 is one rounding (relative EPS32), which exp turns into a relative error of at most
    (x / 255) * EPS32 (x / 255 <= 1, so the second-order term is below EPS32**2); expf is within 2 ulp
    (CUDA C Programming Guide, single-precision functions), and 2 ulp <= 4 * EPS32 * |y|."""
    n = _srad1_pixels(scale)

    def ref(ins, sc):
        return {"img": np.exp(ins["img"].astype(np.float64) / 255.0)}

    def tol(ins):
        q = ins["img"].astype(np.float64) / 255.0
        return 0.0, np.exp(q) * ((q + 4.0) * EPS32 + EPS32**2)

    return _srad1_recipe("rd_srad1_extract", n, ArraySpec("float32", (n,), "randint", 0, 256), 381, ref, tol)


@FAMILY.recipe(49.98174, "502 x 458 = 229916 pixels")
def _rd_srad1_compress(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """compress's launch: 512 threads, one per pixel, ceil(n / 512) CTAs (the original's); ``ctas`` is not
    used. The input is a diffused image's intensities, exp of [0, 1] (what extract makes), in [1, e].

    Tolerance: logf is within 1 ulp (CUDA C Programming Guide), 1 ulp <= 2 * EPS32 * |ln x|; the product with
    255 adds one rounding of its result: (2 + 1) * EPS32 * 255 * |ln x|, widened by the factor (1 + 2 * EPS32)
    for the product's rounding of the already-rounded log."""
    n = _srad1_pixels(scale)

    def ref(ins, sc):
        return {"img": np.log(ins["img"].astype(np.float64)) * 255.0}

    def tol(ins):
        y = np.abs(np.log(ins["img"].astype(np.float64))) * 255.0
        return 0.0, 3.0 * EPS32 * y * (1.0 + 2.0 * EPS32)

    init = ArraySpec("float32", (n,), "uniform", 1.0, float(np.e))
    return _srad1_recipe("rd_srad1_compress", n, init, 382, ref, tol)


def _srad1_tree(vals: np.ndarray, start: int, have: int) -> np.float32:
    """One CTA's sum, in float32 and in the kernel's order: a tree over the first ``pow2`` values (at level w
    the value at t, t + 1 a multiple of w, takes in the one w/2 before it), then the rest added one by one."""
    pow2 = 0
    w = 2
    while w <= SRAD1_THREADS:
        if have >= w:
            pow2 = w
        w *= 2
    s = vals[start : start + SRAD1_THREADS].astype(np.float32).copy()
    w = 2
    while w <= pow2:
        t = np.arange(w - 1, pow2, w)
        s[t] = s[t] + s[t - w // 2]
        w *= 2
    acc = s[pow2 - 1]
    for k in range(start + pow2, start + have):
        acc = np.float32(acc + vals[k])
    return acc


@FAMILY.recipe(49.98174, "502 x 458 = 229916 pixels, first reduction launch")
def _rd_srad1_reduce(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """reduce's first launch (stride 1, every pixel's partial sums): 512 threads, ceil(n / 512) CTAs (the
    original's); ``ctas`` is not used. The inputs are what srad's prepare kernel makes: the intensities (exp
    of [0, 1], in [1, e]) and their squares. 4600 pixels by default (the last CTA holds 504: a tree over 256
    and 248 serial additions), 4600 * scale; scale 49.98 is the original's 229916 (450 CTAs).

    Each CTA's result is a sequence of float32 additions in an order the program fixes; the reference
    repeats them in float32 in that order, so the outputs are compared exactly."""
    assert manifest_entry("rd_srad1_reduce")["threads_per_cta"] == SRAD1_THREADS
    n = _srad1_pixels(scale)
    blocks = -(-n // SRAD1_THREADS)
    rng = np.random.default_rng(391)
    img = np.exp(rng.uniform(0.0, 1.0, n)).astype(np.float32)

    def ref(ins, sc):
        out = {}
        for name in ("sums", "sums2"):
            v = ins[name].copy()
            for b in range(blocks):
                have = min(SRAD1_THREADS, n - b * SRAD1_THREADS)
                v[b * SRAD1_THREADS] = _srad1_tree(ins[name], b * SRAD1_THREADS, have)
            out[name] = v
        return out

    exact = (0.0, 0.0)
    return Recipe(
        kernel="rd_srad1_reduce",
        grid=(blocks,),
        block=(SRAD1_THREADS,),
        params=[*scalars("i64", npix=n), *scalars("i32", cnt=n, stride=1), *pointers("sums", "sums2")],
        arrays=same_arrays(("sums", "sums2"), ArraySpec("float32", (n,))),
        fixed={"sums": img, "sums2": img * img},
        seed=391,
        shared_bytes=shared_bytes("rd_srad1_reduce"),
        **check(("sums", "sums2"), ref, exact),
    )
