"""The two CPU compiler tiers against jax.jit: the fused elementwise chain
``tanh(x*2+1)*0.5 + exp(-x*x) - sin(x)`` on 1e6 and 1e7 float32, and the normalisation
``(X - X.mean(0)) / X.std(0)`` on (1000, 10) and (1e6, 16) float32, all under jit.

    python bench/bench_codegen.py [--quick]

"base" compiles with TINYXLA_CODEGEN=0 (the tiled interpreter), "upper" with
TINYXLA_CODEGEN=1 and waits for the generated C to be built and swapped in (the disk
cache is a temporary folder, so the build is real). Each time is the median of repeats of
a loop calibrated to at least 0.2 s (0.05 s with --quick) after two warm-up calls, with
the repeats of the three columns interleaved; results are waited for inside the loop.
Ratios above 1 mean tinyxla's upper tier is faster. Measured, not asserted.
"""
import argparse
import atexit
import os
import shutil
import tempfile

import numpy as np

from run import interleaved_medians  # bench/ is on sys.path when run as a script


def chain(jnp):
    return lambda x: jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x)


def norm(jnp):
    return lambda x: (x - x.mean(0)) / x.std(0)


def compiled(tx, fn, x, mode):
    os.environ["TINYXLA_CODEGEN"] = mode
    c = tx.jit(lambda x: fn(x)).lower(x).compile()
    c.wait_codegen()
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if "TINYXLA_CACHE_DIR" not in os.environ:
        cache = tempfile.mkdtemp(prefix="tinyxla-bench-cache-")
        atexit.register(shutil.rmtree, cache, True)
        os.environ["TINYXLA_CACHE_DIR"] = cache
    import tinyxla as tx
    import tinyxla.numpy as tnp
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    rng = np.random.RandomState(0)
    cases = [("chain 1e6", chain, rng.rand(1_000_000).astype(np.float32)),
             ("chain 1e7", chain, rng.rand(10_000_000).astype(np.float32)),
             ("norm (1000,10)", norm, rng.rand(1000, 10).astype(np.float32)),
             ("norm (1e6,16)", norm, rng.rand(1_000_000, 16).astype(np.float32))]
    print(f"{'case':16} {'base ms':>9} {'upper ms':>9} {'jax ms':>9} {'base/upper':>11} "
          f"{'jax/upper':>10}  upper tier")
    for name, make, host in cases:
        x = tnp.asarray(host)
        base = compiled(tx, make(tnp), x, "0")
        upper = compiled(tx, make(tnp), x, "1")
        np.testing.assert_allclose(np.asarray(upper(x)), np.asarray(base(x)), rtol=1e-6, atol=1e-6)
        fns = {"base": lambda: base(x).block_until_ready(),
               "upper": lambda: upper(x).block_until_ready()}
        if jax is not None:
            jx = jnp.asarray(host)
            jf = jax.jit(make(jnp))
            fns["jax"] = lambda: jf(jx).block_until_ready()
        med = {k: t * 1e3 for k, t in interleaved_medians(list(fns.items()), args.quick).items()}
        b, u, j = med["base"], med["upper"], med.get("jax")
        jax_ms = f"{j:9.3f}" if j else f"{'-':>9}"
        jax_ratio = f"{j / u:10.2f}" if j else f"{'-':>10}"
        print(f"{name:16} {b:9.3f} {u:9.3f} {jax_ms} {b / u:11.2f} {jax_ratio}  "
              f"{upper.tier} ({upper.codegen_status})")

if __name__ == "__main__":
    main()
