"""Calibrated coefficients: the convention between designs, the engine and ``rfmodel calibrate``.

A design declares its free analytic coefficients as the class attribute
``Design.calibration_params = {name: (default, lower, upper)}``.  The engine
passes their values to :meth:`Design.analytic` inside the grid, under the keys
``"calib.<name>"`` (scalars, or arrays that broadcast with the grid -- the
Monte-Carlo engine samples them); a design reads them as ``ctx.coef``
(:class:`rfmodel.analytic.model.AnalyticContext`).  The fitted values live in a versioned JSON file
(``rfmodel/data/calibration/analytic.json`` by default; see docs/calibration.md)
that :func:`load_calibration` reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

PREFIX = "calib."
DEFAULT_FILE = Path(__file__).resolve().parent.parent / "data" / "calibration" / "analytic.json"

#: coefficients of :func:`rfmodel.analytic.throughput.interval_model`: name -> (default, lower, upper bound)
INTERVAL_COEFFICIENTS = {
    "softmin_q": (4.0, 1.5, 16.0),  # sharpness of the soft minimum over bounds
    "pipe_extra": (1.0, -1.0, 4.0),  # extra cycles per dependence beyond collection (pipeline stages)
    "mem_scale": (1.0, 0.3, 3.0),  # scale on the modelled L1D-miss latency
    "dram_queue": (1.0, 0.0, 8.0),  # burstiness of the DRAM queue (1: M/D/1 with Poisson arrivals)
    "latency_scale": (1.0, 0.3, 3.0),  # scale on the CTA critical path (barriers, imbalance)
    "queue_burst": (1.0, 0.0, 8.0),  # burstiness of bank arrivals (1 = Poisson batches)
    "align_burst": (1.0, 0.2, 16.0),  # extra burstiness when a pool's warps share one bank rotation
    "slow_queue": (1.0, 0.0, 8.0),  # queueing across cycles when an access holds its bank several cycles
    "tail_weight": (0.5, 0.0, 1.0),  # weight of the wave/tail model against the steady state
    "ser_stall": (1.0, 0.0, 8.0),  # stall cycles per cycle of serialization beyond the first
    "queue_stall": (1.0, 0.1, 8.0),  # stall cycles per cycle of queueing wait
    # multiplies every design's modelled IPC (applied once, by rfmodel.analytic.engine.run_analytic); not
    # fitted (1 in every calibration): the Monte-Carlo engine draws the model's own error on it
    "ipc_factor": (1.0, 0.1, 10.0),
}
#: coefficients that calibration leaves at their defaults.  ``latency_scale`` stays 1: the list schedules
#: (``sched_cpi``) are the SM's issue pipeline run on the workload's own trace, and the anchor
#: (``rfmodel.analytic.engine.anchor_factor``) already puts the baseline at its defaults at the schedule's
#: pace; a fitted scale cancels there, so it was fitted only where other bounds act, and on ``volta-v100`` it
#: went to 1.71, which halved the model's latency pace and made the anchor about 2 on most kernels: the
#: anchor then doubled the banks' and collectors' bounds at slow-bank points too, and the queue coefficients
#: were fitted against that (docs/models.md, "Anchor")
NOT_FITTED = ("ipc_factor", "latency_scale")
#: the grid entry (``calib.`` + this) of the scale per bank speed a Monte-Carlo model-error draw of
#: ``ipc_factor`` is raised to (:func:`rfmodel.analytic.engine.run_analytic`,
#: :class:`rfmodel.analytic.montecarlo.BankSpeedScale`)
SPEED_SCALE_KEY = "ipc_factor_scale"


def coefficient_defaults(table=INTERVAL_COEFFICIENTS) -> dict:
    return {k: v[0] for k, v in table.items()}


def params_of(design) -> dict:
    """``{name: (default, lower, upper)}`` of a design's free coefficients (``Design.calibration_params``)."""
    return dict(design.calibration_params)


@lru_cache(maxsize=8)
def _read(path: str, mtime: float) -> dict:
    from rfmodel.errors import ParseError
    from rfmodel.io import read_text

    try:
        data = json.loads(read_text(path, "calibration file"))
    except json.JSONDecodeError as e:
        raise ParseError(path, e.lineno, f"malformed JSON: {e.msg}") from None
    except RecursionError:
        raise ParseError(path, None, "malformed JSON: nested too deeply to read") from None
    if not isinstance(data, dict) or not isinstance(data.get("designs", {}), dict):
        raise ParseError(path, None, "not an rfmodel calibration file (a table with 'designs')")
    return data


def calibration_data(calibration) -> dict | None:
    """What an engine's ``calibration=`` argument names: ``False``, none (the designs' defaults); a mapping,
    itself; ``None`` or a path, :func:`load_calibration`'s file."""
    if calibration is False:
        return None
    if isinstance(calibration, Mapping):
        return dict(calibration)
    return load_calibration(calibration)


def design_entry(calibration, design: str) -> dict:
    """One design's entry of :func:`calibration_data` (``{}`` when it has none)."""
    return ((calibration_data(calibration) or {}).get("designs") or {}).get(design) or {}


def load_calibration(path=None) -> dict | None:
    """The calibration file's contents: the package's own (``None`` when there is none), or the file ``path``
    names (an error when it is missing)."""
    p = Path(path) if path is not None else DEFAULT_FILE
    if not p.is_file():
        if path is not None:
            from rfmodel.errors import RfmodelError

            raise RfmodelError(f"{path}: no such calibration file")
        return None
    return _read(str(p), p.stat().st_mtime)


def calibrated_grid_entries(
    design, gpu_name: str, calibration: dict | None, fallback=None
) -> tuple[dict, str]:
    """Grid entries ``calib.<name>`` for ``design`` and a description for ``ds.attrs['calibration']``.

    A design's entry may hold per-GPU values (``"per_gpu": {gpu: {...}}``) over shared
    ``"coefficients"``.  A design without an entry (a plug-in, or a file calibrated for other designs)
    takes ``fallback``'s (the design the engine anchors every design on, the baseline) for the coefficients
    the two share, the shared interval model's, and its own at their defaults: the anchor is solved under
    the fallback's coefficients, so the design's terms run under the same ones, and a design whose
    mechanism is switched off gives the fallback's answer (with its defaults under that anchor it was 13-16 %
    above it).
    """
    params = params_of(design)
    if not params:
        return {}, "design has no calibrated coefficients"
    designs = (calibration or {}).get("designs", {})
    source = design.name
    if design.name not in designs:
        if fallback is None or fallback.name not in designs:
            return {}, "uncalibrated: design defaults (no calibration entry)"
        source = fallback.name
    entry = designs[source]
    values = dict(entry.get("coefficients", {}))
    values.update(entry.get("per_gpu", {}).get(gpu_name, {}))
    out = {PREFIX + k: float(v) for k, v in values.items() if k in params}
    desc = (
        f"{calibration.get('file', 'analytic.json')} version {calibration.get('version')} "
        f"(created {calibration.get('created')}, simulator {calibration.get('simulator_version')})"
    )
    if entry.get("per_gpu") and gpu_name not in entry["per_gpu"]:  # a renamed or new GPU spec
        desc = (
            f"no per-GPU entry for '{gpu_name}' (the file has {', '.join(sorted(entry['per_gpu']))}): the "
            f"coefficients shared over the GPUs; {desc}"
        )
    if source != design.name:
        desc = (
            f"no entry for '{design.name}': '{source}''s coefficients where the two share them, its own at "
            f"their defaults; {desc}"
        )
    return out, desc
