"""The shape and layout primitives: ``reshape``, ``transpose``, ``broadcast_in_dim``,
``squeeze``, ``slice``, ``copy``, ``rev``, ``pad``, ``concatenate`` and ``iota``, with the
functions built on them (``broadcast``, ``expand_dims``, ``full``, ``full_like``, ...).

Mirrors the shape-op part of ``jax._src.lax.lax`` (and ``slice``, which JAX keeps in
``slicing.py``): each primitive with its abstract eval, impl, lowering, JVP, transpose and
batching rules, and its public function beside it.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import ad_util, core, devices, dtypes
from tinyxla._src.array import _CODE, _DTYPES, Array, _wrap
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_emitter, register_lowering
from tinyxla._src.lax import elementwise, reductions
from tinyxla._src.lax.conversion import _const, _convert_element_type, asarray
from tinyxla._src.lax.eager import EAGER, _I32, _colocated, _operand, _reject, _result
from tinyxla._src.lax.type_rules import (
    _NUM, _canonicalize_axis, _check_same_dtypes, _check_shapelike, _dtype, _dtype_to_string,
    _is_accepted, _is_array, _ndim, _shape, _weak, canonicalize_shape)


def _structural(name: str, abstract_eval: Callable[..., ShapedArray],
                emit: Callable[..., Any]) -> Primitive:
    """A one-operand primitive of the operand's dtype whose ops ``emit(ops, x, **params)``
    writes (run eagerly on ``EAGER``, lowered on the graph builder); runtime errors are
    re-raised as the abstract-eval rule's JAX errors."""
    prim = Primitive(name)

    def impl(operand: Any, **params: Any) -> Array:
        x = operand if type(operand) is Array else _operand(prim, 0, operand)
        try:
            out = emit(EAGER, x._h, **params)
        except (TypeError, ValueError, IndexError) as e:
            _reject(prim, (x,), params, e)
            raise
        return _result(out, x.weak_type, x.dtype, (x,))

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_emitter(prim, emit)
    return prim


def _reshape_abstract_eval(operand: Any, *, new_sizes: tuple[int, ...],
                           dimensions: tuple[int, ...] | None, sharding: Any = None) -> ShapedArray:
    if not all(d >= 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if dimensions is not None and set(dimensions) != set(range(len(operand.shape))):
        raise TypeError("reshape dimensions must be a permutation of operand dimensions, got "
                        f"dimensions {dimensions} for shape {operand.shape}.")
    size, new_size = int(np.prod(operand.shape)), int(np.prod(new_sizes))
    if size != new_size:
        # JAX only fails this at lowering; the text is jnp.reshape's.
        raise TypeError(f"cannot reshape array of shape {operand.shape} (size {size}) into "
                        f"shape {new_sizes} (size {new_size})")
    return ShapedArray(tuple(new_sizes), operand.dtype, operand.weak_type)


def _reshape_emit(ops: Any, h: Any, *, new_sizes: tuple[int, ...],
                 dimensions: tuple[int, ...] | None, sharding: Any = None) -> Any:
    if dimensions is not None:
        h = ops.transpose(h, list(dimensions))
    return ops.reshape(h, list(new_sizes))


reshape_p = _structural('reshape', _reshape_abstract_eval, _reshape_emit)


def _reshape_transpose(ct: Any, operand: Any, *, new_sizes: tuple[int, ...],
                       dimensions: tuple[int, ...] | None, **params: Any) -> list[Any]:
    shape = operand.aval.shape
    if dimensions is None:
        return [reshape(ct, shape)]
    return [transpose(reshape(ct, [shape[d] for d in dimensions]), np.argsort(dimensions))]


ad.deflinear2(reshape_p, _reshape_transpose)


def _reshape_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                        new_sizes: tuple[int, ...], dimensions: tuple[int, ...] | None,
                        sharding: Any = None) -> tuple[Any, int]:
    operand = batching.moveaxis(vals[0], dims[0], 0)
    if dimensions is not None:
        dimensions = (0, *(d + 1 for d in dimensions))
    return reshape_p.bind(operand, new_sizes=(operand.shape[0], *new_sizes),
                          dimensions=dimensions, sharding=sharding), 0


batching.primitive_batchers[reshape_p] = _reshape_batch_rule


def reshape(operand: Any, new_sizes: Any, dimensions: Sequence[int] | None = None) -> Any:
    """The elements (after transposing by ``dimensions``) in a new shape (``jax.lax.reshape``;
    no ``out_sharding``). An array already of that shape is returned as it is."""
    new_sizes = canonicalize_shape(new_sizes)
    shape = _shape(operand)
    dims = None if dimensions is None else tuple(map(operator.index, dimensions))
    same_dims = dims is None or dims == tuple(range(len(shape)))
    if shape and shape == new_sizes and same_dims and _is_array(operand):
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes,
                          dimensions=None if same_dims else dims, sharding=None)


def _transpose_abstract_eval(operand: Any, *, permutation: tuple[int, ...]) -> ShapedArray:
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        raise TypeError("transpose permutation must be a tuple/list/ndarray, got "
                        f"{type(permutation)}.")
    if tuple(sorted(permutation)) != tuple(range(len(operand.shape))):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {operand.shape}.")
    return ShapedArray(tuple(operand.shape[i] for i in permutation), operand.dtype,
                       operand.weak_type)


transpose_p = _structural('transpose', _transpose_abstract_eval,
                          lambda ops, h, *, permutation: ops.transpose(h, list(permutation)))
ad.deflinear2(transpose_p,
              lambda t, _, *, permutation: [transpose(t, np.argsort(permutation))])


def _transpose_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                          permutation: tuple[int, ...]) -> tuple[Any, int]:
    bdim, = dims
    perm = (bdim, *(i if i < bdim else i + 1 for i in permutation))
    return transpose(vals[0], perm), 0


batching.primitive_batchers[transpose_p] = _transpose_batch_rule


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """Permutes the axes (``jax.lax.transpose``); the identity permutation returns ``operand``."""
    permutation = tuple(operator.index(d) for d in permutation)
    if permutation == tuple(range(_ndim(operand))) and _is_array(operand):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def _broadcast_in_dim_abstract_eval(operand: Any, *, shape: tuple[int, ...],
                                    broadcast_dimensions: tuple[int, ...]) -> ShapedArray:
    _check_shapelike('broadcast_in_dim', 'shape', shape)
    _check_shapelike('broadcast_in_dim', 'broadcast_dimensions', broadcast_dimensions)
    ndim = len(operand.shape)
    if ndim != len(broadcast_dimensions):
        raise TypeError("broadcast_in_dim broadcast_dimensions must have length equal to "
                        f"operand ndim; got broadcast_dimensions {broadcast_dimensions} for "
                        f"operand ndim {ndim}.")
    if len(shape) < ndim:
        raise TypeError("broadcast_in_dim target broadcast shape must have equal or higher "
                        f"rank to the operand shape; got operand ndim {ndim} and target "
                        f"broadcast ndim {len(shape)}.")
    if not set(broadcast_dimensions).issubset(set(range(len(shape)))):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be a subset of output "
                        f"dimensions, got {broadcast_dimensions} for operand ndim {ndim} and "
                        f"shape {shape}.")
    if not all(operand.shape[i] in (1, shape[broadcast_dimensions[i]]) for i in range(ndim)):
        raise TypeError("broadcast_in_dim operand dimension sizes must either be 1, or be "
                        "equal to their corresponding dimensions in the target broadcast "
                        f"shape; got operand of shape {tuple(operand.shape)}, target broadcast "
                        f"shape {shape}, broadcast_dimensions {broadcast_dimensions} ")
    if len(broadcast_dimensions) != len(set(broadcast_dimensions)):
        raise TypeError("broadcast_in_dim broadcast_dimensions must not contain duplicates, "
                        f"got broadcast_dimensions {broadcast_dimensions}")
    return ShapedArray(tuple(shape), operand.dtype, operand.weak_type)


def _broadcast_in_dim_emit(ops: Any, x: Any, *, shape: tuple[int, ...],
                           broadcast_dimensions: tuple[int, ...], sharding: Any = None) -> Any:
    dims = list(broadcast_dimensions)
    if dims != sorted(dims):  # the runtime wants them increasing: permute the operand's axes
        x = ops.transpose(x, sorted(range(len(dims)), key=dims.__getitem__))
        dims.sort()
    return ops.broadcast_in_dim(x, list(shape), dims)


def _broadcast_in_dim_impl(operand: Any, *, shape: tuple[int, ...],
                           broadcast_dimensions: tuple[int, ...]) -> Array:
    x = operand if type(operand) is Array else _operand(broadcast_in_dim_p, 0, operand)
    params = {"shape": shape, "broadcast_dimensions": broadcast_dimensions}
    if builtins.min(shape, default=0) < 0:  # the runtime does not check a 0-d operand's shape
        _reject(broadcast_in_dim_p, (x,), params)
    try:
        out = _broadcast_in_dim_emit(EAGER, x._h, **params)
    except (ValueError, TypeError) as e:
        _reject(broadcast_in_dim_p, (x,), params, e)
        raise
    return _result(out, x.weak_type, x.dtype, (x,))


broadcast_in_dim_p = Primitive('broadcast_in_dim')
broadcast_in_dim_p.def_abstract_eval(_broadcast_in_dim_abstract_eval)
broadcast_in_dim_p.def_impl(_broadcast_in_dim_impl)
register_emitter(broadcast_in_dim_p, _broadcast_in_dim_emit)
# JAX prints only the dimensions: the shape is the result's type.
core.pp_params_rules[broadcast_in_dim_p] = \
    lambda p: {"broadcast_dimensions": p["broadcast_dimensions"]}


def _broadcast_in_dim_transpose(ct: Any, operand: Any, *, shape: tuple[int, ...],
                                broadcast_dimensions: tuple[int, ...]) -> list[Any]:
    # Sum over the new axes and the broadcast size-1 axes, then restore those.
    unit_dims = [i for i, s in enumerate(operand.aval.shape) if s == 1]
    bdims = [d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims]
    out = reductions.reduce_sum(ct, tuple(i for i in range(len(shape)) if i not in bdims))
    if bdims != sorted(bdims):
        out = transpose(out, np.argsort(np.argsort(bdims)))
    return [expand_dims(out, unit_dims) if unit_dims else out]


ad.deflinear2(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _broadcast_in_dim_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                                 shape: tuple[int, ...],
                                 broadcast_dimensions: tuple[int, ...]) -> tuple[Any, int]:
    operand = batching.moveaxis(vals[0], dims[0], 0)
    return broadcast_in_dim_p.bind(
        operand, shape=(operand.shape[0], *shape),
        broadcast_dimensions=(0, *(d + 1 for d in broadcast_dimensions))), 0


batching.primitive_batchers[broadcast_in_dim_p] = _broadcast_in_dim_batch_rule


def broadcast_in_dim(operand: Any, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Any:
    """Broadcasts ``operand`` to ``shape``; its axis i becomes axis
    ``broadcast_dimensions[i]`` (``jax.lax.broadcast_in_dim``; no ``out_sharding``)."""
    if _ndim(operand) == len(shape) and not len(broadcast_dimensions) and _is_array(operand):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=tuple(shape),
                                   broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """Adds leading axes of ``sizes`` (``jax.lax.broadcast``)."""
    if len(sizes) == 0:
        return asarray(operand)
    ndim = _ndim(operand)
    dims = tuple(range(len(sizes), len(sizes) + ndim))
    return broadcast_in_dim(operand, tuple(sizes) + tuple(_shape(operand)), dims)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """Inserts size-1 axes at ``dimensions`` (``jax.lax.expand_dims``)."""
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f'repeated axis in lax.expand_dims: {dimensions}')
    ndim_out = _ndim(array) + len(dimensions)
    dims = [_canonicalize_axis(i, ndim_out) for i in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f'repeated axis in lax.expand_dims: {dims}')
    dims_set = frozenset(dims)
    result_shape = list(_shape(array))
    for i in sorted(dims_set):
        result_shape.insert(i, 1)
    broadcast_dims = [i for i in range(ndim_out) if i not in dims_set]
    return broadcast_in_dim(array, result_shape, broadcast_dims)


# The batching helpers (moveaxis, broadcast, ...) are these ops.
batching.lax_ops.update(transpose=transpose, broadcast_in_dim=broadcast_in_dim,
                        expand_dims=expand_dims)


def _compute_squeeze_shape(shape: tuple[int, ...], dimensions: tuple[int, ...]) -> tuple[int, ...]:
    dims_set = set(dimensions)
    if len(dims_set) != len(dimensions):
        raise ValueError(f"dimensions are not unique: {dimensions}")
    if not all(0 <= d < len(shape) for d in dims_set):
        raise ValueError(f"dimensions outside range [0, ndim): {dimensions}")
    if any(shape[d] != 1 for d in dimensions):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                         f"one, got {shape=} and {dimensions=}")
    return tuple(s for i, s in enumerate(shape) if i not in dims_set)


squeeze_p = _structural(
    'squeeze',
    lambda operand, *, dimensions: ShapedArray(
        _compute_squeeze_shape(operand.shape, dimensions), operand.dtype, operand.weak_type),
    lambda ops, h, *, dimensions: ops.reshape(
        h, list(_compute_squeeze_shape(ops.shape(h), dimensions))))
ad.deflinear2(squeeze_p, lambda t, operand, *, dimensions: [reshape(t, operand.aval.shape)])


def _squeeze_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                        dimensions: tuple[int, ...]) -> tuple[Any, int]:
    operand = batching.moveaxis(vals[0], dims[0], 0)
    return squeeze_p.bind(operand, dimensions=tuple(d + 1 for d in dimensions)), 0


batching.primitive_batchers[squeeze_p] = _squeeze_batch_rule


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """Removes the size-1 axes ``dimensions`` (``jax.lax.squeeze``)."""
    ndim = _ndim(array)
    dimensions = tuple(sorted(_canonicalize_axis(i, ndim) for i in dimensions))
    if not dimensions and _is_array(array):
        return array
    return squeeze_p.bind(array, dimensions=dimensions)


def _slice_abstract_eval(operand: Any, *, start_indices: tuple[int, ...],
                         limit_indices: tuple[int, ...],
                         strides: tuple[int, ...] | None) -> ShapedArray:
    _check_shapelike("slice", "start_indices", start_indices)
    _check_shapelike("slice", "limit_indices", limit_indices)
    shape = operand.shape
    if len(shape) != len(start_indices):
        raise TypeError("slice start_indices must have length equal to the number of "
                        f"dimensions of the operand, got indices {start_indices} for operand "
                        f"shape {shape}.")
    if len(start_indices) != len(limit_indices):
        raise TypeError("slice limit_indices must have the same length as start_indices, got "
                        f"start_indices {start_indices} and limit_indices {limit_indices}.")
    if not all(map(operator.ge, shape, limit_indices)):
        raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                        f"limit_indices {limit_indices} for operand shape {shape}.")
    if not all(si >= 0 for si in start_indices):
        raise TypeError("slice start_indices must be greater than or equal to zero, got "
                        f"start_indices of {start_indices}.")
    if not all(map(operator.ge, limit_indices, start_indices)):
        raise TypeError("slice limit_indices must be greater than or equal to start_indices, "
                        f"got start_indices {start_indices} and limit_indices {limit_indices}.")
    diff = tuple(map(operator.sub, limit_indices, start_indices))
    if strides is None or tuple(strides) == (1,) * len(shape):
        return ShapedArray(diff, operand.dtype, operand.weak_type)
    _check_shapelike("slice", "strides", strides)
    if len(strides) != len(shape):
        raise TypeError("slice strides must have length equal to the number of dimensions of "
                        f"the operand, got strides {strides} for operand shape {shape}.")
    if not all(s > 0 for s in strides):  # JAX checks s >= 0 and then divides by zero
        raise TypeError(f"slice strides must be positive, got {strides}")
    out = tuple(0 if d == 0 else (d - 1) // s + 1 for d, s in zip(diff, strides))
    return ShapedArray(out, operand.dtype, operand.weak_type)


slice_p = _structural(
    'slice', _slice_abstract_eval,
    lambda ops, h, *, start_indices, limit_indices, strides: ops.slice(
        h, list(start_indices), list(limit_indices), [] if strides is None else list(strides)))


def _slice_transpose(ct: Any, operand: Any, *, start_indices: tuple[int, ...],
                     limit_indices: tuple[int, ...],
                     strides: tuple[int, ...] | None) -> list[Any]:
    shape = operand.aval.shape
    if strides is None or all(s == 1 for s in strides):
        pads = zip(start_indices, np.subtract(shape, limit_indices), (0,) * len(shape))
    else:
        ct_shape = np.array(_shape(ct))
        real_limits = np.add(start_indices, np.where(
            ct_shape == 0, 0, np.add(1, np.multiply(np.subtract(ct_shape, 1), strides))))
        pads = zip(start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1))
    return [pad(ct, _const(ct, 0), [tuple(map(int, p)) for p in pads])]


ad.deflinear2(slice_p, _slice_transpose)


def _slice_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                      start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                      strides: tuple[int, ...] | None) -> tuple[Any, int]:
    operand, = vals
    bdim, = dims
    start, limit = list(start_indices), list(limit_indices)
    start.insert(bdim, 0)
    limit.insert(bdim, operand.shape[bdim])
    if strides is not None:
        strides = list(strides)
        strides.insert(bdim, 1)
        strides = tuple(strides)
    return slice_p.bind(operand, start_indices=tuple(start), limit_indices=tuple(limit),
                        strides=strides), bdim


batching.primitive_batchers[slice_p] = _slice_batch_rule


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    """The static slice ``operand[start:limit:strides]`` per axis (``jax.lax.slice``)."""
    return slice_p.bind(operand, start_indices=tuple(start_indices),
                        limit_indices=tuple(limit_indices),
                        strides=None if strides is None else tuple(strides))


def _copy_impl(x: Any) -> Array:
    x = x if type(x) is Array else _operand(copy_p, 0, x)
    h = x._h
    # A one-case select writes a fresh buffer: the copy shares nothing with x.
    zero = _core.scalar(0, _I32, h.device)
    return _result(_core.select_n(zero, [h]), x.weak_type, x.dtype, (x,))


copy_p = Primitive('copy')
copy_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype, x.weak_type))
copy_p.def_impl(_copy_impl)
# Graph values are immutable and outputs get their own buffers: a copy is the value itself.
register_lowering(copy_p, lambda ctx, x: x)
ad.deflinear2(copy_p, lambda t, _: [copy_p.bind(t)])
batching.defvectorized(copy_p)


def _array_copy(x: Any) -> Any:
    """A copy of ``x`` in a buffer of its own (``jax._src.lax.lax._array_copy``)."""
    return copy_p.bind(x)


def _rev_abstract_eval(operand: Any, *, dimensions: tuple[int, ...]) -> ShapedArray:
    _check_shapelike('rev', 'dimensions', dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if dimensions and not builtins.max(dimensions) < len(operand.shape):
        raise TypeError("rev dimensions must all be less than operand ndim, got dimensions "
                        f"{dimensions} for operand ndim {len(operand.shape)}.")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _rev_emit(ops: Any, h: Any, *, dimensions: tuple[int, ...]) -> Any:
    if dimensions and builtins.min(dimensions) < 0:  # the runtime would wrap them
        raise ValueError("negative dimension")
    return ops.rev(h, list(dimensions))


rev_p = _structural('rev', _rev_abstract_eval, _rev_emit)
ad.deflinear2(rev_p, lambda t, _, *, dimensions: [rev(t, dimensions)])


def _rev_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                    dimensions: tuple[int, ...]) -> tuple[Any, int]:
    bdim, = dims
    return rev_p.bind(vals[0], dimensions=tuple(d + 1 if d >= bdim else d
                                                for d in dimensions)), bdim


batching.primitive_batchers[rev_p] = _rev_batch_rule


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverses the order of elements along ``dimensions`` (``jax.lax.rev``)."""
    return rev_p.bind(operand, dimensions=tuple(dimensions))


def _pad_abstract_eval(operand: Any, padding_value: Any, *,
                       padding_config: tuple[tuple[int, int, int], ...]) -> ShapedArray:
    if padding_value.shape != ():
        raise ValueError(f"padding_value must be a scalar; got "
                         f"np.shape(padding_value)={padding_value.shape}")
    op_shape = operand.shape
    if len(padding_config) != len(op_shape):
        raise ValueError("length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {padding_config} for operand shape {op_shape}")
    if not all(i >= 0 for _, _, i in padding_config):
        raise ValueError("interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    result = tuple(lo + hi + (0 if d == 0 else (d - 1) * (i + 1) + 1)
                   for (lo, hi, i), d in zip(padding_config, op_shape))
    if not all(d >= 0 for d in result):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{result}, for padding_config {padding_config} and operand shape "
                         f"{op_shape}")
    if operand.dtype != padding_value.dtype:
        raise TypeError("pad operand and padding_value must be same dtype: got "
                        f"{operand.dtype} and {padding_value.dtype}.")
    return ShapedArray(result, operand.dtype, _weak(operand, padding_value))


def _pad_emit(ops: Any, x: Any, v: Any, *,
              padding_config: tuple[tuple[int, int, int], ...]) -> Any:
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return ops.pad(x, v, list(lo), list(hi), list(interior))


def _pad_impl(operand: Any, padding_value: Any, *,
              padding_config: tuple[tuple[int, int, int], ...]) -> Array:
    args = (operand, padding_value)
    params = {"padding_config": padding_config}
    x = operand if type(operand) is Array else _operand(pad_p, 0, operand)
    v = padding_value if type(padding_value) is Array else _operand(pad_p, 1, padding_value)
    if v.dtype is not x.dtype:
        _reject(pad_p, args, params)
    try:
        out = _pad_emit(EAGER, x._h, v._h, padding_config=padding_config)
    except (TypeError, ValueError) as e:
        moved = _colocated(pad_p, (x, v))
        if moved is not None:
            return _pad_impl(*moved, padding_config=padding_config)
        _reject(pad_p, args, params, e)
        raise
    return _result(out, x.weak_type and v.weak_type, x.dtype, (x, v))


pad_p = Primitive('pad')
pad_p.def_abstract_eval(_pad_abstract_eval)
pad_p.def_impl(_pad_impl)
register_emitter(pad_p, _pad_emit)


def _pad_transpose(t: Any, operand: Any, padding_value: Any, *,
                   padding_config: tuple[tuple[int, int, int], ...]) -> list[Any]:
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    total = lambda x: reductions.reduce_sum(x, tuple(range(_ndim(t))))
    unpadded = pad(t, _const(t, 0), [(-a, -b, 0) for a, b in zip(lo, hi)])
    t_operand = slice(unpadded, (0,) * len(lo), _shape(unpadded), [i + 1 for i in interior])
    t_padv = (elementwise.sub(total(t), total(t_operand))
              if ad.is_undefined_primal(padding_value) else None)
    return [t_operand if ad.is_undefined_primal(operand) else None, t_padv]


ad.deflinear2(pad_p, _pad_transpose)


def _pad_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                    padding_config: tuple[tuple[int, int, int], ...]) -> tuple[Any, int]:
    """JAX's rule; a padding value that differs per example is written with a select."""
    operand, padding_value = vals
    operand_bdim, value_bdim = dims
    if operand_bdim is None:
        operand = batching.broadcast(operand, padding_value.shape[value_bdim], 0)
        operand_bdim = 0
    config = list(padding_config)
    config.insert(operand_bdim, (0, 0, 0))
    config = tuple(config)
    if value_bdim is None:
        return pad_p.bind(operand, padding_value, padding_config=config), operand_bdim
    x = pad_p.bind(operand, _convert_element_type(0, operand.dtype), padding_config=config)
    mask = pad_p.bind(full_like(operand, True, np.bool_), False, padding_config=config)
    value = broadcast_in_dim(batching.moveaxis(padding_value, value_bdim, 0), x.shape,
                             (operand_bdim,))
    return elementwise.select(mask, x, value), operand_bdim


batching.primitive_batchers[pad_p] = _pad_batch_rule


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pads each axis with (low, high, interior) elements of ``padding_value``; negative low
    or high padding crops (``jax.lax.pad``)."""
    return pad_p.bind(operand, padding_value,
                      padding_config=tuple(tuple(c) for c in padding_config))


def _concatenate_abstract_eval(*operands: Any, dimension: int) -> ShapedArray:
    if not operands:
        raise TypeError("concatenate expects at least one operand, got 0.")
    if len({len(o.shape) for o in operands}) != 1:
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(str(o.shape) for o in operands)}.")
    if not 0 <= dimension < len(operands[0].shape):
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                        f"{', '.join(str(o.shape) for o in operands)}.")
    shapes = [o.shape[:dimension] + o.shape[dimension + 1:] for o in operands]
    if shapes[:-1] != shapes[1:]:
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                        "than the one being concatenated: concatenating along dimension "
                        f"{dimension} for shapes {', '.join(str(o.shape) for o in operands)}.")
    _check_same_dtypes('concatenate', *operands)
    ex = operands[0].shape
    size = sum(o.shape[dimension] for o in operands)
    return ShapedArray(ex[:dimension] + (size,) + ex[dimension + 1:], operands[0].dtype,
                       _weak(*operands))


def _concatenate_impl(*operands: Any, dimension: int) -> Array:
    xs = [o if type(o) is Array else _operand(concatenate_p, i, o) for i, o in enumerate(operands)]
    if dimension < 0:  # the runtime would wrap it
        _reject(concatenate_p, xs, {"dimension": dimension})
    try:
        out = _core.concatenate([x._h for x in xs], dimension)
    except (TypeError, ValueError, IndexError) as e:
        moved = _colocated(concatenate_p, xs)
        if moved is not None:
            return _concatenate_impl(*moved, dimension=dimension)
        _reject(concatenate_p, xs, {"dimension": dimension}, e)
        raise
    return _result(out, all(x.weak_type for x in xs), xs[0].dtype, xs)


concatenate_p = Primitive('concatenate')
concatenate_p.def_abstract_eval(_concatenate_abstract_eval)
concatenate_p.def_impl(_concatenate_impl)
register_lowering(concatenate_p,
                  lambda ctx, *xs, dimension: ctx.builder.concatenate(list(xs), dimension))


def _concatenate_transpose(ct: Any, *operands: Any, dimension: int) -> list[Any]:
    shape = _shape(ct)
    outs, start = [], 0
    for o in operands:
        size = (o.aval.shape if ad.is_undefined_primal(o) else _shape(o))[dimension]
        if ad.is_undefined_primal(o):
            begin = [0] * len(shape)
            end = list(shape)
            begin[dimension], end[dimension] = start, start + size
            outs.append(slice(ct, begin, end))
        else:
            outs.append(None)
        start += size
    return outs


ad.deflinear2(concatenate_p, _concatenate_transpose)


def _concatenate_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                            dimension: int) -> tuple[Any, int]:
    size = batching.batch_size(vals, dims)
    operands = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
    return concatenate_p.bind(*operands, dimension=dimension + 1), 0


batching.primitive_batchers[concatenate_p] = _concatenate_batch_rule


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Joins arrays along ``dimension`` (``jax.lax.concatenate``)."""
    if len(operands) == 0:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    if len(operands) == 1 and _is_array(operands[0]):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=dimension)


def _iota_abstract_eval(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int,
                        sharding: Any = None) -> ShapedArray:
    _check_shapelike("iota", "shape", shape)
    if not _is_accepted(dtype, _NUM):
        raise TypeError(f"iota does not accept dtype {_dtype_to_string(dtype)}. Accepted "
                        f"dtypes are subtypes of {_NUM.names}.")
    if not 0 <= dimension < len(shape):
        raise ValueError("iota dimension must be between 0 and len(shape), got "
                         f"{dimension=} for {shape=}")
    return ShapedArray(shape, dtype, False)


def _iota_impl(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int,
               sharding: Any = None) -> Array:
    code = _CODE[dtype]
    out_dtype = _DTYPES[code]
    if out_dtype not in _NUM.dtypes or not 0 <= dimension < len(shape) or \
            builtins.min(shape, default=0) < 0:
        iota_p.abstract_eval(dtype=dtype, shape=shape, dimension=dimension, sharding=sharding)
    return _wrap(_core.iota(code, list(shape), dimension, devices.default_index()), False,
                 out_dtype)


iota_p = Primitive('iota')
iota_p.def_abstract_eval(_iota_abstract_eval)
iota_p.def_impl(_iota_impl)
register_lowering(iota_p, lambda ctx, *, dtype, shape, dimension, sharding=None:
                  ctx.builder.iota(_CODE[np.dtype(dtype)], list(shape), dimension))
ad.defjvp_zero(iota_p)


def iota(dtype: Any, size: int) -> Any:
    """[0, 1, ..., size-1] of ``dtype`` (``jax.lax.iota``)."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: Any, dimension: int) -> Any:
    """An array whose elements count along ``dimension`` (``jax.lax.broadcasted_iota``;
    no ``out_sharding``)."""
    dtype = dtypes.check_user_dtype_supported(dtype, "broadcasted_iota")
    shape = canonicalize_shape(shape)
    return iota_p.bind(dtype=dtype, shape=shape, dimension=operator.index(dimension),
                       sharding=None)


# ----------------------------------------------------------------------------------------
# Filled arrays.

def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value`` (``jax.lax.full``;
    no ``sharding``). Without ``dtype`` the fill value's dtype and weak type are kept."""
    shape = canonicalize_shape(shape)
    if np.shape(fill_value):
        raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)}.")
    if dtype is None:
        weak_type = dtypes.is_weakly_typed(fill_value)
        fill_dtype = _dtype(fill_value)
    else:
        weak_type = False
        fill_dtype = dtypes.check_user_dtype_supported(dtype, "full")
    return broadcast(_convert_element_type(fill_value, fill_dtype, weak_type), shape)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``
    (``jax.lax.full_like``; no ``sharding``)."""
    fill_shape = _shape(x) if shape is None else canonicalize_shape(shape)
    weak_type = dtype is None and dtypes.is_weakly_typed(x)
    dtype = _dtype(x) if dtype is None else _dtype(dtype)
    return full(fill_shape, _convert_element_type(fill_value, dtype, weak_type))


def zeros_like_shaped_array(aval: ShapedArray) -> Any:
    """Zeros of ``aval``'s shape, dtype and weak type
    (``jax._src.lax.lax.zeros_like_shaped_array``)."""
    zero = _convert_element_type(0, aval.dtype, aval.weak_type)
    return broadcast(zero, aval.shape) if aval.shape else zero


ad_util.aval_zeros_likers[ShapedArray] = zeros_like_shaped_array


def zeros_like_array(x: Any) -> Any:
    """Zeros of ``x``'s shape and dtype (``jax._src.lax.lax.zeros_like_array``)."""
    return full_like(x, 0)


def _zeros(x: Any) -> Any:
    return full_like(x, 0)


def _ones(x: Any) -> Any:
    return full_like(x, 1)
