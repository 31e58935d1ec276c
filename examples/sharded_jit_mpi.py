"""Data-parallel training of the seed MLP with a sharded jit over the devices of several
processes: the batch is split over a mesh of every process's devices, the parameters are
replicated, and the gradient reductions the partitioning needs cross the processes as MPI
all-reduces:

    TINYXLA_NUM_CPU_DEVICES=2 .venv/bin/mpiexec -n 2 .venv/bin/python examples/sharded_jit_mpi.py

(needs the MPI extra: pip install 'tinyxla[mpi]'). Each process makes the global batch
from its own rows (make_array_from_process_local_data). Also runs as one process (no
mpiexec). Change the imports to `import jax` / `import jax.numpy as jnp` to run it on JAX.
"""
import time

import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.example_libraries import optimizers, stax
from tinyxla.sharding import NamedSharding, PartitionSpec as P

jax.distributed.initialize()  # reads the MPI job (rank and size) set up by mpiexec
print(f"process {jax.process_index()} of {jax.process_count()}: local devices "
      f"{[d.id for d in jax.local_devices()]} of {jax.device_count()}", flush=True)

mesh = jax.make_mesh((jax.device_count(),), ("batch",))
rows, replicated = NamedSharding(mesh, P("batch")), NamedSharding(mesh, P())

init_fun, model = stax.serial(stax.Dense(64), stax.Relu, stax.Dense(64), stax.Relu,
                              stax.Dense(64), stax.Relu, stax.Dense(1))
_, params = init_fun(jax.random.PRNGKey(0), (-1, 4))
opt_init, opt_update, get_params = optimizers.adam(3e-4)


def batch_loss(params, inputs, targets):
    return jnp.mean(jnp.abs(model(params, inputs)[:, 0] - targets))


def train_batch(step, opt_state, inputs, targets):
    loss, grad = jax.value_and_grad(batch_loss)(get_params(opt_state), inputs, targets)
    return opt_update(step, grad, opt_state), loss


sharded_train_batch = jax.jit(train_batch, in_shardings=(replicated, replicated, rows, rows))

batch_size = 64
local_rows = batch_size // jax.process_count()
first = jax.process_index() * local_rows
rng = np.random.RandomState(0)  # the same stream on every process: each takes its rows
opt_state = opt_init(params)
start = time.perf_counter()
for step in range(300):
    inputs = rng.randn(batch_size, 4).astype(np.float32)
    targets = np.abs(inputs).max(-1).astype(np.float32)
    x = jax.make_array_from_process_local_data(rows, inputs[first:first + local_rows])
    y = jax.make_array_from_process_local_data(rows, targets[first:first + local_rows])
    opt_state, loss = sharded_train_batch(step, opt_state, x, y)
    if step % 100 == 0 and jax.process_index() == 0:
        print(f"step {step}; loss {float(loss):.6f}", flush=True)
if jax.process_index() == 0:
    print(f"Sharded training took {time.perf_counter() - start:.2f} seconds on "
          f"{jax.device_count()} devices in {jax.process_count()} processes.", flush=True)
