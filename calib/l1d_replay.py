"""Whether the analytic L1D / L2 hit rates miss because of the caches or because of the access order: the
cycle simulator's own L1D access order, recorded through a design's ``l1`` hook (which leaves every access
to the SM's L1D, so the run is the baseline's), replayed through the profile's LRU code at the simulator's
geometry, against the simulator's counters and against the profile's stream order.

    python calib/l1d_replay.py                              # bicg_like, syrk_like on fermi-gtx480
    python calib/l1d_replay.py --workloads merge_pass --gpu volta-v100

Per kernel: L1D hit rate and L2 hits per L1D miss from the simulator's counters, from the replay of its
order, and from the profile's stream; then how far the warps draw apart in the simulator (warps that have
started and not finished their accesses, on average over the accesses; each warp's accesses when a third
of them are done, oldest warp first), both orders' distinct warps per 256 accesses and L1D hit rate per
tenth of the accesses, the loads' lines per instruction and the simulator's cycles waiting for an MSHR.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from rfmodel.designs.base import Design, SimHooks, SimSetup, bank_header  # noqa: E402
from rfmodel.sim import core  # noqa: E402

#: recorder state: bank header [0:6], then the number recorded, then (line, warp) pairs
N_REC, REC = 6, 8


@njit(cache=True)
def _record(ints, floats, warp, line, kind, fill, cycle):
    """Record every L1D access (not fills) and leave it to the SM's L1D."""
    if kind != core.L1_FILL:
        n = ints[N_REC]
        if REC + 2 * n + 1 < ints.shape[0]:
            ints[REC + 2 * n] = line
            ints[REC + 2 * n + 1] = warp
            ints[N_REC] = n + 1
    return -1


class _Recorder(Design):
    """The baseline with an ``l1`` hook that records the access order."""

    name = "l1d-recorder"

    def sim_setup(self, sm, params, options, trace=None):
        cap = int(np.diff(trace.mem_ptr).sum()) + 1
        ints = np.zeros(REC + 2 * cap, dtype=np.int64)
        ints[:6] = bank_header(sm)
        return SimSetup(hooks=SimHooks(l1=_record), ints=ints, counters={})

    def sim_metrics(self, sm, params, setup, counts):
        return {"events": {}}


def replay(lines, l1_sets, l1_ways, l2_sets, l2_ways):
    """(L1D hit rate, L2 hits per L1D miss) of a line stream through the profile's LRU code."""
    from rfmodel.analytic.profile import _lru_hit_flags

    h1 = _lru_hit_flags(lines, l1_sets, l1_ways)
    miss = lines[~h1]
    h2 = _lru_hit_flags(miss, l2_sets, l2_ways) if len(miss) else np.zeros(0, np.bool_)
    return float(h1.mean()), float(h2.mean()) if len(h2) else 0.0


def main(argv=None) -> int:
    from rfmodel.analytic.engine import memory_pipeline
    from rfmodel.analytic.profile import WAITING_LOADS, _lru_hit_flags, l1d_stream
    from rfmodel.analytic.stream import issue_rank
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import _simulation_input, resolve_gpu
    from rfmodel.sim.engine import SimOptions, simulate_trace

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", default="fermi-gtx480")
    ap.add_argument("--workloads", nargs="+", default=["bicg_like", "syrk_like"])
    args = ap.parse_args(argv)

    sm = resolve_gpu(args.gpu)
    opts = SimOptions()
    line_b = sm.l1d.line_bytes
    l1_sets = sm.l1d.size_bytes // line_b // sm.l1d.assoc
    l2_ways = opts.l2_assoc or sm.l2_ways
    l2_sets = sm.l2_size_bytes // max(sm.num_sms, 1) // (l2_ways * line_b)
    print(
        f"{args.gpu}: L1D {l1_sets} x {sm.l1d.assoc}, L2 slice {l2_sets} x {l2_ways} (simulator)"
        "\n"
        + "kernel".ljust(14)
        + "L1D hit: sim / replay / profile".rjust(34)
        + "L2 per miss: sim / replay / profile".rjust(38)
    )
    base, rec = get_design("baseline"), _Recorder()
    for w in args.workloads:
        _name, tr, kernel = _simulation_input(w, sm, arch="sm_80", seed=0, max_warps=None)
        prog = base.program_for(tr, {}, sm, kernel)
        run = simulate_trace(tr, sm, base, {}, opts, program=prog)
        r = simulate_trace(tr, sm, rec, {}, opts, program=prog)
        if r.metrics["cycles"] != run.metrics["cycles"]:
            raise SystemExit(f"{w}: the recording run's cycles differ from the baseline's")
        c = run.counts
        sim = (c["l1_hit"] / max(c["l1_acc"], 1), c["l2_hit"] / max(c["l2_acc"], 1))
        n = int(r.setup.ints[N_REC])
        pairs = r.setup.ints[REC : REC + 2 * n].reshape(-1, 2)
        rep = replay(pairs[:, 0], l1_sets, sm.l1d.assoc, l2_sets, l2_ways)
        lines, rows, _loads = l1d_stream(tr, issue_rank(tr, memory_pipeline(tr, sm)))
        prof = replay(lines, l1_sets, sm.l1d.assoc, l2_sets, l2_ways)
        print(
            w.ljust(14)
            + " / ".join(f"{x:.3f}" for x in (sim[0], rep[0], prof[0])).rjust(34)
            + " / ".join(f"{x:.3f}" for x in (sim[1], rep[1], prof[1])).rjust(38)
        )
        warp = pairs[:, 1]
        first = np.full(int(warp.max()) + 1, -1)
        last = np.full(int(warp.max()) + 1, -1)
        for t, x in enumerate(warp):
            if first[x] < 0:
                first[x] = t
            last[x] = t
        seen = first >= 0
        starts, ends = np.sort(first[seen]), np.sort(last[seen])
        t = np.arange(len(warp))
        running = np.searchsorted(starts, t, side="right") - np.searchsorted(ends, t, side="left")
        counts = np.bincount(warp[: len(warp) // 3], minlength=len(first))[seen]
        print(
            f"  warps mid-run: mean {running.mean():.1f} of {int(seen.sum())}; accesses per warp at a "
            f"third of the run (by warp index): {counts.tolist()}"
        )
        # the two orders side by side: distinct warps in a window of 256 accesses, L1D hit rate per tenth
        warp_of = np.repeat(np.arange(len(tr.warp_ptr) - 1), np.diff(tr.warp_ptr))[rows]
        for label, ln, ws in (("simulator", pairs[:, 0], warp), ("schedule", lines, warp_of)):
            hits = _lru_hit_flags(ln, l1_sets, sm.l1d.assoc)
            m = len(ws) // 256 * 256
            distinct = np.mean([len(np.unique(ws[i : i + 256])) for i in range(0, m, 256)]) if m else 0.0
            tenths = [float(h.mean()) for h in np.array_split(hits, 10)]
            print(
                f"  {label}: {distinct:.1f} warps per 256 accesses; L1D hit rate per tenth of the "
                f"accesses: {' '.join(f'{x:.2f}' for x in tenths)}"
            )
        loads = np.isin(tr.op, list(WAITING_LOADS.nonzero()[0]))
        print(
            f"  lines per load: {np.diff(tr.mem_ptr)[loads].mean():.1f}; simulator cycles waiting for an "
            f"MSHR: {c['mshr_wait']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
