"""packbits and unpackbits: booleans to and from the bits of uint8.

Mirrors ``jax.numpy.packbits`` / ``unpackbits`` (bit order 'big' or 'little'; a
trailing partial byte is padded with zeros).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import ensure_arraylike
from tinyxla._src.numpy.shape import swapaxes

ArrayLike = Any


def _bits(bitorder: str) -> np.ndarray:
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = np.arange(8, dtype=np.uint8)
    return bits[::-1].copy() if bitorder == "big" else bits


def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Any:
    """Mirrors ``jax.numpy.packbits``: each 8 truth values along ``axis`` into a uint8."""
    arr = ensure_arraylike("packbits", a)
    if not (dtypes.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    bits = _bits(bitorder)
    arr = lax.convert_element_type(lax.ne(arr, lax.full_like(arr, 0)), np.uint8)
    if axis is None:
        arr = lax.reshape(arr, (arr.size,))
        axis = 0
    arr = swapaxes(arr, axis, -1)
    remainder = arr.shape[-1] % 8
    if remainder:
        arr = lax.pad(arr, lax.full((), 0, np.uint8),
                      [(0, 0, 0)] * (arr.ndim - 1) + [(0, 8 - remainder, 0)])
    arr = lax.reshape(arr, arr.shape[:-1] + (arr.shape[-1] // 8, 8))
    shifted = lax.shift_left(arr, lax.broadcast_in_dim(lax.convert_element_type(bits, np.uint8),
                                                       arr.shape, (arr.ndim - 1,)))
    packed = lax.reduce_or(shifted, (arr.ndim - 1,))
    return swapaxes(packed, axis, -1)


def unpackbits(a: ArrayLike, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """Mirrors ``jax.numpy.unpackbits``: the bits of uint8 values along ``axis``,
    truncated or zero-padded to ``count``."""
    arr = ensure_arraylike("unpackbits", a)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    bits = _bits(bitorder)
    if axis is None:
        arr = lax.reshape(arr, (arr.size,))
        axis = 0
    arr = swapaxes(arr, axis, -1)
    shape = arr.shape + (8,)
    masks = lax.broadcast_in_dim(lax.convert_element_type(
        np.left_shift(np.uint8(1), bits).astype(np.uint8), np.uint8), shape, (arr.ndim,))
    expanded = lax.broadcast_in_dim(arr, shape, tuple(range(arr.ndim)))
    unpacked = lax.convert_element_type(
        lax.gt(lax.bitwise_and(expanded, masks), lax.full(shape, 0, np.uint8)), np.uint8)
    unpacked = lax.reshape(unpacked, shape[:-2] + (shape[-2] * 8,))
    if count is not None:
        n = unpacked.shape[-1]
        if count > n:
            unpacked = lax.pad(unpacked, lax.full((), 0, np.uint8),
                               [(0, 0, 0)] * (unpacked.ndim - 1) + [(0, count - n, 0)])
        else:
            unpacked = unpacked[..., :count]
    return swapaxes(unpacked, axis, -1)
