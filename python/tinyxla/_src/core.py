"""Primitives, abstract values, traces and bind: the spine every transform hangs off.

Mirrors ``jax._src.core`` in its stackless form: the current trace is thread-local state,
and ``Primitive.bind`` hands the primitive to it. Eager execution is the ``EvalTrace``,
which calls the primitive's ``impl`` on concrete arrays. Staging (make_jaxpr, jit) and
the transforms (jvp, vmap) add traces of their own; each primitive keeps all its rules
next to its definition (see the family modules of ``_src/lax/``).
"""
from __future__ import annotations

import enum
import threading
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import dtypes, errors


class ShapedArray:
    """The abstract value of an array: shape, dtype and weak type (``jax.core.ShapedArray``)."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape: tuple[int, ...], dtype: Any, weak_type: bool = False):
        # Conversions skipped for values already of the right type: avals are made per op.
        self.shape = shape if type(shape) is tuple else tuple(shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak_type = weak_type if type(weak_type) is bool else bool(weak_type)
        self._hash = None  # computed once: avals key the tracing memos, hashed per op

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def str_short(self, short_dtypes: bool = False) -> str:
        """JAX's short form: ``float32[3,4]``, or ``f32[3,4]`` with ``short_dtypes``."""
        name = dtypes.short_dtype_name(self.dtype) if short_dtypes else self.dtype.name
        return f"{name}[{','.join(map(str, self.shape))}]"

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((self.shape, self.dtype, self.weak_type))
        return h

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.dtype.name}[{','.join(map(str, self.shape))}]{weak})"

    def __str__(self):  # JAX's: ``float32[3]``, ``~float32[]`` when weak
        return f"{'~' if self.weak_type else ''}{self.dtype.name}[{','.join(map(str, self.shape))}]"


# Set once an Array laid out over a mesh exists (``sharded_eager.py``): runs an eager op
# with such operands and lays out its results as JAX would; NotImplemented otherwise.
eager_layout_hook: Callable[[Any, tuple, dict], Any] | None = None


class Primitive:
    """A primitive operation (``jax.core.Primitive``).

    ``impl`` runs it eagerly on concrete values; ``abstract_eval`` maps input avals to
    output avals (one aval, or a list when ``multiple_results``). Transform rules live in
    the tables of the interpreters and are registered beside the primitive's definition.
    """

    __slots__ = ("name", "multiple_results", "impl", "abstract_eval")

    def __init__(self, name: str, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.impl: Callable[..., Any] | None = None
        self.abstract_eval: Callable[..., Any] | None = None

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        self.impl = impl
        return impl

    def def_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.abstract_eval = rule
        return rule

    def bind(self, *args: Any, **params: Any) -> Any:
        trace = _state.trace
        if trace is EVAL_TRACE:  # the eager hot path skips one call
            if eager_layout_hook is not None:
                out = eager_layout_hook(self, args, params)
                if out is not NotImplemented:
                    return out
            try:
                return self.impl(*args, **params)
            except (AttributeError, TypeError):
                _check_no_tracers(args)
                raise
        return trace.process_primitive(self, args, params)

    def __repr__(self):
        return self.name


class Trace:
    """Interprets primitives applied to its tracers; ``parent`` runs the rules' own ops."""

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        raise NotImplementedError


class EvalTrace(Trace):
    """Eager evaluation: the impl runs on concrete arrays (asynchronously in C++)."""

    def process_primitive(self, primitive, args, params):
        try:
            return primitive.impl(*args, **params)
        except (AttributeError, TypeError):
            _check_no_tracers(args)
            raise


def _check_no_tracers(args: Sequence[Any]) -> None:
    """A tracer reaching eager evaluation escaped its transformation: JAX's leak error."""
    for x in args:
        if isinstance(x, Tracer):
            raise errors.unexpected_tracer_error(x)


EVAL_TRACE = EvalTrace()


class _TraceState(threading.local):
    def __init__(self):
        self.trace: Trace = EVAL_TRACE


_state = _TraceState()


def current_trace() -> Trace:
    return _state.trace


class set_current_trace:
    """Context manager installing ``trace`` as this thread's current trace."""

    __slots__ = ("trace", "prev")

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self):
        self.prev = _state.trace
        _state.trace = self.trace

    def __exit__(self, *exc):
        _state.trace = self.prev


# ---------------------------------------------------------------------------------------
# The Jaxpr: the one IR of the Python layer (ANF: variables, literals, equations).


class Var:
    """A variable of a jaxpr; named only when printed (``jax.core.Var``)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Var(id={id(self)}):{self.aval.str_short()}"


class Literal:
    """A scalar constant written inline in a jaxpr (``jax.core.Literal``)."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"{_literal_str(self.val, self.aval)}:{self.aval.str_short(True)}"


def _literal_str(val: Any, aval: ShapedArray) -> str:
    v = np.asarray(val).item() if not isinstance(val, (bool, int, float, complex)) else val
    if aval.dtype == np.bool_:
        return str(bool(v))
    if np.issubdtype(aval.dtype, np.floating):
        return repr(float(v))
    if np.issubdtype(aval.dtype, np.complexfloating):
        return repr(complex(v))
    return str(int(v))


class JaxprEqn:
    """One equation: ``outvars = primitive[params] invars`` (``jax.core.JaxprEqn``)."""

    __slots__ = ("primitive", "invars", "outvars", "params")

    def __init__(self, primitive: Primitive, invars: list, outvars: list[Var], params: dict):
        self.primitive = primitive
        self.invars = invars
        self.outvars = outvars
        self.params = params


class Jaxpr:
    """A function in ANF (``jax.core.Jaxpr``): constvars, invars, equations, outvars."""

    __slots__ = ("constvars", "invars", "outvars", "eqns")

    def __init__(self, constvars: list[Var], invars: list[Var], outvars: list, eqns: list[JaxprEqn]):
        self.constvars = constvars
        self.invars = invars
        self.outvars = outvars
        self.eqns = eqns

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self):
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with values for its constvars (``jax.core.ClosedJaxpr``)."""

    __slots__ = ("jaxpr", "consts", "_executable")

    def __init__(self, jaxpr: Jaxpr, consts: list[Any]):
        self.jaxpr = jaxpr
        self.consts = list(consts)
        self._executable = None  # set by lowering.executable_for

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Evaluates ``jaxpr`` by binding each equation under the current trace, so running
    it inside a transform re-traces it (``jax.core.eval_jaxpr``). Iterative."""
    env: dict[Var, Any] = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = (outs,)
        for v, x in zip(eqn.outvars, outs):
            env[v] = x
    return [read(v) for v in jaxpr.outvars]


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Type-checks ``jaxpr`` and its sub-jaxprs with the primitives' abstract-eval rules
    (``jax.core.check_jaxpr``): every variable is defined once before use, each equation's
    operands are accepted by its rule (equal shapes for elementwise primitives, params
    consistent with the avals) and its outputs match the rule's. Weak types are not
    compared, as in JAX."""
    defined: set[int] = set()

    def define(v: Var) -> None:
        if id(v) in defined:
            raise errors.JaxprTypeError(f"Variable {v} defined twice")
        defined.add(id(v))

    def read(v) -> ShapedArray:
        if isinstance(v, Literal):
            return v.aval
        if id(v) not in defined:
            raise errors.JaxprTypeError(f"Variable {v} used before it is defined")
        return v.aval

    for v in jaxpr.constvars + jaxpr.invars:
        define(v)
    for eqn in jaxpr.eqns:
        in_avals = [read(v) for v in eqn.invars]
        for sub in _sub_jaxprs(eqn.params):
            check_jaxpr(sub)
        try:
            out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        except errors.JaxprTypeError:
            raise
        except Exception as e:
            raise errors.JaxprTypeError(
                f"{eqn.primitive} rejects its operands "
                f"({', '.join(a.str_short(True) for a in in_avals)}): {e}") from e
        outs = list(out) if eqn.primitive.multiple_results else [out]
        if len(outs) != len(eqn.outvars):
            raise errors.JaxprTypeError(f"{eqn.primitive} has {len(eqn.outvars)} outputs; "
                                        f"its rule makes {len(outs)}")
        for v, a in zip(eqn.outvars, outs):
            if (v.aval.shape, v.aval.dtype) != (a.shape, a.dtype):
                raise errors.JaxprTypeError(f"{eqn.primitive} output {v.aval.str_short(True)} does "
                                            f"not match its rule's {a.str_short(True)}")
            define(v)
    for v in jaxpr.outvars:
        read(v)


# Primitives with a side effect (host callbacks): a jaxpr transform never drops their
# equations, and a jaxpr holding one (also in a sub-jaxpr) keeps its calls in order.
effectful_primitives: set[Primitive] = set()


def jaxpr_has_effects(jaxpr: Jaxpr) -> bool:
    """Whether ``jaxpr`` or one of its sub-jaxprs binds an effectful primitive. Iterative."""
    todo = [jaxpr]
    while todo:
        for eqn in todo.pop().eqns:
            if eqn.primitive in effectful_primitives:
                return True
            todo.extend(_sub_jaxprs(eqn.params))
    return False


# Ordered effects (JAX's): per effectful primitive, the effect an equation orders given its
# params, or None. A computation over several devices cannot order them.
ordered_effect_rules: dict[Primitive, Callable[[dict], Any]] = {}


def ordered_effects(jaxpr: Jaxpr) -> list:
    """The ordered effects of ``jaxpr``'s equations (also in sub-jaxprs), each once, in the
    order first met. Iterative."""
    found: list = []
    todo = [jaxpr]
    while todo:
        for eqn in todo.pop().eqns:
            rule = ordered_effect_rules.get(eqn.primitive)
            effect = rule(eqn.params) if rule else None
            if effect is not None and effect not in found:
                found.append(effect)
            todo.extend(_sub_jaxprs(eqn.params))
    return found


def check_single_device_effects(jaxpr: Jaxpr, num_devices: int) -> None:
    """JAX's ValueError for ordered effects in a computation over more than one device."""
    if num_devices > 1:
        effects = ordered_effects(jaxpr)
        if effects:
            raise ValueError("The following ordered effects are not supported for more than 1 "
                             f"device: {effects}")


def eqn_has_effects(eqn: JaxprEqn) -> bool:
    """Whether running ``eqn`` has a side effect (its primitive, or one in its sub-jaxprs)."""
    return eqn.primitive in effectful_primitives or any(
        jaxpr_has_effects(j) for j in _sub_jaxprs(eqn.params))


def _sub_jaxprs(params: dict) -> list[Jaxpr]:
    """The jaxprs among an equation's params (also inside tuples, as cond's branches)."""
    out = []
    for p in params.values():
        for q in (p if isinstance(p, (tuple, list)) else (p,)):
            if isinstance(q, ClosedJaxpr):
                out.append(q.jaxpr)
            elif isinstance(q, Jaxpr):
                out.append(q)
    return out


# Pretty-printing in JAX's format.

def _var_names():
    """Yields a, b, ..., z, ba, bb, ... as JAX names variables."""
    n = 0
    while True:
        s, k = "", n
        while True:
            s = chr(ord("a") + k % 26) + s
            k //= 26
            if k == 0:
                break
        yield s
        n += 1


class _Namer:
    def __init__(self):
        self.names: dict[int, str] = {}
        self.gen = _var_names()

    def __call__(self, v) -> str:
        if isinstance(v, Literal):
            return repr(v)
        name = self.names.get(id(v))
        if name is None:
            name = self.names[id(v)] = next(self.gen)
        return name


def _param_str(value: Any) -> str:
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, tuple):
        # Inside a tuple JAX shows enums by repr (str(tuple) does).
        parts = [repr(v) if isinstance(v, enum.Enum) else _param_str(v) for v in value]
        return "(" + ", ".join(parts) + ("," if len(value) == 1 else "") + ")"
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


# Per primitive: the params as JAX's printer shows them (some hidden, some reformatted),
# registered beside the primitive.
pp_params_rules: dict["Primitive", Callable[[dict], dict]] = {}

# Primitives whose sub-jaxprs print with fresh names, not the call site's (JAX's control
# flow: their binders do not line up with the equation's operands).
pp_fresh_names: set["Primitive"] = set()

_PP_WIDTH = 80  # JAX breaks an equation's params onto lines past this width


def _eqn_params_str(eqn: "JaxprEqn", namer: "_Namer", head_width: int = 0) -> str:
    """Params in JAX's order (sorted; a call's ``name`` first) and layout (one per line
    when a sub-jaxpr is among them or the equation up to its params' end is wider than
    JAX's 80 columns; ``head_width`` is the width before the params). A sub-jaxpr's
    binders take the call site's names."""
    rule = pp_params_rules.get(eqn.primitive)
    params = rule(eqn.params) if rule else eqn.params
    keys = sorted(params, key=lambda k: (k != "name", k))
    items = []
    fresh = eqn.primitive in pp_fresh_names
    for k in keys:
        v = params[k]
        if isinstance(v, tuple) and v and all(isinstance(q, (Jaxpr, ClosedJaxpr)) for q in v):
            subs = [pp_jaxpr(q.jaxpr if isinstance(q, ClosedJaxpr) else q, namer) for q in v]
            items.append(f"{k}=(\n" + "\n".join("  " + t.replace("\n", "\n  ") for t in subs) + "\n)")
        elif isinstance(v, (Jaxpr, ClosedJaxpr)) and fresh:
            items.append(f"{k}={pp_jaxpr(v.jaxpr if isinstance(v, ClosedJaxpr) else v, namer)}")
        elif isinstance(v, (Jaxpr, ClosedJaxpr)):
            sub = v.jaxpr if isinstance(v, ClosedJaxpr) else v
            for inner, outer in zip(sub.invars, eqn.invars):
                if not isinstance(outer, Literal):
                    namer.names.setdefault(id(inner), namer(outer))
            for inner, outer in zip(sub.outvars, eqn.outvars):
                if isinstance(inner, Var) and id(inner) not in namer.names:
                    namer.names[id(inner)] = namer(outer)
            items.append(f"{k}={pp_jaxpr(sub, namer)}")
        else:
            items.append(f"{k}={_param_str(v)}")
    one_line = "[" + " ".join(items) + "]"
    if any("{" in it for it in items) or head_width + len(one_line) > _PP_WIDTH:
        return "[\n" + "\n".join("  " + it.replace("\n", "\n  ") for it in items) + "\n]"
    return one_line


def pp_jaxpr(jaxpr: Jaxpr, namer: _Namer | None = None) -> str:
    """JAX's text form: one line when short, else one equation per line."""
    namer = namer or _Namer()
    decl = lambda v: f"{namer(v)}:{v.aval.str_short(True)}"
    consts = " ".join(decl(v) for v in jaxpr.constvars)
    invars = " ".join(decl(v) for v in jaxpr.invars)
    eqn_strs = []
    for eqn in jaxpr.eqns:
        outs = " ".join(decl(v) for v in eqn.outvars)
        head_width = 4 + len(outs) + 3 + len(eqn.primitive.name)
        params = _eqn_params_str(eqn, namer, head_width) if eqn.params else ""
        ins = " ".join(namer(v) for v in eqn.invars)
        eqn_strs.append(f"{outs} = {eqn.primitive.name}{params} {ins}")
    outvars = ", ".join(namer(v) for v in jaxpr.outvars)
    outs_str = f"({outvars}{',' if len(jaxpr.outvars) == 1 else ''})"
    head = f"{{ lambda {consts}; {invars}. let"
    one_line = f"{head} {' '.join(eqn_strs)} in {outs_str} }}" if eqn_strs else f"{head} in {outs_str} }}"
    if len(eqn_strs) <= 1 and len(one_line) <= 80 and "\n" not in one_line:
        return one_line
    body = "\n".join("    " + s.replace("\n", "\n    ") for s in eqn_strs)
    return f"{head}\n{body}\n  in {outs_str} }}"


# ---------------------------------------------------------------------------------------
# Tracers.


class Tracer:
    """A value being traced by ``_trace`` (``jax.core.Tracer``). Its operators and methods
    are the Array ones (installed by ``_src/array.py``), so user code treats both alike."""

    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__}")

    # Concrete values are not available while tracing: JAX's errors.
    def __bool__(self):
        raise errors.TracerBoolConversionError(self)

    def __array__(self, *args, **kwargs):
        raise errors.TracerArrayConversionError(self)

    def __index__(self):
        raise errors.TracerIntegerConversionError(self)

    def _concretization_error(self, fun: str):
        return errors.ConcretizationTypeError(
            self, f"The problem arose with the `{fun}` function. If trying to convert the data "
                  f"type of a value, try using `x.astype({fun})` or `jnp.array(x, {fun})` instead.")

    def __float__(self):
        raise self._concretization_error("float")

    def __int__(self):
        raise self._concretization_error("int")

    def __complex__(self):
        raise self._concretization_error("complex")

    def item(self, *args):
        raise self._concretization_error("item")

    def tolist(self):
        raise self._concretization_error("tolist")


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of an Array, tracer, numpy value or Python scalar."""
    if isinstance(x, Tracer):
        return x.aval
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        dt = dtypes.dtype(type(x))
        # Python bools are strong in JAX; ints, floats and complexes are weak.
        return ShapedArray((), dtypes.canonicalize_dtype(dt), weak_type=not isinstance(x, bool))
    arr = np.asarray(x)
    return ShapedArray(arr.shape, dtypes.canonicalize_dtype(arr.dtype), weak_type=False)
