"""Set-associative LRU caches as both engines look them up: the simulator's L1D and L2 slice, and the analytic
engine's schedule of the SM's loads (``rfmodel.analytic.stream``), one routine each way.

A cache is two arrays of ``sets x ways`` entries, the line held (``tag``, -1 empty) and the stamp of its last
use (``stamp_of``, -1 empty); set = line mod sets.  ``stamp`` must grow with every access.
"""

from __future__ import annotations

from numba import njit

__all__ = ["lru_access", "lru_access_reserve"]


@njit(cache=True, inline="always")
def lru_access(tag, stamp_of, sets, ways, line, stamp):
    """One access of a set-associative LRU cache; returns (hit, way).  On a miss the least recently used way
    (an empty one first: its stamp is -1) takes the line.  A cache of no sets (an SM whose L2 slice holds no
    whole set, as the simulator takes it) misses every access."""
    if sets <= 0:
        return False, -1
    base = (line % sets) * ways
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


@njit(cache=True)
def lru_access_reserve(tag, stamp_of, ready, sets, ways, line, stamp, t):
    """As :func:`lru_access`, for a cache whose misses reserve their line until the fill (GPGPU-Sim's
    allocation on miss; ``ready[way]``: the cycle the way's line arrives): the victim is the least recently
    used way whose line is not waiting for its fill (``ready[way] <= t``); when every way of the set waits,
    the access waits for the first fill.  A hit on a line still being filled merges with it.  Returns (hit,
    way, cycle of the access)."""
    base = (line % sets) * ways
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
