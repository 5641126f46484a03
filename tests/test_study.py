"""``rfmodel study NAME``: the studies listed with their papers, a quick CORF study's report folder (report.md
with the claim table, figures, runs as CSV and NetCDF), its resumption from the run log, the Python entry
point, and one-line errors for bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rfmodel.cli import main
from rfmodel.studies import STUDIES

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def corf_report(tmp_path_factory):
    """``rfmodel study corf --quick --out DIR`` once: the folder and what it wrote on stderr."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("corf-study")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["study", "corf", "--quick", "--out", str(out)])
    assert rc == 0, err.getvalue()[-2000:]
    return out, err.getvalue()


def test_help_lists_the_studies_and_papers(capsys):
    assert main(["study", "--help"]) == 0
    text = capsys.readouterr().out
    for name in ("ltrf", "caching", "malekeh", "corf", "stt", "cerf", "claims", "default-path"):
        assert f"  {name} " in text
    assert set(STUDIES) == {"ltrf", "caching", "malekeh", "corf", "stt", "cerf", "claims", "default-path"}
    assert '"CORF: Coalescing Operand Register File for GPUs"' in text
    assert "Cache-Emulated Register File" in text and "Malekeh: Reducing Register File Energy" in text


def test_quick_corf_writes_the_report_folder(corf_report):
    out, err = corf_report
    report = (out / "report.md").read_text()
    # what was run, and the claim table with the paper's figure, ours and a verdict
    assert "rfmodel study corf --quick --out" in report and "| commit |" in report
    assert "| claim | what | paper | ours | verdict | explanation |" in report
    claims = report[report.index("## Claims") : report.index("## Figures")]
    rows = [line for line in claims.splitlines() if line.startswith("| C-")]
    ids = {line.split(" | ")[0][2:] for line in rows}
    assert {"C-04", "C-05", "C-07", "C-09", "C-11/C-15", "C-13/C-15", "C-17"} <= ids
    assert all(line.count(" | ") == 5 for line in rows)
    assert any("same sign" in line or "sign differs" in line for line in rows)
    # figures: per-benchmark IPC bars per SM
    for png in ("ipc_paper.png", "ipc_fermi-gtx480.png", "coalesced_paper.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and f"({png})" in report
    # progress on stderr: n of N
    assert "[48/48]" in err and "corf: report:" in err


def test_quick_corf_data_as_csv_and_netcdf(corf_report):
    import csv

    import xarray as xr

    out, _ = corf_report
    with (out / "runs.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * 6 * 4 and {"config", "workload", "gpu", "ipc"} <= set(rows[0])
    with xr.open_dataset(out / "runs.nc", engine="h5netcdf") as ds:
        assert dict(ds.sizes) == {"gpu": 2, "config": 6, "workload": 4}
        configs = {"baseline", "packing", "packing+virt", "first-fit", "CORF", "CORF++"}
        assert set(ds["config"].values) == configs
        assert float(ds["ipc"].sel(gpu="paper", config="baseline", workload="saxpy")) > 0
        assert "counts_reads" in ds and ds.attrs["study"] == "corf"


def test_a_second_run_resumes_from_the_log(corf_report, capsys):
    """The Python entry point on the same folder: no new simulation (the run log is unchanged)."""
    import rfmodel.studies

    out, _ = corf_report
    log = out / "runs.jsonl"
    before = log.read_bytes()
    got = rfmodel.studies.run("corf", quick=True, out=out)
    assert got == out and log.read_bytes() == before
    err = capsys.readouterr().err
    assert "48 runs: 48 in runs.jsonl, 0 to run" in err and "[1/" not in err


def test_unknown_study_is_one_line_and_status_2(capsys):
    assert main(["study", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rfmodel: error:") and "'nope'" in err and "corf" in err


@pytest.mark.parametrize(
    "argv, says",
    [
        (["study", "corf", "--gpus", "volta"], "unknown GPU 'volta'"),
        (["study", "corf", "--jobs", "0"], "positive integer"),
        (["study", "caching", "--designs", "ltrf", "nope"], "unknown design 'nope'"),
        (["study", "corf", "--no-such-option"], "unrecognized arguments"),
        (["study", "corf", "--workloads", "no_such_kernel"], "no_such_kernel"),
        (["study", "corf", "--quick", "--suite", "builtin"], "--quick runs its own subset"),
        (["study", "cerf", "--workloads", "saxpy", "--suite", "papers"], "--workloads names them"),
        (["study", "stt", "--suite", "nope"], "invalid choice: 'nope'"),
    ],
)
def test_bad_option_values_are_one_line_and_status_2(argv, says, capsys, tmp_path):
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rfmodel: error:") and says in err


def test_python_entry_point_rejects_unknown_names():
    import rfmodel.studies
    from rfmodel.errors import RfmodelError

    with pytest.raises(RfmodelError, match="unknown study"):
        rfmodel.studies.run("nope")
    with pytest.raises(RfmodelError, match="unknown GPU"):
        rfmodel.studies.run("corf", gpus=["volta"])


def test_the_script_launcher_keeps_working():
    """``python studies/corf.py`` runs the package's study: its options, its one-line errors."""
    r = subprocess.run(
        [sys.executable, str(ROOT / "studies" / "corf.py"), "--gpus", "volta"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "python studies/corf.py --help" in r.stderr


def test_a_pipe_in_the_report_folder_is_refused_not_written_into(tmp_path, capsys):
    # the report's figures, tables and data go through the project's writers: never onto a named pipe
    import os

    from rfmodel.cli import main

    out = tmp_path / "rep"
    out.mkdir()
    os.mkfifo(out / "runs.csv")
    rc = main(["study", "corf", "--quick", "--out", str(out)])
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith("rfmodel: error:")]
    assert rc == 2 and len(errors) == 1 and "Traceback" not in err
    assert "runs.csv" in errors[0] and "named pipe" in errors[0]


def test_the_quick_report_keeps_its_claims_with_grades(corf_report):
    """``claims.csv``: every claim row of report.md with the study, its command and the verdict's grade."""
    import csv

    out, _ = corf_report
    rows = list(csv.DictReader((out / "claims.csv").open()))
    report = (out / "report.md").read_text()
    claims = report[report.index("## Claims") : report.index("## Figures")]
    assert len(rows) == sum(line.startswith("| ") for line in claims.splitlines()) - 2  # header, rule
    assert {r["study"] for r in rows} == {"corf"} and all("--quick" in r["command"] for r in rows)
    grades = {r["verdict"]: r["grade"] for r in rows}
    assert grades.get("sign differs", "mismatch") == "mismatch"
    assert all(g in ("match", "partial", "mismatch", "none") for g in grades.values())
    assert any(g == "match" for g in grades.values())


@pytest.mark.parametrize(
    "verdict, grade",
    [
        ("same sign, within 30 %", "match"),
        ("same sign, within 30 % (cache-sensitive)", "match"),
        ("no change, as the paper's (within 2 %)", "match"),
        ("same sign, size differs", "partial"),
        ("sign differs", "mismatch"),
        ("a change where the paper has none", "mismatch"),
        ("same sign, within 30 %; same sign, within 30 %", "match"),
        ("same sign, within 30 %; sign differs", "partial"),
        ("sign differs; n/a", "mismatch"),
        ("n/a", "none"),
        ("", "none"),
    ],
)
def test_a_verdict_is_graded_by_its_phrases(verdict, grade):
    from rfmodel.studies.claims import grade as grade_of

    assert grade_of(verdict) == grade


def test_an_unknown_verdict_phrase_is_not_graded_by_accident():
    from rfmodel.studies.claims import grade

    with pytest.raises(ValueError, match="unknown verdict phrase 'roughly right'"):
        grade("roughly right")
    assert grade("roughly right", strict=False) == "unknown"


def test_each_paper_study_runs_its_papers_benchmarks_by_default():
    """``--suite papers`` (the default): the kernels of the papers' suite that the paper names, or of the
    public suites it names; ``--suite builtin``: the built-in suite."""
    import argparse

    from rfmodel.studies import parser
    from rfmodel.studies.common import study_workloads
    from rfmodel.workload.suite import builtin_names, manifest, paper_workloads

    kernels = manifest()["kernels"]
    for study, paper in (
        ("ltrf", "ltrf"),
        ("caching", "ltrf"),
        ("malekeh", "malekeh"),
        ("corf", "corf"),
        ("stt", "stt"),
        ("cerf", "cerf"),
    ):
        a = parser(study).parse_args([])
        got = study_workloads(a)
        assert got == paper_workloads(paper) and got, study
        assert all(kernels[w]["suite"] == "papers" for w in got)
        assert study_workloads(parser(study).parse_args(["--suite", "builtin"])) == builtin_names()
    # the STT-RAM and CERF papers list their benchmarks: exactly the kernels whose header names them
    assert paper_workloads("cerf") == [
        w for w, e in kernels.items() if e.get("suite") == "papers" and "cerf" in e["original"]["papers"]
    ]
    assert "pb_gemm" in paper_workloads("cerf") and "pb_gemm" not in paper_workloads("stt")
    # the LTRF paper names its suites (CUDA SDK, Rodinia, Parboil): no PolyBench kernel, every Parboil one
    assert not any(w.startswith("pb_") for w in paper_workloads("ltrf"))
    assert {"pa_sad", "pa_sgemm", "pa_spmv_jds"} <= set(paper_workloads("ltrf"))
    ns = argparse.Namespace(workloads=None, quick=True, suite=None, paper="ltrf")
    assert study_workloads(ns, ("saxpy",)) == ["saxpy"]


def _claims_folder(path, study, rows):
    import csv

    path.mkdir(parents=True, exist_ok=True)
    cols = ["claim", "what", "paper", "ours", "verdict", "grade", "note", "study", "command", "commit"]
    with (path / "claims.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, cols)
        w.writeheader()
        for r in rows:
            w.writerow(
                {"note": "", "study": study, "command": f"rfmodel study {study}", "commit": "abc", **r}
            )
    return path


def test_the_claims_table_has_every_id_once_from_the_papers_own_study(tmp_path, monkeypatch):
    """``rfmodel study claims``: a row per ID of the registry; a claim two studies report comes from the
    study on its paper's configuration; rows of one ID combine their grades; an input is a fact; a claim no
    study reports says so."""
    import csv

    import rfmodel.studies.claims as claims_mod
    from rfmodel.studies.claims import registry

    # E-04's trace statistics over the CERF paper's 36 kernels (minutes on a new machine): over one here
    whole = claims_mod.reads_per_value_claim
    monkeypatch.setattr(claims_mod, "reads_per_value_claim", lambda: whole(["saxpy"]))
    # ... and the LTRF compiler pass over the LTRF paper's 44 (L-13, L-23): over one here
    code = claims_mod.prefetch_code_claims
    monkeypatch.setattr(claims_mod, "prefetch_code_claims", lambda: code(["saxpy"]))

    caching = _claims_folder(
        tmp_path / "caching",
        "caching",
        [
            {
                "claim": "M-02",
                "what": "Malekeh IPC",
                "paper": "+6 %",
                "ours": "-1 %",
                "verdict": "sign differs",
                "grade": "mismatch",
            },
            {
                "claim": "L-20",
                "what": "LTRF hit rate",
                "paper": "x",
                "ours": "y",
                "verdict": "same sign, within 30 %",
                "grade": "match",
            },
        ],
    )
    malekeh = _claims_folder(
        tmp_path / "malekeh",
        "malekeh",
        [
            {
                "claim": "M-02",
                "what": "Malekeh IPC",
                "paper": "+6 %",
                "ours": "+5 %",
                "verdict": "same sign, within 30 %",
                "grade": "match",
            },
            {
                "claim": "C-11/C-15",
                "what": "not Malekeh's",
                "paper": "-",
                "ours": "-",
                "verdict": "",
                "grade": "none",
            },
        ],
    )
    corf = _claims_folder(
        tmp_path / "corf",
        "corf",
        [
            {
                "claim": "C-11/C-15",
                "what": "CORF IPC",
                "paper": "+4 %",
                "ours": "+3 %",
                "verdict": "same sign, within 30 %",
                "grade": "match",
            },
            {
                "claim": "C-11",
                "what": "CORF++ IPC",
                "paper": "+9 %",
                "ours": "+1 %",
                "verdict": "same sign, size differs",
                "grade": "partial",
            },
            {
                "claim": "-",
                "what": "not a claim",
                "paper": "-",
                "ours": "-",
                "verdict": "hold",
                "grade": "none",
            },
        ],
    )
    ltrf = _claims_folder(
        tmp_path / "ltrf",
        "ltrf",
        [
            {
                "claim": "L-04",
                "what": "latency of #6 / #7",
                "paper": "5.3x / 6.3x",
                "ours": "7x / 10x",
                "verdict": "",
                "grade": "none",
            }
        ],
    )
    out = tmp_path / "claims.csv"
    assert (
        main(
            [
                "study",
                "claims",
                "--from",
                f"caching={caching}",
                "--from",
                f"malekeh={malekeh}",
                "--from",
                f"corf={corf}",
                "--from",
                f"ltrf={ltrf}",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = {r["claim_id"]: r for r in csv.DictReader(out.open())}
    assert list(rows) == [c["id"] for c in registry()] and len(rows) == 92
    assert rows["M-02"]["verdict"] == "match" and "rfmodel study malekeh" in rows["M-02"]["where"]
    assert rows["L-20"]["verdict"] == "match" and "rfmodel study caching" in rows["L-20"]["where"]
    assert rows["C-11"]["verdict"] == "partial" and "CORF++ IPC: +1 %" in rows["C-11"]["ours"]
    assert rows["C-15"]["verdict"] == "match"
    # a claim the studies miss ends its explanation with the mechanism (the registry's why); a match does not
    assert "Why: packing" in rows["C-11"]["explanation"] and "Why:" not in rows["M-02"]["explanation"]
    facts = [c["id"] for c in registry() if c["kind"] == "fact"]
    assert facts and all(rows[i]["verdict"] == "fact" for i in facts)
    assert rows["E-08"]["verdict"] == "none" and "no study" in rows["E-08"]["explanation"]
    # a figure the paper cites from earlier work is a fact the project does not encode, and says so
    assert rows["C-01"]["verdict"] == "fact" and "not encoded" in rows["C-01"]["ours"]
    assert rows["C-01"]["explanation"] == "not encoded in the project"
    # the register demand (L-01, L-02) is computed by the command itself from the papers' kernels
    assert rows["L-01"]["verdict"] in ("match", "partial", "mismatch")
    assert "fermi-gtx480" in rows["L-01"]["ours"]
    assert rows["L-02"]["where"].startswith("rfmodel study claims")
    # ... as are the sizes (C-02, S-05) and the reads per written value (E-04, here of saxpy alone)
    assert rows["C-02"]["verdict"] == "match" and rows["S-05"]["ours"].endswith(": 36 B; 92 B")
    assert rows["E-04"]["where"].startswith("rfmodel study claims")
    assert "(saxpy)" in rows["E-04"]["explanation"]
    for cid in ("L-13", "L-23"):
        assert rows[cid]["where"].startswith("rfmodel study claims") and "(saxpy)" in rows[cid]["explanation"]
    # an input the study shows without a verdict stays a fact, with the study's figure
    assert rows["L-04"]["verdict"] == "fact" and "7x / 10x" in rows["L-04"]["ours"]
    assert set(r["verdict"] for r in rows.values()) <= {"match", "partial", "mismatch", "fact", "none"}


def test_the_ltrf_compiler_pass_figures_known_answer():
    """L-13 and L-23 of one kernel by hand: the LTRF paper's Listing 1 at 4 registers per interval forms 5
    intervals over 17 instructions with working sets {R0-R3}, {R0, R1, R4, R5}, {R2, R3, R6}, {R6}, {}; with
    register r in bank r mod 4 the second and third hold two registers of one bank (1 conflict each), which
    the renumbering removes; the first alone has none.  One 256-bit vector per interval over 128-bit
    instructions adds 5 x 2 / 17 of the code, with a prefetch instruction 5 x 3 / 17."""
    from helpers_kernels import listing1

    from rfmodel.compiler import register_intervals
    from rfmodel.studies.claims import prefetch_code

    k = listing1()
    first = {i for i, v in enumerate(register_intervals(k, 4).interval_of) if v == 0}
    every = prefetch_code(k, set(range(len(k.instrs))), 4, regs=(4,), code_regs=4)
    assert every["max", 4, False] == 1 and every["max", 4, True] == 0
    assert every["vectors"] == pytest.approx(10 / 17) and every["with_instr"] == pytest.approx(15 / 17)
    # only the intervals the trace enters count
    assert prefetch_code(k, first, 4, regs=(4,), code_regs=4)["max", 4, False] == 0
    # seven registers in one interval over two banks: four share a bank whatever the numbering
    one = prefetch_code(k, set(range(len(k.instrs))), 2, regs=(8,), code_regs=8)
    assert one["max", 8, False] == one["max", 8, True] == 3 and one["vectors"] == pytest.approx(2 / 17)


def test_the_claims_table_refuses_a_bad_folder(tmp_path, capsys):
    assert main(["study", "claims", "--from", "nope=/tmp", "--out", str(tmp_path / "c.csv")]) == 2
    assert "STUDY one of" in capsys.readouterr().err
    missing = f"corf={tmp_path / 'none'}"
    assert main(["study", "claims", "--from", missing, "--out", str(tmp_path / "c.csv")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    # a folder named on purpose that holds no claims is refused, not skipped
    (tmp_path / "empty").mkdir()
    empty = f"corf={tmp_path / 'empty'}"
    assert main(["study", "claims", "--from", empty, "--out", str(tmp_path / "c.csv")]) == 2
    assert "has no claims.csv" in capsys.readouterr().err
    assert not (tmp_path / "c.csv").exists()


def test_the_registry_has_the_92_ids_of_the_five_papers():
    from rfmodel.studies.claims import default_folders, registry

    # the report folders read by default: the paper studies' own --out defaults, not the table itself
    assert set(default_folders()) == {"ltrf", "caching", "malekeh", "corf", "stt", "cerf"}

    ids = [c["id"] for c in registry()]
    assert len(ids) == len(set(ids)) == 92
    for prefix, paper, n in (
        ("L", "ltrf", 28),
        ("C", "corf", 19),
        ("M", "malekeh", 10),
        ("S", "stt", 14),
        ("E", "cerf", 21),
    ):
        mine = [c for c in registry() if c["id"].startswith(prefix + "-")]
        assert len(mine) == n and {c["paper"] for c in mine} == {paper}
    assert all(c["kind"] in ("result", "fact") and c["claim"] for c in registry())


def test_the_sizes_the_project_derives_answer_their_claims():
    """C-02 (80 x 256 KB = 20 MB on volta-v100), L-14 (the LTRF warp control blocks: 114880 bits per SM, their
    area a few per cent of the main RF's banks'), S-05 (BDI of a warp register of one-byte deltas: a 4-byte
    base and 32 one-byte deltas, 36 B, 92 B saved) and C-16 (CORF's renaming table and free map on the
    paper's SM: one copy of 10,584 bits per bank, 5,292 B or 4.0 % of the 128 KB RF; 512 B), each from the
    structures or the codec, not from the claims' own text."""
    from rfmodel.studies.claims import structure_claims
    from rfmodel.studies.corf import corf_storage

    rows = {r["claim"]: r for r in structure_claims()}
    assert rows["C-02"]["ours"] == "80 x 256 KB = 20 MB"
    assert rows["C-02"]["verdict"].startswith("same sign, within")
    assert rows["L-14"]["ours"].startswith("114880 bits; ")
    share = float(rows["L-14"]["ours"].split("; ")[1].rstrip(" %")) / 100
    assert 0.02 < share < 0.10
    assert rows["S-05"]["ours"] == "36 B; 92 B"
    rt, fm, rf = corf_storage()
    assert (rt, fm, rf) == (5292.0, 512.0, 131072.0)
    assert all(r["study"] == "claims" for r in rows.values())


def test_a_rise_and_a_fall_across_workloads_are_judged_by_their_ranks():
    """E-16's verdict (bank conflicts rise with utilization) and L-28's (LTRF's advantage over BL falls as
    warps per SM grow, and saturates from 64 to 128): orderings, not sizes."""
    from rfmodel.studies.common import rises_with
    from rfmodel.studies.ltrf_capacity import WARPS, warps_claim
    from rfmodel.studies.report import Report, grade

    up = [{"u": u, "c": c} for u, c in ((0.2, 1.0), (0.5, 3.0), (0.9, 2.5), (1.0, 7.0))]
    assert rises_with(up, "u", "c").startswith("same ordering (rank correlation +0.80")
    down = [{"u": r["u"], "c": -r["c"]} for r in up]
    assert grade(rises_with(down, "u", "c")) == "mismatch"
    assert rises_with(up[:2], "u", "c") == "n/a"

    rep = Report.__new__(Report)  # only its claim rows
    rep.claims = []
    advantage = (0.3, 0.2, 0.1, 0.08)
    keeps = {n: {"baseline": 0.5, "ltrf": 0.5 + x} for n, x in zip(WARPS, advantage, strict=True)}
    warps_claim(rep, keeps)
    assert rep.claims[-1]["ours"] == "+0.30 / +0.20 / +0.10 / +0.08"
    assert grade(rep.claims[-1]["verdict"]) == "match"
    keeps[128]["ltrf"] = 0.5 + 0.2  # the advantage grows again from 64 to 128: both parts fail
    warps_claim(rep, keeps)
    assert grade(rep.claims[-1]["verdict"]) == "mismatch"


def test_the_ltrf_sweeps_name_their_variants_and_judge_fig_16_and_18():
    """The caching study's sweeps of registers per interval and active warps (L-21, L-22, L-25) run the LTRF
    designs as ``DESIGN@k=v`` variants: the variant's parameters change the study's ones, keyed apart; the
    rows follow the runs (here a stand-in for the simulator with known answers)."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.studies.caching_designs import Runs, ltrf_sweeps, real_design, variant, variant_params
    from rfmodel.studies.report import Report, grade

    name = variant("ltrf", regs_per_interval=8)
    assert name == "ltrf@regs_per_interval=8" and real_design(name) == "ltrf"
    assert variant_params(variant("ltrfconf", active_warps=1)) == {"active_warps": 1}
    runs = Runs.__new__(Runs)
    runs.params, runs.gpu, runs.max_warps = {"ltrf": {"active_warps": 2}}, "maxwell-ltrf", 8
    assert runs.design_params(variant("ltrf", active_warps=1)) == {"active_warps": 1}
    assert runs.design_params(name) == {"active_warps": 2, "regs_per_interval": 8}
    assert runs.key(name, "saxpy", 1.0) != runs.key("ltrf", "saxpy", 1.0)

    class Fake:
        def __init__(self):
            self.asked = []

        def ensure(self, points):
            self.asked += points

        def get(self, d, w, x):
            params = variant_params(d)
            n, pool = params.get("regs_per_interval", 16), params.get("active_warps", 2)
            free = {8: 0.6, 16: 0.25, 32: 0.1}[n]  # about the paper's LTRF shares
            slow = {8: 0.5, 16: 0.8, 32: 0.85}[n] if x > 1 else 1.0  # N = 8 loses most at 6x
            return {"conflict_free_prefetch_fraction": free, "ipc": {1: 1.0, 2: 1.45, 4: 1.46}[pool] * slow}

    sm = resolve_gpu("maxwell-ltrf")
    rep = Report.__new__(Report)
    rep.claims = []
    fake = Fake()
    text = ltrf_sweeps(rep, fake, ["saxpy", "spmv_csr"], sm, {})
    # designs x (N 8, 32 at 1x and 6x; warps 4, 16 at 6x) x workloads
    assert len(fake.asked) == 2 * (2 * 2 + 2) * 2
    rows = {(c["claim"], c["what"].split(":")[0]): c for c in rep.claims}
    assert rows["L-21", "LTRF"]["ours"] == "60 % / 25 % / 10 %"
    assert grade(rows["L-21", "LTRF"]["verdict"]) == "match"
    assert grade(rows["L-22", "LTRFconf"]["verdict"]) in ("partial", "mismatch")  # 88 % at N=16, here 25 %
    l24 = rows["L-24", "IPC kept at 6x, N = 8 / 16 / 32"]
    assert l24["ours"] == "0.50 / 0.80 / 0.85; 0.50 / 0.80 / 0.85; +0.0 %; +6.2 %"
    assert grade(l24["verdict"]) == "match"
    assert rows["L-25", "LTRF"]["ours"] == "+45.0 %; +0.7 %"
    assert grade(rows["L-25", "LTRF"]["verdict"]) == "match"
    assert "| LTRF | 60 % / 25 % / 10 % |" in text


def test_the_stt_wear_figure_known_answer():
    """S-02: bank writes per warp-register entry per second at the SM's clock, and the days to 10^12 writes
    at the most write-intense kernel's rate (fermi-gtx480 at 700 MHz: 1,024 entries of 32 registers)."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.studies.stt_rf import endurance

    sm = resolve_gpu("fermi-gtx480").replace(clock_mhz=700.0)
    runs = {  # one second of run each: 700e6 cycles; 1,024 x 1e5 and 1,024 x 4e5 bank writes
        "a": {"structure_writes": {"rf_bank": 1024 * 1e5}, "rf_writes": 0.0, "cycles": 700e6},
        "b": {"rf_writes": 1024 * 4e5, "cycles": 700e6},  # no structure counts: the RF's writes
    }
    text = endurance(lambda label, w: runs[w], ["a", "b"], sm)
    days = 1e12 / 4e5 / 86400  # 28.9
    assert text == f"2.5e+05 per s (4e+05, b); {days:.0f} days of b (the hottest entry sooner)"


def test_the_stt_energy_mix_verdicts_follow_the_rows():
    """S-07's named kernels and S-10's Fig. 6 statements judged from per-workload rows (stand-ins with known
    answers): the paper's HOT and SCA found by their benchmarks' names; STT's saving rising with the static
    share; the dynamic rise growing with the dynamic share; BDI's cut largest on LPS and SCA."""
    from rfmodel.studies.report import grade
    from rfmodel.studies.stt_rf import mix_claims, named_kernels

    names = ["rd_hotspot", "sdk_scan_exclusive", "sdk_scan_update", "is_laplace3d", "rd_bfs_1", "pa_spmv_jds"]
    assert named_kernels("SCA", names) == ["sdk_scan_exclusive", "sdk_scan_update"]
    assert named_kernels("LPS", names) == ["is_laplace3d"] and named_kernels("HOT", names) == ["rd_hotspot"]
    static = [0.3, 0.4, 0.5, 0.2, 0.9, 0.8]
    perf = [0.6, 0.8, 0.5, 0.9, 0.95, 0.97]
    cut = [0.1, 0.5, 0.4, 0.6, 0.05, 0.2]  # BDI's cut of STT's dynamic energy: LPS and SCA lead
    rows = [
        {
            "workload": w,
            "perf STT": p,
            "t1_base_static_share": st,
            "t1 energy STT": 1.0 - st / 2,
            "t1 dyn STT": 1.5 * (1.0 - st),
            "t1 dyn STT+BDI": 1.5 * (1.0 - st) * (1.0 - c),
        }
        for w, p, st, c in zip(names, perf, static, cut, strict=True)
    ]

    def row(start):
        return next(r for r in mix_claims(rows) if r[1].startswith(start))

    hot_sca = row("STT performance of the paper's HOT; SCA")
    assert hot_sca[3].startswith("HOT 0.60 (rd_hotspot); SCA 0.63 (")  # geomean of 0.8 and 0.5
    assert grade(hot_sca[4]) == "match"
    saving = row("STT's RF energy saving")
    # halves split at the median 0.45: savings (static share / 2) 0.25, 0.45, 0.40 and 0.15, 0.20, 0.10
    assert saving[3] == "+37 %; +15 %" and grade(saving[4]) == "match"
    assert grade(row("STT raises dynamic energy")[4]) == "match"
    bdi = row("BDI's cut")
    assert "is_laplace3d 60 % (1)" in bdi[3] and bdi[3].endswith("; 10 %") and grade(bdi[4]) == "match"
    # rd_bfs_1 and pa_spmv_jds cut by 100 %: the others' median (10, 100, 100 %) is above SCA's 40 %
    rows[4]["t1 dyn STT+BDI"] = rows[5]["t1 dyn STT+BDI"] = 0.0
    assert grade(row("BDI's cut")[4]) == "mismatch"


def test_cerf_over_unified_is_read_apart_by_register_demand():
    """E-12's reading: CERF over the unified memory on the register-heavy cache-sensitive kernels (static
    holes under half the RF) and on the others, each a geometric mean of the per-kernel ratios."""
    from rfmodel.studies.cerf import by_register_demand

    rows = [
        {"workload": "mum", "speedup fair": 1.6, "speedup unified": 1.0, "static holes": 0.1},
        {"workload": "inv", "speedup fair": 2.0, "speedup unified": 0.8, "static holes": 0.3},
        {"workload": "mvt", "speedup fair": 1.0, "speedup unified": 2.0, "static holes": 0.9},
        {"workload": "bfs", "speedup fair": 1.0, "speedup unified": 0.5, "static holes": 0.5},
        {"workload": "none", "speedup fair": 1.0, "speedup unified": 1.0},
    ]
    # register-heavy: sqrt(1.6 x 2.5) = 2.00; the others: sqrt(0.5 x 2.0) = 1.00
    assert by_register_demand(rows) == (
        "register-heavy (static holes < 50%) 2.00 over 2 (mum, inv), the others 1.00 over 2"
    )


def test_the_crossbar_busy_share_known_answer():
    """L-12 from the runs by hand: the baseline's operand reads and result writes over its cycles (warp
    instructions / IPC) and 16 ports, and LTRF's main-RF accesses at four cycles each on the same ports."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.studies.caching_designs import crossbar_claim
    from rfmodel.studies.report import Report, grade

    class StandIn:  # the study's runs
        max_warps = 8
        done = {
            ("baseline", "a"): {"ipc": 2.0, "rf_reads": 2000.0, "rf_writes": 1200.0},
            ("baseline", "b"): {"ipc": 1.0, "rf_reads": 6000.0, "rf_writes": 4000.0},
            ("ltrf", "a"): {"ipc": 2.0, "main_rf_accesses": 800.0},
            ("ltrf", "b"): {"ipc": 1.0, "main_rf_accesses": 1000.0},
        }

        def get(self, design, workload, latency):
            return self.done[design, workload]

        def has(self, design, workload, latency):
            return (design, workload) in self.done

    rep = Report.__new__(Report)  # only its claim rows
    rep.claims = []
    runs, sm = StandIn(), resolve_gpu("maxwell-ltrf")
    assert sm.num_banks == 16
    # a: 3,200 transfers in 500 cycles on 16 ports = 40 %; b: 10,000 in 2,000 = 31.25 %; LTRF a: 4 x 800 in
    # 500 cycles = 40 %, b: 4 x 1,000 in 2,000 = 12.5 %
    crossbar_claim(rep, runs, ["a", "b"], sm, counts={"a": 1000, "b": 2000})
    row = rep.claims[-1]
    assert row["ours"] == "40 % (a), mean 36 %; LTRF on a 4x narrower main-RF network: 40 % (a), mean 26 %"
    assert grade(row["verdict"]) == "match"
    runs.done["baseline", "b"]["rf_reads"] = 20000.0  # 28,800 transfers in 2,000 cycles: 90 %
    runs.done["baseline", "b"]["rf_writes"] = 8800.0
    crossbar_claim(rep, runs, ["a", "b"], sm, counts={"a": 1000, "b": 2000})
    assert rep.claims[-1]["ours"].startswith("90 % (b)") and grade(rep.claims[-1]["verdict"]) == "partial"


def test_malekehs_cache_table_sweep_judges_diminishing_returns():
    """M-10: Malekeh at 4, 8 and 16 cache-table entries as ``malekeh@ct_entries=N`` variants (8 is the
    design's own); the choice of 8 holds when 16 entries add fewer points of hit rate than 8 did over 4."""
    from rfmodel.studies.caching_designs import ct_sweep, variant_params
    from rfmodel.studies.report import Report, grade

    class Fake:
        def __init__(self, hit):
            self.hit, self.asked = hit, []

        def ensure(self, points):
            self.asked += points

        def get(self, d, w, x):
            n = variant_params(d).get("ct_entries", 8)
            return {"ipc": {4: 1.0, 8: 1.02, 16: 1.2}[n], "rf_cache_hit_rate": self.hit[n]}

    for hit, want in (({4: 0.3, 8: 0.45, 16: 0.5}, "match"), ({4: 0.3, 8: 0.35, 16: 0.5}, "mismatch")):
        rep = Report.__new__(Report)
        rep.claims = []
        fake = Fake(hit)
        ct_sweep(rep, fake, ["saxpy", "spmv_csr"])
        asked = sorted(p[0] for p in fake.asked)
        assert asked == ["malekeh@ct_entries=16"] * 2 + ["malekeh@ct_entries=4"] * 2
        (row,) = rep.claims
        assert row["claim"] == "M-10" and grade(row["verdict"]) == want
    assert row["ours"] == "30.0 % / 35.0 % / 50.0 %; +2.0 %, +17.6 %"


def test_the_claims_and_the_classes_key_no_study_run(tmp_path, monkeypatch):
    """A study's runs are keyed by the package's sources less the data no evaluation reads (the papers' claims
    and the measured workload classes: ``common.NOT_EVALUATED``): editing those keeps every run, editing a
    module does not."""
    import rfmodel.cache as cache
    from rfmodel.studies.common import NOT_EVALUATED

    pkg = tmp_path / "pkg"
    (pkg / "data").mkdir(parents=True)
    (pkg / "sim.py").write_text("x = 1\n")
    for rel in NOT_EVALUATED:
        (pkg / rel).write_text("{}\n")
    monkeypatch.setattr(cache, "PKG_DIR", pkg)
    monkeypatch.setattr(cache, "_CHANGED", set())  # files written after the package loaded: not this one's
    exclude = ("data/calibration", *NOT_EVALUATED)
    try:
        cache.source_hash.cache_clear()
        keyed, whole = cache.source_hash(exclude=exclude), cache.source_hash()
        for rel in NOT_EVALUATED:
            (pkg / rel).write_text('{"rows": {}}\n')
        cache.source_hash.cache_clear()
        assert cache.source_hash(exclude=exclude) == keyed and cache.source_hash() != whole
        (pkg / "sim.py").write_text("x = 2\n")
        cache.source_hash.cache_clear()
        assert cache.source_hash(exclude=exclude) != keyed
    finally:
        cache.source_hash.cache_clear()


def test_reuse_times_of_a_two_warp_trace_known_answer():
    """E-05..E-07's statistics by hand.  Two warps take turns (slots 0, 2, 4 and 1, 3, 5) at IPC 0.5 (two
    cycles a slot): warp 0 loads R1 from line 100, reads it into R2, stores R2 to line 100; warp 1 loads R1
    from line 100 and reads it.  Register reuses: three reads, each two slots after its write (4 cycles);
    the line: accessed at slots 0, 1 and 4, reused after 1 and 3 slots (2 and 6 cycles)."""
    import numpy as np

    from rfmodel.ir import OpClass
    from rfmodel.studies.reuse import issue_slots, reuse_stats, reuse_summary
    from rfmodel.trace import Trace, empty_columns

    cols = empty_columns(6)
    rows = [
        (OpClass.LD_GLOBAL, [], [1]),
        (OpClass.INT, [1, 1], [2]),
        (OpClass.ST_GLOBAL, [2], []),
        (OpClass.LD_GLOBAL, [], [1]),
        (OpClass.INT, [1], [3]),
        (OpClass.EXIT, [], []),
    ]
    for i, (op, src, dst) in enumerate(rows):
        cols["op"][i] = int(op)
        cols["src"][i, : len(src)] = src
        cols["dst"][i, : len(dst)] = dst
    mem = [[100], [], [100], [100], [], []]
    tr = Trace(
        kernel="reuse",
        warp_ptr=np.array([0, 3, 6]),
        warp_cta=np.zeros(2, np.int32),
        mem_ptr=np.concatenate(([0], np.cumsum([len(m) for m in mem]))).astype(np.int64),
        mem_line=np.array([x for m in mem for x in m], dtype=np.int64),
        **cols,
    )
    assert issue_slots(tr.warp_ptr, 2).tolist() == [0, 2, 4, 1, 3, 5]
    assert issue_slots(tr.warp_ptr, 1).tolist() == [0, 1, 2, 3, 4, 5]  # one warp at a time: two waves
    st = reuse_stats(tr, 0.5, 2)
    assert sorted(st["reg_times"].tolist()) == [4.0, 4.0, 4.0]
    assert sorted(st["mem_times"].tolist()) == [2.0, 6.0]
    assert (st["reg_accesses"], st["mem_accesses"], st["line_reuses"].tolist()) == (7, 3, [2])
    s = reuse_summary(st, cycles=(5.0, 10.0))
    assert s["lines_reused_more"] == 0.0 and reuse_summary(st, more_than=1)["lines_reused_more"] == 1.0
    assert s["mem_access_share"] == 0.3 and s["within_5"] == 0.8 and s["within_10"] == 1.0
    assert s["reg_share_within"] == 0.6


def test_cerf_judges_e19_again_against_the_fermi_hash_baseline():
    """The CERF study's alternative baseline: the separate 16 KB L1D with the Fermi set hash (the paper's
    simulator config) is its own configuration, and E-19 gets a second verdict against it."""
    from rfmodel.studies.cerf import CONFIGS, claims, point_sm
    from rfmodel.studies.report import Report, grade

    assert point_sm("fermi-gtx480", CONFIGS["base-hash"][2]).l1d.set_index == "fermi-hash"
    assert point_sm("fermi-gtx480", CONFIGS["base"][2]).l1d.set_index == "linear"
    rows = [
        {"workload": "a", "category": "sensitive", "speedup fair": 4.0, "speedup fair vs hash": 1.5},
        {"workload": "b", "category": "sensitive", "speedup fair": 2.25, "speedup fair vs hash": 1.5},
    ]
    text = (
        "| E-19 cache-sensitive applications | about +50 % on average | fair 3.00x |\n"
        "| E-19 against the baseline with the Fermi hash (x) | about +50 % on average | fair 1.50x |\n"
    )
    rep = Report.__new__(Report)
    rep.claims = []
    claims(rep, text, rows)
    first, second = rep.claims
    assert grade(first["verdict"]) == "partial"  # 3.00x against 1.5: the size differs
    assert grade(second["verdict"]) == "match" and "Fermi hash" in second["what"]


def test_a_published_docs_section_carries_the_commit_that_produced_it(tmp_path, monkeypatch):
    """``--docs`` writes a study's block between its markers with the package's commit under it; the
    summary file keeps the bare text."""
    import types

    from rfmodel.studies.common import publish
    from rfmodel.studies.report import commit

    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / "validation.md"
    doc.write_text("# V\n\n## S\n\n<!-- m x:begin -->\nold\n<!-- m x:end -->\n\nafter\n")
    monkeypatch.chdir(tmp_path)
    a = types.SimpleNamespace(out=str(tmp_path / "out"), docs=True, gpu="x")
    (tmp_path / "out").mkdir()
    publish("| a |\n", a, mark="<!-- m {gpu}:{end} -->", section="## S", title="T")
    text = doc.read_text()
    assert f"<!-- m x:begin -->\n| a |\n\nGenerated at {commit()}.\n<!-- m x:end -->" in text
    assert "old" not in text and text.endswith("after\n")
    assert (tmp_path / "out" / "summary.md").read_text() == "| a |\n"


def test_malekeh_readings_table_by_hand():
    """The Malekeh study's readings of what the paper leaves unstated: each reading reruns only the designs it
    changes (the others stand as read), its rows are geometric means by hand, the issue cycles lost are the
    collector-cache stalls per cycle, and the reading closest to the paper's +9.6 % / +5.4 % is named."""
    from rfmodel.studies.caching_designs import READINGS, malekeh_readings, variant

    ipc = {"baseline": 1.0, "malekeh": 0.9, "bow": 1.0, variant("malekeh", adaptive=0, sthld=0): 1.1}
    for d in ("baseline", "malekeh", "bow"):
        ipc.setdefault(variant(d, num_banks=16), {"baseline": 1.0, "malekeh": 0.95, "bow": 1.0}[d])
        ipc.setdefault(variant(d, collector_units=16), {"baseline": 2.0, "malekeh": 1.9, "bow": 2.0}[d])

    class Runs:
        asked: set = set()

        def ensure(self, points):
            self.asked |= {p[0] for p in points}

        def get(self, name, w, x):
            stalls = {"stall_ccu_busy": 30.0, "stall_sthld_wait": 10.0} if name.startswith("malekeh") else {}
            return {"ipc": ipc[name], "cycles": 100.0, "rf_cache_hit_rate": 0.5, **stalls}

    runs = Runs()
    text = malekeh_readings(runs, ["w1", "w2"], "baseline")
    assert runs.asked == set(ipc) and len(READINGS) == 3
    rows = {r.split(" | ")[0].lstrip("| "): r for r in text.splitlines() if r.startswith("| ") and "%" in r}
    assert (
        "| -10.0 % | -10.0 % | +0.0 % | 50.0 % | 0.40 |"
        in rows["as modelled (adaptive STHLD, 8 banks, 8 collector units)"]
    )
    assert "| +10.0 % | +10.0 % |" in rows["STHLD fixed at 0 (the allocator never waits)"]
    assert "| -5.0 % | -5.0 % |" in rows["16 banks (Accel-Sim's SM75_RTX2060_S)"]
    assert "Closest to the paper: STHLD fixed at 0 (the allocator never waits)." in text
