"""Errors of the functional executor (all are :class:`rfmodel.errors.RfmodelError`)."""

from __future__ import annotations

from rfmodel.errors import RfmodelError


class ExecutionError(RfmodelError):
    """Execution of a kernel stopped: a bad launch, a bad recipe, or a fault of the program."""


class UnsupportedInstructionError(ExecutionError):
    """An opcode, modifier or operand form the executor does not implement.

    Raised before the first instruction runs (every static instruction is decoded
    up front), so a kernel either runs with every instruction understood or not at all.
    """

    def __init__(self, kernel: str, arch: str, pc: int, opcode: str, reason: str):
        self.kernel, self.arch, self.pc, self.opcode, self.reason = kernel, arch, pc, opcode, reason
        super().__init__(
            f"{kernel} ({arch}): instruction '{opcode}' at offset 0x{pc:04x} "
            f"is not supported by the executor: {reason}"
        )


class ExecutionFault(ExecutionError):
    """The program did something the executor treats as a fault (an address outside every
    array, a misaligned access, a deadlock, a shuffle across diverged lanes ...)."""

    def __init__(self, kernel: str, arch: str, pc: int, opcode: str, message: str):
        self.kernel, self.arch, self.pc, self.opcode = kernel, arch, pc, opcode
        super().__init__(f"{kernel} ({arch}): {message} at offset 0x{pc:04x} ('{opcode}')")
