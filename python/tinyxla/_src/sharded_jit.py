"""``jax.jit`` with ``in_shardings`` / ``out_shardings``: arguments are laid out by
``in_shardings`` before the call and results by ``out_shardings``, or else by the layout
propagated through the jaxpr from the arguments' shardings and the
``with_sharding_constraint`` equations, in JAX's canonical form (trailing Nones dropped).

Propagation rules: elementwise results keep their operands' layout, ``transpose`` permutes
it, reductions drop the reduced axes, ``dot_general`` keeps the batch and free axes of its
operands; any other equation gives a replicated result.

Differences from JAX: the function runs as one compiled program on the host (every
device reads host memory) instead of one partitioned program per device; plain ``jit`` of
sharded arguments without shardings gives single-device results.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from tinyxla._src import api, core
from tinyxla._src.array import Array
from tinyxla._src.interpreters import batching
from tinyxla._src.sharded_array import put_sharded
from tinyxla._src.sharding import NamedSharding, PartitionSpec, resolve
from tinyxla._src.sharding_constraint import sharding_constraint_p
from tinyxla._src.tree_util import tree_flatten, tree_unflatten
from tinyxla._src.vmap import _flatten_axes


def jit(fun: Callable | None = None, *, in_shardings: Any = None, out_shardings: Any = None,
        **kwargs: Any) -> Any:
    """``jax.jit``: compiles ``fun``; with ``in_shardings``/``out_shardings`` its
    arguments and results are laid out over a mesh (see the module doc)."""
    if fun is None:
        return lambda f: jit(f, in_shardings=in_shardings, out_shardings=out_shardings,
                             **kwargs)
    inner = api.jit(fun, **kwargs)
    if in_shardings is None and out_shardings is None:
        return inner
    return _ShardedJit(inner, in_shardings, out_shardings)


class _ShardedJit:
    def __init__(self, inner: Any, in_shardings: Any, out_shardings: Any):
        self._inner = inner
        self._in = in_shardings
        self._out = out_shardings
        self._layouts: dict = {}
        functools.update_wrapper(self, inner, updated=())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._in is not None:
            specs = self._in
            if not isinstance(specs, (tuple, list)) or len(args) == 1 and not isinstance(
                    args[0], (tuple, list)):
                specs = (specs,) * len(args) if not isinstance(specs, (tuple, list)) else specs
            if len(specs) != len(args):
                raise ValueError(f"jit in_shardings has {len(specs)} entries but the function "
                                 f"got {len(args)} positional arguments")
            args = tuple(_put_tree(a, s) for a, s in zip(args, specs))
        out = self._inner(*args, **kwargs)
        if core.current_trace() is not core.EVAL_TRACE:
            return out
        if self._out is not None:
            return _put_tree(out, self._out)
        return self._propagated(args, kwargs, out)

    def _propagated(self, args: tuple, kwargs: dict, out: Any) -> Any:
        leaves, _ = tree_flatten((args, kwargs))
        in_shardings = [x.sharding if type(x) is Array else None for x in leaves]
        traced = self._inner.trace(*args, **kwargs)
        closed = traced.jaxpr
        out_leaves, out_tree = tree_flatten(out)
        shardings = propagate(closed.jaxpr, in_shardings)
        return tree_unflatten(out_tree, [
            put_sharded(o, s) if isinstance(s, NamedSharding) else o
            for o, s in zip(out_leaves, shardings)])


def _put_tree(x: Any, shardings: Any) -> Any:
    leaves, tree = tree_flatten(x)
    specs = _flatten_axes("jit shardings", x, shardings)
    return tree_unflatten(tree, [
        l if s is None or not isinstance(resolve(s), NamedSharding)
        else put_sharded(l, resolve(s)) for l, s in zip(leaves, specs)])


def _canonical(mesh: Any, dims: list) -> NamedSharding:
    while dims and not dims[-1]:
        dims = dims[:-1]
    return NamedSharding(mesh, PartitionSpec(*[d if d else None for d in dims]))


def propagate(jaxpr: core.Jaxpr, in_shardings: list) -> list:
    """The NamedSharding (or None: single device / replicated) of each output of
    ``jaxpr`` given its inputs' shardings."""
    mesh = next((s.mesh for s in in_shardings if isinstance(s, NamedSharding)), None)
    if mesh is None:
        for e in jaxpr.eqns:
            if e.primitive is sharding_constraint_p and isinstance(e.params["sharding"],
                                                                   NamedSharding):
                mesh = e.params["sharding"].mesh
                break
    if mesh is None:
        return [None] * len(jaxpr.outvars)
    env: dict = {}
    for v, s in zip(jaxpr.invars, in_shardings):
        if isinstance(s, NamedSharding) and s.mesh == mesh:
            env[v] = [s.spec[d] if d < len(s.spec) else None for d in range(len(v.aval.shape))]

    def read(x):
        if type(x) is core.Literal:
            return None
        return env.get(x)

    for e in jaxpr.eqns:
        ins = [read(x) for x in e.invars]
        out = _rule(e, ins)
        for v in e.outvars:
            if out is not None and len(out) == len(v.aval.shape):
                env[v] = out
    outs = []
    for v in jaxpr.outvars:
        dims = read(v)
        outs.append(_canonical(mesh, dims if dims is not None else []))
    return outs


def _rule(e: core.JaxprEqn, ins: list) -> list | None:
    prim = e.primitive
    if prim is sharding_constraint_p:
        s = e.params["sharding"]
        if isinstance(s, NamedSharding):
            return [s.spec[d] if d < len(s.spec) else None
                    for d in range(len(e.outvars[0].aval.shape))]
        return ins[0]
    if prim in batching.elementwise_primitives or prim.name in ("convert_element_type", "copy"):
        nd = len(e.outvars[0].aval.shape)
        for i, x in zip(ins, e.invars):
            if i is not None and len(x.aval.shape) == nd:
                return i
        return None
    if prim.name == "transpose" and ins[0] is not None:
        return [ins[0][p] for p in e.params["permutation"]]
    if prim.name.startswith("reduce_") and ins[0] is not None and "axes" in e.params:
        axes = set(e.params["axes"])
        return [d for i, d in enumerate(ins[0]) if i not in axes]
    if prim.name == "dot_general":
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        lhs, rhs = ins
        nl, nr = len(e.invars[0].aval.shape), len(e.invars[1].aval.shape)
        lhs = lhs or [None] * nl
        rhs = rhs or [None] * nr
        batch = [lhs[a] or rhs[b] for a, b in zip(lb, rb)]
        lfree = [lhs[i] for i in range(nl) if i not in lc and i not in lb]
        rfree = [rhs[i] for i in range(nr) if i not in rc and i not in rb]
        return batch + lfree + rfree
    return None
