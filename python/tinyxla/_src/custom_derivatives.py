"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp`` (mirrors
``jax._src.custom_derivatives``).

A call dispatches on the current trace, walking down to the trace that owns one of its
arguments: eagerly the function just runs; under a ``JVPTrace`` the user's JVP rule runs
(for custom_vjp, the fwd rule runs and a ``custom_lin`` equation, whose transpose is the
bwd rule, is staged into the linear jaxpr); under staging (jit, make_jaxpr) the call
becomes a ``custom_jvp_call`` / ``custom_vjp_call`` equation that keeps the rules, so that
differentiating the staged jaxpr later still uses them; under vmap the equation's body
is batched and its rules are vmapped.

Differences from JAX: ``symbolic_zeros=True`` passes ``Zero`` objects (with ``.aval`` and
``.instantiate()``) for zero tangents/cotangents; tangents of values a custom function
closes over are not propagated through the rule.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

from tinyxla._src import core, dtypes, errors
from tinyxla._src.api import _lift_tracer_consts
from tinyxla._src.core import Primitive
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.lax import lax
from tinyxla._src.tree_util import tree_flatten, tree_map, tree_unflatten
from tinyxla._src.vmap import vmap

SymbolicZero = ad.Zero

_JVP_OF_CUSTOM_VJP = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def _fun_name(fun: Callable) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _resolve_kwargs(fun: Callable, args: tuple, kwargs: dict, kind: str) -> tuple:
    """The arguments as positional ones, following ``fun``'s signature."""
    if not kwargs:
        return args
    try:
        if isinstance(fun, functools.partial):
            raise TypeError("functools.partial has an opaque signature")
        bound = inspect.signature(fun).bind(*args, **kwargs)
        bound.apply_defaults()
        passed = [k for k in bound.kwargs if k in kwargs]
        if passed:
            raise TypeError("The following keyword arguments could not be resolved to "
                            f"positions: {', '.join(passed)}")
        return bound.args
    except TypeError as e:
        raise TypeError(f"The input arguments to the {kind}-decorated function "
                        f"{_fun_name(fun)} could not be resolved to positional-only arguments. "
                        f"Binding failed with the error:\n{e}") from e


def _split_nondiff(args: tuple, nondiff_argnums: tuple[int, ...]) -> tuple[tuple, list]:
    nondiff = tuple(args[i] for i in nondiff_argnums)
    return nondiff, [a for i, a in enumerate(args) if i not in nondiff_argnums]


def _merge_nondiff(nondiff: tuple, nondiff_argnums: tuple[int, ...], dyn: Sequence[Any]) -> list:
    """The full argument list from the nondiff arguments and the others."""
    out = list(dyn)
    for i, x in sorted(zip(nondiff_argnums, nondiff), key=lambda p: p[0]):
        out.insert(i, x)
    return out


class _OutStore:
    """The output tree of a custom function, from whichever of its rules ran first."""

    __slots__ = ("tree",)

    def __init__(self):
        self.tree = None


def _tangent_avals(xs: Sequence[Any]) -> list[core.ShapedArray]:
    return [ad.tangent_aval(core.get_aval(x)) for x in xs]


def _dispatch(leaves: list, run: Callable[[list], list],
              on_jvp: Callable[[ad.JVPTrace, list, list], list],
              stage: Callable[[core.Trace, list], list]) -> list:
    """Finds the trace owning the arguments and calls the matching handler: ``run``
    eagerly, ``on_jvp`` under differentiation, else ``stage`` (a call equation, which
    staging records and vmap batches)."""
    trace = core.current_trace()
    while True:
        if trace is core.EVAL_TRACE:
            return ad.call_with(trace, run, leaves)
        if isinstance(trace, ad.JVPTrace):
            if any(type(x) is ad.JVPTracer and x._trace is trace and
                   type(x.tangent) is not ad.Zero for x in leaves):
                return on_jvp(trace, *zip(*[trace.unpack(x) for x in leaves]))
            trace = trace.parent
            continue
        if isinstance(trace, ad.LinearizeTangentTrace) and \
                not any(trace.owns(x) for x in leaves):
            trace = trace.parent
            continue
        return stage(trace, leaves)


def _trace_call(fun: Callable, leaves: list, kind: str, name_fun: Callable
                ) -> tuple[core.ClosedJaxpr, list]:
    """``fun`` of flat leaves as a closed jaxpr, with closed-over tracers lifted to
    leading arguments."""
    avals = [core.get_aval(x) for x in leaves]
    info = errors.DebugInfo(kind, name_fun, [f"args[{i}]" for i in range(len(leaves))])
    return _lift_tracer_consts(pe.trace_to_jaxpr(lambda *xs: fun(list(xs)), avals, info))


def _skip_consts(rule: Callable, consts: list) -> Callable:
    """``rule`` of the primals (and tangents) of a staged call that leads with ``consts``
    (closed-over tracers lifted to arguments), whose tangents the rule does not see."""
    if not consts:
        return rule
    k = len(consts)

    def skipping(primals, *tangents):
        return rule(list(primals[k:]), *[list(t[k:]) for t in tangents])

    skipping.__name__ = _fun_name(rule)
    return skipping


def _zero_consts(bwd: Callable, avals: list) -> Callable:
    """``bwd`` with zero cotangents for the leading lifted constants."""
    if not avals:
        return bwd

    def padded(res, cts):
        return [ad.Zero(a) for a in avals] + list(bwd(res, cts))

    padded.__name__ = _fun_name(bwd)
    return padded


# ---------------------------------------------------------------------------------------
# custom_jvp.

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


@custom_jvp_call_p.def_abstract_eval
def _custom_jvp_call_abstract_eval(*avals, call_jaxpr, jvp, symbolic_zeros, name):
    return call_jaxpr.out_avals


lowering.register_inline(custom_jvp_call_p, "call_jaxpr")


@custom_jvp_call_p.def_impl
def _custom_jvp_call_impl(*args, call_jaxpr, jvp, symbolic_zeros, name):
    return core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, symbolic_zeros, name):
    return jvp(list(primals), list(tangents))


ad.primitive_jvps[custom_jvp_call_p] = _custom_jvp_call_jvp


def _vmap_like(axis_data: Any) -> Callable:
    """``vmap`` over the axis being batched (its size and name)."""
    named = {} if axis_data.name is None else {"axis_name": axis_data.name}
    return functools.partial(vmap, axis_size=axis_data.size, **named)


def _custom_jvp_call_batch(axis_data, vals, dims, *, call_jaxpr, jvp, symbolic_zeros, name):
    """Under vmap the call stays a custom_jvp_call: of the batched body, with the rule
    vmapped (every output batched along axis 0)."""
    batched, _ = batching.batch_jaxpr(call_jaxpr, axis_data, dims, instantiate=True)
    in_dims = list(dims)

    def one(primals, tangents):
        outs, out_tangents = jvp(primals, tangents)
        return list(outs), [ad.instantiate_zeros(t) for t in out_tangents]

    def batched_jvp(primals, tangents):
        tangents = [ad.instantiate_zeros(t) for t in tangents]
        return _vmap_like(axis_data)(one, in_axes=(in_dims, in_dims))(list(primals), tangents)

    batched_jvp.__name__ = _fun_name(jvp)
    outs = custom_jvp_call_p.bind(*vals, call_jaxpr=batched, jvp=batched_jvp,
                                  symbolic_zeros=symbolic_zeros, name=name)
    return outs, [0] * len(outs)


batching.axis_primitive_batchers[custom_jvp_call_p] = _custom_jvp_call_batch


class custom_jvp:
    """A function with a custom JVP rule (``jax.custom_jvp``).

    ``@custom_jvp def f(x): ...`` then ``@f.defjvp def f_jvp(primals, tangents): return
    primal_out, tangent_out`` (or ``f.defjvps(*per_argument_rules)``). Arguments at
    ``nondiff_argnums`` are passed to the rule first and get no tangents.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Sets the rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out,
        tangent_out)``; returns it, so this works as a decorator."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument, ``rule(g, primal_out, *primals) -> tangent_out``; the
        output tangent is their sum (None: the argument does not contribute)."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            zeros = tree_map(lambda x: _zeros_like(x), primal_out)
            outs = [rule(t, primal_out, *primals) if rule else zeros
                    for t, rule in zip(tangents, jvps)]
            return primal_out, tree_map(lambda *ts: functools.reduce(_add, ts), *outs)

        jvp.__name__ = f"{_fun_name(self.fun)}_jvps"
        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp")
        nondiff, dyn = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(dyn))
        store = _OutStore()
        fun, rule, symbolic_zeros = self.fun, self.jvp, self.symbolic_zeros
        argnums = self.nondiff_argnums

        def run(flat_args):
            out = fun(*_merge_nondiff(nondiff, argnums, tree_unflatten(in_tree, flat_args)))
            out_leaves, store.tree = tree_flatten(out)
            return out_leaves

        def flat_jvp(primals, tangents):
            if not symbolic_zeros:
                tangents = [ad.instantiate_zeros(t) for t in tangents]
            py_primals = tree_unflatten(in_tree, primals)
            py_tangents = tree_unflatten(in_tree, tangents)
            pair = rule(*nondiff, tuple(py_primals), tuple(py_tangents))
            jvp_name = _fun_name(rule)
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(f"Custom JVP rule {jvp_name} for function {name} must produce "
                                "a pair (list or tuple of length two) representing primal and "
                                f"tangent outputs, but got {pair}.")
            out_primals, out_tree = tree_flatten(pair[0])
            out_tangents, out_tree2 = tree_flatten(pair[1])
            if out_tree != out_tree2:
                raise TypeError(f"Custom JVP rule {jvp_name} for function {name} must produce "
                                "primal and tangent outputs with equal container (pytree) "
                                f"structures, but got {out_tree} and {out_tree2} respectively.")
            _check_tangent_types(out_primals, out_tangents)
            store.tree = out_tree
            return out_primals, out_tangents

        flat_jvp.__name__ = _fun_name(rule)

        def on_jvp(trace, primals, tangents):
            out_p, out_t = ad.call_with(trace.tangent_trace, flat_jvp, list(primals),
                                        list(tangents))
            return [trace.lift(p, t) for p, t in zip(out_p, out_t)]

        def stage(trace, flat_args):
            closed, consts = _trace_call(run, flat_args, "custom_jvp fun", fun)
            return ad.bind_with(trace, custom_jvp_call_p, [*consts, *flat_args],
                                {"call_jaxpr": closed, "jvp": _skip_consts(flat_jvp, consts),
                                 "symbolic_zeros": symbolic_zeros, "name": name})

        outs = _dispatch(leaves, run, on_jvp, stage)
        return tree_unflatten(store.tree, outs)


def _check_tangent_types(primals: Sequence[Any], tangents: Sequence[Any]) -> None:
    expected, got, primal = [], [], []
    for p, t in zip(primals, tangents):
        p_aval = core.get_aval(p)
        e = ad.tangent_aval(p_aval)
        g = t.aval if type(t) is ad.Zero else core.get_aval(t)
        if (e.shape, e.dtype) != (g.shape, g.dtype):
            expected.append(e)
            got.append(g)
            primal.append(p_aval)
    if not expected:
        return
    if len(primals) == 1:
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        f"corresponding shapes and dtypes. Expected {expected[0].str_short()} "
                        f"(tangent type of {primal[0].str_short()}) but got "
                        f"{got[0].str_short()}.")
    raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                    "corresponding shapes and dtypes, but got:\n" + "\n".join(
                        f"  primal {p.str_short()} with tangent {g.str_short()}, expecting "
                        f"tangent {e.str_short()}" for p, e, g in zip(primal, expected, got)))


def _zeros_like(x: Any) -> Any:
    return ad.zeros_like_aval(ad.tangent_aval(core.get_aval(x)))


def _add(x: Any, y: Any) -> Any:
    return ad.add_tangents(x, y)


# ---------------------------------------------------------------------------------------
# custom_vjp.

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)


@custom_vjp_call_p.def_abstract_eval
def _custom_vjp_call_abstract_eval(*avals, call_jaxpr, fwd, bwd, symbolic_zeros, name):
    return call_jaxpr.out_avals


lowering.register_inline(custom_vjp_call_p, "call_jaxpr")


@custom_vjp_call_p.def_impl
def _custom_vjp_call_impl(*args, call_jaxpr, fwd, bwd, symbolic_zeros, name):
    return core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _custom_vjp_call_jvp(primals, tangents, **params):
    raise TypeError(_JVP_OF_CUSTOM_VJP)


def _custom_vjp_linearize(trace, primals, tangents, *, call_jaxpr, fwd, bwd, symbolic_zeros,
                          name):
    return _linearize_custom_vjp(trace, list(primals), list(tangents), fwd, bwd,
                                 symbolic_zeros)


ad.primitive_jvps[custom_vjp_call_p] = _custom_vjp_call_jvp
ad.primitive_linearizations[custom_vjp_call_p] = _custom_vjp_linearize


def _custom_vjp_call_batch(axis_data, vals, dims, *, call_jaxpr, fwd, bwd, symbolic_zeros,
                           name):
    """Under vmap the call stays a custom_vjp_call: of the batched body, with fwd and bwd
    vmapped; cotangents of unbatched inputs are summed over the batch."""
    batched, _ = batching.batch_jaxpr(call_jaxpr, axis_data, dims, instantiate=True)
    in_dims = list(dims)
    in_avals = call_jaxpr.in_avals
    float_in = [ad.tangent_dtype(a.dtype) != dtypes.float0 for a in in_avals]
    vmap_ = _vmap_like(axis_data)

    def batched_fwd(primals):
        return vmap_(lambda ps: tuple(map(list, fwd(ps))), in_axes=(in_dims,))(list(primals))

    def one_bwd(res, cts):
        return [ad.instantiate_zeros(c) for c, f in zip(bwd(res, cts), float_in) if f]

    def batched_bwd(res, cts):
        cts = [ad.instantiate_zeros(c) for c in cts]
        outs = iter(vmap_(one_bwd, in_axes=(0, 0))(list(res), cts))
        cts_in = []
        for d, f, a in zip(in_dims, float_in, in_avals):
            if not f:
                cts_in.append(ad.Zero(ad.tangent_aval(a)))
                continue
            c = next(outs)
            cts_in.append(lax.reduce_sum(c, (0,)) if d is None else batching.moveaxis(c, 0, d))
        return cts_in

    batched_fwd.__name__ = _fun_name(fwd)
    batched_bwd.__name__ = _fun_name(bwd)
    outs = custom_vjp_call_p.bind(*vals, call_jaxpr=batched, fwd=batched_fwd, bwd=batched_bwd,
                                  symbolic_zeros=symbolic_zeros, name=name)
    return outs, [0] * len(outs)


batching.axis_primitive_batchers[custom_vjp_call_p] = _custom_vjp_call_batch

# The linear part of a custom_vjp function under reverse mode: residuals and input
# tangents in, output tangents out; its transpose is the bwd rule.
custom_lin_p = Primitive("custom_lin", multiple_results=True)


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals, num_res, bwd, out_avals, symbolic_zeros):
    return list(out_avals)


@custom_lin_p.def_impl
def _custom_lin_impl(*args, **params):
    raise TypeError(_JVP_OF_CUSTOM_VJP)


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, symbolic_zeros):
    if not symbolic_zeros:
        cts = [ad.instantiate_zeros(ct) for ct in cts]
    cts_in = bwd(list(args[:num_res]), list(cts))
    return [None] * num_res + list(cts_in)


ad.primitive_jvps[custom_lin_p] = _custom_vjp_call_jvp
ad.primitive_transposes[custom_lin_p] = _custom_lin_transpose


def _linearize_custom_vjp(trace: ad.JVPTrace, primals: list, tangents: list, fwd: Callable,
                          bwd: Callable, symbolic_zeros: bool) -> list:
    """The fwd rule on the primals now (under the parent trace) and a custom_lin equation
    for the tangents: the primal and tangent outputs."""
    if not trace.linearizing:
        raise TypeError(_JVP_OF_CUSTOM_VJP)
    out, res = ad.call_with(trace.parent, fwd, primals)
    out_avals = tuple(_tangent_avals(out))
    tangent_args = [ad.call_with(trace.parent, ad.instantiate_zeros, t) for t in tangents]
    out_tangents = ad.bind_with(trace.tangent_trace, custom_lin_p, [*res, *tangent_args],
                                {"num_res": len(res), "bwd": bwd, "out_avals": out_avals,
                                 "symbolic_zeros": symbolic_zeros})
    return out, out_tangents


class custom_vjp:
    """A function with a custom VJP rule (``jax.custom_vjp``).

    ``@custom_vjp def f(x): ...`` then ``f.defvjp(f_fwd, f_bwd)``: ``f_fwd(*args) ->
    (out, residuals)`` and ``f_bwd(*nondiff_args, residuals, out_cotangent) -> a tuple
    with one cotangent (or None) per differentiable argument``. Forward-mode
    differentiation of such a function raises JAX's TypeError.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.symbolic_zeros = False

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        """Sets the fwd and bwd rules (``optimize_remat`` is accepted and ignored)."""
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _fun_name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
        nondiff, dyn = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(dyn))
        store = _OutStore()
        res_store = _OutStore()
        fun, fwd, bwd, symbolic_zeros = self.fun, self.fwd, self.bwd, self.symbolic_zeros
        argnums = self.nondiff_argnums
        fwd_name, bwd_name = _fun_name(fwd), _fun_name(bwd)

        def run(flat_args):
            out = fun(*_merge_nondiff(nondiff, argnums, tree_unflatten(in_tree, flat_args)))
            out_leaves, store.tree = tree_flatten(out)
            return out_leaves

        def flat_fwd(flat_args):
            pair = fwd(*_merge_nondiff(nondiff, argnums, tree_unflatten(in_tree, flat_args)))
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair "
                    "(list or tuple of length two) where the first element represents the "
                    "primal output (equal to those of the custom_vjp-decorated function "
                    f"{name}) and the second element represents residuals (i.e. values "
                    "stored from the forward pass for use on the backward pass), but instead "
                    f"of a pair the fwd rule {fwd_name} produced {pair}.")
            out_leaves, store.tree = tree_flatten(pair[0])
            res_leaves, res_store.tree = tree_flatten(pair[1])
            return out_leaves, res_leaves

        flat_fwd.__name__ = fwd_name
        in_avals = [core.get_aval(x) for x in leaves]

        def flat_bwd(res_leaves, ct_leaves):
            py_res = tree_unflatten(res_store.tree, res_leaves)
            py_cts = tree_unflatten(store.tree, ct_leaves)
            cts_in = bwd(*nondiff, py_res, py_cts)
            if isinstance(cts_in, list) and len(cts_in) == len(dyn):
                cts_in = tuple(cts_in)
            if not isinstance(cts_in, tuple) or len(cts_in) != len(dyn):
                raise TypeError(
                    "Custom VJP bwd rule must produce an output with the same container "
                    "(pytree) structure as the args tuple of the primal function, and in "
                    "particular must produce a tuple of length equal to the number of "
                    "arguments to the primal function, but got bwd output structure "
                    f"{tree_flatten(cts_in)[1]} for primal input structure {in_tree}.")
            flat = []
            for arg, ct in zip(dyn, cts_in):
                n = len(tree_flatten(arg)[0])
                if ct is None:
                    flat.extend([None] * n)
                else:
                    leaves_ct = tree_flatten(ct, is_leaf=lambda x: x is None)[0]
                    if len(leaves_ct) != n:
                        raise TypeError(
                            "Custom VJP bwd rule must produce an output with the same "
                            "container (pytree) structure as the args tuple of the primal "
                            "function, and in particular must produce a tuple of length equal "
                            "to the number of arguments to the primal function, but got bwd "
                            f"output structure {tree_flatten(cts_in)[1]} for primal input "
                            f"structure {in_tree}.")
                    flat.extend(leaves_ct)
            out = []
            for aval, ct in zip(in_avals, flat):
                t_aval = ad.tangent_aval(aval)
                if ct is None or type(ct) is ad.Zero or t_aval.dtype == dtypes.float0:
                    out.append(ad.Zero(t_aval))
                    continue
                got = core.get_aval(ct)
                if (got.shape, got.dtype) != (t_aval.shape, t_aval.dtype):
                    raise ValueError(
                        "Custom VJP bwd rule must produce an output with the same type as the "
                        "args tuple of the primal function, but at output"
                        f"[{len(out)}] the bwd rule produced an output of type "
                        f"{got.str_short()} corresponding to an input of type "
                        f"{aval.str_short()}")
                out.append(ct)
            return out

        flat_bwd.__name__ = bwd_name

        def on_jvp(trace, primals, tangents):
            out, out_tangents = _linearize_custom_vjp(trace, list(primals), list(tangents),
                                                      flat_fwd, flat_bwd, symbolic_zeros)
            return [trace.lift(p, t) for p, t in zip(out, out_tangents)]

        def stage(trace, flat_args):
            closed, consts = _trace_call(run, flat_args, "custom_vjp fun", fun)
            avals = [ad.tangent_aval(core.get_aval(c)) for c in consts]
            return ad.bind_with(trace, custom_vjp_call_p, [*consts, *flat_args],
                                {"call_jaxpr": closed, "fwd": _skip_consts(flat_fwd, consts),
                                 "bwd": _zero_consts(flat_bwd, avals),
                                 "symbolic_zeros": symbolic_zeros, "name": name})

        outs = _dispatch(leaves, run, on_jvp, stage)
        return tree_unflatten(store.tree, outs)


def closure_convert(fun: Callable, *example_args: Any) -> tuple[Callable, list]:
    """Hoists the differentiated values ``fun`` closes over into arguments
    (``jax.closure_convert``).

    ``fun`` is traced at ``example_args``; the closed-over values that are tracers of an
    enclosing transformation (those a derivative may flow through) become trailing
    arguments of the returned function, and are returned as the second element. Other
    closed-over values stay constants of the staged function.
    """
    leaves, in_tree = tree_flatten(example_args)
    out_store = _OutStore()

    def flat(*xs):
        outs, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, xs)))
        out_store.tree = out_tree
        return outs

    closed = pe.trace_to_jaxpr(flat, [core.get_aval(x) for x in leaves])
    hoist = [isinstance(c, core.Tracer) for c in closed.consts]
    hoisted = [c for c, h in zip(closed.consts, hoist) if h]
    kept = [c for c, h in zip(closed.consts, hoist) if not h]
    out_tree, num_args = out_store.tree, len(example_args)

    def converted(*args_and_consts: Any) -> Any:
        args, consts = args_and_consts[:num_args], list(args_and_consts[num_args:])
        xs, tree = tree_flatten(args)
        if tree != in_tree:
            raise TypeError(f"closure_convert: the converted function takes arguments of "
                            f"structure {in_tree}, got {tree}")
        it_kept, it_hoisted = iter(kept), iter(consts)
        full = [next(it_hoisted) if h else next(it_kept) for h in hoist]
        return tree_unflatten(out_tree, core.eval_jaxpr(closed.jaxpr, full, *xs))

    return converted, hoisted
