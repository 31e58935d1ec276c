"""Batching: the interpreter behind vmap (mirrors ``jax._src.interpreters.batching``).

A ``BatchTracer`` pairs a value of the enclosing (parent) trace with the axis along which
it is mapped. ``BatchTrace.process_primitive`` hands each primitive applied to such
tracers to the primitive's batching rule, registered beside the primitive's definition
(the family modules of ``_src/lax/``, ``_src/api.py`` for ``jit``). A rule takes the
operand values and their batch dims (``not_mapped`` for an operand without one) and
returns the output and its batch dim; it runs under the parent trace, so its own ops are
recorded there. The dispatch is plain: vmap's staging shortcuts live in
``keyed_staging.StagingBatchTrace`` and the memos in ``caches``.

``batch_jaxpr`` is the Jaxpr -> Jaxpr transform, obtained by re-tracing ``eval_jaxpr``
under a BatchTrace whose parent is a ``DynamicJaxprTrace``. Named axes (``axis_name``)
live in a thread-local axis environment that collective rules read through
``axis_frame``; such rules go in ``axis_primitive_batchers`` and get the axis data.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading
from functools import partial
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from tinyxla._src import core
from tinyxla._src.core import ShapedArray
from tinyxla._src.interpreters import ad, lowering
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters.caches import example_aval, per_jaxpr

not_mapped = None  # the batch dim of an operand that is the same for every example

# rule(vals, dims, **params) -> (out, out_dim), or (outs, out_dims) for multiple results.
primitive_batchers: dict[core.Primitive, Callable[..., Any]] = {}
# rule(axis_data, vals, dims, **params): for rules that need the axis size or name
# (collectives, call primitives). Consulted first, and for a named axis even when no
# operand is batched, so that e.g. psum of an unbatched value over a vmapped axis gives
# axis_size * value.
axis_primitive_batchers: dict[core.Primitive, Callable[..., Any]] = {}
# Primitives whose rule is defvectorized / defbroadcasting: when their batched operands
# agree, the batched op is the op itself, which a staging BatchTrace records directly.
elementwise_primitives: set[core.Primitive] = set()


class AxisData:
    """One vmapped axis: its name (None when unnamed), size and SPMD mesh axes (JAX's
    ``batching.AxisData``; ``spmd_name`` is recorded but has no effect on one device)."""

    __slots__ = ("name", "size", "spmd_name")

    def __init__(self, name: Hashable | None, size: int, spmd_name: Any = None):
        self.name = name
        self.size = size
        self.spmd_name = spmd_name

    def __repr__(self):
        return f"AxisData(name={self.name!r}, size={self.size})"


# ---------------------------------------------------------------------------------------
# The axis environment: named axes in scope, innermost last.

class _AxisEnv(threading.local):
    def __init__(self):
        self.frames: list[AxisData] = []


_axis_env = _AxisEnv()


class extend_axis_env:
    """Context manager putting a named axis in scope while its vmap traces
    (``jax.core.extend_axis_env_nd``). An unnamed axis is not entered."""

    __slots__ = ("axis_data",)

    def __init__(self, axis_data: AxisData):
        self.axis_data = axis_data

    def __enter__(self):
        if self.axis_data.name is not None:
            _axis_env.frames.append(self.axis_data)

    def __exit__(self, *exc):
        if self.axis_data.name is not None:
            _axis_env.frames.pop()


def axis_frame(name: Hashable, api_name: str | None = None) -> AxisData:
    """The innermost axis in scope called ``name``; JAX's ``NameError`` when there is none,
    worded as JAX's collectives word it when ``api_name`` names the collective."""
    for frame in reversed(_axis_env.frames):
        if frame.name == name:
            return frame
    # With no axis bound at all, JAX's collectives (but axis_index) fail in its core.
    if api_name is None or not _axis_env.frames and api_name != "axis_index":
        raise NameError(f"unbound axis name: {name}")
    raise NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                    f"{api_name} under `jax.shard_map`.")


def axis_size(name: Hashable, api_name: str | None = None) -> int:
    """The size of the named axis in scope (``jax.core.get_axis_env().axis_size``)."""
    return axis_frame(name, api_name).size


def axis_names() -> tuple[Hashable, ...]:
    """The names of the axes in scope, outermost first."""
    return tuple(f.name for f in _axis_env.frames)


# ---------------------------------------------------------------------------------------
# Tracers and the trace.

def _long(aval: ShapedArray) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


class BatchTracer(core.Tracer):
    """A batched value: ``val`` (of the parent trace) mapped along ``batch_dim``. Its
    aval is one example's (``jax.interpreters.batching.BatchTracer``)."""

    __slots__ = ("val", "batch_dim", "_aval")

    def __init__(self, trace: "BatchTrace", val: Any, batch_dim: int | None,
                 aval: ShapedArray | None = None):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self._aval = aval  # one example's, when the caller knows it

    @property
    def aval(self) -> ShapedArray:
        aval = self._aval
        if aval is None:
            full = core.get_aval(self.val)
            d = self.batch_dim
            aval = self._aval = full if d is None else example_aval(full, d)
        return aval

    # Read per op by jnp's promotion: straight from the memoized aval.
    shape = property(lambda self: (self._aval or self.aval).shape)
    dtype = property(lambda self: (self._aval or self.aval).dtype)
    ndim = property(lambda self: len((self._aval or self.aval).shape))
    weak_type = property(lambda self: (self._aval or self.aval).weak_type)

    def __repr__(self):
        return f"VmapTracer(aval={_long(self.aval)}, batched={_long(core.get_aval(self.val))})"

    def _origin_msg(self) -> str:
        """JAX's note on where the tracer was made. We do not record creation sites (it
        would cost every op a stack walk); the user frame that is asking for a concrete
        value is, in practice, the line that made it (``if x > 0:``)."""
        where = _user_frame_summary()
        if where is None:
            return ""
        return (f"\nThis BatchTracer with object id {id(self)} was created on line:"
                f"\n  {where}")


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _user_frame_summary() -> str | None:
    """``file:line:column (function)`` of the innermost frame outside tinyxla."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    line, col = frame.f_lineno, 0
    try:
        pos = next(itertools.islice(code.co_positions(), frame.f_lasti // 2, None))
        line, col = pos[0] or line, pos[2] or 0
    except (AttributeError, StopIteration):
        pass
    return f"{code.co_filename}:{line}:{col} ({code.co_name})"


class BatchTrace(core.Trace):
    """Applies batching rules to the primitives bound on its tracers.

    ``parent`` is where the rules' ops go. ``unbatched`` is where a primitive with no
    batched operand goes: the parent, except when vmap stages a top-level call
    (``keyed_staging.StagingBatchTrace``), where the parent records the batched graph
    and such primitives run eagerly, as in JAX (so Python code may branch on values that
    do not depend on the mapped arguments).
    """

    def __init__(self, parent: core.Trace, axis_data: AxisData,
                 unbatched: core.Trace | None = None):
        self.parent = parent
        self.axis_data = axis_data
        self.unbatched = parent if unbatched is None else unbatched
        # Outputs without a batch dim are only handed back bare when the trace they
        # belong to is the one unbatched operands go to.
        self._lower_unmapped = self.unbatched is parent
        self.valid = True

    def to_batch_info(self, x: Any) -> tuple[Any, int | None]:
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.batch_dim
        return x, not_mapped

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any], params: dict):
        vals, dims, ours, batched = [], [], False, False
        for x in args:
            if type(x) is BatchTracer and x._trace is self:
                vals.append(x.val)
                d = x.batch_dim
                dims.append(d)
                ours = True
                if d is not None:
                    batched = True
            else:
                vals.append(x)
                dims.append(not_mapped)
        axis_rule = axis_primitive_batchers.get(primitive)
        if not ours and (axis_rule is None or self.axis_data.name is None):
            return self.bind_unbatched(primitive, args, params)
        state = core._state
        prev = state.trace
        state.trace = self.parent
        try:
            if axis_rule is not None:
                out, out_dim = axis_rule(self.axis_data, vals, dims, **params)
            elif not batched:
                out = primitive.bind(*vals, **params)
                out_dim = ([not_mapped] * len(out) if primitive.multiple_results
                           else not_mapped)
            else:
                rule = primitive_batchers.get(primitive)
                if rule is None:
                    raise NotImplementedError(
                        f"Batching rule for '{primitive.name}' not implemented")
                out, out_dim = self.apply_rule(primitive, rule, args, vals, dims, params)
        finally:
            state.trace = prev
        if primitive.multiple_results:
            return [self._wrap(o, d) for o, d in zip(out, out_dim)]
        return self._wrap(out, out_dim)

    def bind_unbatched(self, primitive: core.Primitive, args: Sequence[Any],
                       params: dict) -> Any:
        """A primitive none of whose operands is ours, bound on the unbatched trace."""
        state = core._state
        prev = state.trace
        state.trace = self.unbatched
        try:
            return primitive.bind(*args, **params)
        finally:
            state.trace = prev

    def apply_rule(self, primitive: core.Primitive, rule: Callable[..., Any],
                   args: Sequence[Any], vals: Sequence[Any], dims: Sequence[int | None],
                   params: dict) -> tuple[Any, Any]:
        """``rule`` on the operands' values and batch dims (``args`` are the operands as
        bound, for traces that record the rule's work their own way)."""
        return rule(vals, dims, **params)

    def _wrap(self, val: Any, dim: int | None) -> Any:
        if dim is None and self._lower_unmapped:
            return val
        return BatchTracer(self, val, dim)


# ---------------------------------------------------------------------------------------
# Helpers for rules. They bind under the current trace (the rule's parent trace).

# The lax ops the helpers are made of (transpose, broadcast_in_dim, expand_dims), filled in
# by lax when it loads: lax sits above the interpreters and registers its rules here.
lax_ops: dict[str, Callable[..., Any]] = {}


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of an array, tracer or Python/numpy scalar."""
    s = getattr(x, "shape", None)
    return np.shape(x) if s is None else s


def ndim_of(x: Any) -> int:
    return len(shape_of(x))


def canonicalize_axis(axis: int, ndim: int) -> int:
    """``axis`` in [0, ndim), with JAX's error for one out of range."""
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """``x`` with axis ``src`` moved to ``dst`` (one transpose, none when they agree)."""
    ndim = ndim_of(x)
    src, dst = canonicalize_axis(src, ndim), canonicalize_axis(dst, ndim)
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return lax_ops["transpose"](x, perm)


def unmapped_aval(size: int, axis: int, aval: ShapedArray) -> ShapedArray:
    """``aval`` with an axis of ``size`` inserted at ``axis`` (``jax.core.unmapped_aval``)."""
    shape = list(aval.shape)
    shape.insert(axis, size)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def broadcast(x: Any, size: int, axis: int) -> Any:
    """``x`` with a new axis of ``size`` at ``axis`` (one ``broadcast_in_dim``)."""
    shape = list(shape_of(x))
    shape.insert(axis, size)
    dims = tuple(i for i in range(len(shape)) if i != axis)
    return lax_ops["broadcast_in_dim"](x, tuple(shape), dims)


def bdim_at_front(x: Any, bdim: int | None, size: int) -> Any:
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast to ``size``."""
    if bdim is None:
        return broadcast(x, size, 0)
    return moveaxis(x, bdim, 0)


def matchaxis(axis_data: AxisData, src: int | None, dst: int | None, x: Any) -> Any:
    """``x`` batched along ``src`` moved to ``dst``: broadcast when ``src`` is unmapped;
    JAX's ``SpecMatchError`` when ``dst`` is None but ``x`` is mapped."""
    if src == dst:
        return x
    if src is not None and dst is not None:
        return moveaxis(x, src, dst)
    if src is None:
        return broadcast(x, axis_data.size, canonicalize_axis(dst, ndim_of(x) + 1))
    if axis_data.name is not None:
        raise ValueError(f"vmap has mapped output (axis_name={axis_data.name}) but "
                         f"out_axes is {dst}")
    raise SpecMatchError(None, src, dst)


class SpecMatchError(Exception):
    """An output mapped along ``src`` whose out_axes entry is ``dst`` (None)."""

    def __init__(self, leaf_idx: int | None, src: int | None, dst: int | None):
        self.leaf_idx = leaf_idx
        self.src = src
        self.dst = dst


def batch_size(vals: Sequence[Any], dims: Sequence[int | None]) -> int:
    """The size of the batch axis, read off the first batched operand."""
    return next(shape_of(x)[d] for x, d in zip(vals, dims) if d is not None)


# ---------------------------------------------------------------------------------------
# Rule families (JAX's defvectorized, defbroadcasting, defreducer).

def vectorized_batcher(prim: core.Primitive, vals: Sequence[Any], dims: Sequence[int | None],
                       **params: Any) -> tuple[Any, int | None]:
    """A one-operand elementwise primitive: the batch axis passes through."""
    x, = vals
    d, = dims
    return prim.bind(x, **params), d


def defvectorized(prim: core.Primitive) -> None:
    primitive_batchers[prim] = partial(vectorized_batcher, prim)
    elementwise_primitives.add(prim)


def broadcast_batcher(prim: core.Primitive, vals: Sequence[Any], dims: Sequence[int | None],
                      **params: Any) -> tuple[Any, int]:
    """An n-ary elementwise primitive. When every batched operand has the same shape and
    batch axis and the others are scalars, it is bound as it is; otherwise batch axes
    move to the front and unbatched operands get a size-1 axis there, relying on the
    primitive's broadcasting of size-1 axes."""
    shape = dim = None
    for x, d in zip(vals, dims):
        if d is not None:
            shape, dim = shape_of(x), d
            break
    if all(d == dim and shape_of(x) == shape for x, d in zip(vals, dims) if shape_of(x)):
        return prim.bind(*vals, **params), dim
    vals = [bdim_at_front(x, d, 1) if shape_of(x) else x for x, d in zip(vals, dims)]
    nd = max(ndim_of(x) for x in vals)
    vals = [x if d is None or ndim_of(x) == nd
            else lax_ops["expand_dims"](x, tuple(range(ndim_of(x), nd)))
            for x, d in zip(vals, dims)]
    return prim.bind(*vals, **params), 0


def defbroadcasting(prim: core.Primitive) -> None:
    primitive_batchers[prim] = partial(broadcast_batcher, prim)
    elementwise_primitives.add(prim)
    lowering.register_size1_broadcasting(prim)


def reducer_batcher(prim: core.Primitive, vals: Sequence[Any], dims: Sequence[int | None], *,
                    axes: tuple[int, ...], **params: Any) -> tuple[Any, int]:
    """A reduction over ``axes``: the axes shift past the batch axis, which survives."""
    operand, = vals
    bdim, = dims
    axes = tuple(a if a < bdim else a + 1 for a in axes)
    kept = [i for i in range(ndim_of(operand)) if i not in axes]
    return prim.bind(operand, axes=axes, **params), kept.index(bdim)


def defreducer(prim: core.Primitive) -> None:
    primitive_batchers[prim] = partial(reducer_batcher, prim)


# ---------------------------------------------------------------------------------------
# The Jaxpr -> Jaxpr transform.

def batch_jaxpr(closed: core.ClosedJaxpr, axis_data: AxisData, in_dims: Sequence[int | None],
                instantiate: bool | Sequence[bool] = False
                ) -> tuple[core.ClosedJaxpr, tuple[int | None, ...]]:
    """The jaxpr computing ``closed`` on inputs batched along ``in_dims``, and the batch
    dim of each output: 0, or None for an output that does not depend on the batch
    (unless ``instantiate`` asks for it to be broadcast). Mirrors JAX's ``batch_jaxpr``;
    cached per jaxpr object, dims and axis, as JAX caches it."""
    if isinstance(instantiate, bool):
        instantiate = (instantiate,) * len(closed.jaxpr.outvars)
    return _batch_jaxpr(closed, tuple(in_dims), axis_data.name, axis_data.size,
                        tuple(instantiate))


@per_jaxpr(1024)
def _batch_jaxpr(closed: core.ClosedJaxpr, in_dims: tuple[int | None, ...],
                 axis_name: Hashable | None, size: int, instantiate: tuple[bool, ...]
                 ) -> tuple[core.ClosedJaxpr, tuple[int | None, ...]]:
    axis_data = AxisData(axis_name, size)
    in_avals = []
    for aval, d in zip(closed.in_avals, in_dims):
        in_avals.append(aval if d is None else unmapped_aval(size, d, aval))
    out_dims: list[int | None] = []

    def fun(*args):
        trace = BatchTrace(core.current_trace(), axis_data)
        tracers = [a if d is None else BatchTracer(trace, a, d) for a, d in zip(args, in_dims)]
        try:
            with core.set_current_trace(trace):
                outs = core.eval_jaxpr(closed.jaxpr, closed.consts, *tracers)
        finally:
            trace.valid = False
        results = []
        for x, inst in zip(outs, instantiate):
            val, d = trace.to_batch_info(x)
            if d is None and not inst:
                out_dims.append(None)
            else:
                val = matchaxis(axis_data, d, 0, val)
                out_dims.append(0)
            results.append(val)
        return results

    batched = pe.trace_to_jaxpr(fun, in_avals)
    return batched, tuple(out_dims)


# ---------------------------------------------------------------------------------------
# add_any, the sum of tangents (JAX keeps its batching rule here too).

def _add_any_batch_rule(vals: Sequence[Any], dims: Sequence[int | None]) -> tuple[Any, int]:
    """add_any does not broadcast: an unbatched operand is broadcast along the batch
    axis of the other, and differing batch axes are aligned (JAX's ``add_batched``)."""
    x, y = vals
    bx, by = dims
    if bx == by:
        return ad.add_jaxvals_p.bind(x, y), bx
    if bx is None:
        return ad.add_jaxvals_p.bind(broadcast(x, shape_of(y)[by], by), y), by
    if by is None:
        return ad.add_jaxvals_p.bind(x, broadcast(y, shape_of(x)[bx], bx)), bx
    return ad.add_jaxvals_p.bind(moveaxis(x, bx, by), y), by


primitive_batchers[ad.add_jaxvals_p] = _add_any_batch_rule
