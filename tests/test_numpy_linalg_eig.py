"""jnp.linalg.eig / eigvals / eigh / eigvalsh and lax.linalg.eig / eigh against numpy:
eigenvalue sets, reconstructions, batches, jit and vmap equal to eager, derivatives
against finite differences, JAX's jaxprs and errors."""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.lax import linalg as lax_linalg
from tinyxla.test_util import check_grads

SHAPES = [(1, 1), (2, 2), (5, 5), (3, 4, 4)]


def _matrix(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _hermitian(shape, dtype, seed=0):
    x = _matrix(shape, dtype, seed)
    return ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dtype)


def _tol(dtype):
    return 1e-10 if np.dtype(dtype) in (np.float64, np.complex128) else 2e-4


def _sorted(w):
    """Eigenvalues in a canonical order: by real part rounded (so that a conjugate pair
    ties), then by imaginary part."""
    w = np.asarray(w, np.complex128)
    order = np.lexsort((w.imag, np.round(w.real, 4)), axis=-1)
    return np.take_along_axis(w, order, -1)


def _check_eig(x, w, v, tol):
    assert w.shape == x.shape[:-1] and v.shape == x.shape
    w, v = np.asarray(w), np.asarray(v)
    np.testing.assert_allclose(_sorted(w), _sorted(np.linalg.eigvals(x.astype(np.complex128))),
                               rtol=tol * 10, atol=tol * 10)
    # A V = V diag(w), each column of unit 2-norm.
    xc = x.astype(np.complex128)
    scale = max(1.0, np.abs(x).max())
    np.testing.assert_allclose(xc @ v, v * w[..., None, :], atol=tol * 20 * scale)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=tol * 10)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eig_and_eigvals_against_numpy(shape, dtype):
    x = _matrix(shape, dtype)
    w, v = jnp.linalg.eig(x)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    _check_eig(x, w, v, _tol(dtype))
    ev = jnp.linalg.eigvals(x)
    assert ev.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(ev), np.asarray(w), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eig_float64(x64, shape, dtype):
    x = _matrix(shape, dtype)
    w, v = jnp.linalg.eig(x)
    assert w.dtype == np.complex128 and v.dtype == np.complex128
    _check_eig(x, w, v, _tol(dtype))


def test_eig_left_eigenvectors():
    x = _matrix((3, 4, 4), np.float32, seed=3)
    w, vl, vr = lax_linalg.eig(x)
    w, vl, vr = map(np.asarray, (w, vl, vr))
    # u_j^H A = w_j u_j^H.
    lhs = np.conj(np.swapaxes(vl, -1, -2)) @ x.astype(np.complex64)
    np.testing.assert_allclose(lhs, w[..., :, None] * np.conj(np.swapaxes(vl, -1, -2)),
                               atol=1e-4)
    w2, vl2 = lax_linalg.eig(x, compute_right_eigenvectors=False)
    np.testing.assert_allclose(np.asarray(w2), w, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(vl2), vl, atol=1e-6)


def test_eig_known_values_match_jax():
    # JAX's (LAPACK's) eigenvectors for this matrix, as the oracle prints them.
    x = np.array([[1., -1.], [1., 1.]], np.float32)
    w, vl, vr = lax_linalg.eig(x)
    s = np.float32(np.sqrt(0.5))
    np.testing.assert_allclose(np.asarray(w), [1 + 1j, 1 - 1j], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(vr), [[s, s], [-1j * s, 1j * s]], atol=1e-6)
    np.testing.assert_allclose(np.asarray(vl), [[-s, -s], [1j * s, -1j * s]], atol=1e-6)


def test_spectral_radius_seed_example():
    def spectral_radius(mat):
        return jnp.max(jnp.abs(jnp.linalg.eigvals(mat)))

    mat = jnp.array(np.array([[1.0, -1.0], [1.0, 1.0]]))
    assert spectral_radius(mat).item() == pytest.approx(np.sqrt(2), rel=1e-6)
    assert jax.jit(spectral_radius)(mat).item() == pytest.approx(np.sqrt(2), rel=1e-6)

    batch = _matrix((6, 5, 5), np.float32, seed=1)
    want = np.max(np.abs(np.linalg.eigvals(batch.astype(np.float64))), -1)
    manual = lambda m: jnp.max(jnp.abs(jnp.linalg.eigvals(m)), -1)
    np.testing.assert_allclose(np.asarray(manual(batch)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(manual)(batch)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.vmap(spectral_radius)(batch)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(spectral_radius))(batch)), want,
                               rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eig_jit_and_vmap_equal_eager(dtype):
    x = _matrix((3, 4, 4), dtype, seed=2)
    w, v = jnp.linalg.eig(x)
    wj, vj = jax.jit(jnp.linalg.eig)(x)
    wv, vv = jax.vmap(jnp.linalg.eig)(x)
    for got in (wj, wv):
        np.testing.assert_allclose(np.asarray(got), np.asarray(w), rtol=1e-6, atol=1e-6)
    for got in (vj, vv):
        np.testing.assert_allclose(np.asarray(got), np.asarray(v), rtol=1e-6, atol=1e-6)
    # vmap over a non-leading axis, and nested under jit.
    xt = np.moveaxis(x, 0, 2)
    wt = jax.jit(jax.vmap(jnp.linalg.eigvals, in_axes=2))(xt)
    np.testing.assert_allclose(np.asarray(wt), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_eig_empty_and_non_finite():
    assert jnp.linalg.eigvals(np.zeros((0, 0), np.float32)).shape == (0,)
    w, v = jnp.linalg.eig(np.zeros((3, 0, 0), np.float32))
    assert w.shape == (3, 0) and v.shape == (3, 0, 0) and w.dtype == np.complex64
    x = np.stack([np.array([[np.nan, 1], [1, 1]], np.float32), np.eye(2, dtype=np.float32)])
    w = np.asarray(jnp.linalg.eigvals(x))
    assert np.isnan(w[0]).all()
    np.testing.assert_allclose(w[1], [1, 1])
    w = np.asarray(jax.jit(jnp.linalg.eigvals)(x))
    assert np.isnan(w[0]).all() and not np.isnan(w[1]).any()


def test_eig_jaxprs_match_jax():
    x = np.ones((2, 2), np.float32)
    text = str(jax.make_jaxpr(jnp.linalg.eigvals)(x))
    assert ("b:c64[2] = eig[\n            compute_left_eigenvectors=False\n"
            "            compute_right_eigenvectors=False\n"
            "            enable_eigvec_derivs=False\n            implementation=None\n"
            "          ] a") in text
    assert "name=eigvals" in text
    text = str(jax.make_jaxpr(jnp.linalg.eig)(x))
    assert "b:c64[2] c:c64[2,2] = eig[" in text and "compute_right_eigenvectors=True" in text
    text = str(jax.make_jaxpr(jnp.linalg.eigh)(x))
    assert ("c:f32[2,2] b:f32[2] = eigh[\n            algorithm=None\n            lower=True\n"
            "            sort_eigenvalues=True\n            subset_by_index=None\n"
            "          ] f") in text
    assert "f:f32[2,2] = div e 2.0:f32[]" in text


def test_eig_errors():
    with pytest.raises(ValueError, match=r"^The input to eig must be a square matrix\. "
                                         r"Got shape \(2, 3\)\.$"):
        jnp.linalg.eigvals(np.ones((4, 2, 3), np.float32))
    with pytest.raises(TypeError, match=r"^Input 0 to eig must have rank at least 2, but got "
                                        r"shape=\(3,\)$"):
        jnp.linalg.eigvals(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"rank at least 2, but got shape=\(\)"):
        jnp.linalg.eig(np.float32(1))
    with pytest.raises(TypeError, match="eig does not accept dtype int32 at position 0. "
                                        "Accepted dtypes at position 0 are subtypes of "
                                        "floating, complexfloating."):
        lax_linalg.eig(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="square matrix"):
        jax.jit(jnp.linalg.eigvals)(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="Only the lapack implementation"):
        lax_linalg.eig(np.eye(2, dtype=np.float32),
                       implementation=lax_linalg.EigImplementation.MAGMA)
    w, _, _ = lax_linalg.eig(np.eye(2, dtype=np.float32),
                             implementation=lax_linalg.EigImplementation.LAPACK)
    np.testing.assert_allclose(np.asarray(w), [1, 1])
    # Integers promote in jnp, as in JAX.
    assert jnp.linalg.eigvals(np.eye(3, dtype=np.int32)).dtype == np.complex64
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
        jax.grad(lambda x: jnp.linalg.eig(x)[1].real.sum())(np.eye(2, dtype=np.float32))


def _nonsymmetric(n, seed):
    """A well-conditioned matrix with well-separated real eigenvalues."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, n)) + 3 * np.eye(n)
    return (q @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(q)).astype(np.float64)


def test_eigvals_derivatives(x64):
    x = _nonsymmetric(4, 0)
    check_grads(lambda a: jnp.linalg.eigvals(a).real.sum(), (x,), order=1, modes=("fwd", "rev"))
    # Order 1 only: as in JAX, the eigenvalues' jvp differentiates eigenvectors.
    check_grads(lambda a: (jnp.linalg.eigvals(a) ** 2).real.sum(), (x,), order=1,
                modes=("fwd", "rev"))
    # Complex eigenvalues: |w|^2 summed is order-independent.
    y = np.array([[1.0, -2.0, 0.3], [1.5, 1.0, 0.2], [0.1, 0.4, -0.5]])
    check_grads(lambda a: jnp.abs(jnp.linalg.eigvals(a)).sum(), (y,), order=1,
                modes=("fwd", "rev"))
    # The gradient of the real part of the trace is the identity.
    g = jax.grad(lambda a: jnp.linalg.eigvals(a).real.sum())(y)
    np.testing.assert_allclose(np.asarray(g), np.eye(3), atol=1e-10)


def test_eigvals_derivatives_batched_and_jit():
    x = np.stack([_nonsymmetric(3, s) for s in range(3)]).astype(np.float32)
    f = lambda a: jnp.linalg.eigvals(a).real.sum()
    g = jax.grad(f)(x)
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(np.eye(3), x.shape), atol=1e-4)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(f))(x)), np.asarray(g), atol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(x)), np.asarray(g), atol=1e-5)


def test_eigenvector_derivatives_opt_in(x64):
    x = _nonsymmetric(3, 1)

    def f(a):
        w, vl, vr = lax_linalg.eig(a, enable_eigvec_derivs=True)
        # Order-independent, phase-independent functions of the eigenvectors.
        return (jnp.abs(vr) ** 2 * jnp.abs(w)[None, :]).sum() + (jnp.abs(vl) ** 3).sum()

    check_grads(f, (x,), order=1, modes=("fwd", "rev"))

    def g(a):
        w, vr = lax_linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
        # The geev normalization fixes the phase, so the vectors themselves differentiate.
        return (vr.real * jnp.arange(1.0, 4.0)[:, None]).sum() + vr.imag.sum()

    check_grads(g, (x,), order=1, modes=("fwd", "rev"))


# ---- eigh ----

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eigh_and_eigvalsh_against_numpy(shape, dtype):
    x = _hermitian(shape, dtype)
    w, v = jnp.linalg.eigh(x)
    real = np.float32
    assert w.dtype == real and v.dtype == dtype
    assert w.shape == shape[:-1] and v.shape == shape
    want = np.linalg.eigvalsh(x.astype(np.complex128))
    np.testing.assert_allclose(np.asarray(w), want, rtol=1e-4, atol=1e-4)
    v = np.asarray(v)
    np.testing.assert_allclose(x @ v, v * np.asarray(w)[..., None, :], atol=1e-4)
    eye = np.broadcast_to(np.eye(shape[-1]), shape)
    np.testing.assert_allclose(np.conj(np.swapaxes(v, -1, -2)) @ v, eye, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.eigvalsh(x)), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigh_float64(x64, dtype):
    x = _hermitian((3, 5, 5), dtype)
    w, v = jnp.linalg.eigh(x)
    assert w.dtype == np.float64 and v.dtype == dtype
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(x), rtol=1e-12, atol=1e-12)
    v = np.asarray(v)
    np.testing.assert_allclose(x @ v, v * np.asarray(w)[..., None, :], atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eigh_triangles(dtype):
    x = _matrix((2, 4, 4), dtype, seed=5)  # not Hermitian: the triangle read matters
    for uplo in ("L", "U"):
        w = jnp.linalg.eigvalsh(x, UPLO=uplo, symmetrize_input=False)
        np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(x, UPLO=uplo),
                                   rtol=1e-4, atol=1e-4)
    w = jnp.linalg.eigvalsh(x)  # symmetrized
    np.testing.assert_allclose(
        np.asarray(w), np.linalg.eigvalsh((x + np.conj(np.swapaxes(x, -1, -2))) / 2),
        rtol=1e-4, atol=1e-4)
    v, w2 = lax_linalg.eigh(x, lower=False, symmetrize_input=False)
    np.testing.assert_allclose(np.asarray(w2), np.linalg.eigvalsh(x, UPLO="U"), rtol=1e-4,
                               atol=1e-4)
    with pytest.raises(ValueError, match=r"UPLO must be one of None, 'L', or 'U', got X"):
        jnp.linalg.eigh(x, UPLO="X")


def test_eigh_jit_and_vmap_equal_eager():
    x = _hermitian((3, 4, 4), np.float32, seed=6)
    w, v = jnp.linalg.eigh(x)
    for fn in (jax.jit(jnp.linalg.eigh), jax.vmap(jnp.linalg.eigh),
               jax.jit(jax.vmap(jnp.linalg.eigh))):
        wj, vj = fn(x)
        np.testing.assert_allclose(np.asarray(wj), np.asarray(w), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(vj), np.asarray(v), rtol=1e-5, atol=1e-5)
    wt = jax.vmap(jnp.linalg.eigvalsh, in_axes=1)(np.moveaxis(x, 0, 1))
    np.testing.assert_allclose(np.asarray(wt), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_eigh_errors():
    with pytest.raises(ValueError, match=r"^Argument to symmetric eigendecomposition must have "
                                         r"shape \[\.\.\., n, n\], got shape \(2, 3\)$"):
        lax_linalg.eigh(np.ones((4, 2, 3), np.float32), symmetrize_input=False)
    with pytest.raises(TypeError, match=r"^Input 0 to eigh must have rank at least 2, but got "
                                        r"shape=\(3,\)$"):
        lax_linalg.eigh(np.ones(3, np.float32), symmetrize_input=False)
    with pytest.raises(NotImplementedError, match="subset_by_index"):
        lax_linalg.eigh(np.eye(3, dtype=np.float32), subset_by_index=(0, 2))
    with pytest.raises(NotImplementedError, match="Jacobi"):
        lax_linalg.eigh(np.eye(3, dtype=np.float32),
                        implementation=lax_linalg.EighImplementation.JACOBI)
    v, w = lax_linalg.eigh(np.eye(3, dtype=np.float32), subset_by_index=(0, 3),
                           implementation=lax_linalg.EighImplementation.QR)
    np.testing.assert_allclose(np.asarray(w), np.ones(3))


def test_eigvalsh_derivatives(x64):
    x = _hermitian((4, 4), np.float64, seed=7)
    check_grads(jnp.linalg.eigvalsh, (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda a: jnp.linalg.eigvalsh(a)[-1], (x,), order=1, modes=("fwd", "rev"))
    y = _hermitian((2, 3, 3), np.float64, seed=8)
    check_grads(lambda a: jnp.linalg.eigvalsh(a).sum(-1), (y,), order=1, modes=("fwd", "rev"))


def test_eigh_eigenvector_derivatives(x64):
    x = _hermitian((3, 3), np.float64, seed=9)
    # |v|^2 is independent of each column's sign.
    check_grads(lambda a: (jnp.linalg.eigh(a)[1] ** 2 * jnp.arange(1.0, 4.0)).sum(), (x,),
                order=1, modes=("fwd", "rev"))
    z = _hermitian((3, 3), np.complex128, seed=10)
    check_grads(lambda a: jnp.linalg.eigvalsh(a).sum() ** 2, (z,), order=1,
                modes=("fwd", "rev"))


def test_eigvalsh_grad_matches_jax_value():
    x = np.array([[2., 1.], [0.5, 3.]], np.float32)
    g = jax.grad(lambda a: jnp.linalg.eigvalsh(a)[-1])(x)
    np.testing.assert_allclose(np.asarray(g), [[0.22264992, 0.41602516],
                                               [0.41602516, 0.77735007]], rtol=1e-5)
