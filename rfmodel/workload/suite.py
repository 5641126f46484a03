"""Workload names and loading: built-in kernels, synthetic presets, files.

A *workload reference* is one of

* the name of a built-in kernel (``saxpy``, ``sgemm_tiled`` ...; see
  :func:`builtin_names`), compiled SASS shipped with the package;
* ``synthetic:<preset>`` for a synthetic-generator preset
  (``synthetic:register-sensitive`` ...);
* a path to a SASS listing (``.sass``, ``.txt``: cuobjdump or nvdisasm
  output; ``path.sass:kernel`` picks one kernel of several) or to an Accel-Sim
  trace (``kernel-*.traceg[.xz]``, or a directory with ``kernelslist.g``).

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
from rfmodel.workload.ir import Kernel
from rfmodel.workload.manifest import kernels_dir, manifest
from rfmodel.workload.trace import Trace

DEFAULT_ARCH = "sm_80"
ARCHS = ("sm_75", "sm_80", "sm_90")
SYNTHETIC_PREFIX = "synthetic:"
#: how a built-in kernel's trace is made: ``auto`` executes it where the executor can (a launch
#: recipe, every instruction implemented) and expands it otherwise; ``execute`` insists on
#: execution; ``expand`` always expands
TRACE_SOURCES = ("auto", "execute", "expand")


@dataclass
class Workload:
    name: str
    trace: Trace
    kernel: Kernel | None = None
    source: str = ""
    attrs: dict = field(default_factory=dict)


_kernels_dir = kernels_dir


def builtin_names() -> list[str]:
    return sorted(manifest()["kernels"])


def synthetic_names() -> list[str]:
    from rfmodel.workload.synthetic import SYNTHETIC_PRESETS

    return [SYNTHETIC_PREFIX + k for k in sorted(SYNTHETIC_PRESETS)]


def default_workloads() -> list[str]:
    """The built-in suite (the default for ``rfmodel optimize`` and ``evaluate``)."""
    return builtin_names()


def rf_demand_table(sm, arch: str = DEFAULT_ARCH) -> dict[str, float]:
    """Per built-in kernel: the register file its maximum thread-level parallelism needs on ``sm``, as a
    multiple of the SM's (:func:`rfmodel.spec.occupancy.rf_demand`; the manifest's measured registers)."""
    from rfmodel.spec.occupancy import rf_demand

    if arch not in ARCHS:
        raise UnknownNameError("architecture", arch, ARCHS)
    out = {}
    for name in builtin_names():
        meta = manifest()["kernels"][name]
        res = meta["resources"][arch]
        out[name] = rf_demand(res["regs"], meta["threads_per_cta"], res["shared"], meta["ctas"], sm)
    return out


def builtin_sass_path(name: str, arch: str = DEFAULT_ARCH, flavor: str = "nvdisasm") -> Path:
    if name not in manifest()["kernels"]:
        raise UnknownNameError("built-in kernel", name, builtin_names())
    if arch not in ARCHS:
        raise UnknownNameError("architecture", arch, ARCHS)
    return Path(str(_kernels_dir().joinpath("sass", arch, f"{name}.{flavor}.sass")))


def load_kernel(ref: str, arch: str = DEFAULT_ARCH) -> Kernel:
    """The static kernel of a built-in name, synthetic preset or SASS path."""
    from rfmodel.workload.sass import read_sass

    if ref.startswith(SYNTHETIC_PREFIX):
        return _synthetic(ref)[0]
    if ref in manifest()["kernels"]:
        meta = manifest()["kernels"][ref]
        kernels = read_sass(builtin_sass_path(ref, arch))
        k = _pick(kernels, meta.get("symbol", ref), ref)
        k.threads_per_cta = int(meta.get("threads_per_cta", k.threads_per_cta))
        k.ctas = int(meta.get("ctas", k.ctas))
        k.attrs["manifest"] = meta
        return k
    path, _, which = ref.partition(".sass:") if ".sass:" in ref else (ref, "", "")
    if which:
        path += ".sass"
    p = Path(path)
    if not p.exists():
        raise RfmodelError(
            f"workload '{ref}' is neither a built-in kernel ({', '.join(builtin_names()) or 'none'}), "
            f"a synthetic preset ('synthetic:<preset>') nor an existing file"
        )
    kernels = read_sass(p)
    return _pick(kernels, which, str(p)) if which else kernels[0]


def _pick(kernels: list[Kernel], name: str, where: str) -> Kernel:
    for k in kernels:
        if k.name == name:
            return k
    raise UnknownNameError(f"kernel in {where}", name, [k.name for k in kernels])


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
    from rfmodel.workload.expand import expand

    if isinstance(ref, Workload):
        return ref
    if not isinstance(ref, str | Path):
        raise RfmodelError(f"workload: expected a name or a path (got {ref!r})")
    num_sms = expect_int("num_sms", num_sms, low=1)
    seed = expect_int("seed", seed, low=0)
    max_warps = expect_int("max_warps", max_warps, low=1, optional=True)
    line_bytes = expect_int("line_bytes", line_bytes, low=4)
    if trace_source not in TRACE_SOURCES:
        raise UnknownNameError("trace source", trace_source, TRACE_SOURCES)
    if not isinstance(arch, str):
        raise RfmodelError(f"arch: expected a name such as 'sm_80' (got {arch!r})")
    ref = str(ref)
    p = Path(ref)
    if p.is_dir() or ref.endswith((".traceg", ".traceg.xz")):
        from rfmodel.workload.accelsim import read_traceg

        if p.is_dir():
            files = sorted(p.glob("kernel-*.traceg*"))
            if not files:
                raise RfmodelError(f"{ref}: no kernel-*.traceg[.xz] file in this directory")
            p = files[0]
        if not p.exists():
            raise RfmodelError(f"{ref}: no such file")
        trace = read_traceg(p)
        return Workload(name=p.parent.name or p.stem, trace=trace, source=str(p))
    if ref.startswith(SYNTHETIC_PREFIX):
        kernel, profile = _synthetic(ref)
        name = ref
    else:
        kernel = load_kernel(ref, arch)
        profile = builtin_profile(kernel)
        name = ref if ref in manifest()["kernels"] else kernel.name
    share = ctas_per_sm(kernel, num_sms)
    how = "expand"
    if trace_source != "expand" and kernel is not None and name in manifest()["kernels"]:
        wpc = -(-kernel.threads_per_cta // 32)
        n_ctas = share if max_warps is None else max(1, min(share, max_warps // wpc))
        trace, how = executed_builtin(name, arch, n_ctas, line_bytes, seed, strict=trace_source == "execute")
        if trace is not None:
            return Workload(
                name=name,
                trace=trace,
                kernel=kernel,
                source=kernel.source or ref,
                attrs={"arch": arch, "seed": seed, "ctas_per_sm": share, "trace_source": how},
            )
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
    trace = expand(
        kernel,
        profile,
        ctas=share,
        max_warps=max_warps,
        seed=seed,
        line_bytes=line_bytes,
    )
    return Workload(
        name=name,
        trace=trace,
        kernel=kernel,
        source=kernel.source or ref,
        attrs={"arch": arch, "seed": seed, "ctas_per_sm": share, "trace_source": how},
    )


def executed_builtin(
    name: str, arch: str, ctas: int, line_bytes: int, seed: int = 0, *, strict: bool = False
) -> tuple[Trace | None, str]:
    """The executed trace of built-in kernel ``name`` (``ctas`` CTAs of its trace recipe, inputs
    drawn with the recipe's seed + ``seed``), from the on-disk cache when it holds it; returns
    ``(trace, "execute")``, or ``(None, reason)`` when the kernel cannot be executed (no recipe,
    an instruction the executor lacks: :data:`~rfmodel.workload.execute.builtin.KNOWN_GAPS`),
    which ``strict`` turns into an error."""
    import dataclasses
    import hashlib

    from rfmodel.cache import entry_path, source_hash
    from rfmodel.workload.execute.builtin import BUILTIN_RECIPES, KNOWN_GAPS, trace_recipe
    from rfmodel.workload.execute.errors import ExecutionError
    from rfmodel.workload.execute.tracing import executed_trace

    if name not in BUILTIN_RECIPES:
        why = f"expand: '{name}' has no launch recipe"
        if strict:
            raise RfmodelError(f"workload '{name}': no launch recipe to execute")
        return None, why
    if (name, arch) in KNOWN_GAPS and not strict:
        return None, f"expand: the executor cannot run it yet ({KNOWN_GAPS[(name, arch)]})"
    blob = json.dumps([name, arch, ctas, line_bytes, seed, source_hash("workload")])
    stored = entry_path("traces", hashlib.sha1(blob.encode()).hexdigest()[:24], ".npz")
    if stored is not None and stored.is_file():
        try:
            return Trace.load(stored), "execute"
        except (OSError, ValueError, KeyError, TypeError):  # a damaged entry: execute again
            pass
    recipe = trace_recipe(name, ctas)
    recipe = dataclasses.replace(recipe, seed=recipe.seed + seed)
    try:
        trace = executed_trace(load_kernel(name, arch), recipe, ctas=ctas, line_bytes=line_bytes)
    except ExecutionError as e:
        if strict:
            raise
        return None, f"expand: execution failed ({e})"
    trace.attrs["seed"] = int(seed)
    if stored is not None:
        try:
            trace.save(stored)
        except OSError:  # a read-only cache is not an error
            pass
    return trace, "execute"
