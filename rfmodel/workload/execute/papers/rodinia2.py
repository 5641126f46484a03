"""Rodinia 3.1 (CUDA) kernels of the papers' benchmarks, part 2: hotspot, srad (v2), lud, cfd (euler3d,
single precision) and streamcluster; recipes and numpy references.

Each recipe's default problem is a small one of the original's shape (the same CTA shape and the same
per-thread work); ``scale`` grows the problem towards the original's standard input (named per recipe).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from rfmodel.workload.execute.launch import Param
from rfmodel.workload.execute.recipe import ArraySpec, Recipe, pointers, scalars

from ._common import EPS32, Registry, check, manifest_entry, same_arrays, shared_bytes, size

#: this module's recipes and their originals' inputs (gathered by the package)
FAMILY = Registry()

f32 = np.float32


class _Bound:
    """A value (float64 array) with a bound on its error, carried through float32 operations by running error
    analysis: each operation adds the error its inputs' errors cause (first order, and for a quotient
    exactly) plus one rounding, ``EPS32`` times the result's magnitude."""

    def __init__(self, v, e=0.0):
        self.v = np.asarray(v, dtype=np.float64)
        self.e = np.broadcast_to(np.asarray(e, dtype=np.float64), self.v.shape).copy()

    @staticmethod
    def of(x):
        return x if isinstance(x, _Bound) else _Bound(x)

    def _round(self, v, e):
        return _Bound(v, e + EPS32 * np.abs(v))

    def __add__(self, o):
        o = _Bound.of(o)
        return self._round(self.v + o.v, self.e + o.e)

    __radd__ = __add__

    def __sub__(self, o):
        o = _Bound.of(o)
        return self._round(self.v - o.v, self.e + o.e)

    def __rsub__(self, o):
        return _Bound.of(o) - self

    def __mul__(self, o):
        o = _Bound.of(o)
        return self._round(self.v * o.v, np.abs(self.v) * o.e + np.abs(o.v) * self.e + self.e * o.e)

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = _Bound.of(o)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = self.v / o.v
            room = np.abs(o.v) - o.e  # the divisor's least magnitude
            e = np.where(room > 0, (self.e + np.abs(v) * o.e) / room, np.inf)
        return self._round(v, e)

    def __rtruediv__(self, o):
        return _Bound.of(o) / self

    def sqrt(self):
        """A correctly rounded square root (sqrtf: IEEE, 0 ulp)."""
        v = np.sqrt(self.v)
        low = np.sqrt(np.maximum(self.v - self.e, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.where(v + low > 0, self.e / (v + low), np.sqrt(self.e))
        return self._round(v, e)

    def __neg__(self):
        return _Bound(-self.v, self.e)  # exact

    @staticmethod
    def where(cond, a, b):
        a, b = _Bound.of(a), _Bound.of(b)
        return _Bound(np.where(cond, a.v, b.v), np.where(cond, a.e, b.e))


# ---- hotspot ------------------------------------------------------------------------------------------
HS_TILE = 16
#: the original's chip and material constants (hotspot.cu)
HS_CHIP_H, HS_CHIP_W, HS_T_CHIP = 0.016, 0.016, 0.0005
HS_SPEC_HEAT_SI, HS_K_SI, HS_FACTOR_CHIP, HS_MAX_PD, HS_PRECISION = 1.75e6, 100, 0.5, 3.0e6, 0.001
HS_AMB = 80.0
#: rounded operations of one cell update (counting each double operation as if it rounded to float32):
#: two float32 sums of neighbours, the ambient difference and its product, ten double operations, the final
#: conversion to float32
HS_OPS = 14


def _hs_coefficients(n: int) -> dict[str, float]:
    """The host's coefficients for an n x n grid (computed in double, passed as float, as the original)."""
    gh, gw = f32(HS_CHIP_H) / f32(n), f32(HS_CHIP_W) / f32(n)
    gh, gw, t = float(gh), float(gw), float(f32(HS_T_CHIP))
    cap = HS_FACTOR_CHIP * HS_SPEC_HEAT_SI * t * gw * gh
    rx = gw / (2.0 * HS_K_SI * t * gh)
    ry = gh / (2.0 * HS_K_SI * t * gw)
    rz = t / (HS_K_SI * gh * gw)
    max_slope = HS_MAX_PD / (HS_FACTOR_CHIP * t * HS_SPEC_HEAT_SI)
    step = HS_PRECISION / max_slope
    return {k: float(f32(v)) for k, v in {"Cap": cap, "Rx": rx, "Ry": ry, "Rz": rz, "step": step}.items()}


@FAMILY.recipe(8, "512x512 grid, pyramid height 2")
def _rd_hotspot(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """calculate_temp's launch: 16 x 16 threads; an n x n grid advanced ``pyramid`` steps in one launch, each
    CTA owning (16 - 2*pyramid)^2 cells. The original's run: n = 512, pyramid height 2 (scale 8)."""
    assert manifest_entry("rd_hotspot")["threads_per_cta"] == HS_TILE * HS_TILE
    n = size(64, scale, 16)
    pyramid = 2
    own = HS_TILE - 2 * pyramid
    blocks = -(-n // own)
    c = _hs_coefficients(n)
    k = float(f32(f32(c["step"]) / f32(c["Cap"])))
    gx, gy, gz = (float(f32(f32(1.0) / f32(c[r]))) for r in ("Rx", "Ry", "Rz"))

    def shifted(t):  # neighbours, the chip's edge clamped to the cell itself
        up = np.vstack([t[:1], t[:-1]])
        down = np.vstack([t[1:], t[-1:]])
        left = np.hstack([t[:, :1], t[:, :-1]])
        right = np.hstack([t[:, 1:], t[:, -1:]])
        return up, down, left, right

    def step(t, p):
        up, down, left, right = shifted(t)
        new = t + k * (p + (down + up - 2.0 * t) * gy + (right + left - 2.0 * t) * gx + (HS_AMB - t) * gz)
        up, down, left, right = (np.abs(a) for a in (up, down, left, right))
        a = np.abs(t)
        mag = a + k * (np.abs(p) + gy * (down + up + 2 * a) + gx * (right + left + 2 * a) + gz * (HS_AMB + a))
        return new, mag

    def ref(ins, sc):
        t = ins["temp_src"].astype(np.float64).reshape(n, n)
        p = ins["power"].astype(np.float64).reshape(n, n)
        for _ in range(pyramid):
            t, _m = step(t, p)
        return {"temp_dst": t.reshape(-1)}

    def tol(ins):
        # each step adds HS_OPS roundings of its terms; an error already in the inputs passes through the
        # stencil amplified by at most the sum of its coefficients' magnitudes
        t = ins["temp_src"].astype(np.float64).reshape(n, n)
        p = ins["power"].astype(np.float64).reshape(n, n)
        gain = abs(1.0 - k * (2 * gy + 2 * gx + gz)) + k * (2 * gy + 2 * gx)
        err = np.zeros((n, n))
        for _ in range(pyramid):
            near = np.maximum.reduce([err, *shifted(err)])
            t, mag = step(t, p)
            err = gain * near + HS_OPS * EPS32 * mag
        return 0.0, err.reshape(-1)

    return Recipe(
        kernel="rd_hotspot",
        grid=(blocks, blocks),
        block=(HS_TILE, HS_TILE),
        params=[
            *scalars("i32", iteration=pyramid),
            *pointers("power", "temp_src", "temp_dst"),
            *scalars("i32", grid_cols=n, grid_rows=n, border_cols=pyramid, border_rows=pyramid),
            *scalars(
                "f32", Cap=c["Cap"], Rx=c["Rx"], Ry=c["Ry"], Rz=c["Rz"], step=c["step"], time_elapsed=0.001
            ),
        ],
        arrays={
            "power": ArraySpec("float32", (n * n,), "uniform", 0.0, 0.01),
            "temp_src": ArraySpec("float32", (n * n,), "uniform", 320.0, 345.0),
            "temp_dst": ArraySpec("float32", (n * n,), "zeros"),
        },
        seed=301,
        shared_bytes=shared_bytes("rd_hotspot"),
        **check("temp_dst", ref, tol),
    )


# ---- srad (v2) ----------------------------------------------------------------------------------------
SRAD_TILE = 16
SRAD_ROI = 128  #: the original's run: the speckle region is rows and columns 0..127
SRAD_LAMBDA = 0.5


def _srad_size(scale: float) -> int:
    """Image edge: 64 at scale 1 (4 x 4 tiles); the original's 2048 at scale 32."""
    return SRAD_TILE * max(2, int(round(4 * scale)))


def _srad_image(n: int, seed: int) -> tuple[np.ndarray, float]:
    """The original's input: J = exp(I) for a uniform random I in [0, 1]; q0sqr from the speckle region."""
    j = np.exp(np.random.default_rng(seed).uniform(0.0, 1.0, n * n)).astype(np.float32)
    roi = j.reshape(n, n)[:SRAD_ROI, :SRAD_ROI].astype(np.float64)
    mean = roi.mean()
    return j, float(f32(((roi * roi).mean() - mean * mean) / (mean * mean)))


def _srad_neighbours(a):
    """North, south, west, east neighbours with the image's edges clamped to the pixel itself."""
    n_ = np.vstack([a[:1], a[:-1]])
    s_ = np.vstack([a[1:], a[-1:]])
    w_ = np.hstack([a[:, :1], a[:, :-1]])
    e_ = np.hstack([a[:, 1:], a[:, -1:]])
    return n_, s_, w_, e_


def _srad_params(n: int, *scalars: Param) -> list[Param]:
    """srad_cuda_1/2's parameters: the four difference arrays, the image, the coefficients, the image's
    edge (cols, rows) and then the kernel's float scalars ``scalars``."""
    return [
        Param("E_C", "ptr", array="E"),
        Param("W_C", "ptr", array="W"),
        Param("N_C", "ptr", array="N"),
        Param("S_C", "ptr", array="S"),
        Param("J_cuda", "ptr", array="J"),
        Param("C_cuda", "ptr", array="C"),
        Param("cols", "i32", n),
        Param("rows", "i32", n),
        *scalars,
    ]


@FAMILY.recipe(32, "2048x2048 image")
def _rd_srad_1(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """srad_cuda_1's launch: 16 x 16 threads, one per pixel, (n/16) x (n/16) CTAs."""
    assert manifest_entry("rd_srad_1")["threads_per_cta"] == SRAD_TILE * SRAD_TILE
    n = _srad_size(scale)
    j, q0 = _srad_image(n, 311)

    def diffs(ins):
        J = ins["J"].astype(np.float64).reshape(n, n)
        # a difference of two float32 is exact in float64: its float32 rounding is the kernel's
        return J, [(x - J).astype(np.float32).astype(np.float64) for x in _srad_neighbours(J)]

    def coefficient(ins):
        J, (dn, ds, dw, de) = diffs(ins)
        d = [_Bound(x) for x in (dn, ds, dw, de)]
        jc = _Bound(J)
        g2 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]) / (jc * jc)
        lap = (d[0] + d[1] + d[2] + d[3]) / jc
        top = 0.5 * g2 - 0.0625 * (lap * lap)
        bot = 1.0 + 0.25 * lap
        q2 = top / (bot * bot)
        q0b = _Bound(np.float64(q0))
        c = 1.0 / (1.0 + (q2 - q0b) / (q0b * (1.0 + q0b)))
        # saturating to [0, 1] does not widen a difference, and bounds it by 1
        return np.clip(c.v, 0.0, 1.0), np.minimum(c.e, 1.0)

    def ref(ins, sc):
        J, (dn, ds, dw, de) = diffs(ins)
        return {
            "C": coefficient(ins)[0].reshape(-1),
            "N": dn.reshape(-1),
            "S": ds.reshape(-1),
            "W": dw.reshape(-1),
            "E": de.reshape(-1),
        }

    exact = (0.0, 0.0)  # one float32 subtraction of an exactly representable difference
    return Recipe(
        kernel="rd_srad_1",
        grid=(n // SRAD_TILE, n // SRAD_TILE),
        block=(SRAD_TILE, SRAD_TILE),
        params=_srad_params(n, Param("q0sqr", "f32", q0)),
        arrays=same_arrays(("E", "W", "N", "S", "J", "C"), ArraySpec("float32", (n * n,))),
        fixed={"J": j},
        outputs=["C", "N", "S", "W", "E"],
        seed=311,
        shared_bytes=shared_bytes("rd_srad_1"),
        reference=ref,
        tolerance={
            "C": lambda ins: (0.0, coefficient(ins)[1].reshape(-1)),
            "N": exact,
            "S": exact,
            "W": exact,
            "E": exact,
        },
    )


#: rounded operations of srad_cuda_2's update: four products and three sums (the divergence), 0.25*lambda,
#: its product with the divergence, the sum with the pixel, the conversion to float32
SRAD2_OPS = 11


@FAMILY.recipe(32, "2048x2048 image")
def _rd_srad_2(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """srad_cuda_2's launch: 16 x 16 threads, one per pixel, (n/16) x (n/16) CTAs. The coefficient array has
    one spare row after the image: the original's strip loads read up to one row past it before the edge
    tiles replace what they read (see the kernel)."""
    assert manifest_entry("rd_srad_2")["threads_per_cta"] == SRAD_TILE * SRAD_TILE
    n = _srad_size(scale)
    j, q0 = _srad_image(n, 312)
    lam = float(f32(SRAD_LAMBDA))

    def terms(ins):
        J = ins["J"].astype(np.float64).reshape(n, n)
        C = ins["C"].astype(np.float64)[: n * n].reshape(n, n)
        _n, cs, _w, ce = _srad_neighbours(C)
        d = [ins[k].astype(np.float64).reshape(n, n) for k in ("N", "S", "W", "E")]
        return J, [C * d[0], cs * d[1], C * d[2], ce * d[3]]

    def ref(ins, sc):
        J, t = terms(ins)
        return {"J": (J + 0.25 * lam * sum(t)).reshape(-1)}

    def tol(ins):
        J, t = terms(ins)
        return 0.0, (SRAD2_OPS * EPS32 * (np.abs(J) + 0.25 * lam * sum(np.abs(x) for x in t))).reshape(-1)

    grad = ("uniform", -1.7, 1.7)  # differences of exp(I), I in [0, 1]
    return Recipe(
        kernel="rd_srad_2",
        grid=(n // SRAD_TILE, n // SRAD_TILE),
        block=(SRAD_TILE, SRAD_TILE),
        params=_srad_params(n, Param("lambda", "f32", lam), Param("q0sqr", "f32", q0)),
        arrays={
            **same_arrays(("E", "W", "N", "S"), ArraySpec("float32", (n * n,), *grad)),
            "J": ArraySpec("float32", (n * n,)),
            "C": ArraySpec("float32", ((n + 1) * n,), "uniform", 0.0, 1.0),
        },
        fixed={"J": j},
        seed=312,
        shared_bytes=shared_bytes("rd_srad_2"),
        **check("J", ref, tol),
    )


# ---- lud ----------------------------------------------------------------------------------------------
LUD_B = 16


def _lud_size(scale: float) -> int:
    """Matrix edge: 64 at scale 1 (4 x 4 blocks); the original's run (-s 256) at scale 4."""
    return LUD_B * max(2, int(round(4 * scale)))


def _lud_matrix(n: int, seed: int) -> np.ndarray:
    """A diagonally dominant matrix (LU without pivoting is stable on it), as float32."""
    a = np.random.default_rng(seed).uniform(0.0, 1.0, (n, n))
    a[np.arange(n), np.arange(n)] += LUD_B
    return a.astype(np.float32)


def _lud_recipe(name: str, n: int, grid, block, seed: int, ref, tol) -> Recipe:
    """One launch at the first step of the factorisation (offset 0: the largest grid)."""
    assert manifest_entry(name)["threads_per_cta"] == math.prod(block)
    return Recipe(
        kernel=name,
        grid=grid,
        block=block,
        params=[*pointers("m"), *scalars("i32", matrix_dim=n, offset=0)],
        arrays={"m": ArraySpec("float32", (n * n,))},
        fixed={"m": _lud_matrix(n, seed)},
        seed=seed,
        shared_bytes=shared_bytes(name),
        **check("m", ref, tol),
    )


@FAMILY.recipe(4, "256x256 matrix (-s 256)")
def _rd_lud_diagonal(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """lud_diagonal's launch: one CTA of 16 threads factors the diagonal block at the offset."""
    n = _lud_size(scale)

    def factor(ins):
        # the kernel's order of operations, each element with its running error bound
        a = ins["m"].astype(np.float64).reshape(n, n)
        b = [[_Bound(a[r, c]) for c in range(LUD_B)] for r in range(LUD_B)]
        for k in range(LUD_B - 1):
            for t in range(k + 1, LUD_B):
                x = b[t][k]
                for j in range(k):
                    x = x - b[t][j] * b[j][k]
                b[t][k] = x / b[k][k]
            for t in range(k + 1, LUD_B):
                y = b[k + 1][t]
                for j in range(k + 1):
                    y = y - b[k + 1][j] * b[j][t]
                b[k + 1][t] = y
        val, err = a.copy(), np.zeros((n, n))
        for r in range(1, LUD_B):  # row 0 is not written back
            for c in range(LUD_B):
                val[r, c], err[r, c] = b[r][c].v, b[r][c].e
        return val.reshape(-1), err.reshape(-1)

    return _lud_recipe(
        "rd_lud_diagonal",
        n,
        (1,),
        (LUD_B,),
        321,
        lambda ins, sc: {"m": factor(ins)[0]},
        lambda ins: (0.0, factor(ins)[1]),
    )


@FAMILY.recipe(4, "256x256 matrix (-s 256), first step")
def _rd_lud_perimeter(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """lud_perimeter's launch: (n - offset)/16 - 1 CTAs of 32 threads, one per block right of (and one
    below) the diagonal block."""
    n = _lud_size(scale)
    nb = n // LUD_B - 1

    def solve(ins):
        a = ins["m"].astype(np.float64).reshape(n, n)
        d = [[_Bound(a[r, c]) for c in range(LUD_B)] for r in range(LUD_B)]
        # row blocks: rows r of all of them side by side; column blocks: column r of all of them
        rows = [_Bound(a[r, LUD_B:]) for r in range(LUD_B)]
        cols = [_Bound(a[LUD_B:, r]) for r in range(LUD_B)]
        for r in range(1, LUD_B):
            for j in range(r):
                rows[r] = rows[r] - d[r][j] * rows[j]
        for r in range(LUD_B):
            for j in range(r):
                cols[r] = cols[r] - cols[j] * d[j][r]
            cols[r] = cols[r] / d[r][r]
        val, err = a.copy(), np.zeros((n, n))
        for r in range(1, LUD_B):
            val[r, LUD_B:], err[r, LUD_B:] = rows[r].v, rows[r].e
        for r in range(LUD_B):
            val[LUD_B:, r], err[LUD_B:, r] = cols[r].v, cols[r].e
        return val.reshape(-1), err.reshape(-1)

    return _lud_recipe(
        "rd_lud_perimeter",
        n,
        (nb,),
        (2 * LUD_B,),
        322,
        lambda ins, sc: {"m": solve(ins)[0]},
        lambda ins: (0.0, solve(ins)[1]),
    )


#: rounded operations of lud_internal's update: a 16-term dot product (16 products, 15 sums) and the
#: subtraction from the element
LUD_INTERNAL_OPS = 2 * LUD_B + 1


@FAMILY.recipe(4, "256x256 matrix (-s 256), first step")
def _rd_lud_internal(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """lud_internal's launch: 16 x 16 threads, one CTA per block of the trailing submatrix."""
    n = _lud_size(scale)
    nb = n // LUD_B - 1

    def parts(ins):
        a = ins["m"].astype(np.float64).reshape(n, n)
        return a, a[LUD_B:, :LUD_B], a[:LUD_B, LUD_B:]

    def ref(ins, sc):
        a, lo, up = parts(ins)
        out = a.copy()
        out[LUD_B:, LUD_B:] -= lo @ up
        return {"m": out.reshape(-1)}

    def tol(ins):
        a, lo, up = parts(ins)
        err = np.zeros((n, n))
        err[LUD_B:, LUD_B:] = LUD_INTERNAL_OPS * EPS32 * (np.abs(a[LUD_B:, LUD_B:]) + np.abs(lo) @ np.abs(up))
        return 0.0, err.reshape(-1)

    return _lud_recipe("rd_lud_internal", n, (nb, nb), (LUD_B, LUD_B), 323, ref, tol)


# ---- cfd (euler3d, single precision) ------------------------------------------------------------------
CFD_BLOCK = 192
CFD_NNB, CFD_NVAR = 4, 5
CFD_GAMMA = float(f32(1.4))
CFD_RK = 3


def _cfd_size(scale: float) -> int:
    """Padded element count: 8 CTAs at scale 1; fvcorr.domn.097K (97046 elements, 506 CTAs) near scale 63."""
    return CFD_BLOCK * max(1, int(round(8 * scale)))


def _cfd_far_field() -> np.ndarray:
    """The original host's free stream (Mach 1.2, no angle of attack, density 1.4, pressure 1), in the order
    of the kernel's __constant__ block: the five variables, then the flux contributions x, y, z, energy."""
    rho, p = f32(1.4), f32(1.0)
    sound = f32(np.sqrt(f32(1.4) * p / rho))
    speed = f32(1.2) * sound
    vel = np.array([speed * f32(np.cos(0.0)), speed * f32(np.sin(0.0)), 0.0], np.float32)
    mom = rho * vel
    energy = rho * (f32(0.5) * (speed * speed)) + p / f32(f32(1.4) - f32(1.0))
    fx = [vel[0] * mom[0] + p, vel[0] * mom[1], vel[0] * mom[2]]
    fy = [fx[1], vel[1] * mom[1] + p, vel[1] * mom[2]]
    fz = [fx[2], fy[2], vel[2] * mom[2] + p]
    fe = list(vel * (energy + p))
    return np.array([rho, *mom, energy, *fx, *fy, *fz, *fe], np.float32)


def _cfd_state(nelr: int, seed: int) -> np.ndarray:
    """Conserved variables (structure-of-arrays, NVAR blocks of nelr): the free stream, perturbed."""
    ff = _cfd_far_field().astype(np.float64)
    rng = np.random.default_rng(seed)
    v = np.empty((CFD_NVAR, nelr))
    for k in range(CFD_NVAR):
        v[k] = ff[k] * (1.0 + 0.1 * rng.uniform(-1.0, 1.0, nelr)) + 0.1 * rng.uniform(-1.0, 1.0, nelr)
    return v.astype(np.float32).reshape(-1)


def _cfd_recipe(
    kernel: str,
    nelr: int,
    seed: int,
    params: list[Param],
    arrays: dict[str, ArraySpec],
    out: str,
    run: Callable,
    **fields,
) -> Recipe:
    """A cfd kernel's recipe over ``nelr`` elements, a thread each in CTAs of ``CFD_BLOCK``: ``out`` checked
    against ``run(ins)`` (a :class:`_Bound`, or one per variable, one after the other) within its error bound;
    ``fields``, the recipe's others."""
    assert manifest_entry(kernel)["threads_per_cta"] == CFD_BLOCK

    def part(ins, name: str) -> np.ndarray:
        b = run(ins)
        return getattr(b, name) if isinstance(b, _Bound) else np.concatenate([getattr(x, name) for x in b])

    return Recipe(
        kernel=kernel,
        grid=(nelr // CFD_BLOCK,),
        block=(CFD_BLOCK,),
        params=params,
        arrays=arrays,
        seed=seed,
        **check(out, lambda ins, sc: {out: part(ins, "v")}, lambda ins: (0.0, part(ins, "e"))),
        **fields,
    )


def _cfd_mesh(nelr: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded stand-in for the unstructured tetrahedral mesh: per element and face, a neighbour (mostly
    near in the element order, as in a renumbered mesh, some anywhere), a wall (-1) or the far field (-2),
    and the face's area-weighted normal; both NNB blocks of nelr (normals: 3 x NNB blocks)."""
    rng = np.random.default_rng(seed)
    e = np.arange(nelr)
    nb = np.empty((CFD_NNB, nelr), np.int64)
    for f in range(CFD_NNB):
        kind = rng.uniform(0.0, 1.0, nelr)
        near = np.clip(e + rng.integers(-96, 97, nelr), 0, nelr - 1)
        far = rng.integers(0, nelr, nelr)
        nb[f] = np.where(kind < 0.70, near, np.where(kind < 0.85, far, np.where(kind < 0.95, -1, -2)))
    normals = (0.05 * rng.uniform(-1.0, 1.0, (3, CFD_NNB, nelr))).astype(np.float32)
    return nb.astype(np.int32).reshape(-1), normals.reshape(-1)


def _cfd_primitive(rho, mom, energy):
    """Velocity, squared speed, pressure and speed of sound, in the kernels' order of operations."""
    vel = [m / rho for m in mom]
    speed2 = vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2]
    p = (CFD_GAMMA - 1.0) * (energy - 0.5 * rho * speed2)
    sound = (CFD_GAMMA * p / rho).sqrt()
    return vel, speed2, p, sound


def _cfd_flux_of(mom, energy, p, vel):
    fx = [vel[0] * mom[0] + p, vel[0] * mom[1], vel[0] * mom[2]]
    fy = [fx[1], vel[1] * mom[1] + p, vel[1] * mom[2]]
    fz = [fx[2], fy[2], vel[2] * mom[2] + p]
    hp = energy + p
    fe = [vel[0] * hp, vel[1] * hp, vel[2] * hp]
    return fx, fy, fz, fe


@FAMILY.recipe(63.25, "fvcorr.domn.097K: 97046 elements padded to 97152")
def _rd_cfd_step_factor(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """cuda_compute_step_factor's launch: 192 threads, nelr/192 CTAs."""
    nelr = _cfd_size(scale)

    def run(ins):
        v = ins["variables"].astype(np.float64).reshape(CFD_NVAR, nelr)
        rho, mom, energy = _Bound(v[0]), [_Bound(v[1 + k]) for k in range(3)], _Bound(v[4])
        _vel, speed2, _p, sound = _cfd_primitive(rho, mom, energy)
        return 0.5 / (_Bound(ins["areas"].astype(np.float64)).sqrt() * (speed2.sqrt() + sound))

    params = [*scalars("i32", nelr=nelr), *pointers("variables", "areas", "step_factors")]
    arrays = {
        "variables": ArraySpec("float32", (CFD_NVAR * nelr,)),
        "areas": ArraySpec("float32", (nelr,), "uniform", 5e-4, 1.5e-3),
        "step_factors": ArraySpec("float32", (nelr,)),
    }
    fixed = {"variables": _cfd_state(nelr, 331)}
    return _cfd_recipe("rd_cfd_step_factor", nelr, 331, params, arrays, "step_factors", run, fixed=fixed)


@FAMILY.recipe(63.25, "fvcorr.domn.097K: 97046 elements padded to 97152")
def _rd_cfd_flux(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """cuda_compute_flux's launch: 192 threads, nelr/192 CTAs; the free stream in constant bank 3."""
    nelr = _cfd_size(scale)
    nb_all, normals = _cfd_mesh(nelr, 332)
    ff = _cfd_far_field()

    def run(ins):
        v = ins["variables"].astype(np.float64).reshape(CFD_NVAR, nelr)
        nbs = ins["elements_surrounding_elements"].reshape(CFD_NNB, nelr)
        nrm = ins["normals"].astype(np.float64).reshape(3, CFD_NNB, nelr)
        ffv = ins["ff"].astype(np.float64)
        ff_mom, ff_fc = ffv[1:4], [ffv[5:8], ffv[8:11], ffv[11:14], ffv[14:17]]  # x, y, z, energy
        rho, mom, energy = _Bound(v[0]), [_Bound(v[1 + k]) for k in range(3)], _Bound(v[4])
        vel, speed2, p, sound = _cfd_primitive(rho, mom, energy)
        speed = speed2.sqrt()
        fx, fy, fz, fe = _cfd_flux_of(mom, energy, p, vel)
        acc = [_Bound(np.zeros(nelr)) for _ in range(CFD_NVAR)]  # rho, mom x, y, z, energy
        for f in range(CFD_NNB):
            nb = nbs[f]
            n = [_Bound(nrm[k, f]) for k in range(3)]
            area = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt()
            at = np.maximum(nb, 0)
            rho_b, mom_b, energy_b = (
                _Bound(v[0][at]),
                [_Bound(v[1 + k][at]) for k in range(3)],
                _Bound(v[4][at]),
            )
            vel_b, speed2_b, p_b, sound_b = _cfd_primitive(rho_b, mom_b, energy_b)
            fx_b, fy_b, fz_b, fe_b = _cfd_flux_of(mom_b, energy_b, p_b, vel_b)
            # an element neighbour
            a = list(acc)
            k = -area * 0.2 * 0.5 * (speed + speed2_b.sqrt() + sound + sound_b)
            a[0] = a[0] + k * (rho - rho_b)
            a[4] = a[4] + k * (energy - energy_b)
            for d in range(3):
                a[1 + d] = a[1 + d] + k * (mom[d] - mom_b[d])
            for ax in range(3):
                k = 0.5 * n[ax]
                a[0] = a[0] + k * (mom_b[ax] + mom[ax])
                a[4] = a[4] + k * (fe_b[ax] + fe[ax])
                a[1] = a[1] + k * (fx_b[ax] + fx[ax])
                a[2] = a[2] + k * (fy_b[ax] + fy[ax])
                a[3] = a[3] + k * (fz_b[ax] + fz[ax])
            # a wall
            w = list(acc)
            for d in range(3):
                w[1 + d] = w[1 + d] + n[d] * p
            # the far field
            g = list(acc)
            for ax in range(3):
                k = 0.5 * n[ax]
                g[0] = g[0] + k * (ff_mom[ax] + mom[ax])
                g[4] = g[4] + k * (ff_fc[3][ax] + fe[ax])
                g[1] = g[1] + k * (ff_fc[0][ax] + fx[ax])
                g[2] = g[2] + k * (ff_fc[1][ax] + fy[ax])
                g[3] = g[3] + k * (ff_fc[2][ax] + fz[ax])
            acc = [
                _Bound.where(
                    nb >= 0, a[i], _Bound.where(nb == -1, w[i], _Bound.where(nb == -2, g[i], acc[i]))
                )
                for i in range(CFD_NVAR)
            ]
        return acc

    params = [
        *scalars("i32", nelr=nelr),
        *pointers("elements_surrounding_elements", "normals", "variables", "fluxes"),
    ]
    arrays = {
        "elements_surrounding_elements": ArraySpec("int32", (CFD_NNB * nelr,)),
        "normals": ArraySpec("float32", (3 * CFD_NNB * nelr,)),
        **same_arrays(("variables", "fluxes"), ArraySpec("float32", (CFD_NVAR * nelr,))),
        "ff": ArraySpec("float32", (ff.size,)),
    }
    fixed = {
        "elements_surrounding_elements": nb_all,
        "normals": normals,
        "variables": _cfd_state(nelr, 332),
        "ff": ff,
    }
    return _cfd_recipe(
        "rd_cfd_flux", nelr, 332, params, arrays, "fluxes", run, fixed=fixed, constants={3: "ff"}
    )


@FAMILY.recipe(63.25, "fvcorr.domn.097K: 97046 elements padded to 97152")
def _rd_cfd_time_step(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """cuda_time_step's launch: 192 threads, nelr/192 CTAs; the second Runge-Kutta stage (j = 1)."""
    nelr = _cfd_size(scale)
    j = 1

    def run(ins):
        old = [_Bound(x) for x in ins["old_variables"].astype(np.float64).reshape(CFD_NVAR, nelr)]
        flux = [_Bound(x) for x in ins["fluxes"].astype(np.float64).reshape(CFD_NVAR, nelr)]
        f = _Bound(ins["step_factors"].astype(np.float64)) / float(CFD_RK + 1 - j)
        return [old[k] + f * flux[k] for k in range(CFD_NVAR)]

    params = [
        *scalars("i32", j=j, nelr=nelr),
        *pointers("old_variables", "variables", "step_factors", "fluxes"),
    ]
    arrays = {
        **same_arrays(("old_variables", "variables"), ArraySpec("float32", (CFD_NVAR * nelr,))),
        "step_factors": ArraySpec("float32", (nelr,), "uniform", 1e-3, 1e-2),
        "fluxes": ArraySpec("float32", (CFD_NVAR * nelr,), "uniform", -1.0, 1.0),
    }
    fixed = {"old_variables": _cfd_state(nelr, 333)}
    return _cfd_recipe("rd_cfd_time_step", nelr, 333, params, arrays, "variables", run, fixed=fixed)


# ---- streamcluster ------------------------------------------------------------------------------------
SC_BLOCK = 512
SC_DIM = 256  #: the original's run: 256 dimensions
SC_K = 16  #: open centres (the run asks for 10 to 20)
SC_WORDS = 8  #: a Point is 32 bytes: weight, (pad), coord pointer, assign (64-bit), cost, (pad)


@FAMILY.recipe(64, "dim 256, 65536 points per chunk")
def _rd_streamcluster(scale: float = 1.0, ctas: int | None = None) -> Recipe:
    """kernel_compute_cost's launch: 512 threads, one per point; 1024 points at scale 1, the original's chunk
    of 65536 points at scale 64 (dim 256 at every scale: the distance loop keeps the original's length)."""
    assert manifest_entry("rd_streamcluster")["threads_per_cta"] == SC_BLOCK
    num = SC_BLOCK * max(1, int(round(2 * scale)))
    stride = SC_K + 1
    rng = np.random.default_rng(341)
    coord = rng.uniform(0.0, 1.0, (SC_DIM, num)).astype(np.float32)
    x = int(rng.integers(0, num))
    centres = rng.choice(num, SC_K, replace=False)
    table = np.zeros(num, np.int32)
    table[centres] = np.arange(SC_K)
    assign = centres[rng.integers(0, SC_K, num)]
    weight = rng.uniform(0.5, 2.0, num).astype(np.float32)
    # the current costs: clearly above or below the cost of moving to x, so the comparison is decided by
    # more than the rounding of the distance
    c64 = coord.astype(np.float64)
    moving = ((c64 - c64[:, x : x + 1]) ** 2).sum(axis=0) * weight
    factor = np.where(
        rng.uniform(0.0, 1.0, num) < 0.5, rng.uniform(0.3, 0.9, num), rng.uniform(1.1, 3.0, num)
    )
    cost = (moving * factor).astype(np.float32)
    cost[x] = np.float32(0.5)  # x itself: distance 0, a saving
    words = np.zeros((num, SC_WORDS), np.uint32)
    words[:, 0] = weight.view(np.uint32)
    words[:, 4] = assign.astype(np.uint32)  # the low half of the 64-bit assign (the high half 0)
    words[:, 6] = cost.view(np.uint32)

    def run(ins):
        c = ins["coord"].astype(np.float64).reshape(SC_DIM, num)
        w = ins["p"].reshape(num, SC_WORDS)
        wt, cur = w[:, 0].view(np.float32).astype(np.float64), w[:, 6].view(np.float32).astype(np.float64)
        dist = ((c - c[:, x : x + 1]) ** 2).sum(axis=0)
        moved = dist * wt
        # rounded operations: a subtraction and a multiply-add per dimension, the weighting, the difference
        err = (2 * SC_DIM + 2) * EPS32 * (moved + np.abs(cur))
        return moved, cur, err, w[:, 4].astype(np.int64)

    def ref(ins, sc):
        moved, cur, _err, asg = run(ins)
        work = np.zeros((num + 1, stride))
        save = moved < cur
        idx = np.arange(num)
        work[idx[save], SC_K] += moved[save] - cur[save]
        keep = ~save
        work[idx[keep], ins["center_table"][asg[keep]]] += cur[keep] - moved[keep]
        return {"work_mem": work.reshape(-1), "switch_membership": save.astype(np.uint8)}

    def tol(ins):
        moved, cur, err, asg = run(ins)
        bound = np.zeros((num + 1, stride))
        save = moved < cur
        idx = np.arange(num)
        bound[idx[save], SC_K] = err[save]
        bound[idx[~save], ins["center_table"][asg[~save]]] = err[~save]
        return 0.0, bound.reshape(-1)

    blocks = -(-num // SC_BLOCK)
    return Recipe(
        kernel="rd_streamcluster",
        grid=(blocks, 1),
        block=(SC_BLOCK,),
        params=[
            *scalars("i32", num=num, dim=SC_DIM),
            *scalars("i64", x=x),
            *pointers("p"),
            *scalars("i32", K=SC_K, stride=stride),
            Param("coord_d", "ptr", array="coord"),
            Param("work_mem_d", "ptr", array="work_mem"),
            Param("center_table_d", "ptr", array="center_table"),
            Param("switch_membership_d", "ptr", array="switch_membership"),
        ],
        arrays={
            "p": ArraySpec("uint32", (num * SC_WORDS,)),
            "coord": ArraySpec("float32", (SC_DIM * num,)),
            "work_mem": ArraySpec("float32", (stride * (num + 1),)),
            "center_table": ArraySpec("int32", (num,)),
            "switch_membership": ArraySpec("uint8", (num,)),
        },
        fixed={"p": words.reshape(-1), "coord": coord.reshape(-1), "center_table": table},
        outputs=["work_mem", "switch_membership"],
        seed=341,
        reference=ref,
        tolerance={"work_mem": tol},
    )
