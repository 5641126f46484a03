"""The simulator's faces: evaluate(method="simulate"), the CLI, bench, and the Accel-Sim exporter."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from helpers_reference import reference_or_skip

import rfmodel
from rfmodel.bench import PROFILE_KERNELS
from rfmodel.cli import main
from rfmodel.errors import RfmodelError
from rfmodel.sim import sm_share
from rfmodel.trace import NONE
from rfmodel.workload.accelsim import read_kernelslist, read_traceg
from rfmodel.workload.export_accelsim import check_traceg, export_accelsim, warp_masks
from rfmodel.workload.suite import load_workload

WL = ["saxpy", "synthetic:cache-sensitive"]


@pytest.fixture(scope="module")
def both():
    kw = dict(params={"num_banks": [8, 16]}, max_warps=8)
    a = rfmodel.evaluate("baseline", WL, "volta-v100", **kw)
    s = rfmodel.evaluate("baseline", WL, "volta-v100", method="simulate", **kw)
    return a, s


def test_simulate_and_analytic_share_variable_names(both):
    a, s = both
    assert set(a.data_vars) <= set(s.data_vars)
    for v in a.data_vars:
        assert a[v].dims == s[v].dims, v
        assert a[v].attrs.get("units") == s[v].attrs.get("units"), v
    assert list(a["structure"].values) == list(s["structure"].values)
    diff = s["cycles"] - a["cycles"]  # the point: results subtract directly
    assert diff.dims == ("workload", "num_banks")
    for v in ("warp_instructions", "bank_conflicts", "collector_occupancy", "stall_cycles"):
        assert v in s and "units" in s[v].attrs
    assert s.attrs["engine"] == "simulate" and a.attrs["engine"] == "analytic"


def test_simulate_dataset_is_consistent(both):
    _, s = both
    assert np.allclose(s["ipc"] * s["cycles"], s["warp_instructions"])
    # every scheduler-cycle without an issue has one reason; volta has 4 schedulers
    issue_slots = 4 * s["cycles"]
    assert np.all(s["stall_cycles"].sum("stall_reason") <= issue_slots)
    assert np.allclose(s["energy_pj"].sum("structure"), s["energy_pj_total"])
    assert np.all(s["structure_reads"].sel(structure="rf_bank") == s["rf_reads"])
    assert list(s["stall_reason"].values)[:6] == list(rfmodel.sim.STALL_REASONS)


def test_simulate_rejects_typed_collector_sweeps():
    with pytest.raises(RfmodelError, match="collector_units"):
        rfmodel.evaluate(
            "baseline",
            "saxpy",
            "fermi-gtx480",
            method="simulate",
            params={"collector_units": [8]},
            max_warps=8,
        )


def test_simulate_generic_collector_sweep():
    ds = rfmodel.evaluate(
        "baseline", "saxpy", "volta-v100", method="simulate", params={"collector_units": [4, 8]}, max_warps=8
    )
    assert ds["collector_occupancy"].dims == ("workload", "collector_units")


def test_cli_simulate_json_and_netcdf(tmp_path, capsys):
    out = tmp_path / "sim.nc"
    rc = main(
        [
            "simulate",
            "--workload",
            "saxpy",
            "--gpu",
            "volta-v100",
            "--max-warps",
            "8",
            "--param",
            "num_banks=8,16",
            "--json",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["attrs"]["engine"] == "simulate" and len(doc["rows"]) == 2
    assert {"ipc", "cycles", "bank_conflicts"} <= set(doc["rows"][0])
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        assert "stall_cycles" in ds and ds["cycles"].shape == (1, 2)


def test_cli_simulate_table(capsys):
    argv = ["simulate", "--workload", "saxpy", "--gpu", "fermi-gtx480", "--max-warps", "8", "--quiet"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "stall reasons" in text and "bank_conflict" in text and "engine=simulate" in text


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["simulate", "--workload", "saxpy", "--design", "nodesign"], "unknown design"),
        (["simulate", "--workload", "saxpy", "--param", "num_banks=3", "--gpu", "volta-v100"], "num_banks"),
        (["simulate", "--workload", "/no/such/trace.traceg"], "no/such"),
    ],
)
def test_cli_simulate_errors_are_one_line(argv, msg, capsys):
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def bench_json(capsys, *args):
    """The JSON object ``rfmodel bench --json`` prints for saxpy, one repeat, with ``args``."""
    assert main(["bench", "--json", "--workload", "saxpy", "--repeat", "1", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_bench_part_prints_only_its_figures(capsys):
    doc = bench_json(capsys, "--design", "baseline", "--part", "simulate")
    assert list(doc) == ["context", "simulate"] and list(doc["simulate"]) == ["baseline"]
    b = doc["simulate"]["baseline"]
    assert b["warp_instr_per_s"] > 0 and b["warp_instr_per_cpu_s"] > 0
    assert b["warp_instr_per_cpu_s"] == pytest.approx(b["instructions"] / b["cpu_seconds"])
    ctx = doc["context"]  # where it ran: the load before and after, the revision
    assert len(ctx["load_average_before"]) == 3 and len(ctx["load_average_after"]) == 3
    assert ctx["cpus"] >= 1 and ctx["version"]
    assert (
        main(["bench", "--workload", "saxpy", "--repeat", "1", "--design", "bow", "--part", "simulate"]) == 0
    )
    out = capsys.readouterr().out
    assert "bow" in out and "saxpy" in out and "optimize:" not in out and "execute:" not in out
    assert "warp_instr_per_cpu_s" in out and "load average" in out
    assert main(["bench", "--part", "simulation"]) == 2
    err = capsys.readouterr().err
    assert "unknown part 'simulation'" in err and "simulate, analytic" in err and "Traceback" not in err


@pytest.mark.slow
def test_cli_bench_prints_one_json_object(capsys):
    # two designs' simulator figures (every design's simulation is the conformance suite's)
    doc = bench_json(capsys, "--design", "baseline", "--design", "malekeh", "--execute-scale", "0.5")
    assert sorted(doc["simulate"]) == ["baseline", "malekeh"]
    for design in ("baseline", "malekeh"):
        entry = doc["simulate"][design]
        assert entry["warp_instr_per_s"] > 0 and entry["workload"] == "saxpy"
        assert entry["instructions"] > 0
    opt = doc["optimize"]  # one island of 40 x 5 over the default workloads (points asked again: cached)
    assert 40 < opt["evaluations"] <= 200 and opt["evaluations_per_s"] > 0
    assert opt["seconds_per_10000"] == pytest.approx(10000 / opt["evaluations_per_s"])
    assert opt["cpu_seconds_per_10000"] == pytest.approx(10000 / opt["evaluations_per_cpu_s"])
    ex = doc["execute"]  # the functional executor over the built-in recipes (small problems here)
    assert ex["scale"] == 0.5
    assert ex["kernels"] >= 19 and ex["warp_instructions"] > 0
    assert ex["warp_instr_per_s"] == pytest.approx(ex["warp_instructions"] / ex["seconds"], rel=0.01)
    assert ex["warp_instr_per_cpu_s"] == pytest.approx(ex["warp_instructions"] / ex["cpu_seconds"], rel=0.01)
    assert 0 < ex["slowest"]["warp_instr_per_s"] <= ex["warp_instr_per_s"] * 10
    prof = doc["profile"]  # a first analytic answer and a simulation of never-seen SASS listings
    assert sorted(prof["kernels"]) == sorted(PROFILE_KERNELS)
    for row in prof["kernels"].values():
        assert row["analytic_seconds"] > 0 and row["simulate_seconds"] > 0
        assert row["ratio"] == pytest.approx(row["analytic_seconds"] / row["simulate_seconds"])
        # a first answer builds the list-schedule cells its fixed point reads, not the whole table
        assert 0 < row["sched_cells_built"] < row["sched_cells"] // 4


def test_bench_compare_sets_speeds_side_by_side():
    """Rates and times are compared with the direction that is better for each; a count of work that
    differs makes a row that says the runs are not comparable; context and warm-up are left out."""
    from rfmodel.bench import compare

    def doc(cpus, **baseline):
        """A bench document: the context's CPUs and baseline's simulator figures (500,000 instructions)."""
        return {"context": {"cpus": cpus}, "simulate": {"baseline": {"instructions": 500_000, **baseline}}}

    before = doc(2, warp_instr_per_cpu_s=1.0e6, cpu_seconds=0.5, warmup_seconds=9.0, cycles=100)
    after = doc(4, warp_instr_per_cpu_s=1.25e6, cpu_seconds=0.4, warmup_seconds=1.0, cycles=120)
    rows = {r["figure"]: r for r in compare(before, after)}
    assert sorted(rows) == [
        "simulate.baseline.cpu_seconds",
        "simulate.baseline.cycles",
        "simulate.baseline.warp_instr_per_cpu_s",
    ]
    rate = rows["simulate.baseline.warp_instr_per_cpu_s"]
    assert rate["change"] == pytest.approx(0.25) and rate["better"] is True
    t = rows["simulate.baseline.cpu_seconds"]
    assert t["change"] == pytest.approx(-0.2) and t["better"] is True
    assert rows["simulate.baseline.cycles"]["note"].startswith("differs")
    slower = compare(after, before)
    assert {r["figure"]: r["better"] for r in slower}["simulate.baseline.cpu_seconds"] is False


def test_cli_bench_compare_reads_a_json_file_or_refuses(tmp_path, capsys):
    args = ["bench", "--workload", "saxpy", "--repeat", "1", "--design", "baseline", "--part", "simulate"]
    assert main([*args, "--json"]) == 0
    first = tmp_path / "before.json"
    first.write_text(capsys.readouterr().out)
    assert main([*args, "--compare", str(first)]) == 0
    out = capsys.readouterr().out
    assert "simulate.baseline.warp_instr_per_cpu_s" in out and "change" in out
    assert main([*args, "--compare", str(first), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(doc) == ["after", "before", "comparison"]
    assert any(r["figure"] == "simulate.baseline.cpu_seconds" for r in doc["comparison"])
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    for ref, msg in ((str(bad), "not a bench JSON file"), ("no-such-revision-xyz", "neither a bench JSON")):
        assert main([*args, "--compare", ref]) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------ exporter
@pytest.mark.parametrize("name", ["saxpy", "synthetic:cache-sensitive", "black_scholes"])
def test_export_round_trips_through_our_reader(tmp_path, name):
    wl = load_workload(name, num_sms=15, max_warps=16)
    info = export_accelsim(wl, tmp_path)
    assert [p.name for p in read_kernelslist(tmp_path / "kernelslist.g")] == ["kernel-1.traceg"]
    back = read_traceg(info["traceg"])
    tr = wl.trace
    for col in ("op", "warp_ptr", "mem_ptr", "mem_line"):
        assert np.array_equal(getattr(tr, col), getattr(back, col)), col
    # Accel-Sim's limits: the first destination and the first 4 sources; the lanes of each row as
    # warp_masks names them (an EXIT retires the lanes that leave there, the last one all that remain)
    assert check_traceg(info["traceg"]) == []
    exp_dst, exp_src, exp_active = [], [], []
    for i in range(tr.n_instrs):
        exp_dst.append([int(r) for r in tr.dst[i] if r != NONE][:1])
        exp_src.append([int(r) for r in tr.src[i] if r != NONE][:4])
    for w in range(tr.n_warps):
        masks, _ = warp_masks(tr.op[tr.warp(w)], tr.active[tr.warp(w)])
        exp_active += [m.bit_count() for m in masks]
    assert [[int(r) for r in row if r != NONE] for row in back.dst] == exp_dst
    assert [[int(r) for r in row if r != NONE] for row in back.src] == exp_src
    assert np.array_equal(back.active.astype(int), exp_active)
    assert info["dropped_destinations"] == sum(max(int((row != NONE).sum()) - 1, 0) for row in tr.dst)
    assert np.array_equal(
        np.unique(tr.warp_cta, return_counts=True)[1], np.unique(back.warp_cta, return_counts=True)[1]
    )
    assert (back.regs_per_thread, back.threads_per_cta) == (tr.regs_per_thread, tr.threads_per_cta)


def test_export_keeps_rz_reads(tmp_path):
    ref = reference_or_skip("accelsim-traces", "synthetic", "tiny")
    tr = read_traceg(ref / "kernel-1.traceg")
    export_accelsim(tr, tmp_path)
    back = read_traceg(tmp_path / "kernel-1.traceg")
    assert np.array_equal(back.attrs["rz_src"], tr.attrs["rz_src"])
    assert np.array_equal(back.src, tr.src)
    assert sm_share(back, 80).n_instrs == sm_share(tr, 80).n_instrs


def _builtin_exports():
    """The built-in kernels whose exports Accel-Sim once refused (partial exits, memory rows with no lane,
    shared atomics) in the default suite, the rest under ``-m slow`` (the exporter and its checker are
    Python loops over every row: about 4 CPU-s per kernel)."""
    from rfmodel.workload.suite import builtin_names

    faulted = ("reduce_sum", "merge_pass", "spmv_csr", "histogram256", "fft_radix8")
    return [n if n in faulted else pytest.param(n, marks=pytest.mark.slow) for n in builtin_names()]


@pytest.mark.parametrize("name", _builtin_exports())
def test_exported_traces_of_every_builtin_workload_follow_the_format(tmp_path, name):
    """Every built-in kernel, exported: at most one destination and four sources per instruction (Accel-Sim's
    MAX_DST and MAX_SRC), instruction counts matching their headers, every lane retired by one EXIT and
    nothing after the last, and a width on every memory row: all of check_traceg's rules."""
    info = export_accelsim(load_workload(name, num_sms=15, max_warps=4), tmp_path / name)
    assert check_traceg(info["traceg"]) == [], name
    if name == "fft_radix8":  # wide results (64-bit pairs, vector loads) exist in the suite and were cut
        assert info["dropped_destinations"] > 0


def test_format_check_finds_what_accelsim_rejects(tmp_path):
    bad = tmp_path / "k.traceg"
    bad.write_text(
        "-kernel name = k\n\n#BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\ninsts = 3\n"
        "0000 ffffffff 2 R1 R2 IADD3 1 R3 0 0\n"
        "0010 ffffffff 0 EXIT 0 0 0\n"
        "0020 ffffffff 1 R4 FFMA 5 R1 R2 R3 R5 R6 0 0\n#END_TB\n"
    )
    errors = check_traceg(bad)
    assert any("2 destinations" in e for e in errors)
    assert any("5 sources" in e for e in errors)
    assert any("follows the EXIT" in e for e in errors)


def test_cli_export(tmp_path, capsys):
    assert main(["workload", "export-accelsim", "saxpy", str(tmp_path / "out"), "--max-warps", "8"]) == 0
    assert (tmp_path / "out" / "kernel-1.traceg").is_file()
    assert "instructions" in capsys.readouterr().out


def _module_in(tmp_path, monkeypatch, name: str, body: str):
    """``(module, its file)``: ``body`` written to ``tmp_path / name.py`` and imported, with numba's cache in
    ``tmp_path / "cache"`` for the test."""
    import importlib.util

    import numba.core.config

    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / f"{name}.py"
    src.write_text(body)
    spec = importlib.util.spec_from_file_location(name, src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, src


def test_first_compile_is_detected(tmp_path, monkeypatch):
    """The first-run note ("compiling the cycle simulator", the SASS executor, the profile builders) is
    printed when numba's cache has no code for the function's current source: ``numba_cached`` is False
    before a function's first compile, True after, and False again once its source changes."""
    from numba import njit

    from rfmodel.cache import numba_cached

    mod, src = _module_in(tmp_path, monkeypatch, "mod_cached", "def f(x):\n    return x + 1\n")
    d = njit(cache=True)(mod.f)
    assert not numba_cached(d)
    assert d(1) == 2
    assert numba_cached(njit(cache=True)(mod.f))
    src.write_text("def f(x):\n    return x + 2\n\n")  # another size: another stamp
    assert not numba_cached(njit(cache=True)(mod.f))


def test_a_first_compile_says_so_once(tmp_path, monkeypatch, capsys):
    """``note_first_compile`` names what compiles on stderr where neither this process nor numba's cache
    has the function's code, once per name; a function loaded or compiled already, or cached on disk,
    compiles silently."""
    from numba import njit

    from rfmodel import cache

    monkeypatch.setattr(cache, "_NOTED", set())
    mod, _ = _module_in(tmp_path, monkeypatch, "mod_noted", "def f(x):\n    return x * 2\n")
    d = njit(cache=True)(mod.f)
    assert cache.note_first_compile(d, "the doubler", "a moment")
    assert capsys.readouterr().err == "rfmodel: compiling the doubler (once; a moment) ...\n"
    assert not cache.note_first_compile(njit(cache=True)(mod.f), "the doubler", "a moment")  # once a name
    assert d(2) == 4  # compiled: in this process and in the cache on disk
    monkeypatch.setattr(cache, "_NOTED", set())
    assert not cache.note_first_compile(d, "the doubler", "a moment")
    assert not cache.note_first_compile(njit(cache=True)(mod.f), "the doubler", "a moment")
    assert capsys.readouterr().err == ""


def test_the_compile_lock_is_held_across_processes(tmp_path):
    """numba's cache is not safe when two processes compile one function at once, so the simulator compiles
    and loads its loop and a design's hooks under one lock for the source tree: a second process that asks
    for it waits until the first lets go."""
    import subprocess
    import sys
    import time

    from rfmodel.cache import compile_lock

    log = tmp_path / "order.txt"
    child = (
        "import sys; from rfmodel.cache import compile_lock\n"
        f"open({str(log)!r}, 'a').write('child trying\\n')\n"
        "with compile_lock():\n"
        f"    open({str(log)!r}, 'a').write('child holds\\n')\n"
    )
    with compile_lock():
        proc = subprocess.Popen([sys.executable, "-c", child])
        for _ in range(600):  # the child has started and is asking for the lock
            if log.exists() and "child trying" in log.read_text():
                break
            time.sleep(0.05)
        time.sleep(0.5)
        assert log.read_text() == "child trying\n"  # it waits while this process holds the lock
        with open(log, "a") as f:
            f.write("parent lets go\n")
    assert proc.wait(timeout=60) == 0
    assert log.read_text() == "child trying\nparent lets go\nchild holds\n"


def test_numba_compiles_the_packages_code_with_the_garbage_collector_off_and_back_as_it_was_after():
    """While numba compiles a function of this package, Python's cyclic garbage collector is off (it walked
    the compile's objects again and again); after the compile it is as it was before, on or off, and a
    compile of code outside the package leaves it alone."""
    import gc

    from numba import njit
    from numba.core import event

    from rfmodel.cache import compile_lock

    with compile_lock():  # what the simulator and the executor compile under: it installs the listener
        pass

    seen = []

    class Probe(event.Listener):  # registered after the package's listener: sees what it left
        def on_start(self, ev):
            seen.append(gc.isenabled())

        def on_end(self, ev):
            pass

    def make(module):
        def f(x):
            return x + 1

        f.__module__ = module
        return njit(f)  # no cache: a compile every time

    probe = Probe()
    event.register("numba:compile", probe)
    was = gc.isenabled()
    try:
        for before in (True, False):
            (gc.enable if before else gc.disable)()
            seen.clear()
            assert make("rfmodel.probe")(1) == 2
            assert seen == [False] and gc.isenabled() == before
            seen.clear()
            assert make("someone_else.probe")(1) == 2
            assert seen == [before] and gc.isenabled() == before
    finally:
        event.unregister("numba:compile", probe)
        (gc.enable if was else gc.disable)()


def test_a_designs_hooks_are_compiled_under_the_lock_before_the_loop_takes_them():
    """A simulation compiles (or loads) its design's hooks for the hook signature through
    ``compiled_hooks`` before the loop runs, once per process."""
    import rfmodel
    from rfmodel.designs.stt import stt_write_hook
    from rfmodel.sim import core as C

    C._HOOKS_READY.discard(stt_write_hook)
    rfmodel.evaluate("stt", "saxpy", "fermi-gtx480", method="simulate", max_warps=8)
    assert stt_write_hook in C._HOOKS_READY
    assert C.HOOK_SIG.args in stt_write_hook.overloads


def test_the_per_row_tables_have_a_value_for_every_row_whether_or_not_they_are_modelled():
    """The load/store unit reads a row's sectors and interconnect flits for every memory instruction; on an
    SM whose interconnect ports are not modelled those tables were one-element placeholders, read up to
    eight bytes per row past their end (a worker died of it, twice, in a calibration)."""
    from rfmodel.designs.base import get_design
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.sim import core as C
    from rfmodel.sim.engine import SimOptions, _prepare
    from rfmodel.workload.suite import load_workload

    for gpu in ("fermi-gtx480", "volta-v100"):
        sm = resolve_gpu(gpu)
        trace = load_workload("saxpy", max_warps=4).trace
        opts = SimOptions()
        d = get_design("baseline")
        setup = d.sim_setup(sm, d.default_params, opts, trace=trace)
        p = _prepare(trace, sm, setup, opts)
        rows = len(trace.op)
        for t in (C.T_SECTORS, C.T_REQ_FLITS, C.T_REP_FLITS):
            assert len(p.tabs[t]) >= rows, C.TABLE_FIELDS[t]


@pytest.mark.slow
def test_the_simulator_reads_no_index_out_of_bounds(tmp_path):
    """Every index of the compiled simulator checked (``NUMBA_BOUNDSCHECK=1``, its own numba cache, so a
    first compile: minutes): the baseline and the STT-RAM design, whose write buffer has hooks of its own, on
    a kernel with loads and stores, on an SM with sub-cores and one without."""
    import os
    import subprocess
    import sys

    code = (
        "import warnings; warnings.simplefilter('ignore'); import rfmodel\n"
        "for d in ('baseline', 'stt'):\n"
        "    for g in ('fermi-gtx480', 'volta-v100'):\n"
        "        rfmodel.evaluate(d, 'saxpy', g, method='simulate', max_warps=4)\n"
        "print('checked')\n"
    )
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0 and "checked" in out.stdout, out.stderr[-2000:]


@pytest.mark.parametrize("design, compat", [("baseline", False), ("baseline", True), ("unified", False)])
def test_the_loop_does_the_default_hooks_work_as_the_hooks_do(design, compat, monkeypatch):
    """Where a design's operand, write, may-issue or issued hook is the default one, the loop does its work
    itself instead of calling it (``C_HOOKS_STD``): every count and cycle equals those of the same run
    through the hooks (the flag cleared), both pipelines, with and without a sub-core SM's banks."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.sim import engine, simulate_trace

    sm = resolve_gpu("volta-v100" if design == "unified" else "fermi-gtx480")
    trace = load_workload("sgemm_tiled", max_warps=8).trace
    opts = {"compat": "gpgpusim"} if compat else None
    flags = []
    real = engine._default_hooks
    monkeypatch.setattr(engine, "_default_hooks", lambda hooks: flags.append(real(hooks)) or flags[-1])
    inline = simulate_trace(trace, sm, design, options=opts)
    monkeypatch.setattr(engine, "_default_hooks", lambda hooks: 0)
    called = simulate_trace(trace, sm, design, options=opts)
    assert flags and flags[0] != 0  # the first run took at least one default hook's work into the loop
    assert inline.counts == called.counts
    assert inline.metrics["cycles"] == called.metrics["cycles"]


def test_simulate_trace_resolves_the_point_once_and_refuses_unknown_names():
    """A dict and the design's typed parameters give the same run; a name the design does not have is one
    SpecError naming it, before anything runs (the hooks take the typed object, never the dict)."""
    from rfmodel.designs.base import get_design
    from rfmodel.errors import SpecError
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.sim import simulate_trace

    sm = resolve_gpu("fermi-gtx480")
    trace = load_workload("saxpy", max_warps=4).trace
    d = get_design("bow")
    p = d.resolve({"window": 2})
    assert d.resolve(p) is p
    as_dict = simulate_trace(trace, sm, d, {"window": 2})
    typed = simulate_trace(trace, sm, d, p)
    assert as_dict.metrics["cycles"] == typed.metrics["cycles"]
    assert as_dict.counts["bank_read_acc"] == typed.counts["bank_read_acc"]
    with pytest.raises(SpecError, match="windw"):
        simulate_trace(trace, sm, d, {"windw": 2})
    with pytest.raises(SpecError, match="a dict or BowParams"):  # another design's typed parameters
        simulate_trace(trace, sm, d, get_design("baseline").default_params)
    with pytest.raises(SpecError, match="a dict or"):  # a design's parameters with fields the other lacks
        simulate_trace(trace, sm, get_design("baseline"), p)


def test_best_of_takes_each_speed_at_its_best_and_the_rest_from_the_first_run():
    from rfmodel.bench import best_of

    runs = [
        {
            "simulate": {
                "baseline": {"warp_instr_per_cpu_s": 2.0, "cpu_seconds": 0.5, "cycles": 10, "repeat": 3}
            }
        },
        {
            "simulate": {
                "baseline": {"warp_instr_per_cpu_s": 3.0, "cpu_seconds": 0.7, "cycles": 11, "repeat": 3}
            }
        },
        {
            "simulate": {
                "baseline": {"warp_instr_per_cpu_s": 2.5, "cpu_seconds": 0.4, "cycles": 12, "repeat": 3}
            }
        },
    ]
    best = best_of(runs)["simulate"]["baseline"]
    assert best == {"warp_instr_per_cpu_s": 3.0, "cpu_seconds": 0.4, "cycles": 10, "repeat": 3}
    assert best_of(runs[:1]) == runs[0]


def test_cli_bench_rounds_needs_a_revision_to_compare(tmp_path, capsys):
    args = ["bench", "--workload", "saxpy", "--repeat", "1", "--design", "baseline", "--part", "simulate"]
    first = tmp_path / "before.json"
    first.write_text(json.dumps({"simulate": {}}))
    for extra in ([], ["--compare", str(first)]):
        assert main([*args, "--rounds", "2", *extra]) == 2
        err = capsys.readouterr().err
        assert "--rounds" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main([*args, "--rounds", "11"]) == 2
    assert "--rounds" in capsys.readouterr().err


def test_bench_cold_runs_each_command_from_empty_caches(monkeypatch, capsys):
    """The ``cold`` member runs each command in a child process whose cache folders are new and empty (a
    new installation's), counting the child's CPU time; a failing command is one error; the part runs only
    when named."""
    import rfmodel.bench as B

    probe = (
        "import os, sys, time\n"
        "dirs = [os.environ[k] for k in ('XDG_CACHE_HOME', 'RFMODEL_CACHE_DIR', 'NUMBA_CACHE_DIR')]\n"
        "assert len(set(dirs)) == 3 and not any(os.path.exists(d) for d in dirs), dirs\n"
        "assert os.path.isabs(sys.argv[1]) and sys.argv[1].endswith('out')\n"  # the new folder's path
        "t = time.process_time()\n"
        "while time.process_time() - t < 0.2: pass\n"
    )
    monkeypatch.setattr(B, "COLD_COMMANDS", {"probe": ["-c", probe, "{out}"]})
    assert main(["bench", "--json", "--part", "cold"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"context", "cold"}
    assert 0.2 <= doc["cold"]["probe"]["cpu_seconds"] < 5.0 and doc["cold"]["probe"]["seconds"] > 0.0
    monkeypatch.setattr(B, "COLD_COMMANDS", {"fails": ["-c", "raise SystemExit('no luck')"]})
    assert main(["bench", "--part", "cold"]) == 2
    assert "bench cold fails: exit status 1: no luck" in capsys.readouterr().err
    assert "cold" not in B.BENCH_PARTS  # minutes: not in the default run
