"""lax.conv_general_dilated and its wrappers: against a naive numpy convolution over a grid
of dimension numbers, strides, paddings, dilations and group counts; against values pinned
from JAX 0.10.2; gradients against numerical derivatives; vmap against a loop; JAX's
errors."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.test_util import check_grads


def _dilate(x: np.ndarray, dilation, axes) -> np.ndarray:
    for ax, d in zip(axes, dilation):
        if d > 1 and x.shape[ax] > 0:
            shape = list(x.shape)
            shape[ax] = (shape[ax] - 1) * d + 1
            out = np.zeros(shape, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[ax] = slice(None, None, d)
            out[tuple(idx)] = x
            x = out
    return x


def _pad(x: np.ndarray, padding, axes) -> np.ndarray:
    for ax, (lo, hi) in zip(axes, padding):
        widths = [(0, 0)] * x.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(max(-lo, 0), x.shape[ax] - max(-hi, 0))
        x = x[tuple(idx)]
    return x


def np_conv(lhs, rhs, strides, padding, lhs_dilation=None, rhs_dilation=None,
            dimension_numbers=None, feature_group_count=1, batch_group_count=1):
    """A direct numpy convolution (float64 accumulation), as XLA defines it."""
    dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    acc = np.complex128 if np.iscomplexobj(lhs) else np.float64
    x = np.transpose(np.asarray(lhs).astype(acc), dn.lhs_spec)
    w = np.transpose(np.asarray(rhs).astype(acc), dn.rhs_spec)
    nsp = x.ndim - 2
    sp = tuple(range(2, 2 + nsp))
    lhs_dilation = lhs_dilation or (1,) * nsp
    rhs_dilation = rhs_dilation or (1,) * nsp
    if isinstance(padding, str):
        kd = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dilation)]
        padding = lax.padtype_to_pads(x.shape[2:], kd, strides, padding)
    x = _pad(_dilate(x, lhs_dilation, sp), padding, sp)
    w = _dilate(w, rhs_dilation, sp)
    N, C = x.shape[:2]
    O = w.shape[0]
    out_sp = [max((n - k) // s + 1, 0) for n, k, s in zip(x.shape[2:], w.shape[2:], strides)]
    G, B = feature_group_count, batch_group_count
    cg, og, nb, ob = C // G, O // max(G, B), N // B, O // max(G, B)
    out = np.zeros((N // B, O) + tuple(out_sp), acc)

    def contract(win, ker):
        return win.reshape(win.shape[0], ker[0].size) @ ker.reshape(ker.shape[0], -1).T

    for pos in itertools.product(*map(range, out_sp)):
        win = x[(slice(None), slice(None)) + tuple(
            slice(p * s, p * s + k) for p, s, k in zip(pos, strides, w.shape[2:]))]
        for t in range(max(G, B)):
            # feature group t reads channels t*cg.., batch group t reads batch rows t*nb..
            part = (win[:, t * cg:(t + 1) * cg] if G > 1 else
                    win[t * nb:(t + 1) * nb] if B > 1 else win)
            out[(slice(None), slice(t * og, (t + 1) * og)) + pos] = contract(
                part, w[t * og:(t + 1) * og])
    return np.transpose(out, np.argsort(dn.out_spec))


def _rand(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# (lhs shape in canonical N,C,spatial order, kernel O,I,spatial, strides, padding,
#  lhs dilation, rhs dilation, feature groups, batch groups)
_CASES = [
    ((2, 3, 9), (4, 3, 3), (1,), "VALID", None, None, 1, 1),
    ((2, 4, 9), (6, 2, 2), (2,), "SAME", None, (2,), 2, 1),
    ((1, 2, 7), (2, 2, 3), (1,), ((2, -1),), (3,), None, 1, 1),
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), "SAME", None, None, 1, 1),
    ((2, 3, 6, 5), (4, 3, 3, 2), (2, 1), "SAME_LOWER", None, (1, 2), 1, 1),
    ((2, 4, 7, 6), (6, 2, 3, 3), (1, 2), ((1, 2), (0, 1)), (2, 1), None, 2, 1),
    ((4, 3, 5, 5), (6, 3, 2, 2), (1, 1), ((0, 0), (1, 1)), None, None, 1, 2),
    ((2, 4, 5, 5), (4, 1, 3, 3), (1, 1), "SAME", None, None, 4, 1),  # depthwise
    ((1, 2, 3, 4), (3, 2, 5, 5), (1, 1), ((2, 2), (2, 2)), None, None, 1, 1),  # big kernel
    ((0, 2, 5, 5), (3, 2, 3, 3), (1, 1), "SAME", None, None, 1, 1),  # empty batch
    ((2, 2, 4, 4, 3), (3, 2, 2, 3, 2), (1, 2, 1), "SAME", None, (1, 1, 2), 1, 1),  # 3-D
    ((2, 2, 5, 4, 4), (4, 1, 3, 2, 2), (2, 1, 1), ((1, 0), (0, 0), (1, 1)), (1, 2, 1), None,
     2, 1),
]

_LAYOUTS = {1: [None, ("NWC", "WIO", "NWC"), ("CWN", "OWI", "WNC")],
            2: [None, ("NHWC", "HWIO", "NHWC"), ("HNCW", "IHWO", "CWNH")],
            3: [None, ("NDHWC", "DHWIO", "NDHWC")]}


def _to_layout(x, spec_chars, canonical):
    """x in canonical order (chars `canonical`) transposed to the layout `spec_chars`."""
    return np.transpose(x, [canonical.index(c) for c in spec_chars])


def _case_args(case, layout, rng):
    lhs_shape, rhs_shape, strides, padding, ld, rd, fg, bg = case
    nsp = len(lhs_shape) - 2
    x, w = _rand(rng, lhs_shape), _rand(rng, rhs_shape)
    if layout is not None:
        spatial = {2: "HW", 3: "DHW", 1: "W"}[nsp]
        x = _to_layout(x, layout[0], "NC" + spatial)
        w = _to_layout(w, layout[1], "OI" + spatial)
    kwargs = dict(lhs_dilation=ld, rhs_dilation=rd, dimension_numbers=layout,
                  feature_group_count=fg, batch_group_count=bg)
    return x, w, strides, padding, kwargs


@pytest.mark.parametrize("case", _CASES, ids=[f"c{i}" for i in range(len(_CASES))])
def test_conv_against_numpy(case):
    rng = np.random.default_rng(0)
    for layout in _LAYOUTS[len(case[0]) - 2]:
        x, w, strides, padding, kw = _case_args(case, layout, rng)
        want = np_conv(x, w, strides, padding, **kw)
        got = lax.conv_general_dilated(x, w, strides, padding, **kw)
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
        jitted = jax.jit(lambda a, b: lax.conv_general_dilated(a, b, strides, padding, **kw))
        np.testing.assert_allclose(np.asarray(jitted(x, w)), np.asarray(got), rtol=1e-6,
                                   atol=1e-6)


def test_conv_dimension_numbers_object_and_strings_agree():
    rng = np.random.default_rng(1)
    x, w = _rand(rng, (2, 5, 6, 3)), _rand(rng, (3, 2, 3, 4))
    strings = ("NHWC", "HWIO", "NHWC")
    dn = lax.conv_dimension_numbers(x.shape, w.shape, strings)
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    a = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=strings)
    b = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_padtype_to_pads():
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 1), "SAME") == [(1, 1), (0, 1)]
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 1), "SAME_LOWER") == [(1, 1), (1, 0)]
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 1), "valid") == [(0, 0), (0, 0)]
    with pytest.raises(RuntimeError, match="Unrecognized padding type: expected 'VALID', "
                                           "'SAME', or 'SAME_LOWER', got full."):
        lax.padtype_to_pads((5,), (3,), (1,), "full")


# Values from JAX 0.10.2 (every 7th element of the flattened result).
_X = (np.arange(2 * 3 * 5 * 4) % 7 - 3).reshape(2, 3, 5, 4).astype(np.float32) / 4
_W = (np.arange(6 * 3 * 3 * 2) % 5 - 2).reshape(6, 3, 3, 2).astype(np.float32) / 2


def _pinned(v, shape, dtype, values):
    v = np.asarray(v)
    assert v.shape == shape and v.dtype == np.dtype(dtype)
    np.testing.assert_allclose(v.ravel()[::7].astype(np.float64), values, rtol=2e-6, atol=1e-6)


def test_pinned_jax_values():
    _pinned(lax.conv_general_dilated(_X, _W, (2, 1), "SAME", rhs_dilation=(1, 2)),
            (2, 6, 3, 4), np.float32,
            [-2.375, -3.375, 0.625, -1.0, 0.5, 1.0, 0.625, -1.0, 0.75, -0.875, -0.5, 1.0,
             -0.125, 0.375, -1.0, 0.0, 1.5, 1.0, 0.25, 0.375, -0.375])
    _pinned(lax.conv_general_dilated(_X, _W, (1, 2), "SAME_LOWER"), (2, 6, 5, 2), np.float32,
            [-1.125, -1.25, 2.0, 0.25, 0.875, -0.25, -1.5, -1.125, 2.125, -1.5, 0.0, -0.25,
             0.5, 1.25, 1.375, -1.25, -0.75, 0.0])
    _pinned(lax.conv_transpose(_X.transpose(0, 2, 3, 1), _W.transpose(2, 3, 0, 1)[:, :, :3, :],
                               (2, 1), "VALID", transpose_kernel=True),
            (2, 11, 5, 3), np.float32,
            [0.375, 0.0, -0.625, -2.75, -0.25, 1.0, 0.75, -0.875, 0.0, 1.125, 2.375, -1.75,
             0.0, 0.875, 1.0, 0.125, 0.125, -0.125, -3.25, -1.5, 0.875, 0.5, -0.5, -0.875,
             -0.875, 0.0, 0.375, 1.5, -2.0, -2.5, 0.375, -0.125, 0.375, 1.125, 0.25, 0.875,
             -1.75, 1.875, 1.0, -0.5, -0.875, 0.25, 1.125, -1.0, -3.5, 0.125, 0.25, -0.25])
    t = lax.conv_transpose(_X.transpose(0, 2, 3, 1), _W.transpose(2, 3, 1, 0)[:, :, :, :3],
                           (2, 2), "SAME")
    assert t.shape == (2, 10, 8, 3)
    np.testing.assert_allclose(np.asarray(t).ravel()[::7][:12],
                               [0.375, -1.75, -0.25, 0.5, 0.375, -1.75, 0.25, -1.375, 0.125,
                                0.625, 1.125, 0.375])


def test_pinned_jax_gradients():
    def f(a, b):
        return jnp.sum(jnp.tanh(lax.conv_general_dilated(a, b, (2, 1), ((1, 1), (0, 2)),
                                                         rhs_dilation=(1, 2))))
    for grad in (jax.grad(f, argnums=(0, 1)), jax.jit(jax.grad(f, argnums=(0, 1)))):
        gx, gw = grad(_X, _W)
        np.testing.assert_allclose(
            np.asarray(gx).ravel()[::7],
            [-0.35874152, -3.1055255, -4.0987496, -0.4777991, 0.42406982, -4.1330523,
             -0.36088276, 1.0995599, 1.0962847, -0.7272744, -0.3964882, -0.42394805,
             -1.380349, -0.4675132, -0.1592176, 0.1903714, -0.38309586, -0.8075266],
            rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(
            np.asarray(gw).ravel()[::7],
            [-0.03924565, 0.90259206, 0.5015063, -0.6585955, -1.1951042, 0.06011373,
             -0.31115568, 0.38899547, -0.59248227, -1.0291975, -0.01040399, -0.04725033,
             -0.73375785, -0.675274, -0.93006194, -0.42414594], rtol=1e-5, atol=1e-5)


def test_dtypes_pinned():
    xi = (np.arange(12) % 5 - 2).reshape(1, 2, 6).astype(np.int8)
    wi = (np.arange(18) % 3 - 1).reshape(3, 2, 3).astype(np.int8)
    out = lax.conv_general_dilated(xi, wi, (1,), "SAME", preferred_element_type=jnp.int32)
    _pinned(out, (1, 3, 6), np.int32, [-1, 4, 4])
    np.testing.assert_array_equal(np.asarray(out), np_conv(xi, wi, (1,), "SAME"))
    _pinned(lax.conv_general_dilated(xi > 0, wi > 0, (1,), "VALID"), (1, 3, 4), np.bool_,
            [1, 0])
    bf = lax.conv_general_dilated(_X.astype(ml_dtypes.bfloat16), _W.astype(ml_dtypes.bfloat16),
                                  (1, 1), "VALID")
    _pinned(bf, (2, 6, 3, 3), ml_dtypes.bfloat16,
            [1.625, 0.875, -2.125, -2.125, 1.25, 1.875, -1.125, -1.125, -1.5, 2.0, -2.125,
             -1.25, 1.25, 2.125, -1.5, -1.125])
    rng = np.random.default_rng(2)
    x, w = _rand(rng, (2, 3, 5, 4)), _rand(rng, (4, 3, 2, 2))
    xc = (x + 1j * _rand(rng, x.shape)).astype(np.complex64)
    for a, b, tol in ((x.astype(np.float16), w.astype(np.float16), 1e-2),
                      (xc, w.astype(np.complex64), 1e-4)):
        got = lax.conv_general_dilated(a, b, (1, 1), "SAME")
        assert got.dtype == a.dtype
        np.testing.assert_allclose(np.asarray(got).astype(np.complex128),
                                   np_conv(a, b, (1, 1), "SAME"), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", [_CASES[i] for i in (1, 2, 5, 6, 7, 11)],
                         ids=["fg", "lhs_dil", "fg2d", "bg", "depthwise", "3d"])
def test_conv_gradients_numerical(case, x64):
    rng = np.random.default_rng(3)
    x, w, strides, padding, kw = _case_args(case, None, rng)
    x, w = x.astype(np.float64), w.astype(np.float64)
    check_grads(lambda a, b: lax.conv_general_dilated(a, b, strides, padding, **kw), (x, w),
                order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("layout", [None, ("NHWC", "HWIO", "NHWC")])
@pytest.mark.parametrize("groups", [(1, 1), (2, 1), (1, 2)])
def test_vmap_matches_loop(layout, groups):
    fg, bg = groups
    rng = np.random.default_rng(4)
    x = _rand(rng, (3, 2, 4, 5, 4))   # batch of N=2, C=4, 5x4 (canonical)
    w = _rand(rng, (3, 4, 4 // fg, 3, 2))
    if layout is not None:
        x, w = x.transpose(0, 1, 3, 4, 2), w.transpose(0, 3, 4, 2, 1)

    def f(a, b):
        return lax.conv_general_dilated(a, b, (1, 2), ((1, 0), (1, 1)), rhs_dilation=(2, 1),
                                        dimension_numbers=layout, feature_group_count=fg,
                                        batch_group_count=bg)
    for axes, args in (((0, None), (x, w[0])), ((None, 0), (x[0], w)), ((0, 0), (x, w))):
        got = jax.vmap(f, in_axes=axes)(*args)
        want = np.stack([np.asarray(f(*(a if ax is None else a[i] for a, ax in zip(args, axes))))
                         for i in range(3)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_per_example_gradients():
    """vmap(grad) of a small conv net: per-example kernel gradients (batched kernel cotangents
    become batch groups)."""
    rng = np.random.default_rng(5)
    x, w = _rand(rng, (4, 6, 6, 2)), _rand(rng, (3, 3, 2, 3))
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(w, xi):
        y = lax.conv_general_dilated(xi[None], w, (1, 1), "SAME", dimension_numbers=dn)
        return jnp.sum(jnp.tanh(y))
    got = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0)))(w, x)
    want = np.stack([np.asarray(jax.grad(loss)(w, x[i])) for i in range(4)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_conv_wrappers():
    rng = np.random.default_rng(6)
    x, w = _rand(rng, (2, 3, 6, 5)), _rand(rng, (4, 3, 3, 2))
    np.testing.assert_allclose(np.asarray(lax.conv(x, w, (1, 2), "SAME")),
                               np_conv(x, w, (1, 2), "SAME"), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        np.asarray(lax.conv_with_general_padding(x, w, (1, 1), ((1, 0), (0, 2)), (2, 1), (1, 2))),
        np_conv(x, w, (1, 1), ((1, 0), (0, 2)), (2, 1), (1, 2)), rtol=1e-4, atol=1e-4)
    # conv_transpose is the gradient of a strided conv with respect to its input.
    xt, wt = _rand(rng, (2, 4, 4, 3)), _rand(rng, (3, 3, 5, 3))
    dn = ("NHWC", "HWIO", "NHWC")
    fwd = lambda a: lax.conv_general_dilated(a, wt, (2, 2), "SAME", dimension_numbers=dn)
    _, vjp = jax.vjp(fwd, np.zeros((2, 8, 8, 5), np.float32))
    want = vjp(xt)[0]
    got = lax.conv_transpose(xt, wt, (2, 2), "SAME", dimension_numbers=dn, transpose_kernel=True)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def _raises(exc, msg, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == msg


def test_errors_match_jax():
    x, w = np.ones((1, 4, 5, 5), np.float32), np.ones((6, 2, 3, 3), np.float32)
    cg = lax.conv_general_dilated
    _raises(ValueError, "conv_general_dilated feature_group_count must divide lhs feature "
            "dimension size, but 3 does not divide 4.",
            lambda: cg(x, w, (1, 1), "SAME", feature_group_count=3))
    _raises(ValueError, "conv_general_dilated lhs feature dimension size divided by "
            "feature_group_count must equal the rhs input feature dimension size, but 4 // 1 "
            "!= 2.", lambda: cg(x, w, (1, 1), "SAME"))
    _raises(ValueError, "conv_general_dilated rhs output feature dimension size must be a "
            "multiple of feature_group_count, but 6 is not a multiple of 4.",
            lambda: cg(np.ones((1, 4, 5, 5), np.float32), np.ones((6, 1, 3, 3), np.float32),
                       (1, 1), "SAME", feature_group_count=4))
    _raises(ValueError, "conv_general_dilated batch_group_count must divide lhs batch "
            "dimension size, but 2 does not divide 1.",
            lambda: cg(x, np.ones((6, 4, 3, 3), np.float32), (1, 1), "SAME",
                       batch_group_count=2))
    _raises(TypeError, "convolution requires lhs and rhs ndim to be equal, got 4 and 3.",
            lambda: cg(x, np.ones((6, 4, 3), np.float32), (1, 1), "SAME"))
    _raises(TypeError, "lax.conv_general_dilated requires arguments to have the same dtypes, "
            "got float32, int32.",
            lambda: cg(x, np.ones((6, 4, 3, 3), np.int32), (1, 1), "SAME"))
    _raises(ValueError, "Negative padding is larger than the size of the corresponding "
            "dimension: got padding=((-3, -3), (0, 0)) for lhs_shape[2:]=(np.int64(5), np.int64(5))",
            lambda: cg(x, np.ones((6, 4, 3, 3), np.float32), (1, 1), ((-3, -3), (0, 0))))
    _raises(TypeError, "convolution dimension_numbers[1] must contain the characters 'O' and "
            "'I' exactly once, got HWIX.",
            lambda: cg(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIX", "NHWC")))
    _raises(TypeError, "convolution dimension_numbers elements must each have the same set of "
            "spatial characters, got ('NHWC', 'HWIO', 'NHXC').",
            lambda: cg(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHXC")))
    _raises(ValueError, "conv_general_dilated window and window_strides must have the same "
            "number of dimensions, but got 2 and 1",
            lambda: cg(x, np.ones((6, 4, 3, 3), np.float32), (1,), ((0, 0), (0, 0))))
    _raises(ValueError, "String padding is not implemented for transposed convolution using "
            "this op. Please either exactly specify the required padding or use "
            "conv_transpose.", lambda: cg(x, w, (1, 1), "SAME", lhs_dilation=(2, 1)))


def test_seed_003_convolutions_example(capsys):
    """examples/convolutions.py (seed 003) prints what the same program prints on JAX 0.10.2."""
    import pathlib
    import runpy
    path = pathlib.Path(__file__).parent.parent / "examples" / "convolutions.py"
    runpy.run_path(str(path), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:] == [
        "lax.conv SAME: (1, 3, 200, 198)", "lax.conv VALID: (1, 3, 198, 196)",
        "strided, explicit padding: (1, 3, 101, 100)",
        "rhs (atrous) dilation 12: (1, 3, 176, 174)",
        "lhs (transposed) dilation 2: (1, 3, 401, 397)",
        "dimension numbers: ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), "
        "out_spec=(0, 3, 1, 2))",
        "NHWC result: (1, 200, 198, 3) edges found: 684",
        "1-d derivative: [-2. -2. -2. -2. -2. -2. -2. -2.]",
        "3-d box filter: (1, 6, 6, 6, 1) 4096.0"]
    first = [float(w) for w in lines[0].split()[-3::2]]
    np.testing.assert_allclose(first, [0.19745782017707825, 0.047099094837903976], rtol=1e-5)
    second = [float(w) for w in lines[1].split()[-3::2]]
    np.testing.assert_allclose(second, [0.24181267619132996, 0.18718352913856506], rtol=1e-5)


@pytest.mark.parametrize("groups", [1, 2])
def test_kernel_gradient_of_large_images(groups):
    """A kernel's gradient over a large image (few outputs, a long reduction: the kernel
    splits the reduction across threads) against the numpy sum of shifted products."""
    rng = np.random.default_rng(7)
    x = _rand(rng, (3, 24, 20, 4))
    w = _rand(rng, (3, 3, 4 // groups, 6))
    ct = _rand(rng, (3, 24, 20, 6))
    dn = ("NHWC", "HWIO", "NHWC")
    f = lambda w: jnp.sum(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn,
                                                   feature_group_count=groups) * ct)
    got = np.asarray(jax.jit(jax.grad(f))(w))
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))).astype(np.float64)
    cg, og = 4 // groups, 6 // groups
    want = np.zeros(w.shape)
    for i in range(3):
        for j in range(3):
            win = xp[:, i:i + 24, j:j + 20, :]
            for g in range(groups):
                want[i, j, :, g * og:(g + 1) * og] = np.einsum(
                    "nhwc,nhwo->co", win[..., g * cg:(g + 1) * cg], ct[..., g * og:(g + 1) * og])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
