"""The Accel-Sim exporter: active masks and EXIT lanes, memory widths, and the checker of its files.

Known answers on hand-written warps and hand-written faulty files; the last test runs exported built-in
workloads through Accel-Sim itself when ``ACCELSIM`` names a built ``accel-sim.out`` (slow).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from helpers_reference import needs_reference, reference

from rfmodel.errors import RfmodelError
from rfmodel.ir import OpClass
from rfmodel.sim.program import trace_from_warps
from rfmodel.workload.accelsim import read_traceg
from rfmodel.workload.export_accelsim import check_traceg, export_accelsim, warp_masks

E, I, F = OpClass.EXIT, OpClass.INT, OpClass.FP32


def rows_of(path) -> list[list[str]]:
    """The instruction lines of a .traceg file, split into tokens."""
    out = []
    for line in Path(path).read_text().splitlines():
        t = line.split()
        if t and not line.startswith(("-", "#")) and t[0] not in ("warp", "insts", "thread"):
            out.append(t)
    return out


def opcode(row: list[str]) -> str:
    return row[3 + int(row[2])]


def export(tmp_path, warps, **kw):
    info = export_accelsim(trace_from_warps(warps, **kw), tmp_path)
    return info, rows_of(info["traceg"])


# ----------------------------------------------------------------------------------- masks and EXIT
def test_a_partial_exit_is_written_with_the_lanes_that_leave(tmp_path):
    """12 lanes leave at a guarded EXIT and 20 go on: the EXIT retires lanes 20-31, the rows after it
    name lanes 0-19, and the last EXIT retires those (before: mask 0, and lanes 20-31 never retired)."""
    warp = [
        ("IADD3", [1], [2]),
        ("EXIT", [], [], {"active": 12}),
        ("FFMA", [3], [1], {"active": 20}),
        ("EXIT", [], [], {"active": 20}),
    ]
    info, rows = export(tmp_path, [warp])
    assert [r[1] for r in rows] == ["ffffffff", "fff00000", "000fffff", "000fffff"]
    assert (info["partial_exits"], info["exits_added"], info["lanes_retired_at_end"]) == (1, 0, 0)
    assert check_traceg(info["traceg"]) == []
    assert read_traceg(info["traceg"]).active.tolist() == [32, 12, 20, 20]


def test_a_not_taken_guarded_exit_keeps_mask_zero(tmp_path):
    warp = [("IADD3", [1], [2]), ("EXIT", [], [], {"active": 0}), ("EXIT", [], [])]
    info, rows = export(tmp_path, [warp])
    assert [r[1] for r in rows] == ["ffffffff", "00000000", "ffffffff"]
    assert info["partial_exits"] == 0 and check_traceg(info["traceg"]) == []


def test_lanes_that_leave_without_an_exit_are_retired_at_the_warps_end(tmp_path):
    # the stream ends without an EXIT: one is added, with every lane
    info, rows = export(tmp_path, [[("IADD3", [1], [2]), ("FFMA", [3], [1], {"active": 8})]])
    want = [("ffffffff", "IADD3"), ("000000ff", "FFMA"), ("ffffffff", "EXIT")]
    assert [(r[1], opcode(r)) for r in rows] == want
    assert (info["exits_added"], info["lanes_retired_at_end"], info["instructions"]) == (1, 32, 3)
    assert check_traceg(info["traceg"]) == []
    # 15 of the 20 lanes left after the partial EXIT vanish: the last EXIT retires all 20
    warp = [
        ("IADD3", [1], [2]),
        ("EXIT", [], [], {"active": 12}),
        ("IADD3", [1], [1], {"active": 20}),
        ("IADD3", [1], [1], {"active": 5}),
        ("EXIT", [], [], {"active": 5}),
    ]
    info, rows = export(tmp_path / "b", [warp])
    assert [r[1] for r in rows] == ["ffffffff", "fff00000", "000fffff", "0000001f", "000fffff"]
    assert (info["exits_added"], info["lanes_retired_at_end"]) == (0, 15)
    assert check_traceg(info["traceg"]) == []


def test_an_early_exit_leaves_the_lanes_later_rows_name():
    """An EXIT mid-stream never retires the warp's last lane, nor lanes a later row names: those retire
    at the end (counted as deferred)."""
    masks, cnt = warp_masks([I, E, I, E], [32, 32, 4, 4])
    assert masks == [0xFFFFFFFF, 0xFFFFFFF0, 0xF, 0xF]
    assert cnt["deferred_exit_lanes"] == 4 and cnt["partial_exits"] == 1
    masks, cnt = warp_masks([I, E, E], [32, 32, 0])
    assert masks == [0xFFFFFFFF, 0xFFFFFFFE, 0x1] and cnt["deferred_exit_lanes"] == 1
    # a warp of 16 lanes (the last warp of a 48-thread CTA): a row of 32 is cut to 16
    masks, cnt = warp_masks([I, E], [32, 32], lanes=16)
    assert masks == [0xFFFF, 0xFFFF] and cnt["clipped_rows"] == 2
    # every lane is retired exactly once, the last by the last row
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        ops = rng.choice([int(I), int(E)], size=n)
        masks, _ = warp_masks(ops, rng.integers(0, 33, size=n))
        ex = [m for m, o in zip(masks, list(ops) + [int(E)], strict=False) if o == int(E)]
        assert sum(bin(m).count("1") for m in ex) == 32 and np.bitwise_or.reduce(ex) == 0xFFFFFFFF


def test_a_cta_must_have_the_warps_its_threads_make(tmp_path):
    tr = trace_from_warps([[("EXIT", [], [])]] * 2, warps_per_cta=2)
    with pytest.raises(RfmodelError, match="3 warps per CTA|make 3"):
        export_accelsim(replace(tr, threads_per_cta=80), tmp_path)
    # 48 threads: two warps, the second with 16 lanes, retired by its EXIT of 16
    info = export_accelsim(replace(tr, threads_per_cta=48), tmp_path / "b")
    assert [r[1] for r in rows_of(info["traceg"])] == ["ffffffff", "0000ffff"]
    assert check_traceg(info["traceg"]) == []


# ----------------------------------------------------------------------------------- memory rows
def test_memory_rows_with_no_active_lane_keep_a_width(tmp_path):
    """A global load, a store and a shared load with every lane predicated off: mask 0, width 4 and an
    empty address list (mode 0), as the tracer writes them; before, the global ones had width 0."""
    warp = [
        ("LDG", [4], [2], {"active": 0}),
        ("STG", [], [2, 4], {"active": 0}),
        ("LDS", [5], [2], {"active": 0}),
        ("LDG", [6], [2], {"active": 2, "lines": [0x1000, 0x2000]}),
        ("EXIT", [], []),
    ]
    info, rows = export(tmp_path, [warp])
    assert rows[0] == ["0000", "00000000", "1", "R4", "LDG.E", "1", "R2", "4", "0", "0"]
    assert rows[1] == ["0010", "00000000", "0", "STG.E", "2", "R2", "R4", "4", "0", "0"]
    assert rows[2] == ["0020", "00000000", "1", "R5", "LDS", "1", "R2", "4", "0", "0"]
    assert rows[3][1] == "00000003" and rows[3][7:] == ["4", "0", "0x1000", "0x2000", "0"]
    assert check_traceg(info["traceg"]) == []
    back = read_traceg(info["traceg"])
    assert back.active.tolist() == [0, 0, 0, 2, 32]
    assert back.mem_ptr.tolist() == [0, 0, 0, 0, 2, 2] and back.mem_line.tolist() == [0x1000, 0x2000]


def test_an_atomic_with_no_cache_line_is_a_shared_one(tmp_path):
    """The trace keeps lines of global accesses only: an atomic without one is written ATOMS (shared
    memory), not a global atomic on address 0 that Accel-Sim would send to L2."""
    warp = [("ATOMS", [4], [2]), ("ATOMG", [5], [2], {"lines": [0x3000]}), ("EXIT", [], [])]
    info, rows = export(tmp_path, [warp])
    assert [opcode(r) for r in rows] == ["ATOMS", "ATOMG.E.ADD", "EXIT"]
    assert rows[0][7:] == ["4", "1", "0x0", "4", "0"] and rows[1][7:10] == ["4", "0", "0x3000"]
    assert check_traceg(info["traceg"]) == []
    back = read_traceg(info["traceg"])
    assert back.op[:2].tolist() == [OpClass.ATOMIC] * 2 and back.mem_line.tolist() == [0x3000]


def test_a_shared_access_keeps_its_bank_passes_through_the_file(tmp_path):
    """A shared access's passes through the banks (its bank-conflict degree) are written as lanes on that
    many words of one bank, which the reader, and GPGPU-Sim's rule, count back; one pass stays contiguous."""
    warp = [
        ("LDS", [4], [2], {"smem_passes": 1}),
        ("STS", [], [2, 4], {"smem_passes": 4}),
        ("LDS", [6], [2], {"smem_passes": 32}),
        ("LDS", [8], [2], {"smem_passes": 3, "active": 2}),  # more passes than lanes: as many as lanes
        ("IADD3", [1], [1]),
        ("EXIT", [], []),
    ]
    info, rows = export(tmp_path, [warp])
    assert rows[0][7:] == ["4", "1", "0x0", "4", "0"]
    assert rows[1][7:13] == ["4", "0", "0x0", "0x80", "0x100", "0x180"]  # bank 0's words 0, 32, 64, 96
    assert check_traceg(info["traceg"]) == []
    back = read_traceg(info["traceg"])
    assert back.smem_passes.tolist() == [1, 4, 32, 2, 0, 0]


# ----------------------------------------------------------------------------------- the checker
HEAD = """-kernel name = k
-kernel id = 1
-grid dim = ({grid},1,1)
-block dim = ({threads},1,1)
-binary version = 70
-accelsim tracer version = 5
-enable lineinfo = 0

#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [...] immediate

"""


def traceg(tmp_path, *warps, threads=32, grid=1, name="k.traceg"):
    """A .traceg of one thread block whose warps have the given instruction lines."""
    body = "#BEGIN_TB\n\nthread block = 0,0,0\n"
    for w, lines in enumerate(warps):
        body += f"\nwarp = {w}\ninsts = {len(lines)}\n" + "".join(x + "\n" for x in lines)
    p = tmp_path / name
    p.write_text(HEAD.format(grid=grid, threads=threads) + body + "\n#END_TB\n")
    return p


GOOD_EXIT = "0020 ffffffff 0 EXIT 0 0 0"


def errors_of(tmp_path, *warps, **kw):
    return " | ".join(check_traceg(traceg(tmp_path, *warps, **kw)))


def test_the_checker_passes_a_good_file(tmp_path):
    lines = [
        "0000 ffffffff 1 R1 IADD3 2 R2 R3 0 0",
        "0010 00000000 1 R4 LDG.E 1 R2 4 0 0",
        "0018 00000003 1 R4 LDG.E 1 R2 4 0 0x10 0x14 0",
        "0018 0000000f 1 R4 LDS 1 R2 4 1 0x0 4 0",
        "0020 fff00000 0 EXIT 0 0 0",
        "0030 000fffff 0 EXIT 0 0 0",
    ]
    assert check_traceg(traceg(tmp_path, lines)) == []


def test_the_checker_finds_a_partial_exit_written_with_mask_zero(tmp_path):
    # the old export of a partial EXIT: mask 0, and the last EXIT names only the lanes it counted
    e = errors_of(
        tmp_path,
        [
            "0000 ffffffff 0 IADD3 0 0 0",
            "0010 00000000 0 EXIT 0 0 0",
            "0020 0000000f 0 IADD3 0 0 0",
            "0030 0000000f 0 EXIT 0 0 0",
        ],
    )
    assert "lanes 0xfffffff0 are never retired" in e


def test_the_checker_finds_a_stream_that_ends_without_an_exit(tmp_path):
    assert "lanes 0xffffffff are never retired" in errors_of(tmp_path, ["0000 ffffffff 0 IADD3 0 0 0"])


def test_the_checker_finds_lanes_retired_twice_and_rows_after_the_last_exit(tmp_path):
    e = errors_of(
        tmp_path, ["0000 ffff0000 0 EXIT 0 0 0", "0010 0000ffff 0 IADD3 0 0 0", "0010 0001ffff 0 EXIT 0 0 0"]
    )
    assert "retires again lanes 0x00010000" in e
    e = errors_of(tmp_path, [GOOD_EXIT, "0030 00000001 0 IADD3 0 0 0"])
    assert "follows the EXIT on line" in e and "names lanes 0x00000001 that an EXIT already retired" in e


@pytest.mark.parametrize(
    "rows, said",
    [
        pytest.param(
            [
                "0000 00000000 1 R4 LDG.E 1 R2 0 0",
                "0000 ffffffff 0 STG.E 2 R2 R4 0 0",
                "0000 00000003 1 R4 LDG.E 1 R2 4 0 0x10 0",
                "0000 00000005 1 R4 LDS 1 R2 4 1 0x0 4 0",
                "0000 00000001 1 R4 LDG.E 1 R2 4 7 0x10 0",
            ],
            # the first instruction line is line 17
            [
                "line 17: LDG with memory width 0",
                "line 18: STG with memory width 0",
                "line 19: address mode 0 with 1 addresses for 2 lanes",
                "line 20: address mode 1 over mask 0x00000005",
                "line 21: unknown address mode 7",
            ],
            id="memory",
        ),
        pytest.param(
            [
                "0000 ffffffff 2 R1 R2 IADD3 1 R3 0 0",
                "0010 ffffffff 1 R4 FFMA 5 R1 R2 R3 R5 R6 0 0",
                "0010 ffffffff 1 P0 FFMA 1 R1 0 0",
            ],
            ["2 destinations", "5 sources", "a register is not R<n>"],
            id="registers",
        ),
    ],
)
def test_the_checker_finds_rows_accelsim_rejects(tmp_path, rows, said):
    e = errors_of(tmp_path, [*rows, GOOD_EXIT])
    assert [x for x in said if x not in e] == []


def test_the_checker_finds_a_block_shape_accelsim_cannot_run(tmp_path):
    # 48 threads: warp 1 has lanes 0-15 only, and a second thread block is missing
    e = errors_of(tmp_path, [GOOD_EXIT], ["0000 ffffffff 0 EXIT 0 0 0"], threads=48, grid=2)
    assert "names lanes 0xffff0000 warp 1 does not have" in e
    assert "1 thread blocks, but '-grid dim' gives 2" in e
    assert "warp(s) [1] of its 2" in errors_of(tmp_path, [GOOD_EXIT], threads=64)
    assert "warp 1, but a CTA of 32 threads has warps 0..0" in errors_of(tmp_path, [GOOD_EXIT], [GOOD_EXIT])


def test_the_checker_finds_lines_accelsims_block_reader_cannot_take(tmp_path):
    p = traceg(tmp_path, [GOOD_EXIT])
    text = p.read_text()
    p.write_text(text.replace("#traces format", "-traces format"))  # no comment line ends the header
    assert any("#BEGIN_TB right after the header" in e for e in check_traceg(p))
    p.write_text(text.replace("warp = 0", "# a comment\nwarp = 0") + "stray\n")
    e = " | ".join(check_traceg(p))
    assert "'# a comment' in a thread block" in e and "'stray' outside a thread block" in e


def test_the_checker_finds_an_instruction_count_the_header_does_not_say(tmp_path):
    p = traceg(tmp_path, [GOOD_EXIT], name="n.traceg")
    p.write_text(p.read_text().replace("insts = 1", "insts = 2"))
    assert any("has 1 instructions, header says 2" in x for x in check_traceg(p))


@pytest.mark.slow
def test_every_builtin_export_that_failed_in_accelsim_now_passes_the_checker(tmp_path):
    """The seven workloads whose exports Accel-Sim could not run (partial EXITs: reduce_sum, kmeans_assign,
    merge_pass, nbody_tile16; global accesses with no active lane: nbody_forces, spmv_csr, stencil7_3d),
    cut to a few warps (slow: loading them takes about a minute; every built-in workload's export is
    checked, smaller, in tests/test_sim_interface.py)."""
    from rfmodel.workload.suite import load_workload

    for name in (
        "reduce_sum",
        "kmeans_assign",
        "merge_pass",
        "nbody_tile16",
        "nbody_forces",
        "spmv_csr",
        "stencil7_3d",
    ):
        info = export_accelsim(load_workload(name, num_sms=80, max_warps=8), tmp_path / name)
        assert check_traceg(info["traceg"]) == [], name


# ----------------------------------------------------------------------------------- Accel-Sim itself
ACCELSIM = os.environ.get("ACCELSIM", "")
QV100_1SM = reference("gpgpusim-configs", "SM7_QV100_1SM")


def run_accelsim(trace_dir: Path, work: Path) -> int:
    """Accel-Sim's gpu_tot_sim_cycle for a trace directory on SM7_QV100_1SM (its env.sh sourced when it is
    where the build puts it, four folders above accel-sim.out)."""
    exe = Path(ACCELSIM)
    env_sh = exe.parents[4] / "env.sh" if len(exe.parents) > 4 else Path("/nonexistent")
    cfg = QV100_1SM
    cmd = (
        f'"{exe}" -trace "{trace_dir / "kernelslist.g"}" -config "{cfg / "gpgpusim.config"}" '
        f'-config "{cfg / "trace.config"}" -gpgpu_kernel_launch_latency 0'
    )
    if env_sh.is_file():
        cmd = f'. "{env_sh}" && {cmd}'
    work.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(["bash", "-c", cmd], cwd=work, capture_output=True, text=True, timeout=1800)
    (work / "accelsim.log").write_text(res.stdout + res.stderr)
    found = re.findall(r"^gpu_tot_sim_cycle\s*=\s*(\d+)", res.stdout, re.M)
    assert res.returncode == 0 and found, f"Accel-Sim failed ({res.returncode}): {res.stderr[-2000:]}"
    return int(found[-1])


@pytest.mark.slow
@pytest.mark.skipif(not (ACCELSIM and Path(ACCELSIM).is_file()), reason="ACCELSIM names no accel-sim.out")
@needs_reference("gpgpusim-configs", "SM7_QV100_1SM")
@pytest.mark.parametrize("name", ["saxpy", "reduce_sum", "spmv_csr"])
def test_exported_workloads_run_in_accelsim(tmp_path, name):
    """One SM's share of 80 of saxpy, reduce_sum (partial EXITs) and spmv_csr (global loads with no active
    lane) finishes in Accel-Sim, within 30 % of our cycle simulator in GPGPU-Sim mode on the same files."""
    import rfmodel

    info = export_accelsim(name, tmp_path / name, num_sms=80)
    assert check_traceg(info["traceg"]) == []
    cycles = run_accelsim(tmp_path / name, tmp_path / "run")
    ds = rfmodel.evaluate(
        "baseline",
        str(tmp_path / name),
        str(QV100_1SM / "gpgpusim.config"),
        method="simulate",
        sim_options={"compat": "gpgpusim"},
    )
    ours = float(ds["cycles"].values.ravel()[0])
    assert abs(ours - cycles) <= 0.30 * cycles, (name, ours, cycles)
