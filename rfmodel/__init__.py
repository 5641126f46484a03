"""rfmodel: performance, energy and area models of GPU register-file designs.

The one façade is :func:`rfmodel.evaluate`; design-space search is
:func:`rfmodel.optimize.optimize`.
"""

__version__ = "0.1.0"

from rfmodel.evaluate import evaluate, sensitivity  # noqa: E402  (the façade, also rfmodel.evaluate)

__all__ = ["evaluate", "sensitivity", "__version__"]
