"""The five papers' claims, every ID, in one table: ``rfmodel study claims`` writes ``studies/claims.csv``.

Each paper study (``rfmodel study ltrf|caching|malekeh|corf|stt|cerf``) writes the claims it checks into its
report folder's ``claims.csv``: the claim ID of the reference digest, what is compared, the paper's figure,
ours, the study's verdict in words and its grade (:func:`grade`).  This module gathers those files and the
registry of all 92 IDs (``rfmodel/data/claims.json``: each claim in short, the paper's figure, for a
plain fact where the project encodes it, and for a claim the studies miss the mechanism the simulator's
counters show, ``why``, which a mismatch or partial row's explanation ends with) into one table with a row
per ID:

* ``match``: the sign (or the direction) of the paper's figure and its size within 30 % relative;
* ``partial``: the sign right and the size not, or a claim of several figures with some right;
* ``mismatch``: the sign wrong, a change where the paper has none, or none where it has one;
* ``fact``: an input or a definition (a configuration or technology value) or a figure the paper cites
  from earlier work, not an outcome; the row says where the project encodes it and whether it equals the
  paper's;
* ``none``: no study reports a figure for it yet.
"""

from __future__ import annotations

from rfmodel.studies.report import GRADES, grade  # noqa: F401  (the grades, re-exported)

#: the studies that check a paper's claims, the paper's own configuration first: a claim both report is
#: taken from the first (Malekeh's claims from the study on Malekeh's GPU, not on the LTRF paper's SM)
STUDIES_OF_PAPER = {
    "ltrf": ("ltrf", "caching", "claims"),
    "corf": ("corf", "claims"),
    "malekeh": ("malekeh", "caching"),
    "stt": ("stt", "claims"),
    "cerf": ("cerf", "claims"),
}
#: the columns of ``studies/claims.csv``
COLUMNS = ("claim_id", "paper", "claim", "paper_figure", "ours", "verdict", "explanation", "where")
DOCS_MARK = "<!-- claims:{end} -->"


def registry() -> list[dict]:
    """The 92 claims of the five papers (``rfmodel/data/claims.json``), in ID order."""
    import json
    from importlib import resources

    return json.loads(resources.files("rfmodel.data").joinpath("claims.json").read_text())["claims"]


def claim_ids(field: str) -> list[str]:
    """The claim IDs a study's row names: ``"C-11/C-15"``, ``"S-07, S-08"`` or one; ``"-"`` (not a claim)
    names none."""
    import re

    return re.findall(r"\b[LCMSE]-\d\d\b", field)


def read_study_claims(folder) -> list[dict]:
    """A study's ``claims.csv`` (one row per claim row of its report); none when the folder has none."""
    import csv
    from pathlib import Path

    path = Path(folder) / "claims.csv"
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def computed_claims() -> list[dict]:
    """Claim rows this command computes itself, as a study would (from the model, no simulation): the
    register file a kernel's maximum thread-level parallelism needs (the LTRF paper's Table 1: L-01 on
    Fermi, L-02 on Maxwell), over the LTRF paper's benchmarks, as a multiple of the SM's register file
    (:func:`rfmodel.workload.suite.rf_demand_table`, the kernels' sm_80 registers)."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.studies.common import fmt, verdict
    from rfmodel.studies.report import commit
    from rfmodel.workload.suite import paper_workloads, rf_demand_table

    rows = []
    for cid, gpu, mean_x, max_x in (("L-01", "fermi-gtx480", 1.4, 2.5), ("L-02", "maxwell-ltrf", 2.3, 5.9)):
        table = rf_demand_table(resolve_gpu(gpu), suite="papers")
        ws = paper_workloads("ltrf")
        xs = [table[w] for w in ws]
        mean, top = sum(xs) / len(xs), max(xs)
        most = max(ws, key=table.__getitem__)
        rows.append(
            {
                "claim": cid,
                "what": f"register file for maximum TLP on {gpu} over its own (mean; max)",
                "paper": f"{mean_x}x; {max_x}x",
                "ours": f"{fmt(mean, '.2f')}x; {fmt(top, '.2f')}x ({most})",
                "verdict": f"{verdict(mean, mean_x)}; {verdict(top, max_x)}",
                "note": f"{len(ws)} kernels, sm_80 "
                "registers (rfmodel workload list --suite papers --gpu GPU: rf_demand_x)",
                "study": "claims",
                "command": "rfmodel study claims",
                "commit": commit(),
            }
        )
    rows += structure_claims()
    rows.append(reads_per_value_claim())
    rows += prefetch_code_claims()
    for r in rows:
        r["grade"] = grade(r["verdict"])
    return rows


#: the warps of each kernel the trace statistics of :func:`reads_per_value_claim` read (as the CERF study's)
TRACE_WARPS = 96


def reads_per_value_claim(workloads=None) -> dict:
    """E-04 (the Cache-Emulated Register File paper's Fig. 2a): the shares of written register values read
    fewer than twice and more than twice before their register is written again, over that paper's
    benchmarks on ``fermi-gtx480`` (:func:`rfmodel.workload.values.reads_per_value` of each kernel's trace,
    its first :data:`TRACE_WARPS` warps' CTAs; the mean over kernels; ``workloads``: others instead)."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.studies.common import fmt, mean, verdict
    from rfmodel.studies.report import commit
    from rfmodel.workload.suite import load_workload, paper_workloads
    from rfmodel.workload.values import reads_per_value

    sm = resolve_gpu("fermi-gtx480")
    shares = {}
    for w in paper_workloads("cerf") if workloads is None else workloads:
        wl = load_workload(w, num_sms=sm.num_sms, max_warps=TRACE_WARPS, line_bytes=sm.l1d.line_bytes)
        shares[w] = reads_per_value(wl.trace)
    below2 = mean([s[0] + s[1] for s in shares.values()])
    above2 = mean([s[3] for s in shares.values()])
    over = (
        "n/a"
        if above2 != above2
        else ("within the paper's range" if above2 < 0.10 else "outside the paper's range")
    )
    return {
        "claim": "E-04",
        "what": "written values read fewer than twice; more than twice",
        "paper": "about 60 %; under 10 %",
        "ours": f"{fmt(below2, '.0f', ' %', 100)}; {fmt(above2, '.0f', ' %', 100)}",
        "verdict": f"{verdict(below2, 0.60, base=0.0)}; {over}",
        "note": f"{len(shares)} kernels"
        + (" of the CERF paper's benchmarks" if workloads is None else f" ({', '.join(shares)})")
        + " on fermi-gtx480, their first "
        f"{TRACE_WARPS} warps' CTAs (rfmodel.workload.values.reads_per_value); a read is a "
        "warp-instruction that names the register",
        "study": "claims",
        "command": "rfmodel study claims",
        "commit": commit(),
    }


#: the bits of one LTRF prefetch bit-vector (a bit per register a thread may have: the LTRF paper's 256) and
#: of one instruction of the compiled kernels (sm_80 SASS: 128)
VECTOR_BITS, INSTR_BITS = 256, 128
#: registers per interval of the LTRF paper's conflict study (section 7.3), and its maximum conflicts per
#: prefetch without and with the renumbering (L-23)
INTERVAL_REGS, MAX_CONFLICTS = (8, 16, 32), {False: (3, 3, 3), True: (1, 1, 2)}


def prefetch_code(kernel, executed, n_banks: int, regs=INTERVAL_REGS, code_regs: int = 16) -> dict:
    """What the LTRF design's compiler pass (:func:`rfmodel.designs.ltrf._compile`) makes of one static
    kernel: per registers-per-interval N of ``regs`` and without / with the renumbering (LTRFconf), the most
    main-RF bank conflicts of one prefetch (register ``r`` in bank ``r mod n_banks``) over the intervals the
    static instructions ``executed`` enter (``("max", N, conf)``), and at N = ``code_regs`` the code-size
    growth of a prefetch bit-vector of :data:`VECTOR_BITS` per interval, alone (``"vectors"``) and with a
    prefetch instruction before it (``"with_instr"``), as shares of the kernel's instructions of
    :data:`INSTR_BITS` each."""
    import numpy as np

    from rfmodel.designs.ltrf import _compile

    rows = np.asarray(sorted(executed), dtype=np.int64)
    out = {}
    for n in regs:
        for conf in (False, True):
            ivs, _, _, conflicts = _compile(kernel, n, "interval", conf, n_banks)
            run = np.unique(np.asarray(ivs.interval_of, dtype=np.int64)[rows]) if len(rows) else []
            out["max", n, conf] = max((conflicts[i] for i in run), default=0)
            if n == code_regs and not conf:
                per_instr = len(ivs.lengths()) / max(len(kernel.instrs), 1)
                out["vectors"] = per_instr * VECTOR_BITS / INSTR_BITS
                out["with_instr"] = per_instr * (VECTOR_BITS + INSTR_BITS) / INSTR_BITS
    return out


def prefetch_code_claims(workloads=None) -> list[dict]:
    """L-13 and L-23 from the LTRF design's compiler pass on the LTRF paper's benchmarks (``workloads``:
    others instead) on its SM (``maxwell-ltrf``, 16 main-RF banks), each kernel's static sm_80 code
    (:func:`prefetch_code`; the executed intervals from its first :data:`TRACE_WARPS` warps' CTAs): the code
    a prefetch bit-vector per interval adds (the mean over kernels), and the most bank conflicts of one
    prefetch over all kernels, without and with the renumbering."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.studies.common import fmt, mean, verdict
    from rfmodel.studies.report import commit
    from rfmodel.workload.static import static_kernel
    from rfmodel.workload.suite import load_workload, paper_workloads

    sm = resolve_gpu("maxwell-ltrf")
    stats = {}
    for w in paper_workloads("ltrf") if workloads is None else workloads:
        wl = load_workload(w, num_sms=sm.num_sms, max_warps=TRACE_WARPS, line_bytes=sm.l1d.line_bytes)
        kernel = static_kernel(wl.trace)
        if kernel is not None:
            stats[w] = prefetch_code(kernel, set(int(x) for x in set(wl.trace.sidx.tolist())), sm.num_banks)
    of = (
        f"{len(stats)} kernels"
        + (" of the LTRF paper's benchmarks" if workloads is None else f" ({', '.join(stats)})")
        + f" on {sm.name}"
    )
    common = {"study": "claims", "command": "rfmodel study claims", "commit": commit()}
    if not stats:
        return [
            {
                "claim": c,
                "what": "the LTRF compiler pass",
                "paper": "",
                "ours": "n/a",
                "verdict": "n/a",
                "note": "no static kernel found",
                **common,
            }
            for c in ("L-13", "L-23")
        ]
    vec, ins = mean([s["vectors"] for s in stats.values()]), mean([s["with_instr"] for s in stats.values()])
    keys = [(n, c) for n in INTERVAL_REGS for c in (False, True)]
    top = {k: max(s[("max", *k)] for s in stats.values()) for k in keys}
    avg = {k: mean([s[("max", *k)] for s in stats.values()]) for k in keys}

    def per_n(d, conf):
        return " / ".join(f"{d[n, conf]:{'.0f' if d is top else '.2f'}}" for n in INTERVAL_REGS)

    cuts = ["same ordering" if top[n, True] < top[n, False] else "ordering differs" for n in INTERVAL_REGS]
    return [
        {
            "claim": "L-13",
            "what": "code added at N = 16: prefetch bit-vectors; with prefetch instructions",
            "paper": "+7 %; +9 %",
            "ours": f"{fmt(vec, '+.1f', ' %', 100)}; {fmt(ins, '+.1f', ' %', 100)}",
            "verdict": f"{verdict(vec, 0.07, base=0.0)}; {verdict(ins, 0.09, base=0.0)}",
            "note": f"{of}: one {VECTOR_BITS}-bit vector (and one instruction) per register-interval over "
            f"{INSTR_BITS}-bit instructions, the mean over kernels; the paper's 0.2 % slowdown from fetching "
            "them is not modelled",
            **common,
        },
        {
            "claim": "L-23",
            "what": "most bank conflicts of one prefetch, N = 8 / 16 / 32: LTRF; LTRFconf",
            "paper": "3 / 3 / 3; 1 / 1 / 2",
            "ours": f"{per_n(top, False)}; {per_n(top, True)}",
            "verdict": "; ".join(cuts),
            "note": f"{of}, 16 banks: the executed intervals' working sets; the mean over kernels of each "
            f"kernel's most: {per_n(avg, False)} without, {per_n(avg, True)} with the renumbering",
            **common,
        },
    ]


def structure_claims() -> list[dict]:
    """Claim rows of sizes the project derives rather than simulates: Volta's register file across the chip
    from the ``volta-v100`` preset (C-02), the LTRF warp control blocks' storage and their area beside the
    main RF's banks from the ``ltrf`` design's structures on the LTRF paper's SM (L-14), and the BDI size of
    a warp register whose lanes differ from lane 0 by one-byte deltas, from the executor's value attributes
    (the STT-RAM paper's worked example, S-05: 40 B, and 88 B saved where its text says 68)."""
    import numpy as np

    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import DEFAULT_TECH, resolve_gpu
    from rfmodel.studies.common import fmt, structure_total, verdict
    from rfmodel.studies.report import commit
    from rfmodel.workload.execute.machine import _value_attrs

    volta = resolve_gpu("volta-v100")
    rf_mb = volta.num_sms * volta.regs_per_sm * 4 / 2**20
    ltrf_sm = resolve_gpu("maxwell-ltrf")
    st = {x.name: x for x in get_design("ltrf").structures(ltrf_sm, {}, DEFAULT_TECH)}
    wcb_bits = structure_total(st["warp_control_block"])
    wcb_area = structure_total(st["warp_control_block"], "area_mm2") / structure_total(
        st["main_rf_bank"], "area_mm2"
    )
    regs = np.zeros((1, 1, 32), dtype=np.uint32)
    regs[0, 0] = 1000 + np.arange(32, dtype=np.uint32)  # lane l holds 1000 + l: deltas of one byte
    _, bdi = _value_attrs(regs, 0, 0)
    rows = [
        {
            "claim": "C-02",
            "what": "Volta's register file across the chip (volta-v100 preset)",
            "paper": "80 x 256 KB = 20 MB",
            "ours": f"{volta.num_sms} x {volta.regs_per_sm * 4 // 1024} KB = {rf_mb:g} MB",
            "verdict": verdict(rf_mb, 20.0, base=0.0),
            "note": "rfmodel spec show volta-v100",
        },
        {
            "claim": "L-14",
            "what": f"warp control blocks per SM ({ltrf_sm.name}): storage; area / main-RF banks'",
            "paper": "114880 bits; about 5 %",
            "ours": f"{wcb_bits:.0f} bits; {fmt(wcb_area, '.1f', ' %', 100)}",
            "verdict": f"{verdict(wcb_bits, 114880.0, base=0.0)}; {verdict(wcb_area, 0.05, base=0.0)}",
            "note": "the ltrf design's structures at 45 nm (the +1 cycle per access is the design's timing)",
        },
        {
            "claim": "S-05",
            "what": "BDI size of a warp register of one-byte deltas; bytes saved",
            "paper": "40 B; 88 B (the text's 68 B is a slip)",
            "ours": f"{bdi} B; {128 - bdi} B",
            "verdict": verdict(128 - bdi, 88.0, base=0.0),
            "note": "4-byte base (lane 0) and 32 one-byte deltas, the executor's BDI "
            "(rfmodel.workload.execute.machine._value_attrs); the paper's example takes 40 B",
        },
    ]
    for r in rows:
        r.update(study="claims", command="rfmodel study claims", commit=commit())
    return rows


def combine(grades) -> str:
    """One grade for the rows of a claim: the common one, ``partial`` where they differ, ``none`` if no row
    gives one."""
    gs = [g for g in grades if g not in ("none", "")]
    if not gs:
        return "none"
    if "unknown" in gs:
        raise ValueError("a study's verdict has a phrase claims.grade does not know")
    return gs[0] if all(g == gs[0] for g in gs) else "partial"


def gather(folders: dict) -> list[dict]:
    """One row per claim ID of :func:`registry`: the figure and grade of the first study of
    :data:`STUDIES_OF_PAPER` whose report folder (``folders[study]``) has rows for it; a fact where it is
    an input; ``none`` where no study reports it."""
    by_study = {s: read_study_claims(f) for s, f in folders.items()}
    by_study["claims"] = computed_claims()
    out = []
    for c in registry():
        row = {
            "claim_id": c["id"],
            "paper": c["paper"],
            "claim": c["claim"],
            "paper_figure": c["paper_figure"],
        }
        for study in STUDIES_OF_PAPER[c["paper"]]:
            rows = [r for r in by_study.get(study, []) if c["id"] in claim_ids(r["claim"])]
            if rows:
                break
        if rows:
            graded = [r for r in rows if r["grade"] not in ("none", "")]
            row["ours"] = "; ".join(f"{r['what']}: {r['ours']}" for r in rows)
            row["verdict"] = combine(r["grade"] for r in rows)
            row["explanation"] = "; ".join(
                f"{r['what']}: {r['verdict']}" + (f" ({r['note']})" if r["note"] else "") for r in graded
            )
            if c.get("why") and row["verdict"] in ("mismatch", "partial"):  # the mechanism, from the counters
                row["explanation"] += f". Why: {c['why']}"
            row["where"] = f"{rows[0]['command']} ({rows[0]['commit']})"
            if row["verdict"] == "none" and c["kind"] == "fact":  # an input the study shows without judging
                row["verdict"] = "fact"
                row["explanation"] = f"an input: {c['fact_where']}"
        elif c["kind"] == "fact":
            agrees = {
                True: "the project's value is the paper's",
                False: "the project's value differs",
                None: "not encoded in the project",
            }[c["fact_agrees"]]
            row.update(
                ours=c["fact_where"],
                verdict="fact",
                explanation=agrees,
                where="an input: rfmodel/data/claims.json",
            )
        else:
            row.update(
                ours="",
                verdict="none",
                where="",
                explanation=c.get("none_why") or "no study reports a figure for it yet",
            )
        out.append(row)
    return out


def counts_markdown(rows, source: str) -> str:
    """The verdicts counted per paper (a table) and where they come from."""
    papers = list(STUDIES_OF_PAPER)
    head = "| paper | " + " | ".join(GRADES) + " | claims |\n|---|" + "---|" * (len(GRADES) + 1) + "\n"
    body = []
    for p in [*papers, "all"]:
        rs = [r for r in rows if p in ("all", r["paper"])]
        body.append(
            f"| {p} | "
            + " | ".join(str(sum(r["verdict"] == g for r in rs)) for g in GRADES)
            + f" | {len(rs)} |\n"
        )
    return (
        head + "".join(body) + f"\nGenerated by `{source}` from the studies' report folders "
        "(studies/claims.csv has a row per claim: the paper's figure, ours, the verdict and where it "
        "comes from).\n"
    )


def build_parser(prog: str):
    from rfmodel.studies.common import StudyParser

    ap = StudyParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument(
        "--from",
        dest="folders",
        action="append",
        default=[],
        metavar="STUDY=DIR",
        help="a study's report folder (default: each paper study's --out default)",
    )
    ap.add_argument(
        "--out", default="studies/claims.csv", metavar="FILE", help="the table (default: studies/claims.csv)"
    )
    ap.add_argument("--docs", action="store_true", help="write the counts per paper into docs/validation.md")
    return ap


def default_folders() -> dict:
    """Each paper study's default report folder (its ``--out`` default)."""
    from rfmodel.studies import parser

    studies = sorted({s for ss in STUDIES_OF_PAPER.values() for s in ss} - {"claims"})
    return {s: parser(s).parse_args([]).out for s in studies}


def run_study(a, argv, *, prog: str, study: str = "claims") -> int:
    import csv
    import io
    from pathlib import Path

    from rfmodel.errors import RfmodelError
    from rfmodel.io import write_text
    from rfmodel.studies.common import command_line, write_marked
    from rfmodel.studies.report import progress

    folders = default_folders()
    for item in a.folders:
        name, eq, folder = item.partition("=")
        if not eq or name not in folders:
            raise RfmodelError(f"--from {item!r}: expected STUDY=DIR with STUDY one of {', '.join(folders)}")
        if not Path(folder).is_dir():
            raise RfmodelError(f"--from {item!r}: {folder} is not a folder")
        if not (Path(folder) / "claims.csv").is_file():
            raise RfmodelError(
                f"--from {item!r}: {folder} has no claims.csv (a report folder of "
                f"'rfmodel study {name}' has one)"
            )
        folders[name] = folder
    found = {s: f for s, f in folders.items() if (Path(f) / "claims.csv").is_file()}
    missing = sorted(set(folders) - set(found))
    progress(
        study,
        "report folders: "
        + (", ".join(f"{s} {f}" for s, f in found.items()) or "none")
        + (f"; no claims.csv for {', '.join(missing)}" if missing else ""),
    )
    try:
        rows = gather(found)
    except ValueError as e:
        raise RfmodelError(str(e)) from None
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, COLUMNS)
    w.writeheader()
    w.writerows(rows)
    write_text(Path(a.out), buf.getvalue())
    text = counts_markdown(rows, command_line(prog, argv))
    print(text)
    if a.docs:
        write_marked(
            Path("docs/validation.md"),
            DOCS_MARK.format(end="begin"),
            DOCS_MARK.format(end="end"),
            text,
            "## The papers' claims",
            "Verdicts per paper",
        )
    progress(study, f"{len(rows)} claims: {a.out}")
    return 0
