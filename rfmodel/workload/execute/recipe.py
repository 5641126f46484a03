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

An array may instead be given as data: ``file = "x.npy"`` (a NumPy file, relative to the recipe's
folder; its dtype and shape are the array's, and ``dtype``/``shape``, where given, must agree) or
``data = [1, 2, 3]`` (a literal list, nested for several dimensions, with ``dtype``).  Expected outputs
are declared per array and compared by ``rfmodel workload execute --check`` (each element within
``atol + rtol * |expected|``; integers exactly)::

    [expect.y]
    file = "y_expected.npy"      # or data = [...]
    rtol = 1e-6
    atol = 0.0

Every kernel parameter must be given: a kernel that reads parameter bytes beyond the ones the recipe's
``params`` fill is refused before it runs (:func:`check_params`), never run on zeros.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rfmodel.errors import ParseError, unknown_key_message
from rfmodel.workload.execute.errors import ExecutionError
from rfmodel.workload.execute.launch import _SCALAR, LaunchResult, Param, launch

__all__ = [
    "ArraySpec",
    "Recipe",
    "check_params",
    "load_recipe",
    "parse_recipe",
    "pointers",
    "run_recipe",
    "scalars",
]

INITS = ("zeros", "ones", "normal", "uniform", "randint", "arange", "full")
_DTYPES = ("float32", "float64", "int32", "uint32", "int64", "uint64", "int8", "uint8", "int16", "uint16")


def scalars(type: str, **values) -> list[Param]:
    """Scalar kernel parameters of one ``type`` (``i32``, ``u32``, ``f32``, ``i64``, ``u64``, ``f64``) in
    declaration order, named by the keywords: ``scalars("i32", nx=nx, ny=ny)``."""
    if type not in _SCALAR or type == "ptr":
        raise ValueError(f"scalar parameter type '{type}' is not one of {sorted(set(_SCALAR) - {'ptr'})}")
    return [Param(name, type, value) for name, value in values.items()]


def pointers(*arrays: str) -> list[Param]:
    """Pointer parameters in declaration order, each to the recipe's array of its own name."""
    return [Param(name, "ptr", array=name) for name in arrays]


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
    #: expected outputs declared by a TOML recipe (``[expect.NAME]``), which its reference returns
    expected: dict[str, np.ndarray] = field(default_factory=dict)
    #: SHA-1 of everything a TOML recipe reads (its text and its data files): what keys its results
    digest: str = ""

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


#: a constant-bank-0 operand at a fixed offset (``c[0x0][0x168]``): where a kernel reads its parameters
_CBANK0_RE = re.compile(r"\bc\[0x0\]\[(0x[0-9a-fA-F]+)\]")


def params_bytes(params: list[Param]) -> int:
    """The bytes ``params`` fill from the start of the parameter space (C alignment, as :func:`launch`)."""
    pos = 0
    for p in params:
        size = _SCALAR[p.type][1] if p.type in _SCALAR else 4
        pos = -(-pos // size) * size + size
    return pos


def check_params(kernel, params: list[Param]) -> None:
    """Refuse a launch whose ``params`` leave parameter bytes unfilled that ``kernel`` (a :class:`Kernel`
    read from SASS, or decoded) reads at a fixed offset of constant bank 0: a parameter missing from the
    recipe would otherwise read as 0.  One :class:`ExecutionError` naming the kernel, the offset and the
    bytes given."""
    from rfmodel.workload.execute.launch import CBANK0

    k = getattr(kernel, "kernel", kernel)
    optexts = k.attrs.get("optext") or ()
    if k.arch not in CBANK0 or not optexts:
        return
    base = CBANK0[k.arch]["params"]
    need, where = 0, None
    for ins, text in zip(k.instrs, optexts, strict=False):
        for m in _CBANK0_RE.finditer(text):
            off = int(m.group(1), 16)
            if off < base:
                continue
            width = 8 if ".64" in ins.opcode else 4  # LDC.64 / ULDC.64 read a pair
            if off - base + width > need:
                need, where = off - base + width, (ins.pc, off)
    given = params_bytes(params)
    if need > given:
        pc, off = where
        names = ", ".join(p.name for p in params) or "none"
        raise ExecutionError(
            f"{k.name} ({k.arch}): the kernel reads parameter bytes up to {need} (c[0x0][0x{off:x}] at "
            f"offset 0x{pc:04x}), the recipe's parameters ({names}) fill {given}: a parameter is missing or "
            "narrower than the kernel's"
        )


def run_recipe(kernel, recipe: Recipe, **launch_kw) -> tuple[LaunchResult, dict[str, np.ndarray]]:
    """Execute ``kernel`` (a :class:`Kernel` or decoded) with ``recipe``; returns the launch
    result and the inputs that were used.  ``launch_kw`` go to :func:`launch` (``record``, ...).
    A kernel reading a parameter the recipe does not give is refused (:func:`check_params`)."""
    check_params(kernel, recipe.params)
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
        if name not in want:  # an output the recipe declares no expectation for ([expect.NAME])
            continue
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
    "expect",
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
_ARRAY_KEYS = {"dtype", "shape", "init", "low", "high", "value", "file", "data"}
_EXPECT_KEYS = {"file", "data", "rtol", "atol"}
#: the largest array a recipe's data file or literal may hold
MAX_DATA_BYTES = 1 << 30
_PARAM_KEYS = {"name", "type", "value", "array"}


def _value_range(typ: str) -> tuple[float, float]:
    """The values a scalar parameter of ``typ`` holds (a float's largest finite one each side)."""
    dt = np.dtype(_SCALAR[typ][0])
    info = np.iinfo(dt) if dt.kind in "iu" else np.finfo(dt)
    return (int(info.min), int(info.max)) if dt.kind in "iu" else (float(info.min), float(info.max))


#: CUDA's largest grid (x, y, z) and the most bytes a recipe's arrays may take together
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_ARRAY_BYTES = 8 << 30


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
    fixed: dict[str, np.ndarray] = {}
    for name, spec in raw_arrays.items():
        if not isinstance(spec, dict):
            raise ParseError(path, None, f"arrays.{name}: expected a table")
        for key in spec:
            if key not in _ARRAY_KEYS:
                raise ParseError(path, None, f"arrays.{name}: " + unknown_key_message(key, _ARRAY_KEYS))
        if "file" in spec or "data" in spec:
            given = [k for k in ("init", "low", "high", "value") if k in spec]
            if given or ("file" in spec and "data" in spec):
                other = given[0] if given else "data"
                given_by = "file" if "file" in spec else "data"
                raise ParseError(
                    path,
                    None,
                    f"arrays.{name}: '{other}' and '{given_by}' both give its contents (one of them)",
                )
            a = _array_data(path, f"arrays.{name}", spec)
            fixed[name] = a
            arrays[name] = ArraySpec(a.dtype.name, a.shape if a.shape else (1,))
            continue
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
            if "value" in p:
                raise ParseError(
                    path, None, f"params[{j}].value: a ptr parameter is its array's address; give no value"
                )
            params.append(Param(name, typ, array=p["array"]))
        else:
            if "array" in p:
                raise ParseError(
                    path, None, f"params[{j}].array: a {typ} parameter takes a value, not an array"
                )
            v = p.get("value")
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise ParseError(path, None, f"params[{j}].value: expected a number, got {v!r}")
            if typ[0] in "iu" and not isinstance(v, int):
                raise ParseError(path, None, f"params[{j}].value: expected an integer for {typ}, got {v!r}")
            lo, hi = _value_range(typ)
            if not lo <= v <= hi:
                raise ParseError(
                    path, None, f"params[{j}].value: {v!r} is outside {typ}'s range ({lo!r} to {hi!r})"
                )
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
    expected: dict[str, np.ndarray] = {}
    tolerance: dict[str, tuple[float, float]] = {}
    raw_expect = data.get("expect", {})
    if not isinstance(raw_expect, dict):
        raise ParseError(path, None, "expect: expected a table of arrays' expected values")
    for name, spec in raw_expect.items():
        if name not in arrays:
            raise ParseError(path, None, f"expect.{name}: {name!r} is not one of the arrays")
        if not isinstance(spec, dict) or ("file" in spec) == ("data" in spec):
            raise ParseError(path, None, f"expect.{name}: expected a table with 'file' or 'data'")
        for key in spec:
            if key not in _EXPECT_KEYS:
                raise ParseError(path, None, f"expect.{name}: " + unknown_key_message(key, _EXPECT_KEYS))
        want = _array_data(path, f"expect.{name}", {"dtype": arrays[name].dtype, **spec})
        if int(np.prod(want.shape)) != int(np.prod(arrays[name].shape)):
            raise ParseError(
                path,
                None,
                f"expect.{name}: {want.size} values for an array of {int(np.prod(arrays[name].shape))}",
            )
        tol = []
        for key in ("rtol", "atol"):
            v = spec.get(key, 0.0)
            if isinstance(v, bool) or not isinstance(v, int | float) or not (0 <= v < float("inf")):
                raise ParseError(path, None, f"expect.{name}.{key}: expected a number at least 0, got {v!r}")
            tol.append(float(v))
        expected[name] = want.reshape(arrays[name].shape)
        tolerance[name] = (tol[0], tol[1])
        if name not in outputs:
            outputs = [*outputs, name]
    reference = None
    if expected:

        def reference(ins, sc, _want=expected):  # noqa: ARG001 - the declared values, whatever the inputs
            return {k: v.copy() for k, v in _want.items()}

    grid = _sizes(path, "grid", data.get("grid"))
    over = [f"{g} (at most {m})" for g, m in zip(grid, MAX_GRID, strict=False) if g > m]
    if len(grid) > 3 or over:
        raise ParseError(
            path, None, f"grid: CUDA's grid has 1 to 3 sizes within {MAX_GRID}: {', '.join(over)}"
        )
    size = sum(int(np.prod(a.shape, dtype=np.float64)) * np.dtype(a.dtype).itemsize for a in arrays.values())
    if size > MAX_ARRAY_BYTES:
        raise ParseError(
            path,
            None,
            f"arrays: {size / 2**30:.3g} GiB together, above the {MAX_ARRAY_BYTES >> 30} GiB a recipe "
            "may take",
        )
    return Recipe(
        fixed=fixed,
        expected=expected,
        reference=reference,
        tolerance=tolerance,
        constants=consts,
        kernel=kernel,
        grid=grid,
        block=_sizes(path, "block", data.get("block")),
        params=params,
        arrays=arrays,
        outputs=list(outputs),
        seed=seed,
        shared_bytes=sh,
    )


def _array_data(path: str, where: str, spec: dict) -> np.ndarray:
    """The contents of an array given as data: ``file`` (a ``.npy`` file, relative to the recipe's folder,
    read without pickle) or ``data`` (a literal list with ``dtype``); ``dtype`` and ``shape``, where given,
    must agree with a file's and shape a literal."""
    dt = spec.get("dtype")
    if dt is not None and dt not in _DTYPES:
        raise ParseError(path, None, f"{where}.dtype: {dt!r} is not one of {', '.join(_DTYPES)}")
    if "file" in spec:
        f = spec["file"]
        if not isinstance(f, str) or not f:
            raise ParseError(path, None, f"{where}.file: expected a path to a .npy file")
        fp = Path(f) if Path(f).is_absolute() else Path(path).parent / f
        if not fp.is_file():
            raise ParseError(path, None, f"{where}.file: {fp} is not a file")
        if fp.stat().st_size > MAX_DATA_BYTES:
            raise ParseError(path, None, f"{where}.file: {fp} is larger than {MAX_DATA_BYTES >> 20} MiB")
        try:
            a = np.load(fp, allow_pickle=False)
        except Exception as e:  # noqa: BLE001 - whatever a damaged or foreign file raises in the reader
            why = type(e).__name__
            raise ParseError(path, None, f"{where}.file: {fp} is not a readable .npy file ({why})") from None
        if not isinstance(a, np.ndarray) or a.dtype.name not in _DTYPES:
            raise ParseError(
                path,
                None,
                f"{where}.file: {fp} holds {getattr(a, 'dtype', type(a).__name__)}, "
                f"not one of {', '.join(_DTYPES)}",
            )
        if dt is not None and a.dtype.name != dt:
            raise ParseError(path, None, f"{where}: dtype {dt} but {fp} holds {a.dtype.name}")
    else:
        if dt is None:
            raise ParseError(path, None, f"{where}: 'data' needs a 'dtype'")
        try:
            a = np.array(spec["data"], dtype=dt)
        except (ValueError, TypeError, OverflowError) as e:
            msg = f"{where}.data: not a rectangular list of {dt} values ({e})"
            raise ParseError(path, None, msg) from None
        if a.dtype.hasobject or a.nbytes > MAX_DATA_BYTES:
            raise ParseError(path, None, f"{where}.data: not a list of numbers")
    if a.ndim == 0:
        a = a.reshape(1)
    if "shape" in spec:
        shape = _sizes(path, f"{where}.shape", spec["shape"])
        if int(np.prod(shape)) != a.size:
            raise ParseError(
                path,
                None,
                f"{where}: shape {list(shape)} holds {int(np.prod(shape))} values, the data {a.size}",
            )
        a = a.reshape(shape)
    if a.size == 0:
        raise ParseError(path, None, f"{where}: no values")
    return np.ascontiguousarray(a)


def load_recipe(path) -> Recipe:
    """Read a recipe from a TOML file (and the data files it names)."""
    import dataclasses
    import hashlib

    from rfmodel.io import read_text

    try:
        text = read_text(path, "launch recipe")
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ParseError(str(path), None, f"bad TOML: {e}") from None
    except RecursionError:
        raise ParseError(str(path), None, "bad TOML: nested too deeply to read") from None
    recipe = parse_recipe(data, str(path))
    h = hashlib.sha1(text.encode())
    for name, a in [*sorted(recipe.fixed.items()), *sorted(recipe.expected.items())]:
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return dataclasses.replace(recipe, digest=h.hexdigest())
