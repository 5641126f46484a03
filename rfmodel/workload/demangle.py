"""C++ (Itanium ABI) demangling of kernel names, for naming a kernel of a SASS listing.

A listing names each kernel by its mangled symbol (``_Z5saxpyifPKfPf``; CUB and thrust
instantiations run to hundreds of characters).  :func:`demangle_all` gives the readable forms
(``saxpy(int, float, float const*, float*)``) from the first demangler found:

1. ``__cxa_demangle`` of the C++ runtime already on the machine (``libstdc++``, ``libc++abi``),
   called in-process through :mod:`ctypes`;
2. the ``c++filt`` program (binutils or LLVM) on ``PATH``, one run for all names.

Without either, :func:`demangler` is ``None``, every name demangles to ``None`` and a kernel is
named by its mangled name or its index instead (:data:`NO_DEMANGLER` says so).
"""

from __future__ import annotations

import ctypes
import functools
import re
import shutil
import subprocess

#: the C++ runtimes whose ``__cxa_demangle`` is tried, in order
_RUNTIMES = ("libstdc++.so.6", "libc++abi.so.1", "libc++abi.dylib", "libc++.so.1")
#: the longest name handed to a demangler (longer ones are left mangled)
MAX_MANGLED = 16384
#: what an error says when no demangler was found
NO_DEMANGLER = (
    "no C++ demangler was found (the C++ runtime's __cxa_demangle or c++filt), so a kernel is named by "
    "its mangled name or index only"
)


def is_mangled(name: str) -> bool:
    """Whether ``name`` looks like an Itanium-ABI mangled symbol (``_Z...``)."""
    return name.startswith("_Z") and len(name) <= MAX_MANGLED and name.isascii() and name.isprintable()


@functools.lru_cache(maxsize=1)
def _cxa():
    """``(__cxa_demangle, free)`` of the first C++ runtime that loads; None when none does."""
    try:
        free = ctypes.CDLL(None).free
    except (OSError, AttributeError, TypeError):  # TypeError: a system without a process-wide handle
        return None
    free.argtypes, free.restype = [ctypes.c_void_p], None
    for lib in _RUNTIMES:
        try:
            fn = ctypes.CDLL(lib).__cxa_demangle
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        return fn, free
    return None


def _cxa_demangle(names: list[str]) -> list[str | None]:
    fn, free = _cxa()
    out: list[str | None] = []
    for name in names:
        status = ctypes.c_int(0)
        ptr = fn(name.encode("ascii"), None, None, ctypes.byref(status))
        if not ptr:
            out.append(None)
            continue
        try:
            text = ctypes.string_at(ptr).decode("utf-8", "replace")
        finally:
            free(ptr)
        out.append(text if status.value == 0 else None)
    return out


@functools.lru_cache(maxsize=1)
def _cxxfilt() -> str | None:
    return shutil.which("c++filt")


def _cxxfilt_demangle(names: list[str]) -> list[str | None]:
    try:
        run = subprocess.run(
            [_cxxfilt()],
            input="\n".join(names) + "\n",
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return [None] * len(names)
    lines = run.stdout.splitlines()
    if run.returncode != 0 or len(lines) != len(names):
        return [None] * len(names)
    # c++filt echoes what it cannot demangle
    return [None if got.strip() == name else got.strip() for name, got in zip(names, lines, strict=True)]


def demangler() -> str | None:
    """The demangler :func:`demangle_all` uses: ``"__cxa_demangle"``, ``"c++filt"``, or None (none found)."""
    if _cxa() is not None:
        return "__cxa_demangle"
    if _cxxfilt() is not None:
        return "c++filt"
    return None


#: names demangled so far (``None``: not demangled); cleared when it reaches :data:`_CACHE_SIZE`
_CACHE: dict[str, str | None] = {}
_CACHE_SIZE = 8192


def demangle(name: str) -> str | None:
    """The demangled form of one mangled name; None for a name that is not mangled (``extern "C"``
    kernels), that the demangler rejects, or when there is no demangler."""
    return demangle_all([name])[0]


def demangle_all(names: list[str]) -> list[str | None]:
    """:func:`demangle` of each name, with one demangler run for all those not seen before."""
    how = demangler()
    if how is None:
        return [None] * len(names)
    todo = sorted({n for n in names if is_mangled(n) and n not in _CACHE})
    if todo:
        if len(_CACHE) + len(todo) > _CACHE_SIZE:
            _CACHE.clear()
        run = _cxa_demangle if how == "__cxa_demangle" else _cxxfilt_demangle
        _CACHE.update(zip(todo, run(todo), strict=True))
    return [_CACHE.get(n) for n in names]


_SPACE = re.compile(r"\s+")
_LOOSE = re.compile(r" (?=\W)|(?<=\W) ")


def squash(text: str) -> str:
    """``text`` with the white space that carries no meaning dropped, so that demangled names written by
    different tools compare equal: ``"f<a<int> >(long, int)"`` and ``"f<a<int>>(long,int)"`` both give
    ``"f<a<int>>(long,int)"``; the space between two words (``unsigned int``) stays."""
    return _LOOSE.sub("", _SPACE.sub(" ", text.strip()))


_ANON = "(anonymous namespace)"


def short_name(text: str, width: int = 72) -> str:
    """A long (demangled) name cut to about ``width`` characters: template arguments and parameter lists
    elided (``void cub::DeviceReduceKernel<...>(...)``), then the end cut (``...``)."""
    if len(text) <= width:
        return text
    out, depth = [], 0
    for c in text.replace(_ANON, "\0"):
        if c in "<(":
            if depth == 0:
                out.append(c + "...")
            depth += 1
        elif c in ">)":
            depth -= 1
            if depth < 0:  # an operator< or > of its own: give up eliding
                out, depth = list(text), 0
                break
            if depth == 0:
                out.append(c)
        elif depth == 0:
            out.append(c)
    brief = "".join(out).replace("\0", _ANON) if depth == 0 else text
    return brief if len(brief) <= width else brief[: width - 3] + "..."
