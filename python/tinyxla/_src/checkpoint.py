"""Rematerialization: ``checkpoint`` / ``remat`` (mirrors ``jax._src.ad_checkpoint``).

``checkpoint(f)`` stages ``f`` into a jaxpr bound as a ``remat2`` equation (JAX's name
for it). Evaluated or staged it is just a call. Under reverse mode its linearization
saves only the inputs: the primal outputs are computed now, and the linear part staged
for the backward pass is itself a ``remat2`` equation over the inputs and tangents
whose jaxpr recomputes the primal values the tangents need; transposing it re-runs that
recomputation (``backward_pass`` evaluates the non-linear equations first).

Differences from JAX: ``policy`` is recorded but every intermediate is recomputed
whatever it says.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from tinyxla._src import core, errors
from tinyxla._src.api import _flat_arg_names, _lift_tracer_consts
from tinyxla._src.config import config
from tinyxla._src.core import ClosedJaxpr, Primitive
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters.caches import per_jaxpr
from tinyxla._src.tree_util import tree_flatten, tree_unflatten

remat_p = Primitive("remat2", multiple_results=True)


@remat_p.def_abstract_eval
def _remat_abstract_eval(*avals, jaxpr: ClosedJaxpr, prevent_cse: bool, differentiated: bool,
                         policy: Any):
    return jaxpr.out_avals


@remat_p.def_impl
def _remat_impl(*args, jaxpr: ClosedJaxpr, prevent_cse: bool, differentiated: bool,
                policy: Any):
    return core.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _remat_jvp(primals, tangents, *, jaxpr: ClosedJaxpr, **params):
    nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
    jvp_closed, out_nonzero = ad.jvp_jaxpr(jaxpr, nonzeros)
    outs = remat_p.bind(*primals, *[t for t in tangents if type(t) is not ad.Zero],
                        jaxpr=jvp_closed, **params)
    n = len(jaxpr.out_avals)
    nz = iter(outs[n:])
    return outs[:n], [next(nz) if z else ad.Zero.from_primal_value(p)
                      for p, z in zip(outs[:n], out_nonzero)]


def _tangent_part(closed: ClosedJaxpr, nonzeros: tuple[bool, ...]
                  ) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    """``(primals, nonzero tangents) -> nonzero tangent outputs``, recomputing the primal
    values the tangents need."""
    jvp_closed, out_nonzero = ad.jvp_jaxpr(closed, nonzeros)
    n = len(closed.out_avals)
    used = [False] * n + [True] * sum(out_nonzero)
    return ClosedJaxpr(ad.dce_jaxpr(jvp_closed.jaxpr, used), jvp_closed.consts), out_nonzero


_tangent_part_cached = per_jaxpr(4096)(_tangent_part)


def _remat_linearize(trace, primals, tangents, *, jaxpr: ClosedJaxpr, prevent_cse: bool,
                     differentiated: bool, policy: Any):
    # The primal outputs, inline under the parent trace (no residuals kept from them).
    primal_outs = core.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *primals)
    nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
    lin, out_nonzero = _tangent_part_cached(jaxpr, nonzeros)
    lin_outs = iter(ad.bind_with(
        trace.tangent_trace, remat_p, [*primals, *[t for t in tangents if type(t) is not ad.Zero]],
        {"jaxpr": lin, "prevent_cse": prevent_cse, "differentiated": True, "policy": policy})
        if any(out_nonzero) else ())
    return primal_outs, [next(lin_outs) if nz else ad.Zero.from_primal_value(p)
                         for p, nz in zip(primal_outs, out_nonzero)]


def _remat_transpose(cts, *args, jaxpr: ClosedJaxpr, prevent_cse: bool, differentiated: bool,
                     policy: Any):
    linear = tuple(ad.is_undefined_primal(x) for x in args)
    cts_nonzero = tuple(type(ct) is not ad.Zero for ct in cts)
    transposed = ad.transpose_jaxpr(jaxpr, linear, cts_nonzero)
    outs = iter(remat_p.bind(*[x for x, lin in zip(args, linear) if not lin],
                             *[ct for ct, nz in zip(cts, cts_nonzero) if nz],
                             jaxpr=transposed, prevent_cse=prevent_cse, differentiated=True,
                             policy=policy))
    return [next(outs) if lin else None for lin in linear]


ad.primitive_jvps[remat_p] = _remat_jvp
ad.primitive_linearizations[remat_p] = _remat_linearize
ad.primitive_transposes[remat_p] = _remat_transpose


def _remat_batch(axis_data, vals, dims, *, jaxpr: ClosedJaxpr, **params):
    batched, out_dims = batching.batch_jaxpr(jaxpr, axis_data, dims)
    return remat_p.bind(*vals, jaxpr=batched, **params), list(out_dims)


batching.axis_primitive_batchers[remat_p] = _remat_batch
lowering.register_inline(remat_p, "jaxpr")

_STATIC_HINT = (
    "\n\nConsider using the `static_argnums` parameter for `jax.remat` or `jax.checkpoint`. "
    "See the `jax.checkpoint` docstring and its example involving `static_argnums`:\n"
    "https://docs.jax.dev/en/latest/_autosummary/jax.checkpoint.html\n")


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | Sequence[int] = ()) -> Callable:
    """``fun`` with its intermediate values recomputed in the backward pass rather than
    saved (``jax.checkpoint``). ``fun`` is traced to a jaxpr (cached per argument
    signature), so Python control flow on argument values needs ``static_argnums``."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    cache: dict[Any, tuple[ClosedJaxpr, list, Any]] = {}

    @functools.wraps(fun, updated=())
    def fun_remat(*args, **kwargs):
        nums = tuple(i % len(args) if i < 0 else i for i in static)
        static_vals = {i: args[i] for i in nums}
        dyn = tuple(a for i, a in enumerate(args) if i not in static_vals)
        leaves, in_tree = tree_flatten((dyn, kwargs))
        avals = tuple(core.get_aval(x) for x in leaves)
        key = (in_tree, avals, tuple((type(v), v) for v in static_vals.values()),
               config.jax_enable_x64)
        try:
            hit = cache.get(key)
        except TypeError:  # unhashable static arguments: trace every time
            key, hit = None, None
        if hit is None:
            hit = _trace(fun, args, kwargs, in_tree, avals, static_vals)
            if key is not None and not hit[1]:
                cache[key] = hit
        closed, tracer_consts, out_store = hit
        outs = remat_p.bind(*tracer_consts, *leaves, jaxpr=closed, prevent_cse=prevent_cse,
                            differentiated=False, policy=policy)
        return tree_unflatten(out_store[0], outs)

    return fun_remat


remat = checkpoint


def _trace(fun: Callable, args: tuple, kwargs: dict, in_tree: Any,
           avals: Sequence[core.ShapedArray], static_vals: dict[int, Any]
           ) -> tuple[ClosedJaxpr, list, list]:
    out_store: list = []

    def flat(*leaves):
        dyn, kw = tree_unflatten(in_tree, leaves)
        full = list(dyn)
        for i in sorted(static_vals):
            full.insert(i, static_vals[i])
        out_leaves, out_tree = tree_flatten(fun(*full, **kw))
        out_store[:] = [out_tree]
        return out_leaves

    names = _flat_arg_names(fun, args, kwargs, tuple(static_vals), len(avals))
    info = errors.DebugInfo("checkpoint / remat", fun, names)
    try:
        closed = pe.trace_to_jaxpr(flat, avals, info)
    except errors.ConcretizationTypeError as e:
        msg, = e.args
        if "for checkpoint" in msg:
            e.args = (msg + _STATIC_HINT,)
        raise
    closed, tracer_consts = _lift_tracer_consts(closed)
    return closed, tracer_consts, out_store
