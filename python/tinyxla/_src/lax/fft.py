"""The ``fft`` primitive of ``jax.lax``: discrete Fourier transforms over the trailing
``len(fft_lengths)`` (1 to 3) axes, of type ``FftType`` FFT / IFFT (complex to complex;
the inverse normalized by ``1/prod(fft_lengths)``), RFFT (float ``[..., n]`` to the
``n // 2 + 1`` non-negative frequencies) and IRFFT (its inverse).

Mirrors ``jax._src.lax.fft``. It runs as one C++ kernel (eagerly and as an ``fft`` graph
node; the project's own mixed-radix and Bluestein kernels, ``cpp/src/cpu/fft.cc``). The
transform is linear: its JVP is itself, its transpose the same transform (the DFT matrix
is symmetric) or, for the real ones, the other real transform with JAX's Hermitian mask.
Differs from JAX: an IRFFT whose last operand dimension is not ``n // 2 + 1`` raises a
ValueError with XLA's text (JAX raises MLIR's verifier error at lowering).
"""
from __future__ import annotations

import enum
import functools
import math
from typing import Any, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import dtypes
from tinyxla._src.array import Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.lax.conversion import convert_element_type
from tinyxla._src.lax.eager import _operand, _reject, _result
from tinyxla._src.lax.elementwise import conj, mul
from tinyxla._src.lax.shape_ops import broadcast_in_dim


class FftType(enum.IntEnum):
    """``jax.lax.FftType``: which transform ``fft`` computes."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _str_to_fft_type(s: str) -> FftType:
    names = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT,
             "irfft": FftType.IRFFT}
    if s.lower() in names and s in (s.lower(), s.upper()):
        return names[s.lower()]
    raise ValueError(f"Unknown FFT type '{s}'")


def _complex_dtype(dtype: Any) -> np.dtype:
    return np.dtype(np.complex128 if np.dtype(dtype) in (np.float64, np.complex128)
                    else np.complex64)


def _real_dtype(dtype: Any) -> np.dtype:
    return np.finfo(np.dtype(dtype)).dtype


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """``jax.lax.fft``: the transform ``fft_type`` of ``x`` over its last
    ``len(fft_lengths)`` axes. Integer and bool operands are converted to the default
    inexact (RFFT) or complex (other types) dtype first, as in JAX."""
    if isinstance(fft_type, str):
        typ = _str_to_fft_type(fft_type)
    elif isinstance(fft_type, FftType):
        typ = fft_type
    else:
        raise TypeError(f"Unknown FFT type value '{fft_type}'")
    dtype = dtypes.dtype(x)
    if typ == FftType.RFFT:
        if dtypes.issubdtype(dtype, np.complexfloating):
            raise ValueError("only real valued inputs supported for rfft")
        x = convert_element_type(x, dtypes.to_inexact_dtype(dtype))
    else:
        x = convert_element_type(x, dtypes.to_complex_dtype(dtype))
    if len(fft_lengths) == 0:
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=tuple(int(n) for n in fft_lengths))


def _fft_abstract_eval(x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]
                       ) -> ShapedArray:
    shape, dtype, k = tuple(x.shape), np.dtype(x.dtype), len(fft_lengths)
    if k > len(shape):
        raise ValueError(f"FFT input shape {shape} must have at least as many input "
                         f"dimensions as fft_lengths {fft_lengths}.")
    if fft_type == FftType.RFFT:
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {dtype}")
        if shape[-k:] != fft_lengths:
            raise ValueError(f"RFFT input shape {shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
        return ShapedArray(shape[:-k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,),
                           _complex_dtype(dtype))
    if not dtypes.issubdtype(dtype, np.complexfloating):
        name = "IRFFT" if fft_type == FftType.IRFFT else "FFT"
        raise ValueError(f"{name} input must be complex64 or complex128, got {dtype}")
    if fft_type == FftType.IRFFT:
        if shape[-k:-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {shape} minor dimensions must be equal to "
                             f"all except the last fft_length, got {fft_lengths=}")
        if shape[-1] != fft_lengths[-1] // 2 + 1:
            raise ValueError("IRFFT requires innermost dimension to be compatible with "
                             f"fft_length[-1]/2+1. Got: {shape[-1]} but fft_length is "
                             f"{fft_lengths[-1]}.")
        return ShapedArray(shape[:-k] + fft_lengths, _real_dtype(dtype))
    if shape[-k:] != fft_lengths:
        raise ValueError(f"FFT input shape {shape} minor dimensions must be equal to "
                         f"fft_lengths {fft_lengths}")
    return ShapedArray(shape, dtype)


def _attrs(fft_type: FftType, fft_lengths: tuple[int, ...]) -> dict:
    return {"fft_type": FftType(fft_type).name, "fft_lengths": list(fft_lengths)}


@functools.lru_cache(maxsize=256)
def _eager_op(fft_type: FftType, fft_lengths: tuple[int, ...]) -> Any:
    return _core.make_op("fft", _attrs(fft_type, fft_lengths))


def _fft_impl(x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Array:
    x = x if type(x) is Array else _operand(fft_p, 0, x)
    params = dict(fft_type=fft_type, fft_lengths=fft_lengths)
    aval = _fft_abstract_eval(x.aval, **params)
    try:
        return _result(_eager_op(fft_type, fft_lengths)(x._h), False, aval.dtype, (x,))
    except (TypeError, ValueError, IndexError) as e:
        _reject(fft_p, (x,), params, e)
        raise


def _fft_lowering(ctx: Any, x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]
                  ) -> Any:
    return ctx.builder.op("fft", _attrs(fft_type, fft_lengths), [x])


fft_p = Primitive("fft")
fft_p.def_abstract_eval(_fft_abstract_eval)
fft_p.def_impl(_fft_impl)
register_lowering(fft_p, _fft_lowering)


def _half_spectrum_weights(n: int, like: Any, scale: float, invert: bool) -> Any:
    """``scale`` times JAX's Hermitian mask (or its inverse) along the last axis of
    ``like``, in its dtype: 1 for the zero (and, for even n, the Nyquist) frequency, 2 for
    the others, which stand for a conjugate pair."""
    mask = np.full((like.shape[-1],), 2.0)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    weights = scale * (1.0 / mask if invert else mask)
    return broadcast_in_dim(np.asarray(weights, like.dtype), tuple(like.shape),
                            (len(like.shape) - 1,))


def _rfft_transpose(t: Any, fft_lengths: tuple[int, ...]) -> Any:
    # irfft normalizes by 1/N and counts each of the paired frequencies twice.
    weights = _half_spectrum_weights(fft_lengths[-1], t, math.prod(fft_lengths), True)
    return fft_p.bind(mul(conj(t), weights), fft_type=FftType.IRFFT, fft_lengths=fft_lengths)


def _irfft_transpose(t: Any, fft_lengths: tuple[int, ...]) -> Any:
    x = fft_p.bind(t, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    weights = _half_spectrum_weights(fft_lengths[-1], x, 1 / math.prod(fft_lengths), False)
    # JAX's convention for complex cotangents: the conjugate.
    return conj(mul(x, weights))


def _fft_transpose(t: Any, operand: Any, *, fft_type: FftType,
                   fft_lengths: tuple[int, ...]) -> list[Any]:
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(t, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(t, fft_lengths)]
    return [fft_p.bind(t, fft_type=fft_type, fft_lengths=fft_lengths)]


ad.deflinear2(fft_p, _fft_transpose)


def _fft_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *, fft_type: FftType,
                    fft_lengths: tuple[int, ...]) -> tuple[Any, int]:
    (x,), (d,) = vals, dims
    return fft_p.bind(batching.moveaxis(x, d, 0), fft_type=fft_type,
                      fft_lengths=fft_lengths), 0


batching.primitive_batchers[fft_p] = _fft_batch_rule
