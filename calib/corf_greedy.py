"""CORF++'s one bank per warp under greedy-then-oldest schedulers, the two engines side by side
(docs/validation.md, "CORF's effect error is three kernels on `fermi-gtx480`").

    python calib/corf_greedy.py                                    # the default kernels on fermi-gtx480
    python calib/corf_greedy.py --workload sgemm_tiled nbody_forces --collectors 3 6 12 24

Per kernel, CORF at its defaults (CORF++) against the baseline at each ``--banks`` count: the IPC effect in
the simulator and in the analytic model, and the share of CORF's register allocations the simulator places
past the warp's own bank (its ``overflow`` count over ``allocations``). At the SM's own banks, the model's
greedy terms (``rfmodel.analytic.throughput._greedy_banks``, read as the model calls it): ``b`` the cycles a
warp's instruction holds its bank, ``c1`` a warp's dependence cycles an instruction, the banks that serve
the greedy schedulers and their bound ``banks / b``; beside them the banks a scheduler keeps busy in the
simulator (``IPC x b / schedulers``, at most) and the share of source reads whose producer is at most 4
instructions back (the profile's ``dep_dist_hist``). ``--collectors N ...``: CORF's and the baseline's
simulated IPC with the SM's SP collector set of N units (an SM with typed collector sets). ``--calibration
FILE``: the model with another calibration (a copy of ``rfmodel/data/calibration/analytic.json`` with other
coefficients, e.g. CORF's ``corf_greedy_spread``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KERNELS = (
    "sgemm_tiled",
    "fft_radix16",
    "gemm_micro8x8",
    "fft_radix8",
    "nbody_forces",
    "black_scholes",
    "kmeans_assign",
    "rd_hotspot",
)


def greedy_terms(design, workload, sm, calibration=None) -> dict | None:
    """The model's greedy terms at the SM's own point: the arguments and answer of its one call of
    ``_greedy_banks`` (``None`` where the design's model does not call it)."""
    import numpy as np

    from rfmodel.analytic import throughput
    from rfmodel.evaluate import evaluate

    seen = {}
    real = throughput._greedy_banks

    def spy(profile, B, S, warps, b_w, greedy_spread, sub_core=False):
        out = real(profile, B, S, warps, b_w, greedy_spread, sub_core)
        b = np.maximum(np.asarray(b_w, dtype=np.float64), 1e-9)
        c1 = profile.chain_at2(b, np.zeros_like(b))
        seen.update(b=float(np.ravel(b)[0]), c1=float(np.ravel(c1)[0]), banks=float(np.ravel(out)[0]))
        return out

    throughput._greedy_banks = spy
    try:
        evaluate(design, workload, sm, method="analytic", calibration=calibration)
    finally:
        throughput._greedy_banks = real
    return seen or None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="fermi-gtx480")
    ap.add_argument("--workload", nargs="+", default=list(KERNELS))
    ap.add_argument("--banks", nargs="+", type=int, default=[8, 16, 32])
    ap.add_argument("--collectors", nargs="*", type=int, default=[], help="SP collector set sizes")
    ap.add_argument(
        "--calibration", default=None, help="the model's calibration file (default: the package's)"
    )
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    from rfmodel.errors import RfmodelError

    try:
        return _report(a)
    except RfmodelError as e:
        print(f"corf_greedy: {e}", file=sys.stderr)
        return 2


def _report(a) -> int:
    import numpy as np

    from rfmodel.analytic.reuse import near_fraction_from_hist
    from rfmodel.evaluate import evaluate, resolve_gpu, workload_profile
    from rfmodel.sim import simulate_trace
    from rfmodel.spec.occupancy import UNIT_NAMES, units_of_classes
    from rfmodel.workload.suite import load_workload

    sm = resolve_gpu(a.gpu)
    if a.collectors and sm.collectors.gen:
        print(f"{a.gpu}: --collectors needs typed collector sets (this SM's are generic)", file=sys.stderr)
        return 2
    point = {"num_banks": a.banks}
    S = sm.schedulers_per_sm
    print(f"CORF (defaults) against the baseline on {a.gpu}; banks {a.banks}")
    for w in a.workload:
        eff = {}
        for method in ("simulate", "analytic"):
            kw = {"calibration": a.calibration} if method == "analytic" else {}
            c = evaluate("corf", w, sm, method=method, params=point, **kw)["ipc"].values.ravel()
            b = evaluate("baseline", w, sm, method=method, params=point, **kw)["ipc"].values.ravel()
            eff[method] = c / b - 1.0
        trace = load_workload(w, num_sms=sm.num_sms, line_bytes=sm.l1d.line_bytes).trace
        over = []
        for nb in a.banks:
            n = simulate_trace(trace, sm.replace(num_banks=nb), "corf", {}).counts
            over.append(n.get("overflow", 0) / max(n.get("allocations", 0), 1))
        cells = "  ".join(
            f"{nb}: {100 * s:+5.1f} / {100 * m:+5.1f} % ovf {o:.2f}"
            for nb, s, m, o in zip(a.banks, eff["simulate"], eff["analytic"], over, strict=True)
        )
        print(f"{w:18s} effect sim / model  {cells}")
        g = greedy_terms("corf", w, sm, a.calibration)
        prof = workload_profile(w, sm)
        near = float(near_fraction_from_hist(prof.dep_dist_hist, 4))
        own = evaluate("corf", w, sm, method="simulate")["ipc"].values.ravel()[0]
        if g is not None:
            print(
                f"{'':18s} at {sm.num_banks} banks: b {g['b']:.2f}  c1 {g['c1']:.2f}  "
                f"c1/b {g['c1'] / g['b']:.2f}  "
                f"greedy banks {g['banks']:.2f} (bound {g['banks'] / g['b']:.3f})  sim IPC {own:.3f}: "
                f"busy banks a scheduler <= {own * g['b'] / S:.2f}  producers within 4: {near:.2f}"
            )
        by_unit = np.bincount(units_of_classes(sm), weights=prof.mix, minlength=len(UNIT_NAMES))
        print(
            f"{'':18s} instructions by unit type: "
            + "  ".join(f"{n} {x:.2f}" for n, x in zip(UNIT_NAMES, by_unit, strict=True) if x > 0)
        )
        if a.collectors:
            runs = []
            for n_sp in a.collectors:
                smx = sm.replace(collectors=dataclasses.replace(sm.collectors, sp=n_sp))
                ipc = [float(simulate_trace(trace, smx, d, {}).metrics["ipc"]) for d in ("corf", "baseline")]
                runs.append(f"{n_sp}: {ipc[0]:.3f} / {ipc[1]:.3f}")
            print(f"{'':18s} SP collectors, CORF / baseline IPC: " + "  ".join(runs))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
