"""jax.scipy.special's gamma and beta family against scipy over their domains (float32 and
float64), values pinned from JAX 0.10.2 where JAX departs from scipy, jit == eager, vmap,
and derivatives against numerical ones."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import tinyxla as jax
from tinyxla.scipy import special
from tinyxla.test_util import check_grads

nan, inf = np.nan, np.inf


def _rng(seed=0):
    return np.random.default_rng(seed)


# name: (scipy reference, sampler of the arguments, float32 rtol)
CASES = {
    "gamma": (ss.gamma, lambda r: (r.uniform(-8, 20, 200),), 1e-5),
    "gammasgn": (ss.gammasgn, lambda r: (r.uniform(-8, 8, 200),), 0),
    "loggamma": (ss.loggamma, lambda r: (r.uniform(0.01, 100, 200),), 1e-5),
    "betaln": (ss.betaln, lambda r: (r.uniform(0.01, 50, 200), 10 ** r.uniform(-2, 7, 200)), 1e-5),
    "beta": (ss.beta, lambda r: (r.uniform(-5, 20, 200), r.uniform(0.1, 10, 200)), 1e-4),
    "betainc": (ss.betainc, lambda r: (r.uniform(0.05, 20, 200), r.uniform(0.05, 20, 200),
                                       r.uniform(0, 1, 200)), 1e-4),
    "gammainc": (ss.gammainc, lambda r: (r.uniform(0.05, 30, 200), r.uniform(0, 40, 200)), 1e-4),
    "gammaincc": (ss.gammaincc, lambda r: (r.uniform(0.05, 30, 200), r.uniform(0, 40, 200)), 1e-4),
    "factorial": (ss.factorial, lambda r: (r.uniform(-2, 20, 200),), 1e-5),
    "comb": (ss.comb, lambda r: (r.integers(-2, 30, 200), r.integers(-2, 30, 200)), 1e-4),
    "poch": (ss.poch, lambda r: (r.uniform(0.1, 10, 200), r.uniform(-2, 8, 200)), 1e-4),
    "zeta": (ss.zeta, lambda r: (r.uniform(1.05, 20, 200), r.uniform(0.05, 10, 200)), 1e-5),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_scipy(name, dtype, x64):
    ref, sample, f32_rtol = CASES[name]
    args = [np.asarray(a).astype(dtype) for a in sample(_rng())]
    got = getattr(special, name)(*args)
    assert got.dtype == dtype
    want = ref(*(a.astype(np.float64) for a in args))
    rtol = f32_rtol if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=1e-30)


def test_polygamma_and_multigammaln_against_scipy(x64):
    r = _rng()
    n = r.integers(0, 6, 100)
    x = r.uniform(0.05, 20, 100)
    np.testing.assert_allclose(np.asarray(special.polygamma(n, x)), ss.polygamma(n, x), rtol=1e-9)
    a = r.uniform(3, 30, 50)
    np.testing.assert_allclose(np.asarray(special.multigammaln(a, 3)), ss.multigammaln(a, 3),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="Argument `n` to polygamma must be of integer type. "
                       "Got dtype float"):
        special.polygamma(1., 2.)


def test_values_pinned_from_jax():
    f32 = lambda *v: np.array(v, np.float32)
    np.testing.assert_array_equal(np.asarray(special.gammasgn(f32(-0., 0, -1, -1.5, -2.5, nan, 3))),
                                  f32(-1, 1, nan, 1, -1, nan, 1))
    np.testing.assert_array_equal(np.asarray(special.gamma(f32(-0.))), f32(-inf))
    np.testing.assert_allclose(np.asarray(special.comb(f32(5, 5, -1, 3), f32(2, 6, 1, 1.5))),
                               f32(10, 0, 0, 3.3953075), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(special.comb(5., 2., repetition=True)), 15., rtol=1e-5)
    np.testing.assert_allclose(np.asarray(special.factorial(f32(-1, 0, 3.5))), f32(0, 1, 11.631747),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(special.poch(f32(1, 2, -1.5), f32(0, 3, 2.5))),
                               f32(1, 24, 0.42314243), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(special.betaln(f32(1, .5, 3, 1e-3), f32(1e6, 20, 3, 1e7))),
                               f32(-13.81551, -0.9192519, -3.4011977, 6.89106), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(special.loggamma(f32(-1.5, 0))), f32(nan, nan))
    # JAX's bernoulli approximates B_n by a zeta series (B_4 = -0.03333325); these are exact.
    np.testing.assert_allclose(np.asarray(special.bernoulli(50)), ss.bernoulli(50), rtol=1e-6)
    assert special.bernoulli(3).dtype == np.float32 and special.bernoulli(1).shape == (2,)


def test_errors_pinned_from_jax():
    with pytest.raises(NotImplementedError, match="factorial with exact=True"):
        special.factorial(3, exact=True)
    with pytest.raises(NotImplementedError, match="Riemann zeta function not implemented"):
        special.zeta(2.)
    with pytest.raises(ValueError, match="n must be a non-negative integer."):
        special.bernoulli(-1)
    with pytest.raises(ValueError, match="beta does not support complex-valued inputs."):
        special.beta(1j, 1.)
    with pytest.raises(ValueError, match="jnp.poch does not support complex-valued inputs."):
        special.poch(1j, 1.)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda d: special.multigammaln(2., d))(3)


@pytest.mark.parametrize("name", ["gamma", "betaln", "gammainc", "gammaincc", "poch", "zeta",
                                  "betainc"])
def test_jit_and_vmap_equal_eager(name):
    _, sample, _ = CASES[name]
    args = [np.asarray(a[:6], np.float32) for a in sample(_rng(1))]
    f = getattr(special, name)
    eager = np.asarray(f(*args))
    np.testing.assert_allclose(np.asarray(jax.jit(f)(*args)), eager, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(*args)), eager, rtol=1e-6)


def test_derivatives_against_numerical(x64):
    x = np.array([0.6, 2.5, 7.])
    y = np.array([1.5, 0.8, 3.])
    check_grads(special.gamma, (x,), order=1, rtol=1e-5)
    check_grads(special.betaln, (x, y), order=1, rtol=1e-5)
    check_grads(special.betaln, (x, np.array([10., 50., 1e3])), order=1, rtol=1e-5)
    check_grads(special.poch, (x, y), order=1, rtol=1e-5)
    check_grads(special.gammainc, (x, y), order=1, rtol=1e-5)
    check_grads(special.zeta, (np.array([1.5, 3., 7.]), y), order=1, rtol=1e-5)
    check_grads(lambda x: special.polygamma(np.full(3, 1), x), (x,), order=1, rtol=1e-5)
    check_grads(lambda x: special.multigammaln(x, 2), (x + 1,), order=1, rtol=1e-5)


@pytest.mark.parametrize("dtype,rtol", [(np.complex64, 1e-4), (np.complex128, 1e-11)])
def test_complex_gamma_and_loggamma_against_scipy(dtype, rtol, x64):
    r = _rng()
    z = (r.uniform(-30, 30, 200) + 1j * r.uniform(-30, 30, 200)).astype(dtype)
    got = special.loggamma(z)
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got), ss.loggamma(z.astype(complex)), rtol=rtol,
                               atol=rtol * 10)
    z = (r.uniform(-8, 8, 200) + 1j * r.uniform(-4, 4, 200)).astype(dtype)
    np.testing.assert_allclose(np.asarray(special.gamma(z)), ss.gamma(z.astype(complex)),
                               rtol=rtol * 10)


def test_complex_gamma_pinned_from_jax():
    z = np.complex64([1 + 1j, -2.5 + 0.3j, 0.5 - 3j, -7.2 - 0.1j, 3, -2])
    np.testing.assert_allclose(
        np.asarray(special.gamma(z))[:5],
        np.complex64([0.49801591 - 0.15494974j, -0.61382246 - 0.21123236j,
                      0.021445677 - 0.00686537j, 5.1263190e-04 - 0.00035126j, 2]), rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(special.loggamma(z))[:5],
        np.complex64([-0.6509228 - 0.30164003j, -0.43208867 - 9.093346j, -3.79345 - 0.30981946j,
                      -7.383486 + 24.532007j, 0.6931472]), rtol=1e-5)
    assert np.isnan(np.asarray(special.gamma(z))[5]) and np.isnan(np.asarray(special.loggamma(z))[5])
    f = jax.jit(special.loggamma)
    np.testing.assert_allclose(np.asarray(f(z[:5])), np.asarray(special.loggamma(z[:5])), rtol=1e-6)
