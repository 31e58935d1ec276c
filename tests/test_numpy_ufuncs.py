"""Elementwise jnp functions against numpy: values on many shapes and dtypes.

Each function runs on random inputs (in its domain) of the dtypes bool, int8, int32,
uint8, uint32, float16, bfloat16, float32 and complex64, on the shapes (), (0,), (4,),
(3, 4), (2, 3, 4) and on broadcasting pairs. The numpy reference computes in float64
(complex128) on the inputs promoted as JAX promotes them, and the result must match
within JAX's tolerance for the result dtype; integer and bool results match exactly.
Result dtypes and errors are checked against JAX in test_numpy_oracle.py.
"""
from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import tinyxla.numpy as jnp

DTYPES = ["bool", "int8", "int32", "uint8", "uint32", "float16", "bfloat16", "float32",
          "complex64"]
SHAPES = [(), (0,), (4,), (3, 4), (2, 3, 4)]
PAIRS = [((), ()), ((4,), (4,)), ((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)),
         ((), (3, 4)), ((2, 3, 4), (4,)), ((0,), (0,)), ((0, 3), (1, 3))]

# Relative (and absolute) tolerance by result dtype; "transcendental" functions get the
# looser float32 value JAX's own tests use.
_TOL = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 1e-6, "complex64": 1e-6}
_TOL_TRANSCENDENTAL = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 1e-5, "complex64": 2e-5}

_FLOATS = {"float16", "bfloat16", "float32"}
_INTS = {"int8", "int32", "uint8", "uint32"}
_REAL = {"bool"} | _INTS | _FLOATS


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def rand(shape, dtype: str, domain: str, rng: np.random.Generator) -> np.ndarray:
    """Random values of ``dtype`` in ``domain`` (numpy array; bfloat16 via ml_dtypes)."""
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) < 0.5) | (domain in ("nonzero", "positive", "ge1"))
    if dt.kind in "iu":
        lo, hi = {"default": (-5, 6), "positive": (1, 8), "nonzero": (-5, 6),
                  "unit": (-1, 2), "ge1": (1, 5), "small": (0, 6)}[domain]
        if dt.kind == "u":
            lo = max(lo, 0 if domain not in ("positive", "ge1") else 1)
        x = np.asarray(rng.integers(lo, hi, size=shape)).astype(dt)
        if domain == "nonzero":
            x[x == 0] = 1
        return x

    def real():
        if domain == "positive":
            return rng.uniform(0.1, 5.0, size=shape)
        if domain == "unit":
            return rng.uniform(-0.9, 0.9, size=shape)
        if domain == "ge1":
            return rng.uniform(1.0, 5.0, size=shape)
        if domain == "small":
            return rng.uniform(0.0, 3.0, size=shape)
        x = np.asarray(rng.standard_normal(shape) * 3)
        if domain == "nonzero":
            x[np.abs(x) < 0.1] = 1.0
        return x
    if dt.kind == "c":
        return (real() + 1j * real()).astype(dt)
    return real().astype(dt)


def _compute_dtype(dt: np.dtype) -> np.dtype:
    if dt.kind == "c":
        return np.dtype(np.complex128)
    if dt.kind == "f" or dt == np.dtype(ml_dtypes.bfloat16):
        return np.dtype(np.float64)
    return dt


def _check(got, want: np.ndarray, tol: dict[str, float]) -> None:
    got_np = np.asarray(got)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    name = np.dtype(got.dtype).name
    if name in tol:
        t = tol[name]
        np.testing.assert_allclose(got_np.astype(_compute_dtype(got_np.dtype)), want,
                                   rtol=t, atol=t, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want.astype(got_np.dtype))


# ---------------------------------------------------------------------------------------
# Unary functions: name -> (numpy reference, promotion, domain, excluded input dtypes,
# transcendental?). Promotion "inexact" computes in float; "same" keeps the dtype.

_NO_COMPLEX = {"complex64"}
_ONLY_INT = {"float16", "bfloat16", "float32", "complex64"}
UNARY = {
    "exp": (np.exp, "inexact", "default", set(), True),
    "exp2": (np.exp2, "inexact", "default", set(), True),
    "log": (np.log, "inexact", "positive", set(), True),
    "log2": (np.log2, "inexact", "positive", set(), True),
    "log10": (np.log10, "inexact", "positive", set(), True),
    "log1p": (np.log1p, "inexact", "positive", set(), True),
    "expm1": (np.expm1, "inexact", "default", set(), True),
    "tanh": (np.tanh, "inexact", "default", set(), True),
    "sin": (np.sin, "inexact", "default", set(), True),
    "cos": (np.cos, "inexact", "default", set(), True),
    "tan": (np.tan, "inexact", "unit", set(), True),
    "arcsin": (np.arcsin, "inexact", "unit", set(), True),
    "arccos": (np.arccos, "inexact", "unit", set(), True),
    "arctan": (np.arctan, "inexact", "default", set(), True),
    "sinh": (np.sinh, "inexact", "unit", set(), True),
    "cosh": (np.cosh, "inexact", "unit", set(), True),
    "arcsinh": (np.arcsinh, "inexact", "default", set(), True),
    "arccosh": (np.arccosh, "inexact", "ge1", set(), True),
    "arctanh": (np.arctanh, "inexact", "unit", set(), True),
    "sqrt": (np.sqrt, "inexact", "positive", set(), True),
    "cbrt": (np.cbrt, "inexact", "default", _NO_COMPLEX, True),
    "square": (np.square, "numeric", "default", set(), False),
    "reciprocal": (np.reciprocal, "inexact", "nonzero", set(), False),
    "sign": (np.sign, "same", "default", {"bool"}, False),
    "abs": (np.abs, "same", "default", set(), False),
    "absolute": (np.abs, "same", "default", set(), False),
    "negative": (np.negative, "same", "default", {"bool"}, False),
    "positive": (lambda x: x, "same", "default", set(), False),
    "floor": (np.floor, "same", "default", _NO_COMPLEX, False),
    "ceil": (np.ceil, "same", "default", _NO_COMPLEX, False),
    "round": (np.round, "same", "default", {"bool"}, False),  # an error in JAX
    "around": (np.round, "same", "default", {"bool"}, False),
    "rint": (np.rint, "rint", "default", set(), False),
    "trunc": (np.trunc, "same", "default", _NO_COMPLEX, False),
    "isnan": (np.isnan, "same", "default", set(), False),
    "isinf": (np.isinf, "same", "default", set(), False),
    "isfinite": (np.isfinite, "same", "default", set(), False),
    "signbit": (np.signbit, "same", "default", _NO_COMPLEX, False),
    "logical_not": (np.logical_not, "same", "default", set(), False),
    "bitwise_not": (np.bitwise_not, "same", "default", _ONLY_INT, False),
    "invert": (np.invert, "same", "default", _ONLY_INT, False),
    "conj": (np.conj, "same", "default", set(), False),
    "conjugate": (np.conjugate, "same", "default", set(), False),
    "real": (np.real, "same", "default", set(), False),
    "imag": (np.imag, "same", "default", set(), False),
    "angle": (np.angle, "inexact", "default", set(), True),
    # numpy's own deg2rad & co. reject complex input; JAX scales it.
    "deg2rad": (lambda x: x * (np.pi / 180), "inexact", "default", set(), False),
    "rad2deg": (lambda x: x * (180 / np.pi), "inexact", "default", set(), False),
    "degrees": (lambda x: x * (180 / np.pi), "inexact", "default", set(), False),
    "radians": (lambda x: x * (np.pi / 180), "inexact", "default", set(), False),
    "sinc": (np.sinc, "inexact", "default", set(), True),
}


def _promote(x: np.ndarray, how: str) -> np.ndarray:
    """x converted as jnp promotes a strong array for a function of kind ``how``."""
    name = x.dtype.name
    if how in ("inexact", "rint") and name in {"bool"} | _INTS:
        return x.astype(np.float32)
    if how == "numeric" and name == "bool":
        return x.astype(np.int32)
    return x


def _unary_cases():
    for name, (_, _, _, excluded, _) in UNARY.items():
        for dtype in DTYPES:
            if dtype in excluded:
                continue
            for shape in SHAPES:
                yield pytest.param(name, dtype, shape, id=f"{name}-{dtype}-{shape}")


@pytest.mark.parametrize("name,dtype,shape", list(_unary_cases()))
def test_unary(name, dtype, shape):
    ref, how, domain, _, transcendental = UNARY[name]
    x = rand(shape, dtype, domain, _rng(name, dtype, shape))
    got = getattr(jnp, name)(jnp.asarray(x))
    xp = _promote(x, how)
    with np.errstate(all="ignore"):
        want = ref(xp.astype(_compute_dtype(xp.dtype)))
    if name == "sign" and xp.dtype.kind == "c":
        want = xp / np.where(xp == 0, 1, np.abs(xp))  # JAX's (and numpy 2's) complex sign
    _check(got, np.asarray(want), _TOL_TRANSCENDENTAL if transcendental else _TOL)


# ---------------------------------------------------------------------------------------
# Binary functions: name -> (numpy reference, promotion, (domain x, domain y), excluded
# dtypes, transcendental?).

_NO_BOOL = {"bool"}
_INT_ONLY = _ONLY_INT | _NO_BOOL
BINARY = {
    "add": (np.add, "same", ("default", "default"), set(), False),
    "subtract": (np.subtract, "same", ("default", "default"), _NO_BOOL, False),
    "multiply": (np.multiply, "same", ("default", "default"), set(), False),
    "divide": (np.divide, "inexact", ("default", "nonzero"), set(), False),
    "true_divide": (np.true_divide, "inexact", ("default", "nonzero"), set(), False),
    "floor_divide": (np.floor_divide, "numeric", ("default", "nonzero"), _NO_COMPLEX, False),
    "remainder": (np.remainder, "numeric", ("default", "nonzero"), _NO_COMPLEX, False),
    "mod": (np.mod, "numeric", ("default", "nonzero"), _NO_COMPLEX, False),
    "fmod": (np.fmod, "numeric", ("default", "nonzero"), _NO_COMPLEX, False),
    "power": (np.power, "numeric", ("positive", "small"), set(), True),
    "float_power": (np.float_power, "inexact", ("positive", "default"), set(), True),
    "maximum": (np.maximum, "same", ("default", "default"), set(), False),
    "minimum": (np.minimum, "same", ("default", "default"), set(), False),
    "fmax": (np.fmax, "same", ("default", "default"), _NO_COMPLEX, False),
    "fmin": (np.fmin, "same", ("default", "default"), _NO_COMPLEX, False),
    "arctan2": (np.arctan2, "inexact", ("default", "default"), _NO_COMPLEX, True),
    "hypot": (np.hypot, "inexact", ("default", "default"), _NO_COMPLEX, True),
    "logaddexp": (np.logaddexp, "inexact", ("default", "default"), _NO_COMPLEX, True),
    "copysign": (np.copysign, "inexact", ("default", "default"), _NO_COMPLEX, False),
    "heaviside": (np.heaviside, "inexact", ("default", "default"), _NO_COMPLEX, False),
    "logical_and": (np.logical_and, "same", ("default", "default"), set(), False),
    "logical_or": (np.logical_or, "same", ("default", "default"), set(), False),
    "logical_xor": (np.logical_xor, "same", ("default", "default"), set(), False),
    "bitwise_and": (np.bitwise_and, "same", ("default", "default"), _ONLY_INT, False),
    "bitwise_or": (np.bitwise_or, "same", ("default", "default"), _ONLY_INT, False),
    "bitwise_xor": (np.bitwise_xor, "same", ("default", "default"), _ONLY_INT, False),
    "left_shift": (np.left_shift, "same", ("default", "small"), _INT_ONLY, False),
    "right_shift": (np.right_shift, "same", ("default", "small"), _INT_ONLY, False),
    "equal": (np.equal, "same", ("small", "small"), set(), False),
    "not_equal": (np.not_equal, "same", ("small", "small"), set(), False),
    "less": (np.less, "same", ("small", "small"), set(), False),
    "less_equal": (np.less_equal, "same", ("small", "small"), set(), False),
    "greater": (np.greater, "same", ("small", "small"), set(), False),
    "greater_equal": (np.greater_equal, "same", ("small", "small"), set(), False),
}


def _ref_binary(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ref, how, _, _, _ = BINARY[name]
    xp, yp = _promote(x, how), _promote(y, how)
    if name == "power" and xp.dtype.kind in "iu":
        return np.power(xp, yp)  # integer powers wrap in the dtype, as in JAX
    if name in ("floor_divide", "remainder", "mod", "fmod") and xp.dtype.kind in "iu":
        return ref(xp, yp)
    if xp.dtype.kind in "biu" and name not in ("divide", "true_divide"):
        return ref(xp, yp)
    return ref(xp.astype(_compute_dtype(xp.dtype)), yp.astype(_compute_dtype(yp.dtype)))


def _binary_cases():
    for name, (_, _, _, excluded, _) in BINARY.items():
        for dtype in DTYPES:
            if dtype in excluded:
                continue
            for sx, sy in PAIRS:
                yield pytest.param(name, dtype, sx, sy, id=f"{name}-{dtype}-{sx}-{sy}")


@pytest.mark.parametrize("name,dtype,sx,sy", list(_binary_cases()))
def test_binary(name, dtype, sx, sy):
    _, _, (dx, dy), _, transcendental = BINARY[name]
    x = rand(sx, dtype, dx, _rng(name, dtype, sx, 0))
    y = rand(sy, dtype, dy, _rng(name, dtype, sy, 1))
    got = getattr(jnp, name)(jnp.asarray(x), jnp.asarray(y))
    with np.errstate(all="ignore"):
        want = _ref_binary(name, x, y)
    _check(got, np.asarray(want),
           _TOL_TRANSCENDENTAL if transcendental else _TOL)


# Mixed dtypes: the promoted result against numpy on the promoted inputs.
_MIXED = ["bool", "int8", "uint8", "int32", "uint32", "float16", "bfloat16", "float32",
          "complex64"]


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "true_divide", "maximum",
                                  "equal", "less"])
@pytest.mark.parametrize("dx", _MIXED)
@pytest.mark.parametrize("dy", _MIXED)
def test_binary_mixed_dtypes(name, dx, dy):
    _, how, _, excluded, _ = BINARY[name]
    x = rand((3, 4), dx, "small", _rng(name, dx, dy, 0))
    y = rand((4,), dy, "positive", _rng(name, dx, dy, 1))
    xa, ya = jnp.asarray(x), jnp.asarray(y)
    out_dtype = jnp.result_type(xa, ya)
    if (name == "subtract" and out_dtype == np.bool_) or \
            (name == "less" and np.dtype(out_dtype).kind == "c"):
        pytest.skip("an error in JAX too; see test_numpy_oracle")
    got = getattr(jnp, name)(xa, ya)
    promoted = np.dtype(ml_dtypes.bfloat16) if out_dtype == jnp.bfloat16 else np.dtype(out_dtype)
    want = _ref_binary(name, x.astype(promoted), y.astype(promoted))
    _check(got, np.asarray(want), _TOL)


_SCALAR_OPS = {"add": (lambda a, s: a + s, np.add), "radd": (lambda a, s: s + a, np.add),
               "mul": (lambda a, s: a * s, np.multiply),
               "rsub": (lambda a, s: s - a, lambda x, s: np.subtract(s, x))}


@pytest.mark.parametrize("op", list(_SCALAR_OPS))
@pytest.mark.parametrize("scalar", [2, 2.5, 1 + 2j, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_python_scalars(dtype, scalar, op):
    jax_op, np_op = _SCALAR_OPS[op]
    x = rand((3, 4), dtype, "small", _rng("scalar", dtype))
    try:
        got = jax_op(jnp.asarray(x), scalar)
    except TypeError:
        assert op == "rsub" and np.result_type(x.dtype, scalar) == np.bool_
        return  # bool - bool is an error, as in JAX
    out = np.dtype(ml_dtypes.bfloat16) if got.dtype == jnp.bfloat16 else np.dtype(got.dtype)
    cd = _compute_dtype(out)
    want = np_op(x.astype(out).astype(cd), np.asarray(scalar).astype(out).astype(cd))
    _check(got, np.asarray(want).astype(cd) if out.kind in "biu" else np.asarray(want), _TOL)


# ---------------------------------------------------------------------------------------
# Functions with extra arguments


@pytest.mark.parametrize("decimals", [-1, 0, 1, 2, 3])
@pytest.mark.parametrize("dtype", ["float16", "float32", "complex64", "int32"])
def test_round_decimals(dtype, decimals):
    x = rand((3, 4), dtype, "default", _rng("round", dtype, decimals)) * 10
    x = x.astype(dtype)
    if dtype == "int32":
        if decimals < 0:
            with pytest.raises(NotImplementedError):
                jnp.round(jnp.asarray(x), decimals)
        else:
            np.testing.assert_array_equal(np.asarray(jnp.round(jnp.asarray(x), decimals)), x)
        return
    got = jnp.round(jnp.asarray(x), decimals)
    want = np.round(x.astype(_compute_dtype(x.dtype)), decimals)
    tol = {"float16": 1e-2, "float32": 1e-6, "complex64": 1e-6}[dtype]
    np.testing.assert_allclose(np.asarray(got).astype(want.dtype), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("kwargs", [dict(min=-1, max=2), dict(min=0.5), dict(max=1),
                                    dict(min=np.zeros(4), max=np.ones(4))])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float16", "float32"])
def test_clip(dtype, kwargs):
    x = rand((3, 4), dtype, "default", _rng("clip", dtype))
    got = jnp.clip(jnp.asarray(x), **{k: (jnp.asarray(v) if isinstance(v, np.ndarray) else v)
                                       for k, v in kwargs.items()})
    # Python int bounds convert to x's dtype first (-1 wraps to 255 for uint8), as in JAX.
    lo, hi = (np.asarray(kwargs[k]).astype(x.dtype) if isinstance(kwargs.get(k), int)
              else kwargs.get(k) for k in ("min", "max"))
    want = np.clip(x.astype(np.float64), lo, hi)
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), want, rtol=1e-3)


@pytest.mark.parametrize("shape", SHAPES)
def test_where_three_args(shape):
    rng = _rng("where", shape)
    c = rng.random(shape) < 0.5
    x = rand(shape, "float32", "default", rng)
    got = jnp.where(jnp.asarray(c), jnp.asarray(x), 0)
    np.testing.assert_array_equal(np.asarray(got), np.where(c, x, np.float32(0)))


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
def test_where_one_arg(shape):
    x = rand(shape, "int32", "unit", _rng("nonzero", shape))
    got = jnp.where(jnp.asarray(x))
    want = np.nonzero(x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == jnp.int32
        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int32"])
def test_isclose_allclose(dtype):
    x = rand((3, 4), dtype, "default", _rng("isclose", dtype))
    y = x + (x * 1e-7 if dtype != "int32" else 0).astype(x.dtype) if dtype != "int32" else x.copy()
    y = np.asarray(y, dtype=x.dtype)
    y.flat[0] += 1
    np.testing.assert_array_equal(np.asarray(jnp.isclose(jnp.asarray(x), jnp.asarray(y))),
                                  np.isclose(x, y))
    assert bool(jnp.allclose(jnp.asarray(x), jnp.asarray(x)))
    assert not bool(jnp.allclose(jnp.asarray(x), jnp.asarray(y)))
    assert bool(jnp.array_equal(jnp.asarray(x), jnp.asarray(x)))
    assert not bool(jnp.array_equal(jnp.asarray(x), jnp.asarray(y)))


def test_divmod_matches_numpy():
    x = rand((3, 4), "int32", "default", _rng("divmod", 0))
    y = rand((3, 4), "int32", "nonzero", _rng("divmod", 1))
    q, r = jnp.divmod(jnp.asarray(x), jnp.asarray(y))
    wq, wr = np.divmod(x, y)
    np.testing.assert_array_equal(np.asarray(q), wq)
    np.testing.assert_array_equal(np.asarray(r), wr)
    xf = rand((3, 4), "float32", "default", _rng("divmod", 2))
    yf = rand((3, 4), "float32", "nonzero", _rng("divmod", 3))
    q, r = jnp.divmod(jnp.asarray(xf), jnp.asarray(yf))
    wq, wr = np.divmod(xf, yf)
    np.testing.assert_allclose(np.asarray(q), wq, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(r), wr, rtol=1e-5, atol=1e-5)


def test_fix_was_removed():
    # JAX 0.10 removed jnp.fix; accessing it raises JAX's AttributeError.
    with pytest.raises(AttributeError, match="jax.numpy.fix was deprecated in JAX v0.9.0"):
        jnp.fix  # noqa: B018
