"""Launch a decoded kernel over a grid: constant bank 0, memories, CTAs in order.

Constant bank 0 (bytes; found in the compiler's output, see docs/execute.md):

========================  ===========  ===========
what                      sm_75, sm_80  sm_90
========================  ===========  ===========
blockDim.x, .y, .z        0x0, 0x4, 0x8  same
gridDim.x, .y, .z         0xc, 0x10, 0x14  same
local stack top (R1)      0x28         0x28
global memory descriptor  0x118 (64-bit)  0x208 (64-bit)
kernel parameters         from 0x160   from 0x210
========================  ===========  ===========
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rfmodel.cache import compile_lock, note_first_compile
from rfmodel.ir import Kernel
from rfmodel.workload.execute import layout as L
from rfmodel.workload.execute.decode import Decoded, decode_kernel
from rfmodel.workload.execute.errors import ExecutionError, ExecutionFault
from rfmodel.workload.execute.machine import run_cta

__all__ = ["CBANK0", "GLOBAL_BASE", "LaunchResult", "Param", "Recorded", "launch"]

#: constant bank 0 offsets per architecture
CBANK0 = {
    "sm_75": {"ntid": 0x0, "nctaid": 0xC, "stack_top": 0x28, "global_desc": 0x118, "params": 0x160},
    "sm_80": {"ntid": 0x0, "nctaid": 0xC, "stack_top": 0x28, "global_desc": 0x118, "params": 0x160},
    "sm_90": {"ntid": 0x0, "nctaid": 0xC, "stack_top": 0x28, "global_desc": 0x208, "params": 0x210},
}
for _a in ("sm_86", "sm_87", "sm_88", "sm_89"):
    CBANK0[_a] = CBANK0["sm_80"]
#: shared memory the compiler reserves below the kernel's own (sm_90: ``.nv.reservedSmem``, 1 KiB)
SHARED_RESERVED = {"sm_90": 0x400}
#: device address of the first global array: 4 KiB below 2^32, so the arrays straddle the
#: 32-bit boundary and every 64-bit address computation must carry correctly
GLOBAL_BASE = (1 << 32) - 0x1000
CBANK_WORDS = 0x1000  # 16 KiB per bank
N_BANKS = 4
LOCAL_BYTES = 4 * L.LOCAL_WORDS  # per thread
ARRAY_ALIGN = 256


@dataclass(frozen=True)
class Param:
    """One kernel parameter in declaration order: a scalar (``i32``, ``u32``, ``f32``, ``i64``,
    ``u64``, ``f64``) with ``value``, or ``ptr`` to the array ``array``."""

    name: str
    type: str
    value: float | int | None = None
    array: str | None = None


_SCALAR = {
    "i32": (np.int32, 4),
    "u32": (np.uint32, 4),
    "f32": (np.float32, 4),
    "i64": (np.int64, 8),
    "u64": (np.uint64, 8),
    "f64": (np.float64, 8),
    "ptr": (np.uint64, 8),
}


@dataclass
class LaunchResult:
    """The arrays after the run; ``warp_instructions`` executed in all; ``per_instruction[i]``:
    how many times static instruction ``i`` was executed (by any warp); ``per_warp[c, w]``: the
    warp-instructions of warp ``w`` of CTA ``c`` (CTAs in launch order)."""

    arrays: dict[str, np.ndarray]
    warp_instructions: int
    ctas: int
    per_instruction: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    per_warp: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    attrs: dict = field(default_factory=dict)
    #: with ``record``: one :class:`Recorded` per recorded CTA, in launch order
    recorded: list = field(default_factory=list)


@dataclass
class Recorded:
    """The warp-instructions of one CTA as executed, in execution order (19 bytes a row):
    ``warp`` (of the CTA), ``sidx`` (static instruction), ``mask`` (executing lanes),
    ``n_lines`` (how many of ``lines``, in order, the row touches), ``smem_passes`` (a shared
    access's passes through the banks, else 0); ``width[:, k]`` /
    ``bdi[:, k]``: width class and BDI size in bytes of the row's ``k``-th written register
    (0 where none)."""

    warp: np.ndarray
    sidx: np.ndarray
    mask: np.ndarray
    n_lines: np.ndarray
    smem_passes: np.ndarray
    width: np.ndarray
    bdi: np.ndarray
    lines: np.ndarray


def _dims(what: str, v) -> tuple[int, int, int]:
    if isinstance(v, int | np.integer):
        v = (int(v),)
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
        raise ExecutionError(f"{what}: expected 1 to 3 positive sizes, got {v!r}")
    return v + (1,) * (3 - len(v))


_FAULTS = {
    L.ST_FAULT_GLOBAL: "global access outside every array (address 0x{a:x}, lane {lane})",
    L.ST_FAULT_SHARED: "shared-memory access outside the CTA's {n} bytes of shared memory (address 0x{a:x}, "
    "lane {lane}{why})",
    L.ST_FAULT_LOCAL: "local-memory access outside the thread's stack (address 0x{a:x}, lane {lane})",
    L.ST_MISALIGNED: "misaligned access (address 0x{a:x}, lane {lane})",
    L.ST_DEADLOCK: "deadlock: lanes wait at a convergence barrier that can never complete (lane {lane})",
    L.ST_SHFL_DIVERGED: "shuffle reads lane {a} that is not executing with lane {lane}",
    L.ST_STEP_LIMIT: "step limit reached (an endless loop?)",
    L.ST_CONST_RANGE: "constant-bank read outside the bank (offset 0x{a:x})",
    L.ST_CONST_MISSING: "read of constant bank {a}, whose contents (compiler-generated data such as jump "
    "tables, or __constant__ data) the launch does not provide",
    L.ST_BAD_TARGET: "jump to 0x{a:x}, which is not an instruction (lane {lane})",
    L.ST_NOT_CONVERGED: "lanes 0x{a:x} of the mask are not executing with lane {lane} at a warp-synchronous "
    "instruction (divergent warp-synchronous code is not modelled)",
}


def _global_memory(arrays: dict[str, np.ndarray]):
    """The launch's global memory: each array at its offset (aligned to ``ARRAY_ALIGN``), as 32-bit words,
    their bytes, and a word-valid mask (1 for the words that belong to an array).  Returns ``(place: name ->
    (offset, bytes), words, bytes, valid)``."""
    place: dict[str, tuple[int, int]] = {}
    off = 0
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        place[name] = (off, a.nbytes)
        off += -(-max(a.nbytes, 4) // ARRAY_ALIGN) * ARRAY_ALIGN
    gmem = np.zeros(max(off, 4) // 4, dtype=np.uint32)
    gbytes = gmem.view(np.uint8)
    gvalid = np.zeros(gmem.size, dtype=np.uint8)  # 1 for the words that belong to an array
    for name, arr in arrays.items():
        o, n = place[name]
        gbytes[o : o + n] = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        gvalid[o // 4 : -(-(o + n) // 4)] = 1
    return place, gmem, gbytes, gvalid


def _constant_banks(k, lay: dict, grid3, block3, params: list[Param], place: dict, constants) -> np.ndarray:
    """The constant banks of a launch: bank 0 with the launch's dimensions, the stack top and the kernel's
    parameters at the architecture's layout ``lay``, and the other banks' bytes (``constants``)."""
    cb = np.zeros((N_BANKS, CBANK_WORDS), dtype=np.uint32)
    c0 = cb[0].view(np.uint8)

    def put(offset: int, value, dtype) -> None:
        b = np.array([value], dtype=dtype).view(np.uint8)
        c0[offset : offset + b.size] = b

    for j in range(3):
        put(lay["ntid"] + 4 * j, block3[j], np.uint32)
        put(lay["nctaid"] + 4 * j, grid3[j], np.uint32)
    put(lay["stack_top"], LOCAL_BYTES, np.uint32)
    pos = lay["params"]
    for p in params:
        if p.type not in _SCALAR:
            raise ExecutionError(
                f"parameter '{p.name}': unknown type {p.type!r} (known: {', '.join(_SCALAR)})"
            )
        dt, size = _SCALAR[p.type]
        pos = -(-pos // size) * size
        if p.type == "ptr":
            if p.array not in place:
                raise ExecutionError(f"parameter '{p.name}': no array named {p.array!r}")
            put(pos, GLOBAL_BASE + place[p.array][0], np.uint64)
        else:
            if p.value is None:
                raise ExecutionError(f"parameter '{p.name}': a scalar needs a value")
            put(pos, p.value, dt)
        pos += size
    if pos >= CBANK_WORDS * 4:
        raise ExecutionError(f"{k.name}: kernel parameters overflow constant bank 0")
    for bank, data in constants.items():
        if not (isinstance(bank, int) and 1 <= bank < N_BANKS):
            raise ExecutionError(f"constant bank {bank!r}: expected 1 to {N_BANKS - 1}")
        b = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        if b.size > CBANK_WORDS * 4:
            raise ExecutionError(f"constant bank {bank}: {b.size} bytes (at most {CBANK_WORDS * 4})")
        cb[bank].view(np.uint8)[: b.size] = b
    return cb


def _ctas(grid3):
    """The CTAs' ``(z, y, x)`` coordinates of a grid in launch order, one at a time (``itertools.product``
    holds each range as a tuple first: 16 GB for a grid of 2^31 CTAs)."""
    for z in range(grid3[2]):
        for y in range(grid3[1]):
            for x in range(grid3[0]):
                yield z, y, x


def launch(
    kernel: Kernel | Decoded,
    params: list[Param],
    arrays: dict[str, np.ndarray],
    grid,
    block,
    *,
    shared_bytes: int | None = None,
    constants: dict[int, np.ndarray] | None = None,
    max_warp_instructions: int = 200_000_000,
    record: int = 0,
    record_dst: np.ndarray | None = None,
    line_bytes: int = 128,
    record_capacity: int = 1 << 16,
) -> LaunchResult:
    """Execute ``kernel`` over ``grid`` CTAs of ``block`` threads; returns the arrays after the run.

    ``arrays`` are copied into global memory (each 256-byte aligned from
    :data:`GLOBAL_BASE`); ``params`` fill constant bank 0 at the architecture's offset
    with C alignment.  ``constants`` maps a constant bank (1..3; user ``__constant__`` data
    is bank 3) to the bytes it holds from offset 0; the kernel's own compiler-generated banks
    (``Kernel.attrs["constant_banks"]``: a ``switch``'s jump table in bank 2) come first.

    ``record``: the first ``record`` CTAs (launch order) are recorded warp-instruction by
    warp-instruction (``LaunchResult.recorded``) and the launch stops after them;
    ``record_dst[i, k]`` names the ``k``-th register instruction ``i`` writes (255: none), whose
    value attributes are recorded; ``line_bytes`` is the line size of the recorded addresses;
    ``record_capacity``: the recorder's first buffer size in rows (it grows as needed).
    """
    dec = kernel if isinstance(kernel, Decoded) else decode_kernel(kernel)
    k = dec.kernel
    arch = k.arch
    if arch not in CBANK0:
        raise ExecutionError(f"{k.name}: no constant-bank layout for architecture {arch!r}")
    grid3 = _dims("grid", grid)
    block3 = _dims("block", block)
    nthreads = block3[0] * block3[1] * block3[2]
    if nthreads > 1024:
        raise ExecutionError(f"{k.name}: {nthreads} threads per CTA (at most 1024)")
    lay = CBANK0[arch]

    # ---- global memory, constant banks
    place, gmem, gbytes, gvalid = _global_memory(arrays)
    constants = {**k.attrs.get("constant_banks", {}), **(constants or {})}  # the kernel's, then the launch's
    cb = _constant_banks(k, lay, grid3, block3, params, place, constants)

    # ---- per-CTA state
    nw = -(-nthreads // 32)
    nregs = 256
    regs = np.zeros((nw, nregs, 32), dtype=np.uint32)
    preds = np.zeros((nw, 16, 32), dtype=np.uint8)
    uregs = np.zeros((nw, 64), dtype=np.uint32)
    pcs = np.zeros((nw, 32), dtype=np.int64)
    lst = np.zeros((nw, 32), dtype=np.int8)
    lbar = np.zeros((nw, 32), dtype=np.int64)
    bmask = np.zeros((nw, 16), dtype=np.int64)
    srv = np.zeros((nw, L.N_SR, 32), dtype=np.int64)
    # the static shared memory: the launch's figure, else the kernel's (``cuobjdump -res-usage``'s
    # SHARED, or the resources given to the reader); a plain -sass listing states none, and the
    # launch then has 0 bytes, which a shared access reports as an unknown size (below)
    shared_src = k.attrs.get("shared_source")
    shared_known = shared_bytes is not None or k.shared_mem_bytes > 0 or shared_src is not None
    sh = k.shared_mem_bytes if shared_bytes is None else int(shared_bytes)
    reserved = SHARED_RESERVED.get(arch, 0)
    if not (shared_bytes is None and shared_src == "res-usage" and sh >= reserved > 0):
        sh += reserved  # (sm_90: cuobjdump -res-usage's SHARED figure already includes the window)
    smem = np.zeros(-(-sh // 4), dtype=np.uint32)  # none at all when the size is 0
    lmem = np.zeros((nw, 32, LOCAL_BYTES // 4), dtype=np.uint32)
    st = np.zeros(L.ST_BANK_FLAGS + N_BANKS, dtype=np.int64)
    st[L.ST_BANK_FLAGS] = 1  # bank 0: launch constants and parameters
    for bank in constants:
        st[L.ST_BANK_FLAGS + bank] = 1
    n_ins = dec.rows.shape[0]
    cnt = np.zeros(1 + n_ins + nw, dtype=np.int64)  # total, per static instruction, per warp of the CTA
    per_warp = []
    ntid = np.array(block3, dtype=np.int64)
    ctaid = np.zeros(3, dtype=np.int64)
    nctas = 0
    record = int(record)
    if record:
        if record_dst is None:
            record_dst = np.full((n_ins, 4), 255, np.int64)
        sdst = np.ascontiguousarray(record_dst, dtype=np.int64)
        if sdst.shape[0] != n_ins:
            raise ExecutionError(f"{k.name}: record_dst has {sdst.shape[0]} rows for {n_ins} instructions")
        cap = max(int(record_capacity), 1)
    else:
        sdst = np.zeros((n_ins, 4), np.int64)
        cap = 0
    rec = np.zeros((cap, 5), np.int64)
    recv = np.zeros((cap, 2 * sdst.shape[1]), np.uint8)
    lines = np.zeros(cap * 2 + L.REC_MAX_LINES if cap else 0, np.int64)
    nrec = np.zeros(2, np.int64)
    recorded = []
    for z, y, x in _ctas(grid3):  # in order, without holding the grid's coordinates
        if record and nctas >= record:
            break  # the recorded CTAs are done: the rest of the grid is not run
        ctaid[:] = (x, y, z)
        fresh = True
        nrec[:] = 0
        while True:
            args = (
                dec.rows,
                nthreads,
                ntid,
                ctaid,
                regs,
                preds,
                uregs,
                pcs,
                lst,
                lbar,
                bmask,
                cb,
                srv,
                np.int64(GLOBAL_BASE),
                gmem,
                gvalid,
                smem,
                lmem,
                st,
                cnt,
                np.int64(max_warp_instructions),
                rec,
                recv,
                lines,
                nrec,
                sdst,
                np.int64(nctas * nw),
                np.int64(line_bytes),
                fresh,
            )
            if not run_cta.signatures:  # this process's first CTA
                _compile_executor(args)
            run_cta(*args)
            fresh = False
            if st[0] != L.ST_REC_FULL:
                break
            st[0] = 0  # grow the recorder's buffers and go on where the run stopped
            if nrec[0] >= rec.shape[0]:
                rec = np.concatenate([rec, np.zeros_like(rec)])
                recv = np.concatenate([recv, np.zeros_like(recv)])
            if nrec[1] + L.REC_MAX_LINES > lines.shape[0]:
                lines = np.concatenate([lines, np.zeros_like(lines)])
        if record and st[0] == 0:
            n, m = int(nrec[0]), int(nrec[1])
            d = sdst.shape[1]
            recorded.append(
                Recorded(
                    warp=rec[:n, 0].astype(np.uint8),
                    sidx=rec[:n, 1].astype(np.int32),
                    mask=rec[:n, 2].astype(np.uint32),
                    n_lines=np.diff(rec[:n, 3], prepend=0).astype(np.uint8),
                    smem_passes=rec[:n, 4].astype(np.uint8),
                    width=recv[:n, :d].copy(),
                    bdi=recv[:n, d:].copy(),
                    lines=lines[:m].copy(),
                )
            )
            recv[:n] = 0
        nctas += 1
        per_warp.append(cnt[1 + n_ins :].copy())
        cnt[1 + n_ins :] = 0
        if st[0] != 0:
            i = int(st[1])
            i = min(max(i, 0), len(dec.pcs) - 1)
            why = ""
            if int(st[0]) == L.ST_FAULT_SHARED:
                if reserved:
                    why = f"; {reserved} of them the reserved window below the kernel's own"
                if not shared_known:
                    why += (
                        "; the kernel's static shared-memory size is unknown, as a plain `cuobjdump -sass` "
                        "listing does not state it: read the kernel from `cuobjdump -sass -res-usage` "
                        "output, whose SHARED: figure is taken, or give the launch's shared_bytes"
                    )
            msg = _FAULTS.get(int(st[0]), f"fault {int(st[0])}").format(
                a=int(st[3]), lane=int(st[2]), n=sh, why=why
            )
            err = ExecutionFault(k.name, arch, dec.pcs[i], dec.opcodes[i], f"CTA ({x}, {y}, {z}): {msg}")
            err.state = {"regs": regs.copy(), "preds": preds.copy(), "uregs": uregs.copy(), "pcs": pcs.copy()}
            raise err
    out = {}
    for name, arr in arrays.items():
        o, n = place[name]
        out[name] = gbytes[o : o + n].copy().view(arr.dtype).reshape(arr.shape)
    return LaunchResult(
        arrays=out,
        warp_instructions=int(cnt[0]),
        ctas=nctas,
        per_instruction=cnt[1 : 1 + n_ins].copy(),
        per_warp=np.array(per_warp, dtype=np.int64).reshape(nctas, nw),
        recorded=recorded,
    )


def _compile_executor(args) -> None:
    """Compile the executor for the types of ``args`` (or load its code from numba's cache) under
    :func:`rfmodel.cache.compile_lock`, as the simulator's loop is: numba's cache is not safe when two
    processes compile one function at once; a compile says so on stderr, since it takes about half a minute
    (docs/simulator.md)."""
    from numba import typeof

    with compile_lock():
        note_first_compile(run_cta, "the SASS executor", "about half a minute")
        run_cta.compile(tuple(typeof(a) for a in args))
