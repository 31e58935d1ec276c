"""tri, tril, triu, their index functions, mask_indices, diag, diagonal, diagflat,
diag_indices, fill_diagonal and trace against numpy (shapes, dtypes, offsets, axes), with
JAX's dtypes, jit == eager, vmap == a loop and gradients."""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from jnp_reference import (assert_grad_numeric, assert_jit_matches, assert_same,
                           assert_vmap_matches)

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
A = np.arange(12.0, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("k", [-5, -2, 0, 1, 5])
def test_triangles(k):
    assert_same(jnp.tri(3, 4, k), np.tri(3, 4, k), dtype="float32")
    assert_same(jnp.tri(3, k=k, dtype=bool), np.tri(3, k=k, dtype=bool), dtype="bool")
    for dt in ["int8", "bool", "complex64", "float32"]:
        x = X.astype(dt)
        assert_same(jnp.tril(x, k), np.tril(x, k), dtype=dt)
        assert_same(jnp.triu(x, k), np.triu(x, k), dtype=dt)
    assert_same(jnp.tril_indices(3, k, 4), np.tril_indices(3, k, 4), dtype="int32")
    assert_same(jnp.triu_indices(4, k, 3), np.triu_indices(4, k, 3), dtype="int32")
    assert_same(jnp.tril_indices_from(A, k), np.tril_indices_from(A, k))
    assert_same(jnp.triu_indices_from(A, k), np.triu_indices_from(A, k))
    assert_same(jnp.mask_indices(4, jnp.triu, k), np.mask_indices(4, np.triu, k))
    want = np.mask_indices(4, np.tril, k)[0]
    assert_same(jnp.mask_indices(4, jnp.tril, k, size=20)[0][:len(want)], want)


@pytest.mark.parametrize("k", [-4, -1, 0, 2, 6])
def test_diagonals(k):
    assert_same(jnp.diag(A, k), np.diag(A, k))
    assert_same(jnp.diag(A[0], k), np.diag(A[0], k))
    assert_same(jnp.diagflat(A[:2], k), np.diagflat(A[:2], k))
    for axis1, axis2 in [(0, 1), (1, 2), (2, 0), (-1, -2)]:
        assert_same(jnp.diagonal(X, k, axis1, axis2), np.diagonal(X, k, axis1, axis2))
        assert_same(jnp.trace(X, k, axis1, axis2), np.trace(X, k, axis1, axis2))


def test_dtypes_and_empty():
    assert jnp.trace(np.ones((3, 3), np.int8)).dtype == np.int32  # sum's promotion
    assert jnp.trace(np.ones((3, 3), np.int8), dtype=np.int8).dtype == np.int8
    assert jnp.tri(2, dtype=int).dtype == np.int32
    assert_same(jnp.diag(np.zeros(0, np.float32)), np.zeros((0, 0)))
    assert_same(jnp.diagonal(np.zeros((0, 3))), np.zeros(0))
    assert_same(jnp.tril(np.zeros((2, 0, 3))), np.zeros((2, 0, 3)))
    assert_same(jnp.tril_indices(0), np.tril_indices(0))
    assert_same(jnp.diag_indices(3, 3), np.diag_indices(3, 3), dtype="int32")
    assert_same(jnp.diag_indices_from(np.ones((3, 3))), np.diag_indices_from(np.ones((3, 3))))


def test_fill_diagonal():
    z = np.zeros((3, 4), np.float32)
    want = z.copy()
    np.fill_diagonal(want, [1, 2])
    assert_same(jnp.fill_diagonal(z, jnp.array([1.0, 2.0]), inplace=False), want)
    z = np.zeros((3, 3, 3), np.int32)
    want = z.copy()
    np.fill_diagonal(want, 7)
    assert_same(jnp.fill_diagonal(z, 7, inplace=False), want)


def test_transforms():
    assert_jit_matches(lambda v: jnp.tril(v, -1), X)
    assert_jit_matches(lambda v: jnp.trace(v, 1), A)
    assert_jit_matches(lambda v: jnp.diag(v, 1), A[0])
    assert_jit_matches(lambda t: jnp.trace(A, t), jnp.array(1))  # a traced offset
    assert_vmap_matches(lambda v: jnp.triu(v, 1), X)
    assert_vmap_matches(lambda v: jnp.diag(v, -1), A)
    assert_vmap_matches(lambda v: jnp.diagonal(v, 1), X)
    assert_vmap_matches(lambda v: jnp.fill_diagonal(v, 5.0, inplace=False), X)
    assert_grad_numeric(lambda v: jnp.tril(v) + jnp.triu(v, 2) * 3, A)
    assert_grad_numeric(lambda v: jnp.trace(v, 1) * v, A)
    assert_grad_numeric(lambda v: jnp.diag(v, 1), A[0])
    assert_grad_numeric(lambda v: jnp.diagonal(v, -1), A)
    assert_grad_numeric(lambda v: jnp.fill_diagonal(v, 0.0, inplace=False), A)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda n: jnp.tril_indices(n))(3)
