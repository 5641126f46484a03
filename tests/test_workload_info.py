"""`rfmodel workload info` on every built-in kernel, a synthetic preset and an Accel-Sim trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from rfmodel.cli import main
from rfmodel.workload.info import workload_info
from rfmodel.workload.suite import builtin_names, builtin_sass_path, manifest

TRACES = Path(__file__).resolve().parents[2] / "shared" / "reference" / "accelsim-traces" / "synthetic"


def test_suite_is_shipped():
    assert len(builtin_names()) >= 15


@pytest.mark.parametrize("name", builtin_names())
def test_info_of_each_builtin_is_nontrivial(name):
    info = workload_info(name, max_warps=8)
    res = manifest()["kernels"][name]["resources"]["sm_80"]
    assert info["registers_per_thread"] == res["regs"]
    assert info["static_instructions"] > 20 and info["basic_blocks"] >= 2
    assert info["natural_loops"] >= 1  # every built-in kernel has a loop
    assert info["dynamic_instructions"] > info["static_instructions"] // 4
    assert sum(info["op_mix"].values()) == pytest.approx(1.0, abs=1e-3)
    assert "exit" in info["op_mix"]
    rd = info["register_reuse_distance"]
    assert rd["reuses"] > 0 and rd["median"] >= 0 and 0 <= rd["fraction_le_8"] <= 1


def test_info_cli_on_sass_file_and_synthetic(capsys):
    path = builtin_sass_path("saxpy", "sm_75", "cuobjdump")
    assert main(["workload", "info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "registers_per_thread" in out and "op_mix" in out
    assert main(["workload", "info", "synthetic:integer-heavy", "--json"]) == 0
    assert '"int"' in capsys.readouterr().out


@pytest.mark.skipif(not TRACES.is_dir(), reason="reference Accel-Sim traces not present")
def test_info_on_accelsim_trace():
    info = workload_info(str(TRACES / "tiny"))
    assert info["dynamic_instructions"] == 64
    assert info["warps_expanded"] == 4


def test_register_sensitive_kernels_need_more_than_the_rf():
    """The LTRF paper's Table 1 measure on its baseline SM: the suite's register-sensitive kernels need
    several times the register file for full thread-level parallelism, the suite on average well over 1x."""
    from rfmodel.spec import get_preset
    from rfmodel.spec.occupancy import rf_demand
    from rfmodel.workload.suite import manifest, rf_demand_table

    sm = get_preset("maxwell-ltrf")
    table = rf_demand_table(sm)
    for name in ("gemm_regblock16x8", "nbody_tile16", "stencil2d_regtile", "fft_radix16"):
        assert "register-sensitive" in manifest()["kernels"][name]["category"]
        assert table[name] >= 2.0, (name, table[name])
    assert sum(table.values()) / len(table) > 1.4
    # by hand: 186 registers x 32 threads = 5952, rounded to 6144 per warp; 8 CTAs of 8 warps: 393,216
    # registers = 6x the 65,536 of the SM
    assert rf_demand(186, 256, 0, 64, sm) == 6.0
    assert rf_demand(32, 256, 0, 64, sm) == 1.0  # 64 warps x 1024 registers: exactly the RF
    assert rf_demand(186, 256, 48 * 1024, 64, sm) == 6.0 / 8  # shared memory allows one CTA
