"""The register-caching designs side by side on the cycle simulator (LTRF and Malekeh papers).

For BL (the baseline RF), RFC, LTRF, LTRF+, LTRFconf, strands, Malekeh, BOW and the compiler-managed
operand reuse cache, on the paper's benchmarks (``--suite papers``, the default: for the LTRF paper's SM the
papers' kernels of the CUDA SDK, Rodinia and Parboil, for Malekeh's configuration those of Rodinia and
DeepBench) or the built-in workloads (``--suite builtin``):

* IPC normalized to the baseline at main-RF latency 1x, with the main RF at 1x, 3x and 6x
  (geometric mean over workloads; "Enabling High-Capacity, Latency-Tolerant, and Highly-Concurrent
  GPU Register Files via Software/Hardware Cooperation", Figures 14-15);
* the maximum tolerable main-RF latency: the largest multiple whose IPC stays within 5 % of the
  baseline at 1x, per workload, then averaged (that paper's definition, section 7.2);
* RF-cache (or collector-cache) hit rate, main-RF accesses relative to the baseline's RF accesses,
  prefetches and their bank conflicts, register-interval lengths (that paper's Table 4);

next to the papers' own figures.  Every simulation result is kept in ``OUT/runs.jsonl`` (one line per
run, keyed by design, workload, GPU, latency and a hash of the package's source), so an interrupted study
resumes without redoing finished runs.  Outputs: the report folder (``OUT/report.md``, figures,
``OUT/runs.csv`` and ``OUT/runs.nc``: every run), ``OUT/summary.csv`` and ``OUT/summary.md`` (the table),
and, with ``--docs``, the table in ``docs/validation.md`` between the ``caching-designs`` markers.

    rfmodel study caching --jobs 2          # the whole study (or: python studies/caching_designs.py --jobs 2)
    rfmodel study malekeh --jobs 2          # Malekeh's configuration: turing-rtx2060, its four designs
    rfmodel study caching --quick           # 4 workloads, 8 warps: a smoke run
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from rfmodel.designs.base import get_design
from rfmodel.evaluate import evaluate, resolve_gpu
from rfmodel.runner import ResultLog, make_runner
from rfmodel.studies.common import (
    LTRF_GPU,
    RF_CACHE_SCALARS,
    SIM_SOURCE,
    above_one,
    add_names_option,
    check_inputs,
    command_line,
    fmt,
    geomean,
    loss_share,
    mean,
    median,
    positive_float,
    positive_int,
    publish,
    quick_help,
    structure_total,
    study_parser,
    study_workloads,
    suite_words,
    verdict,
    write_csv,
)
from rfmodel.studies.report import Report, progress
from rfmodel.tolerance import bisect_tolerance
from rfmodel.version import __version__

DESIGNS = ("baseline", "rfc", "ltrf", "ltrf_plus", "ltrfconf", "strands", "malekeh", "bow", "reuse_cache")
LABELS = {
    "baseline": "BL",
    "baseline_pool": "BL (pool of 8 per scheduler)",
    "rfc": "RFC",
    "ltrf": "LTRF",
    "ltrf_plus": "LTRF+",
    "ltrfconf": "LTRFconf",
    "strands": "strands",
    "malekeh": "Malekeh",
    "bow": "BOW",
    "reuse_cache": "reuse cache",
}
#: the papers' figures (claim IDs of the reference digest in brackets)
PAPER = {
    "baseline": "",
    "baseline_pool": "the reference of the designs without a two-level pool of their own",
    "rfc": "tolerates 2.1x [L-20]; 16 KB HW cache hits 8-30 % [L-07]",
    "ltrf": "tolerates 5.3x [L-20]; main-RF accesses 4-6x fewer [L-11]; intervals 31.2 real / 34.7 optimal "
    "instrs [L-26]; 23 % conflict-free prefetches at N=16 [L-21]",
    "ltrf_plus": "(liveness: fewer write-backs and fetches than LTRF)",
    "ltrfconf": "tolerates 6.9x [L-20]; 88 % conflict-free prefetches at N=16 [L-22]",
    "strands": "LTRF(strand) tolerates 3x; SHRF about 2x [L-27]",
    "malekeh": "hit ratio 48.5 % (13-77 %) [M-04]; IPC +9.6 % [M-02] (Turing RTX 2060 config)",
    "bow": "hit ratio 28.1 % below Malekeh's [M-05]; Malekeh +5.4 % IPC over BOW [M-03]",
    "reuse_cache": "(shipping hardware since Maxwell; not in the seed papers)",
}
#: the papers' figures as numbers, for the claim table: (claim, design, what, paper's text, value, no-change
#: value, the row's key); a range is (low, high)
#: Malekeh's IPC in the paper over the baseline (M-02, Fig. 6) and over BOW (M-03, section 9.1)
MALEKEH_PAPER_IPC = {"baseline": 1.096, "bow": 1.054}
CLAIMS = (
    ("L-20", "rfc", "tolerable main-RF latency", "2.1x", 2.1, 1.0, "tolerable_latency_x"),
    ("L-20", "ltrf", "tolerable main-RF latency", "5.3x", 5.3, 1.0, "tolerable_latency_x"),
    ("L-20", "ltrfconf", "tolerable main-RF latency", "6.9x", 6.9, 1.0, "tolerable_latency_x"),
    ("L-27", "strands", "tolerable main-RF latency", "3x", 3.0, 1.0, "tolerable_latency_x"),
    ("L-07", "rfc", "RF-cache hit rate", "8-30 %", (0.08, 0.30), 0.0, "hit_rate"),
    (
        "L-11",
        "ltrf",
        "main-RF accesses / BL RF accesses",
        "4-6x fewer",
        (1 / 6, 1 / 4),
        1.0,
        "main_rf_accesses_vs_bl",
    ),
    (
        "L-10",
        "ltrf",
        "prefetches with a main-RF bank conflict",
        "about 60 % (register-insensitive), 80 % (sensitive)",
        0.60,
        0.0,
        "conflicted_prefetch",
    ),
    ("L-21", "ltrf", "conflict-free prefetches", "23 % (N=16)", 0.23, 0.0, "conflict_free_prefetch"),
    ("L-22", "ltrfconf", "conflict-free prefetches", "88 % (N=16)", 0.88, 0.0, "conflict_free_prefetch"),
    (
        "L-26",
        "ltrf",
        "register-interval length (dynamic instructions)",
        "31.2",
        31.2,
        0.0,
        "interval_dynamic",
    ),
    ("M-04", "malekeh", "collector-cache hit rate", "48.5 % (13-77 %)", 0.485, 0.0, "hit_rate"),
    (
        "M-02",
        "malekeh",
        "IPC over the baseline at 1x (Turing RTX 2060)",
        "+9.6 %",
        MALEKEH_PAPER_IPC["baseline"],
        1.0,
        "ipc_1x",
    ),
)
LATENCIES = (1.0, 3.0, 6.0)
METRICS = (
    "ipc",
    "cycles",
    "rf_reads",
    "rf_writes",
    *RF_CACHE_SCALARS,
    "interval_length_dynamic",
    "interval_length_static",
    "warp_activations",
    "warp_deactivations",
    "refetches",
    "main_rf_accesses",
)
MARK = "<!-- caching-designs {gpu}:{end} -->"
SECTION = "## Register-caching designs on the simulator"


#: study-only variants: name -> (design, parameters that replace the study's ones for that design)
VARIANTS = {"baseline_pool": ("baseline", {})}


def real_design(name: str) -> str:
    """The registered design of a study's name: a study-only variant's, or ``DESIGN@k=v,...``'s (a design
    with some of its parameters changed: :func:`variant`)."""
    return VARIANTS.get(name, (name.split("@")[0], None))[0]


def variant(design: str, **changed) -> str:
    """The name of ``design`` with the parameters ``changed`` (the sweeps of :func:`ltrf_sweeps`)."""
    return design + "@" + ",".join(f"{k}={v}" for k, v in sorted(changed.items()))


def variant_params(name: str) -> dict:
    """The parameters a ``DESIGN@k=v,...`` name changes (integers)."""
    _, _, tail = name.partition("@")
    return {k: int(v) for k, v in (kv.split("=") for kv in tail.split(",") if kv)}


def supports_latency(design: str) -> bool:
    return "main_rf_latency_x" in get_design(real_design(design)).parameters


def reference(design: str, sm) -> str:
    """The baseline a design is normalized to: with the same warp scheduler.  On a two-level SM the
    designs that set the active pool (``active_warps``) are compared with the baseline at the study's
    pool; the others (Malekeh, BOW, the reuse cache) run with the simulator's default pool of 8 warps
    per scheduler, so they are compared with the baseline at that pool (``baseline_pool``)."""
    if design in VARIANTS:
        return design
    if sm.scheduler != "two-level" or "active_warps" in get_design(real_design(design)).parameters:
        return "baseline"
    return "baseline_pool"


#: what a run keeps (in the key: a run kept before its cycles and stalls by reason were is redone)
KEEPS = 3


def run_key(design, workload, gpu, latency, max_warps, params) -> str:
    """A run's key: its inputs, what it keeps and the package's source hash (an edited model redoes it)."""
    return json.dumps(
        [design, workload, gpu, float(latency), max_warps, params, SIM_SOURCE, KEEPS], sort_keys=True
    )


def simulate_point(design: str, workload: str, gpu: str, latency: float, max_warps, params: dict) -> dict:
    """One simulation: the scalar metrics of ``design`` on ``workload`` at ``latency`` x main-RF latency."""
    params = {**params, **({"main_rf_latency_x": latency} if supports_latency(design) else {})}
    t0 = time.perf_counter()
    ds = evaluate(real_design(design), workload, gpu, method="simulate", params=params, max_warps=max_warps)
    out = {
        "design": design,
        "workload": workload,
        "gpu": gpu,
        "latency_x": latency,
        "max_warps": max_warps,
        "seconds": time.perf_counter() - t0,
    }
    # main-RF accesses: the events of the main register file's banks (``main_rf_bank`` behind a cache,
    # else ``rf_bank``), reads plus writes, in the unit of the baseline's ``rf_bank`` events
    main = "main_rf_bank" if "main_rf_bank" in ds["structure"].values else "rf_bank"
    acc = ds["structure_reads"].sel(structure=main) + ds["structure_writes"].sel(structure=main)
    out["main_rf_accesses"] = float(np.asarray(acc.values).ravel()[0])
    out["main_rf_bank_reads"] = float(np.asarray(ds["structure_reads"].sel(structure=main).values).ravel()[0])
    # the register file's dynamic energy: every structure the design charges (banks, crossbar, collectors or
    # collector caches, RF caches, the main network, control blocks)
    out["rf_dynamic_pj"] = float(np.asarray(ds["dynamic_energy_pj"].sum("structure").values).ravel()[0])
    for m in METRICS:
        if m in ds and m != "main_rf_accesses":
            v = float(np.asarray(ds[m].values).ravel()[0])
            out[m] = None if math.isnan(v) else v
    # the schedulers' stalled cycles by reason (what a design's loss is made of)
    for reason in ds["stall_reason"].values:
        out[f"stall_{reason}"] = float(
            np.asarray(ds["stall_cycles"].sel(stall_reason=reason).values).ravel()[0]
        )
    return out


def _simulate_job(job: tuple) -> dict:
    """One run of :func:`simulate_point` (a job of :mod:`rfmodel.runner`)."""
    return simulate_point(*job)


class Runs:
    """The study's simulations on a :mod:`rfmodel.runner` runner, cached one JSON line per run in ``path``
    (a later run with the same file skips what is done)."""

    def __init__(self, path: Path, gpu: str, max_warps, runner, design_params: dict):
        self.path, self.gpu, self.max_warps, self.params = path, gpu, max_warps, design_params
        self.log = ResultLog(path)
        self.runner = runner
        self.t0 = time.time()
        self.count = 0

    @property
    def done(self) -> dict[str, dict]:
        return self.log.done

    def key(self, design, workload, latency) -> str:
        return run_key(design, workload, self.gpu, latency, self.max_warps, self.design_params(design))

    def design_params(self, design) -> dict:
        if design in VARIANTS:
            return VARIANTS[design][1]
        return {**self.params.get(real_design(design), {}), **variant_params(design)}

    def get(self, design, workload, latency) -> dict:
        return self.log[self.key(design, workload, latency)]

    def has(self, design, workload, latency) -> bool:
        return self.key(design, workload, latency) in self.log

    def ensure(self, points: list[tuple[str, str, float]]) -> None:
        """Simulate the points not yet done (one batch on the runner), appending each to the log as it
        finishes."""
        todo = {
            self.key(d, w, x): (d, w, self.gpu, x, self.max_warps, self.design_params(d))
            for d, w, x in points
        }
        total, n = sum(k not in self.log for k in todo), 0
        if total:
            print(
                f"  {len(todo)} runs: {len(todo) - total} in {self.path.name}, {total} to run",
                file=sys.stderr,
            )
        for _, r in self.log.run(self.runner, _simulate_job, todo):
            self.count, n = self.count + 1, n + 1
            print(
                f"  [{n}/{total}] {r['design']} {r['workload']} {r['latency_x']:g}x  ipc={r['ipc']:.3f}  "
                f"({time.time() - self.t0:.0f} s)",
                file=sys.stderr,
            )


class _Needs(Exception):
    """A bisection step asks for a latency not simulated yet."""

    def __init__(self, x: float):
        super().__init__(x)
        self.x = x


def tolerable_all(runs: Runs, pairs, ref_ipc: dict, *, tol: float, hi: float, res: float) -> dict:
    """The largest tolerable latency multiple of every (design, workload) pair
    (:func:`rfmodel.tolerance.bisect_tolerance` on the cached runs), all pairs in rounds: each round replays
    every unfinished bisection on what is simulated until it asks for a new latency, then simulates those
    in one batch.  1x where even 1x loses more than ``tol`` (the search's floor), None for a design without a
    main-RF latency."""
    out = {p: None for p in pairs if not supports_latency(p[0])}
    todo = [p for p in pairs if supports_latency(p[0])]
    while todo:
        needed, left = [], []
        for d, w in todo:

            def ipc_at(x: float, d=d, w=w) -> float:
                if not runs.has(d, w, x):
                    raise _Needs(x)
                return runs.get(d, w, x)["ipc"]

            try:
                r = bisect_tolerance(ipc_at, ref_ipc[d, w], tol=tol, hi=hi, resolution=res)
            except _Needs as e:
                needed.append((d, w, e.x))
                left.append((d, w))
                continue
            # the simulator times a main-RF access in whole cycles of the 1-cycle baseline bank: report the
            # multiple that was simulated
            out[d, w] = 1.0 if r["latency_x"] is None else float(round(r["latency_x"]))
        runs.ensure(needed)
        todo = left
    return out


def malekeh_claims(rep: Report, runs: Runs, wls, ref: str, sm) -> None:
    """Malekeh's reads and energy against its reference baseline at 1x, per workload (M-06: reads that reach
    the RF banks, M-07: RF dynamic energy, mean of the per-workload savings; M-08: the largest and smallest
    saving), and its storage beside the baseline's collectors (M-09; the design's structures, not a run)."""
    from rfmodel.designs.malekeh import DEFAULTS as MALEKEH_DEFAULTS
    from rfmodel.evaluate import DEFAULT_TECH
    from rfmodel.tech.data import paper_tables

    m = {w: runs.get("malekeh", w, 1.0) for w in wls}
    b = {w: runs.get(ref, w, 1.0) for w in wls}

    def saving(key):
        return {w: 1.0 - m[w][key] / b[w][key] for w in wls if m[w].get(key) is not None and b[w].get(key)}

    def mean_saving(claim: str, what: str, paper: float, saved: dict) -> None:
        if saved:
            ours = mean(list(saved.values()))
            rep.claim(
                claim,
                f"Malekeh: {what} saved (mean over workloads)",
                f"{paper * 100:.1f} %",
                fmt(ours, ".1f", " %", 100),
                verdict(ours, paper, base=0.0),
            )

    reads, dyn = saving("main_rf_bank_reads"), saving("rf_dynamic_pj")
    mean_saving("M-06", "RF bank reads", 0.485, reads)
    mean_saving("M-07", "RF dynamic energy", 0.291, dyn)
    if dyn:
        hi, lo = max(dyn, key=dyn.get), min(dyn, key=dyn.get)
        rep.claim(
            "M-08",
            "Malekeh: largest; smallest RF dynamic energy saving",
            "47.5 % (rnn_bench_t2); 5.9 % (particlefilter_naive)",
            f"{fmt(dyn[hi], '.1f', ' %', 100)} ({hi}); {fmt(dyn[lo], '.1f', ' %', 100)} ({lo})",
            f"{verdict(dyn[hi], 0.475, base=0.0)}; {verdict(dyn[lo], 0.059, base=0.0)}",
        )
    # M-09: the cache table's control fields (tag, lock, hint, LRU bits per slot) of every CCU, and the area
    # the CCUs add over the baseline's collectors (their data slots beyond a collector's operands included)
    st = {s.name: s for s in get_design("malekeh").structures(sm, {}, DEFAULT_TECH)}
    base = {s.name: s for s in get_design("baseline").structures(sm, {}, DEFAULT_TECH)}

    t = paper_tables()["malekeh"]
    slots = int(MALEKEH_DEFAULTS["ct_entries"])
    ctrl = (
        (t["tag_bits"] + t["lock_bits"] + t["hint_bits"] + t["lru_bits"])
        * slots
        * float(np.max(st["ccu"].copies))
        / 8
    )
    added = (
        structure_total(st["ccu"], "area_mm2") - structure_total(base["collector"], "area_mm2")
    ) / structure_total(st["rf_bank"], "area_mm2")
    operands = int(np.max(base["collector"].capacity_bits) / 1024)  # a collector's warp registers
    rep.claim(
        "M-09",
        f"Malekeh's added storage per SM on {sm.name} (structures, not a run): control fields; "
        "area over the baseline's collectors / RF banks' area",
        "128 B; 0.04 %",
        f"{ctrl:g} B; {added:.2%} (the CCUs' {slots} data slots against a collector's {operands} operands)",
        f"{verdict(ctrl, 128.0, base=0.0)}; {verdict(added, 0.0004, base=0.0)}",
    )


#: the LTRF paper's narrower main-RF network (section 5.1): a quarter of the width, four cycles a register
NARROW = 4


def crossbar_claim(rep: Report, runs: Runs, wls, sm, counts: dict | None = None) -> None:
    """L-12 on the simulator.  The baseline's crossbar as one 1,024-bit port per bank (a warp register a
    cycle), carrying every operand read and result written once (the baseline's crossbar events): its busy
    share is those transfers over the run's cycles and ports, the most over the workloads and their mean;
    then LTRF's main-RF traffic over a network a quarter as wide (four cycles a register): its busy share at
    1x.  ``counts``: each workload's warp instructions (default: its simulated trace's; the run's cycles are
    those over its IPC)."""
    if counts is None:
        from rfmodel.evaluate import _simulation_input
        from rfmodel.workload.suite import DEFAULT_ARCH

        counts = {
            w: len(_simulation_input(w, sm, arch=DEFAULT_ARCH, seed=0, max_warps=runs.max_warps)[1].op)
            for w in wls
        }
    ports = sm.num_banks

    def busy(design, traffic):
        out = {}
        for w in wls:
            r = runs.get(design, w, 1.0)
            if r.get("ipc") and counts.get(w):
                out[w] = traffic(r) * r["ipc"] / (counts[w] * ports)
        return out

    base = busy("baseline", lambda r: (r.get("rf_reads") or 0.0) + (r.get("rf_writes") or 0.0))
    narrow = (
        busy("ltrf", lambda r: NARROW * (r.get("main_rf_accesses") or 0.0))
        if runs.has("ltrf", wls[0], 1.0)
        else {}
    )
    if not base:
        return
    top = max(base, key=base.__getitem__)
    parts = [
        f"{fmt(base[top], '.0f', ' %', 100)} ({top}), mean {fmt(mean(list(base.values())), '.0f', ' %', 100)}"
    ]
    v = ["within the paper's range" if base[top] <= 0.85 else "outside the paper's range"]
    if narrow:
        most = max(narrow, key=narrow.__getitem__)
        parts.append(
            f"LTRF on a {NARROW}x narrower main-RF network: {fmt(narrow[most], '.0f', ' %', 100)} "
            f"({most}), mean {fmt(mean(list(narrow.values())), '.0f', ' %', 100)}"
        )
        v.append("within the paper's range" if narrow[most] <= 1.0 else "outside the paper's range")
    rep.claim(
        "L-12",
        f"crossbar busy share (one 1,024-bit port per bank, {ports} ports; most, mean over workloads at 1x)",
        "at most 85 %; a 4x narrower main-RF network suffices for LTRF",
        "; ".join(parts),
        "; ".join(v),
    )


#: the cache table's sizes of Malekeh's sweep (M-10: 8 entries, more give diminishing returns)
CT_ENTRIES = (4, 8, 16)


def ct_sweep(rep: Report, runs: Runs, wls) -> None:
    """M-10 on the simulator: Malekeh's hit rate and IPC with 4, 8 (its default) and 16 cache-table entries
    per CCU at 1x; the paper's choice of 8 ("more than 8 slots provide diminishing returns", of the hit
    ratio) holds when 16 entries add fewer points of hit rate than 8 did over 4."""
    from rfmodel.designs.malekeh import DEFAULTS as MALEKEH_DEFAULTS

    default = int(MALEKEH_DEFAULTS["ct_entries"])
    names = {n: "malekeh" if n == default else variant("malekeh", ct_entries=n) for n in CT_ENTRIES}
    runs.ensure([(names[n], w, 1.0) for n in CT_ENTRIES if n != default for w in wls])
    hit = {n: mean([runs.get(names[n], w, 1.0).get("rf_cache_hit_rate") for w in wls]) for n in CT_ENTRIES}
    ipc = {n: [runs.get(names[n], w, 1.0)["ipc"] for w in wls] for n in CT_ENTRIES}
    lo, mid, hi = CT_ENTRIES

    def gain(a, b):
        return geomean([y / x for x, y in zip(ipc[a], ipc[b], strict=True) if x])

    first, second = gain(lo, mid), gain(mid, hi)
    rep.claim(
        "M-10",
        f"Malekeh, {lo} / {mid} / {hi} cache-table entries: hit rate; IPC {mid} over {lo}, {hi} over {mid}",
        "8 entries; more give diminishing returns",
        " / ".join(fmt(hit[n], ".1f", " %", 100) for n in CT_ENTRIES)
        + f"; {fmt(first - 1, '+.1f', ' %', 100)}, {fmt(second - 1, '+.1f', ' %', 100)}",
        "same ordering" if hit[hi] - hit[mid] < hit[mid] - hit[lo] else "ordering differs",
    )


#: readings of what the Malekeh paper leaves unstated (its section 3.2: the operand collector count, the bank
#: count, STHLD's deltas and thresholds), each a name -> {design: the parameters it changes} for the designs
#: it reruns (the others stand as in the study): the study's own reading is the preset (Accel-Sim's
#: SM75_RTX2060: 8 collector units, 8 banks) with the adaptive STHLD
READINGS = {
    "STHLD fixed at 0 (the allocator never waits)": {"malekeh": {"adaptive": 0, "sthld": 0}},
    "16 banks (Accel-Sim's SM75_RTX2060_S)": {d: {"num_banks": 16} for d in ("baseline", "malekeh", "bow")},
    "16 collector units (4 per sub-core)": {
        d: {"collector_units": 16} for d in ("baseline", "malekeh", "bow")
    },
}
#: the stall reasons of a warp bound to its collector-cache unit (`rfmodel.designs.malekeh.STALL_REASONS`)
CCU_STALLS = ("stall_ccu_busy", "stall_no_free_ccu", "stall_sthld_wait")


def malekeh_readings(runs: Runs, wls, ref: str) -> str:
    """Malekeh's IPC over the baseline and over BOW, its hit rate and the issue cycles its warps lose to
    their collector-cache units, under the study's reading and under each of :data:`READINGS` (M-02, M-03:
    which reading the evidence supports, judged by how close each comes to the paper's +9.6 % and +5.4 %)."""
    cases = {"as modelled (adaptive STHLD, 8 banks, 8 collector units)": {}, **READINGS}
    name = {
        (c, d): variant(d, **ch[d]) if d in ch else (ref if d == "baseline" else d)
        for c, ch in cases.items()
        for d in ("baseline", "malekeh", "bow")
    }
    runs.ensure(
        sorted({(name[c, d], w, 1.0) for c in cases for d in ("baseline", "malekeh", "bow") for w in wls})
    )
    lines = [
        "| reading | Malekeh IPC / baseline | Malekeh IPC / BOW | BOW IPC / baseline | hit rate "
        "| issue cycles lost to the CCUs |\n|---|---|---|---|---|---|\n"
    ]
    gaps = {}
    for c in cases:
        r = {d: [runs.get(name[c, d], w, 1.0) for w in wls] for d in ("baseline", "malekeh", "bow")}

        def over(a, b, r=r):
            return geomean([x["ipc"] / y["ipc"] for x, y in zip(r[a], r[b], strict=True) if y["ipc"]])

        m_b, m_w, w_b = over("malekeh", "baseline"), over("malekeh", "bow"), over("bow", "baseline")
        lost = mean(
            [sum(x.get(k) or 0.0 for k in CCU_STALLS) / x["cycles"] for x in r["malekeh"] if x.get("cycles")]
        )
        hit = mean([x.get("rf_cache_hit_rate") for x in r["malekeh"]])
        gaps[c] = abs(m_b - MALEKEH_PAPER_IPC["baseline"]) + abs(m_w - MALEKEH_PAPER_IPC["bow"])
        lines.append(
            f"| {c} | {fmt(m_b - 1, '+.1f', ' %', 100)} | {fmt(m_w - 1, '+.1f', ' %', 100)} "
            f"| {fmt(w_b - 1, '+.1f', ' %', 100)} | {fmt(hit, '.1f', ' %', 100)} | {fmt(lost, '.2f')} |\n"
        )
    best = min(gaps, key=gaps.get)
    return (
        "What the paper leaves unstated, read otherwise (its section 3.2 gives neither the collector units, "
        "the banks nor STHLD's deltas; the warp bound to its collector-cache unit waits while the unit holds "
        "its previous instruction in every reading): geometric means over the workloads at 1x; the issue "
        "cycles lost are the schedulers' cycles stalled on the collector-cache units (`ccu_busy`, "
        "`no_free_ccu`, `sthld_wait`) per cycle of Malekeh's run, the mean over workloads (several "
        "schedulers stall in one cycle). The paper: +9.6 % over the baseline, +5.4 % over BOW. "
        f"Closest to the paper: {best}.\n\n" + "".join(lines)
    )


#: the LTRF paper's sweeps (section 7.3-7.4): registers per interval (N; the design's default is 16) and
#: active warps per SM (the study's default 8) with the slowest main RF
INTERVAL_REGS, ACTIVE_WARPS, SLOW_X = (8, 32), (4, 16), 6.0
#: the paper's conflict-free shares of prefetches at N = 8 / 16 / 32 (L-21: LTRF, L-22: LTRFconf)
CONFLICT_FREE = {"ltrf": ("L-21", (0.58, 0.23, 0.094)), "ltrfconf": ("L-22", (0.95, 0.88, 0.24))}
#: IPC with 8 active warps over 4 at the slowest main RF (L-25)
EIGHT_OVER_FOUR = {"ltrf": 1.456, "ltrfconf": 1.274}


def ltrf_sweeps(rep: Report, runs: Runs, wls, sm, by: dict) -> str:
    """The LTRF paper's Figs. 16-18 on the simulator: the conflict-free share of prefetches at 8, 16 and 32
    registers per interval (1x; L-21, L-22), the IPC those keep at the slowest main RF (6x; L-24), and IPC
    with 4, 8 and 16 active warps per SM at 6x (L-25); runs of ``DESIGN@k=v`` variants, the study's own at
    N = 16 and 8 warps."""
    ds = ("ltrf", "ltrfconf")
    pool = {n: max(1, math.ceil(n / sm.schedulers_per_sm)) for n in ACTIVE_WARPS}
    runs.ensure(
        [
            (variant(d, regs_per_interval=n), w, x)
            for d in ds
            for n in INTERVAL_REGS
            for w in wls
            for x in (1.0, SLOW_X)
        ]
        + [(variant(d, active_warps=pool[n]), w, SLOW_X) for d in ds for n in ACTIVE_WARPS for w in wls]
    )

    def cf(d, n):
        name = d if n == 16 else variant(d, regs_per_interval=n)
        return mean([runs.get(name, w, 1.0).get("conflict_free_prefetch_fraction") for w in wls])

    def ipc(d, n):
        name = d if n == 8 else variant(d, active_warps=pool[n])
        return [runs.get(name, w, SLOW_X)["ipc"] for w in wls]

    def at(d, n, x):  # IPC per workload at N registers per interval and x main-RF latency
        name = d if n == 16 else variant(d, regs_per_interval=n)
        return [runs.get(name, w, x)["ipc"] for w in wls]

    def ratio(a, b):
        return geomean([y / x for x, y in zip(a, b, strict=True) if x])

    # L-24 (Fig. 17): at N = 8 LTRF loses most as the latency grows, and equals LTRFconf; more registers per
    # interval help LTRFconf
    keep = {(d, n): ratio(at(d, n, 1.0), at(d, n, SLOW_X)) for d in ds for n in (8, 16, 32)}
    eq8 = ratio(at("ltrfconf", 8, SLOW_X), at("ltrf", 8, SLOW_X))  # LTRF over LTRFconf
    conf32 = ratio(at("ltrfconf", 16, SLOW_X), at("ltrfconf", 32, SLOW_X))
    rep.claim(
        "L-24",
        f"IPC kept at {SLOW_X:g}x, N = 8 / 16 / 32: LTRF; LTRFconf; LTRF over LTRFconf at "
        f"N = 8; LTRFconf N = 32 over 16 at {SLOW_X:g}x",
        "N = 8 loses most; about equal; more registers help",
        " / ".join(fmt(keep["ltrf", n], ".2f") for n in (8, 16, 32))
        + "; "
        + " / ".join(fmt(keep["ltrfconf", n], ".2f") for n in (8, 16, 32))
        + f"; {fmt(eq8 - 1, '+.1f', ' %', 100)}; {fmt(conf32 - 1, '+.1f', ' %', 100)}",
        f"{'same ordering' if keep['ltrf', 8] < keep['ltrf', 16] else 'ordering differs'}; "
        f"{'within 5 %' if abs(eq8 - 1) <= 0.05 else 'more than 5 % apart'}; "
        f"{'same ordering' if conf32 > 1 else 'ordering differs'}",
    )
    lines = [
        "| design | conflict-free prefetches N = 8 / 16 / 32 | paper | IPC at 6x: 8 over 4 active "
        "warps; 16 over 8 | paper |\n| --- | --- | --- | --- | --- |\n"
    ]
    for d in ds:
        shares = [cf(d, n) for n in (8, 16, 32)]
        cid, paper = CONFLICT_FREE[d]
        ours = " / ".join(fmt(x, ".0f", " %", 100) for x in shares)
        rep.claim(
            cid,
            f"{LABELS[d]}: conflict-free prefetches at N = 8 / 16 / 32",
            " / ".join(fmt(x, ".0f" if x > 0.1 else ".1f", " %", 100) for x in paper),
            ours,
            "; ".join(verdict(x, p, base=0.0) for x, p in zip(shares, paper, strict=True)),
        )
        up = geomean([b / a for a, b in zip(ipc(d, 4), ipc(d, 8), strict=True) if a])
        more = geomean([b / a for a, b in zip(ipc(d, 8), ipc(d, 16), strict=True) if a])
        rep.claim(
            "L-25",
            f"{LABELS[d]}: IPC at {SLOW_X:g}x, 8 over 4 active warps; 16 over 8",
            f"{fmt(EIGHT_OVER_FOUR[d] - 1, '+.1f', ' %', 100)}; no significant gain",
            f"{fmt(up - 1, '+.1f', ' %', 100)}; {fmt(more - 1, '+.1f', ' %', 100)}",
            f"{verdict(up, EIGHT_OVER_FOUR[d])}; {verdict(more, 1.0)}",
        )
        lines.append(
            f"| {LABELS[d]} | {ours} | {' / '.join(fmt(x, '.1f', ' %', 100) for x in paper)} "
            f"| {fmt(up - 1, '+.1f', ' %', 100)}; {fmt(more - 1, '+.1f', ' %', 100)} "
            f"| {fmt(EIGHT_OVER_FOUR[d] - 1, '+.1f', ' %', 100)}; none |\n"
        )
    return (
        f"Geometric means over the workloads; active warps per SM {', '.join(map(str, ACTIVE_WARPS))} "
        f"and the study's 8 are the two-level scheduler's pool of {pool[ACTIVE_WARPS[0]]}, "
        f"{pool[ACTIVE_WARPS[1]]} and the study's per scheduler ({sm.schedulers_per_sm} schedulers).\n\n"
        + "".join(lines)
    )


QUICK_WORKLOADS = ("saxpy", "sgemm_tiled", "kmeans_assign", "spmv_csr")


def build_parser(prog: str):
    quick = quick_help(QUICK_WORKLOADS, then=", 8 warps: a smoke run")
    ap = study_parser(
        prog, __doc__, out="studies/out/caching_designs", jobs=2, quick=quick, gpu=LTRF_GPU, paper="ltrf"
    )
    add_names_option(
        ap,
        "--designs",
        DESIGNS,
        kind="design",
        metavar="DESIGN",
        help=f"designs (default: {' '.join(DESIGNS)})",
    )
    ap.add_argument(
        "--max-warps", type=positive_int, default=None, help="cap on the warps simulated (default: all)"
    )
    ap.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run the simulations on this Dask cluster")
    ap.add_argument(
        "--active-warps",
        type=int,
        default=8,
        help="active warps per SM of the two-level scheduler (LTRF paper: 8)",
    )
    ap.add_argument(
        "--tol", type=loss_share, default=0.05, help="IPC loss allowed by the tolerable-latency rule"
    )
    ap.add_argument("--hi", type=above_one, default=16.0, help="largest latency multiple searched")
    ap.add_argument(
        "--resolution", type=positive_float, default=1.0, help="bisection resolution (latency multiple)"
    )
    return ap


def run_study(a, argv, *, prog: str, study: str = "caching") -> int:
    wls = study_workloads(a, QUICK_WORKLOADS)
    if a.quick:
        a.max_warps = 8
    check_inputs(wls, a.gpu)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    designs = list(a.designs)
    sm = resolve_gpu(a.gpu)
    # the two-level scheduler's active pool, per scheduler: 8 active warps per SM as the LTRF paper's Table 3
    pool = max(1, math.ceil(a.active_warps / sm.schedulers_per_sm))
    dparams = {d: {"active_warps": pool} for d in designs if "active_warps" in get_design(d).parameters}
    refs = {d: reference(d, sm) for d in designs}
    if "baseline_pool" in refs.values() and "baseline_pool" not in designs:
        designs.insert(designs.index("baseline") + 1 if "baseline" in designs else 0, "baseline_pool")
        refs["baseline_pool"] = "baseline_pool"
    runs = Runs(out / "runs.jsonl", a.gpu, a.max_warps, make_runner(a.jobs, a.scheduler), dparams)

    # 1. every design at 1x / 3x / 6x (designs without a main-RF latency at 1x only)
    pts = [(d, w, x) for d in designs for w in wls for x in LATENCIES if x == 1.0 or supports_latency(d)]
    progress(
        study,
        f"latency sweep: {len(pts)} simulations ({len(designs)} designs x {len(wls)} workloads, "
        f"{', '.join(f'{x:g}x' for x in LATENCIES)} main-RF latency)",
    )
    runs.ensure(pts)
    # 2. the tolerable latency (bisection per design and workload, all pairs at once; reuses the sweep)
    ref = {(b, w): runs.get(b, w, 1.0)["ipc"] for b in set(refs.values()) for w in wls}
    pairs = [(d, w) for d in designs for w in wls]
    progress(study, "tolerable latency: bisection per design and workload (a batch of simulations a step)")
    tolx = tolerable_all(
        runs, pairs, {(d, w): ref[refs[d], w] for d, w in pairs}, tol=a.tol, hi=a.hi, res=a.resolution
    )

    rows = []
    for d in designs:
        rows.append(_design_row(runs, d, wls, refs, ref, tolx))

    write_csv(out / "summary.csv", rows)

    table = _summary_table(rows)
    pool_note = (
        f": with the two-level scheduler, RFC and the LTRF family set its pool to {pool} warps per "
        f"scheduler and are compared with BL at that pool, the others keep the simulator's default pool of "
        f"8 per scheduler and are compared with BL (pool of 8 per scheduler); main-RF accesses are "
        f"relative to the same reference"
        if "baseline_pool" in designs
        else ""
    )
    cmd = command_line(prog, argv)
    note = (
        f"GPU `{a.gpu}`, {suite_words(a, wls)}, "
        f"{'all resident warps' if a.max_warps is None else f'at most {a.max_warps} warps'}, rfmodel "
        f"{__version__}; IPC is the geometric mean over workloads of IPC / the reference "
        f"baseline's IPC at 1x "
        f"(the baseline with the same warp scheduler{pool_note}); the "
        f"tolerable latency is the mean over workloads of the largest multiple (bisection on [1, {a.hi:g}], "
        f"resolution {a.resolution:g}) with IPC loss <= {a.tol:.0%}; at 1x: hit rate and the shares of "
        f"prefetches are means over workloads, main-RF accesses (reads + writes of the main RF's banks, or "
        f"of the RF banks without an RF cache) a geometric mean of the ratio to the baseline's, interval "
        f"lengths (dynamic instructions per executed interval / static instructions per interval) medians. "
        f"Produced by `{cmd}`.\n"
    )
    publish(
        note + "\n" + table, a, mark=MARK, section=SECTION, title=f"Register-caching designs on `{a.gpu}`"
    )
    progress(study, "figures and data")
    rep = Report(out, study, cmd, title=f"Register-caching designs on `{a.gpu}`")
    rep.describe(
        GPU=a.gpu,
        designs=[LABELS.get(d, d) for d in designs],
        workloads=wls,
        warps="all resident" if a.max_warps is None else f"at most {a.max_warps}",
        **{"active warps": f"{a.active_warps} per SM (two-level designs)"},
    )
    by = {r["key"]: r for r in rows}
    _table_claims(rep, by)
    if "malekeh" in by:
        malekeh_claims(rep, runs, wls, refs["malekeh"], sm)
        ct_sweep(rep, runs, wls)
        if study == "malekeh" and "bow" in by:
            progress(study, "the readings of what the paper leaves unstated")
            rep.section(
                "Malekeh's unstated parameters, read otherwise",
                malekeh_readings(runs, wls, refs["malekeh"]),
            )
    if "baseline" in designs:
        crossbar_claim(rep, runs, wls, sm)
    if {"ltrf", "ltrfconf"} <= set(designs):
        rep.section(
            "Registers per interval and active warps (LTRF, LTRFconf)", ltrf_sweeps(rep, runs, wls, sm, by)
        )
    _figures(rep, runs, wls, designs, refs, ref, by)
    done = [
        r
        for r in runs.done.values()
        if r["workload"] in wls
        and r["design"] in designs
        and r.get("gpu") == a.gpu
        and r.get("max_warps") == a.max_warps
    ]
    rep.data(done, ["design", "workload", "latency_x"])
    rep.section("Summary", note + "\n" + table)
    rep.write()
    return 0


def _design_row(runs: Runs, d: str, wls, refs: dict, ref: dict, tolx: dict) -> dict:
    """The summary row of design ``d``: IPC over its reference baseline at each latency, the tolerable
    latency, and at 1x the hit rate, the main-RF accesses, the prefetches' shares and the intervals."""
    r1 = [runs.get(d, w, 1.0) for w in wls]
    norm = {
        x: geomean([runs.get(d, w, x)["ipc"] / ref[refs[d], w] for w in wls])
        if (x == 1.0 or supports_latency(d))
        else None
        for x in LATENCIES
    }
    hit = mean([r.get("rf_cache_hit_rate") for r in r1])
    base_acc = [runs.get(refs[d], w, 1.0)["main_rf_accesses"] for w in wls]
    main = geomean([r["main_rf_accesses"] / b for r, b in zip(r1, base_acc, strict=True) if b > 0])
    tl = [tolx[(d, w)] for w in wls]
    return {
        "design": LABELS.get(d, d),
        "key": d,
        "reference": LABELS.get(refs[d], refs[d]),
        "ipc_1x": norm[1.0],
        "ipc_3x": norm[3.0],
        "ipc_6x": norm[6.0],
        "tolerable_latency_x": mean(tl) if any(t is not None for t in tl) else None,
        "hit_rate": hit,
        "main_rf_accesses_vs_bl": main,
        "conflict_free_prefetch": mean([r.get("conflict_free_prefetch_fraction") for r in r1]),
        "conflicted_prefetch": mean(
            [
                None
                if r.get("conflict_free_prefetch_fraction") is None
                else 1.0 - r["conflict_free_prefetch_fraction"]
                for r in r1
            ]
        ),
        "interval_dynamic": median([r.get("interval_length_dynamic") for r in r1]),
        "interval_static": median([r.get("interval_length_static") for r in r1]),
        "refetch_share": mean(
            [(r.get("refetches") or 0) / r["prefetches"] if r.get("prefetches") else None for r in r1]
        ),
        "paper": PAPER.get(d, ""),
    }


def _summary_table(rows: list[dict]) -> str:
    """The summary table (markdown): a row per design, with the papers' figures."""
    head = (
        "| design | IPC 1x | IPC 3x | IPC 6x | tolerable latency | hit rate "
        "| main-RF accesses / BL RF accesses "
        "| conflict-free prefetches | refetches after re-activation "
        "| interval length dyn / static | papers |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
    )
    body = "".join(
        f"| {r['design']} | {fmt(r['ipc_1x'])} | {fmt(r['ipc_3x'])} | {fmt(r['ipc_6x'])} "
        f"| {fmt(r['tolerable_latency_x'], '.1f', 'x')} | {fmt(r['hit_rate'], '.1f', ' %', 100)} "
        f"| {fmt(r['main_rf_accesses_vs_bl'])} | {fmt(r['conflict_free_prefetch'], '.0f', ' %', 100)} "
        f"| {fmt(r['refetch_share'], '.0f', ' %', 100)} "
        f"| {fmt(r['interval_dynamic'], '.1f')} / {fmt(r['interval_static'], '.1f')} | {r['paper']} |\n"
        for r in rows
    )
    return head + body


def _table_claims(rep: Report, by: dict) -> None:
    """The claims of the papers' figures (CLAIMS) on the summary rows, and Malekeh's against BOW's (M-05,
    M-03) when both ran."""
    for cid, d, what, paper, value, base, key in CLAIMS:
        if d in by:
            ours = by[d][key]
            if key in ("hit_rate", "conflict_free_prefetch", "conflicted_prefetch"):
                text = fmt(ours, ".1f", " %", 100)
            elif key == "ipc_1x":
                text = fmt(None if ours is None else ours - 1, "+.1f", " %", 100)
            elif key == "tolerable_latency_x":  # a mean over workloads: 3.25x, not rounded to 3.2x
                text = fmt(ours, ".3g", "x")
            else:
                text = fmt(ours, ".1f")
            if isinstance(value, tuple):
                inside = ours is not None and value[0] <= ours <= value[1]
                v = (
                    "n/a"
                    if ours is None or ours != ours
                    else ("within the paper's range" if inside else "outside the paper's range")
                )
            else:
                v = verdict(ours, value, base=base)
            rep.claim(cid, f"{LABELS.get(d, d)}: {what}", paper, text, v)
    if "malekeh" in by and "bow" in by:
        m, b = by["malekeh"], by["bow"]
        rep.claim(
            "M-05",
            "BOW's hit rate below Malekeh's",
            "28.1 points",
            fmt((m["hit_rate"] or 0) - (b["hit_rate"] or 0), ".1f", " points", 100),
            verdict((m["hit_rate"] or 0) - (b["hit_rate"] or 0), 0.281, base=0.0),
        )
        over = m["ipc_1x"] / b["ipc_1x"]
        rep.claim(
            "M-03",
            "Malekeh's IPC over BOW's at 1x",
            "+5.4 %",
            fmt(over - 1, "+.1f", " %", 100),
            verdict(over, MALEKEH_PAPER_IPC["bow"]),
        )


def _figures(rep: Report, runs: Runs, wls, designs, refs: dict, ref: dict, by: dict) -> None:
    """The figures: IPC per workload at 1x, IPC against the main-RF latency, and the RF-cache hit rate per
    workload."""
    shown = [d for d in designs if d not in VARIANTS and d != "baseline"]
    rep.bars(
        "ipc_1x.png",
        "IPC over the reference baseline per workload at 1x main-RF latency (geometric mean last)",
        wls,
        {LABELS.get(d, d): [runs.get(d, w, 1.0)["ipc"] / ref[refs[d], w] for w in wls] for d in shown},
        ylabel="IPC / baseline",
    )
    lat = [d for d in designs if supports_latency(d) and d not in VARIANTS]
    if lat:
        rep.lines(
            "ipc_vs_latency.png",
            "IPC over the baseline at 1x against the main RF's latency multiple "
            "(geometric mean over workloads; the LTRF paper's Figures 14-15)",
            LATENCIES,
            {LABELS.get(d, d): [by[d][f"ipc_{x:g}x"] for x in LATENCIES] for d in lat},
            xlabel="main-RF latency (x the baseline's)",
            ylabel="IPC / baseline at 1x",
        )
    if any(by[d]["hit_rate"] == by[d]["hit_rate"] for d in shown):
        rep.bars(
            "hit_rate.png",
            "RF-cache (collector-cache) hit rate per workload at 1x",
            wls,
            {
                LABELS.get(d, d): [runs.get(d, w, 1.0).get("rf_cache_hit_rate") for w in wls]
                for d in shown
                if by[d]["hit_rate"] == by[d]["hit_rate"]
            },
            ylabel="hit rate",
            ref=None,
            mean="mean",
        )
