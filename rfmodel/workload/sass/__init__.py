"""SASS reader: ``cuobjdump -sass`` / ``nvdisasm -c [-hex] [-plr]`` text -> :class:`.Kernel` objects.

Public API
----------
* :func:`parse_sass` -- kernels of a listing given as text.
* :func:`read_sass` -- the same for a file.
* :data:`OPCODE_CLASS`, :data:`FALLBACK_RULES`, :func:`classify` -- the opcode table.
* :class:`Ctrl`, :func:`decode_ctrl` -- the scheduling control field of an encoding.

The rules are documented in ``docs/sass-reader.md``.
"""

from rfmodel.lazy import lazy_getattr
from rfmodel.workload.sass.opcodes import FALLBACK_RULES, OPCODE_CLASS, classify

#: the reader's names, imported on first use: the opcode table alone (what the Accel-Sim reader uses)
#: does not load the reader
_READER_NAMES = ("SUPPORTED_ARCHS", "Ctrl", "decode_ctrl", "normalize_arch", "parse_sass", "read_sass")


__getattr__ = lazy_getattr(__name__, "rfmodel.workload.sass.reader", _READER_NAMES)


__all__ = [
    "FALLBACK_RULES",
    "OPCODE_CLASS",
    "SUPPORTED_ARCHS",
    "Ctrl",
    "classify",
    "decode_ctrl",
    "normalize_arch",
    "parse_sass",
    "read_sass",
]
