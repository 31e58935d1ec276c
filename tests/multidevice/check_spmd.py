"""Sharded jit over two mesh axes, and shardings propagated through plain jit and eager
operations, on N devices (N from TINYXLA_NUM_CPU_DEVICES); run by tests/test_spmd.py in a
subprocess per device count. Usage: check_spmd.py GROUP; prints "ok GROUP" on success.

The same script runs under JAX 0.10.2 (SHARDING_ORACLE=1, with
XLA_FLAGS=--xla_force_host_platform_device_count=N), which is where the expected result
shardings come from. Meshes: N=1 -> (1, 1), N=2 -> (2, 1), N=4 -> (2, 2), axes ('x', 'y').

Groups: jit2d (jit with in_shardings/out_shardings over both axes: elementwise,
reductions, transposes, reshapes, products, data x model parallel MLP and its gradients,
shapes that do not divide), propagate (plain jit of sharded arguments, eager operations,
with_sharding_constraint in plain jit).
"""
from __future__ import annotations

import os
import sys

import numpy as np

if os.environ.get("SHARDING_ORACLE"):
    import jax
    import jax.numpy as jnp
    from jax import lax
else:
    import tinyxla as jax
    import tinyxla.numpy as jnp
    from tinyxla import lax
Mesh, NamedSharding, P = jax.sharding.Mesh, jax.sharding.NamedSharding, jax.sharding.PartitionSpec
N = jax.device_count()
SHAPE = {1: (1, 1), 2: (2, 1), 4: (2, 2)}[N]
MESH = Mesh(np.array(jax.devices()).reshape(SHAPE), ("x", "y"))
rng = np.random.RandomState(0)


def S(*spec):
    return NamedSharding(MESH, P(*spec))


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def propagated(*spec):
    """The sharding JAX gives a result propagated to ``spec``: mesh axes of size 1 and
    trailing unsplit dimensions dropped."""
    dims = []
    for entry in spec:
        axes = () if entry is None else entry if isinstance(entry, tuple) else (entry,)
        axes = tuple(a for a in axes if MESH.shape[a] > 1)
        dims.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    while dims and dims[-1] is None:
        dims.pop()
    return S(*dims)


def check(out, ref, *spec, tol=1e-5, given=False, reuse=(), layout=True):
    """``out`` equals ``ref`` and is laid out by ``spec``: as given to out_shardings, or
    as propagated; a propagated layout that is the same as one of the arguments ``reuse``
    (of the same rank, passed without a sharding for them) is that argument's sharding, as
    JAX reuses it. ``layout=False``: values only (on one device JAX's answer then depends
    on how XLA propagated a layout every device has whole)."""
    close(out, ref, tol)
    ref = np.asarray(ref)
    for shard in out.addressable_shards:  # each device holds its block
        close(shard.data, ref[shard.index], tol)
    if not layout:
        return
    want = S(*spec) if given else propagated(*spec)
    for a in reuse:
        if a.ndim == out.ndim and propagated(*a.sharding.spec) == want:
            want = a.sharding
            break
    assert out.sharding == want, (out.sharding, want)


x = rng.randn(8, 4).astype(np.float32)
w1 = (rng.randn(4, 16) / 2).astype(np.float32)
w2 = (rng.randn(16, 2) / 4).astype(np.float32)


def mlp(p, a):
    return jnp.tanh(a @ p[0]) @ p[1]


def np_mlp(p, a):
    return np.tanh(a @ p[0]) @ p[1]


def check_jit2d():
    xy, x_, r = S("x", "y"), S("x"), S()
    check(jax.jit(lambda a: a + 1, in_shardings=xy)(x), x + 1, "x", "y")
    check(jax.jit(lambda a: a + 1, in_shardings=S(("x", "y")))(x), x + 1, ("x", "y"))
    check(jax.jit(lambda a: a + 1, in_shardings=S("x", None))(x), x + 1, "x")
    check(jax.jit(lambda a: jnp.sum(a, 0), in_shardings=xy)(x), x.sum(0), "y")
    check(jax.jit(lambda a: jnp.sum(a, 1), in_shardings=xy)(x), x.sum(1), "x")
    check(jax.jit(lambda a: jnp.max(a, 0), in_shardings=xy)(x), x.max(0), "y")
    check(jax.jit(jnp.sum, in_shardings=xy)(x), x.sum(), tol=1e-4)
    check(jax.jit(lambda a: jnp.sum(a, 0), in_shardings=S(("x", "y")))(x), x.sum(0))
    check(jax.jit(lambda a: jnp.min(a, 0), in_shardings=S(("y", "x")))(x), x.min(0))
    check(jax.jit(lambda a: a.T, in_shardings=xy)(x), x.T, "y", "x")
    check(jax.jit(lambda a: jnp.sum(a.reshape(4, 8), axis=1), in_shardings=xy)(x),
          x.reshape(4, 8).sum(1), "x")
    check(jax.jit(lambda a, b: a @ b, in_shardings=(xy, r))(x, w1), x @ w1, "x")
    check(jax.jit(lambda a, b: a @ b, in_shardings=(x_, S(None, "y")))(x, w1), x @ w1, "x", "y")
    check(jax.jit(lambda a, b: a @ b, in_shardings=(xy, S("y", None)))(x, w1), x @ w1, "x")
    check(jax.jit(lambda a, b: a + b, in_shardings=(xy, r))(x, x[0]), x + x[0], "x", "y")
    check(jax.jit(lambda a, b: a * b, in_shardings=(S("x", None), S(None, "y")))(x, x), x * x,
          "x", "y")
    check(jax.jit(lambda a: lax.with_sharding_constraint(a * 2, S("y", "x")),
                  in_shardings=xy)(x), x * 2, "y", "x", layout=N > 1)
    out = jax.jit(lambda a: (a * 2, jnp.sum(a, 0)), in_shardings=xy,
                  out_shardings=(S("y", None), S("x")))(x)
    check(out[0], x * 2, "y", None, given=True)
    check(out[1], x.sum(0), "x", given=True)
    # Data x model parallel MLP: batch over 'x', hidden units over 'y'.
    mp = ((S(None, "y"), S("y", None)), x_)
    check(jax.jit(mlp, in_shardings=mp)((w1, w2), x), np_mlp((w1, w2), x), "x")
    check(jax.jit(lambda p, a: jnp.tanh(a @ p[0]), in_shardings=mp)((w1, w2), x),
          np.tanh(x @ w1), "x", "y")

    def loss(p, a):
        return jnp.mean(mlp(p, a) ** 2)
    ref_l, ref_g = jax.value_and_grad(loss)((w1, w2), x)
    lv, gv = jax.jit(jax.value_and_grad(loss), in_shardings=mp)((w1, w2), x)
    check(lv, ref_l)
    check(gv[0], ref_g[0], None, "y")
    check(gv[1], ref_g[1], "y")
    # Gradients through a sharded jit (the jit runs under grad's trace).
    g = jax.grad(lambda p: jax.jit(loss, in_shardings=mp)(p, x))((w1, w2))
    close(g[0], ref_g[0])
    close(g[1], ref_g[1])
    # Shapes the blocks do not divide: the odd dimension stays whole.
    odd = rng.randn(6, 5).astype(np.float32)
    check(jax.jit(lambda a: jnp.tanh(a) * 2, in_shardings=x_)(odd), np.tanh(odd) * 2, "x")
    check(jax.jit(lambda a: a @ a.T, in_shardings=x_)(odd), odd @ odd.T, "x")
    check(jax.jit(lambda a: jnp.sum(a[:, 1:], 0), in_shardings=x_)(odd), odd[:, 1:].sum(0))
    check(jax.jit(lambda a: a, in_shardings=r)(odd), odd)
    check(jax.jit(lambda a: a + 1, in_shardings=S(None))(odd), odd + 1)


def check_propagate():
    xa = jax.device_put(x, S("x", "y"))
    xb = jax.device_put(x, S("x"))
    check(jax.jit(lambda a: a + 1)(xa), x + 1, "x", "y", reuse=[xa])
    check(jax.jit(lambda a: jnp.sum(a, 0))(xa), x.sum(0), "y")
    check(jax.jit(lambda a, b: a @ b)(xa, w1), x @ w1, "x", reuse=[xa])
    check(jax.jit(lambda a, b: jnp.tanh(a @ b))(xb, w1), np.tanh(x @ w1), "x", reuse=[xb])
    check(jax.jit(mlp)((w1, w2), xb), np_mlp((w1, w2), x), "x", reuse=[xb], layout=N > 1)
    # A sharded result feeds the next call.
    y = jax.jit(lambda a: a * 3)(xa)
    check(jax.jit(lambda a: a - 1)(y), x * 3 - 1, "x", "y", reuse=[y])
    check(xa + 1, x + 1, "x", "y", reuse=[xa])
    check(jnp.tanh(xa), np.tanh(x), "x", "y", reuse=[xa])
    check(xa.sum(), x.sum(), tol=1e-4)
    check(xa.sum(0), x.sum(0), "y")
    check(xa @ w1, x @ w1, "x", reuse=[xa])
    check(xa.T, x.T, "y", "x", reuse=[xa])
    check(xa.reshape(32), x.reshape(32), "x")
    check(xa + x, x + x, "x", "y", reuse=[xa])
    check(xb + 1, x + 1, "x", reuse=[xb])
    check(xb @ w1, x @ w1, "x", reuse=[xb])
    check(y * 2, x * 6, "x", "y", reuse=[y])
    check(jax.jit(lambda a: lax.with_sharding_constraint(a * 2, S("y")))(x), x * 2, "y")
    check(jax.jit(lambda a: lax.with_sharding_constraint(a * 2, S(None, "x")))(xa), x * 2,
          None, "x", reuse=[xa])


if __name__ == "__main__":
    group = sys.argv[1]
    globals()[f"check_{group}"]()
    print(f"ok {group}")
