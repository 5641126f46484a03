"""Launch recipes and numpy references of the papers' benchmarks (the ``papers`` suite of shipped kernels,
``rfmodel workload list --suite papers``).

Each module of this package covers one family of public benchmark suites and defines

* ``RECIPES``: kernel name -> ``recipe(scale: float = 1.0, ctas: int | None = None) -> Recipe``, as the
  built-in recipes (:mod:`rfmodel.workload.execute.builtin`): ``scale`` is the problem size relative to the
  small default, ``ctas`` the grid the trace builder asks for (default: what the problem needs);
* ``FULL_SIZES``: kernel name -> :class:`~rfmodel.workload.execute.papers._common.FullSize`, the scale at
  which the recipe's input is the original benchmark's (``builtin_recipe(name, "full")``);
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
        for name, fn in getattr(mod, "RECIPES", {}).items():
            if name in recipes:
                raise RuntimeError(f"papers' recipe '{name}' defined in {owner[name]} and {info.name}")
            recipes[name], owner[name] = fn, info.name
        gaps.update(getattr(mod, "KNOWN_GAPS", {}))
        full.update(getattr(mod, "FULL_SIZES", {}))
    if set(full) != set(recipes):
        raise RuntimeError(
            f"papers' recipes without a full size: {sorted(set(recipes) - set(full))}; "
            f"full sizes without a recipe: {sorted(set(full) - set(recipes))}"
        )
    return recipes, gaps, full


#: every papers' kernel's recipe, what the executor cannot run yet, and each original's input
PAPERS_RECIPES, PAPERS_KNOWN_GAPS, PAPERS_FULL_SIZES = _gather()
