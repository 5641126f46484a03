"""The scripts of ``calib/`` as modules, for the tests that check them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

CALIB = Path(__file__).resolve().parents[1] / "calib"


def load_calib_script(name: str):
    """``calib/<name>.py`` imported as the module ``calib_<name>`` (registered, since dataclasses look their
    module up by name)."""
    spec = importlib.util.spec_from_file_location(f"calib_{name}", CALIB / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod
