"""Validated, immutable specs: the SM, design parameters, technology choices; TOML I/O; GPGPU-Sim import.

Public API::

    from rfmodel.spec import SMSpec, load_spec, save_spec, PRESETS, get_preset
    from rfmodel.spec import Spec, param          # to declare new spec classes

See ``docs/spec.md`` for every field, the presets and their sources, and the
GPGPU-Sim options read.
"""

from rfmodel.lazy import lazy_getattr

from .base import FieldInfo, Spec, param, spec_kinds, spec_type
from .presets import PRESETS, get_preset
from .sm import (
    BANK_MAPPINGS,
    OP_CLASS_NAMES,
    SCHEDULERS,
    CollectorSpec,
    ExecUnitSpec,
    ICacheSpec,
    L1DSpec,
    L2Spec,
    LatencySpec,
    SMSpec,
)
from .toml_io import dumps, dumps_spec, load_spec, loads_spec, save_spec, write_text_atomic

#: the GPGPU-Sim import's names, imported on first use (a run on a preset does not read a config file)
_GPGPUSIM_NAMES = (
    "GPGPUSIM_DEFAULTS",
    "GpgpusimImport",
    "from_gpgpusim_config",
    "import_gpgpusim_config",
    "parse_option_file",
)


__getattr__ = lazy_getattr(__name__, "rfmodel.spec.gpgpusim", _GPGPUSIM_NAMES)


__all__ = [
    "BANK_MAPPINGS",
    "GPGPUSIM_DEFAULTS",
    "OP_CLASS_NAMES",
    "PRESETS",
    "SCHEDULERS",
    "CollectorSpec",
    "FieldInfo",
    "GpgpusimImport",
    "ExecUnitSpec",
    "ICacheSpec",
    "L1DSpec",
    "L2Spec",
    "LatencySpec",
    "SMSpec",
    "Spec",
    "dumps",
    "dumps_spec",
    "from_gpgpusim_config",
    "get_preset",
    "import_gpgpusim_config",
    "load_spec",
    "loads_spec",
    "param",
    "parse_option_file",
    "save_spec",
    "spec_kinds",
    "spec_type",
    "write_text_atomic",
]
