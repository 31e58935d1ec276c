"""random figures: normal and uniform samples of 1e6 float32, eagerly and under jit, and the
per-call cost of split, tinyxla against jax (and numpy's Generator as a floor).

    python bench/bench_random.py [--quick]

Each figure is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after two warm-up calls; the repeats of all rows are interleaved, so load from
elsewhere on the machine hits them alike, and results are waited for inside the loop.
jax rows need jax installed. Measured, not asserted.
"""
import argparse

import numpy as np

from run import interleaved_medians  # bench/ is on sys.path when run as a script


def library_rows(lib, n):
    """(metric, fn) rows for tinyxla or jax."""
    random = lib.random
    key = random.PRNGKey(0)
    normal_jit = lib.jit(lambda k: random.normal(k, (n,)))
    uniform_jit = lib.jit(lambda k: random.uniform(k, (n,)))
    split_jit = lib.jit(lambda k: random.split(k))
    return [
        ("normal 1e6 f32, eager", lambda: random.normal(key, (n,)).block_until_ready()),
        ("normal 1e6 f32, jit", lambda: normal_jit(key).block_until_ready()),
        ("uniform 1e6 f32, eager", lambda: random.uniform(key, (n,)).block_until_ready()),
        ("uniform 1e6 f32, jit", lambda: uniform_jit(key).block_until_ready()),
        ("split, eager", lambda: random.split(key).block_until_ready()),
        ("split, jit", lambda: split_jit(key).block_until_ready()),
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
    res = interleaved_medians(rows, args.quick)
    metrics = [m for m, _ in library_rows(tinyxla, 1)]
    header = ("metric", "tinyxla", "jax", "numpy", "jax/tx", "np/tx")
    print("{:26s} {:>10s} {:>10s} {:>10s} {:>7s} {:>7s}".format(*header))
    for m in metrics:
        tx = res[("tinyxla", m)]
        jx = res.get(("jax", m))
        npt = res.get(("numpy", m))
        fmt = lambda t: f"{t * 1e3:8.3f}ms" if t is not None else f"{'-':>10s}"  # noqa: E731
        ratio = lambda t: f"{t / tx:7.2f}" if t is not None else f"{'-':>7s}"  # noqa: E731
        print(f"{m:26s} {fmt(tx)} {fmt(jx)} {fmt(npt)} {ratio(jx)} {ratio(npt)}")


if __name__ == "__main__":
    main()
