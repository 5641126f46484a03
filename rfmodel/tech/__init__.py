"""Technology tables: memory arrays, interconnect and the structures register-file designs add.

Public API::

    from rfmodel.tech import array_cost, crossbar, flattened_butterfly, structures

    bank = array_cost("stt-ram", 32, capacity_kb=8, width_bits=1024, banks=16)
    bank.read_energy_pj, bank.write_energy_pj, bank.leakage_mw, bank.area_mm2, bank.access_ns
    bank.write_cycles(700), bank.partial_write_pj(groups_written=8, group_bits=32)
    bank.structure("rf_bank")            # -> rfmodel.energy.Structure for account()

Cells: ``sram-hp``, ``sram-lstp``, ``sram-lop`` (CACTI 7 fits), ``stt-ram``, ``stt-ram-conservative`` (NVSim
fits), ``stt-ram-relaxed`` (10 ms retention), ``tfet``, ``dwm`` (derived from the Latency-Tolerant Register
File's Table 2), ``stt-ram-paper`` (the STT-RAM register-file paper's cell, from its Table 1).  See
docs/tech.md.
"""

from rfmodel.tech import derive, structures  # noqa: F401  (derive registers the paper-derived cells)
from rfmodel.tech.array import (
    CELLS,
    PAPER_CELLS,
    PORTS,
    ArrayCost,
    TechExtrapolationWarning,
    TechLibrary,
    array_cost,
    cells,
    cycles,
    default_library,
)
from rfmodel.tech.interconnect import NetworkCost, crossbar, flattened_butterfly, network
from rfmodel.tech.structures import StructureCost

__all__ = [
    "CELLS",
    "PAPER_CELLS",
    "PORTS",
    "ArrayCost",
    "NetworkCost",
    "StructureCost",
    "TechExtrapolationWarning",
    "TechLibrary",
    "array_cost",
    "cells",
    "crossbar",
    "cycles",
    "default_library",
    "flattened_butterfly",
    "network",
    "structures",
]
