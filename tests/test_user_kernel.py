"""A user's own kernel, end to end: a listing and a TOML launch recipe (arrays from .npy files or literals,
expected outputs) run by ``rfmodel workload execute``, and the executed trace used by ``evaluate``,
``simulate`` and ``optimize`` (``--recipe``; ``recipe=`` in Python).  The worked example of docs/execute.md
(docs/examples/user_kernel) is run here as the docs give it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rfmodel.cli import main
from rfmodel.errors import ParseError, RfmodelError
from rfmodel.workload.execute.errors import ExecutionError
from rfmodel.workload.execute.recipe import load_recipe, run_recipe
from rfmodel.workload.suite import load_kernel, load_workload, with_recipe

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "user_kernel"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The worked example's folder, its inputs made as the docs say (``python make_inputs.py``); the
    listing compiled from axpby.cu where nvcc and cuobjdump are installed (it must equal the shipped one),
    else the shipped listing."""
    d = tmp_path_factory.mktemp("user_kernel")
    for f in EXAMPLE.iterdir():
        shutil.copy(f, d / f.name)
    subprocess.run([sys.executable, "make_inputs.py"], cwd=d, check=True)
    try:
        from rfmodel.workload.build_sass import find_tools

        tools = find_tools(("nvcc", "cuobjdump"))
    except RfmodelError:
        tools = None
    if tools is not None:
        subprocess.run(
            [str(tools["nvcc"]), "-cubin", "-O3", "-arch=sm_80", "-o", "axpby.cubin", "axpby.cu"],
            cwd=d,
            check=True,
        )
        text = subprocess.run(
            [str(tools["cuobjdump"]), "-sass", "axpby.cubin"],
            cwd=d,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        assert text == (EXAMPLE / "axpby.sm_80.sass").read_text(), "the shipped listing is not axpby.cu's"
    return d


def run(argv, capsys):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_the_worked_example_executes_and_matches_its_expected_output(example, capsys):
    out = example / "out"
    rc, text, err = run(
        [
            "workload",
            "execute",
            example / "axpby.sm_80.sass:axpby",
            "--recipe",
            example / "axpby.toml",
            "--arch",
            "sm_80",
            "--check",
            "--save-outputs",
            out,
            "--json",
        ],
        capsys,
    )
    assert rc == 0, err
    res = json.loads(text)
    assert res["matches_reference"] and res["max_error"] == {"y": 0.0}
    assert sorted(p.name for p in out.iterdir()) == ["in_x.npy", "in_y.npy", "x.npy", "y.npy"]
    assert np.array_equal(np.load(out / "in_y.npy"), np.load(example / "y.npy"))
    assert np.array_equal(np.load(out / "y.npy"), np.load(example / "y_expected.npy"))


def test_the_worked_example_evaluates_on_its_executed_trace(example, capsys):
    rc, text, err = run(
        [
            "evaluate",
            "--workload",
            example / "axpby.sm_80.sass:axpby",
            "--recipe",
            example / "axpby.toml",
            "--gpu",
            "volta-v100",
            "--json",
        ],
        capsys,
    )
    assert rc == 0, err
    res = json.loads(text)
    assert json.loads(res["attrs"]["trace_source"]) == {"axpby": f"execute (recipe {example / 'axpby.toml'})"}
    assert res["rows"][0]["ipc"] > 0


def test_a_recipe_workload_is_the_executed_trace_in_both_engines(example):
    import rfmodel

    ref = f"{example / 'axpby.sm_80.sass'}"
    recipe = example / "axpby.toml"
    wl = load_workload(with_recipe(ref, recipe), num_sms=4)
    assert wl.attrs["trace_source"] == "execute" and wl.attrs["ctas_per_sm"] == 5  # 20 CTAs over 4 SMs
    assert wl.trace.ctas == 5 and wl.kernel.threads_per_cta == 128
    a = rfmodel.evaluate("baseline", ref, "fermi-gtx480", recipe=recipe)
    s = rfmodel.evaluate("baseline", ref, "fermi-gtx480", recipe=recipe, method="simulate")
    for ds in (a, s):
        assert json.loads(ds.attrs["trace_source"])["axpby"].startswith("execute (recipe ")
    # both engines see the same share: the analytic engine's instruction count is the simulator's
    assert float(a.warp_instructions.values.ravel()[0]) == float(s.warp_instructions.values.ravel()[0])
    assert float(abs(a.ipc - s.ipc).max()) < 0.5 * float(s.ipc.max())
    # the expanded trace of the same listing is another workload (its own guesses, not the program's)
    expanded = rfmodel.evaluate("baseline", ref, "fermi-gtx480")
    assert json.loads(expanded.attrs["trace_source"])["axpby"] == "expand"


def test_recipe_data_files_literals_and_expectations(tmp_path):
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.int32).reshape(2, 3))
    (tmp_path / "r.toml").write_text(
        'version = 1\nkernel = "k"\ngrid = [1]\nblock = [32]\noutputs = ["y"]\n'
        '[arrays.x]\nfile = "x.npy"\n[arrays.y]\ndtype = "float32"\ndata = [[1, 2], [3, 4]]\n'
        "[expect.y]\ndata = [1, 2, 3, 4.5]\natol = 0.25\n"
    )
    r = load_recipe(tmp_path / "r.toml")
    ins = r.inputs()
    assert ins["x"].dtype == np.int32 and ins["x"].shape == (2, 3) and ins["x"][1, 2] == 5
    assert ins["y"].dtype == np.float32 and ins["y"].tolist() == [[1, 2], [3, 4]]
    assert r.tolerance["y"] == (0.0, 0.25) and r.reference(ins, {})["y"].tolist() == [[1, 2], [3, 4.5]]
    first = r.digest
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.int32).reshape(2, 3) + 1)
    assert load_recipe(tmp_path / "r.toml").digest != first  # a changed data file is another recipe
    bad = {
        'file = "nope.npy"': "is not a file",
        'file = "x.npy"\ndtype = "float32"': "dtype float32 but",
        "data = [1, 2]": "'data' needs a 'dtype'",
        'data = [[1, 2], [3]]\ndtype = "int32"': "not a rectangular list",
        'file = "x.npy"\ninit = "normal"': "both give its contents",
        'data = [1, 2, 3]\ndtype = "int32"\nshape = [2, 2]': "holds 4 values, the data 3",
    }
    for spec, msg in bad.items():
        head = 'version = 1\nkernel = "k"\ngrid = [1]\nblock = [32]\n[arrays.x]\n'
        (tmp_path / "b.toml").write_text(f"{head}{spec}\n")
        with pytest.raises(ParseError, match=msg):
            load_recipe(tmp_path / "b.toml")


def test_a_kernel_parameter_missing_from_the_recipe_is_refused(example, tmp_path):
    text = (example / "axpby.toml").read_text().replace('  {name = "y", type = "ptr", array = "y"},\n', "")
    (tmp_path / "r.toml").write_text(text)
    for f in ("x.npy", "y.npy", "y_expected.npy"):
        shutil.copy(example / f, tmp_path / f)
    kernel = load_kernel(f"{example / 'axpby.sm_80.sass'}:axpby")
    with pytest.raises(ExecutionError, match=r"reads parameter bytes up to .* a parameter is missing"):
        run_recipe(kernel, load_recipe(tmp_path / "r.toml"))


def test_recipe_misuse_is_one_error(example, tmp_path, capsys):
    listing, recipe = example / "axpby.sm_80.sass", example / "axpby.toml"
    (tmp_path / "plain.toml").write_text((example / "axpby.toml").read_text().split("[expect.y]")[0])
    for f in ("x.npy", "y.npy"):
        shutil.copy(example / f, tmp_path / f)
    plain = tmp_path / "plain.toml"
    cases = [
        (["workload", "execute", listing, "--recipe", plain, "--check"], "declares no expected"),
        (["evaluate", "--workload", listing, "--workload", "saxpy", "--recipe", recipe], "name exactly one"),
        (["evaluate", "--workload", "synthetic:register-sensitive", "--recipe", recipe], "runs a SASS"),
        (["evaluate", "--workload", "expand:saxpy", "--recipe", recipe], "already says how its trace"),
        (["workload", "execute", listing, "--recipe", recipe, "--scale", "2"], "--scale sizes a shipped"),
    ]
    for argv, msg in cases:
        rc, _, err = run(argv, capsys)
        assert rc == 2 and err.startswith("rfmodel: error:") and msg in err, (argv, err)
    with pytest.raises(RfmodelError, match="name exactly one"):
        import rfmodel

        rfmodel.evaluate("baseline", ["saxpy", "reduce_sum"], "fermi-gtx480", recipe=recipe)
