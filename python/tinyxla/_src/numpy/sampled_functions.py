"""Functions of sampled data: gradient (finite differences), interp (piecewise linear)
and unwrap (phase unwrapping).

Mirrors ``jax.numpy.gradient`` / ``interp`` / ``unwrap``: gradient uses second-order
central differences inside and first-order ones at the edges (``edge_order`` is not
supported, as in JAX); interp accepts 'extrapolate' for ``left``/``right``.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.lax import sorting as lax_sorting
from tinyxla._src.numpy import promotion, ufuncs
from tinyxla._src.numpy.cumulative import cumsum, diff
from tinyxla._src.numpy.indexing import take
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike
from tinyxla._src.numpy.selection import where_arrays
from tinyxla._src.numpy.sorting import searchsorted

ArrayLike = Any


def _slice_axis(a: Any, start: int | None, stop: int | None, axis: int) -> Any:
    n = a.shape[axis]
    start, stop, _ = slice(start, stop).indices(n)
    lo = [0] * a.ndim
    hi = list(a.shape)
    lo[axis], hi[axis] = start, max(start, stop)
    return lax.slice(a, tuple(lo), tuple(hi))


def _gradient_along_axis(a: Any, h: Any, axis: int) -> Any:
    def sliced(start: int | None, stop: int | None) -> Any:
        return _slice_axis(a, start, stop, axis)
    sub, div, mul = ufuncs.subtract, ufuncs.true_divide, ufuncs.multiply
    upper = sub(sliced(1, 2), sliced(0, 1))
    lower = sub(sliced(-1, None), sliced(-2, -1))
    if np.ndim(h) == 0:
        inner = div(mul(sub(sliced(2, None), sliced(None, -2)), 0.5), h)
        upper, lower = div(upper, h), div(lower, h)
    elif np.ndim(h) == 1:
        if h.shape[0] != a.shape[axis]:
            raise ValueError("Spacing arrays must have the same length as the dimension along "
                             "which the gradient is calculated.")
        shape = [1] * a.ndim
        shape[axis] = h.shape[0]
        h = lax.reshape(h, tuple(shape))

        def hs(start: int | None, stop: int | None) -> Any:
            return _slice_axis(h, start, stop, axis)
        upper = div(upper, sub(hs(1, 2), hs(0, 1)))
        lower = div(lower, sub(hs(-1, None), hs(-2, -1)))
        dx1 = sub(hs(1, -1), hs(0, -2))
        dx2 = sub(hs(2, None), hs(1, -1))
        ca = div(ufuncs.negative(dx2), mul(dx1, ufuncs.add(dx1, dx2)))
        cb = div(sub(dx2, dx1), mul(dx1, dx2))
        cc = div(dx1, mul(dx2, ufuncs.add(dx1, dx2)))
        inner = ufuncs.add(ufuncs.add(mul(ca, sliced(0, -2)), mul(cb, sliced(1, -1))),
                           mul(cc, sliced(2, None)))
    else:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    parts = promotion.promote_dtypes(upper, inner, lower)
    return lax.concatenate(parts, axis)


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """Mirrors ``jax.numpy.gradient``: one array per axis (a single array for one axis)."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing = promotion.promote_dtypes_inexact(f, *varargs)
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(canonicalize_axis(operator.index(i), a.ndim)
                     for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(axes) == 0:
        return []
    if min(s for i, s in enumerate(a.shape) if i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, "
                         "at least 2 elements are required.")
    if len(spacing) == 0:
        dx: list[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        dx = list(spacing) * len(axes)
    elif len(spacing) == len(axes):
        dx = list(spacing)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for {axis=}")
    grads = [_gradient_along_axis(a, h, ax) for ax, h in zip(axes, dx)]
    return grads[0] if len(axes) == 1 else grads


def _extrapolate(name: str, value: Any) -> bool:
    if isinstance(value, str):
        if value != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but "
                             f"got: {value!r}")
        return True
    return False


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | str | None = None,
           right: ArrayLike | str | None = None, period: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.interp``: piecewise-linear interpolation on increasing xp."""
    x, xp, fp = ensure_arraylike("interp", x, xp, fp)
    if xp.shape != fp.shape or xp.ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = promotion.promote_dtypes_inexact(x, xp)
    fp, = promotion.promote_dtypes_inexact(fp)
    extrapolate_left = _extrapolate("left", left)
    extrapolate_right = _extrapolate("right", right)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = ufuncs.abs(period)
        x = ufuncs.mod(x, period)
        xp = ufuncs.mod(xp, period)
        xp, fp = lax_sorting.sort_key_val(xp, fp)
        xp = lax.concatenate(promotion.promote_dtypes(
            ufuncs.subtract(xp[-1:], period), xp, ufuncs.add(xp[:1], period)), 0)
        fp = lax.concatenate([fp[-1:], fp, fp[:1]], 0)
    n = xp.shape[0]
    i = ufuncs.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    im1 = ufuncs.subtract(i, 1)
    fi, fim1 = take(fp, i), take(fp, im1)
    xi, xim1 = take(xp, i), take(xp, im1)
    df = ufuncs.subtract(fi, fim1)
    dx = ufuncs.subtract(xi, xim1)
    delta = ufuncs.subtract(x, xim1)
    epsilon = np.spacing(np.finfo(xp.dtype).eps)
    dx0 = ufuncs.less_equal(ufuncs.abs(dx), epsilon)   # no NaN gradient where dx is ~0
    f = where_arrays(dx0, fim1, ufuncs.add(fim1, ufuncs.multiply(
        ufuncs.true_divide(delta, where_arrays(dx0, 1, dx)), df)))
    if not extrapolate_left and period is None:
        f = where_arrays(ufuncs.less(x, xp[0]), fp[0] if left is None else left, f)
    if not extrapolate_right and period is None:
        f = where_arrays(ufuncs.greater(x, xp[-1]), fp[-1] if right is None else right, f)
    return f


def unwrap(p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1,
           period: ArrayLike = 2 * np.pi) -> Any:
    """Mirrors ``jax.numpy.unwrap``: removes jumps larger than ``discont`` (default
    period / 2) by adding multiples of ``period``."""
    p = ensure_arraylike("unwrap", p)
    p, period = promotion.promote_dtypes(p, period)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    axis = canonicalize_axis(axis, p.ndim)
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = ufuncs.true_divide(period, 2)
    if dtypes.issubdtype(p.dtype, np.integer):
        interval = ufuncs.floor_divide(period, 2)
    else:
        interval = ufuncs.true_divide(period, 2)
    dd = diff(p, axis=axis)
    ddmod = ufuncs.subtract(ufuncs.mod(ufuncs.add(dd, interval), period), interval)
    ddmod = where_arrays(ufuncs.logical_and(ufuncs.equal(ddmod, ufuncs.negative(interval)),
                                            ufuncs.greater(dd, 0)), interval, ddmod)
    correction = where_arrays(ufuncs.less(ufuncs.abs(dd), discont), 0,
                              ufuncs.subtract(ddmod, dd))
    rest = ufuncs.add(_slice_axis(p, 1, None, axis), cumsum(correction, axis=axis))
    first, rest = promotion.promote_dtypes(_slice_axis(p, 0, 1, axis), rest)
    return lax.concatenate([first, rest], axis)
