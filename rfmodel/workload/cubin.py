"""A user's compiled kernel as a cubin (``nvcc -cubin``), read wherever a SASS listing is.

A cubin is read as the listing that ``cuobjdump -sass -res-usage FILE.cubin`` prints, through the same reader
(:func:`rfmodel.workload.sass.parse_sass`): the same kernels, names and choices (``FILE.cubin:KERNEL``), the
registers and static shared memory of ``-res-usage``.  What the listing does not hold comes from the cubin's
ELF itself:

* the architecture: the ELF header's ``e_flags`` (checked before anything runs; the listing must agree);
* the constant banks other than bank 0 (:func:`cubin_banks`): a kernel's own ``.nv.constant<N>.<kernel>``
  sections (a ``switch``'s jump table in bank 2) and the module's ``.nv.constant<N>`` sections (the initial
  values of the ``__constant__`` variables, bank 3), put in ``Kernel.attrs["constant_banks"]`` as a shipped
  kernel's are; a launch fills them first and a recipe's ``[constants]`` replace them.

cuobjdump (the PyPI wheel ``nvidia-cuda-cuobjdump`` or one on PATH, found as ``build_sass`` finds it) runs on
a copy of the file's bytes in a temporary folder that is removed afterwards.  Its listing is kept in the disk
cache (:mod:`rfmodel.cache`) keyed by the SHA-256 of those bytes, so a file read again is not disassembled
again.  Every problem (a file that is not a cubin, an architecture the reader does not read, cuobjdump missing
or failing) is one :class:`~rfmodel.errors.RfmodelError`.  Executables and fatbinaries are not read: extract
a cubin first (``cuobjdump -xelf all FILE``).
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import subprocess
import tempfile
from pathlib import Path

from rfmodel.errors import ParseError, RfmodelError

__all__ = [
    "CUOBJDUMP_ARGS",
    "cubin_arch",
    "cubin_banks",
    "cubin_listing",
    "is_cubin",
    "read_cubin",
    "read_kernel_file",
]

#: the disassembly a cubin is read as: the listing ``cuobjdump -sass -res-usage FILE.cubin`` prints
CUOBJDUMP_ARGS = ("-sass", "-res-usage")
#: the longest cuobjdump may run on one cubin, in seconds
CUOBJDUMP_TIMEOUT_S = 300
#: how many of cuobjdump's last output lines an error repeats
_ERROR_LINES = 5

_ELF_MAGIC = b"\x7fELF"
_FATBIN_MAGIC = b"\x50\xed\x55\xba"  # 0xba55ed50, little-endian: a fatbinary (nvcc -fatbin)
_EM_CUDA = 190
#: the CUDA ELF ABI version 8 (ELFOSABI 0x41; what CUDA 13's nvcc writes) keeps the SM in bits 8-15 of
#: e_flags; the earlier version 7 (ELFOSABI 0x33) in bits 0-7
_OSABI_CUDA_V2, _ABI_VERSION_V2 = 0x41, 8
_NV_CONST_RE = re.compile(r"^\.nv\.constant(\d+)(?:\.(.+))?$")
_SHT_NOBITS, _SHT_RELA, _SHT_REL = 8, 4, 9

#: kind and format version of a cached listing (:mod:`rfmodel.cache`)
_CACHE_KIND, _CACHE_VERSION = "cubin-sass", 2


def _head(path: Path, n: int = 4) -> bytes:
    """The first ``n`` bytes of a regular file; nothing for anything else (opening a named pipe would wait
    for a writer, a device would be read: the readers refuse those with one error)."""
    try:
        if not path.is_file():
            return b""
        with open(path, "rb") as fh:
            return fh.read(n)
    except (OSError, ValueError):
        return b""


def is_cubin(path) -> bool:
    """Whether a workload file is read as a compiled file rather than as SASS text: one named ``*.cubin``,
    or any file that starts as an ELF file or a fatbinary does (:func:`read_cubin` says what it is)."""
    p = Path(path)
    return p.suffix.lower() == ".cubin" or _head(p) in (_ELF_MAGIC, _FATBIN_MAGIC)


def read_kernel_file(path, arch: str | None = None) -> list:
    """The kernels of a workload file, in its order: a cubin's (:func:`read_cubin`), else a SASS listing's
    (:func:`rfmodel.workload.sass.read_sass`, with ``arch`` where the text does not state it)."""
    if is_cubin(path):
        return read_cubin(path)
    from rfmodel.workload.sass import read_sass

    return read_sass(path, arch=arch)


def _read_bytes(path: Path) -> bytes:
    if path.exists() and not path.is_file():
        raise RfmodelError(f"{path}: not a regular file (a folder, device or pipe); expected a cubin")
    try:
        return path.read_bytes()
    except OSError as e:
        raise RfmodelError(f"{path}: cannot read the cubin: {e.strerror or e}") from None


def cubin_arch(data: bytes, where: str = "cubin") -> str | None:
    """The architecture a cubin is compiled for (``"sm_80"``), from its ELF header's ``e_flags``; None where
    the flags do not say.  A file that is not a CUDA ELF file (a fatbinary, a host executable or object,
    text) raises :class:`RfmodelError` saying what it is."""
    extract = f"extract the cubin with `cuobjdump -xelf all {Path(where).name}` and give that file"
    if data[:4] == _FATBIN_MAGIC:
        raise RfmodelError(f"{where}: a fatbinary, not a cubin; {extract}")
    if data[:4] != _ELF_MAGIC:
        raise RfmodelError(
            f"{where}: not a cubin (an ELF file from nvcc -cubin): it does not start with the ELF magic bytes"
        )
    if len(data) < 64 or data[4] != 2 or data[5] != 1:
        raise RfmodelError(f"{where}: not a cubin: an ELF file but not a complete 64-bit little-endian one")
    (machine,) = struct.unpack_from("<H", data, 18)
    if machine != _EM_CUDA:
        raise RfmodelError(
            f"{where}: an ELF file for machine {machine}, not a CUDA cubin (machine "
            f"{_EM_CUDA}): an executable or host object? {extract}"
        )
    (flags,) = struct.unpack_from("<I", data, 0x30)
    v2 = data[7] == _OSABI_CUDA_V2 or data[8] >= _ABI_VERSION_V2
    sm = (flags >> 8) & 0xFF if v2 else flags & 0xFF
    return f"sm_{sm}" if sm >= 10 else None


def cubin_banks(data: bytes, symbol: str, where: str = "cubin") -> tuple[dict, list[str]]:
    """The constant banks other than bank 0 that a cubin (ELF64) gives kernel ``symbol`` at load time:
    ``({bank: uint8 array}, skipped)``.  A bank is the module's ``.nv.constant<N>`` section (initialized
    ``__constant__`` data: bank 3; zeros where the section holds no bytes), overlaid by the kernel's own
    ``.nv.constant<N>.<symbol>`` (a jump table: bank 2).  ``skipped`` names the sections with relocations
    (addresses fixed up when the driver loads the module), whose bytes are not the bank's: those banks are
    left out (a recipe's ``[constants]`` gives them)."""
    import numpy as np

    from rfmodel.workload.build_sass import elf_sections

    try:
        heads, names, _ = elf_sections(data)
    except RfmodelError as e:
        raise RfmodelError(f"{where}: {e}") from None
    relocated = {nm for nm, h in zip(names, heads, strict=True) if h[1] in (_SHT_RELA, _SHT_REL) and h[5] > 0}
    module: dict[int, bytes] = {}
    own: dict[int, bytes] = {}
    skipped: list[str] = []
    for nm, h in zip(names, heads, strict=True):
        m = _NV_CONST_RE.match(nm)
        if m is None or int(m.group(1)) == 0 or m.group(2) not in (None, symbol):
            continue
        if f".rel{nm}" in relocated or f".rela{nm}" in relocated:
            skipped.append(nm)
            continue
        size = int(h[5])
        if h[1] == _SHT_NOBITS:
            body = bytes(size)
        elif h[4] + size <= len(data):
            body = data[h[4] : h[4] + size]
        else:
            raise RfmodelError(f"{where}: section {nm} lies past the end of the file")
        (module if m.group(2) is None else own)[int(m.group(1))] = body
    banks = {}
    for b in sorted({*module, *own}):
        base = bytearray(module.get(b, b""))
        mine = own.get(b, b"")
        base[: len(mine)] = mine
        banks[b] = np.frombuffer(bytes(base), np.uint8)
    return banks, skipped


def cuobjdump_path():
    """Where cuobjdump is (the PyPI wheel's, else one on PATH), or None."""
    from rfmodel.workload.build_sass import _find_disassembler

    return _find_disassembler("cuobjdump")


def _run_cuobjdump(data: bytes, where: str) -> str:
    from rfmodel.workload.build_sass import PIP_HINT

    what = f"cuobjdump {' '.join(CUOBJDUMP_ARGS)}"
    tool = cuobjdump_path()
    if tool is None:
        raise RfmodelError(
            f"{where}: reading a cubin runs {what}, and cuobjdump was not found (looked in "
            "the nvidia-cuda-cuobjdump wheel under site-packages/nvidia and on PATH); install "
            f"it with: {PIP_HINT}"
        )
    with tempfile.TemporaryDirectory(prefix="rfmodel-cubin-") as tmp:
        (Path(tmp) / "kernel.cubin").write_bytes(data)  # the bytes hashed, whatever happens to the file
        try:
            proc = subprocess.run(
                [str(tool), *CUOBJDUMP_ARGS, "kernel.cubin"],
                cwd=tmp,
                check=False,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=CUOBJDUMP_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise RfmodelError(f"{where}: {what} ({tool}) ran longer than {CUOBJDUMP_TIMEOUT_S} s") from None
        except OSError as e:
            raise RfmodelError(f"{where}: cannot run {what} ({tool}): {e.strerror or e}") from None
    if proc.returncode != 0:
        said = [ln.strip() for ln in (proc.stderr or proc.stdout or "").splitlines() if ln.strip()]
        tail = " | ".join(said[-_ERROR_LINES:]) or "no message"
        raise RfmodelError(f"{where}: {what} ({tool}) failed with status {proc.returncode}: {tail}")
    return proc.stdout


def cubin_listing(data: bytes, where: str = "cubin") -> str:
    """The ``cuobjdump -sass -res-usage`` listing of a cubin's bytes: from the disk cache (keyed by their
    SHA-256) where it holds it, else from cuobjdump, then kept there."""
    from rfmodel.cache import keyed_entry, read_entry, write_with
    from rfmodel.io import write_text

    digest = hashlib.sha256(data).hexdigest()
    entry = keyed_entry(_CACHE_KIND, [_CACHE_VERSION, digest, list(CUOBJDUMP_ARGS)], ".json")

    def load(path):
        doc = json.loads(path.read_text(encoding="utf-8"))
        ok = doc["kind"] == _CACHE_KIND and doc["version"] == _CACHE_VERSION and doc["sha256"] == digest
        if not ok or not isinstance(doc["listing"], str):
            raise ValueError("another entry")
        if hashlib.sha256(doc["listing"].encode("utf-8")).hexdigest() != doc["listing_sha256"]:
            raise ValueError("a damaged entry")  # a changed byte of the listing is redone, never read
        return doc["listing"]

    text = read_entry(entry, load)
    if text is None:
        text = _run_cuobjdump(data, where)
        doc = {
            "kind": _CACHE_KIND,
            "version": _CACHE_VERSION,
            "sha256": digest,
            "args": list(CUOBJDUMP_ARGS),
            "listing": text,
            "listing_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        }
        write_with(entry, lambda path: write_text(path, json.dumps(doc)))
    return text


def read_cubin(path) -> list:
    """The kernels of a cubin (``nvcc -cubin``), in cuobjdump's order: its ``cuobjdump -sass -res-usage``
    listing read as a SASS listing is (:func:`~rfmodel.workload.sass.parse_sass`), for the architecture of
    its ELF header, each kernel with the constant banks the cubin gives it (:func:`cubin_banks`)."""
    from rfmodel.workload.sass import SUPPORTED_ARCHS, parse_sass

    p = Path(path)
    where = str(p)
    data = _read_bytes(p)
    arch = cubin_arch(data, where)
    if arch is not None and arch not in SUPPORTED_ARCHS:
        raise RfmodelError(
            f"{where}: a cubin for {arch}; the SASS reader reads {', '.join(SUPPORTED_ARCHS)} "
            "(compile for one of them: nvcc -cubin -arch=sm_80 ...)"
        )
    text = cubin_listing(data, where)
    listing = f"the {' '.join(['cuobjdump', *CUOBJDUMP_ARGS])} listing of this cubin"
    try:
        kernels = parse_sass(text, where, arch=arch)
    except ParseError as e:
        at = f", line {e.line}" if e.line is not None else ""
        raise ParseError(where, None, f"{listing}{at}: {e.message}") from None
    digest = hashlib.sha256(data).hexdigest()
    for k in kernels:
        banks, skipped = cubin_banks(data, k.name, where)
        if banks:
            k.attrs["constant_banks"] = banks
        if skipped:
            k.attrs["constant_banks_relocated"] = skipped
        k.attrs["cubin_sha256"] = digest
    return kernels
