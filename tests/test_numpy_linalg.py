"""jnp.linalg.norm and vector_norm against numpy (float64 references), with JAX's
dtypes, errors and gradients."""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.test_util import check_grads


def _x(*shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 2).astype(np.float32)


@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0.5, 0, np.inf, -np.inf, -1])
@pytest.mark.parametrize("shape,axis", [((7,), None), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -1)])
def test_vector_norms(ord, shape, axis):
    x = _x(*shape)
    want = np.linalg.norm(x.astype(np.float64), ord, axis=axis)
    got = jnp.linalg.norm(x, ord, axis=axis)
    assert got.dtype == np.float32 and got.shape == np.shape(want)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5)
    got_kd = jnp.linalg.norm(x, ord, axis=axis, keepdims=True)
    np.testing.assert_allclose(np.asarray(got_kd),
                               np.linalg.norm(x.astype(np.float64), ord, axis=axis,
                                              keepdims=True), rtol=2e-5)


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf])
@pytest.mark.parametrize("axis", [None, (0, 1), (1, 0), (-1, -2)])
def test_matrix_norms(ord, axis):
    x = _x(3, 5)
    want = np.linalg.norm(x.astype(np.float64), ord, axis=axis)
    np.testing.assert_allclose(np.asarray(jnp.linalg.norm(x, ord, axis=axis)), want, rtol=2e-5)
    want_kd = np.linalg.norm(x.astype(np.float64), ord, axis=axis or (0, 1), keepdims=True)
    got_kd = jnp.linalg.norm(x, ord, axis=axis or (0, 1), keepdims=True)
    assert got_kd.shape == want_kd.shape
    np.testing.assert_allclose(np.asarray(got_kd), want_kd, rtol=2e-5)


def test_batched_matrix_norm_and_any_rank():
    x = _x(4, 3, 5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.norm(x, 1, axis=(1, 2))),
                               np.linalg.norm(x.astype(np.float64), 1, axis=(1, 2)), rtol=2e-5)
    # axis=None, ord=None: the 2-norm of all elements at any rank (numpy's undocumented
    # behaviour that JAX keeps).
    np.testing.assert_allclose(float(jnp.linalg.norm(x)), np.sqrt((x.astype(np.float64) ** 2).sum()),
                               rtol=1e-6)


def test_dtypes():
    assert jnp.linalg.norm(np.arange(4)).dtype == np.float32
    c = np.array([3 + 4j, 1 - 1j], np.complex64)
    got = jnp.linalg.norm(c)
    assert got.dtype == np.float32
    np.testing.assert_allclose(float(got), np.linalg.norm(c), rtol=1e-6)
    np.testing.assert_allclose(float(jnp.linalg.norm(c, 3)), np.linalg.norm(c, 3), rtol=1e-5)
    h = np.array([1., 2., 3.], np.float16)
    got16 = jnp.linalg.norm(h, 3)
    assert got16.dtype == np.float16
    np.testing.assert_allclose(float(got16), np.linalg.norm(h.astype(np.float64), 3), rtol=2e-3)
    v0 = jnp.linalg.vector_norm(np.array([0., 1., 0., 2.], np.float32), ord=0)
    assert v0.dtype == np.float32 and float(v0) == 2.0


def test_errors():
    x = _x(3, 5)
    with pytest.raises(ValueError, match="Invalid order 'bad' for matrix norm."):
        jnp.linalg.norm(x, "bad")
    with pytest.raises(ValueError, match="Invalid order 'inf' for vector norm.Use 'jax.numpy.inf'"):
        jnp.linalg.norm(x[0], "inf")
    with pytest.raises(ValueError, match="Improper number of axes for norm"):
        jnp.linalg.norm(np.ones((2, 2, 2)), axis=(0, 1, 2))


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@pytest.mark.parametrize("axis,keepdims", [((0, 1), False), ((1, 0), True), ((-1, -2), False)])
def test_matrix_norms_from_singular_values(ord, axis, keepdims):
    x = np.random.default_rng(2).standard_normal((3, 4, 5)).astype(np.float32)
    got = jnp.linalg.norm(x, ord, axis=axis, keepdims=keepdims)
    want = np.linalg.norm(x, ord, axis=axis, keepdims=keepdims)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_jit_and_grads(x64):
    x = np.random.default_rng(1).standard_normal((3, 4))
    np.testing.assert_allclose(np.asarray(jax.jit(jnp.linalg.norm, static_argnames="axis")(x, axis=1)),
                               np.linalg.norm(x, axis=1), rtol=1e-12)
    g = jax.grad(jnp.linalg.norm)(x)
    np.testing.assert_allclose(np.asarray(g), x / np.linalg.norm(x), rtol=1e-12)
    check_grads(lambda x: jnp.linalg.norm(x, axis=1), (x,), 2)
    check_grads(lambda x: jnp.linalg.norm(x, 3, axis=0), (x,), 1)
    check_grads(lambda x: jnp.linalg.norm(x, "fro"), (x,), 2)
