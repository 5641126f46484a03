"""Closed-form throughput model of one SM's register-file pipeline (equations: docs/models.md).

Every function here is vectorized: parameters are numpy arrays that broadcast
against each other, so a whole design grid is evaluated in one call.

* :func:`interval_model`: the calibrated interval/occupancy model: operand collection
  (serialization within an instruction, per-bank queues with writes competing, collector
  blocking; :mod:`rfmodel.analytic.banks`), the CTA critical path with that collection time
  added per dependence, and throughput bounds (issue, banks, collectors, execution units,
  LSU, MSHRs, DRAM bandwidth) combined by a soft minimum ``(sum_j R_j^-q)^(-1/q)``; waves of
  CTAs and a partial last wave.  Its free coefficients are :data:`INTERVAL_COEFFICIENTS`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rfmodel.analytic.banks import collector_wait_at, read_wait_split_at
from rfmodel.analytic.calibration import (  # noqa: F401  (the model's coefficients, re-exported)
    INTERVAL_COEFFICIENTS,
    NOT_FITTED,
    coefficient_defaults,
)
from rfmodel.analytic.profile import (
    CHAIN2_EXTRA,
    WorkloadProfile,
    bilinear_at,
    load_cycles,
    sched_cells_missing,
    sched_rate_at,
)
from rfmodel.analytic.reuse import near_consumer_share
from rfmodel.analytic.terms import NO_EFFECTS, SmTerms
from rfmodel.cache import pause_collector_while_compiling
from rfmodel.ir import N_OPCLASSES
from rfmodel.spec.occupancy import COLLECTOR_SETS, U_MEM, UNIT_OF_CLASS, occupancy_warps  # noqa: F401  (occupancy_warps re-exported for callers)

pause_collector_while_compiling()  # numba compiles the package's code with the garbage collector off

SOFTMIN_Q = 4.0


def md1_wait(rho):
    """Mean queueing delay (in service times) of an M/D/1 queue; inf at rho >= 1."""
    rho = np.asarray(rho, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rho < 1.0, rho / (2.0 * (1.0 - rho)), np.inf)


def softmin(rates, q=SOFTMIN_Q):
    """Smooth minimum of non-negative rates: ``(sum r^-q)^(-1/q)`` (0 when any rate is 0)."""
    with np.errstate(divide="ignore"):
        inv = sum(np.power(np.asarray(r, dtype=np.float64), -q) for r in rates)
    return np.power(inv, -1.0 / q)


# ============================================================================ calibrated interval model


#: the outputs of :func:`_steady`, in order
STEADY_OUT = (
    "ipc",
    "bank_wait",
    "t_collect",
    "collector_wait",
    "rate_latency",
    "cta_critical_path",
    "rate_collectors",
    "rate_mshr",
    "load_latency",
)


def _table(t) -> np.ndarray:
    """A profile's ``[K, J]`` table as the compiled fixed point takes it (a placeholder when unused)."""
    return np.ones((1, 1)) if t is None else np.ascontiguousarray(t, dtype=np.float64)


@njit(cache=True, inline="always")
def _inv_q(rate, q):
    """One term ``rate^-q`` of :func:`softmin` (inf at a zero rate, 0 at an infinite one)."""
    if rate <= 0.0:
        return np.inf
    if rate == np.inf:
        return 0.0
    return rate**-q


@njit(cache=True, inline="always")
def _closed_wait(warps, collectors, hold):
    """The most an instruction waits for one of ``collectors`` that ``warps`` warps share, each with at most
    one instruction waiting (a closed population): the others' instructions ahead of it, ``collectors`` at a
    time, ``hold`` cycles each; and at most the open queue's cap of 50 cycles."""
    n = max(np.floor(collectors), 1.0)
    return min(max(warps - n, 0.0) * hold / n, 50.0)


#: no list-schedule cell to build (:func:`_steady`'s ``todo``)
_NO_CELLS = np.zeros((0, 0, 0), dtype=np.bool_)

#: no evaluation counts wanted (:func:`_steady`'s ``evals_out``)
_NO_EVALS = np.zeros(0, dtype=np.int64)

#: odd 64-bit multipliers of :func:`unique_columns`' hash, one per row (fixed: the same grid hashes alike)
_HASH_MUL = np.random.default_rng(0x5EED).integers(1, 2**63, size=64, dtype=np.uint64) | np.uint64(1)


def unique_columns(x: np.ndarray):
    """The distinct columns of the float matrix ``x`` (bit for bit) and where each column of ``x`` is among
    them: ``(xu, inverse)`` with ``xu[:, inverse] == x``, or ``None`` when nearly every column is distinct
    (or there are too few to be worth it).  A grid's points often share every input of the fixed point (a
    parameter that does not reach it, such as register counts beyond what occupancy uses), so the fixed
    point runs once per distinct column and its answers are broadcast back: bit-identical, since each
    column's answer depends on that column alone.  Columns are told apart by a hash of their bits, then
    checked exactly (a collision, never seen, falls back to every column)."""
    rows, n = x.shape
    if n < 128 or rows > _HASH_MUL.size:
        return None
    bits = np.ascontiguousarray(x).view(np.uint64)
    h = np.empty(n, dtype=np.uint64)
    _column_hash(bits, _HASH_MUL, h)
    first, inverse = _distinct(h, int(0.8 * n))
    if first.size == 0:  # more than 80 % distinct
        return None
    if not _same_columns(bits, first, inverse):  # a hash collision: no sharing
        return None
    return np.ascontiguousarray(x[:, first]), inverse


@njit(cache=True)
def _distinct(h, most):
    """The distinct values of ``h`` in the order they first occur: ``(first, inverse)``, ``first`` the index
    of each one's first occurrence and ``h[first[inverse]] == h``; empty arrays as soon as there are more
    than ``most`` (an open-addressing table, linear probing: one pass, where sorting took most of
    :func:`unique_columns`' time on a grid of distinct points)."""
    n = h.shape[0]
    size = 1
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    slot_of = np.full(size, -1, dtype=np.int64)  # the table: index into ``first`` of the value there
    first = np.empty(n, dtype=np.int64)
    inverse = np.empty(n, dtype=np.int64)
    count = 0
    for j in range(n):
        v = h[j]
        k = (v ^ (v >> np.uint64(31))) & mask
        while True:
            u = slot_of[k]
            if u < 0:
                if count >= most:
                    return first[:0], inverse[:0]
                slot_of[k] = count
                first[count] = j
                inverse[j] = count
                count += 1
                break
            if h[first[u]] == v:
                inverse[j] = u
                break
            k = (k + np.uint64(1)) & mask
    return first[:count].copy(), inverse


@njit(cache=True)
def _column_hash(bits, mul, out):
    """A 64-bit hash of each column of ``bits`` (row ``i`` weighted by ``mul[i]``, wrapping)."""
    out[:] = 0
    for i in range(bits.shape[0]):
        m = mul[i]
        for j in range(bits.shape[1]):
            out[j] += (bits[i, j] ^ (bits[i, j] >> np.uint64(29))) * m


@njit(cache=True)
def _same_columns(bits, first, inverse):
    """Whether every column ``j`` of ``bits`` equals column ``first[inverse[j]]``."""
    for i in range(bits.shape[0]):
        for j in range(bits.shape[1]):
            if bits[i, j] != bits[i, first[inverse[j]]]:
                return False
    return True


#: the share of its producer's write hold (``write_hold``: the cycles a write holds the bank beyond one)
#: that a near consumer's read (:func:`rfmodel.analytic.reuse.near_consumer_share`) spends waiting in its
#: collector, which the collectors' occupancy counts: the read arrives during the write, on average
#: halfway through it (docs/models.md, "Collector occupancy")
COLLECTOR_WRITE_WAIT = 0.5
#: the fixed point's tolerance: the IPC it returns is within this share of the queues' own answer there
STEADY_RTOL = 1e-10
#: at most this many model evaluations a point (bracket and root); a point still open then keeps its
#: bracket's best end (the five workloads of ``rfmodel bench``'s analytic grids on both GPUs took 3-16)
STEADY_MAX_EVALS = 100
_N_OUT = len(STEADY_OUT)


#: the ``tables`` tuple of :func:`_queues` and :func:`_steady`, in order: warps per CTA, the list schedules'
#: warp levels and cycles per instruction, the single-warp and CTA dependence tables, whether writes have
#: their own ports, whether the list schedules and the two-level pool apply, the tables' grids of added
#: collection cycles and memory latencies, the list-schedule cells not built yet and those a pass needed,
#: and the typed collector sets
STEADY_TABLES = (
    "wpc",
    "levels",
    "sched_cpi",
    "chain2",
    "cta_chain2",
    "separate_write",
    "sched",
    "pool",
    "ke",
    "ml",
    "todo",
    "touched",
    "oc_sets",
)


@njit(cache=True, inline="always")
def _queues(ipc, x, i, tables, res):
    """The model's answer at point ``i`` (column of ``x``; rows in the order of ``interval_model``'s
    ``inputs``, resident warps first) with its queues at the pace ``ipc``: the DRAM and bank queues, the
    collector waits, the latency bound and the soft minimum over every bound, written to ``res`` in the
    order of :data:`STEADY_OUT` (``res[0]`` the IPC those queues allow).  ``tables``: the profile's tables
    and the model's switches, as :data:`STEADY_TABLES` names them.  Returns ``False`` when a list-schedule
    cell it reads is not built (``todo``), after marking it in ``touched``."""
    wpc, levels, sched_cpi, chain2, cta_chain2, separate_write, sched, pool = tables[:8]
    ke, ml, todo, touched, oc_sets = tables[8:]
    wp, fixed, issue_inv, q = x[0, i], x[1, i], x[2, i], x[3, i]  # rows 4, 5: the start's bounds
    dram, line_cycles, c_dram, L_mem, c_mem, h2 = x[6, i], x[7, i], x[8, i], x[9, i], x[10, i], x[11, i]
    misses, mshr, r, B, bc, w, bcw = x[12, i], x[13, i], x[14, i], x[15, i], x[16, i], x[17, i], x[18, i]
    P, burst, t_base, n_oc, pools = x[19, i], x[20, i], x[21, i], x[22, i], x[23, i]
    k_add, c_lat, n_cta, pool_warps, claims = x[24, i], x[25, i], x[26, i], x[27, i], x[28, i]
    defer, noc_ej, noc_rep, hit = x[29, i], x[30, i], x[31, i], x[32, i]
    # the anchor scales the bounds the schedule measures (every one but the banks' and collectors'):
    # one factor a_q = anchor^-q on their terms r^-q; bank_inv = rate_bank^-q
    a_q, bank_inv = x[33, i], x[34, i]
    # the share of the instructions with a bank read that still have one under the design's read share
    # (1 in the baseline): the others collect without waiting in a bank's queue
    q_share = x[35, i]
    stall = x[36, i]  # cycles a warp is held at issue per instruction beyond its dependences
    cr = max(wp / wpc, 1e-9)
    const = fixed
    if not (sched and cr <= levels[levels.shape[0] - 1]):  # below the largest count the list schedules
        const += issue_inv  # hold these bounds
    per_pool = n_oc / pools
    # DRAM queueing: an M/D/1 wait at the SM's bandwidth share, scaled by its burstiness
    rho_d = min(ipc * dram * line_cycles, 0.95)
    L_q = L_mem + c_mem * (1.0 - h2) * c_dram * line_cycles * rho_d / (2.0 * (1.0 - rho_d))
    if noc_ej > 0.0:  # and at the SM's interconnect ejection port, which every L1D miss's reply takes
        rho_e = min(ipc * noc_ej, 0.95)
        L_q += c_mem * (1.0 - hit) * c_dram * noc_rep * rho_e / (2.0 * (1.0 - rho_e))
    rate_mshr = mshr / (misses * max(L_q, 1.0)) if misses > 0 else np.inf
    wq = _bank_wait(ipc, r, B, bc, w, bcw, P, burst, defer, claims, separate_write, per_pool, pools)
    t_c = t_base + q_share * wq
    hold = t_c  # allocated at issue, freed at dispatch t_c cycles later (docs/models.md)
    if oc_sets.shape[0] == 0:
        # the closed population's bound first: where it is 0 (no more warps than collectors) the open
        # queue's Erlang C, a loop over the collectors, cannot lower it
        wcol = _closed_wait(wp / pools, per_pool, hold)
        if wcol > 0.0:
            wcol = min(collector_wait_at(per_pool, min(ipc / pools * hold, 0.98 * per_pool), hold), wcol)
        col_inv = _inv_q(n_oc / hold, q)
        rate_col = n_oc / hold
    else:  # each typed set: its own instructions' queue and bound
        wcol = col_inv = 0.0
        rate_col = np.inf
        for j in range(oc_sets.shape[0]):
            per, m = oc_sets[j, 0] * per_pool, oc_sets[j, 1]
            load = min(ipc * m / pools * hold, 0.98 * max(np.floor(per), 1.0))
            cw = _closed_wait(wp / pools, per, hold)
            wcol += m * (min(collector_wait_at(per, load, hold), cw) if cw > 0.0 else cw)
            r_s = oc_sets[j, 0] * n_oc / (hold * m)
            col_inv += _inv_q(r_s, q)
            rate_col = min(rate_col, r_s)
    k = max(t_c - 1.0 + wcol + k_add, 0.0)
    if sched:  # list schedules of the resident CTAs with their issue slots and execution units
        if todo.size > 0 and sched_cells_missing(levels, todo, cr, k, L_q, ke, ml, touched):
            return False
        rate_lat = sched_rate_at(levels, sched_cpi, cr, k, L_q, ke, ml) / c_lat
        t_cta = cr * n_cta / max(rate_lat, 1e-12)
    else:
        t_cta = c_lat * bilinear_at(cta_chain2, k, L_q, ke, ml)
        rate_lat = cr * n_cta / max(t_cta, 1e-9)
    if stall > 0.0:  # a warp held at issue waits whatever its dependences: its CTA takes that much longer
        t_cta += n_cta / wpc * stall
        rate_lat = cr * n_cta / max(t_cta, 1e-9)
    inv_s = const + _inv_q(rate_lat, q) + _inv_q(rate_mshr, q)
    if pool:  # the pool's issuing warps, each at its single-warp pace without memory waits
        chain = max(bilinear_at(chain2, k, 0.0, ke, ml), 1.0)
        inv_s += _inv_q(min(wp, pool_warps) / (c_lat * chain), q)
    inv = a_q * inv_s + bank_inv + col_inv
    if inv == np.inf:
        new = 0.0
    elif inv <= 0.0:
        new = np.inf
    else:
        new = inv ** (-1.0 / q)
    res[0], res[1], res[2], res[3], res[4] = new, wq, t_c, wcol, rate_lat
    res[5], res[6], res[7], res[8] = t_cta, rate_col, rate_mshr, L_q
    return True


@njit(cache=True, inline="always")
def _bank_wait(ipc, r, B, bc, w, bcw, P, burst, defer, claims, separate_write, per_pool, pools):
    """A bank read's mean wait in its bank's queue (cycles) at the pace ``ipc`` (:func:`_queues`' terms)."""
    lam_r = ipc * r / B * bc
    lam_w = 0.0 if separate_write else ipc * w / B * bcw
    if claims > 0.0:  # the design's own accesses take read ports before the reads (priority); in
        lam_w += ipc * claims / B  # the writes' class, exact while writes take a read's time
    wait = read_wait_split_at(min(lam_r, 0.98 * P), min(lam_w, 0.5 * P), P, burst, bcw / bc, defer, bc)
    # a closed population: a read waits behind at most the accesses of the other collectors'
    # instructions of its pool that fall in its bank (their reads and their results' writes),
    # where the open queue's wait grows without that bound near full load (two collectors over a
    # sub-core's four banks)
    closed = max(per_pool - 1.0, 0.0) * (r * bc + w * bcw) * pools / B
    return min(bc * wait, closed, 50.0)


@njit(cache=True)
def _bank_waits(ipc, x, separate_write, out):  # pragma: no cover - compiled
    """:func:`_bank_wait` per point: ``x`` the rows of :data:`BANK_QUEUE` (broadcast flat)."""
    for i in range(ipc.shape[0]):
        out[i] = _bank_wait(
            ipc[i], x[0, i], x[1, i], x[2, i], x[3, i], x[4, i], x[5, i], x[6, i], x[7, i], x[8, i],
            separate_write, x[9, i], x[10, i],
        )  # fmt: skip


#: the bank queue's terms :func:`interval_model` keeps (``bank_queue``) to take its wait at another pace
BANK_QUEUE = ("r", "B", "bc", "w", "bcw", "P", "burst", "defer", "claims", "per_pool", "pools")


def bank_wait_at(queue: dict, ipc) -> np.ndarray:
    """The bank queue's wait (cycles a bank read waits, as :func:`interval_model`'s ``bank_wait``) at the
    pace ``ipc`` instead of the model's own: ``queue`` its ``bank_queue`` output."""
    rows = [queue[k] for k in BANK_QUEUE]
    shape = broadcast_shape((ipc, *rows))
    x = np.stack([np.broadcast_to(np.asarray(v, dtype=np.float64), shape).ravel() for v in rows])
    flat = np.ascontiguousarray(np.broadcast_to(np.asarray(ipc, dtype=np.float64), shape).ravel())
    out = np.empty(flat.shape[0])
    _bank_waits(flat, np.ascontiguousarray(x), bool(queue["separate_write"]), out)
    return out.reshape(shape)


@njit(cache=True)
def _steady(x, out, tables, rtol, evals_out):
    """The steady-state fixed point of :func:`interval_model` per point (column of ``x``, as
    :func:`_queues` reads it): the IPC ``x`` whose queues allow ``g(x) = x`` (:func:`_queues`), found by
    Brent's method on ``h(x) = g(x) - x`` to within ``rtol`` of ``x``.  The queues and the latency grow
    with the pace, so ``g`` falls with ``x`` and ``h`` has one root: ``[x0, g(x0)]`` (or ``[g(x0), x0]``)
    brackets it, widened where ``g`` rises locally (the list schedules are not monotone).  Writes the
    :data:`STEADY_OUT` rows of ``out``: the queues at the root and the IPC they allow.  ``tables``
    (:data:`STEADY_TABLES`): the profile's tables and the model's switches; ``ke`` x ``ml``: the tables'
    grids (:func:`bilinear_at`).

    ``todo`` (shaped as ``sched_cpi``, or empty): the list-schedule cells not built yet; a point whose
    evaluation would read one marks the cells it needs in ``touched`` and stops (its outputs are then
    meaningless: the caller builds the cells and asks again).  ``oc_sets`` (``[k, 2]``, or no rows for one
    pool of collectors): typed collector sets as (share of the collectors, share of the instructions that
    take it); each set queues and bounds its own instructions.  ``evals_out`` (one per point, or empty):
    where given, the evaluations of the queues each point took (``calib/fixed_point_check.py`` reports
    them)."""
    res = np.empty(_N_OUT)
    for i in range(x.shape[1]):
        # one evaluation a pass (one call site, inlined): phase 0 the start, 1 the bracket's other end
        # (widened until h changes sign), 2 Brent's steps, 3 the root's queues when Brent's best end is not
        # the point evaluated last
        xe = max(min(x[4, i], x[5, i]) * 0.3, 1e-3)  # below most answers: a third of the issue or bank bound
        phase = evals = 0
        a = fa = b = fb = c = fc = d = e = 0.0
        while True:
            if not _queues(xe, x, i, tables, res):
                break  # a cell to build first: this point's outputs are meaningless this pass
            evals += 1
            f = res[0] - xe
            if phase == 3 or f == 0.0 or not np.isfinite(res[0]):
                break
            if phase == 0:  # the other end: g(x0), which lies across the root where g falls
                a, fa, b, phase = xe, f, res[0], 1
                xe = b
                continue
            fb = f
            if phase == 1:
                if (fa > 0.0) == (fb > 0.0):  # g rose: widen (up by doubling, down to 0)
                    if evals >= STEADY_MAX_EVALS:
                        break
                    a, fa = b, fb
                    b = 2.0 * b if fa > 0.0 else (0.0 if b < 1e-12 else 0.5 * b)
                    xe = b
                    continue
                c, fc = a, fa
                d = e = b - a
                phase = 2
            # Brent's method on the bracket (b, c): b the best end, a the previous iterate, d the last step
            # and e the one before (inverse quadratic interpolation or secant, bisection when they stall)
            if (fb > 0.0) == (fc > 0.0):
                c, fc = a, fa
                d = e = b - a
            if abs(fc) < abs(fb):
                a, b, c = b, c, b
                fa, fb, fc = fb, fc, fb
            tol = 0.5 * rtol * abs(b) + 1e-15
            m = 0.5 * (c - b)
            # done when the bracket is within the tolerance or the queues' answer at the best end is
            # (STEADY_RTOL's contract; where g falls, |h'| >= 1 and the root is no farther than |h(b)|)
            if abs(m) <= tol or abs(fb) <= tol or evals >= STEADY_MAX_EVALS:
                if b == xe:
                    break
                xe, phase = b, 3
                continue
            if abs(e) >= tol and abs(fa) > abs(fb):
                s = fb / fa
                if a == c:  # secant
                    p, qq = 2.0 * m * s, 1.0 - s
                else:  # inverse quadratic interpolation
                    qa, rb = fa / fc, fb / fc
                    p = s * (2.0 * m * qa * (qa - rb) - (b - a) * (rb - 1.0))
                    qq = (qa - 1.0) * (rb - 1.0) * (s - 1.0)
                if p > 0.0:
                    qq = -qq
                else:
                    p = -p
                if 2.0 * p < min(3.0 * m * qq - abs(tol * qq), abs(e * qq)):
                    e, d = d, p / qq
                else:
                    d = e = m
            else:
                d = e = m
            a, fa = b, fb
            b += d if abs(d) > tol else (tol if m > 0.0 else -tol)
            xe = b
        for j in range(_N_OUT):
            out[j, i] = res[j]
        if evals_out.size > 0:
            evals_out[i] = evals


def _bank_terms(profile, mapping, Bi, P, operand_slots, bank_cycles, bank_write_cycles, shares, loads=None):
    """The banks' side of one instruction for :func:`interval_model`: its reads' serialization over the
    ports (in bank cycles) and its excess over one, a read's and a write's bank occupancy (``bc``, ``bcw``),
    the share of reads that reach the banks, the bank reads and writes per instruction, and the share of the
    instructions with a source that still read a bank (``profile.bank_read_share``).  ``shares``: the read,
    write and collection shares (:func:`interval_model`'s ``read_share``, ``write_share``, ``collect_share``;
    below 1 the last takes off the serialization beyond each instruction's first access, and that access's
    cycles beyond one where none of its reads reaches the banks; ``None``: the read share).  The reads are
    every operand slot (a register named twice is read twice, as the simulator's collectors do) or, for
    designs whose collectors read such a register once, its distinct sources.  ``loads``: ``(table,
    index)``, the distribution of an instruction's largest load on one bank of the reads that do reach the
    banks (:func:`~rfmodel.analytic.profile.load_cycles`; a design that knows which reads it serves), in
    place of the profile's thinned by the read share as if each read were served independently."""
    reads_i = profile.reads_per_instr if operand_slots else profile.distinct_reads_per_instr
    # warp-per-bank: every read of an instruction falls in its warp's one bank, whose load is then the
    # instruction's read count (the one-bank row of the table: E[ceil(k / P)], not ceil(E[k] / P), which
    # charged every instruction of a warp a second cycle on two ports where only those with three sources
    # take it: a warp-per-bank allocator on gemm_micro8x8, volta-v100, 1.73 stall cycles per instruction
    # against 0.15)
    if mapping == "scattered":  # an allocator's banks: each distinct source in any bank of the pool alike
        ser, excess = profile.ser_scattered(Bi, P)
    else:
        ser = profile.ser_ports(1 if mapping == "warp-per-bank" else Bi, P, slots=operand_slots)
        excess = profile.ser_excess(1 if mapping == "warp-per-bank" else Bi, P, slots=operand_slots)
    ser = ser + 0 * np.asarray(Bi, dtype=np.float64)
    excess = excess + 0 * np.asarray(Bi, dtype=np.float64)
    bc = np.maximum(np.asarray(bank_cycles, dtype=np.float64), 1.0)
    # a write's bank occupancy (default: a read's); as a ratio to the read's, so that equal times give
    # exactly the symmetric model
    bcw = bc if bank_write_cycles is None else np.maximum(np.asarray(bank_write_cycles, np.float64), 1.0)
    read_share, write_share, collect_share = shares
    rs = np.clip(np.asarray(read_share, dtype=np.float64), 0.0, 1.0)
    w = profile.writes_per_instr * np.clip(np.asarray(write_share, dtype=np.float64), 0.0, 1.0)
    cs = rs if collect_share is None else np.clip(np.asarray(collect_share, dtype=np.float64), 0.0, 1.0)
    # the bank queue's wait, in the mean collection time, only for the instructions with a source that reaches
    # the banks: those with no register source (``src_count_pmf[0]``) wait in no bank's queue
    pmf = profile.src_count_pmf
    with_source = 1.0 if pmf is None else 1.0 - float(pmf[0])
    q_share = with_source * profile.bank_read_share(rs)
    # the collection: where an operand cache serves some reads (cs < 1), an instruction still takes the
    # collectors' read stage, the first bank cycle, whatever its reads (the simulator dispatches a collector
    # whose operands all hit no sooner); it saves that access's cycles beyond one (slow banks) where none of
    # its reads reaches a bank, and its reads' serialization beyond the first access in proportion
    if loads is not None:  # the reads that reach the banks, as the design knows them
        table, index = loads
        b_l = 1 if mapping == "warp-per-bank" else Bi
        kept_excess = load_cycles(table, b_l, P, beyond_first=True, index=index)
        # of the instructions with a source, those with a read left (P(M >= 1): one cycle on as many ports
        # as the largest load; the design serves the rest whole)
        any_read = load_cycles(table, b_l, float(table.shape[-1]), index=index)
        reach = np.clip(any_read / max(with_source, 1e-12), 0.0, 1.0)
        q_share = with_source * reach
        first = ser - excess
        collect = first * (1.0 + (bc - 1.0) * reach) + kept_excess * bc
        return collect, kept_excess + 0 * excess, bc, bcw, rs, reads_i * rs, w, q_share
    collect = ser * bc * cs
    if np.any(cs < 1.0):
        first = ser - excess  # the instructions with a register source
        kept = first * (1.0 + (bc - 1.0) * profile.bank_read_share(cs)) + excess * bc * cs
        collect = np.where(cs >= 1.0, collect, kept)
    return collect, excess * rs, bc, bcw, rs, reads_i * rs, w, q_share


def _memory_terms(profile, l1d, l2, hit_rate, load_hit_rate, miss_latency, mem_scale):
    """The memory side of :func:`interval_model` per instruction: the L1D's hit rate over every access (what
    it reports) and over the loads' (what they wait for: a store that hits the line its own load just
    brought in shortens no load's latency), the L2 slice's, the lines, the L1D misses a load waits for, the
    lines that need DRAM bandwidth and a load's unloaded latency.  An L1D of no lines (``on``: false) is off:
    every access goes to the L2 slice at once, without the L1D's lookup latency or its MSHRs (as the
    simulator's loads without an L1D).  ``l1d``: the L1D's lines, ways, whether a store miss allocates and
    its hit latency; ``l2``: the L2 slice's lines (None: none), hit latency and ways."""
    l1d_lines, l1d_assoc, walloc, l1_hit_latency = l1d
    l2_lines, l2_hit_latency, l2_assoc = l2
    on = np.asarray(l1d_lines, dtype=np.float64) > 0
    if hit_rate is None:
        size = np.where(on, l1d_lines, 1)
        hit_all = np.where(on, profile.l1d_hit_rate(size, l1d_assoc, write_allocate=walloc), 0.0)
        hit = np.where(on, profile.l1d_hit_rate(size, l1d_assoc, loads=True, write_allocate=walloc), 0.0)
    else:
        hit_all = np.asarray(hit_rate, dtype=np.float64)
        hit = hit_all if load_hit_rate is None else np.asarray(load_hit_rate, dtype=np.float64)
    lookup = np.where(on, l1_hit_latency, 0.0)  # the L1D's latency on a miss's path
    lines = profile.mem_lines_per_instr
    ld_lines = lines if profile.load_lines_per_instr is None else profile.load_lines_per_instr
    misses = ld_lines * (1.0 - hit)  # L1D misses a load waits for
    dram_path = np.asarray(miss_latency, dtype=np.float64) - (l1_hit_latency - lookup)
    if l2_lines is None:
        h2 = hit
        miss_lat = dram_path
    else:  # L2 slice hits: stack distances below the slice's lines (LRU inclusion)
        h2 = np.maximum(profile.l1d_hit_rate(l2_lines, l2_assoc, loads=True), hit)
        l2_path = lookup + np.asarray(l2_hit_latency, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            miss_lat = np.where(
                hit < 1.0,
                ((h2 - hit) * l2_path + (1.0 - h2) * dram_path) / np.maximum(1.0 - hit, 1e-12),
                l2_path,
            )
    dram = ld_lines * (1.0 - h2)  # lines per instruction that need DRAM bandwidth
    L_mem = np.asarray(mem_scale) * (hit * l1_hit_latency + (1.0 - hit) * miss_lat)
    return on, hit_all, hit, h2, lines, ld_lines, misses, dram, L_mem


def _memory_bounds(
    mem, mshr, line_bytes, mem_bytes_per_cycle, noc_reply, noc_request, noc_store, noc_ack, smem_passes=0.0
):
    """The memory side's bounds for :func:`interval_model` from the terms ``mem`` of :func:`_memory_terms`:
    the cycles a line takes on the SM's share of DRAM bandwidth; in warp instructions per cycle, DRAM
    bandwidth, the load/store unit (a line or a shared-memory pass a cycle) and the SM's interconnect ports;
    the ejection port's cycles per instruction (it queues); and the L1D's MSHRs (unbounded without an L1D).
    The ports: a missed load line's request out and reply in, a store line's data out and acknowledgement
    in, in core cycles per instruction.  ``smem_passes``: the load/store unit's cycles of shared-memory
    accesses per instruction, beside its lines."""
    on, _, _, _, lines, ld_lines, misses, dram, _ = mem
    # cycles one line takes on the SM's share of DRAM bandwidth: loads that go to DRAM queue there
    line_cycles = np.asarray(line_bytes, dtype=np.float64) / np.asarray(mem_bytes_per_cycle, dtype=np.float64)
    st_lines = np.maximum(np.asarray(lines, dtype=np.float64) - ld_lines, 0.0)
    noc = [np.asarray(v, dtype=np.float64) for v in (noc_reply, noc_request, noc_store, noc_ack)]
    noc_ej = misses * noc[0] + st_lines * noc[3]
    noc_inj = misses * noc[1] + st_lines * noc[2]
    with np.errstate(divide="ignore"):
        rate_mem = np.where(dram > 0, np.asarray(mem_bytes_per_cycle) / (dram * line_bytes), np.inf)
        lines_a = np.asarray(lines, dtype=np.float64) + smem_passes
        rate_lsu = np.where(lines_a > 0, 1.0 / np.where(lines_a > 0, lines_a, 1.0), np.inf)
        noc_busy = np.maximum(noc_ej, noc_inj)
        rate_noc = np.where(noc_busy > 0, 1.0 / np.where(noc_busy > 0, noc_busy, 1.0), np.inf)
    mshr_n = np.where(on, np.asarray(mshr, dtype=np.float64), np.inf)
    return line_cycles, rate_mem, rate_lsu, rate_noc, noc_ej, mshr_n


def _exec_rates(profile, S, ii, unit_of_class, unit_slots) -> list:
    """The execution units' bounds: the classes that share a unit type share its dispatch slots (one per
    scheduler unless the SM says: analytic.model passes spec.occupancy's map); the load/store classes per
    class."""
    if unit_of_class is None:
        return [
            S / (ii[..., k] * profile.mix[k])
            for k in range(N_OPCLASSES)
            if profile.mix[k] > 0 and ii[..., k] > 0
        ]
    uc = np.asarray(unit_of_class, dtype=np.int64)
    groups: dict = {}
    for k in range(N_OPCLASSES):
        if profile.mix[k] > 0:
            key = ("class", k) if uc[k] == U_MEM else ("unit", int(uc[k]))
            groups.setdefault(key, []).append(k)
    exec_rates = []
    for key, ks in groups.items():
        load = sum(ii[..., k] * profile.mix[k] for k in ks)
        n = S if key[0] == "class" else np.asarray(unit_slots, dtype=np.float64)[key[1]]
        if np.all(np.asarray(load) > 0):
            exec_rates.append(n / load)
    return exec_rates


#: a unit queue's utilization is taken at most this (the instructions waiting for a unit at the solved pace;
#: the soft minimum keeps the pace below every bound, but the anchor may not)
DISPATCH_RHO_MAX = 0.995


@njit(cache=True, inline="always")
def md1_queue(rho):
    """The mean number waiting (not in service) of an M/D/1 queue at utilization ``rho`` (< 1):
    ``Lq = rho^2 / (2 (1 - rho))``; 0 at ``rho <= 0``."""
    if rho <= 0.0:
        return 0.0
    return rho * rho / (2.0 * (1.0 - rho))


@njit(cache=True)
def _dispatch(
    ipc, mem_rate, collecting, pool, load, slots, is_mem, unit_set, set_units, set_share, factor, lsu, out
):
    """:func:`dispatch_queue` per point (compiled): the waiting of each unit row, summed per collector set
    and bounded there by the set's units less its collecting instructions (``pool`` per point where
    ``set_units`` is empty: one pool of collectors)."""
    n_sets = max(set_units.shape[0], 1)
    waiting = np.zeros(n_sets)
    for j in range(ipc.shape[0]):
        waiting[:] = 0.0
        for u in range(load.shape[0]):
            if is_mem[u] and lsu[0] >= 0.0:  # the schedule's queue, at this pace
                rho0 = min(lsu[1], DISPATCH_RHO_MAX)
                w = 0.0
                if rho0 > 0.0:
                    w = lsu[0] * md1_queue(min(lsu[1] * ipc[j] / lsu[2], DISPATCH_RHO_MAX)) / md1_queue(rho0)
            elif is_mem[u]:  # one pipeline, whatever its dispatch registers
                rate = min(1.0 / max(load[u], 1e-12), mem_rate[j])
                w = md1_queue(min(ipc[j] / rate, DISPATCH_RHO_MAX))
            else:  # a pipeline per slot
                w = slots[u] * factor[u] * md1_queue(min(ipc[j] * load[u] / slots[u], DISPATCH_RHO_MAX))
            waiting[unit_set[u]] += w
        total = 0.0
        for s in range(n_sets):
            if set_units.shape[0] == 0:
                free = pool[j] - collecting[j]
            else:
                free = set_units[s] - collecting[j] * set_share[s]
            total += min(waiting[s], max(free, 0.0))
        out[j] = total


def dispatch_rows(mix, ii, unit_of_class, unit_slots, set_of_unit=None, schedulers=None) -> tuple:
    """The static part of :func:`dispatch_queue` (one kernel on one SM): per unit type that takes some of
    the instructions, its unit-cycles per instruction of the kernel (its classes' initiation intervals by
    their shares), its slots, whether it is the load/store pipeline and its collector set (0 with one
    set); per collector set the share of the instructions that take it; and per unit type the factor on its
    M/D/1 queue: where each slot takes the instructions of one of ``schedulers`` (a slot per scheduler),
    which issues at most one a cycle, a slot's arrivals are at most one a cycle, and its queue is the
    discrete-time one with Bernoulli arrivals, ``E[S (S - 1)] / E[S]^2`` of the M/D/1 queue's (the
    Pollaczek-Khinchine mean of the Geo/G/1 queue: ``(s - 1) / s`` with one initiation interval ``s``, no
    queue at one a cycle); 1 otherwise."""
    uc = np.asarray(UNIT_OF_CLASS if unit_of_class is None else unit_of_class, dtype=np.int64)
    ii = np.asarray(ii, dtype=np.float64)
    slots_of = np.asarray(unit_slots, dtype=np.float64)
    loads: dict = {}
    seconds: dict = {}
    shares: dict = {}
    for k in range(N_OPCLASSES):
        if mix[k] > 0:
            u = int(uc[k])
            loads[u] = loads.get(u, 0.0) + ii[k] * mix[k]
            seconds[u] = seconds.get(u, 0.0) + ii[k] * ii[k] * mix[k]
            shares[u] = shares.get(u, 0.0) + float(mix[k])
    units = list(loads)
    factor = np.ones(len(units))
    for j, u in enumerate(units):
        if schedulers is not None and u != U_MEM and slots_of[u] >= schedulers and loads[u] > 0:
            factor[j] = max(shares[u] * (seconds[u] - loads[u]) / (loads[u] * loads[u]), 0.0)
    unit_set = np.array([0 if set_of_unit is None else int(set_of_unit[u]) for u in units], dtype=np.int64)
    share = np.ones(1)  # one set: every instruction
    if set_of_unit is not None:
        share = np.zeros(len(COLLECTOR_SETS))
        for k in range(N_OPCLASSES):
            share[int(set_of_unit[uc[k]])] += float(mix[k])
    return (
        np.array([loads[u] for u in units], dtype=np.float64),
        np.array([slots_of[u] for u in units], dtype=np.float64),
        np.array([u == U_MEM for u in units], dtype=np.bool_),
        unit_set,
        share,
        factor,
    )


def dispatch_queue(rows, ipc, mem_rate, collecting, units, set_units=None, lsu=None):
    """Instructions per SM that hold a collector with their operands read, waiting for their execution unit
    (the simulator's dispatch stage: a collector frees itself when its instruction enters the unit, or the
    unit busy, the unit's dispatch register, one a scheduler's slot).  At the pace ``ipc`` each slot of a
    unit type is an M/D/1 queue (arrivals ``ipc x mix / slots``, its initiation interval each; the
    classes grouped by the unit they issue to), its whole queue counted in collectors (:func:`md1_queue`:
    the instructions come in runs of one unit's, burstier than the queue's Poisson arrivals, which the
    dispatch register's share offsets; docs/models.md, "Collector occupancy").  The memory classes share
    one load/store pipeline, a queue of its own whose pace is bounded also by ``mem_rate`` (the lines a
    cycle and the MSHRs: the unit holds a load it has no MSHR for).  The
    waiting fill at most the collectors of their set that no collecting instruction holds: ``units`` less
    ``collecting`` (the instructions collecting at once) with one pool, else per set ``set_units`` less
    ``collecting`` times the set's share of the instructions.  ``rows``: :func:`dispatch_rows`.  ``lsu``:
    ``(waiting, busy, pace)`` of the profile's issue schedule (``WorkloadProfile.sched_lsu`` and
    ``sched_ipc``), whose load/store queue holds the warps' phases and runs that make the memory
    instructions' arrivals bursty: the load/store pipeline's waiting is then the schedule's, scaled as an
    M/D/1 queue's from the schedule's utilization to the one at the pace ``ipc`` (the same work an
    instruction); without, the M/D/1 queue at the pipeline's rate."""
    load, slots, is_mem, unit_set, share, factor = rows
    if set_units is None:
        set_units, share = np.zeros(0), np.ones(1)
        unit_set = np.zeros_like(unit_set)
    ipc = np.asarray(ipc, dtype=np.float64)
    shape = broadcast_shape((ipc, mem_rate, collecting, units))
    flat = [
        np.ascontiguousarray(np.broadcast_to(v, shape), dtype=np.float64).ravel()
        for v in (ipc, mem_rate, collecting, units)
    ]
    out = np.empty(flat[0].shape[0])
    set_units = np.asarray(set_units, dtype=np.float64)
    sched = np.full(3, -1.0) if lsu is None else np.asarray(lsu, dtype=np.float64)
    _dispatch(*flat, load, slots, is_mem, unit_set, set_units, share, factor, sched, out)
    return out.reshape(shape)


def _steady_solve(
    profile, args, wpc, chain2, cta_chain2, separate_write, sched, pool, rtol, oc_sets
) -> tuple:
    """Steady-state IPC at the points ``args`` (resident warps, then :func:`interval_model`'s inputs; the
    compiled fixed point over the queues, :func:`_steady`): ``ipc, wq, t_c, wcol, rate_lat, t_cta, rate_col,
    rate_mshr, L_q``.  The list-schedule cells the fixed point reads are built first (a pass that stops at a
    cell not built yet names it; each cell is exact, so the answer equals the one on a table built at
    once)."""
    if sched:
        levels, sched_cpi, pending = profile.sched_view()
    else:
        levels, sched_cpi, pending = np.ones(1), np.ones((1, 1, 1)), None
    shape = broadcast_shape(args)
    x = np.empty((len(args), *shape))
    for i, v in enumerate(args):
        x[i] = v
    x = x.reshape(len(args), -1)
    shared = unique_columns(x)  # each distinct point once
    xs = x if shared is None else shared[0]
    out = np.empty((len(STEADY_OUT), xs.shape[1]))
    built = False
    while True:
        todo = _NO_CELLS if pending is None else pending
        touched = np.zeros(todo.shape, dtype=np.uint8)
        tables = (wpc, levels, sched_cpi, chain2, cta_chain2, separate_write, sched, pool)
        tables += (CHAIN2_EXTRA, profile.mem_lat_grid(), todo, touched, oc_sets)
        _steady(xs, out, tables, rtol, _NO_EVALS)
        if not touched.any():
            if built:  # the cells of every round, on disk at once
                profile.persist()
            if shared is not None:
                out = out[:, shared[1]]
            return tuple(o.reshape(shape) for o in out)
        profile.build_sched(touched.astype(np.bool_), persist=False)
        built = True
        _, sched_cpi, pending = profile.sched_view()


def broadcast_shape(values) -> tuple:
    """``np.broadcast_shapes`` of the shapes of ``values`` (arrays, numbers) over their distinct shapes only:
    the interval model's tens of inputs a call have a few (numpy builds an array for each one it is given)."""
    shapes = set()
    for v in values:
        s = getattr(v, "shape", None)  # arrays and numpy's scalars
        if s is None:
            s = () if isinstance(v, float | int) else np.shape(v)
        shapes.add(s)
    shapes.discard(())
    if len(shapes) <= 1:
        return shapes.pop() if shapes else ()
    return np.broadcast_shapes(*shapes)


def _waves(steady, warps, inputs, wpc, n_cta, ctas_total, n_instrs, tail_weight):
    """IPC and cycles over the kernel's waves: full waves of resident CTAs at ``steady(warps)``, then a
    partial wave (the tail) with fewer warps, weighed against the steady state alone by ``tail_weight``;
    both steady states in one pass (a leading axis of two), returned as ``steady``'s outputs."""
    cr = np.maximum(np.floor(warps / wpc), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        full = np.where(cr > 0, np.floor(ctas_total / np.maximum(cr, 1)), 0.0)
        rem = ctas_total - full * cr
    both = np.empty((2, *broadcast_shape((warps, *inputs))))
    # a kernel of whole waves has no tail: its tail column repeats the full one, which the fixed point's
    # distinct columns then solve once (its answer is not read: the tail's cycles are 0 there)
    both[0], both[1] = warps, np.where(rem > 0, np.maximum(rem * wpc, wpc), warps)
    res = steady(both)
    ipc_w, ipc_rem = res[0][0], res[0][1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_waves = full * cr * n_cta / ipc_w + np.where(rem > 0, rem * n_cta / ipc_rem, 0.0)
        t_steady = ctas_total * n_cta / ipc_w
    beta = np.asarray(tail_weight)
    n = np.asarray(n_instrs, dtype=np.float64)
    cycles = ((1.0 - beta) * t_steady + beta * t_waves) * n / (ctas_total * n_cta)
    return np.where(warps > 0, n / cycles, 0.0), cycles, res


def _greedy_banks(profile, B, S, warps, b_w, greedy_spread, sub_core=False):
    """The banks that serve a greedy scheduler's warp-per-bank issue: a greedy scheduler issues from one
    warp while it can; every instruction of that warp holds the warp's one bank ``b_w`` = (reads + writes)
    / ports cycles, and the warp alone needs c1 cycles per instruction for its dependences without waiting
    on memory (chain2 at that collection time and no load latency): about 1 + k c1 / b warps share a
    scheduler's issue at once (k = ``greedy_spread``, calibrated), and only their banks serve it.  A warp
    that waits on a load hands the scheduler to another warp, which then issues greedily in its turn, so
    however long the load takes it puts no more warps' instructions in the collectors at once (with the
    loads' latency in c1, sgemm_tiled on fermi-gtx480 read as 3.8 warps a scheduler where its simulated
    IPC, 0.93 at 3 bank cycles an instruction, is that of about 1.4; docs/models.md).  Those warps' banks
    are distinct only where a scheduler's warps have a bank each: its warps (slots congruent mod S) fall in
    B / gcd(S, B) banks (a sub-core's in its own B / S), m to a bank where they are more, and of the
    ``w`` warps of a scheduler the n it issues from hit ``held (1 - (1 - n / w)^m)`` banks (each bank holds
    m of them; the n drawn as if independently): on 4 banks the 8 warps of a fermi-gtx480 scheduler (the
    16 slots' one parity) share 2 banks."""
    b_w = np.maximum(b_w, 1e-9)
    c1 = profile.chain_at2(b_w, np.zeros_like(b_w))
    spread = 1.0 + np.asarray(greedy_spread, dtype=np.float64) * c1 / b_w
    # the banks a scheduler's warps hold, its warps, and the banks its ``spread`` issuing warps hit
    Si = np.maximum(np.rint(S), 1).astype(np.int64)
    Bi = np.maximum(np.rint(B), 1).astype(np.int64)
    banks_s = np.where(sub_core, Bi / Si, Bi / np.gcd(Si, Bi))
    w_s = np.maximum(np.asarray(warps, dtype=np.float64) / S, 1.0)
    held = np.maximum(np.minimum(banks_s, w_s), 1.0)
    n_s = np.minimum(spread, w_s)
    hit = held * (1.0 - (1.0 - n_s / w_s) ** (w_s / held))
    return np.minimum(B, S * hit)


def _model_arrays(coef, warps, schedulers, banks, ports_per_bank, collectors, interleave_banks):
    """The calibration for :func:`interval_model` (``coef`` over :func:`coefficient_defaults`) and its
    softmin exponent, and the SM's sizes as float arrays: the resident warps, schedulers, banks, ports per
    bank (at least one) and collectors; and the banks the registers interleave over."""
    c = {**coefficient_defaults(), **(coef or {})}
    q = np.asarray(c["softmin_q"], dtype=np.float64)
    warps = np.asarray(warps, dtype=np.float64)
    S = np.asarray(schedulers, dtype=np.float64)
    B = np.asarray(banks, dtype=np.float64)
    P = np.maximum(np.asarray(ports_per_bank, dtype=np.float64), 1.0)
    N_oc = np.asarray(collectors, dtype=np.float64)
    Bi = banks if interleave_banks is None else interleave_banks
    return c, q, warps, S, B, P, N_oc, Bi


def _bank_bound(B, P, bc, r, w, wr, separate_write_ports, bank_claims):
    """The banks' throughput bound for :func:`interval_model` (warp instructions per cycle): the ports of
    every bank over each instruction's accesses (its reads, its writes unless they have ports of their own,
    and the design's ``bank_claims``), in bank cycles; and those claims (at least 0)."""
    per_bank_access = r if separate_write_ports else r + w * wr
    claims = np.maximum(np.asarray(bank_claims, dtype=np.float64), 0.0)
    per_bank_access = per_bank_access + claims
    rate_bank = B * P / np.maximum(per_bank_access, 1e-9) / bc
    return claims, rate_bank


def _bank_queue_terms(c, Bi, rotations, bc, bcw, write_hold, rs):
    """The bank queue's burstiness for :func:`interval_model` (the warps' shared rotations and slow banks'
    requests that queue across cycles), and the cycles a consumer waits behind its producer's write
    (``write_hold``, default ``bcw - 1``) for the reads that reach the banks (``rs``)."""
    rot = np.asarray(Bi if rotations is None else rotations, dtype=np.float64)
    burst = np.asarray(c["queue_burst"]) * (1.0 + np.asarray(c["align_burst"]) / np.maximum(rot, 1.0))
    # a one-cycle arbiter resolves same-cycle requests (serialization above); requests queue across
    # cycles when an access holds its bank for several
    burst = burst + np.asarray(c["slow_queue"]) * (1.0 - 1.0 / np.maximum(bc, bcw))
    # a result's register sits in the bank its consumer reads: with slow banks (bank_cycles > 1) the
    # consumer's read starts only after the producer's write has held that bank, bank_cycles - 1 cycles
    # beyond the one-cycle write of the simulator's own banks (measured on a dependent chain:
    # tests/test_analytic.py)
    hold = bcw - 1.0 if write_hold is None else np.maximum(np.asarray(write_hold, dtype=np.float64), 0.0)
    write_hold = hold * rs  # a consumer that finds its operand in an operand cache does not wait
    return burst, write_hold


def _cta_shape(profile):
    """A CTA's warps and instructions and the kernel's CTAs (at least one each), as floats."""
    wpc = float(max(profile.warps_per_cta, 1))
    n_cta = profile.instrs_per_warp * wpc  # instructions of one CTA
    ctas_total = float(max(profile.ctas, 1))
    return wpc, n_cta, ctas_total


def _fixed_inv(q, rate_mem, rate_lsu, rate_noc, rate_bank, rate_iss, exec_rates):
    """The inverse softmin terms ``r^-q`` of :func:`interval_model`'s fixed bounds (those that do not move
    with the fixed point): the memory side's (DRAM, load/store unit, interconnect) summed, the banks' and,
    apart, the issue and units' summed."""
    with np.errstate(divide="ignore"):
        # the bounds that do not move with the fixed point, as softmin terms r^-q; the issue and unit bounds
        # apart, as the list schedules hold them up to the largest tabulated CTA count
        fixed, bank_inv = sum(np.power(x, -q) for x in (rate_mem, rate_lsu, rate_noc)), rate_bank**-q
        issue_inv = sum(np.power(x, -q) for x in (rate_iss, *exec_rates))
    return fixed, bank_inv, issue_inv


def _chain_tables(profile, pool, sched):
    """The dependence tables the fixed point reads: the single-warp ``chain2`` (it bounds the two-level
    scheduler's ``pool``) and a CTA's critical path (without list schedules, ``sched``); placeholders where
    unused."""
    # the single-warp table bounds the two-level scheduler's pool; a CTA's critical path without schedules
    chain2 = _table(profile.need("chain2").chain2 if pool else None)
    cta_chain2 = _table(profile.cta_chain2 if not sched else None)
    return chain2, cta_chain2


def _steady_solver(
    profile, inputs, wpc, chain2, cta_chain2, separate_write_ports, sched, pool, rtol, collector_sets
):
    """:func:`interval_model`'s steady state as a function of the resident warps (``steady(warps)``, as
    :func:`_waves` calls it): :func:`_steady_solve` at those warps and ``inputs``, with the typed collector
    sets ``collector_sets`` (``None``: one pool)."""
    oc_sets = np.zeros((0, 2)) if collector_sets is None else np.ascontiguousarray(collector_sets, np.float64)

    def steady(wp):
        return _steady_solve(
            profile,
            (wp, *inputs),
            wpc,
            chain2,
            cta_chain2,
            bool(separate_write_ports),
            sched,
            pool,
            float(rtol),
            oc_sets,
        )

    return steady


def _interval_result(
    ipc, cycles, res, warps, c, ser, excess, bc, r, rate_iss, rate_bank, rate_mem, rate_lsu, hit_all, hit
):
    """:func:`interval_model`'s dict of arrays: the IPC and cycles over the waves, the steady state's
    queues, waits and bounds (``res``, :data:`STEADY_OUT`), the bank conflict stall per instruction and the
    fixed bounds and hit rates, each broadcast to the IPC's shape."""
    ipc_w, wq, t_c, wcol, rate_lat, t_cta, rate_col, rate_mshr, L_q = (o[0] for o in res)
    conflict = np.asarray(c["ser_stall"]) * excess * bc + np.asarray(c["queue_stall"]) * r * wq
    return {
        "ipc": ipc,
        "cycles": np.where(warps > 0, cycles, np.inf),
        "ipc_steady": ipc_w,
        "t_collect": t_c,
        "bank_wait": wq,
        "collector_wait": wcol,
        "ser": ser + 0 * ipc,
        "conflict_per_instr": conflict + 0 * ipc,
        "rate_latency": rate_lat,
        "rate_issue": rate_iss + 0 * ipc,
        "rate_bank": rate_bank + 0 * ipc,
        "rate_collectors": rate_col + 0 * ipc,
        "rate_dram": rate_mem + 0 * ipc,
        "rate_mshr": rate_mshr + 0 * ipc,
        "rate_lsu": rate_lsu + 0 * ipc,
        "load_latency": L_q + 0 * ipc,
        "l1d_hit_rate": hit_all + 0 * ipc,
        "load_hit_rate": hit + 0 * ipc,
        "cta_critical_path": t_cta,
        "warps": warps,
    }


def interval_model(
    profile: WorkloadProfile,
    sm: SmTerms,
    effects=NO_EFFECTS,
    *,
    coef: dict | None = None,
    anchor=1.0,
    rtol=STEADY_RTOL,
):
    """Calibrated interval/occupancy model of one SM (equations in docs/models.md): ``sm`` the SM as the
    design point resolves it, ``effects`` the design's changes to the model (:mod:`rfmodel.analytic.terms`;
    the default changes nothing).

    Every field broadcasts; ``coef`` maps the names of :data:`INTERVAL_COEFFICIENTS` to scalars or arrays
    (the calibration).  Of the design's terms: ``extra_collect`` adds cycles to every operand collection
    (designs that read operands from elsewhere); ``bank_cycles``: cycles one bank access holds its bank and
    takes to deliver (slow main-RF banks), serialization, queueing and the bank bound scale with it;
    ``bank_write_cycles``: cycles a write holds its bank (default ``bank_cycles``; slow cells' are longer):
    the writes' share of the bank bound and queue, and the wait of a consumer behind its producer's write
    (``write_hold``: that wait in cycles beyond a one-cycle write, default ``bank_write_cycles - 1``; a write
    buffer that serves the value shortens it); ``write_defer``: the share of the writes a write buffer holds
    back until no read waits (they queue behind the reads instead of before them); ``read_share``: the
    share of reads that reach the banks (the rest an operand cache serves; an instruction none of whose
    reads reaches them waits in no bank queue: ``bank_read_share``); ``collect_share``: the share of an
    instruction's reads' serialization beyond its first access that remains in its collection time (the
    collectors' read stage stays; default ``read_share``; 1 where the reads that do not reach these banks
    take a bank's time elsewhere); ``bank_loads``: the bank loads of the reads that reach the banks where
    the design knows them (:func:`_bank_terms`; given, it replaces ``collect_share``); ``operand_slots``:
    every operand slot is a bank read (a register named twice by one instruction is read twice, as the
    simulator's collectors do), ``False`` for designs that read it once (distinct sources); ``bank_claims``:
    accesses per instruction of the design's own that take the banks' read ports before the reads (the
    Cache-Emulated RF's line lookups in its tag banks): they join the writes' priority class in the read
    queue and the bank bound; ``extra_latency``: cycles added to every result's latency outside the
    collectors (a pipeline stage between collection and execution, e.g. a tag check whose data access
    follows); ``issue_stall``: cycles per instruction a warp is held at issue whatever its dependences (a
    register refilled from the memory side before its instruction issues): each warp's, and so its CTA's,
    time grows by its instructions' stalls in the latency bound; ``greedy_spread``: with ``mapping =
    "warp-per-bank"`` and greedy-then-oldest schedulers a scheduler's instructions come from ``1 +
    greedy_spread * c1 / b`` warps at once, served by their banks alone; ``l1d_hits``: the L1D's hit rates
    (of every access, of the loads) where the design computes them (default: from the SM's L1D).
    ``anchor``: the factor on the bounds the schedule measures (all but the banks' and collectors';
    docs/models.md, "Anchor"), or a callable of the L1D hit rate and the resident warps.  Returns a dict of
    arrays (``ipc``, ``cycles``, ``bank_conflict_stall_cycles`` per instruction as ``conflict_per_instr``,
    bounds, waits).
    """
    e = effects
    hit_rate, load_hit_rate = (None, None) if e.l1d_hits is None else (e.l1d_hits[0], e.l1d_hits[1])
    c, q, warps, S, B, P, N_oc, Bi = _model_arrays(
        coef, sm.warps, sm.schedulers, sm.banks, sm.ports_per_bank, sm.collectors, sm.interleave_banks
    )
    shares = (e.read_share, e.write_share, e.collect_share)
    ser, excess, bc, bcw, rs, r, w, q_share = _bank_terms(
        profile, sm.mapping, Bi, P, e.operand_slots, e.bank_cycles, e.bank_write_cycles, shares, e.bank_loads
    )
    wr = bcw / bc
    l1d = (sm.l1d_lines, sm.l1d_assoc, sm.l1d_write_allocate, sm.l1_hit_latency)
    l2 = (sm.l2_lines, sm.l2_hit_latency, sm.l2_assoc)
    mem = _memory_terms(profile, l1d, l2, hit_rate, load_hit_rate, sm.miss_latency, c["mem_scale"])
    _, hit_all, hit, h2, _, _, misses, dram, L_mem = mem  # (the L1D switch and the lines: _memory_bounds)
    if sm.mapping == "warp-per-bank" and sm.greedy and profile.has("chain2"):
        B = _greedy_banks(profile, B, S, warps, (r + w * wr) * bc / P, e.greedy_spread, sm.sub_core)
    line_cycles, rate_mem, rate_lsu, rate_noc, noc_ej, mshr_n = _memory_bounds(
        mem,
        sm.mshr,
        sm.line_bytes,
        sm.mem_bytes_per_cycle,
        sm.noc_reply,
        sm.noc_request,
        sm.noc_store,
        sm.noc_ack,
        profile.smem_passes_per_instr,
    )
    # throughput bounds (warp instructions per cycle)
    rate_iss = S * np.asarray(sm.issue_width, dtype=np.float64)
    claims, rate_bank = _bank_bound(B, P, bc, r, w, wr, sm.separate_write_ports, e.bank_claims)
    ii = np.asarray(sm.initiation, dtype=np.float64)
    exec_rates = _exec_rates(profile, S, ii, sm.unit_of_class, sm.unit_slots)
    pools = np.where(np.asarray(sm.sub_core), S, 1.0)
    burst, write_hold = _bank_queue_terms(c, Bi, sm.rotations, bc, bcw, e.write_hold, rs)
    # a near consumer's read meets its producer's write at the bank, in its collector (the occupancy's)
    write_wait = COLLECTOR_WRITE_WAIT * near_consumer_share(profile) * profile.reads_per_instr * write_hold
    wpc, n_cta, ctas_total = _cta_shape(profile)

    sched = profile.sched_cpi is not None
    defer = np.clip(np.asarray(e.write_defer, dtype=np.float64), 0.0, 1.0)
    fixed, bank_inv, issue_inv = _fixed_inv(q, rate_mem, rate_lsu, rate_noc, rate_bank, rate_iss, exec_rates)
    pool = sm.pool_warps is not None
    chain2, cta_chain2 = _chain_tables(profile, pool, sched)
    inputs = (
        fixed,
        issue_inv,
        q,
        rate_iss,
        rate_bank,
        dram,
        line_cycles,
        np.asarray(c["dram_queue"]),
        L_mem,
        np.asarray(c["mem_scale"]),
        h2,
        misses,
        mshr_n,
        r,
        B,
        bc,
        w,
        bcw,
        P,
        burst,
        np.asarray(sm.rf_latency, dtype=np.float64) + ser + np.asarray(e.extra_collect, dtype=np.float64),
        N_oc,
        pools,
        np.asarray(c["pipe_extra"]) + write_hold + np.asarray(e.extra_latency, dtype=np.float64),
        np.asarray(c["latency_scale"]),
        n_cta,
        sm.pool_warps if pool else 0.0,
        claims,
        defer,
        noc_ej,
        np.asarray(sm.noc_reply, dtype=np.float64),
        hit,
        np.asarray(anchor(hit_all, warps) if callable(anchor) else anchor, np.float64) ** -q,
        bank_inv,
        q_share,
        np.asarray(e.issue_stall, dtype=np.float64),
    )

    sets = sm.collector_sets
    steady = _steady_solver(
        profile, inputs, wpc, chain2, cta_chain2, sm.separate_write_ports, sched, pool, rtol, sets
    )
    ipc, cycles, res = _waves(
        steady, warps, inputs, wpc, n_cta, ctas_total, profile.n_instrs, c["tail_weight"]
    )
    out = _interval_result(
        ipc, cycles, res, warps, c, ser, excess, bc, r, rate_iss, rate_bank, rate_mem, rate_lsu, hit_all, hit
    )
    out["write_wait"] = write_wait  # (its own shape: the banks' timing over the grid)
    queue = (r, B, bc, w, bcw, P, burst, defer, claims, np.asarray(N_oc, dtype=np.float64) / pools, pools)
    separate = bool(sm.separate_write_ports)
    out["bank_queue"] = dict(zip(BANK_QUEUE, queue, strict=True), separate_write=separate)
    out["bank_queue"]["stall"] = np.asarray(c["queue_stall"]) * r  # bank_wait_at: at a design's own pace
    out["conflict_serial"] = np.asarray(c["ser_stall"]) * excess * bc
    return out
