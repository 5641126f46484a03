"""The functional executor: built-in kernels against numpy references, known answers of
single instructions, divergence, and the errors for what it does not implement."""

from __future__ import annotations

import numpy as np
import pytest
from helpers_execute import run_checked

from rfmodel.errors import ParseError, RfmodelError
from rfmodel.workload.execute.builtin import BUILTIN_RECIPES, KNOWN_GAPS, builtin_recipe
from rfmodel.workload.execute.decode import decode_kernel
from rfmodel.workload.execute.errors import ExecutionError, ExecutionFault, UnsupportedInstructionError
from rfmodel.workload.execute.launch import Param, launch
from rfmodel.workload.execute.recipe import check_outputs, parse_recipe, pointers, run_recipe, scalars
from rfmodel.workload.sass import parse_sass
from rfmodel.workload.suite import ARCHS, builtin_sass_path, load_kernel

M32 = 0xFFFFFFFF


# ---- built-in kernels -----------------------------------------------------------------------------


_RUNS = [(n, a) for n in sorted(BUILTIN_RECIPES) for a in ARCHS if (n, a) not in KNOWN_GAPS]


@pytest.mark.parametrize(("name", "arch"), _RUNS)
def test_builtin_kernel_matches_reference(name, arch):
    assert run_checked(name, arch, builtin_recipe(name)).warp_instructions > 0


@pytest.mark.parametrize(("name", "arch"), sorted(KNOWN_GAPS))
def test_known_gaps_stop_with_one_error(name, arch):
    with pytest.raises(ExecutionError) as info:
        run_recipe(load_kernel(name, arch), builtin_recipe(name))
    assert "\n" not in str(info.value)


def test_reference_check_catches_a_wrong_output():
    recipe = builtin_recipe("histogram256")
    res, ins = run_recipe(load_kernel("histogram256", "sm_80"), recipe)
    res.arrays["hist"][7] += 1
    with pytest.raises(RfmodelError, match="differs from the reference at 1 elements"):
        check_outputs(recipe, res, ins)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "arch"), _RUNS)
def test_builtin_kernel_matches_reference_large(name, arch):
    run_checked(name, arch, builtin_recipe(name, scale=4.0))


# ---- unsupported instructions and faults ------------------------------------------------------------


def _listing(arch: str, body: list[str], name: str = "snip") -> str:
    sm = arch.split("_")[1].upper()
    lines = [
        f"\tcode for {arch}",
        f"\t\tFunction : {name}",
        f'\t.headerflags\t@"EF_CUDA_SM{sm} EF_CUDA_VIRTUAL_SM(EF_CUDA_SM{sm})"',
    ]
    for j, t in enumerate([*body, f"BRA 0x{16 * len(body):x}"]):
        lines.append(f"        /*{16 * j:04x}*/                   {t} ;")
    lines.append("\t\t..........")
    return "\n".join(lines) + "\n"


def test_made_up_opcode_is_one_error_naming_it():
    text = builtin_sass_path("saxpy", "sm_80", "cuobjdump").read_text()
    text = text.replace("FFMA R9, R9, c[0x0][0x164], R8", "FQUUX R9, R9, c[0x0][0x164], R8", 1)
    (kernel,) = parse_sass(text)
    with pytest.raises(UnsupportedInstructionError) as info:
        decode_kernel(kernel)
    msg = str(info.value)
    assert "FQUUX" in msg and "0x02d0" in msg and "saxpy" in msg and "sm_80" in msg
    assert "\n" not in msg


def test_unknown_modifier_is_an_error():
    (kernel,) = parse_sass(_listing("sm_80", ["FMUL.D16 R2, R2, R3", "EXIT"]))
    with pytest.raises(UnsupportedInstructionError, match=r"FMUL.D16.*0x0000.*modifier \.D16"):
        decode_kernel(kernel)


def test_out_of_bounds_access_is_a_fault():
    body = ["S2R R0, SR_TID.X", "IMAD.WIDE.U32 R2, R0, 0x40, c[0x0][0x160]", "LDG.E R4, [R2.64]", "EXIT"]
    (kernel,) = parse_sass(_listing("sm_80", body))
    with pytest.raises(ExecutionFault, match="outside every array.*lane 1"):
        launch(kernel, [Param("p", "ptr", array="a")], {"a": np.zeros(16, np.uint32)}, 1, 32)


# ---- known answers of single instructions ------------------------------------------------------------

_PRO = [
    "S2R R0, SR_TID.X",
    "IMAD.WIDE.U32 R30, R0, 0x4, c[0x0][0x160]",
    "IMAD.WIDE.U32 R32, R0, 0x4, c[0x0][0x168]",
    "LDG.E R2, [R30.64]",
    "LDG.E R3, [R30.64+0x80]",
    "LDG.E R4, [R30.64+0x100]",
    "LDG.E R5, [R30.64+0x180]",
]
_EPI = [
    "STG.E [R32.64], R10",
    "STG.E [R32.64+0x80], R11",
    "STG.E [R32.64+0x100], R12",
    "STG.E [R32.64+0x180], R13",
    "EXIT",
]


def _run(body: list[str], inputs, arch: str = "sm_80") -> np.ndarray:
    """Run ``body`` on one warp with R2..R5 = inputs[0..3][lane]; returns R10..R13 as (4, 32)."""
    (kernel,) = parse_sass(_listing(arch, _PRO + body + _EPI))
    inp = np.zeros((4, 32), np.uint32)
    for j, v in enumerate(inputs):
        inp[j] = np.asarray(v, dtype=np.uint64) & M32
    res = launch(
        kernel,
        [Param("in", "ptr", array="in"), Param("out", "ptr", array="out")],
        {"in": inp, "out": np.zeros((4, 32), np.uint32)},
        1,
        32,
    )
    return res.arrays["out"].astype(np.int64)


_RNG = np.random.default_rng(7)
_A = _RNG.integers(0, 2**32, 32, dtype=np.uint64).astype(np.int64)
_B = _RNG.integers(0, 2**32, 32, dtype=np.uint64).astype(np.int64)
_A[:4] = [0, M32, 0x80000000, 1]
_B[:4] = [0, 1, 0x80000000, M32]


def _s(x):
    x = np.asarray(x, dtype=np.int64) & M32
    return np.where(x >= 2**31, x - 2**32, x)


def test_iadd3_carry_chain_adds_and_subtracts_64_bit_values():
    # (R3:R2) + (R5:R4) and (R3:R2) - (R5:R4) as 64-bit numbers
    body = [
        "IADD3 R10, P0, R2, R4, RZ",
        "IADD3.X R11, R3, R5, RZ, P0, !PT",
        "IADD3 R12, P1, R2, -R4, RZ",
        "IADD3.X R13, R3, ~R5, RZ, P1, !PT",
    ]
    a = [int(x) | int(y) << 32 for x, y in zip(_A, _B, strict=True)]
    b = [int(y) | int(x) << 32 for x, y in zip(_A, _B, strict=True)]
    out = _run(body, [_A, _B, _B, _A])
    got_sum = [int(lo) | int(hi) << 32 for lo, hi in zip(out[0], out[1], strict=True)]
    got_diff = [int(lo) | int(hi) << 32 for lo, hi in zip(out[2], out[3], strict=True)]
    assert got_sum == [(x + y) % 2**64 for x, y in zip(a, b, strict=True)]
    assert got_diff == [(x - y) % 2**64 for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("lut", [0x96, 0xE8, 0x3C, 0xC0, 0xFE, 0x01, 0x5A])
def test_lop3_lut_is_the_truth_table(lut):
    c = (_A * 7 + 3) & M32
    out = _run(
        [f"LOP3.LUT R10, R2, R3, R4, 0x{lut:x}, !PT", "MOV R11, RZ", "MOV R12, RZ", "MOV R13, RZ"],
        [_A, _B, c],
    )
    want = np.zeros(32, np.int64)
    for k in range(8):
        if lut >> k & 1:
            ta = _A if k & 4 else ~_A
            tb = _B if k & 2 else ~_B
            tc = c if k & 1 else ~c
            want |= ta & tb & tc
    assert np.array_equal(out[0], want & M32)


def test_shf_funnel_shifts():
    sh = np.arange(32)
    body = [
        "SHF.L.U32 R10, R2, R4, RZ",  # a << s
        "SHF.R.U32.HI R11, RZ, R4, R2",  # a >> s (logical)
        "SHF.R.S32.HI R12, RZ, R4, R2",  # a >> s (arithmetic)
        "SHF.L.U64.HI R13, R2, R4, R3",  # high word of (b:a) << s
    ]
    out = _run(body, [_A, _B, sh])
    assert np.array_equal(out[0], (_A << sh) & M32)
    assert np.array_equal(out[1], _A >> sh)
    assert np.array_equal(out[2], (_s(_A) >> sh) & M32)
    v = (_B << 32) | _A
    assert np.array_equal(out[3], [((int(x) << int(s)) >> 32) & M32 for x, s in zip(v, sh, strict=True)])


def test_imad_wide_and_hi():
    body = [
        "IMAD.WIDE R10, R2, R3, RZ",  # signed 32x32 -> 64
        "IMAD.WIDE.U32 R12, R2, R3, R4",  # unsigned 32x32 + (R5:R4) -> 64
    ]
    out = _run(body, [_A, _B, _B, _A])
    pair = [int(lo) | int(hi) << 32 for lo, hi in zip(out[0], out[1], strict=True)]
    assert pair == [(int(a) * int(b)) % 2**64 for a, b in zip(_s(_A), _s(_B), strict=True)]
    wu = [(int(a) * int(b) + (int(b) | int(a) << 32)) % 2**64 for a, b in zip(_A, _B, strict=True)]
    assert [int(lo) | int(hi) << 32 for lo, hi in zip(out[2], out[3], strict=True)] == wu
    body = [
        "IMAD.HI.U32 R10, R2, R3, RZ",
        "IMAD.HI R11, R2, R3, RZ",
        "IMAD.HI.U32 R12, R2, R3, R4",
        "MOV R13, RZ",
    ]
    out = _run(body, [_A, _B, _B, _A])
    assert [int(x) for x in out[0]] == [(int(a) * int(b)) >> 32 for a, b in zip(_A, _B, strict=True)]
    assert [int(x) for x in out[1]] == [
        ((int(a) * int(b)) >> 32) & M32 for a, b in zip(_s(_A), _s(_B), strict=True)
    ]
    # the addend of .HI is the 64-bit pair (R5:R4): the Newton step of the integer division idiom
    want = [((int(a) * int(b) + (int(b) | int(a) << 32)) >> 32) & M32 for a, b in zip(_A, _B, strict=True)]
    assert [int(x) for x in out[2]] == want


def test_prmt_selects_and_sign_replicates_bytes():
    a, b = 0x443322F1, 0x88776655
    out = _run(
        [
            "PRMT R10, R2, 0x3210, R3",
            "PRMT R11, R2, 0x4567, R3",
            "PRMT R12, R2, 0x9810, R3",
            "PRMT R13, R2, 0x7654, R3",
        ],
        [np.full(32, a), np.full(32, b)],
    )
    assert out[0, 0] == 0x443322F1
    assert out[1, 0] == 0x55667788
    # selector nibbles 8 and 9 replicate the sign of bytes 0 (0xF1) and 1 (0x22)
    assert out[2, 0] == 0x00FF22F1
    assert out[3, 0] == 0x88776655


def test_lea_hi_x_carries_into_the_high_word():
    # (R3:R2) = address + (index << 2) with index in R4 and a 64-bit base in (R3:R2)
    body = ["LEA R10, P0, R4, R2, 0x2", "LEA.HI.X R11, R4, R3, RZ, 0x2, P0", "MOV R12, RZ", "MOV R13, RZ"]
    idx = np.arange(32) * 0x1234567
    out = _run(body, [_A, _B, idx])
    want = [(int(lo) | int(hi) << 32) + (int(i) << 2) for lo, hi, i in zip(_A, _B, idx, strict=True)]
    got = [int(lo) | int(hi) << 32 for lo, hi in zip(out[0], out[1], strict=True)]
    assert got == [x % 2**64 for x in want]


def test_divergent_branches_reconverge_at_bsync():
    # lanes below 5 take one side, the rest the other; after BSYNC all 32 lanes shuffle together
    body = [
        "ISETP.GE.U32.AND P0, PT, R0, 0x5, PT",
        "BSSY B0, 0x%x",
        "@P0 BRA 0x%x",
        "MOV R10, 0x1",
        "BRA 0x%x",
        "MOV R10, 0x2",
        "BSYNC B0",
        "SHFL.IDX PT, R11, R10, 0x3, 0x1f",
        "SHFL.DOWN PT, R12, R0, 0x1, 0x1f",
        "MOV R13, RZ",
    ]
    base = len(_PRO)
    join = base + 6
    body[1] = body[1] % (16 * join)
    body[2] = body[2] % (16 * (base + 5))
    body[4] = body[4] % (16 * join)
    (kernel,) = parse_sass(_listing("sm_80", _PRO + body + _EPI))
    res = launch(
        kernel,
        [Param("in", "ptr", array="in"), Param("out", "ptr", array="out")],
        {"in": np.zeros((4, 32), np.uint32), "out": np.zeros((4, 32), np.uint32)},
        1,
        32,
    )
    out = res.arrays["out"]
    assert list(out[0]) == [1] * 5 + [2] * 27
    assert list(out[1]) == [1] * 32  # lane 3 took the first side
    assert list(out[2]) == [*range(1, 32), 31]  # SHFL.DOWN clamps at lane 31
    # 7 prologue + ISETP, BSSY, BRA + 2 for the lanes below 5 (MOV, BRA) + 1 for the others (MOV)
    # + one BSYNC (the lowest-offset-first schedule brings both sides there together) + 2 SHFL + MOV
    # + 5 epilogue
    assert res.warp_instructions == 7 + 3 + 2 + 1 + 1 + 3 + 5


def test_shuffle_in_a_diverged_warp_is_an_error():
    body = [
        "S2R R0, SR_TID.X",
        "ISETP.GE.U32.AND P0, PT, R0, 0x5, PT",
        "@P0 EXIT",
        "SHFL.DOWN PT, R10, R0, 0x1, 0x1f",
        "EXIT",
    ]
    (kernel,) = parse_sass(_listing("sm_80", body))
    with pytest.raises(ExecutionFault, match="shuffle reads lane 5"):
        launch(kernel, [], {}, 1, 32)


# ---- recipes in TOML ------------------------------------------------------------------------------------

_TOML = {
    "version": 1,
    "kernel": "saxpy",
    "grid": [4],
    "block": [256],
    "outputs": ["y"],
    "seed": 3,
    "params": [
        {"name": "n", "type": "i32", "value": 3000},
        {"name": "a", "type": "f32", "value": -0.5},
        {"name": "x", "type": "ptr", "array": "x"},
        {"name": "y", "type": "ptr", "array": "y"},
    ],
    "arrays": {
        "x": {"dtype": "float32", "shape": [3000], "init": "normal"},
        "y": {"dtype": "float32", "shape": [3000], "init": "uniform", "low": -2.0, "high": 2.0},
    },
}


def test_toml_recipe_runs_saxpy():
    import tomllib

    text = """
version = 1
kernel = "saxpy"
grid = [4]
block = [256]
outputs = ["y"]
seed = 3
params = [
  {name = "n", type = "i32", value = 3000},
  {name = "a", type = "f32", value = -0.5},
  {name = "x", type = "ptr", array = "x"},
  {name = "y", type = "ptr", array = "y"},
]
arrays.x = {dtype = "float32", shape = [3000], init = "normal"}
arrays.y = {dtype = "float32", shape = [3000], init = "uniform", low = -2.0, high = 2.0}
"""
    recipe = parse_recipe(tomllib.loads(text))
    res, ins = run_recipe(load_kernel("saxpy", "sm_90"), recipe)
    want = (np.float64(-0.5) * ins["x"].astype(np.float64) + ins["y"]).astype(np.float32)
    assert np.array_equal(res.arrays["y"], want)


@pytest.mark.parametrize(
    ("patch", "match"),
    [
        ({"grdi": [1]}, "unknown key 'grdi' .*did you mean 'grid'"),
        ({"version": 2}, "version: expected 1"),
        ({"outputs": ["z"]}, "outputs"),
        ({"params": [{"name": "n", "type": "int", "value": 1}]}, r"params\[0\].type"),
        ({"params": [{"name": "n", "type": "i32", "value": 1.5}]}, "expected an integer"),
        ({"arrays": {"x": {"dtype": "float32", "shape": [0]}}}, "shape"),
        ({"arrays": {"x": {"dtype": "float32", "shape": [4], "init": "gauss"}}}, "init"),
    ],
)
def test_bad_recipe_is_one_parse_error(patch, match):
    data = {**_TOML, **patch}
    with pytest.raises(ParseError, match=match):
        parse_recipe(data, "r.toml")


def test_imad_x_adds_the_carry_of_the_low_word():
    # (R3:R2) + R4 as 64 + 32 bits: the low word's carry goes into IMAD.X's sum
    body = ["IADD3 R10, P0, R2, R4, RZ", "IMAD.X R11, RZ, RZ, R3, P0", "MOV R12, RZ", "MOV R13, RZ"]
    out = _run(body, [_A, _B, _B])
    want = [(int(a) | int(b) << 32) + int(b) for a, b in zip(_A, _B, strict=True)]
    assert [int(lo) | int(hi) << 32 for lo, hi in zip(out[0], out[1], strict=True)] == [
        x % 2**64 for x in want
    ]


def test_directed_rounding_of_ffma_and_frnd():
    one = 0x3F800000
    tiny = 0x33800000  # 2**-24: 1 + 2**-24 lies halfway between 1 and the next float
    body = [
        "FADD.RP R10, R2, R3",  # rounds up to 1 + 2**-23
        "FADD.RM R11, R2, R3",  # rounds down to 1
        "FRND.FLOOR R12, R4",
        "FRND R13, R4",  # to nearest even
    ]
    out = _run(body, [np.full(32, one), np.full(32, tiny), np.full(32, 0xC0200000)])  # R4 = -2.5
    assert out[0, 0] == one + 1 and out[1, 0] == one
    assert out[2, 0] == 0xC0400000 and out[3, 0] == 0xC0000000  # floor(-2.5) = -3, rint(-2.5) = -2


def test_compare_and_swap_returns_the_old_value_and_swaps_once():
    # every lane tries to swap word 0 from 0 to its lane id + 1: only lane 0 (the first in the
    # serialization order) succeeds; all see the old value of their attempt
    body = [
        "S2R R0, SR_TID.X",
        "IADD3 R7, R0, 0x1, RZ",
        "MOV R6, RZ",
        "MOV R2, c[0x0][0x160]",
        "MOV R3, c[0x0][0x164]",
        "ATOMG.E.CAS.STRONG.GPU PT, R8, [R2.64], R6, R7",
        "IMAD.WIDE.U32 R4, R0, 0x4, c[0x0][0x168]",
        "STG.E [R4.64], R8",
        "EXIT",
    ]
    (kernel,) = parse_sass(_listing("sm_80", body))
    res = launch(
        kernel,
        [Param("w", "ptr", array="w"), Param("o", "ptr", array="o")],
        {"w": np.zeros(1, np.uint32), "o": np.zeros(32, np.uint32)},
        1,
        32,
    )
    assert res.arrays["w"][0] == 1
    assert list(res.arrays["o"]) == [0] + [1] * 31


def test_brx_jumps_per_lane():
    # each lane jumps to the instruction (lane & 1) * 16 bytes past the BRX's successor
    base = len(_PRO)
    body = [
        "LOP3.LUT R6, R0, 0x1, RZ, 0xc0, !PT",
        "IMAD.SHL.U32 R6, R6, 0x20, RZ",
        f"IADD3 R6, R6, 0x{16 * (base + 4):x}, RZ",
        f"BRX R6 -0x{16 * (base + 4):x}",
        "MOV R10, 0x7",
        f"BRA 0x{16 * (base + 7):x}",
        "MOV R10, 0x9",
        "MOV R11, RZ",
        "MOV R12, RZ",
        "MOV R13, RZ",
    ]
    out = _run(body, [])
    assert list(out[0]) == [7, 9] * 16


# ---- a kernel compiled on the spot, launched from a TOML recipe ---------------------------------------

_MIX_CU = r"""
extern "C" __global__ void mix(int n, const unsigned int* __restrict__ a, float* __restrict__ out,
                               unsigned int* __restrict__ bits)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const unsigned int v = a[i];
        bits[i] = (v >> 3) ^ (v << 7) ^ (unsigned int)__popc(v) ^ (v % 1000u);
        out[i] = (v & 1u) ? (float)v * 0.5f : -(float)(v / 7u);
    }
}
"""

_MIX_TOML = """
version = 1
kernel = "mix"
grid = [3]
block = [128]
seed = 5
outputs = ["out", "bits"]
params = [
  {name = "n", type = "i32", value = 300},
  {name = "a", type = "ptr", array = "a"},
  {name = "out", type = "ptr", array = "out"},
  {name = "bits", type = "ptr", array = "bits"},
]
arrays.a = {dtype = "uint32", shape = [300], init = "randint", low = 0, high = 4294967296}
arrays.out = {dtype = "float32", shape = [300]}
arrays.bits = {dtype = "uint32", shape = [300]}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_compiled_on_the_spot_runs_from_a_toml_recipe(arch, tmp_path):
    import subprocess

    from rfmodel.workload.build_sass import NVCC_FLAGS, find_tools
    from rfmodel.workload.execute.recipe import load_recipe

    try:
        tools = find_tools(("nvcc", "cuobjdump"))
    except RfmodelError as e:
        pytest.skip(str(e))
    src = tmp_path / "mix.cu"
    src.write_text(_MIX_CU)
    cubin = tmp_path / "mix.cubin"
    subprocess.run([str(tools["nvcc"]), *NVCC_FLAGS, f"-arch={arch}", "-o", str(cubin), str(src)], check=True)
    text = subprocess.run(
        [str(tools["cuobjdump"]), "-sass", str(cubin)], check=True, capture_output=True, text=True
    )
    (kernel,) = parse_sass(text.stdout, path=str(cubin))
    (tmp_path / "mix.toml").write_text(_MIX_TOML)
    recipe = load_recipe(tmp_path / "mix.toml")
    res, ins = run_recipe(kernel, recipe)
    v = ins["a"].astype(np.uint64)
    popc = np.array([bin(int(x)).count("1") for x in v], np.uint64)
    bits = ((v >> 3) ^ ((v << 7) & M32) ^ popc ^ (v % 1000)).astype(np.uint32)
    assert np.array_equal(res.arrays["bits"], bits)
    out = np.where(v & 1, (v.astype(np.float32) * np.float32(0.5)), -(v // 7).astype(np.float32)).astype(
        np.float32
    )
    assert np.array_equal(res.arrays["out"], out)  # one rounding each: exact


def test_ffma_is_fused():
    # (1 + 2**-12)**2 - (1 + 2**-11) = 2**-24 exactly; rounding the product first would give 0
    a = 0x3F800800  # 1 + 2**-12
    c = 0xBF801000  # -(1 + 2**-11)
    out = _run(
        ["FFMA R10, R2, R2, R3", "FFMA R11, R2, 2, R3", "MOV R12, RZ", "MOV R13, RZ"],
        [np.full(32, a), np.full(32, c)],
    )
    assert out[0, 0] == 0x33800000  # 2**-24
    # an immediate operand takes the general path: 2 * (1 + 2**-12) - (1 + 2**-11) = 1
    assert out[1, 0] == 0x3F800000


def test_ftz_flushes_denormal_compare_operands():
    den = 0x00000001  # the smallest positive denormal
    body = [
        "FSETP.GT.AND P0, PT, R2, RZ, PT",
        "FSETP.GT.FTZ.AND P1, PT, R2, RZ, PT",
        "SEL R10, RZ, 0x1, !P0",
        "SEL R11, RZ, 0x1, !P1",
        "MOV R12, RZ",
        "MOV R13, RZ",
    ]
    out = _run(body, [np.full(32, den)])
    assert out[0, 0] == 1 and out[1, 0] == 0  # den > 0, but flushed it equals 0


# ---- coverage of the shipped listings and bad launches -------------------------------------------------

#: built-in kernels whose SASS does not decode yet, and the first instruction that stops it
#: shipped listings with an instruction the decoder refuses, and that instruction (none today: every
#: built-in kernel decodes on every shipped architecture)
_UNDECODED: dict = {}


@pytest.mark.parametrize("arch", ARCHS)
def test_every_shipped_listing_decodes_or_names_its_first_unsupported_instruction(arch):
    from rfmodel.workload.suite import builtin_names

    for name in builtin_names():
        kernel = load_kernel(name, arch)
        if (name, arch) in _UNDECODED:
            with pytest.raises(UnsupportedInstructionError) as info:
                decode_kernel(kernel)
            assert info.value.opcode == _UNDECODED[(name, arch)]
        else:
            decode_kernel(kernel)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"grid": 0}, "grid: expected 1 to 3 positive sizes"),
        ({"block": (32, 32, 2)}, "2048 threads per CTA"),
        ({"params": [Param("n", "f16", 1.0)]}, "unknown type 'f16'"),
        ({"params": [Param("p", "ptr", array="nope")]}, "no array named 'nope'"),
        ({"params": [Param("n", "i32")]}, "a scalar needs a value"),
        ({"constants": {5: np.zeros(4, np.uint8)}}, "constant bank 5"),
    ],
)
def test_bad_launch_is_one_error(kwargs, match):
    kernel = load_kernel("saxpy", "sm_80")
    args = {"params": [], "arrays": {"x": np.zeros(4, np.float32)}, "grid": 1, "block": 32}
    args.update(kwargs)
    with pytest.raises(ExecutionError, match=match):
        launch(kernel, args.pop("params"), args.pop("arrays"), args.pop("grid"), args.pop("block"), **args)


def test_synthetic_kernel_cannot_be_executed():
    from rfmodel.workload.suite import load_workload

    kernel = load_workload("synthetic:register-sensitive").kernel
    with pytest.raises(UnsupportedInstructionError, match="not read from SASS"):
        decode_kernel(kernel)


# ---- the command line -------------------------------------------------------------------------------


def test_cli_executes_a_builtin_kernel_against_its_reference(capsys):
    import json

    from rfmodel.cli import main

    assert main(["workload", "execute", "histogram256", "--arch", "sm_75", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["matches_reference"] is True and out["max_error"] == {"hist": 0.0}
    assert out["warp_instructions"] > 0


def test_cli_made_up_opcode_in_a_recipe_kernel_is_one_line_and_exit_2(tmp_path, capsys):
    import tomllib

    from rfmodel.cli import main

    text = builtin_sass_path("saxpy", "sm_80", "cuobjdump").read_text()
    sass = tmp_path / "saxpy_bad.sass"
    sass.write_text(text.replace("FFMA R9, R9, c[0x0][0x164], R8", "FQUUX R9, R9, c[0x0][0x164], R8", 1))
    recipe = tmp_path / "saxpy.toml"
    lines = [
        "version = 1",
        'kernel = "saxpy"',
        "grid = [2]",
        "block = [256]",
        'outputs = ["y"]',
        "params = [",
    ]
    for p in _TOML["params"]:
        fields = ", ".join(f"{k} = {v!r}".replace("'", '"') for k, v in p.items())
        lines.append(f"  {{{fields}}},")
    lines += [
        "]",
        "[arrays.x]",
        'dtype = "float32"',
        "shape = [3000]",
        "[arrays.y]",
        'dtype = "float32"',
        "shape = [3000]",
    ]
    recipe.write_text("\n".join(lines) + "\n")
    tomllib.loads(recipe.read_text())  # the file itself is valid TOML
    assert main(["workload", "execute", str(sass), "--recipe", str(recipe), "--arch", "sm_80"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "FQUUX" in err and "0x02d0" in err and "saxpy" in err and "sm_80" in err


@pytest.mark.parametrize(
    "ins", ["FADD R2, R2, c[0x0][0x160].H1", "LDS R2, [R3+0x10].T", "IADD3 R2, R3.H1, RZ, RZ", "MOV R2, 1.5"]
)
def test_operand_forms_it_does_not_model_are_refused(ins):
    (kernel,) = parse_sass(_listing("sm_80", [ins, "EXIT"]))
    with pytest.raises(UnsupportedInstructionError):
        decode_kernel(kernel)


def test_counts_per_instruction_and_per_warp_add_up():
    recipe = builtin_recipe("sgemm_tiled")
    kernel = load_kernel("sgemm_tiled", "sm_80")
    res, _ = run_recipe(kernel, recipe)
    assert res.per_instruction.sum() == res.warp_instructions == res.per_warp.sum()
    assert res.per_warp.shape == (res.ctas, 8)
    # every warp of a tiled SGEMM passes the same barriers: the BAR instructions run the same
    # number of times in every warp, so their total is a multiple of the warp count
    bars = [i for i, ins in enumerate(kernel.instrs) if ins.base == "BAR"]
    assert sum(res.per_instruction[i] for i in bars) % (8 * res.ctas) == 0


# ---- double precision ---------------------------------------------------------------------------------


def _doubles(x) -> tuple[np.ndarray, np.ndarray]:
    bits = np.asarray(x, dtype=np.float64).view(np.uint64)
    return (bits & M32).astype(np.int64), (bits >> np.uint64(32)).astype(np.int64)


def _pair_out(lo, hi) -> np.ndarray:
    return ((hi.astype(np.uint64) << np.uint64(32)) | lo.astype(np.uint64)).view(np.float64)


_DRNG = np.random.default_rng(11)
_DA = _DRNG.standard_normal(32) * 10.0 ** _DRNG.integers(-5, 5, 32)
_DB = _DRNG.standard_normal(32) * 10.0 ** _DRNG.integers(-5, 5, 32)
_DA[:3] = [1.0, -0.0, 3.0]
_DB[:3] = [3.0, 0.0, 7.0]


def _exact(x) -> Fraction:  # noqa: F821
    from fractions import Fraction

    return Fraction(float(x))


def test_double_add_multiply_fma_round_to_nearest():
    a_lo, a_hi = _doubles(_DA)
    b_lo, b_hi = _doubles(_DB)
    out = _run(["DADD R10, R2, R4", "DMUL R12, R2, -R4"], [a_lo, a_hi, b_lo, b_hi])
    assert np.array_equal(_pair_out(out[0], out[1]), _DA + _DB)
    assert np.array_equal(_pair_out(out[2], out[3]), _DA * -_DB)
    out = _run(["DFMA R10, R2, R4, |R2|", "DMUL R12, R2, 0.5"], [a_lo, a_hi, b_lo, b_hi])
    # the fused result: the exact a*b + |a|, rounded once (Fraction -> float rounds to nearest)
    want = [float(_exact(a) * _exact(b) + abs(_exact(a))) for a, b in zip(_DA, _DB, strict=True)]
    assert np.array_equal(_pair_out(out[0], out[1]), np.array(want))
    assert np.array_equal(_pair_out(out[2], out[3]), _DA * 0.5)


def test_double_multiply_rounding_up_and_down():
    recip = 1.0 / np.where(_DB == 0.0, 7.0, _DB)
    a_lo, a_hi = _doubles(_DA)
    b_lo, b_hi = _doubles(recip)
    out = _run(["DMUL.RP R10, R2, R4", "DMUL.RM R12, R2, R4"], [a_lo, a_hi, b_lo, b_hi])
    up, down = _pair_out(out[0], out[1]), _pair_out(out[2], out[3])
    for a, b, u, d in zip(_DA, recip, up, down, strict=True):
        p = _exact(a) * _exact(b)
        assert _exact(u) >= p and _exact(d) <= p  # on the right side of the exact product
        assert u == d or np.nextafter(d, np.inf) == u  # and the nearest such doubles
    assert (up != down).sum() >= 20  # most of these products are inexact


def test_double_max_select_and_nan_predicates():
    a = np.array([1.0, np.nan, 2.0, np.nan, -0.5] + [0.0] * 27)
    b = np.array([2.0, 3.0, np.nan, np.nan, -1.5] + [0.0] * 27)
    a_lo, a_hi = _doubles(a)
    b_lo, b_hi = _doubles(b)
    body = [
        "DSETP.MAX.AND P0, P1, R2, R4, PT",
        "SEL R10, RZ, 0x1, !P0",
        "SEL R11, RZ, 0x1, !P1",
        "DSETP.GT.AND P2, PT, R2, R4, PT",
        "SEL R12, RZ, 0x1, !P2",
    ]
    out = _run(body, [a_lo, a_hi, b_lo, b_hi])
    # fmax's lowering: P0 picks the first operand (not NaN, and the other NaN or not larger), P1 both NaN
    assert list(out[0][:5]) == [0, 0, 1, 0, 1]
    assert list(out[1][:5]) == [0, 0, 0, 1, 0]
    assert list(out[2][:5]) == [0, 0, 0, 0, 1]  # an ordered comparison is false with a NaN


def test_reciprocal_high_word_int_to_double_and_add_min_max():
    a_lo, a_hi = _doubles(_DA)
    ints = np.arange(-16, 16, dtype=np.int64)
    body = ["MUFU.RCP64H R10, R3", "I2F.F64 R12, R4"]
    out = _run(body, [a_lo, a_hi, ints, ints])
    # 1/x of the double whose high word is a's (low word 0), cut to its high word
    x = _pair_out(np.zeros(32, np.int64), a_hi)
    with np.errstate(divide="ignore"):  # -0.0 among them: -inf
        assert np.array_equal(out[0], (np.float64(1.0) / x).view(np.uint64) >> np.uint64(32))
    assert np.array_equal(_pair_out(out[2], out[3]), ints.astype(np.float64))
    body = [
        "VIADDMNMX R10, R2, R3, R4, PT",
        "VIADDMNMX R11, R2, R3, R4, !PT",
        "VIADDMNMX.U32 R12, R2, R3, R4, PT",
    ]
    out = _run(body, [_A, _B, _A ^ 0x5A5A, _B])  # an sm_90 opcode; the prologue's offsets are sm_80's
    s = (_A + _B) % 2**32
    signed = lambda v: np.where(v >= 2**31, v - 2**32, v)  # noqa: E731
    c = _A ^ 0x5A5A
    assert np.array_equal(out[0], np.where(signed(s) < signed(c), s, c))
    assert np.array_equal(out[1], np.where(signed(s) > signed(c), s, c))
    assert np.array_equal(out[2], np.minimum(s, c))


# ---- F2F, BREAK, the sm_90 integer min/max forms, the static shared-memory size ----------------------
# The listings below are nvcc 13.0 output (`nvcc -cubin -O3 -arch=sm_XX`, `cuobjdump -sass`), encodings
# and padding left out; offsets run from 0 in steps of 16 as in the original, so branch targets hold.


def _f2f_directed(v: np.ndarray) -> np.ndarray:
    """float32 of the doubles ``v`` (no NaN) rounded to nearest, toward zero, down and up: columns
    RN, RZ, RM, RP.  The nearest float32 is numpy's; the other side of an inexact one is its neighbour."""
    with np.errstate(over="ignore"):
        f = v.astype(np.float32)
    back = f.astype(np.float64)
    exact, above = back == v, back > v
    with np.errstate(over="ignore"):
        hi = np.where(above, f, np.nextafter(f, np.float32(np.inf)))
        lo = np.where(above, np.nextafter(f, np.float32(-np.inf)), f)
    rm, rp = np.where(exact, f, lo), np.where(exact, f, hi)
    return np.stack([f, np.where(v > 0, rm, rp), rm, rp], axis=1)


# f2f_modes (sm_80): y[4i..4i+3] = __double2float_rn / _rz / _rd / _ru (x[i])
_F2F_MODES_SM80 = [
    "MOV R1, c[0x0][0x28]",
    "S2R R0, SR_CTAID.X",
    "S2R R3, SR_TID.X",
    "IMAD R0, R0, c[0x0][0x0], R3",
    "ISETP.GE.AND P0, PT, R0, c[0x0][0x170], PT",
    "@P0 EXIT",
    "HFMA2.MMA R3, -RZ, RZ, 0, 4.76837158203125e-07",
    "ULDC.64 UR4, c[0x0][0x118]",
    "IMAD.WIDE R2, R0, R3, c[0x0][0x160]",
    "LDG.E.64 R2, [R2.64]",
    "HFMA2.MMA R5, -RZ, RZ, 0, 2.384185791015625e-07",
    "SHF.L.U32 R4, R0, 0x2, RZ",
    "IMAD.WIDE R4, R4, R5, c[0x0][0x168]",
    "F2F.F32.F64 R7, R2",
    "F2F.F32.F64.RZ R9, R2",
    "F2F.F32.F64.RM R11, R2",
    "STG.E [R4.64], R7",
    "F2F.F32.F64.RP R13, R2",
    "STG.E [R4.64+0x4], R9",
    "STG.E [R4.64+0x8], R11",
    "STG.E [R4.64+0xc], R13",
    "EXIT",
]
# f2f (sm_90): double d = x[i]; y[i] = (float)(d * 1.1); z[i] = d
_F2F_SM90 = [
    "LDC R1, c[0x0][0x28]",
    "S2R R0, SR_TID.X",
    "S2UR UR4, SR_CTAID.X",
    "LDC R13, c[0x0][RZ]",
    "IMAD R13, R13, UR4, R0",
    "ULDC UR4, c[0x0][0x228]",
    "ISETP.GE.AND P0, PT, R13, UR4, PT",
    "@P0 EXIT",
    "LDC.64 R2, c[0x0][0x210]",
    "ULDC.64 UR4, c[0x0][0x208]",
    "LDC.64 R8, c[0x0][0x218]",
    "LDC.64 R10, c[0x0][0x220]",
    "IMAD.WIDE R2, R13, 0x4, R2",
    "LDG.E R2, desc[UR4][R2.64]",
    "UMOV UR6, 0x9999999a",
    "UMOV UR7, 0x3ff19999",
    "IMAD.WIDE R8, R13, 0x4, R8",
    "IMAD.WIDE R10, R13, 0x8, R10",
    "F2F.F64.F32 R4, R2",
    "DMUL R6, R4, UR6",
    "F2F.F32.F64 R7, R6",
    "STG.E desc[UR4][R8.64], R7",
    "STG.E.64 desc[UR4][R10.64], R4",
    "EXIT",
]


def test_f2f_narrows_doubles_in_each_rounding_direction():
    (kernel,) = parse_sass(_listing("sm_80", _F2F_MODES_SM80, "f2f_modes"))
    rng = np.random.default_rng(21)
    n = 96
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-50, 50, n)
    # zeros, infinity, overflow past the largest float, denormal results, a decimal just above FLT_MAX
    x[:10] = [0.0, -0.0, np.inf, 3.5e38, -3.5e38, 1e-46, -1e-46, 3.4028235e38, 1.5, -(2.0**-149) * 3.5]
    params = [Param("x", "ptr", array="x"), Param("y", "ptr", array="y"), Param("n", "i32", n)]
    res = launch(kernel, params, {"x": x, "y": np.zeros(4 * n, np.float32)}, 2, 64)
    got = res.arrays["y"].reshape(n, 4)
    want = _f2f_directed(x)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))  # bit for bit, signs of zero included
    assert (want[:, 2] != want[:, 3]).sum() > 40  # most are inexact: the four columns differ
    assert got[3, 0] == np.inf and got[3, 1] == np.finfo(np.float32).max and got[4, 2] == -np.inf


def test_f2f_widens_floats_exactly():
    (kernel,) = parse_sass(_listing("sm_90", _F2F_SM90, "f2f"))
    rng = np.random.default_rng(22)
    n = 70
    with np.errstate(over="ignore"):
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-45, 39, n)).astype(np.float32)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, 1e-45, -3.4e38]
    params = [Param(s, "ptr", array=s) for s in ("x", "y", "z")] + [Param("n", "i32", n)]
    arrays = {"x": x, "y": np.zeros(n, np.float32), "z": np.zeros(n)}
    res = launch(kernel, params, arrays, 3, 32)
    z = x.astype(np.float64)  # exact: every float is a double
    assert np.array_equal(res.arrays["z"].view(np.uint64), z.view(np.uint64))
    with np.errstate(over="ignore"):
        assert np.array_equal(res.arrays["y"].view(np.uint32), (z * 1.1).astype(np.float32).view(np.uint32))


@pytest.mark.parametrize(
    ("ins", "match"),
    [
        ("F2F.F16.F32 R7, R0", r"\.F16: conversions to or from half"),  # sm_75's __float2half
        ("F2F.F16.F64 R5, R2", r"\.F16: conversions to or from half"),  # __double2half
        ("F2F.BF16.F32 R5, R2", r"\.BF16: conversions to or from half"),
        ("F2F.FTZ.F32.F64 R5, R2", "F2F.FTZ"),
        ("F2F.F32.F32 R5, R2", "other than .F64.F32 or .F32.F64"),
        ("F2FP.F16.F32.PACK_AB R0, RZ, R0", "opcode not implemented"),  # sm_80+'s __float2half
    ],
)
def test_f2f_half_precision_and_ftz_forms_are_refused(ins, match):
    (kernel,) = parse_sass(_listing("sm_80", [ins, "EXIT"]))
    with pytest.raises(UnsupportedInstructionError, match=match):
        decode_kernel(kernel)


# divc (sm_80): y[i] = x[i] / 3214212.01f, PolyBench correlation's mean / FLOAT_N.  The division's slow
# path (0x1b0) opens B0 and B2; the special operands (NaN at 0x250, 0 at 0x2c0, infinity at 0x310)
# BREAK out of B2 and branch past its BSYNC (0x370) to their own results and BSYNC B0 (0x780)
_DIVC_SM80 = """
IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]; S2R R0, SR_CTAID.X; S2R R3, SR_TID.X; IMAD R0, R0, c[0x0][0x0], R3
ISETP.GE.AND P0, PT, R0, c[0x0][0x170], PT; @P0 EXIT; IMAD.MOV.U32 R3, RZ, RZ, 0x4
ULDC.64 UR6, c[0x0][0x118]; IMAD.WIDE R2, R0, R3, c[0x0][0x160]; LDG.E R3, [R2.64]
IMAD.MOV.U32 R5, RZ, RZ, 0x34a707c4; BSSY B1, 0x170; IMAD.MOV.U32 R4, RZ, RZ, 0x4a442e10
FFMA R4, R5, -R4, 1; FFMA R4, R4, R5, 3.1111824227991746739e-07; FCHK P0, R3, 3214212; FFMA R5, R3, R4, RZ
FFMA R6, R5, -3214212, R3; FFMA R5, R4, R6, R5; @!P0 BRA 0x160; MOV R2, 0x160; CALL.REL.NOINC 0x1b0
BSYNC B1; IMAD.MOV.U32 R3, RZ, RZ, 0x4; IMAD.WIDE R2, R0, R3, c[0x0][0x168]; STG.E [R2.64], R5; EXIT
SHF.R.U32.HI R4, RZ, 0x17, R3.reuse; BSSY B0, 0x790; BSSY B2, 0x380; IMAD.MOV.U32 R5, RZ, RZ, R3
LOP3.LUT R4, R4, 0xff, RZ, 0xc0, !PT; IADD3 R7, R4, -0x1, RZ; ISETP.GT.U32.OR P0, PT, R7, 0xfd, !PT
@!P0 IMAD.MOV.U32 R6, RZ, RZ, RZ; @!P0 BRA 0x370; FSETP.GTU.FTZ.AND P0, PT, |R3|, +INF, PT; @P0 BREAK B2
@P0 BRA 0x770; IMAD.MOV.U32 R6, RZ, RZ, 0x4a442e10; LOP3.LUT P0, RZ, R6, 0x7fffffff, R5, 0xc8, !PT
@!P0 BREAK B2; @!P0 BRA 0x750; LOP3.LUT P0, RZ, R5, 0x7fffffff, RZ, 0xc0, !PT; @!P0 BREAK B2; @!P0 BRA 0x730
FSETP.NEU.FTZ.AND P0, PT, |R3|, +INF, PT; LOP3.LUT P1, RZ, R6, 0x7fffffff, RZ, 0xc0, !PT
PLOP3.LUT P0, PT, P0, P1, PT, 0x2a, 0x0; @P0 BREAK B2; @P0 BRA 0x700; ISETP.GE.AND P0, PT, R7, RZ, PT
@P0 IMAD.MOV.U32 R6, RZ, RZ, RZ; @!P0 FFMA R5, R3, 1.84467440737095516160e+19, RZ
@!P0 IMAD.MOV.U32 R6, RZ, RZ, -0x40; BSYNC B2; UMOV UR4, 0x4a442e10; IADD3 R4, R4, -0x7f, RZ
UIADD3 UR4, UR4, -0xa800000, URZ; BSSY B2, 0x6f0; IADD3 R6, R6, -0x15, R4; IMAD R5, R4, -0x800000, R5
FADD.FTZ R8, -RZ, -UR4; MUFU.RCP R3, UR4; FFMA R10, R3, R8, 1; FFMA R10, R3, R10, R3; FFMA R3, R5, R10, RZ
FFMA R7, R8, R3, R5; FFMA R7, R10, R7, R3; FFMA R8, R8, R7, R5; FFMA R5, R10, R8, R7
SHF.R.U32.HI R3, RZ, 0x17, R5; LOP3.LUT R3, R3, 0xff, RZ, 0xc0, !PT; IMAD.IADD R9, R3, 0x1, R6
IADD3 R3, R9, -0x1, RZ; ISETP.GE.U32.AND P0, PT, R3, 0xfe, PT; @!P0 BRA 0x6d0
ISETP.GT.AND P0, PT, R9, 0xfe, PT; @P0 BRA 0x6a0; ISETP.GE.AND P0, PT, R9, 0x1, PT; @P0 BRA 0x6e0
ISETP.GE.AND P0, PT, R9, -0x18, PT; LOP3.LUT R5, R5, 0x80000000, RZ, 0xc0, !PT; @!P0 BRA 0x6e0
FFMA.RZ R3, R10.reuse, R8.reuse, R7; ISETP.NE.AND P2, PT, R9.reuse, RZ, PT; IMAD.MOV R6, RZ, RZ, -R9
ISETP.NE.AND P1, PT, R9, RZ, PT; LOP3.LUT R4, R3, 0x7fffff, RZ, 0xc0, !PT
FFMA.RP R3, R10.reuse, R8.reuse, R7.reuse; FFMA.RM R10, R10, R8, R7; IADD3 R7, R9, 0x20, RZ
LOP3.LUT R4, R4, 0x800000, RZ, 0xfc, !PT; FSETP.NEU.FTZ.AND P0, PT, R3, R10, PT; SHF.L.U32 R7, R4, R7, RZ
SEL R3, R6, RZ, P2; ISETP.NE.AND P1, PT, R7, RZ, P1; SHF.R.U32.HI R3, RZ, R3, R4
PLOP3.LUT P0, PT, P0, P1, PT, 0xa8, 0x0; SHF.R.U32.HI R7, RZ, 0x1, R3; SEL R4, RZ, 0x1, !P0
LOP3.LUT R4, R4, 0x1, R7, 0xf8, !PT; LOP3.LUT R4, R4, R3, RZ, 0xc0, !PT; IMAD.IADD R4, R7, 0x1, R4
LOP3.LUT R5, R4, R5, RZ, 0xfc, !PT; BRA 0x6e0; LOP3.LUT R5, R5, 0x80000000, RZ, 0xc0, !PT
LOP3.LUT R5, R5, 0x7f800000, RZ, 0xfc, !PT; BRA 0x6e0; IMAD R5, R6, 0x800000, R5; BSYNC B2; BRA 0x780
LOP3.LUT R5, R6, 0x80000000, R5, 0x48, !PT; LOP3.LUT R5, R5, 0x7f800000, RZ, 0xfc, !PT; BRA 0x780
LOP3.LUT R5, R6, 0x80000000, R5, 0x48, !PT; BRA 0x780; MUFU.RSQ R5, -QNAN; BRA 0x780
FADD.FTZ R5, R3, 3214212; BSYNC B0; IMAD.MOV.U32 R3, RZ, RZ, 0x0; RET.REL.NODEC R2 0x0
"""


def _divc(text_body: list[str], x: np.ndarray) -> np.ndarray:
    (kernel,) = parse_sass(_listing("sm_80", text_body, "divc"))
    params = [Param("x", "ptr", array="x"), Param("y", "ptr", array="y"), Param("n", "i32", x.size)]
    return launch(kernel, params, {"x": x, "y": np.zeros(x.size, np.float32)}, 1, 64).arrays["y"]


def test_break_lets_a_division_slow_path_reconverge():
    body = [t.strip() for line in _DIVC_SM80.strip().splitlines() for t in line.split(";")]
    assert len(body) == 123 and body.count("@P0 BREAK B2") + body.count("@!P0 BREAK B2") == 4
    rng = np.random.default_rng(23)
    with np.errstate(over="ignore"):
        x = (rng.standard_normal(64) * 10.0 ** rng.integers(-38, 38, 64)).astype(np.float32)
    # in each warp: special operands that BREAK (zeros, infinities, NaN), slow-path operands that
    # reach the BSYNC (a denormal, exponents far below the divisor's) and ordinary ones
    x[:10] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3e-39, 1e-33, 2.5e-35, 3e38]
    x[32:36] = [7.0, np.nan, 1e-40, 0.0]
    got = _divc(body, x)
    want = x / np.float32(3214212.01)  # IEEE division, correctly rounded
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
    # without BREAK the lanes at BSYNC B2 would wait for lanes that never come: a deadlock
    nobreak = [t.replace("BREAK B2", "NOP") for t in body]
    with pytest.raises(ExecutionFault, match="deadlock"):
        _divc(nobreak, x)


def test_break_releases_lanes_already_waiting_at_bsync():
    # the lanes with input 0 reach BSYNC B0 first; the others, at a higher offset, BREAK out of B0
    # afterwards, which must release the waiting ones (R11 = 2 is written only after the BSYNC)
    t = lambda j: f"0x{16 * (len(_PRO) + j):x}"  # noqa: E731  (body instruction j's offset)
    body = [
        "ISETP.NE.AND P0, PT, R2, RZ, PT",
        "MOV R10, RZ",
        "MOV R11, RZ",
        "MOV R12, RZ",
        "MOV R13, RZ",
        f"BSSY B0, {t(9)}",
        f"@P0 BRA {t(11)}",
        "MOV R10, 0x1",
        "BSYNC B0",
        "MOV R11, 0x2",
        f"BRA {t(14)}",
        "BREAK B0",
        "MOV R12, 0x3",
        f"BRA {t(14)}",
    ]
    x = np.arange(32) % 3
    out = _run(body, [x])
    stay = x == 0
    assert list(out[0]) == list(np.where(stay, 1, 0))
    assert list(out[1]) == list(np.where(stay, 2, 0))
    assert list(out[2]) == list(np.where(stay, 0, 3))


# dpx (sm_90): CUDA's DPX functions: out[16i + k] = __vimax3_s32, __vimin3_u32, __vimax_s32_relu,
# __vimin3_s32_relu, __viaddmax_s32_relu, __viaddmin_u32, __vibmax_s32 (and its bool), __vibmin_u32 (and
# its bool), __vimax3_s16x2, __vimin_s16x2_relu, __viaddmax_u16x2, __vimax3_u16x2, __vimin3_s32,
# __vimax3_s32_relu of a[i], b[i], c[i]
_DPX_SM90 = """
LDC R1, c[0x0][0x28]; S2R R11, SR_CTAID.X; ULDC UR4, c[0x0][0x0]; S2R R0, SR_TID.X; IMAD R11, R11, UR4, R0
ULDC UR4, c[0x0][0x230]; ISETP.GE.AND P0, PT, R11, UR4, PT; @P0 EXIT; LDC.64 R4, c[0x0][0x210]
ULDC.64 UR4, c[0x0][0x208]; LDC.64 R6, c[0x0][0x218]; LDC.64 R8, c[0x0][0x220]; IMAD.WIDE R4, R11, 0x4, R4
LDC.64 R2, c[0x0][0x228]; LDG.E R4, desc[UR4][R4.64]; IMAD.WIDE R6, R11, 0x4, R6; LDG.E R7, desc[UR4][R6.64]
IMAD.WIDE R8, R11, 0x4, R8; LDG.E R8, desc[UR4][R8.64]; IMAD.SHL.U32 R11, R11, 0x10, RZ
IMAD.WIDE R2, R11, 0x4, R2; ISETP.GE.AND P0, PT, R4.reuse, R7.reuse, PT
ISETP.GT.U32.AND P1, PT, R4.reuse, R7.reuse, PT; VIMNMX.RELU R13, R4.reuse, R7.reuse, !PT
VIMNMX3 R5, R4.reuse, R7.reuse, R8.reuse, !PT; VIMNMX.U32 R21, R4.reuse, R7.reuse, PT
VIMNMX.S16x2.RELU R25, R4.reuse, R7.reuse, PT; STG.E desc[UR4][R2.64], R5; VIMNMX3.U32 R11, R4, R7, R8, PT
VIMNMX3.RELU R9, R4.reuse, R7.reuse, R8.reuse, PT; VIADDMNMX.RELU R15, R4.reuse, R7.reuse, R8.reuse, !PT
VIADDMNMX.U32 R17, R4.reuse, R7.reuse, R8.reuse, PT; VIMNMX3.S16x2 R23, R4.reuse, R7.reuse, R8.reuse, !PT
VIADDMNMX.U16x2 R27, R4.reuse, R7.reuse, R8.reuse, !PT; VIMNMX3.U16x2 R29, R4, R7, R8, !PT
VIMNMX3 R0, R4.reuse, R7.reuse, R8.reuse, PT; SEL R19, R4.reuse, R7.reuse, P0
VIMNMX3.RELU R4, R4, R7, R8, !PT; SEL R5, RZ, 0x1, !P0; SEL R7, RZ, 0x1, P1; STG.E desc[UR4][R2.64+0x4], R11
STG.E desc[UR4][R2.64+0x8], R13; STG.E desc[UR4][R2.64+0xc], R9; STG.E desc[UR4][R2.64+0x10], R15
STG.E desc[UR4][R2.64+0x14], R17; STG.E desc[UR4][R2.64+0x20], R21; STG.E desc[UR4][R2.64+0x28], R23
STG.E desc[UR4][R2.64+0x2c], R25; STG.E desc[UR4][R2.64+0x30], R27; STG.E desc[UR4][R2.64+0x34], R29
STG.E desc[UR4][R2.64+0x38], R0; STG.E desc[UR4][R2.64+0x3c], R4; STG.E desc[UR4][R2.64+0x18], R19
STG.E desc[UR4][R2.64+0x1c], R5; STG.E desc[UR4][R2.64+0x24], R7; EXIT
"""


def test_vimnmx3_and_the_sm90_dpx_min_max_forms():
    body = [t.strip() for line in _DPX_SM90.strip().splitlines() for t in line.split(";")]
    (kernel,) = parse_sass(_listing("sm_90", body, "dpx"))
    rng = np.random.default_rng(24)
    n = 64

    def draw():
        v = rng.integers(-(2**31), 2**31, n)
        v[::3] = rng.integers(-40000, 40000, n)[::3]  # small values: halves of both signs
        return v

    a, b, c = draw(), draw(), draw()
    a[:4], b[:4], c[:4] = [0, -1, 2**31 - 1, -(2**31)], [-(2**31), 1, -1, 5], [-1, 0, 0, 2**31 - 1]
    params = [Param(s, "ptr", array=s) for s in ("a", "b", "c", "out")] + [Param("n", "i32", n)]
    arrays = {"a": a.astype(np.int32), "b": b.astype(np.int32), "c": c.astype(np.int32)}
    arrays["out"] = np.zeros(16 * n, np.int32)
    got = launch(kernel, params, arrays, 1, 64).arrays["out"].reshape(n, 16).astype(np.int64)

    u = lambda v: v % 2**32  # noqa: E731
    s = lambda v: np.where(u(v) >= 2**31, u(v) - 2**32, u(v))  # noqa: E731
    relu = lambda v: np.maximum(v, 0)  # noqa: E731

    def halves(f, signed, *vs):  # f on the low and the high 16-bit halves, packed again
        parts = []
        for k in (0, 1):
            hs = [(u(v) >> (16 * k)) & 0xFFFF for v in vs]
            hs = [np.where(h >= 2**15, h - 2**16, h) if signed else h for h in hs]
            parts.append(f(*hs) & 0xFFFF)
        return s(parts[0] | (parts[1] << 16))

    mx, mn = np.maximum, np.minimum
    want = {
        0: mx(mx(a, b), c),
        1: s(mn(mn(u(a), u(b)), u(c))),
        2: relu(mx(a, b)),
        3: relu(mn(mn(a, b), c)),
        4: relu(mx(s(a + b), c)),
        5: s(mn(u(a + b), u(c))),
        6: mx(a, b),
        7: (a >= b).astype(np.int64),
        8: s(mn(u(a), u(b))),
        9: (u(a) <= u(b)).astype(np.int64),
        10: halves(lambda x, y, z: mx(mx(x, y), z), True, a, b, c),
        11: halves(lambda x, y: relu(mn(x, y)), True, a, b),
        12: halves(lambda x, y, z: mx((x + y) & 0xFFFF, z), False, a, b, c),
        13: halves(lambda x, y, z: mx(mx(x, y), z), False, a, b, c),
        14: mn(mn(a, b), c),
        15: relu(mx(mx(a, b), c)),
    }
    for k, w in want.items():
        assert np.array_equal(got[:, k], w), k


def test_vimnmx_relu_with_an_unsigned_type_is_refused():
    (kernel,) = parse_sass(_listing("sm_90", ["VIMNMX3.U32.RELU R5, R4, R7, R8, PT", "EXIT"]))
    with pytest.raises(UnsupportedInstructionError, match="RELU with an unsigned type"):
        decode_kernel(kernel)


# rev: __shared__ float t[64]; t[i] = x[64 * blockIdx.x + i]; __syncthreads(); y[...] = t[63 - i]
_REV_SM80 = [
    "MOV R1, c[0x0][0x28]",
    "S2R R9, SR_TID.X",
    "HFMA2.MMA R5, -RZ, RZ, 0, 2.384185791015625e-07",
    "ULDC.64 UR4, c[0x0][0x118]",
    "S2R R4, SR_CTAID.X",
    "LEA R4, R4, R9, 0x6",
    "IMAD.WIDE.U32 R2, R4, R5, c[0x0][0x160]",
    "LDG.E R2, [R2.64]",
    "IADD3 R0, -R9, 0x3f, RZ",
    "IMAD.WIDE.U32 R4, R4, R5, c[0x0][0x168]",
    "STS [R9.X4], R2",
    "BAR.SYNC.DEFER_BLOCKING 0x0",
    "LDS R7, [R0.X4]",
    "STG.E [R4.64], R7",
    "EXIT",
]
_REV_SM90 = [
    "LDC R1, c[0x0][0x28]",
    "S2R R9, SR_TID.X",
    "LDC.64 R2, c[0x0][0x210]",
    "ULDC.64 UR6, c[0x0][0x208]",
    "S2R R0, SR_CTAID.X",
    "LEA R7, R0, R9, 0x6",
    "IMAD.WIDE.U32 R2, R7, 0x4, R2",
    "LDG.E R0, desc[UR6][R2.64]",
    "S2UR UR5, SR_CgaCtaId",
    "UMOV UR4, 0x400",
    "IADD3 R4, -R9, 0x3f, RZ",
    "ULEA UR4, UR5, UR4, 0x18",
    "LEA R9, R9, UR4, 0x2",
    "LEA R6, R4, UR4, 0x2",
    "LDC.64 R4, c[0x0][0x218]",
    "IMAD.WIDE.U32 R2, R7, 0x4, R4",
    "STS [R9], R0",
    "BAR.SYNC.DEFER_BLOCKING 0x0",
    "LDS R11, [R6]",
    "STG.E desc[UR6][R2.64], R11",
    "EXIT",
]
#: what `cuobjdump -sass -res-usage` prints before the code (sm_90's figure includes the 1 KiB window)
_REV_RES = "\nResource usage:\n Common:\n  GLOBAL:0\n Function rev:\n  REG:{r} STACK:0 SHARED:{s} LOCAL:0\n\n"


def _rev(text: str, block: int = 64, n: int = 128) -> np.ndarray:
    (kernel,) = parse_sass(text)
    x = np.arange(n, dtype=np.float32)
    params = [Param("x", "ptr", array="x"), Param("y", "ptr", array="y")]
    return launch(kernel, params, {"x": x, "y": np.zeros(n, np.float32)}, n // block, block).arrays["y"]


@pytest.mark.parametrize(
    ("arch", "body", "regs", "shared"), [("sm_80", _REV_SM80, 12, 256), ("sm_90", _REV_SM90, 14, 1280)]
)
def test_unknown_shared_memory_size_is_one_error_naming_the_fix(arch, body, regs, shared):
    plain = _listing(arch, body, "rev")
    with pytest.raises(ExecutionFault) as info:
        _rev(plain)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"rev ({arch})") and "STS" in msg
    assert "size is unknown" in msg and "cuobjdump -sass -res-usage" in msg and "shared_bytes" in msg
    # with the -res-usage listing the reader takes SHARED: and the kernel runs
    with_res = _REV_RES.format(r=regs, s=shared) + plain
    (kernel,) = parse_sass(with_res)
    assert kernel.shared_mem_bytes == shared and kernel.attrs["shared_source"] == "res-usage"
    rev = np.arange(128, dtype=np.float32).reshape(2, 64)[:, ::-1].reshape(-1)
    assert np.array_equal(_rev(with_res), rev)
    # a 65th thread writes t[64], past the kernel's figure (sm_90's already counts the 1 KiB window once)
    with pytest.raises(ExecutionFault, match=f"outside the CTA's {shared} bytes") as info:
        _rev(with_res, block=65, n=65)
    assert "unknown" not in str(info.value)


# ---- constant operands with a modifier, [Rn.U32+URm] addresses, FMUL's result scale -----------------


@pytest.mark.parametrize(
    ("text", "neg"),
    [
        ("~c[0x0][0x164]", True),
        ("-c[0x0][0x160]", True),
        ("|c[0x0][0x10]|", False),
        ("-|c[0x3][UR4+0x8]|", True),
    ],
)
def test_constant_operands_with_a_modifier_parse_as_constants(text, neg):
    from rfmodel.workload.sass.operands import CONST, parse_operand

    op = parse_operand(text)
    assert op.kind == CONST and op.prefix == "c" and op.neg is neg
    assert [(k, i) for k, i, _s, _g in op.inner] == ([("UR", 4)] if "UR4" in text else [])


#: rd_btree_findk (sm_80, nvcc 13): ``(long)i - height`` with ``height`` a 64-bit parameter, the high
#: word through the inverted constant; then ~c in IADD3 and |c| / -|c| in FADD
_INV_CONST = [
    "S2R R0, SR_TID.X",
    "IMAD.WIDE.U32 R2, R0, 0x8, c[0x0][0x168]",
    "IMAD.WIDE.U32 R4, R0, 0x4, c[0x0][0x170]",
    "IMAD R6, R0, 0x9e3779b9, RZ",
    "IADD3 R8, P0, R6, -c[0x0][0x160], RZ",
    "IMAD.X R9, RZ, RZ, ~c[0x0][0x164], P0",
    "IADD3 R10, ~c[0x0][0x160], R6, RZ",
    "FADD R11, RZ, -|c[0x0][0x178]|",
    "FADD R12, RZ, |c[0x0][0x178]|",
    "STG.E.64 [R2.64], R8",
    "STG.E [R4.64], R10",
    "STG.E [R4.64+0x80], R11",
    "STG.E [R4.64+0x100], R12",
    "EXIT",
]


@pytest.mark.parametrize(
    ("h", "x"), [(5, -2.5), (-3, 1.0), (0x123456789, 0.0), (-(2**40) + 7, -0.0), (0, 3e-39)]
)
def test_inverted_and_absolute_constant_operands(h, x):
    (kernel,) = parse_sass(_listing("sm_80", _INV_CONST, "inv"))
    params = [
        Param("h", "i64", h),
        Param("out", "ptr", array="out"),
        Param("out2", "ptr", array="out2"),
        Param("x", "f32", x),
    ]
    arrays = {"out": np.zeros(32, np.int64), "out2": np.zeros((3, 32), np.uint32)}
    res = launch(kernel, params, arrays, 1, 32).arrays
    i = np.arange(32, dtype=np.int64) * 0x9E3779B9 % 2**32
    assert [int(v) for v in res["out"]] == [int(_s64((int(a) - h) % 2**64)) for a in i]
    assert np.array_equal(res["out2"][0], (i + (~h & M32)) % 2**32)
    zero, mag = np.float32(0.0), np.abs(np.float32(x))
    want = [int((zero + v).view(np.uint32)) for v in (-mag, mag)]  # RZ + -0 is +0
    assert np.all(res["out2"][1] == want[0]) and np.all(res["out2"][2] == want[1])
    assert x == 0.0 or want[0] == want[1] | 0x80000000


def _s64(v: int) -> int:
    return v - 2**64 if v >= 2**63 else v


#: is_aes (sm_75, nvcc 13) reads its table at [R4.U32+UR4+off]: a 32-bit byte offset, zero-extended, added
#: to the 64-bit pointer in UR4:UR5; R5 holds garbage that a 64-bit reading of R4 would take in
_U32_ADDR_SM75 = [
    "ULDC.64 UR4, c[0x0][0x160]",
    "S2R R0, SR_TID.X",
    "IMAD.SHL.U32 R4, R0, 0x4, RZ",
    "MOV R5, 0x7fffff00",
    "LDG.E.SYS R7, [R4.U32+UR4+0x10]",
    "LDG.E.SYS R8, [R4.U32+UR4]",
    "IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x168]",
    "STG.E.SYS [R2], R7",
    "STG.E.SYS [R2+0x80], R8",
    "EXIT",
]


def test_u32_register_in_a_global_address_is_a_zero_extended_offset():
    (kernel,) = parse_sass(_listing("sm_75", _U32_ADDR_SM75, "u32addr"))
    ldg = [ins for ins in kernel.instrs if ins.opcode.startswith("LDG")]
    assert [ins.src for ins in ldg] == [(4,), (4,)] and [ins.usrc for ins in ldg] == [(4, 5), (4, 5)]
    table = np.arange(64, dtype=np.uint32) * 3 + 1
    params = [Param("t", "ptr", array="t"), Param("out", "ptr", array="out")]
    out = launch(kernel, params, {"t": table, "out": np.zeros(64, np.uint32)}, 1, 32).arrays["out"]
    assert np.array_equal(out[:32], table[4:36]) and np.array_equal(out[32:], table[:32])


def test_u32_and_64_on_one_address_register_are_refused():
    (kernel,) = parse_sass(_listing("sm_75", ["LDG.E.SYS R7, [R4.64.U32+UR4]", "EXIT"]))
    with pytest.raises(UnsupportedInstructionError, match=r"both \.64 and \.U32"):
        decode_kernel(kernel)


def _fmul_scaled(a, b, k: int, ftz: bool = False) -> np.ndarray:
    """The reading implemented: the exact product times 2**k, rounded once to float32."""
    a, b = (np.asarray(v, np.uint32).view(np.float32).astype(np.float64) for v in (a, b))
    if ftz:
        a, b = (np.where(np.abs(v) < 2.0**-126, 0.0 * v, v) for v in (a, b))
    r = (a * b * 2.0**k).astype(np.float32)
    if ftz:
        r = np.where(np.abs(r) < np.float32(2.0**-126), np.float32(0.0) * r, r)
    return r.view(np.uint32).astype(np.int64)


def test_fmul_result_scale():
    rng = np.random.default_rng(11)
    area = rng.uniform(5e-4, 3.0, 32).astype(np.float32)  # rd_cfd_flux: -area * 0.2f * 0.5f
    a = rng.uniform(-4.0, 4.0, 32).astype(np.float32).view(np.uint32).astype(np.int64)
    b = rng.uniform(-4.0, 4.0, 32).astype(np.float32).view(np.uint32).astype(np.int64)
    # lane 0: a subnormal result where rounding once and rounding twice differ (twice: 0x005aa15a)
    # lane 1: a product past FLT_MAX whose half is finite (twice: infinity); lane 2: a subnormal input
    a[:4], b[:4] = [0x1E69F229, 0x7F400000, 0x00000003, 0x3F800000], [0x21C65916, 0x40000000, 0x40000000, 0]
    body = [
        "FMUL.D2 R10, R2, -0.20000000298023223877",  # rd_cfd_flux, sm_80
        "FMUL.D2 R11, R3, R4",
        "FMUL.M4 R12, R3, R4",
        "FMUL.FTZ.D8 R13, R3, R4",
    ]
    out = _run(body, [area.view(np.uint32), a, b])
    neg02 = np.float32(-0.2).view(np.uint32)
    assert np.array_equal(out[0], _fmul_scaled(area.view(np.uint32), neg02, -1))
    # in the kernel's range the fold is exact: the C source's two roundings give the same bits
    c_src = (area * np.float32(-0.2)) * np.float32(0.5)
    assert np.array_equal(out[0], c_src.view(np.uint32).astype(np.int64))
    assert np.array_equal(out[1], _fmul_scaled(a, b, -1))
    assert np.array_equal(out[2], _fmul_scaled(a, b, 2))
    assert np.array_equal(out[3], _fmul_scaled(a, b, -3, ftz=True))
    assert out[1, 0] == 0x005AA15B and out[1, 1] == 0x7F400000 and out[1, 2] == 0x00000003
    assert out[2, 1] == 0x7F800000 and out[3, 2] == 0 and out[3, 1] == 0x7E400000


@pytest.mark.parametrize(
    ("ins", "match"),
    [
        ("FFMA.D2 R2, R2, R3, R4", "on FMUL only"),
        ("FADD.M2 R2, R2, R3", "on FMUL only"),
        ("FMUL.D2.M2 R2, R2, R3", "two result scales"),
    ],
)
def test_result_scale_other_than_one_on_fmul_is_refused(ins, match):
    (kernel,) = parse_sass(_listing("sm_80", [ins, "EXIT"]))
    with pytest.raises(UnsupportedInstructionError, match=match):
        decode_kernel(kernel)


def test_parameter_runs_keep_declaration_order_and_refuse_a_pointer_type():
    """``scalars`` and ``pointers`` write the Params a recipe would list one by one, in order; a scalar run of
    type ``ptr`` (or an unknown type) is refused, naming the scalar types."""
    got = [*scalars("i32", n=3, m=4), *pointers("x", "y"), *scalars("f32", a=0.5)]
    assert got == [
        Param("n", "i32", 3),
        Param("m", "i32", 4),
        Param("x", "ptr", array="x"),
        Param("y", "ptr", array="y"),
        Param("a", "f32", 0.5),
    ]
    for bad in ("ptr", "f16"):
        with pytest.raises(ValueError, match="f32"):
            scalars(bad, n=1)
