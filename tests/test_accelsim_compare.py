"""calib/accelsim.py: the comparison with Accel-Sim on the built-in workloads.

The pure parts (reading Accel-Sim's stdout and rfmodel's JSON, counting a config's SMs, the trace header
rewrite, the docs section) are tested on captured text; the end-to-end run needs Accel-Sim (``ACCELSIM``,
the path of ``accel-sim.out``) and is marked slow.
"""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import pytest
from helpers_calib import load_calib_script
from helpers_reference import needs_reference

acs = load_calib_script("accelsim")

# Accel-Sim (accel-sim-framework 73f9fac, gpgpu-sim_distribution 667834c) on the saxpy trace exported for
# one SM of 80, SM7_QV100_1SM: the lines the comparison reads, with their neighbours, cut from its stdout
SAXPY_STDOUT = """\
GPGPU-Sim uArch: Shader 0 bind to kernel 1 'saxpy'
GPGPU-Sim uArch: CTA/core = 8, limited by: threads
GPGPU-Sim: Reconfigure L1 cache to 128KB
thread block = 0,0,0
thread block = 1,0,0
Destroy streams for kernel 1: size 0
kernel_name = saxpy
kernel_launch_uid = 1
kernel_stream_id = 0
gpu_sim_cycle = 15922
gpu_sim_insn = 175616
gpu_ipc =      11.0298
gpu_tot_sim_cycle = 15922
gpu_tot_sim_insn = 175616
gpu_tot_ipc =      11.0298
gpu_tot_issued_cta = 2
gpu_occupancy = -nan%

========= Core cache stats =========
L1I_cache:
\tL1I_total_cache_accesses = 0
\tL1I_total_cache_misses = 0
\tL1I_total_cache_pending_hits = 0
\tL1I_total_cache_reservation_fails = 0
L1D_cache:
\tL1D_cache_core[0]: Access = 8064, Miss = 5376, Miss_rate = 0.667, Pending_hits = 0, Reservation_fails = 690
\tL1D_total_cache_accesses = 8064
\tL1D_total_cache_misses = 5376
\tL1D_total_cache_miss_rate = 0.6667
\tL1D_total_cache_pending_hits = 0
\tL1D_total_cache_reservation_fails = 690
\tL1D_cache_data_port_util = 0.169
\tL1D_cache_fill_port_util = 0.338
L1C_cache:
\tL1C_total_cache_accesses = 0
\tL1C_total_cache_misses = 0
gpgpu_n_tot_thrd_icount = 175616
gpgpu_n_tot_w_icount = 5632
gpgpu_n_stall_shd_mem = 62
gpu_reg_bank_conflict_stalls = 0
Warp Occupancy Distribution:
Stall:428\tW0_Idle:859\tW0_Scoreboard:56909\tW1:0\tW2:0\tW3:0\tW32:5488
single_issue_nums: WS0:1408\tWS1:1408\tWS2:1408\tWS3:1408\t
gpgpu_simulation_time = 0 days, 0 hrs, 0 min, 2 sec (2 sec)
GPGPU-Sim: *** simulation thread exiting ***
GPGPU-Sim: *** exit detected ***
"""

# a Volta-map trace on the GTX 480 config without a branch unit: the run aborts
DEADLOCK_STDOUT = """\
thread block = 4,0,0


GPGPU-Sim uArch: ERROR ** deadlock detected: last writeback core 0 @ gpu_sim_cycle 2487 \
(+ gpu_tot_sim_cycle 4294867296) (97513 cycles ago)
GPGPU-Sim uArch: DEADLOCK  shader cores no longer committing instructions [core(# threads)]:
GPGPU-Sim uArch: DEADLOCK  0(1280)
"""


def test_parse_accelsim_reads_cycles_instructions_l1d_and_stalls():
    r = acs.parse_accelsim(SAXPY_STDOUT)
    assert r["done"] and r["error"] is None
    assert r["cycles"] == 15922
    assert r["thread_instructions"] == 175616 and r["warp_instructions"] == 5632
    assert r["l1d_accesses"] == 8064 and r["l1d_misses"] == 5376
    assert r["l1d_hit_rate"] == pytest.approx(1 - 5376 / 8064)
    assert r["l1d_hit_rate"] == pytest.approx(1 - r["l1d_miss_rate"], abs=1e-4)
    assert r["l1d_kb"] == 128  # the adaptive carve-out with no shared memory
    total = 428 + 859 + 56909
    assert r["structural_share"] == pytest.approx(428 / total)
    assert r["idle_share"] == pytest.approx(859 / total)
    assert r["dependency_share"] == pytest.approx(56909 / total)


def test_parse_accelsim_reports_why_a_run_failed():
    r = acs.parse_accelsim(DEADLOCK_STDOUT)
    assert not r["done"] and r["cycles"] is None
    assert "deadlock detected" in r["error"]
    r = acs.parse_accelsim("Processing kernel k\nunsupported binary version: 20\n")
    assert r["error"] == "unsupported binary version: 20"  # Accel-Sim exits 0 here
    assert acs.parse_accelsim("gpu_tot_sim_cycle = 10\n")["error"] == "no normal exit"
    r = acs.parse_accelsim(
        "launching kernel name: k uid: 1 cuda_stream_id: 0\n"
        "GPGPU-Sim uArch: ERROR ** Kernel requires more resources than shader has.\n"
    )
    assert r["error"] == "GPGPU-Sim uArch: ERROR ** Kernel requires more resources than shader has."
    r = acs.parse_accelsim("GPGPU-Sim ** ERROR: Unknown Option: '-gpuwattch_xml_file' \n")
    assert r["error"] == "GPGPU-Sim ** ERROR: Unknown Option: '-gpuwattch_xml_file'"


def test_parse_rfmodel_groups_stall_reasons_as_accelsim_does():
    doc = {
        "attrs": {"not_modelled": "l1d.sectored = True (answered as False)"},
        "rows": [
            {
                "workload": "saxpy",
                "ipc": 0.4287,
                "cycles": 13136.0,
                "warp_instructions": 5632.0,
                "l1d_hit_rate": 0.3333,
            }
        ],
        "stalls": [
            {"workload": "saxpy", "stall_reason": k, "fraction": v}
            for k, v in (
                ("no_ready_warp", 0.1),
                ("raw_dependency", 0.2),
                ("memory", 0.4),
                ("no_free_collector", 0.05),
                ("bank_conflict", 0.15),
                ("exec_unit_busy", 0.1),
            )
        ],
    }
    r = acs.parse_rfmodel(json.dumps(doc))
    assert r["cycles"] == 13136 and r["warp_instructions"] == 5632 and r["l1d_hit_rate"] == 0.3333
    assert r["idle_share"] == pytest.approx(0.1)
    assert r["dependency_share"] == pytest.approx(0.6)
    assert r["structural_share"] == pytest.approx(0.3)
    assert r["not_modelled"] == "l1d.sectored = True (answered as False)"


def test_sm_count_multiplies_clusters_by_cores_and_takes_defaults(tmp_path):
    (tmp_path / "gpgpusim.config").write_text(
        "# comment -gpgpu_n_clusters 99\n-gpgpu_n_clusters 40\n-gpgpu_n_cores_per_cluster 2 # two\n"
        "-gpgpu_n_clusters 20\n"
    )
    assert acs.sm_count(tmp_path) == 40  # the last occurrence wins
    (tmp_path / "gpgpusim.config").write_text("-gpgpu_n_clusters 15\n")
    assert acs.sm_count(tmp_path / "gpgpusim.config") == 45  # GPGPU-Sim's default: 3 cores per cluster
    (tmp_path / "gpgpusim.config").write_text("-gpgpu_n_clusters 0\n-gpgpu_n_cores_per_cluster 1\n")
    with pytest.raises(acs.UsageError):
        acs.sm_count(tmp_path)


@needs_reference("gpgpusim-configs")
def test_known_configs_resolve_to_the_full_gpus_sm_counts():
    qv = acs.resolve_config("SM7_QV100_1SM")
    assert (qv.num_sms, qv.binary_version) == (80, 70)
    assert acs.sm_count(qv.folder) == 1
    gtx = acs.resolve_config("SM2_GTX480_1SM")
    assert (gtx.num_sms, gtx.binary_version) == (15, 61)
    assert acs.sm_count(gtx.folder) == 1
    assert acs.resolve_config("SM2_GTX480_1SM", num_sms=7).num_sms == 7


def test_binary_version_rule_and_header_rewrite(tmp_path):
    (tmp_path / "gpgpusim.config").write_text("-gpgpu_n_clusters 1\n")
    assert acs.trace_binary_version(tmp_path) == 61
    (tmp_path / "trace.config").write_text("-specialized_unit_1 1,4,4,4,4,BRA\n")
    assert acs.trace_binary_version(tmp_path) == 70
    (tmp_path / "trace.config").write_text("-specialized_unit_1 0,4,4,4,4,BRA\n")
    assert acs.trace_binary_version(tmp_path) == 61
    t = tmp_path / "kernel-1.traceg"
    body = (
        "-kernel name = k\n-binary version = 70\n-cuda stream id = 0\n\n#BEGIN_TB\n0000 ffffffff 0 BRA 0 0\n"
    )
    t.write_text(body)
    acs.set_binary_version(t, 61)
    assert t.read_text() == body.replace("= 70", "= 61")


def _rows():
    base = {"config": "X_1SM", "status": "ok", "rfmodel_l1d_hit_rate": "0.5", "accelsim_l1d_hit_rate": "0.25"}
    errs = {"a": 5.0, "b": -12.0, "c": 30.0, "d": 1.0}
    rows = [
        base | {"workload": w, "error_pct": str(e), "accelsim_cycles": "100", "rfmodel_cycles": str(100 + e)}
        for w, e in errs.items()
    ]
    rows.append(
        {
            "config": "X_1SM",
            "workload": "e",
            "status": "accelsim-failed",
            "note": "Accel-Sim: timed out after 10 s",
        }
    )
    return rows


def test_summary_counts_and_orders_the_errors():
    s = acs.summarize(_rows())
    assert s["n"] == 5 and s["n_ok"] == 4
    assert s["median_abs_error_pct"] == pytest.approx(8.5)
    assert s["within_10"] == 2
    assert [w for w, _ in s["worst"]] == ["c", "b", "a"]
    assert s["failed"] == [("e", "accelsim-failed", "Accel-Sim: timed out after 10 s")]


def test_doc_section_is_added_after_the_anchor_and_then_replaced(tmp_path):
    doc = tmp_path / "validation.md"
    doc.write_text("# V\n\n## Simulator against Accel-Sim\n\nold text\n\n## Next\n\nkept\n")
    meta = {
        "num_sms": 80,
        "binary_version": 70,
        "rfmodel_commit": "abc",
        "command": "python calib/accelsim.py",
        "date": "2020-01-01",
        "accelsim_commits": {"accel-sim-framework": "f00", "gpgpu-sim_distribution": "ba4"},
    }
    acs.replace_section(doc, acs.render_section([("X_1SM", _rows(), meta)]))
    text = doc.read_text()
    assert text.index("## Simulator against Accel-Sim\n") < text.index(acs.SECTION) < text.index("## Next")
    assert "old text" in text and "kept" in text
    assert "median |error| 8.5 %, 2 of 4 within 10 %" in text
    assert "| `c` | 130 / 100 | +30.0 % |" in text and "`f00`" in text
    assert "- `e` (accelsim-failed): Accel-Sim: timed out after 10 s" in text
    assert "made by `python calib/accelsim.py` on 2020-01-01." in " ".join(text.split())
    # a second run replaces the section, up to the next "## " heading, and leaves the rest alone
    acs.replace_section(doc, acs.render_section([("X_1SM", _rows()[:1], meta)]))
    again = doc.read_text()
    assert again.count(acs.SECTION) == 1 and "`c`" not in again
    assert again.endswith("## Next\n\nkept\n") and "old text" in again
    # without the anchor the section goes at the end
    other = tmp_path / "other.md"
    other.write_text("# Other\n")
    acs.replace_section(other, acs.SECTION + "\n\nbody\n")
    assert other.read_text() == "# Other\n\n" + acs.SECTION + "\n\nbody\n"


def test_the_papers_benchmarks_get_tables_of_their_own(tmp_path):
    """``--suite papers`` writes ``<config>.papers.csv``; the section loads it after the config's own table
    and titles it as the papers' benchmarks."""
    papers = acs.workload_names("papers")
    assert papers and not set(papers) & set(acs.workload_names("builtin"))
    meta = {"num_sms": 80, "binary_version": 70, "rfmodel_commit": "abc", "command": "c", "date": "d"}
    acs.write_rows(tmp_path / "X_1SM.csv", _rows())
    acs.write_rows(tmp_path / "X_1SM.papers.csv", _rows()[:2])
    for name in ("X_1SM", "X_1SM.papers"):
        (tmp_path / f"{name}.json").write_text(json.dumps(meta))
    tables = acs.load_tables(tmp_path, ["X_1SM"])
    assert [n for n, _, _ in tables] == ["X_1SM", "X_1SM.papers"]
    text = acs.render_section(tables)
    assert "### X_1SM\n" in text and "### X_1SM, the papers' benchmarks\n" in text
    assert text.count("**Summary:**") == 2


def test_missing_accelsim_is_a_one_line_usage_error(monkeypatch, capsys):
    monkeypatch.delenv("ACCELSIM", raising=False)
    assert acs.main(["--workload", "saxpy"]) == 2
    err = capsys.readouterr().err.strip()
    assert "ACCELSIM is not set" in err and "\n" not in err


_EXE = os.environ.get("ACCELSIM", "")


@pytest.mark.slow
@pytest.mark.skipif(not _EXE, reason="ACCELSIM (the path of accel-sim.out) is not set")
@pytest.mark.skipif(bool(_EXE) and not Path(_EXE).is_file(), reason=f"ACCELSIM={_EXE} does not exist")
@needs_reference("gpgpusim-configs")
def test_end_to_end_on_two_small_workloads(tmp_path):
    out = tmp_path / "out"
    doc = tmp_path / "validation.md"
    rc = acs.main(
        [
            "--config",
            "SM7_QV100_1SM",
            "--workload",
            "saxpy",
            "--workload",
            "reduce_sum",
            "--out",
            str(out),
            "--validation-doc",
            str(doc),
            "--work",
            str(tmp_path / "work"),
            "--timeout",
            "1200",
        ]
    )
    assert rc == 0
    with open(out / "SM7_QV100_1SM.csv", newline="") as f:
        rows = {r["workload"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"saxpy", "reduce_sum"}
    for r in rows.values():
        assert r["status"] == "ok", r["note"]
        for k in ("accelsim_cycles", "rfmodel_cycles", "error_pct"):
            assert math.isfinite(float(r[k]))
        assert float(r["accelsim_cycles"]) > 0 and float(r["rfmodel_cycles"]) > 0
        assert abs(float(r["error_pct"])) < 40.0
        assert r["accelsim_warp_instructions"] == r["rfmodel_warp_instructions"]
    assert acs.SECTION in doc.read_text()


def test_accelsims_side_is_reused_only_for_the_same_trace_on_the_same_accelsim(tmp_path):
    """``--reuse-accelsim`` takes an earlier row's Accel-Sim columns only where that row ran a trace folder
    of the same digest (file names and bytes) on the same Accel-Sim and finished."""
    t = tmp_path / "trace"
    t.mkdir()
    (t / "kernelslist.g").write_text("kernel-1.traceg\n")
    (t / "kernel-1.traceg").write_text("-kernel name = k\n")
    d = acs.trace_digest(t)
    assert len(d) == 16 and acs.trace_digest(t) == d
    old = {
        "trace_digest": d,
        "accelsim_commit": "a/b",
        "accelsim_cycles": "1200",
        "accelsim_ipc": "0.5",
        "rfmodel_cycles": "1100",
        "rfmodel_commit": "x",
    }
    got = acs.reusable_accelsim(old, d, "a/b")
    assert got["accelsim_cycles"] == "1200" and got["accelsim_ipc"] == "0.5"
    assert "rfmodel_cycles" not in got and set(got) == set(acs.ACCELSIM_FIELDS)
    (t / "kernel-1.traceg").write_text("-kernel name = k2\n")  # another trace
    assert acs.trace_digest(t) != d and acs.reusable_accelsim(old, acs.trace_digest(t), "a/b") is None
    assert acs.reusable_accelsim(old, d, "c/d") is None  # another Accel-Sim
    assert acs.reusable_accelsim({**old, "accelsim_cycles": ""}, d, "a/b") is None  # it failed
    assert acs.reusable_accelsim({**old, "trace_digest": ""}, d, "a/b") is None  # a row without a digest
    assert acs.reusable_accelsim(None, d, "a/b") is None
