"""Callbacks over several devices, as JAX 0.10.2 orders them: a computation over more than
one device (pmap, shard_map, jit with shardings, also under jit, vmap and grad) refuses
ordered debug effects with JAX's ValueError, while ordered io_callbacks, unordered prints
and one-device pmaps run; each device's calls keep their program order. Run in a
subprocess with two CPU devices."""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent("""
    import contextlib, io, json
    import numpy as np
    import tinyxla as jax, tinyxla.numpy as jnp
    from tinyxla import lax
    from tinyxla.experimental import io_callback
    from tinyxla.experimental.shard_map import shard_map
    from tinyxla.sharding import NamedSharding, PartitionSpec as P

    out = {}
    def case(name, fn):
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                r = fn()
                jax.block_until_ready(r)
                jax.effects_barrier()
            out[name] = ["ok", np.asarray(r).tolist() if r is not None else None, buf.getvalue()]
        except Exception as e:
            out[name] = [type(e).__name__, str(e), buf.getvalue()]

    P1 = lambda x: (jax.debug.print("x={}", x, ordered=True), x * 2)[1]
    two = jnp.arange(2.0)
    case("pmap_print", lambda: jax.pmap(P1)(two))
    case("pmap_callback", lambda: jax.pmap(
        lambda x: (jax.debug.callback(lambda v: None, x, ordered=True), x)[1])(two))
    case("jit_of_pmap", lambda: jax.jit(jax.pmap(P1))(two))
    case("vmap_of_pmap", lambda: jax.vmap(jax.pmap(P1))(jnp.arange(4.0).reshape(2, 2)))
    case("grad_of_pmap", lambda: jax.grad(lambda y: jax.pmap(P1)(y).sum())(two))
    mesh = jax.make_mesh((2,), ("x",))
    xs = jax.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x")))
    case("shard_map", lambda: jax.jit(shard_map(P1, mesh=mesh, in_specs=P("x"),
                                                out_specs=P("x")))(xs))
    case("jit_in_shardings", lambda: jax.jit(P1, in_shardings=NamedSharding(mesh, P("x")))(xs))
    sds = jax.ShapeDtypeStruct((), jnp.float32)
    case("pmap_io_ordered", lambda: jax.pmap(
        lambda x: io_callback(lambda v: np.float32(v * 3), sds, x, ordered=True))(two))
    case("pmap_one_device", lambda: jax.pmap(P1, devices=jax.devices()[:1])(jnp.arange(1.0)))
    case("pmap_print_identity", lambda: jax.pmap(
        lambda x: (jax.debug.print("u={}", x), x)[1])(two))
    case("pmap_loop", lambda: jax.pmap(lambda x: lax.fori_loop(
        0, 50, lambda i, c: (jax.debug.print("d{} {}", x, i), c + 1)[1], x))(jnp.arange(2)))
    print(json.dumps(out))
""")

_REFUSED = re.compile(r"The following ordered effects are not supported for more than 1 device: "
                      r"\[<tinyxla\._src\.callback\.OrderedDebugEffect object at 0x[0-9a-f]+>\]")


@pytest.fixture(scope="module")
def results():
    env = dict(os.environ, TINYXLA_NUM_CPU_DEVICES="2")
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", ["pmap_print", "pmap_callback", "jit_of_pmap", "vmap_of_pmap",
                                  "grad_of_pmap", "shard_map", "jit_in_shardings"])
def test_ordered_debug_effects_over_devices_are_refused(results, name):
    kind, message, printed = results[name]
    assert kind == "ValueError" and _REFUSED.fullmatch(message), (kind, message)
    assert printed == ""


def test_ordered_io_callback_and_one_device_pmap_run(results):
    assert results["pmap_io_ordered"] == ["ok", [0.0, 3.0], ""]
    assert results["pmap_one_device"] == ["ok", [0.0], "x=0.0\n"]


def test_prints_without_results_run_on_every_device(results):
    kind, value, printed = results["pmap_print_identity"]
    assert kind == "ok" and value == [0.0, 1.0]
    assert sorted(printed.splitlines()) == ["u=0.0", "u=1.0"]


def test_each_device_keeps_its_program_order(results):
    kind, value, printed = results["pmap_loop"]
    assert kind == "ok" and value == [50, 51]
    lines = printed.splitlines()
    for d in (0, 1):  # the devices interleave; each one's prints are in its order
        assert [ln for ln in lines if ln.startswith(f"d{d} ")] == [f"d{d} {i}" for i in range(50)]
    assert len(lines) == 100
