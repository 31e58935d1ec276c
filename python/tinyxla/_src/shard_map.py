"""``shard_map``: a function of per-device blocks mapped over a mesh (``jax.shard_map``,
``jax.experimental.shard_map.shard_map``).

Each argument is cut into blocks by its ``in_specs`` entry; the function sees one block
and the mesh axes as named axes, so the collectives (``psum``, ``all_gather``,
``ppermute``, ``all_to_all``, ``axis_index`` ...) address them; the results' blocks are
put back together by ``out_specs``. The map is a nest of named ``vmap``s, one per mesh axis
(outermost first), so it composes with ``jit``, ``grad`` and ``vmap`` as they do, and runs
as one compiled program. Called eagerly on a mesh with one axis longer than 1, it runs as a
``pmap`` over that axis's devices instead: one instance per device, concurrently.

``out_specs`` that leave out a mesh axis say the output is the same along it; with
``check_vma`` (``check_rep``) this is proven statically from the jaxpr (the output must
pass through ``psum``/``pmax``/``pmin`` over that axis, or not depend on
values split along it), with JAX's error otherwise. Unchecked, the block of index 0 is
returned, as JAX returns one device's value.
"""
from __future__ import annotations

import functools
import inspect
import math
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from tinyxla._src import core, distributed, errors
from tinyxla._src.array import Array, _to_array, _wrap
from tinyxla._src.interpreters import batching
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters.pmap import _inline_calls, _split_handle
from tinyxla._src.interpreters.pmap_mpi import gather_processes as _gather_handles
from tinyxla._src.lax import parallel, shape_ops
from tinyxla._src.pmap import pmap
from tinyxla._src.sharded_array import put_sharded
from tinyxla._src.sharding import Mesh, NamedSharding, PartitionSpec, get_mesh
from tinyxla._src.tree_util import tree_flatten, tree_unflatten
from tinyxla._src.vmap import _flatten_axes, vmap

# Collectives whose result is the same along the axes they reduce over (all_gather's is
# too, but JAX's check_vma still types it as varying).
_REPLICATING = {parallel.psum_p, parallel.pmax_p, parallel.pmin_p}


def shard_map(f: Callable | None = None, /, *, out_specs: Any, in_specs: Any = None,
              mesh: Mesh | None = None, axis_names: Any = frozenset(),
              check_vma: bool = True, check_rep: bool | None = None,
              auto: Any = frozenset()) -> Any:
    """Maps ``f`` over the blocks of its arguments on ``mesh`` (``jax.shard_map``).

    Without ``in_specs``, an argument laid out by a NamedSharding over ``mesh`` is split
    by its spec and any other is replicated, as JAX 0.10 infers them. Differs from JAX:
    inputs need not already be laid out by ``in_specs``.
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma,
                                 check_rep=check_rep, auto=auto)
    if mesh is None:
        mesh = get_mesh()
        if mesh is None:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context")
    check = check_vma if check_rep is None else check_rep
    manual = tuple(a for a in mesh.axis_names if not axis_names or a in axis_names)
    mapped = _ShardMapped(f, mesh, in_specs, out_specs, manual, check)

    @functools.wraps(f)
    def shard_map_f(*args):
        return mapped(args)

    return shard_map_f


class _ShardMapped:
    def __init__(self, f, mesh, in_specs, out_specs, manual, check):
        self.f = f
        self.mesh = mesh
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.manual = manual
        self.check = check
        # Eager calls: the traced jaxpr, output tree and specs, and the runner, by
        # argument signature (under a transformation the function may close over tracers).
        self.cache: dict = {}

    def __call__(self, args: tuple) -> Any:
        mesh, manual = self.mesh, self.manual
        leaves, in_tree = tree_flatten(args)
        if self.in_specs is None:
            specs = [_spec_of(x, mesh) for x in leaves]
        else:
            specs = _flatten_axes("shard_map in_specs", args, self.in_specs)
        specs = [PartitionSpec() if s is None else s for s in specs]
        blocks = []
        for i, (x, s) in enumerate(zip(leaves, specs)):
            x = x if isinstance(x, (Array, core.Tracer)) else _to_array(x)
            _check_divisible(mesh, self.f, i, x, s)
            blocks.append(_to_blocks(x, s, mesh, manual))
        sizes = [mesh.shape[a] for a in manual]
        block_avals = [_block_aval(b, s, manual) for b, s in zip(blocks, specs)]
        in_mapped = [[a in s.mesh_axes() for a in manual] for s in specs]
        eager = core.current_trace() is core.EVAL_TRACE and not any(
            isinstance(x, core.Tracer) for x in leaves)
        key = (in_tree, tuple(block_avals), tuple(specs))
        entry = self.cache.get(key) if eager else None
        if entry is None:
            entry = self._stage(in_tree, block_avals, specs, in_mapped, sizes, eager)
            if eager:
                self.cache[key] = entry
        out_tree, out_specs, run = entry
        outs = run(blocks)
        results = [_from_blocks(o, s, mesh, manual) for o, s in zip(outs, out_specs)]
        if eager:
            results = [put_sharded(r, NamedSharding(mesh, s)) if len(s) <= r.ndim else r
                       for r, s in zip(results, out_specs)]
        return tree_unflatten(out_tree, results)

    def _stage(self, in_tree, block_avals: list, specs: list, in_mapped: list, sizes: list,
               eager: bool) -> tuple:
        """The output tree and specs and the runner of the blocks, after the checks."""
        mesh, manual = self.mesh, self.manual
        out_store: list = []

        def body(*block_leaves):
            out = self.f(*tree_unflatten(in_tree, list(block_leaves)))
            out_leaves, out_tree = tree_flatten(out)
            out_store.append((out_tree, out))
            return out_leaves

        closed = self._trace(body, block_avals)
        core.check_single_device_effects(closed.jaxpr, mesh.size)
        out_tree, out_example = out_store[0]
        out_specs = _flatten_axes("shard_map out_specs", out_example, self.out_specs)
        out_specs = [PartitionSpec() if s is None else s for s in out_specs]
        if self.check:
            _check_replication(closed, specs, out_specs, manual, mesh, self.f)
        if eager and sum(n > 1 for n in sizes) == 1:
            run = _on_devices(closed, in_mapped, manual, sizes, mesh, out_specs)
        else:
            def run(blocks):
                return self._run(closed, blocks, in_mapped, sizes)
        return out_tree, out_specs, run

    def _trace(self, body: Callable, avals: list) -> core.ClosedJaxpr:
        info = errors.DebugInfo("shard_map", self.f, [f"args[{i}]" for i in range(len(avals))])
        envs = [batching.extend_axis_env(batching.AxisData(a, self.mesh.shape[a]))
                for a in self.manual]
        for e in envs:
            e.__enter__()
        try:
            return pe.trace_to_jaxpr(body, avals, info)
        finally:
            for e in reversed(envs):
                e.__exit__(None, None, None)

    def _run(self, closed: core.ClosedJaxpr, blocks: list, in_mapped: list,
             sizes: list) -> list:
        """The outputs with one leading axis per manual mesh axis (in mesh order)."""
        manual = self.manual

        def fn(*xs):
            return core.eval_jaxpr(closed.jaxpr, closed.consts, *xs)

        # Inputs carry their split axes in front, only for the axes they are split along,
        # so the vmap of each level takes axis 0 of the inputs split along its mesh axis.
        for level in reversed(range(len(manual))):
            in_axes = tuple(0 if m[level] else None for m in in_mapped)
            fn = vmap(fn, in_axes=in_axes, out_axes=0, axis_name=manual[level],
                      axis_size=sizes[level])
        return fn(*blocks)


def _spec_of(x: Any, mesh: Mesh) -> PartitionSpec:
    sharding = getattr(x, "sharding", None) if type(x) is Array else None
    if isinstance(sharding, NamedSharding) and sharding.mesh == mesh:
        return sharding.spec
    return PartitionSpec()


def _on_devices(closed: core.ClosedJaxpr, in_mapped: list, manual: tuple, sizes: list,
                mesh: Mesh, out_specs: list) -> Callable:
    """A runner that maps the one mesh axis longer than 1 with ``pmap`` over its devices
    (one instance per device, concurrently) and the others (of size 1) with named vmaps;
    its outputs have one leading axis per manual mesh axis, as ``_run``'s.

    When the axis spans several processes (``jax.distributed``), every process holds the
    whole arguments (``make_array_from_process_local_data`` gathers them) and runs the
    blocks of its own devices; the collectives go over MPI, and the blocks of outputs split
    along the axis are all-gathered so that every process holds the whole results."""
    big = next(i for i, n in enumerate(sizes) if n > 1)

    def fn(*xs):
        return core.eval_jaxpr(closed.jaxpr, closed.consts, *xs)

    for level in reversed(range(len(manual))):
        if level != big:
            fn = vmap(fn, in_axes=None, out_axes=0, axis_name=manual[level], axis_size=1)
    devs = list(np.moveaxis(mesh.devices, mesh.axis_names.index(manual[big]), 0).reshape(
        sizes[big], -1)[:, 0])
    in_axes = tuple(0 if m[big] else None for m in in_mapped)
    me = distributed.state.process_id
    mine = [k for k, d in enumerate(devs) if d.process_index == me]
    across = len(mine) < len(devs)
    mapped = pmap(fn, axis_name=manual[big], in_axes=in_axes, devices=devs,
                  axis_size=len(mine))
    gathered = [across and manual[big] in s.mesh_axes() for s in out_specs]

    def run(blocks: list) -> list:
        xs = []
        for b, m in zip(blocks, in_mapped):
            levels = [lv for lv in range(len(manual)) if m[lv]]
            if any(lv != big for lv in levels):  # drop the size-1 split axes
                b = b[tuple(slice(None) if lv == big else 0 for lv in levels)]
            if across and m[big]:
                b = b[mine[0]:mine[-1] + 1]
            xs.append(b)
        outs = [gather_processes(o) if g else o for o, g in zip(mapped(*xs), gathered)]
        return [o if big == 0 else batching.moveaxis(o, 0, big) for o in outs]

    return run


def gather_processes(a: Array) -> Array:
    """A pmap result over this process's devices stacked with every other process's."""
    handles = (a._shards.handles if a._shards is not None
               else _split_handle(a._h, 0, a.shape[0]))
    whole = _gather_handles(handles)
    out = _wrap(whole, a.weak_type, a.dtype)
    out._committed = True
    return out


def _block_aval(b: Any, spec: PartitionSpec, manual: tuple) -> core.ShapedArray:
    aval = core.get_aval(b)
    k = sum(a in spec.mesh_axes() for a in manual)
    return core.ShapedArray(aval.shape[k:], aval.dtype, aval.weak_type)


def _to_blocks(x: Any, spec: PartitionSpec, mesh: Mesh, manual: tuple) -> Any:
    """``x`` reshaped so that each manual mesh axis it is split along is a leading axis
    (in mesh order), followed by the block."""
    shape = list(np.shape(x))
    new_shape: list[int] = []
    axis_pos: dict = {}
    for d, n in enumerate(shape):
        names = [a for a in spec.axes_of(d) if a in manual]
        for a in names:
            axis_pos[a] = len(new_shape)
            new_shape.append(mesh.shape[a])
        new_shape.append(n // math.prod(mesh.shape[a] for a in names))
    if not axis_pos:
        return x
    y = shape_ops.reshape(x, tuple(new_shape))
    front = [axis_pos[a] for a in manual if a in axis_pos]
    perm = tuple(front + [i for i in range(len(new_shape)) if i not in front])
    return y if perm == tuple(range(len(perm))) else shape_ops.transpose(y, perm)


def _from_blocks(y: Any, spec: PartitionSpec, mesh: Mesh, manual: tuple) -> Any:
    """The inverse of ``_to_blocks`` for an output with a leading axis per manual mesh axis:
    axes the spec leaves out are replicated (index 0 is taken)."""
    k = len(manual)
    used = [a for a in manual if a in spec.mesh_axes()]
    unused = [i for i, a in enumerate(manual) if a not in used]
    if unused:
        index = tuple(0 if i in unused else slice(None) for i in range(k))
        y = y[index]
    block = list(np.shape(y))[len(used):]
    # Bring each output dim's mesh axes (in spec order) right before that dim.
    order: list[int] = []
    shape: list[int] = []
    for d, n in enumerate(block):
        for a in spec.axes_of(d):
            if a in used:
                order.append(used.index(a))
        order.append(len(used) + d)
        shape.append(n * math.prod(mesh.shape[a] for a in spec.axes_of(d) if a in used))
    if not used:
        return y
    if order != list(range(len(order))):
        y = shape_ops.transpose(y, tuple(order))
    return shape_ops.reshape(y, tuple(shape))


def _check_divisible_message(i: int, x: Any, spec: PartitionSpec, mesh: Mesh, f: Callable,
                             d: int, names: tuple) -> str:
    aval = core.get_aval(x)
    size = math.prod(mesh.shape[a] for a in names)
    axes = (f"mesh axis {names[0]!r} (of size {size})" if len(names) == 1 else
            f"mesh axes {names} (of total size {size})")
    name, bound = _arg_binding(f, i)
    shape = f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"
    return (f"shard_map applied to the function '{name}' was given argument arrays with axis "
            "sizes that are not evenly divisible by the corresponding mesh axis sizes:\n\n"
            f"The mesh given has shape {mesh.axis_sizes} with corresponding axis names "
            f"{mesh.axis_names}.\n\n"
            f"the passed args[{i}] of shape {shape}{bound}, corresponds to in_specs of "
            f"value {spec}, which maps array axis {d} (of size {aval.shape[d]}) to {axes}, but "
            f"{size} does not evenly divide {aval.shape[d]}\n\n"
            "Array arguments' axis sizes must be evenly divisible by the mesh axis or axes "
            "indicated by the corresponding elements of the argument's in_specs entry. "
            "Consider checking that in_specs are correct, and if so consider changing the mesh "
            f"axis sizes or else padding the input and adapting '{name}' appropriately.")


def _arg_binding(f: Callable, i: int) -> tuple[str, str]:
    """The function's name, and the clause naming the parameter that args[i] binds to."""
    name = getattr(f, "__name__", "fun")
    try:
        params = list(inspect.signature(f).parameters)
        return name, f", where args[{i}] is bound to {name}'s parameter '{params[i]}'"
    except (TypeError, ValueError, IndexError):
        return name, ""


def _check_divisible(mesh: Mesh, f: Callable, i: int, x: Any, spec: PartitionSpec) -> None:
    shape = np.shape(x)
    for a in spec.mesh_axes():
        if a not in mesh.axis_names:
            raise ValueError("shard_map in_specs argument must refer to an axis marked as "
                             f"manual ({frozenset(mesh.axis_names)}), but:\n\n  in_specs "
                             f"refers to {a!r}\n\nCheck the in_specs values passed to "
                             "shard_map.")
    if len(spec) > len(shape):
        name, bound = _arg_binding(f, i)
        aval = core.get_aval(x)
        raise ValueError(
            f"shard_map applied to the function '{name}' was given an in_specs entry which is "
            "too long to be compatible with the corresponding input value from the "
            f"function:\n\nin_specs is {spec} which has length {len(spec)}, but the passed "
            f"args[{i}]{bound}, has shape {aval.str_short()}, which has rank {len(shape)} "
            f"(and {len(shape)} < {len(spec)})\n\nEntries in in_specs must be of length no "
            "greater than the number of axes in the corresponding input value.\n\nEither "
            f"revise the spec to be shorter, or modify '{name}' so that its inputs have "
            "sufficient rank.")
    for d in range(len(shape)):
        names = spec.axes_of(d)
        if names and shape[d] % math.prod(mesh.shape[a] for a in names):
            raise ValueError(_check_divisible_message(i, x, spec, mesh, f, d, names))


def _varying(closed: core.ClosedJaxpr, in_specs: list, axis: Hashable) -> tuple[set, list]:
    """The outputs of ``closed`` whose value may differ along mesh ``axis``, and its
    outvars (after inlining calls)."""
    eqns, outvars = _inline_calls(closed.jaxpr, {})
    varying = {v for v, s in zip(closed.jaxpr.invars, in_specs) if axis in s.mesh_axes()}
    for e in eqns:
        names = parallel._names(e.params.get("axes", e.params.get("axis_name", ())))
        if e.primitive in _REPLICATING and axis in names:
            continue
        if (e.primitive in parallel.collective_routes and axis in names) or any(
                type(x) is not core.Literal and x in varying for x in e.invars):
            varying.update(e.outvars)
    return {v for v in outvars if type(v) is not core.Literal and v in varying}, outvars


def _check_replication(closed: core.ClosedJaxpr, in_specs: list, out_specs: list,
                       manual: tuple, mesh: Mesh, f: Callable) -> None:
    for axis in manual:
        varying, outvars = _varying(closed, in_specs, axis)
        for v, s in zip(outvars, out_specs):
            if axis not in s.mesh_axes() and type(v) is not core.Literal and v in varying:
                needed = sorted({a for a in manual if a not in s.mesh_axes()
                                 and v in _varying(closed, in_specs, a)[0]})
                have = "{" + ", ".join(a for a in manual if a in s.mesh_axes()) + "}"
                raise ValueError(
                    f"shard_map applied to the function '{getattr(f, '__name__', 'fun')}' was "
                    "given out_specs which require replication which can't be statically "
                    "inferred given the mesh:\n\n"
                    f"The mesh given has shape {mesh.axis_sizes} with corresponding axis names "
                    f"{mesh.axis_names}.\n\n"
                    f"out_specs is {s} which implies that the corresponding output value is "
                    f"only varying across mesh axes {have} and not "
                    f"{{{', '.join(needed)}}}, but it was inferred to be possibly varying over "
                    f"{{{', '.join(needed)}}}\n\n"
                    "Check if these output values are meant to be replicated over those mesh "
                    "axes. If not, consider revising the corresponding out_specs entries. If "
                    "so, consider disabling the check by passing the check_vma=False argument "
                    "to `jax.shard_map`.")
