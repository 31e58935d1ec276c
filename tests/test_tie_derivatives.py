"""Derivatives at the ties of rules that branch on x > y (issue 19, item 9).

Every value is pinned from JAX 0.10.2 (first and second derivatives, forward and
reverse): a kink rule must give JAX's convention at the tie, and a smooth function
(logaddexp) must stay smooth there.
"""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp

# name: (function, tie point, JAX's first derivative, JAX's second derivative)
TIES = {
    "logaddexp": (lambda x: jnp.logaddexp(x, 0.4), 0.4, 0.5, 0.25),
    "logaddexp_swapped": (lambda x: jnp.logaddexp(0.4, x), 0.4, 0.5, 0.25),
    "logaddexp_self": (lambda x: jnp.logaddexp(x, x), 0.4, 1.0, 0.0),
    "logaddexp2": (lambda x: jnp.logaddexp2(x, 0.4), 0.4, 0.5, 0.1732868),
    "logaddexp2_swapped": (lambda x: jnp.logaddexp2(0.4, x), 0.4, 0.5, 0.1732868),
    "softplus": (lambda x: jax.nn.softplus(x), 0.0, 0.5, 0.25),
    "logsumexp": (lambda x: jax.nn.logsumexp(jnp.stack([x, 0.4])), 0.4, 0.5, 0.25),
    "maximum": (lambda x: jnp.maximum(x, 0.4), 0.4, 0.5, 0.0),
    "maximum_swapped": (lambda x: jnp.maximum(0.4, x), 0.4, 0.5, 0.0),
    "minimum": (lambda x: jnp.minimum(x, 0.4), 0.4, 0.5, 0.0),
    "maximum_self": (lambda x: jnp.maximum(x, x), 0.4, 1.0, 0.0),
    "abs": (jnp.abs, 0.0, 1.0, 0.0),
    "clip_lower": (lambda x: jnp.clip(x, 0.4, 1.0), 0.4, 0.5, 0.0),
    "clip_upper": (lambda x: jnp.clip(x, 0.0, 0.4), 0.4, 0.5, 0.0),
    "lax_clamp_lower": (lambda x: jax.lax.clamp(0.4, x, 1.0), 0.4, 0.0, 0.0),
    "relu": (jax.nn.relu, 0.0, 0.0, 0.0),
    "where": (lambda x: jnp.where(x > 0.4, x ** 2, x), 0.4, 1.0, 0.0),
    "sign_times_x": (lambda x: jnp.sign(x) * x, 0.0, 0.0, 0.0),
    "max_reduction": (lambda x: jnp.max(jnp.stack([x, 0.4])), 0.4, 0.5, 0.0),
    "min_reduction": (lambda x: jnp.min(jnp.stack([x, 0.4])), 0.4, 0.5, 0.0),
}


@pytest.mark.parametrize("name", sorted(TIES))
def test_tie_derivatives_match_jax(name):
    f, x0, d1, d2 = TIES[name]
    x = jnp.float32(x0)
    np.testing.assert_allclose(float(jax.jacfwd(f)(x)), d1, rtol=1e-6)
    np.testing.assert_allclose(float(jax.grad(f)(x)), d1, rtol=1e-6)
    np.testing.assert_allclose(float(jax.jacfwd(jax.jacfwd(f))(x)), d2, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(float(jax.grad(jax.grad(f))(x)), d2, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(float(jax.jit(jax.grad(jax.grad(f)))(x)), d2, rtol=1e-5,
                               atol=1e-7)


def test_logaddexp_second_derivative_matches_finite_differences():
    # central differences of the (smooth) first derivative
    f = lambda x: jnp.logaddexp(x, 0.4)
    g = jax.grad(f)
    h = 1e-2
    fd = (float(g(jnp.float32(0.4 + h))) - float(g(jnp.float32(0.4 - h)))) / (2 * h)
    np.testing.assert_allclose(float(jax.jacfwd(jax.jacfwd(f))(jnp.float32(0.4))), fd,
                               rtol=1e-3)


@pytest.mark.parametrize("f", [jnp.logaddexp, jnp.logaddexp2])
def test_logaddexp_gradients_at_infinities_match_jax(f):
    # JAX's custom JVP replaces +inf (only) by 0 in its weights exp(x_i - out).
    pinned = {
        "logaddexp": {(-np.inf, 1.0): (0.0, 1.0), (np.inf, 1.0): (1.0, 2.7182817),
                      (1.0, np.inf): (2.7182817, 1.0), (np.inf, np.inf): (1.0, 1.0),
                      (1.0, 1.0): (0.5, 0.5)},
        "logaddexp2": {(-np.inf, 1.0): (0.0, 1.0), (np.inf, 1.0): (1.0, 2.0),
                       (1.0, np.inf): (2.0, 1.0), (np.inf, np.inf): (1.0, 1.0),
                       (1.0, 1.0): (0.5, 0.5)},
    }[f.__name__]
    grad = jax.grad(f, argnums=(0, 1))
    for (a, b), want in pinned.items():
        got = grad(jnp.float32(a), jnp.float32(b))
        np.testing.assert_allclose([float(g) for g in got], want, rtol=1e-6)
    got = grad(jnp.float32(-np.inf), jnp.float32(-np.inf))
    assert np.isnan([float(g) for g in got]).all()


def test_logaddexp_tie_gradient_under_vmap_and_jit():
    x = jnp.array([0.4, 1.0, -np.inf, np.inf], jnp.float32)
    got = jax.jit(jax.vmap(jax.grad(lambda v: jnp.logaddexp(v, 0.4))))(x)
    np.testing.assert_allclose(np.asarray(got), [0.5, 0.6456563, 0.0, 1.0], rtol=1e-6)
    got = jax.vmap(jax.jacfwd(jax.jacfwd(lambda v: jnp.logaddexp(v, 0.4))))(x[:2])
    np.testing.assert_allclose(np.asarray(got), [0.25, 0.22878425], rtol=1e-5)


def test_logaddexp_complex_gradient_matches_jax():
    g = jax.grad(lambda z: jnp.real(jnp.logaddexp(z, jnp.complex64(0.5 - 1j))))(
        jnp.complex64(1 + 2j))
    np.testing.assert_allclose(complex(g), 2.393055 + 0.5126659j, rtol=1e-6)
