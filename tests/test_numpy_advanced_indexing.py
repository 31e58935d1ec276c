"""Advanced indexing against numpy: integer arrays mixed with slices, None and Ellipsis
(numpy's placement of the broadcast index dims), boolean masks, ``x.at[idx]`` updates
(duplicates accumulate, out-of-bounds updates drop), take / take_along_axis / nonzero /
argwhere / flatnonzero, JAX's clamp/fill/drop semantics (pinned values from jax 0.10.2),
jit == eager, vmap == loops and numerical gradients."""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import _core, errors
from tinyxla._src.interpreters import lowering
from tinyxla.test_util import check_grads

XN = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
MASK = XN % 3 == 0

INDICES = [
    (np.array([2, 0, 1]),),
    (np.array([[1, 0], [2, 2]]),),
    (0, slice(None), np.array([1, 4])),
    (slice(None), np.array([0, 3]), None, np.array([1, 2])),
    (None, np.array([1]), slice(None), np.array([0])),
    (Ellipsis, np.array([0, -1, 4])),
    (np.array([[1], [0]]), slice(1, None), np.array([3, -1])),
    (1, slice(None, None, -1), np.array([0, 3])),
    (slice(None, None, 2), [True, False, True, False]),
    (np.array([0, 2]), slice(3, 0, -2), 1),
    (np.array([-1, -3]), np.array([3, 0]), np.array([4, 1])),
    (MASK,),
    (MASK[:, :, 0],),
    (slice(1, None), MASK[0, :, 0]),
    (np.array([], np.int32),),
    (np.array([1, 2]), Ellipsis, None),
    # An Ellipsis of no dims still separates advanced indices (numpy and jax 0.10.2).
    (None, np.array([1, 0]), np.array([0, 3]), Ellipsis, 2),
]


@pytest.mark.parametrize("idx", INDICES, ids=[str(i) for i in range(len(INDICES))])
def test_getitem_matches_numpy(idx):
    want = XN[idx]
    got = np.asarray(jnp.asarray(XN)[idx])
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("idx", [i for i in INDICES if not any(
    np.asarray(e).dtype == np.bool_ for e in i if e is not None and e is not Ellipsis
    and not isinstance(e, slice))])
def test_getitem_under_jit_with_traced_indices(idx):
    arrays = [e for e in idx if isinstance(e, np.ndarray)]

    def f(x, *arrs):
        it = iter(arrs)
        return x[tuple(next(it) if isinstance(e, np.ndarray) else e for e in idx)]

    np.testing.assert_array_equal(jax.jit(f)(XN, *arrays), XN[idx])


# Pinned from jax 0.10.2: indexing clamps out-of-bounds integers (promise_in_bounds),
# after wrapping negative ones.
def test_out_of_bounds_indices_clamp():
    assert jnp.arange(5)[jnp.array([7, -1, -9])].tolist() == [4, 4, 0]
    assert jnp.arange(10)[11] == 9
    x = jnp.arange(12).reshape(3, 4)
    assert x[jnp.array([5, 0]), jnp.array([-1, 9])].tolist() == [11, 3]


@pytest.mark.parametrize("idx", INDICES, ids=[str(i) for i in range(len(INDICES))])
def test_getitem_with_device_indices_matches_numpy(idx):
    """Eager x[idx] with Array indices runs a gather compiled per index structure."""
    dev = tuple(jnp.asarray(e) if isinstance(e, np.ndarray) and e.dtype != np.bool_ else e
                for e in idx)
    got = jnp.asarray(XN)[dev]
    assert got.shape == XN[idx].shape
    np.testing.assert_array_equal(got, XN[idx])


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.int16, np.uint8, np.uint32])
def test_eager_gather_wraps_and_clamps_as_jax(dtype):
    n = 200
    x_np = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    raw = np.array([0, 5, n - 1, n, n + 7, 127, -1, -5, -n, -n - 1, -128], np.int64)
    i_np = raw[(raw >= np.iinfo(dtype).min) & (raw <= np.iinfo(dtype).max)].astype(dtype)
    want = x_np[np.clip(np.where(i_np < 0, i_np.astype(np.int64) + n, i_np), 0, n - 1)]
    x, i = jnp.asarray(x_np), jnp.asarray(i_np)
    np.testing.assert_array_equal(x[i], want)
    np.testing.assert_array_equal(jax.jit(lambda x, i: x[i])(x, i), want)
    # Pinned from jax 0.10.2: arange(10)[[-11, -10, -1, 9, 10, 100]].
    assert jnp.arange(10.0)[jnp.array([-11, -10, -1, 9, 10, 100])].tolist() == \
        [0, 0, 9, 9, 9, 9]


def test_eager_gather_of_int64_indices(x64):
    x_np = np.arange(50, dtype=np.float32)
    i_np = np.array([3, -2, 60, -60, 49], np.int64)
    got = jnp.asarray(x_np)[jnp.asarray(i_np)]
    np.testing.assert_array_equal(got, x_np[np.clip(np.where(i_np < 0, i_np + 50, i_np), 0, 49)])


def test_eager_gather_compiles_once_per_index_structure():
    from tinyxla._src.numpy import indexing
    x_np = np.arange(60, dtype=np.float32).reshape(6, 10)
    x, cols = jnp.asarray(x_np), jnp.array([9, -1, 0, 12])
    before = len(indexing._compiled_getitems)
    rows = [x[r, cols] for r in range(-7, 8)]  # integers are arguments, as in JAX
    assert len(indexing._compiled_getitems) == before + 1
    for r, got in zip(range(-7, 8), rows):
        row = min(max(r + 6 if r < 0 else r, 0), 5)
        np.testing.assert_array_equal(got, x_np[row, [9, 9, 0, 9]])
    with pytest.raises(OverflowError):  # as jax 0.10.2: the index dtype is int32
        x[2**40, cols]
    # The gather's options are part of the structure: a -0.0 fill is not a 0.0 fill.
    far = jnp.array([0, 99])
    assert not np.signbit(jnp.arange(3.0).at[far].get(mode="fill", fill_value=0.0)[1])
    assert np.signbit(jnp.arange(3.0).at[far].get(mode="fill", fill_value=-0.0)[1])
    assert np.isnan(jnp.arange(3.0).at[far].get(mode="fill", fill_value=float("nan"))[1])


def _unsimplified(f, *args):
    """jit(f)(*args) with the simplifier off: the index normalisation runs as a kernel of its
    own and the gather reads its result (the unfolded path)."""
    closed = jax.make_jaxpr(f)(*args)
    exe = _core.compile(lowering.lower_jaxpr(closed), simplify=False)
    return lowering.GraphExecutable(closed, exe)(list(args))[0]


_RAW = np.array([0, 3, 9, 10, 127, -1, -5, -10, -11, -128, 4, -2, 2**31 - 1, -2**31], np.int64)
# Each case, and whether it folds for int64 indices: indexing narrows them to its int32
# index type after the normalisation (as JAX), where the wrap does not commute with the
# conversion; take and take_along_axis keep int64.
_FOLDED = {
    "x[i]": (lambda x, m, i, j: x[i], False),
    "x[i] 2-D": (lambda x, m, i, j: x[i.reshape(2, 7)], False),
    "fill": (lambda x, m, i, j: x.at[i].get(mode="fill", fill_value=-7.0), False),
    "m[i, j]": (lambda x, m, i, j: m[i, j], False),
    "m[i, j] fill": (lambda x, m, i, j: m.at[i, j].get(mode="fill", fill_value=-7.0), False),
    "m[i]": (lambda x, m, i, j: m[i], False),
    "m[:, j]": (lambda x, m, i, j: m[:, j], False),
    "m[1, j]": (lambda x, m, i, j: m[1, j], False),
    "m[i, 1:4]": (lambda x, m, i, j: m[i, 1:4], False),
    "take": (lambda x, m, i, j: jnp.take(x, i), True),
    "take_along_axis": (lambda x, m, i, j: jnp.take_along_axis(m, j.reshape(2, 7), axis=1), True),
}


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
@pytest.mark.parametrize("name", sorted(_FOLDED))
def test_gather_folds_the_index_normalisation(name, dtype, x64):
    """Under jit the simplifier folds jnp's select(i < 0, i + n, i) into the gather
    (wrap_negative): the same values as the unfolded path, bit for bit, on negative, in-range
    and out-of-range indices, and as numpy counts from the end, then clamps or fills."""
    f, folds_int64 = _FOLDED[name]
    info = np.iinfo(dtype)
    raw = _RAW[(_RAW >= info.min) & (_RAW <= info.max)]
    raw = np.resize(raw, 14)
    x = jnp.asarray(np.arange(10, dtype=np.float32) + 0.5)
    m = jnp.asarray(np.arange(10, dtype=np.float32).reshape(2, 5) - 0.25)
    i, j = jnp.asarray(raw.astype(dtype)), jnp.asarray(raw[::-1].astype(dtype))
    args = (x, m, i, j)
    lowered = jax.jit(f).lower(*args)
    assert ("wrap_negative=1" in lowered.as_text()) == (dtype != np.int64 or folds_int64)
    got = lowered.compile()(*args)
    want = _unsimplified(f, *args)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_gather_beside_a_negative_constant_index_does_not_fold():
    """A constant index column still negative after its normalisation (out of range) would
    wrap twice: that gather keeps reading normalised indices."""
    m = jnp.arange(10.0).reshape(2, 5)
    j = jnp.array([-1, 0, 7, -9])
    f = jax.jit(lambda m, j: m[-7, j])
    assert "wrap_negative" not in f.lower(m, j).as_text()
    assert f(m, j).tolist() == [4.0, 0.0, 4.0, 0.0]  # row -7 + 2 clamps to 0


def test_gather_normalisation_folds_in_eager_indexing():
    """Eager x[idx] runs a jitted gather: folded there too (the bench_indexing row)."""
    from tinyxla._src.numpy import indexing
    x = jnp.arange(10.0)
    i = jnp.array([0, 3, 9, 10, -1, -10, -11, -100])
    assert x[i].tolist() == [0, 3, 9, 9, 9, 0, 0, 0]  # pinned from jax 0.10.2
    assert x.at[i].get(mode="fill", fill_value=-7.0).tolist() == [0, 3, 9, -7, 9, 0, -7, -7]
    fn = indexing._getitem_function([(indexing._ARRAY, i)], (None, None, False, False, True))
    assert "wrap_negative=1" in fn.lower(x, i).as_text()


# Each scatter form as (x.at[...] ref, its updates): x.at[i] (the vector loop), m.at[i]
# (rows), m.at[i, j] and m.at[:, j] (the general loop).
_SCATTERED = {
    "x.at[i]": lambda x, m, i, j, u: (x.at[i], u),
    "x.at[i] 2-D": lambda x, m, i, j, u: (x.at[i.reshape(2, 7)], u.reshape(2, 7)),
    "m.at[i]": lambda x, m, i, j, u: (m.at[i], u[:, None] * 0.5),
    "m.at[i, j]": lambda x, m, i, j, u: (m.at[i, j], u),
    "m.at[:, j]": lambda x, m, i, j, u: (m.at[:, j], u),
}
_UPDATES = ["set", "add", "multiply", "min", "max"]


def _scatter_reference(x, raw, u, update, mode):
    """x.at[raw] updated with u under `mode`, in index order, as jax 0.10.2: signed indices
    count from the end in their own type, then narrow to int32; unsigned ones only narrow."""
    n = x.shape[0]
    w = raw.astype(np.int64)
    if raw.dtype.kind == "i":
        w = np.where(w < 0, w + n, w)
    w = w.astype(np.int32).astype(np.int64)
    out = x.copy()
    for k, v in zip(w, u):
        if mode == "clip":
            k = min(max(k, 0), n - 1)
        elif not 0 <= k < n:
            continue
        out[k] = {"set": lambda a, b: b, "add": np.add, "multiply": np.multiply,
                  "min": np.fmin, "max": np.fmax}[update](out[k], v)
    return out


@pytest.mark.parametrize("mode", [None, "clip", "drop", "promise_in_bounds"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
@pytest.mark.parametrize("update", _UPDATES)
def test_scatter_folds_the_index_normalisation(update, dtype, mode, x64):
    """Under jit the simplifier folds jnp's select(i < 0, i + n, i) into every scatter kind
    (wrap_negative) for int32 indices: the same values as the unfolded path, bit for bit,
    duplicate indices included, and numpy's x.at[i] applied in order. int64 indices narrow
    to int32 after the normalisation and unsigned ones have none: nothing to fold."""
    raw = np.resize(_RAW, 14)
    x = np.arange(10, dtype=np.float32) * 0.75 - 2.5
    m = np.arange(10, dtype=np.float32).reshape(2, 5) - 0.25
    u = (np.arange(14, dtype=np.float32) % 5 - 1.75) * 1.3
    i, j = raw.astype(dtype), raw[::-1].astype(dtype)
    for name, form in _SCATTERED.items():
        def f(x, m, i, j, u):
            ref, values = form(x, m, i, j, u)
            return getattr(ref, update)(values, mode=mode)
        args = tuple(jnp.asarray(a) for a in (x, m, i, j, u))
        lowered = jax.jit(f).lower(*args)
        assert ("wrap_negative=1" in lowered.as_text()) == (dtype == np.int32), name
        got = np.asarray(lowered.compile()(*args))
        want = np.asarray(_unsimplified(f, *args))
        assert got.tobytes() == want.tobytes(), name
        if name == "x.at[i]":
            np.testing.assert_array_equal(got, _scatter_reference(x, i, u, update, mode))


def test_embedding_gradient_folds_into_gather_and_scatter():
    """An embedding's gradient reads one normalisation twice (the gather, the scatter-add of
    the cotangent): both read the raw indices with wrap_negative and the normalisation's
    kernel is gone; values as the unfolded path, bit for bit, and as jax 0.10.2: rows counted
    from the end, out-of-range ones (9, -8) clamped in the gather and dropped from the
    gradient."""
    f = jax.grad(lambda w, i: (w[i] ** 2 * 0.5).sum())
    w = jnp.asarray(np.arange(12, dtype=np.float32).reshape(6, 2) * 0.3 - 1.0)
    i = jnp.asarray(np.array([0, -1, 5, 3, -6, 2, -1, 9, -8], np.int32))
    text = jax.jit(f).lower(w, i).as_text()
    assert text.count("wrap_negative=1") == 2 and "select_n" not in text
    got = np.asarray(jax.jit(f)(w, i))
    assert got.tobytes() == np.asarray(_unsimplified(f, w, i)).tobytes()
    want = np.zeros((6, 2), np.float32)
    rows = np.where(np.asarray(i) < 0, np.asarray(i) + 6, np.asarray(i))
    rows = rows[(rows >= 0) & (rows < 6)]
    np.add.at(want, rows, np.asarray(w)[rows])
    np.testing.assert_array_equal(got, want)


def test_unsigned_and_wide_indices_as_jax(x64):
    """As jax 0.10.2 (pinned): negative indices count from the end in their own type, before
    the conversion to the int32 index type, and unsigned ones never do."""
    x = jnp.arange(10.0)
    u = jnp.array([4294967295, 4294967290, 4294967286, 3, 12], jnp.uint32)
    for got in (x[u], jax.jit(lambda x, i: x[i])(x, u)):
        assert got.tolist() == [0, 0, 0, 3, 9]
    assert x.at[u].get(mode="fill", fill_value=-1.0).tolist() == [-1, -1, -1, 3, -1]
    w = jnp.array([-1, -11, 10, -2**32 + 5, 2**32 + 3], jnp.int64)
    for got in (x[w], jax.jit(lambda x, i: x[i])(x, w)):
        assert got.tolist() == [9, 0, 9, 9, 3]
    assert x.at[w].get(mode="fill", fill_value=-1.0).tolist() == [9, -1, -1, -1, 3]


def test_boolean_masks():
    x = jnp.asarray(XN)
    np.testing.assert_array_equal(x[x > 40], XN[XN > 40])
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.array([True, False])]
    with pytest.raises(errors.NonConcreteBooleanIndexError,
                       match="Array boolean indices must be concrete; got bool\\[3,4,5\\]"):
        jax.jit(lambda x: x[x > 2])(x)
    with pytest.raises(errors.NonConcreteBooleanIndexError):
        jax.jit(lambda x: x.at[x > 2].set(0))(x)


def test_index_errors():
    x = jnp.arange(6)
    with pytest.raises(TypeError, match="Using a non-tuple sequence for multidimensional"):
        x[[0, 1]]
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="Too many indices"):
        jnp.zeros((2, 2))[np.array([0]), 0, 1]


# ---------------------------------------------------------------------------------------
# x.at[idx]

AT_INDICES = [
    np.array([1, 3, 1, 0]),  # duplicates
    (slice(None), np.array([2, 2, 4])),
    (np.array([[0], [2]]), slice(1, 3)),
    (Ellipsis, 1),
    (slice(None, None, -2), 0),
    (1, slice(4, 0, -3)),
    (np.array([True, False, True, True]),),
]


def _np_at(op, x, idx, y):
    out = x.copy()
    op.at(out, idx if not isinstance(idx, tuple) else idx, y)
    return out


@pytest.mark.parametrize("idx", AT_INDICES, ids=[str(i) for i in range(len(AT_INDICES))])
def test_at_updates_match_numpy(idx):
    xn = np.arange(20, dtype=np.float32).reshape(4, 5) - 7
    x = jnp.asarray(xn)
    shape = xn[idx].shape
    y = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(x.at[idx].add(y), _np_at(np.add, xn, idx, y))
    np.testing.assert_array_equal(x.at[idx].subtract(y), _np_at(np.subtract, xn, idx, y))
    np.testing.assert_array_equal(x.at[idx].multiply(y), _np_at(np.multiply, xn, idx, y))
    np.testing.assert_array_equal(x.at[idx].min(y), _np_at(np.minimum, xn, idx, y))
    np.testing.assert_array_equal(x.at[idx].max(y), _np_at(np.maximum, xn, idx, y))
    np.testing.assert_allclose(x.at[idx].divide(y), _np_at(np.divide, xn, idx, y), rtol=1e-6)
    np.testing.assert_allclose(x.at[idx].power(2.0), _np_at(np.power, xn, idx, 2.0), rtol=1e-6)
    want = xn.copy()
    want[idx] = y  # numpy: the last duplicate wins, as scatter
    np.testing.assert_array_equal(x.at[idx].set(y), want)
    np.testing.assert_array_equal(x.at[idx].get(), xn[idx])
    np.testing.assert_array_equal(x, xn)  # functional: x itself is unchanged
    f = jax.jit(lambda x, y: (x.at[idx].add(y), x.at[idx].set(y)))
    np.testing.assert_array_equal(f(x, y)[0], _np_at(np.add, xn, idx, y))
    np.testing.assert_array_equal(f(x, y)[1], want)


def test_at_broadcasts_and_casts_the_values():
    x = jnp.zeros((3, 4), jnp.int32)
    assert x.at[1].set(2.7).tolist()[1] == [2, 2, 2, 2]
    assert x.at[:, 1].add(np.array([1, 2, 3])).tolist() == [[0, 1, 0, 0], [0, 2, 0, 0],
                                                            [0, 3, 0, 0]]
    assert x.at[0].set(5).dtype == jnp.int32


# Pinned from jax 0.10.2 on CPU.
def test_at_modes_pinned_from_jax():
    a = jnp.arange(5.0)
    assert a.at[jnp.array([1, 7, -1])].add(1).tolist() == [0.0, 2.0, 2.0, 3.0, 5.0]
    assert a.at[jnp.array([1, 7, -1, -9])].get().tolist() == [1.0, 4.0, 4.0, 0.0]
    assert a.at[jnp.array([1, 7])].get(fill_value=-1).tolist() == [1.0, 4.0]
    assert a.at[jnp.array([1, 7])].get(mode="fill", fill_value=-1).tolist() == [1.0, -1.0]
    assert jnp.arange(5).at[jnp.array([7])].get(mode="fill").tolist() == [-2147483648]
    assert a.at[2:].divide(2).tolist() == [0.0, 1.0, 1.0, 1.5, 2.0]
    assert jnp.arange(5).at[::-2].set(jnp.array([10, 20, 30])).tolist() == [30, 1, 20, 3, 10]
    assert a.at[jnp.array([9])].set(1, mode="clip").tolist() == [0.0, 1.0, 2.0, 3.0, 1.0]
    assert a.at[-1].set(9, wrap_negative_indices=False).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert a.at[jnp.array([-1])].get(wrap_negative_indices=False, mode="fill").tolist()[0] != \
        a.at[jnp.array([-1])].get().tolist()[0]


def test_at_apply():
    a = jnp.arange(5.0)
    assert a.at[jnp.array([1, 3])].apply(lambda v: v * 10).tolist() == [0, 10, 2, 30, 4]
    assert jax.jit(lambda a: a.at[2:].apply(jnp.sin))(a).tolist() == \
        pytest.approx([0, 1, np.sin(2), np.sin(3), np.sin(4)], rel=1e-6)


def test_at_in_a_jitted_loop_updates_in_place():
    """A jitted ``x.at[i].set(v)`` on a donated x writes into x's memory."""
    f = jax.jit(lambda x, i, v: x.at[i].set(v), donate_argnums=0)
    x = jnp.zeros(1000) + 0
    x.block_until_ready()
    before = x.unsafe_buffer_pointer()
    for i in range(3):
        x = f(x, i, float(i + 1))
        x.block_until_ready()
    assert x.unsafe_buffer_pointer() == before
    assert x[:4].tolist() == [1.0, 2.0, 3.0, 0.0]


def test_donated_updates_match_numpy():
    """A chain of donated x.at[i].set(v) (jit's cached donating call) against numpy, with
    negative and out-of-bounds indices (the update is dropped, as in JAX), as Python ints and
    as Arrays; every call writes in place and deletes its input."""
    n = 1000
    f = jax.jit(lambda x, i, v: x.at[i].set(v), donate_argnums=0)
    want = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    x = jnp.asarray(want) + 0
    x.block_until_ready()
    before = x.unsafe_buffer_pointer()
    steps = [(12, 1.5), (-1, 2.5), (n, 3.5), (-n, 4.5), (-n - 1, 5.5), (n + 30, 6.5),
             (jnp.array(7), 7.5), (jnp.array(-3), 8.5), (jnp.array(n + 1), 9.5), (12, -1.0)]
    for k, (i, v) in enumerate(steps):
        prev = x
        x = f(x, i, v)
        assert prev.is_deleted()
        j = int(i)
        if -n <= j < n:
            want[j] = v
        if k % 3 == 0:
            np.testing.assert_array_equal(x, want)
    np.testing.assert_array_equal(x, want)
    assert x.unsafe_buffer_pointer() == before
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f(prev, 0, 1.0)


def test_donation_by_keyword():
    # As jax 0.10.2: an argument passed by keyword is donated through donate_argnums'
    # name, or donate_argnames.
    f = jax.jit(lambda v, x: x.at[0].set(v), donate_argnums=1)
    x = jnp.zeros(100) + 0
    x.block_until_ready()
    before = x.unsafe_buffer_pointer()
    y = f(v=2.0, x=x)
    assert x.is_deleted() and y.unsafe_buffer_pointer() == before
    assert y[:2].tolist() == [2.0, 0.0]

    def g(v, *, x):
        return x + v
    x = jnp.zeros(10) + 0
    assert jax.jit(g, donate_argnames="x")(1.0, x=x).tolist() == [1.0] * 10
    assert x.is_deleted()
    x = jnp.zeros(10) + 0
    jax.jit(g)(1.0, x=x)
    assert not x.is_deleted()


def test_donated_last_argument_is_updated_in_place():
    f = jax.jit(lambda v, x: x.at[3].set(v), donate_argnums=1)
    x = jnp.zeros(100) + 0
    x.block_until_ready()
    before = x.unsafe_buffer_pointer()
    y = f(1.0, x)
    y = f(2.0, y)
    assert y.unsafe_buffer_pointer() == before and y[3] == 2.0


# ---------------------------------------------------------------------------------------
# take, take_along_axis, nonzero and friends

def test_take():
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    i = np.array([[0, 3], [-1, 2]])
    np.testing.assert_array_equal(jnp.take(a, i), np.take(a, i))
    np.testing.assert_array_equal(jnp.take(a, i, axis=1), np.take(a, i, axis=1))
    np.testing.assert_array_equal(jnp.take(a, i, axis=0, mode="clip"),
                                  np.take(a, np.clip(i, 0, 2), axis=0))
    np.testing.assert_array_equal(jnp.take(a, np.array([5, -7]), axis=1, mode="wrap"),
                                  np.take(a, np.array([5, -7]), axis=1, mode="wrap"))
    # Pinned from jax 0.10.2: the default "fill" mode gives NaN out of bounds.
    np.testing.assert_array_equal(jnp.take(jnp.array([1.0, 2.0, 3.0]), jnp.array([5, -1, -4])),
                                  [np.nan, 3.0, np.nan])
    np.testing.assert_array_equal(jnp.take(jnp.array([1.0, 2.0, 3.0]), jnp.array([5, -1, -4]),
                                           mode="clip"), [3.0, 1.0, 1.0])
    np.testing.assert_array_equal(jax.jit(lambda a, i: jnp.take(a, i, axis=1))(a, i),
                                  np.take(a, i, axis=1))
    with pytest.raises(ValueError, match="Invalid mode 'bad' for np.take"):
        jnp.take(a, i, mode="bad")


def test_take_along_axis():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for axis in (0, 1, -1):
        i = np.argsort(x, axis=axis)
        np.testing.assert_array_equal(jnp.take_along_axis(x, i, axis), np.take_along_axis(x, i, axis))
    i = np.argmin(x, axis=1)[:, None]
    np.testing.assert_array_equal(jnp.take_along_axis(x, i, 1), np.take_along_axis(x, i, 1))
    # Broadcast in the other dims, as numpy.
    np.testing.assert_array_equal(jnp.take_along_axis(x, i[:1], 1), np.take_along_axis(x, np.broadcast_to(i[:1], (3, 1, 5)), 1))
    np.testing.assert_array_equal(jnp.take_along_axis(x[0, 0], np.array([4, -1]), None),
                                  x[0, 0, [4, -1]])
    # Pinned from jax 0.10.2: out of bounds fills.
    np.testing.assert_array_equal(
        jnp.take_along_axis(jnp.array([1.0, 2.0, 3.0]), jnp.array([5, -1]), 0), [np.nan, 3.0])
    with pytest.raises(ValueError, match="indices and arr must have the same number"):
        jnp.take_along_axis(x, np.zeros(2, np.int32), 0)


def test_nonzero_argwhere_flatnonzero_where():
    a = np.array([[0, 3, 0], [4, 0, 5]])
    for got, want in zip(jnp.nonzero(a), np.nonzero(a)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(jnp.where(a), np.where(a)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jnp.argwhere(a), np.argwhere(a))
    np.testing.assert_array_equal(jnp.argwhere(a, size=5, fill_value=-1),
                                  np.concatenate([np.argwhere(a), -np.ones((2, 2), int)]))
    np.testing.assert_array_equal(jnp.flatnonzero(a), np.flatnonzero(a))
    np.testing.assert_array_equal(jnp.argwhere(jnp.float32(2.0)), np.argwhere(2.0))


# ---------------------------------------------------------------------------------------
# Transformations

def test_grads(x64):
    x = np.random.default_rng(1).standard_normal((4, 5))
    i = np.array([3, 0, 3])
    check_grads(lambda x: x[i, 1:4] * 2, (x,), 2, modes=["fwd", "rev"])
    check_grads(lambda x: x[:, np.array([[4], [0]])], (x,), 2, modes=["fwd", "rev"])
    check_grads(lambda x, y: jnp.asarray(x).at[i].add(y), (x, np.ones((3, 5))), 2, modes=["fwd", "rev"])
    check_grads(lambda x, y: jnp.asarray(x).at[i, 2].set(y), (x, np.arange(3.0)), 2, modes=["fwd", "rev"])
    check_grads(lambda x, y: jnp.asarray(x).at[1:3].multiply(y), (x, x[:2] + 1), 2, modes=["fwd", "rev"])
    order = np.argsort(x, 1)
    check_grads(lambda x: jnp.take_along_axis(x, order, 1), (x,), 2, modes=["fwd", "rev"])
    # Duplicates accumulate in the gradient of a gather.
    g = jax.grad(lambda x: x[i].sum())(x)
    np.testing.assert_array_equal(g[:, 0], [1, 0, 0, 2])


def test_vmap_matches_loops():
    x = np.arange(60.0, dtype=np.float32).reshape(3, 4, 5)
    i = np.array([[0, 2], [3, 3], [1, -1]])

    def loop(f, *args):
        return np.stack([np.asarray(f(*a)) for a in zip(*args)])

    f = lambda x, i: jnp.asarray(x)[i, 1:]
    np.testing.assert_array_equal(jax.vmap(f)(x, i), loop(f, x, i))
    g = lambda x, i: jnp.asarray(x).at[i].add(1.0)
    np.testing.assert_array_equal(jax.vmap(g)(x, i), loop(g, x, i))
    h = lambda x, i: jnp.take(x, i, axis=1)
    np.testing.assert_array_equal(jax.vmap(h)(x, i), loop(h, x, i))
    np.testing.assert_array_equal(jax.vmap(f, (None, 0))(x[0], i), loop(f, [x[0]] * 3, i))


@pytest.mark.parametrize("size", [1, 4, 9])
def test_nonzero_with_size_under_jit(size):
    rng = np.random.default_rng(size)
    for a in (rng.integers(0, 3, (3, 5)) * (rng.random((3, 5)) < 0.4), np.zeros((2, 3), int),
              np.ones(7, bool)):
        want = jnp.nonzero(a, size=size, fill_value=-1)  # eager: numpy on the host
        got = jax.jit(lambda a: jnp.nonzero(a, size=size, fill_value=-1))(a)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(jax.jit(lambda a: jnp.argwhere(a, size=size))(a),
                                      jnp.argwhere(a, size=size))
        np.testing.assert_array_equal(jax.jit(lambda a: jnp.flatnonzero(a, size=size))(a),
                                      jnp.flatnonzero(a, size=size))
    with pytest.raises(errors.ConcretizationTypeError,
                       match="The size argument of jnp.nonzero must be statically specified"):
        jax.jit(jnp.nonzero)(np.ones(3))


def _random_index(rng, shape):
    """A random mix of ints, slices (any step), integer arrays, masks, None and Ellipsis."""
    idx, dim, ellipsis = [], 0, False
    bshape = tuple(int(s) for s in rng.integers(1, 4, rng.integers(0, 3)))
    while dim < len(shape):
        r, n = rng.random(), shape[dim]
        if r < 0.25:
            idx.append(int(rng.integers(-n, n)))
            dim += 1
        elif r < 0.5:
            a, b = (int(v) if rng.random() < 0.7 else None for v in rng.integers(-n - 1, n + 2, 2))
            idx.append(slice(a, b, int(rng.choice([1, 2, -1, -2, 3]))))
            dim += 1
        elif r < 0.75:
            idx.append(rng.integers(-n, n, bshape))
            dim += 1
        elif r < 0.82:
            idx.append(None)
        elif r < 0.88 and not ellipsis:
            idx.append(Ellipsis)
            ellipsis = True
            dim = len(shape) - int(rng.integers(0, len(shape) - dim + 1))
        elif r < 0.94:
            idx.append(rng.random(n) < 0.5)
            dim += 1
        else:
            break
    return tuple(idx)


@pytest.mark.parametrize("seed", range(4))
def test_random_indices_match_numpy(seed):
    """Reads, add-updates (np.add.at) and set-updates of random index mixes."""
    rng = np.random.default_rng(seed)
    checked = 0
    while checked < 60:
        shape = tuple(int(s) for s in rng.integers(1, 5, rng.integers(1, 5)))
        xn = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        idx = _random_index(rng, shape)
        try:
            want = xn[idx]
        except IndexError:  # numpy rejects it (e.g. arrays that do not broadcast)
            continue
        x = jnp.asarray(xn)
        got = np.asarray(x[idx])
        assert got.shape == want.shape and np.array_equal(got, want), idx
        y = np.arange(want.size, dtype=np.float32).reshape(want.shape) + 100
        added = xn.copy()
        np.add.at(added, idx, y)
        np.testing.assert_array_equal(x.at[idx].add(y), added, err_msg=str(idx))
        stored = xn.copy()
        stored[idx] = y
        np.testing.assert_array_equal(x.at[idx].set(y), stored, err_msg=str(idx))
        checked += 1
