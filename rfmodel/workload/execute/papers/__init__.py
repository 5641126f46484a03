"""Launch recipes and numpy references of the papers' benchmarks (the ``papers`` suite of shipped kernels,
``rfmodel workload list --suite papers``).

Each module of this package covers one family of public benchmark suites and defines

* ``RECIPES``: kernel name -> ``recipe(scale: float = 1.0, ctas: int | None = None) -> Recipe``, as the
  built-in recipes (:mod:`rfmodel.workload.execute.builtin`): ``scale`` is the problem size relative to the
  small default, ``ctas`` the grid the trace builder asks for (default: what the problem needs);
* optionally ``KNOWN_GAPS``: ``{(kernel, arch): why}`` for what the executor cannot run yet.

A new family is a new module here; nothing else names them.
"""

from __future__ import annotations

import importlib
import pkgutil


def _gather():
    recipes, gaps, owner = {}, {}, {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        for name, fn in getattr(mod, "RECIPES", {}).items():
            if name in recipes:
                raise RuntimeError(f"papers' recipe '{name}' defined in {owner[name]} and {info.name}")
            recipes[name], owner[name] = fn, info.name
        gaps.update(getattr(mod, "KNOWN_GAPS", {}))
    return recipes, gaps


#: every papers' kernel's recipe, and what the executor cannot run yet
PAPERS_RECIPES, PAPERS_KNOWN_GAPS = _gather()
