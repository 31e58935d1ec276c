"""The special-function lax primitives (igamma, igammac, igamma_grad_a, random_gamma_grad,
betainc, zeta, polygamma, bessel_i0e, bessel_i1e) against scipy over their domains in
float32 and float64, edge values and errors pinned from JAX 0.10.2, jit == eager, vmap,
and derivatives against numerical ones."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import tinyxla as jax
from tinyxla import lax
from tinyxla.test_util import check_grads

nan, inf = np.nan, np.inf


def _rng(seed=0):
    return np.random.default_rng(seed)


def _domain(r, n=300):
    """(a, x) over the domain of the incomplete gamma functions, both sides of x = a."""
    a = np.concatenate([r.uniform(0.05, 3, n), r.uniform(3, 100, n), [0.5, 1e-3, 250.]])
    x = np.concatenate([r.uniform(0, 5, n), a[n:2 * n] * r.uniform(0.5, 1.5, n), [1e-3, 2., 240.]])
    return a, x


# name: (lax function, scipy reference, (args...) sampler)
CASES = {
    "igamma": (lax.igamma, ss.gammainc, _domain),
    "igammac": (lax.igammac, ss.gammaincc, _domain),
    "betainc": (lax.betainc, ss.betainc, lambda r: (
        np.concatenate([r.uniform(0.05, 5, 300), r.uniform(5, 500, 300)]),
        np.concatenate([r.uniform(0.05, 5, 300), r.uniform(5, 500, 300)]),
        r.uniform(0, 1, 600))),
    "zeta": (lax.zeta, ss.zeta, lambda r: (r.uniform(1.01, 30, 400), r.uniform(0.01, 20, 400))),
    "polygamma": (lax.polygamma, lambda m, x: ss.polygamma(m.astype(int), x),
                  lambda r: (r.integers(0, 8, 400).astype(float), r.uniform(0.05, 30, 400))),
    "bessel_i0e": (lax.bessel_i0e, ss.i0e, lambda r: (r.uniform(-80, 80, 400),)),
    "bessel_i1e": (lax.bessel_i1e, ss.i1e, lambda r: (r.uniform(-80, 80, 400),)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_scipy(name, dtype, x64):
    f, ref, sample = CASES[name]
    args = [np.asarray(a, dtype) for a in sample(_rng())]
    got = f(*args)
    assert got.dtype == dtype and got.shape == args[0].shape
    want = ref(*(a.astype(np.float64) for a in args))
    # float32 loses ~1e-3 in x^a (1-x)^b / B(a, b) at a, b ~ 400, as JAX's does.
    f32_rtol = 1e-3 if name == "betainc" else 2e-4
    rtol, atol = (f32_rtol, 1e-6) if dtype == np.float32 else (1e-9, 1e-13)
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_and_vmap_equal_eager(name):
    f, _, sample = CASES[name]
    args = [np.asarray(a[:12], np.float32).reshape(3, 4) for a in sample(_rng(1))]
    eager = np.asarray(f(*args))
    np.testing.assert_allclose(np.asarray(jax.jit(f)(*args)), eager, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(*args)), eager, rtol=1e-6)
    # One operand unbatched, and 0-d operands broadcasting.
    if len(args) > 1:
        np.testing.assert_allclose(
            np.asarray(jax.vmap(f, in_axes=(None,) + (0,) * (len(args) - 1))(args[0][0], *args[1:])),
            np.asarray(f(*(np.broadcast_to(args[0][0], (3, 4)),) + tuple(args[1:]))), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(f(args[0][0, 0], *args[1:])),
                                   np.asarray(f(np.full((3, 4), args[0][0, 0]), *args[1:])),
                                   rtol=1e-6)


def test_edge_values_pinned_from_jax():
    f32 = lambda *v: np.array(v, np.float32)
    a = f32(0, 1, 1, -1, 2, nan, 0.5, 1e-30, 3.)
    x = f32(0, 0, inf, 1, -1, 1, 1e-30, 0.5, 200.)
    np.testing.assert_allclose(np.asarray(lax.igamma(a, x)),
                               f32(nan, 0, 1, nan, nan, nan, 1.1283793e-15, 1, 1), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(lax.igammac(a, x)), f32(nan, 1, 0, nan, nan, nan, 1, 0, 0))
    np.testing.assert_allclose(np.asarray(lax.igamma_grad_a(f32(0, 1, 1, 2, .5), f32(1, 0, inf, 3, 2))),
                               f32(nan, 0, nan, -0.19742535, -0.13561937), rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(lax.betainc(f32(0, 1, 1, 2, .5, -1, 2), f32(1, 0, 1, 3, 2, 1, 3),
                               f32(.5, .5, 0, 1, .3, .5, 1.5))),
        f32(1, 0, 0, 1, 0.7394256, nan, nan), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(lax.zeta(f32(1, .5, 2, 2, 3, 2.5), f32(1, 1, 0, -1, -1.5, -1.5))),
                               f32(inf, nan, inf, inf, 0.11810221, nan), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(lax.polygamma(f32(0, 1, 2, 1.5, -1, 3), f32(1, 1, 1, 1, 1, -2.5))),
                               f32(-0.5772154, 1.644934, -2.4041145, nan, nan, 194.74803), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(lax.bessel_i0e(f32(0, -1, 100, inf, nan))),
                               f32(1, 0.46575963, 0.03994438, 0, nan), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(lax.bessel_i1e(f32(0, -1, 100, -inf, nan))),
                               f32(0, -0.20791042, 0.03974415, -0., nan), rtol=1e-6)


def test_random_gamma_grad_pinned_and_implicit():
    a = np.array([1, 2, 0.5, 5.], np.float32)
    x = np.array([0.5, 3, 0.1, 7.], np.float32)
    np.testing.assert_allclose(np.asarray(lax.random_gamma_grad(a, x)),
                               [0.8069793, 1.321798, 0.5097656, 1.2175812], rtol=2e-5)
    # dx/da at fixed P(a, x) = -(dP/da) / (dP/dx).
    a64, x64_ = a.astype(np.float64), x.astype(np.float64)
    h = 1e-6
    dp_da = (ss.gammainc(a64 + h, x64_) - ss.gammainc(a64 - h, x64_)) / (2 * h)
    dp_dx = (ss.gammainc(a64, x64_ + h) - ss.gammainc(a64, x64_ - h)) / (2 * h)
    np.testing.assert_allclose(np.asarray(lax.random_gamma_grad(a, x)), -dp_da / dp_dx, rtol=1e-4)


def test_errors_pinned_from_jax():
    with pytest.raises(TypeError, match="igamma does not accept dtype int32 at position 0. "
                       "Accepted dtypes at position 0 are subtypes of floating."):
        lax.igamma(np.int32(1), np.int32(2))
    with pytest.raises(TypeError, match=r"igamma got incompatible shapes for broadcasting: "
                       r"\(2,\), \(3,\)."):
        lax.igamma(np.ones(2, np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match="zeta: arrays must have the same number of dimensions"):
        lax.zeta(np.ones(2, np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="lax.igammac requires arguments to have the same dtypes"):
        jax.jit(lax.igammac)(np.ones(2, np.float32), np.ones(2, np.float16))
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported."):
        jax.grad(lambda a: lax.betainc(a, 1., .5))(1.)
    with pytest.raises(ValueError, match="polygamma gradient with respect to m is not supported"):
        jax.grad(lambda m: lax.polygamma(m, 1.))(1.)


def test_derivatives_against_numerical(x64):
    a = np.array([0.7, 2.5, 6.], np.float64)
    x = np.array([0.4, 3.1, 5.5], np.float64)
    check_grads(lax.igamma, (a, x), order=1, rtol=1e-5)
    check_grads(lax.igammac, (a, x), order=1, rtol=1e-5)
    check_grads(lambda x: lax.betainc(2.5, 1.5, x), (np.array([0.2, 0.5, 0.9]),), order=1)
    check_grads(lambda x: lax.polygamma(np.full(3, 2.), x), (x,), order=1, rtol=1e-5)
    # zeta, igamma_grad_a and random_gamma_grad differentiate through their compositions
    # (JAX raises NotImplementedError for the first two).
    check_grads(lax.zeta, (np.array([1.5, 3., 7.]), x), order=1, rtol=1e-5)
    a1, x1 = np.array([2.5]), np.array([3.1])
    h = 1e-5
    for f in (lax.igamma_grad_a, lax.random_gamma_grad):
        _, tangent = jax.jvp(f, (a1, x1), (np.ones(1), np.zeros(1)))
        numerical = (np.asarray(f(a1 + h, x1)) - np.asarray(f(a1 - h, x1))) / (2 * h)
        np.testing.assert_allclose(np.asarray(tangent), numerical, rtol=1e-6)
    check_grads(lax.bessel_i0e, (np.array([-3., 0.5, 12., 40.]),), order=2)
    check_grads(lax.bessel_i1e, (np.array([-3., 0.5, 12., 40.]),), order=2)
    # igamma_grad_a is dP/da.
    np.testing.assert_allclose(np.asarray(lax.igamma_grad_a(a, x)),
                               (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h), rtol=1e-6)


def test_half_precision_computed_in_float32():
    a = np.array([0.5, 2., 4.], np.float16)
    out = lax.igamma(a, a)
    assert out.dtype == np.float16
    np.testing.assert_allclose(np.asarray(out, np.float64), ss.gammainc(a, a), rtol=2e-3)


def test_in_jaxpr_as_primitives():
    jaxpr = jax.make_jaxpr(lambda a, x: lax.igamma(a, x) + lax.bessel_i0e(x))(1., 2.)
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert names[:2] == ["igamma", "bessel_i0e"]
