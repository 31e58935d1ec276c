"""random figures: normal and uniform samples of 1e6 float32 (and normal of 1e7), gamma, beta
and poisson samples
of 1e6 (the rejection samplers), eagerly and under jit, and the per-call cost of split,
tinyxla against jax (and numpy's Generator as a floor).

    python bench/bench_random.py [--quick]

Each figure is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after two warm-up calls; the repeats of all rows are interleaved, so load from
elsewhere on the machine hits them alike, and results are waited for inside the loop.
jax rows need jax installed. Measured, not asserted.
"""
import argparse

import numpy as np

from run import interleaved_medians, print_figures  # bench/ is on sys.path when run as a script


def library_rows(lib, n):
    """(metric, fn) rows for tinyxla or jax."""
    random = lib.random
    key = random.PRNGKey(0)
    normal_jit = lib.jit(lambda k: random.normal(k, (n,)))
    normal_big_jit = lib.jit(lambda k: random.normal(k, (10 * n,)))
    uniform_jit = lib.jit(lambda k: random.uniform(k, (n,)))
    split_jit = lib.jit(lambda k: random.split(k))
    gamma_jit = lib.jit(lambda k: random.gamma(k, 2.0, (n,)))
    beta_jit = lib.jit(lambda k: random.beta(k, 2.0, 3.0, (n,)))
    poisson_jit = lib.jit(lambda k: random.poisson(k, 4.0, (n,)))
    return [
        ("normal 1e6 f32, eager", lambda: random.normal(key, (n,)).block_until_ready()),
        ("normal 1e6 f32, jit", lambda: normal_jit(key).block_until_ready()),
        ("normal 1e7 f32, jit", lambda: normal_big_jit(key).block_until_ready()),
        ("uniform 1e6 f32, eager", lambda: random.uniform(key, (n,)).block_until_ready()),
        ("uniform 1e6 f32, jit", lambda: uniform_jit(key).block_until_ready()),
        ("split, eager", lambda: random.split(key).block_until_ready()),
        ("split, jit", lambda: split_jit(key).block_until_ready()),
        ("gamma(2) 1e6 f32, eager", lambda: random.gamma(key, 2.0, (n,)).block_until_ready()),
        ("gamma(2) 1e6 f32, jit", lambda: gamma_jit(key).block_until_ready()),
        ("beta(2, 3) 1e6 f32, eager",
         lambda: random.beta(key, 2.0, 3.0, (n,)).block_until_ready()),
        ("beta(2, 3) 1e6 f32, jit", lambda: beta_jit(key).block_until_ready()),
        ("poisson(4) 1e6 i32, eager", lambda: random.poisson(key, 4.0, (n,)).block_until_ready()),
        ("poisson(4) 1e6 i32, jit", lambda: poisson_jit(key).block_until_ready()),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 1_000_000
    import tinyxla
    libs = {"tinyxla": tinyxla}
    try:
        import jax
        libs["jax"] = jax
    except ImportError:
        pass
    rows = []
    for name, lib in libs.items():
        rows += [((name, metric), fn) for metric, fn in library_rows(lib, n)]
    gen = np.random.default_rng(0)
    rows.append((("numpy", "normal 1e6 f32, eager"),
                 lambda: gen.standard_normal(n, dtype=np.float32)))
    rows.append((("numpy", "uniform 1e6 f32, eager"), lambda: gen.random(n, dtype=np.float32)))
    rows.append((("numpy", "gamma(2) 1e6 f32, eager"),
                 lambda: gen.standard_gamma(2.0, n, dtype=np.float32)))
    rows.append((("numpy", "beta(2, 3) 1e6 f32, eager"), lambda: gen.beta(2.0, 3.0, n)))
    rows.append((("numpy", "poisson(4) 1e6 i32, eager"), lambda: gen.poisson(4.0, n)))
    res = interleaved_medians(rows, args.quick)
    tables: dict = {}
    for (lib, metric), t in res.items():
        tables.setdefault(lib, {})[f"{metric} (ms)"] = t * 1e3
    print_figures(tables.pop("tinyxla"), tables)


if __name__ == "__main__":
    main()
