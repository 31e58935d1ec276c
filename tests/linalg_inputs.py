"""Seeded random matrices for the linear algebra tests."""
import numpy as np


def random_array(shape, dtype=np.float32, seed=0):
    """Standard normal entries of ``shape`` (real and imaginary parts for complex dtypes)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)
