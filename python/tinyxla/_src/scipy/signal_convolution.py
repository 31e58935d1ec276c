"""``jax.scipy.signal``'s direct convolutions: ``convolve``, ``correlate``, ``convolve2d``
and ``correlate2d``, n-dimensional, on ``lax.conv_general_dilated``.

Mirrors ``jax._src.scipy.signal``: the larger operand is the input, the other one
(flipped) the kernel of a one-batch, one-feature convolution padded for the mode.
``method='fft'`` is ``fftconvolve``'s job (the FFT module); 'auto' is 'direct', as in JAX.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src.lax import lax
from tinyxla._src.lax.convolution import conv_general_dilated
from tinyxla._src.numpy.promotion import ensure_arraylike, promote_dtypes_inexact
from tinyxla._src.numpy.shape import flip
from tinyxla._src.numpy.ufuncs import conj

_MODES = ("full", "same", "valid")


def _convolve_nd(in1: Any, in2: Any, mode: str, *, precision: Any) -> Any:
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = in2.shape
    if swap:
        in1, in2 = in2, in1
    shape = in2.shape
    in2 = flip(in2)
    if mode == "valid":
        padding = [(0, 0)] * len(shape)
    elif mode == "same":
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
                   for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    out = conv_general_dilated(lax.expand_dims(in1, (0, 1)), lax.expand_dims(in2, (0, 1)),
                               (1,) * len(shape), padding, precision=precision)
    return lax.reshape(out, out.shape[2:])


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """Mirrors ``jax.scipy.signal.convolve``: n-dimensional convolution ('full', 'same',
    'valid'); ``method='fft'`` needs the FFT module's ``fftconvolve``."""
    in1, in2 = ensure_arraylike("convolve", in1, in2)
    if method == "fft":
        raise NotImplementedError("convolve(method='fft') is fftconvolve's (not built yet)")
    if method not in ("direct", "auto"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _convolve_nd(in1, in2, mode, precision=precision)


def _check_2d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: float) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: float = 0, precision: Any = None) -> Any:
    """Mirrors ``jax.scipy.signal.convolve2d`` (only ``boundary='fill'`` with 0)."""
    in1, in2 = ensure_arraylike("convolve2d", in1, in2)
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """Mirrors ``jax.scipy.signal.correlate``: ``convolve`` with ``in2`` flipped and
    conjugated."""
    in1, in2 = ensure_arraylike("correlate", in1, in2)
    return convolve(in1, flip(conj(in2)), mode, precision=precision, method=method)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: float = 0, precision: Any = None) -> Any:
    """Mirrors ``jax.scipy.signal.correlate2d`` (only ``boundary='fill'`` with 0),
    including JAX's orientation of the result when ``in2`` is the larger operand."""
    in1, in2 = ensure_arraylike("correlate2d", in1, in2)
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    same_shape = all(s1 == s2 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "same" or (mode == "valid" and not (swap and not same_shape)) or \
            (mode not in ("same", "valid") and not swap):
        return flip(_convolve_nd(flip(in1), conj(in2), mode, precision=precision))
    out = _convolve_nd(flip(in2), conj(in1), mode, precision=precision)
    return out if mode == "valid" else conj(out)
