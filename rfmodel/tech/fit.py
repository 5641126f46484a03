"""Smooth, monotone scaling laws fitted to tool output (CACTI, NVSim).

One :class:`LogSurface` describes one metric ``m`` (an energy, leakage, area
or latency) of one array family (cell, periphery, ports, temperature, tool
target) over capacity ``C`` (KB), row width ``w`` (bits) and process node::

    ln m = b[node] + sum_{i+j<=d} a_ij x^i y^j + ln(node / node_ref) (g_x x + g_y y)
    x = ln(C / C_ref),  y = ln(w / w_ref)

``b[node]`` is one intercept per node in the data: leakage does not scale with
the node by one exponent (it follows the ITRS device tables), so the node enters
as a category, with a shared slope correction.  The polynomial is fitted by least
squares in log space (relative errors) under the linear constraints
``dm/dC >= 0`` on a dense grid over the data box and every node, so energy,
leakage, area and latency never fall as capacity grows.  The surface is smooth:
it does not pass through every row where the tool's organisation search jumps
(it should not), and it never looks rows up.

Outside the data box (or below the fewest rows per bank any run had) the
surface continues log-linearly from the nearest feasible point: along its
boundary slope in capacity, and in width along the width slope
at the middle capacity of the box (so capacity monotonicity survives any width
extrapolation); between two data nodes it
interpolates ``ln m`` linearly in ``ln node``, the way CACTI interpolates its
own technology tables (e.g. 40 nm between 32 and 45 nm).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: smallest d ln m / d ln C the constrained fit allows (keeps "never falls" robust between grid points)
MIN_SLOPE = 1e-3
#: reference point of the feature scaling (conditioning only; no physical meaning)
C_REF_KB = 16.0
W_REF_BITS = 512.0
NODE_REF_NM = 32.0
#: values a surface remembers per node before it forgets them all (:meth:`LogSurface.log_value`)
MEMO_MAX = 1 << 16
#: kind and format version of a surface kept in the on-disk cache (:mod:`rfmodel.datafile`)
_FIT_KIND, _FIT_VERSION = "rfmodel technology fit", 1


def _terms(degree: int, w_degree: int) -> list[tuple[int, int]]:
    return [
        (i, j) for i in range(degree + 1) for j in range(min(w_degree, degree) + 1) if 0 < i + j <= degree
    ]


@dataclass
class LogSurface:
    """A fitted monotone log-polynomial surface; call it with (capacity_kb, width_bits, node_nm)."""

    terms: list[tuple[int, int]]
    nodes: tuple[float, ...]
    coef: np.ndarray  # [node intercepts..., poly terms..., g_x, g_y]
    box: tuple[float, float, float, float]  # x0, x1, y0, y1 (log space)
    node_slopes: bool
    min_rows: float = 0.0  # fewest rows (capacity / width) of any data row: the feasible region's edge
    n_rows: int = 0
    notes: list[str] = field(default_factory=list)
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ design matrices
    @staticmethod
    def _poly(terms, x, y):
        """The polynomial's columns ``x^i y^j`` and their derivatives in x and y, one column per term along
        a last axis (each element computed as ``x**i * y**j``, ``i * x**(i-1) * y**j``, ``j * x**i *
        y**(j-1)``, 0 where the power is 0)."""
        i = np.array([t[0] for t in terms], dtype=float)
        j = np.array([t[1] for t in terms], dtype=float)
        xe, ye = x[..., None], y[..., None]
        xi, yj = xe**i, ye**j
        cols = xi * yj
        dcols = np.where(i > 0, i * xe ** np.maximum(i - 1, 0) * yj, 0.0)
        dycols = np.where(j > 0, j * xi * ye ** np.maximum(j - 1, 0), 0.0)
        return cols, dcols, dycols

    @classmethod
    def _design(cls, terms, nodes, node_slopes, x, y, node):
        x, y, node = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float), np.asarray(node, float))
        cols, dcols, dycols = cls._poly(terms, x, y)
        dummies = (node[..., None] == np.asarray(nodes, dtype=float)).astype(float)
        zeros = np.zeros((*x.shape, len(nodes)))
        ln = np.log(node / NODE_REF_NM)
        zero, none = np.zeros_like(x), np.zeros((*x.shape, 0))
        slopes = np.stack([ln * x, ln * y], axis=-1) if node_slopes else none
        dslopes = np.stack([ln, zero], axis=-1) if node_slopes else none
        dyslopes = np.stack([zero, ln], axis=-1) if node_slopes else none
        X = np.concatenate([dummies, cols, slopes], axis=-1)
        Dx = np.concatenate([zeros, dcols, dslopes], axis=-1)
        Dy = np.concatenate([zeros, dycols, dyslopes], axis=-1)
        return X, Dx, Dy

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(
        cls,
        capacity_kb,
        width_bits,
        node_nm,
        values,
        *,
        degree: int = 3,
        node_slopes: bool = True,
        monotone: bool = True,
    ) -> LogSurface:
        """The surface through the data; kept in the on-disk cache (``rfmodel/cache.py``) keyed by the data,
        the options and this module's source, so a later process loads it instead of solving again."""
        import hashlib
        import json

        from rfmodel.cache import entry_path, read_entry, source_hash, write_with
        from rfmodel.datafile import read_checked, write_checked

        arrays = [np.asarray(a, float) for a in (capacity_kb, width_bits, node_nm, values)]
        h = hashlib.sha1(json.dumps([degree, node_slopes, monotone, source_hash("tech")]).encode())
        for a in arrays:
            h.update(np.ascontiguousarray(a).tobytes())
        path = entry_path("tech-fit", h.hexdigest()[:20], ".npz")
        # a checked data file (kind, version, checksum: rfmodel/datafile.py); a damaged or edited entry is
        # solved again and rewritten; an unwritable cache solves every time
        surf = read_entry(path, lambda p: cls.from_dict(read_checked(p, _FIT_KIND, _FIT_VERSION)[0]))
        if surf is None:
            surf = cls._solve(*arrays, degree=degree, node_slopes=node_slopes, monotone=monotone)
            write_with(path, lambda p: write_checked(p, _FIT_KIND, _FIT_VERSION, {}, surf.to_dict()))
        return surf

    def to_dict(self) -> dict:
        return {
            "terms": [list(t) for t in self.terms],
            "nodes": list(self.nodes),
            "coef": self.coef.tolist(),
            "box": list(self.box),
            "node_slopes": bool(self.node_slopes),
            "min_rows": self.min_rows,
            "n_rows": self.n_rows,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: dict) -> LogSurface:
        return cls(
            [tuple(t) for t in d["terms"]],
            tuple(float(n) for n in d["nodes"]),
            np.asarray(d["coef"], dtype=float),
            tuple(d["box"]),
            bool(d["node_slopes"]),
            float(d["min_rows"]),
            int(d["n_rows"]),
            list(d["notes"]),
        )

    @classmethod
    def _solve(cls, capacity_kb, width_bits, node_nm, values, *, degree, node_slopes, monotone) -> LogSurface:
        cap = np.asarray(capacity_kb, float)
        wid = np.asarray(width_bits, float)
        node = np.asarray(node_nm, float)
        v = np.asarray(values, float)
        keep = np.isfinite(v) & (v > 0)
        cap, wid, node, v = cap[keep], wid[keep], node[keep], v[keep]
        x = np.log(cap / C_REF_KB)
        y = np.log(wid / W_REF_BITS)
        nodes = tuple(sorted(set(node.tolist())))
        n_w = len(set(wid.tolist()))
        n_c = len(set(cap.tolist()))
        deg = min(degree, max(n_c - 1, 1))
        terms = _terms(deg, max(n_w - 1, 0))
        slopes = node_slopes and len(nodes) > 1
        # the model must have fewer parameters than rows; drop the highest orders until it does
        while terms and len(nodes) + len(terms) + 2 * slopes >= len(v):
            terms = terms[:-1]
        X, _, _ = cls._design(terms, nodes, slopes, x, y, node)
        ln_v = np.log(v)
        box = (float(x.min()), float(x.max()), float(y.min()), float(y.max()))
        # monotonicity constraints on a grid spanning the data box at every node
        gx, gy, gn = np.meshgrid(
            np.linspace(box[0], box[1], 41), np.linspace(box[2], box[3], 9), np.array(nodes), indexing="ij"
        )
        _, D, _ = cls._design(terms, nodes, slopes, gx.ravel(), gy.ravel(), gn.ravel())
        c0, *_ = np.linalg.lstsq(X, ln_v, rcond=None)
        notes = []
        if monotone and np.any(D @ c0 < MIN_SLOPE):
            from scipy.optimize import minimize  # only when a fit is solved (not for a cached one)

            scale = np.maximum(np.abs(X).max(axis=0), 1e-12)
            Xs, Ds = X / scale, D / scale
            res = minimize(
                lambda c: 0.5 * np.sum((Xs @ c - ln_v) ** 2),
                c0 * scale,
                jac=lambda c: Xs.T @ (Xs @ c - ln_v),
                method="SLSQP",
                constraints=[{"type": "ineq", "fun": lambda c: Ds @ c - MIN_SLOPE, "jac": lambda c: Ds}],
                options={"maxiter": 1000, "ftol": 1e-12},
            )
            c = res.x / scale
            if np.any(D @ c < 0):
                notes.append("monotone solve inexact")
            c0 = c
            notes.append("monotone constraints active")
        min_rows = float(np.min(cap * 8192.0 / wid))
        return cls(terms, nodes, c0, box, slopes, min_rows, len(v), notes)

    # ------------------------------------------------------------------ evaluation
    def _eval_at_node(self, x, y, node):
        """ln m at the data node ``node`` (x, y inside or outside the feasible box)."""
        x0, x1, y0, y1 = self.box
        yc = np.clip(y, y0, y1)
        # below the fewest rows any run had (CACTI finds no organisation there), continue from that edge
        x_lo = np.maximum(x0, np.log(self.min_rows * W_REF_BITS * np.exp(yc) / 8192.0 / C_REF_KB))
        xc = np.clip(x, np.minimum(x_lo, x1), x1)
        n = np.full_like(xc, node)
        X, Dx, _ = self._design(self.terms, self.nodes, self.node_slopes, xc, yc, n)
        # the width slope of the extension is taken at the middle capacity, so that extending in width never
        # changes the slope in capacity (which stays >= 0: the constrained boundary slope)
        _, _, Dy = self._design(
            self.terms, self.nodes, self.node_slopes, np.full_like(xc, (x0 + x1) / 2), yc, n
        )
        # row sums rather than a matrix product: a query's value does not depend on the others asked with it
        c = self.coef
        return (X * c).sum(axis=-1) + (Dx * c).sum(axis=-1) * (x - xc) + (Dy * c).sum(axis=-1) * (y - yc)

    def log_value(self, capacity_kb, width_bits, node_nm: float):
        """ln m at the queries (vectorized).  Values are remembered per (capacity, width, node): a search
        that asks for the same bank shapes again (``rfmodel optimize``) evaluates each once."""
        c, w = np.broadcast_arrays(np.asarray(capacity_kb, float), np.asarray(width_bits, float))
        node = float(node_nm)
        memo = self._memo.setdefault(node, {})
        # each distinct (capacity, width) once: a grid names few bank shapes at many points
        # (as one complex number each: numpy sorts those by both parts, and holds each part exactly)
        z = np.empty(c.size, dtype=np.complex128)
        z.real, z.imag = c.ravel(), w.ravel()
        pairs, inverse = np.unique(z, return_inverse=True)
        keys = list(zip(pairs.real.tolist(), pairs.imag.tolist(), strict=True))
        missing = [k for k in keys if k not in memo]
        if missing:
            if len(memo) + len(missing) > MEMO_MAX:
                memo.clear()
            mc, mw = np.array(missing, dtype=float).T
            memo.update(zip(missing, self._log_value(mc, mw, node).tolist(), strict=True))
        return np.array([memo[k] for k in keys], dtype=float)[inverse.ravel()].reshape(c.shape)

    def _log_value(self, capacity_kb, width_bits, node: float):
        x = np.log(np.asarray(capacity_kb, float) / C_REF_KB)
        y = np.log(np.asarray(width_bits, float) / W_REF_BITS)
        if node in self.nodes:
            return self._eval_at_node(x, y, node)
        lo = max(n for n in self.nodes if n < node)
        hi = min(n for n in self.nodes if n > node)
        t = (np.log(node) - np.log(lo)) / (np.log(hi) - np.log(lo))
        return (1 - t) * self._eval_at_node(x, y, lo) + t * self._eval_at_node(x, y, hi)

    def __call__(self, capacity_kb, width_bits, node_nm: float):
        return np.exp(self.log_value(capacity_kb, width_bits, node_nm))

    def width_elasticity(self, capacity_kb, width_bits, node_nm: float):
        """d ln m / d ln w at the query (finite difference on the fitted surface)."""
        h = 0.05
        w = np.asarray(width_bits, float)
        return (
            self.log_value(capacity_kb, w * np.exp(h), node_nm)
            - self.log_value(capacity_kb, w * np.exp(-h), node_nm)
        ) / (2 * h)

    @property
    def capacity_range_kb(self) -> tuple[float, float]:
        return float(C_REF_KB * np.exp(self.box[0])), float(C_REF_KB * np.exp(self.box[1]))

    @property
    def width_range_bits(self) -> tuple[float, float]:
        return float(W_REF_BITS * np.exp(self.box[2])), float(W_REF_BITS * np.exp(self.box[3]))
