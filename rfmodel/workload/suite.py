"""Workload names and loading: built-in kernels, synthetic presets, files.

A *workload reference* is one of

* the name of a built-in kernel (``saxpy``, ``sgemm_tiled`` ...; see
  :func:`builtin_names`), compiled SASS shipped with the package;
* ``synthetic:<preset>`` for a synthetic-generator preset
  (``synthetic:register-sensitive`` ...);
* ``expand:<name>`` / ``execute:<name>``: a built-in kernel with its trace made one given way
  (see below), e.g. to compare ``saxpy`` with ``expand:saxpy`` in one evaluation;
* a path to a SASS listing (``.sass``, ``.txt``: cuobjdump or nvdisasm
  output), to a cubin (``.cubin``, from ``nvcc -cubin``: read as its ``cuobjdump -sass -res-usage``
  listing, :mod:`rfmodel.workload.cubin`) or to an Accel-Sim trace (``kernel-*.traceg[.xz]``, a
  ``kernelslist.g`` or ``kernelslist``, or a directory holding one of these).  ``path:kernel`` picks one
  kernel of a file that holds several (:func:`split_kernel_choice`): a SASS listing's or cubin's kernel by
  its mangled or demangled name, a unique prefix of either, or its 0-based index ``#N``
  (:func:`choose_kernel`), an Accel-Sim list's by its trace file (``kernel-2.traceg`` or
  ``kernel-2``); a file with several kernels and no choice is read as its first kernel
  (SASS) or refused with the choices named (Accel-Sim: one trace is one kernel's launch).

:func:`load_workload` turns a reference into a :class:`Workload`: its static
kernel (if any) and its dynamic trace for one SM's share of the grid.  A built-in kernel's
trace is *executed* (:mod:`rfmodel.workload.execute.tracing`: its SASS run on its launch
recipe's inputs, values and addresses its own) where the executor runs it, and *expanded*
(:mod:`rfmodel.workload.expand`: modelled trip counts, branches and addresses) otherwise;
``trace_source`` chooses, and ``Workload.attrs["trace_source"]`` says which one made it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from rfmodel.errors import RfmodelError, UnknownNameError, expect_int
from rfmodel.ir import Kernel
from rfmodel.limits import MAX_NUM_SMS, MAX_SEED, MAX_WARPS
from rfmodel.trace import Trace, grid_share
from rfmodel.workload.manifest import kernels_dir, manifest

DEFAULT_ARCH = "sm_80"
ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90")
SYNTHETIC_PREFIX = "synthetic:"
#: how a built-in kernel's trace is made: ``auto`` executes it where the executor can (a launch
#: recipe, every instruction implemented) and expands it otherwise; ``execute`` insists on
#: execution; ``expand`` always expands
TRACE_SOURCES = ("auto", "execute", "expand")
#: a workload reference that starts with one of these takes that trace source
TRACE_PREFIXES = {"expand:": "expand", "execute:": "execute"}


#: a kernel run on a user's launch recipe: ``execute[RECIPE.toml]:FILE.sass:KERNEL`` (what ``--recipe`` and
#: ``recipe=`` make of a workload; :func:`with_recipe`)
RECIPE_PREFIX = "execute["


def split_recipe(ref: str) -> tuple[str | None, str]:
    """``("r.toml", "k.sass:gemm")`` for ``"execute[r.toml]:k.sass:gemm"``; ``(None, ref)`` without one."""
    if not ref.startswith(RECIPE_PREFIX):
        return None, ref
    i = ref.find("]:")
    if i <= len(RECIPE_PREFIX) or i + 2 >= len(ref):
        raise RfmodelError(
            f"workload '{ref}': expected execute[RECIPE.toml]:KERNEL (a launch recipe and the kernel it runs)"
        )
    return ref[len(RECIPE_PREFIX) : i], ref[i + 2 :]


def with_recipe(ref, recipe) -> str:
    """The workload reference of kernel ``ref`` (a SASS listing's or cubin's kernel, ``FILE.sass:KERNEL``
    or ``FILE.cubin:KERNEL``, or a shipped kernel) run on the launch recipe ``recipe`` (a TOML file,
    ``docs/execute.md``); ``ref`` itself when ``recipe`` is None."""
    if recipe is None:
        return ref
    if not isinstance(recipe, str | Path) or not str(recipe):
        raise RfmodelError(f"recipe: expected the path of a launch recipe (.toml), got {recipe!r}")
    if not isinstance(ref, str | Path):
        raise RfmodelError(f"recipe: a launch recipe runs one named kernel, not {ref!r}")
    ref = str(ref)
    if split_recipe(ref)[0] is not None or split_trace_prefix(ref)[1] is not None:
        raise RfmodelError(f"workload '{ref}': already says how its trace is made; --recipe cannot apply")
    if "]:" in str(recipe):
        raise RfmodelError(f"recipe: a path holding ']:' cannot name a recipe ({recipe})")
    return f"{RECIPE_PREFIX}{recipe}]:{ref}"


def reference_digest(ref: str) -> str | None:
    """SHA-1 of what a workload reference reads from files (a SASS listing or cubin; an Accel-Sim trace
    folder's files; a launch recipe and its data files), with the kernel a ``path:kernel`` reference picks,
    or None for a reference that names no file (a shipped kernel, a synthetic preset)."""
    import hashlib

    recipe, ref = split_recipe(ref)
    if ref.startswith((SYNTHETIC_PREFIX, *TRACE_PREFIXES)):
        return None
    h = hashlib.sha1()
    if recipe is not None:
        from rfmodel.workload.execute.recipe import load_recipe

        try:
            h.update(b"recipe\0" + load_recipe(recipe).digest.encode())
        except RfmodelError:
            return None  # the run says what is wrong with it
    try:
        name, which = split_kernel_choice(ref)
        if not path_exists(name):
            return None if recipe is None else h.hexdigest()
        p = Path(name)
        if p.is_file():
            files = [p]
        elif p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.is_file())
        else:
            return None
        if which:
            h.update(b"kernel\0" + which.encode())
        for f in files:
            h.update(f.name.encode())
            h.update(f.read_bytes())
        return h.hexdigest()
    except (OSError, ValueError):
        return None


def split_trace_prefix(ref: str) -> tuple[str, str | None]:
    """``("saxpy", "expand")`` for ``"expand:saxpy"``; ``(ref, None)`` without a prefix."""
    for prefix, how in TRACE_PREFIXES.items():
        if ref.startswith(prefix):
            return ref[len(prefix) :], how
    return ref, None


@dataclass
class Workload:
    name: str
    trace: Trace
    kernel: Kernel | None = None
    source: str = ""
    attrs: dict = field(default_factory=dict)


_kernels_dir = kernels_dir


#: the suites of shipped kernels (``rfmodel/workload/build_sass.py``): ``builtin``, the suite written for
#: rfmodel (the default workloads); ``papers``, the papers' benchmarks (kernels of the public suites the five
#: papers measure, written here)
SUITES = ("builtin", "papers")


def suite_names(suite: str = "builtin") -> list[str]:
    """The shipped kernels of ``suite`` (one of :data:`SUITES`, or ``all``)."""
    if suite != "all" and suite not in SUITES:
        raise UnknownNameError("suite", suite, [*SUITES, "all"])
    return sorted(n for n, e in manifest()["kernels"].items() if suite in ("all", e.get("suite", "builtin")))


def builtin_names() -> list[str]:
    """The built-in suite (the default workloads; the papers' benchmarks are :func:`suite_names`
    ``("papers")``)."""
    return suite_names("builtin")


def kernel_names() -> list[str]:
    """Every shipped kernel, of every suite: what a workload name may be."""
    return suite_names("all")


def synthetic_names() -> list[str]:
    from rfmodel.workload.synthetic import SYNTHETIC_PRESETS

    return [SYNTHETIC_PREFIX + k for k in sorted(SYNTHETIC_PRESETS)]


#: the papers whose studies run on the papers' benchmarks (``rfmodel study``), by their short names
PAPERS = ("ltrf", "corf", "malekeh", "stt", "cerf")
#: the public suites a paper names where its text names only some of its benchmarks: the LTRF paper's 35
#: workloads come from the CUDA SDK, Rodinia and Parboil; CORF's 20 from those and Tango's DNN layers (here
#: the DeepBench-shaped ones); Malekeh's from Rodinia and DeepBench.  The STT-RAM and CERF papers list every
#: benchmark they run (the kernels whose header names the paper).
PAPER_SUITES = {
    "ltrf": ("Rodinia", "Parboil", "CUDA SDK"),
    "corf": ("Rodinia", "Parboil", "CUDA SDK", "DeepBench"),
    "malekeh": ("Rodinia", "DeepBench"),
}


def paper_workloads(paper: str) -> list[str]:
    """The papers' benchmarks a paper's study runs: the kernels of the ``papers`` suite whose header names
    ``paper`` (one of :data:`PAPERS`), and for a paper that names only its suites (:data:`PAPER_SUITES`)
    every kernel of those suites."""
    if paper not in PAPERS:
        raise UnknownNameError("paper", paper, PAPERS)
    out = []
    for name in suite_names("papers"):
        orig = manifest()["kernels"][name]["original"]
        named = paper in orig["papers"]
        of_suite = any(orig["benchmark"].startswith(s) for s in PAPER_SUITES.get(paper, ()))
        if named or of_suite:
            out.append(name)
    return out


def default_workloads() -> list[str]:
    """The built-in suite (the default for ``rfmodel optimize`` and ``evaluate``)."""
    return builtin_names()


def rf_demand_table(sm, arch: str = DEFAULT_ARCH, suite: str = "builtin") -> dict[str, float]:
    """Per shipped kernel of ``suite``: the register file its maximum thread-level parallelism needs on
    ``sm``, as a multiple of the SM's (:func:`rfmodel.spec.occupancy.rf_demand`; the manifest's measured
    registers)."""
    from rfmodel.spec.occupancy import rf_demand

    if arch not in ARCHS:
        raise UnknownNameError("architecture", arch, ARCHS)
    out = {}
    for name in suite_names(suite):
        meta = manifest()["kernels"][name]
        res = meta["resources"][arch]
        out[name] = rf_demand(res["regs"], meta["threads_per_cta"], res["shared"], meta["ctas"], sm)
    return out


def builtin_sass_path(name: str, arch: str = DEFAULT_ARCH, flavor: str = "nvdisasm") -> Path:
    if name not in manifest()["kernels"]:
        raise UnknownNameError("built-in kernel", name, kernel_names())
    if arch not in ARCHS:
        raise UnknownNameError("architecture", arch, ARCHS)
    return Path(str(_kernels_dir().joinpath("sass", arch, f"{name}.{flavor}.sass")))


def load_kernel(ref: str, arch: str = DEFAULT_ARCH) -> Kernel:
    """The static kernel of a built-in name, synthetic preset, SASS listing or cubin (``path[:kernel]``)."""
    from rfmodel.workload.cubin import read_kernel_file
    from rfmodel.workload.sass import read_sass

    if ref.startswith(SYNTHETIC_PREFIX):
        return _synthetic(ref)[0]
    if ref in manifest()["kernels"]:
        meta = manifest()["kernels"][ref]
        kernels = read_sass(builtin_sass_path(ref, arch))
        k = _pick(kernels, meta.get("symbol", ref), ref)
        k.threads_per_cta = int(meta.get("threads_per_cta", k.threads_per_cta))
        k.ctas = int(meta.get("ctas", k.ctas))
        # static shared memory per CTA: the compiler's figure (an nvdisasm listing does not state it)
        k.shared_mem_bytes = max(int(k.shared_mem_bytes), int(meta["resources"][arch].get("shared", 0)))
        k.attrs["manifest"] = meta
        banks = _constant_banks(ref, arch)
        if banks:
            k.attrs["constant_banks"] = banks
        return k
    path, which = split_kernel_choice(ref)
    p = Path(path)
    if not path_exists(p):
        raise RfmodelError(
            f"workload '{ref}' is neither a shipped kernel (`rfmodel workload list --suite all`), "
            f"a synthetic preset ('synthetic:<preset>') nor an existing file"
        )
    kernels = read_kernel_file(p)
    return _pick(kernels, which, str(p)) if which else kernels[0]


def path_exists(path: str | Path) -> bool:
    """Whether ``path`` names an existing file or folder.  A path the system cannot look up at all (a
    component longer than the file system's name limit, ``ENAMETOOLONG``; a NUL byte) names none: the
    question is answered False instead of raising."""
    try:
        return Path(path).exists()
    except (OSError, ValueError):
        return False


def _is_dir(path: str | Path) -> bool:
    """``Path.is_dir`` that answers False where :func:`path_exists` does."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def split_kernel_choice(ref: str) -> tuple[str, str]:
    """``("dir/k.sass", "name")`` for ``"dir/k.sass:name"``: a file (or folder) and the kernel of it that a
    reference picks (``""``: none).  The choice follows the first ``:`` whose left part is an existing
    path; a reference that is itself an existing path, or has no such ``:``, picks nothing.  This is the
    one place a reference is split; the choice may be any text (a demangled name holds ``:``, spaces,
    ``<>``, and a mangled one may be longer than any file name), so every look-up is
    :func:`path_exists`, which never raises."""
    if path_exists(ref):
        return ref, ""
    i = ref.find(":")
    while i > 0:
        if path_exists(ref[:i]):
            return ref[:i], ref[i + 1 :]
        i = ref.find(":", i + 1)
    return ref, ""


#: file names of an Accel-Sim run's kernel list
KERNELSLIST_NAMES = ("kernelslist.g", "kernelslist")
_TRACEG_SUFFIXES = (".traceg", ".traceg.xz")


def is_accelsim_path(path: str | Path) -> bool:
    """Whether a path names an Accel-Sim trace: a ``.traceg[.xz]`` file, a kernel list or a folder."""
    p = Path(path)
    return _is_dir(p) or p.name.endswith(_TRACEG_SUFFIXES) or p.name in KERNELSLIST_NAMES


def accelsim_kernel(path: str | Path, which: str = "", ref: str | None = None) -> Path:
    """The one kernel trace file an Accel-Sim reference names: a ``.traceg[.xz]`` file itself; the trace
    a kernel list (``kernelslist.g``/``kernelslist``) names; in a folder, its kernel list or else its
    ``kernel-*.traceg[.xz]`` files.  ``which`` picks one of several by file name (``kernel-2.traceg``
    or ``kernel-2``); several without a choice, a choice not among them, or a listed file that is
    missing is one :class:`RfmodelError`."""
    from rfmodel.workload.accelsim import read_kernelslist

    p = Path(path)
    ref = ref or str(path)
    lists = [p / n for n in KERNELSLIST_NAMES if (p / n).is_file()] if _is_dir(p) else []
    if p.name in KERNELSLIST_NAMES or lists:
        listing = lists[0] if lists else p
        if not path_exists(listing):
            raise RfmodelError(f"{ref}: no such file")
        files = read_kernelslist(listing)
        if not files:
            raise RfmodelError(f"{listing}: lists no kernel trace (expected 'kernel-*.traceg' lines)")
        missing = [f for f in files if not path_exists(f)]
        if missing:
            raise RfmodelError(
                f"{listing}: lists '{missing[0].name}', which does not exist ({missing[0]}[.xz])"
            )
    elif _is_dir(p):
        files = [f for f in p.glob("kernel-*") if f.name.endswith(_TRACEG_SUFFIXES)]
        files.sort(key=_kernel_order)
        if not files:
            raise RfmodelError(f"{ref}: no kernelslist.g and no kernel-*.traceg[.xz] file in this directory")
    else:
        if not path_exists(p):
            raise RfmodelError(f"{ref}: no such file")
        files = [p]
    names = [f.name for f in files]
    if which:
        for f in files:
            if which in (f.name, _trace_stem(f.name)):
                return f
        raise UnknownNameError(f"kernel in {path}", which, names)
    if len(files) > 1:
        raise RfmodelError(
            f"{ref}: holds {len(files)} kernel traces and a workload is one kernel; pick one as "
            f"'{path}:<kernel>' with <kernel> one of {', '.join(names)}"
        )
    return files[0]


def _trace_stem(name: str) -> str:
    for suffix in _TRACEG_SUFFIXES[::-1]:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _kernel_order(path: Path):
    """``kernel-2`` before ``kernel-10``: the number in a trace file's name, then the name."""
    num = _trace_stem(path.name).rpartition("-")[2]
    return (int(num) if num.isdigit() else math.inf, path.name)


def _constant_banks(name: str, arch: str) -> dict:
    """The compiler-generated constant banks of a built-in kernel (``{bank: uint8 array}``; a
    ``switch``'s jump table in bank 2), from the ``.cbank.json`` beside its SASS (none: ``{}``)."""
    import numpy as np

    p = Path(str(_kernels_dir().joinpath("sass", arch, f"{name}.cbank.json")))
    if not p.exists():
        return {}
    doc = json.loads(p.read_text(encoding="utf-8"))
    return {int(b): np.frombuffer(bytes.fromhex(h), np.uint8) for b, h in doc["banks"].items()}


#: how a kernel choice names a kernel by position: ``#0`` is a listing's first kernel (0-based, the
#: order of the listing and of ``rfmodel workload info FILE``)
KERNEL_INDEX = "#"
#: the most kernels an error about a choice lists
CHOICES_SHOWN = 12
#: how to name a kernel, as the errors about a choice say it
CHOICE_FORMS = (
    f"name one by its mangled or demangled name, a unique prefix of either, or its index "
    f"'{KERNEL_INDEX}N' ('{KERNEL_INDEX}0' is the first)"
)


class UnknownKernelError(UnknownNameError):
    """A kernel choice that names none of a listing's kernels (its message lists them, shortened)."""

    def __init__(self, where: str, name: str, known: list[str], message: str):
        self.kind, self.name, self.known = f"kernel in {where}", name, list(known)
        RfmodelError.__init__(self, message)


def choose_kernel(names: list[str], which: str, where: str) -> int:
    """The index of the kernel that a choice ``which`` names among a listing's kernel ``names`` (mangled,
    in listing order); ``where`` names the listing in errors.  In order:

    1. ``#N``: the N-th kernel, 0-based (``#0`` is the first);
    2. a mangled name, exactly;
    3. a demangled name, exactly, with or without its leading ``void`` (the demangler of
       :mod:`rfmodel.workload.demangle`; white space that carries no meaning is ignored, so
       ``f<a<int> >(long, int)`` and ``f<a<int>>(long,int)`` are the same);
    4. a prefix of one kernel's mangled or demangled name (with or without ``void``).

    A choice that names no kernel, or whose prefix or demangled name fits several, is one
    :class:`RfmodelError` (:class:`UnknownKernelError` for none) that lists the candidates by index
    and shortened demangled name."""
    from rfmodel.workload.demangle import NO_DEMANGLER, demangle_all, demangler, squash

    digits = which[len(KERNEL_INDEX) :]
    if which.startswith(KERNEL_INDEX) and digits.isascii() and digits.isdigit():
        i = int(digits) if len(digits) < 19 else len(names)
        if i < len(names):
            return i
        raise UnknownKernelError(
            where,
            which,
            names,
            f"no kernel '{_echo(which)}' in {where}: it holds {len(names)} kernel{'s' * (len(names) != 1)}, "
            f"'{KERNEL_INDEX}0' to '{KERNEL_INDEX}{len(names) - 1}' (0-based)",
        )
    for i, n in enumerate(names):
        if n == which:
            return i
    dem = demangle_all(names)
    want = squash(which)
    forms = [_forms(n, d, squash) for n, d in zip(names, dem, strict=True)]
    exact = [i for i, fs in enumerate(forms) if want in fs[1:]]
    if len(exact) == 1:
        return exact[0]
    hits = exact or [i for i, fs in enumerate(forms) if want and any(f.startswith(want) for f in fs)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise RfmodelError(
            f"kernel '{_echo(which)}' in {where} is ambiguous: it fits {len(hits)} of its {len(names)} "
            f"kernels: {_candidates(hits, names, dem)}; {CHOICE_FORMS}"
        )
    note = f" ({NO_DEMANGLER})" if demangler() is None and any(n.startswith("_Z") for n in names) else ""
    raise UnknownKernelError(
        where,
        which,
        names,
        f"unknown kernel in {where} '{_echo(which)}': it holds {len(names)} kernel{'s' * (len(names) != 1)}: "
        f"{_candidates(range(len(names)), names, dem)}; {CHOICE_FORMS}{note}",
    )


def _forms(name: str, demangled: str | None, squash) -> tuple[str, ...]:
    """The texts a choice may give for one kernel: its mangled name first, then its squashed demangled
    name with and without a leading ``void``."""
    if not demangled:
        return (name,)
    d = squash(demangled)
    return (name, d, d[5:]) if d.startswith("void ") else (name, d)


def _echo(text: str, width: int = 100) -> str:
    """A choice as an error repeats it: cut to ``width`` characters."""
    return text if len(text) <= width else text[: width - 3] + "..."


def _candidates(indices, names: list[str], dem: list) -> str:
    """``#0 saxpy(int, float, float const*, float*), #1 void cub::...::DeviceReduceKernel<...>(...)``: some
    kernels by index and shortened name (demangled where it can be), at most :data:`CHOICES_SHOWN`."""
    from rfmodel.workload.demangle import short_name

    indices = list(indices)
    shown = [f"{KERNEL_INDEX}{i} {short_name(dem[i] or names[i])}" for i in indices[:CHOICES_SHOWN]]
    more = len(indices) - CHOICES_SHOWN
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def kernel_table(names: list[str]) -> list[dict]:
    """One row per kernel of a listing: ``{"index", "name", "demangled"}`` (``demangled``: None for a name
    that is not mangled or without a demangler)."""
    from rfmodel.workload.demangle import demangle_all

    rows = zip(names, demangle_all(names), strict=True)
    return [{"index": i, "name": n, "demangled": d} for i, (n, d) in enumerate(rows)]


def _pick(kernels: list[Kernel], name: str, where: str) -> Kernel:
    """The kernel of ``kernels`` (a listing's, in order) that the choice ``name`` names
    (:func:`choose_kernel`)."""
    return kernels[choose_kernel([k.name for k in kernels], name, where)]


def _synthetic(ref: str):
    from rfmodel.workload.synthetic import SYNTHETIC_PRESETS, generate

    preset = ref[len(SYNTHETIC_PREFIX) :]
    if preset not in SYNTHETIC_PRESETS:
        raise UnknownNameError("synthetic preset", preset, SYNTHETIC_PRESETS)
    return generate(SYNTHETIC_PRESETS[preset], seed=0)


#: trip count of loops nested inside another loop, unless the manifest says otherwise
INNER_TRIP = 8


def builtin_profile(kernel: Kernel):
    """The control-flow profile of a built-in kernel.

    The manifest's ``trip`` is the trip count of each outermost loop; loops
    nested inside another take ``min(trip, INNER_TRIP)`` (or the manifest's
    ``inner`` value), so that nests do not multiply a per-kernel figure meant
    for the main loop.
    """
    from rfmodel.compiler.cfg import function_names, natural_loops
    from rfmodel.workload.expand import Profile

    meta = kernel.attrs.get("manifest")
    if not meta:
        return None
    trips = meta.get("loop_trip_counts", {})
    outer = int(trips.get("default", 8))
    inner = int(trips.get("inner", min(outer, INNER_TRIP)))
    counts = {}
    for f in function_names(kernel):
        for lp in natural_loops(kernel, f):
            for latch in lp.latches:
                counts[kernel.blocks[latch].end - 1] = outer if lp.depth == 1 else inner
    return Profile(
        trip_counts=counts,
        default_trip_count=outer,
        source=f"manifest of built-in kernel '{kernel.name}': outer loops {outer}, nested {inner}",
    )


def ctas_per_sm(kernel: Kernel, num_sms: int) -> int:
    """One SM's share of the grid (CTAs are spread evenly over the SMs)."""
    return max(1, math.ceil(kernel.ctas / max(num_sms, 1)))


def load_workload(
    ref: str,
    *,
    arch: str = DEFAULT_ARCH,
    num_sms: int = 1,
    seed: int = 0,
    max_warps: int | None = None,
    line_bytes: int = 128,
    on_cap: str = "error",
    max_warp_instrs: int | None = None,
    trace_source: str = "auto",
) -> Workload:
    """Load a workload reference and expand it into one SM's dynamic trace.

    ``on_cap``: a warp beyond the expansion limit (``max_warp_instrs``, default the profile's
    ``Profile.max_warp_instrs``) is an error (``ExpansionLimitError``) or, with ``"truncate"``, cut there
    with a warning.  ``trace_source``: one of :data:`TRACE_SOURCES` (built-in kernels only; SASS
    files and synthetic workloads are expanded)."""
    if isinstance(ref, Workload):
        return ref
    if not isinstance(ref, str | Path):
        raise RfmodelError(f"workload: expected a name or a path (got {ref!r})")
    num_sms = expect_int("num_sms", num_sms, low=1, high=MAX_NUM_SMS)
    seed = expect_int("seed", seed, low=0, high=MAX_SEED)
    max_warps = expect_int("max_warps", max_warps, low=1, high=MAX_WARPS, optional=True)
    line_bytes = expect_int("line_bytes", line_bytes, low=4)
    if trace_source not in TRACE_SOURCES:
        raise UnknownNameError("trace source", trace_source, TRACE_SOURCES)
    if not isinstance(arch, str):
        raise RfmodelError(f"arch: expected a name such as 'sm_80' (got {arch!r})")
    ref = str(ref)
    recipe, kernel_ref = split_recipe(ref)
    if recipe is not None:
        if trace_source == "expand":
            raise RfmodelError(
                f"workload '{ref}': a launch recipe executes the kernel; trace_source 'expand' contradicts it"
            )
        return _recipe_workload(ref, recipe, kernel_ref, arch, num_sms, seed, max_warps, line_bytes)
    full = ref
    ref, chosen = split_trace_prefix(ref)
    if chosen is not None:
        if trace_source not in ("auto", chosen):
            raise RfmodelError(
                f"workload '{full}': its prefix asks for '{chosen}', trace_source for '{trace_source}'"
            )
        if ref not in manifest()["kernels"]:
            raise RfmodelError(
                f"workload '{full}': the prefix '{full[: len(full) - len(ref)]}' applies to built-in "
                "kernels only"
            )
        trace_source = chosen
    path, which = (ref, "") if ref.startswith(SYNTHETIC_PREFIX) else split_kernel_choice(ref)
    if chosen is None and ref in manifest()["kernels"] and path_exists(ref):
        raise RfmodelError(
            f"workload '{ref}' names a shipped kernel and a file or folder here: write ./{ref} for the "
            f"file or folder, execute:{ref} or expand:{ref} for the shipped kernel"
        )
    if chosen is None and not ref.startswith(SYNTHETIC_PREFIX) and is_accelsim_path(path):
        from rfmodel.workload.accelsim import read_traceg

        p = accelsim_kernel(path, which, ref)
        trace = read_traceg(p)
        name = p.parent.name or p.stem
        # the whole grid cut to SM 0's share, then to max_warps' CTAs: what both engines run
        trace = grid_share(trace, num_sms, max_warps)
        attrs = {"ctas_per_sm": trace.attrs["ctas_per_sm"], "trace_source": "trace file"}
        return Workload(
            name=f"{name}:{_trace_stem(p.name)}" if which else name, trace=trace, source=str(p), attrs=attrs
        )
    if ref.startswith(SYNTHETIC_PREFIX):
        kernel, profile = _synthetic(ref)
        name = ref
    else:
        kernel = load_kernel(ref, arch)
        profile = builtin_profile(kernel)
        name = full if ref in manifest()["kernels"] else kernel.name
    share = ctas_per_sm(kernel, num_sms)
    how = "expand"
    if trace_source != "expand" and kernel is not None and ref in manifest()["kernels"]:
        wpc = -(-kernel.threads_per_cta // 32)
        n_ctas = share if max_warps is None else max(1, min(share, max_warps // wpc))
        trace, how = executed_builtin(ref, arch, n_ctas, line_bytes, seed, strict=trace_source == "execute")
        if trace is not None:
            return _workload(name, trace, kernel, ref, arch, seed, share, how)
    elif trace_source == "execute":
        raise RfmodelError(f"workload '{ref}': only built-in kernels have launch recipes to execute")
    if on_cap != "error" or max_warp_instrs is not None:
        import dataclasses

        from rfmodel.workload.expand import Profile

        cap = (
            {}
            if max_warp_instrs is None
            else {"max_warp_instrs": expect_int("max_warp_instrs", max_warp_instrs, low=1)}
        )
        profile = dataclasses.replace(profile or Profile(), on_cap=on_cap, **cap)
    from rfmodel.workload.expand import expand  # here: an Accel-Sim or executed trace needs no expansion

    trace = expand(kernel, profile, ctas=share, max_warps=max_warps, seed=seed, line_bytes=line_bytes)
    return _workload(name, trace, kernel, ref, arch, seed, share, how)


def _recipe_workload(full, recipe_path, ref, arch, num_sms, seed, max_warps, line_bytes) -> Workload:
    """A kernel run on a user's launch recipe: the executed trace of the SM's share of the recipe's grid
    (CTAs spread evenly over ``num_sms`` SMs, then cut to ``max_warps``' whole CTAs), cached on disk by the
    contents of the listing, the recipe and its data files."""
    import dataclasses

    from rfmodel.cache import TRACE_SOURCES, keyed_entry, read_entry, source_hash, write_entry
    from rfmodel.workload.execute.recipe import load_recipe
    from rfmodel.workload.execute.tracing import executed_trace

    path, which = ("", "") if ref.startswith(SYNTHETIC_PREFIX) else split_kernel_choice(ref)
    if ref.startswith(SYNTHETIC_PREFIX) or is_accelsim_path(path):
        raise RfmodelError(
            f"workload '{full}': a launch recipe runs a SASS kernel (a listing's kernel or a "
            "shipped kernel), not a synthetic workload or an Accel-Sim trace"
        )
    recipe = load_recipe(recipe_path)
    if ref not in manifest()["kernels"] and not which:
        ref = f"{ref}:{recipe.kernel}"  # the listing's kernel the recipe names
    kernel = load_kernel(ref, arch)
    check_recipe_kernel(recipe, ref, kernel, arch, f"workload '{full}'")
    kernel.threads_per_cta = math.prod(recipe.block)
    kernel.ctas = math.prod(recipe.grid)
    if recipe.shared_bytes is not None:  # the launch's shared memory, as the executor takes it
        kernel.shared_mem_bytes = int(recipe.shared_bytes)
    share = ctas_per_sm(kernel, num_sms)
    wpc = -(-kernel.threads_per_cta // 32)
    n_ctas = share if max_warps is None else max(1, min(share, max_warps // wpc))
    # keyed by the recipe's contents (read once, above) and the listing's bytes (None: a shipped kernel,
    # which the code hash covers)
    parts = [
        "recipe",
        recipe.digest,
        reference_digest(ref),
        ref,
        arch,
        n_ctas,
        line_bytes,
        seed,
        source_hash(*TRACE_SOURCES),
    ]
    stored = keyed_entry("traces", parts, ".npz")
    trace = read_entry(stored, Trace.load)
    if trace is None:
        trace = executed_trace(
            kernel, dataclasses.replace(recipe, seed=recipe.seed + seed), ctas=n_ctas, line_bytes=line_bytes
        )
        trace.attrs.update(seed=int(seed), recipe=str(recipe_path))
        write_entry(stored, trace)
    wl = _workload(kernel.name, trace, kernel, ref, arch, seed, share, "execute")
    wl.attrs["recipe"] = str(recipe_path)
    return wl


def check_recipe_kernel(recipe, ref: str, kernel: Kernel, arch: str, where: str) -> None:
    """Refuse a launch recipe run on another kernel than the one it names (``kernel = "..."``): a shipped
    kernel by its name, a listing's kernel by any name that picks it (the recipe's parameters and arrays
    are that kernel's)."""
    if ref in manifest()["kernels"]:
        same = recipe.kernel in (ref, kernel.name)
    else:
        path, _which = split_kernel_choice(ref)
        try:
            same = load_kernel(f"{path}:{recipe.kernel}", arch).name == kernel.name
        except RfmodelError:
            same = False
    if not same:
        raise RfmodelError(
            f"{where}: the launch recipe is for kernel '{recipe.kernel}', and the kernel named is "
            f"'{kernel.name}': name the recipe's kernel, or give a recipe for this one"
        )


def trace_source_of(wl: Workload) -> str:
    """How a workload's trace was made, as results state it (``trace_source``): ``execute`` (the executor
    ran the kernel on a launch recipe: a shipped kernel's or the user's, ``execute (recipe r.toml)``),
    ``expand`` (walked from the static code; with the reason where execution was not possible),
    ``trace file`` (an Accel-Sim trace) or ``given`` (a :class:`Workload` built by the caller)."""
    how = wl.attrs.get("trace_source")
    if how is None:
        return "given"
    recipe = wl.attrs.get("recipe")
    return f"{how} (recipe {recipe})" if recipe else how


def _workload(name, trace, kernel, ref, arch, seed, share, how) -> Workload:
    return Workload(
        name=name,
        trace=trace,
        kernel=kernel,
        source=kernel.source or ref,
        attrs={"arch": arch, "seed": seed, "ctas_per_sm": share, "trace_source": how},
    )


#: the largest problem scale :func:`trace_recipe` goes to, and the most warp-instructions per CTA
#: it lets a larger scale reach
MAX_TRACE_SCALE = 512.0
MAX_TRACE_CTA_INSTRS = 250_000
#: the most input bytes (all of the recipe's arrays) :func:`trace_recipe` lets a larger scale reach
MAX_TRACE_INPUT_BYTES = 64 << 20
#: doublings without a longer main loop after which :func:`trace_recipe` stops looking
TRACE_STALL_DOUBLINGS = 4


def trace_recipe(kernel: Kernel, ctas: int):
    """The launch recipe of a built-in kernel for its executed trace: ``(recipe, scale, trip)``.

    The launch is the manifest's: its grid (where the recipe takes a grid; otherwise the grid that the
    problem size gives, at least ``ctas`` CTAs) and a problem size at which the kernel's main loop runs
    the manifest's typical trip count (``loop_trip_counts.default``, the figure trace expansion uses),
    found by doubling the recipe's scale from 1 and running one CTA at each size; ``trip`` is the
    measured trip count of the outermost loops (per warp, the most of them), ``inf`` for a kernel
    without loops. Of the sizes tried, the one whose trip count is nearest the manifest's (by ratio) is
    taken; among equals, the smallest at which a CTA does 90 % of the most work seen (a kernel whose
    main loop does not follow the size: its threads busy). The doubling stops once the trip count
    reaches the manifest's, after :data:`TRACE_STALL_DOUBLINGS` doublings that do not lengthen a loop
    that already runs more than once (a loop over a fixed structure), at :data:`MAX_TRACE_SCALE`, and
    before a CTA would execute more than :data:`MAX_TRACE_CTA_INSTRS` warp-instructions or the inputs
    would exceed :data:`MAX_TRACE_INPUT_BYTES`."""
    import numpy as np

    from rfmodel.compiler.cfg import function_names, natural_loops
    from rfmodel.workload.execute.builtin import builtin_recipe
    from rfmodel.workload.execute.decode import decode_kernel
    from rfmodel.workload.execute.recipe import run_recipe

    name = kernel.name
    meta = manifest()["kernels"][name]
    grid_m = int(meta["ctas"])
    want = int(meta.get("loop_trip_counts", {}).get("default", 8))
    latches = [
        kernel.blocks[x].end - 1
        for f in function_names(kernel)
        for lp in natural_loops(kernel, f)
        if lp.depth == 1
        for x in lp.latches
    ]
    dec = decode_kernel(kernel)
    # a probe's answer depends on the kernel, its recipe at that scale and the code only: kept on disk, so
    # a trace for another CTA count (another GPU's share) or a later process does not run it again
    known = _probes_read(name, kernel.arch, grid_m)
    fresh = []

    def probe(r, at):
        key = (round(at, 9), tuple(int(g) for g in r.grid))
        if key in known:
            return known[key]
        res, _ = run_recipe(dec, r, record=1, record_capacity=1)
        warps = max(1, res.per_warp.shape[1])
        trip = max((res.per_instruction[i] / warps for i in latches), default=float("inf"))
        known[key] = (float(trip), int(res.warp_instructions))
        fresh.append(key)
        return known[key]

    scale = 1.0
    recipe = builtin_recipe(name, scale, grid_m)
    while int(np.prod(recipe.grid)) < ctas and scale < MAX_TRACE_SCALE:
        scale *= 2
        recipe = builtin_recipe(name, scale, grid_m)
    trip, work = probe(recipe, scale)

    def miss(t):  # how far a trip count is from the manifest's, by ratio
        return abs(math.log(max(t, 1e-3) / want)) if math.isfinite(t) else 0.0

    tried = [(miss(trip), work, scale, recipe, trip)]
    stalled, last = 0, trip
    while last < want and scale < MAX_TRACE_SCALE and stalled < TRACE_STALL_DOUBLINGS:
        scale *= 2
        bigger = builtin_recipe(name, scale, grid_m)
        size = sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in bigger.arrays.values())
        if size > MAX_TRACE_INPUT_BYTES:
            break
        t2, w2 = probe(bigger, scale)
        if w2 > MAX_TRACE_CTA_INSTRS:
            break
        # a loop that runs at most once is a problem smaller than the grid: that is no stall
        stalled = stalled + 1 if (t2 <= last and last > 1) else 0
        last = t2
        tried.append((miss(t2), w2, scale, bigger, t2))
    # the nearest trip count; among equals (a kernel whose main loop does not show the size), the
    # smallest size at which a CTA does at least 90 % of the most work seen (its threads all busy)
    near = min(t[0] for t in tried)
    ties = [t for t in tried if t[0] <= near + 1e-9]
    most = max(t[1] for t in ties)
    _, _, scale, recipe, trip = next(t for t in ties if t[1] >= 0.9 * most)
    if fresh:
        _probes_write(name, kernel.arch, grid_m, known)
    return recipe, scale, trip


#: kind and format version of the kept probes of :func:`trace_recipe` (:mod:`rfmodel.datafile`)
_PROBES_KIND, _PROBES_VERSION = "rfmodel trace-recipe probes", 1


def _probes_entry(name: str, arch: str, grid_m: int):
    from rfmodel.cache import TRACE_SOURCES, keyed_entry, source_hash

    return keyed_entry("trace-probes", [name, arch, int(grid_m), source_hash(*TRACE_SOURCES)], ".npz")


def _probes_read(name: str, arch: str, grid_m: int) -> dict:
    """The probes of :func:`trace_recipe` kept on disk: ``{(scale, grid): (trip, warp-instructions)}``
    (empty when there are none or the entry cannot be used)."""
    from rfmodel.cache import read_entry
    from rfmodel.datafile import read_checked

    def load(path):
        _, a = read_checked(path, _PROBES_KIND, _PROBES_VERSION)
        grids = [tuple(int(x) for x in g[g > 0]) for g in a["grid"]]
        return {
            (float(s), g): (float(t), int(w))
            for s, g, t, w in zip(a["scale"], grids, a["trip"], a["work"], strict=True)
        }

    return read_entry(_probes_entry(name, arch, grid_m), load) or {}


def _probes_write(name: str, arch: str, grid_m: int, known: dict) -> None:
    import numpy as np

    from rfmodel.cache import write_with
    from rfmodel.datafile import write_checked

    keys = sorted(known)
    grid = np.zeros((len(keys), 3), np.int64)
    for i, (_, g) in enumerate(keys):
        grid[i, : len(g)] = g
    arrays = {
        "scale": np.array([k[0] for k in keys]),
        "grid": grid,
        "trip": np.array([known[k][0] for k in keys]),
        "work": np.array([known[k][1] for k in keys]),
    }

    def save(path):
        write_checked(path, _PROBES_KIND, _PROBES_VERSION, arrays, {"kernel": name})

    write_with(_probes_entry(name, arch, grid_m), save)


def executed_builtin(
    name: str, arch: str, ctas: int, line_bytes: int, seed: int = 0, *, strict: bool = False
) -> tuple[Trace | None, str]:
    """The executed trace of built-in kernel ``name`` (``ctas`` CTAs of its trace recipe, inputs
    drawn with the recipe's seed + ``seed``), from the on-disk cache when it holds it; returns
    ``(trace, "execute")``, or ``(None, reason)`` when the kernel cannot be executed (no recipe,
    an instruction the executor lacks: :data:`~rfmodel.workload.execute.builtin.KNOWN_GAPS`),
    which ``strict`` turns into an error."""
    import dataclasses

    from rfmodel.cache import TRACE_SOURCES, keyed_entry, read_entry, source_hash, write_entry
    from rfmodel.workload.execute.builtin import KNOWN_GAPS, RECIPES
    from rfmodel.workload.execute.errors import ExecutionError
    from rfmodel.workload.execute.tracing import executed_trace

    if name not in RECIPES:
        why = f"expand: '{name}' has no launch recipe"
        if strict:
            raise RfmodelError(f"workload '{name}': no launch recipe to execute")
        return None, why
    if (name, arch) in KNOWN_GAPS and not strict:
        return None, f"expand: the executor cannot run it yet ({KNOWN_GAPS[(name, arch)]})"
    stored = keyed_entry("traces", [name, arch, ctas, line_bytes, seed, source_hash(*TRACE_SOURCES)], ".npz")
    cached = read_entry(stored, Trace.load)  # None when absent or damaged: execute again
    if cached is not None:
        return cached, "execute"
    kernel = load_kernel(name, arch)
    try:
        recipe, scale, trip = trace_recipe(kernel, ctas)
        recipe = dataclasses.replace(recipe, seed=recipe.seed + seed)
        trace = executed_trace(kernel, recipe, ctas=ctas, line_bytes=line_bytes)
    except ExecutionError as e:
        if strict:
            raise
        return None, f"expand: execution failed ({e})"
    trace.attrs.update(seed=int(seed), recipe_scale=scale, main_loop_trip=trip)
    write_entry(stored, trace)
    return trace, "execute"
