"""The cases of the standing differential check against JAX (issue 19, item 10).

Every jnp / nn function below runs on edge values of every dtype it accepts: zeros of
both signs, ones, halves, large and tiny (denormal) magnitudes, the extremes, infinities,
NaN, and complex numbers with infinite and NaN parts. Binary functions see every pair.
``tests/data/make_jax_differential.py`` records JAX 0.10.2's outcome of each (values,
dtype and weak type, or the exception class); ``tests/test_jax_differential.py`` replays
them on tinyxla eagerly, under jit and under vmap, and gradients of the smooth ones.
"""
from __future__ import annotations

import numpy as np

DTYPES = ["bool", "int8", "int32", "uint8", "uint32", "float16", "bfloat16", "float32",
          "complex64"]

UNARY = [
    "abs", "negative", "positive", "sign", "floor", "ceil", "round", "trunc", "rint",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "square",
    "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "isnan", "isinf", "isfinite",
    "isposinf", "isneginf", "signbit", "logical_not", "invert", "conjugate", "real", "imag",
    "angle", "fabs", "sinc", "i0", "nan_to_num", "spacing", "frexp", "modf", "iscomplex",
    "isreal",
]
BINARY = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "fmod", "power", "float_power", "maximum", "minimum", "fmax", "fmin", "hypot", "arctan2",
    "logaddexp", "logaddexp2", "copysign", "nextafter", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "gcd", "lcm",
    "heaviside", "divmod",
]
# JAX 0.10.2's gcd (and lcm through it) never ends on the most negative integer, whose
# absolute value is itself: those pairs are left out for signed integers.
NO_MIN_INT = ("gcd", "lcm")
REDUCTIONS = [
    "sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "any", "all",
    "cumsum", "cumprod", "median", "nanmean", "nansum", "nanmax", "nanmin", "ptp",
    "count_nonzero", "sort", "argsort",
]
NN = ["relu", "sigmoid", "softplus", "gelu", "silu", "log_sigmoid", "softmax", "log_softmax",
      "logsumexp", "relu6", "hard_tanh", "elu", "celu", "selu", "leaky_relu", "swish"]

# Functions whose gradient JAX defines on the float32 points below.
GRAD_UNARY = ["abs", "exp", "expm1", "log1p", "sin", "cos", "tan", "arctan", "sinh", "cosh",
              "tanh", "arcsinh", "square", "cbrt", "sinc", "logaddexp_0", "sigmoid",
              "softplus", "gelu", "silu", "log_sigmoid", "elu", "celu", "selu", "swish",
              "relu", "relu6", "hard_tanh", "leaky_relu"]
GRAD_POINTS = np.array([-2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 2.0, 6.0], np.float32)


def edge_values(dtype: str) -> np.ndarray:
    """The edge values of a dtype (as that dtype; bfloat16 through float32)."""
    if dtype == "bool":
        return np.array([False, True])
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        vals = [0, 1, 2, 3, 7, 100, info.max, info.max - 1]
        if info.min < 0:
            vals += [-1, -2, -7, info.min, info.min + 1]
        return np.array(vals, dtype)
    if dtype == "complex64":
        f = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 1e30]
        return np.array([complex(a, b) for a in f for b in f[:7]], np.complex64)
    tiny = {"float16": 3e-8, "bfloat16": 1e-40, "float32": 1e-40}[dtype]
    big = {"float16": 6e4, "bfloat16": 3e38, "float32": 3e38}[dtype]
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.7, 1e-3, 100.0, tiny, -tiny, big,
                     -big, np.inf, -np.inf, np.nan], np.float32)


def binary_operands(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge values, as two flat arrays."""
    v = edge_values(dtype)
    if dtype == "complex64":
        v = v[::3]  # 19 values: 361 pairs
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.ravel(), b.ravel()
