"""bincount, histogram*, average, count_nonzero, cov, corrcoef, vecdot, matvec, vecmat,
cross, kron, and every quantile method, against numpy with JAX's conventions pinned
(dropped out-of-range values, clipped negative bins, dtypes); jit, vmap, grad, errors."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import errors
from tinyxla.test_util import check_grads

_rng = np.random.RandomState(3)
A = np.array
X = _rng.randn(3, 5).astype(np.float32)
S = _rng.randn(200).astype(np.float32)


def test_bincount():
    x = A([0, 1, 1, 3, 2, 1, 7])
    np.testing.assert_array_equal(jnp.bincount(x), np.bincount(x))
    np.testing.assert_array_equal(jnp.bincount(x, minlength=10), np.bincount(x, minlength=10))
    w = A([0.5, 1, 1, 2, 1, 1, 3], np.float32)
    np.testing.assert_allclose(jnp.bincount(x, weights=w), np.bincount(x, weights=w))
    # JAX: negative values count in bin 0; values past length are dropped.
    np.testing.assert_array_equal(jnp.bincount(A([0, -2, 1, 5]), length=3), [2, 1, 0])
    np.testing.assert_array_equal(jnp.bincount(A([True, False, True])), [1, 2])
    np.testing.assert_array_equal(jnp.bincount(A([], np.int32)), np.zeros(0))
    assert jnp.bincount(x).dtype == np.int32
    np.testing.assert_array_equal(jax.jit(lambda x: jnp.bincount(x, length=4))(x), [1, 3, 1, 1])
    np.testing.assert_array_equal(jax.vmap(lambda x: jnp.bincount(x, length=3))(A([[0, 1], [2, 2]])),
                                  [[1, 1, 0], [0, 0, 2]])
    with pytest.raises(TypeError, match="must have an integer type; got float32"):
        jnp.bincount(A([1.5], np.float32))
    with pytest.raises(ValueError, match="only 1-dimensional input supported."):
        jnp.bincount(A([[1]]))
    with pytest.raises(ValueError, match="type of weights must match type of x."):
        jnp.bincount(A([0, 1, 1, 3]), weights=A([0.5, 1]))
    with pytest.raises(errors.ConcretizationTypeError, match="pass a static `length`"):
        jax.jit(jnp.bincount)(x)


@pytest.mark.parametrize("bins,rng", [(10, None), (5, (-1, 1)), (7, (-0.3, 2.5)),
                                      (A([-2.0, 0, 0.5, 3]), None), (1, None), (64, (-3, 3))])
def test_histogram(bins, rng):
    c, e = jnp.histogram(S, bins=bins, range=rng)
    wc, we = np.histogram(S, bins=bins, range=rng)
    np.testing.assert_allclose(e, we, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(c, wc)
    assert c.dtype == np.float32
    w = np.abs(S)
    c, _ = jnp.histogram(S, bins=bins, range=rng, weights=w, density=True)
    np.testing.assert_allclose(c, np.histogram(S, bins=bins, range=rng, weights=w,
                                               density=True)[0], rtol=1e-5)
    f = jax.jit(lambda s: jnp.histogram(s, bins=bins, range=rng))
    np.testing.assert_array_equal(f(S)[0], wc)


def test_histogram_edges_and_errors():
    # Values on every edge, outside, NaN, and a flat sample.
    x = A([0, 1, 2, 3, 4, -1, 5, np.nan], np.float32)
    c, e = jnp.histogram(x, bins=4, range=(0, 4))
    np.testing.assert_array_equal(c, [1, 1, 1, 2])
    np.testing.assert_array_equal(jnp.histogram(A([1, 1, 1]))[0], np.histogram([1, 1, 1])[0])
    np.testing.assert_allclose(jnp.histogram_bin_edges(A([1, 5, 9]), bins=4), [1, 3, 5, 7, 9])
    with pytest.raises(ValueError, match="`range` must be either None or a sequence of scalars"):
        jnp.histogram_bin_edges(A([1, 5, 9]), bins=4, range=(0, 1, 2))
    with pytest.raises(NotImplementedError, match="string values for `bins` not implemented."):
        jnp.histogram_bin_edges(S, bins="auto")
    with pytest.raises(ValueError, match="weights should have the same shape as a."):
        jnp.histogram(S, weights=S[:3])
    g = jax.grad(lambda w: jnp.histogram(S, bins=3, weights=w)[0][1])(np.ones(200, np.float32))
    assert float(g.sum()) == np.histogram(S, bins=3)[0][1]
    got = jax.vmap(lambda s: jnp.histogram(s, bins=3, range=(-1, 1))[0])(S[:40].reshape(4, 10))
    np.testing.assert_array_equal(got, [np.histogram(s, bins=3, range=(-1, 1))[0]
                                        for s in S[:40].reshape(4, 10)])


def test_histogram2d_dd():
    x, y = S[:100], S[100:]
    for bins in (3, [2, A([-1.0, 0, 1])], [4, 5]):
        h, ex, ey = jnp.histogram2d(x, y, bins=bins)
        wh, wex, wey = np.histogram2d(x, y, bins=bins)
        np.testing.assert_array_equal(h, wh)
        np.testing.assert_allclose(ex, wex, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ey, wey, rtol=1e-5, atol=1e-6)
    assert jnp.histogram2d(x, y, bins=3)[0].dtype == np.int32   # JAX: integer counts
    h, _, _ = jnp.histogram2d(x, y, bins=3, weights=x, density=True)
    np.testing.assert_allclose(h, np.histogram2d(x, y, bins=3, weights=x, density=True)[0],
                               rtol=1e-4, atol=1e-6)
    s = S[:150].reshape(50, 3)
    for kw in ({"bins": (2, 3, 2)}, {"bins": 2, "range": [(-1, 1), None, (0, 2)]}):
        h, edges = jnp.histogramdd(s, **kw)
        wh, wedges = np.histogramdd(s, **kw)
        np.testing.assert_array_equal(h, wh)
        for a, b in zip(edges, wedges):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="range must be a sequence of 3 pairs or Nones"):
        jnp.histogramdd(s, bins=2, range=[(-1, 1), None])
    with pytest.raises(ValueError, match="should be a bin for each dimension."):
        jnp.histogramdd(s, bins=[2, 2])


def test_average_count_nonzero():
    m = A([[0, 1, 2], [0, 0, 3]])
    np.testing.assert_array_equal(jnp.count_nonzero(m, axis=0), np.count_nonzero(m, axis=0))
    assert jnp.count_nonzero(m, keepdims=True).shape == (1, 1)
    w = A([1.0, 2, 3, 4, 5], np.float32)
    np.testing.assert_allclose(jnp.average(X), np.average(X), rtol=1e-6)
    for got, want in zip(jnp.average(X, axis=1, weights=w, returned=True),
                         np.average(X, axis=1, weights=w, returned=True)):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(jnp.average(X, axis=(0, 1), weights=X, keepdims=True),
                               np.average(X, axis=(0, 1), weights=X, keepdims=True), rtol=1e-5)
    b = np.ones((2, 3, 4))
    wb = np.arange(8.0).reshape(4, 2)
    np.testing.assert_allclose(jnp.average(b * np.arange(4), axis=(2, 0), weights=wb),
                               np.average(b * np.arange(4), axis=(2, 0), weights=wb), rtol=1e-6)
    avg, ws = jnp.average(A([1, 2, 3]), returned=True)
    assert avg.dtype == np.float32 and float(ws) == 3.0
    with pytest.raises(ValueError, match="Axis must be specified when shapes of a and weights differ."):
        jnp.average(X, weights=w)
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        jnp.average(X, axis=0, weights=w)


def test_cov_corrcoef():
    np.testing.assert_allclose(jnp.cov(X), np.cov(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.cov(X, rowvar=False, bias=True), np.cov(X, rowvar=False, bias=True),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.cov(X[0], X[1]), np.cov(X[0], X[1]), rtol=1e-5)
    fw, aw = A([1, 2, 1, 3, 1]), A([0.5, 1, 2, 1, 0.1])
    np.testing.assert_allclose(jnp.cov(X, fweights=fw, aweights=aw), np.cov(X, fweights=fw, aweights=aw),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.cov(X, ddof=0, aweights=aw), np.cov(X, ddof=0, aweights=aw),
                               rtol=1e-5, atol=1e-6)
    assert jnp.cov(X[0]).shape == ()
    np.testing.assert_array_equal(jnp.cov(np.zeros((2, 0))), np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match="m has more than 2 dimensions"):
        jnp.cov(np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="fweights must be integer."):
        jnp.cov(X, fweights=A([1.0, 2, 1, 3, 1]))
    with pytest.raises(RuntimeError, match="incompatible numbers of samples and aweights"):
        jnp.cov(X, aweights=A([1.0]))
    np.testing.assert_allclose(jnp.corrcoef(X), np.corrcoef(X), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(jnp.corrcoef(X[0], X[2]), np.corrcoef(X[0], X[2]), rtol=2e-6)
    assert float(jnp.corrcoef(X[0])) == 1.0
    c = X.astype(np.complex64) * (1 + 1j)
    np.testing.assert_allclose(jnp.corrcoef(c), np.corrcoef(c), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="corrcoef: dtype must be a subclass of float or complex"):
        jnp.corrcoef(X, dtype=np.int32)
    np.testing.assert_allclose(jax.jit(jnp.corrcoef)(X), np.corrcoef(X), rtol=2e-6, atol=1e-6)
    check_grads(lambda x: jnp.cov(x), (X.astype(np.float64),), order=1, modes=("rev",),
                atol=1e-2, rtol=1e-2)


def test_vector_products():
    np.testing.assert_allclose(jnp.vecdot(A([1 + 2j, 3]), A([2, 1j])), np.vecdot([1 + 2j, 3], [2, 1j]))
    np.testing.assert_allclose(jnp.vecdot(X, X[0]), np.vecdot(X, X[0]), rtol=1e-5)
    np.testing.assert_allclose(jnp.vecdot(X, X, axis=0), np.vecdot(X, X, axis=0), rtol=1e-5)
    with pytest.raises(ValueError, match="axes must match; got shapes"):
        jnp.vecdot(np.ones(3), np.ones(4))
    b = _rng.randn(4, 1, 2, 3).astype(np.float32)
    v = _rng.randn(5, 3).astype(np.float32)
    np.testing.assert_allclose(jnp.matvec(b, v), np.matvec(b, v), rtol=1e-5)
    np.testing.assert_allclose(jnp.vecmat(A([1j, 2]), A([[1, 2], [3, 4]])),
                               np.vecmat([1j, 2], [[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match=r"does not have enough dimensions for all core dimensions \('n', 'm'\)"):
        jnp.matvec(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'm': 4 vs 3"):
        jnp.matvec(np.ones((2, 3)), np.ones(4))
    for a, bb, kw in [(A([1, 2, 3]), A([4, 5, 6]), {}), (A([1, 2]), A([4, 5]), {}),
                      (A([1, 2]), A([4, 5, 6]), {}), (np.ones((2, 3)), np.arange(3), {"axisc": 0}),
                      (np.arange(6).reshape(3, 2), np.arange(6).reshape(3, 2) + 1,
                       {"axisa": 0, "axisb": 0})]:
        np.testing.assert_array_equal(jnp.cross(a, bb, **kw), np.cross(a, bb, **kw))
    with pytest.raises(ValueError, match="Dimension must be either 2 or 3 for cross product"):
        jnp.cross(np.ones(4), np.ones(3))
    for a, bb in [(A([[1, 2], [3, 4]]), A([1, 10])), (A([1, 2]), A([[1.0], [2.0]])), (3, A([1, 2]))]:
        np.testing.assert_array_equal(jnp.kron(a, bb), np.kron(a, bb))
    np.testing.assert_array_equal(jax.vmap(jnp.cross)(np.ones((2, 3)), np.arange(6.0).reshape(2, 3)),
                                  np.cross(np.ones((2, 3)), np.arange(6.0).reshape(2, 3)))
    check_grads(jnp.matvec, (b.astype(np.float64), v.astype(np.float64)), order=1, modes=("rev",))


METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


def _np_quantile(fn, x, q, method, **kw):
    """numpy's quantile, with JAX's 'nearest': ties go to the lower neighbour (numpy
    rounds the position half to even)."""
    if method != "nearest":
        return fn(x, q, method=method, **kw)
    lo = fn(x, q, method="lower", **kw)
    hi = fn(x, q, method="higher", **kw)
    lin = fn(x, q, method="linear", **kw)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(hi == lo, 0.0, (lin - lo) / (hi - lo))
    return np.where(frac <= 0.5 + 1e-6, lo, hi)


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods(method):
    # Issue 19: every method but linear raised.
    x = _rng.randn(3, 4, 5).astype(np.float32)
    xn = x.copy()
    xn[0, 1, 2] = np.nan
    xn[1] = np.nan
    q = A([0.1, 0.5, 0.77, 1.0, 0.0], np.float32)
    for axis in (None, 1, (0, 2), -1):
        for keepdims in (False, True):
            np.testing.assert_allclose(
                jnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims),
                _np_quantile(np.quantile, x, q, method, axis=axis, keepdims=keepdims),
                rtol=1e-5, atol=1e-6)
            with np.errstate(invalid="ignore"):
                import warnings
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    want = _np_quantile(np.nanquantile, xn, q, method, axis=axis,
                                        keepdims=keepdims)
            np.testing.assert_allclose(
                jnp.nanquantile(xn, q, axis=axis, method=method, keepdims=keepdims), want,
                rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.percentile(x[0], 50, method=method),
                               _np_quantile(np.percentile, x[0], 50, method), rtol=1e-6)
    np.testing.assert_allclose(jnp.nanpercentile(xn[0], A([10, 90]), method=method, axis=-1),
                               _np_quantile(np.nanpercentile, xn[0], [10, 90], method, axis=-1),
                               rtol=1e-5)
    np.testing.assert_allclose(jax.jit(lambda x: jnp.quantile(x, 0.3, method=method))(x),
                               _np_quantile(np.quantile, x, 0.3, method), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(lambda r: jnp.percentile(r, 40, method=method))(x[0]),
                               _np_quantile(np.percentile, x[0], 40, method, axis=1), rtol=1e-5)


def test_quantile_issue19_regressions():
    x = _rng.randn(3, 4, 5).astype(np.float32)
    xn = x.copy()
    xn[0, 1, 2] = np.nan
    # nanmedian(axis=(0, 1)) raised.
    np.testing.assert_allclose(jnp.nanmedian(xn, axis=(0, 1)), np.nanmedian(xn, axis=(0, 1)),
                               rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda v: jnp.nanmedian(v, axis=(0, 1)))(xn),
                               np.nanmedian(xn, axis=(0, 1)), rtol=1e-6)
    # median(3, keepdims=True) has shape (1,) in JAX.
    assert jnp.median(3, keepdims=True).shape == (1,)
    assert jnp.median(x, axis=(0, 2), keepdims=True).shape == (1, 4, 1)
    # nanpercentile of bfloat16 keeps bfloat16; q's dtype does not promote a.
    assert jnp.nanpercentile(jnp.array(x, jnp.bfloat16), 30).dtype == jnp.bfloat16
    assert jnp.quantile(A([1, 2, 3, 4], np.float16), 0.3).dtype == np.float16
    assert jnp.quantile(A([1, 2, 3, 4]), A([0.5], np.float16)).dtype == np.float32
    with pytest.raises(ValueError, match="method can only be 'linear', 'lower'"):
        jnp.quantile(x, 0.5, method="inverted")
    with pytest.raises(ValueError, match="quantile does not support complex input"):
        jnp.quantile(A([1j]), 0.5)
    with pytest.raises(ValueError, match="q must be have rank <= 1"):
        jnp.quantile(x, A([[0.5]]))
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.quantile(x, 0.5, axis=(0, 0))
    g = jax.grad(lambda v: jnp.quantile(v, 0.3, method="midpoint"))(x[0, 0])
    np.testing.assert_allclose(np.sort(np.asarray(g))[-2:], [0.5, 0.5])


def test_quantile_inverted_cdf_and_weights():
    x = _rng.randn(3, 4, 5).astype(np.float32)
    w = _rng.uniform(0.1, 2, (3, 4, 5)).astype(np.float32)
    q = A([0.1, 0.5, 0.77, 1.0], np.float32)
    for axis in (None, 1, -1):
        np.testing.assert_array_equal(jnp.quantile(x, q, axis=axis, method="inverted_cdf"),
                                      np.quantile(x, q, axis=axis, method="inverted_cdf"))
        np.testing.assert_array_equal(
            jnp.quantile(x, q, axis=axis, method="inverted_cdf", weights=w),
            np.quantile(x, q, axis=axis, method="inverted_cdf", weights=w))
    # Weights of the reduced axes only broadcast over the others (JAX).
    np.testing.assert_array_equal(
        jnp.quantile(x, 0.3, axis=2, method="inverted_cdf", weights=w[0, 0]),
        np.quantile(x, 0.3, axis=2, method="inverted_cdf", weights=np.broadcast_to(w[0, 0], x.shape)))
    np.testing.assert_array_equal(
        jnp.percentile(x, 40, axis=1, method="inverted_cdf", weights=w),
        np.percentile(x, 40, axis=1, method="inverted_cdf", weights=w))
    xn = x.copy()
    xn[0, 1, 2] = np.nan
    xn[1] = np.nan
    # JAX 0.10: NaN data makes the slice NaN (nan-versions: only an all-NaN slice);
    # negative weights make it NaN.
    got = np.asarray(jnp.nanquantile(xn, 0.4, axis=2, method="inverted_cdf", weights=w))
    assert np.isnan(got[1]).all() and not np.isnan(got[0]).any()
    np.testing.assert_array_equal(got[2], np.quantile(x[2], 0.4, axis=1, method="inverted_cdf",
                                                      weights=w[2]))
    assert np.isnan(np.asarray(jnp.quantile(xn, 0.4, axis=2, method="inverted_cdf"))[0, 1])
    assert np.isnan(np.asarray(jnp.quantile(x, 0.4, axis=2, method="inverted_cdf", weights=-w))).all()
    with pytest.raises(NotImplementedError, match="linear doesn't support weights"):
        jnp.quantile(x, 0.4, weights=w)
    with pytest.raises(ValueError, match="Weights shape must match 'a' shape when axis is None."):
        jnp.quantile(x, 0.4, method="inverted_cdf", weights=w[0])
    with pytest.raises(ValueError, match=r"Weights shape \(5,\) must match reduction axes \(4,\)"):
        jnp.quantile(x, 0.4, axis=1, method="inverted_cdf", weights=w[0, 0])
    f = jax.jit(lambda x, w: jnp.quantile(x, 0.3, method="inverted_cdf", weights=w))
    np.testing.assert_array_equal(f(x, w), np.quantile(x, 0.3, method="inverted_cdf", weights=w))
