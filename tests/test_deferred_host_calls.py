"""Host calls without results (debug.print, debug.callback) left to the host-call thread
while the graph goes on (core/host_calls.h), on both tiers (a loop of one-element values
runs whole in generated code, host calls included): the calls run in program order, see
the values of their own trip, finish before the run's results are ready, and a failing
one fails the run and stops the calls after it, as JAX's synchronous callbacks do."""
import contextlib
import io
import logging
import os
import shutil

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.experimental  # noqa: F401
import tinyxla.numpy as jnp
from tinyxla import lax

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and not os.environ.get("CC"),
                              reason="no C compiler")
TIERS = ["base", pytest.param("upper", marks=needs_cc)]


@pytest.fixture(autouse=True)
def quiet_log():
    logging.disable(logging.CRITICAL)  # the failing callbacks log as JAX's do
    yield
    logging.disable(logging.NOTSET)


def _compiled(fn, args, tier, monkeypatch):
    """``fn`` compiled afresh on ``tier``; the upper tier's module is built and loaded."""
    monkeypatch.setenv("TINYXLA_CODEGEN", "1" if tier == "upper" else "0")
    c = jax.jit(lambda *a: fn(*a)).lower(*args).compile()
    if tier == "upper":
        c.wait_codegen()
        assert c.codegen_status in ("loaded", "cached"), c.codegen_status
    return c


def _ran_generated_loop(c, run):
    before = c._executable.codegen_kernel_runs
    out = run()
    return out, c._executable.codegen_kernel_runs > before


@pytest.mark.parametrize("tier", TIERS)
def test_prints_in_a_loop_keep_order_and_values(tier, monkeypatch):
    def body(i, c):
        jax.debug.print("i={} c={:.2f} even={} u={}", i, c, i % 2 == 0, (i * 40).astype(jnp.uint8))
        return c * 1.01
    c = _compiled(lambda x: lax.fori_loop(0, 300, body, x), (jnp.float32(1),), tier, monkeypatch)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        (out, generated) = _ran_generated_loop(c, lambda: c(jnp.float32(1)).block_until_ready())
    assert generated == (tier == "upper")
    want, v = [], np.float32(1)
    for i in range(300):
        want.append(f"i={i} c={float(v):.2f} even={i % 2 == 0} u={np.uint8((i * 40) % 256)}")
        v = np.float32(v * np.float32(1.01))
    # Printed before the result was ready (no effects_barrier).
    assert buf.getvalue() == "\n".join(want) + "\n"
    assert float(out) == float(v)


@pytest.mark.parametrize("tier", TIERS)
def test_callbacks_get_their_own_trip_values(tier, monkeypatch):
    """The carry is updated in place by the next trip: a callback keeps what it saw."""
    seen = []
    body = lambda i, c: (jax.debug.callback(lambda a, b: seen.append((a, b)), i, c), c + 2.0)[1]
    c = _compiled(lambda x: lax.fori_loop(0, 50, body, x), (jnp.float32(0),), tier, monkeypatch)
    c(jnp.float32(0)).block_until_ready()
    assert [(int(a), float(b)) for a, b in seen] == [(i, 2.0 * i) for i in range(50)]
    assert all(isinstance(a, jax.Array) and a.dtype == jnp.int32 for a, _ in seen)


@pytest.mark.parametrize("tier", TIERS)
def test_a_failing_callback_fails_the_run_and_stops_later_calls(tier, monkeypatch):
    seen = []

    def cb(i):
        if i == 7:
            raise ValueError("boom")
        seen.append(int(i))
    body = lambda i, c: (jax.debug.callback(cb, i), c + 1)[1]
    c = _compiled(lambda x: lax.fori_loop(0, 40, body, x), (0,), tier, monkeypatch)
    with pytest.raises(RuntimeError, match=r"^\[host_callback\] CpuCallback error[\s\S]*ValueError: boom"):
        c(0).block_until_ready()
    assert seen == list(range(7))
    seen.clear()
    with pytest.raises(RuntimeError, match="ValueError: boom"):
        c(0).block_until_ready()  # the same executable runs again, and fails again
    assert seen == list(range(7))
    assert int(jax.jit(lambda x: x + 1)(1)) == 2


def test_deferred_and_synchronous_calls_keep_program_order():
    """A callback with results waits for the prints before it."""
    log = []

    def body(i, c):
        jax.debug.callback(lambda v: log.append(("print", int(v))), i)
        r = jax.experimental.io_callback(lambda v: (log.append(("io", int(v))), np.int32(v * 10))[1],
                                         jax.ShapeDtypeStruct((), jnp.int32), i, ordered=True)
        jax.debug.callback(lambda v: log.append(("after", int(v))), r)
        return c + r
    out = jax.jit(lambda x: lax.fori_loop(0, 20, body, x))(0)
    assert int(out) == 10 * sum(range(20))
    assert log == [(k, v) for i in range(20) for k, v in
                   (("print", i), ("io", i), ("after", 10 * i))]


def test_calls_of_successive_runs_and_devices_stay_in_order():
    log = []
    f = jax.jit(lambda x: lax.fori_loop(0, 30, lambda i, c: (
        jax.debug.callback(lambda a, b: log.append((int(a), int(b))), x, i), c)[1], x))
    for k in range(5):
        f(k)
    jax.effects_barrier()
    assert log == [(k, i) for k in range(5) for i in range(30)]


def test_eager_prints_inside_a_callback_run_at_once():
    """A callback that prints and runs jitted code with prints of its own (the host-call
    thread then calls synchronously: it cannot wait for itself)."""
    inner = jax.jit(lambda v: (jax.debug.print("inner {}", v), v * 2)[1])

    def cb(i):
        print(f"outer {int(i)}")
        print(f"got {int(inner(i))}")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        jax.jit(lambda n: lax.fori_loop(0, 3, lambda i, c: (jax.debug.callback(cb, i), c)[1], n))(0)
        jax.effects_barrier()
    assert buf.getvalue() == "".join(f"outer {i}\ninner {i}\ngot {2 * i}\n" for i in range(3))


def test_print_options_of_the_trace_apply_and_are_rechecked_when_changed():
    f = jax.jit(lambda x: jax.debug.print("{}", x))
    x = jnp.array([1.23456, 2.0])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        f(x)
        jax.effects_barrier()
        with np.printoptions(precision=2):  # the trace's options apply, not these
            f(x)
            jax.effects_barrier()
        f(x)
        jax.effects_barrier()
    assert buf.getvalue() == "[1.23456 2.     ]\n" * 3
