"""Float division and power as JAX computes them: XLA's simplifier rewrites them, and JAX's
results are its.

Under jit (checked against JAX 0.10.2's jit, bit for bit, on the cases below):
    A / broadcast or constant B -> A * (1 / B)   exp(A) / exp(B) -> exp(A - B)
    A / exp(B) -> A * exp(-B)                    A / pow(B, C) -> A * pow(B, -C)
    A / sqrt(B) -> A * rsqrt(B)                  A / rsqrt(B) -> A * sqrt(B)
    (A / B) / (C / D) -> (A * D) / (B * C)       (A / B) / C -> A / (B * C)
    A / (B / C) -> (A * C) / B
    pow(A, 0) -> 1, pow(A, 1) -> A, pow(A, 2) -> A * A, pow(A, 3) -> A * A * A,
    pow(A, -1) -> 1 / A, and (LLVM's, after the others) pow(A, 0.5) -> |sqrt(A)|, inf at -inf
for float16, float32 and float64 (not bfloat16, which XLA:CPU computes through converts
to float32, and not complex or integer division). Eagerly JAX runs each jnp function
jitted, so only a divisor broadcast inside the division itself (`A / b[:, None]`,
`a / 3.0`) gives the product there; `a / jnp.sqrt(b)` divides and `b ** 3.0` is a power.
The references are the rewritten forms computed eagerly (tinyxla's float32 sqrt, rsqrt, exp
and pow are XLA's bit for bit) or numpy's `x * (1 / y)` (numpy's float16 and float32
arithmetic round as XLA's).
"""
import ml_dtypes
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax

rng = np.random.RandomState(0)
# Quotients that a reciprocal rounds differently: most rows of random data have some.
A = rng.randn(64, 50).astype(np.float32)
B = (rng.rand(64).astype(np.float32) + 0.5) * np.where(rng.rand(64) < 0.5, -1, 1).astype(np.float32)
C = rng.randn(64, 50).astype(np.float32)


def reciprocal_product(x, y):
    one = np.asarray(1, dtype=np.result_type(x, y))
    return x * (one / y)


def assert_bits(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_the_cases_tell_the_two_forms_apart():
    assert not np.array_equal(A / B[:, None], reciprocal_product(A, B[:, None]))
    assert not np.array_equal(A / np.float32(3), reciprocal_product(A, np.float32(3)))


CASES = {
    "column broadcast": (lambda a, b: a / b[:, None], lambda: reciprocal_product(A, B[:, None])),
    "row broadcast": (lambda a, b: a / b[None, :50], lambda: reciprocal_product(A, B[None, :50])),
    "python scalar": (lambda a, b: a / 3.0, lambda: reciprocal_product(A, np.float32(3))),
    "0-d array": (lambda a, b: a / b[0], lambda: reciprocal_product(A, B[0])),
    "lax.div of a size-1 dim": (lambda a, b: lax.div(a, b[:, None]),
                                lambda: reciprocal_product(A, B[:, None])),
    "both operands broadcast": (lambda a, b: b[:, None] / a[0][None, :],
                                lambda: reciprocal_product(B[:, None], A[0][None, :])),
    "mean over an axis": (lambda a, b: jnp.mean(a, axis=1),
                          lambda: reciprocal_product(A.sum(1, dtype=np.float32), np.float32(50))),
}


@pytest.mark.parametrize("name", CASES)
def test_eager_and_jit_divide_by_the_reciprocal(name):
    f, want = CASES[name]
    a, b = jnp.asarray(A), jnp.asarray(B)
    if name != "mean over an axis":  # the eager sum's order is not numpy's
        assert_bits(f(a, b), want())
    assert_bits(jax.jit(f)(a, b), np.asarray(f(a, b)))


def test_jit_explicit_broadcast_and_captured_constant():
    a, b = jnp.asarray(A), jnp.asarray(B)
    f = jax.jit(lambda a, b: a / jnp.broadcast_to(b[:, None], a.shape))
    assert_bits(f(a, b), reciprocal_product(A, B[:, None]))
    g = jax.jit(lambda a: a / C)  # a constant divisor of the operand's own shape
    assert_bits(g(a), reciprocal_product(A, C))
    # Eager, a materialized broadcast is an operand of the same shape: a plain division.
    assert_bits(a / jnp.broadcast_to(b[:, None], a.shape), A / B[:, None])


def test_same_shape_integer_complex_and_numerator_broadcast_stay_divisions():
    a, c = jnp.asarray(A), jnp.asarray(C)
    assert_bits(a / c, A / C)
    assert_bits(jax.jit(lambda a, c: a / c)(a, c), A / C)
    b = jnp.asarray(B)
    assert_bits(b[:, None] / a, B[:, None] / A)  # only a divisor's broadcast counts
    i = (A * 100).astype(np.int32)
    j = (np.abs(B) * 10 + 1).astype(np.int32)
    want = np.trunc(i / j[:, None]).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(lax.div(jnp.asarray(i), jnp.asarray(j)[:, None])), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda i, j: lax.div(i, j[:, None]))(i, j)), want)
    z = (A + 1j * C).astype(np.complex64)
    full = jnp.broadcast_to(jnp.asarray(z[:, :1]), z.shape)
    plain = np.asarray(jnp.asarray(z) / full)  # same shapes: the complex division itself
    assert_bits(jnp.asarray(z) / jnp.asarray(z[:, :1]), plain)
    assert_bits(jax.jit(lambda z, w: z / w[:, :1])(z, z), plain)


def test_division_by_one_is_the_operand():
    a = jnp.asarray(A)
    assert_bits(jax.jit(lambda a: a / 1.0)(a), A)
    assert_bits(a / 1.0, A)


def test_float16_divides_by_its_rounded_reciprocal():
    h, hb = A.astype(np.float16), B.astype(np.float16)
    want = reciprocal_product(h, hb[:, None])
    assert not np.array_equal(want, h / hb[:, None])
    assert_bits(jnp.asarray(h) / jnp.asarray(hb)[:, None], want)
    assert_bits(jax.jit(lambda a, b: a / b[:, None])(h, hb), want)


def test_float64(x64):
    d, db = A.astype(np.float64), B.astype(np.float64) / 3
    want = reciprocal_product(d, db[:, None])
    assert not np.array_equal(want, d / db[:, None])
    assert_bits(jnp.asarray(d) / jnp.asarray(db)[:, None], want)
    assert_bits(jax.jit(lambda a, b: a / b[:, None])(d, db), want)


def test_softmax_divides_by_its_sums_reciprocal():
    a = jnp.asarray(A)
    e = np.asarray(jnp.exp(a - jnp.max(a, axis=1, keepdims=True)))
    s = np.asarray(jnp.sum(jnp.asarray(e), axis=1, keepdims=True))
    assert_bits(jax.nn.softmax(a, axis=-1), reciprocal_product(e, s))
    np.testing.assert_allclose(np.asarray(jax.jit(lambda a: jax.nn.softmax(a, axis=-1))(a)),
                               e / s, rtol=1e-6, atol=0)


@pytest.mark.parametrize("sx,sy", [((), (0,)), ((0, 3), (1, 3)), ((0,), ()), ((1, 0), (3, 1))])
def test_empty_operands(sx, sy):
    x, y = np.full(sx, 2, np.float32), np.full(sy, 3, np.float32)
    want = np.broadcast_to(np.float32(2) * (np.float32(1) / np.float32(3)),
                           np.broadcast_shapes(sx, sy))
    assert_bits(jnp.asarray(x) / jnp.asarray(y), np.ascontiguousarray(want))
    assert_bits(jax.jit(lambda a, b: a / b)(x, y), np.ascontiguousarray(want))


B2 = (rng.rand(64, 50).astype(np.float32) + 0.5)
C2 = (rng.rand(64, 50).astype(np.float32) + 0.5)

# name: (the function, its rewritten form)
REWRITES = {
    "a / sqrt(b)": (lambda a, b, c: a / jnp.sqrt(b), lambda a, b, c: a * lax.rsqrt(b)),
    "a / rsqrt(b)": (lambda a, b, c: a / lax.rsqrt(b), lambda a, b, c: a * jnp.sqrt(b)),
    "1 / sqrt(b)": (lambda a, b, c: 1 / jnp.sqrt(b), lambda a, b, c: lax.rsqrt(b)),
    "a / exp(b)": (lambda a, b, c: a / jnp.exp(b), lambda a, b, c: a * jnp.exp(-b)),
    "exp(a) / exp(b)": (lambda a, b, c: jnp.exp(a) / jnp.exp(b), lambda a, b, c: jnp.exp(a - b)),
    "a / b ** c": (lambda a, b, c: a / b ** c, lambda a, b, c: a * b ** -c),
    "a / b ** 2.5": (lambda a, b, c: a / b ** 2.5, lambda a, b, c: a * b ** -2.5),
    "(a / b) / c": (lambda a, b, c: (a / b) / c, lambda a, b, c: a / (b * c)),
    "a / (b / c)": (lambda a, b, c: a / (b / c), lambda a, b, c: (a * c) / b),
    "(a / b) / (c / d)": (lambda a, b, c: (a / b) / (c / (a + 3)),
                          lambda a, b, c: (a * (a + 3)) / (b * c)),
    # The divisor's rules come first, inner divisions before outer ones.
    "(a / b) / sqrt(c)": (lambda a, b, c: (a / b) / jnp.sqrt(c),
                          lambda a, b, c: (a / b) * lax.rsqrt(c)),
    "a / (b / sqrt(c))": (lambda a, b, c: a / (b / jnp.sqrt(c)),
                          lambda a, b, c: a / (b * lax.rsqrt(c))),
    "a / (sqrt(b) / c)": (lambda a, b, c: a / (jnp.sqrt(b) / c),
                          lambda a, b, c: (a * c) * lax.rsqrt(b)),
    "(a / b) / 3": (lambda a, b, c: (a / b) / 3.0, lambda a, b, c: (a / b) * np.float32(1 / 3)),
    "(a / b) / c[:, :1]": (lambda a, b, c: (a / b) / c[:, :1],
                           lambda a, b, c: (a / b) * jnp.broadcast_to(1 / c[:, :1], a.shape)),
    "a / sqrt(b[:, :1])": (lambda a, b, c: a / jnp.sqrt(b[:, :1]),
                           lambda a, b, c: a * jnp.broadcast_to(lax.rsqrt(b[:, :1]), a.shape)),
    "a / exp(b[:, :1])": (lambda a, b, c: a / jnp.exp(b[:, :1]),
                          lambda a, b, c: a * jnp.broadcast_to(jnp.exp(-b[:, :1]), a.shape)),
    "layer norm": (lambda a, b, c: (a - b[:, :1]) / jnp.sqrt(c[:, :1] + 1e-5),
                   lambda a, b, c: (a - jnp.broadcast_to(b[:, :1], a.shape)) *
                   jnp.broadcast_to(lax.rsqrt(c[:, :1] + np.float32(1e-5)), a.shape)),
}


@pytest.mark.parametrize("name", REWRITES)
def test_jit_rewrites_divisions_as_xla(name):
    f, form = REWRITES[name]
    a, b, c = jnp.asarray(A), jnp.asarray(B2), jnp.asarray(C2)
    assert_bits(jax.jit(f)(a, b, c), np.asarray(form(a, b, c)))


@pytest.mark.parametrize("name", ["a / sqrt(b)", "(a / b) / c", "a / exp(b)"])
def test_eager_divides_where_jax_does(name):
    f, _ = REWRITES[name]
    a, b, c = jnp.asarray(A), jnp.asarray(B2), jnp.asarray(C2)
    if name == "a / sqrt(b)":
        want = A / np.asarray(jnp.sqrt(b))
    elif name == "(a / b) / c":
        want = (A / B2) / C2
    else:
        want = A / np.asarray(jnp.exp(b))
    assert_bits(f(a, b, c), want)


def test_bfloat16_divisions_stay_divisions():
    bf = ml_dtypes.bfloat16
    a, b, c = (v.astype(bf) for v in (A, B2, C2))
    f32 = lambda v: v.astype(np.float32)  # noqa: E731
    r = lambda v: v.astype(bf)  # noqa: E731  (float32 arithmetic, rounded once per op)
    assert_bits(jax.jit(lambda a, b: a / b[:, :1])(a, b), r(f32(a) / f32(b[:, :1])))
    assert_bits(jax.jit(lambda a, b, c: (a / b) / c)(a, b, c), r(f32(r(f32(a) / f32(b))) / f32(c)))
    sq = np.asarray(jnp.sqrt(jnp.asarray(b)))
    assert_bits(jax.jit(lambda a, b: a / jnp.sqrt(b))(a, b), r(f32(a) / f32(sq)))


EDGES = np.array([-np.inf, np.inf, -0.0, 0.0, np.nan, -2.0, 2.0, 3.0], np.float32)
P = np.concatenate([EDGES, (rng.randn(200) * 3).astype(np.float32)])


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("e", [0.0, 1.0, 2.0, 3.0, -1.0, 0.5])
def test_jit_power_by_constants(e, dtype):
    p = P.astype(dtype)
    with np.errstate(all="ignore"):
        want = {0.0: np.ones_like(p), 1.0: p, 2.0: p * p, 3.0: p * p * p,
                -1.0: np.asarray(1, dtype) / p,
                0.5: np.where(np.isneginf(p), np.asarray(np.inf, dtype), np.abs(np.sqrt(p)))}[e]
    got = np.asarray(jax.jit(lambda b: b ** e)(p))
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    # Inner rewrites come first: 3 / pow(b, 2) is 3 / (b * b), 3 / pow(b, -1) is 3 / (1 / b),
    # then (3 * b) / 1; the division rules see pow(b, 0.5) before it becomes a square root.
    three = np.asarray(3, dtype)
    with np.errstate(all="ignore"):
        want = {0.0: np.full_like(p, 3), 1.0: three / p, 2.0: three / (p * p),
                3.0: three / (p * p * p), -1.0: three * p,
                0.5: np.asarray(3 * jnp.asarray(p) ** jnp.asarray(-0.5, dtype))}[e]
    assert_bits(jax.jit(lambda b: 3 / b ** e)(p), want)


def test_eager_powers_stay_powers():
    p = jnp.asarray(P)
    three = np.asarray(p ** jnp.float32(3.0))
    assert not np.array_equal(three, P * P * P, equal_nan=True)  # the values tell them apart
    assert_bits(p ** 3.0, three)
