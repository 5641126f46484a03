"""SMs for the simulator's known-answer tests of its memory system."""

from __future__ import annotations

from rfmodel.spec import get_preset


def lone_fermi(**changes):
    """fermi-gtx480 as one SM without an instruction cache and with memory bandwidth to spare, so that a
    test's cycles are those of the part it looks at; ``changes``: other SMSpec fields."""
    return get_preset("fermi-gtx480").replace(
        **{"num_sms": 1, "icache": None, "mem_bw_bytes_per_cycle": 1e5, **changes}
    )
