"""Function wrappers that map over axes: vectorize, apply_along_axis, apply_over_axes and
piecewise.

Mirrors ``jax._src.numpy.vectorize`` and the matching ``lax_numpy`` functions: the
wrapped function is ``vmap``-ed once per broadcast (non-core) dimension, so it runs
once, traced, on core-shaped values; size-1 dimensions are not mapped but expanded at
the end. ``piecewise`` evaluates every function on all of x and selects (JAX switches
per element under a vmap, which computes the same values).
"""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Collection, Sequence

import numpy as np

from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, reductions
from tinyxla._src.numpy.creation import asarray
from tinyxla._src.numpy.cumulative import cumsum
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike
from tinyxla._src.numpy.shape import expand_dims, squeeze
from tinyxla._src.vmap import vmap

ArrayLike = Any
CoreDims = tuple[str, ...]

_DIMENSION_NAME = r"\w+"
_CORE_DIMENSION_LIST = "(?:{0:}(?:,{0:})*)?".format(_DIMENSION_NAME)
_ARGUMENT = rf"\({_CORE_DIMENSION_LIST}\)"
_ARGUMENT_LIST = "{0:}(?:,{0:})*".format(_ARGUMENT)
_SIGNATURE = "^{0:}->{0:}$".format(_ARGUMENT_LIST)


def _parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = ([tuple(re.findall(_DIMENSION_NAME, arg)) for arg in re.findall(_ARGUMENT, part)]
                 for part in signature.split("->"))
    return ins, outs


def _update_dim_sizes(sizes: dict[str, int], shape: tuple[int, ...], core: CoreDims,
                      context: str, *, is_input: bool) -> None:
    if is_input:
        if len(shape) < len(core):
            raise ValueError(f"input with shape {shape!r} does not have enough dimensions for "
                             f"all core dimensions {core!r} {context}")
    elif len(shape) != len(core):
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core!r} "
                         f"{context}")
    core_shape = shape[len(shape) - len(core):] if core else ()
    for dim, size in zip(core, core_shape):
        if sizes.setdefault(dim, size) != size:
            raise ValueError(f"inconsistent size for core dimension {dim!r}: {size!r} vs "
                             f"{sizes[dim]!r} {context}")


def _checked_outputs(func: Callable, sizes: dict[str, int], out_core: list[CoreDims],
                     context: str) -> Callable:
    def wrapped(*args: Any) -> Any:
        out = func(*args)
        outs = out if isinstance(out, tuple) else [out]
        if len(out_core) > 1 and not isinstance(out, tuple):
            raise TypeError("output must be a tuple when multiple outputs are expected, "
                            f"got: {out!r}\n{context}")
        if len(outs) != len(out_core):
            raise TypeError(f"wrong number of output arguments: expected {len(out_core)!r}, "
                            f"got {len(outs)!r} {context}")
        seen = dict(sizes)
        for o, core in zip(outs, out_core):
            _update_dim_sizes(seen, np.shape(o), core, context, is_input=False)
        return out
    return wrapped


def _apply_excluded(func: Callable, excluded: Collection[int | str], args: Sequence[Any],
                    kwargs: dict[str, Any]) -> tuple[Callable, list[Any], dict[str, Any]]:
    """func of the non-excluded arguments only, the excluded ones bound."""
    if not excluded:
        return func, list(args), kwargs
    dynamic = [a for i, a in enumerate(args) if i not in excluded]
    dynamic_kw = {k: v for k, v in kwargs.items() if k not in excluded}
    static = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
              if i < len(args)]
    static_kw = {k: v for k, v in kwargs.items() if k in excluded}

    def bound(*a: Any, **kw: Any) -> Any:
        a = list(a)
        for i, v in static:
            a.insert(i, v)
        return func(*a, **kw, **static_kw)
    return bound, dynamic, dynamic_kw


def vectorize(pyfunc: Callable, *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable:
    """Mirrors ``jax.numpy.vectorize``: ``pyfunc`` mapped over the broadcast leading
    dimensions (with a gufunc ``signature``, over those left of the core ones)."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = (f"on vectorized function with excluded={excluded!r} and "
                   f"signature={signature!r}")
        func, args, kwargs = _apply_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            in_core, out_core = _parse_signature(signature)
        else:
            in_core, out_core = [()] * len(args), None
        none_args = {i for i, a in enumerate(args) if a is None}
        if none_args:
            if any(in_core[i] != () for i in none_args):
                raise ValueError(f"Cannot pass None at locations {none_args} with {signature=}")
            func, args, _ = _apply_excluded(func, none_args, args, {})
            in_core = [d for i, d in enumerate(in_core) if i not in none_args]
        args = [asarray(a) for a in args]
        if len(args) != len(in_core):
            raise TypeError(f"wrong number of positional arguments: expected {len(in_core)!r}, "
                            f"got {len(args)!r} {context}")
        sizes: dict[str, int] = {}
        batch_shapes = []
        for a, core in zip(args, in_core):
            _update_dim_sizes(sizes, a.shape, core, context, is_input=True)
            batch_shapes.append(a.shape[:a.ndim - len(core)])
        broadcast = promotion.broadcast_shapes(*batch_shapes)
        if out_core is not None:
            func = _checked_outputs(func, sizes, out_core, context)
        squeezed, rev_filled = [], []
        for a, bshape in zip(args, batch_shapes):
            rev_filled.append(((1,) * (len(broadcast) - len(bshape)) + bshape)[::-1])
            squeezed.append(squeeze(a, axis=tuple(i for i, s in enumerate(bshape) if s == 1)))
        mapped = func
        expand = []
        for negdim, sizes_here in enumerate(zip(*rev_filled)):
            in_axes = tuple(None if s == 1 else 0 for s in sizes_here)
            if all(ax is None for ax in in_axes):
                expand.append(len(broadcast) - 1 - negdim)
            else:
                mapped = vmap(mapped, in_axes)
        result = mapped(*squeezed, **kwargs) if kwargs else mapped(*squeezed)
        if not expand:
            return result
        if isinstance(result, tuple):
            return tuple(expand_dims(r, axis=expand) for r in result)
        return expand_dims(result, axis=expand)

    return wrapped


def apply_along_axis(func1d: Callable, axis: int, arr: ArrayLike, *args: Any,
                     **kwargs: Any) -> Any:
    """Mirrors ``jax.numpy.apply_along_axis``: func1d on every 1-d slice along ``axis``
    (vmapped over the other axes; its output axes replace ``axis``)."""
    promotion.check_arraylike("apply_along_axis", arr)
    ndim = np.ndim(arr)
    axis = canonicalize_axis(axis, ndim)

    def func(a: Any) -> Any:
        return func1d(a, *args, **kwargs)
    for i in range(1, ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func: Callable[[Any, int], Any], a: ArrayLike, axes: Sequence[int]) -> Any:
    """Mirrors ``jax.numpy.apply_over_axes``: func(a, axis) for each axis in turn, a
    reduced axis put back as size 1."""
    a = ensure_arraylike("apply_over_axes", a)
    for axis in axes:
        b = func(a, axis)
        if b.ndim == a.ndim:
            a = b
        elif b.ndim == a.ndim - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def piecewise(x: ArrayLike, condlist: Any, funclist: list[Any], *args: Any, **kw: Any) -> Any:
    """Mirrors ``jax.numpy.piecewise``: where the i-th condition (the last that holds)
    is true, funclist[i](x) (or the constant); elsewhere the extra last function or 0."""
    x = ensure_arraylike("piecewise", x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = list(funclist[-1:]) + list(funclist[:-1])
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    conds = asarray(condlist, dtype=bool)
    if conds.ndim == x.ndim:   # one condition given as an array of x's shape
        conds = lax.expand_dims(conds, (0,))
    conds = promotion.broadcast_to_shape(conds, (conds.shape[0], *x.shape))
    # The index of the last true condition, 0 (the default) where none holds.
    stacked = lax.concatenate([lax.full((1, *x.shape), False, np.bool_), conds], 0)
    which = reductions.argmax(cumsum(stacked, axis=0), axis=0)
    values = []
    for f in funclist:
        v = f(x, *args, **kw) if callable(f) else f
        values.append(promotion.broadcast_to_shape(
            lax.convert_element_type(asarray(v), x.dtype), x.shape))
    return lax.select_n(lax.convert_element_type(which, np.int32), *values)
