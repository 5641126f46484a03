"""Design-space search: pymoo problems over :func:`rfmodel.evaluate`, across designs and technologies."""

from rfmodel.optimize.problem import (
    DEFAULT_CELLS,
    DEFAULT_OBJECTIVES,
    DEFAULT_SPACE,
    METRICS,
    Constraint,
    Objective,
    OptimizeResult,
    Variable,
    optimize,
    pareto_table,
)

__all__ = [
    "DEFAULT_CELLS",
    "DEFAULT_OBJECTIVES",
    "DEFAULT_SPACE",
    "METRICS",
    "Constraint",
    "Objective",
    "OptimizeResult",
    "Variable",
    "optimize",
    "pareto_table",
]
