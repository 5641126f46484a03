"""The analytic engine: workload profiles, one design's model over a grid, and its Dataset.

:func:`evaluate_analytic` is the one entry point below :func:`rfmodel.evaluate` that the façade, the
Monte-Carlo engine (:mod:`rfmodel.analytic.montecarlo`) and, through :func:`run_analytic`, the calibration
use.  It receives a design *object* (the layers above resolve names), so nothing here names a design.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field, replace

import numpy as np

from rfmodel.analytic.calibration import PREFIX, SPEED_SCALE_KEY, calibrated_grid_entries, calibration_data
from rfmodel.analytic.model import ANCHOR_KEY, AnalyticContext, Anchor, l2_sets, resident_warps
from rfmodel.analytic.profile import (
    CacheGeometry,
    WorkloadProfile,
    l1d_load_hit_rate,
    l1d_stream,
    profile_tables,
    profile_trace,
    registered_table_group,
    stream_hit_tables,
    trace_groups,
    trace_load_terms,
)
from rfmodel.analytic.stream import _schedule, issue_schedule
from rfmodel.cache import (
    PROFILE_SOURCES,
    keyed_entry,
    note_first_compile,
    read_entry,
    shipped_entry,
    source_hash,
    write_entry,
)
from rfmodel.errors import SpecError
from rfmodel.ir import OpClass
from rfmodel.results import assemble
from rfmodel.setassoc import SET_INDEX
from rfmodel.spec import SMSpec
from rfmodel.spec.occupancy import (
    U_MEM,
    carved_l1d,
    class_initiations,
    not_modelled,
    unit_slots,
    units_of_classes,
)
from rfmodel.spec.sm import OP_CLASS_NAMES
from rfmodel.version import __version__
from rfmodel.workload.sass.opcodes import classed_by_name
from rfmodel.workload.static import static_kernel
from rfmodel.workload.suite import (
    DEFAULT_ARCH,
    SYNTHETIC_PREFIX,
    Workload,
    kernel_names,
    load_workload,
    split_trace_prefix,
    trace_source_of,
)


def memory_latencies(sm: SMSpec, hit_rate: float) -> np.ndarray:
    """Dependent-issue latency of every op class, loads at their expected latency."""
    lat = np.array([getattr(sm.latency, c)[0] for c in OP_CLASS_NAMES], dtype=np.float64)
    miss = sm.l2_hit_latency_cycles + 0.5 * sm.dram_latency_cycles
    l1 = hit_rate * sm.l1d.hit_latency_cycles + (1.0 - hit_rate) * miss
    for c in (OpClass.LD_GLOBAL, OpClass.LD_LOCAL, OpClass.ATOMIC):
        lat[c] += l1
    lat[OpClass.LD_SHARED] += sm.smem_latency_cycles
    lat[OpClass.LD_CONST] += sm.l1d.hit_latency_cycles
    return lat


def exec_latencies(sm: SMSpec) -> np.ndarray:
    """Dependent-issue latency of every op class without the L1D/L2/DRAM part of global loads."""
    lat = memory_latencies(sm, 1.0)
    for c in (OpClass.LD_GLOBAL, OpClass.LD_LOCAL, OpClass.ATOMIC):
        lat[c] -= sm.l1d.hit_latency_cycles
    return lat


def issue_resources(sm: SMSpec) -> dict:
    """The SM's issue resources as the profile's list schedules see them (``profile_trace(sched=...)``):
    schedulers, issue width, and per op class the initiation interval and execution unit (the
    simulator's class-to-unit map; memory classes share the SM's one load/store unit)."""
    return {
        "schedulers": sm.schedulers_per_sm,
        "issue_width": sm.issue_width,
        "initiation": [max(int(v), 1) for v in class_initiations(sm)],
        "unit": [int(u) for u in units_of_classes(sm)],
        "slots": [int(x) for x in unit_slots(sm)],
        "lsu_unit": U_MEM,
    }


_SM_KEYS: dict = {}


def _sm_key(sm: SMSpec) -> str:
    """A digest of the SM's fields (remembered per spec object: specs are frozen)."""
    hit = _SM_KEYS.get(id(sm))
    if hit is not None and hit[0] is sm:
        return hit[1]
    key = hashlib.sha1(json.dumps(sm.to_dict(), sort_keys=True, default=str).encode()).hexdigest()[:16]
    if len(_SM_KEYS) >= 64:
        _SM_KEYS.clear()
    _SM_KEYS[id(sm)] = (sm, key)
    return key


_PROFILE_CACHE: dict = {}


#: warps expanded per workload for the analytic profile (whole CTAs; at least one CTA)
PROFILE_WARPS = 32


def _file_digest(name: str) -> str | None:
    """What keys a workload reference's results beyond its name: the contents of the files it reads
    (:func:`~rfmodel.workload.suite.reference_digest`), or None for one that names no file."""
    from rfmodel.workload.suite import reference_digest

    return reference_digest(name)


#: the largest SM share (warp instructions) whose whole schedule gives a scaled profile's ``sched_ipc``;
#: a larger one keeps the sampled warps' (:func:`anchor_factor` then compares at the sample)
SCHED_SHARE_INSTRS = 4_000_000

#: warp schedulers the schedule of :mod:`rfmodel.analytic.stream` follows; under another (two-level) the
#: L1D order comes from its loose round-robin and no design is anchored on its pace
SCHEDULED_POLICIES = ("gto", "lrr", "oldest")


def memory_pipeline(trace, sm: SMSpec) -> dict:
    """The SM as the schedule of the L1D's access order sees it (:func:`rfmodel.analytic.stream.issue_rank`):
    the CTAs of ``trace`` it holds at once (occupancy rules), its issue resources
    (:func:`issue_resources`), the execution latencies, the L1D and L2 slice as the simulator builds
    them (whole sets), the MSHRs, DRAM's cycles per line, and the memory pipeline's places: per scheduler
    its issue buffer, its dispatch register and its share of the collector units that take memory
    instructions, for the SM the sum."""
    wpc = max(1, -(-int(trace.threads_per_cta) // sm.threads_per_warp))
    warps = resident_warps(trace, sm, {})  # the trace carries the occupancy inputs a profile does
    S = sm.schedulers_per_sm
    mem_coll = sm.collectors.mem + sm.collectors.gen
    line = sm.l1d.line_bytes
    return {
        **issue_resources(sm),
        "resident_ctas": int(warps) // wpc,
        "policy": sm.scheduler if sm.scheduler in SCHEDULED_POLICIES else "lrr",
        "latency": exec_latencies(sm).tolist(),
        "l1_sets": sm.l1d.sets if sm.l1d.size_bytes else 0,
        "l1_ways": sm.l1d.assoc,
        "l1_hit_latency": sm.l1d.hit_latency_cycles,
        "l1_bypass": bool(sm.l1d.bypass_global),
        "l1_reserve": bool(sm.l1d.allocate_on_miss),
        "l1_walloc": bool(sm.l1d.write_allocate),
        "l1_index": SET_INDEX[sm.l1d.set_index],
        "l2_sets": l2_sets(sm),
        "l2_ways": sm.l2_ways,
        "l2_hit_latency": sm.l2_hit_latency_cycles,
        "dram_latency": sm.dram_latency_cycles,
        "line_cycles": line / sm.mem_bw_bytes_per_cycle,
        "mshr": sm.l1d.mshr_entries,
        "queue_sched": 2 + -(-mem_coll // S),
        "queue_sm": 2 * S + mem_coll,
        "queue_collectors": mem_coll,
        "pipe": 3.0,
    }


#: the expanded traces and stream orders that profile sources rebuilt lately (a design reads several table
#: groups of one workload in a row; each rebuild costs a load and a schedule)
_SOURCE_TRACES: OrderedDict = OrderedDict()
_SOURCE_TRACES_KEEP = 2


@dataclass(eq=False)
class ProfileSource:
    """Builds the table groups (:data:`rfmodel.analytic.profile.TABLE_GROUPS`) that only some designs read,
    for a profile that :func:`workload_profile` built without them (:meth:`WorkloadProfile.need`): the
    workload's trace again, its stream order, and the latencies the profile was built with.  The groups it
    builds are also set on ``profile`` (the cached profile) and its disk entry is rewritten with them.
    Picklable: a worker process rebuilds from the workload's name (or the Workload itself)."""

    workload: object
    sm: SMSpec
    arch: str
    seed: int
    max_warps: int | None
    latencies: np.ndarray
    exec_latencies: np.ndarray
    caches: list
    l1_hit_latency: float
    stored: object = None
    profile: WorkloadProfile | None = field(default=None, repr=False)
    unsaved: bool = field(default=False, repr=False)  # tables built since the disk entry was written
    occupancy: dict = field(default_factory=dict, repr=False)  # occupancy_ipc's answers by CTA count

    def _kept(self) -> dict:
        """The trace, order and loads' latency terms this source builds from (kept for the last few)."""
        key = id(self)
        hit = _SOURCE_TRACES.get(key)
        if hit is not None and hit["source"] is self:
            _SOURCE_TRACES.move_to_end(key)
            return hit
        wl = load_workload(
            self.workload,
            arch=self.arch,
            num_sms=self.sm.num_sms,
            seed=self.seed,
            max_warps=self.max_warps,
            line_bytes=self.sm.l1d.line_bytes,
        )
        scheduled = issue_schedule(wl.trace, memory_pipeline(wl.trace, self.sm))
        return self.keep(wl.trace, None if scheduled is None else scheduled[0])

    def _trace_and_rank(self):
        hit = self._kept()
        return hit["trace"], hit["rank"]

    def keep(self, trace, rank) -> dict:
        """Remember the trace and order this source builds from (the last few sources' only; the loads'
        latency terms are added when a table first needs them)."""
        entry = {"source": self, "trace": trace, "rank": rank, "load_terms": None}
        _SOURCE_TRACES[id(self)] = entry
        while len(_SOURCE_TRACES) > _SOURCE_TRACES_KEEP:
            _SOURCE_TRACES.popitem(last=False)
        return entry

    def __call__(self, group: str, cells: np.ndarray | None = None, persist: bool = True) -> dict:
        """The fields of table ``group``; with ``cells``, only those cells (``sched``: of ``sched_cpi``; a
        cell-wise group's, :meth:`WorkloadProfile.need_cells`).
        They are set on the cached profile, whose disk entry is rewritten now or, without ``persist``, at
        the next :meth:`persist`."""
        if group in trace_groups():
            hit = self._kept()
            if hit["load_terms"] is None and group in ("chain2", "sched"):
                hit["load_terms"] = trace_load_terms(
                    hit["trace"], hit["rank"], self.caches, self.l1_hit_latency
                )
            out = profile_tables(
                hit["trace"],
                (group,),
                self.latencies,
                self.exec_latencies,
                self.caches,
                hit["rank"],
                self.l1_hit_latency,
                load_terms=hit["load_terms"],
                sched=issue_resources(self.sm),
                cells=cells,
                group_inputs=group_inputs(self, (group,)),
            )
        else:
            out = {"sched_l1": self._l1_schedules()}
        if self.profile is not None:
            if cells is not None and group == "sched":
                self.profile.fill_sched(out["sched_cpi"], cells)
            elif cells is not None:  # a cell-wise group's cells (WorkloadProfile.need_cells)
                self.profile.fill_cells(group, out, cells)
            else:
                self.profile.set_fields(out)
            self.unsaved = True
            if persist:
                self.persist()
        return out

    def persist(self) -> None:
        """Rewrite the cached profile's disk entry if a table was built since the last write."""
        if self.unsaved and self.profile is not None:
            self.unsaved = False
            write_entry(self.stored, self.profile)

    def occupancy_ipc(self, ctas: int) -> float:
        """IPC of the profile's schedule (the trace :meth:`_l1_schedules` takes) with ``ctas`` CTAs resident
        at once instead of the SM's occupancy (NaN without a schedule).  Each answer is kept in the profile's
        ``sched_ctas`` table and its disk entry, so another process asks no schedule for it again."""
        memo = self.occupancy
        if ctas in memo:
            return memo[ctas]
        prof = self.profile
        known = None if prof is None else prof.sched_ctas
        if known is not None:
            for c, ipc in known:
                memo.setdefault(int(c), float(ipc))
            if ctas in memo:
                return memo[ctas]
        memo[ctas] = float("nan")
        if prof is not None and prof.sched_ipc is not None and self.sm.scheduler in SCHEDULED_POLICIES:
            trace = self._anchor_trace()
            p = {**memory_pipeline(trace, self.sm), "resident_ctas": int(ctas)}
            done = issue_schedule(trace, p)
            if done is not None and done[1] > 0:
                memo[ctas] = float(trace.n_instrs) / done[1]
        if prof is not None:
            row = np.array([[float(ctas), memo[ctas]]])
            object.__setattr__(prof, "sched_ctas", row if known is None else np.concatenate([known, row]))
            self.unsaved = True
            self.persist()
        return memo[ctas]

    def _anchor_trace(self):
        """The trace the profile's ``sched_ipc`` came from: the SM's whole share where it did, else the
        sampled warps."""
        if self.profile is not None and self.profile.attrs.get("sched_share"):
            return load_workload(
                self.workload,
                arch=self.arch,
                num_sms=self.sm.num_sms,
                seed=self.seed,
                max_warps=None,
                line_bytes=self.sm.l1d.line_bytes,
            ).trace
        return self._trace_and_rank()[0]

    def _l1_schedules(self) -> np.ndarray:
        """``[k, 2]``: (L1D bytes, IPC) of the profile's schedule (the whole share where ``sched_ipc`` came
        from it, else the sampled warps) on the SM with its L1D ``L1_ANCHOR_SCALES`` times as large (whole
        sets only)."""
        prof = self.profile
        if prof is None or prof.sched_ipc is None or self.sm.scheduler not in SCHEDULED_POLICIES:
            return np.zeros((0, 2))
        trace = self._anchor_trace()
        rows = []
        l1 = self.sm.l1d
        for k in L1_ANCHOR_SCALES:
            lines = int(l1.size_bytes * k) // l1.line_bytes
            if lines and (lines < l1.assoc or lines % l1.assoc or int(l1.size_bytes * k) % l1.line_bytes):
                continue  # not whole sets (a 64-way L1D an eighth its size)
            sm = l1d_sized(self.sm, l1.size_bytes * k)
            done = issue_schedule(trace, memory_pipeline(trace, sm))
            if done is not None and done[1] > 0:
                rows.append((float(sm.l1d.size_bytes), float(trace.n_instrs) / done[1]))
        return np.array(rows, dtype=np.float64).reshape(-1, 2)


#: L1D sizes, as multiples of the SM's, at which the profile's schedule also runs (``sched_l1``): smaller ones
#: for designs whose L1D hits less than the SM's, larger ones for those that give it more capacity; 0: no
#: L1D (a unified memory whose registers take it all), whose loads go to the L2 slice at once
L1_ANCHOR_SCALES = (0, 0.125, 0.25, 0.5, 2, 4, 8)


def group_inputs(source: ProfileSource, groups) -> dict:
    """The SM's ``inputs`` of each registered table group among ``groups`` that takes them
    (:class:`~rfmodel.analytic.profile.TableGroup`'s ``sm_inputs``), from the engine's ``source`` of a
    profile it keeps (none without one)."""
    out = {}
    for g in groups:
        group = registered_table_group(g)
        if group is not None and group.sm_inputs is not None and source.profile is not None:
            out[g] = group.sm_inputs(source)
    return out


def l1d_sized(sm: SMSpec, size_bytes) -> SMSpec:
    """``sm`` with an L1D of ``size_bytes`` (the sets scaled; ways, line size and latency the same)."""
    if int(size_bytes) == sm.l1d.size_bytes:
        return sm
    return replace(sm, l1d=replace(sm.l1d, size_bytes=int(size_bytes)))


def workload_profile(
    workload,
    sm: SMSpec,
    *,
    arch: str = DEFAULT_ARCH,
    seed: int = 0,
    max_warps: int | None = PROFILE_WARPS,
    share: bool = True,
) -> WorkloadProfile:
    """The analytic profile of a workload on an SM (cached per workload, SM and seed; built-in and
    synthetic workloads also on disk, :mod:`rfmodel.cache`).

    The distributions come from the first ``max_warps`` warps of the SM's share
    of the grid (``None``: all of them); with ``share`` the instruction count is
    scaled to the whole share and occupancy sees every CTA of the share, without
    it the profile describes exactly the expanded warps (what ``simulate`` runs with
    the same ``max_warps``; calibration compares like with like).
    """
    name = workload.name if isinstance(workload, Workload) else str(workload)
    content = _file_digest(name) if not isinstance(workload, Workload) else None
    key = (name, arch, seed, max_warps, _sm_key(sm), share)
    if key in _PROFILE_CACHE and not isinstance(workload, Workload) and _PROFILE_CACHE[key][0] == content:
        return _PROFILE_CACHE[key][1]
    lines = max(sm.l1d.size_bytes // sm.l1d.line_bytes, 1)
    # the SM's L1D and L2 slice, simulated on the line stream as the simulator builds and indexes them
    caches = [
        CacheGeometry(
            lines, sm.l1d.assoc, sm.l1d.write_allocate, SET_INDEX[sm.l1d.set_index], sm.l1d.line_bytes
        ),
        CacheGeometry(max(l2_sets(sm), 1) * sm.l2_ways, sm.l2_ways),
    ]

    def attach(prof: WorkloadProfile, stored) -> WorkloadProfile:
        """``prof`` with the source of the table groups it lacks (built on first use)."""
        src = ProfileSource(
            workload,
            sm,
            arch,
            seed,
            max_warps,
            np.asarray(prof.attrs["latencies"]),
            exec_latencies(sm),
            caches,
            float(sm.l1d.hit_latency_cycles),
            stored,
        )
        prof = replace(prof, source=src)
        src.profile = prof
        return prof

    stored = None
    builtin = split_trace_prefix(name)[0] in kernel_names()
    if not isinstance(workload, Workload) and (
        builtin or name.startswith(SYNTHETIC_PREFIX) or content is not None
    ):
        # built-in and synthetic workloads are named by what generates them, files by their content
        stored = keyed_entry("profiles", [*key, content, source_hash(*PROFILE_SOURCES)], ".npz")
        prof = read_entry(stored, WorkloadProfile.load)
        if prof is None:  # one the package ships (the default run's): the cache takes a copy and extends it
            prof = read_entry(shipped_entry(stored), WorkloadProfile.load)
            if prof is not None:
                write_entry(stored, prof)
        if prof is not None:
            prof = attach(prof, stored)
            _PROFILE_CACHE[key] = (content, prof)
            return prof
    wl = load_workload(
        workload, arch=arch, num_sms=sm.num_sms, seed=seed, max_warps=max_warps, line_bytes=sm.l1d.line_bytes
    )
    # a profile to build: on a first run after an install its builders compile first, a silent wait else
    # (said once the workload is read, so that a workload refused gets its one error line alone)
    note_first_compile(_schedule, "the analytic engine's profile builders", "about half a minute")
    pipe = memory_pipeline(wl.trace, sm)
    scheduled = issue_schedule(wl.trace, pipe, stats=True)
    order = {"rank": None if scheduled is None else scheduled[0]}
    # the loads' L1D hit rate sets the expected load latency of the profile's tables
    hit = l1d_load_hit_rate(wl.trace, order["rank"], caches[0]) if sm.l1d.size_bytes else 0.0
    if hit is None:  # not whole sets: the stack-distance estimate of a first, light profile
        first = profile_trace(
            wl.trace,
            memory_latencies(sm, 1.0),
            name=wl.name,
            light=True,
            caches=caches[:1],
            **order,
            tables=(),
        )
        hit = float(first.l1d_hit_rate(lines, sm.l1d.assoc, loads=True, write_allocate=sm.l1d.write_allocate))
    prof = profile_trace(
        wl.trace,
        memory_latencies(sm, hit),
        name=wl.name,
        exec_latencies=exec_latencies(sm),
        sched=issue_resources(sm),
        caches=caches,
        **order,
        l1_hit_latency=sm.l1d.hit_latency_cycles,
        tables=(),  # the groups only some designs read: built on first use (ProfileSource)
        kernel=static_kernel(wl.trace, wl.kernel),
    )
    named = {"opcodes_classed_by_name": classed} if (classed := classed_by_name(wl.kernel)) else {}
    prof = replace(prof, attrs={**prof.attrs, "trace_source": trace_source_of(wl), **named})
    if scheduled is not None and scheduled[1] > 0 and sm.scheduler in SCHEDULED_POLICIES:
        prof = replace(
            prof, sched_ipc=float(wl.trace.n_instrs) / scheduled[1], sched_lsu=_lsu_waits(scheduled[2], pipe)
        )
    n_share = int(wl.attrs.get("ctas_per_sm", wl.trace.ctas))
    if share and n_share > wl.trace.ctas:
        scale = n_share / wl.trace.ctas
        prof = replace(
            prof,
            n_instrs=int(round(prof.n_instrs * scale)),
            ctas=n_share,
            attrs={**prof.attrs, "sampled_instrs": prof.n_instrs, "sampled_ctas": wl.trace.ctas},
        )
        if prof.sched_ipc is not None and prof.n_instrs <= SCHED_SHARE_INSTRS:
            # the anchor's pace from the SM's whole share (its later waves and tail included), as simulated
            whole = load_workload(
                workload,
                arch=arch,
                num_sms=sm.num_sms,
                seed=seed,
                max_warps=None,
                line_bytes=sm.l1d.line_bytes,
            )
            pipe = memory_pipeline(whole.trace, sm)
            done = issue_schedule(whole.trace, pipe, stats=True)
            if done is not None and done[1] > 0:
                # and the L1D's and L2 slice's hit tables from the whole share's stream in that order: the
                # sampled warps' stream holds fewer distinct lines between two uses than the share's
                line_no, _, is_load = l1d_stream(whole.trace, done[0])
                prof = replace(
                    prof,
                    sched_ipc=float(whole.trace.n_instrs) / done[1],
                    sched_lsu=_lsu_waits(done[2], pipe),
                    **stream_hit_tables(line_no, is_load, caches),
                    attrs={**prof.attrs, "sched_share": True},
                )
    prof = attach(prof, stored)
    prof.source.keep(wl.trace, order["rank"])
    _PROFILE_CACHE[key] = (content, prof)
    write_entry(stored, prof)
    return prof


def _lsu_waits(stats: dict, pipe: dict) -> np.ndarray:
    """``WorkloadProfile.sched_lsu`` from :func:`issue_schedule`'s ``stats`` on the SM ``pipe``
    (:func:`memory_pipeline`): the load/store unit's queue in collectors (its share of the queue's places:
    the issue buffers and dispatch registers hold the rest) and its busy share."""
    share = pipe["queue_collectors"] / max(pipe["queue_sm"], 1)
    return np.array([stats["lsu_queue"] * share, stats["lsu_busy"]], dtype=np.float64)


def resolve_calibration(design, sm: SMSpec, calibration, reference=None) -> tuple[dict, str]:
    """Grid entries of the calibrated coefficients and the ``calibration`` attribute text; a design without
    an entry takes the anchor design's (``reference``) shared coefficients
    (:func:`~rfmodel.analytic.calibration.calibrated_grid_entries`)."""
    if calibration is False:
        return {}, "uncalibrated: design defaults (calibration=False)"
    return calibrated_grid_entries(design, sm.name, calibration_data(calibration), fallback=reference)


def run_analytic(design, profile, sm, grid: dict, anchor: float | Anchor = 1.0) -> dict:
    """``design.analytic(ctx)`` on one profile with the shared SM model anchored by ``anchor``
    (:func:`anchor_factor`: the model's IPC multiplied, its cycles divided, before the design's own terms
    use them; an :class:`Anchor` also follows a design's own L1D hit rate), and the grid's
    ``calib.ipc_factor`` applied to the result's IPC and cycles (the carrier of the analytic model's own
    error in Monte-Carlo runs; 1 otherwise), raised to the grid's ``calib.ipc_factor_scale`` at the point's
    bank read cycles where it has one (a unit lognormal draw ``exp(Z)`` becomes ``exp(sd Z)``, the model's
    error scale at that speed of the banks: :class:`rfmodel.analytic.montecarlo.BankSpeedScale`).  Every
    path that runs a design's analytic model goes through here."""
    if anchor != 1.0:
        grid = {**grid, ANCHOR_KEY: anchor}
    m = design.analytic(AnalyticContext(profile, sm, grid, design.calibration_params, design.default_params))
    f = grid.get(PREFIX + "ipc_factor")
    if f is None:
        return m
    f = np.asarray(f, dtype=np.float64)
    scale = grid.get(PREFIX + SPEED_SCALE_KEY)
    if scale is not None:
        f = f ** scale.at(m.get("main_rf_read_cycles", 1.0))
    out = {**m, "ipc": m["ipc"] * f, "cycles": m["cycles"] / f}
    if "collector_occupancy" in m:  # the instructions collecting at once follow the pace
        out["collector_occupancy"] = np.minimum(m["collector_occupancy"] * f, 1.0)
    return out


def anchor_factor(reference, profile, sm, grid: dict) -> float:
    """The anchor of every design's analytic IPC on ``profile``: the factor on the shared SM model's
    bounds that the schedule of the SM's issue and memory pipeline measures (every one but the banks' and
    collectors', :meth:`AnalyticContext.model`) under which the ``reference`` design (the baseline) at its
    defaults on the same profile and SM, with its coefficients ``grid`` (``calib.*`` entries) and its banks
    and collectors out of the way, runs at that schedule's IPC (:attr:`WorkloadProfile.sched_ipc`), both on
    the profiled warps (a profile scaled to the SM's share is compared at its sampled instructions and
    CTAs, the schedule's); :func:`_solve_anchor`.  The shared SM model's error on the workload, which the
    schedule measures where the pipeline is the baseline's, cancels, and the design's analytic terms give
    its difference from the baseline (docs/models.md, "Anchor").  1 without a schedule or a reference."""
    if reference is None or profile.sched_ipc is None or not np.isfinite(profile.sched_ipc):
        return 1.0
    a = _solve_anchor(lambda f: _reference_run(reference, profile, sm, grid, anchor=f)[0], profile.sched_ipc)
    return a if np.isfinite(a) else 1.0


#: at most this many steps of :func:`_solve_anchor` after its first guess (each one more reference run)
ANCHOR_STEPS = 8
#: :func:`_solve_anchor` stops when the reference's IPC is this close to the target (relative)
ANCHOR_TOL = 1e-4


def _solve_anchor(run, target: float) -> float:
    """The factor ``a`` at which the reference's anchored IPC ``run(a)`` is ``target`` (the schedule's).
    The anchor scales the schedule's bounds inside the interval model's fixed point, whose queues (DRAM, the
    interconnect's ports) then run at the anchored pace, so ``run(a)`` grows slower than ``a`` where they
    bind (saxpy on volta-v100: ``run`` 0.268 at 1 and 0.288 at 1.17).  First ``a = target / run(1)``, then
    secant steps on ``log a`` (a ratio step where the slope is not positive) until ``run(a)`` is within
    :data:`ANCHOR_TOL` of the target or :data:`ANCHOR_STEPS` steps.  NaN where the reference has no
    answer."""
    target = float(target)
    x0, y0 = 0.0, run(1.0)  # log a, run(a)
    if not (np.isfinite(y0) and y0 > 0.0):
        return float("nan")
    x1 = np.log(target / y0)
    for _ in range(ANCHOR_STEPS):
        y1 = run(float(np.exp(x1)))
        if not (np.isfinite(y1) and y1 > 0.0):
            return float("nan")
        if abs(y1 / target - 1.0) <= ANCHOR_TOL:
            break
        slope = (np.log(y1) - np.log(y0)) / (x1 - x0) if x1 != x0 else 0.0
        step = np.log(target / y1) / (slope if np.isfinite(slope) and slope > 0.05 else 1.0)
        x0, y0, x1 = x1, y1, x1 + float(np.clip(step, -2.0, 2.0))
    return float(np.exp(x1))


#: anchor factors computed, by (reference design, profile, SM, the reference's coefficients): a profile's
#: factor does not change from call to call (an optimizer's generations ask for the same ones again); each
#: entry keeps its profile, so that the profile's id is not reused while the entry lives
_ANCHORS: dict = {}
_ANCHORS_MAX = 4096


def _remembered(kind: str, compute, reference, profile, sm, grid: dict):
    """``compute(reference, profile, sm, grid)``, remembered for the same ``kind``, reference, profile
    object, SM and scalar coefficients (anything else, e.g. coefficients drawn per sample, is computed each
    time)."""
    if reference is None:
        return compute(reference, profile, sm, grid)
    try:
        key = (kind, reference.name, id(profile), sm, tuple(sorted((k, float(v)) for k, v in grid.items())))
        hash(key)
    except (TypeError, ValueError):
        return compute(reference, profile, sm, grid)
    hit = _ANCHORS.get(key)
    if hit is not None and hit[0] is profile:
        return hit[1]
    value = compute(reference, profile, sm, grid)
    if len(_ANCHORS) >= _ANCHORS_MAX:
        _ANCHORS.clear()
    _ANCHORS[key] = (profile, value)
    return value


def cached_anchor_factor(reference, profile, sm, grid: dict) -> float:
    """:func:`anchor_factor`, remembered (:func:`_remembered`)."""
    return _remembered("factor", anchor_factor, reference, profile, sm, grid)


#: the register banks and operand collectors of the anchor's reference run: what the schedule leaves out
#: (it has no banks or collection), taken as a pipeline where they cost nothing (many banks and collector
#: units, unlimited collector ports), so the anchor depends on no bank or collector field and such a field
#: moves the answer alike whether the SM spec sets it or a grid does
UNSCHEDULED_GRID = {"num_banks": 512, "collector_units": 512, "bank_rw_ports": 1, "bank_read_ports": 0}
UNSCHEDULED_SM = {
    "bank_rw_ports": 1,
    "bank_read_ports": 0,
    "bank_write_ports": 0,
    "collector_read_ports": 0,
    "bank_mapping": "gpgpusim",
}


def _unscheduled(sm: SMSpec) -> SMSpec:
    """``sm`` with :data:`UNSCHEDULED_SM` and the grid's bank count where its register file divides into it
    (what reads the SM's own bank count, the main RF's bank size, then sees the reference's banks too)."""
    try:
        return sm.replace(**UNSCHEDULED_SM, num_banks=UNSCHEDULED_GRID["num_banks"])
    except SpecError:
        return sm.replace(**UNSCHEDULED_SM)


def _reference_run(
    reference, profile, sm, grid: dict, occupancy: dict | None = None, anchor: float = 1.0
) -> tuple[float, float]:
    """(IPC, L1D hit rate) of the ``reference`` design at its defaults with the ``calib.*`` entries of
    ``grid``, on the warps the profile's schedule ran (a profile scaled to the SM's share whose schedule ran
    only the sampled warps is taken at its sampled instructions and CTAs: like with like), with the SM's
    banks and collectors as the schedule has them (:data:`UNSCHEDULED_GRID`: none in the way); ``occupancy``:
    grid entries that set its occupancy (:func:`occupancy_factor`); ``anchor``: the factor it runs under
    (:func:`_solve_anchor`)."""
    if "sampled_ctas" in profile.attrs and not profile.attrs.get("sched_share"):
        profile = replace(
            profile, n_instrs=int(profile.attrs["sampled_instrs"]), ctas=int(profile.attrs["sampled_ctas"])
        )
    skip = (PREFIX + "ipc_factor", PREFIX + SPEED_SCALE_KEY, ANCHOR_KEY)
    coef = {k: v for k, v in grid.items() if k.startswith(PREFIX) and k not in skip}
    own = {ANCHOR_KEY: float(anchor)} if anchor != 1.0 else {}
    m = run_analytic(
        reference, profile, _unscheduled(sm), {**coef, **UNSCHEDULED_GRID, **(occupancy or {}), **own}
    )
    return tuple(float(np.asarray(m[k], dtype=np.float64).ravel()[0]) for k in ("ipc", "l1d_hit_rate"))


def anchor_curve(
    reference, profile, sm, grid: dict, write_allocate: bool = True
) -> tuple[np.ndarray, np.ndarray, float]:
    """The anchor as a function of the L1D hit rate: at the SM's own L1D, :func:`anchor_factor`; at the
    other L1D sizes of the profile's ``sched_l1`` (smaller, larger), the factor solved the same way for
    that schedule's IPC and the ``reference`` design at its defaults on the same profile with that L1D (at
    the shared model's hit rate there, from the stack distances). Returns the hit rates (increasing), the
    factors, and the factor without an L1D (loads straight to the L2 slice; NaN if the schedule did not
    run without one), kept apart: a small L1D that misses is another regime than none (its sets wait for
    their fills), so no factor is interpolated between them. Empty without a schedule. A design whose L1D
    differs from the SM's is anchored at its own hit rate (:class:`Anchor`): the shared model's error
    moves with the hit rate (docs/models.md, "Anchor"). Without ``write_allocate`` the hit rates are those
    each size would have under a design's own store policy that takes no line at a store miss (the
    Cache-Emulated RF's): its rate then finds the size it matches, where the write-allocating rates would
    place it lower."""
    empty = (np.zeros(0), np.zeros(0), float("nan"))
    if reference is None or profile.sched_ipc is None or not profile.has("l1_anchor"):
        return empty
    rows = profile.need("l1_anchor").sched_l1
    if not len(rows):
        return empty
    points = []
    zero = float("nan")
    for size, ipc_s in ((sm.l1d.size_bytes, float(profile.sched_ipc)), *rows):
        sized = l1d_sized(sm, size)
        seen = []  # the reference's L1D hit rate (the anchor does not move it)

        def run(a, s=sized, seen=seen):
            ipc, h = _reference_run(reference, profile, s, grid, anchor=a)
            seen.append(h)
            return ipc

        f = _solve_anchor(run, ipc_s)
        hit = seen[0]
        lines = sized.l1d.size_bytes // sized.l1d.line_bytes
        if not write_allocate and lines > 0:
            hit = float(profile.l1d_hit_rate(lines, sized.l1d.assoc, write_allocate=False))
        if np.isfinite(f) and np.isfinite(hit):
            if size > 0:
                points.append((hit, f))
            else:
                zero = f
    points.sort()
    hits, factors = [], []
    for h, f in points:  # increasing hit rates for the interpolation
        if not hits or h > hits[-1] + 1e-9:
            hits.append(h)
            factors.append(f)
    hits, factors = np.array(hits), np.array(factors)
    hits.flags.writeable = factors.flags.writeable = False  # remembered and shared between calls
    return hits, factors, zero


def occupancy_factor(reference, profile, sm, grid: dict, ctas: int) -> float:
    """The anchor at ``ctas`` resident CTAs (a grid point whose registers or warp slots give an occupancy
    other than the SM's): the profile's schedule with that many CTAs at once over the ``reference``
    design's analytic IPC at its defaults with as many (:func:`anchor_factor` otherwise; NaN where the
    schedule or the reference has no answer)."""
    source = getattr(profile, "source", None)
    if reference is None or not isinstance(source, ProfileSource):
        return float("nan")
    ipc_s = source.occupancy_ipc(int(ctas))
    if not np.isfinite(ipc_s):
        return float("nan")
    wpc = max(int(profile.warps_per_cta), 1)
    per_warp = -(-max(int(profile.regs_per_thread), 1) * sm.threads_per_warp // sm.reg_alloc_granularity)
    regs = int(ctas) * wpc * per_warp * sm.reg_alloc_granularity  # exactly ``ctas`` CTAs' registers
    occ = {"regs_per_sm": regs, "warps_per_sm": int(ctas) * wpc}
    return _solve_anchor(lambda a: _reference_run(reference, profile, sm, grid, occ, anchor=a)[0], ipc_s)


def lazy_anchor(reference, profile, sm, grid: dict, factor: float) -> Anchor:
    """An :class:`Anchor` of ``factor`` whose curve (:func:`anchor_curve`) is built on first use, and whose
    factor at another occupancy (:func:`occupancy_factor`) is computed when a point asks for it; the same
    object for the same inputs (:func:`_remembered`), so that what its points asked for is at hand for the
    next call's."""
    if reference is None:
        return Anchor(factor)
    return _remembered(
        ("lazy", float(factor)), lambda *a: _lazy_anchor(*a, factor), reference, profile, sm, grid
    )


def _lazy_anchor(reference, profile, sm, grid: dict, factor: float) -> Anchor:
    """A new :class:`Anchor` for :func:`lazy_anchor` (its curve and its factors at other occupancies
    remembered on it)."""

    @functools.cache
    def at_ctas(ctas: int) -> float:
        return _remembered(
            ("occupancy", int(ctas)), lambda *a: occupancy_factor(*a, int(ctas)), reference, profile, sm, grid
        )

    @functools.cache
    def curve(write_allocate: bool = True):
        wa = bool(write_allocate)
        return _remembered(
            ("curve", wa), lambda *a: anchor_curve(*a, write_allocate=wa), reference, profile, sm, grid
        )

    return Anchor(factor, curve, at_ctas)


def launched_l1d(profile, sm: SMSpec) -> SMSpec:
    """``sm`` with the L1D a launch of the profiled kernel gets from an adaptive carve-out
    (:func:`rfmodel.spec.occupancy.carved_l1d`, as the simulator takes it) at the SM's own occupancy
    limits; ``sm`` itself without carve-out options."""
    if not sm.l1d.shmem_options:
        return sm
    wpc = max(-(-int(profile.threads_per_cta) // sm.threads_per_warp), 1)
    ctas = int(np.asarray(resident_warps(profile, sm, {})).max()) // wpc
    return carved_l1d(sm, profile.shared_mem_bytes, ctas)


def evaluate_analytic(
    design,
    workloads: list,
    sm: SMSpec,
    *,
    grid: dict,
    dims: list,
    coords: dict,
    tech: dict,
    arch: str,
    seed: int,
    max_warps,
    calibration,
    stall_reasons: tuple[str, ...],
    perturb=None,
    require_fit: bool = True,
    reference=None,
):
    """The analytic Dataset of ``design`` on ``workloads`` over a checked grid (``rfmodel.evaluate``).

    ``reference``: the design whose analytic IPC at its defaults the profile's schedule anchors
    (:func:`anchor_factor`; the baseline; ``None``: no anchor), with its own coefficients from the same
    ``calibration``.

    ``perturb(profile, structures, grid) -> (profile, structures, grid)`` (Monte-Carlo) changes the inputs
    before the model runs; its arrays may add leading axes (samples) that the grid's arrays broadcast
    against, and ``dims``/``coords`` then name them.
    """
    structures = design.structures(sm, grid, tech)
    said = design.not_modelled(sm, grid, "analytic")
    cal_grid, cal_desc = resolve_calibration(design, sm, calibration, reference)
    ref_grid = resolve_calibration(reference, sm, calibration)[0] if reference is not None else {}
    per_wl, names, anchors, sources, classed = [], [], {}, {}, {}
    shape = None
    if sm.l1d.shmem_options and any(k in grid for k in ("regs_per_sm", "warps_per_sm")):
        said = [*said, "the L1D's carve-out is set at the SM's own occupancy limits, not per grid point"]
    for w in workloads:
        prof = workload_profile(w, sm, arch=arch, seed=seed, max_warps=max_warps)
        sm_w = launched_l1d(prof, sm)
        if sm_w is not sm:  # the profile of the kernel's own L1D
            prof = workload_profile(w, sm_w, arch=arch, seed=seed, max_warps=max_warps)
        names.append(prof.name)
        g, structs = {**grid, **cal_grid}, structures
        anchor = cached_anchor_factor(reference, prof, sm_w, ref_grid)  # of the nominal profile
        anchors[prof.name] = round(anchor, 6)
        nominal = prof
        if perturb is not None:
            prof, structs, g = perturb(prof, structs, g)
        m = run_analytic(
            design, prof, sm_w, g, anchor=lazy_anchor(reference, nominal, sm_w, ref_grid, anchor)
        )
        shape = np.broadcast_shapes(*(np.shape(v) for v in g.values()), np.shape(m["ipc"]))
        metrics = {k: v for k, v in m.items() if k != "events"}
        metrics["warp_instructions"] = np.asarray(prof.n_instrs, dtype=np.float64)
        per_wl.append(
            {
                "metrics": metrics,
                "events": m["events"],
                "stalls": None,
                "resources": (prof.regs_per_thread, prof.threads_per_cta, prof.shared_mem_bytes),
            }
        )
        sources[prof.name] = prof.attrs.get("trace_source", "?")
        if "opcodes_classed_by_name" in prof.attrs:
            classed[prof.name] = prof.attrs["opcodes_classed_by_name"]
    return assemble(
        design=design,
        sm=sm,
        structures=structs,
        workloads=names,
        dims=dims,
        coords=coords,
        shape=shape,
        per_workload=per_wl,
        stall_reasons=stall_reasons,
        grid=grid,
        require_fit=require_fit,
        attrs={
            "engine": "analytic",
            "tech": json.dumps(tech),
            "arch": arch,
            "seed": seed,
            "not_modelled": "; ".join(not_modelled(sm, "analytic") + said),
            "rfmodel_version": __version__,
            "calibration": cal_desc,
            "trace_source": json.dumps(sources),
            "anchor": "shared SM model's IPC x factor per workload (schedule of the baseline pipeline"
            " / the baseline's analytic IPC at its defaults; docs/models.md): " + json.dumps(anchors),
            **({"opcodes_classed_by_name": json.dumps(classed)} if classed else {}),
        },
    )
