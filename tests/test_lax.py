"""tinyxla.lax against numpy: every function on several shapes and dtypes, and JAX's errors.

Reference values come from numpy (scipy.special for the special functions) computed in
float64 on the same inputs; tolerances are JAX's test tolerances (f32 1e-6 relative,
looser for transcendental functions; f16 1e-3; bf16 1e-2). Error texts were taken from
jax 0.10.2.
"""
import warnings

import ml_dtypes
import numpy as np
import pytest
import scipy.special

import tinyxla as jax
from tinyxla import lax

SHAPES = [(), (0,), (4,), (3, 4), (2, 3, 4)]
bf16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float16), bf16, np.dtype(np.float32)]
COMPLEX = [np.dtype(np.complex64)]
INTS = [np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.uint32)]
SIGNED = [np.dtype(np.int8), np.dtype(np.int32)]
BOOL = [np.dtype(np.bool_)]

TOL = {np.dtype(np.float16): 1e-3, bf16: 1e-2, np.dtype(np.float32): 1e-6,
       np.dtype(np.complex64): 1e-6}


def put(x):
    """A numpy value as a tinyxla Array (strong, its own dtype)."""
    return jax.device_put(np.asarray(x))


def rand(shape, dtype, rng, kind="default"):
    """Inputs in the domain ``kind`` of the function under test."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.rand(*shape) > 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = (1, 8) if kind == "positive" else (max(info.min, -50), min(info.max, 50))
        return np.asarray(rng.randint(lo, hi, size=shape)).astype(dtype)
    if kind == "default":
        x = rng.randn(*shape) * 3
    elif kind == "positive":
        x = rng.rand(*shape) * 5 + 0.1
    elif kind == "unit":  # (-1, 1)
        x = rng.uniform(-0.95, 0.95, size=shape)
    elif kind == "ge1":
        x = rng.rand(*shape) * 5 + 1.0
    elif kind == "small":
        x = rng.randn(*shape)
    else:
        raise ValueError(kind)
    if dtype.kind == "c":
        x = x + 1j * (rng.randn(*shape) if kind in ("default", "small") else x)
    return np.asarray(x).astype(dtype)


def check_close(out, expected, dtype, tol_scale=1.0, atol=None):
    got = np.asarray(out)
    assert got.shape == np.shape(expected)
    tol = TOL.get(np.dtype(dtype), 0) * tol_scale
    if tol == 0:
        np.testing.assert_array_equal(got, np.asarray(expected).astype(got.dtype))
        return
    np.testing.assert_allclose(got.astype(np.complex128 if got.dtype.kind == "c" else np.float64),
                               np.asarray(expected), rtol=tol,
                               atol=tol if atol is None else atol)


# (lax function, numpy reference, dtypes, input domain, tolerance scale)
UNARY = [
    (lax.neg, np.negative, FLOATS + COMPLEX + SIGNED, "default", 1),
    (lax.sign, np.sign, FLOATS + SIGNED, "default", 1),
    (lax.floor, np.floor, FLOATS, "default", 1),
    (lax.ceil, np.ceil, FLOATS, "default", 1),
    (lax.is_finite, np.isfinite, FLOATS, "default", 1),
    (lax.exp, np.exp, FLOATS + COMPLEX, "small", 2),
    (lax.exp2, np.exp2, FLOATS, "small", 2),
    (lax.log, np.log, FLOATS + COMPLEX, "positive", 2),
    (lax.log1p, np.log1p, FLOATS, "positive", 2),
    (lax.expm1, np.expm1, FLOATS, "small", 2),
    (lax.tanh, np.tanh, FLOATS + COMPLEX, "small", 2),
    (lax.logistic, scipy.special.expit, FLOATS, "default", 2),
    (lax.sin, np.sin, FLOATS + COMPLEX, "small", 2),
    (lax.cos, np.cos, FLOATS + COMPLEX, "small", 2),
    (lax.tan, np.tan, FLOATS, "unit", 2),
    (lax.asin, np.arcsin, FLOATS, "unit", 2),
    (lax.acos, np.arccos, FLOATS, "unit", 2),
    (lax.atan, np.arctan, FLOATS, "default", 2),
    (lax.sinh, np.sinh, FLOATS, "small", 2),
    (lax.cosh, np.cosh, FLOATS, "small", 2),
    (lax.asinh, np.arcsinh, FLOATS, "default", 2),
    (lax.acosh, np.arccosh, FLOATS, "ge1", 2),
    (lax.atanh, np.arctanh, FLOATS, "unit", 2),
    (lax.sqrt, np.sqrt, FLOATS + COMPLEX, "positive", 1),
    (lax.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS, "positive", 2),
    (lax.cbrt, np.cbrt, FLOATS, "default", 2),
    (lax.erf, scipy.special.erf, FLOATS, "small", 5),
    (lax.erfc, scipy.special.erfc, FLOATS, "small", 5),
    (lax.erf_inv, scipy.special.erfinv, FLOATS, "unit", 10),
    (lax.lgamma, scipy.special.gammaln, FLOATS, "positive", 10),
    (lax.digamma, scipy.special.digamma, FLOATS, "positive", 10),
    (lax.real, np.real, COMPLEX, "default", 1),
    (lax.imag, np.imag, COMPLEX, "default", 1),
    (lax.conj, np.conj, FLOATS[2:] + COMPLEX, "default", 1),
    (lax.abs, np.abs, FLOATS + COMPLEX + SIGNED, "default", 1),
    (lax.square, np.square, FLOATS + COMPLEX + INTS, "small", 1),
    (lax.bitwise_not, np.invert, INTS + BOOL, "default", 1),
    (lax.population_count,
     lambda x: np.bitwise_count(x.view(f"u{x.dtype.itemsize}")).astype(x.dtype), INTS, "default", 1),
]


def _ref(fn, x):
    with np.errstate(all="ignore"):
        if x.dtype in (bf16, np.dtype(np.float16)):
            x = x.astype(np.float32)
        return fn(x.astype(np.float64) if x.dtype == np.float32 else x)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn,ref,dts,kind,scale", UNARY, ids=[u[0].__name__ for u in UNARY])
def test_unary(fn, ref, dts, kind, scale, shape):
    rng = np.random.RandomState(0)
    for dtype in dts:
        x = rand(shape, dtype, rng, kind)
        out = fn(put(x))
        expected = _ref(ref, x)
        assert out.shape == shape
        if fn in (lax.abs, lax.real, lax.imag) and dtype.kind == "c":
            assert out.dtype == np.float32
        elif fn is lax.is_finite:
            assert out.dtype == np.bool_
        elif fn is lax.conj:
            assert out.dtype == np.complex64
        else:
            assert out.dtype == dtype, (fn.__name__, dtype)
        check_close(out, expected, dtype, scale)


def test_unary_weak_type():
    assert lax.exp(1.0).weak_type
    assert not lax.exp(np.float32(1)).weak_type
    assert lax.neg(3).weak_type and lax.neg(3).dtype == np.int32
    assert lax.is_finite(jax.device_put(1.5)).weak_type  # all inputs weak => weak output


def test_clz():
    x = put(np.array([0, 1, 2, 255], np.uint8))
    np.testing.assert_array_equal(lax.clz(x), [8, 7, 6, 0])
    np.testing.assert_array_equal(lax.clz(put(np.array([1, -1], np.int32))), [31, 0])


def test_round():
    x = put(np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4], np.float32))
    np.testing.assert_array_equal(lax.round(x), [-3, -2, -1, 1, 2, 3, 2])
    np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                                  [-2, -2, -0, 0, 2, 2, 2])
    np.testing.assert_array_equal(lax.round(x, 1), [-2, -2, -0, 0, 2, 2, 2])
    with pytest.raises(ValueError, match="2 is not a valid RoundingMethod"):
        lax.round(x, 2)


def test_integer_pow():
    x = np.array([-2., -1., 0.5, 3.], np.float32)
    for y in (0, 1, 2, 3, 7, -1, -2):
        check_close(lax.integer_pow(put(x), y), x.astype(np.float64) ** y, np.float32)
    np.testing.assert_array_equal(lax.integer_pow(put(np.arange(4, dtype=np.int32)), 3),
                                  [0, 1, 8, 27])
    assert lax.integer_pow(jax.device_put(1.5), 2).weak_type


BINARY = [
    (lax.add, np.add, FLOATS + COMPLEX + INTS, "default"),
    (lax.sub, np.subtract, FLOATS + COMPLEX + INTS, "default"),
    (lax.mul, np.multiply, FLOATS + COMPLEX + INTS, "default"),
    (lax.div, None, FLOATS + COMPLEX + INTS, "positive"),
    (lax.rem, np.fmod, FLOATS + INTS, "positive"),
    (lax.pow, np.power, FLOATS[2:] + COMPLEX, "positive"),
    (lax.max, np.maximum, FLOATS + INTS + BOOL, "default"),
    (lax.min, np.minimum, FLOATS + INTS + BOOL, "default"),
    (lax.atan2, np.arctan2, FLOATS, "default"),
    (lax.nextafter, np.nextafter, FLOATS[2:], "default"),
    (lax.bitwise_and, np.bitwise_and, INTS + BOOL, "default"),
    (lax.bitwise_or, np.bitwise_or, INTS + BOOL, "default"),
    (lax.bitwise_xor, np.bitwise_xor, INTS + BOOL, "default"),
    (lax.eq, np.equal, FLOATS + COMPLEX + INTS + BOOL, "default"),
    (lax.ne, np.not_equal, FLOATS + COMPLEX + INTS + BOOL, "default"),
    (lax.lt, np.less, FLOATS + INTS + BOOL, "default"),
    (lax.le, np.less_equal, FLOATS + INTS + BOOL, "default"),
    (lax.gt, np.greater, FLOATS + INTS + BOOL, "default"),
    (lax.ge, np.greater_equal, FLOATS + INTS + BOOL, "default"),
    (lax.complex, lambda x, y: x + 1j * y, FLOATS[2:], "default"),
]


def _lax_div_ref(x, y):
    if x.dtype.kind in "iu":
        return (np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))).astype(x.dtype)
    return x / y


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn,ref,dts,kind", BINARY, ids=[b[0].__name__ for b in BINARY])
def test_binary(fn, ref, dts, kind, shape):
    rng = np.random.RandomState(1)
    ref = ref or _lax_div_ref
    for dtype in dts:
        x, y = rand(shape, dtype, rng, kind), rand(shape, dtype, rng, kind)
        if fn is lax.eq or fn is lax.ne:
            y = np.where(rng.rand(*shape) > 0.5, x, y)
        out = fn(put(x), put(y))
        with np.errstate(all="ignore"):
            low = dtype in (bf16, np.dtype(np.float16))
            expected = ref(x.astype(np.float32), y.astype(np.float32)) if low else ref(x, y)
        check_close(out, expected, dtype, 4)
        # A 0-d operand broadcasts.
        y0 = y.reshape(-1)[0] if y.size else np.zeros((), dtype)
        out0 = fn(put(x), put(y0))
        assert out0.shape == shape


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_shifts(dtype):
    rng = np.random.RandomState(2)
    bits = dtype.itemsize * 8
    x = rand((3, 4), dtype, rng)
    s = rng.randint(0, bits, size=(3, 4)).astype(dtype)
    ux = x.view(np.dtype(f"u{dtype.itemsize}"))
    np.testing.assert_array_equal(lax.shift_left(put(x), put(s)), (ux << s.astype(ux.dtype)).view(dtype))
    np.testing.assert_array_equal(lax.shift_right_logical(put(x), put(s)),
                                  (ux >> s.astype(ux.dtype)).view(dtype))
    np.testing.assert_array_equal(lax.shift_right_arithmetic(put(x), put(s)), x >> s)
    # Shifting by the bit width or more: 0 (or the sign for arithmetic shifts).
    big = put(np.full((2,), bits + 1, dtype))
    np.testing.assert_array_equal(lax.shift_left(put(x[0, :2]), big), [0, 0])


@pytest.mark.parametrize("dtype", [np.dtype(np.int32), np.dtype(np.uint32)], ids=str)
@pytest.mark.parametrize("amount", [0, 13, 31, 32, 40])
def test_shifts_by_one_amount(dtype, amount):
    # One amount for a whole tile takes the vectorized kernel path; 1027 elements leave a
    # ragged tail, and one differing amount sends its tile back to the generic path.
    rng = np.random.RandomState(3)
    x = rand((1027,), dtype, rng)
    s = np.full((1027,), amount, dtype)
    s[700] = 5
    ux = x.view(np.uint32)
    us = s.astype(np.int64)
    keep = us < 32
    want_l = np.where(keep, ux.astype(np.uint64) << np.minimum(us, 31).astype(np.uint64), 0).astype(np.uint32)
    want_r = np.where(keep, ux >> np.minimum(us, 31).astype(np.uint32), 0).astype(np.uint32)
    want_a = np.where(keep, x.view(np.int32) >> np.minimum(us, 31).astype(np.int32),
                      np.where(x.view(np.int32) < 0, -1, 0)).astype(np.int32)
    for jit in (False, True):
        left = jax.jit(lax.shift_left) if jit else lax.shift_left
        right = jax.jit(lax.shift_right_logical) if jit else lax.shift_right_logical
        arith = jax.jit(lax.shift_right_arithmetic) if jit else lax.shift_right_arithmetic
        np.testing.assert_array_equal(np.asarray(left(put(x), put(s))).view(np.uint32), want_l)
        np.testing.assert_array_equal(np.asarray(right(put(x), put(s))).view(np.uint32), want_r)
        np.testing.assert_array_equal(np.asarray(arith(put(x), put(s))).view(np.int32), want_a)


def test_int_division_semantics():
    x, y = put(np.array([-5, 5, -5, 5], np.int32)), put(np.array([3, 3, -3, -3], np.int32))
    np.testing.assert_array_equal(lax.div(x, y), [-1, 1, 1, -1])
    np.testing.assert_array_equal(lax.rem(x, y), [-2, 2, -2, 2])


def test_pow_integer_exponent():
    x = put(np.array([1.5, 2., 3.], np.float32))
    check_close(lax.pow(x, put(np.array([2, 3, -1], np.int32))), [2.25, 8, 1 / 3], np.float32)
    out = lax.pow(jax.device_put(1.5), 2)
    assert out.weak_type and out.dtype == np.float32 and float(out) == 2.25


def test_python_scalars_are_weak_default_dtypes():
    f = put(np.ones(3, np.float32))
    assert lax.add(f, 1.5).dtype == np.float32
    out = lax.add(1, 2)
    assert out.dtype == np.int32 and out.weak_type and int(out) == 3
    assert not lax.add(f, 1.5).weak_type
    assert lax.add(jax.device_put(1.5), 1.5).weak_type
    assert lax.max(True, False).dtype == np.bool_ and not lax.max(True, False).weak_type
    assert lax.eq(1j, 1j).weak_type and lax.eq(1j, 1j).dtype == np.bool_
    np.testing.assert_array_equal(lax.add(np.ones(2, np.float32), 1.0), [2, 2])


def test_mul_out_dtype():
    out = lax.mul(put(np.int8(100)), put(np.int8(3)), out_dtype=np.int32)
    assert out.dtype == np.int32 and int(out) == 300


@pytest.mark.parametrize("expr,exc,msg", [
    ("lax.add(f32, jnp_ones(4, np.int32))", TypeError,
     "add got incompatible shapes for broadcasting: (3,), (4,)."),
    ("lax.add(f32, jnp_ones((2, 3)))", TypeError,
     "add: arrays must have the same number of dimensions, got {1, 2}"),
    ("lax.add(f32, 1)", TypeError,
     "lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.add "
     "is a similar function that does automatic type promotion on inputs)."),
    ("lax.sub(f32, jnp_ones(3, np.int32))", TypeError,
     "lax.sub requires arguments to have the same dtypes, got float32, int32. (Tip: "
     "jnp.subtract is a similar function that does automatic type promotion on inputs)."),
    ("lax.exp(jnp_ones(3, np.int32))", TypeError,
     "exp does not accept dtype int32. Accepted dtypes are subtypes of floating, complexfloating."),
    ("lax.add(f32, True)", TypeError,
     "add does not accept dtype bool at position 1. Accepted dtypes at position 1 are subtypes "
     "of integer, floating, complexfloating."),
    ("lax.add([1, 2], [1, 2])", TypeError,
     "Error interpreting argument to add as a JAX value. The problematic value is of type "
     "<class 'list'> and was passed to add at position 0.\n"),
    ("lax.neg(True)", TypeError,
     "neg does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
     "complexfloating."),
    ("lax.conj(np.int32(1))", TypeError,
     "conj does not accept dtype int32. Accepted dtypes are subtypes of float32, "
     "complexfloating, float64."),
    ("lax.lt(1j, 1j)", TypeError,
     "lt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, bool."),
    ("lax.bitwise_and(1., 1.)", TypeError,
     "and does not accept dtype float32 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, bool."),
    ("lax.abs(np.uint8(1))", TypeError,
     "abs does not accept dtype uint8. Accepted dtypes are subtypes of floating, "
     "complexfloating, signedinteger."),
    ("lax.complex(1, 1)", TypeError,
     "complex does not accept dtype int32 at position 0. Accepted dtypes at position 0 are "
     "subtypes of float32, float64."),
    ("lax.rem(1j, 1j)", TypeError,
     "rem does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating."),
    ("lax.pow(2, 1.5)", TypeError,
     "pow does not accept dtype int32 at position 0. Accepted dtypes at position 0 are "
     "subtypes of floating, complexfloating."),
    ("lax.pow(f32, jnp_ones(3, np.float16))", TypeError,
     "the first argument to pow must have an inexact dtype (float or complex), and the second "
     "argument must have an inexact or integer dtype, and two inexact dtypes must match, but "
     "got float32 and float16 respectively."),
    ("lax.integer_pow(np.int32(2), -1)", TypeError,
     "Integers cannot be raised to negative powers, got integer_pow(int32[], -1)"),
    ("lax.round(np.int32(1))", TypeError,
     "round does not accept dtype int32. Accepted dtypes are subtypes of floating."),
    ("lax.shift_left(1., 2.)", TypeError,
     "shift_left does not accept dtype float32 at position 0. Accepted dtypes at position 0 "
     "are subtypes of integer."),
    ("lax.real(f32)", TypeError,
     "real does not accept dtype float32. Accepted dtypes are subtypes of complexfloating."),
    ("lax.erf_inv(np.int32(1))", TypeError,
     "erf_inv does not accept dtype int32. Accepted dtypes are subtypes of floating."),
])
def test_elementwise_errors(expr, exc, msg):
    f32 = put(np.ones(3, np.float32))
    jnp_ones = lambda shape, dtype=np.float32: put(np.ones(shape, dtype))  # noqa: E731
    with pytest.raises(exc) as info:
        eval(expr)
    assert str(info.value) == msg


# ----------------------------------------------------------------------------------------
# Conversions, select, clamp.

def test_convert_element_type():
    x = put(np.array([-1.5, 0.5, 300., np.nan], np.float32))
    out = lax.convert_element_type(x, np.uint8)
    assert out.dtype == np.uint8 and not out.weak_type
    np.testing.assert_array_equal(out, [0, 0, 255, 0])  # saturates; NaN -> 0
    np.testing.assert_array_equal(lax.convert_element_type(x[:3], np.int32), [-1, 0, 300])
    assert lax.convert_element_type(jax.device_put(1.5), np.float32).weak_type is False
    # 64-bit requests are truncated with x64 off, with JAX's warning.
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
        assert lax.convert_element_type(x, np.float64).dtype == np.float32
    assert float(lax.convert_element_type(2**40, np.float32)) == 2.0**40
    with pytest.warns(np.exceptions.ComplexWarning):
        lax.convert_element_type(put(np.array([1 + 2j], np.complex64)), np.float32)
    for dt in FLOATS + INTS + BOOL + COMPLEX:
        v = rand((3,), np.float32, np.random.RandomState(3))
        np.testing.assert_array_equal(lax.convert_element_type(put(v), dt),
                                      v.astype(dt) if dt.kind != "u" else
                                      np.clip(v, 0, None).astype(dt) * (v > 0))
    with pytest.raises(TypeError, match="JAX only supports number, bool, and string dtypes, "
                                        "got dtype <class 'object'> in convert_element_type"):
        lax.convert_element_type(x, object)


def test_bitcast_convert_type():
    x = put(np.array([1., -2.], np.float32))
    np.testing.assert_array_equal(lax.bitcast_convert_type(x, np.int32),
                                  np.array([1., -2.], np.float32).view(np.int32))
    out = lax.bitcast_convert_type(x, np.int8)
    assert out.shape == (2, 4)
    np.testing.assert_array_equal(out, np.array([1., -2.], np.float32).view(np.int8).reshape(2, 4))
    back = lax.bitcast_convert_type(out, np.float32)
    np.testing.assert_array_equal(back, [1., -2.])
    with pytest.raises(TypeError, match="does not support bool or complex values"):
        lax.bitcast_convert_type(x, np.bool_)
    with pytest.raises(ValueError) as info:
        lax.bitcast_convert_type(put(np.ones(2, np.int8)), np.float32)
    assert str(info.value) == ("Attempting to convert array of shape (2,) from int8 of size 8 "
                               "bits to float32 of size 32, bits but 2 * 8 != 32")


def test_select_n_and_select():
    a, b, c = (put(np.full(3, v, np.float32)) for v in (0., 1., 2.))
    np.testing.assert_array_equal(lax.select_n(put(np.array([0, 1, 2], np.int32)), a, b, c),
                                  [0, 1, 2])
    np.testing.assert_array_equal(lax.select_n(put(np.array([1, 0, 1], np.uint8)), a, b),
                                  [1, 0, 1])
    np.testing.assert_array_equal(lax.select(put(np.array([True, False, True])), b, a),
                                  [1, 0, 1])
    out = lax.select(True, 1.0, 2.0)
    assert float(out) == 1.0 and out.weak_type
    for which, cases, exc, msg in [
        (put(np.ones(3, np.float32)), (a,), TypeError,
         "select `which` must be boolean or integer type, got float32."),
        (True, (a, put(np.ones(4, np.float32))), TypeError,
         "select cases must have the same shapes, got [(3,), (4,)]."),
        (put(np.ones(2, bool)), (a, a), TypeError,
         "select `which` must be scalar or have the same shape as cases, got `which` shape "
         "(2,) but case shape (3,)."),
        (True, (a, a, a), TypeError, "select with boolean `which` cannot have > 2 cases."),
        (put(np.int32(1)), (a, put(np.ones(3, np.int32))), TypeError,
         "lax.select requires arguments to have the same dtypes, got float32, int32. (Tip: "
         "jnp.where is a similar function that does automatic type promotion on inputs)."),
    ]:
        with pytest.raises(exc) as info:
            lax.select_n(which, *cases)
        assert str(info.value) == msg
    with pytest.raises(ValueError, match="select_n\\(\\) must have at least one case"):
        lax.select_n(True)


def test_clamp():
    x = put(np.arange(5, dtype=np.float32))
    np.testing.assert_array_equal(lax.clamp(1., x, 3.), [1, 1, 2, 3, 3])
    lo = put(np.array([0, 2, 0, 0, 5], np.float32))
    np.testing.assert_array_equal(lax.clamp(lo, x, 10.), [0, 2, 2, 3, 5])
    with pytest.raises(TypeError) as info:
        lax.clamp(put(np.zeros(2, np.float32)), x, 1.)
    assert str(info.value) == ("clamp requires min.shape == operand.shape or min.shape == (), "
                               "got min.shape=(2,), operand.shape=(5,).")
    with pytest.raises(TypeError) as info:
        lax.clamp(0, x, 1.)
    assert str(info.value) == ("lax.clamp requires arguments to have the same dtypes, got "
                               "int32, float32, float32.")


# ----------------------------------------------------------------------------------------
# Reductions.

REDUCTIONS = [
    (lax.reduce_sum, np.sum, FLOATS + COMPLEX + INTS),
    (lax.reduce_prod, np.prod, FLOATS[2:] + INTS),
    (lax.reduce_max, np.max, FLOATS + INTS + BOOL),
    (lax.reduce_min, np.min, FLOATS + INTS + BOOL),
    (lax.reduce_and, np.bitwise_and.reduce, INTS + BOOL),
    (lax.reduce_or, np.bitwise_or.reduce, INTS + BOOL),
    (lax.reduce_xor, np.bitwise_xor.reduce, INTS + BOOL),
]


def _all_axes(ndim):
    yield ()
    yield tuple(range(ndim))
    for a in range(ndim):
        yield (a,)
    if ndim == 3:
        yield (0, 2)


@pytest.mark.parametrize("shape", [s for s in SHAPES if 0 not in s] + [(0, 3)], ids=str)
@pytest.mark.parametrize("fn,ref,dts", REDUCTIONS, ids=[r[0].__name__ for r in REDUCTIONS])
def test_reductions(fn, ref, dts, shape):
    rng = np.random.RandomState(4)
    for dtype in dts:
        x = rand(shape, dtype, rng, "small" if fn is lax.reduce_prod else "default")
        for axes in _all_axes(len(shape)):
            if 0 in shape and fn in (lax.reduce_max, lax.reduce_min) and axes and \
                    any(shape[a] == 0 for a in axes):
                continue  # numpy has no identity for these
            out = fn(put(x), axes)
            low = dtype in (bf16, np.dtype(np.float16))
            xs = x.astype(np.float32) if low else x
            if fn in (lax.reduce_and, lax.reduce_or, lax.reduce_xor):
                expected = xs
                for a in sorted(axes, reverse=True):
                    expected = ref(expected, axis=a)
            else:
                expected = ref(xs, axis=axes)
            assert out.dtype == dtype
            check_close(out, expected, dtype, 10 * max(x.size, 1))


def test_reduce_empty_identities():
    np.testing.assert_array_equal(lax.reduce_max(put(np.zeros(0, np.float32)), (0,)), -np.inf)
    assert int(lax.reduce_min(put(np.zeros(0, np.int32)), (0,))) == 2**31 - 1
    assert float(lax.reduce_sum(put(np.zeros((0, 3), np.float32)), (0, 1))) == 0


@pytest.mark.parametrize("expr,exc,msg", [
    ("lax.reduce_sum(f32, (1,))", ValueError,
     "reduction axes (1,) contains out-of-bounds indices for float32[3]."),
    ("lax.reduce_sum(f32, (-1,))", ValueError,
     "reduction axes (-1,) contains out-of-bounds indices for float32[3]."),
    ("lax.reduce_sum(f32, (0, 0))", ValueError, "duplicate value in 'axes' of reduction: (0, 0)"),
    ("lax.reduce_sum(put(np.ones(3, bool)), (0,))", TypeError,
     "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    ("lax.reduce_and(f32, (0,))", TypeError,
     "logical reduction requires operand dtype bool or int, got float32."),
    ("lax.argmax(f32, 1, np.int32)", ValueError, "Invalid axis 1 for operand shape (3,)"),
    ("lax.argmax(f32, -1, np.int32)", ValueError, "Invalid axis -1 for operand shape (3,)"),
    ("lax.argmax(put(np.zeros(0, np.float32)), 0, np.int32)", ValueError,
     "argmin and argmax require non-empty reduced dimension. operand.shape=(0,) axis=0"),
    ("lax.argmax(f32, 0, np.float32)", TypeError,
     "index_dtype must be an integer type, but got float32"),
])
def test_reduction_errors(expr, exc, msg):
    f32 = put(np.ones(3, np.float32))
    with pytest.raises(exc) as info:
        eval(expr)
    assert str(info.value) == msg


@pytest.mark.parametrize("dtype", FLOATS + INTS + BOOL, ids=str)
def test_argmax_argmin(dtype):
    rng = np.random.RandomState(5)
    x = rand((3, 4), dtype, rng)
    for axis in (0, 1):
        for index_dtype in (np.int32, np.uint8):
            out = lax.argmax(put(x), axis, index_dtype)
            assert out.dtype == index_dtype and not out.weak_type
            np.testing.assert_array_equal(out, np.argmax(x.astype(np.float32), axis))
            np.testing.assert_array_equal(lax.argmin(put(x), axis, index_dtype),
                                          np.argmin(x.astype(np.float32), axis))


def test_argmax_nan():
    x = put(np.array([1., np.nan, 3.], np.float32))
    assert int(lax.argmax(x, 0, np.int32)) == 1
    assert int(lax.argmin(put(np.array([1., np.nan, 0.], np.float32)), 0, np.int32)) == 1


# ----------------------------------------------------------------------------------------
# Shapes and layouts.

def test_reshape():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(lax.reshape(put(x), (6, 4)), x.reshape(6, 4))
    np.testing.assert_array_equal(lax.reshape(put(x), (24,), (2, 1, 0)),
                                  x.transpose(2, 1, 0).reshape(24))
    np.testing.assert_array_equal(lax.reshape(put(x[0, 0, :1]), ()), x[0, 0, 0])
    a = put(x)
    assert lax.reshape(a, (2, 3, 4)) is a
    with pytest.raises(TypeError, match=r"reshape new_sizes must all be positive, got \(-1,\)\."):
        lax.reshape(a, (-1,))
    with pytest.raises(TypeError, match="cannot reshape array of shape"):
        lax.reshape(a, (5, 5))
    with pytest.raises(TypeError, match="reshape dimensions must be a permutation of operand "
                                        "dimensions, got dimensions"):
        lax.reshape(a, (24,), (0, 1))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of "
                                        "integer type, got"):
        lax.reshape(a, (3.0,))


@pytest.mark.parametrize("shape", [s for s in SHAPES], ids=str)
def test_transpose_rev_slice(shape):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    a = put(x)
    perm = tuple(reversed(range(len(shape))))
    np.testing.assert_array_equal(lax.transpose(a, perm), x.transpose(perm))
    dims = tuple(range(len(shape)))
    np.testing.assert_array_equal(lax.rev(a, dims), x[tuple(slice(None, None, -1) for _ in dims)])
    start = tuple(min(1, d) for d in shape)
    np.testing.assert_array_equal(lax.slice(a, start, shape),
                                  x[tuple(slice(s, None) for s in start)])
    np.testing.assert_array_equal(lax.slice(a, (0,) * len(shape), shape, (2,) * len(shape)),
                                  x[tuple(slice(None, None, 2) for _ in shape)])


@pytest.mark.parametrize("expr,exc,msg", [
    ("lax.transpose(m, (0, 0))", TypeError,
     "transpose permutation isn't a permutation of operand dimensions, got permutation (0, 0) "
     "for operand shape (2, 3)."),
    ("lax.rev(f32, (0, 0))", TypeError, "rev dimensions must be unique, got (0, 0)."),
    ("lax.rev(f32, (1,))", TypeError,
     "rev dimensions must all be less than operand ndim, got dimensions (1,) for operand ndim 1."),
    ("lax.rev(f32, (-1,))", TypeError,
     "rev dimensions must have every element be nonnegative, got (-1,)."),
    ("lax.slice(f32, (0,), (4,))", TypeError,
     "slice limit_indices must be less than or equal to operand shape, got limit_indices (4,) "
     "for operand shape (3,)."),
    ("lax.slice(f32, (2,), (1,))", TypeError,
     "slice limit_indices must be greater than or equal to start_indices, got start_indices "
     "(2,) and limit_indices (1,)."),
    ("lax.slice(f32, (0, 0), (1, 1))", TypeError,
     "slice start_indices must have length equal to the number of dimensions of the operand, "
     "got indices (0, 0) for operand shape (3,)."),
    ("lax.broadcast_in_dim(f32, (2, 4), (1,))", TypeError,
     "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
     "corresponding dimensions in the target broadcast shape; got operand of shape (3,), "
     "target broadcast shape (2, 4), broadcast_dimensions (1,) "),
    ("lax.broadcast_in_dim(f32, (2, 3), (0, 1))", TypeError,
     "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
     "broadcast_dimensions (0, 1) for operand ndim 1."),
    ("lax.broadcast_in_dim(f32, (3,), (1,))", TypeError,
     "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got (1,) "
     "for operand ndim 1 and shape (3,)."),
    ("lax.broadcast_in_dim(f32, (), (0,))", TypeError,
     "broadcast_in_dim target broadcast shape must have equal or higher rank to the operand "
     "shape; got operand ndim 1 and target broadcast ndim 0."),
    ("lax.broadcast_in_dim(put(np.float32(1)), (-1,), ())", TypeError,
     "broadcast_in_dim shape must have every element be nonnegative, got (-1,)."),
    ("lax.squeeze(put(np.ones((1, 3))), (1,))", ValueError,
     "cannot select an axis to squeeze out which has size not equal to one, got shape=(1, 3) "
     "and dimensions=(1,)"),
    ("lax.squeeze(put(np.ones((1, 3))), (2,))", ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    ("lax.expand_dims(f32, (0, 0))", ValueError, "repeated axis in lax.expand_dims: (0, 0)"),
    ("lax.pad(f32, 0., [(1, 1, -1)])", ValueError,
     "interior padding in padding_config must be nonnegative, got padding_config ((1, 1, -1),)"),
    ("lax.pad(f32, 0., [(-2, -2, 0)])", ValueError,
     "Dimension size after padding is not at least 0, got result shape (-1,), for "
     "padding_config ((-2, -2, 0),) and operand shape (3,)"),
    ("lax.pad(f32, 0, [(1, 1, 0)])", TypeError,
     "pad operand and padding_value must be same dtype: got float32 and int32."),
    ("lax.pad(f32, put(np.zeros(2, np.float32)), [(1, 1, 0)])", ValueError,
     "padding_value must be a scalar; got np.shape(padding_value)=(2,)"),
    ("lax.concatenate([f32, put(np.ones((3, 1), np.float32))], 0)", TypeError,
     "Cannot concatenate arrays with different numbers of dimensions: got (3,), (3, 1)."),
    ("lax.concatenate([m, put(np.ones((3, 3), np.float32))], 1)", TypeError,
     "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
     "concatenated: concatenating along dimension 1 for shapes (2, 3), (3, 3)."),
    ("lax.concatenate([f32, f32], -1)", TypeError,
     "concatenate dimension out of bounds: dimension -1 for shapes (3,), (3,)."),
    ("lax.concatenate([f32, put(np.ones(2, np.int32))], 0)", TypeError,
     "lax.concatenate requires arguments to have the same dtypes, got float32, int32. (Tip: "
     "jnp.concatenate is a similar function that does automatic type promotion on inputs)."),
    ("lax.concatenate([], 0)", ValueError, "concatenate requires a non-empty sequences of arrays"),
    ("lax.iota(np.int32, -1)", TypeError,
     "iota shape must have every element be nonnegative, got (-1,)."),
    ("lax.iota(bool, 3)", TypeError,
     "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
     "complexfloating."),
    ("lax.broadcasted_iota(np.int32, (2, 3), 2)", ValueError,
     "iota dimension must be between 0 and len(shape), got dimension=2 for shape=(2, 3)"),
    ("lax.full((2,), put(np.ones(2)))", TypeError,
     "full must be called with scalar fill_value, got fill_value.shape (2,)."),
])
def test_shape_errors(expr, exc, msg):
    f32 = put(np.ones(3, np.float32))
    m = put(np.ones((2, 3), np.float32))
    with pytest.raises(exc) as info:
        eval(expr)
    assert str(info.value) == msg


def test_broadcasting_ops():
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(lax.broadcast_in_dim(put(x), (2, 3), (1,)), np.tile(x, (2, 1)))
    np.testing.assert_array_equal(lax.broadcast_in_dim(put(x[:1]), (3, 2), (0,)), np.zeros((3, 2)))
    m = np.arange(6, dtype=np.int32).reshape(2, 3)
    # Unsorted broadcast dimensions permute the operand's axes.
    np.testing.assert_array_equal(lax.broadcast_in_dim(put(m), (3, 2), (1, 0)), m.T)
    np.testing.assert_array_equal(lax.broadcast(put(x), (2,)), np.tile(x, (2, 1)))
    assert lax.expand_dims(put(x), (0, 2)).shape == (1, 3, 1)
    assert lax.squeeze(put(np.ones((1, 3, 1))), (0, -1)).shape == (3,)
    np.testing.assert_array_equal(lax.add(put(np.ones((3, 1))), put(np.ones((1, 4)))),
                                  np.full((3, 4), 2.))


def test_pad():
    x = np.arange(1, 4, dtype=np.float32)
    np.testing.assert_array_equal(lax.pad(put(x), 0., [(1, 2, 1)]), [0, 1, 0, 2, 0, 3, 0, 0])
    np.testing.assert_array_equal(lax.pad(put(x), -1., [(-1, 2, 1)]), [-1, 2, -1, 3, -1, -1])
    m = np.ones((2, 2), np.int32)
    np.testing.assert_array_equal(lax.pad(put(m), put(np.int32(7)), [(1, 0, 0), (0, 1, 0)]),
                                  [[7, 7, 7], [1, 1, 7], [1, 1, 7]])


def test_concatenate():
    a, b = np.ones((2, 3), np.float32), np.zeros((2, 1), np.float32)
    np.testing.assert_array_equal(lax.concatenate([put(a), put(b)], 1), np.concatenate([a, b], 1))
    single = put(a)
    assert lax.concatenate([single], 0) is single
    out = lax.concatenate([jax.device_put(1.5).reshape(1), jax.device_put(2.5).reshape(1)], 0)
    assert out.weak_type


def test_iota_full():
    from tinyxla._src.lax import lax as L
    np.testing.assert_array_equal(lax.iota(np.int32, 5), np.arange(5))
    out = lax.broadcasted_iota(np.float32, (2, 3), 1)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[0, 1, 2], [0, 1, 2]])
    out = lax.full((2,), 1.0)
    assert out.dtype == np.float32 and out.weak_type
    assert lax.full((2,), 1).dtype == np.int32 and lax.full((2,), 1).weak_type
    assert not lax.full((2,), True).weak_type
    out = lax.full((2, 2), 3, np.int8)
    assert out.dtype == np.int8 and not out.weak_type
    np.testing.assert_array_equal(out, np.full((2, 2), 3))
    like = lax.full_like(put(np.ones(3, np.float32)), 2)
    assert like.dtype == np.float32 and not like.weak_type
    np.testing.assert_array_equal(like, [2, 2, 2])
    assert lax.full_like(jax.device_put(1.0), 2, shape=(2,)).weak_type
    assert lax.full_like(put(np.ones(3)), 2, np.int32, (2,)).dtype == np.int32
    np.testing.assert_array_equal(L.zeros_like_array(put(np.ones((2, 2), np.int8))),
                                  np.zeros((2, 2)))


# ----------------------------------------------------------------------------------------
# dot_general.

@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int32), bf16,
                                   np.dtype(np.float16), np.dtype(np.complex64)], ids=str)
def test_dot_general(dtype):
    rng = np.random.RandomState(6)
    a, b = rand((2, 3, 4), dtype, rng, "small"), rand((2, 4, 5), dtype, rng, "small")
    hi = np.complex128 if dtype.kind == "c" else np.float64
    out = lax.dot_general(put(a), put(b), (((2,), (1,)), ((0,), (0,))))
    assert out.dtype == dtype and out.shape == (2, 3, 5)
    check_close(out, np.einsum("bij,bjk->bik", a.astype(hi), b.astype(hi)), dtype, 10)
    m, v = rand((3, 4), dtype, rng, "small"), rand((4,), dtype, rng, "small")
    check_close(lax.dot(put(m), put(v)), m.astype(hi) @ v.astype(hi), dtype, 10)
    check_close(lax.dot(put(v), put(v)), v.astype(hi) @ v.astype(hi), dtype, 10)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True),
                                             (True, True)])
def test_large_dot_split_over_pool(dtype, trans_a, trans_b):
    # Large enough that one product's rows are spread over the thread pool.
    rng = np.random.RandomState(7)
    a = rng.randn(150, 130).astype(dtype)
    b = rng.randn(130, 170).astype(dtype)
    pa = put(np.ascontiguousarray(a.T)).T if trans_a else put(a)
    pb = put(np.ascontiguousarray(b.T)).T if trans_b else put(b)
    np.testing.assert_allclose(lax.dot(pa, pb), a.astype(np.complex128) @ b, rtol=1e-4,
                               atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("stored_t", [False, True])
@pytest.mark.parametrize("vector_first", [False, True])
def test_large_gemv_split_over_pool(dtype, stored_t, vector_first):
    # One matrix-vector product large enough that its output is sliced over the pool, with
    # the matrix stored either way round and on either side of the vector.
    rng = np.random.RandomState(8)
    m = rng.randn(3001, 97).astype(dtype)  # odd sizes: slices of unequal length
    v = rng.randn(97 if not vector_first else 3001).astype(dtype)
    pm = put(np.ascontiguousarray(m.T)).T if stored_t else put(m)
    got = lax.dot(put(v), pm) if vector_first else lax.dot(pm, put(v))
    want = v.astype(np.complex128) @ m if vector_first else m.astype(np.complex128) @ v
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_dot_preferred_and_mixed():
    i8 = put(np.ones(300, np.int8))
    out = lax.dot(i8, i8, preferred_element_type=np.int32)
    assert out.dtype == np.int32 and int(out) == 300
    f = put(np.ones((2, 3), np.float16))
    out = lax.dot(f, put(np.ones((3, 4), np.float16)), preferred_element_type=np.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.full((2, 4), 3.))
    out = lax.dot(put(np.ones(3, np.float32)), put(np.ones(3, np.int32)))
    assert out.dtype == np.float32 and float(out) == 3
    with pytest.raises(TypeError) as info:
        lax.dot(put(np.ones(3, np.int32)), put(np.ones(3, np.int32)), preferred_element_type=np.int8)
    assert str(info.value) == ("`preferred_element_type` must not be narrower than the original "
                               "type, got preferred_element_type of int8 for result type of int32.")


@pytest.mark.parametrize("dims,msg", [
    ((((1,), (1,)), ((), ())),
     "dot_general requires contracting dimensions to have the same shape, got (3,) and (2,)."),
    ((((2,), (0,)), ((), ())),
     "dot_general requires lhs dimension numbers to be nonnegative and less than the number of "
     "axes of the lhs value, got lhs_batch of () and lhs_contracting of (2,) for lhs of rank 2"),
    ((((1,), (0,)), ((0,), ())),
     "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch "
     "(0,) and rhs_batch ()."),
    ((((1,), (0,)), ((0,), (0,))),
     "dot_general requires rhs batch dimensions to be disjoint from contracting dimensions, got "
     "rhs_batch (0,) and rhs_contracting (0,)."),
])
def test_dot_general_errors(dims, msg):
    with pytest.raises(TypeError) as info:
        lax.dot_general(put(np.ones((2, 3), np.float32)), put(np.ones((3, 2), np.float32)), dims)
    assert str(info.value) == msg
    with pytest.raises(ValueError, match="jax.lax.dot: dimension_numbers must be specified"):
        lax.dot(put(np.ones(3, np.float32)), put(np.ones(4, np.float32)))


def _matmul64(a, b):
    """numpy's matmul in a wide type: the reference of batch_matmul."""
    wide = np.int64 if a.dtype.kind in "iu" else np.float64
    return np.matmul(a.astype(wide), b.astype(wide))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("batch", [(), (3,), (2, 3)], ids=["no_batch", "batch1", "batch2"])
def test_batch_matmul(dtype, batch, request):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    rng = np.random.RandomState(11)
    a = rand(batch + (4, 5), np.dtype(dtype), rng, "small")
    b = rand(batch + (5, 2), np.dtype(dtype), rng, "small")
    want = _matmul64(a, b)
    for fn in (lax.batch_matmul, jax.jit(lax.batch_matmul)):
        out = fn(put(a), put(b))
        assert out.dtype == dtype and out.shape == batch + (4, 2)
        check_close(out, want, dtype, 10)
    # An operand batched by vmap: the others' batch dimensions stay leading, as in matmul.
    c = rand((2,) + batch + (4, 5), np.dtype(dtype), rng, "small")
    check_close(jax.vmap(lax.batch_matmul)(put(c), put(np.stack([b, b]))),
                _matmul64(c, b), dtype, 10)
    check_close(jax.vmap(lax.batch_matmul, in_axes=(0, None))(put(c), put(b)),
                _matmul64(c, b), dtype, 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_matmul_grad(dtype, request):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    rng = np.random.RandomState(12)
    a, b = rng.randn(2, 3, 4, 5).astype(dtype), rng.randn(2, 3, 5, 2).astype(dtype)
    w = rng.randn(2, 3, 4, 2).astype(dtype)
    loss = lambda x, y: (lax.batch_matmul(x, y) * w).sum()  # noqa: E731
    ga, gb = jax.jit(jax.grad(loss, argnums=(0, 1)))(put(a), put(b))
    a64, b64, w64 = a.astype(np.float64), b.astype(np.float64), w.astype(np.float64)
    check_close(ga, w64 @ np.swapaxes(b64, -1, -2), dtype, 10)
    check_close(gb, np.swapaxes(a64, -1, -2) @ w64, dtype, 10)


@pytest.mark.parametrize("lhs,rhs,kind,msg", [
    ((3,), (3,), ValueError, "Arguments to batch_matmul must be at least 2D, got 1, 1"),
    ((3, 3), (3,), ValueError, "Arguments to batch_matmul must be at least 2D, got 2, 1"),
    ((), (2, 2), ValueError, "Arguments to batch_matmul must be at least 2D, got 0, 2"),
    ((2, 3, 4), (4, 5), ValueError, "Arguments to batch_matmul must have same ndim, got 3, 2"),
    ((2, 3, 4), (3, 4, 5), TypeError,
     "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same "
     "shape, got (2,) and (3,)."),
    ((2, 3, 4), (2, 5, 6), TypeError,
     "dot_general requires contracting dimensions to have the same shape, got (4,) and (5,)."),
])
def test_batch_matmul_errors(lhs, rhs, kind, msg):
    with pytest.raises(kind) as info:
        lax.batch_matmul(put(np.ones(lhs, np.float32)), put(np.ones(rhs, np.float32)))
    assert str(info.value) == msg


def test_dynamic_slice():
    x = put(np.arange(10, dtype=np.float32))
    np.testing.assert_array_equal(lax.dynamic_slice(x, (8,), (3,)), [7, 8, 9])  # clamped
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-2,), (3,)), [7, 8, 9])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (put(np.int32(5)),), (3,)), [5, 6, 7])
    with pytest.raises(TypeError, match="index arguments to dynamic_slice must be integers of "
                                        "the same type, got: float32"):
        lax.dynamic_slice(x, (1.5,), (3,))


def test_stop_gradient():
    x = jax.device_put(1.5)
    assert lax.stop_gradient(x).weak_type
    tree = lax.stop_gradient({"a": put(np.ones(2, np.float32))})
    np.testing.assert_array_equal(tree["a"], [1, 1])


def test_abstract_eval_rules():
    """The rules the tracing interpreters use: shapes, dtypes and weak types."""
    from tinyxla._src.core import ShapedArray
    from tinyxla._src.lax import lax as L
    f = ShapedArray((3,), np.float32)
    w = ShapedArray((), np.float32, weak_type=True)
    assert L.add_p.abstract_eval(f, w) == ShapedArray((3,), np.float32)
    assert L.add_p.abstract_eval(w, w) == w
    assert L.lt_p.abstract_eval(f, f) == ShapedArray((3,), np.bool_)
    assert L.exp_p.abstract_eval(f) == f
    assert L.reduce_sum_p.abstract_eval(f, axes=(0,)) == ShapedArray((), np.float32)
    assert L.dot_general_p.abstract_eval(
        ShapedArray((2, 3), np.float32), ShapedArray((3, 4), np.float32),
        dimension_numbers=(((1,), (0,)), ((), ()))) == ShapedArray((2, 4), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert L.convert_element_type_p.abstract_eval(
            f, new_dtype=np.dtype(np.int32), weak_type=False) == ShapedArray((3,), np.int32)


def test_weak_scalar_and_convert_helpers():
    """The helpers tinyxla.numpy uses to pass Python scalars to the primitives."""
    from tinyxla._src.lax import lax as L
    assert L.weak_scalar(1, np.float32) == 1.0 and type(L.weak_scalar(1, np.float32)) is float
    assert type(L.weak_scalar(True, np.int32)) is int
    out = L.weak_scalar(1.5, np.int32)  # narrowing would change the value: an array
    assert isinstance(out, jax.Array) and out.weak_type and int(out) == 1
    out = L.weak_scalar(1, bf16)
    assert isinstance(out, jax.Array) and out.dtype == bf16 and out.weak_type
    x = put(np.ones(3, np.float32))
    assert L._convert_element_type(x, np.float32, False) is x
    out = L._convert_element_type(2, np.float32, True)
    assert out.dtype == np.float32 and out.weak_type and float(out) == 2.0
    out = L._convert_element_type(x, np.int32, True)
    assert out.dtype == np.int32 and out.weak_type
