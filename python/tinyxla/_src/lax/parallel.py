"""Collectives over named axes (mirrors ``jax._src.lax.parallel``): psum, pmean, pmax,
pmin, all_gather, psum_scatter, ppermute, all_to_all and axis_index.

Each primitive is defined here with all its rules: abstract evaluation (which raises JAX's
``NameError: unbound axis name`` outside a pmap or a named vmap), JVP, transpose, the vmap
rule (a collective over a vmapped axis becomes an ordinary array op along the batch axis;
over another axis it stays a collective of the batched value) and its pmap execution:

- ``route(shards, d, **params)`` picks, from the operand's per-device values ``shards``
  (``_core`` handles), the values device ``d`` needs: all of them, one chunk of each, or
  one peer's. These are views or shared buffers; nothing is copied or waited on.
- the lowering combines the routed values on device ``d`` (a sum, a concatenation, ...),
  the same graph on every device.

``interpreters/pmap.py`` splits a pmapped jaxpr at its collectives and runs them this way.
Differences from JAX: ``axis_index_groups`` is not supported; all_gather, psum_scatter,
ppermute, all_to_all and axis_index take a single axis name.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import core, dtypes
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.lax import lax
from tinyxla._src.tree_util import tree_flatten, tree_map, tree_unflatten

# route(shards, d, **params) -> the routed operands of device d's combine step.
collective_routes: dict[Primitive, Callable[..., list]] = {}


def _names(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _axis_size(names: Sequence[Hashable], api_name: str | None = "psum") -> int:
    return math.prod(batching.axis_size(n, api_name) for n in names)


def _one_name(axis_name: Any, op: str) -> Hashable:
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"{op} over several axes {names} is not supported by tinyxla")
    return names[0]


def _no_groups(axis_index_groups: Any) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups is not supported by tinyxla")


def _is_concrete(x: Any) -> bool:
    return not isinstance(x, core.Tracer)


def _moveaxis(x: Any, src: int, dst: int) -> Any:
    perm = [i for i in range(len(x.shape)) if i != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


def _batch_front(x: Any, d: int | None, size: int) -> Any:
    """``x`` with its batch axis first; an unbatched ``x`` broadcast along a new one."""
    if d is None:
        shape = tuple(x.shape)
        return lax.broadcast_in_dim(x, (size, *shape), tuple(range(1, len(shape) + 1)))
    return _moveaxis(x, d, 0) if d != 0 else x


def _route_all(shards: list, d: int, **params: Any) -> list:
    return list(shards)


def _chunk(h: Any, axis: int, i: int, size: int) -> Any:
    shape = list(h.shape)
    c = shape[axis] // size
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = i * c, (i + 1) * c
    return _core.slice(h, start, limit, [1] * len(shape))


# ---------------------------------------------------------------------------------------
# psum, pmax, pmin: an elementwise reduction over the devices.

def _reducer(name: str, reduce_fn: Callable, binary: str) -> Primitive:
    prim = Primitive(name)

    def abstract_eval(x: ShapedArray, *, axes: tuple) -> ShapedArray:
        _axis_size(axes)  # NameError for an unbound name
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def impl(x: Any, *, axes: tuple) -> Any:
        _axis_size(axes, None)  # eagerly no name is bound: JAX's core NameError
        raise AssertionError("unreachable")

    def batch_rule(axis_data, vals, dims, *, axes: tuple):
        (x,), (d,) = vals, dims
        if axis_data.name not in axes:
            return prim.bind(x, axes=axes), d
        if d is None:
            out = (lax.mul(x, lax._const(x, axis_data.size)) if name == "psum" else x)
        else:
            out = reduce_fn(x, (d,))
        rest = tuple(a for a in axes if a != axis_data.name)
        return (prim.bind(out, axes=rest) if rest else out), None

    def lower(ctx, *xs, axes: tuple):
        op = lax._BINARY_OP[binary]
        acc = xs[0]
        for y in xs[1:]:
            acc = ctx.builder.binary(op, acc, y)
        return acc

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    batching.axis_primitive_batchers[prim] = batch_rule
    lowering.register_lowering(prim, lower)
    collective_routes[prim] = _route_all
    return prim


psum_p = _reducer("psum", lax.reduce_sum, "add")
pmax_p = _reducer("pmax", lax.reduce_max, "max")
pmin_p = _reducer("pmin", lax.reduce_min, "min")

# psum is linear and self-adjoint (JAX's pmap convention: each device's cotangent is summed).
ad.deflinear2(psum_p, lambda ct, x, *, axes: [psum_p.bind(ct, axes=axes)])


def _pchooser_jvp(prim: Primitive):
    """The tangent of the device(s) holding the extreme value, averaged over ties
    (as reduce_max's JVP)."""
    def rule(primals, tangents, *, axes: tuple):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        if type(t) is ad.Zero:
            return out, ad.Zero.from_primal_value(out)
        location = lax._convert_element_type(lax.eq(x, out), lax._dtype(t), False)
        counts = psum_p.bind(location, axes=axes)
        return out, lax.div(psum_p.bind(lax.mul(t, location), axes=axes), counts)
    return rule


ad.primitive_jvps[pmax_p] = _pchooser_jvp(pmax_p)
ad.primitive_jvps[pmin_p] = _pchooser_jvp(pmin_p)


def _tree_collective(x: Any, bind: Callable[[Any], Any]) -> Any:
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [bind(lax.asarray(l) if not isinstance(l, core.Tracer)
                                      else l) for l in leaves])


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of ``x`` (a pytree) over the named axes (``jax.lax.psum``).

    Values that are not traced (Python numbers, closed-over arrays) are the same on every
    device, so their sum is the value times the axis size, computed at once, as in JAX."""
    _no_groups(axis_index_groups)
    axes = _names(axis_name)
    if not axes:
        return x
    leaves, tree = tree_flatten(x)
    # booleans count, in int32 (JAX's psum)
    leaves = [lax.convert_element_type(l, np.int32) if dtypes.dtype(l) == np.bool_ else l
              for l in leaves]
    x = tree_unflatten(tree, leaves)
    if all(_is_concrete(l) for l in leaves):
        size = _axis_size(axes)
        return tree_unflatten(tree, [l * size if isinstance(l, (int, float, complex, bool))
                                     else lax.mul(lax.asarray(l), lax._const(lax.asarray(l), size))
                                     for l in leaves])
    return _tree_collective(x, lambda l: psum_p.bind(l, axes=axes))


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of ``x`` (a pytree) over the named axes (``jax.lax.pmean``)."""
    _no_groups(axis_index_groups)
    size = _axis_size(_names(axis_name))
    return tree_map(lambda v: v / size, psum(x, axis_name))  # true division, as JAX


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The elementwise maximum of ``x`` over the named axes (``jax.lax.pmax``)."""
    _no_groups(axis_index_groups)
    axes = _names(axis_name)
    return _tree_collective(x, lambda l: pmax_p.bind(l, axes=axes))


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The elementwise minimum of ``x`` over the named axes (``jax.lax.pmin``)."""
    _no_groups(axis_index_groups)
    axes = _names(axis_name)
    return _tree_collective(x, lambda l: pmin_p.bind(l, axes=axes))


# ---------------------------------------------------------------------------------------
# all_gather and psum_scatter (reduce_scatter): each other's transpose.

all_gather_p = Primitive("all_gather")
reduce_scatter_p = Primitive("reduce_scatter")


def _all_gather_abstract_eval(x: ShapedArray, *, axis_name, all_gather_dimension: int,
                              axis_size: int, tiled: bool) -> ShapedArray:
    batching.axis_frame(axis_name, "all_gather")
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_gather_impl(x: Any, *, axis_name, **params: Any) -> Any:
    batching.axis_frame(axis_name, "all_gather")
    raise AssertionError("unreachable")


def _all_gather_batch(axis_data, vals, dims, *, axis_name, all_gather_dimension: int,
                      axis_size: int, tiled: bool):
    (x,), (d,) = vals, dims
    params = dict(axis_name=axis_name, axis_size=axis_size, tiled=tiled)
    if axis_data.name != axis_name:
        if d is None:
            return all_gather_p.bind(x, all_gather_dimension=all_gather_dimension,
                                     **params), None
        return all_gather_p.bind(_batch_front(x, d, axis_data.size),
                                 all_gather_dimension=all_gather_dimension + 1, **params), 0
    y = _moveaxis(_batch_front(x, d, axis_data.size), 0, all_gather_dimension)
    if tiled:
        shape = list(y.shape)
        shape[all_gather_dimension:all_gather_dimension + 2] = [
            shape[all_gather_dimension] * shape[all_gather_dimension + 1]]
        y = lax.reshape(y, tuple(shape))
    return y, None


def _all_gather_lower(ctx, *xs, axis_name, all_gather_dimension: int, axis_size: int,
                      tiled: bool):
    b = ctx.builder
    if not tiled:
        shape = list(ctx.avals_in[0].shape)
        shape.insert(all_gather_dimension, 1)
        xs = [b.reshape(x, shape) for x in xs]
    return xs[0] if len(xs) == 1 else b.concatenate(list(xs), all_gather_dimension)


all_gather_p.def_abstract_eval(_all_gather_abstract_eval)
all_gather_p.def_impl(_all_gather_impl)
batching.axis_primitive_batchers[all_gather_p] = _all_gather_batch
lowering.register_lowering(all_gather_p, _all_gather_lower)
collective_routes[all_gather_p] = _route_all


def _reduce_scatter_abstract_eval(x: ShapedArray, *, axis_name, scatter_dimension: int,
                                  axis_size: int, tiled: bool) -> ShapedArray:
    batching.axis_frame(axis_name, "reduce_scatter")
    shape = list(x.shape)
    if tiled:
        if shape[scatter_dimension] % axis_size:
            raise ValueError(f"psum_scatter: dimension {scatter_dimension} of size "
                             f"{shape[scatter_dimension]} is not divisible by the axis size "
                             f"{axis_size}")
        shape[scatter_dimension] //= axis_size
    else:
        if shape[scatter_dimension] != axis_size:
            raise ValueError(f"psum_scatter: dimension {scatter_dimension} has size "
                             f"{shape[scatter_dimension]}, expected the axis size {axis_size}")
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _reduce_scatter_batch(axis_data, vals, dims, *, axis_name, scatter_dimension: int,
                          axis_size: int, tiled: bool):
    (x,), (d,) = vals, dims
    params = dict(axis_name=axis_name, axis_size=axis_size, tiled=tiled)
    if axis_data.name != axis_name:
        if d is None:
            return reduce_scatter_p.bind(x, scatter_dimension=scatter_dimension, **params), None
        return reduce_scatter_p.bind(_batch_front(x, d, axis_data.size),
                                     scatter_dimension=scatter_dimension + 1, **params), 0
    total = lax.reduce_sum(x, (d,)) if d is not None else lax.mul(
        x, lax._const(x, axis_data.size))
    shape = list(total.shape)
    if tiled:
        shape[scatter_dimension:scatter_dimension + 1] = [axis_size,
                                                          shape[scatter_dimension] // axis_size]
        total = lax.reshape(total, tuple(shape))
    return _moveaxis(total, scatter_dimension, 0), 0


def _reduce_scatter_lower(ctx, *xs, axis_name, scatter_dimension: int, axis_size: int,
                          tiled: bool):
    b = ctx.builder
    acc = xs[0]
    for y in xs[1:]:
        acc = b.binary(lax._BINARY_OP["add"], acc, y)
    return acc if tiled else b.reshape(acc, list(ctx.avals_out[0].shape))


def _reduce_scatter_route(shards: list, d: int, *, scatter_dimension: int, axis_size: int,
                          **params: Any) -> list:
    return [_chunk(h, scatter_dimension, d, axis_size) for h in shards]


reduce_scatter_p.def_abstract_eval(_reduce_scatter_abstract_eval)
reduce_scatter_p.def_impl(_all_gather_impl)
batching.axis_primitive_batchers[reduce_scatter_p] = _reduce_scatter_batch
lowering.register_lowering(reduce_scatter_p, _reduce_scatter_lower)
collective_routes[reduce_scatter_p] = _reduce_scatter_route

ad.deflinear2(all_gather_p, lambda ct, x, *, axis_name, all_gather_dimension, axis_size, tiled: [
    reduce_scatter_p.bind(ct, axis_name=axis_name, scatter_dimension=all_gather_dimension,
                          axis_size=axis_size, tiled=tiled)])
ad.deflinear2(reduce_scatter_p, lambda ct, x, *, axis_name, scatter_dimension, axis_size, tiled: [
    all_gather_p.bind(ct, axis_name=axis_name, all_gather_dimension=scatter_dimension,
                      axis_size=axis_size, tiled=tiled)])


def _canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """Every device's ``x`` stacked along ``axis`` (concatenated when ``tiled``)
    (``jax.lax.all_gather``)."""
    _no_groups(axis_index_groups)
    name = _one_name(axis_name, "all_gather")
    size = _axis_size((name,), "all_gather")

    def bind(l):
        ndim = len(l.shape)
        dim = _canonical_axis(axis, ndim if tiled else ndim + 1)
        return all_gather_p.bind(l, axis_name=name, all_gather_dimension=dim,
                                 axis_size=size, tiled=tiled)
    return _tree_collective(x, bind)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """The sum over the axis, of which device ``i`` keeps block ``i`` along
    ``scatter_dimension`` (``jax.lax.psum_scatter``)."""
    _no_groups(axis_index_groups)
    name = _one_name(axis_name, "psum_scatter")
    size = _axis_size((name,), "reduce_scatter")
    return _tree_collective(x, lambda l: reduce_scatter_p.bind(
        l, axis_name=name, scatter_dimension=_canonical_axis(scatter_dimension, len(l.shape)),
        axis_size=size, tiled=tiled))


# ---------------------------------------------------------------------------------------
# ppermute: device dst receives device src's value for each (src, dst); others get zeros.

ppermute_p = Primitive("ppermute")


def _ppermute_abstract_eval(x: ShapedArray, *, axis_name, perm: tuple) -> ShapedArray:
    batching.axis_frame(axis_name, "ppermute")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _ppermute_batch(axis_data, vals, dims, *, axis_name, perm: tuple):
    (x,), (d,) = vals, dims
    if axis_data.name != axis_name:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    if len(perm) != axis_data.size:  # JAX's ppermute batcher asserts this
        raise AssertionError("Permutation doesn't match the axis size!")
    x = _batch_front(x, d, axis_data.size)
    src_of = dict((dst, src) for src, dst in perm)
    shape = tuple(x.shape)
    rows = []
    for i in range(axis_data.size):
        src = src_of.get(i)
        if src is None:
            rows.append(lax.full_like(x, 0, shape=(1, *shape[1:])))
        else:
            rows.append(lax.slice(x, (src, *[0] * (len(shape) - 1)), (src + 1, *shape[1:])))
    return lax.concatenate(rows, 0), 0


def _ppermute_route(shards: list, d: int, *, perm: tuple, **params: Any) -> list:
    for src, dst in perm:
        if dst == d:
            return [shards[src]]
    h = shards[0]
    return [_core.full(list(h.shape), 0, h.dtype_code, h.device)]


ppermute_p.def_abstract_eval(_ppermute_abstract_eval)
ppermute_p.def_impl(_all_gather_impl)
batching.axis_primitive_batchers[ppermute_p] = _ppermute_batch
lowering.register_lowering(ppermute_p, lambda ctx, x, **params: x)
collective_routes[ppermute_p] = _ppermute_route
ad.deflinear2(ppermute_p, lambda ct, x, *, axis_name, perm: [
    ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((dst, src) for src, dst in perm))])


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Sends device ``src``'s value to device ``dst`` for each pair of ``perm``; devices
    that receive nothing get zeros (``jax.lax.ppermute``)."""
    name = _one_name(axis_name, "ppermute")
    size = _axis_size((name,), "ppermute")
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    for s, d in perm:
        if not (0 <= s < size and 0 <= d < size):
            raise ValueError(f"ppermute perm indices must be in the range [0, {size}), got "
                             f"{perm}")
    return _tree_collective(x, lambda l: ppermute_p.bind(l, axis_name=name, perm=perm))


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """Device ``i`` gets device ``perm[i]``'s value (``jax.lax.pshuffle``)."""
    return ppermute(x, axis_name, [(src, dst) for dst, src in enumerate(perm)])


# ---------------------------------------------------------------------------------------
# all_to_all (tiled form): block j of split_axis goes to device j; the received blocks are
# concatenated along concat_axis in device order.

all_to_all_p = Primitive("all_to_all")


def _all_to_all_abstract_eval(x: ShapedArray, *, axis_name, split_axis: int,
                              concat_axis: int, axis_size: int) -> ShapedArray:
    batching.axis_frame(axis_name, "all_to_all")
    shape = list(x.shape)
    if shape[split_axis] % axis_size:
        raise ValueError(f"all_to_all: the split axis {split_axis} of size "
                         f"{shape[split_axis]} is not divisible by the axis size {axis_size}")
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_to_all_batch(axis_data, vals, dims, *, axis_name, split_axis: int,
                      concat_axis: int, axis_size: int):
    (x,), (d,) = vals, dims
    if axis_data.name != axis_name:
        if d is None:
            return all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis,
                                     concat_axis=concat_axis, axis_size=axis_size), None
        return all_to_all_p.bind(_batch_front(x, d, axis_data.size), axis_name=axis_name,
                                 split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                                 axis_size=axis_size), 0
    x = _batch_front(x, d, axis_data.size)
    n = axis_data.size
    shape = list(x.shape[1:])
    r = len(shape)
    c = shape[split_axis] // n
    # (N_j, S[:sa], N_i, c, S[sa+1:]): example j's blocks along a new axis N_i.
    x2 = lax.reshape(x, (n, *shape[:split_axis], n, c, *shape[split_axis + 1:]))
    pos = [1 + k if k < split_axis else (split_axis + 2 if k == split_axis else k + 2)
           for k in range(r)]
    perm = [split_axis + 1]
    for k in range(r):
        if k == concat_axis:
            perm.append(0)
        perm.append(pos[k])
    y = lax.transpose(x2, perm)
    out = list(shape)
    out[split_axis] = c
    out[concat_axis] *= n
    return lax.reshape(y, (n, *out)), 0


def _all_to_all_route(shards: list, d: int, *, split_axis: int, axis_size: int,
                      **params: Any) -> list:
    return [_chunk(h, split_axis, d, axis_size) for h in shards]


def _all_to_all_lower(ctx, *xs, axis_name, split_axis: int, concat_axis: int, axis_size: int):
    return xs[0] if len(xs) == 1 else ctx.builder.concatenate(list(xs), concat_axis)


all_to_all_p.def_abstract_eval(_all_to_all_abstract_eval)
all_to_all_p.def_impl(_all_gather_impl)
batching.axis_primitive_batchers[all_to_all_p] = _all_to_all_batch
lowering.register_lowering(all_to_all_p, _all_to_all_lower)
collective_routes[all_to_all_p] = _all_to_all_route
ad.deflinear2(all_to_all_p, lambda ct, x, *, axis_name, split_axis, concat_axis, axis_size: [
    all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis, concat_axis=split_axis,
                      axis_size=axis_size)])


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Device ``i`` receives block ``i`` (along ``split_axis``) of every device's ``x``,
    concatenated along ``concat_axis`` (``jax.lax.all_to_all``). Untiled, ``split_axis``
    must have the axis size and is replaced by a new axis at ``concat_axis``."""
    _no_groups(axis_index_groups)
    name = _one_name(axis_name, "all_to_all")
    size = _axis_size((name,), "all_to_all")

    def bind(l):
        ndim = len(l.shape)
        sa, ca = _canonical_axis(split_axis, ndim), _canonical_axis(concat_axis, ndim)
        if tiled:
            if l.shape[sa] % size:
                raise ValueError(f"The size of all_to_all split_axis ({l.shape[sa]}) has to "
                                 f"be divisible by the size of the named axis {name} ({size})")
            return all_to_all_p.bind(l, axis_name=name, split_axis=sa, concat_axis=ca,
                                     axis_size=size)
        if l.shape[sa] != size:
            raise ValueError(f"all_to_all requires the size of the mapped axis axis_name to "
                             f"equal x.shape[split_axis], but they are {size} and "
                             f"{l.shape[sa]}, respectively.")
        if sa < ca:
            ca += 1  # concat_axis is a position after split_axis is removed
            l = lax.expand_dims(l, (ca,))
        elif ca < sa:
            l = lax.expand_dims(l, (ca,))
            sa += 1
        out = all_to_all_p.bind(l, axis_name=name, split_axis=sa, concat_axis=ca,
                                axis_size=size)
        return lax.squeeze(out, (sa,)) if sa != ca else out
    return _tree_collective(x, bind)


# ---------------------------------------------------------------------------------------
# axis_index: this device's position along the axis (int32).

axis_index_p = Primitive("axis_index")


def _axis_index_abstract_eval(*, axis_name) -> ShapedArray:
    batching.axis_frame(axis_name, "axis_index")
    return ShapedArray((), dtypes.int32, False)


def _axis_index_impl(*, axis_name) -> Any:
    batching.axis_frame(axis_name, "axis_index")
    raise AssertionError("unreachable")


def _axis_index_batch(axis_data, vals, dims, *, axis_name):
    if axis_data.name != axis_name:
        return axis_index_p.bind(axis_name=axis_name), None
    return lax.iota(dtypes.int32, axis_data.size), 0


def _axis_index_route(shards: list, d: int, **params: Any) -> list:
    return [_core.scalar(d, lowering.code(dtypes.int32), 0)]


axis_index_p.def_abstract_eval(_axis_index_abstract_eval)
axis_index_p.def_impl(_axis_index_impl)
batching.axis_primitive_batchers[axis_index_p] = _axis_index_batch
lowering.register_lowering(axis_index_p, lambda ctx, index, **params: index)
collective_routes[axis_index_p] = _axis_index_route
ad.defjvp_zero(axis_index_p)


def axis_index(axis_name: Any) -> Any:
    """This device's (or vmapped example's) index along the named axis
    (``jax.lax.axis_index``)."""
    return axis_index_p.bind(axis_name=_one_name(axis_name, "axis_index"))


def axis_size(axis_name: Any) -> int:
    """The size of the named axis (``jax.lax.axis_size``)."""
    return _axis_size(_names(axis_name))
