"""vmap: every primitive and a broad set of jnp functions against a Python loop over the
batch, the seeds' cases, nested vmap, composition with jit, printed jaxprs and error
texts pinned from JAX 0.10.2, and the executable cache."""
import functools

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import errors, lax, vmap
from tinyxla._src.interpreters import batching, caches
from tinyxla._src.lax import lax as lax_internal
from tinyxla._src.tree_util import tree_flatten

B = 3  # the batch size of most cases


def _slice(a, i, axis):
    return jnp.asarray(np.take(np.asarray(a), i, axis=axis))


def loop(f, args, in_axes=0, out_axes=0):
    """The reference: f on each example, results stacked along out_axes."""
    if not isinstance(in_axes, tuple):
        in_axes = (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = [f(*[a if ax is None else _slice(a, i, ax) for a, ax in zip(args, in_axes)])
            for i in range(n)]
    if not isinstance(out_axes, tuple):
        out_axes = (out_axes,) * len(tree_flatten(outs[0])[0])
    leaves = [tree_flatten(o)[0] for o in outs]
    stacked = [ys[0] if ax is None else np.stack([np.asarray(y) for y in ys], axis=ax)
               for ax, ys in zip(out_axes, zip(*leaves))]
    return tree_flatten(outs[0])[1].unflatten(stacked)


def check(f, args, in_axes=0, out_axes=0, exact=True):
    got = vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
    want = loop(f, args, in_axes, out_axes)
    for g, w in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape, (g.shape, w.shape)
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)
    return got


def batched(shape, axis, dtype=np.float32, low=-2.0, high=2.0, seed=0):
    """A random array of per-example ``shape`` with the batch axis at ``axis``."""
    shape = list(shape)
    shape.insert(axis if axis >= 0 else len(shape) + axis + 1, B)
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


AXES = [0, 1, -1]

# ---------------------------------------------------------------------------------------
# Elementwise primitives.

UNARY = [
    (lax.neg, -2, 2), (lax.sign, -2, 2), (lax.floor, -2, 2), (lax.ceil, -2, 2),
    (lax.round, -2, 2), (lax.is_finite, -2, 2), (lax.exp, -2, 2), (lax.exp2, -2, 2),
    (lax.log, 0.1, 2), (lax.log1p, 0.1, 2), (lax.expm1, -2, 2), (lax.tanh, -2, 2),
    (lax.logistic, -2, 2), (lax.sin, -2, 2), (lax.cos, -2, 2), (lax.tan, -1, 1),
    (lax.asin, -0.9, 0.9), (lax.acos, -0.9, 0.9), (lax.atan, -2, 2), (lax.sinh, -2, 2),
    (lax.cosh, -2, 2), (lax.asinh, -2, 2), (lax.acosh, 1.1, 3), (lax.atanh, -0.9, 0.9),
    (lax.sqrt, 0.1, 2), (lax.rsqrt, 0.1, 2), (lax.cbrt, -2, 2), (lax.abs, -2, 2),
    (lax.square, -2, 2), (lax.erf, -2, 2), (lax.erfc, -2, 2), (lax.erf_inv, -0.9, 0.9),
    (lax.lgamma, 0.1, 3), (lax.digamma, 0.1, 3), (lax.stop_gradient, -2, 2),
    (functools.partial(lax.integer_pow, y=3), -2, 2),
    (functools.partial(lax.convert_element_type, new_dtype=jnp.int32), -5, 5),
    (lax_internal._array_copy, -2, 2),
]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("fun,low,high", UNARY,
                         ids=[getattr(f, "__name__", getattr(f, "func", f).__name__)
                              for f, _, _ in UNARY])
def test_unary(fun, low, high, axis):
    check(fun, (batched((4, 5), axis, low=low, high=high),), axis, exact=False)


@pytest.mark.parametrize("fun", [lax.real, lax.imag, lax.conj, lax.abs, lax.exp])
def test_unary_complex(fun):
    check(fun, (batched((4,), 1, np.complex64),), 1, exact=False)


@pytest.mark.parametrize("fun", [lax.population_count, lax.clz, lax.bitwise_not])
def test_unary_int(fun):
    check(fun, (batched((4,), -1, np.int32, -100, 100),), -1)


@pytest.mark.parametrize("axis", AXES)
def test_bitcast_convert_type(axis):
    check(lambda x: lax.bitcast_convert_type(x, jnp.int32), (batched((2, 4), axis),), axis)
    # Narrowing adds a trailing axis; widening consumes one (the batch axis may be last).
    check(lambda x: lax.bitcast_convert_type(x, jnp.uint8), (batched((2, 4), axis),), axis)
    x8 = batched((2, 4), axis, np.uint8, 0, 255)
    check(lambda x: lax.bitcast_convert_type(x, jnp.uint32), (x8,), axis)


BINARY = [lax.add, lax.sub, lax.mul, lax.div, lax.rem, lax.max, lax.min, lax.atan2,
          lax.nextafter, lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge, lax.pow, lax.complex]
INT_BINARY = [lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lax.shift_left,
              lax.shift_right_arithmetic, lax.shift_right_logical, lax.add, lax.mul, lax.div]
AXIS_PAIRS = [(0, 0), (0, None), (None, 1), (1, -1), (-1, 0), (1, 1)]


@pytest.mark.parametrize("axes", AXIS_PAIRS)
@pytest.mark.parametrize("fun", BINARY, ids=[f.__name__ for f in BINARY])
def test_binary(fun, axes):
    x = batched((4, 5), axes[0] or 0, low=0.5, high=2.0, seed=1)
    y = batched((4, 5), axes[1] or 0, low=0.5, high=2.0, seed=2)
    x = x if axes[0] is not None else x[(slice(None),) * 0 + (0,)]
    y = y if axes[1] is not None else y[0]
    check(fun, (x, y), axes, exact=False)


@pytest.mark.parametrize("axes", AXIS_PAIRS)
@pytest.mark.parametrize("fun", INT_BINARY, ids=[f.__name__ for f in INT_BINARY])
def test_binary_int(fun, axes):
    x = batched((4, 5), axes[0] or 0, np.int32, 1, 30, seed=1)
    y = batched((4, 5), axes[1] or 0, np.int32, 1, 5, seed=2)
    x = x if axes[0] is not None else x[0]
    y = y if axes[1] is not None else y[0]
    check(fun, (x, y), axes)


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (1, None)])
def test_binary_with_scalar_per_example(axes):
    # A batched scalar per example against a non-scalar: the scalar side broadcasts.
    x = batched((), 0) if axes[0] == 0 else batched((4,), axes[0] or 0)
    y = batched((4,), 0, seed=3)[0] if axes[1] is None else batched((), 0, seed=3)
    if axes == (None, 0):
        x, y = batched((4,), 0, seed=4)[0], batched((), 0, seed=5)
    check(lax.add, (x, y), axes, exact=False)
    check(lambda a, b: lax.mul(a, b), (x, y), axes, exact=False)


def test_binary_python_scalars_and_pow_int_exponent():
    x = batched((4,), 0)
    check(lambda a: lax.mul(a, 2.0), (x,))
    check(lambda a: lax.pow(a, jnp.int32(3)), (x,), exact=False)
    check(lambda a, n: lax.pow(a, n), (x, np.arange(B, dtype=np.int32)), exact=False)
    check(lambda a: lax.mul(a, jnp.float32(3), out_dtype=jnp.float32), (x,))


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (None, 0, 1), (0, None, 0), (0, 1, None),
                                     (1, None, None), (None, None, 0)])
def test_select_n(in_axes):
    which = batched((4, 5), in_axes[0] or 0, np.bool_)
    a = batched((4, 5), in_axes[1] or 0, seed=1)
    b = batched((4, 5), in_axes[2] or 0, seed=2)
    args = [arr if ax is not None else np.take(arr, 0, axis=0)
            for arr, ax in zip((which, a, b), in_axes)]
    check(lax.select, args, in_axes)


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (0, None, 1), (None, 0, 1), (0, 1, None)])
def test_select_n_scalar_which(in_axes):
    # `which` is a scalar per example (batched) or an unbatched scalar.
    which = np.array([True, False, True]) if in_axes[0] == 0 else np.bool_(True)
    a = batched((4,), in_axes[1] or 0, seed=1)
    b = batched((4,), in_axes[2] or 0, seed=2)
    args = [w if ax is not None else (np.take(w, 0, axis=0) if np.ndim(w) > 1 else w)
            for w, ax in zip((which, a, b), in_axes)]
    check(lax.select, args, in_axes)
    # scalar cases with batched which
    if in_axes[0] == 0:
        check(lambda w, x, y: lax.select(w, x, y), (which, np.float32(1), np.float32(2)),
              (0, None, None))
    check(lambda w, x, y: lax.select_n(w, x, y), (np.arange(B, dtype=np.int32) % 2,
                                                   batched((), 0), np.float32(7)), (0, 0, None))


@pytest.mark.parametrize("in_axes", [(None, 0, None), (0, 0, 0), (0, 1, None), (None, 1, 0),
                                     (0, None, 0)])
def test_clamp(in_axes):
    lo = batched((4,), 0, low=-2, high=-0.5, seed=1)
    x = batched((4,), in_axes[1] or 0, seed=2)
    hi = batched((4,), 0, low=0.5, high=2, seed=3)
    args = [lo if in_axes[0] is not None else np.float32(-0.5),
            x if in_axes[1] is not None else x[0],
            hi if in_axes[2] is not None else np.float32(0.7)]
    check(lax.clamp, args, in_axes)
    # per-example scalar bounds
    check(lax.clamp, (batched((), 0, low=-1, high=0), batched((4,), 0),
                      batched((), 0, low=0, high=1)), 0)


# ---------------------------------------------------------------------------------------
# Reductions, shapes, slicing, dot.

REDUCERS = [lax.reduce_sum, lax.reduce_prod, lax.reduce_max, lax.reduce_min]
LOGICAL = [lax.reduce_and, lax.reduce_or, lax.reduce_xor]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1), ()])
@pytest.mark.parametrize("fun", REDUCERS + LOGICAL,
                         ids=[f.__name__ for f in REDUCERS + LOGICAL])
def test_reductions(fun, axes, axis):
    dtype = np.bool_ if fun in LOGICAL else np.float32
    check(lambda x: fun(x, axes), (batched((4, 5), axis, dtype),), axis, exact=False)


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("fun", [lax.argmax, lax.argmin])
def test_argminmax(fun, axis):
    x = batched((4, 5), axis)
    check(lambda v: fun(v, 0, jnp.int32), (x,), axis)
    check(lambda v: fun(v, 1, jnp.int32), (x,), axis)


@pytest.mark.parametrize("axis", AXES)
def test_reshape_transpose_broadcast_squeeze(axis):
    x = batched((4, 6), axis)
    check(lambda v: lax.reshape(v, (2, 12)), (x,), axis)
    check(lambda v: lax.reshape(v, (6, 4), dimensions=(1, 0)), (x,), axis)
    check(lambda v: lax.transpose(v, (1, 0)), (x,), axis)
    check(lambda v: lax.broadcast_in_dim(v, (2, 4, 6), (1, 2)), (x,), axis)
    check(lambda v: lax.broadcast_in_dim(v, (4, 3, 6), (0, 2)), (x,), axis)
    check(lambda v: lax.broadcast(v, (2,)), (x,), axis)
    check(lambda v: lax.squeeze(lax.expand_dims(v, (1,)), (1,)), (x,), axis)
    x1 = batched((4, 1, 6), axis)
    check(lambda v: lax.squeeze(v, (1,)), (x1,), axis)
    check(lambda v: lax.expand_dims(v, (0, 3)), (x,), axis)


@pytest.mark.parametrize("axis", AXES)
def test_slice_rev_pad_concatenate(axis):
    x = batched((5, 6), axis)
    check(lambda v: lax.slice(v, (1, 0), (4, 5)), (x,), axis)
    check(lambda v: lax.slice(v, (0, 1), (5, 6), (2, 3)), (x,), axis)
    check(lambda v: lax.rev(v, (0,)), (x,), axis)
    check(lambda v: lax.rev(v, (0, 1)), (x,), axis)
    check(lambda v: lax.pad(v, 0.5, ((1, 2, 0), (0, 0, 1))), (x,), axis)
    check(lambda v: lax.pad(v, -1.0, ((-1, 2, 1), (2, -2, 0))), (x,), axis)
    y = batched((2, 6), 0, seed=4)
    check(lambda v, w: lax.concatenate([v, w, v], 0), (x, y), (axis, 0))
    check(lambda v, w: lax.concatenate([v, w], 0), (x, y[0]), (axis, None))
    check(lambda v, w: lax.concatenate([w, v], 1), (x, np.ones((5, 2), np.float32)), (axis, None))


def test_pad_batched_padding_value():
    x = batched((4,), 0)
    vals = np.array([7.0, 8.0, 9.0], np.float32)
    check(lambda v, p: lax.pad(v, p, ((1, 2, 1),)), (x, vals), (0, 0))
    check(lambda v, p: lax.pad(v, p, ((1, 2, 1),)), (x[0], vals), (None, 0))
    check(lambda v, p: lax.pad(v, p, ((0, 1, 0), (1, 0, 0))), (batched((2, 3), 1), vals), (1, 0))


@pytest.mark.parametrize("axis", AXES)
def test_dynamic_slice(axis):
    x = batched((6, 5), axis, np.int32, 0, 100)
    check(lambda v: lax.dynamic_slice(v, (jnp.int32(1), jnp.int32(2)), (3, 2)), (x,), axis)
    # batched start indices, including ones the slice must be clamped for
    i = np.array([0, 4, -1], np.int32)
    j = np.array([3, 0, 9], np.int32)
    check(lambda v, a, b: lax.dynamic_slice(v, (a, b), (2, 2)), (x, i, j), (axis, 0, 0))
    check(lambda v, a: lax.dynamic_slice(v, (a, jnp.int32(1)), (3, 4)), (x, i), (axis, 0))
    check(lambda v, a: lax.dynamic_slice(v, (a, jnp.int32(1)), (3, 4)),
          (np.take(x, 0, axis), i), (None, 0))
    xb = batched((6,), 0, np.bool_)
    check(lambda v, a: lax.dynamic_slice(v, (a,), (2,)), (xb, i), (0, 0))
    check(lambda v, a: v[a], (x, i), (axis, 0))


@pytest.mark.parametrize("axis", AXES)
def test_dynamic_update_slice(axis):
    x = batched((6, 5), axis, np.int32, 0, 100)
    u = batched((2, 3), axis, np.int32, 100, 200, seed=1)
    u0 = np.take(u, 0, axis)
    one, two = jnp.int32(1), jnp.int32(2)
    check(lambda v, w: lax.dynamic_update_slice(v, w, (one, two)), (x, u), (axis, axis))
    check(lambda v: lax.dynamic_update_slice(v, u0, (one, two)), (x,), axis)
    check(lambda w: lax.dynamic_update_slice(np.take(x, 0, axis), w, (one, two)), (u,), axis)
    # batched start indices, including ones the update must be clamped for
    i = np.array([0, 5, -1], np.int32)
    j = np.array([3, 0, 9], np.int32)
    check(lambda v, w, a, b: lax.dynamic_update_slice(v, w, (a, b)), (x, u, i, j),
          (axis, axis, 0, 0))
    check(lambda v, a: lax.dynamic_update_slice(v, u0, (a, one)), (x, i), (axis, 0))
    check(lambda w, b: lax.dynamic_update_slice(np.take(x, 0, axis), w, (two, b)), (u, j),
          (axis, 0))
    xb, ub = batched((6,), 0, np.bool_), batched((2,), 0, np.bool_, seed=3)
    check(lambda v, w, a: lax.dynamic_update_slice(v, w, (a,)), (xb, ub, i), (0, 0, 0))


_ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                   start_index_map=(0,))
_ELEMS = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1),
                                    start_index_map=(0, 1))
_ROWS_S = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather(axis, mode):
    x = batched((6, 5), axis)
    i = batched((4, 1), axis, np.int32, -2, 8, seed=1)
    e = batched((3, 2), axis, np.int32, -1, 7, seed=2)
    rows = lambda v, j: lax.gather(v, j, _ROWS, (1, 5), mode=mode)
    elems = lambda v, j: lax.gather(v, j, _ELEMS, (1, 1), mode=mode)
    for f, idx in ((rows, i), (elems, e)):
        check(f, (x, idx), (axis, axis))
        check(f, (x, np.take(idx, 0, axis)), (axis, None))
        check(f, (np.take(x, 0, axis), idx), (None, axis))


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("scatter", [lax.scatter, lax.scatter_add, lax.scatter_mul,
                                     lax.scatter_min, lax.scatter_max])
def test_scatter(axis, scatter):
    x = batched((6, 5), axis, np.int32, -5, 5)
    i = batched((4, 1), axis, np.int32, -2, 8, seed=1)  # duplicates and out-of-bounds rows
    u = batched((4, 5), axis, np.int32, -5, 5, seed=2)
    f = lambda v, j, w: scatter(v, j, w, _ROWS_S)
    check(f, (x, i, u), (axis, axis, axis))
    check(f, (x, np.take(i, 0, axis), u), (axis, None, axis))
    check(f, (np.take(x, 0, axis), i, u), (None, axis, axis))
    check(f, (x, i, np.take(u, 0, axis)), (axis, axis, None))
    check(f, (np.take(x, 0, axis), np.take(i, 0, axis), u), (None, None, axis))


DOT_CASES = [
    # per-example lhs shape, rhs shape, dimension numbers
    ((4,), (4,), (((0,), (0,)), ((), ()))),
    ((3, 4), (4,), (((1,), (0,)), ((), ()))),
    ((3, 4), (4, 2), (((1,), (0,)), ((), ()))),
    ((4, 3), (4, 2), (((0,), (0,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (4, 2), (((2,), (0,)), ((1,), (1,)))),
]


@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0), (1, -1), (-1, 1), (None, -1)])
@pytest.mark.parametrize("case", range(len(DOT_CASES)))
def test_dot_general(case, axes):
    ls, rs, dims = DOT_CASES[case]
    lhs = batched(ls, axes[0] if axes[0] is not None else 0, seed=1)
    rhs = batched(rs, axes[1] if axes[1] is not None else 0, seed=2)
    lhs = lhs if axes[0] is not None else np.take(lhs, 0, axis=0)
    rhs = rhs if axes[1] is not None else np.take(rhs, 0, axis=0)
    check(lambda a, b: lax.dot_general(a, b, dims), (lhs, rhs), axes, exact=False)


def test_dot_general_is_one_matmul():
    # One batched operand: the batch axis becomes a free axis of a single dot_general.
    w = np.ones(5, np.float32)
    text = str(jax.make_jaxpr(vmap(lambda x: jnp.dot(w, x)))(np.ones((7, 5), np.float32)))
    assert text.count("dot_general") == 1 and "f32[7] = dot_general" in text
    text = str(jax.make_jaxpr(vmap(jnp.matmul))(np.ones((7, 2, 3), np.float32),
                                                np.ones((7, 3, 4), np.float32)))
    assert text.count("dot_general") == 1
    assert "dimension_numbers=(([2], [1]), ([0], [0]))" in text


def test_iota_and_constants_inside_vmap():
    check(lambda x: x + lax.iota(jnp.float32, 4), (batched((4,), 0),))
    check(lambda x: x * jnp.arange(4.0) + jnp.ones(4), (batched((4,), 1),), 1)
    check(lambda x: jnp.zeros(3), (batched((4,), 0),))


# ---------------------------------------------------------------------------------------
# jnp functions.

JNP_UNARY = [
    jnp.sum, jnp.mean, jnp.max, jnp.min, jnp.prod, jnp.argmax, jnp.argmin, jnp.std,
    jnp.var, jnp.ptp, jnp.ravel, jnp.transpose, jnp.flip, jnp.exp, jnp.tanh, jnp.abs,
    jnp.sign, jnp.round, jnp.floor, jnp.square, jnp.sqrt, jnp.isnan, jnp.all, jnp.any,
    jnp.nansum, jnp.nanmean, jnp.atleast_3d, jnp.matrix_transpose, jnp.sinc,
    lambda x: jnp.sum(x, axis=0), lambda x: jnp.max(x, axis=1, keepdims=True),
    lambda x: jnp.mean(x, axis=-1), lambda x: jnp.argmax(x, axis=0),
    lambda x: jnp.reshape(x, (-1,)), lambda x: x.reshape(2, -1), lambda x: x.T,
    lambda x: jnp.swapaxes(x, 0, 1), lambda x: jnp.moveaxis(x, 0, -1),
    lambda x: jnp.expand_dims(x, 1), lambda x: jnp.squeeze(x[None]),
    lambda x: jnp.clip(x, -0.5, 0.5), lambda x: jnp.where(x > 0, x, 0.0),
    lambda x: jnp.concatenate([x, x * 2], axis=1), lambda x: jnp.stack([x, x], axis=-1),
    lambda x: jnp.hstack([x, x]), lambda x: jnp.vstack([x, x]), lambda x: x[1],
    lambda x: x[:, ::2], lambda x: x[::-1, 1:3], lambda x: x[None, ..., 0],
    lambda x: jnp.broadcast_to(x, (2, 4, 6)), lambda x: jnp.outer(x[0], x[1]),
    lambda x: x @ x.T, lambda x: jnp.dot(x, jnp.ones(6)), lambda x: jnp.tensordot(x, x, 2),
    lambda x: jnp.inner(x, x), lambda x: jnp.vdot(x, x), lambda x: x.astype(jnp.int32),
    lambda x: jnp.logaddexp(x, 1.0), lambda x: jnp.hypot(x, x), lambda x: x % 0.7,
    lambda x: x // 0.3, lambda x: jnp.maximum(x, 0.1), lambda x: jnp.isclose(x, 0.5),
    lambda x: jnp.array([jnp.min(x), jnp.max(x)]), lambda x: jnp.cbrt(x) + jnp.log1p(x * x),
]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("k", range(len(JNP_UNARY)))
def test_jnp_functions(k, axis):
    check(JNP_UNARY[k], (batched((4, 6), axis),), axis, exact=False)


JNP_BINARY = [jnp.add, jnp.multiply, jnp.divide, jnp.power, jnp.arctan2, jnp.maximum,
              jnp.where, jnp.dot, jnp.matmul, jnp.equal, jnp.copysign,
              lambda a, b: jnp.concatenate([a, b]), lambda a, b: jnp.stack([a, b]),
              lambda a, b: jnp.sum(a * b, axis=0), lambda a, b: a[b.astype(jnp.int32)[0, 0] % 4]]


@pytest.mark.parametrize("axes", AXIS_PAIRS)
@pytest.mark.parametrize("k", range(len(JNP_BINARY)))
def test_jnp_binary(k, axes):
    f = JNP_BINARY[k]
    if f is jnp.where:
        f = lambda a, b: jnp.where(a > 1.0, a, b)
    x = batched((4, 4), axes[0] or 0, low=0.5, high=2, seed=1)
    y = batched((4, 4), axes[1] or 0, low=0.5, high=3, seed=2)
    x = jnp.asarray(x if axes[0] is not None else x[0])
    y = jnp.asarray(y if axes[1] is not None else y[0])
    check(f, (x, y), axes, exact=False)


# ---------------------------------------------------------------------------------------
# in_axes / out_axes, pytrees, kwargs, axis_size, nesting.

def test_seed_in_axes_tuple():
    def f(a, b, c):
        return a + b + c
    a = np.arange(6).reshape((2, 3)) + 10
    c = np.arange(6).reshape((3, 2)) + 20
    out = vmap(f, in_axes=(0, None, 1))(a, 2, c)
    assert out.dtype == jnp.int32
    np.testing.assert_array_equal(out, [[32, 35, 38], [36, 39, 42]])
    assert str(jax.make_jaxpr(vmap(f, in_axes=(0, None, 1)))(a, 2, c)) == (
        "{ lambda ; a:i32[2,3] b:i32[] c:i32[3,2]. let\n"
        "    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
        "    e:i32[2,3] = add a d\n"
        "    f:i32[2,3] = transpose[permutation=(1, 0)] c\n"
        "    g:i32[2,3] = add e f\n"
        "  in (g,) }")


def test_seed_min_max():
    def f(x):
        return jnp.array([jnp.min(x), jnp.max(x)])
    bx = np.arange(24).reshape((4, 2, 3))
    np.testing.assert_array_equal(vmap(f)(bx), [[0, 5], [6, 11], [12, 17], [18, 23]])
    np.testing.assert_array_equal(jax.jit(vmap(f))(bx), vmap(f)(bx))
    np.testing.assert_array_equal(vmap(jax.jit(f))(bx), vmap(f)(bx))
    # JAX 0.10.2 prints reduce_min[axes=(np.int64(1), np.int64(2))] and hides the
    # broadcast_in_dim shape; the equations are the same.
    assert str(jax.make_jaxpr(vmap(f))(bx)) == (
        "{ lambda ; a:i32[4,2,3]. let\n"
        "    b:i32[4] = reduce_min[axes=(1, 2)] a\n"
        "    c:i32[4] = reduce_max[axes=(1, 2)] a\n"
        "    d:i32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b\n"
        "    e:i32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c\n"
        "    f:i32[4,2] = concatenate[dimension=1] d e\n"
        "  in (f,) }")
    text = str(jax.make_jaxpr(jax.jit(vmap(f)))(bx))
    assert text.startswith("{ lambda ; a:i32[4,2,3]. let\n    b:i32[4,2] = jit[\n      name=f\n")
    assert "reduce_min[axes=(1, 2)]" in text and "concatenate[dimension=1]" in text
    assert str(jax.make_jaxpr(vmap(jax.jit(f)))(bx)) == text


def test_make_jaxpr_pins():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    # JAX 0.10.2 prints the reduce_sum axes as (np.int64(2),); the equations are the same.
    assert str(jax.make_jaxpr(vmap(vmap(lambda v: jnp.sin(v).sum())))(x)) == (
        "{ lambda ; a:f32[2,3,4]. let\n"
        "    b:f32[2,3,4] = sin a\n"
        "    c:f32[2,3] = reduce_sum[axes=(2,) out_sharding=None] b\n"
        "  in (c,) }")
    assert str(jax.make_jaxpr(vmap(lambda v: v.T * 2.0, in_axes=2, out_axes=1))(x)) == (
        "{ lambda ; a:f32[2,3,4]. let\n"
        "    b:f32[4,3,2] = transpose[permutation=(2, 1, 0)] a\n"
        "    c:f32[4,3,2] = mul b 2.0:f32[]\n"
        "    d:f32[3,4,2] = transpose[permutation=(1, 0, 2)] c\n"
        "  in (d,) }")


def test_seed_logistic_regression():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(2,)).astype(np.float32)
    X = rng.normal(size=(3, 2)).astype(np.float32)

    def sigmoid(x):
        return 0.5 * (jnp.tanh(x / 2.) + 1)

    def predict_single(x):
        return sigmoid(jnp.dot(w, x))

    def predict_batch(X):
        return sigmoid(jnp.dot(X, w))

    np.testing.assert_allclose(vmap(predict_single)(X), predict_batch(X), rtol=1e-6)
    np.testing.assert_allclose(vmap(predict_single)(X), [predict_single(x) for x in X],
                               rtol=1e-6)


def test_in_axes_forms():
    x = batched((4, 5), 1)
    check(jnp.sum, (x,), 1)
    check(jnp.sum, (x,), -2)
    assert vmap(jnp.sum, in_axes=[1])(x).shape == (B,)  # a list is taken as a tuple
    # pytree prefixes
    d = {"a": batched((4,), 0), "b": batched((2,), 1, seed=3)}
    out = vmap(lambda t: t["a"].sum() + t["b"].sum(), in_axes=({"a": 0, "b": 1},))(d)
    np.testing.assert_allclose(out, d["a"].sum(1) + d["b"].sum(0), rtol=1e-6)
    out = vmap(lambda p, v: p[0] * v + p[1], in_axes=((None, 0), 0))(
        (np.float32(2), np.arange(3.0, dtype=np.float32)), np.ones(3, np.float32))
    np.testing.assert_allclose(out, 2 + np.arange(3.0))
    # None arguments and None leaves
    assert vmap(lambda x, n: x, in_axes=(0, None))(x, None).shape == x.shape
    # kwargs are mapped along axis 0
    out = vmap(lambda x, y=None: x + y, in_axes=(1,))(x, y=np.ones((B, 5), np.float32))
    np.testing.assert_allclose(out, np.moveaxis(x, 1, 0) + 1)


def test_out_axes_forms():
    x = batched((4, 5), 0)
    check(lambda v: v * 2, (x,), 0, 1)
    check(lambda v: v * 2, (x,), 0, -1)
    check(lambda v: (v, v.sum()), (x,), 0, (1, 0))
    out = vmap(lambda v: (v, 2.0, jnp.ones(2)), out_axes=(0, None, None))(x)
    assert out[1] == 2.0 and type(out[1]) is float
    np.testing.assert_array_equal(out[2], np.ones(2))
    # An unmapped output with an int out_axes is broadcast.
    out = vmap(lambda v: jnp.ones(2), out_axes=1)(x)
    assert out.shape == (2, B)
    np.testing.assert_array_equal(vmap(lambda v: 2)(x), [2, 2, 2])
    d = vmap(lambda v: {"s": v.sum(), "v": v}, out_axes={"s": 0, "v": 2})(x)
    assert d["s"].shape == (B,) and d["v"].shape == (4, 5, B)


def test_axis_size_and_no_mapped_inputs():
    np.testing.assert_array_equal(vmap(lambda: 1.0, axis_size=3)(), [1.0, 1.0, 1.0])
    out = vmap(lambda x: x + 1, in_axes=None, axis_size=2)(np.arange(3.0, dtype=np.float32))
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])
    assert vmap(lambda x: x, axis_size=3)(np.ones(3)).shape == (3,)


def test_nested_vmap():
    x = batched((4, 5), 0)  # (B, 4, 5)
    f = lambda v: jnp.sum(jnp.sin(v) * v)
    np.testing.assert_allclose(vmap(vmap(f))(x), np.sum(np.sin(x) * x, axis=2), rtol=1e-5)
    np.testing.assert_allclose(vmap(vmap(f, in_axes=1), in_axes=0)(x),
                               np.sum(np.sin(x) * x, axis=1), rtol=1e-5)
    # an outer product by nesting over different arguments
    a, b = np.arange(3.0, dtype=np.float32), np.arange(4.0, dtype=np.float32)
    out = vmap(vmap(lambda u, v: u * v, in_axes=(None, 0)), in_axes=(0, None))(a, b)
    np.testing.assert_array_equal(out, np.outer(a, b))
    m = batched((3, 3), 0)
    np.testing.assert_allclose(vmap(vmap(jnp.dot, (0, None)), (None, 0))(m[0], m),
                               np.einsum("ij,bjk->bik", m[0], m).transpose(0, 1, 2), rtol=1e-5)
    np.testing.assert_allclose(jax.jit(vmap(vmap(f)))(x), vmap(vmap(f))(x), rtol=1e-6)


def test_vmap_of_jit_and_jit_of_vmap():
    x = batched((4, 5), 1)
    f = jax.jit(lambda v, s: jnp.tanh(v) * s + v.sum())
    check(f, (x, np.float32(3)), (1, None), exact=False)
    check(f, (x, np.arange(B, dtype=np.float32)), (1, 0), exact=False)
    g = jax.jit(vmap(lambda v: jnp.tanh(v) + v.sum(), in_axes=1))
    np.testing.assert_allclose(g(x), loop(lambda v: jnp.tanh(v) + v.sum(), (x,), 1), rtol=1e-6)
    # unmapped arguments of a jit call inside vmap
    check(lambda v: v + jax.jit(lambda c: c * 2)(jnp.ones(5)), (x,), 1)


def test_multiple_outputs_and_dtypes():
    x = batched((4,), 0, np.int32, -9, 9)
    check(lambda v: (v * 2, v > 0, v.astype(jnp.float32) / 2), (x,))
    check(lambda v: jnp.where(v > 0, v, -v).sum(), (x,))


# ---------------------------------------------------------------------------------------
# JAX semantics: tracing at every call, unmapped values are concrete, tracer reprs.

def test_retraces_every_call_and_sees_globals():
    calls = []
    state = {"scale": 2.0}

    def f(x):
        calls.append(1)
        return x * state["scale"]

    vf = vmap(f)
    x = np.ones((3, 2), np.float32)
    np.testing.assert_array_equal(vf(x), 2 * x)
    state["scale"] = 5.0
    np.testing.assert_array_equal(vf(x), 5 * x)
    assert len(calls) == 2


def test_executable_cache_skips_lowering(monkeypatch):
    from tinyxla._src.interpreters import lowering
    made = []
    real = lowering.executable_for
    monkeypatch.setattr(lowering, "executable_for", lambda c: made.append(c) or real(c))
    c = np.arange(4.0, dtype=np.float32)
    vf = vmap(lambda x, y: jnp.sin(x) * 0.75 + c * y, in_axes=(0, None))
    x = np.ones((3, 4), np.float32)
    vf(x, 1.5)
    n = len(made)
    for k in range(3):
        np.testing.assert_allclose(vf(x + k, 1.5), np.sin(x + k) * 0.75 + c * 1.5, rtol=1e-6)
    assert len(made) == n
    # a different literal value, shape or closed-over constant value is not confused
    np.testing.assert_allclose(vf(x, 2.5), np.sin(x) * 0.75 + c * 2.5, rtol=1e-6)
    c = c + 1
    np.testing.assert_allclose(vmap(lambda x: x - c)(x), x - c)
    np.testing.assert_allclose(vmap(lambda x: x * -0.0)(x), x * -0.0)
    assert np.signbit(vmap(lambda x: x * -0.0)(x)).all()
    assert not np.signbit(vmap(lambda x: x * 0.0)(x)).any()


def test_repeated_calls_replay_the_same_graph():
    # The second and later calls reuse recorded rule outputs and the cached executable.
    f = vmap(lambda v, i, p: (lax.pad(v, 1.5, ((1, 0, 1),)), lax.dynamic_slice(v, (i,), (2,)),
                             jnp.concatenate([v, jnp.ones(1) * p]), v.sum() * p,
                             lax.rev(v, (0,))[::2]),
             in_axes=(1, 0, None))
    for k in range(3):
        args = (batched((5,), 1, seed=k), np.array([k, 4, -1], np.int32), np.float32(k + 0.5))
        got = f(*args)
        want = loop(f.__wrapped__, args, (1, 0, None))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_executable_shared_by_content():
    made = len(caches._executables)
    x = np.ones((3, 2), np.float32)
    vmap(lambda v: jnp.cos(v) * 7.25)(x)
    vmap(lambda v: jnp.cos(v) * 7.25)(x + 1)  # another function, the same graph
    assert len(caches._executables) == made + 1


def test_grad_of_vmap_and_jacobians():
    x = batched((3,), 0)
    w = np.array([0.5, -1.0, 2.0], np.float32)
    g = jax.grad(lambda w: vmap(lambda v: jnp.tanh(jnp.dot(w, v)))(x).sum())(w)
    want = sum(np.asarray(jax.grad(lambda w: jnp.tanh(jnp.dot(w, v)))(w)) for v in x)
    np.testing.assert_allclose(g, want, rtol=1e-5)
    f = lambda v: jnp.sin(v) * v.sum()
    np.testing.assert_allclose(vmap(jax.jacrev(f))(x), np.stack([jax.jacrev(f)(v) for v in x]),
                               rtol=1e-5)
    np.testing.assert_allclose(vmap(jax.jacfwd(f))(x), np.stack([jax.jacfwd(f)(v) for v in x]),
                               rtol=1e-5)


def test_branch_on_unmapped_value_is_concrete():
    def f(x, n):
        if n.sum() > 0:  # n is not mapped: concrete, as in JAX
            return x * n
        return x

    out = vmap(f, in_axes=(0, None))(np.ones((3, 2), np.float32), jnp.array([1.0, 2.0]))
    np.testing.assert_array_equal(out, [[1, 2]] * 3)


def test_tracer_repr():
    seen = []
    vmap(lambda x: seen.append(repr(x)) or x)(jnp.arange(3.0))
    vmap(lambda x: seen.append(repr(x)) or x, in_axes=1)(jnp.ones((2, 3)))
    vmap(vmap(lambda x: seen.append(repr(x)) or x))(jnp.ones((2, 3)))
    assert seen == ["VmapTracer(aval=float32[], batched=float32[3])",
                    "VmapTracer(aval=float32[2], batched=float32[2,3])",
                    "VmapTracer(aval=float32[], batched=float32[3])"]


def test_axis_env():
    seen = []

    def f(x):
        seen.append((batching.axis_size("i"), batching.axis_names()))
        return x

    vmap(vmap(f, axis_name="j"), axis_name="i")(np.ones((2, 5)))
    assert seen == [(2, ("i", "j"))]
    with pytest.raises(NameError, match="unbound axis name: k"):
        vmap(lambda x: batching.axis_size("k"))(np.ones(2))
    assert batching.axis_names() == ()


def test_per_example_gradients():
    grad = getattr(jax, "grad", None)
    if grad is None:
        pytest.skip("jax.grad is not implemented yet")

    def loss(w, x, y):
        return (jnp.dot(w, x) - y) ** 2

    w = np.array([0.5, -1.0, 2.0], np.float32)
    xs = batched((3,), 0)
    ys = np.arange(B, dtype=np.float32)
    got = vmap(grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    want = np.stack([grad(loss)(w, x, y) for x, y in zip(xs, ys)])
    np.testing.assert_allclose(got, want, rtol=1e-5)


# ---------------------------------------------------------------------------------------
# Errors, with JAX 0.10.2's texts.

def _raises(exc, text, f, *args, **kwargs):
    with pytest.raises(exc) as info:
        f(*args, **kwargs)
    assert str(info.value) == text
    return info.value


def test_inconsistent_sizes():
    _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * one axis had size 3: axis 0 of argument a of type float32[3];\n"
            "  * one axis had size 4: axis 0 of argument b of type float32[4]",
            vmap(lambda a, b: a + b), jnp.ones(3), jnp.ones(4))
    _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * one axis had size 3: axis 0 of argument a of type float32[3,4];\n"
            "  * one axis had size 5: axis 1 of argument b of type float32[4,5]",
            vmap(lambda a, b: a + b, in_axes=(0, 1)), jnp.ones((3, 4)), jnp.ones((4, 5)))
    _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * most axes (2 of them) had size 3, e.g. axis 0 of argument a of type float32[3];\n"
            "  * one axis had size 4: axis 0 of argument c of type float32[4]",
            vmap(lambda a, b, c: a), jnp.ones(3), jnp.ones(3), jnp.ones(4))
    _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * one axis had size 3: axis 0 of argument a of type float32[3,4];\n"
            "  * one axis had size 4: axis 0 of argument b['x'] of type float32[4,5];\n"
            "  * one axis had size 2: axis 0 of argument b['y'] of type float32[2]",
            vmap(lambda a, b: a), jnp.ones((3, 4)), {"x": jnp.ones((4, 5)), "y": jnp.ones(2)})
    _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * one axis had size 3: axis 0 of argument a of type float32[3,4];\n"
            "  * one axis had size 5: axis 1 of args[1] of type float32[4,5];\n"
            "  * one axis had size 2: axis 0 of args[2] of type float32[2]",
            vmap(lambda *a: a[0], in_axes=(0, 1, 0)),
            jnp.ones((3, 4)), jnp.ones((4, 5)), jnp.ones((2,)))
    _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * one axis had size 3: axis 0 of argument a of type float32[3];\n"
            "  * one axis had size 4: axis 0 of kwargs['b'] of type float32[4]",
            vmap(lambda a, b=1: a), jnp.ones(3), b=jnp.ones(4))
    _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
            "  * the `axis_size` argument was 4;\n"
            "  * one axis had size 3: axis 0 of argument a of type float32[3]",
            vmap(lambda a: a, axis_size=4), jnp.ones(3))


def test_in_axes_errors():
    _raises(ValueError, "vmap was requested to map its argument along axis 2, which implies "
            "that its rank should be at least 3, but is only 2 (its shape is (4, 5))",
            vmap(lambda a, b: a, in_axes=(0, 2)), jnp.ones((3, 4)), jnp.ones((4, 5)))
    _raises(ValueError, "vmap was requested to map its argument along axis -2, which implies "
            "that its rank should be at least 2, but is only 1 (its shape is (3,))",
            vmap(lambda a: a, in_axes=-2), jnp.ones(3))
    _raises(ValueError, "vmap was requested to map its argument along axis 0, which implies "
            "that its rank should be at least 1, but is only 0 (its shape is ())",
            vmap(lambda a: a), 3.0)
    _raises(ValueError, "vmap in_axes must be an int, None, or a tuple of entries "
            "corresponding to the positional arguments passed to the function, but got "
            "len(in_axes)=3, len(args)=2",
            vmap(lambda a, b: a, in_axes=(0, 0, 0)), jnp.ones(3), jnp.ones(3))
    _raises(ValueError, "vmap must have at least one non-None value in in_axes or axis_size "
            "must be specified", vmap(lambda a: a, in_axes=None), jnp.ones(3))
    _raises(ValueError, "vmap wrapped function must be passed at least one argument "
            "containing an array or axis_size must be specified, got empty *args=() and "
            "**kwargs={}", vmap(lambda: 1.0))
    _raises(TypeError, "vmap in_axes must be an int, None, or a tuple of entries corresponding "
            "to the positional arguments passed to the function, but got 1.0.",
            vmap, lambda a: a, in_axes=1.0)
    _raises(TypeError, "vmap in_axes must be an int, None, or (nested) container with those "
            "types as leaves, but got (0.5,).", vmap, lambda a: a, in_axes=(0.5,))
    _raises(TypeError, "vmap out_axes must be an int, None, or (nested) container with those "
            "types as leaves, but got (0.5,).", vmap, lambda a: a, out_axes=(0.5,))
    _raises(TypeError, "Expected a callable value, got 5", vmap, 5)


def test_in_axes_tree_prefix_errors():
    pre = "vmap in_axes specification must be a tree prefix of the corresponding value; \n" \
          "  Mismatch details (1 found):\n  pytree structure error: "
    _raises(ValueError, pre + "different types at key path\n    vmap in_axes[0]\n"
            "At that key path, the prefix pytree vmap in_axes has a subtree of type\n"
            "    <class 'tuple'>\nbut at the same key path the full pytree has a subtree of "
            "different type\n    <class 'tinyxla._src.vmap.PytreeLeaf'>.",
            vmap(lambda a: a, in_axes=((0, 0),)), jnp.ones(3))
    _raises(ValueError, pre + "different lengths of list at key path\n    vmap in_axes[0]\n"
            "At that key path, the prefix pytree vmap in_axes has a subtree of type list of "
            "length 2, but the full pytree has a subtree of the same type but of length 1.",
            vmap(lambda a: a, in_axes=([0, 0],)), [jnp.ones(3)])
    _raises(ValueError, pre + "different numbers of pytree children at key path\n"
            "    vmap in_axes[0]\nAt that key path, the prefix pytree vmap in_axes has a "
            "subtree of type\n    <class 'dict'>\nwith 2 child keys\n    a b\nbut at the same "
            "key path the full pytree has a subtree of the same type but with 1 child keys\n"
            "    a\nso the symmetric difference on key sets is\n    b",
            vmap(lambda a: a, in_axes=({"a": 0, "b": 0},)), {"a": jnp.ones(3)})
    _raises(ValueError, pre + "different pytree metadata at key path\n    vmap in_axes[0]\n"
            "At that key path, the prefix pytree vmap in_axes has a subtree of type\n"
            "    <class 'dict'>\nwith metadata\n    ('b',)\nbut at the same key path the full "
            "pytree has a subtree of the same type but with metadata\n    ('a',)\nso the diff "
            "in the metadata at these pytree nodes is\n    - ('b',)\n    ?   ^\n\n"
            "    + ('a',)\n    ?   ^\n",
            vmap(lambda d: d["a"], in_axes=({"b": 0},)), {"a": jnp.ones(3)})


def test_out_axes_errors():
    _raises(ValueError, "at vmap out_axes, got axis spec None but output was batched on axis 0",
            vmap(lambda a: a, out_axes=None), jnp.ones(3))
    _raises(ValueError, "at vmap out_axes[1], got axis spec None but output was batched on "
            "axis 0", vmap(lambda a: (a, a), out_axes=(0, None)), jnp.ones(3))
    _raises(ValueError, "at vmap out_axes['x'], got axis spec None but output was batched on "
            "axis 0", vmap(lambda a: {"x": a}, out_axes={"x": None}), jnp.ones(3))
    _raises(ValueError, "vmap has mapped output (axis_name=i) but out_axes is None",
            vmap(lambda a: a, axis_name="i", out_axes=None), jnp.ones(3))
    _raises(ValueError, "axis 2 is out of bounds for array of dimension 1",
            vmap(lambda a: a, out_axes=2), jnp.ones(3))
    _raises(ValueError, "vmap out_axes specification must be a tree prefix of the "
            "corresponding value; \n  Mismatch details (1 found):\n  pytree structure error: "
            "different lengths of tuple at key path\n    vmap out_axes\nAt that key path, the "
            "prefix pytree vmap out_axes has a subtree of type tuple of length 3, but the full "
            "pytree has a subtree of the same type but of length 2.",
            vmap(lambda a: (a, a), out_axes=(0, 0, 0)), jnp.ones(3))


def test_invalid_arguments_and_outputs():
    _raises(TypeError, "Argument 'abc' of type <class 'str'> is not a valid JAX type",
            vmap(lambda x, s: x), np.ones(3), "abc")
    np.testing.assert_array_equal(vmap(lambda x, s: x, in_axes=(0, None))(np.ones(3), "abc"),
                                  np.ones(3))
    _raises(TypeError, "Output from batched function 'abc' with type <class 'str'> is not a "
            "valid JAX type", vmap(lambda x: "abc"), np.ones(2))
    _raises(TypeError, "Output from batched function 'abc' with type <class 'str'> is not a "
            "valid JAX type", vmap(lambda x: "abc", out_axes=None), np.ones(2))


def test_branch_on_batched_value():
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(errors.TracerBoolConversionError) as info:
        vmap(f)(jnp.arange(3.0))
    text = str(info.value)
    assert text.startswith("Attempted boolean conversion of traced array with shape bool[].\n"
                           "This BatchTracer with object id ")
    assert f"was created on line:\n  {__file__}:" in text
    assert text.endswith(" (f)\nSee https://docs.jax.dev/en/latest/errors.html"
                         "#jax.errors.TracerBoolConversionError")
    with pytest.raises(errors.ConcretizationTypeError):
        vmap(lambda x: float(x))(jnp.arange(3.0))
    # the same under jit, where the batch trace sits on the jit trace
    with pytest.raises(errors.TracerBoolConversionError):
        jax.jit(vmap(f))(jnp.arange(3.0))


def test_escaped_tracer_is_an_error():
    leaked = []
    vmap(lambda x: leaked.append(x) or x)(jnp.arange(3.0))
    with pytest.raises(errors.UnexpectedTracerError):
        jnp.sin(leaked[0]) + 1


def test_vmap_wraps_function():
    def f(x):
        """Doc of f."""
        return x

    vf = vmap(f)
    assert vf.__name__ == "f"
    assert vf.__doc__ == ("Vectorized version of f. Takes similar arguments as f but with "
                          "additional array axes over which f is mapped.\n\nOriginal "
                          "documentation:\n\nDoc of f.")


def test_content_key_distinguishes_literals():
    k = caches.jaxpr_content_key
    j1 = jax.make_jaxpr(lambda x: x * 0.0)(1.0).jaxpr
    j2 = jax.make_jaxpr(lambda x: x * -0.0)(1.0).jaxpr
    j3 = jax.make_jaxpr(lambda x: x * 0.0)(2.0).jaxpr
    assert k(j1) != k(j2) and k(j1) == k(j3)


def test_keyed_staging_literal_ids():
    # Interned Python scalars: one id per type and exact value.
    lit = caches.py_literal
    assert lit(0.0)[1] != lit(-0.0)[1]
    assert len({lit(1)[1], lit(True)[1], lit(1.0)[1]}) == 3
    assert lit(complex(1, 0.0))[1] != lit(complex(1, -0.0))[1]
    assert lit(2.5)[1] == lit(5.0 / 2)[1] and lit(2.5)[0] is lit(5.0 / 2)[0]
    assert lit(float("nan"))[0].val != lit(float("nan"))[0].val


def test_each_call_sees_changed_literals_and_constants():
    # One vmapped function whose traced graph differs between calls only in a literal's
    # value or type, or in a closed-over array: each call runs its own graph.
    state = {"s": 0.0, "w": jnp.ones(3, jnp.float32)}
    vf = vmap(lambda v: v * state["s"] + jnp.dot(state["w"], v))
    x = np.ones((2, 3), np.float32)
    assert not np.signbit(vf(x) - 3).any()
    state["s"] = -0.0
    y = vmap(lambda v: v * state["s"])(x)
    assert np.signbit(y).all()
    state["s"] = 2.5
    np.testing.assert_array_equal(vf(x), x * 2.5 + 3)
    state["w"] = jnp.full(3, 2.0, jnp.float32)
    np.testing.assert_array_equal(vf(x), x * 2.5 + 6)
    state["w"] = jnp.full((3, 3), 2.0, jnp.float32)  # another shape: dot gives a vector
    np.testing.assert_array_equal(vf(x), x * 2.5 + 6)
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    for s, want in [(2, ints * 2), (True, ints * 1), (2.5, (ints * 2.5).astype(np.float32))]:
        state["s"] = s
        got = vmap(lambda v: v * state["s"])(ints)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_unkeyed_staging_falls_back_to_the_walked_key():
    # out_axes=1 moves the output's axis under the staging trace (the generic path, not
    # keyed while recording): the executable is still shared by content.
    x = batched((3,), 0)
    for k in range(3):
        got = vmap(lambda v: jnp.sin(v) * (k + 0.5), out_axes=1)(x)
        np.testing.assert_allclose(got, (np.sin(x) * np.float32(k + 0.5)).T, rtol=1e-6)


def test_staged_vmap_from_threads():
    import threading
    errors_seen = []

    def work(scale):
        try:
            x = np.full((4, 3), scale, np.float32)
            f = vmap(lambda v: jnp.tanh(v * scale) + scale)
            for _ in range(50):
                np.testing.assert_allclose(f(x), np.tanh(x * scale) + scale, rtol=1e-6)
        except Exception as e:  # reported by the main thread
            errors_seen.append(e)

    threads = [threading.Thread(target=work, args=(float(s),)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors_seen


@pytest.mark.parametrize("dtype", [np.uint32, np.int8, np.float16], ids=str)
def test_vmap_of_jit_keeps_weak_literal_dtypes(dtype):
    # x + 1 traces the 1 as a weak literal of x's dtype; batching the jitted jaxpr
    # re-evaluates it, which must not turn it into an int32/float32 Python scalar.
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    out = jax.vmap(jax.jit(lambda v: v + 1))(jnp.asarray(x))
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, x + dtype(1))
