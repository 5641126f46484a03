"""TOML reading and writing of specs.

Reading uses the standard library's ``tomllib``.  Writing uses the small
writer below, which covers what :meth:`Spec.to_dict` produces: nested tables
of booleans, integers, floats, strings and lists of those (a list of tables is
written as inline tables).  Floats are written with ``repr`` so that reading
the file back gives the identical value.

A spec file looks like::

    version = 1
    kind = "sm"
    name = "fermi-gtx480"
    warps_per_sm = 48
    ...

    [collectors]
    sp = 6
    ...

``version`` and ``kind`` are required; the remaining keys are the spec's
fields (missing ones take their defaults, unknown ones are an error).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rfmodel.errors import ParseError, UnknownNameError

from .base import Spec, spec_kinds

__all__ = ["dumps", "dumps_spec", "load_spec", "loads_spec", "save_spec", "write_text_atomic"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


# ------------------------------------------------------------------ writer
def _key(k: str) -> str:
    if not isinstance(k, str):
        raise TypeError(f"TOML keys must be strings, not {type(k).__name__}")
    return k if _BARE_KEY.fullmatch(k) else _string(k)


def _string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write a {type(v).__name__} to TOML")


def dumps(data: Mapping[str, Any]) -> str:
    """TOML text for a nested mapping (scalars first, then one ``[table]`` per sub-mapping)."""
    lines: list[str] = []
    _emit(lines, (), data)
    return "\n".join(lines).strip("\n") + "\n"


def _emit(lines: list[str], prefix: tuple[str, ...], table: Mapping[str, Any]) -> None:
    subtables = []
    for k, v in table.items():
        if isinstance(v, Mapping):
            subtables.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in subtables:
        path = (*prefix, k)
        lines.append("")
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
        _emit(lines, path, v)


def dumps_spec(spec: Spec) -> str:
    """TOML text for a spec, with its ``version`` and ``kind`` first."""
    if not spec.kind:
        raise TypeError(f"{type(spec).__name__} has no kind and cannot be written as a file on its own")
    head = {"version": spec.version, "kind": spec.kind}
    return dumps({**head, **spec.to_dict()})


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` via a temporary file in the same folder and ``os.replace``
    (:func:`rfmodel.io.write_text`)."""
    from rfmodel.io import write_text

    return write_text(path, text)


def save_spec(spec: Spec, path: str | os.PathLike) -> Path:
    """Write ``spec`` as TOML to ``path`` atomically; returns the path."""
    return write_text_atomic(path, dumps_spec(spec))


# ------------------------------------------------------------------ reader
def _looks_like_text(src: str) -> bool:
    return "\n" in src or "=" in src


def _toml_line(err: tomllib.TOMLDecodeError) -> int | None:
    line = getattr(err, "lineno", None)
    if isinstance(line, int):
        return line
    m = re.search(r"at line (\d+)", str(err))
    return int(m.group(1)) if m else None


def _parse(text: str, label: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = getattr(e, "msg", None) or re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise ParseError(label, _toml_line(e), f"malformed TOML: {msg}") from None
    except RecursionError:
        raise ParseError(label, None, "malformed TOML: nested too deeply to read") from None


def load_spec(src: str | os.PathLike, kind: str | type[Spec] | None = None) -> Spec:
    """Read a spec from a TOML file (a path) or from TOML text.

    A ``str`` holding a newline or ``=`` is taken as TOML text, any other
    ``str`` or path-like as a file name.  ``kind`` (a kind string or a spec
    class) makes a file holding another kind an error.
    """
    if isinstance(src, str) and _looks_like_text(src):
        label, text = "<string>", src
    else:
        label = os.fspath(src)
        try:
            text = Path(label).read_text(encoding="utf-8")
        except OSError as e:
            raise ParseError(label, None, f"cannot read: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise ParseError(label, None, f"not UTF-8 text: {e.reason}") from None
    return loads_spec(text, kind=kind, label=label)


def loads_spec(text: str, kind: str | type[Spec] | None = None, label: str = "<string>") -> Spec:
    """Like :func:`load_spec` for TOML text; ``label`` names it in errors."""
    data = _parse(text, label)
    if "version" not in data:
        raise ParseError(label, None, "missing 'version' (every rfmodel spec file starts with version = N)")
    if "kind" not in data:
        raise ParseError(label, None, "missing 'kind' (the spec kind the file holds, e.g. kind = \"sm\")")
    version, file_kind = data.pop("version"), data.pop("kind")
    kinds = spec_kinds()
    if not isinstance(file_kind, str) or file_kind not in kinds:
        raise ParseError(label, None, str(UnknownNameError("spec kind", str(file_kind), kinds)))
    cls = kinds[file_kind]
    if kind is not None:
        want = kind if isinstance(kind, str) else kind.kind
        if file_kind != want:
            raise ParseError(label, None, f"holds a '{file_kind}' spec, expected '{want}'")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ParseError(label, None, f"'version' must be an integer, got {version!r}")
    if version != cls.version:
        newer = "a newer" if version > cls.version else "an older"
        raise ParseError(
            label,
            None,
            f"'{file_kind}' spec version {version} was written by {newer} rfmodel; "
            f"this one reads version {cls.version}",
        )
    return cls.from_dict(data, where=f"{label}: {file_kind}")
