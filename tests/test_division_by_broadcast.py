"""Division by a broadcast or constant divisor, as JAX computes it: x * (1 / y).

XLA's simplifier rewrites `x / broadcast(y)` and `x / constant` of real floating types into
a product with the reciprocal, and JAX 0.10.2's results are its in eager mode too (jnp's
division runs jitted there). Checked against JAX: `A / b[:, None]`, `a / 3.0`,
`lax.div(a, b[:, None])` and `a / C` for a captured constant C equal numpy's
`A * (1 / b)[:, None]` bit for bit in both modes, while division of two operands of one
shape, integer and complex division stay divisions. The tests compare with numpy's
`x * (1 / y)` (numpy's float16 and float32 arithmetic round as XLA's does) and with plain
division where JAX keeps it.
"""
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
