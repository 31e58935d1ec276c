"""jax.scipy.special's Bessel functions i0/i0e/i1/i1e, Box-Cox transforms, divergences,
log_ndtr, erfcx, spence and softmax against scipy (float32 and float64), values pinned
from JAX 0.10.2 where JAX departs from scipy, jit == eager, vmap and derivatives."""
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
    "i0": (ss.i0, lambda r: (r.uniform(-30, 30, 200),), 1e-5),
    "i0e": (ss.i0e, lambda r: (r.uniform(-100, 100, 200),), 1e-5),
    "i1": (ss.i1, lambda r: (r.uniform(-30, 30, 200),), 1e-5),
    "i1e": (ss.i1e, lambda r: (r.uniform(-100, 100, 200),), 1e-5),
    "boxcox": (ss.boxcox, lambda r: (r.uniform(0.01, 10, 200), r.uniform(-2, 2, 200)), 1e-5),
    "boxcox1p": (ss.boxcox1p, lambda r: (r.uniform(-0.9, 10, 200), r.uniform(-2, 2, 200)), 1e-5),
    "rel_entr": (ss.rel_entr, lambda r: (r.uniform(0, 5, 200), r.uniform(0, 5, 200)), 1e-5),
    "kl_div": (ss.kl_div, lambda r: (r.uniform(0, 5, 200), r.uniform(0, 5, 200)), 1e-5),
    "log_ndtr": (ss.log_ndtr, lambda r: (np.concatenate([r.uniform(-40, 40, 200),
                                                         [-25., -15., -9., 6., 9.]]),), 1e-5),
    "erfcx": (ss.erfcx, lambda r: (np.concatenate([r.uniform(-5, 30, 200), [1e3, 1e10]]),), 1e-5),
    "spence": (ss.spence, lambda r: (np.concatenate([r.uniform(0, 20, 200), [0., 1., 1e-6, 1e5]]),),
               1e-5),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_scipy(name, dtype, x64):
    ref, sample, f32_rtol = CASES[name]
    args = [np.asarray(a).astype(dtype) for a in sample(_rng())]
    got = getattr(special, name)(*args)
    assert got.dtype == dtype
    want = ref(*(a.astype(np.float64) for a in args))
    rtol = f32_rtol if dtype == np.float32 else 1e-10
    # float32 cancels in p log(p/q) near p = q (as JAX's does): an absolute tolerance there.
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol,
                               atol=1e-30 if dtype == np.float64 else 1e-6)


def test_values_pinned_from_jax():
    f32 = lambda *v: np.array(v, np.float32)
    np.testing.assert_array_equal(np.asarray(special.rel_entr(f32(0, 0, 1, 1, -1), f32(0, 1, 0, -1, 1))),
                                  f32(0, 0, inf, inf, inf))
    np.testing.assert_array_equal(np.asarray(special.kl_div(f32(0, 0, 1), f32(0, 1, 0))), f32(0, 1, inf))
    np.testing.assert_array_equal(np.asarray(special.boxcox(f32(0, -1), f32(0, 2))), f32(-inf, nan))
    np.testing.assert_array_equal(np.asarray(special.boxcox1p(f32(-1, -2), f32(.5, 2))), f32(-2, nan))
    np.testing.assert_allclose(np.asarray(special.log_ndtr(f32(-50, -10.5, 40))),
                               f32(-1254.8313, -58.404186, -0.), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(special.erfcx(f32(-30, -3, 1e20))),
                               f32(inf, 16205.989, 5.6418956e-21), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(special.spence(f32(-1, 0, 1))),
                                  f32(nan, np.pi ** 2 / 6, 0))
    np.testing.assert_allclose(np.asarray(special.softmax(np.ones((2, 3), np.float32))),
                               np.full((2, 3), 1 / 6), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(special.log_softmax(np.arange(3.), axis=0)),
                               ss.log_softmax(np.arange(3.)), rtol=1e-6)


def test_errors_pinned_from_jax():
    with pytest.raises(TypeError, match="x.dtype=int32 is not supported."):
        special.log_ndtr(np.int32(1))
    with pytest.raises(TypeError, match="series_order must be a Python integer."):
        special.log_ndtr(1., series_order=2.)
    with pytest.raises(ValueError, match="series_order must be <= 30."):
        special.log_ndtr(1., series_order=31)
    with pytest.raises(TypeError, match="x.dtype=int32 is not supported, see docstring"):
        special.spence(np.int32(1))
    with pytest.raises(ValueError, match="rel_entr does not support complex-valued inputs."):
        special.rel_entr(1j, 1.)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_and_vmap_equal_eager(name):
    _, sample, _ = CASES[name]
    args = [np.asarray(a[:6], np.float32) for a in sample(_rng(1))]
    f = getattr(special, name)
    eager = np.asarray(f(*args))
    np.testing.assert_allclose(np.asarray(jax.jit(f)(*args)), eager, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(*args)), eager, rtol=1e-6)


def test_derivatives_against_numerical(x64):
    x = np.array([-3.5, 0.7, 2.5, 12.])
    for name in ("i0", "i1", "i0e", "i1e", "erfcx"):
        check_grads(getattr(special, name), (x,), order=1, rtol=1e-5)
    check_grads(special.log_ndtr, (np.array([-30., -12., -3., 0.5, 9.]),), order=1, rtol=1e-5)
    check_grads(special.spence, (np.array([0.2, 0.9, 1.6, 7.]),), order=1, rtol=1e-5)
    p, q = np.array([0.3, 1.2, 2.]), np.array([0.5, 0.4, 3.])
    check_grads(special.rel_entr, (p, q), order=1, rtol=1e-5)
    check_grads(special.kl_div, (p, q), order=1, rtol=1e-5)
    check_grads(special.boxcox, (p + 0.1, q - 1.), order=1, rtol=1e-5)
    check_grads(special.boxcox1p, (p, q - 1.), order=1, rtol=1e-5)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-5), (np.float64, 1e-11)])
def test_faddeeva_family_against_scipy(dtype, rtol, x64):
    r = _rng()
    cdtype = np.complex64 if dtype == np.float32 else np.complex128
    z = (r.uniform(-10, 10, 200) + 1j * r.uniform(-3, 10, 200)).astype(cdtype)
    z = z[np.abs(z.imag ** 2 - z.real ** 2) < 60]  # e^(∓z²) of the reflections fit complex64
    got = special.wofz(z)
    assert got.dtype == cdtype
    np.testing.assert_allclose(np.asarray(got), ss.wofz(z.astype(complex)), rtol=rtol * 10)
    np.testing.assert_allclose(np.asarray(special.erfcx(z)), ss.erfcx(z.astype(complex)), rtol=rtol * 10)
    x = r.uniform(-30, 30, 200).astype(dtype)
    got = special.dawsn(x)
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got), ss.dawsn(x.astype(float)), rtol=rtol * 10)
    assert special.wofz(np.float32(1.)).dtype == np.complex64


def test_faddeeva_family_pinned_jit_and_derivatives(x64):
    c64 = lambda *v: np.array(v, np.complex64)
    np.testing.assert_allclose(np.asarray(special.wofz(c64(1 + 1j, -2 + .5j, 3 - 1j))),
                               c64(0.30474424 + 0.20821896j, 0.10335883 - 0.28478593j,
                                   -0.06467357 + 0.17373085j), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(special.dawsn(np.float32([-3, .5, 10]))),
                               np.float32([-0.17827104, 0.4244364, 0.05025385]), rtol=1e-5)
    with pytest.raises(ValueError, match="dawsn does not support complex-valued inputs."):
        special.dawsn(1j)
    x = np.array([-2., 0.3, 4.])
    np.testing.assert_allclose(np.asarray(jax.jit(special.dawsn)(x)), np.asarray(special.dawsn(x)),
                               rtol=1e-12)
    check_grads(special.dawsn, (x,), order=1, rtol=1e-5)
    check_grads(special.wofz, (x + 0.5j,), order=1, rtol=1e-5)


@pytest.mark.parametrize("dtype,atol", [(np.float32, 5e-6), (np.float64, 1e-13)])
def test_fresnel_against_scipy(dtype, atol, x64):
    x = np.concatenate([_rng().uniform(-50, 50, 300), [0., 1e-3, 1e5]]).astype(dtype)
    s, c = special.fresnel(x)
    assert s.dtype == c.dtype == dtype
    s_ref, c_ref = ss.fresnel(x.astype(float))
    np.testing.assert_allclose(np.asarray(s), s_ref, atol=atol)
    np.testing.assert_allclose(np.asarray(c), c_ref, atol=atol)


def test_fresnel_pinned_jit_and_derivatives(x64):
    s, c = special.fresnel(np.float32([-1, 0, 0.5, 3, 40, 1e5]))
    np.testing.assert_allclose(np.asarray(s), [-0.43825915, 0., 0.06473243, 0.496313, 0.49204224, 0.5],
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(c), [-0.7798934, 0., 0.49234423, 0.60572076, 0.49999842, 0.5],
                               rtol=1e-5)
    x = np.array([-2., 0.3, 4.])
    np.testing.assert_allclose(np.asarray(jax.jit(special.fresnel)(x)[1]),
                               np.asarray(special.fresnel(x)[1]), rtol=1e-12)
    check_grads(lambda x: special.fresnel(x)[0], (x,), order=1, rtol=1e-5)
    check_grads(lambda x: special.fresnel(x)[1], (x,), order=1, rtol=1e-5)
    with pytest.raises(NotImplementedError, match="complex-valued inputs"):
        special.fresnel(1j)


@pytest.mark.parametrize("dtype,atol", [(np.float32, 2e-6), (np.float64, 1e-13)])
def test_sph_harm_y_against_scipy(dtype, atol, x64):
    r = _rng()
    n = r.integers(0, 10, 200)
    m = np.array([r.integers(-k, k + 1) for k in n])
    theta = r.uniform(0, np.pi, 200).astype(dtype)
    phi = r.uniform(-np.pi, np.pi, 200).astype(dtype)
    got = special.sph_harm_y(n, m, theta, phi)
    assert got.dtype == (np.complex64 if dtype == np.float32 else np.complex128)
    np.testing.assert_allclose(np.asarray(got), ss.sph_harm_y(n, m, theta.astype(float),
                                                             phi.astype(float)), atol=atol)


def test_sph_harm_y_pinned_jit_and_errors():
    n, m = np.array([0, 1, 2, 3, 2]), np.array([0, -1, 2, 1, -2])
    theta = np.float32([0.3, 1., 2., 0.5, 1.5])
    phi = np.float32([0.1, 2., -1., 3., 0.7])
    want = np.array([0.28209478, -0.12098358 - 0.26435393j, -0.13290894 - 0.29041132j,
                     0.43727812 - 0.06233248j, 0.06532542 - 0.37874913j], np.complex64)
    np.testing.assert_allclose(np.asarray(special.sph_harm_y(n, m, theta, phi)), want, rtol=1e-5)
    f = jax.jit(lambda n, m, t, p: special.sph_harm_y(n, m, t, p, n_max=3))
    np.testing.assert_allclose(np.asarray(f(n, m, theta, phi)), want, rtol=1e-5)
    with pytest.raises(NotImplementedError, match="The 'diff_n' argument"):
        special.sph_harm_y(n, m, theta, phi, diff_n=1)
    with pytest.raises(jax.errors.ConcretizationTypeError, match="must be statically specified"):
        jax.jit(special.sph_harm_y)(n, m, theta, phi)


def test_float32_derivatives_stay_float32(x64):
    x = np.float32([0.7, 2.])
    for f in (special.erfcx, special.dawsn, lambda x: special.wofz(x).real, special.log_ndtr,
              lambda x: special.fresnel(x)[0], special.i1e):
        assert jax.grad(lambda x: f(x).sum())(x).dtype == np.float32
