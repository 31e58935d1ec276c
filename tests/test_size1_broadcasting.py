"""Elementwise primitives broadcast size-1 axes (as lax's do) in every path (issue 19,
item 8): nested vmap leaves such operands (``div b c`` with ``c:f32[1,2]``, exactly as
JAX's jaxpr shows), and jit must lower them as eager runs them."""
import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax


def _advi_reduced(m):
    inner = lambda s: jnp.sum(jax.vmap(lambda x, sc: (x / sc) ** 2)(s, m))
    return jnp.sum(jax.vmap(inner)(jnp.ones((4, 2))))


def test_nested_vmap_grad_under_jit():
    m = jnp.array([1.0, 2.0])
    want = -8.0 / np.array([1.0, 8.0])  # d/dm of 4 * sum(1 / m**2)
    np.testing.assert_allclose(np.asarray(jax.grad(_advi_reduced)(m)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(_advi_reduced))(m)), want,
                               rtol=1e-6)
    np.testing.assert_allclose(float(jax.jit(_advi_reduced)(m)), 4 * 1.25, rtol=1e-6)


def test_nested_vmap_jaxpr_keeps_jax_size1_operand():
    text = str(jax.make_jaxpr(_advi_reduced)(jnp.ones(2)))
    assert "c:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] a" in text
    assert "d:f32[4,2] = div b c" in text


def test_binary_primitives_broadcast_size1_axes_under_jit():
    x = np.arange(8, dtype=np.float32).reshape(4, 2) + 1
    y = np.array([[2.0, 4.0]], np.float32)
    z = np.array([[3.0], [1.0], [2.0], [5.0]], np.float32)
    for op, ref in [(lax.div, np.divide), (lax.add, np.add), (lax.max, np.maximum),
                    (lax.pow, np.power), (lax.atan2, np.arctan2), (lax.mul, np.multiply)]:
        np.testing.assert_allclose(np.asarray(op(x, y)), ref(x, y), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jax.jit(op)(x, y)), ref(x, y), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jax.jit(op)(y, z)), ref(y, z), rtol=1e-6)
