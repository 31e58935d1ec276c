"""Trains a 4-64-64-64-1 ReLU MLP to fit sin(x . w) with stax and Adam, as a JAX user
would with ``jax.example_libraries``; only the imports name tinyxla. The parameters start
from numpy, so the program runs the same under ``import jax`` (swap the imports).

    python examples/stax_mlp.py
"""
import time

import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.example_libraries import optimizers, stax


def init_params(rng: np.random.RandomState) -> list:
    sizes = [4, 64, 64, 64, 1]
    params = []
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        if i:
            params.append(())  # the Relu layers have no parameters
        params.append(((rng.randn(m, n) * np.sqrt(2.0 / m)).astype(np.float32),
                       np.zeros(n, np.float32)))
    return params


def main() -> None:
    _, apply_fun = stax.serial(stax.Dense(64), stax.Relu, stax.Dense(64), stax.Relu,
                               stax.Dense(64), stax.Relu, stax.Dense(1))
    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    rng = np.random.RandomState(0)
    w = np.array([1.0, -2.0, 0.5, 1.5], np.float32)

    def loss(params, x, y):
        return jnp.mean((apply_fun(params, x) - y) ** 2)

    @jax.jit
    def train_step(i, opt_state, x, y):
        value, grads = jax.value_and_grad(loss)(get_params(opt_state), x, y)
        return opt_update(i, grads, opt_state), value

    opt_state = opt_init(init_params(rng))
    start = time.perf_counter()
    for step in range(2001):
        x = rng.randn(64, 4).astype(np.float32)
        y = np.sin(x @ w)[:, None]
        opt_state, value = train_step(step, opt_state, x, y)
        if step % 500 == 0:
            print(f"step {step:5d}  loss {float(value):.5f}")
    print(f"{2001 / (time.perf_counter() - start):.0f} steps/s")


if __name__ == "__main__":
    main()
