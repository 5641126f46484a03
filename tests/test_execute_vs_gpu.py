"""The executor-against-GPU check (studies/execute_vs_gpu.py) without a GPU: prepare's files, compare's
arithmetic on outputs faked from the executor's own, and the launcher's handling of its manifest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rfmodel.errors import RfmodelError
from rfmodel.workload.build_sass import find_tools
from rfmodel.workload.execute.builtin import builtin_recipe
from rfmodel.workload.execute.recipe import run_recipe
from rfmodel.workload.suite import load_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "studies"))
gpu_check = pytest.importorskip("execute_vs_gpu")

ARCH = "sm_90"


@pytest.fixture(scope="module")
def tools():
    try:
        return find_tools(("nvcc", "cuobjdump", "nvdisasm"))
    except RfmodelError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def prepared(tools, tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_check")
    meta = gpu_check.prepare(
        out, ARCH, ["saxpy", "conv2d_const", "bytecode_vm"], 1.0, build_launcher=False, say=lambda _m: None
    )
    return out, meta


def _blocks(out: Path) -> dict[str, list[list[str]]]:
    lines = (out / "manifest.txt").read_text().splitlines()
    assert lines[0] == gpu_check.MAGIC and lines[1] == f"arch {ARCH}"
    blocks, cur = {}, None
    for line in lines[2:]:
        t = line.split()
        if not t:
            continue
        if t[0] == "kernel":
            cur = blocks[t[1]] = []
        elif t[0] != "end":
            cur.append(t)
    return blocks


def test_prepare_writes_inputs_params_and_constants(prepared):
    out, meta = prepared
    assert meta["skipped"] == {}
    blocks = _blocks(out)
    assert set(blocks) == {"saxpy", "conv2d_const", "bytecode_vm"}  # its jump table is in the cubin

    sax = blocks["saxpy"]
    recipe = builtin_recipe("saxpy")
    ins = recipe.inputs()
    n = recipe.params[0].value
    assert ["grid", str(recipe.grid[0]), "1", "1"] in sax and ["block", "256", "1", "1"] in sax
    params = [t[1:] for t in sax if t[0] == "param"]
    assert params == [
        ["n", "4", np.int32(n).tobytes().hex()],
        ["a", "4", np.float32(1.75).tobytes().hex()],
        ["x", "ptr", "x"],
        ["y", "ptr", "y"],
    ]
    for t in (t for t in sax if t[0] == "array"):
        data = (out / t[3]).read_bytes()
        assert int(t[2]) == len(data) == ins[t[1]].nbytes
        assert data == ins[t[1]].tobytes()
    assert ["output", "y", "saxpy/out_y.bin"] in sax
    cubin = out / "saxpy" / "saxpy.cubin"
    assert gpu_check.kernel_params(cubin, "saxpy") == [(0, 4), (4, 4), (8, 8), (16, 8)]
    assert gpu_check.param_layout(recipe) == [(0, 4), (4, 4), (8, 8), (16, 8)]

    conv = blocks["conv2d_const"]
    cins = builtin_recipe("conv2d_const").inputs()
    (const,) = [t for t in conv if t[0] == "const"]
    assert const[1] == "c_filter" and const[2] == "196"
    assert (out / const[3]).read_bytes() == cins["filter"].tobytes()
    assert not [t for t in conv if t[0] == "array" and t[1] == "filter"]  # a constant, not global memory
    run = (out / "run.sh").read_text()
    assert '"$here/launch_cubin" "$here"' in run and "gpu.log" in run


def _fake_gpu(out: Path, name: str, arrays: dict[str, np.ndarray]) -> None:
    for o, a in arrays.items():
        (out / name / f"out_{o}.bin").write_bytes(np.ascontiguousarray(a).tobytes())
    (out / name / "status.txt").write_text("ok 0.0100\n")


def test_compare_counts_differences_against_faked_gpu_outputs(prepared):
    out, meta = prepared
    recipe = builtin_recipe("saxpy")
    res, _ = run_recipe(load_kernel("saxpy", ARCH), recipe)
    y = res.arrays["y"].copy()
    _fake_gpu(out, "saxpy", {"y": y})
    (out / "conv2d_const" / "status.txt").write_text(
        "error launch: cudaErrorInvalidValue (invalid argument)\n"
    )

    block, rows = gpu_check.compare(out, say=lambda _m: None)
    by = {(r.kernel, r.output): r for r in rows}
    r = by["saxpy", "y"]
    assert (r.differing, r.max_ulp, r.reference, r.note) == (0, 0.0, "exact", "")
    assert "cudaErrorInvalidValue" in by["conv2d_const", "out"].note
    assert "| `saxpy` | y | float32 | " in block and "bytecode_vm" in block

    y[17] = np.nextafter(y[17], np.float32(np.inf))  # one element one ULP off
    _fake_gpu(out, "saxpy", {"y": y})
    _, rows = gpu_check.compare(out, say=lambda _m: None)
    r = {(r.kernel, r.output): r for r in rows}["saxpy", "y"]
    assert (r.differing, r.max_ulp, r.reference) == (1, 1.0, "1 outside tolerance")

    (out / "saxpy" / "status.txt").unlink()
    _, rows = gpu_check.compare(out, say=lambda _m: None)
    assert {(r.kernel, r.output): r for r in rows}["saxpy", "y"].note == "not run on the GPU"


def test_integer_and_multiset_comparisons():
    a = np.array([3, 1, 2, 7], np.int32)
    b = np.array([1, 2, 3, 7], np.int32)
    assert gpu_check.compare_arrays(a, b, unordered=False) == (3, None)
    assert gpu_check.compare_arrays(a, b, unordered=True) == (0, None)


def test_ulp_distance():
    f = np.float32
    x = np.array([1.0, 0.0, -0.0, f(2.0**-149), 1.0, np.nan, np.nan, -1.0], f)
    y = np.array([1.0, -0.0, f(2.0**-149), f(-(2.0**-149)), np.nextafter(f(1), f(3)), np.nan, 1.0, -1.0], f)
    assert gpu_check.ulp_distance(x, y).tolist() == [0, 0, 1, 2, 1, 0, np.inf, 0]
    d = np.array([1.0, -2.5], np.float64)
    assert gpu_check.ulp_distance(d, np.nextafter(d, np.inf)).tolist() == [1, 1]


def test_prepare_skips_a_known_gap(tools, tmp_path, monkeypatch):
    import rfmodel.workload.execute.builtin as bi

    monkeypatch.setitem(bi.KNOWN_GAPS, ("saxpy", ARCH), "a made-up gap")
    meta = gpu_check.prepare(tmp_path, ARCH, ["saxpy"], 1.0, build_launcher=False, say=lambda _m: None)
    assert meta["skipped"] == {"saxpy": f"the executor does not run it on {ARCH}: a made-up gap"}
    assert "kernel saxpy" not in (tmp_path / "manifest.txt").read_text()


def test_docs_markers_are_replaced_and_required(tmp_path):
    doc = tmp_path / "execute.md"
    doc.write_text(f"# t\n\n{gpu_check.BEGIN}\nNo run yet.\n{gpu_check.END}\n\nafter\n")
    gpu_check.write_docs(doc, "| a |\n")
    assert doc.read_text() == f"# t\n\n{gpu_check.BEGIN}\n| a |\n{gpu_check.END}\n\nafter\n"
    (tmp_path / "plain.md").write_text("no markers\n")
    with pytest.raises(RfmodelError, match="markers"):
        gpu_check.write_docs(tmp_path / "plain.md", "x")


@pytest.mark.parametrize(
    # the default run builds the launcher unoptimized (about 6 CPU-s of nvcc instead of 9); -m slow builds it
    # with the shipped flags
    "opt",
    ["-O0", pytest.param("-O2", marks=pytest.mark.slow)],
)
def test_launcher_reads_the_manifest_and_stops_without_a_device(prepared, tools, tmp_path, monkeypatch, opt):
    out, _ = prepared
    assert "-O2" in gpu_check.LAUNCHER_FLAGS
    flags = tuple(opt if f == "-O2" else f for f in gpu_check.LAUNCHER_FLAGS)
    monkeypatch.setattr(gpu_check, "LAUNCHER_FLAGS", flags)
    binary = gpu_check.build_launcher_binary(tmp_path, tools["nvcc"])
    proc = subprocess.run([str(binary), str(out)], capture_output=True, text=True, timeout=120)
    if proc.returncode == 0:
        pytest.skip("a CUDA device is present: the launcher ran the kernels")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "manifest: 3 kernels for sm_90" in proc.stdout
    assert "no CUDA device" in proc.stdout and "no kernel was run" in proc.stdout

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.txt").write_text(f"{gpu_check.MAGIC}\nkernel k\ngrid 1 1\n")
    proc = subprocess.run([str(binary), str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "manifest.txt:3: 'grid' takes 3 fields, got 2" in proc.stderr
    proc = subprocess.run(
        [str(binary), str(out), "--only", "nope"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "--only nope" in proc.stderr
