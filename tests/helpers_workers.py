"""Jobs for the tests of worker processes, in a module of their own: a spawned worker imports the module
of the function it runs, and this one loads nothing (a test module would load its whole package: about
2.5 CPU-s in every worker)."""

from __future__ import annotations


def warning_job(x):
    """``2 x``, with a warning every job gives and one that depends on ``x``'s parity."""
    import warnings

    warnings.warn("a note every job gives", UserWarning, stacklevel=1)
    warnings.warn(f"a note of parity {x % 2}", RuntimeWarning, stacklevel=1)
    return 2 * x
