"""The caching-designs study's tolerable-latency search: every pair's bisection advances in rounds of one
simulation batch, and finds what the bisection finds on its own."""

from __future__ import annotations

import json

import pytest

from rfmodel.studies import caching_designs
from rfmodel.tolerance import bisect_tolerance


class FakeRuns:
    """Runs whose IPC falls with the latency multiple at a per-workload rate; counts the batches."""

    def __init__(self, slope: dict):
        self.slope, self.done, self.batches = slope, {}, []

    def ipc(self, d, w, x):
        return 1.0 / (1.0 + self.slope[w] * (x - 1.0))

    def has(self, d, w, x):
        return (d, w, x) in self.done

    def get(self, d, w, x):
        return {"ipc": self.done[d, w, x]}

    def ensure(self, points):
        self.batches.append(list(points))
        for d, w, x in points:
            self.done[d, w, x] = self.ipc(d, w, x)


def test_round_based_bisection_matches_each_bisection_alone():
    slope = {"a": 0.001, "b": 0.02, "c": 0.2, "d": 2.0}
    runs = FakeRuns(slope)
    pairs = [("rfc", w) for w in slope]
    ref = {p: 1.0 for p in pairs}
    got = caching_designs.tolerable_all(runs, pairs, ref, tol=0.05, hi=16.0, res=1.0)
    for w in slope:
        alone = bisect_tolerance(lambda x, w=w: runs.ipc("rfc", w, x), 1.0, tol=0.05, hi=16.0, resolution=1.0)
        expect = 1.0 if alone["latency_x"] is None else float(round(alone["latency_x"]))
        assert got[("rfc", w)] == expect
    # "a" tolerates all of [1, 16], "d" not even 2x: different answers, found together
    assert got[("rfc", "a")] == 16.0 and got[("rfc", "d")] == 1.0
    # one batch per round, each point simulated once, the pairs' steps side by side
    points = [p for b in runs.batches for p in b]
    assert len(points) == len(set(points))
    assert max(len(b) for b in runs.batches) == len(slope)
    assert len(runs.batches) <= 2 + 4 + 1  # 1x, 16x, then at most log2(15) halvings, and the empty last round


def _square(x):
    return {"y": x * x}


def test_result_log_runs_only_what_is_missing_and_drops_a_cut_line(tmp_path):
    from rfmodel.runner import ResultLog, SerialRunner

    path = tmp_path / "runs.jsonl"
    log = ResultLog(path)
    got = dict(log.run(SerialRunner(), _square, {"a": 2, "b": 3}))
    assert got == {"a": {"y": 4, "key": "a"}, "b": {"y": 9, "key": "b"}}
    with path.open("a") as f:
        f.write('{"y": 16, "ke')  # an interrupted run's last line
    with pytest.warns(UserWarning, match="line 3: damaged record"):
        again = ResultLog(path)
    assert set(again.done) == {"a", "b"} and again["b"]["y"] == 9
    calls = []

    def counted(x):
        calls.append(x)
        return _square(x)

    new = dict(again.run(SerialRunner(), counted, {"a": 2, "b": 3, "c": 4}))
    assert calls == [4] and new == {"c": {"y": 16, "key": "c"}}
    assert "c" in ResultLog(path)
    # the cut line is gone: the log is three whole records
    assert [json.loads(line)["key"] for line in path.read_text().splitlines()] == ["a", "b", "c"]


def test_study_evaluations_take_a_trace_source(tmp_path):
    """A study's point may name how a built-in kernel's trace is made; the two traces are two keys and two
    results (the executed trace of saxpy is not its expansion)."""
    from rfmodel.studies import common

    ev = common.Evaluations(tmp_path / "runs.jsonl", jobs=1)
    pts = [("baseline", "saxpy", "fermi-gtx480", "simulate", {}, s) for s in ("auto", "expand")]
    ev.ensure(pts)
    auto, expand = (ev.get(*p) for p in pts)
    assert expand["trace_source"] == "expand" and "trace_source" not in auto
    assert auto["ipc"] > 0 and expand["ipc"] > 0 and auto["ipc"] != expand["ipc"]
