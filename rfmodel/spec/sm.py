"""The streaming multiprocessor (SM) spec: what every design and engine is built on.

:class:`SMSpec` holds the parameters of one SM (and a few chip-level numbers
kept for information): warps and threads, schedulers, operand collectors, the
register banks and how registers map onto them, register allocation limits,
per-instruction-class latencies, and the memory hierarchy as the one-SM
models see it (L1D, shared memory, L2 and DRAM latencies, a per-SM bandwidth).

Its nested parts are specs too: :class:`CollectorSpec` (collector units per
type, as GPGPU-Sim counts them), :class:`LatencySpec` (latency and initiation
interval per op class) and :class:`L1DSpec`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Spec, param

__all__ = [
    "BANK_MAPPINGS",
    "OP_CLASS_NAMES",
    "SCHEDULERS",
    "CollectorSpec",
    "L1DSpec",
    "LatencySpec",
    "SMSpec",
]

#: LatencySpec field names, in the numbering order of ``rfmodel.ir.OpClass``
OP_CLASS_NAMES = (
    "int",
    "fp32",
    "fp64",
    "sfu",
    "tensor",
    "ld_global",
    "st_global",
    "ld_shared",
    "st_shared",
    "ld_local",
    "st_local",
    "ld_const",
    "atomic",
    "branch",
    "barrier",
    "exit",
    "misc",
)

SCHEDULERS = ("lrr", "gto", "two-level", "oldest")
BANK_MAPPINGS = ("gpgpusim", "subcore", "warp-per-bank", "reg-mod")

_KIB = 1024
_MIB = 1024 * 1024

# latency / initiation interval bounds shared by every op class
_TIMING = ((1, 100_000), (0, 100_000))


def _timing(default: tuple[int, int], doc: str):
    return param(default, unit="cycles", bounds=_TIMING, item_type=int, doc=doc)


@dataclass(frozen=True)
class LatencySpec(Spec, kind="sm.latency"):
    """``[latency, initiation interval]`` in core cycles for each op class.

    *Latency* is issue-to-result (when a dependent instruction may read the
    destination); *initiation interval* is how many cycles the unit is busy
    before it accepts the next warp instruction (0 and 1 both mean fully
    pipelined).  For memory classes the pair is the fixed LD/ST-pipeline part
    only; the simulator adds the L1D / shared-memory / L2 / DRAM latencies of
    :class:`SMSpec` on top.  Field order follows ``OpClass`` numbering.
    """

    int: tuple[int, int] = _timing((4, 1), "integer ALU (IADD3, IMAD, LOP3, ISETP, MOV ...)")
    fp32: tuple[int, int] = _timing((5, 1), "single/half-precision FP (FFMA, FADD, HFMA2 ...)")
    fp64: tuple[int, int] = _timing((8, 8), "double precision (DFMA, DADD ...)")
    sfu: tuple[int, int] = _timing((8, 8), "special function / conversion unit (MUFU, I2F ...)")
    tensor: tuple[int, int] = _timing((64, 64), "tensor core (HMMA, IMMA ...)")
    ld_global: tuple[int, int] = _timing((1, 1), "global load, LD/ST pipeline part")
    st_global: tuple[int, int] = _timing((1, 1), "global store, LD/ST pipeline part")
    ld_shared: tuple[int, int] = _timing((1, 1), "shared load, LD/ST pipeline part")
    st_shared: tuple[int, int] = _timing((1, 1), "shared store, LD/ST pipeline part")
    ld_local: tuple[int, int] = _timing((1, 1), "local load, LD/ST pipeline part")
    st_local: tuple[int, int] = _timing((1, 1), "local store, LD/ST pipeline part")
    ld_const: tuple[int, int] = _timing((1, 1), "constant load (LDC), LD/ST pipeline part")
    atomic: tuple[int, int] = _timing((1, 1), "atomic, LD/ST pipeline part")
    branch: tuple[int, int] = _timing((1, 1), "branch / call / return")
    barrier: tuple[int, int] = _timing((1, 1), "CTA barrier (the wait itself is modelled separately)")
    exit: tuple[int, int] = _timing((1, 1), "EXIT")
    misc: tuple[int, int] = _timing((1, 1), "everything else (S2R, NOP, BSSY, uniform datapath ...)")

    def timing(self, op_class) -> tuple[int, int]:
        """``(latency, initiation)`` for an ``OpClass`` member, its value or its name."""
        if isinstance(op_class, str):
            name = op_class.lower()
        elif hasattr(op_class, "name"):
            name = op_class.name.lower()
        else:
            name = OP_CLASS_NAMES[int(op_class)]
        return getattr(self, name)

    def latencies(self) -> tuple[int, ...]:
        """Latencies indexed by ``OpClass`` value."""
        return tuple(getattr(self, n)[0] for n in OP_CLASS_NAMES)

    def initiations(self) -> tuple[int, ...]:
        """Initiation intervals indexed by ``OpClass`` value (0 reported as 1)."""
        return tuple(max(1, getattr(self, n)[1]) for n in OP_CLASS_NAMES)


_COLLECTORS = dict(unit="units", bounds=(0, 256))


@dataclass(frozen=True)
class CollectorSpec(Spec, kind="sm.collectors"):
    """Operand collector units per type, counted per SM as GPGPU-Sim does.

    With specialized collectors the typed sets serve only their unit type;
    ``gen`` units serve any instruction.  Sub-core SMs split every set evenly
    among the sub-cores.
    """

    gen: int = param(0, doc="generic collector units (any instruction)", **_COLLECTORS)
    sp: int = param(6, doc="collector units for the SP/ALU pipeline", **_COLLECTORS)
    sfu: int = param(8, doc="collector units for the SFU pipeline", **_COLLECTORS)
    mem: int = param(2, doc="collector units for the LD/ST pipeline", **_COLLECTORS)
    tensor: int = param(0, doc="collector units for the tensor-core pipeline", **_COLLECTORS)
    dp: int = param(0, doc="collector units for the FP64 pipeline", **_COLLECTORS)
    int: int = param(0, doc="collector units for the INT pipeline", **_COLLECTORS)

    @property
    def total(self):
        return self.gen + self.sp + self.sfu + self.mem + self.tensor + self.dp + self.int

    @property
    def specialized(self) -> bool:
        """True when any typed (non-generic) set exists."""
        return self.total != self.gen


class _SetAssociative:
    """A cache of ``size_bytes`` in ``assoc`` ways of ``line_bytes`` lines: its sets, and its size a whole
    number of sets."""

    @property
    def sets(self) -> int:
        return self.size_bytes // (self.assoc * self.line_bytes)

    def _check(self) -> None:
        if self.size_bytes and self.size_bytes % (self.assoc * self.line_bytes):
            self._fail(
                "size_bytes",
                self.size_bytes,
                f"a multiple of assoc x line_bytes = {self.assoc * self.line_bytes}",
            )


@dataclass(frozen=True)
class L1DSpec(_SetAssociative, Spec, kind="sm.l1d"):
    """The L1 data cache of one SM (GPGPU-Sim ``-gpgpu_cache:dl1`` and friends)."""

    size_bytes: int = param(
        16 * _KIB,
        unit="B",
        bounds=(0, 64 * _MIB),
        doc="capacity as configured (sets x assoc x line); 0 = no L1D",
    )
    assoc: int = param(4, unit="ways", bounds=(1, 4096), doc="associativity")
    line_bytes: int = param(128, unit="B", choices=(16, 32, 64, 128, 256, 512, 1024), doc="line size")
    sectored: bool = param(False, doc="sectored lines (32 B sectors filled on demand)")
    mshr_entries: int = param(64, unit="entries", bounds=(0, 1 << 16), doc="miss status holding registers")
    mshr_merge: int = param(
        0,
        unit="accesses",
        bounds=(0, 1 << 16),
        doc="accesses one outstanding line miss holds, itself and those merged into it "
        "(GPGPU-Sim's MSHR merge limit; counted per 32-byte sector where sectored, "
        "per line otherwise); a further load of the line waits for its fill and "
        "then hits; 0 = no limit",
    )
    miss_queue_entries: int = param(
        0,
        unit="entries",
        bounds=(0, 1 << 16),
        doc="requests the L1D's miss queue holds on their way to the "
        "interconnect, which takes one a cycle (GPGPU-Sim's miss queue: a "
        "load's miss needs two free entries, a store one, a request a "
        "32-byte sector where sectored); a lookup that finds too few waits, "
        "and a load merging into a miss in flight also needs two; 0 = no "
        "limit",
    )
    allocate_on_miss: bool = param(
        True,
        doc="a load miss reserves its line until the fill (GPGPU-Sim's "
        "allocation policy m): a load whose set has every way waiting for a fill "
        "waits for the first; false: it takes the least recently used way "
        "whatever its state",
    )
    write_allocate: bool = param(
        True,
        doc="a store that misses allocates its line (without waiting for "
        "it); false: GPGPU-Sim's no-write-allocate (N), the store only writes "
        "through",
    )
    store_hit_evicts: bool = param(
        False,
        doc="a global store that hits a filled line invalidates it "
        "(GPGPU-Sim's write policy L: global write-evict; local stores write "
        "through and keep their line); false: the line stays",
    )
    set_index: str = param(
        "linear",
        choices=("linear", "fermi-hash"),
        doc="set of a line: its number mod the sets (GPGPU-Sim's L), or the Fermi L1D's "
        "hash of address bits (H; 32 or 64 sets, other counts index linearly)",
    )
    hit_latency_cycles: int = param(35, unit="cycles", bounds=(1, 100_000), doc="load hit latency")
    banks: int = param(
        1,
        unit="banks",
        choices=(1, 2, 4, 8, 16, 32),
        doc="banks (GPGPU-Sim's -gpgpu_l1_banks; 32-byte interleaved): in the simulator's "
        "GPGPU-Sim mode each has a latency queue of hit_latency_cycles stages that takes "
        "one access a cycle and looks it up at its head",
    )
    unified_bytes: int = param(
        0, unit="B", bounds=(0, 64 * _MIB), doc="L1D + shared memory unified array size; 0 = separate arrays"
    )
    adaptive: bool = param(False, doc="carve-out adapts: L1D gets the unified space shared memory leaves")
    shmem_options: tuple = param(
        (),
        type=tuple,
        item_type=int,
        unit="B",
        bounds=(0, 64 * _MIB),
        doc="the adaptive carve-out's shared-memory sizes (GPGPU-Sim "
        "-gpgpu_shmem_option); empty: the L1D keeps size_bytes",
    )
    bypass_global: bool = param(False, doc="global loads skip the L1D (as -Xptxas -dlcm=cg)")

    def _check(self) -> None:
        super()._check()
        if self.miss_queue_entries == 1:
            self._fail(
                "miss_queue_entries",
                self.miss_queue_entries,
                "0 (no limit) or at least 2 (a load's miss needs two free entries)",
            )
        if not self.shmem_options:
            return
        if not self.adaptive:
            self._fail(
                "shmem_options", self.shmem_options, "empty unless adaptive = true (they would not act)"
            )
        if not self.unified_bytes or not self.size_bytes or self.unified_bytes % self.size_bytes:
            self._fail(
                "shmem_options",
                self.shmem_options,
                "empty unless unified_bytes is a whole multiple of size_bytes (the carve-out scales "
                "the L1D's ways by unified_bytes / size_bytes)",
            )
        if max(self.shmem_options) > self.unified_bytes:
            self._fail(
                "shmem_options", self.shmem_options, f"sizes of at most unified_bytes = {self.unified_bytes}"
            )


_UNITS = dict(unit="units", bounds=(0, 1024))
_WIDTH = dict(unit="slots", bounds=(1, 64))


@dataclass(frozen=True)
class ExecUnitSpec(Spec, kind="sm.exec_units"):
    """The SM's execution units per type as GPGPU-Sim counts them (``-gpgpu_num_{sp,sfu,dp,int,
    tensor_core}_units``, a specialized ``BRA`` unit) and the width of each type's dispatch
    (``-gpgpu_pipeline_widths``' OC_EX stage; the load/store unit's too, though it is one per SM).

    Both engines give a type ``min(width, units, schedulers)`` dispatch slots, scheduler ``s`` using slot
    ``s mod slots`` (fewer slots than schedulers: the schedulers share them, as on Fermi's one SFU), and an
    op class the initiation interval ``ceil(II x slots / units)`` (more units behind a slot take turns).
    With no DP units FP64 runs on the SFU, with no INT units integer and miscellaneous instructions on the
    SP pipelines, with no branch unit branches with the integer instructions, with no tensor units tensor
    instructions on the SP pipelines (GPGPU-Sim's issue rules)."""

    sp: int = param(2, doc="SP (FP32) units", **_UNITS)
    sfu: int = param(1, doc="SFU units", **_UNITS)
    dp: int = param(0, doc="FP64 units (0: FP64 on the SFU)", **_UNITS)
    int: int = param(0, doc="INT units (0: integer instructions on the SP pipelines)", **_UNITS)
    tensor: int = param(0, doc="tensor-core units (0: on the SP pipelines)", **_UNITS)
    branch: int = param(0, doc="branch units (0: branches with the integer instructions)", **_UNITS)
    sp_width: int = param(2, doc="dispatch width of the SP units", **_WIDTH)
    sfu_width: int = param(1, doc="dispatch width of the SFU units", **_WIDTH)
    dp_width: int = param(1, doc="dispatch width of the FP64 units", **_WIDTH)
    int_width: int = param(1, doc="dispatch width of the INT units", **_WIDTH)
    tensor_width: int = param(1, doc="dispatch width of the tensor-core units", **_WIDTH)
    branch_width: int = param(1, doc="dispatch width of the branch units", **_WIDTH)
    mem_width: int = param(1, doc="dispatch registers of the one load/store unit", **_WIDTH)

    def _check(self) -> None:
        for name in ("sp", "sfu"):
            if getattr(self, name) < 1:
                self._fail(name, getattr(self, name), "at least 1 (FP32 and SFU instructions need a unit)")
        for t in ("dp", "int", "tensor", "branch"):  # a width of no units would be ignored: refused instead
            if getattr(self, t) == 0 and getattr(self, t + "_width") != 1:
                self._fail(
                    t + "_width",
                    getattr(self, t + "_width"),
                    f"1 while {t} = 0 (its instructions run on another unit's slots)",
                )


#: bytes of an interconnect packet's header (GPGPU-Sim's READ_PACKET_SIZE and WRITE_PACKET_SIZE)
ICNT_HEADER_BYTES = 8


@dataclass(frozen=True)
class ICacheSpec(_SetAssociative, Spec, kind="sm.icache"):
    """The instruction cache and fetch stage of one SM (GPGPU-Sim's ``-gpgpu_cache:il1``,
    ``-gpgpu_inst_fetch_throughput`` and ``-gpgpu_perfect_inst_const_cache``).

    Modelled by the simulator's GPGPU-Sim mode, whose fetch stage it feeds: each fetch gives one warp with an
    empty instruction buffer its next instructions when the line of its PC is in the cache; a miss goes to
    the L2 (and DRAM) like a data line, the warp waits for the fill, and the cache holds at most
    ``mshr_entries`` lines in flight (a fetch that finds them all taken, or, allocating on miss, its set's
    every way waiting for a fill, fetches nothing that cycle)."""

    size_bytes: int = param(
        2 * _KIB,
        unit="B",
        bounds=(0, 64 * _MIB),
        doc="capacity (sets x assoc x line); 0 = every fetch hits (a perfect cache)",
    )
    assoc: int = param(4, unit="ways", bounds=(1, 4096), doc="associativity")
    line_bytes: int = param(128, unit="B", choices=(16, 32, 64, 128, 256, 512, 1024), doc="line size")
    mshr_entries: int = param(2, unit="entries", bounds=(1, 1 << 16), doc="lines missing at once")
    fetch_per_cycle: int = param(
        1,
        unit="fetches/cycle",
        bounds=(1, 64),
        doc="fetches per cycle, each one warp's next instruction-buffer fill",
    )
    allocate_on_miss: bool = param(
        False,
        doc="a miss takes its way at once (GPGPU-Sim's m); false: when its "
        "line arrives (f, GPGPU-Sim's instruction caches)",
    )


#: ways of an L2 the SM spec gives no geometry for (the SM's slice as one cache: SMSpec.l2_ways)
DEFAULT_L2_ASSOC = 16
#: the L2 banks' set-index functions (GPGPU-Sim's dl2 set-index letters L, P and X)
L2_SET_INDEX = ("linear", "ipoly", "xor")
#: the set counts GPGPU-Sim's IPOLY hash has equations for
IPOLY_SETS = (16, 32, 64)


@dataclass(frozen=True)
class L2Spec(Spec, kind="sm.l2"):
    """The chip's L2 as GPGPU-Sim builds it (``-gpgpu_cache:dl2``, ``-gpgpu_n_mem`` x
    ``-gpgpu_n_sub_partition_per_mchannel``): ``banks`` caches of ``l2_size_bytes / banks`` bytes each, one
    per memory sub-partition.  A line's bank is its sub-partition under the DRAM's address decoding
    (``SMSpec.dram``: the channel, then the low bank bits within it; without ``dram``, the line number modulo
    the banks), and its set within the bank comes from the partition address, the address with the channel
    and sub-partition bits taken out (so that lines of one bank do not crowd into a few of its sets), by
    ``set_index``: ``linear`` (the line bits above the offset, GPGPU-Sim's L), ``ipoly`` (GPGPU-Sim's P:
    those bits XOR-hashed with the bits above them, for 16, 32 or 64 sets) or ``xor`` (GPGPU-Sim's X: those
    bits XOR the bits right above them).

    The simulator models it where the SM has the whole L2 (``num_sms`` = 1, the one-SM configurations
    Accel-Sim runs a share on); the SM's slice of a larger chip (``l2_size_bytes / num_sms``) is one cache of
    ``assoc`` ways, its set the line number modulo its sets."""

    banks: int = param(1, unit="banks", bounds=(1, 4096), doc="L2 banks (memory sub-partitions)")
    assoc: int = param(16, unit="ways", bounds=(1, 1024), doc="ways of a set")
    set_index: str = param(
        "linear",
        choices=L2_SET_INDEX,
        doc="set index within a bank: linear, ipoly or xor (GPGPU-Sim's L, P and X)",
    )


#: the address-map letters GPGPU-Sim's ``-gpgpu_mem_addr_mapping`` takes, high bit first: D (channel), B
#: (bank), R (row), C (column), S (burst: a column bit too), 0 (unused); '.', '|' and ' ' only separate
_ADDR_MAP_LETTERS = "DBRCS0"


def parse_address_map(text: str) -> tuple[int, dict[str, int]]:
    """GPGPU-Sim's ``[dramid@<bit>;]<64 letters>`` address map: (the channel bits' first position or -1,
    the bit mask of each letter).  Raises ``ValueError`` with what is wrong."""
    start = -1
    body = text.strip()
    if body.startswith("dramid@"):
        head, sep, body = body.partition(";")
        if not sep:
            raise ValueError("dramid@<bit> must be followed by ';' and the 64-letter map")
        try:
            start = int(head[len("dramid@") :])
        except ValueError:
            raise ValueError(f"'{head}' is not dramid@<bit>") from None
        if not 0 <= start < 64:
            raise ValueError(f"the channel bits' position {start} is not in [0, 63]")
    letters = [c.upper() for c in body if c not in ". |"]
    bad = sorted({c for c in letters if c not in _ADDR_MAP_LETTERS})
    if bad:
        raise ValueError(f"letters {bad} are not among D, B, R, C, S, 0")
    if len(letters) != 64:
        raise ValueError(f"{len(letters)} address bits, expected 64")
    masks = dict.fromkeys("DBRCS", 0)
    for i, c in enumerate(letters):
        if c != "0":
            masks[c] |= 1 << (63 - i)
    if start >= 0 and masks["D"]:
        raise ValueError("channel bits (D) and dramid@<bit> together")
    if not masks["B"] or not masks["R"]:
        raise ValueError("no bank (B) or no row (R) bits")
    return start, masks


@dataclass(frozen=True)
class DramSpec(Spec, kind="sm.dram"):
    """The DRAM's channels, banks and rows as GPGPU-Sim lays them out (``-gpgpu_n_mem``,
    ``-gpgpu_mem_addr_mapping``, ``-gpgpu_memory_partition_indexing``, ``-gpgpu_dram_timing_opt``).

    With it the simulator times each missed L2 line in its channel's bank: a read of the open row waits for
    the bank's and the channel's previous column reads only, a read of another row precharges (after tRAS
    from the row's activation) and activates it (tRP + tRCD, tRC from the bank's last activation, tRRD from
    the channel's), and a line's sectors are read one after the other (a column command every
    ``max(tCCD, tCCDL, burst)``), the data ``tCL`` after the last; the SM's ``dram_latency_cycles`` is taken
    as the access to a closed row (tRCD + tCL) and each access adds what it takes beyond that.  A line is one
    request of ``ceil(line / atom_bytes)`` column reads, or with ``SMSpec.l2_sector_bytes`` one request a
    32-byte sector it misses, each of ``ceil(32 / atom_bytes)``.  Requests are
    served in the order they reach the DRAM (GPGPU-Sim's FR-FCFS scheduler lets an open row's reads pass)."""

    channels: int = param(6, unit="channels", bounds=(1, 4096), doc="memory channels (-gpgpu_n_mem)")
    sub_partitions: int = param(
        1,
        unit="sub-partitions",
        choices=(1, 2, 4, 8, 16),
        doc="L2 sub-partitions per channel, which the channel hash's address bits "
        "start above (1 unless channel_hash is xor or ipoly, where it acts)",
    )
    banks: int = param(16, unit="banks", choices=(1, 2, 4, 8, 16, 32, 64, 128), doc="banks per channel (nbk)")
    bank_groups: int = param(1, unit="groups", choices=(1, 2, 4, 8, 16), doc="bank groups per channel")
    clock_mhz: float = param(924.0, unit="MHz", bounds=(1.0, 100_000.0), doc="DRAM command clock")
    address_map: str = param(
        "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS",
        doc="GPGPU-Sim's address map: [dramid@<bit>;] then 64 letters, high bit first, D channel, B bank, "
        "R row, C column, S burst, 0 unused (a channel count not a power of two takes the channel as "
        "the address above <bit> modulo the channels, the rest as the quotient)",
    )
    channel_hash: str = param(
        "none",
        choices=("none", "xor", "ipoly"),
        doc="how the channel is hashed (-gpgpu_memory_partition_indexing 0, 1, 2)",
    )
    t_rcd: int = param(12, unit="DRAM cycles", bounds=(0, 1000), doc="activate to read (tRCD)")
    t_rp: int = param(12, unit="DRAM cycles", bounds=(0, 1000), doc="precharge to activate (tRP)")
    t_ras: int = param(28, unit="DRAM cycles", bounds=(0, 1000), doc="activate to precharge (tRAS)")
    t_rc: int = param(40, unit="DRAM cycles", bounds=(0, 1000), doc="activate to activate, one bank (tRC)")
    t_rrd: int = param(
        6, unit="DRAM cycles", bounds=(0, 1000), doc="activate to activate, one channel (tRRD)"
    )
    t_ccd: int = param(2, unit="DRAM cycles", bounds=(0, 1000), doc="column to column, one channel (tCCD)")
    t_ccdl: int = param(
        0,
        unit="DRAM cycles",
        bounds=(0, 1000),
        doc="column to column, one bank group (tCCDL; 0 without bank groups)",
    )
    t_cl: int = param(12, unit="DRAM cycles", bounds=(0, 1000), doc="read to data (CAS latency)")
    burst_cycles: int = param(
        2,
        unit="DRAM cycles",
        bounds=(1, 1000),
        doc="command cycles one column read holds the data bus (burst length / data-to-command clock ratio)",
    )
    atom_bytes: int = param(
        64,
        unit="B",
        choices=(8, 16, 32, 64, 128, 256, 512),
        doc="bytes one column read delivers (burst length x bus width x chips)",
    )

    def _check(self) -> None:
        try:
            start, masks = parse_address_map(self.address_map)
        except ValueError as e:
            self._fail("address_map", self.address_map, f"GPGPU-Sim's mapping string ({e})")
        pow2 = self.channels & (self.channels - 1) == 0
        if start < 0 and not masks["D"] and self.channels > 1:
            self._fail(
                "address_map", self.address_map, "channel bits (D) or dramid@<bit> for several channels"
            )
        if start < 0 and masks["D"] and (not pow2 or 1 << bin(masks["D"]).count("1") != self.channels):
            self._fail("address_map", self.address_map, f"as many D bits as log2(channels = {self.channels})")
        if self.channel_hash == "none" and self.sub_partitions != 1:
            self._fail(
                "sub_partitions", self.sub_partitions, "1 with channel_hash = none (only a hash uses it)"
            )
        if self.bank_groups == 1 and self.t_ccdl != 0:
            self._fail("t_ccdl", self.t_ccdl, "0 with bank_groups = 1 (tCCDL applies within a bank group)")
        if self.channel_hash == "xor" and not pow2:
            self._fail(
                "channel_hash", self.channel_hash, "none or ipoly with a channel count not a power of two"
            )
        if self.channel_hash == "ipoly" and (
            1 << (self.channels - 1).bit_length()
        ) * self.sub_partitions not in (16, 32, 64):
            self._fail(
                "channel_hash",
                self.channel_hash,
                "none or xor unless the channels (rounded up to a power of two) x sub_partitions are "
                "16, 32 or 64 (the IPOLY hashes GPGPU-Sim has)",
            )

    def cycles(self, core_mhz: float, n: float) -> float:
        """``n`` DRAM command cycles in core cycles."""
        return n * core_mhz / self.clock_mhz


@dataclass(frozen=True)
class SMSpec(Spec, kind="sm", version=1):
    """One SM's parameters.  Defaults are the ``fermi-gtx480`` preset's values."""

    # -- identity and chip-level information
    name: str = param("custom", doc="short name of this configuration")
    source: str = param("", doc="provenance: which paper / config file each value came from")
    num_sms: int = param(
        15,
        unit="SMs",
        bounds=(1, 4096),
        doc="SMs on the chip: the modelled SM runs its share of a kernel's grid (ceil(CTAs / num_sms) CTAs) "
        "and holds its slice of the L2 (l2_size_bytes / num_sms; the whole L2 at 1)",
    )
    clock_mhz: float = param(700.0, unit="MHz", bounds=(1.0, 100_000.0), doc="core clock")

    # -- threads, warps, CTAs
    warps_per_sm: int = param(48, unit="warps", bounds=(1, 256), doc="resident warp slots")
    threads_per_warp: int = param(32, unit="threads", bounds=(1, 64), doc="SIMT width")
    max_ctas_per_sm: int = param(8, unit="CTAs", bounds=(1, 256), doc="resident CTA limit")
    max_threads_per_cta: int = param(1024, unit="threads", bounds=(1, 8192), doc="CTA size limit")

    # -- issue
    schedulers_per_sm: int = param(2, unit="schedulers", bounds=(1, 16), doc="warp schedulers")
    issue_width: int = param(
        1,
        unit="instr/cycle",
        bounds=(1, 4),
        doc="instructions one scheduler may issue per cycle (from one warp)",
    )
    dual_issue_diff_units: bool = param(True, doc="a dual issue must use two different unit types")
    scheduler: str = param(
        "gto", choices=SCHEDULERS, doc="warp selection policy (two-level parameters belong to the design)"
    )
    sub_core: bool = param(
        False,
        doc="Volta-style sub-cores: each scheduler owns its banks, "
        "collectors and units (warp w on scheduler w mod schedulers)",
    )

    # -- operand collectors
    collectors: CollectorSpec = param(CollectorSpec(), doc="operand collector units per type")
    collector_read_ports: int = param(
        0,
        unit="operands/cycle",
        bounds=(0, 16),
        doc="operands one collector can receive per cycle; "
        "0 = no limit (GPGPU-Sim), 1 = CORF's port serialization",
    )

    # -- register banks
    num_banks: int = param(16, unit="banks", bounds=(1, 1024), doc="register banks per SM")
    bank_read_ports: int = param(0, unit="ports", bounds=(0, 16), doc="read-only ports per bank")
    bank_write_ports: int = param(0, unit="ports", bounds=(0, 16), doc="write-only ports per bank")
    bank_rw_ports: int = param(
        1, unit="ports", bounds=(0, 16), doc="ports per bank usable for a read or a write"
    )
    bank_width_bits: int = param(
        1024,
        unit="bit",
        bounds=(32, 8192),
        multiple_of=32,
        doc="bits one bank access delivers (1024 = a 32-lane warp register)",
    )
    bank_mapping: str = param(
        "gpgpusim", choices=BANK_MAPPINGS, doc="register-to-bank function (see SMSpec.bank_of)"
    )

    # -- register allocation
    regs_per_sm: int = param(32768, unit="32-bit regs", bounds=(32, 1 << 24), doc="register file size")
    max_regs_per_thread: int = param(63, unit="regs", bounds=(1, 4096), doc="per-thread limit")
    reg_alloc_granularity: int = param(
        64, unit="regs/warp", bounds=(1, 1 << 16), doc="a warp's registers are allocated in multiples of this"
    )
    regs_per_cta_limit: int = param(
        32768, unit="32-bit regs", bounds=(1, 1 << 24), doc="registers one CTA may use"
    )

    # -- shared memory
    shmem_per_sm_bytes: int = param(48 * _KIB, unit="B", bounds=(0, 64 * _MIB), doc="shared memory per SM")
    shmem_per_cta_bytes: int = param(48 * _KIB, unit="B", bounds=(0, 64 * _MIB), doc="shared memory per CTA")

    # -- execution
    latency: LatencySpec = param(LatencySpec(), doc="latency and initiation interval per op class")

    # -- memory hierarchy
    l1d: L1DSpec = param(L1DSpec(), doc="L1 data cache")
    icnt_flit_bytes: int | None = param(
        optional=True,
        type=int,
        unit="B",
        bounds=(1, 1 << 16),
        doc="bytes one interconnect flit carries: each SM's port moves one flit per interconnect cycle each "
        "way (requests and store data out, replies in; a packet is its data and an 8-byte header in "
        "whole flits; 65536: a packet a cycle whatever its size); left out: the ports are not modelled",
    )
    icnt_clock_mhz: float | None = param(
        optional=True,
        type=float,
        unit="MHz",
        bounds=(1.0, 100_000.0),
        doc="interconnect clock; left out: the core clock",
    )
    dram: DramSpec | None = param(
        optional=True,
        type=DramSpec,
        doc="DRAM channels, banks and rows (the simulator times each line's row and column commands); left "
        "out: every DRAM access takes dram_latency_cycles",
    )
    l2_sector_bytes: int | None = param(
        optional=True,
        type=int,
        unit="B",
        choices=(32,),
        doc="the L2 serves a request sector by sector (GPGPU-Sim's S-type dl2, 32-byte sectors): each sector "
        "comes back to the SM as a packet of its own, a read's data or a store's acknowledgement (with "
        "icnt_flit_bytes), and is read from DRAM by a request of its own (with dram); left out: one "
        "reply packet and one DRAM request a line (needs icnt_flit_bytes or dram, where it acts)",
    )
    exec_units: ExecUnitSpec | None = param(
        optional=True,
        type=ExecUnitSpec,
        doc="execution units and dispatch widths per type; left out: one pipeline of each type per scheduler",
    )
    icache: ICacheSpec | None = param(
        optional=True,
        type=ICacheSpec,
        doc="instruction cache and fetch (the simulator's GPGPU-Sim mode); left out: every fetch hits, "
        "SimOptions.fetch_per_cycle fetches a cycle",
    )
    smem_latency_cycles: int = param(26, unit="cycles", bounds=(1, 100_000), doc="shared-memory load latency")
    l2_hit_latency_cycles: int = param(
        120, unit="cycles", bounds=(1, 100_000), doc="L1 miss served by the L2 (GPGPU-Sim's ROP latency)"
    )
    dram_latency_cycles: int = param(
        100, unit="cycles", bounds=(0, 100_000), doc="extra latency when the L2 misses too"
    )
    l2_size_bytes: int = param(768 * _KIB, unit="B", bounds=(0, 1 << 36), doc="chip L2 size")
    l2: L2Spec | None = param(
        optional=True,
        type=L2Spec,
        doc="the L2's banks, ways and set index (GPGPU-Sim's dl2; the simulator where num_sms = 1); left "
        "out: the SM's slice of l2_size_bytes / num_sms, one cache of SimOptions.l2_assoc ways, set = "
        "line modulo sets",
    )
    mem_bw_bytes_per_cycle: float = param(
        16.896,
        unit="B/cycle",
        bounds=(1e-6, 1e6),
        doc="this SM's share of DRAM bandwidth, for a simple queue",
    )

    # ------------------------------------------------------------- checks
    def _check(self) -> None:
        if self.max_threads_per_cta > self.max_threads_per_sm:
            self._fail(
                "max_threads_per_cta",
                self.max_threads_per_cta,
                f"at most warps_per_sm x threads_per_warp = {self.max_threads_per_sm}",
            )
        if self.shmem_per_cta_bytes > self.shmem_per_sm_bytes:
            self._fail(
                "shmem_per_cta_bytes",
                self.shmem_per_cta_bytes,
                f"at most shmem_per_sm_bytes = {self.shmem_per_sm_bytes}",
            )
        if self.l1d.shmem_options and self.shmem_per_sm_bytes > max(self.l1d.shmem_options):
            self._fail(
                "shmem_per_sm_bytes",
                self.shmem_per_sm_bytes,
                f"at most the largest l1d.shmem_options = {max(self.l1d.shmem_options)} "
                "(the carve-out has no option for more shared memory)",
            )
        if self.banks_split and self.num_banks % self.schedulers_per_sm:
            self._fail(
                "num_banks",
                self.num_banks,
                f"a multiple of schedulers_per_sm = {self.schedulers_per_sm} "
                "(sub-cores split the banks evenly)",
            )
        if self.regs_per_sm % self.threads_per_warp:
            self._fail(
                "regs_per_sm", self.regs_per_sm, f"a multiple of threads_per_warp = {self.threads_per_warp}"
            )
        if self.regs_per_sm % self.num_banks:
            self._fail("regs_per_sm", self.regs_per_sm, f"a multiple of num_banks = {self.num_banks}")
        if (self.regs_per_bank * 32) % self.bank_width_bits:
            self._fail(
                "bank_width_bits",
                self.bank_width_bits,
                f"a divisor of one bank's {self.regs_per_bank * 32} bits",
            )
        if self.max_regs_per_thread * self.threads_per_warp > self.regs_per_sm:
            limit = self.regs_per_sm // self.threads_per_warp
            self._fail(
                "max_regs_per_thread",
                self.max_regs_per_thread,
                f"at most regs_per_sm / threads_per_warp = {limit}",
            )
        if self.bank_read_ports + self.bank_rw_ports < 1:
            self._fail("bank_rw_ports", self.bank_rw_ports, "at least 1 when bank_read_ports is 0")
        if self.bank_write_ports + self.bank_rw_ports < 1:
            self._fail("bank_rw_ports", self.bank_rw_ports, "at least 1 when bank_write_ports is 0")
        if self.collectors.total < 1:
            self._fail("collectors", self.collectors.to_dict(), "at least one collector unit")
        if self.icnt_clock_mhz is not None and self.icnt_flit_bytes is None:
            self._fail(
                "icnt_clock_mhz",
                self.icnt_clock_mhz,
                "left out unless icnt_flit_bytes is given (without it the ports are not modelled)",
            )
        if self.l2_sector_bytes is not None and self.icnt_flit_bytes is None and self.dram is None:
            self._fail(
                "l2_sector_bytes",
                self.l2_sector_bytes,
                "left out unless icnt_flit_bytes or dram is given (without them it acts on nothing)",
            )
        if self.l2 is not None:
            self._check_l2()
        if self.exec_units is not None and self.sub_core:
            e = self.exec_units
            for t in ("sp", "sfu", "dp", "int", "tensor", "branch"):
                n, wd = getattr(e, t), getattr(e, t + "_width")
                if n and min(n, wd) < self.schedulers_per_sm:
                    self._fail(
                        "exec_units",
                        e.to_dict(),
                        f"with sub-cores, at least one {t} unit and dispatch slot a scheduler "
                        f"({self.schedulers_per_sm})",
                    )

    def _check_l2(self) -> None:
        """The L2's banks divide it into whole sets of a power-of-two count (GPGPU-Sim masks the set index),
        an IPOLY index has equations for its count, and the banks split evenly over the DRAM's channels."""
        l2, line = self.l2, self.l1d.line_bytes
        per_set = l2.banks * l2.assoc * line
        sets = self.l2_size_bytes // per_set if self.l2_size_bytes % per_set == 0 else 0
        if sets < 1 or sets & (sets - 1):
            self._fail(
                "l2",
                l2.to_dict(),
                f"banks x assoc x line ({per_set} B) dividing l2_size_bytes = {self.l2_size_bytes} "
                "into a power-of-two count of sets a bank",
            )
        if l2.set_index == "ipoly" and sets not in IPOLY_SETS:
            self._fail(
                "l2",
                l2.to_dict(),
                f"set_index = 'linear' with {sets} sets a bank (ipoly takes "
                f"{', '.join(map(str, IPOLY_SETS))})",
            )
        if self.dram is not None:
            subs = l2.banks // self.dram.channels
            if l2.banks % self.dram.channels or subs & (subs - 1):
                self._fail(
                    "l2",
                    l2.to_dict(),
                    f"banks a power-of-two multiple of dram.channels = {self.dram.channels} (the "
                    "sub-partitions of each channel)",
                )

    @property
    def l2_ways(self) -> int:
        """Ways of the L2's sets: the L2 spec's, or :data:`DEFAULT_L2_ASSOC` without one."""
        return self.l2.assoc if self.l2 is not None else DEFAULT_L2_ASSOC

    @property
    def l2_sets_per_bank(self) -> int:
        """Sets of one L2 bank (:class:`L2Spec`; 0 without it)."""
        if self.l2 is None:
            return 0
        return self.l2_size_bytes // (self.l2.banks * self.l2.assoc * self.l1d.line_bytes)

    # ----------------------------------------------------- derived values
    @property
    def max_threads_per_sm(self) -> int:
        return self.warps_per_sm * self.threads_per_warp

    @property
    def warps_per_scheduler(self) -> int:
        """Warp slots one scheduler supervises (ceiling)."""
        return -(-self.warps_per_sm // self.schedulers_per_sm)

    @property
    def icnt_flit_cycles(self) -> float:
        """Core cycles one flit holds the SM's interconnect port (0: the ports are not modelled)."""
        if self.icnt_flit_bytes is None:
            return 0.0
        return self.clock_mhz / (self.icnt_clock_mhz or self.clock_mhz)

    def icnt_flits(self, data_bytes):
        """Flits of an interconnect packet carrying ``data_bytes`` (scalar or array) and its 8-byte header
        (GPGPU-Sim's READ_PACKET_SIZE / WRITE_PACKET_SIZE); a read request carries none, a read reply
        and a write request their data."""
        import numpy as np

        flit = self.icnt_flit_bytes or 1 << 16
        return -(-(np.asarray(data_bytes, dtype=np.int64) + ICNT_HEADER_BYTES) // flit)

    @property
    def icnt_per_sector(self) -> bool:
        """Whether replies come back a 32-byte sector a packet: a sectored L1D asks for sectors, a
        sectored L2 (``l2_sector_bytes``) serves every request sector by sector."""
        return bool(self.l1d.sectored or self.l2_sector_bytes)

    def icnt_line_reply_flits(self) -> int:
        """Flits of the reply to one missed L1D line: the line, or (:attr:`icnt_per_sector`) one packet a
        32-byte sector (every sector of the line)."""
        line = self.l1d.line_bytes
        if self.icnt_per_sector:
            return int(max(line // 32, 1) * self.icnt_flits(32))
        return int(self.icnt_flits(line))

    def icnt_ack_flits(self, sectors=None):
        """Flits of the acknowledgements a store to one line gets back: a header-only packet for each of
        its ``sectors`` 32-byte sectors (scalar or array; left out: every sector of the line) where
        replies come a sector a packet (:attr:`icnt_per_sector`), else one."""
        import numpy as np

        if not self.icnt_per_sector:
            return self.icnt_flits(0) * np.ones_like(np.asarray(sectors if sectors is not None else 1))
        n = max(self.l1d.line_bytes // 32, 1) if sectors is None else np.maximum(np.asarray(sectors), 1)
        return self.icnt_flits(0) * n

    @property
    def banks_split(self) -> bool:
        """Whether each scheduler has banks of its own (sub-cores, or the ``subcore`` bank mapping)."""
        return bool(self.sub_core or self.bank_mapping == "subcore")

    @property
    def banks_per_subcore(self) -> int:
        """Banks one scheduler can reach: ``num_banks / schedulers`` with sub-cores, else all."""
        if self.banks_split:
            return self.num_banks // self.schedulers_per_sm
        return self.num_banks

    @property
    def collectors_per_subcore(self) -> int:
        if self.sub_core:
            return self.collectors.total // self.schedulers_per_sm
        return self.collectors.total

    @property
    def bank_ports(self) -> int:
        """Accesses one bank can serve per cycle (read + write + read/write ports)."""
        return self.bank_read_ports + self.bank_write_ports + self.bank_rw_ports

    @property
    def regs_per_bank(self) -> int:
        """32-bit registers held by one bank."""
        return self.regs_per_sm // self.num_banks

    @property
    def bank_bytes(self) -> int:
        return self.regs_per_bank * 4

    @property
    def bank_entries(self) -> int:
        """Rows of ``bank_width_bits`` in one bank."""
        return self.regs_per_bank * 32 // self.bank_width_bits

    @property
    def warp_reg_bits(self) -> int:
        return self.threads_per_warp * 32

    @property
    def rows_per_warp_register(self) -> int:
        """Bank rows one full warp register occupies (1 when a bank row is a warp register)."""
        return max(1, -(-self.warp_reg_bits // self.bank_width_bits))

    @property
    def warp_regs_per_sm(self) -> int:
        """Warp registers (``threads_per_warp`` x 32 bit) the register file holds."""
        return self.regs_per_sm // self.threads_per_warp

    @property
    def rf_capacity_kb(self) -> float:
        return self.regs_per_sm * 4 / _KIB

    @property
    def cycle_ns(self) -> float:
        return 1000.0 / self.clock_mhz

    def scheduler_of(self, warp_slot: int) -> int:
        """The scheduler (sub-core) that owns a warp slot, as GPGPU-Sim assigns them."""
        return warp_slot % self.schedulers_per_sm

    def bank_of(self, reg: int, warp_slot: int) -> int:
        """Bank holding register ``reg`` of the warp in ``warp_slot`` (the reference definition).

        ``gpgpusim``: ``(reg + warp_slot) mod num_banks``; with ``sub_core``
        ``(reg + warp_slot) mod bps + scheduler * bps`` (``bps`` =
        :attr:`banks_per_subcore`).  ``subcore``: the sub-core form always.
        ``warp-per-bank``: every register of a warp in one bank
        (``warp_slot mod num_banks``, or the warp's scheduler's banks in
        turn).  ``reg-mod``: ``reg mod num_banks`` (sub-core form likewise).
        Register numbers are as the trace gives them (GPGPU-Sim's trace mode
        numbers SASS ``R0`` as 1; that shift belongs to the trace reader).
        """
        mapping = self.bank_mapping
        split = self.sub_core or mapping == "subcore"
        n = self.banks_per_subcore if split else self.num_banks
        if mapping in ("gpgpusim", "subcore"):
            local = (reg + warp_slot) % n
        elif mapping == "warp-per-bank":
            local = (warp_slot // self.schedulers_per_sm if split else warp_slot) % n
        else:  # reg-mod
            local = reg % n
        if split:
            return self.scheduler_of(warp_slot) * n + local
        return local

    def warp_regs_allocated(self, regs_per_thread: int) -> int:
        """32-bit registers one warp takes when each thread uses ``regs_per_thread``."""
        raw = regs_per_thread * self.threads_per_warp
        g = self.reg_alloc_granularity
        return math.ceil(raw / g) * g
