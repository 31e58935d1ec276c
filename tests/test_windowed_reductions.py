"""lax.reduce_window (the sum / max / min kernels and generic computations) and lax.reduce:
against a numpy reference and values pinned from JAX 0.10.2, gradients against numerical
derivatives (max pooling's routed to the selected element), vmap against a loop, JAX's
errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.test_util import check_grads


def np_reduce_window(x, init, fn, window, strides, padding, base_dilation=None,
                     window_dilation=None):
    """Windows of the dilated, padded operand; taps on padding and dilation holes are
    skipped (XLA's semantics)."""
    x = np.asarray(x)
    nd = x.ndim
    base_dilation = base_dilation or (1,) * nd
    window_dilation = window_dilation or (1,) * nd
    if isinstance(padding, str):
        wd = [(w - 1) * d + 1 for w, d in zip(window, window_dilation)]
        padding = lax.padtype_to_pads(x.shape, wd, strides, padding)

    def spread(a, fill):
        dil = [(n - 1) * d + 1 if n else 0 for n, d in zip(a.shape, base_dilation)]
        big = np.full([n + max(lo, 0) + max(hi, 0) for n, (lo, hi) in zip(dil, padding)],
                      fill, a.dtype)
        if a.size:
            big[tuple(slice(max(lo, 0), max(lo, 0) + n, d) for n, (lo, _), d
                      in zip(dil, padding, base_dilation))] = a
        return big[tuple(slice(max(-lo, 0), big.shape[i] - max(-hi, 0))
                         for i, (lo, hi) in enumerate(padding))]
    big, valid = spread(x, init), spread(np.ones(x.shape, bool), False)
    span = [(w - 1) * d + 1 for w, d in zip(window, window_dilation)]
    out_shape = [max((n - s) // st + 1, 0) for n, s, st in zip(big.shape, span, strides)]
    out = np.full(out_shape, init, x.dtype)
    for pos in itertools.product(*map(range, out_shape)):
        acc = np.asarray(init, x.dtype)
        for tap in itertools.product(*map(range, window)):
            at = tuple(p * st + k * d for p, st, k, d in zip(pos, strides, tap, window_dilation))
            if valid[at]:
                acc = fn(acc, big[at])
        out[pos] = acc
    return out


_GEOMETRIES = [
    ((2, 3, 6, 5), (1, 1, 2, 2), (1, 1, 2, 2), "VALID", None, None),
    ((2, 6, 5, 3), (1, 3, 3, 1), (1, 2, 1, 1), "SAME", None, None),
    ((7,), (3,), (2,), ((2, -1),), (2,), (2,)),
    ((4, 5), (2, 3), (1, 2), "SAME_LOWER", None, (2, 1)),
    ((3, 4, 2, 5), (2, 2, 1, 3), (1, 1, 1, 2), ((1, 0), (0, 1), (0, 0), (2, 2)), (1, 2, 1, 1),
     None),
    ((0, 4), (1, 2), (1, 1), "VALID", None, None),
    ((2, 3), (3, 3), (1, 1), "VALID", None, None),  # window larger than the input
]


@pytest.mark.parametrize("geom", _GEOMETRIES, ids=[f"g{i}" for i in range(len(_GEOMETRIES))])
def test_monoids_against_numpy(geom):
    shape, window, strides, padding, bd, wd = geom
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    xi = rng.integers(-50, 50, shape).astype(np.int32)
    for arr, init, fn, npfn in ((x, 0.0, lax.add, np.add), (x, -np.inf, lax.max, np.maximum),
                                (x, np.inf, lax.min, np.minimum),
                                (xi, np.iinfo(np.int32).min, lax.max, np.maximum),
                                (xi, 0, lax.add, np.add)):
        want = np_reduce_window(arr, init, npfn, window, strides, padding, bd, wd)
        f = lambda a: lax.reduce_window(a, init, fn, window, strides, padding, bd, wd)
        got = f(arr)
        assert got.dtype == arr.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(arr)), np.asarray(got))


def test_generic_computations_against_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 6, 5)).astype(np.float32)
    for init, fn, npfn in ((1.0, lax.mul, np.multiply), (2.0, lax.add, np.add),
                           (0.5, lambda a, b: lax.max(a, b * 2), lambda a, b: np.maximum(a, b * 2))):
        for geom in ((1, 2, 2), (1, 1, 2), ((0, 0), (1, 0), (0, 1)), (1, 1, 1), (1, 2, 1)), \
                    ((1, 3, 2), (1, 2, 2), "SAME", (1, 1, 2), (1, 1, 1)):
            window, strides, padding, bd, wd = geom
            want = np_reduce_window(x, init, npfn, window, strides, padding, bd, wd)
            got = lax.reduce_window(x, np.float32(init), fn, window, strides, padding, bd, wd)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
            jitted = jax.jit(lambda a: lax.reduce_window(a, np.float32(init), fn, window,
                                                         strides, padding, bd, wd))
            np.testing.assert_allclose(np.asarray(jitted(x)), want, rtol=1e-5, atol=1e-6)


_XS = (np.arange(20) % 7 - 3).reshape(1, 1, 5, 4).astype(np.float32) / 4


def test_pinned_jax_values():
    np.testing.assert_allclose(
        np.asarray(lax.reduce_window(_XS, 1.0, lax.mul, (1, 1, 2, 2), (1, 1, 1, 1),
                                     ((0, 0), (0, 0), (1, 0), (0, 1)))).ravel(),
        [0.375, 0.125, -0.0, 0.0, 0.046875, 0.046875, 0.0, -0.0, 0.015625, -0.0, -0.0, -0.1875,
         0.046875, 0.0, 0.0, -0.125, -0.0, -0.0, 0.046875, -0.25])
    np.testing.assert_allclose(
        np.asarray(lax.reduce_window(_XS, 2.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 1),
                                     "SAME")).ravel(),
        [1.5, 2.5, 1.75, 1.25, 2.5, 1.75, 1.0, 1.75, 1.75, 2.25, 2.75, 2.5])
    xi = (np.arange(24) % 11 - 5).reshape(4, 6).astype(np.int32)
    got = lax.reduce_window(xi, np.iinfo(np.int32).min, lax.max, (2, 3), (1, 2),
                            ((1, 0), (1, 1)))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got).ravel(),
                                  [-4, -2, 0, 2, 4, 5, 2, 4, 5, 3, 5, 5])


def test_max_pool_gradient_routes_to_selected_element():
    pool = lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (1, 1, 3, 2), (1, 1, 2, 1), "SAME")
    for grad in (jax.grad(lambda a: jnp.sum(pool(a) ** 2)),
                 jax.jit(jax.grad(lambda a: jnp.sum(pool(a) ** 2)))):
        np.testing.assert_allclose(
            np.asarray(grad(_XS)).ravel(),
            [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 6.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 4.5, 0.0, 0.0,
             0.0, 0.0, 0.0, 2.0])
    minpool = lambda a: lax.reduce_window(a, jnp.inf, lax.min, (1, 1, 2, 2), (1, 1, 1, 2),
                                          ((0, 0), (0, 0), (1, 0), (0, 1)),
                                          base_dilation=(1, 1, 2, 1))
    np.testing.assert_allclose(
        np.asarray(jax.grad(lambda a: jnp.sum(jnp.sin(minpool(a))))(_XS)).ravel(),
        [1.4633777, 0.0, 1.9378248, 0.0, 1.9378248, 0.0, 0.0, 1.4633777, 1.7551651, 0.0, 2.0,
         0.0, 1.7551651, 0.0, 1.4633777, 0.0, 0.9689124, 0.0, 0.9689124, 0.0], rtol=1e-6)


@pytest.mark.parametrize("init,fn", [(0.0, lax.add), (-np.inf, lax.max), (np.inf, lax.min)])
def test_gradients_numerical(init, fn, x64):
    rng = np.random.default_rng(2)
    x = rng.permutation(60).reshape(3, 4, 5).astype(np.float64) / 7  # no ties
    for window, strides, padding, bd, wd in (((2, 2, 3), (1, 2, 1), "SAME", None, None),
                                             ((1, 3, 2), (1, 1, 2), ((0, 0), (1, 2), (-1, 1)),
                                              (1, 2, 1), (1, 1, 2)),
                                             ((1, 2, 2), (1, 2, 2), "VALID", None, None)):
        check_grads(lambda a: lax.reduce_window(a, init, fn, window, strides, padding, bd, wd),
                    (x,), order=2, modes=("fwd", "rev"), eps=1e-3)


@pytest.mark.parametrize("init,fn", [(0.0, lax.add), (-np.inf, lax.max), (1.0, lax.mul)])
def test_vmap_matches_loop(init, fn):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 6)).astype(np.float32)
    f = lambda a: lax.reduce_window(a, init, fn, (2, 3), (1, 2), "SAME")
    for axis in (0, 1):
        got = jax.vmap(f, in_axes=axis)(x)
        want = np.stack([np.asarray(f(np.take(x, i, axis))) for i in range(x.shape[axis])])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    g = jax.vmap(jax.grad(lambda a: jnp.sum(jnp.sin(f(a)))))(x)
    want = np.stack([np.asarray(jax.grad(lambda a: jnp.sum(jnp.sin(f(a))))(x[i]))
                     for i in range(3)])
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-6)


def test_variadic_reduce_window():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 7)).astype(np.float32)
    idx = np.broadcast_to(np.arange(7, dtype=np.int32), x.shape)

    def argmax_step(a, b):
        take = a[0] >= b[0]
        return lax.select(take, a[0], b[0]), lax.select(take, a[1], b[1])
    vals, where = lax.reduce_window((x, idx), (-np.inf, np.int32(-1)), argmax_step, (1, 3),
                                    (1, 2), "VALID")
    windows = np.stack([x[:, i:i + 3] for i in range(0, 5, 2)], 1)
    np.testing.assert_allclose(np.asarray(vals), windows.max(-1))
    np.testing.assert_array_equal(np.asarray(where), windows.argmax(-1) + np.arange(0, 5, 2))


def test_reduce_generic_and_variadic():
    xi = (np.arange(24) % 11 - 5).reshape(4, 6).astype(np.int32)
    pos = np.arange(24).reshape(4, 6).astype(np.int32)

    def argmax_step(a, b):
        return lax.max(a[0], b[0]), lax.select(a[0] >= b[0], a[1], b[1])
    for f in (lax.reduce, jax.jit(lax.reduce, static_argnums=(2, 3))):
        vals, where = f((xi, pos), (np.int32(-100), np.int32(0)), argmax_step, (1,))
        np.testing.assert_array_equal(np.asarray(vals), [0, 5, 1, 5])   # JAX 0.10.2
        np.testing.assert_array_equal(np.asarray(where), [5, 10, 17, 21])
    x = np.random.default_rng(5).standard_normal((3, 5, 7)).astype(np.float32)
    got = lax.reduce(x, np.float32(1.5), lambda a, b: a + b, (0, 2))
    np.testing.assert_allclose(np.asarray(got), x.sum((0, 2)) + 1.5, rtol=1e-5)
    assert lax.reduce(x, np.float32(0), lax.add, (1,)).shape == (3, 7)
    np.testing.assert_allclose(np.asarray(lax.reduce(x, -np.inf, lax.max, (0, 1))),
                               x.max((0, 1)))
    empty = lax.reduce(np.zeros((3, 0), np.float32), np.float32(2.0), lambda a, b: a * b, (1,))
    np.testing.assert_array_equal(np.asarray(empty), [2.0, 2.0, 2.0])


def _raises(exc, msg, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == msg


def test_errors_match_jax():
    x = np.ones((1, 4, 5, 5), np.float32)
    rw = lax.reduce_window
    _raises(TypeError, "reduce_window got the wrong number of window_dimensions for operand: "
            "got operand shape (1, 4, 5, 5) with window_dimensions (1, 1, 2).",
            lambda: rw(x, 0., lax.add, (1, 1, 2), (1, 1, 1), "VALID"))
    _raises(TypeError, "reduce_window window_dimensions must have every element be strictly "
            "positive, got (1, 1, 2, 0).",
            lambda: rw(x, 0., lax.add, (1, 1, 2, 0), (1, 1, 1, 1), "VALID"))
    _raises(TypeError, "reduce_window got inconsistent window_strides and window_dimensions: "
            "got window_strides (1, 1, 1) and window_dimensions (1, 1, 2, 2).",
            lambda: rw(x, 0., lax.add, (1, 1, 2, 2), (1, 1, 1), "VALID"))
    _raises(TypeError, "operand to reduce_window_sum must have a number dtype, got bool",
            lambda: rw(x > 0, False, lax.add, (1, 1, 2, 2), (1, 1, 1, 1), "VALID"))
    _raises(ValueError, "Operands must have the same tree structure as init_values: "
            "PyTreeDef((*, *)) vs. PyTreeDef((*,))",
            lambda: rw((x, x), (0.,), lax.add, (1, 1, 2, 2), (1, 1, 1, 1), "VALID"))


def test_pooling_gradient_picks_first_maximum():
    """Max and min pooling route each window's gradient to its first extreme element in
    row-major order (JAX 0.10.2's values), as numpy's argmax."""
    x = np.array([[1., 1., 2., 2., 0.], [1., 1., 2., 3., 0.], [5, 5, 5, 5, 5.]], np.float32)
    pool = lambda init, fn: lambda a: lax.reduce_window(a, init, fn, (2, 2), (2, 2),
                                                        "VALID").sum()
    np.testing.assert_array_equal(np.asarray(jax.grad(pool(-np.inf, lax.max))(x)),
                                  [[1, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.grad(pool(np.inf, lax.min)))(x)),
                                  [[1, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
    rng = np.random.default_rng(6)
    y = rng.standard_normal((2, 6, 9, 3)).astype(np.float32)
    ct = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    tiled = lambda a: jnp.sum(lax.reduce_window(a, -np.inf, lax.max, (1, 2, 3, 1),
                                                (1, 2, 3, 1), "VALID") * ct)
    np.testing.assert_array_equal(np.asarray(jax.grad(tiled)(y)), _first_max_grad(y, ct))


def _first_max_grad(y, ct):
    """Max pooling's gradient by hand: each window's first maximum gets its cotangent."""
    g = np.zeros_like(y)
    for n, i, j, c in itertools.product(*map(range, ct.shape)):
        win = y[n, 2 * i:2 * i + 2, 3 * j:3 * j + 3, c]
        a, b = np.unravel_index(np.argmax(win), win.shape)
        g[n, 2 * i + a, 3 * j + b, c] += ct[n, i, j, c]
    return g


def _pool_ref(x, window, strides, fn, init):
    """VALID pooling over axes 1, 2 of NHWC ``x`` (numpy, tap by tap in row-major order)."""
    n, h, w, c = x.shape
    oh, ow = (h - window[0]) // strides[0] + 1, (w - window[1]) // strides[1] + 1
    out = np.full((n, oh, ow, c), init, x.dtype)
    for a, b in itertools.product(range(window[0]), range(window[1])):
        out = fn(out, x[:, a:a + strides[0] * oh:strides[0], b:b + strides[1] * ow:strides[1]])
    return out


@pytest.mark.parametrize("init,fn,npfn", [(-np.inf, lax.max, np.maximum),
                                          (np.inf, lax.min, np.minimum),
                                          (0.0, lax.add, np.add)])
@pytest.mark.parametrize("channels", [70, 128])
def test_channels_last_pooling_fast_path(init, fn, npfn, channels):
    """Interior windows over long channel rows (the blocked, vectorised path: full blocks of
    64 channels, and a shorter last one for 70), with NaNs, infinities and signed zeros in
    some windows (a NaN window is redone exactly)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 9, 8, channels)).astype(np.float32)
    x[0, 0, 0, 5] = np.nan
    x[1, 4, 3, channels - 1] = np.nan
    x[1, 6, 5, 66] = np.nan
    x[2, 2, 2, :] = -0.0
    x[2, 3, 3, 10] = np.inf
    for window, strides in (((2, 2), (2, 2)), ((3, 3), (2, 2)), ((3, 2), (1, 3))):
        want = _pool_ref(x, window, strides, npfn, np.float32(init))
        f = lambda a: lax.reduce_window(a, init, fn, (1, *window, 1), (1, *strides, 1), "VALID")
        for got in (f(x), jax.jit(f)(x)):
            np.testing.assert_array_equal(np.isnan(np.asarray(got)), np.isnan(want))
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
            if fn is not lax.add:  # max(-0, -0) keeps its sign
                np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want))


@pytest.mark.parametrize("window,strides,padding", [((2, 2), (2, 2), "VALID"),
                                                    ((3, 3), (2, 2), "SAME"),
                                                    ((3, 2), (1, 1), ((1, 1), (0, 1)))])
def test_max_pool_gradient_of_channel_rows(window, strides, padding):
    """select_and_scatter_add over rows of 70 channels, overlapping windows included (their
    cotangents add up in one element), against the hand-written first-maximum scatter."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 9, 8, 70)).astype(np.float32)
    x[0, :4, :4, :3] = 1.0  # ties: the first maximum in tap order is chosen
    full = padding if isinstance(padding, str) else ((0, 0), *padding, (0, 0))
    pool = lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, *window, 1),
                                       (1, *strides, 1), full)
    out, vjp = jax.vjp(pool, x)
    ct = rng.standard_normal(out.shape).astype(np.float32)
    pads = (padding if not isinstance(padding, str) else
            lax.padtype_to_pads(x.shape[1:3], window, strides, padding))
    xp = np.pad(x, ((0, 0), *pads, (0, 0)), constant_values=-np.inf)
    want = np.zeros_like(xp)
    for n, i, j, c in itertools.product(*map(range, ct.shape)):
        win = xp[n, i * strides[0]:i * strides[0] + window[0],
                 j * strides[1]:j * strides[1] + window[1], c]
        a, b = np.unravel_index(np.argmax(win), win.shape)
        want[n, i * strides[0] + a, j * strides[1] + b, c] += ct[n, i, j, c]
    want = want[:, pads[0][0]:pads[0][0] + 9, pads[1][0]:pads[1][0] + 8]
    np.testing.assert_allclose(np.asarray(vjp(ct)[0]), want, rtol=1e-6, atol=1e-6)
    jitted = jax.jit(lambda a, g: jax.vjp(pool, a)[1](g)[0])(x, ct)
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(vjp(ct)[0]))
    # The JVP gathers each window's tangent from the same element.
    t = rng.standard_normal(x.shape).astype(np.float32)
    _, tangent = jax.jvp(pool, (x,), (t,))
    np.testing.assert_allclose(np.sum(np.asarray(tangent) * ct), np.sum(want * t), rtol=1e-4)


def test_select_primitives_vmap_and_second_order(x64):
    """vmap of max pooling's gradient against a loop, and the gradient of a gradient (the
    transpose of select_and_scatter_add is select_and_gather_add)."""
    rng = np.random.default_rng(9)
    x = rng.permutation(3 * 2 * 6 * 5 * 4).reshape(3, 2, 6, 5, 4).astype(np.float64) / 9
    pool = lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, 2, 3, 1), (1, 2, 1, 1), "SAME")
    g = lambda a: jax.grad(lambda b: jnp.sum(jnp.sin(pool(b))))(a)
    got = jax.vmap(g)(x)
    want = np.stack([np.asarray(g(x[i])) for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    check_grads(lambda a: jnp.sum(jnp.sin(pool(a)) ** 2), (x[0],), order=2,
                modes=("fwd", "rev"), eps=1e-3)
    check_grads(lambda a: lax.reduce_window(a, np.inf, lax.min, (1, 2, 2, 2),
                                            (1, 1, 2, 1), "SAME", (1, 1, 1, 1), (1, 2, 1, 1)),
                (x[1],), order=2, modes=("fwd", "rev"), eps=1e-3)


def _jax_pool_ref(x, window, strides, dilation, pads, op):
    """Max, min or sum pooling ("max", "min", "add") over axes 1, 2 of NHWC ``x``, taps in
    row-major order from the init value, with lax.max's and lax.min's semantics: NaN
    propagates and max(-0, +0) = +0, min(-0, +0) = -0 (numpy's maximum and minimum return
    either zero, depending on the order)."""
    init = {"max": -np.inf, "min": np.inf, "add": 0.0}[op]
    xp = np.pad(x, ((0, 0), *pads, (0, 0)), constant_values=init)
    span = [(w - 1) * d + 1 for w, d in zip(window, dilation)]
    oh, ow = [(n - s) // st + 1 for n, s, st in zip(xp.shape[1:3], span, strides)]
    out = np.full((x.shape[0], oh, ow, x.shape[3]), init, x.dtype)
    for a, b in itertools.product(range(window[0]), range(window[1])):
        tap = xp[:, a * dilation[0]:a * dilation[0] + strides[0] * (oh - 1) + 1:strides[0],
                 b * dilation[1]:b * dilation[1] + strides[1] * (ow - 1) + 1:strides[1]]
        if op == "add":
            out = out + tap
            continue
        both_zero = (out == 0) & (tap == 0)
        zero_sign = ((np.signbit(out) & np.signbit(tap)) if op == "max"
                     else (np.signbit(out) | np.signbit(tap)))
        out = np.where(both_zero, np.where(zero_sign, -0.0, 0.0).astype(x.dtype),
                       np.maximum(out, tap) if op == "max" else np.minimum(out, tap))
    return out


# window, strides, window dilation, padding: even and odd tap counts, strided runs of
# windows, dilated taps, and padding that cuts the runs of interior windows.
_CHANNEL_ROW_GEOMETRIES = [
    ((2, 2), (2, 2), (1, 1), ((0, 0), (0, 0))),
    ((3, 3), (1, 1), (1, 1), ((0, 0), (0, 0))),
    ((1, 1), (1, 1), (1, 1), ((0, 0), (0, 0))),
    ((1, 2), (1, 3), (1, 1), ((0, 0), (0, 0))),
    ((2, 3), (1, 2), (2, 1), ((0, 0), (0, 0))),
    ((3, 3), (2, 2), (1, 1), ((1, 1), (1, 1))),
    ((2, 2), (1, 1), (1, 2), ((0, 1), (2, 0))),
]


@pytest.mark.parametrize("geometry", _CHANNEL_ROW_GEOMETRIES,
                         ids=[f"g{i}" for i in range(len(_CHANNEL_ROW_GEOMETRIES))])
@pytest.mark.parametrize("channels", [1, 7, 16, 17, 64, 83])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["max", "min", "add"])
def test_channel_rows_nan_lanes_and_signed_zeros(geometry, channels, dtype, op, request):
    """Max, min and sum over channel rows of float32 and float64 (the vectorised kernel:
    max and min combine taps in pairs and redo a block exactly when one lane read a NaN,
    sums add in tap order): a NaN in one lane of the first window and one of the last,
    windows of -0 and +0 only, channel counts that leave the last vector part-filled;
    eager and jit against numpy, bit for bit."""
    if dtype == np.float64:
        request.getfixturevalue("x64")
    window, strides, dilation, pads = geometry
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 7, 9, channels)).astype(dtype)
    span = [(w - 1) * d + 1 for w, d in zip(window, dilation)]
    out_hw = [(n + lo + hi - s) // st + 1
              for n, (lo, hi), s, st in zip(x.shape[1:3], pads, span, strides)]
    last = [min(n - 1, (o - 1) * st - lo + s - 1)
            for n, o, st, (lo, _), s in zip(x.shape[1:3], out_hw, strides, pads, span)]
    x[0, 0, 0, channels - 1] = np.nan                # the first window's last lane
    x[1, last[0], last[1], channels // 2] = np.nan   # the last window's middle lane
    x[1, 1:4, 1:5, :] = np.where(rng.random((3, 4, channels)) < 0.5, -0.0, 0.0)
    x[0, 2:5, 2:6, :] = -0.0
    fn, init = {"max": (lax.max, -np.inf), "min": (lax.min, np.inf), "add": (lax.add, 0.0)}[op]
    f = lambda a: lax.reduce_window(a, init, fn, (1, *window, 1), (1, *strides, 1),
                                    ((0, 0), *pads, (0, 0)), window_dilation=(1, *dilation, 1))
    want = _jax_pool_ref(x, window, strides, dilation, pads, op)
    assert np.isnan(want[0, 0, 0, channels - 1]) and np.isnan(want[1, -1, -1, channels // 2])
    for got in (f(x), jax.jit(f)(x)):
        got = np.asarray(got)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)  # NaN where want has NaN
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]),
                                      np.signbit(want[~np.isnan(want)]))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_integer_channel_rows_in_runs(dtype, request):
    """Integer max, min and sum over channel rows (the generic kernel, fed runs of interior
    windows along the last window dimension) against numpy, padding cutting the runs."""
    if dtype == np.int64:
        request.getfixturevalue("x64")
    rng = np.random.default_rng(12)
    x = rng.integers(0, 200, (2, 6, 11, 19)).astype(dtype)
    info = np.iinfo(dtype)
    for fn, init, npfn in ((lax.max, info.min, np.maximum), (lax.min, info.max, np.minimum),
                           (lax.add, 0, np.add)):
        for window, strides, pads in (((2, 2), (2, 2), ((0, 0), (0, 0))),
                                      ((3, 2), (1, 2), ((1, 1), (0, 1)))):
            xp = np.pad(x, ((0, 0), *pads, (0, 0)), constant_values=init)
            want = _pool_ref(xp, window, strides, npfn, dtype(init))
            f = lambda a: lax.reduce_window(a, dtype(init), fn, (1, *window, 1),
                                            (1, *strides, 1), ((0, 0), *pads, (0, 0)))
            for got in (f(x), jax.jit(f)(x)):
                np.testing.assert_array_equal(np.asarray(got), want)
