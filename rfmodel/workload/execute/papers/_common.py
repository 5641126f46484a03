"""What the shipped kernels' recipes share (the built-in suite's and the papers'): the manifest's facts of
a kernel and sizes by scale."""

from __future__ import annotations

from typing import NamedTuple

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


class FullSize(NamedTuple):
    """The original benchmark's input of a papers' recipe (each family module's ``FULL_SIZES``): the
    ``scale`` at which the recipe's sizes equal it (with the grid ``ctas`` where the recipe takes its grid
    from them), ``what`` that input is, ``differs``: what the recipe cannot match at any scale (empty:
    nothing), and ``tested``: the smaller scale the slow test runs where the executor needs far longer than
    a few CPU-minutes at the full one (None: the full one)."""

    scale: float
    what: str
    ctas: int | None = None
    differs: str = ""
    tested: float | None = None
