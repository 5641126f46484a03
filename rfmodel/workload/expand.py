"""Trace expansion: a static :class:`~rfmodel.ir.Kernel` plus a control-flow
:class:`Profile` become a dynamic :class:`~rfmodel.trace.Trace`.

Every warp of the launch walks the kernel's instructions from index 0.  A walk
is a sequence of *segments* (straight-line runs ending at a control
instruction), found by a compiled loop; the trace columns are then gathered
from per-static-instruction columns with numpy, and the memory line addresses
are computed by a second compiled pass.  See ``docs/workload.md`` for the full
semantics; in short:

Control semantics
-----------------
* **Backward branch** (``BRA``/``JMP`` whose target index is <= its own,
  guarded or not): a loop latch.  With trip count ``T`` (``Profile.trip_counts``
  or ``default_trip_count``) it is taken ``T - 1`` times in a row and then falls
  through; its counter resets when it falls through or when control leaves
  the loop's index range ``[target, latch]`` by any other jump, so an inner
  loop runs ``T`` iterations on every iteration of its outer loop.
* **Forward conditional branch**: taken with probability ``taken_prob[i]``;
  default ``loop_exit_prob`` (0) when it jumps from inside a loop's range to
  beyond the latch (a ``break`` / loop-exit test: the trip count governs the
  loop), else ``default_taken_prob`` (0.5).  Unguarded forward branches are
  always taken.
* **EXIT**: unguarded, the warp ends.  Guarded (``@P0 EXIT``), it is taken with
  probability ``taken_prob[i]``, default ``exit_prob`` (0: the early-exit guard
  of a bounds check is not taken).
* **CALL** pushes the return point (the ``call_return`` block of the calling
  block, else the next instruction) and jumps; **RET** pops it; a ``RET`` with
  an empty return stack ends the warp.  **BRX**/``JMX`` picks one of its
  targets uniformly.  Guarded CALL/RET/BRX are executed with probability
  ``taken_prob[i]`` (default ``default_taken_prob``).
* Random decisions are a counter-based hash of (expansion key, global warp
  id, decision number); the key is drawn from ``numpy.random.default_rng(seed)``.
  A warp's walk therefore does not depend on the other warps or on
  ``max_warps``, and the same seed gives a bit-identical trace.
* A walk that ends without executing an ``EXIT`` (falls off the end of the
  code, returns from the entry function) gets a synthetic ``EXIT`` row
  (``sidx = -1``).  More than ``Profile.max_warp_instrs`` instructions in one
  warp raises :class:`RfmodelError` (``on_cap="error"``, the default) or cuts
  the warp there with a warning and a synthetic ``EXIT`` (``on_cap="truncate"``).

Memory model
------------
Only instructions whose class goes through the L1 data cache
(:data:`~rfmodel.ir.L1D_CLASSES`: global, local, atomics) get line
addresses; shared and constant accesses get none.  Each has an
:class:`AccessPattern` (``Profile.mem[i]``, else ``default_access`` for global
and atomic, ``local_access`` for local), evaluated for the ``n``-th dynamic
execution of the instruction by a warp (global warp id ``g``, CTA ``c``, warp
``wi`` within the CTA; ``W`` warps in the launch; lanes ``l < active``)::

    stream: chunk = n*W + g                      (grid-stride, no reuse)
    tile:   chunk = (n*warps_per_cta + wi) mod (F / span), offset c*F   (re-read per CTA tile)
    random: chunk = uniform in [0, F / span)     (coalesced, random within F bytes)
    gather: each lane a uniform word in [0, F)   (uncoalesced, random within F bytes)
    local:  per-warp interleaved window of F bytes per thread, one slot per static instruction
    lane address = region_base + chunk*span + l*stride,   span = 32*stride

Each static instruction gets its own region of the address space unless its
pattern names a shared ``region``.  The lines touched are the distinct
``line_bytes``-aligned lines of the lanes' first and last bytes, ascending.
"""

from __future__ import annotations

import collections
import math
import operator
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

import numpy as np
from numba import njit

from rfmodel.errors import RfmodelError, SpecError
from rfmodel.ir import L1D_CLASSES, Kernel, OpClass
from rfmodel.trace import MAX_DST, MAX_SRC, NONE, Trace, empty_columns, kernel_trace

__all__ = ["ACCESS_KINDS", "AccessPattern", "Profile", "expand", "static_columns"]

ACCESS_KINDS = ("none", "stream", "tile", "random", "gather", "local")
_KIND_ID = {k: i for i, k in enumerate(ACCESS_KINDS)}
MAX_USER_REGION = 1023
_REGION_SHIFT = 40  # regions are 1 TiB apart
_OWN_REGION0 = MAX_USER_REGION + 1  # own region of static instruction i: _OWN_REGION0 + i
_LOCAL_BASE = 3 << 61
MAX_CALL_DEPTH = 64

# control kinds of static instructions
_C_NONE, _C_JUMP, _C_EXIT, _C_CALL, _C_RET, _C_BRX = 0, 1, 2, 3, 4, 5
_JUMP_BASES = frozenset({"BRA", "JMP"})
_CALL_BASES = frozenset({"CALL", "CAL", "JCAL"})
_BRX_BASES = frozenset({"BRX", "JMX"})


def _per_instruction(w: str, name: str, mapping):
    """The items of field ``name`` of ``w``, a mapping keyed by static instruction index, each key checked."""
    for k, v in dict(mapping).items():
        if not isinstance(k, int | np.integer) or k < 0:
            raise _bad(w, name, k, "keys: static instruction indices >= 0")
        yield k, v


def _bad(where: str, name: str, value, allowed: str) -> SpecError:
    return SpecError(where, name, value, allowed)


class ExpansionLimitError(RfmodelError):
    """A warp would execute more than ``Profile.max_warp_instrs`` instructions (``on_cap="error"``)."""


@dataclass(frozen=True)
class AccessPattern:
    """Address-stream model of one static memory instruction.

    ``bytes_per_thread`` 0 takes the instruction's ``mem_bytes`` (4 when
    unknown); ``lane_stride_bytes`` 0 means consecutive lanes are
    ``bytes_per_thread`` apart (fully coalesced).  ``footprint_bytes`` is the
    tile size per CTA (``tile``), the working set (``random``, ``gather``) or
    the local bytes per thread (``local``).  ``region`` -1 gives the
    instruction its own address region; 0..1023 names a region shared with
    other instructions (a load and a store of the same array).
    """

    kind: str = "stream"
    bytes_per_thread: int = 0
    lane_stride_bytes: int = 0
    footprint_bytes: int = 0
    region: int = -1

    def __post_init__(self):
        w = "AccessPattern"
        if self.kind not in _KIND_ID:
            raise _bad(w, "kind", self.kind, " | ".join(ACCESS_KINDS))
        if self.bytes_per_thread not in (0, 1, 2, 4, 8, 16):
            allowed = "0 (from the instruction), 1, 2, 4, 8, 16"
            raise _bad(w, "bytes_per_thread", self.bytes_per_thread, allowed)
        if not 0 <= self.lane_stride_bytes <= 1 << 20:
            raise _bad(w, "lane_stride_bytes", self.lane_stride_bytes, "0 .. 2**20")
        if not 0 <= self.footprint_bytes <= 1 << 36:
            raise _bad(w, "footprint_bytes", self.footprint_bytes, "0 .. 2**36")
        if self.kind in ("tile", "random", "gather", "local") and self.footprint_bytes == 0:
            raise _bad(w, "footprint_bytes", 0, f"> 0 for kind '{self.kind}'")
        if not -1 <= self.region <= MAX_USER_REGION:
            raise _bad(w, "region", self.region, f"-1 (own region) or 0 .. {MAX_USER_REGION}")

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Profile:
    """Control-flow and memory profile that drives :func:`expand`.

    Keys of the mappings are static instruction indices of the kernel.

    * ``trip_counts[i]``: iterations of the loop closed by backward branch ``i``
      (>= 1; the branch is taken ``trip - 1`` times per loop entry).
    * ``taken_prob[i]``: probability that guarded control instruction ``i``
      (forward branch, ``EXIT``, ``CALL``, ``RET``, ``BRX``) is executed / taken.
    * ``mem[i]``: the :class:`AccessPattern` of memory instruction ``i``.
    * defaults for what the mappings leave out: ``default_trip_count`` (8),
      ``default_taken_prob`` (0.5), ``loop_exit_prob`` (0.0, forward branches
      that leave a loop), ``exit_prob`` (0.0, guarded ``EXIT``),
      ``default_access`` (``stream``, global and atomic), ``local_access``
      (``local``, 64 bytes per thread).
    * ``max_warp_instrs`` (2,000,000) and ``on_cap`` (``"error"`` or
      ``"truncate"``): the per-warp safety cap.
    * ``source``: free text saying where the profile came from.
    """

    trip_counts: Mapping[int, int] = field(default_factory=dict)
    taken_prob: Mapping[int, float] = field(default_factory=dict)
    mem: Mapping[int, AccessPattern] = field(default_factory=dict)
    default_trip_count: int = 8
    default_taken_prob: float = 0.5
    loop_exit_prob: float = 0.0
    exit_prob: float = 0.0
    default_access: AccessPattern = field(default_factory=AccessPattern)
    local_access: AccessPattern = field(default_factory=lambda: AccessPattern("local", footprint_bytes=64))
    max_warp_instrs: int = 2_000_000
    on_cap: str = "error"
    source: str = ""

    def __post_init__(self):
        w = "Profile"
        tc = {}
        for k, v in _per_instruction(w, "trip_counts", self.trip_counts):
            if not isinstance(v, int | np.integer) or not 1 <= v <= 1 << 30:
                raise _bad(w, f"trip_counts[{k}]", v, "integer 1 .. 2**30")
            tc[int(k)] = int(v)
        tp = {}
        for k, v in _per_instruction(w, "taken_prob", self.taken_prob):
            if not (isinstance(v, int | float | np.floating) and 0.0 <= float(v) <= 1.0):
                raise _bad(w, f"taken_prob[{k}]", v, "probability 0 .. 1")
            tp[int(k)] = float(v)
        mm = {}
        for k, v in _per_instruction(w, "mem", self.mem):
            if not isinstance(v, AccessPattern):
                raise _bad(w, f"mem[{k}]", v, "an AccessPattern")
            mm[int(k)] = v
        object.__setattr__(self, "trip_counts", tc)
        object.__setattr__(self, "taken_prob", tp)
        object.__setattr__(self, "mem", mm)
        if not isinstance(self.default_trip_count, int) or not 1 <= self.default_trip_count <= 1 << 30:
            raise _bad(w, "default_trip_count", self.default_trip_count, "integer 1 .. 2**30")
        for name in ("default_taken_prob", "loop_exit_prob", "exit_prob"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and 0.0 <= v <= 1.0):
                raise _bad(w, name, v, "probability 0 .. 1")
        for name in ("default_access", "local_access"):
            if not isinstance(getattr(self, name), AccessPattern):
                raise _bad(w, name, getattr(self, name), "an AccessPattern")
        if not isinstance(self.max_warp_instrs, int) or not 1 <= self.max_warp_instrs <= 1 << 40:
            raise _bad(w, "max_warp_instrs", self.max_warp_instrs, "integer 1 .. 2**40")
        if self.on_cap not in ("error", "truncate"):
            raise _bad(w, "on_cap", self.on_cap, "'error' | 'truncate'")

    def to_dict(self) -> dict:
        """Plain-data form (for provenance in ``Trace.attrs``)."""
        return {
            "trip_counts": dict(self.trip_counts),
            "taken_prob": dict(self.taken_prob),
            "mem": {k: v.to_dict() for k, v in self.mem.items()},
            "default_trip_count": self.default_trip_count,
            "default_taken_prob": self.default_taken_prob,
            "loop_exit_prob": self.loop_exit_prob,
            "exit_prob": self.exit_prob,
            "default_access": self.default_access.to_dict(),
            "local_access": self.local_access.to_dict(),
            "max_warp_instrs": self.max_warp_instrs,
            "on_cap": self.on_cap,
            "source": self.source,
        }


# ---------------------------------------------------------------------------------------------
# static columns


def _mask(items, nbits: int, what: str, kernel: str, i: int) -> int:
    m = 0
    for b in items:
        if not 0 <= b < nbits:
            raise RfmodelError(f"kernel '{kernel}' instruction {i}: {what} {b} out of range 0..{nbits - 1}")
        m |= 1 << b
    return m


#: the static columns of the last few instruction lists, by the list (:func:`static_columns`), each with
#: the instructions it was built from (frozen records, held here: no other object takes their ``id``s)
_STATIC_MEMO: collections.OrderedDict = collections.OrderedDict()
_STATIC_MEMO_SIZE = 8
_STATIC_MEMO_LOCK = threading.Lock()


def static_columns(kernel: Kernel) -> dict[str, np.ndarray]:
    """Per-static-instruction trace columns of ``kernel``, with one extra last row: a bare ``EXIT``.

    Registers beyond ``MAX_DST``/``MAX_SRC`` per instruction are dropped with a
    warning; ``compressibility`` becomes ``round(c * 254)`` (255 unknown).

    The columns of one instruction list are built once and shared, read-only, by the later calls on it
    (the reads of one listing share their instructions: :func:`rfmodel.workload.sass.reader.read_sass`;
    a first answer expands the profiled warps and then the SM's whole share)."""
    instrs = kernel.instrs
    key = id(instrs)
    with _STATIC_MEMO_LOCK:
        got = _STATIC_MEMO.get(key)
        # the same instructions, one by one (a list changed in place since is built again)
        if got is not None and (len(got[0]) != len(instrs) or not all(map(operator.is_, got[0], instrs))):
            got = None
        if got is not None:
            _STATIC_MEMO.move_to_end(key)
    if got is None:
        cols, over = _static_columns(kernel)
        for a in cols.values():
            a.setflags(write=False)
        got = (tuple(instrs), cols, over)
        with _STATIC_MEMO_LOCK:
            _STATIC_MEMO[key] = got
            while len(_STATIC_MEMO) > _STATIC_MEMO_SIZE:
                _STATIC_MEMO.popitem(last=False)
    cols, over = got[1], got[2]
    if over:
        warnings.warn(
            f"kernel '{kernel.name}': {over} instruction(s) name more than {MAX_DST} destination or "
            f"{MAX_SRC} source registers; the extra ones are not in the trace",
            stacklevel=2,
        )
    return dict(cols)


def _static_columns(kernel: Kernel) -> tuple[dict[str, np.ndarray], int]:
    """:func:`static_columns` built, and the number of instructions whose extra registers it dropped."""
    n = kernel.n_instrs
    cols = empty_columns(n + 1)
    over = 0
    for i, ins in enumerate(kernel.instrs):
        cols["op"][i] = int(ins.op_class)
        cols["sidx"][i] = i
        d = [r for r in ins.dst if 0 <= r < NONE]
        s = [r for r in ins.src if 0 <= r < NONE]
        if len(d) > MAX_DST or len(s) > MAX_SRC:
            over += 1
            d, s = d[:MAX_DST], s[:MAX_SRC]
        cols["dst"][i, : len(d)] = d
        cols["src"][i, : len(s)] = s
        cols["pdst"][i] = _mask(ins.pdst, 16, "predicate", kernel.name, i)
        cols["psrc"][i] = _mask(ins.psrc, 16, "predicate", kernel.name, i)
        cols["udst"][i] = _mask(ins.udst, 64, "uniform register", kernel.name, i)
        cols["usrc"][i] = _mask(ins.usrc, 64, "uniform register", kernel.name, i)
        r = 0
        for k, flag in enumerate(ins.reuse[:MAX_SRC]):
            if flag:
                r |= 1 << k
        cols["reuse"][i] = r
        nd = min(len(d), MAX_DST)
        cols["width"][i, :nd] = ins.width_class if 0 <= ins.width_class <= 4 else 0
        c = ins.compressibility
        if c is not None and math.isfinite(c):
            cols["compress"][i, :nd] = int(round(min(max(c, 0.0), 1.0) * 254))
    cols["op"][n] = int(OpClass.EXIT)
    cols["sidx"][n] = -1
    return cols, over


# ---------------------------------------------------------------------------------------------
# control tables


def _guard_kind(guard: str | None) -> int:
    """0: unguarded, 1: guarded, 2: never executes (``!PT``)."""
    if guard is None:
        return 0
    g = guard.strip().lstrip("@")
    if g in ("", "PT", "UPT"):
        return 0
    if g in ("!PT", "!UPT"):
        return 2
    return 1


def _control_tables(kernel: Kernel, profile: Profile):
    ins = kernel.instrs
    n = len(ins)
    ctl = np.zeros(n + 1, np.int8)
    guarded = np.zeros(n + 1, np.int8)
    prob = np.zeros(n + 1, np.float64)
    trip = np.ones(n + 1, np.int64)
    ret_to = np.full(n + 1, -1, np.int64)
    tptr = np.zeros(n + 2, np.int64)
    tlist: list[int] = []
    name = kernel.name

    block_end_call_return = {}
    for b in kernel.blocks:
        if b.call_return is not None and b.end > b.start and 0 <= b.call_return < len(kernel.blocks):
            block_end_call_return[b.end - 1] = kernel.blocks[b.call_return].start

    for i, x in enumerate(ins):
        base = x.base
        tg = [int(t) for t in x.targets]
        for t in tg:
            if not 0 <= t < n:
                raise RfmodelError(
                    f"kernel '{name}' instruction {i} ({x.opcode}): target {t} outside 0..{n - 1}"
                )
        kind = _C_NONE
        if x.op_class == OpClass.EXIT:
            kind = _C_EXIT
        elif base in _CALL_BASES and tg:
            kind = _C_CALL
            tg = tg[:1]
            ret_to[i] = block_end_call_return.get(i, i + 1)
        elif base == "RET":
            kind = _C_RET
            tg = []
        elif base in _BRX_BASES:
            if not tg:
                raise RfmodelError(
                    f"kernel '{name}' instruction {i} ({x.opcode}): indirect branch without targets"
                )
            kind = _C_BRX
        elif base in _JUMP_BASES and tg:
            kind = _C_JUMP
            tg = tg[:1]
        else:
            tg = []
        ctl[i] = kind
        gk = _guard_kind(x.guard) if kind != _C_NONE else 0
        guarded[i] = 1 if gk else 0
        tlist.extend(tg)
        tptr[i + 1] = len(tlist)
        if gk == 2:
            prob[i] = 0.0
    tptr[n + 1] = len(tlist)
    tidx = np.array(tlist, dtype=np.int64) if tlist else np.zeros(1, np.int64)

    backward = np.zeros(n + 1, bool)
    for i in range(n):
        if ctl[i] == _C_JUMP and tidx[tptr[i]] <= i:
            backward[i] = True
    # forward conditional branches that leave a loop range [target, latch]
    loop_exit = np.zeros(n + 1, bool)
    latches = np.flatnonzero(backward[:n])
    for b in latches:
        lo = int(tidx[tptr[b]])
        for i in range(lo, int(b)):
            if ctl[i] == _C_JUMP and not backward[i] and guarded[i] and tidx[tptr[i]] > b:
                loop_exit[i] = True

    for i in range(n):
        k = int(ctl[i])
        if k == _C_JUMP and backward[i]:
            trip[i] = profile.trip_counts.get(i, profile.default_trip_count)
        elif k != _C_NONE and guarded[i] and _guard_kind(ins[i].guard) == 1:
            if k == _C_EXIT:
                default = profile.exit_prob
            elif k == _C_JUMP and loop_exit[i]:
                default = profile.loop_exit_prob
            else:
                default = profile.default_taken_prob
            prob[i] = profile.taken_prob.get(i, default)
    for i in profile.trip_counts:
        if i >= n or not backward[i]:
            raise RfmodelError(
                f"profile trip_counts names instruction {i}, not a backward branch of '{name}'"
            )
    for i in profile.taken_prob:
        if i >= n or ctl[i] == _C_NONE or (ctl[i] == _C_JUMP and backward[i]):
            raise RfmodelError(
                f"profile taken_prob names instruction {i}, not a forward branch or other "
                f"guarded control instruction of '{name}'"
            )
    # next control instruction at or after i (n if none)
    next_ctl = np.full(n + 1, n, np.int64)
    nxt = n
    for i in range(n - 1, -1, -1):
        if ctl[i] != _C_NONE:
            nxt = i
        next_ctl[i] = nxt
    return ctl, guarded, prob, trip, ret_to, tptr, tidx, backward, next_ctl


# ---------------------------------------------------------------------------------------------
# compiled kernels

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_G1 = np.uint64(0x9E3779B97F4A7C15)
_G2 = np.uint64(0xD6E8FEB86659FD93)
_G3 = np.uint64(0xCA5A826395121157)


@njit(cache=True)
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _uniform(key, a, b, c):
    """Uniform double in [0, 1) from a hash of (key, a, b, c)."""
    h = _mix(key ^ (np.uint64(a) * _G1))
    h = _mix(h ^ (np.uint64(b) * _G2))
    h = _mix(h ^ (np.uint64(c) * _G3))
    return float(h >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _grow(a, need):
    if need <= a.shape[0]:
        return a
    m = a.shape[0] * 2
    while m < need:
        m *= 2
    b = np.empty(m, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _walk(
    ctl, guarded, prob, trip, ret_to, tptr, tidx, backward, next_ctl, warp_ids, key, cap, entry, stop_early
):
    """Walk every warp; returns segments (start, length), per-warp segment pointers, flags, status.

    flags[w]: 0 ended at an EXIT, 1 ended without one (synthetic EXIT), 2 truncated at the cap.
    status: 0 ok, 1 cap exceeded (first warp in ``bad``), 2 call stack overflow.
    """
    n = ctl.shape[0] - 1
    nw = warp_ids.shape[0]
    seg_s = np.empty(1024, np.int64)
    seg_l = np.empty(1024, np.int64)
    wptr = np.zeros(nw + 1, np.int64)
    flags = np.zeros(nw, np.int8)
    loopcnt = np.zeros(n + 1, np.int64)
    lstack = np.empty(n + 1, np.int64)
    cstack = np.empty(MAX_CALL_DEPTH, np.int64)
    cmark = np.empty(MAX_CALL_DEPTH, np.int64)
    ns = 0
    status = 0
    bad = -1
    for w in range(nw):
        g = warp_ids[w]
        pc = entry
        count = 0
        draw = 0
        lsp = 0
        csp = 0
        flag = 1
        while True:
            if pc >= n:
                break
            j = next_ctl[pc]
            end = j + 1 if j < n else n
            ln = end - pc
            if count + ln > cap:
                ln = cap - count
                if ln > 0:
                    seg_s = _grow(seg_s, ns + 1)
                    seg_l = _grow(seg_l, ns + 1)
                    seg_s[ns] = pc
                    seg_l[ns] = ln
                    ns += 1
                count = cap
                flag = 2
                if status == 0:
                    status = 1
                    bad = w
                break
            seg_s = _grow(seg_s, ns + 1)
            seg_l = _grow(seg_l, ns + 1)
            seg_s[ns] = pc
            seg_l[ns] = ln
            ns += 1
            count += ln
            if j >= n:
                break
            k = ctl[j]
            ex = True
            if guarded[j] and not (k == 1 and backward[j]):
                u = _uniform(key, g, draw, 0)
                draw += 1
                ex = u < prob[j]
            if k == 1:  # jump
                if backward[j]:
                    if loopcnt[j] < trip[j] - 1:
                        if loopcnt[j] == 0:
                            lstack[lsp] = j
                            lsp += 1
                        loopcnt[j] += 1
                        pc = tidx[tptr[j]]
                    else:
                        if loopcnt[j] > 0:
                            loopcnt[j] = 0
                            # drop it from the loop stack (normally the top)
                            for q in range(lsp - 1, -1, -1):
                                if lstack[q] == j:
                                    for r in range(q, lsp - 1):
                                        lstack[r] = lstack[r + 1]
                                    lsp -= 1
                                    break
                        pc = j + 1
                        continue
                elif ex:
                    pc = tidx[tptr[j]]
                else:
                    pc = j + 1
                    continue
            elif k == 2:  # exit
                if ex:
                    flag = 0
                    break
                pc = j + 1
                continue
            elif k == 3:  # call
                if not ex:
                    pc = j + 1
                    continue
                if csp >= MAX_CALL_DEPTH:
                    if status == 0:
                        status = 2
                        bad = w
                    flag = 2
                    break
                cstack[csp] = ret_to[j]
                cmark[csp] = lsp
                csp += 1
                pc = tidx[tptr[j]]
                continue
            elif k == 4:  # ret
                if not ex:
                    pc = j + 1
                    continue
                if csp == 0:
                    break
                csp -= 1
                while lsp > cmark[csp]:
                    lsp -= 1
                    loopcnt[lstack[lsp]] = 0
                pc = cstack[csp]
                continue
            else:  # indirect branch
                if not ex:
                    pc = j + 1
                    continue
                nt = tptr[j + 1] - tptr[j]
                u = _uniform(key, g, draw, 1)
                draw += 1
                c = int(u * nt)
                if c >= nt:
                    c = nt - 1
                pc = tidx[tptr[j] + c]
            # a taken jump: leave every loop whose range does not hold the target
            floor = cmark[csp - 1] if csp > 0 else 0
            while lsp > floor:
                top = lstack[lsp - 1]
                if tidx[tptr[top]] <= pc <= top:
                    break
                loopcnt[top] = 0
                lsp -= 1
        while lsp > 0:
            lsp -= 1
            loopcnt[lstack[lsp]] = 0
        flags[w] = flag
        wptr[w + 1] = ns
        if status != 0 and stop_early:
            # the caller raises: the remaining warps are not needed
            for q in range(w + 1, nw):
                wptr[q + 1] = ns
            break
    return seg_s[:ns], seg_l[:ns], wptr, flags, status, bad


@njit(cache=True)
def _fill_rows(seg_s, seg_l, wptr, flags, n_static):
    """Gather index per row (``n_static`` for a synthetic EXIT) and the warp row pointers."""
    nw = wptr.shape[0] - 1
    out_ptr = np.zeros(nw + 1, np.int64)
    total = 0
    for w in range(nw):
        for s in range(wptr[w], wptr[w + 1]):
            total += seg_l[s]
        if flags[w] != 0:
            total += 1
        out_ptr[w + 1] = total
    gi = np.empty(total, np.int32)
    pos = 0
    for w in range(nw):
        for s in range(wptr[w], wptr[w + 1]):
            a = seg_s[s]
            for q in range(seg_l[s]):
                gi[pos] = a + q
                pos += 1
        if flags[w] != 0:
            gi[pos] = n_static
            pos += 1
    return gi, out_ptr


@njit(cache=True)
def _mem_lines(
    gi,
    row_ptr,
    warp_g,
    warp_cta,
    warp_wi,
    warp_active,
    pat_kind,
    pat_bytes,
    pat_stride,
    pat_foot,
    pat_base,
    pat_slot,
    n_warps_launch,
    warps_per_cta,
    line_bytes,
    key,
    fill,
    out_ptr,
):
    """Count (``fill`` False) or write (``fill`` True) the line addresses of every row.

    Returns ``(counts, lines)``: the per-row counts when counting, ``mem_line`` laid out by
    ``out_ptr`` when filling (the other array is empty).
    """
    nrows = gi.shape[0]
    nw = row_ptr.shape[0] - 1
    n_static = pat_kind.shape[0]
    counts = np.zeros(nrows if not fill else 0, np.int32)
    out = np.empty(out_ptr[nrows] if fill else 0, np.int64)
    occ = np.zeros(n_static, np.int64)
    epoch = np.full(n_static, -1, np.int64)
    scratch = np.empty(64, np.int64)
    L = line_bytes
    mask = ~(L - 1)
    for w in range(nw):
        g = warp_g[w]
        a = warp_active[w]
        for r in range(row_ptr[w], row_ptr[w + 1]):
            i = gi[r]
            kd = pat_kind[i]
            if kd <= 0:
                continue
            if epoch[i] != w:
                epoch[i] = w
                occ[i] = 0
            nth = occ[i]
            occ[i] += 1
            b = pat_bytes[i]
            s = pat_stride[i]
            span = 32 * s
            base = pat_base[i]
            m = 0
            if kd == 4:  # gather: lanes independent
                words = pat_foot[i] // b
                if words < 1:
                    words = 1
                for lane in range(a):
                    u = _uniform(key, i, g, nth * 64 + lane)
                    addr = base + int(u * words) * b
                    scratch[m] = addr & mask
                    m += 1
                    last = (addr + b - 1) & mask
                    if last != scratch[m - 1]:
                        scratch[m] = last
                        m += 1
                # sort (insertion) and dedupe
                for x in range(1, m):
                    v = scratch[x]
                    y = x - 1
                    while y >= 0 and scratch[y] > v:
                        scratch[y + 1] = scratch[y]
                        y -= 1
                    scratch[y + 1] = v
                q = 0
                for x in range(m):
                    if x == 0 or scratch[x] != scratch[x - 1]:
                        scratch[q] = scratch[x]
                        q += 1
                m = q
            else:
                if kd == 1:  # stream
                    start = base + (nth * n_warps_launch + g) * span
                elif kd == 2:  # tile
                    chunks = pat_foot[i] // span
                    if chunks < 1:
                        chunks = 1
                    c = (nth * warps_per_cta + warp_wi[w]) % chunks
                    start = base + (warp_cta[w] * chunks + c) * span
                elif kd == 3:  # random
                    chunks = pat_foot[i] // span
                    if chunks < 1:
                        chunks = 1
                    u = _uniform(key, i, g, nth * 64 + 63)
                    c = int(u * chunks)
                    if c >= chunks:
                        c = chunks - 1
                    start = base + c * span
                else:  # local: interleaved per-warp window, one slot per static instruction
                    slots = pat_foot[i] // b
                    if slots < 1:
                        slots = 1
                    start = base + (g * slots + (pat_slot[i] % slots)) * span
                if a > 0:
                    first = start & mask
                    lastb = (start + (a - 1) * s + b - 1) & mask
                    if s <= L:
                        m = (lastb - first) // L + 1
                        if fill:
                            p = out_ptr[r]
                            for x in range(m):
                                out[p + x] = first + x * L
                            continue
                    else:
                        prev = -1
                        for lane in range(a):
                            addr = start + lane * s
                            f0 = addr & mask
                            f1 = (addr + b - 1) & mask
                            ln = f0
                            while ln <= f1:
                                if ln != prev:
                                    if m >= scratch.shape[0]:
                                        scratch = _grow(scratch, m + 1)
                                    scratch[m] = ln
                                    m += 1
                                    prev = ln
                                ln += L
            if fill:
                p = out_ptr[r]
                for x in range(m):
                    out[p + x] = scratch[x]
            else:
                counts[r] = m
    return counts, out


# ---------------------------------------------------------------------------------------------
# expand


def _mem_tables(kernel: Kernel, profile: Profile):
    n = kernel.n_instrs
    kind = np.zeros(n + 1, np.int64)
    nbytes = np.ones(n + 1, np.int64)
    stride = np.ones(n + 1, np.int64)
    foot = np.zeros(n + 1, np.int64)
    base = np.zeros(n + 1, np.int64)
    slot = np.zeros(n + 1, np.int64)
    n_local = 0
    for i, x in enumerate(kernel.instrs):
        if x.op_class not in L1D_CLASSES:
            continue
        if i in profile.mem:
            pat = profile.mem[i]
        elif x.op_class in (OpClass.LD_LOCAL, OpClass.ST_LOCAL):
            pat = profile.local_access
        else:
            pat = profile.default_access
        if pat.kind == "none":
            continue
        b = pat.bytes_per_thread or (x.mem_bytes if x.mem_bytes in (1, 2, 4, 8, 16) else 4)
        kind[i] = _KIND_ID[pat.kind]
        nbytes[i] = b
        stride[i] = pat.lane_stride_bytes or b
        foot[i] = pat.footprint_bytes
        if pat.kind == "local":
            base[i] = _LOCAL_BASE if pat.region < 0 else (pat.region + 1) << _REGION_SHIFT
            slot[i] = n_local
            n_local += 1
        else:
            region = pat.region if pat.region >= 0 else _OWN_REGION0 + i
            base[i] = (region + 1) << _REGION_SHIFT
    return kind, nbytes, stride, foot, base, slot


def expand(
    kernel: Kernel,
    profile: Profile | None = None,
    *,
    ctas: int | None = None,
    threads_per_cta: int | None = None,
    max_warps: int | None = None,
    seed: int = 0,
    line_bytes: int = 128,
) -> Trace:
    """Expand ``kernel`` into the dynamic per-warp instruction streams of a launch.

    ``ctas``/``threads_per_cta`` default to the kernel's launch shape.
    ``max_warps`` keeps only the first CTAs (whole CTAs, at least one) whose
    warps fit in ``max_warps``; addresses are still those of the full launch.
    See the module docstring for the control and memory semantics.
    """
    profile = profile if profile is not None else Profile()
    if not isinstance(profile, Profile):
        raise TypeError("profile must be a Profile")
    ctas = kernel.ctas if ctas is None else ctas
    tpc = kernel.threads_per_cta if threads_per_cta is None else threads_per_cta
    if not isinstance(ctas, int | np.integer) or ctas < 1:
        raise _bad("expand", "ctas", ctas, "integer >= 1")
    if not isinstance(tpc, int | np.integer) or not 1 <= tpc <= 1024:
        raise _bad("expand", "threads_per_cta", tpc, "integer 1 .. 1024")
    if max_warps is not None and (not isinstance(max_warps, int | np.integer) or max_warps < 1):
        raise _bad("expand", "max_warps", max_warps, "None or integer >= 1")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise _bad("expand", "seed", seed, "integer >= 0")
    if line_bytes < 1 or line_bytes & (line_bytes - 1):
        raise _bad("expand", "line_bytes", line_bytes, "a power of two")
    if kernel.n_instrs == 0:
        raise RfmodelError(f"kernel '{kernel.name}' has no instructions")
    wpc = -(-int(tpc) // 32)
    n_ctas = int(ctas)
    if max_warps is not None:
        n_ctas = max(1, min(n_ctas, int(max_warps) // wpc))
    nw = n_ctas * wpc
    n = kernel.n_instrs

    ctl, guarded, prob, trip, ret_to, tptr, tidx, backward, next_ctl = _control_tables(kernel, profile)
    key = np.uint64(np.random.default_rng(seed).integers(0, 2**63, dtype=np.int64))
    warp_g = np.arange(nw, dtype=np.int64)
    seg_s, seg_l, wptr, flags, status, bad = _walk(
        ctl,
        guarded.astype(np.bool_),
        prob,
        trip,
        ret_to,
        tptr,
        tidx,
        backward,
        next_ctl,
        warp_g,
        key,
        np.int64(profile.max_warp_instrs),
        np.int64(0),
        profile.on_cap == "error",
    )
    if status == 2:
        raise RfmodelError(
            f"kernel '{kernel.name}': warp {bad} exceeds the call depth limit {MAX_CALL_DEPTH}"
        )
    n_trunc = int((flags == 2).sum())
    if status == 1:
        if profile.on_cap == "error":
            raise ExpansionLimitError(
                f"kernel '{kernel.name}': warp {bad} executes more than max_warp_instrs = "
                f"{profile.max_warp_instrs} instructions (check the trip counts, or use on_cap='truncate')"
            )
        warnings.warn(
            f"kernel '{kernel.name}': {n_trunc} warp(s) cut at {profile.max_warp_instrs} instructions",
            stacklevel=2,
        )
    gi, row_ptr = _fill_rows(seg_s, seg_l, wptr, flags, np.int64(n))
    n_implicit = int((flags == 1).sum())

    st = static_columns(kernel)
    cols = {}
    for k, a in st.items():
        cols[k] = np.take(a, gi, axis=0)
    lanes_last = int(tpc) - 32 * (wpc - 1)
    warp_active = np.full(nw, 32, np.int64)
    warp_active[wpc - 1 :: wpc] = lanes_last
    counts = np.diff(row_ptr)
    cols["active"] = np.repeat(warp_active.astype(np.int8), counts)

    mem_tables = _mem_tables(kernel, profile)  # per static instruction: kind, bytes, stride, ...
    warp_cta = (warp_g // wpc).astype(np.int64)
    # per warp: its global index, CTA, index in the CTA and active lanes
    warps = (warp_g, warp_cta, (warp_g % wpc).astype(np.int64), warp_active)
    sizes = (np.int64(int(ctas) * wpc), np.int64(wpc), np.int64(line_bytes))
    args = (gi, row_ptr, *warps, *mem_tables, *sizes, key)
    if mem_tables[0].any():
        per_row = _mem_lines(*args, False, np.zeros(1, np.int64))[0]  # out_ptr unused when counting
        mem_ptr = np.zeros(len(gi) + 1, np.int64)
        np.cumsum(per_row, out=mem_ptr[1:], dtype=np.int64)
        del per_row
        mem_line = _mem_lines(*args, True, mem_ptr)[1]
    else:
        mem_ptr = np.zeros(len(gi) + 1, np.int64)
        mem_line = np.zeros(0, np.int64)

    attrs = {
        "profile": profile.to_dict(),
        "seed": int(seed),
        "launch_ctas": int(ctas),
        "truncated_warps": n_trunc,
        "implicit_exits": n_implicit,
    }
    cols.update(warp_ptr=row_ptr, warp_cta=warp_cta.astype(np.int32), mem_ptr=mem_ptr, mem_line=mem_line)
    return kernel_trace(kernel, "expand", attrs, line_bytes, threads_per_cta=int(tpc), ctas=n_ctas, **cols)
