"""The evaluate façade: variables, units, provenance, grids and errors."""

from __future__ import annotations

import numpy as np
import pytest

import rfmodel
from rfmodel.analytic import engine
from rfmodel.errors import RfmodelError, SpecError, UnknownNameError

WL = "synthetic:register-sensitive"


@pytest.fixture(scope="module")
def banks_ds():
    return rfmodel.evaluate(
        "baseline", [WL, "saxpy"], "fermi-gtx480", params={"num_banks": [2, 4, 8, 16, 32]}
    )


def test_standard_variables_units_and_provenance(banks_ds):
    ds = banks_ds
    for v in (
        "ipc",
        "cycles",
        "rf_reads",
        "rf_writes",
        "bank_conflict_stall_cycles",
        "energy_pj",
        "power_mw",
        "area_mm2",
        "l1d_hit_rate",
        "capacity_kb",
    ):
        assert v in ds, v
        assert "units" in ds[v].attrs
    assert ds["energy_pj"].dims == ("workload", "num_banks", "structure")
    assert set(ds["structure"].values) == {"rf_bank", "collector", "crossbar"}
    assert ds.attrs["engine"] == "analytic" and ds.attrs["gpu"] == "fermi-gtx480"
    assert "CACTI" in ds.attrs["structure_provenance"]
    assert list(ds["workload"].values) == [WL, "saxpy"]


def test_invariants_over_the_bank_grid(banks_ds):
    ds = banks_ds
    ipc = ds["ipc"].values
    assert np.all(ipc > 0)
    # more banks never raise conflicts, never lower IPC in the model
    assert np.all(np.diff(ds["bank_conflict_stall_cycles"].values, axis=1) <= 1e-9)
    assert np.all(np.diff(ipc, axis=1) >= -1e-9)
    # cycles x IPC = instructions, the same at every design point
    insts = (ds["cycles"] * ds["ipc"]).values
    assert np.allclose(insts, insts[:, :1])
    # accesses do not depend on the bank count for the baseline
    assert np.allclose(ds["rf_reads"].values, ds["rf_reads"].values[:, :1])
    # energy parts add up
    tot = ds["dynamic_energy_pj"] + ds["leakage_energy_pj"]
    assert np.allclose(tot.values, ds["energy_pj"].values)
    assert np.allclose(ds["energy_pj"].sum("structure").values, ds["energy_pj_total"].values)


def test_points_mode_matches_product_mode(banks_ds):
    ds = rfmodel.evaluate("baseline", [WL], "fermi-gtx480", params={"num_banks": [4, 16]}, mode="points")
    assert ds["ipc"].dims == ("workload", "point")
    ref = banks_ds["ipc"].sel(workload=WL, num_banks=[4, 16]).values
    assert np.allclose(ds["ipc"].values[0], ref)


def test_capacity_limits_occupancy():
    ds = rfmodel.evaluate(
        "baseline", "gemm_micro8x8", "fermi-gtx480", params={"regs_per_sm": [8192, 16384, 32768]}
    )
    warps = ds["warps"].values[0]
    assert np.all(np.diff(warps) >= 0) and warps[-1] > warps[0]
    assert np.allclose(ds["capacity_kb"].values, [32, 64, 128])


def test_same_seed_same_result(monkeypatch):
    monkeypatch.setenv("RFMODEL_CACHE_DIR", "off")  # recompute the profile, do not reload it
    a = rfmodel.evaluate("baseline", WL, "volta-v100", seed=3)
    engine._PROFILE_CACHE.clear()
    b = rfmodel.evaluate("baseline", WL, "volta-v100", seed=3)
    assert a["ipc"].values.tobytes() == b["ipc"].values.tobytes()


def test_profiles_persist_on_disk_and_survive_a_damaged_entry(tmp_path, monkeypatch):
    """A built-in workload's profile is written once and reloaded field for field; a damaged entry is
    recomputed; with the cache off nothing is written."""
    from dataclasses import fields

    from rfmodel.evaluate import resolve_gpu, workload_profile

    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path))
    cache = engine._PROFILE_CACHE
    sm = resolve_gpu("volta-v100")
    cache.clear()
    first = workload_profile(WL, sm, seed=5)
    stored = list((tmp_path / "profiles").glob("*.npz"))
    assert len(stored) == 1
    cache.clear()
    again = workload_profile(WL, sm, seed=5)
    assert again is not first
    for f in fields(first):
        a, b = getattr(first, f.name), getattr(again, f.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), f.name
        elif f.name not in ("attrs", "source"):  # the source: how to build its other tables
            assert a == b, f.name
    stored[0].write_bytes(b"not a profile")
    cache.clear()
    healed = workload_profile(WL, sm, seed=5)
    assert np.array_equal(healed.sched_cpi, first.sched_cpi, equal_nan=True)
    assert np.load(stored[0])["ser_pmf"].shape == first.ser_pmf.shape
    monkeypatch.setenv("RFMODEL_CACHE_DIR", "off")
    cache.clear()
    workload_profile(WL, sm, seed=6)
    assert len(list((tmp_path / "profiles").glob("*.npz"))) == 1


def test_bad_inputs_raise_project_errors():
    with pytest.raises(UnknownNameError, match="design"):
        rfmodel.evaluate("nodesign", WL)
    with pytest.raises(UnknownNameError, match="preset"):
        rfmodel.evaluate("baseline", WL, "gtx9999")
    with pytest.raises(UnknownNameError, match="num_bank"):
        rfmodel.evaluate("baseline", WL, params={"num_bank": [4]})
    with pytest.raises(SpecError, match="num_banks"):
        rfmodel.evaluate("baseline", WL, params={"num_banks": [0]})
    with pytest.raises(RfmodelError):
        rfmodel.evaluate("baseline", "/nonexistent/file.sass")
    with pytest.raises(UnknownNameError):
        rfmodel.evaluate("baseline", WL, method="quantum")


def test_subcores_interleave_over_their_own_banks():
    from rfmodel.spec import get_preset

    volta = get_preset("volta-v100")
    flat = volta.replace(sub_core=False, bank_mapping="gpgpusim")
    a = rfmodel.evaluate("baseline", "sgemm_tiled", volta)
    b = rfmodel.evaluate("baseline", "sgemm_tiled", flat)
    # 16 banks split into 4 sub-cores of 4 (2 ports each): serialization inside an instruction is the
    # same as over 16 shared banks, but the warps of one sub-core share one bank rotation, so warps
    # running the same code collide (the simulator: 76 against 13 stall cycles with 16 warps)
    assert a["bank_conflict_stall_cycles"].item() > b["bank_conflict_stall_cycles"].item()


def test_sensitivity_matches_finite_difference_of_evaluate():
    s = rfmodel.sensitivity(
        "rfc", "saxpy", "fermi-gtx480", "main_rf_latency_x", at=3.0, rel_step=0.1, params={"rfc_kb": [8, 16]}
    )
    ds = rfmodel.evaluate(
        "rfc", "saxpy", "fermi-gtx480", params={"main_rf_latency_x": [2.7, 3.3], "rfc_kb": [8, 16]}
    )
    manual = (ds.ipc.sel(main_rf_latency_x=3.3) - ds.ipc.sel(main_rf_latency_x=2.7)) / 0.6
    np.testing.assert_allclose(s.d_ipc.values, manual.values, rtol=1e-9)
    # a slower main RF never helps; the elasticity is dimensionless
    assert (s.d_ipc <= 0).all() and (s.d_cycles >= 0).all()
    assert np.isfinite(s.elasticity_ipc).all()


def test_sensitivity_integer_parameter_steps_to_valid_values():
    s = rfmodel.sensitivity("baseline", "saxpy", "fermi-gtx480", "num_banks")
    # 32768 registers: the neighbours of 16 banks that divide them are 8 and 32
    assert (s.attrs["x_lo"], s.attrs["x"], s.attrs["x_hi"]) == (8, 16, 32)
    assert "d_bank_conflict_stall_cycles" in s


@pytest.mark.slow
def test_bench_analytic_member():
    """The benchmark's own grid (143,360 points, about 8 CPU-s); the default suite runs a cut of it."""
    from rfmodel.bench import ANALYTIC_GRID, bench_analytic

    r = bench_analytic(repeat=1, sim_seconds=(0.5, 0.4))
    n = int(np.prod([len(v) for v in ANALYTIC_GRID.values()]))
    assert r["points"] == n > 100_000
    assert r["points_per_s"] > 0 and r["speedup_vs_simulate"] == pytest.approx(r["points_per_s"] * 0.5)


def test_bench_analytic_member_on_a_cut_of_its_grid(monkeypatch):
    """The same measurement over three values of each of the grid's axes (each axis's ends and a middle
    value): every point of the product is modelled and counted, and the benchmark's own grid stays above
    100,000 points."""
    from rfmodel import bench

    full = bench.ANALYTIC_GRID
    assert int(np.prod([len(v) for v in full.values()])) > 100_000
    cut = {k: sorted({v[0], v[len(v) // 2], v[-1]}) for k, v in full.items()}
    monkeypatch.setattr(bench, "ANALYTIC_GRID", cut)
    # the evaluate sizes' grids cut too: 2 x 2 x 3 and 2 x 2 x 5 points over the five workloads
    assert [
        int(np.prod([len(v) if isinstance(v, list) else v for v in g.values()]))
        for g in bench.EVALUATE_GRIDS.values()
    ] == [1_000, 100_000]
    monkeypatch.setattr(
        bench,
        "EVALUATE_GRIDS",
        {
            "a": {"num_banks": [4, 8], "collector_units": [8, 16], "main_rf_latency_x": 3},
            "b": {"num_banks": [4, 8], "collector_units": [8, 16], "main_rf_latency_x": 5},
        },
    )
    r = bench.bench_analytic(repeat=1, sim_seconds=(0.5, 0.4))
    sizes = r["evaluate_sizes"]
    assert [(e["points"], e["workloads"]) for e in sizes] == [(12, 5), (20, 5)]
    assert all(e["points_per_cpu_s"] > 0 for e in sizes)
    n = int(np.prod([len(v) for v in cut.values()]))
    assert r["points"] == n and r["grid"] == {k: len(v) for k, v in cut.items()} and n >= 3**4 * 2**2
    assert r["points_per_s"] > 0 and r["speedup_vs_simulate"] == pytest.approx(r["points_per_s"] * 0.5)


def test_a_sass_file_profile_is_cached_by_its_content(tmp_path, monkeypatch):
    """A SASS listing's profile persists on disk keyed by its bytes: an edited file is profiled anew."""
    import shutil

    from rfmodel.evaluate import resolve_gpu, workload_profile
    from rfmodel.workload.suite import builtin_sass_path

    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "k.sass"
    shutil.copy(builtin_sass_path("saxpy"), src)
    sm = resolve_gpu("fermi-gtx480")
    engine._PROFILE_CACHE.clear()
    first = workload_profile(str(src), sm)
    assert len(list((tmp_path / "cache" / "profiles").glob("*.npz"))) == 1
    engine._PROFILE_CACHE.clear()
    assert workload_profile(str(src), sm).n_instrs == first.n_instrs  # from disk
    assert len(list((tmp_path / "cache" / "profiles").glob("*.npz"))) == 1
    src.write_text(src.read_text() + "\n")  # new bytes: a new entry, also in the same process
    workload_profile(str(src), sm)
    assert len(list((tmp_path / "cache" / "profiles").glob("*.npz"))) == 2


def test_sm_fields_given_together_are_checked_together():
    """``warps_per_sm=16`` is valid only with CTAs of at most 512 threads: both in one call are accepted (the
    single-valued fields are applied together before the others are checked), in both engines; a bad value
    is still one error naming its field."""
    import rfmodel
    from rfmodel.errors import SpecError

    params = {"warps_per_sm": [16], "max_threads_per_cta": [512]}
    for method in ("analytic", "simulate"):
        ds = rfmodel.evaluate("baseline", "saxpy", "maxwell-ltrf", method=method, params=params)
        assert 0 < float(ds["warps"].values.ravel()[0]) <= 16
    with pytest.raises(SpecError, match="max_threads_per_cta"):
        rfmodel.evaluate("baseline", "saxpy", "maxwell-ltrf", params={"warps_per_sm": [16]})


def test_profile_tables_are_built_on_first_use_kept_and_stored(tmp_path, monkeypatch):
    """A default-path profile holds the tables only some designs read as ``None`` until ``need`` builds
    them from its source: equal to building them at once, kept by the cached profile (also when a copy
    asks), written to the profile's disk entry, and buildable after pickling (a worker process).  A
    profile without a source says which tables it lacks; an unknown group is refused."""
    import pickle
    from dataclasses import replace

    import rfmodel.cache
    from rfmodel.analytic.profile import TABLE_GROUPS, profile_trace
    from rfmodel.designs.base import design_names, get_design
    from rfmodel.evaluate import resolve_gpu, workload_profile
    from rfmodel.testing import every_profile_table

    for name in design_names():  # every design's module registers its groups (CERF's 'shared', ...)
        get_design(name)
    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(rfmodel.cache, "SHIPPED_DIR", tmp_path / "shipped")  # built here, not the package's
    sm = resolve_gpu("fermi-gtx480")
    engine._PROFILE_CACHE.clear()
    prof = workload_profile("saxpy", sm)
    assert all(getattr(prof, f) is None for g in TABLE_GROUPS if g != "sched" for f in TABLE_GROUPS[g])
    assert np.isnan(prof.sched_cpi).all() and prof.sched_todo[0].all() and prof.has("sched")
    src = prof.source
    trace, _ = src._trace_and_rank()
    full = every_profile_table(src, sm)
    assert full["sched_todo"] is None and np.isfinite(full["sched_cpi"][0]).all()
    shipped = pickle.loads(pickle.dumps(replace(prof, n_instrs=prof.n_instrs + 1)))
    copy = replace(prof, n_instrs=prof.n_instrs + 1)
    assert copy.need("ct") is copy
    assert np.array_equal(copy.ct_hits, full["ct_hits"])
    assert np.array_equal(prof.ct_hits, full["ct_hits"])  # the cached profile keeps what a copy built
    assert prof.rc_hits is None  # only the group asked for
    # list-schedule cells: one built alone equals the same cell of the whole table; only it is built
    one = np.zeros_like(copy.sched_pending())
    one[0, 3, 2] = True
    copy.build_sched(one)
    assert prof.sched_cpi[0, 3, 2] == full["sched_cpi"][0, 3, 2] and not prof.sched_todo[0, 3, 2]
    assert np.isnan(prof.sched_cpi).sum() == np.isnan(full["sched_cpi"]).sum() + prof.sched_todo.sum()
    assert prof.sched_todo.sum() == np.isfinite(full["sched_cpi"]).sum() - 1
    engine._PROFILE_CACHE.clear()
    again = workload_profile("saxpy", sm)  # from disk
    assert again is not prof and np.array_equal(again.ct_hits, full["ct_hits"]) and again.iv_len is None
    assert again.sched_cpi[0, 3, 2] == full["sched_cpi"][0, 3, 2]
    assert again.sched_todo.sum() == prof.sched_todo.sum()
    engine._SOURCE_TRACES.clear()
    shipped.need("intervals", "shared", "reg_cache", "chain2", "sched")
    for g in ("intervals", "shared", "reg_cache", "chain2", "sched"):
        for f in TABLE_GROUPS[g]:
            assert np.array_equal(np.asarray(getattr(shipped, f)), np.asarray(full[f]), equal_nan=True), f
    assert not shipped.sched_todo.any() and shipped.sched_pending() is None
    # threads that read a fresh profile's cells at once get what the whole table gives
    from concurrent.futures import ThreadPoolExecutor

    from rfmodel.analytic.engine import run_analytic
    from rfmodel.designs.base import get_design

    base = get_design("baseline")
    eager = replace(prof, source=None, sched_cpi=full["sched_cpi"], sched_todo=None)
    want = float(run_analytic(base, eager, sm, {})["ipc"])
    engine._PROFILE_CACHE.clear()
    monkeypatch.setenv("RFMODEL_CACHE_DIR", "off")
    fresh = workload_profile("saxpy", sm)
    assert fresh.sched_todo.any() and fresh.sched_todo.sum() == np.isfinite(full["sched_cpi"]).sum()
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: float(run_analytic(base, fresh, sm, {})["ipc"]), range(8)))
    assert got == [want] * 8
    bare = profile_trace(trace, src.latencies, tables=("ct",))
    assert bare.ct_hits is not None and bare.has("ct") and not bare.has("shared")
    with pytest.raises(RfmodelError, match="without its 'shared' tables"):
        bare.need("shared")
    with pytest.raises(RfmodelError, match="unknown; allowed"):
        prof.need("banks")


@pytest.mark.parametrize("field, values", [("schedulers_per_sm", [1, 4]), ("issue_width", [2, 1])])
def test_analytic_grid_of_schedule_fields_answers_as_the_spec_that_has_them(field, values):
    """A workload's list schedule is built at the SM spec's schedulers and issue width: a grid that varies
    them is evaluated once per value on a spec that has it, so each point answers as a call on that spec
    (they were once read from the spec alone: every value gave the default's IPC), and the IPC moves as
    the simulator's does (more schedulers or a wider issue, more IPC on sgemm_tiled)."""
    from rfmodel.evaluate import _point_sm, resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    for design in ("baseline", "rfc"):
        ds = rfmodel.evaluate(
            design, "sgemm_tiled", sm, params={field: values, "num_banks": [8, 16]}, calibration=False
        )
        for i, v in enumerate(values):
            one = rfmodel.evaluate(
                design,
                "sgemm_tiled",
                _point_sm(sm, {field: v}),
                params={"num_banks": [8, 16]},
                calibration=False,
            )
            np.testing.assert_array_equal(ds.ipc.isel({field: i}).values, one.ipc.values)
        lo, hi = (ds.ipc.sel({field: v, "num_banks": 16}).item() for v in sorted(values))
        assert hi > 1.05 * lo
        # what a group's run says it does not model is said for the whole call (dual issue: width 2 only)
        assert ("dual_issue_diff_units" in ds.attrs["not_modelled"]) == (field == "issue_width")
    # the points mode: each point its own combination
    pts = rfmodel.evaluate(
        "baseline",
        "sgemm_tiled",
        sm,
        params={field: values, "num_banks": [8, 16]},
        mode="points",
        calibration=False,
    )
    for i, v in enumerate(values):
        one = rfmodel.evaluate(
            "baseline",
            "sgemm_tiled",
            _point_sm(sm, {field: v}),
            params={"num_banks": [[8, 16][i]]},
            calibration=False,
        )
        assert pts.ipc.isel(point=i).item() == one.ipc.values.ravel()[0]


def test_analytic_grid_of_registers_anchors_at_the_points_occupancy():
    """The anchor (the schedule's pace over the baseline's analytic IPC) is measured at the occupancy of
    the point: black_scholes on fermi-gtx480 with 16,384 registers holds fewer CTAs than with the SM's
    32,768, and a grid that sets the registers answers as a call on the spec that has them (within 1 %: the
    spec's profile also takes its L1D hit tables at that occupancy); it gave 1.659 against the spec's
    1.817 (simulated 1.869) while the anchor stayed at the SM's own occupancy.  A point at the SM's own
    occupancy keeps the SM's anchor exactly."""
    from rfmodel.evaluate import _point_sm, resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    grid = rfmodel.evaluate("baseline", "black_scholes", sm, params={"regs_per_sm": [16384, 32768]})
    spec = rfmodel.evaluate("baseline", "black_scholes", _point_sm(sm, {"regs_per_sm": 16384}))
    own = rfmodel.evaluate("baseline", "black_scholes", sm)
    assert grid.ipc.sel(regs_per_sm=16384).item() == pytest.approx(spec.ipc.item(), rel=0.01)
    assert grid.ipc.sel(regs_per_sm=32768).item() == own.ipc.item()
    assert grid.warps.sel(regs_per_sm=16384).item() < own.warps.item()


def test_a_refused_grid_value_is_refused_every_call_and_an_accepted_one_checked_once():
    """The spec checks of a grid's values are remembered for the values that pass (an optimizer asks for the
    same ones each generation); a value out of range is refused at every call, naming the field."""
    import importlib

    ev = importlib.import_module("rfmodel.evaluate")
    ev._valid_value.cache_clear()
    for _ in range(2):
        with pytest.raises(SpecError, match="num_banks"):
            rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", params={"num_banks": [8, 0]})
    grid = {"num_banks": [8, 16]}
    rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", params=grid)
    hits = ev._valid_value.cache_info().hits
    rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", params=grid)
    assert ev._valid_value.cache_info().hits == hits + 2


def test_a_workloads_anchor_is_one_object_across_calls():
    """The anchor of a workload (its factor, and the factors at other occupancies its points ask for) is one
    object for the same reference, profile, SM and coefficients, so what one call's points asked for is at
    hand for the next call's (an optimizer's generations); another profile gets its own."""
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu, workload_profile

    sm = resolve_gpu("fermi-gtx480")
    ref = get_design("baseline")
    prof = workload_profile("saxpy", sm)
    first = engine.lazy_anchor(ref, prof, sm, {}, 1.25)
    assert engine.lazy_anchor(ref, prof, sm, {}, 1.25) is first
    assert engine.lazy_anchor(ref, workload_profile("reduce_sum", sm), sm, {}, 1.25) is not first
    assert engine.lazy_anchor(ref, prof, sm, {}, 1.5) is not first
    assert first.at_ctas(2) == engine.lazy_anchor(ref, prof, sm, {}, 1.25).at_ctas(2)


def test_a_product_grid_takes_each_value_of_an_axis_once():
    """A value given twice on a product grid's axis, or a workload given twice, would name two rows with
    one coordinate (a selection by value then returns both): one error naming it; ``mode="points"`` may
    repeat values."""
    import rfmodel
    from rfmodel.evaluate import _grid

    for values in ([8, 16, 8], [2, 2.0], ["gpgpusim", "gpgpusim"]):
        with pytest.raises(RfmodelError, match="given twice"):
            _grid({"num_banks": values}, "product")
    with pytest.raises(RfmodelError, match="'main_rf_latency_x': 2.0 given twice"):
        rfmodel.evaluate("ltrf", "saxpy", "fermi-gtx480", params={"main_rf_latency_x": [2, 2.0]})
    with pytest.raises(RfmodelError, match="workload 'saxpy' given twice"):
        rfmodel.evaluate("baseline", ["saxpy", "reduce_sum", "saxpy"], "fermi-gtx480")
    from rfmodel.workload.suite import load_workload

    one, two = (
        load_workload("saxpy", max_warps=8),
        load_workload("saxpy", max_warps=16),
    )  # two objects, one name
    with pytest.raises(RfmodelError, match="workload 'saxpy' given twice"):
        rfmodel.evaluate("baseline", [one, two], "fermi-gtx480")
    grid, dims, _ = _grid({"num_banks": [8, 8], "collector_units": [4, 8]}, "points")
    assert dims == ["point"] and grid["num_banks"].tolist() == [8, 8]


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ([8, True], "neither a number nor a name"),
        (np.array([True, False]), "neither a number nor a name"),
        (np.array([8, 2**63 + 1], dtype=np.uint64), "out of range"),
        (np.array([8.0, np.nan]), "not a finite number"),
        ([8, 2**70], "out of range"),
    ],
)
def test_a_points_grid_refuses_each_bad_value_however_given(values, needle):
    """Lists and arrays of plain numbers are accepted at once; anything else is checked value by value, so a
    bool among integers (which numpy would type as one), a NaN in a float array or an integer beyond 64 bits
    is still one clear error."""
    from rfmodel.evaluate import _grid

    with pytest.raises(RfmodelError, match=needle):
        _grid({"num_banks": values}, "points")
    grid, dims, coords = _grid(
        {"num_banks": np.arange(1, 10_001), "collector_units": [4.0] * 10_000}, "points"
    )
    assert dims == ["point"] and grid["num_banks"].shape == (10_000,) and coords["point"][-1] == 9_999
