"""jax.scipy.special's exp1, expi, expn, owens_t, bessel_jn, hyp1f1, hyp2f1 and sici against
scipy (float32 and float64), values pinned from JAX 0.10.2 where JAX departs from scipy, jit ==
eager, vmap and derivatives against numerical ones."""
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


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_against_scipy(dtype, rtol, x64):
    r = _rng()
    x = np.concatenate([r.uniform(0, 1, 100), r.uniform(1, 60, 100), [1e-5, 1., 700.]]).astype(dtype)
    x = x[x < (700 if dtype == np.float64 else 80)]
    np.testing.assert_allclose(np.asarray(special.exp1(x)), ss.exp1(x.astype(float)), rtol=rtol,
                               atol=1e-300)
    n = r.integers(0, 12, x.size)
    np.testing.assert_allclose(np.asarray(special.expn(n, x)), ss.expn(n, x.astype(float)),
                               rtol=rtol, atol=1e-300)
    xe = np.concatenate([-x, x])
    xe = xe[np.abs(xe) < (700 if dtype == np.float64 else 85)]
    np.testing.assert_allclose(np.asarray(special.expi(xe)), ss.expi(xe.astype(float)),
                               rtol=rtol * 5, atol=1e-300)
    h, a = r.uniform(-5, 5, 200).astype(dtype), r.uniform(-5, 5, 200).astype(dtype)
    np.testing.assert_allclose(np.asarray(special.owens_t(h, a)), ss.owens_t(h, a),
                               rtol=max(rtol, 1e-9), atol=1e-7 if dtype == np.float32 else 1e-15)
    z = r.uniform(0, 20, 50).astype(dtype)
    got = special.bessel_jn(z, v=4)
    assert got.shape == (5, 50) and got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got), ss.jv(np.arange(5)[:, None], z.astype(float)),
                               rtol=1e-3 if dtype == np.float32 else 1e-9,
                               atol=1e-6 if dtype == np.float32 else 1e-13)


def test_values_pinned_from_jax_and_departures():
    f32 = lambda *v: np.array(v, np.float32)
    np.testing.assert_allclose(np.asarray(special.expn(np.array([0, 1, 3, -1, 2, 5]),
                                                       f32(1, 0, .5, 1, -1, 30))),
                               f32(0.36787945, inf, 0.22160432, nan, nan, 2.6840577e-15), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(special.exp1(f32(0, -1))), f32(inf, nan))
    np.testing.assert_allclose(np.asarray(special.expi(f32(-5, 50, 100))),
                               f32(-1.1482956e-03, 1.0585635e+20, inf), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(special.owens_t(f32(0, 1, -1, 3, .5), f32(.5, 2, .3, 1, -4))),
                               f32(0.07379179, 0.0784682, 0.02772812, 0.00067404, -0.1535564),
                               rtol=1e-5)
    # Where JAX is wrong, scipy's values: expn(2, 0) = 1 (JAX 0.5), expi(0) = -inf (JAX
    # NaN), bessel_jn at 0 and 1 in float32 (JAX NaN).
    assert float(special.expn(2, np.float32(0.))) == 1.
    assert float(special.expi(np.float32(0.))) == -inf
    np.testing.assert_allclose(np.asarray(special.bessel_jn(f32(0., 1.), v=2)),
                               ss.jv(np.arange(3)[:, None], [0., 1.]), rtol=1e-5, atol=1e-7)


def test_errors():
    with pytest.raises(ValueError, match="Argument `n` to expn must be of integer type"):
        special.expn(1.5, 2.)
    with pytest.raises(ValueError, match="exp1 does not support complex-valued inputs."):
        special.exp1(1j)
    with pytest.raises(ValueError, match="complex input not supported."):
        special.bessel_jn(np.array([1j]), v=1)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda v: special.bessel_jn(np.ones(2), v=v))(2)


def test_jit_and_vmap_equal_eager():
    x = np.array([0.3, 1.5, 4., 12.], np.float32)
    for f in (special.exp1, special.expi, lambda x: special.expn(np.array([0, 1, 2, 5]), x),
              lambda x: special.owens_t(x, x - 2), lambda x: special.bessel_jn(x, v=2)):
        eager = np.asarray(f(x))
        np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), eager, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(special.exp1)(x)), np.asarray(special.exp1(x)),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda x: special.bessel_jn(x, v=2))(x)),
                               np.asarray(special.bessel_jn(x, v=2)).T, rtol=1e-6)


def test_derivatives_against_numerical(x64):
    x = np.array([0.3, 1.5, 4., 12.])
    check_grads(special.exp1, (x,), order=1, rtol=1e-5)
    check_grads(special.expi, (np.concatenate([-x, x]),), order=1, rtol=1e-5)
    check_grads(lambda x: special.expn(np.array([0, 1, 2, 5]), x), (x,), order=1, rtol=1e-5)
    check_grads(special.owens_t, (np.array([-1., 0.5, 2.]), np.array([0.3, -2., 4.])), order=1,
                rtol=1e-5)
    check_grads(lambda z: special.bessel_jn(z, v=2), (np.array([0.5, 3., 7.]),), order=1, rtol=1e-5)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float64, 1e-12)])
def test_hyp1f1_against_scipy(dtype, rtol, x64):
    r = _rng()
    # JAX's test domain, and negative x.
    a, b, x = (r.uniform(0.5, 30, 100).astype(dtype) for _ in range(3))
    got = special.hyp1f1(a, b, x)
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got), ss.hyp1f1(*(v.astype(float) for v in (a, b, x))),
                               rtol=rtol)
    # Below 0 the terms alternate where b < a and cancel: float64 only, with an absolute
    # tolerance on the terms' scale.
    if dtype == np.float32:
        return
    xn = -r.uniform(0, 5, 100).astype(dtype)
    np.testing.assert_allclose(np.asarray(special.hyp1f1(a, b, xn)),
                               ss.hyp1f1(a.astype(float), b.astype(float), xn.astype(float)),
                               rtol=rtol * 10, atol=1e-11)


def test_hyp1f1_pinned_jit_vmap_and_derivatives(x64):
    f32 = lambda *v: np.array(v, np.float32)
    np.testing.assert_allclose(
        np.asarray(special.hyp1f1(f32(0, 2, 1, 1.5, 2, .5), f32(1, 2, 0, 3, 4, 30), f32(1, 1.5, 2, 150, -3, 29))),
        f32(1, 4.481689, inf, inf, 0.2775412, 2.8324459), rtol=1e-5)
    grads = jax.grad(special.hyp1f1, argnums=(0, 1, 2))(1.5, 2.5, 3.)
    np.testing.assert_allclose([float(g) for g in grads], [8.17898, -5.4411635, 6.076938], rtol=1e-5)
    a, b, x = np.array([1.5, 4.]), np.array([2.5, 3.]), np.array([3., 0.7])
    np.testing.assert_allclose(np.asarray(jax.jit(special.hyp1f1)(a, b, x)),
                               np.asarray(special.hyp1f1(a, b, x)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.vmap(special.hyp1f1)(a, b, x)),
                               np.asarray(special.hyp1f1(a, b, x)), rtol=1e-12)
    check_grads(special.hyp1f1, (a, b, x), order=1, rtol=1e-5)
    with pytest.raises(ValueError, match="hyp1f1 does not support complex-valued inputs."):
        special.hyp1f1(1., 2., 1j)


@pytest.mark.parametrize("dtype,rtol,atol", [(np.float32, 2e-5, 1e-6), (np.float64, 1e-12, 1e-14)])
def test_sici_against_scipy(dtype, rtol, atol, x64):
    x = np.concatenate([_rng().uniform(-60, 60, 300), [1.999, 2.001, 1e-6, 1e6]]).astype(dtype)
    si, ci = special.sici(x)
    assert si.dtype == ci.dtype == dtype
    si_ref, ci_ref = ss.sici(x.astype(float))
    np.testing.assert_allclose(np.asarray(si), si_ref, rtol=rtol, atol=atol)
    np.testing.assert_allclose(np.asarray(ci), ci_ref, rtol=rtol, atol=atol)


def test_sici_pinned_jit_and_derivatives(x64):
    si, ci = special.sici(np.float32([-1, 0, 0.5, 100, 1e6]))
    np.testing.assert_allclose(np.asarray(si), [-0.94608307, 0., 0.4931074, 1.5622256, 1.5707954],
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ci), [0.33740395, -inf, -0.17778407, -5.1488252e-03,
                                                -3.4999442e-07], rtol=1e-5)
    x = np.array([-3., 0.7, 2.5, 9.])
    np.testing.assert_allclose(np.asarray(jax.jit(special.sici)(x)[0]),
                               np.asarray(special.sici(x)[0]), rtol=1e-12)
    check_grads(lambda x: special.sici(x)[0], (x,), order=1, rtol=1e-5)
    check_grads(lambda x: special.sici(x)[1], (x,), order=1, rtol=1e-5)
    with pytest.raises(ValueError, match="Argument `x` to sici must be real-valued. Got dtype complex64."):
        special.sici(np.complex64(1j))


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float64, 1e-11)])
def test_hyp2f1_against_scipy(dtype, rtol, x64):
    r = _rng()
    a, b = r.uniform(-5, 5, 200).astype(dtype), r.uniform(-5, 5, 200).astype(dtype)
    c = r.uniform(0.5, 8, 200).astype(dtype)
    x = r.uniform(-3, 0.9, 200).astype(dtype)
    got = special.hyp2f1(a, b, c, x)
    assert got.dtype == dtype
    want = ss.hyp2f1(*(v.astype(float) for v in (a, b, c, x)))
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_hyp2f1_pinned_jit_and_derivatives(x64):
    f32 = lambda *v: np.array(v, np.float32)
    np.testing.assert_allclose(
        np.asarray(special.hyp2f1(f32(1, -2, 1, 2, 1, .5), f32(2, 3, 1, 3, 1, 1.5),
                                  f32(3, 1, 0, 6, 2, 3), f32(.5, .5, .3, 1, 1.5, -.5))),
        f32(1.5451772, -0.5, inf, 10.000004, inf, 0.8978313), rtol=1e-5)
    grads = jax.grad(special.hyp2f1, argnums=(0, 1, 2, 3))(0.5, 1.5, 2.5, 0.3)
    np.testing.assert_allclose([float(g) for g in grads],
                               [0.22988102, 0.08051101, -0.04936362, 0.4358303], rtol=1e-5)
    args = (np.array([0.5, 2.]), np.array([1.5, -1.2]), np.array([2.5, 3.]), np.array([0.3, -0.6]))
    np.testing.assert_allclose(np.asarray(jax.jit(special.hyp2f1)(*args)),
                               np.asarray(special.hyp2f1(*args)), rtol=1e-12)
    check_grads(lambda x: special.hyp2f1(*args[:3], x), (args[3],), order=1, rtol=1e-5)
    check_grads(lambda a: special.hyp2f1(a, *args[1:]), (args[0],), order=1, rtol=1e-5)
