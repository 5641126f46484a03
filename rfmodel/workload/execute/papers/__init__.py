"""Launch recipes and numpy references of the papers' benchmarks (the ``papers`` suite of shipped kernels,
``rfmodel workload list --suite papers``).

Each module of this package covers one family of public benchmark suites and defines

* ``FAMILY``: a :class:`~rfmodel.workload.execute.papers._common.Registry` whose ``recipe(scale, what, ...)``
  decorates each kernel's ``_<kernel>(scale: float = 1.0, ctas: int | None = None) -> Recipe``, as the
  built-in recipes (:mod:`rfmodel.workload.execute.builtin`): ``scale`` is the problem size relative to the
  small default, ``ctas`` the grid the trace builder asks for (default: what the problem needs); the
  decorator's arguments are the fields of a :class:`~rfmodel.workload.execute.papers._common.FullSize`, the
  scale at which the recipe's input is the original benchmark's (``builtin_recipe(name, "full")``);
* optionally ``KNOWN_GAPS``: ``{(kernel, arch): why}`` for what the executor cannot run yet.

A new family is a new module here; nothing else names them.
"""

from __future__ import annotations

import importlib
import pkgutil


def _gather():
    recipes, gaps, full, owner = {}, {}, {}, {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        for name, fn in mod.FAMILY.recipes.items():
            if name in recipes:
                raise RuntimeError(f"papers' recipe '{name}' defined in {owner[name]} and {info.name}")
            recipes[name], owner[name] = fn, info.name
        gaps.update(getattr(mod, "KNOWN_GAPS", {}))
        full.update(mod.FAMILY.full_sizes)
    if set(full) != set(recipes):
        raise RuntimeError(f"papers' recipes without a full size: {sorted(set(recipes) - set(full))}")
    return recipes, gaps, full


#: every papers' kernel's recipe, what the executor cannot run yet, and each original's input
PAPERS_RECIPES, PAPERS_KNOWN_GAPS, PAPERS_FULL_SIZES = _gather()
