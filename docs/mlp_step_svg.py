"""Draws docs/mlp_step.svg, the README's picture: the compiled graph of an SGD step of a
4-32-1 tanh MLP on a batch of 64, with the built-in layout.

    python docs/mlp_step_svg.py
"""
import pathlib

import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import tools


def loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    return jnp.mean((h @ w2 + b2 - y) ** 2)


@jax.jit
def sgd_step(params, x, y):
    value, g = jax.value_and_grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, d: p - 0.01 * d, params, g), value


rng = np.random.default_rng(0)
params = ((jnp.asarray(rng.standard_normal((4, 32)), jnp.float32), jnp.zeros(32)),
          (jnp.asarray(rng.standard_normal((32, 1)), jnp.float32), jnp.zeros(1)))
x, y = jnp.ones((64, 4)), jnp.ones((64, 1))
svg = tools.graph_svg(sgd_step, params, x, y, layout="builtin")
(pathlib.Path(__file__).parent / "mlp_step.svg").write_text(svg)
