"""``jax.jit`` with ``in_shardings`` / ``out_shardings``: arguments are laid out by
``in_shardings`` before the call and results by ``out_shardings``, or else by the layout
propagated through the jaxpr from the arguments' shardings and the
``with_sharding_constraint`` equations, in JAX's canonical form (trailing Nones dropped).

Propagation rules: elementwise results keep their operands' layout, ``transpose`` permutes
it, reductions drop the reduced axes, ``dot_general`` keeps the batch and free axes of its
operands; any other equation gives a replicated result.

When the shardings split over one mesh axis (any others of size 1), the function runs
SPMD: ``spmd.py`` derives the per-device program with its collectives and ``shard_map``
runs one instance per device of that axis. Otherwise it runs as one compiled program
(every device reads host memory) and the results are laid out afterwards.

Differences from JAX: plain ``jit`` of sharded arguments without shardings gives
single-device results; meshes split over two axes at once are not partitioned.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Hashable

from tinyxla._src import api, core, errors, spmd
from tinyxla._src.array import Array
from tinyxla._src.interpreters import batching
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.shard_map import shard_map
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
                raise ValueError(
                    "pjit in_shardings specification must be a tree prefix of the positional "
                    "arguments tuple. In particular, pjit in_shardings must either be a "
                    "Sharding, a PartitionSpec, or a tuple of length equal to the number of "
                    "positional arguments. But pjit in_shardings is the wrong length: got a "
                    f"tuple or list of length {len(specs)} for an args tuple of length "
                    f"{len(args)}.")
            args = tuple(_put_tree(a, s) for a, s in zip(args, specs))
        if core.current_trace() is not core.EVAL_TRACE:
            return self._inner(*args, **kwargs)
        if not kwargs:
            plan = self._spmd_plan(args)
            if plan is not None:
                return plan(args)
        out = self._inner(*args, **kwargs)
        if self._out is not None:
            return _put_tree(out, self._out)
        return self._propagated(args, kwargs, out)

    def _spmd_plan(self, args: tuple) -> Callable | None:
        """The SPMD runner for these arguments' signature and shardings, or None when the
        layouts do not split over exactly one mesh axis."""
        leaves, in_tree = tree_flatten(args)
        if not all(type(x) is Array for x in leaves):
            return None
        shardings = [x.sharding for x in leaves]
        key = (in_tree, tuple((x.shape, x.dtype, x.weak_type) for x in leaves),
               tuple(shardings))
        if key in self._layouts:
            return self._layouts[key]
        plan = self._layouts[key] = _build_spmd(self._inner, args, leaves, shardings,
                                                self._out)
        return plan

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


def _one_axis(shardings: list) -> tuple[Any, Hashable] | None:
    """The mesh and the one mesh axis longer than 1 that the shardings split over."""
    mesh, axes = None, set()
    for s in shardings:
        if not isinstance(s, NamedSharding):
            if getattr(s, "num_devices", 1) > 1:
                return None
            continue
        if mesh is None:
            mesh = s.mesh
        elif s.mesh != mesh:
            return None
        for d in range(len(s.spec)):
            names = [a for a in s.spec.axes_of(d) if s.mesh.shape[a] > 1]
            if len(names) > 1:
                return None
            axes.update(names)
    if mesh is None or len(axes) != 1:
        return None
    return mesh, axes.pop()


def _build_spmd(inner: Any, args: tuple, leaves: list, shardings: list,
                out_shardings: Any) -> Callable | None:
    traced = inner.trace(*args)
    closed, out_tree = traced.jaxpr, traced.out_tree
    outs_wanted = None
    if out_shardings is not None:
        example = tree_unflatten(out_tree, list(closed.out_avals))
        outs_wanted = [resolve(s) for s in _flatten_axes("jit out_shardings", example,
                                                         out_shardings)]
        for s, aval in zip(outs_wanted, closed.out_avals):
            if isinstance(s, NamedSharding):
                s.check_shape(aval.shape)  # JAX's IndivisibleError before running
    found = _one_axis(shardings + [s for s in outs_wanted or [] if s is not None])
    if found is None:
        return None
    mesh, axis = found
    size = mesh.shape[axis]
    in_layouts = [spmd.layout_of(s, len(x.shape), axis) or [None] * len(x.shape)
                  for s, x in zip(shardings, leaves)]
    out_layouts = [None if s is None else spmd.layout_of(s, len(a.shape), axis)
                   for s, a in zip(outs_wanted or [None] * len(closed.out_avals),
                                   closed.out_avals)]
    part = spmd.Partitioner(closed, axis, size, in_layouts, out_layouts)
    block_avals = [core.ShapedArray(tuple(n // size if a else n for n, a in zip(x.shape, lay)),
                                    x.dtype, x.weak_type) for x, lay in zip(leaves, in_layouts)]
    # A first trace of the per-device program tells the layouts of its results.
    with batching.extend_axis_env(batching.AxisData(axis, size)):
        pe.trace_to_jaxpr(lambda *b: part(*b), block_avals,
                          errors.DebugInfo("jit", inner, [f"args[{i}]" for i in range(len(leaves))]))
    out_specs = [PartitionSpec(*lay) for lay in part.result_layouts]
    in_specs = [PartitionSpec(*lay) for lay in in_layouts]
    mapped = shard_map(lambda *b: part(*b), mesh=mesh, in_specs=tuple(in_specs),
                       out_specs=list(out_specs), axis_names={axis}, check_vma=False)

    def run(call_args: tuple) -> Any:
        flat, _ = tree_flatten(call_args)
        outs = mapped(*flat)
        # An out_shardings entry is kept as given (JAX does not canonicalize it).
        return tree_unflatten(out_tree, [
            put_sharded(o, want if isinstance(want, NamedSharding) else _canonical(mesh, lay))
            for o, lay, want in zip(outs, part.result_layouts, outs_wanted or [None] * len(outs))])
    return run
