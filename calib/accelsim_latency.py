"""The memory path's latency in both simulators: a chain of dependent loads, each to a line of its own.

    . <accel-sim build>/env.sh            # ACCELSIM
    python calib/accelsim_latency.py      # SM2_GTX480_1SM and SM7_QV100_1SM

One warp loads ``--lines`` distinct lines, each load's address register the result of the one before (so each
waits for the last to return): the first pass misses the L2 and goes to DRAM; a second trace runs the same
pass twice, so its second pass hits the L2 (the L1D holds fewer lines than that); a third chain goes round 8
lines, which the L1D holds, so all but its first pass hit there. The traces are exported
(``export_accelsim``) and run in Accel-Sim on the one-SM config and in ``rfmodel simulate --compat gpgpusim``
on the same trace directory; the script prints the cycles of each and the cycles per load of the DRAM path
(first trace), of the L2 path (the second trace's extra cycles) and of an L1D hit (the third trace's cycles
less its first pass at the DRAM path's, over its hits). docs/simulator.md quotes its output.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "calib"))


def chain(lines: int, passes: int):
    """``passes`` passes of ``lines`` dependent loads over distinct lines (a stride of 7 lines, wrapped)."""
    from rfmodel.sim import trace_from_warps

    one = [("LDG", [1], [1], {"lines": [(i * 7 % lines) * 128]}) for i in range(lines)]
    return trace_from_warps([one * passes])


def main(argv=None) -> int:
    import accelsim as acs

    from rfmodel.sim import simulate_trace
    from rfmodel.spec.gpgpusim import from_gpgpusim_config
    from rfmodel.workload.export_accelsim import export_accelsim
    from rfmodel.workload.suite import load_workload

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", action="append", help="one-SM config name or folder (default: both)")
    ap.add_argument("--lines", type=int, default=1200, help="distinct lines (default 1200: 150 KB)")
    args = ap.parse_args(argv)
    try:
        sim = acs.find_accelsim()
    except acs.UsageError as e:
        print(f"accelsim_latency.py: {e}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="rfmodel-latency-"))
    for name in args.config or ["SM2_GTX480_1SM", "SM7_QV100_1SM"]:
        cfg = acs.resolve_config(name)
        sm = from_gpgpusim_config(cfg.gpgpusim_config)
        cycles = {}
        hot = 8  # lines the L1D holds: after their first pass every load hits it
        for label, lines, passes in (
            ("dram", args.lines, 1),
            ("dram+l2", args.lines, 2),
            ("l1", hot, args.lines // hot),
        ):
            tdir = work / cfg.name / label / "trace"
            export_accelsim(chain(lines, passes), tdir)
            if cfg.binary_version != 70:
                for traceg in tdir.glob("*.traceg"):
                    acs.set_binary_version(traceg, cfg.binary_version)
            run = tdir.parent / "run"
            run.mkdir()
            for f in cfg.folder.iterdir():
                if f.is_file() and f.name not in ("gpgpusim.config", "trace.config"):
                    (run / f.name).symlink_to(f.resolve())
            cmd = [str(sim.exe), "-trace", str(tdir / "kernelslist.g"), "-config", str(cfg.gpgpusim_config)]
            if cfg.trace_config.is_file():
                cmd += ["-config", str(cfg.trace_config)]
            cmd += ["-gpgpu_kernel_launch_latency", "0"]
            if sim.env_sh is not None:
                cmd = ["bash", "-c", '. "$0" >/dev/null && exec "$@"', str(sim.env_sh)] + cmd
            out = subprocess.run(cmd, cwd=run, capture_output=True, text=True, check=False).stdout
            a = acs.parse_accelsim(out)["cycles"]
            r = simulate_trace(load_workload(str(tdir)).trace, sm, "baseline", None, {"compat": "gpgpusim"})
            cycles[label] = (float(a or "nan"), r.metrics["cycles"])
        (ad, rd), (a2, r2), (a1, r1) = cycles["dram"], cycles["dram+l2"], cycles["l1"]
        n = args.lines
        m = hot * (n // hot) - hot  # the L1 chain's hits (its first pass goes to DRAM)
        l1_r, l1_a = (r1 - hot * rd / n) / m, (a1 - hot * ad / n) / m
        print(
            f"{cfg.name}: DRAM path {rd / n:.1f} cycles a load (Accel-Sim {ad / n:.1f}); L2 path "
            f"{(r2 - rd) / n:.1f} (Accel-Sim {(a2 - ad) / n:.1f}); L1D hit {l1_r:.1f} (Accel-Sim "
            f"{l1_a:.1f}); cycles {rd:.0f} / {ad:.0f}, {r2:.0f} / {a2:.0f} and {r1:.0f} / {a1:.0f} "
            f"(rfmodel / Accel-Sim): {100 * (rd - ad) / ad:+.1f} %, {100 * (r2 - a2) / a2:+.1f} % and "
            f"{100 * (r1 - a1) / a1:+.1f} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
