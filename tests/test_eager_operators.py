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
    assert eager_operators.fast_binop("__truediv__", "divide", False, jnp.divide) is jnp.divide


def _python_calls(fn):
    """How many Python functions ``fn()`` calls."""
    import sys
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append(1) if event == "call" else None)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return len(calls)


def test_the_fast_cases_run_no_python():
    x, i, s = jnp.ones(3), jnp.arange(3), jnp.asarray(2.0)
    for fast in (lambda: x + 1, lambda: 1 + x, lambda: x - 2.5, lambda: 2.5 - x,
                 lambda: x * x, lambda: x * s, lambda: i * 3, lambda: 3 - i):
        assert _python_calls(fast) == 1, fast  # the lambda's own frame
    for slow in (lambda: x + 1j, lambda: i + 2.5, lambda: jnp.ones(3, jnp.int8) + 1,
                 lambda: x + jnp.ones((2, 1, 3))):
        assert _python_calls(slow) > 2
    np.testing.assert_array_equal(np.asarray(2.5 - x), [1.5, 1.5, 1.5])
    np.testing.assert_array_equal(np.asarray(3 - i), [3, 2, 1])


def test_kernel_errors_surface_at_the_wait_on_either_stream_path():
    # Run on the caller (idle stream) and queued behind a long kernel (busy stream).
    from tinyxla import _core
    for busy in (False, True):
        big = jnp.exp(jnp.ones(1 << 22)) if busy else None
        _core._arm_fault("binary", 1)
        try:
            bad = jnp.ones(4) + 1.0
            with pytest.raises(Exception, match="injected fault"):
                bad.block_until_ready()
        finally:
            _core._arm_fault("", 0)
        with pytest.raises(Exception, match="injected fault"):
            (bad * 2).block_until_ready()  # the failed operand passes its error on
        if big is not None:
            np.testing.assert_allclose(float(big[-1]), np.e, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(jnp.ones(4) + 1.0), 2 * np.ones(4))


def test_many_threads_share_the_fast_path():
    import threading
    x = jnp.arange(8, dtype=jnp.float32)
    errors, results = [], {}

    def work(k):
        try:
            y = x
            for _ in range(200):
                y = y + 1 if k % 2 else (y * 1.0) + 1.0
            results[k] = np.asarray(y)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(6):
        np.testing.assert_array_equal(results[k], np.arange(8, dtype=np.float32) + 200)
