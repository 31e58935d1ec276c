"""tinyxla.scipy.special and scipy.stats.norm against scipy (float64 references),
numerical derivatives in float64, and jit against eager."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as sst

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.scipy import special, stats
from tinyxla.test_util import check_grads


@pytest.fixture
def x64():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", prev)


def _rng(seed=0):
    return np.random.default_rng(seed)


# name: (scipy reference, input sampler, float32 rtol)
UNARY = {
    "erf": (ss.erf, lambda r: r.uniform(-3, 3, (4, 5)), 1e-6),
    "erfc": (ss.erfc, lambda r: r.uniform(-3, 3, (4, 5)), 1e-5),
    "erfinv": (ss.erfinv, lambda r: r.uniform(-0.99, 0.99, (4, 5)), 2e-5),
    "expit": (ss.expit, lambda r: r.uniform(-10, 10, (4, 5)), 1e-6),
    "logit": (ss.logit, lambda r: r.uniform(0.01, 0.99, (4, 5)), 1e-5),
    "gammaln": (ss.gammaln, lambda r: r.uniform(0.1, 20, (4, 5)), 1e-5),
    "digamma": (ss.digamma, lambda r: r.uniform(0.1, 20, (4, 5)), 1e-5),
    "entr": (ss.entr, lambda r: r.uniform(0.01, 5, (4, 5)), 1e-5),
    "ndtr": (ss.ndtr, lambda r: r.uniform(-8, 8, (4, 5)), 1e-5),
    "ndtri": (ss.ndtri, lambda r: r.uniform(0.001, 0.999, (4, 5)), 1e-4),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_against_scipy(name):
    ref, sample, rtol = UNARY[name]
    x = sample(_rng()).astype(np.float32)
    f = getattr(special, name)
    got = f(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(np.asarray(got), ref(x.astype(np.float64)), rtol=rtol, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), np.asarray(got), rtol=1e-5, atol=1e-7)


def test_integer_inputs_promote():
    assert special.erf(jnp.arange(3)).dtype == np.float32
    assert special.gammaln(np.arange(1, 4)).dtype == np.float32


def test_special_values():
    np.testing.assert_array_equal(np.asarray(special.erfinv(np.array([-1., 1.], np.float32))),
                                  [-np.inf, np.inf])
    np.testing.assert_array_equal(np.asarray(special.entr(np.array([-1., 0.], np.float32))),
                                  [-np.inf, 0.])
    np.testing.assert_array_equal(np.asarray(special.logit(np.array([0., 1.], np.float32))),
                                  [-np.inf, np.inf])
    with pytest.raises(ValueError, match="entr does not support complex-valued inputs"):
        special.entr(np.array([1j]))


def test_xlogy_xlog1py():
    x = np.array([0., 0., 1., 2.5, 0.], np.float32)
    y = np.array([0., 3., 2., 0.5, np.nan], np.float32)
    np.testing.assert_allclose(np.asarray(special.xlogy(x, y)), ss.xlogy(x, y), rtol=1e-6)
    y1 = np.array([-1., 3., 2., -0.5, np.nan], np.float32)
    np.testing.assert_allclose(np.asarray(special.xlog1py(x, y1)), ss.xlog1py(x, y1), rtol=1e-6)
    # The custom JVP: d/dx xlogy(x, y) = log(y), also at x = 0.
    gx = jax.grad(special.xlogy)(0., 2.)
    np.testing.assert_allclose(float(gx), np.log(2.), rtol=1e-6)
    gy = jax.grad(special.xlogy, argnums=1)(3., 2.)
    np.testing.assert_allclose(float(gy), 1.5, rtol=1e-6)
    gx1 = jax.grad(special.xlog1py)(0., 1.)
    np.testing.assert_allclose(float(gx1), np.log(2.), rtol=1e-6)


@pytest.mark.parametrize("name,lo,hi", [
    ("erf", -2, 2), ("erfc", -2, 2), ("erfinv", -0.9, 0.9), ("expit", -4, 4),
    ("logit", 0.1, 0.9), ("gammaln", 0.5, 6), ("entr", 0.2, 3), ("ndtr", -3, 3)])
def test_unary_numerical_grads(x64, name, lo, hi):
    x = _rng(1).uniform(lo, hi, (5,))
    check_grads(getattr(special, name), (x,), 1)


def test_xlogy_numerical_grads(x64):
    r = _rng(2)
    x, y = r.uniform(0.5, 2, (4,)), r.uniform(0.5, 2, (4,))
    check_grads(special.xlogy, (x, y), 2)
    check_grads(special.xlog1py, (x, y), 2)


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 1), True)])
def test_logsumexp(axis, keepdims):
    a = _rng(3).normal(size=(3, 4)).astype(np.float32) * 5
    want = ss.logsumexp(a.astype(np.float64), axis=axis, keepdims=keepdims)
    got = special.logsumexp(a, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_logsumexp_b_and_sign():
    r = _rng(4)
    a = r.normal(size=(3, 4)).astype(np.float32)
    b = r.normal(size=(3, 4)).astype(np.float32)
    val, sign = special.logsumexp(a, axis=1, b=b, return_sign=True)
    want_val, want_sign = ss.logsumexp(a.astype(np.float64), axis=1, b=b.astype(np.float64),
                                       return_sign=True)
    np.testing.assert_allclose(np.asarray(val), want_val, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(sign), want_sign)
    # Without return_sign, a negative sum is NaN (as in JAX and scipy).
    plain = np.asarray(special.logsumexp(a, axis=1, b=b))
    np.testing.assert_array_equal(np.isnan(plain), want_sign < 0)
    # b == 0 drops an element entirely, even an infinite one.
    np.testing.assert_allclose(
        float(special.logsumexp(np.array([np.inf, 1.], np.float32), b=np.array([0., 1.]))), 1.)


def test_logsumexp_infinities_and_grad():
    assert float(special.logsumexp(np.full(3, -np.inf, np.float32))) == -np.inf
    assert float(special.logsumexp(np.array([np.inf, 0.], np.float32))) == np.inf
    g = jax.grad(special.logsumexp)(np.array([1., 2., -np.inf], np.float32))
    e = np.exp([1., 2.])
    np.testing.assert_allclose(np.asarray(g), list(e / e.sum()) + [0.], rtol=1e-6)
    jitted = jax.jit(special.logsumexp, static_argnames=("axis",))
    a = _rng(5).normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jitted(a, axis=1)),
                               np.asarray(special.logsumexp(a, axis=1)), rtol=1e-6)


def test_logsumexp_numerical_grads(x64):
    a = _rng(6).normal(size=(3, 4))
    check_grads(lambda a: special.logsumexp(a, axis=1), (a,), 2)


def test_norm_distribution():
    r = _rng(7)
    x = r.normal(size=(10,)).astype(np.float32) * 3
    loc, scale = np.float32(0.5), np.float32(2.0)
    xd = x.astype(np.float64)
    n = stats.norm
    np.testing.assert_allclose(np.asarray(n.logpdf(x, loc, scale)),
                               sst.norm.logpdf(xd, 0.5, 2.0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(n.pdf(x, loc, scale)), sst.norm.pdf(xd, 0.5, 2.0),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(n.cdf(x, loc, scale)), sst.norm.cdf(xd, 0.5, 2.0),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(n.sf(x, loc, scale)), sst.norm.sf(xd, 0.5, 2.0),
                               rtol=1e-5)
    q = r.uniform(0.01, 0.99, (10,)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(n.ppf(q, loc, scale)),
                               sst.norm.ppf(q.astype(np.float64), 0.5, 2.0), rtol=1e-4,
                               atol=1e-5)
    assert n.pdf(np.arange(3)).dtype == np.float32
    g = jax.grad(lambda x: n.logpdf(x, 1.0, 2.0))(3.0)
    np.testing.assert_allclose(float(g), -(3.0 - 1.0) / 4.0, rtol=1e-6)


def test_ndtr_ndtri_dtypes():
    # As in JAX: float32/float64 only, and a strongly typed result for a Python float.
    with pytest.raises(TypeError, match="x.dtype=int32 is not supported"):
        special.ndtr(np.arange(3))
    with pytest.raises(TypeError, match="x.dtype=float16 is not supported"):
        special.ndtri(np.array([0.5], np.float16))
    assert not special.ndtr(0.7).weak_type
    assert not stats.norm.cdf(2).weak_type
    np.testing.assert_allclose(float(jax.grad(special.ndtr)(0.3)), sst.norm.pdf(0.3), rtol=1e-6)
