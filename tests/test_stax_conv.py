"""stax's convolution and pooling layers: shapes, initialisers and outputs against JAX
0.10.2 (pinned, same PRNG keys), pooling against numpy, and a small CNN trained with Adam
under jit whose losses match JAX's."""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import random
from tinyxla.example_libraries import optimizers, stax


def _cnn():
    return stax.serial(stax.Conv(4, (3, 3), padding="SAME"), stax.Relu,
                       stax.MaxPool((2, 2), (2, 2)), stax.Conv(6, (3, 3)), stax.Relu,
                       stax.AvgPool((2, 2), padding="SAME"), stax.Flatten, stax.Dense(3),
                       stax.LogSoftmax)


def test_cnn_init_and_adam_training_match_jax():
    init, apply = _cnn()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 8, 8, 2)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 5)]
    shape, params = init(random.PRNGKey(0), x.shape)
    assert shape == (5, 3)
    assert [[np.shape(p) for p in layer] for layer in params] == [
        [(3, 3, 2, 4), (1, 1, 1, 4)], [], [], [(3, 3, 4, 6), (1, 1, 1, 6)], [], [], [],
        [(24, 3), (3,)], []]
    np.testing.assert_allclose(np.asarray(params[0][0]).ravel()[:4],
                               [0.0415135957, -0.1592739671, -0.2548113763, -0.0855226964],
                               rtol=1e-5)
    opt_init, opt_update, get_params = optimizers.adam(1e-2)
    state = opt_init(params)

    def loss(p):
        return -jnp.mean(jnp.sum(apply(p, x) * y, -1))

    @jax.jit
    def step(i, s):
        value, g = jax.value_and_grad(loss)(get_params(s))
        return value, opt_update(i, g, s)
    losses = []
    for i in range(4):
        value, state = step(i, state)
        losses.append(float(value))
    np.testing.assert_allclose(losses, [1.2555938959, 0.9109512568, 0.6967688203,
                                        0.5721287728], rtol=2e-4)


_LAYERS = [
    (lambda: stax.ConvTranspose(3, (3, 3), (2, 2), "SAME"), (2, 5, 5, 4), (2, 10, 10, 3),
     [(3, 3, 4, 3), (1, 1, 1, 3)], [0.00793173816, -0.0810053349, 0.140320823, -0.346954912]),
    (lambda: stax.Conv1DTranspose(3, (4,), (3,), "VALID"), (2, 7, 4), (2, 22, 3),
     [(4, 4, 3), (1, 1, 3)], [0.575962484, -0.879365385, 0.983544707, 0.355485499]),
    (lambda: stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 5, (2, 3), (2, 1), "SAME"),
     (2, 3, 7, 6), (2, 5, 4, 6), [(5, 3, 2, 3), (1, 5, 1, 1)],
     [0.16632396, 0.497182071, 0.139369354, 0.0825404599]),
    (lambda: stax.SumPool((3, 2), (1, 2), "SAME", spec="NCHW"), (2, 3, 7, 6), (2, 3, 7, 3), [],
     [-3.88844609, -5.49800825, -5.01992035, -4.54183245]),
    (lambda: stax.AvgPool((3,), (2,), "VALID"), (2, 9, 3), (2, 4, 3), [],
     [-0.886792421, -0.584905624, -0.169811338, 0.358490556]),
]


@pytest.mark.parametrize("make,in_shape,out_shape,param_shapes,values", _LAYERS,
                         ids=["ConvTranspose", "Conv1DTranspose", "GeneralConv", "SumPool",
                              "AvgPool"])
def test_layers_match_jax(make, in_shape, out_shape, param_shapes, values):
    init, apply = make()
    shape, params = init(random.PRNGKey(1), in_shape)
    assert tuple(shape) == out_shape
    assert [np.shape(p) for p in params] == param_shapes
    x = np.linspace(-1, 1, int(np.prod(in_shape)), dtype=np.float32).reshape(in_shape)
    for f in (apply, jax.jit(apply)):
        out = np.asarray(f(params, x))
        assert out.shape == out_shape
        np.testing.assert_allclose(out.ravel()[::5][:4], values, rtol=1e-5, atol=1e-6)


def test_pooling_against_numpy():
    x = np.random.default_rng(2).standard_normal((2, 6, 4, 3)).astype(np.float32)
    blocks = x.reshape(2, 3, 2, 2, 2, 3)
    _, max_apply = stax.MaxPool((2, 2), (2, 2))
    _, avg_apply = stax.AvgPool((2, 2), (2, 2))
    _, sum_apply = stax.SumPool((2, 2), (2, 2))
    np.testing.assert_allclose(np.asarray(max_apply((), x)), blocks.max((2, 4)))
    np.testing.assert_allclose(np.asarray(avg_apply((), x)), blocks.mean((2, 4)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(sum_apply((), x)), blocks.sum((2, 4)), rtol=1e-6)


def test_per_example_gradients_of_cnn():
    """vmap(grad) over examples (differentially private SGD's per-example gradients)."""
    init, apply = _cnn()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 8, 8, 2)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 3)]
    _, params = init(random.PRNGKey(2), (1, 8, 8, 2))

    def loss(p, xi, yi):
        return -jnp.sum(apply(p, xi[None]) * yi)
    per_example = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(params, x, y)
    for i in range(3):
        want = jax.grad(loss)(params, x[i], y[i])
        for got_leaf, want_leaf in zip(jax.tree_util.tree_leaves(per_example),
                                       jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(got_leaf)[i], np.asarray(want_leaf),
                                       rtol=2e-4, atol=1e-5)
