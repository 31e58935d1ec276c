"""lane_loop.lane_while (a batched while loop that compacts its pending lanes) against the
plain batched loop it stands for, and the PRNG helpers the rejection samplers draw lanes
with (prng.random_bits_at, split_words, split_lanes, lane_bits) against the whole-shape
draws they equal."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla._src import prng
from tinyxla._src.lane_loop import lane_while


def _collatz_lanes(n):
    """Per lane: Collatz steps of a start value, counted (a trip count that varies a lot
    from lane to lane), plus a running sum of a shared counter, which checks that every
    lane sees the shared state of its own trip."""
    start = (np.arange(n, dtype=np.int64) * 7919) % 100003 + 1
    return jnp.asarray(start, jnp.int32)


def _body(shared, lanes):
    x, steps, acc = lanes
    x = jnp.where(x % 2 == 0, x // 2, 3 * x + 1)
    return x, steps + 1, acc + shared


def _reference(start):
    def one(x):
        return jax.lax.while_loop(lambda c: c[0] != 1, lambda c: (
            jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1, c[2] + c[3],
            c[3] + 1), (x, 0, 0, 0))
    x, steps, acc, _ = jax.vmap(one)(start)
    return steps, acc


@pytest.mark.parametrize("n", [100, 20000])
def test_lane_while_equals_batched_loop(n):
    start = _collatz_lanes(n)
    zeros = jnp.zeros(n, jnp.int32)

    def run(start):
        _, steps, acc = lane_while(lambda _, lanes: lanes[0] != 1, _body, (start, zeros, zeros),
                                   jnp.int32(0), lambda s: s + 1)
        return steps, acc

    want = _reference(start)
    for got in (run(start), jax.jit(run)(start)):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_lane_while_with_nothing_pending():
    x = jnp.arange(30000, dtype=jnp.float32)
    (out,) = jax.jit(lambda x: lane_while(lambda _, lanes: lanes[0] < 0,
                                          lambda _, lanes: (lanes[0] - 1,), (x,)))(x)
    np.testing.assert_array_equal(out, x)


@pytest.fixture
def x64():
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("size,bits", [(7, 32), (8, 32), (7, 64), (10, 64)])
def test_random_bits_at_equals_the_whole_draw(x64, partitionable, size, bits):
    key = prng.seed_data(jnp.asarray(np.uint32(42)))
    whole = np.asarray(prng.random_bits_data(key, bits, (size,), partitionable))
    positions = jnp.asarray(np.array([size - 1, 0, 3, 3, size // 2], np.uint32))
    got = prng.random_bits_at(key[0], key[1], positions, size, bits, partitionable)
    np.testing.assert_array_equal(got, whole[np.asarray(positions)])


@pytest.mark.parametrize("partitionable", [True, False])
def test_lane_key_helpers_equal_per_key_draws(x64, partitionable):
    keys = prng.split_data(prng.seed_data(jnp.asarray(np.uint32(3))), (5,), partitionable)
    k1, k2 = keys[:, 0], keys[:, 1]
    w1, w2 = prng.split_words(keys[0], 6, partitionable)
    np.testing.assert_array_equal(np.stack([w1, w2], -1),
                                  prng.split_data(keys[0], (6,), partitionable))
    for i, (s1, s2) in enumerate(prng.split_lanes(k1, k2, 3, partitionable)):
        for lane in range(5):
            want = prng.split_data(keys[lane], (3,), partitionable)[i]
            np.testing.assert_array_equal([s1[lane], s2[lane]], want)
    for width in (8, 16, 32, 64):
        got = prng.lane_bits(k1, k2, width, partitionable)
        want = [prng.random_bits_data(keys[lane], width, (), partitionable) for lane in range(5)]
        np.testing.assert_array_equal(got, np.array(want))
