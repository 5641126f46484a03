"""Value statistics of a trace: operand widths, coalescing opportunity, BDI compressibility.

The figures that "CORF: Coalescing Operand Register File for GPUs" (Figs. 2 and 4) and
"Architecting Energy-efficient STT-RAM Based Register File on GPGPUs via Delta Compression"
(Figs. 8 and 9) characterise their workloads by, measured on a trace whose value attributes are
known (an executed trace; a synthetic one has modelled attributes):

* **written operands**: the width class (1-4 bytes) of every register a warp-instruction writes;
* **read operands**: the width class of every source register, i.e. of the value last written
  to that register by the same warp (a register never written holds 0: 1 byte);
* **register operations**: reads and writes together (the CORF paper's "register operations");
* **multi-source instructions**: warp-instructions with two or more distinct register sources,
  their share of all warp-instructions and of all register reads, and the share of them whose
  sources include a pair that fits one 32-bit entry (widths adding up to at most 4 bytes);
* **reads per written value**: how many warp-instructions read a register's value between its write and
  the next write of that register by the same warp (or the warp's end), as shares of the values read 0,
  1, 2 and 3 or more times (the Cache-Emulated Register File paper's Fig. 2a); an instruction that names
  the register twice reads it once;
* **BDI**: per written warp register, the compressed size; the ratio of the bytes written
  uncompressed to compressed (the average compression ratio), the mean of the per-register
  ratios, and the share of registers that compress at all.

Only warp-instructions with at least one executing lane count (a predicated-off instruction
reads and writes nothing).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rfmodel.trace import COMPRESS_UNKNOWN, NONE, WARP_VALUE_BYTES, Trace, compressed_bytes

__all__ = [
    "VALUE_COLUMNS",
    "read_widths",
    "reads_per_value",
    "value_stats",
    "values_table",
    "values_table_markdown",
]


@njit(cache=True)
def _read_widths(warp_ptr, src, dst, width, active):
    n, ms = src.shape
    out = np.zeros((n, ms), np.int8)
    last = np.ones(256, np.int8)
    for w in range(len(warp_ptr) - 1):
        last[:] = 1
        for i in range(warp_ptr[w], warp_ptr[w + 1]):
            if active[i] == 0:
                continue
            for j in range(ms):
                r = src[i, j]
                if r != NONE:
                    out[i, j] = last[r]
            for k in range(dst.shape[1]):
                r = dst[i, k]
                if r != NONE and width[i, k] > 0:
                    last[r] = width[i, k]
    return out


@njit(cache=True)
def _reads_per_value(warp_ptr, src, dst, active):
    out = np.zeros(4, np.int64)  # values read 0, 1, 2, >= 3 times
    reads = np.zeros(256, np.int64)
    live = np.zeros(256, np.bool_)
    for w in range(len(warp_ptr) - 1):
        live[:] = False
        for i in range(warp_ptr[w], warp_ptr[w + 1]):
            if active[i] == 0:
                continue
            for j in range(src.shape[1]):
                r = src[i, j]
                if r == NONE or not live[r]:
                    continue
                seen = False  # the same register named again by this instruction: one read
                for k in range(j):
                    if src[i, k] == r:
                        seen = True
                if not seen:
                    reads[r] += 1
            for k in range(dst.shape[1]):
                r = dst[i, k]
                if r == NONE:
                    continue
                if live[r]:
                    out[min(reads[r], 3)] += 1
                live[r] = True
                reads[r] = 0
        for r in range(256):
            if live[r]:
                out[min(reads[r], 3)] += 1
    return out


def reads_per_value(trace: Trace) -> list[float]:
    """Shares of the written register values that warp-instructions read 0, 1, 2 and 3 or more times before
    the register is written again or the warp ends (the module docstring); NaN without a written value."""
    c = _reads_per_value(trace.warp_ptr, trace.src, trace.dst, trace.active).astype(float)
    return (c / c.sum()).round(4).tolist() if c.sum() else [float("nan")] * 4


def read_widths(trace: Trace) -> np.ndarray:
    """``[N, MAX_SRC]`` width class of each source register as read (0 where no source, or where
    the row is predicated off); needs the trace's write widths."""
    return _read_widths(trace.warp_ptr, trace.src, trace.dst, trace.width, trace.active)


def _dist(w: np.ndarray) -> list[float]:
    c = np.bincount(w.astype(np.int64), minlength=5)[1:5].astype(float)
    t = c.sum()
    return (c / t).round(4).tolist() if t else [float("nan")] * 4


def value_stats(trace: Trace) -> dict:
    """The value statistics of ``trace`` (see the module docstring); ``known`` is the share of
    written registers whose width is known (0 for an expanded trace: its figures are then NaN)."""
    live = trace.active > 0
    has_dst = (trace.dst != NONE) & live[:, None]
    ww = trace.width[has_dst]
    known = float((ww > 0).mean()) if ww.size else float("nan")
    ww = ww[ww > 0]
    rw_all = read_widths(trace)
    has_src = (trace.src != NONE) & live[:, None]
    rw = rw_all[has_src]
    if not ww.size:
        rw = rw[:0]
    ops = np.concatenate([ww, rw])
    # distinct register sources per row
    s = np.where(has_src, trace.src.astype(np.int16), -1)
    s.sort(axis=1)
    distinct = ((s[:, 1:] != s[:, :-1]) & (s[:, 1:] >= 0)).sum(axis=1) + (s[:, 0] >= 0)
    multi = live & (distinct >= 2)
    reads = has_src.sum()
    # a pair of sources fits one 32-bit entry: the two narrowest distinct sources add up to <= 4 bytes
    w_src = np.where(has_src & (rw_all > 0), rw_all, 9).astype(np.int16)
    w_src.sort(axis=1)
    fits = multi & (w_src[:, 0] + w_src[:, 1] <= 4)
    comp = trace.compress[has_dst]
    comp = comp[comp != COMPRESS_UNKNOWN]
    size = compressed_bytes(comp)
    n_multi = int(multi.sum())
    nan = float("nan")
    has_size = bool(size.size)
    return {
        "trace_source": trace.attrs.get("source", "unknown"),
        "warp_instructions": int(live.sum()),
        "width_known": round(known, 4),
        "written_width": _dist(ww),
        "read_width": _dist(rw),
        "operation_width": _dist(ops),
        "narrow_operations": round(float((ops < 4).mean()), 4) if ops.size else nan,
        "one_byte_operations": round(float((ops == 1).mean()), 4) if ops.size else nan,
        "multi_source_instructions": round(n_multi / max(int(live.sum()), 1), 4),
        "multi_source_read_share": round(float(has_src[multi].sum()) / max(int(reads), 1), 4),
        "coalescable_multi_source": round(float(fits.sum()) / n_multi, 4) if n_multi and ww.size else nan,
        "reads_per_value": reads_per_value(trace),
        "bdi_ratio": round(float(WARP_VALUE_BYTES * size.size / size.sum()), 3) if has_size else nan,
        "bdi_mean_ratio": round(float((WARP_VALUE_BYTES / size).mean()), 3) if has_size else nan,
        "bdi_compressible": round(float((size < WARP_VALUE_BYTES).mean()), 4) if has_size else nan,
        "bdi_sizes": {int(b): round(float((size == b).mean()), 4) for b in np.unique(size)},
    }


#: the columns of the value-statistics table, with the paper figure each one sits beside
VALUE_COLUMNS = {
    "narrow_operations": "narrow (< 4 B) register operations; C-03: 65 % on average",
    "one_byte_operations": "1-byte register operations; C-03: over 33 %",
    "multi_source_instructions": "instructions with >= 2 register sources; C-04: about 40 %",
    "multi_source_read_share": "their share of register reads; C-04: over 70 %",
    "coalescable_multi_source": "of them, coalescable (a pair fits 32 bits); C-05: 69 %, up to 91 %",
    "bdi_ratio": "BDI compression ratio; S-12: about 2.81 on average",
    "bdi_compressible": "compressible written registers; S-13: every kernel some, BFS/LPS near 100 %",
}


#: the paper figures the table is set beside (seed-results.md IDs)
PAPER_ROW = {
    "narrow_operations": "65 % (C-03)",
    "one_byte_operations": "> 33 % (C-03)",
    "multi_source_instructions": "~40 % (C-04)",
    "multi_source_read_share": "> 70 % (C-04)",
    "coalescable_multi_source": "69 %, up to 91 % (C-05)",
    "bdi_ratio": "~2.81 (S-12)",
    "bdi_compressible": "all > 0, BFS/LPS ~100 % (S-13)",
}
_PCT = {k for k in VALUE_COLUMNS if k != "bdi_ratio"}
TABLE_MAX_WARPS = 64


def values_table(arch: str = "sm_80", names=None, max_warps: int = TABLE_MAX_WARPS) -> list[dict]:
    """:func:`value_stats` of every built-in kernel (or ``names``) on ``arch``: the trace of up to
    ``max_warps`` warps (whole CTAs) of one SM's share of the manifest's grid on 15 SMs."""
    from rfmodel.workload.suite import builtin_names, load_workload

    rows = []
    for name in names or builtin_names():
        wl = load_workload(name, arch=arch, num_sms=15, max_warps=max_warps)
        rows.append({"kernel": name, "trace": wl.attrs.get("trace_source", ""), **value_stats(wl.trace)})
    return rows


def values_table_markdown(rows: list[dict]) -> str:
    """The value-statistics table as Markdown: one row per kernel, the mean over the executed
    kernels, and the papers' figures."""
    cols = list(VALUE_COLUMNS)
    head = ["kernel", "trace", *[c.replace("_", " ") for c in cols]]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def fmt(k, v):
        if v is None or (isinstance(v, float) and v != v):
            return "-"
        return f"{100 * v:.1f} %" if k in _PCT else f"{v:.2f}"

    for r in rows:
        src = "executed" if r["trace"] == "execute" else "expanded (values unknown)"
        out.append("| " + " | ".join([f"`{r['kernel']}`", src, *[fmt(k, r[k]) for k in cols]]) + " |")
    ex = [r for r in rows if r["trace"] == "execute"]
    if ex:
        mean = {k: float(np.nanmean([r[k] for r in ex])) for k in cols}
        cells = [f"**mean of {len(ex)}**", "executed", *[fmt(k, mean[k]) for k in cols]]
        out.append("| " + " | ".join(cells) + " |")
    out.append("| " + " | ".join(["**papers**", "GPGPU-Sim", *[PAPER_ROW[k] for k in cols]]) + " |")
    return "\n".join(out) + "\n"
