"""Known answers of the SM's execution units per type (``SMSpec.exec_units``): how many dispatch slots a unit
type has, which unit an op class issues to, and the throughput the simulator gets from them."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.ir import OpClass
from rfmodel.sim import simulate_trace, trace_from_warps
from rfmodel.spec import ExecUnitSpec, get_preset
from rfmodel.spec.occupancy import (
    U_BRA,
    U_DP,
    U_INT,
    U_SFU,
    U_SP,
    class_initiations,
    unit_slots,
    units_of_classes,
)

FERMI_UNITS = ExecUnitSpec(sp=2, sfu=1, dp=0, int=0, tensor=0, branch=0, sp_width=2, sfu_width=1)


def sm_with(units, sfu=(8, 8), fp64=(8, 8)):
    sm = get_preset("fermi-gtx480")
    return sm.replace(
        exec_units=units, latency=sm.latency.replace(sfu=sfu, fp64=fp64), icache=None, icnt_flit_bytes=None
    )


def independent(opc, n, warps):
    return trace_from_warps(
        [[(opc, [10 + i % 16], [2]) for i in range(n)] for _ in range(warps)], warps_per_cta=warps
    )


#: SM7_QV100's units: four of every type but the one load/store unit, each four wide
_VOLTA_TYPES = ("sp", "sfu", "dp", "int", "tensor", "branch")
VOLTA_UNITS = ExecUnitSpec(**{t: 4 for t in _VOLTA_TYPES}, **{f"{t}_width": 4 for t in _VOLTA_TYPES})


def test_the_unit_map_follows_gpgpu_sims_issue_rules():
    fermi = get_preset("fermi-gtx480").replace(exec_units=FERMI_UNITS)  # SM2_GTX480's units
    u = units_of_classes(fermi)
    assert u[OpClass.FP64] == U_SFU and u[OpClass.INT] == U_SP and u[OpClass.BRANCH] == U_SP
    assert list(unit_slots(fermi))[:6] == [2, 2, 2, 1, 2, 1]  # int, sp, dp (unused), sfu, tensor, mem
    volta = get_preset("volta-v100").replace(exec_units=VOLTA_UNITS)  # SM7_QV100's
    v = units_of_classes(volta)
    assert v[OpClass.FP64] == U_DP and v[OpClass.INT] == U_INT and v[OpClass.BRANCH] == U_BRA
    # without exec_units: one pipeline of each type per scheduler, the latency table's intervals
    plain = fermi.replace(exec_units=None)
    assert np.array_equal(class_initiations(plain), np.array(plain.latency.initiations()))
    assert set(unit_slots(plain)) == {2}  # and the load/store unit's dispatch registers too
    # 32 SFUs behind one slot take turns: an 8-cycle interval becomes 1
    wide = fermi.replace(exec_units=ExecUnitSpec(sp=8, sfu=32, sp_width=2, sfu_width=1))
    assert class_initiations(wide)[OpClass.SFU] == 1 and class_initiations(wide)[OpClass.FP32] == 1


@pytest.mark.parametrize("compat", ["none", "gpgpusim"])
def test_one_sfu_shared_by_two_schedulers_halves_sfu_throughput(compat):
    n, warps = 64, 8
    tr = independent("MUFU.RSQ", n, warps)
    one = simulate_trace(tr, sm_with(FERMI_UNITS), "baseline", None, {"compat": compat})
    two = simulate_trace(tr, sm_with(None), "baseline", None, {"compat": compat})
    # one SFU with an 8-cycle interval: one SFU instruction every 8 cycles for the whole SM
    assert 8 * n * warps <= one.metrics["cycles"] <= 8 * n * warps + 100
    assert 4 * n * warps <= two.metrics["cycles"] <= 4 * n * warps + 100


def test_fp64_runs_on_the_sfu_without_dp_units():
    n, warps = 32, 4
    mixed = trace_from_warps(
        [[("DFMA" if i % 2 else "MUFU.RSQ", [10 + i % 16], [2]) for i in range(n)] for _ in range(warps)],
        warps_per_cta=warps,
    )
    r = simulate_trace(mixed, sm_with(FERMI_UNITS), "baseline")
    # DFMA and MUFU share the one SFU pipeline: 8 cycles each, none in parallel
    assert r.metrics["cycles"] >= 8 * n * warps
    sep = simulate_trace(mixed, sm_with(FERMI_UNITS.replace(dp=2, dp_width=2)), "baseline")
    assert sep.metrics["cycles"] < 0.6 * r.metrics["cycles"]


def test_a_width_or_clock_that_would_not_act_is_refused():
    with pytest.raises(Exception, match="dp_width"):
        ExecUnitSpec(sp=2, sfu=1, dp=0, dp_width=4)
    with pytest.raises(Exception, match="icnt_clock_mhz"):
        get_preset("fermi-gtx480").replace(icnt_clock_mhz=350.0)
    half = get_preset("fermi-gtx480").replace(icnt_clock_mhz=350.0, icnt_flit_bytes=40)
    assert half.icnt_flit_cycles == 2.0  # a 700 MHz core: two cycles a flit


def test_sub_cores_need_a_unit_per_scheduler():
    volta = get_preset("volta-v100")
    assert volta.replace(exec_units=VOLTA_UNITS).exec_units == VOLTA_UNITS
    with pytest.raises(Exception, match="exec_units"):
        volta.replace(exec_units=VOLTA_UNITS.replace(sfu=2))
