"""Reuse-distance helpers and the "served outside the banks" form of the shared model.

Designs that serve some operand reads from a buffer of their own (collector caches, operand windows,
reuse caches) use these: the share of reads whose previous access of the register lies within a
distance, from the profile's log2 reuse-distance histogram, and :func:`served_outside`, which turns the
shared model's outputs (run with the design's bank shares) into the design's metrics and events.
"""

from __future__ import annotations

import numpy as np

#: the dependence distance (a warp's own instructions) within which a consumer meets its producer's result as
#: it is written back (:func:`near_consumer_share`)
NEAR_DISTANCE = 2
#: :func:`near_consumer_share` by profile (the histogram kept with it: an id is not taken for another's)
_NEAR: dict = {}


def near_consumer_share(profile) -> float:
    """The share of source reads whose producer is one of the warp's :data:`NEAR_DISTANCE` previous
    instructions (the profile's dependence distances, ``dep_dist_hist``; 0 without them): the consumers that
    wait for a result and read it right after its write-back, at the bank its write still holds (or from a
    write buffer that absorbed it)."""
    h = getattr(profile, "dep_dist_hist", None)
    if h is None:
        return 0.0
    hit = _NEAR.get(id(h))
    if hit is None or hit[0] is not h:
        share = float(near_fraction_from_hist(h, NEAR_DISTANCE)) if np.sum(h) > 0 else 0.0
        if len(_NEAR) > 256:
            _NEAR.clear()
        hit = _NEAR[id(h)] = (h, share)
    return hit[1]


def near_fraction_from_hist(hist, rthld) -> np.ndarray:
    """Fraction of source reads whose previous access of the register (same warp) is within ``rthld``.

    ``hist`` is the profile's log2 reuse-distance histogram (bin k: distances
    ``[2**k, 2**(k+1))``, last bin: first access); a bin cut by ``rthld`` counts
    in proportion.  Vectorized over ``rthld``.
    """
    h = np.asarray(hist, dtype=np.float64)
    tot = h.sum()
    rth = np.asarray(rthld, dtype=np.float64)
    if tot <= 0:
        return np.zeros_like(rth)
    out = np.zeros_like(rth)
    for k in range(len(h) - 1):
        lo, hi = 2.0**k, 2.0 ** (k + 1)  # distances lo .. hi - 1
        frac = np.clip((rth - lo + 1.0) / (hi - lo), 0.0, 1.0)
        out = out + h[k] * frac
    return out / tot


def profile_reuse_hist(profile):
    """The profile's reuse-distance histogram (None when it has none)."""
    h = getattr(profile, "reuse_dist_hist", None)
    if h is None:
        h = (getattr(profile, "attrs", None) or {}).get("reuse_dist_hist")
    return None if h is None else np.asarray(h, dtype=np.float64)


def served_outside(ctx, m: dict, hit, factor, extra_events: dict, drop=(), bank_writes=None) -> dict:
    """The metrics of a design that serves a share ``hit`` of the operand reads outside the banks.

    ``m``: the shared model run with the design's bank shares (``Effects(read_share=1 - hit, ...)``), so
    its bank queues, serialization and stalls are already the design's; ``factor`` multiplies its IPC (the
    design's residual terms; cycles follow).  Events: the SM's banks (``bank_writes`` results written to
    them, default all), crossbar and collectors minus the structures in ``drop``, plus ``extra_events``.
    Adds ``rf_bank_reads`` and ``rf_reads_saved``.
    """
    reads, writes = ctx.reads, ctx.writes
    saved = reads * np.asarray(hit, dtype=np.float64)
    bank_reads = reads - saved
    events = {
        "rf_bank": (bank_reads, writes if bank_writes is None else bank_writes),
        "crossbar": (bank_reads + writes, 0.0),
        "collector": (reads, reads),
    }
    events = {k: v for k, v in events.items() if k not in drop}
    events.update(extra_events)
    out = ctx.result(m, events=events, metrics={"rf_bank_reads": bank_reads, "rf_reads_saved": saved})
    return ctx.scaled(out, factor)


def ipc_gain(m: dict, ctx, hit, coef):
    """Residual relative IPC factor of a design that serves a share ``hit`` of the operands outside the
    banks, beyond what the shared model with the design's bank shares gives.

    First order: it grows with the bank reads saved per instruction, fully where the baseline loses
    cycles to bank conflicts and half otherwise; a calibration that finds nothing left fits 0.
    """
    stalls = np.where(m["warps"] > 0, ctx.n * m["conflict_per_instr"], np.nan)
    conflicted = np.where(stalls > 0, 1.0, 0.5)
    return 1.0 + coef * hit * ctx.profile.reads_per_instr * conflicted
