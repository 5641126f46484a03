"""Monte-Carlo: sampling where no closed form serves, and uncertainty propagation.

(a) :func:`prefetch_max_load`: the distribution of the largest bank load when a working set of
``n`` registers is a uniformly random ``n``-subset of a warp's ``R`` registers, mapped
``reg mod B`` (prefetching a working set into a register cache reads it bank by bank; random
register allocation).  The multivariate hypergeometric maximum has no convenient closed form; it
is sampled here and checked against exhaustive enumeration on small cases
(:func:`rfmodel.analytic.banks.distinct_register_max_load`, tests/test_montecarlo.py).

(b) :func:`evaluate_montecarlo` (``evaluate(..., method="montecarlo")``): uncertain workload,
model and technology parameters are sampled from the distributions of an ``uncertainty`` spec
and pushed through the analytic engine; the result holds, for every metric, the sample mean and
the 2.5 % / 97.5 % quantiles as ``<metric>_lo`` / ``<metric>_hi`` (same dims).

Distributions (relative to the nominal value ``x``): ``("normal", sd)`` -> ``x (1 + sd Z)``
(clipped at 0), ``("lognormal", sd)`` -> ``x exp(sd Z)``, ``("uniform", h)`` -> ``x U(1-h, 1+h)``;
``0 <= sd <= 1`` and ``0 <= h < 1`` (:data:`MAX_WIDTH`).  ``ipc_factor`` (``model_error``) also takes
``("lognormal", {read_cycles: sd, ...})``: a scale per speed of the register banks (:class:`BankSpeedScale`),
each point's factor ``exp(sd(point) Z)`` with one ``Z`` a sample over every point.
Parameters:

=====================  ==================================================================
``mem_fraction``       memory instructions per instruction: scales the L1D lines per
                       instruction and the memory part of the dependency chains
``reads_per_instr``    register reads per instruction (operand and distinct counts)
``writes_per_instr``   register writes per instruction
``instructions``       the instruction count
``hit_rate``           multiplies the miss rate ``1 - h`` (clipped to [0, 1]) of every L1D
                       hit rate the profile gives, a design's own tables' through
                       ``WorkloadProfile.scaled_hits`` too
``<coefficient>``      any of the design's ``calibration_params`` (e.g. ``mem_scale``)
``model_error``        ``"calibrated"``: the model's cross-validated error from the calibration
                       file (lognormal on ``ipc_factor``; per speed of the register banks where
                       the calibration measured it so), or ``("lognormal", sd)``
``energy``             every structure's dynamic energies; ``leakage``: leakage power;
                       ``area``: areas
=====================  ==================================================================

The samples are one more axis of the grid: every factor is an array over the samples that broadcasts
against the design grid, and the analytic engine (:func:`rfmodel.analytic.engine.evaluate_analytic`) runs
once for all of them.  Every draw comes from one ``numpy.random.Generator(PCG64(seed))``: same inputs and
seed, the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import xarray as xr

from rfmodel.analytic.calibration import SPEED_SCALE_KEY, params_of
from rfmodel.analytic.profile import scale_misses

DISTRIBUTIONS = ("normal", "lognormal", "uniform")
WORKLOAD_KEYS = ("mem_fraction", "reads_per_instr", "writes_per_instr", "instructions", "hit_rate")
TECH_KEYS = ("energy", "leakage", "area")
#: the default probability of the interval ``<v>_lo`` .. ``<v>_hi`` (its quantiles: :data:`QUANTILES`)
DEFAULT_LEVEL = 0.95


# ----------------------------------------------------------------------------- (a) sampling
def prefetch_max_load(n: int, banks: int, registers: int, samples: int = 100_000, seed: int = 0):
    """Samples of the max bank load of a random ``n``-subset of ``registers`` registers (``reg mod B``)."""
    if not 0 <= n <= registers:
        raise ValueError("need 0 <= n <= registers")
    rng = np.random.default_rng(seed)
    keys = rng.random((samples, registers))
    regs = np.argpartition(keys, n - 1, axis=1)[:, :n] if n > 0 else np.zeros((samples, 0), int)
    b = regs % banks
    counts = np.zeros((samples, banks), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(samples), n), b.ravel()), 1)
    return counts.max(axis=1)


# ----------------------------------------------------------------------------- (b) uncertainty
@dataclass(frozen=True)
class BankSpeedScale:
    """A scale per speed of the register banks, ``(read_cycles, value)`` pairs, read_cycles the cycles one
    read holds a bank (:func:`rfmodel.calibrate.effects.bank_speed`, a multiple of the SM's own one cycle):
    the calibration measures the analytic model's errors so, several times larger at slow banks than at the
    SM's own.  At a point (its ``main_rf_read_cycles``; the SM's own where a design reports none): linear in
    the logarithm of the cycles between two speeds measured, the nearest one's beyond them."""

    points: tuple

    @classmethod
    def of(cls, table: dict) -> BankSpeedScale:
        return cls(tuple(sorted((float(k), float(v)) for k, v in table.items())))

    def at(self, read_cycles) -> np.ndarray:
        c = np.nan_to_num(np.asarray(read_cycles, dtype=np.float64), nan=1.0)
        xp = [np.log(s) for s, _ in self.points]
        return np.interp(np.log(np.maximum(c, 1.0)), xp, [v for _, v in self.points])


def model_error_entries(uncertainty: dict) -> dict:
    """The coefficient entries besides the drawn factors that an ``uncertainty`` spec needs: its model
    error's :class:`BankSpeedScale` under :data:`SPEED_SCALE_KEY` where it is given per bank speed (the
    draws of ``ipc_factor`` are then unit lognormal, ``exp(Z)``)."""
    spec = uncertainty.get("ipc_factor")
    if spec is not None and isinstance(spec[1], dict):
        return {SPEED_SCALE_KEY: BankSpeedScale.of(spec[1])}
    return {}


def draw(spec, size: int, rng: np.random.Generator) -> np.ndarray:
    """Relative factors for one parameter (see the module docstring); a lognormal whose width is a table per
    bank speed gives unit draws ``exp(Z)`` (:func:`model_error_entries`)."""
    kind, width = spec[0], (1.0 if isinstance(spec[1], dict) else float(spec[1]))
    if kind == "normal":
        return np.maximum(1.0 + width * rng.standard_normal(size), 0.0)
    if kind == "lognormal":
        return np.exp(width * rng.standard_normal(size))
    if kind == "uniform":
        return rng.uniform(1.0 - width, 1.0 + width, size)
    raise ValueError(f"distribution '{kind}' is not one of normal, lognormal, uniform")


def perturb_profile(prof, f: dict):
    """A profile with the workload factors ``f`` applied (scalars, or arrays over a leading samples axis
    that broadcast against the grid)."""
    changes = {}
    if "mem_fraction" in f:
        changes["mem_lines_per_instr"] = prof.mem_lines_per_instr * f["mem_fraction"]
        changes["mem_fraction"] = prof.mem_fraction * f["mem_fraction"]
        if prof.load_lines_per_instr is not None:
            changes["load_lines_per_instr"] = prof.load_lines_per_instr * f["mem_fraction"]
    if "reads_per_instr" in f:
        changes["reads_per_instr"] = prof.reads_per_instr * f["reads_per_instr"]
        changes["distinct_reads_per_instr"] = prof.distinct_reads_per_instr * f["reads_per_instr"]
    if "writes_per_instr" in f:
        changes["writes_per_instr"] = prof.writes_per_instr * f["writes_per_instr"]
    if "instructions" in f:
        n = np.maximum(np.round(prof.n_instrs * np.asarray(f["instructions"])), 1)
        changes["n_instrs"] = int(n) if n.ndim == 0 else n
    if "hit_rate" in f:
        h0 = prof.l1d_hit_rate

        def hit(lines, assoc=None, loads=False, write_allocate=True, _h0=h0, _f=f["hit_rate"]):
            return scale_misses(_h0(lines, assoc, loads, write_allocate), _f)

        # and the hit rates a design reads from its own tables of the L1D's lines (scaled_hits)
        f0 = prof.hit_rate_factor
        p = replace(prof, **changes, hit_rate_factor=f["hit_rate"] if f0 is None else f0 * f["hit_rate"])
        object.__setattr__(p, "l1d_hit_rate", hit)
        return p
    return replace(prof, **changes) if changes else prof


def perturb_coefficients(coef: dict, f: dict) -> dict:
    """Coefficients with the factors ``f`` applied: a coefficient named in ``f`` is multiplied by
    its factor; ``mem_fraction`` also scales ``mem_scale`` (more loads on each warp's dependency
    chain lengthen its memory part in proportion)."""
    out = {k: (np.asarray(v) * f[k] if k in f else v) for k, v in coef.items()}
    if "mem_fraction" in f and "mem_scale" in out:
        out["mem_scale"] = np.asarray(out["mem_scale"]) * f["mem_fraction"]
    return out


def resolve_model_error(design, uncertainty: dict, calibration) -> dict:
    """Replace the spec's ``model_error`` entry by the coefficient that carries it.

    ``"model_error": "calibrated"`` (or ``True``) is the analytic model's own error on workloads it
    was not fitted on, as the calibration measured it (``model_log_ipc_sd``, the cross-validated RMS of
    ``log(IPC_model / IPC_sim)``, docs/calibration.md), per speed of the register banks where the
    calibration gives it so (``model_log_ipc_sd_by_bank_speed``: at slow banks the error is several times the
    SM's own, :class:`BankSpeedScale`); ``("lognormal", sd)`` gives it explicitly.  Either is drawn as a
    lognormal factor on ``ipc_factor`` (the modelled IPC; cycles, time-based energy and power follow from
    it).
    """
    from rfmodel.errors import RfmodelError

    if "model_error" not in uncertainty:
        return uncertainty
    spec = uncertainty.pop("model_error")
    if spec is True or spec == "calibrated":
        from rfmodel.analytic.calibration import design_entry

        entry = design_entry(calibration, design.name)
        sd, table = entry.get("model_log_ipc_sd"), entry.get("model_log_ipc_sd_by_bank_speed")
        if sd is None and not table:
            raise RfmodelError(
                f"uncertainty: model_error='calibrated' needs a calibration with a model-error scale for "
                f"'{design.name}' (run `rfmodel calibrate`), or give it as ('lognormal', sd)"
            )
        spec = ("lognormal", dict(table) if table and len(table) > 1 else float(sd))
    if "ipc_factor" in uncertainty:
        raise RfmodelError(
            "uncertainty: give model_error or ipc_factor, not both (model_error is drawn on ipc_factor)"
        )
    uncertainty["ipc_factor"] = spec
    return uncertainty


def check_uncertainty(design, uncertainty: dict, calibration, samples: int) -> dict:
    """The uncertainty spec with ``model_error`` resolved; one clear error for an unknown name."""
    from rfmodel.errors import RfmodelError

    coefs = set(params_of(design))
    uncertainty = resolve_model_error(design, dict(uncertainty), calibration)
    for k in uncertainty:
        if k not in WORKLOAD_KEYS + TECH_KEYS and k not in coefs:
            raise RfmodelError(
                f"uncertainty: unknown parameter '{k}'; allowed: {', '.join(WORKLOAD_KEYS + TECH_KEYS)} "
                f"or a coefficient of '{design.name}' ({', '.join(sorted(coefs))})"
            )
    if samples < 2:
        raise RfmodelError("montecarlo needs samples >= 2")
    if not uncertainty:
        raise RfmodelError(
            "montecarlo needs at least one uncertain parameter (uncertainty=, on the command "
            "line --uncertainty NAME=DIST:WIDTH, e.g. mem_fraction=normal:0.1 or "
            "model_error=calibrated)"
        )
    check_widths(uncertainty)
    return uncertainty


#: the widest distributions: a relative standard deviation (normal; lognormal: of the logarithm) of at most 1,
#: a uniform half-width below 1 (a factor in (0, 2)); wider ones give factors of no physical meaning
MAX_WIDTH = {"normal": 1.0, "lognormal": 1.0}


def check_widths(uncertainty: dict) -> None:
    """One clear error for an entry of ``uncertainty`` that is not a distribution of an allowed width
    (``model_error="calibrated"`` passes: its width comes from the calibration)."""
    from rfmodel.errors import RfmodelError

    for k, spec in uncertainty.items():
        if k == "model_error" and (spec is True or spec == "calibrated"):
            continue
        ok = isinstance(spec, (tuple, list)) and len(spec) == 2 and spec[0] in DISTRIBUTIONS
        table = ok and isinstance(spec[1], dict)
        if table:  # the model error per bank speed: a lognormal on ipc_factor, every scale allowed
            ok = (
                k in ("ipc_factor", "model_error")
                and spec[0] == "lognormal"
                and spec[1]
                and all(_number(c) and float(c) >= 1 for c in spec[1])
            )
        for width in spec[1].values() if table else [spec[1] if ok else None]:
            ok = ok and isinstance(width, (int, float)) and _number(width)
            ok = ok and 0 <= width and (width < 1 if spec[0] == "uniform" else width <= MAX_WIDTH[spec[0]])
        if not ok:
            raise RfmodelError(
                f"uncertainty '{k}': {spec!r} is not a distribution of an allowed width; allowed: (normal, "
                "0 <= sd <= 1), (lognormal, 0 <= sd <= 1) or (uniform, 0 <= half-width < 1); model_error and "
                "ipc_factor also (lognormal, {read_cycles >= 1: sd, ...})"
            )


def _number(x) -> bool:
    """A finite real number, given as a number or its text (a table's keys come from JSON)."""
    try:
        return not isinstance(x, bool) and np.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def interval_quantiles(level) -> tuple[float, float]:
    """The quantiles ``((1 - level) / 2, (1 + level) / 2)`` of a central interval of probability ``level``
    (``0 < level < 1``; 0.95 gives the 2.5 % and 97.5 % quantiles)."""
    from rfmodel.errors import expect_between

    lv = expect_between("level (the Monte-Carlo interval's probability)", level, 0.0, 1.0, "0.95")
    return round((1.0 - lv) / 2.0, 12), round((1.0 + lv) / 2.0, 12)  # 0.025, not 0.025000000000000022


#: the quantiles of the default interval (2.5 % and 97.5 %)
QUANTILES = interval_quantiles(DEFAULT_LEVEL)


def evaluate_montecarlo(
    design,
    workloads,
    sm,
    *,
    grid: dict,
    dims: list,
    coords: dict,
    uncertainty: dict,
    samples: int,
    seed: int,
    calibration,
    level=DEFAULT_LEVEL,
    **engine,
) -> xr.Dataset:
    """``evaluate(method="montecarlo")``: see the module docstring.  ``level``: the probability of the
    interval ``<v>_lo`` .. ``<v>_hi``.  ``engine``: the other arguments of
    :func:`rfmodel.analytic.engine.evaluate_analytic`."""
    from rfmodel.analytic.engine import evaluate_analytic

    interval_quantiles(level)
    uncertainty = check_uncertainty(design, uncertainty, calibration, samples)
    rng = np.random.Generator(np.random.PCG64(seed))
    ndim = len(np.broadcast_shapes(*(np.shape(v) for v in grid.values()))) if grid else 0
    # one leading samples axis that the grid's arrays broadcast against
    axis = (samples,) + (1,) * ndim
    factors = {k: draw(uncertainty[k], samples, rng).reshape(axis) for k in sorted(uncertainty)}
    defaults = {k: v[0] for k, v in params_of(design).items()}
    extra = {"calib." + k: v for k, v in model_error_entries(uncertainty).items()}

    def perturb(prof, structs, g):
        prof = perturb_profile(prof, {k: v for k, v in factors.items() if k in WORKLOAD_KEYS})
        g = {**g, **extra}
        base = {k: g.get("calib." + k, v) for k, v in defaults.items()}
        for k, v in perturb_coefficients(base, factors).items():
            if k in factors or (k == "mem_scale" and "mem_fraction" in factors):
                g["calib." + k] = np.asarray(v)
        if any(k in factors for k in TECH_KEYS):
            e, lk, a = (factors.get(k, 1.0) for k in TECH_KEYS)
            structs = [
                replace(
                    s,
                    read_pj=np.asarray(s.read_pj) * e,
                    write_pj=np.asarray(s.write_pj) * e,
                    leakage_mw=np.asarray(s.leakage_mw) * lk,
                    area_mm2=np.asarray(s.area_mm2) * a,
                )
                for s in structs
            ]
        return prof, structs, g

    runs = evaluate_analytic(
        design,
        workloads,
        sm,
        grid=grid,
        dims=["sample", *dims],
        coords={**coords, "sample": np.arange(samples)},
        seed=seed,
        calibration=calibration,
        perturb=perturb,
        **engine,
    )
    return summarize(runs, uncertainty, samples, seed, level)


def summarize(
    runs: xr.Dataset, uncertainty: dict, samples: int, seed: int, level=DEFAULT_LEVEL
) -> xr.Dataset:
    """Sample means and the quantiles of the central ``level`` interval (``<v>_lo`` / ``<v>_hi``; 2.5 / 97.5 %
    by default) of every variable with a ``sample`` dim (the others are kept as they are)."""
    q = interval_quantiles(level)
    coords = {k: v for k, v in runs.coords.items() if k != "sample" and "sample" not in v.dims}
    out = xr.Dataset(coords=coords)
    for v, da in runs.data_vars.items():
        if "sample" not in da.dims:
            out[v] = da
            continue
        axis = da.dims.index("sample")
        x = da.values
        dims = [d for d in da.dims if d != "sample"]
        with np.errstate(invalid="ignore"):
            # held within the draws' range: the sum's rounding put the mean of equal draws an ulp beside them
            mean = np.clip(x.mean(axis=axis), x.min(axis=axis), x.max(axis=axis))
            lo, hi = np.quantile(x, q, axis=axis)
        out[v] = (dims, mean, dict(da.attrs))
        out[f"{v}_lo"] = (dims, lo, {**da.attrs, "quantile": q[0]})
        out[f"{v}_hi"] = (dims, hi, {**da.attrs, "quantile": q[1]})
    out.attrs = dict(runs.attrs)
    out.attrs.update(
        {
            "engine": "montecarlo",
            "samples": samples,
            "seed": seed,
            "uncertainty": repr(dict(uncertainty)),
            "statistic": f"mean; _lo/_hi: {100 * q[0]:g}/{100 * q[1]:g} % quantiles",
            "level": float(level),
        }
    )
    return out
