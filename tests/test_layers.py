"""The package's layering (docs/architecture.md, "Layers"): each layer imports only the layers below it,
and no set of modules imports itself in a circle.  Every ``import`` statement of every module is read with
``ast``, those inside functions included (a function-local import is still a dependency)."""

from __future__ import annotations

import ast
import functools
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "rfmodel"

#: module prefixes by layer, lowest first; a module belongs to its longest matching prefix
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "rfmodel.errors",
        "rfmodel.io",
        "rfmodel.cache",
        "rfmodel.version",
        "rfmodel.runner",
        "rfmodel.limits",
        "rfmodel.datafile",
        "rfmodel.setassoc",
        "rfmodel.lazy",
    ),
    ("rfmodel.spec",),
    ("rfmodel.ir", "rfmodel.trace"),
    ("rfmodel.energy", "rfmodel.results"),
    ("rfmodel.compiler", "rfmodel.tech"),
    ("rfmodel.workload",),
    ("rfmodel.analytic",),
    ("rfmodel.designs",),
    ("rfmodel.sim",),
    ("rfmodel.evaluate",),
    (
        "rfmodel.optimize",
        "rfmodel.tolerance",
        "rfmodel.calibrate",
        "rfmodel.bench",
        "rfmodel.classes",
        "rfmodel.studies",
        "rfmodel.testing",
    ),
    ("rfmodel.cli", "rfmodel.cli_tech"),
    ("rfmodel",),  # the package's face: lazy re-exports of the layers below
)


def module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(mod: str) -> int:
    best, rank = -1, None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (mod == p or mod.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    if rank is None:
        raise AssertionError(f"module {mod} is in no layer of tests/test_layers.py")
    return rank


def imports_of(path: Path, mod: str, known: set[str]) -> set[str]:
    """The package modules ``mod`` imports (relative imports resolved; ``from a import b`` names module
    ``a.b`` when that is a module, else ``a``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[: len(up) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            names = []
            for a in node.names:
                sub = f"{base}.{a.name}"
                names.append(sub if sub in known else base)
        else:
            continue
        for n in names:
            if not n.startswith("rfmodel"):
                continue
            while n not in known and "." in n:
                n = n.rpartition(".")[0]
            if n in known and n != mod:
                out.add(n)
    return out


def graph() -> dict[str, set[str]]:
    """Each module's imports of other package modules (a fresh copy of the session's one reading)."""
    return {m: set(t) for m, t in _graph().items()}


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    # read once per session: three tests walk it, and parsing every module takes about 2 CPU-s
    files = {module_name(p): p for p in PKG.rglob("*.py")}
    known = set(files)
    return {m: frozenset(imports_of(p, m, known)) for m, p in files.items()}


def test_every_module_has_a_layer():
    for m in graph():
        layer_of(m)


def test_no_upward_imports():
    g = graph()
    bad = sorted(
        f"{m} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)})"
        for m, targets in g.items()
        for t in targets
        if layer_of(t) > layer_of(m)
    )
    assert not bad, "upward imports:\n" + "\n".join(bad)


def import_cycles() -> list[list[str]]:
    g = graph()
    index, low, stack, on, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycles():
    cycles = import_cycles()
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_layer_checker_catches_an_upward_import(tmp_path):
    """The checker itself: an upward and a circular import in a scratch package are found."""
    pkg = tmp_path / "rfmodel"
    (pkg / "spec").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "spec" / "__init__.py").write_text("")
    (pkg / "spec" / "a.py").write_text("def f():\n    from rfmodel.evaluate import evaluate\n")
    (pkg / "evaluate.py").write_text("from rfmodel.spec import a\n")
    files = {module_name(p, tmp_path): p for p in pkg.rglob("*.py")}
    g = {m: imports_of(p, m, set(files)) for m, p in files.items()}
    assert "rfmodel.evaluate" in g["rfmodel.spec.a"]
    assert layer_of("rfmodel.evaluate") > layer_of("rfmodel.spec.a")
    assert "rfmodel.spec.a" in g["rfmodel.evaluate"]


def heavy_modules_loaded(statements: str, heavy: tuple[str, ...]) -> list[str]:
    """The modules of ``heavy`` that a fresh interpreter has loaded after running ``statements``."""
    code = f"import sys\n{statements}\nprint(','.join(m for m in {heavy!r} if m in sys.modules))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_errors_import_loads_no_engine():
    """``import rfmodel.errors`` (what every CLI error path needs) loads neither numba nor an engine."""
    heavy = ("numba", "xarray", "rfmodel.evaluate", "rfmodel.sim", "rfmodel.analytic")
    assert heavy_modules_loaded("import rfmodel.errors, rfmodel.spec", heavy) == []


@pytest.mark.parametrize("name", ["evaluate", "sensitivity", "__version__"])
def test_package_face_is_lazy_but_complete(name):
    import rfmodel

    assert getattr(rfmodel, name) is not None


def test_cli_help_loads_no_engine_or_fit():
    """``rfmodel --help`` and argument errors stay instant: building the parser imports no engine, no numba,
    no technology fits (scipy)."""
    heavy = ("numba", "xarray", "scipy", "rfmodel.evaluate", "rfmodel.tech.array")
    statements = "from rfmodel.cli import build_parser\nbuild_parser()"
    assert heavy_modules_loaded(statements, heavy) == []


def test_numba_compiles_into_the_user_cache_not_the_package(tmp_path):
    """numba's cache goes to ``$XDG_CACHE_HOME/rfmodel/numba/<digest of the sources>`` (an installed
    package's tree stays read-only; an edit of any source file starts a fresh folder, so no compiled function
    keeps the old code of one it calls from another file), unless ``$NUMBA_CACHE_DIR`` names a folder; set
    before numba's configuration is read."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}

    def numba_cache_dir(**extra):
        code = "import rfmodel, numba.core.config as c; print(c.CACHE_DIR)"
        run = dict(capture_output=True, text=True, cwd=ROOT, check=True, env={**env, **extra})
        return subprocess.run([sys.executable, "-c", code], **run).stdout.strip()

    from rfmodel.cache import code_digest

    expect = tmp_path / "rfmodel" / "numba" / code_digest()
    assert numba_cache_dir(XDG_CACHE_HOME=str(tmp_path)) == str(expect)
    mine = tmp_path / "mine"
    assert numba_cache_dir(NUMBA_CACHE_DIR=str(mine)) == str(mine)


def test_technology_layer_loads_no_solver():
    """The technology layer imports scipy's solver only when a fit is solved (fits are cached on disk), so
    a warm simulation does not pay for it."""
    assert heavy_modules_loaded("import rfmodel.tech.array, rfmodel.tech.fit", ("scipy.optimize",)) == []


def test_a_results_dataset_does_not_import_dask_array_but_dask_arrays_stay_recognised():
    """Where dask is installed, xarray's first Variable would import ``dask.array`` (a fifth of a small
    simulation's start-up) to test for dask data; ``rfmodel.results`` defers that test's import until
    ``dask.array`` is loaded, and xarray then still keeps dask arrays lazy (chunked, not computed)."""
    pytest.importorskip("dask.array")
    statements = (
        "import numpy as np, xarray as xr, rfmodel.results\n"
        "xr.Dataset({'a': (('x',), np.zeros(3))}, coords={'x': [1, 2, 3]})"
    )
    assert heavy_modules_loaded(statements, ("dask.array",)) == []
    code = (
        "import numpy as np, xarray as xr, rfmodel.results\n"
        "xr.Dataset({'a': (('x',), np.zeros(3))})\n"
        "import dask.array as da\n"
        "ds = xr.Dataset({'a': (('x',), da.ones(5, chunks=2))})\n"
        "print(type(ds.a.data).__name__, ds.a.chunks, float(ds.a.sum().compute()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == ["Array", "((2,", "2,", "1),)", "5.0"]


#: no function or method of the package is longer than this many lines (compiled kernels included)
MAX_FUNCTION_LINES = 200


def long_functions(root: Path = PKG, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, str, int]]:
    """``(file, function, lines)`` of every function under ``root`` longer than ``limit`` lines, by ``ast``
    (from its ``def`` line to its last line; decorators not counted)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out.append((str(path.relative_to(root.parent)), node.name, n))
    return out


def test_no_function_is_longer_than_the_limit():
    assert long_functions() == []


def test_the_code_is_in_ruffs_format():
    # every Python file of the project as `ruff format` writes it (pyproject.toml pins ruff's minor version,
    # whose style this is); the tables that need their own layout are marked `# fmt: off` / `# fmt: on`
    ruff = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the dev extra: pip install -e '.[dev]')")
    out = subprocess.run([ruff, "format", "--check", "."], cwd=PKG.parent, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_length_check_sees_a_long_function(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (pkg / "m.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}\n")
    assert long_functions(pkg) == [("pkg/m.py", "long", MAX_FUNCTION_LINES + 1)]


def test_a_profiles_disk_key_covers_every_module_the_analytic_engine_imports():
    """A workload profile on disk is keyed by the sources of ``rfmodel.cache.PROFILE_SOURCES`` only: every
    module the analytic engine imports, directly or through others, must lie among them (or a change of it
    would leave a stale profile in use), and a design or the simulator must not (a design's edit would
    rebuild every profile)."""
    from rfmodel.cache import PROFILE_SOURCES

    g = graph()
    seen, todo = set(), [m for m in g if m == "rfmodel.analytic" or m.startswith("rfmodel.analytic.")]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(g[m])
    seen.add("rfmodel")  # the package's __init__ runs before any of them

    def covered(mod: str) -> bool:
        parts = mod.split(".")[1:]
        path = "/".join(parts) if parts else "__init__"  # a module's path without .py, or its package's
        return any(path == s.removesuffix(".py") or path.startswith(s + "/") for s in PROFILE_SOURCES)

    missing = sorted(m for m in seen if not covered(m))
    assert not missing, f"modules the analytic engine imports outside PROFILE_SOURCES: {missing}"
    assert not any(covered(m) for m in ("rfmodel.designs.cerf", "rfmodel.sim.core", "rfmodel.optimize"))
