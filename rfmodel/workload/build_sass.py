"""Build the built-in CUDA workload suite into SASS text (``build-sass``).

The suite lives in ``rfmodel/workload/kernels``:

* ``src/<name>.cu``: one ``extern "C" __global__`` kernel per file; the symbol
  equals the file stem.  A header block of ``// rfmodel: key = value`` lines
  holds the metadata that is not measured (description, categories, launch
  shape, typical loop trip count).
* ``src/<name>.cuh``: device code that several kernels of one benchmark share,
  included as ``#include "<name>.cuh"`` (found next to the including source).
* ``sass/<arch>/<name>.cuobjdump.sass``: ``cuobjdump -sass`` of the cubin.
* ``sass/<arch>/<name>.nvdisasm.sass``: ``nvdisasm -c -hex`` (code sections with
  the encoding words).
* ``sass/<arch>/<name>.plr.sass``: ``nvdisasm -c -plr`` (the disassembler's own
  per-instruction register liveness).
* ``sass/<arch>/<name>.cbank.json``: the compiler-generated constant banks of the kernel
  (``.nv.constant<N>.<kernel>`` sections of the cubin other than bank 0, such as the jump tables of
  a ``switch`` in bank 2), as hex bytes per bank; written only where a kernel has one.
* ``manifest.json``: tool versions, header metadata and the resource usage
  measured with ``cuobjdump -res-usage``.

The SASS files are package data: reading them needs no CUDA installation.
:func:`build_sass` regenerates them; it needs ``nvcc`` (CUDA 13 accepts sm_75
and later) and the PyPI disassemblers ``nvidia-cuda-cuobjdump`` and
``nvidia-cuda-nvdisasm``.  Neither step needs a GPU.

Run as ``python -m rfmodel.workload.build_sass --help``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rfmodel.errors import ParseError, RfmodelError, UnknownNameError
from rfmodel.io import write_text

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
SRC_DIR = KERNELS_DIR / "src"
MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 1
DEFAULT_ARCHS: tuple[str, ...] = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90")

#: Output kinds: file suffix -> (tool, arguments placed before the cubin path).
SASS_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cuobjdump": ("cuobjdump", ("-sass",)),
    "nvdisasm": ("nvdisasm", ("-c", "-hex")),
    "plr": ("nvdisasm", ("-c", "-plr")),
}

NVCC_FLAGS: tuple[str, ...] = ("-cubin", "-O3", "-lineinfo")

#: Workload categories a kernel header may use.
CATEGORIES = frozenset(
    {
        "register-sensitive",
        "register-insensitive",
        "cache-sensitive",
        "cache-insensitive",
        "integer-heavy",
        "fp-heavy",
        "memory-bound",
        "compute-bound",
        "irregular",
    }
)

PIP_HINT = "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm"

_HEADER_RE = re.compile(r"^//\s*rfmodel:\s*([A-Za-z_][\w.-]*)\s*=\s*(.*?)\s*$")
_ARCH_RE = re.compile(r"^sm_\d{2,3}[a-z]?$")
_RES_RE = re.compile(
    r"Function\s+(?P<name>\S+?):\s*\n\s*REG:(?P<regs>\d+)\s+STACK:(?P<stack>\d+)\s+SHARED:(?P<shared>\d+)"
)
_REQUIRED_KEYS = ("description", "threads_per_cta", "ctas", "trip", "category")
_INT_KEYS = ("threads_per_cta", "ctas", "trip")
#: the suites a kernel belongs to: the built-in suite written for rfmodel (the default workloads), and the
#: papers' benchmarks (kernels of the public suites the five papers measure, written here after reading the
#: originals: their algorithm, launch shape and sizes)
SUITES = ("builtin", "papers")
#: header keys of a papers' kernel (``suite = papers``): which benchmark it stands for, where its original
#: is, which papers name it, and the original's facts measured by compiling the original with the same nvcc
#: for sm_80 (``nvcc -cubin -O3 -arch=sm_80``, ``cuobjdump -res-usage``), for the comparison table
_PAPERS_KEYS = (
    "benchmark",
    "original",
    "papers",
    "original_regs",
    "original_shared",
    "original_threads_per_cta",
)
_PAPERS_INT_KEYS = ("original_regs", "original_shared", "original_threads_per_cta")
#: the papers a papers' kernel may name (``papers = ltrf, cerf``)
PAPERS = ("ltrf", "corf", "malekeh", "stt", "cerf")

_DOC_BEGIN = "<!-- BEGIN GENERATED: rfmodel.workload.build_sass.manifest_table_markdown -->"
_DOC_END = "<!-- END GENERATED -->"


# ---------------------------------------------------------------------------
# kernel sources and their headers


@dataclass(frozen=True)
class KernelSource:
    """One kernel source file and the metadata from its header block."""

    name: str
    path: Path
    description: str
    category: tuple[str, ...]
    threads_per_cta: int
    ctas: int
    trip: int
    suite: str = "builtin"
    #: a papers' kernel's benchmark, original and the original's measured facts (``_PAPERS_KEYS``)
    original: tuple[tuple[str, object], ...] = ()

    @property
    def symbol(self) -> str:
        return self.name


def parse_header(path: str | os.PathLike) -> KernelSource:
    """Read the ``// rfmodel: key = value`` header block of one kernel source.

    Keys: ``description``, ``category`` (comma-separated, from
    :data:`CATEGORIES`), ``threads_per_cta``, ``ctas`` and ``trip`` (positive
    integers); ``suite`` (one of :data:`SUITES`, default ``builtin``); a
    papers' kernel also gives every key of ``_PAPERS_KEYS``.  The block ends at
    the first line that is neither a header line nor blank.
    """
    path = Path(path)
    fields: dict[str, tuple[str, int]] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.strip()
            if not line:
                continue
            m = _HEADER_RE.match(line)
            if m is None:
                break
            key, value = m.group(1), m.group(2)
            known = (*_REQUIRED_KEYS, "suite", *_PAPERS_KEYS)
            if key not in known:
                raise ParseError(str(path), lineno, f"unknown header key '{key}' (known: {', '.join(known)})")
            if key in fields:
                raise ParseError(str(path), lineno, f"header key '{key}' given twice")
            fields[key] = (value, lineno)
    missing = [k for k in _REQUIRED_KEYS if k not in fields]
    if missing:
        raise ParseError(str(path), None, f"missing '// rfmodel:' header keys: {', '.join(missing)}")

    ints: dict[str, int] = {}
    for key in _INT_KEYS:
        value, lineno = fields[key]
        try:
            ints[key] = int(value)
        except ValueError:
            raise ParseError(
                str(path), lineno, f"header key '{key}' must be an integer, got {value!r}"
            ) from None
        if ints[key] <= 0:
            raise ParseError(str(path), lineno, f"header key '{key}' must be positive, got {ints[key]}")

    value, lineno = fields["category"]
    category = tuple(c.strip() for c in value.split(",") if c.strip())
    if not category:
        raise ParseError(str(path), lineno, "header key 'category' is empty")
    for c in category:
        if c not in CATEGORIES:
            raise ParseError(
                str(path), lineno, f"unknown category '{c}' (known: {', '.join(sorted(CATEGORIES))})"
            )
    description, lineno = fields["description"]
    if not description:
        raise ParseError(str(path), lineno, "header key 'description' is empty")
    suite, lineno = fields.get("suite", ("builtin", None))
    if suite not in SUITES:
        raise ParseError(str(path), lineno, f"unknown suite '{suite}' (known: {', '.join(SUITES)})")
    original: dict[str, object] = {}
    if suite == "papers":
        missing = [k for k in _PAPERS_KEYS if k not in fields]
        if missing:
            raise ParseError(str(path), None, f"a papers' kernel needs the header keys: {', '.join(missing)}")
        for key in _PAPERS_KEYS:
            value, lineno = fields[key]
            if key in _PAPERS_INT_KEYS:
                try:
                    original[key] = int(value)
                except ValueError:
                    msg = f"header key '{key}' must be an integer, got {value!r}"
                    raise ParseError(str(path), lineno, msg) from None
                if original[key] < 0:
                    raise ParseError(str(path), lineno, f"header key '{key}' must not be negative")
            elif key == "papers":
                names = tuple(v.strip() for v in value.split(",") if v.strip())
                bad = [v for v in names if v not in PAPERS] or ([] if names else ["(none)"])
                if bad:
                    msg = f"unknown paper '{bad[0]}' (known: {', '.join(PAPERS)})"
                    raise ParseError(str(path), lineno, msg)
                original[key] = list(names)
            elif not value:
                raise ParseError(str(path), lineno, f"header key '{key}' is empty")
            else:
                original[key] = value
    else:
        extra = [k for k in _PAPERS_KEYS if k in fields]
        if extra:
            raise ParseError(str(path), fields[extra[0]][1], f"header key '{extra[0]}' is for suite = papers")
    return KernelSource(
        name=path.stem,
        path=path,
        description=description,
        category=category,
        threads_per_cta=ints["threads_per_cta"],
        ctas=ints["ctas"],
        trip=ints["trip"],
        suite=suite,
        original=tuple(original.items()),
    )


def list_kernels(src_dir: str | os.PathLike | None = None) -> list[KernelSource]:
    """All kernel sources in ``src_dir`` (default: the shipped suite), sorted by name."""
    src_dir = Path(src_dir) if src_dir is not None else SRC_DIR
    return [parse_header(p) for p in sorted(src_dir.glob("*.cu"))]


# ---------------------------------------------------------------------------
# tools


def _nvidia_package_dirs() -> list[Path]:
    """Directories of the ``nvidia`` namespace package (PyPI CUDA wheels)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    dirs = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not dirs and spec.origin:
        dirs = [Path(spec.origin).parent]
    return dirs


def _is_executable(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def _find_disassembler(tool: str) -> Path | None:
    for base in _nvidia_package_dirs():
        # CUDA 13 wheels install into nvidia/cu13/bin; CUDA 12 wheels into nvidia/cuda_<tool>/bin.
        candidates = [base / "cu13" / "bin" / tool]
        candidates += sorted(base.glob(f"cu[0-9]*/bin/{tool}"), reverse=True)
        candidates.append(base / f"cuda_{tool}" / "bin" / tool)
        for c in candidates:
            if _is_executable(c):
                return c
    found = shutil.which(tool)
    return Path(found) if found else None


def _find_nvcc() -> Path | None:
    found = shutil.which("nvcc")
    if found:
        return Path(found)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and _is_executable(Path(root) / "bin" / "nvcc"):
            return Path(root) / "bin" / "nvcc"
    return None


def find_tools(require: Iterable[str] = ("nvcc", "cuobjdump", "nvdisasm")) -> dict[str, Path]:
    """Locate ``nvcc``, ``cuobjdump`` and ``nvdisasm``.

    ``nvcc`` is looked up on PATH, then under ``$CUDA_HOME/bin`` and
    ``$CUDA_PATH/bin``.  The disassemblers are looked up in the PyPI wheels
    (``site-packages/nvidia/cu13/bin``), then on PATH.  Returns a dict from
    tool name to path; raises :class:`RfmodelError` naming every required
    tool that is missing and how to install it.
    """
    require = tuple(require)
    finders = {
        "nvcc": _find_nvcc,
        "cuobjdump": lambda: _find_disassembler("cuobjdump"),
        "nvdisasm": lambda: _find_disassembler("nvdisasm"),
    }
    unknown = [t for t in require if t not in finders]
    if unknown:
        raise UnknownNameError("tool", unknown[0], finders)
    tools: dict[str, Path] = {}
    problems: list[str] = []
    for name in require:
        path = finders[name]()
        if path is None:
            if name == "nvcc":
                problems.append(
                    "nvcc not found on PATH (nor under $CUDA_HOME/bin or $CUDA_PATH/bin); install the "
                    "CUDA toolkit (13.x builds sm_75 to sm_90) and put its bin directory on PATH"
                )
            else:
                problems.append(
                    f"{name} not found (looked in the nvidia-cuda-{name} wheel under site-packages/nvidia "
                    f"and on PATH); install it with: {PIP_HINT}"
                )
        else:
            tools[name] = path
    if problems:
        raise RfmodelError("build-sass: " + "; ".join(problems))
    return tools


def tool_version(path: str | os.PathLike) -> str:
    """The release line of ``<tool> --version``, e.g. ``Cuda compilation tools, release 13.0, V13.0.88``.

    Falls back to the last non-blank line when no line mentions a release.
    """
    out = _run([str(path), "--version"], what=f"{Path(path).name} --version")
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    for ln in lines:
        if "release" in ln:
            return ln
    return lines[-1] if lines else ""


def _run(cmd: Sequence[str], what: str, cwd: str | os.PathLike | None = None) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise RfmodelError(f"build-sass: cannot run {what}: {exc}") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-20:]
        raise RfmodelError(f"build-sass: {what} failed with status {proc.returncode}: " + " | ".join(tail))
    return proc.stdout


# ---------------------------------------------------------------------------
# one kernel, one arch


def parse_res_usage(text: str) -> dict[str, dict[str, int]]:
    """Per-function ``regs``/``shared``/``stack`` from ``cuobjdump -res-usage`` output."""
    return {
        m.group("name"): {
            "regs": int(m.group("regs")),
            "shared": int(m.group("shared")),
            "stack": int(m.group("stack")),
        }
        for m in _RES_RE.finditer(text)
    }


_NV_CONST_RE = re.compile(r"^\.nv\.constant(\d+)\.(.+)$")


def elf_sections(data: bytes):
    """``(headers, names, string)`` of a 64-bit little-endian ELF file (a cubin): each section header as
    the tuple ``(name, type, flags, addr, offset, size, link, info, addralign, entsize)``, the sections'
    names, and ``string(section, offset)`` reading a string table.  A file that is not one raises
    :class:`RfmodelError`."""
    import struct

    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise RfmodelError("cubin: not a little-endian 64-bit ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or shoff + shnum * shentsize > len(data) or not shstrndx < shnum:
        raise RfmodelError("cubin: section header table out of range")
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + j * shentsize) for j in range(shnum)]

    def string(table: int, off: int) -> str:
        start = heads[table][4] + off
        return data[start : data.index(b"\0", start)].decode("ascii", "replace")

    return heads, [string(shstrndx, h[0]) for h in heads], string


def cubin_constant_banks(data: bytes, symbol: str) -> dict[int, bytes]:
    """The per-kernel constant banks of a cubin (ELF64): ``{bank: bytes}`` for every
    ``.nv.constant<N>.<symbol>`` section with N > 0 (bank 0 holds the launch constants and parameters,
    filled at launch).  A bank with relocations (addresses fixed up at load time) cannot be stored as
    plain bytes and raises :class:`RfmodelError`."""
    heads, names, _string = elf_sections(data)
    relocated = {nm for nm, h in zip(names, heads, strict=True) if h[1] in (4, 9) and h[5] > 0}  # RELA, REL
    banks: dict[int, bytes] = {}
    for nm, h in zip(names, heads, strict=True):
        m = _NV_CONST_RE.match(nm)
        if m is None or m.group(2) != symbol or int(m.group(1)) == 0:
            continue
        if f".rel{nm}" in relocated or f".rela{nm}" in relocated:
            raise RfmodelError(f"cubin: constant bank section {nm} has relocations (not stored)")
        banks[int(m.group(1))] = b"" if h[1] == 8 else data[h[4] : h[4] + h[5]]  # 8: SHT_NOBITS
    return banks


def cbank_path(kernels_dir: Path, arch: str, name: str) -> Path:
    """Where the compiler-generated constant banks of ``name`` for ``arch`` live (may not exist)."""
    return Path(kernels_dir) / "sass" / arch / f"{name}.cbank.json"


def sass_path(kernels_dir: Path, arch: str, name: str, kind: str) -> Path:
    """Where the ``kind`` (cuobjdump, nvdisasm, plr) text of ``name`` for ``arch`` lives."""
    return Path(kernels_dir) / "sass" / arch / f"{name}.{kind}.sass"


def measure_resources(
    cu_path: str | os.PathLike, arch: str = "sm_80", flags: Sequence[str] = ()
) -> dict[str, dict[str, int]]:
    """Compile any CUDA source (an original benchmark, to compare a papers' kernel with it) the way the
    shipped kernels are compiled (``nvcc -cubin -O3``, plus ``flags`` such as ``-I`` or ``-D`` the original
    needs) and return ``cuobjdump -res-usage``'s figures per function: ``{symbol: {"regs", "shared",
    "stack"}}`` (mangled names for C++ kernels)."""
    tools = find_tools(("nvcc", "cuobjdump"))
    cu = Path(cu_path).resolve()
    if not cu.is_file():
        raise RfmodelError(f"{cu_path}: no such CUDA source")
    with tempfile.TemporaryDirectory(prefix="rfmodel-measure-") as tmp:
        cubin = Path(tmp) / "measure.cubin"
        _run(
            [str(tools["nvcc"]), *NVCC_FLAGS, f"-arch={arch}", *flags, "-o", str(cubin), str(cu)],
            what=f"nvcc ({cu.name}, {arch})",
            cwd=str(cu.parent),
        )
        res_text = _run([str(tools["cuobjdump"]), "-res-usage", str(cubin)], what="cuobjdump -res-usage")
    return parse_res_usage(res_text)


def _build_one(
    tools: dict[str, Path], kernel: KernelSource, arch: str, kernels_dir: Path
) -> tuple[list[Path], dict]:
    with tempfile.TemporaryDirectory(prefix=f"rfmodel-{kernel.name}-{arch}-") as tmp:
        cubin = Path(tmp) / f"{kernel.name}.cubin"
        _run(
            [str(tools["nvcc"]), *NVCC_FLAGS, f"-arch={arch}", "-o", str(cubin), str(kernel.path)],
            what=f"nvcc ({kernel.name}, {arch})",
            cwd=tmp,
        )
        texts = {
            kind: _run(
                [str(tools[tool]), *args, str(cubin)], what=f"{tool} {' '.join(args)} ({kernel.name}, {arch})"
            )
            for kind, (tool, args) in SASS_KINDS.items()
        }
        res_text = _run(
            [str(tools["cuobjdump"]), "-res-usage", str(cubin)],
            what=f"cuobjdump -res-usage ({kernel.name}, {arch})",
        )
        banks = cubin_constant_banks(cubin.read_bytes(), kernel.symbol)
    if f"Function : {kernel.symbol}\n" not in texts["cuobjdump"]:
        raise RfmodelError(
            f"build-sass: {kernel.path.name} for {arch} has no function '{kernel.symbol}' "
            "in cuobjdump output; "
            'the kernel must be declared extern "C" __global__ and named like its file'
        )
    if f".text.{kernel.symbol}" not in texts["nvdisasm"]:
        raise RfmodelError(
            f"build-sass: nvdisasm output for {kernel.name} ({arch}) has no .text.{kernel.symbol}"
        )
    resources = parse_res_usage(res_text).get(kernel.symbol)
    if resources is None:
        raise RfmodelError(
            f"build-sass: no resource usage for '{kernel.symbol}' ({arch}) in: {res_text.strip()!r}"
        )
    written = []
    for kind, text in texts.items():
        path = sass_path(kernels_dir, arch, kernel.name, kind)
        write_text(path, text)
        written.append(path)
    cpath = cbank_path(kernels_dir, arch, kernel.name)
    if banks:
        doc = {"version": 1, "kernel": kernel.symbol, "arch": arch}
        doc["banks"] = {str(b): v.hex() for b, v in sorted(banks.items())}
        write_text(cpath, json.dumps(doc, indent=1) + "\n")
        written.append(cpath)
    elif cpath.exists():
        cpath.unlink()
    return written, resources


# ---------------------------------------------------------------------------
# the whole suite


def load_manifest(kernels_dir: str | os.PathLike | None = None) -> dict:
    """Read ``manifest.json`` of ``kernels_dir`` (default: the shipped suite)."""
    path = Path(kernels_dir if kernels_dir is not None else KERNELS_DIR) / MANIFEST_NAME
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        raise RfmodelError(f"{path}: no workload manifest; run build-sass to create it") from None
    except json.JSONDecodeError as exc:
        raise ParseError(str(path), exc.lineno, f"invalid JSON: {exc.msg}") from None
    if not isinstance(manifest, dict) or manifest.get("version") != MANIFEST_VERSION:
        raise ParseError(str(path), None, f"unsupported manifest version (expected {MANIFEST_VERSION})")
    return manifest


def build_sass(
    out_dir: str | os.PathLike | None = None,
    archs: Sequence[str] = DEFAULT_ARCHS,
    names: Iterable[str] | None = None,
    progress: Callable[[str], None] | None = None,
    jobs: int | None = None,
) -> list[Path]:
    """Compile the built-in kernels and write their SASS text and the manifest.

    ``out_dir`` None regenerates the shipped files in the package; otherwise
    the same layout (``src/``, ``sass/<arch>/``, ``manifest.json``) is written
    under ``out_dir`` and the sources (with the shared ``.cuh`` headers) are
    copied there.  ``names`` limits the
    build to some kernels; the manifest then keeps the entries of the others
    (and, for a built kernel, the resources of archs not rebuilt).  A build of
    all kernels removes SASS files of kernels that no longer have a source.
    ``progress`` receives one line per finished step.  ``jobs`` is the number
    of parallel compilations (default: CPU count, at most 8).  Returns the
    paths written.
    """
    say = progress or (lambda _msg: None)
    archs = tuple(archs)
    if not archs:
        raise RfmodelError("build-sass: no architectures given")
    for arch in archs:
        if not _ARCH_RE.match(arch):
            raise RfmodelError(f"build-sass: architecture '{arch}' is not of the form sm_XX")
    kernels = list_kernels()
    by_name = {k.name: k for k in kernels}
    if names is not None:
        names = list(dict.fromkeys(names))
        for n in names:
            if n not in by_name:
                raise UnknownNameError("built-in kernel", n, by_name)
        selected = [by_name[n] for n in names]
    else:
        selected = kernels
    if not selected:
        raise RfmodelError("build-sass: no kernels to build")

    kernels_dir = Path(out_dir) if out_dir is not None else KERNELS_DIR
    tools = find_tools()
    versions = {t: tool_version(tools[t]) for t in ("nvcc", "cuobjdump", "nvdisasm")}
    say(f"nvcc: {versions['nvcc']}; cuobjdump/nvdisasm: {versions['cuobjdump']}")

    written: list[Path] = []
    if kernels_dir.resolve() != KERNELS_DIR.resolve():
        # the sources built, and the headers they may include
        for src in [k.path for k in selected] + sorted(SRC_DIR.glob("*.cuh")):
            dst = kernels_dir / "src" / src.name
            write_text(dst, src.read_text(encoding="utf-8"))
            written.append(dst)

    tasks = [(k, a) for k in selected for a in archs]
    workers = max(1, min(jobs or min(os.cpu_count() or 1, 8), len(tasks)))
    resources: dict[str, dict[str, dict[str, int]]] = {k.name: {} for k in selected}

    def work(task: tuple[KernelSource, str]):
        k, a = task
        return k, a, _build_one(tools, k, a, kernels_dir)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for k, a, (paths, res) in pool.map(work, tasks):
            written.extend(paths)
            resources[k.name][a] = res
            say(f"{k.name} {a}: {res['regs']} registers, {res['shared']} B shared, {res['stack']} B stack")

    if names is None:
        keep = {k.name for k in kernels}
        suffixes = (*(f".{kind}.sass" for kind in SASS_KINDS), ".cbank.json")
        for arch in archs:
            for p in sorted((kernels_dir / "sass" / arch).glob("*.*")):
                stem = p.name
                for s in suffixes:
                    if stem.endswith(s) and stem[: -len(s)] not in keep:
                        p.unlink()
                        say(f"removed stale {p}")

    old_kernels: dict = {}
    try:
        old_kernels = load_manifest(kernels_dir).get("kernels", {})
    except RfmodelError:
        old_kernels = {}

    entries: dict[str, dict] = {}
    for k in kernels:
        if k.name in resources:
            res = {
                a: r for a, r in old_kernels.get(k.name, {}).get("resources", {}).items() if a not in archs
            }
            res.update(resources[k.name])
            entries[k.name] = _manifest_entry(k, res)
        elif k.name in old_kernels and names is not None:
            entries[k.name] = old_kernels[k.name]
    manifest = {"version": MANIFEST_VERSION, **versions, "kernels": entries}
    mpath = kernels_dir / MANIFEST_NAME
    write_text(mpath, json.dumps(manifest, indent=2) + "\n")
    written.append(mpath)
    say(f"wrote {mpath}")
    return written


def _manifest_entry(k: KernelSource, resources: dict[str, dict[str, int]]) -> dict:
    extra = {"suite": k.suite, "original": dict(k.original)} if k.suite != "builtin" else {}
    return {
        **extra,
        "source": f"src/{k.path.name}",
        "symbol": k.symbol,
        "description": k.description,
        "category": list(k.category),
        "threads_per_cta": k.threads_per_cta,
        "ctas": k.ctas,
        "loop_trip_counts": {"default": k.trip},
        "resources": {a: resources[a] for a in sorted(resources, key=_arch_key)},
    }


def _arch_key(arch: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", arch)
    return (int(digits) if digits else 0, arch)


# ---------------------------------------------------------------------------
# documentation table


def sass_features(kernels_dir: str | os.PathLike | None = None) -> dict[str, dict[str, dict[str, int]]]:
    """Count ``BRX`` and ``CALL`` instructions in the shipped cuobjdump text: ``{name: {arch: {...}}}``."""
    kernels_dir = Path(kernels_dir) if kernels_dir is not None else KERNELS_DIR
    manifest = load_manifest(kernels_dir)
    brx = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?BRX\b", re.M)
    call = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?CALL\.", re.M)
    out: dict[str, dict[str, dict[str, int]]] = {}
    for name, entry in manifest["kernels"].items():
        out[name] = {}
        for arch in entry["resources"]:
            p = sass_path(kernels_dir, arch, name, "cuobjdump")
            text = p.read_text(encoding="utf-8") if p.exists() else ""
            out[name][arch] = {"BRX": len(brx.findall(text)), "CALL": len(call.findall(text))}
    return out


def _suite_of(entry: dict) -> str:
    return entry.get("suite", "builtin")


def manifest_table_markdown(kernels_dir: str | os.PathLike | None = None) -> str:
    """Markdown table of the built-in kernels, from the manifest and the shipped SASS."""
    manifest = load_manifest(kernels_dir)
    kernels = {n: e for n, e in manifest["kernels"].items() if _suite_of(e) == "builtin"}
    manifest = {**manifest, "kernels": kernels}
    features = sass_features(kernels_dir)
    archs = sorted({a for e in manifest["kernels"].values() for a in e["resources"]}, key=_arch_key)
    short = [a.removeprefix("sm_") for a in archs]
    head = (
        ["kernel", "what it does", "categories", "threads/CTA x CTAs", "trip"]
        + [f"regs {a}" for a in archs]
        + ["BRX (archs)", "CALL (archs)"]
    )
    rows = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for name in sorted(manifest["kernels"]):
        e = manifest["kernels"][name]
        feats = features.get(name, {})

        def archs_with(op: str, feats=feats) -> str:
            hits = [s for a, s in zip(archs, short, strict=True) if feats.get(a, {}).get(op, 0) > 0]
            return ", ".join(hits) if hits else "-"

        cells = [
            f"`{name}`",
            e["description"].replace("|", "\\|"),
            ", ".join(e["category"]),
            f"{e['threads_per_cta']} x {e['ctas']}",
            str(e["loop_trip_counts"].get("default", "")),
        ]
        cells += [str(e["resources"][a]["regs"]) if a in e["resources"] else "-" for a in archs]
        cells += [archs_with("BRX"), archs_with("CALL")]
        rows.append("| " + " | ".join(cells) + " |")
    tools = (
        f"Measured with {manifest.get('nvcc', '?')} (nvcc) and {manifest.get('cuobjdump', '?')} (cuobjdump)."
    )
    return "\n".join(rows) + "\n\n" + tools + "\n"


def papers_table_markdown(kernels_dir: str | os.PathLike | None = None) -> str:
    """Markdown table of the papers' benchmarks: each kernel beside the facts of the original it stands for
    (both compiled with the same nvcc for sm_80)."""
    from rfmodel.workload.execute.papers import PAPERS_FULL_SIZES

    manifest = load_manifest(kernels_dir)
    head = [
        "kernel",
        "benchmark",
        "papers",
        "original",
        "regs sm_80 (original / ours)",
        "shared B (original / ours)",
        "threads/CTA (original / ours)",
        "original's input (`--scale full`)",
        "what it does",
    ]
    rows = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for name in sorted(manifest["kernels"]):
        e = manifest["kernels"][name]
        if _suite_of(e) != "papers":
            continue
        o = e["original"]
        res = e["resources"].get("sm_80", {})
        none = o["original"].startswith("none")  # no original kernel to compile: its facts are ours

        def theirs(key, o=o, none=none):
            return "-" if none else o[key]

        cells = [
            f"`{name}`",
            o["benchmark"],
            ", ".join(o["papers"]),
            o["original"].replace("|", "\\|"),
            f"{theirs('original_regs')} / {res.get('regs', '-')}",
            f"{theirs('original_shared')} / {res.get('shared', '-')}",
            f"{theirs('original_threads_per_cta')} / {e['threads_per_cta']}",
            _full_size_cell(PAPERS_FULL_SIZES.get(name)),
            e["description"].replace("|", "\\|"),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    tools = (
        f"Measured with {manifest.get('nvcc', '?')} (nvcc) and {manifest.get('cuobjdump', '?')} (cuobjdump)."
    )
    return "\n".join(rows) + "\n\n" + tools + "\n"


def _full_size_cell(full) -> str:
    """The papers' table's cell of a recipe's original input: what it is, the scale that reaches it, what
    differs, and the scale the slow test runs where it is smaller."""
    if full is None:
        return "-"
    text = f"{full.what}: scale {full.scale}" + (f" with {full.ctas} CTAs" if full.ctas else "")
    if full.differs:
        text += f" (differs: {full.differs})"
    if full.tested is not None:
        text += f"; the slow test runs scale {full.tested}"
    return text.replace("|", "\\|")


#: the generated tables a documentation file may hold, by the function that writes each
_TABLES = {"manifest_table_markdown": manifest_table_markdown, "papers_table_markdown": papers_table_markdown}


def update_docs(doc_path: str | os.PathLike, kernels_dir: str | os.PathLike | None = None) -> bool:
    """Replace every generated table between its markers in ``doc_path`` (the built-in kernels' and the
    papers' benchmarks'); True when the file changed."""
    doc_path = Path(doc_path)
    text = doc_path.read_text(encoding="utf-8")
    new, found = text, 0
    for fname, table in _TABLES.items():
        begin = f"<!-- BEGIN GENERATED: rfmodel.workload.build_sass.{fname} -->"
        start = new.find(begin)
        end = new.find(_DOC_END, start)
        if start < 0 or end < start:
            continue
        found += 1
        new = new[: start + len(begin)] + "\n" + table(kernels_dir) + new[end:]
    if not found:
        raise ParseError(
            str(doc_path), None, f"generated-table markers not found ({_DOC_BEGIN} ... {_DOC_END})"
        )
    if new == text:
        return False
    write_text(doc_path, new)
    return True


# ---------------------------------------------------------------------------
# command line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rfmodel.workload.build_sass",
        description="Compile the built-in CUDA kernels and regenerate their SASS text and manifest.",
    )
    parser.add_argument(
        "--out", default=None, help="output directory (default: the package's kernels directory)"
    )
    parser.add_argument(
        "--arch", action="append", default=None, help="architecture, repeatable (default: all five)"
    )
    parser.add_argument(
        "--name", action="append", default=None, help="kernel name, repeatable (default: all)"
    )
    parser.add_argument("--jobs", type=int, default=None, help="parallel compilations")
    parser.add_argument(
        "--docs",
        default=None,
        metavar="PATH",
        help="after building, refresh the generated table in this Markdown file",
    )
    parser.add_argument(
        "--docs-only", action="store_true", help="only refresh --docs from the existing manifest"
    )
    parser.add_argument(
        "--measure",
        metavar="FILE.cu",
        default=None,
        help="only compile FILE.cu (any CUDA source, e.g. a benchmark's original) for --arch (default sm_80) "
        "as the kernels are compiled and print each function's registers, shared memory and stack as JSON; "
        "--flag passes nvcc options such as -I or -D",
    )
    parser.add_argument("--flag", action="append", default=[], help="nvcc option for --measure (repeatable)")
    args = parser.parse_args(argv)
    try:
        if args.measure:
            archs = args.arch or ["sm_80"]
            out = {a: measure_resources(args.measure, a, args.flag) for a in archs}
            print(json.dumps(out if len(archs) > 1 else out[archs[0]], indent=1))
            return 0
        if not args.docs_only:
            paths = build_sass(
                out_dir=args.out,
                archs=tuple(args.arch or DEFAULT_ARCHS),
                names=args.name,
                progress=lambda m: print(m, file=sys.stderr),
                jobs=args.jobs,
            )
            print(f"{len(paths)} files written", file=sys.stderr)
        if args.docs:
            changed = update_docs(args.docs, args.out)
            print(f"{args.docs}: {'updated' if changed else 'unchanged'}", file=sys.stderr)
    except RfmodelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
