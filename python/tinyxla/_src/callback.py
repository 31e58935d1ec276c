"""Host callbacks: ``pure_callback``, ``io_callback`` and the primitive under
``jax.debug`` (mirrors ``jax._src.callback`` and ``debug_callback_p`` of
``jax._src.debugging``).

Each primitive lowers to the C++ ``host_callback`` op: the graph calls back into Python on
the host, the device thread taking the GIL only for the call itself (see
``cpp/src/python/host_callback_bindings.cc``). The Python function sits behind a
``_core.HostCallable`` owned by the callback parameter of the equation, so it lives as
long as the jaxpr and every executable compiled from it. Eagerly a callback runs as a
one-node graph through the same op, and the call waits for it, so it happens in program
order as in JAX. The effectful primitives (``io_callback``, ``debug_callback``) are never
dropped from a jaxpr and keep their order in a graph; ``pure_callback`` may be dropped
when its results are unused, as in JAX.
"""
from __future__ import annotations

import logging
import traceback
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import core, dtypes, errors, tree_util
from tinyxla._src.array import _DTYPES, Array, _from_numpy, _to_array, _wrap
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.lax.control_flow.loops import map as lax_map, scan
from tinyxla._src.lax.shape_ops import broadcast_in_dim
from tinyxla._src.lax.slicing import dynamic_index_in_dim

logger = logging.getLogger(__name__)


class HostFunction:
    """A Python function of flat arguments, as the callback parameter of the primitives
    (JAX's ``_FlatCallback``): equal when the function and argument tree are, so equal
    calls key caches alike. ``fn(*flat_args)`` returns the flat results. With
    ``host_values`` the function gets numpy values (scalars when 0-d), not Arrays: for
    ``debug.print``, whose text is the same either way, this spares a wrapper per value."""

    __slots__ = ("fn", "in_tree", "what", "host_values", "_hosts", "_positional", "__weakref__")

    def __init__(self, fn: Callable[..., Any], in_tree: Any, what: str, host_values: bool = False):
        self.fn = fn
        self.in_tree = in_tree
        self.what = what  # for the log line: "jax.pure_callback"
        self.host_values = host_values
        self._hosts: dict[tuple, Any] = {}
        # The arguments are the flat leaves themselves (the per-call fast path).
        self._positional = in_tree == _positional_tree(in_tree.num_leaves)

    def __call__(self, *flat_args: Any) -> list[Any]:
        if self._positional:
            out = self.fn(*flat_args)
        else:
            args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
            out = self.fn(*args, **kwargs)
        if out is None or (type(out) is tuple and not out):
            return []
        return tree_util.tree_leaves(out)

    def _key(self) -> tuple:
        return (self.fn, self.in_tree, self.what, self.host_values)

    def __eq__(self, other):
        return type(other) is HostFunction and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return getattr(self.fn, "__name__", repr(self.fn))

    __name__ = property(__repr__)

    def host_callable(self, in_avals: Sequence[core.ShapedArray],
                      out_avals: Sequence[core.ShapedArray]) -> Any:
        """The ``_core.HostCallable`` that runs this function on arguments of ``in_avals``
        (made once per signature, kept as long as this object)."""
        key = (tuple(in_avals), tuple(out_avals))
        host = self._hosts.get(key)
        if host is None:
            host_dtypes = [a.dtype for a in key[0]] if self.host_values else None
            host = self._hosts[key] = _core.HostCallable(_host_entry(self, key[0], key[1]),
                                                         host_dtypes)
        return host


def _positional_tree(n: int) -> Any:
    """The tree of ``(args, kwargs)`` for ``n`` positional leaves and no keywords."""
    return tree_util.tree_structure((tuple(range(n)), {}))


def _host_entry(fn: HostFunction, in_avals: tuple, out_avals: tuple) -> Callable[..., list]:
    """What the device thread calls: one ``_core.Array`` handle (or host value, for
    ``fn.host_values``) per argument in, host arrays of the result types out; a failure
    becomes JAX's ``CpuCallback error`` text."""
    if fn.host_values and fn._positional and not out_avals:
        target = fn.fn

        def call_on_values(*values: Any) -> None:  # debug.print's path: no layer to spare
            try:
                target(*values)
            except BaseException:
                _raise_callback_error(fn)
        return call_on_values

    def call(*handles: Any) -> list:
        try:
            # Strong arrays, as JAX's callbacks get (its arguments are device_put).
            outs = fn(*(handles if fn.host_values else
                        [_wrap(h, False, _DTYPES[h.dtype_code]) for h in handles]))
            return outs if not outs and not out_avals else host_results(outs, out_avals)
        except BaseException:
            _raise_callback_error(fn)
    return call


def _raise_callback_error(fn: HostFunction) -> None:
    """Logs the exception being handled and raises JAX's text for it (as its CPU runtime)."""
    logger.exception("%s failed", fn.what)
    raise RuntimeError(f"CpuCallback error calling callback: {traceback.format_exc()}") from None


def host_results(outs: Sequence[Any], out_avals: Sequence[core.ShapedArray]) -> list[np.ndarray]:
    """The callback's results as C-contiguous host arrays, checked against the declared
    avals with JAX's messages (Python scalars and 64-bit values canonicalised first)."""
    if len(outs) != len(out_avals):
        raise RuntimeError("Mismatched number of outputs from callback. "
                           f"Expected: {len(out_avals)}, Actual: {len(outs)}")
    host = []
    for i, (x, aval) in enumerate(zip(outs, out_avals)):
        x = np.asarray(x)
        dt = dtypes.canonicalize_dtype(x.dtype)
        if dt != x.dtype:
            x = x.astype(dt)
        if x.shape != aval.shape:
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {aval.shape}, Actual: {x.shape}")
        if x.dtype != aval.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {aval.dtype}, Actual: {x.dtype}")
        host.append(np.ascontiguousarray(x))
    return host


def _op_attrs(host: Any, out_avals: Sequence[core.ShapedArray]) -> dict:
    return {"callback": host.id,
            "result_dtypes": [lowering.code(a.dtype) for a in out_avals],
            "result_ranks": [len(a.shape) for a in out_avals],
            "result_dims": [d for a in out_avals for d in a.shape]}


def _lower_host_call(ctx: lowering.LoweringContext, *args: int, callback: HostFunction,
                     result_avals: Sequence[core.ShapedArray] = (), **_: Any) -> list[int]:
    host = callback.host_callable(ctx.avals_in, result_avals)
    return ctx.builder.op("host_callback", _op_attrs(host, result_avals), list(args))[:-1]


def _run_host_call(args: Sequence[Any], callback: HostFunction,
                   result_avals: Sequence[core.ShapedArray]) -> list[Array]:
    """The eager impl: the callback as a one-node graph, waited for. Inside another
    callback (whose device task is running) the op runs at once on this thread."""
    arrays = [_to_array(x) for x in args]
    in_avals = [core.get_aval(a) for a in arrays]
    host = callback.host_callable(in_avals, result_avals)
    op = _core.make_op("host_callback", _op_attrs(host, result_avals))
    device = next((a._h.device for a in arrays if a._committed), 0)
    outs = op.run([a._h for a in arrays], device)
    try:
        outs[-1].wait()
    except RuntimeError as e:
        raise errors.JaxRuntimeError(str(e)) from None
    return [_wrap(h, False, a.dtype) for h, a in zip(outs[:-1], result_avals)]


def _result_avals(result_shape_dtypes: Any) -> tuple[list[core.ShapedArray], Any]:
    def check(x):
        dt = np.dtype(x.dtype)
        if dtypes.canonicalize_dtype(dt) != dt:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        return core.ShapedArray(tuple(x.shape), dt)
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    return [check(x) for x in leaves], tree


def _moved_to_front(args: Sequence[Any], dims: Sequence[int | None]) -> list[Any]:
    return [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]


def _split_batched(args: list, dims: Sequence[int | None]) -> tuple[list, list, Callable]:
    """(unbatched, batched, merge) where ``merge(batched)`` rebuilds the operand list."""
    batched_at = [d is not None for d in dims]
    unbatched = [x for x, b in zip(args, batched_at) if not b]
    batched = [x for x, b in zip(args, batched_at) if b]

    def merge(bs):
        u, b = iter(unbatched), iter(bs)
        return [next(b) if is_b else next(u) for is_b in batched_at]
    return unbatched, batched, merge


# ---------------------------------------------------------------------------------------
# pure_callback

pure_callback_p = core.Primitive("pure_callback")
pure_callback_p.multiple_results = True


@pure_callback_p.def_impl
def _pure_callback_impl(*args, callback, result_avals, sharding, vmap_method):
    return _run_host_call(args, callback, result_avals)


@pure_callback_p.def_abstract_eval
def _pure_callback_abstract_eval(*avals, callback, result_avals, sharding, vmap_method):
    return list(result_avals)


def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. "
                     "Please use `jax.custom_jvp` to use callbacks while taking gradients.")


def _pure_callback_transpose(ct, *args, **params):
    raise ValueError("Pure callbacks do not support transpose. "
                     "Please use `jax.custom_vjp` to use callbacks while taking gradients.")


def _pure_callback_batch(args, dims, *, vmap_method, result_avals, **params):
    """JAX's ``ffi_batching_rule``: how the callback sees the batch axis is the caller's
    choice (``vmap_method``)."""
    size = next(batching.shape_of(x)[d] for x, d in zip(args, dims) if d is not None)
    args = _moved_to_front(args, dims)
    batched_avals = tuple(a.update(shape=(size, *a.shape)) for a in result_avals)
    if vmap_method == "legacy_vectorized":
        outs = pure_callback_p.bind(*args, vmap_method=vmap_method,
                                    result_avals=batched_avals, **params)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        n = size if vmap_method == "broadcast_all" else 1
        args = [x if d is not None else broadcast_in_dim(
                    x, (n, *batching.shape_of(x)), tuple(range(1, 1 + batching.ndim_of(x))))
                for x, d in zip(args, dims)]
        outs = pure_callback_p.bind(*args, vmap_method=vmap_method,
                                    result_avals=batched_avals, **params)
    elif vmap_method in ("sequential", "sequential_unrolled"):
        _, batched, merge = _split_batched(args, dims)

        def one(carry, xs):
            return carry, pure_callback_p.bind(*merge(xs), vmap_method=vmap_method,
                                               result_avals=result_avals, **params)
        _, outs = scan(one, (), batched, unroll=vmap_method == "sequential_unrolled")
    else:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
    return list(outs), [0] * len(outs)


ad.primitive_jvps[pure_callback_p] = _pure_callback_jvp
ad.primitive_transposes[pure_callback_p] = _pure_callback_transpose
batching.primitive_batchers[pure_callback_p] = _pure_callback_batch
lowering.register_lowering(pure_callback_p, _lower_host_call)

_VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None]


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Calls a pure Python function on the host (``jax.pure_callback``): the callback gets
    tinyxla Arrays and returns arrays matching ``result_shape_dtypes`` (a pytree of
    objects with ``shape`` and ``dtype``). Works eagerly and under jit, vmap (as
    ``vmap_method`` says; without one vmap raises JAX's NotImplementedError), pmap and
    the control-flow primitives; JVP raises JAX's error (use ``custom_jvp``). As in JAX
    0.10.2 there is no ``vectorized=`` argument: extra keywords go to the callback.
    ``sharding`` is accepted and ignored (the callback runs on the host once per device
    program)."""
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = pure_callback_p.bind(*flat_args, callback=HostFunction(callback, in_tree, "jax.pure_callback"),
                                result_avals=tuple(result_avals), sharding=sharding,
                                vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------------------
# io_callback

io_callback_p = core.Primitive("io_callback")
io_callback_p.multiple_results = True
core.effectful_primitives.add(io_callback_p)


@io_callback_p.def_impl
def _io_callback_impl(*args, callback, result_avals, sharding, ordered):
    return _run_host_call(args, callback, result_avals)


@io_callback_p.def_abstract_eval
def _io_callback_abstract_eval(*avals, callback, result_avals, sharding, ordered):
    return list(result_avals)


def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_transpose(ct, *args, **params):
    raise ValueError("IO callbacks do not support transpose.")


def _io_callback_batch(args, dims, *, callback, result_avals, sharding, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    _, batched, merge = _split_batched(_moved_to_front(args, dims), dims)
    outs = lax_map(lambda xs: io_callback_p.bind(*merge(xs), callback=callback, sharding=sharding,
                                                 result_avals=result_avals, ordered=False),
                   batched)
    return list(outs), [0] * len(outs)


ad.primitive_jvps[io_callback_p] = _io_callback_jvp
ad.primitive_transposes[io_callback_p] = _io_callback_transpose
batching.primitive_batchers[io_callback_p] = _io_callback_batch
lowering.register_lowering(io_callback_p, _lower_host_call)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Calls an impure Python function on the host (``jax.experimental.io_callback``).
    Never dropped; ``ordered=True`` calls run in program order (tinyxla runs every host
    call of a device in order) and cannot be vmapped, as in JAX."""
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = io_callback_p.bind(*flat_args, callback=HostFunction(callback, in_tree, "jax.io_callback"),
                              result_avals=tuple(result_avals), sharding=sharding,
                              ordered=ordered)
    return tree_util.tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------------------
# debug_callback: the primitive of jax.debug.callback, print and breakpoint.

debug_callback_p = core.Primitive("debug_callback")
debug_callback_p.multiple_results = True
core.effectful_primitives.add(debug_callback_p)


class OrderedDebugEffect:
    """The effect of an ``ordered=True`` debug callback (JAX's ``OrderedDebugEffect``): as
    in JAX, a computation over more than one device (pmap, shard_map, sharded jit) that
    holds one is refused with a ValueError naming it."""


ordered_debug_effect = OrderedDebugEffect()
core.ordered_effect_rules[debug_callback_p] = (
    lambda params: ordered_debug_effect if params["ordered"] else None)


@debug_callback_p.def_impl
def _debug_callback_impl(*args, callback, ordered, partitioned):
    return _run_host_call(args, callback, ())


@debug_callback_p.def_abstract_eval
def _debug_callback_abstract_eval(*avals, callback, ordered, partitioned):
    return []


def _debug_callback_jvp(primals, tangents, **params):
    return debug_callback_p.bind(*primals, **params), []


def _debug_callback_transpose(ct, *args, **params):
    return [None] * len(args)


def _debug_callback_batch(args, dims, **params):
    """One call per batch member, in order (JAX unrolls the batch axis the same way)."""
    size = next(batching.shape_of(x)[d] for x, d in zip(args, dims) if d is not None)
    for i in range(size):
        debug_callback_p.bind(*[x if d is None else dynamic_index_in_dim(x, i, d, keepdims=False)
                                for x, d in zip(args, dims)], **params)
    return [], []


ad.primitive_jvps[debug_callback_p] = _debug_callback_jvp
ad.primitive_transposes[debug_callback_p] = _debug_callback_transpose
batching.primitive_batchers[debug_callback_p] = _debug_callback_batch
lowering.register_lowering(debug_callback_p, _lower_host_call)


def bind_debug_callback(fn: Callable[..., Any], in_tree: Any, dyn_args: Sequence[Any],
                        static_args: dict[int, Any], ordered: bool, partitioned: bool,
                        what: str = "jax.debug.callback", host_values: bool = False) -> None:
    """Binds ``debug_callback`` calling ``fn(*args, **kwargs)``, the arguments being the
    tree ``in_tree`` of the array leaves ``dyn_args`` (as numpy values with
    ``host_values``, else Arrays) and the other leaves ``static_args`` (by position)."""
    flat = _positional_tree(len(dyn_args))
    # Arguments that are all arrays, passed positionally, reach ``fn`` as they are.
    call = fn if not static_args and in_tree == flat else _StaticMerged(fn, in_tree, static_args)
    debug_callback_p.bind(*dyn_args, callback=HostFunction(call, flat, what, host_values),
        ordered=ordered, partitioned=partitioned)


class _StaticMerged:
    """``fn`` called with the tree ``in_tree`` of its dynamic leaves and its static ones
    (by position); equal when ``fn``, the tree and the static leaves are."""

    __slots__ = ("fn", "in_tree", "static", "_positional")

    def __init__(self, fn: Callable[..., Any], in_tree: Any, static: dict[int, Any]):
        self.fn = fn
        self.in_tree = in_tree
        self.static = tuple(sorted(static.items()))
        self._positional = not static and in_tree == _positional_tree(in_tree.num_leaves)

    def __call__(self, *dyn: Any) -> tuple:
        if self._positional:
            self.fn(*dyn)
            return ()
        leaves, it, static = [], iter(dyn), dict(self.static)
        for i in range(len(dyn) + len(static)):
            leaves.append(static[i] if i in static else next(it))
        args, kwargs = tree_util.tree_unflatten(self.in_tree, leaves)
        self.fn(*args, **kwargs)
        return ()

    def __eq__(self, other):
        return (type(other) is _StaticMerged and self.fn == other.fn
                and self.in_tree == other.in_tree and self.static == other.static)

    def __hash__(self):
        try:
            return hash((self.fn, self.in_tree, self.static))
        except TypeError:  # an unhashable static leaf: equal only to itself
            return id(self)

    @property
    def __name__(self):
        return getattr(self.fn, "__name__", repr(self.fn))


def effects_barrier() -> None:
    """Waits until every host callback dispatched so far has run (``jax.effects_barrier``)."""
    for d in range(_core.num_devices()):
        _core.synchronize(d)
