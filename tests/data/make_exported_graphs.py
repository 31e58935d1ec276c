"""Writes exported_graphs/*.txt: graph texts as jit exports them (lowered, and compiled with
fused regions), the seeds of the exported-graph fuzzers (cpp/tests/test_exported_graph_fuzz.cc,
tests/test_exported_graph_fuzz.py). Run with tinyxla installed; any tinyxla that prints the
current text form will do."""
import os

import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exported_graphs")

f32 = jnp.ones((3, 4), jnp.float32)
v = jnp.arange(5.0)
i = jnp.array([[2], [0]], jnp.int32)
PROGRAMS = {
    "elementwise": (lambda x, y: jnp.tanh(x) * y + jnp.exp(-x) / (1 + y * y), (f32, f32)),
    "reductions": (lambda x: (x.sum(0), x.max(1), jnp.argmax(x, 1), jnp.cumsum(x, 1)), (f32,)),
    "layout": (lambda x: (x.T.reshape(2, 6), x[::2, 1:], jnp.pad(x, ((1, 0), (0, 2))),
                          jnp.concatenate([x, x]), x[::-1]), (f32,)),
    "dot": (lambda x, y: (x @ y.T, jnp.einsum("ij,ij->i", x, y)), (f32, f32)),
    "sort": (lambda x: (jnp.sort(x, 1), jnp.argsort(x, 0)), (f32,)),
    "indexing": (lambda x, i: (x[i[:, 0]], x.at[i[:, 0]].add(1.0), x.at[i[:, 0]].max(2.0),
                               lax.dynamic_slice(x, (1, 1), (2, 2))), (f32, i)),
    "constants": (lambda x: x * jnp.array([1.5, -2.0, np.nan, np.inf], jnp.float32)
                  + jnp.arange(12.0).reshape(3, 4).astype(jnp.bfloat16).astype(jnp.float32)
                  + jnp.asarray([1 + 2j, 3j, 0, -1], jnp.complex64).real, (f32,)),
    "linalg": (lambda m: (jnp.linalg.cholesky(m @ m.T + 3 * jnp.eye(3)), jnp.linalg.eigh(m + m.T)[0]),
               (jnp.ones((3, 3)),)),
    "while": (lambda x: lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1],
              (v,)),
    "scan": (lambda x: lax.scan(lambda c, e: (c + e, c * e), 0.0, x), (v,)),
    "cond": (lambda x: lax.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 1, x), (v,)),
    "nested": (lambda x: lax.fori_loop(0, 3, lambda k, c: lax.fori_loop(
        0, 2, lambda j, d: d + jnp.sin(d) * k, c), x), (v,)),
    "conv": (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME"),
             (jnp.ones((1, 2, 5, 5)), jnp.ones((3, 2, 3, 3)))),
    "dtypes": (lambda x: (x.astype(jnp.int8), x.astype(jnp.uint16) + 3, x.astype(jnp.float16),
                          (x > 1) & (x < 3), lax.bitcast_convert_type(x, jnp.int32)), (v,)),
}


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    for name, (fn, args) in PROGRAMS.items():
        lowered = jax.jit(fn).lower(*args)
        with open(os.path.join(OUT, f"{name}.txt"), "w") as f:
            f.write(lowered.as_text())
        with open(os.path.join(OUT, f"{name}_compiled.txt"), "w") as f:
            f.write(lowered.compile().as_text())


if __name__ == "__main__":
    main()
