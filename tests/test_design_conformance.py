"""One conformance suite over every registered design (in the spirit of scikit-learn's estimator checks).

Each check runs for every design the registry holds, with its capability tags: a new design gets them all
by registering itself.  Simulations use a few warps of one small kernel.
"""

from __future__ import annotations

import copy
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rfmodel
from rfmodel.analytic.engine import run_analytic, workload_profile
from rfmodel.designs.base import Design, DesignParams, design_classes, get_design
from rfmodel.errors import SpecError
from rfmodel.evaluate import resolve_gpu
from rfmodel.spec import dumps_spec, loads_spec

ROOT = Path(__file__).resolve().parent.parent
NAMES = sorted(design_classes())
SIM = [n for n in NAMES if design_classes()[n].supports_simulate]
GPU = "maxwell-ltrf"
WL = "saxpy"
SMALL = {"max_warps": 8}


def _bad_value(d: Design):
    """A parameter and a value outside what its spec allows."""
    for name in d.parameters:
        info = d.Params.field_info(name)
        if info.choices is not None and info.type in (int, float):
            return name, max(info.choices) + 7
        if info.bounds is not None and info.type in (int, float) and info.bounds[0] is not None:
            return name, info.bounds[0] - 3
    return None


@pytest.mark.parametrize("name", NAMES)
def test_params_spec_round_trips_through_toml(name):
    d = get_design(name)
    assert issubclass(d.Params, DesignParams) and d.parameters == d.Params.field_names()
    p = d.resolve()
    assert loads_spec(dumps_spec(p)) == p
    for field in d.parameters:  # a non-default value survives too
        info = d.Params.field_info(field)
        if info.type is int and info.bounds is not None:
            q = d.resolve({field: info.bounds[1]})
            assert loads_spec(dumps_spec(q)) == q and q != p
            break


@pytest.mark.parametrize("name", NAMES)
def test_bad_parameter_value_is_one_spec_error_in_every_engine(name):
    d = get_design(name)
    bad = _bad_value(d)
    if bad is None:
        pytest.skip("no bounded parameter")
    field, value = bad
    methods = ["analytic", "montecarlo"] + (["simulate"] if d.supports_simulate else [])
    for method in methods:
        with pytest.raises(SpecError, match=field):
            rfmodel.evaluate(name, WL, GPU, method=method, params={field: [value]}, **SMALL)
    with pytest.raises(SpecError, match="nearest|unknown"):
        d.resolve({field + "x": 1})


@pytest.mark.parametrize("name", NAMES)
def test_every_bounded_parameter_rejects_values_outside_its_range(name):
    d = get_design(name)
    for field in d.parameters:
        info = d.Params.field_info(field)
        bad = []
        if info.choices is not None and info.type in (int, float):
            bad.append(max(info.choices) + 1)
        elif info.bounds is not None and info.type in (int, float):
            lo, hi = info.bounds
            bad += [lo - 1] if lo is not None else []
            bad += [hi * 2 + 1] if hi is not None else []
        for v in bad:
            with pytest.raises(SpecError, match=field):
                d.resolve({field: v})


@pytest.mark.parametrize("name", NAMES)
def test_calibration_coefficients_start_inside_their_bounds(name):
    for k, (default, lo, hi) in get_design(name).calibration_params.items():
        assert lo <= default <= hi, k


@pytest.mark.parametrize("name", [n for n in SIM if design_classes()[n].needs_trace])
def test_a_design_that_needs_the_trace_says_so(name):
    from rfmodel.errors import RfmodelError
    from rfmodel.sim import SimOptions

    with pytest.raises(RfmodelError, match="trace"):
        get_design(name).sim_setup(resolve_gpu(GPU), {}, SimOptions())


@pytest.fixture(scope="module")
def runs():
    """Each design's analytic and simulated Datasets on one small workload (simulated once per design)."""
    out = {}
    for name in NAMES:
        a = rfmodel.evaluate(name, WL, GPU, method="analytic")
        s = rfmodel.evaluate(name, WL, GPU, method="simulate", **SMALL) if name in SIM else None
        out[name] = (a, s)
    return out


@pytest.mark.parametrize("name", SIM)
def test_analytic_and_simulate_return_the_same_variables(runs, name):
    a, s = runs[name]
    assert set(a.data_vars) == set(s.data_vars)
    for v in a.data_vars:
        assert a[v].dims == s[v].dims, v
        assert a[v].attrs.get("units") == s[v].attrs.get("units"), v
    assert list(a.stall_reason.values) == list(s.stall_reason.values)
    assert list(a.structure.values) == list(s.structure.values)
    # the design's own metrics: every one in both; a hit rate the models compute is a number
    for m in get_design(name).metrics:
        assert m in a and m in s
    if "rf_cache_hit_rate" in a:
        h = float(a["rf_cache_hit_rate"].item())
        assert 0.0 <= h <= 1.0
    for m in ("main_rf_read_cycles", "main_rf_write_cycles"):  # the banks' timing: one answer
        if m in a:
            assert a[m].values.tolist() == s[m].values.tolist()


@pytest.mark.parametrize("name", NAMES)
def test_every_event_names_a_structure_and_every_structure_gets_events(runs, name):
    d = get_design(name)
    sm = resolve_gpu(GPU)
    m = run_analytic(d, workload_profile(WL, sm), sm, {})
    names = {s.name for s in d.structures(sm, {}, {"cell": "sram-hp", "node_nm": 45})}
    assert set(m["events"]) == names
    a, s = runs[name]
    for ds in (a, s):
        if ds is None:
            continue
        ev = ds["structure_reads"] + ds["structure_writes"]
        assert np.all(ev.values > 0), ev.to_pandas()


@pytest.mark.parametrize("name", NAMES)
def test_power_gating_names_a_structure_and_a_metric_of_the_design(name):
    """``leakage_active`` maps structures the design costs to metrics it reports (in both engines)."""
    d = get_design(name)
    names = {s.name for s in d.structures(resolve_gpu(GPU), {}, {"cell": "sram-hp", "node_nm": 45})}
    for s, metric in d.leakage_active.items():
        assert s in names and metric in d.metrics


@pytest.mark.parametrize("name", [n for n in NAMES if design_classes()[n].size_parameters])
def test_area_and_leakage_never_fall_as_a_size_grows(name):
    d = get_design(name)
    sm = resolve_gpu(GPU)
    tech = {"cell": "sram-hp", "node_nm": 45}
    for param, structs in d.size_parameters.items():
        info = d.Params.field_info(param)
        lo, hi = info.bounds
        default = getattr(d.resolve(), param)
        values = np.array(sorted({max(lo, default // 2), default, min(hi, default * 2)}))
        by_name = {s.name: s for s in d.structures(sm, {param: values}, tech)}
        for sname in structs:
            s = by_name[sname]
            for cost in ("area_mm2", "leakage_mw"):
                total = np.broadcast_to(np.asarray(s.area_mm2 if cost == "area_mm2" else s.leakage_mw)
                                        * np.asarray(s.copies), values.shape)  # fmt: skip
                assert np.all(np.diff(total) >= 0), (param, sname, cost, total)
                assert total[-1] > total[0], (param, sname, cost, total)


@pytest.mark.parametrize("name", NAMES)
def test_a_run_leaves_the_design_unchanged_and_repeats_exactly(name):
    d = get_design(name)
    before = pickle.dumps(copy.deepcopy(vars(d)))
    a1 = rfmodel.evaluate(d, WL, GPU, method="analytic", seed=3)
    a2 = rfmodel.evaluate(d, WL, GPU, method="analytic", seed=3)
    assert a1.identical(a2)
    if d.supports_simulate:
        s1 = rfmodel.evaluate(d, WL, GPU, method="simulate", seed=3, max_warps=4)
        s2 = rfmodel.evaluate(d, WL, GPU, method="simulate", seed=3, max_warps=4)
        assert s1.identical(s2)
    assert pickle.dumps(copy.deepcopy(vars(d))) == before


# ----------------------------------------------------------------------------- sizes follow the grid
@pytest.mark.parametrize(("name", "param", "values", "structure"), [
    ("rfc", "rfc_kb", [4, 16, 64], "rf_cache"),
    ("malekeh", "ct_entries", [2, 8, 32], "ccu"),
    ("ltrf", "regs_per_interval", [8, 16, 32], "rf_cache"),
    ("bow", "window", [2, 3, 6], "bow_buffer"),
])  # fmt: skip
def test_structure_costs_follow_the_design_grid(name, param, values, structure):
    ds = rfmodel.evaluate(name, WL, GPU, params={param: values})
    area = ds["area_mm2"].sel(structure=structure).isel(workload=0).values
    assert np.all(np.diff(area) > 0), area
    sm = resolve_gpu(GPU)
    s = {x.name: x for x in get_design(name).structures(sm, {param: np.array(values)}, {})}[structure]
    read_pj = np.broadcast_to(s.read_pj, (len(values),))
    assert np.all(np.diff(read_pj) >= 0), read_pj  # a larger structure never costs less per access


def test_cli_bad_design_parameter_is_one_line_and_exit_2():
    cmd = [sys.executable, "-m", "rfmodel.cli", "evaluate", "--design", "rfc", "--workload", WL,
           "--param", "rfc_kb=-3"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    assert "rfc_kb" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


# ----------------------------------------------------------------------------- the banks' memory cell
@pytest.mark.parametrize("name", [n for n in SIM if "main_cell" in design_classes()[n].Params.field_names()])
def test_the_bank_cell_sets_timing_in_both_engines_and_costs_only_the_banks(name):
    cells = ["sram-hp", "stt-ram", "dwm"]
    a = rfmodel.evaluate(name, WL, "fermi-gtx480", params={"main_cell": cells})
    s = rfmodel.evaluate(name, WL, "fermi-gtx480", method="simulate", params={"main_cell": cells},
                         max_warps=4)
    # the technology layer at 700 MHz: SRAM 1/1, STT-RAM 1 read / 4 write, DWM 6/6 cycles per bank access
    for ds in (a, s):
        assert ds["main_rf_read_cycles"].isel(workload=0).values.tolist() == [1, 1, 6]
        assert ds["main_rf_write_cycles"].isel(workload=0).values.tolist() == [1, 4, 6]
        assert np.all(ds["ipc"].values > 0)
    bank = "main_rf_bank" if "main_rf_bank" in a.structure.values else "rf_bank"
    area = a["area_mm2"].sel(structure=bank).isel(workload=0).values
    assert len(set(area.round(9))) == 3  # each cell its own bank cost
    others = [x for x in a.structure.values if x not in (bank, "crossbar", "main_network")]
    for st in others:  # collectors and caches stay in the technology's cell (SRAM)
        v = a["area_mm2"].sel(structure=st).isel(workload=0).values
        assert np.allclose(v, v[0]), st
    # the technology's main cell without the parameter: the same timing
    t = rfmodel.evaluate(name, WL, "fermi-gtx480", tech={"main_cell": "dwm"})
    assert float(t["main_rf_read_cycles"].item()) == 6.0


def test_cli_main_cell_sweep_prints_the_cycles(capsys):
    from rfmodel.cli import main

    assert main(["evaluate", "--design", "ltrf", "--gpu", "maxwell-ltrf", "--workload", "gemm_micro8x8",
                 "--param", "main_cell=dwm,tfet,sram-hp", "--json"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    import json

    rows = json.loads(out)["rows"]
    cycles = {r["main_cell"]: r["main_rf_read_cycles"] for r in rows}
    assert cycles["sram-hp"] == 1 and cycles["dwm"] > cycles["tfet"] > 1


@pytest.mark.parametrize("name", ["rfc", "ltrf"])
def test_the_main_rf_network_adds_its_cycles_in_both_engines(name):
    """Beyond 64 main-RF banks the network is a flattened butterfly: on maxwell-ltrf (1137 MHz) over 128
    HP-SRAM or TFET banks it takes one cycle more than the SM's crossbar over its 16 banks; over the
    denser DWM banks it fits in the same cycle.  Both engines report it and the simulator's main-RF
    reads arrive that much later (fewer instructions per cycle, everything else equal)."""
    from rfmodel.designs.mainrf import MainRFParams, main_rf_timing, network_cycles, network_topology
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("maxwell-ltrf")
    assert network_topology(64) == "crossbar" and network_topology(65) == "flattened-butterfly"
    assert [network_cycles(sm, c, 128) for c in (None, "tfet", "dwm")] == [1, 1, 0]
    assert network_cycles(sm, None, sm.num_banks) == 0
    near, far = (main_rf_timing(MainRFParams(main_rf_banks=b), sm) for b in (sm.num_banks, 128))
    assert far[2] == near[2] + 1 and far[:2] == near[:2] and far[3] == near[3]
    params = {"main_rf_banks": [16, 128]}
    for method in ("analytic", "simulate"):
        kw = {"max_warps": 8} if method == "simulate" else {}
        ds = rfmodel.evaluate(name, "saxpy", "maxwell-ltrf", method=method, params=params, **kw)
        assert ds["main_rf_network_cycles"].isel(workload=0).values.tolist() == [0, 1]


# ----------------------------------------------------------------------------- plug-ins
def _example_design_source() -> str:
    text = (ROOT / "docs" / "designs.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- example-design -->\s*```python\n(.*?)```", text, re.S)
    assert m, "docs/designs.md has no example design block"
    return m.group(1)


def test_the_documented_example_design_runs_and_conforms(tmp_path, monkeypatch):
    """The minimal design of docs/designs.md, installed as a module found through the entry-point group."""
    import importlib.metadata as md

    from rfmodel.designs import base

    (tmp_path / "rf_example_design.py").write_text(_example_design_source(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = md.EntryPoint(name="half_banks", value="rf_example_design:HalfBanks", group=base.ENTRY_POINT_GROUP)

    def fake(group=None, **kw):
        return [ep] if group == base.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(md, "entry_points", fake)
    monkeypatch.setattr(base, "_LOADED", False)
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    assert "half_banks" in base.design_names()
    d = get_design("half_banks")
    ds = rfmodel.evaluate(d, WL, GPU, params={"share": [0.25, 1.0]}, calibration=False)
    ref = rfmodel.evaluate("baseline", WL, GPU, calibration=False)
    ipc = ds["ipc"].isel(workload=0).values
    assert ipc[1] == pytest.approx(float(ref["ipc"].item()))  # share 1: the baseline itself
    assert ds["bank_conflict_stall_cycles"].isel(workload=0).values[0] <= float(
        ref["bank_conflict_stall_cycles"].item())
    with pytest.raises(SpecError, match="share"):
        rfmodel.evaluate(d, WL, GPU, params={"share": [1.5]})


@pytest.mark.parametrize("gpu", ["maxwell-ltrf", "fermi-gtx480"])
@pytest.mark.parametrize("name", NAMES)
def test_tables_built_on_first_use_give_what_tables_built_at_once_give(name, gpu):
    """The default path's profile builds the tables only some designs read on first use
    (``WorkloadProfile.need``): every design's analytic answer on it equals its answer on the same profile
    with every table built at once (``profile_tables``), on an SM with a two-level scheduler (whose pool
    reads ``chain2``) and on a GTO one."""
    from dataclasses import replace

    from rfmodel.analytic import engine
    from rfmodel.analytic.profile import TABLE_GROUPS, profile_tables

    sm = resolve_gpu(gpu)
    engine._PROFILE_CACHE.clear()
    lazy = workload_profile(WL, sm)
    src = lazy.source
    trace, rank = src._trace_and_rank()
    full = profile_tables(trace, tuple(TABLE_GROUPS), src.latencies, src.exec_latencies, src.caches, rank,
                          src.l1_hit_latency, sched=engine.issue_resources(sm))  # fmt: skip
    eager = replace(lazy, source=None, **full)
    assert eager.sched_pending() is None and lazy.sched_todo is not None
    d = get_design(name)
    a, b = run_analytic(d, eager, sm, {}), run_analytic(d, lazy, sm, {})
    for k in ("ipc", "cycles", "rf_cache_hit_rate", "bank_conflict_stall_cycles"):
        if k in a:
            # bit for bit: each table (and list-schedule cell) built alone equals the same one built at once
            assert np.array_equal(np.asarray(a[k], float), np.asarray(b[k], float), equal_nan=True), k


@pytest.mark.parametrize("name", [n for n in NAMES if n != "baseline"])
def test_a_design_takes_the_baselines_fitted_coefficients_on_every_gpu(name):
    """The coefficients a design shares with the baseline (the interval model's, the banks') are the
    baseline's fitted values on each GPU, so that what the engines get wrong for both cancels in the
    design's effect; only the design's own terms are its own fit."""
    from rfmodel.analytic.calibration import load_calibration
    from rfmodel.calibrate import coef_for, shared_coefficients

    cal = load_calibration()
    if name not in cal["designs"]:
        pytest.skip(f"{name} is not in the package calibration")
    base, entry = cal["designs"]["baseline"], cal["designs"][name]
    shared = shared_coefficients(name)
    assert shared and shared <= set(base["coefficients"])
    for gpu in sorted(set(base.get("per_gpu", {})) | {"ampere-a100"}):
        b, d = coef_for(base, gpu), coef_for(entry, gpu)
        assert {k: d[k] for k in shared} == {k: b[k] for k in shared}, gpu


@pytest.mark.parametrize("name", [n for n in SIM if design_classes()[n].neutral is not None])
@pytest.mark.parametrize("gpu", ["fermi-gtx480", "volta-v100"])
def test_with_its_mechanism_off_a_design_gives_the_baselines_ipc_in_both_engines(name, gpu):
    """At its neutral point (``Design.neutral``) a design is the baseline: the simulator's cycles are the
    baseline's exactly, and the calibrated analytic IPC is the baseline's (the shared coefficients)."""
    neutral = {k: [v] for k, v in design_classes()[name].neutral.items()}
    wl = ["saxpy", "black_scholes"]
    a0 = rfmodel.evaluate("baseline", wl, gpu)["ipc"].values.ravel()
    a1 = rfmodel.evaluate(name, wl, gpu, params=neutral)["ipc"].values.ravel()
    np.testing.assert_allclose(a1, a0, rtol=1e-6)
    s0 = rfmodel.evaluate("baseline", "saxpy", gpu, method="simulate", max_warps=16)
    s1 = rfmodel.evaluate(name, "saxpy", gpu, method="simulate", params=neutral, max_warps=16)
    assert float(s1["cycles"].max()) == float(s0["cycles"].max())

