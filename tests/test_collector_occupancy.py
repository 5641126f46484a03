"""The collectors' occupancy in both engines: the analytic estimate by Little's law (the instructions
collecting at once over the units, docs/models.md) and its agreement with the simulator where collection is
all that holds a collector."""

from __future__ import annotations

import numpy as np
import pytest

import rfmodel
from rfmodel.analytic.calibration import PREFIX
from rfmodel.analytic.engine import run_analytic, workload_profile
from rfmodel.designs.base import get_design
from rfmodel.evaluate import resolve_gpu

UNITS = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])


@pytest.fixture(scope="module")
def volta():
    sm = resolve_gpu("volta-v100")
    return sm, workload_profile("sgemm_tiled", sm)


def test_occupancy_is_littles_law_over_the_units(volta):
    sm, prof = volta
    m = run_analytic(get_design("baseline"), prof, sm, {"collector_units": UNITS})
    ipc, hold = np.asarray(m["ipc"]), np.asarray(m["collector_cycles"])
    occ = np.asarray(m["collector_occupancy"])
    assert occ.shape == UNITS.shape
    np.testing.assert_allclose(occ, np.minimum(ipc * hold / UNITS, 1.0), rtol=1e-12)
    assert np.all((occ > 0) & (occ <= 1))
    # fewer units run fuller: the one-unit SM's collector is busy nearly every cycle, 32 units mostly idle
    assert np.all(np.diff(occ) < 0) and occ[0] > 0.9 and occ[-1] < 0.2


def test_occupancy_follows_the_monte_carlo_ipc_factor(volta):
    sm, prof = volta
    d = get_design("baseline")
    ref = run_analytic(d, prof, sm, {})
    half = run_analytic(d, prof, sm, {PREFIX + "ipc_factor": np.array(0.5)})
    np.testing.assert_allclose(half["ipc"], 0.5 * np.asarray(ref["ipc"]), rtol=1e-12)
    np.testing.assert_allclose(half["collector_occupancy"], 0.5 * np.asarray(ref["collector_occupancy"]))


@pytest.mark.parametrize("design", ["malekeh", "bow"])
def test_a_designs_residual_ipc_factor_scales_the_occupancy_with_the_ipc(volta, design):
    """Designs whose terms multiply the shared model's IPC (``AnalyticContext.scaled``) keep the occupancy
    at the scaled IPC times the same collection time."""
    sm, prof = volta
    m = run_analytic(get_design(design), prof, sm, {})
    units = sm.collectors.total
    expect = np.minimum(np.asarray(m["ipc"]) * np.asarray(m["collector_cycles"]) / units, 1.0)
    np.testing.assert_allclose(m["collector_occupancy"], expect, rtol=1e-9)


def test_engines_agree_where_collection_is_all_a_collector_holds():
    """A memory-bound kernel whose collectors never wait for an execution unit: the simulator's occupancy
    (busy collector-cycles over collector-cycles) and the model's agree to a point (0.1292 against 0.1291
    when written); where instructions wait in their collectors for a busy unit the model reads low, as the
    calibration report's metrics table says."""
    kw = dict(params={"num_banks": [16]})
    s = rfmodel.evaluate("baseline", "synthetic:fp-heavy", "volta-v100", method="simulate", **kw)
    a = rfmodel.evaluate("baseline", "synthetic:fp-heavy", "volta-v100", **kw)
    so = float(s["collector_occupancy"].values.ravel()[0])
    ao = float(a["collector_occupancy"].values.ravel()[0])
    assert 0.05 < so < 0.5
    assert abs(ao - so) < 0.01
