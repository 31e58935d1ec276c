"""Host callbacks and jax.debug: pure_callback, io_callback, debug.callback, debug.print,
debug.breakpoint and the sharding pictures, eagerly and under jit, vmap, grad, pmap and the
control-flow primitives. Printed text and results are pinned from JAX 0.10.2
(tests/debug_callback_cases.py runs the same programs under either library)."""
from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.experimental  # noqa: F401
import tinyxla.numpy as jnp
from tinyxla import lax

import debug_callback_cases as cases

_PINNED = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                      "debug_callbacks_jax_0.10.2.json")))


@pytest.fixture(scope="module")
def quiet_log():
    logging.disable(logging.CRITICAL)  # the failing callbacks log as JAX's do
    yield
    logging.disable(logging.NOTSET)


@pytest.fixture(scope="module")
def printed():
    return cases.print_cases(jax, jnp, lax)


@pytest.mark.parametrize("name", sorted(_PINNED["print_cases"]))
def test_debug_print_output_and_order_match_jax(printed, name):
    assert printed[name] == _PINNED["print_cases"][name]


def test_debug_print_errors_match_jax():
    got = json.loads(json.dumps(cases.print_errors(jax, jnp)))
    assert got == _PINNED["print_errors"]


def test_callback_results_match_jax(quiet_log):
    got = json.loads(json.dumps(cases.callback_cases(jax, jnp, lax)))
    assert got == _PINNED["callback_cases"]


def test_callback_errors_match_jax(quiet_log):
    got = json.loads(json.dumps(cases.callback_errors(jax, jnp)))
    want = _PINNED["callback_errors"]
    for name, (cls, msg) in want.items():
        if cls == "JaxRuntimeError":  # tinyxla names the op instead of XLA's status
            assert got[name] is None or got[name][0] in ("RuntimeError", "JaxRuntimeError"), name
            if got[name] is not None:
                assert got[name][1] == msg.replace("INTERNAL: ", "[host_callback] "), name
        else:
            assert got[name] == [cls, msg], name


def _sds(shape=(), dtype=jnp.float32):
    return jax.ShapeDtypeStruct(shape, dtype)


@pytest.mark.parametrize("bad, message", [
    (lambda v: np.zeros(3, np.float32),
     "Incorrect output shape for return value #0: Expected: (), Actual: (3,)"),
    (lambda v: np.zeros((), np.int32),
     "Incorrect output dtype for return value #0: Expected: float32, Actual: int32"),
    (lambda v: (v, v), "Mismatched number of outputs from callback. Expected: 1, Actual: 2"),
])
def test_bad_callback_results_surface_at_the_wait(quiet_log, bad, message):
    out = jax.jit(lambda x: jax.pure_callback(bad, (_sds(),), x))(1.0)
    with pytest.raises(RuntimeError, match=r"^\[host_callback\] CpuCallback error") as e:
        np.asarray(out[0])
    assert message in str(e.value)


def test_raising_callback_names_the_op_and_the_runtime_keeps_working(quiet_log):
    def cb(x):
        if x > 1:
            raise ValueError("boom")
        return np.asarray(x) * 3

    f = jax.jit(lambda x: jax.pure_callback(cb, _sds(), x) + 1)
    bad = f(2.0)
    later = jnp.sin(jnp.float32(1.0))  # queued behind the failing graph
    with pytest.raises(RuntimeError, match=r"\[host_callback\][\s\S]*ValueError: boom"):
        bad.block_until_ready()
    assert float(later) == pytest.approx(np.sin(1.0))
    assert float(f(1.0)) == 4.0  # the same executable runs again
    with pytest.raises(jax.errors.JaxRuntimeError, match="ValueError: boom"):
        jax.pure_callback(cb, _sds(), 5.0)  # eagerly: raised at the call


def test_pure_callback_eager_equals_jit_and_gets_arrays():
    seen = []

    def cb(x, y):
        seen.append((isinstance(x, jax.Array), x.dtype, x.shape, y.weak_type))
        return np.asarray(x) * np.asarray(y)

    x = jnp.arange(6.0).reshape(2, 3)
    eager = jax.pure_callback(cb, _sds((2, 3)), x, 2.0)
    jitted = jax.jit(lambda a: jax.pure_callback(cb, _sds((2, 3)), a, 2.0))(x)
    np.testing.assert_array_equal(np.asarray(eager), np.arange(6.0).reshape(2, 3) * 2)
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(eager))
    assert seen == [(True, np.float32, (2, 3), False)] * 2  # strong, as JAX's


def test_pure_callback_vmap_matches_python_loop():
    def cb(x):
        return np.cumsum(np.asarray(x)).astype(np.float32)

    xs = jnp.arange(12.0).reshape(4, 3)
    f = lambda x: jax.pure_callback(cb, _sds((3,)), x, vmap_method="sequential")
    want = np.stack([np.cumsum(np.arange(12.0).reshape(4, 3)[i]) for i in range(4)])
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(xs)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(f))(xs)), want)
    np.testing.assert_array_equal(np.asarray(jax.vmap(f, in_axes=1, out_axes=1)(xs.T)), want.T)


def test_callbacks_under_grad():
    @jax.custom_jvp
    def f(x):
        return jax.pure_callback(lambda v: np.exp(np.asarray(v)), _sds(), x,
                                 vmap_method="sequential")

    f.defjvp(lambda p, t: (f(p[0]), f(p[0]) * t[0]))
    log = []

    def loss(x):
        jax.debug.callback(lambda v: log.append(float(v)), x)
        return f(x) * x

    g = jax.grad(loss)(1.5)
    assert float(g) == pytest.approx(np.exp(1.5) * 2.5, rel=1e-6)
    assert float(jax.jit(jax.grad(loss))(0.5)) == pytest.approx(np.exp(0.5) * 1.5, rel=1e-6)
    jax.effects_barrier()
    assert log == [1.5, 0.5]  # the primal, once per gradient
    # vmap of grad: one debug callback per batch member, in order
    log.clear()
    jax.vmap(jax.grad(loss))(jnp.array([1.0, 2.0, 3.0]))
    jax.effects_barrier()
    assert log == [1.0, 2.0, 3.0]


def test_io_callback_ordered_runs_in_program_order_across_jit_calls():
    log = []

    def record(tag):
        def cb(x):
            log.append((tag, int(x)))
            return None if tag == "e" else np.int32(x)
        return cb

    f = jax.jit(lambda x: jax.experimental.io_callback(record("f"), _sds((), jnp.int32), x,
                                                       ordered=True) + 1)
    g = jax.jit(lambda x: jax.experimental.io_callback(record("g"), _sds((), jnp.int32), x * 10,
                                                       ordered=True))
    x = jnp.int32(0)
    for _ in range(5):
        x = f(x)
        g(x)
        jax.experimental.io_callback(record("e"), None, x, ordered=True)
    jax.effects_barrier()
    assert log == [t for i in range(5) for t in (("f", i), ("g", 10 * (i + 1)), ("e", i + 1))]


def test_effects_kept_when_results_unused_and_in_loops():
    log = []
    cb = lambda v: log.append(int(v))

    def f(x):
        jax.experimental.io_callback(lambda v: (cb(v), v)[1], _sds((), jnp.int32), x)  # unused
        lax.fori_loop(0, 3, lambda i, c: (jax.debug.callback(cb, i + 100), c)[1], x)  # unused loop
        lax.cond(x > 0, lambda: jax.debug.callback(cb, x + 200), lambda: None)
        return x

    jax.jit(f)(jnp.int32(1))
    jax.effects_barrier()
    assert log == [1, 100, 101, 102, 201]


def test_callbacks_from_many_threads():
    f = jax.jit(lambda x: jax.pure_callback(lambda v: np.asarray(v) * 2, _sds((4,)), x) + 1)
    counts = [0] * 8
    lock = threading.Lock()
    errors = []

    def note(i):
        with lock:
            counts[i] += 1

    def work(i):
        try:
            for k in range(40):
                x = jnp.full((4,), float(i * 100 + k))
                y = f(x)
                jax.debug.callback(lambda _: note(i), y)
                np.testing.assert_array_equal(np.asarray(y), np.full(4, 2.0 * (i * 100 + k) + 1))
        except Exception as e:  # reported below: pytest sees no thread's exception
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    jax.effects_barrier()
    assert not errors
    assert counts == [40] * 8


def test_callback_may_use_tinyxla_inside():
    def cb(x):
        return np.asarray(jnp.sum(x * 2))  # eager work inside the device's callback

    f = jax.jit(lambda x: jax.pure_callback(cb, _sds(), x))
    assert float(f(jnp.arange(4.0))) == 12.0


def test_pmap_prints_once_per_device():
    script = textwrap.dedent("""
        import tinyxla as jax, tinyxla.numpy as jnp
        def f(x):
            jax.debug.print("p {}", x)
            return x * 2
        print(jax.pmap(f)(jnp.arange(2.0)))
        jax.effects_barrier()
        print(jax.pmap(jax.vmap(f))(jnp.arange(4.0).reshape(2, 2)))
        jax.effects_barrier()
    """)
    env = dict(os.environ, TINYXLA_NUM_CPU_DEVICES="2")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # Devices print concurrently (JAX's order varies too); each member once, results pinned.
    assert sorted(lines[:2]) == ["p 0.0", "p 1.0"] and lines[2] == "[0. 2.]"
    assert sorted(lines[3:7]) == ["p 0.0", "p 1.0", "p 2.0", "p 3.0"]
    assert lines[7:] == ["[[0. 2.]", " [4. 6.]]"]


def test_breakpoint_prompt_reads_stdin():
    out = io.StringIO()

    def g(x):
        y = x * 2
        jax.debug.breakpoint(stdin=io.StringIO("p y\npp x + 1\nzzz\nc\n"), stdout=out)
        return y

    assert float(jax.jit(g)(1.0)) == 2.0
    jax.effects_barrier()
    # As JAX 0.10.2 prints it (the prompt and the evaluated values).
    assert out.getvalue() == ("Entering jdb:\n(jdb) Array(2., dtype=float32)\n"
                              "(jdb) Array(2., dtype=float32)\n"
                              "(jdb) *** NameError: name 'zzz' is not defined\n(jdb) ")
    out.seek(0)
    out.truncate()
    jax.debug.breakpoint(stdin=io.StringIO("w\nu\nc\n"), stdout=out)  # eagerly, frames
    text = out.getvalue()
    assert text.startswith("Entering jdb:\n(jdb) Traceback:\n")
    assert f'File "{__file__}"' in text and "jax.debug.breakpoint(stdin" in text


def test_breakpoint_under_vmap_stops_per_member():
    out = io.StringIO()

    def g(x):
        jax.debug.breakpoint(stdin=io.StringIO("p x\nc\n" * 3), stdout=out)
        return x

    jax.vmap(g)(jnp.arange(3))
    jax.effects_barrier()
    values = [line for line in out.getvalue().split("(jdb) ") if line.startswith("Array")]
    assert values == [f"Array({i}, dtype=int32)\n" for i in range(3)]


_BOX_1D = "┌───────┐\n│ CPU 0 │\n└───────┘\n\n"
_BOX_2D = ("┌───────────────────────┐\n" + "│                       │\n" * 4 +
           "│         CPU 0         │\n" + "│                       │\n" * 4 +
           "└───────────────────────┘\n\n")


def test_visualize_array_sharding(capsys):
    jax.debug.visualize_array_sharding(jnp.arange(8.0))
    assert capsys.readouterr().out == _BOX_1D
    jax.debug.visualize_array_sharding(jnp.ones((4, 4)))
    assert capsys.readouterr().out == _BOX_2D
    jax.jit(lambda x: jax.debug.visualize_array_sharding(x))(jnp.ones((4, 4)))
    jax.effects_barrier()
    assert capsys.readouterr().out == _BOX_2D
    with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
        jax.debug.visualize_array_sharding(jnp.ones((2, 2, 2)))


def test_visualize_sharding_over_a_mesh():
    script = textwrap.dedent("""
        import numpy as np
        import tinyxla as jax
        from tinyxla.sharding import Mesh, NamedSharding, PartitionSpec as P
        mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("a", "b"))
        jax.debug.visualize_sharding((4, 8), NamedSharding(mesh, P("a", "b")))
        jax.debug.visualize_sharding((8,), NamedSharding(mesh, P(("a", "b"))))
    """)
    env = dict(os.environ, TINYXLA_NUM_CPU_DEVICES="4")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    # JAX's layout arithmetic: a 4x8 array's 2x2 blocks are 25 wide (text padded 9 each
    # side) and 5 high (1 line above the text, 2 below); 1-D blocks are the minimum 9 (7).
    cell = lambda d: f"         CPU {d}         "
    blank = " " * 23
    row = lambda a, b: (["│" + blank + "│" + blank + "│"] + ["│" + cell(a) + "│" + cell(b) + "│"] +
                        ["│" + blank + "│" + blank + "│"] * 2)
    want = (["┌" + "─" * 23 + "┬" + "─" * 23 + "┐"] + row(0, 1) +
            ["├" + "─" * 23 + "┼" + "─" * 23 + "┤"] + row(2, 3) +
            ["└" + "─" * 23 + "┴" + "─" * 23 + "┘", "",
             "┌" + "┬".join(["─" * 7] * 4) + "┐",
             "│" + "│".join(f" CPU {d} " for d in range(4)) + "│",
             "└" + "┴".join(["─" * 7] * 4) + "┘", ""])
    assert out.stdout.splitlines() == want
