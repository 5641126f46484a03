"""The shared analytic model of one SM and the record through which a design changes it.

A design's analytic terms (``Design.analytic(ctx)``, in the design's own module) never run the
interval model themselves: they describe what the design changes in it with an :class:`Effects`
record and hand it to :meth:`AnalyticContext.model`, which runs the SM's interval/occupancy model
(:func:`rfmodel.analytic.throughput.interval_model`, equations in docs/models.md) and returns the
standard metrics.  A design whose effects depend on the model's own answer (a main-RF queue at the
current IPC) calls it again with updated effects: a fixed point of a few steps
(:func:`ipc_fixed_point` where the effect is one cost at the IPC).  The design then
returns :meth:`AnalyticContext.result` with its structure events and its own metrics.

The :class:`Effects` record and its fields are in :mod:`rfmodel.analytic.terms`.

Nothing here names a design.  Helpers shared by several designs' terms live here too: the SM
parameter lookup, resident warps, the main-RF timing of a grid, the interval coefficients.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np

from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS, PREFIX
from rfmodel.analytic.terms import NO_EFFECTS, Effects, SmTerms
from rfmodel.spec.occupancy import (
    COLLECTOR_SETS,
    class_initiations,
    collector_set_shares,
    occupancy_warps,
    unit_collector_sets,
    unit_slots,
    units_of_classes,
)

#: grid entry of the anchor: a factor (:func:`rfmodel.analytic.engine.anchor_factor`; 1 when absent) or an
#: :class:`Anchor`
ANCHOR_KEY = PREFIX + "anchor"


@dataclass(frozen=True)
class Anchor:
    """The anchor of the shared SM model's IPC: ``factor`` at the SM's own L1D
    (:func:`rfmodel.analytic.engine.anchor_factor`), and ``curve``: a callable that returns increasing L1D
    hit rates and the factor at each over L1Ds of some lines, and the factor without an L1D
    (:func:`rfmodel.analytic.engine.anchor_curve`, built on first use), which a design whose L1D differs
    from the SM's (``Effects.l1d_lines`` or ``l1d_hits``) is anchored on at its own hit rate, or without an
    L1D (``l1d_lines`` 0) at the last; ``at_ctas``: the factor at another number of resident CTAs
    (:func:`rfmodel.analytic.engine.occupancy_factor`), for points whose registers or warp slots change the
    occupancy."""

    factor: float
    curve: Callable[[], tuple[np.ndarray, np.ndarray, float]] | None = None
    at_ctas: Callable[[int], float] | None = None


__all__ = [
    "GRID_FIELDS",
    "SCHEDULE_FIELDS",
    "Anchor",
    "AnalyticContext",
    "Effects",
    "main_rf_timing",
    "miss_latency",
    "resident_warps",
    "sm_interval",
    "sm_param",
    "ipc_fixed_point",
]

#: SM fields (and derived totals) the interval model reads from the grid
GRID_FIELDS = (
    "num_banks",
    "regs_per_sm",
    "collector_units",
    "warps_per_sm",
    "schedulers_per_sm",
    "issue_width",
    "bank_rw_ports",
    "bank_read_ports",
)
#: the grid fields among :data:`GRID_FIELDS` that also shape a workload's list schedule (its profile's
#: issue tables are built at the SM spec's values): an evaluation runs once per distinct combination of
#: them, on the SM spec that has them (``rfmodel.evaluate``)
SCHEDULE_FIELDS = ("schedulers_per_sm", "issue_width")


def l2_sets(sm) -> int:
    """Sets of the SM's L2 slice as the simulator builds it (whole sets of ``sm.l2_ways`` ways; the banks of
    an L2 spec are not modelled here: one cache of the whole share)."""
    return sm.l2_size_bytes // max(sm.num_sms, 1) // (sm.l2_ways * sm.l1d.line_bytes)


#: cycles of one baseline bank access (the 1x of ``main_rf_latency_x``) and of one warp register through a
#: main-RF network (full width, 4x narrower): both engines' (the simulator's main RF in
#: ``rfmodel.designs.mainrf`` reads them from here)
BANK_CYCLES = 1
XFER_CYCLES = (1.0, 4.0)


def miss_latency(sm) -> float:
    """Latency of an L1D miss served by DRAM in the simulator: L1 + L2 + DRAM + one line of bandwidth."""
    return float(
        sm.l1d.hit_latency_cycles
        + sm.l2_hit_latency_cycles
        + sm.dram_latency_cycles
        + sm.l1d.line_bytes / max(sm.mem_bw_bytes_per_cycle, 1e-9)
    )


def icnt_costs(sm) -> dict:
    """Cycles the SM's interconnect ports are busy (:class:`~rfmodel.analytic.terms.SmTerms`' ``noc_*``; all 0
    where the ports are not modelled): per missed L1D line its request (a header) and reply (the line, or its
    sectors), per stored line its data and acknowledgements (one, or one a sector), as the simulator charges
    them."""
    fc = sm.icnt_flit_cycles
    return {
        "noc_reply": fc * sm.icnt_line_reply_flits(),
        "noc_request": fc * int(sm.icnt_flits(0)),
        "noc_store": fc * int(sm.icnt_flits(sm.l1d.line_bytes)),
        "noc_ack": fc * int(sm.icnt_ack_flits()),
    }


def sm_param(sm, grid: dict, name: str):
    """A parameter's value: the grid's array if the grid varies it, else the spec's."""
    if name in grid:
        return np.asarray(grid[name])
    if name == "collector_units":
        return np.asarray(sm.collectors.total)
    return np.asarray(getattr(sm, name))


def grid_value(grid: dict, name: str, default) -> np.ndarray:
    """A design parameter's grid array (float), else its default."""
    return np.asarray(grid.get(name, default), dtype=np.float64)


def resident_warps(profile, sm, grid: dict):
    """Resident warps per SM (the CUDA occupancy rules) for the grid's SM fields."""
    p = {k: sm_param(sm, grid, k) for k in ("regs_per_sm", "warps_per_sm")}
    return occupancy_warps(
        profile.regs_per_thread,
        profile.threads_per_cta,
        profile.shared_mem_bytes,
        profile.ctas,
        regs_per_sm=p["regs_per_sm"],
        max_warps=p["warps_per_sm"],
        max_ctas=sm.max_ctas_per_sm,
        max_threads=p["warps_per_sm"] * sm.threads_per_warp,
        smem_per_sm=sm.shmem_per_sm_bytes,
        alloc_granularity=sm.reg_alloc_granularity,
        warp_size=sm.threads_per_warp,
        cta_limits=sm,
    )


@functools.lru_cache(maxsize=1024)
def _own_warps(regs_per_thread, threads_per_cta, shared_mem_bytes, ctas, sm) -> float:
    """Resident warps of a kernel of these resources on ``sm`` at its own limits (:func:`resident_warps`
    without a grid), remembered."""
    p = SimpleNamespace(
        regs_per_thread=regs_per_thread,
        threads_per_cta=threads_per_cta,
        shared_mem_bytes=shared_mem_bytes,
        ctas=ctas,
    )
    return float(np.asarray(resident_warps(p, sm, {})))


def main_rf_timing(grid: dict, read_x=None, network=0.0):
    """``(lat, occ, xex)`` of one main-RF warp-register access for ``read_x`` (the bank read time as a
    multiple of one cycle; default the grid's ``main_rf_latency_x``), the grid's ``narrow_crossbar`` and
    ``network``, the network's cycles beyond the SM's crossbar: latency, bank occupancy and extra arrival
    cycles (continuous; the simulator rounds the latency to whole cycles)."""
    x = grid_value(grid, "main_rf_latency_x", 1.0) if read_x is None else np.asarray(read_x, dtype=np.float64)
    narrow = grid_value(grid, "narrow_crossbar", 0)
    lat = np.maximum(1.0, x * BANK_CYCLES)
    xfer = np.where(narrow > 0, XFER_CYCLES[1], XFER_CYCLES[0])
    return lat, np.maximum(lat, xfer), xfer - 1.0 + np.asarray(network, dtype=np.float64)


def two_level(sm) -> float:
    """1 when the SM runs the two-level warp scheduler (warps leave the active pool), else 0."""
    return 1.0 if sm.scheduler == "two-level" else 0.0


#: warps per scheduler in the two-level scheduler's active pool when a design does not set ``active_warps``
#: (the simulator's default, ``SimSetup.pool``)
DEFAULT_POOL = 8


def _at_warps(anchor, warps):
    """``anchor`` (a callable of the L1D hit rate and the resident warps) at these resident warps."""
    return lambda hit_rate, _warps: anchor(hit_rate, warps)


def sm_interval(
    profile, sm, grid: dict, coef: dict, effects: Effects = NO_EFFECTS, anchor=1.0, warps=None, **changes
) -> dict:
    """Occupancy and the interval model of one SM for the grid's SM fields (every design's base).

    ``coef``: the interval model's coefficients; ``effects``: the design's changes to the model
    (``changes``: :class:`Effects` fields that replace its own); ``anchor``: the interval model's (the factor
    on the schedule's bounds, or a callable of the L1D hit rate and the warps); ``warps``: the resident warps
    (:func:`resident_warps`, computed without), at most ``effects.issuing_warps``.  On a two-level SM the
    grid's ``active_warps`` (per scheduler; default :data:`DEFAULT_POOL`) bounds the issuing warps.
    """
    e = replace(effects, **changes) if changes else effects
    p = {k: sm_param(sm, grid, k) for k in GRID_FIELDS}
    if warps is None:
        warps = resident_warps(profile, sm, grid)
    if e.issuing_warps is not None:
        resident, warps = warps, np.minimum(warps, np.asarray(e.issuing_warps, dtype=np.float64))
        if callable(anchor):  # the anchor's occupancy is the resident CTAs', not the issuing warps'
            anchor = _at_warps(anchor, resident)
    initiation = np.maximum(class_initiations(sm), 1).astype(np.float64)
    slow = np.asarray(e.bank_cycles, dtype=np.float64) > 1.0
    if e.bank_write_cycles is not None:
        slow = slow | (np.asarray(e.bank_write_cycles, dtype=np.float64) > 1.0)
    split = sm.banks_split
    sched = p["schedulers_per_sm"]
    bps = np.maximum(p["num_banks"] // sched, 1) if split else p["num_banks"]
    # distinct bank rotations among the warps of one pool of banks: (reg + slot) mod n rotates by the
    # slot; a sub-core's warps have slots congruent mod S, so only n / gcd(S, n) rotations remain
    if sm.bank_mapping == "reg-mod":
        rotations = np.ones_like(np.asarray(bps, dtype=np.float64))
    elif split:
        rotations = bps / np.gcd(np.asarray(sched, dtype=np.int64), np.asarray(bps, dtype=np.int64))
    else:
        rotations = np.minimum(np.maximum(warps, 1), bps)
    wpb = e.warp_per_bank or sm.bank_mapping == "warp-per-bank"
    from rfmodel.analytic.throughput import interval_model  # here: the designs' costs need no profile code

    terms = SmTerms(
        warps=warps,
        schedulers=sched,
        issue_width=p["issue_width"],
        banks=p["num_banks"],
        # slow banks (bank_cycles > 1) serve one access at a time, reads and writes alike
        ports_per_bank=np.where(slow, 1, p["bank_rw_ports"] + p["bank_read_ports"]),
        separate_write_ports=sm.bank_write_ports > 0 and not np.any(slow),
        collectors=p["collector_units"],
        initiation=initiation,
        mem_bytes_per_cycle=sm.mem_bw_bytes_per_cycle,
        l1d_lines=sm.l1d.size_bytes // sm.l1d.line_bytes if e.l1d_lines is None else e.l1d_lines,
        line_bytes=sm.l1d.line_bytes,
        l1_hit_latency=sm.l1d.hit_latency_cycles,
        miss_latency=miss_latency(sm),
        mshr=sm.l1d.mshr_entries or 1 << 20,
        sub_core=split,
        mapping="warp-per-bank" if wpb else ("scattered" if e.scattered_banks else "interleaved"),
        greedy=sm.scheduler == "gto",
        # with sub-cores a warp's registers interleave over its own sub-core's banks only
        interleave_banks=bps if split else None,
        rotations=rotations,
        l2_lines=max(l2_sets(sm), 1) * sm.l2_ways,
        l2_hit_latency=sm.l2_hit_latency_cycles,
        l1d_assoc=sm.l1d.assoc if e.l1d_assoc is None else e.l1d_assoc,
        l1d_write_allocate=sm.l1d.write_allocate,
        l2_assoc=sm.l2_ways,
        pool_warps=grid_value(grid, "active_warps", DEFAULT_POOL) * sched if two_level(sm) else None,
        # with the SM's execution units the classes that share a unit share its bound; without them, each
        # class its own bound at one pipeline a scheduler (as every unit type then has)
        unit_of_class=units_of_classes(sm) if sm.exec_units is not None else None,
        unit_slots=unit_slots(sm),
        # typed collector sets, each for its own instructions; a grid's collector_units is that many generic
        # units (one pool), as optimize's --validate simulates such a point
        collector_sets=None if "collector_units" in grid else collector_set_shares(sm, profile.mix),
        **icnt_costs(sm),
    )
    m = interval_model(profile, terms, e, coef=coef, anchor=anchor)
    m["dispatch_queue"] = dispatch_waiting(profile, sm, grid, m)
    return m


#: :func:`dispatch_waiting`'s static rows by SM, kernel and whether the collectors are one pool (the objects
#: kept with them, so that an id is not taken for another's)
_DISPATCH_ROWS: dict = {}


def collector_hold(m: dict) -> np.ndarray:
    """Cycles an instruction holds its collector before its operands are all read: the collection time
    ``t_collect`` and its reads' waits behind their producers' writes (``write_wait``, at slow banks;
    :data:`rfmodel.analytic.throughput.COLLECTOR_WRITE_WAIT`), which the latency bound carries as the
    dependences' ``write_hold`` instead."""
    return np.asarray(m["t_collect"], dtype=np.float64) + np.asarray(m.get("write_wait", 0.0), np.float64)


def one_bank_pool_occupancy(sm, grid: dict, ipc, m: dict, units):
    """The share of the collectors a pool's one bank keeps waiting (0 where a pool has more banks than one).

    Where the banks are split among the schedulers' pools and a pool has one bank (4 banks over 4
    sub-cores), every read of an instruction waits at that bank: a closed network of the pool's ``n``
    collectors around one server, whose Schweitzer mean-value analysis puts ``Q = U / (1 - U (n - 1) / n)``
    instructions at the bank, ``U = IPC / rate_bank`` its utilization (the model's bank bound, the writes'
    time included).  Those ``Q`` of the pool's ``n`` collectors are held at least, whatever the collection
    time the model's closed bound allows (a read waits behind at most the other collectors' accesses,
    :func:`rfmodel.analytic.throughput.interval_model`), which a bank busy nearly every cycle outgrows.
    With more banks to a pool an instruction's reads visit them at once (a fork and join), which this
    serial network does not describe (docs/validation.md)."""
    if not sm.banks_split or "rate_bank" not in m:
        return 0.0
    sched = np.asarray(sm_param(sm, grid, "schedulers_per_sm"), dtype=np.float64)
    banks = np.asarray(sm_param(sm, grid, "num_banks"), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # (the points with more banks are dropped below)
        n = np.maximum(np.asarray(units, dtype=np.float64) / sched, 1.0)
        u = np.clip(
            np.asarray(ipc, dtype=np.float64) / np.asarray(m["rate_bank"], dtype=np.float64), 0.0, 0.999
        )
        u = np.nan_to_num(u)
        q = u / (1.0 - u * (n - 1.0) / n)
        return np.where(banks <= sched, np.nan_to_num(np.minimum(q / n, 1.0)), 0.0)


def dispatch_waiting(profile, sm, grid: dict, m: dict, ipc=None):
    """The instructions per SM holding a collector while they wait for their execution unit at the pace
    ``ipc`` (default the model's, ``m["ipc"]``; :func:`rfmodel.analytic.throughput.dispatch_queue`, the
    load/store pipeline's from the profile's issue schedule where it has one), within
    the collectors of each set that no collecting instruction holds (typed sets on an SM whose collectors
    are typed; one pool otherwise)."""
    from rfmodel.analytic.throughput import dispatch_queue, dispatch_rows

    key = (id(sm), id(profile.mix), "collector_units" in grid)
    hit = _DISPATCH_ROWS.get(key)
    if hit is None or hit[0] is not sm or hit[1] is not profile.mix:
        pool = "collector_units" in grid or collector_set_shares(sm, profile.mix) is None
        set_of_unit = None if pool else unit_collector_sets(sm)[:, 0]
        uc = units_of_classes(sm) if sm.exec_units is not None else None
        initiation = np.maximum(class_initiations(sm), 1).astype(np.float64)
        rows = dispatch_rows(profile.mix, initiation, uc, unit_slots(sm), set_of_unit, sm.schedulers_per_sm)
        set_units = None if pool else np.array([getattr(sm.collectors, n) for n in COLLECTOR_SETS], float)
        if len(_DISPATCH_ROWS) > 256:
            _DISPATCH_ROWS.clear()
        hit = _DISPATCH_ROWS[key] = (sm, profile.mix, rows, set_units)
    _, _, rows, set_units = hit
    ipc = np.asarray(m["ipc"] if ipc is None else ipc, dtype=np.float64)
    collecting = ipc * collector_hold(m)
    mem_rate = np.minimum(m["rate_lsu"], m["rate_mshr"])
    units = sm_param(sm, grid, "collector_units")
    lsu = None
    if profile.sched_lsu is not None and profile.sched_ipc:
        lsu = (*np.asarray(profile.sched_lsu, dtype=np.float64), float(profile.sched_ipc))
    return dispatch_queue(rows, ipc, mem_rate, collecting, units, set_units, lsu)


#: rounds of :func:`ipc_fixed_point`'s search on the cheap side, each over :data:`_LADDER`'s 32 cells of the
#: bracket the round before left (four: the root to 2^-20 of the IPC without the cost)
LADDER_ROUNDS = 4
_LADDER = np.linspace(0.0, 1.0, 33)


def ipc_fixed_point(run, cost, ipc0, *, rtol: float = 1e-3, steps: int = 8):
    """Per point, the IPC ``x`` that a cost the design adds at IPC ``x`` leaves: ``x = run(cost(x))["ipc"]``.

    ``cost(x)`` is cheap (closed form per point) and does not fall with ``x`` (a queue's wait at the IPC it
    serves); it returns ``(e, aux)``. ``run(e)`` is the shared model with ``e`` (e.g. ``extra_collect``):
    dear, its CPI (``1 / IPC``) close to affine in ``e``; ``ipc0`` is its IPC at ``e = 0``.  Each step fits
    ``1 / IPC = a + b e`` per point through the last two runs (a secant on the CPI), solves the fit's fixed
    point ``x (a + b cost(x)) = 1`` by a search on the cheap side, and runs the model there: the queue's
    steep rise near saturation is taken exactly, so a few runs settle it (to ``rtol`` of ``x``) where a
    damped iteration may never.  Returns ``(x, out, aux)``: ``run``'s outputs and ``cost``'s ``aux`` at the
    returned ``x`` (the last run is at every point's own ``x``); at most ``steps`` runs."""
    x = np.asarray(ipc0, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        e_prev, c_prev = 0.0 * x, 1.0 / x
        done = np.zeros(x.shape, dtype=bool)
        for k in range(steps):
            e, aux = cost(x)
            out = run(e)
            got = np.asarray(out["ipc"], dtype=np.float64)
            done = done | ~(np.abs(got - x) > rtol * np.abs(x))  # NaN (nothing resident) counts as settled
            if done.all() or k == steps - 1:
                break
            c = 1.0 / got
            b = np.where(e != e_prev, (c - c_prev) / (e - e_prev), 0.0)
            b = np.where(np.isfinite(b), np.maximum(b, 0.0), 0.0)
            a = c - b * e
            e_prev, c_prev = e, c
            # the fit's fixed point: x (a + b cost(x)) - 1 rises with x, from -1 at 0 to >= 0 at
            # 1 / (a + b cost(0)); a search over a 32-cell ladder of the bracket, four times
            lo = 0.0 * x
            hi = 1.0 / (a + b * cost(lo)[0])
            for _ in range(LADDER_ROUNDS):
                cand = lo + (hi - lo) * _LADDER.reshape((-1,) + (1,) * np.ndim(hi))
                over = cand * (a + b * cost(cand)[0]) >= 1.0
                # the first rung over it (the top one where none is: rounding at the bracket's end)
                top = _LADDER.size - 1
                first = np.where(over.any(axis=0), np.maximum(np.argmax(over, axis=0), 1), top)[None]
                lo = np.take_along_axis(cand, first - 1, axis=0)[0]
                hi = np.take_along_axis(cand, first, axis=0)[0]
            new = 0.5 * (lo + hi)
            x = np.where(done | ~np.isfinite(new), x, new)
    return x, out, aux


class AnalyticContext:
    """One analytic evaluation: the workload profile, the SM, the grid and the design's coefficients.

    ``coef`` holds every coefficient the design declares (``Design.calibration_params``), from the
    grid's ``calib.<name>`` entries (calibrated or sampled values) or else their defaults.
    """

    def __init__(self, profile, sm, grid: dict, calibration_params: dict, params=None):
        self.profile = profile
        self.sm = sm
        self.grid = grid
        #: the design's typed parameters at their defaults (a ``DesignParams``; None in a context that
        #: evaluates no design's own parameters)
        self.params = params
        self.coef = {k: grid.get(PREFIX + k, v[0]) for k, v in calibration_params.items()}
        # the anchor on the profile's schedule (rfmodel.analytic.engine.anchor_factor), carried in the grid
        # so that a design's inner contexts (on the same grid) see it too
        anchor = grid.get(ANCHOR_KEY, 1.0)
        self.anchor_curve = getattr(anchor, "curve", None)
        self.anchor_at_ctas = getattr(anchor, "at_ctas", None)
        self.anchor = np.asarray(getattr(anchor, "factor", anchor), dtype=np.float64)
        self.n = np.asarray(profile.n_instrs, dtype=np.float64)  # an array over Monte-Carlo samples
        self.reads = self.n * profile.reads_per_instr
        self.writes = self.n * profile.writes_per_instr

    def param(self, name: str) -> np.ndarray:
        """A design parameter over the grid (float): the grid's array where the grid sets it, else the
        design's default on this SM (``DesignParams.value_on``), resolved once for the design."""
        if name in self.grid:
            return grid_value(self.grid, name, None)
        if self.params is None:
            raise KeyError(f"parameter '{name}': no design defaults in this analytic context")
        return np.asarray(self.params.value_on(name, self.sm), dtype=np.float64)

    def interval_coef(self) -> dict:
        return {k: self.coef[k] for k in INTERVAL_COEFFICIENTS if k in self.coef}

    def model(self, effects: Effects = NO_EFFECTS) -> dict:
        """The shared interval model with the design's effects: its outputs (``ipc``, ``cycles``,
        ``warps``, ``conflict_per_instr``, ``t_collect``, ``l1d_hit_rate``, ...) under the context's anchor,
        which scales the bounds the SM's schedule measures (every one but the banks' and the collectors')
        inside the fixed point, so that the queues and what a design derives from the SM's pace see the
        anchored one.  With effects on the L1D (``l1d_lines``, ``l1d_hits``) and an anchor curve, the factor
        is the curve's at the model's L1D hit rate (the curve under the design's store policy,
        ``Effects.l1d_write_allocate``)."""
        return self._interval(effects, anchor=self._anchor_of(effects))

    def latency_rate(self, m: dict, effects: Effects = NO_EFFECTS) -> np.ndarray:
        """The latency bound of the model's outputs ``m`` (run with ``effects``) as it entered the soft
        minimum: the resident warps' dependence-and-memory pace (``rate_latency``) under the anchor."""
        anchor = self._anchor_of(effects)
        if callable(anchor):  # at the resident warps (a design's issuing warps may be fewer)
            held = effects.issuing_warps is not None
            anchor = anchor(m["l1d_hit_rate"], self.resident_warps if held else m["warps"])
        return np.asarray(anchor, dtype=np.float64) * np.asarray(m["rate_latency"], dtype=np.float64)

    def _anchor_of(self, effects: Effects):
        """The anchor :meth:`model` runs the interval model under: the context's factor, or a callable of
        the model's L1D hit rate and resident warps where the anchor curve or the occupancy moves it."""
        l1d = effects.l1d_lines is not None or effects.l1d_hits is not None
        curve = self.anchor_curve is not None and l1d
        occupancy = self.anchor_at_ctas is not None and any(
            k in self.grid for k in ("regs_per_sm", "warps_per_sm")
        )
        if not curve and not occupancy:
            return self.anchor

        def factor_at(hit_rate, warps):
            factor = self.anchor
            if curve:
                # the curve's hit rates under the design's own store policy (its rates find their size)
                hits, factors, zero = (
                    self.anchor_curve() if effects.l1d_write_allocate else self.anchor_curve(False)
                )
                if len(hits) > 1:
                    factor = np.interp(np.asarray(hit_rate, dtype=np.float64), hits, factors)
                if effects.l1d_lines is not None and np.isfinite(zero):
                    factor = np.where(np.asarray(effects.l1d_lines) <= 0, zero, factor)
            return factor * self._occupancy_ratio(warps)

        return factor_at

    def _occupancy_ratio(self, warps) -> np.ndarray | float:
        """Per point, the anchor at the point's resident CTAs over the anchor at the SM's own (1 where they
        are the same, or where the anchor has no factor there): the schedule's pace moves with the occupancy
        (docs/models.md, "Anchor")."""
        if self.anchor_at_ctas is None or not any(k in self.grid for k in ("regs_per_sm", "warps_per_sm")):
            return 1.0
        wpc = max(int(self.profile.warps_per_cta), 1)
        ctas = np.floor(np.asarray(warps, dtype=np.float64) / wpc)
        prof = self.profile
        own = float(
            np.floor(
                _own_warps(
                    int(prof.regs_per_thread),
                    int(prof.threads_per_cta),
                    int(prof.shared_mem_bytes),
                    int(prof.ctas),
                    self.sm,
                )
                / wpc
            )
        )
        ratio = np.ones(ctas.shape)
        for c in np.unique(ctas):
            if c != own and c > 0:
                a = self.anchor_at_ctas(int(c))
                if np.isfinite(a) and a > 0:
                    ratio[ctas == c] = a / float(self.anchor)
        return ratio

    def _interval(self, effects: Effects, anchor=1.0) -> dict:
        return sm_interval(
            self.profile, self.sm, self.grid, self.interval_coef(), effects, anchor, self.resident_warps
        )

    @functools.cached_property
    def resident_warps(self):
        """The grid's resident warps on the context's profile and SM (:func:`resident_warps`; each of a
        design's model runs on the same grid shares them)."""
        return resident_warps(self.profile, self.sm, self.grid)

    def result(self, m: dict, *, events: dict, metrics: dict | None = None, ipc=None, cycles=None) -> dict:
        """The standard metrics of a design from the model's outputs ``m``, with the design's structure
        events and own metrics; ``ipc``/``cycles`` replace the model's when the design bounds them further.

        ``rf_reads``/``rf_writes`` count every operand read and result of the warps' instructions (warp
        registers); ``bank_conflict_stall_cycles`` the collector cycles lost waiting for banks (NaN where no
        warp is resident; where the design's ``ipc`` replaces the model's, the bank queue's share of them at
        that pace: ``rfmodel.analytic.throughput.bank_wait_at``); ``collector_occupancy`` the mean share of
        the SM's collector units holding an instruction, by Little's law: the instructions collecting at once,
        ``IPC x`` :func:`collector_hold` (the collection and its reads' waits behind their producers' writes),
        and those waiting in their collectors for their unit (:func:`dispatch_waiting` at ``ipc``), over the
        units (NaN where no warp is resident).
        """
        ipc = m["ipc"] if ipc is None else ipc
        cycles = m["cycles"] if cycles is None else cycles
        z = 0 * np.asarray(ipc)
        units = np.maximum(np.asarray(sm_param(self.sm, self.grid, "collector_units"), dtype=np.float64), 1.0)
        # the instructions collecting (Little's law) and those holding a collector until their unit takes them
        # (at the design's own pace where it bounds the model's further)
        waiting = np.asarray(m.get("dispatch_queue", 0.0), dtype=np.float64)
        if ipc is not m["ipc"] and "dispatch_queue" in m:
            waiting = dispatch_waiting(self.profile, self.sm, self.grid, m, ipc)
        busy = (np.asarray(ipc, dtype=np.float64) * collector_hold(m) + waiting) / units
        busy = np.maximum(busy, one_bank_pool_occupancy(self.sm, self.grid, ipc, m, units))
        conflict = m["conflict_per_instr"]
        if ipc is not m["ipc"] and "bank_queue" in m:
            # the bank queue's stalls at the design's own pace (its serialization within an instruction
            # does not depend on the pace)
            from rfmodel.analytic.throughput import bank_wait_at

            q = m["bank_queue"]
            conflict = conflict + q["stall"] * (bank_wait_at(q, ipc) - bank_wait_at(q, m["ipc"]))
        out = {
            "ipc": ipc,
            "cycles": cycles,
            "warps": m["warps"],
            "rf_reads": self.reads + z,
            "rf_writes": self.writes + z,
            "bank_conflict_stall_cycles": np.where(m["warps"] > 0, self.n * conflict, np.nan),
            "l1d_hit_rate": m["l1d_hit_rate"],
            "collector_cycles": m["t_collect"],
            "collector_occupancy": np.where(m["warps"] > 0, np.minimum(busy, 1.0), np.nan),
        }
        for k, v in (metrics or {}).items():
            out[k] = v + z
        out["events"] = {
            s: {k: np.asarray(x) + z for k, x in ev.items()}
            if isinstance(ev, dict)
            else tuple(np.asarray(x) + z for x in ev)
            for s, ev in events.items()
        }
        return out

    def scaled(self, out: dict, factor) -> dict:
        """``out`` with its IPC multiplied by ``factor`` (a design's residual terms; cycles and the
        collectors' occupancy follow)."""
        ipc0 = out["ipc"]
        ipc = ipc0 * factor
        with np.errstate(divide="ignore", invalid="ignore"):
            cycles = np.where(ipc > 0, out["cycles"] * ipc0 / np.where(ipc > 0, ipc, 1.0), np.inf)
        z = 0 * ipc
        res = {k: (v + z if k not in ("events",) else v) for k, v in out.items()}
        res["ipc"], res["cycles"] = ipc, cycles
        if "collector_occupancy" in out:
            res["collector_occupancy"] = np.minimum(out["collector_occupancy"] * factor, 1.0) + z
        return res
