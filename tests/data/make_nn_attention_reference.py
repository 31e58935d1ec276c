"""Writes nn_attention_jax.npz: jax.nn.dot_product_attention outputs from JAX 0.10.2 (run with
the oracle: python make_nn_attention_reference.py nn_attention_jax.npz)."""
import sys, numpy as np
import jax, jax.numpy as jnp
rng = np.random.RandomState(0)
B, T, S, N, K, H = 2, 5, 6, 4, 2, 8
q = rng.randn(B, T, N, H).astype(np.float32)
k = rng.randn(B, S, K, H).astype(np.float32)
v = rng.randn(B, S, K, H).astype(np.float32)
bias = rng.randn(1, N, T, S).astype(np.float32)
mask = rng.rand(B, 1, T, S) > 0.3
qs = np.array([3, 5], np.int32); ks = np.array([6, 2], np.int32)
cases = {
 'plain': dict(),
 'bias': dict(bias=bias),
 'mask': dict(mask=mask),
 'causal': dict(is_causal=True),
 'window': dict(local_window_size=(1, 2)),
 'window_int': dict(local_window_size=1),
 'seqlens': dict(query_seq_lengths=qs, key_value_seq_lengths=ks),
 'qseq': dict(query_seq_lengths=qs),
 'all': dict(bias=bias, mask=mask, is_causal=True, local_window_size=(2, 0), query_seq_lengths=qs, key_value_seq_lengths=ks, scale=0.3),
}
out = {}
for name, kw in cases.items():
    out[name] = np.asarray(jax.nn.dot_product_attention(q, k, v, **kw))
o, r = jax.nn.dot_product_attention(q, k, v, is_causal=True, return_residual=True)
out['res_out'], out['res_lse'] = np.asarray(o), np.asarray(r)
out['3d'] = np.asarray(jax.nn.dot_product_attention(q[0], k[0], v[0], is_causal=True))
g = jax.grad(lambda q, k, v: (jax.nn.dot_product_attention(q, k, v, bias=bias, mask=mask, is_causal=True) ** 2).sum(), argnums=(0, 1, 2))(q, k, v)
out['gq'], out['gk'], out['gv'] = [np.asarray(x) for x in g]
qb, kb, vb = (jnp.asarray(x, jnp.bfloat16) for x in (q, k, v))
out['bf16'] = np.asarray(jax.nn.dot_product_attention(qb, kb, vb, is_causal=True).astype(jnp.float32))
np.savez(sys.argv[1], in_q=q, in_k=k, in_v=v, in_bias=bias, in_mask=mask, in_qs=qs, in_ks=ks, **out)
