"""A user's kernel as a cubin (``nvcc -cubin``): ``FILE.cubin:KERNEL`` wherever ``FILE.sass:KERNEL`` is taken
(rfmodel.workload.cubin).  A tiny kernel is compiled on the spot (the tests that need it are skipped without
nvcc and cuobjdump) and read both ways: as the cubin and as its ``cuobjdump -sass`` listing."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rfmodel.cli import main
from rfmodel.errors import RfmodelError
from rfmodel.trace import COLUMNS
from rfmodel.workload import cubin
from rfmodel.workload.suite import load_kernel, load_workload, with_recipe

SOURCE = r"""
__constant__ float coef[4] = {1.0f, 2.0f, 3.0f, 4.0f};

extern "C" __global__ void axpb(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = a * x[i] + y[i];
    y[i] = v > 0.0f ? v : 0.5f * v;
  }
}

extern "C" __global__ void stage(int n, const float *x, float *y) {
  __shared__ float t[64];
  int i = blockIdx.x * 64 + threadIdx.x;
  t[threadIdx.x] = x[i];
  __syncthreads();
  if (i < n) y[i] = t[63 - threadIdx.x] * coef[threadIdx.x & 3];
}

template <typename T> __global__ void bump(T *p) { p[threadIdx.x] += T(1); }
template __global__ void bump<int>(int *);
"""

DATA = Path(__file__).resolve().parent / "data"
RECIPE = (DATA / "axpb.toml").read_text()
STAGE_RECIPE = (DATA / "stage.toml").read_text()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``tiny.cubin`` (sm_80) and its listings ``tiny.sass`` (``cuobjdump -sass``) and ``tiny_res.sass``
    (``cuobjdump -sass -res-usage``), with the recipes ``axpb.toml`` and ``stage.toml``."""
    from rfmodel.workload.build_sass import find_tools

    try:
        tools = find_tools(("nvcc", "cuobjdump"))
    except RfmodelError as e:
        pytest.skip(f"needs nvcc and cuobjdump: {e}")
    d = tmp_path_factory.mktemp("cubin")
    (d / "tiny.cu").write_text(SOURCE)
    subprocess.run(
        [str(tools["nvcc"]), "-cubin", "-arch=sm_80", "-o", "tiny.cubin", "tiny.cu"], cwd=d, check=True
    )
    for name, args in (("tiny.sass", ["-sass"]), ("tiny_res.sass", ["-sass", "-res-usage"])):
        out = subprocess.run(
            [str(tools["cuobjdump"]), *args, "tiny.cubin"], cwd=d, check=True, capture_output=True, text=True
        ).stdout
        (d / name).write_text(out)
    (d / "axpb.toml").write_text(RECIPE)
    (d / "stage.toml").write_text(STAGE_RECIPE)
    return d


def run(argv, capsys):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_error_line(rc, err, *needles):
    assert rc == 2, err
    assert err.startswith("rfmodel: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)


def elf_header(flags: int, osabi: int = 0x41, abi_version: int = 8, machine: int = 190) -> bytes:
    """The 64 bytes of a 64-bit little-endian ELF header with these fields (no sections)."""
    h = bytearray(64)
    h[:4] = b"\x7fELF"
    h[4], h[5], h[6], h[7], h[8] = 2, 1, 1, osabi, abi_version
    struct.pack_into("<HHI", h, 16, 2, machine, 1)
    struct.pack_into("<I", h, 0x30, flags)
    return bytes(h)


# ---------------------------------------------------------------------------- the same kernel both ways


def test_execute_from_the_cubin_is_the_listings_run(built, tmp_path, capsys):
    got = {}
    for src in ("tiny.cubin", "tiny.sass"):
        out = tmp_path / src
        rc, text, err = run(
            [
                "workload",
                "execute",
                built / f"{src}:axpb",
                "--recipe",
                built / "axpb.toml",
                "--json",
                "--save-outputs",
                out,
            ],
            capsys,
        )
        assert rc == 0, err
        res = json.loads(text)
        res.pop("seconds")
        got[src] = res, {p.name: np.load(p) for p in out.iterdir()}
    (a, arrays_a), (b, arrays_b) = got["tiny.cubin"], got["tiny.sass"]
    assert a == b and a["kernel"] == "axpb" and a["arch"] == "sm_80" and a["warp_instructions"] > 0
    assert sorted(arrays_a) == sorted(arrays_b) == ["in_x.npy", "in_y.npy", "x.npy", "y.npy"]
    for name in arrays_a:
        assert np.array_equal(arrays_a[name], arrays_b[name]), name


def test_the_executed_trace_from_the_cubin_is_the_listings(built):
    recipe = built / "axpb.toml"
    wa = load_workload(with_recipe(f"{built / 'tiny.cubin'}:axpb", recipe), num_sms=2)
    wb = load_workload(with_recipe(f"{built / 'tiny.sass'}:axpb", recipe), num_sms=2)
    assert wa.attrs["trace_source"] == wb.attrs["trace_source"] == "execute"
    ta, tb = wa.trace, wb.trace
    assert ta.n_instrs > 0 and ta.ctas == tb.ctas == 2
    for col in (*COLUMNS, "warp_ptr", "warp_cta", "mem_ptr", "mem_line"):
        assert np.array_equal(getattr(ta, col), getattr(tb, col)), col
    # the registers are -res-usage's: the -res-usage listing's figure, not one worked out from the code
    res = load_kernel(f"{built / 'tiny_res.sass'}:axpb")
    assert wa.kernel.regs_per_thread == res.regs_per_thread and wa.kernel.attrs["regs_source"] == "res-usage"


def test_evaluate_analytic_gives_the_listings_ipc(built, capsys):
    ipc = {}
    for src in ("tiny.cubin", "tiny.sass"):
        rc, text, err = run(
            [
                "evaluate",
                "--workload",
                built / f"{src}:axpb",
                "--recipe",
                built / "axpb.toml",
                "--method",
                "analytic",
                "--json",
            ],
            capsys,
        )
        assert rc == 0, err
        rows = json.loads(text)["rows"]
        ipc[src] = [r["ipc"] for r in rows]
    assert ipc["tiny.cubin"] == ipc["tiny.sass"] and ipc["tiny.cubin"][0] > 0


def test_kernel_choices_are_the_listings(built):
    names = [k.name for k in cubin.read_cubin(built / "tiny.cubin")]
    assert sorted(names) == ["_Z4bumpIiEvPT_", "axpb", "stage"]
    for choice in ("_Z4bumpIiEvPT_", "#" + str(names.index("_Z4bumpIiEvPT_")), "_Z4bu"):
        assert load_kernel(f"{built / 'tiny.cubin'}:{choice}").name == "_Z4bumpIiEvPT_"
    assert load_kernel(f"{built / 'tiny.cubin'}:sta").name == "stage"
    first = load_kernel(str(built / "tiny.cubin"))  # no choice: the first, as for a listing
    assert first.name == names[0] == load_kernel(str(built / "tiny.sass")).name


def test_the_cubin_gives_shared_memory_and_constant_banks(built, tmp_path, capsys):
    """What the plain listing lacks: the static shared memory (-res-usage) and the __constant__ data's
    initial values (the ELF's .nv.constant3)."""
    k = load_kernel(f"{built / 'tiny.cubin'}:stage")
    assert k.arch == "sm_80" and k.shared_mem_bytes == 256 and k.attrs["shared_source"] == "res-usage"
    bank3 = k.attrs["constant_banks"][3]
    assert np.frombuffer(bank3.tobytes(), np.float32).tolist() == [1.0, 2.0, 3.0, 4.0]
    out = tmp_path / "out"
    rc, _, err = run(
        [
            "workload",
            "execute",
            built / "tiny.cubin:stage",
            "--recipe",
            built / "stage.toml",
            "--save-outputs",
            out,
        ],
        capsys,
    )
    assert rc == 0, err
    x, y = np.load(out / "in_x.npy"), np.load(out / "y.npy")
    want = np.concatenate([x[:64][::-1], x[64:][::-1]]) * np.tile(np.float32([1, 2, 3, 4]), 32)
    assert np.array_equal(y, want)
    rc, _, err = run(
        ["workload", "execute", built / "tiny.sass:stage", "--recipe", built / "stage.toml"], capsys
    )
    one_error_line(rc, err, "shared")  # the plain listing states no shared memory


def test_workload_info_lists_a_cubins_kernels(built, capsys):
    rc, text, err = run(["workload", "info", built / "tiny.cubin", "--json"], capsys)
    assert rc == 0, err
    info = json.loads(text)
    assert [r["name"] for r in info["kernels"]] == [k.name for k in cubin.read_cubin(built / "tiny.cubin")]
    assert info["source"] == str(built / "tiny.cubin") and info["arch"] == "sm_80"


# ---------------------------------------------------------------------------- the disk cache


def test_a_second_load_uses_the_cached_disassembly(built, tmp_path, monkeypatch):
    from rfmodel import cache

    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_CHANGED", set())  # package files edited meanwhile would turn the cache off
    calls = []
    real = cubin._run_cuobjdump

    def counted(data, where):
        calls.append(where)
        return real(data, where)

    monkeypatch.setattr(cubin, "_run_cuobjdump", counted)
    first = load_kernel(f"{built / 'tiny.cubin'}:axpb")
    assert len(calls) == 1 and len(list((tmp_path / "cache" / "cubin-sass").glob("*.json"))) == 1

    def refuse(data, where):
        raise AssertionError("cuobjdump ran again")

    monkeypatch.setattr(cubin, "_run_cuobjdump", refuse)
    copy = tmp_path / "renamed.cubin"  # the key is the bytes, not the name
    shutil.copy(built / "tiny.cubin", copy)
    again = load_kernel(f"{copy}:axpb")
    assert [i.opcode for i in again.instrs] == [i.opcode for i in first.instrs]
    assert again.regs_per_thread == first.regs_per_thread
    # a damaged entry is disassembled again, never an error, and a changed byte of the listing is never read
    monkeypatch.setattr(cubin, "_run_cuobjdump", counted)
    for f in (tmp_path / "cache" / "cubin-sass").glob("*.json"):
        f.write_text("{not json")
    assert load_kernel(f"{copy}:axpb").n_instrs == first.n_instrs and len(calls) == 2
    for f in (tmp_path / "cache" / "cubin-sass").glob("*.json"):
        doc = json.loads(f.read_text())
        doc["listing"] = doc["listing"].replace("EXIT", "NOP ", 1)
        f.write_text(json.dumps(doc))
    assert [i.opcode for i in load_kernel(f"{copy}:axpb").instrs] == [i.opcode for i in first.instrs]
    assert len(calls) == 3


# ---------------------------------------------------------------------------- errors: one line, exit 2


def test_a_kernel_not_in_the_cubin_lists_those_it_has(built, capsys):
    rc, _, err = run(
        ["workload", "execute", built / "tiny.cubin:nope", "--recipe", built / "axpb.toml"], capsys
    )
    one_error_line(rc, err, "unknown kernel", "'nope'", "3 kernels", "axpb", "stage", "bump<int>(int*)")


def test_files_that_are_not_cubins(tmp_path, capsys):
    cases = {
        "text.cubin": (b"not a cubin\n", "does not start with the ELF magic"),
        "host.cubin": (elf_header(0, machine=62), "machine 62, not a CUDA cubin"),
        "k.fatbin": (b"\x50\xed\x55\xba" + bytes(60), "a fatbinary, not a cubin"),
        "new.cubin": (elf_header(0x6006402), "a cubin for sm_100; the SASS reader reads"),
        "short.cubin": (b"\x7fELF\x02\x01", "not a complete 64-bit"),
    }
    for name, (data, msg) in cases.items():
        (tmp_path / name).write_bytes(data)
        rc, _, err = run(["workload", "info", tmp_path / name], capsys)
        one_error_line(rc, err, name, msg)
    ref = f"{tmp_path / 'text.cubin'}:k"
    rc, _, err = run(["evaluate", "--workload", ref, "--method", "analytic"], capsys)
    one_error_line(rc, err, "does not start with the ELF magic")


def test_cuobjdump_missing_or_failing_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RFMODEL_CACHE_DIR", "off")
    (tmp_path / "k.cubin").write_bytes(elf_header(0x6005004))  # sm_80, but no sections at all
    monkeypatch.setattr(cubin, "cuobjdump_path", lambda: None)
    rc, _, err = run(["workload", "info", tmp_path / "k.cubin:k"], capsys)
    one_error_line(rc, err, "cuobjdump -sass -res-usage", "cuobjdump was not found", "pip install")
    fake = tmp_path / "cuobjdump"
    fake.write_text(
        "#!/bin/sh\necho 'cuobjdump fatal   : Could not open input file' >&2\necho more >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(cubin, "cuobjdump_path", lambda: fake)
    (tmp_path / "r.toml").write_text(RECIPE)
    rc, _, err = run(["workload", "execute", tmp_path / "k.cubin:k", "--recipe", tmp_path / "r.toml"], capsys)
    one_error_line(rc, err, "k.cubin", f"({fake}) failed with status 1", "Could not open input file | more")


def test_the_architecture_comes_from_the_elf_header():
    assert cubin.cubin_arch(elf_header(0x6005004)) == "sm_80"  # CUDA 12.8+ (ELF ABI version 8)
    assert cubin.cubin_arch(elf_header(0x6005A04)) == "sm_90"  # sm_90 and sm_90a
    assert cubin.cubin_arch(elf_header(0x500550, osabi=0x33, abi_version=7)) == "sm_80"  # earlier CUDA
    assert cubin.cubin_arch(elf_header(0x4B0B4B, osabi=0x33, abi_version=7)) == "sm_75"
    assert cubin.cubin_arch(elf_header(0)) is None  # not stated: the listing's own word is taken


def test_the_temporary_folder_is_removed(built, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setenv("RFMODEL_CACHE_DIR", "off")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cubin.read_cubin(built / "tiny.cubin")
    assert list(tmp_path.iterdir()) == []


def test_the_constant_banks_of_a_cubin(built):
    data = (built / "tiny.cubin").read_bytes()
    banks, skipped = cubin.cubin_banks(data, "axpb")
    assert skipped == [] and sorted(banks) == [3]  # the module's __constant__ data, for every kernel
    assert Path(built / "tiny.cubin").suffix == ".cubin" and cubin.is_cubin(built / "tiny.cubin")
    assert not cubin.is_cubin(built / "tiny.sass")
