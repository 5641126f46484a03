"""Workload classes measured in the simulator (rfmodel/classes.py): the synthetic presets built to be of a
class are measured so, the shipped measurements are whole and consistent with their thresholds, and
``workload list --class`` selects by them."""

from __future__ import annotations

import pytest

from rfmodel.classes import (
    CLASSES,
    NARROW_SHARE,
    SENSITIVE_GAIN,
    load_classes,
    measure,
    thresholds,
    with_class,
)
from rfmodel.errors import RfmodelError, UnknownNameError


@pytest.mark.slow
def test_a_kernel_the_larger_structures_cannot_help_gains_exactly_nothing():
    """saxpy (24 registers per thread) fills maxwell-ltrf's 64 warps with the 1x register file, and streams
    every line once: the 8x register file and the 64 KB L1D must change nothing (exactly 0), so it is
    neither register- nor cache-sensitive."""
    r = measure("saxpy")
    assert r["register_gain"] == 0.0 and r["cache_gain"] == 0.0
    assert "register-sensitive" not in r["classes"] and "cache-sensitive" not in r["classes"]
    assert r["trace_source"] == "execute" and 0 <= r["narrow_share"] <= 1


def test_the_shipped_measurements_follow_their_thresholds():
    doc = load_classes()
    if not doc["rows"]:
        pytest.skip("no shipped measurements")
    assert doc["thresholds"] == thresholds()
    for name, r in doc["rows"].items():
        want = []
        if r["register_gain"] >= SENSITIVE_GAIN:
            want.append("register-sensitive")
        if r["cache_gain"] >= SENSITIVE_GAIN:  # NaN (not measured): no class
            want.append("cache-sensitive")
        if r["narrow_share"] == r["narrow_share"]:
            want.append("integer-heavy" if r["narrow_share"] >= NARROW_SHARE else "fp-heavy")
        assert r["classes"] == want, name


def test_selecting_by_class(capsys):
    from rfmodel.cli import main

    with pytest.raises(UnknownNameError):
        with_class(["saxpy"], "memory-heavy")
    rows = load_classes()["rows"]
    if not rows:
        with pytest.raises(RfmodelError, match="no measured classes"):
            with_class(["saxpy"], CLASSES[0])
        return
    names = sorted(rows)
    for cls in CLASSES:
        assert with_class(names, cls) == [n for n in names if cls in rows[n]["classes"]]
    from rfmodel.workload.suite import suite_names

    papers = [n for n in suite_names("papers") if n in rows]
    assert main(["workload", "list", "--suite", "papers", "--class", "fp-heavy"]) == 0
    table = capsys.readouterr().out.split("\n\n")[0].splitlines()[2:]  # the rows, before the summary line
    listed = {ln.split()[0] for ln in table}
    assert listed == set(with_class(papers, "fp-heavy"))


def test_the_docs_table_of_the_measured_classes_is_current():
    from pathlib import Path

    from rfmodel.classes import classes_table_markdown

    if not load_classes()["rows"]:
        pytest.skip("no shipped measurements")
    doc = Path(__file__).resolve().parents[1] / "docs" / "workloads-builtin.md"
    assert classes_table_markdown() in doc.read_text()
