"""The built-in CUDA workload suite: shipped SASS, manifest, and the build-sass command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rfmodel.errors import ParseError, RfmodelError, UnknownNameError
from rfmodel.workload import build_sass as bs

KERNELS = bs.KERNELS_DIR
MANIFEST = bs.load_manifest()
NAMES = sorted(MANIFEST["kernels"])
GPR_RE = re.compile(r"\bR(\d+)")


def test_manifest_top_level():
    assert MANIFEST["version"] == 1
    for tool in ("nvcc", "cuobjdump", "nvdisasm"):
        assert isinstance(MANIFEST[tool], str) and MANIFEST[tool]
    assert len(NAMES) >= 16


def test_manifest_matches_sources():
    sources = {k.name: k for k in bs.list_kernels()}
    assert set(sources) == set(NAMES)
    for name, entry in MANIFEST["kernels"].items():
        k = sources[name]
        assert entry["source"] == f"src/{name}.cu"
        assert (KERNELS / entry["source"]).is_file()
        assert entry["symbol"] == name
        assert entry["description"] == k.description
        assert entry["category"] == list(k.category)
        assert set(entry["category"]) <= bs.CATEGORIES
        assert entry["threads_per_cta"] == k.threads_per_cta > 0
        assert entry["ctas"] == k.ctas > 0
        assert entry["loop_trip_counts"] == {"default": k.trip}
        src = (KERNELS / entry["source"]).read_text()
        assert re.search(rf'extern\s+"C"\s+__global__[^;{{]*\b{name}\s*\(', src), name


@pytest.mark.parametrize("name", NAMES)
def test_shipped_sass_files(name):
    entry = MANIFEST["kernels"][name]
    assert set(entry["resources"]) == set(bs.DEFAULT_ARCHS)
    for arch in bs.DEFAULT_ARCHS:
        res = entry["resources"][arch]
        assert set(res) == {"regs", "shared", "stack"}
        assert all(isinstance(v, int) and not isinstance(v, bool) for v in res.values())
        assert res["regs"] > 0 and res["shared"] >= 0 and res["stack"] >= 0
        texts = {}
        for kind in bs.SASS_KINDS:
            p = bs.sass_path(KERNELS, arch, name, kind)
            assert p.is_file(), p
            texts[kind] = p.read_text()
            assert texts[kind].strip(), p
        assert f"Function : {name}\n" in texts["cuobjdump"]
        assert f"code for {arch}" in texts["cuobjdump"]
        assert f".text.{name}" in texts["nvdisasm"]
        assert f".target\t{arch}" in texts["nvdisasm"]
        assert "/* 0x" in texts["nvdisasm"]  # -hex encoding words
        assert "GPR" in texts["plr"] and "// |" in texts["plr"]  # liveness columns
        highest = max(int(m) for m in GPR_RE.findall(texts["cuobjdump"]))
        # ptxas reports two registers beyond the highest one the code touches.
        assert res["regs"] >= highest + 2, (name, arch, res["regs"], highest)


def test_no_unlisted_sass_files():
    expected = {
        bs.sass_path(KERNELS, a, n, k) for n in NAMES for a in bs.DEFAULT_ARCHS for k in bs.SASS_KINDS
    }
    assert set((KERNELS / "sass").glob("*/*.sass")) == expected


def test_suite_features_present():
    feats = bs.sass_features()
    # The switch kernel compiles to a jump table; the slow-path kernels call subroutines.
    assert all(feats["bytecode_vm"][a]["BRX"] > 0 for a in bs.DEFAULT_ARCHS)
    assert all(feats["black_scholes"][a]["CALL"] > 0 for a in bs.DEFAULT_ARCHS)
    regs = {n: MANIFEST["kernels"][n]["resources"]["sm_80"]["regs"] for n in NAMES}
    assert regs["gemm_micro8x8"] >= 64


def test_parse_res_usage():
    text = (
        "\nResource usage:\n Common:\n  GLOBAL:0 CONSTANT[3]:196\n Function conv2d_const:\n"
        "  REG:32 STACK:8 SHARED:2024 LOCAL:0 CONSTANT[0]:376 TEXTURE:0 SURFACE:0 SAMPLER:0\n"
    )
    assert bs.parse_res_usage(text) == {"conv2d_const": {"regs": 32, "shared": 2024, "stack": 8}}


def test_parse_header_errors(tmp_path):
    good = (
        "// rfmodel: description = d\n// rfmodel: threads_per_cta = 64\n// rfmodel: ctas = 2\n"
        "// rfmodel: trip = 3\n// rfmodel: category = fp-heavy, irregular\n\n"
        'extern "C" __global__ void k() {}\n'
    )
    p = tmp_path / "k.cu"
    p.write_text(good)
    k = bs.parse_header(p)
    got = (k.name, k.threads_per_cta, k.ctas, k.trip, k.category)
    assert got == ("k", 64, 2, 3, ("fp-heavy", "irregular"))
    for bad in (
        good.replace("fp-heavy", "fp-happy"),
        good.replace("ctas = 2", "ctas = two"),
        good.replace("ctas = 2", "ctas = 0"),
        good.replace("// rfmodel: trip = 3\n", ""),
        good.replace("// rfmodel: trip = 3\n", "// rfmodel: trips = 3\n"),
    ):
        p.write_text(bad)
        with pytest.raises(ParseError):
            bs.parse_header(p)


def test_find_tools_missing(monkeypatch):
    monkeypatch.setattr(bs, "_nvidia_package_dirs", lambda: [])
    monkeypatch.setattr(bs.shutil, "which", lambda _name: None)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    with pytest.raises(RfmodelError) as exc:
        bs.find_tools()
    msg = str(exc.value)
    assert "nvcc" in msg and "cuobjdump" in msg and "nvdisasm" in msg
    assert "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm" in msg


def test_unknown_kernel_name(tmp_path):
    with pytest.raises(UnknownNameError):
        bs.build_sass(out_dir=tmp_path, archs=("sm_80",), names=["saxpi"])


def test_manifest_table_markdown():
    table = bs.manifest_table_markdown()
    lines = [ln for ln in table.splitlines() if ln.startswith("| `")]
    builtin = [n for n in NAMES if MANIFEST["kernels"][n].get("suite", "builtin") == "builtin"]
    assert [ln.split("`")[1] for ln in lines] == builtin  # the papers' benchmarks have their own table
    row = next(ln for ln in lines if ln.startswith("| `saxpy`"))
    regs = MANIFEST["kernels"]["saxpy"]["resources"]
    assert f"| {regs['sm_75']['regs']} | {regs['sm_80']['regs']} | {regs['sm_90']['regs']} |" in row


def test_docs_table_up_to_date():
    doc = Path(__file__).resolve().parents[1] / "docs" / "workloads-builtin.md"
    if not doc.exists():
        pytest.skip("docs/workloads-builtin.md is not in this tree")
    assert bs.manifest_table_markdown() in doc.read_text()


def test_build_one_kernel(tmp_path):
    try:
        bs.find_tools()
    except RfmodelError as exc:
        pytest.skip(str(exc))
    lines: list[str] = []
    written = bs.build_sass(out_dir=tmp_path, archs=("sm_80",), names=["saxpy"], progress=lines.append)
    assert lines
    files = {p.name for p in written}
    expected = {"saxpy.cuobjdump.sass", "saxpy.nvdisasm.sass", "saxpy.plr.sass", "manifest.json", "saxpy.cu"}
    assert expected <= files
    out = tmp_path / "sass" / "sm_80"
    cuobjdump = (out / "saxpy.cuobjdump.sass").read_text()
    nvdisasm = (out / "saxpy.nvdisasm.sass").read_text()
    assert "Function : saxpy" in cuobjdump
    assert ".text.saxpy" in nvdisasm
    assert "GPR" in (out / "saxpy.plr.sass").read_text()
    assert (tmp_path / "src" / "saxpy.cu").is_file()
    assert not list(tmp_path.rglob("*.tmp"))
    # the freshly compiled kernel parses, and both disassemblers give the same program
    from rfmodel.workload.sass import parse_sass

    (k1,) = parse_sass(cuobjdump, "saxpy.cuobjdump.sass")
    (k2,) = parse_sass(nvdisasm, "saxpy.nvdisasm.sass")
    assert k1.name == k2.name == "saxpy" and k1.n_instrs == k2.n_instrs > 10
    assert [(i.opcode, i.dst, i.src) for i in k1.instrs] == [(i.opcode, i.dst, i.src) for i in k2.instrs]
    built = json.loads((tmp_path / "manifest.json").read_text())
    assert k2.regs_per_thread == built["kernels"]["saxpy"]["resources"]["sm_80"]["regs"]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert list(manifest["kernels"]) == ["saxpy"]
    res = manifest["kernels"]["saxpy"]["resources"]
    assert list(res) == ["sm_80"] and res["sm_80"]["regs"] > 0
    if all(manifest[t] == MANIFEST[t] for t in ("nvcc", "cuobjdump", "nvdisasm")):
        # Same tools as the shipped files: the build is reproducible.
        assert res["sm_80"] == MANIFEST["kernels"]["saxpy"]["resources"]["sm_80"]
        assert cuobjdump == bs.sass_path(KERNELS, "sm_80", "saxpy", "cuobjdump").read_text()


def test_build_kernel_with_shared_header(tmp_path):
    """A kernel that includes a shared ``.cuh`` header builds outside the package: the headers are copied next
    to the source, and with the shipped tools the SASS is the shipped one."""
    try:
        bs.find_tools()
    except RfmodelError as exc:
        pytest.skip(str(exc))
    name = "sdk_scan_exclusive2"
    assert '#include "sdk_scan.cuh"' in (bs.SRC_DIR / f"{name}.cu").read_text()
    written = bs.build_sass(out_dir=tmp_path, archs=("sm_80",), names=[name])
    assert tmp_path / "src" / "sdk_scan.cuh" in written
    assert (tmp_path / "src" / "sdk_scan.cuh").read_text() == (bs.SRC_DIR / "sdk_scan.cuh").read_text()
    built = json.loads((tmp_path / "manifest.json").read_text())
    if all(built[t] == MANIFEST[t] for t in ("nvcc", "cuobjdump", "nvdisasm")):
        for kind in bs.SASS_KINDS:
            got = bs.sass_path(tmp_path, "sm_80", name, kind).read_text()
            assert got == bs.sass_path(KERNELS, "sm_80", name, kind).read_text(), kind


def _elf(sections: list[tuple[str, int, bytes]]) -> bytes:
    """A minimal little-endian ELF64 file with the given (name, type, contents) sections."""
    import struct

    names = [""] + [s[0] for s in sections] + [".shstrtab"]
    strtab = b""
    offs = []
    for n in names:
        offs.append(len(strtab))
        strtab += n.encode() + b"\0"
    body = b""
    heads = [struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)]
    datas = [s[2] for s in sections] + [strtab]
    kinds = [s[1] for s in sections] + [3]
    pos = 64
    for i, (d, kind) in enumerate(zip(datas, kinds, strict=True)):
        heads.append(struct.pack("<IIQQQQIIQQ", offs[i + 1], kind, 0, 0, pos + len(body), len(d), 0, 0, 4, 0))
        body += d
    shoff = 64 + len(body)
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header = ident + struct.pack(
        "<HHIQQQIHHHHHH", 1, 190, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(heads), len(heads) - 1
    )
    return header + body + b"".join(heads)


def test_cubin_constant_banks_reads_the_kernels_banks():
    table = bytes(range(40))
    data = _elf(
        [
            (".text.k", 1, b"\0" * 32),
            (".rela.nv.constant2.k", 4, b""),  # empty: nothing to fix up
            (".nv.constant2.k", 1, table),
            (".nv.constant0.k", 1, b"\1" * 16),  # bank 0: filled at launch, not stored
            (".nv.constant2.other", 1, b"\2" * 8),  # another kernel's
        ]
    )
    assert bs.cubin_constant_banks(data, "k") == {2: table}
    assert bs.cubin_constant_banks(data, "other") == {2: b"\2" * 8}
    assert bs.cubin_constant_banks(data, "none") == {}
    moved = _elf([(".nv.constant2.k", 1, table), (".rela.nv.constant2.k", 4, bytes(24))])
    with pytest.raises(RfmodelError, match="relocations"):
        bs.cubin_constant_banks(moved, "k")
    with pytest.raises(RfmodelError, match="not a little-endian 64-bit ELF"):
        bs.cubin_constant_banks(b"\x7fELF" + bytes(60), "k")


def test_build_keeps_the_jump_table(tmp_path):
    try:
        bs.find_tools()
    except RfmodelError as exc:
        pytest.skip(str(exc))
    bs.build_sass(out_dir=tmp_path, archs=("sm_90",), names=["bytecode_vm"])
    built = json.loads(bs.cbank_path(tmp_path, "sm_90", "bytecode_vm").read_text())
    assert set(built["banks"]) == {"2"} and len(bytes.fromhex(built["banks"]["2"])) == 40
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    if all(manifest[t] == MANIFEST[t] for t in ("nvcc", "cuobjdump", "nvdisasm")):
        assert built == json.loads(bs.cbank_path(KERNELS, "sm_90", "bytecode_vm").read_text())
    bs.build_sass(out_dir=tmp_path, archs=("sm_90",), names=["saxpy"])
    assert not bs.cbank_path(tmp_path, "sm_90", "saxpy").exists()  # no bank, no file
