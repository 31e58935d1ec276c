"""jax.scipy.linalg.eigh_tridiagonal (the eigh_tridiagonal primitive: LAPACK stebz/stein)
against scipy, numpy's dense eigh and values pinned from JAX 0.10.2."""
import numpy as np
import pytest
import scipy.linalg as sla

import tinyxla as jax
import tinyxla.numpy as jnp
import tinyxla.scipy.linalg as jsl
from tinyxla.test_util import check_grads

# jax.scipy.linalg.eigh_tridiagonal's docstring example, values from JAX 0.10.2.
D, E = np.array([1., 2, 3, 4], np.float32), np.array([1., 1, 1], np.float32)
JAX_W = np.array([0.2547188, 1.8227171, 3.1772828, 4.745281], np.float32)
JAX_V = np.array([[0.7779505, 0.55327106, -0.29117376, 0.06246512],
                  [-0.5797919, 0.45518553, -0.6339677, 0.23394944],
                  [0.23394947, -0.63396764, -0.45518556, 0.5797919],
                  [-0.06246513, 0.29117376, 0.5532711, 0.7779506]], np.float32)


def _dense(d, e):
    return np.diag(d) + np.diag(e, 1) + np.diag(np.conj(e), -1)


def _same_up_to_phase(v, ref, atol):
    """Each column of v is the unit column of ref times a unit scalar."""
    overlap = np.abs(np.sum(np.conj(ref) * v, axis=0))
    np.testing.assert_allclose(overlap, np.ones(v.shape[1]), atol=atol)


def _check_eigenpairs(d, e, w, v, atol):
    t = _dense(np.asarray(d, np.complex128 if np.iscomplexobj(d) else np.float64),
               np.asarray(e, np.complex128 if np.iscomplexobj(e) else np.float64))
    v = np.asarray(v)
    np.testing.assert_allclose(t @ v, v * np.asarray(w), atol=atol)
    np.testing.assert_allclose(np.conj(v.T) @ v, np.eye(v.shape[1]), atol=atol)


def test_matches_jax_pinned_values():
    w = jsl.eigh_tridiagonal(D, E, eigvals_only=True)
    assert w.dtype == np.float32 and w.shape == (4,)
    np.testing.assert_allclose(np.asarray(w), JAX_W, rtol=1e-6, atol=1e-6)
    w, v = jsl.eigh_tridiagonal(D, E)
    np.testing.assert_allclose(np.asarray(w), JAX_W, rtol=1e-6, atol=1e-6)
    _same_up_to_phase(np.asarray(v), JAX_V, 1e-6)
    w = jsl.eigh_tridiagonal(D, E, eigvals_only=True, select="i", select_range=(1, 2))
    np.testing.assert_allclose(np.asarray(w), JAX_W[1:3], rtol=1e-6)
    w, v = jsl.eigh_tridiagonal(D, E, select="i", select_range=(1, 2))
    assert v.shape == (4, 2)
    _same_up_to_phase(np.asarray(v), JAX_V[:, 1:3], 1e-6)
    # Python lists, as jnp.asarray reads them.
    np.testing.assert_allclose(
        np.asarray(jsl.eigh_tridiagonal([1., 2, 3], [1., 1], eigvals_only=True)),
        [0.26794922, 2., 3.732051], rtol=1e-6)


def test_signs_follow_the_start_vectors_of_key():
    """JAX's inverse iteration converges to the start vectors random.normal(key, (k, n))
    projected on the eigenvectors: the overlap is positive."""
    for key in (None, jax.random.key(1)):
        _, v = jsl.eigh_tridiagonal(D, E, key=key)
        start = np.asarray(jax.random.normal(jax.random.key(42) if key is None else key,
                                             (4, 4)))
        assert (np.sum(np.asarray(v) * start.T, axis=0) > 0).all()


def test_tolerance():
    w = np.asarray(jsl.eigh_tridiagonal(D, E, eigvals_only=True, tol=0.1))
    np.testing.assert_allclose(w, [0.27343303, 1.8359362, 3.164064, 4.7265673], atol=1e-6)
    assert np.max(np.abs(w - JAX_W)) <= 0.1


def test_indices_outside_the_matrix_give_jax_bracket_ends():
    w = np.asarray(jsl.eigh_tridiagonal(D, E, eigvals_only=True, select="i",
                                        select_range=(0, 10)))
    np.testing.assert_allclose(w, np.r_[JAX_W, [5.000005] * 7], rtol=1e-6)
    w = np.asarray(jsl.eigh_tridiagonal(D, E, eigvals_only=True, select="i",
                                        select_range=(-2, 1)))
    np.testing.assert_allclose(w, [-4.8577785e-06, -4.8577785e-06, *JAX_W[:2]], atol=1e-6)
    w, v = jsl.eigh_tridiagonal(D, E, select="i", select_range=(2, 5))
    assert v.shape == (4, 4) and np.isnan(np.asarray(v)[:, 2:]).all()
    _check_eigenpairs(D, E, np.asarray(w)[:2], np.asarray(v)[:, :2], 1e-5)


@pytest.mark.parametrize("n", [2, 3, 17, 200])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_scipy(n, dtype, x64):
    rng = np.random.default_rng(n)
    d, e = rng.standard_normal(n).astype(dtype), rng.standard_normal(n - 1).astype(dtype)
    tol = 2e-5 * np.sqrt(n) if dtype == np.float32 else 1e-12 * np.sqrt(n)
    w_ref, v_ref = sla.eigh_tridiagonal(d.astype(np.float64), e.astype(np.float64))
    w = jsl.eigh_tridiagonal(d, e, eigvals_only=True)
    assert w.dtype == dtype
    np.testing.assert_allclose(np.asarray(w), w_ref, atol=tol)
    w, v = jsl.eigh_tridiagonal(d, e)
    assert v.dtype == dtype and v.shape == (n, n)
    np.testing.assert_allclose(np.asarray(w), w_ref, atol=tol)
    _check_eigenpairs(d, e, w, v, 10 * tol)
    _same_up_to_phase(np.asarray(v, np.float64), v_ref, 10 * tol)
    lo, hi = n // 3, n // 2
    w, v = jsl.eigh_tridiagonal(d, e, select="i", select_range=(lo, hi))
    w_sel = sla.eigh_tridiagonal(d.astype(np.float64), e.astype(np.float64),
                                 eigvals_only=True, select="i", select_range=(lo, hi))
    np.testing.assert_allclose(np.asarray(w), w_sel, atol=tol)
    _same_up_to_phase(np.asarray(v, np.float64), v_ref[:, lo:hi + 1], 10 * tol)


def test_repeated_eigenvalues_get_orthonormal_vectors():
    """A matrix that splits into equal blocks has each eigenvalue twice."""
    d = np.array([2., 1, 3, 2, 1, 3], np.float32)
    e = np.array([1., 0.5, 0, 1, 0.5], np.float32)
    w, v = jsl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(_dense(d, e)), atol=1e-5)
    _check_eigenpairs(d, e, w, v, 1e-5)


def test_complex_hermitian():
    d = np.array([1., 2, 3, 4], np.complex64)
    e = np.array([1 + 1j, 2 - 1j, 0.5j], np.complex64)
    w, v = jsl.eigh_tridiagonal(d, e)
    assert w.dtype == np.float32 and v.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(w), [-0.6277684, 1.5871623, 3.9200761, 5.12053],
                               rtol=2e-6, atol=1e-6)
    _check_eigenpairs(d, e, w, v, 2e-6)
    np.testing.assert_allclose(np.asarray(jsl.eigh_tridiagonal(d, e, eigvals_only=True)),
                               np.asarray(w), rtol=1e-6)


def test_small_orders():
    w, v = jsl.eigh_tridiagonal(jnp.array([2.]), jnp.zeros(0))
    np.testing.assert_array_equal(np.asarray(w), [2.])
    np.testing.assert_array_equal(np.asarray(v), [[1.]])
    w, v = jsl.eigh_tridiagonal(jnp.array([2. + 1j]), jnp.zeros(0, jnp.complex64))
    assert w.dtype == np.float32 and v.dtype == np.complex64
    w, v = jsl.eigh_tridiagonal(jnp.zeros(0), jnp.zeros(0))
    assert w.shape == (0,) and v.shape == (0, 0)


def test_non_finite_input_gives_nan():
    w, v = jsl.eigh_tridiagonal(np.array([1., np.nan, 3], np.float32), E[:2])
    assert np.isnan(np.asarray(w)).all() and np.isnan(np.asarray(v)).all()


def test_jit_vmap():
    dd = np.stack([D, 2 * D])
    ee = np.stack([E, E])
    f = lambda d, e: jsl.eigh_tridiagonal(d, e)
    w, v = jax.vmap(f)(dd, ee)
    np.testing.assert_allclose(np.asarray(w)[1], [1.5491555, 3.9551687, 6.0448318, 8.450844],
                               rtol=1e-6)
    for i in range(2):
        w_i, v_i = f(dd[i], ee[i])
        np.testing.assert_array_equal(np.asarray(w)[i], np.asarray(w_i))
        np.testing.assert_array_equal(np.asarray(v)[i], np.asarray(v_i))
    # vmap over the tolerance as well (the primitive takes one per matrix).
    g = lambda d, e, t: jsl.eigh_tridiagonal(d, e, eigvals_only=True, tol=t)
    w = jax.vmap(g)(dd, ee, jnp.array([0.1, 0.]))
    np.testing.assert_array_equal(np.asarray(w)[0], np.asarray(g(D, E, 0.1)))
    w_jit, v_jit = jax.jit(f)(D, E)
    w_eager, v_eager = f(D, E)
    np.testing.assert_array_equal(np.asarray(w_jit), np.asarray(w_eager))
    np.testing.assert_array_equal(np.asarray(v_jit), np.asarray(v_eager))


def test_derivatives_against_numerical(x64):
    rng = np.random.default_rng(3)
    d, e = jnp.asarray(rng.standard_normal(6)), jnp.asarray(rng.standard_normal(5))
    check_grads(lambda d, e: jsl.eigh_tridiagonal(d, e, eigvals_only=True), (d, e), order=2,
                modes=["fwd", "rev"])
    check_grads(lambda d, e: jsl.eigh_tridiagonal(d, e)[1], (d, e), order=2,
                modes=["fwd", "rev"])
    check_grads(lambda d, e: jsl.eigh_tridiagonal(d, e, select="i", select_range=(2, 4)),
                (d, e), order=1, modes=["fwd", "rev"])
    e_complex = e * jnp.exp(1j * jnp.asarray(rng.standard_normal(5)))
    check_grads(lambda d, e: jsl.eigh_tridiagonal(d, e, eigvals_only=True),
                (d.astype(complex), e_complex), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize("call, error, message", [
    (lambda: jsl.eigh_tridiagonal(D, E.astype(np.complex64)), TypeError,
     "diagonal and off-diagonal values must have same dtype, got float32 and complex64"),
    (lambda: jsl.eigh_tridiagonal(jnp.arange(4), jnp.arange(3)), TypeError,
     "Only float32 and float64 inputs are supported as inputs to "
     "jax.scipy.linalg.eigh_tridiagonal, got int32 and int32"),
    (lambda: jsl.eigh_tridiagonal(D.astype(np.float16), E.astype(np.float16)), TypeError,
     "Only float32 and float64 inputs are supported"),
    (lambda: jsl.eigh_tridiagonal(D, E, select="i"), ValueError,
     "for select='i', select_range must be specified."),
    (lambda: jsl.eigh_tridiagonal(D, E, select="i", select_range=(2, 1)), ValueError,
     "Got empty index range in select_range."),
    (lambda: jsl.eigh_tridiagonal(D, E, select="v", select_range=(0, 2)), NotImplementedError,
     r"eigh_tridiagonal\(..., select='v'\) is not implemented"),
    (lambda: jsl.eigh_tridiagonal(D, E, select="x"), ValueError,
     "'select must have a value in"),
    (lambda: jsl.eigh_tridiagonal(D, E[:2]), TypeError,
     r"add got incompatible shapes for broadcasting: \(4,\), \(3,\)."),
    (lambda: jsl.eigh_tridiagonal(D, np.ones(4, np.float32)), TypeError,
     r"add got incompatible shapes for broadcasting: \(4,\), \(5,\)."),
    (lambda: jsl.eigh_tridiagonal(np.ones((2, 4), np.float32), np.ones((2, 3), np.float32)),
     TypeError, r"add got incompatible shapes for broadcasting: \(2, 4\), \(3, 3\)."),
    (lambda: jsl.eigh_tridiagonal(np.float32(1), np.float32(1)), IndexError,
     "tuple index out of range"),
])
def test_errors_as_jax(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_primitive_checks_its_operands():
    from tinyxla._src.lax.linalg_eigh_tridiagonal import eigh_tridiagonal
    with pytest.raises(ValueError, match="off-diagonal of shape"):
        eigh_tridiagonal(D, E[:2], np.float32(0), compute_vectors=False, lower_index=0,
                         upper_index=3)
    with pytest.raises(ValueError, match="out of range for order 4"):
        eigh_tridiagonal(D, E, np.float32(0), compute_vectors=False, lower_index=0,
                         upper_index=4)
    with pytest.raises(TypeError, match="float32 or float64 operands of one dtype"):
        eigh_tridiagonal(D, E.astype(np.int32), np.float32(0), compute_vectors=False,
                         lower_index=0, upper_index=3)
