"""Several processes over MPI, run by tests/test_distributed.py as
``mpiexec -n P python check_mpi.py GROUP`` (TINYXLA_NUM_CPU_DEVICES local devices each).
Every process prints "ok GROUP <rank>" on success.

Groups: basics (process and device lists, initialize twice, multihost_utils), collectives
(pmap collectives across processes against numpy on the global data), spmd (global arrays
from process-local data, shard_map's collectives and a sharded jit over a mesh of every
process's devices, against numpy), train (the seed
MLP's data-parallel step, seed 004's pmap with pmean; rank 0 prints the parameters' bytes
hash, which must equal a single-process run over as many devices: ``train`` without
mpiexec), sharded_train (the same with a sharded jit over a mesh of every process's
devices), early_exit (process 1 leaves; the others must fail in bounded time; each writes
its error to ``$CHECK_MPI_ERRORS/rank<r>.txt`` when that folder is given).
"""
from __future__ import annotations

import hashlib
import os
import sys
import time

import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.example_libraries import optimizers, stax
from tinyxla.experimental import multihost_utils
from tinyxla.sharding import NamedSharding, PartitionSpec

GROUP = sys.argv[1]
if os.environ.get("PMI_RANK") is not None or os.environ.get("PMI_SIZE") is not None:
    jax.distributed.initialize()
P, ME = jax.process_count(), jax.process_index()
L = jax.local_device_count()
G = P * L


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def local_rows(x):
    """This process's slice of a global array mapped over all devices."""
    return x[ME * L:(ME + 1) * L]


def check_basics():
    assert jax.device_count() == G and len(jax.devices()) == G
    assert [d.id for d in jax.local_devices()] == list(range(ME * L, (ME + 1) * L))
    assert all(d.process_index == ME for d in jax.local_devices())
    assert [d.process_index for d in jax.devices()] == [p for p in range(P) for _ in range(L)]
    assert jax.process_indices() == list(range(P))
    try:
        jax.distributed.initialize()
    except RuntimeError as e:
        assert str(e) == "distributed.initialize should only be called once.", e
    else:
        raise AssertionError("initialize twice did not raise")
    out = multihost_utils.process_allgather(jnp.full((2,), ME, jnp.float32))
    assert out.shape == (P, 2) and (out == np.arange(P)[:, None]).all(), out
    out = multihost_utils.process_allgather(np.float32(ME))
    assert out.shape == (P,) and (out == np.arange(P)).all(), out
    out = multihost_utils.process_allgather(np.full((2, 3), ME), tiled=True)
    assert out.shape == (2 * P, 3) and (out[::2, 0] == np.arange(P)).all(), out
    out = multihost_utils.broadcast_one_to_all(np.full(3, ME + 5.0))
    assert (out == 5.0).all(), out
    out = multihost_utils.broadcast_one_to_all(np.full(3, ME + 5.0), is_source=ME == P - 1)
    assert (out == P + 4.0).all(), out
    multihost_utils.sync_global_devices("basics")


def check_collectives():
    rng = np.random.RandomState(0)
    x = rng.randn(G, 3, 4).astype(np.float32)
    xl = local_rows(x)
    psum = jax.pmap(lambda a: lax.psum(a, "i"), "i")
    close(psum(xl), np.broadcast_to(x.sum(0), xl.shape))
    # The MPI call runs on a device stream: the call returns before the other processes
    # have joined (process 0 does not wait for process 1's sleep).
    if ME == 1:
        time.sleep(1.0)
    start = time.perf_counter()
    out = psum(xl)
    if ME == 0:
        assert time.perf_counter() - start < 0.5, "the psum waited for the other processes"
    close(out, np.broadcast_to(x.sum(0), xl.shape))
    # Dtypes MPI reduces (int32) and those gathered and reduced locally (float16, bool).
    xi = (x * 10).astype(np.int32)
    np.testing.assert_array_equal(
        jax.pmap(lambda a: lax.psum(a, "i"), "i")(local_rows(xi)),
        np.broadcast_to(xi.sum(0), xl.shape))
    xh = x.astype(np.float16)
    np.testing.assert_array_equal(
        jax.pmap(lambda a: lax.pmax(a, "i"), "i")(local_rows(xh)),
        np.broadcast_to(xh.max(0), xl.shape))
    xb = x > 0
    np.testing.assert_array_equal(
        jax.pmap(lambda a: lax.pmin(a, "i"), "i")(local_rows(xb)),
        np.broadcast_to(xb.min(0), xl.shape))
    close(jax.pmap(lambda a: lax.pmean(a, "i"), "i")(xl),
          np.broadcast_to(x.mean(0), xl.shape))
    close(jax.pmap(lambda a: lax.pmax(a, "i"), "i")(xl), np.broadcast_to(x.max(0), xl.shape))
    close(jax.pmap(lambda a: lax.psum(1, "i"), "i")(xl), np.full(L, G))
    close(jax.pmap(lambda a: lax.all_gather(a, "i"), "i")(xl),
          np.broadcast_to(x, (L, *x.shape)))
    perm = [(i, (i + 1) % G) for i in range(G)]
    close(jax.pmap(lambda a: lax.ppermute(a, "i", perm), "i")(xl),
          local_rows(np.roll(x, 1, axis=0)))
    close(jax.pmap(lambda a: a * 0 + lax.axis_index("i"), "i")(xl),
          local_rows(np.broadcast_to(np.arange(G)[:, None, None], x.shape)))
    out = jax.pmap(lambda a: lax.psum(a, "i"), "i", out_axes=None)(xl)
    close(out, x.sum(0))
    # The gradient of a pmean'd loss: each device gets the gradient of its own term
    # (psum transposes to psum), as JAX gives.
    w = rng.randn(4, 2).astype(np.float32)

    def loss(w, a):
        return lax.pmean(jnp.mean(jnp.tanh(a @ w) ** 2), "i")
    g = jax.pmap(jax.grad(loss), "i", in_axes=(None, 0))(w, xl)
    for k in range(L):
        own = jax.grad(lambda w: jnp.mean(jnp.tanh(jnp.asarray(xl[k]) @ w) ** 2))(w)
        close(g[k], own, 1e-5)


def check_spmd():
    mesh = jax.make_mesh((G,), ("x",))
    split, whole = NamedSharding(mesh, PartitionSpec("x")), NamedSharding(mesh, PartitionSpec())
    full = np.random.RandomState(2).randn(G * 4, 6).astype(np.float32)
    x = jax.make_array_from_process_local_data(split, full[ME * L * 4:(ME + 1) * L * 4])
    assert x.shape == full.shape and x.sharding == split
    assert [s.index[0] for s in x.addressable_shards] == [
        slice(4 * i, 4 * i + 4) for i in range(ME * L, (ME + 1) * L)]
    for s in x.addressable_shards:
        close(s.data, full[s.index])
    close(x, full)
    blocks = full.reshape(G, 4, 6)

    def smap(f, out_specs, check_vma=True):
        return jax.shard_map(f, mesh=mesh, in_specs=PartitionSpec("x"), out_specs=out_specs,
                             check_vma=check_vma)(x)

    close(smap(lambda b: lax.psum(b, "x"), PartitionSpec()), blocks.sum(0))
    close(smap(lambda b: lax.pmean(b, "x"), PartitionSpec()), blocks.mean(0))
    close(smap(lambda b: lax.pmax(b, "x"), PartitionSpec()), blocks.max(0))
    close(smap(lambda b: b * 2 + lax.axis_index("x"), PartitionSpec("x")),
          full * 2 + np.repeat(np.arange(G), 4)[:, None])
    close(smap(lambda b: lax.all_gather(b, "x", tiled=True), PartitionSpec(), False), full)
    close(smap(lambda b: lax.psum_scatter(jnp.tile(b, (1, G)), "x", scatter_dimension=1,
                                          tiled=True), PartitionSpec(None, "x")),
          np.tile(blocks.sum(0), (1, G)))
    perm = [(i, (i + 1) % G) for i in range(G)]
    close(smap(lambda b: lax.ppermute(b, "x", perm), PartitionSpec("x")),
          np.roll(blocks, 1, 0).reshape(full.shape))
    y = np.random.RandomState(3).randn(G * 2, G * 3).astype(np.float32)
    ya = jax.make_array_from_process_local_data(split, y[ME * L * 2:(ME + 1) * L * 2])
    out = jax.shard_map(lambda b: lax.all_to_all(b, "x", 1, 0, tiled=True), mesh=mesh,
                        in_specs=PartitionSpec("x"), out_specs=PartitionSpec("x"))(ya)
    yb = np.split(y, G, 0)  # device k gets column chunk k of every device's block
    close(out, np.concatenate([yb[j][:, 3 * k:3 * k + 3] for k in range(G) for j in range(G)]))
    # A data-parallel sharded jit: batch split, weights replicated; its results' layouts.
    w = np.random.RandomState(4).randn(6, 5).astype(np.float32)
    f = jax.jit(lambda a, w: (jnp.tanh(a @ w), jnp.sum(a @ w, axis=0)),
                in_shardings=(split, whole))
    h, total = f(x, w)
    close(h, np.tanh(full @ w))
    close(total, (full @ w).sum(0), 1e-4)
    assert h.sharding == split and total.sharding == whole, (h.sharding, total.sharding)
    grad = jax.jit(jax.grad(lambda w, a: jnp.mean(jnp.tanh(a @ w) ** 2)),
                   in_shardings=(whole, split))(w, x)
    close(grad, jax.grad(lambda w: jnp.mean(jnp.tanh(jnp.asarray(full) @ w) ** 2))(w), 1e-4)


def _model():
    init, apply = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(32), stax.Relu,
                              stax.Dense(1))
    _, params = init(jax.random.PRNGKey(0), (-1, 8))
    return params, apply


def train_hash(steps: int = 5) -> str:
    """Seed 004's data-parallel step (pmap over the batch, pmean of loss and grads)."""
    params, apply = _model()
    opt_init, opt_update, get_params = optimizers.adam(3e-3)

    def loss_fn(params, batch):
        xb, yb = batch
        return jnp.mean((apply(params, xb)[:, 0] - yb) ** 2)

    def step(i, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(get_params(opt_state), batch)
        loss, grads = lax.pmean((loss, grads), "batch")
        return opt_update(i, grads, opt_state), loss

    pstep = jax.pmap(step, "batch", in_axes=(None, None, 0), out_axes=(None, None))
    rng = np.random.RandomState(1)
    opt_state = opt_init(params)
    for i in range(steps):
        xb = rng.randn(G, 16, 8).astype(np.float32)
        yb = np.sin(xb.sum(-1)).astype(np.float32)
        opt_state, loss = pstep(i, opt_state, (local_rows(xb), local_rows(yb)))
    leaves = jax.tree_util.tree_leaves(get_params(opt_state))
    return hashlib.sha256(b"".join(np.asarray(p).tobytes() for p in leaves)).hexdigest()


def sharded_train_hash(steps: int = 5) -> str:
    """The same training with a sharded jit: the batch split over a mesh of every
    process's devices, the parameters replicated (no explicit collective)."""
    params, apply = _model()
    opt_init, opt_update, get_params = optimizers.adam(3e-3)
    mesh = jax.make_mesh((G,), ("batch",))
    rows, whole = NamedSharding(mesh, PartitionSpec("batch")), NamedSharding(mesh, PartitionSpec())

    def step(i, opt_state, xb, yb):
        loss, grads = jax.value_and_grad(
            lambda p: jnp.mean((apply(p, xb)[:, 0] - yb) ** 2))(get_params(opt_state))
        return opt_update(i, grads, opt_state), loss

    sstep = jax.jit(step, in_shardings=(whole, whole, rows, rows))
    rng = np.random.RandomState(1)
    opt_state = opt_init(params)
    for i in range(steps):
        xb = rng.randn(G * 16, 8).astype(np.float32)
        yb = np.sin(xb.sum(-1)).astype(np.float32)
        mine = slice(ME * L * 16, (ME + 1) * L * 16)
        opt_state, loss = sstep(i, opt_state,
                                jax.make_array_from_process_local_data(rows, xb[mine]),
                                jax.make_array_from_process_local_data(rows, yb[mine]))
    leaves = jax.tree_util.tree_leaves(get_params(opt_state))
    return hashlib.sha256(b"".join(np.asarray(p).tobytes() for p in leaves)).hexdigest()


def check_sharded_train():
    h = sharded_train_hash()
    if ME == 0:
        print(f"params {h} over {G} devices", flush=True)


def check_train():
    h = train_hash()
    hashes = multihost_utils.process_allgather(np.frombuffer(bytes.fromhex(h), np.uint8))
    assert all((row == hashes[0]).all() for row in hashes), "processes disagree"
    if ME == 0:
        print(f"params {h} over {G} devices", flush=True)


def check_seed():
    """Seed 004's distributed training (complex batches, eigvals targets, conj grads)."""
    def randn(key, shape, dtype=float):
        key, sub = jax.random.split(key)
        return key, jax.random.normal(sub, shape, dtype=dtype)
    jit_randn = jax.jit(randn, static_argnums=(1, 2))
    radius = jax.vmap(lambda m: jnp.max(jnp.abs(jnp.linalg.eigvals(m))))
    init, model = stax.serial(stax.Flatten, stax.Dense(16), stax.Relu, stax.Dense(1))
    _, params = init(jax.random.PRNGKey(1), (-1, 2, 2))
    opt_init, opt_update, get_params = optimizers.adam(3e-4)

    def batch_loss(params, batch):
        return jnp.mean(jnp.abs(model(params, batch)[:, 0] - radius(batch)))

    def distributed_train_batch(step, opt_state, batch):
        loss, grad = jax.value_and_grad(batch_loss)(get_params(opt_state), batch)
        loss, grad = lax.pmean((loss, grad), "batch")
        grad = jax.tree_util.tree_map(jnp.conj, grad)
        return opt_update(step, grad, opt_state), loss

    pmap_train_batch = jax.pmap(distributed_train_batch, "batch", in_axes=(None, None, 0),
                                out_axes=(None, None))
    key, opt_state = jax.random.PRNGKey(0), opt_init(params)
    for step in range(6):
        key, batch = jit_randn(key, (16, 2, 2), complex)
        batch = local_rows(batch.reshape((G, 16 // G, 2, 2)))
        opt_state, loss = pmap_train_batch(step, opt_state, batch)
        if ME == 0:
            print(f"step {step} loss {np.asarray(loss).tobytes().hex()}", flush=True)


def check_early_exit():
    if ME == 1:
        sys.exit(0)
    try:
        jax.pmap(lambda a: lax.psum(a, "i"), "i")(np.ones((L, 2), np.float32)).block_until_ready()
    except Exception as e:
        # The uncaught error aborts the job, and mpiexec may exit before it has passed on
        # this process's stderr: the error also goes to a file the test reads.
        errors = os.environ.get("CHECK_MPI_ERRORS")
        if errors:
            with open(os.path.join(errors, f"rank{ME}.txt"), "w") as f:
                f.write(f"{type(e).__name__}: {e}\n")
        raise
    raise AssertionError("psum with a process gone returned")


if __name__ == "__main__":
    globals()[f"check_{GROUP}"]()
    print(f"ok {GROUP} {ME}", flush=True)
