"""How slow may the main register file be?  The largest tolerable main-RF latency of a design.

"Enabling High-Capacity, Latency-Tolerant, and Highly-Concurrent GPU Register Files via
Software/Hardware Cooperation" (the LTRF paper) asks how many times slower than the baseline's
register file a design's main RF may be before performance suffers (its Figure 2 and section 7:
latency multiples 1x-8x and beyond).  :func:`max_tolerable_latency` answers it for any design with the
``main_rf_latency_x`` parameter (the baseline included: its banks then take that many cycles per
access): the largest multiple at which the design's IPC stays within ``tol`` of the reference
design's IPC at 1x.

Search: bisection on ``[1, hi]``.  It assumes that IPC does not rise with the main-RF latency
(monotone), which holds up to noise: a slower main RF can shift the warps' timing so that a few
bank conflicts or cache effects disappear, which the simulator may report as an IPC a fraction of
a percent higher.  Where IPC is not monotone, bisection returns *a* crossing point of the
``(1 - tol) x reference`` line: a multiple that passes whose next multiple ``resolution`` above fails.
The simulator rounds the multiple to whole cycles (``round(x x 1)`` cycles per access), so between
two integers IPC is a step function and a resolution finer than 1 finds the step's upper end.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from rfmodel.errors import RfmodelError, SpecError, expect_mapping

# the largest ``main_rf_latency_x`` the designs accept; the finest bisection step: a millionth of one latency
# multiple (finer steps only add evaluations)
from rfmodel.limits import MAX_LATENCY_X, MIN_RESOLUTION

__all__ = ["bisect_tolerance", "max_tolerable_latency"]


def _number(name: str, value, lo: float, hi: float, *, lo_open: bool = False) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(float(value))
    if ok:
        v = float(value)
        ok = (lo < v if lo_open else lo <= v) and v <= hi
    if not ok:
        rng = f"{'(' if lo_open else '['}{lo}, {hi}]"
        raise SpecError("max_tolerable_latency", name, value, f"number in {rng}")
    return float(value)


def bisect_tolerance(
    ipc_at: Callable[[float], float],
    ref_ipc: float,
    *,
    tol: float = 0.05,
    hi: float = 16.0,
    resolution: float = 0.25,
) -> dict:
    """Bisection for the largest ``x`` in ``[1, hi]`` with ``ipc_at(x) >= (1 - tol) ref_ipc``.

    ``ipc_at`` is called once per distinct ``x`` (at most ``2 + ceil(log2((hi - 1) / resolution))``
    times).  Returns ``latency_x`` (None when even ``x = 1`` fails), ``ipc_at_latency`` (the IPC at
    ``latency_x``), ``evaluations``, ``hi_reached`` (``hi`` itself passes: the true limit may be
    higher) and ``threshold_ipc``.
    """
    tol = _number("tol", tol, 0.0, 1.0, lo_open=True)
    hi = _number("hi", hi, 1.0, MAX_LATENCY_X)
    resolution = _number("resolution", resolution, MIN_RESOLUTION, MAX_LATENCY_X)
    if resolution >= hi - 1.0 and hi > 1.0:  # no interval to halve: every answer below hi would be 1x
        raise RfmodelError(
            f"resolution {resolution:g}: the search interval [1, {hi:g}] is no wider, so the bisection "
            f"could only answer 1x; give a resolution below {hi - 1.0:g}"
        )
    threshold = (1.0 - tol) * float(ref_ipc)
    seen: dict[float, float] = {}

    def ipc(x: float) -> float:
        if x not in seen:
            seen[x] = float(ipc_at(x))
        return seen[x]

    def passes(x: float) -> bool:
        return ipc(x) >= threshold

    out = {"threshold_ipc": threshold, "hi_reached": False}
    if not passes(1.0):
        return {**out, "latency_x": None, "ipc_at_latency": ipc(1.0), "evaluations": len(seen)}
    if passes(hi):
        out["hi_reached"] = True
        return {**out, "latency_x": hi, "ipc_at_latency": ipc(hi), "evaluations": len(seen)}
    lo, up = 1.0, hi  # invariant: lo passes, up fails
    while up - lo > resolution:
        mid = (lo + up) / 2.0
        if mid in (lo, up):  # below the floating-point spacing: nothing left to split
            break
        if passes(mid):
            lo = mid
        else:
            up = mid
    return {**out, "latency_x": lo, "ipc_at_latency": ipc(lo), "evaluations": len(seen)}


def max_tolerable_latency(
    design,
    workload,
    gpu="fermi-gtx480",
    *,
    params: dict | None = None,
    method: str = "simulate",
    tol: float = 0.05,
    hi: float = 16.0,
    resolution: float = 0.25,
    max_warps: int | None = None,
    seed: int = 0,
    reference="baseline",
) -> dict:
    """The largest ``main_rf_latency_x`` at which ``design``'s IPC is within ``tol`` of the reference's.

    The reference is ``reference`` (default the baseline) at 1x with the same ``params`` (those it
    understands); ``design`` is evaluated with ``params`` plus ``main_rf_latency_x``, by
    :func:`rfmodel.evaluate` with ``method`` ("simulate" or "analytic"; the reference is evaluated
    with the same method).  ``max_warps`` (None: the
    engine's default) and ``seed`` are passed on.  One workload (a name or a loaded workload).

    Returns a dict: ``latency_x`` (None when the design misses the target even at 1x),
    ``reference_ipc``, ``ipc_at_latency``, ``threshold_ipc``, ``evaluations`` (evaluations of
    ``design``; the reference's one is not counted), ``hi_reached``, and the inputs (``design``,
    ``reference``, ``workload``, ``gpu``, ``method``, ``tol``, ``hi``, ``resolution``).
    """
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import evaluate, resolve_gpu

    tol = _number("tol", tol, 0.0, 1.0, lo_open=True)
    hi = _number("hi", hi, 1.0, MAX_LATENCY_X)
    resolution = _number("resolution", resolution, MIN_RESOLUTION, MAX_LATENCY_X)
    d = get_design(design)
    ref = get_design(reference)
    if "main_rf_latency_x" not in d.parameters:
        raise RfmodelError(
            f"design '{d.name}' has no parameter 'main_rf_latency_x'; max_tolerable_latency needs it"
        )
    if method not in ("simulate", "analytic"):
        raise SpecError("max_tolerable_latency", "method", method, "'simulate' or 'analytic'")
    if isinstance(workload, list | tuple):
        if len(workload) != 1:
            raise SpecError("max_tolerable_latency", "workload", workload, "one workload")
        workload = workload[0]
    params = expect_mapping("params", params)
    if "main_rf_latency_x" in params:
        raise SpecError(
            "max_tolerable_latency",
            "params",
            "main_rf_latency_x",
            "design parameters other than main_rf_latency_x (it is searched)",
        )
    for k, v in params.items():
        if isinstance(v, list | tuple) or (hasattr(v, "shape") and getattr(v, "shape", ()) != ()):
            raise SpecError("max_tolerable_latency", f"params[{k!r}]", v, "a single value")
    mw = "auto" if max_warps is None else max_warps
    sm_fields = set(resolve_gpu(gpu).to_dict()) | {"collector_units"}

    def ipc(dd, p) -> float:
        ds = evaluate(
            dd, workload, gpu, method=method, params={k: [v] for k, v in p.items()}, max_warps=mw, seed=seed
        )
        return float(ds["ipc"].values.ravel()[0])

    ref_params = {k: v for k, v in params.items() if k in ref.parameters or k in sm_fields}
    if "main_rf_latency_x" in ref.parameters:
        ref_params["main_rf_latency_x"] = 1.0
    ref_ipc = ipc(ref, ref_params)
    res = bisect_tolerance(
        lambda x: ipc(d, {**params, "main_rf_latency_x": x}), ref_ipc, tol=tol, hi=hi, resolution=resolution
    )
    return {
        "design": d.name,
        "reference": ref.name,
        "workload": workload if isinstance(workload, str) else getattr(workload, "name", str(workload)),
        "gpu": gpu if isinstance(gpu, str) else getattr(gpu, "name", str(gpu)),
        "method": method,
        "tol": float(tol),
        "hi": float(hi),
        "resolution": float(resolution),
        "reference_ipc": ref_ipc,
        **res,
    }
