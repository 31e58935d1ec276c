"""jit figures against jax.jit: call overhead, first-call (trace + compile) time, fused
elementwise and normalisation throughput, fused kernels reading broadcast operands, and
the peak memory of a 20-op chain.

    python bench/bench_jit.py [--quick]

Each time is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after two warm-up calls; results are waited for inside the loop. The first-call
row traces and compiles a fresh function each repeat. jax columns need jax installed.
Measured, not asserted.
"""
import statistics
import time

import numpy as np

from run import compare_figures, median_time  # bench/ is on sys.path when run as a script


def first_call(jax, jnp, x, quick):
    """Median seconds of trace + compile + run of a never-seen function."""
    times = []
    for _ in range(5 if quick else 15):
        def chain(x):
            return jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x)
        t0 = time.perf_counter()
        jax.jit(chain)(x).block_until_ready()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def figures(jax, jnp, quick):
    def chain(x):
        return jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x)

    def norm(x):
        return (x - x.mean(0)) / x.std(0)

    rng = np.random.RandomState(0)
    tiny = jnp.ones(3)
    small = jnp.asarray(rng.rand(1000).astype(np.float32))
    x6 = jnp.asarray(rng.rand(1_000_000).astype(np.float32))
    x7 = jnp.asarray(rng.rand(10_000_000).astype(np.float32))
    n1 = jnp.asarray(rng.rand(1000, 10).astype(np.float32))
    n2 = jnp.asarray(rng.rand(1_000_000, 16).astype(np.float32))
    v = jnp.asarray(rng.rand(1000).astype(np.float32))
    m = jnp.asarray(rng.rand(1000, 1000).astype(np.float32))
    add = jax.jit(lambda x, y: x * y + 1)
    jchain, jnorm = jax.jit(chain), jax.jit(norm)
    # Broadcast operands in fused kernels: a row and a column broadcast (a kernel matrix),
    # the rows' sums broadcast back (softmax), and the two iotas of eye.
    pairwise = jax.jit(lambda v: jnp.exp(-0.5 * (v[:, None] - v[None, :]) ** 2))
    softmax = jax.jit(lambda m: jax.nn.softmax(m, axis=-1))
    plus_eye = jax.jit(lambda m: m + 2.0 * jnp.eye(1000, dtype=m.dtype))
    ms = lambda f, *a: median_time(lambda: f(*a).block_until_ready(), quick) * 1e3
    return {
        "jit call, 2 args, tiny (µs)": median_time(lambda: add(tiny, tiny), quick) * 1e6,
        "first call, chain 1e3 (ms)": first_call(jax, jnp, small, quick) * 1e3,
        "chain 1e6 f32 (ms)": ms(jchain, x6),
        "chain 1e7 f32 (ms)": ms(jchain, x7),
        "norm (1000,10) f32 (ms)": ms(jnorm, n1),
        "norm (1e6,16) f32 (ms)": ms(jnorm, n2),
        "pairwise exp(-(x_i - x_j)^2 / 2), 1000 (ms)": ms(pairwise, v),
        "softmax (1000,1000) f32 (ms)": ms(softmax, m),
        "m + 2 eye(1000) (ms)": ms(plus_eye, m),
    }


def chain20_peak_buffers(tinyxla, tnp):
    """Peak memory of a jitted 20-op elementwise chain on 1e6 f32, in 4 MB buffers,
    counting everything live at the peak (input and output included)."""
    from tinyxla import _core

    @tinyxla.jit
    def chain20(x):
        for i in range(10):
            x = tnp.sin(x) * (1.0 + i)
        return x

    x = tnp.ones(1_000_000)
    chain20(x).block_until_ready()
    _core.trim_memory_cache()
    _core.reset_peak_memory()
    base = _core.memory_stats()["bytes_in_use"] - x.nbytes  # whatever else is alive
    chain20(x).block_until_ready()
    return (_core.memory_stats()["peak_bytes_in_use"] - base) / x.nbytes


def main():
    compare_figures(figures)
    import tinyxla
    import tinyxla.numpy as tnp
    print(f"20-op chain on 1e6 f32, peak live buffers: {chain20_peak_buffers(tinyxla, tnp):.2f}")


if __name__ == "__main__":
    main()
