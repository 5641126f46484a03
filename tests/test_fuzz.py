"""Fuzzing the CLI and the public Python functions with generated bad (and some good) input.

The promise: the CLI answers every input with exit status 0 or 2, and with 2 exactly one line on stderr
starting ``rfmodel: error:`` and no traceback; the Python functions return or raise ``RfmodelError``, nothing
else.  The default run draws a few hundred inputs; ``pytest -m slow`` more than a thousand.  Valid inputs are
kept cheap (one small workload, few warps) so that the search spends its time on the error paths; commands
whose valid runs take long (optimize, calibrate, bench) only get values that must be refused.

Besides command lines and arguments, the fuzzing damages what rfmodel reads back or talks to: damaged trace
lines and compressed traces, SM spec fields and design parameters at their extremes, damaged cache entries
(the answer must not change), damaged checkpoints and run folders of ``optimize --resume``, outputs that
cannot be written (a full disk, a path under a file ...), and TCP services that are not Dask schedulers.
The bugs it found have one named test each at the end (each failed before its fix).
"""

from __future__ import annotations

import contextlib
import io
import json
import lzma
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers_cli import small_search
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rfmodel.cli import main
from rfmodel.errors import RfmodelError


def fuzz(n: int, explore: bool = False):
    """Hypothesis settings of a fuzz test drawing ``n`` inputs (no deadline: some inputs run a model).  The
    default suite's draws are the same on every run (``derandomize``), so a test run never fails by the luck
    of the draw; the ``slow`` runs (``explore=True``) draw afresh each time, to find what is not known yet."""
    checks = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=checks,
        derandomize=not explore,
        database=None if not explore else settings.default.database,
    )


def long_run(test, n: int, **strategies):
    """The ``slow`` run of fuzz test ``test``: ``n`` draws afresh (``fuzz(n, explore=True)``) from
    ``strategies``, the test's own."""
    return pytest.mark.slow(fuzz(n, explore=True)(given(**strategies)(test.hypothesis.inner_test)))


JUNK = st.sampled_from(
    [
        "",
        " ",
        "-",
        "--",
        "nan",
        "inf",
        "-inf",
        "-1",
        "0",
        "1e999",
        "99999999999999999999999",
        "x",
        "é",
        "\x00",
        "a=b",
        "=",
        ",",
        "1,2,",
        "../",
        "/dev/null",
        "/nonexistent/x",
    ]
)
TEXT = st.text(min_size=0, max_size=12)
NUM = st.one_of(JUNK, st.integers(-10, 10).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr))
WORKLOAD = st.sampled_from(["saxpy", "nope", "", "synthetic:nope", "/dev/null", "@GARBAGE", "@DIR"])
DESIGN = st.sampled_from(["baseline", "ltrf", "malekeh", "rfc", "nope", "", "BASELINE"])
GPU = st.sampled_from(["fermi-gtx480", "maxwell-ltrf", "nope", "", "/dev/null", "@GARBAGE", "@TOML", "@DIR"])
PARAM_NAME = st.sampled_from(
    [
        "num_banks",
        "regs_per_sm",
        "main_rf_latency_x",
        "main_cell",
        "active_warps",
        "dram_latency_cycles",
        "collector_units",
        "nope",
        "",
        "calib.softmin_q",
    ]
)
PARAM_VALUE = st.one_of(JUNK, st.sampled_from(["1", "2,4", "16", "tfet", "sram-hp,dwm", "0.5", "3"]), TEXT)
PARAM = st.builds(lambda n, v, eq: f"{n}{'=' if eq else ''}{v}", PARAM_NAME, PARAM_VALUE, st.booleans())
OUT = st.sampled_from(["@OUT.nc", "@OUT.csv", "@FILE/x.nc", "/nonexistent/dir/x.nc", "@OUT.txt", "", "@DIR"])


def opt(flag, values):
    """Zero or one ``flag VALUE`` pair."""
    return st.one_of(st.just([]), values.map(lambda v: [flag, v]))


def cat(*parts):
    return st.tuples(*parts).map(lambda xs: [a for x in xs for a in (x if isinstance(x, list) else [x])])


COMMANDS = st.one_of(
    cat(
        st.just("evaluate"),
        st.just(["--workload"]),
        WORKLOAD,
        opt("--design", DESIGN),
        opt("--gpu", GPU),
        opt("--param", PARAM),
        opt("--param", PARAM),
        opt("--method", st.sampled_from(["analytic", "montecarlo", "nope"])),
        opt("--samples", st.sampled_from(["-5", "0", "3", "1e12", "nan", "x", "1000000000"])),
        opt(
            "--uncertainty",
            st.sampled_from(
                [
                    "mem_fraction=normal:nan",
                    "x=normal:0.1",
                    "mem_fraction=u:0.1",
                    "mem_fraction=normal:0.1",
                    "=",
                    "mem_fraction=normal:-1",
                ]
            ),
        ),
        opt("--seed", NUM),
        opt("--out", OUT),
        opt("--config", st.sampled_from(["@GARBAGE", "@TOML", "@DIR"])),
    ),
    cat(
        st.just("simulate"),
        st.just(["--workload"]),
        WORKLOAD,
        opt("--design", DESIGN),
        opt("--gpu", GPU),
        opt("--param", PARAM),
        st.just(["--max-warps"]),
        st.sampled_from(["4", "-1", "0", "x", "1e3"]),
        opt("--out", OUT),
    ),
    cat(
        st.just("tolerance"),
        st.just(["--design"]),
        DESIGN,
        st.just(["--workload"]),
        WORKLOAD,
        st.just(["--method", "analytic"]),
        opt("--tol", NUM),
        opt("--hi", NUM),
        opt("--resolution", NUM),
        opt("--reference", DESIGN),
        opt("--param", PARAM),
    ),
    cat(
        st.just("optimize"),
        st.just(["--workload", "saxpy"]),
        st.sampled_from(
            [
                ["--pop", "-1"],
                ["--pop", "0"],
                ["--pop", "x"],
                ["--pop", "1000000000"],
                ["--generations", "-3"],
                ["--seed", "-1"],
                ["--design", "nope"],
                ["--gpu", "nope"],
                ["--design-param", "nope"],
                ["--workload", "nope"],
                ["--out", "@FILE/x"],
                ["--objective", "time_ns:fast"],
                ["--objective", "ipc:max"],
                ["--constraint", "area_mm2<1"],
                ["--cell", "unobtainium"],
                ["--algorithm", "random"],
                ["--validate", "0"],
                ["--workers", "0"],
                ["--resume", "@DIR"],
                ["--uncertainty", "mem_fraction=weird"],
                ["--uncertainty", "mem_fraction=normal:0.1", "--uncertainty-samples", "1"],
            ]
        ),
    ),
    cat(
        st.just("sensitivity"),
        st.just(["--workload", "saxpy"]),
        st.sampled_from(
            [
                ["--method", "nope"],
                ["--samples", "3"],
                ["--samples", "-8"],
                ["--samples", "1073741824"],
                ["--var", "nope"],
                ["--design", "nope"],
                ["--metric", "nope"],
                ["--seed", "-1"],
                ["--cell", "unobtainium"],
            ]
        ),
    ),
    cat(
        st.just("calibrate"),
        st.just(["--sweep"]),
        st.sampled_from(["@GARBAGE", "@BADSWEEP", "/nonexistent.json", "nope", "@DIR"]),
        st.just(["--out"]),
        st.sampled_from(["@OUT.json", "@FILE/x.json"]),
    ),
    cat(st.just(["workload", "info"]), WORKLOAD),
    cat(st.just(["workload", "list"]), opt("--gpu", GPU)),
    cat(
        st.just(["workload", "export-accelsim"]),
        WORKLOAD,
        OUT,
        opt("--num-sms", st.sampled_from(["0", "-2", "x", "15"])),
        st.just(["--max-warps"]),
        st.sampled_from(["4", "0", "-1", "x"]),
    ),
    cat(st.just(["spec", "show"]), GPU),
    cat(
        st.just(["tech", "query"]),
        st.just(["--cell"]),
        st.sampled_from(["sram-hp", "tfet", "nope", ""]),
        st.just(["--node"]),
        NUM,
        st.just(["--capacity-kb"]),
        NUM,
        opt("--width-bits", NUM),
        opt("--ports", st.sampled_from(["1rw", "9r9w", ""])),
        opt("--banks", NUM),
        opt("--clock-mhz", NUM),
        opt("--data", st.sampled_from(["@GARBAGE", "@DIR", "/nonexistent.csv"])),
    ),
    cat(
        st.just(["tech", "import"]),
        st.sampled_from(["cacti", "nvsim", "nope"]),
        st.sampled_from(["@GARBAGE", "@DIR", "/nonexistent.out"]),
    ),
)
#: values beyond the range of every numeric option (and 2**31, beyond all but the seeds')
BEYOND = st.sampled_from(["-1", "nan", "inf", "-inf", "1e308", str(2**64), "2147483648"])
#: the numeric options of the commands whose valid runs take long: only values that must be refused
LONG_NUMERIC = st.sampled_from(
    [
        ("optimize", "--pop"),
        ("optimize", "--generations"),
        ("optimize", "--seed"),
        ("optimize", "--workers"),
        ("optimize", "--validate"),
        ("optimize", "--node"),
        ("optimize", "--uncertainty-samples"),
        ("optimize", "--percentile"),
        ("optimize", "--reference-seeds"),
        ("calibrate", "--coverage-samples"),
        ("calibrate", "--workers"),
        ("bench", "--repeat"),
        ("bench", "--execute-scale"),
        ("sensitivity", "--samples"),
        ("sensitivity", "--seed"),
        ("tolerance", "--seed"),
        ("tolerance", "--max-warps"),
        ("workload", "execute", "--scale"),
    ]
)


def _beyond(option, value):
    """``option`` (command words, then the flag) with a value out of its range (a seed of 2**31 is valid)."""
    if option[-1] == "--seed" and value == "2147483648":
        value = str(2**64)
    extra = {"tolerance": ["--design", "baseline", "--workload", "saxpy"], "workload": ["saxpy"]}
    return [*option[:-1], *extra.get(option[0], []), option[-1], value]


MONTECARLO = ["evaluate", "--workload", "saxpy", "--method", "montecarlo"]
WIDTH = st.sampled_from(["mem_fraction=normal:", "mem_fraction=lognormal:", "energy=uniform:"])
COMMANDS = st.one_of(
    COMMANDS,
    st.builds(_beyond, LONG_NUMERIC, BEYOND),
    cat(st.just(MONTECARLO), st.sampled_from([["--samples"], ["--level"], ["--seed"]]), BEYOND),
    cat(st.just([*MONTECARLO, "--uncertainty"]), st.builds(lambda d, v: d + v, WIDTH, BEYOND)),
)
#: sometimes a random token somewhere in the command line
ARGV = st.tuples(COMMANDS, st.one_of(st.none(), st.tuples(st.integers(0, 12), st.one_of(JUNK, TEXT)))).map(
    lambda x: x[0] if x[1] is None else x[0][: x[1][0]] + [x[1][1]] + x[0][x[1][0] :]
)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Placeholders of the command lines: a non-UTF-8 file, a folder, a spec TOML with a bad value, a
    sweep with missing fields, a regular file to put an output under, an output folder.  The commands run
    in a scratch folder, so outputs with default names (``export-accelsim``'s traces) land there."""
    d = tmp_path_factory.mktemp("fuzz")
    (d / "garbage.bin").write_bytes(b"\xff\xfe\x00garbage\x80 = [[\n")
    (d / "bad.toml").write_text('name = "x"\nnum_banks = -4\nworkloads = 5\n')
    (d / "sweep.json").write_text('{"name": "x"}')
    (d / "afile").write_text("x")
    (d / "dir").mkdir()
    (d / "out").mkdir()
    here = os.getcwd()
    (d / "scratch").mkdir()
    os.chdir(d / "scratch")
    yield {
        "@GARBAGE": str(d / "garbage.bin"),
        "@TOML": str(d / "bad.toml"),
        "@BADSWEEP": str(d / "sweep.json"),
        "@DIR": str(d / "dir"),
        "@FILE": str(d / "afile"),
        "@OUT": str(d / "out" / "result"),
    }
    os.chdir(here)


def substitute(argv, files):
    out = []
    for a in argv:
        for k, v in files.items():
            if a.startswith(k):
                a = v + a[len(k) :]
        out.append(a)
    return out


def check_cli(argv, capsys):
    """Run the CLI on ``argv`` and check the promise; returns ``(exit status, standard output)``."""
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse: --help or a usage error
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    captured = capsys.readouterr()
    err = captured.err
    assert rc in (0, 2), (argv, rc, err)
    assert "Traceback" not in err, (argv, err)
    if rc == 2:
        lines = [x for x in err.splitlines() if x.strip() and not x.startswith(("note:", "warning:"))]
        errors = [x for x in lines if x.startswith("rfmodel: error:")]
        assert len(errors) == 1 and lines[-1].startswith("rfmodel: error:"), (argv, err)
    return rc, captured.out


@fuzz(200)
@given(argv=ARGV)
def test_cli_fuzz(argv, files, capsys):
    check_cli(substitute(argv, files), capsys)


test_cli_fuzz_long = long_run(test_cli_fuzz, 1000, argv=ARGV)


# ----------------------------------------------------------------------------------- the Python functions
ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(TEXT, st.integers(-3, 3), max_size=2),
)
PARAMS = st.one_of(
    ANY, st.dictionaries(PARAM_NAME, st.one_of(ANY, PARAM_VALUE, st.lists(ANY, max_size=3)), max_size=2)
)


def evaluate_call(design, workload, gpu, method, params, seed, samples):
    import rfmodel

    kw = {"method": method, "params": params, "seed": seed}
    if samples is not None:
        kw["samples"] = samples
    if method == "simulate":
        kw["max_warps"] = 4
    return rfmodel.evaluate(design, workload, gpu, **kw)


def tolerance_call(design, workload, gpu, method, params, seed, samples):
    from rfmodel.tolerance import max_tolerable_latency

    return max_tolerable_latency(
        design,
        workload,
        gpu,
        params=params,
        method="analytic",
        resolution=samples if samples is not None else 0.5,
    )


def workload_call(design, workload, gpu, method, params, seed, samples):
    from rfmodel.workload.suite import load_workload

    return load_workload(workload, num_sms=samples if samples is not None else 15, max_warps=4, seed=seed)


def spec_call(design, workload, gpu, method, params, seed, samples):
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu(gpu)
    return sm.replace(**params) if isinstance(params, dict) and params else sm


CALLS = st.sampled_from([evaluate_call, evaluate_call, tolerance_call, workload_call, spec_call])
API_ARGS = st.tuples(
    CALLS,
    st.one_of(DESIGN, ANY),
    st.one_of(st.sampled_from(["saxpy", "nope", "synthetic:nope", "/dev/null"]), ANY),
    st.one_of(st.sampled_from(["fermi-gtx480", "maxwell-ltrf", "nope"]), ANY),
    st.one_of(st.sampled_from(["analytic", "simulate", "montecarlo", "nope"]), ANY),
    PARAMS,
    st.one_of(st.integers(-3, 3), ANY),
    st.one_of(st.none(), st.sampled_from([-1, 0, 3, 10**12, math.nan]), ANY),
)


def check_api(args):
    fn, *rest = args
    try:
        fn(*rest)
    except RfmodelError:
        pass  # the one error class the API may raise


@fuzz(150)
@given(args=API_ARGS)
def test_api_fuzz(args):
    check_api(args)


test_api_fuzz_long = long_run(test_api_fuzz, 600, args=API_ARGS)


# ----------------------------------------------------------------------------------- damaged Accel-Sim traces
TRACE_LINE = st.one_of(
    st.sampled_from(
        [
            "0000 ffffffff 0 NOP 0 0 0",
            "1" * 20 + " ffffffff 0 NOP 0 0 0",
            "-10 ffffffff 0 NOP 0 0 0",
            "0000 1ffffffff 0 NOP 0 0 0",
            "0000 ffffffff -1 NOP 0 0 0",
            "0000 ffffffff 1 R-5 NOP 0 0",
            "0000 ffffffff 1 R4 LDG.E 1 R2 4 7 0x0 4 0",
            "0000 ffffffff 1 R4 LDG.E 1 R2 4 1 " + "f" * 40,
            "0000 ffffffff 0 NOP 99999999999999999999 0 0",
            "",
            "#BEGIN_TB",
            "warp = -1",
            "insts = x",
        ]
    ),
    st.lists(
        st.sampled_from(["0000", "ffffffff", "1", "R4", "IADD3", "-1", "0x" + "f" * 30, "nan", "RZ"]),
        max_size=9,
    ).map(" ".join),
)
HEADER_VALUE = st.sampled_from(
    [
        ("shmem", "0"),
        ("shmem", "-4096"),
        ("nregs", "-1"),
        ("nregs", str(2**64)),
        ("shmem", "x"),
        ("grid dim", "(0,1,1)"),
        ("block dim", "(-32,1,1)"),
    ]
)
TRACE_HEAD = (
    "-kernel name = k\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-shmem = 0\n-nregs = 8\n"
    "-binary version = 80\n-accelsim tracer version = 5\n-enable lineinfo = 0\n"
)


@fuzz(60)
@given(line=TRACE_LINE, header=HEADER_VALUE)
def test_damaged_traceg_fuzz(line, header, tmp_path_factory):
    """A trace with one damaged instruction line or header value: read, or one ``RfmodelError``."""
    from rfmodel.workload.accelsim import read_traceg

    key, value = header
    head = TRACE_HEAD.splitlines()
    text = "\n".join(f"-{key} = {value}" if ln.startswith(f"-{key} =") else ln for ln in head)
    text += "\n\n#BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\ninsts = 2\n"
    text += f"{line}\n0100 ffffffff 0 EXIT 0 0 0\n\n#END_TB\n"
    p = tmp_path_factory.mktemp("traceg") / "kernel-1.traceg"
    p.write_text(text)
    try:
        read_traceg(p)
    except RfmodelError:
        pass


test_damaged_traceg_fuzz_long = long_run(test_damaged_traceg_fuzz, 300, line=TRACE_LINE, header=HEADER_VALUE)


# ------------------------------------------------------------------------ SM fields and design parameters
def _spec_lines():
    from rfmodel.spec import dumps_spec
    from rfmodel.spec.presets import get_preset

    return dumps_spec(get_preset("fermi-gtx480")).splitlines()


SPEC_LINES = _spec_lines()
#: the scalar fields of an SM spec file (``name = value`` lines of every table)
SPEC_FIELDS = [
    i for i, line in enumerate(SPEC_LINES) if " = " in line and not line.startswith(("name", "source"))
]
EXTREME = st.sampled_from(
    [
        "0",
        "1",
        "2",
        "-1",
        str(2**31),
        str(2**64),
        "nan",
        "inf",
        "-inf",
        "1e308",
        "0.5",
        '"x"',
        "true",
        "[1, 1]",
        "[0, 0]",
        "[-1, 2]",
        "[]",
    ]
)


@fuzz(40)
@given(line=st.sampled_from(SPEC_FIELDS), value=EXTREME, command=st.sampled_from(["evaluate", "simulate"]))
def test_sm_spec_field_fuzz(line, value, command, tmp_path_factory, capsys):
    """An SM spec file with one field at 0, 1, -1, 2^31, 2^64, NaN, inf or of another type: one clean error
    or an answer, in both engines."""
    lines = list(SPEC_LINES)
    lines[line] = lines[line].split(" = ")[0] + " = " + value
    f = tmp_path_factory.mktemp("spec") / "sm.toml"
    f.write_text("\n".join(lines) + "\n")
    check_cli([command, "--gpu", str(f), "--workload", "saxpy", "--json"], capsys)


test_sm_spec_field_fuzz_long = long_run(
    test_sm_spec_field_fuzz,
    300,
    line=st.sampled_from(SPEC_FIELDS),
    value=EXTREME,
    command=st.sampled_from(["evaluate", "simulate"]),
)


def _design_param_values():
    from rfmodel.designs.base import design_classes, get_design

    out = []
    for name in sorted(design_classes()):
        d = get_design(name)
        for p in d.parameters:
            info = d.Params.field_info(p)
            lo, hi = info.bounds if info.bounds is not None else (None, None)
            vals = ["-1", "0", "nan", "inf", "x", str(2**64)]
            vals += [str(v) for v in (lo, hi) if v is not None]
            vals += [str(v - 1) for v in (lo,) if isinstance(v, int | float)]
            vals += [str(v + 1) for v in (hi,) if isinstance(v, int | float)]
            vals += [str(c) for c in (info.choices or ())][:3]
            out += [(name, p, v) for v in vals]
    return out


DESIGN_PARAM_VALUES = _design_param_values()


@fuzz(40)
@given(case=st.sampled_from(DESIGN_PARAM_VALUES), command=st.sampled_from(["evaluate", "simulate"]))
def test_design_parameter_bounds_fuzz(case, command, capsys):
    """Every design parameter at its bounds and beyond them: one clean error or an answer."""
    name, param, value = case
    check_cli(
        [command, "--design", name, "--workload", "saxpy", "--param", f"{param}={value}", "--json"], capsys
    )


test_design_parameter_bounds_fuzz_long = long_run(
    test_design_parameter_bounds_fuzz,
    300,
    case=st.sampled_from(DESIGN_PARAM_VALUES),
    command=st.sampled_from(["evaluate", "simulate"]),
)


# ------------------------------------------------------------------------------- damaged files: shared parts
#: damage to a file's bytes: cut short (at a fraction of its length), bytes changed (at fractions of its
#: length, each XOR a non-zero mask), bytes appended or inserted, emptied
BYTE_DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1, exclude_max=True)),
    st.tuples(
        st.just("overwrite"),
        st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=6),
    ),
    st.tuples(st.just("append"), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("insert"), st.floats(0, 1, exclude_max=True), st.binary(min_size=1, max_size=16)),
    st.just(("empty",)),
)
#: ... or the file replaced by what is not a regular file (a folder, a named pipe, a dangling link, a link to
#: itself) or removed
FILE_DAMAGE = st.one_of(
    BYTE_DAMAGE, st.sampled_from([("folder",), ("fifo",), ("dangling",), ("loop",), ("missing",)])
)


def damaged(data: bytes, how) -> bytes:
    """``data`` after one :data:`BYTE_DAMAGE`."""
    kind, *arg = how
    if kind == "truncate":
        return data[: int(arg[0] * len(data))]
    if kind == "overwrite":
        b = bytearray(data)
        for where, mask in arg[0] if b else ():
            b[min(int(where * len(b)), len(b) - 1)] ^= mask
        return bytes(b)
    if kind == "append":
        return data + arg[0]
    if kind == "insert":
        i = int(arg[0] * len(data))
        return data[:i] + arg[1] + data[i:]
    assert kind == "empty", how
    return b""


def damage_file(path: Path, how) -> None:
    """Apply one :data:`FILE_DAMAGE` to the regular file ``path``."""
    kind = how[0]
    if kind in ("folder", "fifo", "dangling", "loop", "missing"):
        path.unlink()
        if kind == "folder":
            path.mkdir()
            (path / "x").write_text("x")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "dangling":
            path.symlink_to(path.parent / "nowhere")
        elif kind == "loop":
            path.symlink_to(path.name)
        return
    path.write_bytes(damaged(path.read_bytes(), how))


def run_quietly(argv) -> tuple[int, str, str]:
    """``(exit status, stdout, stderr)`` of the CLI run in this process (fixtures have no capsys)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


class Hang(BaseException):
    """A command still running at its time limit.  Not an ``Exception``: no ``except Exception`` in rfmodel
    (or in a library under it) can take it for an error of its own and turn it into a clean exit."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise :class:`Hang` in the block when it runs longer than ``seconds`` (``SIGALRM``: the main thread,
    where pytest runs the tests; a blocking system call is interrupted)."""

    def expire(signum, frame):
        raise Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def check_cli_in_time(argv, capsys, seconds: float):
    """:func:`check_cli` with a time limit: a hang fails the test (as an ``AssertionError``, which hypothesis
    shrinks) instead of blocking the run."""
    try:
        with time_limit(seconds):
            return check_cli(argv, capsys)
    except Hang as e:
        raise AssertionError(f"{argv}: {e}") from None


# ----------------------------------------------------------------------------------- damaged cache entries
#: one cheap answer that reads and writes every kind of cache entry a model run keeps (the technology rows
#: and fits, the workload profile and, when the profile is recomputed, the executed traces)
CACHE_RUN = ["evaluate", "--design", "baseline", "--workload", "saxpy", "--json"]
CACHE_KINDS = ("profiles", "traces", "tech-fit", "tech-rows")
#: damage to the cache: an entry of a kind (its index among the kind's files, modulo their number) damaged,
#: or a kind's folder (or the cache folder itself, ".") replaced by a regular file, removed or emptied
CACHE_DAMAGE = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(CACHE_KINDS), st.integers(0, 63), FILE_DAMAGE),
        st.tuples(
            st.sampled_from((*CACHE_KINDS, ".")), st.none(), st.sampled_from(["file", "missing", "emptied"])
        ),
    ),
    min_size=1,
    max_size=4,
)


def forget_in_memory_entries(monkeypatch) -> None:
    """Forget what this process keeps in memory of the cached data (the profiles, the technology library and
    every ``functools`` cache of the package, but not the source hash that keys the entries), so that the next
    run reads the cache folder as a new process would."""
    import rfmodel.analytic.engine as engine
    import rfmodel.tech.array as array

    monkeypatch.setattr(engine, "_PROFILE_CACHE", {})
    monkeypatch.setattr(array, "_DEFAULT", None)
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith("rfmodel") or name == "rfmodel.cache":
            continue
        for v in list(vars(mod).values()):
            if getattr(v, "__module__", None) == name and callable(getattr(v, "cache_clear", None)):
                v.cache_clear()


@pytest.fixture(scope="module")
def cache_seed(tmp_path_factory):
    """A cache folder filled by one run of :data:`CACHE_RUN`, and that run's answer."""
    root = tmp_path_factory.mktemp("cache-seed") / "cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RFMODEL_CACHE_DIR", str(root))
        forget_in_memory_entries(mp)
        rc, out, err = run_quietly(CACHE_RUN)
    assert rc == 0, err
    kinds = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
    if not {"profiles", "tech-fit", "tech-rows"} <= set(kinds):
        pytest.skip(f"the cache is off in this process (package files changed while it ran?): {kinds}")
    return root, json.loads(out)


def _damage_cache(root: Path, kind: str, index, how) -> None:
    """Damage the cache under ``root``."""
    folder = root / kind
    if index is None:  # the folder
        if folder.is_dir():
            shutil.rmtree(folder)
            if how == "file":
                folder.write_text("not a folder\n")
            elif how == "emptied":
                folder.mkdir()
        return
    files = [p for p in folder.iterdir() if p.is_file() and not p.is_symlink()] if folder.is_dir() else []
    if files:
        damage_file(sorted(files)[index % len(files)], how)


@fuzz(4)
@given(damage=CACHE_DAMAGE)
def test_damaged_cache_entries_fuzz(damage, cache_seed, tmp_path_factory, monkeypatch, capsys):
    """Cache entries cut short, overwritten, emptied, replaced by folders, pipes or links, removed, and cache
    folders replaced by files: the run answers as with the undamaged cache (the damaged entries are
    recomputed), and so does the next run on what it left (what it rewrote serves the same answer)."""
    seed, answer = cache_seed
    root = tmp_path_factory.mktemp("cache") / "cache"
    shutil.copytree(seed, root, symlinks=True)
    try:
        for target in damage:
            _damage_cache(root, *target)
        monkeypatch.setenv("RFMODEL_CACHE_DIR", str(root))
        for run in ("damaged", "healed"):
            forget_in_memory_entries(monkeypatch)
            rc, out = check_cli(CACHE_RUN, capsys)
            event(f"{run} run: exit status {rc}")
            assert rc == 0, (run, damage)
            got = json.loads(out)
            differ = sorted(
                k for k in {*got["attrs"], *answer["attrs"]} if got["attrs"].get(k) != answer["attrs"].get(k)
            )
            assert got == answer, (run, damage, differ, got["rows"], answer["rows"])
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def test_a_changed_digit_in_a_technology_fit_entry_is_recomputed(cache_seed, tmp_path, monkeypatch, capsys):
    """One bit flipped in one digit of each coefficient of the technology fits in the cache, the archive
    rewritten whole around it (a valid file, its header's checksum that of the old content): the run must
    answer as with the undamaged cache."""
    import re

    seed, answer = cache_seed
    root = tmp_path / "cache"
    shutil.copytree(seed, root, symlinks=True)
    entries = sorted((root / "tech-fit").glob("*.npz"))
    assert entries
    for f in entries:
        with np.load(f, allow_pickle=False) as z:
            header = json.loads(str(z["__meta__"][()]))
        head, sep, tail = header["meta"].partition('"coef": [')
        coef, end, rest = tail.partition("]")
        coef = re.sub(r"(\d\.\d\d)(\d)", lambda m: m[1] + str(int(m[2]) ^ 1), coef)
        header["meta"] = head + sep + coef + end + rest
        with open(f, "wb") as fh:
            np.savez(fh, __meta__=np.array(json.dumps(header)))
    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(root))
    forget_in_memory_entries(monkeypatch)
    rc, out = check_cli(CACHE_RUN, capsys)
    assert rc == 0
    assert json.loads(out)["rows"] == answer["rows"]


test_damaged_cache_entries_fuzz_long = long_run(test_damaged_cache_entries_fuzz, 120, damage=CACHE_DAMAGE)


# ------------------------------------------------------------------- damaged checkpoints of optimize --resume
#: a small search (one design, workload and cell, 4 points, 2 generations); its arguments also stand in for
#: those a damaged run description lacks, so that no resume falls back to the long default search
OPT_RUN = small_search(generations=2)
#: the front's files (written as one set: all or none)
FRONT = ("pareto.csv", "pareto.nc", "pareto.png", "pareto_parallel.png", "hypervolume.png")


@pytest.fixture(scope="module")
def optimize_seed(tmp_path_factory):
    """A finished small search (its folder ``run``, with its checkpoint) and the cache it filled (``cache``:
    the evaluation store, the technology fits, the workload's profile)."""
    base = tmp_path_factory.mktemp("optimize-seed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RFMODEL_CACHE_DIR", str(base / "cache"))
        rc, out, err = run_quietly([*OPT_RUN, "--out", base / "run"])
    assert rc == 0, err
    assert (base / "run" / "checkpoint" / "baseline.ckpt").is_file()
    return base


#: JSON values of other kinds than a field holds, and the extremes of numbers
JSON_JUNK = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        1,
        -1,
        2**63,
        2**64,
        -(2**63),
        1.5,
        math.nan,
        math.inf,
        "",
        "x",
        "<f8",
        "int",
        "O",
        "|V8",
        [],
        [1],
        ["x"],
        {},
        {"n": 1},
    ]
)
#: values of a run description's fields: of another kind (refused), out of range (refused) or cheap to run;
#: never a null or empty list of designs, workloads or cells, nor a valid long search (that means all of
#: them: a search of minutes, not an error)
RUN_FIELD_VALUES = {
    "design": [["nope"], ["baseline", "nope"], [""], ["BASELINE"], "baseline"],
    "workload": [["nope"], ["/dev/null"], ["saxpy", "nope"], [""], "saxpy"],
    "gpu": [None, "nope", "", "maxwell-ltrf", ["fermi-gtx480"]],
    "objective": [None, [], ["nope:min"], ["time_ns:min"], ["ipc:max", "area_mm2:min"], ["time_ns:fast"]],
    "constraint": [None, ["area_mm2<=0"], ["nope<=1"], ["ipc>=0.95*baseline"], ["area_mm2<1"]],
    "cell": [["nope"], ["sram-hp", "nope"], ["tfet"], "sram-hp"],
    "algorithm": ["nsga2", "nope", "", None],
    "pop": [-1, 0, 3, 5, 10001, 2**63, 4.0],
    "generations": [-1, 0, 1, 3, 10001, 2**63, 2.0],
    "seed": [-1, 1, 2**32, 2**63],
    "arch": ["nope", "sm_75", "", None],
    "no_brute_force": [True, 1, "true", None],
    "design_param": [None, ["nope"], ["num_banks"], []],
    "uncertainty": [None, ["mem_fraction=weird"], ["x"], [], ["mem_fraction=normal:nan"]],
    "uncertainty_samples": [-1, 0, 1, 4097, 2**63],
    "percentile": [-1, 50, 100, math.nan, math.inf, 1e308, "97.5"],
    "node": [None, [0], [-1], [1001], [math.nan], [22], [45, 45], 45],
    "structure_cell": [None, ["nope"], ["sram-hp"], []],
    "reference_seeds": [-1, 0, 17, 2**63],
    "no_store": [True, False, 0],
}
RUN_EDIT = st.one_of(
    st.sampled_from(sorted(RUN_FIELD_VALUES)).flatmap(
        lambda k: st.sampled_from(RUN_FIELD_VALUES[k]).map(lambda v: ("set", k, v))
    ),
    st.tuples(st.just("drop"), st.sampled_from(sorted(RUN_FIELD_VALUES))),
    st.tuples(st.just("add"), TEXT, JSON_JUNK),
    # the whole description: a JSON value of another kind, an empty object (every field from the command
    # line), a truncated or non-UTF-8 text
    st.tuples(st.just("whole"), st.sampled_from([[], [1, 2], "x", 1, None, True, {}, {"pop": 4}])),
    st.tuples(st.just("text"), st.sampled_from(["", "{", '{"pop": 4,}', "NaN", "[" * 50 + "]" * 50])),
    st.tuples(st.just("bytes"), st.just(b'{"design": ["caf\xe9"]}')),
)
#: an edit of a checkpoint's content, written back as a checked file with a matching checksum (so the
#: content itself is tested, not the checksum): a metadata entry (by its index in a walk of the metadata,
#: modulo their number) set to another value or removed; an array (by index) removed, emptied, grown,
#: flattened, of another type or filled with extreme values; the file of another kind or format version
CKPT_EDIT = st.one_of(
    st.tuples(st.just("meta"), st.integers(0, 999), st.one_of(JSON_JUNK, st.just("DROP"))),
    st.tuples(
        st.just("array"),
        st.integers(0, 999),
        st.sampled_from(
            [
                "drop",
                "empty",
                "grow",
                "flat",
                "float",
                "int",
                "bool",
                "str",
                "nan",
                "huge",
                "negative",
                "transpose",
            ]
        ),
    ),
    st.tuples(
        st.just("kind"),
        st.sampled_from(
            [
                ("rfmodel evaluation store", 1),
                ("x", 1),
                ("rfmodel optimize checkpoint", 2),
                ("rfmodel optimize checkpoint", 0),
            ]
        ),
    ),
)
#: what is damaged in the run's folder, its checkpoint and the cache's evaluation store
RUN_DAMAGE = st.lists(
    st.one_of(
        st.tuples(st.just("ckpt"), FILE_DAMAGE),
        st.tuples(st.just("ckpt-edit"), st.lists(CKPT_EDIT, min_size=1, max_size=3)),
        st.tuples(st.just("run.json"), FILE_DAMAGE),
        st.tuples(st.just("run.json-edit"), RUN_EDIT),
        st.tuples(st.just("store"), FILE_DAMAGE),
        st.tuples(
            st.just("folder"),
            st.sampled_from(
                [
                    "checkpoint-is-file",
                    "checkpoint-missing",
                    "lock-is-folder",
                    "pareto.csv-is-folder",
                    "pareto.nc-is-folder",
                    "temporaries",
                    "bad-ckpt-is-folder",
                ]
            ),
        ),
    ),
    min_size=1,
    max_size=3,
)


def _json_paths(value, path=()):
    """Every place in a JSON value, as key paths."""
    out = [path] if path else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _json_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _json_paths(v, (*path, i))
    return out


def _edited_array(a, how):
    import numpy as np

    if how == "empty":
        return a[:0]
    if how == "grow":
        return np.concatenate([a, a[:1]]) if a.ndim else np.stack([a, a])
    if how == "flat":
        return a.reshape(-1)
    if how == "transpose":
        return a.T
    if how in ("float", "int", "bool"):
        with np.errstate(all="ignore"):
            return a.astype({"float": np.float64, "int": np.int64, "bool": bool}[how])
    if how == "str":
        return a.astype("<U8")
    fill = {"nan": math.nan, "huge": 2**62, "negative": -1}[how]
    if how == "nan" and a.dtype.kind not in "fc":
        fill = -(2**62)
    b = a.copy()
    with np.errstate(all="ignore"):
        b[...] = np.asarray(fill).astype(a.dtype) if a.dtype.kind != "b" else bool(fill)
    return b


def _edit_checkpoint(path: Path, edits) -> None:
    from rfmodel.datafile import read_checked, write_checked
    from rfmodel.optimize.problem import CHECKPOINT_KIND, CHECKPOINT_VERSION

    try:
        meta, arrays = read_checked(path, CHECKPOINT_KIND, CHECKPOINT_VERSION)
    except (RfmodelError, OSError):  # damaged before, or not there: nothing to edit
        return
    kind, version = CHECKPOINT_KIND, CHECKPOINT_VERSION
    for edit in edits:
        if edit[0] == "meta":
            paths = _json_paths(meta)
            where = paths[edit[1] % len(paths)]
            parent = meta
            for k in where[:-1]:
                parent = parent[k]
            if edit[2] == "DROP":
                del parent[where[-1]]
            else:
                parent[where[-1]] = edit[2]
        elif edit[0] == "array":
            name = sorted(arrays)[edit[1] % len(arrays)]
            if edit[2] == "drop":
                del arrays[name]
            else:
                arrays[name] = _edited_array(arrays[name], edit[2])
        else:
            kind, version = edit[1]
    write_checked(path, kind, version, arrays, meta)


def _edit_run_description(path: Path, edit) -> None:
    if not path.is_file() or path.is_symlink():
        return
    if edit[0] == "text":
        path.write_text(edit[1])
        return
    if edit[0] == "bytes":
        path.write_bytes(edit[1])
        return
    try:
        saved = json.loads(path.read_text())
    except (ValueError, OSError):  # damaged before: nothing to edit
        return
    if edit[0] == "set":
        saved[edit[1]] = edit[2]
    elif edit[0] == "drop":
        saved.pop(edit[1], None)
    elif edit[0] == "add":
        saved[edit[1]] = edit[2]
    else:
        saved = edit[1]
    path.write_text(json.dumps(saved))


def _damage_run(run: Path, cache: Path, target, how) -> None:
    ckpt = run / "checkpoint"
    if target == "ckpt" and (ckpt / "baseline.ckpt").is_file():
        damage_file(ckpt / "baseline.ckpt", how)
    elif target == "ckpt-edit":
        _edit_checkpoint(ckpt / "baseline.ckpt", how)
    elif target == "run.json" and (ckpt / "run.json").is_file():
        damage_file(ckpt / "run.json", how)
    elif target == "run.json-edit":
        _edit_run_description(ckpt / "run.json", how)
    elif target == "store":
        stores = sorted((cache / "evaluations").glob("*.npz")) if (cache / "evaluations").is_dir() else []
        if stores and stores[0].is_file():
            damage_file(stores[0], how)
    elif how == "checkpoint-is-file" and ckpt.is_dir():
        shutil.rmtree(ckpt)
        ckpt.write_text("x")
    elif how == "checkpoint-missing" and ckpt.is_dir():
        shutil.rmtree(ckpt)
    elif how == "lock-is-folder":
        (run / ".rfmodel.lock").mkdir(exist_ok=True)
    elif how in ("pareto.csv-is-folder", "pareto.nc-is-folder"):
        name = how.removesuffix("-is-folder")
        if (run / name).is_file():
            (run / name).unlink()
        (run / name).mkdir(exist_ok=True)
    elif how == "temporaries":  # what a killed run leaves: a temporary file, and a folder of such a name
        (run / ".pareto.csv.abcd1234.tmp").write_text("half")
        if ckpt.is_dir():
            (ckpt / ".baseline.ckpt.efgh5678.tmp").mkdir(exist_ok=True)
    elif how == "bad-ckpt-is-folder" and ckpt.is_dir():  # where a foreign checkpoint is set aside
        (ckpt / "baseline.ckpt.bad").mkdir(exist_ok=True)


@fuzz(8)
@given(damage=RUN_DAMAGE)
def test_damaged_checkpoint_resume_fuzz(damage, optimize_seed, tmp_path_factory, monkeypatch, capsys):
    """``optimize --resume`` of a run whose checkpoint, run description, output folder or evaluation store is
    damaged: an answer (a complete front) or one clean error, in bounded time; never a temporary left."""
    base = tmp_path_factory.mktemp("resume")
    shutil.copytree(optimize_seed, base, dirs_exist_ok=True, symlinks=True)
    run, cache = base / "run", base / "cache"
    try:
        for target, how in damage:
            _damage_run(run, cache, target, how)
        monkeypatch.setenv("RFMODEL_CACHE_DIR", str(cache))
        rc, _ = check_cli_in_time([*OPT_RUN, "--resume", str(run)], capsys, 60)
        event(f"exit status {rc}")
        if rc == 0:
            assert all((run / f).is_file() for f in FRONT), (damage, sorted(os.listdir(run)))
        left = [p for p in run.rglob("*.tmp") if p.is_file() and p.name != ".pareto.csv.abcd1234.tmp"]
        assert not left, (damage, left)
    finally:
        shutil.rmtree(base, ignore_errors=True)


test_damaged_checkpoint_resume_fuzz_long = long_run(
    test_damaged_checkpoint_resume_fuzz, 150, damage=RUN_DAMAGE
)


# ------------------------------------------------------------------------- full and unwritable output folders
@contextlib.contextmanager
def file_size_limit(nbytes: int):
    """While the block runs, this process may not make a file larger than ``nbytes`` (``RLIMIT_FSIZE``): a
    write beyond it fails as on a full disk (``EFBIG``; Python ignores ``SIGXFSZ``).  Tests run as root,
    for whom a read-only folder is writable; the limit binds root too."""
    import resource

    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)


#: where an output goes: under a regular file, into /proc, a name longer than a file system allows, onto a
#: folder or a named pipe, under a dangling link, or into a folder on a disk that fills after so many bytes of
#: each file
OUT_PLACE = st.one_of(
    st.sampled_from(
        [("under-file",), ("proc",), ("long-name",), ("onto-folder",), ("onto-pipe",), ("dangling-parent",)]
    ),
    st.tuples(
        st.just("full"),
        st.one_of(
            st.sampled_from([0, 1, 100, 1000, 4096, 16384, 30000, 60000, 200000]), st.integers(0, 300_000)
        ),
    ),
)
#: the commands that write outputs (optimize's search replaced by :func:`small_front`'s)
OUT_COMMAND = st.sampled_from(["evaluate.nc", "evaluate.csv", "simulate.nc", "simulate.csv", "optimize"])


def _out_target(tmp: Path, place: str, command: str) -> Path:
    name = "run" if command == "optimize" else "x" + Path(command).suffix
    if place == "under-file":
        (tmp / "afile").write_text("x")
        return tmp / "afile" / name
    if place == "proc":
        return Path("/proc/rfmodel-fuzz-out") / name
    if place == "long-name":
        return tmp / ("x" * 300 + name)
    if place == "onto-folder":
        (tmp / name).mkdir()
        (tmp / name / "keep").write_text("x")
        return tmp / name if command != "optimize" else tmp / "afile"
    if place == "onto-pipe":
        os.mkfifo(tmp / name)
        return tmp / name
    if place == "dangling-parent":
        (tmp / "link").symlink_to(tmp / "nowhere")
        return tmp / "link" / name
    return tmp / "out" / name


@fuzz(8)
@given(command=OUT_COMMAND, place=OUT_PLACE)
def test_unwritable_output_fuzz(command, place, small_front, tmp_path_factory, monkeypatch, capsys):
    """``--out`` of evaluate, simulate (NetCDF, CSV) and optimize where it cannot be written (under a file, in
    /proc, a name too long, onto a folder or a named pipe, under a dangling link) or on a disk that fills:
    one clean error and no output (no file, no temporary, no part of optimize's set of files); on a disk that
    is large enough, the whole output."""
    import rfmodel.optimize.problem as problem

    monkeypatch.setattr(problem, "optimize", lambda *a, **k: small_front)
    tmp = tmp_path_factory.mktemp("out")
    where = place[0]
    target = _out_target(tmp, where, command)
    if where == "onto-folder" and command == "optimize":  # optimize's folder onto a regular file
        target.write_text("x")
    kind = command.split(".")[0]
    argv = {
        "evaluate": ["evaluate", "--design", "baseline", "--workload", "saxpy"],
        "simulate": ["simulate", "--design", "baseline", "--workload", "saxpy", "--max-warps", "4"],
        "optimize": OPT_RUN,
    }[kind] + ["--out", str(target)]
    limit = place[1] if where == "full" else None
    with file_size_limit(limit) if limit is not None else contextlib.nullcontext():
        rc, _ = check_cli(argv, capsys)
    event(f"{kind} {where}: exit status {rc}")
    if limit is None:
        assert rc == 2, (argv, place)
    left = [p for p in tmp.rglob("*") if p.name.endswith(".tmp")]
    assert not left, (argv, place, left)
    if kind == "optimize":
        written = [f for f in FRONT if os.path.exists(target / f)]
        assert written == (list(FRONT) if rc == 0 else []), (argv, place, written)
    elif where == "onto-folder":
        assert sorted(os.listdir(target)) == ["keep"], (argv, place)
    elif where == "onto-pipe":
        import stat

        assert stat.S_ISFIFO(os.stat(target).st_mode), (argv, place)
    else:  # (os.path's tests: a name too long is no file, where Path's raise)
        assert os.path.isfile(target) == (rc == 0), (argv, place, rc)
        assert rc != 0 or os.path.getsize(target) > 0


test_unwritable_output_fuzz_long = long_run(
    test_unwritable_output_fuzz, 100, command=OUT_COMMAND, place=OUT_PLACE
)


# --------------------------------------------------------------------- services that are not Dask schedulers
#: how a TCP service on the loopback answers a connection: bytes then (after a pause) the close, a Dask-like
#: frame (an 8-byte length, then bytes), an HTTP answer, the client's own bytes echoed back, silence then the
#: close, an immediate close or reset.  Every behaviour ends within about a second.
SERVICE = st.one_of(
    st.tuples(st.just("bytes"), st.binary(max_size=256), st.floats(0, 0.5)),
    st.tuples(
        st.just("frame"),
        st.one_of(st.integers(0, 64), st.integers(0, 2**64 - 1)),
        st.binary(max_size=64),
        st.floats(0, 0.5),
    ),
    st.tuples(
        st.just("http"), st.sampled_from([101, 200, 400, 404, 500]), st.binary(max_size=64), st.floats(0, 0.5)
    ),
    st.tuples(st.just("echo"), st.floats(0, 1)),
    st.tuples(st.just("silent"), st.floats(0, 1)),
    st.just(("close",)),
    st.just(("reset",)),
)


def _answer(conn: socket.socket, behaviour) -> None:
    kind, *arg = behaviour
    conn.settimeout(0.1)
    if kind == "reset":
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        return
    if kind == "bytes":
        conn.sendall(arg[0])
    elif kind == "frame":
        conn.sendall(struct.pack("<Q", arg[0]) + arg[1])
    elif kind == "http":
        body = arg[1]
        head = f"HTTP/1.1 {arg[0]} X\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        conn.sendall(head.encode() + body)
    end = time.monotonic() + arg[-1] if arg else 0
    while time.monotonic() < end:  # hold the connection (echoing what comes), then close it
        try:
            data = conn.recv(65536)
        except TimeoutError:
            continue
        if not data:
            return
        if kind == "echo":
            conn.sendall(data)


@contextlib.contextmanager
def fake_service(behaviour):
    """A TCP service on 127.0.0.1 (only the loopback) answering every connection with ``behaviour``; yields
    its ``tcp://`` address."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.05)
    stop = threading.Event()

    def answer(conn):
        with conn, contextlib.suppress(OSError):
            _answer(conn, behaviour)

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:  # no connection yet
                continue
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        server.close()


def _scheduled_command(command: str, address: str, tmp: Path) -> list[str]:
    if command == "optimize":
        return [*OPT_RUN, "--scheduler", address, "--out", str(tmp / "o")]
    return [
        "calibrate",
        "--quiet",
        "--sweep",
        "quick",
        "--scheduler",
        address,
        "--out",
        str(tmp / "a.json"),
        "--checkpoints",
        str(tmp / "ck"),
        "--report",
        str(tmp / "r.json"),
    ]


@fuzz(8)
@given(behaviour=SERVICE, command=st.sampled_from(["optimize", "calibrate"]))
def test_not_a_dask_scheduler_fuzz(behaviour, command, tmp_path_factory, capsys):
    """``--scheduler`` naming a TCP service that is not a Dask scheduler (it sends random bytes, a frame of
    any length, HTTP, echoes, stays silent, closes or resets): one clean error within the Dask client's
    connection timeout (10 s), never a hang or a traceback."""
    pytest.importorskip("distributed")
    import gc

    tmp = tmp_path_factory.mktemp("scheduler")
    with fake_service(behaviour) as address:
        t0 = time.monotonic()
        rc, _ = check_cli_in_time(_scheduled_command(command, address, tmp), capsys, 60)
        took = time.monotonic() - t0
    gc.collect()  # the failed client goes now, not in a later test
    event(f"{command} {behaviour[0]}: exit status {rc}")
    assert rc == 2, (behaviour, command)
    assert took < 15, (behaviour, command, took)


test_not_a_dask_scheduler_fuzz_long = long_run(
    test_not_a_dask_scheduler_fuzz, 150, behaviour=SERVICE, command=st.sampled_from(["optimize", "calibrate"])
)


# ------------------------------------------------------------------------------ damaged compressed traces
def _xz_trace_text() -> str:
    """A small valid Accel-Sim trace: 2 CTAs of 2 warps, each an add, a load, a store and the exit."""
    head = TRACE_HEAD.replace("(1,1,1)", "(2,1,1)").replace("(32,1,1)", "(64,1,1)")
    text = head
    for c in range(2):
        text += f"\n#BEGIN_TB\n\nthread block = {c},0,0\n\n"
        for w in range(2):
            text += (
                f"warp = {w}\ninsts = 4\n0000 ffffffff 1 R4 IADD3 2 R2 R3 0\n"
                f"0010 ffffffff 1 R5 LDG.E 1 R4 4 1 0x7f00000{c}{w}000 4\n"
                f"0020 ffffffff 0 STG.E 2 R4 R5 4 1 0x7f10000{c}{w}000 4\n"
                "0100 ffffffff 0 EXIT 0 0 0\n\n"
            )
        text += "#END_TB\n"
    return text


XZ_TRACE = _xz_trace_text()
#: how the trace is compressed: the .xz container with each integrity check, or the legacy .lzma format
#: (no check: a changed byte decompresses to other text)
XZ_FORMAT = st.sampled_from(
    [
        (lzma.FORMAT_XZ, lzma.CHECK_CRC64),
        (lzma.FORMAT_XZ, lzma.CHECK_CRC32),
        (lzma.FORMAT_XZ, lzma.CHECK_SHA256),
        (lzma.FORMAT_XZ, lzma.CHECK_NONE),
        (lzma.FORMAT_ALONE, lzma.CHECK_NONE),
    ]
)
XZ_REF = st.sampled_from(["file", "folder", "kernelslist"])
XZ_COMMAND = st.sampled_from(
    [
        ["workload", "info", "@"],
        ["evaluate", "--workload", "@", "--json"],
        ["simulate", "--workload", "@", "--max-warps", "4", "--json"],
    ]
)


@fuzz(20)
@given(fmt=XZ_FORMAT, damage=st.lists(BYTE_DAMAGE, min_size=1, max_size=3), ref=XZ_REF, command=XZ_COMMAND)
def test_damaged_xz_trace_fuzz(fmt, damage, ref, command, tmp_path_factory, capsys):
    """A compressed Accel-Sim trace (``kernel-1.traceg.xz``, named itself, by its folder or by a
    ``kernelslist.g``) cut short, with bytes changed, added or inserted: read, or one clean error
    (``RfmodelError`` from the reader, exit status 2 from the CLI)."""
    from rfmodel.workload.accelsim import read_traceg

    folder = tmp_path_factory.mktemp("xz")
    data = lzma.compress(XZ_TRACE.encode(), format=fmt[0], check=fmt[1])
    for how in damage:
        data = damaged(data, how)
    path = folder / "kernel-1.traceg.xz"
    path.write_bytes(data)
    (folder / "kernelslist.g").write_text("MemcpyHtoD,0x7f0000000000,1024\nkernel-1.traceg\n")
    try:
        read_traceg(path)
    except RfmodelError:
        pass
    where = {"file": path, "folder": folder, "kernelslist": folder / "kernelslist.g"}[ref]
    rc, _ = check_cli([str(where) if a == "@" else a for a in command], capsys)
    event(f"{command[0]}: exit status {rc}")


test_damaged_xz_trace_fuzz_long = long_run(
    test_damaged_xz_trace_fuzz,
    400,
    fmt=XZ_FORMAT,
    damage=st.lists(BYTE_DAMAGE, min_size=1, max_size=3),
    ref=XZ_REF,
    command=XZ_COMMAND,
)


# ------------------------------------------------------------------- bugs the fuzzing above found
def test_a_silent_service_as_scheduler_is_one_error_within_the_timeout(tmp_path):
    """``--scheduler`` naming a service that accepts the connection and then says nothing: one clean error
    within the Dask client's 10 s timeout.  In a process of its own: the client hangs in the handshake."""
    pytest.importorskip("distributed")
    with fake_service(("silent", 600)) as address:
        argv = [sys.executable, "-m", "rfmodel.cli", *OPT_RUN, "--scheduler", address, "--out", str(tmp_path)]
        # 10 s and the start; the room is for a loaded machine: a hang would last the service's 600 s
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 2 and proc.stderr.startswith("rfmodel: error:"), proc.stderr


def test_a_checkpoint_that_is_a_named_pipe_is_refused_at_once(optimize_seed, tmp_path, monkeypatch, capsys):
    shutil.copytree(optimize_seed, tmp_path / "s", symlinks=True)
    run = tmp_path / "s" / "run"
    (run / "checkpoint" / "baseline.ckpt").unlink()
    os.mkfifo(run / "checkpoint" / "baseline.ckpt")
    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path / "s" / "cache"))
    rc, _ = check_cli_in_time([*OPT_RUN, "--resume", str(run)], capsys, 5)
    assert rc == 2


#: a JSON or TOML input file nested deeper than Python's recursion limit
DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("case", ["resume", "sweep", "config", "gpu"])
def test_a_deeply_nested_input_file_is_one_error(case, tmp_path, capsys):
    if case == "resume":
        (tmp_path / "checkpoint").mkdir()
        (tmp_path / "checkpoint" / "run.json").write_text(DEEP_JSON)
        argv = [*OPT_RUN, "--resume", str(tmp_path)]
    elif case == "sweep":
        (tmp_path / "s.json").write_text(DEEP_JSON)
        argv = ["calibrate", "--sweep", str(tmp_path / "s.json"), "--out", str(tmp_path / "a.json")]
    else:
        (tmp_path / "c.toml").write_text(f"a = {DEEP_JSON}\n")
        argv = ["evaluate", f"--{case}", str(tmp_path / "c.toml"), "--workload", "saxpy"]
    rc, _ = check_cli(argv, capsys)
    assert rc == 2


@pytest.mark.parametrize("command", ["evaluate", "optimize"])
def test_an_output_onto_a_named_pipe_is_refused_and_left_alone(command, tmp_path, capsys):
    """``--out`` naming a named pipe (as a device such as /dev/null would be): one clean error, before any
    work, and the pipe is still a pipe (the atomic rename would have put a regular file in its place)."""
    import stat

    target = tmp_path / "pipe.csv"
    os.mkfifo(target)
    if command == "evaluate":
        argv = ["evaluate", "--design", "baseline", "--workload", "saxpy", "--out", str(target)]
    else:
        argv = [*OPT_RUN, "--out", str(target)]
    rc, _ = check_cli_in_time(argv, capsys, 60)
    assert rc == 2
    assert stat.S_ISFIFO(os.stat(target).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.csv"]  # no temporary left
