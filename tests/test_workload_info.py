"""`rfmodel workload info` on every built-in kernel, a synthetic preset and an Accel-Sim trace."""

from __future__ import annotations

import pytest
from helpers_reference import needs_reference, reference

from rfmodel.cli import main
from rfmodel.workload.info import workload_info
from rfmodel.workload.suite import builtin_names, builtin_sass_path, manifest

TRACES = reference("accelsim-traces", "synthetic")


def test_suite_is_shipped():
    assert len(builtin_names()) >= 15


#: the built-in kernels whose first CTA takes longest to execute and trace (about 19 CPU-s of the 33 of all
#: 24): under ``-m slow`` here as in tests/test_sim_invariants.py, whose default run leaves out the same ones
#: (the executed traces are kept for the session, so whichever file runs first pays for them)
SLOW_TO_TRACE = (
    "conv2d_const",
    "gauss_elim_step",
    "gemm_regblock16x8",
    "nbody_forces",
    "rk4_duffing_dp",
    "sgemm_tiled",
    "stencil2d_regtile",
)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_TO_TRACE else n for n in builtin_names()]
)
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


@needs_reference("accelsim-traces", "synthetic")
def test_info_on_accelsim_trace():
    info = workload_info(str(TRACES / "tiny"))
    assert info["dynamic_instructions"] == 64
    assert info["warps"] == 4


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
    # 1.51x over the 21 kernels before the three cache-sensitive ones (bicg_like, syrk_like, merge_pass:
    # 20-32 registers, 0.5-0.75x) joined; 1.40x over the 24
    assert sum(table.values()) / len(table) > 1.3
    # by hand: 186 registers x 32 threads = 5952, rounded to 6144 per warp; 8 CTAs of 8 warps: 393,216
    # registers = 6x the 65,536 of the SM
    assert rf_demand(186, 256, 0, 64, sm) == 6.0
    assert rf_demand(32, 256, 0, 64, sm) == 1.0  # 64 warps x 1024 registers: exactly the RF
    assert rf_demand(186, 256, 48 * 1024, 64, sm) == 6.0 / 8  # shared memory allows one CTA


def test_info_of_a_kernel_beyond_the_expansion_limit(tmp_path):
    """Seven nested loops at the default trip count (8) make a warp execute 8^7 = 2,097,152 instructions of
    the innermost body, beyond the 2,000,000 limit: ``workload info`` still gives the exact static figures,
    a sample of the dynamic ones with a note, and the loops that drove the count, innermost first."""
    from rfmodel.workload.info import SAMPLE_WARP_INSTRS, SAMPLE_WARPS, workload_info

    n = 7
    lines = [
        "\t.target\tsm_80",
        '\t.section\t.text.deep,"ax",@progbits',
        '\t.sectioninfo\t@"SHI_REGISTERS=8"',
        "        .global         deep",
        "deep:",
        ".text.deep:",
    ]
    pc = 0

    def ins(text, guard=""):
        nonlocal pc
        lines.append(f"        /*{pc:04x}*/               {guard:>4} {text} ;")
        pc += 16

    ins("MOV R1, c[0x0][0x28]")
    for i in range(n):
        lines.append(f".L_x_{i}:")
        ins("IADD3 R2, R2, 0x1, RZ")
    ins("FFMA R3, R3, R3, R3")
    for i in reversed(range(n)):
        ins(f"BRA `(.L_x_{i})", guard="@P0")
    ins("EXIT")
    path = tmp_path / "deep.sass"
    path.write_text("\n".join(lines) + "\n")
    info = workload_info(str(path))
    assert info["static_instructions"] == 1 + n + 1 + n + 1
    assert info["natural_loops"] == n and info["max_loop_depth"] == n
    assert "max_warp_instrs = 2000000" in info["dynamic_truncated"]
    assert info["warps"] == SAMPLE_WARPS
    assert info["dynamic_instructions"] <= SAMPLE_WARPS * (SAMPLE_WARP_INSTRS + 1)
    drivers = list(info["loop_drivers"].values())
    assert drivers[0] == f"trip 8, depth {n}, iterations {8**n}"
    assert drivers[1] == f"trip 8, depth {n - 1}, iterations {8 ** (n - 1)}"
