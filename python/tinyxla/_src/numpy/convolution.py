"""1-d convolve and correlate, as a gather of sliding windows and a dot_general.

Mirrors ``jax.numpy.convolve`` / ``correlate`` (JAX lowers them to
``conv_general_dilated``, which tinyxla does not have yet): the longer operand is padded
for the mode, its windows of the shorter operand's length gathered into a matrix, and
the matrix multiplied by the (flipped, for convolve; conjugated, for correlate) shorter
one. Long products are done in column blocks so the window matrix stays small. As in
JAX, operands promote to inexact unless ``preferred_element_type`` is given.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.lax import slicing
from tinyxla._src.numpy import promotion, ufuncs
from tinyxla._src.numpy.promotion import ensure_arraylike

ArrayLike = Any

# Most elements in one block of the window matrix.
_BLOCK_ELEMENTS = 1 << 22

_WINDOW_DNUMS = slicing.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                               start_index_map=(0,))


def _windows(x: Any, start: int, length: int, width: int) -> Any:
    """The (length, width) matrix x[start + i + j]."""
    idx = lax.add(lax.broadcasted_iota(np.int32, (length, width), 0),
                  lax.broadcasted_iota(np.int32, (length, width), 1))
    if start:
        idx = lax.add(idx, lax.full((length, width), start, np.int32))
    return slicing.gather(x, lax.reshape(idx, (length, width, 1)), _WINDOW_DNUMS, (1,),
                          indices_are_sorted=True, mode="promise_in_bounds")


def _sliding_dot(x: Any, y: Any, precision: Any, preferred: Any) -> Any:
    """out[i] = sum_j x[i + j] * y[j] for i in [0, len(x) - len(y)]."""
    n, m = x.shape[0], y.shape[0]
    length = n - m + 1
    block = max(1, min(m, _BLOCK_ELEMENTS // max(length, 1)))
    out = None
    for j0 in range(0, m, block):
        w = min(block, m - j0)
        part = lax.dot_general(_windows(x, j0, length, w), lax.slice(y, (j0,), (j0 + w,)),
                               (((1,), (0,)), ((), ())), precision=precision,
                               preferred_element_type=preferred)
        out = part if out is None else lax.add(out, part)
    return out


def _conv(name: str, x: ArrayLike, y: ArrayLike, mode: str, precision: Any,
          preferred_element_type: Any) -> Any:
    x, y = ensure_arraylike(name, x, y)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = promotion.promote_dtypes_inexact(x, y)
        preferred = x.dtype
    else:
        x, y = promotion.promote_dtypes(x, y)
        preferred = dtypes.check_user_dtype_supported(preferred_element_type, name)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    reverse = False
    if name == "correlate":
        y = ufuncs.conj(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = lax.rev(y, (0,))
    m = y.shape[0]
    if mode == "valid":
        lo, hi = 0, 0
    elif mode == "same":
        lo, hi = m // 2, m - m // 2 - 1
    elif mode == "full":
        lo, hi = m - 1, m - 1
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if lo or hi:
        x = lax.pad(x, lax.full((), 0, x.dtype), [(lo, hi, 0)])
    out = _sliding_dot(x, y, precision, preferred)
    return lax.rev(out, (0,)) if reverse else out


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.convolve`` (modes 'full', 'same', 'valid')."""
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.correlate`` (modes 'full', 'same', 'valid'): v is conjugated."""
    return _conv("correlate", a, v, mode, precision, preferred_element_type)
