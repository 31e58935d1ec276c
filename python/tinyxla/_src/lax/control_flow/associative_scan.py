"""``lax.associative_scan``: a parallel prefix scan of an associative function, composed
of slices, pads and the function itself (so it gets jit, grad and vmap from those), as
JAX's is: combine neighbouring pairs, scan the half-length result, then fill in the
elements between (O(n) work in log2(n) rounds). A function that is one lax add, mul, max
or min of its two arguments is that op's cumulative primitive instead (one pass over the
data; any association is the same scan for an associative ``fn``, float rounding aside).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import core
from tinyxla._src.interpreters import batching
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.lax.cumulative import cummax, cummin, cumprod, cumsum
from tinyxla._src.lax.elementwise import add, add_p, bitwise_or, max_p, min_p, mul_p
from tinyxla._src.lax.shape_ops import concatenate, pad, rev
from tinyxla._src.lax.shape_ops import slice as lax_slice
from tinyxla._src.tree_util import tree_flatten, tree_unflatten


def _slice_axis(x: Any, start: int, stop: int | None, stride: int, axis: int) -> Any:
    shape = np.shape(x)
    stop = shape[axis] if stop is None else stop if stop >= 0 else shape[axis] + stop
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, max(stop, start), stride
    return lax_slice(x, starts, limits, strides)


def _interleave(evens: Any, odds: Any, axis: int) -> Any:
    """``evens[0], odds[0], evens[1], ...`` along ``axis`` (``evens`` as long as ``odds`` or
    one longer): each spread out with zero gaps by an interior pad, then summed."""
    ndim = len(np.shape(evens))
    same = np.shape(evens)[axis] == np.shape(odds)[axis]
    def config(lo, hi):
        return [(lo, hi, 1) if i == axis else (0, 0, 0) for i in range(ndim)]
    zero = np.zeros((), np.dtype(evens.dtype))
    combine = bitwise_or if np.dtype(evens.dtype) == np.bool_ else add
    return combine(pad(evens, zero, config(0, 1 if same else 0)),
                   pad(odds, zero, config(1, 0 if same else 1)))


_CUMULATIVE = {add_p: cumsum, mul_p: cumprod, max_p: cummax, min_p: cummin}


def _as_cumulative(fn: Callable[[Any, Any], Any], tree: Any, x: Any) -> Callable | None:
    """The cumulative function (``cumsum`` ...) that scanning the one array ``x`` with
    ``fn`` is, when ``fn`` traces to exactly that one op on its two arguments; else None."""
    aval = core.get_aval(x)
    if aval.dtype == np.bool_:
        return None
    pair = lambda a, b: tree_flatten(fn(tree_unflatten(tree, [a]), tree_unflatten(tree, [b])))[0]
    try:
        jaxpr = pe.trace_to_jaxpr(pair, [aval, aval]).jaxpr
    except Exception:  # noqa: BLE001 - fn's own errors surface from the general path
        return None
    if len(jaxpr.eqns) != 1 or len(jaxpr.outvars) != 1:
        return None
    eqn = jaxpr.eqns[0]
    if (eqn.primitive not in _CUMULATIVE or set(map(id, eqn.invars)) != set(map(id, jaxpr.invars))
            or eqn.outvars[0] is not jaxpr.outvars[0] or core.get_aval(eqn.outvars[0]) != aval):
        return None
    return _CUMULATIVE[eqn.primitive]


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """The inclusive scan of ``elems`` (a pytree of arrays of equal length along
    ``axis``) by the associative ``fn`` (``jax.lax.associative_scan``)."""
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    axis = batching.canonicalize_axis(axis, len(np.shape(leaves[0])))
    n = int(np.shape(leaves[0])[axis])
    if not all(int(np.shape(x)[axis]) == n for x in leaves[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first dimension. "
                         f"(saw: {[np.shape(x) for x in leaves]})")
    if len(leaves) == 1 and (cumulative := _as_cumulative(fn, tree, leaves[0])) is not None:
        return tree_unflatten(tree, [cumulative(leaves[0], axis, reverse)])
    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]

    def combine(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
        out, _ = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        return out

    # The downward pass keeps each level's inputs; the upward pass fills in the evens.
    levels = [leaves]
    while np.shape(levels[-1][0])[axis] >= 2:
        xs = levels[-1]
        levels.append(combine([_slice_axis(x, 0, -1, 2, axis) for x in xs],
                              [_slice_axis(x, 1, None, 2, axis) for x in xs]))
    result = levels.pop()
    while levels:
        xs = levels.pop()
        odds = result
        m = np.shape(xs[0])[axis]
        if m % 2 == 0:
            evens = combine([_slice_axis(o, 0, -1, 1, axis) for o in odds],
                            [_slice_axis(x, 2, None, 2, axis) for x in xs])
        else:
            evens = combine(odds, [_slice_axis(x, 2, None, 2, axis) for x in xs])
        evens = [concatenate([_slice_axis(x, 0, 1, 1, axis), e], axis) for x, e in zip(xs, evens)]
        result = [_interleave(e, o, axis) for e, o in zip(evens, odds)]
    if reverse:
        result = [rev(x, (axis,)) for x in result]
    return tree_unflatten(tree, result)
