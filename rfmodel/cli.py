"""The ``rfmodel`` command line.

Every subcommand maps onto a Python function of the same name
(``rfmodel evaluate`` -> :func:`rfmodel.evaluate`, ``rfmodel optimize`` ->
:func:`rfmodel.optimize.optimize` ...).  User errors print one line on stderr
and exit with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import tomllib
import warnings
from pathlib import Path

from rfmodel import limits as L
from rfmodel.errors import RfmodelError, UnknownNameError, error_line, expect_mapping, unknown_key_message

DEFAULT_OUT = "rfmodel-out"
#: ``--arch`` of the commands that load workloads (:func:`rfmodel.evaluate.check_arch`)
ARCH_HELP = (
    "the compiler target whose SASS of a shipped kernel is read (sm_75 to sm_90; default sm_80); refused "
    "where no workload is a shipped kernel"
)


def _progress(enabled: bool, total: int, desc: str):
    """A tqdm bar on stderr (or a no-op): its ``close`` and its update callback.  The bar is drawn at the
    first update, so that a run its arguments refuse prints its one error line alone."""
    if not enabled:
        return lambda: None, lambda *a, **k: None
    from tqdm import tqdm

    now = {"phase": None, "bar": None, "total": total}

    def update(done, total=None, phase=None, **info):
        bar = now["bar"]
        if bar is None:
            first = total if total is not None else now["total"]
            bar = now["bar"] = tqdm(total=first, desc=desc, file=sys.stderr, leave=False, dynamic_ncols=True)
        if phase != now["phase"]:  # a phase before the main one (``profiles``) has its own bar and estimate
            now["phase"] = phase
            bar.reset(total=total)
            bar.set_description(desc if phase is None else f"{desc}: {phase}")
        if total is not None and bar.total != total:
            bar.total = total
        bar.n = done
        if info:
            bar.set_postfix(info, refresh=False)
        bar.refresh()

    def close():
        if now["bar"] is not None:
            now["bar"].close()

    return close, update


def _bounded(kind: type, low, high, *, above: bool = False, below: bool = False):
    """An argparse type: a finite number of ``kind`` (int or float) from ``low`` (``above``: above it) to
    ``high`` (``below``: below it); anything else is the parser's one-line error naming the option, the
    value and the range.  :func:`_state_bounds` adds the range to the option's help."""

    def parse(text: str):
        try:
            v = kind(text)
        except (TypeError, ValueError, OverflowError):
            v = None
        fits = v is not None and math.isfinite(v) and (v > low if above else v >= low)
        if not (fits and (v < high if below else v <= high)):
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: expected {what} {parse.bounds}")
        return v

    lo = f"above {low}" if above else f"at least {low}"
    hi = f"below {high}" if below else f"at most {high}"
    parse.bounds = f"{lo} and {hi}"
    parse.__name__ = kind.__name__
    return parse


def _int(low: int, high: int):
    return _bounded(int, low, high)


def _num(low: float, high: float, *, above: bool = False, below: bool = False):
    return _bounded(float, low, high, above=above, below=below)


def _word_or(word: str, number, noun: str):
    """An option's type: the word ``word``, or a value of the bounded type ``number`` (:func:`_int`,
    :func:`_num`; ``noun`` names it in the error)."""

    def parse(text: str):
        if text == word:
            return text
        try:
            return number(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected {parse.bounds}") from None

    parse.bounds = f"{word!r} or {noun} {number.bounds}"
    return parse


#: ``--scale``: a built-in recipe's problem size, or ``full`` (a papers' benchmark at its original's input)
_scale = _word_or("full", _num(0, L.MAX_EXECUTE_SCALE, above=True), "a number")
#: ``evaluate --max-warps``: a number of warps, or ``auto`` (``rfmodel.evaluate``'s ``max_warps``)
_warps = _word_or("auto", _int(1, L.MAX_WARPS), "an integer")

#: ``--compat`` of ``evaluate`` and ``simulate`` (``rfmodel.sim.engine.COMPAT_MODES``, not imported here:
#: the simulator's import is slow for a parser)
COMPAT_CHOICES = ("none", "gpgpusim")

#: what ``--out`` of ``evaluate`` and ``simulate`` writes, by the file's ending
RESULT_FILES = {".nc": "NetCDF", ".csv": "CSV"}


def _result_file(text: str) -> Path:
    """``--out FILE.nc|FILE.csv``: the ending says the format; another is refused before anything runs
    (a NetCDF file under another name is not what was asked for)."""
    path = Path(text)
    if path.suffix.lower() not in RESULT_FILES:
        allowed = ", ".join(f"{k} ({v})" for k, v in RESULT_FILES.items())
        raise argparse.ArgumentTypeError(f"{text!r}: expected a file ending in {allowed}")
    with contextlib.suppress(OSError):  # a name the system refuses is check_writable's to say
        if path.is_dir():  # refused now, not after the run whose result it was to hold
            raise argparse.ArgumentTypeError(f"{text!r}: is a folder; expected a file to write")
    return path


class _StoreOnce(argparse._StoreAction):
    """An option that takes one value: given twice, the second would silently replace the first, so it is
    refused (an option that takes several is repeatable, ``append``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given", set())
        if option_string is not None and self.dest in seen:
            parser.error(f"argument {'/'.join(self.option_strings)}: given twice; it takes one value")
        seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


def _store_once(parser: argparse.ArgumentParser) -> None:
    """Make every one-value option of ``parser`` and its sub-commands a :class:`_StoreOnce`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _store_once(sub)
        elif type(action) is argparse._StoreAction:
            action.__class__ = _StoreOnce


def _state_bounds(parser: argparse.ArgumentParser) -> None:
    """Add each bounded option's range (:func:`_bounded`) to its help, in every sub-command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _state_bounds(sub)
        elif hasattr(action.type, "bounds") and action.help is not argparse.SUPPRESS:
            action.help = f"{action.help or ''} [{action.type.bounds}]".strip()


def _parse_param(text: str) -> tuple[str, list]:
    if "=" not in text:
        raise RfmodelError(f"--param '{text}': expected NAME=V1[,V2,...]")
    name, _, vals = text.partition("=")
    out = []
    for v in vals.split(","):
        v = v.strip()
        if not v:
            raise RfmodelError(f"--param {name}: an empty value in '{vals}'")
        try:
            out.append(int(v))
        except ValueError:
            try:
                out.append(float(v))
            except ValueError:
                out.append(v)  # a name (a memory cell, ...): the parameter's spec says whether it is allowed
    if len({type(x) is str for x in out}) > 1:
        raise RfmodelError(f"--param {name}: mixes numbers and names ({vals})")
    return name.strip(), out


def _table(rows: list[dict], floatfmt: str = ".4g") -> str:
    if not rows:
        return "(empty)"
    cols = list(rows[0])
    cells = [[format(r[c], floatfmt) if isinstance(r[c], float) else str(r[c]) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = "  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(x.rjust(w) for x, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(out)


# --------------------------------------------------------------------------- evaluate
EVAL_CONFIG_KEYS = (
    "design",
    "workloads",
    "gpu",
    "method",
    "seed",
    "arch",
    "params",
    "tech",
    "uncertainty",
    "samples",
    "calibration",
    "reference",
    "preset",
    "mode",
    "level",
    "max_warps",
    "compat",
    "on_no_fit",
)


def _read_eval_config(path: str) -> dict:
    from rfmodel.errors import ParseError
    from rfmodel.io import read_text

    try:
        data = tomllib.loads(read_text(path, "configuration file"))
    except tomllib.TOMLDecodeError as e:
        raise ParseError(path, getattr(e, "lineno", None), f"malformed TOML: {e}") from e
    except RecursionError:
        raise ParseError(path, None, "malformed TOML: nested too deeply to read") from None
    if "kind" in data:  # a spec file (e.g. an SM spec): use it as the GPU
        return {"gpu": path, "spec_file": True}
    for k in data:
        if k not in EVAL_CONFIG_KEYS:
            raise RfmodelError(f"{path}: {unknown_key_message(k, EVAL_CONFIG_KEYS)}")
    for k in ("params", "tech", "uncertainty"):  # tables of names to values
        if k in data:
            data[k] = expect_mapping(f"{path}: '{k}'", data[k])
    if isinstance(data.get("gpu"), dict):
        from rfmodel.spec import SMSpec

        data["gpu"] = SMSpec.from_dict(data["gpu"], where=f"{path} [gpu]")
    return data


DISTRIBUTIONS = ("normal", "lognormal", "uniform")


def _given_once(pairs, option: str) -> dict:
    """``(name, value)`` pairs of a repeatable option (``--param``, ``--uncertainty``) as a table; a name
    given twice is refused (the later would silently replace the earlier)."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise RfmodelError(f"{option} {k}: given twice; give each name once (several values: {k}=A,B)")
        out[k] = v
    return out


def _parse_uncertainty(text: str) -> tuple[str, object]:
    """``NAME=DIST:WIDTH`` (``mem_fraction=normal:0.1``) or ``model_error=calibrated``."""
    name, eq, spec = text.partition("=")
    name, spec = name.strip(), spec.strip()
    if not eq or not name or not spec:
        raise RfmodelError(f"--uncertainty '{text}': expected NAME=DIST:WIDTH or model_error=calibrated")
    if name == "model_error" and spec == "calibrated":
        return name, spec
    dist, colon, width = spec.partition(":")
    if dist not in DISTRIBUTIONS or not colon:
        raise RfmodelError(
            f"--uncertainty {name}: '{spec}' is not DIST:WIDTH with DIST one of {', '.join(DISTRIBUTIONS)}"
        )
    try:
        return name, (dist, float(width))
    except ValueError as e:
        raise RfmodelError(f"--uncertainty {name}: width '{width}' is not a number") from e


def _preset_params(design: str, preset: str | None) -> dict:
    """The parameters of a design's named configuration (``--preset``; ``--param`` values override them)."""
    if not preset:
        return {}
    from rfmodel.designs.base import get_design

    return get_design(design).preset(preset)


def _note_classed_by_name(ds) -> None:
    """A line on stderr per workload whose SASS has opcodes the table does not know (classed by their names:
    the result holds them as ``attrs["opcodes_classed_by_name"]``)."""
    for name, rows in json.loads(ds.attrs.get("opcodes_classed_by_name", "{}")).items():
        which = ", ".join(f"{op} (instruction {i}) as {c}" for i, op, c in rows)
        print(
            f"rfmodel: note: {name}: opcodes the SASS table does not know, classed by their names: {which} "
            "(docs/sass-reader.md)",
            file=sys.stderr,
        )


def cmd_evaluate(args) -> int:
    from rfmodel.evaluate import EFFECT_METRICS, compare, evaluate, result_table
    from rfmodel.io import write_netcdf, write_text

    cfg = _read_eval_config(args.config) if args.config else {}
    if cfg.get("spec_file") and args.gpu:  # the file's only content is a GPU: one of the two is ignored
        raise RfmodelError(
            f"--config {args.config} is an SM spec, the GPU, and so is --gpu {args.gpu}: give one"
        )
    designs = args.design or cfg.get("design", "baseline")
    designs = [designs] if isinstance(designs, str) else list(designs)
    several = len(designs) > 1
    # an option given on the command line overrides the config file's value
    keys = ("reference", "preset", "mode", "level", "max_warps", "compat", "on_no_fit")
    opt = {k: getattr(args, k) if getattr(args, k) is not None else cfg.get(k) for k in keys}
    if several and opt["preset"]:
        raise RfmodelError(
            "--preset names a configuration of one design; with several --design, compare "
            "them at their defaults or evaluate each on its own"
        )
    if opt["reference"] and not several:
        raise RfmodelError("--reference applies when several --design are compared")
    params = _preset_params(designs[0], opt["preset"])
    params.update(cfg.get("params", {}))
    params.update(_given_once(map(_parse_param, args.param or []), "--param"))
    workloads = recipe_workload(args.workload or cfg.get("workloads"), args.recipe)
    uncertainty = {k: tuple(v) if isinstance(v, list) else v for k, v in cfg.get("uncertainty", {}).items()}
    uncertainty.update(_given_once(map(_parse_uncertainty, args.uncertainty or []), "--uncertainty"))
    method = args.method or cfg.get("method", "analytic")
    if uncertainty and method != "montecarlo":
        raise RfmodelError("--uncertainty needs --method montecarlo")
    run = (lambda *a, **k: compare(*a, reference=opt["reference"], **k)) if several else evaluate
    ds = run(
        designs if several else designs[0],
        workloads,
        args.gpu or cfg.get("gpu"),
        method=method,
        params=params or None,
        uncertainty=uncertainty or None,
        samples=args.samples if args.samples is not None else cfg.get("samples"),
        **({"level": opt["level"]} if opt["level"] is not None else {}),
        seed=args.seed if args.seed is not None else cfg.get("seed", 0),
        arch=args.arch or cfg.get("arch", "sm_80"),
        tech=cfg.get("tech"),
        **({"calibration": c} if (c := args.calibration or cfg.get("calibration")) is not None else {}),
        **({"mode": opt["mode"]} if opt["mode"] else {}),
        **({"max_warps": opt["max_warps"]} if opt["max_warps"] is not None else {}),
        **({"sim_options": {"compat": opt["compat"]}} if opt["compat"] else {}),
        **({"on_no_fit": opt["on_no_fit"]} if opt["on_no_fit"] else {}),
    )
    cols = ["ipc", "cycles", "warps", "rf_reads", "rf_writes", "bank_conflict_stall_cycles"]
    cols += [m for m in ("l1d_hit_rate", "collector_occupancy") if m in ds]
    cols += ["energy_pj_total", "power_mw", "area_mm2_total"]
    cols += [m for m in TIMING_COLUMNS if m in ds]
    if method == "montecarlo":
        cols[1:1] = ["ipc_lo", "ipc_hi"]
    if several:  # each effect beside its metric
        cols = [x for c in cols for x in (c, f"{c}_effect") if x in ds and (x == c or c in EFFECT_METRICS)]
        if "ipc_effect_lo" in ds:  # the effect's interval from the calibrated effect error
            at = cols.index("ipc_effect") + 1
            cols[at:at] = ["ipc_effect_lo", "ipc_effect_hi"]
    df = ds[cols].to_dataframe().reset_index()
    if args.json:
        print(
            json.dumps(
                {
                    "attrs": {k: str(v) for k, v in ds.attrs.items()},
                    "rows": json.loads(df.to_json(orient="records")),
                }
            )
        )
    else:
        print(_table(df.to_dict(orient="records")))
        print(
            f"\nengine={ds.attrs['engine']} design={ds.attrs['design']} gpu={ds.attrs['gpu']} "
            f"tech={ds.attrs['tech']} ({ds.attrs.get('calibration', 'calibration differs per design')})"
            + (f"\n<metric>_effect: <metric> / <metric> of {ds.attrs['reference']} - 1" if several else "")
            + (f"\n{ds.attrs['effect_interval']}" if "effect_interval" in ds.attrs else "")
        )
    _note_classed_by_name(ds)
    if args.out:
        out = Path(args.out)
        if out.suffix.lower() == ".csv":
            write_text(out, result_table(ds).to_csv(index=False))
        else:
            write_netcdf(ds, out)
        print(f"wrote {out}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- optimize
#: the arguments that define an optimize run (saved beside its checkpoints; ``--resume`` reads them back)
def recipe_workload(workload, recipe):
    """The one ``--workload`` named with its ``--recipe`` (:func:`rfmodel.evaluate.recipe_workload`)."""
    if recipe is None:
        return workload
    from rfmodel.evaluate import recipe_workload as named

    return named(workload, recipe)


#: what --recipe does, for every command that takes it
RECIPE_HELP = (
    "a launch recipe (docs/execute.md) on which the one --workload (FILE.sass:KERNEL, "
    "FILE.cubin:KERNEL or a shipped kernel) is executed for its trace: the workload "
    "execute[FILE.toml]:KERNEL"
)
OPTIMIZE_RUN_ARGS = (
    "design",
    "workload",
    "gpu",
    "objective",
    "constraint",
    "cell",
    "algorithm",
    "pop",
    "generations",
    "seed",
    "arch",
    "no_brute_force",
    "design_param",
    "uncertainty",
    "uncertainty_samples",
    "percentile",
    "node",
    "structure_cell",
    "reference_seeds",
    "no_store",
)
#: at most this many Pareto points are printed
PARETO_SHOWN = 30
#: columns of the printed Pareto table before the objectives; a design's own parameters go in one column
PARETO_COLUMNS = ("design", "main_cell", "num_banks", "regs_per_sm", "collector_units")


#: the kind of value of each saved argument of an optimize run (the numbers' ranges: :func:`optimize`'s)
RUN_ARG_KINDS = {
    **dict.fromkeys(
        (
            "design",
            "workload",
            "objective",
            "constraint",
            "cell",
            "design_param",
            "uncertainty",
            "structure_cell",
        ),
        "strings",
    ),
    **dict.fromkeys(("gpu", "algorithm", "arch"), "string"),
    "node": "numbers",
    **dict.fromkeys(("pop", "generations", "seed", "reference_seeds"), "integer"),
    "uncertainty_samples": "integer or null",
    "percentile": "number or null",
    **dict.fromkeys(("no_brute_force", "no_store"), "bool"),
}


def _run_description(saved, path) -> dict:
    """The parsed ``run.json`` of an optimize run, checked: an object whose known entries have their kind
    (:data:`RUN_ARG_KINDS`; a list may also be null, as may ``gpu``); anything else is one error."""

    def number(v):
        return isinstance(v, int | float) and not isinstance(v, bool)

    ok = {
        "strings": lambda v: v is None or (isinstance(v, list) and all(isinstance(x, str) for x in v)),
        "numbers": lambda v: v is None or (isinstance(v, list) and all(number(x) for x in v)),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and number(v),
        "number": number,
        "integer or null": lambda v: v is None or (isinstance(v, int) and number(v)),
        "number or null": lambda v: v is None or number(v),
        "bool": lambda v: isinstance(v, bool),
    }
    if not isinstance(saved, dict):
        raise RfmodelError(
            f"{path}: not a run description (expected a JSON object, got {type(saved).__name__})"
        )
    for k, kind in RUN_ARG_KINDS.items():
        if k in saved and not (ok[kind](saved[k]) or (k == "gpu" and saved[k] is None)):
            raise RfmodelError(f"{path}: not a run description ('{k}' = {saved[k]!r}: expected {kind})")
    return saved


def _pareto_display(rows: list[dict], objectives) -> list[dict]:
    """The Pareto rows as printed: the shared columns, the design's own parameters as ``name=value`` text,
    the objectives and the main RF's read cycles."""
    from rfmodel.optimize.problem import REPORTED, point_metrics

    names = {o.name for o in objectives} | set(REPORTED)
    out = []
    for r in rows:
        d = {c: r.get(c, "") for c in PARETO_COLUMNS}
        # its other variables (the design's own parameters, a searched node or cell), not the metrics
        # saved beside them (a constraint's) nor the row's index
        skip = names | point_metrics(r["design"]) | {"point"}
        own = [f"{k}={v}" for k, v in r.items() if k not in d and k not in skip]
        d["design_params"] = " ".join(own)
        d.update({o.name: r[o.name] for o in objectives})
        d["rf_read_cycles"] = r.get("main_rf_read_cycles", "")
        out.append(d)
    return out


def cmd_optimize(args) -> int:
    from rfmodel.io import folder_lock

    folder = Path(args.resume or args.out)
    if args.resume and not folder.is_dir():
        return _optimize(args)  # nothing to resume: the error names the missing run description
    made = not folder.exists()
    try:
        # one run at a time in a folder: a second would overwrite the first's checkpoints and front
        with folder_lock(folder, clean=("checkpoint",)):
            return _optimize(args)
    except RfmodelError:
        if made:  # a run refused before it began leaves no folder behind (only empty folders go)
            for sub in (folder / "checkpoint", folder):
                with contextlib.suppress(OSError):
                    sub.rmdir()
        raise


def _optimize(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rfmodel.io import output_set, read_text, write_bytes, write_figure, write_netcdf, write_text
    from rfmodel.optimize.problem import DEFAULT_CELLS, DEFAULT_OBJECTIVES, optimize, pareto_table
    from rfmodel.runner import make_runner

    if args.validate is not None and args.validate < 1:
        raise RfmodelError(f"--validate: expected a positive number of points (got {args.validate})")

    ckpt = Path(args.resume or args.out) / "checkpoint"
    if args.recipe is not None:  # the workload named with its recipe: what run.json keeps
        args.workload = [recipe_workload(args.workload, args.recipe)]
    if args.resume:  # the run's own arguments, as it started
        try:
            saved = json.loads(read_text(ckpt / "run.json", "checkpoint"))
        except json.JSONDecodeError as e:
            raise RfmodelError(f"{ckpt / 'run.json'}: not a run description ({e.msg})") from None
        except RecursionError:
            raise RfmodelError(f"{ckpt / 'run.json'}: not a run description (nested too deeply)") from None
        saved = _run_description(saved, ckpt / "run.json")
        named = _given_dests(getattr(args, "argv", None) or [])
        given = [f"--{k.replace('_', '-')}" for k in OPTIMIZE_RUN_ARGS if k in named]
        if given:  # the saved arguments decide a resumed run: another value would be ignored
            raise RfmodelError(
                f"--resume continues {args.resume} with the arguments it started with; "
                f"{', '.join(given)} cannot change them (start a new run with --out for that)"
            )
        if not saved.get("uncertainty"):  # a run description written before these two were refused alone
            saved = {**saved, "uncertainty_samples": None, "percentile": None}
        for k in OPTIMIZE_RUN_ARGS:
            setattr(args, k, saved.get(k, getattr(args, k)))
        args.out = args.resume
    else:
        run_file = ckpt / "run.json"
        previous = run_file.read_bytes() if run_file.is_file() else None
        write_text(run_file, json.dumps({k: getattr(args, k) for k in OPTIMIZE_RUN_ARGS}, indent=1))
        written = run_file.stat().st_mtime_ns
    designs = args.design or None
    objectives = tuple(args.objective or DEFAULT_OBJECTIVES)
    import os

    # every core by default: the islands are independent and the front does not depend on where they run
    runner = make_runner(args.workers if args.workers is not None else (os.cpu_count() or 1), args.scheduler)
    close_bar, update = _progress(not args.quiet, None, args.algorithm.upper())
    try:
        res = optimize(
            designs,
            args.workload or None,
            args.gpu,
            objectives=objectives,
            constraints=tuple(args.constraint or ()),
            cells=tuple(args.cell or DEFAULT_CELLS),
            design_params=tuple(args.design_param) if args.design_param else None,
            algorithm=args.algorithm,
            pop_size=args.pop,
            generations=args.generations,
            seed=args.seed,
            brute_force=not args.no_brute_force,
            progress=update,
            runner=runner,
            checkpoint=ckpt,
            resume=bool(args.resume),
            uncertainty=_given_once(map(_parse_uncertainty, args.uncertainty or ()), "--uncertainty") or None,
            nodes=tuple(args.node or (45,)),
            reference_seeds=args.reference_seeds,
            store=not args.no_store,
            structure_cells=tuple(args.structure_cell or ("sram-hp",)),
            samples=args.uncertainty_samples,
            percentile=args.percentile,
            arch=args.arch,
        )
    except RfmodelError:
        # refused before the search began (no island's checkpoint since): the folder's run description
        # is what it was, so a run there before can still be resumed
        if not args.resume and not any(p.stat().st_mtime_ns >= written for p in ckpt.glob("*.ckpt")):
            if previous is None:
                run_file.unlink(missing_ok=True)
            else:
                write_bytes(run_file, previous)
        raise
    finally:
        close_bar()
    rows = pareto_table(res.pareto)
    goals = ", ".join(f"{o.sense}imize {o.name}" for o in res.objectives)
    kinds = sorted({r["design"] for r in rows})
    cells = sorted({r["main_cell"] for r in rows if r.get("main_cell")})
    print(
        f"Pareto set: {len(rows)} design points of {len(kinds)} design(s) ({', '.join(kinds)}) and "
        f"{len(cells)} main-RF cell(s) ({', '.join(cells)}); {goals}; workloads: "
        f"{res.pareto.attrs['workloads']}"
    )
    if res.pareto.attrs.get("workloads_left_out"):
        print(f"left out (no point of the search can run them): {res.pareto.attrs['workloads_left_out']}")
    shown = rows
    if len(rows) > PARETO_SHOWN:  # a spread of the front: the rest is in the files
        from rfmodel.optimize.validate import most_different

        f = [[o.sign * r[o.name] for o in res.objectives] for r in rows]
        shown = [rows[i] for i in sorted(most_different(f, PARETO_SHOWN))]
        print(f"{PARETO_SHOWN} of the {len(rows)} points shown, spread over the front (all in pareto.csv):")
    print(_table(_pareto_display(shown, res.objectives)))
    ratio = res.hypervolume_ratio
    ref = res.pareto.attrs.get("hypervolume_brute_force")
    kind = res.pareto.attrs.get("hypervolume_reference", "exhaustive")
    print(
        f"\nhypervolume {res.hypervolume:.4f}"
        + (
            f" = {100 * ratio:.1f}% of the {kind} front's {res.hypervolume_brute_force:.4f}"
            if ratio is not None
            else (f" (exhaustive front {ref})" if isinstance(ref, str) else "")
        )
        + f"; {res.evaluations} evaluations in {res.seconds:.1f} s"
        + (
            f" ({res.computed} modelled, the others from the evaluation store of an earlier run)"
            if res.computed < res.evaluations
            else ""
        )
    )
    out = Path(args.out)
    names = [o.name for o in res.objectives]
    keys = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in names] + names
    csv_text = "\n".join([",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in rows])
    # one set: every file or none (the files of an earlier run into this folder that this one does not
    # write go, so no file of the set is from another front)
    stale = [out / "brute_force_front.nc", out / "validate.csv"]
    stale += [out / f"{n}.svg" for n in ("pareto", "pareto_parallel", "hypervolume")]
    with output_set(folder=out, stale=stale):
        write_text(out / "pareto.csv", csv_text + "\n")
        write_netcdf(res.pareto, out / "pareto.nc")
        if res.brute_force is not None:
            write_netcdf(res.brute_force, out / "brute_force_front.nc")
        obj = res.objectives
        pairs = [(obj[0], o) for o in obj[1:]]
        fig, axes = plt.subplots(1, len(pairs), figsize=(4.2 * len(pairs), 3.8), squeeze=False)
        for ax, (y, x) in zip(axes[0], pairs, strict=True):
            if res.brute_force is not None:
                ax.scatter(
                    res.brute_force[x.name],
                    res.brute_force[y.name],
                    s=12,
                    facecolors="none",
                    edgecolors="0.6",
                    label="exhaustive front",
                )
            for i, d in enumerate(kinds):
                pts = [r for r in rows if r["design"] == d]
                ax.scatter([r[x.name] for r in pts], [r[y.name] for r in pts], s=18, c=f"C{i % 10}", label=d)
            ax.set_xlabel(f"{x.name} ({x.sense})")
            ax.set_ylabel(f"{y.name} ({y.sense})")
        axes[0][0].legend(fontsize=7)
        fig.suptitle(f"Pareto set on {res.pareto.attrs.get('gpu', '')}, by design")
        fig.tight_layout()
        figures = {
            "pareto": fig,
            "pareto_parallel": _parallel_plot(plt, rows, res.objectives, kinds),
            "hypervolume": _hypervolume_plot(plt, res),
        }
        written = [out / "pareto.csv", out / "pareto.nc"]
        for name, f in figures.items():
            for ext in ("png", "svg") if args.svg else ("png",):
                write_figure(f, out / f"{name}.{ext}", dpi=120)
                written.append(out / f"{name}.{ext}")
            plt.close(f)
    print(f"wrote {', '.join(map(str, written))}")
    if args.validate:
        _validate_front(res, args, runner, out)
    return 0


def _parallel_plot(plt, rows, objectives, kinds):
    """The front as parallel coordinates: one line a point over its objectives (each scaled to [0, 1] over
    the front, 1 the better end), coloured by design."""
    import numpy as np

    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(objectives), 3.8))
    cols = []
    for o in objectives:
        v = np.array([r[o.name] for r in rows], dtype=np.float64)
        span = v.max() - v.min()
        z = (v - v.min()) / span if span > 0 else np.full_like(v, 0.5)
        cols.append(1.0 - z if o.sense == "min" else z)
    z = np.stack(cols, axis=1)
    x = np.arange(len(objectives))
    for i, d in enumerate(kinds):
        for j in [j for j, r in enumerate(rows) if r["design"] == d]:
            ax.plot(
                x,
                z[j],
                color=f"C{i % 10}",
                alpha=0.35,
                lw=0.8,
                label=d if j == next(k for k, r in enumerate(rows) if r["design"] == d) else None,
            )
    ax.set_xticks(x, [f"{o.name}\n({o.sense})" for o in objectives])
    ax.set_ylabel("scaled over the front (1: better)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def _hypervolume_plot(plt, res):
    """Hypervolume of the front found so far, generation by generation (the islands side by side)."""
    import numpy as np

    fig, ax = plt.subplots(figsize=(5, 3.4))
    hv = res.hypervolume_by_generation
    ax.plot(np.arange(1, len(hv) + 1), hv, marker=".")
    if res.hypervolume_brute_force:
        ax.axhline(res.hypervolume_brute_force, color="0.5", ls="--", label="exhaustive front")
        ax.legend(fontsize=8)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("generation")
    ax.set_ylabel("hypervolume")
    fig.tight_layout()
    return fig


def _validate_front(res, args, runner, out) -> None:
    """``--validate K``: the K most different Pareto points in both engines (``optimize.validate``)."""
    from rfmodel.io import write_text
    from rfmodel.optimize.validate import VALIDATED, validate

    close_bar, update = _progress(not args.quiet, args.validate, "simulating")
    try:
        rows = validate(res, args.validate, runner=runner, progress=update, arch=args.arch)
    finally:
        close_bar()
    shown = []
    for r in rows:
        d = {"design": r["design"], "main_cell": r.get("main_cell", "")}
        for m in VALIDATED:
            d[f"{m} analytic"] = r[f"analytic_{m}"]
            d[f"{m} simulated"] = r[f"simulated_{m}"]
            d[f"{m} error"] = f"{100 * r[f'error_{m}']:+.1f} %"
        d["IPC effect analytic"] = f"{100 * r['analytic_ipc_effect']:+.1f} %"
        d["IPC effect simulated"] = f"{100 * r['simulated_ipc_effect']:+.1f} %"
        shown.append(d)
    kept = rows[0]["order_kept"] if rows else 1.0
    print(
        f"\nvalidation: the {len(rows)} most different Pareto points in the cycle simulator "
        f"(the default evaluate path of both engines)"
    )
    print(_table(shown))
    print(f"pairs of points the two engines order alike by time_ns: {100 * kept:.0f} %")
    if rows:
        print(
            "ranking agreement (Kendall's tau of the points' order, analytic against simulated): "
            + ", ".join(f"{m} {rows[0][f'kendall_tau_{m}']:+.2f}" for m in VALIDATED)
        )
        err = [abs(r["error_ipc_effect_points"]) for r in rows if math.isfinite(r["error_ipc_effect_points"])]
        if err:
            print(
                f"IPC effect against the baseline at the same SM point: mean |analytic - simulated| "
                f"{sum(err) / len(err):.2f} points, largest {max(err):.2f}"
            )
    keys = list(dict.fromkeys(k for r in rows for k in r))
    write_text(
        out / "validate.csv",
        "\n".join([",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in rows]) + "\n",
    )
    print(f"wrote {out / 'validate.csv'}")


# --------------------------------------------------------------------------- workload
def cmd_workload_list(args) -> int:
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.workload.suite import manifest, rf_demand_table, synthetic_names

    sm = resolve_gpu(args.gpu)
    demand = rf_demand_table(sm, args.arch, args.suite)
    measured = {}
    if args.cls is not None:
        from rfmodel.classes import load_classes, with_class

        keep = set(with_class(list(demand), args.cls))
        demand = {k: v for k, v in demand.items() if k in keep}
        measured = load_classes()["rows"]
    rows = []
    for name in demand:
        meta = manifest()["kernels"][name]
        rows.append(
            {
                "workload": name,
                "suite": meta.get("suite", "builtin"),
                "category": ",".join(
                    measured[name]["classes"] if name in measured else meta.get("category", [])
                ),
                "rf_demand_x": round(demand[name], 2),
                "description": meta.get("description", "") if args.json else meta.get("description", "")[:60],
            }
        )
    if args.suite in ("builtin", "all") and args.cls is None:
        for name in synthetic_names():
            rows.append(
                {
                    "workload": name,
                    "suite": "synthetic",
                    "category": "synthetic",
                    "rf_demand_x": None if args.json else "",
                    "description": "",
                }
            )
    if args.json:  # every row whole, the GPU and registers they are measured on
        print(json.dumps({"gpu": sm.name, "arch": args.arch, "suite": args.suite, "rows": rows}))
        return 0
    print(_table(rows))
    if demand:
        mean = sum(demand.values()) / len(demand)
        print(
            f"\nrf_demand_x: register file needed for maximum TLP / RF per SM on {sm.name} ({args.arch} "
            f"registers); mean {mean:.2f}x, max {max(demand.values()):.2f}x over suite {args.suite}"
        )
    return 0


def cmd_workload_classes(args) -> int:
    """The measured classes of the shipped kernels (rfmodel/classes.py); --update measures the missing."""
    from rfmodel.classes import CLASSES, load_classes, measure, save_classes, stale, thresholds
    from rfmodel.workload.suite import suite_names

    shipped = suite_names("all")
    for n in args.workload or ():  # a misspelt name is unknown, not a kernel still to measure
        if n not in shipped:
            raise UnknownNameError("shipped kernel", n, shipped)
    names = args.workload or suite_names(args.suite)
    doc = load_classes(args.out)
    rows = dict(doc["rows"]) if doc.get("thresholds") == thresholds() else {}
    why = stale(doc)
    if why and not (args.update and args.again):
        print(
            f"warning: {why}; `rfmodel workload classes --update --again` measures every kernel again",
            file=sys.stderr,
        )
    if args.update:
        todo = [n for n in names if args.again or n not in rows]
        t = thresholds()
        for i, n in enumerate(todo):  # kept after each kernel: an interrupted run loses one
            what = (
                f"1x and {t['rf_multiple']}x registers on {t['rf_gpu']}, {t['l1d_kb'][0]} and "
                f"{t['l1d_kb'][1]} KB L1D on {t['l1d_gpu']}"
            )
            print(f"[{i + 1}/{len(todo)}] {n}: simulating {what}", file=sys.stderr, flush=True)
            rows[n] = measure(n)
            save_classes(rows, args.out)
    missing = [n for n in names if n not in rows]
    if missing:
        more = " ..." if len(missing) > 5 else ""
        raise RfmodelError(f"no measured classes for {', '.join(missing[:5])}{more} (--update measures them)")
    keys = ("register_gain", "cache_gain", "narrow_share")
    table = [
        {"workload": n, **{k: rows[n][k] for k in keys}, "classes": ",".join(rows[n]["classes"])}
        for n in names
    ]
    print(_table(table))
    counts = {c: sum(c in rows[n]["classes"] for n in names) for c in CLASSES}
    print("\n" + ", ".join(f"{c}: {k}" for c, k in counts.items()) + f" of {len(names)}")
    if args.docs:
        from rfmodel.classes import update_docs

        changed = update_docs(args.docs, {**doc, "thresholds": thresholds(), "rows": rows})
        print(f"{args.docs}: {'updated' if changed else 'unchanged'}", file=sys.stderr)
    return 0


def cmd_workload_info(args) -> int:
    from rfmodel.workload.info import workload_info

    if args.workload is None:
        if not args.values:
            raise RfmodelError(
                "workload info: name a workload (or give --values for the table of every built-in kernel)"
            )
        return _values_table(args)
    if args.docs:
        raise RfmodelError(
            "workload info: --docs writes the table of every built-in kernel: give no workload"
        )
    from rfmodel.evaluate import check_arch

    check_arch(args.arch, args.workload)
    info = workload_info(args.workload, arch=args.arch, values=args.values)
    if args.json:
        print(json.dumps(info, indent=1, default=str))
    else:
        for k, v in info.items():
            if k == "kernels":  # a listing's kernels: index and mangled name, the demangled name below
                from rfmodel.workload.suite import KERNEL_INDEX

                print(f"{k}:")
                for row in v:
                    print(f"  {KERNEL_INDEX}{row['index']} {row['name']}")
                    if row["demangled"]:
                        print(f"  {'':>{len(str(row['index'])) + 1}} {row['demangled']}")
            elif isinstance(v, dict):
                print(f"{k}:")
                for kk, vv in v.items():
                    print(f"  {kk:>24}: {vv:.4g}" if isinstance(vv, float) else f"  {kk:>24}: {vv}")
            else:
                print(f"{k:>26}: {v:.4g}" if isinstance(v, float) else f"{k:>26}: {v}")
    return 0


def _values_table(args) -> int:
    """``rfmodel workload info --values``: the value statistics of every built-in kernel."""
    from rfmodel.workload.values import values_table, values_table_markdown

    rows = values_table(arch=args.arch)
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
        return 0
    table = values_table_markdown(rows)
    if args.docs:
        _replace_generated(args.docs, "rfmodel.workload.values.values_table_markdown", table)
        print(f"updated {args.docs}")
    else:
        print(table, end="")
    return 0


def _replace_generated(path: str, name: str, text: str) -> None:
    """Put ``text`` between the ``BEGIN GENERATED: name`` and ``END GENERATED`` markers of the file
    ``path`` (written atomically)."""
    from rfmodel.io import atomic_path

    begin, end = f"<!-- BEGIN GENERATED: {name} -->", "<!-- END GENERATED -->"
    try:
        doc = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise RfmodelError(f"{path}: cannot read ({e})") from None
    a = doc.find(begin)
    b = doc.find(end, a + 1) if a >= 0 else -1
    if a < 0 or b < 0:
        raise RfmodelError(f"{path}: no '{begin}' ... '{end}' markers to put the table between")
    with atomic_path(path) as tmp:
        Path(tmp).write_text(doc[: a + len(begin)] + "\n" + text + doc[b:], encoding="utf-8")


def cmd_workload_build_sass(args) -> int:
    from rfmodel.workload.build_sass import build_sass

    paths = build_sass(
        out_dir=args.out,
        archs=tuple(args.arch),
        names=args.name or None,
        progress=lambda s: print(s, file=sys.stderr),
    )
    print(f"wrote {len(paths)} files")
    return 0


def _save_arrays(folder: Path, inputs: dict, outputs: dict) -> None:
    """Every input array as initialized (``in_<name>.npy``) and every array after the run (``<name>.npy``)
    into ``folder``, as one set of files."""
    import io

    import numpy as np

    from rfmodel.io import output_set, write_bytes

    files = {**{f"in_{k}.npy": v for k, v in inputs.items()}, **{f"{k}.npy": v for k, v in outputs.items()}}
    with output_set([folder / f for f in files]):
        for name, a in files.items():
            buf = io.BytesIO()
            np.save(buf, np.asarray(a), allow_pickle=False)
            write_bytes(folder / name, buf.getvalue())
    print(f"wrote {len(files)} arrays to {folder}", file=sys.stderr)


def cmd_workload_execute(args) -> int:
    import time

    from rfmodel.workload.execute.builtin import builtin_recipe
    from rfmodel.workload.execute.recipe import check_outputs, load_recipe, run_recipe
    from rfmodel.workload.suite import kernel_names, load_kernel, split_kernel_choice

    if args.recipe:
        if args.scale != 1.0:
            raise RfmodelError("--scale sizes a shipped kernel's own recipe; a --recipe file gives its sizes")
        recipe = load_recipe(args.recipe)
        named = args.workload in kernel_names() or split_kernel_choice(args.workload)[1]
        ref = args.workload if named else f"{args.workload}:{recipe.kernel}"
    else:
        recipe = builtin_recipe(args.workload, scale=args.scale)
        ref = args.workload
    if args.check and recipe.reference is None:
        raise RfmodelError(
            f"--check: the recipe {args.recipe} declares no expected output ([expect.NAME] "
            "with a file or data, docs/execute.md)"
        )
    from rfmodel.evaluate import check_arch
    from rfmodel.workload.suite import check_recipe_kernel

    check_arch(args.arch, ref)
    kernel = load_kernel(ref, arch=args.arch)
    if args.recipe:
        check_recipe_kernel(recipe, ref, kernel, args.arch, f"workload execute {args.workload}")
    if args.save_outputs:
        from rfmodel.io import check_writable

        check_writable(args.save_outputs)
    t = time.perf_counter()
    res, ins = run_recipe(kernel, recipe)
    seconds = time.perf_counter() - t
    if args.save_outputs:  # written before the check: a mismatch is then there to inspect
        _save_arrays(Path(args.save_outputs), ins, res.arrays)
    out = {
        "kernel": kernel.name,
        "arch": kernel.arch,
        "ctas": res.ctas,
        "warp_instructions": res.warp_instructions,
        "seconds": round(seconds, 3),
    }
    if recipe.reference is not None:
        out["max_error"] = check_outputs(recipe, res, ins)  # a mismatch is one error (exit 2)
        out["matches_reference"] = True
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k:>18}: {v}")
    return 0


# --------------------------------------------------------------------------- simulate
#: the banks' read and write time in cycles (their memory cell's, at the SM clock) and the main-RF network's
#: extra cycles, shown where a design has them
TIMING_COLUMNS = ("main_rf_read_cycles", "main_rf_write_cycles", "main_rf_network_cycles")
SIM_TABLE = (
    "ipc",
    "cycles",
    "warps",
    "warp_instructions",
    "rf_reads",
    "rf_writes",
    "bank_conflicts",
    "bank_conflict_stall_cycles",
    "collector_occupancy",
    "l1d_hit_rate",
    "energy_pj_total",
    "power_mw",
)


def _lazy_bar(enabled: bool, desc: str):
    """A tqdm bar on stderr that appears once a run has taken a second, and its update callback."""
    state = {"bar": None}

    def update(done, total):
        if not enabled:
            return
        if state["bar"] is None:
            from tqdm import tqdm

            state["bar"] = tqdm(
                total=total,
                desc=desc,
                file=sys.stderr,
                leave=False,
                dynamic_ncols=True,
                delay=1.0,
                unit="instr",
                unit_scale=True,
                disable=None,
            )
        bar = state["bar"]
        bar.total = total
        bar.update(done - bar.n)

    def close():
        if state["bar"] is not None:
            state["bar"].close()

    return update, close


def cmd_simulate(args) -> int:
    from rfmodel.evaluate import evaluate, result_table
    from rfmodel.io import write_netcdf, write_text

    params = _preset_params(args.design, args.preset)
    params.update(_given_once(map(_parse_param, args.param or []), "--param"))
    update, close = _lazy_bar(not args.quiet, "simulate")
    try:
        ds = evaluate(
            args.design,
            recipe_workload(args.workload, args.recipe),
            args.gpu,
            method="simulate",
            params=params or None,
            seed=args.seed,
            arch=args.arch,
            max_warps="auto" if args.max_warps is None else args.max_warps,
            sim_options={"compat": args.compat},
            progress=update,
        )
    finally:
        close()
    cols = [*SIM_TABLE, *(m for m in TIMING_COLUMNS if m in ds)]
    df = ds[cols].to_dataframe().reset_index()
    st = ds["stall_cycles"]
    share = (st / st.sum("stall_reason")).to_dataframe(name="fraction").reset_index()
    if args.json:
        print(
            json.dumps(
                {
                    "attrs": {k: str(v) for k, v in ds.attrs.items()},
                    "rows": json.loads(df.to_json(orient="records")),
                    "stalls": json.loads(share.to_json(orient="records")),
                }
            )
        )
    else:
        print(_table(df.to_dict(orient="records")))
        wide = share.pivot_table(
            index=[c for c in share.columns if c not in ("stall_reason", "fraction")],
            columns="stall_reason",
            values="fraction",
            sort=False,
        ).reset_index()
        print("\nstall reasons (fraction of scheduler-cycles without an issue):")
        print(_table(wide.to_dict(orient="records"), floatfmt=".3f"))
        print(f"\nengine=simulate design={ds.attrs['design']} gpu={ds.attrs['gpu']} compat={args.compat}")
    _note_classed_by_name(ds)
    if args.out:
        out = Path(args.out)
        if out.suffix.lower() == ".csv":
            write_text(out, result_table(ds).to_csv(index=False))
        else:
            write_netcdf(ds, out)
        print(f"wrote {out}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- bench
def run_calibration(args, **kw) -> dict:
    """:func:`rfmodel.calibrate.report.run` with the options ``rfmodel calibrate`` and ``calib/run.py``
    share (``args``: theirs, parsed); ``kw``: its other arguments."""
    from rfmodel.calibrate.report import run

    return run(
        args.sweep,
        checkpoint_dir=args.checkpoints,
        out=args.out,
        report=args.report,
        validation_doc=args.validation_doc,
        workers=args.workers,
        designs=args.design,
        coverage_samples=args.coverage_samples,
        adopt=args.adopt,
        adopt_verify=args.adopt_verify,
        **kw,
    )


def cmd_calibrate(args) -> int:
    from rfmodel.runner import make_runner

    written = [x for x in (args.out, args.report, args.validation_doc) if x]
    same = [x for x in written if sum(Path(y).resolve() == Path(x).resolve() for y in written) > 1]
    if same:  # the later write would replace the earlier: a calibration file holding the report
        raise RfmodelError(
            f"{same[0]}: given for two of --out, --report and --validation-doc; name each its own"
        )
    res = run_calibration(args, runner=make_runner(args.workers, args.scheduler), progress=not args.quiet)
    if res.get("incomplete"):
        print(f"calibrate: {res['simulations']} of {res['jobs']} simulations done", file=sys.stderr)
        return 1
    summary = {
        d: {
            **{
                k: r.get(k)
                for k in (
                    "n_heldout",
                    "ipc_mape",
                    "hit_rate_mae",
                    "rf_cache_hit_rate_mae",
                    "wb_hit_rate_mae",
                    "coalesced_share_mae",
                    "bank_stall_rel_err",
                    "rf_access_rel_err",
                )
            },
            **{k: r.get("effects", {}).get(k) for k in ("ipc_effect_mae", "ipc_sign_agreement")},
        }
        for d, r in res["designs"].items()
    }
    from rfmodel.analytic.calibration import NOT_FITTED

    for d, r in res["designs"].items():  # fewer training records than free coefficients: not identified
        free = [k for k in r.get("coefficients", {}) if k not in NOT_FITTED]
        if r.get("n_train") is not None and r["n_train"] < len(free):
            print(
                f"calibrate: {d} has {r['n_train']} training records for {len(free)} free coefficients: "
                "they are not identified by the data (more workloads or points in the sweep)",
                file=sys.stderr,
            )
    failed = res.get("failed") or []
    if failed:  # the fit ran on the rest: say so where it is seen, not only in the report
        f = failed[0]
        print(
            f"calibrate: {len(failed)} of {res['jobs']} simulations failed and were left out of the fit "
            f"(first: {f['design']} on {f['workload']}, {f['gpu']}, {f['params']}: {f['error']}); the report "
            "lists them ('failed')",
            file=sys.stderr,
        )
    out = {
        "simulations": res["simulations"],
        "simulated_now": res["simulated_now"],
        "failed": len(failed),
        "file": res.get("file"),
        "designs": summary,
        "ranking": res.get("ranking"),
    }
    print(json.dumps(out, indent=None if args.json else 2))
    return 0


def cmd_sensitivity(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from rfmodel.io import output_set, write_figure, write_netcdf, write_text
    from rfmodel.optimize.sensitivity import global_sensitivity

    ds = global_sensitivity(
        args.design,
        args.workload or None,
        args.gpu,
        metric=args.metric,
        variables=args.var,
        method=args.method,
        samples=args.samples,
        seed=args.seed,
        cells=args.cell,
        arch=args.arch,
    )
    df = ds.to_dataframe().reset_index()
    print(
        f"{args.method} indices of {args.metric} ({ds.attrs['metric_description']}) for {args.design} on "
        f"{ds.attrs['gpu']}: {ds.attrs['points']} analytic design points"
    )
    print(_table(df.to_dict("records")))
    out = Path(args.out)
    with output_set(folder=out):  # the three files or none
        write_text(out / "sensitivity.csv", df.to_csv(index=False))
        write_netcdf(ds, out / "sensitivity.nc")
        keys = ("S1", "ST") if args.method == "sobol" else ("mu_star",)
        fig, ax = plt.subplots(figsize=(1.2 + 0.7 * ds.sizes["variable"], 3.6))
        x = np.arange(ds.sizes["variable"])
        width = 0.8 / len(keys)
        for i, k in enumerate(keys):
            ax.bar(x + i * width, ds[k].values, width, yerr=ds[f"{k}_conf"].values, capsize=3, label=k)
        ax.set_xticks(x + width * (len(keys) - 1) / 2, ds["variable"].values, rotation=30, ha="right")
        ax.set_ylabel(f"{args.method} index of {args.metric}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        write_figure(fig, out / "sensitivity.png", dpi=120)
        plt.close(fig)
    print(f"wrote {out / 'sensitivity.csv'}, {out / 'sensitivity.nc'}, {out / 'sensitivity.png'}")
    return 0


def _bench_argv(args) -> list[str]:
    """``rfmodel bench``'s arguments as given, for another revision's bench (those left at their defaults
    are left out, so that a revision that predates an option still runs)."""
    argv = ["--workload", args.workload, "--gpu", args.gpu, "--repeat", str(args.repeat)]
    for d in args.design or []:
        argv += ["--design", d]
    for p in args.part or []:
        argv += ["--part", p]
    if args.execute_scale != 2.0:
        argv += ["--execute-scale", repr(args.execute_scale)]
    if args.execute_suite != "builtin":
        argv += ["--execute-suite", args.execute_suite]
    return argv


def cmd_bench(args) -> int:
    from rfmodel.bench import bench, bench_revision, compare

    if not args.execute_scale > 0:
        raise RfmodelError(f"--execute-scale: expected a problem size above 0, got {args.execute_scale}")
    before = res = None
    if args.compare is not None:
        path = Path(args.compare)
        if path.is_file():
            try:
                before = json.loads(path.read_text())
            except (OSError, ValueError) as e:
                raise RfmodelError(f"--compare {args.compare}: not a bench JSON file ({e})") from None
            if not isinstance(before, dict):
                raise RfmodelError(f"--compare {args.compare}: not a bench JSON file (not an object)")
        else:
            before, res = bench_revision(
                args.compare,
                _bench_argv(args),
                rounds=args.rounds,
                progress=lambda m: print(m, file=sys.stderr, flush=True),
            )
    if args.rounds > 1 and (before is None or res is None):
        raise RfmodelError("--rounds: needs --compare REV (a git revision; a bench JSON file is one run)")
    if res is None:
        res = bench(
            workload=args.workload,
            gpu=args.gpu,
            repeat=args.repeat,
            designs=args.design or None,
            execute_scale=args.execute_scale,
            execute_suite=args.execute_suite,
            parts=args.part,
        )
    rows = None if before is None else compare(before, res)
    if args.json:
        print(json.dumps(res if before is None else {"before": before, "after": res, "comparison": rows}))
        return 0
    ctx = res["context"]
    print(
        f"rfmodel {ctx['version']} (revision {ctx['revision'] or 'unknown'}), Python {ctx['python']}, "
        f"{ctx['cpus']} CPUs; load average {ctx['load_average_before'][0]:.2f} before, "
        f"{ctx['load_average_after'][0]:.2f} after (CPU time is the figure to compare)\n"
    )
    if "simulate" in res:
        table = [
            {
                "design": d,
                "warp_instr_per_cpu_s": v["warp_instr_per_cpu_s"],
                "warp_instr_per_s": v["warp_instr_per_s"],
                "workload": v["workload"],
                "instructions": v["instructions"],
                "gpu": v["gpu"],
                "warps": v["resident_warps"],
                "cpu_seconds": v["cpu_seconds"],
                "seconds": v["best_seconds"],
            }
            for d, v in res["simulate"].items()
        ]
        print(_table(table) + "\n")
    if "analytic" in res:
        a = res["analytic"]
        print(
            f"analytic: {a['points_per_cpu_s']:,.0f} points per CPU-s ({a['points_per_s']:,.0f} per s; "
            f"{a['design']} on {a['workload']}, a {a['points']:,}-point grid); through evaluate "
            f"{a['evaluate_points_per_cpu_s']:,.0f} per CPU-s"
            + (
                f"; {a['speedup_vs_simulate_cpu']:,.0f}x a simulation"
                if "speedup_vs_simulate_cpu" in a
                else ""
            )
        )
        for e in a.get("evaluate_sizes", []):
            print(
                f"  evaluate over {e['workloads']} workloads at {e['points']:,} points each: "
                f"{e['points_per_cpu_s']:,.0f} points per CPU-s ({e['cpu_seconds']:.2f} CPU-s)"
            )
    if "optimize" in res:
        o = res["optimize"]
        print(
            f"optimize: {o['evaluations_per_cpu_s']:.0f} evaluations per CPU-s ({o['design']}, "
            f"{o['workloads']} workloads each; 10,000 evaluations in "
            f"{o['cpu_seconds_per_10000']:.0f} CPU-s, {o['seconds_per_10000']:.0f} s)"
        )
    if "execute" in res:
        x = res["execute"]
        slow = x["slowest"]
        print(
            f"execute: {x['warp_instr_per_cpu_s']:,} warp-instructions per CPU-s ({x['kernels']} "
            f"kernels on {x['arch']}; slowest {slow['kernel']} "
            f"{slow['warp_instr_per_s']:,}/s)"
        )
    if "profile" in res:
        p = res["profile"]
        print(
            f"a new SASS listing ({p['design']} on {p['gpu']}), first analytic answer / one simulation, "
            f"CPU-s: "
            + "; ".join(
                f"{k} {v['analytic_cpu_seconds']:.2f} / {v['simulate_cpu_seconds']:.2f}"
                f" ({v['sched_cells_built']} of {v['sched_cells']} schedule cells)"
                for k, v in p["kernels"].items()
            )
        )
    if "cold" in res:
        print(
            "from empty caches (a new installation), CPU-s (wall s): "
            + "; ".join(f"{k} {v['cpu_seconds']:.1f} ({v['seconds']:.1f})" for k, v in res["cold"].items())
        )
    if rows is not None:
        other = (before.get("context") or {}).get("revision") or args.compare
        print(f"\nagainst {other} (change = this / that - 1; CPU-time figures are the ones to read):")
        shown = [
            {
                "figure": r["figure"],
                "before": r["before"],
                "after": r["after"],
                "change": "" if r["change"] is None else f"{r['change']:+.1%}",
                "": {True: "better", False: "worse", None: ""}[r["better"]] if not r["note"] else r["note"],
            }
            for r in rows
        ]
        print(_table(shown) if shown else "(no figure in common)")
    return 0


def cmd_tolerance(args) -> int:
    from rfmodel.tolerance import max_tolerable_latency

    params = {}
    for k, v in _given_once(map(_parse_param, args.param or []), "--param").items():
        if len(v) != 1:
            raise RfmodelError(f"--param {k}: give one value (the latency is what is searched)")
        params[k] = v[0]
    res = max_tolerable_latency(
        args.design,
        args.workload,
        args.gpu,
        params=params or None,
        method=args.method,
        tol=args.tol,
        hi=args.hi,
        resolution=args.resolution,
        max_warps=args.max_warps,
        seed=args.seed,
        reference=args.reference,
    )
    if args.json:
        print(json.dumps(res))
    else:
        lx = res["latency_x"]
        limit = " (the search limit; may be higher)" if res["hi_reached"] else ""
        what = "not even 1x" if lx is None else f"{lx:g}x{limit}"
        print(
            f"{res['design']} on {res['workload']} ({res['gpu']}, {res['method']}): "
            f"main RF latency tolerated "
            f"within {100 * res['tol']:g}% of {res['reference']}'s IPC {res['reference_ipc']:.4f}: {what}; "
            f"IPC there {res['ipc_at_latency']:.4f}; {res['evaluations']} evaluations"
        )
    return 0


def cmd_workload_export_accelsim(args) -> int:
    from rfmodel.evaluate import check_arch
    from rfmodel.workload.export_accelsim import export_accelsim

    check_arch(args.arch, args.workload)
    info = export_accelsim(
        args.workload,
        args.outdir,
        arch=args.arch,
        num_sms=args.num_sms,
        max_warps=args.max_warps,
        seed=args.seed,
    )
    print(
        f"wrote {info['kernelslist']} and {info['traceg']}: {info['ctas']} CTAs, {info['warps']} warps, "
        f"{info['instructions']} instructions"
    )
    if info["lost_predicates"]:
        print(
            f"note: {info['lost_predicates']} instructions have predicate/uniform operands, which the "
            "Accel-Sim format does not carry",
            file=sys.stderr,
        )
    if info["dropped_destinations"] or info["dropped_sources"]:
        print(
            f"note: {info['dropped_destinations']} destination and {info['dropped_sources']} source "
            "registers beyond Accel-Sim's 1 destination / 4 sources per instruction were left out (the "
            "first ones kept)",
            file=sys.stderr,
        )
    return 0


# --------------------------------------------------------------------------- spec
def cmd_spec_list(args) -> int:
    from rfmodel.spec import PRESETS

    rows = [
        {
            "preset": k,
            "warps": v.warps_per_sm,
            "regs": v.regs_per_sm,
            "banks": v.num_banks,
            "schedulers": v.schedulers_per_sm,
            "collectors": v.collectors.total,
            "clock_mhz": v.clock_mhz,
        }
        for k, v in PRESETS.items()
    ]
    print(_table(rows))
    return 0


def cmd_spec_show(args) -> int:
    from rfmodel.evaluate import resolve_gpu
    from rfmodel.spec.toml_io import dumps_spec

    print(dumps_spec(resolve_gpu(args.gpu)), end="")
    return 0


# --------------------------------------------------------------------------- parser
class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one-line errors: ``rfmodel: error: ...`` and exit status 2 (sub-commands
    inherit it)."""

    def error(self, message):
        self.exit(2, error_line(f"{message} (see '{self.prog} --help')") + "\n")


def _add_evaluate_parser(sub) -> None:
    """``rfmodel evaluate``."""
    e = sub.add_parser("evaluate", help="evaluate a design on workloads (analytic model or cycle simulator)")
    e.add_argument(
        "--config",
        metavar="FILE.toml",
        help="evaluation config or SM spec TOML; a config's keys are the options' names (design, "
        "workloads, gpu, method, params, mode, preset, reference, uncertainty, samples, level, seed, arch, "
        "tech, max_warps, compat, calibration, on_no_fit); an option also given here overrides the file's "
        "value; a spec file is the GPU, so --gpu beside it is refused",
    )
    e.add_argument("--gpu", metavar="PRESET|gpgpusim.config|FILE.toml")
    e.add_argument(
        "--design",
        action="append",
        metavar="NAME",
        help="repeatable: several designs are compared at the same points, each with its effect "
        "against the first (or --reference): <metric>_effect = metric / reference's - 1",
    )
    e.add_argument(
        "--reference", metavar="NAME", help="the design the effects are against (default: the first)"
    )
    e.add_argument(
        "--workload", action="append", metavar="NAME|PATH", help="repeatable; default: the built-in suite"
    )
    e.add_argument("--recipe", metavar="FILE.toml", help=RECIPE_HELP)
    e.add_argument(
        "--param",
        action="append",
        metavar="NAME=V1,V2",
        help="sweep a parameter (repeatable; product of all, or see --mode)",
    )
    e.add_argument(
        "--mode",
        choices=("product", "points"),
        help="how the --param lists combine: product (every combination; default) or points (the i-th "
        "value of each list together; lists of one length)",
    )
    e.add_argument("--preset", metavar="NAME", help="a named configuration of the design (docs/designs.md)")
    e.add_argument("--method", choices=("analytic", "simulate", "montecarlo"))
    e.add_argument(
        "--uncertainty",
        action="append",
        metavar="NAME=DIST:WIDTH",
        help="montecarlo: an uncertain parameter (repeatable), e.g. mem_fraction=normal:0.1, "
        "model_error=calibrated",
    )
    e.add_argument("--samples", type=_int(2, L.MAX_SAMPLES), help="montecarlo samples (default 200)")
    e.add_argument(
        "--level",
        type=_num(0, 1, above=True, below=True),
        help="montecarlo: probability of the interval <metric>_lo .. "
        "<metric>_hi (default 0.95: the 2.5 %% and 97.5 %% quantiles)",
    )
    e.add_argument("--arch", default=None, help=ARCH_HELP)
    e.add_argument("--seed", type=_int(0, L.MAX_SEED), help="random seed (default 0)")
    e.add_argument(
        "--max-warps",
        type=_warps,
        metavar="N|auto",
        help="the warps (whole CTAs) of each workload's SM share that are profiled or simulated; auto "
        "(default): the analytic engine's profile sample, the whole share in the simulator",
    )
    e.add_argument(
        "--compat",
        choices=COMPAT_CHOICES,
        help="--method simulate: the pipeline modelled (gpgpusim: GPGPU-Sim's; default none)",
    )
    e.add_argument(
        "--calibration",
        metavar="FILE.json",
        help="the analytic engine's calibration file (default the package's; rfmodel calibrate --out "
        "writes one)",
    )
    e.add_argument(
        "--on-no-fit",
        choices=("error", "nan"),
        help="a workload no point can host (not one CTA fits): an error (default with --workload) or "
        "a row with 0 warps at such points",
    )
    e.add_argument(
        "--out",
        type=_result_file,
        metavar="FILE.nc|FILE.csv",
        help="write the result: NetCDF or CSV by the ending",
    )
    e.add_argument("--json", action="store_true", help="print one JSON object")
    e.set_defaults(func=cmd_evaluate)


def _add_optimize_parser(sub) -> None:
    """``rfmodel optimize``."""
    o = sub.add_parser("optimize", help="NSGA-III over designs and RF cells: capacity, area, power, time")
    o.add_argument(
        "--design",
        action="append",
        metavar="NAME",
        help="repeatable; default: every registered design with an analytic model",
    )
    o.add_argument("--workload", action="append", metavar="NAME|PATH")
    o.add_argument("--recipe", metavar="FILE.toml", help=RECIPE_HELP)
    o.add_argument("--gpu", metavar="PRESET|gpgpusim.config|FILE.toml")
    o.add_argument(
        "--objective",
        action="append",
        metavar="METRIC:min|max",
        help="repeatable; default capacity_kb:max area_mm2:min power_mw:min time_ns:min",
    )
    o.add_argument(
        "--constraint",
        action="append",
        metavar="METRIC<=X|METRIC>=X[*baseline]",
        help="repeatable, e.g. area_mm2<=1.5 or ipc>=0.95*baseline",
    )
    o.add_argument(
        "--cell",
        action="append",
        metavar="CELL",
        help="main-RF cells to search (repeatable; default: every cell with timing and costs)",
    )
    o.add_argument(
        "--node",
        action="append",
        type=_num(0, L.MAX_NODE_NM, above=True),
        metavar="NM",
        help="technology nodes to search (repeatable; default 45)",
    )
    o.add_argument(
        "--structure-cell",
        action="append",
        metavar="CELL",
        help="cells of the structures other than the main RF's banks (collectors, caches, "
        "buffers; repeatable; default sram-hp)",
    )
    o.add_argument("--algorithm", choices=("nsga3", "nsga2"), default="nsga3")
    o.add_argument(
        "--pop",
        "--pop-size",
        dest="pop",
        type=_int(4, L.MAX_POP),
        default=40,
        help="population size per design (default 40; Python: pop_size)",
    )
    o.add_argument(
        "--generations",
        type=_int(1, L.MAX_GENERATIONS),
        default=30,
        help="generations per design (default 30)",
    )
    o.add_argument(
        "--seed", type=_int(0, L.MAX_SEED - L.MAX_REFERENCE_SEEDS), default=0, help="random seed (default 0)"
    )
    o.add_argument("--arch", default="sm_80", help=ARCH_HELP)
    o.add_argument("--no-brute-force", action="store_true", help="skip the exhaustive reference front")
    o.add_argument(
        "--no-store",
        action="store_true",
        help="model every point: neither read nor extend the evaluation store of earlier runs",
    )
    o.add_argument(
        "--reference-seeds",
        type=_int(0, L.MAX_REFERENCE_SEEDS),
        default=0,
        metavar="K",
        help="where the space is too large to enumerate: the reference front is the best of this "
        "run and K more seeds (K times the work)",
    )
    o.add_argument(
        "--design-param",
        action="append",
        metavar="NAME",
        help="search these design parameters (repeatable; in every design that has them) over the "
        "ranges their specs declare instead of the default set",
    )
    o.add_argument(
        "--out",
        default=str(Path(DEFAULT_OUT) / "optimize"),
        metavar="DIR",
        help=f"output folder (default {DEFAULT_OUT}/optimize)",
    )
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    o.add_argument("--svg", action="store_true", help="also write the plots as SVG")
    o.add_argument(
        "--uncertainty",
        action="append",
        metavar="NAME=DIST:WIDTH",
        help="a robust front: Monte-Carlo over these model parameters (as evaluate's), each "
        "objective at its pessimistic end (--percentile); repeatable",
    )
    o.add_argument(
        "--uncertainty-samples",
        type=_int(2, L.MAX_ROBUST_SAMPLES),
        metavar="N",
        help="Monte-Carlo draws per point with --uncertainty (default 32; refused without it)",
    )
    o.add_argument(
        "--percentile",
        type=_num(50, 100, above=True, below=True),
        metavar="P",
        help="with --uncertainty: each minimized objective at its P-th percentile, each maximized "
        "one at its (100-P)-th (50 < P < 100; default 97.5; refused without --uncertainty)",
    )
    o.add_argument(
        "--validate",
        type=_int(1, L.MAX_VALIDATE),
        metavar="K",
        help="simulate the K most different Pareto points; compare with the analytic figures",
    )
    o.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the run whose output folder is DIR (its checkpoints and arguments)",
    )
    o.add_argument(
        "--workers",
        type=_int(1, L.MAX_WORKERS),
        metavar="N",
        help="run the designs' searches in N local processes (default: one per core; 1: serially)",
    )
    o.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run the designs' searches on this Dask cluster (needs rfmodel[dask])",
    )
    o.set_defaults(func=cmd_optimize)


def _add_sensitivity_parser(sub) -> None:
    """``rfmodel sensitivity``."""
    g = sub.add_parser("sensitivity", help="Sobol or Morris indices of a metric over a design's space")
    g.add_argument("--design", default="baseline")
    g.add_argument("--workload", action="append", metavar="NAME|PATH")
    g.add_argument("--gpu", metavar="PRESET|gpgpusim.config|FILE.toml")
    g.add_argument(
        "--metric",
        default="time_ns",
        help="time_ns, ipc, capacity_kb, area_mm2, power_mw, energy_pj, or any variable of "
        "evaluate's result (default time_ns)",
    )
    g.add_argument(
        "--variable",
        "--var",
        dest="var",
        action="append",
        metavar="NAME",
        help="only these variables (repeatable)",
    )
    g.add_argument("--cell", action="append", metavar="CELL", help="main-RF cells (repeatable; default: all)")
    g.add_argument("--method", choices=("sobol", "morris"), default="sobol")
    g.add_argument(
        "--samples",
        type=_int(2, L.MAX_SENSITIVITY_SAMPLES),
        default=256,
        help="SALib's N (Sobol: a power of two, N (D + 2) points; Morris: N trajectories)",
    )
    g.add_argument("--seed", type=_int(0, L.MAX_SEED), default=0, help="random seed (default 0)")
    g.add_argument("--arch", default="sm_80", help=ARCH_HELP)
    g.add_argument("--out", default=str(Path(DEFAULT_OUT) / "sensitivity"), metavar="DIR")
    g.set_defaults(func=cmd_sensitivity)


def _add_simulate_parser(sub) -> None:
    """``rfmodel simulate``."""
    m = sub.add_parser("simulate", help="run the reference cycle simulator on workloads")
    m.add_argument(
        "--workload", action="append", metavar="NAME|PATH", help="repeatable; default: the built-in suite"
    )
    m.add_argument("--recipe", metavar="FILE.toml", help=RECIPE_HELP)
    m.add_argument("--design", default="baseline")
    m.add_argument("--gpu", metavar="PRESET|gpgpusim.config|FILE.toml")
    m.add_argument("--param", action="append", metavar="NAME=V1,V2", help="sweep a parameter (repeatable)")
    m.add_argument("--preset", metavar="NAME", help="a named configuration of the design (docs/designs.md)")
    m.add_argument(
        "--compat",
        choices=COMPAT_CHOICES,
        default="none",
        help="gpgpusim: GPGPU-Sim's register-file and collector semantics",
    )
    m.add_argument(
        "--max-warps",
        type=_int(1, L.MAX_WARPS),
        default=None,
        help="simulate only this many warps (whole CTAs)",
    )
    m.add_argument("--arch", default="sm_80", help=ARCH_HELP)
    m.add_argument("--seed", type=_int(0, L.MAX_SEED), default=0, help="random seed (default 0)")
    m.add_argument(
        "--out",
        type=_result_file,
        metavar="FILE.nc|FILE.csv",
        help="write the result: NetCDF or CSV by the ending",
    )
    m.add_argument("--json", action="store_true", help="print one JSON object")
    m.add_argument("--quiet", action="store_true", help="no progress bar")
    m.set_defaults(func=cmd_simulate)


def _add_calibrate_parser(sub) -> None:
    """``rfmodel calibrate``."""
    c = sub.add_parser("calibrate", help="fit the analytic models to simulator sweeps (resumable)")
    c.add_argument("--sweep", default="default", help="default | quick | a sweep JSON file")
    c.add_argument(
        "--workers", type=_int(1, L.MAX_WORKERS), default=2, help="simulation worker processes (default 2)"
    )
    c.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run the simulations and fits on this Dask cluster (needs rfmodel[dask])",
    )
    c.add_argument("--design", action="append", help="only these designs (default: every calibratable one)")
    c.add_argument(
        "--checkpoints",
        default=str(Path(DEFAULT_OUT) / "calibration" / "checkpoints"),
        help="folder of the finished simulations' log (results.jsonl): a rerun simulates the rest",
    )
    c.add_argument(
        "--out",
        default=str(Path(DEFAULT_OUT) / "calibration" / "analytic.json"),
        help="calibration file to write (use it with evaluate(calibration=...), rfmodel evaluate "
        "--calibration or --config's calibration; the package's own file changes only through calib/run.py)",
    )
    c.add_argument("--report", default=str(Path(DEFAULT_OUT) / "calibration" / "report.json"))
    c.add_argument("--validation-doc", default=None, help="regenerate this file's validation section")
    c.add_argument(
        "--coverage-samples",
        type=_int(0, L.MAX_COVERAGE_SAMPLES),
        default=40,
        help="Monte-Carlo samples of the coverage check (default 40; 0: no check)",
    )
    c.add_argument(
        "--adopt",
        metavar="DIR",
        help="reuse the simulations of another checkpoint folder (made by sources since edited) "
        "after simulating --adopt-verify of each design's again: all equal, or nothing is adopted",
    )
    c.add_argument(
        "--adopt-verify",
        type=_int(1, 1000),
        default=1,
        metavar="N",
        help="records per design simulated again before --adopt reuses a log (default 1)",
    )
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.add_argument("--json", action="store_true", help="one-line JSON summary")
    c.set_defaults(func=cmd_calibrate)


def _add_bench_parser(sub) -> None:
    """``rfmodel bench``."""
    b = sub.add_parser("bench", help="speed figures of the engines (JSON with --json)")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--workload", default="crc32_murmur3")
    b.add_argument("--gpu", default="fermi-gtx480")
    b.add_argument("--design", action="append", help="only these designs (default: every registered one)")
    b.add_argument(
        "--repeat",
        type=_int(1, L.MAX_BENCH_REPEAT),
        default=3,
        help="timed runs per design; the fastest counts (default 3)",
    )
    b.add_argument(
        "--execute-scale",
        type=_num(0, L.MAX_BENCH_EXECUTE_SCALE, above=True),
        default=2.0,
        help="problem size of the executor's recipes (default 2, the figures in docs/execute.md)",
    )
    b.add_argument(
        "--execute-suite",
        choices=("builtin", "papers", "all"),
        default="builtin",
        help="whose recipes the execute part runs (default: the built-in suite)",
    )
    b.add_argument(
        "--part",
        action="append",
        help="only this part: simulate, analytic, optimize, execute or profile (repeatable; default: all "
        "these), or cold: a new installation's first analytic answers, first simulation and default "
        "optimize, each in a new process from empty caches (minutes; only when named)",
    )
    b.add_argument(
        "--compare",
        metavar="REV|FILE",
        help="also show another run side by side: a JSON file of `rfmodel bench --json`, or a "
        "git revision of this source tree, whose bench then runs first, in this invocation, "
        "from a temporary worktree (this tree's then runs in a child process too)",
    )
    b.add_argument(
        "--rounds",
        type=_int(1, L.MAX_BENCH_ROUNDS),
        default=1,
        metavar="N",
        help="with --compare REV: run the two trees alternately N times, each figure the best of its N "
        "runs (default 1)",
    )
    b.set_defaults(func=cmd_bench)


def _add_tolerance_parser(sub) -> None:
    """``rfmodel tolerance``."""
    t = sub.add_parser("tolerance", help="largest main-RF latency multiple a design tolerates (bisection)")
    t.add_argument("--design", required=True)
    t.add_argument("--workload", required=True, metavar="NAME|PATH")
    t.add_argument("--gpu", default="fermi-gtx480", metavar="PRESET|gpgpusim.config|FILE.toml")
    t.add_argument("--method", choices=("simulate", "analytic"), default="simulate")
    t.add_argument(
        "--tol",
        type=_num(0, 1, above=True),
        default=0.05,
        help="allowed IPC loss against the reference at 1x (default 0.05)",
    )
    t.add_argument(
        "--hi", type=_num(1, L.MAX_LATENCY_X), default=16.0, help="largest multiple tried (default 16)"
    )
    t.add_argument(
        "--resolution",
        type=_num(L.MIN_RESOLUTION, L.MAX_LATENCY_X),
        default=0.25,
        help="bisection stops at this interval width (default 0.25)",
    )
    t.add_argument("--reference", default="baseline", help="the design whose IPC at 1x is the target")
    t.add_argument("--param", action="append", metavar="NAME=V", help="a fixed design parameter (repeatable)")
    t.add_argument(
        "--max-warps", type=_int(1, L.MAX_WARPS), default=None, help="only this many warps (whole CTAs)"
    )
    t.add_argument("--seed", type=_int(0, L.MAX_SEED), default=0, help="random seed (default 0)")
    t.add_argument("--json", action="store_true", help="print one JSON object")
    t.set_defaults(func=cmd_tolerance)


def _add_workload_parser(sub) -> None:
    """``rfmodel workload``."""
    w = sub.add_parser("workload", help="inspect and build workloads")
    wsub = w.add_subparsers(dest="wcommand", metavar="SUBCOMMAND")
    wl = wsub.add_parser("list", help="shipped kernels (built-in, papers' benchmarks) and synthetic presets")
    wl.add_argument(
        "--suite",
        choices=["builtin", "papers", "all"],
        default="builtin",
        help="which shipped kernels: the built-in suite (default, with the synthetic presets), "
        "the papers' benchmarks, or all",
    )
    wl.add_argument(
        "--class",
        dest="cls",
        metavar="CLASS",
        help="only the kernels measured to be of this class (register-sensitive, "
        "cache-sensitive, integer-heavy, fp-heavy; rfmodel workload classes)",
    )
    wl.add_argument("--gpu", metavar="PRESET|gpgpusim.config|FILE.toml", help="for the RF demand column")
    wl.add_argument("--arch", default="sm_80", help="whose measured registers (default sm_80)")
    wl.add_argument("--json", action="store_true", help="print one JSON object (the rows whole)")
    wl.set_defaults(func=cmd_workload_list)
    wi = wsub.add_parser(
        "info", help="registers, instructions, blocks, loops, op mix, reuse distances; --values: the values"
    )
    wi.add_argument(
        "workload",
        metavar="NAME|PATH[:KERNEL]",
        nargs="?",
        help="omitted with --values: every built-in kernel. KERNEL picks one kernel of a SASS listing or a "
        "cubin (FILE.sass:KERNEL, FILE.cubin:KERNEL): its "
        "mangled or demangled name, a unique prefix of either, or #N (0-based); a listing of several "
        "without it: the figures of #0 and a list of them all",
    )
    wi.add_argument("--arch", default="sm_80", help=ARCH_HELP)
    wi.add_argument("--json", action="store_true")
    wi.add_argument(
        "--values", action="store_true", help="operand widths, coalescing opportunity, BDI compressibility"
    )
    wi.add_argument(
        "--docs", metavar="FILE.md", help="with --values alone: write the table between the file's markers"
    )
    wi.set_defaults(func=cmd_workload_info)
    wb = wsub.add_parser(
        "build-sass", help="recompile the built-in kernels (needs nvcc and the disassemblers)"
    )
    wb.add_argument("--arch", action="append", default=None, help="repeatable (default: all five)")
    wb.add_argument("--name", action="append", help="only these kernels")
    wb.add_argument("--out", default=None, help="output folder (default: the package's own data)")
    wb.set_defaults(func=cmd_workload_build_sass)
    wx = wsub.add_parser(
        "export-accelsim", help="write a workload as an Accel-Sim trace (kernelslist.g + kernel-1.traceg)"
    )
    wx.add_argument("workload", metavar="NAME|PATH")
    wx.add_argument("outdir", metavar="OUTDIR")
    wx.add_argument("--arch", default="sm_80", help=ARCH_HELP)
    wx.add_argument(
        "--num-sms",
        type=_int(1, L.MAX_NUM_SMS),
        default=1,
        help="expand one SM's share of this many SMs (1: the whole grid)",
    )
    wx.add_argument(
        "--max-warps", type=_int(1, L.MAX_WARPS), default=None, help="keep only this many warps (whole CTAs)"
    )
    wx.add_argument("--seed", type=_int(0, L.MAX_SEED), default=0, help="random seed (default 0)")
    wx.set_defaults(func=cmd_workload_export_accelsim)
    wc = wsub.add_parser(
        "classes",
        help="the shipped kernels' classes, measured in the simulator "
        "(register-, cache-sensitive; integer/fp)",
    )
    wc.add_argument("--suite", choices=["builtin", "papers", "all"], default="all")
    wc.add_argument("--workload", action="append", metavar="NAME", help="only these (repeatable)")
    wc.add_argument("--update", action="store_true", help="measure the kernels not yet measured, keep them")
    wc.add_argument("--again", action="store_true", help="with --update: measure every kernel again")
    wc.add_argument(
        "--docs",
        metavar="FILE.md",
        help="refresh the generated table of the papers' kernels' classes in this Markdown file",
    )
    wc.add_argument(
        "--out",
        metavar="FILE.json",
        help="where the measurements are read and, with --update, "
        "kept (default: the package's rfmodel/data/workload_classes.json)",
    )
    wc.set_defaults(func=cmd_workload_classes)
    we = wsub.add_parser(
        "execute", help="run a kernel's SASS on a launch recipe and check it against its reference"
    )
    we.add_argument(
        "workload",
        metavar="NAME|PATH",
        help="a built-in kernel, or with --recipe a SASS listing's or cubin's kernel (FILE.sass:KERNEL, "
        "FILE.cubin:KERNEL; the recipe's kernel when none is named)",
    )
    we.add_argument(
        "--recipe", default=None, metavar="FILE.toml", help="default: the built-in kernel's recipe"
    )
    we.add_argument("--arch", default="sm_80", help=ARCH_HELP)
    we.add_argument(
        "--scale",
        type=_scale,
        default=1.0,
        help="problem size of a built-in recipe (default 1; 'full': a papers' benchmark at its "
        "original's input)",
    )
    we.add_argument(
        "--save-outputs",
        metavar="DIR",
        help="write every input array as initialized (DIR/in_NAME.npy) and every array after the "
        "run (DIR/NAME.npy)",
    )
    we.add_argument(
        "--check",
        action="store_true",
        help="require the comparison with the recipe's expected outputs ([expect.NAME]; a "
        "shipped kernel's numpy reference is always compared): a recipe without them is "
        "refused",
    )
    we.add_argument("--json", action="store_true")
    we.set_defaults(func=cmd_workload_execute)
    w.set_defaults(func=lambda a: (w.print_help(), 0)[1])


def _add_spec_parser(sub) -> None:
    """``rfmodel spec``."""
    s = sub.add_parser("spec", help="GPU presets and spec files")
    ssub = s.add_subparsers(dest="scommand", metavar="SUBCOMMAND")
    sl = ssub.add_parser("list", help="the GPU presets")
    sl.set_defaults(func=cmd_spec_list)
    ss = ssub.add_parser("show", help="print a preset / config as an SM spec TOML")
    ss.add_argument("gpu", metavar="PRESET|gpgpusim.config|FILE.toml")
    ss.set_defaults(func=cmd_spec_show)
    s.set_defaults(func=lambda a: (s.print_help(), 0)[1])


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="rfmodel", description="Performance, energy and area models of GPU register-file designs."
    )
    from rfmodel.version import __version__

    p.add_argument("--version", action="version", version=f"rfmodel {__version__}")
    p.add_argument(
        "--design-file",
        action="append",
        default=[],
        metavar="PATH.py",
        help="load the designs of a Python file that is not installed (repeatable; before the "
        "command: rfmodel --design-file my.py evaluate --design mine ...; RFMODEL_DESIGNS does "
        "the same for every run and its worker processes)",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    _add_evaluate_parser(sub)
    _add_optimize_parser(sub)
    _add_sensitivity_parser(sub)
    _add_simulate_parser(sub)
    _add_calibrate_parser(sub)
    _add_bench_parser(sub)
    _add_tolerance_parser(sub)
    _add_workload_parser(sub)
    _add_spec_parser(sub)
    from rfmodel.cli_tech import register as register_tech

    register_tech(sub)
    _add_study_parser(sub)
    _state_bounds(p)
    _store_once(p)
    return p


def _add_study_parser(sub) -> None:
    """``rfmodel study NAME [OPTIONS]``: the study's own options are parsed by the study
    (:mod:`rfmodel.studies`, imported only when one runs)."""
    from rfmodel.studies import STUDIES, describe

    listing = "\n".join(f"  {n:<13} {describe(n)}" for n in STUDIES)
    st = sub.add_parser(
        "study",
        help="reproduce a source paper's comparison: report.md, figures, data (resumable)",
        description="Reproduce a source paper's comparison on the simulator: a report folder (--out DIR) "
        "with report.md (what was run, the paper's claims beside ours with verdicts, the tables), PNG "
        "figures, every run as runs.csv and runs.nc, and the run log that an interrupted study resumes "
        "from.",
        epilog=f"studies:\n{listing}\n\n'rfmodel study NAME --help' lists a study's options: "
        "--quick (a small subset of its workloads and warps), --out DIR, --jobs N, --docs and its own.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    st.add_argument("name", metavar="NAME", choices=list(STUDIES), help=f"one of: {', '.join(STUDIES)}")
    st.add_argument("options", nargs=argparse.REMAINDER, metavar="...", help="the study's options")
    st.set_defaults(func=cmd_study)


def cmd_study(args) -> int:
    from rfmodel.studies import main as run_study

    try:
        return run_study(args.name, args.options)
    except SystemExit as e:  # the study's --help
        return e.code if isinstance(e.code, int) else 0


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    """A warning as the CLI prints it: one line, ``warning: ...`` (no source location)."""
    return f"warning: {message}\n"


def _load_design_files(paths) -> None:
    """``--design-file``: load each file now (its errors are the command's, exit 2) and name it in
    ``RFMODEL_DESIGNS``, so that the worker processes of a run load it too."""
    from rfmodel.designs.base import DESIGNS_ENV, load_design_file

    for path in paths:
        load_design_file(path)
    given = [x for x in os.environ.get(DESIGNS_ENV, "").split(os.pathsep) if x]
    os.environ[DESIGNS_ENV] = os.pathsep.join(given + [str(Path(x).expanduser().resolve()) for x in paths])


def _given_dests(argv) -> set[str]:
    """The options the command line ``argv`` gives (their destinations), whatever their values: what a
    parse with no option's default sets."""

    def no_defaults(parser):
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sp in dict.fromkeys(a.choices.values()):
                    no_defaults(sp)
            else:
                a.default = argparse.SUPPRESS

    parser = build_parser()
    no_defaults(parser)
    return set(vars(parser.parse_args(argv)))


def main(argv=None) -> int:
    warnings.formatwarning = _one_line_warning
    parser = build_parser()
    argv = None if argv is None else [str(a) for a in argv]  # paths too, from Python
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # a usage error (exit 2, one line on stderr) or --help (0): returned, as the rest
        return e.code if isinstance(e.code, int) else 2
    args.argv = sys.argv[1:] if argv is None else argv  # what was given, not defaulted (_given_dests)
    if getattr(args, "command", None) is None:
        parser.print_help()
        return 0
    if getattr(args, "arch", None) is None and args.command == "workload" and args.wcommand == "build-sass":
        args.arch = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"]
    try:
        from rfmodel.io import check_writable

        for key in ("out", "outdir"):
            target = getattr(args, key, None)
            if isinstance(target, str | Path) and str(target):
                check_writable(str(target))  # before a long run, not after it
        from rfmodel.designs.base import DESIGNS_ENV, load_design_file

        for path in os.environ.get(DESIGNS_ENV, "").split(os.pathsep):
            if path.strip():  # read now, whatever the run's designs: a broken file is this command's error
                load_design_file(path.strip())
        if args.design_file:
            _load_design_files(args.design_file)
        rc = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers, not at interpreter exit
        return rc
    except BrokenPipeError:
        # the reader went away (``rfmodel ... | head``): stop quietly with the status a shell gives a
        # process that SIGPIPE ended; what is still buffered goes nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except RfmodelError as e:
        print(error_line(e), file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as e:
        print(error_line(f"{e.filename or ''}: {e.strerror}"), file=sys.stderr)
        return 2
    except OSError as e:  # a full disk under a write of no named output (standard output redirected to it)
        import errno

        if e.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO):
            raise
        with contextlib.suppress(OSError):  # what could not be written is dropped, not retried at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        from rfmodel.io import write_failure

        where = e.filename or "standard output"
        print(error_line(f"{where}: cannot write: {write_failure(e)}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rfmodel: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
