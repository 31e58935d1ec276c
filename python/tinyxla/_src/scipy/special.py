"""``jax.scipy.special``: special functions over the lax primitives, with JAX's custom
derivative rules where the naive ones are undefined (``xlogy`` at ``x = 0``, ``logit``)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy import selection, ufuncs
from tinyxla._src.numpy.promotion import ensure_array, promote_args_inexact
from tinyxla._src.scipy.logsumexp import logsumexp

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammaln", "logit",
           "logsumexp", "ndtr", "ndtri", "xlog1py", "xlogy"]


def _inexact_unary(name: str, prim: Any, doc: str) -> Any:
    """A special function that is one lax primitive on its input promoted to inexact."""
    def fn(x: Any) -> Any:
        x, = promote_args_inexact(name, x)
        return prim(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Mirrors ``jax.scipy.special.{name}``{doc}."
    return fn


gammaln = _inexact_unary("gammaln", lax.lgamma, ": ``log|Γ(x)|`` (``lax.lgamma``)")
digamma = _inexact_unary("digamma", lax.digamma, ": ``d/dx log Γ(x)`` (``lax.digamma``)")
erf = _inexact_unary("erf", lax.erf, " (``lax.erf``)")
erfc = _inexact_unary("erfc", lax.erfc, ": ``1 - erf(x)`` without cancellation (``lax.erfc``)")
erfinv = _inexact_unary("erfinv", lax.erf_inv, " (``lax.erf_inv``); ±1 give ±inf")
expit = _inexact_unary("expit", lax.logistic, ": the logistic sigmoid ``1 / (1 + exp(-x))``")


@custom_jvp
def logit(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.logit``: ``log(x / (1 - x))``, derivative ``1 / (x (1 - x))``."""
    x, = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(lax._const(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(lax._const(x, 1), x))))


def _x_times(name: str, log: Callable[[Any], Any], x_dlog: Callable[[Any, Any], Any],
             doc: str) -> Callable[[Any, Any], Any]:
    """``x * log(y)``, 0 where ``x == 0`` (NaN in ``y`` still propagates, as in scipy),
    with its derivative defined at ``x == 0``: ``dx log(y) + dy x_dlog(x, y)``."""

    def f(x: Any, y: Any) -> Any:
        x, y = promote_args_inexact(name, x, y)
        x_ok = (x != 0.) | ufuncs.isnan(y)
        return selection.where(x_ok, lax.mul(x, log(y)), lax.full_like(x, 0))

    def jvp(primals: tuple, tangents: tuple) -> tuple:
        (x, y), (x_dot, y_dot) = primals, tangents
        result = fn(x, y)
        return result, (x_dot * log(y) + y_dot * x_dlog(x, y)).astype(result.dtype)

    f.__name__ = f.__qualname__ = name  # custom_jvp_call shows it in jaxprs
    f.__doc__ = doc
    jvp.__name__ = jvp.__qualname__ = f"_{name}_jvp"
    fn = custom_jvp(f)
    fn.defjvp(jvp)
    return fn


xlogy = _x_times("xlogy", lax.log, lambda x, y: x / y,
                 "Mirrors ``jax.scipy.special.xlogy``: ``x * log(y)``, 0 where ``x == 0`` "
                 "(NaN in ``y`` still propagates, as in scipy); its derivative is defined at "
                 "``x == 0``.")
xlog1py = _x_times("xlog1py", lax.log1p, lambda x, y: x / (1 + y),
                   "Mirrors ``jax.scipy.special.xlog1py``: ``x * log1p(y)``, 0 where "
                   "``x == 0``.")


@custom_jvp
def _xlogx(x: Any) -> Any:
    """``x log x`` with the derivative ``log x + 1`` (JAX's ``_xlogx``)."""
    return xlogy(x, x)


def _xlogx_jvp(primals: tuple, tangents: tuple) -> tuple:
    x, = primals
    x_dot, = tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


_xlogx.defjvp(_xlogx_jvp)


def entr(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.entr``: ``-x log x`` for ``x > 0``, 0 at 0, ``-inf`` below."""
    x, = promote_args_inexact("entr", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(lax.lt(x, lax._const(x, 0)), lax.full_like(x, -np.inf),
                      lax.neg(_xlogx(x)))


def _check_real_float(name: str, x: Any) -> Any:
    x = ensure_array(x)
    if x.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    return x


def ndtr(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.ndtr``: the standard normal CDF, through ``erf`` near 0
    and ``erfc`` in the tails (float32/float64 only, as in JAX)."""
    x = _check_real_float("ndtr", x)
    dtype = x.dtype.type
    # numpy scalars of x's dtype, not weak constants: the result is strongly typed, as in JAX.
    half_sqrt_2 = dtype(0.5) * np.sqrt(2., dtype=dtype)
    w = x * half_sqrt_2
    z = lax.abs(w)
    y = lax.select(lax.lt(z, half_sqrt_2), dtype(1.) + lax.erf(w),
                   lax.select(lax.gt(w, dtype(0.)), dtype(2.) - lax.erfc(z), lax.erfc(z)))
    return dtype(0.5) * y


def ndtri(p: Any) -> Any:
    """The standard normal quantile, as ``jax.scipy.special.ndtri`` (float32/float64 only).
    Differs from JAX in the method: ``sqrt(2) erfinv(2p - 1)`` rather than Cephes' rational
    approximation (so relative accuracy in the far lower tail, p < 1e-6 in float32, is
    lower)."""
    p = _check_real_float("ndtri", p)
    dtype = p.dtype.type
    return np.sqrt(2., dtype=dtype) * lax.erf_inv(dtype(2.) * p - dtype(1.))
