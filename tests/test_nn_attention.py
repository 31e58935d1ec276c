"""``nn.dot_product_attention`` against outputs of JAX 0.10.2 (tests/data/nn_attention_jax.npz,
made by make_nn_attention_reference.py), a numpy reference, jit, vmap, numerical
gradients and JAX's errors."""
import os

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "nn_attention_jax.npz"))
Q, K, V, BIAS, MASK, QS, KS = (REF["in_" + n] for n in ("q", "k", "v", "bias", "mask", "qs", "ks"))
CASES = {
    "plain": dict(), "bias": dict(bias=BIAS), "mask": dict(mask=MASK),
    "causal": dict(is_causal=True), "window": dict(local_window_size=(1, 2)),
    "window_int": dict(local_window_size=1),
    "seqlens": dict(query_seq_lengths=QS, key_value_seq_lengths=KS),
    "qseq": dict(query_seq_lengths=QS),
    "all": dict(bias=BIAS, mask=MASK, is_causal=True, local_window_size=(2, 0),
                query_seq_lengths=QS, key_value_seq_lengths=KS, scale=0.3),
}


def _numpy_attention(q, k, v, bias=None, mask=None, is_causal=False, scale=None,
                     local_window_size=None, query_seq_lengths=None,
                     key_value_seq_lengths=None):
    """Attention head by head in float64 (GQA: head n reads key/value head n // G)."""
    b, t, n, h = q.shape
    s, kh = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(h) if scale is None else scale
    out = np.zeros((b, t, n, h))
    for bi in range(b):
        for ni in range(n):
            logits = q[bi, :, ni].astype(np.float64) @ k[bi, :, ni // (n // kh)].T * scale
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (b, n, t, s))[bi, ni]
            ok = np.ones((t, s), bool)
            if mask is not None:
                ok &= np.broadcast_to(mask, (b, n, t, s))[bi, ni]
            i, j = np.meshgrid(np.arange(t), np.arange(s), indexing="ij")
            if is_causal:
                ok &= j <= i
            if local_window_size is not None:
                left, right = ((local_window_size,) * 2 if isinstance(local_window_size, int)
                               else local_window_size)
                ok &= (i <= j + left) & (i >= j - right)
            if query_seq_lengths is not None:
                ok &= i < query_seq_lengths[bi]
            if key_value_seq_lengths is not None:
                ok &= j < key_value_seq_lengths[bi]
            logits = np.where(ok, logits, -0.7 * np.finfo(np.float32).max)
            p = np.exp(logits - logits.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            out[bi, :, ni] = p @ v[bi, :, ni // (n // kh)]
            if query_seq_lengths is not None:
                out[bi, query_seq_lengths[bi]:, ni] = 0
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_jax_and_numpy(name):
    got = jax.nn.dot_product_attention(Q, K, V, **CASES[name])
    assert got.shape == Q.shape and got.dtype == jnp.float32
    np.testing.assert_allclose(got, REF[name], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, _numpy_attention(Q, K, V, **CASES[name]), rtol=1e-4,
                               atol=1e-5)
    f = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, **CASES[name]))
    np.testing.assert_allclose(f(Q, K, V), got, rtol=1e-6, atol=1e-6)


def test_residual_unbatched_and_bf16():
    out, lse = jax.nn.dot_product_attention(Q, K, V, is_causal=True, return_residual=True)
    np.testing.assert_allclose(out, REF["res_out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lse, REF["res_lse"], rtol=1e-5, atol=1e-6)
    assert lse.shape == Q.shape[:-1]
    got = jax.nn.dot_product_attention(Q[0], K[0], V[0], is_causal=True)
    assert got.shape == Q[0].shape
    np.testing.assert_allclose(got, REF["3d"], rtol=1e-5, atol=1e-6)
    qb, kb, vb = (jnp.asarray(x, jnp.bfloat16) for x in (Q, K, V))
    got = jax.nn.dot_product_attention(qb, kb, vb, is_causal=True)
    assert got.dtype == jnp.bfloat16
    np.testing.assert_array_equal(got.astype(jnp.float32), REF["bf16"])


def test_grad_against_jax_and_numerical():
    def loss(q, k, v):
        return (jax.nn.dot_product_attention(q, k, v, bias=BIAS, mask=MASK,
                                             is_causal=True) ** 2).sum()

    grads = jax.grad(loss, argnums=(0, 1, 2))(Q, K, V)
    for g, name in zip(grads, ("gq", "gk", "gv")):
        np.testing.assert_allclose(g, REF[name], rtol=1e-4, atol=1e-5)
    rng = np.random.RandomState(3)
    direction = rng.randn(*Q.shape).astype(np.float32)
    eps = 1e-2
    numerical = (loss(Q + eps * direction, K, V) - loss(Q - eps * direction, K, V)) / (2 * eps)
    np.testing.assert_allclose(np.sum(np.asarray(grads[0]) * direction), numerical, rtol=2e-2)


def test_vmap_is_a_loop():
    f = lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True,
                                                     local_window_size=(1, 1))
    got = jax.vmap(f)(Q, K, V)  # vmapped over the batch of unbatched (T, N, H) inputs
    expect = np.stack([np.asarray(f(Q[i], K[i], V[i])) for i in range(Q.shape[0])])
    np.testing.assert_allclose(got, expect, rtol=1e-6, atol=1e-6)


def test_scale_default_and_gqa_broadcast():
    q = np.random.RandomState(4).randn(1, 3, 6, 4).astype(np.float32)
    k = np.random.RandomState(5).randn(1, 4, 3, 4).astype(np.float32)
    v = np.random.RandomState(6).randn(1, 4, 3, 4).astype(np.float32)
    np.testing.assert_allclose(jax.nn.dot_product_attention(q, k, v),
                               _numpy_attention(q, k, v), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.nn.dot_product_attention(q, k, v, scale=0.5),
                               _numpy_attention(q, k, v, scale=0.5), rtol=1e-5, atol=1e-6)
    per_head = np.random.RandomState(7).rand(1, 6, 3, 4) > 0.2  # one mask per query head
    per_head[..., 0] = True
    np.testing.assert_allclose(jax.nn.dot_product_attention(q, k, v, mask=per_head),
                               _numpy_attention(q, k, v, mask=per_head), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.nn.dot_product_attention(q, k, v, implementation="xla"),
                               _numpy_attention(q, k, v), rtol=1e-5, atol=1e-6)


def test_errors():
    q, k = jnp.ones((2, 3, 4, 8)), jnp.ones((2, 5, 2, 8))
    cases = [
        (dict(value=jnp.ones((2, 5, 2, 4))), "value shape should be \\[2, 5, 2, 8\\]: but got "
                                            "\\(2, 5, 2, 4\\)"),
        (dict(value=k.astype(jnp.bfloat16)), "value dtype should be float32, but got bfloat16"),
        (dict(query=q.astype(jnp.bfloat16)), "query dtype should be float32, but got bfloat16"),
        (dict(query=jnp.ones((2, 3, 3, 8))), "The number of query heads must be a multiple of "
                                             "key/value heads, but got 3 vs 2"),
        (dict(mask=jnp.ones((2, 4, 3, 5))), "mask dtype should be bool, but got float32"),
        (dict(query_seq_lengths=jnp.ones(2, jnp.float32)),
         "query_seq_lengths dtype should be int32, but got float32"),
        (dict(key_value_seq_lengths=jnp.ones(3, jnp.int32)),
         "key_value_seq_lengths shape should be \\[2\\]: but got \\(3,\\)"),
        (dict(implementation="foo"), "Unsupported implementation option: foo"),
        (dict(query=jnp.ones((1, 2, 3, 4, 8))), "query ndim should be 4, but got 5"),
        (dict(bias=jnp.ones((1, 1, 1, 1, 1))), "bias ndim should be 4, but got 5"),
    ]
    for kw, msg in cases:
        args = {"query": q, "key": k, "value": k, **kw}
        with pytest.raises(ValueError, match=msg):
            jax.nn.dot_product_attention(**args)
