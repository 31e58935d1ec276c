"""The user-facing transforms make_jaxpr, jit and eval_shape, and device_put / device_get /
block_until_ready (mirrors ``jax._src.api``)."""
from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import (
    array, compile_log, core, debug_nans, devices, dtypes, errors, profiler, tree_util)
from tinyxla._src.config import config
from tinyxla._src.stages import ArgInfo, Lowered, Traced
from tinyxla._src.devices import PmapSharding, SingleDeviceSharding
from tinyxla._src import sharded_array, sharding as sharding_mod
from tinyxla._src.interpreters import ad
from tinyxla._src.interpreters import batching
from tinyxla._src.interpreters import caches
from tinyxla._src.interpreters import lowering
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.tree_util import tree_flatten, tree_unflatten

# The configs a traced function depends on (JAX's include_in_jit_key ones), as the salt
# of the cache keys; with jax_debug_nans/infs on (bit 6) calls skip the fast paths, whose
# entries then never match, and check their outputs.
_fast_salt = 0
_debug_checks = False
_RANK_PROMOTIONS = {"allow": 0, "warn": 1, "raise": 2}


def _refresh_fast_salt(name: str | None = None, value: Any = None) -> None:
    global _fast_salt, _debug_checks
    _debug_checks = debug_nans.enabled()
    _fast_salt = (int(config.jax_enable_x64) | int(config.jax_disable_jit) << 1
                  | int(config.jax_numpy_dtype_promotion == "strict") << 2
                  | _RANK_PROMOTIONS[config.jax_numpy_rank_promotion] << 3
                  | int(config.jax_threefry_partitionable) << 5 | int(_debug_checks) << 6)


_refresh_fast_salt()
config.add_update_hook(_refresh_fast_salt)

# Runs a jit call with arguments laid out over a mesh as SPMD (set by ``sharded_jit.py``,
# which builds on this module): ``sharded_call(jitted, args)``.
sharded_call: Callable[[Any, tuple], Any] | None = None


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (``jax.ShapeDtypeStruct``); the dtype is
    kept as given (not canonicalised), as in JAX. ``sharding`` is one of tinyxla's
    sharding objects; JAX's layout formats are not supported."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape: Sequence[int], dtype: Any, *, sharding: Any = None,
                 weak_type: bool = False):
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        if sharding is not None and not isinstance(sharding, _SHARDINGS):
            raise ValueError(
                "sharding should be an instance of `jax.sharding.Sharding`, "
                "`jax.sharding.PartitionSpec` or `jax.experimental.layout.Format`. Got "
                f"{sharding} of type {type(sharding)}.")
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def update(self, **kwargs: Any) -> "ShapeDtypeStruct":
        """A copy with the given fields replaced (``ShapeDtypeStruct.update``)."""
        fields = {"shape": self.shape, "dtype": self.dtype, "sharding": self.sharding,
                  "weak_type": self.weak_type, **kwargs}
        return ShapeDtypeStruct(fields.pop("shape"), fields.pop("dtype"), **fields)

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.sharding == other.sharding)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type, self.sharding))

    def __repr__(self):
        sharding = f", sharding={self.sharding}" if self.sharding is not None else ""
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak})"


_SHARDINGS = (SingleDeviceSharding, PmapSharding)


def typeof(x: Any) -> core.ShapedArray:
    """The abstract value of an array, tracer or scalar (``jax.typeof``); its ``str`` is
    JAX's ``float32[3]`` (``~`` marks a weak type)."""
    if isinstance(x, (list, tuple, dict)) or x is None:
        raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type")
    aval = _array_aval(x)
    if aval is None:
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
    return aval


def _array_aval(x: Any) -> core.ShapedArray | None:
    """The aval of a value that is an array to JAX; None for others (strings and objects
    get an aval from numpy, of a dtype JAX has not)."""
    try:
        aval = core.get_aval(x)
    except Exception:
        return None
    return aval if aval.dtype in dtypes._SUPPORTED_SET else None


def _leaf_aval(x: Any) -> core.ShapedArray:
    if isinstance(x, ShapeDtypeStruct):
        return core.ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type)
    aval = None if isinstance(x, (list, tuple, dict)) or x is None else _array_aval(x)
    if aval is None:
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type.")
    return aval


def _invalid_argument(fun: Callable, args, kwargs, static_argnums, leaves) -> TypeError:
    """JAX's error for a leaf that is not an array, naming its path."""
    names = _flat_arg_names(fun, args, kwargs, static_argnums, len(leaves))
    for name, x in zip(names, leaves):
        try:
            _leaf_aval(x)
        except TypeError:
            return TypeError(
                f"Error interpreting argument to {fun} as an abstract array. The "
                f"problematic value is of type {type(x)} and was passed to the function "
                f"at path {name}.\nThis typically means that a jit-wrapped function was "
                "called with a non-array argument, and this argument was not marked as "
                "static using the static_argnums or static_argnames parameters of jax.jit.")
    raise AssertionError("no invalid leaf")


def _flat_fun(fun: Callable, in_tree, static: dict[int, Any], static_kw: dict[str, Any],
              out_store: list) -> Callable:
    """``fun`` as a function of flat dynamic leaves returning flat outputs."""

    def flat(*leaves):
        args, kwargs = tree_unflatten(in_tree, leaves)
        args = list(args)
        for i in sorted(static):
            args.insert(i, static[i])
        outs = fun(*args, **kwargs, **static_kw)
        out_leaves, out_tree = tree_flatten(outs)
        out_store.append(out_tree)
        return out_leaves

    return flat


def make_jaxpr(fun: Callable, static_argnums: int | Iterable[int] = (),
               return_shape: bool = False) -> Callable[..., Any]:
    """Returns a function giving the ClosedJaxpr of ``fun`` at given arguments (``jax.make_jaxpr``)."""
    static_argnums = _as_tuple(static_argnums)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        static = {i: args[i] for i in static_argnums}
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        leaves, in_tree = tree_flatten((dyn, kwargs))
        try:
            avals = [_leaf_aval(x) for x in leaves]
        except TypeError:
            raise _invalid_argument(fun, args, kwargs, static_argnums, leaves) from None
        out_store: list = []
        names = _flat_arg_names(fun, args, kwargs, static_argnums, len(leaves))
        info = errors.DebugInfo("make_jaxpr", fun, names)
        closed = pe.trace_to_jaxpr(_flat_fun(fun, in_tree, static, {}, out_store), avals, info)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                      for a in closed.out_avals]
            return closed, tree_unflatten(out_store[0], shapes)
        return closed

    return make


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


def _flat_arg_names(fun: Callable, args, kwargs, static_argnums, n: int) -> list[str]:
    names = errors.arg_names(fun, args, kwargs)
    out = []
    for i, (name, a) in enumerate(zip(names, list(args) + list(kwargs.values()))):
        if i in static_argnums:
            continue
        leaves, tree = tree_flatten(a)
        if tree.num_leaves == 1 and tree.node is None:
            out.append(name)
        else:
            out.extend(f"{name}{_path}" for _path in _leaf_paths(a))
    return out if len(out) == n else [f"args[{i}]" for i in range(n)]


def _leaf_paths(tree: Any, prefix: str = "") -> list[str]:
    if isinstance(tree, dict):
        return [p for k in sorted(tree) for p in _leaf_paths(tree[k], f"{prefix}[{k!r}]")]
    if isinstance(tree, (list, tuple)):
        return [p for i, v in enumerate(tree) for p in _leaf_paths(v, f"{prefix}[{i}]")]
    return [prefix]


# ---------------------------------------------------------------------------------------
# jit: the call primitive and the user-facing wrapper.

jit_p = core.Primitive("jit", multiple_results=True)


@jit_p.def_abstract_eval
def _jit_abstract_eval(*in_avals, jaxpr: core.ClosedJaxpr, name: str):
    return jaxpr.out_avals


@jit_p.def_impl
def _jit_impl(*args, jaxpr: core.ClosedJaxpr, name: str):
    return lowering.executable_for(jaxpr, name)(args)


def _jit_batch_rule(axis_data, vals, dims, *, jaxpr: core.ClosedJaxpr, name: str):
    """A jit call under vmap stays one jit call, of the batched jaxpr (JAX's pjit rule).

    It is an axis rule, run even when no operand is batched, because the body may use a
    collective over the vmapped axis; an unnamed axis cannot be used, so then the call is
    bound as it is."""
    if axis_data.name is None and all(d is None for d in dims):
        return jit_p.bind(*vals, jaxpr=jaxpr, name=name), [None] * len(jaxpr.out_avals)
    batched, out_dims = batching.batch_jaxpr(jaxpr, axis_data, dims)
    return jit_p.bind(*vals, jaxpr=batched, name=name), out_dims


batching.axis_primitive_batchers[jit_p] = _jit_batch_rule
lowering.register_inline(jit_p, "jaxpr")


def _jit_jvp(primals, tangents, *, jaxpr: core.ClosedJaxpr, name: str):
    """Forward mode through a jit call: one jit call of the JVP jaxpr (JAX's pjit rule)."""
    nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
    jvp_closed, out_nonzero = ad.jvp_jaxpr(jaxpr, nonzeros)
    outs = jit_p.bind(*primals, *[t for t in tangents if type(t) is not ad.Zero],
                      jaxpr=jvp_closed, name=name)
    n = len(jaxpr.out_avals)
    nz_tangents = iter(outs[n:])
    return outs[:n], [next(nz_tangents) if nz else ad.Zero.from_primal_value(p)
                      for p, nz in zip(outs[:n], out_nonzero)]


def _jit_linearize(trace, primals, tangents, *, jaxpr: core.ClosedJaxpr, name: str):
    """Reverse mode through a jit call: the primal part (with the residuals the tangents
    need) runs now as one jit call; the linear part is staged as another, which
    transposes into a third."""
    nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
    known, linear, out_nonzero, _ = ad.linearize_jaxpr(jaxpr, nonzeros)
    n = len(jaxpr.out_avals)
    outs = jit_p.bind(*primals, jaxpr=known, name=name)
    primal_outs, residuals = outs[:n], outs[n:]
    nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
    lin_outs = iter(ad.bind_with(trace.tangent_trace, jit_p, [*residuals, *nz_tangents],
                                 {"jaxpr": linear, "name": name}) if any(out_nonzero) else ())
    return primal_outs, [next(lin_outs) if nz else ad.Zero.from_primal_value(p)
                         for p, nz in zip(primal_outs, out_nonzero)]


def _jit_transpose(cts, *args, jaxpr: core.ClosedJaxpr, name: str):
    """The transpose of a jit call of a linear jaxpr: a jit call of the transposed jaxpr."""
    linear = tuple(ad.is_undefined_primal(x) for x in args)
    cts_nonzero = tuple(type(ct) is not ad.Zero for ct in cts)
    transposed = ad.transpose_jaxpr(jaxpr, linear, cts_nonzero)
    outs = iter(jit_p.bind(*[x for x, lin in zip(args, linear) if not lin],
                           *[ct for ct, nz in zip(cts, cts_nonzero) if nz],
                           jaxpr=transposed, name=name))
    return [next(outs) if lin else None for lin in linear]


ad.primitive_jvps[jit_p] = _jit_jvp
ad.primitive_linearizations[jit_p] = _jit_linearize
ad.primitive_transposes[jit_p] = _jit_transpose


class _CacheEntry:
    """A traced signature: its jaxpr (which keeps its executable once compiled, at the
    first call) and output tree."""
    __slots__ = ("jaxpr", "out_tree", "tracer_consts", "constrained")

    def __init__(self, jaxpr, out_tree, tracer_consts=()):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.tracer_consts = tracer_consts  # leading arguments; such entries are not cached
        # with_sharding_constraint in the body: calls run as SPMD (``sharded_call``).
        self.constrained = any(e.primitive.name == "sharding_constraint"
                               for e in jaxpr.jaxpr.eqns)


def _lift_tracer_consts(closed: core.ClosedJaxpr) -> tuple[core.ClosedJaxpr, list]:
    """Tracers of enclosing transformations that the function closed over become leading
    arguments of the jaxpr, so that those transformations see them (as in JAX's pjit)."""
    lifted = [i for i, c in enumerate(closed.consts) if isinstance(c, core.Tracer)]
    if not lifted:
        return closed, []
    j = closed.jaxpr
    kept = [i for i in range(len(j.constvars)) if i not in set(lifted)]
    jaxpr = core.Jaxpr([j.constvars[i] for i in kept], [j.constvars[i] for i in lifted] + j.invars,
                       j.outvars, j.eqns)
    return (core.ClosedJaxpr(jaxpr, [closed.consts[i] for i in kept]),
            [closed.consts[i] for i in lifted])


class JitWrapped:
    """``jax.jit(fun)``: stages ``fun`` once per argument signature and runs it compiled."""

    def __init__(self, fun: Callable, static_argnums, static_argnames, donate_argnums,
                 donate_argnames, device):
        self._fun = fun
        self._name = getattr(fun, "__name__", "<unnamed function>")
        functools.update_wrapper(self, fun, updated=())
        sig = _signature_or_none(fun)
        static_argnums, static_argnames = _resolve_names(sig, _as_tuple(static_argnums),
                                                         _as_tuple(static_argnames))
        donate_argnums, donate_argnames = _resolve_names(sig, _as_tuple(donate_argnums),
                                                         _as_tuple(donate_argnames))
        self._static_argnums = tuple(sorted(static_argnums))
        self._static_argnames = frozenset(static_argnames)
        _check_argnums(sig, self._static_argnums, "static_argnums")
        _check_argnames(sig, self._static_argnames, "static_argnames")
        _check_argnums(sig, tuple(sorted(donate_argnums)), "donate_argnums")
        _check_argnames(sig, frozenset(donate_argnames), "donate_argnames")
        if both := self._static_argnames & set(donate_argnames):
            raise ValueError("static_argnames and donate_argnames cannot intersect. Argument "
                             f"names {set(both)} appear in both static_argnames and donate_argnames")
        self._donate_argnums = frozenset(donate_argnums)
        self._donate_argnames = frozenset(donate_argnames)
        self._device = device
        shared = caches.jit_caches(
            fun, (self._static_argnums, tuple(sorted(self._static_argnames))),
            (tuple(sorted(self._donate_argnums)), tuple(sorted(self._donate_argnames)),
             id(device) if device is not None else None),
            not (self._static_argnums or self._static_argnames))
        # The cache entry of each argument signature (tree, avals, static arguments),
        # shared by every wrapper of ``fun`` that traces alike.
        self._cache = shared.signatures
        # Calls whose arguments are all Arrays, keyed by _core.jit_signature: the flat
        # executable and the output unflattening, without tree or aval work.
        self._fast = shared.fast
        # Calls with pytrees or Python scalars among the arguments, keyed by the arguments'
        # tree and the signature of its leaves: skips the avals and the general key.
        self._fast_trees = shared.fast_trees

    def __repr__(self):
        return f"<PjitFunction of {self._fun!r}>"

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def _split(self, args, kwargs):
        n = len(args)
        static = {i: args[i] for i in self._static_argnums if i < n}
        static_kw = {k: v for k, v in kwargs.items() if k in self._static_argnames}
        for v in list(static.values()) + list(static_kw.values()):
            try:
                hash(v)
            except TypeError as e:
                raise ValueError(
                    "Non-hashable static arguments are not supported. An error occurred while "
                    f"trying to hash an object of type {type(v)}, {v}. The error was:\n"
                    f"TypeError: {e}\n") from None
        dyn = tuple(a for i, a in enumerate(args) if i not in static) if static else tuple(args)
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        return static, static_kw, dyn, dyn_kw

    def _entry(self, args, kwargs) -> tuple[_CacheEntry, list]:
        """The cache entry for a call, and its flat dynamic arguments."""
        static, static_kw, dyn, dyn_kw = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn, dyn_kw))
        try:
            avals = tuple(_leaf_aval(x) for x in leaves)
        except TypeError:
            raise _invalid_argument(self._fun, args, kwargs, self._static_argnums, leaves) from None
        key = (in_tree, avals,
               tuple((type(v), v) for v in static.values()),
               tuple((k, type(v), v) for k, v in sorted(static_kw.items())),
               _fast_salt)
        entry = self._cache.entries.get(key)
        if entry is None:
            if config.jax_explain_cache_misses:
                compile_log.explain_cache_miss(
                    self._fun, self._cache.entries, key,
                    _flat_arg_names(self._fun, args, kwargs, self._static_argnums, len(avals)),
                    self._static_argnums)
            entry = self._trace(args, kwargs, static, static_kw, in_tree, avals)
            if entry.tracer_consts:
                return entry, [*entry.tracer_consts, *leaves]
            self._cache.put(key, entry)
        return entry, leaves

    def _trace(self, args, kwargs, static, static_kw, in_tree, avals) -> _CacheEntry:
        out_store: list = []
        names = _flat_arg_names(self._fun, args, kwargs, self._static_argnums, len(avals))
        info = errors.DebugInfo("jit", self._fun, names)
        flat = _flat_fun(self._fun, in_tree, static, static_kw, out_store)
        with compile_log.timed("Finished tracing %s for jit", self._name), \
                profiler.phase("trace", f"jit({self._name})"):
            closed, tracer_consts = _lift_tracer_consts(pe.trace_to_jaxpr(flat, avals, info))
        return _CacheEntry(closed, out_store[0], tracer_consts)

    def __call__(self, *args, **kwargs):
        fast = self._fast
        tree_key = None
        if fast is not None and not kwargs and core._state.trace is core.EVAL_TRACE:
            key = _core.jit_signature(args, _fast_salt)
            if key is not None:
                call = fast.entries.get(key)
                if call is not None:
                    return call(args)
            else:
                flat = _core.jit_flatten(args, _fast_salt)
                if flat is not None:
                    leaves, tree_key = flat
                    call = self._fast_trees.entries.get(tree_key)
                    if call is not None:
                        return call(leaves)
                elif sharded_call is not None and any(
                        type(x) is array.Array and x._layout is not None
                        for x in tree_util.tree_leaves(args)):
                    return sharded_call(self, args)
        return self.call_unsharded(args, kwargs, tree_key, spmd=True)

    def call_unsharded(self, args: tuple, kwargs: dict, tree_key: Any = None,
                       spmd: bool = False) -> Any:
        """The call, computed on one device whatever the arguments' shardings (``tree_key``:
        the fast path's key ``__call__`` found already); with ``spmd``, a body that
        constrains shardings runs as SPMD instead."""
        fast = self._fast
        if config.jax_disable_jit:
            return self._fun(*args, **kwargs)
        entry, leaves = self._entry(args, kwargs)
        if spmd and entry.constrained and sharded_call is not None and not kwargs and \
                not entry.tracer_consts and core._state.trace is core.EVAL_TRACE:
            return sharded_call(self, args)
        if fast is not None and not kwargs and not entry.tracer_consts and \
                not _debug_checks and core._state.trace is core.EVAL_TRACE:
            executable = lowering.executable_for(entry.jaxpr, self._name)
            donated = self._donation_mask(args, kwargs) if self._donate_argnums else ()
            key = _core.jit_signature(args, _fast_salt)
            if key is not None:
                call = (_tree_call(executable, entry.out_tree, args, donated) if donated
                        else _fast_call(executable, entry.out_tree))
                return fast.put(key, call)(args)
            if tree_key is not None:
                call = _tree_call(executable, entry.out_tree, leaves, donated)
                return self._fast_trees.put(tree_key, call)(leaves)
        if (self._donate_argnums or self._donate_argnames) and not entry.tracer_consts and \
                core._state.trace is core.EVAL_TRACE:
            executable = lowering.executable_for(entry.jaxpr, self._name)
            outs = executable(leaves, donated=self._donation_mask(args, kwargs))
        else:
            outs = jit_p.bind(*leaves, jaxpr=entry.jaxpr, name=self._name)
        if _debug_checks and core._state.trace is core.EVAL_TRACE:
            debug_nans.check_outputs(entry.jaxpr, leaves, outs)
        return tree_unflatten(entry.out_tree, outs)

    def _donation_mask(self, args, kwargs) -> list[bool]:
        """Per flat dynamic argument leaf, in ``_entry``'s order (positional arguments,
        then keyword ones by sorted name, as a dict flattens): whether it is donated. As
        in JAX, a keyword argument is donated when its name is in ``donate_argnames``."""
        mask = []
        for i, a in enumerate(args):
            if i not in self._static_argnums:
                mask += [i in self._donate_argnums] * len(tree_flatten(a)[0])
        for k in sorted(kwargs):
            if k not in self._static_argnames:
                mask += [k in self._donate_argnames] * len(tree_flatten(kwargs[k])[0])
        return mask

    def trace(self, *args, **kwargs) -> Traced:
        """The traced stage at these arguments (``jit(f).trace``), from jit's cache."""
        entry, leaves = self._entry(args, kwargs)
        donated = self._donation_mask(args, kwargs)
        in_tree = tree_flatten(self._split(args, kwargs)[2:])[1]
        info = tree_unflatten(in_tree, [ArgInfo(a.aval if isinstance(a, core.Tracer)
                                                else _leaf_aval(a), d)
                                        for a, d in zip(leaves, donated)])
        return Traced(entry.jaxpr, entry.out_tree, self._name, info)

    def lower(self, *args, **kwargs) -> Lowered:
        """The lowered stage at these arguments (``jit(f).lower``)."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        entry, _ = self._entry(args, kwargs)
        shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                  for a in entry.jaxpr.out_avals]
        return tree_unflatten(entry.out_tree, shapes)

    def clear_cache(self) -> None:
        """Drops this function's traces and executables, for every wrapper of it
        (``jit(f).clear_cache``)."""
        self._cache.clear()
        self._fast_trees.clear()
        if self._fast is not None:
            self._fast.clear()

    def _cache_size(self) -> int:
        """The number of argument signatures traced for this function and options."""
        return len(self._cache)


def _fast_call(executable: Callable, out_tree) -> Callable:
    """A cached jit call on Arrays: the executable on the flat arguments (the arguments are
    already flat and their avals those of the cached signature), then the output tree."""
    call = getattr(executable, "call_arrays", executable)
    if out_tree.num_leaves == 1 and out_tree.node is None:
        return lambda args: call(args)[0]
    return lambda args: tree_unflatten(out_tree, call(args))


def _tree_call(executable: Callable, out_tree, leaves: Sequence[Any],
               donated: Sequence[bool] = ()) -> Callable:
    """A cached jit call on the flat leaves of pytree arguments (avals those of the cached
    key): the executable, then the output tree built in C++. Python scalars among the
    leaves (the same positions at every call with this key) become arrays first. Leaves
    marked in ``donated`` are deleted by the call, which may write outputs into their
    buffers; a scalar's temporary Array is not the caller's and is never donated."""
    build = tree_util.tree_builder(out_tree)
    if not hasattr(executable, "call_arrays"):
        if donated:
            return lambda leaves: build(executable(leaves, donated=donated))
        return lambda leaves: build(executable(leaves))
    call = executable.call_arrays
    scalars = [i for i, leaf in enumerate(leaves) if type(leaf) is not array.Array]
    mask = [d and i not in scalars for i, d in enumerate(donated)]
    if not scalars:
        return lambda leaves: build(call(leaves, mask))
    arg = executable.scalar_argument

    def run(leaves):
        for i in scalars:
            leaves[i] = arg(i, leaves[i])
        return build(call(leaves, mask))
    return run


def _signature_or_none(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _check_argnums(sig, argnums: tuple[int, ...], what: str) -> None:
    """``jax.jit``'s check that the argnums exist in the signature."""
    if sig is None or not argnums:
        return
    params = sig.parameters.values()
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return
    n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    if -min(argnums) > n or max(argnums) >= n:
        raise ValueError(f"Jitted function has {what}={argnums}, but only accepts {n} "
                         "positional arguments.")


def _check_argnames(sig, argnames: frozenset[str], what: str) -> None:
    """``jax.jit``'s check that the argnames name keyword-passable parameters."""
    if sig is None or not argnames:
        return
    params = sig.parameters.values()
    positional_only = {p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)}
    if bad := positional_only & argnames:
        raise ValueError(f"Jitted function has invalid argnames {set(bad)} in {what}. These are "
                         "positional-only")
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return
    if bad := argnames - {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD,
                                                                p.KEYWORD_ONLY)}:
        raise ValueError(f"Jitted function has invalid argnames {set(bad)} in {what}. Function "
                         "does not take these args.")


def _resolve_names(sig, nums: tuple, names: tuple) -> tuple[set[int], set[str]]:
    """Completes argnums from argnames and the reverse, as ``jax.jit`` does."""
    nums_set, names_set = set(nums), set(names)
    if sig is None:
        return nums_set, names_set
    params = list(sig.parameters.values())
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for n in names:
        if n in positional:
            nums_set.add(positional.index(n))
    for i in nums:
        if 0 <= i < len(positional):
            names_set.add(positional[i])
    return nums_set, names_set


def jit(fun: Callable | None = None, *, static_argnums=None, static_argnames=None,
        donate_argnums=None, donate_argnames=None, device=None, backend=None,
        inline: bool = False, keep_unused: bool = False, abstracted_axes=None) -> Any:
    """Compiles ``fun`` (``jax.jit``). Usable as ``@jit``, ``@jit(...)`` and through
    ``functools.partial(jit, ...)``; the cache key is the argument tree structure, each
    leaf's (shape, dtype, weak_type), the static arguments by type and equality, and x64."""
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                             device=device, backend=backend, inline=inline, keep_unused=keep_unused)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    return JitWrapped(fun, static_argnums, static_argnames, donate_argnums, donate_argnames, device)


def clear_caches() -> None:
    """Empties every cache of traces and executables (``jax.clear_caches``)."""
    caches.clear_all()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Runs jitted functions as plain Python inside the block (``jax.disable_jit``)."""
    old = config.jax_disable_jit
    config.update("jax_disable_jit", disable)
    try:
        yield
    finally:
        config.update("jax_disable_jit", old)


def eval_shape(fun: Callable, *args, **kwargs) -> Any:
    """Output shapes and dtypes of ``fun`` without running it (``jax.eval_shape``): a
    pytree of ShapeDtypeStructs; arguments are arrays, scalars or ShapeDtypeStructs."""
    return JitWrapped(fun, None, None, None, None, None).eval_shape(*args, **kwargs)


# ---------------------------------------------------------------------------------------
# Device placement (``jax.device_put`` and friends, as in ``jax._src.api``).

def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """Moves every leaf of the pytree ``x`` to a device as an Array (``jax.device_put``).

    Python scalars become weak-typed arrays, numpy values strong ones (64-bit dtypes are
    truncated when x64 is off). Without ``device`` an existing Array is returned as it is;
    with one, the result is committed to that device; a NamedSharding (or a PartitionSpec
    under ``set_mesh``) lays the value out over its mesh. ``device`` may also be a pytree
    prefix of ``x``. ``src``, ``donate`` and ``may_alias`` are accepted for compatibility
    and ignored.
    """
    if isinstance(device, (sharding_mod.Sharding, sharding_mod.PartitionSpec)) and not (
            isinstance(device, devices.SingleDeviceSharding)):
        return tree_util.tree_map(
            lambda leaf: sharded_array.device_put_leaf(leaf, device), x)
    if isinstance(device, (list, tuple, dict)):
        # A pytree of placements, one per leaf (or subtree) of x.
        return tree_util.tree_map(lambda d, leaf: device_put(leaf, d), device, x,
                                  is_leaf=lambda d: d is None or isinstance(
                                      d, (devices.CpuDevice, sharding_mod.Sharding,
                                          sharding_mod.PartitionSpec)))
    dev = None if device is None else devices._device_index(device)
    return tree_util.tree_map(lambda leaf: array._device_put_leaf(leaf, dev), x)


def device_get(x: Any) -> Any:
    """Every Array leaf of the pytree ``x`` as a numpy array (``jax.device_get``).

    Arrays are first all waited on; other leaves are returned unchanged.
    """
    leaves = tree_util.tree_leaves(x)
    for leaf in leaves:
        if type(leaf) is array.Array:
            leaf._h.wait()
    return tree_util.tree_map(
        lambda leaf: leaf._value if type(leaf) is array.Array else leaf, x)


def block_until_ready(x: Any) -> Any:
    """Waits for every Array leaf of the pytree ``x`` and returns ``x`` (``jax.block_until_ready``).

    A failed computation raises its error here.
    """
    for leaf in _core.wait_tree(x):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None:
            wait()
    return x
