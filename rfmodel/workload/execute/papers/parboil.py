"""Parboil and ISPASS-2009 (GPGPU-Sim) kernels of the papers' benchmarks: recipes and numpy references.

Parboil's originals read some inputs through textures; ours read them with plain global loads (the
reference frame of sad with the texture's clamp-to-edge addressing done in code), as do the ISPASS-2009 ones
(AES's round keys; MUM's suffix tree and reference string, kept in the textures' 2-D layouts).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

from ._common import EPS32, Registry, check, manifest_entry, same_arrays, shared_bytes, size

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()


# ---- Parboil sgemm (mysgemmNT): C = alpha*A*B + beta*C, A m x k and C m x n column-major, B given
# transposed (n x k column-major, so B[kk][j] = Bt[j + kk*n]); m % 128 == n % 16 == k % 8 == 0
@FAMILY.recipe(33, "medium dataset m=1024, n=1056, k=992")
def _pa_sgemm(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """16 x 8 threads per CTA, grid (m/128, n/16); the medium dataset (m, n, k) = (1024, 1056, 992) at
    scale 33 (k reaches it at 31, m at 30)."""
    assert manifest_entry("pa_sgemm")["threads_per_cta"] == 128
    m = 128 * min(8, size(1, scale / 4))
    n = 16 * min(66, size(2, scale))
    k = 8 * min(124, size(4, scale))
    alpha, beta = 1.0, 0.0  # the original's call: sgemm('N', 'T', ..., 1.0f, ..., 0.0f, ...)

    def mats(ins):
        A = ins["A"].astype(np.float64).reshape(k, m).T
        B = ins["Bt"].astype(np.float64).reshape(k, n)
        C = ins["C"].astype(np.float64).reshape(n, m).T
        return A, B, C

    def ref(ins, sc):
        A, B, C = mats(ins)
        return {"C": (beta * C + alpha * (A @ B)).T.reshape(-1)}

    def tol(ins):
        # k rounded multiply-adds into the accumulator, then C*beta, alpha*acc and their sum: k + 3
        A, B, C = mats(ins)
        bound = (k + 3) * EPS32 * (abs(alpha) * (np.abs(A) @ np.abs(B)) + abs(beta) * np.abs(C))
        return 0.0, bound.T.reshape(-1)

    return Recipe(
        kernel="pa_sgemm",
        grid=(m // 128, n // 16),
        block=(16, 8),
        params=[
            *pointers("A"),
            *scalars("i32", lda=m),
            *pointers("Bt"),
            *scalars("i32", ldb=n),
            *pointers("C"),
            *scalars("i32", ldc=m, k=k),
            *scalars("f32", alpha=alpha, beta=beta),
        ],
        arrays={
            "A": ArraySpec("float32", (m * k,), "uniform", -1.0, 1.0),
            "Bt": ArraySpec("float32", (n * k,), "uniform", -1.0, 1.0),
            "C": ArraySpec("float32", (m * n,), "uniform", -1.0, 1.0),
        },
        seed=51,
        **check("C", ref, tol),
    )


# ---- Parboil spmv (spmv_jds): y[perm[i]] = sum_k data[ptr[k] + i] * x[cols[ptr[k] + i]] over the jagged
# diagonals of sorted row i; the diagonal starts and per-warp diagonal counts live in constant bank 3
#: entries of each __constant__ table (the original: 5000; the executor's bank 3 holds 16 KiB)
_SPMV_MAX = 2048


def _jds(n: int, max_len: int, rng: np.random.Generator):
    """A random n x n sparse matrix in Parboil's JDS layout (rows sorted by decreasing length, diagonals
    padded to whole warps of 32 rows)."""
    lengths = rng.integers(1, max_len + 1, n)
    perm = np.argsort(-lengths, kind="stable").astype(np.int32)  # sorted position -> row
    slen = lengths[perm]
    nwarps = -(-n // 32)
    warp_diags = np.array([slen[32 * w] for w in range(nwarps)], np.int32)
    ndiag = int(slen[0])
    starts = np.zeros(ndiag, np.int64)
    widths = np.array([32 * int(np.count_nonzero(warp_diags > d)) for d in range(ndiag)], np.int64)
    starts[1:] = np.cumsum(widths)[:-1]
    total = int(widths.sum())
    data = np.zeros(total, np.float32)
    cols = np.zeros(total, np.int32)
    for d in range(ndiag):
        rows = np.flatnonzero(slen > d)  # a prefix: the lengths are sorted
        data[starts[d] + rows] = rng.uniform(-1.0, 1.0, rows.size).astype(np.float32)
        cols[starts[d] + rows] = rng.integers(0, n, rows.size)
    return perm, warp_diags, starts.astype(np.int32), data, cols


@FAMILY.recipe(
    109.2267,
    "Dubcova3: 146689 rows (765 CTAs of 192)",
    differs="rows capped at 65536 (the constant tables index at most 2048 warps "
    "of rows): 342 CTAs; a random matrix of 1-49 nonzeros a row, not Dubcova3",
)
def _pa_spmv_jds(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """192 threads per CTA (what the original picks for a large matrix), one per row; rows get 1 to
    8*scale nonzeros (capped at 49, about twice Dubcova3's mean of 24.8), so a warp's diagonal count (the
    loop's trip + 2) passes the header's 23 at scale 4; rows 600*scale (capped at the
    65536 that the constant tables index; Dubcova3 has 146689)."""
    assert manifest_entry("pa_spmv_jds")["threads_per_cta"] == 192
    n = min(size(600, scale), 32 * _SPMV_MAX)
    max_len = min(size(8, scale), 49)
    perm, warp_diags, starts, data, cols = _jds(n, max_len, np.random.default_rng(52))
    consts = np.zeros(2 * _SPMV_MAX, np.int32)
    consts[: starts.size] = starts
    consts[_SPMV_MAX : _SPMV_MAX + warp_diags.size] = warp_diags

    def ref(ins, sc):
        x = ins["x"].astype(np.float64)
        d, c = ins["data"].astype(np.float64), ins["cols"]
        y = np.zeros(n)
        for i in range(n):
            b = warp_diags[i >> 5]
            at = starts[:b] + i
            y[perm[i]] = np.sum(d[at] * x[c[at]])
        return {"y": y}

    def tol(ins):
        # per row: as many rounded multiply-adds as its warp's diagonals (counted twice: the compiler may
        # or may not contract them), on the magnitudes of the products (padding entries are 0)
        x = np.abs(ins["x"].astype(np.float64))
        d, c = np.abs(ins["data"].astype(np.float64)), ins["cols"]
        bound = np.zeros(n)
        for i in range(n):
            b = warp_diags[i >> 5]
            at = starts[:b] + i
            bound[perm[i]] = 2 * b * EPS32 * np.sum(d[at] * x[c[at]])
        return 0.0, bound

    return Recipe(
        kernel="pa_spmv_jds",
        grid=(-(-n // 192),),
        block=(192,),
        params=[*pointers("y", "data", "cols", "perm", "x", "nzcnt"), *scalars("i32", rows=n)],
        arrays={
            "y": ArraySpec("float32", (n,)),
            "data": ArraySpec("float32", data.shape),
            "cols": ArraySpec("int32", cols.shape),
            "perm": ArraySpec("int32", (n,)),
            "x": ArraySpec("float32", (n,), "uniform", -1.0, 1.0),
            "nzcnt": ArraySpec("int32", warp_diags.shape),
            "consts": ArraySpec("int32", consts.shape),
        },
        seed=53,
        **check("y", ref, tol),
        fixed={"data": data, "cols": cols, "perm": perm, "nzcnt": warp_diags, "consts": consts},
        constants={3: "consts"},
    )


# ---- Parboil sad (mb_sad_calc): SADs of every 4x4 block of the current frame against the 33 x 33
# positions of the reference frame around it (clamped at the edges), 1096 entries per block
_SAD_NPOS, _SAD_PAD = 1089, 1096


@FAMILY.recipe(11, "QCIF 176x144 (11x9 macroblocks)")
def _pa_sad(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """61 threads per CTA, one CTA per 4x4 block; a frame of scale x scale macroblocks (capped at QCIF's
    11 x 9, the default dataset, reached at scale 11)."""
    assert manifest_entry("pa_sad")["threads_per_cta"] == 61
    mbw, mbh = min(size(1, scale), 11), min(size(1, scale), 9)
    w, h = 16 * mbw, 16 * mbh
    mbs = mbw * mbh

    def ref(ins, sc):
        cur = ins["cur"].astype(np.int64).reshape(h, w)
        refp = np.pad(ins["ref"].astype(np.int64).reshape(h, w), 16, mode="edge")  # clamp-to-edge
        out = ins["sads"].astype(np.int64).copy()
        gh, gw = h // 4, w // 4
        sad = np.zeros((gh, gw, 33, 33), np.int64)
        for r in range(4):
            for c in range(4):
                # reference pixel (4*gy - 16 + oy + r, 4*gx - 16 + ox + c), shifted by the padding of 16
                win = np.lib.stride_tricks.sliding_window_view(refp[r:, c:], (33, 33))
                win = win[0 : 4 * gh : 4, 0 : 4 * gw : 4][:gh, :gw]
                sad += np.abs(win - cur[r::4, c::4][:gh, :gw, None, None])
        sad = sad.reshape(gh, gw, _SAD_NPOS) & 0xFFFF
        for gy in range(gh):
            for gx in range(gw):
                blk = 25 * mbs + ((gy >> 2) * mbw + (gx >> 2)) * 16 + 4 * (gy & 3) + (gx & 3)
                out[blk * _SAD_PAD : blk * _SAD_PAD + _SAD_NPOS] = sad[gy, gx]
                out[blk * _SAD_PAD + _SAD_NPOS : (blk + 1) * _SAD_PAD] = 0
        return {"sads": out.astype(np.uint16)}

    return Recipe(
        kernel="pa_sad",
        grid=(w // 4, h // 4),
        block=(61,),
        params=[*pointers("sads", "cur", "ref"), *scalars("i32", mb_w=mbw, mb_h=mbh)],
        arrays={
            "sads": ArraySpec("uint16", (41 * _SAD_PAD * mbs,)),
            **same_arrays(("cur", "ref"), ArraySpec("uint16", (h * w,), "randint", 0, 256)),
        },
        seed=54,
        # the static block copy, then the dynamic SAD row (2192 bytes, 8-byte aligned)
        shared_bytes=shared_bytes("pa_sad") + 2 * _SAD_PAD + 8,
        **check("sads", ref),
    )


# ---- ISPASS-2009 AES (aesEncrypt128): 128-bit encryption of 16-byte blocks, four threads per block
def _aes_tables() -> np.ndarray:
    """The four encryption T-tables (256 words each): T0[x] = (2s, s, s, 3s) from the least significant
    byte up, s = S-box(x); T1, T2, T3 are T0 rotated left by 8, 16, 24 bits."""

    def xt(a):  # multiply by x in GF(2^8)
        a <<= 1
        return (a ^ 0x11B) if a & 0x100 else a

    def mul(a, b):
        r = 0
        while b:
            if b & 1:
                r ^= a
            a, b = xt(a), b >> 1
        return r

    inv = [0] * 256
    for a in range(1, 256):
        inv[a] = next(b for b in range(1, 256) if mul(a, b) == 1)
    sbox = []
    for a in range(256):
        b = inv[a]
        s = b
        for r in range(1, 5):
            s ^= ((b << r) | (b >> (8 - r))) & 0xFF
        sbox.append(s ^ 0x63)
    t0 = np.array([mul(s, 2) | (s << 8) | (s << 16) | (mul(s, 3) << 24) for s in sbox], np.uint64)
    rot = [((t0 << k) | (t0 >> (32 - k))) & 0xFFFFFFFF if k else t0 for k in (0, 8, 16, 24)]
    return np.concatenate(rot).astype(np.uint32)


#: ShiftRows as the gather of the kernel: column c takes byte j from column (c + j) mod 4 (bank 3)
_AES_SHIFT = np.array([(c + j) % 4 for c in range(4) for j in range(4)], np.uint32)


def _aes_encrypt_words(words: np.ndarray, rkey: np.ndarray, tbox: np.ndarray) -> np.ndarray:
    """The kernel's computation: 32-bit columns, four per block, ten rounds through the T-tables."""
    t = tbox.astype(np.uint32).reshape(4, 256)
    st = words.astype(np.uint32).reshape(-1, 4) ^ rkey[:4].astype(np.uint32)
    col = np.arange(4)

    def gathered(st, j):
        return (st[:, (col + j) % 4] >> np.uint32(8 * j)) & np.uint32(0xFF)

    for r in range(1, 10):
        st = t[0][gathered(st, 0)] ^ t[1][gathered(st, 1)] ^ t[2][gathered(st, 2)] ^ t[3][gathered(st, 3)]
        st = st ^ rkey[4 * r : 4 * r + 4].astype(np.uint32)
    sb = (t[1] >> np.uint32(24)) & np.uint32(0xFF)
    last = np.zeros_like(st)
    for j in range(4):
        last |= sb[gathered(st, j)] << np.uint32(8 * j)
    return (last ^ rkey[40:44].astype(np.uint32)).reshape(-1)


@FAMILY.recipe(32.125, "output.bmp, 262198 bytes padded to 263168 (257 CTAs)")
def _is_aes(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """256 threads (64 blocks of 16 bytes) per CTA; 8*scale CTAs, the original's input (263168 bytes, 257
    CTAs) at scale 32.125 (the cap)."""
    assert manifest_entry("is_aes")["threads_per_cta"] == 256
    ncta = min(size(8, scale), 257)
    nwords = 256 * ncta
    tbox = _aes_tables()
    shift = np.zeros(16, np.uint32)
    shift[:] = _AES_SHIFT

    def ref(ins, sc):
        return {"out": _aes_encrypt_words(ins["in"], ins["rkey"], ins["tbox"])}

    return Recipe(
        kernel="is_aes",
        grid=(ncta,),
        block=(256,),
        params=[*pointers("out", "in"), *scalars("i32", nbytes=4 * nwords), *pointers("rkey", "tbox")],
        arrays={
            "out": ArraySpec("uint32", (nwords,)),
            "in": ArraySpec("uint32", (nwords,), "randint", 0, 2**32),
            "rkey": ArraySpec("uint32", (44,), "randint", 0, 2**32),
            "tbox": ArraySpec("uint32", (1024,)),
            "shift": ArraySpec("uint32", (16,)),
        },
        seed=55,
        shared_bytes=shared_bytes("is_aes"),
        **check("out", ref),
        fixed={"tbox": tbox, "shift": shift},
        constants={3: "shift"},
    )


# ---- ISPASS-2009 LPS (GPU_laplace3d): one Jacobi sweep of the 3-D Laplace equation, boundary kept
@FAMILY.recipe(12.5, "100x100x100 grid")
def _is_laplace3d(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """32 x 4 threads per CTA over (x, y), marching over z; a 40*scale x 10*scale x 8*scale grid (each
    capped at the original's default 100, all reached at scale 12.5), rows padded to a pitch of 128
    floats as cudaMallocPitch does for them."""
    assert manifest_entry("is_laplace3d")["threads_per_cta"] == 128
    nx, ny, nz = min(size(40, scale), 100), min(size(10, scale), 100), min(size(8, scale), 100)
    pitch = 128 * -(-nx // 128)
    w = float(np.float32(1.0) / np.float32(6.0))

    def grid(a):
        return a.astype(np.float64).reshape(nz, ny, pitch)

    def neighbours(u):
        """The sum of each interior point's six neighbours, in the kernel's order."""
        return (
            u[1:-1, 1:-1, : nx - 2]
            + u[1:-1, 1:-1, 2:nx]
            + u[1:-1, :-2, 1 : nx - 1]
            + u[1:-1, 2:, 1 : nx - 1]
            + u[:-2, 1:-1, 1 : nx - 1]
            + u[2:, 1:-1, 1 : nx - 1]
        )

    def ref(ins, sc):
        u = grid(ins["u1"])
        out = grid(ins["u2"]).copy()
        out[:, :, :nx] = u[:, :, :nx]
        out[1:-1, 1:-1, 1 : nx - 1] = neighbours(u) * w
        return {"u2": out.reshape(-1)}

    def tol(ins):
        # interior: five rounded additions and the rounded product with w, on six terms times w
        u = np.abs(grid(ins["u1"]))
        bound = np.zeros_like(u)
        bound[1:-1, 1:-1, 1 : nx - 1] = 6 * EPS32 * neighbours(u) * w
        return 0.0, bound.reshape(-1)

    return Recipe(
        kernel="is_laplace3d",
        grid=(1 + (nx - 1) // 32, 1 + (ny - 1) // 4),
        block=(32, 4),
        params=[*scalars("i32", nx=nx, ny=ny, nz=nz, pitch=pitch), *pointers("u1", "u2")],
        arrays={
            "u1": ArraySpec("float32", (pitch * ny * nz,), "uniform", -1.0, 1.0),
            "u2": ArraySpec("float32", (pitch * ny * nz,)),
        },
        seed=56,
        shared_bytes=shared_bytes("is_laplace3d"),
        **check("u2", ref, tol),
    )


# ---- ISPASS-2009 NN (executeFirstLayer, executeSecondLayer): convolutional layers with a scaled tanh
#: the taps of a 5x5 window in a 29-wide image and in a 13-wide map (the kernels' __constant__ tables)
_NN_TAPS1 = np.array([r * 29 + c for r in range(5) for c in range(5)], np.int32)
_NN_TAPS2 = np.array([r * 13 + c for r in range(5) for c in range(5)], np.int32)


def _nn_activation(acc, sum_abs, m):
    """1.7159 * tanh(0.66666667 * acc) and its bound: acc carries at most m roundings of terms whose
    magnitudes sum to sum_abs (the slope of the activation is at most 1.7159 * 0.66666667 < 1.2); the
    product with the double constant is rounded to float for tanhf (one rounding, slope <= 1.7159), tanhf
    is within 2 ulp (CUDA's documented bound; an ulp of t is at most 2 * EPS32 * |t|), and the double
    result is rounded to float (one rounding; the double roundings are below a second one)."""
    d = 0.66666667 * acc
    t = np.tanh(d)
    out = 1.7159 * t
    bound = (
        1.2 * m * EPS32 * sum_abs
        + 1.7159 * EPS32 * np.abs(d)
        + 1.7159 * 4 * EPS32 * np.abs(t)
        + 2 * EPS32 * np.abs(out)
    )
    return out, bound


def _nn_recipe(name, grid, block, conv, m, arrays, taps, seed) -> Recipe:
    """An NN layer's launch: parameters (in, weights, out), the 5x5 window's ``taps`` as the constant table,
    ``arrays`` the in, weights and out specs; the output is the activation of ``conv(ins, absval)`` (the
    layer's sums, of the magnitudes when ``absval``) with ``m`` roundings in the sums."""

    def ref(ins, sc):
        return {"out": _nn_activation(conv(ins, False), conv(ins, True), m)[0].reshape(-1)}

    def tol(ins):
        return 0.0, _nn_activation(conv(ins, False), conv(ins, True), m)[1].reshape(-1)

    return Recipe(
        kernel=name,
        grid=grid,
        block=block,
        params=[*pointers("in", "weights", "out")],
        arrays={**arrays, "taps": ArraySpec("int32", (25,))},
        seed=seed,
        **check("out", ref, tol),
        fixed={"taps": taps},
        constants={3: "taps"},
    )


@FAMILY.recipe(14, "28 images (grid 6 x 28)")
def _is_nn_layer1(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """13 x 13 threads per CTA, grid (6 maps, images); 2*scale images (the GPGPU-Sim run's 28 at scale 14)."""
    assert manifest_entry("is_nn_layer1")["threads_per_cta"] == 169
    num = min(size(2, scale), 28)
    o = np.arange(13) * 2
    corner = (o[:, None] * 29 + o[None, :]).reshape(-1)  # per output pixel (y, x)

    def conv(ins, absval):
        x = ins["in"].astype(np.float64).reshape(num, 29 * 29)
        wt = ins["weights"].astype(np.float64).reshape(6, 26)
        if absval:
            x, wt = np.abs(x), np.abs(wt)
        patches = x[:, corner[:, None] + _NN_TAPS1[None, :]]  # (num, 169, 25)
        return wt[None, :, :1] + np.einsum("npt,mt->nmp", patches, wt[:, 1:])  # (num, 6, 169)

    arrays = {
        "in": ArraySpec("float32", (num * 29 * 29,), "uniform", 0.0, 1.0),
        "weights": ArraySpec("float32", (6 * 26,), "uniform", -0.2, 0.2),
        "out": ArraySpec("float32", (num * 6 * 13 * 13,)),
    }
    # 25 multiply-adds after the bias: 26 roundings, counted twice (fused or not)
    return _nn_recipe("is_nn_layer1", (6, num), (13, 13), conv, 52, arrays, _NN_TAPS1, 57)


@FAMILY.recipe(14, "28 images (grid 50 x 28)")
def _is_nn_layer2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """5 x 5 threads per CTA, grid (50 maps, images); 2*scale images (the GPGPU-Sim run's 28 at scale 14)."""
    assert manifest_entry("is_nn_layer2")["threads_per_cta"] == 25
    num = min(size(2, scale), 28)
    o = np.arange(5) * 2
    corner = (o[:, None] * 13 + o[None, :]).reshape(-1)

    def conv(ins, absval):
        x = ins["in"].astype(np.float64).reshape(num, 6, 169)
        wt = ins["weights"].astype(np.float64).reshape(50, 156)
        if absval:
            x, wt = np.abs(x), np.abs(wt)
        patches = x[:, :, corner[:, None] + _NN_TAPS2[None, :]]  # (num, 6 maps in, 25 pixels, 25 taps)
        taps = wt[:, 1:151].reshape(50, 25, 6)  # per output map: tap t, input map c
        return wt[None, :, :1] + np.einsum("ncpt,mtc->nmp", patches, taps)  # (num, 50, 25)

    arrays = {
        "in": ArraySpec("float32", (num * 6 * 169,), "uniform", -1.0, 1.0),
        "weights": ArraySpec("float32", (50 * 156,), "uniform", -0.05, 0.05),
        "out": ArraySpec("float32", (num * 1250,)),
    }
    # 150 multiply-adds after the bias: 151 roundings, counted twice (fused or not)
    return _nn_recipe("is_nn_layer2", (50, num), (5, 5), conv, 302, arrays, _NN_TAPS2, 58)


# ---- ISPASS-2009 MUM (mummergpuKernel): DNA reads matched against a suffix tree of the reference
#: the original's texture shapes: the tree's node and children textures are 4096 wide, a node of id i at
#: (x, y) = ((i & 0x1FFFF) >> 5, (i >> 17) * 32 + (i & 31)); the reference texture is 65536 bytes a row,
#: four consecutive bases in the four rows of a 4-row block
_MUM_TEX_WIDTH = 4096
_MUM_REF_PITCH = 65536
#: the minimum match length (the original's default, MUMmer's -l 20) and the reads' length (q25bp)
_MUM_MIN_MATCH = 20
_MUM_READ_LEN = 25
#: base -> rank in the suffix sort ('$' first) and -> child slot (A, C, G, T, then the $-child)
_MUM_RANK = np.zeros(256, np.int64)
_MUM_SLOT = np.full(256, -1, np.int64)
for _i, _b in enumerate(b"$ACGT"):
    _MUM_RANK[_b] = _i
    _MUM_SLOT[_b] = (_i + 4) % 5


def _mum_suffix_array(text: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The suffix array of ``text`` (bytes ending in a unique '$') by prefix doubling, and the ranks of each
    round: ``ranks[j][i]`` orders the suffixes at i by their first 2**j bases."""
    n = text.size
    rank = _MUM_RANK[text]
    ranks = [rank]
    k = 1
    while rank.max() < n - 1:
        nxt = np.full(n, -1, np.int64)
        nxt[: n - k] = rank[k:]
        order = np.lexsort((nxt, rank))
        step = (rank[order][1:] != rank[order][:-1]) | (nxt[order][1:] != nxt[order][:-1])
        rank = np.empty(n, np.int64)
        rank[order] = np.concatenate(([0], np.cumsum(step)))
        ranks.append(rank)
        k *= 2
    sa = np.empty(n, np.int64)
    sa[rank] = np.arange(n)
    return sa, ranks


def _mum_lcp(sa: np.ndarray, ranks: list[np.ndarray]) -> np.ndarray:
    """lcp[r]: the bases suffixes sa[r-1] and sa[r] share (lcp[0] = 0), found by halving steps over the
    doubling rounds' ranks."""
    n = sa.size
    a, b = sa[:-1], sa[1:]
    common = np.zeros(n - 1, np.int64)
    for j in range(len(ranks) - 1, -1, -1):
        ia, ib = a + common, b + common
        ok = (ia < n) & (ib < n)
        same = np.zeros(n - 1, bool)
        same[ok] = ranks[j][ia[ok]] == ranks[j][ib[ok]]
        common += same << j
    return np.concatenate(([0], common))


def _mum_addr(ids: np.ndarray) -> np.ndarray:
    """Texture addresses (x | y << 16) of node ids (0 stays 0)."""
    ids = np.asarray(ids, np.int64)
    x = (ids & 0x1FFFF) >> 5
    y = ((ids >> 17) << 5) + (ids & 31)
    return (x | (y << 16)).astype(np.uint32)


def _mum_entry(addr: np.ndarray) -> np.ndarray:
    """The row-major entry of texture addresses in the node and children arrays."""
    addr = np.asarray(addr, np.int64)
    return (addr >> 16) * _MUM_TEX_WIDTH + (addr & 0xFFFF)


def _mum_node_id(addr: np.ndarray) -> np.ndarray:
    """The node ids of texture addresses (as the original's set_result decodes them)."""
    addr = np.asarray(addr, np.int64)
    x, y = addr & 0xFFFF, addr >> 16
    return (x << 5) + (y & 31) + ((y >> 5) << 17)


def _mum_tree(bases: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The suffix tree of ``bases`` + '$' as the original flattens it (suffix-tree.cpp): node ids 1, 2, ...
    breadth-first from the root (id 1), below depth 16 in blocks of four levels; node (start, end, $-child,
    suffix link) and children (A, C, G, T) entries at the ids' texture addresses, edges as positions in
    the string 's' + bases + '$' the original builds the tree over, the root's suffix link the root, a
    leaf's none. Built here from the suffix array (internal nodes are the LCP intervals).

    Returns the node and children arrays (entries of 4 words, ceil((nodes + 1) / 4096) + 32 rows of 4096
    entries, as the original's textures) and the number of nodes."""
    text = np.concatenate((bases, np.frombuffer(b"$", np.uint8)))
    n = text.size
    sa, ranks = _mum_suffix_array(text)
    lcp = _mum_lcp(sa, ranks).tolist()
    sa_l = sa.tolist()
    # internal nodes 0.. (0: the root) by their string depth, a suffix below them and their parent; leaf i
    # (the suffix at i) is node m + i once the m internal nodes are known
    idepth, irep, iparent = [0], [0], [0]
    leaf_parent = [0] * n
    stack, sdepth = [0], [0]  # open nodes: internal >= 0, leaf i as -1 - i
    for r in range(n + 1):
        h = lcp[r] if r < n else 0
        while sdepth[-1] > h:
            last = stack.pop()
            sdepth.pop()
            if sdepth[-1] >= h:
                up = stack[-1]
            else:
                up = len(idepth)
                idepth.append(h)
                irep.append(-1 - last if last < 0 else irep[last])
                iparent.append(0)
                stack.append(up)
                sdepth.append(h)
            if last < 0:
                leaf_parent[-1 - last] = up
            else:
                iparent[last] = up
        if r < n:
            stack.append(-1 - sa_l[r])
            sdepth.append(n - sa_l[r])
    m = len(idepth)
    total = m + n
    depth = np.concatenate((idepth, n - np.arange(n))).astype(np.int64)
    rep = np.concatenate((irep, np.arange(n))).astype(np.int64)
    parent = np.concatenate((iparent, leaf_parent)).astype(np.int64)
    child = np.arange(1, total)
    first = rep[child] + depth[parent[child]]  # the edge into a node: text[first .. rep + depth - 1]
    kids = np.full((total, 5), -1, np.int64)
    kids[parent[child], _MUM_SLOT[text[first]]] = child
    # ids: breadth-first below depth 16, then each node dequeued numbers four levels of its subtree
    # depth-first and queues the fifth (the original's renumberTree)
    order, frontier, level = [], np.array([0]), 0
    while frontier.size and level < 16:
        order.append(frontier)
        nxt = kids[frontier].reshape(-1)
        frontier, level = nxt[nxt >= 0], level + 1
    deep: list[int] = []
    queue = deque(frontier.tolist())

    def below(v: int, gens: int) -> None:
        for c in kids[v]:
            if c >= 0:
                if gens:
                    deep.append(int(c))
                    below(int(c), gens - 1)
                else:
                    queue.append(int(c))

    while queue:
        v = queue.popleft()
        deep.append(v)
        below(v, 4)
    order = np.concatenate([*order, np.array(deep, np.int64)])
    assert order.size == total
    ids = np.empty(total, np.int64)
    ids[order] = np.arange(1, total + 1)
    # suffix links: the ancestor of leaf rep + 1 one base shallower (climbing by powers of two)
    inner = np.arange(1, m)
    want = depth[inner] - 1
    at = m + rep[inner] + 1
    ups = [parent]
    while ups[-1].any():  # until a jump of 2**k levels from any node reaches the root
        ups.append(ups[-1][ups[-1]])
    for up in reversed(ups):
        nxt = up[at]
        at = np.where(depth[nxt] >= want, nxt, at)
    assert np.array_equal(depth[at], want), "suffix links"
    link = np.zeros(total, np.int64)  # the root's: the root
    link[inner] = at
    # the arrays, in the textures' layout ('s' is position 0 of the string: edges shift by one)
    rows = -(-(total + 1) // _MUM_TEX_WIDTH) + 32
    entry = _mum_entry(_mum_addr(ids))
    nodes = np.zeros((rows * _MUM_TEX_WIDTH, 4), np.int64)
    nodes[entry[child], 0] = first[child - 1] + 1
    nodes[entry[child], 1] = rep[child] + depth[child]
    has = kids[:, 4] >= 0
    nodes[entry[has], 2] = _mum_addr(ids[kids[has, 4]])
    nodes[entry[:m], 3] = _mum_addr(ids[link[:m]])
    children = np.zeros((rows * _MUM_TEX_WIDTH, 4), np.uint32)
    for s in range(4):
        has = kids[:, s] >= 0
        children[entry[has], s] = _mum_addr(ids[kids[has, s]])
    return nodes.astype(np.int32), children, total


def _mum_ref_texture(bases: np.ndarray) -> np.ndarray:
    """The reference string ('s', the bases, '$', NUL) in the original's reference-texture layout:
    ceil(length / 65536) + 4 rows of 65536 bytes filled with 'Z', byte i at row (i >> 18) * 4 + (i & 3),
    column (i & 0x3FFFF) >> 2."""
    s = np.concatenate((np.frombuffer(b"s", np.uint8), bases, np.frombuffer(b"$\0", np.uint8)))
    rows = -(-s.size // _MUM_REF_PITCH) + 4
    out = np.full(rows * _MUM_REF_PITCH, ord("Z"), np.uint8)
    i = np.arange(s.size)
    out[(((i >> 18) << 2) + (i & 3)) * _MUM_REF_PITCH + ((i & 0x3FFFF) >> 2)] = s
    return out


def _mum_matches(ins: dict, nq: int) -> np.ndarray:
    """The results the kernel writes, found by walking down from the root for every start position (no
    suffix links): per query and start position with a match of at least the minimum length, the node the
    match ends on the edge into and the bases of that edge it covers; 0 where the match stops at a node whose
    child for the next base is missing; the whole edge where the query ends at a node."""
    qs, qaddr, qlens = ins["queries"], ins["qaddr"].astype(np.int64), ins["qlens"].astype(np.int64)
    nodes = ins["nodes"].reshape(-1, 4).astype(np.int64)
    kids = ins["kids"].reshape(-1, 4).astype(np.int64)
    ref = ins["ref"]
    mml = _MUM_MIN_MATCH
    npos = qlens - mml + 1
    q = np.repeat(np.arange(nq), npos)
    pos = np.arange(q.size) - np.repeat(np.cumsum(npos) - npos, npos)
    first = qaddr[q] + 1 + pos  # the query's first base at this start
    root = int(_mum_addr(1))
    at = np.full(q.size, root, np.int64)  # the node whose edge the match ends on (an address)
    on = np.zeros(q.size, np.int64)  # bases of that edge matched (at the root: 0)
    got = np.zeros(q.size, np.int64)  # bases matched
    edge = np.full(q.size, -1, np.int64)  # the recorded edge offset (-1: walking)
    live = np.ones(q.size, bool)
    while live.any():
        i = np.flatnonzero(live)
        c = qs[first[i] + got[i]].astype(np.int64)
        e = _mum_entry(at[i])
        start, end = nodes[e, 0], nodes[e, 1]
        boundary = (at[i] == root) | (on[i] == end - start + 1)
        ended = c == 0
        edge[i[ended]] = on[i[ended]]
        step = ~ended & boundary
        slot = _MUM_SLOT[c[step]]
        nxt = np.where(slot >= 0, kids[e[step], np.maximum(slot, 0)], 0)
        stuck = nxt == 0
        edge[i[step][stuck]] = 0
        walk = i[step][~stuck]
        at[walk], on[walk], got[walk] = nxt[~stuck], 1, got[walk] + 1
        inside = ~ended & ~boundary
        j = i[inside]
        r = start[inside] + on[j]
        base = ref[(((r >> 18) << 2) + (r & 3)) * _MUM_REF_PITCH + ((r & 0x3FFFF) >> 2)]
        same = base == c[inside]
        on[j[same]] += 1
        got[j[same]] += 1
        edge[j[~same]] = on[j[~same]]
        live = edge < 0
    out = np.zeros((q.size, 2), np.uint32)
    hit = got >= mml  # the kernel's "bases matched + 1 > minimum"
    out[hit, 0] = _mum_node_id(at[hit])
    out[hit, 1] = edge[hit] & 0xFFFF  # a short in the low half of the second word
    return out.reshape(-1)


@FAMILY.recipe(100, "NC_003997.20k.fna 1,399,930 bases; 50,000 reads of 25 bases, min match 20")
def _is_mummer(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """256 threads per CTA, one per read, ceil(reads / 256) CTAs (the original's); ``ctas`` is not used.
    500*scale reads of 25 bases against a random reference of 14000*scale bases: the original's 50,000 reads
    and 1,399,930 bases (NC_003997.20k.fna) at scale 100 (the cap).  The original's reads are drawn from the
    whole genome (5.23 Mbp), 27 % of them from its first 1.4 Mbp, the reference: here 27 % are drawn from the
    reference (a quarter of those with one base changed, so that long matches also end in mismatches), the
    rest are random."""
    assert manifest_entry("is_mummer")["threads_per_cta"] == 256
    nq = min(size(500, scale), 50000)
    nbases = min(size(14000, scale), 1399930)
    rng = np.random.default_rng(590)
    acgt = np.frombuffer(b"ACGT", np.uint8)
    bases = acgt[rng.integers(0, 4, nbases)]
    reads = acgt[rng.integers(0, 4, (nq, _MUM_READ_LEN))]
    drawn = rng.random(nq) < 0.27
    at = rng.integers(0, nbases - _MUM_READ_LEN + 1, nq)
    reads[drawn] = bases[at[drawn, None] + np.arange(_MUM_READ_LEN)]
    changed = drawn & (rng.random(nq) < 0.25)
    where = rng.integers(0, _MUM_READ_LEN, nq)
    shift = rng.integers(1, 4, nq)
    old = np.searchsorted(acgt, reads[changed, where[changed]])
    reads[changed, where[changed]] = acgt[(old + shift[changed]) % 4]
    # the query buffer: 'q', the read, NUL each
    stride = _MUM_READ_LEN + 2
    queries = np.zeros((nq, stride), np.uint8)
    queries[:, 0] = ord("q")
    queries[:, 1 : 1 + _MUM_READ_LEN] = reads
    qaddr = (np.arange(nq) * stride).astype(np.int32)
    qlens = np.full(nq, _MUM_READ_LEN, np.int32)
    ncoords = nq * stride - nq * (_MUM_MIN_MATCH + 1)  # the original's numCoords
    nodes, kids, _ = _mum_tree(bases)
    ref_tex = _mum_ref_texture(bases)

    def ref(ins, sc):
        return {"coords": _mum_matches(ins, nq)}

    return Recipe(
        kernel="is_mummer",
        grid=(-(-nq // 256),),
        block=(256,),
        params=[
            *pointers("coords", "queries", "qaddr", "qlens"),
            *scalars("i32", nq=nq, min_len=_MUM_MIN_MATCH),
            *pointers("nodes", "kids", "ref"),
        ],
        arrays={
            "coords": ArraySpec("uint32", (2 * ncoords,)),
            "queries": ArraySpec("uint8", (queries.size,)),
            **same_arrays(("qaddr", "qlens"), ArraySpec("int32", (nq,))),
            "nodes": ArraySpec("int32", (nodes.size,)),
            "kids": ArraySpec("uint32", (kids.size,)),
            "ref": ArraySpec("uint8", (ref_tex.size,)),
        },
        seed=59,
        **check("coords", ref),
        fixed={
            "queries": queries.reshape(-1),
            "qaddr": qaddr,
            "qlens": qlens,
            "nodes": nodes.reshape(-1),
            "kids": kids.reshape(-1),
            "ref": ref_tex,
        },
    )
