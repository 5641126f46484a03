"""Dynamic traces: per-warp instruction streams as columnar numpy arrays.

This is the simulator's input and the analytic profiler's raw material.  All
warps' streams are concatenated; warp ``w`` owns rows
``warp_ptr[w]:warp_ptr[w+1]``.  Layout per row (59 bytes, plus 8 bytes per
memory line touched):

==============  ==========  ===================================================
column          dtype       meaning
==============  ==========  ===================================================
``op``          int8        :class:`~rfmodel.ir.OpClass`
``sidx``        int32       static instruction index in the kernel (-1: none)
``dst``         uint8[4]    GPRs written, padded with ``NONE`` (255)
``src``         uint8[10]   GPRs read in operand order, padded with ``NONE``
``pdst/psrc``   uint16      predicate bit masks (bit p: P0-P6 = 0-6, UP0-UP6 = 8-14)
``udst/usrc``   uint64      uniform-register bit masks (bit u: UR u)
``reuse``       uint16      bit i set: ``src[:, i]`` carries ``.reuse``
``active``      int8        active lanes (0-32; 0 = every lane predicated off)
``mem_ptr``     int64[N+1]  rows ``mem_ptr[i]:mem_ptr[i+1]`` of ``mem_line``
``mem_line``    int64[M]    distinct cache-line addresses (bytes) touched
``width``       int8[4]     width class of the value written to ``dst[:, k]`` (1-4 B, 0 unknown)
``compress``    uint8[4]    share of the 128-byte warp value of ``dst[:, k]`` that compression
                            saves, x 254 (255 unknown; :func:`compressed_bytes` inverts it)
``smem_passes`` uint8       passes of a shared-memory access through the banks, its bank-conflict
                            degree (:func:`bank_passes`; 0: not a shared access, or unknown: one)
==============  ==========  ===================================================

A 10^7-row trace therefore needs about 0.59 GB plus its memory lines.

Value attributes: an executed trace (``attrs["source"] == "execute"``) measures them on the
values the program computes (:mod:`rfmodel.workload.execute`); the synthetic generator draws
them from its value model; trace expansion and Accel-Sim traces leave them unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from rfmodel.errors import RfmodelError

NONE = 255  # padding value in dst/src (never a real register: RZ is not stored)
MAX_DST = 4
MAX_SRC = 10
COMPRESS_UNKNOWN = 255
#: bytes of one warp register (32 lanes x 4 bytes), the unit the compressed size refers to
WARP_VALUE_BYTES = 128

COLUMNS = {
    "op": np.int8,
    "sidx": np.int32,
    "dst": np.uint8,
    "src": np.uint8,
    "pdst": np.uint16,
    "psrc": np.uint16,
    "udst": np.uint64,
    "usrc": np.uint64,
    "reuse": np.uint16,
    "active": np.int8,
    "width": np.int8,
    "compress": np.uint8,
    "smem_passes": np.uint8,
}

#: banks of the shared memory, 4 bytes wide (every NVIDIA GPU since Fermi; GPGPU-Sim's
#: ``-gpgpu_shmem_num_banks`` of the configs rfmodel reads)
SMEM_BANKS = 32


@njit(cache=True)
def bank_passes(addrs, n):
    """Passes a shared-memory access of ``n`` active lanes at byte addresses ``addrs[:n]`` takes
    through :data:`SMEM_BANKS` 4-byte banks: the most distinct words any one bank holds (lanes reading
    the same word share a pass), GPGPU-Sim's rule without a limited broadcast (a lane's first address
    decides its bank, whatever its width).  0 for no lane."""
    words = np.empty((SMEM_BANKS, 32), np.int64)  # each bank's distinct words so far
    count = np.zeros(SMEM_BANKS, np.int64)
    best = 0
    for i in range(n):
        w = addrs[i] >> 2
        b = w % SMEM_BANKS
        new = True
        for j in range(count[b]):
            if words[b, j] == w:
                new = False
                break
        if new and count[b] < 32:
            words[b, count[b]] = w
            count[b] += 1
            best = max(best, count[b])
    return best


@njit(cache=True)
def passes_by_row(addrs, start, end):
    """:func:`bank_passes` of each access whose lanes' addresses are ``addrs[start[k]:end[k]]`` (uint8)."""
    out = np.zeros(len(start), np.uint8)
    for k in range(len(start)):
        out[k] = min(bank_passes(addrs[start[k] : end[k]], end[k] - start[k]), 255)
    return out


@dataclass
class Trace:
    """Dynamic per-warp instruction streams of one kernel launch on one SM."""

    kernel: str
    warp_ptr: np.ndarray  # int64 [n_warps + 1]
    warp_cta: np.ndarray  # int32 [n_warps]: CTA index of each warp
    op: np.ndarray
    sidx: np.ndarray
    dst: np.ndarray  # [N, MAX_DST]
    src: np.ndarray  # [N, MAX_SRC]
    pdst: np.ndarray
    psrc: np.ndarray
    udst: np.ndarray
    usrc: np.ndarray
    reuse: np.ndarray
    active: np.ndarray
    mem_ptr: np.ndarray  # int64 [N + 1]
    mem_line: np.ndarray  # int64 [M]
    width: np.ndarray
    compress: np.ndarray
    smem_passes: np.ndarray | None = None  # None: zeros (traces saved before the column existed)
    regs_per_thread: int = 32
    threads_per_cta: int = 256
    ctas: int = 1
    shared_mem_bytes: int = 0
    line_bytes: int = 128
    attrs: dict = field(default_factory=dict)  # provenance: source, seed, profile

    def __post_init__(self):
        if self.smem_passes is None:
            self.smem_passes = np.zeros(len(self.op), np.uint8)

    @property
    def n_warps(self) -> int:
        return len(self.warp_ptr) - 1

    @property
    def n_instrs(self) -> int:
        return len(self.op)

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, k).nbytes for k in (*COLUMNS, "warp_ptr", "warp_cta", "mem_ptr", "mem_line"))

    def save(self, path) -> None:
        """Write the trace to ``path`` (NumPy ``.npz``: the columns, and the other fields as JSON),
        atomically."""
        from rfmodel.io import write_npz

        arrays = {k: getattr(self, k) for k in (*COLUMNS, "warp_ptr", "warp_cta", "mem_ptr", "mem_line")}
        write_npz(path, arrays, {k: getattr(self, k) for k in _META})

    @classmethod
    def load(cls, path) -> Trace:
        """A trace written by :meth:`save` (checked with :meth:`validate`)."""
        from rfmodel.io import read_npz

        t = cls(**read_npz(path))
        t.validate()
        return t

    def warp(self, w: int) -> slice:
        return slice(int(self.warp_ptr[w]), int(self.warp_ptr[w + 1]))

    def validate(self) -> None:
        """Check shapes and invariants; raises ``ValueError`` on the first problem."""
        n = self.n_instrs
        for k, dt in COLUMNS.items():
            a = getattr(self, k)
            if a.dtype != dt:
                raise ValueError(f"trace column {k} has dtype {a.dtype}, expected {np.dtype(dt)}")
            if len(a) != n:
                raise ValueError(f"trace column {k} has {len(a)} rows, expected {n}")
        if self.dst.shape != (n, MAX_DST) or self.src.shape != (n, MAX_SRC):
            raise ValueError("trace dst/src have the wrong shape")
        if self.width.shape != (n, MAX_DST) or self.compress.shape != (n, MAX_DST):
            raise ValueError("trace width/compress have the wrong shape (one value per destination)")
        if self.warp_ptr[0] != 0 or self.warp_ptr[-1] != n or np.any(np.diff(self.warp_ptr) < 0):
            raise ValueError("trace warp_ptr is not a monotone partition of the rows")
        if len(self.mem_ptr) != n + 1 or self.mem_ptr[-1] != len(self.mem_line):
            raise ValueError("trace mem_ptr does not match mem_line")


_META = ("kernel", "regs_per_thread", "threads_per_cta", "ctas", "shared_mem_bytes", "line_bytes", "attrs")


def kernel_trace(kernel, source: str, attrs: dict, line_bytes: int, **fields) -> Trace:
    """A trace of a launch of ``kernel`` (a :class:`~rfmodel.ir.Kernel`) that ``source`` built
    (``"execute"``, ``"expand"``): the kernel's name, registers per thread and shared memory, and attrs
    naming the source, the kernel's source and arch, then ``attrs``; ``fields``: the rest of the trace."""
    return Trace(
        kernel=kernel.name,
        regs_per_thread=kernel.regs_per_thread,
        shared_mem_bytes=kernel.shared_mem_bytes,
        line_bytes=int(line_bytes),
        attrs={"source": source, "kernel_source": kernel.source, "arch": kernel.arch, **attrs},
        **fields,
    )


def empty_columns(n: int) -> dict[str, np.ndarray]:
    """Freshly allocated columns for ``n`` rows, registers padded with ``NONE``."""
    cols = {k: np.zeros(n, dtype=dt) for k, dt in COLUMNS.items()}
    cols["dst"] = np.full((n, MAX_DST), NONE, dtype=np.uint8)
    cols["src"] = np.full((n, MAX_SRC), NONE, dtype=np.uint8)
    cols["width"] = np.zeros((n, MAX_DST), dtype=np.int8)
    cols["compress"] = np.full((n, MAX_DST), COMPRESS_UNKNOWN, dtype=np.uint8)
    cols["sidx"][:] = -1
    cols["active"][:] = 32
    return cols


def compress_code(nbytes):
    """The ``compress`` column's code of a compressed size in bytes (of :data:`WARP_VALUE_BYTES`)."""
    b = np.asarray(nbytes, dtype=np.float64)
    return np.rint((WARP_VALUE_BYTES - b) / WARP_VALUE_BYTES * 254).astype(np.uint8)


def compressed_bytes(code):
    """Compressed size in bytes of a ``compress`` code (NaN where unknown); exact for whole-byte
    sizes, since 254 codes over 128 bytes keep them apart."""
    c = np.asarray(code)
    out = np.rint(WARP_VALUE_BYTES * (1.0 - c.astype(np.float64) / 254))
    return np.where(c == COMPRESS_UNKNOWN, np.nan, out)


def prepend_rows(trace: Trace, n: int, op: int) -> Trace:
    """A copy of ``trace`` in which every warp first runs ``n`` instructions of class ``op`` with no
    register, predicate or memory operands, all lanes active (a design's own instructions at kernel start,
    such as compiler metadata)."""
    if n <= 0:
        return trace
    from dataclasses import replace

    wp = np.asarray(trace.warp_ptr, dtype=np.int64)
    W = len(wp) - 1
    N = trace.n_instrs
    new_start = wp[:-1] + n * np.arange(1, W + 1)  # where each warp's own rows begin in the copy
    old_row = np.repeat(np.arange(W), np.diff(wp))
    dest = np.arange(N) - wp[old_row] + new_start[old_row]  # old row -> new row
    cols = empty_columns(N + n * W)
    cols["op"][:] = op
    for k in COLUMNS:
        cols[k][dest] = getattr(trace, k)
    counts = np.zeros(N + n * W, dtype=np.int64)
    counts[dest] = np.diff(np.asarray(trace.mem_ptr, dtype=np.int64))
    mem_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    out = replace(
        trace,
        warp_ptr=np.concatenate([[0], wp[1:] + n * np.arange(1, W + 1)]).astype(np.int64),
        mem_ptr=mem_ptr,
        mem_line=np.asarray(trace.mem_line).copy(),
        **cols,
    )
    out.validate()
    return out


def sm_share(trace: Trace, num_sms: int, sm_index: int = 0) -> Trace:
    """The CTAs of a whole-grid trace that SM ``sm_index`` runs.

    GPGPU-Sim hands CTAs to the SMs round-robin, so SM ``j`` runs CTAs ``j, j + SMs, ...``.
    """
    ctas = _cta_bounds(trace)[1]
    keep = [c for c in range(len(ctas)) if c % max(num_sms, 1) == sm_index]
    return select_ctas(trace, keep)


def _cta_bounds(trace: Trace):
    wc = np.asarray(trace.warp_cta, dtype=np.int64)
    if len(wc) and np.any(np.diff(wc) < 0):
        raise RfmodelError(f"trace '{trace.kernel}': warps are not grouped by CTA (warp_cta decreases)")
    if len(wc) == 0:
        return np.zeros(1, dtype=np.int64), []
    change = np.flatnonzero(np.diff(wc)) + 1
    starts = np.concatenate([[0], change, [len(wc)]]).astype(np.int64)
    return starts, [int(wc[s]) for s in starts[:-1]]


def select_ctas(trace: Trace, keep) -> Trace:
    """A trace of only the CTAs at positions ``keep`` (in CTA order of the trace)."""
    starts, _ = _cta_bounds(trace)
    warps = (
        np.concatenate([np.arange(starts[c], starts[c + 1]) for c in keep])
        if len(keep)
        else np.zeros(0, dtype=np.int64)
    )
    wp = trace.warp_ptr
    rows = (
        np.concatenate([np.arange(wp[w], wp[w + 1]) for w in warps]).astype(np.int64)
        if len(warps)
        else np.zeros(0, dtype=np.int64)
    )
    counts = np.diff(wp)[warps] if len(warps) else np.zeros(0, dtype=np.int64)
    warp_ptr = np.zeros(len(warps) + 1, dtype=np.int64)
    np.cumsum(counts, out=warp_ptr[1:])
    mp = trace.mem_ptr
    nl = (mp[rows + 1] - mp[rows]) if len(rows) else np.zeros(0, dtype=np.int64)
    mem_ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(nl, out=mem_ptr[1:])
    line_idx = (
        np.concatenate([np.arange(mp[r], mp[r + 1]) for r in rows[nl > 0]]).astype(np.int64)
        if np.any(nl > 0)
        else np.zeros(0, dtype=np.int64)
    )
    attrs = dict(trace.attrs)
    for k in ("rz_src", "rz_dst"):
        if k in attrs and len(attrs[k]) == trace.n_instrs:
            attrs[k] = np.asarray(attrs[k])[rows]
    attrs["selected_ctas"] = len(keep)
    cols = {k: getattr(trace, k)[rows] for k in COLUMNS}
    return Trace(
        kernel=trace.kernel,
        warp_ptr=warp_ptr,
        warp_cta=np.asarray(trace.warp_cta)[warps].astype(np.int32),
        mem_ptr=mem_ptr,
        mem_line=trace.mem_line[line_idx],
        regs_per_thread=trace.regs_per_thread,
        threads_per_cta=trace.threads_per_cta,
        ctas=len(keep),
        shared_mem_bytes=trace.shared_mem_bytes,
        line_bytes=trace.line_bytes,
        attrs=attrs,
        **cols,
    )


def grid_share(trace: Trace, num_sms: int, max_warps: int | None = None) -> Trace:
    """SM 0's share of a whole-grid trace (:func:`sm_share`), cut to its first CTAs holding at most
    ``max_warps`` warps (at least one CTA; ``None``: the whole share), with ``attrs["ctas_per_sm"]`` the
    share's CTAs: the one cut of a grid that both engines run (an Accel-Sim trace)."""
    share = sm_share(trace, num_sms)
    n = share.ctas
    if max_warps is not None:
        wpc = max(1, -(-share.threads_per_cta // 32))
        share = select_ctas(share, list(range(min(share.ctas, max(1, max_warps // wpc)))))
    share.attrs["ctas_per_sm"] = n
    return share
