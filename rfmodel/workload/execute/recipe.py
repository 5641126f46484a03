"""Launch recipes: a kernel's launch shape, parameters and input arrays, and how to check its output.

A recipe names its arrays (shape, dtype, and a generator drawn from a seed), its
parameters in declaration order (scalars, or ``ptr`` to an array), the grid and the
CTA shape, and which arrays are outputs.  Built-in kernels have recipes in
:mod:`rfmodel.workload.execute.builtin` with a numpy reference; users write the same
as TOML (docs/execute.md)::

    version = 1
    kernel = "saxpy"
    grid = [8]
    block = [256]
    outputs = ["y"]
    params = [
      {name = "n", type = "i32", value = 2000},
      {name = "a", type = "f32", value = 1.5},
      {name = "x", type = "ptr", array = "x"},
      {name = "y", type = "ptr", array = "y"},
    ]
    [arrays.x]
    dtype = "float32"
    shape = [2000]
    init = "normal"
    [arrays.y]
    dtype = "float32"
    shape = [2000]
    init = "uniform"
    low = -1.0
    high = 1.0
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rfmodel.errors import ParseError, unknown_key_message
from rfmodel.workload.execute.errors import ExecutionError
from rfmodel.workload.execute.launch import _SCALAR, LaunchResult, Param, launch

__all__ = ["ArraySpec", "Recipe", "load_recipe", "parse_recipe", "run_recipe"]

INITS = ("zeros", "ones", "normal", "uniform", "randint", "arange", "full")
_DTYPES = ("float32", "float64", "int32", "uint32", "int64", "uint64", "int8", "uint8", "int16", "uint16")


@dataclass(frozen=True)
class ArraySpec:
    """An input/output array: ``init`` is one of :data:`INITS`; ``low``/``high`` bound
    ``uniform`` and ``randint`` (``high`` exclusive for ``randint``), ``value`` fills ``full``."""

    dtype: str
    shape: tuple[int, ...]
    init: str = "zeros"
    low: float = 0.0
    high: float = 1.0
    value: float = 0.0

    def make(self, rng: np.random.Generator) -> np.ndarray:
        n = int(np.prod(self.shape)) if self.shape else 1
        dt = np.dtype(self.dtype)
        if self.init == "zeros":
            a = np.zeros(n, dt)
        elif self.init == "ones":
            a = np.ones(n, dt)
        elif self.init == "full":
            a = np.full(n, self.value, dt)
        elif self.init == "arange":
            a = np.arange(n).astype(dt)
        elif self.init == "normal":
            a = rng.standard_normal(n).astype(dt)
        elif self.init == "uniform":
            a = rng.uniform(self.low, self.high, n).astype(dt)
        else:  # randint
            a = rng.integers(int(self.low), int(self.high), n).astype(dt)
        return a.reshape(self.shape)


@dataclass
class Recipe:
    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    params: list[Param]
    arrays: dict[str, ArraySpec]
    outputs: list[str]
    seed: int = 0
    shared_bytes: int | None = None
    #: numpy reference: inputs (dict of arrays, scalars by name) -> expected outputs
    reference: object = None
    #: per output: (relative, absolute) tolerance, or a function of the inputs giving it
    #: (the absolute one may be an array, one bound per element); integers are compared exactly
    tolerance: dict = field(default_factory=dict)
    #: arrays given as data (a sparse matrix's structure ...), used instead of their generator
    fixed: dict[str, np.ndarray] = field(default_factory=dict)
    #: outputs compared as multisets (their order is the order of atomics, which the program leaves open)
    unordered: list[str] = field(default_factory=list)
    #: constant bank -> name of an array whose bytes fill it from offset 0 (``__constant__`` data: bank 3)
    constants: dict[int, str] = field(default_factory=dict)

    def inputs(self) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        out = {}
        for name, spec in self.arrays.items():
            a = spec.make(rng)
            if name in self.fixed:
                a = np.asarray(self.fixed[name], dtype=spec.dtype).reshape(spec.shape)
            out[name] = a
        return out

    def scalars(self) -> dict[str, float | int]:
        return {p.name: p.value for p in self.params if p.type != "ptr"}


def run_recipe(kernel, recipe: Recipe, **launch_kw) -> tuple[LaunchResult, dict[str, np.ndarray]]:
    """Execute ``kernel`` (a :class:`Kernel` or decoded) with ``recipe``; returns the launch
    result and the inputs that were used.  ``launch_kw`` go to :func:`launch` (``record``, ...)."""
    ins = recipe.inputs()
    consts = {bank: ins[name] for bank, name in recipe.constants.items()}
    glob = {k: v for k, v in ins.items() if k not in recipe.constants.values()}
    res = launch(
        kernel,
        recipe.params,
        glob,
        recipe.grid,
        recipe.block,
        shared_bytes=recipe.shared_bytes,
        constants=consts,
        **launch_kw,
    )
    return res, ins


def check_outputs(recipe: Recipe, res: LaunchResult, ins: dict[str, np.ndarray]) -> dict[str, float]:
    """Compare the outputs with the recipe's reference; returns the largest error per output
    (0 for an exact match) and raises :class:`ExecutionError` on a mismatch."""
    if recipe.reference is None:
        raise ExecutionError(f"recipe of '{recipe.kernel}' has no reference")
    want = recipe.reference({k: v.copy() for k, v in ins.items()}, recipe.scalars())
    worst = {}
    for name in recipe.outputs:
        got = res.arrays[name]
        exp = np.asarray(want[name]).reshape(got.shape)
        if name in recipe.unordered:
            got = np.sort(got.reshape(-1))
            exp = np.sort(exp.reshape(-1))
        if np.issubdtype(got.dtype, np.integer):
            bad = np.flatnonzero(got.reshape(-1) != exp.reshape(-1))
            if bad.size:
                j = bad[0]
                raise ExecutionError(
                    f"{recipe.kernel}: output '{name}' differs from the reference at {bad.size} elements "
                    f"(first at {j}: {got.reshape(-1)[j]} != {exp.reshape(-1)[j]})"
                )
            worst[name] = 0.0
        else:
            tol = recipe.tolerance.get(name, (1e-6, 0.0))
            rtol, atol = tol(ins) if callable(tol) else tol
            atol = np.broadcast_to(np.asarray(atol, dtype=np.float64), got.shape).reshape(-1)
            g = got.astype(np.float64).reshape(-1)
            x = exp.astype(np.float64).reshape(-1)
            err = np.abs(g - x)
            bad = np.flatnonzero(~(err <= atol + rtol * np.abs(x)))
            if bad.size:
                j = bad[0]
                raise ExecutionError(
                    f"{recipe.kernel}: output '{name}' differs from the reference at {bad.size} elements "
                    f"(first at {j}: {g[j]!r} vs {x[j]!r}, allowed {atol[j] + rtol * abs(x[j]):.3g})"
                )
            worst[name] = float(err.max()) if err.size else 0.0
    return worst


# ---- TOML -----------------------------------------------------------------------------------------

_TOP = {
    "version",
    "kernel",
    "grid",
    "block",
    "params",
    "arrays",
    "outputs",
    "seed",
    "shared_bytes",
    "constants",
}
_ARRAY_KEYS = {"dtype", "shape", "init", "low", "high", "value"}
_PARAM_KEYS = {"name", "type", "value", "array"}


def _sizes(path: str, what: str, v) -> tuple[int, ...]:
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    if (
        not isinstance(v, list)
        or not v
        or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v)
    ):
        raise ParseError(path, None, f"{what}: expected a positive integer or a list of them, got {v!r}")
    return tuple(v)


def parse_recipe(data: dict, path: str = "<recipe>") -> Recipe:
    """A :class:`Recipe` from a TOML table (already parsed); every problem is one ParseError."""
    for key in data:
        if key not in _TOP:
            raise ParseError(path, None, unknown_key_message(key, _TOP))
    if data.get("version") != 1:
        raise ParseError(path, None, f"version: expected 1, got {data.get('version')!r}")
    kernel = data.get("kernel")
    if not isinstance(kernel, str) or not kernel:
        raise ParseError(path, None, "kernel: expected the kernel's name")
    arrays: dict[str, ArraySpec] = {}
    raw_arrays = data.get("arrays", {})
    if not isinstance(raw_arrays, dict):
        raise ParseError(path, None, "arrays: expected a table of arrays")
    for name, spec in raw_arrays.items():
        if not isinstance(spec, dict):
            raise ParseError(path, None, f"arrays.{name}: expected a table")
        for key in spec:
            if key not in _ARRAY_KEYS:
                raise ParseError(path, None, f"arrays.{name}: " + unknown_key_message(key, _ARRAY_KEYS))
        dt = spec.get("dtype")
        if dt not in _DTYPES:
            raise ParseError(path, None, f"arrays.{name}.dtype: {dt!r} is not one of {', '.join(_DTYPES)}")
        init = spec.get("init", "zeros")
        if init not in INITS:
            raise ParseError(path, None, f"arrays.{name}.init: {init!r} is not one of {', '.join(INITS)}")
        nums = {}
        for key in ("low", "high", "value"):
            if key in spec:
                v = spec[key]
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise ParseError(path, None, f"arrays.{name}.{key}: expected a number, got {v!r}")
                nums[key] = float(v)
        if init in ("uniform", "randint") and nums.get("low", 0.0) >= nums.get("high", 1.0):
            raise ParseError(path, None, f"arrays.{name}: low must be below high")
        arrays[name] = ArraySpec(dt, _sizes(path, f"arrays.{name}.shape", spec.get("shape")), init, **nums)
    params: list[Param] = []
    raw_params = data.get("params", [])
    if not isinstance(raw_params, list):
        raise ParseError(path, None, "params: expected a list of tables")
    for j, p in enumerate(raw_params):
        if not isinstance(p, dict):
            raise ParseError(path, None, f"params[{j}]: expected a table")
        for key in p:
            if key not in _PARAM_KEYS:
                raise ParseError(path, None, f"params[{j}]: " + unknown_key_message(key, _PARAM_KEYS))
        name, typ = p.get("name"), p.get("type")
        if not isinstance(name, str):
            raise ParseError(path, None, f"params[{j}].name: expected a string")
        if typ not in _SCALAR:
            raise ParseError(path, None, f"params[{j}].type: {typ!r} is not one of {', '.join(_SCALAR)}")
        if typ == "ptr":
            if p.get("array") not in arrays:
                raise ParseError(
                    path, None, f"params[{j}].array: {p.get('array')!r} is not one of the arrays"
                )
            params.append(Param(name, typ, array=p["array"]))
        else:
            v = p.get("value")
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise ParseError(path, None, f"params[{j}].value: expected a number, got {v!r}")
            if typ[0] in "iu" and not isinstance(v, int):
                raise ParseError(path, None, f"params[{j}].value: expected an integer for {typ}, got {v!r}")
            params.append(Param(name, typ, value=v))
    outputs = data.get("outputs", [])
    if not isinstance(outputs, list) or not all(o in arrays for o in outputs):
        raise ParseError(path, None, f"outputs: expected a list of array names, got {outputs!r}")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ParseError(path, None, f"seed: expected a non-negative integer, got {seed!r}")
    sh = data.get("shared_bytes")
    if sh is not None and (isinstance(sh, bool) or not isinstance(sh, int) or sh < 0):
        raise ParseError(path, None, f"shared_bytes: expected a non-negative integer, got {sh!r}")
    consts = {}
    raw_consts = data.get("constants", {})
    if not isinstance(raw_consts, dict):
        raise ParseError(path, None, "constants: expected a table of bank numbers to array names")
    for bank, name in raw_consts.items():
        if bank not in ("1", "2", "3"):
            raise ParseError(path, None, f"constants: bank {bank!r} is not 1, 2 or 3")
        if name not in arrays:
            raise ParseError(path, None, f"constants.{bank}: {name!r} is not one of the arrays")
        consts[int(bank)] = name
    return Recipe(
        constants=consts,
        kernel=kernel,
        grid=_sizes(path, "grid", data.get("grid")),
        block=_sizes(path, "block", data.get("block")),
        params=params,
        arrays=arrays,
        outputs=list(outputs),
        seed=seed,
        shared_bytes=sh,
    )


def load_recipe(path) -> Recipe:
    """Read a recipe from a TOML file."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except OSError as e:
        raise ParseError(str(path), None, f"cannot read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ParseError(str(path), None, f"bad TOML: {e}") from None
    except RecursionError:
        raise ParseError(str(path), None, "bad TOML: nested too deeply to read") from None
    return parse_recipe(data, str(path))
