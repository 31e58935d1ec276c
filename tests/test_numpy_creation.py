"""Array creation, the jnp scalar types and dtype utilities, against numpy and JAX's rules.

More creation cases (warnings, errors, weak types) are pinned from JAX in
data/numpy_exprs.txt and run by test_numpy_oracle.py.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tinyxla
import tinyxla.numpy as jnp

DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
          "bfloat16", "float32", "complex64"]
SHAPES = [(), (0,), (4,), (3, 4), (2, 3, 4)]


def _np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_asarray_numpy_roundtrip(dtype, shape):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 7).astype(_np_dtype(dtype))
    a = jnp.asarray(x)
    assert a.dtype == x.dtype and a.shape == x.shape and not a.weak_type
    np.testing.assert_array_equal(np.asarray(a), x)
    b = jnp.array(x.tolist() if shape else x.item(), dtype=dtype)
    assert b.dtype == x.dtype and b.shape == x.shape
    np.testing.assert_array_equal(np.asarray(b), x)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_filled(dtype, shape):
    for fn, value in ((jnp.zeros, 0), (jnp.ones, 1), (jnp.empty, 0)):
        a = fn(shape, dtype)
        assert a.dtype == _np_dtype(dtype) and a.shape == shape and not a.weak_type
        np.testing.assert_array_equal(np.asarray(a), np.full(shape, value, _np_dtype(dtype)))
    a = jnp.full(shape, 3, dtype)
    np.testing.assert_array_equal(np.asarray(a), np.full(shape, 3, _np_dtype(dtype)))
    proto = jnp.zeros(shape, dtype)
    for fn, value in ((jnp.zeros_like, 0), (jnp.ones_like, 1), (jnp.empty_like, 0)):
        b = fn(proto)
        assert b.dtype == proto.dtype and b.shape == shape
        np.testing.assert_array_equal(np.asarray(b), np.full(shape, value, _np_dtype(dtype)))
    c = jnp.full_like(proto, 2, dtype=jnp.float32, shape=(2,) + shape)
    assert c.dtype == jnp.float32 and c.shape == (2,) + shape


def test_default_dtypes_and_weak_types():
    assert jnp.zeros(3).dtype == jnp.float32
    assert jnp.full(3, 1).dtype == jnp.int32 and jnp.full(3, 1).weak_type
    assert jnp.full(3, 1.0).weak_type and not jnp.full(3, 1.0, jnp.float32).weak_type
    assert jnp.asarray(2).weak_type and not jnp.array([1, 2]).weak_type
    assert jnp.zeros_like(jnp.asarray(1.0)).weak_type
    assert not jnp.zeros_like(jnp.asarray(1.0), dtype=jnp.float32).weak_type
    assert jnp.arange(3).dtype == jnp.int32 and jnp.arange(3.0).dtype == jnp.float32
    assert jnp.eye(2).dtype == jnp.float32 and jnp.linspace(0, 1).dtype == jnp.float32


def test_x64_defaults(x64):
    assert jnp.zeros(3).dtype == jnp.float64
    assert jnp.arange(3).dtype == jnp.int64
    assert jnp.array([1.5]).dtype == jnp.float64
    assert (jnp.ones(2, jnp.int32) + 2**40).dtype == jnp.int32
    assert jnp.sum(jnp.ones(3, jnp.int32)).dtype == jnp.int64
    assert jnp.mean(jnp.arange(3)).dtype == jnp.float64


def test_float64_request_truncates_with_warning():
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in "
                                         "zeros is not available"):
        a = jnp.zeros(3, dtype=jnp.float64)
    assert a.dtype == jnp.float32


@pytest.mark.parametrize("args", [(5,), (2, 9), (1, 10, 3), (10, 1, -2), (0.5, 3.0, 0.5),
                                  (-3,), (0, 1, 0.1), (3, 3)])
@pytest.mark.parametrize("dtype", [None, "int32", "float32", "uint8", "float16"])
def test_arange(args, dtype):
    if dtype == "uint8" and min(args) < 0 or dtype in ("int32", "uint8") and \
            any(isinstance(a, float) for a in args):
        pytest.skip("numpy's arange differs from JAX's for these conversions")
    got = jnp.arange(*args, dtype=dtype)
    want = np.arange(*args, dtype=dtype)
    if dtype is None:
        want = want.astype(np.float32 if want.dtype.kind == "f" else np.int32)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-3 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("num", [0, 1, 2, 5, 50])
@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("dtype", [None, "float32", "int32", "float16"])
def test_linspace(num, endpoint, dtype):
    got, step = jnp.linspace(-1, 3, num, endpoint=endpoint, retstep=True, dtype=dtype)
    want, want_step = np.linspace(-1, 3, num, endpoint=endpoint, retstep=True, dtype=dtype)
    assert got.shape == want.shape
    assert got.dtype == (np.float32 if dtype is None else np.dtype(dtype))
    np.testing.assert_allclose(np.asarray(got), want.astype(np.asarray(got).dtype),
                               rtol=2e-3, atol=2e-3)
    if num > 1:
        np.testing.assert_allclose(float(step), want_step, rtol=2e-3 if dtype else 1e-6)


def test_linspace_array_bounds_and_axis():
    lo, hi = np.array([0.0, 1.0]), np.array([[2.0], [3.0]])
    for axis in (0, 1, -1):
        got = jnp.linspace(jnp.asarray(lo), jnp.asarray(hi), 4, axis=axis)
        np.testing.assert_allclose(np.asarray(got), np.linspace(lo, hi, 4, axis=axis),
                                   rtol=1e-6)


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (3, 4, 1), (4, 3, -2), (0, 0, 0), (2, 5, 7)])
@pytest.mark.parametrize("dtype", [None, "int8", "bool", "complex64"])
def test_eye_identity(n, m, k, dtype):
    got = jnp.eye(n, m, k, dtype=dtype)
    want = np.eye(n, m, k, dtype=dtype or np.float32)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(jnp.identity(n, dtype)),
                                  np.identity(n, dtype or np.float32))


def test_nested_lists_and_arrays():
    x = jnp.array([[1, 2.5], [3, 4]])
    assert x.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(x), [[1, 2.5], [3, 4]])
    y = jnp.array([jnp.ones(2, jnp.int8), np.zeros(2, np.int8)])
    assert y.dtype == jnp.int8 and y.shape == (2, 2)
    z = jnp.array([x, x])
    assert z.shape == (2, 2, 2)
    assert jnp.array(x) is not None and jnp.asarray(x) is x


@pytest.mark.parametrize("name", ["bool_", "int8", "int16", "int32", "uint8", "uint16",
                                  "uint32", "float16", "bfloat16", "float32", "complex64"])
def test_scalar_types(name):
    t = getattr(jnp, name)
    dt = _np_dtype(name.rstrip("_"))
    assert np.dtype(t) == dt and t.dtype == dt
    a = t(3)
    assert a.dtype == dt and a.shape == () and not a.weak_type
    b = t([1, 2])
    assert b.dtype == dt and b.shape == (2,)
    assert jnp.zeros(2, t).dtype == dt
    assert jnp.ones(2).astype(t).dtype == dt
    assert t == dt.type and hash(t) == hash(dt.type)
    assert isinstance(dt.type(1), t)


def test_dtype_utilities():
    assert jnp.dtype("float32") == np.float32
    assert jnp.result_type(jnp.int8, jnp.uint8) == jnp.int16
    assert jnp.result_type(jnp.ones(2, jnp.int8), 1.0) == jnp.float32
    assert jnp.promote_types(jnp.bfloat16, jnp.float16) == jnp.float32
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.issubdtype(jnp.int8, jnp.integer) and not jnp.issubdtype(jnp.int8, jnp.floating)
    assert jnp.finfo(jnp.bfloat16).bits == 16 and jnp.iinfo(jnp.int8).max == 127
    assert jnp.ndarray is tinyxla.Array and isinstance(jnp.ones(2), jnp.ndarray)
    assert jnp.pi == np.pi and jnp.e == np.e and jnp.newaxis is None
    assert np.isinf(jnp.inf) and np.isnan(jnp.nan)
