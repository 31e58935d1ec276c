"""Staging Python functions into jaxprs (mirrors ``jax._src.interpreters.partial_eval``).

``DynamicJaxprTrace`` records every primitive bound while it is the current trace
("omnistaging": constants computed inside the function are staged too). Concrete arrays
the function closes over become constvars; Python and numpy scalars become literals.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import core, dtypes, errors, leak_checker
from tinyxla._src.array import _from_numpy
from tinyxla._src.config import config
from tinyxla._src.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, ShapedArray, Var


class DynamicJaxprTracer(core.Tracer):
    """A value inside a function being staged; its repr is JAX's ``JitTracer(float32[3])``."""

    __slots__ = ("_aval", "_var")  # not "var": that is the Array method

    def __init__(self, trace: "DynamicJaxprTrace", aval: ShapedArray, var: Var):
        self._trace = trace
        self._aval = aval
        self._var = var

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    # Read per op by jnp's promotion: straight from the aval.
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self._aval.shape))
    weak_type = property(lambda self: self._aval.weak_type)

    def __repr__(self):
        return f"JitTracer({self._aval})"


_LITERAL_TYPES = (bool, int, float, complex, np.generic)


class DynamicJaxprTrace(core.Trace):
    """Builds a jaxpr from the primitives bound under it."""

    def __init__(self, debug_info: "errors.DebugInfo | None" = None):
        self.eqns: list[JaxprEqn] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._const_vars: dict[int, Var] = {}
        self.debug_info = debug_info
        self.args: list[Var] = []
        self.valid = True

    def new_arg(self, aval: ShapedArray) -> DynamicJaxprTracer:
        t = DynamicJaxprTracer(self, aval, Var(aval))
        self.args.append(t._var)
        return t

    def arg_dependence(self, tracer: DynamicJaxprTracer) -> list[str]:
        """Names of the arguments ``tracer`` depends on (only used in error messages)."""
        names = self.debug_info.arg_names if self.debug_info else ()
        deps: dict[int, set[int]] = {id(v): {i} for i, v in enumerate(self.args)}
        for eqn in self.eqns:
            d: set[int] = set()
            for v in eqn.invars:
                d |= deps.get(id(v), set())
            for v in eqn.outvars:
                deps[id(v)] = d
        return [names[i] for i in sorted(deps.get(id(tracer._var), ())) if i < len(names)]

    def to_var(self, x: Any) -> Var | Literal:
        if isinstance(x, DynamicJaxprTracer) and x._trace is self:
            return x._var
        if isinstance(x, core.Tracer):
            trace = x._trace
            if not getattr(trace, "valid", True):
                raise errors.unexpected_tracer_error(x)
        elif isinstance(x, _LITERAL_TYPES) and np.ndim(x) == 0:
            return Literal(x, core.get_aval(x))
        # A concrete array (or an outer trace's value) closed over: a constvar.
        v = self._const_vars.get(id(x))
        if v is None:
            v = Var(core.get_aval(x))
            self._const_vars[id(x)] = v
            self.constvars.append(v)
            self.consts.append(x)
        return v

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any], params: dict):
        invars = [self.to_var(x) for x in args]
        if (primitive.name == "convert_element_type" and isinstance(invars[0], Literal)):
            # As JAX: a converted scalar constant stays a literal, of the new type.
            aval = primitive.abstract_eval(invars[0].aval, **params)
            return DynamicJaxprTracer(self, aval, Literal(_cast(invars[0].val, aval), aval))
        out = primitive.abstract_eval(*[v.aval for v in invars], **params)
        if primitive.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(JaxprEqn(primitive, invars, outvars, params))
            return [DynamicJaxprTracer(self, v.aval, v) for v in outvars]
        outvar = Var(out)
        self.eqns.append(JaxprEqn(primitive, invars, [outvar], params))
        return DynamicJaxprTracer(self, out, outvar)


def _cast(val: Any, aval: ShapedArray) -> Any:
    """``val`` converted to ``aval``'s dtype: a numpy scalar, or for a weak type a Python
    scalar of the same kind, so evaluating the jaxpr keeps the weak type. A weak type that
    is not its Python type's default (a weak uint32 1) is a weak 0-d Array instead: as a
    Python scalar, re-evaluating the jaxpr (under vmap of jit) would make it int32."""
    v = np.asarray(val).astype(aval.dtype)[()]
    if not aval.weak_type:
        return v
    kind = aval.dtype.kind
    py = bool(v) if kind == "b" else int(v) if kind in "iu" else complex(v) if kind == "c" else float(v)
    try:
        if dtypes.scalar_type_to_dtype(type(py), py) == aval.dtype:
            return py
    except OverflowError:  # a weak uint32 past int32's range (-1 wrapped) stays an Array
        pass
    return _from_numpy(v, weak_type=True)


def _valid_output(x: Any, debug_info: "errors.DebugInfo | None") -> Any:
    """``x`` if it is a JAX value; JAX's TypeError naming the traced function otherwise."""
    if isinstance(x, core.Tracer):
        return x
    try:
        ok = core.get_aval(x).dtype in dtypes._SUPPORTED_SET
    except Exception:  # noqa: BLE001 - whatever numpy makes of an arbitrary object
        ok = False
    if ok:
        return x
    fun = (f"function {debug_info.func_src_info} traced for {debug_info.traced_for}"
           if debug_info is not None else "traced function")
    raise TypeError(f"{fun} returned a value of type {type(x)}, which is not a valid JAX type")


def trace_to_jaxpr(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray],
                   debug_info: "errors.DebugInfo | None" = None) -> ClosedJaxpr:
    """Stages ``fun`` (flat arrays in, a flat list out) into a closed jaxpr; with
    ``jax_check_tracer_leaks`` on, a tracer that outlives the trace raises JAX's error."""
    if not config.jax_check_tracer_leaks:
        return _trace_to_jaxpr(fun, in_avals, debug_info)
    trace_ref: list = []
    closed = _trace_to_jaxpr(fun, in_avals, debug_info, trace_ref)
    leak_checker.check(trace_ref[0])
    return closed


def _trace_to_jaxpr(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray],
                    debug_info: "errors.DebugInfo | None" = None,
                    trace_ref: list | None = None) -> ClosedJaxpr:
    trace = DynamicJaxprTrace(debug_info)
    if trace_ref is not None:
        trace_ref.append(weakref.ref(trace))
    args = [trace.new_arg(a) for a in in_avals]
    try:
        with core.set_current_trace(trace):
            outs = fun(*args)
            outvars = [trace.to_var(_valid_output(x, debug_info)) for x in outs]
    finally:
        trace.valid = False
    jaxpr = Jaxpr(trace.constvars, trace.args, outvars, trace.eqns)
    if config.jax_enable_checks:
        core.check_jaxpr(jaxpr)
    return ClosedJaxpr(jaxpr, trace.consts)
