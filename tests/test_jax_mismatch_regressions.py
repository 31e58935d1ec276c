"""Regressions from the differential check against JAX (issue 19, item 10): dtypes,
shapes, empty operands and complex inputs, each value pinned from JAX 0.10.2."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp

I8 = np.array([100, 100, 100], np.int8)


@pytest.mark.parametrize("fn,want", [
    (jnp.cumsum, [100, -56, 44]),
    (jnp.nancumsum, [100, -56, 44]),
    (jnp.cumprod, [100, 16, 64]),
    (jnp.nancumprod, [100, 16, 64]),
    (jnp.cumulative_prod, [100, 16, 64]),
])
def test_cumulative_keeps_int8_and_wraps(fn, want):
    for f in (fn, jax.jit(fn)):
        out = f(I8)
        assert out.dtype == np.int8
        np.testing.assert_array_equal(np.asarray(out), want)
    out = jax.vmap(fn)(np.stack([I8, I8]))
    assert out.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(out), [want, want])


def test_cumulative_sum_widens_narrow_integers_and_others_keep_them():
    out = jnp.cumulative_sum(I8)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [100, 200, 300])
    assert jnp.cumsum(np.array([200, 100], np.uint8)).dtype == np.uint8
    assert jnp.cumsum(np.array([200, 100], np.int16)).dtype == np.int16
    out = jnp.cumsum(np.array([True, False, True]))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [1, 1, 2])


@pytest.mark.parametrize("fn,x,want", [
    (jnp.cumsum, [1, 0, 2], [True, True, True]),
    (jnp.cumsum, [1.0, 0.0, 2.0], [True, True, True]),
    (jnp.cumsum, [0, -1, 1], [False, True, True]),  # -1 and 1 do not cancel
    (jnp.cumprod, [1, 0, 2], [True, False, False]),
])
def test_cumulative_dtype_bool(fn, x, want):
    for f in (fn, jax.jit(fn, static_argnames="dtype")):
        out = f(np.array(x), dtype=bool)
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(np.asarray(out), want)


@pytest.mark.parametrize("shape,axis,n,want_shape", [
    ((0,), -1, 1, (0,)), ((0,), -1, 2, (0,)), ((1,), -1, 1, (0,)), ((1,), -1, 2, (0,)),
    ((3, 0), 0, 1, (2, 0)), ((0, 3), 0, 1, (0, 3)),
])
def test_diff_of_empty_or_short_axis(shape, axis, n, want_shape):
    for f in (jnp.diff, jax.jit(jnp.diff, static_argnames=("n", "axis"))):
        out = f(jnp.zeros(shape), n=n, axis=axis)
        assert out.shape == want_shape and out.dtype == np.float32


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int16"])
def test_var_with_integer_dtype_gives_weak_default_float(dtype):
    x = np.array([1, 2, 3], np.uint32)
    for f in (jnp.var, jax.jit(jnp.var, static_argnames="dtype")):
        out = f(x, dtype=dtype)
        assert out.dtype == np.float32 and out.weak_type
        assert float(out) == 0.0  # JAX's: the mean and sums in the integer dtype
    out = jnp.var(x, dtype="float16")
    assert out.dtype == np.float16 and not out.weak_type
    np.testing.assert_allclose(float(out), 0.6665, rtol=1e-3)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32"])
def test_partition_and_argpartition_of_unsigned(dtype):
    x = np.array([5, 1, 4, 0, 2, 3, 255], dtype)
    for f in (jnp.partition, jax.jit(jnp.partition, static_argnames="kth")):
        out = np.asarray(f(x, kth=2))
        assert out.dtype == np.dtype(dtype)
        assert sorted(out[:2]) == [0, 1] and out[2] == 2 and set(out[3:]) == {3, 4, 5, 255}
    idx = np.asarray(jnp.argpartition(x, 2))
    assert idx.dtype == np.int32
    assert set(idx[:2]) == {1, 3} and idx[2] == 4 and set(idx[3:]) == {0, 2, 5, 6}
    # JAX 0.10.2's exact orders on its docstring-style input
    y = np.array([5, 1, 4, 2, 3], dtype)
    np.testing.assert_array_equal(np.asarray(jnp.partition(y, 2)), [1, 2, 3, 5, 4])
    np.testing.assert_array_equal(np.asarray(jnp.argpartition(y, 2)), [1, 3, 4, 0, 2])
    rows = np.stack([y, y[::-1]])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda r: jnp.partition(r, 2))(rows)),
                                  np.asarray(jnp.partition(rows, 2, axis=1)))
