"""``jnp.pad`` in every numpy mode: constant, edge, linear_ramp, maximum, mean, median,
minimum, reflect, symmetric, wrap, empty, and a callable.

Mirrors ``jax.numpy.pad`` (``lax_numpy._pad`` and its helpers): the widths must be concrete;
each mode is built from ``lax.pad``, slices, flips and concatenations one axis at a time,
so the result is differentiable and batches under vmap. The callable mode follows JAX's
protocol (the function returns the padded vector rather than writing into it).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, reductions, sorting, ufuncs
from tinyxla._src.numpy.creation import asarray, linspace
from tinyxla._src.numpy.promotion import ensure_arraylike
from tinyxla._src.numpy.shape import flip
from tinyxla._src.numpy.splitting import slice_along
from tinyxla._src.numpy.vectorize import apply_along_axis

ArrayLike = Any
Pairs = tuple[tuple[Any, Any], ...]


def _concrete(x: Any, name: str) -> Any:
    if isinstance(x, core.Tracer):
        raise errors.ConcretizationTypeError(x, f"{name} argument of jnp.pad")
    return x


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _broadcast_to_pairs(nvals: Any, nd: int, name: str) -> Pairs:
    """``(before, after)`` per axis from numpy's accepted forms (``_broadcast_to_pairs``)."""
    if isinstance(nvals, (list, tuple)):
        nvals = [_concrete(v, name) if not isinstance(v, (list, tuple))
                 else [_concrete(w, name) for w in v] for v in nvals]
    else:
        nvals = _concrete(nvals, name)
    try:
        arr = np.asarray(nvals)
    except ValueError as e:
        if "inhomogeneous shape" in str(e):
            raise TypeError(f"`{name}` entries must be the same shape: {nvals}") from e
        raise

    def scalar(v: Any) -> Any:
        if np.shape(v):
            raise TypeError(f"`{name}` entries must be the same shape: {arr}")
        return v.item() if isinstance(v, np.ndarray) and arr.dtype != object else v

    if arr.shape == (nd, 2):
        return tuple((scalar(v[0]), scalar(v[1])) for v in arr)
    if arr.shape == (1, 2):
        return ((scalar(arr[0, 0]), scalar(arr[0, 1])),) * nd
    if arr.shape == (2,):
        return ((scalar(arr[0]), scalar(arr[1])),) * nd
    if arr.shape == (1,):
        return ((scalar(arr[0]), scalar(arr[0])),) * nd
    if arr.shape == ():
        v = scalar(arr.flat[0])
        return ((v, v),) * nd
    raise ValueError(f"jnp.pad: {name} with {nd=} has unsupported shape {arr.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _check_no_padding(axis_padding: tuple[int, int], mode: str) -> None:
    if axis_padding[0] > 0 or axis_padding[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _repeat_edge(edge: Any, n: int, axis: int) -> Any:
    """A length-1 slice along ``axis`` broadcast to length ``n``."""
    shape = list(edge.shape)
    shape[axis] = n
    return lax.broadcast_in_dim(lax.squeeze(edge, (axis,)), tuple(shape),
                                tuple(d for d in range(edge.ndim) if d != axis))


def _like(value: Any, array: Any) -> Any:
    return promotion.convert(value, array.dtype, dtypes.is_weakly_typed(array))


def _pad_constant(array: Any, pad_width: Pairs, constant_values: Any) -> Any:
    nd = array.ndim
    values = _like(asarray(constant_values), array)
    if values.ndim == 0:
        return lax.pad(array, values, [(lo, hi, 0) for lo, hi in pad_width])
    if values.ndim == 1:
        if values.shape[-1] == 1:
            return lax.pad(array, lax.reshape(values, ()), [(lo, hi, 0) for lo, hi in pad_width])
        if values.shape[-1] != 2:
            raise ValueError("jnp.pad: constant_values has unsupported shape "
                             f"{values.shape}. If the shape is 1D or 2D, the last dimension "
                             "must be of size 1 or 2.")
    values = promotion.broadcast_to_shape(values, (nd, 2))
    for i in range(nd):
        for side in (0, 1):
            if pad_width[i][side]:
                widths = [(0, 0, 0)] * nd
                widths[i] = (pad_width[i][0], 0, 0) if side == 0 else (0, pad_width[i][1], 0)
                value = lax.reshape(lax.slice(values, (i, side), (i + 1, side + 1)), ())
                array = lax.pad(array, value, widths)
    return array


def _pad_wrap(array: Any, pad_width: Pairs) -> Any:
    for i in range(array.ndim):
        size = array.shape[i]
        if size == 0:
            _check_no_padding(pad_width[i], "wrap")
            continue
        left_repeats, left_rem = divmod(pad_width[i][0], size)
        right_repeats, right_rem = divmod(pad_width[i][1], size)
        parts = []
        if left_rem:
            parts.append(slice_along(array, size - left_rem, size, i))
        parts += [array] * (left_repeats + right_repeats + 1)
        if right_rem:
            parts.append(slice_along(array, 0, right_rem, i))
        array = lax.concatenate(parts, i) if len(parts) > 1 else array
    return array


def _pad_symmetric_or_reflect(array: Any, pad_width: Pairs, mode: str,
                              reflect_type: str) -> Any:
    for i in range(array.ndim):
        size = array.shape[i]
        if size == 0:
            _check_no_padding(pad_width[i], mode)
            continue
        offset = 1 if (mode == "reflect" and size > 1) else 0
        for before in (True, False):
            padding = pad_width[i][0 if before else 1]
            n = array.shape[i]
            edge = slice_along(array, 0, 1, i) if before else slice_along(array, n - 1, n, i)
            while padding > 0:
                n = array.shape[i]
                cur = min(padding, size - offset)
                padding -= cur
                if before:
                    start, stop = offset, offset + cur
                else:
                    start = n - (cur + offset)
                    stop = n if (mode == "symmetric" or size == 1) else n - 1
                x = flip(slice_along(array, start, stop, i), i)
                if reflect_type == "odd":
                    x = lax.sub(lax.mul(_like(asarray(2), x), _repeat_edge(edge, x.shape[i], i)), x)
                    if size > 1:
                        m = x.shape[i]
                        edge = slice_along(x, 0, 1, i) if before else slice_along(x, m - 1, m, i)
                array = lax.concatenate([x, array] if before else [array, x], i)
    return array


def _pad_edge(array: Any, pad_width: Pairs) -> Any:
    for i in range(array.ndim):
        n = array.shape[i]
        if n == 0:
            _check_no_padding(pad_width[i], "edge")
            continue
        before, after = pad_width[i]
        parts = [_repeat_edge(slice_along(array, 0, 1, i), before, i), array,
                 _repeat_edge(slice_along(array, n - 1, n, i), after, i)]
        array = lax.concatenate(parts, i)
    return array


def _pad_linear_ramp(array: Any, pad_width: Pairs, end_values: Pairs) -> Any:
    weak = dtypes.is_weakly_typed(array)
    for axis in range(array.ndim):
        n = array.shape[axis]
        edges = (lax.squeeze(slice_along(array, 0, 1, axis), (axis,)),
                 lax.squeeze(slice_along(array, n - 1, n, axis), (axis,)))
        ramps = [promotion.convert(linspace(end, edge, num=num, endpoint=False,
                                            dtype=array.dtype, axis=axis), array.dtype, weak)
                 for end, edge, num in zip(end_values[axis], edges, pad_width[axis])]
        array = lax.concatenate([ramps[0], array, flip(ramps[1], axis)], axis)
    return array


def _pad_stats(array: Any, pad_width: Pairs, stat_length: Pairs | None,
               stat_func: Callable[..., Any]) -> Any:
    for i in range(array.ndim):
        if stat_length is None:
            stat_before = stat_after = stat_func(array, axis=i, keepdims=True)
        else:
            length_before, length_after = stat_length[i]
            if length_before == 0 or length_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            n = array.shape[i]
            length_before, length_after = min(length_before, n), min(length_after, n)
            stat_before = stat_func(slice_along(array, 0, length_before, i), axis=i,
                                    keepdims=True)
            stat_after = stat_func(slice_along(array, n - length_after, n, i), axis=i,
                                   keepdims=True)
        if np.issubdtype(array.dtype, np.integer):
            stat_before, stat_after = ufuncs.round(stat_before), ufuncs.round(stat_after)
        stat_before, stat_after = _like(stat_before, array), _like(stat_after, array)
        before, after = pad_width[i]
        array = lax.concatenate([_repeat_edge(stat_before, before, i), array,
                                 _repeat_edge(stat_after, after, i)], i)
    return array


def _pad_empty(array: Any, pad_width: Pairs) -> Any:
    # JAX's empty is zeros, so 'empty' pads with zeros.
    return lax.pad(array, _like(asarray(0), array), [(lo, hi, 0) for lo, hi in pad_width])


def _pad_func(array: Any, pad_width: Pairs, func: Callable[..., Any], **kwargs: Any) -> Any:
    padded = _pad_constant(array, pad_width, 0)
    for axis in range(padded.ndim):
        padded = apply_along_axis(func, axis, padded, pad_width[axis], axis, kwargs)
    return padded


_STAT_FUNCS: dict[str, Callable[..., Any]] = {
    "maximum": reductions.max,
    "minimum": reductions.min,
    "mean": reductions.mean,
    "median": sorting.median,
}

_ALLOWED_KWARGS = {
    "empty": [], "edge": [], "wrap": [],
    "constant": ["constant_values"],
    "linear_ramp": ["end_values"],
    "maximum": ["stat_length"],
    "mean": ["stat_length"],
    "median": ["stat_length"],
    "minimum": ["stat_length"],
    "reflect": ["reflect_type"],
    "symmetric": ["reflect_type"],
}


def pad(array: ArrayLike, pad_width: Any, mode: str | Callable[..., Any] = "constant",
        **kwargs: Any) -> Any:
    """Mirrors ``jax.numpy.pad`` (all of numpy's modes; a callable mode returns the
    padded vector, as JAX requires, instead of writing into it)."""
    array = ensure_arraylike("pad", array)
    nd = array.ndim
    pad_width = _broadcast_to_pairs(pad_width, nd, "pad_width")
    if pad_width and not all(_is_int(p[0]) and _is_int(p[1]) for p in pad_width):
        raise TypeError("`pad_width` must be of integral type.")
    pad_width = tuple((int(lo), int(hi)) for lo, hi in pad_width)
    if callable(mode):
        return _pad_func(array, pad_width, mode, **kwargs)
    try:
        unsupported = set(kwargs) - set(_ALLOWED_KWARGS[mode])
    except KeyError:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if nd == 0:
        return array
    if any(lo < 0 or hi < 0 for lo, hi in pad_width):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(array, pad_width, kwargs.get("constant_values", 0))
    if mode == "wrap":
        return _pad_wrap(array, pad_width)
    if mode in ("symmetric", "reflect"):
        return _pad_symmetric_or_reflect(array, pad_width, mode,
                                         kwargs.get("reflect_type", "even"))
    if mode == "edge":
        return _pad_edge(array, pad_width)
    if mode == "linear_ramp":
        end_values = _broadcast_to_pairs(kwargs.get("end_values", 0), nd, "end_values")
        return _pad_linear_ramp(array, pad_width, end_values)
    if mode in _STAT_FUNCS:
        stat_length = kwargs.get("stat_length")
        if stat_length is not None:
            stat_length = _broadcast_to_pairs(stat_length, nd, "stat_length")
        return _pad_stats(array, pad_width, stat_length, _STAT_FUNCS[mode])
    return _pad_empty(array, pad_width)
