"""``jax.nn`` activation and normalisation functions, over jnp and lax. As in JAX, the
elementwise ones are jitted (one fused kernel, and the same rounding as under an outer
jit), and ``relu``, ``relu6`` and ``softmax`` carry JAX's custom JVP rules (``relu'(0) = 0``;
softmax's tangent ``y * (t - sum(y * t))``)."""
from __future__ import annotations

import functools
import operator
import warnings
from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.api import jit
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy import creation, reductions, selection, ufuncs
from tinyxla._src.numpy.promotion import (
    canonicalize_axis, check_arraylike, ensure_array, ensure_arraylike, promote_args_inexact)
from tinyxla._src.scipy.logsumexp import logsumexp

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "identity", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp",
    "logsumexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign",
    "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus", "standardize",
    "swish"]


@jit
def identity(x: Any) -> Any:
    """Mirrors ``jax.nn.identity``: returns ``x``."""
    return ensure_arraylike("identity", x)


@custom_jvp
@jit
def relu(x: Any) -> Any:
    """Mirrors ``jax.nn.relu``: ``max(x, 0)``, with derivative 0 at 0 (JAX's choice)."""
    return ufuncs.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@custom_jvp
@jit
def relu6(x: Any) -> Any:
    """Mirrors ``jax.nn.relu6``: ``min(max(x, 0), 6)``, derivative 0 at both kinks."""
    return ufuncs.minimum(ufuncs.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


@jit
def softplus(x: Any) -> Any:
    """Mirrors ``jax.nn.softplus``: ``log(1 + exp(x))`` as ``logaddexp(x, 0)``."""
    return ufuncs.logaddexp(x, 0)


@jit
def soft_sign(x: Any) -> Any:
    """Mirrors ``jax.nn.soft_sign``: ``x / (|x| + 1)``."""
    x_arr = ensure_arraylike("soft_sign", x)
    return x_arr / (ufuncs.abs(x_arr) + 1)


@functools.partial(jit, inline=True)
def sigmoid(x: Any) -> Any:
    """Mirrors ``jax.nn.sigmoid``: ``1 / (1 + exp(-x))`` (``lax.logistic``)."""
    return lax.logistic(x)


@jit
def silu(x: Any) -> Any:
    """Mirrors ``jax.nn.silu`` (alias ``swish``): ``x * sigmoid(x)``."""
    x_arr = ensure_arraylike("silu", x)
    return x_arr * sigmoid(x_arr)


swish = silu


@jit
def mish(x: Any) -> Any:
    """Mirrors ``jax.nn.mish``: ``x * tanh(softplus(x))``."""
    x_arr = ensure_arraylike("mish", x)
    return x_arr * ufuncs.tanh(softplus(x_arr))


@jit
def log_sigmoid(x: Any) -> Any:
    """Mirrors ``jax.nn.log_sigmoid``: ``-softplus(-x)``."""
    x_arr = ensure_arraylike("log_sigmoid", x)
    return -softplus(-x_arr)


@jit
def elu(x: Any, alpha: Any = 1.0) -> Any:
    """Mirrors ``jax.nn.elu``: ``x`` above 0, ``alpha * expm1(x)`` below; the unused branch
    is evaluated at 0 so its gradient stays finite."""
    x_arr = ensure_arraylike("elu", x)
    safe_x = selection.where(x_arr > 0, 0., x_arr)
    return selection.where(x_arr > 0, x_arr, alpha * ufuncs.expm1(safe_x))


@jit
def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """Mirrors ``jax.nn.leaky_relu``: ``x`` where ``x >= 0``, else ``negative_slope * x``."""
    x_arr = ensure_arraylike("leaky_relu", x)
    return selection.where(x_arr >= 0, x_arr, negative_slope * x_arr)


@jit
def hard_tanh(x: Any) -> Any:
    """Mirrors ``jax.nn.hard_tanh``: ``x`` clipped to ``[-1, 1]``."""
    x_arr = ensure_arraylike("hard_tanh", x)
    return selection.where(x_arr > 1, 1, selection.where(x_arr < -1, -1, x_arr))


@jit
def celu(x: Any, alpha: Any = 1.0) -> Any:
    """Mirrors ``jax.nn.celu``: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    return ufuncs.maximum(x, 0.0) + alpha * ufuncs.expm1(ufuncs.minimum(x, 0.0) / alpha)


@jit
def selu(x: Any) -> Any:
    """Mirrors ``jax.nn.selu``: ``scale * elu(x, alpha)`` with the self-normalising constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def gelu(x: Any, approximate: bool = True) -> Any:
    """Mirrors ``jax.nn.gelu``: the tanh approximation by default, or the exact
    ``x/2 * erfc(-x/√2)`` with ``approximate=False``. Not jitted, as in JAX."""
    x_arr, = promote_args_inexact("gelu", x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x_arr.dtype)
        cdf = 0.5 * (1.0 + ufuncs.tanh(sqrt_2_over_pi * (x_arr + 0.044715 * (x_arr ** 3))))
        return x_arr * cdf
    sqrt_half = np.sqrt(0.5).astype(x_arr.dtype)
    return creation.array(0.5 * x_arr * lax.erfc(-x_arr * sqrt_half), dtype=x_arr.dtype)


@jit
def squareplus(x: Any, b: Any = 4) -> Any:
    """Mirrors ``jax.nn.squareplus``: ``(x + sqrt(x² + b)) / 2``."""
    x, b = ensure_arraylike("squareplus", x, b)
    return (x + ufuncs.sqrt(ufuncs.square(x) + b)) / 2


@jit
def sparse_plus(x: Any) -> Any:
    """Mirrors ``jax.nn.sparse_plus``: 0 below -1, ``x`` above 1, ``(x + 1)² / 4`` between."""
    x = ensure_arraylike("sparse_plus", x)
    return selection.where(x <= -1.0, 0.0, selection.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit
def sparse_sigmoid(x: Any) -> Any:
    """Mirrors ``jax.nn.sparse_sigmoid``: ``clip(x + 1, 0, 2) / 2``."""
    return 0.5 * ufuncs.clip(x + 1.0, 0.0, 2.0)


@custom_jvp
@jit
def log1mexp(x: Any) -> Any:
    """Mirrors ``jax.nn.log1mexp``: ``log(1 - exp(-x))``, through ``expm1`` below log 2 and
    ``log1p`` above, with derivative ``1 / expm1(x)``."""
    x = ensure_arraylike("log1mexp", x)
    c = ufuncs.log(2.0)
    return selection.where(x < c, ufuncs.log(-ufuncs.expm1(-x)), ufuncs.log1p(-ufuncs.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / ufuncs.expm1(x))


@functools.partial(jit, static_argnames=("axis",))
def glu(x: Any, axis: int = -1) -> Any:
    """Mirrors ``jax.nn.glu``: splits ``x`` in two halves along ``axis`` and returns
    ``first * sigmoid(second)``."""
    x_arr = ensure_arraylike("glu", x)
    size = x_arr.shape[axis]
    assert size % 2 == 0, "axis size must be divisible by 2"
    axis = canonicalize_axis(axis, x_arr.ndim)
    half = size // 2
    start = [0] * x_arr.ndim
    limit = list(x_arr.shape)
    limit[axis] = half
    x1 = lax.slice(x_arr, start, limit)
    start[axis], limit[axis] = half, size
    x2 = lax.slice(x_arr, start, limit)
    return x1 * sigmoid(x2)


@functools.partial(jit, static_argnames=("axis", "keepdims"))
def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """Mirrors ``jax.nn.logmeanexp``: ``logsumexp(x) - log(n)``, n the count reduced over."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    count = reductions._count(ensure_array(x), axis, keepdims, where, lse.dtype)
    return lse - ufuncs.log(count)


@functools.partial(jit, static_argnames=("axis",))
def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """Mirrors ``jax.nn.log_softmax``: ``x - logsumexp(x)`` along ``axis`` (an int, a tuple
    or None), shifted by the gradient-stopped max; masked-out elements give ``-inf``."""
    x_arr = ensure_arraylike("log_softmax", x)
    x_max = reductions.max(x_arr, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x_arr if where is None else selection.where(where, x_arr, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = ufuncs.log(
        reductions.sum(ufuncs.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        return selection.where(where, result, -np.inf)
    return result


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """Mirrors ``jax.nn.softmax``: ``exp(x) / sum(exp(x))`` along ``axis``, masked-out
    elements 0, with JAX's custom JVP ``y * (t - sum(y * t))`` (so an ``-inf`` input has a
    zero, not NaN, gradient)."""
    return _softmax(x, axis, where, -np.inf)


def _softmax_value(x: Any, axis: Any, where: Any, initial: Any) -> Any:
    x_max = reductions.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else selection.where(where, x, initial)
    unnormalized = ufuncs.exp(x_safe - x_max)
    result = unnormalized / reductions.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = selection.where(where, result, 0)
    return result


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x: Any, axis: Any = -1, where: Any = None, initial: Any = -np.inf) -> Any:
    return _softmax_value(x, axis, where, initial)


@_softmax.defjvp
def _softmax_jvp(axis: Any, primals: tuple, tangents: tuple) -> tuple:
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax(x, axis, where, initial)
    return y, y * (x_dot - reductions.sum(y * x_dot, axis, where=where, keepdims=True))


@functools.partial(jit, static_argnames=("axis", "algorithm"))
def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """Mirrors ``jax.nn.standardize``: ``(x - mean) / sqrt(variance + epsilon)`` along
    ``axis``; the default ``"fast"`` variance is ``mean(x²) - mean(x)²`` clipped at 0,
    ``"stable"`` the two-pass ``mean((x - mean)²)``."""
    check_arraylike("standardize", x)
    if mean is None:
        mean = reductions.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = reductions.mean(ufuncs.square(ufuncs.subtract(x, mean)), axis,
                                       keepdims=True, where=where)
        elif algorithm == "fast":
            variance = (reductions.mean(ufuncs.square(x), axis, keepdims=True, where=where)
                        - ufuncs.square(mean))
            variance = ufuncs.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return ufuncs.subtract(x, mean) * lax.rsqrt(variance + epsilon)


@functools.partial(jit, static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x: Any, num_classes: int, *, dtype: Any, axis: int) -> Any:
    output_pos_axis = canonicalize_axis(axis, x.ndim + 1)
    lhs = lax.expand_dims(x, (output_pos_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(output_pos_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, rhs_shape, output_pos_axis)
    return (lhs == rhs).astype(dtype)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """Mirrors ``jax.nn.one_hot``: a new axis ``axis`` of length ``num_classes`` holding 1
    at each index of ``x``; indices outside ``[0, num_classes)`` give all zeros. Named
    (vmap/pmap) axes are not supported."""
    num_classes = operator.index(num_classes)
    x_arr = ensure_array(x)
    if not dtypes.isdtype(x_arr.dtype, "integral"):
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x_arr.dtype}",
                      DeprecationWarning, stacklevel=2)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    return _one_hot(x_arr, num_classes, dtype=dtype, axis=operator.index(axis))


@jit
def hard_sigmoid(x: Any) -> Any:
    """Mirrors ``jax.nn.hard_sigmoid``: ``relu6(x + 3) / 6``."""
    return relu6(x + 3.) / 6.


@jit
def hard_silu(x: Any) -> Any:
    """Mirrors ``jax.nn.hard_silu`` (alias ``hard_swish``): ``x * hard_sigmoid(x)``."""
    x_arr = ensure_arraylike("hard_silu", x)
    return x_arr * hard_sigmoid(x_arr)


hard_swish = hard_silu
