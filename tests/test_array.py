"""tinyxla.Array: repr/str, operators, conversions, protocols and errors, against jax 0.10.2.

Expected strings and result dtypes were produced by jax 0.10.2 and are pinned here.
"""
import copy
import operator
import pickle

import ml_dtypes
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla._src import core

bf16 = np.dtype(ml_dtypes.bfloat16)


def put(x, dtype=None):
    """An Array of a numpy value (strong) or a Python scalar (weak), as jax.device_put makes."""
    return jax.device_put(x if dtype is None else np.asarray(x, dtype))


# (numpy source, dtype or None for a Python scalar, repr, str) from jax 0.10.2.
REPR_CASES = [
    ('[1., 2.]', 'float32', 'Array([1., 2.], dtype=float32)', '[1. 2.]'),
    ('2', None, 'Array(2, dtype=int32, weak_type=True)', '2'),
    ('2.5', None, 'Array(2.5, dtype=float32, weak_type=True)', '2.5'),
    ('True', None, 'Array(True, dtype=bool)', 'True'),
    ('[True, False]', 'bool', 'Array([ True, False], dtype=bool)', '[ True False]'),
    ('np.arange(12.).reshape(3, 4)', 'float32',
     'Array([[ 0.,  1.,  2.,  3.],\n       [ 4.,  5.,  6.,  7.],\n       [ 8.,  9., 10., 11.]], '
     'dtype=float32)', '[[ 0.  1.  2.  3.]\n [ 4.  5.  6.  7.]\n [ 8.  9. 10. 11.]]'),
    ('np.arange(24).reshape(2, 3, 4)', 'int32',
     'Array([[[ 0,  1,  2,  3],\n        [ 4,  5,  6,  7],\n        [ 8,  9, 10, 11]],\n\n'
     '       [[12, 13, 14, 15],\n        [16, 17, 18, 19],\n        [20, 21, 22, 23]]], '
     'dtype=int32)',
     '[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n'
     '  [20 21 22 23]]]'),
    ('np.zeros((0,))', 'float32', 'Array([], shape=(0,), dtype=float32)', '[]'),
    ('np.zeros((2, 0))', 'float32', 'Array([], shape=(2, 0), dtype=float32)', '[]'),
    ('np.zeros((0, 3))', 'int8', 'Array([], shape=(0, 3), dtype=int8)', '[]'),
    ('[1.5, 2.25]', 'bfloat16', 'Array([1.5, 2.25], dtype=bfloat16)', '[1.5 2.25]'),
    ('[1, 2]', 'bfloat16', 'Array([1, 2], dtype=bfloat16)', '[1 2]'),
    ('[1+2j, 3-4j]', 'complex64', 'Array([1.+2.j, 3.-4.j], dtype=complex64)', '[1.+2.j 3.-4.j]'),
    ('1+2j', None, 'Array(1.+2.j, dtype=complex64, weak_type=True)', '(1+2j)'),
    ('np.arange(100.)', 'float32',
     'Array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12.,\n'
     '       13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25.,\n'
     '       26., 27., 28., 29., 30., 31., 32., 33., 34., 35., 36., 37., 38.,\n'
     '       39., 40., 41., 42., 43., 44., 45., 46., 47., 48., 49., 50., 51.,\n'
     '       52., 53., 54., 55., 56., 57., 58., 59., 60., 61., 62., 63., 64.,\n'
     '       65., 66., 67., 68., 69., 70., 71., 72., 73., 74., 75., 76., 77.,\n'
     '       78., 79., 80., 81., 82., 83., 84., 85., 86., 87., 88., 89., 90.,\n'
     '       91., 92., 93., 94., 95., 96., 97., 98., 99.], dtype=float32)',
     '[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n'
     ' 18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29. 30. 31. 32. 33. 34. 35.\n'
     ' 36. 37. 38. 39. 40. 41. 42. 43. 44. 45. 46. 47. 48. 49. 50. 51. 52. 53.\n'
     ' 54. 55. 56. 57. 58. 59. 60. 61. 62. 63. 64. 65. 66. 67. 68. 69. 70. 71.\n'
     ' 72. 73. 74. 75. 76. 77. 78. 79. 80. 81. 82. 83. 84. 85. 86. 87. 88. 89.\n'
     ' 90. 91. 92. 93. 94. 95. 96. 97. 98. 99.]'),
    ('[1e10, 1e-10]', 'float32', 'Array([1.e+10, 1.e-10], dtype=float32)', '[1.e+10 1.e-10]'),
    ('[np.nan, np.inf, -np.inf]', 'float32', 'Array([ nan,  inf, -inf], dtype=float32)',
     '[ nan  inf -inf]'),
    ('[1, 2]', 'uint8', 'Array([1, 2], dtype=uint8)', '[1 2]'),
    ('[-1, 2]', 'int8', 'Array([-1,  2], dtype=int8)', '[-1  2]'),
    ('[1., 2.]', 'float16', 'Array([1., 2.], dtype=float16)', '[1. 2.]'),
    ('[[1e6, 2.], [3., 4.]]', 'float32',
     'Array([[1.e+06, 2.e+00],\n       [3.e+00, 4.e+00]], dtype=float32)',
     '[[1.e+06 2.e+00]\n [3.e+00 4.e+00]]'),
    ('np.arange(20.).reshape(2, 10) * 1000.125', 'float32',
     'Array([[    0.   ,  1000.125,  2000.25 ,  3000.375,  4000.5  ,  5000.625,\n'
     '         6000.75 ,  7000.875,  8001.   ,  9001.125],\n'
     '       [10001.25 , 11001.375, 12001.5  , 13001.625, 14001.75 , 15001.875,\n'
     '        16002.   , 17002.125, 18002.25 , 19002.375]], dtype=float32)',
     '[[    0.     1000.125  2000.25   3000.375  4000.5    5000.625  6000.75\n'
     '   7000.875  8001.     9001.125]\n'
     ' [10001.25  11001.375 12001.5   13001.625 14001.75  15001.875 16002.\n'
     '  17002.125 18002.25  19002.375]]'),
    ('[123456789, 2]', 'int32', 'Array([123456789,         2], dtype=int32)',
     '[123456789         2]'),
    ('np.ones((2, 2, 2))', 'bool',
     'Array([[[ True,  True],\n        [ True,  True]],\n\n       [[ True,  True],\n'
     '        [ True,  True]]], dtype=bool)',
     '[[[ True  True]\n  [ True  True]]\n\n [[ True  True]\n  [ True  True]]]'),
    ('3', 'uint32', 'Array(3, dtype=uint32)', '3'),
    ('[0.5, 0.25, 0.125]', 'float32', 'Array([0.5  , 0.25 , 0.125], dtype=float32)',
     '[0.5   0.25  0.125]'),
    ('np.linspace(0, 1, 17)', 'float32',
     'Array([0.    , 0.0625, 0.125 , 0.1875, 0.25  , 0.3125, 0.375 , 0.4375,\n'
     '       0.5   , 0.5625, 0.625 , 0.6875, 0.75  , 0.8125, 0.875 , 0.9375,\n'
     '       1.    ], dtype=float32)',
     '[0.     0.0625 0.125  0.1875 0.25   0.3125 0.375  0.4375 0.5    0.5625\n'
     ' 0.625  0.6875 0.75   0.8125 0.875  0.9375 1.    ]'),
    ('[1j, 2j, 3j]', 'complex64', 'Array([0.+1.j, 0.+2.j, 0.+3.j], dtype=complex64)',
     '[0.+1.j 0.+2.j 0.+3.j]'),
    ('np.arange(40).reshape(4, 10) * 1001', 'int32',
     'Array([[    0,  1001,  2002,  3003,  4004,  5005,  6006,  7007,  8008,\n'
     '         9009],\n'
     '       [10010, 11011, 12012, 13013, 14014, 15015, 16016, 17017, 18018,\n'
     '        19019],\n'
     '       [20020, 21021, 22022, 23023, 24024, 25025, 26026, 27027, 28028,\n'
     '        29029],\n'
     '       [30030, 31031, 32032, 33033, 34034, 35035, 36036, 37037, 38038,\n'
     '        39039]], dtype=int32)',
     '[[    0  1001  2002  3003  4004  5005  6006  7007  8008  9009]\n'
     ' [10010 11011 12012 13013 14014 15015 16016 17017 18018 19019]\n'
     ' [20020 21021 22022 23023 24024 25025 26026 27027 28028 29029]\n'
     ' [30030 31031 32032 33033 34034 35035 36036 37037 38038 39039]]'),
    ('np.arange(8.).reshape(2, 2, 2) - 3', 'float16',
     'Array([[[-3., -2.],\n        [-1.,  0.]],\n\n       [[ 1.,  2.],\n        [ 3.,  4.]]], '
     'dtype=float16)',
     '[[[-3. -2.]\n  [-1.  0.]]\n\n [[ 1.  2.]\n  [ 3.  4.]]]'),
]


@pytest.mark.parametrize("src,dtype,expected_repr,expected_str", REPR_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in REPR_CASES])
def test_repr_and_str(src, dtype, expected_repr, expected_str):
    value = eval(src)
    x = put(value) if dtype is None else put(value, np.dtype(dtype) if dtype != "bfloat16" else bf16)
    assert repr(x) == expected_repr
    assert str(x) == expected_str


def test_repr_of_views_and_results():
    m = put(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert repr(m.T) == 'Array([[0., 3.],\n       [1., 4.],\n       [2., 5.]], dtype=float32)'
    assert repr(m[1]) == 'Array([3., 4., 5.], dtype=float32)'
    assert repr(jnp.arange(5.) + 1.0) == 'Array([1., 2., 3., 4., 5.], dtype=float32)'


def test_format():
    s = put(2.5)
    assert format(s, ".2f") == "2.50"
    assert f"{put(np.int32(7)):d}" == "7"
    x = put(np.ones(3, np.float32))
    assert format(x) == "[1. 1. 1.]"
    with pytest.raises(TypeError, match="unsupported format string passed to numpy.ndarray.__format__"):
        f"{x:.2f}"


def test_metadata():
    x = put(np.ones((2, 3), np.float32))
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6
    assert x.dtype == np.float32 and isinstance(x.dtype, np.dtype)
    assert x.nbytes == 24 and x.itemsize == 4
    assert x.weak_type is False and put(1.0).weak_type is True
    assert put(np.ones(2, bf16)).dtype == bf16
    assert repr(x.aval).endswith("[2,3])")
    assert x.is_fully_addressable and x.is_fully_replicated
    assert type(x).__name__ == "ArrayImpl"
    assert isinstance(x, jax.Array) and not isinstance(1.0, jax.Array)
    assert not isinstance(np.ones(2), jax.Array)


def test_devices_and_sharding():
    x = put(np.ones(3, np.float32))
    assert x.device == jax.devices()[0]
    assert x.devices() == {jax.devices()[0]}
    assert repr(x.sharding) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    assert x.sharding == put(np.ones(2)).sharding
    assert not x.committed
    assert jax.device_put(x, jax.devices()[0]).committed
    assert x.addressable_data(0) is x
    assert x.to_device(jax.devices()[0]).committed


# ----------------------------------------------------------------------------------------
# Operators with Python scalars on either side: result dtypes (jax 0.10.2) and values.

OPS = ('add', 'sub', 'mul', 'truediv', 'floordiv', 'mod', 'pow', 'and_', 'or_', 'xor',
       'lshift', 'rshift', 'eq', 'ne', 'lt', 'le', 'gt', 'ge')
# (array dtype, scalar, side of the scalar) -> per op: result dtype, "w" if weak, E = TypeError.
OPERATOR_RESULTS = {
    ('float32', 2, 'r'): 'f32 f32 f32 f32 f32 f32 f32 E E E E E bool bool bool bool bool bool',
    ('float32', 2, 'l'): 'f32 f32 f32 f32 f32 f32 f32 E E E E E bool bool bool bool bool bool',
    ('float32', 2.5, 'r'): 'f32 f32 f32 f32 f32 f32 f32 E E E E E bool bool bool bool bool bool',
    ('float32', 2.5, 'l'): 'f32 f32 f32 f32 f32 f32 f32 E E E E E bool bool bool bool bool bool',
    ('float32', True, 'r'): 'f32 f32 f32 f32 f32 f32 f32 E E E E E bool bool bool bool bool bool',
    ('float32', True, 'l'): 'f32 f32 f32 f32 f32 f32 f32 E E E E E bool bool bool bool bool bool',
    ('int32', 2, 'r'): 'i32 i32 i32 f32 i32 i32 i32 i32 i32 i32 i32 i32 bool bool bool bool bool bool',
    ('int32', 2, 'l'): 'i32 i32 i32 f32 i32 i32 i32 i32 i32 i32 i32 i32 bool bool bool bool bool bool',
    ('int32', 2.5, 'r'): 'f32w f32w f32w f32w f32w f32w f32w E E E E E boolw boolw boolw boolw boolw boolw',
    ('int32', 2.5, 'l'): 'f32w f32w f32w f32w f32w f32w f32 E E E E E boolw boolw boolw boolw boolw boolw',
    ('int32', True, 'r'): 'i32 i32 i32 f32 i32 i32 i32 i32 i32 i32 i32 i32 bool bool bool bool bool bool',
    ('int32', True, 'l'): 'i32 i32 i32 f32 i32 i32 i32 i32 i32 i32 i32 i32 bool bool bool bool bool bool',
    ('uint8', 2, 'r'): 'u8 u8 u8 f32 u8 u8 u8 u8 u8 u8 u8 u8 bool bool bool bool bool bool',
    ('uint8', 2, 'l'): 'u8 u8 u8 f32 u8 u8 u8 u8 u8 u8 u8 u8 bool bool bool bool bool bool',
    ('uint8', 2.5, 'r'): 'f32w f32w f32w f32w f32w f32w f32w E E E E E boolw boolw boolw boolw boolw boolw',
    ('uint8', 2.5, 'l'): 'f32w f32w f32w f32w f32w f32w f32 E E E E E boolw boolw boolw boolw boolw boolw',
    ('uint8', True, 'r'): 'u8 u8 u8 f32 u8 u8 u8 u8 u8 u8 u8 u8 bool bool bool bool bool bool',
    ('uint8', True, 'l'): 'u8 u8 u8 f32 u8 u8 u8 u8 u8 u8 u8 u8 bool bool bool bool bool bool',
    ('bfloat16', 2, 'r'): 'bf16 bf16 bf16 bf16 bf16 bf16 bf16 E E E E E bool bool bool bool bool bool',
    ('bfloat16', 2, 'l'): 'bf16 bf16 bf16 bf16 bf16 bf16 bf16 E E E E E bool bool bool bool bool bool',
    ('bfloat16', 2.5, 'r'): 'bf16 bf16 bf16 bf16 bf16 bf16 bf16 E E E E E bool bool bool bool bool bool',
    ('bfloat16', 2.5, 'l'): 'bf16 bf16 bf16 bf16 bf16 bf16 bf16 E E E E E bool bool bool bool bool bool',
    ('bfloat16', True, 'r'): 'bf16 bf16 bf16 bf16 bf16 bf16 bf16 E E E E E bool bool bool bool bool bool',
    ('bfloat16', True, 'l'): 'bf16 bf16 bf16 bf16 bf16 bf16 bf16 E E E E E bool bool bool bool bool bool',
    ('bool', 2, 'r'): 'i32w i32w i32w f32w i32w i32w i32 i32w i32w i32w i32w i32w boolw boolw boolw boolw boolw boolw',
    ('bool', 2, 'l'): 'i32w i32w i32w f32w i32w i32w i32 i32w i32w i32w i32w i32w boolw boolw boolw boolw boolw boolw',
    ('bool', 2.5, 'r'): 'f32w f32w f32w f32w f32w f32w f32w E E E E E boolw boolw boolw boolw boolw boolw',
    ('bool', 2.5, 'l'): 'f32w f32w f32w f32w f32w f32w f32w E E E E E boolw boolw boolw boolw boolw boolw',
    ('bool', True, 'r'): 'bool E bool f32 i32 i32 i32 bool bool bool i32 i32 bool bool bool bool bool bool',
    ('bool', True, 'l'): 'bool E bool f32 i32 i32 i32 bool bool bool i32 i32 bool bool bool bool bool bool',
}
_SHORT = {'f32': 'float32', 'i32': 'int32', 'u8': 'uint8', 'bf16': 'bfloat16', 'bool': 'bool'}
_VALUES = {'float32': [1.5, -2.0, 3.0], 'int32': [1, 2, 3], 'uint8': [1, 2, 3],
           'bfloat16': [1.5, -2.0, 3.0], 'bool': [True, False, True]}


@pytest.mark.parametrize("key", list(OPERATOR_RESULTS), ids=str)
def test_operators_with_python_scalars(key):
    dtype_name, scalar, side = key
    dtype = bf16 if dtype_name == 'bfloat16' else np.dtype(dtype_name)
    a = np.array(_VALUES[dtype_name], dtype)
    x = put(a)
    for op, spec in zip(OPS, OPERATOR_RESULTS[key].split()):
        f = getattr(operator, op)
        call = (lambda: f(x, scalar)) if side == 'r' else (lambda: f(scalar, x))
        if spec == 'E':
            with pytest.raises(TypeError):
                call()
            continue
        out = call()
        assert out.dtype == (bf16 if spec.rstrip('w') == 'bf16' else np.dtype(_SHORT[spec.rstrip('w')])), \
            (op, key)
        assert out.weak_type == spec.endswith('w'), (op, key)
        # Values: numpy on the same operands, computed wide and cast to the result dtype.
        floating = out.dtype == bf16 or out.dtype.kind == 'f'
        wide = a.astype(np.float64) if floating or dtype == bf16 or dtype.kind == 'f' else \
            a.astype(np.int64) if out.dtype.kind in 'iu' else a
        with np.errstate(all='ignore'):
            expected = f(wide, scalar) if side == 'r' else f(scalar, wide)
        got = np.asarray(out)
        # Integer division by zero is implementation-defined (XLA and numpy differ).
        valid = np.ones(a.shape, bool) if floating or op not in ('floordiv', 'mod') or \
            side == 'r' else a != 0
        if floating:
            np.testing.assert_allclose(got.astype(np.float64)[valid], expected[valid],
                                       rtol=1e-2 if bf16 in (out.dtype, dtype) else 1e-6)
        else:
            np.testing.assert_array_equal(got[valid], np.asarray(expected).astype(out.dtype)[valid])


def test_array_array_operators():
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    b = np.array([2., 4., 8.], np.float32)
    x, y = put(a), put(b)
    for op in ('add', 'sub', 'mul', 'truediv', 'floordiv', 'mod', 'pow', 'eq', 'lt', 'ge'):
        f = getattr(operator, op)
        np.testing.assert_allclose(np.asarray(f(x, y)), f(a, b), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(x @ y), a @ b, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(y @ x.T), b @ a.T, rtol=1e-6)
    q, r = divmod(x, y)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)
    np.testing.assert_array_equal(-x, -a)
    np.testing.assert_array_equal(+x, a)
    np.testing.assert_array_equal(abs(-x), a)
    i = put(np.array([1, 2], np.int32))
    np.testing.assert_array_equal(~i, [-2, -3])
    np.testing.assert_array_equal(~put(np.array([True, False])), [False, True])
    np.testing.assert_array_equal(i & put(np.int32(3)), [1, 2])
    np.testing.assert_array_equal(2 << i, [4, 8])


def test_numpy_operands():
    v = put(np.array([1., 2., 3.], np.float32))
    out = np.ones(3) + v  # numpy defers to the Array (its __array_priority__)
    assert isinstance(out, jax.Array) and out.dtype == np.float32
    assert isinstance(np.float32(2) * v, jax.Array)
    assert isinstance(v * np.float32(2), jax.Array)
    out = np.int8(1) + put(np.int32(3))
    assert out.dtype == np.int32


def test_operator_type_errors():
    x = put(np.ones(3, np.float32))
    cases = [
        (lambda: x + [1], "unsupported operand type(s) for +: 'ArrayImpl' and 'list'"),
        (lambda: [1] + x, "unsupported operand type(s) for +: 'list' and 'ArrayImpl'"),
        (lambda: x * (1,), "unsupported operand type(s) for *: 'ArrayImpl' and 'tuple'"),
        (lambda: x == [1], "unsupported operand type(s) for ==: 'ArrayImpl' and 'list'"),
        (lambda: x != {}, "unsupported operand type(s) for ==: 'ArrayImpl' and 'dict'"),
        (lambda: x - [1], "unsupported operand type(s) for -: 'ArrayImpl' and 'list'"),
        (lambda: x + "a", "unsupported operand type(s) for +: 'ArrayImpl' and 'str'"),
        (lambda: hash(x), "unhashable type: 'ArrayImpl'"),
    ]
    for fn, msg in cases:
        with pytest.raises(TypeError) as info:
            fn()
        assert str(info.value) == msg
    assert (x == None) is False and (x != None) is True  # noqa: E711


def test_setitem_error():
    x = put(np.ones(3, np.float32))
    with pytest.raises(TypeError) as info:
        x[0] = 1
    assert str(info.value) == (
        "JAX arrays are immutable and do not support in-place item assignment. Instead of "
        "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


# ----------------------------------------------------------------------------------------
# Conversions.

def test_python_conversions():
    s = put(np.float32(2.5))
    assert float(s) == 2.5 and int(s) == 2 and complex(s) == 2.5 + 0j and bool(s)
    assert isinstance(s.item(), float) and s.item() == 2.5
    i = put(np.int32(3))
    assert operator.index(i) == 3 and range(10)[i] == 3 and hex(i) == "0x3"
    assert put(np.ones(1, np.float32)).__bool__() is True
    x = put(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and x.item(4) == 4
    assert put(np.array([1.5, 2], bf16)).tolist() == [1.5, 2.0]
    errors = [
        (lambda: float(x), TypeError,
         "Only scalar arrays can be converted to Python scalars; got arr.ndim=2"),
        (lambda: int(x), TypeError,
         "Only scalar arrays can be converted to Python scalars; got arr.ndim=2"),
        (lambda: operator.index(s), TypeError,
         "Only integer scalar arrays can be converted to a scalar index."),
        (lambda: operator.index(put(True)), TypeError,
         "Only integer scalar arrays can be converted to a scalar index."),
        (lambda: bool(x), ValueError,
         "The truth value of an array with more than one element is ambiguous. Use a.any() or "
         "a.all()"),
        (lambda: bool(put(np.zeros(0))), ValueError,
         "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an "
         "array is not empty."),
        (lambda: x.item(), ValueError, "can only convert an array of size 1 to a Python scalar"),
    ]
    for fn, exc, msg in errors:
        with pytest.raises(exc) as info:
            fn()
        assert str(info.value) == msg


def test_numpy_conversion():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = put(a)
    view = np.asarray(x)
    np.testing.assert_array_equal(view, a)
    assert not view.flags.writeable  # a zero-copy view of an immutable buffer, as in JAX
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    copied = np.array(x)
    assert copied.flags.writeable
    np.testing.assert_array_equal(x.__array__(copy=False), a)
    np.testing.assert_array_equal(np.asarray(x.T), a.T)  # strided views convert too
    assert np.asarray(put(np.ones(2, bf16))).dtype == bf16
    assert x.tobytes() == a.tobytes()


def test_dlpack():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = put(a)
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    np.testing.assert_array_equal(np.from_dlpack(x.T), a.T)
    np.testing.assert_array_equal(np.from_dlpack(put(np.array([1, 2], np.int8))), [1, 2])


def test_dlpack_torch():
    torch = pytest.importorskip("torch")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_dlpack(put(a))
    assert t.dtype == torch.float32
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(torch.from_dlpack(put(a).T).numpy(), a.T)
    assert torch.from_dlpack(put(np.array([1.5], bf16))).dtype == torch.bfloat16


def test_pickle_and_copy():
    x = put(np.arange(3, dtype=np.float32))
    for y in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x), x.copy()):
        assert isinstance(y, jax.Array) and y.dtype == np.float32
        np.testing.assert_array_equal(y, [0, 1, 2])
    assert pickle.loads(pickle.dumps(put(2.5))).weak_type


# ----------------------------------------------------------------------------------------
# len, iteration, indexing.

def test_len_and_iteration():
    x = put(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert len(x) == 2
    rows = list(x)
    assert len(rows) == 2 and all(isinstance(r, jax.Array) for r in rows)
    np.testing.assert_array_equal(rows[1], [3, 4, 5])
    assert [int(v) for v in put(np.arange(3, dtype=np.int32))] == [0, 1, 2]
    assert list(put(2.5).reshape(1))[0].weak_type
    s = put(np.float32(1))
    with pytest.raises(TypeError, match="^len\\(\\) of unsized object$"):
        len(s)
    with pytest.raises(TypeError, match="^iteration over a 0-d array$"):
        iter(s)
    assert 3 in put(np.arange(4)) and 7 not in put(np.arange(4))


def test_getitem():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = put(a)
    np.testing.assert_array_equal(x[1], a[1])
    np.testing.assert_array_equal(x[:, 2], a[:, 2])
    np.testing.assert_array_equal(x[1:, ::2], a[1:, ::2])


# ----------------------------------------------------------------------------------------
# Methods and properties delegate to tinyxla.numpy.

def test_methods():
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    x = put(a)
    np.testing.assert_array_equal(x.T, a.T)
    np.testing.assert_array_equal(x.mT, a.T)
    np.testing.assert_array_equal(x.reshape(3, 2), a.reshape(3, 2))
    np.testing.assert_array_equal(x.reshape((3, 2)), a.reshape(3, 2))
    np.testing.assert_array_equal(x.reshape(-1), a.reshape(-1))
    np.testing.assert_array_equal(x.ravel(), a.ravel())
    np.testing.assert_array_equal(x.flatten(), a.flatten())
    np.testing.assert_array_equal(x.transpose(), a.T)
    np.testing.assert_array_equal(x.transpose(1, 0), a.T)
    np.testing.assert_array_equal(x.transpose((1, 0)), a.T)
    np.testing.assert_array_equal(x.swapaxes(0, 1), a.T)
    np.testing.assert_array_equal(x[None].squeeze(), a)
    assert x.astype(np.int32).dtype == np.int32
    np.testing.assert_allclose(x.sum(), a.sum())
    np.testing.assert_allclose(x.sum(axis=0), a.sum(0))
    assert x.sum(0, keepdims=True).shape == (1, 3)
    np.testing.assert_allclose(x.prod(), a.prod())
    np.testing.assert_allclose(x.mean(), a.mean(), rtol=1e-6)
    np.testing.assert_allclose(x.var(), a.var(), rtol=1e-6)
    np.testing.assert_allclose(x.std(), a.std(), rtol=1e-6)
    assert float(x.max()) == 6 and float(x.min()) == 1
    np.testing.assert_array_equal(x.min(axis=1), [1, 4])
    assert int(x.argmax()) == 5 and int(x.argmin()) == 0
    np.testing.assert_array_equal(x.argmin(axis=0), [0, 0, 0])
    b = put(np.array([True, False]))
    assert not bool(b.all()) and bool(b.any())
    np.testing.assert_allclose(x.dot(put(np.ones(3, np.float32))), a.sum(1))
    c = put(np.array([1 + 2j], np.complex64))
    np.testing.assert_array_equal(c.real, [1])
    np.testing.assert_array_equal(c.imag, [2])
    np.testing.assert_array_equal(c.conj(), [1 - 2j])
    assert round(put(np.float32(2.6))) == 3
    with pytest.raises(NotImplementedError, match="arr.flat"):
        x.flat


def test_tracer_has_array_methods():
    # The same operators and methods serve traced values.
    for name in ("__add__", "__radd__", "__getitem__", "reshape", "sum", "T", "astype"):
        assert hasattr(core.Tracer, name)
    assert issubclass(core.Tracer, jax.Array)


# ----------------------------------------------------------------------------------------
# Waiting and deletion.

def test_block_until_ready_and_is_ready():
    x = put(np.ones(3, np.float32)) + 1
    assert x.block_until_ready() is x
    assert x.is_ready()


def test_delete():
    x = put(np.ones((2, 3), np.float32))
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted()
    assert x.shape == (2, 3) and x.dtype == np.float32 and x.ndim == 2 and x.size == 6
    msg = "Array has been deleted with shape=float32[2,3]."
    for fn in (lambda: x + 1, lambda: repr(x), lambda: np.asarray(x), lambda: x.sum(),
               lambda: x.block_until_ready(), lambda: jax.lax.neg(x)):
        with pytest.raises(RuntimeError) as info:
            fn()
        assert str(info.value) == msg
    x.delete()  # deleting twice is fine


def test_no_public_constructor():
    with pytest.raises(TypeError):
        jax.Array()


def test_no_tracer_field_shadows_an_array_method():
    """A tracer's own fields must not hide Array methods: `x.var(...)` under jit once
    called the staging tracer's jaxpr variable (TypeError: 'Var' object is not callable)."""
    from tinyxla._src import core
    from tinyxla._src.array import Array

    def subclasses(c):
        for s in c.__subclasses__():
            yield s
            yield from subclasses(s)

    public = {n for n in dir(Array) if not n.startswith("_")}
    for cls in subclasses(core.Tracer):
        fields = {f for k in cls.__mro__ for f in getattr(k, "__slots__", ())}
        assert not fields & public, (cls.__name__, sorted(fields & public))
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda a: a.var(1))(a)), a.var(1))
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(lambda a: a.var()))(a)), a.var(1))
    np.testing.assert_allclose(np.asarray(jax.grad(lambda a: a.var())(a)),
                               2 * (a - a.mean()) / a.size, rtol=1e-6)
