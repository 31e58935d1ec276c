"""The samplers of ``jax.random`` whose algorithms loop until every lane is accepted: gamma
(Marsaglia and Tsang's rejection method, per lane), poisson (Knuth's product of uniforms
below rate 10, Hormann's transformed rejection above) and binomial (geometric inversion
below mean 10, BTRS above), each a primitive following JAX 0.10's loops step for step
(float32 poisson and binomial samples equal JAX's bit for bit, gamma's but for the last
bits of some alphas: see ``_gamma_one``).

Gamma is JAX's ``_gamma_one`` with its two ``lax.while_loop``s, vmapped over the lanes
(a batched loop runs until every lane is done; a finished lane keeps its state), so under
``jit`` it is part of the compiled graph. Poisson and binomial still drive a compiled step
from the host (``host_loop``): each step runs a few masked iterations of JAX's loop body
for every key, stopping per key at the iteration where JAX's loop condition turns false,
and the host reads the "done" flags between steps; they have no lowering rule, so inside
``jit`` their jaxpr runs equation by equation (``interpreters.lowering``).

vmap over keys batches them (the impls take leading batch axes on the key and the
parameters), and gamma differentiates by implicit reparameterisation
(``lax.random_gamma_grad``, the derivative of the sample with respect to ``a`` at a fixed
CDF value, as JAX's).

Float32 samples go through XLA:CPU's float32 ``log``/``log1p`` and its fused multiply-adds
(``xla_cpu_math``). In other dtypes the loops are JAX's, with tinyxla's transcendental
functions, so samples agree with JAX's to rounding.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from tinyxla._src import dtypes, prng, xla_cpu_math
from tinyxla._src.api import jit
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.host_loop import while_any
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters.partial_eval import trace_to_jaxpr
from tinyxla._src.lax import lax
from tinyxla._src.lax.control_flow import while_loop
from tinyxla._src.lax.special import random_gamma_grad
from tinyxla._src.random import _normal, _uniform
from tinyxla._src.vmap import vmap
from tinyxla import numpy as jnp


# ----------------------------------------------------------------------------- arithmetic

def _log(x: Any) -> Any:
    return xla_cpu_math.log_f32(x) if x.dtype == np.float32 else lax.log(x)


def _log1p(x: Any) -> Any:
    return xla_cpu_math.log1p_f32(x) if x.dtype == np.float32 else lax.log1p(x)


def _fma(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` as XLA:CPU contracts it (float32); plain otherwise."""
    if a.dtype == np.float32:
        return xla_cpu_math.fma_f32(a, b, c)
    return lax.add(lax.mul(a, b), c)


def _const(x: Any, value: float) -> Any:
    return np.array(value, x.dtype)


# ----------------------------------------------------------------------------- lanes and keys

def _flat_keys(key: Any) -> Any:
    """The key data with every batch axis flattened: (B, 2)."""
    return jnp.reshape(key, (-1, 2))


def _host_loop_primitive(name: str, impl: Any, abstract_eval: Any) -> Primitive:
    """A primitive over ``(key, *params)`` whose impl loops from the host. Its batching
    rule puts every batch axis in front (the impls take leading batch axes on all
    operands); it has no lowering rule, so ``jit`` runs it eagerly."""
    prim = Primitive(name)
    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)

    def batch_rule(vals: Any, dims: Any, **params: Any) -> tuple[Any, int]:
        size = batching.batch_size(vals, dims)
        vals = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
        return prim.bind(*vals, **params), 0

    batching.primitive_batchers[prim] = batch_rule
    return prim


# ----------------------------------------------------------------------------- gamma

def _gamma_one(key: Any, alpha: Any, log_space: bool, partitionable: bool) -> Any:
    """JAX's ``_gamma_one`` for one key and one ``alpha``: Marsaglia and Tsang's rejection
    loop, with an inner loop that redraws the normal while v <= 0, as two
    ``lax.while_loop``s (batched over lanes, a finished lane keeps its state)."""
    dtype = np.dtype(alpha.dtype)
    zero, one = _const(alpha, 0), _const(alpha, 1)
    # Gamma(alpha) = Gamma(alpha + 1) * U**(1/alpha) for alpha < 1.
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, _const(alpha, 1. / 3.))
    # XLA rewrites this division into (1/3) * rsqrt(d), with rsqrt the CPU's 12-bit estimate
    # and one Newton step: c, and so a sample, can differ from JAX's in the last bits.
    c = lax.div(_const(alpha, 1. / 3.), lax.sqrt(d))

    def accepted_not(kXVU: tuple) -> Any:  # JAX's _cond_fn: True while rejected
        _, X, V, U = kXVU
        squeeze = lax.ge(U, _fma(lax.mul(X, X), _const(X, -0.0331), one))
        log_test = lax.ge(_log(U), lax.add(lax.mul(X, _const(X, 0.5)),
                                           lax.mul(d, lax.add(lax.sub(one, V), _log(V)))))
        return lax.bitwise_and(squeeze, log_test)

    def next_kxv(kxv: tuple) -> tuple:
        halves = prng.split_data(kxv[0], (2,), partitionable)
        x = _normal(halves[1], (), dtype, partitionable)
        return halves[0], x, _fma(x, c, one)

    def draw(kXVU: tuple) -> tuple:
        keys = prng.split_data(kXVU[0], (3,), partitionable)
        _, x, v = while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv,
                                 (keys[1], zero, _const(alpha, -1)))
        U = _uniform(keys[2], 0., 1., (), dtype, partitionable)
        return keys[0], lax.mul(x, x), lax.mul(lax.mul(v, v), v), U

    halves = prng.split_data(key, (2,), partitionable)
    _, _, V, _ = while_loop(accepted_not, draw,
                                (halves[0], zero, one, _const(alpha, 2)))
    u = _uniform(halves[1], 0., 1., (), dtype, partitionable)
    if log_space:
        # log(Uniform) as JAX takes it: -exponential() = log1p(-u).
        log_samples = _log1p(lax.neg(u))
        log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_samples, zero)),
                               zero, lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(_log(d), _log(V)), log_boost)
    boost = lax.select(boost_mask, one, lax.pow(lax.sub(one, u), lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


def _random_gamma_composition(key: Any, a: Any, *, log_space: bool,
                              partitionable: bool) -> Any:
    """JAX's ``_gamma_impl``: one key per element of ``a`` (``split(key, a[batch].size)`` per
    batch key), then ``_gamma_one`` on every lane."""
    nb = math.prod(key.shape[:-1])
    per = math.prod(a.shape[key.ndim - 1:])
    keys = vmap(lambda k: prng.split_data(k, (per,), partitionable))(_flat_keys(key))
    keys = jnp.reshape(keys, (nb * per, 2))
    alphas = jnp.reshape(a, (-1,))
    if not alphas.shape[0]:
        return a
    out = vmap(lambda k, al: _gamma_one(k, al, log_space, partitionable))(keys, alphas)
    return jnp.reshape(out, a.shape)


_random_gamma_jit = jit(_random_gamma_composition, static_argnames=("log_space", "partitionable"))


def _random_gamma_impl(key: Any, a: Any, *, log_space: bool, partitionable: bool) -> Any:
    return _random_gamma_jit(key, a, log_space=log_space, partitionable=partitionable)


def _random_gamma_abstract_eval(key: ShapedArray, a: ShapedArray, **_: Any) -> ShapedArray:
    return ShapedArray(a.shape, a.dtype)


random_gamma_p = _host_loop_primitive("random_gamma", _random_gamma_impl,
                                      _random_gamma_abstract_eval)
# Under jit, the loops lower into the graph (JAX's lower_fun).
lowering.register_lowering(random_gamma_p, lambda ctx, key, a, **params: lowering.inline_jaxpr(
    ctx.builder, _gamma_jaxpr(tuple(ctx.avals_in), tuple(sorted(params.items()))), [key, a])[0])


@functools.lru_cache(maxsize=None)
def _gamma_jaxpr(avals: tuple, params: tuple) -> Any:
    return trace_to_jaxpr(lambda k, a: [_random_gamma_composition(k, a, **dict(params))], avals)


def _gamma_grad(sample: Any, a: Any, *, log_space: bool, partitionable: bool) -> Any:
    if log_space:
        # d[log(sample)] = d[sample] / sample, with exp(log_sample) kept off zero.
        x = lax.exp(sample)
        x = lax.select(lax.eq(x, lax.full_like(x, 0)),
                       lax.full_like(x, dtypes.finfo(x.dtype).tiny), x)
        return lax.div(random_gamma_grad(a, x), x)
    return random_gamma_grad(a, sample)


ad.defjvp2(random_gamma_p, None,
           lambda t, ans, key, a, **params: lax.mul(t, _gamma_grad(ans, a, **params)))


# ----------------------------------------------------------------------------- poisson

_POISSON_STEPS = 4


def _still_running(pending: Any) -> Any:
    """JAX's loop condition of one key's lanes (any lane pending), broadcast back to them."""
    return jnp.broadcast_to(jnp.any(pending), pending.shape)


def _knuth_steps(state: tuple[Any, ...], lam: Any, steps: int, partitionable: bool) -> tuple:
    """``steps`` trips of JAX's ``_poisson_knuth`` loop for one key."""
    rng, k, log_prod = state
    for _ in range(steps):
        keys = prng.split_data(rng, (2,), partitionable)
        rng, subkey = keys[0], keys[1]
        k = lax.select(lax.gt(log_prod, lax.neg(lam)), lax.add(k, _const(k, 1)), k)
        u = _uniform(subkey, 0., 1., lam.shape, np.dtype(np.float32), partitionable)
        log_prod = lax.add(log_prod, _log(u))
    return rng, k, log_prod


def _rejection_constants(lam: Any) -> tuple[Any, ...]:
    log_lam = _log(lam)
    # XLA:CPU contracts these multiply-adds (and those below) into fused ones.
    b = _fma(lax.sqrt(lam), _const(lam, 2.53), _const(lam, 0.931))
    a = _fma(b, _const(lam, 0.02483), _const(lam, -0.059))
    inv_alpha = lax.add(_const(lam, 1.1239), lax.div(_const(lam, 1.1328),
                                                     lax.sub(b, _const(lam, 3.4))))
    v_r = lax.sub(_const(lam, 0.9277), lax.div(_const(lam, 3.6224), lax.sub(b, _const(lam, 2))))
    return log_lam, b, a, inv_alpha, v_r


def _poisson_rejection_steps(state: tuple[Any, ...], lam: Any, steps: int,
                             partitionable: bool) -> tuple:
    """``steps`` trips of JAX's ``_poisson_rejection`` loop for one key; a trip after the
    loop's condition turned false changes nothing."""
    key, k_out, accepted = state
    log_lam, b, a, inv_alpha, v_r = _rejection_constants(lam)
    dtype = np.dtype(lam.dtype)
    for _ in range(steps):
        running = _still_running(lax.bitwise_not(accepted))
        keys = prng.split_data(key, (3,), partitionable)
        key = keys[0]
        u = lax.sub(_uniform(keys[1], 0., 1., lam.shape, dtype, partitionable), _const(lam, 0.5))
        v = _uniform(keys[2], 0., 1., lam.shape, dtype, partitionable)
        u_shifted = lax.sub(_const(u, 0.5), lax.abs(u))
        w = lax.add(lax.div(lax.mul(_const(a, 2), a), u_shifted), b)
        k = lax.floor(lax.add(_fma(w, u, lam), _const(lam, 0.43)))
        s = _log(lax.div(lax.mul(v, inv_alpha),
                         lax.add(lax.div(a, lax.mul(u_shifted, u_shifted)), b)))
        t = lax.sub(_fma(k, log_lam, lax.neg(lam)), lax.lgamma(lax.add(k, _const(k, 1))))
        accept1 = lax.bitwise_and(lax.ge(u_shifted, _const(u, 0.07)), lax.le(v, v_r))
        reject = lax.bitwise_or(lax.lt(k, _const(k, 0)), lax.bitwise_and(
            lax.lt(u_shifted, _const(u, 0.013)), lax.gt(v, u_shifted)))
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, t)))
        accept = lax.bitwise_and(accept, running)
        k_out = lax.select(accept, k, k_out)
        accepted = lax.bitwise_or(accepted, accept)
    return key, k_out, accepted


def _per_key(fun: Any, state: tuple[Any, ...], *params: Any) -> tuple[Any, ...]:
    """``fun(state, *params)`` for each key of a leading batch axis."""
    return vmap(fun)(state, *params)


def _poisson_setup(key: Any, lam: Any, partitionable: bool) -> tuple[Any, ...]:
    keys = _flat_keys(key)
    nb = keys.shape[0]
    lam = jnp.reshape(lam, (nb, -1))
    use_knuth = lax.bitwise_or(lax.ne(lam, lam), lax.lt(lam, _const(lam, 10)))
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0))
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    knuth = (keys, jnp.zeros(lam.shape, np.int32), jnp.zeros(lam.shape, np.float32))
    rejection = (keys, lax.full_like(lam, -1), jnp.zeros(lam.shape, bool))
    return use_knuth, lam_knuth, lam_rejection, knuth, rejection


_poisson_setup_jit = jit(_poisson_setup, static_argnums=(2,))
_knuth_jit = jit(lambda s, lam, steps, partitionable: _per_key(
    lambda s_, l_: _knuth_steps(s_, l_, steps, partitionable), s, lam), static_argnums=(2, 3))
_poisson_rejection_jit = jit(lambda s, lam, steps, partitionable: _per_key(
    lambda s_, l_: _poisson_rejection_steps(s_, l_, steps, partitionable), s, lam),
    static_argnums=(2, 3))


def _poisson_finish(lam: Any, use_knuth: Any, knuth_k: Any, rejection_k: Any,
                    dtype: np.dtype) -> Any:
    knuth = lax.convert_element_type(lax.sub(knuth_k, _const(knuth_k, 1)), dtype)
    result = lax.select(use_knuth, knuth, lax.convert_element_type(rejection_k, dtype))
    result = lax.select(lax.eq(lam, _const(lam, 0)), jnp.zeros_like(result), result)
    return result


_poisson_finish_jit = jit(_poisson_finish, static_argnums=(4,))


def _random_poisson_impl(key: Any, lam: Any, *, dtype: np.dtype, partitionable: bool) -> Any:
    use_knuth, lam_knuth, lam_rejection, knuth, rejection = _poisson_setup_jit(key, lam,
                                                                                partitionable)
    knuth = while_any(lambda s: _knuth_jit(s, lam_knuth, _POISSON_STEPS, partitionable), knuth,
                      lambda s: lax.gt(s[2], lax.neg(lam_knuth)))
    rejection = while_any(
        lambda s: _poisson_rejection_jit(s, lam_rejection, _POISSON_STEPS, partitionable),
        rejection, lambda s: lax.bitwise_not(s[2]))
    out = _poisson_finish_jit(jnp.reshape(lam, use_knuth.shape), use_knuth, knuth[1],
                              rejection[1], dtype)
    return jnp.reshape(out, lam.shape)


random_poisson_p = _host_loop_primitive(
    "random_poisson", _random_poisson_impl,
    lambda key, lam, *, dtype, partitionable: ShapedArray(lam.shape, dtype))
ad.defjvp_zero(random_poisson_p)


# ----------------------------------------------------------------------------- binomial

_BINOMIAL_STEPS = 4

_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k: Any) -> Any:
    use_tail_values = lax.le(k, _const(k, 9))
    k = lax.clamp(_const(k, 0.0), k, _const(k, 9.0))
    kp1sq = lax.mul(lax.add(k, _const(k, 1)), lax.add(k, _const(k, 1)))
    approx = lax.div(lax.sub(_const(k, 1.0 / 12), lax.div(
        lax.sub(_const(k, 1.0 / 360), lax.div(_const(k, 1.0 / 1260), kp1sq)), kp1sq)),
        lax.add(k, _const(k, 1)))
    table = jnp.asarray(np.array(_STIRLING_TAIL, k.dtype))
    tail = table[lax.convert_element_type(lax.floor(k), np.int32)]
    return lax.select(use_tail_values, tail, approx)


def _inversion_steps(state: tuple[Any, ...], count: Any, prob: Any, steps: int,
                     partitionable: bool) -> tuple:
    """``steps`` trips of JAX's ``_binomial_inversion`` loop for one key."""
    key, num_geom, geom_sum = state
    log1minusprob = _log1p(lax.neg(prob))
    for _ in range(steps):
        keys = prng.split_data(key, (2,), partitionable)
        subkey, key = keys[0], keys[1]
        num_geom = lax.select(lax.le(geom_sum, count), lax.add(num_geom, _const(num_geom, 1)),
                              num_geom)
        u = _uniform(subkey, 0., 1., prob.shape, np.dtype(prob.dtype), partitionable)
        geom = lax.ceil(lax.div(_log(u), log1minusprob))
        geom_sum = lax.add(geom_sum, geom)
    return key, num_geom, geom_sum


def _btrs_steps(state: tuple[Any, ...], count: Any, prob: Any, steps: int,
                partitionable: bool) -> tuple:
    """``steps`` trips of JAX's ``_btrs`` loop for one key; a trip after the loop's
    condition turned false changes nothing."""
    key, k_out, accepted = state
    dtype = np.dtype(prob.dtype)
    c_ = lambda v: _const(prob, v)  # noqa: E731
    stddev = lax.sqrt(lax.mul(lax.mul(count, prob), lax.sub(c_(1), prob)))
    b = _fma(stddev, c_(2.53), c_(1.15))
    a = _fma(prob, c_(0.01), _fma(b, c_(0.0248), c_(-0.0873)))
    c = _fma(count, prob, c_(0.5))
    v_r = lax.sub(c_(0.92), lax.div(c_(4.2), b))
    r = lax.div(prob, lax.sub(c_(1), prob))
    alpha = lax.mul(lax.add(c_(2.83), lax.div(c_(5.1), b)), stddev)
    m = lax.floor(lax.mul(lax.add(count, c_(1)), prob))
    for _ in range(steps):
        running = _still_running(lax.bitwise_not(accepted))
        keys = prng.split_data(key, (3,), partitionable)
        key = keys[0]
        u = _uniform(keys[1], 0., 1., prob.shape, dtype, partitionable)
        v = _uniform(keys[2], 0., 1., prob.shape, dtype, partitionable)
        u = lax.sub(u, c_(0.5))
        us = lax.sub(c_(0.5), lax.abs(u))
        accept1 = lax.bitwise_and(lax.ge(us, c_(0.07)), lax.le(v, v_r))
        k = lax.floor(_fma(lax.add(lax.div(lax.mul(c_(2), a), us), b), u, c))
        reject = lax.bitwise_or(lax.lt(k, c_(0)), lax.gt(k, count))
        v = _log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        cmk1 = lax.add(lax.sub(count, k), c_(1))
        term_m = _log(lax.div(lax.add(m, c_(1)), lax.mul(r, lax.add(lax.sub(count, m), c_(1)))))
        term_n = _log(lax.div(lax.add(lax.sub(count, m), c_(1)), cmk1))
        term_k = _log(lax.div(lax.mul(r, cmk1), lax.add(k, c_(1))))
        ub = _fma(lax.add(m, c_(0.5)), term_m, lax.mul(lax.add(count, c_(1)), term_n))
        ub = lax.add(_fma(lax.add(k, c_(0.5)), term_k, ub), _stirling_approx_tail(m))
        ub = lax.sub(lax.sub(lax.add(ub, _stirling_approx_tail(lax.sub(count, m))),
                             _stirling_approx_tail(k)), _stirling_approx_tail(lax.sub(count, k)))
        accept2 = lax.le(v, ub)
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), accept2))
        accept = lax.bitwise_and(accept, running)
        k_out = lax.select(accept, k, k_out)
        accepted = lax.bitwise_or(accepted, accept)
    return key, k_out, accepted


def _binomial_setup(key: Any, count: Any, prob: Any) -> tuple[Any, ...]:
    keys = _flat_keys(key)
    nb = keys.shape[0]
    count = jnp.reshape(count, (nb, -1))
    prob = jnp.reshape(prob, (nb, -1))
    p_lt_half = lax.lt(prob, _const(prob, 0.5))
    q = lax.select(p_lt_half, prob, lax.sub(_const(prob, 1), prob))
    count_nan_or_neg = lax.bitwise_or(lax.ne(count, count), lax.lt(count, _const(count, 0)))
    count_inf = lax.eq(lax.abs(count), _const(count, np.inf))
    q_is_nan = lax.ne(q, q)
    q_l_0 = lax.lt(q, _const(q, 0))
    q = lax.select(lax.bitwise_or(q_is_nan, q_l_0), lax.full_like(q, 0.01), q)
    use_inversion = lax.bitwise_or(count_nan_or_neg,
                                   lax.le(lax.mul(count, q), _const(count, 10)))
    count = lax.floor(count)
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    zeros = jnp.zeros_like(prob)
    inversion = (keys, zeros, zeros)
    btrs = (keys, lax.full_like(prob, -1), jnp.zeros(prob.shape, bool))
    flags = (p_lt_half, count_nan_or_neg, count_inf, q_is_nan, q_l_0, use_inversion)
    return flags, count, count_inv, q, count_btrs, q_btrs, inversion, btrs


def _binomial_finish(flags: tuple[Any, ...], count: Any, num_geom: Any, btrs_k: Any,
                     dtype: np.dtype) -> Any:
    p_lt_half, count_nan_or_neg, count_inf, q_is_nan, q_l_0, use_inversion = flags
    inversion = lax.convert_element_type(lax.sub(num_geom, _const(num_geom, 1)), dtype)
    samples = lax.select(use_inversion, inversion, lax.convert_element_type(btrs_k, dtype))
    invalid = lax.bitwise_or(lax.bitwise_or(q_l_0, q_is_nan), count_nan_or_neg)
    samples = lax.select(invalid, lax.full_like(samples, np.nan), samples)
    samples = lax.select(lax.bitwise_and(count_inf, lax.bitwise_not(invalid)),
                         lax.full_like(samples, np.inf), samples)
    keep = lax.bitwise_or(lax.bitwise_or(p_lt_half, count_nan_or_neg),
                          lax.bitwise_or(q_is_nan, count_inf))
    return lax.select(keep, samples, lax.sub(lax.convert_element_type(count, dtype), samples))


_binomial_setup_jit = jit(_binomial_setup)
_inversion_jit = jit(lambda s, count, prob, steps, partitionable: _per_key(
    lambda s_, n_, p_: _inversion_steps(s_, n_, p_, steps, partitionable), s, count, prob),
    static_argnums=(3, 4))
_btrs_jit = jit(lambda s, count, prob, steps, partitionable: _per_key(
    lambda s_, n_, p_: _btrs_steps(s_, n_, p_, steps, partitionable), s, count, prob),
    static_argnums=(3, 4))
_binomial_finish_jit = jit(_binomial_finish, static_argnums=(4,))


def _random_binomial_impl(key: Any, count: Any, prob: Any, *, dtype: np.dtype,
                          partitionable: bool) -> Any:
    (flags, count_f, count_inv, q, count_btrs, q_btrs, inversion,
     btrs) = _binomial_setup_jit(key, count, prob)
    inversion = while_any(
        lambda s: _inversion_jit(s, count_inv, q, _BINOMIAL_STEPS, partitionable), inversion,
        lambda s: lax.le(s[2], count_inv))
    btrs = while_any(lambda s: _btrs_jit(s, count_btrs, q_btrs, _BINOMIAL_STEPS, partitionable),
                     btrs, lambda s: lax.bitwise_not(s[2]))
    out = _binomial_finish_jit(flags, count_f, inversion[1], btrs[1], dtype)
    return jnp.reshape(out, prob.shape)


random_binomial_p = _host_loop_primitive(
    "random_binomial", _random_binomial_impl,
    lambda key, count, prob, *, dtype, partitionable: ShapedArray(prob.shape, dtype))
ad.defjvp_zero(random_binomial_p)

# The primitives without a lowering rule: they run on the host (JAX's loops, per key, written
# as lax.while_loops, are still to come).
HOST_LOOP_PRIMITIVES = (random_poisson_p, random_binomial_p)
