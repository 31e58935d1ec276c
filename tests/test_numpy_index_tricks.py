"""meshgrid, mgrid, ogrid, r_, c_, s_, index_exp, indices, ix_, ravel_multi_index and
unravel_index against numpy, JAX's clamping in unravel_index, jit == eager, vmap."""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from jnp_reference import assert_jit_matches, assert_same, assert_vmap_matches


def test_grids():
    assert_same(jnp.mgrid[0:3, 0:2], np.mgrid[0:3, 0:2], dtype="int32")
    assert_same(jnp.mgrid[0:1:3j, 0:2], np.mgrid[0:1:3j, 0:2].astype(np.float32))
    assert_same(jnp.mgrid[1:7:2], np.mgrid[1:7:2])
    assert_same(jnp.mgrid[-1:1:0.5], np.mgrid[-1:1:0.5].astype(np.float32))
    assert_same(jnp.ogrid[0:3, 0:2.0], np.ogrid[0:3, 0:2.0])
    assert_same(jnp.ogrid[2:5], np.ogrid[2:5])
    assert_same(jnp.mgrid[()], np.zeros(0, np.int32))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_meshgrid(indexing, sparse, n):
    args = [np.arange(2), np.arange(3.0), np.arange(4, dtype=np.int8)][:n]
    assert_same(jnp.meshgrid(*args, indexing=indexing, sparse=sparse),
                np.meshgrid(*args, indexing=indexing, sparse=sparse))


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # numpy's matrix results
def test_concatenators():
    assert_same(jnp.r_[1, 2, np.array([3, 4])], np.r_[1, 2, np.array([3, 4])])
    for directive in ["0,2", "-1,2,0", "1,2,1", "0,3,-1", "r", "c"]:
        assert_same(jnp.r_[directive, [1, 2], [3, 4]], np.r_[directive, [1, 2], [3, 4]])
    u, v = np.array([1, 2]), np.array([3, 4])
    assert_same(jnp.c_[u, v], np.c_[u, v])
    assert_same(jnp.c_[np.ones((2, 2)), np.array([3, 4])], np.c_[np.ones((2, 2)), np.array([3, 4])])
    assert_same(jnp.r_[0:3, 5.0], np.r_[0:3, 5.0].astype(np.float32))
    assert_same(jnp.r_[-1:1:5j], np.r_[-1:1:5j].astype(np.float32))
    assert jnp.s_[1:2, ::-1] == np.s_[1:2, ::-1]
    assert jnp.index_exp[1:2] == (slice(1, 2, None),)
    assert len(jnp.r_) == 0


def test_indices_and_ix():
    assert_same(jnp.indices((2, 3)), np.indices((2, 3)), dtype="int32")
    assert_same(jnp.indices((2, 3), dtype=np.int8, sparse=True),
                np.indices((2, 3), dtype=np.int8, sparse=True))
    assert_same(jnp.indices((0, 3)), np.indices((0, 3)))
    assert_same(jnp.indices(()), np.zeros(0, np.int32))
    args = (np.array([0, 1]), np.array([2.0, 3, 4]), np.zeros(0, np.int32))
    assert_same(jnp.ix_(*args), np.ix_(*args))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index(mode, order):
    coords = (np.array([1, 2, 0]), np.array([0, 3, 3]), np.array([[4], [1]]))
    assert_same(jnp.ravel_multi_index(coords, (3, 4, 5), mode=mode, order=order),
                np.ravel_multi_index(coords, (3, 4, 5), mode=mode, order=order))
    if mode != "raise":
        far = (np.array([-1, 7]), np.array([9, 2]))
        assert_same(jnp.ravel_multi_index(far, (3, 4), mode=mode, order=order),
                    np.ravel_multi_index(far, (3, 4), mode=mode, order=order))
        fn = lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode=mode, order=order)  # noqa
        assert_jit_matches(fn, jnp.array([5, -2]), jnp.array([1, 9]))


def test_unravel_index():
    assert_same(jnp.unravel_index(np.array([5, 11, 0]), (3, 4)),
                np.unravel_index(np.array([5, 11, 0]), (3, 4)))
    assert_same(jnp.unravel_index(np.array([[7], [23]]), (2, 3, 4)),
                np.unravel_index(np.array([[7], [23]]), (2, 3, 4)))
    # JAX clamps out-of-bounds indices where numpy raises (pinned from jax 0.10.2).
    assert_same(jnp.unravel_index(jnp.array([5, 13, -1, -13]), (3, 4)),
                (np.array([1, 2, 2, 0]), np.array([1, 3, 3, 0])), dtype="int32")
    assert_same(jnp.unravel_index(jnp.array([5], jnp.uint8), (3, 4)),
                (np.array([1]), np.array([1])), dtype="uint8")
    scalar = jnp.unravel_index(5, (3, 4))
    assert scalar[0].weak_type and int(scalar[0]) == 1 and int(scalar[1]) == 1
    assert_jit_matches(lambda i: jnp.unravel_index(i, (3, 4)), jnp.arange(12))
    assert_vmap_matches(lambda i: jnp.stack(jnp.unravel_index(i, (2, 6))), jnp.arange(12))
    flat = jnp.ravel_multi_index(jnp.unravel_index(jnp.arange(24), (2, 3, 4)), (2, 3, 4))
    assert_same(flat, np.arange(24))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda i: jnp.ravel_multi_index((i, i), (3, 4)))(1)
