"""Kernel references ``FILE:KERNEL``: splitting them, and naming one kernel of a SASS listing by its
mangled name (of any length), demangled name, unique prefix or ``#N`` index."""

from __future__ import annotations

import json
import shutil

import pytest

from rfmodel.cli import main
from rfmodel.errors import RfmodelError, UnknownNameError
from rfmodel.workload import demangle as dm
from rfmodel.workload.suite import choose_kernel, load_kernel, load_workload, path_exists, split_kernel_choice

#: a CUB reduction instantiated over thrust tuples, as g++ mangles it: longer than any file name may be
LONG = (
    "_ZN3cub17CUB_200200_800_NS18DeviceReduceKernelINS0_18DeviceReducePolicyIN6thrust20THRUST_200200_800_NS5"
    "tupleIJfldEEEjNS4_4plusIS6_EEE9Policy600ENS4_12zip_iteratorINS5_IJNS4_10device_ptrIfEENS4_17counting_"
    "iteratorIlEENSC_IKdEEEEEEENSC_IS6_EEmNS4_7maximumIS6_EES6_S6_EEvT0_T1_T2_T3_T4_"
)
T = "thrust::THRUST_200200_800_NS::"
TUP = f"{T}tuple<float, long, double>"
ZIP = (
    f"{T}zip_iterator<{T}tuple<{T}device_ptr<float>, {T}counting_iterator<long>, "
    f"{T}device_ptr<double const> > >"
)
LONG_DEMANGLED = (
    f"void cub::CUB_200200_800_NS::DeviceReduceKernel<cub::CUB_200200_800_NS::DeviceReducePolicy<{TUP}, "
    f"unsigned int, {T}plus<{TUP} > >::Policy600, {ZIP}, {T}device_ptr<{TUP} >, unsigned long, "
    f"{T}maximum<{TUP} >, {TUP}, {TUP} >"
    f"({ZIP}, {T}device_ptr<{TUP} >, unsigned long, {T}maximum<{TUP} >, {TUP})"
)
EMPTY = "_ZN3cub17CUB_200200_800_NS11EmptyKernelIvEEvv"
EMPTY_DEMANGLED = "void cub::CUB_200200_800_NS::EmptyKernel<void>()"
#: the listing's kernels, in order: two CUB instantiations and two ``extern "C"`` kernels, one name a
#: prefix of the other
NAMES = [LONG, EMPTY, "reduce", "reduce_tail"]

BODY = [
    "S2R R0, SR_TID.X",
    "ISETP.GE.AND P0, PT, R0, c[0x0][0x168], PT",
    "@P0 EXIT",
    "MOV R3, 0x4",
    "ULDC.64 UR4, c[0x0][0x118]",
    "IMAD.WIDE R2, R0, R3, c[0x0][0x160]",
    "LDG.E R4, [R2.64]",
    "FFMA R5, R4, R4, 1",
    "STG.E [R2.64], R5",
    "EXIT",
]

needs_demangler = pytest.mark.skipif(dm.demangler() is None, reason="no C++ demangler on this machine")


def _function(name: str, extra: int) -> str:
    """One kernel as ``cuobjdump -sass`` prints it (``extra`` FADDs tell the kernels apart)."""
    body = [*BODY[:-1], *["FADD R5, R5, R4"] * extra, "STG.E [R2.64], R5", "EXIT"]
    body = [*body, f"BRA 0x{16 * len(body):x}"]
    lines = [f"\t\tFunction : {name}", '\t.headerflags\t@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"']
    lines += [f"        /*{16 * j:04x}*/                   {t} ;" for j, t in enumerate(body)]
    return "\n".join([*lines, "\t\t.........."])


@pytest.fixture
def listing(tmp_path):
    p = tmp_path / "cub.sass"
    p.write_text("\tcode for sm_80\n" + "\n\n".join(_function(n, i) for i, n in enumerate(NAMES)) + "\n")
    return p


def test_the_long_name_is_longer_than_a_file_name_may_be():
    assert len(LONG.encode()) > 255


def test_split_never_raises_on_a_name_too_long_for_the_file_system(listing):
    ref = f"{listing}:{LONG}"
    assert split_kernel_choice(ref) == (str(listing), LONG)
    assert split_kernel_choice(f"{listing}:{LONG_DEMANGLED}") == (str(listing), LONG_DEMANGLED)
    x = "x" * 300
    assert split_kernel_choice(x) == (x, "")
    assert split_kernel_choice(f"{listing.parent}/{x}:{x}") == (f"{listing.parent}/{x}:{x}", "")
    assert not path_exists(x) and not path_exists(ref) and not path_exists("a\0b")
    assert path_exists(listing)


def _forms():
    """``(choice, index)``: every way a choice may name a kernel of :data:`NAMES`, and which it names."""
    plain = [
        (LONG, 0),
        (EMPTY, 1),
        ("#0", 0),
        ("#3", 3),
        ("_ZN3cub17CUB_200200_800_NS18", 0),  # a unique prefix of a mangled name
        ("reduce", 2),  # exact beats the prefix it also is of reduce_tail
        ("reduce_", 3),
    ]
    demangled = [
        (LONG_DEMANGLED, 0),
        (LONG_DEMANGLED.replace("> >", ">>").replace(", ", ","), 0),  # another tool's spacing
        (LONG_DEMANGLED[len("void ") :], 0),  # without the return type
        (EMPTY_DEMANGLED, 1),
        ("void cub::CUB_200200_800_NS::DeviceReduceKernel", 0),  # unique prefixes of demangled names
        ("cub::CUB_200200_800_NS::Empty", 1),
    ]
    return [pytest.param(c, i, id=f"plain-{n}") for n, (c, i) in enumerate(plain)] + [
        pytest.param(c, i, id=f"demangled-{n}", marks=needs_demangler) for n, (c, i) in enumerate(demangled)
    ]


@pytest.mark.parametrize(("choice", "index"), _forms())
def test_a_choice_names_its_kernel(listing, choice, index):
    assert choose_kernel(NAMES, choice, "cub.sass") == index
    assert load_kernel(f"{listing}:{choice}").name == NAMES[index]


def test_load_workload_takes_the_long_name_and_an_index(listing):
    by_name = load_workload(f"{listing}:{LONG}", max_warps=4)
    by_index = load_workload(f"{listing}:#0", max_warps=4)
    assert by_name.name == by_index.name == LONG == by_name.kernel.name
    assert by_name.trace.n_instrs == by_index.trace.n_instrs > 0
    assert load_workload(str(listing), max_warps=4).kernel.name == LONG  # no choice: the first kernel


def _one_line(msg: str) -> str:
    assert "\n" not in msg and LONG not in msg and len(msg) < 800
    return msg


def test_an_ambiguous_prefix_names_its_candidates(listing):
    with pytest.raises(RfmodelError, match="ambiguous") as e:
        load_kernel(f"{listing}:_ZN3cub")
    msg = _one_line(str(e.value))
    assert "it fits 2 of its 4 kernels" in msg and "#0 " in msg and "#1 " in msg and "#2 " not in msg
    assert "'#N' ('#0' is the first)" in msg


@needs_demangler
def test_candidates_are_shortened_demangled_names(listing):
    with pytest.raises(RfmodelError, match="ambiguous") as e:
        load_kernel(f"{listing}:void cub::CUB_200200_800_NS::")
    msg = _one_line(str(e.value))
    assert "#0 void cub::CUB_200200_800_NS::DeviceReduceKernel<...>(...)" in msg
    assert f"#1 {EMPTY_DEMANGLED}" in msg


@pytest.mark.parametrize("choice", ["nosuch", "x" * 400, "#4", "#x", "#\u00b2", "#" + "9" * 5000])
def test_an_unknown_choice_lists_every_kernel(listing, choice):
    with pytest.raises(UnknownNameError) as e:
        load_kernel(f"{listing}:{choice}")
    msg = _one_line(str(e.value))
    if choice == "#4":
        assert msg == f"no kernel '#4' in {listing}: it holds 4 kernels, '#0' to '#3' (0-based)"
    elif choice.startswith("#9"):
        assert msg.startswith("no kernel '#999") and msg.endswith("4 kernels, '#0' to '#3' (0-based)")
    else:
        assert msg.startswith(f"unknown kernel in {listing} '{choice[:20]}")
        assert all(f"#{i} " in msg for i in range(4)) and "reduce_tail" in msg and "'#0' is the first" in msg


def test_many_kernels_are_listed_up_to_a_limit():
    names = [f"k{i:03d}" for i in range(40)]
    with pytest.raises(UnknownNameError) as e:
        choose_kernel(names, "nosuch", "big.sass")
    assert "#10 k010, #11 k011 and 28 more;" in str(e.value) and "#12 " not in str(e.value)


def test_without_a_demangler_mangled_names_and_indices_still_work(listing, monkeypatch):
    monkeypatch.setattr(dm, "demangler", lambda: None)
    assert dm.demangle(EMPTY) is None
    assert load_kernel(f"{listing}:{LONG}").name == LONG
    assert load_kernel(f"{listing}:#1").name == EMPTY
    with pytest.raises(UnknownNameError) as e:
        load_kernel(f"{listing}:{EMPTY_DEMANGLED}")
    msg = _one_line(str(e.value))
    assert dm.NO_DEMANGLER in msg and f"#1 {EMPTY}" in msg


def _squashed(names):
    return [dm.squash(d) if d else d for d in names]


@needs_demangler
def test_demangle():
    got = _squashed(dm.demangle_all([LONG, "reduce", EMPTY, "_Znotmangled"]))
    assert got == _squashed([LONG_DEMANGLED, None, EMPTY_DEMANGLED, None])
    assert dm.squash(dm.demangle("_Z5saxpyifPKfPf")) == "saxpy(int,float,float const*,float*)"


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="no c++filt")
def test_cxxfilt_demangles_as_the_runtime_does(monkeypatch):
    names = [LONG, "reduce", EMPTY, "_Znotmangled"]
    runtime = dm.demangle_all(names) if dm.demangler() == "__cxa_demangle" else None
    monkeypatch.setattr(dm, "_cxa", lambda: None)
    monkeypatch.setattr(dm, "_CACHE", {})
    assert dm.demangler() == "c++filt"
    got = dm.demangle_all(names)
    assert _squashed(got) == _squashed([LONG_DEMANGLED, None, EMPTY_DEMANGLED, None])
    assert runtime is None or got == runtime


def test_squash_and_short_name():
    assert dm.squash(" f<a<int> >( long ,  unsigned int) ") == "f<a<int>>(long,unsigned int)"
    assert dm.short_name("f<int>()") == "f<int>()"
    assert dm.short_name(LONG_DEMANGLED) == "void cub::CUB_200200_800_NS::DeviceReduceKernel<...>(...)"
    anon = "void (anonymous namespace)::k<" + "int, " * 30 + "int>(int)"
    assert dm.short_name(anon) == "void (anonymous namespace)::k<...>(...)"
    odd = "operator>" + "x" * 100
    assert dm.short_name(odd) == odd[:69] + "..."


def test_the_profile_cache_key_reads_the_file_of_a_long_choice(listing):
    from rfmodel.analytic.engine import _file_digest

    a, b = _file_digest(f"{listing}:{LONG}"), _file_digest(f"{listing}:#1")
    assert a is not None and b is not None and a != b
    assert _file_digest("x" * 300) is None and _file_digest(f"{listing}x:{LONG}") is None


# ---- the command line ------------------------------------------------------------------------------


def test_cli_info_lists_the_kernels_of_a_listing(listing, capsys):
    assert main(["workload", "info", str(listing)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for i, name in enumerate(NAMES):
        assert f"  #{i} {name}" in lines
    assert "kernel_choice" in out and "the first of 4 kernels" in out
    if dm.demangler() is not None:  # each below its mangled name
        at = {line.strip(): j for j, line in enumerate(lines)}
        assert dm.squash(lines[at[f"#0 {LONG}"] + 1]) == dm.squash(LONG_DEMANGLED)
        assert lines[at[f"#1 {EMPTY}"] + 1] == f"     {EMPTY_DEMANGLED}"
    assert main(["workload", "info", str(listing), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [r["index"] for r in info["kernels"]] == [0, 1, 2, 3]
    assert [r["name"] for r in info["kernels"]] == NAMES and info["kernel"] == LONG
    assert info["kernels"][2]["demangled"] is None  # extern "C": nothing to demangle
    if dm.demangler() is not None:
        assert dm.squash(info["kernels"][0]["demangled"]) == dm.squash(LONG_DEMANGLED)


@pytest.mark.parametrize(
    ("choice", "index"),
    [
        pytest.param(LONG, 0, id="mangled"),
        pytest.param(EMPTY_DEMANGLED, 1, id="demangled", marks=needs_demangler),
        pytest.param("cub::CUB_200200_800_NS::Empty", 1, id="prefix", marks=needs_demangler),
        pytest.param("reduce_", 3, id="mangled-prefix"),
        pytest.param("#2", 2, id="index"),
    ],
)
def test_cli_info_takes_each_form(listing, capsys, choice, index):
    assert main(["workload", "info", f"{listing}:{choice}", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["kernel"] == NAMES[index] and "kernels" not in info


def test_cli_evaluate_takes_each_form(listing, capsys):
    forms = [LONG, "#1", "reduce_"]
    args = ["evaluate", "--method", "analytic", "--json"]
    for f in forms:
        args += ["--workload", f"{listing}:{f}"]
    assert main(args) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["workload"] for r in rows] == [LONG, EMPTY, "reduce_tail"]
    assert all(r["ipc"] > 0 for r in rows)
    if dm.demangler():  # the demangled name picks the same kernel as '#1'
        one = ["evaluate", "--method", "analytic", "--json", "--workload"]
        assert main([*one, f"{listing}:cub::CUB_200200_800_NS::Empty"]) == 0
        assert [r["workload"] for r in json.loads(capsys.readouterr().out)["rows"]] == [EMPTY]
        # both references in one call would be two rows of one name: refused
        both = [*one, f"{listing}:#1", "--workload", f"{listing}:cub::CUB_200200_800_NS::Empty"]
        assert main(both) == 2 and "both named" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "choice", "needle"),
    [
        ("info", "_ZN3cub", "ambiguous: it fits 2 of its 4 kernels"),
        ("info", "nosuch", "unknown kernel in"),
        ("info", "x" * 300, "unknown kernel in"),
        ("info", "#9", "'#0' to '#3' (0-based)"),
        ("evaluate", "_ZN3cub", "ambiguous"),
        ("evaluate", "nosuch", "unknown kernel in"),
    ],
)
def test_cli_bad_choice_is_one_line_exit_2(listing, capsys, command, choice, needle):
    ref = f"{listing}:{choice}"
    args = ["workload", "info", ref]
    if command == "evaluate":
        args = ["evaluate", "--method", "analytic", "--workload", ref]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rfmodel: error: ") and "Traceback" not in err
    assert needle in err and "#0" in err and LONG not in err


def test_cli_a_long_reference_to_no_file_is_one_line(tmp_path, capsys):
    for ref in ("x" * 300, f"{tmp_path}/none.sass:{'x' * 300}", f"{'x' * 300}.traceg"):
        assert main(["workload", "info", ref]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("rfmodel: error: ")
