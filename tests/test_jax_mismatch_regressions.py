"""Regressions from the differential check against JAX (issue 19, item 10): dtypes,
shapes, empty operands and complex inputs, each value pinned from JAX 0.10.2."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax

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


@pytest.mark.parametrize("dtype,msg", [
    (np.float16, "float() argument must be a string or a real number, not 'complex'"),
    (np.float32, "float() argument must be a string or a real number, not 'complex'"),
    (np.int32, "int() argument must be a string, a bytes-like object or a real number, not "
               "'complex'"),
    (np.uint8, "int() argument must be a string, a bytes-like object or a real number, not "
               "'complex'"),
])
def test_convert_python_complex_to_real_raises_like_jax(dtype, msg):
    for v in (1 + 2j, 1 + 0j):
        with pytest.raises(TypeError) as info:
            jax.lax.convert_element_type(v, dtype)
        assert str(info.value) == msg
    with pytest.raises(TypeError):
        jax.jit(lambda: jax.lax.convert_element_type(1 + 2j, dtype))()


def test_convert_complex_array_or_to_bool_keeps_working():
    assert bool(jax.lax.convert_element_type(1 + 2j, np.bool_))
    with pytest.warns(np.exceptions.ComplexWarning):
        out = jax.lax.convert_element_type(jnp.array(1 + 2j), np.float16)
    assert out.dtype == np.float16 and float(out) == 1.0
    out = jax.lax.convert_element_type(1 + 2j, np.complex64)
    assert complex(out) == 1 + 2j


def test_psum_of_bool_counts_in_int32():
    f = jax.vmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")
    out = f(jnp.array([True, False, True]))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [2, 2, 2])
    out = f(jnp.array([100, 100, 1], np.int8))
    assert out.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(out), [-55, -55, -55])


def test_ppermute_partial_permutation_under_vmap_raises_like_jax():
    f = jax.vmap(lambda v: jax.lax.ppermute(v, "i", [(0, 1)]), axis_name="i")
    with pytest.raises(AssertionError, match="Permutation doesn't match the axis size!"):
        f(jnp.array([1.0, 2.0, 3.0]))
    full = jax.vmap(lambda v: jax.lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]),
                    axis_name="i")
    np.testing.assert_array_equal(np.asarray(full(jnp.array([1.0, 2.0, 3.0]))), [3, 1, 2])


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
def test_lax_cumulative_rejects_negative_axes(name):
    f = getattr(jax.lax, name)
    with pytest.raises(ValueError, match="XLA operations do not allow negative axes"):
        f(jnp.ones((2, 3)), axis=-1)
    with pytest.raises(ValueError, match=r"axis 2 is out of bounds for array of shape \(2, 3\)"):
        f(jnp.ones((2, 3)), axis=2)
    assert f(jnp.ones((2, 3)), axis=1).shape == (2, 3)
    np.testing.assert_allclose(np.asarray(jnp.cumsum(jnp.ones((2, 3)), axis=-1)),
                               [[1, 2, 3], [1, 2, 3]])


@pytest.mark.parametrize("fn", [jnp.mean, jnp.var, jnp.std])
@pytest.mark.parametrize("axis", [2, -3, (0, 5)])
def test_mean_var_std_out_of_range_axis_raise_index_error(fn, axis):
    with pytest.raises(IndexError, match="tuple index out of range"):
        fn(jnp.ones((2, 3)), axis=axis)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sum(jnp.ones((2, 3)), axis=2)  # sum's is numpy's ValueError, as in JAX
    np.testing.assert_allclose(float(fn(jnp.ones((2, 3)), axis=-2)[0]),
                               0.0 if fn is not jnp.mean else 1.0)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4)])
def test_grad_of_sort_of_empty_array(shape):
    f = lambda x: jnp.sum(jnp.sort(x, axis=-1) * 2.0)
    for g in (jax.grad(f), jax.jit(jax.grad(f))):
        out = g(jnp.zeros(shape))
        assert out.shape == shape and out.dtype == np.float32
    out = jax.jacfwd(lambda x: jnp.sort(x))(jnp.zeros((0,)))
    assert out.shape == (0, 0)
    g = jax.grad(f)(jnp.array([3.0, 1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(g), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("method", ["max", "min"])
@pytest.mark.parametrize("mode,idx", [("drop", (0, 5, -1)), (None, (0, 5, -1)),
                                      ("drop", (0, 7, 2))])
def test_scatter_extremum_gradient_of_dropped_updates_is_zero(method, mode, idx):
    # JAX 0.10.2: updates that land out of bounds (dropped) get gradient 0, never NaN;
    # jnp indexing wraps -1 to the last element
    u = jnp.array([1.0, 2.0, 3.0]) * (1 if method == "max" else -1)
    def f(v):
        ref = getattr(jnp.zeros(5).at[jnp.array(idx)], method)
        return jnp.sum(ref(v, mode=mode) * jnp.arange(5.0))
    g = np.asarray(jax.grad(f)(u))
    want = {(0, 5, -1): [0.0, 0.0, 4.0], (0, 7, 2): [0.0, 0.0, 2.0]}[idx]  # -1 wraps
    np.testing.assert_array_equal(g, want)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.grad(f))(u)), want)


def test_complex_dot_with_real_preferred_element_type():
    # JAX counts complex64 as 32 bits: float32 is not narrower; the real part is kept
    lax = jax.lax
    c = jnp.array([1 + 2j, 3 - 1j, 2 + 5j], jnp.complex64)
    m = jnp.array([[1 + 2j, 3 - 1j], [2 + 5j, -1j]], jnp.complex64)
    out = lax.dot(c, c, preferred_element_type=jnp.float32)
    assert out.dtype == np.float32 and float(out) == -16.0
    want = [[8.0, 4.0], [-3.0, 10.0]]
    np.testing.assert_array_equal(np.asarray(lax.dot(m, m, preferred_element_type=np.float32)),
                                  want)
    out = jax.jit(lambda a: lax.dot(a, a, preferred_element_type=jnp.float32))(m)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), want)
    out = lax.dot(c, c, preferred_element_type=jnp.int32)
    assert out.dtype == np.int32 and int(out) == -16
    with pytest.raises(TypeError, match="must not be narrower than the original type, got "
                       "preferred_element_type of float16 for result type of complex64"):
        lax.dot(c, c, preferred_element_type=jnp.float16)


def test_cummax_cummin_of_complex_order_lexicographically():
    lax = jax.lax
    c = jnp.array([1 + 2j, 3 - 1j, 2 + 5j], jnp.complex64)
    np.testing.assert_array_equal(np.asarray(lax.cummax(c)), [1 + 2j, 3 - 1j, 3 - 1j])
    np.testing.assert_array_equal(np.asarray(lax.cummin(c)), [1 + 2j] * 3)
    np.testing.assert_array_equal(np.asarray(lax.cummax(c, reverse=True)),
                                  [3 - 1j, 3 - 1j, 2 + 5j])
    x = jnp.array([[1 + 2j, 3 - 1j, 2 + 5j], [0j, 1j, -1j]], jnp.complex64)
    out = jax.jit(lambda v: lax.cummax(v, axis=1))(x)
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(out), [[1 + 2j, 3 - 1j, 3 - 1j], [0, 1j, 1j]])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lax.cummin)(x)),
                                  [[1 + 2j] * 3, [0, 0, -1j]])
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cummax(c, axis=1)


def test_searchsorted_and_digitize_of_complex_match_jax():
    a = jnp.array([1 + 2j, 1 + 1j, np.nan + 0j, 2 - 1j, 1 + np.nan * 1j], jnp.complex64)
    s = jnp.sort(a)
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(s, a)), [1, 0, 3, 2, 4])
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(s, a, side="right")),
                                  [2, 1, 4, 3, 5])
    # JAX's digitize reads the direction from bins[-1] >= bins[0] (False with a NaN last)
    np.testing.assert_array_equal(np.asarray(jnp.digitize(a, s)), [5, 5, 0, 0, 0])
    np.testing.assert_array_equal(np.asarray(jnp.digitize(a, s[::-1])), [3, 4, 1, 2, 0])
    np.testing.assert_array_equal(np.asarray(jnp.digitize(a, s, right=True)), [5, 5, 0, 5, 0])
    c = jnp.array([1 + 2j, 3 - 1j, 2 + 5j], jnp.complex64)
    sc = jnp.sort(c)
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(sc, jnp.array([2 + 0j, 3 + 0j]))),
                                  [1, 3])
    np.testing.assert_array_equal(np.asarray(jax.jit(jnp.searchsorted)(sc, c)), [0, 2, 1])
    np.testing.assert_array_equal(
        np.asarray(jax.vmap(lambda v: jnp.digitize(v, sc))(c)), [1, 3, 2])


def test_cumlogsumexp_of_complex_matches_jax():
    c = jnp.array([1 + 2j, 0.5 - 1j, 3 + 0j], jnp.complex64)
    want = [1 + 2j, 0.10499308 + 1.7889591j, 2.9894497 + 0.05458759j]  # jax 0.10.2
    for f in (lax.cumlogsumexp, jax.jit(lax.cumlogsumexp)):
        np.testing.assert_allclose(np.asarray(f(c)), want, rtol=2e-6)
    np.testing.assert_allclose(  # jax 0.10.2, reverse
        np.asarray(lax.cumlogsumexp(c, reverse=True)),
        [2.9894497 + 0.0545876j, 3.0455778 - 0.06604266j, 3 + 0j], rtol=2e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(lax.cumlogsumexp)(jnp.stack([c, c]))),
                               [want, want], rtol=2e-6)
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(jnp.ones(3, jnp.int32))


def test_advanced_index_with_no_values_gives_an_empty_array():
    # JAX skips the gather, whose slices would not fit an empty axis.
    x = jnp.zeros((0, 3))
    for f in (lambda x, i: x[i, i], jax.jit(lambda x, i: x[i, i])):
        out = f(x, jnp.arange(0))
        assert out.shape == (0,) and out.dtype == np.float32
    assert x[jnp.arange(0)].shape == (0, 3)


def test_bfloat16_denormals_read_as_zero_in_every_path():
    # XLA:CPU flushes bf16 denormals in compares (JAX's eager flatnonzero gives [0 2 3]); its
    # jit of the same function gives [0 1 2]. tinyxla answers [0 2 3] on every path.
    x = jnp.array(np.array([-8.5e37, -2.76e-40, np.nan, -0.5]), dtype=jnp.bfloat16)
    f = lambda x: jnp.flatnonzero(x, size=3, fill_value=-1)
    for g in (f, jax.jit(f)):
        np.testing.assert_array_equal(np.asarray(g(x)), [0, 2, 3])
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(jnp.stack([x, x]))), [[0, 2, 3]] * 2)
