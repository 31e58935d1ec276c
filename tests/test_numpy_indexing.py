"""Basic indexing and broadcasting: hand-picked cases and hypothesis properties against numpy.

x[idx] with ints (negative, and out of bounds: clamped as JAX's gather clamps), slices
with any step, None, Ellipsis and scalar booleans must equal numpy's result on in-bounds
indices; elementwise binary ops on random broadcastable shapes must equal numpy's, and
non-broadcastable shapes must raise JAX's errors.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinyxla.numpy as jnp

_SETTINGS = settings(max_examples=60, deadline=None)


def _np_index(idx, shape):
    """numpy's view of a JAX basic index: out-of-bounds ints clamped (JAX's gather)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    n_real = sum(not (e is None or e is Ellipsis or isinstance(e, bool)) for e in idx)
    out, dim = [], 0
    for e in idx:
        if e is Ellipsis:
            out.append(e)
            dim += len(shape) - n_real
        elif e is None or isinstance(e, bool):
            out.append(e)
        elif isinstance(e, int):
            n = shape[dim]
            i = e + n if e < 0 else e
            out.append(min(max(i, 0), n - 1))
            dim += 1
        else:
            out.append(e)
            dim += 1
    return tuple(out)


@st.composite
def basic_indices(draw, shape):
    """A basic index for ``shape``: ints (some out of bounds), slices, None, Ellipsis."""
    entries = []
    dims = list(shape)
    use_ellipsis = draw(st.booleans())
    n = draw(st.integers(0, len(dims)))
    for d in dims[:n]:
        kind = draw(st.sampled_from(["int", "slice", "slice", "none"]))
        if kind == "none":
            entries.append(None)
        if kind == "int" and d > 0:
            entries.append(draw(st.integers(-d - 3, d + 2)))
        else:
            start = draw(st.one_of(st.none(), st.integers(-d - 2, d + 2)))
            stop = draw(st.one_of(st.none(), st.integers(-d - 2, d + 2)))
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0)))
            entries.append(slice(start, stop, step))
    if use_ellipsis:
        entries.insert(draw(st.integers(0, len(entries))), Ellipsis)
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), None)
    return tuple(entries) if len(entries) != 1 or draw(st.booleans()) else entries[0]


shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)


@_SETTINGS
@given(st.data(), shapes)
def test_basic_indexing_matches_numpy(data, shape):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    idx = data.draw(basic_indices(shape))
    np_idx = _np_index(idx, shape)
    try:
        want = x[np_idx]
    except IndexError:
        # Only integer indices into empty axes fail in numpy after clamping; JAX too.
        with pytest.raises(IndexError):
            jnp.asarray(x)[idx]
        return
    got = jnp.asarray(x)[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


@st.composite
def broadcastable_shapes(draw):
    out = draw(st.lists(st.integers(0, 4), min_size=0, max_size=4))
    shapes = []
    for _ in range(2):
        nd = draw(st.integers(0, len(out)))
        shapes.append(tuple(d if draw(st.booleans()) else 1 for d in out[len(out) - nd:]))
    return shapes


@_SETTINGS
@given(broadcastable_shapes(), st.sampled_from(["add", "multiply", "maximum", "less"]))
def test_broadcasting_matches_numpy(shapes, name):
    sx, sy = shapes
    x = np.arange(int(np.prod(sx)), dtype=np.float32).reshape(sx)
    y = np.arange(int(np.prod(sy)), dtype=np.float32).reshape(sy) - 3
    got = getattr(jnp, name)(jnp.asarray(x), jnp.asarray(y))
    want = getattr(np, name)(x, y)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)
    assert jnp.broadcast_shapes(sx, sy) == np.broadcast_shapes(sx, sy)


@_SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2),
       st.integers(1, 3))
def test_incompatible_shapes_raise(dims, axis, extra):
    sx = tuple(dims)
    axis = axis % len(sx)
    sy = sx[:axis] + (sx[axis] + extra,) + sx[axis + 1:]
    if sx[axis] == 1:
        return  # 1 broadcasts against anything
    with pytest.raises(TypeError, match=re.escape(
            f"add got incompatible shapes for broadcasting: {sx}, {sy}.")):
        jnp.add(jnp.ones(sx), jnp.ones(sy))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting: shapes="):
        jnp.broadcast_shapes(sx, sy)


@pytest.mark.parametrize("idx,want", [(11, 9), (-11, 0), (-1, 9), (3, 3), (100, 9)])
def test_out_of_bounds_integers_clamp(idx, want):
    assert int(jnp.arange(10)[idx]) == want


def test_index_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(IndexError, match="Too many indices: array is 2-dimensional, but 3 were"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        x[..., ...]
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type, got "
                                        "indexer with type float64"):
        x[1.5]
    with pytest.raises(TypeError, match="JAX does not support string indexing"):
        x["a"]
    with pytest.raises(IndexError, match="index is out of bounds for axis 0 with size 0"):
        jnp.ones((0,))[0]
    with pytest.raises(TypeError, match="JAX arrays are immutable"):
        x[0] = 1


def test_scalar_boolean_index():
    x = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[True]), x[True])
    assert jnp.asarray(x)[False].shape == x[False].shape
    assert jnp.asarray(x)[1, True].shape == x[1, True].shape
