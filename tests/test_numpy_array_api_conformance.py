"""Regressions found by running the public Array API conformance suite
(data-apis/array-api-tests) against tinyxla.numpy (see scripts/array_api_conformance.sh):
each test is one departure from the standard that JAX 0.10.2 does not share."""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp

_UFUNCS = sorted(n for n, v in vars(jnp).items() if isinstance(v, jnp.ufunc))


def test_the_namespace_has_the_builtin_ufuncs():
    assert _UFUNCS == ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp",
                       "logaddexp2", "logical_and", "logical_or", "logical_xor", "maximum",
                       "minimum", "multiply", "negative", "subtract"]


@pytest.mark.parametrize("name", _UFUNCS)
def test_builtin_ufunc_signature_lists_every_input(name):
    # inspect read the staticmethod __call__ as bound and dropped the first input:
    # add showed as (y, /) and negative as (), failing the suite's signature tests.
    f = getattr(jnp, name)
    params = list(inspect.signature(f).parameters.values())
    assert [p.kind for p in params] == [inspect.Parameter.POSITIONAL_ONLY] * f.nin
    args = [np.array([1, 2, 3], np.int32), np.array([3, 1, 2], np.int32)][:f.nin]
    bound = inspect.signature(f).bind(*args)
    ref = getattr(np, name)(*args) if hasattr(np, name) else None
    if ref is not None:
        np.testing.assert_allclose(np.asarray(f(*bound.args)), ref)


def test_ufunc_class_signature_is_its_constructors():
    assert list(inspect.signature(jnp.ufunc).parameters)[:3] == ["func", "nin", "nout"]


# JAX clips a Python int k to int32's range; tinyxla raised OverflowError for |k| >= 2**63.
@pytest.mark.parametrize("n, m, k", [(0, None, 2**63), (3, None, 2**63), (3, 4, -2**63 - 5),
                                     (3, None, 2**70), (2, 5, 2**31), (5, 2, -2**31 - 1)])
def test_eye_accepts_any_python_int_offset(x64, n, m, k):
    out = jnp.eye(n, m, k=k)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(out), np.eye(n, m, k=k))


@pytest.mark.parametrize("k", [1, -2, True, np.int64(-1)])
def test_eye_offsets_match_numpy(k):
    np.testing.assert_array_equal(np.asarray(jnp.eye(4, 3, k=k)), np.eye(4, 3, k=int(k)))


@pytest.mark.parametrize("k", [1, -2, np.int64(-1)])
def test_eye_traced_offsets_match_numpy(k):
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda k: jnp.eye(4, 3, k=k))(k)),
                                  np.eye(4, 3, k=int(k)))


def test_eye_rejects_a_traced_bool_offset():
    # As JAX 0.10.2: only a Python bool is taken as an int.
    with pytest.raises(ValueError, match=r"k must be a scalar integer; got JitTracer\(bool\[\]\)"):
        jax.jit(lambda k: jnp.eye(4, 3, k=k))(True)


# take_along_axis(x, indices, /, *, axis=-1) in the Array API and JAX 0.10.2; tinyxla required
# axis and had no wrap_negative_indices. Values pinned from JAX 0.10.2.
_TAL_A = np.arange(12.).reshape(3, 4)
_TAL_I = np.array([[0, -1, 3], [1, 2, -4], [5, -5, 0]])
_NAN = float("nan")


@pytest.mark.parametrize("kwargs, expected", [
    ({}, [[0., 3., 3.], [5., 6., 4.], [_NAN, _NAN, 8.]]),
    ({"wrap_negative_indices": False}, [[0., _NAN, 3.], [5., 6., _NAN], [_NAN, _NAN, 8.]]),
    ({"mode": "clip"}, [[0., 3., 3.], [5., 6., 4.], [11., 8., 8.]]),
    ({"mode": "clip", "wrap_negative_indices": False},
     [[0., 0., 3.], [5., 6., 4.], [11., 8., 8.]]),
    ({"mode": "promise_in_bounds"}, [[0., 0., 3.], [5., 6., 4.], [11., 8., 8.]]),
])
def test_take_along_axis_defaults_to_the_last_axis(kwargs, expected):
    out = jnp.take_along_axis(jnp.asarray(_TAL_A), jnp.asarray(_TAL_I), **kwargs)
    np.testing.assert_array_equal(np.asarray(out), np.array(expected))
    jitted = jax.jit(lambda a, i: jnp.take_along_axis(a, i, **kwargs))(_TAL_A, _TAL_I)
    np.testing.assert_array_equal(np.asarray(jitted), np.array(expected))


def test_take_along_axis_signature_is_jaxs():
    params = inspect.signature(jnp.take_along_axis).parameters
    assert params["axis"].default == -1
    assert params["wrap_negative_indices"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["wrap_negative_indices"].default is None


# A boolean mask dimension of size 0 matches any array dimension (numpy and JAX 0.10.2);
# tinyxla raised IndexError, failing the suite's test_getitem_masking.
@pytest.mark.parametrize("x_shape, mask_shape, out_shape", [
    ((0, 1), (0, 0), (0,)), ((2, 1), (2, 0), (0,)), ((3, 0), (0, 0), (0,)),
    ((1, 0), (1, 0), (0,)), ((2, 3), (2,), (0, 3))])
def test_empty_mask_dims_match_any_dim(x_shape, mask_shape, out_shape):
    x, mask = np.zeros(x_shape, np.float32), np.zeros(mask_shape, bool)
    assert x[mask].shape == out_shape
    assert jnp.asarray(x)[jnp.asarray(mask)].shape == out_shape


# Messages pinned from JAX 0.10.2: the position is the mask's place in the index.
@pytest.mark.parametrize("x_shape, key, message", [
    ((0, 3), (np.zeros((0, 2), bool),), "in index 0: got (0, 2), expected [0, 3]"),
    ((2, 0), (np.zeros((2, 1), bool),), "in index 0: got (2, 1), expected [2, 0]"),
    ((0,), (np.zeros((3,), bool),), "in index 0: got (3,), expected [0]"),
    ((0, 2, 3), (np.zeros((0, 5), bool),), "in index 0: got (0, 5), expected [0, 2]"),
    ((2, 3, 4), (slice(None), np.zeros((2,), bool)), "in index 1: got (2,), expected [3]"),
    ((2, 3, 4), (0, np.zeros((2,), bool)), "in index 1: got (2,), expected [3]")])
def test_mismatched_mask_raises_jaxs_index_error(x_shape, key, message):
    with pytest.raises(IndexError, match="boolean index did not match shape of indexed "
                                         "array " + re.escape(message)):
        jnp.zeros(x_shape)[key]
