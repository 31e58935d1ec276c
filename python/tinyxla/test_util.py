"""``tinyxla.test_util`` (``jax.test_util``): numerical checks of derivatives.

JAX's algorithm (``jax._src.public_test_util``): one random direction from
``np.random.RandomState(0)``, central differences ``(f(x+eps*t) - f(x-eps*t)) / 2eps``,
JVPs compared directly and VJPs through ``<t, vjp(ct)> == <jvp(t), ct>``; higher orders
recurse through ``jvp`` (fwd), ``vjp`` (rev) and ``linearize`` (lin). Tolerances are per
dtype and multiplied by the array size, as in JAX.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import autodiff, dtypes
from tinyxla._src.config import config
from tinyxla._src.tree_util import tree_map, tree_reduce

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4

_default_tolerance = {
    dtypes.float0: 0, np.dtype(np.bool_): 0,
    np.dtype(np.int8): 0, np.dtype(np.int16): 0, np.dtype(np.int32): 0, np.dtype(np.int64): 0,
    np.dtype(np.uint8): 0, np.dtype(np.uint16): 0, np.dtype(np.uint32): 0,
    np.dtype(np.uint64): 0,
    np.dtype(dtypes.bfloat16): 1e-2, np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-6,
    np.dtype(np.float64): 1e-15, np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}

default_gradient_tolerance = {
    np.dtype(dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
}


def _dtype(x: Any) -> np.dtype:
    if hasattr(x, "dtype"):
        return x.dtype
    dt = dtypes.python_scalar_dtypes.get(type(x))
    return np.dtype(dt) if dt is not None else np.asarray(x).dtype


def _is_python_scalar(x: Any) -> bool:
    return not isinstance(x, np.generic) and isinstance(x, (bool, int, float, complex))


def _tolerance(dtype: np.dtype, tol: Any = None) -> float:
    tol = {} if tol is None else tol
    if not isinstance(tol, dict):
        return tol
    tol = {np.dtype(k): v for k, v in tol.items()}
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    return tol.get(dtype, _default_tolerance[dtype])


def _assert_close(a: Any, b: Any, atol: Any = None, rtol: Any = None, err_msg: str = "") -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    atol = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol))
    rtol = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol))
    if a.dtype == b.dtype == dtypes.float0:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    if a.dtype == dtypes.bfloat16:
        a = a.astype(np.float32)
    if b.dtype == dtypes.bfloat16:
        b = b.astype(np.float32)
    kw = {}
    if atol * a.size:
        kw["atol"] = atol * a.size
    if rtol * b.size:
        kw["rtol"] = rtol * b.size
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, **kw, err_msg=err_msg)


def check_close(xs: Any, ys: Any, atol: Any = None, rtol: Any = None, err_msg: str = "") -> None:
    tree_map(functools.partial(_assert_close, atol=atol, rtol=rtol, err_msg=err_msg), xs, ys)


def _check_dtypes_match(xs: Any, ys: Any) -> None:
    def match(x, y):
        if config.jax_enable_x64:
            assert _dtype(x) == _dtype(y), (_dtype(x), _dtype(y))
        else:
            assert (dtypes.canonicalize_dtype(_dtype(x)) ==
                    dtypes.canonicalize_dtype(_dtype(y))), (_dtype(x), _dtype(y))
    tree_map(match, xs, ys)


def _inner_prod(xs: Any, ys: Any) -> Any:
    def contract(x, y):
        return np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))
    return tree_reduce(np.add, tree_map(contract, xs, ys))


def _preserve_input_types(f: Callable) -> Callable:
    def wrapped(*args):
        dtype = _dtype(args[0])
        result = np.array(f(*[np.asarray(a) for a in args]), dtype=dtype)
        if all(_is_python_scalar(a) for a in args):
            result = result.item()
        return result
    return wrapped


def _safe_subtract(x: Any, y: Any, *, dtype: Any) -> Any:
    """Subtraction with ``inf - inf == 0``."""
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(invalid="ignore"):
        return np.where(np.equal(x, y), np.array(0, dtype), np.subtract(x, y, dtype=dtype))


_add = functools.partial(tree_map, _preserve_input_types(operator.add))
_sub = functools.partial(tree_map, _preserve_input_types(operator.sub))
_safe_sub = functools.partial(tree_map, lambda x, y: _safe_subtract(x, y, dtype=_dtype(x)))
_conj = functools.partial(tree_map, _preserve_input_types(np.conj))


def _scalar_mul(xs: Any, a: float) -> Any:
    def mul(x):
        dtype = _dtype(x)
        result = np.multiply(np.asarray(x), np.array(a, dtype=dtype), dtype=dtype)
        return result.item() if _is_python_scalar(x) else result
    return tree_map(mul, xs)


def _rand_like(rng: np.random.RandomState, x: Any) -> Any:
    shape = np.shape(x)
    dtype = _dtype(x)
    randn = lambda: np.asarray(rng.randn(*shape), dtype=dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        result = randn() + dtype.type(1.0j) * randn()
    else:
        result = randn()
    return result.item() if _is_python_scalar(x) else result


def numerical_jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
                  eps: float = EPS) -> Any:
    """The central-difference JVP of ``f`` at ``primals`` along ``tangents``."""
    delta = _scalar_mul(tangents, eps)
    f_pos = f(*_add(primals, delta))
    f_neg = f(*_sub(primals, delta))
    return _scalar_mul(_safe_sub(f_pos, f_neg), 0.5 / eps)


def _merge_tolerance(tol: Any, default: dict) -> Any:
    if tol is None:
        return default
    if not isinstance(tol, dict):
        return tol
    out = dict(default)
    for k, v in tol.items():
        out[np.dtype(k)] = v
    return out


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence[Any], atol: Any = None,
              rtol: Any = None, eps: float = EPS, err_msg: str = "") -> None:
    """Checks ``f_jvp`` (typically ``partial(jax.jvp, f)``) against central differences
    in one random direction (``jax.test_util.check_jvp``)."""
    atol = _merge_tolerance(atol, default_gradient_tolerance)
    rtol = _merge_tolerance(rtol, default_gradient_tolerance)
    rng = np.random.RandomState(0)
    tangent = tree_map(functools.partial(_rand_like, rng), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes_match(v_out, t_out)
    v_out_expected = f(*args)
    _check_dtypes_match(v_out, v_out_expected)
    t_out_expected = numerical_jvp(f, args, tangent, eps=eps)
    check_close(v_out, v_out_expected, atol=atol, rtol=rtol,
                err_msg=f"{err_msg} primal" if err_msg else "primal")
    check_close(t_out, t_out_expected, atol=atol, rtol=rtol,
                err_msg=f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence[Any], atol: Any = None,
              rtol: Any = None, eps: float = EPS, err_msg: str = "") -> None:
    """Checks ``f_vjp`` (typically ``partial(jax.vjp, f)``) against central differences
    through ``<t, vjp(ct)> == <jvp(t), ct>`` (``jax.test_util.check_vjp``)."""
    atol = _merge_tolerance(atol, default_gradient_tolerance)
    rtol = _merge_tolerance(rtol, default_gradient_tolerance)
    rand_like = functools.partial(_rand_like, np.random.RandomState(0))
    v_out, vjpfun = f_vjp(*args)
    v_out_expected = f(*args)
    check_close(v_out, v_out_expected, atol=atol, rtol=rtol,
                err_msg=f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_map(rand_like, args)
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_map(rand_like, v_out)
    cotangent_out = _conj(vjpfun(_conj(cotangent)))
    ip = _inner_prod(tangent, cotangent_out)
    ip_expected = _inner_prod(tangent_out, cotangent)
    check_close(ip, ip_expected, atol=atol, rtol=rtol,
                err_msg=f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def _jvp_from_lin(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    primal_out, f_lin = autodiff.linearize(f, *primals)
    return primal_out, f_lin(*tangents)


def check_grads(f: Callable, args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: Any = None, rtol: Any = None,
                eps: float | None = None) -> None:
    """Checks the derivatives of ``f`` at ``args`` up to ``order`` against finite
    differences, in the modes ``fwd``, ``rev`` and/or ``lin`` (``jax.test_util.check_grads``)."""
    args = tuple(args)
    eps = eps or EPS
    _check_jvp = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    _check_vjp = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def _check_grads(f, args, order, err_msg=""):
        if "fwd" in modes:
            fwd_msg = f"JVP of {err_msg}" if err_msg else "JVP"
            _check_jvp(f, functools.partial(autodiff.jvp, f), args, err_msg=fwd_msg)
            if order > 1:
                _check_grads(functools.partial(autodiff.jvp, f), (args, args), order - 1,
                             fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {err_msg}" if err_msg else "VJP"
            _check_vjp(f, functools.partial(autodiff.vjp, f), args, err_msg=rev_msg)
            if order > 1:
                def f_vjp(*args):
                    out_primal_py, vjp_py = autodiff.vjp(f, *args)
                    return vjp_py(out_primal_py)
                _check_grads(f_vjp, args, order - 1, rev_msg)
        if "lin" in modes:
            lin_msg = f"LIN of {err_msg}" if err_msg else "LIN"
            _check_jvp(f, functools.partial(_jvp_from_lin, f), args, err_msg=lin_msg)
            if order > 1:
                _check_grads(functools.partial(_jvp_from_lin, f), (args, args), order - 1,
                             lin_msg)

    _check_grads(f, args, order)
