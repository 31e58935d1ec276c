"""tinyxla.numpy: the ``jax.numpy`` namespace (``import tinyxla.numpy as jnp``).

Everything here is re-exported from ``tinyxla._src.numpy``; see each module for how it
mirrors JAX and where it differs.
"""
from __future__ import annotations

import sys as _sys
from typing import Any

import numpy as _np

from tinyxla._src import dtypes as _dtypes
from tinyxla._src.array import Array as ndarray
from tinyxla._src.numpy.array_api import (
    __array_api_version__, __array_namespace__, __array_namespace_info__)
from tinyxla._src.numpy.array_methods import register_array_methods as _register_array_methods
from tinyxla._src.numpy.comparisons import allclose, array_equal, array_equiv, isclose
from tinyxla._src.numpy.constructors import frombuffer, fromfunction, fromiter, fromstring
from tinyxla._src.numpy.creation import (
    arange, array, asarray, astype, copy, empty, empty_like, eye, full, full_like, identity,
    linspace, ones, ones_like, zeros, zeros_like)
from tinyxla._src.numpy.products import dot, inner, matmul, outer, tensordot, vdot
from tinyxla._src.numpy.reductions import (
    all, amax, amin, any, argmax, argmin, max, mean, min, nanmean, nansum, prod, ptp, std,
    sum, var)
from tinyxla._src.numpy.scalar_types import (
    bfloat16, bool_, cdouble, complex64, complex128, complex_, csingle, double, float16,
    float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
    float8_e5m2fnuz, float8_e8m0fnu, float32, float64, float_, int2, int4, int8, int16, int32,
    int64, int_, single, uint, uint2, uint4, uint8, uint16, uint32, uint64)
from tinyxla._src.numpy.cumulative import (
    cumprod, cumsum, cumulative_prod, cumulative_sum, diff, ediff1d, nancumprod, nancumsum,
    trapezoid)
from tinyxla._src.numpy.dlpack import jnp_from_dlpack as from_dlpack
from tinyxla._src.numpy.editing import append, delete, insert, place, put, put_along_axis
from tinyxla._src.numpy.index_tricks import (
    c_, index_exp, indices, ix_, meshgrid, mgrid, ogrid, r_, ravel_multi_index, s_,
    unravel_index)
from tinyxla._src.numpy.indexing import take, take_along_axis
from tinyxla._src.numpy.npyio import load, save, savez
from tinyxla._src.numpy.padding import pad
from tinyxla._src.numpy.printing import (
    array_repr, array_str, get_printoptions, printoptions, set_printoptions)
from tinyxla._src.numpy.ranges import geomspace, logspace
from tinyxla._src.numpy.rearranging import (
    fliplr, flipud, repeat, resize, roll, rollaxis, rot90, tile)
from tinyxla._src.numpy.splitting import array_split, dsplit, hsplit, split, unstack, vsplit
from tinyxla._src.numpy.triangles import (
    diag, diag_indices, diag_indices_from, diagflat, diagonal, fill_diagonal, mask_indices,
    trace, tri, tril, tril_indices, tril_indices_from, triu, triu_indices, triu_indices_from)
from tinyxla._src.numpy.sorting import (
    argpartition, argsort, digitize, lexsort, median, nanmedian, nanpercentile, nanquantile,
    partition, percentile, quantile, searchsorted, sort, sort_complex)
from tinyxla._src.numpy.selection import argwhere, flatnonzero, nonzero, where
from tinyxla._src.numpy.array_api_aliases import (
    acos, acosh, asin, asinh, atan, atan2, atanh, bitwise_invert, bitwise_left_shift,
    bitwise_right_shift)
from tinyxla._src.numpy.bessel import i0
from tinyxla._src.numpy.bit_packing import packbits, unpackbits
from tinyxla._src.numpy.choosing import choose, compress, extract, select
from tinyxla._src.numpy.convolution import convolve, correlate
from tinyxla._src.numpy.einsum import einsum, einsum_path
from tinyxla._src.numpy.float_parts import (
    fabs, frexp, iscomplex, iscomplexobj, isneginf, isposinf, isreal, isrealobj, ldexp, modf,
    nan_to_num, spacing)
from tinyxla._src.numpy.histograms import (
    bincount, histogram, histogram2d, histogram_bin_edges, histogramdd)
from tinyxla._src.numpy.integer_math import bitwise_count, gcd, lcm
from tinyxla._src.numpy.nan_functions import (
    nanargmax, nanargmin, nanmax, nanmin, nanprod, nanstd, nanvar)
from tinyxla._src.numpy.polynomial import (
    poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, polyval, roots,
    trim_zeros, vander)
from tinyxla._src.numpy.sampled_functions import gradient, interp, unwrap
from tinyxla._src.numpy.setops import (
    intersect1d, isin, setdiff1d, setxor1d, union1d, unique, unique_all, unique_counts,
    unique_inverse, unique_values)
from tinyxla._src.numpy.statistics import average, corrcoef, count_nonzero, cov
from tinyxla._src.numpy.vector_products import cross, kron, matvec, vecdot, vecmat
from tinyxla._src.numpy.vectorize import (
    apply_along_axis, apply_over_axes, piecewise, vectorize)
from tinyxla._src.numpy.windows import bartlett, blackman, hamming, hanning, kaiser
from tinyxla._src.numpy.shape import (
    atleast_1d, atleast_2d, atleast_3d, block, broadcast_arrays, broadcast_shapes,
    broadcast_to, column_stack, concat, concatenate, dstack, expand_dims, flip, hstack,
    isscalar, matrix_transpose, moveaxis, ndim, permute_dims, ravel, reshape, shape, size,
    squeeze, stack, swapaxes, transpose,
    vstack)
from tinyxla._src.numpy.ufuncs import (
    abs, absolute, angle, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh,
    around, bitwise_not, cbrt, ceil, clip, conj, conjugate, copysign, cos, cosh, deg2rad,
    degrees, divide, divmod, equal, exp, exp2, expm1, float_power, floor, floor_divide,
    fmax, fmin, fmod, greater, greater_equal, heaviside, hypot, imag, invert, isfinite,
    isinf, isnan, left_shift, less, less_equal, log, log1p, log2, log10, logical_not, mod,
    nextafter, not_equal, positive, pow, power, rad2deg, radians, real, reciprocal,
    remainder, right_shift, rint, round, sign, signbit, sin, sinc, sinh, sqrt, square, tan,
    tanh, true_divide, trunc)
from tinyxla._src.numpy.ufunc_class import (
    add, bitwise_and, bitwise_or, bitwise_xor, frompyfunc, logaddexp, logaddexp2,
    logical_and, logical_or, logical_xor, maximum, minimum, multiply, negative, subtract,
    ufunc)

from tinyxla.numpy import fft, linalg  # noqa: E402

bool = bool_  # noqa: A001 - jnp.bool, as in JAX

# Dtype utilities are JAX's own (numpy's for dtype, with bfloat16 known to issubdtype).
dtype = _np.dtype
finfo = _dtypes.finfo
iinfo = _dtypes.iinfo
issubdtype = _dtypes.issubdtype
isdtype = _dtypes.isdtype
promote_types = _dtypes.promote_types
result_type = _dtypes.result_type
can_cast = _np.can_cast
generic = _np.generic
number = _np.number
inexact = _np.inexact
floating = _np.floating
complexfloating = _np.complexfloating
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
character = _np.character
flexible = _np.flexible
object_ = _np.object_
iterable = _np.iterable
ComplexWarning = _np.exceptions.ComplexWarning

pi = _np.pi
e = _np.e
euler_gamma = _np.euler_gamma
inf = _np.inf
nan = _np.nan
newaxis = None

# JAX 0.10 removed these; accessing them raises JAX's AttributeError.
_REMOVED = {
    "fix": "jax.numpy.fix was deprecated in JAX v0.9.0, and will be removed in JAX v0.10.0. "
           "Use jax.numpy.trunc instead.",
}


# The Array operators and methods delegate to this namespace (JAX's array_methods).
_register_array_methods(_sys.modules[__name__])


def __getattr__(name: str) -> Any:
    if name in _REMOVED:
        raise AttributeError(_REMOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
