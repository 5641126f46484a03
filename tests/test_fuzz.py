"""Fuzzing the CLI and the public Python functions with generated bad (and some good) input.

The promise: the CLI answers every input with exit status 0 or 2, and with 2 exactly one line on stderr
starting ``rfmodel: error:`` and no traceback; the Python functions return or raise ``RfmodelError``, nothing
else.  The default run draws a few hundred inputs; ``pytest -m slow`` more than a thousand.  Valid inputs are
kept cheap (one small workload, few warps) so that the search spends its time on the error paths; commands
whose valid runs take long (optimize, calibrate, bench) only get values that must be refused.
"""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfmodel.cli import main
from rfmodel.errors import RfmodelError


def fuzz(n: int, explore: bool = False):
    """Hypothesis settings of a fuzz test drawing ``n`` inputs (no deadline: some inputs run a model).  The
    default suite's draws are the same on every run (``derandomize``), so a test run never fails by the luck
    of the draw; the ``slow`` runs (``explore=True``) draw afresh each time, to find what is not known yet."""
    checks = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]
    return settings(max_examples=n, deadline=None, suppress_health_check=checks, derandomize=not explore,
                    database=None if not explore else settings.default.database)  # fmt: skip


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
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse: --help or a usage error
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    err = capsys.readouterr().err
    assert rc in (0, 2), (argv, rc, err)
    assert "Traceback" not in err, (argv, err)
    if rc == 2:
        lines = [x for x in err.splitlines() if x.strip() and not x.startswith(("note:", "warning:"))]
        errors = [x for x in lines if x.startswith("rfmodel: error:")]
        assert len(errors) == 1 and lines[-1].startswith("rfmodel: error:"), (argv, err)


@fuzz(200)
@given(argv=ARGV)
def test_cli_fuzz(argv, files, capsys):
    check_cli(substitute(argv, files), capsys)


@pytest.mark.slow
@fuzz(1000, explore=True)
@given(argv=ARGV)
def test_cli_fuzz_long(argv, files, capsys):
    check_cli(substitute(argv, files), capsys)


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


@pytest.mark.slow
@fuzz(600, explore=True)
@given(args=API_ARGS)
def test_api_fuzz_long(args):
    check_api(args)
