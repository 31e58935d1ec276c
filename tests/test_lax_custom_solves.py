"""lax.custom_linear_solve and lax.custom_root: values, implicit derivatives (forward and
reverse, against closed forms and JAX 0.10.2's values, pinned), jit and vmap."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.test_util import check_grads

A = np.array([[3., 1], [1, 2]], np.float32)
B = np.array([1., 2], np.float32)


def _solve(a, b, symmetric=False):
    transpose = None if symmetric else (lambda vm, x: jnp.linalg.solve(a.T, x))
    return lax.custom_linear_solve(lambda x: a @ x, b,
                                   solve=lambda mv, x: jnp.linalg.solve(a, x),
                                   transpose_solve=transpose, symmetric=symmetric)


def test_custom_linear_solve_values_and_derivatives():
    np.testing.assert_allclose(np.asarray(_solve(A, B)), [0., 1.], atol=1e-6)
    # Pinned from JAX 0.10.2.
    np.testing.assert_allclose(np.asarray(jax.jacfwd(_solve)(A, B)),
                               [[[0., -0.4], [0., 0.2]], [[0., 0.2], [0., -0.6]]], atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jacrev(_solve)(A, B)),
                               [[[0., -0.4], [0., 0.2]], [[0., 0.2], [0., -0.6]]], atol=1e-6)
    ga, gb = jax.grad(lambda a, b: _solve(a, b).sum(), argnums=(0, 1))(A, B)
    np.testing.assert_allclose(np.asarray(ga), [[0., -0.2], [0., -0.4]], atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), [0.2, 0.4], atol=1e-6)


def test_custom_linear_solve_symmetric_jit_vmap(x64):
    a = np.array([[4., 1, 0], [1, 3, 1], [0, 1, 2]])
    b = np.array([1., -1, 2])
    f = lambda a, b: _solve(a, b, symmetric=True)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(a, b)), np.linalg.solve(a, b), rtol=1e-12)
    bs = np.stack([b, 2 * b, -b])
    np.testing.assert_allclose(np.asarray(jax.vmap(f, in_axes=(None, 0))(a, bs)),
                               np.linalg.solve(a, bs.T).T, rtol=1e-12)
    check_grads(lambda b: f(a, b), (b,), order=2, modes=("fwd", "rev"))
    # Along symmetric directions of a (the solve assumes symmetry).
    check_grads(lambda s: f((s + s.T) / 2, b), (a,), order=1, modes=("fwd", "rev"))


def test_custom_linear_solve_needs_transpose_solve_for_reverse_mode():
    f = lambda b: lax.custom_linear_solve(lambda x: A @ x, b,
                                          solve=lambda mv, x: jnp.linalg.solve(A, x))
    np.testing.assert_allclose(np.asarray(jax.jvp(f, (B,), (B,))[1]), [0., 1.], atol=1e-6)
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode "
                                        "automatic differentiation of custom_linear_solve"):
        jax.grad(lambda b: f(b).sum())(B)


def _newton_sqrt(x):
    def solve(g, y):
        for _ in range(20):
            y = y - g(y) / (2 * y)
        return y
    return lax.custom_root(lambda y: y ** 2 - x, 1.0, solve, lambda g, y: y / g(1.0))


def test_custom_root_scalar():
    np.testing.assert_allclose(float(_newton_sqrt(2.0)), np.sqrt(2), rtol=1e-6)
    np.testing.assert_allclose(float(jax.grad(_newton_sqrt)(2.0)), 0.5 / np.sqrt(2), rtol=1e-6)
    np.testing.assert_allclose(float(jax.jit(jax.grad(_newton_sqrt))(2.0)), 0.5 / np.sqrt(2),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(_newton_sqrt)(jnp.array([4.0, 9.0]))),
                               [2., 3.], rtol=1e-6)


def _vector_root(p):
    def fn(y):
        return jnp.array([y[0] ** 3 + y[1] - p[0], y[1] ** 3 - y[0] - p[1]])

    def solve(g, y):
        for _ in range(30):
            y = y - jnp.linalg.solve(jax.jacfwd(g)(y), g(y))
        return y
    return lax.custom_root(fn, jnp.array([1.0, 1.0]), solve,
                           lambda g, y: jnp.linalg.solve(jax.jacfwd(g)(y), y))


def test_custom_root_vector_implicit_jacobians_match_jax():
    p = jnp.array([2.0, 1.0])
    np.testing.assert_allclose(np.asarray(_vector_root(p)), [0.91210514, 1.2411871], rtol=1e-6)
    want = [[0.368707, -0.07977845], [0.07977845, 0.19911163]]
    np.testing.assert_allclose(np.asarray(jax.jacrev(_vector_root)(p)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jacfwd(_vector_root)(p)), want, rtol=1e-5)
