"""Autodiff figures: eager grad of a 150-op scalar function, and jit(grad(f)) against jit(f)
for the elementwise chain ``sum(tanh(x*2+1)*0.5 + exp(-x*x) - sin(x))`` on 1e6 float32,
each against JAX.

    python bench/bench_autodiff.py [--quick]

Each figure is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after two warm-up calls; results are waited for inside the loop. jax columns
need jax installed. Measured, not asserted.
"""

import numpy as np

from run import compare_figures, median_time  # bench/ is on sys.path when run as a script


def figures(jax, jnp, quick):
    def f150(x):  # 50 x (sin, mul, add): 150 primitives
        for _ in range(50):
            x = jnp.sin(x) * 1.01 + 0.1
        return x

    def chain(x):
        return jnp.sum(jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x))

    g150 = jax.grad(f150)
    x0 = jnp.float32(0.5)
    x = jnp.asarray(np.random.RandomState(0).rand(1_000_000).astype(np.float32))
    jf, jg = jax.jit(chain), jax.jit(jax.grad(chain))
    return {
        "eager grad, 150 ops (ms)": median_time(lambda: g150(x0).block_until_ready(), quick) * 1e3,
        "jit(f), chain 1e6 f32 (ms)": median_time(lambda: jf(x).block_until_ready(), quick) * 1e3,
        "jit(grad f), chain 1e6 f32 (ms)": median_time(lambda: jg(x).block_until_ready(),
                                                       quick) * 1e3,
    }


def main():
    ours, peers = compare_figures(figures)
    key_f, key_g = "jit(f), chain 1e6 f32 (ms)", "jit(grad f), chain 1e6 f32 (ms)"
    print(f"jit(grad f) / jit(f): tinyxla {ours[key_g] / ours[key_f]:.2f}" +
          "".join(f", {p} {r[key_g] / r[key_f]:.2f}" for p, r in peers.items()))


if __name__ == "__main__":
    main()
