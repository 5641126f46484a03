"""What the shipped kernels' recipes share (the built-in suite's and the papers'): their registration, the
manifest's facts of a kernel, sizes by scale, arrays declared alike and the fields that check outputs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from rfmodel.workload.execute.recipe import ArraySpec

#: the unit roundoff of float32 (tolerances: a float32 result of ``m`` rounded operations on terms whose
#: magnitudes sum to ``S`` lies within ``m * EPS32 * S`` of the exact value)
EPS32 = 2.0**-24


def manifest_entry(name: str) -> dict:
    """The manifest's entry of shipped kernel ``name`` (launch shape, resources per arch)."""
    from rfmodel.workload.manifest import manifest

    return manifest()["kernels"][name]


def shared_bytes(name: str) -> int:
    """Static shared memory of the kernel: the smallest figure over the archs it was compiled for (sm_90's
    ``cuobjdump -res-usage`` figure includes the 1 KiB window the compiler reserves there, which the
    launch adds by itself)."""
    return min(r.get("shared", 0) for r in manifest_entry(name)["resources"].values())


def size(base: int, scale: float, lo: int = 1) -> int:
    """``base`` scaled, rounded, at least ``lo``."""
    return max(lo, int(round(base * scale)))


def same_arrays(names: Iterable[str], spec: ArraySpec) -> dict[str, ArraySpec]:
    """Arrays ``names``, in that order, each of ``spec``."""
    return dict.fromkeys(names, spec)


def uniform_arrays(
    names: Iterable[str], shape: tuple[int, ...], low: float = -1.0, high: float = 1.0, dtype: str = "float32"
) -> dict[str, ArraySpec]:
    """Arrays ``names`` of one ``shape``, in that order, each drawn uniformly from ``[low, high)``."""
    return same_arrays(names, ArraySpec(dtype, shape, "uniform", low, high))


def option_arrays(n: int) -> dict[str, ArraySpec]:
    """Black-Scholes inputs of ``n`` options in the CUDA sample's ranges: spot price, strike price, years."""
    return {
        "spot": ArraySpec("float32", (n,), "uniform", 5.0, 30.0),
        "strike": ArraySpec("float32", (n,), "uniform", 1.0, 100.0),
        "years": ArraySpec("float32", (n,), "uniform", 0.25, 10.0),
    }


def check(
    outputs: str | tuple[str, ...],
    reference: Callable,
    tolerance: object = None,
    bounds: Callable | None = None,
) -> dict[str, object]:
    """Recipe fields: ``outputs`` checked by ``reference``, within ``tolerance`` or ``bounds(ins)[name]``."""
    names = [outputs] if isinstance(outputs, str) else list(outputs)
    fields: dict[str, object] = {"outputs": names, "reference": reference}
    if bounds is not None:
        fields["tolerance"] = {name: lambda ins, name=name: (0.0, bounds(ins)[name]) for name in names}
    elif tolerance is not None:
        fields["tolerance"] = dict.fromkeys(names, tolerance)
    return fields


class FullSize(NamedTuple):
    """The original benchmark's input of a papers' recipe (what its family module registers it with): the
    ``scale`` at which the recipe's sizes equal it (with the grid ``ctas`` where the recipe takes its grid
    from them), ``what`` that input is, ``differs``: what the recipe cannot match at any scale (empty:
    nothing), and ``tested``: the smaller scale the slow test runs where the executor needs far longer than
    a few CPU-minutes at the full one (None: the full one)."""

    scale: float
    what: str
    ctas: int | None = None
    differs: str = ""
    tested: float | None = None


class Registry:
    """The recipes of one module of shipped kernels: ``recipes``, kernel name -> ``recipe(scale, ctas)``, and
    ``full_sizes``, kernel name -> its original benchmark's input (:class:`FullSize`; papers' kernels),
    filled by decorating each recipe function ``_<kernel name>`` with :meth:`recipe`."""

    def __init__(self) -> None:
        self.recipes: dict[str, Callable] = {}
        self.full_sizes: dict[str, FullSize] = {}

    def recipe(self, *full, **full_kw) -> Callable[[Callable], Callable]:
        """Register the decorated ``_<kernel name>`` as that kernel's recipe; ``full``/``full_kw``, the fields
        of its original benchmark's input (:class:`FullSize`: ``scale``, ``what``, ...), none for a kernel of
        rfmodel's own suite."""

        def register(fn: Callable) -> Callable:
            name = fn.__name__.removeprefix("_")
            self.recipes[name] = fn
            if full or full_kw:
                self.full_sizes[name] = FullSize(*full, **full_kw)
            return fn

        return register
