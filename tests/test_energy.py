"""Energy accounting known answers, the SRAM bank shim and the baseline's structures."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.energy.accounting import Structure, account
from rfmodel.errors import RfmodelError, UnknownNameError
from rfmodel.tech.sram import fit_report, sram_bank


def test_account_known_answer():
    s = [
        Structure("bank", read_pj=10.0, write_pj=20.0, leakage_mw=2.0, area_mm2=0.5, copies=4),
        Structure("xbar", read_pj=1.0, write_pj=0.0, leakage_mw=0.0, area_mm2=0.0),
    ]
    # 1000 cycles at 1000 MHz = 1 us; leakage 4 copies x 2 mW x 1 us = 8 nJ = 8000 pJ
    out = account(s, {"bank": (100, 50), "xbar": (150, 0)}, cycles=1000, clock_mhz=1000)
    assert out["dynamic_pj"][0] == pytest.approx(100 * 10 + 50 * 20)
    assert out["leakage_pj"][0] == pytest.approx(8000.0)
    assert out["energy_pj"][1] == pytest.approx(150.0)
    total = 2000 + 8000 + 150
    assert out["energy_pj_total"] == pytest.approx(total)
    # power = energy / time: 10150 pJ / 1 us = 10.15 mW
    assert out["power_mw"] == pytest.approx(10.15)
    assert out["area_mm2_total"] == pytest.approx(2.0)


def test_account_broadcasts_and_gates_leakage():
    s = [Structure("bank", 1.0, 1.0, leakage_mw=1.0, area_mm2=1.0, copies=np.array([1, 2, 4]))]
    out = account(s, {"bank": (0, 0)}, cycles=1e6, clock_mhz=1000, active_fraction={"bank": 0.5})
    assert out["leakage_pj"][0] == pytest.approx(np.array([1, 2, 4]) * 0.5 * 1e-3 * 1e9)


def test_account_rejects_unknown_structure():
    with pytest.raises(ValueError, match="unknown structures"):
        account([Structure("a", 1, 1, 1, 1)], {"b": (1, 1)}, 1, 1)


def test_sram_fit_is_monotone_in_capacity_and_accurate():
    cap = np.array([4, 8, 16, 32, 64, 128.0])
    b = sram_bank(cap, 1024)
    for m in ("read_energy_pj", "leakage_mw", "area_mm2", "access_ns"):
        assert np.all(np.diff(getattr(b, m)) > 0), m
    rep = fit_report("sram-hp", 45, "1rw")
    assert rep["leakage_mw"]["median_rel_err"] < 0.10
    assert rep["area_mm2"]["median_rel_err"] < 0.15
    assert "CACTI" in b.provenance


def test_sram_lstp_leaks_less_than_hp():
    hp = sram_bank(16, 1024, cell="sram-hp")
    lstp = sram_bank(16, 1024, cell="sram-lstp")
    assert lstp.leakage_mw < hp.leakage_mw / 10


def test_sram_out_of_range_and_unknown():
    with pytest.raises(RfmodelError, match="outside the CACTI data"):
        sram_bank(4096, 1024)
    with pytest.raises(UnknownNameError):
        sram_bank(16, 1024, cell="sram-xx")
    with pytest.raises(RfmodelError, match="node 7 nm is outside the CACTI data"):
        sram_bank(16, 1024, node_nm=7)


def test_account_partial_writes_actions_and_capacity():
    s = [
        Structure(
            "rf", 10.0, 40.0, 1.0, 0.1, copies=2, write_group_pj=1.0, write_fixed_pj=8.0, capacity_bits=8192
        ),
        Structure("dwm", 2.0, 2.0, 0.0, 0.0, actions={"shift": 0.5}),
    ]
    ev = {
        "rf": {"reads": 10, "writes": 5, "partial_writes": 4, "groups_written": 20},
        "dwm": {"reads": 1, "shift": 6},
    }
    out = account(s, ev, cycles=0, clock_mhz=1000)
    # full writes at write_pj, partial ones at their fixed part plus per enabled group
    assert out["dynamic_pj"][0] == pytest.approx(10 * 10 + 5 * 40 + 4 * 8 + 20 * 1)
    assert out["dynamic_pj"][1] == pytest.approx(2 + 6 * 0.5)
    assert out["capacity_kb_total"] == pytest.approx(2.0)
    assert out["dynamic_pj_total"] == pytest.approx(out["energy_pj_total"])


def test_account_rejects_bad_events_and_gating():
    s = [Structure("rf", 1, 1, 1, 1)]
    with pytest.raises(RfmodelError, match="unknown event kinds"):
        account(s, {"rf": {"reads": 1, "shift": 2}}, 1, 1)
    with pytest.raises(RfmodelError, match=r"must lie in \[0, 1\]"):
        account(s, {}, 1, 1, active_fraction={"rf": 1.5})
    with pytest.raises(ValueError, match="unknown structures"):
        account(s, {}, 1, 1, active_fraction={"xx": 0.5})


def test_power_gating_lowers_only_leakage():
    from rfmodel.tech.array import array_cost

    rf = array_cost("sram-hp", 32, 8, 1024, banks=16).structure("rf")
    ev = {"rf": (1000, 500)}
    full = account([rf], ev, cycles=1e5, clock_mhz=700)
    gated = account([rf], ev, cycles=1e5, clock_mhz=700, active_fraction={"rf": 0.43})
    assert gated["dynamic_pj"][0] == pytest.approx(full["dynamic_pj"][0])
    assert gated["leakage_pj"][0] == pytest.approx(0.43 * full["leakage_pj"][0])


def test_baseline_structures_use_the_technology_models():
    from rfmodel.designs.base import get_design
    from rfmodel.spec import get_preset

    sm = get_preset("fermi-gtx480")
    structs = get_design("baseline").structures(
        sm, {"num_banks": np.array([8, 16, 32])}, {"cell": "sram-hp", "node_nm": 45}
    )
    by = {s.name: s for s in structs}
    assert set(by) == {"rf_bank", "collector", "crossbar"}
    # more, smaller banks: cheaper bank accesses, a wider crossbar (more crosspoints)
    assert np.all(np.diff(by["rf_bank"].read_pj) < 0)
    assert np.all(np.diff(by["crossbar"].area_mm2) > 0) and np.all(by["crossbar"].leakage_mw > 0)
    assert "crossbar" in by["crossbar"].provenance and "CACTI" in by["rf_bank"].provenance
    out = account(structs, {"rf_bank": (1e6, 5e5), "crossbar": (1.5e6, 0), "collector": (1e6, 1e6)}, 1e6, 700)
    assert np.all(out["power_mw"] > 0) and np.all(out["area_mm2_total"] > 0)
    tfet = get_design("baseline").structures(sm, {}, {"cell": "tfet", "node_nm": 32})
    assert "Table 2" in tfet[0].provenance
