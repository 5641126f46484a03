"""Where the cycle loop spends its time, by stage and by source line (Linux ``perf``, binutils ``addr2line``).

    python calib/sim_profile.py                          # the baseline on crc32_murmur3, fermi-gtx480
    python calib/sim_profile.py --design cerf --top 40    # CERF, the 40 hottest lines

The loop (``rfmodel.sim.core._run``, its stages inlined) is compiled once more with line tables
(``NUMBA_DEBUGINFO=1``, bounds checks off, into a numba cache folder of its own), then a second process loads
it from that cache, runs ``--runs`` simulations of the workload's SM share (``bench``'s simulate member) under
``perf record`` and keeps the loop's object code as numba's cache holds it.  Each sample that falls in the
loop is read against the object code's line table (``addr2line``) and counted by line and by the stage
function of ``rfmodel/sim/core.py`` that holds the line; every sample in one of the package's compiled
functions the run loaded (the loop, the design's hooks, functions of their own) is counted by function.
Line tables keep variables alive longer, so the loop runs about 1.5x slower than the ordinary build; the
shares, not the seconds, are what this reads.  docs/simulator.md quotes its figures.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORE = ROOT / "rfmodel" / "sim" / "core.py"


def child(args) -> None:
    """Load (or compile) the loop, simulate ``args.runs`` times, and write to ``args.out`` each of the
    package's compiled functions the run loaded from numba's cache (the loop, the design's hooks): its name,
    address and symbol (``functions.tsv``) and its object code (``<i>.o``, as the cache holds it)."""
    import gc

    from numba.core import codegen
    from numba.core.registry import CPUDispatcher

    objects = {}
    unserialize = codegen.JITCodeLibrary._unserialize.__func__

    def keep_object(cls, cg, state):  # numba internals: the object code of a library loaded from the cache
        name, kind, data = state
        if kind == "object":
            objects[name] = data[0]
        return unserialize(cls, cg, state)

    codegen.JITCodeLibrary._unserialize = classmethod(keep_object)
    from rfmodel.evaluate import _simulate_workload, resolve_gpu
    from rfmodel.sim import core
    from rfmodel.sim.engine import simulate_trace
    from rfmodel.workload.suite import DEFAULT_ARCH

    sm = resolve_gpu(args.gpu)
    _, trace = _simulate_workload(args.workload, sm, arch=DEFAULT_ARCH, seed=0, max_warps=None)
    for _ in range(args.runs):
        simulate_trace(trace, sm, args.design)
    core.compiled_loop()
    out, rows = Path(args.out), []
    for d in gc.get_objects():
        if not isinstance(d, CPUDispatcher) or not (d.py_func.__module__ or "").startswith("rfmodel."):
            continue
        module = d.py_func.__module__
        for cres in d.overloads.values():
            lib, symbol = cres.library, cres.fndesc.llvm_func_name
            if lib.name in objects:
                (out / f"{len(rows)}.o").write_bytes(objects[lib.name])
                address = lib.get_pointer_to_function(symbol)
                rows.append(f"{module}.{d.py_func.__name__}\t{address:x}\t{symbol}\t{len(rows)}.o")
    (out / "functions.tsv").write_text("\n".join(rows) + "\n")


def stage_of(tree: ast.Module):
    """``line -> name`` of the innermost function of ``core.py`` that holds the line."""
    spans = sorted((n.lineno, n.end_lineno, n.name) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))

    def find(line: int) -> str:
        best = "?"
        for a, b, name in spans:
            if a <= line <= b:
                best = name  # sorted by start: the last one that holds it is the innermost
        return best

    return find


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", default="baseline")
    ap.add_argument("--workload", default="crc32_murmur3")
    ap.add_argument("--gpu", default="fermi-gtx480")
    ap.add_argument("--runs", type=int, default=6, help="simulations under perf (default 6)")
    ap.add_argument("--top", type=int, default=30, help="lines to list (default 30)")
    ap.add_argument("--child", metavar="DIR", dest="out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.out:
        child(args)
        return 0
    missing = [t for t in ("perf", "addr2line", "nm") if shutil.which(t) is None]
    if missing:
        print(f"sim_profile: needs {', '.join(missing)} on PATH (Linux perf, binutils)", file=sys.stderr)
        return 2
    from rfmodel.cache import code_digest

    env = dict(os.environ, NUMBA_DEBUGINFO="1", NUMBA_BOUNDSCHECK="0", PYTHONPATH=str(ROOT))
    env["NUMBA_CACHE_DIR"] = str(Path(tempfile.gettempdir()) / "rfmodel-sim-profile" / code_digest())
    with tempfile.TemporaryDirectory(prefix="rfmodel-sim-profile-") as tmp:
        me = [sys.executable, str(Path(__file__).resolve())]
        rest = ["--design", args.design, "--workload", args.workload, "--gpu", args.gpu]
        print("compiling the loop with line tables (once per source state; minutes) ...", file=sys.stderr)
        subprocess.run([*me, *rest, "--runs", "1", "--child", tmp], env=env, check=True)
        data = Path(tmp) / "perf.data"
        print(f"{args.runs} simulations under perf ...", file=sys.stderr)
        subprocess.run(
            ["perf", "record", "-q", "-F", "4000", "-o", str(data), *me, *rest, "--runs", str(args.runs)]
            + ["--child", tmp],
            env=env,
            check=True,
        )
        functions = []  # (address, size, name, object, symbol's place in its object's code section)
        for row in (Path(tmp) / "functions.tsv").read_text().splitlines():
            name, address, symbol, obj = row.split("\t")
            symbols = subprocess.check_output(["nm", "-S", "--defined-only", str(Path(tmp) / obj)], text=True)
            for f in (line.split() for line in symbols.splitlines()):
                if len(f) == 4 and f[3] == symbol:
                    functions.append((int(address, 16), int(f[1], 16), name, Path(tmp) / obj, int(f[0], 16)))
        loop = next((f for f in functions if f[2] == "rfmodel.sim.core._run"), None)
        if loop is None:
            print("sim_profile: the loop's object code was not in numba's cache", file=sys.stderr)
            return 1
        ips = [
            int(x, 16)
            for x in subprocess.check_output(
                ["perf", "script", "-i", str(data), "-F", "ip"], text=True
            ).split()
        ]
        by_function = Counter()
        for ip in ips:
            owner = next((f[2] for f in functions if f[0] <= ip < f[0] + f[1]), None)
            if owner is not None:
                by_function[owner] += 1
        base, size, _, obj, start = loop
        addresses = [hex(start + ip - base) for ip in ips if base <= ip < base + size]
        lines = subprocess.run(
            ["addr2line", "-e", str(obj), "-j", ".ltext"],
            input="\n".join(addresses),
            capture_output=True,
            text=True,
        ).stdout.split()
    src = CORE.read_text()
    find = stage_of(ast.parse(src))
    text = src.splitlines()
    by_line, by_stage = Counter(), Counter()
    for entry in lines:
        path, _, number = entry.rpartition(":")
        if path.endswith("core.py") and number.isdigit():
            by_line[int(number)] += 1
            by_stage[find(int(number))] += 1
        else:
            by_stage["(no line)"] += 1
    n = max(len(lines), 1)
    compiled = max(sum(by_function.values()), 1)
    print(f"{args.design} on {args.workload}, {args.gpu}: {compiled} of {len(ips)} samples in the package's")
    print("compiled code (the rest: Python, numpy, the trace's loading), by function:")
    for name, k in by_function.most_common():
        print(f"  {100 * k / compiled:5.1f} %  {name}")
    print(f"the loop's {len(lines)} samples")
    print("by stage:")
    for name, k in by_stage.most_common():
        print(f"  {100 * k / n:5.1f} %  {name}")
    print(f"by line (the {args.top} hottest):")
    for line, k in by_line.most_common(args.top):
        print(f"  {100 * k / n:5.1f} %  core.py:{line} [{find(line)}]  {text[line - 1].strip()[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
