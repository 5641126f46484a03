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
#: values beyond the range of every numeric option (and 2**31, beyond all but the seeds')
BEYOND = st.sampled_from(["-1", "nan", "inf", "-inf", "1e308", str(2**64), "2147483648"])
#: the numeric options of the commands whose valid runs take long: only values that must be refused
LONG_NUMERIC = st.sampled_from([
    ("optimize", "--pop"), ("optimize", "--generations"), ("optimize", "--seed"), ("optimize", "--workers"),
    ("optimize", "--validate"), ("optimize", "--node"), ("optimize", "--uncertainty-samples"),
    ("optimize", "--percentile"), ("optimize", "--reference-seeds"), ("calibrate", "--coverage-samples"),
    ("calibrate", "--workers"), ("bench", "--repeat"), ("bench", "--execute-scale"),
    ("sensitivity", "--samples"), ("sensitivity", "--seed"), ("tolerance", "--seed"),
    ("tolerance", "--max-warps"), ("workload", "execute", "--scale"),
])  # fmt: skip


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


# ----------------------------------------------------------------------------------- damaged Accel-Sim traces
TRACE_LINE = st.one_of(
    st.sampled_from([
        "0000 ffffffff 0 NOP 0 0 0", "1" * 20 + " ffffffff 0 NOP 0 0 0", "-10 ffffffff 0 NOP 0 0 0",
        "0000 1ffffffff 0 NOP 0 0 0", "0000 ffffffff -1 NOP 0 0 0", "0000 ffffffff 1 R-5 NOP 0 0",
        "0000 ffffffff 1 R4 LDG.E 1 R2 4 7 0x0 4 0", "0000 ffffffff 1 R4 LDG.E 1 R2 4 1 " + "f" * 40,
        "0000 ffffffff 0 NOP 99999999999999999999 0 0", "", "#BEGIN_TB", "warp = -1", "insts = x",
    ]),
    st.lists(st.sampled_from(["0000", "ffffffff", "1", "R4", "IADD3", "-1", "0x" + "f" * 30, "nan", "RZ"]),
             max_size=9).map(" ".join),
)  # fmt: skip
HEADER_VALUE = st.sampled_from([("shmem", "0"), ("shmem", "-4096"), ("nregs", "-1"), ("nregs", str(2**64)),
                                ("shmem", "x"), ("grid dim", "(0,1,1)"),
                                ("block dim", "(-32,1,1)")])  # fmt: skip
TRACE_HEAD = ("-kernel name = k\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-shmem = 0\n-nregs = 8\n"
              "-binary version = 80\n-accelsim tracer version = 5\n-enable lineinfo = 0\n")  # fmt: skip


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


# ------------------------------------------------------------------------ SM fields and design parameters
def _spec_lines():
    from rfmodel.spec import dumps_spec
    from rfmodel.spec.presets import get_preset

    return dumps_spec(get_preset("fermi-gtx480")).splitlines()


SPEC_LINES = _spec_lines()
#: the scalar fields of an SM spec file (``name = value`` lines of every table)
SPEC_FIELDS = [i for i, line in enumerate(SPEC_LINES)
               if " = " in line and not line.startswith(("name", "source"))]  # fmt: skip
EXTREME = st.sampled_from(["0", "1", "2", "-1", str(2**31), str(2**64), "nan", "inf", "-inf", "1e308", "0.5",
                           '"x"', "true", "[1, 1]", "[0, 0]", "[-1, 2]", "[]"])


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


@pytest.mark.slow
@fuzz(300, explore=True)
@given(line=st.sampled_from(SPEC_FIELDS), value=EXTREME, command=st.sampled_from(["evaluate", "simulate"]))
def test_sm_spec_field_fuzz_long(line, value, command, tmp_path_factory, capsys):
    test_sm_spec_field_fuzz.hypothesis.inner_test(line, value, command, tmp_path_factory, capsys)


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
    check_cli([command, "--design", name, "--workload", "saxpy", "--param", f"{param}={value}", "--json"],
              capsys)  # fmt: skip


@pytest.mark.slow
@fuzz(300, explore=True)
@given(case=st.sampled_from(DESIGN_PARAM_VALUES), command=st.sampled_from(["evaluate", "simulate"]))
def test_design_parameter_bounds_fuzz_long(case, command, capsys):
    test_design_parameter_bounds_fuzz.hypothesis.inner_test(case, command, capsys)
