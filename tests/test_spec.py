"""Tests of rfmodel.spec: the spec mechanism, TOML I/O, SMSpec, presets and the GPGPU-Sim import."""

from __future__ import annotations

import dataclasses
import math
import operator
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers_reference import needs_reference, reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfmodel.errors import ParseError, RfmodelError, SpecError, UnknownNameError
from rfmodel.ir import OpClass
from rfmodel.spec import (
    GPGPUSIM_DEFAULTS,
    OP_CLASS_NAMES,
    PRESETS,
    CollectorSpec,
    L1DSpec,
    LatencySpec,
    SMSpec,
    Spec,
    dumps,
    dumps_spec,
    from_gpgpusim_config,
    get_preset,
    import_gpgpusim_config,
    load_spec,
    loads_spec,
    param,
    save_spec,
    spec_kinds,
)
from rfmodel.spec import base as _spec_base

CONFIGS = reference("gpgpusim-configs")
needs_configs = needs_reference("gpgpusim-configs")


# --------------------------------------------------------------------------- a small test spec
@dataclass(frozen=True)
class _Part(Spec, kind="test.part"):
    size: int = param(4, unit="B", bounds=(1, 64), doc="a size")
    label: str = param("p", doc="a label")


@dataclass(frozen=True)
class _Widget(Spec, kind="test.widget", version=3):
    count: int = param(2, unit="items", bounds=(0, 10), doc="how many")
    ratio: float = param(0.5, unit="1", bounds=(0.0, 1.0), doc="a fraction")
    mode: str = param("a", choices=("a", "b"), doc="a mode")
    flag: bool = param(False, doc="a flag")
    sizes: tuple[int, ...] = param((1, 2), unit="B", bounds=(0, 100), item_type=int, doc="sizes")
    pair: tuple[int, int] = param((1, 0), unit="cycles", bounds=((1, 9), (0, 9)), doc="two numbers")
    part: _Part = param(_Part(), doc="a nested spec")
    parts: tuple[_Part, ...] = param((), item_type=_Part, doc="nested specs")
    note: str | None = param(optional=True, type=str, doc="optional text")
    step: int = param(8, unit="B", bounds=(0, 64), multiple_of=8, doc="a multiple of 8")

    def _check(self):
        if self.count > 5 and self.flag:
            self._fail("count", self.count, "at most 5 when flag is set")


# keep the test kinds out of the global registry except while a test needs them
_spec_base._REGISTRY.pop("test.part")
_spec_base._REGISTRY.pop("test.widget")


@pytest.fixture
def test_kinds():
    saved = dict(_spec_base._REGISTRY)
    _spec_base._REGISTRY.update({"test.part": _Part, "test.widget": _Widget})
    yield
    _spec_base._REGISTRY.clear()
    _spec_base._REGISTRY.update(saved)


class TestSpecMechanism:
    def test_error_names_field_value_and_range(self):
        with pytest.raises(SpecError) as ei:
            SMSpec(warps_per_sm=0)
        e = ei.value
        assert (e.where, e.field, e.value) == ("sm", "warps_per_sm", 0)
        assert "[1, 256]" in e.allowed and "warps" in e.allowed
        assert "warps_per_sm" in str(e) and "0" in str(e)

    @pytest.mark.parametrize(
        "field, value",
        [
            ("count", True),
            ("count", "3"),
            ("count", 2.5),
            ("ratio", float("nan")),
            ("ratio", "x"),
            ("flag", 1),
            ("mode", "c"),
            ("sizes", (1, 200)),
            ("sizes", "12"),
            ("pair", (1, 2, 3)),
            ("pair", (0, 0)),
            ("step", 12),
            ("part", 5),
            ("label_missing", 1),
        ],
    )
    def test_bad_values_rejected(self, field, value):
        if field == "label_missing":
            with pytest.raises(TypeError):
                _Widget(label_missing=1)
            return
        with pytest.raises(SpecError) as ei:
            _Widget(**{field: value})
        assert ei.value.field == field

    def test_canonical_coercions(self):
        w = _Widget(count=3.0, ratio=1, sizes=[3, 4], pair=[2, 2], part={"size": 8})
        assert w.count == 3 and type(w.count) is int
        assert w.ratio == 1.0 and type(w.ratio) is float
        assert w.sizes == (3, 4) and w.pair == (2, 2)
        assert w.part == _Part(size=8)
        hash(w)  # hashable: every value is immutable

    def test_frozen(self):
        w = _Widget()
        with pytest.raises(dataclasses.FrozenInstanceError):
            w.count = 3

    def test_cross_field_rule(self):
        _Widget(count=6)
        with pytest.raises(SpecError, match="at most 5 when flag is set"):
            _Widget(count=6, flag=True)

    def test_replace_validates_and_suggests(self):
        w = _Widget()
        assert w.replace(count=4).count == 4
        with pytest.raises(SpecError):
            w.replace(count=11)
        with pytest.raises(SpecError, match="did you mean 'count'"):
            w.replace(coutn=1)

    def test_replace_merges_nested_mapping(self):
        s = get_preset("volta-v100")
        t = s.replace(l1d={"hit_latency_cycles": 30})
        assert t.l1d == s.l1d.replace(hit_latency_cycles=30)
        with pytest.raises(SpecError) as ei:
            s.replace(l1d={"asoc": 8})
        assert ei.value.where == "sm.l1d" and "did you mean 'assoc'" in str(ei.value)

    def test_from_dict_unknown_key_suggests(self):
        with pytest.raises(SpecError, match="did you mean 'warps_per_sm'"):
            SMSpec.from_dict({"warps_per_SM": 32})
        with pytest.raises(SpecError) as ei:
            SMSpec.from_dict({"l1d": {"hit_latncy_cycles": 3}}, where="f.toml: sm")
        assert ei.value.where == "f.toml: sm.l1d"
        assert "hit_latency_cycles" in str(ei.value)

    def test_from_dict_where_for_own_errors(self):
        with pytest.raises(SpecError) as ei:
            SMSpec.from_dict({"num_banks": 6, "sub_core": True, "schedulers_per_sm": 4}, where="x.toml: sm")
        assert ei.value.where == "x.toml: sm" and ei.value.field == "num_banks"

    def test_from_dict_checks_kind_and_version(self):
        assert _Widget.from_dict({"kind": "test.widget", "version": 3}) == _Widget()
        with pytest.raises(SpecError):
            _Widget.from_dict({"version": 2})
        with pytest.raises(SpecError):
            _Widget.from_dict({"kind": "sm"})

    def test_optional_field_left_out_of_dict(self):
        assert "note" not in _Widget().to_dict()
        assert _Widget(note="hi").to_dict()["note"] == "hi"

    def test_paths(self):
        s = get_preset("volta-v100")
        assert s.get_path("l1d.hit_latency_cycles") == 20
        t = s.replace_paths({"num_banks": 8, "l1d.hit_latency_cycles": 30, "latency.sfu": (10, 4)})
        assert (t.num_banks, t.l1d.hit_latency_cycles, t.latency.sfu) == (8, 30, (10, 4))
        assert t.l1d.assoc == s.l1d.assoc
        with pytest.raises(SpecError, match="did you mean 'l1d'"):
            s.replace_paths({"l1e.size_bytes": 1})
        with pytest.raises(SpecError):
            s.replace_paths({"l1d.size_bytes": 1000})  # not sets x assoc x line

    def test_digest_tracks_values(self):
        a = get_preset("fermi-gtx480")
        assert a.digest() == get_preset("fermi-gtx480").replace().digest()
        assert a.digest() != a.replace(num_banks=32).digest()

    def test_reserved_field_names(self):
        @dataclass(frozen=True)
        class Bad(Spec):
            version: int = param(1, doc="x")

        with pytest.raises(TypeError, match="reserved"):
            Bad()

    def test_registry_and_duplicate_kind(self):
        assert spec_kinds()["sm"] is SMSpec
        assert "test.widget" not in spec_kinds()
        with pytest.raises(TypeError, match="already used"):

            @dataclass(frozen=True)
            class Other(Spec, kind="sm"):
                x: int = param(1, doc="x")

    def test_every_numeric_field_has_unit_and_doc(self):
        def walk(cls, prefix=""):
            for name, info in cls._infos().items():
                if isinstance(info.type, type) and issubclass(info.type, Spec):
                    yield from walk(info.type, prefix + name + ".")
                else:
                    yield prefix + name, info

        rows = list(walk(SMSpec))
        assert len(rows) > 60
        for name, info in rows:
            assert info.doc, name
            if info.type in (int, float) or info.item_type in (int, float):
                assert info.unit, f"{name} has no unit"
                assert info.bounds is not None or info.choices is not None, f"{name} has no range"

    def test_docs_list_every_field_and_preset(self):
        doc = Path(__file__).parents[1] / "docs" / "spec.md"
        text = doc.read_text(encoding="utf-8")
        for name, *_ in SMSpec.describe_fields():
            assert f"`{name}`" in text, f"docs/spec.md does not describe {name}"
        for name in PRESETS:
            assert f"`{name}`" in text, f"docs/spec.md does not describe preset {name}"


# --------------------------------------------------------------------------- TOML
class TestToml:
    @pytest.mark.parametrize("name", sorted(PRESETS))
    def test_preset_round_trip(self, name, tmp_path):
        spec = PRESETS[name]
        path = save_spec(spec, tmp_path / f"{name}.toml")
        back = load_spec(path)
        assert back == spec and back.digest() == spec.digest()
        assert load_spec(str(path), kind="sm") == spec
        assert loads_spec(path.read_text()) == spec
        text = path.read_text()
        assert text.startswith('version = 1\nkind = "sm"\n')

    def test_writer_scalars_and_keys(self):
        data = {
            "s": 'q"uote\\ back\nline\ttab\r\x01\x7f é 漢',
            "f": [0.1, 1e-300, -0.0, 1e16, 123456789.123456789, math.inf, -math.inf],
            "i": [0, -5, 2**62],
            "b": [True, False],
            "odd key": 1,
            "nested": {"t": {"u": [[1, 2], []]}, "v": [{"a": 1, "b": "x"}]},
        }
        import tomllib

        back = tomllib.loads(dumps(data))
        assert back == data
        assert math.copysign(1.0, back["f"][2]) == -1.0

    def test_malformed_toml_names_file_and_line(self, tmp_path):
        p = tmp_path / "bad.toml"
        p.write_text('version = 1\nkind = "sm"\nwarps_per_sm = = 3\n')
        with pytest.raises(ParseError) as ei:
            load_spec(p)
        assert ei.value.line == 3 and ei.value.path == str(p)
        assert str(p) in str(ei.value) and ":3:" in str(ei.value)

    def test_version_and_kind_required(self, test_kinds):
        with pytest.raises(ParseError, match="missing 'version'"):
            load_spec('kind = "sm"\n')
        with pytest.raises(ParseError, match="missing 'kind'"):
            load_spec("version = 1\n")
        with pytest.raises(ParseError, match="newer"):
            load_spec('version = 2\nkind = "sm"\n')
        with pytest.raises(ParseError, match="did you mean 'sm'"):
            load_spec('version = 1\nkind = "smm"\n')
        with pytest.raises(ParseError, match="expected 'test.widget'"):
            load_spec('version = 1\nkind = "sm"\n', kind=_Widget)

    def test_missing_keys_take_defaults_and_values_are_checked(self):
        s = load_spec('version = 1\nkind = "sm"\nwarps_per_sm = 32\n[l1d]\nassoc = 8\n')
        assert s == SMSpec(warps_per_sm=32, l1d=L1DSpec(assoc=8))
        with pytest.raises(SpecError) as ei:
            load_spec('version = 1\nkind = "sm"\nnum_banks = 0\n')
        assert ei.value.where == "<string>: sm" and ei.value.field == "num_banks"

    def test_unreadable_file(self, tmp_path):
        with pytest.raises(ParseError, match="cannot read"):
            load_spec(tmp_path / "nope.toml")

    def test_non_sm_kind_round_trip(self, tmp_path, test_kinds):
        w = _Widget(count=7, note="n", parts=(_Part(size=2), _Part(label='x"y')), sizes=())
        back = load_spec(save_spec(w, tmp_path / "w.toml"))
        assert back == w and isinstance(back, _Widget)
        assert 'version = 3\nkind = "test.widget"' in (tmp_path / "w.toml").read_text()

    def test_atomic_write_leaves_old_file_on_failure(self, tmp_path, monkeypatch):
        p = tmp_path / "s.toml"
        save_spec(get_preset("fermi-gtx480"), p)
        before = p.read_text()

        def boom(src, dst):
            raise OSError("disk full")

        monkeypatch.setattr(os, "replace", boom)
        with pytest.raises(RfmodelError, match="cannot write here: disk full"):  # the project's error class
            save_spec(get_preset("volta-v100"), p)
        assert p.read_text() == before
        assert sorted(x.name for x in tmp_path.iterdir()) == ["s.toml"]

    def test_save_creates_folder_and_replaces(self, tmp_path):
        p = tmp_path / "a" / "b" / "s.toml"
        save_spec(get_preset("fermi-gtx480"), p)
        save_spec(get_preset("volta-v100"), p)
        assert load_spec(p) == get_preset("volta-v100")
        assert sorted(x.name for x in p.parent.iterdir()) == ["s.toml"]


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
_pair = st.tuples(st.integers(1, 100_000), st.integers(0, 100_000))


@st.composite
def sm_specs(draw):
    tpw = draw(st.sampled_from([8, 16, 32]))
    warps = draw(st.integers(1, 64))
    scheds = draw(st.sampled_from([1, 2, 4]))
    sub_core = draw(st.booleans())
    banks = scheds * draw(st.integers(1, 8))
    m = draw(st.integers(4, 64))
    regs = banks * tpw * m
    width = 32 * draw(st.sampled_from([d for d in (1, 2, 4, 8, 16, 32) if (tpw * m) % d == 0]))
    shmem = draw(st.integers(0, 1 << 20))
    assoc, line = draw(st.integers(1, 64)), draw(st.sampled_from([32, 64, 128]))
    sets = draw(st.integers(0, 64))
    rw = draw(st.integers(1, 4))
    return SMSpec(
        name=draw(_text),
        source=draw(_text),
        num_sms=draw(st.integers(1, 200)),
        clock_mhz=draw(st.floats(1.0, 100_000.0, allow_nan=False)),
        warps_per_sm=warps,
        threads_per_warp=tpw,
        max_ctas_per_sm=draw(st.integers(1, 64)),
        max_threads_per_cta=draw(st.integers(1, warps * tpw)),
        schedulers_per_sm=scheds,
        issue_width=draw(st.integers(1, 4)),
        dual_issue_diff_units=draw(st.booleans()),
        scheduler=draw(st.sampled_from(["lrr", "gto", "two-level", "oldest"])),
        sub_core=sub_core,
        collectors=CollectorSpec(
            gen=draw(st.integers(1, 16)),
            **{k: draw(st.integers(0, 16)) for k in ("sp", "sfu", "mem", "tensor", "dp", "int")},
        ),
        collector_read_ports=draw(st.integers(0, 4)),
        num_banks=banks,
        bank_read_ports=draw(st.integers(0, 2)),
        bank_write_ports=draw(st.integers(0, 2)),
        bank_rw_ports=rw,
        bank_width_bits=width,
        bank_mapping=draw(st.sampled_from(["gpgpusim", "subcore", "warp-per-bank", "reg-mod"])),
        regs_per_sm=regs,
        max_regs_per_thread=draw(st.integers(1, regs // tpw)),
        reg_alloc_granularity=draw(st.sampled_from([1, 64, 256])),
        regs_per_cta_limit=draw(st.integers(1, 1 << 20)),
        shmem_per_sm_bytes=shmem,
        shmem_per_cta_bytes=draw(st.integers(0, shmem)),
        latency=LatencySpec(**{n: draw(_pair) for n in OP_CLASS_NAMES}),
        l1d=L1DSpec(
            size_bytes=sets * assoc * line,
            assoc=assoc,
            line_bytes=line,
            sectored=draw(st.booleans()),
            mshr_entries=draw(st.integers(0, 4096)),
            hit_latency_cycles=draw(st.integers(1, 1000)),
            unified_bytes=draw(st.integers(0, 1 << 20)),
            adaptive=draw(st.booleans()),
            bypass_global=draw(st.booleans()),
        ),
        smem_latency_cycles=draw(st.integers(1, 1000)),
        l2_hit_latency_cycles=draw(st.integers(1, 1000)),
        dram_latency_cycles=draw(st.integers(0, 1000)),
        l2_size_bytes=draw(st.integers(0, 1 << 30)),
        mem_bw_bytes_per_cycle=draw(st.floats(1e-6, 1e6, allow_nan=False)),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sm_specs())
def test_round_trip_random_specs(spec):
    text = dumps_spec(spec)
    back = loads_spec(text)
    assert back == spec
    assert SMSpec.from_dict(spec.to_dict()) == spec


# --------------------------------------------------------------------------- SMSpec semantics
class TestSMSpec:
    def test_latency_fields_follow_opclass(self):
        assert LatencySpec.field_names() == OP_CLASS_NAMES
        assert OP_CLASS_NAMES == tuple(c.name.lower() for c in OpClass)
        lat = get_preset("volta-v100").latency
        assert lat.timing(OpClass.SFU) == (20, 8) == lat.timing("sfu") == lat.timing(int(OpClass.SFU))
        assert lat.latencies()[OpClass.FP64] == 8
        assert get_preset("hopper-h100").latency.initiations()[OpClass.TENSOR] == 1  # 0 reported as 1

    def test_defaults_are_the_fermi_preset(self):
        assert SMSpec() == get_preset("fermi-gtx480").replace(name="custom", source="")

    def test_bank_geometry_known_answers(self):
        fermi = get_preset("fermi-gtx480")
        # STT: 16 banks x 8 KB, 64 entries x 1024 bit per bank
        assert (fermi.num_banks, fermi.bank_bytes, fermi.bank_entries) == (16, 8192, 64)
        assert fermi.rf_capacity_kb == 128.0 and fermi.warp_regs_per_sm == 1024
        # LTRF: 16 banks of 16 KB
        assert get_preset("maxwell-ltrf").bank_bytes == 16 * 1024
        # CERF: 32 narrow banks x 4 KB, 16 B wide
        cerf = fermi.replace(num_banks=32, bank_width_bits=128)
        assert (cerf.bank_bytes, cerf.bank_entries, cerf.rows_per_warp_register) == (4096, 256, 8)
        assert fermi.rows_per_warp_register == 1

    def test_subcore_derived(self):
        t = get_preset("turing-rtx2060")
        assert (t.banks_per_subcore, t.collectors_per_subcore, t.warps_per_scheduler) == (2, 2, 8)
        f = get_preset("fermi-gtx480")
        assert (f.banks_per_subcore, f.collectors_per_subcore, f.warps_per_scheduler) == (16, 16, 24)
        assert f.max_threads_per_sm == 1536 and f.bank_ports == 1

    def test_bank_of_gpgpusim(self):
        f = get_preset("fermi-gtx480")
        assert [f.bank_of(r, 3) for r in (0, 12, 13, 20)] == [3, 15, 0, 7]
        v = get_preset("volta-v100")  # sub-core: ((reg + warp) mod 4) + sched * 4
        assert v.bank_of(5, 6) == ((5 + 6) % 4) + (6 % 4) * 4 == 11
        assert {v.bank_of(r, 6) for r in range(64)} == {8, 9, 10, 11}

    def test_bank_of_other_mappings(self):
        f = get_preset("fermi-gtx480")
        wpb = f.replace(bank_mapping="warp-per-bank")
        assert {wpb.bank_of(r, 5) for r in range(63)} == {5}
        assert wpb.bank_of(0, 21) == 5
        rm = f.replace(bank_mapping="reg-mod")
        assert rm.bank_of(17, 0) == rm.bank_of(17, 9) == 1
        sc = f.replace(bank_mapping="subcore")  # 2 schedulers x 8 banks even without sub_core
        assert sc.banks_per_subcore == 8 and {sc.bank_of(r, 3) for r in range(40)} == set(range(8, 16))
        v = get_preset("volta-v100").replace(bank_mapping="warp-per-bank")
        assert {v.bank_of(r, 6) for r in range(30)} == {8 + (6 // 4) % 4}

    def test_register_allocation(self):
        assert get_preset("volta-v100").warp_regs_allocated(10) == 512
        assert get_preset("fermi-gtx480").warp_regs_allocated(10) == 320
        assert get_preset("fermi-gtx480").warp_regs_allocated(11) == 384

    @pytest.mark.parametrize(
        "changes, field",
        [
            ({"sub_core": True, "schedulers_per_sm": 4, "num_banks": 6}, "num_banks"),
            ({"bank_mapping": "subcore", "schedulers_per_sm": 3}, "num_banks"),
            ({"num_banks": 24}, "regs_per_sm"),
            ({"bank_width_bits": 96 * 32}, "bank_width_bits"),
            ({"max_threads_per_cta": 2048}, "max_threads_per_cta"),
            ({"shmem_per_cta_bytes": 64 * 1024}, "shmem_per_cta_bytes"),
            ({"max_regs_per_thread": 2000}, "max_regs_per_thread"),
            ({"bank_rw_ports": 0, "bank_read_ports": 1}, "bank_rw_ports"),
            ({"collectors": CollectorSpec(sp=0, sfu=0, mem=0)}, "collectors"),
            ({"scheduler": "fifo"}, "scheduler"),
            ({"bank_width_bits": 100}, "bank_width_bits"),
        ],
    )
    def test_invalid_combinations(self, changes, field):
        with pytest.raises(SpecError) as ei:
            get_preset("fermi-gtx480").replace(**changes)
        assert ei.value.field == field

    def test_l1d_geometry_check(self):
        assert L1DSpec(size_bytes=0).sets == 0
        assert L1DSpec(size_bytes=16384, assoc=4, line_bytes=128).sets == 32
        with pytest.raises(SpecError, match="multiple of assoc x line_bytes"):
            L1DSpec(size_bytes=1000)


# --------------------------------------------------------------------------- presets
#: the presets' values their papers state: per preset, fields (a dotted name reaches into a part) and values
PAPER_VALUES = {
    "fermi-gtx480": [
        ("warps_per_sm regs_per_sm num_banks schedulers_per_sm scheduler", (48, 32768, 16, 2, "gto")),
        ("collectors.sp collectors.sfu collectors.mem", (6, 8, 2)),
        ("l1d.size_bytes l1d.assoc l1d.line_bytes", (16384, 4, 128)),
        ("shmem_per_sm_bytes clock_mhz max_ctas_per_sm max_threads_per_sm", (49152, 700.0, 8, 1536)),
    ],
    "maxwell-ltrf": [
        ("warps_per_sm regs_per_sm num_banks collectors.total clock_mhz", (64, 65536, 16, 16, 1137.0)),
        ("l1d.size_bytes l1d.assoc shmem_per_sm_bytes l2_size_bytes", (16384, 4, 65536, 2 << 20)),
        ("scheduler num_sms", ("two-level", 24)),
    ],
    "turing-rtx2060": [
        ("num_sms warps_per_sm rf_capacity_kb scheduler l2_size_bytes", (10, 32, 256.0, "gto", 1 << 20)),
    ],
}


class TestPresets:
    def test_names(self):
        assert set(PRESETS) == {
            "fermi-gtx480",
            "maxwell-ltrf",
            "turing-rtx2060",
            "volta-v100",
            "ampere-a100",
            "ampere-rtx3070",
            "hopper-h100",
        }
        for name, spec in PRESETS.items():
            assert spec.name == name and len(spec.source) > 40

    def test_unknown_preset_suggests(self):
        with pytest.raises(UnknownNameError, match="did you mean 'volta-v100'"):
            get_preset("volta-v10")

    def test_paper_values(self):
        for name, rows in PAPER_VALUES.items():
            spec = get_preset(name)
            for fields, want in rows:
                assert tuple(operator.attrgetter(f)(spec) for f in fields.split()) == want, (name, fields)

    @needs_configs
    @pytest.mark.parametrize(
        "preset, folder, overrides",
        [
            ("volta-v100", "SM7_QV100", {}),
            ("ampere-rtx3070", "SM86_RTX3070", {}),
            ("hopper-h100", "SM90_H100_v2", {}),
            ("ampere-a100", "SM80_A100", {"mem_bw_bytes_per_cycle": 10.211}),
            ("turing-rtx2060", "SM75_RTX2060", {"num_sms": 10, "scheduler": "gto", "l2_size_bytes": 1 << 20}),
            ("fermi-gtx480", "SM2_GTX480", {"collectors.tensor": 0, "regs_per_cta_limit": 32768}),
            (
                "maxwell-ltrf",
                "GeForceGTX750Ti",
                {
                    "num_sms": 24,
                    "scheduler": "two-level",
                    "collectors.tensor": 0,
                    "regs_per_cta_limit": 65536,
                    "mem_bw_bytes_per_cycle": 12.665,
                },
            ),
        ],
    )
    def test_presets_agree_with_configs(self, preset, folder, overrides):
        imported = from_gpgpusim_config(CONFIGS / folder / "gpgpusim.config")
        p = get_preset(preset)
        # the interconnect ports, the execution units, the DRAM row timing and the instruction cache are read
        # from every config but not yet in the presets: with the first three the analytic engine's held-out
        # errors against the simulator rose (docs/spec.md, "Presets"); the presets keep -dram_latency alone
        # and leave the others out; so is the L1D's write allocation and set index (the Fermi and Maxwell
        # configs' no-write-allocate and hash), which the analytic engine does not model yet; and the L2
        # hit latency, which the import takes as the ROP latency plus GPGPU-Sim's fixed interconnect and queue
        # cycles (the presets keep -gpgpu_l2_rop_latency alone); and the L1D's banks, whose latency queues
        # only the simulator's GPGPU-Sim mode has (a preset keeps one bank, which no engine then has to say);
        # and the MSHRs' merge limit and the miss queue, which only the simulator models (presets: no limit);
        # and the L2's banks and a global store hit's eviction (the Fermi config's write policy L), which only
        # the simulator models (presets: one slice of 16 ways, no eviction)
        assert p.l2 is None and not p.l1d.store_hit_evicts and imported.l2 is not None
        assert (p.icnt_flit_bytes, p.icnt_clock_mhz, p.exec_units, p.icache) == (None, None, None, None)
        # the L2's sectors act on the interconnect ports and the DRAM's banks, which the presets leave out
        # (the analytic engine does not model the banks' rows)
        assert p.l2_sector_bytes is None and p.dram is None
        assert (p.l1d.write_allocate, p.l1d.set_index, p.l1d.banks) == (True, "linear", 1)
        assert (p.l1d.mshr_merge, p.l1d.miss_queue_entries) == (0, 0)
        assert imported.icnt_flit_bytes is not None and imported.exec_units is not None
        assert imported.icache is not None and imported.dram_latency_cycles > p.dram_latency_cycles
        assert imported.l2_hit_latency_cycles > p.l2_hit_latency_cycles
        later = {
            "icnt_flit_bytes": None,
            "icnt_clock_mhz": None,
            "l2_sector_bytes": None,
            "dram": None,
            "exec_units": None,
            "icache": None,
            "dram_latency_cycles": p.dram_latency_cycles,
            "l2_hit_latency_cycles": p.l2_hit_latency_cycles,
            "l1d.shmem_options": (),
            "l1d.write_allocate": True,
            "l1d.set_index": "linear",
            "l1d.banks": 1,
            "l1d.mshr_merge": 0,
            "l1d.miss_queue_entries": 0,
            "l2": None,
            "l1d.store_hit_evicts": False,
        }
        expect = imported.replace_paths({"name": p.name, "source": p.source, **overrides, **later})
        assert p == expect


# --------------------------------------------------------------------------- GPGPU-Sim import
# Known answers: the RF-related table of reference/gpgpusim-configs/README.md
# (sms, warps, regs, schedulers, sub_core, banks, banks per sub-core, port throughput,
#  collectors {type: units}, scheduler, issue width) and the L1D notes (bytes, assoc, line, unified KB).
#: the collector units of the Fermi and Maxwell configs
FERMI_UNITS = {"sp": 6, "sfu": 8, "mem": 2, "tensor": 4}
EXPECTED = {
    "SM2_GTX480": (15, 48, 32768, 2, False, 16, 16, 1, FERMI_UNITS, "gto", 1, (16384, 4, 128, 0)),
    "GeForceGTX750Ti": (5, 64, 65536, 4, False, 16, 16, 1, FERMI_UNITS, "gto", 2, (16384, 4, 128, 0)),
    "SM3_KEPLER_TITAN": (
        14,
        64,
        65536,
        4,
        False,
        16,
        16,
        2,
        {"sp": 12, "sfu": 6, "mem": 8, "dp": 6, "tensor": 4},
        "gto",
        2,
        (16384, 32, 128, 0),
    ),
    "SM6_TITANX": (28, 64, 65536, 4, True, 16, 4, 2, {"gen": 8}, "gto", 2, (49152, 96, 128, 0)),
    "SM7_QV100": (80, 64, 65536, 4, True, 16, 4, 2, {"gen": 8}, "lrr", 1, (32768, 64, 128, 128)),
    # SM7_QV100 with one cluster (-gpgpu_n_clusters 1): the copy for trace comparisons of one SM
    "SM7_QV100_1SM": (1, 64, 65536, 4, True, 16, 4, 2, {"gen": 8}, "lrr", 1, (32768, 64, 128, 128)),
    "SM7_GV100": (80, 64, 65536, 4, True, 16, 4, 2, {"gen": 8}, "lrr", 1, (32768, 64, 128, 128)),
    "SM7_TITANV": (80, 64, 65536, 4, True, 8, 2, 2, {"gen": 8}, "lrr", 1, (32768, 64, 128, 128)),
    "SM75_RTX2060": (30, 32, 65536, 4, True, 8, 2, 2, {"gen": 8}, "lrr", 1, (32768, 64, 128, 96)),
    "SM75_RTX2060_S": (34, 32, 65536, 4, True, 16, 4, 2, {"gen": 8}, "lrr", 1, (65536, 512, 128, 0)),
    "SM86_RTX3070": (46, 48, 65536, 4, True, 8, 2, 2, {"gen": 8}, "lrr", 1, (131072, 256, 128, 128)),
    "SM80_A100": (108, 64, 65536, 4, True, 32, 8, 2, {"gen": 8}, "lrr", 1, (32768, 64, 128, 192)),
    "SM90_H100": (132, 64, 65536, 4, True, 16, 4, 2, {"gen": 8}, "lrr", 1, (32768, 64, 128, 128)),
    "SM90_H100_v2": (132, 64, 65536, 4, True, 64, 16, 2, {"gen": 8}, "lrr", 1, (32768, 64, 128, 256)),
}


def _config_dirs():
    if not CONFIGS.is_dir():
        return []
    return sorted(d.name for d in CONFIGS.iterdir() if (d / "gpgpusim.config").is_file())


@needs_configs
def test_every_reference_config_has_expectations():
    assert set(_config_dirs()) == set(EXPECTED)


@needs_configs
@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_import_known_answers(folder):
    s = from_gpgpusim_config(CONFIGS / folder / "gpgpusim.config")
    sms, warps, regs, scheds, sub, banks, bps, ports, coll, policy, issue, l1d = EXPECTED[folder]
    assert (s.num_sms, s.warps_per_sm, s.regs_per_sm, s.schedulers_per_sm, s.sub_core) == (
        sms,
        warps,
        regs,
        scheds,
        sub,
    )
    assert (s.num_banks, s.banks_per_subcore, s.bank_rw_ports) == (banks, bps, ports)
    assert s.collectors == CollectorSpec(**{k: 0 for k in CollectorSpec.field_names()} | coll)
    assert (s.scheduler, s.issue_width, s.threads_per_warp) == (policy, issue, 32)
    l1, assoc, line, unified_kb = l1d
    assert (s.l1d.size_bytes, s.l1d.assoc, s.l1d.line_bytes) == (l1, assoc, line)
    assert s.l1d.unified_bytes == unified_kb * 1024
    assert s.name == folder
    # and it survives a TOML round trip like any spec
    assert loads_spec(dumps_spec(s)) == s


@needs_configs
def test_import_details():
    gtx = import_gpgpusim_config(CONFIGS / "SM2_GTX480" / "gpgpusim.config")
    s = gtx.spec
    assert gtx.trace_path is None
    assert (s.latency.int, s.latency.fp32, s.latency.fp64, s.latency.sfu) == ((4, 1), (5, 1), (8, 8), (8, 8))
    assert (s.l1d.mshr_entries, s.l1d.hit_latency_cycles, s.l1d.sectored) == (64, 35, False)
    # dl1 "...,S:64:8,8": 64 MSHRs merging 8 accesses each, a miss queue of 8
    assert (s.l1d.mshr_merge, s.l1d.miss_queue_entries) == (8, 8)
    # -dram_latency 100 plus tRCD 12 + CL 12 DRAM cycles at 924 MHz in 700 MHz core cycles (18.2); the L2:
    # ROP 120 + each way intersim's two channels and one router (config_fermi_islip.icnt: routing 0, VC and
    # switch allocation 1 + 1, switch traversal 0 + 1 by booksim's defaults) = 5, + 4 queue hops
    assert (s.smem_latency_cycles, s.l2_hit_latency_cycles, s.dram_latency_cycles) == (26, 134, 118)
    assert gtx.used["config_fermi_islip.icnt:vc_alloc_delay"] == "1"
    # one interconnect flit of 40 bytes a 700 MHz cycle; a 2 KB 4-way instruction cache fetching once a cycle;
    # two SP units two wide, one SFU (FP64 on it)
    assert (s.icnt_flit_bytes, s.icnt_clock_mhz, s.icnt_line_reply_flits()) == (40, 700.0, 4)
    # its L2 is sectored (S:64:128:8): a full-line store gets an acknowledgement a 32-byte sector
    assert (s.l2_sector_bytes, s.icnt_ack_flits(), s.icnt_ack_flits(2)) == (32, 4, 2)
    ic = s.icache
    assert (ic.size_bytes, ic.assoc, ic.mshr_entries, ic.fetch_per_cycle) == (2048, 4, 2, 1)
    e = s.exec_units
    assert (e.sp, e.sfu, e.dp, e.int, e.branch) == (2, 1, 0, 0, 0)
    assert (e.sp_width, e.sfu_width, e.mem_width) == (2, 1, 1)
    assert (s.clock_mhz, s.l2_size_bytes, s.max_regs_per_thread, s.reg_alloc_granularity) == (
        700.0,
        768 * 1024,
        63,
        64,
    )
    assert s.regs_per_cta_limit == 8192  # built-in default of -gpgpu_registers_per_block
    assert s.mem_bw_bytes_per_cycle == pytest.approx(6 * 2 * 4 * 4 * 924 / 700 / 15, abs=1e-3)
    assert "-gpgpu_reg_file_port_throughput" in gtx.defaulted
    assert gtx.used["-gpgpu_num_reg_banks"] == "16"
    assert "-gpgpu_ptx_sim_mode" in gtx.skipped and "-gpgpu_num_reg_banks" not in gtx.skipped
    assert gtx.used["-gpgpu_shmem_num_banks"] == "32" and "-gpgpu_shmem_num_banks" not in gtx.skipped

    qv = from_gpgpusim_config(CONFIGS / "SM7_QV100" / "gpgpusim.config")
    # the local crossbar moves a packet a cycle; a perfect instruction cache; four units of each type and
    # the trace config's branch unit, four wide; tRCD + CL = 24 DRAM cycles at 850 MHz = 32 core cycles
    assert (qv.icnt_flit_bytes, qv.icache.size_bytes, qv.icache.fetch_per_cycle) == (1 << 16, 0, 4)
    assert (qv.exec_units.branch, qv.exec_units.dp_width, qv.exec_units.mem_width) == (4, 4, 4)
    assert qv.dram_latency_cycles == 132
    assert (qv.latency.int, qv.latency.fp64, qv.latency.sfu, qv.latency.branch, qv.latency.misc) == (
        (2, 2),
        (8, 4),
        (20, 8),
        (4, 4),
        (2, 2),
    )
    assert "-gpgpu_ptx_sim_mode" in qv.skipped_options and "-gpgpu_shmem_num_banks" not in qv.skipped_options
    ptx = from_gpgpusim_config(CONFIGS / "SM7_QV100" / "gpgpusim.config", trace_config=False)
    assert (ptx.latency.int, ptx.latency.fp32, ptx.latency.sfu, ptx.latency.branch) == (
        (4, 2),
        (5, 2),
        (100, 8),
        (1, 1),
    )
    assert (qv.l1d.adaptive, qv.l1d.sectored, qv.l1d.mshr_entries, qv.shmem_per_cta_bytes) == (
        True,
        True,
        512,
        65536,
    )
    # dl1 "...,A:512:8,16:0,32": merges of 8, a miss queue of 16; the analytic engine says it has neither
    assert (qv.l1d.mshr_merge, qv.l1d.miss_queue_entries) == (8, 16)
    from rfmodel.spec.occupancy import not_modelled

    said = not_modelled(qv, "analytic")
    assert "l1d.mshr_merge = 8 (answered as 0)" in said
    assert "l1d.miss_queue_entries = 16 (answered as 0)" in said
    assert not any("merge" in x or "miss_queue" in x for x in not_modelled(qv, "simulate"))

    a100 = from_gpgpusim_config(CONFIGS / "SM80_A100" / "gpgpusim.config")
    assert (a100.latency.int, a100.latency.tensor, a100.l2_size_bytes) == ((4, 2), (12, 8), 40 << 20)
    h2 = import_gpgpusim_config(CONFIGS / "SM90_H100_v2" / "gpgpusim.config")
    assert "-gpgpu_opndcoll_model" in h2.skipped
    ti = from_gpgpusim_config(CONFIGS / "GeForceGTX750Ti" / "gpgpusim.config")
    assert ti.l1d.bypass_global and ti.l1d.sectored is False  # old -gmem_skip_L1D and 3-field dl1
    assert ti.max_regs_per_thread == 255  # from -gpgpu_ptx_force_max_capability 52


def _write(tmp_path, text, trace=None, folder="cfg"):
    d = tmp_path / folder
    d.mkdir(exist_ok=True)
    (d / "gpgpusim.config").write_text(text)
    if trace is not None:
        (d / "trace.config").write_text(trace)
    return d / "gpgpusim.config"


class TestImportSynthetic:
    def test_empty_file_gives_gpgpusim_defaults(self, tmp_path):
        imp = import_gpgpusim_config(_write(tmp_path, "# nothing\n"))
        s = imp.spec
        assert (s.warps_per_sm, s.regs_per_sm, s.num_banks, s.schedulers_per_sm, s.bank_rw_ports) == (
            32,
            8192,
            8,
            1,
            1,
        )
        assert s.collectors == CollectorSpec(gen=0, sp=4, sfu=4, mem=2, tensor=4, dp=0, int=0)
        assert (s.l1d.size_bytes, s.clock_mhz, s.num_sms, s.issue_width) == (0, 500.0, 30, 2)
        assert s.latency.int == (1, 1) and s.latency.fp32 == (1, 1)
        assert set(imp.defaulted) <= set(GPGPUSIM_DEFAULTS) and imp.skipped == ()

    @pytest.mark.parametrize(
        "line", ["-gpgpu_shmem_num_banks 16", "-gpgpu_shmem_warp_parts 2", "-gpgpu_shmem_limited_broadcast 1"]
    )
    def test_shared_memory_banks_other_than_a_traces_are_refused(self, tmp_path, line):
        """A trace counts shared-memory bank conflicts over 32 banks, a whole warp at once, lanes on one word
        together (``Trace.smem_passes``): a config that sets another arrangement is one error naming the
        option, its line and the value rfmodel runs; setting the same one is accepted."""
        name = line.split()[0]
        where = rf"gpgpusim.config:2: option {name}: bad value.*expected (32|1|0) \("
        with pytest.raises(ParseError, match=where):
            import_gpgpusim_config(_write(tmp_path, "# shared memory\n" + line + "\n"))
        ok = {"-gpgpu_shmem_num_banks": "32", "-gpgpu_shmem_warp_parts": "1"}.get(name, "0")
        assert import_gpgpusim_config(_write(tmp_path, f"{name} {ok}\n")).used[name] == ok

    def test_comments_quotes_last_wins_and_unknowns(self, tmp_path):
        text = (
            "-gpgpu_num_reg_banks 4   # first\n"
            "# -gpgpu_num_reg_banks 99\n"
            '-gpgpu_dram_timing_opt "nbk=16:CCD=2:\n'
            '      CL=12:WL=4"\n'
            "-gpgpu_enable_specialized_operand_collector 0\n"
            "-gpgpu_operand_collector_num_units_gen 12\n"
            "-gpgpu_scheduler two_level_active:6:0:1\n"
            "-gpgpu_num_reg_banks\t16\n"
            "-gpgpu_cache:dl1 64:128:6,L:L:m:N:H,A:128:8,8\n"
            "-gpgpu_shader_core_pipeline 2048:32\n"
            "-gpgpu_shader_registers 65536\n"
            "-some_future_option 7\n"
        )
        imp = import_gpgpusim_config(_write(tmp_path, text))
        s = imp.spec
        assert s.num_banks == 16 and s.scheduler == "two-level"
        assert s.collectors == CollectorSpec(gen=12, sp=0, sfu=0, mem=0, tensor=0, dp=0, int=0)
        assert (s.l1d.size_bytes, s.l1d.assoc) == (64 * 128 * 6, 6)
        assert (s.l1d.mshr_entries, s.l1d.sectored, s.l1d.allocate_on_miss) == (128, False, True)
        assert imp.skipped == ("-some_future_option",)
        # the quoted two-line DRAM timing is read (RCD left out: the built-in 12), CL 12 at the default
        # 2000 MHz DRAM and 500 MHz core clocks: (12 + 12) / 4 = 6 cycles beyond -dram_latency's 30
        assert s.dram_latency_cycles == 36
        assert imp.used["-gpgpu_num_reg_banks"] == "16"

    @pytest.mark.parametrize(("alloc", "reserves"), [("m", True), ("f", False), ("s", False)])
    def test_the_l1ds_allocation_policy_is_read(self, tmp_path, alloc, reserves):
        text = f"-gpgpu_cache:dl1 N:32:128:4,L:L:{alloc}:N:H,S:64:8,8\n"
        assert from_gpgpusim_config(_write(tmp_path, text)).l1d.allocate_on_miss is reserves

    @pytest.mark.parametrize(
        ("policy", "walloc", "index"),
        [
            ("L:L:m:N:H", False, "fermi-hash"),
            ("L:T:m:L:L", True, "linear"),
            ("L:T:m:W:L", True, "linear"),
            ("L:L:s:N:L", False, "linear"),
            ("L:T:m", True, "linear"),
        ],
    )
    def test_the_l1ds_write_allocation_and_set_index_are_read(self, tmp_path, policy, walloc, index):
        text = f"-gpgpu_cache:dl1 N:32:128:4,{policy},S:64:8,8\n"
        l1 = from_gpgpusim_config(_write(tmp_path, text)).l1d
        assert (l1.write_allocate, l1.set_index) == (walloc, index)

    @pytest.mark.parametrize("policy", ["L:B:m:N:L", "L:E:m:N:L", "L:T:m:N:P", "L:T:m:N:X", "L:T:m:Q:L"])
    def test_an_l1d_policy_rfmodel_does_not_model_is_refused(self, tmp_path, policy):
        text = f"-gpgpu_cache:dl1 N:32:128:4,{policy},S:64:8,8\n"
        with pytest.raises(ParseError, match="gpgpu_cache:dl1"):
            from_gpgpusim_config(_write(tmp_path, text))

    def test_trace_config_overrides_and_units(self, tmp_path):
        trace = (
            "-trace_opcode_latency_initiation_int 3,1\n"
            "-trace_opcode_latency_initiation_sp 5,2\n"
            "-specialized_unit_1 1,4,4,4,4,BRA\n"
            "-trace_opcode_latency_initiation_spec_op_1 7,3\n"
            "-specialized_unit_3 0,4,8,4,4,TENSOR\n"
            "-trace_opcode_latency_initiation_spec_op_3 9,9\n"
        )
        s = from_gpgpusim_config(_write(tmp_path, "-gpgpu_shader_registers 32768\n", trace))
        lat = s.latency
        assert (lat.int, lat.fp32, lat.branch, lat.misc) == ((3, 1), (5, 2), (7, 3), (3, 1))
        assert s.latency.tensor == (4, 1) and s.latency.fp64 == (4, 1)  # disabled unit; Accel-Sim default
        assert "trace.config" in s.source
        other = tmp_path / "elsewhere.config"
        other.write_text("-trace_opcode_latency_initiation_sfu 30,10\n")
        s2 = from_gpgpusim_config(tmp_path / "cfg" / "gpgpusim.config", trace_config=other)
        assert s2.latency.sfu == (30, 10)

    @pytest.mark.parametrize(
        "line, option",
        [
            ("-gpgpu_num_reg_banks sixteen", "-gpgpu_num_reg_banks"),
            ("-gpgpu_shader_core_pipeline 1000:32", "-gpgpu_shader_core_pipeline"),
            ("-gpgpu_cache:dl1 S:4:128,L:T:m:L:L,A:512:8,16:0,32", "-gpgpu_cache:dl1"),
            ("-gpgpu_cache:dl1 S:4:128:64,L:T:m:L:L", "-gpgpu_cache:dl1"),
            ("-gpgpu_cache:dl1 N:32:128:4,L:L:x:N:H,S:64:8,8", "-gpgpu_cache:dl1"),
            ("-gpgpu_scheduler fifo", "-gpgpu_scheduler"),
            ("-gpgpu_sub_core_model yes", "-gpgpu_sub_core_model"),
            ("-gpgpu_clock_domains 700.0:700.0:700.0", "-gpgpu_clock_domains"),
            ("-ptx_opcode_latency_int 4,13,x,5,145", "-ptx_opcode_latency_int"),
            ("-ptx_opcode_latency_fp 4,13", "-ptx_opcode_latency_fp"),
            ("-gpgpu_num_sched_per_core 0", "-gpgpu_num_sched_per_core"),
        ],
    )
    def test_malformed_values_name_file_line_option(self, tmp_path, line, option):
        path = _write(tmp_path, "# header\n-gpgpu_n_clusters 4\n" + line + "\n")
        with pytest.raises(ParseError) as ei:
            import_gpgpusim_config(path)
        e = ei.value
        assert e.path == str(path) and e.line == 3 and option in e.message

    def test_malformed_trace_value(self, tmp_path):
        path = _write(tmp_path, "", "-trace_opcode_latency_initiation_sfu 20\n")
        with pytest.raises(ParseError) as ei:
            import_gpgpusim_config(path)
        assert ei.value.path.endswith("trace.config") and ei.value.line == 1

    @pytest.mark.parametrize(
        "text, line, words",
        [
            ("-gpgpu_n_clusters 4\nstray\n", 2, "expected an option"),
            ("-gpgpu_n_clusters", 1, "missing value"),
            ('-gpgpu_n_clusters 4\n-gpgpu_dram_timing_opt "nbk=16\n', 2, "unterminated"),
        ],
    )
    def test_malformed_file_structure(self, tmp_path, text, line, words):
        with pytest.raises(ParseError, match=words) as ei:
            import_gpgpusim_config(_write(tmp_path, text))
        assert ei.value.line == line

    def test_invalid_combination_is_a_spec_error(self, tmp_path):
        text = "-gpgpu_sub_core_model 1\n-gpgpu_num_sched_per_core 4\n-gpgpu_num_reg_banks 6\n"
        with pytest.raises(SpecError) as ei:
            import_gpgpusim_config(_write(tmp_path, text))
        assert ei.value.field == "num_banks"


def test_an_optional_field_left_out_takes_the_sm_field_it_names():
    from rfmodel.designs.mainrf import MainRFParams
    from rfmodel.spec import get_preset, param

    sm = get_preset("volta-v100")
    assert MainRFParams().value_on("main_rf_banks", sm) == sm.num_banks
    assert MainRFParams(main_rf_banks=4).value_on("main_rf_banks", sm) == 4
    assert MainRFParams().value_on("narrow_crossbar", sm) == 0  # a field without one keeps its value
    with pytest.raises(TypeError, match="sm_default"):
        param(3, doc="x", sm_default="num_banks")  # only an optional field takes an SM field's value


# --------------------------------------------------------------------------- adaptive L1D carve-out
@needs_configs
def test_adaptive_carve_out_follows_gpgpusim_max_cta():
    """Known answers on the QV100 config (32 KB base of 4 sets x 64 ways x 128 B in a 128 KB unified array,
    options 0, 8, 16, 32, 64, 96 KB): the CTAs' shared memory rounds up to an option and the L1D takes
    round(256 x (1 - option / 128 KB)) ways."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.spec.occupancy import carved_l1d, not_modelled

    sm = resolve_gpu(str(CONFIGS / "SM7_QV100_1SM" / "gpgpusim.config"))
    assert sm.l1d.shmem_options == tuple(k * 1024 for k in (0, 8, 16, 32, 64, 96))
    for smem, ctas, kb, ways in (
        (0, 8, 128, 256),
        (12 * 1024, 4, 64, 128),
        (24 * 1024, 4, 32, 64),
        (100, 3, 120, 240),
        (64 * 1024, 1, 64, 128),
    ):
        l1 = carved_l1d(sm, smem, ctas).l1d
        assert (l1.size_bytes, l1.assoc, l1.sets) == (kb * 1024, ways, 4), (smem, ctas)
    # both engines model the carve-out: no note of the unified array
    for engine in ("simulate", "analytic"):
        assert not any("adaptive" in n or "unified" in n for n in not_modelled(sm, engine))
    # a preset without options keeps its L1D
    v100 = resolve_gpu("volta-v100")
    assert v100.l1d.adaptive and not v100.l1d.shmem_options and carved_l1d(v100, 0, 8) is v100


def test_carve_out_options_are_refused_where_they_cannot_act():
    from rfmodel.spec.sm import L1DSpec

    base = dict(size_bytes=32 * 1024, assoc=64, line_bytes=128)
    for kw, msg in (
        (dict(unified_bytes=128 * 1024, shmem_options=(0, 65536)), "adaptive"),
        (dict(adaptive=True, shmem_options=(0, 65536)), "unified_bytes"),
        (dict(adaptive=True, unified_bytes=96 * 1024 + 512, shmem_options=(0,)), "multiple"),
        (dict(adaptive=True, unified_bytes=64 * 1024, shmem_options=(0, 98304)), "at most"),
    ):
        with pytest.raises(SpecError, match=msg):
            L1DSpec(**base, **kw)
    ok = L1DSpec(**base, adaptive=True, unified_bytes=128 * 1024, shmem_options=(0, 65536))
    assert ok.shmem_options == (0, 65536)
    # an SM whose shared memory could exceed every option: the carve-out would have nothing to choose
    sm = get_preset("volta-v100")
    with pytest.raises(SpecError, match="largest l1d.shmem_options"):
        sm.replace(l1d=ok)  # 96 KB of shared memory against options up to 64 KB
    assert sm.replace(l1d=ok, shmem_per_sm_bytes=65536, shmem_per_cta_bytes=65536).l1d == ok


@needs_configs
def test_both_engines_take_the_carved_l1d():
    """A kernel without shared memory on the QV100 config gets the whole 128 KB in both engines: the
    cache-sensitive preset's L1D hit rate rises with it in each, and the analytic rate follows the
    simulated one (within 5 points) where the fixed 32 KB would not."""
    import warnings
    from dataclasses import replace

    from rfmodel.evaluate import evaluate, resolve_gpu

    sm = resolve_gpu(str(CONFIGS / "SM7_QV100_1SM" / "gpgpusim.config"))
    fixed = sm.replace(l1d=replace(sm.l1d, shmem_options=()))
    hit = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, s in (("carved", sm), ("fixed", fixed)):
            for method in ("analytic", "simulate"):
                ds = evaluate("baseline", "synthetic:cache-sensitive", s, method=method)
                hit[name, method] = float(ds["l1d_hit_rate"].values.ravel()[0])
    for method in ("analytic", "simulate"):
        assert hit["carved", method] > hit["fixed", method] + 0.3, hit
    assert abs(hit["carved", "analytic"] - hit["carved", "simulate"]) < 0.05, hit


@needs_configs
@pytest.mark.parametrize(
    "icnt, expected",
    [
        (None, 120 + 2 * (2 + 1 + 1 + 1 + 0 + 1) + 4),  # no file: booksim's defaults, listed as defaulted
        ("unnamed", 120 + 2 * (2 + 1 + 1 + 1 + 0 + 1) + 4),
        (
            "topology = fly; k = 27; n = 2; routing_delay = 0; vc_alloc_delay = 2; sw_alloc_delay = 1;\n",
            120 + 2 * (2 + 2 * (0 + 2 + 1 + 0 + 1) + 1) + 4,
        ),  # two stages and the channel between them
        (
            "topology = mesh; // hops not followed: one router\nst_final_delay = 3;",
            120 + 2 * (2 + 1 + 1 + 1 + 3) + 4,
        ),
    ],
)
def test_the_l2_latency_adds_intersims_traversal_from_its_file(tmp_path, icnt, expected):
    text = (CONFIGS / "SM2_GTX480" / "gpgpusim.config").read_text()
    if icnt == "unnamed":  # the config names no file at all: the same defaults, said the same way
        text = "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("-inter_config_file"))
        icnt = None
    (tmp_path / "gpgpusim.config").write_text(text)
    if icnt is not None:
        (tmp_path / "config_fermi_islip.icnt").write_text(icnt)
    imp = import_gpgpusim_config(tmp_path / "gpgpusim.config")
    assert imp.spec.l2_hit_latency_cycles == expected
    assert ("-inter_config_file" in imp.defaulted) == (icnt is None)


@needs_configs
def test_a_bad_router_delay_is_one_located_error(tmp_path):
    (tmp_path / "gpgpusim.config").write_text((CONFIGS / "SM2_GTX480" / "gpgpusim.config").read_text())
    (tmp_path / "config_fermi_islip.icnt").write_text("vc_alloc_delay = fast;\n")
    with pytest.raises(ParseError, match="vc_alloc_delay: bad value 'fast'"):
        import_gpgpusim_config(tmp_path / "gpgpusim.config")


@needs_configs
def test_gpgpusim_configs_give_the_l1d_banks():
    """``-gpgpu_l1_banks`` (default 1) is the L1D's bank count; only the simulator's GPGPU-Sim mode models
    the banks' latency queues, the other engines say so for a count other than one."""
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.spec.occupancy import not_modelled
    from rfmodel.spec.sm import L1DSpec

    volta = resolve_gpu(str(CONFIGS / "SM7_QV100_1SM" / "gpgpusim.config"))
    assert volta.l1d.banks == 4
    said = not_modelled(volta, "analytic")
    assert any(s.startswith("l1d.banks = 4") for s in said)
    assert not any(s.startswith("l1d.banks") for s in not_modelled(volta, "simulate", compat=True))
    with pytest.raises(SpecError, match="banks"):
        L1DSpec(banks=3)


def test_a_field_alone_accepts_what_the_whole_spec_accepts():
    """``Spec.accepts_alone`` (how a grid's distinct values are checked) agrees with building the spec at
    that value, for every parameter of every design over its defaults, choices, bounds and a step past
    them, and values no field takes (NaN, infinity, a word)."""
    import numpy as np

    from rfmodel.designs.base import design_names, get_design
    from rfmodel.errors import SpecError

    checked = 0
    for name in design_names():
        d = get_design(name)
        for k in d.parameters:
            info = d.Params.field_info(k)
            values = [getattr(d.Params(), k), 0, 1, 2, -1, 0.5, 3.0, np.nan, np.inf, 1e9, "nope"]
            values += list(info.choices or ())
            if info.bounds and not isinstance(info.bounds[0], tuple | list):
                for b in info.bounds:
                    values += [] if b is None else [b, b - 1, b + 1, b - 0.5, b + 0.5]
            for x in values:
                try:
                    d.resolve({k: x})
                    whole = True
                except SpecError:
                    whole = False
                alone = d.Params.accepts_alone(k, x)
                assert alone is None or alone == whole, (name, k, x)
                checked += alone is not None
    assert checked > 500


def test_a_grid_check_names_the_first_value_refused():
    """A grid's values are checked once each, and the first refused (in sorted order) is the error."""
    from rfmodel.designs.base import get_design
    from rfmodel.errors import SpecError

    with pytest.raises(SpecError, match="'main_rf_latency_x' = 100 is invalid"):
        get_design("baseline").check_grid({"main_rf_latency_x": [200, 1, 2, 100]})
    get_design("ltrf").check_grid({"main_rf_latency_x": [1, 2.5, 64], "regs_per_interval": [8, 16]})
