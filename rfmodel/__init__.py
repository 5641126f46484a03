"""rfmodel: performance, energy and area models of GPU register-file designs.

The one façade is :func:`rfmodel.evaluate`; design-space search is
:func:`rfmodel.optimize.optimize`.  The names below are loaded on first use, so that
``import rfmodel.errors`` or ``import rfmodel.spec`` does not load the engines (numba, xarray).
"""

import sys
import types

from rfmodel.cache import use_user_numba_cache
from rfmodel.version import __version__

use_user_numba_cache()  # before any engine imports numba

__all__ = ["evaluate", "compare", "sensitivity", "__version__"]


def __getattr__(name: str):
    if name in ("evaluate", "compare", "sensitivity"):
        import importlib

        value = getattr(importlib.import_module("rfmodel.evaluate"), name)
        globals()[name] = value  # later lookups skip this hook
        return value
    if name == "optimize":  # the search's subpackage (rfmodel.optimize.optimize), as after its own import
        import importlib

        return importlib.import_module("rfmodel.optimize")
    raise AttributeError(f"module 'rfmodel' has no attribute {name!r}")


class _Face(types.ModuleType):
    """The package module: ``rfmodel.evaluate`` stays the façade function even after the import system
    binds the submodule of the same name (``sys.modules['rfmodel.evaluate']`` is the module)."""

    def __setattr__(self, name, value):
        if name == "evaluate" and isinstance(value, types.ModuleType):
            value = value.evaluate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Face
