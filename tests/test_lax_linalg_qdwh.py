"""lax.linalg.qdwh (and scipy.linalg.polar's default method on it): values pinned from JAX
0.10.2, the polar identities, padded (dynamic_shape) input, jit, vmap, jvp and bad input."""
import numpy as np
import pytest
import scipy.linalg as sla

import tinyxla as jax
import tinyxla.numpy as jnp
import tinyxla.scipy.linalg as jsl
from tinyxla.lax import linalg as lax_linalg

X = np.array([[1., 2], [3, 4], [5, 7]], np.float32)
U_X = [[-0.6393457, 0.720977], [0.5625651, 0.20165291], [0.5241732, 0.66296923]]
H_X = [[3.6692157, 4.6407814], [4.6407814, 6.8893504]]


def _check_polar(x, u, h, atol):
    u, h = np.asarray(u), np.asarray(h)
    np.testing.assert_allclose(u @ h, x, atol=atol)
    np.testing.assert_allclose(u.conj().T @ u, np.eye(x.shape[1]), atol=atol)
    np.testing.assert_allclose(h, h.conj().T, atol=atol)
    assert np.linalg.eigvalsh(h).min() > -atol


def test_qdwh_pinned_against_jax():
    for f in (lax_linalg.qdwh, jax.jit(lax_linalg.qdwh)):
        u, h, k, converged = f(X)
        np.testing.assert_allclose(np.asarray(u), U_X, atol=2e-6)
        np.testing.assert_allclose(np.asarray(h), H_X, rtol=2e-6)
        assert int(k) == 4 and bool(converged)
        assert k.dtype == np.int32 and converged.dtype == np.bool_
    _check_polar(X, u, h, 1e-5)
    u_ref, h_ref = sla.polar(X.astype(np.float64))
    np.testing.assert_allclose(np.asarray(u), u_ref, atol=2e-6)


def test_qdwh_square_and_complex():
    a = np.array([[1., 2, 3], [5, 4, 2], [3, 2, 1]], np.float32)
    u, h, k, _ = lax_linalg.qdwh(a)
    np.testing.assert_allclose(np.asarray(h), [[4.7867975, 3.2516289, 1.230237],
                                               [3.2516289, 3.0638099, 2.0099697],
                                               [1.230237, 2.0099697, 2.906293]], rtol=2e-6)
    assert int(k) == 4
    z = np.array([[1 + 1j, 2], [0.5j, 3 - 1j], [1, 1j]], np.complex64)
    u, h, k, converged = lax_linalg.qdwh(z)
    np.testing.assert_allclose(np.asarray(u), [[0.51983774 + 0.46316195j, 0.43041164 + 0.02833784j],
                                               [-0.19836493 + 0.13239855j, 0.7802222 - 0.2931349j],
                                               [0.6756959 - 0.04250677j, -0.04250679 + 0.34272608j]],
                               atol=2e-6)
    assert u.dtype == np.complex64 and int(k) == 4 and bool(converged)
    _check_polar(z, u, h, 1e-5)


def test_qdwh_float64(x64):
    r = np.random.RandomState(0).randn(6, 4)
    u, h, _, converged = lax_linalg.qdwh(r)
    assert u.dtype == np.float64 and bool(converged)
    _check_polar(r, u, h, 1e-12)


def test_qdwh_max_iterations_and_padding():
    u, h, k, converged = lax_linalg.qdwh(X, max_iterations=2)
    assert int(k) == 2 and not bool(converged)
    pad = np.zeros((4, 3), np.float32)
    pad[:3, :2] = X
    u, h, k, converged = lax_linalg.qdwh(pad, dynamic_shape=(3, 2))
    np.testing.assert_allclose(np.asarray(u)[:3, :2], U_X, atol=2e-6)
    np.testing.assert_allclose(np.asarray(h)[:2, :2], H_X, rtol=2e-6)
    assert not np.asarray(u)[3].any() and not np.asarray(h)[2].any()
    assert int(k) == 4 and bool(converged)


def test_qdwh_vmap_and_jvp():
    xs = np.stack([X, 2 * X[::-1], X + 1])
    us, hs, ks, cs = jax.vmap(lax_linalg.qdwh)(xs)
    for x, u, h in zip(xs, us, hs):
        u1, h1, _, _ = lax_linalg.qdwh(x)
        np.testing.assert_allclose(np.asarray(u), np.asarray(u1), atol=1e-6)
        np.testing.assert_allclose(np.asarray(h), np.asarray(h1), atol=1e-5)
    assert np.asarray(cs).all()
    # Pinned from JAX 0.10.2 (forward mode through the while_loop).
    du = jax.jvp(lambda x: lax_linalg.qdwh(x)[0], (X,), (np.ones_like(X),))[1]
    np.testing.assert_allclose(np.asarray(du), [[0.16357225, 0.03182627],
                                                [0.27929094, -0.17192827],
                                                [-0.10023426, 0.01768382]], atol=2e-6)


def test_qdwh_errors_and_polar_methods():
    with pytest.raises(ValueError, match="The input matrix of shape M x N must have M >= N."):
        lax_linalg.qdwh(jnp.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="method='qdwh' only supports mxn"):
        jsl.polar(X[:2], side="left")
    u, p = jsl.polar(X)
    np.testing.assert_allclose(np.asarray(u), U_X, atol=2e-6)
    u_svd, p_svd = jsl.polar(X, method="svd")
    np.testing.assert_allclose(np.asarray(u), np.asarray(u_svd), atol=2e-6)
    np.testing.assert_allclose(np.asarray(p), np.asarray(p_svd), atol=1e-5)
