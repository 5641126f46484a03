"""Named SM presets: the baselines of the source papers and a few real GPUs.

Every value is written out here (no file is read at import time); the fields
several presets share are declared once (``_EVERY_PRESET``, ``_REGS_64K``, the
trace-mode SMs' ``_trace_sm``).  Each preset's ``source`` string says where its
values come from and which ones are our choices where the paper is silent;
``docs/spec.md`` repeats that in a table.  The config-derived presets are checked against
``rfmodel.spec.from_gpgpusim_config`` in the tests, so a drift between this file
and the reference configs shows up there.

Papers are named by title: "Latency-Tolerant Register File" (LTRF),
"Coalescing Operand Register File" (CORF / CORF++), "Register caching in
collector units" (Malekeh), "STT-RAM register file with delta compression and
a centralized write buffer" (STT), "Cache-Emulated Register File" (CERF).
"""

from __future__ import annotations

from rfmodel.errors import UnknownNameError

from .sm import CollectorSpec, L1DSpec, LatencySpec, SMSpec

__all__ = ["PRESETS", "get_preset"]

_KIB = 1024
_MIB = 1024 * 1024

#: the fields every preset shares: 32-thread warps, CTAs of up to 1024 threads, dual issue to different
#: units, and GPGPU-Sim's register file (1024-bit banks mapped its way, no read- or write-only bank ports,
#: collectors reading without a port limit)
_EVERY_PRESET = {
    "threads_per_warp": 32,
    "max_threads_per_cta": 1024,
    "dual_issue_diff_units": True,
    "collector_read_ports": 0,
    "bank_read_ports": 0,
    "bank_write_ports": 0,
    "bank_width_bits": 1024,
    "bank_mapping": "gpgpusim",
}
#: 64K registers per SM and per CTA, up to 255 a thread, allocated per warp in 256-register granules
_REGS_64K = {
    "regs_per_sm": 65536,
    "max_regs_per_thread": 255,
    "reg_alloc_granularity": 256,
    "regs_per_cta_limit": 65536,
}


def _fermi_gtx480() -> SMSpec:
    return SMSpec(
        name="fermi-gtx480",
        source=(
            "Baseline of CORF, STT and CERF (GTX480, Fermi). Paper values: 48 warps, 32768 registers "
            "(128 KB), 16 banks x 1024 bit (STT), 2 GTO schedulers and 8 CTAs / 1536 threads (CERF), "
            "16 KB 4-way 128 B L1D and 48 KB shared memory (CERF), 15 SMs (CORF, CERF; STT says 16), "
            "700 MHz (STT). From GPGPU-Sim config SM2_GTX480: collectors SP 6 / SFU 8 / MEM 2, "
            "port throughput 1, latencies (PTX mode: int ADD 4/1, fp32 MAD 5/1, fp64 MAD 8/8; sfu and "
            "tensor built-in defaults 8/8 and 64/64), L1 hit 35, shared 26, L2 (ROP) 120, DRAM +100, "
            "64 MSHRs, L2 768 KB, bandwidth 6 ch x 2 chips x 4 B x 4 x 924 MHz / 700 MHz / 15 SMs. "
            "Our choices (not stated): tensor collectors 0 (the config builds 4 unused ones), "
            "regs_per_cta_limit 32768 (CUDA cc 2.0; the config leaves GPGPU-Sim's 8192), "
            "max 63 registers/thread and 64-register warp allocation granules (cc 2.0), "
            "collector_read_ports 0 = unlimited as in GPGPU-Sim (CORF's 1-port collectors belong to "
            "the CORF design spec)."
        ),
        num_sms=15,
        clock_mhz=700.0,
        warps_per_sm=48,
        max_ctas_per_sm=8,
        schedulers_per_sm=2,
        issue_width=1,
        scheduler="gto",
        sub_core=False,
        collectors=CollectorSpec(gen=0, sp=6, sfu=8, mem=2, tensor=0, dp=0, int=0),
        num_banks=16,
        bank_rw_ports=1,
        regs_per_sm=32768,
        max_regs_per_thread=63,
        reg_alloc_granularity=64,
        regs_per_cta_limit=32768,
        shmem_per_sm_bytes=48 * _KIB,
        shmem_per_cta_bytes=48 * _KIB,
        latency=LatencySpec(int=(4, 1), fp32=(5, 1), fp64=(8, 8), sfu=(8, 8), tensor=(64, 64)),
        l1d=L1DSpec(
            size_bytes=16 * _KIB,
            assoc=4,
            line_bytes=128,
            sectored=False,
            mshr_entries=64,
            hit_latency_cycles=35,
            unified_bytes=0,
            adaptive=False,
            bypass_global=False,
        ),
        smem_latency_cycles=26,
        l2_hit_latency_cycles=120,
        dram_latency_cycles=100,
        l2_size_bytes=768 * _KIB,
        mem_bw_bytes_per_cycle=16.896,
        **_EVERY_PRESET,
    )


def _maxwell_ltrf() -> SMSpec:
    return SMSpec(
        name="maxwell-ltrf",
        source=(
            "Baseline of the Latency-Tolerant Register File paper (Table 3): 24 SMs, 1137 MHz, 64 warps, "
            "256 KB = 65536 registers in 16 banks of 16 KB, 16 operand collectors (Fig. 11), two-level "
            "scheduler (its 8 active warps are an LTRF design parameter), 16 KB 4-way 128 B L1D, 64 KB "
            "shared memory, 2 MB L2, up to 255 registers/thread. Those values match GPGPU-Sim config "
            "GeForceGTX750Ti (1137 MHz core, 2700 MHz DRAM, 16 KB L1D, 2 MB L2, 64 KB shared), so every "
            "other value comes from it with GPGPU-Sim's built-in defaults: 4 schedulers issuing up to 2 "
            "per warp, collectors SP 6 / SFU 8 / MEM 2 (= the paper's 16), port throughput 1, 8 CTAs, "
            "latencies PTX mode (int ADD 6/1, fp32 MAD 6/1, fp64 8/8, sfu 8/8, tensor 64/64), L1 hit 1 "
            "and shared 3 (GPGPU-Sim defaults; GPGPU-Sim 3.x did not model either), 32 MSHRs, global "
            "loads bypass the L1D (-gmem_skip_L1D 1), L2 (ROP) 85, DRAM +130. Our choices (not stated): "
            "tensor collectors 0 (Maxwell has none), regs_per_cta_limit 65536 (cc 5.x), bandwidth "
            "8 MCs x 64 bit x 5.4 GT/s = 345.6 GB/s shared by 24 SMs at 1137 MHz = 12.665 B/cycle/SM "
            "(the config's own DRAM options describe a 5-SM part)."
        ),
        num_sms=24,
        clock_mhz=1137.0,
        warps_per_sm=64,
        max_ctas_per_sm=8,
        schedulers_per_sm=4,
        issue_width=2,
        scheduler="two-level",
        sub_core=False,
        collectors=CollectorSpec(gen=0, sp=6, sfu=8, mem=2, tensor=0, dp=0, int=0),
        num_banks=16,
        bank_rw_ports=1,
        shmem_per_sm_bytes=64 * _KIB,
        shmem_per_cta_bytes=48 * _KIB,
        latency=LatencySpec(int=(6, 1), fp32=(6, 1), fp64=(8, 8), sfu=(8, 8), tensor=(64, 64)),
        l1d=L1DSpec(
            size_bytes=16 * _KIB,
            assoc=4,
            line_bytes=128,
            sectored=False,
            mshr_entries=32,
            hit_latency_cycles=1,
            unified_bytes=0,
            adaptive=False,
            bypass_global=True,
        ),
        smem_latency_cycles=3,
        l2_hit_latency_cycles=85,
        dram_latency_cycles=130,
        l2_size_bytes=2 * _MIB,
        mem_bw_bytes_per_cycle=12.665,
        **_EVERY_PRESET,
        **_REGS_64K,
    )


# Accel-Sim trace mode: memory classes, barrier and exit keep (1, 1)
def _trace_latency(int_, fp32, fp64, sfu, tensor, branch=(4, 4)) -> LatencySpec:
    return LatencySpec(int=int_, fp32=fp32, fp64=fp64, sfu=sfu, tensor=tensor, branch=branch, misc=int_)


def _trace_sm(**fields) -> SMSpec:
    """A sub-core SM of a GPGPU-Sim config in Accel-Sim's trace mode (Turing and later): four sub-cores, each
    a scheduler issuing one instruction a cycle with two generic collectors, banks of port throughput 2 and
    64K registers (:data:`_REGS_64K`); ``fields``: the SM's own values (name, source, sizes, latencies and
    its L1D, :func:`_trace_l1d`)."""
    return SMSpec(
        schedulers_per_sm=4,
        issue_width=1,
        sub_core=True,
        collectors=CollectorSpec(gen=8, sp=0, sfu=0, mem=0, tensor=0, dp=0, int=0),
        bank_rw_ports=2,
        **fields,
        **_EVERY_PRESET,
        **_REGS_64K,
    )


def _trace_l1d(
    size_kib: int, assoc: int, mshr_entries: int, hit_latency_cycles: int, unified_kib: int
) -> L1DSpec:
    """A trace-mode SM's sectored L1D of 128 B lines in an adaptive unified array that caches global loads."""
    return L1DSpec(
        size_bytes=size_kib * _KIB,
        assoc=assoc,
        line_bytes=128,
        sectored=True,
        mshr_entries=mshr_entries,
        hit_latency_cycles=hit_latency_cycles,
        unified_bytes=unified_kib * _KIB,
        adaptive=True,
        bypass_global=False,
    )


def _turing_rtx2060() -> SMSpec:
    return _trace_sm(
        name="turing-rtx2060",
        source=(
            "Baseline of the register-caching-in-collector-units paper (Malekeh; Table 1): RTX 2060 "
            "scaled to 1/3 = 10 SMs, 1024 threads = 32 warps, 256 KB RF, GTO, 1 MB L2, 64 KB shared "
            "(its '64 KB L1/shared' read as the config's 64 KB shared-memory carve-out). Everything "
            "else from GPGPU-Sim config SM75_RTX2060 + Accel-Sim trace.config (the paper ran Accel-Sim "
            "in trace mode): 4 sub-cores, 8 banks (2 per sub-core), port throughput 2, 8 generic "
            "collectors (2 per sub-core; the paper's 128 B/SM of state also points to about 8), 16 CTAs, "
            "trace latencies int 2/2, fp32 2/2, fp64 64/64, sfu 21/8, tensor 16/16, BRA unit 4/4; L1D "
            "32 KB base in a 96 KB adaptive unified array, L1 hit 32, shared 30, L2 (ROP) 194, DRAM +96, "
            "1365 MHz; bandwidth per SM as the full chip (channels were scaled with the SMs). "
            "Not stated in the paper: clock, banks, collectors, DRAM (taken from the config as listed)."
        ),
        num_sms=10,
        clock_mhz=1365.0,
        warps_per_sm=32,
        max_ctas_per_sm=16,
        scheduler="gto",
        num_banks=8,
        shmem_per_sm_bytes=64 * _KIB,
        shmem_per_cta_bytes=48 * _KIB,
        latency=_trace_latency((2, 2), (2, 2), (64, 64), (21, 8), (16, 16)),
        l1d=_trace_l1d(size_kib=32, assoc=64, mshr_entries=256, hit_latency_cycles=32, unified_kib=96),
        smem_latency_cycles=30,
        l2_hit_latency_cycles=194,
        dram_latency_cycles=96,
        l2_size_bytes=1 * _MIB,
        mem_bw_bytes_per_cycle=8.206,
    )


def _volta_v100() -> SMSpec:
    return _trace_sm(
        name="volta-v100",
        source=(
            "GPGPU-Sim config SM7_QV100 + Accel-Sim trace.config, read as rfmodel.spec.from_gpgpusim_config "
            "does. Note: the file configures 16 banks (4 per sub-core) to stand in for Volta's "
            "register-file cache; the hardware has 8 (2 per sub-core)."
        ),
        num_sms=80,
        clock_mhz=1132.0,
        warps_per_sm=64,
        max_ctas_per_sm=32,
        scheduler="lrr",
        num_banks=16,
        shmem_per_sm_bytes=96 * _KIB,
        shmem_per_cta_bytes=64 * _KIB,
        latency=_trace_latency((2, 2), (2, 2), (8, 4), (20, 8), (2, 2)),
        l1d=_trace_l1d(size_kib=32, assoc=64, mshr_entries=512, hit_latency_cycles=20, unified_kib=128),
        smem_latency_cycles=20,
        l2_hit_latency_cycles=160,
        dram_latency_cycles=100,
        l2_size_bytes=6 * _MIB,
        mem_bw_bytes_per_cycle=9.611,
    )


def _ampere_a100() -> SMSpec:
    return _trace_sm(
        name="ampere-a100",
        source=(
            "GPGPU-Sim config SM80_A100 + Accel-Sim trace.config, except mem_bw_bytes_per_cycle: the "
            "file's DRAM options (40 ch x 16 B x 2 x 6048 MHz) imply 7.7 TB/s, so we use the A100's "
            "1555 GB/s / 108 SMs / 1410 MHz = 10.211 B/cycle/SM (our choice)."
        ),
        num_sms=108,
        clock_mhz=1410.0,
        warps_per_sm=64,
        max_ctas_per_sm=32,
        scheduler="lrr",
        num_banks=32,
        shmem_per_sm_bytes=164 * _KIB,
        shmem_per_cta_bytes=48 * _KIB,
        latency=_trace_latency((4, 2), (4, 2), (6, 4), (23, 8), (12, 8)),
        l1d=_trace_l1d(size_kib=32, assoc=64, mshr_entries=512, hit_latency_cycles=34, unified_kib=192),
        smem_latency_cycles=28,
        l2_hit_latency_cycles=200,
        dram_latency_cycles=190,
        l2_size_bytes=40 * _MIB,
        mem_bw_bytes_per_cycle=10.211,
    )


def _ampere_rtx3070() -> SMSpec:
    return _trace_sm(
        name="ampere-rtx3070",
        source=(
            "GPGPU-Sim config SM86_RTX3070 + Accel-Sim trace.config, read as "
            "rfmodel.spec.from_gpgpusim_config does."
        ),
        num_sms=46,
        clock_mhz=1132.0,
        warps_per_sm=48,
        max_ctas_per_sm=32,
        scheduler="lrr",
        num_banks=8,
        shmem_per_sm_bytes=100 * _KIB,
        shmem_per_cta_bytes=48 * _KIB,
        latency=_trace_latency((2, 2), (2, 1), (64, 64), (21, 8), (32, 32)),
        l1d=_trace_l1d(size_kib=128, assoc=256, mshr_entries=384, hit_latency_cycles=39, unified_kib=128),
        smem_latency_cycles=29,
        l2_hit_latency_cycles=187,
        dram_latency_cycles=254,
        l2_size_bytes=4 * _MIB,
        mem_bw_bytes_per_cycle=8.605,
    )


def _hopper_h100() -> SMSpec:
    return _trace_sm(
        name="hopper-h100",
        source=(
            "GPGPU-Sim config SM90_H100_v2 (the Accel-Sim 2.0-era H100 file) + its trace.config, read "
            "as rfmodel.spec.from_gpgpusim_config does. The file's -gpgpu_opndcoll_model 1 (simplified "
            "collector model) is not represented; its tensor timing 1/0 is the file's placeholder."
        ),
        num_sms=132,
        clock_mhz=1980.0,
        warps_per_sm=64,
        max_ctas_per_sm=32,
        scheduler="lrr",
        num_banks=64,
        shmem_per_sm_bytes=228 * _KIB,
        shmem_per_cta_bytes=48 * _KIB,
        latency=_trace_latency((4, 2), (4, 2), (8, 2), (23, 8), (1, 0)),
        l1d=_trace_l1d(size_kib=32, assoc=64, mshr_entries=512, hit_latency_cycles=41, unified_kib=256),
        smem_latency_cycles=29,
        l2_hit_latency_cycles=237,
        dram_latency_cycles=194,
        l2_size_bytes=50 * _MIB,
        mem_bw_bytes_per_cycle=7.606,
    )


#: preset name -> SMSpec
PRESETS: dict[str, SMSpec] = {
    p.name: p
    for p in (
        _fermi_gtx480(),
        _maxwell_ltrf(),
        _turing_rtx2060(),
        _volta_v100(),
        _ampere_a100(),
        _ampere_rtx3070(),
        _hopper_h100(),
    )
}


def get_preset(name: str) -> SMSpec:
    """The preset called ``name`` (raises UnknownNameError with the nearest name suggested)."""
    try:
        return PRESETS[name]
    except KeyError:
        raise UnknownNameError("SM preset", name, PRESETS) from None
