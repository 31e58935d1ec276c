"""``jax.jit`` with ``in_shardings`` / ``out_shardings``, and plain ``jit`` called with
arrays laid out over a mesh: arguments are laid out by ``in_shardings`` (or keep their
own), results by ``out_shardings`` or else by the layout propagated through the jaxpr
(``spmd.py``'s rules), in JAX's canonical form; a propagated result laid out like an
argument jit was given no sharding for carries that argument's sharding, as in JAX.

On a mesh of more than one device the function runs SPMD: ``spmd.py``
derives the per-device program with its collectives, traced once per signature over the
flat axis of the mesh's devices, and pmap's runner runs one instance per device, each
reading its own blocks of the arguments and leaving its blocks of the results. Otherwise
(one device, blocks that do not divide an argument, a mesh of several processes' devices
not in process order) it runs as one compiled program and the results are laid out
afterwards. Over the devices of several processes (``jax.distributed``) each process runs
its own devices' part, the collectives cross the processes over MPI, and the results'
blocks are all-gathered so that every process holds them all.

Differences from JAX: a plain ``jit`` called with keyword arguments, or one with static or
donated arguments, computes sharded arguments unsplit and gives single-device results.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Hashable

from tinyxla._src import api, core, distributed, errors, spmd
from tinyxla._src import sharded_eager  # noqa: F401  (eager ops keep shardings)
from tinyxla._src import devices as devices_mod
from tinyxla._src.array import Array, _to_array
from tinyxla._src.interpreters import batching
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters import pmap as pmap_run, pmap_mpi
from tinyxla._src.sharded_array import from_device_blocks, put_sharded
from tinyxla._src.sharding import Mesh, NamedSharding, PartitionSpec, resolve
from tinyxla._src.sharding_constraint import sharding_constraint_p
from tinyxla._src.tree_util import tree_flatten, tree_leaves, tree_unflatten
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


class _LastCall:
    """The SPMD runner of the last call whose arguments were laid-out Arrays passed as they
    were (not pytrees, not re-laid out by ``in_shardings``), with what it was built for: a
    call with arrays of the same avals and shardings runs it without flattening, laying
    out and hashing its arguments (a third of a small step's dispatch)."""

    __slots__ = ("avals", "shardings", "plan")

    def __init__(self, args: tuple, plan: Callable):
        self.avals = [(a.shape, a.dtype, a.weak_type) for a in args]
        self.shardings = [a._layout.sharding for a in args]
        self.plan = plan

    def matches(self, args: tuple) -> bool:
        if len(args) != len(self.avals):
            return False
        for a, (shape, dtype, weak), s in zip(args, self.avals, self.shardings):
            if type(a) is not Array:
                return False
            layout = a._layout
            if (layout is None or (layout.sharding is not s and layout.sharding != s)
                    or a.dtype != dtype or a.weak_type != weak or a.shape != shape):
                return False
        return True


class _ShardedJit:
    def __init__(self, inner: Any, in_shardings: Any, out_shardings: Any):
        self._inner = inner
        self._in = in_shardings
        self._out = out_shardings
        self._layouts: dict = {}
        self._last: _LastCall | None = None
        # A bare PartitionSpec names a sharding over the mesh current at each call, so
        # arguments laid out once may need laying out again: no last-call shortcut then.
        self._remembers = not _names_current_mesh(in_shardings)
        functools.update_wrapper(self, inner, updated=())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        last = self._last
        if (last is not None and not kwargs and core.current_trace() is core.EVAL_TRACE
                and last.matches(args)):
            return last.plan(list(args))
        given = args
        static = self._inner._static_argnums
        if self._in is not None:
            dynamic = [i for i in range(len(args)) if i not in static]
            specs = self._in
            if not isinstance(specs, (tuple, list)) or len(dynamic) == 1 and not isinstance(
                    args[dynamic[0]], (tuple, list)):
                specs = ((specs,) * len(dynamic) if not isinstance(specs, (tuple, list))
                         else specs)
            if len(specs) != len(dynamic):
                raise ValueError(
                    "pjit in_shardings specification must be a tree prefix of the positional "
                    "arguments tuple. In particular, pjit in_shardings must either be a "
                    "Sharding, a PartitionSpec, or a tuple of length equal to the number of "
                    "positional arguments. But pjit in_shardings is the wrong length: got a "
                    f"tuple or list of length {len(specs)} for an args tuple of length "
                    f"{len(dynamic)}.")
            args = list(args)
            for i, spec in zip(dynamic, specs):
                args[i] = _put_tree(args[i], spec)
            args = tuple(args)
        if core.current_trace() is not core.EVAL_TRACE:
            return self._inner(*args, **kwargs)
        if not kwargs and not static:
            found = self._spmd_plan(args)
            if found is not None:
                plan, leaves = found
                if (self._remembers and len(leaves) == len(given)
                        and all(a is x for a, x in zip(given, leaves))
                        and all(a._layout is not None for a in leaves)):
                    self._last = _LastCall(args, plan)
                return plan(leaves)
        out = self._inner.call_unsharded(args, kwargs)
        if self._out is not None:
            return _put_tree(out, self._out)
        return self._propagated(args, kwargs, out)

    def _spmd_plan(self, args: tuple) -> tuple[Callable, list] | None:
        """The SPMD runner for these arguments' signature and shardings and the flat
        arguments as Arrays, or None when the call does not run as SPMD."""
        leaves, in_tree = tree_flatten(args)
        try:
            leaves = [x if type(x) is Array else _to_array(x) for x in leaves]
        except TypeError:
            return None  # the unsharded call raises JAX's error
        shardings = [x.sharding for x in leaves]
        key = (in_tree, tuple((x.shape, x.dtype, x.weak_type) for x in leaves),
               tuple(shardings))
        plan = self._layouts.get(key, False)
        if plan is False:
            plan = self._layouts[key] = _build_spmd(
                self._inner, tree_unflatten(in_tree, leaves), leaves, shardings, self._out,
                self._unspecified(leaves))
        return None if plan is None else (plan, leaves)

    def _propagated(self, args: tuple, kwargs: dict, out: Any) -> Any:
        """``out`` (computed unsplit) laid out as the partitioner would have left it."""
        static = self._inner._static_argnums
        leaves, _ = tree_flatten(([a for i, a in enumerate(args) if i not in static], kwargs))
        closed = self._inner.trace(*args, **kwargs).jaxpr
        shardings = [x.sharding if type(x) is Array else None for x in leaves]
        mesh = _mesh_of(shardings + constraint_shardings(closed.jaxpr))
        if mesh is None:
            return out
        layouts = spmd.propagate(closed, mesh, [
            spmd.layout_of(s, v.aval.ndim) if isinstance(s, NamedSharding) and s.mesh == mesh
            else spmd.unsplit(v.aval.ndim) for s, v in zip(shardings, closed.jaxpr.invars)])
        out_leaves, out_tree = tree_flatten(out)
        inputs = self._unspecified(leaves)
        return tree_unflatten(out_tree, [put_sharded(o, spmd.result_sharding(lay, mesh, inputs))
                                         for o, lay in zip(out_leaves, layouts)])

    def _unspecified(self, leaves: list) -> list:
        """(sharding, ndim) of the arguments jit was given no sharding for, whose
        shardings results may reuse."""
        if self._in is not None:
            return []
        return [(x.sharding, x.ndim) for x in leaves if type(x) is Array]


def _names_current_mesh(specs: Any) -> bool:
    """Whether ``specs`` (a jit's shardings argument) holds a bare PartitionSpec."""
    return any(isinstance(s, PartitionSpec)
               for s in tree_leaves(specs, is_leaf=lambda x: isinstance(x, PartitionSpec)))


_plain_runners: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _plain_call(jitted: api.JitWrapped, args: tuple) -> Any:
    """A plain ``jit``'s call with arguments laid out over a mesh: SPMD, as with
    ``in_shardings`` equal to the arguments' shardings."""
    runner = _plain_runners.get(jitted)
    if runner is None:
        runner = _plain_runners[jitted] = _ShardedJit(jitted, None, None)
    return runner(*args)


api.sharded_call = _plain_call


def _put_tree(x: Any, shardings: Any) -> Any:
    leaves, tree = tree_flatten(x)
    specs = _flatten_axes("jit shardings", x, shardings)
    return tree_unflatten(tree, [
        l if s is None or not isinstance(resolve(s), NamedSharding)
        else put_sharded(l, resolve(s)) for l, s in zip(leaves, specs)])


def constraint_shardings(jaxpr: core.Jaxpr) -> list:
    """The NamedShardings of the ``with_sharding_constraint`` equations of ``jaxpr``."""
    return [e.params["sharding"] for e in jaxpr.eqns if e.primitive is sharding_constraint_p
            and isinstance(e.params["sharding"], NamedSharding)]


def _mesh_of(shardings: list) -> Mesh | None:
    """The one mesh of the NamedShardings among ``shardings`` (None: none, or several)."""
    meshes = {s.mesh for s in shardings if isinstance(s, NamedSharding)}
    return meshes.pop() if len(meshes) == 1 else None


def _build_spmd(inner: Any, args: tuple, leaves: list, shardings: list,
                out_shardings: Any, unspecified: list) -> Callable | None:
    """The SPMD runner of ``inner`` at these arguments: the per-device program
    (``spmd.Partitioner``) run once per device of the mesh, each reading its own blocks of
    the arguments and leaving its blocks of the results. None when there is nothing to
    split (one device, no mesh) or the arguments' blocks do not divide them."""
    traced = inner.trace(*args)
    closed, out_tree = traced.jaxpr, traced.out_tree
    outs_wanted = [None] * len(closed.out_avals)
    if out_shardings is not None:
        example = tree_unflatten(out_tree, list(closed.out_avals))
        outs_wanted = [resolve(s) for s in _flatten_axes("jit out_shardings", example,
                                                         out_shardings)]
        for s, aval in zip(outs_wanted, closed.out_avals):
            if isinstance(s, NamedSharding):
                s.check_shape(aval.shape)  # JAX's IndivisibleError before running
    mesh = _mesh_of(shardings + outs_wanted + constraint_shardings(closed.jaxpr))
    across = distributed.state.num_processes > 1
    if mesh is None or mesh.size == 1 or (
            across and not pmap_mpi.in_process_order(list(mesh.devices.flat))):
        return None
    core.check_single_device_effects(closed.jaxpr, mesh.size)
    rules = spmd.Rules(mesh)
    in_layouts = []
    for s, x in zip(shardings, leaves):
        lay = spmd.layout_of(s, x.ndim) if isinstance(s, NamedSharding) else None
        if lay is not None and rules.fit(lay, x.shape) != lay:
            return None
        in_layouts.append(lay)
    out_layouts = [None if not isinstance(s, NamedSharding) else spmd.layout_of(s, len(a.shape))
                   for s, a in zip(outs_wanted, closed.out_avals)]
    part = spmd.Partitioner(closed, mesh, [lay or spmd.unsplit(x.ndim)
                                           for lay, x in zip(in_layouts, leaves)], out_layouts)
    block_avals = [
        x.aval if lay is None else core.ShapedArray(
            tuple(n // rules.parts(a) for n, a in zip(x.shape, lay)), x.dtype, x.weak_type)
        for x, lay in zip(leaves, in_layouts)]
    info = errors.DebugInfo("jit", inner, [f"args[{i}]" for i in range(len(leaves))])
    with batching.extend_axis_env(batching.AxisData(spmd.FLAT, mesh.size)):
        per_device = pe.trace_to_jaxpr(lambda *b: part(*b), block_avals, info)
    # Over several processes: this process's devices only (see the module doc).
    all_ids = [d.id for d in mesh.devices.flat]
    flat_devices = [d for d in mesh.devices.flat
                    if not across or d.process_index == distributed.state.process_id]
    devs = tuple(devices_mod._device_index(d) for d in flat_devices)
    in_axes = tuple(None if lay is None else 0 for lay in in_layouts)
    plan = pmap_run._plan(per_device, in_axes, (0,) * len(closed.out_avals), mesh.size, devs,
                          across)
    # An out_shardings entry is kept as given (JAX does not canonicalize it).
    result_shardings = [want if isinstance(want, NamedSharding)
                        else spmd.result_sharding(lay, mesh, unspecified)
                        for lay, want in zip(part.result_layouts, outs_wanted)]
    ids = [d.id for d in flat_devices]

    def run(flat: list) -> Any:
        inputs = []
        for x, lay in zip(flat, in_layouts):
            if lay is not None:
                handles = x._layout.device_handles(x)
                x = [handles[i] for i in ids]
            inputs.append(x)
        blocks = []
        for o, s in zip(plan.run_blocks(inputs), result_shardings):
            own = dict(zip(ids, o))
            if across and s.is_fully_replicated:  # every process holds the same blocks
                own = {**dict.fromkeys(all_ids, o[0]), **own}
            elif across:  # the other processes' blocks, as views of one all-gather
                every = pmap_mpi.gather_processes(o)
                own = {**dict(zip(all_ids, pmap_run._split_handle(every, 0, len(all_ids)))),
                       **own}
            blocks.append(own)
        return tree_unflatten(out_tree, [
            from_device_blocks(b, s, aval)
            for b, s, aval in zip(blocks, result_shardings, closed.out_avals)])
    return run
