"""logaddexp2: log2(2**x1 + 2**x2) without overflow.

Mirrors ``jax.numpy.logaddexp2``, with JAX's custom JVP rule: the tangent of x_i is
weighted by 2**(x_i - out) (+inf replaced by 0), so a tie splits it evenly.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.numpy.ufuncs import _wrap_between, logaddexp_tangent

ArrayLike = Any


def logaddexp2(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.logaddexp2``."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    return _logaddexp2(x1, x2)


def _logaddexp2_impl(x1: Any, x2: Any) -> Any:
    amax = lax.max(x1, x2)
    invln2 = lax.full_like(amax, 1 / np.log(2))
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, lax.full_like(amax, 2)))
        out = lax.add(amax, lax.mul(invln2, lax.log1p(lax.exp2(delta))))
        return lax.complex(lax.real(out), _wrap_between(lax.imag(out), np.pi / np.log(2)))
    delta = lax.sub(x1, x2)
    neg_abs_delta = lax.sub(lax.min(x1, x2), amax)
    smooth = lax.add(amax, lax.mul(invln2, lax.log1p(lax.exp2(neg_abs_delta))))
    # NaNs, or infinities of one sign.
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), smooth)


@custom_jvp
def _logaddexp2(x1: Any, x2: Any) -> Any:
    return _logaddexp2_impl(x1, x2)


@_logaddexp2.defjvp
def _logaddexp2_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    out = _logaddexp2_impl(*primals)
    return out, logaddexp_tangent(lax.exp2, primals, tangents, out)
