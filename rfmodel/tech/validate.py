"""Fit error of the array model against the reference grids, in sample and held out.

For every technology with tool data the surfaces are fitted exactly as the
estimators fit them (:class:`rfmodel.tech.fit.LogSurface` over one family's
rows), and the relative error ``|model / tool - 1|`` is reported per metric as
median and maximum over the rows:

``in-sample``  fit on all rows, evaluated on the same rows;
``loco``       leave one interior capacity out (every row of that capacity is
               held out, the rest fitted): interpolation between capacities;
``5-fold``     rows split at random (seed 0) into five folds, each predicted by
               a fit on the other four: configurations the fit has not seen.

Technologies: ``sram-hp``, ``sram-lstp``, ``sram-lop`` (CACTI, all three port
configurations pooled in the statistics, each fitted on its own), and NVSim's
SRAM (``sram-hp`` with ``source='nvsim'``), ``stt-ram`` and
``stt-ram-conservative`` at their estimators' NVSim targets.
"""

from __future__ import annotations

import numpy as np

from rfmodel.tech.array import CACTI_TARGET, DEFAULT_TEMPERATURE_K, PORTS
from rfmodel.tech.data import assumptions
from rfmodel.tech.fit import LogSurface

CACTI_METRICS = ("read_energy_pj", "write_energy_pj", "leakage_mw", "area_mm2", "access_ns")
NVSIM_METRICS = CACTI_METRICS + ("write_ns",)
MODES = ("in-sample", "loco", "5-fold")


def technologies(lib) -> dict[str, list[tuple]]:
    """Technology name -> the data families (index keys of ``lib``) it is fitted on."""
    t = float(DEFAULT_TEMPERATURE_K)
    targets = assumptions()["nvsim_targets"]
    out = {}
    for cell, dev in (("sram-hp", "itrs-hp"), ("sram-lstp", "itrs-lstp"), ("sram-lop", "itrs-lop")):
        out[f"{cell} (CACTI)"] = [("cacti", f"{dev}/{dev}", p, t, CACTI_TARGET) for p in PORTS]
    for name, cell in (
        ("sram-hp (NVSim)", "SRAM"),
        ("stt-ram (NVSim)", "STTRAM_aggressive"),
        ("stt-ram-conservative (NVSim)", "STTRAM"),
    ):
        out[name] = [("nvsim", cell, "1rw", t, targets[cell])]
    return out


def _errors(rows, metric: str, mode: str, seed: int = 0, degree: int = 3) -> np.ndarray:
    cap = np.array([r.capacity_kb for r in rows])
    wid = np.array([r.width_bits for r in rows])
    node = np.array([r.node_nm for r in rows])
    val = np.array([getattr(r, metric) for r in rows])

    def fit_predict(train, test):
        s = LogSurface.fit(cap[train], wid[train], node[train], val[train], degree=degree)
        pred = np.array([s(cap[i], wid[i], node[i]) for i in np.flatnonzero(test)]).ravel()
        return np.abs(pred / val[test] - 1.0)

    if mode == "in-sample":
        s = LogSurface.fit(cap, wid, node, val, degree=degree)
        pred = np.concatenate([np.atleast_1d(s(cap[node == n], wid[node == n], n)) for n in np.unique(node)])
        order = np.concatenate([np.flatnonzero(node == n) for n in np.unique(node)])
        return np.abs(pred / val[order] - 1.0)
    if mode == "loco":
        caps = np.unique(cap)[1:-1]
        return np.concatenate([fit_predict(cap != c, cap == c) for c in caps]) if len(caps) else np.array([])
    if mode == "5-fold":
        # folds over configurations (capacity, width, node), so no configuration is seen in training
        keys = sorted({(c, w, n) for c, w, n in zip(cap, wid, node, strict=True)})
        rng = np.random.default_rng(seed)
        fold_of = dict(zip(keys, rng.permutation(len(keys)) % 5, strict=True))
        folds = np.array([fold_of[(c, w, n)] for c, w, n in zip(cap, wid, node, strict=True)])
        return np.concatenate([fit_predict(folds != k, folds == k) for k in range(5) if np.any(folds == k)])
    raise ValueError(f"unknown validation mode {mode!r}")


def fit_errors(lib=None, modes=MODES, techs: list[str] | None = None) -> list[dict]:
    """Rows ``{"technology", "metric", "mode", "median", "max", "n"}`` (relative errors, fractions)."""
    if lib is None:
        from rfmodel.tech.array import default_library

        lib = default_library()
    out = []
    for tech, keys in technologies(lib).items():
        if techs is not None and tech not in techs:
            continue
        metrics = NVSIM_METRICS if keys[0][0] == "nvsim" else CACTI_METRICS
        fams = [lib.family(*k) for k in keys]
        fams = [f for f in fams if f is not None]
        for m in metrics:
            for mode in modes:
                e = np.concatenate([_errors(f.rows, m, mode, degree=f.degree) for f in fams])
                out.append(
                    {
                        "technology": tech,
                        "metric": m,
                        "mode": mode,
                        "median": float(np.median(e)) if e.size else float("nan"),
                        "max": float(np.max(e)) if e.size else float("nan"),
                        "n": int(e.size),
                    }
                )
    return out
