"""GPGPU-Sim mode's load/store path on SM7_QV100_1SM against Accel-Sim, on streams of independent full-line
loads written here as Accel-Sim traces: ``warps`` warps of one CTA, each ``loads`` loads of a line of its own
(32 lanes, the line's four 32-byte sectors), the destination registers cycling over eight (so a warp's ninth
load waits for its first), then ``EXIT``.  Accel-Sim's cycles (accel-sim-framework 73f9fac, gpgpu-sim
667834c) were measured on the same instruction streams: ``accel-sim.out -trace kernelslist.g -config
gpgpusim.config -config trace.config -gpgpu_kernel_launch_latency 0`` in a folder holding the trace file
:func:`load_stream` writes and a ``kernelslist.g`` naming it, the config's ``-gpgpu_l1_banks`` set to 1 for
the one-bank streams.

What they pin: the L1D's queues a sector an access with the banks' heads looked up bank 0 first
(``rfmodel.sim.core._l1_step``), and the dispatch of ready collectors in GPGPU-Sim's scan order, which with
sub-cores lets a sub-core's lower-numbered collector go first (``_dispatch``): with one L1D bank the second
collector of each sub-core waits for hundreds of cycles (oldest-first dispatch ran the 16-warp stream in
1,357 cycles, 18.7 % short); with four banks oldest-first dispatch and a line an access ran the 16- and
32-warp streams in 1,360 and 2,384 cycles, 9 and 11 % short.

The shared-memory streams (:func:`shared_stream`) are four warps of 32 ``LDS`` each whose lanes fall on
``passes`` words of each bank they use: GPGPU-Sim holds the unit a cycle a pass (its bank conflicts),
which rfmodel's ``smem_passes`` carries from the trace's addresses to the load/store unit."""

from __future__ import annotations

import pytest
from helpers_reference import needs_reference, reference

from rfmodel.ir import OpClass
from rfmodel.sim import simulate_trace
from rfmodel.spec import from_gpgpusim_config
from rfmodel.workload.accelsim import read_traceg
from rfmodel.workload.export_accelsim import _HEADER

CONFIG = reference("gpgpusim-configs", "SM7_QV100_1SM", "gpgpusim.config")
pytestmark = needs_reference("gpgpusim-configs", "SM7_QV100_1SM", "gpgpusim.config")


def load_stream(folder, warps: int, loads: int):
    """The trace file of the stream (the module docstring), read back."""
    base = 0x100000000
    header = _HEADER.format(name="loads", ctas=1, threads=32 * warps, shmem=0, nregs=32)
    text = [header + "\n#BEGIN_TB\n\nthread block = 0,0,0\n"]
    for w in range(warps):
        rows = []
        for i in range(loads):
            line = base + (w * loads + i) * 128
            addrs = " ".join(hex(line + 4 * k) for k in range(32))
            rows.append(f"{0x10 * (i % 8):04x} ffffffff 1 R{10 + 2 * (i % 8)} LDG.E 2 R2 R3 4 0 {addrs}")
        rows.append("2000 ffffffff 0 EXIT 0 0 0")
        text.append(f"warp = {w}\ninsts = {len(rows)}\n" + "\n".join(rows) + "\n")
    text.append("#END_TB\n")
    path = folder / "kernel-1.traceg"
    path.write_text("\n".join(text))
    return read_traceg(path)


@pytest.mark.parametrize(
    "warps, loads, banks, accelsim",
    [(4, 16, 1, 865), (16, 16, 1, 1669), (16, 16, 4, 1501), (32, 16, 4, 2693)],
)
def test_load_streams_run_as_long_as_in_accelsim(tmp_path, warps, loads, banks, accelsim):
    sm = from_gpgpusim_config(CONFIG)
    assert sm.l1d.banks == 4 and sm.l1d.sectored and sm.sub_core
    sm = sm.replace(l1d=sm.l1d.replace(banks=banks))
    r = simulate_trace(load_stream(tmp_path, warps, loads), sm, options={"compat": "gpgpusim"})
    assert r.counts["l1_acc"] == warps * loads * 4  # an access a sector, as Accel-Sim counts them
    assert abs(r.metrics["cycles"] / accelsim - 1) <= 0.05


def shared_stream(folder, warps: int, loads: int, passes: int):
    """The trace file of a shared-memory stream (the module docstring), read back: lane ``l`` reads word
    ``l mod g + 32 (l div g)``, ``g = 32 / passes`` lanes on distinct banks, ``passes`` words in each."""
    g = 32 // passes
    addrs = " ".join(hex(4 * (lane % g + 32 * (lane // g))) for lane in range(32))
    header = _HEADER.format(name="shared", ctas=1, threads=32 * warps, shmem=0, nregs=32)
    rows = [f"{0x10 * (i % 8):04x} ffffffff 1 R{10 + 2 * (i % 8)} LDS 1 R2 4 0 {addrs}" for i in range(loads)]
    rows.append("2000 ffffffff 0 EXIT 0 0 0")
    body = "".join(f"warp = {w}\ninsts = {len(rows)}\n" + "\n".join(rows) + "\n" for w in range(warps))
    path = folder / "kernel-1.traceg"
    path.write_text(header + "\n#BEGIN_TB\n\nthread block = 0,0,0\n" + body + "#END_TB\n")
    return read_traceg(path)


@pytest.mark.parametrize("passes, accelsim", [(1, 169), (2, 315), (4, 547), (8, 1075), (32, 4123)])
def test_shared_loads_take_a_cycle_a_bank_pass_as_in_accelsim(tmp_path, passes, accelsim):
    trace = shared_stream(tmp_path, 4, 32, passes)
    assert (trace.smem_passes[trace.op == OpClass.LD_SHARED] == passes).all()
    r = simulate_trace(trace, from_gpgpusim_config(CONFIG), options={"compat": "gpgpusim"})
    assert abs(r.metrics["cycles"] / accelsim - 1) <= 0.05
