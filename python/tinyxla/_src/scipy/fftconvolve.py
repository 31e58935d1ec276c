"""``jax.scipy.signal.fftconvolve``: n-dimensional convolution through ``jnp.fft``.

Mirrors ``jax._src.scipy.signal.fftconvolve``: both operands are transformed at the full
output shape (real inputs with rfftn / irfftn), multiplied, transformed back and cropped
to ``mode``; axes not in ``axes`` are mapped with vmap and must have equal lengths.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src.dtypes import issubdtype
from tinyxla._src.lax import slicing
from tinyxla._src.numpy import fft as jnp_fft
from tinyxla._src.numpy.promotion import (
    canonicalize_axis, check_arraylike, promote_dtypes_inexact)
from tinyxla._src.vmap import vmap

_MODES = ("same", "full", "valid")


def _fftconvolve_unbatched(in1: Any, in2: Any, mode: str) -> Any:
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             "other in every dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        # An outer product: no transform needed.
        conv = in1 * in2
    else:
        if issubdtype(in1.dtype, np.complexfloating):
            forward, inverse = jnp_fft.fftn, jnp_fft.ifftn
        else:
            forward, inverse = jnp_fft.rfftn, jnp_fft.irfftn
        conv = inverse(forward(in1, full_shape) * forward(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
    starts = tuple((f - o) // 2 for f, o in zip(full_shape, out_shape))
    return slicing.dynamic_slice(conv, starts, out_shape)


def fftconvolve(in1: Any, in2: Any, mode: str = "full",
                axes: Sequence[int] | int | None = None) -> Any:
    """``jax.scipy.signal.fftconvolve``: the convolution of ``in1`` and ``in2`` (same
    number of dimensions) computed with FFTs; ``mode`` 'full', 'same' (centred on in1) or
    'valid'; over ``axes`` only (the others are batch axes of equal length)."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    conv = functools.partial(_fftconvolve_unbatched, mode=mode)
    if axes is None:
        return conv(in1, in2)
    axes = (operator.index(axes),) if not isinstance(axes, (tuple, list)) else tuple(axes)
    axes = tuple(canonicalize_axis(ax, in1.ndim) for ax in axes)
    mapped = set(range(in1.ndim)) - set(axes)
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got {in1.shape=} {in2.shape=} "
                         f"{axes=}")
    for ax in sorted(mapped):
        conv = vmap(conv, in_axes=ax, out_axes=ax)
    return conv(in1, in2)
