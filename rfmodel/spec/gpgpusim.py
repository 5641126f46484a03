"""Import an :class:`~rfmodel.spec.sm.SMSpec` from a GPGPU-Sim ``gpgpusim.config``.

The file format is GPGPU-Sim's option file: ``#`` starts a comment that runs
to the end of the line, options are ``-name value`` pairs separated by white
space, and a value in double quotes may span lines (``-gpgpu_dram_timing_opt``
does).  A later occurrence of an option overrides an earlier one.  An
Accel-Sim ``trace.config`` beside the file, if present, is read the same way
and supplies the trace-mode ``<latency>,<initiation>`` per unit class.

Options this reader uses and is not given take GPGPU-Sim's built-in defaults
(:data:`GPGPUSIM_DEFAULTS`); options it does not use are listed in
:attr:`GpgpusimImport.skipped`.  A malformed value of an option it uses raises
:class:`~rfmodel.errors.ParseError` naming the file, the line and the option.
How each option maps onto the spec is written in ``docs/spec.md``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from rfmodel.errors import ParseError, SpecError
from rfmodel.spec import sm

__all__ = [
    "GPGPUSIM_DEFAULTS",
    "from_gpgpusim_config",
    "TRACE_DEFAULTS",
    "GpgpusimImport",
    "import_gpgpusim_config",
    "parse_option_file",
]

#: GPGPU-Sim's built-in values for the options this reader uses
GPGPUSIM_DEFAULTS: dict[str, str] = {
    "-gpgpu_shader_core_pipeline": "1024:32",
    "-gpgpu_n_clusters": "10",
    "-gpgpu_n_cores_per_cluster": "3",
    "-gpgpu_clock_domains": "500.0:2000.0:2000.0:2000.0",
    "-gpgpu_shader_cta": "32",
    "-gpgpu_num_sched_per_core": "1",
    "-gpgpu_max_insn_issue_per_warp": "2",
    "-gpgpu_dual_issue_diff_exec_units": "1",
    "-gpgpu_scheduler": "gto",
    "-gpgpu_sub_core_model": "0",
    "-gpgpu_enable_specialized_operand_collector": "1",
    "-gpgpu_operand_collector_num_units_gen": "0",
    "-gpgpu_operand_collector_num_units_sp": "4",
    "-gpgpu_operand_collector_num_units_sfu": "4",
    "-gpgpu_operand_collector_num_units_mem": "2",
    "-gpgpu_operand_collector_num_units_tensor_core": "4",
    "-gpgpu_operand_collector_num_units_dp": "0",
    "-gpgpu_operand_collector_num_units_int": "0",
    "-gpgpu_num_reg_banks": "8",
    "-gpgpu_reg_file_port_throughput": "1",
    "-gpgpu_shader_registers": "8192",
    "-gpgpu_registers_per_block": "8192",
    "-gpgpu_compute_capability_major": "7",
    "-gpgpu_shmem_size": "16384",
    "-gpgpu_shmem_per_block": "49152",
    "-gpgpu_cache:dl1": "none",
    "-gpgpu_cache:il1": "4:256:4,L:R:f:N,A:2:32,4",
    "-icnt_flit_size": "32",
    "-gpgpu_num_sp_units": "1",
    "-gpgpu_num_sfu_units": "1",
    "-gpgpu_num_dp_units": "0",
    "-gpgpu_num_int_units": "0",
    "-gpgpu_num_tensor_core_units": "0",
    "-gpgpu_pipeline_widths": "1,1,1,1,1,1,1,1,1,1,1,1,1",
    "-gpgpu_dram_timing_opt": "4:2:8:12:21:13:34:9:4:5:13:1:0:0",
    "-network_mode": "1",
    "-inter_config_file": "mesh",
    "-gpgpu_inst_fetch_throughput": "1",
    "-gpgpu_perfect_inst_const_cache": "0",
    "-gpgpu_l1_latency": "1",
    "-gpgpu_l1_banks": "1",
    "-gpgpu_unified_l1d_size": "0",
    "-gpgpu_adaptive_cache_config": "0",
    "-gpgpu_shmem_option": "0",
    "-gpgpu_gmem_skip_L1D": "0",
    "-gpgpu_smem_latency": "3",
    "-gpgpu_l2_rop_latency": "85",
    "-dram_latency": "30",
    "-gpgpu_cache:dl2": "S:32:128:24,L:B:m:L:P,A:192:4,32:0,32",
    "-gpgpu_n_mem": "8",
    "-gpgpu_n_sub_partition_per_mchannel": "1",
    "-gpgpu_n_mem_per_ctrlr": "1",
    "-gpgpu_dram_buswidth": "4",
    "-dram_data_command_freq_ratio": "2",
    "-gpgpu_dram_burst_length": "4",
    "-gpgpu_memory_partition_indexing": "0",
    "-ptx_opcode_latency_int": "1,1,19,25,145,32",
    "-ptx_opcode_initiation_int": "1,1,4,4,32,4",
    "-ptx_opcode_latency_fp": "1,1,1,1,30",
    "-ptx_opcode_initiation_fp": "1,1,1,1,5",
    "-ptx_opcode_latency_dp": "8,8,8,8,335",
    "-ptx_opcode_initiation_dp": "8,8,8,8,130",
    "-ptx_opcode_latency_sfu": "8",
    "-ptx_opcode_initiation_sfu": "8",
    "-ptx_opcode_latency_tesnor": "64",  # GPGPU-Sim's own spelling
    "-ptx_opcode_initiation_tensor": "64",
}

#: options read under another name as well (older GPGPU-Sim spellings)
_ALIASES = {
    "-gmem_skip_L1D": "-gpgpu_gmem_skip_L1D",
    "-ptx_opcode_latency_tensor": "-ptx_opcode_latency_tesnor",
}

#: options read without a default (their absence changes the reading)
_NO_DEFAULT = ("-gpgpu_ptx_force_max_capability",)

#: Accel-Sim's built-in trace-mode values (``<latency>,<initiation>``)
TRACE_DEFAULTS: dict[str, str] = {
    "-trace_opcode_latency_initiation_int": "4,1",
    "-trace_opcode_latency_initiation_sp": "4,1",
    "-trace_opcode_latency_initiation_dp": "4,1",
    "-trace_opcode_latency_initiation_sfu": "4,1",
    "-trace_opcode_latency_initiation_tensor": "4,1",
}
_SPEC_UNIT = re.compile(r"-specialized_unit_(\d+)")
_SPEC_OP = re.compile(r"-trace_opcode_latency_initiation_spec_op_(\d+)")

_SCHEDULER_NAMES = {"lrr": "lrr", "gto": "gto", "two_level_active": "two-level", "old": "oldest"}

# PTX-mode list positions: <ADD, MAX, MUL, MAD, DIV[, SHFL]>
_ADD, _MAD = 0, 3


@dataclass(frozen=True)
class Option:
    value: str
    line: int


@dataclass(frozen=True)
class GpgpusimImport:
    """What :func:`import_gpgpusim_config` read.

    ``spec`` is the result; ``used`` maps every option the reader took from a
    file to its raw value; ``defaulted`` lists the options it needed and took
    GPGPU-Sim's default for; ``skipped`` lists the options present in the
    file(s) that it does not use.
    """

    spec: sm.SMSpec
    path: Path
    trace_path: Path | None
    used: dict[str, str] = field(default_factory=dict)
    defaulted: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()


# ---------------------------------------------------------------- tokenizer
def parse_option_file(path: str | os.PathLike) -> dict[str, Option]:
    """Options of a GPGPU-Sim option file: ``{"-name": Option(value, line)}`` (last one wins)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ParseError(str(path), None, f"cannot read: {e.strerror or e}") from None
    tokens = _tokens(text, str(path))
    out: dict[str, Option] = {}
    i = 0
    while i < len(tokens):
        tok, line = tokens[i]
        if not tok.startswith("-") or len(tok) < 2:
            raise ParseError(str(path), line, f"expected an option name (-name), found {tok!r}")
        if i + 1 >= len(tokens):
            raise ParseError(str(path), line, f"option {tok}: missing value")
        out.pop(tok, None)  # keep file order of the last occurrence
        out[tok] = Option(tokens[i + 1][0], line)
        i += 2
    return out


def _tokens(text: str, label: str) -> list[tuple[str, int]]:
    """White-space separated tokens with their line numbers; ``"..."`` may span lines."""
    tokens: list[tuple[str, int]] = []
    buf: list[str] = []
    start = 0
    quoted = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw if quoted else raw.split("#", 1)[0]
        j = 0
        while j < len(line):
            ch = line[j]
            if quoted:
                if ch == '"':
                    quoted = False
                    tokens.append(("".join(buf), start))
                    buf = []
                else:
                    buf.append(ch)
            elif ch == '"':
                if buf:
                    tokens.append(("".join(buf), start))
                    buf = []
                quoted, start = True, lineno
            elif ch.isspace():
                if buf:
                    tokens.append(("".join(buf), start))
                    buf = []
            elif ch == "#":
                break
            else:
                if not buf:
                    start = lineno
                buf.append(ch)
            j += 1
        if quoted:
            buf.append(" ")  # a quoted value continues on the next line
        elif buf:
            tokens.append(("".join(buf), start))
            buf = []
    if quoted:
        raise ParseError(label, start, "unterminated double-quoted value")
    return tokens


# ---------------------------------------------------------------- value readers
def _shmem_banks(r: _Reader) -> None:
    """Shared memory's banks as a trace counts their conflicts (``Trace.smem_passes``, taken when the trace
    is recorded): 32 four-byte banks, a whole warp checked at once, any number of lanes on one word served
    together.  A config that sets another arrangement is refused rather than run with conflicts it did not
    ask for; one that sets none gets that arrangement (GPGPU-Sim's own built-in defaults, 16 banks, two
    warp parts and a limited broadcast, are not taken: every config it ships sets the three as here)."""
    for name, want, what in (
        ("-gpgpu_shmem_num_banks", "32", "32 (the banks a trace's shared accesses are counted over)"),
        ("-gpgpu_shmem_warp_parts", "1", "1 (a trace counts a warp's shared access as a whole)"),
        ("-gpgpu_shmem_limited_broadcast", "0", "0 (a trace lets any lanes on one word share a pass)"),
    ):
        if name in r.opts:
            v, line = r.raw(name)
            if (v or "").strip() != want:
                r.fail(name, line, v, what)


class _Reader:
    """Looks options up (file first, then defaults) and converts values with located errors."""

    def __init__(self, label: str, opts: dict[str, Option], defaults: dict[str, str]):
        self.label, self.opts, self.defaults = label, opts, defaults
        self.used: dict[str, str] = {}
        self.defaulted: list[str] = []
        for alias, name in _ALIASES.items():
            if alias in opts and name not in opts:
                opts[name] = opts[alias]

    def raw(self, name: str) -> tuple[str | None, int | None]:
        opt = self.opts.get(name)
        if opt is not None:
            self.used[name] = opt.value
            return opt.value, opt.line
        if name in self.defaults:
            if name not in self.defaulted:
                self.defaulted.append(name)
            return self.defaults[name], None
        return None, None

    def fail(self, name: str, line: int | None, value: str, expected: str):
        where = self.label if line is not None else f"{self.label} (built-in default)"
        raise ParseError(where, line, f"option {name}: bad value {value!r}; expected {expected}")

    def int(self, name: str, lo: int = 0) -> int:
        v, line = self.raw(name)
        try:
            x = int(v.strip())
        except (ValueError, AttributeError):
            self.fail(name, line, v, "an integer")
        if x < lo:
            self.fail(name, line, v, f"an integer >= {lo}")
        return x

    def bool(self, name: str) -> bool:
        v, line = self.raw(name)
        s = (v or "").strip()
        if s not in ("0", "1"):
            self.fail(name, line, v, "0 or 1")
        return s == "1"

    def _split(self, name: str, sep: str, kind, expected: str) -> tuple[list, str | None, int | None]:
        """The option's ``sep``-separated values as ``kind`` (a bad one fails, expecting ``expected``), its
        raw value and its line."""
        v, line = self.raw(name)
        try:
            return [kind(p.strip()) for p in (v or "").split(sep)], v, line
        except ValueError:
            self.fail(name, line, v, expected)

    def ints(self, name: str, sep: str, min_len: int, lo: int = 0) -> list[int]:
        xs, v, line = self._split(name, sep, int, f"{sep!r}-separated integers")
        if len(xs) < min_len or any(x < lo for x in xs):
            self.fail(name, line, v, f"at least {min_len} {sep!r}-separated integers >= {lo}")
        return xs

    def floats(self, name: str, sep: str, n: int) -> list[float]:
        xs, v, line = self._split(name, sep, float, f"{n} {sep!r}-separated numbers")
        if len(xs) != n or any(not x > 0 for x in xs):
            self.fail(name, line, v, f"{n} {sep!r}-separated positive numbers")
        return xs


@dataclass(frozen=True)
class _Cache:
    sectored: bool
    sets: int
    line: int
    assoc: int
    mshr: int
    #: the MSHR's merge limit and the miss queue's entries (0: not given)
    merge: int = 0
    miss_queue: int = 0
    #: the allocation policy's letter: m (on miss), f (on fill), s (streaming)
    alloc: str = "m"
    #: the policy's other letters: write (R, B, T, E, L), write allocation (N, W, F, L), index (L, H, P, X)
    #: (a policy that stops after the allocation letter keeps rfmodel's defaults: write-allocate, linear)
    write: str = "T"
    write_alloc: str = "W"
    index: str = "L"

    @property
    def size(self) -> int:
        return self.sets * self.line * self.assoc


def _cache(r: _Reader, name: str) -> _Cache | None:
    """``[N|S:]<nsets>:<bsize>:<assoc>,<rep>:<wr>:<alloc>:<wr_alloc>[:<idx>],<mshr>:<N>:<merge>,...``."""
    v, line = r.raw(name)
    text = (v or "").strip()
    if text.lower() == "none":
        return None
    groups = text.split(",")
    geo = groups[0].split(":")
    sectored = False
    if geo and geo[0].strip() in ("N", "S"):
        sectored = geo[0].strip() == "S"
        geo = geo[1:]
    expected = "[N|S:]<nsets>:<line>:<assoc>,<policy>,<mshr type>:<entries>:<merge>,..."
    if len(geo) != 3 or len(groups) < 3:
        r.fail(name, line, v, expected)
    try:
        sets, bsize, assoc = (int(x) for x in geo)
        mshr_fields = groups[2].split(":")
        mshr = int(mshr_fields[1])
        merge = int(mshr_fields[2]) if len(mshr_fields) > 2 and mshr_fields[2].strip() else 0
        miss_queue = int(groups[3].split(":")[0]) if len(groups) > 3 and groups[3].strip() else 0
    except (ValueError, IndexError):
        r.fail(name, line, v, expected)
    if sets < 1 or bsize < 1 or assoc < 1 or mshr < 0 or merge < 0 or miss_queue < 0:
        r.fail(name, line, v, expected + " with positive sizes")
    policy = groups[1].split(":")
    alloc = policy[2].strip() if len(policy) > 2 else "m"
    if alloc not in ("m", "f", "s"):
        r.fail(
            name,
            line,
            v,
            expected + " with an allocation policy of m (on miss), f (on fill) or s (streaming)",
        )
    letters = [x.strip() for x in policy] + ["", "", "", "", ""]
    return _Cache(
        sectored,
        sets,
        bsize,
        assoc,
        mshr,
        merge,
        miss_queue,
        alloc,
        letters[1] or "T",
        letters[3] or "W",
        letters[4] or "L",
    )


def _l1d_policy(r: _Reader, dl1: _Cache) -> dict:
    """The L1D's write allocation and set index from its policy letters; a write policy rfmodel's L1D does
    not have (it writes every store through to L2) or an index function it does not compute is refused."""
    v, line = r.raw("-gpgpu_cache:dl1")
    expected = "[N|S:]<nsets>:<line>:<assoc>,<policy>,<mshr type>:<entries>:<merge>,..."
    if dl1.write not in ("T", "L"):
        r.fail(
            "-gpgpu_cache:dl1",
            line,
            v,
            expected + " with the write policy T (write-through) or L (local "
            "write-back, global write-evict: l1d.store_hit_evicts; rfmodel writes local stores through "
            "too): B (write-back), E (write-evict of every store) and R (read-only) are not "
            "modelled",
        )
    if dl1.write_alloc not in ("N", "W", "F", "L"):
        r.fail(
            "-gpgpu_cache:dl1",
            line,
            v,
            expected + " with the write allocation N (no), W, F or L "
            "(allocate: rfmodel's line is ready at once for all three)",
        )
    if dl1.index not in ("L", "H"):
        r.fail(
            "-gpgpu_cache:dl1",
            line,
            v,
            expected + " with the set index L (linear) or H (the Fermi "
            "hash): P (IPOLY) and X (bitwise XOR) are not modelled",
        )
    return {
        "write_allocate": dl1.write_alloc != "N",
        "store_hit_evicts": dl1.write == "L",
        "set_index": "fermi-hash" if dl1.index == "H" else "linear",
    }


def _l2_banks(dl2: _Cache | None, banks: int) -> sm.L2Spec | None:
    """The L2's banks (one per memory sub-partition) with the dl2's ways and set index; an index rfmodel does
    not compute (H, or P over a set count its IPOLY hash has no equations for) leaves the L2 as one cache of
    the SM's slice (None)."""
    if dl2 is None or not (dl2.index in ("L", "X") or (dl2.index == "P" and dl2.sets in sm.IPOLY_SETS)):
        return None
    index = {"L": "linear", "P": "ipoly", "X": "xor"}[dl2.index]
    return sm.L2Spec(banks=banks, assoc=dl2.assoc, set_index=index)


def _pair(r: _Reader, name: str) -> tuple[int, int]:
    lat, ii = r.ints(name, ",", 2)[:2]
    if lat < 1:
        v, line = r.raw(name)
        r.fail(name, line, v, "<latency>,<initiation> with latency >= 1")
    return lat, ii


def _pipeline(r: _Reader) -> tuple[int, int]:
    """The SM's threads and warp size (``-gpgpu_shader_core_pipeline``, ``<threads>:<warp size>``)."""
    v, line = r.raw("-gpgpu_shader_core_pipeline")
    m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", v or "")
    if not m or int(m.group(2)) == 0 or int(m.group(1)) % int(m.group(2)):
        r.fail(
            "-gpgpu_shader_core_pipeline", line, v, "<threads>:<warp size>, threads a multiple of warp size"
        )
    threads, warp_size = int(m.group(1)), int(m.group(2))
    return threads, warp_size


def _scheduler(r: _Reader) -> str:
    """The warp scheduler's policy (``-gpgpu_scheduler``) as rfmodel names it."""
    v, line = r.raw("-gpgpu_scheduler")
    policy = (v or "").strip().split(":", 1)[0]
    if policy not in _SCHEDULER_NAMES:
        r.fail("-gpgpu_scheduler", line, v, "lrr, gto, old or two_level_active:<n>:<inner>:<outer>")
    if policy == "two_level_active":
        fields = (v or "").split(":")
        if len(fields) != 4 or not all(f.strip().isdigit() for f in fields[1:]):
            r.fail("-gpgpu_scheduler", line, v, "two_level_active:<active warps>:<inner>:<outer>")
    scheduler = _SCHEDULER_NAMES[policy]
    return scheduler


def _collectors(r: _Reader) -> sm.CollectorSpec:
    """The operand collector units: the general ones and, with specialized collectors, each type's."""
    specialized = r.bool("-gpgpu_enable_specialized_operand_collector")
    gen = r.int("-gpgpu_operand_collector_num_units_gen")
    typed = (
        {
            key: r.int(f"-gpgpu_operand_collector_num_units_{opt}")
            for key, opt in (
                ("sp", "sp"),
                ("sfu", "sfu"),
                ("mem", "mem"),
                ("tensor", "tensor_core"),
                ("dp", "dp"),
                ("int", "int"),
            )
        }
        if specialized
        else dict.fromkeys(("sp", "sfu", "mem", "tensor", "dp", "int"), 0)
    )
    collectors = sm.CollectorSpec(gen=gen, **typed)
    return collectors


def _l1d(r: _Reader) -> sm.L1DSpec:
    """The L1 data cache: its geometry and policies (``-gpgpu_cache:dl1``), latency, banks, the unified
    L1D/shared-memory carve-out and whether global accesses skip it."""
    dl1 = _cache(r, "-gpgpu_cache:dl1")
    l1_latency = r.int("-gpgpu_l1_latency", 1)
    l1_banks = r.int("-gpgpu_l1_banks", 1)
    unified_kb = r.int("-gpgpu_unified_l1d_size")
    adaptive = r.bool("-gpgpu_adaptive_cache_config")
    options = ()
    if adaptive and unified_kb and dl1 is not None:  # the carve-out's shared-memory sizes, KB in the config
        v, line = r.raw("-gpgpu_shmem_option")
        try:
            options = tuple(sorted(int(x) * 1024 for x in str(v).split(",") if x.strip()))
        except ValueError:
            r.fail("-gpgpu_shmem_option", line, v, "a comma-separated list of sizes in KB")
    skip_l1 = r.bool("-gpgpu_gmem_skip_L1D")
    l1d = sm.L1DSpec(
        size_bytes=dl1.size if dl1 else 0,
        assoc=dl1.assoc if dl1 else 1,
        line_bytes=dl1.line if dl1 else 128,
        sectored=dl1.sectored if dl1 else False,
        mshr_entries=dl1.mshr if dl1 else 0,
        mshr_merge=dl1.merge if dl1 else 0,
        miss_queue_entries=dl1.miss_queue if dl1 else 0,
        allocate_on_miss=dl1.alloc == "m" if dl1 else True,
        **(_l1d_policy(r, dl1) if dl1 else {}),
        hit_latency_cycles=l1_latency,
        banks=l1_banks,
        unified_bytes=unified_kb * 1024,
        adaptive=adaptive,
        shmem_options=options,
        bypass_global=skip_l1,
    )
    return l1d


def _icache(r: _Reader) -> sm.ICacheSpec:
    """The instruction cache and fetch (a perfect cache, or none configured: every fetch hits)."""
    il1 = _cache(r, "-gpgpu_cache:il1")
    perfect_inst = r.bool("-gpgpu_perfect_inst_const_cache")
    icache = sm.ICacheSpec(
        size_bytes=0 if perfect_inst or il1 is None else il1.size,
        assoc=il1.assoc if il1 else 1,
        line_bytes=il1.line if il1 else 128,
        mshr_entries=max(il1.mshr, 1) if il1 else 1,
        fetch_per_cycle=r.int("-gpgpu_inst_fetch_throughput", 1),
        allocate_on_miss=bool(il1 and il1.alloc == "m"),
    )
    return icache


# ---------------------------------------------------------------- import
def import_gpgpusim_config(
    path: str | os.PathLike, *, trace_config: str | os.PathLike | bool | None = None, name: str | None = None
) -> GpgpusimImport:
    """Read a ``gpgpusim.config`` (and ``trace.config``) into an :class:`~rfmodel.spec.sm.SMSpec`.

    ``trace_config``: ``None`` reads ``trace.config`` beside the file if it
    exists, ``False`` ignores it, a path reads that file.  ``name`` defaults
    to the folder name.
    """
    path = Path(path)
    label = str(path)
    opts = parse_option_file(path)
    r = _Reader(label, opts, GPGPUSIM_DEFAULTS)

    # ---- threads, warps, CTAs
    threads, warp_size = _pipeline(r)
    warps = threads // warp_size

    clusters = r.int("-gpgpu_n_clusters", 1)
    per_cluster = r.int("-gpgpu_n_cores_per_cluster", 1)
    core_mhz, icnt_mhz, _l2, dram_mhz = r.floats("-gpgpu_clock_domains", ":", 4)

    # ---- scheduling
    scheduler = _scheduler(r)
    schedulers = r.int("-gpgpu_num_sched_per_core", 1)
    issue = r.int("-gpgpu_max_insn_issue_per_warp", 1)
    dual_diff = r.bool("-gpgpu_dual_issue_diff_exec_units")
    sub_core = r.bool("-gpgpu_sub_core_model")

    # ---- operand collectors
    collectors = _collectors(r)

    # ---- register file
    banks = r.int("-gpgpu_num_reg_banks", 1)
    port_throughput = r.int("-gpgpu_reg_file_port_throughput", 1)
    regs = r.int("-gpgpu_shader_registers", 1)
    regs_per_block = r.int("-gpgpu_registers_per_block", 1)
    cc_major = _compute_major(r)
    old_isa = cc_major < 3  # Fermi and older: 63 registers per thread, 64-register warp granules

    # ---- CTAs and shared memory
    max_ctas = r.int("-gpgpu_shader_cta", 1)
    shmem = r.int("-gpgpu_shmem_size")
    shmem_cta = min(r.int("-gpgpu_shmem_per_block"), shmem)
    _shmem_banks(r)

    # ---- caches and memory
    l1d = _l1d(r)
    # the interconnect port of the SM: intersim moves flits; the local crossbar (-network_mode 2) a packet
    # a cycle whatever its size
    network_mode = r.int("-network_mode")
    if network_mode not in (1, 2):
        v, line = r.raw("-network_mode")
        r.fail("-network_mode", line, v, "1 (intersim) or 2 (local crossbar)")
    flit = r.int("-icnt_flit_size", 1) if network_mode == 1 else 1 << 16
    icache = _icache(r)  # and the instruction fetch
    smem_latency = r.int("-gpgpu_smem_latency", 1)
    rop_latency = r.int("-gpgpu_l2_rop_latency", 1)
    # a packet's fixed time in intersim's routers and channels, each way (the SM's ports model its flits);
    # the local crossbar moves it in the cycle it wins
    icnt_cycles = _intersim_traversal(r, path.parent) * core_mhz / icnt_mhz if network_mode == 1 else 0.0
    # a DRAM read opens its row and reads its column (tRCD + CL, in DRAM command cycles) beyond the config's
    # fixed -dram_latency; rfmodel's DRAM has no banks or rows, so every access pays both (measured on
    # Accel-Sim with a chain of dependent loads to distinct lines: docs/simulator.md)
    timing = _dram_timing(r)
    dram_latency = r.int("-dram_latency") + round((timing["RCD"] + timing["CL"]) * core_mhz / dram_mhz)
    n_mem = r.int("-gpgpu_n_mem", 1)
    sub_parts = r.int("-gpgpu_n_sub_partition_per_mchannel", 1)
    dl2 = _cache(r, "-gpgpu_cache:dl2")
    l2_size = dl2.size * n_mem * sub_parts if dl2 else 0
    l2 = _l2_banks(dl2, n_mem * sub_parts)
    chips = r.int("-gpgpu_n_mem_per_ctrlr", 1)
    bus_bytes = r.int("-gpgpu_dram_buswidth", 1)
    freq_ratio = r.int("-dram_data_command_freq_ratio", 1)
    dram = _dram(r, timing, n_mem, sub_parts, chips, bus_bytes, freq_ratio, dram_mhz)
    num_sms = clusters * per_cluster
    # bytes per DRAM command clock = chips x bus width x data/command ratio, per channel
    chip_bw = n_mem * chips * bus_bytes * freq_ratio * dram_mhz / core_mhz
    mem_bw = round(chip_bw / num_sms, 3)

    latency = _ptx_latencies(r)
    trace_path = _trace_path(path, trace_config)
    trace_skipped: list[str] = []
    trace_used: dict[str, str] = {}
    special: dict = {}
    if trace_path is not None:
        latency, trace_used, trace_skipped, special = _trace_latencies(trace_path, latency)
    exec_units = _exec_units(r, special)

    spec = sm.SMSpec(
        name=name or path.parent.name or "gpgpusim",
        source=f"GPGPU-Sim config {path.parent.name}/{path.name}"
        + (f" + {trace_path.name}" if trace_path else ""),
        num_sms=num_sms,
        clock_mhz=core_mhz,
        warps_per_sm=warps,
        threads_per_warp=warp_size,
        max_ctas_per_sm=max_ctas,
        max_threads_per_cta=min(1024, threads),
        schedulers_per_sm=schedulers,
        issue_width=issue,
        dual_issue_diff_units=dual_diff,
        scheduler=scheduler,
        sub_core=sub_core,
        collectors=collectors,
        collector_read_ports=0,
        num_banks=banks,
        bank_read_ports=0,
        bank_write_ports=0,
        bank_rw_ports=port_throughput,
        bank_width_bits=32 * warp_size,
        bank_mapping="gpgpusim",
        regs_per_sm=regs,
        max_regs_per_thread=63 if old_isa else 255,
        reg_alloc_granularity=64 if old_isa else 256,
        regs_per_cta_limit=regs_per_block,
        shmem_per_sm_bytes=shmem,
        shmem_per_cta_bytes=shmem_cta,
        latency=latency,
        l1d=l1d,
        icache=icache,
        exec_units=exec_units,
        icnt_flit_bytes=flit,
        icnt_clock_mhz=icnt_mhz,
        l2_sector_bytes=32 if dl2 is not None and dl2.sectored else None,
        dram=dram,
        smem_latency_cycles=smem_latency,
        l2_hit_latency_cycles=rop_latency + round(2 * icnt_cycles) + GPGPUSIM_QUEUE_HOPS,
        dram_latency_cycles=dram_latency,
        l2_size_bytes=l2_size,
        l2=l2,
        mem_bw_bytes_per_cycle=mem_bw,
    )
    read = set(r.used) | set(r.defaulted) | set(_ALIASES)
    skipped = tuple(k for k in opts if k not in read) + tuple(trace_skipped)
    used = dict(r.used)
    used.update(trace_used)
    return GpgpusimImport(spec, path, trace_path, used, tuple(r.defaulted), skipped)


#: -gpgpu_dram_timing_opt's fields in its positional form
_DRAM_TIMING = (
    "nbk",
    "CCD",
    "RRD",
    "RCD",
    "RAS",
    "RP",
    "RC",
    "CL",
    "WL",
    "CDLR",
    "WR",
    "nbkgrp",
    "CCDL",
    "RTPL",
)


#: one-cycle queue hops on GPGPU-Sim's path from an L1 miss to its fill that rfmodel's memory stages do not
#: have: the L1's miss queue to the interconnect, the ROP delay queue to the L2's input queue, the L2's reply
#: queue to the interconnect, and the cluster's response FIFO to the L1 (an imported config's L2 hit latency
#: adds them to the ROP latency; measured with ``calib/accelsim_latency.py``: the L2 path was 4.0 cycles short
#: on SM7_QV100_1SM and, with intersim's traversals added, 4.2 on SM2_GTX480_1SM)
GPGPUSIM_QUEUE_HOPS = 4

#: booksim's own defaults for the router delays intersim reads (``booksim_config.cpp``)
INTERSIM_DELAYS = {
    "routing_delay": 1,
    "vc_alloc_delay": 1,
    "sw_alloc_delay": 1,
    "st_prepare_delay": 0,
    "st_final_delay": 1,
}


def _intersim_traversal(r: _Reader, folder: Path) -> int:
    """Interconnect cycles a packet's head flit spends crossing intersim's network (``-network_mode 1``),
    from the ``-inter_config_file`` beside the config: the injection and ejection channels (one cycle each,
    booksim's channel delay), and per router the input-queued router's pipeline, routing + VC allocation +
    switch allocation + switch traversal (``routing_delay + vc_alloc_delay + sw_alloc_delay +
    st_prepare_delay + st_final_delay``, booksim's defaults where the file leaves one out), with a one-cycle
    channel between routers: ``n`` routers for the ``fly`` topology (a packet crosses every stage), one for
    any other (its hop count depends on the route and is not followed).  A file that cannot be read takes
    booksim's defaults and the option is listed as defaulted."""
    v, line = r.raw("-inter_config_file")
    delays = dict(INTERSIM_DELAYS)
    routers = 1
    f = Path((v or "").strip())
    f = f if f.is_absolute() else folder / f
    try:
        text = f.read_text(encoding="utf-8", errors="replace")
    except OSError:  # none readable (GPGPU-Sim's default names a file "mesh"): booksim's defaults
        if "-inter_config_file" not in r.defaulted:
            r.defaulted.append("-inter_config_file")
        return 2 + sum(delays.values())
    opts = {}
    for m in re.finditer(r"([A-Za-z_]\w*)\s*=\s*([^;]*);", re.sub(r"//[^\n]*", "", text)):
        opts[m.group(1)] = m.group(2).strip()

    def integer(k: str, lo: int) -> int:
        try:
            x = int(opts[k])
        except ValueError:
            x = lo - 1
        if x < lo:
            raise ParseError(str(f), None, f"option {k}: bad value {opts[k]!r}; expected an integer >= {lo}")
        r.used[f"{f.name}:{k}"] = opts[k]
        return x

    for k in delays:
        if k in opts:
            delays[k] = integer(k, 0)
    if opts.get("topology", "").strip() == "fly" and "n" in opts:
        routers = integer("n", 1)
    return 2 + routers * sum(delays.values()) + (routers - 1)


#: -gpgpu_memory_partition_indexing's values rfmodel's DRAM channels take (3, custom, and 4, random, not)
_CHANNEL_HASH = {0: "none", 1: "xor", 2: "ipoly"}


def _dram(
    r: _Reader,
    timing: dict[str, int],
    n_mem: int,
    sub_parts: int,
    chips: int,
    bus_bytes: int,
    freq_ratio: int,
    dram_mhz: float,
) -> sm.DramSpec | None:
    """The DRAM's channels, banks and rows: ``-gpgpu_mem_addr_mapping``, the channel hash, the timing
    option's banks and times, and a column read's burst.  None (every access then takes the DRAM latency)
    for a config without an address map (GPGPU-Sim decodes with a built-in mask), with a channel hash
    rfmodel does not have (3 and above) or a layout :class:`DramSpec` refuses; the import then lists the
    address map and the hash among the options it did not take."""
    text, line = r.raw("-gpgpu_mem_addr_mapping")
    if not text or not text.strip():
        return None
    hash_v, hash_line = r.raw("-gpgpu_memory_partition_indexing")

    def not_taken():
        for name in ("-gpgpu_mem_addr_mapping", "-gpgpu_memory_partition_indexing"):
            r.used.pop(name, None)
            if name in r.defaulted:
                r.defaulted.remove(name)

    try:
        hashing = _CHANNEL_HASH.get(int((hash_v or "0").strip()))
    except ValueError:
        r.fail("-gpgpu_memory_partition_indexing", hash_line, hash_v, "an integer")
    if hashing is None:
        not_taken()
        return None
    bl = r.int("-gpgpu_dram_burst_length", 1)
    groups = max(timing["nbkgrp"], 1)
    try:
        return sm.DramSpec(
            channels=n_mem,
            sub_partitions=sub_parts if hashing != "none" else 1,
            banks=timing["nbk"],
            bank_groups=groups,
            clock_mhz=dram_mhz,
            address_map=text.strip(),
            channel_hash=hashing,
            t_rcd=timing["RCD"],
            t_rp=timing["RP"],
            t_ras=timing["RAS"],
            t_rc=timing["RC"],
            t_rrd=timing["RRD"],
            t_ccd=timing["CCD"],
            t_ccdl=timing["CCDL"] if groups > 1 else 0,
            t_cl=timing["CL"],
            burst_cycles=max(bl // max(freq_ratio, 1), 1),
            atom_bytes=bl * bus_bytes * chips,
        )
    except SpecError:
        not_taken()
        return None


def _dram_timing(r: _Reader) -> dict[str, int]:
    """``-gpgpu_dram_timing_opt``, positional (``4:2:8:...``) or by name (``nbk=16:CCD=2:...``)."""
    v, line = r.raw("-gpgpu_dram_timing_opt")
    parts = [p.strip() for p in (v or "").split(":") if p.strip()]
    expected = "<nbk>:<tCCD>:<tRRD>:<tRCD>:... or nbk=<n>:CCD=<n>:...:RCD=<n>:...:CL=<n>:..."
    # a timing the option leaves out takes GPGPU-Sim's built-in default
    out = dict(
        zip(
            _DRAM_TIMING,
            (int(x) for x in GPGPUSIM_DEFAULTS["-gpgpu_dram_timing_opt"].split(":")),
            strict=True,
        )
    )
    try:
        if parts and all("=" in p for p in parts):
            out.update({k.strip(): int(x) for k, x in (p.split("=", 1) for p in parts)})
        else:
            out.update(zip(_DRAM_TIMING, (int(p) for p in parts), strict=False))
    except ValueError:
        r.fail("-gpgpu_dram_timing_opt", line, v, expected)
    if out["RCD"] < 0 or out["CL"] < 0:
        r.fail("-gpgpu_dram_timing_opt", line, v, expected)
    return out


#: OC_EX positions of ``-gpgpu_pipeline_widths``: GPGPU-Sim 4's 11 or 13 stages (``ID_OC_SP, ID_OC_DP,
#: ID_OC_INT, ID_OC_SFU, ID_OC_MEM, OC_EX_SP, OC_EX_DP, OC_EX_INT, OC_EX_SFU, OC_EX_MEM, EX_WB[,
#: ID_OC_TENSOR_CORE, OC_EX_TENSOR_CORE]``) and GPGPU-Sim 3's 7 (``ID_OC_SP, ID_OC_SFU, ID_OC_MEM, OC_EX_SP,
#: OC_EX_SFU, OC_EX_MEM, EX_WB``)
_OC_EX = {
    13: {"sp": 5, "dp": 6, "int": 7, "sfu": 8, "mem": 9, "tensor": 12},
    11: {"sp": 5, "dp": 6, "int": 7, "sfu": 8, "mem": 9},
    7: {"sp": 3, "sfu": 4, "mem": 5},
}


def _exec_units(r: _Reader, special: dict) -> sm.ExecUnitSpec:
    """``-gpgpu_num_*_units``, the OC_EX widths of ``-gpgpu_pipeline_widths`` and an enabled specialized
    ``BRA`` unit of the trace config (Volta's branch unit) as :class:`~rfmodel.spec.sm.ExecUnitSpec`."""
    units = {
        t: r.int(f"-gpgpu_num_{opt}_units")
        for t, opt in (("sp", "sp"), ("sfu", "sfu"), ("dp", "dp"), ("int", "int"), ("tensor", "tensor_core"))
    }
    widths = r.ints("-gpgpu_pipeline_widths", ",", 7)
    pos = _OC_EX.get(len(widths))
    if pos is None:
        v, line = r.raw("-gpgpu_pipeline_widths")
        r.fail("-gpgpu_pipeline_widths", line, v, "7 (GPGPU-Sim 3), 11 or 13 comma-separated widths")
    if units["sp"] < 1 or units["sfu"] < 1:
        v, line = r.raw("-gpgpu_num_sp_units" if units["sp"] < 1 else "-gpgpu_num_sfu_units")
        r.fail("-gpgpu_num_sp_units" if units["sp"] < 1 else "-gpgpu_num_sfu_units", line, v, "at least 1")
    w = {t: max(widths[i], 1) for t, i in pos.items()}
    bra_units, bra_width = special.get("BRA", (0, 1))
    return sm.ExecUnitSpec(
        **units,
        branch=bra_units,
        **{f"{t}_width": w.get(t, 1) for t in units},
        branch_width=max(bra_width, 1),
        mem_width=w["mem"],
    )


def _compute_major(r: _Reader) -> int:
    if "-gpgpu_compute_capability_major" in r.opts:
        return r.int("-gpgpu_compute_capability_major")
    v, line = r.raw("-gpgpu_ptx_force_max_capability")
    if v is not None:
        try:
            return int(v.strip()) // 10
        except ValueError:
            r.fail("-gpgpu_ptx_force_max_capability", line, v, "an integer such as 52")
    return r.int("-gpgpu_compute_capability_major")


def _ptx_latencies(r: _Reader) -> sm.LatencySpec:
    """PTX-mode timings: int <- ADD slot, fp32 and fp64 <- MAD slot (FFMA/DFMA dominate)."""
    lat_int = r.ints("-ptx_opcode_latency_int", ",", _MAD + 1, 1)
    ii_int = r.ints("-ptx_opcode_initiation_int", ",", _MAD + 1)
    lat_fp = r.ints("-ptx_opcode_latency_fp", ",", _MAD + 1, 1)
    ii_fp = r.ints("-ptx_opcode_initiation_fp", ",", _MAD + 1)
    lat_dp = r.ints("-ptx_opcode_latency_dp", ",", _MAD + 1, 1)
    ii_dp = r.ints("-ptx_opcode_initiation_dp", ",", _MAD + 1)
    lat_sfu = r.ints("-ptx_opcode_latency_sfu", ",", 1, 1)[0]
    ii_sfu = r.ints("-ptx_opcode_initiation_sfu", ",", 1)[0]
    lat_tc = r.ints("-ptx_opcode_latency_tesnor", ",", 1, 1)[0]
    ii_tc = r.ints("-ptx_opcode_initiation_tensor", ",", 1)[0]
    return sm.LatencySpec(
        int=(lat_int[_ADD], ii_int[_ADD]),
        fp32=(lat_fp[_MAD], ii_fp[_MAD]),
        fp64=(lat_dp[_MAD], ii_dp[_MAD]),
        sfu=(lat_sfu, ii_sfu),
        tensor=(lat_tc, ii_tc),
    )


def _trace_path(path: Path, trace_config) -> Path | None:
    if trace_config is False:
        return None
    if trace_config is None or trace_config is True:
        candidate = path.parent / "trace.config"
        if candidate.is_file():
            return candidate
        if trace_config is True:
            raise ParseError(str(candidate), None, "cannot read: no trace.config beside the GPGPU-Sim config")
        return None
    return Path(trace_config)


def _trace_latencies(
    path: Path, ptx: sm.LatencySpec
) -> tuple[sm.LatencySpec, dict[str, str], list[str], dict]:
    """Trace-mode timings replace the PTX ones for int, fp32, fp64, sfu, tensor, branch and misc.

    Accel-Sim gives ALU, branch and call/return instructions the ``int``
    pair, so ``branch`` and ``misc`` take it too, unless an enabled
    specialized unit named ``BRA`` (or ``TENSOR``) supplies its own pair.  Also returns the enabled
    specialized units by name: ``{name: (units, OC_EX width)}``.
    """
    opts = parse_option_file(path)
    r = _Reader(str(path), opts, TRACE_DEFAULTS)
    t_int = _pair(r, "-trace_opcode_latency_initiation_int")
    t_sp = _pair(r, "-trace_opcode_latency_initiation_sp")
    t_dp = _pair(r, "-trace_opcode_latency_initiation_dp")
    t_sfu = _pair(r, "-trace_opcode_latency_initiation_sfu")
    t_tc = _pair(r, "-trace_opcode_latency_initiation_tensor")
    branch = t_int
    special: dict = {}
    # specialized units: "<enabled>,<num units>,<max latency>,<ID_OC>,<OC_EX>,<NAME>"
    for key, opt in list(opts.items()):
        m = _SPEC_UNIT.fullmatch(key)
        if not m:
            continue
        r.raw(key)
        fields = [f.strip() for f in opt.value.split(",")]
        if len(fields) != 6 or fields[0] not in ("0", "1") or not all(f.isdigit() for f in fields[1:5]):
            r.fail(key, opt.line, opt.value, "<enabled>,<units>,<max latency>,<ID_OC>,<OC_EX>,<NAME>")
        if fields[0] != "1":
            continue
        special[fields[5].upper()] = (int(fields[1]), int(fields[4]))
        op_key = f"-trace_opcode_latency_initiation_spec_op_{m.group(1)}"
        if op_key not in opts:
            continue
        pair = _pair(r, op_key)
        if fields[5].upper() == "BRA":
            branch = pair
        elif fields[5].upper() == "TENSOR":
            t_tc = pair
    for key in opts:  # spec_op values of disabled units are still checked
        if _SPEC_OP.fullmatch(key) and key not in r.used:
            _pair(r, key)
    lat = ptx.replace(int=t_int, fp32=t_sp, fp64=t_dp, sfu=t_sfu, tensor=t_tc, branch=branch, misc=t_int)
    read = set(r.used) | set(r.defaulted)
    skipped = [k for k in opts if k not in read]
    return lat, dict(r.used), skipped, special


def from_gpgpusim_config(path, *, trace_config=None, name: str | None = None) -> sm.SMSpec:
    """Read a GPGPU-Sim ``gpgpusim.config`` (and the ``trace.config`` beside it, if any) into an SMSpec.

    Options not set take GPGPU-Sim's built-in defaults; options this reader does not use are listed in
    the returned spec's ``skipped_options`` attribute (a tuple; not a field, so it is not saved or
    compared).  ``trace_config=False`` ignores ``trace.config``, a path reads that file instead.  For
    everything the reader saw, use :func:`import_gpgpusim_config`.
    """
    result = import_gpgpusim_config(path, trace_config=trace_config, name=name)
    spec = result.spec
    object.__setattr__(spec, "skipped_options", result.skipped)
    return spec
