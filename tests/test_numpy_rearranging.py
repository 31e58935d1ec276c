"""split & co., roll, rollaxis, rot90, fliplr/flipud, tile, repeat, resize, concat,
column_stack and block against numpy (shapes incl. scalar and empty, dtypes, axes), with
JAX's own values where it departs from numpy, jit == eager, vmap == a loop and gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from jnp_reference import (assert_grad_numeric, assert_jit_matches, assert_same,
                           assert_vmap_matches)

A = np.arange(24).reshape(4, 6)
X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("ios", [2, [1, 3], [0], [3, 4], np.array([2, 3]), [], [0, 0, 4]],
                         ids=str)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_array_split_and_split(ios, axis):
    assert_same(jnp.array_split(A, ios, axis=axis), np.array_split(A, ios, axis=axis))
    try:
        want = np.split(A, ios, axis=axis)
    except ValueError:
        with pytest.raises(ValueError):
            jnp.split(A, ios, axis=axis)
        return
    assert_same(jnp.split(A, ios, axis=axis), want)


def test_split_variants_and_dtypes():
    for dt in ["bool", "int8", "float16", "complex64"]:
        assert_same(jnp.hsplit(A.astype(dt), 3), np.hsplit(A.astype(dt), 3), dtype=dt)
    assert_same(jnp.vsplit(A, [1]), np.vsplit(A, [1]))
    assert_same(jnp.dsplit(X, 2), np.dsplit(X, 2))
    assert_same(jnp.hsplit(np.arange(6), [2]), np.hsplit(np.arange(6), [2]))
    assert_same(jnp.split(np.zeros((0, 3)), 3, axis=1), np.split(np.zeros((0, 3)), 3, axis=1))
    assert_same(jnp.array_split(np.arange(3.0), 5), np.array_split(np.arange(3.0), 5))
    for axis in range(3):
        assert_same(jnp.unstack(X, axis=axis), list(np.moveaxis(X, axis, 0)))
    assert_jit_matches(lambda v: jnp.split(v, [1, 3], axis=1), X)
    assert_vmap_matches(lambda v: jnp.array_split(v, 3, axis=1)[1], X)
    assert_grad_numeric(lambda v: jnp.split(v, [1], axis=1)[1] * 2, X[0])
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda i: jnp.split(A, i))(2)


@pytest.mark.parametrize("shift", [1, -3, 30, (1, 2), 0], ids=str)
@pytest.mark.parametrize("axis", [None, 0, (0, 1), 1, -1], ids=str)
def test_roll(shift, axis):
    try:
        want = np.roll(A, shift, axis)
    except ValueError:
        return
    assert_same(jnp.roll(A, shift, axis), want)


def test_roll_traced_and_transforms():
    assert_same(jnp.roll(A, jnp.array(2), 1), np.roll(A, 2, 1))
    assert_same(jnp.roll(A, jnp.array([2, -1]), (0, 1)), np.roll(A, (2, -1), (0, 1)))
    assert_same(jax.jit(lambda s: jnp.roll(A, s, 1))(-7), np.roll(A, -7, 1))
    assert_same(jnp.roll(A, 1.5), np.roll(A, 1))  # JAX converts a float shift to int
    assert_same(jnp.roll(np.zeros((0, 2)), 3, 0), np.zeros((0, 2)))
    assert_same(jnp.roll(np.float32(3), 2), np.roll(np.float32(3), 2))
    assert_vmap_matches(lambda v: jnp.roll(v, 2, axis=1), X)
    assert_grad_numeric(lambda v: jnp.roll(v, 1, axis=0) * jnp.arange(4.0), X[0])
    shifts = jnp.array([0, 1, 5])
    got = jax.vmap(lambda s: jnp.roll(jnp.arange(4), s))(shifts)
    assert_same(got, np.stack([np.roll(np.arange(4), int(s)) for s in [0, 1, 5]]))


@pytest.mark.parametrize("k", range(-2, 6))
@pytest.mark.parametrize("axes", [(0, 1), (1, 2), (2, 0), (-1, -3)], ids=str)
def test_rot90(k, axes):
    assert_same(jnp.rot90(X, k, axes), np.rot90(X, k, axes))


def test_rollaxis_flips():
    for axis, start in [(0, 2), (2, 0), (1, 3), (-1, 1), (0, -2)]:
        assert_same(jnp.rollaxis(X, axis, start), np.rollaxis(X, axis, start))
    assert_same(jnp.fliplr(A), np.fliplr(A))
    assert_same(jnp.flipud(A), np.flipud(A))
    assert_same(jnp.flipud(np.arange(3)), np.flipud(np.arange(3)))
    assert_jit_matches(lambda v: jnp.rot90(v, 3), X)
    assert_vmap_matches(jnp.fliplr, X)


@pytest.mark.parametrize("reps", [2, (2, 1), (1, 2, 3), 0, (), (3, 0)], ids=str)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0, 2)], ids=str)
def test_tile(reps, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
    assert_same(jnp.tile(a, reps), np.tile(a, reps), dtype="int16")


@pytest.mark.parametrize("repeats,axis", [(2, None), (2, 0), ([1, 0, 2, 1], 0),
                                          ([1, 2, 0, 1, 1, 3], 1), (0, 1), ([3], 1),
                                          (np.int64(2), -1)], ids=str)
def test_repeat(repeats, axis):
    reps = np.array(repeats) if isinstance(repeats, list) else repeats
    assert_same(jnp.repeat(A, reps, axis=axis), np.repeat(A, repeats, axis=axis))


def test_repeat_total_length_and_transforms():
    reps = np.array([1, 0, 2, 1])
    padded = np.concatenate([np.repeat(A, reps, axis=0), A[-1:], A[-1:]])
    assert_same(jnp.repeat(A, reps, axis=0, total_repeat_length=6), padded)
    got = jax.jit(lambda r: jnp.repeat(A, r, axis=0, total_repeat_length=3))(jnp.array(reps))
    assert_same(got, np.repeat(A, reps, axis=0)[:3])
    assert_same(jnp.repeat(np.float32(2), 3), np.repeat(np.float32(2), 3))
    assert_same(jnp.repeat(np.float32(2), 3, total_repeat_length=3), np.full(3, 2.0))
    assert_same(jnp.repeat(np.zeros((0, 2)), 3, axis=0), np.zeros((0, 2)))
    assert_jit_matches(lambda v: jnp.repeat(v, 2, axis=1), X)
    assert_vmap_matches(lambda v: jnp.repeat(v, np.array([1, 0, 3]), axis=0), X)
    assert_grad_numeric(lambda v: jnp.repeat(v, np.array([2, 0, 1]), axis=0,
                                             total_repeat_length=4), X[0])


@pytest.mark.parametrize("new_shape", [(3, 3), (30,), (2, 0), 7, ()], ids=str)
def test_resize(new_shape):
    assert_same(jnp.resize(A, new_shape), np.resize(A, new_shape))
    assert_same(jnp.resize(np.zeros(0), (2,)), np.zeros(2))


def test_concat_column_stack_block():
    assert_same(jnp.concat([np.ones(2), np.zeros(2)], axis=None),
                np.concatenate([np.ones(2), np.zeros(2)], axis=None))
    assert_same(jnp.concat([X, X], axis=-1), np.concatenate([X, X], axis=-1))
    assert_same(jnp.column_stack([np.ones(2), np.zeros((2, 3))]),
                np.column_stack([np.ones(2), np.zeros((2, 3))]))
    for shape in [(2,), (2, 3), (2, 3, 4)]:
        arr = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        assert_same(jnp.column_stack(arr), np.column_stack(arr))
    blocks = [[np.ones((2, 2)), np.zeros((2, 1))], [np.zeros((1, 2)), np.ones((1, 1))]]
    assert_same(jnp.block(blocks), np.block(blocks))
    assert_same(jnp.block([[1, 2], [3, 4]]), np.block([[1, 2], [3, 4]]))
    assert_same(jnp.block([X, X]), np.block([X, X]))
    weak = jnp.block([1, 2])
    assert weak.weak_type and weak.dtype == np.int32
    assert_jit_matches(lambda u, v: jnp.block([[u, v], [v, u]]), A, A)
    assert_grad_numeric(lambda v: jnp.block([[v, 2 * v]]), X[0])
