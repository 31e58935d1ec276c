"""jnp.linalg's solves, inverses, determinants, factorizations and array-API functions:
against numpy over shapes (broadcast batches, empty), dtypes and singular matrices, under
jit and vmap, gradients against numerical ones, and JAX 0.10.2's values and errors
(pinned)."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.test_util import check_grads

from linalg_inputs import random_array as _rand


def _well_conditioned(shape, dtype=np.float32, seed=0):
    return _rand(shape, dtype, seed) + 3 * np.eye(shape[-1], dtype=dtype)


SINGULAR3 = np.array([[1., 2, 3], [4, 5, 6], [7, 8, 9]], np.float32)


# ---- solve, inv ----

@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (3,)), ((3, 3), (3, 2)),
                                             ((2, 3, 3), (3,)), ((2, 3, 3), (4, 1, 3, 2)),
                                             ((1, 3, 3), (2, 3, 1)), ((2, 0, 0), (2, 0, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_solve_broadcasts_as_numpy(a_shape, b_shape, dtype):
    a = _well_conditioned(a_shape, dtype, 1)
    b = _rand(b_shape, dtype, 2)
    got = jnp.linalg.solve(a, b)
    want = np.linalg.solve(a, b) if len(b_shape) != 1 else np.linalg.solve(a, b[..., None])[..., 0]
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5)


def test_solve_singular_gives_nan_and_errors():
    # Pinned from JAX 0.10.2.
    np.testing.assert_array_equal(np.asarray(jnp.linalg.solve(SINGULAR3, np.arange(1., 4.))),
                                  [np.nan] * 3)
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'm': 4 vs 3 on "
                                         "vectorized function with excluded=frozenset"):
        jnp.linalg.solve(np.ones((3, 3)), np.ones(4))
    with pytest.raises(ValueError, match=r"left hand array must be at least two dimensional; "
                                         r"got a.shape=\(3,\)"):
        jnp.linalg.solve(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="Prior to JAX v0.5.0"):
        jnp.linalg.solve(np.ones((2, 3, 3)), np.ones((2, 3)) + np.ones((1, 3)))


def test_solve_jit_vmap_and_derivatives(x64):
    a = _well_conditioned((4, 4), np.float64, 3)
    b = _rand((4, 2), np.float64, 4)
    np.testing.assert_allclose(np.asarray(jax.jit(jnp.linalg.solve)(a, b)),
                               np.linalg.solve(a, b), rtol=1e-12)
    batch = np.stack([a, 2 * a])
    np.testing.assert_allclose(np.asarray(jax.vmap(jnp.linalg.solve, (0, None))(batch, b)),
                               np.linalg.solve(batch, b), rtol=1e-12)
    check_grads(jnp.linalg.solve, (a, b), order=2, modes=("fwd", "rev"))
    check_grads(jnp.linalg.solve, (a, b[:, 0]), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 5, 5), (0, 0), (2, 3, 4, 4)])
def test_inv(shape):
    a = _well_conditioned(shape, np.float32, 5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.inv(a)), np.linalg.inv(a), rtol=1e-4,
                               atol=1e-5)


def test_inv_singular_pinned_and_int_input():
    got = np.asarray(jnp.linalg.inv(np.array([[1., 2], [2, 4]], np.float32)))
    np.testing.assert_array_equal(got, [[-np.inf, np.inf], [np.inf, -np.inf]])
    got = np.asarray(jnp.linalg.inv(SINGULAR3))
    np.testing.assert_array_equal(got, [[np.nan] * 3, [np.inf, -np.inf, np.inf],
                                        [-np.inf, np.inf, -np.inf]])
    assert jnp.linalg.inv(np.array([[1, 2], [3, 4]])).dtype == np.float32
    with pytest.raises(ValueError, match=r"Argument to inv must have shape \[..., n, n\], got "
                                         r"\(3, 4\)."):
        jnp.linalg.inv(np.ones((3, 4)))


def test_inv_derivatives_and_batched_small(x64):
    a = _well_conditioned((3, 3), np.float64, 6)
    check_grads(jnp.linalg.inv, (a,), order=2, modes=("fwd", "rev"))
    many = _well_conditioned((4096, 3, 3), np.float64, 7)
    np.testing.assert_allclose(np.asarray(jax.jit(jnp.linalg.inv)(many)), np.linalg.inv(many),
                               rtol=1e-10, atol=1e-10)


# ---- det, slogdet ----

@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_det_and_slogdet(n, dtype):
    a = _rand((2, n, n), dtype, n)
    np.testing.assert_allclose(np.asarray(jnp.linalg.det(a)), np.linalg.det(a), rtol=1e-4,
                               atol=1e-5)
    sign, logdet = jnp.linalg.slogdet(a)
    want_sign, want_logdet = np.linalg.slogdet(a)
    np.testing.assert_allclose(np.asarray(sign), want_sign, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(logdet), want_logdet, rtol=1e-4, atol=1e-5)
    if dtype == np.float32 and n:
        sign, logdet = jnp.linalg.slogdet(a, method="qr")
        np.testing.assert_allclose(np.asarray(sign), want_sign)
        np.testing.assert_allclose(np.asarray(logdet), want_logdet, rtol=1e-4, atol=1e-5)


def test_det_singular_pinned():
    assert float(jnp.linalg.det(SINGULAR3)) == 0.0
    a4 = np.array([[1., 2, 3, 4], [4, 5, 6, 7], [7, 8, 9, 10], [1, 1, 1, 1]], np.float32)
    sign, logdet = jnp.linalg.slogdet(a4)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    # The adjugate of a rank-2 matrix is zero.
    np.testing.assert_array_equal(np.asarray(jax.grad(jnp.linalg.det)(a4)), np.zeros((4, 4)))
    s, l = jnp.linalg.slogdet(np.array([[0., 1, 0], [1, 0, 0], [0, 0, -2]], np.float32))
    assert float(s) == 1.0 and np.isclose(float(l), np.log(2))


def test_det_derivatives(x64):
    for n in (1, 2, 3, 5):
        a = _rand((n, n), np.float64, 10 + n)
        # Second differences of a degree-n polynomial: looser than the default.
        check_grads(jnp.linalg.det, (a,), order=2, modes=("fwd", "rev"), rtol=1e-4)
        check_grads(lambda x: jnp.linalg.slogdet(x)[1], (a,), order=2, modes=("fwd", "rev"),
                    rtol=1e-4)
    c = _rand((3, 3), np.complex128, 20)
    check_grads(lambda x: jnp.linalg.slogdet(x)[1], (_rand((4, 4), np.complex128, 21),),
                order=1, modes=("fwd", "rev"))
    check_grads(jnp.linalg.det, (c,), order=1, modes=("fwd", "rev"))


def test_slogdet_hessian_matches_jax():
    a = np.array([[2., 1, 0], [1, 3, 1], [0, 1, 4]], np.float32)
    h = np.asarray(jax.hessian(lambda x: jnp.linalg.slogdet(x)[1])(a)).reshape(9, 9)
    want = [-0.37345678, 0.13580248, -0.03395062, 0.13580248, -0.04938272, 0.01234568,
            -0.03395062, 0.01234568, -0.00308642]
    np.testing.assert_allclose(h[0], want, rtol=1e-5)


def test_det_errors():
    with pytest.raises(ValueError, match=r"Argument to _det\(\) must have shape \[..., n, n\], "
                                         r"got \(3, 4\)"):
        jnp.linalg.det(np.ones((3, 4)))
    with pytest.raises(ValueError, match="Unknown slogdet method 'x'"):
        jnp.linalg.slogdet(np.ones((3, 3)), method="x")


# ---- pinv, lstsq, matrix_rank, cond, matrix_power, tensors ----

@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4)])
def test_pinv(shape):
    a = _rand(shape, np.float32, 30)
    np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(a)), np.linalg.pinv(a), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(np.array([[1., 2], [2, 4]]))),
                               [[0.04, 0.08], [0.08, 0.16]], rtol=1e-6)
    h = a[..., :3, :3] + np.swapaxes(a[..., :3, :3], -1, -2)
    np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(h, hermitian=True)),
                               np.linalg.pinv(h, hermitian=True), rtol=1e-3, atol=1e-4)


def test_pinv_derivatives(x64):
    check_grads(jnp.linalg.pinv, (_rand((4, 3), np.float64, 31),), order=1,
                modes=("fwd", "rev"))
    check_grads(jnp.linalg.pinv, (_rand((2, 3), np.float64, 32),), order=1,
                modes=("fwd", "rev"))


def test_lstsq_matrix_rank_cond_pinned():
    x, resid, rank, s = jnp.linalg.lstsq(np.array([[1., 0], [1, 1], [1, 2]]),
                                         np.array([1., 2, 4]))
    np.testing.assert_allclose(np.asarray(x), [0.8333334, 1.4999996], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(resid), [0.1666667], rtol=1e-5)
    assert int(rank) == 2
    np.testing.assert_allclose(np.asarray(s), [2.6762433, 0.91527176], rtol=1e-6)
    assert int(jnp.linalg.matrix_rank(np.ones((3, 4)))) == 1
    assert jnp.linalg.matrix_rank(np.ones(3)).dtype == np.int32
    a = np.array([[2., 1, 0], [1, 3, 1], [0, 1, 4]], np.float32)
    np.testing.assert_allclose([float(jnp.linalg.cond(a)), float(jnp.linalg.cond(a, 1)),
                                float(jnp.linalg.cond(a, "fro"))],
                               [3.732051, 4.4444447, 5.066228], rtol=1e-6)
    with pytest.raises(ValueError, match=r"jnp.linalg.cond: input array must be at least 2D; "
                                         r"got arr.shape=\(3,\)"):
        jnp.linalg.cond(np.ones(3))
    with pytest.raises(ValueError, match="Leading dimensions of input arrays must match"):
        jnp.linalg.lstsq(np.ones((3, 2)), np.ones(4))


def test_lstsq_against_numpy():
    a, b = _rand((6, 3), np.float32, 33), _rand((6, 2), np.float32, 34)
    x, resid, rank, s = jnp.linalg.lstsq(a, b)
    want = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(np.asarray(x), want[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(resid), want[1], rtol=1e-4)
    assert int(rank) == want[2]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -3])
def test_matrix_power(n):
    a = _well_conditioned((2, 3, 3), np.float32, 35)
    np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_power(a, n)),
                               np.linalg.matrix_power(a.astype(np.float64), n), rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(TypeError, match="exponent must be an integer, got 1.5"):
        jnp.linalg.matrix_power(a, 1.5)
    with pytest.raises(TypeError, match="Last 2 dimensions of the array must be square"):
        jnp.linalg.matrix_power(np.ones((3, 4)), 2)


def test_tensorinv_tensorsolve():
    a = _well_conditioned((6, 6), np.float32, 36).reshape(2, 3, 6)
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorinv(a, 2)), np.linalg.tensorinv(a, 2),
                               rtol=1e-4, atol=1e-5)
    b = _rand((2, 3), np.float32, 37)
    a2 = _well_conditioned((6, 6), np.float32, 38).reshape(2, 3, 2, 3)
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorsolve(a2, b)),
                               np.linalg.tensorsolve(a2, b), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="tensorinv is only possible when the product of the "
                                         "first `ind` dimensions equals"):
        jnp.linalg.tensorinv(np.ones((2, 3)), 1)


# ---- factorizations ----

def test_cholesky_qr_svd_svdvals():
    a = _rand((2, 5, 3), np.float32, 40)
    spd = a.transpose(0, 2, 1) @ a + np.eye(3, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(jnp.linalg.cholesky(spd)), np.linalg.cholesky(spd),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.cholesky(spd, upper=True)),
                               np.linalg.cholesky(spd, upper=True), rtol=1e-5)
    for mode in ("reduced", "complete", "r"):
        got, want = jnp.linalg.qr(a, mode=mode), np.linalg.qr(a, mode=mode)
        for g, w in zip(got if mode != "r" else [got], want if mode != "r" else [want]):
            np.testing.assert_allclose(np.abs(np.asarray(g)), np.abs(w), rtol=1e-4, atol=1e-5)
    h, taus = jnp.linalg.qr(a[0], mode="raw")
    assert h.shape == (3, 5) and taus.shape == (3,)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'bad'"):
        jnp.linalg.qr(a, mode="bad")
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(a, compute_uv=False), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(u * s[..., None, :] @ vh), a, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.svdvals(a)),
                               np.linalg.svd(a, compute_uv=False), rtol=1e-5)


def test_hermitian_svd_pinned():
    a = np.array([[2., 1, 0], [1, 3, 1], [0, 1, 4]], np.float32)
    u, s, vh = jnp.linalg.svd(a, hermitian=True)
    np.testing.assert_allclose(np.asarray(s), [4.732051, 3., 1.2679491], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(u), [[0.21132478, -0.57735014, 0.78867507],
                                               [0.57735014, -0.5773502, -0.5773503],
                                               [0.78867507, 0.5773502, 0.2113249]], atol=1e-6)
    np.testing.assert_allclose(np.asarray(u * s @ vh), a, atol=1e-5)


def test_spectral_radius_gradient_matches_jax():
    a = np.array([[2., 2, 0], [1, 3, 3], [1, 1, 4]], np.float32)
    f = lambda x: jnp.max(jnp.abs(jnp.linalg.eigvals(x)))
    np.testing.assert_allclose(float(f(a)), 5.900573, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.grad(f)(a)),
                               [[0.13060032, 0.25470805, 0.20273298],
                                [0.19756508, 0.3853085, 0.30668342],
                                [0.31185088, 0.60819864, 0.48409113]], rtol=1e-5)


# ---- array-API functions ----

def test_array_api_functions():
    x, y = _rand((2, 3), np.float32, 50), _rand((2, 3), np.float32, 51)
    np.testing.assert_allclose(np.asarray(jnp.linalg.cross(x, y)), np.cross(x, y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.linalg.outer(x[0], y[1])), np.outer(x[0], y[1]))
    m = _rand((2, 4, 4), np.float32, 52)
    np.testing.assert_array_equal(np.asarray(jnp.linalg.diagonal(m, offset=1)),
                                  np.diagonal(m, 1, -2, -1))
    np.testing.assert_allclose(np.asarray(jnp.linalg.trace(m)), np.trace(m, 0, -2, -1),
                               rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(jnp.linalg.matrix_transpose(m)),
                                  np.swapaxes(m, -1, -2))
    np.testing.assert_allclose(np.asarray(jnp.linalg.matmul(m, m)), m @ m, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensordot(m, m[0], axes=2)),
                               np.tensordot(m, m[0], 2), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.vecdot(x, y)), np.sum(x * y, -1), rtol=1e-5)
    chain = [_rand((3, 4), np.float32, 53), _rand((4, 5), np.float32, 54), _rand(5, np.float32)]
    np.testing.assert_allclose(np.asarray(jnp.linalg.multi_dot(chain)),
                               np.linalg.multi_dot(chain), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_norm(m, ord=2)),
                               np.linalg.norm(m, 2, axis=(-2, -1)), rtol=1e-5)


def test_array_api_errors():
    with pytest.raises(ValueError, match="Input arrays must be one-dimensional, but they are "
                                         "x1.ndim=2 x2.ndim=1"):
        jnp.linalg.outer(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match=r"Both input arrays must be \(arrays of\) "
                                         r"3-dimensional vectors"):
        jnp.linalg.cross(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="multi_dot: input arrays must all be two-dimensional"):
        jnp.linalg.multi_dot([np.ones(2)])
    with pytest.raises(ValueError, match="matrix_transpose requires at least 2 dimensions; got "
                                         "ndim=1"):
        jnp.linalg.matrix_transpose(np.ones(2))


def test_every_jax_function_exists():
    names = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
             "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power",
             "matrix_rank", "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr",
             "slogdet", "solve", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve",
             "trace", "vecdot", "vector_norm"]
    assert len(names) == 31 and all(callable(getattr(jnp.linalg, n)) for n in names)
