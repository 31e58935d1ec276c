"""vmap figures: a vmapped logistic-regression predictor against hand batching and JAX, a
batch of 3x3 determinants against a Python loop, and vmap's per-call tracing cost.

    python bench/bench_vmap.py [--quick]

Each figure is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after two warm-up calls; the repeats of all rows are interleaved, so load from
elsewhere on the machine hits them alike, and results are waited for inside the loop.
jax rows need jax installed. Measured, not asserted.
"""
import argparse
import os

import numpy as np

from run import interleaved_medians  # bench/ is on sys.path when run as a script


def predictor(jax, jnp, w):
    def sigmoid(x):
        return 0.5 * (jnp.tanh(x / 2.) + 1)

    def predict_single(x):
        return sigmoid(jnp.dot(w, x))

    def predict_batch(X):
        return sigmoid(X @ w)

    return predict_single, predict_batch


def det3(jnp):
    def det(m):
        return (m[0, 0] * (m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1])
                - m[0, 1] * (m[1, 0] * m[2, 2] - m[1, 2] * m[2, 0])
                + m[0, 2] * (m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]))
    return det


def twenty_ops(lax):
    def f(x):
        for _ in range(10):
            x = lax.mul(lax.sin(x), 2.0)
        return x
    return f


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick

    import tinyxla
    import tinyxla.numpy as tnp
    from tinyxla import lax as tlax
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = jnp = None

    rng = np.random.default_rng(0)
    rows = []  # (name, fn running the operation to completion)

    # 1. vmap(predict_single), D = 100, N = 10,000.
    D, N = 100, 10_000
    w_np = rng.normal(size=(D,)).astype(np.float32)
    X_np = rng.normal(size=(N, D)).astype(np.float32)
    w, X = tnp.asarray(w_np), tnp.asarray(X_np)
    single, batch = predictor(tinyxla, tnp, w)
    vmapped = tinyxla.vmap(single)
    jitted = tinyxla.jit(vmapped)
    want = 0.5 * (np.tanh(X_np.astype(np.float64) @ w_np / 2) + 1)
    np.testing.assert_allclose(vmapped(X), want, rtol=1e-4, atol=1e-5)
    rows.append(("predict: tinyxla vmap(predict_single)",
                 lambda: vmapped(X).block_until_ready()))
    rows.append(("predict: tinyxla hand-batched sigmoid(X @ w)",
                 lambda: batch(X).block_until_ready()))
    rows.append(("predict: tinyxla jit(vmap(predict_single))",
                 lambda: jitted(X).block_until_ready()))
    if jax is not None:
        jw, jX = jax.device_put(w_np), jax.device_put(X_np)
        jf = jax.jit(jax.vmap(predictor(jax, jnp, jw)[0]))
        rows.append(("predict: jax.jit(jax.vmap(predict_single))",
                     lambda: jf(jX).block_until_ready()))

    # 2. 128 3x3 determinants.
    mats_np = rng.normal(size=(128, 3, 3)).astype(np.float32)
    mats = tnp.asarray(mats_np)
    det = det3(tnp)
    vdet = tinyxla.vmap(det)
    np.testing.assert_allclose(vdet(mats), np.linalg.det(mats_np), rtol=1e-4, atol=1e-5)
    rows.append(("det3 x128: tinyxla vmap(det)", lambda: vdet(mats).block_until_ready()))
    rows.append(("det3 x128: tinyxla Python loop of det",
                 lambda: tnp.stack([det(m) for m in mats]).block_until_ready()))
    if jax is not None:
        jdet = jax.jit(jax.vmap(det3(jnp)))
        jm = jax.device_put(mats_np)
        rows.append(("det3 x128: jax.jit(jax.vmap(det))", lambda: jdet(jm).block_until_ready()))

    # 3. The per-call cost of vmap on a 20-op function of a tiny batch.
    f20 = twenty_ops(tlax)
    v20 = tinyxla.vmap(f20)
    x = tnp.ones((8, 3))
    rows.append(("20-op fn, 8x3: tinyxla vmap call", lambda: v20(x).block_until_ready()))
    rows.append(("20-op fn, 8x3: tinyxla eager (no vmap)", lambda: f20(x).block_until_ready()))

    t = interleaved_medians(rows, quick)
    width = max(len(name) for name, _ in rows)
    for name, _ in rows:
        print(f"{name:<{width}}  {t[name] * 1e6:10.1f} us")
    vm = t["predict: tinyxla vmap(predict_single)"]
    hand = t["predict: tinyxla hand-batched sigmoid(X @ w)"]
    print(f"\nvmap / hand-batched predict: {vm / hand:.2f}x (goal <= 1.2)")
    if jax is not None:
        print("jax.jit(jax.vmap) / tinyxla vmap predict: "
              f"{t['predict: jax.jit(jax.vmap(predict_single))'] / vm:.2f}x (goal > 1)")
    loop, vdet_t = t["det3 x128: tinyxla Python loop of det"], t["det3 x128: tinyxla vmap(det)"]
    print(f"Python loop / vmap det3: {loop / vdet_t:.1f}x (goal >= 20)")
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
