"""The samplers of ``jax.random`` whose algorithms loop until every lane is accepted: gamma
(Marsaglia and Tsang's rejection method, per lane), poisson (Knuth's product of uniforms
below rate 10, Hormann's transformed rejection above) and binomial (geometric inversion
below mean 10, BTRS above), each a primitive following JAX 0.10's loops step for step
(float32 poisson and binomial samples equal JAX's bit for bit, and gamma's at alpha >= 1
and in log space: below 1 the boost goes through ``pow``).

JAX runs gamma as ``_gamma_one``'s two nested ``lax.while_loop``s vmapped over the lanes,
and poisson and binomial as one ``while_loop`` per key over the whole shape (a key split
per trip, a uniform of the shape drawn from it). Here each loop is a ``lane_while``: the
same batched loop, whose lanes are independent, compacted as they finish, so that a
finished lane stops costing (the slowest of 10^6 lanes needs several times the trips of a
typical one). A lane's uniforms are the ones JAX's whole-shape draw gives at its position
(``prng.random_bits_at``), so the samples are JAX's. Lanes whose result is discarded
(the rejection loop's lanes that use Knuth's method, and the other way round) are
finished from the start. The primitives' impls are the compositions under ``jit``, and
under ``jit`` they lower into the graph (JAX's ``lower_fun``).

vmap over keys batches them (the compositions take leading batch axes on the key and the
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
from typing import Any, Callable

import numpy as np

from tinyxla._src import dtypes, prng, xla_cpu_math
from tinyxla._src.api import jit
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters.partial_eval import trace_to_jaxpr
from tinyxla._src.lane_loop import lane_while
from tinyxla._src.lax import lax
from tinyxla._src.lax.control_flow import fori_loop
from tinyxla._src.lax.special import random_gamma_grad
from tinyxla._src.random import (_uniform, normal_from_bits, uniform_bit_width,
                                 uniform_from_bits, unit_floats)
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


# ----------------------------------------------------------------------------- keys and lanes

# Keys are held as their two words, two uint32 arrays (per lane, or per batch key): the
# hashes of many keys are then elementwise over plain arrays.
Keys = tuple[Any, Any]


def _flat_keys(key: Any) -> Keys:
    """The key data with every batch axis flattened, as two uint32[B] arrays."""
    data = jnp.reshape(key, (-1, 2))
    return data[:, 0], data[:, 1]


def _split(keys: Keys, num: int, partitionable: bool) -> list[Keys]:
    """JAX's ``split(key, num)`` of each key."""
    return prng.split_lanes(*keys, num, partitionable)


def _uniform_lanes(keys: Keys, dtype: np.dtype, partitionable: bool) -> Any:
    """One uniform in [0, 1) per key (JAX's ``uniform(key, ())``, vmapped)."""
    bits = prng.lane_bits(*keys, uniform_bit_width(dtype), partitionable)
    return uniform_from_bits(bits, np.array(0, dtype), np.array(1, dtype), dtype)


def _normal_lanes(keys: Keys, dtype: np.dtype, partitionable: bool) -> Any:
    """One standard normal per key (JAX's ``normal(key, ())``, vmapped)."""
    return normal_from_bits(prng.lane_bits(*keys, uniform_bit_width(dtype), partitionable),
                            dtype)


def _uniform_at(keys: Keys, lane: Any, per: int, dtype: np.dtype, partitionable: bool) -> Any:
    """``uniform(keys[b], (per,), dtype)[j]`` for each lane ``b * per + j``: the uniform
    JAX's loop over key ``b``'s shape gives at that lane, hashed for that lane only."""
    k1, k2 = keys
    nbits = dtypes.finfo(dtype).bits
    if nbits not in (32, 64):  # narrow floats pack several per word: draw the whole shape
        full = vmap(lambda k: _uniform(k, 0., 1., (per,), dtype, partitionable))(
            jnp.stack([k1, k2], axis=-1))
        return jnp.take(jnp.reshape(full, (-1,)), lane)
    if k1.shape[0] == 1:
        k1, k2 = lax.reshape(k1, ()), lax.reshape(k2, ())
        position = lane
    else:
        batch = lax.div(lane, np.uint32(per))
        k1, k2 = jnp.take(k1, batch), jnp.take(k2, batch)
        position = lax.rem(lane, np.uint32(per))
    bits = prng.random_bits_at(k1, k2, position, per, nbits, partitionable)
    return unit_floats(bits, nbits, dtype)


def _composed_primitive(name: str, composition: Callable[..., Any],
                        abstract_eval: Callable[..., ShapedArray],
                        params: tuple[str, ...]) -> Primitive:
    """A primitive whose impl is ``composition`` under ``jit`` and which lowers to its
    traced jaxpr (JAX's ``lower_fun``). Its batching rule puts every batch axis in front
    (the compositions take leading batch axes on all operands)."""
    prim = Primitive(name)
    composed = jit(composition, static_argnames=params)
    prim.def_impl(lambda *args, **kw: composed(*args, **kw))
    prim.def_abstract_eval(abstract_eval)

    @functools.lru_cache(maxsize=None)
    def jaxpr(avals: tuple, kw: tuple) -> Any:
        return trace_to_jaxpr(lambda *args: [composition(*args, **dict(kw))], avals)

    lowering.register_lowering(prim, lambda ctx, *args, **kw: lowering.inline_jaxpr(
        ctx.builder, jaxpr(tuple(ctx.avals_in), tuple(sorted(kw.items()))), list(args))[0])

    def batch_rule(vals: Any, dims: Any, **kw: Any) -> tuple[Any, int]:
        size = batching.batch_size(vals, dims)
        vals = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
        return prim.bind(*vals, **kw), 0

    batching.primitive_batchers[prim] = batch_rule
    return prim


# ----------------------------------------------------------------------------- gamma

def _gamma_lanes(keys: Any, alpha: Any, log_space: bool, partitionable: bool) -> Any:
    """JAX's ``_gamma_one`` on every lane (one key and one ``alpha`` each): Marsaglia and
    Tsang's rejection loop, with an inner loop that redraws the normal while v <= 0."""
    dtype = np.dtype(alpha.dtype)
    zeros, ones = lax.full_like(alpha, 0), lax.full_like(alpha, 1)
    one = _const(alpha, 1)
    # Gamma(alpha) = Gamma(alpha + 1) * U**(1/alpha) for alpha < 1.
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, _const(alpha, 1. / 3.))
    # JAX divides (1/3) / sqrt(d); XLA rewrites that into (1/3) * rsqrt(d), and lax.rsqrt is
    # XLA:CPU's (the CPU's estimate and one Newton step): c is JAX's bit for bit.
    c = lax.mul(_const(alpha, 1. / 3.), lax.rsqrt(d))

    def rejected(_: Any, lanes: tuple) -> Any:  # JAX's _cond_fn
        _, _, X, V, U, d, _ = lanes
        squeeze = lax.ge(U, _fma(lax.mul(X, X), _const(X, -0.0331), one))
        log_test = lax.ge(_log(U), lax.add(lax.mul(X, _const(X, 0.5)),
                                           lax.mul(d, lax.add(lax.sub(one, V), _log(V)))))
        return lax.bitwise_and(squeeze, log_test)

    def next_kxv(_: Any, lanes: tuple) -> tuple:
        k1, k2, _, _, c = lanes
        (k1, k2), subkey = _split((k1, k2), 2, partitionable)
        x = _normal_lanes(subkey, dtype, partitionable)
        return k1, k2, x, _fma(x, c, one), c

    def draw(_: Any, lanes: tuple) -> tuple:
        k1, k2, _, _, _, d, c = lanes
        (k1, k2), x_key, U_key = _split((k1, k2), 3, partitionable)
        _, _, x, v, _ = lane_while(lambda _, kxvc: lax.le(kxvc[3], _const(alpha, 0)), next_kxv,
                                   (*x_key, lax.full_like(d, 0), lax.full_like(d, -1), c))
        U = _uniform_lanes(U_key, dtype, partitionable)
        return k1, k2, lax.mul(x, x), lax.mul(lax.mul(v, v), v), U, d, c

    key, subkey = _split(keys, 2, partitionable)
    _, _, _, V, _, _, _ = lane_while(rejected, draw,
                                     (*key, zeros, ones, lax.full_like(alpha, 2), d, c))
    u = _uniform_lanes(subkey, dtype, partitionable)
    if log_space:
        # log(Uniform) as JAX takes it: -exponential() = log1p(-u).
        log_samples = _log1p(lax.neg(u))
        log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_samples, zeros)),
                               zeros, lax.mul(log_samples, lax.div(ones, alpha_orig)))
        return lax.add(lax.add(_log(d), _log(V)), log_boost)
    boost = lax.select(boost_mask, ones, lax.pow(lax.sub(ones, u), lax.div(ones, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


def _random_gamma_composition(key: Any, a: Any, *, log_space: bool,
                              partitionable: bool) -> Any:
    """JAX's ``_gamma_impl``: one key per element of ``a`` (``split(key, a[batch].size)`` per
    batch key), then ``_gamma_one`` on every lane."""
    nb = math.prod(key.shape[:-1])
    per = math.prod(a.shape[key.ndim - 1:])
    keys = vmap(lambda k: prng.split_words(k, per, partitionable))(jnp.reshape(key, (nb, 2)))
    keys = tuple(jnp.reshape(k, (nb * per,)) for k in keys)
    alphas = jnp.reshape(a, (-1,))
    if not alphas.shape[0]:
        return a
    return jnp.reshape(_gamma_lanes(keys, alphas, log_space, partitionable), a.shape)


random_gamma_p = _composed_primitive(
    "random_gamma", _random_gamma_composition,
    lambda key, a, **_: ShapedArray(a.shape, a.dtype), ("log_space", "partitionable"))


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


# ----------------------------------------------------------------------------- accept-reject loops

def _last_acceptance(draw: Callable[[Any, tuple], tuple[Any, Any]], lanes: tuple, k_init: Any,
                     finished: Any, keys: Any, step: Callable[[Any], Any], per: int) -> Any:
    """The ``k_out`` of JAX's accept-reject loops over a key's shape (``_poisson_rejection``,
    ``_btrs``), whose body draws ``k, accept = draw(key, lanes)`` for every lane and sets
    ``k_out = select(accept, k, k_out)`` until every lane of the key has accepted once.

    A lane accepted early is overwritten by each later trip on which it accepts, so its
    sample is its draw at the last accepting trip before the key's loop ends, not the
    first. Both passes are ``lane_while``s: forwards, each lane until its first
    acceptance (the key's trip count is the latest of them); backwards from the key's last
    trip, each lane until a trip on which it accepts. Lanes ``finished`` from the start
    keep ``k_init``."""
    nb = keys[0].shape[0]
    batch = lax.div(lax.iota(np.int32, nb * per), np.int32(per))

    def forward(shared: tuple, state: tuple) -> tuple:
        rng, trip = shared
        *lanes, k_out, _, first = state
        k, accept = draw(rng, tuple(lanes))
        return (*lanes, lax.select(accept, k, k_out), accept, lax.full_like(first, trip))

    state = (*lanes, k_init, finished, lax.full_like(batch, -1))
    *lanes, k_out, _, first = lane_while(
        lambda _, s: lax.bitwise_not(s[-2]), forward, state, (keys, np.int32(0)),
        lambda shared: (step(shared[0]), lax.add(shared[1], np.int32(1))))
    last = lax.reduce_max(jnp.reshape(first, (nb, per)), (1,))  # each key's last trip
    lane_last = jnp.take(last, batch)

    def keys_at(trips: Any) -> Any:
        """Each key after ``trips`` (per key) splits."""
        return fori_loop(0, lax.reduce_max(trips, (0,)), lambda i, k: tuple(
            lax.select(lax.lt(i, trips), new, old) for new, old in zip(step(k), k)), keys)

    def backward(back: Any, state: tuple) -> tuple:
        *lanes, k_out, _, first, lane_last = state
        k, accept = draw(keys_at(lax.sub(last, back)), tuple(lanes))
        return (*lanes, lax.select(accept, k, k_out), accept, first, lane_last)

    def searching(back: Any, state: tuple) -> Any:
        found, first, lane_last = state[-3:]
        return lax.bitwise_and(lax.bitwise_not(found), lax.gt(lax.sub(lane_last, back), first))

    state = (*lanes, k_out, lax.bitwise_or(finished, lax.eq(first, lane_last)), first,
             lane_last)
    return lane_while(searching, backward, state, np.int32(0),
                      lambda back: lax.add(back, np.int32(1)))[-4]


# ----------------------------------------------------------------------------- poisson

def _lane_ids(lam: Any) -> Any:
    return lax.iota(np.uint32, lam.shape[0])


def _poisson_knuth(keys: Any, lam: Any, per: int, partitionable: bool) -> Any:
    """JAX's ``_poisson_knuth`` loop (per key, over its ``per`` lanes): k, one more than
    the sample."""
    f32 = np.dtype(np.float32)

    def body(rng: Any, lanes: tuple) -> tuple:
        lane, lam, k, log_prod = lanes
        _, subkey = _split(rng, 2, partitionable)
        k = lax.select(lax.gt(log_prod, lax.neg(lam)), lax.add(k, _const(k, 1)), k)
        u = _uniform_at(subkey, lane, per, f32, partitionable)
        return lane, lam, k, lax.add(log_prod, _log(u))

    lanes = (_lane_ids(lam), lam, lax.full(lam.shape, 0, np.int32),
             lax.full(lam.shape, 0, np.float32))
    return lane_while(lambda _, s: lax.gt(s[3], lax.neg(s[1])), body, lanes, keys,
                      lambda rng: _split(rng, 2, partitionable)[0])[2]


def _rejection_constants(lam: Any) -> tuple[Any, ...]:
    log_lam = _log(lam)
    # XLA:CPU contracts these multiply-adds (and those below) into fused ones.
    b = _fma(lax.sqrt(lam), _const(lam, 2.53), _const(lam, 0.931))
    a = _fma(b, _const(lam, 0.02483), _const(lam, -0.059))
    inv_alpha = lax.add(_const(lam, 1.1239), lax.div(_const(lam, 1.1328),
                                                     lax.sub(b, _const(lam, 3.4))))
    v_r = lax.sub(_const(lam, 0.9277), lax.div(_const(lam, 3.6224), lax.sub(b, _const(lam, 2))))
    return log_lam, b, a, inv_alpha, v_r


def _poisson_rejection(keys: Any, lam: Any, finished: Any, per: int,
                       partitionable: bool) -> Any:
    """JAX's ``_poisson_rejection`` loop (per key, over its ``per`` lanes); lanes
    ``finished`` from the start keep -1."""
    dtype = np.dtype(lam.dtype)

    def draw(rng: Any, lanes: tuple) -> tuple[Any, Any]:
        lane, lam, log_lam, b, a, inv_alpha, v_r = lanes
        _, subkey_0, subkey_1 = _split(rng, 3, partitionable)
        u = lax.sub(_uniform_at(subkey_0, lane, per, dtype, partitionable), _const(lam, 0.5))
        v = _uniform_at(subkey_1, lane, per, dtype, partitionable)
        u_shifted = lax.sub(_const(u, 0.5), lax.abs(u))
        w = lax.add(lax.div(lax.mul(_const(a, 2), a), u_shifted), b)
        k = lax.floor(lax.add(_fma(w, u, lam), _const(lam, 0.43)))
        s = _log(lax.div(lax.mul(v, inv_alpha),
                         lax.add(lax.div(a, lax.mul(u_shifted, u_shifted)), b)))
        t = lax.sub(_fma(k, log_lam, lax.neg(lam)), lax.lgamma(lax.add(k, _const(k, 1))))
        accept1 = lax.bitwise_and(lax.ge(u_shifted, _const(u, 0.07)), lax.le(v, v_r))
        reject = lax.bitwise_or(lax.lt(k, _const(k, 0)), lax.bitwise_and(
            lax.lt(u_shifted, _const(u, 0.013)), lax.gt(v, u_shifted)))
        return k, lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, t)))

    lanes = (_lane_ids(lam), lam, *_rejection_constants(lam))
    return _last_acceptance(draw, lanes, lax.full_like(lam, -1), finished, keys,
                            lambda rng: _split(rng, 3, partitionable)[0], per)


def _random_poisson_composition(key: Any, lam: Any, *, dtype: np.dtype,
                                partitionable: bool) -> Any:
    """JAX's ``_poisson``: Knuth's loop for the lanes of rate below 10 (or NaN), the
    rejection loop for the others, one key per leading batch index of ``lam``."""
    keys = _flat_keys(key)
    if not math.prod(lam.shape):
        return lax.full(lam.shape, 0, dtype)
    per = math.prod(lam.shape) // keys[0].shape[0]
    lam_flat = jnp.reshape(lam, (-1,))
    use_knuth = lax.bitwise_or(lax.ne(lam_flat, lam_flat), lax.lt(lam_flat, _const(lam, 10)))
    knuth_k = _poisson_knuth(keys, lax.select(use_knuth, lam_flat, lax.full_like(lam_flat, 0)),
                             per, partitionable)
    rejection_k = _poisson_rejection(
        keys, lax.select(use_knuth, lax.full_like(lam_flat, 1e5), lam_flat), use_knuth, per,
        partitionable)
    knuth = lax.convert_element_type(lax.sub(knuth_k, _const(knuth_k, 1)), dtype)
    result = lax.select(use_knuth, knuth, lax.convert_element_type(rejection_k, dtype))
    result = lax.select(lax.eq(lam_flat, _const(lam, 0)), lax.full_like(result, 0), result)
    return jnp.reshape(result, lam.shape)


random_poisson_p = _composed_primitive(
    "random_poisson", _random_poisson_composition,
    lambda key, lam, *, dtype, partitionable: ShapedArray(lam.shape, dtype),
    ("dtype", "partitionable"))
ad.defjvp_zero(random_poisson_p)


# ----------------------------------------------------------------------------- binomial

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


def _binomial_inversion(keys: Any, count: Any, prob: Any, per: int, partitionable: bool) -> Any:
    """JAX's ``_binomial_inversion`` loop (per key, over its ``per`` lanes): the number of
    geometric draws, one more than the sample."""
    dtype = np.dtype(prob.dtype)

    def body(rng: Any, lanes: tuple) -> tuple:
        lane, count, log1minusprob, num_geom, geom_sum = lanes
        subkey, _ = _split(rng, 2, partitionable)
        num_geom = lax.select(lax.le(geom_sum, count), lax.add(num_geom, _const(num_geom, 1)),
                              num_geom)
        u = _uniform_at(subkey, lane, per, dtype, partitionable)
        geom = lax.ceil(lax.div(_log(u), log1minusprob))
        return lane, count, log1minusprob, num_geom, lax.add(geom_sum, geom)

    zeros = lax.full_like(prob, 0)
    lanes = (_lane_ids(prob), count, _log1p(lax.neg(prob)), zeros, zeros)
    return lane_while(lambda _, s: lax.le(s[4], s[1]), body, lanes, keys,
                      lambda rng: _split(rng, 2, partitionable)[1])[3]


def _btrs(keys: Any, count: Any, prob: Any, finished: Any, per: int,
          partitionable: bool) -> Any:
    """JAX's ``_btrs`` loop (per key, over its ``per`` lanes); lanes ``finished`` from the
    start keep -1."""
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

    def draw(rng: Any, lanes: tuple) -> tuple[Any, Any]:
        lane, count, a, b, c, v_r, r, alpha, m = lanes
        _, subkey_0, subkey_1 = _split(rng, 3, partitionable)
        u = _uniform_at(subkey_0, lane, per, dtype, partitionable)
        v = _uniform_at(subkey_1, lane, per, dtype, partitionable)
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
        return k, lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(v, ub)))

    lanes = (_lane_ids(prob), count, a, b, c, v_r, r, alpha, m)
    return _last_acceptance(draw, lanes, lax.full_like(prob, -1), finished, keys,
                            lambda rng: _split(rng, 3, partitionable)[0], per)


def _random_binomial_composition(key: Any, count: Any, prob: Any, *, dtype: np.dtype,
                                 partitionable: bool) -> Any:
    """JAX's ``_binomial``: inversion for the lanes of mean at most 10 (or invalid count),
    BTRS for the others, one key per leading batch index of ``prob``."""
    keys = _flat_keys(key)
    shape = prob.shape
    if not math.prod(shape):
        return lax.full(shape, 0, dtype)
    per = math.prod(shape) // keys[0].shape[0]
    count = jnp.reshape(count, (-1,))
    prob = jnp.reshape(prob, (-1,))
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
    num_geom = _binomial_inversion(
        keys, lax.select(use_inversion, count, lax.full_like(count, 0)), q, per, partitionable)
    btrs_k = _btrs(keys, lax.select(use_inversion, lax.full_like(count, 1e4), count),
                   lax.select(use_inversion, lax.full_like(q, 0.5), q), use_inversion, per,
                   partitionable)
    inversion = lax.convert_element_type(lax.sub(num_geom, _const(num_geom, 1)), dtype)
    samples = lax.select(use_inversion, inversion, lax.convert_element_type(btrs_k, dtype))
    invalid = lax.bitwise_or(lax.bitwise_or(q_l_0, q_is_nan), count_nan_or_neg)
    samples = lax.select(invalid, lax.full_like(samples, np.nan), samples)
    samples = lax.select(lax.bitwise_and(count_inf, lax.bitwise_not(invalid)),
                         lax.full_like(samples, np.inf), samples)
    keep = lax.bitwise_or(lax.bitwise_or(p_lt_half, count_nan_or_neg),
                          lax.bitwise_or(q_is_nan, count_inf))
    samples = lax.select(keep, samples,
                         lax.sub(lax.convert_element_type(count, dtype), samples))
    return jnp.reshape(samples, shape)


random_binomial_p = _composed_primitive(
    "random_binomial", _random_binomial_composition,
    lambda key, count, prob, *, dtype, partitionable: ShapedArray(prob.shape, dtype),
    ("dtype", "partitionable"))
ad.defjvp_zero(random_binomial_p)
