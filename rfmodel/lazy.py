"""Names of a module loaded on first use: a package's light import (``import rfmodel.spec`` reads no config
importer, ``import rfmodel.evaluate`` loads no engine) that still offers the heavy module's names."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable


def lazy_getattr(module: str, source: str, names: Iterable[str]) -> Callable[[str], object]:
    """A module-level ``__getattr__`` for ``module``: each of ``names`` is read from module ``source``,
    imported on first use; any other name raises the usual :class:`AttributeError`."""
    names = frozenset(names)

    def __getattr__(name: str):
        if name in names:
            return getattr(importlib.import_module(source), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
