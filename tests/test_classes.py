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
    save_classes,
    simulator_hash,
    stale,
    thresholds,
    with_class,
)
from rfmodel.errors import RfmodelError, UnknownNameError


@pytest.mark.slow
def test_a_kernel_the_larger_register_file_cannot_help_gains_exactly_nothing():
    """saxpy (24 registers per thread) fills maxwell-ltrf's 64 warps with the 1x register file: the 8x
    register file must change nothing (exactly 0), so it is not register-sensitive.  Its loads read each
    line once, but its store writes the line of ``y`` its load brought in: with write-allocation a larger
    L1D keeps that line until the store (16 KB: hit rate 0.318 of the accesses on fermi-gtx480 at 96 warps,
    64 KB: 0.333, every store), so the cache gain is not negative and the class follows the threshold."""
    r = measure("saxpy")
    assert r["register_gain"] == 0.0 and "register-sensitive" not in r["classes"]
    assert r["cache_gain"] >= 0.0
    assert ("cache-sensitive" in r["classes"]) == (r["cache_gain"] >= SENSITIVE_GAIN)
    assert r["trace_source"] == "execute" and 0 <= r["narrow_share"] <= 1
    assert r["simulator"] == simulator_hash()


def test_measurements_of_other_simulator_sources_are_named_stale(tmp_path, capsys):
    """Each row keeps the simulator sources that measured it; ``stale`` names the rows of others (or of none
    said), and ``rfmodel workload classes`` warns of them."""
    from rfmodel.cli import main

    now = simulator_hash()
    row = {
        "workload": "saxpy",
        "register_gain": 0.0,
        "cache_gain": 0.0,
        "narrow_share": 0.7,
        "trace_source": "execute",
        "classes": ["integer-heavy"],
    }
    assert stale({"rows": {"saxpy": {**row, "simulator": now}}}) == ""
    assert stale({"rows": {}}) == ""
    why = stale({"rows": {"saxpy": {**row, "simulator": "0123456789ab"}, "x": row}})
    assert why.startswith("2 of 2 kernels' classes (saxpy, x) were measured by other simulator sources")
    path = tmp_path / "classes.json"
    save_classes({"saxpy": {**row, "simulator": "0123456789ab"}}, path)
    assert main(["workload", "classes", "--workload", "saxpy", "--out", str(path)]) == 0
    assert "warning: 1 of 1 kernels' classes (saxpy) were measured by other" in capsys.readouterr().err
    # the shipped measurements are this simulator's (rfmodel workload classes --update --again)
    assert stale(load_classes()) == "", (
        "the simulator changed since the classes were measured: run "
        "`rfmodel workload classes --suite all --update --again` and "
        "`--suite papers --docs docs/workloads-builtin.md`"
    )


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
