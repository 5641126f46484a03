"""Parametric, seeded synthetic kernels.

:func:`generate` builds a real :class:`~rfmodel.ir.Kernel` (SASS-like
opcodes, expanded register operands, basic blocks, loops closed by backward
branches, an ``EXIT``) and the :class:`~rfmodel.workload.expand.Profile` that
gives its loops their trip counts, its if-regions their probabilities and its
memory instructions their address streams.  ``expand(kernel, profile)`` turns
the pair into a trace.

Program shape
-------------
::

    prologue     S2R R0 (thread id); MOV R1 (stack pointer); live-in definitions;
                 ``prologue_size`` random instructions
    loop 0       MOV Rc0 <- 0;  H0: ``outer_body_size`` random instructions
      loop 1       ...
        innermost    ``body_size`` random instructions (+ ``if_blocks`` if-regions of
                     ``if_size`` instructions, each ``ISETP P1; @P1 BRA skip``; a ``BAR.SYNC``
                     when the kernel uses shared memory)
      latch 1      IADD3 Rc1 += 1; ISETP P0; @P0 BRA H1
    latch 0      IADD3 Rc0 += 1; ISETP P0; @P0 BRA H0
    epilogue     ``epilogue_size`` random instructions; EXIT

The loop and if scaffolding is listed in ``kernel.attrs["overhead"]`` (static
indices), so a test or study can separate it from the parametrised mix.

Random instructions
-------------------
Per region, the number of instructions of each class is apportioned exactly
(largest remainder) from ``mem_fraction``, ``mix`` and ``mem_mix``, and the
order is shuffled.  Each source operand reads the value written ``d`` GPR-writing
instructions earlier (in program order), ``d ~ Geometric(1 / dep_distance_mean)``;
when that value has been overwritten or never existed the operand reads a
live-in register.  Destinations rotate through the register pool (all
registers above the reserved ones, up to ``regs_per_thread``), so a value lives
until the pool wraps around.  64-bit (``FP64``) and 128-bit (``TENSOR``, wide
loads) operands use aligned register pairs / quads.  Every GPR-writing
instruction gets an operand width class drawn from ``width_probs`` and a
compressibility drawn from ``Beta(*compress_beta)``.

Memory instructions: global loads/stores/atomics draw an address model from
``access_mix``: ``stream`` (own region, grid-stride, no reuse), ``tile`` (all
tile instructions share one region: each CTA re-reads its ``tile_bytes`` tile),
``random`` (coalesced warp accesses uniformly within one shared working set of
``working_set_bytes``) or ``gather`` (per-lane random words in the same working
set).  Local accesses use the expander's ``local`` model; shared and constant
accesses have no cache lines.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

import numpy as np

from rfmodel.errors import SpecError
from rfmodel.ir import MEMORY_CLASSES, BasicBlock, Instr, Kernel, OpClass
from rfmodel.workload.expand import AccessPattern, Profile

__all__ = [
    "COMPUTE_CLASSES",
    "MEM_CLASSES",
    "PARAM_RANGES",
    "SYNTHETIC_PRESETS",
    "SyntheticParams",
    "build_blocks",
    "generate",
]

COMPUTE_CLASSES = ("int", "fp32", "fp64", "sfu", "tensor", "misc")
MEM_CLASSES = tuple(c.name.lower() for c in OpClass if c in MEMORY_CLASSES)
ACCESS_MODELS = ("stream", "tile", "random", "gather")

#: documented allowed ranges of the numeric fields
PARAM_RANGES: dict[str, tuple[float, float]] = {
    "threads_per_cta": (32, 1024),
    "ctas": (1, 1 << 20),
    "regs_per_thread": (16, 255),
    "mem_fraction": (0.0, 0.9),
    "mem_bytes": (4, 16),
    "tile_bytes": (128, 1 << 30),
    "working_set_bytes": (128, 1 << 36),
    "dep_distance_mean": (1.0, 256.0),
    "n_live_in": (4, 64),
    "loop_depth": (0, 4),
    "trip_count": (1, 1 << 20),
    "body_size": (1, 4096),
    "outer_body_size": (0, 4096),
    "prologue_size": (0, 4096),
    "epilogue_size": (0, 4096),
    "if_blocks": (0, 16),
    "if_size": (1, 256),
    "if_taken_prob": (0.0, 1.0),
    "compress_beta": (0.05, 100.0),
    "shared_mem_bytes": (0, 228 * 1024),
}


def _err(name: str, value, allowed: str) -> SpecError:
    return SpecError("SyntheticParams", name, value, allowed)


def _check_range(name: str, value, integer: bool = True, key: str | None = None) -> None:
    lo, hi = PARAM_RANGES[key or name]
    ok_type = isinstance(value, int | np.integer) if integer else isinstance(value, int | float | np.floating)
    if isinstance(value, bool) or not ok_type or not lo <= value <= hi:
        kind = "integer" if integer else "number"
        raise _err(name, value, f"{kind} {lo:g} .. {hi:g}")


def _check_weights(name: str, w: Mapping[str, float], allowed: tuple[str, ...], need_positive=True) -> dict:
    if not isinstance(w, Mapping):
        raise _err(name, w, f"a mapping of {', '.join(allowed)} to weights")
    out = {}
    for k, v in w.items():
        if k not in allowed:
            raise _err(f"{name}.{k}", v, f"keys {', '.join(allowed)}")
        if isinstance(v, bool) or not isinstance(v, int | float) or not (v >= 0 and math.isfinite(v)):
            raise _err(f"{name}.{k}", v, "a weight >= 0")
        out[k] = float(v)
    if need_positive and sum(out.values()) <= 0:
        raise _err(name, w, "weights with a positive sum")
    return out


def _check_probs(name: str, p, n: int) -> tuple[float, ...]:
    try:
        t = tuple(float(x) for x in p)
    except TypeError:
        raise _err(name, p, f"{n} probabilities") from None
    if len(t) != n or min(t) < 0 or abs(sum(t) - 1.0) > 1e-6:
        raise _err(name, p, f"{n} probabilities >= 0 summing to 1")
    return t


@dataclass(frozen=True)
class SyntheticParams:
    """Parameters of :func:`generate` (validated at construction; ranges in :data:`PARAM_RANGES`).

    Mixes are weights (normalised here): ``mix`` over :data:`COMPUTE_CLASSES`
    for non-memory instructions, ``mem_mix`` over :data:`MEM_CLASSES`,
    ``access_mix`` over ``stream | tile | random | gather`` for global
    accesses.  ``src_count_probs[k]`` is the probability that a compute
    instruction has ``k`` GPR sources (0-3; ``FP32``/``FP64`` have at least
    one, ``SFU`` exactly one, ``TENSOR`` always 7).  ``width_probs[k]`` is the
    probability of a ``k+1``-byte written value.  ``trip_counts`` has one entry
    per loop level, outermost first.  ``shared_mem_bytes`` 0 with shared
    accesses in the mix becomes ``threads_per_cta * mem_bytes * 2``.
    """

    name: str = "synthetic"
    threads_per_cta: int = 256
    ctas: int = 120
    regs_per_thread: int = 32
    mix: Mapping[str, float] = field(
        default_factory=lambda: {"int": 0.5, "fp32": 0.4, "sfu": 0.05, "misc": 0.05}
    )
    mem_fraction: float = 0.2
    mem_mix: Mapping[str, float] = field(default_factory=lambda: {"ld_global": 0.75, "st_global": 0.25})
    mem_bytes: int = 4
    access_mix: Mapping[str, float] = field(default_factory=lambda: {"stream": 1.0})
    tile_bytes: int = 16 * 1024
    working_set_bytes: int = 64 * 1024
    dep_distance_mean: float = 4.0
    src_count_probs: tuple[float, float, float, float] = (0.05, 0.3, 0.4, 0.25)
    n_live_in: int = 4
    loop_depth: int = 2
    trip_counts: tuple[int, ...] = (8, 16)
    body_size: int = 48
    outer_body_size: int = 8
    prologue_size: int = 8
    epilogue_size: int = 4
    if_blocks: int = 0
    if_size: int = 6
    if_taken_prob: float = 0.5
    width_probs: tuple[float, float, float, float] = (0.1, 0.1, 0.05, 0.75)
    compress_beta: tuple[float, float] = (2.0, 2.0)
    shared_mem_bytes: int = 0

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise _err("name", self.name, "a non-empty string")
        for k in (
            "threads_per_cta",
            "ctas",
            "regs_per_thread",
            "tile_bytes",
            "working_set_bytes",
            "n_live_in",
            "loop_depth",
            "body_size",
            "outer_body_size",
            "prologue_size",
            "epilogue_size",
            "if_blocks",
            "if_size",
            "shared_mem_bytes",
        ):
            _check_range(k, getattr(self, k))
        for k in ("mem_fraction", "dep_distance_mean", "if_taken_prob"):
            _check_range(k, getattr(self, k), integer=False)
        if self.mem_bytes not in (4, 8, 16):
            raise _err("mem_bytes", self.mem_bytes, "4, 8 or 16")
        object.__setattr__(self, "mix", _check_weights("mix", self.mix, COMPUTE_CLASSES))
        mem_mix = _check_weights("mem_mix", self.mem_mix, MEM_CLASSES, need_positive=self.mem_fraction > 0)
        object.__setattr__(self, "mem_mix", mem_mix)
        object.__setattr__(self, "access_mix", _check_weights("access_mix", self.access_mix, ACCESS_MODELS))
        object.__setattr__(self, "src_count_probs", _check_probs("src_count_probs", self.src_count_probs, 4))
        object.__setattr__(self, "width_probs", _check_probs("width_probs", self.width_probs, 4))
        try:
            tc = tuple(self.trip_counts)
        except TypeError:
            tc = (self.trip_counts,)
        if len(tc) != self.loop_depth:
            raise _err("trip_counts", self.trip_counts, f"{self.loop_depth} trip counts (one per loop level)")
        for t in tc:
            _check_range("trip_counts", t, key="trip_count")
        object.__setattr__(self, "trip_counts", tuple(int(t) for t in tc))
        cb = tuple(self.compress_beta) if isinstance(self.compress_beta, tuple | list) else ()
        if len(cb) != 2:
            raise _err("compress_beta", self.compress_beta, "two Beta parameters (a, b)")
        for v in cb:
            _check_range("compress_beta", v, integer=False)
        object.__setattr__(self, "compress_beta", tuple(float(v) for v in cb))
        need = _pool_lo(self.loop_depth, self.n_live_in) + 8
        if self.regs_per_thread < need:
            raise _err(
                "regs_per_thread",
                self.regs_per_thread,
                f">= {need} for loop_depth={self.loop_depth} and n_live_in={self.n_live_in}",
            )

    def to_dict(self) -> dict:
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = dict(v) if isinstance(v, Mapping) else (list(v) if isinstance(v, tuple) else v)
        return out

    def replace(self, **changes) -> SyntheticParams:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(changes)
        return SyntheticParams(**d)


def _align4(x: int) -> int:
    return -(-x // 4) * 4


def _live_lo(loop_depth: int) -> int:
    """First live-in register (after R0 thread id, R1 stack pointer and the loop counters), 4-aligned."""
    return _align4(2 + loop_depth)


def _pool_lo(loop_depth: int, n_live_in: int) -> int:
    """First register of the rotating pool, 4-aligned."""
    return _align4(_live_lo(loop_depth) + n_live_in)


# ---------------------------------------------------------------------------------------------
# presets

SYNTHETIC_PRESETS: dict[str, SyntheticParams] = {
    # TLP limited by the register file: 128 registers/thread -> 65536 / (128*32) = 16 warps per
    # 256 KB SM (64 possible); long dependency distances keep many values live (large interval
    # working sets, low register-cache hit rates).
    "register-sensitive": SyntheticParams(
        name="register-sensitive",
        regs_per_thread=128,
        threads_per_cta=256,
        ctas=240,
        mix={"int": 0.35, "fp32": 0.55, "sfu": 0.05, "misc": 0.05},
        mem_fraction=0.15,
        access_mix={"stream": 0.7, "tile": 0.3},
        dep_distance_mean=24.0,
        n_live_in=24,
        loop_depth=2,
        trip_counts=(4, 16),
        body_size=96,
        outer_body_size=16,
    ),
    # Not limited by the register file: 24 registers/thread -> 85 warps' worth of registers for
    # 64 warp slots; short producer-consumer distances.
    "register-insensitive": SyntheticParams(
        name="register-insensitive",
        regs_per_thread=24,
        threads_per_cta=256,
        ctas=240,
        mix={"int": 0.5, "fp32": 0.4, "sfu": 0.05, "misc": 0.05},
        mem_fraction=0.2,
        dep_distance_mean=3.0,
        n_live_in=4,
        loop_depth=2,
        trip_counts=(4, 16),
        body_size=32,
        outer_body_size=6,
    ),
    # Memory-heavy with reuse at L1 scale: 35% memory instructions, loads re-read a per-CTA 8 KiB
    # tile or random lines of a 64 KiB working set, so the hit rate grows from 16 KB to 128 KB L1D.
    "cache-sensitive": SyntheticParams(
        name="cache-sensitive",
        regs_per_thread=32,
        mem_fraction=0.35,
        mem_mix={"ld_global": 0.85, "st_global": 0.15},
        access_mix={"random": 0.6, "tile": 0.4},
        tile_bytes=8 * 1024,
        working_set_bytes=64 * 1024,
        dep_distance_mean=4.0,
        loop_depth=2,
        trip_counts=(4, 16),
        body_size=40,
    ),
    # Few memory instructions, all streaming (no reuse): the hit rate is ~0 whatever the L1 size.
    "cache-insensitive": SyntheticParams(
        name="cache-insensitive",
        regs_per_thread=32,
        mem_fraction=0.08,
        mem_mix={"ld_global": 0.75, "st_global": 0.25},
        access_mix={"stream": 1.0},
        mix={"int": 0.3, "fp32": 0.6, "sfu": 0.05, "misc": 0.05},
        dep_distance_mean=4.0,
        loop_depth=2,
        trip_counts=(4, 16),
        body_size=48,
    ),
    # Integer-intensive: 75% integer ALU, narrow values common (65% narrower than 4 bytes, 35% one
    # byte) and compressible (Beta(4, 2), mean 0.67), as the coalescing-RF paper reports.
    "integer-heavy": SyntheticParams(
        name="integer-heavy",
        regs_per_thread=32,
        mix={"int": 0.75, "fp32": 0.1, "sfu": 0.05, "misc": 0.1},
        mem_fraction=0.2,
        width_probs=(0.35, 0.2, 0.1, 0.35),
        compress_beta=(4.0, 2.0),
        src_count_probs=(0.05, 0.3, 0.4, 0.25),
        loop_depth=2,
        trip_counts=(4, 16),
        body_size=48,
    ),
    # FP-intensive: 70% FP32 (mostly 3-source FFMA), values fill all 32 bits (90% 4-byte) and
    # compress poorly (Beta(1.2, 5), mean 0.19).
    "fp-heavy": SyntheticParams(
        name="fp-heavy",
        regs_per_thread=40,
        mix={"int": 0.2, "fp32": 0.7, "sfu": 0.07, "misc": 0.03},
        mem_fraction=0.15,
        width_probs=(0.03, 0.04, 0.03, 0.9),
        compress_beta=(1.2, 5.0),
        src_count_probs=(0.0, 0.15, 0.35, 0.5),
        loop_depth=2,
        trip_counts=(4, 16),
        body_size=48,
    ),
}


# ---------------------------------------------------------------------------------------------
# basic blocks


def build_blocks(
    instrs: list[Instr], functions: Mapping[str, int] | None = None, kernel_name: str = "kernel"
) -> tuple[list[BasicBlock], dict[str, int]]:
    """Basic blocks (supergraph edges, as :class:`~rfmodel.ir.BasicBlock` describes) of ``instrs``.

    ``functions`` maps function names to their entry *instruction* indices
    (the kernel itself is at 0 under ``kernel_name``); a function spans up to
    the next entry.  Blocks start at 0, at function entries, at branch/call
    targets and after every control instruction.  Returns the blocks and the
    function -> entry *block* map for :attr:`Kernel.functions`.
    """
    n = len(instrs)
    entries = {kernel_name: 0}
    for k, v in (functions or {}).items():
        entries[k] = int(v)
    leaders = {0, *entries.values()}
    for i, x in enumerate(instrs):
        leaders.update(int(t) for t in x.targets)
        if x.op_class in (OpClass.BRANCH, OpClass.EXIT) and i + 1 < n:
            leaders.add(i + 1)
    leaders = sorted(t for t in leaders if 0 <= t < n)
    starts = {s: b for b, s in enumerate(leaders)}
    ends = leaders[1:] + [n]
    by_entry = sorted((v, k) for k, v in entries.items())

    def func_of(i: int) -> str:
        name = by_entry[0][1]
        for v, k in by_entry:
            if v <= i:
                name = k
        return name

    blocks = [
        BasicBlock(id=b, start=s, end=e, func=func_of(s))
        for b, (s, e) in enumerate(zip(leaders, ends, strict=True))
    ]
    # return sites of each function
    ret_sites: dict[str, list[int]] = {}
    for b in blocks:
        last = instrs[b.end - 1]
        if last.base in ("CALL", "CAL", "JCAL") and last.targets and b.end < n:
            callee = func_of(int(last.targets[0]))
            b.call_return = starts[b.end]
            ret_sites.setdefault(callee, []).append(b.call_return)
    for b in blocks:
        last = instrs[b.end - 1]
        base = last.base
        guarded = last.guard is not None
        fall = [starts[b.end]] if b.end < n else []
        if last.op_class == OpClass.EXIT:
            succs = fall if guarded else []
        elif base == "RET":
            succs = list(ret_sites.get(b.func, [])) + (fall if guarded else [])
        elif base in ("CALL", "CAL", "JCAL") and last.targets:
            succs = [starts[int(last.targets[0])]] + (fall if guarded else [])
        elif base in ("BRA", "JMP", "BRX", "JMX") and last.targets:
            succs = [starts[int(t)] for t in last.targets] + (fall if guarded else [])
        else:
            succs = fall
        b.succs = tuple(dict.fromkeys(succs))
    return blocks, {k: starts[v] for k, v in entries.items()}


# ---------------------------------------------------------------------------------------------
# generator

_OPCODES = {
    "int": {0: "MOV", 1: "SHF.L.U32", 2: "LOP3.LUT", 3: "IADD3"},
    "fp32": {1: "FMUL", 2: "FADD", 3: "FFMA"},
    "fp64": {1: "DMUL", 2: "DADD", 3: "DFMA"},
}
_CLASS = {
    "int": OpClass.INT,
    "fp32": OpClass.FP32,
    "fp64": OpClass.FP64,
    "sfu": OpClass.SFU,
    "tensor": OpClass.TENSOR,
    "misc": OpClass.MISC,
    "ld_global": OpClass.LD_GLOBAL,
    "st_global": OpClass.ST_GLOBAL,
    "ld_shared": OpClass.LD_SHARED,
    "st_shared": OpClass.ST_SHARED,
    "ld_local": OpClass.LD_LOCAL,
    "st_local": OpClass.ST_LOCAL,
    "ld_const": OpClass.LD_CONST,
    "atomic": OpClass.ATOMIC,
}


def _apportion(n: int, weights: Mapping[str, float]) -> dict[str, int]:
    """Largest-remainder split of ``n`` items over ``weights`` (ties by key order)."""
    keys = [k for k, w in weights.items() if w > 0]
    if n <= 0 or not keys:
        return {k: 0 for k in keys}
    tot = sum(weights[k] for k in keys)
    exact = [n * weights[k] / tot for k in keys]
    base = [math.floor(e) for e in exact]
    rem = n - sum(base)
    order = sorted(range(len(keys)), key=lambda j: (-(exact[j] - base[j]), j))
    for j in order[:rem]:
        base[j] += 1
    return dict(zip(keys, base, strict=True))


class _Gen:
    def __init__(self, p: SyntheticParams, rng: np.random.Generator):
        self.p = p
        self.rng = rng
        self.instrs: list[dict] = []
        self.overhead: list[int] = []
        self.R = p.regs_per_thread
        self.counters = list(range(2, 2 + p.loop_depth))
        lo = _live_lo(p.loop_depth)
        self.live = list(range(lo, lo + p.n_live_in))
        self.pool_lo = _pool_lo(p.loop_depth, p.n_live_in)
        self.pool_n = self.R - self.pool_lo
        self.ptr = 0
        self.writer: dict[int, int] = {}
        self.history: list[tuple[int, tuple[int, ...]]] = []
        self.vid = 0
        self.mem: dict[int, AccessPattern] = {}
        self.trips: dict[int, int] = {}
        self.taken: dict[int, float] = {}
        self.uses_shared = False
        self.tile_region = 1
        self.random_region = 0

    # -- registers -----------------------------------------------------------------------------
    def _alloc(self, k: int) -> tuple[int, ...]:
        """Next ``k`` aligned registers of the rotating pool."""
        off = -(-self.ptr // k) * k
        if off + k > self.pool_n:
            off = 0
        self.ptr = off + k
        if self.ptr >= self.pool_n:
            self.ptr = 0
        regs = tuple(range(self.pool_lo + off, self.pool_lo + off + k))
        return regs

    def _wrote(self, regs: tuple[int, ...]) -> None:
        self.vid += 1
        for r in regs:
            self.writer[r] = self.vid
        self.history.append((self.vid, regs))

    def _pick(self, k: int) -> tuple[int, ...]:
        """Source of ``k`` aligned registers at a geometric dependency distance.

        The value written ``d`` GPR-writing instructions ago when it is still
        intact (for ``k > 1``: the nearest intact value of at least ``k``
        registers at distance ``d .. 2d``), else an aligned group of live-ins.
        """
        d = int(self.rng.geometric(1.0 / self.p.dep_distance_mean))
        h = self.history
        for dd in range(d, min(len(h), d if k == 1 else 2 * d) + 1):
            vid, regs = h[-dd]
            if len(regs) >= k and all(self.writer.get(r) == vid for r in regs):
                return regs[:k]
        groups = len(self.live) // k
        g = int(self.rng.integers(groups))
        return tuple(self.live[g * k : g * k + k])

    def _value_attrs(self) -> tuple[int, float]:
        w = int(self.rng.choice(4, p=self.p.width_probs)) + 1
        a, b = self.p.compress_beta
        return w, float(self.rng.beta(a, b))

    # -- emission ------------------------------------------------------------------------------
    def emit(self, opcode: str, cls: OpClass, dst=(), src=(), overhead=False, **kw) -> int:
        i = len(self.instrs)
        width, comp = self._value_attrs() if dst else (0, float("nan"))
        d = dict(
            opcode=opcode,
            op_class=cls,
            dst=tuple(dst),
            src=tuple(src),
            width_class=width,
            compressibility=comp,
        )
        d.update(kw)
        self.instrs.append(d)
        if dst:
            self._wrote(tuple(dst))
        if overhead:
            self.overhead.append(i)
        return i

    def random_instr(self, kind: str) -> None:
        p = self.p
        rng = self.rng
        cls = _CLASS[kind]
        wide = {4: 1, 8: 2, 16: 4}[p.mem_bytes]
        sfx = {4: "", 8: ".64", 16: ".128"}[p.mem_bytes]
        if kind in ("int", "fp32", "fp64"):
            ns = int(rng.choice(4, p=p.src_count_probs))
            if kind != "int":
                ns = max(ns, 1)
            k = 2 if kind == "fp64" else 1
            src = [r for _ in range(ns) for r in self._pick(k)]
            self.emit(_OPCODES[kind][ns], cls, self._alloc(k), src)
        elif kind == "sfu":
            op = ("MUFU.EX2", "MUFU.RSQ", "MUFU.SIN", "I2F")[int(rng.integers(4))]
            self.emit(op, cls, self._alloc(1), self._pick(1))
        elif kind == "tensor":
            src = self._pick(2) + self._pick(1) + self._pick(4)
            self.emit("HMMA.1688.F32", cls, self._alloc(4), src)
        elif kind == "misc":
            self.emit("S2R", cls, self._alloc(1), ())
        elif kind == "ld_global":
            i = self.emit("LDG.E" + sfx, cls, self._alloc(wide), self._pick(2), mem_bytes=p.mem_bytes)
            self.mem[i] = self._global_pattern()
        elif kind == "st_global":
            i = self.emit("STG.E" + sfx, cls, (), self._pick(2) + self._pick(wide), mem_bytes=p.mem_bytes)
            self.mem[i] = self._global_pattern()
        elif kind == "atomic":
            i = self.emit(
                "ATOMG.E.ADD.STRONG.GPU", cls, self._alloc(1), self._pick(2) + self._pick(1), mem_bytes=4
            )
            self.mem[i] = self._global_pattern(bytes_per_thread=4)
        elif kind == "ld_shared":
            self.uses_shared = True
            self.emit("LDS" + sfx, cls, self._alloc(wide), self._pick(1), mem_bytes=p.mem_bytes)
        elif kind == "st_shared":
            self.uses_shared = True
            self.emit("STS" + sfx, cls, (), self._pick(1) + self._pick(wide), mem_bytes=p.mem_bytes)
        elif kind == "ld_local":
            self.emit("LDL" + sfx, cls, self._alloc(wide), (1,), mem_bytes=p.mem_bytes)
        elif kind == "st_local":
            self.emit("STL" + sfx, cls, (), (1,) + self._pick(wide), mem_bytes=p.mem_bytes)
        elif kind == "ld_const":
            self.emit("LDC", cls, self._alloc(1), self._pick(1), mem_bytes=4)
        else:  # pragma: no cover - the mixes are validated
            raise AssertionError(kind)

    def _global_pattern(self, bytes_per_thread: int = 0) -> AccessPattern:
        p = self.p
        am = p.access_mix
        keys = [k for k in ACCESS_MODELS if am.get(k, 0) > 0]
        w = np.array([am[k] for k in keys], dtype=float)
        kind = keys[int(self.rng.choice(len(keys), p=w / w.sum()))]
        if kind == "stream":
            return AccessPattern("stream", bytes_per_thread)
        if kind == "tile":
            return AccessPattern(
                "tile", bytes_per_thread, footprint_bytes=p.tile_bytes, region=self.tile_region
            )
        return AccessPattern(
            kind, bytes_per_thread, footprint_bytes=p.working_set_bytes, region=self.random_region
        )

    def region(self, n: int) -> None:
        """``n`` random instructions with the exact class mix, shuffled."""
        p = self.p
        n_mem = round(n * p.mem_fraction) if sum(p.mem_mix.values()) > 0 else 0
        kinds: list[str] = []
        for k, c in _apportion(n - n_mem, p.mix).items():
            kinds += [k] * c
        for k, c in _apportion(n_mem, p.mem_mix).items():
            kinds += [k] * c
        order = self.rng.permutation(len(kinds))
        for j in order:
            self.random_instr(kinds[int(j)])

    def innermost(self) -> None:
        p = self.p
        n = p.body_size
        # if-regions start at sorted random offsets of the body
        cuts = sorted(int(x) for x in self.rng.integers(0, n + 1, size=p.if_blocks)) if p.if_blocks else []
        bar = sum(p.mem_mix.get(k, 0) for k in ("ld_shared", "st_shared")) > 0 and p.mem_fraction > 0
        if bar:
            self.emit("BAR.SYNC.DEFER_BLOCKING", OpClass.BARRIER, overhead=True)
        done = 0
        for c in cuts:
            self.region(c - done)
            done = c
            self.emit(
                "ISETP.GT.AND", OpClass.INT, (), self._pick(1) + self._pick(1), overhead=True, pdst=(1,)
            )
            bra = self.emit("BRA", OpClass.BRANCH, (), (), overhead=True, guard="P1", psrc=(1,))
            self.region(p.if_size)
            self.instrs[bra]["targets"] = (len(self.instrs),)
            self.taken[bra] = p.if_taken_prob
        self.region(n - done)

    def loop(self, level: int) -> None:
        p = self.p
        c = self.counters[level]
        self.emit("MOV", OpClass.INT, (c,), (), overhead=True)
        head = len(self.instrs)
        if level == p.loop_depth - 1:
            self.innermost()
        else:
            self.region(p.outer_body_size)
            self.loop(level + 1)
        self.emit("IADD3", OpClass.INT, (c,), (c,), overhead=True)
        self.emit("ISETP.NE.AND", OpClass.INT, (), (c,), overhead=True, pdst=(0,))
        latch = self.emit(
            "BRA", OpClass.BRANCH, (), (), overhead=True, guard="P0", psrc=(0,), targets=(head,)
        )
        self.trips[latch] = p.trip_counts[level]

    def program(self) -> None:
        p = self.p
        self.emit("S2R", OpClass.MISC, (0,), (), overhead=True)
        self.emit("MOV", OpClass.INT, (1,), (), overhead=True)
        for r in self.live:
            self.emit("IMAD", OpClass.INT, (r,), (0, 0), overhead=True)
        self.region(p.prologue_size)
        if p.loop_depth:
            self.loop(0)
        else:
            self.innermost()
        self.region(p.epilogue_size)
        self.emit("EXIT", OpClass.EXIT, overhead=True)


def generate(params: SyntheticParams, seed: int = 0) -> tuple[Kernel, Profile]:
    """A synthetic kernel and its expansion profile; same ``params`` and ``seed`` give the same pair."""
    if not isinstance(params, SyntheticParams):
        raise TypeError("params must be a SyntheticParams")
    rng = np.random.default_rng(seed)
    g = _Gen(params, rng)
    g.program()
    instrs = [
        Instr(
            pc=16 * i,
            opcode=d["opcode"],
            op_class=d["op_class"],
            dst=d["dst"],
            src=d["src"],
            reuse=(False,) * len(d["src"]),
            guard=d.get("guard"),
            pdst=d.get("pdst", ()),
            psrc=d.get("psrc", ()),
            targets=d.get("targets", ()),
            mem_bytes=d.get("mem_bytes", 0),
            width_class=d["width_class"],
            compressibility=d["compressibility"],
        )
        for i, d in enumerate(g.instrs)
    ]
    blocks, funcs = build_blocks(instrs, kernel_name=params.name)
    shmem = params.shared_mem_bytes
    if g.uses_shared and shmem == 0:
        shmem = params.threads_per_cta * params.mem_bytes * 2
    pdict = params.to_dict()
    kernel = Kernel(
        name=params.name,
        instrs=instrs,
        blocks=blocks,
        regs_per_thread=params.regs_per_thread,
        threads_per_cta=params.threads_per_cta,
        ctas=params.ctas,
        shared_mem_bytes=shmem,
        arch="synthetic",
        source="synthetic:" + json.dumps({"params": pdict, "seed": seed}, sort_keys=True),
        functions=funcs,
        attrs={"params": pdict, "seed": seed, "overhead": list(g.overhead)},
    )
    profile = Profile(
        trip_counts=g.trips, taken_prob=g.taken, mem=g.mem, source=f"synthetic '{params.name}' seed {seed}"
    )
    return kernel, profile
