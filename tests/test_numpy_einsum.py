"""jnp.einsum / einsum_path against numpy over both calling conventions, repeated labels,
ellipses, broadcasting, dtypes and optimize settings; jit, vmap and grad; JAX's errors."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.test_util import check_grads

_rng = np.random.RandomState(0)


def _r(*shape, dtype=np.float32):
    return np.asarray(_rng.randn(*shape), dtype=dtype)


CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij,jj->ij", [(3, 3), (3, 3)]),
    ("ij->", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("...j->...", [(2, 3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("bi,bi->b", [(1, 3), (4, 3)]),
    ("ijk,jlk->il", [(2, 3, 5), (3, 4, 5)]),
    ("i,i,i->", [(4,), (4,), (4,)]),
    ("ab,cd->", [(2, 3), (4, 5)]),
    ("iaj,ja->ai", [(2, 3, 4), (4, 3)]),
    (",", [(), ()]),
    ("i,->i", [(3,), ()]),
]


@pytest.mark.parametrize("spec,shapes", CASES)
def test_einsum_matches_numpy(spec, shapes):
    ops = [_r(*s) for s in shapes]
    want = np.einsum(spec, *ops)
    np.testing.assert_allclose(jnp.einsum(spec, *ops), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jax.jit(lambda *a: jnp.einsum(spec, *a))(*ops), want,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal", "auto"])
def test_optimize_settings(optimize):
    ops = [_r(2, 3), _r(3, 4), _r(4, 5)]
    want = np.einsum("ij,jk,kl->il", *ops)
    np.testing.assert_allclose(jnp.einsum("ij,jk,kl->il", *ops, optimize=optimize), want,
                               rtol=1e-5)
    path, _ = jnp.einsum_path("ij,jk,kl->il", *ops, optimize=optimize)
    np.testing.assert_allclose(jnp.einsum("ij,jk,kl->il", *ops, optimize=path), want, rtol=1e-5)


def test_einsum_path_pinned_from_jax():
    # jax 0.10.2: einsum_path("ij,jk,kl", (2,3), (3,100), (100,5), optimize="optimal")[0]
    ops = [np.ones((2, 3)), np.ones((3, 100)), np.ones((100, 5))]
    assert jnp.einsum_path("ij,jk,kl", *ops, optimize="optimal")[0] == [(1, 2), (0, 1)]


def test_interleaved_form():
    m, x = np.arange(16).reshape(4, 4), np.arange(4)
    np.testing.assert_array_equal(jnp.einsum(m, (0, 1), x, (1,)), m @ x)
    np.testing.assert_array_equal(jnp.einsum(m, (0, 1), x, (1,), (0,)), m @ x)
    np.testing.assert_array_equal(jnp.einsum(x, (0,), x, (1,), (0, 1)), np.outer(x, x))
    np.testing.assert_array_equal(jnp.einsum(m, (..., 0), (...,)), m.sum(-1))


def test_dtypes_pinned_from_jax():
    i8 = np.array([[1, 2]], np.int8)
    assert jnp.einsum("ij,jk", i8, np.array([[1, 2, 3]] * 2, np.int8)).dtype == np.int8
    assert jnp.einsum("ij,jk", i8, np.array([[1], [2]], np.int32)).dtype == np.int32
    assert jnp.einsum("ij,j", i8, 3 * np.ones(2, np.int8)).dtype == np.int8
    with pytest.raises(TypeError, match="must not be narrower than the original type"):
        jnp.einsum("ij,", i8, 3)  # as in JAX: the weak int is an int32 operand to the dot
    out = jnp.einsum("ij,ij->i", i8, i8, preferred_element_type=np.float32)
    assert out.dtype == np.float32 and float(out[0]) == 5.0
    assert jnp.einsum(",", 2, 3).weak_type
    assert not jnp.einsum(",", np.float32(2), 3.0).weak_type
    b = jnp.ones(3, bool)
    assert jnp.einsum("i,i", b, b).dtype == np.bool_ and bool(jnp.einsum("i,i", b, b))
    assert bool(jnp.einsum("i,j->", b, jnp.ones(2, bool)))
    x = jnp.ones((2, 2), jnp.bfloat16)
    assert jnp.einsum("ij,jk", x, x).dtype == jnp.bfloat16
    z = np.array([[1 + 2j, 3j]], np.complex64)
    np.testing.assert_allclose(jnp.einsum("ij,kj", z, z), np.einsum("ij,kj", z, z))


def test_lowers_to_dot_general_only():
    a, b = _r(3, 4), _r(4, 5)
    jaxpr = str(jax.make_jaxpr(lambda a, b: jnp.einsum("ij,jk->ik", a, b))(a, b))
    assert "dot_general" in jaxpr and "transpose" not in jaxpr
    chain = str(jax.make_jaxpr(lambda *o: jnp.einsum("ij,jk,kl,lm->im", *o))(
        _r(2, 3), _r(3, 4), _r(4, 5), _r(5, 2)))
    assert chain.count("dot_general") == 3


def test_vmap_and_grad():
    a, b = _r(3, 4), _r(4, 5)
    batch = np.stack([a, 2 * a, -a])
    got = jax.vmap(lambda x: jnp.einsum("ij,jk->ik", x, b))(batch)
    np.testing.assert_allclose(got, np.stack([x @ b for x in batch]), rtol=1e-5)
    got = jax.vmap(lambda x, y: jnp.einsum("ii,ij->j", x, y), in_axes=(None, 0))(
        _r(4, 4) * 0 + np.eye(4, dtype=np.float32), np.stack([b.T[:4], b.T[1:]]))
    assert got.shape == (2, 4)
    check_grads(lambda a, b: jnp.einsum("ij,jk->ik", a, b), (a.astype(np.float64),
                                                              b.astype(np.float64)),
                order=2, modes=("fwd", "rev"))
    check_grads(lambda a: jnp.einsum("iij->j", a), (_r(3, 3, 2).astype(np.float64),),
                order=1, modes=("rev",))


def test_errors_match_jax():
    with pytest.raises(ValueError, match="Size of label 'j' for operand 1"):
        jnp.einsum("ij,jk", np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="did not appear in the input"):
        jnp.einsum("ij,jk->q", np.ones((2, 3)), np.ones((3, 5)))
    with pytest.raises(ValueError, match="must be equal to the number of operands"):
        jnp.einsum("ij", np.ones((2, 3)), np.ones((3, 5)))
    with pytest.raises(TypeError, match="einsum requires ndarray or scalar arguments"):
        jnp.einsum("ij,jk", [[1.0]], np.ones((1, 5)))
    with pytest.raises(NotImplementedError, match="The 'out' argument"):
        jnp.einsum("i", np.ones(2), out=np.ones(2))


def test_custom_dot_general():
    calls = []

    def dg(*args, **kw):
        calls.append(args[2])
        return lax.dot_general(*args, **kw)
    jnp.einsum("ij,jk", _r(2, 3), _r(3, 4), _dot_general=dg)
    assert calls == [(((1,), (0,)), ((), ()))]
