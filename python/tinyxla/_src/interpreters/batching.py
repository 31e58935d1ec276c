"""Batching: the interpreter behind vmap (mirrors ``jax._src.interpreters.batching``).

A ``BatchTracer`` pairs a value of the enclosing (parent) trace with the axis along which
it is mapped. ``BatchTrace.process_primitive`` hands each primitive applied to such
tracers to the primitive's batching rule, registered beside the primitive's definition
(the family modules of ``_src/lax/``, ``_src/api.py`` for ``jit``). A rule takes the operand values and
their batch dims (``not_mapped`` for an operand without one) and returns the output and
its batch dim; it runs under the parent trace, so its own ops are recorded there.

``batch_jaxpr`` is the Jaxpr -> Jaxpr transform, obtained by re-tracing ``eval_jaxpr``
under a BatchTrace whose parent is a ``DynamicJaxprTrace``. Named axes (``axis_name``)
live in a thread-local axis environment that collective rules read through
``axis_frame``; such rules go in ``axis_primitive_batchers`` and get the axis data.
"""
from __future__ import annotations

import itertools
import sys
import threading
from functools import partial
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from tinyxla._src import core
from tinyxla._src.config import config
from tinyxla._src.core import JaxprEqn, Literal, ShapedArray, Var
from tinyxla._src.interpreters import ad, keyed_staging, lowering
from tinyxla._src.interpreters.partial_eval import DynamicJaxprTrace, DynamicJaxprTracer

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


def axis_frame(name: Hashable) -> AxisData:
    """The innermost axis in scope called ``name``; JAX's ``NameError`` when there is none."""
    for frame in reversed(_axis_env.frames):
        if frame.name == name:
            return frame
    raise NameError(f"unbound axis name: {name}")


def axis_size(name: Hashable) -> int:
    """The size of the named axis in scope (``jax.core.get_axis_env().axis_size``)."""
    return axis_frame(name).size


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


def _user_frame_summary() -> str | None:
    """``file:line:column (function)`` of the innermost frame outside tinyxla."""
    import tinyxla
    pkg = tinyxla.__file__.rsplit("/", 1)[0]
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(pkg):
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
    batched operand goes: the parent, except when vmap stages a top-level call, where
    the parent records the batched graph and such primitives run eagerly, as in JAX
    (so Python code may branch on values that do not depend on the mapped arguments).
    """

    def __init__(self, parent: core.Trace, axis_data: AxisData,
                 unbatched: core.Trace | None = None):
        self.parent = parent
        self.axis_data = axis_data
        self.unbatched = parent if unbatched is None else unbatched
        # Outputs without a batch dim are only handed back bare when the trace they
        # belong to is the one unbatched operands go to.
        self._lower_unmapped = self.unbatched is parent
        # vmap staging a top-level call: elementwise ops take a fast path (_stage_elementwise).
        self._stage = parent if (type(parent) is keyed_staging.KeyedJaxprTrace
                                 and not self._lower_unmapped) else None
        # Python scalars converted eagerly (jnp's promotion of ``x * 2.0``), by id: the
        # fast path stages them as literals, as a staging trace would, not as constants.
        # Each with its literal's id in the content key.
        self._scalars: dict[int, tuple[Any, Literal, int]] = {}
        self.valid = True

    def to_batch_info(self, x: Any) -> tuple[Any, int | None]:
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.batch_dim
        return x, not_mapped

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any], params: dict):
        if self._stage is not None and primitive in elementwise_primitives:
            out = self._stage_elementwise(primitive, args, params)
            if out is not None:
                return out
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
        state = core._state
        prev = state.trace
        axis_rule = axis_primitive_batchers.get(primitive)
        if not ours and (axis_rule is None or self.axis_data.name is None):
            state.trace = self.unbatched
            try:
                out = primitive.bind(*args, **params)
            finally:
                state.trace = prev
            if (self._stage is not None and primitive.name == "convert_element_type"
                    and type(args[0]) in _PY_SCALARS):
                aval = core.get_aval(out)
                lit = Literal(np.asarray(args[0]).astype(aval.dtype)[()], aval)
                self._scalars[id(out)] = (out, lit, keyed_staging.literal_id(lit))
            return out
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
                done = (self._stage is not None
                        and self._replay_rule(primitive, rule, args, vals, dims, params))
                out, out_dim = done or rule(vals, dims, **params)
        finally:
            state.trace = prev
        if primitive.multiple_results:
            return [self._wrap(o, d) for o, d in zip(out, out_dim)]
        return self._wrap(out, out_dim)

    def _wrap(self, val: Any, dim: int | None) -> Any:
        if dim is None and self._lower_unmapped:
            return val
        return BatchTracer(self, val, dim)

    def _stage_elementwise(self, primitive: core.Primitive, args: Sequence[Any],
                           params: dict) -> BatchTracer | None:
        """Records an elementwise op whose batched operands share their batch axis and
        shape (the others being Python scalars, or ones converted eagerly) as the one
        equation its rule would make, skipping the rule and the staging trace's abstract
        evaluation (the output aval rides on the content key's edge): vmap traces at
        every call, so this is its hot path. None when it does not apply."""
        stage = self._stage
        index = stage.index
        dim = shape = None
        invars = []
        key: list[Any] = [stage.node, keyed_staging.ELEMENTWISE, primitive]
        for x in args:
            t = type(x)
            if t is BatchTracer and x._trace is self:
                v = x.val
                d = x.batch_dim
                if d is None or type(v) is not DynamicJaxprTracer or v._trace is not stage:
                    return None
                a = v._aval
                if dim is None:
                    dim, shape = d, a.shape
                elif d != dim or a.shape != shape:
                    return None
                var = v.var
                invars.append(var)
                key.append(index.get(var))
            elif t in _PY_SCALARS:
                lit, ref = (_py_literals.get((t, x)) if x and t is not complex else None
                            ) or keyed_staging.py_literal(x)
                invars.append(lit)
                key.append(ref)
            else:
                entry = self._scalars.get(id(x))
                if entry is None or entry[0] is not x:
                    return None
                invars.append(entry[1])
                key.append(entry[2])
        if dim is None:  # nothing batched: the unbatched trace's business
            return None
        avals = None
        if stage.keyed:
            if params:
                key.extend(params.items())
            try:
                key_t = tuple(key)
                hit = _edges.get(key_t)
            except TypeError:  # an unhashable parameter
                hit = key_t = None
            if hit is not None:
                stage.node, avals = hit
            elif key_t is None or None in key:  # a variable made without an event
                stage.keyed = False
        if avals is None:
            out = _elementwise_aval(primitive, invars, params)
            # The output's and one example's avals (the latter read by jnp's promotion).
            avals = (out, example_aval(out, dim))
            if stage.keyed:
                stage.node = keyed_staging.advance(key_t, avals)
        out = avals[0]
        var = Var(out)
        stage.eqns.append(JaxprEqn(primitive, invars, [var], params))
        index[var] = len(index)
        return BatchTracer(self, DynamicJaxprTracer(stage, out, var), dim, avals[1])

    def _replay_rule(self, primitive: core.Primitive, rule: Callable[..., Any],
                     args: Sequence[Any], vals: Sequence[Any], dims: Sequence[int | None],
                     params: dict) -> tuple[Any, Any] | None:
        """The staged-mode path of every other rule: the equations a rule makes depend
        only on the operands' avals and batch dims and the params, so they are recorded
        once per such key (``_RuleTemplate``) and replayed onto the operands' variables.
        None when an operand is of a kind the template cannot take."""
        stage = self._stage
        index = stage.index
        invars, refs = [], []
        for x, v, d in zip(args, vals, dims):
            t = type(x)
            if t is BatchTracer:  # ours (batched or not): its value is staged
                if type(v) is not DynamicJaxprTracer or v._trace is not stage:
                    return None
                var = v.var
                ref = index.get(var)
            elif t in _PY_SCALARS:
                var, ref = keyed_staging.py_literal(x)
            else:
                entry = self._scalars.get(id(x))
                if entry is not None and entry[0] is x:
                    var, ref = entry[1], entry[2]
                elif isinstance(x, core.Tracer):
                    return None
                else:
                    var, ref = stage.const_ref(x)  # a concrete value: a constant
            invars.append(var)
            refs.append(ref)
            refs.append(d)
        template = None
        if stage.keyed:
            try:
                key_t = (stage.node, keyed_staging.RULE, primitive, len(args), *refs,
                         *params.items())
                hit = _edges.get(key_t)
            except TypeError:  # an unhashable parameter
                hit = key_t = None
            if hit is not None:
                stage.node, template = hit
            elif key_t is None or None in refs[::2]:  # a variable made without an event
                stage.keyed = False
        if template is None:
            template = _rule_template(primitive, rule, invars, dims, params)
            if template is None:
                return None
            if stage.keyed:
                if any(isinstance(p, (core.Jaxpr, core.ClosedJaxpr)) for p in params.values()):
                    stage.keyed = False  # sub-jaxprs are keyed by content: the walk does it
                else:
                    stage.node = keyed_staging.advance(key_t, template)
        return template.replay(stage, invars, primitive.multiple_results)


def example_aval(full: ShapedArray, d: int) -> ShapedArray:
    """One example's aval of a value batched along ``d``. Staged values share their avals
    (memoized abstract evaluation): so can their one-example avals."""
    key = (full, d)
    aval = _example_avals.get(key)
    if aval is None:
        aval = ShapedArray(full.shape[:d] + full.shape[d + 1:], full.dtype, full.weak_type)
        if len(_example_avals) >= _AVAL_MEMO_SIZE:
            _example_avals.clear()
        _example_avals[key] = aval
    return aval


def _elementwise_aval(primitive: core.Primitive, invars: list, params: dict) -> ShapedArray:
    """The output aval of an elementwise equation, memoized by input avals and params."""
    avals = [v.aval for v in invars]
    try:
        key = (primitive, *avals, *params.items())
        out = _aval_memo.get(key)
    except TypeError:  # an unhashable parameter
        key = out = None
    if out is None:
        out = primitive.abstract_eval(*avals, **params)
        if key is not None:
            if len(_aval_memo) >= _AVAL_MEMO_SIZE:
                _aval_memo.clear()
            _aval_memo[key] = out
    return out


def _rule_template(primitive: core.Primitive, rule: Callable[..., Any], invars: list,
                   dims: Sequence[int | None], params: dict) -> "_RuleTemplate | None":
    """The template of ``rule`` for operands of these avals and dims (recorded once)."""
    avals = [v.aval for v in invars]
    key: list[Any] = [primitive, *params.items()]
    for a, d in zip(avals, dims):
        key.append(a)
        key.append(d)
    try:
        key_t = tuple(key)
        template = _rule_templates.get(key_t)
    except TypeError:  # an unhashable parameter
        return None
    if template is None:
        template = _RuleTemplate.record(primitive, rule, avals, dims, params)
        if template is None:
            return None
        if len(_rule_templates) >= _AVAL_MEMO_SIZE:
            _rule_templates.clear()
        _rule_templates[key_t] = template
    return template


class _RuleTemplate:
    """The equations one batching rule made for operands of given avals and dims, with
    the operands as arguments: replayed onto other variables of the same avals."""

    __slots__ = ("args", "eqns", "outvars", "out_dim")

    def __init__(self, args: list[Var], eqns: list[JaxprEqn], outvars: list, out_dim: Any):
        self.args = args
        self.eqns = eqns
        self.outvars = outvars
        self.out_dim = out_dim

    @staticmethod
    def record(primitive: core.Primitive, rule: Callable[..., Any], avals: list[ShapedArray],
               dims: Sequence[int | None], params: dict) -> "_RuleTemplate | None":
        """Runs ``rule`` on fresh staged operands; None if it captured a constant."""
        trace = DynamicJaxprTrace()
        operands = [trace.new_arg(a) for a in avals]
        state = core._state
        prev = state.trace
        state.trace = trace
        try:
            out, out_dim = rule(operands, dims, **params)
        finally:
            state.trace = prev
            trace.valid = False
        outs = out if primitive.multiple_results else [out]
        outvars = [trace.to_var(o) for o in outs]
        if trace.constvars:
            return None
        return _RuleTemplate(trace.args, trace.eqns, outvars, out_dim)

    def replay(self, stage: keyed_staging.KeyedJaxprTrace, invars: list, multiple_results: bool
               ) -> tuple[Any, Any]:
        env: dict[Var, Any] = dict(zip(self.args, invars))
        eqns = stage.eqns
        index = stage.index
        for eqn in self.eqns:
            outs = [Var(v.aval) for v in eqn.outvars]
            env.update(zip(eqn.outvars, outs))
            for v in outs:
                index[v] = len(index)
            eqns.append(JaxprEqn(eqn.primitive,
                                 [env[v] if type(v) is Var else v for v in eqn.invars],
                                 outs, eqn.params))
        results = [DynamicJaxprTracer(stage, v.aval, env[v] if type(v) is Var else v)
                   for v in self.outvars]
        return (results if multiple_results else results[0]), self.out_dim


_PY_SCALARS = frozenset({bool, int, float, complex})
_edges = keyed_staging.edges
_py_literals = keyed_staging.py_literals  # hits read inline; py_literal makes the rest
_AVAL_MEMO_SIZE = 8192
_rule_templates: dict[tuple, _RuleTemplate] = {}
_aval_memo: dict[tuple, ShapedArray] = {}  # (primitive, *in avals, *params) -> out aval
_example_avals: dict[tuple, ShapedArray] = {}  # (batched aval, batch dim) -> one example's


def _clear_memos(*_: Any) -> None:
    # Some abstract evaluations follow the x64 flag.
    _aval_memo.clear()
    _example_avals.clear()
    _rule_templates.clear()


config.add_update_hook(_clear_memos)


# ---------------------------------------------------------------------------------------
# Helpers for rules. They bind under the current trace (the rule's parent trace).

_lax_module: Any = None


def _lax() -> Any:
    global _lax_module
    if _lax_module is None:
        from tinyxla._src.lax import lax as _lax_mod
        _lax_module = _lax_mod
    return _lax_module


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
    return _lax().transpose(x, perm)


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
    return _lax().broadcast_in_dim(x, tuple(shape), dims)


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
            else _lax().expand_dims(x, tuple(range(ndim_of(x), nd)))
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

_BATCH_JAXPR_CACHE_SIZE = 1024
_batch_jaxpr_cache: dict[tuple, tuple[core.ClosedJaxpr, core.ClosedJaxpr, tuple]] = {}


def batch_jaxpr(closed: core.ClosedJaxpr, axis_data: AxisData, in_dims: Sequence[int | None],
                instantiate: bool | Sequence[bool] = False
                ) -> tuple[core.ClosedJaxpr, tuple[int | None, ...]]:
    """The jaxpr computing ``closed`` on inputs batched along ``in_dims``, and the batch
    dim of each output: 0, or None for an output that does not depend on the batch
    (unless ``instantiate`` asks for it to be broadcast). Mirrors JAX's ``batch_jaxpr``;
    cached per jaxpr object, dims and axis, as JAX caches it."""
    in_dims = tuple(in_dims)
    if isinstance(instantiate, bool):
        instantiate = (instantiate,) * len(closed.jaxpr.outvars)
    instantiate = tuple(instantiate)
    key = (id(closed), in_dims, axis_data.name, axis_data.size, instantiate)
    hit = _batch_jaxpr_cache.get(key)
    if hit is not None and hit[0] is closed:
        return hit[1], hit[2]
    from tinyxla._src.interpreters import partial_eval as pe
    size = axis_data.size
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
    result = (batched, tuple(out_dims))
    if len(_batch_jaxpr_cache) >= _BATCH_JAXPR_CACHE_SIZE:
        _batch_jaxpr_cache.pop(next(iter(_batch_jaxpr_cache)))
    _batch_jaxpr_cache[key] = (closed, *result)
    return result


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
