"""Shape functions and tensor products against numpy, on several shapes and dtypes.

reshape, ravel, transpose, swapaxes, moveaxis, expand_dims, squeeze, broadcast_to,
broadcast_arrays, concatenate, stack, hstack, vstack, dstack, atleast_*d, flip, and
dot, matmul, vdot, tensordot, inner, outer. Shape functions must match exactly;
products within JAX's tolerances. Errors and dtypes are pinned in test_numpy_oracle.py.
"""
from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import tinyxla.numpy as jnp

DTYPES = ["bool", "int8", "uint32", "bfloat16", "float32", "complex64"]


def rand(shape, dtype: str, seed) -> np.ndarray:
    rng = np.random.default_rng(zlib.crc32(repr(seed).encode()))
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind in "iu":
        return np.asarray(rng.integers(0, 9, size=shape)).astype(dt)
    x = np.asarray(rng.standard_normal(shape))
    if dt.kind == "c":
        x = x + 1j * np.asarray(rng.standard_normal(shape))
    return x.astype(dt)


def _same(got, want) -> None:
    want = np.asarray(want)
    assert got.shape == want.shape
    assert np.dtype(got.dtype) == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


# (function, args after the array, numpy equivalent or None for the same name)
SHAPE_CASES = [
    ((6,), "reshape", ((2, 3),)), ((6,), "reshape", ((3, -1),)), ((2, 3), "reshape", (-1,)),
    ((2, 3, 4), "reshape", ((4, 6),)), ((0, 3), "reshape", ((3, 0),)), ((), "reshape", ((1, 1),)),
    ((2, 3), "ravel", ()), ((2, 3, 4), "ravel", ()), ((), "ravel", ()),
    ((2, 3), "transpose", ()), ((2, 3, 4), "transpose", ((2, 0, 1),)),
    ((2, 3, 4), "transpose", ((-1, 0, 1),)), ((), "transpose", ()),
    ((2, 3, 4), "swapaxes", (0, 2)), ((2, 3, 4), "swapaxes", (-1, 1)),
    ((2, 3, 4), "moveaxis", (0, -1)), ((2, 3, 4), "moveaxis", ((0, 1), (2, 0))),
    ((3,), "expand_dims", (0,)), ((2, 3), "expand_dims", ((0, 3),)),
    ((2, 3), "expand_dims", (-1,)), ((), "expand_dims", (0,)),
    ((1, 3, 1), "squeeze", ()), ((1, 3, 1), "squeeze", (2,)), ((1, 3, 1), "squeeze", ((0, -1),)),
    ((3,), "broadcast_to", ((2, 3),)), ((3, 1), "broadcast_to", ((2, 3, 4),)),
    ((), "broadcast_to", ((2, 2),)), ((0, 1), "broadcast_to", ((2, 0, 3),)),
    ((2, 3), "flip", ()), ((2, 3, 4), "flip", (1,)), ((2, 3, 4), "flip", ((0, -1),)),
    ((3,), "atleast_1d", ()), ((), "atleast_1d", ()), ((), "atleast_2d", ()),
    ((3,), "atleast_2d", ()), ((2, 3), "atleast_3d", ()), ((3,), "atleast_3d", ()),
    ((), "atleast_3d", ()), ((2, 3, 4), "matrix_transpose", ()),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,name,args", SHAPE_CASES,
                         ids=[f"{n}-{s}-{a}" for s, n, a in SHAPE_CASES])
def test_shape_function(shape, name, args, dtype):
    x = rand(shape, dtype, (shape, name, dtype))
    got = getattr(jnp, name)(jnp.asarray(x), *args)
    _same(got, getattr(np, name)(x, *args))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_order_f(dtype):
    x = rand((2, 3, 4), dtype, "F")
    _same(jnp.reshape(jnp.asarray(x), (4, 6), order="F"), np.reshape(x, (4, 6), order="F"))
    _same(jnp.ravel(jnp.asarray(x), order="F"), np.ravel(x, order="F"))


JOIN_CASES = [
    ("concatenate", [(3,), (2,)], dict()), ("concatenate", [(2, 3), (2, 2)], dict(axis=1)),
    ("concatenate", [(2, 3), (1, 3), (0, 3)], dict(axis=0)),
    ("concatenate", [(2, 3), (2,)], dict(axis=None)),
    ("concatenate", [(2, 1, 3), (2, 4, 3)], dict(axis=-2)),
    ("stack", [(3,), (3,)], dict()), ("stack", [(2, 3), (2, 3), (2, 3)], dict(axis=1)),
    ("stack", [(2, 3), (2, 3)], dict(axis=-1)), ("stack", [(), ()], dict()),
    ("hstack", [(3,), (2,)], dict()), ("hstack", [(2, 1), (2, 3)], dict()),
    ("hstack", [(), ()], dict()),
    ("vstack", [(3,), (3,)], dict()), ("vstack", [(2, 3), (1, 3)], dict()),
    ("dstack", [(3,), (3,)], dict()), ("dstack", [(2, 2), (2, 2)], dict()),
    ("dstack", [(2, 2, 1), (2, 2, 3)], dict()),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,shapes,kwargs", JOIN_CASES,
                         ids=[f"{n}-{s}-{k}" for n, s, k in JOIN_CASES])
def test_join(name, shapes, kwargs, dtype):
    xs = [rand(s, dtype, (name, i, s)) for i, s in enumerate(shapes)]
    got = getattr(jnp, name)([jnp.asarray(x) for x in xs], **kwargs)
    _same(got, getattr(np, name)(xs, **kwargs))


def test_join_array_argument():
    x = rand((2, 3, 4), "float32", "join")
    for name in ("concatenate", "stack", "hstack", "vstack", "dstack"):
        _same(getattr(jnp, name)(jnp.asarray(x)), getattr(np, name)(x))
    _same(jnp.concatenate(jnp.asarray(x), axis=1), np.concatenate(x, axis=1))


def test_join_promotes_dtypes():
    a, b = jnp.ones(2, jnp.int8), jnp.ones(2, jnp.uint8)
    assert jnp.concatenate([a, b]).dtype == jnp.int16
    assert jnp.stack([a, b]).dtype == jnp.int16
    assert jnp.stack([jnp.asarray(1), jnp.asarray(2.0)]).dtype == jnp.float32
    assert jnp.concatenate([a, b], dtype=jnp.float32).dtype == jnp.float32


@pytest.mark.parametrize("shapes", [[(3,), (2, 1)], [(2, 1, 4), (3, 1)], [(), (3, 4)],
                                    [(0,), (1,)], [(1, 3), (4, 1), (4, 3)]])
def test_broadcast_arrays_and_shapes(shapes):
    xs = [rand(s, "float32", s) for s in shapes]
    got = jnp.broadcast_arrays(*[jnp.asarray(x) for x in xs])
    for g, w in zip(got, np.broadcast_arrays(*xs)):
        _same(g, w)
    assert jnp.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


def test_shape_queries():
    x = jnp.ones((2, 3))
    assert jnp.shape(x) == (2, 3) and jnp.ndim(x) == 2 and jnp.size(x) == 6
    assert jnp.size(x, 1) == 3 and jnp.size(x, (0, 1)) == 6
    assert jnp.shape(3.0) == () and jnp.ndim(3) == 0 and jnp.size(2.0) == 1
    assert jnp.isscalar(1) and jnp.isscalar(jnp.ones(())) and not jnp.isscalar(x)
    assert not jnp.isscalar([1]) and jnp.isscalar(np.float32(1))


# ---------------------------------------------------------------------------------------
# Products

_PTOL = {"float32": 1e-5, "bfloat16": 2e-2, "complex64": 1e-5, "float16": 5e-3}


def _close(got, want) -> None:
    want = np.asarray(want)
    got_np = np.asarray(got)
    assert got_np.shape == want.shape
    name = np.dtype(got.dtype).name
    if name in _PTOL:
        t = _PTOL[name]
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
        np.testing.assert_allclose(got_np.astype(want.dtype), want, rtol=t, atol=t * scale)
    else:
        np.testing.assert_array_equal(got_np, want.astype(got_np.dtype))


def _ref_dtype(dtype: str) -> np.dtype:
    return {"bfloat16": np.dtype(np.float64), "float32": np.dtype(np.float64),
            "complex64": np.dtype(np.complex128)}.get(dtype, np.dtype(dtype))


PRODUCT_CASES = [
    ("dot", (3,), (3,), {}), ("dot", (2, 3), (3,), {}), ("dot", (2, 3), (3, 4), {}),
    ("dot", (2, 3, 4), (5, 4, 2), {}), ("dot", (), (3,), {}), ("dot", (3,), (3, 2), {}),
    ("dot", (0, 3), (3, 2), {}),
    ("matmul", (2, 3), (3, 4), {}), ("matmul", (3,), (3, 4), {}), ("matmul", (2, 3), (3,), {}),
    ("matmul", (3,), (3,), {}), ("matmul", (5, 2, 3), (3, 4), {}),
    ("matmul", (2, 1, 2, 3), (3, 3, 2), {}), ("matmul", (3,), (2, 3, 4), {}),
    ("matmul", (2, 2, 3), (3,), {}), ("matmul", (1, 2, 3), (4, 3, 2), {}),
    ("vdot", (3,), (3,), {}), ("vdot", (2, 3), (3, 2), {}),
    ("tensordot", (2, 3, 4), (3, 4), dict(axes=2)), ("tensordot", (2, 3), (3, 2), dict(axes=1)),
    ("tensordot", (2, 3), (2, 3), dict(axes=0)), ("tensordot", (2, 3), (3, 2), dict(axes=(1, 0))),
    ("tensordot", (2, 3, 4), (4, 3, 2), dict(axes=([1, 2], [1, 0]))),
    ("inner", (2, 3), (4, 3), {}), ("inner", (3,), (3,), {}), ("inner", (), (2, 3), {}),
    ("outer", (3,), (4,), {}), ("outer", (2, 2), (3,), {}), ("outer", (), (2,), {}),
]


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "bfloat16", "float32", "complex64",
                                   "bool"])
@pytest.mark.parametrize("name,sa,sb,kwargs", PRODUCT_CASES,
                         ids=[f"{n}-{a}-{b}-{k}" for n, a, b, k in PRODUCT_CASES])
def test_products(name, sa, sb, kwargs, dtype):
    a = rand(sa, dtype, (name, sa, 0))
    b = rand(sb, dtype, (name, sb, 1))
    got = getattr(jnp, name)(jnp.asarray(a), jnp.asarray(b), **kwargs)
    assert np.dtype(got.dtype).name == dtype
    rd = _ref_dtype(dtype)
    want = getattr(np, name)(a.astype(rd), b.astype(rd), **kwargs)
    if dtype == "bool":
        want = np.asarray(want).astype(bool)
    _close(got, np.asarray(want).astype(rd) if dtype != "bool" else want)


def test_matmul_operator_and_mixed_dtypes():
    a = rand((2, 3), "int8", "mm0")
    b = rand((3, 2), "uint8", "mm1")
    got = jnp.asarray(a) @ jnp.asarray(b)
    assert got.dtype == jnp.int16
    np.testing.assert_array_equal(np.asarray(got), a.astype(np.int16) @ b.astype(np.int16))
    got = jnp.dot(jnp.ones(3, jnp.float16), jnp.ones(3, jnp.float32))
    assert got.dtype == jnp.float32 and float(got) == 3.0
