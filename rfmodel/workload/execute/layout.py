"""Integer codes shared by the decoder (Python) and the interpreter (numba).

One static instruction is one row of an ``int64`` array with the fields ``F_*``;
every operand is five integers (kind, value, modifiers, aux, aux2) at
``F_SRC + 5 * j``.  Module-level ints are compile-time constants in numba.
"""

# ---- row fields
F_OP = 0  # semantic opcode (OP_*)
F_GP = 1  # guard predicate: 0..6 P0..P6, 7 PT, 8..14 UP0..UP6, 15 UPT
F_GN = 2  # guard negated
F_DK = 3  # destination kind: K_NONE (also RZ/URZ), K_R, K_UR
F_D = 4  # destination register
F_PD0 = 5  # first predicate destination (-1 none)
F_PD1 = 6  # second predicate destination (-1 none)
F_UNI = 7  # 1: a uniform-datapath instruction (computed once per warp)
F_TGT = 8  # branch / call / BSSY target instruction index (-1 none)
F_M = 9  # modifier bits (meaning per opcode, M_*)
F_E0 = 10  # extra integer fields (meaning per opcode)
F_E1 = 11
F_E2 = 12
F_NS = 13  # number of value sources
F_SRC = 14  # sources: 5 fields each, up to 5
NSRC = 5
F_PS = F_SRC + 5 * NSRC  # predicate sources: (index, negated), up to 3
NPSRC = 3
NF = F_PS + 2 * NPSRC

# ---- operand kinds
K_NONE, K_R, K_UR, K_IMM, K_C, K_SR, K_MEM = 0, 1, 2, 3, 4, 5, 6
# operand modifier bits
O_NEG, O_ABS, O_NOT, O_64 = 1, 2, 4, 8
# K_MEM: the base register is scaled by 1 << ((mod >> O_SCALE_SHIFT) & 7) ([R0.X4])
O_SCALE_SHIFT = 4
# K_MEM: the base register is one 32-bit register, zero-extended, even in a global address
# ([R4.U32+UR4]: a 32-bit offset to the 64-bit UR4:UR5)
O_U32 = 128
# for K_C: aux = bank, aux2 = index register (-1 none; 0..254 GPR; 256 + n for URn)
# for K_MEM: value = offset, aux = base GPR (-1 none), aux2 = UR (-1 none); O_64 = 64-bit base,
# O_U32 = 32-bit base (zero-extended)

PT = 7
UPT = 15

# ---- special registers (K_SR values)
SR_TID_X, SR_TID_Y, SR_TID_Z, SR_CTAID_X, SR_CTAID_Y, SR_CTAID_Z, SR_LANEID, SR_ZERO = range(8)
SR_LEMASK, SR_LTMASK, SR_GEMASK, SR_GTMASK, SR_EQMASK = range(8, 13)
N_SR = 13

# ---- semantic opcodes
(
    OP_NOP,
    OP_MOV,
    OP_IMAD,
    OP_IADD3,
    OP_LOP3,
    OP_SHF,
    OP_LEA,
    OP_ISETP,
    OP_FSETP,
    OP_PLOP3,
    OP_SEL,
    OP_IMNMX,
    OP_FFMA,
    OP_FADD,
    OP_FMUL,
    OP_FMNMX,
    OP_HMOV2,
    OP_I2F,
    OP_F2I,
    OP_MUFU,
    OP_S2R,
    OP_CS2R,
    OP_LD,
    OP_ST,
    OP_ATOM,
    OP_SHFL,
    OP_VOTE,
    OP_BAR,
    OP_BRA,
    OP_EXIT,
    OP_BSSY,
    OP_BSYNC,
    OP_BMOV_CLR,
    OP_POPC,
    OP_FLO,
    OP_BREV,
    OP_PRMT,
    OP_IABS,
    OP_P2R,
    OP_R2P,
    OP_CALL,
    OP_RET,
    OP_LDC,
    OP_IADD,
    OP_WARPSYNC,
    OP_FCHK,
    OP_FRND,
    OP_REDUX,
    OP_BRX,
    OP_DFMA,
    OP_DADD,
    OP_DMUL,
    OP_DSETP,
    OP_F2F,
    OP_BREAK,
) = range(55)

# ---- modifier bits
M_X = 1  # extended (carry-in) form: IADD3.X, LEA.HI.X, ISETP.EX
M_U32 = 2  # unsigned
M_HI = 4  # IMAD.HI, LEA.HI, SHF .HI
M_WIDE = 8  # IMAD.WIDE
M_LEFT = 16  # SHF.L
M_S64 = 32  # SHF 64-bit types (U64/S64): shift amount up to 63
M_SIGNED = 64  # SHF.R.S32 / S64: arithmetic
M_FTZ = 128
M_WRAP = 256  # SHF.W: the shift amount wraps instead of clamping
M_SAT = 512  # FFMA/FADD/FMUL.SAT: the result clamped to [0, 1]
# E0 of OP_FMUL: the result scale, a power of two -3..3 (.D8 .. .M8; 0 none), applied before rounding
M_RELU = 1024  # VIMNMX/VIMNMX3/VIADDMNMX.RELU: a negative (signed) result becomes 0

# integer min/max forms (E0 of IMNMX): two sources; VIADDMNMX (the sum of the first two against
# the third); VIMNMX3 (three sources).  E2 of IMNMX: 1 = two 16-bit halves (.S16x2 / .U16x2)
MN_TWO, MN_ADD, MN_THREE = 0, 1, 2

# compare codes (E0 of ISETP/FSETP)
C_F, C_LT, C_EQ, C_LE, C_GT, C_NE, C_GE, C_NUM, C_NAN, C_LTU, C_EQU, C_LEU, C_GTU, C_NEU, C_GEU, C_T = range(
    16
)
# boolean combine codes (E1 of ISETP/FSETP)
B_AND, B_OR, B_XOR = 0, 1, 2

# memory spaces (E0 of LD/ST/ATOM)
SP_GLOBAL, SP_SHARED, SP_LOCAL = 0, 1, 2
# memory widths (E1 of LD/ST): bytes 1, 2, 4, 8, 16; E2: 1 = sign-extend sub-word loads

# atomic operations (F_M of OP_ATOM); E2 = 1 if the old value is returned
A_ADD, A_MIN, A_MAX, A_INC, A_DEC, A_AND, A_OR, A_XOR, A_EXCH, A_CAS, A_POPC_INC = range(11)
# atomic value types (E1)
AT_U32, AT_S32, AT_F32 = 0, 1, 2

# shuffle modes (E0 of SHFL)
SH_IDX, SH_UP, SH_DOWN, SH_BFLY = range(4)
# vote modes (E0 of VOTE)
V_ALL, V_ANY, V_EQ = range(3)

# MUFU functions (E0)
MU_RCP, MU_RSQ, MU_SQRT, MU_EX2, MU_LG2, MU_SIN, MU_COS, MU_RCP64H, MU_RSQ64H, MU_TANH = range(10)

# DSETP modes (E2): a comparison, or the select-and-NaN predicates of fmax / fmin
DS_CMP, DS_MAX, DS_MIN = 0, 1, 2

# F2F directions (E0 of F2F)
F2F_F64_F32, F2F_F32_F64 = 0, 1

# rounding (E1 of I2F / F2I / DADD / DMUL / DFMA / F2F)
R_RN, R_RZ, R_RM, R_RP = range(4)

# ---- run status codes (machine -> Python)
ST_OK = 0
ST_FAULT_GLOBAL = 1
ST_FAULT_SHARED = 2
ST_FAULT_LOCAL = 3
ST_MISALIGNED = 4
ST_DEADLOCK = 5
ST_SHFL_DIVERGED = 6
ST_STEP_LIMIT = 7
ST_BAD_TARGET = 8
ST_CONST_RANGE = 9
ST_RET_EMPTY = 10
ST_NOT_CONVERGED = 11
ST_CONST_MISSING = 12
ST_REC_FULL = 13  # the trace recorder's buffers are full: the launch grows them and resumes
# trace recording (run_cta's ``rec`` rows): warp of the CTA, instruction, executing-lane mask,
# end of the row's memory lines in ``lines``
REC_W, REC_I, REC_E, REC_L = 0, 1, 2, 3
#: most distinct lines one warp-instruction can touch (32 lanes x up to 4 words)
REC_MAX_LINES = 128
#: where executed traces place local memory: words interleaved over a warp's lanes, warps in
#: launch order (an address region no global array reaches)
LOCAL_TRACE_BASE = 1 << 40
#: local memory per thread, in 32-bit words (1 KiB)
LOCAL_WORDS = 256
# the status array: [code, instruction, lane, address/offset, then one flag per constant bank:
# 1 when the bank holds data (bank 0 always; others only when the launch provides them)]
ST_BANK_FLAGS = 4
