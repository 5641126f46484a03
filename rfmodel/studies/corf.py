"""CORF and CORF++: the Coalescing Operand Register File paper's study on the simulator.

"CORF: Coalescing Operand Register File for GPUs", section 7 (Figs. 13-18, Table 1), with the ``corf``
design's presets against the ``baseline`` design, on executed traces of the paper's benchmarks (``--suite
papers``, the default: the papers' kernels of Rodinia, Parboil, the CUDA SDK and DeepBench, the suites the
paper names) or the built-in suite:

* the paper's SM (:func:`paper_sm`, section 2 and 7): the Fermi-like ``fermi-gtx480`` with a 128 KB register
  file in 4 banks (256 warp registers each; CORF++'s 8 byte-plane sub-banks are the allocation masks of the
  design), 4 operand collectors CU0-CU3 of any type with ONE read port each, 2 schedulers with the two-level
  policy (its active pool: the simulator's default, 8 warps per scheduler; the paper does not give it);
  every other value as ``fermi-gtx480`` (the paper leaves caches, DRAM and clock to GPGPU-Sim's Fermi);
* the shipped ``fermi-gtx480`` (16 banks, 16 typed collectors with unlimited read ports, GTO) for contrast;
* per kernel and mean, for packing, packing + virtualization, first-fit, CORF and CORF++: the coalesced share
  of instructions with two or more register sources (C-06, C-10), bank reads saved per operand read and per
  RF access with writes (C-09, C-15), IPC over the baseline (harmonic mean, C-11), RF dynamic energy with
  Table 2's 149.76 pJ per bank access and 1.83 pJ per renaming-table access (C-13), allocated physical
  registers per architectural register (C-12) and the leakage that follows when unallocated physical
  registers are power gated (C-14; see :func:`leakage_ratio`), reallocations per written value (C-08),
  renaming-table port conflicts and CORF's metadata code size (C-17);
* the design's invariants on every run (no two live values in one byte slice at any allocation, every slice
  free at the end, bank reads + reads saved = source operands).

Every run is kept in ``OUT/runs.jsonl``; an interrupted run resumes.  Outputs: the report folder
(``OUT/report.md``, figures, ``OUT/runs.csv`` and ``OUT/runs.nc``), ``OUT/points.csv`` (per kernel),
``OUT/summary.md`` and, with ``--docs``, the table in ``docs/validation.md``.

    rfmodel study corf --jobs 1 --docs                  # or: python studies/corf.py --jobs 1 --docs
    rfmodel study corf --quick                          # 4 kernels, 8 warps: well under a minute
    rfmodel study corf --workloads bfs_expand sgemm_tiled --gpus paper     # a smoke run
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

from rfmodel.evaluate import resolve_gpu
from rfmodel.spec.sm import CollectorSpec
from rfmodel.studies.common import (
    SIM_SOURCE,
    Evaluations,
    add_names_option,
    add_workload_options,
    check_inputs,
    command_line,
    fmt,
    geomean,
    mean,
    positive_int,
    publish,
    quick_help,
    simulated_figures,
    structure_total,
    study_parser,
    study_workloads,
    suite_of,
    verdict,
    write_csv,
)
from rfmodel.studies.report import Report, progress
from rfmodel.tech.structures import packing_logic

MARK = "<!-- corf {gpu}:{end} -->"
SECTION = "## CORF and CORF++ on the simulator"
#: the configurations: the baseline and the corf design's presets (Table 1's rows and Fig. 13's first-fit)
CONFIGS = ("baseline", "packing", "packing+virt", "first-fit", "CORF", "CORF++")
#: ``--quick``: integer-heavy kernels (narrow values) and floating-point ones, as the paper splits its
#: benchmarks, at QUICK_WARPS warps: the study's configurations on both SMs in well under a minute
QUICK_WORKLOADS = ("histogram256", "crc32_murmur3", "saxpy", "spmv_csr")
QUICK_WARPS = 8
#: the paper's Table 2 (CACTI 5.3, 40 nm): pJ per warp-register bank access and per renaming-table access;
#: leakage of the 128 KB register file and of the renaming table, plus the added logic's static 0.2 mW
BANK_PJ, RT_PJ = 149.76, 1.83
RF_LEAK_MW, RT_LEAK_MW, LOGIC_LEAK_MW = 89.6, 5.56, 0.2
#: the packers, unpackers and width detectors per operand read or written value at Table 2's 40 nm: the
#: paper's 3 % dynamic overhead less the renaming table's 1.83 / 149.76 (section 7; the technology layer's
#: packing_logic, which the design charges too)
LOGIC_PJ = float(packing_logic(node_nm=40).read_pj)
#: what a run keeps (in the key: a run kept before the invariants were checked is redone)
KEEPS = 4
#: counts kept of one run
COUNTS = (
    "reads",
    "writes",
    "bank_read_acc",
    "bank_write_acc",
    "issued",
    "bank_conflicts",
    "bank_stall_cycles",
    "multi_src",
    "coalesced_instr",
    "reads_saved",
    "reallocations",
    "values",
    "phys_cycles",
    "warp_cycles",
    "rt_reads",
    "rt_writes",
    "unmapped_reads",
    "overflow",
    "alloc_fail",
    "rt_conflicts",
    "rt_delay_cycles",
    "dead_def_frees",
)
METRICS = (
    "ipc",
    "cycles",
    "coalesced_share",
    "reallocation_share",
    "rf_occupancy",
    "width_known_share",
    "rt_conflict_share",
    "metadata_instructions",
    "code_size_increase",
    "buddy_packed_share",
    "ipc_program",
    "metadata_issued",
)
#: the paper's numbers beside ours (C-xx of the seed digest; Table 1 and section 7)
PAPER = {
    "coalesced": {"first-fit": "4 %", "CORF": "23 %", "CORF++": "48 %"},
    "reads": {"CORF": "0.90", "CORF++": "0.77"},
    "accesses": {"CORF": "-10 %", "CORF++": "-23 %"},
    "ipc": {"packing": "1", "packing+virt": "1", "CORF": "1.04", "CORF++": "1.09"},
    "dyn": {"packing": "1", "packing+virt": "1", "CORF": "0.92", "CORF++": "0.83"},
    "occ": {"packing": "0.65", "packing+virt": "0.43", "CORF": "0.43", "CORF++": "0.43"},
    "leak": {"packing": "0.67", "CORF++": "0.48"},
    "realloc": {"CORF": "< 0.3 %", "CORF++": "< 0.3 %"},
    "buddy": {"CORF": "just under 80 %"},
    "code": {"CORF": "1.3 %"},
}
#: the same as numbers, with the value that means "no change" (the verdict compares the changes from it)
PAPER_VALUE = {
    "coalesced": ({"first-fit": 0.04, "CORF": 0.23, "CORF++": 0.48}, 0.0),
    "reads": ({"CORF": 0.90, "CORF++": 0.77}, 1.0),
    "accesses": ({"CORF": -0.10, "CORF++": -0.23}, 0.0),
    "ipc": ({"packing": 1.0, "packing+virt": 1.0, "CORF": 1.04, "CORF++": 1.09}, 1.0),
    "dyn": ({"packing": 1.0, "packing+virt": 1.0, "CORF": 0.92, "CORF++": 0.83}, 1.0),
    "occ": ({"packing": 0.65, "packing+virt": 0.43, "CORF": 0.43, "CORF++": 0.43}, 1.0),
    "leak": ({"packing": 0.67, "CORF++": 0.48}, 1.0),
    "buddy": ({"CORF": 0.78}, 0.0),
    "code": ({"CORF": 0.013}, 0.0),
}


def paper_sm(base: str = "fermi-gtx480"):
    """The paper's SM: ``base`` with 4 banks, 4 generic collectors of one read port, two-level scheduling."""
    sm = resolve_gpu(base)
    return sm.replace(
        name="corf-paper",
        num_banks=4,
        collectors=CollectorSpec(gen=4, sp=0, sfu=0, mem=0, tensor=0, dp=0, int=0),
        collector_read_ports=1,
        scheduler="two-level",
        source=sm.source + " CORF paper's SM (sections 2 and 7): 128 KB register file in 4 banks of 256 warp "
        "registers (8 sub-banks of 128 bit each), 4 operand collectors CU0-CU3 with one read port each, 2 "
        "two-level warp schedulers (active pool: the simulator's 8 per scheduler, not stated).",
    )


def corf_storage() -> tuple[float, float, float]:
    """Bytes of the renaming table, of the free map and of the register file's banks of the ``corf`` design on
    the paper's SM (:func:`paper_sm`; section 8: 5.16 KB, 512 B, 128 KB), from its structures."""
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import DEFAULT_TECH

    structures = get_design("corf").structures(paper_sm(), {}, DEFAULT_TECH)
    size = {st.name: structure_total(st) / 8 for st in structures}
    return size["renaming_table"], size["free_map"], size["rf_bank"]


def coalescable_share(trace) -> float:
    """C-05's upper bound: the share of instructions with two or more register sources of which two could
    share one physical register (the same register twice, or widths adding up to at most 4 bytes): the
    analytic profile's ``src_same_reg + src_narrow_fit``."""
    from rfmodel.designs.corf import source_pair_stats

    st = source_pair_stats(trace)
    return st["src_same_reg"] + st["src_narrow_fit"] if st["multi_src_share"] > 0 else float("nan")


GPUS = {"paper": paper_sm, "fermi-gtx480": lambda: resolve_gpu("fermi-gtx480")}


def run_point(point: tuple) -> dict:
    """One simulation ``(config, workload, gpu, max_warps)``: metrics and counts."""
    import rfmodel.designs.corf as corf_mod
    from rfmodel.designs.base import get_design
    from rfmodel.designs.corf import H_NALLOC, H_R, check_state
    from rfmodel.sim.engine import simulate_trace
    from rfmodel.workload.suite import load_workload

    t0 = time.perf_counter()
    config, workload, gpu, max_warps = point
    sm = GPUS[gpu]()
    design = "baseline" if config == "baseline" else "corf"
    d = get_design(design)
    params = {} if design == "baseline" else d.preset(config)
    wl = load_workload(workload, num_sms=sm.num_sms, max_warps=max_warps, line_bytes=sm.l1d.line_bytes)
    program = d.program_for(wl.trace, params, sm, wl.kernel)
    corf_mod.DEBUG_CHECKS = True  # every allocation checks the renaming table for overlapping slices
    run = simulate_trace(wl.trace, sm, d, params, program=program)
    out = {"config": config, "workload": workload, "gpu": gpu, "max_warps": max_warps}
    out.update(simulated_figures(run, METRICS, COUNTS))
    if design == "corf":
        # the design's invariants on this run: no two live values share a byte slice, every slice freed
        # when the warps finished, bank reads + reads saved = source operands, no allocation failed
        c = run.counts
        bad = []
        if c["overlaps"] or c["alloc_fail"]:
            bad.append(f"overlaps {c['overlaps']}, failed allocations {c['alloc_fail']}")
        if c["reads_bank"] + c["reads_saved"] != c["reads"] or c["src_operands"] != c["reads"]:
            bad.append("bank reads + reads saved != source operands")
        if run.setup.ints[H_NALLOC] != 0:
            bad.append("slices left allocated at the end")
        try:
            check_state(run.setup.ints)
        except AssertionError as e:
            bad.append(str(e))
        out["invariants"] = "; ".join(bad) or "ok"
        out["regs"] = int(run.setup.ints[H_R])
        out["metadata"] = run.setup.info.get("corf_hints", "")
    if design == "baseline":
        from rfmodel.workload.values import value_stats

        out["coalescable"] = coalescable_share(wl.trace)
        vs = value_stats(wl.trace)  # C-03: register operations (reads and writes) by width class
        out["narrow"], out["one_byte"] = vs["narrow_operations"], vs["one_byte_operations"]
    out["warp_regs_per_sm"] = sm.warp_regs_per_sm
    out["seconds"] = time.perf_counter() - t0
    return out


def run_key(*point) -> str:
    """A simulation's key in the run log: the point, the simulator's source and what a run keeps."""
    return json.dumps([*point, SIM_SOURCE, KEEPS], sort_keys=True)


def dynamic_energy_ratio(r: dict, b: dict) -> float:
    """RF dynamic energy of a run over the baseline's, as the paper counts it: bank accesses (reads and
    writes, whole rows; a coalesced read is one access) at Table 2's 149.76 pJ, renaming-table lookups and
    updates at 1.83 pJ, and the packing logic at ``LOGIC_PJ`` per operand read and written value (a run
    with a renaming table).  A partial write is charged as a whole one here, as Table 1's packing row
    (dynamic energy 1.0) implies; the design's own energy (``rfmodel evaluate``) charges its slices."""
    c, cb = r["counts"], b["counts"]
    rt = c.get("rt_reads", 0) + c.get("rt_writes", 0)
    logic = (c["reads"] + c["writes"]) * LOGIC_PJ if rt else 0.0
    e = (c["bank_read_acc"] + c["bank_write_acc"]) * BANK_PJ + rt * RT_PJ + logic
    eb = (cb["bank_read_acc"] + cb["bank_write_acc"]) * BANK_PJ
    return e / eb if eb else float("nan")


def leakage_ratio(r: dict, b: dict) -> float:
    """RF leakage energy of a run over the baseline's when unallocated physical registers are power gated:
    the baseline's leaking registers are the resident warps' architectural registers (the fraction ``f`` of
    the file, the run's resident warp-cycles x registers / (cycles x warp registers of the SM)), the run's are
    its allocated physical registers (``rf_occupancy`` x that), plus the renaming table's 5.56 mW and the
    logic's 0.2 mW (Table 2, section 8) ungated; leakage power x cycles, the baseline over its own cycles
    with the same ``f``."""
    c = r["counts"]
    cyc, cyc_b = r["cycles"], b["cycles"]
    if not cyc or not cyc_b or not c.get("warp_cycles"):
        return float("nan")
    f = c["warp_cycles"] * r["regs"] / (cyc * r["warp_regs_per_sm"])
    gated = RF_LEAK_MW * f
    p = gated * r["rf_occupancy"] + RT_LEAK_MW + LOGIC_LEAK_MW
    return p * cyc / (gated * cyc_b)


def row_of(w: str, gpu: str, get) -> dict | None:
    b = get("baseline", w, gpu)
    if not b.get("ipc"):
        return None
    row = {"workload": w, "gpu": gpu, "base_ipc": b["ipc"]}
    for cfg in CONFIGS[1:]:
        r = get(cfg, w, gpu)
        c = r["counts"]
        reads, writes = c["reads"], c["writes"]
        # the paper's IPC: metadata instructions executed (their cost) but not counted as instructions
        ipc = r.get("ipc_program") or r.get("ipc")
        row[f"ipc {cfg}"] = ipc / b["ipc"] if ipc else float("nan")
        row[f"coalesced {cfg}"] = r["coalesced_share"]
        row[f"reads {cfg}"] = 1.0 - c["reads_saved"] / reads if reads else float("nan")
        row[f"accesses {cfg}"] = -c["reads_saved"] / (reads + writes) if reads + writes else float("nan")
        row[f"dyn {cfg}"] = dynamic_energy_ratio(r, b)
        row[f"occ {cfg}"] = r["rf_occupancy"]
        row[f"leak {cfg}"] = leakage_ratio(r, b)
        row[f"realloc {cfg}"] = r["reallocation_share"]
        row[f"rt {cfg}"] = r.get("rt_conflict_share")
        row[f"code {cfg}"] = r.get("code_size_increase")
        row[f"multi {cfg}"] = c["multi_src"] / c["issued"] if c.get("issued") else float("nan")
        row[f"stall {cfg}"] = (
            c["bank_stall_cycles"] / b["counts"]["bank_stall_cycles"]
            if b["counts"].get("bank_stall_cycles")
            else float("nan")
        )
    row["width_known"] = get("CORF++", w, gpu)["width_known_share"]
    row["coalescable"] = b.get("coalescable")
    row["narrow"], row["one_byte"] = b.get("narrow"), b.get("one_byte")
    row["buddy CORF"] = get("CORF", w, gpu).get("buddy_packed_share")
    return row


def hmean(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x) and x > 0]
    return len(xs) / sum(1.0 / x for x in xs) if xs else float("nan")


def build_parser(prog: str):
    quick = quick_help(QUICK_WORKLOADS, kind="kernels", warps=QUICK_WARPS)
    ap = study_parser(prog, __doc__, out="studies/out/corf", jobs=1, quick=quick)
    add_names_option(
        ap,
        "--gpus",
        GPUS,
        kind="GPU",
        metavar="GPU",
        help="paper: the paper's 4-bank, 1-port-collector SM; fermi-gtx480: the shipped preset",
    )
    add_workload_options(ap, "corf")
    ap.add_argument(
        "--max-warps", type=positive_int, default=None, help="keep that many warps' CTAs (default: all)"
    )
    return ap


def run_study(a, argv, *, prog: str, study: str = "corf") -> int:
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.quick and a.max_warps is None:
        a.max_warps = QUICK_WARPS
    workloads = study_workloads(a, QUICK_WORKLOADS)
    check_inputs(workloads)
    runs = Evaluations(out / "runs.jsonl", a.jobs, job=run_point, key=run_key)
    t0 = time.time()
    pts = [(cfg, w, g, a.max_warps) for g in a.gpus for w in workloads for cfg in CONFIGS]
    progress(
        study,
        f"{len(pts)} simulations ({len(CONFIGS)} configurations x {len(workloads)} workloads x "
        f"{len(a.gpus)} SMs)",
    )
    runs.ensure(pts)
    progress(study, f"simulations done in {time.time() - t0:.0f} s")

    def get(cfg, w, g):
        return runs.get(cfg, w, g, a.max_warps)

    rows = [r for g in a.gpus for w in workloads if (r := row_of(w, g, get)) is not None]
    if not rows:
        print("no workload ran", file=sys.stderr)
        return 1
    write_csv(out / "points.csv", rows)
    skipped = sorted(set(workloads) - {r["workload"] for r in rows})
    cmd = command_line(prog, argv)
    rep = Report(
        out,
        study,
        cmd,
        title='CORF and CORF++ against the baseline ("CORF: Coalescing Operand Register File for GPUs")',
    )
    rep.describe(
        GPU=" and ".join(a.gpus) + " (`paper`: fermi-gtx480 with 4 banks, 4 one-port collectors, "
        "two-level scheduling)",
        designs=CONFIGS,
        workloads=workloads,
        warps=a.max_warps or "all",
        **{"left out": ", ".join(skipped) or "none"},
    )
    text = report(rows, a, get, skipped, cmd=cmd, rep=rep)
    publish(
        text, a, mark=MARK, section=SECTION, title="CORF / CORF++ against the baseline", gpu="+".join(a.gpus)
    )
    progress(study, "figures and data")
    figures(rep, rows)
    rep.data(
        [get(c, w, g) for g in a.gpus for w in workloads for c in CONFIGS], ["gpu", "config", "workload"]
    )
    rep.section("Summary", text)
    rep.write()
    return 0


#: the per-kernel figures: file prefix, caption, the rows' column prefix, the configurations drawn and the
#: plot's options
FIGURES = (
    (
        "ipc",
        "IPC over the baseline per kernel on `{g}` (harmonic mean last; Fig. 15)",
        "ipc",
        CONFIGS[1:],
        {"ylabel": "IPC / baseline", "mean": "hmean"},
    ),
    (
        "coalesced",
        "Coalesced share of multi-source instructions on `{g}` (Fig. 13)",
        "coalesced",
        CONFIGS[3:],
        {"ylabel": "coalesced share", "ref": None, "mean": "mean"},
    ),
    (
        "energy",
        "RF dynamic energy over the baseline on `{g}` (Table 2 per access; Fig. 17)",
        "dyn",
        CONFIGS[1:],
        {"ylabel": "dynamic energy / baseline"},
    ),
)


def figures(rep: Report, rows) -> None:
    """Fig. 15 (IPC), Fig. 13 (coalesced share) and Fig. 17 (dynamic energy) per kernel, per SM."""
    for g in dict.fromkeys(r["gpu"] for r in rows):
        rs = [r for r in rows if r["gpu"] == g]
        names = [r["workload"] for r in rs]
        for name, caption, column, configs, options in FIGURES:
            series = {c: [r[f"{column} {c}"] for r in rs] for c in configs}
            rep.bars(f"{name}_{g}.png", caption.format(g=g), names, series, **options)


def report(rows, a, get, skipped=(), *, cmd: str, rep: Report | None = None) -> str:
    """The study's tables (markdown); with ``rep``, its claims, each with a verdict on the first SM's
    figure."""
    gpus = list(dict.fromkeys(r["gpu"] for r in rows))
    out = [_report_intro(rows, a, skipped, cmd)]
    _kernel_tables(out, rows, gpus)
    out.append("**Claims** (mean over the kernels; `paper` / `fermi-gtx480`):\n\n")
    cols = " | ".join(f"ours ({g})" for g in gpus)
    dashes = " | ".join("---" for _ in gpus)
    out.append(f"| claim | configuration | paper | {cols} |\n| --- | --- | --- | {dashes} |\n")

    def value(g, key, cfg, agg):
        return agg([r[f"{key} {cfg}"] for r in rows if r["gpu"] == g])

    def cell(g, key, cfg, agg, spec, scale=1.0, suffix=""):
        return fmt(value(g, key, cfg, agg), spec, suffix, scale)

    def claim(name, cfg, paper, ours, v=None, note=""):
        """A claim row of ``rep``: its ID and what it is, split from ``name``; ours per SM."""
        if rep is None:
            return
        cid, _, what = name.partition(" ")
        if not cid.startswith("C-"):
            cid, what = "-", name
        what = what + (f" ({cfg})" if cfg not in ("-", "all") else "")
        rep.claim(
            cid, what, paper, " / ".join(f"{o} ({g})" for o, g in zip(ours, gpus, strict=True)), v or "", note
        )

    def judge(key, cfg, x):
        vals, base = PAPER_VALUE.get(key, ({}, 1.0))
        if key == "realloc":
            return "n/a" if x != x else ("below 0.3 %, as the paper's" if x < 0.003 else "above the paper's")
        return verdict(x, vals[cfg], base=base) if cfg in vals else ""

    four = ("packing", "packing+virt", "CORF", "CORF++")
    lines = _claim_specs(four)
    for name, key, cfgs, agg, spec, scale, suffix in lines:
        for cfg in cfgs:
            ours = [cell(g, key, cfg, agg, spec, scale, suffix) for g in gpus]
            paper = PAPER.get(key, {}).get(cfg, "-")
            out.append(f"| {name} | {cfg} | {paper} | {' | '.join(ours)} |\n")
            claim(name, cfg, paper, ours, judge(key, cfg, value(gpus[0], key, cfg, agg)))
    c5 = " | ".join(
        fmt(mean([r["coalescable"] for r in rows if r["gpu"] == g]), ".1f", " %", 100) for g in gpus
    )
    out.append(
        f"| C-05 multi-source instructions with two sources that fit one register (upper bound) | - | "
        f"69 % | {c5} |\n"
    )
    c5x = mean([r["coalescable"] for r in rows if r["gpu"] == gpus[0]])
    claim(
        "C-05 multi-source instructions with two sources that fit one register (upper bound)",
        "-",
        "69 %",
        c5.split(" | "),
        verdict(c5x, 0.69, base=0.0),
    )

    def share(g, k):
        return mean([r.get(k) for r in rows if r["gpu"] == g])

    c3 = [
        f"{fmt(share(g, 'narrow'), '.1f', ' %', 100)}; {fmt(share(g, 'one_byte'), '.1f', ' %', 100)}"
        for g in gpus
    ]
    out.append(
        f"| C-03 register operations narrower than 4 bytes; of 1 byte (trace) | - | 65 %; over 33 % "
        f"| {' | '.join(c3)} |\n"
    )
    one = share(gpus[0], "one_byte")
    over = "n/a" if one != one else "within the paper's range" if one > 0.33 else "outside the paper's range"
    claim(
        "C-03 register operations narrower than 4 bytes; of 1 byte (trace)",
        "-",
        "65 %; over 33 %",
        c3,
        f"{verdict(share(gpus[0], 'narrow'), 0.65, base=0.0)}; {over}",
    )
    c7 = " | ".join(cell(g, "buddy", "CORF", mean, ".1f", 100, " %") for g in gpus)
    out.append(f"| C-07 compiler pairs packed together | CORF | just under 80 % | {c7} |\n")
    claim(
        "C-07 compiler pairs packed together",
        "CORF",
        "just under 80 %",
        c7.split(" | "),
        judge("buddy", "CORF", value(gpus[0], "buddy", "CORF", mean)),
    )
    mult = " | ".join(cell(g, "multi", "CORF++", mean, ".1f", 100, " %") for g in gpus)
    out.append(f"| C-04 instructions with two or more register sources | - | about 40 % | {mult} |\n")
    claim(
        "C-04 instructions with two or more register sources",
        "-",
        "about 40 %",
        mult.split(" | "),
        verdict(value(gpus[0], "multi", "CORF++", mean), 0.40, base=0.0),
    )
    _headline_rows(out, claim, value, gpus)
    rt, fm, rf = corf_storage()
    storage = f"{rt / 1024:.2f} KB ({rt / rf:.1%}) / {fm:g} B"  # of the paper's SM: one cell per GPU column
    out.append(
        "| C-16 renaming table / free map storage (the paper's SM; not a run) | CORF++ | 5.16 KB (4 % "
        f"of the RF) / 512 B | {' | '.join([storage] * len(gpus))} |\n"
    )
    if rep is not None:
        rep.claim(
            "C-16",
            "renaming table / free map storage (the paper's SM; not a run)",
            "5.16 KB (4 % of the RF) / 512 B",
            storage,
            f"{verdict(rt, 5.16 * 1024, base=0.0)}; {verdict(fm, 512.0, base=0.0)}",
        )
    for cfg in four:
        stall = " | ".join(cell(g, "stall", cfg, geomean, ".2f") for g in gpus)
        out.append(f"| bank-conflict stall cycles over the baseline (not a claim) | {cfg} | - | {stall} |\n")
        claim("bank-conflict stall cycles over the baseline (not a claim)", cfg, "-", stall.split(" | "))
    _width_and_invariant_rows(out, claim, rows, get, gpus)
    return "".join(out)


def _report_intro(rows, a, skipped, cmd: str) -> str:
    """The report's opening paragraph: the runs (kernels, suite, left-out kernels, warps), the `paper` SM,
    what the ratios and means are, and the command."""
    return (
        f"Simulator, executed traces, {len({r['workload'] for r in rows})} kernels ({suite_of(a)}), "
        + (
            f"not {', '.join(skipped)} (no CTA fits the SM: more registers per thread than its 63); "
            if skipped
            else ""
        )
        + (
            "max_warps = all (the SM's whole share)"
            if a.max_warps is None
            else f"max_warps = {a.max_warps} (the first {a.max_warps} warps' CTAs of the SM's share)"
        )
        + "; `paper` = fermi-gtx480 with 4 "
        "banks, 4 generic collectors with one read port each and two-level scheduling "
        "(`rfmodel/studies/corf.py:paper_sm`). Ratios are over the `baseline` design on the same SM and "
        "trace. Means: IPC harmonic, energy and read ratios geometric, shares arithmetic. "
        f"`{cmd}`\n\n"
    )


def _kernel_tables(out: list[str], rows, gpus) -> None:
    """Append to ``out`` the per-kernel table of each SM: IPC, coalesced share, register reads and RF
    dynamic energy over the baseline."""
    for g in gpus:
        rs = [r for r in rows if r["gpu"] == g]
        out.append(
            f"**Per kernel on `{g}`** (IPC over the baseline; coalesced share of multi-source "
            "instructions; RF dynamic energy over the baseline):\n\n"
        )
        out.append(
            "| kernel | base IPC | IPC packing / +virt / first-fit / CORF / CORF++ | coalesced "
            "first-fit / CORF / CORF++ | reads CORF / CORF++ | dyn. energy CORF / CORF++ "
            "|\n"
        )
        out.append("| --- | --- | --- | --- | --- | --- |\n")
        for r in rs:
            ipc = " / ".join(fmt(r[f"ipc {c}"], ".3f") for c in CONFIGS[1:])
            co = " / ".join(fmt(r[f"coalesced {c}"], ".1f", " %", 100) for c in CONFIGS[3:])
            rd = " / ".join(fmt(r[f"reads {c}"], ".3f") for c in ("CORF", "CORF++"))
            dy = " / ".join(fmt(r[f"dyn {c}"], ".3f") for c in ("CORF", "CORF++"))
            out.append(f"| {r['workload']} | {fmt(r['base_ipc'], '.3f')} | {ipc} | {co} | {rd} | {dy} |\n")
        out.append("\n")


def _claim_specs(four) -> list[tuple]:
    """The claim table's rows of per-configuration means: (name, row key, configurations, mean, format,
    scale, suffix)."""
    return [
        (
            "C-06/C-10 coalesced share of multi-source instructions",
            "coalesced",
            CONFIGS[3:],
            mean,
            ".1f",
            100,
            " %",
        ),
        ("C-15 register reads (bank reads / operand reads)", "reads", CONFIGS[4:], geomean, ".3f", 1, ""),
        ("C-09 RF accesses saved (reads + writes)", "accesses", CONFIGS[4:], mean, "+.1f", 100, " %"),
        ("C-11/C-15 IPC over the baseline", "ipc", four, hmean, ".3f", 1, ""),
        ("C-13/C-15 RF dynamic energy (Table 2 per access)", "dyn", four, geomean, ".3f", 1, ""),
        ("C-12/C-15 allocated physical / architectural registers", "occ", four, mean, ".2f", 1, ""),
        (
            "C-14 RF leakage energy, unallocated registers gated",
            "leak",
            ("packing", "CORF++"),
            geomean,
            ".2f",
            1,
            "",
        ),
        ("C-08 reallocations per written value", "realloc", CONFIGS[4:], mean, ".2f", 100, " %"),
        ("C-17 static code size (CORF's metadata instructions)", "code", ("CORF",), mean, ".1f", 100, " %"),
        (
            "RT lookups delayed by an RT port conflict (2 ports per RT bank; not a claim)",
            "rt",
            CONFIGS[4:],
            mean,
            ".2f",
            100,
            " %",
        ),
    ]


def _headline_rows(out: list[str], claim, value, gpus) -> None:
    """Append to ``out`` (and ``claim``) the headline figures of CORF++ (C-18) and CORF (C-19), the rows of
    the claim table judged together."""
    # the headline figures (abstract, conclusion and introduction): the rows above, judged together
    for cid, cfg, figs in (
        (
            "C-18",
            "CORF++",
            (("dyn", geomean, 0.83), ("leak", geomean, 0.48), ("reads", geomean, 0.77), ("ipc", hmean, 1.09)),
        ),
        ("C-19", "CORF", (("dyn", geomean, 0.915), ("ipc", hmean, 1.04))),
    ):
        names = {"dyn": "RF dynamic energy", "leak": "leakage", "reads": "reads", "ipc": "IPC"}
        paper = ", ".join(f"{names[k]} {fmt(x - 1, '+.1f', ' %', 100)}" for k, _, x in figs)
        ours = [
            ", ".join(f"{names[k]} {fmt(value(g, k, cfg, agg) - 1, '+.1f', ' %', 100)}" for k, agg, _ in figs)
            for g in gpus
        ]
        v = "; ".join(verdict(value(gpus[0], k, cfg, agg), x) for k, agg, x in figs)
        out.append(f"| {cid} headline | {cfg} | {paper} | {' | '.join(ours)} |\n")
        claim(f"{cid} headline figures", cfg, paper, ours, v)


def _width_and_invariant_rows(out: list[str], claim, rows, get, gpus) -> None:
    """Append to ``out`` (and ``claim``) the share of written values with a known width class and the
    design's invariants over every run of each SM."""
    wk = " | ".join(
        fmt(mean([r["width_known"] for r in rows if r["gpu"] == g]), ".0f", " %", 100) for g in gpus
    )
    inv, held = [], True
    for g in gpus:
        runs_g = [get(c, r["workload"], g) for r in rows if r["gpu"] == g for c in CONFIGS[1:]]
        ok = sum(x.get("invariants") == "ok" for x in runs_g)
        inv.append(f"{ok} of {len(runs_g)} runs")
        held = held and ok == len(runs_g)
    out.append(f"| written values with a known width class (trace) | - | - | {wk} |\n")
    out.append(
        "| invariants (no shared byte slice at any allocation, all freed at the end, bank reads + "
        f"saved = operands) | all | - | {' | '.join(inv)} |\n"
    )
    claim("written values with a known width class (trace)", "-", "-", wk.split(" | "))
    claim(
        "invariants (no shared byte slice at any allocation, all freed at the end, bank reads + saved = "
        "operands)",
        "all",
        "-",
        inv,
        "hold" if held else "broken",
    )
