"""``pmap``: one instance of a staged function per device, run concurrently (``jax.pmap``).

The user API beside ``vmap`` and ``grad``: the argument handling, the cache of plans by
argument signature and the tracing of the per-device jaxpr. How a plan runs on the
devices, and the ``xla_pmap`` primitive a pmap under a transformation becomes, are in
``interpreters/pmap.py``.
"""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from tinyxla._src import core, devices as devices_mod, distributed, errors
from tinyxla._src.api import _lift_tracer_consts
from tinyxla._src.array import Array, _to_array
from tinyxla._src.config import config
from tinyxla._src.interpreters import batching, pmap_mpi
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters.pmap import (
    _check_replicated, _own_shards, _per_device_aval, _plan, pmap_p)
from tinyxla._src.tree_util import tree_flatten, tree_unflatten
from tinyxla._src.vmap import _flat_tree, _flatten_axes, vmap


def pmap(fun: Callable, axis_name: Hashable | None = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: int | Sequence[int] = (),
         devices: Sequence[Any] | None = None, backend: str | None = None,
         axis_size: int | None = None, donate_argnums: int | Sequence[int] = (),
         global_arg_shapes: Any = None) -> Callable:
    """Maps ``fun`` over the leading axis of its arguments, one device per index
    (``jax.pmap``); collectives over ``axis_name`` communicate between the devices."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    devices_mod._check_backend(backend)
    if isinstance(static_broadcasted_argnums, int):
        static_broadcasted_argnums = (static_broadcasted_argnums,)
    mapped = _Pmapped(fun, axis_name, in_axes, out_axes, tuple(static_broadcasted_argnums),
                      None if devices is None else list(devices), axis_size)

    @functools.wraps(fun)
    def pmap_f(*args, **kwargs):
        return mapped(args, kwargs)

    pmap_f._pmapped = mapped  # type: ignore[attr-defined]
    return pmap_f


class _Tracing(threading.local):
    depth = 0  # pmap bodies being traced on this thread


_tracing = _Tracing()


class _Pmapped:
    """The state of one ``pmap(fun, ...)``: its cache of plans by argument signature."""

    def __init__(self, fun, axis_name, in_axes, out_axes, static_argnums, devices, axis_size):
        self.fun = fun
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.static_argnums = static_argnums
        self.devices = devices
        self.axis_size = axis_size
        self.plans: dict[Any, Any] = {}
        self.in_axes_flat: dict[Any, tuple] = {}

    def _split_static(self, args: tuple) -> tuple[tuple, dict, Any]:
        if not self.static_argnums:
            return args, {}, self.in_axes
        n = len(args)
        static = {i % n: args[i % n] for i in self.static_argnums if -n <= i < n}
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        in_axes = self.in_axes
        if isinstance(in_axes, tuple) and len(in_axes) == n:
            in_axes = tuple(a for i, a in enumerate(in_axes) if i not in static)
        return dyn, static, in_axes

    def _with_static(self, static: dict) -> Callable:
        fun = self.fun
        if not static:
            return fun

        def call(*dyn, **kwargs):
            args = list(dyn)
            for i in sorted(static):
                args.insert(i, static[i])
            return fun(*args, **kwargs)
        return call

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        if not kwargs and not self.static_argnums and all(type(a) is Array for a in args):
            dyn, static, in_axes = args, {}, self.in_axes  # the common case, quickly
            leaves, in_tree = list(args), _flat_tree(len(args))
        else:
            dyn, static, in_axes = self._split_static(args)
            leaves, in_tree = tree_flatten((dyn, kwargs))
        axes = self.in_axes_flat.get(in_tree)
        if axes is None:
            if isinstance(in_axes, tuple) and len(in_axes) != len(dyn):
                raise ValueError("pmap in_axes must be an int, None, or a tuple of entries "
                                 "corresponding to the positional arguments passed to the "
                                 f"function, but got len(in_axes)={len(in_axes)}, "
                                 f"len(args)={len(dyn)}")
            axes = self.in_axes_flat[in_tree] = tuple(
                _flatten_axes("pmap in_axes", (dyn, kwargs), (in_axes, 0), kws=True))
        static_key = (tuple(sorted((i, _static_key(v, i, self.fun)) for i, v in static.items()))
                      if static else ())
        if core.current_trace() is not core.EVAL_TRACE or any(
                isinstance(x, core.Tracer) for x in leaves):
            if _tracing.depth:
                # Inside another pmap's body: the same values as a named vmap, so that
                # the collectives over both axes reach the outer pmap's plan.
                return vmap(self._with_static(static), in_axes, self.out_axes,
                            axis_name=self.axis_name, axis_size=self.axis_size)(*dyn, **kwargs)
            return self._bind(leaves, in_tree, axes, static, static_key)
        arrays = [x if type(x) is Array else _to_array(x) for x in leaves]
        sig = []
        for a, ax in zip(arrays, axes):
            sharded = a._shards
            if sharded is None:
                sig.append((a._h.shape, a.dtype, a.weak_type, ax))
            else:
                sig.append((sharded.key, a.dtype, a.weak_type, ax))
        key = (in_tree, tuple(sig), static_key, config.jax_enable_x64)
        entry = self.plans.get(key)
        if entry is None:
            size = _mapped_size(self.fun, in_tree, leaves, axes, self.axis_size)
            devs = self._devices(size)
            avals = []
            for a, ax in zip(arrays, axes):
                shards = _own_shards(a, ax, devs)
                if shards is not None:
                    avals.append(core.ShapedArray(shards[0].shape, a.dtype, a.weak_type))
                else:
                    avals.append(_per_device_aval(a.aval, ax))
            closed, out_tree, out_axes = self._trace(static, in_tree, avals, axes, size)
            entry = self.plans[key] = (_plan(closed, axes, out_axes, size, tuple(devs),
                                             self._across_processes()), out_tree)
        plan, out_tree = entry
        return tree_unflatten(out_tree, plan.run(arrays))

    def _bind(self, leaves: list, in_tree, axes: tuple, static: dict, static_key) -> Any:
        """Under a transformation: one ``xla_pmap`` equation (or its rules) for the call."""
        size = _mapped_size(self.fun, in_tree, leaves, axes, self.axis_size)
        devs = self._devices(size)
        avals = [_per_device_aval(core.get_aval(x), ax) for x, ax in zip(leaves, axes)]
        key = (in_tree, tuple(avals), axes, static_key, config.jax_enable_x64, "traced")
        entry = self.plans.get(key)
        if entry is None:
            entry = self._trace(static, in_tree, avals, axes, size)
        closed, out_tree, out_axes = entry
        # Values of enclosing transformations the function closed over become leading,
        # unmapped arguments, so those transformations see them (as jit does).
        closed, lifted = _lift_tracer_consts(closed)
        if lifted:
            leaves, axes = [*lifted, *leaves], (None,) * len(lifted) + axes
        else:
            self.plans[key] = entry
        outs = pmap_p.bind(*leaves, call_jaxpr=closed, axis_name=self.axis_name,
                           axis_size=size, in_axes=axes, out_axes=out_axes,
                           devices=tuple(devs), name=getattr(self.fun, "__name__", "fun"))
        return tree_unflatten(out_tree, outs)

    def _trace(self, static: dict, in_tree, avals: list, axes: tuple, size: int):
        """The per-device jaxpr of the function at ``avals``, its output tree and flat
        out_axes; rejects out_axes=None on outputs that vary over the devices, and ordered
        effects over more than one device (as JAX)."""
        fun = self._with_static(static)
        out_store: list = []

        def flat(*leaves):
            args, kw = tree_unflatten(in_tree, leaves)
            outs = fun(*args, **kw)
            out_leaves, out_tree = tree_flatten(outs)
            out_store.append((out_tree, outs))
            return out_leaves

        info = errors.DebugInfo("pmap", self.fun, [f"args[{i}]" for i in range(len(avals))])
        _tracing.depth += 1
        try:
            # Over the local devices of several processes, the axis spans all of them.
            procs = distributed.state.num_processes if self._across_processes() else 1
            with batching.extend_axis_env(batching.AxisData(self.axis_name, size * procs)):
                closed = pe.trace_to_jaxpr(flat, avals, info)
        finally:
            _tracing.depth -= 1
        out_tree, outs = out_store[0]
        out_axes = tuple(_flatten_axes("pmap out_axes", outs, self.out_axes))
        core.check_single_device_effects(closed.jaxpr, size * procs)
        _check_replicated(closed, axes, out_axes, self.axis_name)
        return closed, out_tree, out_axes

    def _across_processes(self) -> bool:
        """Whether the mapped axis spans several processes' devices: all of them (no
        ``devices``), or ``devices`` of other processes too (as JAX's pmap over global
        devices, whose arguments hold this process's share)."""
        if distributed.state.num_processes == 1:
            return False
        if self.devices is None:
            return True
        me = distributed.state.process_id
        if all(d.process_index == me for d in self.devices):
            return False
        _check_process_major(self.devices)
        return True

    def _devices(self, size: int) -> list[int]:
        if self.devices is not None:
            me = distributed.state.process_id
            local = [d for d in self.devices if getattr(d, "process_index", me) == me]
            if len(local) != size:
                raise ValueError(f"Leading axis size of input to pmapped function must equal "
                                 f"the number of local devices passed to pmap. Got axis_size="
                                 f"{size}, num_local_devices={len(local)}.")
            return [devices_mod._device_index(d) for d in local]
        available = devices_mod.local_device_count()
        if size > available:
            raise ValueError(f"compiling computation that requires {size} logical devices, "
                             f"but only {available} XLA devices are available "
                             f"(num_replicas={size})")
        return list(range(size))


def _check_process_major(devices: Sequence[Any]) -> None:
    """A pmap over several processes' devices needs every process's devices, as many of
    each, process by process (the collectives index them as process * count + local)."""
    if not pmap_mpi.in_process_order(list(devices)):
        raise NotImplementedError(
            "pmap over the devices of several processes needs every process's devices, as "
            "many of each and in process order (the order of jax.devices()); got the "
            f"processes {[d.process_index for d in devices]}")


def _static_key(v: Any, index: int, fun: Callable) -> Any:
    try:
        hash(v)
    except TypeError:
        raise ValueError("Non-hashable static arguments are not supported, as this can lead to "
                         f"unexpected cache-misses. Static argument (index {index}) of type "
                         f"{type(v)} for function {getattr(fun, '__name__', fun)} is "
                         "non-hashable.") from None
    return (type(v), v)


def _leaf_array(x: Any) -> Array:
    if type(x) is Array:
        return x
    return _to_array(x)


def _mapped_size(fun: Callable, in_tree, leaves: list, axes: tuple,
                 axis_size: int | None) -> int:
    sizes: list[int | None] = []
    rank_error = None
    for x, d in zip(leaves, axes):
        if d is None:
            sizes.append(None)
            continue
        sharded = getattr(x, "_shards", None) if type(x) is Array else None
        shape = ((len(sharded.devices), *sharded.handles[0].shape) if sharded is not None
                 else np.shape(x))
        if not -len(shape) <= d < len(shape):
            rank_error = rank_error or ValueError(
                f"pmap was requested to map its argument along axis {d}, which implies that "
                f"its rank should be at least {d + 1 if d >= 0 else -d}, but is only "
                f"{len(shape)} (its shape is {tuple(shape)})")
            if shape:
                raise rank_error
            continue  # only scalars mapped: JAX's "at least one argument" below
        sizes.append(shape[d])
    distinct = {s for s in sizes if s is not None}
    if distinct and rank_error is not None:
        raise rank_error
    if len(distinct) == 1:
        return distinct.pop()
    if not distinct:
        if axis_size is not None:
            return axis_size
        raise ValueError("pmap requires at least one argument with a mapped axis.")
    args, kwargs = tree_unflatten(in_tree, leaves)
    try:
        names = list(inspect.signature(fun).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        names = None
    lines = []
    for i, (x, d, s) in enumerate(zip(leaves, axes, sizes)):
        if s is None:
            continue
        name = names[i] if names is not None and i < len(names) else f"args[{i}]"
        aval = core.get_aval(x)
        lines.append(f"  * one axis had size {s}: axis {d} of argument {name} of type "
                     f"{aval.dtype.name}[{','.join(map(str, aval.shape))}];")
    raise ValueError("pmap got inconsistent sizes for array axes to be mapped:\n" +
                     "\n".join(lines))

