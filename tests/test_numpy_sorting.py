"""jnp sorting, order statistics and cumulative functions against numpy (dtypes, NaNs,
stability, axes), lax cumulative primitives' derivatives and vmap, and jit against eager."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.test_util import check_grads

_rng = np.random.RandomState(0)
X = _rng.randint(-5, 5, size=(6, 7)).astype(np.float32)
XN = X.copy()
XN[1, 2] = np.nan
XN[4, 0] = np.nan


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort(axis):
    for x in (X, XN, X.astype(np.int32), X > 0, X.astype(np.float16)):
        np.testing.assert_array_equal(jnp.sort(x, axis=axis), np.sort(x, axis=axis))
        np.testing.assert_array_equal(jnp.argsort(x, axis=axis),
                                      np.argsort(x, axis=axis, kind="stable"))


def test_descending():
    x = X.astype(np.int32)
    np.testing.assert_array_equal(jnp.sort(x, descending=True), -np.sort(-x))
    # Stable descending keeps equal elements in their original order.
    want = np.argsort(-x, axis=-1, kind="stable")
    np.testing.assert_array_equal(jnp.argsort(x, descending=True), want)


def test_lexsort():
    a = _rng.randint(0, 3, size=20)
    b = _rng.randint(0, 3, size=20)
    c = _rng.randn(20)
    np.testing.assert_array_equal(jnp.lexsort((c, b, a)), np.lexsort((c, b, a)))
    m = _rng.randint(0, 3, size=(4, 9))
    np.testing.assert_array_equal(jnp.lexsort((m, m[::-1]), axis=0),
                                  np.lexsort((m, m[::-1]), axis=0))


@pytest.mark.parametrize("kth", [0, 3, 6])
def test_partition(kth):
    x = _rng.randn(5, 7).astype(np.float32)
    got = np.asarray(jnp.partition(x, kth, axis=-1))
    want = np.sort(x, axis=-1)
    np.testing.assert_array_equal(got[:, kth], want[:, kth])
    assert (got[:, :kth] <= got[:, kth:kth + 1]).all() and (got[:, kth + 1:] >= got[:, kth:kth + 1]).all()
    np.testing.assert_array_equal(np.sort(got, axis=-1), want)


@pytest.mark.parametrize("kth", [0, 2, 6])
@pytest.mark.parametrize("axis", [0, -1])
def test_argpartition(kth, axis):
    x = _rng.randn(7, 7).astype(np.float32)
    idx = np.asarray(jnp.argpartition(x, kth, axis=axis))
    got = np.take_along_axis(x, idx, axis=axis)
    np.testing.assert_array_equal(np.sort(idx, axis=axis),
                                  np.broadcast_to(np.arange(7)[:, None] if axis == 0
                                                  else np.arange(7), (7, 7)))
    want = np.partition(x, kth, axis=axis)
    np.testing.assert_array_equal(np.take(got, kth, axis=axis), np.take(want, kth, axis=axis))
    # The bottom part comes ascending, as JAX's top_k construction orders it.
    bottom = np.take(got, np.arange(kth + 1), axis=axis)
    np.testing.assert_array_equal(bottom, np.sort(bottom, axis=axis))
    if kth < 6:
        assert (np.take(got, np.arange(kth + 1, 7), axis=axis).min(axis=axis) >=
                np.take(want, kth, axis=axis)).all()


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    a = np.sort(_rng.randint(0, 10, size=13)).astype(np.float32)
    v = np.concatenate([np.arange(-1, 12, 0.5), [np.nan]]).astype(np.float32).reshape(3, 9)
    np.testing.assert_array_equal(jnp.searchsorted(a, v, side=side),
                                  np.searchsorted(a, v, side=side))
    an = np.array([1.0, 2.0, np.nan, np.nan], np.float32)
    np.testing.assert_array_equal(jnp.searchsorted(an, np.array([2.0, np.nan, 5.0], np.float32),
                                                   side=side),
                                  np.searchsorted(an, [2.0, np.nan, 5.0], side=side))
    for n in (0, 1, 2, 7, 8):
        ai = np.arange(n, dtype=np.int32) * 2
        vi = np.arange(-1, 2 * n + 1, dtype=np.int32)
        np.testing.assert_array_equal(jnp.searchsorted(ai, vi, side=side),
                                      np.searchsorted(ai, vi, side=side))
    perm = _rng.permutation(13)
    np.testing.assert_array_equal(
        jnp.searchsorted(a[perm], v, side=side, sorter=np.argsort(a[perm], kind="stable")),
        np.searchsorted(a[perm], v, side=side, sorter=np.argsort(a[perm], kind="stable")))


@pytest.mark.parametrize("right", [False, True])
def test_digitize(right):
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 7.0], np.float32)
    bins = np.array([0.0, 1.0, 2.5, 3.0], np.float32)
    np.testing.assert_array_equal(jnp.digitize(x, bins, right=right),
                                  np.digitize(x, bins, right=right))
    np.testing.assert_array_equal(jnp.digitize(x, bins[::-1], right=right),
                                  np.digitize(x, bins[::-1], right=right))


def test_unique():
    x = np.array([[3, 1, 2], [1, 3, 7]], np.int32)
    np.testing.assert_array_equal(jnp.unique(x), np.unique(x))
    got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    xn = np.array([2.0, np.nan, 1.0, np.nan, 2.0], np.float32)
    np.testing.assert_array_equal(jnp.unique(xn), np.unique(xn))
    f = jax.jit(lambda x: jnp.unique(x, size=6, fill_value=-1))
    np.testing.assert_array_equal(f(x), [1, 2, 3, 7, -1, -1])
    np.testing.assert_array_equal(jax.jit(lambda x: jnp.unique(x, size=2))(x), [1, 2])


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_quantile_median_percentile(axis, keepdims):
    x = _rng.randn(5, 8).astype(np.float32)
    q = np.array([0.0, 0.3, 0.5, 1.0], np.float32)
    np.testing.assert_allclose(jnp.quantile(x, q, axis=axis, keepdims=keepdims),
                               np.quantile(x, q, axis=axis, keepdims=keepdims), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(jnp.median(x, axis=axis, keepdims=keepdims),
                               np.median(x, axis=axis, keepdims=keepdims), rtol=1e-5)
    np.testing.assert_allclose(jnp.percentile(x, 37.0, axis=axis, keepdims=keepdims),
                               np.percentile(x, 37.0, axis=axis, keepdims=keepdims), rtol=1e-5)
    xn = x.copy()
    xn[2, 3] = np.nan
    np.testing.assert_allclose(jnp.median(xn, axis=axis), np.median(xn, axis=axis), rtol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_quantiles(axis):
    x = _rng.randn(5, 8).astype(np.float32)
    x[1, 3] = x[0, 0] = np.nan
    x[2, :] = np.nan  # an all-NaN row
    x[:, 5] = np.nan  # an all-NaN column
    q = np.array([0.0, 0.25, 1.0], np.float32)
    close = lambda got, want: np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    close(jnp.nanquantile(x, q, axis=axis), _quiet(np.nanquantile, x, q, axis=axis))
    close(jnp.nanmedian(x, axis=axis), _quiet(np.nanmedian, x, axis=axis))
    close(jnp.nanpercentile(x, 40.0, axis=axis, keepdims=True),
          _quiet(np.nanpercentile, x, 40.0, axis=axis, keepdims=True))


def _quiet(f, *args, **kwargs):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


def test_quantile_3d_middle_axis():
    x = _rng.randn(3, 4, 5)
    np.testing.assert_allclose(jnp.quantile(x, 0.25, axis=1), np.quantile(x, 0.25, axis=1),
                               rtol=1e-5)


# ---- cumulative ----

CUM = {"cumsum": np.cumsum, "cumprod": np.cumprod, "cummax": np.maximum.accumulate,
       "cummin": np.minimum.accumulate, "cumlogsumexp": np.logaddexp.accumulate}


@pytest.mark.parametrize("name", list(CUM))
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_lax_cumulative(name, axis, reverse):
    x = _rng.rand(5, 6).astype(np.float32) + 0.5
    want = CUM[name](x[::-1] if reverse and axis == 0 else
                     (x[:, ::-1] if reverse else x), axis=axis)
    if reverse:
        want = want[::-1] if axis == 0 else want[:, ::-1]
    got = getattr(lax, name)(x, axis=axis, reverse=reverse)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(lambda x: getattr(lax, name)(x, axis, reverse))(x),
                               got, rtol=1e-6)
    assert got.dtype == x.dtype


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.float16])
def test_lax_cumulative_dtypes(dtype):
    x = (_rng.rand(4, 5) * 4).astype(dtype)
    for name in ("cumsum", "cummax", "cummin"):
        got = getattr(lax, name)(x, axis=1)
        assert got.dtype == x.dtype
        np.testing.assert_allclose(np.asarray(got, np.float64),
                                   CUM[name](x, axis=1).astype(np.float64), rtol=2e-3)


def test_cummax_nan_propagates():
    x = np.array([1.0, np.nan, 3.0, 0.0], np.float32)
    got = np.asarray(lax.cummax(x))
    assert got[0] == 1.0 and np.isnan(got[1:]).all()


def test_lax_cumulative_errors():
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(np.arange(3, dtype=np.int32))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        lax.cumsum(np.zeros((2, 3)), axis=2)


@pytest.mark.parametrize("name", list(CUM))
def test_cumulative_grads(name):
    x = _rng.rand(3, 5) + 0.5
    f = getattr(lax, name)
    check_grads(lambda x: f(x, axis=1), (x,), 2)
    check_grads(lambda x: f(x, axis=0, reverse=True), (x,), 2)


@pytest.mark.parametrize("name", list(CUM))
def test_cumulative_vmap_matches_loop(name):
    x = _rng.rand(3, 4, 5).astype(np.float32) + 0.5
    f = lambda v: getattr(lax, name)(v, axis=1)
    for in_axis in (0, 1, 2):
        got = jax.vmap(f, in_axes=in_axis)(x)
        want = np.stack([f(np.take(x, i, axis=in_axis)) for i in range(x.shape[in_axis])])
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_jnp_cumulative():
    x = X
    np.testing.assert_array_equal(jnp.cumsum(x), np.cumsum(x))
    np.testing.assert_array_equal(jnp.cumsum(x, axis=0), np.cumsum(x, axis=0))
    np.testing.assert_allclose(jnp.cumprod(x / 4 + 1, axis=1), np.cumprod(x / 4 + 1, axis=1),
                               rtol=1e-5)
    np.testing.assert_array_equal(jnp.nancumsum(XN, axis=1), np.nancumsum(XN, axis=1))
    np.testing.assert_array_equal(jnp.nancumprod(XN, axis=0), np.nancumprod(XN, axis=0))
    b = X > 0
    assert jnp.cumsum(b).dtype == np.int32
    np.testing.assert_array_equal(jnp.cumsum(b, axis=1), np.cumsum(b, axis=1))
    assert jnp.cumsum(X.astype(np.int8)).dtype == np.int8  # JAX keeps (and wraps) int8
    np.testing.assert_array_equal(jnp.cumulative_sum(x, axis=1, include_initial=True),
                                  np.concatenate([np.zeros((6, 1), np.float32),
                                                  np.cumsum(x, axis=1)], axis=1))
    with pytest.raises(ValueError, match="axis argument is only optional"):
        jnp.cumulative_sum(x)


def test_diff_and_ediff1d():
    x = _rng.randint(-5, 5, size=(4, 6)).astype(np.int32)
    for n in (0, 1, 2):
        np.testing.assert_array_equal(jnp.diff(x, n=n), np.diff(x, n=n))
        np.testing.assert_array_equal(jnp.diff(x, n=n, axis=0), np.diff(x, n=n, axis=0))
    np.testing.assert_array_equal(jnp.diff(x, prepend=0, append=x[:, :1]),
                                  np.diff(x, prepend=0, append=x[:, :1]))
    np.testing.assert_array_equal(jnp.diff(x > 0), np.diff(x > 0))
    np.testing.assert_array_equal(jnp.ediff1d(x, to_begin=[9], to_end=[7, 8]),
                                  np.ediff1d(x, to_begin=[9], to_end=[7, 8]))


def test_trapezoid():
    y = _rng.randn(4, 7)
    x = np.sort(_rng.rand(7))
    np.testing.assert_allclose(jnp.trapezoid(y), np.trapezoid(y), rtol=1e-5)
    np.testing.assert_allclose(jnp.trapezoid(y, dx=0.3, axis=0), np.trapezoid(y, dx=0.3, axis=0),
                               rtol=1e-5)
    np.testing.assert_allclose(jnp.trapezoid(y, x), np.trapezoid(y, x), rtol=1e-5)
    x2 = np.sort(_rng.rand(4, 7), axis=0)
    np.testing.assert_allclose(jnp.trapezoid(y, x2, axis=0), np.trapezoid(y, x2, axis=0),
                               rtol=1e-5)


def test_jit_matches_eager():
    fns = [lambda x: jnp.sort(x, axis=0), lambda x: jnp.argsort(x, descending=True),
           lambda x: jnp.median(x, axis=1), lambda x: jnp.cumsum(x, axis=1),
           lambda x: jnp.searchsorted(jnp.sort(x[0]), x[1:]),
           lambda x: jnp.quantile(x, jnp.array([0.1, 0.9]), axis=0)]
    for f in fns:
        np.testing.assert_array_equal(jax.jit(f)(X), f(X))


@pytest.fixture
def x64():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", prev)


def test_sort_grad_through_jnp(x64):
    # Well-separated float64 values: the finite differences never reorder them.
    rng = np.random.RandomState(5)
    x = rng.permutation(20).reshape(4, 5) * 0.5 + rng.rand(4, 5) * 0.1
    check_grads(lambda x: jnp.sort(x, axis=0), (x,), 2)
    check_grads(lambda x: jnp.median(x, axis=1), (x,), 1)
    check_grads(lambda x: jnp.cumsum(x, axis=1), (x,), 2)
