"""The STT-RAM register-file paper's own cell (``stt-ram-paper``, rfmodel/tech/derive.py): known answers from
its Table 1 (SRAM vs STT-RAM, 32 nm, 700 MHz, NVSim) as multipliers on the HP-SRAM bank, its 4-cycle writes,
its ports, and the STT-RAM design with it."""

import numpy as np
import pytest

import rfmodel
from rfmodel.designs.mainrf import cell_timing
from rfmodel.errors import RfmodelError
from rfmodel.tech import array_cost, cells
from rfmodel.tech.array import METRICS, PAPER_CELLS

# Table 1, by hand: STT-RAM / SRAM
AREA, LEAK, READ, WRITE = 0.038 / 0.194, 16.2 / 248.7, 0.239 / 0.203, 0.300 / 0.191
WRITE_NS = 4 / 0.7  # 4 cycles at 700 MHz
RATIOS = {"area_mm2": AREA, "leakage_mw": LEAK, "read_energy_pj": READ, "write_energy_pj": WRITE}


def test_the_cell_is_known_and_paper_derived():
    assert "stt-ram-paper" in cells() and "Table 1" in cells()["stt-ram-paper"]
    assert PAPER_CELLS["stt-ram-paper"] == "stt"
    assert array_cost("stt-ram-paper", 32, 8, 1024).source == "paper"


@pytest.mark.parametrize(("node", "kb", "width"), [(32, 8, 1024), (45, 16, 512), (22, 64, 256), (90, 4, 128)])
def test_ratios_to_hp_sram_are_table_1s(node, kb, width):
    """At any query the paper cell is Table 1's STT/SRAM ratios times the HP-SRAM bank; reads as fast."""
    p, s = array_cost("stt-ram-paper", node, kb, width), array_cost("sram-hp", node, kb, width)
    for m, k in RATIOS.items():
        assert float(getattr(p, m) / getattr(s, m)) == pytest.approx(k, rel=1e-9), m
    assert float(p.access_ns) == pytest.approx(float(s.access_ns), rel=1e-12)
    assert float(p.write_ns) == pytest.approx(max(float(s.write_ns), WRITE_NS), rel=1e-12)
    assert float(p.cycle_ns) == pytest.approx(max(float(s.cycle_ns), WRITE_NS), rel=1e-12)
    # the SRAM's split of the write energy: the whole write scales with the bits written
    assert float(p.write_bit_fraction) == pytest.approx(float(s.write_bit_fraction))


def test_the_papers_bank_at_700_mhz():
    """16 x 8 KB, 1024-bit rows, 32 nm: one-cycle reads and 4-cycle writes at 700 MHz (not 5 from the edge:
    the write takes exactly 4 cycles' time, 5.714 ns)."""
    p = array_cost("stt-ram-paper", 32, 8, 1024, banks=16)
    assert float(p.write_ns) == pytest.approx(5.714285714285714, rel=1e-12)
    assert int(p.read_cycles(700)) == 1 and int(p.write_cycles(700)) == 4
    assert int(p.write_cycles(1400)) == 8 and int(p.write_cycles(1137)) == 7
    # against the tables' stt-ram cell: the same cycles, a much smaller and less leaky bank (Table 1)
    n = array_cost("stt-ram", 32, 8, 1024)
    assert int(n.read_cycles(700)) == 1 and int(n.write_cycles(700)) == 4
    assert float(p.area_mm2) < 0.2 * float(n.area_mm2) and float(p.leakage_mw) < 0.1 * float(n.leakage_mw)
    # the design layer's bank timing (45 nm, relative to SRAM-HP's read): 1 and 4 cycles at Fermi's clock
    assert cell_timing("stt-ram-paper", 8.0, 1024, 700.0) == (1.0, 4.0)


def test_provenance_names_table_1_and_the_ratio():
    p = array_cost("stt-ram-paper", 32, 8, 1024)
    for m in METRICS:
        assert "Table 1" in p.provenance[m] and "STT/SRAM" in p.provenance[m], m
    assert "x0.1959 = STT/SRAM area 0.038/0.194" in p.provenance["area_mm2"]
    assert "x0.06514 = STT/SRAM leakage 16.2/248.7" in p.provenance["leakage_mw"]
    assert "0.239/0.203" in p.provenance["read_energy_pj"] and "0.3/0.191" in p.provenance["write_energy_pj"]
    assert "4 cycles at 700 MHz" in p.provenance["write_ns"] and "not 5" in p.provenance["write_ns"]
    assert "CACTI" in p.provenance["read_energy_pj"]  # the base bank's own provenance follows


def test_multi_ported_banks_come_from_the_ports_estimator_like_stt_ram():
    """The paper's bank is single-ported (NVSim); 1r1w and 2r1w take HP SRAM's port overhead like stt-ram:
    the ratios to the SRAM bank with the same ports stay Table 1's, the read time is SRAM's and the write
    adds the SRAM's extra nanoseconds to the 4-cycle write."""
    one_s = array_cost("sram-hp", 32, 8, 1024)
    for ports in ("1r1w", "2r1w"):
        p = array_cost("stt-ram-paper", 32, 8, 1024, ports=ports)
        s = array_cost("sram-hp", 32, 8, 1024, ports=ports)
        assert p.source == "ports" and p.ports == ports and any("paper:" in n for n in p.notes)
        for m, k in RATIOS.items():
            assert float(getattr(p, m) / getattr(s, m)) == pytest.approx(k, rel=1e-9), m
        assert float(p.access_ns) == pytest.approx(float(s.access_ns), rel=1e-12)
        extra = float(s.write_ns) - float(one_s.write_ns)
        assert extra > 0 and float(p.write_ns) == pytest.approx(WRITE_NS + extra, rel=1e-12)
        assert "Table 1" in p.provenance["write_energy_pj"]
    with pytest.raises(RfmodelError, match="single-ported"):
        array_cost("stt-ram-paper", 32, 8, 1024, ports="1r1w", source="paper")


def test_stt_design_with_the_papers_cell():
    """The STT-RAM register file with the paper's cell: 4-cycle writes like stt-ram, the same cycles, and a
    different RF bank energy (Table 1's ratios on CACTI's SRAM against NVSim's cell)."""
    ds = rfmodel.evaluate(
        "stt", "saxpy", "fermi-gtx480", method="analytic", params={"main_cell": ["stt-ram", "stt-ram-paper"]}
    )
    by = {c: ds.sel(main_cell=c, workload="saxpy") for c in ("stt-ram", "stt-ram-paper")}
    for d in by.values():
        assert float(d["main_rf_write_cycles"]) == 4 and float(d["main_rf_read_cycles"]) == 1
    assert float(by["stt-ram"]["cycles"]) == pytest.approx(float(by["stt-ram-paper"]["cycles"]))
    e = {c: float(d["energy_pj"].sel(structure="rf_bank")) for c, d in by.items()}
    assert np.isfinite(list(e.values())).all() and e["stt-ram-paper"] < 0.9 * e["stt-ram"]


def test_stt_design_simulates_with_the_papers_cell():
    """The simulator takes the cell too (4 warps): the same bank timing as stt-ram, so the same cycles, and
    the smaller bank energy."""
    ds = rfmodel.evaluate(
        "stt",
        "saxpy",
        "fermi-gtx480",
        method="simulate",
        max_warps=4,
        params={"main_cell": ["stt-ram", "stt-ram-paper"]},
    )
    d = ds.sel(workload="saxpy")
    assert d["main_rf_write_cycles"].values.tolist() == [4.0, 4.0]
    assert d["cycles"].sel(main_cell="stt-ram") == d["cycles"].sel(main_cell="stt-ram-paper")
    e = d["energy_pj"].sel(structure="rf_bank")
    assert 0 < float(e.sel(main_cell="stt-ram-paper")) < float(e.sel(main_cell="stt-ram"))
