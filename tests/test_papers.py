"""The papers' benchmarks (the ``papers`` suite of shipped kernels): each executes and matches its numpy
reference, each stands beside its original's measured facts, and the suite is kept apart from the default
workloads."""

from __future__ import annotations

import numpy as np
import pytest
from helpers_execute import run_checked

from rfmodel.errors import ParseError, RfmodelError
from rfmodel.workload import build_sass as bs
from rfmodel.workload.execute.builtin import BUILTIN_RECIPES, KNOWN_GAPS, RECIPES, builtin_recipe, full_size
from rfmodel.workload.execute.papers import PAPERS_RECIPES
from rfmodel.workload.manifest import manifest
from rfmodel.workload.suite import builtin_names, default_workloads, kernel_names, suite_names

PAPERS = suite_names("papers")
#: the default run checks each kernel on one arch (taken in turn), -m slow on all three
TEST_ARCHS = ("sm_75", "sm_80", "sm_90")
_DEFAULT = [(n, TEST_ARCHS[i % 3]) for i, n in enumerate(PAPERS) if (n, TEST_ARCHS[i % 3]) not in KNOWN_GAPS]
_ALL = [(n, a) for n in PAPERS for a in TEST_ARCHS if (n, a) not in KNOWN_GAPS]


def test_every_papers_kernel_has_a_recipe_and_every_recipe_a_kernel():
    assert PAPERS, "no papers' kernel shipped"
    assert sorted(PAPERS_RECIPES) == PAPERS
    assert not set(PAPERS_RECIPES) & set(BUILTIN_RECIPES)
    assert set(RECIPES) == set(PAPERS_RECIPES) | set(BUILTIN_RECIPES)


def test_the_papers_suite_is_apart_from_the_default_workloads():
    assert not set(PAPERS) & set(builtin_names())
    assert set(default_workloads()) == set(builtin_names())
    assert set(kernel_names()) == set(PAPERS) | set(builtin_names())


@pytest.mark.parametrize(("name", "arch"), _DEFAULT)
def test_papers_kernel_matches_reference(name, arch):
    assert run_checked(name, arch, builtin_recipe(name)).warp_instructions > 0


@pytest.mark.slow
@pytest.mark.parametrize(("name", "arch"), _ALL)
def test_papers_kernel_matches_reference_on_every_arch_and_larger(name, arch):
    for scale in (1.0, 2.0):
        run_checked(name, arch, builtin_recipe(name, scale=scale))


def test_full_size_is_the_originals_input():
    """``scale="full"``: Rodinia hotspot's 512 x 512 grid at pyramid height 2 (each 16 x 16 CTA advances a
    12 x 12 tile: 43 x 43 CTAs, the manifest's launch); the CUDA sample's quasirandom generator at its 128
    CTAs of 128 threads, 2^20 points in each of 3 dimensions; a kernel of rfmodel's own suite has no
    original's input (one error naming where the papers' are)."""
    hot = builtin_recipe("rd_hotspot", "full")
    assert hot.grid[:2] == (43, 43) and full_size("rd_hotspot").scale == 8
    assert max(a.shape[0] for a in hot.arrays.values()) == 512 * 512
    assert manifest()["kernels"]["rd_hotspot"]["ctas"] == 43 * 43
    qrng = builtin_recipe("sdk_quasirandom", "full")
    assert int(qrng.grid[0]) == 128 and max(a.shape[0] for a in qrng.arrays.values()) == 3 * 2**20
    with pytest.raises(RfmodelError, match="own suite"):
        builtin_recipe("saxpy", "full")
    with pytest.raises(RfmodelError, match="full"):
        builtin_recipe("rd_hotspot", "fulll")


def test_cli_runs_a_papers_kernel_at_its_originals_input(capsys):
    from rfmodel.cli import main

    assert main(["workload", "execute", "pb_gramschmidt_2", "--scale", "full", "--json"]) == 0
    assert main(["workload", "execute", "saxpy", "--scale", "full"]) == 2
    assert "own suite" in capsys.readouterr().err
    assert main(["workload", "execute", "saxpy", "--scale", "0"]) == 2
    assert "'0': expected 'full' or a number above 0" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPERS)
def test_papers_kernel_matches_reference_at_its_originals_input(name):
    """Each papers' kernel at the original benchmark's input (``full_size``) on sm_80, where its grid is the
    manifest's launch unless the recipe says what differs; at the stated smaller scale where the executor
    needs far longer than a few CPU-minutes at the full one."""
    full = full_size(name)
    recipe = builtin_recipe(name, "full" if full.tested is None else full.tested, full.ctas)
    if full.tested is None and not full.differs:
        assert int(np.prod(recipe.grid)) == manifest()["kernels"][name]["ctas"]
    run_checked(name, "sm_80", recipe)


@pytest.mark.parametrize("name", PAPERS)
def test_papers_kernel_stands_beside_its_original(name):
    """Compiled with the same nvcc for sm_80: registers per thread within 10 % of the original's (at least
    one register either way), the same threads per CTA, shared memory within 10 %."""
    e = manifest()["kernels"][name]
    o = e["original"]
    assert o["papers"] and set(o["papers"]) <= set(bs.PAPERS)
    if o["original"].startswith("none"):
        pytest.skip(f"{name} has no original kernel to compile ({o['original']})")
    ours = e["resources"]["sm_80"]
    assert abs(ours["regs"] - o["original_regs"]) <= max(1, 0.10 * o["original_regs"]), (ours, o)
    assert e["threads_per_cta"] == o["original_threads_per_cta"]
    assert abs(ours["shared"] - o["original_shared"]) <= 0.10 * o["original_shared"], (ours, o)


def test_the_docs_table_of_the_papers_benchmarks_is_current():
    from pathlib import Path

    doc = Path(__file__).resolve().parents[1] / "docs" / "workloads-builtin.md"
    assert bs.papers_table_markdown() in doc.read_text()


def _header(tmp_path, extra: str):
    src = tmp_path / "k.cu"
    head = (
        "// rfmodel: description = d\n// rfmodel: threads_per_cta = 32\n// rfmodel: ctas = 1\n"
        "// rfmodel: trip = 1\n// rfmodel: category = fp-heavy\n"
    )
    src.write_text(head + extra + "\nvoid k() {}\n")
    return src


def test_a_papers_header_needs_its_original_and_names_known_papers(tmp_path):
    full = (
        "// rfmodel: suite = papers\n// rfmodel: benchmark = b\n// rfmodel: original = o\n"
        "// rfmodel: papers = ltrf, cerf\n// rfmodel: original_regs = 20\n"
        "// rfmodel: original_shared = 0\n// rfmodel: original_threads_per_cta = 32\n"
    )
    k = bs.parse_header(_header(tmp_path, full))
    assert k.suite == "papers" and dict(k.original)["papers"] == ["ltrf", "cerf"]
    assert bs.parse_header(_header(tmp_path, "")).suite == "builtin"
    with pytest.raises(ParseError, match="needs the header keys: original_regs"):
        bs.parse_header(_header(tmp_path, full.replace("// rfmodel: original_regs = 20\n", "")))
    with pytest.raises(ParseError, match="unknown paper 'gpgpu'"):
        bs.parse_header(_header(tmp_path, full.replace("ltrf, cerf", "gpgpu")))
    with pytest.raises(ParseError, match="unknown suite 'mine'"):
        bs.parse_header(_header(tmp_path, "// rfmodel: suite = mine\n"))
    with pytest.raises(ParseError, match="is for suite = papers"):
        bs.parse_header(_header(tmp_path, "// rfmodel: benchmark = b\n"))


def test_workload_list_names_the_papers_suite(capsys):
    from rfmodel.cli import main

    assert main(["workload", "list", "--suite", "papers"]) == 0
    out = capsys.readouterr().out
    assert all(n in out for n in PAPERS) and "saxpy" not in out and "synthetic:" not in out
