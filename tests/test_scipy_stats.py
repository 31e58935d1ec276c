"""jax.scipy.stats' distributions and sample statistics against scipy.stats (float32 and
float64), values and errors pinned from JAX 0.10.2 where JAX departs from scipy, jit ==
eager, vmap, and derivatives of the log densities against numerical ones."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sst

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.scipy import stats
from tinyxla.test_util import check_grads

nan, inf = np.nan, np.inf
N = 50


def _rng(seed=0):
    return np.random.default_rng(seed)


def _u(lo, hi):
    return lambda r: r.uniform(lo, hi, N)


def _ints(lo, hi):
    return lambda r: r.integers(lo, hi, N).astype(float)


# (distribution, its functions, samplers of the point and the parameters, the scipy
# call as f(scipy_dist, fn_name, point, *params)).
_cont = lambda d, fn, x, *p: getattr(getattr(sst, d), fn)(x, *p)
CASES = [
    ("norm", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [_u(-6, 6), _u(-1, 1), _u(0.5, 2)]),
    ("norm", ("ppf", "isf"), [_u(0.01, 0.99), _u(-1, 1), _u(0.5, 2)]),
    ("beta", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
     [_u(0.01, 0.99), _u(0.5, 5), _u(0.5, 5)]),
    ("betabinom", ("logpmf", "pmf"), [_ints(0, 10), _ints(0, 12), _u(0.5, 4), _u(0.5, 4)]),
    ("binom", ("logpmf", "pmf"), [_ints(0, 10), _ints(1, 12), _u(0.05, 0.95)]),
    ("bernoulli", ("logpmf", "pmf", "cdf"), [_ints(-1, 3), _u(0.05, 0.95)]),
    ("bernoulli", ("ppf",), [_u(0.01, 0.99), _u(0.05, 0.95)]),
    ("cauchy", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [_u(-10, 10), _u(-1, 1), _u(0.5, 2)]),
    ("cauchy", ("ppf", "isf"), [_u(0.01, 0.99), _u(-1, 1), _u(0.5, 2)]),
    ("chi2", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [_u(0.1, 20), _u(1, 10)]),
    ("expon", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [_u(0, 10), _u(-1, 0), _u(0.5, 2)]),
    ("expon", ("ppf",), [_u(0.01, 0.99), _u(-1, 1), _u(0.5, 2)]),
    ("gamma", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [_u(0.1, 15), _u(0.5, 6)]),
    ("gennorm", ("logpdf", "pdf", "cdf"), [_u(-3, 3), _u(0.5, 4)]),
    ("geom", ("logpmf", "pmf"), [_ints(1, 10), _u(0.05, 0.95)]),
    ("gumbel_l", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [_u(-4, 3), _u(-1, 1), _u(0.5, 2)]),
    ("gumbel_l", ("ppf",), [_u(0.01, 0.99), _u(-1, 1), _u(0.5, 2)]),
    ("gumbel_r", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [_u(-3, 4), _u(-1, 1), _u(0.5, 2)]),
    ("gumbel_r", ("ppf",), [_u(0.01, 0.99), _u(-1, 1), _u(0.5, 2)]),
    ("laplace", ("logpdf", "pdf", "cdf"), [_u(-5, 5), _u(-1, 1), _u(0.5, 2)]),
    ("logistic", ("logpdf", "pdf", "cdf", "sf"), [_u(-8, 8), _u(-1, 1), _u(0.5, 2)]),
    ("logistic", ("ppf", "isf"), [_u(0.01, 0.99), _u(-1, 1), _u(0.5, 2)]),
    ("nbinom", ("logpmf", "pmf"), [_ints(0, 15), _u(1, 6), _u(0.1, 0.9)]),
    ("pareto", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), [_u(1, 10), _u(0.5, 4)]),
    ("pareto", ("ppf",), [_u(0.01, 0.99), _u(0.5, 4)]),
    ("poisson", ("logpmf", "pmf", "cdf"), [_ints(0, 20), _u(0.5, 10)]),
    ("t", ("logpdf", "pdf"), [_u(-6, 6), _u(1, 10), _u(-1, 1), _u(0.5, 2)]),
    ("truncnorm", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
     [_u(-1, 1.5), _u(-3, -1), _u(1.5, 4)]),
    ("uniform", ("logpdf", "pdf", "cdf"), [_u(-1, 3), _u(-0.5, 0.5), _u(1, 2)]),
    ("uniform", ("ppf",), [_u(0, 1), _u(-0.5, 0.5), _u(1, 2)]),
    ("vonmises", ("logpdf", "pdf"), [_u(-3, 3), _u(0.1, 20)]),
    ("wrapcauchy", ("logpdf", "pdf"), [_u(0, 6.28), _u(0.05, 0.95)]),
]
PARAMS = [(dist, fn, samplers) for dist, fns, samplers in CASES for fn in fns]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dist,fn,samplers", PARAMS, ids=[f"{d}.{f}" for d, f, _ in PARAMS])
def test_against_scipy(dist, fn, samplers, dtype, x64):
    args = [s(_rng()).astype(dtype) for s in samplers]
    got = getattr(getattr(stats, dist), fn)(*args)
    assert got.dtype == dtype and got.shape == (N,)
    want = _cont(dist, fn, *(a.astype(np.float64) for a in args))
    rtol, atol = (2e-4, 1e-6) if dtype == np.float32 else (1e-9, 1e-12)
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dist,fn,samplers", PARAMS[::3], ids=[f"{d}.{f}" for d, f, _ in PARAMS[::3]])
def test_jit_and_vmap_equal_eager(dist, fn, samplers):
    args = [s(_rng(1))[:5].astype(np.float32) for s in samplers]
    f = getattr(getattr(stats, dist), fn)
    eager = np.asarray(f(*args))
    np.testing.assert_allclose(np.asarray(jax.jit(f)(*args)), eager, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(*args)), eager, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dist,args", [
    ("norm", ([-1., 0.5, 2.], 0.3, 1.5)), ("beta", ([0.2, 0.5, 0.7], 2., 3.)),
    ("gamma", ([0.5, 2., 5.], 2.5)), ("t", ([-1., 0.5, 2.], 4.)),
    ("cauchy", ([-1., 0.5, 2.],)), ("logistic", ([-1., 0.5, 2.],)),
    ("gumbel_r", ([-1., 0.5, 2.],)), ("vonmises", ([-1., 0.5, 2.], 3.)),
    ("chi2", ([0.5, 2., 5.], 3.)), ("pareto", ([1.5, 2., 5.], 3.)),
])
def test_logpdf_derivatives(dist, args, x64):
    args = tuple(np.asarray(a, np.float64) for a in args)
    check_grads(getattr(stats, dist).logpdf, args, order=1, rtol=1e-5)


def test_cdf_derivatives(x64):
    check_grads(lambda x: stats.gamma.cdf(x, 2.5), (np.array([0.5, 2., 5.]),), order=1, rtol=1e-5)
    check_grads(lambda x: stats.norm.logcdf(x), (np.array([-12., 0.5, 9.]),), order=1, rtol=1e-5)
    check_grads(lambda x: stats.truncnorm.logpdf(x, -1., 2.), (np.array([-0.5, 1.5]),), order=1)


def test_multivariate_distributions_against_scipy(x64):
    r = _rng()
    mean = r.normal(size=3)
    a = r.normal(size=(3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    x = r.normal(size=(4, 3))
    for dtype, rtol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        got = stats.multivariate_normal.logpdf(x.astype(dtype), mean.astype(dtype), cov.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(np.asarray(got), sst.multivariate_normal.logpdf(x, mean, cov),
                                   rtol=rtol)
    np.testing.assert_allclose(np.asarray(stats.multivariate_normal.pdf(x, mean, 2.)),
                               sst.multivariate_normal.pdf(x, mean, 2.), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(stats.multivariate_normal.logpdf(0.3, 0.1, 2.)),
                               sst.multivariate_normal.logpdf(0.3, 0.1, 2.), rtol=1e-12)
    alpha = np.array([1.5, 2., 3.])
    xs = r.dirichlet(alpha, 4).T
    np.testing.assert_allclose(np.asarray(stats.dirichlet.logpdf(xs, alpha)),
                               sst.dirichlet.logpdf(xs, alpha), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(stats.dirichlet.logpdf(xs[:2], alpha)),
                               sst.dirichlet.logpdf(xs, alpha), rtol=1e-7)
    counts, p = np.array([2, 3, 5]), np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(np.asarray(stats.multinomial.logpmf(counts, 10, p)),
                               sst.multinomial.logpmf(counts, 10, p), rtol=1e-12)
    assert np.asarray(stats.multinomial.pmf(counts, 11, p)) == 0


def test_gaussian_kde_against_scipy(x64):
    r = _rng()
    data = r.normal(size=(2, 40))
    weights = r.uniform(0.5, 1.5, 40)
    points = r.normal(size=(2, 7))
    for kw in ({}, {"bw_method": "silverman"}, {"bw_method": 0.4}, {"weights": weights}):
        ours, theirs = stats.gaussian_kde(data, **kw), sst.gaussian_kde(data, **kw)
        np.testing.assert_allclose(np.asarray(ours.covariance), theirs.covariance, rtol=1e-10)
        np.testing.assert_allclose(np.asarray(ours.evaluate(points)), theirs.evaluate(points),
                                   rtol=1e-10)
        np.testing.assert_allclose(np.asarray(ours.logpdf(points)), theirs.logpdf(points),
                                   rtol=1e-10)
    kde, ref = stats.gaussian_kde(data), sst.gaussian_kde(data)
    np.testing.assert_allclose(np.asarray(kde.integrate_gaussian(np.zeros(2), np.eye(2))),
                               ref.integrate_gaussian(np.zeros(2), np.eye(2)), rtol=1e-10)
    other = stats.gaussian_kde(data[:, :10] + 0.5)
    np.testing.assert_allclose(np.asarray(kde.integrate_kde(other)),
                               ref.integrate_kde(sst.gaussian_kde(data[:, :10] + 0.5)), rtol=1e-10)
    one_d = r.normal(size=30)
    np.testing.assert_allclose(np.asarray(stats.gaussian_kde(one_d).integrate_box_1d(-0.5, 1.)),
                               sst.gaussian_kde(one_d).integrate_box_1d(-0.5, 1.), rtol=1e-10)
    # A pytree: it passes through jit.
    np.testing.assert_allclose(np.asarray(jax.jit(lambda k, x: k.evaluate(x))(kde, points)),
                               ref.evaluate(points), rtol=1e-10)
    with pytest.raises(ValueError, match="`dataset` input should have multiple elements."):
        stats.gaussian_kde(np.array([1.]))
    with pytest.raises(ValueError, match="points have dimension 3, dataset has dimension 2"):
        kde.evaluate(np.ones((3, 2)))
    with pytest.raises(NotImplementedError, match="only 1D box integrations are supported"):
        kde.integrate_box(0., 1.)


def test_sample_statistics_against_scipy(x64):
    r = _rng()
    a = r.integers(0, 4, (5, 6)).astype(float)
    for method in ("average", "min", "max", "dense", "ordinal"):
        np.testing.assert_array_equal(np.asarray(stats.rankdata(a, method)),
                                      sst.rankdata(a, method))
        np.testing.assert_array_equal(np.asarray(stats.rankdata(a, method, axis=1)),
                                      sst.rankdata(a, method, axis=1))
    np.testing.assert_array_equal(np.asarray(stats.rankdata(np.array([1., nan, 2.]))), [nan] * 3)
    m = stats.mode(a, axis=0)
    ref = sst.mode(a, axis=0)
    np.testing.assert_array_equal(np.asarray(m.mode), ref.mode)
    np.testing.assert_array_equal(np.asarray(m.count), ref.count)
    m = stats.mode(a, axis=None, keepdims=True)
    assert m.mode.shape == (1, 1)
    np.testing.assert_allclose(np.asarray(stats.sem(a)), sst.sem(a), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(stats.sem(a, axis=1, ddof=0)), sst.sem(a, axis=1, ddof=0),
                               rtol=1e-12)
    b = a.copy()
    b[1, 2] = nan
    np.testing.assert_allclose(np.asarray(stats.sem(b, nan_policy="omit")),
                               sst.sem(b, nan_policy="omit"), rtol=1e-12)
    with pytest.raises(ValueError, match="Illegal nan_policy value 'bad'"):
        stats.rankdata(a, nan_policy="bad")
    with pytest.raises(ValueError, match="unknown method 'foo'"):
        stats.rankdata(a, "foo")
    with pytest.raises(NotImplementedError, match="Logic for `nan_policy` of omit"):
        stats.mode(a, nan_policy="omit")


def test_values_pinned_from_jax():
    f32 = lambda *v: np.array(v, np.float32)
    # Off the support or with bad parameters, as JAX gives them.
    np.testing.assert_array_equal(np.asarray(stats.beta.logpdf(f32(1.5, .5), f32(2, -1), 2.)),
                                  f32(-inf, nan))
    np.testing.assert_array_equal(np.asarray(stats.bernoulli.cdf(f32(.5, nan), f32(1.5, .3))),
                                  f32(nan, nan))
    np.testing.assert_array_equal(np.asarray(stats.gumbel_l.logpdf(1., 0., -1.)), nan)
    np.testing.assert_array_equal(np.asarray(stats.expon.ppf(f32(-0.1, 1.1))), f32(nan, nan))
    np.testing.assert_array_equal(np.asarray(stats.wrapcauchy.logpdf(f32(7., 1.), f32(.5, 1.))),
                                  f32(-inf, nan))
    np.testing.assert_array_equal(np.asarray(stats.poisson.logpmf(f32(1.5, -1), 2.)), f32(-inf, -inf))
    np.testing.assert_allclose(np.asarray(stats.poisson.entropy(f32(0.5, 20., 300.))),
                               f32(0.9276376, 2.912522, 4.2705517), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(stats.truncnorm.logpdf(0., 1., 1.)), nan)
    # norm.logcdf keeps the relative digits of log(1 - tiny) (JAX's: -1.3508380e-03 at 3).
    np.testing.assert_allclose(np.asarray(stats.norm.logcdf(f32(-3, 0, 3))),
                               sst.norm.logcdf([-3., 0., 3.]), rtol=1e-6)


def test_errors_pinned_from_jax():
    with pytest.raises(ValueError, match=r"`alpha` must be one-dimensional; got alpha.shape=\(1, 2\)"):
        stats.dirichlet.logpdf(np.ones(2), np.ones((1, 2)))
    with pytest.raises(ValueError, match="`x` must have either the same number of entries"):
        stats.dirichlet.logpdf(np.ones(5), np.ones(2))
    with pytest.raises(ValueError, match="x and n must be of integer type"):
        stats.multinomial.logpmf(np.ones(2), 2, np.ones(2) / 2)
    with pytest.raises(ValueError, match="multivariate_normal.logpdf got incompatible shapes"):
        stats.multivariate_normal.logpdf(np.ones(2), np.ones(2), np.eye(3))
    with pytest.raises(NotImplementedError, match="allow_singular argument"):
        stats.multivariate_normal.logpdf(np.ones(2), np.ones(2), np.eye(2), allow_singular=True)


def test_weak_types_and_promotion():
    assert stats.norm.logpdf(1.).weak_type
    assert stats.gamma.logpdf(jnp.arange(1, 4), 2.).dtype == np.float32
