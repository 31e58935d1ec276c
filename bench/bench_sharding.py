"""Sharding and multi-process figures (issue 16), in one run:

    python bench/bench_sharding.py [--repeats 7]      (or: python bench/run.py --only sharding)

1. psum of 64 MiB float32 across 2 processes (mpiexec -n 2, one device each): a pmap'd
   psum, end to end, against a plain mpi4py Allreduce of the same buffer in the same run;
   "of MPI" is the psum's bandwidth over Allreduce's.
2. The seed MLP's data-parallel step (seed 004: pmap, pmean of loss and grads, adam) over
   2 processes x 1 device against one process with 2 devices: time per step, and whether
   the parameters after the steps are equal bit for bit.
3. A data-parallel jit with NamedSharding over 2 host devices against the same jit on one
   device, on small-kernel work (200 chained 64x64 matmuls + tanh per 64 rows, as in
   bench_pmap.py): "gain" is one device's time over the sharded one's. The one device uses
   both cores for its 128-row products, so the gain's ceiling is one device's time over
   its time for half the rows (what each of two devices does, had it the machine alone);
   "reaches" says how close the sharded run comes to it (100%: the devices lose nothing to
   each other; the host's load on the second core shows here first). The floor row runs
   the half-rows case in two separate one-device processes at once: what this machine's
   two cores give two independent runs, sharing no runtime. All cases take turns, a batch
   of calls each, so a burst of the host's load hits every one alike.

Needs the MPI extra (pip install 'tinyxla[mpi]') for 1 and 2. Medians of repeats; the
machine's other load skews them, so the load average is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")

ALLREDUCE = r'''
import json, sys, time
import numpy as np
import tinyxla as jax
from tinyxla import lax
from mpi4py import MPI
jax.distributed.initialize()
reps = int(sys.argv[1])
x = np.random.RandomState(jax.process_index()).randn(1, 16 * 1024 * 1024).astype(np.float32)
xa = jax.numpy.asarray(x)
f = jax.pmap(lambda a: lax.psum(a, "i"), "i")
comm = MPI.COMM_WORLD
out = np.empty_like(x)
def med(fn):
    fn()
    ts = []
    for _ in range(reps):
        comm.Barrier()
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return float(np.median(ts))
t_mpi = med(lambda: comm.Allreduce(x, out, op=MPI.SUM))
t_psum = med(lambda: f(xa).block_until_ready())
ok = np.array_equal(np.asarray(f(xa)), out)
if jax.process_index() == 0:
    print(json.dumps({"mpi": t_mpi, "psum": t_psum, "equal": bool(ok)}))
'''

TRAIN = r'''
import hashlib, json, os, sys, time
import numpy as np
import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.example_libraries import optimizers, stax
if os.environ.get("PMI_SIZE"):
    jax.distributed.initialize()
reps = int(sys.argv[1])
P, ME, L = jax.process_count(), jax.process_index(), jax.local_device_count()
G = P * L
init, apply = stax.serial(stax.Dense(64), stax.Relu, stax.Dense(64), stax.Relu,
                          stax.Dense(64), stax.Relu, stax.Dense(1))
_, params = init(jax.random.PRNGKey(0), (-1, 4))
opt_init, opt_update, get_params = optimizers.adam(3e-4)
def loss_fn(p, batch):
    xb, yb = batch
    return jnp.mean(jnp.abs(apply(p, xb)[:, 0] - yb))
def step(i, opt_state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(get_params(opt_state), batch)
    loss, grads = lax.pmean((loss, grads), "batch")
    return opt_update(i, grads, opt_state), loss
pstep = jax.pmap(step, "batch", in_axes=(None, None, 0), out_axes=(None, None))
rng = np.random.RandomState(0)
batches = []
for i in range(8):
    xb = rng.randn(G, 32, 4).astype(np.float32)
    yb = np.abs(xb).max(-1).astype(np.float32)
    batches.append((xb[ME * L:(ME + 1) * L], yb[ME * L:(ME + 1) * L]))
state = opt_init(params)
for i, b in enumerate(batches):
    state, loss = pstep(i, state, b)
digest = hashlib.sha256(b"".join(np.asarray(p).tobytes()
                                 for p in jax.tree_util.tree_leaves(get_params(state)))).hexdigest()
ts = []
for r in range(reps):
    t0 = time.perf_counter()
    for i, b in enumerate(batches):
        state, loss = pstep(i, state, b)
    jax.block_until_ready(state)
    ts.append((time.perf_counter() - t0) / len(batches))
if ME == 0:
    print(json.dumps({"step": float(np.median(ts)), "hash": digest}))
'''

# A worker of the data-parallel figure: runs a batch of 5 calls of the case named on each
# line of its input, and answers with the time per call.
DATA_PARALLEL = r'''
import sys, time
import numpy as np
import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.sharding import NamedSharding, PartitionSpec as P
rng = np.random.RandomState(0)
W = jnp.asarray((rng.randn(64, 64) / 8).astype(np.float32))
def f(x):
    for _ in range(200):
        x = jnp.tanh(x @ W)
    return x
x = rng.randn(128, 64).astype(np.float32)
one = jax.jit(f)
cases = {"half": (one, jnp.asarray(x[:64]))}
if jax.device_count() > 1:
    mesh = jax.make_mesh((2,), ("x",))
    s = NamedSharding(mesh, P("x"))
    sharded = jax.jit(f, in_shardings=s, out_shardings=s)
    x1, xs = jnp.asarray(x), jax.device_put(x, s)
    assert np.allclose(np.asarray(sharded(xs)), np.asarray(one(x1)), atol=1e-5)
    cases.update(one=(one, x1), sharded=(sharded, xs))
for fn, a in cases.values():
    fn(a).block_until_ready()
print("ready", flush=True)
for line in sys.stdin:
    fn, a = cases[line.strip()]
    t0 = time.perf_counter()
    for _ in range(5):
        r = fn(a)
    r.block_until_ready()
    print((time.perf_counter() - t0) / 5, flush=True)
'''


def _env(devices: int) -> dict:
    env = dict(os.environ, TINYXLA_NUM_CPU_DEVICES=str(devices))
    env.pop("XLA_FLAGS", None)
    return env


def _run(code: str, repeats: int, procs: int, devices: int) -> dict:
    cmd = [sys.executable, "-c", code, str(repeats)]
    if procs:
        cmd = [MPIEXEC, "-n", str(procs)] + cmd
    out = subprocess.run(cmd, env=_env(devices), capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _data_parallel(repeats: int) -> dict:
    """Medians of the data-parallel cases: one process of two devices (one, sharded, half)
    taking turns with two one-device processes running half at once (alone: the slower)."""
    def start(devices: int) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", DATA_PARALLEL], env=_env(devices),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def answer(p: subprocess.Popen) -> str:
        line = p.stdout.readline()
        if not line:
            raise RuntimeError(f"a data-parallel worker exited with {p.wait()}")
        return line

    both, alone = start(2), [start(1), start(1)]
    workers = [both] + alone
    try:
        for p in workers:
            answer(p)  # ready
        ts = {k: [] for k in ("one", "sharded", "half", "alone")}
        for _ in range(4 * repeats):
            for k in ("one", "sharded", "half"):
                both.stdin.write(k + "\n")
                both.stdin.flush()
                ts[k].append(float(answer(both)))
            for p in alone:
                p.stdin.write("half\n")
                p.stdin.flush()
            ts["alone"].append(max(float(answer(p)) for p in alone))
    finally:
        for p in workers:
            p.stdin.close()
            p.wait(timeout=60)
    return {k: float(np.median(v)) for k, v in ts.items()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args(argv)
    rows = []
    if os.path.exists(MPIEXEC):
        r = _run(ALLREDUCE, args.repeats, 2, 1)
        mib = 64.0
        rows.append(("psum 64 MiB f32, 2 processes", f"{r['psum'] * 1e3:.1f} ms",
                     f"MPI Allreduce {r['mpi'] * 1e3:.1f} ms",
                     f"{r['mpi'] / r['psum'] * 100:.0f}% of MPI ({mib / r['psum']:.0f} MiB/s)"
                     + ("" if r["equal"] else " VALUES DIFFER")))
        multi = _run(TRAIN, args.repeats, 2, 1)
        single = _run(TRAIN, args.repeats, 0, 2)
        rows.append(("seed MLP DP step, 2 proc x 1 dev", f"{multi['step'] * 1e3:.2f} ms",
                     f"1 proc x 2 dev {single['step'] * 1e3:.2f} ms",
                     f"{multi['step'] / single['step']:.2f}x its time, "
                     + ("bit-equal" if multi["hash"] == single["hash"] else "NOT bit-equal")))
    else:
        rows.append(("multi-process rows", "skipped", "", "pip install 'tinyxla[mpi]'"))
    r = _data_parallel(args.repeats)
    rows.append(("DP jit NamedSharding, 2 devices", f"{r['sharded'] * 1e3:.2f} ms",
                 f"one device {r['one'] * 1e3:.2f} ms", f"gain {r['one'] / r['sharded']:.2f}x"))
    # Two devices can at best each take a half in the time one device takes a half alone.
    rows.append(("  ceiling: one device, half the rows", f"{r['half'] * 1e3:.2f} ms",
                 f"gain ceiling {r['one'] / r['half']:.2f}x",
                 f"sharded reaches {r['half'] / r['sharded'] * 100:.0f}% of it"))
    rows.append(("  floor: 2 processes, half each", f"{r['alone'] * 1e3:.2f} ms",
                 f"gain there {r['one'] / r['alone']:.2f}x",
                 f"sharded reaches {r['alone'] / r['sharded'] * 100:.0f}% of it"))
    width = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, width)))
    print(f"load average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
