"""append, delete, insert, place, put and put_along_axis against numpy (axes, dtypes,
index kinds), JAX's drop/wrap/clip modes, jit == eager, vmap == a loop, gradients."""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from jnp_reference import (assert_grad_numeric, assert_jit_matches, assert_same,
                           assert_vmap_matches)

B = np.arange(6).reshape(2, 3)
F = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def test_append():
    assert_same(jnp.append(B, 1.5), np.append(B, 1.5).astype(np.float32))
    assert_same(jnp.append(B, np.ones((1, 3), np.int32), axis=0),
                np.append(B, np.ones((1, 3), np.int32), axis=0))
    assert_same(jnp.append(np.zeros(0), np.array([1, 2])),
                np.append(np.zeros(0), [1, 2]).astype(np.float32))
    assert_grad_numeric(lambda v: jnp.append(v, v[:1] * 2, axis=0), F)


@pytest.mark.parametrize("obj", [1, -1, slice(0, 2), slice(None, None, -2), np.array([0, 2]),
                                 np.array([True, False, True]), np.array([0, 0, 2]),
                                 np.array([], np.int32)], ids=str)
@pytest.mark.parametrize("axis", [1, None])
def test_delete(obj, axis):
    if axis is None and isinstance(obj, np.ndarray) and obj.dtype == bool:
        obj = np.resize(obj, B.size)
    assert_same(jnp.delete(B, obj, axis=axis), np.delete(B, obj, axis=axis))


def test_delete_traced_unique():
    fn = lambda i: jnp.delete(F, i, axis=1, assume_unique_indices=True)  # noqa: E731
    assert_same(jax.jit(fn)(jnp.array([0, 2])), np.delete(F, [0, 2], axis=1))
    assert_same(jax.jit(fn)(jnp.array([-1, 1])), np.delete(F, [-1, 1], axis=1))
    assert_vmap_matches(lambda v: jnp.delete(v, 1), F)
    assert_grad_numeric(lambda v: jnp.delete(v, np.array([0, 3]), axis=1), F)


@pytest.mark.parametrize("obj,values", [(1, 9), (np.array([1, 1]), np.array([7, 8])),
                                        (slice(0, 2), 5), (3, np.array([1, 2])),
                                        (np.array([0, 3, -1]), 4), (-2, np.array([[6]]))],
                         ids=str)
def test_insert(obj, values):
    assert_same(jnp.insert(B, obj, values, axis=1), np.insert(B, obj, values, axis=1))
    if np.ndim(values) < 2:  # JAX cannot insert 2-d values into the flattened array
        assert_same(jnp.insert(B, obj, values), np.insert(B, obj, values))


def test_insert_rows_and_transforms():
    assert_same(jnp.insert(B, 1, np.array([7, 8, 9]), axis=0),
                np.insert(B, 1, np.array([7, 8, 9]), axis=0))
    assert_same(jnp.insert(B, np.array([]), 2), np.insert(B, np.array([], int), 2))
    assert_same(jnp.insert(F, 2, 1.5, axis=0), np.insert(F, 2, 1.5, axis=0))
    assert_jit_matches(lambda v, i: jnp.insert(v, i, -1.0, axis=1), F, jnp.array([0, 2]))
    assert_vmap_matches(lambda v: jnp.insert(v, 2, 0.0), F)
    assert_grad_numeric(lambda v: jnp.insert(v, np.array([1, 1]), v[0, :2] * 3, axis=1), F)


def test_place():
    want = B.copy()
    np.place(want, B > 2, [10, 20])
    assert_same(jnp.place(B, B > 2, jnp.array([10, 20]), inplace=False), want)
    want = F.copy()
    np.place(want, F % 3 == 0, [-1.0])
    assert_same(jnp.place(F, F % 3 == 0, jnp.array([-1.0]), inplace=False), want)
    assert_same(jnp.place(np.zeros(0), np.zeros(0, bool), np.ones(1), inplace=False), np.zeros(0))
    assert_jit_matches(lambda v, m: jnp.place(v, m, jnp.array([5.0, 6.0]), inplace=False),
                       F, F > 5)


@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_put_modes(mode):
    want = B.copy()
    np.put(want, [0, 7, -8], [10, 20], mode=mode)
    assert_same(jnp.put(B, jnp.array([0, 7, -8]), jnp.array([10, 20]), mode=mode,
                        inplace=False), want)


def test_put_drop_pinned_and_transforms():
    # mode=None drops out-of-bounds indices, -1 wraps (pinned from jax 0.10.2).
    assert_same(jnp.put(B, jnp.array([0, 7, -1]), jnp.array([10, 20]), inplace=False),
                np.array([[10, 1, 2], [3, 4, 10]]))
    assert_same(jnp.put(B, jnp.array([], jnp.int32), 5, inplace=False), B)
    assert_jit_matches(lambda i: jnp.put(F, i, 0.5, mode="wrap", inplace=False),
                       jnp.array([1, 30]))
    assert_grad_numeric(lambda v: jnp.put(v, np.array([0, 5]), v[1, 1] * 2, inplace=False), F)


def test_put_along_axis():
    idx = np.array([[0], [2]])
    want = B.copy()
    np.put_along_axis(want, idx, 9, axis=1)
    assert_same(jnp.put_along_axis(B, idx, 9, axis=1, inplace=False), want)
    idx = np.array([[2, 0, 1, 1]])
    want = F.copy()
    np.put_along_axis(want, idx, np.array([[1.0, 2.0, 3.0, 4.0]]), axis=0)
    assert_same(jnp.put_along_axis(F, idx, np.array([[1.0, 2.0, 3.0, 4.0]]), axis=0,
                                   inplace=False), want)
    want = B.copy()
    np.put_along_axis(want, np.array([0, 4]), 9, axis=None)
    assert_same(jnp.put_along_axis(B, np.array([0, 4]), 9, axis=None, inplace=False), want)
    fn = lambda v, i: jnp.put_along_axis(v, i, -1.0, axis=1, inplace=False)  # noqa: E731
    assert_jit_matches(fn, F, jnp.array([[0], [3], [1]]))
    assert_vmap_matches(lambda v: jnp.put_along_axis(v, jnp.array([[1], [0]]), 0.0, axis=-1,
                                                     inplace=False), F.reshape(3, 2, 2))
    assert_grad_numeric(lambda v: jnp.put_along_axis(v, np.array([[1], [0], [3]]), v[:, :1] * 2,
                                                      axis=1, inplace=False), F)
