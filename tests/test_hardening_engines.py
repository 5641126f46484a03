"""No silent wrong answer from the engines: a value the user sets changes the answer in both engines or is
refused, every registered design runs on every preset GPU, and the main RF's cell means one thing."""

from __future__ import annotations

import numpy as np
import pytest
from helpers_reference import reference_or_skip

import rfmodel
from rfmodel.designs.base import design_classes, get_design
from rfmodel.errors import RfmodelError
from rfmodel.evaluate import resolve_gpu
from rfmodel.spec import dumps_spec
from rfmodel.spec.presets import PRESETS
from rfmodel.workload.suite import builtin_sass_path

DESIGNS = sorted(design_classes())


def _toml(tmp_path, sm, **changes):
    """An SM spec file as a user makes one: the preset's spec written out, fields edited."""
    f = tmp_path / "sm.toml"
    f.write_text(dumps_spec(sm.replace(**changes)))
    return str(f)


@pytest.mark.parametrize("method", ["analytic", "simulate"])
def test_bank_fields_in_a_spec_file_and_in_a_grid_give_one_answer(tmp_path, method):
    """num_banks = 1 in an SM spec file left the analytic IPC at the 16-bank preset's (the anchor's
    reference run took the spec's banks, so their effect cancelled) while --param num_banks=1 slowed it."""
    sm = resolve_gpu("fermi-gtx480")
    kw = {"method": method, **({"max_warps": 16} if method == "simulate" else {})}
    preset = float(rfmodel.evaluate("baseline", "saxpy", sm, **kw)["ipc"].values.ravel()[0])
    by_file = float(
        rfmodel.evaluate("baseline", "saxpy", _toml(tmp_path, sm, num_banks=1), **kw)["ipc"].values.ravel()[0]
    )
    by_grid = float(
        rfmodel.evaluate("baseline", "saxpy", sm, params={"num_banks": [1]}, **kw)["ipc"].values.ravel()[0]
    )
    assert by_file == pytest.approx(by_grid, rel=1e-9)
    assert by_file < 0.8 * preset  # one bank serializes every operand read


@pytest.mark.parametrize(
    ("field", "value", "workload", "ok"),
    [
        ("max_threads_per_cta", 128, "saxpy", 256),  # 256-thread CTAs
        ("shmem_per_cta_bytes", 4096, "sgemm_tiled", 8448),  # 8,448 B of shared memory per CTA
    ],
)
@pytest.mark.parametrize("method", ["analytic", "simulate"])
def test_per_cta_launch_limits_refuse_a_kernel_over_them(tmp_path, field, value, workload, ok, method):
    """A CTA over these limits ran unchanged (max_threads_per_cta = 1 left saxpy's 256-thread CTAs
    running); now it cannot launch, whether a spec file or a grid sets the limit."""
    sm = resolve_gpu("fermi-gtx480")
    for gpu in (_toml(tmp_path, sm, **{field: value}), sm):
        params = None if isinstance(gpu, str) else {field: [value]}
        with pytest.raises(RfmodelError, match=field):
            rfmodel.evaluate("baseline", workload, gpu, method=method, params=params, max_warps=16)
    # at the limit the answer is the preset's
    a = rfmodel.evaluate("baseline", workload, sm, method=method, max_warps=16)["ipc"].values
    b = rfmodel.evaluate(
        "baseline", workload, _toml(tmp_path, sm, **{field: ok}), method=method, max_warps=16
    )
    assert np.array_equal(a, b["ipc"].values)


@pytest.mark.parametrize(("field", "value"), [("max_regs_per_thread", 8), ("regs_per_cta_limit", 1024)])
def test_register_limits_run_compiled_code_as_compiled_and_say_so(tmp_path, field, value):
    """max_regs_per_thread = 1 or regs_per_cta_limit = 1 left saxpy's 24-register CTAs running with no
    word.  Compiled code is run as compiled (a compiler would have to spill; none recompiles here): both
    engines say so once and list it in the result's attrs."""
    import rfmodel.spec.occupancy as occupancy

    sm = resolve_gpu("fermi-gtx480")
    occupancy._SAID.clear()
    for method in ("analytic", "simulate"):
        with pytest.warns(UserWarning, match=f"{field}.*run as compiled"):
            ds = rfmodel.evaluate(
                "baseline", "saxpy", _toml(tmp_path, sm, **{field: value}), method=method, max_warps=16
            )
        assert field in ds.attrs["limits_not_applied"] and "saxpy" in ds.attrs["limits_not_applied"]
        occupancy._SAID.clear()
    assert rfmodel.evaluate("baseline", "saxpy", sm).attrs["limits_not_applied"] == ""


def _r254(tmp_path):
    """saxpy's listing with one destination renamed R254 (its header still says 24 registers)."""
    src = builtin_sass_path("saxpy").read_text()
    old = "IADD3 R7, R7, c[0x0][0x160], R0 ;"
    assert old in src
    f = tmp_path / "r254.sass"
    f.write_text(src.replace(old, "IADD3 R254, R7, c[0x0][0x160], R0 ;"))
    return str(f)


def test_a_register_beyond_the_declared_count_counts(tmp_path):
    """A listing that writes R254 needs 255 registers per thread whatever its header says (its header
    said 24 and it ran as a 24-register kernel): a 256-thread CTA of it needs 65,536 registers, more
    than fermi-gtx480's 32,768, in evaluate and simulate alike."""
    from rfmodel.workload.suite import load_workload

    f = _r254(tmp_path)
    k = load_workload(f).kernel
    assert k.regs_per_thread == 255 and "R254" in k.attrs["regs_source"]
    for method in ("analytic", "simulate"):
        with pytest.raises(RfmodelError, match="65536 registers"):
            rfmodel.evaluate("baseline", f, "fermi-gtx480", method=method)
    # a search whose register files stop short of it refuses before it searches
    with pytest.raises(RfmodelError, match="at any point of the search"):
        search_to_32k_registers([f])


def search_to_32k_registers(workloads):
    """A small search of baseline on fermi-gtx480 (4 points, 1 generation, no brute force, nothing stored)
    whose register files stop at 32,768 registers."""
    from rfmodel.optimize import problem

    small = (problem.Variable("regs_per_sm", (16384, 32768)),)
    kw = dict(pop_size=4, generations=1, brute_force=False, store=False, space=small)
    return problem.optimize(["baseline"], workloads, "fermi-gtx480", **kw)


def test_every_design_costs_its_structures_on_every_preset_gpu():
    """stt on volta-v100 failed in both engines: its STT-RAM banks have two ports there and the STT-RAM
    data are single-ported; a multi-ported STT-RAM bank now takes the SRAM's port overhead."""
    from rfmodel.evaluate import DEFAULT_TECH

    for gpu, sm in PRESETS.items():
        for name in DESIGNS:
            d = get_design(name)
            structures = d.structures(sm, {}, dict(DEFAULT_TECH))
            assert structures, (gpu, name)
            for s in structures:
                assert np.all(np.isfinite(np.asarray(s.area_mm2, dtype=float))), (gpu, name, s.name)


def test_a_two_ported_stt_ram_bank_costs_more_than_a_single_ported_one():
    from rfmodel.tech.array import array_cost

    one = array_cost("stt-ram", 45, 8, 1024, ports="1rw")
    two = array_cost("stt-ram", 45, 8, 1024, ports="1r1w")
    sram1 = array_cost("sram-hp", 45, 8, 1024, ports="1rw")
    sram2 = array_cost("sram-hp", 45, 8, 1024, ports="1r1w")
    assert two.source == "ports" and "port overhead" in two.provenance["area_mm2"]
    assert float(two.area_mm2 / one.area_mm2) == pytest.approx(float(sram2.area_mm2 / sram1.area_mm2))
    assert float(two.write_ns - one.write_ns) == pytest.approx(float(sram2.write_ns - sram1.write_ns))


@pytest.mark.slow
@pytest.mark.parametrize("gpu", sorted(PRESETS))
def test_every_design_runs_in_both_engines_on_every_preset_gpu(gpu):
    for name in DESIGNS:
        d = get_design(name)
        for method in ("analytic", "simulate") if d.supports_simulate else ("analytic",):
            ipc = rfmodel.evaluate(name, "saxpy", gpu, method=method)["ipc"].values
            assert np.all(np.isfinite(ipc) & (ipc > 0)), (gpu, name, method)


def test_stt_runs_on_volta_in_both_engines():
    for method in ("analytic", "simulate"):
        ds = rfmodel.evaluate("stt", "saxpy", "volta-v100", method=method, max_warps=8)
        assert np.all(np.asarray(ds["ipc"].values) > 0)


def test_unified_memory_size_is_a_grid_parameter():
    """unified's capacity_kb shared its name with the result's register capacity: a grid over it crashed
    building the Dataset.  It is unified_kb; a parameter named like a result variable is refused."""
    ds = rfmodel.evaluate("unified", "saxpy", "fermi-gtx480", params={"unified_kb": [0, 256]})
    assert list(ds["unified_kb"].values) == [0, 256]
    assert np.all(ds["capacity_kb"].values == 128.0)  # the SM's register file, as for every design
    assert ds["ipc"].sel(unified_kb=256).item() != ds["ipc"].sel(unified_kb=0).item()


@pytest.mark.parametrize("name", ["corf", "cerf", "unified"])
def test_main_cell_is_refused_where_it_cannot_change_the_timing(name):
    """tech['main_cell'] changed these designs' bank energy and not their timing, silently."""
    with pytest.raises(RfmodelError, match="no main-RF cell parameter"):
        rfmodel.evaluate(name, "saxpy", "fermi-gtx480", tech={"main_cell": "dwm"})
    with pytest.raises(RfmodelError, match="no main-RF cell parameter"):
        rfmodel.evaluate(name, "saxpy", "fermi-gtx480", tech={"main_cell": "dwm"}, method="simulate")


def test_main_cell_changes_the_timing_where_a_design_has_one():
    fast = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480")
    slow = rfmodel.evaluate("baseline", "saxpy", "fermi-gtx480", tech={"main_cell": "dwm"})
    assert int(slow["main_rf_read_cycles"].values.max()) > int(fast["main_rf_read_cycles"].values.max())


def test_default_suite_kernels_a_gpu_cannot_run_are_left_out_of_a_search_and_said(monkeypatch):
    """gemm_regblock16x8 (186 registers per thread, 47,616 a CTA) fits no register file of a search that
    stops at 32,768: a search over the default suite leaves it out and says so; named, it is an error."""
    from rfmodel.optimize import problem

    monkeypatch.setattr(problem, "default_workloads", lambda: ["saxpy", "gemm_regblock16x8"])
    res = search_to_32k_registers(None)
    left = res.pareto.attrs["workloads_left_out"]
    assert left.startswith("gemm_regblock16x8: ") and "regs_per_sm" in left
    assert res.pareto.attrs["workloads"] == "saxpy"
    with pytest.raises(RfmodelError, match="gemm_regblock16x8"):
        search_to_32k_registers(["saxpy", "gemm_regblock16x8"])


@pytest.mark.parametrize("workload", ["saxpy", "mem_mid"])
def test_both_engines_count_the_same_share_of_the_grid(workload):
    """For an Accel-Sim trace the analytic engine profiled the whole grid while the simulator ran SM 0's
    share (mem_mid on fermi-gtx480: 78,080 operand reads against 5,856, 58,739 cycles against 6,073).  One
    cut (rfmodel.trace.grid_share) for both: the engines' counts agree in magnitude."""
    if workload == "mem_mid":
        workload = str(reference_or_skip("accelsim-traces", "synthetic", "mem_mid"))
    a = rfmodel.evaluate("baseline", workload, "fermi-gtx480")
    s = rfmodel.evaluate("baseline", workload, "fermi-gtx480", method="simulate")
    for v, tol in (("warp_instructions", 0.02), ("rf_reads", 0.05), ("rf_writes", 0.05), ("cycles", 0.10)):
        x, y = float(a[v].values.ravel()[0]), float(s[v].values.ravel()[0])
        assert x == pytest.approx(y, rel=tol), (v, x, y)


def test_validate_simulates_a_unified_memory_point():
    """`optimize --validate` on the default run crashed on a unified-memory point: its capacity_kb
    parameter collided with the result's capacity_kb when the point was simulated."""
    from rfmodel.optimize import optimize
    from rfmodel.optimize.validate import validate

    res = optimize(
        ["unified"], ["saxpy"], "fermi-gtx480", pop_size=4, generations=1, brute_force=False, store=False
    )
    rows = validate(res, 1)
    assert len(rows) == 1 and rows[0]["design"] == "unified"


def test_a_builtin_kernels_shared_memory_limits_occupancy():
    """A built-in kernel's nvdisasm listing does not state its shared memory: sgemm_tiled's 8,448 B per CTA
    were 0 to both engines, so shared memory never limited its occupancy."""
    from rfmodel.workload.suite import load_workload

    assert load_workload("sgemm_tiled", num_sms=15, max_warps=8).trace.shared_mem_bytes == 8448
    sm = resolve_gpu("fermi-gtx480").replace(shmem_per_sm_bytes=16384, shmem_per_cta_bytes=16384)
    for method in ("analytic", "simulate"):
        ds = rfmodel.evaluate("baseline", "sgemm_tiled", sm, method=method, max_warps=16)
        assert int(ds["warps"].values.max()) == 8, method  # one 8-warp CTA: 2 x 8,448 B > 16 KB
