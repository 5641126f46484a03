"""The design plug-in interface.

A design says everything about itself in one place: its parameters (a spec),
the compiler pass it needs, its analytic terms and the structures it adds for
energy and area accounting (simulator hooks join when the cycle simulator
does).  The engines ask the design; they never test its name.

Analytic contract: :meth:`Design.analytic` receives the workload profile, the
SM spec and a *grid* -- a dict of parameter arrays that broadcast against each
other (SM fields such as ``rf_banks`` and the design's own fields) -- and
returns a dict of metric arrays with at least ``ipc``, ``rf_reads``,
``rf_writes``, ``bank_conflict_stall_cycles`` and the event counts
``events[structure] = (reads, writes)`` for :func:`rfmodel.energy.account`.
"""

from __future__ import annotations

from typing import ClassVar

from rfmodel.errors import UnknownNameError


class Design:
    """Base class of design plug-ins."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: names of the grid parameters this design understands beyond the SM fields
    parameters: ClassVar[tuple[str, ...]] = ()

    def compile(self, kernel):
        """The design's compiler pass over a static kernel (identity by default)."""
        return kernel

    def analytic(self, profile, sm, grid: dict):  # pragma: no cover - interface
        raise NotImplementedError

    def structures(self, sm, grid: dict, tech: dict):  # pragma: no cover - interface
        raise NotImplementedError


_REGISTRY: dict[str, type[Design]] = {}


def register(cls: type[Design]) -> type[Design]:
    """Class decorator adding a design to the registry under ``cls.name``."""
    if not cls.name:
        raise ValueError(f"design class {cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def design_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def get_design(name: str | Design) -> Design:
    if isinstance(name, Design):
        return name
    _load_builtin()
    if name not in _REGISTRY:
        raise UnknownNameError("design", name, _REGISTRY)
    return _REGISTRY[name]()


def _load_builtin() -> None:
    from rfmodel.designs import baseline  # noqa: F401  (registers itself)
