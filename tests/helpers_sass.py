"""The shipped SASS listings of the built-in kernels, parsed once per test session.

Several tests read every shipped listing under ``rfmodel/workload/kernels/sass`` (test_sass: each file
parses, the register counts, cuobjdump against nvdisasm, the ``-plr`` marks; test_liveness_oracle: three
passes over the ``.plr.sass`` files): parsing the 360 files takes about 10 CPU-s each time.  Here each file's
kernels and its ``nvdisasm -plr`` rows are parsed the first time a test asks, by the same readers, and kept
(about 250 MB more for all of them).  The tests read what they get and never change it.  A test that measures
the parser itself (test_parse_speed) calls it directly.
"""

from __future__ import annotations

import functools
from pathlib import Path


def shipped_sass(path) -> tuple:
    """``read_sass(path)``, parsed once per session (the kernels as a tuple: shared, never changed)."""
    return _sass(Path(path).resolve())


def shipped_plr(path) -> dict:
    """``read_plr(path)``: the ``nvdisasm -plr`` rows per kernel, parsed once per session."""
    return _plr(Path(path).resolve())


@functools.cache
def _sass(path: Path) -> tuple:
    from rfmodel.workload.sass import read_sass

    return tuple(read_sass(path))


@functools.cache
def _plr(path: Path) -> dict:
    from rfmodel.compiler.plr import read_plr

    return read_plr(path)
