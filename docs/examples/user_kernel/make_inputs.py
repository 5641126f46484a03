"""Inputs and the expected output of the worked example (docs/execute.md): x, y and y_expected as .npy."""

import numpy as np

n, a, b, limit = 5000, np.float32(1.5), np.float32(-0.5), np.float32(2.0)
rng = np.random.default_rng(7)
x = rng.standard_normal(n).astype(np.float32)
y = rng.standard_normal(n).astype(np.float32)
# as the GPU rounds it: b*y rounded to float32, then one fused multiply-add, rounded once
v = (a.astype(np.float64) * x + (b * y).astype(np.float64)).astype(np.float32)
np.save("x.npy", x)
np.save("y.npy", y)
np.save("y_expected.npy", np.clip(v, -limit, limit))
