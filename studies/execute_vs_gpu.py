"""The functional executor against a real GPU: the built-in kernels' recipes run both ways, outputs compared.

Three steps, the middle one on a machine with a GPU (no Python needed there):

1. ``prepare DIR [--arch sm_90] [--kernels ...] [--scale S]`` compiles each built-in kernel that has a launch
   recipe to a cubin exactly as ``rfmodel.workload.build_sass`` does, checks that the cubin's instructions are
   those of the shipped SASS listings (the ones the executor runs), and writes the recipe's input arrays, its
   parameters, launch shape and ``__constant__`` data as plain binary files plus ``DIR/manifest.txt``; it also
   compiles ``studies/gpu/launch_cubin.cu`` into ``DIR/launch_cubin`` (static CUDA runtime) and writes
   ``DIR/run.sh``.
2. ``sh DIR/run.sh`` on the GPU machine runs ``DIR/launch_cubin DIR``: every kernel is loaded from its cubin,
   launched once, and its outputs are written to ``DIR/<kernel>/out_<array>.bin``; the log is ``DIR/gpu.log``.
3. ``compare DIR [--docs docs/execute.md]`` executes the same recipes with the executor on the shipped
   listings and compares: integers exactly, floats bit for bit (non-identical elements and the largest
   distance in units in the last place), and the numpy reference against the GPU with the recipe's
   tolerance.  ``--docs`` writes the table between the ``gpu-check`` markers of docs/execute.md.

    python studies/execute_vs_gpu.py prepare studies/out/gpu_check
    sh studies/out/gpu_check/run.sh                        # on the GPU machine
    python studies/execute_vs_gpu.py compare studies/out/gpu_check --docs docs/execute.md
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import shutil
import stat
import struct
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rfmodel.errors import RfmodelError
from rfmodel.io import write_text
from rfmodel.workload.build_sass import (
    NVCC_FLAGS,
    SASS_KINDS,
    _run,
    elf_sections,
    find_tools,
    list_kernels,
    load_manifest,
    sass_path,
    tool_version,
)
from rfmodel.workload.execute.builtin import BUILTIN_RECIPES, KNOWN_GAPS, builtin_recipe
from rfmodel.workload.execute.errors import ExecutionError
from rfmodel.workload.execute.launch import _SCALAR, LaunchResult
from rfmodel.workload.execute.recipe import Recipe, check_outputs, run_recipe
from rfmodel.workload.manifest import manifest as shipped_manifest
from rfmodel.workload.suite import load_kernel

DEFAULT_DIR = Path("studies/out/gpu_check")
DEFAULT_ARCH = "sm_90"
LAUNCHER_SRC = Path(__file__).resolve().parent / "gpu" / "launch_cubin.cu"
#: the launcher: host code only, the static CUDA runtime and the C++ runtime linked in (it needs the
#: NVIDIA driver and the C library of the machine it runs on, nothing else)
LAUNCHER_FLAGS = ("-O2", "-std=c++17", "-cudart", "static", "-Xcompiler", "-static-libstdc++,-static-libgcc")
MAGIC = "rfmodel-gpu-check 1"
META = "prepare.json"
BEGIN = "<!-- gpu-check:begin -->"
END = "<!-- gpu-check:end -->"

_INS_RE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", re.M)
_ENC_RE = re.compile(r"/\*\s*(0x[0-9a-f]{16})\s*\*/")
_REF_COUNT_RE = re.compile(r"differs from the reference at (\d+) elements")


# ---- listings ------------------------------------------------------------------------------------


def instructions(text: str) -> list[tuple[str, str]]:
    """``(address, instruction)`` of every instruction line of a ``cuobjdump -sass`` listing."""
    return [(m.group(1), " ".join(m.group(2).split())) for m in _INS_RE.finditer(text)]


def encodings(text: str) -> list[str]:
    """The encoding words of a listing (``cuobjdump -sass`` or ``nvdisasm -c -hex``), in order."""
    return _ENC_RE.findall(text)


def listing_mismatch(name: str, arch: str, fresh: str) -> str | None:
    """Why the fresh cubin's ``cuobjdump -sass`` text ``fresh`` is not the shipped code of ``name`` on
    ``arch`` (None when it is): the instructions must equal the shipped cuobjdump listing's, and the
    encoding words those of the shipped nvdisasm listing, which the executor reads."""
    ins = instructions(fresh)
    if not ins:
        return "the fresh cubin's listing has no instructions"
    shipped = instructions(sass_path_shipped(name, arch, "cuobjdump").read_text(encoding="utf-8"))
    if ins != shipped:
        if len(ins) != len(shipped):
            return f"{len(ins)} instructions in the fresh cubin, {len(shipped)} in the shipped listing"
        j = next(j for j, (a, b) in enumerate(zip(ins, shipped, strict=True)) if a != b)
        return (
            f"instruction /*{ins[j][0]}*/ is '{ins[j][1]}' in the fresh cubin, '{shipped[j][1]}' when shipped"
        )
    enc = encodings(sass_path_shipped(name, arch, "nvdisasm").read_text(encoding="utf-8"))
    if encodings(fresh) != enc:
        return "the encodings differ from the shipped nvdisasm listing's (the executor's input)"
    return None


def sass_path_shipped(name: str, arch: str, kind: str) -> Path:
    from rfmodel.workload.build_sass import KERNELS_DIR

    return sass_path(KERNELS_DIR, arch, name, kind)


# ---- cubin symbols (ELF) -------------------------------------------------------------------------


def elf_symbols(data: bytes) -> list[tuple[str, str, int, int, int]]:
    """``(name, section, value, size, type)`` of every symbol of a 64-bit little-endian ELF file."""
    sections, names, string = elf_sections(data)
    out = []
    for s in sections:
        if s[1] != 2:  # SHT_SYMTAB
            continue
        strtab, off, size, entsize = s[6], s[4], s[5], s[9] or 24
        for k in range(size // entsize):
            st_name, st_info, _other, shndx, value, sz = struct.unpack_from(
                "<IBBHQQ", data, off + k * entsize
            )
            sec = names[shndx] if 0 < shndx < len(names) else ""
            out.append((string(strtab, st_name), sec, value, sz, st_info & 0xF))
    return out


def constant_symbols(cubin: Path, bank: int) -> list[tuple[str, int, int]]:
    """``(name, offset, size)`` of the variables the cubin places in constant bank ``bank``
    (``__constant__`` data: bank 3, section ``.nv.constant3``), by offset."""
    sec = f".nv.constant{bank}"
    syms = [
        (n, v, s) for n, section, v, s, typ in elf_symbols(cubin.read_bytes()) if section == sec and typ == 1
    ]
    return sorted(syms, key=lambda t: t[1])


#: ``.nv.info`` attribute of one kernel parameter: index (4 bytes), ordinal (2), offset in the parameter
#: space (2), then a word whose bits 18-31 are the size in bytes
_EIATTR_KPARAM_INFO = 0x17


def kernel_params(cubin: Path, symbol: str) -> list[tuple[int, int]] | None:
    """``(offset, size)`` of the kernel's parameters, by ordinal, from the cubin's ``.nv.info.<symbol>``
    section; None where the section cannot be read (a record format this reader does not know)."""
    data = cubin.read_bytes()
    sections, names, _ = elf_sections(data)
    if f".nv.info.{symbol}" not in names:
        return None
    sec = sections[names.index(f".nv.info.{symbol}")]
    info = data[sec[4] : sec[4] + sec[5]]
    params: dict[int, tuple[int, int]] = {}
    i = 0
    while i + 4 <= len(info):
        fmt, attr = info[i], info[i + 1]
        if fmt in (1, 2, 3):  # no value, an 8-bit or a 16-bit one: four bytes in all
            i += 4
        elif fmt == 4:  # a 16-bit size, then as many bytes
            (size,) = struct.unpack_from("<H", info, i + 2)
            if attr == _EIATTR_KPARAM_INFO and size >= 12:
                _index, ordinal, offset, word = struct.unpack_from("<IHHI", info, i + 4)
                params[ordinal] = (offset, (word >> 18) & 0x3FFF)
            i += 4 + size
        else:
            return None
    return [params[k] for k in sorted(params)]


def param_layout(recipe: Recipe) -> list[tuple[int, int]]:
    """``(offset, size)`` of the recipe's parameters, C-aligned as the executor lays them out."""
    out, pos = [], 0
    for p in recipe.params:
        size = _SCALAR[p.type][1]
        pos = -(-pos // size) * size
        out.append((pos, size))
        pos += size
    return out


# ---- prepare -------------------------------------------------------------------------------------


def _sha(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def dynamic_shared(name: str, recipe: Recipe) -> int:
    """Dynamic shared memory of the launch: what the recipe gives beyond the kernel's static shared memory
    (the manifest's, largest over the architectures, as the recipes take it); 0 for every built-in kernel,
    which declare theirs statically."""
    static = max(
        (r.get("shared", 0) for r in shipped_manifest()["kernels"][name]["resources"].values()), default=0
    )
    return max(0, int(recipe.shared_bytes or 0) - static)


def param_lines(recipe: Recipe) -> list[str]:
    """The manifest's ``param`` lines: a scalar as its bytes in its C type, a pointer as its array."""
    lines = []
    for p in recipe.params:
        if p.type == "ptr":
            lines.append(f"param {p.name} ptr {p.array}")
        else:
            dt, size = _SCALAR[p.type]
            raw = np.array([p.value], dtype=dt).astype(np.dtype(dt).newbyteorder("<")).tobytes()
            lines.append(f"param {p.name} {size} {raw.hex()}")
    return lines


def prepare(
    out: Path,
    arch: str = DEFAULT_ARCH,
    names: Sequence[str] | None = None,
    scale: float = 1.0,
    *,
    build_launcher: bool = True,
    say: Callable[[str], None] = print,
) -> dict:
    """Write the GPU run's inputs into ``out`` (see the module docstring); returns what ``prepare.json``
    holds: per kernel its arrays (dtype, shape, file, SHA-256), outputs and launch, and the skipped kernels
    with the reason."""
    out = Path(out).resolve()
    tools = find_tools(("nvcc", "cuobjdump", "nvdisasm"))
    sources = {k.name: k for k in list_kernels()}
    chosen = list(dict.fromkeys(names)) if names else sorted(BUILTIN_RECIPES)
    for n in chosen:
        if n not in BUILTIN_RECIPES:
            raise RfmodelError(
                f"'{n}' is not a built-in kernel with a launch recipe ({', '.join(sorted(BUILTIN_RECIPES))})"
            )
    if out.exists() and any(out.iterdir()):
        if not (out / META).exists():
            raise RfmodelError(
                f"{out} exists and is not a directory this script prepared; give an empty or new one"
            )
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / META, json.dumps({"version": 1, "incomplete": True}) + "\n")  # marks DIR as ours

    meta: dict = {
        "version": 1,
        "arch": arch,
        "scale": scale,
        "nvcc": tool_version(tools["nvcc"]),
        "nvcc_flags": [*NVCC_FLAGS, f"-arch={arch}"],
        "shipped_nvcc": load_manifest().get("nvcc", "?"),
        "kernels": {},
        "skipped": {},
    }
    lines = [MAGIC, f"arch {arch}", ""]
    for name in chosen:
        if (name, arch) in KNOWN_GAPS:
            meta["skipped"][name] = f"the executor does not run it on {arch}: {KNOWN_GAPS[name, arch]}"
            say(f"{name}: skipped ({meta['skipped'][name]})")
            continue
        kdir = out / name
        kdir.mkdir()
        cubin = kdir / f"{name}.cubin"
        src = sources[name]
        _run(
            [str(tools["nvcc"]), *NVCC_FLAGS, f"-arch={arch}", "-o", str(cubin), str(src.path)],
            what=f"nvcc ({name}, {arch})",
            cwd=kdir,
        )
        tool, args = SASS_KINDS["cuobjdump"]
        fresh = _run([str(tools[tool]), *args, str(cubin)], what=f"cuobjdump -sass ({name}, {arch})")
        why = listing_mismatch(name, arch, fresh)
        if why is not None:
            why = f"the fresh cubin is not the shipped code: {why}"
        recipe = builtin_recipe(name, scale)
        consts: list[str] = []
        abi = kernel_params(cubin, src.symbol)
        if why is None and abi is None:
            say(f"{name}: the cubin's parameter list is unreadable; the recipe's is not checked against it")
        elif why is None and abi != param_layout(recipe):
            why = f"the recipe's parameters {param_layout(recipe)} are not the kernel's {abi} (offset, size)"
        for bank in sorted(recipe.constants):
            if why is None and not constant_symbols(cubin, bank):
                why = f"constant bank {bank} holds no variable that a launch could set"
        if why is not None:
            shutil.rmtree(kdir)
            meta["skipped"][name] = why
            say(f"{name}: skipped ({why})")
            continue

        ins = recipe.inputs()
        entry = [
            f"kernel {name}",
            f"cubin {name}/{cubin.name}",
            f"symbol {src.symbol}",
            "grid " + " ".join(str(v) for v in (*recipe.grid, 1, 1, 1)[:3]),
            "block " + " ".join(str(v) for v in (*recipe.block, 1, 1, 1)[:3]),
            f"shared {dynamic_shared(name, recipe)}",
        ]
        arrays = {}
        for aname, a in ins.items():
            a = np.ascontiguousarray(a)
            info = {"dtype": a.dtype.str, "shape": list(a.shape), "sha256": _sha(a)}
            if aname in recipe.constants.values():
                info["constant_bank"] = next(b for b, n in recipe.constants.items() if n == aname)
            else:
                f = f"{name}/in_{aname}.bin"
                (out / f).write_bytes(a.astype(a.dtype.newbyteorder("<")).tobytes())
                entry.append(f"array {aname} {a.nbytes} {f}")
                info["file"] = f
            arrays[aname] = info
        for bank, aname in sorted(recipe.constants.items()):
            raw = np.ascontiguousarray(ins[aname]).tobytes()
            covered = 0
            for sym, off, size in constant_symbols(cubin, bank):
                chunk = raw[off : off + size].ljust(size, b"\0")
                f = f"{name}/const_{sym}.bin"
                (out / f).write_bytes(chunk)
                entry.append(f"const {sym} {size} {f}")
                consts.append(sym)
                covered = max(covered, off + size)
            if any(raw[covered:]):
                shutil.rmtree(kdir)
                meta["skipped"][name] = (
                    f"array '{aname}' fills constant bank {bank} beyond its variables ({covered} bytes)"
                )
                say(f"{name}: skipped ({meta['skipped'][name]})")
                entry = []
                break
        if not entry:
            continue
        entry += param_lines(recipe)
        for o in recipe.outputs:
            entry.append(f"output {o} {name}/out_{o}.bin")
        entry.append("end")
        lines += entry + [""]
        meta["kernels"][name] = {
            "arrays": arrays,
            "outputs": list(recipe.outputs),
            "unordered": list(recipe.unordered),
            "grid": list(recipe.grid),
            "block": list(recipe.block),
            "dynamic_shared": dynamic_shared(name, recipe),
            "constants": consts,
        }
        say(f"{name}: prepared ({', '.join(recipe.outputs)} out; grid {recipe.grid}, block {recipe.block})")

    write_text(out / "manifest.txt", "\n".join(lines))
    write_text(out / META, json.dumps(meta, indent=1) + "\n")
    run_sh = out / "run.sh"
    write_text(
        run_sh,
        "#!/bin/sh\n"
        "# Runs every prepared kernel on CUDA device 0 (DIR/launch_cubin DIR); the output goes to gpu.log.\n"
        'here=$(cd "$(dirname "$0")" && pwd)\n'
        '"$here/launch_cubin" "$here" "$@" > "$here/gpu.log" 2>&1\n'
        "rc=$?\n"
        'cat "$here/gpu.log"\n'
        'exit "$rc"\n',
    )
    run_sh.chmod(run_sh.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if build_launcher:
        build_launcher_binary(out, tools["nvcc"])
        say(f"built {out / 'launch_cubin'}")
    return meta


def build_launcher_binary(out: Path, nvcc: Path | None = None) -> Path:
    """Compile ``studies/gpu/launch_cubin.cu`` into ``out/launch_cubin`` (its source copied beside it)."""
    nvcc = nvcc or find_tools(("nvcc",))["nvcc"]
    binary = Path(out) / "launch_cubin"
    shutil.copyfile(LAUNCHER_SRC, Path(out) / LAUNCHER_SRC.name)
    _run(
        [str(nvcc), *LAUNCHER_FLAGS, "-o", str(binary), str(LAUNCHER_SRC), "-ldl"],
        what="nvcc (launch_cubin)",
        cwd=out,
    )
    return binary


# ---- compare -------------------------------------------------------------------------------------


def _ordered(bits: np.ndarray, nbits: int) -> np.ndarray:
    """Float bit patterns as integers in the floats' order (adjacent floats differ by 1; +0 and -0 meet)."""
    b = bits.astype(np.uint64)
    mag = (b & np.uint64((1 << (nbits - 1)) - 1)).astype(np.int64)
    return np.where((b >> np.uint64(nbits - 1)) != 0, -mag, mag)


def ulp_distance(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per element, how many floats of the dtype lie between ``x`` and ``y`` (0: equal or both NaN; inf: one
    of them NaN); float64 result, exact below 2**53."""
    x = np.ascontiguousarray(x).reshape(-1)
    y = np.ascontiguousarray(y).reshape(-1)
    nbits = 8 * x.dtype.itemsize
    ui = {32: np.uint32, 64: np.uint64}[nbits]
    a, b = _ordered(x.view(ui), nbits), _ordered(y.view(ui), nbits)
    same = (a >= 0) == (b >= 0)
    close = np.abs(np.where(same, a, 0) - np.where(same, b, 0)).astype(np.float64)
    far = np.abs(a.astype(np.float64)) + np.abs(b.astype(np.float64))
    d = np.where(same, close, far)
    nx, ny = np.isnan(x), np.isnan(y)
    d[nx & ny] = 0.0
    d[nx ^ ny] = np.inf
    return d


@dataclasses.dataclass
class OutputRow:
    kernel: str
    output: str
    dtype: str
    elements: int
    differing: int | None = None  # executor vs GPU, elements not bit-identical
    max_ulp: float | None = None  # floats only
    reference: str = ""  # numpy reference vs GPU
    note: str = ""  # why there is no comparison


def compare_arrays(gpu: np.ndarray, ex: np.ndarray, unordered: bool) -> tuple[int, float | None]:
    """Elements of ``gpu`` and ``ex`` that differ (bitwise) and, for floats, the largest ULP distance;
    ``unordered`` compares the two as sorted multisets."""
    g, e = gpu.reshape(-1), ex.reshape(-1)
    if unordered:
        g, e = np.sort(g), np.sort(e)
    if np.issubdtype(g.dtype, np.floating):
        ui = {4: np.uint32, 8: np.uint64}[g.dtype.itemsize]
        differing = int(np.count_nonzero(g.view(ui) != e.view(ui)))
        d = ulp_distance(g, e)
        return differing, float(d.max()) if d.size else 0.0
    return int(np.count_nonzero(g != e)), None


def reference_check(recipe: Recipe, output: str, gpu: dict[str, np.ndarray], ins: dict) -> str:
    """The numpy reference against the GPU's ``output`` with the recipe's tolerance (``check_outputs``)."""
    one = dataclasses.replace(recipe, outputs=[output])
    res = LaunchResult(arrays=gpu, warp_instructions=0, ctas=0)
    try:
        worst = check_outputs(one, res, ins)
    except ExecutionError as e:
        m = _REF_COUNT_RE.search(str(e))
        return f"{m.group(1)} outside tolerance" if m else f"error: {e}"
    return "exact" if worst[output] == 0 else f"within tolerance (max error {worst[output]:.3g})"


def read_status(out: Path, name: str) -> tuple[str, str]:
    """``("ok", milliseconds)``, ``("error", message)`` or ``("missing", "")``: the launcher's status file."""
    p = out / name / "status.txt"
    if not p.exists():
        return "missing", ""
    text = p.read_text(encoding="utf-8", errors="replace").strip()
    kind, _, rest = text.partition(" ")
    return (kind, rest) if kind in ("ok", "error") else ("error", f"unreadable status '{text[:80]}'")


def compare_kernel(out: Path, name: str, info: dict, arch: str, scale: float) -> tuple[list[OutputRow], str]:
    """Rows of one kernel (one per output) and the GPU's launch time in ms ('' when none)."""
    dtypes = {o: np.dtype(info["arrays"][o]["dtype"]) for o in info["outputs"]}

    def rows(note: str) -> list[OutputRow]:
        return [
            OutputRow(name, o, dtypes[o].name, int(np.prod(info["arrays"][o]["shape"])), note=note)
            for o in info["outputs"]
        ]

    status, detail = read_status(out, name)
    if status == "missing":
        return rows("not run on the GPU"), ""
    if status == "error":
        return rows(f"GPU: {detail}"), ""
    recipe = builtin_recipe(name, scale)
    ins = recipe.inputs()
    changed = [a for a, v in ins.items() if _sha(v) != info["arrays"][a]["sha256"]]
    if changed:
        return rows(
            f"the recipe's inputs changed since prepare ({', '.join(changed)}); prepare again"
        ), detail
    gpu = {}
    for o in info["outputs"]:
        a = info["arrays"][o]
        raw = (out / name / f"out_{o}.bin").read_bytes()
        dt = dtypes[o].newbyteorder("<")
        want = int(np.prod(a["shape"])) * dt.itemsize
        if len(raw) != want:
            return rows(f"GPU output {o}: {len(raw)} bytes, expected {want}"), detail
        gpu[o] = np.frombuffer(raw, dtype=dt).astype(dtypes[o]).reshape(a["shape"])
    try:
        res, _ = run_recipe(load_kernel(name, arch), recipe)
    except RfmodelError as e:
        return rows(f"executor: {e}"), detail
    result = []
    for o in info["outputs"]:
        differing, ulp = compare_arrays(gpu[o], res.arrays[o], o in info["unordered"])
        result.append(
            OutputRow(
                name,
                o,
                dtypes[o].name,
                gpu[o].size,
                differing=differing,
                max_ulp=ulp,
                reference=reference_check(recipe, o, gpu, ins),
            )
        )
    return result, detail


def _fmt_ulp(v: float | None) -> str:
    if v is None:
        return "-"
    return "NaN vs number" if v == np.inf else f"{v:.0f}"


def table(rows: list[OutputRow], times: dict[str, str], unordered: dict[str, list[str]]) -> str:
    head = (
        "| kernel | output | dtype | elements | not identical to the executor | max ULP "
        "| numpy reference vs GPU | GPU ms |"
    )
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out = r.output + (" (as a multiset)" if r.output in unordered.get(r.kernel, []) else "")
        if r.note:
            cells = [f"`{r.kernel}`", out, r.dtype, f"{r.elements:,}", r.note.replace("|", "\\|"), "", "", ""]
        else:
            cells = [
                f"`{r.kernel}`",
                out,
                r.dtype,
                f"{r.elements:,}",
                str(r.differing),
                _fmt_ulp(r.max_ulp),
                r.reference,
                times.get(r.kernel, ""),
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def device_line(out: Path) -> str:
    """The launcher's ``device:`` line of ``DIR/gpu.log`` ('' without one)."""
    log = out / "gpu.log"
    if not log.exists():
        return ""
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("device: "):
            return line[len("device: ") :].strip()
    return ""


def compare(out: Path, say: Callable[[str], None] = print) -> tuple[str, list[OutputRow]]:
    """The comparison's Markdown block (a summary line, the table, the skipped kernels) and its rows."""
    out = Path(out)
    try:
        meta = json.loads((out / META).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RfmodelError(f"{out / META}: not found; run `prepare {out}` first") from None
    arch, scale = meta["arch"], meta["scale"]
    rows: list[OutputRow] = []
    times: dict[str, str] = {}
    for name, info in meta["kernels"].items():
        kr, ms = compare_kernel(out, name, info, arch, scale)
        rows += kr
        if ms:
            times[name] = f"{float(ms):.3f}"
    compared = [r for r in rows if not r.note]
    same = sum(1 for r in compared if r.differing == 0)
    device = device_line(out) or "unknown device (no gpu.log)"
    lines = [
        f"GPU: {device}. Cubins for {arch} ({meta['nvcc']}, flags {' '.join(meta['nvcc_flags'])}); "
        f"recipes at scale {scale:g}. {len(compared)} of {len(rows)} outputs compared; {same} identical "
        "to the executor's bit for bit.",
        "",
        table(rows, times, {n: i["unordered"] for n, i in meta["kernels"].items()}),
    ]
    if meta["skipped"]:
        lines.append("Not run: " + "; ".join(f"`{n}` ({why})" for n, why in meta["skipped"].items()) + ".\n")
    return "\n".join(lines), rows


def write_docs(doc: Path, block: str) -> None:
    """Replace what lies between the ``gpu-check`` markers of ``doc`` with ``block``."""
    text = doc.read_text(encoding="utf-8")
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        raise RfmodelError(f"{doc}: markers {BEGIN} ... {END} not found")
    write_text(doc, text[: i + len(BEGIN)] + "\n" + block.rstrip("\n") + "\n" + text[j:])


# ---- command line --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="compile the kernels and write the GPU run's inputs and launcher")
    p.add_argument("dir", nargs="?", default=str(DEFAULT_DIR), type=Path)
    p.add_argument("--arch", default=DEFAULT_ARCH)
    p.add_argument("--kernels", nargs="+", default=None, help="default: every kernel with a recipe")
    p.add_argument("--scale", type=float, default=1.0, help="recipe scale (default 1: the test suite's)")
    p.add_argument("--no-launcher", action="store_true", help="do not compile DIR/launch_cubin")
    c = sub.add_parser("compare", help="run the executor and compare with the GPU's outputs")
    c.add_argument("dir", nargs="?", default=str(DEFAULT_DIR), type=Path)
    c.add_argument(
        "--docs", default=None, type=Path, metavar="PATH", help="write the table into PATH's markers"
    )
    args = ap.parse_args(argv)
    try:
        if args.cmd == "prepare":
            meta = prepare(args.dir, args.arch, args.kernels, args.scale, build_launcher=not args.no_launcher)
            size = sum(f.stat().st_size for f in args.dir.rglob("*") if f.is_file())
            print(
                f"{len(meta['kernels'])} kernels prepared, {len(meta['skipped'])} skipped; "
                f"{args.dir} holds {size / 2**20:.1f} MiB; on the GPU machine run: sh {args.dir}/run.sh"
            )
            return 0
        block, rows = compare(args.dir)
        print(block)
        if args.docs:
            if all(r.note for r in rows):
                print(f"error: no GPU outputs in {args.dir}; {args.docs} left as it is", file=sys.stderr)
                return 1
            write_docs(args.docs, block)
            print(f"{args.docs}: updated", file=sys.stderr)
        return 0
    except RfmodelError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
