"""jnp breadth figures: einsum against the hand-written dot_general (and jax.jit(jnp.einsum)),
and histogram, bincount, isin, unique and the sorted set operations on 1e6 elements against
numpy and jax, in one run.

    python bench/bench_numpy_breadth.py [--quick]

Each figure is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after warm-up; results are waited for inside the loop. For jax the einsum
figures are ``jax.jit(jnp.einsum)`` and the set operations are jitted with a static
``size`` where JAX needs one. jax columns need jax installed. Measured, not asserted.
"""

import numpy as np

from run import compare_figures, median_time  # bench/ is on sys.path when run as a script

_rng = np.random.RandomState(0)
N = 1_000_000
EINSUMS = {
    "ij,jk->ik": [(256, 256), (256, 256)],
    "bij,bjk->bik": [(16, 128, 128), (16, 128, 128)],
    "bhqd,bhkd->bhqk": [(4, 8, 128, 64), (4, 8, 128, 64)],
    "ij,jk,kl,lm->im": [(64, 256), (256, 256), (256, 256), (256, 64)],
}
OPERANDS = {s: [_rng.randn(*sh).astype(np.float32) for sh in shapes]
            for s, shapes in EINSUMS.items()}
FLOATS = _rng.randn(N).astype(np.float32)
INTS = _rng.randint(0, 1000, N).astype(np.int32)
INTS2 = _rng.randint(500, 1500, N).astype(np.int32)
TESTS = _rng.randint(0, 100_000, 1000).astype(np.int32)


def _dot_general_by_hand(lax, spec):
    """The dot_generals an expert would write for each einsum."""
    dg = lax.dot_general
    if spec == "ij,jk->ik":
        return lambda a, b: dg(a, b, (((1,), (0,)), ((), ())))
    if spec == "bij,bjk->bik":
        return lambda a, b: dg(a, b, (((2,), (1,)), ((0,), (0,))))
    if spec == "bhqd,bhkd->bhqk":
        return lambda a, b: dg(a, b, (((3,), (3,)), ((0, 1), (0, 1))))
    return lambda a, b, c, d: dg(dg(a, b, (((1,), (0,)), ((), ()))),
                                 dg(c, d, (((1,), (0,)), ((), ()))), (((1,), (0,)), ((), ())))


def figures(jax, jnp, quick):
    is_jax = jax.__name__ == "jax"
    out = {}
    for spec, ops in OPERANDS.items():
        arrays = [jnp.asarray(o) for o in ops]
        by_hand = _dot_general_by_hand(jax.lax, spec)
        jitted = jax.jit(lambda *a, spec=spec: jnp.einsum(spec, *a))
        # tinyxla's einsum eagerly; jax's under jit (its eager einsum is jit anyway).
        ein = jitted if is_jax else (lambda *a, spec=spec: jnp.einsum(spec, *a))
        out[f"einsum {spec} (ms)"] = median_time(
            lambda: ein(*arrays).block_until_ready(), quick) * 1e3
        out[f"  dot_general by hand (ms)  [{spec}]"] = median_time(
            lambda: by_hand(*arrays).block_until_ready(), quick) * 1e3
        out[f"  jit einsum (ms)           [{spec}]"] = median_time(
            lambda: jitted(*arrays).block_until_ready(), quick) * 1e3
    f, i, i2, t = (jnp.asarray(v) for v in (FLOATS, INTS, INTS2, TESTS))
    hist = (jax.jit(lambda v: jnp.histogram(v, bins=100, range=(-4, 4)))
            if is_jax else lambda v: jnp.histogram(v, bins=100, range=(-4, 4)))
    out["histogram 1e6 f32, 100 bins (ms)"] = median_time(
        lambda: hist(f)[0].block_until_ready(), quick) * 1e3
    bincount = jax.jit(lambda v: jnp.bincount(v, length=1000)) if is_jax else \
        (lambda v: jnp.bincount(v, length=1000))
    out["bincount 1e6 int32 (ms)"] = median_time(lambda: bincount(i).block_until_ready(),
                                                  quick) * 1e3
    isin = jax.jit(jnp.isin, static_argnames="method") if is_jax else jnp.isin
    out["isin 1e6 in 1e3 (ms)"] = median_time(
        lambda: isin(i, t, method="sort" if is_jax else "auto").block_until_ready(), quick) * 1e3
    out["unique 1e6 int32 (ms)"] = median_time(lambda: jnp.unique(i).block_until_ready(),
                                               quick) * 1e3
    out["intersect1d 1e6 int32 (ms)"] = median_time(
        lambda: jnp.intersect1d(i, i2).block_until_ready(), quick) * 1e3
    out["union1d 1e6 int32 (ms)"] = median_time(
        lambda: jnp.union1d(i, i2).block_until_ready(), quick) * 1e3
    out["setdiff1d 1e6 int32 (ms)"] = median_time(
        lambda: jnp.setdiff1d(i, i2).block_until_ready(), quick) * 1e3
    return out


def numpy_figures(quick):
    out = {}
    for spec, ops in OPERANDS.items():
        out[f"einsum {spec} (ms)"] = median_time(
            lambda: np.einsum(spec, *ops, optimize=True), quick) * 1e3
    out["histogram 1e6 f32, 100 bins (ms)"] = median_time(
        lambda: np.histogram(FLOATS, bins=100, range=(-4, 4)), quick) * 1e3
    out["bincount 1e6 int32 (ms)"] = median_time(
        lambda: np.bincount(INTS, minlength=1000), quick) * 1e3
    out["isin 1e6 in 1e3 (ms)"] = median_time(lambda: np.isin(INTS, TESTS), quick) * 1e3
    out["unique 1e6 int32 (ms)"] = median_time(lambda: np.unique(INTS), quick) * 1e3
    out["intersect1d 1e6 int32 (ms)"] = median_time(lambda: np.intersect1d(INTS, INTS2),
                                                    quick) * 1e3
    out["union1d 1e6 int32 (ms)"] = median_time(lambda: np.union1d(INTS, INTS2), quick) * 1e3
    out["setdiff1d 1e6 int32 (ms)"] = median_time(lambda: np.setdiff1d(INTS, INTS2),
                                                  quick) * 1e3
    return out


def main():
    compare_figures(figures, numpy_figures)


if __name__ == "__main__":
    main()
