"""The operators and methods of ``Array`` (and of tracers), installed by ``tinyxla.numpy``
(JAX's ``array_methods``): each delegates to the ``jnp`` function of its name, so
``x + 1`` is ``jnp.add(x, 1)`` and ``x.sum()`` is ``jnp.sum(x)``.

``register_array_methods(jnp)`` is called once the ``jnp`` namespace is complete, so
Array itself (``_src/array.py``) depends on nothing above it.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

import numpy as np

from tinyxla._src import core
from tinyxla._src.array import _SETITEM_ERROR, Array
from tinyxla._src.lax import shape_ops
from tinyxla._src.numpy import array_api, eager_operators, indexing

_jnp: Any = None  # the jnp namespace, set by register_array_methods


_BINOP_FAST_TYPES = frozenset({Array, int, float, complex, bool, np.ndarray})
_BINOP_TYPES = (int, float, complex, np.generic, np.ndarray, Array)


def _binop_operand(self: Any, other: Any, symbol: str | None, reject: tuple[type, ...],
                   reflected: bool) -> Any:
    """The operand a binary operator accepts, or NotImplemented (JAX's operator rules)."""
    jax_array = getattr(other, "__jax_array__", None)
    if jax_array is not None:
        other = jax_array()
    if isinstance(other, _BINOP_TYPES):
        return other
    # JAX rejects these explicitly: Python would otherwise concatenate or compare them.
    if type(other) in reject:
        names = (type(other).__name__, type(self).__name__)
        if not reflected:
            names = names[::-1]
        raise TypeError(f"unsupported operand type(s) for {symbol}: {names[0]!r} and {names[1]!r}")
    return NotImplemented


def _make_binop(fun_name: str, reflected: bool, symbol: str | None = None,
                reject: tuple[type, ...] = ()) -> Callable[[Any, Any], Any]:
    fun: Callable[[Any, Any], Any] | None = None  # resolved on first use

    def op(self: Any, other: Any) -> Any:
        nonlocal fun
        if type(other) not in _BINOP_FAST_TYPES:
            other = _binop_operand(self, other, symbol, reject, reflected)
            if other is NotImplemented:
                return other
        if fun is None:
            fun = getattr(_jnp, fun_name)
        return fun(other, self) if reflected else fun(self, other)

    op.__doc__ = f"Delegates to ``jnp.{fun_name}``."
    return op


def _make_unop(fun_name: str) -> Callable[[Any], Any]:
    def op(self: Any) -> Any:
        return getattr(_jnp, fun_name)(self)
    op.__doc__ = f"Delegates to ``jnp.{fun_name}``."
    return op


def _make_method(name: str, fun_name: str | None = None) -> Callable[..., Any]:
    fun_name = fun_name or name

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(_jnp, fun_name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Delegates to ``jnp.{fun_name}``."
    return method


_SEQ = (list, tuple)
_CONTAINERS = (dict, list, set, tuple)

# (dunder name, jnp function, reflected, symbol for the explicit TypeError, types rejected)
_BINOPS: list[tuple[str, str, bool, str | None, tuple[type, ...]]] = [
    ("__add__", "add", False, "+", _SEQ), ("__radd__", "add", True, "+", _SEQ),
    ("__sub__", "subtract", False, None, ()), ("__rsub__", "subtract", True, None, ()),
    ("__mul__", "multiply", False, "*", _SEQ), ("__rmul__", "multiply", True, "*", _SEQ),
    ("__truediv__", "true_divide", False, None, ()),
    ("__rtruediv__", "true_divide", True, None, ()),
    ("__floordiv__", "floor_divide", False, None, ()),
    ("__rfloordiv__", "floor_divide", True, None, ()),
    ("__mod__", "mod", False, None, ()), ("__rmod__", "mod", True, None, ()),
    ("__divmod__", "divmod", False, None, ()), ("__rdivmod__", "divmod", True, None, ()),
    ("__pow__", "power", False, None, ()), ("__rpow__", "power", True, None, ()),
    ("__matmul__", "matmul", False, None, ()), ("__rmatmul__", "matmul", True, None, ()),
    ("__and__", "bitwise_and", False, None, ()), ("__rand__", "bitwise_and", True, None, ()),
    ("__or__", "bitwise_or", False, None, ()), ("__ror__", "bitwise_or", True, None, ()),
    ("__xor__", "bitwise_xor", False, None, ()), ("__rxor__", "bitwise_xor", True, None, ()),
    ("__lshift__", "left_shift", False, None, ()),
    ("__rlshift__", "left_shift", True, None, ()),
    ("__rshift__", "right_shift", False, None, ()),
    ("__rrshift__", "right_shift", True, None, ()),
    # JAX's own text says "==" for != too.
    ("__eq__", "equal", False, "==", _CONTAINERS),
    ("__ne__", "not_equal", False, "==", _CONTAINERS),
    ("__lt__", "less", False, None, ()), ("__le__", "less_equal", False, None, ()),
    ("__gt__", "greater", False, None, ()), ("__ge__", "greater_equal", False, None, ()),
]

_UNOPS = [("__neg__", "negative"), ("__pos__", "positive"), ("__abs__", "abs"),
          ("__invert__", "invert")]

# Methods that forward to the jnp function of the same (or the given) name.
_METHODS = [
    ("all", None), ("any", None), ("argmax", None), ("argmin", None),
    ("argpartition", None), ("argsort", None), ("astype", None), ("choose", None),
    ("clip", None), ("compress", None), ("conj", None), ("conjugate", None), ("copy", None),
    ("cumprod", None), ("cumsum", None), ("diagonal", None), ("dot", None),
    ("flatten", "ravel"), ("max", None), ("mean", None), ("min", None), ("nonzero", None),
    ("prod", None), ("ptp", None), ("ravel", None), ("repeat", None), ("round", None),
    ("searchsorted", None), ("sort", None), ("squeeze", None), ("std", None), ("sum", None),
    ("swapaxes", None), ("take", None), ("trace", None), ("var", None),
]


def _reshape(self: Any, *args: Any, order: str = "C") -> Any:
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``; delegates to ``jnp.reshape``."""
    shape = args[0] if len(args) == 1 else args
    return _jnp.reshape(self, shape, order=order)


def _transpose(self: Any, *args: Any) -> Any:
    """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))`` (``jnp.transpose``)."""
    axes = None if not args else args[0] if len(args) == 1 else args
    return _jnp.transpose(self, axes)


def _round(self: Any, ndigits: int | None = None) -> Any:
    """Python's ``round(x)``: an int array when ``ndigits`` is None, as for builtin floats."""
    out = _jnp.round(self, decimals=ndigits or 0)
    return out.astype(int) if ndigits is None else out


def _contains(self: Any, item: Any) -> bool:
    return bool((self == item).any())


def _getitem(self: Any, idx: Any) -> Any:
    return indexing.getitem(self, idx)


def _setitem(self: Any, idx: Any, value: Any) -> None:
    raise TypeError(_SETITEM_ERROR)


def _len(self: Any) -> int:
    shape = self.shape
    if not shape:
        raise TypeError("len() of unsized object")  # numpy's text, as in JAX
    return shape[0]


def _iter(self: Any) -> Any:
    shape = self.shape
    if not shape:
        raise TypeError("iteration over a 0-d array")  # numpy's text, as in JAX
    return _iter_rows(self, shape)


def _iter_rows(x: Any, shape: tuple[int, ...]) -> Any:
    # Each row is a slice and a reshape: both are views of x's buffer.
    lax = shape_ops
    rest = shape[1:]
    zeros = (0,) * len(rest)
    for i in range(shape[0]):
        yield lax.reshape(lax.slice(x, (i, *zeros), (i + 1, *rest)), rest)


def _at(self: Any) -> Any:
    try:
        helper = indexing._IndexUpdateHelper
    except (ImportError, AttributeError):
        raise AttributeError("Array.at is not available: tinyxla._src.numpy.indexing "
                             "does not define _IndexUpdateHelper") from None
    return helper(self)


def _flat(self: Any) -> Any:
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: "
                              "consider arr.flatten() instead.")


_SHARED: dict[str, Any] = {
    **{name: _make_binop(fun, refl, sym, rej) for name, fun, refl, sym, rej in _BINOPS},
    **{name: _make_unop(fun) for name, fun in _UNOPS},
    **{name: _make_method(name, fun) for name, fun in _METHODS},
    "reshape": _reshape,
    "transpose": _transpose,
    "__round__": _round,
    "__contains__": _contains,
    "__getitem__": _getitem,
    "__setitem__": _setitem,
    "__len__": _len,
    "__iter__": _iter,
    "__array_namespace__": array_api.__array_namespace__,
    "T": property(lambda self: _jnp.transpose(self), doc="``jnp.transpose(x)``"),
    "mT": property(lambda self: _jnp.matrix_transpose(self), doc="``jnp.matrix_transpose(x)``"),
    "real": property(lambda self: _jnp.real(self), doc="``jnp.real(x)``"),
    "imag": property(lambda self: _jnp.imag(self), doc="``jnp.imag(x)``"),
    "at": property(_at, doc="The ``x.at[idx].set(y)`` family of functional updates."),
    "flat": property(_flat),
}


# Array's own operators: the eager fast path in front of the shared ones (tracers keep those).
_ARRAY_ONLY: dict[str, Any] = {
    name: eager_operators.fast_binop(name, fun, refl, _SHARED[name])
    for name, fun, refl, _, _ in _BINOPS}


def register_array_methods(jnp: ModuleType) -> None:
    """Installs the operators and methods on Array and Tracer, delegating to ``jnp``."""
    global _jnp
    _jnp = jnp
    for name, attr in _SHARED.items():
        setattr(Array, name, _ARRAY_ONLY.get(name, attr))
        # The Tracer's own definitions (its concretisation errors, __hash__) stay.
        if name not in core.Tracer.__dict__:
            setattr(core.Tracer, name, attr)
    for name, attr in (("itemsize", property(lambda self: self.dtype.itemsize)),
                       ("nbytes", property(lambda self: self.size * self.dtype.itemsize))):
        if name not in core.Tracer.__dict__:
            setattr(core.Tracer, name, attr)
