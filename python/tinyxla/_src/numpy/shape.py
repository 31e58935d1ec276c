"""Shape functions: reshape, transpose, axes moves, broadcasting, joining, flipping, shape queries.

Mirrors the corresponding functions of ``jax._src.numpy.lax_numpy`` (and
``array_methods._compute_newshape``), with JAX's error classes and texts.
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any, Sequence

import numpy as np

from tinyxla._src import core
from tinyxla._src.array import Array
from tinyxla._src.lax import lax
from tinyxla._src.lax.type_rules import canonicalize_shape
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.array_constructors import asarray
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike

ArrayLike = Any


def _index_tuple(x: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple (``jax._src.util._ensure_index_tuple``)."""
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(i) for i in x)


def _type_str(x: Any) -> str:
    return f"{np.dtype(x.dtype).name}[{','.join(map(str, x.shape))}]"


# ---------------------------------------------------------------------------------------
# Reshaping


def _compute_newshape(shape: tuple[int, ...], newshape: Any) -> tuple[int, ...]:
    """The target shape with its -1 resolved, with JAX's TypeErrors for bad sizes."""
    orig = newshape
    newshape = canonicalize_shape(newshape)
    size = math.prod(shape)
    if -1 in newshape:
        i = newshape.index(-1)
        others = newshape[:i] + newshape[i + 1:]
        if -1 in others:
            raise TypeError("can only specify one unknown axis size with a `-1` value, "
                            f"got {orig}")
        if size % math.prod(others) != 0:
            raise TypeError(f"cannot reshape array of shape {shape} (size {size}) into "
                            f"shape {orig} because the product of specified axis sizes "
                            f"({math.prod(others)}) does not evenly divide {size}")
        return newshape[:i] + (size // math.prod(others),) + newshape[i + 1:]
    if size != math.prod(newshape):
        raise TypeError(f"cannot reshape array of shape {shape} (size {size}) into shape "
                        f"{orig} (size {math.prod(newshape)})")
    return newshape


def reshape(a: ArrayLike, shape: Any, order: str = "C", *, copy: bool | None = None) -> Any:
    """Mirrors ``jax.numpy.reshape`` (orders 'C' and 'F'; ``copy`` is ignored, as in JAX)."""
    if type(a) is not Array:
        promotion.check_arraylike("reshape", a)
        a = promotion.ensure_array(a)
    old = a.shape
    newshape = _compute_newshape(old, shape)
    if order == "C":
        return lax.reshape(a, newshape)
    if order == "F":
        rev = tuple(range(len(old)))[::-1]
        out = lax.reshape(lax.transpose(a, rev), newshape[::-1])
        return lax.transpose(out, tuple(range(len(newshape)))[::-1])
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a: ArrayLike, order: str = "C") -> Any:
    """Mirrors ``jax.numpy.ravel``."""
    a = ensure_arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (a.size,), order)


# ---------------------------------------------------------------------------------------
# Axes


def _check_perm(a: Any, perm: Sequence[int]) -> None:
    if sorted(perm) != list(range(a.ndim)):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                        f"got permutation {tuple(perm)} for operand shape {a.shape}.")


def _transpose(a: Any, perm: Sequence[int]) -> Any:
    perm = tuple(perm)
    _check_perm(a, perm)
    return a if perm == tuple(range(a.ndim)) else lax.transpose(a, perm)


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Any:
    """Mirrors ``jax.numpy.transpose``: reverses the axes by default."""
    a = ensure_arraylike("transpose", a)
    axes_ = tuple(range(a.ndim))[::-1] if axes is None else axes
    return _transpose(a, [canonicalize_axis(i, a.ndim) for i in axes_])


def permute_dims(a: ArrayLike, /, axes: tuple[int, ...]) -> Any:
    """Mirrors ``jax.numpy.permute_dims`` (array API name of transpose)."""
    a = ensure_arraylike("permute_dims", a)
    return _transpose(a, [canonicalize_axis(i, a.ndim) for i in axes])


def matrix_transpose(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.matrix_transpose``: swaps the last two axes."""
    x = ensure_arraylike("matrix_transpose", x)
    ndim = x.ndim
    if ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got {ndim=}")
    return _transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Any:
    """Mirrors ``jax.numpy.swapaxes`` (an out-of-range axis raises numpy's IndexError, as in JAX)."""
    a = ensure_arraylike("swapaxes", a)
    perm = np.arange(a.ndim)
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return _transpose(a, [int(p) for p in perm])


def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """Mirrors ``jax.numpy.moveaxis``."""
    a = ensure_arraylike("moveaxis", a)
    src = tuple(canonicalize_axis(i, a.ndim) for i in _index_tuple(source))
    dst = tuple(canonicalize_axis(i, a.ndim) for i in _index_tuple(destination))
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    perm = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return _transpose(a, perm)


def expand_dims(a: ArrayLike, axis: int | Sequence[int]) -> Any:
    """Mirrors ``jax.numpy.expand_dims``."""
    a = ensure_arraylike("expand_dims", a)
    axis = _index_tuple(axis)
    ndim_out = a.ndim + len(axis)
    dims = tuple(canonicalize_axis(i, ndim_out) for i in axis)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {axis}")
    return lax.expand_dims(a, dims)


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Any:
    """Mirrors ``jax.numpy.squeeze``: all size-1 axes by default."""
    a = ensure_arraylike("squeeze", a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axis = _index_tuple(axis)
        dims = tuple(canonicalize_axis(i, a.ndim) for i in axis)
        if len(set(dims)) != len(dims):
            raise ValueError(f"dimensions are not unique: {axis}")
        if any(a.shape[d] != 1 for d in dims):
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             f"to one, got shape={a.shape} and dimensions={dims}")
    return lax.squeeze(a, dims) if dims else a


def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Any:
    """Mirrors ``jax.numpy.flip``: all axes by default."""
    m = ensure_arraylike("flip", m)
    if axis is None:
        dims = tuple(range(m.ndim))
    else:
        dims = tuple(canonicalize_axis(i, m.ndim) for i in _index_tuple(axis))
    return lax.rev(m, dims) if dims else m


# ---------------------------------------------------------------------------------------
# Broadcasting


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Mirrors ``jax.numpy.broadcast_shapes``; ints count as 1-d shapes."""
    if not shapes:
        return ()
    shapes = tuple((s,) if isinstance(s, int) else tuple(s) for s in shapes)
    return promotion.broadcast_shapes(*shapes)


def broadcast_to(array: ArrayLike, shape: Any) -> Any:
    """Mirrors ``jax.numpy.broadcast_to``."""
    arr = ensure_arraylike("broadcast_to", array)
    shape = canonicalize_shape(shape)
    if arr.shape == shape:
        return arr
    nlead = len(shape) - arr.ndim
    if nlead < 0:
        raise ValueError("Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={arr.shape} shape={shape}")
    if any(d < 0 for d in shape) or any(
            s != 1 and s != d for s, d in zip(arr.shape, shape[nlead:])):
        raise ValueError(f"Incompatible types for broadcasting: input type={_type_str(arr)} "
                         f"and requested type={np.dtype(arr.dtype).name}"
                         f"[{','.join(map(str, shape))}]")
    return lax.broadcast_in_dim(arr, shape, tuple(range(nlead, len(shape))))


def broadcast_arrays(*args: ArrayLike) -> list[Any]:
    """Mirrors ``jax.numpy.broadcast_arrays``."""
    promotion.check_arraylike("broadcast_arrays", *args)
    return promotion.broadcast_arrays_of(*(promotion.ensure_array(a) for a in args))


# ---------------------------------------------------------------------------------------
# Joining


def _unstack(a: Any) -> list[Any]:
    """The subarrays a[0], a[1], ... along the leading axis."""
    rest = a.shape[1:]
    return [lax.reshape(lax.slice(a, (i,) + (0,) * len(rest), (i + 1,) + rest), rest)
            for i in range(a.shape[0])]


def _asarray_with(a: Any, dtype: Any) -> Any:
    return asarray(a, dtype=dtype)


def concatenate(arrays: Any, axis: int | None = 0, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.concatenate``; ``axis=None`` joins the flattened arrays."""
    if isinstance(arrays, (np.ndarray, Array, core.Tracer)):
        arr = _asarray_with(arrays, dtype)
        if axis is None:
            return ravel(arr)
        if arr.ndim == 0 or arr.shape[0] == 0:
            raise ValueError("Need at least one array to concatenate.")
        axis = canonicalize_axis(axis, arr.ndim - 1)
        # Moving the leading axis next to the target one makes this one reshape.
        moved = _transpose(arr, [*range(1, axis + 1), 0, *range(axis + 1, arr.ndim)])
        shape = arr.shape[1:axis + 1] + (arr.shape[0] * arr.shape[axis + 1],) + arr.shape[axis + 2:]
        return lax.reshape(moved, shape)
    promotion.check_arraylike("concatenate", *arrays)
    arrays = [promotion.ensure_array(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], axis=0, dtype=dtype)
    if arrays[0].ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, arrays[0].ndim)
    if dtype is None:
        arrays = promotion.promote_dtypes(*arrays)
    else:
        arrays = [_asarray_with(a, dtype) for a in arrays]
    ndims = {a.ndim for a in arrays}
    if len(ndims) != 1:
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(str(a.shape) for a in arrays)}.")
    if any(a.shape[:axis] + a.shape[axis + 1:] != arrays[0].shape[:axis] + arrays[0].shape[axis + 1:]
           for a in arrays):
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                        f"than the one being concatenated: concatenating along dimension {axis} "
                        f"for shapes {', '.join(str(a.shape) for a in arrays)}.")
    return arrays[0] if len(arrays) == 1 else lax.concatenate(arrays, axis)


def stack(arrays: Any, axis: int = 0, out: None = None, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.stack``."""
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if isinstance(arrays, (np.ndarray, Array, core.Tracer)):
        arr = promotion.ensure_array(arrays) if isinstance(arrays, np.ndarray) else arrays
        axis = canonicalize_axis(axis, arr.ndim)
        return concatenate(expand_dims(arr, axis + 1), axis=axis, dtype=dtype)
    promotion.check_arraylike("stack", *arrays)
    arrays = [promotion.ensure_array(a) for a in arrays]
    if dtype is not None:
        arrays = [_asarray_with(a, dtype) for a in arrays]
    else:
        arrays = promotion.promote_dtypes(*arrays)
    shape0 = arrays[0].shape
    if any(a.shape != shape0 for a in arrays):
        raise ValueError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(a.shape) for a in arrays)}.")
    axis = canonicalize_axis(axis, len(shape0) + 1)
    return concatenate([lax.expand_dims(a, (axis,)) for a in arrays], axis=axis)


def _rows(tup: Any, fun_name: str) -> list[Any]:
    """The elements of a sequence argument of hstack & co. (an array gives its rows)."""
    if isinstance(tup, (np.ndarray, Array, core.Tracer)):
        return _unstack(promotion.ensure_array(tup))
    promotion.check_arraylike(fun_name, *tup)
    return list(tup)


def hstack(tup: Any, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.hstack``."""
    arrs = [atleast_1d(m) for m in _rows(tup, "hstack")]
    return concatenate(arrs, axis=0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype)


def vstack(tup: Any, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.vstack``."""
    return concatenate([atleast_2d(m) for m in _rows(tup, "vstack")], axis=0, dtype=dtype)


def dstack(tup: Any, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.dstack``."""
    return concatenate([atleast_3d(m) for m in _rows(tup, "dstack")], axis=2, dtype=dtype)


def _atleast(fun_name: str, arys: tuple[Any, ...], fix: Any) -> Any:
    promotion.check_arraylike(fun_name, *arys)
    out = [fix(promotion.ensure_array(a)) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.atleast_1d``: 0-d becomes (1,); several inputs give a list."""
    return _atleast("atleast_1d", arys,
                    lambda a: lax.reshape(a, (1,)) if a.ndim == 0 else a)


def atleast_2d(*arys: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.atleast_2d``: leading 1s up to two dimensions."""
    return _atleast("atleast_2d", arys,
                    lambda a: lax.reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)


def _to_3d(a: Any) -> Any:
    if a.ndim == 0:
        return lax.reshape(a, (1, 1, 1))
    if a.ndim == 1:
        return lax.reshape(a, (1, a.shape[0], 1))
    if a.ndim == 2:
        return lax.reshape(a, a.shape + (1,))
    return a


def atleast_3d(*arys: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.atleast_3d``: (N,) becomes (1, N, 1), (M, N) becomes (M, N, 1)."""
    return _atleast("atleast_3d", arys, _to_3d)


# ---------------------------------------------------------------------------------------
# Shape queries


def _warn_not_arraylike(fun_name: str, a: Any) -> None:
    """JAX's DeprecationWarning for a list or tuple given to a shape query."""
    if not promotion.is_arraylike(a):
        warnings.warn(f"{fun_name} requires ndarray or scalar arguments, got {type(a)} at "
                      "position 0. In a future JAX release this will be an error.",
                      DeprecationWarning, stacklevel=3)


def shape(a: Any) -> tuple[int, ...]:
    """Mirrors ``jax.numpy.shape`` (lists still work, with JAX's DeprecationWarning)."""
    s = getattr(a, "shape", None)
    if s is not None:
        return tuple(s)
    _warn_not_arraylike("shape", a)
    return np.shape(a)


def ndim(a: Any) -> int:
    """Mirrors ``jax.numpy.ndim`` (lists still work, with JAX's DeprecationWarning)."""
    n = getattr(a, "ndim", None)
    if n is not None:
        return n
    _warn_not_arraylike("ndim", a)
    return np.ndim(a)


def size(a: Any, axis: int | Sequence[int] | None = None) -> int:
    """Mirrors ``jax.numpy.size``: the number of elements, or along ``axis``."""
    _warn_not_arraylike("size", a)
    if axis is None and hasattr(a, "size"):
        return a.size
    s = shape(a)
    if axis is None:
        return math.prod(s)
    axes = _index_tuple(axis)
    dims = [canonicalize_axis(i, len(s)) for i in axes]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis: {axes}")
    return math.prod(s[i] for i in dims)


def isscalar(element: Any) -> bool:
    """Mirrors ``jax.numpy.isscalar``: numpy scalars, Python scalars and 0-d arrays."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Array, core.Tracer)):
        return element.ndim == 0
    if getattr(element, "__jax_array__", None) is not None:
        return promotion.ensure_array(element).ndim == 0
    return False



# ---------------------------------------------------------------------------------------
# More joining: concat, column_stack, block


def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Any:
    """Mirrors ``jax.numpy.concat`` (the array API's name of concatenate)."""
    promotion.check_arraylike("concat", *arrays)
    return concatenate(arrays, axis=axis)


def _as_column(a: Any) -> Any:
    return transpose(atleast_2d(a)) if a.ndim < 2 else a


def column_stack(tup: Any) -> Any:
    """Mirrors ``jax.numpy.column_stack``: 1-d inputs become columns, then join on axis 1."""
    if isinstance(tup, (np.ndarray, Array, core.Tracer)):
        arr = promotion.ensure_array(tup)
        arrs = [_as_column(a) for a in _unstack(arr)] if arr.ndim < 3 else _unstack(arr)
    else:
        promotion.check_arraylike("column_stack", *tup)
        arrs = [_as_column(promotion.ensure_array(a)) for a in tup]
    return concatenate(arrs, axis=1)


def _block(xs: Any) -> tuple[Any, int]:
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if isinstance(xs, list):
        if len(xs) == 0:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        parts, depths = zip(*(_block(x) for x in xs))
        if any(d != depths[0] for d in depths[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        rank = max(depths[0], max(p.ndim for p in parts))
        parts = tuple(lax.reshape(p, (1,) * (rank - p.ndim) + p.shape) if p.ndim < rank else p
                      for p in parts)
        return concatenate(parts, axis=-depths[0]), depths[0] + 1
    return _asarray_with(xs, None), 1


def block(arrays: Any) -> Any:
    """Mirrors ``jax.numpy.block``: an array assembled from nested lists of blocks."""
    return _block(arrays)[0]
