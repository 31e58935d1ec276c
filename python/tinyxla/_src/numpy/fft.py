"""``jax.numpy.fft``: NumPy's discrete Fourier transforms over ``lax.fft``.

Mirrors ``jax._src.numpy.fft``: the n-dimensional transforms move the transformed axes to
the end, crop or zero-pad them to ``s``, apply ``lax.fft`` (at most 3 axes at a time; more
axes are done in groups) and scale by ``norm``. Results have JAX's dtypes: complex64 (or
complex128 under x64) for the complex and real-to-complex transforms, float32 (float64)
for the complex-to-real ones.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.lax.fft import FftType, fft as lax_fft
from tinyxla._src.numpy import reductions, ufuncs
from tinyxla._src.numpy.creation import arange, array, asarray
from tinyxla._src.numpy.promotion import ensure_arraylike, promote_dtypes_inexact
from tinyxla._src.numpy.rearranging import roll
from tinyxla._src.numpy.shape import moveaxis

Shape = Sequence[int]

_NORMS = ("backward", "ortho", "forward")


def _norm_factor(s: Sequence[int], dtype: Any, func_name: str, norm: str) -> Any:
    """The factor ``norm`` asks of the unnormalized (forward) or 1/N-normalized (inverse)
    result, computed in the result's dtype as JAX does."""
    (sizes,) = promote_dtypes_inexact(array(s, dtype=dtype))
    total = reductions.prod(sizes)
    inverse = func_name.startswith("i")
    if norm == "ortho":
        return ufuncs.sqrt(total) if inverse else 1 / ufuncs.sqrt(total)
    return total if inverse else 1 / total


def _resize_trailing(arr: Any, sizes: Sequence[int]) -> Any:
    """``arr`` with its trailing axes cropped or zero-padded to ``sizes``."""
    k = len(sizes)
    lead = tuple(arr.shape[:arr.ndim - k])
    have = tuple(arr.shape[arr.ndim - k:])
    if have == tuple(sizes):
        return arr
    keep = lead + tuple(min(h, s) for h, s in zip(have, sizes))
    arr = lax.slice(arr, (0,) * arr.ndim, keep)
    zero = lax._convert_element_type(0, arr.dtype, False)
    config = [(0, 0, 0)] * len(lead) + [(0, s - c, 0) for s, c in zip(sizes, keep[len(lead):])]
    return lax.pad(arr, zero, config)


def _fft_nd(arr: Any, fft_type: FftType, s: Sequence[int]) -> Any:
    """``lax.fft`` over the last len(s) axes, in groups of at most 3: for a forward
    transform the innermost group first, for an inverse one the outer groups first (an
    IRFFT's real axis is the innermost)."""
    if len(s) <= 3:
        return lax_fft(arr, fft_type, tuple(s))
    n = 2 if len(s) == 4 else 3
    outer = tuple(range(arr.ndim - len(s), arr.ndim - n))
    moved = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if fft_type in (FftType.RFFT, FftType.FFT):
        arr = lax_fft(arr, fft_type, tuple(s)[-n:])
        arr = moveaxis(arr, outer, moved)
        arr = _fft_nd(arr, FftType.FFT, s[:-n])
        return moveaxis(arr, moved, outer)
    arr = moveaxis(arr, outer, moved)
    arr = _fft_nd(arr, FftType.IFFT, s[:-n])
    arr = moveaxis(arr, moved, outer)
    return lax_fft(arr, fft_type, tuple(s)[-n:])


def _fft_core(func_name: str, fft_type: FftType, a: Any, s: Shape | None,
              axes: Sequence[int] | None, norm: str | None) -> Any:
    full_name = f"jax.numpy.fft.{func_name}"
    arr = ensure_arraylike(full_name, a)
    if s is not None:
        s = tuple(map(operator.index, s))
        if any(x <= 0 for x in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if orig_axes is not None:
        axes = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = moveaxis(arr, orig_axes, axes)
    if s is not None:
        sizes = list(s)
        if fft_type == FftType.IRFFT:
            sizes[-1] = sizes[-1] // 2 + 1
        arr = _resize_trailing(arr, sizes)
    else:
        s = [arr.shape[ax] for ax in axes]
        if fft_type == FftType.IRFFT and s:
            s[-1] = max(0, 2 * (s[-1] - 1))
    if norm is not None and norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward",'
                         '"ortho" or "forward".')
    out = _fft_nd(arr, fft_type, s)
    if norm is not None and norm != "backward":
        out = out * _norm_factor(s, out.dtype, func_name, norm)
    if orig_axes is not None:
        out = moveaxis(out, axes, orig_axes)
    return out


def _axis_check_1d(func_name: str, axis: Any) -> None:
    full_name = f"jax.numpy.fft.{func_name}"
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"{full_name} does not support multiple axes. Please use "
                         f"{full_name}n. Got axis = {axis!r}.")


def _fft_core_1d(func_name: str, fft_type: FftType, a: Any, n: int | None, axis: int | None,
                 norm: str | None) -> Any:
    _axis_check_1d(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n],
                     None if axis is None else [axis], norm)


def _fft_core_2d(func_name: str, fft_type: FftType, a: Any, s: Shape | None,
                 axes: Sequence[int], norm: str | None) -> Any:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. "
                         f"Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """``jax.numpy.fft.fft``: the 1-D discrete Fourier transform along ``axis``."""
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """``jax.numpy.fft.ifft``: the 1-D inverse discrete Fourier transform."""
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """``jax.numpy.fft.rfft``: the non-negative frequencies of a real input's transform."""
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """``jax.numpy.fft.irfft``: the real signal of length ``n`` (default
    ``2 * (m - 1)``) whose half spectrum is ``a``."""
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """``jax.numpy.fft.hfft``: the real transform of a Hermitian-symmetric signal given by
    its first half."""
    conj_a = ufuncs.conj(a)
    _axis_check_1d("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """``jax.numpy.fft.ihfft``: the inverse of ``hfft``."""
    _axis_check_1d("ihfft", axis)
    arr = asarray(a)
    nn = arr.shape[axis] if n is None else n
    out = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return ufuncs.conj(out) * (1 / nn)


def fftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """``jax.numpy.fft.fftn``: the n-D transform over ``axes`` (default: all, or the last
    ``len(s)``)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """``jax.numpy.fft.ifftn``: the n-D inverse transform."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """``jax.numpy.fft.rfftn``: the n-D transform of a real input, halved on the last
    axis."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Shape | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """``jax.numpy.fft.irfftn``: the inverse of ``rfftn``."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    """``jax.numpy.fft.fft2``: ``fftn`` over two axes."""
    return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """``jax.numpy.fft.ifft2``: ``ifftn`` over two axes."""
    return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """``jax.numpy.fft.rfft2``: ``rfftn`` over two axes."""
    return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    """``jax.numpy.fft.irfft2``: ``irfftn`` over two axes."""
    return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(func_name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{func_name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{func_name} only takes a single "
                         f"value. Got d = {list(d)}.")


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """``jax.numpy.fft.fftfreq``: the sample frequencies ``[0, 1, ..., -1] / (d n)``."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtype
    dtype = dtypes.finfo(dtypes.to_inexact_dtype(dtype)).dtype
    i = arange(n, dtype=dtype, device=device)
    k = (i + n // 2) % n - n // 2
    result = k.astype(dtype) / array(d * n, dtype=dtype, device=device)
    return result.astype(out_dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """``jax.numpy.fft.rfftfreq``: the non-negative sample frequencies of ``rfft``."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("rfftfreq", n, d)
    k = arange(0, n // 2 + 1, dtype=dtype)
    result = k / array(d * n, dtype=dtype)
    return result if device is None else result.to_device(device)


def _shifts(x: Any, axes: None | int | Sequence[int], sign: int) -> tuple[Any, Any]:
    if axes is None:
        axes = tuple(range(x.ndim))
        return [sign * (dim // 2) for dim in x.shape], axes
    if isinstance(axes, int):
        return sign * (x.shape[axes] // 2), axes
    return [sign * (x.shape[ax] // 2) for ax in axes], axes


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """``jax.numpy.fft.fftshift``: the zero frequency moved to the centre."""
    x = ensure_arraylike("fftshift", x)
    shift, axes = _shifts(x, axes, 1)
    return roll(x, shift, axes)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """``jax.numpy.fft.ifftshift``: the inverse of ``fftshift``."""
    x = ensure_arraylike("ifftshift", x)
    shift, axes = _shifts(x, axes, -1)
    return roll(x, shift, axes)
