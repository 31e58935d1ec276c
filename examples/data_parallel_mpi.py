"""Data-parallel training of the seed MLP (seed 004's Horovod-style pmap + pmean step)
over several processes, each with its host-thread devices:

    TINYXLA_NUM_CPU_DEVICES=2 .venv/bin/mpiexec -n 2 .venv/bin/python examples/data_parallel_mpi.py

(needs the MPI extra: pip install 'tinyxla[mpi]'). Each process feeds the rows of its own
devices; the gradients are averaged over all devices of all processes by lax.pmean, which
crosses processes as an MPI all-reduce. Also runs as one process (no mpiexec). Change the
imports to `import jax` / `import jax.numpy as jnp` to run it on JAX.
"""
import time

import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.example_libraries import optimizers, stax

jax.distributed.initialize()  # reads the MPI job (rank and size) set up by mpiexec
print(f"process {jax.process_index()} of {jax.process_count()}: local devices "
      f"{[d.id for d in jax.local_devices()]} of {jax.device_count()}", flush=True)

batch_axis = "batch"
init_fun, model = stax.serial(stax.Dense(64), stax.Relu, stax.Dense(64), stax.Relu,
                              stax.Dense(64), stax.Relu, stax.Dense(1))
_, params = init_fun(jax.random.PRNGKey(0), (-1, 4))
opt_init, opt_update, get_params = optimizers.adam(3e-4)


def batch_loss(params, batch):
    inputs, targets = batch
    return jnp.mean(jnp.abs(model(params, inputs)[:, 0] - targets))


def distributed_train_batch(step, opt_state, batch):
    params = get_params(opt_state)
    loss, grad = jax.value_and_grad(batch_loss)(params, batch)
    loss, grad = jax.lax.pmean((loss, grad), batch_axis)  # the one added line (seed 004)
    return opt_update(step, grad, opt_state), loss


pmap_train_batch = jax.pmap(distributed_train_batch, batch_axis, in_axes=(None, None, 0),
                            out_axes=(None, None))

world_size = jax.device_count()  # devices of all processes
local = jax.local_device_count()
batch_size = 64
local_batch_size = batch_size // world_size
rng = np.random.RandomState(0)  # the same stream on every process: each takes its rows
opt_state = opt_init(params)
start = time.perf_counter()
for step in range(300):
    inputs = rng.randn(batch_size, 4).astype(np.float32)
    targets = np.abs(inputs).max(-1).astype(np.float32)  # a spectral-radius-like target
    first = jax.process_index() * local * local_batch_size
    rows = slice(first, first + local * local_batch_size)
    batch = (inputs[rows].reshape(local, local_batch_size, 4),
             targets[rows].reshape(local, local_batch_size))
    opt_state, loss = pmap_train_batch(step, opt_state, batch)
    if step % 100 == 0 and jax.process_index() == 0:
        print(f"step {step}; loss {float(loss):.6f}", flush=True)
if jax.process_index() == 0:
    print(f"Distributed training took {time.perf_counter() - start:.2f} seconds on "
          f"{world_size} devices in {jax.process_count()} processes.", flush=True)
