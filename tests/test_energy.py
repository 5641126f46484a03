"""Energy accounting known answers and the SRAM bank fit."""

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
    with pytest.raises(RfmodelError, match="no CACTI data"):
        sram_bank(16, 1024, node_nm=7)
