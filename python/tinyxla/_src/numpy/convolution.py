"""1-d convolve and correlate on ``lax.conv_general_dilated``.

Mirrors ``jax.numpy.convolve`` / ``correlate``: the longer operand is the input, the
shorter one (flipped, for convolve; conjugated, for correlate) the kernel, padded for the
mode. As in JAX, operands promote to inexact unless ``preferred_element_type`` is given.
"""
from __future__ import annotations

from typing import Any

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.lax.convolution import conv_general_dilated
from tinyxla._src.numpy import promotion, ufuncs
from tinyxla._src.numpy.promotion import ensure_arraylike

ArrayLike = Any


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
    out = conv_general_dilated(lax.reshape(x, (1, 1, x.shape[0])),
                               lax.reshape(y, (1, 1, m)), (1,), [(lo, hi)],
                               precision=precision, preferred_element_type=preferred)
    out = lax.reshape(out, (out.shape[2],))
    return lax.rev(out, (0,)) if reverse else out


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.convolve`` (modes 'full', 'same', 'valid')."""
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.correlate`` (modes 'full', 'same', 'valid'): v is conjugated."""
    return _conv("correlate", a, v, mode, precision, preferred_element_type)
