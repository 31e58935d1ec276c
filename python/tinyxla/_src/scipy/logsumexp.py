"""Log-sum-exp, shared by ``jax.nn.logsumexp`` and ``jax.scipy.special.logsumexp``
(JAX keeps it in ``jax._src.ops.special`` for the same reason)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import reductions, selection, ufuncs
from tinyxla._src.numpy.promotion import promote_args_inexact


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """Mirrors ``jax.scipy.special.logsumexp`` / ``jax.nn.logsumexp``: ``log(sum(b * exp(a)))``
    over ``axis``, shifted by the (gradient-stopped) finite maximum so that it neither
    overflows nor turns an all ``-inf`` slice into NaN. With ``return_sign`` it returns
    ``(log|sum|, sign(sum))``; without it a negative sum (possible only with ``b``) is NaN."""
    if where is not None:
        a = selection.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = promote_args_inexact("logsumexp", a, b)
        a_arr = selection.where(b_arr != 0, a_arr, -np.inf)
    else:
        a_arr, = promote_args_inexact("logsumexp", a)
        b_arr = None
    dims = reductions._reduction_dims(np.ndim(a_arr), reductions._ensure_optional_axes(axis))
    amax = reductions.max(ufuncs.real(a_arr), axis=dims, keepdims=keepdims, where=where,
                          initial=-np.inf)
    # The shift is a constant for differentiation; an infinite max (all -inf, or +inf)
    # shifts by 0 so that exp(a - amax) stays well defined.
    amax = lax.stop_gradient(lax.select(ufuncs.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a_arr, amax_with_dims.astype(a_arr.dtype)))
    if b_arr is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = reductions.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    is_complex = dtypes.issubdtype(a_arr.dtype, np.complexfloating)
    if return_sign or not is_complex:
        sumexp = ufuncs.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b_arr is not None and not is_complex:
        out = selection.where(sign < 0, np.array(np.nan, dtype=out.dtype), out)
    return out
