"""Design-space search: pymoo problems over :func:`rfmodel.evaluate`."""

from rfmodel.optimize.problem import DEFAULT_SPACE, OptimizeResult, Variable, optimize, pareto_table

__all__ = ["DEFAULT_SPACE", "OptimizeResult", "Variable", "optimize", "pareto_table"]
