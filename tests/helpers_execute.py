"""Execution of shipped kernels against their recipes, for the executor's tests."""

from __future__ import annotations

from rfmodel.workload.execute.recipe import check_outputs, run_recipe
from rfmodel.workload.suite import load_kernel


def run_checked(name, arch, recipe):
    """Shipped kernel ``name``, compiled for ``arch``, run on ``recipe`` with its outputs checked against
    the recipe's reference (raises on a mismatch); the run's result."""
    res, ins = run_recipe(load_kernel(name, arch), recipe)
    check_outputs(recipe, res, ins)
    return res
