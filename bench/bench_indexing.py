"""Indexing figures, tinyxla against jax and numpy in one run:

- ``x.at[i].set(v)`` under jit on 1e6 float32, with x donated (an in-place update: no
  copy of x) and not donated (the update must copy x), and a jitted loop-carried
  sequence of 10 updates whose intermediates are dead;
- a gather of 1e6 random indices from 1e6 float32 (``x[idx]``, eager and jitted) against
  numpy's fancy indexing ``x[idx]``;
- a scatter-add of 1e6 random indices (``x.at[idx].add(1)``) against ``np.add.at``.

    python bench/bench_indexing.py [--quick]

Each figure is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after two warm-up calls; results are waited for inside the loop. jax columns
need jax installed. Measured, not asserted.
"""

import numpy as np

from run import compare_figures, median_time  # bench/ is on sys.path when run as a script

N = 1_000_000


def figures(jax, jnp, quick):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(N).astype(np.float32)
    idx_np = rng.integers(0, N, N).astype(np.int32)
    x, idx = jnp.asarray(x_np), jnp.asarray(idx_np)

    set_donated = jax.jit(lambda x, i, v: x.at[i].set(v), donate_argnums=0)
    set_copy = jax.jit(lambda x, i, v: x.at[i].set(v))
    state = [jnp.asarray(x_np) + 0]

    def donated():
        state[0] = set_donated(state[0], 12345, 1.0)
        state[0].block_until_ready()

    def ten_updates(x, i):
        for k in range(10):
            x = x.at[i + k].set(float(k))
        return x

    ten = jax.jit(ten_updates)
    take = jax.jit(lambda x, i: x[i])
    add_at = jax.jit(lambda x, i: x.at[i].add(1.0))
    return {
        "jit x.at[i].set(v), donated (us)": median_time(donated, quick) * 1e6,
        "jit x.at[i].set(v), copying (us)": median_time(
            lambda: set_copy(x, 12345, 1.0).block_until_ready(), quick) * 1e6,
        "jit 10 chained .at[].set (us)": median_time(
            lambda: ten(x, 100).block_until_ready(), quick) * 1e6,
        "gather 1e6 of 1e6, eager (ms)": median_time(
            lambda: x[idx].block_until_ready(), quick) * 1e3,
        "gather 1e6 of 1e6, jit (ms)": median_time(
            lambda: take(x, idx).block_until_ready(), quick) * 1e3,
        "scatter-add 1e6 of 1e6, jit (ms)": median_time(
            lambda: add_at(x, idx).block_until_ready(), quick) * 1e3,
    }


def numpy_figures(quick):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32)
    idx = rng.integers(0, N, N).astype(np.int32)

    def add_at():
        y = x.copy()
        np.add.at(y, idx, 1.0)

    def set_copy():
        y = x.copy()
        y[12345] = 1.0

    return {
        "jit x.at[i].set(v), copying (us)": median_time(set_copy, quick) * 1e6,
        "gather 1e6 of 1e6, eager (ms)": median_time(lambda: x[idx], quick) * 1e3,
        "gather 1e6 of 1e6, jit (ms)": median_time(lambda: x[idx], quick) * 1e3,
        "scatter-add 1e6 of 1e6, jit (ms)": median_time(add_at, quick) * 1e3,
    }


def main():
    compare_figures(figures, numpy_figures)
    print("numpy's copying row is x.copy() then one store; its jit rows are the eager ones.")


if __name__ == "__main__":
    main()
