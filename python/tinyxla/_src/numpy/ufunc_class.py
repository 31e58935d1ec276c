"""``jnp.ufunc``: universal functions with ``reduce``, ``accumulate``, ``reduceat``,
``outer`` and ``at``, the ufunc objects JAX makes of its elementwise functions, and
``frompyfunc``.

Mirrors ``jax._src.numpy.ufunc_api``. The ufuncs made from jnp functions (add, multiply,
maximum, ...) use the matching reductions, cumulative functions and scatters. A ufunc
from ``frompyfunc`` calls its function under ``vectorize``; its reduce, accumulate,
reduceat and at apply the function once per element along the axis (JAX uses
``fori_loop``/``scan``; tinyxla, without loop primitives, unrolls them, so they suit
short axes). Calling a built-in ufunc costs no more than calling the function: its
class's ``__call__`` is that function.
"""
from __future__ import annotations

import inspect
import operator
from typing import Any, Callable

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.api import eval_shape
from tinyxla._src.lax import lax
from tinyxla._src.numpy import cumulative, promotion, reductions, ufuncs
from tinyxla._src.numpy.indexing import take
from tinyxla._src.numpy.logaddexp2 import logaddexp2 as _logaddexp2
from tinyxla._src.numpy.promotion import canonicalize_axis, check_arraylike
from tinyxla._src.numpy.selection import where_arrays
from tinyxla._src.numpy.shape import moveaxis
from tinyxla._src.numpy.vectorize import vectorize
from tinyxla._src.vmap import vmap

ArrayLike = Any

_AT_INPLACE = ("Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like\n"
               "np.ufunc.at(). Instead, you can pass inplace=False and capture the result; "
               "e.g.\n>>> arr = jnp.add.at(arr, ind, val, inplace=False)\n")


class ufunc:  # noqa: N801 - JAX's name
    """Mirrors ``jax.numpy.ufunc``: a function of ``nin`` arrays with the ufunc methods."""

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *,
                 name: str | None = None, nargs: int | None = None, identity: Any = None,
                 call: Callable[..., Any] | None = None,
                 reduce: Callable[..., Any] | None = None,
                 accumulate: Callable[..., Any] | None = None,
                 at: Callable[..., Any] | None = None,
                 reduceat: Callable[..., Any] | None = None):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._props = {"func": func, "nin": operator.index(nin), "nout": operator.index(nout),
                       "nargs": operator.index(nargs or nin), "identity": identity,
                       "call": call, "reduce": reduce, "accumulate": accumulate, "at": at,
                       "reduceat": reduceat}

    _func = property(lambda self: self._props["func"])
    nin = property(lambda self: self._props["nin"])
    nout = property(lambda self: self._props["nout"])
    nargs = property(lambda self: self._props["nargs"])
    identity = property(lambda self: self._props["identity"])

    def _key(self) -> tuple:
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: ArrayLike, out: None = None, where: None = None) -> Any:
        check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        call = self._props["call"] or vectorize(self._func)
        return call(*args)

    def _check_binary(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def _result_dtype(self, *args: Any) -> np.dtype:
        ones = [lax.full((), 1, promotion.ensure_array(a).dtype) for a in args]
        return eval_shape(self._func, *ones).dtype

    def reduce(self, a: ArrayLike, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: ArrayLike | None = None,
               where: ArrayLike | None = None) -> Any:
        """Mirrors ``jax.numpy.ufunc.reduce``: folds the function along ``axis``."""
        check_arraylike(f"{self.__name__}.reduce", a)
        self._check_binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if initial is not None:
            check_arraylike(f"{self.__name__}.reduce", initial)
        if where is not None:
            check_arraylike(f"{self.__name__}.reduce", where)
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 "identity, so to use a where mask one has to specify 'initial'.")
            if dtypes.dtype(where) != np.bool_:
                raise ValueError(f"where argument must have dtype=bool; got "
                                 f"dtype={dtypes.dtype(where)}")
        reduce = self._props["reduce"] or self._reduce_by_loop
        return reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                      where=where)

    def _reduce_by_loop(self, arr: ArrayLike, axis: Any = 0, dtype: Any = None,
                        keepdims: bool = False, initial: ArrayLike | None = None,
                        where: ArrayLike | None = None) -> Any:
        arr = promotion.ensure_array(arr)
        if initial is None:
            initial = self.identity
        if dtype is None:
            dtype = self._result_dtype(arr, arr)
        if where is not None:
            where = promotion.broadcast_to_shape(promotion.ensure_array(where), arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr = lax.reshape(arr, (arr.size,))
            where = None if where is None else lax.reshape(where, (where.size,))
            axis = 0
        else:
            axis = canonicalize_axis(axis, arr.ndim)
            final_shape = (arr.shape[:axis] + ((1,) if keepdims else ()) + arr.shape[axis + 1:])
        arr = moveaxis(arr, axis, 0)
        where = None if where is None else moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return lax.full(final_shape, initial, dtype)
        if initial is None:
            start, acc = 1, arr[0]
        else:
            start, acc = 0, initial
        acc = promotion.broadcast_to_shape(
            lax.convert_element_type(promotion.ensure_array(acc), dtype), arr.shape[1:])
        for i in range(start, arr.shape[0]):
            new = self(acc, lax.convert_element_type(arr[i], dtype))
            acc = new if where is None else where_arrays(where[i], new, acc)
        return lax.reshape(acc, final_shape) if keepdims else acc

    def accumulate(self, a: ArrayLike, axis: int = 0, dtype: Any = None,
                   out: None = None) -> Any:
        """Mirrors ``jax.numpy.ufunc.accumulate``: the running fold along ``axis``."""
        self._check_binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        accumulate = self._props["accumulate"] or self._accumulate_by_loop
        return accumulate(a, axis=axis, dtype=dtype)

    def _accumulate_by_loop(self, arr: ArrayLike, axis: int = 0, dtype: Any = None) -> Any:
        check_arraylike(f"{self.__name__}.accumulate", arr)
        arr = promotion.ensure_array(arr)
        if dtype is None:
            dtype = self._result_dtype(arr, arr)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = canonicalize_axis(axis, arr.ndim)
        if arr.size == 0:
            return lax.full(arr.shape, 0, dtype)
        arr = moveaxis(arr, axis, 0)
        acc = lax.convert_element_type(arr[0], dtype)
        outs = [acc]
        for i in range(1, arr.shape[0]):
            acc = lax.convert_element_type(self(acc, lax.convert_element_type(arr[i], dtype)),
                                           dtype)
            outs.append(acc)
        return moveaxis(lax.concatenate([lax.expand_dims(o, (0,)) for o in outs], 0), 0, axis)

    def at(self, a: ArrayLike, indices: Any, b: ArrayLike | None = None, /, *,
           inplace: bool = True) -> Any:
        """Mirrors ``jax.numpy.ufunc.at`` (``inplace=False`` is required, as in JAX)."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE)
        at = self._props["at"] or self._at_by_loop
        return at(a, indices) if b is None else at(a, indices, b)

    def _at_by_loop(self, a: ArrayLike, indices: Any, *args: Any) -> Any:
        check_arraylike(f"{self.__name__}.at", a, *args)
        dtype = self._result_dtype(a, *args)
        a = lax.convert_element_type(promotion.ensure_array(a), dtype)
        args = tuple(lax.convert_element_type(promotion.ensure_array(x), dtype) for x in args)
        idx = indices if isinstance(indices, tuple) else (indices,)
        if not idx:
            return a
        shapes = [np.shape(i) for i in idx if not isinstance(i, slice)]
        shape = promotion.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        n = int(np.prod(shape))
        if args:
            arg = promotion.broadcast_to_shape(args[0], (*shape, *args[0].shape[len(shape):]))
            args = (lax.reshape(arg, (n, *args[0].shape[len(shape):])),)
        flat = [i if isinstance(i, slice) else lax.reshape(
            promotion.broadcast_to_shape(promotion.ensure_array(i), shape), (n,)) for i in idx]
        for k in range(n):
            where_k = tuple(i if isinstance(i, slice) else i[k] for i in flat)
            a = a.at[where_k].set(self(a.at[where_k].get(), *(x[k] for x in args)))
        return a

    def reduceat(self, a: ArrayLike, indices: Any, axis: int = 0, dtype: Any = None,
                 out: None = None) -> Any:
        """Mirrors ``jax.numpy.ufunc.reduceat``: reductions over the slices
        [indices[i], indices[i+1]) along ``axis`` (a single element where they do not
        increase)."""
        self._check_binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        reduceat = self._props["reduceat"] or self._reduceat_by_loop
        return reduceat(a, indices, axis=axis, dtype=dtype)

    def _reduceat_by_loop(self, a: ArrayLike, indices: Any, axis: int = 0,
                          dtype: Any = None) -> Any:
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        a = promotion.ensure_array(a)
        indices = promotion.ensure_array(indices)
        if a.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got {a.shape=}")
        if indices.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got {indices.shape=}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = canonicalize_axis(axis, a.ndim)
        out = take(a, indices, axis=axis)
        n = a.shape[axis]
        bounds = lax.concatenate([lax.convert_element_type(indices, np.int32),
                                  lax.full((1,), n, np.int32)], 0)
        bshape = [1] * out.ndim
        bshape[axis] = indices.shape[0]
        start = lax.reshape(bounds[:-1], tuple(bshape))
        end = lax.reshape(bounds[1:], tuple(bshape))
        for i in range(n):
            inside = ufuncs.logical_and(ufuncs.greater(i, start), ufuncs.less(i, end))
            out = where_arrays(inside, self(out, take(a, lax.full((1,), i, np.int32),
                                                      axis=axis)), out)
        return out

    def outer(self, A: ArrayLike, B: ArrayLike, /) -> Any:
        """Mirrors ``jax.numpy.ufunc.outer``: f(a, b) for every pair, shape A.shape + B.shape."""
        self._check_binary("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        A, B = promotion.ensure_array(A), promotion.ensure_array(B)
        result = vmap(vmap(self, (None, 0)), (0, None))(lax.reshape(A, (A.size,)),
                                                        lax.reshape(B, (B.size,)))
        return lax.reshape(result, A.shape + B.shape)


def _builtin(func: Callable[..., Any], nin: int, identity: Any = None, **methods: Any) -> ufunc:
    """A ufunc of a jnp function that calls it directly: its own subclass's ``__call__``
    is the function (so ``out=``/``where=`` are not accepted, as the function's).
    Its ``__signature__`` is the function's: ``inspect`` reads a staticmethod ``__call__`` as
    a bound method and drops its first parameter (``add`` would show as ``(x2, /)``)."""
    cls = type("ufunc", (ufunc,), {"__call__": staticmethod(func), "__module__": __name__,
                                   "__signature__": inspect.signature(func)})
    return cls(func, nin=nin, nout=1, name=func.__name__, identity=identity, call=func,
               **methods)


def _bool_via_int(scatter: str) -> Callable[..., Any]:
    def at(a: Any, indices: Any, b: Any) -> Any:
        a = promotion.ensure_array(a)
        if a.dtype == np.bool_:
            a = lax.convert_element_type(a, np.int32)
            b = lax.convert_element_type(lax.convert_element_type(promotion.ensure_array(b),
                                                                  np.bool_), np.int32)
            return lax.convert_element_type(getattr(a.at[indices], scatter)(b), np.bool_)
        return getattr(a.at[indices], scatter)(b)
    return at


def _bitwise_reduce(name: str, lax_reduce: Callable[[Any, tuple[int, ...]], Any],
                    combine: Callable[[Any, Any], Any], identity: int) -> Callable[..., Any]:
    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        arr = promotion.ensure_array(a)
        if not (dtypes.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
            raise ValueError(f"{name} only supported for boolean and integer types")
        if dtype is not None:
            arr = lax.convert_element_type(arr, dtype)
        dims = reductions._reduction_dims(arr.ndim, axis)
        if where is not None:
            w = promotion.broadcast_to_shape(promotion.ensure_array(where), arr.shape)
            arr = lax.select(w, arr, lax.full_like(arr, identity if arr.dtype != np.bool_
                                                   else bool(identity)))
        out = lax_reduce(arr, dims)
        if initial is not None:
            init = lax.convert_element_type(promotion.ensure_array(initial), out.dtype)
            out = combine(lax.broadcast_in_dim(init, out.shape, ()), out)
        return lax.expand_dims(out, dims) if keepdims else out
    return reduce


def _logical_reduce(op: str) -> Callable[..., Any]:
    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        arr = lax.convert_element_type(promotion.ensure_array(a), np.bool_)
        if op == "xor":
            return _bitwise_reduce("logical_xor.reduce", lax.reduce_xor, lax.bitwise_xor, 0)(
                arr, axis, None, keepdims, initial, where)
        fn = reductions.all if op == "and" else reductions.any
        out = fn(arr, axis=axis, keepdims=keepdims, where=where)
        if initial is not None:
            init = lax.convert_element_type(promotion.ensure_array(initial), np.bool_)
            out = (lax.bitwise_and if op == "and" else lax.bitwise_or)(
                lax.broadcast_in_dim(init, out.shape, ()), out)
        return lax.convert_element_type(out, dtype) if dtype is not None else out
    return reduce


def _logsumexp_reduce(base2: bool) -> Callable[..., Any]:
    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        arr, = promotion.promote_dtypes_inexact(promotion.ensure_array(a))
        if dtype is not None:
            arr = lax.convert_element_type(arr, dtype)
        dims = reductions._reduction_dims(arr.ndim, axis)
        if where is not None:
            w = promotion.broadcast_to_shape(promotion.ensure_array(where), arr.shape)
            arr = lax.select(w, arr, lax.full_like(arr, -np.inf))
        if base2:
            arr = lax.mul(arr, lax.full_like(arr, np.log(2)))
        amax = lax.reduce_max(arr, dims) if arr.size else lax.full(
            tuple(s for i, s in enumerate(arr.shape) if i not in dims), -np.inf, arr.dtype)
        finite = lax.select(lax.is_finite(amax), amax, lax.full_like(amax, 0))
        shifted = lax.sub(arr, lax.broadcast_in_dim(finite, arr.shape, tuple(
            i for i in range(arr.ndim) if i not in dims)))
        out = lax.add(lax.log(lax.reduce_sum(lax.exp(shifted), dims)), finite)
        if base2:
            out = lax.div(out, lax.full_like(out, np.log(2)))
        if initial is not None:
            out = (_logaddexp2 if base2 else ufuncs.logaddexp)(out, initial)
        return lax.expand_dims(out, dims) if keepdims else out
    return reduce


def _with_initial(reduction: Callable[..., Any]) -> Callable[..., Any]:
    return lambda a, axis=0, dtype=None, keepdims=False, initial=None, where=None: \
        reduction(a, axis=axis, keepdims=keepdims, initial=initial, where=where)


add = _builtin(ufuncs.add, 2, 0, reduce=reductions.sum, accumulate=cumulative.cumsum,
               at=_bool_via_int("add"))
multiply = _builtin(ufuncs.multiply, 2, 1, reduce=reductions.prod,
                    accumulate=cumulative.cumprod, at=_bool_via_int("mul"))
subtract = _builtin(ufuncs.subtract, 2, None,
                    at=lambda a, indices, b: promotion.ensure_array(a).at[indices].subtract(b))
maximum = _builtin(ufuncs.maximum, 2, None, reduce=_with_initial(reductions.max))
minimum = _builtin(ufuncs.minimum, 2, None, reduce=_with_initial(reductions.min))
bitwise_and = _builtin(ufuncs.bitwise_and, 2, -1,
                       reduce=_bitwise_reduce("bitwise_and.reduce", lax.reduce_and,
                                              lax.bitwise_and, -1))
bitwise_or = _builtin(ufuncs.bitwise_or, 2, 0,
                      reduce=_bitwise_reduce("bitwise_or.reduce", lax.reduce_or,
                                             lax.bitwise_or, 0))
bitwise_xor = _builtin(ufuncs.bitwise_xor, 2, 0,
                       reduce=_bitwise_reduce("bitwise_xor.reduce", lax.reduce_xor,
                                              lax.bitwise_xor, 0))
logical_and = _builtin(ufuncs.logical_and, 2, True, reduce=_logical_reduce("and"))
logical_or = _builtin(ufuncs.logical_or, 2, False, reduce=_logical_reduce("or"))
logical_xor = _builtin(ufuncs.logical_xor, 2, False, reduce=_logical_reduce("xor"))
logaddexp = _builtin(ufuncs.logaddexp, 2, -np.inf, reduce=_logsumexp_reduce(False))
logaddexp2 = _builtin(_logaddexp2, 2, -np.inf, reduce=_logsumexp_reduce(True))
negative = _builtin(ufuncs.negative, 1)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *,
               identity: Any = None) -> ufunc:
    """Mirrors ``jax.numpy.frompyfunc``: a ufunc calling ``func`` elementwise (vectorized)."""
    return ufunc(func, nin, nout, identity=identity)
