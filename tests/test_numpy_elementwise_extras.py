"""frexp, ldexp, modf, spacing, fabs, nan_to_num, isposinf/isneginf, isreal/iscomplex(obj),
gcd, lcm, bitwise_count, i0, logaddexp2, the window functions and the Array API aliases,
against numpy/scipy and values pinned from JAX; jit, vmap, grad and JAX's errors."""
import numpy as np
import pytest
import scipy.special

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import errors
from tinyxla.test_util import check_grads

A = np.array
F = A([0.0, -0.0, 1.5, -3.25, 7.0, np.inf, -np.inf, np.nan, 1e30, -1e-30], np.float32)


def _check_frexp_modf(x):
    m, e = jnp.frexp(x)
    wm, we = np.frexp(x)
    np.testing.assert_array_equal(m, wm)
    np.testing.assert_array_equal(e, we)
    assert e.dtype == np.int32 and m.dtype == x.dtype
    finite = x[np.isfinite(x)]   # JAX's modf(inf) is (nan, inf): inf - inf
    frac, whole = jnp.modf(finite)
    np.testing.assert_array_equal(frac, np.modf(finite)[0])
    np.testing.assert_array_equal(whole, np.modf(finite)[1])


def test_frexp_ldexp_modf_match_numpy():
    for x in (F, A([3.5, 1e-3, -2.0], np.float16)):
        _check_frexp_modf(x)
    np.testing.assert_array_equal(jnp.modf(A([np.inf]))[1], [np.inf])
    assert jnp.frexp(A([3, 4]))[0].dtype == np.float32
    x1 = A([1.0, 0.75, 3e38, 1e-30, np.inf, 0.0, -2.0], np.float32)
    x2 = A([2, -3, 1, 10, 1, 5, 200])
    np.testing.assert_array_equal(jnp.ldexp(x1, x2), np.ldexp(x1, x2.astype(np.int32)))
    np.testing.assert_array_equal(jnp.ldexp(A([[1.0], [2.0]]), A([1, 2, 3])),
                                  np.ldexp(A([[1.0], [2.0]]), A([1, 2, 3])).astype(np.float32))
    assert jnp.ldexp(A([3, 4]), 2).dtype == np.float32
    assert float(jnp.ldexp(1.5, 3)) == 12.0
    with pytest.raises(TypeError, match="frexp does not support complex-valued inputs"):
        jnp.frexp(A([1 + 1j]))
    with pytest.raises(ValueError, match="ldexp not supported for input types"):
        jnp.ldexp(A([1.0]), 1.5)
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.modf"):
        jnp.modf(F, out=F)


def test_float64(x64):
    x = F.astype(np.float64)
    _check_frexp_modf(x)
    np.testing.assert_array_equal(jnp.spacing(x[2:5]), np.spacing(x[2:5]))
    z = A([0.0, 1.0, -2.5, 7.9, 8.0, 8.1, 30.0, 80.0])
    np.testing.assert_allclose(jnp.i0(z), np.i0(z), rtol=1e-14)
    check_grads(jnp.i0, (A([0.5, 3.0, 9.0]),), order=2, modes=("fwd", "rev"))
    check_grads(jnp.logaddexp2, (A([0.3, -2.0]), A([1.1, -2.0])), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(jnp.nanvar(np.array([1.0, 2.0, np.nan])), 0.25, rtol=1e-15)


def test_frexp_ldexp_transforms():
    np.testing.assert_array_equal(jax.jit(jnp.frexp)(F)[1], np.frexp(F)[1])
    np.testing.assert_array_equal(jax.vmap(jnp.ldexp)(np.ones(3), np.arange(3)), [1, 2, 4])
    # JAX's rules: d mantissa / dx = 2**-exponent; d ldexp(x, n) / dx = 2**n.
    assert float(jax.grad(lambda x: jnp.frexp(x)[0])(12.0)) == 0.0625
    assert float(jax.grad(lambda x: jnp.ldexp(x, 3))(12.0)) == 8.0
    check_grads(lambda x: jnp.modf(x)[0], (A([0.3, -1.7, 2.2]),), order=1, modes=("rev",))


def test_spacing_fabs_nan_to_num():
    x = A([1.0, -1.0, 0.0, 1e30, -7.5], np.float32)
    np.testing.assert_array_equal(jnp.spacing(x), np.spacing(x))
    # float16: toward +inf for every input, as numpy's float16 (and JAX).
    np.testing.assert_array_equal(jnp.spacing(A([1.0, -1.0], np.float16)),
                                  A([2.0**-10, 2.0**-11], np.float16))
    with pytest.raises(ValueError, match="jnp.spacing is not defined for complex inputs"):
        jnp.spacing(A([1j]))
    np.testing.assert_array_equal(jnp.fabs(A([-1, 2])), A([1.0, 2.0], np.float32))
    assert jnp.fabs(-2.5).weak_type
    with pytest.raises(TypeError, match="ufunc 'fabs' does not support complex dtypes"):
        jnp.fabs(A([1j]))
    np.testing.assert_array_equal(jnp.nan_to_num(F), np.nan_to_num(F))
    np.testing.assert_array_equal(jnp.nan_to_num(F, nan=1, posinf=2, neginf=-2),
                                  np.nan_to_num(F, nan=1, posinf=2, neginf=-2))
    c = A([np.nan + 1j * np.inf, 1 - 1j * np.inf], np.complex64)
    np.testing.assert_array_equal(jnp.nan_to_num(c), np.nan_to_num(c))
    np.testing.assert_array_equal(jnp.nan_to_num(A([1, 2])), [1, 2])
    np.testing.assert_array_equal(jax.jit(jnp.nan_to_num)(F), np.nan_to_num(F))


def test_classification():
    np.testing.assert_array_equal(jnp.isposinf(F), np.isposinf(F))
    np.testing.assert_array_equal(jnp.isneginf(F), np.isneginf(F))
    np.testing.assert_array_equal(jnp.isneginf(A([1, 2])), [False, False])
    with pytest.raises(ValueError, match="isposinf/isneginf are not well defined"):
        jnp.isneginf(A([1j]))
    c = A([1, 1 + 1j, 2 - 0j, 3j])
    np.testing.assert_array_equal(jnp.isreal(c), np.isreal(c))
    np.testing.assert_array_equal(jnp.iscomplex(c), np.iscomplex(c))
    assert bool(jnp.isreal(3.0)) and not bool(jnp.iscomplex(3))
    assert jnp.iscomplexobj(1j) and not jnp.iscomplexobj(jnp.ones(2))
    assert not jnp.isrealobj(A([1j])) and jnp.iscomplexobj([1, 2j]) and jnp.isrealobj(None)
    assert jnp.can_cast(jnp.float32, jnp.int32) is False and jnp.can_cast(np.int8, "int16")


def test_gcd_lcm_bitwise_count():
    a = A([12, -18, 0, 0, 7, 2**31 - 1, 1836311903])
    b = A([18, 12, 5, 0, -49, 2**30, 1134903170])   # consecutive Fibonacci numbers
    np.testing.assert_array_equal(jnp.gcd(a, b), np.gcd(a, b))
    np.testing.assert_array_equal(jnp.lcm(a[:5], b[:5]), np.lcm(a[:5], b[:5]))
    np.testing.assert_array_equal(jax.jit(jnp.gcd)(a, b), np.gcd(a, b))
    np.testing.assert_array_equal(jax.vmap(jnp.lcm)(a[:5], b[:5]), np.lcm(a[:5], b[:5]))
    u = A([12, 18], np.uint8)
    assert jnp.gcd(u, A([18], np.uint8)).dtype == np.uint8
    np.testing.assert_array_equal(jnp.gcd(u, A([18], np.uint8)), [6, 18])
    np.testing.assert_array_equal(jnp.gcd(A([[4], [6]]), A([6, 9])), np.gcd([[4], [6]], [6, 9]))
    assert int(jnp.gcd(12, 18)) == 6
    with pytest.raises(ValueError, match="Arguments to jax.numpy.gcd must be integers."):
        jnp.gcd(1.5, 2)
    with pytest.raises(ValueError, match="Arguments to jax.numpy.lcm must be integers."):
        jnp.lcm(1.5, 2)
    i8 = A([0, 1, -1, 255 - 256, -128, 7], np.int8)
    out = jnp.bitwise_count(i8)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, np.bitwise_count(i8))
    np.testing.assert_array_equal(jnp.bitwise_count(A([True, False])), [1, 0])
    np.testing.assert_array_equal(jnp.bitwise_count(A([2**40 + 3], np.uint64)),
                                  np.bitwise_count(A([2**40 + 3], np.uint64)).astype(np.uint8)
                                  if jax.config.jax_enable_x64 else [2])


def test_i0():
    x = A([0.0, 1.0, -2.5, 7.9, 8.0, 8.1, 30.0, 80.0], np.float32)
    np.testing.assert_allclose(jnp.i0(x), scipy.special.i0(x.astype(np.float64)), rtol=2e-6)
    assert jnp.i0(3).dtype == np.float32
    # bfloat16: i0e in float32, exp and the product in bfloat16 (JAX 0.10: [1.26562, 1088]).
    np.testing.assert_array_equal(jnp.i0(A([1.0, 9.0], jnp.bfloat16)).astype(np.float32),
                                  [1.265625, 1088.0])
    with pytest.raises(ValueError, match="Unsupported input type to jax.numpy.i0: complex64"):
        jnp.i0(A([1j], np.complex64))
    assert float(jax.grad(jnp.i0)(0.0)) == 0.0
    for v in (2.0, -3.0, 10.0):
        np.testing.assert_allclose(jax.grad(jnp.i0)(v), scipy.special.i1(v), rtol=1e-5)
    np.testing.assert_allclose(jax.vmap(jnp.i0)(x), jnp.i0(x), rtol=1e-7)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("m", [0, 1, 2, 5, 16])
def test_windows(name, m):
    got = getattr(jnp, name)(m)
    assert got.dtype == np.float32 and got.shape == (m,)
    np.testing.assert_allclose(got, getattr(np, name)(m), atol=1e-6)


def test_kaiser_and_window_errors():
    for m, beta in [(6, 14.0), (1, 2.0), (7, 0.0), (10, 5.5)]:
        np.testing.assert_allclose(jnp.kaiser(m, beta), np.kaiser(m, beta), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(jax.jit(lambda b: jnp.kaiser(5, b))(3.0), np.kaiser(5, 3.0),
                               rtol=2e-6)
    with pytest.raises(errors.ConcretizationTypeError, match="M argument of jnp.hanning"):
        jax.jit(jnp.hanning)(4)


def test_logaddexp2():
    x1 = A([1.0, -np.inf, np.inf, np.nan, 3.0, -5.0], np.float32)
    x2 = A([1.0, -np.inf, np.inf, 0.0, -2.0, 40.0], np.float32)
    np.testing.assert_allclose(jnp.logaddexp2(x1, x2), np.logaddexp2(x1, x2), rtol=1e-6)
    assert jnp.logaddexp2(1, 2).dtype == np.float32 and jnp.logaddexp2(1, 2).weak_type
    # JAX 0.10: logaddexp2(1+2j, 0.5-1j) = 0.8491412+0.91001415j.
    np.testing.assert_allclose(jnp.logaddexp2(A([1 + 2j], np.complex64), A([0.5 - 1j])),
                               [0.8491412 + 0.91001415j], rtol=1e-6)
    assert float(jax.grad(jnp.logaddexp2)(1.0, 1.0)) == 0.5
    np.testing.assert_allclose(jax.grad(jnp.logaddexp2, argnums=1)(1.0, 3.0), 0.8, rtol=1e-6)
    assert float(jax.grad(jnp.logaddexp2)(-np.inf, 0.0)) == 0.0  # JAX 0.10.2 (only +inf -> 0)


def test_array_api_aliases():
    x = A([0.25, 0.5], np.float32)
    for alias, orig in [("acos", np.arccos), ("asin", np.arcsin), ("atan", np.arctan),
                        ("asinh", np.arcsinh), ("atanh", np.arctanh)]:
        np.testing.assert_allclose(getattr(jnp, alias)(x), orig(x), rtol=1e-6)
    np.testing.assert_allclose(jnp.acosh(x + 1), np.arccosh(x + 1), rtol=1e-6)
    np.testing.assert_allclose(jnp.atan2(x, 2.0), np.arctan2(x, 2), rtol=1e-6)
    np.testing.assert_array_equal(jnp.bitwise_invert(A([1], np.uint8)), [254])
    assert int(jnp.bitwise_left_shift(1, 3)) == 8 and int(jnp.bitwise_right_shift(-8, 1)) == -4
