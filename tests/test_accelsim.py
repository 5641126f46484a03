"""Accel-Sim trace reader: the reference samples and hand-written format cases."""

from __future__ import annotations

import lzma

import numpy as np
import pytest
from helpers_reference import needs_reference, reference

from rfmodel.errors import ParseError, RfmodelError, UnknownNameError
from rfmodel.ir import OpClass
from rfmodel.trace import NONE
from rfmodel.workload.accelsim import classify_opcode, read_kernelslist, read_traceg
from rfmodel.workload.suite import load_workload

SAMPLES = reference("accelsim-traces", "synthetic")
needs_samples = needs_reference("accelsim-traces", "synthetic")

# README table: warps, warp instructions, thread instructions, RF reads, RF writes (thread units)
README = {
    "tiny": (4, 64, 2048, 3584, 2432),
    "mem_mid": (640, 40960, 1310720, 2703360, 1699840),
    "bank_free": (2560, 258560, 8273920, 24576000, 8192000),
    "bank_conf2": (2560, 258560, 8273920, 24576000, 8192000),
    "bank_conf3": (2560, 258560, 8273920, 24576000, 8192000),
}


def thread_units(t, regs: np.ndarray) -> int:
    return int(((regs != NONE).sum(axis=1) * t.active.astype(np.int64)).sum())


@needs_samples
@pytest.mark.parametrize("name", sorted(README))
def test_reference_samples_match_the_readme(name):
    (path,) = read_kernelslist(SAMPLES / name / "kernelslist.g")
    t = read_traceg(path)
    t.validate()
    warps, insts, thread_insts, reads, writes = README[name]
    assert t.n_warps == warps
    assert t.n_instrs == insts
    assert int(t.active.astype(np.int64).sum()) == thread_insts
    # Accel-Sim reads RZ (R255) from a bank and counts it; the trace drops it and keeps the count
    rz = int((t.attrs["rz_src"].astype(np.int64) * t.active).sum())
    assert thread_units(t, t.src) + rz == reads
    # each 128-byte LDG.E misses and comes back as 4 sector fills, each counted as a register write
    n_ldg = int((t.op == OpClass.LD_GLOBAL).sum())
    assert thread_units(t, t.dst) + 3 * 32 * n_ldg == writes
    assert np.all(np.diff(t.warp_ptr) == insts // warps)
    assert np.all(t.op[t.warp_ptr[1:] - 1] == OpClass.EXIT)


@needs_samples
def test_tiny_structure_and_line_addresses():
    t = read_traceg(SAMPLES / "tiny" / "kernel-1.traceg")
    assert t.kernel == "synthetic_tiny" and t.ctas == 2 and t.threads_per_cta == 64
    assert t.regs_per_thread == 32 and t.attrs["tracer_version"] == 5
    assert t.warp_cta.tolist() == [0, 0, 1, 1]
    assert t.attrs["cta_ids"].tolist() == [[0, 0, 0], [1, 0, 0]]
    w0 = t.warp(0)
    assert t.sidx[w0].tolist() == list(range(16))
    F, I = OpClass.FP32, OpClass.INT
    body = [OpClass.LD_GLOBAL, F, F, I, OpClass.SFU, OpClass.ST_GLOBAL]
    assert t.op[w0].tolist() == [OpClass.MISC, OpClass.MISC, I, *body, *body, OpClass.EXIT]
    # IADD3 R7, R5, R6, RZ: RZ dropped from the sources, counted in rz_src
    assert t.src[6].tolist()[:3] == [5, 6, NONE] and t.attrs["rz_src"][6] == 1
    assert t.dst[8].tolist() == [NONE] * 4 and t.src[8].tolist()[:2] == [2, 9]  # STG: 0 destinations
    # base 0x7f1000000000 + (warp, CTA) offsets, stride 4 over 32 lanes = one 128-byte line
    base = 0x7F1000000000
    expected = []
    for cta_off in (0, 0x4000):
        for warp_off in (0, 0x200):
            expected += [base + cta_off + warp_off + k * 0x80000 for k in range(4)]
    assert t.mem_line.tolist() == expected
    mem_rows = np.flatnonzero(np.diff(t.mem_ptr))
    assert np.array_equal(t.sidx[mem_rows] % 16, np.tile([3, 8, 9, 14], 4))


@needs_samples
def test_kernelslist_resolves_paths():
    assert read_kernelslist(SAMPLES / "tiny" / "kernelslist.g") == [SAMPLES / "tiny" / "kernel-1.traceg"]
    assert read_kernelslist(SAMPLES / "mem_mid" / "kernelslist.g") == [
        SAMPLES / "mem_mid" / "kernel-1.traceg.xz"
    ]


@needs_samples
@pytest.mark.parametrize("suffix", ["/kernelslist.g", "", "/kernelslist.g:kernel-1", ":kernel-1.traceg"])
def test_a_kernelslist_is_a_workload_of_its_kernel(suffix):
    # the list, its folder, and either with its one kernel picked all read the listed trace
    direct = load_workload(str(SAMPLES / "tiny" / "kernel-1.traceg"))
    wl = load_workload(f"{SAMPLES / 'tiny'}{suffix}")
    assert wl.trace.n_instrs == direct.trace.n_instrs == README["tiny"][1]
    assert np.array_equal(wl.trace.src, direct.trace.src) and wl.source == direct.source
    assert wl.name == ("tiny:kernel-1" if ":" in suffix else "tiny")


@needs_samples
def test_a_kernelslist_reads_a_compressed_kernel():
    assert load_workload(str(SAMPLES / "mem_mid" / "kernelslist.g")).trace.n_instrs == README["mem_mid"][1]


def test_kernelslist_naming_a_missing_trace_is_one_error(tmp_path):
    write(tmp_path, {0: {0: [EXIT]}})
    (tmp_path / "kernelslist").write_text("kernel-1.traceg\nkernel-9.traceg\n")
    for ref in (tmp_path / "kernelslist", tmp_path):
        with pytest.raises(RfmodelError, match="kernel-9.traceg.*does not exist"):
            load_workload(str(ref))


def test_several_kernels_name_the_choices_and_one_is_picked(tmp_path):
    write(tmp_path, {0: {0: ["0000 ffffffff 0 NOP 0 0 0", EXIT]}})
    write(tmp_path, {0: {0: [EXIT]}, 1: {0: [EXIT]}}, name="kernel-2.traceg")
    kl = tmp_path / "kernelslist.g"
    kl.write_text("MemcpyHtoD,0x00007f0000000000,1024\nkernel-1.traceg\nkernel-2.traceg\n")
    for ref in (kl, tmp_path):  # a folder reads its kernel list
        with pytest.raises(RfmodelError, match="holds 2 kernel traces") as e:
            load_workload(str(ref))
        assert "kernel-1.traceg, kernel-2.traceg" in str(e.value) and f"'{ref}:<kernel>'" in str(e.value)
        assert load_workload(f"{ref}:kernel-2").trace.n_instrs == 2
        assert load_workload(f"{ref}:kernel-1.traceg").trace.n_instrs == 2
        assert load_workload(f"{ref}:kernel-1").name == f"{tmp_path.name}:kernel-1"
        with pytest.raises(UnknownNameError, match="kernel-3"):
            load_workload(f"{ref}:kernel-3")
    kl.unlink()  # a folder without a list: its kernel-*.traceg files, in kernel order
    with pytest.raises(RfmodelError, match="kernel-1.traceg, kernel-2.traceg"):
        load_workload(str(tmp_path))


def test_cli_simulate_reads_a_kernelslist(tmp_path, capsys):
    from rfmodel.cli import main

    write(tmp_path, {0: {0: ["0000 ffffffff 0 NOP 0 0 0", EXIT]}})
    write(tmp_path, {0: {0: [EXIT]}}, name="kernel-2.traceg")
    kl = tmp_path / "kernelslist.g"
    kl.write_text("kernel-1.traceg\nkernel-2.traceg\n")
    assert main(["simulate", "--workload", str(kl), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "kernel-1.traceg, kernel-2.traceg" in err and len(err.strip().splitlines()) == 1
    assert main(["simulate", "--workload", f"{kl}:kernel-1", "--quiet", "--json"]) == 0


# ---------------------------------------------------------------------------------------------
# hand-written traces

HEADER = """-kernel name = k
-kernel id = 1
-grid dim = ({grid},1,1)
-block dim = ({block},1,1)
-shmem = 0
-nregs = 24
-binary version = 80
-cuda stream id = 0
-nvbit version = 1.7
-accelsim tracer version = {version}
-enable lineinfo = {lineinfo}

#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [...] immediate

"""


def write(
    tmp_path, warps: dict, version=5, lineinfo=0, grid=None, block=64, xz=False, name="kernel-1.traceg"
):
    """``warps``: {cta: {warp id: [lines]}} in file order."""
    text = HEADER.format(grid=grid or len(warps), block=block, version=version, lineinfo=lineinfo)
    for cta, ws in warps.items():
        text += f"#BEGIN_TB\n\nthread block = {cta},0,0\n\n"
        for w, lines in ws.items():
            text += f"warp = {w}\ninsts = {len(lines)}\n" + "".join(x + "\n" for x in lines) + "\n"
        text += "#END_TB\n\n"
    p = tmp_path / (name + (".xz" if xz else ""))
    if xz:
        with lzma.open(p, "wt") as f:
            f.write(text)
    else:
        p.write_text(text)
    return p


EXIT = "0100 ffffffff 0 EXIT 0 0 0"


def lines_of(t, r):
    return t.mem_line[t.mem_ptr[r] : t.mem_ptr[r + 1]].tolist()


def test_address_modes_give_the_same_lines(tmp_path):
    addrs = [0x10000 + 8 * k for k in range(32)]
    mode0 = " ".join(f"0x{a:016x}" for a in addrs)
    mode2 = "0x10000 " + " ".join(["8"] * 31)
    p = write(
        tmp_path,
        {
            0: {
                0: [
                    f"0000 ffffffff 1 R4 LDG.E.64 2 R2 R3 8 0 {mode0} 0",
                    "0010 ffffffff 1 R4 LDG.E.64 2 R2 R3 8 1 0x10000 8 0",
                    f"0020 ffffffff 1 R4 LDG.E.64 2 R2 R3 8 2 {mode2} 0",
                    # Accel-Sim's reader: popcount numbers
                    f"0030 ffffffff 1 R4 LDG.E.64 2 R2 R3 8 2 {mode2} 8 0",
                    EXIT,
                ]
            }
        },
    )
    t = read_traceg(p)
    t.validate()
    assert all(lines_of(t, r) == [0x10000, 0x10080] for r in range(4))
    assert t.sidx.tolist() == [0, 1, 2, 3, 16]


def test_partial_masks_and_unaligned_wide_accesses(tmp_path):
    # lanes 0-3 active, 16-byte accesses from 0x1078: lines 0x1000 .. 0x1080 (crosses a line)
    mode0 = " ".join(f"0x{0x1078 + 16 * k:x}" for k in range(4))
    # lanes 1, 3 active (mask 0xa); deltas in lane order, negative allowed
    p = write(
        tmp_path,
        {
            0: {
                0: [
                    f"0000 0000000f 1 R4 LDG.E.128 1 R2 16 0 {mode0} 0",
                    "0010 0000000a 1 R4 LDG.E 1 R2 4 2 0x5000 -4096 0",
                    "0020 00000000 1 R4 LDG.E 1 R2 4 1 0x0 0 0",
                    "0030 00000003 0 STS 2 R2 R4 4 1 0x7f0000000000 4 0",
                    "0040 0000000f 1 R4 LDG.E 1 R2 4 0 " + " ".join(["0x0000000000002000"] * 32) + " 0",
                    EXIT,
                ]
            }
        },
    )
    t = read_traceg(p)
    assert t.active.tolist()[:5] == [4, 2, 0, 2, 4]
    assert lines_of(t, 0) == [0x1000, 0x1080]
    assert lines_of(t, 1) == [0x4000, 0x5000]
    assert lines_of(t, 2) == []  # no active lane
    assert lines_of(t, 3) == []  # shared memory: no cache line
    assert lines_of(t, 4) == [0x2000]  # a full 32-address list with 4 active lanes


def test_versions_lineinfo_and_xz(tmp_path):
    # version 4 lines may omit the immediate; lineinfo adds a leading line number
    p = write(
        tmp_path,
        {0: {0: ["12 0000 ffffffff 1 R1 FFMA 3 R2 R3 R4 0", "13 0010 ffffffff 0 EXIT 0 0"]}},
        version=4,
        lineinfo=1,
        xz=True,
    )
    t = read_traceg(p)
    assert t.op.tolist() == [OpClass.FP32, OpClass.EXIT] and t.src[0].tolist()[:3] == [2, 3, 4]
    assert t.attrs["tracer_version"] == 4
    p = write(tmp_path, {0: {0: [EXIT]}}, version=2, name="old.traceg")
    with pytest.raises(ParseError, match="version 2 is not supported"):
        read_traceg(p)


def test_warps_sorted_within_cta_and_ctas_in_file_order(tmp_path):
    p = write(
        tmp_path,
        {
            1: {1: ["0000 ffffffff 1 R1 IADD3 2 R2 R3 0 0", EXIT], 0: [EXIT]},
            0: {0: ["0000 ffffffff 1 R1 FFMA 2 R2 R3 0 0", "0010 ffffffff 1 R1 FFMA 2 R2 R3 0 0", EXIT]},
        },
        grid=2,
    )
    t = read_traceg(p)
    t.validate()
    assert np.diff(t.warp_ptr).tolist() == [1, 2, 3]
    assert t.warp_cta.tolist() == [0, 0, 1] and t.attrs["warp_ids"].tolist() == [0, 1, 0]
    assert t.attrs["cta_ids"][:, 0].tolist() == [1, 0]
    assert t.op.tolist() == [
        OpClass.EXIT,
        OpClass.INT,
        OpClass.EXIT,
        OpClass.FP32,
        OpClass.FP32,
        OpClass.EXIT,
    ]


def test_reordering_keeps_lines_with_their_rows(tmp_path):
    p = write(
        tmp_path,
        {
            0: {
                1: ["0000 ffffffff 1 R1 LDG.E 1 R2 4 1 0x8000 4 0", EXIT],
                0: ["0000 ffffffff 1 R1 LDG.E 1 R2 4 1 0x4000 4 0", EXIT],
            }
        },
    )
    t = read_traceg(p)
    assert lines_of(t, 0) == [0x4000] and lines_of(t, 2) == [0x8000]


@pytest.mark.parametrize(
    "line, where",
    [
        ("0000 ffffffff 1 X4 IADD3 0 0 0", "register"),
        ("0000 ffffffff 1 R4 IADD3 2 R1 0 0", "malformed"),
        ("0000 ffffffff 1 R4 LDG.E 1 R2 4 7 0x0 4 0", "compression mode 7"),
        ("0000 ffffffff 1 R4 LDG.E 1 R2 4 0 0x0 0x4 0", "needs 32 addresses"),
        ("0000 zzzz 1 R4 IADD3 0 0 0", "malformed"),
        ("0000 ffffffff 1 R4 IADD3 0 0 0 1 2 3", "trailing"),
    ],
)
def test_malformed_lines_raise_parse_error_with_line_number(tmp_path, line, where):
    p = write(tmp_path, {0: {0: ["0000 ffffffff 0 NOP 0 0 0", line, EXIT]}})
    with pytest.raises(ParseError, match=where) as e:
        read_traceg(p)
    assert e.value.line == 22 and e.value.path == str(p)


def test_structure_errors(tmp_path):
    p = write(tmp_path, {0: {0: [EXIT]}})
    text = p.read_text()
    bad = tmp_path / "count.traceg"
    bad.write_text(text.replace("insts = 1", "insts = 2"))
    with pytest.raises(ParseError, match="insts = 2 but 1"):
        read_traceg(bad)
    bad.write_text(text.replace("#END_TB\n", ""))
    with pytest.raises(ParseError, match="END_TB"):
        read_traceg(bad)
    bad.write_text(text.replace("-accelsim tracer version = 5\n", ""))
    with pytest.raises(ParseError, match="tracer version"):
        read_traceg(bad)
    with pytest.raises(ParseError, match="cannot open"):
        read_traceg(tmp_path / "missing.traceg")
    kl = tmp_path / "kernelslist.g"
    kl.write_text("MemcpyHtoD,0x00007f0000000000,1024\nkernel-1.traceg\nbogus\n")
    with pytest.raises(ParseError, match="bogus") as e:
        read_kernelslist(kl)
    assert e.value.line == 3


#: an opcode of each class and its class
OPCODE_CLASSES = {
    "LDG.E.128.SYS": OpClass.LD_GLOBAL,
    "STG.E": OpClass.ST_GLOBAL,
    "LDS.U.128": OpClass.LD_SHARED,
    "ATOMG.E.ADD.STRONG.GPU": OpClass.ATOMIC,
    "IMAD.MOV.U32": OpClass.INT,
    "HFMA2.MMA": OpClass.FP32,
    "DFMA": OpClass.FP64,
    "MUFU.RSQ": OpClass.SFU,
    "HMMA.1688.F32": OpClass.TENSOR,
    "BRA": OpClass.BRANCH,
    "BAR.SYNC": OpClass.BARRIER,
    "EXIT": OpClass.EXIT,
    "S2R": OpClass.MISC,
}


def test_classify_opcode_covers_the_classes():
    for opcode, cls in OPCODE_CLASSES.items():
        assert classify_opcode(opcode) == cls, opcode
