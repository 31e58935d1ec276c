"""Automatic differentiation: JVP with symbolic zeros, online linearize, transposition.

Mirrors ``jax._src.interpreters.ad`` in its stackless, "direct linearize" form:

- ``JVPTrace`` carries (primal, tangent) pairs. Its rules (``primitive_jvps``, registered
  next to each primitive in ``_src/lax/``) run with the trace's *tangent trace*
  current. In forward mode (``jvp``) that is the parent trace, so tangents are ordinary
  values. When linearizing (``grad``, ``vjp``, ``linearize``) it is a
  ``LinearizeTangentTrace``: a staging trace that records every operation touching a
  tangent into a linear jaxpr and hands every other operation (the primal work) to the
  parent trace. Primals therefore stay concrete under an eager ``grad``, so Python
  control flow such as ``if x > 0`` works as in JAX.
- Tangents that are known to be zero are ``Zero`` objects; rules skip them and outputs
  with a ``Zero`` tangent are returned as plain primals.
- ``backward_pass`` transposes a linear jaxpr (JAX's ``backward_pass``): linear inputs
  are ``UndefPrimal``; equations are visited in reverse, calling the
  ``primitive_transposes`` rules and summing cotangents with ``add_any``. Non-linear
  equations in the jaxpr (the recomputation inside ``checkpoint``) are evaluated first.
- Jaxpr -> Jaxpr transforms for call primitives (``jit``, ``checkpoint``, and later
  ``cond``/``while``/``scan``): ``jvp_jaxpr``, ``linearize_jaxpr``, ``transpose_jaxpr``,
  ``partial_eval_jaxpr`` and ``dce_jaxpr``. They re-trace ``eval_jaxpr`` under the
  transforming traces, so nested call primitives are handled by their own rules.

Primitives whose linearization is not "run the JVP rule with tangents staged" (call
primitives, custom_vjp) register a ``primitive_linearizations`` rule instead.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import core, dtypes
from tinyxla._src.ad_util import add_jaxvals_p, zeros_like_aval  # noqa: F401
from tinyxla._src.array import Array
from tinyxla._src.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Primitive, ShapedArray, Var
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters.caches import per_jaxpr

_state = core._state

# Rules, keyed by primitive. jvp: (primals, tangents, **params) -> (primal_out, tangent_out).
# transpose: (ct, *args, **params) -> one cotangent (or None / Zero) per arg, where linear
# args are UndefPrimal. linearization: (trace, primals, tangents, **params) -> like jvp.
primitive_jvps: dict[Primitive, Callable[..., Any]] = {}
primitive_transposes: dict[Primitive, Callable[..., Any]] = {}
primitive_linearizations: dict[Primitive, Callable[..., Any]] = {}


# ---------------------------------------------------------------------------------------
# Symbolic zeros and tangent types.

def tangent_dtype(dtype: np.dtype) -> np.dtype:
    """The tangent dtype of a primal dtype: itself if inexact, else float0
    (``core.primal_dtype_to_tangent_dtype``)."""
    return dtype if dtypes.issubdtype(dtype, np.inexact) else dtypes.float0


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The aval of tangents (and cotangents) of values of ``aval``."""
    if dtypes.issubdtype(aval.dtype, np.inexact):
        return aval
    return ShapedArray(aval.shape, dtypes.float0, False)


class Zero:
    """A symbolic zero tangent or cotangent (``jax._src.ad_util.Zero``).

    ``Zero.from_primal_value`` defers computing the aval, which most rules never read.
    """

    __slots__ = ("_aval", "_primal")

    def __init__(self, aval: ShapedArray):
        self._aval = aval
        self._primal = None

    @staticmethod
    def from_primal_value(x: Any) -> "Zero":
        z = Zero.__new__(Zero)
        z._aval = None
        z._primal = x
        return z

    @property
    def aval(self) -> ShapedArray:
        if self._aval is None:
            self._aval = tangent_aval(core.get_aval(self._primal))
            self._primal = None
        return self._aval

    def instantiate(self) -> Any:
        return zeros_like_aval(self.aval)

    def __repr__(self):
        return f"Zero({self.aval})"


def instantiate_zeros(t: Any) -> Any:
    """``t`` with a symbolic zero replaced by an array of zeros."""
    return t.instantiate() if type(t) is Zero else t


def add_tangents(x: Any, y: Any) -> Any:
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_jaxvals_p.bind(x, y)


# ---------------------------------------------------------------------------------------
# Helpers for defining rules, as in JAX.

def defjvp(primitive: Primitive, *jvprules: Callable[..., Any] | None) -> None:
    """One rule per operand: ``rule(g, *primals, **params)`` gives the output tangent for
    the operand's tangent ``g``; rules for zero tangents are skipped (``ad.defjvp``)."""
    def rule(primals, tangents, **params):
        val_out = primitive.bind(*primals, **params)
        out = Zero.from_primal_value(val_out)
        for r, t in zip(jvprules, tangents):
            if r is not None and type(t) is not Zero:
                out = add_tangents(out, r(t, *primals, **params))
        return val_out, out
    primitive_jvps[primitive] = rule


def defjvp2(primitive: Primitive, *jvprules: Callable[..., Any] | None) -> None:
    """Like ``defjvp``, with the primal output passed too: ``rule(g, ans, *primals)``."""
    def rule(primals, tangents, **params):
        val_out = primitive.bind(*primals, **params)
        out = Zero.from_primal_value(val_out)
        for r, t in zip(jvprules, tangents):
            if r is not None and type(t) is not Zero:
                out = add_tangents(out, r(t, val_out, *primals, **params))
        return val_out, out
    primitive_jvps[primitive] = rule


def defjvp_zero(primitive: Primitive) -> None:
    """The output tangent is zero (comparisons, integer ops, rounding)."""
    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return out, [Zero.from_primal_value(o) for o in out]
        return out, Zero.from_primal_value(out)
    primitive_jvps[primitive] = rule


def linear_jvp(primitive: Primitive, primals, tangents, **params):
    """The JVP of a primitive linear in all operands: the primitive on the tangents."""
    val_out = primitive.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents):
        return val_out, Zero.from_primal_value(val_out)
    return val_out, primitive.bind(*[instantiate_zeros(t) for t in tangents], **params)


def deflinear2(primitive: Primitive, transpose_rule: Callable[..., Any]) -> None:
    """A primitive linear in its operands: JVP applies it to the tangents; the transpose
    rule is ``rule(ct, *args, **params)`` (``ad.deflinear2``)."""
    primitive_jvps[primitive] = lambda primals, tangents, **params: linear_jvp(
        primitive, primals, tangents, **params)
    primitive_transposes[primitive] = transpose_rule


def defbilinear(primitive: Primitive, lhs_rule: Callable[..., Any],
                rhs_rule: Callable[..., Any]) -> None:
    """A primitive linear in each of its two operands separately (mul, dot_general)."""
    defjvp(primitive,
           lambda g, x, y, **params: primitive.bind(g, y, **params),
           lambda g, x, y, **params: primitive.bind(x, g, **params))

    def transpose(ct, x, y, **params):
        if type(x) is UndefPrimal:
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]
    primitive_transposes[primitive] = transpose


deflinear2(add_jaxvals_p, lambda ct, x, y: [ct, ct])


# ---------------------------------------------------------------------------------------
# Switching traces.

def bind_with(trace: core.Trace, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
    """``primitive.bind(*args)`` with ``trace`` current."""
    prev = _state.trace
    _state.trace = trace
    try:
        return primitive.bind(*args, **params)
    finally:
        _state.trace = prev


def call_with(trace: core.Trace, fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fun(*args)`` with ``trace`` current."""
    prev = _state.trace
    _state.trace = trace
    try:
        return fun(*args, **kwargs)
    finally:
        _state.trace = prev


# ---------------------------------------------------------------------------------------
# The JVP trace.

class JVPTrace(core.Trace):
    """Forward-mode differentiation (``ad.JVPTrace`` / ``ad.LinearizeTrace``).

    ``tangent_trace`` is the trace the rules run under: the parent for ``jvp``, a
    ``LinearizeTangentTrace`` when linearizing.
    """

    __slots__ = ("parent", "tangent_trace", "linearizing", "valid")

    def __init__(self, parent: core.Trace, tangent_trace: core.Trace | None = None):
        self.parent = parent
        self.linearizing = tangent_trace is not None
        self.tangent_trace = parent if tangent_trace is None else tangent_trace
        self.valid = True

    def lift(self, primal: Any, tangent: Any) -> Any:
        """A value of this trace: the primal itself when the tangent is zero."""
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)

    def unpack(self, x: Any) -> tuple[Any, Any]:
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_primal_value(x)

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        primals = []
        tangents = []
        nonzero = False
        for x in args:
            if type(x) is JVPTracer and x._trace is self:
                primals.append(x.primal)
                t = x.tangent
                tangents.append(t)
                nonzero = nonzero or type(t) is not Zero
            else:
                primals.append(x)
                tangents.append(Zero.from_primal_value(x))
        if not nonzero:
            return bind_with(self.parent, primitive, primals, params)
        rule = primitive_linearizations.get(primitive) if self.linearizing else None
        prev = _state.trace
        try:
            if rule is not None:
                _state.trace = self.parent
                primal_out, tangent_out = rule(self, primals, tangents, **params)
            else:
                rule = primitive_jvps.get(primitive)
                if rule is None:
                    raise NotImplementedError(
                        f"Differentiation rule for '{primitive.name}' not implemented")
                _state.trace = self.tangent_trace
                primal_out, tangent_out = rule(primals, tangents, **params)
        finally:
            _state.trace = prev
        if primitive.multiple_results:
            return [self.lift(p, t) for p, t in zip(primal_out, tangent_out)]
        if type(tangent_out) is Zero:
            return primal_out
        return JVPTracer(self, primal_out, tangent_out)


class JVPTracer(core.Tracer):
    """A primal value and its tangent (``ad.JVPTracer``; ``GradTracer`` when linearizing)."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return core.get_aval(self.primal)

    # The array metadata straight from the primal when it is an array or tracer: the jnp
    # layer reads these on every operation.
    def _meta(self, name: str) -> Any:
        p = self.primal
        if type(p) is Array or isinstance(p, core.Tracer):
            return getattr(p, name)
        return getattr(self.aval, name)

    shape = property(lambda self: self._meta("shape"))
    dtype = property(lambda self: self._meta("dtype"))
    weak_type = property(lambda self: self._meta("weak_type"))
    ndim = property(lambda self: self._meta("ndim"))

    # As in JAX, bool/int/index conversions of a differentiated value use its concrete
    # primal when there is one (float() and complex() still raise).
    def __bool__(self):
        return bool(self.primal)

    def __int__(self):
        return int(self.primal)

    def __index__(self):
        return self.primal.__index__()

    def item(self, *args):
        return self.primal.item(*args)

    def __repr__(self):
        if self._trace.linearizing:
            t = self.tangent
            typeof = (t.aval if type(t) is Zero else core.get_aval(t)).str_short(True)
            return f"GradTracer(primal={self.primal!s}, typeof(tangent)={typeof})"
        return f"JVPTracer(primal={self.primal!s}, tangent={self.tangent!s})"


class LinearizeTangentTrace(pe.DynamicJaxprTrace):
    """Stages the operations on tangents into a linear jaxpr; every operation without a
    tangent operand (the primal computation inside JVP rules) goes to ``parent``."""

    def __init__(self, parent: core.Trace):
        super().__init__()
        self.parent = parent

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        for x in args:
            if type(x) is pe.DynamicJaxprTracer and x._trace is self:
                return pe.DynamicJaxprTrace.process_primitive(self, primitive, args, params)
        return bind_with(self.parent, primitive, args, params)

    def owns(self, x: Any) -> bool:
        return type(x) is pe.DynamicJaxprTracer and x._trace is self


# ---------------------------------------------------------------------------------------
# Flat entry points: jvp and linearize of a function of flat arguments.

def jvp_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
             tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Forward mode: ``fun``'s flat outputs and their tangents (``Zero`` where zero)."""
    trace = JVPTrace(_state.trace)
    args = [trace.lift(p, t) for p, t in zip(primals, tangents)]
    try:
        outs = call_with(trace, fun, *args)
        pairs = [trace.unpack(x) for x in outs]
    finally:
        trace.valid = False
    return [p for p, _ in pairs], [t for _, t in pairs]


class Linearized:
    """The result of linearizing a flat function at concrete primals: the primal outputs,
    and the linear map from input tangents to output tangents as a jaxpr."""

    __slots__ = ("out_primals", "jaxpr", "in_avals", "in_nonzero", "out_nonzero")

    def __init__(self, out_primals, jaxpr, in_avals, in_nonzero, out_nonzero):
        self.out_primals = out_primals
        self.jaxpr = jaxpr              # ClosedJaxpr: nonzero tangents -> nonzero tangents
        self.in_avals = in_avals        # tangent avals of the inputs
        self.in_nonzero = in_nonzero
        self.out_nonzero = out_nonzero

    def jvp(self, tangents: Sequence[Any]) -> list[Any]:
        """Output tangents (``Zero`` where zero) for input tangents."""
        args = [instantiate_zeros(t) for t, nz in zip(tangents, self.in_nonzero) if nz]
        outs = iter(core.eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *args))
        return [next(outs) if nz else Zero.from_primal_value(p)
                for p, nz in zip(self.out_primals, self.out_nonzero)]

    def vjp(self, cts: Sequence[Any]) -> list[Any]:
        """Input cotangents (``Zero`` where zero) for output cotangents (``Zero`` allowed)."""
        jaxpr = self.jaxpr.jaxpr
        cts_nz = [ct for ct, nz in zip(cts, self.out_nonzero) if nz]
        args = [UndefPrimal(v.aval) for v in jaxpr.invars]
        cts_in = iter(backward_pass(jaxpr, self.jaxpr.consts, args, cts_nz))
        return [next(cts_in) if nz else Zero(a)
                for a, nz in zip(self.in_avals, self.in_nonzero)]


def linearize_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any]) -> Linearized:
    """Runs ``fun`` on ``primals`` (concretely, under the current trace) while staging its
    tangent computation into a linear jaxpr. Integer inputs get zero tangents; outputs
    that are not arrays (auxiliary data) are returned as they are."""
    parent = _state.trace
    tangent_trace = LinearizeTangentTrace(parent)
    trace = JVPTrace(parent, tangent_trace)
    in_avals = [tangent_aval(core.get_aval(p)) for p in primals]
    in_nonzero = [a.dtype != dtypes.float0 for a in in_avals]
    args = [JVPTracer(trace, p, tangent_trace.new_arg(a)) if nz else p
            for p, a, nz in zip(primals, in_avals, in_nonzero)]
    try:
        outs = call_with(trace, fun, *args)
        pairs = [trace.unpack(x) for x in outs]
        out_nonzero = [type(t) is not Zero for _, t in pairs]
        outvars = [tangent_trace.to_var(t) for _, t in pairs if type(t) is not Zero]
    finally:
        trace.valid = False
        tangent_trace.valid = False
    jaxpr = Jaxpr(tangent_trace.constvars, tangent_trace.args, outvars, tangent_trace.eqns)
    return Linearized([p for p, _ in pairs], ClosedJaxpr(jaxpr, tangent_trace.consts),
                      in_avals, in_nonzero, out_nonzero)


# ---------------------------------------------------------------------------------------
# Transposition.

class UndefPrimal:
    """A linear input of a transposed equation: only its aval is known
    (``ad.UndefinedPrimal``)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined_primal(x: Any) -> bool:
    return type(x) is UndefPrimal


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any],
                  cts_out: Sequence[Any]) -> list[Any]:
    """Transposes ``jaxpr`` (``ad.backward_pass``).

    ``args`` has an ``UndefPrimal`` for each linear input and a value for each other
    input; ``cts_out`` the output cotangents (``Zero`` or None where zero). Returns the
    cotangent of each linear input (``Zero`` where it is zero) and None for the others.
    Equations with no linear input are evaluated forwards first. Iterative.
    """
    env: dict[Var, Any] = {}
    linear: set[Var] = set()
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        if type(a) is UndefPrimal:
            linear.add(v)
        else:
            env[v] = a

    def read(v):
        return v.val if type(v) is Literal else env[v]

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(v) is Var and v in linear for v in eqn.invars):
            linear_eqns.append(eqn)
            linear.update(eqn.outvars)
        else:
            outs = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = (outs,)
            for v, x in zip(eqn.outvars, outs):
                env[v] = x

    ct_env: dict[Var, Any] = {}

    def accumulate(v, ct):
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        if ct is not None and type(ct) is not Zero and type(v) is Var and v in linear:
            accumulate(v, ct)

    for eqn in reversed(linear_eqns):
        prim = eqn.primitive
        if prim.multiple_results:
            cts = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(ct is None for ct in cts):
                continue
            ct = [Zero(tangent_aval(v.aval)) if c is None else c for v, c in zip(eqn.outvars, cts)]
        else:
            ct = ct_env.pop(eqn.outvars[0], None)
            if ct is None:
                continue
        invals = [UndefPrimal(v.aval) if type(v) is Var and v in linear else read(v)
                  for v in eqn.invars]
        rule = primitive_transposes.get(prim)
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{prim.name}' not implemented")
        cts_in = rule(ct, *invals, **eqn.params)
        for v, x, c in zip(eqn.invars, invals, cts_in):
            if type(x) is UndefPrimal and c is not None and type(c) is not Zero:
                accumulate(v, c)
    return [(Zero(tangent_aval(v.aval)) if (c := ct_env.pop(v, None)) is None else c)
            if type(a) is UndefPrimal else None for v, a in zip(jaxpr.invars, args)]


# ---------------------------------------------------------------------------------------
# Jaxpr -> Jaxpr transforms (for call primitives). Results are cached per jaxpr object.

def _close(trace: pe.DynamicJaxprTrace, outs: Sequence[Any]) -> ClosedJaxpr:
    outvars = [trace.to_var(x) for x in outs]
    trace.valid = False
    return ClosedJaxpr(Jaxpr(trace.constvars, trace.args, outvars, trace.eqns), trace.consts)


@per_jaxpr(4096)
def jvp_jaxpr(closed: ClosedJaxpr, nonzeros: tuple[bool, ...]
              ) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    """``(primals, nonzero tangents) -> (primal outs, nonzero tangent outs)`` for a
    closed jaxpr, and which output tangents are nonzero (``ad.jvp_jaxpr``)."""
    staging = pe.DynamicJaxprTrace()
    primals = [staging.new_arg(a) for a in closed.in_avals]
    tangents = [staging.new_arg(tangent_aval(a)) if nz else Zero(tangent_aval(a))
                for a, nz in zip(closed.in_avals, nonzeros)]
    trace = JVPTrace(staging)
    args = [trace.lift(p, t) for p, t in zip(primals, tangents)]
    try:
        outs = call_with(trace, core.eval_jaxpr, closed.jaxpr, closed.consts, *args)
        pairs = [trace.unpack(x) for x in outs]
    finally:
        trace.valid = False
    out_nz = tuple(type(t) is not Zero for _, t in pairs)
    out = _close(staging, [p for p, _ in pairs] + [t for _, t in pairs if type(t) is not Zero])
    return out, out_nz


@per_jaxpr(4096)
def linearize_jaxpr(closed: ClosedJaxpr, nonzeros: tuple[bool, ...]
                    ) -> tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], int]:
    """Splits a closed jaxpr into its primal part and its linearization.

    Returns ``(known, linear, out_nonzero, num_res)``: ``known`` maps the primals to the
    primal outputs followed by ``num_res`` residuals; ``linear`` maps the residuals and
    the nonzero input tangents to the nonzero output tangents.
    """
    staging = pe.DynamicJaxprTrace()
    tangent_trace = LinearizeTangentTrace(staging)
    trace = JVPTrace(staging, tangent_trace)
    primals = [staging.new_arg(a) for a in closed.in_avals]
    args = [JVPTracer(trace, p, tangent_trace.new_arg(tangent_aval(a))) if nz else p
            for p, a, nz in zip(primals, closed.in_avals, nonzeros)]
    try:
        outs = call_with(trace, core.eval_jaxpr, closed.jaxpr, closed.consts, *args)
        pairs = [trace.unpack(x) for x in outs]
        lin_outvars = [tangent_trace.to_var(t) for _, t in pairs if type(t) is not Zero]
    finally:
        trace.valid = False
        tangent_trace.valid = False
    out_nz = tuple(type(t) is not Zero for _, t in pairs)
    # What the linear part closed over: values of the primal computation become residuals
    # (outputs of the known part); other constants stay constants.
    res_vars, res, const_vars, consts = [], [], [], []
    for v, c in zip(tangent_trace.constvars, tangent_trace.consts):
        if type(c) is pe.DynamicJaxprTracer and c._trace is staging:
            res_vars.append(v)
            res.append(c)
        else:
            const_vars.append(v)
            consts.append(c)
    known = _close(staging, [p for p, _ in pairs] + res)
    linear = ClosedJaxpr(Jaxpr(const_vars, res_vars + tangent_trace.args, lin_outvars,
                               tangent_trace.eqns), consts)
    return known, linear, out_nz, len(res)


@per_jaxpr(4096)
def transpose_jaxpr(closed: ClosedJaxpr, linear: tuple[bool, ...],
                    ct_nonzero: tuple[bool, ...]) -> ClosedJaxpr:
    """``(non-linear inputs, nonzero output cotangents) -> cotangents of the linear
    inputs`` (zeros instantiated) for a jaxpr linear in the inputs marked ``linear``."""
    staging = pe.DynamicJaxprTrace()
    args = [UndefPrimal(a) if lin else staging.new_arg(a)
            for a, lin in zip(closed.in_avals, linear)]
    cts = [staging.new_arg(tangent_aval(a)) if nz else None
           for a, nz in zip(closed.out_avals, ct_nonzero)]
    try:
        cts_in = call_with(staging, backward_pass, closed.jaxpr, closed.consts, args, cts)
        outs = [call_with(staging, instantiate_zeros, c) for c, lin in zip(cts_in, linear) if lin]
    except BaseException:
        staging.valid = False
        raise
    return _close(staging, outs)


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: Sequence[bool]) -> Jaxpr:
    """``jaxpr`` keeping only the outputs marked used and the equations they need
    (``pe.dce_jaxpr``; inputs are kept). Unused pure equations go; effectful ones stay."""
    live: set[Var] = {v for v, u in zip(jaxpr.outvars, used_outputs) if u and type(v) is Var}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars) or core.eqn_has_effects(eqn):
            eqns.append(eqn)
            live.update(v for v in eqn.invars if type(v) is Var)
    eqns.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.invars,
                 [v for v, u in zip(jaxpr.outvars, used_outputs) if u], eqns)


def partial_eval_jaxpr(jaxpr: Jaxpr, unknowns: Sequence[bool]
                       ) -> tuple[Jaxpr, Jaxpr, list[bool], int]:
    """Splits ``jaxpr`` by data dependence on the inputs marked unknown
    (``pe.partial_eval_jaxpr_nounits``).

    Returns ``(known, unknown, out_unknowns, num_res)``: ``known`` takes the constvars and
    known inputs and returns the known outputs followed by the residuals; ``unknown``
    takes the residuals followed by the unknown inputs and returns the unknown outputs.
    An equation with any unknown input is unknown as a whole. Iterative.
    """
    unknown_vars: set[Var] = {v for v, u in zip(jaxpr.invars, unknowns) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in jaxpr.eqns:
        if any(type(v) is Var and v in unknown_vars for v in eqn.invars):
            unknown_eqns.append(eqn)
            unknown_vars.update(eqn.outvars)
        else:
            known_eqns.append(eqn)
    out_unknowns = [type(v) is Var and v in unknown_vars for v in jaxpr.outvars]
    # Residuals: known values read by the unknown side (known outputs that are also
    # unknown-side inputs are residuals too).
    residuals: list[Var] = []
    seen: set[Var] = set()
    for eqn in unknown_eqns:
        for v in eqn.invars:
            if type(v) is Var and v not in unknown_vars and v not in seen:
                seen.add(v)
                residuals.append(v)
    res_in = {v: Var(v.aval) for v in residuals}
    known = Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, unknowns) if not u],
                  [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u] + residuals,
                  known_eqns)
    rename = lambda v: res_in.get(v, v) if type(v) is Var else v
    unknown_eqns = [JaxprEqn(e.primitive, [rename(v) for v in e.invars], e.outvars, e.params)
                    for e in unknown_eqns]
    unknown = Jaxpr([], [res_in[v] for v in residuals] +
                    [v for v, u in zip(jaxpr.invars, unknowns) if u],
                    [rename(v) for v, u in zip(jaxpr.outvars, out_unknowns) if u],
                    unknown_eqns)
    return known, unknown, out_unknowns, len(residuals)
