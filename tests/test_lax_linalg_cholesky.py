"""lax.linalg.cholesky (LAPACK potrf through the C++ op defined in cpp/src/ops/linalg.cc):
against numpy, eagerly and under jit and vmap; JAX's NaN pattern for matrices that are
not positive definite; derivatives against numerical ones; JAX's errors."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.lax import linalg as lax_linalg
from tinyxla.test_util import check_grads


def _spd(shape, dtype, seed):
    """Well-conditioned Hermitian positive definite matrices of `shape` [..., n, n]."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    n = shape[-1]
    m = a @ np.conj(np.swapaxes(a, -1, -2)) / n + np.eye(n)
    return m.astype(dtype)


def _tol(dtype):
    return 1e-10 if np.dtype(dtype) in (np.float64, np.complex128) else 2e-5


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4), (2, 0, 0)])
def test_matches_numpy(dtype, shape):
    x = _spd(shape, dtype, seed=1)
    got = lax_linalg.cholesky(x)
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_allclose(np.asarray(got), np.linalg.cholesky(x), rtol=_tol(dtype),
                               atol=_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_matches_numpy_x64(x64, dtype):
    x = _spd((3, 5, 5), dtype, seed=2)
    got = lax_linalg.cholesky(x)
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got), np.linalg.cholesky(x), rtol=1e-12, atol=1e-12)


def test_jit_and_vmap_match_eager():
    x = _spd((4, 3, 3), np.float32, seed=3)
    eager = np.asarray(lax_linalg.cholesky(x))
    np.testing.assert_array_equal(np.asarray(jax.jit(lax_linalg.cholesky)(x)), eager)
    np.testing.assert_allclose(np.asarray(jax.vmap(lax_linalg.cholesky)(x)), eager, rtol=1e-6)
    moved = np.moveaxis(x, 0, 2)
    np.testing.assert_allclose(
        np.asarray(jax.vmap(lax_linalg.cholesky, in_axes=2)(moved)), eager, rtol=1e-6)


def test_not_positive_definite_gives_nan_below_the_diagonal():
    # Pinned from JAX 0.10.2: [[nan, 0], [nan, nan]] for each of these.
    want = np.array([[np.nan, 0], [np.nan, np.nan]], np.float32)
    for x in ([[1., 2.], [2., 1.]], np.ones((2, 2), np.float32)):
        np.testing.assert_array_equal(np.asarray(lax_linalg.cholesky(np.asarray(x, np.float32))),
                                      want)
    # Only the failing matrix of a batch is NaN.
    batch = np.stack([np.eye(2, dtype=np.float32) * 4, np.array([[1., 2.], [2., 1.]], np.float32)])
    got = np.asarray(jax.jit(lax_linalg.cholesky)(batch))
    np.testing.assert_array_equal(got[0], np.eye(2) * 2)
    np.testing.assert_array_equal(got[1], want)


def test_without_symmetrize_reads_the_lower_triangle():
    x = np.array([[4., 100.], [2., 3.]], np.float32)
    got = np.asarray(lax_linalg.cholesky(x, symmetrize_input=False))
    np.testing.assert_allclose(got, np.linalg.cholesky(np.array([[4., 2.], [2., 3.]])), rtol=1e-6)


def test_derivatives(x64):
    x = _spd((3, 3), np.float64, seed=4)
    check_grads(lax_linalg.cholesky, (x,), order=2, modes=("fwd", "rev"))
    y = _spd((2, 3, 3), np.float64, seed=5)
    check_grads(lambda a: (lax_linalg.cholesky(a) ** 2).sum(), (y,), order=1,
                modes=("fwd", "rev"))
    z = _spd((3, 3), np.complex128, seed=6)
    check_grads(lambda a: jnp.abs(lax_linalg.cholesky(a)).sum(), (z,), order=1,
                modes=("fwd", "rev"))


def test_grad_under_jit_and_vmap(x64):
    x = _spd((2, 3, 3), np.float64, seed=7)
    f = lambda a: jnp.sum(lax_linalg.cholesky(a) * jnp.arange(9.0).reshape(3, 3))
    eager = np.asarray(jax.grad(f)(x[0]))
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(f))(x[0])), eager, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(x))[0], eager, rtol=1e-10)


def test_errors():
    # Messages pinned from JAX 0.10.2.
    with pytest.raises(ValueError, match=r"^The input to cholesky must be a square matrix\. "
                                         r"Got shape \(2, 3\)\.$"):
        lax_linalg.cholesky(np.ones((2, 3), np.float32), symmetrize_input=False)
    with pytest.raises(TypeError, match=r"^Input 0 to cholesky must have rank at least 2, "
                                        r"but got shape=\(3,\)$"):
        lax_linalg.cholesky(np.ones(3, np.float32), symmetrize_input=False)
    with pytest.raises(TypeError, match=r"^cholesky does not accept dtype int32 at position 0\. "
                                        r"Accepted dtypes at position 0 are subtypes of "
                                        r"floating, complexfloating\.$"):
        lax_linalg.cholesky(np.ones((2, 2), np.int32), symmetrize_input=False)
    with pytest.raises(TypeError, match="cholesky does not accept dtype int32"):
        jax.jit(lambda a: lax_linalg.cholesky(a, symmetrize_input=False))(np.ones((2, 2), np.int32))
