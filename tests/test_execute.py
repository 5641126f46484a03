"""The functional executor: built-in kernels against numpy references, known answers of
single instructions, divergence, and the errors for what it does not implement."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.errors import ParseError, RfmodelError
from rfmodel.workload.execute.builtin import BUILTIN_RECIPES, KNOWN_GAPS, builtin_recipe
from rfmodel.workload.execute.decode import decode_kernel
from rfmodel.workload.execute.errors import ExecutionError, ExecutionFault, UnsupportedInstructionError
from rfmodel.workload.execute.launch import Param, launch
from rfmodel.workload.execute.recipe import check_outputs, parse_recipe, run_recipe
from rfmodel.workload.sass import parse_sass
from rfmodel.workload.suite import ARCHS, builtin_sass_path, load_kernel

M32 = 0xFFFFFFFF


# ---- built-in kernels -----------------------------------------------------------------------------


_RUNS = [(n, a) for n in sorted(BUILTIN_RECIPES) for a in ARCHS if (n, a) not in KNOWN_GAPS]


@pytest.mark.parametrize(("name", "arch"), _RUNS)
def test_builtin_kernel_matches_reference(name, arch):
    recipe = builtin_recipe(name)
    res, ins = run_recipe(load_kernel(name, arch), recipe)
    check_outputs(recipe, res, ins)  # raises on a mismatch
    assert res.warp_instructions > 0


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
    recipe = builtin_recipe(name, scale=4.0)
    res, ins = run_recipe(load_kernel(name, arch), recipe)
    check_outputs(recipe, res, ins)


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
    (kernel,) = parse_sass(_listing("sm_80", ["FMUL.D2 R2, R2, R3", "EXIT"]))
    with pytest.raises(UnsupportedInstructionError, match=r"FMUL.D2.*0x0000.*modifier \.D2"):
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
[arrays.x]
dtype = "float32"
shape = [3000]
init = "normal"
[arrays.y]
dtype = "float32"
shape = [3000]
init = "uniform"
low = -2.0
high = 2.0
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
[arrays.a]
dtype = "uint32"
shape = [300]
init = "randint"
low = 0
high = 4294967296
[arrays.out]
dtype = "float32"
shape = [300]
[arrays.bits]
dtype = "uint32"
shape = [300]
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
    "ins",
    ["FADD R2, R2, c[0x0][0x160].H1", "LDS R2, [R3+0x10].T", "IADD3 R2, R3.H1, RZ, RZ", "MOV R2, 1.5"],
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
    body = ["DSETP.MAX.AND P0, P1, R2, R4, PT", "SEL R10, RZ, 0x1, !P0", "SEL R11, RZ, 0x1, !P1",
            "DSETP.GT.AND P2, PT, R2, R4, PT", "SEL R12, RZ, 0x1, !P2"]  # fmt: skip
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
    body = ["VIADDMNMX R10, R2, R3, R4, PT", "VIADDMNMX R11, R2, R3, R4, !PT",
            "VIADDMNMX.U32 R12, R2, R3, R4, PT"]  # fmt: skip
    out = _run(body, [_A, _B, _A ^ 0x5A5A, _B])  # an sm_90 opcode; the prologue's offsets are sm_80's
    s = (_A + _B) % 2**32
    signed = lambda v: np.where(v >= 2**31, v - 2**32, v)  # noqa: E731
    c = _A ^ 0x5A5A
    assert np.array_equal(out[0], np.where(signed(s) < signed(c), s, c))
    assert np.array_equal(out[1], np.where(signed(s) > signed(c), s, c))
    assert np.array_equal(out[2], np.minimum(s, c))
