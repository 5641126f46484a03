"""The built-in kernels' manifest (``kernels/manifest.json``): launch shapes and loop trip counts."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources


def kernels_dir():
    """The folder of the built-in kernels' SASS listings and manifest."""
    return resources.files("rfmodel.workload").joinpath("kernels")


@lru_cache(maxsize=1)
def manifest() -> dict:
    """The manifest: ``{"kernels": {name: {"ctas", "threads_per_cta", ...}}}``."""
    path = kernels_dir().joinpath("manifest.json")
    if not path.is_file():
        return {"kernels": {}}
    return json.loads(path.read_text())
