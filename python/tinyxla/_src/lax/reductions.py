"""The reductions over axes: ``reduce_sum``, ``reduce_prod``, ``reduce_max``,
``reduce_min``, ``reduce_and``, ``reduce_or``, ``reduce_xor``, ``argmax`` and ``argmin``.

Mirrors the reduction part of ``jax._src.lax.lax``: each primitive with its abstract eval,
impl, lowering, JVP, transpose and batching rules, and its public function.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import dtypes
from tinyxla._src.array import _CODE, _DTYPES, Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.lax import elementwise, shape_ops
from tinyxla._src.lax.conversion import _const, _convert_element_type
from tinyxla._src.lax.eager import _REDUCE_OP, _operand, _reject, _result
from tinyxla._src.lax.type_rules import (
    _ANY, _BOOL_OR_INT, _INT, _NUM, _ORDERED, _check_naryop_dtypes, _dtype, _dtype_to_string,
    _shape)


def _check_reduce_axes(operand: Any, axes: Sequence[int]) -> tuple[int, ...]:
    if len(axes) != len(set(axes)):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    if not all(0 <= a < operand.ndim for a in axes):
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for "
                         f"{operand.dtype.name}[{','.join(map(str, operand.shape))}].")
    return tuple(d for i, d in enumerate(operand.shape) if i not in set(axes))


def _reduce_number_check(name: str, dtype: np.dtype) -> None:
    if not dtypes.issubdtype(dtype, np.number):
        raise TypeError(f"{name} does not accept dtype {_dtype_to_string(dtype)}. Accepted "
                        "dtypes are subtypes of number.")


def _reduce_logical_check(name: str, dtype: np.dtype) -> None:
    if dtype != np.bool_ and not np.issubdtype(dtype, np.integer):
        raise TypeError(f"logical reduction requires operand dtype bool or int, got {dtype}.")


def _reduction(name: str, opcode: str, dtype_check: Callable[[str, np.dtype], None] | None,
               accepted: frozenset[np.dtype]) -> Primitive:
    """A reduction over ``axes``; ``reduce_sum`` also has JAX's ``out_sharding`` param."""
    prim = Primitive(name)
    op = _REDUCE_OP[opcode]

    def abstract_eval(operand: Any, *, axes: tuple[int, ...],
                      out_sharding: Any = None) -> ShapedArray:
        if dtype_check is not None:
            dtype_check(name, operand.dtype)
        shape = _check_reduce_axes(operand, axes)
        return ShapedArray(shape, operand.dtype, operand.weak_type)

    def impl(operand: Any, *, axes: tuple[int, ...], out_sharding: Any = None) -> Array:
        x = operand if type(operand) is Array else _operand(prim, 0, operand)
        if x.dtype not in accepted or builtins.min(axes, default=0) < 0:
            _reject(prim, (x,), {"axes": axes})
        try:
            return _result(_core.reduce(op, x._h, list(axes)), x.weak_type, x.dtype, (x,))
        except (ValueError, IndexError, TypeError) as e:
            _reject(prim, (x,), {"axes": axes}, e)
            raise

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_lowering(prim, lambda ctx, x, *, axes, out_sharding=None:
                      ctx.builder.reduce(op, x, list(axes)))
    return prim


reduce_sum_p = _reduction('reduce_sum', 'sum', _reduce_number_check, _NUM.dtypes)
reduce_prod_p = _reduction('reduce_prod', 'prod', _reduce_number_check, _NUM.dtypes)
reduce_max_p = _reduction('reduce_max', 'max', None, _ANY.dtypes)
reduce_min_p = _reduction('reduce_min', 'min', None, _ANY.dtypes)
reduce_and_p = _reduction('reduce_and', 'and_', _reduce_logical_check, _BOOL_OR_INT.dtypes)
reduce_or_p = _reduction('reduce_or', 'or_', _reduce_logical_check, _BOOL_OR_INT.dtypes)
reduce_xor_p = _reduction('reduce_xor', 'xor_', _reduce_logical_check, _BOOL_OR_INT.dtypes)


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    """Sum over ``axes`` without promotion (``jax.lax.reduce_sum``; no ``out_sharding``)."""
    return reduce_sum_p.bind(operand, axes=tuple(axes), out_sharding=None)


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    """Product over ``axes`` (``jax.lax.reduce_prod``)."""
    return reduce_prod_p.bind(operand, axes=tuple(axes))


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    """Maximum over ``axes``; empty axes give the dtype's lowest value (``jax.lax.reduce_max``)."""
    return reduce_max_p.bind(operand, axes=tuple(axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    """Minimum over ``axes`` (``jax.lax.reduce_min``)."""
    return reduce_min_p.bind(operand, axes=tuple(axes))


def reduce_and(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise/logical AND over ``axes`` (``jax.lax.reduce_and``)."""
    return reduce_and_p.bind(operand, axes=tuple(axes))


def reduce_or(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise/logical OR over ``axes`` (``jax.lax.reduce_or``)."""
    return reduce_or_p.bind(operand, axes=tuple(axes))


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise/logical XOR over ``axes`` (``jax.lax.reduce_xor``)."""
    return reduce_xor_p.bind(operand, axes=tuple(axes))


def _reduce_sum_transpose(ct: Any, operand: Any, *, axes: tuple[int, ...],
                          **params: Any) -> list[Any]:
    shape = operand.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [shape_ops.broadcast_in_dim(ct, shape, kept)]


def _reduce_prod_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                     axes: tuple[int, ...], **params: Any) -> tuple[Any, Any]:
    """The product rule along a balanced tree of pairwise products (as JAX's
    ``_reduce_jvp``), exact where elements are zero."""
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes, **params)
    shape = _shape(x)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if n == 0:
        return out, ad.Zero.from_primal_value(out)
    kept = [i for i in range(len(shape)) if i not in axes]
    flat = (n, *(shape[i] for i in kept))
    perm = (*axes, *kept)
    xs, ts = shape_ops.reshape(x, flat, perm), shape_ops.reshape(t, flat, perm)
    while _shape(xs)[0] > 1:
        m = _shape(xs)[0]
        half = (m + 1) // 2
        rest = [(0, 0, 0)] * (len(flat) - 1)
        lo = lambda a: shape_ops.slice(a, (0,) * len(flat), (half, *flat[1:]))
        hi = lambda a: shape_ops.slice(a, (half, *(0,) * (len(flat) - 1)), (m, *flat[1:]))
        x1, x2, t1, t2 = lo(xs), hi(xs), lo(ts), hi(ts)
        if m % 2:
            x2 = shape_ops.pad(x2, _const(x2, 1), [(0, 1, 0), *rest])
            t2 = shape_ops.pad(t2, _const(t2, 0), [(0, 1, 0), *rest])
        ts = elementwise.add(elementwise.mul(t1, x2), elementwise.mul(x1, t2))
        xs = elementwise.mul(x1, x2)
    return out, shape_ops.reshape(ts, _shape(out))


def _reduce_chooser_jvp(g: Any, ans: Any, operand: Any, *, axes: tuple[int, ...],
                        **params: Any) -> Any:
    shape = [1 if i in axes else d for i, d in enumerate(_shape(operand))]
    location = _convert_element_type(elementwise.eq(operand, shape_ops.reshape(ans, shape)),
                                     _dtype(g), False)
    counts = reduce_sum(location, axes)
    return elementwise.div(reduce_sum(elementwise.mul(g, location), axes), counts)


ad.deflinear2(reduce_sum_p, _reduce_sum_transpose)
ad.primitive_jvps[reduce_prod_p] = _reduce_prod_jvp
ad.defjvp2(reduce_max_p, _reduce_chooser_jvp)
ad.defjvp2(reduce_min_p, _reduce_chooser_jvp)
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p):
    ad.defjvp_zero(_p)
for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p,
           reduce_or_p, reduce_xor_p):
    batching.defreducer(_p)


def _argminmax(name: str, is_max: bool) -> Primitive:
    prim = Primitive(name)

    def abstract_eval(operand: Any, *, axes: tuple[int], index_dtype: np.dtype) -> ShapedArray:
        axis, = axes
        if not 0 <= axis < len(operand.shape):
            raise ValueError(f"Invalid axis {axis} for operand shape {operand.shape}")
        if operand.shape[axis] < 1:
            raise ValueError("argmin and argmax require non-empty reduced dimension. "
                             f"operand.shape={operand.shape} {axis=}")
        if not dtypes.issubdtype(index_dtype, np.integer):
            raise TypeError("index_dtype must be an integer type, but got "
                            f"{_dtype_to_string(index_dtype)}")
        # JAX's lowering compares with gt/lt, which reject complex operands.
        _check_naryop_dtypes('gt' if is_max else 'lt', (_ORDERED,), (operand,))
        return ShapedArray(operand.shape[:axis] + operand.shape[axis + 1:], index_dtype, False)

    def impl(operand: Any, *, axes: tuple[int], index_dtype: np.dtype) -> Array:
        x = operand if type(operand) is Array else _operand(prim, 0, operand)
        params = {"axes": axes, "index_dtype": index_dtype}
        axis, = axes
        code = _CODE[index_dtype]
        if axis < 0 or x.dtype not in _ORDERED.dtypes or _DTYPES[code] not in _INT.dtypes:
            _reject(prim, (x,), params)
        try:
            return _result(_core.argreduce(is_max, x._h, axis, code), False, _DTYPES[code], (x,))
        except (TypeError, ValueError, IndexError) as e:
            _reject(prim, (x,), params, e)
            raise

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_lowering(prim, lambda ctx, x, *, axes, index_dtype: ctx.builder.argreduce(
        is_max, x, axes[0], _CODE[np.dtype(index_dtype)]))
    return prim


argmax_p = _argminmax('argmax', True)
argmin_p = _argminmax('argmin', False)
ad.defjvp_zero(argmax_p)
ad.defjvp_zero(argmin_p)
batching.defreducer(argmax_p)
batching.defreducer(argmin_p)


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the first maximum along ``axis``; NaN counts as the maximum (``jax.lax.argmax``)."""
    index_dtype = dtypes.check_user_dtype_supported(index_dtype, 'argmax')
    return argmax_p.bind(operand, axes=(axis,), index_dtype=index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the first minimum along ``axis``; NaN counts as the minimum (``jax.lax.argmin``)."""
    index_dtype = dtypes.check_user_dtype_supported(index_dtype, 'argmin')
    return argmin_p.bind(operand, axes=(axis,), index_dtype=index_dtype)
