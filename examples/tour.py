"""A short tour of tinyxla: eager jax.numpy on asynchronous C++ arrays, jit, grad, vmap and
pmap over host-thread devices, with timings."""
import time

import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax

jax.config.update("jax_num_cpu_devices", 2)  # host threads as devices; before first use


def timed(label, fn, repeat=5, warm=1):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    print(f"  {label:<44s} {1e3 * sorted(times)[len(times) // 2]:9.3f} ms")


print("devices:", jax.devices())
x = jnp.arange(6.0).reshape(2, 3)
print("x =", x)
print("tanh(2x + 1).sum(0) =", jnp.tanh(x * 2 + 1).sum(axis=0))
print("x @ x.T =", x @ x.T)
print("promotion: int8 + 1 ->", (jnp.int8(1) + 1).dtype, "| arange(3) + 5.0 ->", repr(jnp.arange(3) + 5.0))

print(jax.make_jaxpr(lambda x: 2 * x * x + 3 * x + 3)(3.0))
chain = jax.jit(lambda x: jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x))
print("jit chain:", chain(jnp.arange(3.0)))
print("grad of 2x² + 3x + 3 at 3:", jax.grad(lambda x: 2 * x * x + 3 * x + 3)(3.0))
print("vmap of a dot product over rows:", jax.vmap(lambda v: v @ v)(jnp.ones((3, 4))))

big = jnp.asarray(np.random.default_rng(0).standard_normal(10_000_000, dtype=np.float32))
print("timings (median of 5):")
jnp.exp(big).block_until_ready()  # warm: the first call allocates the output memory
t0 = time.perf_counter()
y = jnp.exp(big)
dispatch = time.perf_counter() - t0
y.block_until_ready()
print(f"  {'exp on 1e7 float32: dispatch returns after':<44s} {1e3 * dispatch:9.3f} ms")
timed("exp on 1e7 float32 (waited)", lambda: jnp.exp(big).block_until_ready())
timed("sum of 1e7 float32", lambda: big.sum().block_until_ready())
a = jnp.ones((1024, 1024))
timed("matmul 1024x1024 float32", lambda: (a @ a).block_until_ready())
chain_big = jax.jit(lambda x: jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x))
timed("jit chain on 1e7 float32", lambda: chain_big(big).block_until_ready())
grad_chain = jax.jit(jax.grad(lambda x: jnp.sum(jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x))))
timed("jit(grad(sum of the chain)) on 1e7", lambda: grad_chain(big).block_until_ready())
w = jnp.ones(100) / 100
X = jnp.asarray(np.random.default_rng(1).standard_normal((10_000, 100), dtype=np.float32))
predict = jax.jit(jax.vmap(lambda v: 0.5 * (jnp.tanh(jnp.dot(w, v) / 2) + 1)))
timed("jit(vmap(sigmoid(w . x))), 10000 x 100", lambda: predict(X).block_until_ready())
one = jnp.ones(1)
n = 20000
t0 = time.perf_counter()
for _ in range(n):
    one + 1
print(f"  {'eager x + 1 on one element':<44s} {1e6 * (time.perf_counter() - t0) / n:9.3f} µs/op")
add = jax.jit(lambda a, b: a + b)
add(one, one)
t0 = time.perf_counter()
for _ in range(n):
    add(one, one)
print(f"  {'jit call of a + b on one element':<44s} {1e6 * (time.perf_counter() - t0) / n:9.3f} µs/call")

print(f"pmap over {jax.local_device_count()} host-thread devices (timings: median of 21, after 30 calls):")
ndev = jax.local_device_count()
normalize = jax.pmap(lambda v: v / lax.psum(jnp.sum(v), "i"), axis_name="i")
shards = normalize(jnp.arange(ndev * 3.0).reshape(ndev, 3))
print("  x / psum(sum(x)) per device:", shards.tolist(), "on", shards.sharding)
# Small matmuls run on one core each, so a second device doubles the throughput; large
# kernels already split over both cores on one device (see README).
W = jnp.asarray(np.random.default_rng(2).standard_normal((64, 64), dtype=np.float32) / 8)


def layers(h):
    for _ in range(200):
        h = jnp.tanh(h @ W)
    return h


batch = jnp.ones((ndev, 64, 64))
per_device, one_device = jax.pmap(layers), jax.jit(layers)
# Timed as a training loop sees it, after some calls: over the first tens of calls the OS
# may still run both devices' threads on one core (2x slower) until it spreads them.
timed(f"200 x tanh(h @ W), 64², pmap on {ndev} devices", lambda: per_device(batch).block_until_ready(),
      repeat=21, warm=30)
timed("the same work on 1 device", lambda: [one_device(batch[i]) for i in range(ndev)][-1].block_until_ready(),
      repeat=21, warm=30)
