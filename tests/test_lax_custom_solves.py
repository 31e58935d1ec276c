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


# ---- has_aux (values pinned from JAX 0.10.2) ----

AUX_A = np.array([[4., 1.], [1., 3.]], np.float32)


def _solve_aux(a, b):
    return lax.custom_linear_solve(
        lambda x: a @ x, b, lambda mv, x: (jnp.linalg.solve(a, x), jnp.sum(x)),
        lambda vm, x: (jnp.linalg.solve(a.T, x), jnp.sum(x)), has_aux=True)


def test_custom_linear_solve_has_aux():
    b = np.array([1., 2.], np.float32)
    for f in (_solve_aux, jax.jit(_solve_aux)):
        x, aux = f(AUX_A, b)
        np.testing.assert_allclose(np.asarray(x), [0.09090909, 0.6363636], rtol=1e-6)
        assert float(aux) == 3.0
    ga, gb = jax.grad(lambda a, b: _solve_aux(a, b)[0].sum(), argnums=(0, 1))(AUX_A, b)
    np.testing.assert_allclose(np.asarray(ga), [[-0.01652893, -0.11570248],
                                                [-0.02479339, -0.17355372]], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gb), [0.18181819, 0.27272728], rtol=1e-5)
    (x, aux), (dx, daux) = jax.jvp(lambda b: _solve_aux(AUX_A, b), (b,), (np.ones(2, np.float32),))
    np.testing.assert_allclose(np.asarray(dx), [0.18181819, 0.27272728], rtol=1e-5)
    assert float(daux) == 0.0 and float(aux) == 3.0
    bs = np.arange(6, dtype=np.float32).reshape(3, 2)
    xs, auxs = jax.vmap(lambda b: _solve_aux(AUX_A, b))(bs)
    np.testing.assert_allclose(np.asarray(xs), np.linalg.solve(AUX_A, bs.T).T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(auxs), bs.sum(1))


def test_custom_linear_solve_has_aux_shape_error():
    # A solve returning a bare array is unpacked as (x, aux) and fails JAX's shape check.
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b, got "
                                         r"\[\(\)\] and \[\(2,\)\]"):
        lax.custom_linear_solve(lambda x: x, jnp.ones(2), lambda m, x: x, has_aux=True)


def _sqrt_root(c):
    def solve(f, x0):
        x, steps = lax.while_loop(lambda s: s[1] < 20.0,
                                  lambda s: (s[0] - f(s[0]) / (2 * s[0]), s[1] + 1), (x0, 0.0))
        return x, steps
    return lax.custom_root(lambda x: x ** 2 - c, 1.0, solve, lambda g, y: y / g(1.0),
                           has_aux=True)


def test_custom_root_has_aux():
    root, steps = _sqrt_root(2.0)
    np.testing.assert_allclose(float(root), 1.4142135, rtol=1e-6)
    assert float(steps) == 20.0
    np.testing.assert_allclose(float(jax.grad(lambda c: _sqrt_root(c)[0])(2.0)), 0.35355338,
                               rtol=1e-5)
    (r, s), (dr, ds) = jax.jvp(_sqrt_root, (2.0,), (1.0,))
    np.testing.assert_allclose(float(dr), 0.35355338, rtol=1e-5)
    assert float(ds) == 0.0
    roots, steps = jax.jit(jax.vmap(_sqrt_root))(jnp.array([4.0, 9.0]))
    np.testing.assert_allclose(np.asarray(roots), [2.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(steps), [20.0, 20.0])
