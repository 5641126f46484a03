"""One conformance suite over every registered design (in the spirit of scikit-learn's estimator checks).

Each check runs for every design the registry holds, with its capability tags: a new design gets them all
by registering itself.  Simulations use a few warps of one small kernel.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rfmodel
from rfmodel.designs.base import design_classes, get_design
from rfmodel.errors import RfmodelError, SpecError
from rfmodel.evaluate import resolve_gpu
from rfmodel.testing import DesignCheckError, check_design, check_names, check_params, run_check

ROOT = Path(__file__).resolve().parent.parent
NAMES = sorted(design_classes())
SIM = [n for n in NAMES if design_classes()[n].supports_simulate]
GPU = "maxwell-ltrf"
WL = "saxpy"
SMALL = {"max_warps": 8}


# ----------------------------------------------------------------------------- the shipped checks
@pytest.mark.parametrize(("name", "check"), check_params(NAMES))
def test_conformance(name, check):
    """Every check of :mod:`rfmodel.testing` that applies to a design, on every registered design."""
    run_check(name, check)


def test_every_design_gets_the_checks_its_capabilities_call_for():
    for name in NAMES:
        d = design_classes()[name]
        got = set(check_names(name))
        assert {"params_round_trip", "bad_value_is_one_spec_error", "events_match_the_structures"} <= got
        assert ("engines_return_the_same_variables" in got) == d.supports_simulate
        assert ("neutral_point_is_the_baseline" in got) == (d.neutral is not None)
    assert sum("neutral_point_is_the_baseline" in check_names(n) for n in NAMES) >= 2


# ----------------------------------------------------------------------------- sizes follow the grid
@pytest.mark.parametrize(
    ("name", "param", "values", "structure"),
    [
        ("rfc", "rfc_kb", [4, 16, 64], "rf_cache"),
        ("malekeh", "ct_entries", [2, 8, 32], "ccu"),
        ("ltrf", "regs_per_interval", [8, 16, 32], "rf_cache"),
        ("bow", "window", [2, 3, 6], "bow_buffer"),
    ],
)
def test_structure_costs_follow_the_design_grid(name, param, values, structure):
    ds = rfmodel.evaluate(name, WL, GPU, params={param: values})
    area = ds["area_mm2"].sel(structure=structure).isel(workload=0).values
    assert np.all(np.diff(area) > 0), area
    sm = resolve_gpu(GPU)
    s = {x.name: x for x in get_design(name).structures(sm, {param: np.array(values)}, {})}[structure]
    read_pj = np.broadcast_to(s.read_pj, (len(values),))
    assert np.all(np.diff(read_pj) >= 0), read_pj  # a larger structure never costs less per access


def test_cli_bad_design_parameter_is_one_line_and_exit_2():
    cmd = [
        sys.executable,
        "-m",
        "rfmodel.cli",
        "evaluate",
        "--design",
        "rfc",
        "--workload",
        WL,
        "--param",
        "rfc_kb=-3",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    assert "rfc_kb" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


# ----------------------------------------------------------------------------- the banks' memory cell
@pytest.mark.parametrize("name", [n for n in SIM if "main_cell" in design_classes()[n].Params.field_names()])
def test_the_bank_cell_sets_timing_in_both_engines_and_costs_only_the_banks(name):
    cells = ["sram-hp", "stt-ram", "dwm"]
    a = rfmodel.evaluate(name, WL, "fermi-gtx480", params={"main_cell": cells})
    s = rfmodel.evaluate(
        name, WL, "fermi-gtx480", method="simulate", params={"main_cell": cells}, max_warps=4
    )
    # the technology layer at 700 MHz: SRAM 1/1, STT-RAM 1 read / 4 write, DWM 6/6 cycles per bank access
    for ds in (a, s):
        assert ds["main_rf_read_cycles"].isel(workload=0).values.tolist() == [1, 1, 6]
        assert ds["main_rf_write_cycles"].isel(workload=0).values.tolist() == [1, 4, 6]
        assert np.all(ds["ipc"].values > 0)
    bank = "main_rf_bank" if "main_rf_bank" in a.structure.values else "rf_bank"
    area = a["area_mm2"].sel(structure=bank).isel(workload=0).values
    assert len(set(area.round(9))) == 3  # each cell its own bank cost
    others = [x for x in a.structure.values if x not in (bank, "crossbar", "main_network")]
    for st in others:  # collectors and caches stay in the technology's cell (SRAM)
        v = a["area_mm2"].sel(structure=st).isel(workload=0).values
        assert np.allclose(v, v[0]), st
    # the technology's main cell without the parameter: the same timing
    t = rfmodel.evaluate(name, WL, "fermi-gtx480", tech={"main_cell": "dwm"})
    assert float(t["main_rf_read_cycles"].item()) == 6.0


def test_cli_main_cell_sweep_prints_the_cycles(capsys):
    from rfmodel.cli import main

    assert (
        main(
            [
                "evaluate",
                "--design",
                "ltrf",
                "--gpu",
                "maxwell-ltrf",
                "--workload",
                "gemm_micro8x8",
                "--param",
                "main_cell=dwm,tfet,sram-hp",
                "--json",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    import json

    rows = json.loads(out)["rows"]
    cycles = {r["main_cell"]: r["main_rf_read_cycles"] for r in rows}
    assert cycles["sram-hp"] == 1 and cycles["dwm"] > cycles["tfet"] > 1


@pytest.mark.parametrize("name", ["rfc", "ltrf"])
def test_the_main_rf_network_adds_its_cycles_in_both_engines(name):
    """Beyond 64 main-RF banks the network is a flattened butterfly: on maxwell-ltrf (1137 MHz) over 128
    HP-SRAM or TFET banks it takes one cycle more than the SM's crossbar over its 16 banks; over the
    denser DWM banks it fits in the same cycle.  Both engines report it and the simulator's main-RF
    reads arrive that much later (fewer instructions per cycle, everything else equal)."""
    from rfmodel.designs.mainrf import MainRFParams, network_cycles, network_topology, sim_main_rf_timing
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("maxwell-ltrf")
    assert network_topology(64) == "crossbar" and network_topology(65) == "flattened-butterfly"
    assert [network_cycles(sm, c, 128) for c in (None, "tfet", "dwm")] == [1, 1, 0]
    assert network_cycles(sm, None, sm.num_banks) == 0
    near, far = (sim_main_rf_timing(MainRFParams(main_rf_banks=b), sm) for b in (sm.num_banks, 128))
    assert far[2] == near[2] + 1 and far[:2] == near[:2] and far[3] == near[3]
    params = {"main_rf_banks": [16, 128]}
    for method in ("analytic", "simulate"):
        kw = {"max_warps": 8} if method == "simulate" else {}
        ds = rfmodel.evaluate(name, "saxpy", "maxwell-ltrf", method=method, params=params, **kw)
        assert ds["main_rf_network_cycles"].isel(workload=0).values.tolist() == [0, 1]


def test_the_simulators_main_rf_timing_is_the_analytic_one_in_whole_cycles():
    """Known answers of one main-RF access in the simulator (latency, read occupancy, extra arrival cycles,
    write occupancy): the latency is the read time rounded to whole cycles; a read holds its bank for the
    latency or the network's transfer, whichever is longer (1 cycle, 4 with the narrow crossbar); the
    operand arrives ``xfer - 1`` cycles after the access; and the analytic engine's continuous timing
    gives the same figures at the rounded times."""
    from rfmodel.analytic.model import main_rf_timing
    from rfmodel.designs.mainrf import MainRFParams, sim_main_rf_timing
    from rfmodel.evaluate import resolve_gpu

    sm = resolve_gpu("fermi-gtx480")
    cases = {(1.0, 0): (1, 1, 0, 1), (2.5, 0): (2, 2, 0, 2), (3.49, 0): (3, 3, 0, 3), (6.3, 0): (6, 6, 0, 6)}
    cases.update({(1.0, 1): (1, 4, 3, 4), (3.0, 1): (3, 4, 3, 4), (6.3, 1): (6, 6, 3, 6)})
    for (x, narrow), want in cases.items():
        got = sim_main_rf_timing(MainRFParams(main_rf_latency_x=x, narrow_crossbar=narrow), sm)
        assert got == want, (x, narrow)
        lat, occ, xex = main_rf_timing({"narrow_crossbar": narrow}, round(x))
        assert (float(lat), float(occ), float(xex), float(occ)) == want, (x, narrow)


# ----------------------------------------------------------------------------- plug-ins
def _example_design_source() -> str:
    text = (ROOT / "docs" / "designs.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- example-design -->\s*```python\n(.*?)```", text, re.S)
    assert m, "docs/designs.md has no example design block"
    return m.group(1)


def test_the_documented_example_design_runs_and_conforms(tmp_path, monkeypatch):
    """The minimal design of docs/designs.md, installed as a module found through the entry-point group."""
    import importlib.metadata as md

    from rfmodel.designs import base

    (tmp_path / "rf_example_design.py").write_text(_example_design_source(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = md.EntryPoint(name="half_banks", value="rf_example_design:HalfBanks", group=base.ENTRY_POINT_GROUP)

    real = md.entry_points

    def fake(group=None, **kw):  # the rest (numba's extensions) as installed
        if group == base.ENTRY_POINT_GROUP:
            return [ep]
        return real(group=group, **kw) if group is not None else real(**kw)

    monkeypatch.setattr(md, "entry_points", fake)
    monkeypatch.setattr(base, "_LOADED", False)
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    assert "half_banks" in base.design_names()
    d = get_design("half_banks")
    ds = rfmodel.evaluate(d, WL, GPU, params={"share": [0.25, 1.0]}, calibration=False)
    ref = rfmodel.evaluate("baseline", WL, GPU, calibration=False)
    ipc = ds["ipc"].isel(workload=0).values
    assert ipc[1] == pytest.approx(float(ref["ipc"].item()))  # share 1: the baseline itself
    # and under the package's calibration, which has no entry for it: the baseline's shared coefficients
    # (with its defaults under the baseline's anchor it ran 13-16 % above the baseline)
    cal = rfmodel.evaluate(d, WL, GPU, params={"share": [1.0]})
    assert float(cal["ipc"].item()) == float(rfmodel.evaluate("baseline", WL, GPU)["ipc"].item())
    assert "no entry for 'half_banks'" in cal.attrs["calibration"]
    assert ds["bank_conflict_stall_cycles"].isel(workload=0).values[0] <= float(
        ref["bank_conflict_stall_cycles"].item()
    )
    with pytest.raises(SpecError, match="share"):
        rfmodel.evaluate(d, WL, GPU, params={"share": [1.5]})
    # the shipped conformance suite, as a plug-in author runs it (the design is analytic only)
    report = check_design(d)
    assert report["params_round_trip"] == "passed" and report["events_match_the_structures"] == "passed"
    assert report["engines_return_the_same_variables"] == "does not apply"
    assert report["neutral_point_is_the_baseline"] == "passed"
    assert all(v in ("passed", "does not apply") for v in report.values()), report


def _example_module(tmp_path, name="half_banks", extra=""):
    src = _example_design_source().replace('name = "half_banks"', f'name = "{name}"') + extra
    path = tmp_path / f"{name}_design.py"
    path.write_text(src, encoding="utf-8")
    return path


def _broken(name, *change):
    """Plug-in source of a design ``name`` (its class the name in CamelCase): the example design whose
    analytic answer the statements ``change`` alter (on ``out``)."""
    cls = "".join(word.title() for word in name.split("_"))
    body = "".join(f"        {line}\n" for line in change)
    return f"""

@register
class {cls}(HalfBanks):
    name = "{name}"

    def analytic(self, ctx):
        out = super().analytic(ctx)
{body}        return out
"""


@pytest.fixture
def registry(monkeypatch):
    """A registry the test may add to (restored afterwards), with no design file loaded yet."""
    from rfmodel.designs import base

    base.design_names()
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    monkeypatch.setattr(base, "_FILES", {})
    return base


def test_a_failing_check_is_named_and_a_known_failure_is_reported_with_its_reason(tmp_path, registry):
    """A design whose events miss a structure it costs fails that check (one error naming it); declared as
    a known failure, check_design reports the reason and check_params marks it xfail."""
    broken = _broken("no_collector_events", 'out["events"].pop("collector")')
    registry.load_design_file(_example_module(tmp_path, extra=broken))
    with pytest.raises(DesignCheckError, match=r"no_collector_events.*\n  events_match_the_structures: "):
        check_design("no_collector_events", checks=["params_round_trip", "events_match_the_structures"])
    cls = design_classes()["no_collector_events"]
    cls.known_check_failures = {"events_match_the_structures": "collectors not modelled yet"}
    report = check_design(cls, checks=["params_round_trip", "events_match_the_structures"])
    assert report == {
        "params_round_trip": "passed",
        "events_match_the_structures": "known failure: collectors not modelled yet",
    }
    marked = {p.id: p.marks for p in check_params(["no_collector_events"])}
    assert [m.kwargs["reason"] for m in marked["no_collector_events-events_match_the_structures"]] == [
        "collectors not modelled yet"
    ]
    assert not marked["no_collector_events-params_round_trip"]
    with pytest.raises(RfmodelError, match="conformance check"):
        check_design(cls, checks=["no_such_check"])


def test_a_design_file_joins_the_registry_once_and_bad_files_are_one_error(tmp_path, registry):
    path = _example_module(tmp_path, "file_banks")
    assert registry.load_design_file(path) == ["file_banks"]
    assert registry.load_design_file(str(path)) == ["file_banks"]  # the second time: nothing more
    assert "file_banks" in registry.design_names()
    bad = tmp_path / "bad.py"
    bad.write_text("import no_such_module_here\n")
    clash = _example_module(tmp_path, "baseline")
    none = tmp_path / "none.py"
    none.write_text("x = 1\n")
    for f, msg in (
        (tmp_path / "missing.py", "no such file"),
        (bad, "importing it failed: ModuleNotFound"),
        (clash, "registers 'baseline', a name a design already has"),
        (none, "registers no design"),
        (tmp_path, "no such file"),
    ):
        with pytest.raises(RfmodelError, match=msg):
            registry.load_design_file(f)
    assert registry.get_design("baseline").__class__.__module__ == "rfmodel.designs.baseline"


def test_the_environment_and_the_command_line_load_a_design_file(tmp_path, registry, monkeypatch):
    path = _example_module(tmp_path, "env_banks")
    monkeypatch.setenv(registry.DESIGNS_ENV, str(path))
    monkeypatch.setattr(registry, "_LOADED", False)
    assert "env_banks" in registry.design_names()
    # the command line: a subprocess, so the registry of this one is not touched
    cli = _example_module(tmp_path, "cli_banks")
    env = {**os.environ, "RFMODEL_DESIGNS": ""}
    cmd = [
        sys.executable,
        "-m",
        "rfmodel.cli",
        "--design-file",
        str(cli),
        "evaluate",
        "--design",
        "cli_banks",
        "--workload",
        WL,
        "--param",
        "share=0.25",
        "--json",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rows"][0]["share"] == 0.25
    cmd[4] = str(tmp_path / "missing.py")
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    assert out.returncode == 2 and "no such file" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", [n for n in NAMES if n != "baseline"])
def test_a_design_takes_the_baselines_fitted_coefficients_on_every_gpu(name):
    """The coefficients a design shares with the baseline (the interval model's, the banks') are the
    baseline's fitted values on each GPU, so that what the engines get wrong for both cancels in the
    design's effect; only the design's own terms are its own fit."""
    from rfmodel.analytic.calibration import load_calibration
    from rfmodel.calibrate import coef_for, shared_coefficients

    cal = load_calibration()
    if name not in cal["designs"]:
        pytest.skip(f"{name} is not in the package calibration")
    base, entry = cal["designs"]["baseline"], cal["designs"][name]
    shared = shared_coefficients(name)
    assert shared and shared <= set(base["coefficients"])
    for gpu in sorted(set(base.get("per_gpu", {})) | {"ampere-a100"}):
        b, d = coef_for(base, gpu), coef_for(entry, gpu)
        assert {k: d[k] for k in shared} == {k: b[k] for k in shared}, gpu


def test_a_design_that_answers_what_no_register_file_can_is_refused(tmp_path, registry):
    """A plug-in whose terms gave a negative or NaN IPC, or negative events, was printed as an answer (a
    negative IPC ranks first on a minimized time); now one error naming the design and the variable."""
    broken = (
        "\nimport numpy as np\n"
        + _broken("negative_ipc", 'out["ipc"] = -out["ipc"]')
        + _broken("nan_ipc", 'out["ipc"] = out["ipc"] * np.nan')
        + _broken(
            "negative_reads",
            'reads, writes = out["events"]["rf_bank"]',
            'out["events"]["rf_bank"] = (-reads, writes)',
        )
    )
    registry.load_design_file(_example_module(tmp_path, extra=broken))
    for name, what in (
        ("negative_ipc", "ipc = -0"),
        ("nan_ipc", "ipc = nan"),
        ("negative_reads", "[a-z_]+ = -"),
    ):
        with pytest.raises(RfmodelError, match=f"design '{name}' gave {what}.*workload={WL}"):
            rfmodel.evaluate(name, WL, GPU)
    rfmodel.evaluate("half_banks", WL, GPU)  # the design they break runs
