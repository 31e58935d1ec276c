"""Element semantics shared by every path (cpp/src/core/element_semantics.h): conversions,
max/min and their reductions, and the denormal rule, eagerly, under jit on the base tier
and on the upper tier. Expected values are pinned from JAX 0.10.2 on CPU."""
import os
import shutil

import ml_dtypes
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax

BF16 = np.dtype(ml_dtypes.bfloat16)


def _paths(fn, *args):
    """fn's answers eagerly, jitted on the base tier and (with a C compiler) on the upper."""
    outs = [fn(*args)]
    modes = ["0"] + (["1"] if shutil.which("cc") or os.environ.get("CC") else [])
    for mode in modes:
        os.environ["TINYXLA_CODEGEN"] = mode
        try:
            compiled = jax.jit(lambda *a: fn(*a)).lower(*args).compile()
        finally:
            del os.environ["TINYXLA_CODEGEN"]
        compiled.wait_codegen()
        outs.append(compiled(*args))
    return [np.asarray(o) for o in outs]


def _check(fn, args, expected, dtype=None):
    expected = np.asarray(expected, dtype)
    for got in _paths(fn, *args):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), expected.reshape(-1).view(np.uint8))


def test_complex_to_bool_takes_the_real_part():
    # lax.convert_element_type drops the imaginary part first, as JAX's lowering does.
    x = jnp.asarray([1j, 0j, 2, complex(0, np.nan), complex(np.nan, 0), -0j])
    with pytest.warns(np.exceptions.ComplexWarning):
        _check(lambda x: lax.convert_element_type(x, bool), (x,),
               [False, False, True, False, True, False])


def test_complex_astype_bool_tests_both_parts():
    x = jnp.asarray([1j, 0j, 2, complex(0, np.nan), complex(np.nan, 0), -0j])
    _check(lambda x: x.astype(bool), (x,), [True, False, True, True, True, False])
    _check(lambda x: jnp.logical_or(x, False), (x,), [True, False, True, True, True, False])


def test_float_to_int_saturates_and_nan_is_zero():
    f = jnp.asarray([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 255.9, 256, -1, -0.0],
                    jnp.float32)
    _check(lambda x: x.astype(jnp.int8), (f,), [0, 127, -128, 127, -128, 2, -2, 127, 127, -1, 0],
           np.int8)
    _check(lambda x: x.astype(jnp.uint8), (f,), [0, 255, 0, 255, 0, 2, 0, 255, 255, 0, 0], np.uint8)
    _check(lambda x: x.astype(jnp.int32), (f,),
           [0, 2147483647, -2147483648, 2147483647, -2147483648, 2, -2, 255, 256, -1, 0], np.int32)
    _check(lambda x: x.astype(jnp.uint32), (f,), [0, 4294967295, 0, 3000000000, 0, 2, 0, 255, 256,
                                                   0, 0], np.uint32)
    _check(lambda x: x.astype(bool), (f,), [True] * 10 + [False])


def test_narrowing_to_half_types():
    x = jnp.asarray([65520., 65519., 1e-8, 3.4e38, np.nan, -np.nan], jnp.float32)
    _check(lambda x: x.astype(jnp.float16), (x,),
           np.array([0x7C00, 0x7BFF, 0, 0x7C00, 0x7E00, 0xFE00], np.uint16).view(np.float16))
    y = jnp.asarray([3.4e38, 3.39e38, np.nan, -np.nan], jnp.float32)
    _check(lambda x: x.astype(jnp.bfloat16), (y,),
           np.array([0x7F80, 0x7F7F, 0x7FC0, 0xFFC0], np.uint16).view(BF16))


def test_denormals_to_bool_as_xla_cpu():
    # float32/float64 denormals are zero to the comparison (DAZ); bfloat16 ones are tested
    # by their bits and float16 ones are normal float32 numbers: both are true.
    f32 = jnp.asarray(np.array([1e-40, -1e-40, 0.0, 1.0], np.float32))
    _check(lambda x: x.astype(bool), (f32,), [False, False, False, True])
    bf = jnp.asarray(np.array([1e-39, -2.76e-40, 0.0, -0.0, 1.0], np.float32).astype(BF16))
    _check(lambda x: lax.convert_element_type(x, bool), (bf,), [True, True, False, False, True])
    _check(lambda x: jnp.logical_and(x, True), (bf,), [True, True, False, False, True])
    _check(lambda x: jnp.logical_xor(x, False), (bf,), [True, True, False, False, True])
    _check(lambda x: jnp.logical_and(x, True), (f32,), [False, False, False, True])
    f16 = jnp.asarray(np.array([1e-7, -1e-7, 0.0], np.float16))
    _check(lambda x: x.astype(bool), (f16,), [True, True, False])


def test_denormal_arithmetic_flushes_and_bit_moves_keep():
    x = jnp.asarray(np.array([1e-40, -1e-40, 1.0], np.float32))
    one = jnp.asarray(np.full(3, 1.5, np.float32))
    _check(lambda x, y: x * y, (x, one), np.array([0.0, -0.0, 1.5], np.float32))
    _check(lambda x: x == 0, (x,), [True, True, False])
    _check(lambda x: jnp.abs(x), (x,), np.abs(np.asarray(x)))
    _check(lambda x: -x, (x,), -np.asarray(x))
    _check(lambda x: x.astype(jnp.bfloat16), (x,),
           np.array([9.183549615799121e-41, -9.183549615799121e-41, 1.0], np.float32).astype(BF16))
    b = jnp.asarray(np.array([1e-39, -1e-39, 1.0], np.float32).astype(BF16))
    _check(lambda x: x.astype(jnp.float32), (b,), np.asarray(b).astype(np.float32))


def test_flatnonzero_of_a_bfloat16_denormal_is_the_same_eagerly_and_jitted():
    # The comparison with zero reads the denormal as zero (JAX's eager answer) on every path.
    x = jnp.asarray(np.array([-8.5e37, -2.76e-40, np.nan, -0.5], np.float32).astype(BF16))
    np.testing.assert_array_equal(jnp.flatnonzero(x, size=3, fill_value=-1), [0, 2, 3])
    np.testing.assert_array_equal(
        jax.jit(lambda x: jnp.flatnonzero(x, size=3, fill_value=-1))(x), [0, 2, 3])
    np.testing.assert_array_equal(jnp.flatnonzero(x), [0, 2, 3])


@pytest.mark.parametrize("values", [[-0.0, 0.0], [0.0, -0.0]])
def test_max_and_min_order_signed_zeros(values):
    x = jnp.asarray(np.array(values * 40, np.float32))
    _check(jnp.max, (x,), np.float32(0.0))
    _check(jnp.min, (x,), np.float32(-0.0))
    _check(lambda x: jnp.max(x * 1), (x,), np.float32(0.0))
    _check(lambda x: lax.cummax(x)[-1], (x,), np.float32(0.0))
    _check(lambda x: lax.cummin(x)[-1], (x,), np.float32(-0.0))


def test_max_nan_wins_for_reals_but_not_for_complex():
    x = jnp.asarray([1.0, np.nan, 3.0])
    _check(jnp.max, (x,), np.float32(np.nan))
    a = jnp.asarray([1 + 1j, complex(np.nan, 0)])
    b = jnp.asarray([1 + 2j, 1j])
    _check(lax.max, (a, b), np.array([1 + 2j, 1j], np.complex64))
    c = jnp.asarray([complex(np.nan, 0), 1j, 2 + 0j])
    _check(lambda c: lax.reduce_max(c, (0,)), (c,), np.complex64(2 + 0j))
    _check(lambda c: lax.reduce_min(c, (0,)), (c,), np.complex64(1j))
