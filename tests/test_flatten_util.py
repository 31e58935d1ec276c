"""``tinyxla.flatten_util.ravel_pytree`` against outputs pinned from JAX 0.10.2."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.flatten_util import ravel_pytree


def test_mixed_dtypes_pinned():
    tree = {"a": jnp.ones((2, 2)), "b": [jnp.arange(3), 1.5], "c": None}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == jnp.float32 and not flat.weak_type
    np.testing.assert_array_equal(flat, [1, 1, 1, 1, 0, 1, 2, 1.5])
    back = unravel(flat)
    assert back["c"] is None and back["b"][0].dtype == jnp.int32
    np.testing.assert_array_equal(back["b"][0], [0, 1, 2])
    np.testing.assert_array_equal(back["a"], np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"Sum of sizes 8 must be equal to dimension 0 of the "
                                         r"operand shape \[5\]"):
        unravel(jnp.ones(5))
    with pytest.raises(TypeError, match="unravel function given array of dtype float16, but "
                                        "expected dtype float32"):
        unravel(jnp.ones(8, jnp.float16))


def test_single_dtype_unravel_is_dtype_polymorphic():
    flat, unravel = ravel_pytree([jnp.ones(2), jnp.zeros(1)])
    np.testing.assert_array_equal(flat, [1, 1, 0])
    ints = unravel(jnp.arange(3))
    assert ints[0].dtype == jnp.int32 and ints[1].shape == (1,)
    with pytest.raises(ValueError, match="Sum of sizes 3"):
        unravel(jnp.ones(4))


def test_edge_trees_pinned():
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and flat.dtype == jnp.float32 and unravel(jnp.ones(0)) == {}
    flat, _ = ravel_pytree(1.0)
    assert flat.weak_type and flat.dtype == jnp.float32
    flat, _ = ravel_pytree((1, 2.0))
    assert not flat.weak_type and flat.dtype == jnp.float32
    flat, _ = ravel_pytree((np.float64(1), jnp.int8(2)))
    assert flat.dtype == jnp.float32
    assert ravel_pytree([1.0])[1] == ravel_pytree([1.0])[1]
    assert hash(ravel_pytree([1.0])[1]) == hash(ravel_pytree([1.0])[1])


def test_under_jit_and_grad():
    params = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(2)}

    def loss(p):
        return jnp.sum(p["w"] ** 2) + jnp.sum(p["b"] * 3)

    def flat_loss(v):
        return loss(unravel(v))

    flat, unravel = ravel_pytree(params)
    g = jax.grad(flat_loss)(flat)
    np.testing.assert_array_equal(g, [3, 3, 0, 2, 4, 6, 8, 10])  # leaves: b, then w
    np.testing.assert_array_equal(jax.jit(jax.grad(flat_loss))(flat), g)
    ravelled_grads, _ = ravel_pytree(jax.grad(loss)(params))
    np.testing.assert_array_equal(ravelled_grads, g)
    out = jax.vmap(lambda v: unravel(v)["b"])(jnp.stack([flat, 2 * flat]))
    np.testing.assert_array_equal(out, [[1, 1], [2, 2]])
