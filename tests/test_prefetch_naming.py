"""calib/prefetch_naming.py: the LTRF family's prefetch stall cycles as idle cycles x a warp's prefetch
share x a naming factor (docs/validation.md, "Which factor misses").

The factors are checked by hand and against the model's own stall share; the script over the sweep's
simulations is what the docs quote (`python calib/prefetch_naming.py ltrf`)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers_calib import load_calib_script

from rfmodel.designs.ltrf import prefetch_stall_share


def test_the_factors_known_answer():
    # 8 warps at IPC 0.5 take 16 cycles an instruction each; 0.4 prefetch cycles an instruction are a share
    # p = 0.4 / 16 = 0.025 of a warp's time; 3 idle scheduler-cycles an instruction; 0.3 stall cycles named
    # prefetch = 4x what 3 x 0.025 gives; the exposed share is 0.3 / 0.4
    f = load_calib_script("prefetch_naming").factors(0.3, 0.4, 3.0, 0.5, 8.0)
    assert f["p"] == pytest.approx(0.025)
    assert f["naming"] == pytest.approx(4.0)
    assert f["share"] == pytest.approx(0.75)
    assert np.isnan(load_calib_script("prefetch_naming").factors(0.0, 0.0, 3.0, 0.5, 8.0)["naming"])


@pytest.mark.parametrize("sched, ipc, warps", [(2, 0.3, 16), (4, 1.7, 8), (2, 1.9, 48)])
def test_the_models_naming_is_one_when_its_active_warps_are_the_resident_ones(sched, ipc, warps):
    # the model lays to a prefetch the idle cycles in proportion to an active warp's time spent waiting for
    # one (ltrf.prefetch_stall_share): read back through the script's factors, with every resident warp
    # active, that is a naming of exactly 1, whatever the IPC
    pf_per_instr, t_pf = 0.05, 12.0
    stall = float(prefetch_stall_share(ipc, sched, pf_per_instr, t_pf, warps))
    idle = sched / ipc - 1.0
    f = load_calib_script("prefetch_naming").factors(stall, pf_per_instr * t_pf, idle, ipc, warps)
    assert f["naming"] == pytest.approx(1.0, rel=1e-12)


def test_a_design_outside_the_family_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        load_calib_script("prefetch_naming").main(["baseline"])
    assert e.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_negative_record_count_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        load_calib_script("prefetch_naming").main(["ltrf", "--worst", "-3"])
    assert e.value.code == 2
    assert "0 or more" in capsys.readouterr().err
