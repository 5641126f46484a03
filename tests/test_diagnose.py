"""calib/diagnose.py: the shared model's part of a design's bank-stall error (``--less-baseline``).

Checked by hand on made-up rows; over the calibration's simulations it is what docs/validation.md quotes
(`python calib/diagnose.py ltrf --metric bank_stall --less-baseline`)."""

from __future__ import annotations

import math

import pytest
from helpers_calib import load_calib_script


def _row(workload, split, sim, model, gpu="fermi-gtx480", n=1000.0):
    return {"gpu": gpu, "workload": workload, "split": split, "sim": sim, "model": model, "instructions": n}


def test_less_baseline_divides_by_the_baseline_median_ratio_of_its_training_rows():
    diag = load_calib_script("diagnose")
    # the baseline's training rows of saxpy: padded ratios (20 + 10) / (5 + 10) = 2, (50 + 10) / (20 + 10) = 2
    # and (100 + 10) / (10 + 10) = 5.5: median 2; its held-out row and another workload's do not count
    base = [
        _row("saxpy", "train", 5.0, 20.0),
        _row("saxpy", "train", 20.0, 50.0),
        _row("saxpy", "train", 10.0, 100.0),
        _row("saxpy", "point", 10.0, 1000.0),
        _row("saxpy", "train", 10.0, 10.0, gpu="volta-v100"),
    ]
    design = [
        _row("saxpy", "point", 100.0, 240.0),  # 240 / 2 = 120: error (120 - 100) / 100
        _row("saxpy", "point", 40.0, 90.0, gpu="volta-v100"),  # volta's ratio is 1: unchanged
        _row("histogram256", "workload", 4.0, 30.0),  # no baseline training row: unchanged
    ]
    for x in design:
        x["err"] = (x["model"] - x["sim"]) / max(x["sim"], 0.01 * x["instructions"])
    out, moved = diag.less_baseline(design, base)
    assert moved == 2
    assert out[0]["model"] == pytest.approx(120.0)
    assert out[0]["err"] == pytest.approx(0.2)
    assert out[1]["model"] == pytest.approx(90.0) and out[1]["err"] == pytest.approx(50.0 / 40.0)
    assert out[2] is design[2]
    # the floor of the error: a count under 1 % of the instructions is measured against that 1 %
    low, _ = diag.less_baseline([{**_row("saxpy", "point", 2.0, 30.0), "err": math.nan}], base)
    assert low[0]["err"] == pytest.approx((15.0 - 2.0) / 10.0)


def test_write_collision_summary_by_hand():
    wc = load_calib_script("write_collisions")

    def rec(sim, port, model, gpu="volta-v100", n=1000.0, ipc=1.0, ipc_port=1.01):
        keys = {"gpu": gpu, "workload": "w", "point": "{}", "instructions": n}
        return keys | {"sim": sim, "sim_port": port, "ipc": ipc, "ipc_port": ipc_port, "model": model}

    rows = [
        rec(100.0, 80.0, 140.0),  # share 0.2: reads meet reads; (140 + 10) / (100 + 10) over
        rec(100.0, 50.0, 100.0),  # share 0.5
        rec(100.0, 5.0, 45.0, ipc_port=0.97),  # share 0.95: (45 + 10) / (100 + 10) = 0.5 under
        rec(1.0, 0.0, 5.0),  # under 0.2 % of the instructions: left out
        rec(50.0, 10.0, 50.0, gpu="fermi-gtx480"),
    ]
    s = wc.summary(rows)
    v = s["volta-v100"]
    assert v["n"] == 3
    assert v["write_share"] == pytest.approx(0.5)
    assert v["ipc_change"] == pytest.approx(0.01)
    bins = {(lo, hi): (n, lr, e) for lo, hi, n, lr, e in v["bins"]}
    assert set(bins) == {(0.0, 0.3), (0.3, 0.6), (0.9, 1.0)}
    assert bins[(0.0, 0.3)][0] == 1 and bins[(0.0, 0.3)][1] == pytest.approx(math.log(150 / 110))
    assert bins[(0.0, 0.3)][2] == pytest.approx(0.4)
    assert bins[(0.3, 0.6)][1] == pytest.approx(0.0) and bins[(0.3, 0.6)][2] == pytest.approx(0.0)
    assert bins[(0.9, 1.0)][1] == pytest.approx(math.log(55 / 110))
    assert bins[(0.9, 1.0)][2] == pytest.approx(0.55)
    assert s["fermi-gtx480"]["write_share"] == pytest.approx(0.8)


def test_by_sign_per_gpu_by_hand():
    diag = load_calib_script("diagnose")
    rows = [{"gpu": "volta-v100", "err": e} for e in (-0.5, -0.1, 0.2, 0.4, math.nan)] + [
        {"gpu": "fermi-gtx480", "err": 0.3}
    ]
    assert diag.by_sign(rows) == [
        ("fermi-gtx480", 1, pytest.approx(0.3), pytest.approx(0.3), 1.0),
        ("volta-v100", 4, pytest.approx(0.05), pytest.approx(0.3), 0.5),
    ]
