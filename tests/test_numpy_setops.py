"""jnp.unique (axis, size, fill_value), unique_*, isin and the 1-d set operations against
numpy, with JAX's padding conventions pinned; jit (with size) and vmap; JAX's errors."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import errors

_rng = np.random.RandomState(2)
A = np.array
XF = A([3, 1, 2, 3, 1, 5, np.nan, np.nan], np.float32)


@pytest.mark.parametrize("x", [
    _rng.randint(-3, 4, size=30), XF, _rng.randint(0, 3, size=(4, 5)).astype(np.int8),
    A([True, False, True]), A([], np.float32), A([2.5]), A([1 + 2j, 1 - 1j, 1 + 2j])])
def test_unique_matches_numpy(x):
    got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(jnp.unique(x), np.unique(x))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unique_axis(axis):
    # Issue 19: unique(axis=) raised.
    x = _rng.randint(0, 2, size=(6, 3))
    x = np.concatenate([x, x[:2]], 0)
    got = jnp.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, np.reshape(w, np.shape(g)))
    x3 = _rng.randint(0, 2, size=(3, 4, 2))
    np.testing.assert_array_equal(jnp.unique(x3, axis=1), np.unique(x3, axis=1))


def test_unique_size_padding_pinned_from_jax():
    vals, idx, inv, counts = jnp.unique(XF, size=7, return_index=True, return_inverse=True,
                                        return_counts=True)
    np.testing.assert_array_equal(vals, [1, 2, 3, 5, np.nan, 1, 1])
    np.testing.assert_array_equal(idx, [1, 2, 0, 5, 6, 1, 1])
    np.testing.assert_array_equal(counts, [2, 1, 2, 1, 2, 0, 0])
    np.testing.assert_array_equal(inv, [2, 0, 1, 2, 0, 3, 4, 4])
    v3, i3, c3 = jnp.unique(XF, size=3, return_index=True, return_counts=True)
    np.testing.assert_array_equal(v3, [1, 2, 3])
    np.testing.assert_array_equal(c3, [2, 1, 2])
    np.testing.assert_array_equal(jnp.unique(XF, size=7, fill_value=-1),
                                  [1, 2, 3, 5, np.nan, -1, -1])
    np.testing.assert_array_equal(
        jnp.unique(A([[1, 2], [1, 2], [0, 5]]), axis=0, size=4, fill_value=9),
        [[0, 5], [1, 2], [9, 9], [9, 9]])
    np.testing.assert_array_equal(jnp.unique(jnp.zeros((0,)), size=3, fill_value=4), [4, 4, 4])
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(jnp.zeros((0,)), size=3)


def test_unique_under_jit_and_vmap():
    f = jax.jit(lambda x: jnp.unique(x, size=4))
    np.testing.assert_array_equal(f(XF), [1, 2, 3, 5])
    with pytest.raises(errors.ConcretizationTypeError, match="size argument"):
        jax.jit(jnp.unique)(XF)
    got = jax.vmap(lambda x: jnp.unique(x, size=3, fill_value=0))(XF.reshape(2, 4))
    np.testing.assert_array_equal(got, [[1, 2, 3], [1, 5, np.nan]])


def test_unique_array_api_pinned_from_jax():
    x = A([1.0, np.nan, np.nan, 1])
    r = jnp.unique_all(x)
    assert type(r).__name__ == "_UniqueAllResult"
    np.testing.assert_array_equal(r.values, [1, np.nan, np.nan])   # NaNs not merged
    np.testing.assert_array_equal(r.indices, [0, 1, 2])
    np.testing.assert_array_equal(r.inverse_indices, [0, 1, 2, 0])
    np.testing.assert_array_equal(r.counts, [2, 1, 1])
    np.testing.assert_array_equal(jnp.unique_counts(x).counts, [2, 1, 1])
    m = A([[1.0, 3], [3, 1]])
    np.testing.assert_array_equal(jnp.unique_inverse(m).inverse_indices, [[0, 1], [1, 0]])
    np.testing.assert_array_equal(jnp.unique_values(m), [1, 3])


@pytest.mark.parametrize("method", ["auto", "compare_all", "binary_search", "sort"])
@pytest.mark.parametrize("invert", [False, True])
def test_isin(method, invert):
    for el, test in [(np.arange(6), A([1, 3, 9])), (np.arange(12).reshape(3, 4), A([[0, 11], [5, 7]])),
                     (np.arange(6), A([], np.int32)), (A([], np.int32), A([1])),
                     (np.arange(6), A([1.5, 2.0])), (_rng.randint(0, 500, 2000), _rng.randint(0, 500, 300)),
                     (A([1.0, np.nan]), A([np.nan, 1.0]))]:
        got = jnp.isin(el, test, invert=invert, method=method)
        np.testing.assert_array_equal(got, np.isin(el, test, invert=invert))
    with pytest.raises(ValueError, match="is not implemented"):
        jnp.isin(np.arange(3), np.arange(2), method="table")
    with pytest.raises(TypeError, match="isin requires ndarray or scalar arguments"):
        jnp.isin(np.arange(3), [1, 2])
    np.testing.assert_array_equal(jax.jit(jnp.isin)(np.arange(5), A([2, 4])),
                                  np.isin(np.arange(5), [2, 4]))


def test_set_operations_match_numpy():
    for a, b in [(A([1, 2, 3, 4, 4]), A([4, 3, 4, 5])), (_rng.randint(0, 20, 40), _rng.randint(10, 30, 25)),
                 (A([], np.int32), A([1, 2])), (A([1.5, 2.5]), A([2.5]))]:
        np.testing.assert_array_equal(jnp.intersect1d(a, b), np.intersect1d(a, b))
        for g, w in zip(jnp.intersect1d(a, b, return_indices=True),
                        np.intersect1d(a, b, return_indices=True)):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(jnp.setdiff1d(a, b), np.setdiff1d(a, b))
        np.testing.assert_array_equal(jnp.setxor1d(a, b), np.setxor1d(a, b))
        np.testing.assert_array_equal(jnp.union1d(a, b), np.union1d(a, b))
    u = A([1, 2, 3, 4])
    v = A([4, 3, 5])
    for g, w in zip(jnp.intersect1d(u, v, assume_unique=True, return_indices=True),
                    np.intersect1d(u, v, assume_unique=True, return_indices=True)):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(jnp.setxor1d(u, v, assume_unique=True),
                                  np.setxor1d(u, v, assume_unique=True))
    np.testing.assert_array_equal(jnp.setdiff1d(u, v, assume_unique=True),
                                  np.setdiff1d(u, v, assume_unique=True))


def test_set_operations_with_size_pinned_from_jax():
    a, b = A([1, 2, 3, 4, 4]), A([4, 3, 4, 5])
    vals, i1, i2 = jnp.intersect1d(a, b, return_indices=True, size=4)
    np.testing.assert_array_equal(vals, [3, 4, 3, 3])
    np.testing.assert_array_equal(i1, [2, 3, 5, 5])
    np.testing.assert_array_equal(i2, [1, 0, 4, 4])
    vals, i1, i2 = jnp.intersect1d(A([1, 2, 3, 4]), A([4, 3, 5]), return_indices=True, size=4,
                                   assume_unique=True)
    np.testing.assert_array_equal(vals, [3, 4, 3, 3])
    np.testing.assert_array_equal(i1, [2, 3, 4, 4])
    np.testing.assert_array_equal(i2, [1, 0, 3, 3])
    np.testing.assert_array_equal(jnp.intersect1d(a, b, size=4, fill_value=-7), [3, 4, -7, -7])
    np.testing.assert_array_equal(jnp.setdiff1d(A([1, 2, 3, 4, 1]), A([3]), size=6),
                                  [1, 2, 4, 0, 0, 0])
    np.testing.assert_array_equal(jnp.setdiff1d(A([1, 2, 3, 4, 1]), A([3]), size=2), [1, 2])
    np.testing.assert_array_equal(jnp.setxor1d(A([1, 2, 3, 3]), A([2, 3, 4]), size=5),
                                  [1, 4, 1, 1, 1])
    np.testing.assert_array_equal(jnp.setxor1d(A([1, 2, 3]), A([2, 3, 4]), size=5,
                                               assume_unique=True), [1, 4, 1, 1, 1])
    np.testing.assert_array_equal(jnp.setxor1d(A([1, 2, 3]), A([2, 3, 4]), size=5, fill_value=0),
                                  [1, 4, 0, 0, 0])
    np.testing.assert_array_equal(jnp.union1d(A([3, 1]), A([2]), size=5), [1, 2, 3, 1, 1])
    np.testing.assert_array_equal(jnp.union1d(A([3, 1]), A([2]), size=5, fill_value=0),
                                  [1, 2, 3, 0, 0])
    assert jnp.union1d(A([3, 1]), A([2.5])).dtype == np.float32


def test_set_operations_under_jit():
    a, b = A([1, 2, 3, 4, 4]), A([4, 3, 4, 5])
    f = jax.jit(lambda a, b: jnp.intersect1d(a, b, size=3, return_indices=True))
    for g, w in zip(f(a, b), jnp.intersect1d(a, b, size=3, return_indices=True)):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(jax.jit(lambda a, b: jnp.setxor1d(a, b, size=4))(a, b),
                                  jnp.setxor1d(a, b, size=4))
    np.testing.assert_array_equal(jax.jit(lambda a, b: jnp.union1d(a, b, size=5))(a, b),
                                  [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(jax.jit(lambda a, b: jnp.setdiff1d(a, b, size=3))(a, b),
                                  [1, 2, 0])
    for f in (lambda x: jnp.setdiff1d(x, x), lambda x: jnp.union1d(x, x)):
        with pytest.raises(errors.ConcretizationTypeError):
            jax.jit(f)(a)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint32, np.int32])
def test_isin_lookup_table_at_dtype_extremes(dtype):
    # The integer lookup table offsets values from the smallest test element; those
    # offsets must not wrap in the input's dtype.
    info = np.iinfo(dtype)
    a = _rng.randint(info.min, int(info.max) + 1, 3000, dtype=np.int64).astype(dtype)
    for test in (np.concatenate([a[:40], A([info.min, info.max], dtype)]),
                 _rng.randint(0, 100, 300).astype(dtype)):
        for invert in (False, True):
            np.testing.assert_array_equal(jnp.isin(a, test, invert=invert),
                                          np.isin(a, test, invert=invert))
