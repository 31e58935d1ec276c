"""Windowed reductions (``reduce_window`` and its sum / max / min primitives) and the
reductions by a user computation (``reduce``).

Mirrors ``jax._src.lax.windowed_reductions`` and ``lax.reduce``. The sum, max and min
primitives run one C++ ``reduce_window`` op; each has its rules side by side: the sum is
linear (its transpose pads the cotangent and sums windows again, JAX's rule); max and min
differentiate through ``select_and_gather_add`` (window_select.py). A computation that is
not one of those monoids with its identity runs as a fold over the window's strided slices (``reduce_window``) or a pairwise
tree (``reduce``), the computation applied to whole arrays: it must be elementwise, as
JAX's scalar computations are.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import core, dtypes, tree_util
from tinyxla._src.array import _CODE, _DTYPES, Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_emitter
from tinyxla._src.lax.convolution import (
    _conv_general_vjp_lhs_padding, _dilate_shape, padtype_to_pads)
from tinyxla._src.lax.conversion import _const, convert_element_type
from tinyxla._src.lax.eager import EAGER, _operand, _reject, _result
from tinyxla._src.lax.elementwise import (
    add, bitwise_and, bitwise_or, bitwise_xor, mul, select)
from tinyxla._src.lax.elementwise import max as lax_max, min as lax_min
from tinyxla._src.lax.reductions import (
    reduce_and, reduce_max, reduce_min, reduce_or, reduce_prod, reduce_sum, reduce_xor)
from tinyxla._src.lax.shape_ops import (
    broadcast_in_dim, concatenate, full, pad, reshape, slice, transpose)
from tinyxla._src.lax.type_rules import _check_shapelike


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int],
                              padding: Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None
                              ) -> tuple[int, ...]:
    """The result shape of a windowed reduction (JAX's helper of the same name)."""
    if base_dilation is not None:
        operand_shape = _dilate_shape(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = _dilate_shape(window_dimensions, window_dilation)
    padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding)]
    return tuple(max((p - w) // s + 1, 0)
                 for p, w, s in zip(padded, window_dimensions, window_strides))


def _window_abstract_eval(name: str, operand: Any, window_dimensions: Sequence[int],
                          window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                          base_dilation: Sequence[int], window_dilation: Sequence[int]
                          ) -> ShapedArray:
    """JAX's ``_common_reduce_window_shape_rule``: its checks and messages."""
    _check_shapelike("reduce_window", "window_dimensions", window_dimensions)
    if any(d <= 0 for d in window_dimensions):
        raise TypeError("reduce_window window_dimensions must have every element be strictly "
                        f"positive, got {tuple(window_dimensions)}.")
    _check_shapelike("reduce_window", "window_strides", window_strides)
    if any(d <= 0 for d in window_strides):
        raise TypeError("reduce_window window_strides must have every element be strictly "
                        f"positive, got {tuple(window_strides)}.")
    _check_shapelike("reduce_window", "base_dilation", base_dilation)
    _check_shapelike("reduce_window", "window_dilation", window_dilation)
    if len(operand.shape) != len(window_dimensions):
        raise TypeError("reduce_window got the wrong number of window_dimensions for "
                        f"operand: got operand shape {tuple(operand.shape)} with "
                        f"window_dimensions {tuple(window_dimensions)}.")
    for what, v in (("window_strides", window_strides), ("base_dilation", base_dilation),
                    ("window_dilation", window_dilation)):
        if len(v) != len(window_dimensions):
            raise TypeError(f"reduce_window got inconsistent {what} and window_dimensions: "
                            f"got {what} {tuple(v)} and window_dimensions "
                            f"{tuple(window_dimensions)}.")
    if name == "reduce_window_sum" and not dtypes.issubdtype(operand.dtype, np.number):
        raise TypeError("operand to reduce_window_sum must have a number dtype, got "
                        f"{np.dtype(operand.dtype).name}")
    shape = reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides,
                                      padding, base_dilation, window_dilation)
    return ShapedArray(shape, operand.dtype, weak_type=operand.weak_type)


def _window_attrs(op: str, window_dimensions: Sequence[int], window_strides: Sequence[int],
                  padding: Sequence[tuple[int, int]], base_dilation: Sequence[int],
                  window_dilation: Sequence[int]) -> dict:
    return {"op": op, "window_dimensions": [int(d) for d in window_dimensions],
            "window_strides": [int(d) for d in window_strides],
            "padding_lo": [int(lo) for lo, _ in padding],
            "padding_hi": [int(hi) for _, hi in padding],
            "base_dilation": [int(d) for d in base_dilation],
            "window_dilation": [int(d) for d in window_dilation]}


def _window_primitive(op: str) -> Primitive:
    """The primitive ``reduce_window_<op>`` with abstract eval, impl, lowering and
    batching rule (its differentiation rules follow below)."""
    name = f"reduce_window_{op}"
    prim = Primitive(name)

    def abstract_eval(operand: Any, **params: Any) -> ShapedArray:
        return _window_abstract_eval(name, operand, **params)

    def emit(ops: Any, x: Any, **params: Any) -> Any:
        return ops.op("reduce_window", _window_attrs(op, **params), [x])

    def impl(operand: Any, **params: Any) -> Array:
        x = operand if type(operand) is Array else _operand(prim, 0, operand)
        aval = abstract_eval(x.aval, **params)
        try:
            out = emit(EAGER, x._h, **params)
        except (TypeError, ValueError) as e:
            _reject(prim, (x,), params, e)
            raise
        return _result(out, aval.weak_type, x.dtype, (x,))

    def batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                   window_dimensions: Sequence[int], window_strides: Sequence[int],
                   padding: Sequence[tuple[int, int]], base_dilation: Sequence[int],
                   window_dilation: Sequence[int]) -> tuple[Any, int]:
        (x,), (b,) = vals, dims
        ins = lambda t, v: tuple(t[:b]) + (v,) + tuple(t[b:])
        return prim.bind(x, window_dimensions=ins(window_dimensions, 1),
                         window_strides=ins(window_strides, 1),
                         padding=ins(padding, (0, 0)),
                         base_dilation=ins(base_dilation, 1),
                         window_dilation=ins(window_dilation, 1)), b

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_emitter(prim, emit)
    batching.primitive_batchers[prim] = batch_rule
    return prim


reduce_window_sum_p = _window_primitive("sum")
reduce_window_max_p = _window_primitive("max")
reduce_window_min_p = _window_primitive("min")


def _bind_window(prim: Primitive, operand: Any, window_dimensions: Sequence[int],
                 window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                 base_dilation: Sequence[int], window_dilation: Sequence[int]) -> Any:
    return prim.bind(operand, window_dimensions=tuple(int(d) for d in window_dimensions),
                     window_strides=tuple(int(d) for d in window_strides),
                     padding=tuple((int(lo), int(hi)) for lo, hi in padding),
                     base_dilation=tuple(int(d) for d in base_dilation),
                     window_dilation=tuple(int(d) for d in window_dilation))


def _reduce_window_sum_transpose(ct: Any, operand: Any, *, window_dimensions: Sequence[int],
                                 window_strides: Sequence[int],
                                 padding: Sequence[tuple[int, int]],
                                 base_dilation: Sequence[int],
                                 window_dilation: Sequence[int]) -> list[Any]:
    """JAX's rule: pad the cotangent (strides as interior holes) and sum its windows."""
    input_shape = operand.aval.shape
    pads = _conv_general_vjp_lhs_padding(input_shape, window_dimensions, window_strides,
                                         ct.shape, padding, base_dilation, window_dilation)
    ones = [1] * len(input_shape)
    config = [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)]
    padded = pad(ct, _const(ct, 0), config)
    return [_bind_window(reduce_window_sum_p, padded, window_dimensions, base_dilation,
                         [(0, 0)] * len(input_shape), ones, window_dilation)]


ad.deflinear2(reduce_window_sum_p, _reduce_window_sum_transpose)


def _identity(op: str, dtype: np.dtype) -> Any:
    """The identity of max / min for ``dtype`` (the value padding reads as)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return op == "min"
    if dtypes.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min if op == "max" else info.max
    return -np.inf if op == "max" else np.inf


def _window_taps(x: Any, pad_value: Any, out_shape: Sequence[int],
                 window_dimensions: Sequence[int], window_strides: Sequence[int],
                 padding: Sequence[tuple[int, int]], base_dilation: Sequence[int],
                 window_dilation: Sequence[int]) -> list[Any]:
    """For each window tap (row-major), the strided slice of the padded, dilated ``x``
    that this tap reads at every output position; all of shape ``out_shape``."""
    config = [(lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation)]
    padded = pad(x, pad_value, config)
    taps = []
    for tap in itertools.product(*(range(w) for w in window_dimensions)):
        start = [k * wd for k, wd in zip(tap, window_dilation)]
        limit = [s + (o - 1) * st + 1 for s, o, st in zip(start, out_shape, window_strides)]
        taps.append(slice(padded, start, limit, window_strides))
    return taps


# ---- public functions ----

def _concrete_scalar(x: Any) -> np.ndarray | None:
    """``x`` as a 0-d numpy array of its JAX dtype (a Python int is int32 without x64), or
    None when it is traced or not a scalar."""
    if isinstance(x, core.Tracer) or np.shape(x) != ():
        return None
    value = np.asarray(x)
    return value.astype(dtypes.canonicalize_dtype(value.dtype))


def _monoid_window_primitive(computation: Callable, init_values: Sequence[Any]
                             ) -> Primitive | None:
    """The fast primitive when ``computation`` is add / max / min with its identity as the
    single init value (JAX's ``_get_monoid_window_reducer``)."""
    value = _concrete_scalar(init_values[0]) if len(init_values) == 1 else None
    if value is None:
        return None
    if computation is add:
        return reduce_window_sum_p if value == 0 else None
    for op, prim, fn in (("max", reduce_window_max_p, lax_max),
                         ("min", reduce_window_min_p, lax_min)):
        if computation is fn and value == _identity(op, value.dtype):
            return prim
    return None


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int],
                  window_strides: Sequence[int] | None = None,
                  padding: str | Sequence[tuple[int, int]] = "VALID",
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduction over padded windows (``jax.lax.reduce_window``); ``operand`` and
    ``init_value`` may be matching pytrees. ``lax.add``/``lax.max``/``lax.min`` with their
    identity run one kernel; other computations are applied elementwise to whole arrays."""
    flat_operands, tree = tree_util.tree_flatten(operand)
    flat_inits, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if len(flat_operands) != len(flat_inits):
        raise ValueError("Must have same total number of operands as init_values:  "
                         f"{len(flat_operands)} vs. {len(flat_inits)}")
    if len(flat_operands) == 0:
        raise ValueError("reduce_window must have at least one operand.")
    if isinstance(padding, str):
        dilated = (window_dimensions if window_dilation is None
                   else _dilate_shape(window_dimensions, window_dilation))
        padding = tuple(padtype_to_pads(np.shape(flat_operands[0]), dilated,
                                        window_strides or [], padding))
    else:
        padding = tuple((lo, hi) for lo, hi in padding)
    n = len(window_dimensions)
    window_strides = (1,) * n if window_strides is None else tuple(window_strides)
    base_dilation = (1,) * n if base_dilation is None else tuple(base_dilation)
    window_dilation = (1,) * n if window_dilation is None else tuple(window_dilation)
    params = dict(window_dimensions=tuple(window_dimensions), window_strides=window_strides,
                  padding=padding, base_dilation=base_dilation,
                  window_dilation=window_dilation)
    prim = _monoid_window_primitive(computation, flat_inits)
    if prim is not None:
        return tree_util.tree_unflatten(tree, [_bind_window(prim, flat_operands[0], **params)])
    return tree_util.tree_unflatten(
        tree, _fold_windows(flat_operands, flat_inits, computation, tree, params))


def _fold_windows(operands: Sequence[Any], inits: Sequence[Any], computation: Callable,
                  tree: Any, params: dict) -> list[Any]:
    """A generic windowed reduction: ``init`` folded with each tap's slice in turn. Taps on
    padding or dilation holes are skipped (XLA's semantics: they do not read as ``init``
    when ``init`` is not the computation's identity)."""
    avals = [core.get_aval(x) for x in operands]
    out_shape = _window_abstract_eval("reduce_window", avals[0], **params).shape
    inits = [convert_element_type(v, a.dtype) for v, a in zip(inits, avals)]
    acc = [broadcast_in_dim(v, out_shape, ()) for v in inits]
    if 0 in out_shape:
        return acc
    taps = [_window_taps(x, v, out_shape, **params) for x, v in zip(operands, inits)]
    inside = _window_taps(full(avals[0].shape, True, np.bool_), False, out_shape, **params)
    for valid, *step in zip(inside, *taps):
        out = computation(tree_util.tree_unflatten(tree, acc),
                          tree_util.tree_unflatten(tree, list(step)))
        flat, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise ValueError("reduce_window output must have the same tree structure as the "
                             f"operands {tree} vs. {out_tree}")
        acc = [select(valid, new, old) for new, old in zip(flat, acc)]
    return acc


_MONOID_REDUCERS = ((add, 0, reduce_sum), (mul, 1, reduce_prod),
                    (lax_max, "max", reduce_max), (lax_min, "min", reduce_min))
_BITWISE_REDUCERS = ((bitwise_or, reduce_or, 0), (bitwise_and, reduce_and, -1),
                     (bitwise_xor, reduce_xor, 0))


def _monoid_reducer(computation: Callable, init_values: Sequence[Any]
                    ) -> Callable[[Any, Sequence[int]], Any] | None:
    """The reduce_* function when ``computation`` is a monoid with its identity as the
    single init value (JAX's ``_get_monoid_reducer``)."""
    value = _concrete_scalar(init_values[0]) if len(init_values) == 1 else None
    if value is None:
        return None
    for fn, identity, reducer in _MONOID_REDUCERS:
        if computation is fn:
            if isinstance(identity, str):
                identity = _identity(identity, value.dtype)
            return reducer if value == identity else None
    for fn, reducer, identity in _BITWISE_REDUCERS:
        if computation is fn:
            if value.dtype == np.bool_:
                identity = bool(identity)
            return reducer if value == identity else None
    return None


def reduce(operands: Any, init_values: Any, computation: Callable,
           dimensions: Sequence[int]) -> Any:
    """Reduces ``operands`` (an array or a pytree of arrays of one shape) over
    ``dimensions`` with ``computation`` (``jax.lax.reduce``). Monoids with their identity
    run the reduce_* primitives; other computations fold pairwise (a tree order, as XLA
    may use) with whole-array applications, then combine with ``init_values``."""
    flat_operands, tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if len(flat_operands) != len(flat_inits):
        raise ValueError("Must have same total number of operands as init_values:  "
                         f"{len(flat_operands)} vs. {len(flat_inits)}")
    dims = tuple(int(d) for d in dimensions)
    reducer = _monoid_reducer(computation, flat_inits)
    if reducer is not None:
        return tree_util.tree_unflatten(tree, [reducer(flat_operands[0], dims)])
    shape = tuple(np.shape(flat_operands[0]))
    kept = [d for d in range(len(shape)) if d not in dims]
    kept_shape = tuple(shape[d] for d in kept)
    count = int(np.prod([shape[d] for d in dims], dtype=np.int64))
    xs = [reshape(transpose(x, (*kept, *dims)), (*kept_shape, count)) for x in flat_operands]
    inits = [broadcast_in_dim(convert_element_type(v, np.result_type(x.dtype)), kept_shape, ())
             for v, x in zip(flat_inits, xs)]
    if count == 0:
        return tree_util.tree_unflatten(tree, inits)
    axis = len(kept_shape)

    def part(x: Any, lo: int, hi: int) -> Any:
        return slice(x, (0,) * axis + (lo,), kept_shape + (hi,))

    def apply(a: list[Any], b: list[Any]) -> list[Any]:
        out = computation(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        flat, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise TypeError("reduce computation must return the tree structure of its "
                            f"operands, {tree}, got {out_tree}")
        return flat

    while count > 1:
        half = count // 2
        folded = apply([part(x, 0, half) for x in xs], [part(x, half, 2 * half) for x in xs])
        if count % 2:
            folded = [concatenate([f, part(x, count - 1, count)], axis)
                      for f, x in zip(folded, xs)]
        xs, count = folded, half + count % 2
    last = [reshape(x, kept_shape) for x in xs]
    return tree_util.tree_unflatten(tree, apply(inits, last))
