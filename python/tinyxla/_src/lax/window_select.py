"""Max and min pooling's derivatives: ``select_and_gather_add`` (each window's tangent read
from the element the window selects) and its transpose ``select_and_scatter_add`` (each
window's cotangent added into that element), one C++ op each, and the JVP rules of
``reduce_window_max`` / ``reduce_window_min`` that use them.

Mirrors JAX's primitives of the same names (``jax._src.lax.windowed_reductions``); here
the selected element is the window's first maximum (minimum) in tap order, padding and
dilation holes reading as the identity (a window of only holes selects nothing: its
tangent is 0), and both take ``base_dilation`` and ``window_dilation`` (JAX's transpose
refuses dilation).
"""
from __future__ import annotations

from typing import Any, Sequence

from tinyxla._src.array import Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_emitter
from tinyxla._src.lax.eager import EAGER, _operand, _reject, _result
from tinyxla._src.lax.type_rules import _check_same_dtypes
from tinyxla._src.lax.windowed_reductions import (
    _window_abstract_eval, _window_attrs, reduce_window_max_p, reduce_window_min_p)


def _select_primitive(name: str, scatter: bool) -> Primitive:
    """``name``(values, operand): values shaped as the windows' result (gather: as the
    operand), the result shaped as the operand (gather: as the windows' result)."""
    prim = Primitive(name)

    def abstract_eval(values: Any, operand: Any, *, op: str, **geometry: Any) -> ShapedArray:
        windows = _window_abstract_eval(name, operand, **geometry)
        expected = windows.shape if scatter else operand.shape
        if tuple(values.shape) != tuple(expected):
            raise TypeError(f"{name} got values of shape {tuple(values.shape)}, expected "
                            f"{tuple(expected)}")
        _check_same_dtypes(name, values, operand)
        shape = operand.shape if scatter else windows.shape
        return ShapedArray(shape, values.dtype, weak_type=values.weak_type)

    def emit(ops: Any, values: Any, operand: Any, *, op: str, **geometry: Any) -> Any:
        return ops.op(name, _window_attrs(op, **geometry), [values, operand])

    def impl(values: Any, operand: Any, **params: Any) -> Array:
        v = values if type(values) is Array else _operand(prim, 0, values)
        x = operand if type(operand) is Array else _operand(prim, 1, operand)
        aval = abstract_eval(v.aval, x.aval, **params)
        try:
            out = emit(EAGER, v._h, x._h, **params)
        except (TypeError, ValueError) as e:
            _reject(prim, (v, x), params, e)
            raise
        return _result(out, aval.weak_type, v.dtype, (v, x))

    def batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *, op: str,
                   window_dimensions: Sequence[int], window_strides: Sequence[int],
                   padding: Sequence[tuple[int, int]], base_dilation: Sequence[int],
                   window_dilation: Sequence[int]) -> tuple[Any, int]:
        size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
        values, operand = (batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims))
        return prim.bind(values, operand, op=op, window_dimensions=(1, *window_dimensions),
                         window_strides=(1, *window_strides), padding=((0, 0), *padding),
                         base_dilation=(1, *base_dilation),
                         window_dilation=(1, *window_dilation)), 0

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_emitter(prim, emit)
    batching.primitive_batchers[prim] = batch_rule
    # Linear in the values; the operand only chooses.
    ad.defjvp(prim, lambda g, values, operand, **params: prim.bind(g, operand, **params),
              None)
    return prim


select_and_gather_add_p = _select_primitive("select_and_gather_add", scatter=False)
select_and_scatter_add_p = _select_primitive("select_and_scatter_add", scatter=True)


def _transpose_to(other: Primitive) -> Any:
    def transpose(ct: Any, values: Any, operand: Any, **params: Any) -> list[Any]:
        if type(ct) is ad.Zero:
            return [ad.Zero(values.aval), None]
        return [other.bind(ct, operand, **params), None]
    return transpose


ad.primitive_transposes[select_and_gather_add_p] = _transpose_to(select_and_scatter_add_p)
ad.primitive_transposes[select_and_scatter_add_p] = _transpose_to(select_and_gather_add_p)


def _chooser_jvp(prim: Primitive, op: str) -> Any:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
            ) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        if type(t) is ad.Zero:
            return out, t
        return out, select_and_gather_add_p.bind(t, x, op=op, **params)
    return jvp


ad.primitive_jvps[reduce_window_max_p] = _chooser_jvp(reduce_window_max_p, "max")
ad.primitive_jvps[reduce_window_min_p] = _chooser_jvp(reduce_window_min_p, "min")
