"""Technology layer: array fits, monotonicity, cells, interconnect, structures, papers, importers, CLI."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfmodel.cli import main
from rfmodel.errors import ParseError, RfmodelError
from rfmodel.tech import array as tech_array
from rfmodel.tech.array import (
    CELLS,
    TechExtrapolationWarning,
    TechLibrary,
    array_cost,
    cycles,
    default_library,
)
from rfmodel.tech.data import package_rows
from rfmodel.tech.importers import parse_cacti, parse_nvsim, rows_to_csv
from rfmodel.tech.interconnect import crossbar, flattened_butterfly
from rfmodel.tech.validate import fit_errors

# --------------------------------------------------------------------------- realistic tool reports
DATA = Path(__file__).resolve().parent / "data"
# A CACTI 7 scratch-RAM run as the tool prints it (input echo, then the UCA report); the numbers are the 16KB,
# 128-byte-row, itrs-hp, 1rw, 32 nm point of the reference grid.
CACTI_REPORT = (DATA / "cacti_scratch_ram.out").read_text()

CACTI_FAILED = """Cache size                    : 2048
Block size                    : 128
Read only ports               : 0
Write only ports              : 0
Read write ports              : 1
Technology                    : 0.022
Temperature                   : 350
array type                    : Scratch RAM
Data array cell type          : 1
Data array peripheral type    : 1
Optimization target           : 2
ERROR: no valid data array organizations found
"""

# An NVSim RAM run (aggressive STT-RAM sample cell, read-EDP target) as the tool prints it.
NVSIM_REPORT = (DATA / "nvsim_sttram.out").read_text()


# --------------------------------------------------------------------------- fits against the grids
def test_fit_error_in_sample_meets_goals():
    errs = fit_errors(modes=("in-sample",), techs=["sram-hp (CACTI)", "stt-ram (NVSim)"])
    for e in errs:
        goal = 0.10 if "CACTI" in e["technology"] else 0.15
        assert e["median"] <= goal, e
        assert e["n"] > 15


def test_fit_generalizes_to_held_out_configurations():
    lib = default_library()
    fam = lib.family("cacti", "itrs-hp/itrs-hp", "1rw", 350.0, "ED^2")
    rows = fam.rows
    rng = np.random.default_rng(1)
    held = rng.random(len(rows)) < 0.3
    train = [r for r, h in zip(rows, held, strict=True) if not h]
    test = [r for r, h in zip(rows, held, strict=True) if h]
    from rfmodel.tech.fit import LogSurface

    for metric in ("read_energy_pj", "leakage_mw", "area_mm2", "access_ns"):
        s = LogSurface.fit(
            [r.capacity_kb for r in train],
            [r.width_bits for r in train],
            [r.node_nm for r in train],
            [getattr(r, metric) for r in train],
        )
        err = [abs(float(s(r.capacity_kb, r.width_bits, r.node_nm)) / getattr(r, metric) - 1) for r in test]
        assert np.median(err) < 0.15, metric


def test_fit_is_smooth_not_a_lookup():
    # CACTI's organisation search makes its curves step-wise: a smooth law cannot (and must not) pass through
    # every row, while staying close on the median
    lib = default_library()
    fam = lib.family("cacti", "itrs-hp/itrs-hp", "1rw", 350.0, "ED^2")
    rows = [r for r in fam.rows if r.node_nm == 32]
    pred = array_cost(
        "sram-hp", 32, [r.capacity_kb for r in rows], [r.width_bits for r in rows]
    ).read_energy_pj
    err = np.abs(pred / np.array([r.read_energy_pj for r in rows]) - 1)
    assert err.max() > 0.02 and np.median(err) < 0.15


def test_known_reference_point():
    # the CACTI grid's 32 KB, 128 B rows, hp, 1rw, 32 nm point: 46.1 pJ read, 10.61 mW, 0.093 mm^2, 0.320 ns
    c = array_cost("sram-hp", 32, 32, 1024)
    assert float(c.read_energy_pj) == pytest.approx(46.1, rel=0.1)
    assert float(c.leakage_mw) == pytest.approx(10.61, rel=0.1)
    assert float(c.area_mm2) == pytest.approx(0.093, rel=0.1)
    assert float(c.access_ns) == pytest.approx(0.320, rel=0.1)
    assert "CACTI" in c.provenance["read_energy_pj"]


def test_node_interpolation_between_data_nodes():
    a, b, m = (array_cost("sram-hp", n, 16, 512) for n in (32, 45, 40))
    for k in ("read_energy_pj", "area_mm2", "access_ns"):
        lo, hi = sorted((float(getattr(a, k)), float(getattr(b, k))))
        assert lo < float(getattr(m, k)) < hi
    assert "interpolated between 32 and 45" in m.provenance["read_energy_pj"]


# --------------------------------------------------------------------------- monotonicity
_PORTED = {"sram-hp", "sram-lstp", "sram-lop", "tfet"}


@settings(max_examples=40, deadline=None)
@given(
    cell=st.sampled_from(sorted(CELLS)),
    node=st.sampled_from([22, 28, 32, 40, 45]),
    width=st.integers(1, 64).map(lambda k: 32 * k),
    ports=st.sampled_from(["1rw", "1r1w", "2r1w"]),
    c1=st.floats(0.25, 512.0),
    factor=st.floats(1.0, 64.0),
)
def test_costs_never_fall_as_capacity_grows(cell, node, width, ports, c1, factor):
    if cell not in _PORTED:
        ports = "1rw"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TechExtrapolationWarning)
        a = array_cost(cell, node, c1, width, ports=ports, out_of_range="extrapolate")
        b = array_cost(cell, node, c1 * factor, width, ports=ports, out_of_range="extrapolate")
    for m in (
        "read_energy_pj",
        "write_energy_pj",
        "leakage_mw",
        "area_mm2",
        "access_ns",
        "write_ns",
        "cycle_ns",
    ):
        assert float(getattr(b, m)) >= float(getattr(a, m)) * (1 - 1e-12), m


# --------------------------------------------------------------------------- cells
def test_stt_ram_write_cycles_match_the_stt_paper():
    stt = array_cost("stt-ram", 32, 8, 1024)
    rel = array_cost("stt-ram-relaxed", 32, 8, 1024)
    sram = array_cost("sram-hp", 32, 8, 1024)
    assert int(stt.write_cycles(700)) == 4 and int(rel.write_cycles(700)) == 2
    assert int(stt.read_cycles(700)) == 1 and int(sram.write_cycles(700)) == 1
    assert float(rel.write_energy_pj) < float(stt.write_energy_pj)
    assert float(rel.read_energy_pj) == pytest.approx(float(stt.read_energy_pj))
    # inside one tool (NVSim), STT-RAM leaks less than SRAM: its leakage is all periphery
    assert float(stt.leakage_mw) < float(array_cost("sram-hp", 32, 8, 1024, source="nvsim").leakage_mw)


def test_partial_writes_scale_with_groups():
    c = array_cost("stt-ram", 32, 8, 1024)
    full = c.partial_write_pj(32)
    assert float(full) == pytest.approx(float(c.write_energy_pj))
    e = [float(c.partial_write_pj(g)) for g in (0, 8, 16, 32)]
    assert e == sorted(e) and e[0] == pytest.approx(float(c.write_fixed_pj))
    # the STT-RAM paper: dynamic write energy scales with the compressed size
    assert float(c.partial_write_pj(8)) < 0.35 * float(full)
    with pytest.raises(RfmodelError, match="does not fit"):
        c.partial_write_pj(33)


def test_lstp_leaks_orders_of_magnitude_less_and_is_slower():
    hp, lstp = array_cost("sram-hp", 32, 16, 1024), array_cost("sram-lstp", 32, 16, 1024)
    assert float(lstp.leakage_mw) < float(hp.leakage_mw) / 100
    assert float(lstp.access_ns) > 2 * float(hp.access_ns)


def test_tfet_and_dwm_follow_ltrf_table2():
    hp = array_cost("sram-hp", 32, 16, 1024)
    tfet = array_cost("tfet", 32, 16, 1024)
    dwm = array_cost("dwm", 32, 16, 1024)
    assert float(tfet.leakage_mw / hp.leakage_mw) == pytest.approx(1.05 / 8)
    assert float(tfet.area_mm2 / hp.area_mm2) == pytest.approx(1.0)
    assert float(dwm.area_mm2 / hp.area_mm2) == pytest.approx(0.25 / 8)
    assert float(dwm.shift_ns) > 0 and dwm.shift_steps_per_access == pytest.approx(63 / 24)
    assert float(dwm.access_ns) == pytest.approx(float(hp.access_ns) + float(dwm.shift_ns))
    assert float(dwm.shift_energy_pj) < float(dwm.read_energy_pj)
    assert "Table 2" in tfet.provenance["access_ns"] and "paper" == tfet.source
    with pytest.raises(RfmodelError, match="1rw"):
        array_cost("dwm", 32, 16, 1024, ports="1r1w")


def test_nvsim_sram_for_in_tool_ratios_and_ports():
    nv = array_cost("sram-hp", 32, 64, 1024, source="nvsim")
    assert nv.source == "nvsim" and "NVSim" in nv.provenance["area_mm2"]
    with pytest.raises(RfmodelError, match="single-ported"):
        array_cost("stt-ram", 32, 64, 1024, ports="2r1w", source="nvsim")
    # NVSim's data are single-ported: a multi-ported STT-RAM bank is derived (the SRAM's port overhead)
    derived = array_cost("stt-ram", 32, 64, 1024, ports="2r1w")
    assert derived.source == "ports" and "single-ported" in derived.notes[0]
    with pytest.raises(RfmodelError, match="one access port per track"):
        array_cost("dwm", 32, 64, 1024, ports="2r1w")


def test_banks_multiply_totals_and_structure_carries_provenance():
    c = array_cost("sram-hp", 45, 8, 1024, banks=16)
    assert float(c.total_area_mm2) == pytest.approx(16 * float(c.area_mm2))
    s = c.structure("rf")
    assert s.copies == 16 and "CACTI" in s.provenance and s.capacity_bits == 8 * 8192


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"cell": "sram-xx"}, "unknown cell technology 'sram-xx'"),
        ({"capacity_kb": -8}, "capacity_kb = -8 must be > 0"),
        ({"width_bits": 100}, "multiple of 32"),
        ({"ports": "3r"}, "unknown port configuration"),
        ({"node_nm": 7}, "node 7 nm is outside"),
        ({"node_nm": 130, "cell": "stt-ram"}, "outside the NVSIM data"),
        ({"capacity_kb": 4096}, "outside the CACTI data"),
        ({"out_of_range": "clip"}, "unknown out_of_range mode"),
        ({"banks": 0}, "banks = 0"),
        ({"source": "nvsim", "cell": "sram-lop"}, "no 'nvsim' estimator"),
    ],
)
def test_bad_queries_raise_one_clear_error(kw, match):
    args = {"cell": "sram-hp", "node_nm": 32, "capacity_kb": 16, "width_bits": 1024} | kw
    with pytest.raises(RfmodelError, match=match):
        array_cost(**args)


def test_extrapolation_is_the_callers_choice():
    with pytest.raises(RfmodelError, match="outside the CACTI data"):
        array_cost("sram-hp", 32, 1024, 1024)
    with pytest.warns(TechExtrapolationWarning, match="extrapolated"):
        c = array_cost("sram-hp", 32, 1024, 1024, out_of_range="extrapolate")
    assert c.extrapolated and "EXTRAPOLATED" in c.provenance["leakage_mw"]
    assert float(c.leakage_mw) > float(array_cost("sram-hp", 32, 128, 1024).leakage_mw)


def test_cycles():
    assert cycles(0.3, 1000) == 1 and cycles(1.0, 1000) == 1 and cycles(1.01, 1000) == 2
    with pytest.raises(RfmodelError, match="clock_mhz"):
        cycles(1.0, 0)


# --------------------------------------------------------------------------- interconnect
def test_crossbar_scales_with_ports_width_and_span():
    a = crossbar(16, 16, 1024, 32, 1.0)
    assert crossbar(32, 16, 1024, 32, 1.0).area_mm2 == pytest.approx(2 * a.area_mm2)
    assert crossbar(16, 16, 512, 32, 1.0).transfer_pj == pytest.approx(a.transfer_pj / 2)
    assert crossbar(64, 16, 1024, 32, 1.0).latency_ns > a.latency_ns
    assert crossbar(16, 16, 1024, 32, 2.0).energy_pj_per_bit > a.energy_pj_per_bit
    assert a.cycles(1137) >= 1 and a.cycles(1137, data_bits=4096) == a.cycles(1137) + 3
    fb = flattened_butterfly(128, 16, 1024, 32, 3.0)
    assert 2.0 < fb.hops <= 3.0 and fb.area_mm2 > 0 and "router" in fb.provenance["energy_pj_per_bit"]
    with pytest.raises(RfmodelError, match="multiple of 32"):
        crossbar(16, 16, 100, 32, 1.0)
    with pytest.raises(RfmodelError, match="wire constants at 7 nm"):
        crossbar(16, 16, 1024, 7, 1.0)


# --------------------------------------------------------------------------- structures
def test_structure_estimators_have_costs_and_provenance():
    from rfmodel.tech import structures as s

    made = [
        s.register_cache(node_nm=32),
        s.operand_collector(node_nm=32),
        s.tag_array(256, 4, 17, node_nm=40, banks=4),
        s.renaming_table(node_nm=40),
        s.free_map(node_nm=40),
        s.write_buffer(node_nm=32),
        s.collector_cache(node_nm=32),
        s.warp_control_block(node_nm=32),
        s.packing_logic(node_nm=45),
        *s.bdi_codec(node_nm=32).values(),
    ]
    for x in made:
        assert float(x.leakage_mw) > 0 and float(x.area_mm2) > 0, x.kind
        assert float(x.read_pj) + float(x.write_pj) > 0, x.kind
        assert set(x.provenance) >= {"read_pj", "write_pj", "leakage_mw", "area_mm2"}, x.kind
        assert x.structure().name == x.kind
    # the paper's area for the BDI codec at its own node
    codec = s.bdi_codec(node_nm=32)
    assert float(codec["compressor"].area_mm2 + codec["decompressor"].area_mm2) == pytest.approx(0.07)
    # latch storage below CACTI's smallest array: area per bit, not an SRAM's periphery
    small, big = s.operand_collector(3, node_nm=32), s.register_cache(64, 1, node_nm=32)
    assert float(small.area_mm2) < float(big.area_mm2) / 4
    with pytest.raises(RfmodelError, match="read_ports"):
        s.renaming_table(node_nm=40, read_ports=3)


# --------------------------------------------------------------------------- papers
def test_papers_tables_reproduced_where_the_model_agrees():
    from rfmodel.tech import papers

    rows = {
        (r["table"], r["item"]): r for r in papers.stt_table1() + papers.corf_table2() + papers.ltrf_table2()
    }
    # exact: write cycles of 10-year and 10 ms retention, capacity per area of the 8x-bank SRAM
    assert rows[("STT Table 1 (nvsim SRAM)", "STT write cycles at 700 MHz")]["rel_err"] == 0
    assert rows[("STT Table 2", "10 ms retention write cycles")]["rel_err"] == 0
    assert abs(rows[("CORF Table 2", "size RT/RF")]["rel_err"]) < 0.1
    assert abs(rows[("LTRF Table 2", "#3 HP SRAM 8x banks 1x size: capacity/area")]["rel_err"]) < 0.1
    assert abs(rows[("LTRF Table 2", "#3 HP SRAM 8x banks 1x size: power (static only)")]["rel_err"]) < 0.25
    r = rows[("LTRF Table 2", "#1 HP SRAM 1x banks 1x size: latency")]
    assert r["model"] == pytest.approx(1.0) and r["rel_err"] == pytest.approx(0.0)


# --------------------------------------------------------------------------- importers
def test_parse_cacti_report():
    (row,) = parse_cacti(CACTI_REPORT, "run.out")
    assert row["capacity_KB"] == "16" and row["block_bits"] == "1024" and row["ports"] == "1rw"
    assert row["node_nm"] == "32" and row["cell_type"] == "itrs-hp" and row["opt_target"] == "ED^2"
    assert float(row["leakage_total_mW"]) == pytest.approx(5.61942)
    assert float(row["area_mm2"]) == pytest.approx(0.071746)
    assert float(row["read_energy_nJ"]) == pytest.approx(0.0432431)
    # a report of two runs, one failed
    rows = parse_cacti(CACTI_REPORT + "\n" + CACTI_FAILED, "two.out")
    assert len(rows) == 2 and rows[1]["error"].startswith("ERROR") and rows[1]["cell_type"] == "itrs-lstp"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("hello world\n", "not a CACTI report"),
        (CACTI_REPORT.replace("Access time (ns): 0.276332", "Access time (ns): n/a"), "no access time"),
        (CACTI_REPORT.replace("Scratch RAM", "Cache"), "scratch-RAM runs"),
        (
            CACTI_REPORT.replace("Data array cell type          : 0", "Data array cell type          : 4"),
            "SRAM",
        ),
        (
            CACTI_REPORT.replace(
                "Cache banks (UCA)             : 1", "Cache banks (UCA)             : 4"
            ).replace("Number of banks: 1", "Number of banks: 4"),
            "single-bank",
        ),
        (  # one read-write and two read ports: imported as "1rw2r0w", a name no query asks for
            CACTI_REPORT.replace(
                "Read only ports               : 0", "Read only ports               : 2"
            ).replace("    Read ports: 0", "    Read ports: 2"),
            "1 read-write, 2 read and 0 write port",
        ),
    ],
)
def test_malformed_cacti_report(text, match):
    with pytest.raises(ParseError, match=match):
        parse_cacti(text, "bad.out")


def test_parse_nvsim_report():
    (row,) = parse_nvsim(NVSIM_REPORT, "stt.out", node_nm=32)
    assert row["cell"] == "STTRAM_aggressive" and row["opt_target"] == "ReadEDP"
    assert float(row["read_latency_ns"]) == pytest.approx(1.471)
    assert float(row["write_energy_pJ"]) == pytest.approx(297.336)
    assert float(row["leakage_mW"]) == pytest.approx(31.434) and float(row["area_mm2"]) == pytest.approx(
        0.178
    )
    assert float(row["write_pulse_ns"]) == pytest.approx(5.0) and row["subarray_cols"] == "512"
    with pytest.raises(ParseError, match="--node"):
        parse_nvsim(NVSIM_REPORT, "stt.out")
    with pytest.raises(ParseError, match="RESULT"):
        parse_nvsim(NVSIM_REPORT.split("=============\n   RESULT")[0], "cut.out", node_nm=32)
    with pytest.raises(ParseError, match="unknown unit"):
        parse_nvsim(NVSIM_REPORT.replace("31.434mW", "31.434mX"), "u.out", node_nm=32)


def test_parse_nvsim_reports_one_after_the_other():
    """A file of two runs took the first run's capacity, width and organisation for both rows."""
    small = (
        NVSIM_REPORT.replace("Capacity   : 128KB", "Capacity   : 16KB")
        .replace("Bank Organization: 1 x 1", "Bank Organization: 2 x 2")
        .replace("512 Rows x 512 Columns", "128 Rows x 256 Columns")
    )
    first, second = parse_nvsim(NVSIM_REPORT + small, "two.out", node_nm=32)
    assert (first["capacity_KB"], first["mats_rows"], first["subarray_rows"]) == ("128", "1", "512")
    assert (second["capacity_KB"], second["mats_rows"], second["subarray_rows"]) == ("16", "2", "128")
    assert (first["run_id"], second["run_id"]) == ("two.out#1", "two.out#2")


def test_imported_rows_extend_the_fits(tmp_path):
    # the NVSim run at a node the grid lacks (28 nm) becomes part of the STT-RAM family
    rows = parse_nvsim(NVSIM_REPORT, "stt.out", node_nm=28)
    f = tmp_path / "extra.csv"
    f.write_text(rows_to_csv(rows, "nvsim", ["stt.out"]))
    lib = TechLibrary([f])
    fam = lib.family("nvsim", "STTRAM_aggressive", "1rw", 350.0, "ReadEDP")
    assert 28.0 in fam.nodes and len(fam.rows) == 22
    assert len(lib.rows) == len(package_rows()) + 1


# --------------------------------------------------------------------------- CLI
def test_cli_query_json(capsys):
    assert (
        main(
            [
                "tech",
                "query",
                "--cell",
                "stt-ram",
                "--node",
                "32",
                "--capacity-kb",
                "8",
                "--width-bits",
                "1024",
                "--json",
                "--clock-mhz",
                "700",
            ]
        )
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    for k in ("read_energy_pj", "write_energy_pj", "leakage_mw", "area_mm2", "access_ns"):
        assert d[k] > 0
    assert d["write_cycles"] == 4 and d["provenance"]["area_mm2"]


@pytest.mark.parametrize(
    "argv",
    [
        ["tech", "query", "--cell", "unobtainium", "--node", "32", "--capacity-kb", "8"],
        ["tech", "query", "--cell", "sram-hp", "--node", "32", "--capacity-kb", "-8"],
        ["tech", "query", "--cell", "sram-hp", "--node", "32", "--capacity-kb", "8", "--width-bits", "100"],
        ["tech", "query", "--cell", "sram-hp", "--node", "32", "--capacity-kb", "8", "--ports", "4rw"],
        ["tech", "query", "--cell", "sram-hp", "--node", "abc", "--capacity-kb", "8"],
        ["tech", "query", "--cell", "sram-hp", "--node", "32", "--capacity-kb", "9999"],
        ["tech", "import", "cacti", "MISSING.out"],
        ["tech", "import", "spice", "x.out"],
    ],
)
def test_cli_bad_input_exit_2_one_line(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("rfmodel: error:") and err.count("\n") == 1


def test_cli_malformed_cacti_file(tmp_path, capsys):
    f = tmp_path / "broken.out"
    f.write_text(
        CACTI_REPORT.replace("Total dynamic read energy per access (nJ): 0.0432431", "Total dynamic")
    )
    assert main(["tech", "import", "cacti", str(f)]) == 2
    err = capsys.readouterr().err
    assert "broken.out" in err and err.count("\n") == 1


def test_cli_import_writes_rows(tmp_path, capsys):
    src = tmp_path / "run.out"
    src.write_text(CACTI_REPORT)
    out = tmp_path / "rows.csv"
    assert main(["tech", "import", "cacti", str(src), "--out", str(out)]) == 0
    from rfmodel.tech.data import rows_from_file

    (r,) = rows_from_file(out)
    assert r.tool == "cacti" and r.read_energy_pj == pytest.approx(43.2431) and r.ports == "1rw"
    src2 = tmp_path / "stt.out"
    src2.write_text(NVSIM_REPORT)
    assert main(["tech", "import", "nvsim", str(src2), "--node", "32"]) == 0
    assert "STTRAM_aggressive" in capsys.readouterr().out
    # CSV text under another name (a .nc file that was not NetCDF) is refused, nothing written
    assert main(["tech", "import", "cacti", str(src), "--out", str(tmp_path / "rows.nc")]) == 2
    assert "ending in .csv" in capsys.readouterr().err and not (tmp_path / "rows.nc").exists()


def test_cli_show(capsys):
    assert main(["tech", "show", "--json"]) == 0
    cells = {c["cell"] for c in json.loads(capsys.readouterr().out)["cells"]}
    assert cells == set(CELLS)


def test_show_lists_the_ports_a_query_is_answered_for():
    """The ports column listed the data's only: the STT-RAM cells said 1rw, yet their multi-ported banks are
    answered (derived with the SRAM's port overhead).  Every port listed answers at the middle of the data's
    range; one not listed is refused."""
    from rfmodel.cli_tech import cells_table
    from rfmodel.errors import RfmodelError
    from rfmodel.tech.array import PORTS, array_cost

    rows = {r["cell"]: r for r in cells_table()}
    assert rows["stt-ram"]["ports"] == "1rw,1r1w,2r1w" and rows["dwm"]["ports"] == "1rw"
    for cell, row in rows.items():
        node = float(row["nodes_nm"].split(",")[-1])
        listed = row["ports"].split(",")
        for ports in PORTS:
            if ports in listed:
                assert array_cost(cell, node, 16.0, 512, ports=ports).read_energy_pj > 0
            else:
                with pytest.raises(RfmodelError):
                    array_cost(cell, node, 16.0, 512, ports=ports)


def test_default_library_is_shared():
    assert tech_array.default_library() is default_library()


def test_fitted_surfaces_are_kept_on_disk(tmp_path, monkeypatch):
    """A surface is solved once and then loaded from the cache (no solver, no scipy) with the same
    coefficients; a damaged entry is solved again; with the cache off every call solves."""
    from rfmodel.tech.fit import LogSurface

    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path))
    cap = [4, 8, 16, 32, 64, 4, 8, 16, 32, 64]
    wid = [256] * 5 + [512] * 5
    node = [45] * 10
    val = [0.01 * c**0.8 * (w / 256) ** 0.5 for c, w in zip(cap, wid, strict=True)]
    first = LogSurface.fit(cap, wid, node, val)
    entries = list((tmp_path / "tech-fit").glob("*.npz"))
    assert len(entries) == 1

    def no_solve(*a, **k):
        raise AssertionError("solved again")

    monkeypatch.setattr(LogSurface, "_solve", classmethod(no_solve))
    again = LogSurface.fit(cap, wid, node, val)
    assert np.array_equal(again.coef, first.coef) and again.terms == first.terms and again.box == first.box
    assert again(16, 256, 45) == pytest.approx(first(16, 256, 45), rel=1e-12)
    monkeypatch.undo()
    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path))
    entries[0].write_bytes(entries[0].read_bytes()[:-40])  # cut short
    assert np.array_equal(LogSurface.fit(cap, wid, node, val).coef, first.coef)
    monkeypatch.setenv("RFMODEL_CACHE_DIR", "off")
    assert np.array_equal(LogSurface.fit(cap, wid, node, val).coef, first.coef)


def test_crossbar_costs_over_a_grid_are_each_points_crossbar():
    """The vectorized crossbar (the SM structures' grid path) gives, point by point, the figures of one
    crossbar() per point, bit for bit; a bad input is one error."""
    from rfmodel.errors import RfmodelError
    from rfmodel.tech.interconnect import crossbar, crossbar_costs

    banks = np.array([1, 2, 3, 16, 33, 64])[:, None]
    coll = np.array([1, 4, 7, 32])[None, :]
    span = np.linspace(0.05, 2.5, 24).reshape(6, 4)
    e, leak, area = crossbar_costs(banks, coll, 1024, 28, span)
    for i in range(6):
        for j in range(4):
            net = crossbar(int(banks[i, 0]), int(coll[0, j]), 1024, 28, float(span[i, j]))
            assert (e[i, j], leak[i, j], area[i, j]) == (net.transfer_pj, net.leakage_mw, net.area_mm2)
    with pytest.raises(RfmodelError, match="inputs"):
        crossbar_costs(np.array([0, 2]), 4, 1024, 45, 1.0)
    with pytest.raises(RfmodelError, match="span_mm"):
        crossbar_costs(2, 4, 1024, 45, np.array([1.0, np.nan]))


def test_a_surface_answers_each_query_alike_alone_or_in_a_grid():
    """A grid of bank shapes (repeated shapes, a shape named with the capacity and width of another swapped,
    scalars broadcast against arrays) gets, at every point, the value that shape gets asked alone."""
    from rfmodel.tech.fit import LogSurface

    cap = [4, 8, 16, 32, 64, 4, 8, 16, 32, 64]
    wid = [256] * 5 + [512] * 5
    val = [0.01 * c**0.8 * (w / 256) ** 0.5 for c, w in zip(cap, wid, strict=True)]
    s = LogSurface.fit(cap, wid, [45] * 10, val)
    qc = np.array([[16, 8, 16], [256, 16, 8]], dtype=float)
    qw = np.array([[256, 512, 256], [16, 384, 512]], dtype=float)
    grid = s.log_value(qc, qw, 45)
    assert grid.shape == qc.shape
    alone = np.array(
        [
            [float(s.log_value(c, w, 45)) for c, w in zip(rc, rw, strict=True)]
            for rc, rw in zip(qc, qw, strict=True)
        ]
    )
    assert np.array_equal(grid, alone)
    assert np.array_equal(
        s.log_value(16.0, qw, 45), np.array([[s.log_value(16.0, w, 45) for w in r] for r in qw])
    )
    assert s.log_value(16.0, 256.0, 45).shape == ()
