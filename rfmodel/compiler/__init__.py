"""Compiler analyses over the workload IR: CFG, liveness, reuse distance, the nvdisasm oracle,
and the register-caching designs' passes (register-intervals, strands, renumbering, reuse hints).

See docs/compiler.md for the definitions each analysis uses.
"""

import sys

from rfmodel.compiler.cfg import *  # noqa: F403
from rfmodel.compiler.liveness import *  # noqa: F403
from rfmodel.compiler.plr import *  # noqa: F403
from rfmodel.compiler.reg_intervals import *  # noqa: F403
from rfmodel.compiler.renumber import *  # noqa: F403
from rfmodel.compiler.reuse import *  # noqa: F403
from rfmodel.compiler.reuse_hint import *  # noqa: F403

#: the submodules whose public names (each one's ``__all__``) the package offers under its own name
_SUBMODULES = ("cfg", "liveness", "plr", "reg_intervals", "renumber", "reuse", "reuse_hint")
__all__ = [name for m in _SUBMODULES for name in sys.modules[f"{__name__}.{m}"].__all__]
