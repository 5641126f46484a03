"""calib/ltrf_overlap.py: which of a warp's own loads an LTRF prefetch could overlap (docs/models.md).

The count over a warp's rows is checked by hand; the script over real traces and simulations is what the
docs quote (`python calib/ltrf_overlap.py sgemm_tiled gemm_micro8x8`)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers_calib import load_calib_script

from rfmodel.analytic.profile import _memory_classes
from rfmodel.ir import OpClass
from rfmodel.trace import NONE


def test_loads_read_across_an_interval_start_known_answer():
    # one warp, intervals starting at rows 0 and 3:
    #   0 LDG r1   1 LDG r2   2 IADD r4 <- r5 (nothing pending)   | 3 IADD r6 <- r1   4 IADD r7 <- r2, r1
    #   5 LDG r8   6 IADD r9 <- r8
    # r1 is read by the second interval's first row (it holds the prefetch back: blocked), r2 later in that
    # interval (straddle), r8 in its own interval (neither); r1's second read is no longer a load's first
    ov = load_calib_script("ltrf_overlap")
    LD, INT = int(OpClass.LD_GLOBAL), int(OpClass.INT)
    rows = [(LD, [], [1]), (LD, [], [2]), (INT, [5], [4]), (INT, [1], [6]), (INT, [2, 1], [7]), (LD, [], [8])]
    rows.append((INT, [8], [9]))
    n = len(rows)
    src = np.full((n, 3), NONE, dtype=np.uint8)
    dst = np.full((n, 2), NONE, dtype=np.uint8)
    op = np.zeros(n, dtype=np.int64)
    for i, (o, s, d) in enumerate(rows):
        op[i] = o
        src[i, : len(s)] = s
        dst[i, : len(d)] = d
    starts = np.array([0, -1, -1, 1, -1, -1, -1], dtype=np.int64)
    warp_ptr = np.array([0, n], dtype=np.int64)
    assert ov._straddle(warp_ptr, starts, op, src, dst, _memory_classes()) == (3, 1, 1)


def test_a_gpu_the_sweep_did_not_simulate_is_refused(capsys):
    ov = load_calib_script("ltrf_overlap")
    with pytest.raises(SystemExit) as e:
        ov.main(["saxpy", "--gpu", "kepler-k40"])
    assert e.value.code == 2 and "the sweep simulates" in capsys.readouterr().err
