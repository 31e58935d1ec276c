"""Sorting figures: sort and argsort of 1e6 float32, sort of 1000 rows of 1000, and cumsum
of 1e6 float32, eager and jitted, against numpy and JAX in one run.

    python bench/bench_sorting.py [--quick]

Each figure is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after warm-up; results are waited for inside the loop. jax columns need jax
installed. Measured, not asserted.
"""

import numpy as np

from run import compare_figures, median_time  # bench/ is on sys.path when run as a script


_rng = np.random.RandomState(0)
FLAT = _rng.randn(1_000_000).astype(np.float32)
ROWS = _rng.randn(1000, 1000).astype(np.float32)


def figures(jax, jnp, quick):
    x, r = jnp.asarray(FLAT), jnp.asarray(ROWS)
    jsort = jax.jit(jnp.sort)
    rows = jax.jit(lambda r: jnp.sort(r, axis=1))
    return {
        "sort 1e6 f32 (ms)": median_time(lambda: jnp.sort(x).block_until_ready(), quick) * 1e3,
        "jit sort 1e6 f32 (ms)": median_time(lambda: jsort(x).block_until_ready(), quick) * 1e3,
        "argsort 1e6 f32 (ms)": median_time(
            lambda: jnp.argsort(x).block_until_ready(), quick) * 1e3,
        "jit sort 1000x1000 rows (ms)": median_time(
            lambda: rows(r).block_until_ready(), quick) * 1e3,
        "cumsum 1e6 f32 (ms)": median_time(lambda: jnp.cumsum(x).block_until_ready(), quick) * 1e3,
    }


def numpy_figures(quick):
    return {
        "sort 1e6 f32 (ms)": median_time(lambda: np.sort(FLAT), quick) * 1e3,
        "jit sort 1e6 f32 (ms)": median_time(lambda: np.sort(FLAT), quick) * 1e3,
        "argsort 1e6 f32 (ms)": median_time(lambda: np.argsort(FLAT, kind="stable"), quick) * 1e3,
        "jit sort 1000x1000 rows (ms)": median_time(lambda: np.sort(ROWS, axis=1), quick) * 1e3,
        "cumsum 1e6 f32 (ms)": median_time(lambda: np.cumsum(FLAT), quick) * 1e3,
    }


def main():
    compare_figures(figures, numpy_figures)


if __name__ == "__main__":
    main()
