"""The SM's resource rules that every engine shares: CUDA occupancy and the op-class-to-unit map.

Both the cycle simulator and the analytic models read these; they describe the SM (its spec), not
either engine.
"""

from __future__ import annotations

import numpy as np

from rfmodel.spec.sm import OP_CLASS_NAMES

#: execution-unit types (one pipeline of each per scheduler; ``mem`` is the SM's one load/store unit)
UNIT_NAMES = ("int", "sp", "dp", "sfu", "tensor", "mem", "branch")
U_INT, U_SP, U_DP, U_SFU, U_TENSOR, U_MEM, U_BRA = range(len(UNIT_NAMES))
_UNIT_BY_CLASS = {
    "int": U_INT,
    "fp32": U_SP,
    "fp64": U_DP,
    "sfu": U_SFU,
    "tensor": U_TENSOR,
    "branch": U_BRA,
    "barrier": U_INT,
    "exit": U_INT,
    "misc": U_INT,
}
#: the execution unit of each op class (index: ``OP_CLASS_NAMES`` order = ``OpClass`` values); memory
#: classes go to the load/store unit
UNIT_OF_CLASS = tuple(_UNIT_BY_CLASS.get(c, U_MEM) for c in OP_CLASS_NAMES)


def units_of_classes(sm) -> np.ndarray:
    """The execution unit each op class issues to on ``sm`` (``UNIT_OF_CLASS`` with its ``exec_units``'
    substitutions: FP64 on the SFU without DP units, integer and miscellaneous instructions on the SP
    without INT units, branches with the integer instructions without a branch unit, tensor instructions
    on the SP without tensor units)."""
    out = np.array(UNIT_OF_CLASS, dtype=np.int64)
    e = sm.exec_units
    if e is None:
        return out
    int_unit = U_INT if e.int > 0 else U_SP
    sub = {
        U_INT: int_unit,
        U_DP: U_DP if e.dp > 0 else U_SFU,
        U_TENSOR: U_TENSOR if e.tensor > 0 else U_SP,
        U_BRA: U_BRA if e.branch > 0 else int_unit,
    }
    return np.array([sub.get(int(u), int(u)) for u in out], dtype=np.int64)


#: operand-collector sets (the fields of :class:`rfmodel.spec.sm.CollectorSpec`; the simulator's set index)
COLLECTOR_SETS = ("gen", "sp", "sfu", "mem", "tensor", "dp", "int")
CS_GEN, CS_SP, CS_SFU, CS_MEM, CS_TENSOR, CS_DP, CS_INT = range(len(COLLECTOR_SETS))
# the typed collector set of each unit type (GPGPU-Sim's ports: INT on SP and FP64 on SFU when absent)
_UNIT_TYPED_SET = {
    U_INT: (CS_INT, CS_SP),
    U_SP: (CS_SP,),
    U_DP: (CS_DP, CS_SFU),
    U_SFU: (CS_SFU,),
    U_TENSOR: (CS_TENSOR,),
    U_MEM: (CS_MEM,),
    U_BRA: (CS_INT, CS_SP),
}


def unit_collector_sets(sm) -> np.ndarray:
    """``[unit type, 2]``: the collector set (:data:`COLLECTOR_SETS` index) an instruction of each unit type
    takes first, and its fallback (-1: none): its typed set if the SM has one (else the typed set GPGPU-Sim
    routes it to), then the generic set if the SM has generic units; with neither, the first set that has
    units."""
    counts = [getattr(sm.collectors, name) for name in COLLECTOR_SETS]
    out = np.full((len(UNIT_NAMES), 2), -1, dtype=np.int64)
    for u, typed in _UNIT_TYPED_SET.items():
        chain = [s for s in typed if counts[s] > 0][:1]
        if counts[CS_GEN] > 0:
            chain.append(CS_GEN)
        if not chain:  # no typed and no generic units: borrow the first set that has units
            chain = [next(s for s in (CS_SP, CS_INT, CS_SFU, CS_MEM, CS_DP, CS_TENSOR) if counts[s] > 0)]
        out[u, : len(chain)] = chain[:2]
    return out


def collector_set_shares(sm, mix) -> np.ndarray | None:
    """``[k, 2]``: per collector set that serves instructions, its share of the SM's collector units and the
    share of the instructions (op-class ``mix``) that take it, on an SM whose collectors are typed only
    (each unit type has one set: :func:`unit_collector_sets`); ``None`` with generic units (one pool serves
    every instruction)."""
    c = sm.collectors
    if c.gen > 0 or not c.specialized:
        return None
    first = unit_collector_sets(sm)[:, 0]
    share = np.zeros(len(COLLECTOR_SETS))
    for k, u in enumerate(units_of_classes(sm)):
        share[first[u]] += float(mix[k])
    rows = [
        (getattr(c, COLLECTOR_SETS[s]) / c.total, share[s])
        for s in range(len(COLLECTOR_SETS))
        if share[s] > 0
    ]
    return np.array(rows, dtype=np.float64).reshape(-1, 2)


_UNIT_FIELD = {U_SP: "sp", U_SFU: "sfu", U_DP: "dp", U_INT: "int", U_TENSOR: "tensor", U_BRA: "branch"}


def unit_slots(sm) -> np.ndarray:
    """Dispatch slots of each unit type (``UNIT_NAMES`` order): ``min(width, units, schedulers)`` of the
    SM's ``exec_units`` (scheduler ``s`` uses slot ``s mod slots``); one per scheduler without them, and
    for a type with no units (its instructions go elsewhere).  The load/store unit is one per SM; its
    dispatch registers are ``min(mem_width, schedulers)`` (one per scheduler without ``exec_units``)."""
    S = sm.schedulers_per_sm
    out = np.full(len(UNIT_NAMES), S, dtype=np.int64)
    e = sm.exec_units
    if e is not None:
        for u, f in _UNIT_FIELD.items():
            n = getattr(e, f)
            if n > 0:
                out[u] = max(min(getattr(e, f + "_width"), n, S), 1)
        out[U_MEM] = max(min(e.mem_width, S), 1)
    return out


def class_initiations(sm) -> np.ndarray:
    """Initiation interval of each op class on its unit: the latency table's, times ``slots / units``
    rounded up (at least 1) where more units than dispatch slots take turns behind a slot."""
    ii = np.array([int(v) for v in sm.latency.initiations()], dtype=np.int64)
    e = sm.exec_units
    if e is None:
        return ii
    units = units_of_classes(sm)
    slots = unit_slots(sm)
    for c, u in enumerate(units):
        f = _UNIT_FIELD.get(int(u))
        if f is not None:
            n = getattr(e, f)
            ii[c] = max(1, -(-max(int(ii[c]), 1) * int(slots[u]) // n))
    return ii


#: the SM's per-CTA launch limits that both engines apply (a kernel over one cannot launch)
CTA_LIMITS = ("max_threads_per_cta", "shmem_per_cta_bytes")
#: the register limits a kernel's code was compiled under: traces are run as compiled (a compiler would
#: spill to meet them; none recompiles here), so both engines run a kernel over them with its own registers
#: and say so (:func:`limits_not_applied`); ``max_regs_per_thread`` also sizes CORF's renaming table
REGISTER_LIMITS = ("max_regs_per_thread", "regs_per_cta_limit")


def occupancy_warps(
    regs_per_thread,
    threads_per_cta,
    smem_per_cta,
    ctas_available,
    *,
    regs_per_sm,
    max_warps,
    max_ctas,
    max_threads,
    smem_per_sm,
    alloc_granularity=256,
    warp_size=32,
    cta_limits=None,
):
    """Resident warps per SM (0 when one CTA does not fit).

    ``cta_limits``: an SM spec whose per-CTA launch limits (:data:`CTA_LIMITS`) also apply: a kernel over
    one cannot launch (0 warps; :func:`no_fit_reason` names the limit)."""
    rpt = np.asarray(regs_per_thread, dtype=np.int64)
    wpc = -(-np.asarray(threads_per_cta, dtype=np.int64) // warp_size)
    regs_per_warp = -(-(rpt * warp_size) // alloc_granularity) * alloc_granularity
    by_regs = np.asarray(regs_per_sm, dtype=np.int64) // np.maximum(regs_per_warp * wpc, 1)
    if cta_limits is not None:
        smem_cta = np.asarray(smem_per_cta, dtype=np.int64)
        launches = (np.asarray(threads_per_cta, dtype=np.int64) <= cta_limits.max_threads_per_cta) & (
            smem_cta <= cta_limits.shmem_per_cta_bytes
        )
        by_regs = np.where(launches, by_regs, 0)
    by_warps = np.asarray(max_warps, dtype=np.int64) // wpc
    by_threads = np.asarray(max_threads, dtype=np.int64) // (wpc * warp_size)
    smem = np.asarray(smem_per_cta, dtype=np.int64)
    by_smem = np.where(smem > 0, np.asarray(smem_per_sm, dtype=np.int64) // np.maximum(smem, 1), 1 << 30)
    ctas = np.minimum.reduce(
        np.broadcast_arrays(
            by_regs,
            by_warps,
            by_threads,
            by_smem,
            np.asarray(max_ctas, np.int64),
            np.asarray(ctas_available, np.int64),
        )
    )
    return np.maximum(ctas, 0) * wpc


def cta_registers(regs_per_thread, threads_per_cta, sm) -> int:
    """Registers one CTA is allocated on ``sm``: its warps' registers, each warp's rounded up to the SM's
    allocation granularity."""
    wpc = -(-int(threads_per_cta) // sm.threads_per_warp)
    g = sm.reg_alloc_granularity
    return wpc * (-(-(int(regs_per_thread) * sm.threads_per_warp) // g) * g)


def limits_not_applied(regs_per_thread, threads_per_cta, sm) -> list[str]:
    """The :data:`REGISTER_LIMITS` of ``sm`` that a kernel's code exceeds, each in words (empty: none)."""
    need = cta_registers(regs_per_thread, threads_per_cta, sm)
    out = []
    if int(regs_per_thread) > sm.max_regs_per_thread:
        out.append(f"{regs_per_thread} registers per thread > max_regs_per_thread = {sm.max_regs_per_thread}")
    if need > sm.regs_per_cta_limit:
        out.append(f"{need} registers per CTA > regs_per_cta_limit = {sm.regs_per_cta_limit}")
    return out


def rf_demand(regs_per_thread, threads_per_cta, smem_per_cta, ctas_available, sm) -> float:
    """Register file needed for the SM's maximum thread-level parallelism, as a multiple of its register file
    (the Latency-Tolerant Register File paper's Table 1 measure): the resident CTAs every limit but the
    registers allows, times their registers (allocation granularity included), over ``sm.regs_per_sm``."""
    wpc = -(-int(threads_per_cta) // sm.threads_per_warp)
    limits = [
        sm.warps_per_sm // wpc,
        sm.max_ctas_per_sm,
        int(ctas_available),
        (sm.warps_per_sm * sm.threads_per_warp) // (wpc * sm.threads_per_warp),
    ]
    if smem_per_cta:
        limits.append(sm.shmem_per_sm_bytes // int(smem_per_cta))
    g = sm.reg_alloc_granularity
    per_warp = -(-(int(regs_per_thread) * sm.threads_per_warp) // g) * g
    return max(min(limits), 0) * wpc * per_warp / float(sm.regs_per_sm)


def no_fit_reason(regs_per_thread, threads_per_cta, smem_per_cta, sm, regs_per_sm=None) -> str | None:
    """Why one CTA of a kernel cannot be resident on ``sm`` (the limiting resource, in words), or None."""
    regs_per_sm = sm.regs_per_sm if regs_per_sm is None else int(regs_per_sm)
    wpc = -(-int(threads_per_cta) // sm.threads_per_warp)
    g = sm.reg_alloc_granularity
    need = cta_registers(regs_per_thread, threads_per_cta, sm)
    if int(threads_per_cta) > sm.max_threads_per_cta:
        return (
            f"one CTA has {threads_per_cta} threads and the SM launches at most {sm.max_threads_per_cta} "
            "(max_threads_per_cta)"
        )
    if smem_per_cta and int(smem_per_cta) > sm.shmem_per_cta_bytes:
        return (
            f"one CTA needs {smem_per_cta} B of shared memory and the SM allows {sm.shmem_per_cta_bytes} "
            "per CTA (shmem_per_cta_bytes)"
        )
    if need > regs_per_sm:
        return (
            f"one CTA needs {need} registers ({regs_per_thread} per thread x {threads_per_cta} threads, "
            f"allocated per warp in {g}s) and the SM has {regs_per_sm} (regs_per_sm)"
        )
    if wpc > sm.warps_per_sm:
        return f"one CTA has {wpc} warps and the SM holds {sm.warps_per_sm} (warps_per_sm)"
    if smem_per_cta and int(smem_per_cta) > sm.shmem_per_sm_bytes:
        return (
            f"one CTA needs {smem_per_cta} B of shared memory and the SM has {sm.shmem_per_sm_bytes} "
            "(shmem_per_sm_bytes)"
        )
    return None


def carved_l1d(sm, smem_per_cta: int, resident_ctas: int):
    """``sm`` with the L1D a kernel launch gets from an adaptive carve-out of a unified L1D and shared
    memory array, as GPGPU-Sim sets it once per kernel (``shader_core_config::max_cta``): the kernel's
    shared memory over its resident CTAs is rounded up to the first of ``l1d.shmem_options`` that holds it,
    and the L1D takes the rest of ``l1d.unified_bytes`` as ways, ``round(max_ways x (1 - option /
    unified))`` in single precision, where ``max_ways`` is ``l1d.assoc`` scaled by ``unified_bytes /
    size_bytes`` (the sets and the line stay).  No ways left: no L1D.  ``sm`` itself without a carve-out
    (``shmem_options`` empty, or not ``adaptive``).  GPGPU-Sim also switches a streaming L1D's allocation
    to on-miss when the kernel uses no shared memory; rfmodel's L1D has one allocation policy."""
    from dataclasses import replace

    l1 = sm.l1d
    if not (l1.adaptive and l1.shmem_options and l1.unified_bytes and l1.size_bytes):
        return sm
    total = max(int(smem_per_cta), 0) * max(int(resident_ctas), 0)
    options = sorted(l1.shmem_options)
    option = next((o for o in options if total <= o), options[-1])  # the spec keeps it within the last
    max_ways = (l1.unified_bytes // l1.size_bytes) * l1.assoc
    ratio = np.float32(1.0) - np.float32(option) / np.float32(l1.unified_bytes)
    ways = int(np.float32(max_ways) * ratio + np.float32(0.5))
    fixed = dict(unified_bytes=0, adaptive=False, shmem_options=())  # the launch's L1D: carved once
    if ways <= 0:
        carved = replace(l1, size_bytes=0, **fixed)
    else:
        carved = replace(l1, size_bytes=l1.sets * ways * l1.line_bytes, assoc=ways, **fixed)
    return replace(sm, l1d=carved)


#: SM fields an engine does not model, with the value its answer holds for: ``{field: {engine: value}}``
#: (``l1d.x`` names a field of the L1D).  A spec that sets another value is answered at that one and the
#: engine says so: a warning once per process and the field in the result's ``attrs["not_modelled"]``.
#: The L1D is its ``size_bytes`` throughout a run (whole lines), except that both engines carve it out of a
#: unified array when the spec gives the carve-out's options (:func:`carved_l1d`); the
#: interval model has no per-collector port limit and takes any two ready instructions for a dual issue;
#: the simulator's dispatch register holds one instruction per unit type, so its second instruction of a
#: cycle always goes to another unit (a dual issue of two of one type never happens there).
NOT_MODELLED = {
    "l1d.sectored": {"analytic": False, "simulate": False},
    # the banks' latency queues: only the simulator's GPGPU-Sim mode has them (``not_modelled(compat=True)``)
    "l1d.banks": {"analytic": 1, "simulate": 1},
    "l1d.unified_bytes": {"analytic": 0, "simulate": 0},
    "l1d.adaptive": {"analytic": False, "simulate": False},
    # the MSHRs' merge limit and the miss queue: only the simulator holds the L1D's lookups for them
    "l1d.mshr_merge": {"analytic": 0},
    # a global store hit's eviction: only the simulator's L1D (the profile's L1D keeps the line)
    "l1d.store_hit_evicts": {"analytic": False},
    "l1d.miss_queue_entries": {"analytic": 0},
    "collector_read_ports": {"analytic": 0},
    "dual_issue_diff_units": {"analytic": False, "simulate": True},
    # the instruction cache: only the simulator's GPGPU-Sim mode fetches (``not_modelled(compat=True)``)
    "icache.size_bytes": {"analytic": 0, "simulate": 0},
    # the DRAM's banks and rows: only the simulator times them (the analytic engine answers as without)
    "dram": {"analytic": None},
    # the L2's banks and their set index: only the simulator, where the SM has the whole L2 (num_sms = 1:
    # ``not_modelled`` says so otherwise); the analytic engine's L2 is one cache of the SM's share
    "l2.banks": {"analytic": 1, "simulate": 1},
    "l2.set_index": {"analytic": "linear", "simulate": "linear"},
}
#: the notes already warned about in this process (:func:`warn_once`)
_SAID: set = set()


def not_modelled(sm, engine: str, compat: bool = False) -> list[str]:
    """The :data:`NOT_MODELLED` fields of ``engine`` that ``sm`` sets to another value than the answer holds
    for, in words (a warning once per field, value and engine, unless it is the value of the preset ``sm``
    is named after); ``dual_issue_diff_units`` only where the SM issues more than one instruction a cycle;
    the instruction cache not for the simulator's GPGPU-Sim mode (``compat``), which fetches through it."""
    from rfmodel.spec.presets import PRESETS

    def get(spec, name):
        parent, _, field = name.rpartition(".")
        owner = getattr(spec, parent) if parent else spec
        return None if owner is None else getattr(owner, field)

    preset = PRESETS.get(sm.name)
    out = []
    for name, holds_in in NOT_MODELLED.items():
        holds = holds_in.get(engine, None)
        if engine not in holds_in or (name == "dual_issue_diff_units" and sm.issue_width < 2):
            continue
        if (
            compat
            and engine == "simulate"
            and (name.startswith("icache.") or name in ("l1d.sectored", "l1d.banks"))
        ):
            continue
        if name in ("l1d.unified_bytes", "l1d.adaptive") and sm.l1d.shmem_options:
            continue  # both engines carve the L1D out of the unified array (carved_l1d)
        value = get(sm, name)
        if name.startswith("l2.") and engine == "simulate" and sm.num_sms == 1:
            continue  # the simulator's banked L2 (rfmodel.spec.sm.L2Spec; a larger chip's slice: one cache)
        if value is not None and value != holds:
            what = name if hasattr(value, "to_dict") else f"{name} = {value}"  # a nested spec: its name
            out.append(
                f"{what} (answered as {holds})" if holds is not None else f"{what} (answered without it)"
            )
            # a preset's own value is in its documented source and the attrs; a value set otherwise is said
            if preset is not None and get(preset, name) == value:
                continue
            warn_once(
                f"the {engine} engine does not model {what}: its answer is the one for "
                f"{holds if holds is not None else f'an SM without {name}'}"
            )
    return out


def warn_once(message: str, stacklevel: int = 5) -> None:
    """A warning the first time this process meets ``message`` (the engines' notes of what they answer
    otherwise than asked: an SM field not modelled, a register limit not applied)."""
    import warnings

    if message not in _SAID:
        _SAID.add(message)
        warnings.warn(message, stacklevel=stacklevel)
