"""The SASS opcode table: instruction class and operand roles per base mnemonic.

The *base* mnemonic is the opcode text before the first dot (``LDG`` for
``LDG.E.128.SYS``).  :data:`OPCODE_CLASS` maps every base mnemonic the reader
knows (Turing through Hopper, sm_75 to sm_90) to an
:class:`~rfmodel.ir.OpClass`.  A mnemonic that is not in the table is
never dropped: :func:`classify` places it with the first matching rule of
:data:`FALLBACK_RULES` and says which rule it used, and the reader records that
in ``Kernel.attrs["unknown_opcodes"]``.

Where a choice below is a judgement rather than something the disassembler
says, the comment next to the entry gives the reason.  The variable-latency
observations quoted come from the fraction of instances that set a write
scoreboard in the control field of a corpus of sm_75 to sm_90 kernels.
"""

from __future__ import annotations

from rfmodel.ir import OpClass

__all__ = [
    "BRANCH_OPS",
    "classed_by_name",
    "CARRY_OUT_OPS",
    "FALLBACK_RULES",
    "FP64_OPS",
    "GLOBAL_ADDRESS_OPS",
    "LOAD_DATA_OPS",
    "NO_DST_OPS",
    "OPCODE_CLASS",
    "PRED_THEN_REG_OPS",
    "STORE_DATA_OPS",
    "TWO_PRED_DST_OPS",
    "classify",
    "is_known",
]

_I, _F, _D, _S, _T = OpClass.INT, OpClass.FP32, OpClass.FP64, OpClass.SFU, OpClass.TENSOR

#: base mnemonic -> instruction class
# fmt: off
OPCODE_CLASS: dict[str, OpClass] = {
    # ---- integer ALU (fixed latency)
    **dict.fromkeys(
        [
            "IADD3", "IADD", "IADD32I", "IMAD", "IMAD32I", "IMUL", "IMUL32I", "IMNMX", "IABS", "ISETP",
            "ISCADD", "ISCADD32I", "LEA", "LOP", "LOP3", "LOP32I", "SHF", "SHL", "SHR", "MOV", "MOV32I",
            "SEL", "PRMT", "BMSK", "SGXT", "ICMP", "IDP", "IDP4A", "VABSDIFF", "VABSDIFF4", "VIADD",
            "VIMNMX", "VIMNMX3", "VIADDMNMX", "P2R", "R2P", "PLOP3", "PSETP", "CS2R", "VOTE", "XMAD",
            "BFE", "BFI", "IMNMX3", "QSPC",
        ],
        _I,
    ),
    # ---- single/half precision FP pipe (fixed latency)
    **dict.fromkeys(
        [
            "FADD", "FADD32I", "FMUL", "FMUL32I", "FFMA", "FFMA32I", "FMNMX", "FMNMX3", "FSEL", "FSET",
            "FSETP", "FSWZADD", "FCMP", "HADD2", "HADD2_32I", "HMUL2", "HMUL2_32I", "HFMA2", "HFMA2_32I",
            "HSET2", "HSETP2", "HMNMX2", "VHMNMX",
            # sm_90 int->float and the FP32->packed conversions are fixed-latency (no write
            # scoreboard in the corpus), unlike I2F/F2F, so they are FP-pipe ops here
            "I2FP", "F2FP",
        ],
        _F,
    ),
    # ---- double precision
    **dict.fromkeys(["DADD", "DMUL", "DFMA", "DMNMX", "DSETP", "DSET"], _D),
    # ---- special function, conversion and bit-scan units (variable latency)
    **dict.fromkeys(
        ["MUFU", "F2F", "F2I", "I2F", "I2I", "FRND", "POPC", "FLO", "BREV", "FCHK", "RRO", "F2IP", "I2IP"],
        _S,
    ),
    # ---- tensor cores
    **dict.fromkeys(
        ["HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "OMMA", "QMMA"], _T
    ),
    # ---- memory
    **dict.fromkeys(
        # texture and surface loads go through the L1/texture path like global loads
        ["LDG", "LD", "LDGSTS", "TEX", "TLD", "TLD4", "TMML", "TXD", "TXQ", "SULD", "LDGMC"],
        OpClass.LD_GLOBAL,
    ),
    **dict.fromkeys(["STG", "ST", "RED", "REDG", "SUST", "SURED"], OpClass.ST_GLOBAL),
    **dict.fromkeys(["LDS", "LDSM"], OpClass.LD_SHARED),
    **dict.fromkeys(["STS", "STSM"], OpClass.ST_SHARED),
    "LDL": OpClass.LD_LOCAL,
    "STL": OpClass.ST_LOCAL,
    "LDC": OpClass.LD_CONST,
    **dict.fromkeys(["ATOM", "ATOMG", "ATOMS", "SUATOM"], OpClass.ATOMIC),
    # ---- control
    **dict.fromkeys(["BRA", "BRX", "JMP", "JMX", "CALL", "RET", "BREAK"], OpClass.BRANCH),
    # CTA barrier; the cluster barrier of sm_90 is issued from the uniform datapath but
    # synchronises like BAR
    **dict.fromkeys(["BAR", "UCGABAR_ARV", "UCGABAR_WAIT"], OpClass.BARRIER),
    **dict.fromkeys(["EXIT", "KILL"], OpClass.EXIT),
    # ---- everything else: convergence, scoreboards, fences, special registers,
    # warp-collective variable-latency ops (SHFL/MATCH/REDUX go through the MIO
    # path and always set a write scoreboard), and the uniform datapath
    **dict.fromkeys(
        [
            "S2R", "NOP", "BSSY", "BSYNC", "BMOV", "BPT", "DEPBAR", "WARPSYNC", "YIELD", "MEMBAR",
            "ERRBAR", "CGAERRBAR", "CCTL", "CCTLL", "FENCE", "NANOSLEEP", "LDGDEPBAR", "ARRIVES",
            "ENDCOLLECTIVE", "PMTRIG", "SHFL", "MATCH", "REDUX", "LEPC", "ELECT", "SYNCS", "ACQBULK",
            "B2R", "R2B", "SETCTAID", "SETLMEMBASE", "GETLMEMBASE", "CSMTEST", "PREEXIT", "VOTEU",
            "S2UR", "R2UR", "ULDC", "UMOV", "UIADD3", "UIMAD", "ULEA", "USHF", "UISETP", "USEL",
            "ULOP3", "UPLOP3", "UFLO", "UPOPC", "UBREV", "UPRMT", "USGXT", "UBMSK", "UP2UR", "UR2UP",
            "UPSETP", "UCLEA", "UTMALDG", "UTMASTG", "UTMAPF", "UTMACCTL", "UTMACMDFLUSH", "UBLKCP",
            "UBLKRED", "UBLKPF", "USETMAXREG", "UVIADD", "UVIMNMX", "UIABS", "ULEPC", "USTGR", "WARPGROUP",
        ],
        OpClass.MISC,
    ),
}
# fmt: on


def _uniform(base: str) -> bool:
    return len(base) > 1 and base[0] == "U"


def _memory(base: str) -> OpClass | None:
    if "ATOM" in base:
        return OpClass.ATOMIC
    if base.startswith("RED"):
        return OpClass.ST_GLOBAL
    for key, space in (("LD", "LD"), ("ST", "ST")):
        pos = base.find(key)
        if pos < 0:
            continue
        rest = base[pos + 2 :]
        if space == "LD":
            if rest.startswith("S"):
                return OpClass.LD_SHARED
            if rest.startswith("L"):
                return OpClass.LD_LOCAL
            if rest.startswith("C"):
                return OpClass.LD_CONST
            return OpClass.LD_GLOBAL
        if rest.startswith("S"):
            return OpClass.ST_SHARED
        if rest.startswith("L"):
            return OpClass.ST_LOCAL
        return OpClass.ST_GLOBAL
    return None


#: ordered fallback rules for mnemonics not in :data:`OPCODE_CLASS`:
#: ``(rule name, description)``; :func:`classify` applies the first that matches
FALLBACK_RULES: tuple[tuple[str, str], ...] = (
    ("uniform", "starts with 'U' (uniform datapath) -> MISC"),
    (
        "memory",
        "contains ATOM -> ATOMIC; starts with RED -> ST_GLOBAL; contains LD/ST -> load/store class "
        "by the letter after it (S shared, L local, C constant, else global)",
    ),
    ("tensor", "contains MMA -> TENSOR"),
    ("fp64", "starts with 'D' -> FP64"),
    ("fp32", "starts with 'F' or 'H' -> FP32"),
    ("int", "starts with 'I' -> INT"),
    ("misc", "anything else -> MISC"),
)


def classify(base: str) -> tuple[OpClass, str | None]:
    """Class of a base mnemonic and the fallback rule used (``None`` if it is in the table)."""
    cls = OPCODE_CLASS.get(base)
    if cls is not None:
        return cls, None
    if _uniform(base):
        return OpClass.MISC, "uniform"
    mem = _memory(base)
    if mem is not None:
        return mem, "memory"
    if "MMA" in base:
        return OpClass.TENSOR, "tensor"
    if base.startswith("D"):
        return OpClass.FP64, "fp64"
    if base.startswith(("F", "H")):
        return OpClass.FP32, "fp32"
    if base.startswith("I"):
        return OpClass.INT, "int"
    return OpClass.MISC, "misc"


def is_known(base: str) -> bool:
    return base in OPCODE_CLASS


# --------------------------------------------------------------------------------------------------
# operand roles

# fmt: off
#: instructions with no destination operand: their first operand is a source
NO_DST_OPS = frozenset(
    {
        "BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "KILL", "BREAK", "BSSY", "BSYNC", "WARPSYNC",
        "BAR", "DEPBAR", "NOP", "YIELD", "NANOSLEEP", "MEMBAR", "ERRBAR", "CGAERRBAR", "CCTL", "CCTLL",
        "BPT", "LDGDEPBAR", "ENDCOLLECTIVE", "FENCE", "ARRIVES", "PMTRIG", "PREEXIT", "STG", "ST", "STS",
        "STL", "RED", "REDG", "LDGSTS", "STSM", "SUST", "SURED", "UTMALDG", "UTMASTG", "UTMAPF",
        "UTMACCTL", "UTMACMDFLUSH", "UBLKCP", "UBLKRED", "UBLKPF", "UCGABAR_ARV", "UCGABAR_WAIT",
        "USETMAXREG", "ACQBULK", "SETCTAID", "SETLMEMBASE", "USTGR", "WARPGROUP",
    }
)
# fmt: on

#: control transfers (a basic block ends after them)
BRANCH_OPS = frozenset({"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "KILL", "BREAK"})

#: ``Pd, Pd2, ...``: compare/predicate-logic ops write two predicates
TWO_PRED_DST_OPS = frozenset(
    {"ISETP", "FSETP", "DSETP", "HSETP2", "PSETP", "UISETP", "UPSETP", "PLOP3", "UPLOP3"}
)

#: ``Pd, Rd, ...``: a predicate destination followed by a register destination
PRED_THEN_REG_OPS = frozenset({"LOP3", "ULOP3", "SHFL", "ATOM", "ATOMG", "ELECT", "UELECT"})

#: ``Rd, [Pcarry[, Pcarry2]], ...``: predicates right after the destination are carry-outs
CARRY_OUT_OPS = frozenset(
    {"IADD3", "UIADD3", "IADD", "IADD32I", "LEA", "ULEA", "IMAD", "UIMAD", "ISCADD", "VIADD", "UVIADD"}
)

#: every register operand (GPR or UR) names a 64-bit pair
FP64_OPS = frozenset({"DADD", "DMUL", "DFMA", "DMNMX", "DSETP", "DSET"})

#: loads and value-returning atomics: the width modifiers widen the destination
LOAD_DATA_OPS = frozenset(
    {"LDG", "LD", "LDS", "LDL", "LDC", "ULDC", "LDSM", "ATOM", "ATOMG", "ATOMS", "SULD", "SUATOM", "LDGMC"}
)

#: stores, reductions and atomics: the width modifiers widen the data sources
STORE_DATA_OPS = frozenset(
    {"STG", "ST", "STS", "STL", "RED", "REDG", "STSM", "ATOM", "ATOMG", "ATOMS", "SUST", "SURED", "SUATOM"}
)

#: ops addressing the 64-bit global/generic space (a UR base is a pair; on sm_75 a bare
#: ``[Rn]`` under ``.E`` is the pair Rn:Rn+1; sm_80-89 read a hidden memory descriptor)
GLOBAL_ADDRESS_OPS = frozenset({"LDG", "STG", "LD", "ST", "ATOM", "ATOMG", "RED", "REDG", "LDGSTS", "CCTL"})


def classed_by_name(kernel) -> list[list]:
    """The instructions of ``kernel`` whose opcode the table does not know, each ``[instruction index,
    opcode, the class its name gave]`` (``Kernel.attrs["unknown_opcodes"]``, :func:`classify`'s fallback
    rules); empty for a kernel without any, or for no kernel (a synthetic or Accel-Sim workload)."""
    if kernel is None:
        return []
    return [[int(i), str(op), str(c)] for i, op, c in kernel.attrs.get("unknown_opcodes") or []]
