"""Array's eager ``+``, ``-``, ``*`` fast path (numpy/eager_operators.py) against the general
operator path (``jnp.add`` / ``subtract`` / ``multiply``): the same values, dtypes, weak
types, committed devices and errors for every operand case, taken or not."""
import operator

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla._src.numpy import eager_operators

OPS = [(operator.add, jnp.add), (operator.sub, jnp.subtract), (operator.mul, jnp.multiply)]


def _arrays():
    return {
        "f32": jnp.arange(6, dtype=jnp.float32).reshape(2, 3) / 4,
        "f32 row": jnp.asarray([[1.5, -2.0, 3.25]], jnp.float32),
        "f32 0-d weak": jnp.asarray(2.5),
        "f16": jnp.asarray([1.5, 2.25], jnp.float16),
        "bf16": jnp.asarray([1.5, 2.25], jnp.bfloat16),
        "i32": jnp.arange(3, dtype=jnp.int32),
        "i8": jnp.asarray([1, -2, 127], jnp.int8),
        "u8": jnp.asarray([1, 2, 255], jnp.uint8),
        "bool": jnp.asarray([True, False, True]),
        "c64": jnp.asarray([1 + 2j, 3 - 1j], jnp.complex64),
    }


SCALARS = [1, -3, 2.5, 1e300, 2 ** 31, 2 ** 40, -(2 ** 31), True, 1 + 1j, np.float32(2.0)]


def _outcome(fn, *args):
    try:
        r = fn(*args)
    except Exception as e:  # compared by class and message
        return ("error", type(e), str(e))
    return ("ok", np.asarray(r).tolist(), r.dtype, r.weak_type, r._committed, r.shape)


def _same(fast, general):
    assert fast[0] == general[0], (fast, general)
    if fast[0] == "error":
        assert fast[1:] == general[1:]
    else:
        np.testing.assert_array_equal(np.asarray(fast[1]), np.asarray(general[1]))
        assert fast[2:] == general[2:]


@pytest.mark.parametrize("op, general", OPS)
def test_array_and_scalar_operands_match_the_general_path(op, general):
    for x in _arrays().values():
        for s in SCALARS:
            _same(_outcome(op, x, s), _outcome(general, x, s))
            _same(_outcome(op, s, x), _outcome(general, s, x))


@pytest.mark.parametrize("op, general", OPS)
def test_array_pairs_match_the_general_path(op, general):
    arrays = _arrays()
    for x in arrays.values():
        for y in arrays.values():
            _same(_outcome(op, x, y), _outcome(general, x, y))


def test_shape_errors_are_the_general_paths():
    a, b = jnp.ones((2, 3)), jnp.ones((3, 2))
    with pytest.raises(TypeError, match="add got incompatible shapes for broadcasting"):
        a + b
    _same(_outcome(operator.sub, a, b), _outcome(jnp.subtract, a, b))
    _same(_outcome(operator.mul, jnp.ones((2, 3)), jnp.ones(3)),
          _outcome(jnp.multiply, jnp.ones((2, 3)), jnp.ones(3)))


def test_committed_operands_and_devices():
    devs = jax.devices()
    x = jax.device_put(jnp.ones(3), devs[-1])
    y = jnp.ones(3) * 2
    for fast, general in ((x + 1, jnp.add(x, 1)), (y + x, jnp.add(y, x)), (x * x, x * x)):
        assert fast._committed == general._committed
        assert fast.devices() == general.devices()
    if len(devs) > 1:
        z = jax.device_put(jnp.ones(3), devs[0])
        _same(_outcome(operator.add, x, z), _outcome(jnp.add, x, z))


def test_only_arrays_on_the_eager_trace_take_it():
    # Under a transformation the operators of tracers are the shared, general ones.
    f = jax.jit(lambda v: (v + 1, 2.5 * v, v - v))
    outs = f(jnp.arange(3.0))
    for got, want in zip(outs, (np.arange(3.0) + 1, 2.5 * np.arange(3.0), np.zeros(3))):
        np.testing.assert_array_equal(np.asarray(got), want)
    g = jax.grad(lambda v: (v * v + v - 3.0).sum())
    np.testing.assert_array_equal(np.asarray(g(jnp.arange(3.0))), 2 * np.arange(3.0) + 1)
    assert eager_operators.fast_binop("divide", False, jnp.divide) is jnp.divide
    assert type(jnp.ones(1)).__add__.__qualname__ == "fast_binop.<locals>.op"


def test_a_failed_operand_reaches_the_result():
    from tinyxla import _core
    _core._arm_fault("binary", 1)
    try:
        bad = jnp.ones(4) + 1.0
        with pytest.raises(Exception, match="injected fault"):
            bad.block_until_ready()
    finally:
        _core._arm_fault("", 0)
    np.testing.assert_array_equal(np.asarray(jnp.ones(4) + 1.0), 2 * np.ones(4))
