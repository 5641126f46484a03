"""A larger, slower register file: the Latency-Tolerant Register File paper's capacity study.

"Enabling High-Capacity, Latency-Tolerant, and Highly-Concurrent GPU Register Files via Software/Hardware
Cooperation", Table 2 and Figures 3 and 14, on the paper's benchmarks (``--suite papers``, the default: the
papers' kernels of the CUDA SDK, Rodinia and Parboil, the suites the paper names) or the built-in workloads
(``maxwell-ltrf``: the paper's Table 3 SM, 256 KB in 16 banks of 16 KB, 8 active warps):

* the organisations: config #1 (16 x 16 KB HP SRAM), the reference #1 + 16 KB (272 KB, the paper's
  normalization for Figure 14), and the 8x-capacity main RFs #6 (TFET SRAM) and #7 (DWM), each 128 banks of
  16 KB behind a flattened butterfly; their access and write cycles come from the technology layer
  (``main_cell``), and, to separate the cells' derivation from the architecture, a second run takes
  Table 2's latency multiples (5.3x, 6.3x: ``main_rf_latency_x``) with SRAM timing;
* IPC of BL (the baseline RF), Ideal (8x capacity at #1's latency and banking), RFC, LTRF and LTRFconf,
  normalized per workload to BL on #1 + 16 KB (Ideal and BL #6 also to plain #1, Figure 3's reference),
  geometric means over the register-sensitive and register-insensitive workloads (the measured classes,
  ``rfmodel workload classes``);
* RF area and power of each point (the technology layer), and the analytic model's IPC beside the
  simulator's (its error on these slow cells, which its calibration never sampled).

* warps per SM (Figure 20): BL and LTRF with a main RF 6x slower than #1's, against themselves at 1x, on
  SMs of 16, 32, 64 and 128 warps (CTAs of at most 32 x warps threads; the workloads that do not fit are
  left out of that column).

Claims checked: L-05, L-06, L-08, L-16, L-17, L-18, L-19, L-28 (reference digest IDs).  Every evaluation is
kept in ``OUT/runs.jsonl``; an interrupted run resumes.  Outputs: the report folder (``OUT/report.md``,
figures, ``OUT/runs.csv`` and ``OUT/runs.nc``), ``OUT/points.csv`` (every evaluation), ``OUT/summary.md``,
and with ``--docs`` the tables in ``docs/validation.md``.

    rfmodel study ltrf --jobs 2 --docs            # or: python studies/ltrf_capacity.py --jobs 2 --docs
    rfmodel study ltrf --workloads saxpy nbody_tile16 --methods simulate   # a smoke run
"""

from __future__ import annotations

from pathlib import Path

from rfmodel.evaluate import resolve_gpu
from rfmodel.io import write_text
from rfmodel.studies import common
from rfmodel.studies.common import fmt, geomean, mean, pct
from rfmodel.studies.report import Report, progress
from rfmodel.version import __version__

#: capacity multiple of the large main RFs (Table 2 #2-#7) and their bank count (#3, #5-#7: 8x banks)
CAPACITY_X = 8
BANKS_X = 8
#: the large configurations: cell and Table 2's latency multiple (claim L-04)
CONFIGS = {"#6": ("tfet", 5.3), "#7": ("dwm", 6.3)}
#: the studied designs on a large configuration (label -> design)
DESIGNS = {"BL": "baseline", "RFC": "rfc", "LTRF": "ltrf", "LTRFconf": "ltrfconf"}
#: the paper's numbers (claim IDs of the reference digest)
PAPER = {
    ("Ideal", ""): "+37 % on register-sensitive workloads vs 256 KB (+10 to +95 %) [L-05]; LTRF within 5 % "
    "of it [L-09, L-16]",
    ("BL", "#6"): "below 256 KB overall despite 8x capacity [L-06]",
    ("RFC", "#6"): "RF-cache schemes lose 14 % on average at 8x [L-08]",
    ("RFC", "#7"): "RF-cache schemes lose 14 % on average at 8x [L-08]",
    ("LTRF", "#6"): "+32 %, almost Ideal [L-16]",
    ("LTRFconf", "#6"): "LTRF +3.8 % [L-17]",
    ("LTRF", "#7"): "+28 % [L-18]",
    ("LTRFconf", "#7"): "+34 % [L-18]; LTRF +4.8 % [L-17]",
}
#: the warps-per-SM sweep (Figure 20): SM sizes, and the slow main RF's latency multiple
WARPS = (16, 32, 64, 128)
SWEEP_LATENCY_X = 6.0
MARK = "<!-- ltrf-capacity {gpu}:{end} -->"
SECTION = "## Register-caching designs on the simulator"


def points(sm, active_warps: int) -> dict:
    """label -> (design, parameters, config, timing) of every point of the study."""
    regs = int(sm.regs_per_sm)
    banks = int(sm.num_banks)
    big = {"regs_per_sm": regs * CAPACITY_X}
    pool = {"active_warps": active_warps}
    out = {
        "BL #1": ("baseline", {**pool}, "#1", ""),
        "BL #1+16KB": ("baseline", {**pool, "regs_per_sm": regs + 16 * 1024 // 4}, "#1+16KB", ""),
        "Ideal": ("baseline", {**pool, **big}, "8x at #1", ""),
        # LTRF over #1's own main RF (same size and technology: section 5's overheads, L-15)
        "LTRF #1": ("ltrf", {**pool}, "#1", ""),
    }
    for cfg, (cell, lat) in CONFIGS.items():
        for timing, t in (("tech", {"main_cell": cell}), ("Table 2", {"main_rf_latency_x": lat})):
            for label, design in DESIGNS.items():
                name = "num_banks" if design == "baseline" else "main_rf_banks"
                where = {name: banks * BANKS_X}
                out[f"{label} {cfg} {timing}"] = (design, {**pool, **big, **where, **t}, cfg, timing)
    return out


def verdict(ours, paper, *, tol=0.30, sign_only=False) -> str:
    """The change's sign against the paper's and (unless ``sign_only``) its size within ``tol`` relative."""
    if ours != ours:
        return "n/a"
    if abs(ours - 1) < 0.005:
        return "no change here"
    if (ours - 1) * (paper - 1) <= 0:
        return "sign differs"
    if sign_only:
        return "same sign"
    close = abs(ours - paper) <= tol * abs(paper - 1)
    return "same sign, within 30 %" if close else "same sign, size differs"


def claims_table(f3: dict, rep: Report | None = None) -> str:
    """The claims of the paper this study speaks to, the paper's number and the study's (simulator)."""

    def g(point, col="ipc_all"):
        return f3[point][col]

    lines = []

    def add(claim, what, paper_text, ours, paper_value=None, ours_text=None, **kw):
        v = verdict(ours, paper_value, **kw) if paper_value is not None else ""
        lines.append(f"| {claim} | {what} | {paper_text} | {ours_text or pct(ours)} | {v} |\n")
        if rep is not None:
            rep.claim(claim, what, paper_text, ours_text or pct(ours), v)

    sens, ins = "ipc_register-sensitive", "ipc_register-insensitive"
    add(
        "L-04",
        "#6 TFET / #7 DWM main-RF latency vs #1",
        "5.3x / 6.3x",
        float("nan"),
        ours_text=f"{fmt(g('BL #6 tech', 'read_cycles'), '.0f')}x / "
        f"{fmt(g('BL #7 tech', 'read_cycles'), '.0f')}x (bank access in cycles)",
    )
    add(
        "L-05",
        "Ideal vs #1 (256 KB), register-sensitive",
        "+37 % (+10 to +95 %)",
        g("Ideal", "ipc_vs_256kb_sensitive"),
        1.37,
    )
    if g("Ideal", "ipc_vs_256kb_sensitive") != g("Ideal", "ipc_vs_256kb_sensitive"):  # no such kernel here
        add(
            "L-05",
            "Ideal vs #1 (256 KB), every kernel (none of them register-sensitive)",
            "+37 % (on the register-sensitive)",
            g("Ideal", "ipc_vs_256kb_all"),
            1.37,
        )
    add("L-06", "BL on #6 vs #1, all", "a loss", g("BL #6 tech") / g("BL #1"), 0.9, sign_only=True)
    for cfg in ("#6", "#7"):
        add("L-08", f"RFC on {cfg} vs #1 + 16 KB, all", "-14 %", g(f"RFC {cfg} tech"), 0.86)
    for design, cfg, paper in (("LTRF", "#6", 1.32), ("LTRF", "#7", 1.28), ("LTRFconf", "#7", 1.34)):
        claim = "L-16" if cfg == "#6" else "L-18"
        add(claim, f"{design} on {cfg}, all", pct(paper), g(f"{design} {cfg} tech"), paper)
        add(
            claim,
            f"{design} on {cfg}, register-sensitive",
            f"({pct(paper)} over all)",
            g(f"{design} {cfg} tech", sens),
            paper,
        )
    gap = g("LTRF #6 tech") / g("Ideal")
    v16 = "within 5 %" if abs(gap - 1) <= 0.05 else "more than 5 % apart"
    lines.append(
        f"| L-16 | LTRF on #6 vs Ideal, all | almost equal (within 5 % [L-09]) | {pct(gap)} | {v16} |\n"
    )
    if rep is not None:
        rep.claim("L-16", "LTRF on #6 vs Ideal, all", "almost equal (within 5 % [L-09])", pct(gap), v16)
    # L-09: "optimized LTRF" on the 8x, 6.3x slower DWM RF (#7): throughput and RF power over #1 + 16 KB, and
    # how close it comes to Ideal
    ipc9 = g("LTRFconf #7 tech")
    pw9 = g("LTRFconf #7 tech", "power_mw") / g("BL #1+16KB", "power_mw")
    gap9 = ipc9 / g("Ideal")
    ours9 = f"{pct(ipc9)}; RF power {pct(pw9)}; vs Ideal {pct(gap9)}"
    v9 = (
        f"{verdict(ipc9, 1.31)}; {verdict(pw9, 0.54)}; "
        f"{'within 5 %' if abs(gap9 - 1) <= 0.05 else 'more than 5 % apart'}"
    )
    lines.append(
        f"| L-09 | LTRFconf on #7 (DWM), all: IPC; RF power; vs Ideal | +31 %; -46 %; within 5 % "
        f"| {ours9} | {v9} |\n"
    )
    if rep is not None:
        rep.claim(
            "L-09",
            "LTRFconf on #7 (DWM), all: IPC; RF power; vs Ideal",
            "+31 %; -46 %; within 5 %",
            ours9,
            v9,
        )
    add(
        "L-15",
        "LTRF on #1's main RF vs BL #1: RF area",
        "+16 %",
        g("LTRF #1", "area_mm2") / g("BL #1", "area_mm2"),
        1.16,
    )
    add(
        "L-15",
        "LTRF on #1's main RF vs BL #1: RF power (mean)",
        "-23 %",
        g("LTRF #1", "power_mw") / g("BL #1", "power_mw"),
        0.77,
    )
    add("L-17", "LTRFconf vs LTRF on #6", "+3.8 %", g("LTRFconf #6 tech") / g("LTRF #6 tech"), 1.038)
    add("L-17", "LTRFconf vs LTRF on #7", "+4.8 %", g("LTRFconf #7 tech") / g("LTRF #7 tech"), 1.048)
    area7 = g("BL #7 tech", "area_mm2") / g("BL #1", "area_mm2")
    add("L-18", "RF area of #7 vs #1 (BL)", "-75 %", area7, 0.25)
    order = [g(f"{d} #6 tech", ins) for d in ("BL", "RFC", "LTRF")]
    ours19 = " / ".join(pct(g(f"{d} #6 tech", ins)) for d in DESIGNS)
    v19 = "same ordering" if order[0] < order[1] < order[2] else "ordering differs"
    lines.append(
        "| L-19 | register-insensitive on #6: BL / RFC / LTRF / LTRFconf | little loss under LTRF, more "
        f"under RFC | {ours19} | {v19} |\n"
    )
    if rep is not None:
        rep.claim(
            "L-19",
            "register-insensitive on #6: BL / RFC / LTRF / LTRFconf",
            "little loss under LTRF, more under RFC",
            ours19,
            v19,
        )
    head = "| claim | what | paper | here (simulator) | verdict |\n| --- | --- | --- | --- | --- |\n"
    return head + "".join(lines)


def warps_specs(sm, out: Path) -> dict:
    """A spec file of the SM with each warp count of :data:`WARPS` (CTAs of at most 32 x warps threads)."""
    from rfmodel.spec import dumps_spec

    specs = {}
    for w in WARPS:
        path = out / f"sm-{w}-warps.toml"
        s = (
            sm.replace(max_threads_per_cta=min(sm.max_threads_per_cta, 32 * w)).replace(warps_per_sm=w)
            if w < sm.warps_per_sm
            else sm.replace(warps_per_sm=w)
        )
        write_text(path, dumps_spec(s))
        specs[w] = str(path)
    return specs


def warps_sweep(ev: common.Evaluations, sm, out: Path, wls, pool: int, keeps: dict | None = None) -> str:
    """L-28: the share of its 1x IPC that BL and LTRF keep with a 6x slower main RF, per SM size."""
    specs = warps_specs(sm, out)
    slow = {"main_rf_latency_x": SWEEP_LATENCY_X}
    pts = [
        (d, w, specs[n], "simulate", {"active_warps": pool, **x})
        for d in ("baseline", "ltrf")
        for n in WARPS
        for w in wls
        for x in ({}, slow)
    ]
    ev.ensure(pts)
    rows = []
    for n in WARPS:
        keep, fits = {}, 0
        for d in ("baseline", "ltrf"):
            vals = []
            for w in wls:
                one = ev.get(d, w, specs[n], "simulate", {"active_warps": pool})["ipc"]
                six = ev.get(d, w, specs[n], "simulate", {"active_warps": pool, **slow})["ipc"]
                if one and six:
                    vals.append(six / one)
            keep[d], fits = geomean(vals), len(vals)
        if keeps is not None:
            keeps[n] = keep
        rows.append(
            f"| {n} | {fits} | {fmt(keep['baseline'], '.2f')} | {fmt(keep['ltrf'], '.2f')} "
            f"| {fmt(keep['ltrf'] - keep['baseline'], '+.2f')} |\n"
        )
    return (
        f"L-28 (Figure 20: LTRF's tolerance advantage over BL grows as warps per SM fall; 64 -> 128 changes "
        f"little): IPC at {SWEEP_LATENCY_X:g}x main-RF latency over IPC at 1x, geometric mean over the "
        f"workloads that fit, {pool} active warps per scheduler.\n\n"
        "| warps per SM | workloads that fit | BL keeps | LTRF keeps | LTRF - BL |\n"
        "| --- | --- | --- | --- | --- |\n" + "".join(rows)
    )


def warps_claim(rep: Report, keeps: dict) -> None:
    """L-28's row: LTRF's advantage over BL in the share of 1x IPC kept at the slow main RF, per SM size (the
    paper: it grows as warps per SM fall, and 64 -> 128 warps changes little)."""
    adv = [keeps[n]["ltrf"] - keeps[n]["baseline"] for n in WARPS]
    if any(x != x for x in adv):
        return
    falls = all(a >= b for a, b in zip(adv, adv[1:], strict=False))
    sat = abs(adv[-1] - adv[-2]) <= 0.05
    rep.claim(
        "L-28",
        f"LTRF's advantage over BL in IPC kept at {SWEEP_LATENCY_X:g}x, warps per SM "
        + " / ".join(map(str, WARPS)),
        "grows as warps fall; 64 -> 128 changes little",
        " / ".join(fmt(x, "+.2f") for x in adv),
        f"{'same ordering' if falls else 'ordering differs'}; "
        f"{'within 5 %' if sat else 'more than 5 % apart'} (64 -> 128 warps)",
    )


def categories(workloads) -> dict:
    """The workloads split by the register-sensitive class as measured (:func:`common.measured_classes`)."""
    out = {"register-sensitive": [], "register-insensitive": []}
    for w in workloads:
        sens = "register-sensitive" in common.measured_classes(w)
        out["register-sensitive" if sens else "register-insensitive"].append(w)
    return out


#: ``--quick``: a register-sensitive and a register-insensitive workload
QUICK_WORKLOADS = ("gemm_micro8x8", "saxpy")


def build_parser(prog: str):
    quick = common.quick_help(QUICK_WORKLOADS, then=": a smoke run")
    ap = common.study_parser(
        prog, __doc__, out="studies/out/ltrf_capacity", jobs=2, quick=quick, gpu=common.LTRF_GPU, paper="ltrf"
    )
    engines = ["simulate", "analytic"]
    common.add_names_option(
        ap, "--methods", engines, kind="engine", metavar="ENGINE", help="simulate, analytic (default: both)"
    )
    ap.add_argument(
        "--active-warps", type=common.positive_int, default=8, help="active warps per SM (paper: 8)"
    )
    return ap


def run_study(a, argv, *, prog: str, study: str = "ltrf") -> int:
    sm = resolve_gpu(a.gpu)
    wls = common.study_workloads(a, QUICK_WORKLOADS)
    common.check_inputs(wls)
    pool = max(1, -(-a.active_warps // sm.schedulers_per_sm))
    pts = points(sm, pool)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ev = common.Evaluations(out / "runs.jsonl", a.jobs)
    todo = [(d, w, a.gpu, m, p) for m in a.methods for (d, p, _c, _t) in pts.values() for w in wls]
    progress(
        study,
        f"{len(todo)} evaluations ({len(pts)} points x {len(wls)} workloads x {len(a.methods)} engines)",
    )
    # the simulator first: the analytic engine's profiles are cheap next to it, and its runs are the study
    for m in a.methods:
        progress(study, f"engine {m}")
        ev.ensure([t for t in todo if t[3] == m])

    def r(label, w, m):
        d, p, _c, _t = pts[label]
        return ev.get(d, w, a.gpu, m, p)

    def ratios(label, ref, ws, m):
        """IPC of ``label`` over IPC of ``ref``, per workload of ``ws``."""
        return [r(label, w, m)["ipc"] / r(ref, w, m)["ipc"] for w in ws]

    cats = {"all": list(wls), **categories(wls)}
    method = a.methods[0]
    rows = []
    sens = cats["register-sensitive"]
    for label, (d, _p, cfg, timing) in pts.items():
        row = {"point": label, "design": d, "config": cfg, "timing": timing}
        for cname, ws in cats.items():
            row[f"ipc_{cname}"] = geomean(ratios(label, "BL #1+16KB", ws, method))
        vs256 = ratios(label, "BL #1", sens, method) or [float("nan")]
        row["ipc_vs_256kb_all"] = geomean(ratios(label, "BL #1", list(wls), method))
        row["ipc_vs_256kb_sensitive"] = geomean(vs256)
        row["ipc_vs_256kb_min"], row["ipc_vs_256kb_max"] = min(vs256), max(vs256)
        one = [r(label, w, method) for w in wls]
        row["read_cycles"] = one[0].get("main_rf_read_cycles")
        row["write_cycles"] = one[0].get("main_rf_write_cycles")
        row["warps"] = mean([x["warps"] for x in one])
        row["area_mm2"] = one[0].get("area_mm2_total")
        row["power_mw"] = mean([x.get("power_mw") for x in one])
        if "analytic" in a.methods and "simulate" in a.methods:
            errs = [abs(r(label, w, "analytic")["ipc"] / r(label, w, "simulate")["ipc"] - 1) for w in wls]
            row["analytic_ipc_mape"] = mean(errs)
            row["analytic_ipc_all"] = geomean(ratios(label, "BL #1+16KB", wls, "analytic"))
        key = (label.split(" ")[0], cfg if cfg.startswith("#6") or cfg.startswith("#7") else "")
        row["paper"] = PAPER.get(key, "") if timing in ("", "tech") else ""
        rows.append(row)

    keys = [
        "method",
        "design",
        "workload",
        "params",
        "ipc",
        "warps",
        "cycles",
        "main_rf_read_cycles",
        "main_rf_write_cycles",
        "bank_conflict_stall_cycles",
        "slow_bank_wait_cycles",
        "rf_cache_hit_rate",
        "main_rf_reads",
        "main_rf_writes",
        "prefetches",
        "power_mw",
        "area_mm2_total",
        "seconds",
    ]
    common.write_csv(out / "points.csv", [ev.get(*t) for t in todo], keys, extrasaction="ignore")
    common.write_csv(out / "summary.csv", rows)

    area1 = next(x["area_mm2"] for x in rows if x["point"] == "BL #1")
    head = (
        "| point | main RF | read / write cycles | warps (mean) | IPC all | register-sensitive "
        "| register-insensitive | analytic: IPC all / error | RF area vs #1 | RF power (mean) | paper |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
    )
    body = ""
    for x in rows:
        main_rf = x["config"] + (f", {x['timing']} latency" if x["timing"] else "")
        body += (
            f"| {x['point'].split(' ')[0]} | {main_rf} | {fmt(x['read_cycles'], '.0f')} / "
            f"{fmt(x['write_cycles'], '.0f')} | {fmt(x['warps'], '.1f')} | {pct(x['ipc_all'])} "
            f"| {pct(x['ipc_register-sensitive'])} | {pct(x['ipc_register-insensitive'])} "
            f"| {pct(x.get('analytic_ipc_all'))} / {fmt(x.get('analytic_ipc_mape'), '.0f', ' %', 100)} "
            f"| {fmt(x['area_mm2'] / area1 if x['area_mm2'] else None, '.2f', 'x')} "
            f"| {fmt(x['power_mw'], '.0f', ' mW')} | {x['paper']} |\n"
        )
    f3 = {x["point"]: x for x in rows}
    ideal, bl6, bl6t = f3["Ideal"], f3["BL #6 tech"], f3["BL #6 Table 2"]
    fig3_line = (
        f"Against plain #1 (256 KB, Figure 3's reference), register-sensitive workloads: Ideal "
        f"{pct(ideal['ipc_vs_256kb_sensitive'])} (per workload {pct(ideal['ipc_vs_256kb_min'])} "
        f"to {pct(ideal['ipc_vs_256kb_max'])}; paper +37 %, +10 to +95 % [L-05]); BL on #6 TFET "
        f"{pct(bl6['ipc_vs_256kb_sensitive'])} with the technology's timing, "
        f"{pct(bl6t['ipc_vs_256kb_sensitive'])} at Table 2's 5.3x (paper: a loss overall [L-06]); all "
        f"workloads, BL #6 tech {pct(bl6['ipc_all'] / f3['BL #1']['ipc_all'])}.\n"
    )
    cmd = common.command_line(prog, argv)
    note = (
        f"GPU `{a.gpu}`, {common.suite_words(a, wls)}: {len(sens)} measured register-sensitive "
        f"({', '.join(sens) or 'none'}), "
        f"{len(cats['register-insensitive'])} register-insensitive, {a.active_warps} active warps per SM, "
        f"rfmodel {__version__}. IPC columns: {method} engine, geometric mean over workloads of "
        f"IPC / BL on #1 + 16 KB (272 KB) as a change; 8x configurations are {CAPACITY_X}x the registers in "
        f"{BANKS_X}x the banks (16 KB each); read / write cycles are one main-RF bank access at the SM "
        f"clock; RF area and power from the technology layer (the Table 2 latency rows keep SRAM costs). "
        f"Produced by `{cmd}`.\n"
    )
    title = f"A larger, slower main RF on `{a.gpu}` (LTRF paper, Table 2 configurations)"
    rep = Report(out, study, cmd, title=title)
    rep.describe(
        GPU=a.gpu,
        designs=list(pts),
        workloads=wls,
        engines=a.methods,
        **{"active warps": f"{a.active_warps} per SM"},
    )
    table = head + body + "\n" + claims_table(f3, rep)
    keeps: dict = {}
    if "simulate" in a.methods:
        progress(study, "warps per SM sweep (Figure 20)")
        fig3_line += "\n" + warps_sweep(ev, sm, out, wls, pool, keeps)
        warps_claim(rep, keeps)
    common.publish(note + "\n" + table + "\n" + fig3_line, a, mark=MARK, section=SECTION, title=title)
    progress(study, "figures and data")
    shown = ["Ideal", *(f"{d} #6 tech" for d in DESIGNS), *(f"{d} #7 tech" for d in DESIGNS if d != "BL")]
    rep.bars(
        "ipc.png",
        f"IPC over BL on #1 + 16 KB per workload ({method} engine; Figure 14; geometric mean last)",
        wls,
        {s: ratios(s, "BL #1+16KB", wls, method) for s in shown},
        ylabel="IPC / BL #1+16KB",
    )
    if keeps:
        rep.lines(
            "warps.png",
            f"IPC at {SWEEP_LATENCY_X:g}x main-RF latency over IPC at 1x against warps per SM (Figure 20)",
            WARPS,
            {"BL": [keeps[n]["baseline"] for n in WARPS], "LTRF": [keeps[n]["ltrf"] for n in WARPS]},
            xlabel="warps per SM",
            ylabel=f"IPC {SWEEP_LATENCY_X:g}x / IPC 1x",
            ref=None,
            xlog=True,
        )
    rep.data(
        [{**r(label, w, m), "point": label} for m in a.methods for label in pts for w in wls],
        ["method", "point", "workload"],
    )
    rep.section("Summary", note + "\n" + table + "\n" + fig3_line)
    rep.write()
    return 0
