"""pmap throughput and collective latency: tinyxla against JAX, in one run.

    python bench/bench_pmap.py [--devices 2] [--repeats 7]

Each library runs in its own subprocess with the device count forced
(TINYXLA_NUM_CPU_DEVICES / XLA_FLAGS=--xla_force_host_platform_device_count). For each
compute-bound per-device function it times the same total work two ways: one jit call per
shard on one device, one after the other (async, then a wait), and one pmap call over the
devices; "gain" is the ratio (the pmap's throughput over one device's). One tinyxla device
already spreads large kernels over every core (the intra-op pool), so only functions made
of small ops (the 64x64 chain) leave cores for a second device to use. The psum row is a
pmap of a scalar psum, end to end (call plus wait) per call. Medians of repeats.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

WORKER = r'''
import json, os, sys, time
import numpy as np
lib, n, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if lib == "jax":
    import jax, jax.numpy as jnp
    from jax import lax
else:
    import tinyxla as jax, tinyxla.numpy as jnp
    from tinyxla import lax
assert jax.device_count() == n, jax.devices()

def median_time(fn, reps, inner=1):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t0) / inner)
    return float(np.median(ts))

rng = np.random.RandomState(0)
W = jnp.asarray((rng.randn(256, 256) / 16).astype(np.float32))

def matmul_chain(x):
    for _ in range(20):
        x = jnp.tanh(x @ W)
    return x

def transcendental_chain(x):
    for _ in range(10):
        x = jnp.sin(jnp.exp(jnp.cos(x) * 0.5)) + jnp.tanh(x) * 0.25
    return x

W64 = jnp.asarray((rng.randn(64, 64) / 8).astype(np.float32))

def small_matmul_chain(x):
    for _ in range(200):
        x = jnp.tanh(x @ W64)
    return x

cases = {
    "200 chained 64x64 matmuls + tanh": (small_matmul_chain, (64, 64)),
    "20 chained 256x256 matmuls + tanh": (matmul_chain, (256, 256)),
    "transcendental chain on 1e6 floats": (transcendental_chain, (1_000_000,)),
}
out = {}
for name, (f, shape) in cases.items():
    xs = rng.randn(n, *shape).astype(np.float32)
    one = jax.jit(f)
    d0 = jax.devices()[0]
    shards = [jax.device_put(xs[i], d0) for i in range(n)]
    def run_one():
        jax.block_until_ready([one(s) for s in shards])
    pf = jax.pmap(f)
    stacked = jnp.asarray(xs)
    def run_pmap():
        jax.block_until_ready(pf(stacked))
    t1 = median_time(run_one, repeats)
    tp = median_time(run_pmap, repeats)
    np.testing.assert_allclose(np.asarray(pf(stacked)), np.stack([np.asarray(one(s)) for s in shards]),
                               rtol=2e-3, atol=2e-3)
    out[name] = {"one_device_s": t1, "pmap_s": tp, "gain": t1 / tp}
ps = jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i")
x = jnp.arange(float(n))
def psum_call():
    ps(x).block_until_ready()
out["psum of a scalar, per call"] = {"pmap_s": median_time(psum_call, repeats, inner=2000)}
print(json.dumps(out))
'''


def run(lib: str, n: int, repeats: int) -> dict:
    env = dict(os.environ)
    env.pop("TINYXLA_NUM_CPU_DEVICES", None)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
    if lib == "tinyxla":
        env["TINYXLA_NUM_CPU_DEVICES"] = str(n)
    out = subprocess.run([sys.executable, "-c", WORKER, lib, str(n), str(repeats)], env=env,
                         capture_output=True, text=True, timeout=1200)
    if out.returncode != 0:
        raise RuntimeError(f"{lib} worker failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--devices", type=int, default=2)
    p.add_argument("--repeats", type=int, default=7)
    a = p.parse_args()
    load_before = os.getloadavg()[0]
    results = {"tinyxla": run("tinyxla", a.devices, a.repeats)}
    try:
        import jax  # noqa: F401
        results["jax"] = run("jax", a.devices, a.repeats)
    except ImportError:
        print("(jax not installed: tinyxla only)")
    print(f"{a.devices} devices, {os.cpu_count()} cores, medians of {a.repeats}")
    print(f"{'case':40s} {'lib':8s} {'1 device':>11s} {'pmap':>11s} {'gain':>6s}")
    for case in results["tinyxla"]:
        for lib, r in results.items():
            c = r[case]
            one = f"{c['one_device_s'] * 1e3:9.2f}ms" if "one_device_s" in c else " " * 11
            pm = (f"{c['pmap_s'] * 1e6:9.1f}us" if "one_device_s" not in c
                  else f"{c['pmap_s'] * 1e3:9.2f}ms")
            gain = f"{c['gain']:5.2f}x" if "gain" in c else ""
            print(f"{case:40s} {lib:8s} {one} {pm} {gain:>6s}")
    print(f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
