"""Reductions against numpy: axes (None, int, negative, tuples), keepdims, dtype, where, initial.

Values are compared with numpy computing in the result dtype JAX gives (sum(int8) is
int32, mean(int) float32, f16 accumulates in f32); floats within JAX's tolerances.
"""
from __future__ import annotations

import warnings
import zlib

import ml_dtypes
import numpy as np
import pytest

import tinyxla.numpy as jnp

DTYPES = ["bool", "int8", "int32", "uint8", "uint32", "float16", "bfloat16", "float32",
          "complex64"]
SHAPES_AXES = [((), None), ((4,), None), ((4,), 0), ((4,), -1), ((3, 4), None), ((3, 4), 0),
               ((3, 4), 1), ((3, 4), -1), ((3, 4), (0, 1)), ((2, 3, 4), None),
               ((2, 3, 4), 1), ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 0)), ((0,), None),
               ((0, 3), 0), ((0, 3), 1)]
# keepdims=True is exercised on these (shape, axis) pairs only, to keep the suite fast.
_KEEPDIMS = {((4,), None), ((3, 4), 1), ((2, 3, 4), (0, 2)), ((0, 3), 0), ((), None)}
_TOL = {"float16": 5e-3, "bfloat16": 3e-2, "float32": 2e-6, "complex64": 2e-6}


def _np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def rand(shape, dtype: str, seed) -> np.ndarray:
    rng = np.random.default_rng(zlib.crc32(repr(seed).encode()))
    dt = _np_dtype(dtype)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) < 0.6)
    if dt.kind in "iu":
        return np.asarray(rng.integers(0 if dt.kind == "u" else -3, 4, size=shape)).astype(dt)
    x = np.asarray(rng.standard_normal(shape))
    if dt.kind == "c":
        x = x + 1j * np.asarray(rng.standard_normal(shape))
    return x.astype(dt)


def _compare(got, want, name: str | None = None) -> None:
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    dname = np.dtype(got.dtype).name
    if dname in _TOL:
        t = _TOL[dname]
        np.testing.assert_allclose(got_np.astype(np.complex128 if dname.startswith("c")
                                                 else np.float64), want, rtol=t, atol=t,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want.astype(got_np.dtype))


def _hi(dt: np.dtype) -> np.dtype:
    """Where numpy computes the reference for a result dtype."""
    if dt.kind == "c":
        return np.dtype(np.complex128)
    if dt.kind == "f" or dt == np.dtype(ml_dtypes.bfloat16):
        return np.dtype(np.float64)
    return dt


def _cases(fun_names, dtypes=DTYPES):
    for name in fun_names:
        for dtype in dtypes:
            for shape, axis in SHAPES_AXES:
                for keepdims in ((False, True) if (shape, axis) in _KEEPDIMS else (False,)):
                    yield pytest.param(name, dtype, shape, axis, keepdims,
                                       id=f"{name}-{dtype}-{shape}-{axis}-{keepdims}")


_SUM_LIKE = {"sum": np.sum, "prod": np.prod, "nansum": np.nansum}


@pytest.mark.parametrize("name,dtype,shape,axis,keepdims", list(_cases(_SUM_LIKE)))
def test_sum_prod(name, dtype, shape, axis, keepdims):
    x = rand(shape, dtype, (name, dtype, shape))
    got = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
    out = np.dtype(got.dtype)
    want = _SUM_LIKE[name](x.astype(_hi(out)), axis=axis, keepdims=keepdims)
    _compare(got, want)


_EXTREMES = {"max": np.max, "min": np.min, "amax": np.amax, "amin": np.amin,
             "ptp": np.ptp}


@pytest.mark.parametrize("name,dtype,shape,axis,keepdims",
                         list(_cases(_EXTREMES, [d for d in DTYPES if d != "complex64"])))
def test_max_min(name, dtype, shape, axis, keepdims):
    x = rand(shape, dtype, (name, dtype, shape))
    if name == "ptp" and dtype == "bool":
        pytest.skip("bool subtraction is an error in JAX as in numpy")
    empty = x.size == 0 and (axis is None or any(
        x.shape[a] == 0 for a in np.atleast_1d(axis)))
    if empty:
        with pytest.raises(ValueError, match="zero-size array to reduction operation"):
            getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
        return
    got = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
    assert got.dtype == x.dtype
    _compare(got, _EXTREMES[name](x.astype(_hi(x.dtype)), axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name,dtype,shape,axis,keepdims", list(_cases(["all", "any"])))
def test_all_any(name, dtype, shape, axis, keepdims):
    x = rand(shape, dtype, (name, dtype, shape))
    got = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
    assert got.dtype == np.bool_
    _compare(got, getattr(np, name)(x.astype(_hi(x.dtype)), axis=axis, keepdims=keepdims))


_MOMENTS = {"mean": np.mean, "var": np.var, "std": np.std, "nanmean": np.nanmean}


@pytest.mark.parametrize("name,dtype,shape,axis,keepdims", list(_cases(_MOMENTS)))
def test_mean_var_std(name, dtype, shape, axis, keepdims):
    x = rand(shape, dtype, (name, dtype, shape))
    got = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's empty-slice warnings
        want = _MOMENTS[name](x.astype(_hi(np.dtype(np.float64) if x.dtype.kind in "biu"
                                                else x.dtype)), axis=axis, keepdims=keepdims)
    _compare(got, want)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("name", ["var", "std"])
def test_ddof(name, ddof):
    x = rand((3, 4), "float32", ("ddof", name))
    for axis in (None, 0, 1):
        got = getattr(jnp, name)(jnp.asarray(x), axis=axis, ddof=ddof)
        _compare(got, getattr(np, name)(x.astype(np.float64), axis=axis, ddof=ddof))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "complex64"])
@pytest.mark.parametrize("shape,axis", [((4,), None), ((4,), 0), ((3, 4), None),
                                        ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin(name, dtype, shape, axis, keepdims):
    x = rand(shape, dtype, (name, dtype, shape))
    got = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
    assert got.dtype == np.int32
    _compare(got, getattr(np, name)(x, axis=axis, keepdims=keepdims))


def test_reduction_dtype_argument():
    x = rand((3, 4), "int8", "dtype")
    assert jnp.sum(jnp.asarray(x), dtype=jnp.float32).dtype == np.float32
    assert jnp.sum(jnp.asarray(x), dtype=jnp.int8).dtype == np.int8
    _compare(jnp.sum(jnp.asarray(x), axis=0, dtype=jnp.int8), np.sum(x, axis=0, dtype=np.int8))
    assert jnp.mean(jnp.asarray(x), dtype=jnp.float16).dtype == np.float16
    assert jnp.prod(jnp.asarray(x), dtype=jnp.int32).dtype == np.int32


@pytest.mark.parametrize("name,initial", [("sum", 10), ("prod", 2), ("max", 100), ("min", -100),
                                          ("max", -100)])
def test_initial_and_where(name, initial):
    x = rand((3, 4), "int32", ("initial", name))
    where = rand((3, 4), "bool", ("where", name))
    got = getattr(jnp, name)(jnp.asarray(x), axis=1, initial=initial, where=jnp.asarray(where))
    want = getattr(np, name)(x, axis=1, initial=initial, where=where)
    _compare(got, want)
