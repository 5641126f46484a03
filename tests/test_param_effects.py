"""A value the user sets changes the answer or is refused, in both engines: every SM-spec field and every
design parameter, changed from the default, changes some result of the analytic engine and of the cycle
simulator, is refused with one error, or the engine says it does not model it (a warning once and the field
in ``ds.attrs["not_modelled"]`` or ``ds.attrs["limits_not_applied"]``).

Each field is probed where it binds: a workload that uses what the field describes (shared memory, double
precision, atomics) and a value that moves it (a limit below the kernel's need, not above)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rfmodel
import rfmodel.spec.occupancy as occupancy
from rfmodel.designs.base import design_classes, get_design
from rfmodel.errors import RfmodelError
from rfmodel.evaluate import resolve_gpu

GPU = "fermi-gtx480"
#: kernels that exercise most of an SM: memory streams, shared memory and FP32, FP64, SFU, integer work
KERNELS = ["saxpy", "sgemm_tiled", "rk4_duffing_dp", "black_scholes", "histogram256"]

#: fields probed at a value of their own (the default probe halves a number, flips a flag, takes another
#: choice): a limit below what the kernels need, a flag that acts only with another field set
PROBES = {
    "warps_per_sm": {"value": 16, "base": {"max_threads_per_cta": 512}},
    "threads_per_warp": {"value": 16, "base": {"max_threads_per_cta": 768}},
    "max_threads_per_cta": {"value": 128},
    "dual_issue_diff_units": {"value": False, "base": {"issue_width": 2}},
    "reg_alloc_granularity": {"value": 512},
    "max_regs_per_thread": {"value": 16},
    "regs_per_cta_limit": {"value": 4096},
    "shmem_per_sm_bytes": {"value": 16384, "base": {"shmem_per_cta_bytes": 16384}},
    "shmem_per_cta_bytes": {"value": 4096},
    "collector_read_ports": {"value": 1},
    "l1d.sectored": {"value": True},
    "l1d.size_bytes": {"value": 4096},
    "l1d.set_index": {"value": "fermi-hash"},
}
#: fields no built-in kernel exercises (no tensor, local-memory or constant-cache instruction is timed by
#: its class's latency in them): listed, not probed
UNEXERCISED = {"latency.tensor", "latency.ld_local", "latency.st_local", "latency.ld_const"}
#: L1D fields of the adaptive carve-out (Volta-class SMs): probed on volta-v100 instead
VOLTA_ONLY = {"l1d.unified_bytes", "l1d.adaptive"}


def _fields(sm) -> list[str]:
    out = []
    for k, v in sm.to_dict().items():
        if k in ("name", "source"):
            continue
        out += [f"{k}.{kk}" for kk in v] if isinstance(v, dict) else [k]
    return out


def _default_value(v):
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v // 2 if v > 1 else v + 1
    if isinstance(v, float):
        return v / 2
    if isinstance(v, list | tuple):
        return [2 * x for x in v]
    return None


def _changed(sm, field: str, value):
    if "." in field:
        parent, k = field.split(".")
        return sm.replace(**{parent: getattr(sm, parent).replace(**{k: value})})
    return sm.replace(**{field: value})


def _summary(ds) -> dict:
    out = {
        k: np.squeeze(np.asarray(ds[k].values, dtype=float)) for k in ds.data_vars if ds[k].dtype.kind == "f"
    }
    out["said"] = (ds.attrs.get("not_modelled", ""), ds.attrs.get("limits_not_applied", ""))
    return out


def _same(a: dict, b: dict) -> bool:
    return a["said"] == b["said"] and all(
        np.allclose(a[k], b[k], rtol=1e-9, equal_nan=True) for k in a if k != "said" and k in b
    )


def _outcome(sm0, sm1, method: str, field: str) -> str:
    kw = {"method": method, "on_no_fit": "nan"}
    base = _summary(rfmodel.evaluate("baseline", KERNELS, sm0, **kw))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            new = _summary(rfmodel.evaluate("baseline", KERNELS, sm1, **kw))
    except RfmodelError:
        return "refused"
    if not _same(base, new):
        said = field.split(".")[-1] in " ".join(new["said"])
        return "said" if said and any(field.split(".")[-1] in str(w.message) for w in caught) else "changes"
    return "ignored"


#: (field, engine) pairs known to be ignored, with the reason: each a strict xfail, so that the fix is noticed
KNOWN_IGNORED: dict[tuple[str, str], str] = {}


def _sm_params():
    out = []
    for f in _fields(resolve_gpu(GPU)):
        if f in UNEXERCISED:
            continue
        for m in ("analytic", "simulate"):
            why = KNOWN_IGNORED.get((f, m))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            out.append(pytest.param(f, m, id=f"{m}-{f}", marks=marks))
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("field", "method"), _sm_params())
def test_every_sm_field_changes_the_answer_or_is_refused_or_said(field, method):
    sm = resolve_gpu("volta-v100" if field in VOLTA_ONLY else GPU)
    probe = PROBES.get(field, {})
    sm0 = sm.replace(**probe["base"]) if "base" in probe else sm
    parent, _, k = field.rpartition(".")
    current = getattr(getattr(sm0, parent), k) if parent else getattr(sm0, field)
    value = probe.get("value", _default_value(current))
    if field == "scheduler":
        value = "lrr"
    elif field == "bank_mapping":
        value = "reg-mod"
    sm1 = _changed(sm0, field, value)
    assert _outcome(sm0, sm1, method, field) != "ignored", (field, current, value)


def test_collector_read_ports_is_said_not_modelled_by_the_analytic_engine():
    """The interval model has no per-collector port limit: a spec that sets one is answered as if it had
    none, and the analytic engine says so; the simulator models it."""
    sm = resolve_gpu(GPU).replace(collector_read_ports=1)
    occupancy._SAID.clear()
    with pytest.warns(UserWarning, match="collector_read_ports"):
        ds = rfmodel.evaluate("baseline", "saxpy", sm)
    assert "collector_read_ports" in ds.attrs["not_modelled"]
    assert rfmodel.evaluate("baseline", "saxpy", GPU).attrs["not_modelled"] == ""
    a = rfmodel.evaluate("baseline", "saxpy", GPU, method="simulate")
    b = rfmodel.evaluate("baseline", "saxpy", sm, method="simulate")
    assert b.attrs["not_modelled"] == "" and float(b["cycles"].max()) > float(a["cycles"].max())


def _design_values(d):
    """(parameter, a value other than the default) for each parameter of a design with one."""
    dflt = d.resolve()
    out = []
    for p in d.parameters:
        info = d.Params.field_info(p)
        v = getattr(dflt, p)
        lo, hi = info.bounds if info.bounds is not None else (None, None)
        if info.choices is not None:  # the last other choice (a main_cell default of None is sram-hp's)
            cands = [c for c in reversed(info.choices) if c != v]
        elif info.type is bool:
            cands = [not v]
        elif info.type in (int, float) and v is not None:
            cands = [v * 2, v // 2 if info.type is int else v / 2, v + 1, lo, hi] if v else [1, 2, hi]
            cands = [
                x
                for x in cands
                if x is not None and x != v and (lo is None or x >= lo) and (hi is None or x <= hi)
            ]
        else:
            cands = []
        if cands:
            out.append((p, cands[0]))
    return out


#: design parameters probed where they act: another parameter set with them (``acts_with``), the SM field
#: they need, or a value beyond what rounds away (the 1 KB of L1D kept is less than a whole set)
DESIGN_PROBES = {
    ("baseline", "active_warps"): {"sm": {"scheduler": "two-level"}},
    ("corf", "metadata"): {"base": {"alloc": "pairs"}},
    ("corf", "loop_weight"): {"base": {"affinity": "depth"}},
    ("malekeh", "interval_cycles"): {"value": 100},
    ("unified", "min_l1d_kb"): {"value": 64},
}


def _design_params():
    out = []
    for n in sorted(design_classes()):
        d = get_design(n)
        for p, v in _design_values(d):
            v = DESIGN_PROBES.get((n, p), {}).get("value", v)
            for m in ("analytic", "simulate") if d.supports_simulate else ("analytic",):
                out.append(pytest.param(n, p, v, m, id=f"{n}-{p}-{m}"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("name", "param", "value", "method"), _design_params())
def test_every_design_parameter_changes_the_answer_or_is_refused_or_said(name, param, value, method):
    """Changed from its default (with what it acts with), every design parameter changes a result of the
    engine, is refused, or is one the engine does not model and says so: a warning and the parameter in
    ``ds.attrs["not_modelled"]``."""
    probe = DESIGN_PROBES.get((name, param), {})
    kw = {"method": method, "on_no_fit": "nan"}
    wl = ["saxpy", "sgemm_tiled"]
    gpu = resolve_gpu(GPU).replace(**probe.get("sm", {}))
    base = {k: [v] for k, v in probe.get("base", {}).items()}
    b = _summary(rfmodel.evaluate(name, wl, gpu, params=base or None, **kw))
    occupancy._SAID.clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            new = _summary(rfmodel.evaluate(name, wl, gpu, params={**base, param: [value]}, **kw))
    except RfmodelError:
        return
    info = design_classes()[name].Params.field_info(param)
    said = method not in info.engines
    if said:  # the engine answers at the default and says so
        assert param in new["said"][0] and any(param in str(w.message) for w in caught), (name, param)
    else:
        assert param not in new["said"][0], (name, param)
        assert not _same(b, new), (name, param, value, method)


def test_a_design_parameter_the_analytic_engine_does_not_model_is_said_and_not_searched():
    """CORF's affinity-graph weights are the simulator's (its compiler pass): the analytic engine answers at
    the default, warns once and lists the value; the optimizer does not search it."""
    from rfmodel.optimize.problem import default_design_params

    occupancy._SAID.clear()
    a = rfmodel.evaluate("corf", "saxpy", GPU)
    with pytest.warns(UserWarning, match="does not model affinity"):
        b = rfmodel.evaluate("corf", "saxpy", GPU, params={"affinity": ["depth"]})
    assert b.attrs["not_modelled"] == "affinity = depth (answered as trips)" and a.attrs["not_modelled"] == ""
    assert float(a["ipc"].max()) == float(b["ipc"].max())
    assert "affinity" not in default_design_params("corf")
    assert "ct_entries" in default_design_params("malekeh") and "seed" not in default_design_params("malekeh")
    # a design names the parameters that are properties of its logic, not knobs: left alone by default
    assert "codec_cycles" not in default_design_params("stt") and "bdi" in default_design_params("stt")
    assert "tag_cycles" not in default_design_params("cerf") and "ways" in default_design_params("cerf")


@pytest.mark.parametrize("method", ["analytic", "simulate"])
def test_bank_ports_set_where_every_bank_is_slow_are_said(method):
    """A bank that takes more than one cycle serves one access at a time in both engines, so the banks' port
    counts act only at one-cycle banks: set where every point's banks are slow (the baseline at 3x, STT-RAM's
    cells at any speed) they are said, and the answer is the one without them; where some point has
    one-cycle banks, or the SM's banks are not the slow main RF (LTRF's register-file cache), nothing is."""
    occupancy._SAID.clear()
    kw = {"method": method, "max_warps": 8} if method == "simulate" else {"method": method}
    slow = {"main_rf_latency_x": [3]}
    with pytest.warns(UserWarning, match="bank_write_ports has no effect where the banks take more than one"):
        said = rfmodel.evaluate("baseline", "saxpy", GPU, params={**slow, "bank_write_ports": [1]}, **kw)
    assert said.attrs["not_modelled"] == (
        "bank_write_ports = 1 (no effect: every point's banks take more than one cycle)"
    )
    plain = rfmodel.evaluate("baseline", "saxpy", GPU, params=slow, **kw)
    assert float(said["ipc"].max()) == float(plain["ipc"].max())
    mixed = rfmodel.evaluate(
        "baseline", "saxpy", GPU, params={"main_rf_latency_x": [1, 3], "bank_write_ports": [1]}, **kw
    )
    assert mixed.attrs["not_modelled"] == ""
    with pytest.warns(UserWarning, match="bank_read_ports has no effect"):
        stt = rfmodel.evaluate("stt", "saxpy", GPU, params={"bank_read_ports": [1]}, **kw)
    assert (
        stt.attrs["not_modelled"]
        == "bank_read_ports = 1 (no effect: every point's banks take more than one cycle)"
    )
    ltrf = rfmodel.evaluate("ltrf", "saxpy", GPU, params={**slow, "bank_write_ports": [1]}, **kw)
    assert ltrf.attrs["not_modelled"] == ""


def test_a_design_parameter_set_where_it_cannot_act_is_said():
    """The baseline's active pool acts only under the two-level scheduler: on a GTO SM it is said; on a
    two-level one it changes the answer and is not."""
    occupancy._SAID.clear()
    with pytest.warns(UserWarning, match="active_warps has no effect unless scheduler = .two-level."):
        gto = rfmodel.evaluate("baseline", "saxpy", GPU, params={"active_warps": [2]})
    assert "active_warps = 2" in gto.attrs["not_modelled"]
    pool = {"active_warps": [2, 8], "scheduler": ["two-level"]}
    two = rfmodel.evaluate("baseline", "saxpy", GPU, params=pool)
    assert two.attrs["not_modelled"] == ""
    assert float(two["ipc"].sel(active_warps=2).max()) != float(two["ipc"].sel(active_warps=8).max())
    # the optimizer searches the pool only where it acts
    from rfmodel.optimize.problem import default_design_params

    sm = resolve_gpu(GPU)
    assert "active_warps" not in default_design_params("baseline", sm)
    assert "active_warps" in default_design_params("baseline", sm.replace(scheduler="two-level"))
    assert "active_warps" in default_design_params("baseline", sm, searched=("scheduler",))
