"""Set-associative LRU caches as both engines look them up: the simulator's L1D and L2 slice, and the analytic
engine's schedule of the SM's loads (``rfmodel.analytic.stream``), one routine each way; and the pick of a
miss status holding register (:func:`take_mshr`) both make for a line miss.

A cache is two arrays of ``sets x ways`` entries, the line held (``tag``, -1 empty) and the stamp of its last
use (``stamp_of``, -1 empty); set = line mod sets, or for an L1D :func:`set_of` (GPGPU-Sim's set index
functions).  ``stamp`` must grow with every access.
"""

from __future__ import annotations

from numba import njit

__all__ = [
    "SET_INDEX",
    "lru_access",
    "lru_access_at",
    "lru_access_reserve",
    "lru_probe",
    "set_of",
    "take_mshr",
]

#: set index functions (``L1DSpec.set_index``): the line number mod the sets (GPGPU-Sim's ``L``), and the
#: Fermi L1D's hash (its ``H``)
SET_LINEAR, SET_FERMI = 0, 1
SET_INDEX = {"linear": SET_LINEAR, "fermi-hash": SET_FERMI}


@njit(cache=True, inline="always")
def set_of(line, sets, line_shift, index):
    """Set of line number ``line`` (the address over ``2**line_shift``) among ``sets`` under ``index``.

    The Fermi hash, from "A Detailed GPU Cache Model Based on Reuse Distance Theory" (Nugteren et al.) as
    GPGPU-Sim applies it to 32 or 64 sets: the line number's low five bits XOR the address bits 13, 14, 15,
    17 and 19 (in that order), and with 64 sets address bit 12 as the sixth bit.  Other set counts (an L1D a
    design resizes) index linearly."""
    if index == SET_FERMI and (sets == 32 or sets == 64):
        addr = line << line_shift
        upper = ((addr >> 13) & 0x7) | (((addr >> 17) & 1) << 3) | (((addr >> 19) & 1) << 4)
        s = (line & 0x1F) ^ upper
        if sets == 64:
            s |= ((addr >> 12) & 1) << 5
        return s
    return line % sets


@njit(cache=True, inline="always")
def lru_access(tag, stamp_of, sets, ways, line, stamp):
    """One access of a set-associative LRU cache; returns (hit, way).  On a miss the least recently used way
    (an empty one first: its stamp is -1) takes the line.  A cache of no sets (an SM whose L2 slice holds no
    whole set, as the simulator takes it) misses every access."""
    if sets <= 0:
        return False, -1
    return lru_access_at(tag, stamp_of, line % sets, ways, line, stamp)


@njit(cache=True, inline="always")
def lru_access_at(tag, stamp_of, s, ways, line, stamp):
    """:func:`lru_access` in set ``s``."""
    base = s * ways
    victim = base
    oldest = stamp_of[base]
    for k in range(base, base + ways):
        if tag[k] == line:
            stamp_of[k] = stamp
            return True, k
        if stamp_of[k] < oldest:
            oldest = stamp_of[k]
            victim = k
    tag[victim] = line
    stamp_of[victim] = stamp
    return False, victim


@njit(cache=True, inline="always")
def lru_probe(tag, stamp_of, s, ways, line, stamp):
    """A write that does not allocate (GPGPU-Sim's no-write-allocate): a hit in set ``s`` refreshes the
    line's stamp, a miss leaves the set alone.  Returns (hit, way; -1 on a miss)."""
    base = s * ways
    for k in range(base, base + ways):
        if tag[k] == line:
            stamp_of[k] = stamp
            return True, k
    return False, -1


@njit(cache=True)
def lru_access_reserve(tag, stamp_of, ready, s, ways, line, stamp, t):
    """As :func:`lru_access`, for a cache whose misses reserve their line until the fill (GPGPU-Sim's
    allocation on miss; ``ready[way]``: the cycle the way's line arrives): the victim is the least recently
    used way whose line is not waiting for its fill (``ready[way] <= t``); when every way of the set waits,
    the access waits for the first fill.  A hit on a line still being filled merges with it.  ``s``: the
    set.  Returns (hit, way, cycle of the access)."""
    base = s * ways
    for i in range(base, base + ways):
        if tag[i] == line:
            stamp_of[i] = stamp
            return True, i, t
    first = ready[base]
    for i in range(base + 1, base + ways):
        if ready[i] < first:
            first = ready[i]
    if first > t:
        t = first
    victim = -1
    oldest = 0
    for i in range(base, base + ways):
        if ready[i] <= t and (victim < 0 or stamp_of[i] < oldest):
            oldest = stamp_of[i]
            victim = i
    tag[victim] = line
    stamp_of[victim] = stamp
    return False, victim, t


@njit(cache=True, inline="always")
def take_mshr(mshr, n, t, never):
    """The miss status holding register a line miss at cycle ``t`` takes among the first ``n`` of ``mshr``
    (each the cycle it frees; ``never`` above any): the first free at ``t``, else the first to free, and the
    cycle the miss takes it: ``(index, cycle)`` (``n > 0``)."""
    first = never
    for m in range(n):
        if mshr[m] <= t:
            return m, t
        if mshr[m] < first:
            first = mshr[m]
    for m in range(n):
        if mshr[m] <= first:
            return m, first
    return -1, t
