"""``tinyxla.ops`` segment reductions against numpy loops and values pinned from JAX 0.10.2;
jit == eager, vmap == a loop, grad against JAX's and numerical derivatives."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import ops

DATA = jnp.arange(6.0) + 1
IDS = jnp.array([0, 0, 2, 1, 1, 5])


def _numpy_segment(fn, identity, data, ids, n):
    out = np.full((n,) + data.shape[1:], identity, data.dtype)
    for i, s in enumerate(ids):
        if 0 <= s < n:
            out[s] = fn(out[s], data[i])
    return out


@pytest.mark.parametrize("name, fn, identity", [
    ("segment_sum", np.add, 0), ("segment_prod", np.multiply, 1),
    ("segment_max", np.maximum, -np.inf), ("segment_min", np.minimum, np.inf)])
def test_against_numpy(name, fn, identity):
    rng = np.random.RandomState(0)
    data = rng.randn(20, 3).astype(np.float32)
    ids = rng.randint(-2, 8, size=20)
    f = getattr(ops, name)
    expect = _numpy_segment(fn, identity, data, ids, 6)
    np.testing.assert_allclose(f(data, ids, 6), expect, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(f, static_argnums=2)(data, ids, 6), expect, rtol=1e-6)
    np.testing.assert_allclose(f(data, ids, 6, bucket_size=3), expect, rtol=1e-5)
    np.testing.assert_allclose(f(data, np.sort(ids), 6, indices_are_sorted=True),
                               _numpy_segment(fn, identity, data, np.sort(ids), 6), rtol=1e-5)


def test_pinned_jax_values():
    np.testing.assert_array_equal(ops.segment_sum(DATA, IDS), [3, 9, 3, 0, 0, 6])
    np.testing.assert_array_equal(ops.segment_sum(DATA, IDS, 3), [3, 9, 3])
    np.testing.assert_array_equal(ops.segment_prod(DATA, IDS, 4), [2, 20, 3, 1])
    np.testing.assert_array_equal(ops.segment_max(DATA, IDS, 4), [2, 5, 3, -np.inf])
    np.testing.assert_array_equal(ops.segment_min(DATA, IDS, 4), [1, 4, 3, np.inf])
    # Negative ids are dropped, not wrapped.
    np.testing.assert_array_equal(ops.segment_sum(DATA, jnp.array([0, -1, 2, 1, 1, 3]), 3),
                                  [1, 9, 3])
    np.testing.assert_array_equal(ops.segment_sum(DATA, IDS, 3, bucket_size=2), [3, 9, 3])
    np.testing.assert_array_equal(ops.segment_prod(DATA, IDS, 3, bucket_size=4), [2, 20, 3])
    np.testing.assert_array_equal(ops.segment_sum(DATA, IDS, 3, mode="clip"), [3, 9, 9])
    imax = ops.segment_max(jnp.array([1, 2, 3], jnp.int32), jnp.array([0, 0, 2]), 4)
    np.testing.assert_array_equal(imax, [2, -2147483648, 3, -2147483648])
    np.testing.assert_array_equal(ops.segment_min(jnp.array([True, False]), jnp.array([0, 0]), 2),
                                  [False, True])
    np.testing.assert_array_equal(ops.segment_sum(jnp.ones((4, 2)), jnp.array([0, 1, 1, 0]), 2),
                                  [[2, 2], [2, 2]])
    assert ops.segment_sum(jnp.ones(3, jnp.int8), jnp.array([0, 0, 1]), 2).dtype == jnp.int8
    assert ops.segment_sum(jnp.ones(3, jnp.bfloat16), jnp.array([0, 0, 1]), 2).dtype == \
        jnp.bfloat16
    np.testing.assert_array_equal(ops.segment_sum(jnp.ones(3), jnp.array([0, 1, 7]), 3,
                                                  unique_indices=True, indices_are_sorted=True),
                                  [1, 1, 0])


def test_errors():
    with pytest.raises(jax.errors.ConcretizationTypeError,
                       match="segment_sum\\(\\) `num_segments` argument."):
        jax.jit(lambda d, i: ops.segment_sum(d, i))(DATA, IDS)
    with pytest.raises(ValueError, match="num_segments must be non-negative."):
        ops.segment_sum(DATA, IDS, -1)
    with pytest.raises(TypeError, match="segment_sum requires ndarray or scalar arguments, got "
                                        "<class 'list'> at position 0."):
        ops.segment_sum([1.0, 2.0], IDS)
    with pytest.raises(NotImplementedError, match="scatter_mul gradients are only implemented "
                                                  "if `unique_indices=True`"):
        jax.grad(lambda d: ops.segment_prod(d, IDS, 3).sum())(DATA)


def test_grad_pinned_and_numerical():
    g = jax.grad(lambda d: ops.segment_max(d, IDS, 3).sum())(DATA)
    np.testing.assert_array_equal(g, [0, 1, 1, 0, 1, 0])  # JAX's; id 5 is dropped
    g = jax.grad(lambda d: (ops.segment_sum(d, IDS, 3) ** 2).sum())(DATA)
    np.testing.assert_array_equal(g, [6, 6, 6, 18, 18, 0])
    # Ties share the tangent equally, as in JAX.
    g = jax.grad(lambda d: ops.segment_max(d, jnp.array([0, 0, 1]), 2).sum())(
        jnp.array([2.0, 2.0, 1.0]))
    np.testing.assert_array_equal(g, [0.5, 0.5, 1.0])
    x = np.random.RandomState(1).rand(6).astype(np.float64)
    uniq = jnp.array([3, 0, 1, 2, 5, 4])
    f = lambda d: (ops.segment_prod(d, uniq, 6, unique_indices=True) ** 2).sum()
    with jax.enable_x64(True):
        got = jax.grad(f)(jnp.asarray(x))
        eps = 1e-6
        num = [(f(jnp.asarray(x + eps * e)) - f(jnp.asarray(x - eps * e))) / (2 * eps)
               for e in np.eye(6)]
        np.testing.assert_allclose(got, num, rtol=1e-6)


def test_vmap_is_a_loop():
    data = jnp.stack([DATA, 2 * DATA, -DATA])
    for f in (ops.segment_sum, ops.segment_max):
        got = jax.vmap(lambda d: f(d, IDS, 3))(data)
        np.testing.assert_array_equal(got, np.stack([f(d, IDS, 3) for d in data]))
    ids = jnp.array([[0, 1, 1, 2, 2, 2], [2, 2, 1, 1, 0, 0]])
    got = jax.vmap(lambda i: ops.segment_sum(DATA, i, 3))(ids)
    np.testing.assert_array_equal(got, [[1, 5, 15], [11, 7, 3]])
