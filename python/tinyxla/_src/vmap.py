"""``vmap``: vectorizing a function over array axes (mirrors ``jax.vmap`` in ``jax._src.api``).

Under another trace (jit, make_jaxpr, grad, an outer vmap) vmap traces the function with
a ``BatchTrace`` on top of the current trace, exactly as JAX does, so the batched
equations appear in the enclosing jaxpr. Called eagerly it stages instead: the function
is traced at every call (so Python side effects and closed-over globals behave as in JAX)
with the batching rules' ops recorded in a jaxpr, while ops on unmapped values alone
still run eagerly. The batched jaxpr then runs as one executable, cached by the jaxpr's
content (structure, avals, literal values; constants are passed as arguments), so a
repeated call skips lowering and compilation.

Differences from JAX: ``spmd_axis_name`` has no effect; ``out_axes`` has no
``batching.infer`` / ``sum_match``; a tracer's "created on line" in error messages is
the line asking for its value (the two agree for ``if x > 0:``).
"""
from __future__ import annotations

import difflib
import functools
import inspect
import textwrap
import weakref
from collections import Counter
from typing import Any, Callable, Hashable

import numpy as np

from tinyxla._src import core, leak_checker, tree_util
from tinyxla._src.config import config
from tinyxla._src.array import Array
from tinyxla._src.core import Jaxpr
from tinyxla._src.interpreters import batching, caches, keyed_staging
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters.batching import AxisData, BatchTrace, BatchTracer
from tinyxla._src.tree_util import tree_flatten, tree_unflatten

_AXIS_TYPES = (int, type(None))


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Hashable | None = None,
         axis_size: int | None = None, spmd_axis_name: Hashable | tuple | None = None
         ) -> Callable:
    """Vectorizing map (``jax.vmap``): maps ``fun`` over the axes ``in_axes`` of its
    arguments and stacks the results along ``out_axes``.

    ``in_axes`` is an int, None, or a tuple (a list is taken as a tuple) with one pytree
    prefix per positional argument, whose leaves are ints (negative ones count from the
    end) or None (not mapped); keyword arguments are mapped along axis 0. ``out_axes``
    is a pytree prefix of the output; None there requires the output to be unmapped.
    ``axis_size`` gives the size when no argument is mapped. ``axis_name`` names the
    axis for collectives. ``spmd_axis_name`` is accepted and has no effect (tinyxla
    maps on one device). JAX's ``sum_match`` and ``batching.infer`` out_axes are not
    supported.
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun}")
    if isinstance(in_axes, list):
        # JAX takes a top-level list as the tuple users mean (jax-ml/jax#2367).
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                        f"to the positional arguments passed to the function, but got {in_axes}.")
    if not all(type(leaf) in _AXIS_TYPES for leaf in _axis_leaves(in_axes)):
        raise TypeError("vmap in_axes must be an int, None, or (nested) container "
                        f"with those types as leaves, but got {in_axes}.")
    if not all(type(leaf) in _AXIS_TYPES for leaf in _axis_leaves(out_axes)):
        raise TypeError("vmap out_axes must be an int, None, or (nested) container "
                        f"with those types as leaves, but got {out_axes}.")
    mapped = _Vmapped(fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name)

    # A plain function, as JAX returns: other wrappers (jit) copy its attributes.
    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        return mapped(args, kwargs)

    name = getattr(fun, "__name__", type(fun).__name__)
    vmap_f.__doc__ = (f"Vectorized version of {name}. Takes similar arguments as {name} but "
                      f"with additional array axes over which {name} is mapped.")
    if getattr(fun, "__doc__", None):
        vmap_f.__doc__ += "\n\nOriginal documentation:\n\n" + fun.__doc__
    return vmap_f


class _Vmapped:
    """The state and the call of one ``vmap(fun, ...)``."""

    def __init__(self, fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name):
        self._fun = fun
        self._in_axes = in_axes
        self._out_axes = out_axes
        self._axis_name = axis_name
        self._axis_size = axis_size
        self._spmd_axis_name = spmd_axis_name
        # Flat axes per argument / output tree structure: in_axes and out_axes are fixed.
        self._in_axes_flat: dict[Any, tuple] = {}
        self._out_axes_flat: dict[Any, tuple] = {}

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        in_axes = self._in_axes
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries "
                             "corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        if not kwargs and all(type(a) is Array or isinstance(a, core.Tracer) for a in args):
            leaves, in_tree = list(args), _flat_tree(len(args))  # the common case, quickly
        else:
            leaves, in_tree = tree_flatten((args, kwargs))
        axes = self._in_axes_flat.get(in_tree)
        if axes is None:
            axes = self._in_axes_flat[in_tree] = tuple(
                _flatten_axes("vmap in_axes", (args, kwargs), (in_axes, 0), kws=True))
        dims = _array_dims(leaves, axes, self._axis_size)
        if dims is None:  # the general case, with JAX's errors
            size = _mapped_axis_size(self._fun, in_tree, leaves, axes, self._axis_size)
            dims = [None if d is None else batching.canonicalize_axis(d, len(_shape(x)))
                    for x, d in zip(leaves, axes)]
        else:
            size = dims.pop()
        axis_data = AxisData(self._axis_name, size, self._spmd_axis_name)
        trace = core.current_trace()
        trace_ref: list | None = [] if config.jax_check_tracer_leaks else None
        if trace is core.EVAL_TRACE:
            out = self._call_staged(leaves, in_tree, dims, axis_data, trace_ref)
        else:
            out = self._call_traced(trace, leaves, in_tree, dims, axis_data, trace_ref)
        if trace_ref:
            leak_checker.check(trace_ref[0])
        return out

    def _out_axes_for(self, out_tree, outs) -> tuple:
        axes = self._out_axes_flat.get(out_tree)
        if axes is None:
            axes = self._out_axes_flat[out_tree] = tuple(
                _flatten_axes("vmap out_axes", outs, self._out_axes))
        return axes

    def _trace_fun(self, btrace: BatchTrace, in_vals: list, in_tree) -> tuple[list, Any, Any]:
        if in_tree is _flat_tree(len(in_vals)):
            args, kwargs = in_vals, {}
        else:
            args, kwargs = tree_unflatten(in_tree, in_vals)
        if btrace.axis_data.name is None:  # no axis to put in scope: one context less
            with core.set_current_trace(btrace):
                outs = self._fun(*args, **kwargs)
        else:
            with batching.extend_axis_env(btrace.axis_data), core.set_current_trace(btrace):
                outs = self._fun(*args, **kwargs)
        if isinstance(outs, core.Tracer):
            return [outs], _LEAF_TREE, outs
        out_leaves, out_tree = tree_flatten(outs)
        return out_leaves, out_tree, outs

    def _match_out_axis(self, axis_data: AxisData, src: int | None, dst: int | None, x: Any,
                        outs: Any, i: int) -> Any:
        """Output leaf ``i`` (batched along ``src``) moved to ``dst``, with JAX's errors."""
        if not _is_jax_value(x):
            raise TypeError(f"Output from batched function {x!r} with type {type(x)} is not a "
                            "valid JAX type")
        try:
            return batching.matchaxis(axis_data, src, dst, x)
        except batching.SpecMatchError as e:
            raise ValueError(f"at vmap out_axes{_leaf_paths(outs)[i]}, got axis spec {e.dst} "
                             f"but output was batched on axis {e.src}") from None

    def _call_traced(self, parent: core.Trace, leaves, in_tree, dims, axis_data,
                     trace_ref: list | None = None):
        """Under another trace: JAX's own process, a BatchTrace over the current trace."""
        btrace = BatchTrace(parent, axis_data)
        if trace_ref is not None:
            trace_ref.append(weakref.ref(btrace))
        in_vals = [x if d is None else BatchTracer(btrace, x, d) for x, d in zip(leaves, dims)]
        try:
            out_leaves, out_tree, outs = self._trace_fun(btrace, in_vals, in_tree)
            out_axes = self._out_axes_for(out_tree, outs)
            results = []
            for i, (x, dst) in enumerate(zip(out_leaves, out_axes)):
                val, src = btrace.to_batch_info(x)
                results.append(self._match_out_axis(axis_data, src, dst, val, outs, i))
        finally:
            btrace.valid = False
        return tree_unflatten(out_tree, results)

    def _call_staged(self, leaves, in_tree, dims, axis_data, trace_ref: list | None = None):
        """Eagerly: trace into a batched jaxpr, then run its cached executable."""
        stage = keyed_staging.KeyedJaxprTrace()
        btrace = keyed_staging.StagingBatchTrace(stage, axis_data)
        if trace_ref is not None:
            trace_ref.append(weakref.ref(btrace))
        in_vals, mapped = [], []
        for x, d in zip(leaves, dims):
            if d is None:
                in_vals.append(x)
            else:
                aval = core.get_aval(x)
                in_vals.append(BatchTracer(btrace, stage.new_arg(aval), d,
                                           caches.example_aval(aval, d)))
                mapped.append(x)
        try:
            out_leaves, out_tree, outs = self._trace_fun(btrace, in_vals, in_tree)
            out_axes = self._out_axes_for(out_tree, outs)
            results: list[Any] = []
            staged: list[int] = []
            for i, (x, dst) in enumerate(zip(out_leaves, out_axes)):
                val, src = btrace.to_batch_info(x)
                if src == dst and type(val) is pe.DynamicJaxprTracer and val._trace is stage:
                    staged.append(i)  # staged and batched where asked: the common case
                    results.append(val._var)
                    continue
                if (src is None and dst is None and _is_jax_value(val)
                        and not _is_staged(val, stage)):
                    results.append(val)  # unmapped and concrete: returned as it is
                    continue
                with core.set_current_trace(stage):
                    val = self._match_out_axis(axis_data, src, dst, val, outs, i)
                    staged.append(i)
                    results.append(stage.to_var(val))
        finally:
            btrace.valid = False
            stage.valid = False
        if not staged and not any(core.eqn_has_effects(e) for e in stage.eqns):
            return tree_unflatten(out_tree, results)
        outvars = [results[i] for i in staged]
        key = stage.outputs_key(outvars)
        hit = None if key is None else caches.edges.entries.get(key)
        if hit is None:
            exe = caches.executable_for_content(
                Jaxpr(stage.constvars, stage.args, outvars, stage.eqns))
            # The Arrays-only call, when the executable has one (a GraphExecutable).
            hit = (None, (exe, getattr(exe, "call_arrays", None)))
            if key is not None:
                caches.advance(key, hit[1])
        exe, call_arrays = hit[1]
        args = [*stage.consts, *mapped]
        if call_arrays is not None and all(type(a) is Array for a in args):
            ys = call_arrays(args)  # Arrays of the parameters' dtypes: their avals made them
        else:
            ys = exe(args)
        if out_tree is _LEAF_TREE:
            return ys[0]
        for i, y in zip(staged, ys):
            results[i] = y
        return tree_unflatten(out_tree, results)


def _array_dims(leaves: list, axes: tuple, axis_size: int | None) -> list | None:
    """The common case of the prelude, quickly: every leaf an Array mapped along an axis
    in range, all of one size (= ``axis_size`` when given). The canonical axes, then the
    size, in one list; None for anything else (``_mapped_axis_size`` then says why)."""
    dims: list[Any] = []
    size = axis_size
    for x, d in zip(leaves, axes):
        if type(x) is not Array or d is None:
            return None
        shape = x.shape
        n = len(shape)
        if d < 0:
            d += n
        if not 0 <= d < n or (size is not None and shape[d] != size):
            return None
        size = shape[d]
        dims.append(d)
    if size is None:
        return None
    dims.append(size)
    return dims


_LEAF_TREE = tree_flatten(0)[1]
_flat_trees: list = []


def _flat_tree(n: int):
    """The tree of ``(args, {})`` for ``n`` array arguments."""
    while len(_flat_trees) <= n:
        _flat_trees.append(tree_flatten((tuple(range(len(_flat_trees))), {}))[1])
    return _flat_trees[n]


def _is_staged(x: Any, stage: pe.DynamicJaxprTrace) -> bool:
    return isinstance(x, pe.DynamicJaxprTracer) and x._trace is stage


def _is_jax_value(x: Any) -> bool:
    return isinstance(x, (Array, core.Tracer, np.ndarray, np.generic, bool, int, float, complex))


def _shape(x: Any) -> tuple[int, ...]:
    s = getattr(x, "shape", None)
    return tuple(np.shape(x)) if s is None else s


# ---------------------------------------------------------------------------------------
# in_axes / out_axes as flat lists, with JAX's errors.

class PytreeLeaf:
    """Stands for a leaf of the argument tree in prefix-mismatch messages (as JAX's)."""

    def __repr__(self):
        return "pytree leaf"


def _axis_leaves(axes: Any) -> list:
    """The leaves of an axis-spec tree, None counting as a leaf."""
    if axes is None:
        return [None]
    node = tree_util._node_type(axes)
    if node is None:
        return [axes]
    children, _ = node[1].flatten(axes)
    return [leaf for c in children for leaf in _axis_leaves(c)]


def _children(tree: Any) -> tuple[type, Any, list, list[str]] | None:
    """(node type, aux data, children, key strings) of a container, None for a leaf."""
    node = tree_util._node_type(tree)
    if node is None:
        return None
    t, nt = node
    children, aux = nt.flatten(tree)
    children = list(children)
    if isinstance(tree, (list, tuple)) and not hasattr(t, "_fields"):
        keys = [f"[{i}]" for i in range(len(children))]
    elif hasattr(t, "_fields"):
        keys = [f".{f}" for f in t._fields]
    elif isinstance(tree, dict):
        ks = aux[1] if t.__name__ == "defaultdict" else aux
        keys = [f"[{k!r}]" for k in ks]
    else:
        keys = [f"[<flat index {i}>]" for i in range(len(children))]
    return t, aux, children, keys


def _num_leaves(tree: Any) -> int:
    return tree_flatten(tree)[1].num_leaves


def _leaf_paths(tree: Any, prefix: str = "") -> list[str]:
    """Key-path strings of the leaves of ``tree``, in flattening order (``keystr``)."""
    c = _children(tree)
    if c is None:
        return [prefix]
    _, _, children, keys = c
    return [p for k, ch in zip(keys, children) for p in _leaf_paths(ch, prefix + k)]


def _flatten_axes(name: str, full: Any, prefix: Any, kws: bool = False) -> list:
    """``prefix`` (None as a leaf) broadcast to the leaves of ``full`` (JAX's
    ``flatten_axes``), or JAX's tree-prefix ValueError."""
    out: list = []
    if _broadcast_prefix(prefix, full, out):
        return out
    if kws:  # report against the positional arguments only, as JAX does
        full, prefix = full[0], prefix[0]
    errors = list(_prefix_errors(name, "", prefix, full))
    details = "\n  ".join(errors)
    raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                     f"value; \n  Mismatch details ({len(errors)} found):\n  {details}")


def _broadcast_prefix(prefix: Any, full: Any, out: list) -> bool:
    if prefix is None or tree_util._node_type(prefix) is None:
        out.extend([prefix] * _num_leaves(full))
        return True
    p, f = _children(prefix), _children(full)
    if f is None or p[0] is not f[0] or p[1] != f[1] or len(p[2]) != len(f[2]):
        return False
    return all(_broadcast_prefix(a, b, out) for a, b in zip(p[2], f[2]))


def _prefix_errors(name: str, path: str, prefix: Any, full: Any):
    """JAX's ``_prefix_error`` texts for the places ``prefix`` is not a prefix of ``full``."""
    if prefix is None or tree_util._node_type(prefix) is None:
        return
    p = _children(prefix)
    f = _children(full)
    full_type = PytreeLeaf if f is None else type(full)
    if type(prefix) is not full_type:
        yield ("pytree structure error: different types at key path\n"
               f"    {name}{path}\n"
               f"At that key path, the prefix pytree {name} has a subtree of type\n"
               f"    {type(prefix)}\n"
               "but at the same key path the full pytree has a subtree of different type\n"
               f"    {full_type}.")
        return
    _, p_aux, p_children, p_keys = p
    _, f_aux, f_children, f_keys = f
    if isinstance(prefix, (list, tuple)):
        if len(prefix) != len(full):
            ty = type(prefix).__name__
            yield (f"pytree structure error: different lengths of {ty} at key path\n"
                   f"    {name}{path}\n"
                   f"At that key path, the prefix pytree {name} has a subtree of type "
                   f"{ty} of length {len(prefix)}, but the full pytree has a subtree of the "
                   f"same type but of length {len(full)}.")
            return
    elif len(p_children) != len(f_children):
        strip = lambda k: k[1:-1].strip("'\"") if k.startswith("[") else k.lstrip(".")
        pk, fk = [strip(k) for k in p_keys], [strip(k) for k in f_keys]
        diff = set(pk).symmetric_difference(fk)
        yield ("pytree structure error: different numbers of pytree children at key path\n"
               f"    {name}{path}\n"
               f"At that key path, the prefix pytree {name} has a subtree of type\n"
               f"    {type(prefix)}\n"
               f"with {len(p_children)} child keys\n"
               f"    {' '.join(pk)}\n"
               "but at the same key path the full pytree has a subtree of the same type but "
               f"with {len(f_children)} child keys\n"
               f"    {' '.join(fk)}\n"
               "so the symmetric difference on key sets is\n"
               f"    {' '.join(diff)}")
        return
    if p_aux != f_aux:
        p_str, f_str = str(p_aux), str(f_aux)
        diff = textwrap.indent("\n".join(difflib.ndiff(p_str.splitlines(), f_str.splitlines())),
                               prefix="    ")
        yield ("pytree structure error: different pytree metadata at key path\n"
               f"    {name}{path}\n"
               f"At that key path, the prefix pytree {name} has a subtree of type\n"
               f"    {type(prefix)}\n"
               "with metadata\n"
               f"    {p_str}\n"
               "but at the same key path the full pytree has a subtree of the same type but "
               "with metadata\n"
               f"    {f_str}\n"
               "so the diff in the metadata at these pytree nodes is\n"
               f"{diff}")
        return
    for k, a, b in zip(p_keys, p_children, f_children):
        yield from _prefix_errors(name, path + k, a, b)


# ---------------------------------------------------------------------------------------
# The mapped axis size, with JAX's errors.

def _mapped_axis_size(fun: Callable, in_tree, leaves: list, axes: tuple,
                      axis_size: int | None) -> int:
    if not leaves:
        if axis_size is not None:
            return axis_size
        args, kwargs = tree_unflatten(in_tree, leaves)
        raise ValueError("vmap wrapped function must be passed at least one argument "
                         "containing an array or axis_size must be specified, got empty "
                         f"*args={args} and **kwargs={kwargs}")
    sizes: list[int | None] = []
    for x, d in zip(leaves, axes):
        if d is None:
            sizes.append(None)
            continue
        if not _is_jax_value(x):
            raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
        shape = _shape(x)
        if not -len(shape) <= d < len(shape):
            min_rank = d + 1 if d >= 0 else -d
            raise ValueError(f"vmap was requested to map its argument along axis {d}, which "
                             f"implies that its rank should be at least {min_rank}, but is "
                             f"only {len(shape)} (its shape is {shape})")
        sizes.append(shape[d])
    distinct = {s for s in sizes if s is not None}
    if axis_size is not None:
        distinct.add(axis_size)
    if len(distinct) == 1:
        return distinct.pop()
    if not distinct:
        raise ValueError("vmap must have at least one non-None value in in_axes or "
                         "axis_size must be specified")
    raise ValueError(_inconsistent_sizes_message(fun, in_tree, leaves, axes, sizes, axis_size))


def _inconsistent_sizes_message(fun, in_tree, leaves, axes, sizes, axis_size) -> str:
    args, kwargs = tree_unflatten(in_tree, leaves)
    try:
        params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = None

    def arg_name(i: int, rest: str) -> str:
        if params is None or i >= len(params):
            return f"args[{i}]{rest}"
        return f"argument {params[i]}{rest}"

    def type_str(x: Any) -> str:
        try:
            aval = core.get_aval(x)
        except Exception:
            return "unknown"
        return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"

    paths = [f"{arg_name(i, p)} of type {type_str(x)}"
             for i, a in enumerate(args) for p, x in zip(_leaf_paths(a), tree_flatten(a)[0])]
    paths += [f"kwargs{p} of type {type_str(x)}"
              for p, x in zip(_leaf_paths(kwargs), tree_flatten(kwargs)[0])]
    counts = Counter(s for s in sizes if s is not None).most_common()
    first = {}
    for i, s in enumerate(sizes):
        if s is not None:
            first.setdefault(s, i)
    msg = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        msg.append(f"  * the `axis_size` argument was {axis_size};\n")
    for k, (sz, ct) in enumerate(counts):
        i = first[sz]
        if ct == 1:
            msg.append(f"  * one axis had size {sz}: axis {axes[i]} of {paths[i]};\n")
        elif k == 0:
            msg.append(f"  * most axes ({ct} of them) had size {sz}, e.g. axis {axes[i]} of "
                       f"{paths[i]};\n")
        else:
            msg.append(f"  * some axes ({ct} of them) had size {sz}, e.g. axis {axes[i]} of "
                       f"{paths[i]};\n")
    return "".join(msg)[:-2]
