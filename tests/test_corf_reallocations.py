"""calib/corf_reallocations.py: where CORF's reallocations come from (claim C-08, docs/validation.md).

The replay of a warp's allocations is checked by hand on a few rows; the script against the simulator
(its replay must count what the simulator counted) is marked slow.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers_calib import load_calib_script

from rfmodel.trace import NONE

cr = load_calib_script("corf_reallocations")


def _rows(rows):
    """``(src, dst, width, dead, dead_def)`` arrays of rows ``(sources, [(register, width)], dead bits,
    never-read bits)``."""
    n = len(rows)
    src = np.full((n, 3), NONE, dtype=np.int64)
    dst = np.full((n, 2), NONE, dtype=np.int64)
    width = np.zeros((n, 2), dtype=np.int64)
    dead = np.zeros(n, dtype=np.int64)
    dead_def = np.zeros(n, dtype=np.int64)
    for i, (s, d, db, dd) in enumerate(rows):
        src[i, : len(s)] = s
        for k, (r, w) in enumerate(d):
            dst[i, k], width[i, k] = r, w
        dead[i], dead_def[i] = db, dd
    return src, dst, width, dead, dead_def


def test_replay_known_answer():
    """One warp: R1 written 1 byte wide and never read, then 4 bytes (a reallocation over a value never
    read); read with its last-read bit (freed), then written 4 bytes (a fresh allocation); R2 written 2
    bytes, read without the bit, written 3 bytes (a reallocation over a value read); R3 written with its
    never-read bit (freed once written), then 4 bytes (fresh); a narrower value keeps its register's slices
    (R4: 4 bytes, then 2); a width of 0 (unknown) counts as 4 bytes (R5: 1, then unknown: a reallocation
    over a value never read)."""
    rows = [
        ((), [(1, 1)], 0, 0),
        ((), [(1, 4)], 0, 0),
        ((1,), [], 0b1, 0),
        ((), [(1, 4)], 0, 0),
        ((), [(2, 2)], 0, 0),
        ((2,), [], 0, 0),
        ((), [(2, 3)], 0, 0),
        ((), [(3, 2)], 0, 0b1),
        ((), [(3, 4)], 0, 0),
        ((), [(4, 4)], 0, 0),
        ((), [(4, 2)], 0, 0),
        ((), [(5, 1)], 0, 0),
        ((), [(5, 0)], 0, 0),
    ]
    src, dst, width, dead, dead_def = _rows(rows)
    realloc, unread, values = cr.replay(np.array([0, len(rows)]), src, dst, width, dead, dead_def)
    assert (realloc, unread, values) == (3, 2, 11)


def test_replay_each_warp_starts_empty():
    """A register another warp holds is not this warp's: two warps writing R1 1 byte then 4 bytes each
    reallocate once each; the dead bit of the second source slot frees only that slot's register."""
    rows = [((), [(1, 1)], 0, 0), ((), [(1, 4)], 0, 0)] * 2
    src, dst, width, dead, dead_def = _rows(rows)
    assert cr.replay(np.array([0, 2, 4]), src, dst, width, dead, dead_def) == (2, 2, 4)
    rows = [((), [(1, 1), (2, 1)], 0, 0), ((1, 2), [], 0b10, 0), ((), [(1, 4), (2, 4)], 0, 0)]
    src, dst, width, dead, dead_def = _rows(rows)
    assert cr.replay(np.array([0, 3]), src, dst, width, dead, dead_def) == (1, 0, 4)


@pytest.mark.slow
def test_script_follows_the_simulator_and_own_reads_leave_none():
    """On saxpy (8 warps, the CORF paper's SM) the replay with the compiler's bits counts the simulator's
    reallocations (the script refuses otherwise), and each warp's own last reads leave none."""
    row = cr.kernel_row("saxpy", "CORF", 8)
    assert row["compiler"][0] == row["sim"] > 0
    assert row["compiler"][2] == row["values"]
    assert row["own reads"][0] == 0
    assert row["guard kills"][0] <= row["compiler"][0]


def test_script_refuses_a_preset_without_virtualization(capsys):
    assert cr.main(["--config", "packing", "--workload", "saxpy"]) == 2
    assert "does not virtualize" in capsys.readouterr().err
