"""lax.sort, sort_key_val and top_k against numpy (stable orders, NaN placement, -0.0,
every dtype), numerical derivatives, vmap against a loop, and jit against eager."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.test_util import check_grads

try:
    import ml_dtypes
    BF16 = [ml_dtypes.bfloat16]
except ImportError:  # pragma: no cover
    BF16 = []

_rng = np.random.RandomState(0)


def _values(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return _rng.rand(*shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return _rng.randint(max(info.min, -50), min(info.max, 50), size=shape).astype(dtype)
    x = _rng.randint(-8, 8, size=shape).astype(np.float32)  # repeats test stability
    return x.astype(dtype)


DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint32, np.float16,
          np.float32] + BF16


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_sort_matches_numpy(dtype, dimension):
    x = _values(dtype, (7, 33))
    got = lax.sort(jnp.asarray(x), dimension=dimension)
    want = np.sort(x.astype(np.float64) if dtype in BF16 else x, axis=dimension, kind="stable")
    np.testing.assert_array_equal(np.asarray(got).astype(want.dtype), want)
    assert got.dtype == x.dtype


def test_sort_nans_last_and_negative_zero_stable():
    x = np.array([np.nan, 1.0, -0.0, -np.inf, 0.0, -np.nan, -1.0, -0.0, np.inf], np.float32)
    got = np.asarray(lax.sort(x))
    np.testing.assert_array_equal(got[:7], [-np.inf, -1.0, -0.0, 0.0, -0.0, 1.0, np.inf])
    # -0.0 and 0.0 are equal keys: the stable sort keeps their order.
    np.testing.assert_array_equal(np.signbit(got[2:5]), [True, False, True])
    assert np.isnan(got[7:]).all()


def test_sort_multiple_operands_num_keys_and_stability():
    k1 = np.array([2, 1, 2, 1, 0, 2], np.int32)
    k2 = np.array([1.0, 5.0, 0.0, 5.0, 3.0, np.nan], np.float32)
    v = np.arange(6, dtype=np.int32)
    a, b, c = lax.sort((k1, k2, v), num_keys=2)
    order = np.lexsort((k2, k1))  # numpy: last key primary, stable, NaN last
    np.testing.assert_array_equal(a, k1[order])
    np.testing.assert_array_equal(c, v[order])
    a, c = lax.sort((k1, v), num_keys=1)
    np.testing.assert_array_equal(c, np.argsort(k1, kind="stable"))


def test_sort_complex_is_lexicographic():
    x = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 0j, np.nan + 0j], np.complex64)
    got = np.asarray(lax.sort(x))
    np.testing.assert_array_equal(got[:4], np.sort(x[:4]))
    assert np.isnan(got[4].real)


def test_sort_of_strided_views_and_3d():
    x = _rng.randn(4, 5, 6).astype(np.float32)
    for d in range(3):
        np.testing.assert_array_equal(lax.sort(jnp.asarray(x).transpose(2, 0, 1), dimension=d),
                                      np.sort(x.transpose(2, 0, 1), axis=d))


def test_sort_key_val():
    k = np.array([3, 1, 2, 1], np.int32)
    v = np.array([10.0, 20.0, 30.0, 40.0], np.float32)
    sk, sv = lax.sort_key_val(k, v)
    np.testing.assert_array_equal(sk, [1, 1, 2, 3])
    np.testing.assert_array_equal(sv, [20.0, 40.0, 30.0, 10.0])


def test_top_k():
    x = np.array([[1.0, np.nan, 3.0, 3.0, -0.5], [5.0, 4.0, 4.0, 0.0, 9.0]], np.float32)
    vals, idx = lax.top_k(x, 3)
    np.testing.assert_array_equal(idx, [[1, 2, 3], [4, 0, 1]])
    np.testing.assert_array_equal(vals[1], [9.0, 5.0, 4.0])
    assert idx.dtype == np.int32
    xi = np.array([np.iinfo(np.int32).min, 7, -2, np.iinfo(np.int32).max], np.int32)
    vals, idx = lax.top_k(xi, 2)
    np.testing.assert_array_equal(vals, [np.iinfo(np.int32).max, 7])
    with pytest.raises(ValueError, match="k argument to top_k must be no larger"):
        lax.top_k(x, 6)


def test_sort_errors():
    with pytest.raises(TypeError, match="Arguments to sort must have equal shapes"):
        lax.sort((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="num_keys=3 must be between 1 and"):
        lax.sort((np.zeros(3), np.zeros(3)), num_keys=3)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        lax.sort(np.zeros((2, 3)), dimension=2)


def test_sort_grads():
    x = _rng.randn(3, 5)
    check_grads(lambda x: lax.sort(x, dimension=1), (x,), 2)
    check_grads(lambda x: lax.sort(x, dimension=0), (x,), 2)
    y = _rng.randn(3, 5)
    check_grads(lambda x, y: lax.sort((x, y), dimension=1)[1], (x, y), 2)
    check_grads(lambda x: lax.top_k(x, 2)[0], (x,), 2)


@pytest.mark.parametrize("in_axes", [0, 1])
def test_sort_vmap_matches_loop(in_axes):
    x = _rng.randn(4, 6).astype(np.float32)
    got = jax.vmap(lambda a: lax.sort(a), in_axes=in_axes)(x)
    want = np.stack([np.sort(np.take(x, i, axis=in_axes)) for i in range(x.shape[in_axes])])
    np.testing.assert_array_equal(got, want)


def test_sort_vmap_with_unbatched_operand():
    keys = _rng.randint(0, 3, size=(4, 6)).astype(np.int32)
    vals = _rng.randn(6).astype(np.float32)
    f = lambda k, v: lax.sort((k, v), dimension=0)
    got_k, got_v = jax.vmap(f, in_axes=(0, None))(keys, vals)
    for i in range(4):
        want_k, want_v = f(keys[i], vals)
        np.testing.assert_array_equal(got_k[i], want_k)
        np.testing.assert_array_equal(got_v[i], want_v)
    got_k, got_v = jax.vmap(f, in_axes=(None, 1))(keys[0], np.stack([vals] * 3, axis=1))
    np.testing.assert_array_equal(got_v[2], f(keys[0], vals)[1])


def test_sort_jit_matches_eager():
    x = _rng.randn(5, 9).astype(np.float32)
    v = np.arange(45, dtype=np.int32).reshape(5, 9)
    f = lambda x, v: lax.sort((x, v), dimension=0)
    for g, w in zip(jax.jit(f)(x, v), f(x, v)):
        np.testing.assert_array_equal(g, w)
    fk = lambda x: lax.top_k(x * 2.0, 3)
    for g, w in zip(jax.jit(fk)(x), fk(x)):
        np.testing.assert_array_equal(g, w)
    gr = jax.jit(jax.grad(lambda x: jnp.sum(lax.sort(x)[:, :2] ** 2)))(x)
    np.testing.assert_allclose(gr, jax.grad(lambda x: jnp.sum(lax.sort(x)[:, :2] ** 2))(x))


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.int32, np.uint32, np.float32])
def test_long_rows_radix_path(dtype):
    # Rows of >= 256 elements sort by radix keys: same order as the comparison sort.
    x = (_rng.randn(3, 3000) * 1000).astype(dtype)
    if dtype == np.float32:
        x[0, ::7] = np.nan
        x[1, ::5] = -0.0
        x[1, 1::5] = 0.0
        x[2, ::11] = -np.inf
    got = np.asarray(lax.sort(x, dimension=1))
    np.testing.assert_array_equal(got, np.sort(x, axis=1))
    if dtype == np.float32:
        # -0.0 / 0.0 keep their input order (stable among equal keys).
        zeros = x[1][x[1] == 0]
        np.testing.assert_array_equal(np.signbit(got[1][got[1] == 0]), np.signbit(zeros))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint16])
def test_long_rows_radix_order_of_several_operands(dtype):
    # argsort-style (key, iota) sorts of long rows and columns order by radix keys.
    x = (_rng.randn(4, 2000) * 50).astype(dtype)
    if dtype == np.float32:
        x[0, ::9] = np.nan
        x[1, ::4] = -0.0
    idx = lax.broadcasted_iota(np.int32, x.shape, 1)
    _, got = lax.sort((x, idx), dimension=1)
    np.testing.assert_array_equal(got, np.argsort(x, axis=1, kind="stable"))
    xt = np.ascontiguousarray(x.T)
    _, got = lax.sort((xt, lax.broadcasted_iota(np.int32, xt.shape, 0)), dimension=0)
    np.testing.assert_array_equal(got, np.argsort(xt, axis=0, kind="stable"))


def test_top_k_total_order_pinned_from_jax():
    # jax.lax.top_k(x, 6)[1] in JAX 0.10.2: +NaN first, -NaN last, 0.0 before -0.0.
    x = np.array([1, -np.nan, np.nan, -0.0, 0.0, -np.inf], np.float32)
    np.testing.assert_array_equal(lax.top_k(x, 6)[1], [2, 0, 4, 3, 5, 1])
