"""Workload intermediate representation: the static program.

A :class:`Kernel` is a list of :class:`Instr` in program order, cut into
:class:`BasicBlock` s with successor edges.  Every reader (SASS, Accel-Sim
trace, synthetic generator) produces this form; every compiler pass and the
trace expander consume it.

Register conventions
--------------------
* General-purpose registers (GPRs) are integers ``0..254``.  ``RZ`` is never
  listed: it is not a register-file access.
* Register groups are *expanded*: ``R2.64`` as a source reads ``(2, 3)``;
  ``LDG.E.128 R4`` writes ``(4, 5, 6, 7)``.
* Predicates are integers in their own space: ``P0..P6`` are ``0..6`` and the
  uniform predicates ``UP0..UP6`` are ``8..14``; ``PT``/``UPT`` are not listed.
  A guard predicate is also listed in ``psrc`` (it is a read).
* Uniform registers ``UR0..UR62`` are ``0..62`` in ``udst``/``usrc``.
  Predicates and uniform registers matter for dependencies only; they are not
  general RF bank accesses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

NO_REG = -1


class OpClass(IntEnum):
    """Instruction classes, as the pipeline models see them.

    The integer values are stored in traces (``int8``); do not renumber.
    """

    INT = 0  # integer ALU (IADD3, IMAD, LOP3, SHF, ISETP, MOV, SEL, ...)
    FP32 = 1  # single/half-precision FP pipe (FFMA, FADD, FMUL, HFMA2, FSETP ...)
    FP64 = 2  # double precision (DFMA, DADD, DMUL, DSETP ...)
    SFU = 3  # special function and conversion (MUFU, F2F, I2F, F2I, FRND, POPC ...)
    TENSOR = 4  # HMMA, IMMA, ...
    LD_GLOBAL = 5  # LDG, LD (generic), LDGSTS
    ST_GLOBAL = 6  # STG, ST (generic), RED
    LD_SHARED = 7  # LDS, LDSM
    ST_SHARED = 8  # STS
    LD_LOCAL = 9  # LDL
    ST_LOCAL = 10  # STL
    LD_CONST = 11  # LDC, ULDC is uniform and classed MISC
    ATOMIC = 12  # ATOM, ATOMG, ATOMS (a read-modify-write that returns a value)
    BRANCH = 13  # BRA, BRX, JMP, JMX, CALL, RET, BREAK
    BARRIER = 14  # BAR (CTA-wide __syncthreads)
    EXIT = 15  # EXIT
    MISC = 16  # S2R, NOP, BSSY, BSYNC, DEPBAR, WARPSYNC, uniform-datapath ops, ...


N_OPCLASSES = len(OpClass)

MEMORY_CLASSES = frozenset(
    {
        OpClass.LD_GLOBAL,
        OpClass.ST_GLOBAL,
        OpClass.LD_SHARED,
        OpClass.ST_SHARED,
        OpClass.LD_LOCAL,
        OpClass.ST_LOCAL,
        OpClass.LD_CONST,
        OpClass.ATOMIC,
    }
)
#: classes whose accesses go through the L1 data cache (global/local/atomics)
L1D_CLASSES = frozenset(
    {OpClass.LD_GLOBAL, OpClass.ST_GLOBAL, OpClass.LD_LOCAL, OpClass.ST_LOCAL, OpClass.ATOMIC}
)
LOAD_CLASSES = frozenset(
    {OpClass.LD_GLOBAL, OpClass.LD_SHARED, OpClass.LD_LOCAL, OpClass.LD_CONST, OpClass.ATOMIC}
)
STORE_CLASSES = frozenset({OpClass.ST_GLOBAL, OpClass.ST_SHARED, OpClass.ST_LOCAL})
CONTROL_CLASSES = frozenset({OpClass.BRANCH, OpClass.EXIT, OpClass.BARRIER})


@dataclass(frozen=True, slots=True)
class Instr:
    """One static instruction.

    ``src`` lists GPR reads in operand order with groups expanded; a register
    named twice is listed twice (each operand slot is one collector read).
    ``reuse[i]`` is the ``.reuse`` hint of ``src[i]``.  ``targets`` holds the
    resolved branch/call targets as instruction *indices* in the kernel.
    ``width_class`` (1-4 bytes, 0 unknown) and ``compressibility`` (fraction
    of the 1024-bit warp value saved by compression, NaN unknown) are optional
    value attributes for value-dependent designs.
    """

    pc: int
    opcode: str
    op_class: OpClass
    dst: tuple[int, ...] = ()
    src: tuple[int, ...] = ()
    reuse: tuple[bool, ...] = ()
    guard: str | None = None
    pdst: tuple[int, ...] = ()
    psrc: tuple[int, ...] = ()
    udst: tuple[int, ...] = ()
    usrc: tuple[int, ...] = ()
    targets: tuple[int, ...] = ()
    mem_bytes: int = 0  # bytes per thread for memory ops (4, 8, 16)
    width_class: int = 0
    compressibility: float = float("nan")
    line: int = 0  # source line in the file it came from (0 if none)

    @property
    def base(self) -> str:
        """Mnemonic without modifiers: ``LDG`` for ``LDG.E.128``."""
        return self.opcode.split(".", 1)[0]

    @property
    def modifiers(self) -> tuple[str, ...]:
        return tuple(self.opcode.split(".")[1:])

    @property
    def is_memory(self) -> bool:
        return self.op_class in MEMORY_CLASSES

    @property
    def is_control(self) -> bool:
        return self.op_class in CONTROL_CLASSES


@dataclass(slots=True)
class BasicBlock:
    """Instructions ``[start, end)`` of the kernel, and the CFG edges.

    ``succs`` are block ids.  Edges of the *supergraph*: a block ending in
    ``CALL`` has the callee's entry as successor (``call_return`` names the
    block control returns to); a block ending in ``RET`` has every return
    site of its function as successors.  ``func`` names the function (the
    kernel itself or an in-section subroutine) the block belongs to.
    """

    id: int
    start: int
    end: int
    succs: tuple[int, ...] = ()
    func: str = ""
    call_return: int | None = None
    label: str = ""

    def __len__(self) -> int:
        return self.end - self.start


@dataclass
class Kernel:
    """A static program plus its launch shape.

    ``regs_per_thread`` is the allocation count (for SASS: the compiler's,
    which includes the two registers beyond the highest one visible);
    ``ctas``/``threads_per_cta`` give the default launch grid.
    ``functions`` maps each function name to its entry block id.
    """

    name: str
    instrs: list[Instr]
    blocks: list[BasicBlock]
    regs_per_thread: int
    threads_per_cta: int = 256
    ctas: int = 120
    shared_mem_bytes: int = 0
    arch: str = ""
    source: str = ""  # where it came from: file path, generator parameters
    functions: dict[str, int] = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)

    @property
    def n_instrs(self) -> int:
        return len(self.instrs)

    @property
    def warps_per_cta(self) -> int:
        return -(-self.threads_per_cta // 32)

    def block_of(self) -> list[int]:
        """Block id of every instruction index."""
        out = [0] * len(self.instrs)
        for b in self.blocks:
            for i in range(b.start, b.end):
                out[i] = b.id
        return out

    def preds(self) -> list[list[int]]:
        """Predecessor lists of the blocks (supergraph edges)."""
        p: list[list[int]] = [[] for _ in self.blocks]
        for b in self.blocks:
            for s in b.succs:
                p[s].append(b.id)
        return p

    def max_reg(self) -> int:
        """Highest GPR index named by any instruction (-1 if none)."""
        m = -1
        for ins in self.instrs:
            for r in ins.dst + ins.src:
                if r > m:
                    m = r
        return m
