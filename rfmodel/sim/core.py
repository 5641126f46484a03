"""The compiled cycle loop of the reference simulator, and the array layout it works on.

Everything here is plain arrays and module constants (numba folds the
constants into the compiled code).  The loop (:func:`compiled_loop`) advances
one SM cycle by cycle; the Python driver (:mod:`rfmodel.sim.engine`) builds
the arrays, runs the loop in chunks of cycles and reads the statistics back.
``docs/simulator.md`` describes the pipeline; the names below follow it.

State kept between two calls of the loop lives in a tuple of int64 arrays
(``STATE_FIELDS``), one uint64 array (uniform-register scoreboard) and the
statistics vector ``state[S_K]`` (``K_FIELDS``).  Static inputs are the trace
columns, an int64 configuration vector (``CONFIG_FIELDS``), one float64
configuration vector and a tuple of int64 tables (``TABLE_FIELDS``).

Design hooks are first-class function values with the single signature
:data:`HOOK_SIG`; the loop is compiled once with that signature (so numba's
cache holds it across processes) and calls whichever hook functions a design
passes in.

Per cycle: CTA launch, events, write-back, execute (dispatch buffers into
units), then ``steps + 1`` phases: in each of the first ``steps`` (one in
rfmodel's pipeline, ``bank_rw_ports`` in GPGPU-Sim mode) ready collectors
dispatch and the banks arbitrate; the last phase issues.  Collector
allocation runs in one place: after each arbitration step in GPGPU-Sim
mode, after the issue phase otherwise.  Then fetch (GPGPU-Sim mode), the
design's upkeep, statistics and the idle-cycle skip.

Each stage of a cycle is a function of its own (``_launch_ctas`` ... ``_idle_skip``, in the order
:func:`_run` calls them), inlined into the one compiled loop (``inline="always"``), which runs without
reference counting (``_nrt=False``; nothing in it allocates): a stage unpacks the arrays it needs from
``state`` and ``tables`` at no cost.  A stage that fails sets ``stats[K_ERR]`` and returns.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from rfmodel.cache import compile_lock, note_first_compile
from rfmodel.designs.base import (  # noqa: F401
    CLAIM_MUL,
    CLAIM_RING,
    L1_ABSORB,
    L1_FILL,
    L1_LOAD,
    L1_STORE,
    MQ_LOAD,
    MQ_STORE,
    NEVER,
    OPERAND_BANK_MASK,
    OPERAND_DELAY,
    standard_bank,
)
from rfmodel.setassoc import lru_access_at, lru_access_reserve, lru_probe, set_of, take_mshr
from rfmodel.spec.occupancy import (  # noqa: F401
    COLLECTOR_SETS,
    CS_DP,
    CS_GEN,
    CS_INT,
    CS_MEM,
    CS_SFU,
    CS_SP,
    CS_TENSOR,
    U_BRA,
    U_DP,
    U_INT,
    U_MEM,
    U_SFU,
    U_SP,
    U_TENSOR,
    UNIT_NAMES,
)

# --------------------------------------------------------------------------- op classes
# values of rfmodel.ir.OpClass (checked by the driver at import)
OP_INT, OP_FP32, OP_FP64, OP_SFU, OP_TENSOR = 0, 1, 2, 3, 4
OP_LDG, OP_STG, OP_LDS, OP_STS, OP_LDL, OP_STL, OP_LDC, OP_ATOM = 5, 6, 7, 8, 9, 10, 11, 12
OP_BRA, OP_BAR, OP_EXIT, OP_MISC = 13, 14, 15, 16
N_OP = 17

# memory behaviour of an op class
MK_NONE, MK_LOAD, MK_STORE, MK_SLOAD, MK_SSTORE, MK_CONST, MK_ATOM = 0, 1, 2, 3, 4, 5, 6
# the ``atom`` table: a row that is an atomic with active lanes, in shared memory (no cache line) or global
ATOM_SHARED, ATOM_GLOBAL = 1, 2
# ``w_bar`` bits: the warp waits at a barrier; (GPGPU-Sim mode) the warp waits for its atomic to complete
WAIT_BARRIER, WAIT_ATOMIC = 1, 2

# execution-unit types (one pipeline of each per scheduler, MEM one per SM)
N_UNIT = 7

# collector sets, in CollectorSpec field order (rfmodel.spec.occupancy, which both engines read)
N_CSET = len(COLLECTOR_SETS)
CSET_NAMES = COLLECTOR_SETS

# scheduler policies
POL_LRR, POL_GTO, POL_TWO_LEVEL, POL_OLDEST = 0, 1, 2, 3
POLICIES = {"lrr": POL_LRR, "gto": POL_GTO, "two-level": POL_TWO_LEVEL, "oldest": POL_OLDEST}

# stall reasons of the core (a design appends its own after these)
SR_NO_READY, SR_RAW, SR_MEMORY, SR_NO_COLLECTOR, SR_BANK, SR_EXEC = 0, 1, 2, 3, 4, 5
STALL_REASONS = (
    "no_ready_warp",
    "raw_dependency",
    "memory",
    "no_free_collector",
    "bank_conflict",
    "exec_unit_busy",
)
N_CORE_REASONS = len(STALL_REASONS)
MAX_REASONS = 32

# event kinds (heap values are kind * EV_MUL + id)
EV_COMPLETE, EV_OPERAND, EV_LSU_WB = 0, 1, 2
EV_SHIFT = 40
EV_MUL = 1 << EV_SHIFT

NONE_REG = 255

# --------------------------------------------------------------------------- integer config
CONFIG_FIELDS = (
    "warps",  # warp slots W
    "scheds",  # schedulers S
    "subcore",  # 1: collectors/units partitioned per scheduler
    "issue_width",
    "diff_units",  # dual issue must use different unit types
    "policy",
    "pool",  # two-level active warps per scheduler
    "collectors",  # collector units in total
    "coll_ports",  # operands one collector may receive per cycle (0: no limit)
    "banks",  # banks the hooks may name (bank ids 0..banks-1)
    "rports",
    "wports",
    "rwports",
    "rows",  # bank accesses per warp register (bank narrower than a warp register)
    "compat",  # 1: GPGPU-Sim-compatible pipeline
    "steps",  # arbitration steps per cycle (compat: reg_file_port_throughput)
    "wb_width",  # compat: result buses
    "fetch",  # compat: warps fetched per cycle
    "ibuf",  # compat: instruction-buffer entries per warp
    "cta_per_cycle",  # CTAs launched per cycle (0: no limit)
    "max_ctas",  # resident CTAs (occupancy)
    "wpc",  # warps per CTA
    "n_cta",  # CTAs to run
    "max_rec",  # in-flight instruction records
    "bq_cap",  # entries per bank queue
    "heap_cap",
    "l1_sets",
    "l1_assoc",
    "l1_on",
    "l1_bypass",
    "l1_hit",
    "mshr",
    "line_shift",
    "l2_sets",
    "l2_assoc",
    "l2_lat",
    "dram_lat",
    "smem_lat",
    "n_reasons",
    "rb_size",  # compat result-bus ring
    "check",  # 1: stop with an error when a bank exceeds its ports
    "skip",  # 1: jump over idle cycles (the results are the same; only faster)
    "prefer",  # 1: schedulers consider warps the design's ``prefer`` hook marks first
    "bank_rcyc",  # cycles one read access holds its bank and takes to deliver (1: the one-cycle banks)
    "bank_wcyc",  # cycles one write access holds its bank
    "memq",  # offset of the design's memory-request queue in its ints (-1: none)
    "wbuf",  # write buffer in front of slow banks: entries (per bank, or shared; 0: none)
    "wbuf_shared",  # 1: one pool of ``wbuf`` entries for all banks; 0: ``wbuf`` entries per bank
    "claims",  # offset of the design's bank claims in its ints (-1: none)
    "il1_sets",  # compat: instruction-cache sets (0: every fetch hits)
    "il1_assoc",  # compat: instruction-cache ways
    "il1_mshr",  # compat: instruction-cache lines missing at once
    "line_flits",  # flits of a packet carrying a whole line (a reply of an instruction or design line, a
    # design's line written back)
    "l1_reserve",  # 1: an L1D miss reserves its line until the fill (allocation on miss)
    "l1_index",  # the L1D's set index function (rfmodel.setassoc.SET_INDEX)
    "l1_walloc",  # 1: a store that misses the L1D allocates its line (0: GPGPU-Sim's no-write-allocate)
    "il1_onmiss",  # compat: 1: an instruction-cache miss takes its way at once (0: when its line arrives)
    "l1_sect",  # compat: 1: the L1D's lines fill by 32-byte sectors (the ``sec_need`` table says which)
    "sector_flits",  # flits of the reply carrying one sector (interconnect ports modelled; else 0)
    "l1_queue",  # compat: depth of the L1D's latency queues (GPGPU-Sim's -gpgpu_l1_latency; 0: none)
    "l1_banks",  # compat: L1D banks, each with its own latency queue
    "line_ack_flits",  # flits of the acknowledgements a design's line written back gets (ports modelled)
    "l1_merge",  # accesses one outstanding L1D line miss holds, itself included (0: no limit)
    "l1_missq",  # entries of the L1D's miss queue (0: no limit)
    "l1_wevict",  # 1: a global store that hits a filled L1D line invalidates it (GPGPU-Sim's write-evict)
    "l2_banks",  # the L2's banks (rfmodel.spec.sm.L2Spec; 0: one cache of l2_sets sets, set = line mod sets)
    "l2_bsets",  # sets of one L2 bank
    "l2_index",  # the banks' set index: 0 linear, 1 IPOLY (the l2_poly masks), 2 XOR
    "l2_nsub",  # sub-partitions (banks) a DRAM channel
    "l2_submask",  # the address bits of the sub-partition id (GPGPU-Sim's sub_partition_id_mask)
    "l2_poly0",  # the IPOLY set hash: per set-index bit, the bits above the index whose parity flips it
    "l2_poly1",
    "l2_poly2",
    "l2_poly3",
    "l2_poly4",
    "l2_poly5",
    "l2_sect",  # 1: the L2's lines hold their 32-byte sectors apart (SMSpec.l2_sector_bytes; state l2_smask)
    # compat, sectored L1D with latency queues and no design L1D of its own (its hook answers for whole
    # lines): loads and stores go through the queues a 32-byte sector an access, cycle by cycle, the banks'
    # heads looked up in bank order (:func:`_l1_step`)
    "l1_step",
    # which of the design's hooks are the defaults (HOOK_STD_*: operand and write standard_bank_hook,
    # may_issue and issued no_op_hook): the loop does their work itself, without the call
    "hooks_std",
)
N_CONFIG = len(CONFIG_FIELDS)

FLOAT_CONFIG_FIELDS = (
    "line_cycles",  # DRAM bandwidth: cycles per line
    "flit_cycles",  # the SM's interconnect ports: core cycles per flit each way (0: not modelled)
)
F_LINE_CYCLES = 0
F_FLIT_CYCLES = 1
N_FCONFIG = 2

# --------------------------------------------------------------------------- static tables
TABLE_FIELDS = (
    "cls_lat",  # [N_OP] latency
    "cls_ii",  # [N_OP] initiation interval (>= 1)
    "cls_unit",  # [N_OP] unit type
    "cls_mem",  # [N_OP] memory kind
    "unit_set1",  # [N_UNIT] preferred collector set (-1 none)
    "unit_set2",  # [N_UNIT] fallback collector set (-1 none)
    "k_group",  # [NC] collector -> group (scheduler with sub-cores, else 0)
    "k_set",  # [NC] collector -> set
    "gs_start",  # [(groups * N_CSET) + 1] start of each (group, set) run in gs_list
    "gs_list",  # [NC] collector ids ordered by (group, set, id)
    "cta_wstart",  # [n_cta + 1] first trace warp of each CTA
    "tw_ptr",  # [trace warps + 1] first row of each trace warp
    "alloc_order",  # compat: unit types in collector-allocation order
    "exec_order",  # compat: unit types in execute order
    "sectors",  # [rows] compat: sector fetches per missed line of the row
    "pc_line",  # [rows] compat: instruction-cache line of the row's PC (with an instruction cache)
    "u_slot",  # [N_UNIT * S] at u S + s: the dispatch slot (register, unit) scheduler s uses for type u
    "req_flits",  # [rows] flits of the request each line of the row sends (interconnect ports modelled)
    "rep_flits",  # [rows] flits of the reply each missed line of a load (or atomic) gets back
    "atom",  # [rows] an atomic with active lanes: ATOM_SHARED (no cache line) or ATOM_GLOBAL; else 0
    "sec_need",  # [memory lines] compat, sectored L1D: the sectors (bit mask) the row reads of this line
    "ack_flits",  # [rows] flits of the acknowledgements each line of a store gets back (ports modelled)
    "smem_passes",  # [rows] passes of a shared-memory access through the banks (at least 1)
)
N_TABLES = len(TABLE_FIELDS)

# --------------------------------------------------------------------------- state
# global scalars, state[S_G]
G_FIELDS = (
    "cycle",
    "next_cta",
    "dyn",  # next dynamic warp id
    "rtop",  # free-record stack top
    "heap_n",
    "wb_n",  # records waiting in writeback
    "seq",  # allocation sequence (ages)
    "last_fetch",
    "upkeep_next",
    "done",
    "resident_ctas",
    "lsuwb_head",
    "lsuwb_n",
    "rb_cycle",  # compat: result-bus ring aligned to this cycle
    "dram_free",  # DRAM queue free at (x LINE_FIX)
    "lru_clock",
    "wbuf_n",  # values held in the write buffer (all banks)
    "inj_free",  # the SM's interconnect injection port free at (x LINE_FIX)
    "ej_free",  # the SM's interconnect ejection port free at (x LINE_FIX)
    "smem_n",  # compat: shared-memory loads between entering the unit and their write-back
    # C_L1_STEP: the load or store in the LD/ST unit whose sector accesses are entering the L1D's queues
    # (record, -1: none), its memory line and the sectors of that line still to enter, the cycle its
    # initiation interval ends; the accesses in the queues
    "lsu_r",
    "lsu_j",
    "lsu_bits",
    "lsu_ii",
    "l1_n",
)
N_G = len(G_FIELDS)

LINE_FIX = 1024  # fixed-point scale of DRAM-queue times

# state[S_DRAM]'s header (rfmodel.sim.engine._dram_array): D_ON 1 when modelled; the geometry (channels,
# banks a channel, GPGPU-Sim's dramid@ bit, 1 when the channel count is not a power of two, the channel bits,
# sub-partitions a channel (log2), the channel hash (0 none, 1 xor, 2 IPOLY), the bank,
# row and channel bit masks); the timings in core cycles x LINE_FIX (tRCD, tRP, tRAS, tRC, tRRD, tCCD, a
# bank's column-to-column step, tCL, read to precharge); the closed-row access the SM's DRAM latency holds
# (core cycles); 1 when a line's sectors are requests of their own, column reads a sector request, bytes a
# column read; the IPOLY hash's masks (up to 6)
D_ON, D_NCH, D_NBK, D_CHIP_S, D_GAP, D_CHIPBITS, D_NSUB, D_HASH = 0, 1, 2, 3, 4, 5, 6, 7  # 8: unused
D_BK_MASK, D_ROW_MASK, D_CHIP_MASK = 9, 10, 11
D_RCD, D_RP, D_RAS, D_RC, D_RRD, D_CCD, D_STEP, D_CL, D_RTP = 12, 13, 14, 15, 16, 17, 18, 19, 20
D_NOMINAL, D_SECT, D_READS_SEC, D_ATOM, D_IPOLY = 21, 22, 23, 24, 25
D_HDR = 32

STATE_FIELDS = (
    "g",
    # warps [W]
    "w_active",
    "w_pc",
    "w_end",
    "w_cta",  # CTA slot
    "w_sched",
    "w_inflight",
    "w_exited",
    "w_bar",
    "w_sb",  # scoreboard hint: 0 none, 1 register dependency, 2 memory dependency, -1 - row: row found clear
    "w_dyn",
    "w_ibuf",  # compat: instructions decoded
    "w_ibuf_at",  # compat: cycle they become visible
    "w_ppend",  # pending predicate writes (bit mask)
    "w_tw",  # trace warp
    # scoreboard [W * 256]
    "reg_pend",
    "reg_long",
    # schedulers
    "s_last",  # [S] lrr pointer (index into the supervised list) / greedy warp
    "s_age",  # [S * WS] age-ordered warps (gto, oldest)
    "s_age_n",  # [S]
    "s_pool",  # [S * WS] two-level active pool
    "s_pool_n",  # [S]
    "s_pend",  # [S * WS] two-level pending FIFO (ring)
    "s_pend_h",  # [S]
    "s_pend_n",  # [S]
    "s_reason",  # [S] stall reason of the last cycle (-1: issued)
    # CTA slots [max_ctas]
    "c_cta",  # trace CTA index (-1: free)
    "c_live",  # warps not yet finished
    "c_unexited",  # warps that have not executed EXIT
    "c_bar",  # warps waiting at the barrier
    # in-flight instruction records [max_rec]
    "r_warp",
    "r_row",
    "r_coll",
    "r_pending",  # operands still to arrive
    "r_dk",  # next destination to write
    "r_wrem",  # bank accesses left for the current destination
    "r_unit",  # dispatch slot: OC_EX register u S + i, the unit instance (the memory pipeline's is U_MEM S)
    "r_seq",
    "r_extra",  # compat: writebacks still to perform (memory fills)
    "r_free",  # free-record stack
    # collectors [NC]
    "k_rec",
    "k_ready",  # step stamp at which the last operand arrived (-1: pending)
    "k_gstamp",  # step stamp of the current grant count
    "k_gcount",
    "k_conf",  # cycle in which a bank last blocked this collector
    "g_free",  # [groups * N_CSET] free collectors per (group, set)
    # banks [NB]
    "bq_k",  # [NB * cap] collector of the request
    "bq_rem",  # [NB * cap] accesses left
    "bq_wait",  # [NB * cap] 1 once the request has waited
    "b_head",
    "b_n",
    "b_stamp",  # cycle of the per-cycle counters below
    "b_w",  # writes this cycle
    "b_rwused",  # read/write ports taken by writes this cycle
    "b_r",  # reads this cycle
    "b_nonempty",  # list of banks with queued requests
    "b_in_list",
    # units [N_UNIT * S]
    "u_free",  # cycle from which the unit accepts
    "u_occ",  # compat: completion-slot bit mask
    "u_occ_base",  # compat: cycle the mask is aligned to
    "ocex",  # compat: OC_EX register per (unit type, scheduler), record or -1
    "idoc",  # compat: ID_OC register per (unit type, scheduler), record or -1
    "rb",  # compat: result-bus reservations per cycle (ring)
    # event heap
    "h_t",
    "h_v",
    # writeback list
    "wb",
    # compat LSU writeback FIFO (records)
    "lsuwb",
    # memory
    "l1_tag",
    "l1_lru",
    "l1_ready",
    "l2_tag",
    "l2_lru",
    "mshr_fill",
    # statistics (see K_FIELDS)
    "k",
    # per-bank maximum accesses in one cycle (debug)
    "b_max",
    # [NB] slow banks: cycle from which the bank accepts its next access
    "b_busy",
    # [NB] slow banks: cycle until which the bank is busy with a write
    "b_wbusy",
    # write buffer (``wbuf`` > 0): per bank a FIFO of (warp slot x 256 + register) keys, its head and length,
    # values buffered per (warp slot, register), occupancy histogram (cycles at each total occupancy)
    "wq",  # [NB * wbuf]
    "wq_head",  # [NB]
    "wq_n",  # [NB]
    "wq_cnt",  # [W * 256]
    "wq_hist",  # [capacity + 1]
    # [NB * cap] first cycle a request may be granted (0: at once); an operand hook's delay (OPERAND_DELAY)
    "bq_ready",
    # compat instruction cache: per way its line, LRU stamp and the cycle its fill arrives (a line still
    # waiting for it is reserved); per MSHR the cycle it frees; per warp the cycle its missed fetch is
    # answered (0: none pending)
    "il1_tag",
    "il1_lru",
    "il1_fill",
    "il1_mshr",
    "w_imiss",
    "l1_smask",  # [L1D ways] compat, sectored L1D: the sectors a way holds or has asked for (bit mask)
    # [banks x (depth + 3)] compat: per L1D bank its latency queue: the accesses it took, the cycle its last
    # one left the head, the cycle its last one entered, and (a ring of depth) the cycles the last ``depth``
    # left it; then [2 + miss-queue entries] the L1D's miss queue: the requests it took, the cycle its last
    # one left, and (a ring of its entries) the cycles the last ones leave
    "l1q",
    # DRAM banks and rows (SMSpec.dram): the D_* header (geometry, timings), then per bank its open row (-1:
    # closed), last activation and last column read, per channel its last activation and last column read
    # (times x LINE_FIX); [1] (D_ON = 0) without
    "dram",
    # [L1D ways x 32-byte sectors of a line] the accesses an outstanding miss of the way's line (of each of
    # its sectors, where sectored) holds (l1d.mshr_merge)
    "l1_merge",
    # [NC] scratch of the dispatch stage: the collectors ready to dispatch this step (-1: taken)
    "k_cand",
    # [L2 ways] sectored L2 (C_L2_SECT): the 32-byte sectors a way holds (bit mask)
    "l2_smask",
    # C_L1_STEP: [L1D banks x latency-queue stages] the sector access at each stage (stage 0 the head): its
    # record (-1: empty), memory line index and sector bit
    "l1_st_r",
    "l1_st_j",
    "l1_st_b",
    # C_L1_STEP: [L1D ways x sectors of a line] the cycle each sector's data is there
    "l1_sready",
    # C_L1_STEP: [records] a load's or store's sector accesses not looked up yet, and the latest cycle its
    # data is there (a store: its latest acknowledgement less the class latency)
    "r_macc",
    "r_mdone",
)
N_STATE = len(STATE_FIELDS)

# statistics, state[S_K]
K_FIELDS = (
    "issued",
    "retired",
    "reads",  # source operands read (warp registers)
    "reads_bank",
    "reads_ext",  # served by the design outside the banks
    "bank_read_acc",  # bank accesses for reads (rows per warp register)
    "writes",  # register writes performed (warp registers)
    "writes_bank",
    "writes_ext",
    "bank_write_acc",
    "writes_dropped",  # compat: a second write to a bank in one cycle (GPGPU-Sim drops it)
    "bank_conflicts",  # requests that waited at least one cycle for their bank
    "bank_stall_cycles",  # collector-cycles blocked by a bank
    "write_wait_cycles",  # record-cycles a result waited for a write port
    "coll_busy",  # sum over cycles of busy collectors
    "l1_acc",
    "l1_hit",
    "l2_acc",
    "l2_hit",
    "dram_lines",
    "mshr_wait",
    "port_violations",
    "last_retire",
    "stepped",  # cycles simulated one by one
    "skipped",  # idle cycles jumped over
    "err",  # 0 ok; see ERR_*
    "err_info",
    "max_warps",  # most warps resident at once
    "ctas_done",
    "issue_slots",  # scheduler-cycles
    "hook_calls",  # the hooks asked (a default hook whose work the loop does itself, C_HOOKS_STD, counts)
    "srcs",  # source operand slots of issued instructions (+ compat RZ)
    "dsts",  # destination registers of issued instructions (+ compat RZ)
    "issue_cycles",  # scheduler-cycles with at least one issue
    "l1_hook_hits",  # L1D accesses the design's ``l1`` hook served
    "l1_hook_misses",  # L1D accesses the design's ``l1`` hook sent to L2 as misses
    "mem_requests",  # loads and stores of the design's memory-request queue
    "reads_behind_write",  # read requests that began waiting while their (slow) bank was busy with a write
    "wbuf_writes",  # results the write buffer absorbed (their bank was busy)
    "wbuf_drains",  # buffered values written to their bank
    "wbuf_hits",  # source operands served from the write buffer (its newest value was there)
    "wbuf_full_waits",  # record-cycles a result waited because the write buffer was full
    "wbuf_max",  # most values the write buffer held at once
    "claim_waits",  # read requests held back one cycle because the design's bank claims took their port
    "il1_acc",  # compat: instruction-cache accesses (fetches that looked up a line)
    "il1_miss",  # compat: of them, misses (a new line, or one already on its way)
    "il1_fail",  # compat: fetches that found every MSHR, or every way of their set, waiting for a fill
    "noc_wait",  # cycles requests waited for the SM's interconnect injection port
    "noc_flits_out",  # flits the SM sent (requests, store data)
    "noc_flits_in",  # flits the SM received (replies, write acknowledgements)
    "l1_set_wait",  # cycles loads waited because every way of their L1D set waited for a fill
    "l1_missq_wait",  # cycles L1D lookups waited for room in the miss queue (l1d.miss_queue_entries)
    "l1_merge_wait",  # cycles loads waited for a miss they could not merge into (l1d.mshr_merge)
    "smem_full",  # compat: cycles a shared-memory load held the LD/ST unit, its pipeline full
    "coll_wait",  # sum over cycles of collectors whose operands are all read, their instruction waiting for
    # its unit's dispatch register (the part of ``coll_busy`` that is not collection)
    "coll_wait_mem",  # the same, of memory instructions (waiting for the load/store unit)
)
K_STALL0 = len(K_FIELDS)
N_K = K_STALL0 + MAX_REASONS

ERR_DEADLOCK, ERR_QUEUE, ERR_HEAP = 1, 3, 4
ERR_PORTS, ERR_CYCLES, ERR_HOOK = 5, 6, 7
ERR_TEXT = {
    ERR_DEADLOCK: "no instruction can make progress (deadlock) at cycle {info}",
    ERR_QUEUE: "a bank request queue overflowed ({info} entries)",
    ERR_HEAP: "the event queue overflowed ({info} entries)",
    ERR_PORTS: "bank {info} granted more accesses in one cycle than it has ports",
    ERR_HOOK: "a design hook named bank {info}, which the SM does not have",
    ERR_CYCLES: "the run exceeded max_cycles ({info})",
}


# --------------------------------------------------------------------------- generated indices
# CONFIG_FIELDS
C_WARPS = 0
C_SCHEDS = 1
C_SUBCORE = 2
C_ISSUE_WIDTH = 3
C_DIFF_UNITS = 4
C_POLICY = 5
C_POOL = 6
C_COLLECTORS = 7
C_COLL_PORTS = 8
C_BANKS = 9
C_RPORTS = 10
C_WPORTS = 11
C_RWPORTS = 12
C_ROWS = 13
C_COMPAT = 14
C_STEPS = 15
C_WB_WIDTH = 16
C_FETCH = 17
C_IBUF = 18
C_CTA_PER_CYCLE = 19
C_MAX_CTAS = 20
C_WPC = 21
C_N_CTA = 22
C_MAX_REC = 23
C_BQ_CAP = 24
C_HEAP_CAP = 25
C_L1_SETS = 26
C_L1_ASSOC = 27
C_L1_ON = 28
C_L1_BYPASS = 29
C_L1_HIT = 30
C_MSHR = 31
C_LINE_SHIFT = 32
C_L2_SETS = 33
C_L2_ASSOC = 34
C_L2_LAT = 35
C_DRAM_LAT = 36
C_SMEM_LAT = 37
C_N_REASONS = 38
C_RB_SIZE = 39
C_CHECK = 40
C_SKIP = 41
C_PREFER = 42
C_BANK_RCYC = 43
C_BANK_WCYC = 44
C_MEMQ = 45
C_WBUF = 46
C_WBUF_SHARED = 47
C_CLAIMS = 48
C_IL1_SETS = 49
C_IL1_ASSOC = 50
C_IL1_MSHR = 51
C_LINE_FLITS = 52
C_L1_RESERVE = 53
C_L1_INDEX = 54
C_L1_WALLOC = 55
C_IL1_ONMISS = 56
C_L1_SECT = 57
C_SECTOR_FLITS = 58
C_L1_QUEUE = 59
C_L1_BANKS = 60
C_LINE_ACK_FLITS = 61
C_L1_MERGE = 62
C_L1_MISSQ = 63
C_L1_WEVICT = 64
C_L2_BANKS = 65
C_L2_BSETS = 66
C_L2_INDEX = 67
C_L2_NSUB = 68
C_L2_SUBMASK = 69
C_L2_POLY0 = 70
C_L2_POLY1 = 71
C_L2_POLY2 = 72
C_L2_POLY3 = 73
C_L2_POLY4 = 74
C_L2_POLY5 = 75
C_L2_SECT = 76
C_L1_STEP = 77
C_HOOKS_STD = 78
#: bits of ``C_HOOKS_STD``
HOOK_STD_OPERAND, HOOK_STD_WRITE, HOOK_STD_MAY_ISSUE, HOOK_STD_ISSUED = 1, 2, 4, 8

# TABLE_FIELDS
T_CLS_LAT = 0
T_CLS_II = 1
T_CLS_UNIT = 2
T_CLS_MEM = 3
T_UNIT_SET1 = 4
T_UNIT_SET2 = 5
T_K_GROUP = 6
T_K_SET = 7
T_GS_START = 8
T_GS_LIST = 9
T_CTA_WSTART = 10
T_TW_PTR = 11
T_ALLOC_ORDER = 12
T_EXEC_ORDER = 13
T_SECTORS = 14
T_PC_LINE = 15
T_U_SLOT = 16
T_REQ_FLITS = 17
T_REP_FLITS = 18
T_ATOM = 19
T_SEC_NEED = 20
T_ACK_FLITS = 21
T_SMEM_PASSES = 22

# G_FIELDS
G_CYCLE = 0
G_NEXT_CTA = 1
G_DYN = 2
G_RTOP = 3
G_HEAP_N = 4
G_WB_N = 5
G_SEQ = 6
G_LAST_FETCH = 7
G_UPKEEP_NEXT = 8
G_DONE = 9
G_RESIDENT_CTAS = 10
G_LSUWB_HEAD = 11
G_LSUWB_N = 12
G_RB_CYCLE = 13
G_DRAM_FREE = 14
G_LRU_CLOCK = 15
G_WBUF_N = 16
G_INJ_FREE = 17
G_EJ_FREE = 18
G_SMEM_N = 19
G_LSU_R = 20
G_LSU_J = 21
G_LSU_BITS = 22
G_LSU_II = 23
G_L1_N = 24

# STATE_FIELDS
S_G = 0
S_W_ACTIVE = 1
S_W_PC = 2
S_W_END = 3
S_W_CTA = 4
S_W_SCHED = 5
S_W_INFLIGHT = 6
S_W_EXITED = 7
S_W_BAR = 8
S_W_SB = 9
S_W_DYN = 10
S_W_IBUF = 11
S_W_IBUF_AT = 12
S_W_PPEND = 13
S_W_TW = 14
S_REG_PEND = 15
S_REG_LONG = 16
S_S_LAST = 17
S_S_AGE = 18
S_S_AGE_N = 19
S_S_POOL = 20
S_S_POOL_N = 21
S_S_PEND = 22
S_S_PEND_H = 23
S_S_PEND_N = 24
S_S_REASON = 25
S_C_CTA = 26
S_C_LIVE = 27
S_C_UNEXITED = 28
S_C_BAR = 29
S_R_WARP = 30
S_R_ROW = 31
S_R_COLL = 32
S_R_PENDING = 33
S_R_DK = 34
S_R_WREM = 35
S_R_UNIT = 36
S_R_SEQ = 37
S_R_EXTRA = 38
S_R_FREE = 39
S_K_REC = 40
S_K_READY = 41
S_K_GSTAMP = 42
S_K_GCOUNT = 43
S_K_CONF = 44
S_G_FREE = 45
S_BQ_K = 46
S_BQ_REM = 47
S_BQ_WAIT = 48
S_B_HEAD = 49
S_B_N = 50
S_B_STAMP = 51
S_B_W = 52
S_B_RWUSED = 53
S_B_R = 54
S_B_NONEMPTY = 55
S_B_IN_LIST = 56
S_U_FREE = 57
S_U_OCC = 58
S_U_OCC_BASE = 59
S_OCEX = 60
S_IDOC = 61
S_RB = 62
S_H_T = 63
S_H_V = 64
S_WB = 65
S_LSUWB = 66
S_L1_TAG = 67
S_L1_LRU = 68
S_L1_READY = 69
S_L2_TAG = 70
S_L2_LRU = 71
S_MSHR_FILL = 72
S_K = 73
S_B_MAX = 74
S_B_BUSY = 75
S_B_WBUSY = 76
S_WQ = 77
S_WQ_HEAD = 78
S_WQ_N = 79
S_WQ_CNT = 80
S_WQ_HIST = 81
S_BQ_READY = 82
S_IL1_TAG = 83
S_IL1_LRU = 84
S_IL1_FILL = 85
S_IL1_MSHR = 86
S_W_IMISS = 87
S_L1_SMASK = 88
S_L1Q = 89
S_DRAM = 90
S_L1_MERGE = 91
S_K_CAND = 92
S_L2_SMASK = 93
S_L1_ST_R = 94
S_L1_ST_J = 95
S_L1_ST_B = 96
S_L1_SREADY = 97
S_R_MACC = 98
S_R_MDONE = 99

# K_FIELDS
K_ISSUED = 0
K_RETIRED = 1
K_READS = 2
K_READS_BANK = 3
K_READS_EXT = 4
K_BANK_READ_ACC = 5
K_WRITES = 6
K_WRITES_BANK = 7
K_WRITES_EXT = 8
K_BANK_WRITE_ACC = 9
K_WRITES_DROPPED = 10
K_BANK_CONFLICTS = 11
K_BANK_STALL_CYCLES = 12
K_WRITE_WAIT_CYCLES = 13
K_COLL_BUSY = 14
K_L1_ACC = 15
K_L1_HIT = 16
K_L2_ACC = 17
K_L2_HIT = 18
K_DRAM_LINES = 19
K_MSHR_WAIT = 20
K_PORT_VIOLATIONS = 21
K_LAST_RETIRE = 22
K_STEPPED = 23
K_SKIPPED = 24
K_ERR = 25
K_ERR_INFO = 26
K_MAX_WARPS = 27
K_CTAS_DONE = 28
K_ISSUE_SLOTS = 29
K_HOOK_CALLS = 30
K_SRCS = 31
K_DSTS = 32
K_ISSUE_CYCLES = 33
K_L1_HOOK_HITS = 34
K_L1_HOOK_MISSES = 35
K_MEM_REQUESTS = 36
K_READS_BEHIND_WRITE = 37
K_WBUF_WRITES = 38
K_WBUF_DRAINS = 39
K_WBUF_HITS = 40
K_WBUF_FULL_WAITS = 41
K_WBUF_MAX = 42
K_CLAIM_WAITS = 43
K_IL1_ACC = 44
K_IL1_MISS = 45
K_IL1_FAIL = 46
K_NOC_WAIT = 47
K_NOC_FLITS_OUT = 48
K_NOC_FLITS_IN = 49
K_L1_SET_WAIT = 50
K_L1_MISSQ_WAIT = 51
K_L1_MERGE_WAIT = 52
K_SMEM_FULL = 53
K_COLL_WAIT = 54
K_COLL_WAIT_MEM = 55

# =========================================================================== compiled helpers
#: the one signature every design hook has: (ints, floats, a, b, c, d, cycle) -> int64
HOOK_SIG = types.int64(
    types.int64[::1], types.float64[::1], types.int64, types.int64, types.int64, types.int64, types.int64
)
HOOK_TYPE = types.FunctionType(HOOK_SIG)


@njit(cache=True, inline="always")
def heap_push(ht, hv, n, t, v):
    """Push (t, v) on the binary min-heap held in ``ht``/``hv`` (ties broken by ``v``)."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if ht[p] < t or (ht[p] == t and hv[p] <= v):
            break
        ht[i] = ht[p]
        hv[i] = hv[p]
        i = p
    ht[i] = t
    hv[i] = v
    return n + 1


@njit(cache=True, inline="always")
def heap_pop(ht, hv, n):
    """Remove the top of the heap (read ``ht[0]``/``hv[0]`` first); returns the new size."""
    n -= 1
    if n <= 0:
        return 0
    t = ht[n]
    v = hv[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        r = c + 1
        if r < n and (ht[r] < ht[c] or (ht[r] == ht[c] and hv[r] < hv[c])):
            c = r
        if ht[c] < t or (ht[c] == t and hv[c] < v):
            ht[i] = ht[c]
            hv[i] = hv[c]
            i = c
        else:
            break
    ht[i] = t
    hv[i] = v
    return n


@njit(cache=True, inline="always")
def sb_check(w, row, src, dst, psrc, pdst, usrc, udst, reg_pend, reg_long, w_ppend, ust):
    """Scoreboard: 0 free, 1 blocked by a pending register write, 2 blocked by a pending memory load."""
    base = w * 256
    blocked = False
    mem = False
    for j in range(src.shape[1]):
        r = src[row, j]
        if r != NONE_REG and reg_pend[base + r] > 0:
            blocked = True
            if reg_long[base + r] > 0:
                mem = True
    for j in range(dst.shape[1]):
        r = dst[row, j]
        if r != NONE_REG and reg_pend[base + r] > 0:
            blocked = True
            if reg_long[base + r] > 0:
                mem = True
    if ((np.int64(psrc[row]) | np.int64(pdst[row])) & w_ppend[w]) != 0:
        blocked = True
    if ((usrc[row] | udst[row]) & ust[w]) != 0:
        blocked = True
    if not blocked:
        return 0
    return 2 if mem else 1


@njit(cache=True)
def reads_long(w, row, src, reg_long):
    """True when an operand of ``row`` waits for a pending memory load (two-level demotion)."""
    base = w * 256
    for j in range(src.shape[1]):
        r = src[row, j]
        if r != NONE_REG and reg_long[base + r] > 0:
            return True
    return False


@njit(cache=True)
def _port(scalars, g, t, flits, fc):
    """``flits`` flits take the port whose free time is ``scalars[g]`` (x LINE_FIX) from cycle ``t`` or when
    it frees, ``fc`` cycles a flit; returns the cycle the last one has passed."""
    start = max(t * LINE_FIX, scalars[g])
    scalars[g] = start + np.int64(flits * fc * LINE_FIX + 0.5)
    return (scalars[g] + LINE_FIX - 1) // LINE_FIX


@njit(cache=True)
def noc_send(fcfg, scalars, stats, t, flits):
    """A request of ``flits`` flits enters the SM's interconnect injection port at ``t`` or when the
    requests before it have left (one flit per interconnect cycle); returns the cycle it has left."""
    fc = fcfg[F_FLIT_CYCLES]
    if fc <= 0.0:
        return t
    stats[K_NOC_FLITS_OUT] += flits
    dep = _port(scalars, G_INJ_FREE, t, flits, fc)
    stats[K_NOC_WAIT] += dep - t - np.int64(flits * fc + 0.999999)
    return dep


@njit(cache=True)
def noc_receive(fcfg, scalars, stats, earliest, ret, flits):
    """A reply of ``flits`` flits ready at ``ret``: it takes the SM's ejection port (one flit per
    interconnect cycle) in the order the requests left, from the earliest it could come (``earliest``: an
    L2 hit's return); returns the cycle it has arrived."""
    fc = fcfg[F_FLIT_CYCLES]
    if fc <= 0.0:
        return ret
    stats[K_NOC_FLITS_IN] += flits
    return max(ret, _port(scalars, G_EJ_FREE, earliest, flits, fc))


@njit(cache=True, inline="always")
def _packbits(mask, v):
    """The bits of ``v`` under ``mask``, packed from bit 0 (GPGPU-Sim's addrdec_packbits)."""
    out = 0
    k = 0
    m = mask
    while m != 0:
        low = m & -m
        if v & low:
            out |= 1 << k
        k += 1
        m ^= low
    return out


@njit(cache=True, inline="always")
def ipoly_hash(masks, base, high, index):
    """GPGPU-Sim's IPOLY hash (its hashing.cc, after "Pseudo-randomly interleaved memory", Rau, ISCA 1991):
    bit ``i`` of ``index`` flipped by the parity of ``high``'s bits under mask ``masks[base + i]`` (up to six
    masks; a 0 ends them)."""
    new = 0
    for i in range(6):
        m = masks[base + i]
        if m == 0:
            break
        par = 0
        v = high & m
        while v != 0:
            par ^= 1
            v &= v - 1
        new |= (par ^ ((index >> i) & 1)) << i
    return new


@njit(cache=True)
def dram_locate(dram, addr):
    """(channel, bank, row, sub-partition or -1) of byte address ``addr`` under ``dram``'s header (GPGPU-Sim's
    addrdec_tlx: a channel count not a power of two takes the address above the dramid bit modulo the
    channels and keeps the quotient; then the channel hash).  The IPOLY hash chooses the sub-partition
    itself (the last value); otherwise it is the channel's and the bank's low bits (:func:`l2_set`)."""
    nch = dram[D_NCH]
    s = dram[D_CHIP_S]
    if dram[D_GAP] != 0:
        hi = addr >> s
        chip = hi % nch
        high = hi // nch
        rest = (high << s) | (addr & ((1 << s) - 1))
    else:
        chip = _packbits(dram[D_CHIP_MASK], addr)
        rest = addr
        high = addr >> (s + dram[D_CHIPBITS] + dram[D_NSUB])
    bk = _packbits(dram[D_BK_MASK], rest)
    row = _packbits(dram[D_ROW_MASK], rest)
    sub = -1
    if dram[D_HASH] == 1:
        chip = chip ^ (high & (nch - 1))
    elif dram[D_HASH] == 2:
        nsub = 1 << dram[D_NSUB]
        new = ipoly_hash(dram, D_IPOLY, high, chip * nsub + (bk & (nsub - 1)))
        if dram[D_GAP] != 0:
            new = new % (nch * nsub)
        chip = new // nsub
        sub = new
    return chip, bk, row, sub


@njit(cache=True, inline="always")
def l2_set(cfg, dram, line):
    """The L2 set of ``line`` (sets numbered bank by bank).  Banked (``l2_banks``, rfmodel.spec.sm.L2Spec, as
    GPGPU-Sim's memory sub-partitions): the bank is the line's sub-partition under the DRAM's address
    decoding (without DRAM decoding, the line number modulo the banks) and the set within it comes from the
    partition address, the address without the channel and sub-partition bits (GPGPU-Sim's
    ``l2_cache_config::set_index``), linear, IPOLY-hashed or XOR-ed with the bits above it.  Else the line
    number modulo the sets."""
    nb = cfg[C_L2_BANKS]
    if nb <= 0:
        return line % cfg[C_L2_SETS]
    shift = cfg[C_LINE_SHIFT]
    bsets = cfg[C_L2_BSETS]
    if dram[D_ON] == 0:
        bank = line % nb
        part = (line // nb) << shift
    else:
        addr = line << shift
        chip, bk, _row, sub = dram_locate(dram, addr)
        nsub = cfg[C_L2_NSUB]
        bank = sub if sub >= 0 else chip * nsub + (bk & (nsub - 1))
        keep = (1 << 62) - 1
        if dram[D_GAP] != 0:
            s = dram[D_CHIP_S]
            part = (((addr >> s) // dram[D_NCH]) << s) | (addr & ((1 << s) - 1))
            part = _packbits(keep & ~cfg[C_L2_SUBMASK], part)
        else:
            part = _packbits(keep & ~(dram[D_CHIP_MASK] | cfg[C_L2_SUBMASK]), addr)
    index = (part >> shift) & (bsets - 1)
    high = part >> shift
    b = bsets
    while b > 1:  # the bits above the index
        high >>= 1
        b >>= 1
    if cfg[C_L2_INDEX] == 2:  # XOR: the index XOR as many bits right above it
        index = index ^ (high & (bsets - 1))
    elif cfg[C_L2_INDEX] == 1:  # IPOLY: each index bit flipped by the parity of its taps above the index
        index = ipoly_hash(cfg, C_L2_POLY0, high, index)
    return bank * bsets + index


@njit(cache=True)
def dram_read(dram, addr, t, nsec):
    """Core cycles a DRAM read of the line at byte address ``addr`` (``nsec`` 32-byte sectors), reaching
    its channel at ``t``, takes beyond the closed-row access the SM's DRAM latency holds (negative for an
    open row's): an open row's reads wait for the bank's last column read plus a step and the channel's
    plus tCCD; another row is precharged (tRAS after its activation, read-to-precharge after its last
    read) and activated (tRP, tRC after the bank's last activation, tRRD after the channel's), then read
    tRCD later; the line's column reads follow a step apart, its data tCL after the last."""
    nch = dram[D_NCH]
    nb = nch * dram[D_NBK]
    ch, bk, row, _sub = dram_locate(dram, addr)
    b = ch * dram[D_NBK] + bk
    o_row = D_HDR
    o_act = D_HDR + nb
    o_col = D_HDR + 2 * nb
    o_cact = D_HDR + 3 * nb
    o_ccol = o_cact + nch
    T = t * LINE_FIX
    cur = dram[o_row + b]
    if cur == row:
        col = max(T, dram[o_col + b] + dram[D_STEP])
    else:
        act = T
        if cur >= 0:
            act = max(T, dram[o_act + b] + dram[D_RAS], dram[o_col + b] + dram[D_RTP]) + dram[D_RP]
        act = max(act, dram[o_act + b] + dram[D_RC], dram[o_cact + ch] + dram[D_RRD])
        dram[o_act + b] = act
        dram[o_cact + ch] = act
        dram[o_row + b] = row
        col = act + dram[D_RCD]
    col = max(col, dram[o_ccol + ch] + dram[D_CCD])
    if dram[D_SECT] != 0:
        reads = nsec * dram[D_READS_SEC]
    else:
        reads = (nsec * 32 + dram[D_ATOM] - 1) // dram[D_ATOM]
    last = col + (max(reads, 1) - 1) * dram[D_STEP]
    dram[o_col + b] = last
    dram[o_ccol + ch] = last
    done = last + dram[D_CL]
    return (done - T + LINE_FIX - 1) // LINE_FIX - dram[D_NOMINAL]


@njit(cache=True, inline="always")
def popcount(bits):
    """Set bits of ``bits`` (sectors of a mask)."""
    n = 0
    while bits != 0:
        n += bits & 1
        bits >>= 1
    return n


@njit(cache=True, inline="always")
def low_sector(bits):
    """The lowest set bit's position in ``bits`` (a mask's first sector; 0 for 0)."""
    low = bits & -bits
    k = 0
    while low > 1:
        low >>= 1
        k += 1
    return k


@njit(cache=True)
def l2_path(cfg, fcfg, scalars, stats, l2_tag, l2_lru, l2_smask, dram, line, t, rep, bits):
    """Cycle at which an L1 miss (or bypassing access) of ``line`` (the 32-byte sectors ``bits`` of it, a
    mask) reaching the L2 side at ``t`` returns, its reply of ``rep`` flits through the SM's interconnect
    ejection port (when modelled); an L2 miss reads DRAM, in its bank (:func:`dram_read`) where the SM's
    DRAM has them.  A sectored L2 (``C_L2_SECT``) hits only when the line holds every sector asked for; a
    line present without some of them is a sector miss, which reads from DRAM only the sectors it lacks
    (GPGPU-Sim's SECTOR_MISS; a line miss reads the ones asked for)."""
    stats[K_L2_ACC] += 1
    nsec = popcount(bits)
    if cfg[C_L2_SETS] > 0:
        scalars[G_LRU_CLOCK] += 1
        hit, way = lru_access_at(
            l2_tag, l2_lru, l2_set(cfg, dram, line), cfg[C_L2_ASSOC], line, scalars[G_LRU_CLOCK]
        )
        if cfg[C_L2_SECT] != 0:
            lack = (bits & ~l2_smask[way]) if hit else bits
            l2_smask[way] = (l2_smask[way] | bits) if hit else bits
            if hit and lack != 0:
                hit = False
                nsec = popcount(lack)
        if hit:
            stats[K_L2_HIT] += 1
            return noc_receive(fcfg, scalars, stats, t + cfg[C_L2_LAT], t + cfg[C_L2_LAT], rep)
    lsec = max((1 << cfg[C_LINE_SHIFT]) >> 5, 1)
    if nsec < lsec:  # the DRAM bandwidth the sectors read take (GPGPU-Sim mode's sector requests)
        svc = np.int64(fcfg[F_LINE_CYCLES] * LINE_FIX * nsec / lsec + 0.5)
    else:
        svc = np.int64(fcfg[F_LINE_CYCLES] * LINE_FIX + 0.5)
    start = max(t * LINE_FIX, scalars[G_DRAM_FREE])
    scalars[G_DRAM_FREE] = start + svc
    stats[K_DRAM_LINES] += 1
    ret = (scalars[G_DRAM_FREE] + LINE_FIX - 1) // LINE_FIX + cfg[C_L2_LAT] + cfg[C_DRAM_LAT]
    if dram[D_ON] != 0:
        ret += dram_read(dram, line << cfg[C_LINE_SHIFT], t, nsec)
    return noc_receive(fcfg, scalars, stats, t + cfg[C_L2_LAT], ret, rep)


@njit(cache=True)
def l2_write(cfg, fcfg, scalars, stats, l2_tag, l2_lru, l2_smask, dram, line, t, req, ackf, bits):
    """A store of ``req`` request flits (its data; the 32-byte sectors ``bits`` of ``line``) leaving for the
    L2 slice at ``t`` (write-allocate there, a sectored L2's line holding the written sectors without
    reading the others: GPGPU-Sim's lazy fetch on read; DRAM write-back traffic is not modelled; its
    acknowledgements, ``ackf`` flits, come back through the ejection port); returns the cycle it has left
    the SM and the cycle its acknowledgements are back (GPGPU-Sim mode holds the store's warp until then;
    rfmodel's own pipeline does not wait)."""
    t = noc_send(fcfg, scalars, stats, t, req)
    ack = t + cfg[C_L2_LAT]
    if fcfg[F_FLIT_CYCLES] > 0.0:
        ack = noc_receive(fcfg, scalars, stats, ack, ack, ackf)
    stats[K_L2_ACC] += 1
    if cfg[C_L2_SETS] > 0:
        scalars[G_LRU_CLOCK] += 1
        hit, way = lru_access_at(
            l2_tag, l2_lru, l2_set(cfg, dram, line), cfg[C_L2_ASSOC], line, scalars[G_LRU_CLOCK]
        )
        if cfg[C_L2_SECT] != 0:
            l2_smask[way] = (l2_smask[way] | bits) if hit else bits
        if hit:
            stats[K_L2_HIT] += 1
    return t, ack


@njit(cache=True)
def mshr_request(
    cfg,
    fcfg,
    scalars,
    stats,
    mshr,
    l2_tag,
    l2_lru,
    l2_smask,
    dram,
    line,
    t,
    req,
    rep,
    bits,
    looked=False,
    leave=-1,
):
    """A line miss (the 32-byte sectors ``bits`` of it, a mask) leaving the SM at ``t`` or, when every MSHR is
    taken, when the first frees (its request of ``req`` flits through the interconnect injection port, its
    reply of ``rep`` flits back); returns ``(fill cycle, cycle it took its MSHR)``.  The L1D's lookup latency
    is on the request's path, unless ``looked``: the miss was found at the end of it (GPGPU-Sim mode's latency
    queue)."""
    n_mshr = cfg[C_MSHR]
    lookup = 0 if looked else cfg[C_L1_HIT]
    if n_mshr <= 0:
        dep = noc_send(fcfg, scalars, stats, t, req)
        return l2_path(
            cfg, fcfg, scalars, stats, l2_tag, l2_lru, l2_smask, dram, line, dep + lookup, rep, bits
        ), t
    slot, taken = take_mshr(mshr, n_mshr, t, NEVER)
    stats[K_MSHR_WAIT] += taken - t
    t = taken
    dep = noc_send(fcfg, scalars, stats, max(t, leave), req)
    fill = l2_path(cfg, fcfg, scalars, stats, l2_tag, l2_lru, l2_smask, dram, line, dep + lookup, rep, bits)
    mshr[slot] = fill
    return fill, t


# the memory-side hooks' numbers (rfmodel.designs.base): L1_FILL, the l1 hook's call for a fill; L1_ABSORB,
# its answer for a store it keeps; MQ_LOAD / MQ_STORE, the kinds of a design memory request
assert (L1_LOAD, L1_STORE) == (MK_LOAD, MK_STORE)


@njit(cache=True, inline="always")
def l1_queue_enter(l1q, depth, bank, t):
    """GPGPU-Sim's L1D latency queue of ``bank`` (``-gpgpu_l1_latency`` stages, one access each; an access
    moves a stage a cycle while the one ahead is free, and the head is looked up once a cycle): an access
    offered at ``t`` enters the tail once there is room (the access ``depth`` before it has left) and the
    tail took none this cycle, and reaches the head ``depth`` cycles later, or the cycle after the one ahead
    of it left.  Returns (the bank's offset in ``l1q``, the cycle it enters, the cycle it is looked up)."""
    base = bank * (depth + 3)
    n = l1q[base]
    enter = t
    if n > 0:
        enter = max(enter, l1q[base + 2] + 1)
    if n >= depth:
        enter = max(enter, l1q[base + 3 + n % depth])
    l1q[base + 2] = enter
    return base, enter, max(enter + depth, l1q[base + 1] + 1)


@njit(cache=True, inline="always")
def l1_queue_leave(l1q, base, depth, t):
    """The access looked up last (:func:`l1_queue_enter`) leaves the head of its bank's queue at ``t``."""
    n = l1q[base]
    l1q[base + 3 + n % depth] = t
    l1q[base] = n + 1
    l1q[base + 1] = t


@njit(cache=True, inline="always")
def mq_wait(l1q, mb, size, t, n, m, stats):
    """The first cycle from ``t`` at which the L1D's miss queue (``size`` entries at ``l1q[mb:]``; 0: no
    limit) holds at most ``size - m`` requests when the last of ``n`` new ones asks (GPGPU-Sim's
    ``miss_queue_full``: ``m`` = 2 for a load's miss, 1 for a store)."""
    room = mq_room_at(l1q, mb, size, n, m)
    if room > t:
        stats[K_L1_MISSQ_WAIT] += room - t
        t = room
    return t


@njit(cache=True, inline="always")
def mq_room_at(l1q, mb, size, n, m):
    """The cycle from which the L1D's miss queue has room for ``n`` new requests (:func:`mq_wait`; 0: now)."""
    if size <= 0:
        return 0
    k = l1q[mb]
    # the request that must have left: the (size - m + 1)-th before the last new one (one of the new ones
    # only where a line's sectors outnumber the room: then the last request already in)
    j = min(k + n - 2 - (size - m), k - 1)
    return l1q[mb + 2 + j % size] if j >= 0 else 0


@njit(cache=True, inline="always")
def mq_push(l1q, mb, size, t, n):
    """``n`` requests enter the miss queue at ``t`` and leave it for the interconnect one a cycle, in
    order; returns the cycle the first leaves (``t`` without a limit)."""
    if size <= 0:
        return t
    first = -1
    for _ in range(n):
        k = l1q[mb]
        leave = t if k == 0 else max(t, l1q[mb + 1] + 1)
        l1q[mb + 2 + k % size] = leave
        l1q[mb + 1] = leave
        l1q[mb] = k + 1
        if first < 0:
            first = leave
    return first


@njit(cache=True, inline="always")
def merge_most(merge, base, bits):
    """The most accesses an outstanding miss of one of the sectors ``bits`` (bit 0 alone: the whole line)
    of the line at ``merge[base:]`` holds (:data:`C_L1_MERGE`)."""
    most = 0
    s = 0
    while bits != 0:
        if bits & 1 and merge[base + s] > most:
            most = merge[base + s]
        bits >>= 1
        s += 1
    return most


@njit(cache=True, inline="always")
def smem_pipelined(kind, atom_kind):
    """An instruction GPGPU-Sim runs through its shared-memory pipeline: a shared-memory load or a
    shared-memory atomic (``kind``: its op class's memory kind; ``atom_kind``: the row's ``atom`` entry)."""
    return kind == MK_SLOAD or (kind == MK_ATOM and atom_kind == ATOM_SHARED)


@njit(cache=True, inline="always")
def merge_add(merge, base, bits, first):
    """Sectors ``bits`` of the line at ``merge[base:]``: one more access merged (``first``: a new miss, its
    only access)."""
    s = 0
    while bits != 0:
        if bits & 1:
            merge[base + s] = 1 if first else merge[base + s] + 1
        bits >>= 1
        s += 1


@njit(cache=True)
def _l1_access(
    line,
    j,
    row,
    r,
    kind,
    opc,
    t,
    inserted,
    ack,
    queued,
    depth,
    banks,
    mb,
    mq,
    mmax,
    shift,
    lsec,
    req,
    rep,
    ackf,
    cfg,
    fcfg,
    scalars,
    stats,
    sectors,
    sec_need,
    r_extra,
    tag,
    lru,
    ready,
    smask,
    merge,
    l1q,
    mshr,
    l2_tag,
    l2_lru,
    l2_smask,
    dram,
):
    """One line of a load or store through the SM's L1D (:func:`lsu_access`, the SM's own L1D): its lookup
    (GPGPU-Sim mode: at the head of its bank's latency queue), a store written through, a hit, a line or
    sector miss sent to L2 through the MSHRs.  Returns ``(at, t, inserted, ack)``: the cycle the line's
    data is there, the unit's cycle and its accesses in that cycle, a store's latest acknowledgement."""
    qb = 0
    stats[K_L1_ACC] += 1
    scalars[G_LRU_CLOCK] += 1
    s1 = set_of(line, cfg[C_L1_SETS], shift, cfg[C_L1_INDEX])
    need = sec_need[j] if cfg[C_L1_SECT] != 0 else 0
    # tl: the lookup's cycle.  GPGPU-Sim mode: the access enters its bank's latency queue and is
    # looked up at the head; one that cannot take its set there (every way waiting for a fill,
    # or no MSHR) holds the head, and the unit waits only for room at the tail
    tl = t
    if queued:
        bank = 0
        if banks > 1 and need != 0:  # banks interleave the sectors: the first one it reads
            bank = low_sector(need) & (banks - 1)
        qb, enter, tl = l1_queue_enter(l1q, depth, bank, t)
        if enter > t:
            t = enter
            inserted = 0
        inserted += 1
    t0 = tl
    if kind == MK_STORE and cfg[C_L1_WALLOC] == 0:
        hit, way = lru_probe(tag, lru, s1, cfg[C_L1_ASSOC], line, scalars[G_LRU_CLOCK])
    elif cfg[C_L1_RESERVE] != 0 and kind != MK_STORE:
        hit, way, tl = lru_access_reserve(
            tag, lru, ready, s1, cfg[C_L1_ASSOC], line, scalars[G_LRU_CLOCK], tl
        )
        stats[K_L1_SET_WAIT] += tl - t0
    else:
        hit, way = lru_access_at(tag, lru, s1, cfg[C_L1_ASSOC], line, scalars[G_LRU_CLOCK])
    # a sectored line hits only when it holds (or has asked for) every sector the row reads
    tag_hit = hit
    if need != 0 and hit and (smask[way] & need) != need:
        hit = False
    if hit:
        stats[K_L1_HIT] += 1
    if kind == MK_STORE:
        nw = req // max(cfg[C_SECTOR_FLITS], 1) if need != 0 else 1
        tl = mq_wait(l1q, mb, mq, tl, nw, 1, stats)
        lv = mq_push(l1q, mb, mq, tl, nw)
        if not tag_hit and way >= 0:
            ready[way] = tl  # write-allocate; the store does not wait for the line
        if need != 0 and way >= 0:  # the written sectors are the line's
            smask[way] = (smask[way] | need) if tag_hit else need
        if tag_hit and cfg[C_L1_WEVICT] != 0 and opc == OP_STG and ready[way] <= tl:
            # write-evict: a global store that hits a filled line invalidates it (a line still
            # being filled is GPGPU-Sim's HIT_RESERVED, which a store leaves alone)
            tag[way] = -1
            lru[way] = -1
            smask[way] = 0
        wbits = sec_need[j] if cfg[C_L2_SECT] != 0 else (1 << lsec) - 1
        _, ack = l2_write(
            cfg, fcfg, scalars, stats, l2_tag, l2_lru, l2_smask, dram, line, lv, req, ackf, wbits
        )
        at = tl
    elif hit:
        if ready[way] > tl and mmax > 0:
            bits = need if need != 0 else 1
            most = merge_most(merge, way * lsec, bits)
            if most >= mmax:  # no merge slot left: the load waits for the fill, then hits
                stats[K_L1_MERGE_WAIT] += ready[way] - tl
                tl = ready[way]
            else:
                merge_add(merge, way * lsec, bits, False)
        if ready[way] > tl:
            tl = mq_wait(l1q, mb, mq, tl, 1, 2, stats)
        at = max(tl if queued else tl + cfg[C_L1_HIT], ready[way])
        if ready[way] > tl:
            r_extra[r] += sectors[row]  # merged into an outstanding miss
    elif need != 0:
        # a sector miss fetches the sectors the line lacks; a line miss the ones the row reads
        fetch = (need & ~smask[way]) if tag_hit else need
        n = 0
        bits = fetch
        while bits != 0:  # sectors fetched (a line has at most line_bytes / 32)
            n += bits & 1
            bits >>= 1
        tl = mq_wait(l1q, mb, mq, tl, n, 2, stats)
        lv = mq_push(l1q, mb, mq, tl, n)
        fill, tl = mshr_request(
            cfg,
            fcfg,
            scalars,
            stats,
            mshr,
            l2_tag,
            l2_lru,
            l2_smask,
            dram,
            line,
            tl,
            n * req,
            n * cfg[C_SECTOR_FLITS],
            fetch,
            queued,
            lv,
        )
        if tag_hit and ready[way] > tl:  # the sectors already asked for: merged
            merge_add(merge, way * lsec, need & ~fetch, False)
        merge_add(merge, way * lsec, fetch, True)
        ready[way] = max(ready[way], fill) if tag_hit else fill
        smask[way] = (smask[way] | need) if tag_hit else need
        at = fill
        r_extra[r] += n
    else:
        tl = mq_wait(l1q, mb, mq, tl, 1, 2, stats)
        lv = mq_push(l1q, mb, mq, tl, 1)
        fill, tl = mshr_request(
            cfg,
            fcfg,
            scalars,
            stats,
            mshr,
            l2_tag,
            l2_lru,
            l2_smask,
            dram,
            line,
            tl,
            req,
            rep,
            (1 << lsec) - 1,
            queued,
            lv,
        )
        ready[way] = fill
        merge_add(merge, way * lsec, 1, True)
        at = fill
        r_extra[r] += sectors[row]
    if queued:
        l1_queue_leave(l1q, qb, depth, tl)
    else:
        t = tl  # the unit waited for the set and the MSHR
    return at, t, inserted, ack


@njit(cache=True)
def lsu_access(
    r,
    row,
    opc,
    cyc,
    mem_ptr,
    mem_line,
    cfg,
    fcfg,
    cls_lat,
    cls_ii,
    cls_mem,
    sectors,
    req_flits,
    rep_flits,
    ack_flits,
    atom,
    sec_need,
    scalars,
    stats,
    r_extra,
    tag,
    lru,
    ready,
    smask,
    merge,
    l1q,
    mshr,
    l2_tag,
    l2_lru,
    l2_smask,
    dram,
    h_l1,
    design_ints,
    design_floats,
    w,
):
    """Timing of a memory instruction entering the load/store unit at ``cyc``.

    Lines are looked up one per cycle (GPGPU-Sim mode: each enters its L1D bank's latency queue, one a bank
    a cycle, and is looked up at the queue's head, :func:`l1_queue_enter`; a lookup that waits for its set
    or an MSHR holds the head, not the unit).  Every line an L1D would see goes first to the design's ``l1``
    hook: ``-1`` leaves it to the SM's own L1D, ``L >= 0`` serves it from the design's structure ``L``
    cycles later, ``-2`` is a miss of the design's structure, sent to L2 through the MSHRs like an L1D
    miss (the hook is then called again with kind :data:`L1_FILL` and the fill cycle).  Stores write
    through to L2, except a store the hook answers with :data:`L1_ABSORB` (its structure keeps it and
    writes it back itself).  Returns (completion cycle, cycle from which the unit is free again);
    sets ``r_extra`` (compat: GPGPU-Sim's writebacks of the load: one per missed sector, none for L1 hits).
    Requests and replies pass the SM's interconnect ports where modelled (``req_flits`` / ``rep_flits`` of
    the row a line; a sector miss one request a sector); a store does not wait for its request to leave
    (the L1's miss queue holds it).  With a miss queue (``l1_missq``) a lookup that misses, stores or
    merges into a miss in flight waits for room in it (:func:`mq_wait`), and its requests leave it one a
    cycle; with a merge limit (``l1_merge``) a load that would be the limit's next access to a line still
    being filled waits for the fill (then it hits).  (The
    tables come one array each, not as the tables tuple: a call copies every array of a tuple it is
    given.)
    """
    req = req_flits[row]
    rep = rep_flits[row]
    ackf = ack_flits[row]
    lsec = max((1 << cfg[C_LINE_SHIFT]) >> 5, 1)  # the 32-byte sectors of a line
    full = (1 << lsec) - 1
    kind = cls_mem[opc]
    lat = cls_lat[opc]
    compat = cfg[C_COMPAT] != 0
    r_extra[r] = 0
    t = cyc
    done = cyc + lat
    ack = cyc  # a store's latest acknowledgement
    if smem_pipelined(kind, atom[row]):
        # shared memory, an atomic there included (GPGPU-Sim: its shared-memory pipeline, written back
        # through the LSU's port)
        done = cyc + lat + cfg[C_SMEM_LAT]
        r_extra[r] = 1
        if compat:  # one more in GPGPU-Sim's shared-memory pipeline until its write-back
            scalars[G_SMEM_N] += 1
    elif kind == MK_CONST:
        done = cyc + lat + cfg[C_L1_HIT]
        r_extra[r] = 1
    elif kind == MK_LOAD or kind == MK_STORE or kind == MK_ATOM:
        shift = cfg[C_LINE_SHIFT]
        use_l1 = cfg[C_L1_ON] != 0 and kind != MK_ATOM and not (cfg[C_L1_BYPASS] != 0 and opc == OP_LDG)
        depth = cfg[C_L1_QUEUE]
        queued = use_l1 and depth > 0
        banks = max(cfg[C_L1_BANKS], 1)
        # accesses the latency queues took in the unit's current cycle (typed: a literal 0 here compiled
        # _l1_access a second time, for that literal)
        inserted = np.int64(0)
        mb = max(cfg[C_L1_BANKS] * (depth + 3), 1)
        mq = cfg[C_L1_MISSQ]
        mmax = cfg[C_L1_MERGE]
        for j in range(mem_ptr[row], mem_ptr[row + 1]):
            line = mem_line[j] >> shift
            served = h_l1(design_ints, design_floats, w, line, kind, 0, t) if use_l1 else -1
            # the row's sectors of the line, where a sectored L2 keeps them apart (else the whole line)
            sbits = sec_need[j] if cfg[C_L2_SECT] != 0 else full
            if kind == MK_STORE and served == L1_ABSORB:  # kept by the design's write-back L1D
                stats[K_L1_HOOK_HITS] += 1
                at = t
            elif served >= 0 or served == -2:  # the design's L1D
                if kind == MK_STORE:
                    _, ack = l2_write(
                        cfg, fcfg, scalars, stats, l2_tag, l2_lru, l2_smask, dram, line, t, req, ackf, sbits
                    )
                    at = t
                if served >= 0:
                    stats[K_L1_HOOK_HITS] += 1
                    if kind != MK_STORE:
                        at = t + served
                else:
                    stats[K_L1_HOOK_MISSES] += 1
                    if kind != MK_STORE:
                        at, t = mshr_request(
                            cfg,
                            fcfg,
                            scalars,
                            stats,
                            mshr,
                            l2_tag,
                            l2_lru,
                            l2_smask,
                            dram,
                            line,
                            t,
                            req,
                            rep,
                            full,
                        )
                        h_l1(design_ints, design_floats, w, line, L1_FILL, at, t)
                        r_extra[r] += sectors[row]
            elif use_l1:
                at, t, inserted, ack = _l1_access(
                    line,
                    j,
                    row,
                    r,
                    kind,
                    opc,
                    t,
                    inserted,
                    ack,
                    queued,
                    depth,
                    banks,
                    mb,
                    mq,
                    mmax,
                    shift,
                    lsec,
                    req,
                    rep,
                    ackf,
                    cfg,
                    fcfg,
                    scalars,
                    stats,
                    sectors,
                    sec_need,
                    r_extra,
                    tag,
                    lru,
                    ready,
                    smask,
                    merge,
                    l1q,
                    mshr,
                    l2_tag,
                    l2_lru,
                    l2_smask,
                    dram,
                )
            elif kind == MK_STORE:
                _, ack = l2_write(
                    cfg, fcfg, scalars, stats, l2_tag, l2_lru, l2_smask, dram, line, t, req, ackf, sbits
                )
                at = t
            else:
                dep = noc_send(fcfg, scalars, stats, t, req)
                if cfg[C_L2_SECT] == 0:  # the row's sector count, from the line's start
                    sbits = (1 << (sectors[row] if sectors[row] > 0 else lsec)) - 1
                at = l2_path(cfg, fcfg, scalars, stats, l2_tag, l2_lru, l2_smask, dram, line, dep, rep, sbits)
                r_extra[r] += sectors[row]
            if kind != MK_STORE and at + lat > done:
                done = at + lat
            elif kind == MK_STORE and compat and ack > done:
                # GPGPU-Sim: a warp finishes only when its stores are acknowledged (shd_warp_t::stores_done)
                done = ack
            if inserted == 0 or inserted >= banks:  # the queues take one access per bank a cycle at most
                t += 1
                inserted = 0
    if inserted > 0:  # the unit's last cycle of accesses, its banks not all taken
        t += 1
    if not compat:
        r_extra[r] = 0
    free = max(cyc + cls_ii[opc], t)
    return done, free


@njit(cache=True)
def warp_finish(w, cyc, cfg, state, design_ints, design_floats, h_deactivate):
    """Warp ``w`` executed its last instruction and has nothing in flight: free its slot."""
    S = cfg[C_SCHEDS]
    WS = (cfg[C_WARPS] + S - 1) // S
    scalars = state[S_G]
    stats = state[S_K]
    c_cta = state[S_C_CTA]
    c_live = state[S_C_LIVE]
    s_age = state[S_S_AGE]
    s_age_n = state[S_S_AGE_N]
    state[S_W_ACTIVE][w] = 0
    cs = state[S_W_CTA][w]
    s = state[S_W_SCHED][w]
    stats[K_HOOK_CALLS] += 1
    h_deactivate(design_ints, design_floats, w, c_cta[cs], s, 0, cyc)
    n = s_age_n[s]
    j = 0
    while j < n and s_age[s * WS + j] != w:
        j += 1
    if j < n:
        while j < n - 1:
            s_age[s * WS + j] = s_age[s * WS + j + 1]
            j += 1
        s_age_n[s] = n - 1
    if cfg[C_POLICY] == POL_TWO_LEVEL:
        s_pool = state[S_S_POOL]
        s_pool_n = state[S_S_POOL_N]
        q = 0
        for i in range(s_pool_n[s]):
            x = s_pool[s * WS + i]
            if x != w:
                s_pool[s * WS + q] = x
                q += 1
        s_pool_n[s] = q
        s_pend = state[S_S_PEND]
        h = state[S_S_PEND_H][s]
        m = state[S_S_PEND_N][s]
        q = 0
        for i in range(m):
            x = s_pend[s * WS + (h + i) % WS]
            if x != w:
                s_pend[s * WS + (h + q) % WS] = x
                q += 1
        state[S_S_PEND_N][s] = q
    c_live[cs] -= 1
    if c_live[cs] == 0:
        c_cta[cs] = -1
        scalars[G_RESIDENT_CTAS] -= 1
        stats[K_CTAS_DONE] += 1


@njit(cache=True, inline="always", _nrt=False)
def _retire(r, cyc, trace, cfg, tables, state, ust, design_ints, design_floats, h_deactivate):
    """Instruction record ``r`` has written its results: release its registers and the record, and free
    its warp when this was the warp's last instruction."""
    op, _, dst, _, pdst, _, udst, _, _, _, _ = trace
    cls_mem = tables[T_CLS_MEM]
    scalars = state[S_G]
    stats = state[S_K]
    reg_pend = state[S_REG_PEND]
    reg_long = state[S_REG_LONG]
    w_ppend = state[S_W_PPEND]
    w_inflight = state[S_W_INFLIGHT]
    w = state[S_R_WARP][r]
    row = state[S_R_ROW][r]
    kind = cls_mem[op[row]]
    base = w * 256
    for j in range(dst.shape[1]):
        d = dst[row, j]
        if d != NONE_REG:
            reg_pend[base + d] -= 1
            if kind == MK_LOAD or kind == MK_ATOM:
                reg_long[base + d] -= 1
    w_ppend[w] &= ~np.int64(pdst[row])
    ust[w] &= ~udst[row]
    state[S_W_SB][w] = 0
    if kind == MK_ATOM:  # GPGPU-Sim mode: the warp's atomic is done
        state[S_W_BAR][w] &= WAIT_BARRIER
    w_inflight[w] -= 1
    stats[K_RETIRED] += 1
    stats[K_LAST_RETIRE] = cyc
    state[S_R_FREE][scalars[G_RTOP]] = r
    scalars[G_RTOP] += 1
    if state[S_W_EXITED][w] != 0 and w_inflight[w] == 0 and state[S_W_ACTIVE][w] != 0:
        warp_finish(w, cyc, cfg, state, design_ints, design_floats, h_deactivate)


@njit(cache=True, inline="always")
def _free_collector(u, grp, unit_set1, unit_set2, g_free, gs_start, gs_list, k_rec):
    """A free collector of group ``grp`` that serves unit type ``u`` (its typed set first), or -1."""
    for si in range(2):
        cset = unit_set1[u] if si == 0 else unit_set2[u]
        if cset < 0 or g_free[grp * N_CSET + cset] <= 0:
            continue
        gi = grp * N_CSET + cset
        for q in range(gs_start[gi], gs_start[gi + 1]):
            if k_rec[gs_list[q]] < 0:
                return gs_list[q]
    return -1


@njit(cache=True, inline="always", _nrt=False)
def _schedule(scalars, stats, h_t, h_v, heap_cap, t, v):
    """Event ``v`` at cycle ``t`` on the heap; False (the error in ``stats[K_ERR]``) when it is full."""
    if scalars[G_HEAP_N] >= heap_cap:
        stats[K_ERR] = ERR_HEAP
        stats[K_ERR_INFO] = heap_cap
        return False
    scalars[G_HEAP_N] = heap_push(h_t, h_v, scalars[G_HEAP_N], t, v)
    return True


# =========================================================================== the stages of a cycle


@njit(cache=True, inline="always", _nrt=False)
def _launch_ctas(cyc, cfg, tables, state, ust, design_ints, design_floats, h_activate, h_deactivate):
    """CTA launch: the next CTAs of the trace take free CTA slots while the SM has room (at most
    ``cta_per_cycle`` a cycle); their warps join the schedulers.  True when a CTA was launched."""
    W = cfg[C_WARPS]
    S = cfg[C_SCHEDS]
    WS = (W + S - 1) // S
    policy = cfg[C_POLICY]
    cta_per_cycle = cfg[C_CTA_PER_CYCLE]
    max_ctas = cfg[C_MAX_CTAS]
    wpc = cfg[C_WPC]
    n_cta = cfg[C_N_CTA]
    cta_wstart = tables[T_CTA_WSTART]
    tw_ptr = tables[T_TW_PTR]
    scalars = state[S_G]
    w_active = state[S_W_ACTIVE]
    w_pc = state[S_W_PC]
    w_end = state[S_W_END]
    w_cta = state[S_W_CTA]
    w_sched = state[S_W_SCHED]
    w_inflight = state[S_W_INFLIGHT]
    w_exited = state[S_W_EXITED]
    w_bar = state[S_W_BAR]
    w_sb = state[S_W_SB]
    w_dyn = state[S_W_DYN]
    w_ibuf = state[S_W_IBUF]
    w_ibuf_at = state[S_W_IBUF_AT]
    w_ppend = state[S_W_PPEND]
    w_tw = state[S_W_TW]
    s_age = state[S_S_AGE]
    s_age_n = state[S_S_AGE_N]
    s_pend = state[S_S_PEND]
    s_pend_h = state[S_S_PEND_H]
    s_pend_n = state[S_S_PEND_N]
    c_cta = state[S_C_CTA]
    c_live = state[S_C_LIVE]
    c_unexited = state[S_C_UNEXITED]
    c_bar = state[S_C_BAR]
    stats = state[S_K]
    act = False
    launched = 0
    while (
        scalars[G_NEXT_CTA] < n_cta
        and scalars[G_RESIDENT_CTAS] < max_ctas
        and (cta_per_cycle == 0 or launched < cta_per_cycle)
    ):
        cs = 0
        while c_cta[cs] >= 0:
            cs += 1
        cta = scalars[G_NEXT_CTA]
        scalars[G_NEXT_CTA] = cta + 1
        scalars[G_RESIDENT_CTAS] += 1
        launched += 1
        act = True
        c_cta[cs] = cta
        nw = cta_wstart[cta + 1] - cta_wstart[cta]
        c_live[cs] = nw
        c_unexited[cs] = nw
        c_bar[cs] = 0
        for i in range(nw):
            w = cs * wpc + i
            tw = cta_wstart[cta] + i
            s = w % S
            w_active[w] = 1
            w_tw[w] = tw
            w_pc[w] = tw_ptr[tw]
            w_end[w] = tw_ptr[tw + 1]
            w_cta[w] = cs
            w_sched[w] = s
            w_inflight[w] = 0
            w_exited[w] = 0
            w_bar[w] = 0
            w_sb[w] = 0
            w_dyn[w] = scalars[G_DYN]
            scalars[G_DYN] += 1
            w_ibuf[w] = 0
            w_ibuf_at[w] = 0
            w_ppend[w] = 0
            ust[w] = 0
            s_age[s * WS + s_age_n[s]] = w
            s_age_n[s] += 1
            if policy == POL_TWO_LEVEL:
                s_pend[s * WS + (s_pend_h[s] + s_pend_n[s]) % WS] = w
                s_pend_n[s] += 1
            h_activate(design_ints, design_floats, w, cta, s, 0, cyc)
        resident = 0
        for w in range(W):
            resident += w_active[w]
        if resident > stats[K_MAX_WARPS]:
            stats[K_MAX_WARPS] = resident
        # warps without instructions finish at once
        for i in range(nw):
            w = cs * wpc + i
            if w_pc[w] >= w_end[w]:
                w_exited[w] = 1
                c_unexited[cs] -= 1
                warp_finish(w, cyc, cfg, state, design_ints, design_floats, h_deactivate)
    return act


@njit(cache=True, inline="always", _nrt=False)
def _events(cyc, state, stamp0):
    """Events due by cycle ``cyc``: operands arriving from outside the banks (the collector is ready when
    the last one is there) and results completing (they queue for write-back).  True when one was due."""
    scalars = state[S_G]
    r_pending = state[S_R_PENDING]
    k_rec = state[S_K_REC]
    k_ready = state[S_K_READY]
    h_t = state[S_H_T]
    h_v = state[S_H_V]
    wb = state[S_WB]
    act = False
    while scalars[G_HEAP_N] > 0 and h_t[0] <= cyc:
        v = h_v[0]
        scalars[G_HEAP_N] = heap_pop(h_t, h_v, scalars[G_HEAP_N])
        kind = v >> EV_SHIFT
        x = v & (EV_MUL - 1)
        act = True
        if kind == EV_OPERAND:
            r = k_rec[x]
            r_pending[r] -= 1
            if r_pending[r] == 0:
                k_ready[x] = stamp0
        else:  # EV_COMPLETE
            wb[scalars[G_WB_N]] = x
            scalars[G_WB_N] += 1
    return act


@njit(cache=True, inline="always", _nrt=False)
def _wbuf_full(cfg, scalars, wq_n, b):
    """Whether the write buffer can take no value for bank ``b`` (shared: all its entries are in use;
    per bank: the bank's are)."""
    if cfg[C_WBUF_SHARED] != 0:
        return scalars[G_WBUF_N] >= cfg[C_WBUF]
    return wq_n[b] >= cfg[C_WBUF]


@njit(cache=True, inline="always", _nrt=False)
def _wbuf_drain(cyc, cfg, state):
    """The write buffer's drain (slow banks): a bank that is free writes its oldest buffered value when no
    read waits in its queue, or, with the buffer full (for that bank), before the waiting reads; the write
    holds the bank as any write does.  True when a value was written."""
    NB = cfg[C_BANKS]
    cap = cfg[C_WBUF]
    hold = cfg[C_BANK_WCYC] * cfg[C_ROWS]
    scalars = state[S_G]
    b_busy = state[S_B_BUSY]
    b_wbusy = state[S_B_WBUSY]
    b_n = state[S_B_N]
    wq = state[S_WQ]
    wq_head = state[S_WQ_HEAD]
    wq_n = state[S_WQ_N]
    wq_cnt = state[S_WQ_CNT]
    stats = state[S_K]
    act = False
    for b in range(NB):
        if wq_n[b] == 0 or b_busy[b] > cyc:
            continue
        if b_n[b] > 0 and not _wbuf_full(cfg, scalars, wq_n, b):
            continue  # reads first
        key = wq[b * cap + wq_head[b]]
        wq_head[b] = (wq_head[b] + 1) % cap
        wq_n[b] -= 1
        scalars[G_WBUF_N] -= 1
        wq_cnt[key] -= 1
        b_busy[b] = cyc + hold
        b_wbusy[b] = cyc + hold
        stats[K_BANK_WRITE_ACC] += cfg[C_ROWS]
        stats[K_WBUF_DRAINS] += 1
        act = True
    return act


@njit(cache=True, inline="always", _nrt=False)
def _write_back(cyc, trace, cfg, tables, state, ust, design_ints, design_floats, h_deactivate, h_write):
    """Write-back: completed instructions write their destination registers, each through the bank the
    design's ``write`` hook names (or outside the banks), within the banks' write ports or, with slow
    banks, one access at a time; an instruction whose writes are all done retires.  GPGPU-Sim mode: a
    second write to a bank in one cycle is dropped, and global loads write through the LSU's port
    (:func:`_lsu_write_back`).  True when anything moved; on an error ``stats[K_ERR]`` is set."""
    op, _, dst, _, _, _, _, _, rzd, _, _ = trace
    std_write = (cfg[C_HOOKS_STD] & HOOK_STD_WRITE) != 0
    NB = cfg[C_BANKS]
    wports = cfg[C_WPORTS]
    rwports = cfg[C_RWPORTS]
    rows = cfg[C_ROWS]
    compat = cfg[C_COMPAT] != 0
    max_rec = cfg[C_MAX_REC]
    rcyc = cfg[C_BANK_RCYC]
    wcyc = cfg[C_BANK_WCYC]
    slow = rcyc > 1 or wcyc > 1
    b_busy = state[S_B_BUSY]
    b_wbusy = state[S_B_WBUSY]
    wbuf = slow and cfg[C_WBUF] > 0
    wq = state[S_WQ]
    wq_head = state[S_WQ_HEAD]
    wq_n = state[S_WQ_N]
    wq_cnt = state[S_WQ_CNT]
    cls_mem = tables[T_CLS_MEM]
    scalars = state[S_G]
    r_warp = state[S_R_WARP]
    r_row = state[S_R_ROW]
    r_dk = state[S_R_DK]
    r_wrem = state[S_R_WREM]
    r_extra = state[S_R_EXTRA]
    b_stamp = state[S_B_STAMP]
    b_w = state[S_B_W]
    b_rwused = state[S_B_RWUSED]
    b_r = state[S_B_R]
    wb = state[S_WB]
    lsuwb = state[S_LSUWB]
    stats = state[S_K]
    b_max = state[S_B_MAX]
    act = False
    if wbuf and scalars[G_WBUF_N] > 0:  # buffered values go first (in order, per bank)
        act = _wbuf_drain(cyc, cfg, state)
    n_wb = scalars[G_WB_N]
    keep = 0
    for i in range(n_wb):
        r = wb[i]
        w = r_warp[r]
        row = r_row[r]
        opc = op[row]
        kind = cls_mem[opc]
        if compat and (kind == MK_LOAD or kind == MK_ATOM or kind == MK_SLOAD):
            # GPGPU-Sim: a global/local load writes once per returned sector fetch, through
            # the LSU writeback port; an L1 hit completes without a register-file write; a shared-memory
            # load writes once, through the same port (ldst_unit::writeback's shared-memory client)
            if r_extra[r] > 0:
                lsuwb[(scalars[G_LSUWB_HEAD] + scalars[G_LSUWB_N]) % max_rec] = r
                scalars[G_LSUWB_N] += 1
                act = True
                continue
            done = True
        else:
            nd = 0
            for j in range(dst.shape[1]):
                if dst[row, j] != NONE_REG:
                    nd += 1
            n_all = nd + rzd[row]
            done = True
            waited = False
            while r_dk[r] < n_all:
                dk = r_dk[r]
                reg = NONE_REG
                if dk < nd:
                    c = 0
                    for j in range(dst.shape[1]):
                        if dst[row, j] != NONE_REG:
                            if c == dk:
                                reg = dst[row, j]
                                break
                            c += 1
                if r_wrem[r] == 0:
                    stats[K_HOOK_CALLS] += 1
                    if std_write:
                        b = standard_bank(design_ints, w, reg)
                    else:
                        b = h_write(design_ints, design_floats, w, row, dk, reg, cyc)
                    if b < 0:
                        stats[K_WRITES] += 1
                        stats[K_WRITES_EXT] += 1
                        r_dk[r] += 1
                        act = True
                        continue
                    if b >= NB:
                        stats[K_ERR] = ERR_HOOK
                        stats[K_ERR_INFO] = b
                        return act
                    r_wrem[r] = (rows << 10) | b  # accesses left, bank
                b = r_wrem[r] & 1023
                left = r_wrem[r] >> 10
                if b_stamp[b] != cyc:
                    b_stamp[b] = cyc
                    b_w[b] = 0
                    b_rwused[b] = 0
                    b_r[b] = 0
                if compat and not slow:
                    if b_w[b] > 0:
                        stats[K_WRITES_DROPPED] += 1
                    else:
                        b_w[b] = 1
                        stats[K_WRITES] += 1
                        stats[K_WRITES_BANK] += 1
                        stats[K_BANK_WRITE_ACC] += 1
                    r_wrem[r] = 0
                    r_dk[r] += 1
                    act = True
                else:
                    if wbuf and left == rows and (b_busy[b] > cyc or wq_n[b] > 0):
                        # the bank is busy (or has older values waiting): the write buffer takes the whole
                        # warp register if it has room, else the result waits
                        if _wbuf_full(cfg, scalars, wq_n, b):
                            if not waited:
                                stats[K_WBUF_FULL_WAITS] += 1
                        else:
                            key = w * 256 + reg
                            wq[b * cfg[C_WBUF] + (wq_head[b] + wq_n[b]) % cfg[C_WBUF]] = key
                            wq_n[b] += 1
                            scalars[G_WBUF_N] += 1
                            wq_cnt[key] += 1
                            if scalars[G_WBUF_N] > stats[K_WBUF_MAX]:
                                stats[K_WBUF_MAX] = scalars[G_WBUF_N]
                            stats[K_WBUF_WRITES] += 1
                            left = 0
                            act = True
                    elif slow:  # one access at a time: the bank takes the next row once it is free
                        if b_busy[b] <= cyc:
                            b_busy[b] = cyc + wcyc
                            b_wbusy[b] = cyc + wcyc
                            b_w[b] += 1
                            left -= 1
                            stats[K_BANK_WRITE_ACC] += 1
                            act = True
                    else:
                        while left > 0:
                            if b_w[b] - b_rwused[b] < wports:
                                b_w[b] += 1
                            elif b_rwused[b] < rwports:
                                b_w[b] += 1
                                b_rwused[b] += 1
                            else:
                                break
                            left -= 1
                            stats[K_BANK_WRITE_ACC] += 1
                            act = True
                    tot = b_w[b] + b_r[b]
                    if tot > b_max[b]:
                        b_max[b] = tot
                    if left > 0:
                        r_wrem[r] = (left << 10) | b
                        if not waited:
                            stats[K_WRITE_WAIT_CYCLES] += 1
                            waited = True
                        done = False
                        break
                    r_wrem[r] = 0
                    r_dk[r] += 1
                    stats[K_WRITES] += 1
                    stats[K_WRITES_BANK] += 1
        if not done:
            wb[keep] = r
            keep += 1
            continue
        # ---- retire r
        act = True
        _retire(r, cyc, trace, cfg, tables, state, ust, design_ints, design_floats, h_deactivate)
    scalars[G_WB_N] = keep
    return act


@njit(cache=True, inline="always", _nrt=False)
def _lsu_write_back(cyc, trace, cfg, tables, state, ust, design_ints, design_floats, h_deactivate, h_write):
    """GPGPU-Sim mode: the LSU's write-back port writes one returned fill a cycle (all destination
    registers of a load at once, unless a bank it needs was written this cycle); a load retires with its
    last fill, a shared-memory load (or atomic) with its one write, which frees its place in the
    shared-memory pipeline.  True when a fill was written."""
    op, dst = trace[0], trace[2]
    std_write = (cfg[C_HOOKS_STD] & HOOK_STD_WRITE) != 0
    cls_mem = tables[T_CLS_MEM]
    atom = tables[T_ATOM]
    max_rec = cfg[C_MAX_REC]
    scalars = state[S_G]
    r_warp = state[S_R_WARP]
    r_row = state[S_R_ROW]
    r_extra = state[S_R_EXTRA]
    b_stamp = state[S_B_STAMP]
    b_w = state[S_B_W]
    b_rwused = state[S_B_RWUSED]
    b_r = state[S_B_R]
    lsuwb = state[S_LSUWB]
    stats = state[S_K]
    act = False
    if scalars[G_LSUWB_N] > 0:
        r = lsuwb[scalars[G_LSUWB_HEAD]]
        w = r_warp[r]
        row = r_row[r]
        ok = True
        nd = 0
        for j in range(dst.shape[1]):
            d = dst[row, j]
            if d == NONE_REG:
                continue
            nd += 1
            if std_write:
                b = standard_bank(design_ints, w, d)
            else:
                b = h_write(design_ints, design_floats, w, row, j, d, cyc)
            stats[K_HOOK_CALLS] += 1
            if b >= 0:
                if b_stamp[b] != cyc:
                    b_stamp[b] = cyc
                    b_w[b] = 0
                    b_rwused[b] = 0
                    b_r[b] = 0
                if b_w[b] > 0:
                    ok = False
        if ok:
            act = True
            for j in range(dst.shape[1]):
                d = dst[row, j]
                if d == NONE_REG:
                    continue
                if std_write:
                    b = standard_bank(design_ints, w, d)
                else:
                    b = h_write(design_ints, design_floats, w, row, j, d, cyc)
                stats[K_WRITES] += 1
                if b >= 0:
                    b_w[b] = 1
                    stats[K_WRITES_BANK] += 1
                    stats[K_BANK_WRITE_ACC] += 1
                else:
                    stats[K_WRITES_EXT] += 1
            r_extra[r] -= 1
            if r_extra[r] <= 0:
                scalars[G_LSUWB_HEAD] = (scalars[G_LSUWB_HEAD] + 1) % max_rec
                scalars[G_LSUWB_N] -= 1
                if smem_pipelined(cls_mem[op[row]], atom[row]):
                    scalars[G_SMEM_N] -= 1
                _retire(r, cyc, trace, cfg, tables, state, ust, design_ints, design_floats, h_deactivate)
    return act


# ----------------------------------------------------------------- GPGPU-Sim's L1D queues, cycle by cycle
@njit(cache=True, inline="always")
def _l1_steps(row, opc, trace, cfg, tables):
    """Whether a load or store of ``row`` goes through the L1D's queues cycle by cycle (``C_L1_STEP``: a
    global or local access through the SM's L1D, with memory lines)."""
    if cfg[C_L1_STEP] == 0 or cfg[C_L1_ON] == 0:
        return False
    kind = tables[T_CLS_MEM][opc]
    if kind != MK_LOAD and kind != MK_STORE:
        return False
    if cfg[C_L1_BYPASS] != 0 and opc == OP_LDG:
        return False
    mem_ptr = trace[9]
    return mem_ptr[row + 1] > mem_ptr[row]


@njit(cache=True, inline="always", _nrt=False)
def _l1_insert(c, trace, cfg, tables, state):
    """The load or store in the LD/ST unit (``G_LSU_R``) puts its next sector accesses into the tails of
    their banks' latency queues (a sector's bank: 32-byte interleaving), in order, one a bank a cycle, and
    stops at the first whose tail is taken (GPGPU-Sim's ``process_memory_access_queue_l1cache``); with its
    last access in, the unit is free the next cycle (or after the class's initiation interval).  True when
    an access went in."""
    scalars = state[S_G]
    r = scalars[G_LSU_R]
    if r < 0:
        return False
    mem_ptr = trace[9]
    sec_need = tables[T_SEC_NEED]
    banks = max(cfg[C_L1_BANKS], 1)
    depth = cfg[C_L1_QUEUE]
    st_r = state[S_L1_ST_R]
    st_j = state[S_L1_ST_J]
    st_b = state[S_L1_ST_B]
    r_macc = state[S_R_MACC]
    end = mem_ptr[state[S_R_ROW][r] + 1]
    j = scalars[G_LSU_J]
    bits = scalars[G_LSU_BITS]
    act = False
    done = False
    for _ in range(banks):
        low = bits & -bits
        tail = (low_sector(low) & (banks - 1)) * depth + depth - 1
        if st_r[tail] >= 0:
            break
        st_r[tail] = r
        st_j[tail] = j
        st_b[tail] = low
        r_macc[r] += 1
        scalars[G_L1_N] += 1
        act = True
        bits &= ~low
        if bits == 0:
            j += 1
            if j >= end:
                done = True
                break
            bits = sec_need[j]
    scalars[G_LSU_J] = j
    scalars[G_LSU_BITS] = bits
    if done:
        scalars[G_LSU_R] = -1
        state[S_U_FREE][U_MEM * cfg[C_SCHEDS]] = max(scalars[G_LSU_II], c + 1)
    return act


@njit(cache=True, inline="always", _nrt=False)
def _l1_begin(r, row, opc, cyc, trace, cfg, tables, state):
    """Load or store record ``r`` enters the LD/ST unit (``C_L1_STEP``): the unit holds it until its sector
    accesses are all in the L1D's queues (:func:`_l1_insert`, from this cycle); it completes once the last
    is looked up (:func:`_l1_step`)."""
    scalars = state[S_G]
    j = trace[9][row]
    scalars[G_LSU_R] = r
    scalars[G_LSU_J] = j
    scalars[G_LSU_BITS] = tables[T_SEC_NEED][j]
    scalars[G_LSU_II] = cyc + tables[T_CLS_II][opc]
    state[S_R_MACC][r] = 0
    state[S_R_MDONE][r] = cyc
    state[S_R_EXTRA][r] = 0
    state[S_U_FREE][U_MEM * cfg[C_SCHEDS]] = NEVER
    _l1_insert(cyc, trace, cfg, tables, state)


@njit(cache=True)
def _l1_sector(c, r, j, bit, trace, cfg, fcfg, tables, state):
    """The sector access at the head of its bank's queue, looked up at cycle ``c``: the sector ``bit`` of
    memory line ``j`` for record ``r``.  A store writes through (a request in the miss queue); a load hits
    (merging with its sector's outstanding miss, within the merge limit), or misses the sector or the
    line (a request in the miss queue, an MSHR, a way of its set not waiting for a fill).  False when it
    cannot go this cycle (GPGPU-Sim's RESERVATION_FAIL: it stays at the head)."""
    op, mem_line = trace[0], trace[10]
    row = state[S_R_ROW][r]
    opc = op[row]
    kind = tables[T_CLS_MEM][opc]
    scalars = state[S_G]
    stats = state[S_K]
    tag = state[S_L1_TAG]
    lru = state[S_L1_LRU]
    ready = state[S_L1_READY]
    smask = state[S_L1_SMASK]
    merge = state[S_L1_MERGE]
    sready = state[S_L1_SREADY]
    l1q = state[S_L1Q]
    mshr = state[S_MSHR_FILL]
    r_mdone = state[S_R_MDONE]
    shift = cfg[C_LINE_SHIFT]
    lsec = max((1 << shift) >> 5, 1)
    sec = low_sector(bit)
    line = mem_line[j] >> shift
    s1 = set_of(line, cfg[C_L1_SETS], shift, cfg[C_L1_INDEX])
    A = cfg[C_L1_ASSOC]
    base = s1 * A
    mb = max(cfg[C_L1_BANKS] * (cfg[C_L1_QUEUE] + 3), 1)
    mq = cfg[C_L1_MISSQ]
    way = -1
    for i in range(base, base + A):
        if tag[i] == line:
            way = i
            break
    tag_hit = way >= 0
    nsec = max(tables[T_SECTORS][row], 1)
    if kind == MK_STORE:
        if mq_room_at(l1q, mb, mq, 1, 1) > c:
            stats[K_L1_MISSQ_WAIT] += 1
            return False
        stats[K_L1_ACC] += 1
        scalars[G_LRU_CLOCK] += 1
        if cfg[C_L1_WALLOC] == 0:
            hit, way = lru_probe(tag, lru, s1, A, line, scalars[G_LRU_CLOCK])
        else:
            hit, way = lru_access_at(tag, lru, s1, A, line, scalars[G_LRU_CLOCK])
        if hit and (smask[way] & bit) != 0:
            stats[K_L1_HIT] += 1
        lv = mq_push(l1q, mb, mq, c, 1)
        if way >= 0:
            if not hit:
                ready[way] = c  # write-allocate; the store does not wait for the line
                smask[way] = bit
                sready[way * lsec + sec] = c
            elif (smask[way] & bit) == 0:
                smask[way] |= bit
                sready[way * lsec + sec] = c
            if hit and cfg[C_L1_WEVICT] != 0 and opc == OP_STG and ready[way] <= c:
                tag[way] = -1  # write-evict (a line still being filled is left alone)
                lru[way] = -1
                smask[way] = 0
        _, ack = l2_write(
            cfg,
            fcfg,
            scalars,
            stats,
            state[S_L2_TAG],
            state[S_L2_LRU],
            state[S_L2_SMASK],
            state[S_DRAM],
            line,
            lv,
            tables[T_REQ_FLITS][row] // nsec,
            tables[T_ACK_FLITS][row] // nsec,
            bit if cfg[C_L2_SECT] != 0 else (1 << lsec) - 1,
        )
        ack -= tables[T_CLS_LAT][opc]  # GPGPU-Sim mode: the warp is done with the acknowledgement
        if ack > r_mdone[r]:
            r_mdone[r] = ack
        return True
    at = c
    if tag_hit and (smask[way] & bit) != 0:
        sr = sready[way * lsec + sec]
        if sr > c:  # merges with the sector's outstanding miss
            mmax = cfg[C_L1_MERGE]
            if mmax > 0 and merge[way * lsec + sec] >= mmax:
                stats[K_L1_MERGE_WAIT] += 1
                return False
            if mq_room_at(l1q, mb, mq, 1, 2) > c:
                stats[K_L1_MISSQ_WAIT] += 1
                return False
            merge_add(merge, way * lsec, bit, False)
            state[S_R_EXTRA][r] += 1
            at = sr
        stats[K_L1_ACC] += 1
        stats[K_L1_HIT] += 1
        scalars[G_LRU_CLOCK] += 1
        lru[way] = scalars[G_LRU_CLOCK]
    else:
        if not tag_hit and cfg[C_L1_RESERVE] != 0:
            free = False
            for i in range(base, base + A):
                if ready[i] <= c:
                    free = True
                    break
            if not free:
                stats[K_L1_SET_WAIT] += 1
                return False
        if mq_room_at(l1q, mb, mq, 1, 2) > c:
            stats[K_L1_MISSQ_WAIT] += 1
            return False
        if cfg[C_MSHR] > 0:
            free = False
            for m in range(cfg[C_MSHR]):
                if mshr[m] <= c:
                    free = True
                    break
            if not free:
                stats[K_MSHR_WAIT] += 1
                return False
        stats[K_L1_ACC] += 1
        scalars[G_LRU_CLOCK] += 1
        if tag_hit:
            lru[way] = scalars[G_LRU_CLOCK]
        elif cfg[C_L1_RESERVE] != 0:
            _, way, _ = lru_access_reserve(tag, lru, ready, s1, A, line, scalars[G_LRU_CLOCK], c)
        else:
            _, way = lru_access_at(tag, lru, s1, A, line, scalars[G_LRU_CLOCK])
        lv = mq_push(l1q, mb, mq, c, 1)
        fill, _ = mshr_request(
            cfg,
            fcfg,
            scalars,
            stats,
            mshr,
            state[S_L2_TAG],
            state[S_L2_LRU],
            state[S_L2_SMASK],
            state[S_DRAM],
            line,
            c,
            tables[T_REQ_FLITS][row],
            cfg[C_SECTOR_FLITS],
            bit,
            True,
            lv,
        )
        merge_add(merge, way * lsec, bit, True)
        if tag_hit:
            ready[way] = max(ready[way], fill)
            smask[way] |= bit
        else:
            ready[way] = fill
            smask[way] = bit
        sready[way * lsec + sec] = fill
        state[S_R_EXTRA][r] += 1
        at = fill
    if at > r_mdone[r]:
        r_mdone[r] = at
    return True


@njit(cache=True, inline="always", _nrt=False)
def _l1_step(cyc, trace, cfg, fcfg, tables, state):
    """GPGPU-Sim mode's L1D queues (``C_L1_STEP``), one cycle (``ldst_unit::L1_latency_queue_cycle``):
    the head of each bank's latency queue is looked up, bank 0 first (:func:`_l1_sector`; one that cannot
    go stays), then every access behind a free stage moves up one; a record whose last access has been
    looked up completes when its data is there (a store: when acknowledged).  Then the load or store in the
    unit puts its next accesses in (:func:`_l1_insert`).  True when anything moved; on an error
    ``stats[K_ERR]`` is set."""
    scalars = state[S_G]
    stats = state[S_K]
    act = False
    if scalars[G_L1_N] > 0:
        banks = max(cfg[C_L1_BANKS], 1)
        depth = cfg[C_L1_QUEUE]
        st_r = state[S_L1_ST_R]
        st_j = state[S_L1_ST_J]
        st_b = state[S_L1_ST_B]
        r_macc = state[S_R_MACC]
        for b in range(banks):
            h = b * depth
            r = st_r[h]
            if r >= 0 and _l1_sector(cyc, r, st_j[h], st_b[h], trace, cfg, fcfg, tables, state):
                st_r[h] = -1
                scalars[G_L1_N] -= 1
                r_macc[r] -= 1
                act = True
                if r_macc[r] == 0 and scalars[G_LSU_R] != r:
                    lat = tables[T_CLS_LAT][trace[0][state[S_R_ROW][r]]]
                    done = state[S_R_MDONE][r] + lat
                    if not _schedule(
                        scalars,
                        stats,
                        state[S_H_T],
                        state[S_H_V],
                        cfg[C_HEAP_CAP],
                        max(done, cyc + 1),
                        EV_COMPLETE * EV_MUL + r,
                    ):
                        return act
            for k in range(h, h + depth - 1):
                if st_r[k] < 0 and st_r[k + 1] >= 0:
                    st_r[k] = st_r[k + 1]
                    st_j[k] = st_j[k + 1]
                    st_b[k] = st_b[k + 1]
                    st_r[k + 1] = -1
                    act = True
    return _l1_insert(cyc, trace, cfg, tables, state) or act


@njit(cache=True, inline="always", _nrt=False)
def _enter_unit(r, ui, cyc, trace, cfg, fcfg, tables, state, design_ints, design_floats, h_l1):
    """Instruction record ``r`` enters unit instance ``ui``: the LD/ST unit goes through the L1D (or the
    design's ``l1`` hook) and the memory below, other units are busy for the class's initiation
    interval; the result completes after the latency.  False when the event heap is full (the error is
    in ``stats[K_ERR]``)."""
    op, _, _, _, _, _, _, _, _, mem_ptr, mem_line = trace
    cls_lat = tables[T_CLS_LAT]
    cls_ii = tables[T_CLS_II]
    cls_unit = tables[T_CLS_UNIT]
    cls_mem = tables[T_CLS_MEM]
    scalars = state[S_G]
    stats = state[S_K]
    u_free = state[S_U_FREE]
    row = state[S_R_ROW][r]
    opc = op[row]
    if cls_unit[opc] == U_MEM and _l1_steps(row, opc, trace, cfg, tables):
        _l1_begin(r, row, opc, cyc, trace, cfg, tables, state)  # completes from the L1D's queues
        return True
    if cls_unit[opc] == U_MEM:
        done_t, free_t = lsu_access(
            r,
            row,
            opc,
            cyc,
            mem_ptr,
            mem_line,
            cfg,
            fcfg,
            cls_lat,
            cls_ii,
            cls_mem,
            tables[T_SECTORS],
            tables[T_REQ_FLITS],
            tables[T_REP_FLITS],
            tables[T_ACK_FLITS],
            tables[T_ATOM],
            tables[T_SEC_NEED],
            scalars,
            stats,
            state[S_R_EXTRA],
            state[S_L1_TAG],
            state[S_L1_LRU],
            state[S_L1_READY],
            state[S_L1_SMASK],
            state[S_L1_MERGE],
            state[S_L1Q],
            state[S_MSHR_FILL],
            state[S_L2_TAG],
            state[S_L2_LRU],
            state[S_L2_SMASK],
            state[S_DRAM],
            h_l1,
            design_ints,
            design_floats,
            state[S_R_WARP][r],
        )
        passes = tables[T_SMEM_PASSES][row]
        if passes > 1:  # shared memory's bank conflicts: a pass a cycle, the data after the last
            done_t += passes - 1
            free_t = max(free_t, cyc + passes)
        u_free[ui] = free_t
    else:
        done_t = cyc + cls_lat[opc]
        u_free[ui] = cyc + cls_ii[opc]
    return _schedule(
        scalars,
        stats,
        state[S_H_T],
        state[S_H_V],
        cfg[C_HEAP_CAP],
        max(done_t, cyc + 1),
        EV_COMPLETE * EV_MUL + r,
    )


@njit(cache=True, inline="always", _nrt=False)
def _execute(cyc, trace, cfg, fcfg, tables, state, design_ints, design_floats, h_l1, n_ocex):
    """Execute (rfmodel's pipeline): an instruction waiting in a unit's dispatch buffer enters the unit
    once it is free; the SM's one LD/ST unit takes the oldest buffered memory instruction.  Returns
    (moved, buffered instructions left); on an error ``stats[K_ERR]`` is set."""
    S = cfg[C_SCHEDS]
    exec_order = tables[T_EXEC_ORDER]
    r_seq = state[S_R_SEQ]
    u_free = state[S_U_FREE]
    ocex = state[S_OCEX]
    act = False
    for ei in range(exec_order.shape[0]):
        u = exec_order[ei]
        for s in range(S):
            if u == U_MEM:
                if s > 0:
                    break  # one LD/ST unit per SM: the oldest buffered instruction goes first
                ui = U_MEM * S
                slot = -1
                if u_free[ui] <= cyc:
                    for s2 in range(S):
                        r = ocex[U_MEM * S + s2]
                        if r >= 0 and (slot < 0 or r_seq[r] < r_seq[ocex[slot]]):
                            slot = U_MEM * S + s2
            else:
                ui = u * S + s
                slot = ui if ocex[ui] >= 0 and u_free[ui] <= cyc else -1
            if slot < 0:
                continue
            r = ocex[slot]
            ocex[slot] = -1
            n_ocex -= 1
            act = True
            if not _enter_unit(r, ui, cyc, trace, cfg, fcfg, tables, state, design_ints, design_floats, h_l1):
                return act, n_ocex
    return act, n_ocex


@njit(cache=True, inline="always", _nrt=False)
def _execute_compat(cyc, trace, cfg, fcfg, tables, state, design_ints, design_floats, h_l1, n_ocex):
    """Execute (GPGPU-Sim mode): the OC_EX registers issue into their units in GPGPU-Sim's order; a unit
    other than LD/ST also needs its completion slot free (the pipeline's "occupied" bits) and a result
    bus in the cycle its result completes.  Returns (moved, OC_EX registers still full); on an error
    ``stats[K_ERR]`` is set."""
    op = trace[0]
    S = cfg[C_SCHEDS]
    wb_width = cfg[C_WB_WIDTH]
    heap_cap = cfg[C_HEAP_CAP]
    rb_size = cfg[C_RB_SIZE]  # a power of two
    rb_mask = rb_size - 1
    cls_lat = tables[T_CLS_LAT]
    cls_ii = tables[T_CLS_II]
    exec_order = tables[T_EXEC_ORDER]
    scalars = state[S_G]
    r_row = state[S_R_ROW]
    r_seq = state[S_R_SEQ]
    u_free = state[S_U_FREE]
    u_occ = state[S_U_OCC]
    u_occ_base = state[S_U_OCC_BASE]
    ocex = state[S_OCEX]
    rb = state[S_RB]
    h_t = state[S_H_T]
    h_v = state[S_H_V]
    stats = state[S_K]
    act = False
    # result-bus ring: forget reservations of past cycles
    t0 = scalars[G_RB_CYCLE]
    if cyc - t0 >= rb_size:
        for i in range(rb_size):
            rb[i] = 0
    else:
        for t in range(t0, cyc):
            rb[t & rb_mask] = 0
    scalars[G_RB_CYCLE] = cyc
    for ei in range(exec_order.shape[0] if n_ocex > 0 else 0):
        u = exec_order[ei]
        if u == U_MEM:
            ui = U_MEM * S
            if u_free[ui] > cyc:
                continue
            best = -1
            for s in range(S):
                r = ocex[U_MEM * S + s]
                if r >= 0 and (best < 0 or r_seq[r] < r_seq[ocex[U_MEM * S + best]]):
                    best = s
            if best < 0:
                continue
            r = ocex[U_MEM * S + best]
            row = r_row[r]
            if (
                smem_pipelined(tables[T_CLS_MEM][op[row]], tables[T_ATOM][row])
                and scalars[G_SMEM_N] >= max(cfg[C_SMEM_LAT], 1) + 1
            ):
                # GPGPU-Sim: a shared-memory load enters the last of the pipeline's smem_latency stages,
                # which shift only into empty ones; the first empties into the port's write-back slot,
                # written the cycle after (ldst_unit::writeback): smem_latency + 1 loads at most between
                # the unit and their write-back; while it cannot enter, it holds the unit (ldst_unit::cycle)
                stats[K_SMEM_FULL] += 1
                continue
            ocex[U_MEM * S + best] = -1
            n_ocex -= 1
            act = True
            if not _enter_unit(r, ui, cyc, trace, cfg, fcfg, tables, state, design_ints, design_floats, h_l1):
                return act, n_ocex
            continue
        for s in range(S):
            ui = u * S + s
            r = ocex[ui]
            if r < 0 or u_free[ui] > cyc:
                continue
            opc = op[r_row[r]]
            lat = cls_lat[opc]
            # completion-slot collision (GPGPU-Sim's "occupied" bit set)
            sh = cyc - u_occ_base[ui]
            mask = u_occ[ui] >> sh if sh < 63 else 0
            if lat < 63 and (mask >> lat) & 1:
                u_occ[ui] = mask
                u_occ_base[ui] = cyc
                continue
            if lat < rb_size and rb[(cyc + lat) & rb_mask] >= wb_width:
                continue
            if lat < rb_size:
                rb[(cyc + lat) & rb_mask] += 1
            if lat < 63:
                mask |= np.int64(1) << lat
            u_occ[ui] = mask
            u_occ_base[ui] = cyc
            u_free[ui] = cyc + cls_ii[opc]
            ocex[ui] = -1
            n_ocex -= 1
            act = True
            if not _schedule(scalars, stats, h_t, h_v, heap_cap, cyc + lat + 2, EV_COMPLETE * EV_MUL + r):
                return act, n_ocex
    return act, n_ocex


@njit(cache=True, inline="always", _nrt=False)
def _dispatch(cyc, trace, cfg, fcfg, tables, state, design_ints, design_floats, h_l1, stamp, n_busy, n_ocex):
    """Dispatch: collectors whose operands all arrived before ``stamp`` hand their instruction on, oldest
    first (GPGPU-Sim mode with sub-cores: lowest-numbered collector first), to its unit if that is free
    (rfmodel's pipeline) or else to the unit's dispatch buffer (GPGPU-Sim mode: always to the OC_EX
    register), and free themselves.  Returns (moved, busy collectors, buffered
    instructions); on an error ``stats[K_ERR]`` is set."""
    S = cfg[C_SCHEDS]
    NC = cfg[C_COLLECTORS]
    compat = cfg[C_COMPAT] != 0
    mem_lo = U_MEM * S
    k_group = tables[T_K_GROUP]
    k_set = tables[T_K_SET]
    r_coll = state[S_R_COLL]
    r_pending = state[S_R_PENDING]
    r_unit = state[S_R_UNIT]
    r_seq = state[S_R_SEQ]
    k_rec = state[S_K_REC]
    k_ready = state[S_K_READY]
    g_free = state[S_G_FREE]
    u_free = state[S_U_FREE]
    ocex = state[S_OCEX]
    cand = state[S_K_CAND]
    act = False
    # the collectors whose operands all arrived before this step, in one pass: dispatching one changes no
    # other's readiness (only which dispatch registers are taken), so each round below picks among them
    n_cand = 0
    for k in range(NC):
        r = k_rec[k]
        if r < 0 or r_pending[r] != 0 or k_ready[k] < 0 or k_ready[k] >= stamp:
            continue
        cand[n_cand] = k
        n_cand += 1
    # GPGPU-Sim mode with sub-cores: a dispatch unit scans the collectors from the first of the sub-core after
    # the one it served last (``dispatch_unit_t::find_ready``), so of a sub-core's collectors whose
    # instructions wait for the same dispatch register the lowest-numbered one goes (the candidates are in
    # collector order); otherwise the oldest instruction
    lowest = compat and cfg[C_SUBCORE] != 0
    while n_cand > 0:
        best = -1
        bj = -1
        for j in range(n_cand):
            k = cand[j]
            if k < 0:
                continue
            r = k_rec[k]
            if best >= 0 and r_seq[r] >= r_seq[k_rec[best]]:
                continue
            if ocex[r_unit[r]] >= 0:
                continue
            best = k
            bj = j
            if lowest:
                break
        if best < 0:
            break
        cand[bj] = -1
        k = best
        r = k_rec[k]
        ui = r_unit[r]
        if mem_lo <= ui < mem_lo + S:  # the memory pipeline is one unit behind its dispatch registers
            ui = mem_lo
        if compat or u_free[ui] > cyc:
            # GPGPU-Sim's OC_EX register / our unit's dispatch buffer
            ocex[r_unit[r]] = r
            n_ocex += 1
        elif not _enter_unit(r, ui, cyc, trace, cfg, fcfg, tables, state, design_ints, design_floats, h_l1):
            return act, n_busy, n_ocex
        k_rec[k] = -1
        r_coll[r] = -1
        g_free[k_group[k] * N_CSET + k_set[k]] += 1
        n_busy -= 1
        act = True
    stats = state[S_K]
    for j in range(n_cand):  # the candidates left wait for their unit's dispatch register
        if cand[j] >= 0:
            stats[K_COLL_WAIT] += 1
            ui = r_unit[k_rec[cand[j]]]
            if mem_lo <= ui < mem_lo + S:
                stats[K_COLL_WAIT_MEM] += 1
    return act, n_busy, n_ocex


@njit(cache=True, inline="always", _nrt=False)
def _arbitrate(cyc, cfg, tables, state, stamp, ph, n_blist, design_ints):
    """Bank arbitration, step ``ph`` of the cycle: each bank with queued reads grants them in order within
    its read ports (GPGPU-Sim mode: one access a step, none in step 0 after a write; slow banks: one at a
    time, when free), at most ``coll_ports`` a cycle to one collector; a read that completes its operand
    delivers it at ``stamp`` (slow banks: ``bank_read_cycles - 1`` later).  The design's bank claims
    (``SimSetup.bank_claims``) for this cycle take read ports first (GPGPU-Sim mode: steps; slow banks: the
    cycle); a read they hold back counts in ``claim_waits``.  Requests left waiting count as
    bank conflicts.  Returns (granted any, banks still queued); on an error ``stats[K_ERR]`` is set."""
    coll_ports = cfg[C_COLL_PORTS]
    rports = cfg[C_RPORTS]
    wports = cfg[C_WPORTS]
    rwports = cfg[C_RWPORTS]
    compat = cfg[C_COMPAT] != 0
    steps = cfg[C_STEPS]
    port_limit = steps if compat else rports + wports + rwports
    bq_cap = cfg[C_BQ_CAP]  # a power of two
    bq_mask = bq_cap - 1
    heap_cap = cfg[C_HEAP_CAP]
    check = cfg[C_CHECK] != 0
    rcyc = cfg[C_BANK_RCYC]
    wcyc = cfg[C_BANK_WCYC]
    slow = rcyc > 1 or wcyc > 1
    b_busy = state[S_B_BUSY]
    b_wbusy = state[S_B_WBUSY]
    scalars = state[S_G]
    r_pending = state[S_R_PENDING]
    k_rec = state[S_K_REC]
    k_ready = state[S_K_READY]
    k_gstamp = state[S_K_GSTAMP]
    k_gcount = state[S_K_GCOUNT]
    k_conf = state[S_K_CONF]
    bq_k = state[S_BQ_K]
    bq_rem = state[S_BQ_REM]
    bq_wait = state[S_BQ_WAIT]
    bq_ready = state[S_BQ_READY]
    b_head = state[S_B_HEAD]
    b_n = state[S_B_N]
    b_stamp = state[S_B_STAMP]
    b_w = state[S_B_W]
    b_rwused = state[S_B_RWUSED]
    b_r = state[S_B_R]
    b_list = state[S_B_NONEMPTY]
    b_in_list = state[S_B_IN_LIST]
    h_t = state[S_H_T]
    h_v = state[S_H_V]
    stats = state[S_K]
    b_max = state[S_B_MAX]
    claims = cfg[C_CLAIMS]
    act = False
    j = 0
    while j < n_blist:
        b = b_list[j]
        if b_stamp[b] != cyc:
            b_stamp[b] = cyc
            b_w[b] = 0
            b_rwused[b] = 0
            b_r[b] = 0
        if slow:
            cap = 1 if b_busy[b] <= cyc else 0
        elif compat:
            cap = 1
            if ph == 0 and b_w[b] > 0:
                cap = 0
        else:
            cap = rports + rwports - b_rwused[b] - b_r[b]
        took = 0
        if claims >= 0 and cap > 0:
            cw = design_ints[claims + b * CLAIM_RING + (cyc & (CLAIM_RING - 1))]
            if cw // CLAIM_MUL == cyc:
                n_claim = cw % CLAIM_MUL
                if slow:
                    took = cap if n_claim > 0 else 0
                elif compat:
                    took = cap if ph < n_claim else 0
                else:
                    took = min(cap, n_claim)
                cap -= took
        base = b * bq_cap
        while cap > 0 and b_n[b] > 0:
            pos = base + b_head[b]
            if bq_ready[pos] > cyc:
                break  # the design delays this read (and the bank's queue behind it)
            k = bq_k[pos]
            if coll_ports > 0:
                if k_gstamp[k] != cyc:
                    k_gstamp[k] = cyc
                    k_gcount[k] = 0
                if k_gcount[k] >= coll_ports:
                    break
                k_gcount[k] += 1
            cap -= 1
            b_r[b] += 1
            stats[K_BANK_READ_ACC] += 1
            act = True
            if slow:
                b_busy[b] = cyc + rcyc
            bq_rem[pos] -= 1
            if bq_rem[pos] == 0:
                b_head[b] = (b_head[b] + 1) & bq_mask
                b_n[b] -= 1
                r = k_rec[k]
                if rcyc > 1:  # the row arrives as a one-cycle access ending rcyc - 1 later would
                    due = cyc + rcyc - 1
                    if not _schedule(scalars, stats, h_t, h_v, heap_cap, due, EV_OPERAND * EV_MUL + k):
                        return act, n_blist
                else:
                    r_pending[r] -= 1
                    if r_pending[r] == 0:
                        k_ready[k] = stamp
        if took > 0 and cap == 0 and b_n[b] > 0:
            stats[K_CLAIM_WAITS] += min(took, b_n[b])
            act = True  # the read can go next cycle: no idle skip over it
        tot = b_r[b] + b_w[b]
        if tot > b_max[b]:
            b_max[b] = tot
        if tot > port_limit:
            stats[K_PORT_VIOLATIONS] += 1
            if check:
                stats[K_ERR] = ERR_PORTS
                stats[K_ERR_INFO] = b
                return act, n_blist
        if b_n[b] > 0:
            for e in range(b_n[b]):
                pos = base + ((b_head[b] + e) & bq_mask)
                k = bq_k[pos]
                if coll_ports > 0 and k_gstamp[k] == cyc and k_gcount[k] >= coll_ports:
                    continue  # the collector's own read ports are the limit, not the bank
                if bq_ready[pos] > cyc:
                    continue  # delayed by the design, not by the bank
                if bq_wait[pos] == 0:
                    bq_wait[pos] = 1
                    stats[K_BANK_CONFLICTS] += 1
                    if slow and b_wbusy[b] > cyc:
                        stats[K_READS_BEHIND_WRITE] += 1
                if k_conf[k] != cyc:
                    k_conf[k] = cyc
                    stats[K_BANK_STALL_CYCLES] += 1
            j += 1
        else:
            b_in_list[b] = 0
            n_blist -= 1
            b_list[j] = b_list[n_blist]
    return act, n_blist


@njit(cache=True, inline="always", _nrt=False)
def _refill_pool(cyc, s, trace, cfg, state, design_ints, design_floats, h_pool):
    """Two-level scheduling, scheduler ``s``: pool warps that wait on a long-latency operation or a
    barrier move to the pending FIFO, then pending warps that can make progress fill the pool up to its
    size, in FIFO order; the design's ``pool`` hook hears each move.  True when a warp moved."""
    src = trace[1]
    W = cfg[C_WARPS]
    S = cfg[C_SCHEDS]
    WS = (W + S - 1) // S
    pool_size = cfg[C_POOL]
    w_active = state[S_W_ACTIVE]
    w_pc = state[S_W_PC]
    w_end = state[S_W_END]
    w_exited = state[S_W_EXITED]
    w_bar = state[S_W_BAR]
    reg_long = state[S_REG_LONG]
    s_pool = state[S_S_POOL]
    s_pool_n = state[S_S_POOL_N]
    s_pend = state[S_S_PEND]
    s_pend_h = state[S_S_PEND_H]
    s_pend_n = state[S_S_PEND_N]
    stats = state[S_K]
    act = False
    # demote pool warps that wait on a long-latency operation or a barrier
    pn = s_pool_n[s]
    q = 0
    for i in range(pn):
        w = s_pool[s * WS + i]
        if w_active[w] == 0 or w_exited[w] != 0:
            continue
        if w_bar[w] != 0 or (w_pc[w] < w_end[w] and reads_long(w, w_pc[w], src, reg_long)):
            s_pend[s * WS + (s_pend_h[s] + s_pend_n[s]) % WS] = w
            s_pend_n[s] += 1
            act = True
            stats[K_HOOK_CALLS] += 1
            h_pool(design_ints, design_floats, w, 0, s, 0, cyc)
        else:
            s_pool[s * WS + q] = w
            q += 1
    s_pool_n[s] = q
    # promote pending warps that can make progress, in FIFO order
    m = s_pend_n[s]
    for _i in range(m):
        if s_pool_n[s] >= pool_size:
            break
        w = s_pend[s * WS + s_pend_h[s]]
        s_pend_h[s] = (s_pend_h[s] + 1) % WS
        s_pend_n[s] -= 1
        if w_active[w] == 0 or w_exited[w] != 0:
            continue
        if w_bar[w] != 0 or (w_pc[w] < w_end[w] and reads_long(w, w_pc[w], src, reg_long)):
            s_pend[s * WS + (s_pend_h[s] + s_pend_n[s]) % WS] = w
            s_pend_n[s] += 1
            continue
        s_pool[s * WS + s_pool_n[s]] = w
        s_pool_n[s] += 1
        act = True
        stats[K_HOOK_CALLS] += 1
        h_pool(design_ints, design_floats, w, 1, s, 0, cyc)
    return act


@njit(cache=True, inline="always", _nrt=False)
def _issue_row(cyc, w, row, s, trace, cfg, tables, state, ust, design_ints, design_floats, h_issued):
    """Scheduler ``s`` issues row ``row`` of warp ``w``: a free instruction record, the scoreboard marks
    its destinations pending, the instruction waits in its unit type's issue buffer for a collector; a
    warp past its last row has exited, one at a barrier waits (the barrier lifts when all of its CTA's
    unexited warps are there).  The caller checked that all of this can happen."""
    op, src, dst, _, pdst, _, udst, rzs, rzd, _, _ = trace
    S = cfg[C_SCHEDS]
    compat = cfg[C_COMPAT] != 0
    wpc = cfg[C_WPC]
    cls_unit = tables[T_CLS_UNIT]
    cls_mem = tables[T_CLS_MEM]
    scalars = state[S_G]
    w_pc = state[S_W_PC]
    w_end = state[S_W_END]
    w_cta = state[S_W_CTA]
    w_inflight = state[S_W_INFLIGHT]
    w_exited = state[S_W_EXITED]
    w_bar = state[S_W_BAR]
    w_ibuf = state[S_W_IBUF]
    w_ppend = state[S_W_PPEND]
    reg_pend = state[S_REG_PEND]
    reg_long = state[S_REG_LONG]
    c_unexited = state[S_C_UNEXITED]
    c_bar = state[S_C_BAR]
    r_warp = state[S_R_WARP]
    r_row = state[S_R_ROW]
    r_coll = state[S_R_COLL]
    r_pending = state[S_R_PENDING]
    r_dk = state[S_R_DK]
    r_wrem = state[S_R_WREM]
    r_unit = state[S_R_UNIT]
    r_seq = state[S_R_SEQ]
    r_extra = state[S_R_EXTRA]
    r_free = state[S_R_FREE]
    idoc = state[S_IDOC]
    stats = state[S_K]
    opc = op[row]
    u = cls_unit[opc]
    scalars[G_RTOP] -= 1
    r = r_free[scalars[G_RTOP]]
    r_warp[r] = w
    r_row[r] = row
    r_dk[r] = 0
    r_wrem[r] = 0
    r_extra[r] = 0
    r_seq[r] = scalars[G_SEQ]
    scalars[G_SEQ] += 1
    slot = tables[T_U_SLOT][u * S + s]  # the dispatch slot (and unit) of this type the scheduler uses
    r_unit[r] = slot
    r_pending[r] = 0
    r_coll[r] = -1
    kind = cls_mem[opc]
    base = w * 256
    nd = 0
    for j in range(dst.shape[1]):
        d = dst[row, j]
        if d != NONE_REG:
            nd += 1
            reg_pend[base + d] += 1
            if kind == MK_LOAD or kind == MK_ATOM:
                reg_long[base + d] += 1
    w_ppend[w] |= np.int64(pdst[row])
    ust[w] |= udst[row]
    stats[K_DSTS] += nd + rzd[row]
    idoc[slot] = r
    ns = 0
    for j in range(src.shape[1]):
        if src[row, j] != NONE_REG:
            ns += 1
    stats[K_SRCS] += ns + rzs[row]
    if compat:
        w_ibuf[w] -= 1
        if tables[T_ATOM][row] != 0:
            # GPGPU-Sim: a warp issues nothing while an atomic of its own is in flight
            w_bar[w] |= WAIT_ATOMIC
    stats[K_HOOK_CALLS] += 1
    if (cfg[C_HOOKS_STD] & HOOK_STD_ISSUED) == 0:
        h_issued(design_ints, design_floats, w, row, s, r, cyc)
    stats[K_ISSUED] += 1
    w_inflight[w] += 1
    w_pc[w] = row + 1
    cs = w_cta[w]
    if w_pc[w] >= w_end[w]:
        w_pc[w] = w_end[w]
        w_exited[w] = 1
        c_unexited[cs] -= 1
        if c_bar[cs] > 0 and c_bar[cs] >= c_unexited[cs]:
            for i in range(wpc):
                w_bar[cs * wpc + i] &= WAIT_ATOMIC
            c_bar[cs] = 0
    elif opc == OP_BAR:
        w_bar[w] |= WAIT_BARRIER
        c_bar[cs] += 1
        if c_bar[cs] >= c_unexited[cs]:
            for i in range(wpc):
                w_bar[cs * wpc + i] &= WAIT_ATOMIC
            c_bar[cs] = 0


@njit(cache=True, inline="always", _nrt=False)
def _issue(
    cyc,
    trace,
    cfg,
    tables,
    state,
    ust,
    design_ints,
    design_floats,
    h_may_issue,
    h_issued,
    h_pool,
    h_prefer,
    n_idoc,
):
    """Issue: each scheduler (GPGPU-Sim mode: starting from a different one every cycle) walks its warps
    in the policy's priority order (with a ``prefer`` hook, the warps it marks first) and issues up to
    ``issue_width`` rows of the first warp that can go: decoded (GPGPU-Sim mode), scoreboard clear, the
    design's ``may_issue`` hook agrees, a free record and an empty issue buffer for the unit type.  A
    scheduler that issues nothing records why (``s_reason``, counted in the stall statistics).  Returns
    (issued any, instructions in issue buffers)."""
    op, src, dst, psrc, pdst, usrc, udst, _, _, _, _ = trace
    W = cfg[C_WARPS]
    S = cfg[C_SCHEDS]
    WS = (W + S - 1) // S
    subcore = cfg[C_SUBCORE] != 0
    issue_width = cfg[C_ISSUE_WIDTH]
    diff_units = cfg[C_DIFF_UNITS] != 0
    policy = cfg[C_POLICY]
    NC = cfg[C_COLLECTORS]
    compat = cfg[C_COMPAT] != 0
    n_pass = 2 if cfg[C_PREFER] != 0 else 1
    std_may_issue = (cfg[C_HOOKS_STD] & HOOK_STD_MAY_ISSUE) != 0
    cls_unit = tables[T_CLS_UNIT]
    u_slot = tables[T_U_SLOT]
    k_group = tables[T_K_GROUP]
    scalars = state[S_G]
    w_active = state[S_W_ACTIVE]
    w_pc = state[S_W_PC]
    w_end = state[S_W_END]
    w_exited = state[S_W_EXITED]
    w_bar = state[S_W_BAR]
    w_sb = state[S_W_SB]
    w_ibuf = state[S_W_IBUF]
    w_ibuf_at = state[S_W_IBUF_AT]
    w_ppend = state[S_W_PPEND]
    reg_pend = state[S_REG_PEND]
    reg_long = state[S_REG_LONG]
    s_last = state[S_S_LAST]
    s_age = state[S_S_AGE]
    s_age_n = state[S_S_AGE_N]
    s_pool = state[S_S_POOL]
    s_pool_n = state[S_S_POOL_N]
    s_reason = state[S_S_REASON]
    r_row = state[S_R_ROW]
    r_pending = state[S_R_PENDING]
    k_rec = state[S_K_REC]
    k_conf = state[S_K_CONF]
    idoc = state[S_IDOC]
    stats = state[S_K]
    act = False
    stats[K_ISSUE_SLOTS] += S
    for si in range(S):
        # compat: GPGPU-Sim rotates which scheduler issues first every cycle
        s = (si + cyc) % S if compat else si
        if policy == POL_TWO_LEVEL and _refill_pool(
            cyc, s, trace, cfg, state, design_ints, design_floats, h_pool
        ):
            act = True
        # candidate count in priority order
        if policy == POL_LRR:
            n_cand = (W - s + S - 1) // S
        elif policy == POL_TWO_LEVEL:
            n_cand = s_pool_n[s]
        else:
            n_cand = s_age_n[s] + 1
        issued = 0
        reason_struct = -1
        reason_first = -1
        lrr = s_last[s]
        # with a ``prefer`` hook: a first pass over the warps it marks, then one over the rest
        for ci in range(n_cand * n_pass):
            cj = ci % n_cand
            if policy == POL_LRR:
                lrr += 1
                if lrr >= n_cand:
                    lrr = 0
                w = s + lrr * S
            elif policy == POL_TWO_LEVEL:
                w = s_pool[s * WS + cj]
            elif cj == 0:
                if policy != POL_GTO or s_last[s] < 0:
                    continue
                w = s_last[s]
            else:
                w = s_age[s * WS + cj - 1]
                if policy == POL_GTO and w == s_last[s]:
                    continue
            if w_active[w] == 0 or w_exited[w] != 0 or w_bar[w] != 0:
                continue
            if compat and (w_ibuf[w] == 0 or w_ibuf_at[w] > cyc):
                continue
            if n_pass == 2:
                stats[K_HOOK_CALLS] += 1
                pref = h_prefer(design_ints, design_floats, w, w_pc[w], s, 0, cyc)
                if (ci < n_cand) != (pref != 0):
                    continue
            if w_sb[w] > 0:
                if reason_first < 0:
                    reason_first = SR_MEMORY if w_sb[w] == 2 else SR_RAW
                continue
            prev_unit = -1
            while issued < issue_width:
                row = w_pc[w]
                if row >= w_end[w] or w_bar[w] != 0 or w_exited[w] != 0:
                    break
                if compat and (w_ibuf[w] == 0 or w_ibuf_at[w] > cyc):
                    break
                if w_sb[w] != -1 - row:
                    code = sb_check(
                        w, row, src, dst, psrc, pdst, usrc, udst, reg_pend, reg_long, w_ppend, ust
                    )
                    if code != 0:
                        if issued == 0:
                            w_sb[w] = code
                            if reason_first < 0:
                                reason_first = SR_MEMORY if code == 2 else SR_RAW
                        break
                    # only the warp's own issue sets its scoreboard: clear now, clear until it issues
                    w_sb[w] = -1 - row
                stats[K_HOOK_CALLS] += 1
                code = 0 if std_may_issue else h_may_issue(design_ints, design_floats, w, row, s, issued, cyc)
                if code != 0:
                    if issued == 0 and reason_first < 0:
                        reason_first = N_CORE_REASONS + code - 1
                    break
                opc = op[row]
                u = cls_unit[opc]
                if issued > 0 and diff_units and u == prev_unit:
                    break
                if scalars[G_RTOP] == 0:
                    if issued == 0 and reason_struct < 0:
                        reason_struct = SR_EXEC
                    break
                grp = s if subcore else 0
                if idoc[u_slot[u * S + s]] >= 0:
                    if issued == 0 and reason_struct < 0:
                        # the buffered instruction of this type waits for a collector unit
                        reason_struct = SR_NO_COLLECTOR
                        for q in range(NC):
                            if k_group[q] != grp or k_rec[q] < 0:
                                continue
                            if k_conf[q] == cyc:
                                reason_struct = SR_BANK
                                break
                            rq = k_rec[q]
                            if r_pending[rq] == 0 and reason_struct == SR_NO_COLLECTOR:
                                mem_wait = cls_unit[op[r_row[rq]]] == U_MEM
                                reason_struct = SR_MEMORY if mem_wait else SR_EXEC
                    break
                _issue_row(
                    cyc, w, row, s, trace, cfg, tables, state, ust, design_ints, design_floats, h_issued
                )
                act = True
                n_idoc += 1
                issued += 1
                prev_unit = u
            if issued > 0:
                if policy == POL_LRR:
                    s_last[s] = lrr
                elif policy == POL_TWO_LEVEL:
                    # the issuing warp moves to the back of the pool (round-robin inside the pool)
                    pn = s_pool_n[s]
                    i = 0
                    while i < pn and s_pool[s * WS + i] != w:
                        i += 1
                    while i < pn - 1:
                        s_pool[s * WS + i] = s_pool[s * WS + i + 1]
                        i += 1
                    s_pool[s * WS + pn - 1] = w
                else:
                    s_last[s] = w
                break
        if issued == 0:
            reason = SR_NO_READY
            if reason_struct >= 0:
                reason = reason_struct
            elif reason_first >= 0:
                reason = reason_first
            s_reason[s] = reason
            stats[K_STALL0 + reason] += 1
        else:
            s_reason[s] = -1
            stats[K_ISSUE_CYCLES] += 1
    return act, n_idoc


@njit(cache=True, inline="always", _nrt=False)
def _request_operands(cyc, r, kk, trace, cfg, state, design_ints, design_floats, h_operand, n_blist):
    """Collector ``kk`` took record ``r``: each source operand (and each of GPGPU-Sim's RZ reads) goes
    where the design's ``operand`` hook says, a request in its bank's queue (``rows`` accesses) or an
    arrival from outside the banks ``-b - 1`` cycles after the next.  Returns (ok, banks with queued
    requests); on an error (``ok`` False) ``stats[K_ERR]`` is set."""
    _, src, _, _, _, _, _, rzs, _, _, _ = trace
    std_operand = (cfg[C_HOOKS_STD] & HOOK_STD_OPERAND) != 0
    NB = cfg[C_BANKS]
    rows = cfg[C_ROWS]
    bq_cap = cfg[C_BQ_CAP]  # a power of two
    bq_mask = bq_cap - 1
    heap_cap = cfg[C_HEAP_CAP]
    scalars = state[S_G]
    r_warp = state[S_R_WARP]
    r_row = state[S_R_ROW]
    r_pending = state[S_R_PENDING]
    bq_k = state[S_BQ_K]
    bq_rem = state[S_BQ_REM]
    bq_wait = state[S_BQ_WAIT]
    bq_ready = state[S_BQ_READY]
    b_head = state[S_B_HEAD]
    b_n = state[S_B_N]
    b_list = state[S_B_NONEMPTY]
    b_in_list = state[S_B_IN_LIST]
    h_t = state[S_H_T]
    h_v = state[S_H_V]
    stats = state[S_K]
    wbuf = cfg[C_WBUF] > 0 and (cfg[C_BANK_RCYC] > 1 or cfg[C_BANK_WCYC] > 1)
    wq_cnt = state[S_WQ_CNT]
    w = r_warp[r]
    row = r_row[r]
    r_pending[r] = 0
    nr = src.shape[1] + rzs[row]
    for jj in range(nr):
        if jj < src.shape[1]:
            reg = src[row, jj]
            if reg == NONE_REG:
                continue
        else:
            reg = NONE_REG
        stats[K_HOOK_CALLS] += 1
        if std_operand:
            b = standard_bank(design_ints, w, reg)
        else:
            b = h_operand(design_ints, design_floats, w, row, jj, reg, cyc)
        delay = 0
        if b >= OPERAND_DELAY:  # a bank read the design delays (its own port conflict)
            delay = b // OPERAND_DELAY
            b = b & OPERAND_BANK_MASK
        stats[K_READS] += 1
        r_pending[r] += 1
        if b >= 0 and wbuf and reg != NONE_REG and wq_cnt[w * 256 + reg] > 0:
            # the register's newest value waits in the write buffer: read from there, as fast as an
            # unconflicted bank read, no bank access
            stats[K_WBUF_HITS] += 1
            if not _schedule(scalars, stats, h_t, h_v, heap_cap, cyc + 1, EV_OPERAND * EV_MUL + kk):
                return False, n_blist
        elif b >= 0:
            if b >= NB:
                stats[K_ERR_INFO] = b
                stats[K_ERR] = ERR_HOOK
                return False, n_blist
            if b_n[b] >= bq_cap:
                stats[K_ERR_INFO] = bq_cap
                stats[K_ERR] = ERR_QUEUE
                return False, n_blist
            pos = b * bq_cap + ((b_head[b] + b_n[b]) & bq_mask)
            bq_k[pos] = kk
            bq_rem[pos] = rows
            bq_wait[pos] = 0
            bq_ready[pos] = cyc + 1 + delay if delay > 0 else 0
            b_n[b] += 1
            stats[K_READS_BANK] += 1
            if b_in_list[b] == 0:
                b_in_list[b] = 1
                b_list[n_blist] = b
                n_blist += 1
        else:
            stats[K_READS_EXT] += 1
            due = cyc + 1 + (-b - 1)
            if not _schedule(scalars, stats, h_t, h_v, heap_cap, due, EV_OPERAND * EV_MUL + kk):
                return False, n_blist
    return True, n_blist


@njit(cache=True, inline="always", _nrt=False)
def _allocate(
    cyc, trace, cfg, tables, state, design_ints, design_floats, h_operand, stamp, n_busy, n_idoc, n_blist
):
    """Collector allocation: instructions in the issue buffers take free collector units of their unit
    type's set (its fallback set next), oldest first, and request their operands (GPGPU-Sim mode: each
    unit type's input port offers its oldest instruction in turn, as GPGPU-Sim's ``allocate_cu``).  Returns
    (allocated any, busy collectors, buffered instructions, banks with queued requests); on an error
    ``stats[K_ERR]`` is set."""
    S = cfg[C_SCHEDS]
    subcore = cfg[C_SUBCORE] != 0
    compat = cfg[C_COMPAT] != 0
    unit_set1 = tables[T_UNIT_SET1]
    unit_set2 = tables[T_UNIT_SET2]
    k_set = tables[T_K_SET]
    gs_start = tables[T_GS_START]
    gs_list = tables[T_GS_LIST]
    alloc_order = tables[T_ALLOC_ORDER]
    r_coll = state[S_R_COLL]
    r_pending = state[S_R_PENDING]
    r_seq = state[S_R_SEQ]
    k_rec = state[S_K_REC]
    k_ready = state[S_K_READY]
    g_free = state[S_G_FREE]
    idoc = state[S_IDOC]
    act = False
    taken = 0
    n_types = alloc_order.shape[0]
    for _round in range(8 * S):
        moved = False
        for ai in range(n_types):
            best_u = -1
            best_s = -1
            best_k = -1
            if compat:
                # GPGPU-Sim's input ports: each type offers its oldest buffered instruction
                u = alloc_order[ai]
                for s in range(S):
                    r = idoc[u * S + s]
                    if r >= 0 and (best_s < 0 or r_seq[r] < r_seq[idoc[u * S + best_s]]):
                        best_s = s
                if best_s >= 0:
                    best_k = _free_collector(
                        u, best_s if subcore else 0, unit_set1, unit_set2, g_free, gs_start, gs_list, k_rec
                    )
                    best_u = u
            else:
                if ai > 0:
                    break
                for aj in range(n_types):
                    u = alloc_order[aj]
                    for s in range(S):
                        r = idoc[u * S + s]
                        if r < 0 or (best_u >= 0 and r_seq[r] >= r_seq[idoc[best_u * S + best_s]]):
                            continue
                        kk = _free_collector(
                            u, s if subcore else 0, unit_set1, unit_set2, g_free, gs_start, gs_list, k_rec
                        )
                        if kk >= 0:
                            best_u, best_s, best_k = u, s, kk
            if best_u < 0 or best_k < 0:
                continue
            u = best_u
            kk = best_k
            r = idoc[u * S + best_s]
            idoc[u * S + best_s] = -1
            grp = best_s if subcore else 0
            k_rec[kk] = r
            r_coll[r] = kk
            g_free[grp * N_CSET + k_set[kk]] -= 1
            k_ready[kk] = -1
            taken += 1
            ok, n_blist = _request_operands(
                cyc, r, kk, trace, cfg, state, design_ints, design_floats, h_operand, n_blist
            )
            if not ok:
                return act, n_busy, n_idoc, n_blist
            if r_pending[r] == 0:
                k_ready[kk] = stamp
            moved = True
        if not moved or taken == n_idoc:  # nothing moved, or no instruction is left in the buffers
            break

    if taken > 0:
        n_busy += taken
        n_idoc -= taken
        act = True
    return act, n_busy, n_idoc, n_blist


@njit(cache=True, inline="always", _nrt=False)
def _fetch(cyc, cfg, fcfg, tables, state):
    """Fetch (GPGPU-Sim mode): ``fetch`` slots a cycle; in each, one warp whose instruction buffer is empty
    gets its next ``ibuf`` rows, decoded the next cycle (the last slot's one cycle later).  Warps are taken
    round robin from the one after the last fetched.

    With an instruction cache (``il1_sets`` > 0) a slot first answers a warp whose missed line has arrived
    (the earliest); otherwise the next warp round robin that waits for no line looks up its PC's line: a
    hit fills its buffer; a miss (a new line, or one already on its way) makes the warp wait for the fill,
    a new line taking an MSHR and a way not waiting for a fill (none free: the slot fetches nothing).  A
    new line goes to the L2 the next cycle and returns as a data line would.  True when a warp was
    fetched or answered."""
    W = cfg[C_WARPS]
    fetch_n = cfg[C_FETCH]
    ibuf_n = cfg[C_IBUF]
    sets = cfg[C_IL1_SETS]
    scalars = state[S_G]
    w_active = state[S_W_ACTIVE]
    w_pc = state[S_W_PC]
    w_end = state[S_W_END]
    w_exited = state[S_W_EXITED]
    w_ibuf = state[S_W_IBUF]
    w_ibuf_at = state[S_W_IBUF_AT]
    w_imiss = state[S_W_IMISS]
    act = False
    for nf in range(fetch_n):
        # fetch and decode alternate: the last fetch of a cycle is decoded a cycle later
        at = cyc + 1 if nf < fetch_n - 1 else cyc + 2
        if sets > 0:  # a missed line that has arrived is answered first
            ready = -1
            for w in range(W):
                if 0 < w_imiss[w] <= cyc and (ready < 0 or w_imiss[w] < w_imiss[ready]):
                    ready = w
            if ready >= 0:
                w_imiss[ready] = 0
                w_ibuf[ready] = min(ibuf_n, w_end[ready] - w_pc[ready])
                w_ibuf_at[ready] = at
                act = True
                continue
        w = scalars[G_LAST_FETCH]
        for _i in range(W):
            w += 1
            if w >= W:
                w = 0
            if w_active[w] == 0 or w_exited[w] != 0 or w_ibuf[w] != 0 or w_pc[w] >= w_end[w]:
                continue
            if w_imiss[w] != 0:
                continue
            scalars[G_LAST_FETCH] = w
            if sets > 0 and not _il1_lookup(cyc, w, cfg, fcfg, tables, state):
                break
            w_ibuf[w] = min(ibuf_n, w_end[w] - w_pc[w])
            w_ibuf_at[w] = at
            act = True
            break
    return act


@njit(cache=True, inline="always", _nrt=False)
def _il1_lookup(cyc, w, cfg, fcfg, tables, state):
    """Warp ``w``'s fetch looks up the instruction-cache line of its PC: True on a hit; on a miss the warp
    waits for the line (``w_imiss``); on a reservation failure it tries again at a later fetch.  A line on
    its way is found in the MSHRs (``mshr[m]``: its fill cycle, ``mshr[M + m]``: the line, -1 when free).
    Allocated on miss (``il1_onmiss``), a missed line takes the least recently used way not itself waiting
    for a fill at once (none: the fetch fails); allocated on fill (GPGPU-Sim's ``f``), it takes the least
    recently used way when it arrives, the set keeping its lines until then."""
    stats = state[S_K]
    scalars = state[S_G]
    tag = state[S_IL1_TAG]
    lru = state[S_IL1_LRU]
    fill = state[S_IL1_FILL]
    mshr = state[S_IL1_MSHR]
    M = cfg[C_IL1_MSHR]
    A = cfg[C_IL1_ASSOC]
    onmiss = cfg[C_IL1_ONMISS] != 0
    # lines arrived by now leave their MSHRs; allocated on fill, they take their ways, earliest first
    while True:
        first = -1
        for m in range(M):
            if mshr[M + m] >= 0 and mshr[m] <= cyc and (first < 0 or mshr[m] < mshr[first]):
                first = m
        if first < 0:
            break
        ln = mshr[M + first]
        mshr[M + first] = -1
        if onmiss:
            continue
        b = (ln % cfg[C_IL1_SETS]) * A
        v = -1
        for i in range(b, b + A):
            if v < 0 or lru[i] < lru[v]:
                v = i
        scalars[G_LRU_CLOCK] += 1
        tag[v] = ln
        lru[v] = scalars[G_LRU_CLOCK]
        fill[v] = mshr[first]
    line = tables[T_PC_LINE][state[S_W_PC][w]]
    base = (line % cfg[C_IL1_SETS]) * A
    stats[K_IL1_ACC] += 1
    for i in range(base, base + A):
        if tag[i] == line and fill[i] <= cyc:  # present
            scalars[G_LRU_CLOCK] += 1
            lru[i] = scalars[G_LRU_CLOCK]
            return True
    slot = -1
    for m in range(M):
        if mshr[M + m] == line:  # on its way: wait for the same fill
            stats[K_IL1_MISS] += 1
            state[S_W_IMISS][w] = mshr[m]
            return False
        if mshr[M + m] < 0 and slot < 0:
            slot = m
    victim = -1
    if onmiss:
        for i in range(base, base + A):
            if fill[i] <= cyc and (victim < 0 or lru[i] < lru[victim]):
                victim = i
    if slot < 0 or (onmiss and victim < 0):
        stats[K_IL1_FAIL] += 1
        return False
    stats[K_IL1_MISS] += 1
    dep = noc_send(fcfg, scalars, stats, cyc + 1, 1)
    t = l2_path(
        cfg,
        fcfg,
        scalars,
        stats,
        state[S_L2_TAG],
        state[S_L2_LRU],
        state[S_L2_SMASK],
        state[S_DRAM],
        line,
        dep,
        cfg[C_LINE_FLITS],
        (1 << max((1 << cfg[C_LINE_SHIFT]) >> 5, 1)) - 1,
    )
    if onmiss:
        scalars[G_LRU_CLOCK] += 1
        tag[victim] = line
        lru[victim] = scalars[G_LRU_CLOCK]
        fill[victim] = t
    mshr[slot] = t
    mshr[M + slot] = line
    state[S_W_IMISS][w] = t
    return False


@njit(cache=True, inline="always", _nrt=False)
def _memory_requests(cyc, cfg, fcfg, state, design_ints):
    """The design's memory-request queue (``SimSetup.mem_queue``, at ``memq`` in its ints):
    ``design_ints[memq]`` entries in use, ``[memq + 1]`` capacity, then per entry (line, kind, done).  The
    pending ones (done == -1) leave now: stores write to L2, loads take an MSHR and fill from L2 or DRAM at
    the cycle written to ``done``.  True when a request left."""
    memq = cfg[C_MEMQ]
    scalars = state[S_G]
    stats = state[S_K]
    l2_tag = state[S_L2_TAG]
    l2_lru = state[S_L2_LRU]
    act = False
    for i in range(design_ints[memq]):
        e = memq + 2 + 3 * i
        if design_ints[e + 2] != -1:
            continue
        stats[K_MEM_REQUESTS] += 1
        act = True
        if design_ints[e + 1] == MQ_STORE:
            l2_write(
                cfg,
                fcfg,
                scalars,
                stats,
                l2_tag,
                l2_lru,
                state[S_L2_SMASK],
                state[S_DRAM],
                design_ints[e],
                cyc,
                cfg[C_LINE_FLITS],
                cfg[C_LINE_ACK_FLITS],
                (1 << max((1 << cfg[C_LINE_SHIFT]) >> 5, 1)) - 1,
            )
            design_ints[e + 2] = cyc
        else:
            fill_t, _t = mshr_request(
                cfg,
                fcfg,
                scalars,
                stats,
                state[S_MSHR_FILL],
                l2_tag,
                l2_lru,
                state[S_L2_SMASK],
                state[S_DRAM],
                design_ints[e],
                cyc,
                1,
                cfg[C_LINE_FLITS],
                (1 << max((1 << cfg[C_LINE_SHIFT]) >> 5, 1)) - 1,
            )
            design_ints[e + 2] = fill_t
    return act


@njit(cache=True, inline="always")
def _carried(cfg, state):
    """What the stages carry from one to the next, taken from the state: banks with queued reads (their list,
    rebuilt in ``state[S_B_NONEMPTY]``), busy collectors, occupied issue and dispatch buffers (a stage that
    scans an empty one is skipped).  Returns their counts ``(banks, collectors, issue, dispatch)``."""
    b_list = state[S_B_NONEMPTY]
    b_in_list = state[S_B_IN_LIST]
    n_blist = 0
    for b in range(cfg[C_BANKS]):
        if b_in_list[b] != 0:
            b_list[n_blist] = b
            n_blist += 1
    k_rec = state[S_K_REC]
    n_busy = 0
    for k in range(cfg[C_COLLECTORS]):
        if k_rec[k] >= 0:
            n_busy += 1
    idoc = state[S_IDOC]
    ocex = state[S_OCEX]
    n_idoc = 0
    n_ocex = 0
    for i in range(idoc.shape[0]):
        if idoc[i] >= 0:
            n_idoc += 1
        if ocex[i] >= 0:
            n_ocex += 1
    return n_blist, n_busy, n_idoc, n_ocex


@njit(cache=True, inline="always", _nrt=False)
def _idle_skip(cyc, cfg, state, stop, n_busy, design_ints):
    """Nothing moved this cycle: the next cycle at which something can (an event, a unit or bank that
    frees, the design's upkeep, a load of the design's memory-request queue that completes, GPGPU-Sim's
    decode), at most ``stop``; the cycles in between count as this
    one did (busy collectors, issue slots, stall reasons, bank waits).  Returns the last skipped cycle
    (``cyc`` when none); a deadlock sets ``stats[K_ERR]``."""
    W = cfg[C_WARPS]
    S = cfg[C_SCHEDS]
    NC = cfg[C_COLLECTORS]
    NB = cfg[C_BANKS]
    compat = cfg[C_COMPAT] != 0
    slow = cfg[C_BANK_RCYC] > 1 or cfg[C_BANK_WCYC] > 1
    b_busy = state[S_B_BUSY]
    scalars = state[S_G]
    w_active = state[S_W_ACTIVE]
    w_ibuf_at = state[S_W_IBUF_AT]
    s_reason = state[S_S_REASON]
    r_wrem = state[S_R_WREM]
    k_conf = state[S_K_CONF]
    u_free = state[S_U_FREE]
    ocex = state[S_OCEX]
    h_t = state[S_H_T]
    wb = state[S_WB]
    stats = state[S_K]
    nxt = scalars[G_UPKEEP_NEXT]
    if scalars[G_HEAP_N] > 0 and h_t[0] < nxt:
        nxt = h_t[0]
    for ui in range(u_free.shape[0]):
        if cyc < u_free[ui] < nxt:
            nxt = u_free[ui]
    memq = cfg[C_MEMQ]
    if memq >= 0:  # a design request still in its queue that completes later (its hooks may wait for it)
        for i in range(design_ints[memq]):
            done = design_ints[memq + 2 + 3 * i + 2]
            if cyc < done < nxt:
                nxt = done
    if slow:  # a bank that frees lets a waiting read or write go
        for b in range(NB):
            if cyc < b_busy[b] < nxt:
                nxt = b_busy[b]
    if compat:
        w_imiss = state[S_W_IMISS]
        for w in range(W):
            if w_active[w] != 0 and cyc < w_ibuf_at[w] < nxt:
                nxt = w_ibuf_at[w]
            if cyc < w_imiss[w] < nxt:  # a missed instruction line arrives
                nxt = w_imiss[w]
        for i in range(ocex.shape[0]):
            if ocex[i] >= 0:
                nxt = cyc + 1  # waits on a result bus or completion slot, which time frees
        if cfg[C_L1_STEP] != 0 and (scalars[G_L1_N] > 0 or scalars[G_LSU_R] >= 0):
            nxt = cyc + 1  # accesses in the L1D's queues, or still to enter them, move cycle by cycle
    if nxt >= NEVER:
        stats[K_ERR] = ERR_DEADLOCK
        stats[K_ERR_INFO] = cyc
        return cyc
    if nxt > stop:
        nxt = stop
    skip = nxt - cyc - 1
    if skip <= 0:
        return cyc
    stats[K_SKIPPED] += skip
    stats[K_COLL_BUSY] += n_busy * skip
    # the collectors whose instructions wait for a dispatch register go on waiting (none can go before a
    # unit frees, the next cycle at the earliest)
    k_rec = state[S_K_REC]
    k_ready = state[S_K_READY]
    r_pending = state[S_R_PENDING]
    r_unit = state[S_R_UNIT]
    for k in range(NC):
        r = k_rec[k]
        if r >= 0 and r_pending[r] == 0 and k_ready[k] >= 0:
            stats[K_COLL_WAIT] += skip
            if U_MEM * S <= r_unit[r] < U_MEM * S + S:
                stats[K_COLL_WAIT_MEM] += skip
    stats[K_ISSUE_SLOTS] += S * skip
    for s in range(S):
        if s_reason[s] >= 0:
            stats[K_STALL0 + s_reason[s]] += skip
    if slow:  # the collectors and results that wait for a busy bank go on waiting
        for k in range(NC):
            if k_conf[k] == cyc:
                stats[K_BANK_STALL_CYCLES] += skip
        wq_n = state[S_WQ_N]
        for i in range(scalars[G_WB_N]):
            if r_wrem[wb[i]] != 0:
                stats[K_WRITE_WAIT_CYCLES] += skip
                # a result that waits for a full write buffer (its drain needs a bank that frees)
                if cfg[C_WBUF] > 0 and r_wrem[wb[i]] >> 10 == cfg[C_ROWS]:
                    if _wbuf_full(cfg, scalars, wq_n, r_wrem[wb[i]] & 1023):
                        stats[K_WBUF_FULL_WAITS] += skip
        if cfg[C_WBUF] > 0:
            state[S_WQ_HIST][scalars[G_WBUF_N]] += skip
    return nxt - 1


# =========================================================================== the cycle loop
def _run(
    op,
    src,
    dst,
    psrc,
    pdst,
    usrc,
    udst,
    rzs,
    rzd,
    mem_ptr,
    mem_line,
    cfg,
    fcfg,
    tables,
    state,
    ust,
    design_ints,
    design_floats,
    h_operand,
    h_write,
    h_may_issue,
    h_issued,
    h_activate,
    h_deactivate,
    h_upkeep,
    h_pool,
    h_prefer,
    h_l1,
    stop,
):
    """Advance the SM until all CTAs finished (returns 0), ``stop`` is reached (1) or an error (2).

    A cycle runs the stages above in order (docs/simulator.md, "The pipeline"); a stage that fails leaves
    the error in ``stats[K_ERR]`` and the loop stops at that cycle.  The stages are inlined into this one
    compiled function, which runs without reference counting (``_nrt=False``): nothing here allocates."""
    trace = (op, src, dst, psrc, pdst, usrc, udst, rzs, rzd, mem_ptr, mem_line)
    compat = cfg[C_COMPAT] != 0
    steps = cfg[C_STEPS]
    skip_idle = cfg[C_SKIP] != 0
    memq = cfg[C_MEMQ]
    n_cta = cfg[C_N_CTA]
    scalars = state[S_G]
    stats = state[S_K]
    wbuf_on = cfg[C_WBUF] > 0 and (cfg[C_BANK_RCYC] > 1 or cfg[C_BANK_WCYC] > 1)
    wq_hist = state[S_WQ_HIST]
    l1_step = cfg[C_L1_STEP] != 0
    n_blist, n_busy, n_idoc, n_ocex = _carried(cfg, state)

    cyc = scalars[G_CYCLE]
    while True:
        if scalars[G_DONE] != 0:
            scalars[G_CYCLE] = cyc
            return 0
        if cyc >= stop:
            scalars[G_CYCLE] = cyc
            return 1
        stamp0 = cyc * steps
        act = _launch_ctas(cyc, cfg, tables, state, ust, design_ints, design_floats, h_activate, h_deactivate)
        act = _events(cyc, state, stamp0) or act
        act = (
            _write_back(
                cyc, trace, cfg, tables, state, ust, design_ints, design_floats, h_deactivate, h_write
            )
            or act
        )
        if compat:
            act = (
                _lsu_write_back(
                    cyc, trace, cfg, tables, state, ust, design_ints, design_floats, h_deactivate, h_write
                )
                or act
            )
        if stats[K_ERR] != 0:
            break
        if l1_step:  # the L1D's queues, before the LD/ST unit takes another instruction
            act = _l1_step(cyc, trace, cfg, fcfg, tables, state) or act
            if stats[K_ERR] != 0:
                break
        if compat:
            moved, n_ocex = _execute_compat(
                cyc, trace, cfg, fcfg, tables, state, design_ints, design_floats, h_l1, n_ocex
            )
            act = moved or act
        elif n_ocex > 0:
            moved, n_ocex = _execute(
                cyc, trace, cfg, fcfg, tables, state, design_ints, design_floats, h_l1, n_ocex
            )
            act = moved or act
        if stats[K_ERR] != 0:
            break

        # steps 0 .. steps-1: dispatch ready collectors, arbitrate the banks (GPGPU-Sim mode: then
        # buffered instructions take free collectors); the last step issues (rfmodel's pipeline: then the
        # issued instructions take free collectors at once)
        for ph in range(steps + 1):
            last = ph == steps
            stamp = stamp0 + min(ph, steps - 1)
            if not last:
                if n_busy > 0:  # a collector holds an instruction
                    moved, n_busy, n_ocex = _dispatch(
                        cyc,
                        trace,
                        cfg,
                        fcfg,
                        tables,
                        state,
                        design_ints,
                        design_floats,
                        h_l1,
                        stamp,
                        n_busy,
                        n_ocex,
                    )
                    act = moved or act
                    if stats[K_ERR] != 0:
                        break
                moved, n_blist = _arbitrate(cyc, cfg, tables, state, stamp, ph, n_blist, design_ints)
            else:
                moved, n_idoc = _issue(
                    cyc,
                    trace,
                    cfg,
                    tables,
                    state,
                    ust,
                    design_ints,
                    design_floats,
                    h_may_issue,
                    h_issued,
                    h_pool,
                    h_prefer,
                    n_idoc,
                )
            act = moved or act
            if stats[K_ERR] != 0:
                break
            if n_idoc > 0 and compat != last:
                moved, n_busy, n_idoc, n_blist = _allocate(
                    cyc,
                    trace,
                    cfg,
                    tables,
                    state,
                    design_ints,
                    design_floats,
                    h_operand,
                    stamp,
                    n_busy,
                    n_idoc,
                    n_blist,
                )
                act = moved or act
                if stats[K_ERR] != 0:
                    break
        if stats[K_ERR] != 0:
            break

        if compat:
            act = _fetch(cyc, cfg, fcfg, tables, state) or act
        if cyc >= scalars[G_UPKEEP_NEXT]:  # the design's upkeep
            stats[K_HOOK_CALLS] += 1
            nxt = h_upkeep(design_ints, design_floats, 0, 0, 0, 0, cyc)
            scalars[G_UPKEEP_NEXT] = nxt if nxt > cyc else cyc + 1
        if memq >= 0:
            act = _memory_requests(cyc, cfg, fcfg, state, design_ints) or act

        # statistics, the end, idle cycles
        stats[K_COLL_BUSY] += n_busy
        stats[K_STEPPED] += 1
        if wbuf_on:
            wq_hist[scalars[G_WBUF_N]] += 1
        if scalars[G_NEXT_CTA] >= n_cta and scalars[G_RESIDENT_CTAS] == 0:
            scalars[G_DONE] = 1
            scalars[G_CYCLE] = cyc + 1
            return 0
        if not act and skip_idle:
            cyc = _idle_skip(cyc, cfg, state, stop, n_busy, design_ints)
            if stats[K_ERR] != 0:
                break
        cyc += 1
        if cyc - stats[K_LAST_RETIRE] > 50_000_000:
            stats[K_ERR] = ERR_DEADLOCK
            stats[K_ERR_INFO] = cyc
            break
    scalars[G_CYCLE] = cyc
    return 2


#: numba types of the loop's arguments, in order
_ARG_TYPES = (
    types.int8[::1],  # op
    types.uint8[:, ::1],  # src
    types.uint8[:, ::1],  # dst
    types.uint16[::1],  # psrc
    types.uint16[::1],  # pdst
    types.uint64[::1],  # usrc
    types.uint64[::1],  # udst
    types.int8[::1],  # rzs
    types.int8[::1],  # rzd
    types.int64[::1],  # mem_ptr
    types.int64[::1],  # mem_line
    types.int64[::1],  # cfg
    types.float64[::1],  # fcfg
    types.UniTuple(types.int64[::1], N_TABLES),  # tabs
    types.UniTuple(types.int64[::1], N_STATE),  # st
    types.uint64[::1],  # ust
    types.int64[::1],  # design ints
    types.float64[::1],  # design floats
    *([HOOK_TYPE] * 10),
    types.int64,  # stop
)
_LOOP = None


def compiled_loop():
    """The compiled cycle loop (compiled, or loaded from numba's cache, on first use, under
    :func:`compile_lock`; a first compile says so on stderr, since it takes about a minute)."""
    global _LOOP
    if _LOOP is None:
        loop = njit(cache=True, _nrt=False)(_run)
        with compile_lock():
            note_first_compile(loop, "the cycle simulator", "about a minute")
            loop.compile(types.int64(*_ARG_TYPES))
        loop.disable_compile()  # one signature, as the callers pass exactly these types
        _LOOP = loop
    return _LOOP


#: the hooks (numba dispatchers) this process has compiled or loaded for :data:`HOOK_SIG`
_HOOKS_READY: set = set()


def compiled_hooks(hooks) -> None:
    """Compile (or load from numba's cache) each of a design's hooks for :data:`HOOK_SIG` under
    :func:`compile_lock`, once per process, before the loop takes them (which would otherwise compile
    them at the call, unguarded)."""
    todo = [h for h in hooks if hasattr(h, "compile") and h not in _HOOKS_READY]
    if not todo:
        return
    with compile_lock():
        for h in todo:
            h.compile(HOOK_SIG)
            _HOOKS_READY.add(h)
