"""DNN layers of the kind DeepBench (conv_bench, rnn_bench: Malekeh) and Tango (CORF) run: the im2col
lowering and the shared-memory tiled GEMM of a GEMM-based convolution, and one LSTM cell step. Recipes and
numpy references.

DeepBench calls cuDNN, so these kernels are written here from DeepBench's problem tables
(``code/kernels/conv_problems.h``, ``rnn_problems.h``); ``scale`` grows the default problem towards the
chosen table entry (see each kernel's header).
"""

from __future__ import annotations

import numpy as np

from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

from ._common import EPS32, Registry, check, manifest_entry, same_arrays, shared_bytes, size, uniform_arrays

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()

#: the conv_bench entry the convolution kernels take: W = H = 56, C = 128, K = 256, 3x3, pad 1, stride 1
CONV = {"hw": 56, "c": 128, "k": 256, "r": 3, "pad": 1, "stride": 1}


def _im2col_ref(img: np.ndarray, r: int, s: int, pad: int, stride: int, oh: int, ow: int) -> np.ndarray:
    """(C*R*S, OH*OW): the image's padded windows, one column per output pixel."""
    c, h, w = img.shape
    padded = np.zeros((c, h + 2 * pad, w + 2 * pad), img.dtype)
    padded[:, pad : pad + h, pad : pad + w] = img
    out = np.empty((c, r, s, oh, ow), img.dtype)
    for i in range(r):
        for j in range(s):
            out[:, i, j] = padded[:, i : i + stride * oh : stride, j : j + stride * ow : stride]
    return out.reshape(c * r * s, oh * ow)


@FAMILY.recipe(32, "one image, C=128 channels of 56x56, 3x3, pad 1, stride 1", tested=16)
def _dnn_im2col(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """One image, C channels of H x W, 3x3 taps, pad 1, stride 1 (so OH = H, OW = W): 4 x 16 x 16 by default,
    the conv_bench layer's 128 x 56 x 56 from scale 32. A grid-stride kernel: the grid is ``ctas`` where
    given, otherwise one thread per (channel, output pixel)."""
    m = manifest_entry("dnn_im2col")
    block = m["threads_per_cta"]
    c = min(size(4, scale), CONV["c"])
    hw = min(size(16, scale), CONV["hw"])
    r = s = CONV["r"]
    pad, stride = CONV["pad"], CONV["stride"]
    oh = ow = (hw + 2 * pad - r) // stride + 1
    items = c * oh * ow
    grid = ctas or -(-items // block)

    def ref(ins, sc):
        return {"cols": _im2col_ref(ins["image"].reshape(c, hw, hw), r, s, pad, stride, oh, ow)}

    return Recipe(
        kernel="dnn_im2col",
        grid=(grid,),
        block=(block,),
        params=[
            *scalars(
                "i32",
                channels=c,
                height=hw,
                width=hw,
                ksize_r=r,
                ksize_s=s,
                pad=pad,
                stride=stride,
                out_h=oh,
                out_w=ow,
            ),
            *pointers("image", "cols"),
        ],
        arrays={
            "image": ArraySpec("float32", (c * hw * hw,), "uniform", -1.0, 1.0),
            "cols": ArraySpec("float32", (c * r * s * oh * ow,), "full", value=7.0),
        },  # all overwritten
        seed=61,
        **check("cols", ref, (0.0, 0.0)),  # a copy: exact
    )


@FAMILY.recipe(62.72, "K=256 filters x 3136 pixels (56x56), depth C*R*S = 1152 (C=128, 3x3)", tested=16)
def _dnn_conv_gemm(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """16 x 16 threads, one per output (channel, pixel), a grid over (pixels, channels) in 16 x 16 tiles.
    By default K = 24 output channels, 50 pixels and a depth of 72 (5 tiles, the last partial); the
    conv_bench layer's 256 x 3136 with depth C*R*S = 1152 (72 tiles) from scale 16 (depth), 63 (pixels)."""
    assert manifest_entry("dnn_conv_gemm")["threads_per_cta"] == 256
    k_out = min(size(24, scale), CONV["k"])
    pixels = min(size(50, scale), CONV["hw"] * CONV["hw"])
    depth = min(size(72, scale), CONV["c"] * CONV["r"] * CONV["r"])

    def ref(ins, sc):
        f = ins["filters"].astype(np.float64).reshape(k_out, depth)
        x = ins["cols"].astype(np.float64).reshape(depth, pixels)
        return {"out": f @ x}

    def tol(ins):
        # depth multiply-adds from 0: at most 2 * depth roundings on the terms' magnitudes
        f = np.abs(ins["filters"].astype(np.float64).reshape(k_out, depth))
        x = np.abs(ins["cols"].astype(np.float64).reshape(depth, pixels))
        return 0.0, (2 * depth * EPS32 * (f @ x)).reshape(-1)

    return Recipe(
        kernel="dnn_conv_gemm",
        grid=(-(-pixels // 16), -(-k_out // 16)),
        block=(16, 16),
        params=[
            *scalars("i32", k_out=k_out, pixels=pixels, depth=depth),
            *pointers("filters", "cols", "out"),
        ],
        arrays={
            "filters": ArraySpec("float32", (k_out * depth,), "uniform", -1.0, 1.0),
            "cols": ArraySpec("float32", (depth * pixels,), "uniform", -1.0, 1.0),
            "out": ArraySpec("float32", (k_out * pixels,), "full", value=7.0),
        },
        seed=62,
        shared_bytes=shared_bytes("dnn_conv_gemm"),
        **check("out", ref, tol),
    )


#: the rnn_bench entry the LSTM step takes: inference_server_set, hidden 512, batch 4 (25 time steps)
LSTM_HIDDEN, LSTM_BATCH = 512, 4
#: CUDA's documented maximum errors (Programming Guide, single-precision functions): expf and tanhf 2 ulp;
#: 1.0f / x is the IEEE (correctly rounded) division by default. One ulp is at most 2^-23 |y| = 2 EPS32 |y|.
EXPF_REL = 2 * 2 * EPS32
TANHF_REL = 2 * 2 * EPS32


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


@FAMILY.recipe(3.2, "LSTM hidden = input = 512, batch 4, one time step")
def _dnn_lstm_step(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """256 threads per CTA, one per hidden unit; blockIdx.y the batch element (4, DeepBench's batch). The
    hidden size (= input size) is 160 by default (one partial 256-chunk), 320 at scale 2 (two chunks, as
    DeepBench's 512)."""
    assert manifest_entry("dnn_lstm_step")["threads_per_cta"] == 256
    hidden, batch = min(size(160, scale), 4096), LSTM_BATCH
    g4 = 4 * hidden

    def parts(ins):
        w_in = ins["w_in"].astype(np.float64).reshape(hidden, g4)
        w_rec = ins["w_rec"].astype(np.float64).reshape(hidden, g4)
        bias = ins["bias"].astype(np.float64)
        x = ins["x"].astype(np.float64).reshape(batch, hidden)
        h = ins["h_prev"].astype(np.float64).reshape(batch, hidden)
        pre = x @ w_in + h @ w_rec + bias  # (batch, 4*hidden), gates side by side
        mag = np.abs(x) @ np.abs(w_in) + np.abs(h) @ np.abs(w_rec) + np.abs(bias)
        return pre, mag

    def forward(ins):
        pre, mag = parts(ins)
        cp = ins["c_prev"].astype(np.float64).reshape(batch, hidden)
        ai, af, ac, ao = (pre[:, g * hidden : (g + 1) * hidden] for g in range(4))
        i, f, g, o = _sigmoid(ai), _sigmoid(af), np.tanh(ac), _sigmoid(ao)
        c = f * cp + i * g
        return pre, mag, cp, (i, f, g, o), c, o * np.tanh(c)

    def ref(ins, sc):
        *_, c, h = forward(ins)
        return {"c_next": c, "h_next": h}

    def bounds(ins):
        pre, mag, cp, (i, f, g, o), c, h = forward(ins)
        # pre-activations: 2 * hidden multiply-adds and the bias: at most 2 * (2 * hidden) + 1 roundings
        d_pre = (4 * hidden + 1) * EPS32 * mag
        di, df, dg, do = (d_pre[:, k * hidden : (k + 1) * hidden] for k in range(4))
        # sigmoid 1 / (1 + expf(-v)): slope at most 1/4 on the input error; expf's 2 ulp, the sum's and the
        # division's roundings: within 6 EPS32 relative (sigmoid <= 1); tanhf: slope <= 1, 2 ulp
        di, df, do = (0.25 * d + EXPF_REL + 2 * EPS32 for d in (di, df, do))
        dg = dg + TANHF_REL
        # c = f * c_prev + i * g: the gates' errors times their partners, two roundings on the terms
        dc = df * np.abs(cp) + di * (np.abs(g) + dg) + (np.abs(i) + di) * dg
        dc = dc + 2 * EPS32 * (np.abs(f * cp) + np.abs(i * g)) * (1 + 4 * EPS32)
        # h = o * tanhf(c): tanhf's slope and 2 ulp, the product rounded
        tc = np.abs(np.tanh(c))
        dh = do * (tc + dc + TANHF_REL) + (np.abs(o)) * (dc + TANHF_REL) + EPS32 * np.abs(h)
        return dc, dh

    return Recipe(
        kernel="dnn_lstm_step",
        grid=(-(-hidden // 256), batch),
        block=(256,),
        params=[
            *scalars("i32", hidden=hidden),
            *pointers("w_in", "w_rec", "bias", "x", "h_prev", "c_prev", "h_next", "c_next"),
        ],
        arrays={
            **uniform_arrays(("w_in", "w_rec"), (hidden * g4,), -0.08, 0.08),
            "bias": ArraySpec("float32", (g4,), "uniform", -0.5, 0.5),
            **uniform_arrays(("x", "h_prev", "c_prev"), (batch * hidden,)),
            **same_arrays(("h_next", "c_next"), ArraySpec("float32", (batch * hidden,), "full", value=7.0)),
        },
        outputs=["c_next", "h_next"],
        seed=63,
        shared_bytes=shared_bytes("dnn_lstm_step"),
        reference=ref,
        tolerance={
            "c_next": lambda ins: (0.0, bounds(ins)[0].reshape(-1)),
            "h_next": lambda ins: (0.0, bounds(ins)[1].reshape(-1)),
        },
    )
