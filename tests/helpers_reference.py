"""The reference data some tests compare with, beside the project: ``../shared/reference`` (GPGPU-Sim
configurations, Accel-Sim traces), or the folder ``RFMODEL_REFERENCE`` names.

A test that reads a piece of it is marked ``@needs_reference("gpgpusim-configs", ...)`` (or calls
:func:`reference_or_skip` where the piece is known only inside it).  Where the piece is missing, the test
skips and its reason names the path; with ``RFMODEL_REQUIRE_REFERENCE=1`` it fails instead, so that a run
that has the data (``.ci/run`` sets the variable where the folder is there) cannot pass by skipping what it
lost.  The suite's summary lists every skip with its reason (``-rs`` in the pytest options)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: where the reference data lies
ROOT = Path(os.environ.get("RFMODEL_REFERENCE") or Path(__file__).resolve().parents[2] / "shared/reference")


def reference(*parts: str) -> Path:
    """The path of a piece of the reference data (it may not exist)."""
    return ROOT.joinpath(*parts)


def required() -> bool:
    """Whether a missing piece fails the test that needs it (``RFMODEL_REQUIRE_REFERENCE=1``)."""
    return os.environ.get("RFMODEL_REQUIRE_REFERENCE", "") == "1"


def reference_or_skip(*parts: str) -> Path:
    """The path of a piece the calling test needs; skips the test (fails it where :func:`required`) when it
    is missing."""
    path = reference(*parts)
    if not path.exists():
        message = f"reference data not present: {path}"
        if required():
            pytest.fail(f"{message} (RFMODEL_REQUIRE_REFERENCE=1)", pytrace=False)
        pytest.skip(message)
    return path


def needs_reference(*parts: str) -> pytest.MarkDecorator:
    """Mark a test (or, as ``pytestmark``, a module) as reading the piece ``parts`` of the reference data:
    tests/conftest.py checks it before the test runs, as :func:`reference_or_skip`."""
    return pytest.mark.needs_reference(*parts)
