"""``dot_general``, ``dot`` and ``batch_matmul``, with ``Precision``.

Mirrors the dot part of ``jax._src.lax.lax``: the primitive with its abstract eval, impl,
lowering, transpose and batching rules, and its public functions.
"""
from __future__ import annotations

import enum
import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src import core, dtypes
from tinyxla._src.array import _CODE, _DTYPES, Array
from tinyxla._src.config import config
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.lax.conversion import _convert_element_type
from tinyxla._src.lax.eager import EAGER, _colocated, _operand, _reject, _result
from tinyxla._src.lax.elementwise import real
from tinyxla._src.lax.shape_ops import transpose
from tinyxla._src.lax.type_rules import (
    _COMPLEX_DTYPES, _dtype, _ndim, _real_dtype, _shape, _weak)
# iota has no operands, so it is never batched and needs no batching rule.


class Precision(enum.Enum):
    """Matmul precision (``jax.lax.Precision``); tinyxla always computes in full precision."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Precision.{self.name}"


_PRECISION_STRINGS = {
    'highest': Precision.HIGHEST, 'float32': Precision.HIGHEST, 'high': Precision.HIGH,
    'bfloat16_3x': Precision.HIGH, 'tensorfloat32': Precision.HIGH,
    'default': Precision.DEFAULT, 'bfloat16': Precision.DEFAULT, 'fastest': Precision.DEFAULT}


def canonicalize_precision(precision: Any) -> tuple[Precision, Precision] | None:
    """None, or a (lhs, rhs) pair of Precisions (``jax.lax.canonicalize_precision``).

    JAX's DotAlgorithm presets are not supported.
    """
    if precision is None:
        default = config.jax_default_matmul_precision
        return None if default is None else canonicalize_precision(default)
    if isinstance(precision, str) and precision in _PRECISION_STRINGS:
        p = _PRECISION_STRINGS[precision]
        return p, p
    if isinstance(precision, Precision):
        return precision, precision
    if isinstance(precision, (list, tuple)) and len(precision) == 2:
        pair = tuple(_PRECISION_STRINGS.get(p) if isinstance(p, str) else p for p in precision)
        if all(isinstance(p, Precision) for p in pair):
            return pair  # type: ignore[return-value]
    raise ValueError(
        "Precision argument must be one of:\n- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n- a lax.Precision value,\n"
        f"- a tuple of two lax.Precision values or strings;\nbut got {precision}.")


def _dot_type_properties(dt: np.dtype) -> tuple[bool, int, int, int, bool]:
    # The order XLA's HigherPrecisionType uses to pick a result type for mixed inputs.
    c = _real_dtype(dt)
    floating = dtypes.issubdtype(c, np.floating)
    bits = 1 if c == np.bool_ else c.itemsize * 8
    return (dtypes.issubdtype(dt, np.complexfloating),
            dtypes.finfo(c).maxexp if floating else -1,
            dtypes.finfo(c).nmant if floating else -1,
            bits, not dtypes.issubdtype(c, np.unsignedinteger))


def _dot_general_dtype(lhs: np.dtype, rhs: np.dtype, preferred: np.dtype | None) -> np.dtype:
    lp, rp = _dot_type_properties(lhs), _dot_type_properties(rhs)
    if lp > rp:
        out = lhs
    elif rp > lp:
        out = rhs
    else:
        if lhs != rhs:
            raise TypeError(f'lax.dot_general argument type error: {lhs}, {rhs}')
        out = lhs
    if preferred is None or preferred == out:
        return out
    # JAX's _bit_width: a complex dtype counts its parts' bits (complex64 -> 32)
    bits = lambda d: (1 if d == np.bool_ else dtypes.finfo(d).bits
                      if dtypes.issubdtype(d, np.inexact) else np.dtype(d).itemsize * 8)
    if not dtypes.issubdtype(out, np.floating) and bits(preferred) < bits(out):
        raise TypeError("`preferred_element_type` must not be narrower than the original type, "
                        f"got preferred_element_type of {preferred} for result type of {out}.")
    return np.dtype(preferred)


def _dot_general_abstract_eval(lhs: Any, rhs: Any, *, dimension_numbers: Any,
                               precision: Any = None,
                               preferred_element_type: np.dtype | None = None) -> ShapedArray:
    (lc, rc), (lb, rb) = dimension_numbers
    ln, rn = len(lhs.shape), len(rhs.shape)
    if not all(0 <= d < ln for d in (*lc, *lb)):
        raise TypeError("dot_general requires lhs dimension numbers to be nonnegative and less "
                        "than the number of axes of the lhs value, got "
                        f"lhs_batch of {lb} and lhs_contracting of {lc} for lhs of rank {ln}")
    if not all(0 <= d < rn for d in (*rc, *rb)):
        raise TypeError("dot_general requires rhs dimension numbers to be nonnegative and less "
                        "than the number of axes of the rhs value, got "
                        f"rhs_batch of {rb} and rhs_contracting of {rc} for rhs of rank {rn}")
    if len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                        f"dimensions, got lhs_batch {lb} and rhs_batch {rb}.")
    for side, batch, contract in (("lhs", lb, lc), ("rhs", rb, rc)):
        if len(set(batch)) != len(batch):
            raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, "
                            f"got {side}_batch {batch}.")
        if len(set(contract)) != len(contract):
            raise TypeError(f"dot_general requires {side} contracting dimensions to be "
                            f"distinct, got {side}_contracting {contract}.")
        if set(batch) & set(contract):
            raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                            f"contracting dimensions, got {side}_batch {batch} and "
                            f"{side}_contracting {contract}.")
    lbs, rbs = tuple(lhs.shape[i] for i in lb), tuple(rhs.shape[i] for i in rb)
    if lbs != rbs:
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to "
                        f"have the same shape, got {lbs} and {rbs}.")
    lcs, rcs = tuple(lhs.shape[i] for i in lc), tuple(rhs.shape[i] for i in rc)
    if lcs != rcs:
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {lcs} and {rcs}.")
    dtype = _dot_general_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    shape = (lbs + tuple(d for i, d in enumerate(lhs.shape) if i not in (*lc, *lb))
             + tuple(d for i, d in enumerate(rhs.shape) if i not in (*rc, *rb)))
    return ShapedArray(shape, dtype, _weak(lhs, rhs))


def _dot_general_emit(ops: Any, x: Any, y: Any, *, dimension_numbers: Any, out_code: int) -> Any:
    """The product written in the result dtype ``out_code``."""
    (lc, rc), (lb, rb) = dimension_numbers
    x_code, y_code = ops.dtype_code(x), ops.dtype_code(y)
    pref = -1
    if x_code != y_code:  # mixed dtypes compute in the result dtype, as XLA does
        x, y = ops.convert(x, out_code), ops.convert(y, out_code)
    elif out_code != x_code:
        pref = out_code  # the runtime accumulates and writes in the wider dtype
    return ops.dot_general(x, y, list(lc), list(rc), list(lb), list(rb), pref)


def _dot_general_impl(lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: Any = None,
                      preferred_element_type: np.dtype | None = None) -> Array:
    x = lhs if type(lhs) is Array else _operand(dot_general_p, 0, lhs)
    y = rhs if type(rhs) is Array else _operand(dot_general_p, 1, rhs)
    params = {"dimension_numbers": dimension_numbers, "precision": precision,
              "preferred_element_type": preferred_element_type}
    out_dtype = x.dtype if preferred_element_type is None else \
        _DTYPES[_CODE[preferred_element_type]]
    if x.dtype is not y.dtype or out_dtype is not x.dtype:
        out_dtype = _DTYPES[_CODE[dot_general_p.abstract_eval(x.aval, y.aval, **params).dtype]]
    try:
        out = _dot_general_emit(EAGER, x._h, y._h, dimension_numbers=dimension_numbers,
                                out_code=_CODE[out_dtype])
    except (TypeError, ValueError) as e:
        moved = _colocated(dot_general_p, (x, y))
        if moved is not None:
            return _dot_general_impl(*moved, **params)
        _reject(dot_general_p, (x, y), params, e)
        raise
    return _result(out, x.weak_type and y.weak_type, out_dtype, (x, y))


dot_general_p = Primitive('dot_general')
dot_general_p.def_abstract_eval(_dot_general_abstract_eval)
dot_general_p.def_impl(_dot_general_impl)


def _dot_general_lowering(ctx: lowering.LoweringContext, x: int, y: int, *, dimension_numbers: Any,
                          precision: Any = None,
                          preferred_element_type: np.dtype | None = None) -> int:
    return _dot_general_emit(lowering.GraphOps(ctx.builder), x, y,
                             dimension_numbers=dimension_numbers,
                             out_code=_CODE[np.dtype(ctx.avals_out[0].dtype)])


register_lowering(dot_general_p, _dot_general_lowering)


def _dot_general_pp_params(params: dict) -> dict:
    """As JAX prints them: dimension numbers as lists, unset options hidden."""
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    shown = {"dimension_numbers": ((list(lc), list(rc)), (list(lb), list(rb)))}
    for k in ("precision", "preferred_element_type"):
        if params.get(k) is not None:
            shown[k] = params[k]
    return shown


core.pp_params_rules[dot_general_p] = _dot_general_pp_params


def _ranges_like(*xs: Sequence[int]) -> list[tuple[int, ...]]:
    out, start = [], 0
    for x in xs:
        out.append(tuple(range(start, start + len(x))))
        start += len(x)
    return out


def _dot_general_transpose_lhs(g: Any, x: Any, y: Any, *, dimension_numbers: Any,
                               precision: Any = None, preferred_element_type: Any = None,
                               swap_ans: bool = False) -> Any:
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_ndim = x.aval.ndim
    x_kept = [i for i in range(x_ndim) if i not in x_contract and i not in x_batch]
    y_kept = [i for i in range(_ndim(y)) if i not in y_contract and i not in y_batch]
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, tuple(y_kept)), (ans_batch, tuple(y_batch)))
    x_contract_sorted_by_y = [int(i) for i in np.take(x_contract, np.argsort(y_contract))]
    unsorted_axes = list(x_batch) + x_kept + x_contract_sorted_by_y
    out = dot_general(g, y, dims, precision=precision,
                      preferred_element_type=preferred_element_type)
    x_bar = transpose(out, tuple(int(i) for i in np.argsort(unsorted_axes)))
    if _dtype(x_bar) != x.aval.dtype:
        if _dtype(x_bar) in _COMPLEX_DTYPES and x.aval.dtype not in _COMPLEX_DTYPES:
            # A real operand of a complex product: its cotangent is the real part (as the
            # transpose of JAX's real-to-complex convert_element_type, without its warning).
            x_bar = real(x_bar)
        x_bar = _convert_element_type(x_bar, x.aval.dtype, x.aval.weak_type)
    return x_bar


def _dot_general_transpose_rhs(g: Any, x: Any, y: Any, *, dimension_numbers: Any,
                               precision: Any = None, preferred_element_type: Any = None) -> Any:
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return _dot_general_transpose_lhs(g, y, x, dimension_numbers=swapped, precision=precision,
                                      preferred_element_type=preferred_element_type,
                                      swap_ans=True)


ad.defbilinear(dot_general_p, _dot_general_transpose_lhs, _dot_general_transpose_rhs)


def _dot_general_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                            dimension_numbers: Any, precision: Any = None,
                            preferred_element_type: np.dtype | None = None) -> tuple[Any, int]:
    """JAX's rule, always one dot_general: two batched operands gain a batch dimension;
    one batched operand keeps its batch axis as a free dimension, so a vector-matrix
    product over a batch becomes a single matrix product."""
    lhs, rhs = vals
    lbd, rbd = dims
    (lc, rc), (lb, rb) = dimension_numbers
    bump = lambda ds, b: tuple(d + 1 if d >= b else d for d in ds)
    if lbd is not None and rbd is not None:
        lb, rb = (lbd, *bump(lb, lbd)), (rbd, *bump(rb, rbd))
        lc, rc = bump(lc, lbd), bump(rc, rbd)
        out_dim = 0
    elif lbd is not None:
        lb, lc = bump(lb, lbd), bump(lc, lbd)
        free = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
        out_dim = len(lb) + free.index(lbd)
    else:
        rb, rc = bump(rb, rbd), bump(rc, rbd)
        free = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
        out_dim = batching.ndim_of(lhs) - len(lc) + free.index(rbd)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)),
                              precision=precision,
                              preferred_element_type=preferred_element_type), out_dim


batching.primitive_batchers[dot_general_p] = _dot_general_batch_rule


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """General tensor contraction (``jax.lax.dot_general``; no ``out_sharding``).

    ``dimension_numbers`` is ``((lhs_contracting, rhs_contracting), (lhs_batch,
    rhs_batch))``; the result's axes are batch, lhs free, rhs free. ``precision`` is
    validated and recorded but tinyxla always computes at full precision.
    """
    return dot(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
               preferred_element_type=preferred_element_type)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over equal leading batch dimensions (``jax.lax.batch_matmul``): both
    operands at least 2-D and of one rank, lhs ``(..., m, k)`` by rhs ``(..., k, n)``; the
    batch and contracting dimensions must agree as ``dot_general`` requires."""
    ln, rn = _ndim(lhs), _ndim(rhs)
    if min(ln, rn) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {ln}, {rn}")
    if ln != rn:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {ln}, {rn}")
    batch = tuple(range(ln - 2))
    return dot_general(lhs, rhs, (((ln - 1,), (rn - 2,)), (batch, batch)),
                       precision=precision)


def _index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


def dot(lhs: Any, rhs: Any, *, dimension_numbers: Any = None, precision: Any = None,
        preferred_element_type: Any = None) -> Any:
    """Vector/matrix products, or ``dot_general`` with ``dimension_numbers`` (``jax.lax.dot``)."""
    lhs_shape, rhs_shape = _shape(lhs), _shape(rhs)
    if dimension_numbers is None:
        ln, rn = len(lhs_shape), len(rhs_shape)
        if 1 <= ln <= 2 and 1 <= rn <= 2 and lhs_shape[-1] == rhs_shape[0]:
            dimension_numbers = (((ln - 1,), (0,)), ((), ()))
        else:
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple"
                " un-batched matrix-matrix, matrix-vector, or vector-vector products;"
                f" got lhs_shape={lhs_shape} rhs_shape={rhs_shape}")
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((_index_tuple(lc), _index_tuple(rc)), (_index_tuple(lb), _index_tuple(rb)))
    preferred = (None if preferred_element_type is None else
                 dtypes.check_user_dtype_supported(preferred_element_type, 'dot'))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dims,
                              precision=canonicalize_precision(precision),
                              preferred_element_type=preferred)
