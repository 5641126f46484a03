"""Tests of the SASS reader (rfmodel.workload.sass).

The known-answer inputs (tests/data) are real disassembler output of small
kernels written for these tests (CUDA 13.0 nvcc, cuobjdump/nvdisasm 13.5; the column padding
between the instruction and its encoding word is shortened).  Rules that need
a single instruction are checked on one-line listings framed by ``_frame``.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from helpers_sass import shipped_plr, shipped_sass
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfmodel.errors import ParseError, RfmodelError
from rfmodel.ir import Kernel, OpClass
from rfmodel.workload.sass import (
    FALLBACK_RULES,
    OPCODE_CLASS,
    Ctrl,
    classify,
    decode_ctrl,
    parse_sass,
    read_sass,
)
from rfmodel.workload.sass.operands import mma_fragment_regs, split_operands

KERNELS_DIR = Path(__file__).resolve().parents[1] / "rfmodel" / "workload" / "kernels"
SHIPPED = sorted((KERNELS_DIR / "sass").glob("*/*.sass"))

DATA = Path(__file__).resolve().parent / "data"
TWOCALL_CUOBJDUMP = (DATA / "twocall_cuobjdump.sass").read_text()
TWOCALL_NVDISASM = (DATA / "twocall_nvdisasm.sass").read_text()
JUMP_NVDISASM = (DATA / "jump_nvdisasm.sass").read_text()
LD75_CUOBJDUMP = (DATA / "ld75_cuobjdump.sass").read_text()


# --------------------------------------------------------------------------------------------------
# helpers


def _frame(body: str, arch: str = "sm_80", name: str = "k", regs: int | None = 40) -> str:
    """An nvdisasm-style section around instruction lines (addresses are added).

    Lines ending in ':' are labels and lines starting with '/*' second encoding
    words; every other non-blank line is one instruction without its address.
    """
    out = [f"    .target    {arch}", f'    .section    .text.{name},"ax",@progbits']
    if regs is not None:
        out.append(f'    .sectioninfo    @"SHI_REGISTERS={regs}"')
    out += [f"    .type    {name},@function", f"    .size    {name},(.L_end - {name})", f"{name}:"]
    pc = 0
    for line in body.strip().splitlines():
        line = line.strip()
        if line.endswith(":") or line.startswith("/*"):  # a label or a second encoding word
            out.append(line)
        else:
            out.append(f"        /*{pc:04x}*/    {line}")
            pc += 16
    out.append(".L_end:")
    return "\n".join(out) + "\n"


def _one(line: str, arch: str = "sm_80", before: str = ""):
    """The instruction ``line`` read on ``arch`` (``before``: instructions ahead of it)."""
    k = parse_sass(_frame(before + "\n" + line + "\nEXIT ;", arch))[0]
    return k.instrs[-2]


def _kernel(text: str, name: str | None = None, **kw) -> Kernel:
    ks = parse_sass(text, **kw)
    if name is None:
        assert len(ks) == 1
        return ks[0]
    return next(k for k in ks if k.name == name)


def _blocks(k: Kernel):
    return [(b.start, b.end, b.succs, b.call_return, b.func) for b in k.blocks]


# --------------------------------------------------------------------------------------------------
# operand rules: register groups, destinations, predicates, uniform registers


def test_sm75_global_address_is_an_implicit_pair():
    k = _kernel(LD75_CUOBJDUMP)
    assert k.arch == "sm_75"
    ldg = next(i for i in k.instrs if i.opcode == "LDG.E.SYS")
    assert ldg.dst == (2,) and ldg.src == (2, 3)
    assert ldg.op_class == OpClass.LD_GLOBAL and ldg.mem_bytes == 4
    stg = next(i for i in k.instrs if i.opcode == "STG.E.SYS")
    assert stg.dst == () and stg.src == (4, 5, 7)
    assert stg.op_class == OpClass.ST_GLOBAL
    # the same text with a 32-bit offset register is not a pair
    ins = _one("LDG.E.SYS R13, [R8.U32+UR6] ;", arch="sm_75")
    assert ins.src == (8,) and ins.usrc == (6, 7)
    # shared memory is 32-bit: no pair
    assert _one("LDS.U R21, [R8] ;", arch="sm_75").src == (8,)


def test_vector_loads_and_stores_expand_their_data_registers():
    ins = _one("LDG.E.128 R4, [R2.64] ;")
    assert ins.dst == (4, 5, 6, 7) and ins.src == (2, 3) and ins.mem_bytes == 16
    ins = _one("STG.E.64 [R4.64+0x200], R18 ;")
    assert ins.dst == () and ins.src == (4, 5, 18, 19) and ins.mem_bytes == 8
    ins = _one("LDG.E.128 R8, desc[UR6][R2.64] ;", arch="sm_90")
    assert ins.dst == (8, 9, 10, 11) and ins.src == (2, 3) and ins.usrc == (6, 7)
    ins = _one("LDS.U.128 R4, [R2+0x10] ;")
    assert ins.dst == (4, 5, 6, 7) and ins.src == (2,) and ins.op_class == OpClass.LD_SHARED
    ins = _one("STL.128 [R1+0x10], R8 ;")
    assert ins.src == (1, 8, 9, 10, 11) and ins.op_class == OpClass.ST_LOCAL
    ins = _one("LDC.64 R12, c[0x0][0x210] ;", arch="sm_90")
    assert ins.dst == (12, 13) and ins.src == () and ins.op_class == OpClass.LD_CONST
    ins = _one("LDG.E.U8 R4, [R6.64+0x1] ;")
    assert ins.dst == (4,) and ins.mem_bytes == 1
    assert _one("LDG.E.U16 R4, [R6.64] ;").mem_bytes == 2
    ins = _one("ATOMG.E.CAS.64.STRONG.GPU PT, R4, [R8.64], R12, R14 ;")
    assert ins.dst == (4, 5) and ins.src == (8, 9, 12, 13, 14, 15) and ins.op_class == OpClass.ATOMIC
    ins = _one("RED.E.ADD.64.STRONG.GPU [R2.64], R16 ;")
    assert ins.dst == () and ins.src == (2, 3, 16, 17)
    ins = _one("LDGSTS.E.BYPASS.128 [R23], [R4.64] ;")
    assert ins.dst == () and ins.src == (23, 4, 5) and ins.mem_bytes == 16


def test_sm80_global_ops_read_the_hidden_descriptor_and_sm80_cas_prints_a_bare_pair():
    before = "ULDC.64 UR4, c[0x0][0x118] ;"
    ins = _one("LDG.E R3, [R2.64] ;", before=before)
    assert ins.usrc == (4, 5)
    assert _one("LDG.E R3, [R2.64] ;", arch="sm_80").usrc == ()  # no descriptor loaded: unknown
    assert _one("LDG.E.SYS R3, [R2] ;", arch="sm_75", before=before).usrc == ()
    # CAS keeps the older encoding: bare [Rn], 64-bit, no descriptor
    ins = _one("ATOMG.E.CAS.STRONG.GPU PT, R6, [R12], R6, R7 ;", before=before)
    assert ins.dst == (6,) and ins.src == (12, 13, 6, 7) and ins.usrc == ()
    # shared memory never reads it
    assert _one("LDS R3, [R2] ;", before=before).usrc == ()


def test_fp64_operands_are_pairs():
    ins = _one("DFMA R2, R2, R4, R6 ;")
    assert ins.dst == (2, 3) and ins.src == (2, 3, 4, 5, 6, 7) and ins.op_class == OpClass.FP64
    ins = _one("DSETP.GEU.AND P0, PT, R6, R8, PT ;")
    assert ins.dst == () and ins.pdst == (0,) and ins.src == (6, 7, 8, 9)
    assert _one("DMUL R2, R8, 8.98846567431157953865e+307 ;").src == (8, 9)


def test_imad_wide_and_imad_hi_take_a_64_bit_addend():
    ins = _one("IMAD.WIDE R2, R3, R4, R6 ;")
    assert ins.dst == (2, 3) and ins.src == (3, 4, 6, 7)
    assert _one("IMAD.WIDE.U32 R2, R5, 0x8, R2 ;").src == (5, 2, 3)
    ins = _one("IMAD.WIDE R2, R0, R5, c[0x0][0x160] ;")
    assert ins.dst == (2, 3) and ins.src == (0, 5)
    ins = _one("IMAD.HI.U32 R20, P1, R19, R23, R20 ;", arch="sm_75")
    assert ins.dst == (20,) and ins.pdst == (1,) and ins.src == (19, 23, 20, 21)
    assert _one("IMAD R5, R5, 0x3, RZ ;").src == (5,)


def test_conversion_widths():
    assert (_one("F2F.F64.F32 R6, R0 ;").dst, _one("F2F.F64.F32 R6, R0 ;").src) == ((6, 7), (0,))
    assert (_one("F2F.F32.F64 R14, R6 ;").dst, _one("F2F.F32.F64 R14, R6 ;").src) == ((14,), (6, 7))
    ins = _one("I2F.F64 R10, R4 ;")
    assert ins.dst == (10, 11) and ins.src == (4,) and ins.op_class == OpClass.SFU
    ins = _one("I2F.S64 R16, R16 ;")
    assert ins.dst == (16,) and ins.src == (16, 17)
    ins = _one("F2I.S64.F64.TRUNC R20, R4 ;")
    assert ins.dst == (20, 21) and ins.src == (4, 5)
    ins = _one("F2I.F64.TRUNC R4, R4 ;")
    assert ins.dst == (4,) and ins.src == (4, 5)
    ins = _one("F2I.S64.TRUNC R18, R16 ;")
    assert ins.dst == (18, 19) and ins.src == (16,)
    assert _one("FRND.F64.TRUNC R2, R2 ;").src == (2, 3)
    ins = _one("MUFU.RCP64H R11, R9 ;")
    assert ins.dst == (11,) and ins.src == (9,) and ins.op_class == OpClass.SFU


def test_misc_groups_cs2r_lepc_branch_registers():
    assert _one("CS2R R4, SRZ ;").dst == (4, 5)
    assert _one("CS2R.32 R5, SR_CLOCKLO ;").dst == (5,)
    assert _one("LEPC R8 ;").dst == (8, 9)
    assert _one("S2R R4, SR_TID.X ;").dst == (4,)
    assert _one("CALL.ABS.NOINC R2 ;").src == (2, 3)


@pytest.mark.parametrize(
    ("line", "arch", "dst", "src"),
    [
        # sm_75 wmma: D 4, A 2, B 1, C 4
        ("HMMA.1688.F32 R16, R8, R0, RZ ;", "sm_75", range(16, 20), [8, 9, 0]),
        ("HMMA.1688.F32 R16, R10, R12, R16 ;", "sm_75", range(16, 20), [10, 11, 12, 16, 17, 18, 19]),
        # sm_80/90: D 4, A 4, B 2, C 4
        ("HMMA.16816.F32 R16, R4.reuse, R12, RZ ;", "sm_80", range(16, 20), [4, 5, 6, 7, 12, 13]),
        ("HMMA.16816.F32.BF16 R8, R4, R2, R8 ;", "sm_90", range(8, 12), [4, 5, 6, 7, 2, 3, 8, 9, 10, 11]),
        # F16 accumulators halve D and C
        ("HMMA.16816.F16 R20, R4, R20, RZ ;", "sm_80", range(20, 22), [4, 5, 6, 7, 20, 21]),
        ("HMMA.1688.F32.TF32 R12, R4, R2, R8 ;", "sm_80", range(12, 16), [4, 5, 6, 7, 2, 3, 8, 9, 10, 11]),
        ("IMMA.8816.S8.S8 R4, R4.ROW, R5.COL, RZ ;", "sm_80", range(4, 6), [4, 5]),
        ("IMMA.16832.S8.S8 R12, R4.ROW, R2.COL, RZ ;", "sm_80", range(12, 16), [4, 5, 6, 7, 2, 3]),
        ("DMMA.884 R8, R8, R10, RZ ;", "sm_80", range(8, 12), [8, 9, 10, 11]),
        ("DMMA.8x8x4 R4, R2, R4, RZ ;", "sm_90", range(4, 8), [2, 3, 4, 5]),
        ("LDSM.16.M88.4 R12, [R23] ;", "sm_80", range(12, 16), [23]),
        ("LDSM.16.MT88.2 R2, [R25+0x40] ;", "sm_80", range(2, 4), [25]),
        ("LDSM.16.M88 R21, [R25+0x80] ;", "sm_80", range(21, 22), [25]),
    ],
)
def test_tensor_fragments_and_ldsm(line, arch, dst, src):
    ins = _one(line, arch=arch)
    assert ins.dst == tuple(dst)
    assert ins.src == tuple(src)


def test_warpgroup_mma_fragments():
    assert mma_fragment_regs("HGMMA", ("64x128x16", "F32", "BF16")) == (64, 4, 8, 64)
    ins = _one("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24, UP0 ;", arch="sm_90")
    assert ins.dst == tuple(range(24, 88)) and ins.src == tuple(range(24, 88))
    assert ins.usrc == (8, 9, 10, 11) and ins.psrc == (8,)
    ins = _one("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0 ;", arch="sm_90")
    assert ins.src == () and ins.usrc == (4, 5, 6, 7)


def test_predicate_destinations_and_sources():
    ins = _one("ISETP.GE.AND P0, PT, R0, c[0x0][0x170], PT ;")
    assert ins.pdst == (0,) and ins.dst == () and ins.src == (0,) and ins.psrc == ()
    ins = _one("IADD3 R2, P0, P1, R2, R6, RZ ;")
    assert ins.dst == (2,) and ins.pdst == (0, 1) and ins.src == (2, 6)
    ins = _one("IADD3.X R6, R3, UR4, RZ, P1, !PT ;")
    assert ins.dst == (6,) and ins.pdst == () and ins.psrc == (1,) and ins.usrc == (4,)
    ins = _one("LOP3.LUT P0, R7, R12, 0x7fffffff, RZ, 0xc0, !PT ;")
    assert ins.pdst == (0,) and ins.dst == (7,) and ins.src == (12,)
    ins = _one("LEA R4, P0, R2, c[0x0][0x170], 0x3 ;")
    assert ins.dst == (4,) and ins.pdst == (0,) and ins.src == (2,)
    ins = _one("PLOP3.LUT P0, PT, P0, P1, PT, 0xa8, 0x0 ;")
    assert ins.pdst == (0,) and ins.psrc == (0, 1)
    ins = _one("SEL R11, R14.reuse, 0x63400000, !P1 ;")
    assert ins.dst == (11,) and ins.psrc == (1,) and ins.pdst == ()
    ins = _one("SHFL.DOWN P0, R11, R7, R13, R14 ;")
    assert ins.pdst == (0,) and ins.dst == (11,) and ins.src == (7, 13, 14)
    ins = _one("VOTE.ANY R5, PT, P1 ;")
    assert ins.dst == (5,) and ins.pdst == () and ins.psrc == (1,)
    ins = _one("FCHK P0, R0, R5 ;")
    assert ins.pdst == (0,) and ins.src == (0, 5)
    ins = _one("P2R R0, PR, RZ, 0x24 ;")
    assert ins.dst == (0,) and ins.psrc == (2, 5)
    ins = _one("R2P PR, R2, 0x7 ;")
    assert ins.pdst == (0, 1, 2) and ins.src == (2,)


def test_guards_and_uniform_registers():
    ins = _one("@!P2 LOP3.LUT R15, R11, 0x7ff00000, RZ, 0xc0, !PT ;")
    assert ins.guard == "!P2" and ins.psrc == (2,)
    ins = _one("@UP0 UIADD3 UR4, UR4, 0x4, URZ ;")
    assert ins.guard == "UP0" and ins.psrc == (8,) and ins.udst == (4,) and ins.usrc == (4,)
    assert ins.op_class == OpClass.MISC and ins.dst == () and ins.src == ()
    ins = _one("@!PT LDS RZ, [RZ] ;")
    assert ins.guard == "!PT" and ins.psrc == () and ins.dst == () and ins.src == ()
    ins = _one("ULDC.64 UR4, c[0x0][0x118] ;")
    assert ins.udst == (4, 5) and ins.op_class == OpClass.MISC
    ins = _one("IMAD R0, R2, UR4, R13 ;")
    assert ins.src == (2, 13) and ins.usrc == (4,)
    ins = _one("UISETP.NE.AND UP0, UPT, UR4, URZ, UPT ;")
    assert ins.pdst == (8,) and ins.usrc == (4,)
    ins = _one("VOTEU.ANY UR4, UPT, PT ;")
    assert ins.udst == (4,) and ins.pdst == () and ins.psrc == ()
    ins = _one("LDC R0, c[0x3][R9+0x8] ;")
    assert ins.dst == (0,) and ins.src == (9,)
    ins = _one("FSETP.GTU.FTZ.AND P0, PT, |R12|, +INF , PT ;")
    assert ins.pdst == (0,) and ins.src == (12,)
    # RZ / URZ / PT / UPT are never listed
    ins = _one("IADD3 R5, RZ, -R17, RZ ;")
    assert ins.src == (17,)


def test_group_alignment_and_range():
    k = parse_sass(_frame("LDG.E.64 R3, [R2.64] ;\nLDG.E.128 R8, [R2.64] ;\nEXIT ;"))[0]
    assert k.instrs[0].dst == (3, 4)
    assert k.attrs["misaligned_groups"] == [0]
    with pytest.raises(ParseError, match="past R254"):
        parse_sass(_frame("LDG.E.128 R252, [R2.64] ;\nEXIT ;"))


def test_texture_coordinates_and_handles():
    ins = _one("TEX.LL RZ, R5, R8, R4, UR4, 0x0, 2D, 0x1 ;", arch="sm_90")
    assert ins.dst == (5,) and ins.src == (8, 9, 4) and ins.usrc == (4, 5)
    assert ins.op_class == OpClass.LD_GLOBAL


def test_operand_split_respects_brackets_quotes_and_annotations():
    ops, annot = split_operands('R4 -0x110  (*"BRANCH_TARGETS .L_x_9,.L_x_10"*)')
    assert ops == ["R4", "-0x110"] and annot == "BRANCH_TARGETS .L_x_9,.L_x_10"
    ops, _ = split_operands("R11, desc[UR6][R8.64+0x10], c[0x0][0x160], `(.L_x_1)")
    assert ops == ["R11", "desc[UR6][R8.64+0x10]", "c[0x0][0x160]", "`(.L_x_1)"]
    with pytest.raises(ValueError):
        split_operands("R1, [R2")


# --------------------------------------------------------------------------------------------------
# reuse flags and control codes


def test_reuse_flags_from_text_and_from_encoding_slots():
    ins = _one("FFMA R20, R13.reuse, R18, -0.5 ;")
    assert ins.src == (13, 18) and ins.reuse == (True, False)
    ins = _one("HMMA.16816.F32 R16, R4.reuse, R12, RZ ;")
    assert ins.reuse == (True, True, True, True, False, False)
    # FADD: the second source is reuse slot C (bit 2); the encoding says so and agrees with the text
    text = _frame(
        "FADD R8, R9, R19.reuse ;  /* 0x0000001309087221 */\n"
        "/* 0x100fe20000000100 */\n"
        "EXIT ;  /* 0x000000000000794d */\n"
        "/* 0x000fea0003800000 */"
    )
    k = parse_sass(text)[0]
    assert k.instrs[0].reuse == (False, True)
    assert k.attrs["src_slots"][0] == (0, 2)
    assert k.attrs["ctrl"][0].reuse == 0b100
    assert k.attrs["reuse_slot_mismatch"] == []
    # bits that contradict the text: the text wins and the instruction is reported
    bad = text.replace("0x100fe20000000100", "0x020fe20000000100")  # bit 1 (slot B) instead of C
    k = parse_sass(bad)[0]
    assert k.instrs[0].reuse == (False, True)
    assert k.attrs["reuse_slot_mismatch"] == [0]


def test_unary_ops_use_slot_b():
    k = parse_sass(_frame("MOV R7, R11.reuse ;\nIABS R9, R0.reuse ;\nEXIT ;"))[0]
    assert k.attrs["src_slots"][0] == (1,) and k.attrs["src_slots"][1] == (1,)
    k = parse_sass(_frame("FFMA R1, R2, c[0x0][0x160], R3 ;\nSTG.E [R4.64], R7 ;\nEXIT ;"))[0]
    assert k.attrs["src_slots"][0] == (0, 2) and k.attrs["src_slots"][1] == (0, 0, 1)


def test_control_field_decoding():
    assert decode_ctrl(0x000FE40000000F00) == Ctrl(2, 1, 7, 7, 0, 0)
    k = _kernel(TWOCALL_CUOBJDUMP)
    ctrl = k.attrs["ctrl"]
    ops = [i.opcode for i in k.instrs]
    s2r, ldg, call = ops.index("S2R"), ops.index("LDG.E"), ops.index("CALL.REL.NOINC")
    assert ctrl[s2r].wbar == 0  # S2R sets write scoreboard 0 ...
    assert ctrl[s2r + 1].wait == 0b000001  # ... and the dependent ISETP waits on it
    assert (ctrl[ldg].wbar, ctrl[ldg].rbar) == (5, 0)
    assert ctrl[call].wait == 0b100001  # the CALL waits on SB0 and SB5
    assert all(c.stall <= 15 and c.wbar in (0, 1, 2, 3, 4, 5, 7) for c in ctrl)
    assert k.attrs["encoding"][0] == (0x00000A0000017A02, 0x000FE40000000F00)
    # nvdisasm without -hex: no control fields
    assert "ctrl" not in _kernel(TWOCALL_NVDISASM).attrs


# --------------------------------------------------------------------------------------------------
# kernels, functions and the CFG


def test_call_ret_supergraph_edges_nvdisasm():
    k = _kernel(TWOCALL_NVDISASM)
    assert k.name == "_Z7twocallPfi" and k.arch == "sm_80"
    assert k.regs_per_thread == 10 and k.attrs["regs_source"] == "SHI_REGISTERS"
    assert k.attrs["regs_computed"] == 10
    assert len(k.instrs) == 21 and k.attrs["padding_stripped"] == 3
    assert k.functions == {"_Z7twocallPfi": 0, "$_Z7twocallPfi$_Z3sq1f": 4}
    main, sub = "_Z7twocallPfi", "$_Z7twocallPfi$_Z3sq1f"
    assert _blocks(k) == [
        (0, 4, (1,), None, main),  # the label in front of @P0 EXIT does not split the block
        (4, 10, (4,), 2, main),
        (10, 14, (4,), 3, main),
        (14, 17, (), None, main),
        (17, 21, (2, 3), None, sub),
    ]
    calls = [i for i in k.instrs if i.base == "CALL"]
    assert [c.targets for c in calls] == [(17,), (17,)]
    ret = k.instrs[20]
    assert ret.opcode == "RET.REL.NODEC" and ret.src == (4, 5) and ret.op_class == OpClass.BRANCH
    ex = k.instrs[3]
    assert ex.opcode == "EXIT" and ex.guard == "P0" and ex.psrc == (0,) and ex.op_class == OpClass.EXIT
    assert k.blocks[4].label == sub


def test_cuobjdump_and_nvdisasm_agree():
    a = _kernel(TWOCALL_CUOBJDUMP)
    b = _kernel(TWOCALL_NVDISASM)
    assert a.attrs["format"] == "cuobjdump" and b.attrs["format"] == "nvdisasm"

    def fields(i):
        return (
            i.pc,
            i.opcode,
            i.op_class,
            i.dst,
            i.src,
            i.reuse,
            i.guard,
            i.pdst,
            i.psrc,
            i.udst,
            i.usrc,
            i.targets,
            i.mem_bytes,
        )

    assert [fields(i) for i in a.instrs] == [fields(i) for i in b.instrs]
    assert [(x.start, x.end, x.succs, x.call_return) for x in a.blocks] == [
        (x.start, x.end, x.succs, x.call_return) for x in b.blocks
    ]
    # cuobjdump has no symbols: the subroutine is named after its address
    assert a.functions == {"_Z7twocallPfi": 0, "$sub_0110": 4}
    assert a.attrs["regs_source"] == "computed" and a.regs_per_thread == b.regs_per_thread == 10


def test_brx_jump_table_and_self_branch_padding():
    k = _kernel(JUMP_NVDISASM)
    ops = [i.opcode for i in k.instrs]
    assert ops[-1] == "EXIT" and "NOP" not in ops  # `.L_x_4: BRA .L_x_4` is gone
    labels = k.attrs["labels"]
    brx = [j for j, o in enumerate(ops) if o == "BRX"]
    assert len(brx) == 2
    first = k.instrs[brx[0]]
    assert first.src == (4, 5) and first.op_class == OpClass.BRANCH
    assert first.targets == tuple(labels[x] for x in (".L_x_9", ".L_x_10", ".L_x_11", ".L_x_3"))
    blk = k.block_of()
    b = k.blocks[blk[brx[0]]]
    assert b.end == brx[0] + 1
    assert b.succs == tuple(blk[t] for t in first.targets)
    # BSSY/BSYNC do not end blocks; the BSSY reconvergence label (.L_x_1) is not a block start
    bssy, bsync = ops.index("BSSY"), ops.index("BSYNC")
    assert blk[bssy] == blk[bssy + 1] and blk[bsync] == blk[bsync + 1]
    assert labels[".L_x_1"] not in {x.start for x in k.blocks}
    assert k.attrs["unresolved_brx"] == []


def test_brx_without_target_list_is_over_approximated():
    text = re.sub(r'\s*\(\*"BRANCH_TARGETS [^"]*"\*\)', " ", JUMP_NVDISASM)
    exact = _kernel(JUMP_NVDISASM)
    k = _kernel(text)
    for j in k.attrs["unresolved_brx"]:
        assert set(exact.instrs[j].targets) <= set(k.instrs[j].targets)
        assert all(t > j for t in k.instrs[j].targets)
    assert len(k.attrs["unresolved_brx"]) == 2


def test_predicated_branch_has_target_and_fallthrough():
    k = parse_sass(
        _frame("""
        ISETP.NE.AND P0, PT, R0, RZ, PT ;
        @!P0 BRA `(.L_x_1) ;
        IADD3 R0, R0, 0x1, RZ ;
        BRA `(.L_x_2) ;
        .L_x_1:
        IADD3 R0, R0, 0x2, RZ ;
        .L_x_2:
        EXIT ;
    """)
    )[0]
    bra = k.instrs[1]
    assert bra.guard == "!P0" and bra.psrc == (0,) and bra.targets == (4,)
    assert _blocks(k) == [
        (0, 2, (2, 1), None, "k"),
        (2, 4, (3,), None, "k"),
        (4, 5, (3,), None, "k"),
        (5, 6, (), None, "k"),
    ]


def test_call_to_a_label_of_the_same_function_is_a_jump():
    # ptxas uses CALL.REL.NOINC to a local label as a loop exit; no RET can be reached from it
    k = parse_sass(
        _frame("""
        .L_x_0:
        ISETP.NE.AND P0, PT, R0, RZ, PT ;
        @!P0 CALL.REL.NOINC `(.L_x_1) ;
        BRA `(.L_x_0) ;
        .L_x_1:
        EXIT ;
    """)
    )[0]
    assert k.functions == {"k": 0}
    assert k.instrs[1].targets == (3,)
    assert [(b.succs, b.call_return) for b in k.blocks] == [((2, 1), None), ((0,), None), ((), None)]


def test_call_target_without_symbol_that_returns_is_a_function():
    k = parse_sass(
        _frame("""
        MOV R6, 0x20 ;
        CALL.REL.NOINC `(.L_sub) ;
        EXIT ;
        .L_sub:
        MOV R4, R6 ;
        RET.REL.NODEC R4 `(k) ;
    """)
    )[0]
    assert k.functions == {"k": 0, ".L_sub": 2}
    assert [(b.start, b.succs, b.call_return, b.func) for b in k.blocks] == [
        (0, (2,), 1, "k"),
        (2, (), None, "k"),
        (3, (1,), None, ".L_sub"),
    ]


def test_external_calls_fall_through():
    k = parse_sass(_frame("LEPC R8 ;\nCALL.ABS.NOINC R2 ;\nEXIT ;"))[0]
    assert k.attrs["external_calls"] == [1]
    assert k.instrs[1].targets == ()
    assert [b.succs for b in k.blocks] == [(1,), ()]


def test_unknown_opcodes_are_classified_and_recorded():
    k = parse_sass(_frame("UFANCY UR4, UR5 ;\nQUUX R1, R2 ;\nDFOO R2, R4 ;\nFADD R0, R1, R2 ;\nEXIT ;"))[0]
    assert [i.opcode for i in k.instrs] == ["UFANCY", "QUUX", "DFOO", "FADD", "EXIT"]
    assert k.attrs["unknown_opcodes"] == [(0, "UFANCY", "uniform"), (1, "QUUX", "misc"), (2, "DFOO", "fp64")]
    assert k.instrs[1].dst == (1,) and k.instrs[1].src == (2,)


# fmt: off
#: (opcode, class, the fallback rule that classes it): the opcode table's own entries (no rule), then each
#: rule's cases, the rules in their order
CLASSIFY_CASES = [
    ("FFMA", OpClass.FP32, None), ("IMAD", OpClass.INT, None), ("DFMA", OpClass.FP64, None),
    ("MUFU", OpClass.SFU, None), ("HMMA", OpClass.TENSOR, None), ("LDG", OpClass.LD_GLOBAL, None),
    ("LDS", OpClass.LD_SHARED, None), ("STL", OpClass.ST_LOCAL, None), ("ATOMS", OpClass.ATOMIC, None),
    ("BRX", OpClass.BRANCH, None), ("BAR", OpClass.BARRIER, None), ("EXIT", OpClass.EXIT, None),
    ("ULDC", OpClass.MISC, None),
    ("UNEWTHING", OpClass.MISC, "uniform"),
    ("LDX", OpClass.LD_GLOBAL, "memory"), ("LDSX", OpClass.LD_SHARED, "memory"),
    ("STSX", OpClass.ST_SHARED, "memory"), ("REDX", OpClass.ST_GLOBAL, "memory"),
    ("ATOMX", OpClass.ATOMIC, "memory"),
    ("XMMA", OpClass.TENSOR, "tensor"),
    ("DNEW", OpClass.FP64, "fp64"),
    ("FNEW", OpClass.FP32, "fp32"), ("HNEW", OpClass.FP32, "fp32"),
    ("INEW", OpClass.INT, "int"),
    ("ZZZ", OpClass.MISC, "misc"),
]
# fmt: on


@pytest.mark.parametrize(("base", "cls", "rule"), CLASSIFY_CASES)
def test_opcode_table_and_fallback_rules(base, cls, rule):
    assert classify(base) == (cls, rule)


def test_fallback_rules_are_documented_in_order():
    assert [r for r, _ in FALLBACK_RULES] == ["uniform", "memory", "tensor", "fp64", "fp32", "int", "misc"]
    assert all(isinstance(c, OpClass) for c in OPCODE_CLASS.values())


# --------------------------------------------------------------------------------------------------
# registers per thread, architectures, file kinds


def test_register_count_sources():
    body = "MOV R1, c[0x0][0x28] ;\nLDG.E.64 R6, [R2.64] ;\nEXIT ;"
    k = parse_sass(_frame(body, regs=12))[0]
    assert (k.regs_per_thread, k.attrs["regs_source"]) == (12, "SHI_REGISTERS")
    k = parse_sass(_frame(body, regs=None))[0]
    assert (k.regs_per_thread, k.attrs["regs_source"]) == (10, "computed")  # R7 + 1 + 2
    k = parse_sass(_frame(body, regs=None), resources={"k": {"regs": 16, "shared": 2048}})[0]
    assert (k.regs_per_thread, k.attrs["regs_source"], k.shared_mem_bytes) == (16, "resources", 2048)
    k = parse_sass(_frame(body, regs=None), resources={"k": {"sm_80": {"regs": 14}}})[0]
    assert k.regs_per_thread == 14
    with pytest.raises(ParseError):
        parse_sass(_frame(body, regs=None), resources={"k": {"regs": "many"}})


def test_res_usage_block_of_cuobjdump():
    res = (
        "\nResource usage:\n Common:\n  GLOBAL:0\n Function _Z7twocallPfi:\n"
        "  REG:18 STACK:0 SHARED:512 LOCAL:0 CONSTANT[0]:364 TEXTURE:0 SURFACE:0 SAMPLER:0\n"
    )
    k = _kernel(res + TWOCALL_CUOBJDUMP)
    assert (k.regs_per_thread, k.attrs["regs_source"], k.shared_mem_bytes) == (18, "res-usage", 512)


def test_fatbinary_dump_and_arch_selection():
    fat = ""
    for a in ("sm_80", "sm_86"):
        fat += f"\nFatbin elf code:\n================\narch = {a}\ncode version = [1,8]\nhost = linux\n"
        fat += "compile_size = 64bit\n" + TWOCALL_CUOBJDUMP.replace("sm_80", a).replace("SM80", f"SM{a[3:]}")
    fat += "\nFatbin ptx code:\n================\narch = sm_86\ncode version = [9,0]\n"
    fat += "compressed\nptxasOptions = \n"
    ks = parse_sass(fat)
    assert [k.arch for k in ks] == ["sm_80", "sm_86"]
    ks = parse_sass(fat, arch="sm_86")
    assert [k.arch for k in ks] == ["sm_86"]
    with pytest.raises(ParseError, match="no kernels for sm_90"):
        parse_sass(fat, arch="sm_90")


def test_arch_must_be_known():
    body = "\n".join(line for line in _frame("EXIT ;").splitlines() if ".target" not in line)
    with pytest.raises(ParseError, match="arch"):
        parse_sass(body)
    assert parse_sass(body, arch="sm_89")[0].arch == "sm_89"
    with pytest.raises(ParseError, match="unsupported architecture"):
        parse_sass(_frame("EXIT ;", arch="sm_52"))
    with pytest.raises(ParseError):
        parse_sass(body, arch="sm_61")


def test_plr_and_g_comments_are_ignored():
    trailer = "   // |  2   :       ^  |"
    plr = "\n".join(line + trailer if "/*0" in line else line for line in TWOCALL_NVDISASM.splitlines())
    plr += '\n    //## File "k.cu", line 3\n'
    a, b = _kernel(plr), _kernel(TWOCALL_NVDISASM)
    assert [(i.opcode, i.dst, i.src) for i in a.instrs] == [(i.opcode, i.dst, i.src) for i in b.instrs]


# --------------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("", None, "no kernels"),
        ("\n\n", None, "no kernels"),
        ("    code for sm_80\nhello world\n", 2, "unrecognized line"),
        ("    code for sm_80\n        /*0000*/    MOV R1, c[0x0][0x28] ;\n", 2, "outside a function"),
    ],
)
def test_garbage_and_empty_input(text, line, match):
    with pytest.raises(ParseError, match=match) as e:
        parse_sass(text, "x.sass")
    assert e.value.path == "x.sass"
    if line is not None:
        assert e.value.line == line


def test_truncated_input_is_reported_with_its_line():
    lines = TWOCALL_CUOBJDUMP.splitlines()
    cut = next(i for i, s in enumerate(lines) if "/*00a0*/" in s)
    with pytest.raises(ParseError, match="second encoding word") as e:
        parse_sass("\n".join(lines[: cut + 1]))
    assert e.value.line == cut + 2
    with pytest.raises(ParseError, match="truncated"):
        parse_sass("\n".join(lines[: cut + 2]))
    nv = TWOCALL_NVDISASM.splitlines()
    with pytest.raises(ParseError, match="truncated"):
        parse_sass("\n".join(nv[:-8]))


def test_unresolved_branch_target():
    with pytest.raises(ParseError, match=r"\.L_x_9") as e:
        parse_sass(_frame("BRA `(.L_x_9) ;\nEXIT ;"))
    assert e.value.line is not None
    bad = TWOCALL_CUOBJDUMP.replace("CALL.REL.NOINC 0x110 ;", "CALL.REL.NOINC 0x118 ;", 1)
    with pytest.raises(ParseError, match="0x118"):
        parse_sass(bad)


def test_bad_instructions():
    for body, match in [("MOV R1, [R2 ;", "bad operands"), ("MOV R300, R1 ;", "out of range")]:
        with pytest.raises(ParseError, match=match):
            parse_sass(_frame(body + "\nEXIT ;"))
    stray = _frame("EXIT ;").replace("k:\n", "k:\n    /* 0x000fe40000000f00 */\n")
    with pytest.raises(ParseError, match="encoding word without"):
        parse_sass(stray)
    text = _frame("MOV R1, R2 ;\nEXIT ;").replace("/*0010*/", "/*0000*/")
    with pytest.raises(ParseError, match="does not follow"):
        parse_sass(text)


def test_read_sass_errors(tmp_path):
    with pytest.raises(RfmodelError, match="no such SASS file"):
        read_sass(tmp_path / "missing.sass")
    p = tmp_path / "bin.sass"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ParseError):
        read_sass(p)
    p = tmp_path / "ok.sass"
    p.write_text(TWOCALL_NVDISASM)
    (k,) = read_sass(p)
    assert k.source == str(p) and k.instrs[0].line > 0


def test_read_sass_from_many_threads_while_the_memo_turns_over(tmp_path):
    """Threads reading more listings than the memo keeps each get their own kernels, with no error: one
    thread's look-up and another's eviction of that entry do not interleave."""
    from concurrent.futures import ThreadPoolExecutor

    from rfmodel.workload.sass import reader

    paths = []
    for i in range(3 * reader._READ_MEMO_SIZE):
        p = tmp_path / f"k{i}.sass"
        p.write_text(TWOCALL_NVDISASM + f"\n// listing {i}\n")
        paths.append(p)

    def read(i):
        (k,) = read_sass(paths[i % len(paths)])
        return k.source

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(read, range(40 * len(paths))))
    assert got == [str(paths[i % len(paths)]) for i in range(40 * len(paths))]
    assert len(reader._READ_MEMO) <= reader._READ_MEMO_SIZE


def test_each_read_of_a_listing_is_its_own(tmp_path):
    """A listing read again comes from the memo, not parsed again, yet each read's kernel is its own to
    change (launch shape, attributes, blocks, functions) without touching the next read's; the frozen
    instructions are one shared list, so a trace's static columns are built once for both reads."""
    from rfmodel.workload.expand import static_columns
    from rfmodel.workload.sass import reader

    p = tmp_path / "k.sass"
    p.write_text(TWOCALL_NVDISASM)
    (a,) = read_sass(p)
    a.threads_per_cta, a.ctas = 7, 3
    a.attrs["mine"] = 1
    a.functions["f"] = 99
    a.blocks[0].succs = (42,)
    (b,) = read_sass(p)
    assert (b.threads_per_cta, b.ctas) != (7, 3)
    assert "mine" not in b.attrs and b.functions.get("f") != 99 and b.blocks[0].succs != (42,)
    assert b.instrs is a.instrs and len(reader._READ_MEMO) >= 1
    ca, cb = static_columns(a), static_columns(b)
    assert all(ca[k] is cb[k] for k in ca)
    with pytest.raises(ValueError, match="read-only"):
        cb["dst"][0, 0] = 1  # shared columns cannot be changed in place


_SEEDS = [TWOCALL_CUOBJDUMP, TWOCALL_NVDISASM, JUMP_NVDISASM, LD75_CUOBJDUMP]
_JUNK = [
    "@",
    "[",
    "]",
    "`",
    '(*"',
    ",",
    ";",
    "/*",
    "*/",
    "0x",
    "R999",
    "P7",
    ":",
    "$",
    ".section .text.z",
    "Function : f",
    "code for sm_52",
    "..........",
    "\t",
    "\x00",
    "é",
]


@st.composite
def _mutated(draw):
    lines = draw(st.sampled_from(_SEEDS)).splitlines()
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "flip", "inject", "garbage"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[draw(st.integers(0, len(lines) - 1))])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "truncate":
            lines = lines[:i]
        elif op == "flip" and lines[i]:
            k = draw(st.integers(0, len(lines[i]) - 1))
            ch = draw(st.characters(min_codepoint=32, max_codepoint=126))
            lines[i] = lines[i][:k] + ch + lines[i][k + 1 :]
        elif op == "inject":
            k = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:k] + draw(st.sampled_from(_JUNK)) + lines[i][k:]
        elif op == "garbage":
            lines.insert(i, draw(st.text(min_size=1, max_size=30)))
    return "\n".join(lines)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated(), st.sampled_from([None, "sm_80"]))
def test_fuzz_only_parse_errors_escape(text, arch):
    try:
        kernels = parse_sass(text, "fuzz", arch=arch)
    except ParseError as e:
        assert e.path == "fuzz"
        return
    for k in kernels:
        assert k.instrs and k.blocks
        assert all(0 <= s < len(k.blocks) for b in k.blocks for s in b.succs)


# --------------------------------------------------------------------------------------------------
# the shipped built-in kernels


def _shipped_stems():
    stems = {}
    for p in SHIPPED:
        name, kind, _ = p.name.rsplit(".", 2)
        stems.setdefault((p.parent.name, name), {})[kind] = p
    return stems


@pytest.mark.skipif(not SHIPPED, reason="no shipped SASS under rfmodel/workload/kernels/sass yet")
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_file_parses(path):
    kernels = shipped_sass(path)  # read_sass: raises on any unrecognized line (parsed once per session)
    assert kernels
    arch = path.parent.name
    for k in kernels:
        assert k.arch == arch
        assert 2 <= k.regs_per_thread <= 255
        assert k.attrs["unknown_opcodes"] == []
        nb = len(k.blocks)
        assert [b.id for b in k.blocks] == list(range(nb))
        assert k.blocks[0].start == 0 and k.blocks[-1].end == len(k.instrs)
        for b, nxt in zip(k.blocks, k.blocks[1:], strict=False):
            assert b.end == nxt.start
        for b in k.blocks:
            assert len(b) > 0
            assert all(0 <= s < nb for s in b.succs)
            assert b.call_return is None or 0 <= b.call_return < nb
            assert b.func in k.functions
        for j, ins in enumerate(k.instrs):
            if ins.base == "CALL":
                assert ins.targets or j in k.attrs["external_calls"], f"unresolved CALL at {ins.pc:#x}"
            if ins.base in ("BRA", "BRX"):
                assert ins.targets
            assert all(0 <= t < len(k.instrs) for t in ins.targets)
            assert all(0 <= r <= 254 for r in ins.dst + ins.src)
        assert k.instrs[-1].base != "NOP"


@pytest.mark.skipif(not SHIPPED, reason="no shipped SASS under rfmodel/workload/kernels/sass yet")
def test_shipped_register_counts_match_the_manifest():
    manifest = json.loads((KERNELS_DIR / "manifest.json").read_text())
    by_symbol = {v["symbol"]: v for v in manifest["kernels"].values()}
    checked = 0
    for p in SHIPPED:
        for k in shipped_sass(p):
            res = by_symbol[k.name]["resources"][p.parent.name]
            assert k.regs_per_thread == res["regs"], (p, k.name)
            # the measured rule: highest GPR touched (groups expanded) + 1 + 2
            assert k.attrs["regs_computed"] == res["regs"], (p, k.name)
            checked += 1
    assert checked >= len(SHIPPED)


@pytest.mark.skipif(not SHIPPED, reason="no shipped SASS under rfmodel/workload/kernels/sass yet")
@pytest.mark.parametrize("key", sorted(_shipped_stems()), ids=lambda k: f"{k[0]}/{k[1]}")
def test_shipped_cuobjdump_and_nvdisasm_agree(key):
    kinds = _shipped_stems()[key]
    if "cuobjdump" not in kinds or "nvdisasm" not in kinds:
        pytest.skip("needs both listings")
    a = {k.name: k for k in shipped_sass(kinds["cuobjdump"])}
    for other in ("nvdisasm", "plr"):
        if other not in kinds:
            continue
        b = {k.name: k for k in shipped_sass(kinds[other])}
        assert a.keys() == b.keys()
        for name in a:
            ia = [(i.pc, i.opcode, i.dst, i.src, i.pdst, i.psrc, i.udst, i.usrc) for i in a[name].instrs]
            ib = [(i.pc, i.opcode, i.dst, i.src, i.pdst, i.psrc, i.udst, i.usrc) for i in b[name].instrs]
            assert ia == ib
            if not a[name].attrs["unresolved_brx"]:
                assert [(x.start, x.succs, x.call_return) for x in a[name].blocks] == [
                    (x.start, x.succs, x.call_return) for x in b[name].blocks
                ]
                assert sorted(a[name].functions.values()) == sorted(b[name].functions.values())


@pytest.mark.skipif(not SHIPPED, reason="no shipped SASS under rfmodel/workload/kernels/sass yet")
def test_shipped_registers_match_the_disassembler_liveness_marks():
    """``nvdisasm -plr`` marks the GPRs each instruction reads (v) and writes (^): compare."""
    plrs = [p for p in SHIPPED if p.name.endswith(".plr.sass")]
    compared = 0
    for p in plrs:
        rows = shipped_plr(p)  # parse_plr and parse_sass of the file's text
        for k in shipped_sass(p):
            by_addr = {r.addr: r for r in rows[k.name]}
            for ins in k.instrs:
                r = by_addr.get(ins.pc)
                if r is None or ins.base == "CALL":  # the tool marks a call's clobbers
                    continue
                assert set(ins.dst) == r.assigned, (p.name, hex(ins.pc), ins.opcode)
                assert set(ins.src) == r.used, (p.name, hex(ins.pc), ins.opcode)
                compared += 1
    assert compared > 1000


@pytest.mark.skipif(not SHIPPED, reason="no shipped SASS under rfmodel/workload/kernels/sass yet")
def test_parse_speed():
    big = max(SHIPPED, key=lambda p: p.stat().st_size)
    text = big.read_text()
    t0 = time.perf_counter()
    n = sum(len(k.instrs) for k in parse_sass(text))
    dt = time.perf_counter() - t0
    assert n > 0
    assert dt < 2.0, f"{n} instructions took {dt:.2f} s"


def test_a_listing_path_picks_its_kernel_by_name(tmp_path):
    """``path:kernel`` picks a kernel of any listing (``.sass``, ``.txt``), as it does of a kernel list."""
    from rfmodel.errors import UnknownNameError
    from rfmodel.workload.suite import builtin_sass_path, load_kernel

    text = builtin_sass_path("saxpy", "sm_80").read_text()
    name = read_sass(builtin_sass_path("saxpy", "sm_80"))[0].name
    for suffix in (".sass", ".txt"):
        p = tmp_path / f"listing{suffix}"
        p.write_text(text)
        assert load_kernel(f"{p}:{name}").name == name == load_kernel(str(p)).name
        with pytest.raises(UnknownNameError, match=f"unknown kernel in {p} 'nokernel'"):
            load_kernel(f"{p}:nokernel")


def test_a_listing_read_again_is_parsed_once_and_each_read_gets_its_own_kernels(tmp_path, monkeypatch):
    """``read_sass`` parses a file's text once (a first answer reads it for its profiled warps and again for
    the SM's share); each read returns kernels of its own (changing one changes no other), and a file whose
    text changed is parsed again."""
    import rfmodel.workload.sass.reader as R
    from rfmodel.workload.suite import builtin_sass_path

    calls = []
    real = R.parse_sass
    monkeypatch.setattr(R, "parse_sass", lambda *a, **k: calls.append(1) or real(*a, **k))
    p = tmp_path / "k.sass"
    text = builtin_sass_path("saxpy", "sm_80").read_text()
    p.write_text(text)
    a, b = R.read_sass(p), R.read_sass(p)
    assert len(calls) == 1 and a[0] is not b[0] and a[0].name == b[0].name
    assert [str(i) for i in a[0].instrs] == [str(i) for i in b[0].instrs]
    a[0].threads_per_cta = 12345
    assert R.read_sass(p)[0].threads_per_cta != 12345
    p.write_text(text + "\n")
    R.read_sass(p)
    assert len(calls) == 2
