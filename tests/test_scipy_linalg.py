"""jax.scipy.linalg: against scipy and numpy, eager and under jit and vmap, derivatives
against numerical ones, and JAX 0.10.2's values and errors (pinned)."""
import numpy as np
import pytest
import scipy.linalg as sla

import tinyxla as jax
import tinyxla.numpy as jnp
import tinyxla.scipy.linalg as jsl
from tinyxla.test_util import check_grads

from linalg_inputs import random_array as _rand

A = np.array([[2., 1, 0], [1, 3, 1], [0, 1, 4]], np.float32)


def _spd(shape, seed=0, dtype=np.float32):
    a = _rand(shape, dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


# ---- Cholesky and LU ----

@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_cho_factor_cho_solve(lower):
    a = _spd((4, 4), 1)
    np.testing.assert_allclose(np.asarray(jsl.cholesky(a, lower=lower)),
                               sla.cholesky(a, lower=lower), rtol=1e-5, atol=1e-6)
    c = jsl.cho_factor(a, lower=lower)
    assert c[1] == lower
    b = _rand((4, 2), seed=2)
    np.testing.assert_allclose(np.asarray(jsl.cho_solve(c, b)), np.linalg.solve(a, b),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jsl.cho_solve(c, b[:, 0])),
                               np.linalg.solve(a, b[:, 0]), rtol=1e-4, atol=1e-5)
    batch = np.stack([a, 2 * a])
    got = jsl.cho_solve(jsl.cho_factor(batch, lower=lower), b)
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(batch, b), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jsl.cho_solve(jsl.cho_factor(A), np.ones(3))),
                               [0.44444445, 0.1111111, 0.22222225], rtol=1e-6)


def test_lu_lu_factor_lu_solve():
    a = _rand((5, 5), seed=3)
    p, l, u = (np.asarray(x) for x in jsl.lu(a))
    p_ref, l_ref, u_ref = sla.lu(a)
    np.testing.assert_allclose(p, p_ref)
    np.testing.assert_allclose(l, l_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(u, u_ref, rtol=1e-5, atol=1e-6)
    pl, u2 = jsl.lu(_rand((3, 5), seed=4), permute_l=True)
    np.testing.assert_allclose(np.asarray(pl) @ np.asarray(u2), _rand((3, 5), seed=4), atol=1e-5)
    lu, piv = jsl.lu_factor(A)
    np.testing.assert_allclose(np.asarray(lu), [[2., 1., 0.], [0.5, 2.5, 1.], [0., 0.4, 3.6]],
                               rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(piv), [0, 1, 2])
    lu_piv = jsl.lu_factor(a)
    b = _rand((5, 2), seed=5)
    for trans, op in ((0, a), (1, a.T), (2, a.T)):
        np.testing.assert_allclose(np.asarray(jsl.lu_solve(lu_piv, b, trans=trans)),
                                   np.linalg.solve(op, b), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(jsl.lu_solve(lu_piv, b[:, 0])),
                               np.linalg.solve(a, b[:, 0]), rtol=1e-4, atol=1e-4)


# ---- solves ----

@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
def test_solve(assume_a):
    a = _spd((2, 4, 4), 6)
    b = _rand((2, 4, 3), seed=7)
    np.testing.assert_allclose(np.asarray(jsl.solve(a, b, assume_a=assume_a)),
                               np.linalg.solve(a, b), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jsl.solve(a[0], b[0, :, 0], assume_a=assume_a)),
                               np.linalg.solve(a[0], b[0, :, 0]), rtol=1e-4, atol=1e-5)


def test_solve_pos_gradient_matches_jax_and_numerics(x64):
    g = jax.grad(lambda a: jsl.solve(a, jnp.ones(3), assume_a="pos").sum())(A.astype(np.float64))
    np.testing.assert_allclose(np.asarray(g), [[-0.19753087, -0.04938271, -0.09876545],
                                               [-0.04938271, -0.01234568, -0.02469136],
                                               [-0.09876545, -0.02469136, -0.04938273]],
                               rtol=1e-6)
    a, b = _spd((3, 3), 8, np.float64), _rand((3, 2), np.float64, 9)
    # Only one triangle is read while the rule (as JAX's) differentiates the whole matrix:
    # they agree along symmetric directions.
    check_grads(lambda a, b: jsl.solve((a + a.T) / 2, b, assume_a="pos"), (a, b), order=1,
                modes=("fwd", "rev"))
    with pytest.raises(ValueError, match=r"Expected assume_a to be one of \['gen', 'sym', "
                                         r"'her', 'pos'\]; got 'x'"):
        jsl.solve(A, np.ones(3), assume_a="x")


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [True, False])
def test_solve_triangular(trans, lower):
    a = _rand((4, 4), np.complex64, 10) + 3 * np.eye(4, dtype=np.complex64)
    b = _rand((4, 2), np.complex64, 11)
    np.testing.assert_allclose(
        np.asarray(jsl.solve_triangular(a, b, trans=trans, lower=lower)),
        sla.solve_triangular(a, b, trans=trans, lower=lower), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Invalid 'trans' value 3"):
        jsl.solve_triangular(a, b, trans=3)


def test_solve_triangular_batched_jit_vmap_grad(x64):
    a = np.tril(_rand((3, 4, 4), np.float64, 12)) + 3 * np.eye(4)
    b = _rand((3, 4), np.float64, 13)
    want = np.linalg.solve(a, b[..., None])[..., 0]
    f = lambda a, b: jsl.solve_triangular(a, b[..., None], lower=True)[..., 0]
    np.testing.assert_allclose(np.asarray(f(a, b)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(a, b)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda a, b: jsl.solve_triangular(
        a, b, lower=True))(a, b)), want, rtol=1e-12)
    check_grads(lambda a, b: jsl.solve_triangular(a, b, lower=True), (a[0], b[0]), order=2,
                modes=("fwd", "rev"))


def test_inv_det():
    a = _rand((2, 4, 4), seed=14)
    np.testing.assert_allclose(np.asarray(jsl.inv(a)), np.linalg.inv(a), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jsl.det(a)), np.linalg.det(a), rtol=1e-4)


# ---- decompositions ----

def test_eigh_svd_qr_schur_hessenberg():
    w, v = jsl.eigh(A)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(A), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jsl.eigh(A, eigvals_only=True)), np.asarray(w))
    with pytest.raises(NotImplementedError, match="Only the b=None case of eigh is implemented"):
        jsl.eigh(A, b=A)
    a = _rand((5, 3), seed=15)
    u, s, vh = jsl.svd(a, full_matrices=False)
    np.testing.assert_allclose(np.asarray(u * s @ vh), a, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jsl.svd(a, compute_uv=False)), sla.svdvals(a),
                               rtol=1e-5)
    for mode in ("full", "economic"):
        q, r = jsl.qr(a, mode=mode)
        q_ref, r_ref = sla.qr(a, mode=mode)
        assert q.shape == q_ref.shape and r.shape == r_ref.shape
        np.testing.assert_allclose(np.asarray(q @ r), a, atol=1e-5)
    r, = jsl.qr(a, mode="r")
    assert r.shape == (5, 3)
    q, r, p = jsl.qr(a, mode="economic", pivoting=True)
    np.testing.assert_array_equal(np.asarray(p), sla.qr(a, mode="economic", pivoting=True)[2])
    sq = _rand((4, 4), seed=16)
    for output in ("real", "complex"):
        t, z = jsl.schur(sq, output=output)
        np.testing.assert_allclose(np.asarray(z @ t @ np.conj(z.T)), sq, atol=1e-4)
    with pytest.raises(ValueError, match="Expected 'output' to be either 'real' or 'complex', "
                                         "got output='x'."):
        jsl.schur(sq, output="x")
    h, q = jsl.hessenberg(sq, calc_q=True)
    np.testing.assert_allclose(np.asarray(h), sla.hessenberg(sq), atol=1e-4)
    np.testing.assert_allclose(np.asarray(q @ h @ q.T), sq, atol=1e-4)


def test_eigh_tridiagonal():
    d, e = np.array([1., 2, 3], np.float32), np.array([0.5, 0.5], np.float32)
    np.testing.assert_allclose(np.asarray(jsl.eigh_tridiagonal(d, e, eigvals_only=True)),
                               [0.7752552, 1.9999999, 3.2247448], rtol=1e-6)
    w, v = jsl.eigh_tridiagonal(d, e)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(t @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-5)
    w2 = jsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 2))
    np.testing.assert_allclose(np.asarray(w2), np.asarray(w)[1:], rtol=1e-6)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("method", ["qdwh", "svd"])
def test_polar(side, method):
    a = _rand((4, 3) if side == "right" else (3, 4), seed=17)
    u, p = jsl.polar(a, side=side, method=method)
    u_ref, p_ref = sla.polar(a, side=side)
    np.testing.assert_allclose(np.asarray(u), u_ref, atol=1e-5)
    np.testing.assert_allclose(np.asarray(p), p_ref, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jsl.polar(A)[1]), A, atol=1e-5)
    with pytest.raises(ValueError, match="The input `a` must be at least a 2-D array."):
        jsl.polar(np.ones(3))


# ---- matrix functions ----

def test_expm_pinned_and_against_scipy():
    np.testing.assert_allclose(np.asarray(jsl.expm(A)),
                               [[13.975504, 18.928549, 12.818523],
                                [18.928549, 45.722576, 44.5656],
                                [12.818522, 44.565594, 77.46964]], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jsl.expm(10 * A)),
                               [[1.5902363e+19, 4.3446054e+19, 5.9348396e+19],
                                [4.3446050e+19, 1.1869680e+20, 1.6214282e+20],
                                [5.9348348e+19, 1.6214271e+20, 2.2149102e+20]], rtol=1e-5)
    rot = np.array([[0., 1], [-1, 0]], np.float32)
    np.testing.assert_allclose(np.asarray(jsl.expm(rot)),
                               [[0.5403023, 0.84147096], [-0.8414711, 0.54030234]], rtol=1e-6)
    batch = _rand((3, 4, 4), seed=18)
    np.testing.assert_allclose(np.asarray(jsl.expm(batch)), sla.expm(batch), rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(ValueError, match=r"Expected A to be a \(batched\) square matrix, got "
                                         r"A.shape=\(2, 3\)."):
        jsl.expm(np.ones((2, 3)))


def test_expm_x64_upper_triangular_and_derivatives(x64):
    a = _rand((4, 4), np.float64, 19)
    np.testing.assert_allclose(np.asarray(jsl.expm(a)), sla.expm(a), rtol=1e-12)
    for scale in (1e-3, 0.5, 3, 30):
        np.testing.assert_allclose(np.asarray(jsl.expm(scale * a)), sla.expm(scale * a),
                                   rtol=1e-10)
    t = np.triu(a)
    np.testing.assert_allclose(np.asarray(jsl.expm(t, upper_triangular=True)), sla.expm(t),
                               rtol=1e-12)
    check_grads(jsl.expm, (0.5 * a,), order=1, modes=("fwd", "rev"))
    e = _rand((4, 4), np.float64, 20)
    expm_a, frechet = jsl.expm_frechet(a, e)
    ref = sla.expm_frechet(a, e)
    np.testing.assert_allclose(np.asarray(expm_a), ref[0], rtol=1e-10)
    np.testing.assert_allclose(np.asarray(frechet), ref[1], rtol=1e-8)


def test_expm_gradient_pinned():
    g = jax.grad(lambda x: jsl.expm(x).sum())(A)
    np.testing.assert_allclose(np.asarray(g), [[36.405746, 66.116486, 74.66229],
                                               [66.116425, 113.69037, 126.30994],
                                               [74.66234, 126.31018, 139.70123]], rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(jsl.expm_frechet(A, np.ones((3, 3), np.float32), compute_expm=False)),
        [[36.40575, 66.11646, 74.66232], [66.11646, 113.6904, 126.30994],
         [74.66233, 126.30994, 139.701]], rtol=1e-5)


def test_sqrtm_funm_rsf2csf():
    s = np.asarray(jsl.sqrtm(A))
    np.testing.assert_allclose(s, [[1.3748989, 0.33002883, -0.02712357],
                                   [0.33002883, 1.6778035, 0.27578193],
                                   [-0.02712357, 0.275782, 1.9807091]], atol=2e-6)
    b = _rand((5, 5), seed=21)
    np.testing.assert_allclose(np.asarray(jsl.sqrtm(b)), sla.sqrtm(b), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(np.asarray(jsl.funm(A, jnp.sin)),
                               [[0.5960923, -0.50956476, -0.05459263],
                                [-0.5095647, 0.03193501, -0.61875],
                                [-0.05459253, -0.61874986, -0.5322222]], atol=2e-6)
    np.testing.assert_allclose(np.asarray(jsl.funm(b, jnp.exp)), sla.expm(b), rtol=1e-3,
                               atol=1e-4)
    t, z = sla.schur(b)
    tc, zc = jsl.rsf2csf(t, z)
    tc_ref, zc_ref = sla.rsf2csf(t, z)
    np.testing.assert_allclose(np.asarray(zc @ tc @ np.conj(zc.T)), b, atol=1e-4)
    np.testing.assert_allclose(np.tril(np.asarray(tc), -1), 0, atol=1e-6)
    t2, z2 = jsl.schur(np.array([[0., 1], [-1, 0]], np.float32))
    np.testing.assert_allclose(np.asarray(jsl.rsf2csf(t2, z2)[0]),
                               [[0.99999994j, 0], [0, -0.99999994j]], atol=1e-6)


# ---- constructors ----

def test_block_diag_toeplitz():
    np.testing.assert_array_equal(
        np.asarray(jsl.block_diag(np.ones((2, 2)), np.array([3.]), np.ones((1, 3)))),
        sla.block_diag(np.ones((2, 2)), np.array([3.]), np.ones((1, 3))))
    with pytest.raises(ValueError, match="Arguments to jax.scipy.linalg.block_diag must have at "
                                         "most 2 dimensions"):
        jsl.block_diag(np.ones((2, 2, 2)))
    c, r = np.array([1., 2, 3]), np.array([1., 5, 6, 7])
    np.testing.assert_array_equal(np.asarray(jsl.toeplitz(c, r)), sla.toeplitz(c, r))
    cc = np.array([1 + 1j, 2, 3 - 2j])
    np.testing.assert_array_equal(np.asarray(jsl.toeplitz(cc)), sla.toeplitz(cc))
    np.testing.assert_array_equal(np.asarray(jsl.toeplitz(np.stack([c, 2 * c]), r))[1],
                                  sla.toeplitz(2 * c, r))
