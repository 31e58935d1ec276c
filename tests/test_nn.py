"""tinyxla.nn against numpy formulas (float64 references), JAX's gradients pinned at the
kinks (taken from jax 0.10.2), numerical derivatives (check_grads in float64), and jit
against eager."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import nn
from tinyxla.test_util import check_grads


@pytest.fixture
def x64():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", prev)


def _x(shape=(3, 5), seed=0, scale=3.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_softplus(x):
    return np.logaddexp(x, 0)


def _np_relu6(x):
    return np.minimum(np.maximum(x, 0), 6)


def _np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


REFERENCES = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": _np_relu6,
    "sigmoid": _np_sigmoid,
    "log_sigmoid": lambda x: -_np_softplus(-x),
    "softplus": _np_softplus,
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "silu": lambda x: x * _np_sigmoid(x),
    "swish": lambda x: x * _np_sigmoid(x),
    "mish": lambda x: x * np.tanh(_np_softplus(x)),
    "elu": _np_elu,
    "selu": lambda x: SELU_SCALE * _np_elu(x, SELU_ALPHA),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: _np_relu6(x + 3) / 6,
    "hard_silu": lambda x: x * _np_relu6(x + 3) / 6,
    "hard_swish": lambda x: x * _np_relu6(x + 3) / 6,
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "identity": lambda x: x,
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_values(name):
    x = _x()
    x64_ = x.astype(np.float64)
    f = getattr(nn, name)
    want = REFERENCES[name](x64_)
    got = f(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), np.asarray(got), rtol=1e-6, atol=1e-7)


def test_gelu_exact():
    x = _x()
    want = 0.5 * x.astype(np.float64) * ss.erfc(-x.astype(np.float64) / np.sqrt(2))
    got = nn.gelu(x, approximate=False)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32


def test_activation_parameters():
    x = _x()
    xd = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(nn.elu(x, 0.5)), _np_elu(xd, 0.5), rtol=2e-6)
    np.testing.assert_allclose(np.asarray(nn.celu(x, 0.5)),
                               np.maximum(xd, 0) + 0.5 * np.expm1(np.minimum(xd, 0) / 0.5),
                               rtol=2e-6)
    np.testing.assert_allclose(np.asarray(nn.leaky_relu(x, 0.2)),
                               np.where(xd >= 0, xd, 0.2 * xd), rtol=1e-6)


def test_integer_inputs():
    # As in JAX: relu keeps ints, gelu/softplus promote, sigmoid (lax.logistic) rejects.
    assert nn.relu(jnp.arange(-2, 3)).dtype == np.int32
    assert nn.gelu(jnp.arange(3)).dtype == np.float32
    assert nn.softplus(jnp.arange(3)).dtype == np.float32
    with pytest.raises(TypeError, match="logistic does not accept dtype int32"):
        nn.sigmoid(jnp.arange(3))


# jax.vmap(jax.grad(jax.nn.<name>)) at these points, from jax 0.10.2: the kinks pin
# JAX's custom derivative choices (relu'(0) = 0, relu6'(6) = 0, ...).
GRAD_POINTS = [-6., -3., -1., 0., 1., 3., 6.]
JAX_GRADS = {
    "relu": [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
    "relu6": [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0],
    "sigmoid": [0.0024665091186761856, 0.045176658779382706, 0.1966119408607483, 0.25,
                0.1966119259595871, 0.04517665505409241, 0.002466465812176466],
    "log_sigmoid": [0.9975273013114929, 0.9525741338729858, 0.7310585379600525, 0.5,
                    0.26894140243530273, 0.04742587357759476, 0.0024726230185478926],
    "softplus": [0.0024726230185478926, 0.04742587357759476, 0.26894140243530273, 0.5,
                 0.7310585379600525, 0.9525741338729858, 0.9975273013114929],
    "soft_sign": [0.02040816843509674, 0.0625, 0.25, 1.0, 0.25, 0.0625, 0.02040816843509674],
    "silu": [-0.012326431460678577, -0.08810410648584366, 0.07232949137687683, 0.5,
             0.9276705384254456, 1.0881041288375854, 1.0123262405395508],
    "elu": [0.00247877836227417, 0.049787044525146484, 0.3678794503211975, 1.0, 1.0, 1.0, 1.0],
    "selu": [0.004357938654720783, 0.08753056824207306, 0.6467686295509338, 1.7580993175506592,
             1.0507010221481323, 1.0507010221481323, 1.0507010221481323],
    "celu": [0.00247877836227417, 0.049787044525146484, 0.3678794503211975, 1.0, 1.0, 1.0, 1.0],
    "leaky_relu": [0.009999999776482582, 0.009999999776482582, 0.009999999776482582, 1.0, 1.0,
                   1.0, 1.0],
    "hard_tanh": [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0],
    "hard_sigmoid": [0.0, 0.0, 0.1666666716337204, 0.1666666716337204, 0.1666666716337204, 0.0,
                     0.0],
    "hard_silu": [0.0, 0.0, 0.1666666716337204, 0.5, 0.8333333730697632, 1.0, 1.0],
    "mish": [-0.012359967455267906, -0.09339311718940735, 0.05921675264835358,
             0.6000000238418579, 1.0490361452102661, 1.0211061239242554, 1.0001333951950073],
    "gelu": [0.0, -0.011583905667066574, -0.08296407014131546, 0.5, 1.0829639434814453,
             1.011583924293518, 1.0],
}


@pytest.mark.parametrize("name", sorted(JAX_GRADS))
def test_activation_grads_match_jax(name):
    f = getattr(nn, name)
    pts = np.array(GRAD_POINTS, np.float32)
    got = jax.vmap(jax.grad(f))(pts)
    np.testing.assert_allclose(np.asarray(got), JAX_GRADS[name], rtol=2e-6, atol=1e-7)
    # The same derivatives one point at a time, eagerly and under jit.
    g = jax.grad(f)
    for p, want in zip(GRAD_POINTS, JAX_GRADS[name]):
        np.testing.assert_allclose(float(g(np.float32(p))), want, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(g))(pts)), JAX_GRADS[name],
                               rtol=2e-6, atol=1e-7)


# Smooth away from their kinks: numerical first and second derivatives in float64.
SMOOTH_POINTS = np.array([-2.7, -1.3, -0.4, 0.3, 1.1, 2.2, 4.5])


@pytest.mark.parametrize("name", ["sigmoid", "log_sigmoid", "softplus", "soft_sign", "silu",
                                  "mish", "elu", "selu", "celu", "gelu", "relu", "relu6",
                                  "leaky_relu", "hard_tanh", "hard_silu"])
def test_activation_numerical_grads(x64, name):
    check_grads(getattr(nn, name), (SMOOTH_POINTS,), 2, modes=("fwd", "rev"))


def test_gelu_exact_numerical_grads(x64):
    check_grads(lambda x: nn.gelu(x, approximate=False), (SMOOTH_POINTS,), 2)


def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1), None])
def test_softmax_and_log_softmax(axis):
    x = _x((3, 4, 5))
    xd = x.astype(np.float64)
    want = _np_softmax(xd, axis)
    np.testing.assert_allclose(np.asarray(nn.softmax(x, axis=axis)), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(nn.log_softmax(x, axis=axis)), np.log(want),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(nn.softmax, static_argnums=1)(x, axis)),
                               want, rtol=1e-5, atol=1e-7)


def test_softmax_where():
    x = _x((2, 6))
    mask = np.array([[True, False, True, True, False, True]] * 2)
    xd = np.where(mask, x.astype(np.float64), -np.inf)
    want = np.where(mask, _np_softmax(xd, -1), 0)
    np.testing.assert_allclose(np.asarray(nn.softmax(x, where=mask)), want, rtol=1e-5,
                               atol=1e-7)
    got_log = np.asarray(nn.log_softmax(x, where=mask))
    assert np.all(got_log[~mask] == -np.inf)
    np.testing.assert_allclose(got_log[mask], np.log(want[mask]), rtol=1e-5)


def test_softmax_custom_jvp_with_neg_inf():
    # JAX's softmax jvp y * (t - sum(y t)) keeps -inf inputs' gradient at 0, not NaN.
    x = np.array([-np.inf, 0., 1.], np.float32)
    g = jax.grad(lambda x: nn.softmax(x)[1])(x)
    y = _np_softmax(np.array([-np.inf, 0., 1.]), -1)
    want = y[1] * (np.eye(3)[1] - y)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-7)
    g_log = jax.grad(lambda x: nn.log_softmax(x)[2])(x)
    np.testing.assert_allclose(np.asarray(g_log), np.eye(3)[2] - y, rtol=1e-6, atol=1e-7)


def test_softmax_numerical_grads(x64):
    x = np.random.default_rng(1).standard_normal((3, 4))
    check_grads(lambda x: nn.softmax(x, axis=-1), (x,), 2)
    check_grads(lambda x: nn.softmax(x, axis=0), (x,), 2)
    check_grads(lambda x: nn.log_softmax(x, axis=-1), (x,), 2)


def test_softmax_vmap_matches_loop():
    x = _x((4, 7))
    got = jax.vmap(nn.softmax)(x)
    want = np.stack([np.asarray(nn.softmax(row)) for row in x])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_logsumexp():
    x = _x((3, 4))
    np.testing.assert_allclose(np.asarray(nn.logsumexp(x, axis=1)),
                               ss.logsumexp(x.astype(np.float64), axis=1), rtol=1e-6)
    ninf = np.full((2,), -np.inf, np.float32)
    assert float(nn.logsumexp(ninf)) == -np.inf
    g = jax.grad(nn.logsumexp)(np.array([-np.inf, 0., 0.], np.float32))
    np.testing.assert_allclose(np.asarray(g), [0., .5, .5])
    big = np.array([1000., 1000.], np.float32)
    np.testing.assert_allclose(float(nn.logsumexp(big)), 1000 + np.log(2), rtol=1e-6)


def test_glu():
    x = _x((3, 8))
    xd = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(nn.glu(x)), xd[:, :4] * _np_sigmoid(xd[:, 4:]),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(nn.glu(x.T, axis=0)),
                               (xd[:, :4] * _np_sigmoid(xd[:, 4:])).T, rtol=1e-5)


def test_one_hot():
    idx = np.array([0, 2, 1, 5, -1])
    got = nn.one_hot(idx, 3)
    assert got.dtype == np.float32 and got.shape == (5, 3)
    np.testing.assert_array_equal(np.asarray(got), np.eye(3)[[0, 2, 1]].tolist() + [[0] * 3] * 2)
    got0 = nn.one_hot(idx, 3, axis=0, dtype=jnp.int32)
    assert got0.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got0), np.asarray(got).T)
    got2 = nn.one_hot(np.array([[0, 1], [2, 0]]), 3, axis=1)
    assert got2.shape == (2, 3, 2)
    np.testing.assert_array_equal(np.asarray(got2)[:, :, 1], [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(np.asarray(jax.jit(nn.one_hot, static_argnums=1)(idx, 3)),
                                  np.asarray(got))


@pytest.mark.parametrize("algorithm", ["fast", "stable"])
def test_standardize(algorithm):
    x = _x((4, 6))
    xd = x.astype(np.float64)
    want = (xd - xd.mean(-1, keepdims=True)) / np.sqrt(xd.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(x, algorithm=algorithm)), want,
                               rtol=1e-4, atol=1e-5)
    want0 = (xd - xd.mean(0)) / np.sqrt(xd.var(0) + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(x, axis=0, algorithm=algorithm)),
                               want0, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        nn.standardize(x, algorithm="bogus")


def test_deterministic_initializers():
    init = nn.initializers
    z = init.zeros(None, (2, 3))
    assert z.shape == (2, 3) and z.dtype == np.float32 and not np.asarray(z).any()
    o = init.ones(None, (4,), jnp.float16)
    assert o.dtype == np.float16 and np.all(np.asarray(o) == 1)
    c = init.constant(-7)(None, (2, 2))
    assert c.dtype == np.float32 and np.all(np.asarray(c) == -7)


def test_compute_fans():
    from tinyxla._src.nn.initializers import _compute_fans
    assert _compute_fans((3, 5)) == (3, 5)
    assert _compute_fans((2, 2, 3, 5)) == (12, 20)
    assert _compute_fans((4, 3, 5), batch_axis=0) == (3, 5)
    with pytest.raises(ValueError, match="Can't compute input and output sizes"):
        _compute_fans((5,))


RANDOM_INITIALIZERS = {
    # name: (initializer, expected std for a (200, 300) float32 weight)
    "normal": (lambda: nn.initializers.normal(0.5), 0.5),
    "uniform": (lambda: nn.initializers.uniform(2.0), 2.0 / np.sqrt(12)),
    "glorot_normal": (nn.initializers.glorot_normal, np.sqrt(2 / 500)),
    "glorot_uniform": (nn.initializers.glorot_uniform, np.sqrt(2 / 500)),
    "xavier_uniform": (nn.initializers.xavier_uniform, np.sqrt(2 / 500)),
    "lecun_normal": (nn.initializers.lecun_normal, np.sqrt(1 / 200)),
    "lecun_uniform": (nn.initializers.lecun_uniform, np.sqrt(1 / 200)),
    "he_normal": (nn.initializers.he_normal, np.sqrt(2 / 200)),
    "he_uniform": (nn.initializers.he_uniform, np.sqrt(2 / 200)),
}


def _random_module():
    try:
        from tinyxla import random
    except ImportError:
        pytest.skip("needs tinyxla.random")
    return random


@pytest.mark.parametrize("name", sorted(RANDOM_INITIALIZERS))
def test_random_initializers(name):
    random = _random_module()
    make, std = RANDOM_INITIALIZERS[name]
    w = make()(random.PRNGKey(0), (200, 300))
    assert w.shape == (200, 300) and w.dtype == np.float32
    np.testing.assert_allclose(np.asarray(w).std(), std, rtol=0.05)
    w16 = make()(random.PRNGKey(1), (20, 30), jnp.float16)
    assert w16.dtype == np.float16


# jax.nn.initializers.<name>()(jax.random.PRNGKey(1), (3, 4)) (normal(0.5) with PRNGKey(2),
# (5,); uniform(2.0) with PRNGKey(3), (5,)) from jax 0.10.2: with a bit-exact
# tinyxla.random the initializers give the same numbers.
JAX_INITIALIZER_VALUES = {
    "glorot_normal": [-0.08954508, 0.04912674, -0.07884993, -0.08989219, 0.71183032,
        0.08598756, 1.07727456, 0.57130265, -0.16818759, 0.20744327, -0.40729302, -0.14229871],
    "glorot_uniform": [-0.11363056, 0.06249826, -0.10013981, -0.11406782, 0.73577297,
        0.10914681, 0.89598191, 0.63324422, -0.21149506, 0.25915059, -0.48236126, -0.17958461],
    "lecun_normal": [-0.09671974, 0.05306295, -0.08516765, -0.09709466, 0.76886463, 0.09287719,
        1.16358948, 0.61707741, -0.18166336, 0.22406434, -0.43992674, -0.15370019],
    "he_uniform": [-0.17357354, 0.09546766, -0.15296608, -0.17424147, 1.12391174, 0.1667245,
        1.36863494, 0.96729648, -0.32306403, 0.39585903, -0.73681897, -0.27432001],
    "normal": [0.18028708, 0.64249474, -0.36936718, 0.59153724, -0.10320958],
    "uniform": [0.14810514, 1.87628865, 1.29791403, 1.95124197, 0.55675554],
}


def test_initializers_match_jax():
    random = _random_module()
    init = nn.initializers
    for name in ("glorot_normal", "glorot_uniform", "lecun_normal", "he_uniform"):
        got = getattr(init, name)()(random.PRNGKey(1), (3, 4))
        np.testing.assert_allclose(np.asarray(got).ravel(), JAX_INITIALIZER_VALUES[name],
                                   rtol=1e-6, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(np.asarray(init.normal(0.5)(random.PRNGKey(2), (5,))),
                               JAX_INITIALIZER_VALUES["normal"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(init.uniform(2.0)(random.PRNGKey(3), (5,))),
                               JAX_INITIALIZER_VALUES["uniform"], rtol=1e-6, atol=1e-6)


# (values, derivatives) of jax.nn.<name> at EXTRA_POINTS (log1mexp at EXTRA_POSITIVE), from
# jax 0.10.2.
EXTRA_POINTS = [-2.5, -1., -0.3, 0., 0.4, 1., 2.5]
EXTRA_POSITIVE = [0.01, 0.3, 0.69, 0.7, 1., 3., 20.]
JAX_EXTRA = {
    "squareplus": ([0.35078108310699463, 0.6180340051651001, 0.8611874580383301, 1.0,
                    1.2198039293289185, 1.6180340051651, 2.850780963897705],
                   [0.10956558585166931, 0.27639320492744446, 0.42582976818084717, 0.5,
                    0.5980580449104309, 0.7236068248748779, 0.8904343843460083]),
    "sparse_plus": ([0.0, 0.0, 0.1224999949336052, 0.25, 0.4899999797344208, 1.0, 2.5],
                    [0.0, 0.0, 0.3499999940395355, 0.5, 0.699999988079071, 1.0, 1.0]),
    "sparse_sigmoid": ([0.0, 0.0, 0.3499999940395355, 0.5, 0.699999988079071, 1.0, 1.0],
                       [0.0, 0.25, 0.5, 0.5, 0.5, 0.25, 0.0]),
    "log1mexp": ([-4.610166072845459, -1.3502256870269775, -0.6963042616844177,
                  -0.6863409876823425, -0.4586751461029053, -0.05106917768716812,
                  -2.06115369216775e-09],
                 [99.50083923339844, 2.8582961559295654, 1.0063241720199585, 0.9864338636398315,
                  0.5819767117500305, 0.05239569768309593, 2.06115369216775e-09]),
}


@pytest.mark.parametrize("name", sorted(JAX_EXTRA))
def test_extra_activations_match_jax(name):
    pts = np.array(EXTRA_POSITIVE if name == "log1mexp" else EXTRA_POINTS, np.float32)
    f = getattr(nn, name)
    values, grads = JAX_EXTRA[name]
    np.testing.assert_allclose(np.asarray(f(pts)), values, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(pts)), grads, rtol=2e-6,
                               atol=1e-7)


def test_logmeanexp():
    x = _x((3, 4))
    xd = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(x, axis=1)),
                               ss.logsumexp(xd, axis=1) - np.log(4), rtol=1e-6)
    np.testing.assert_allclose(float(nn.logmeanexp(x)), ss.logsumexp(xd) - np.log(12),
                               rtol=1e-6)
    mask = np.array([[True, False, True, True]] * 3)
    got = nn.logmeanexp(x, axis=1, where=mask, keepdims=True)
    want = ss.logsumexp(np.where(mask, xd, -np.inf), axis=1, keepdims=True) - np.log(3)
    assert got.shape == (3, 1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
