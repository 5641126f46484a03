"""Command lines the CLI tests share."""

from __future__ import annotations


def small_search(pop: int = 4, generations: int = 1) -> list[str]:
    """``rfmodel optimize`` over one design, workload and cell (baseline, saxpy, sram-hp): ``pop`` points,
    ``generations`` generations, no brute-force front, one worker, quiet; no ``--out``."""
    one = ["--design", "baseline", "--workload", "saxpy", "--cell", "sram-hp"]
    size = ["--pop", str(pop), "--generations", str(generations), "--no-brute-force"]
    return ["optimize", "--quiet", "--workers", "1", *one, *size]
