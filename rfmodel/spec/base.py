"""The generic spec mechanism: frozen, validated, versioned dataclasses.

A *spec* is a frozen dataclass deriving from :class:`Spec` whose fields are
declared with :func:`param`.  Each field carries a one-line doc, a unit and
what it allows (a numeric range, a list of choices, a multiple, a tuple
length).  Construction validates every field and then the class's own
cross-field rules (:meth:`Spec._check`); a bad value raises one
:class:`~rfmodel.errors.SpecError` that names the field, the value and what is
allowed.  Specs are hashable and compare by value.

::

    @dataclass(frozen=True)
    class CacheSpec(Spec, kind="cache"):
        size_bytes: int = param(16384, unit="B", bounds=(0, 1 << 24), doc="capacity")
        ways: int = param(4, bounds=(1, 64), doc="associativity")

        def _check(self):
            if self.size_bytes % self.ways:
                self._fail("size_bytes", self.size_bytes, "a multiple of ways")

Field types are taken from ``param(type=...)`` or else from the default
value: ``bool``, ``int``, ``float``, ``str``, a nested :class:`Spec`, or a
``tuple`` of those (lists given by a user become tuples).  ``optional=True``
lets a field be ``None`` (its default must then be ``None``; ``to_dict``
leaves it out, so a TOML file simply omits it).

The names ``kind`` and ``version`` are reserved: every spec class has a
``kind`` string (what a TOML file says it holds; nested-only specs may leave
it empty) and a ``version`` integer (bumped when a field changes meaning).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass
from typing import Any, ClassVar, TypeVar

from rfmodel.errors import SpecError, UnknownNameError, unknown_key_message

__all__ = ["FieldInfo", "Spec", "param", "spec_kinds", "spec_type"]

S = TypeVar("S", bound="Spec")

_RESERVED = frozenset({"kind", "version"})
_META_KEY = "rfmodel"
_SCALARS = (bool, int, float, str)

#: every Spec subclass with a non-empty ``kind``, by kind
_REGISTRY: dict[str, type[Spec]] = {}


@dataclass(frozen=True)
class FieldInfo:
    """What :func:`param` records about one field (its metadata)."""

    doc: str
    unit: str = ""
    bounds: tuple | None = None
    choices: tuple | None = None
    multiple_of: int | None = None
    length: int | None = None
    optional: bool = False
    type: Any = None
    item_type: Any = None
    #: the engines that model the field (another engine answers at its default and says so)
    engines: tuple = ("analytic", "simulate")
    #: ``((name, values), ...)``: the field acts only where each named field (the spec's own, or an SM
    #: field for a design parameter) takes one of its values
    acts_with: tuple = ()
    #: an optional design parameter left out takes this SM field's value (:meth:`Spec.value_on`)
    sm_default: str | None = None
    # filled in by Spec._infos(): the field name
    name: str = ""

    def allowed(self) -> str:
        """Human text for what the field accepts (used in errors and docs)."""
        if self.type is tuple:
            text = "a list of " + (f"{self.length} " if self.length is not None else "")
            text += _type_word(self.item_type, plural=True)
            if self.choices is not None:
                text += ", each one of " + ", ".join(repr(c) for c in self.choices)
            elif _per_item(self.bounds):
                text += " in " + ", ".join(f"[{_fmt(lo)}, {_fmt(hi)}]" for lo, hi in self.bounds)
                text += " respectively"
            elif self.bounds is not None:
                text += f", each in [{_fmt(self.bounds[0])}, {_fmt(self.bounds[1])}]"
            if self.multiple_of:
                text += f", each a multiple of {self.multiple_of}"
            if self.unit:
                text += f" ({self.unit})"
        elif self.type is bool:
            text = "true or false"
        elif self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        else:
            text = _type_word(self.type, plural=False)
            if self.bounds is not None:
                text += f" in [{_fmt(self.bounds[0])}, {_fmt(self.bounds[1])}]"
            if self.multiple_of:
                text += f", a multiple of {self.multiple_of}"
            if self.unit and self.type in (int, float):
                text += f" ({self.unit})"
        if self.optional:
            text += ", or left out"
        return text


def _per_item(bounds) -> bool:
    return bool(bounds) and isinstance(bounds[0], tuple | list)


def _fmt(x) -> str:
    if x is None:
        return "..."
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return str(x)


def _type_word(t, plural: bool) -> str:
    word = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(t)
    if word is None:
        word = f"{getattr(t, '__name__', t)} table"
    return word + ("s" if plural else "")


def param(
    default: Any = MISSING,
    *,
    doc: str,
    unit: str = "",
    bounds: tuple | None = None,
    choices: Iterable | None = None,
    multiple_of: int | None = None,
    length: int | None = None,
    optional: bool = False,
    type: Any = None,  # the field type when the default does not show it
    item_type: Any = None,
    default_factory: Callable[[], Any] | Any = MISSING,
    engines: tuple | None = None,
    acts_with: Mapping[str, Iterable] | None = None,
    sm_default: str | None = None,
) -> Any:
    """Declare a spec field.

    ``bounds`` is an inclusive ``(low, high)`` pair (``None`` for open); for a
    tuple field it applies to every item, or give one pair per item
    (``bounds=((1, 10), (0, 10))``).  ``choices`` lists the allowed values.
    ``type``/``item_type`` are only needed when the default does not show them
    (an empty tuple, ``None``).  ``engines`` names the engines that model the
    field (default: both); ``acts_with={"other": (values...)}`` says the field
    has an effect only where ``other`` takes one of those values
    (``Design.not_modelled`` says so when a run sets it where it cannot act).  ``sm_default``: an optional
    design parameter left out takes the SM's field of that name (:meth:`Spec.value_on`).
    """
    if default is MISSING and default_factory is MISSING and not optional:
        raise TypeError("a spec field needs a default (specs are built from partial TOML tables)")
    if optional and default is MISSING and default_factory is MISSING:
        default = None
    if optional and default is not None:
        raise TypeError("an optional spec field must default to None")
    if sm_default is not None and not optional:
        raise TypeError("sm_default names the SM field an optional spec field takes when left out")
    if isinstance(default, list):
        default = tuple(default)
    if _per_item(bounds) and length is None:
        length = len(bounds)
    info = FieldInfo(
        doc=doc,
        unit=unit,
        bounds=tuple(tuple(b) for b in bounds) if _per_item(bounds) else (tuple(bounds) if bounds else None),
        choices=tuple(choices) if choices is not None else None,
        multiple_of=multiple_of,
        length=length,
        optional=optional,
        type=type,
        item_type=item_type,
        engines=tuple(engines) if engines is not None else ("analytic", "simulate"),
        acts_with=tuple((k, tuple(v)) for k, v in (acts_with or {}).items()),
        sm_default=sm_default,
    )
    kw: dict[str, Any] = {"metadata": {_META_KEY: info}}
    if default_factory is not MISSING:
        kw["default_factory"] = default_factory
    else:
        kw["default"] = default
    return dataclasses.field(**kw)


def _resolve_types(info: FieldInfo, default: Any, owner: str) -> FieldInfo:
    t, it = info.type, info.item_type
    if t is None:
        if default is None or default is MISSING:
            raise TypeError(f"{owner}.{info.name}: give param(type=...) when the default is None")
        t = tuple if isinstance(default, tuple) else type(default)
    if t is tuple and it is None:
        if not default:
            raise TypeError(f"{owner}.{info.name}: give param(item_type=...) for an empty tuple default")
        first = default[0]
        it = type(first)
    if t not in _SCALARS and t is not tuple and not (isinstance(t, type) and issubclass(t, Spec)):
        raise TypeError(f"{owner}.{info.name}: unsupported spec field type {t!r}")
    return dataclasses.replace(info, type=t, item_type=it)


class Spec:
    """Base of every validated, immutable spec.

    Subclasses are ``@dataclass(frozen=True)`` classes declared as
    ``class X(Spec, kind="x", version=1)``.  Override :meth:`_check` for rules
    that involve several fields, calling :meth:`_fail` on a violation.
    """

    kind: ClassVar[str] = ""
    version: ClassVar[int] = 1

    def __init_subclass__(cls, kind: str | None = None, version: int | None = None, **kw):
        super().__init_subclass__(**kw)
        if kind is not None:
            cls.kind = kind
            if kind:
                prev = _REGISTRY.get(kind)
                if prev is not None and prev.__qualname__ != cls.__qualname__:
                    raise TypeError(f"spec kind '{kind}' is already used by {prev.__qualname__}")
                _REGISTRY[kind] = cls
        elif "kind" not in cls.__dict__:
            # a subclass without its own kind is not itself loadable by kind
            cls.kind = ""
        if version is not None:
            cls.version = int(version)

    # ----------------------------------------------------------------- fields
    @classmethod
    def _infos(cls) -> dict[str, FieldInfo]:
        """Field name -> resolved :class:`FieldInfo`, in declaration order (cached)."""
        cache = cls.__dict__.get("_rfmodel_infos")
        if cache is not None:
            return cache
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__qualname__} must be a @dataclass(frozen=True)")
        out: dict[str, FieldInfo] = {}
        for f in dataclasses.fields(cls):
            if f.name in _RESERVED:
                raise TypeError(f"{cls.__qualname__}: field name '{f.name}' is reserved")
            info = f.metadata.get(_META_KEY)
            if info is None:
                raise TypeError(f"{cls.__qualname__}.{f.name}: declare spec fields with param()")
            info = dataclasses.replace(info, name=f.name)
            default = f.default
            if default is MISSING and f.default_factory is not MISSING:
                default = f.default_factory()
            out[f.name] = _resolve_types(info, default, cls.__qualname__)
        cls._rfmodel_infos = out
        return out

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(cls._infos())

    @classmethod
    def field_info(cls, name: str) -> FieldInfo:
        infos = cls._infos()
        if name not in infos:
            raise SpecError(cls._where(), name, None, unknown_key_message(name, infos))
        return infos[name]

    @classmethod
    def accepts_alone(cls, name: str, value: Any) -> bool | None:
        """Whether field ``name`` takes ``value`` with every other field at its default: ``True`` or
        ``False`` by the field's own rules, where the spec has no rule across fields (its defaults are
        valid, so the field decides); ``None`` where that takes building the spec (a rule across fields,
        a nested spec or a tuple field)."""
        own = cls.__dict__.get("_accepts_alone")
        if own is None:
            own = cls._check is Spec._check and cls.__post_init__ is Spec.__post_init__
            try:  # and a spec at its defaults is valid (every field has one)
                own = own and cls() is not None
            except (SpecError, TypeError):
                own = False
            type.__setattr__(cls, "_accepts_alone", own)
        info = cls.field_info(name)
        t = info.type
        if not own or t is tuple or (isinstance(t, type) and issubclass(t, Spec)):
            return None
        try:
            _coerce(value, info, cls._where())
        except SpecError:
            return False
        return True

    def value_on(self, name: str, sm):
        """The field's value on ``sm``: its own, or, left out, the SM field its declaration names
        (``param(sm_default=...)``)."""
        value = getattr(self, name)
        info = self.field_info(name)
        return getattr(sm, info.sm_default) if value is None and info.sm_default else value

    @classmethod
    def _where(cls) -> str:
        return cls.kind or cls.__name__

    # ------------------------------------------------------------- validation
    def __post_init__(self) -> None:
        where = self._where()
        for name, info in self._infos().items():
            value = getattr(self, name)
            new = _coerce(value, info, where)
            if new is not value:
                object.__setattr__(self, name, new)
        self._check()

    def _check(self) -> None:
        """Cross-field rules; subclasses override and call :meth:`_fail`."""

    def _fail(self, field: str, value: Any, allowed: str):
        raise SpecError(self._where(), field, value, allowed)

    # ------------------------------------------------------------ conversion
    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict: tuples become lists, nested specs dicts, ``None`` fields are left out."""
        out: dict[str, Any] = {}
        for name in self._infos():
            v = _plain(getattr(self, name))
            if v is not None:
                out[name] = v
        return out

    @classmethod
    def from_dict(cls: type[S], data: Mapping[str, Any], where: str | None = None) -> S:
        """Build from a (TOML-shaped) mapping; missing keys take their defaults.

        Unknown keys raise :class:`SpecError` with the nearest valid name
        suggested.  Optional top-level ``kind``/``version`` keys, if present,
        must match the class.
        """
        own = cls._where()
        where = where or own
        if not isinstance(data, Mapping):
            raise SpecError(where, "(table)", data, f"a table of {cls.__name__} fields")
        infos = cls._infos()
        kw: dict[str, Any] = {}
        for key, value in data.items():
            if key == "kind" and cls.kind:
                if value != cls.kind:
                    raise SpecError(where, "kind", value, repr(cls.kind))
                continue
            if key == "version":
                if value != cls.version:
                    raise SpecError(where, "version", value, str(cls.version))
                continue
            info = infos.get(key)
            if info is None:
                raise SpecError(where, str(key), value, unknown_key_message(str(key), infos))
            kw[key] = _from_plain(value, info, f"{where}.{key}")
        try:
            return cls(**kw)
        except SpecError as e:
            if e.where == own and where != own:
                raise SpecError(where, e.field, e.value, e.allowed) from None
            raise

    def replace(self: S, **changes: Any) -> S:
        """A copy with some fields changed (validated like a new spec).

        A mapping given for a nested-spec field changes only the keys it
        names: ``sm.replace(l1d={"assoc": 8})`` keeps the other L1D values.
        """
        infos = self._infos()
        for key, value in changes.items():
            if key not in infos:
                raise SpecError(self._where(), key, value, unknown_key_message(key, infos))
            current = getattr(self, key)
            if isinstance(current, Spec) and isinstance(value, Mapping):
                try:
                    changes[key] = current.replace(**value)
                except SpecError as e:
                    if e.where == current._where():
                        raise SpecError(f"{self._where()}.{key}", e.field, e.value, e.allowed) from None
                    raise
        return dataclasses.replace(self, **changes)

    def get_path(self, path: str) -> Any:
        """Value at a dotted path, e.g. ``spec.get_path("l1d.hit_latency_cycles")``."""
        obj: Any = self
        for part in path.split("."):
            if not isinstance(obj, Spec):
                raise SpecError(self._where(), path, None, f"'{part}' is below a plain value")
            obj.field_info(part)  # raises with a suggestion when unknown
            obj = getattr(obj, part)
        return obj

    def replace_paths(self: S, changes: Mapping[str, Any]) -> S:
        """Like :meth:`replace` with dotted names reaching into nested specs.

        ``spec.replace_paths({"num_banks": 8, "l1d.size_bytes": 32768})``.
        """
        direct: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for path, value in changes.items():
            head, _, rest = path.partition(".")
            if rest:
                nested.setdefault(head, {})[rest] = value
            else:
                direct[head] = value
        for head, sub in nested.items():
            info = self.field_info(head)
            child = direct.get(head, getattr(self, head))
            if not isinstance(child, Spec):
                raise SpecError(self._where(), head, child, f"{info.allowed()} (cannot reach into it)")
            direct[head] = child.replace_paths(sub)
        return self.replace(**direct)

    def digest(self) -> str:
        """Stable hex digest of kind, version and values (a cache key for evaluations)."""
        payload = {
            "kind": self.kind or type(self).__qualname__,
            "version": self.version,
            "values": self.to_dict(),
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]

    @classmethod
    def describe_fields(cls, prefix: str = "") -> list[tuple[str, str, str, str]]:
        """Rows ``(dotted name, unit, allowed, doc)`` for every field, nested specs expanded."""
        rows = []
        for name, info in cls._infos().items():
            full = prefix + name
            t = info.type
            if isinstance(t, type) and issubclass(t, Spec):
                rows.append((full, "", "table", info.doc))
                rows.extend(t.describe_fields(full + "."))
            else:
                rows.append((full, info.unit, info.allowed(), info.doc))
        return rows


def spec_type(kind: str) -> type[Spec]:
    """The registered spec class for ``kind`` (raises UnknownNameError with a suggestion)."""
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise UnknownNameError("spec kind", kind, _REGISTRY) from None


def spec_kinds() -> dict[str, type[Spec]]:
    """Registered spec classes by kind (a copy)."""
    return dict(_REGISTRY)


# --------------------------------------------------------------- coercion
def _plain(v: Any) -> Any:
    if isinstance(v, Spec):
        return v.to_dict()
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


def _from_plain(value: Any, info: FieldInfo, where: str) -> Any:
    """TOML value -> constructor argument (nested tables become specs)."""
    t = info.type
    if isinstance(t, type) and issubclass(t, Spec) and isinstance(value, Mapping):
        return t.from_dict(value, where=where)
    if t is tuple and isinstance(value, list | tuple):
        it = info.item_type
        if isinstance(it, type) and issubclass(it, Spec):
            return tuple(
                it.from_dict(x, where=f"{where}[{i}]") if isinstance(x, Mapping) else x
                for i, x in enumerate(value)
            )
        return tuple(value)
    return value


def _coerce(value: Any, info: FieldInfo, where: str) -> Any:
    """Validate one field value and return it in canonical form (raises SpecError)."""
    if value is None:
        if info.optional:
            return None
        raise SpecError(where, info.name, value, info.allowed())
    t = info.type
    if t is tuple:
        if isinstance(value, str | bytes) or not isinstance(value, Iterable) or isinstance(value, Mapping):
            raise SpecError(where, info.name, value, info.allowed())
        items = tuple(value)
        if info.length is not None and len(items) != info.length:
            raise SpecError(where, info.name, value, info.allowed())
        per_item = _per_item(info.bounds)
        if per_item and len(items) != len(info.bounds):
            raise SpecError(where, info.name, value, info.allowed())
        out = []
        for i, x in enumerate(items):
            bounds = info.bounds[i] if per_item else info.bounds
            ok, y = _scalar(x, info.item_type, bounds, info.choices, info.multiple_of, f"{where}.{info.name}")
            if not ok:
                raise SpecError(where, info.name, value, info.allowed())
            out.append(y)
        out_t = tuple(out)
        return value if isinstance(value, tuple) and out_t == value and _same_types(out_t, value) else out_t
    ok, y = _scalar(value, t, info.bounds, info.choices, info.multiple_of, f"{where}.{info.name}")
    if not ok:
        raise SpecError(where, info.name, value, info.allowed())
    return y


def _same_types(a: tuple, b: tuple) -> bool:
    return all(type(x) is type(y) for x, y in zip(a, b, strict=True))


def _scalar(x: Any, t: Any, bounds, choices, multiple_of, where: str) -> tuple[bool, Any]:
    if isinstance(t, type) and issubclass(t, Spec):
        if isinstance(x, t):
            return True, x
        if isinstance(x, Mapping):
            return True, t.from_dict(x, where=where)
        return False, x
    if t is bool:
        if isinstance(x, bool):
            return True, x
        if type(x).__name__ == "bool_":  # numpy bool
            return True, bool(x)
        return False, x
    if t is int:
        if isinstance(x, bool):
            return False, x
        if isinstance(x, numbers.Integral):
            y = int(x)
        elif isinstance(x, numbers.Real) and math.isfinite(float(x)) and float(x).is_integer():
            y = int(x)
        else:
            return False, x
    elif t is float:
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            return False, x
        y = float(x)
        if math.isnan(y):
            return False, x
    elif t is str:
        if not isinstance(x, str):
            return False, x
        try:
            x.encode("utf-8")
        except UnicodeEncodeError:
            return False, x
        y = x
    else:  # pragma: no cover - guarded by _resolve_types
        return False, x
    if choices is not None and y not in choices:
        return False, x
    if bounds is not None:
        lo, hi = bounds
        if (lo is not None and y < lo) or (hi is not None and y > hi):
            return False, x
    if multiple_of and (y % multiple_of):
        return False, x
    if type(x) is type(y) and x == y:
        return True, x
    return True, y
