"""lax.linalg's LU, triangular and tridiagonal solves, QR, SVD, Schur, Hessenberg and
tridiagonal reductions (C++ ops on LAPACK, cpp/src/ops/linalg_factorizations.cc): against
numpy/scipy and reconstruction identities over shapes (square, tall, wide, batched,
empty) and dtypes, under jit and vmap, derivatives against numerical ones, and JAX's
errors and values (pinned from JAX 0.10.2)."""
import itertools
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg as sla

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.lax import linalg as L
from tinyxla.test_util import check_grads

from linalg_inputs import random_array as _rand


def _tol(dtype):
    return 1e-10 if np.dtype(dtype) in (np.float64, np.complex128) else 2e-5


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


SHAPES = [(3, 3), (5, 3), (3, 5), (2, 4, 4), (2, 3, 6, 2), (0, 0), (3, 0), (2, 0, 4), (1, 1)]
DTYPES = [np.float32, np.complex64]


# ---- lu ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + [(2, 20, 20)])
def test_lu_reconstructs(dtype, shape):
    a = _rand(shape, dtype)
    lu, piv, perm = (np.asarray(x) for x in L.lu(a))
    m, n = shape[-2:]
    k = min(m, n)
    assert lu.dtype == dtype and piv.dtype == np.int32 and perm.dtype == np.int32
    assert piv.shape == shape[:-2] + (k,) and perm.shape == shape[:-2] + (m,)
    l = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=dtype)
    u = np.triu(lu[..., :k, :])
    pa = np.take_along_axis(a, perm[..., None], axis=-2)
    np.testing.assert_allclose(l @ u, pa, atol=10 * _tol(dtype), rtol=10 * _tol(dtype))
    # Partial pivoting by LAPACK's magnitude, |re| + |im| for complex numbers, which
    # bounds |l| by sqrt(2).
    bound = np.sqrt(2) if np.iscomplexobj(a) else 1
    assert np.all(np.abs(np.tril(lu[..., :, :k], -1)) <= bound + 1e-6)


def test_lu_matches_jax_pinned():
    a = np.array([[1., 2, 3], [4, 5, 6], [7, 8, 10]], np.float32)
    lu, piv, perm = L.lu(a)
    want = np.array([[7., 8., 10.], [0.14285715, 0.8571428, 1.5714285],
                     [0.5714286, 0.4999998, -0.5]], np.float32)
    np.testing.assert_allclose(np.asarray(lu), want, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(piv), [2, 2, 2])
    np.testing.assert_array_equal(np.asarray(perm), [2, 0, 1])


def test_lu_x64_matches_scipy(x64):
    a = _rand((6, 6), np.float64, 3)
    lu, piv, _ = L.lu(a)
    lu_ref, piv_ref = sla.lu_factor(a)
    np.testing.assert_allclose(np.asarray(lu), lu_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(piv), piv_ref)


def test_lu_jit_vmap():
    a = _rand((4, 5, 5), np.float32, 1)
    eager = [np.asarray(x) for x in L.lu(a)]
    for got in (jax.jit(L.lu)(a), jax.vmap(L.lu)(a)):
        for g, e in zip(got, eager):
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6, atol=1e-6)


def test_lu_derivatives(x64):
    a = _rand((4, 4), np.float64, 2)
    check_grads(lambda x: L.lu(x)[0], (a,), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: L.lu(x)[0], (_rand((3, 5), np.float64, 4),), order=1,
                modes=("fwd", "rev"))
    check_grads(lambda x: L.lu(x)[0], (_rand((5, 3), np.complex128, 5),), order=1,
                modes=("fwd", "rev"))


def test_lu_errors():
    with pytest.raises(TypeError, match=r"Input 0 to lu must have rank at least 2, but got "
                                        r"shape=\(3,\)"):
        L.lu(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="lu does not accept dtype int32 at position 0"):
        L.lu(np.ones((3, 3), np.int32))


def test_lu_pivots_to_permutation():
    piv = np.array([[2, 2, 3], [1, 0, 2]], np.int32)
    got = L.lu_pivots_to_permutation(piv, 4)
    np.testing.assert_array_equal(np.asarray(got), [[2, 0, 3, 1], [0, 1, 2, 3]])
    np.testing.assert_array_equal(np.asarray(jax.jit(L.lu_pivots_to_permutation,
                                                     static_argnums=1)(piv, 4)), got)
    np.testing.assert_array_equal(
        np.asarray(jax.vmap(lambda p: L.lu_pivots_to_permutation(p, 4))(piv)), got)
    with pytest.raises(ValueError, match="Output permutation size 2 has to exceed the "
                                         "trailing dimension of the pivots. Got pivots size 3"):
        L.lu_pivots_to_permutation(np.array([0, 1, 2], np.int32), 2)


# ---- triangular_solve ----

FLAGS = [(ls, lo, ta, ca, ud) for ls in (True, False) for lo in (True, False)
         for ta in (True, False) for ca in (True, False) for ud in (True, False)]


def _op(a, lower, transpose_a, conjugate_a, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(len(t))
    if transpose_a:
        t = t.T
    return np.conj(t) if conjugate_a else t


@pytest.mark.parametrize("m", [4, 40])
@pytest.mark.parametrize("flags", FLAGS)
def test_triangular_solve_all_flags(flags, m):
    left_side, lower, transpose_a, conjugate_a, unit_diagonal = flags
    a = _rand((m, m), np.complex64, 1) + 4 * np.eye(m, dtype=np.complex64)
    b = _rand((m, 3) if left_side else (3, m), np.complex64, 2)
    x = np.asarray(L.triangular_solve(a, b, left_side=left_side, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a,
                                      unit_diagonal=unit_diagonal))
    op = _op(a.astype(np.complex128), lower, transpose_a, conjugate_a, unit_diagonal)
    want = np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T
    np.testing.assert_allclose(x, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("flags", [f for f in FLAGS if not f[4]])
def test_triangular_solve_many_right_hand_sides(flags):
    """A large system with many right-hand sides, solved in blocks of them on the pool."""
    left_side, lower, transpose_a, conjugate_a, _ = flags
    m, k = 300, 1000
    a = _rand((m, m), np.complex64, 3) + 20 * np.eye(m, dtype=np.complex64)
    b = _rand((m, k) if left_side else (k, m), np.complex64, 4)
    x = np.asarray(L.triangular_solve(a, b, left_side=left_side, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a))
    op = _op(a.astype(np.complex128), lower, transpose_a, conjugate_a, False)
    want = np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T
    np.testing.assert_allclose(x, want, rtol=1e-4, atol=1e-4)
    x32 = np.asarray(L.triangular_solve(a.real, b.real, left_side=left_side, lower=lower,
                                        transpose_a=transpose_a))
    op = _op(a.real.astype(np.float64), lower, transpose_a, False, False)
    want = np.linalg.solve(op, b.real) if left_side else np.linalg.solve(op.T, b.real.T).T
    np.testing.assert_allclose(x32, want, rtol=1e-4, atol=1e-4)


def test_triangular_solve_vector_batch_jit_vmap():
    a = _rand((3, 5, 5), np.float32, 3) + 4 * np.eye(5, dtype=np.float32)
    b = _rand((3, 5), np.float32, 4)
    f = lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True)
    x = np.asarray(f(a, b))
    assert x.shape == (3, 5)
    np.testing.assert_allclose(x, np.linalg.solve(np.tril(a), b[..., None])[..., 0], rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(a, b)), x)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(a, b)), x, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(f, in_axes=(None, 0))(a[0], b)),
                               np.linalg.solve(np.tril(a[0]), b.T).T, rtol=1e-5)


def test_triangular_solve_derivatives(x64):
    a = _rand((4, 4), np.float64, 5) + 3 * np.eye(4)
    b = _rand((4, 2), np.float64, 6)
    for kw in (dict(left_side=True, lower=True), dict(left_side=False, lower=False,
                                                       transpose_a=True),
               dict(left_side=True, lower=False, unit_diagonal=True)):
        rhs = b if kw["left_side"] else b.T
        check_grads(lambda a, b: L.triangular_solve(a, b, **kw), (a, rhs), order=2,
                    modes=("fwd", "rev"))


def test_triangular_solve_errors():
    with pytest.raises(ValueError, match=r"Incompatible shapes for arguments to "
                                         r"triangular_solve: \(3, 3\) and \(4, 2\)."):
        L.triangular_solve(np.ones((3, 3), np.float32), np.ones((4, 2), np.float32),
                           left_side=True)
    with pytest.raises(ValueError, match=r"The first input to triangular_solve must be a "
                                         r"square matrix. Got shape \(3, 4\)."):
        L.triangular_solve(np.ones((3, 4), np.float32), np.ones((3, 2), np.float32),
                           left_side=True)


# ---- qr ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_reconstructs(dtype, shape, full_matrices):
    a = _rand(shape, dtype)
    q, r = (np.asarray(x) for x in L.qr(a, full_matrices=full_matrices))
    m, n = shape[-2:]
    k = m if full_matrices else min(m, n)
    assert q.shape == shape[:-2] + (m, k) and r.shape == shape[:-2] + (k, n)
    np.testing.assert_allclose(q @ r, a, atol=10 * _tol(dtype))
    np.testing.assert_allclose(_H(q) @ q, np.broadcast_to(np.eye(k), _H(q).shape[:-1] + (k,)),
                               atol=10 * _tol(dtype))
    np.testing.assert_array_equal(r, np.triu(r))


def test_qr_matches_numpy_and_pivoting(x64):
    a = _rand((6, 4), np.float64, 7)
    q, r = L.qr(a, full_matrices=False)
    q_ref, r_ref = np.linalg.qr(a)
    np.testing.assert_allclose(np.asarray(q), q_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(r), r_ref, rtol=1e-12, atol=1e-12)
    q, r, p = L.qr(a, pivoting=True, full_matrices=False)
    _, r_ref, p_ref = sla.qr(a, pivoting=True, mode="economic")
    np.testing.assert_array_equal(np.asarray(p), p_ref)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a[:, p_ref], atol=1e-12)


def test_qr_jit_vmap():
    a = _rand((3, 5, 4), np.float32, 8)
    q, r = L.qr(a)
    for got in (jax.jit(L.qr)(a), jax.vmap(L.qr)(a)):
        np.testing.assert_allclose(np.asarray(got[0]), np.asarray(q), atol=1e-5)
        np.testing.assert_allclose(np.asarray(got[1]), np.asarray(r), atol=1e-5)


@pytest.mark.parametrize("shape,full", [((4, 4), True), ((5, 3), False), ((3, 5), False),
                                        ((5, 3), True)])
def test_qr_derivatives(x64, shape, full):
    a = _rand(shape, np.float64, 9)
    check_grads(lambda x: L.qr(x, full_matrices=full), (a,), order=1, modes=("fwd", "rev"))
    c = _rand(shape, np.complex128, 10)
    check_grads(lambda x: L.qr(x, full_matrices=full), (c,), order=1, modes=("fwd", "rev"))


def test_geqrf_householder_product():
    a = _rand((2, 5, 3), np.float32, 11)
    r, taus = L.geqrf(a)
    assert taus.shape == (2, 3)
    q = L.householder_product(r, taus)
    np.testing.assert_allclose(np.asarray(q) @ np.triu(np.asarray(r)[..., :3, :]), a, atol=1e-5)
    with pytest.raises(ValueError, match=r"The first argument to householder_product must "
                                         r"have at least as many rows as columns, got shape "
                                         r"\(3, 4\)"):
        L.householder_product(np.ones((3, 4), np.float32), np.ones(2, np.float32))


# ---- svd ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_reconstructs(dtype, shape, full_matrices):
    a = _rand(shape, dtype)
    s, u, vh = (np.asarray(x) for x in L.svd(a, full_matrices=full_matrices))
    m, n = shape[-2:]
    k = min(m, n)
    assert s.dtype == np.finfo(dtype).dtype and s.shape == shape[:-2] + (k,)
    assert u.shape == shape[:-2] + ((m, m) if full_matrices else (m, k))
    assert vh.shape == shape[:-2] + ((n, n) if full_matrices else (k, n))
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a,
                               atol=20 * _tol(dtype))
    np.testing.assert_allclose(_H(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] +
                                                          (u.shape[-1],) * 2), atol=1e-5)
    s_only = np.asarray(L.svd(a, compute_uv=False))
    np.testing.assert_allclose(s_only, s, rtol=1e-5, atol=1e-6)


def test_svd_empty_gives_identities():
    s, u, vh = L.svd(np.zeros((3, 0), np.float32))
    np.testing.assert_array_equal(np.asarray(u), np.eye(3))
    assert s.shape == (0,) and vh.shape == (0, 0)
    s, u, vh = L.svd(np.zeros((0, 2), np.float32))
    np.testing.assert_array_equal(np.asarray(vh), np.eye(2))


def test_svd_nonfinite_gives_nan():
    a = np.array([[[1., np.nan], [0, 1]], [[2., 0], [0, 1]]], np.float32)
    s, u, vh = L.svd(a)
    assert np.isnan(np.asarray(s)[0]).all() and np.isnan(np.asarray(u)[0]).all()
    np.testing.assert_allclose(np.asarray(s)[1], [2, 1])


def test_svd_jit_vmap():
    a = _rand((3, 4, 3), np.float32, 12)
    s = np.asarray(L.svd(a, compute_uv=False))
    np.testing.assert_allclose(np.asarray(jax.jit(lambda x: L.svd(x, compute_uv=False))(a)), s,
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda x: L.svd(x)[0])(a)), s, rtol=1e-6)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_svd_derivatives(x64, shape):
    a = _rand(shape, np.float64, 13)
    check_grads(lambda x: L.svd(x, compute_uv=False), (a,), order=2, modes=("fwd", "rev"))
    k = min(shape)
    w = np.arange(1., k + 1)

    def gauge_invariant(x):
        # sum_k w_k u_k v_k^H does not depend on the singular vectors' phases.
        s, u, vh = L.svd(x, full_matrices=False)
        return jnp.einsum("k,ik,kj->ij", w, u, vh)
    check_grads(gauge_invariant, (a,), order=1, modes=("fwd", "rev"))
    c = _rand(shape, np.complex128, 14)
    check_grads(lambda x: L.svd(x, compute_uv=False), (c,), order=1, modes=("fwd", "rev"))


def test_svd_full_matrices_jvp_raises_as_jax():
    with pytest.raises(NotImplementedError, match="Singular value decomposition JVP not "
                                                  "implemented for full matrices"):
        jax.jvp(lambda x: L.svd(x, full_matrices=True), (np.ones((3, 2), np.float32),),
                (np.ones((3, 2), np.float32),))


def test_svd_errors():
    with pytest.raises(TypeError, match=r"Input 0 to svd must have rank at least 2, but got "
                                        r"shape=\(3,\)"):
        L.svd(np.ones(3, np.float32))


# ---- schur, hessenberg, tridiagonal ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_schur(dtype):
    a = _rand((2, 5, 5), dtype, 15)
    t, vs = (np.asarray(x) for x in L.schur(a))
    np.testing.assert_allclose(vs @ t @ _H(vs), a, atol=1e-4)
    below = np.tril(t, -2) if dtype == np.float32 else np.tril(t, -1)
    np.testing.assert_array_equal(below, 0)
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(t[0])),
                               np.sort_complex(np.linalg.eigvals(a[0])), atol=1e-4)
    t_only, = L.schur(a, compute_schur_vectors=False)
    np.testing.assert_allclose(np.asarray(t_only), t, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda x: L.schur(x)[0])(a)), t, atol=1e-5)
    with pytest.raises(NotImplementedError, match="The sort feature of LAPACK's gees routine "
                                                  "is not implemented."):
        L.schur(a, sort_eig_vals=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessenberg_matches_scipy(dtype):
    a = _rand((5, 5), dtype, 16)
    h, taus = L.hessenberg(a)
    assert taus.shape == (4,)
    np.testing.assert_allclose(np.triu(np.asarray(h), -1), sla.hessenberg(a), atol=1e-4)
    with pytest.raises(ValueError, match=r"Argument to Hessenberg reduction must have shape "
                                         r"\[..., n, n\], got shape \(3, 4\)"):
        L.hessenberg(np.ones((3, 4), np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_keeps_the_eigenvalues(dtype, lower):
    a = _rand((2, 5, 5), dtype, 17)
    a = a + _H(a)
    _, d, e, taus = (np.asarray(x) for x in L.tridiagonal(a, lower=lower))
    assert d.dtype == np.float32 and e.shape == (2, 4) and taus.shape == (2, 4)
    for b in range(2):
        t = np.diag(d[b]) + np.diag(e[b], 1) + np.diag(e[b], -1)
        np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a[b]), atol=1e-4)


# ---- tridiagonal_solve ----

def _tridiagonal_dense(dl, d, du):
    return np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)


def test_tridiagonal_solve(x64):
    dl, d, du = _rand((3, 6), np.float64, 18)
    d = d + 5
    dl[0] = du[-1] = 0
    b = _rand((6, 2), np.float64, 19)
    x = np.asarray(L.tridiagonal_solve(dl, d, du, b))
    np.testing.assert_allclose(x, np.linalg.solve(_tridiagonal_dense(dl, d, du), b), rtol=1e-12)
    check_grads(lambda dl, d, du, b: L.tridiagonal_solve(dl, d, du, b), (dl, d, du, b),
                order=1, modes=("fwd", "rev"))
    batched = jax.vmap(L.tridiagonal_solve, in_axes=(None, None, None, 0))(
        dl, d, du, np.stack([b, 2 * b]))
    np.testing.assert_allclose(np.asarray(batched)[1], 2 * x, rtol=1e-12)


def test_tridiagonal_solve_singular_is_nan():
    z = np.zeros(3, np.float32)
    x = L.tridiagonal_solve(z, z, z, np.ones((3, 1), np.float32))
    assert np.isnan(np.asarray(x)).all()
    with pytest.raises(TypeError, match="tridiagonal_solve requires that all diagonal "
                                        "arguments have the same shape."):
        L.tridiagonal_solve(np.ones(3), np.ones(3), np.ones(4), np.ones((3, 1)))


@pytest.mark.parametrize("f", [lambda x: L.geqrf(x)[0], lambda x: L.schur(x)[0],
                               lambda x: L.hessenberg(x)[0], lambda x: L.tridiagonal(x)[1]])
def test_no_derivatives_where_jax_has_none(f):
    x = _rand((3, 3), np.float32, 20)
    with pytest.raises(NotImplementedError, match="Differentiation rule for '.*' not "
                                                  "implemented"):
        jax.jvp(f, (x,), (x,))


@pytest.mark.parametrize("n", range(1, 10))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_and_triangular_solve_batches_of_tiny_matrices(n, dtype, x64):
    # Up to 8 x 8 (and 8 right-hand sides) these run batch-major, several matrices per
    # vector, with lanes past the batch's end padded: 37 is not a multiple of any width.
    rng = np.random.RandomState(n)
    a = rng.randn(37, n, n).astype(dtype)
    a[3] = 0
    a[4, :, 0] = 0
    lu, piv, perm = (np.asarray(v) for v in L.lu(a))
    eye = np.eye(n, dtype=dtype)
    for b in range(37):
        l, u = np.tril(lu[b], -1) + eye, np.triu(lu[b])
        np.testing.assert_allclose(l @ u, a[b][perm[b]], atol=1e-4)
        assert (np.abs(l) <= 1).all()  # partial pivoting
    t = a + 4 * eye
    for left, lower, transpose, unit in itertools.product([True, False], repeat=4):
        for c in (1, 3, 9):
            b = rng.randn(*((37, n, c) if left else (37, c, n))).astype(dtype)
            x = np.asarray(L.triangular_solve(t, b, left_side=left, lower=lower,
                                                       transpose_a=transpose,
                                                       unit_diagonal=unit))
            tri = np.tril(t) if lower else np.triu(t)
            if unit:
                tri[:, np.arange(n), np.arange(n)] = 1
            op = np.swapaxes(tri, 1, 2) if transpose else tri
            np.testing.assert_allclose(op @ x if left else x @ op, b, atol=1e-3, rtol=1e-3)


_IDLE_TICKS_AFTER_FACTORIZATION = r"""
import os, time
import numpy as np
import tinyxla.numpy as jnp
assert "OPENBLAS_THREAD_TIMEOUT" not in os.environ  # set only while OpenBLAS loaded
rng = np.random.RandomState(0)
m = rng.rand(1024, 1024).astype(np.float32)  # no numpy BLAS: its own threads stay asleep
spd = jnp.asarray(m + m.T + 2048 * np.eye(1024, dtype=np.float32))
def cpu_ticks():
    total = 0
    for t in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{t}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total
jnp.linalg.cholesky(spd).block_until_ready()  # one large matrix: OpenBLAS's own threads
time.sleep(0.01)
before = cpu_ticks()
time.sleep(0.25)
print(cpu_ticks() - before)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux's /proc")
def test_openblas_threads_sleep_soon_after_a_threaded_factorization():
    """OpenBLAS's threads busy-wait 2^28 cycles (about 70 ms) after a threaded call unless
    told otherwise, taking a core from the pool's next kernels; tinyxla loads it with a
    spin of about a millisecond, so an idle process burns no CPU 10 ms later (with
    OPENBLAS_THREAD_TIMEOUT=28 this read 9-10 ticks of 10 ms)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", _IDLE_TICKS_AFTER_FACTORIZATION], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip().splitlines()[-1]) <= 2
