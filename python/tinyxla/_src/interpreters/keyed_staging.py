"""The traces of an eagerly called vmap: a staging trace that keys its jaxpr by content
while recording it, and the batch trace that feeds it.

vmap, called eagerly, traces its function at every call and runs the traced jaxpr's
cached executable (``caches.executable_for_content``). Walking the jaxpr afterwards to key
that cache costs a few microseconds a call; ``KeyedJaxprTrace`` instead moves along the
trie of ``caches`` as it records, so the node it reaches names the jaxpr (see ``caches``
for why that is sound). An event's operands are variables by the position of the event
that made them (ints >= 0) and literals by an interned id (ints < 0).

``StagingBatchTrace`` is the ``BatchTrace`` vmap puts on top of it. Its rules are the
ordinary batching rules; it only takes two shortcuts, both recorded as trie events:
an elementwise op whose batched operands agree is recorded as the one equation its rule
would make (vmap traces at every call, so this is its hot path), and any other rule's
equations are recorded once per operand avals and dims (``caches.rule_template``) and
replayed. An equation recorded any other way (the generic ``process_primitive`` of the
staging trace) stops the keying (``keyed`` False), and vmap falls back to walking the
jaxpr.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import core
from tinyxla._src.core import JaxprEqn, Literal, ShapedArray, Var
from tinyxla._src.interpreters import batching, caches
from tinyxla._src.interpreters.batching import BatchTrace, BatchTracer
from tinyxla._src.interpreters.partial_eval import DynamicJaxprTrace, DynamicJaxprTracer

_PY_SCALARS = frozenset({bool, int, float, complex})
_edges = caches.edges.entries  # hits read inline
_py_literals = caches.py_literals.entries  # hits read inline; caches.py_literal makes the rest


class KeyedJaxprTrace(DynamicJaxprTrace):
    """A ``DynamicJaxprTrace`` whose ``node`` names the events recorded so far (while
    ``keyed``); ``index`` maps each variable to the position of the event that made it."""

    def __init__(self):
        super().__init__()
        self.node = caches.root_node()
        self.index: dict[Var, int] = {}
        self.keyed = True

    def new_arg(self, aval: ShapedArray) -> DynamicJaxprTracer:
        tracer = super().new_arg(aval)
        if self.keyed:
            self._event((self.node, caches.ARG, aval), tracer._var)
        return tracer

    def const_ref(self, x: Any) -> tuple[Var | Literal, int | None]:
        """``to_var`` of a concrete value closed over, and its reference in the key (None
        when it has none), recording a new constant's event."""
        var = self._const_vars.get(id(x))  # seen before (``consts`` keeps ``x`` alive)
        if var is None:
            var = self.to_var(x)
            if type(var) is Literal:  # a numpy scalar
                return var, caches.literal_id(var)
            if self.keyed:
                self._event((self.node, caches.CONST, var.aval), var)
        return var, self.index.get(var)

    def _event(self, key: tuple, var: Var) -> None:
        hit = _edges.get(key)
        self.node = hit[0] if hit is not None else caches.advance(key, None)
        index = self.index
        index[var] = len(index)

    def process_primitive(self, primitive: core.Primitive, args: Any, params: dict) -> Any:
        # Recorded without an event: the jaxpr is keyed by walking it instead.
        self.keyed = False
        return super().process_primitive(primitive, args, params)

    def outputs_key(self, outvars: list) -> tuple | None:
        """The edge key of the outputs event, whose payload is the executable; None when
        the jaxpr is not keyed (or an output is a literal)."""
        if not self.keyed:
            return None
        index = self.index
        key = [self.node, caches.OUTPUTS]
        for v in outvars:
            i = index.get(v) if type(v) is Var else None
            if i is None:
                return None
            key.append(i)
        return tuple(key)


class StagingBatchTrace(BatchTrace):
    """The ``BatchTrace`` of an eagerly called vmap: batched ops go to ``stage`` (a
    ``KeyedJaxprTrace``), ops on unmapped values alone run eagerly, as in JAX."""

    def __init__(self, stage: KeyedJaxprTrace, axis_data: batching.AxisData):
        super().__init__(stage, axis_data, unbatched=core.EVAL_TRACE)
        self._stage = stage
        # Scalars computed eagerly from Python scalars alone (jnp's promotion of
        # ``x * 2.0``), by id: staged as literals, as a staging trace would, not as
        # constants. Each with its literal's id in the content key.
        self._scalars: dict[int, tuple[Any, Literal, int]] = {}

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any], params: dict):
        if primitive in batching.elementwise_primitives:
            out = self._stage_elementwise(primitive, args, params)
            if out is not None:
                return out
        return super().process_primitive(primitive, args, params)

    def bind_unbatched(self, primitive: core.Primitive, args: Sequence[Any],
                       params: dict) -> Any:
        out = super().bind_unbatched(primitive, args, params)
        if not args or primitive.multiple_results:
            return out
        for a in args:
            if type(a) not in _PY_SCALARS:
                return out
        aval = core.get_aval(out)
        if not aval.shape:
            lit = Literal(np.asarray(out)[()], aval)
            self._scalars[id(out)] = (out, lit, caches.literal_id(lit))
        return out

    def apply_rule(self, primitive: core.Primitive, rule: Callable[..., Any],
                   args: Sequence[Any], vals: Sequence[Any], dims: Sequence[int | None],
                   params: dict) -> tuple[Any, Any]:
        return (self._replay_rule(primitive, rule, args, vals, dims, params)
                or rule(vals, dims, **params))

    def _stage_elementwise(self, primitive: core.Primitive, args: Sequence[Any],
                           params: dict) -> BatchTracer | None:
        """Records an elementwise op whose batched operands share their batch axis and
        shape (the others being Python scalars, or ones converted eagerly) as the one
        equation its rule would make, skipping the rule and the staging trace's abstract
        evaluation (the output aval rides on the content key's edge). None when it does
        not apply."""
        stage = self._stage
        index = stage.index
        dim = shape = None
        invars = []
        key: list[Any] = [stage.node, caches.ELEMENTWISE, primitive]
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
                var = v._var
                invars.append(var)
                key.append(index.get(var))
            elif t in _PY_SCALARS:
                lit, ref = (_py_literals.get((t, x)) if x and t is not complex else None
                            ) or caches.py_literal(x)
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
            out = caches.elementwise_aval(primitive, invars, params)
            # The output's and one example's avals (the latter read by jnp's promotion).
            avals = (out, caches.example_aval(out, dim))
            if stage.keyed:
                stage.node = caches.advance(key_t, avals)
        out = avals[0]
        var = Var(out)
        stage.eqns.append(JaxprEqn(primitive, invars, [var], params))
        index[var] = len(index)
        return BatchTracer(self, DynamicJaxprTracer(stage, out, var), dim, avals[1])

    def _replay_rule(self, primitive: core.Primitive, rule: Callable[..., Any],
                     args: Sequence[Any], vals: Sequence[Any], dims: Sequence[int | None],
                     params: dict) -> tuple[Any, Any] | None:
        """Any other rule: the equations a rule makes depend only on the operands' avals
        and batch dims and the params, so they are recorded once per such key and
        replayed onto the operands' variables. None when an operand is of a kind the
        template cannot take."""
        stage = self._stage
        index = stage.index
        invars, refs = [], []
        for x, v, d in zip(args, vals, dims):
            t = type(x)
            if t is BatchTracer:  # ours (batched or not): its value is staged
                if type(v) is not DynamicJaxprTracer or v._trace is not stage:
                    return None
                var = v._var
                ref = index.get(var)
            elif t in _PY_SCALARS:
                var, ref = caches.py_literal(x)
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
                key_t = (stage.node, caches.RULE, primitive, len(args), *refs,
                         *params.items())
                hit = _edges.get(key_t)
            except TypeError:  # an unhashable parameter
                hit = key_t = None
            if hit is not None:
                stage.node, template = hit
            elif key_t is None or None in refs[::2]:  # a variable made without an event
                stage.keyed = False
        if template is None:
            template = caches.rule_template(primitive, rule, invars, dims, params)
            if template is None:
                return None
            if stage.keyed:
                if any(isinstance(p, (core.Jaxpr, core.ClosedJaxpr)) for p in params.values()):
                    stage.keyed = False  # sub-jaxprs are keyed by content: the walk does it
                else:
                    stage.node = caches.advance(key_t, template)
        return template.replay(stage, invars, primitive.multiple_results)
