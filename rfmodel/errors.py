"""The project's exception types.

Every error a user can cause (a bad file, a bad value, an unknown name) is an
:class:`RfmodelError`.  The CLI prints its message as one line on stderr and
exits with status 2; anything else escaping is a bug.
"""

from __future__ import annotations

import difflib


class RfmodelError(ValueError):
    """Base of every user-facing error."""


class SpecError(RfmodelError):
    """A specification field has a bad value or an unknown name."""

    def __init__(self, where: str, field: str, value: object, allowed: str):
        self.where, self.field, self.value, self.allowed = where, field, value, allowed
        super().__init__(f"{where}: field '{field}' = {value!r} is invalid; allowed: {allowed}")


class ParseError(RfmodelError):
    """A text input (SASS, trace, config, TOML) could not be read."""

    def __init__(self, path: str, line: int | None, message: str):
        self.path, self.line, self.message = path, line, message
        loc = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{loc}: {message}")


class UnknownNameError(RfmodelError):
    """A name (preset, design, workload, cell technology ...) is not known."""

    def __init__(self, kind: str, name: str, known):
        known = sorted(known)
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        self.kind, self.name, self.known = kind, name, known
        super().__init__(f"unknown {kind} '{name}'{hint} (known: {', '.join(known)})")


def unknown_key_message(key: str, known) -> str:
    """Message for an unknown key, with the nearest valid name suggested."""
    close = difflib.get_close_matches(key, sorted(known), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown key '{key}'{hint}"


def expect_int(what: str, value, *, low: int | None = None, high: int | None = None, optional: bool = False):
    """``value`` as an int (numpy integers too; not bool) in ``[low, high]``; None passes when ``optional``.
    Anything else is one :class:`RfmodelError` naming ``what``."""
    import numbers

    if value is None and optional:
        return None
    bad = isinstance(value, bool) or not isinstance(value, numbers.Integral)
    if bad or (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            bound = f" in [{low}, {high}]"
        else:
            bound = ("" if low is None else f" >= {low}") + ("" if high is None else f" <= {high}")
        bound += " or None" if optional else ""
        raise RfmodelError(f"{what}: expected an integer{bound} (got {value!r})")
    return int(value)


def expect_between(what: str, value, low: float, high: float, example: str) -> float:
    """``value`` as a float strictly between ``low`` and ``high`` (bools and NaN refused); anything else is
    one :class:`RfmodelError` naming ``what``, the open interval and an ``example``."""
    try:
        v = float(value) if not isinstance(value, bool) else float("nan")
    except (TypeError, ValueError):
        v = float("nan")
    if not low < v < high:
        raise RfmodelError(
            f"{what}: expected a number strictly between {low:g} and {high:g}, e.g. {example} (got {value!r})"
        )
    return v


def expect_mapping(what: str, value, *, optional: bool = True) -> dict:
    """``value`` as a dict with string keys (None gives ``{}`` when ``optional``)."""
    from collections.abc import Mapping

    if value is None and optional:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise RfmodelError(f"{what}: expected a table of names to values (got {value!r})")
    return dict(value)


def error_line(message) -> str:
    """``rfmodel: error: MESSAGE`` as exactly one line: line breaks become spaces and other control
    characters (which may come from the user's input) their escapes."""
    text = " ".join(str(message).split("\n"))
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return f"rfmodel: error: {text}"
