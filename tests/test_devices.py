"""Devices, shardings, device_put/device_get and block_until_ready, against jax 0.10.2."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp


def run_python(code, **env):
    """Runs ``code`` in a fresh interpreter (device counts are fixed once per process)."""
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("TINYXLA_NUM_CPU_DEVICES", "XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
    full_env.update(env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_default_device():
    devs = jax.devices()
    assert devs == jax.local_devices() and len(devs) == jax.device_count()
    d = devs[0]
    assert repr(d) == "CpuDevice(id=0)" and str(d) == "cpu:0"
    assert d.platform == d.device_kind == "cpu"
    assert d.id == 0 and d.process_index == 0
    assert isinstance(d, jax.Device)
    assert jax.devices("cpu") == devs
    assert jax.local_device_count() == jax.device_count()
    assert jax.process_index() == 0 and jax.process_count() == 1
    assert jax.default_backend() == "cpu"
    assert jax.devices()[0] is d  # one object per device


def test_memory_stats():
    stats = jax.devices()[0].memory_stats()
    for key in ("bytes_in_use", "peak_bytes_in_use", "num_allocs", "largest_alloc_size",
                "bytes_limit"):
        assert isinstance(stats[key], int)
    before = stats["bytes_in_use"]
    x = jax.device_put(np.ones(1 << 20, np.float32))
    x.block_until_ready()
    assert jax.devices()[0].memory_stats()["bytes_in_use"] >= before + (4 << 20)


def test_unknown_backends():
    with pytest.raises(RuntimeError) as info:
        jax.devices("gpu")
    assert str(info.value) == ("Unknown backend: 'gpu' requested, but no platforms that are "
                               "instances of gpu are present. Platforms present are: cpu")
    with pytest.raises(RuntimeError) as info:
        jax.devices("foo")
    assert str(info.value) == "Unknown backend foo. Available backends are ['cpu']"


def test_device_put_values():
    x = jax.device_put(np.arange(3.0))  # float64 is truncated with x64 off
    assert repr(x) == "Array([0., 1., 2.], dtype=float32)"
    assert not x.committed
    assert repr(jax.device_put(1.0)) == "Array(1., dtype=float32, weak_type=True)"
    assert repr(jax.device_put(1)) == "Array(1, dtype=int32, weak_type=True)"
    assert repr(jax.device_put(True)) == "Array(True, dtype=bool)"
    assert repr(jax.device_put(np.float64(1))) == "Array(1., dtype=float32)"
    assert repr(jax.device_put(np.uint64(3))) == "Array(3, dtype=uint32)"
    assert repr(jax.device_put([1, 2.0])) == ("[Array(1, dtype=int32, weak_type=True), "
                                             "Array(2., dtype=float32, weak_type=True)]")
    assert repr(jax.device_put({"a": np.arange(3)})) == "{'a': Array([0, 1, 2], dtype=int32)}"
    assert jax.device_put(None) is None
    y = jnp.ones(3)
    assert jax.device_put(y) is y
    z = jax.device_put(y, jax.devices()[0])
    assert z is not y and z.committed and z.devices() == {jax.devices()[0]}
    assert jax.device_put(y, y.sharding).committed


def test_device_put_errors():
    with pytest.raises(OverflowError, match="^Python int 1099511627776 too large to convert to int32$"):
        jax.device_put(2**40)
    with pytest.raises(TypeError, match="^Argument 'a' of type <class 'str'> is not a valid JAX type$"):
        jax.device_put("a")
    with pytest.raises(TypeError) as info:
        jax.device_put(np.array(["a"]))
    assert str(info.value) == ("Dtype <U1 is not a valid JAX array type. Only arrays of numeric "
                               "types are supported by JAX.")


def test_device_get():
    x = jax.device_put(np.arange(3, dtype=np.float32))
    out = jax.device_get([x, 1.0, np.ones(2)])
    assert isinstance(out[0], np.ndarray) and not out[0].flags.writeable
    np.testing.assert_array_equal(out[0], [0, 1, 2])
    assert out[1] == 1.0 and isinstance(out[2], np.ndarray)
    assert type(jax.device_get(x)) is np.ndarray


def test_block_until_ready_tree():
    x = jnp.ones(3) + 1
    tree = {"a": x, "b": 1, "c": [x * 2]}
    assert jax.block_until_ready(tree) is tree
    assert x.is_ready()


def test_cmake_dir():
    path = jax.cmake_dir()
    assert os.path.isfile(os.path.join(path, "tinyxlaConfig.cmake"))


def test_num_cpu_devices_config():
    out = run_python("""
        import tinyxla as jax
        jax.config.update('jax_num_cpu_devices', 4)
        import numpy as np
        devs = jax.devices()
        x = jax.device_put(np.arange(3.0), devs[2])
        y = (x + 1) * 2
        print(devs, jax.device_count(), y.devices(), y.committed, x.committed, np.asarray(y).tolist())
        try:
            jax.config.update('jax_num_cpu_devices', 2)
        except RuntimeError as e:
            print(e)
    """)
    lines = out.splitlines()
    assert lines[0] == ("[CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), CpuDevice(id=3)] 4 "
                        "{CpuDevice(id=2)} True True [2.0, 4.0, 6.0]")
    assert lines[1] == ("jax_num_cpu_devices config should be updated before backends are "
                        "initialized i.e. before any JAX operation is executed. You should "
                        "initialize this config immediately after `import jax`.")


@pytest.mark.parametrize("env", [{"XLA_FLAGS": "--xla_force_host_platform_device_count=3"},
                                 {"TINYXLA_NUM_CPU_DEVICES": "3"}])
def test_num_cpu_devices_env(env):
    out = run_python("""
        import tinyxla as jax
        print(jax.device_count(), jax.devices()[-1], repr(jax.devices()[-1].id))
    """, **env)
    assert out == "3 cpu:2 2"


def test_device_put_across_devices():
    out = run_python("""
        import numpy as np
        import tinyxla as jax
        jax.config.update('jax_num_cpu_devices', 2)
        d0, d1 = jax.devices()
        x = jax.device_put(np.arange(4, dtype=np.int32), d0) * 3
        y = jax.device_put(x, d1)
        print(y.devices() == {d1}, np.asarray(y).tolist(), y.sharding)
    """)
    assert out == ("True [0, 3, 6, 9] SingleDeviceSharding(device=CpuDevice(id=1), "
                   "memory_kind=device)")


def test_default_device_places_new_arrays_and_jit_calls():
    # The devices (and committedness) JAX 0.10.2 gives for the same program on 2 devices.
    out = run_python("""
        import tinyxla as jax, tinyxla.numpy as jnp, numpy as np
        jax.config.update('jax_num_cpu_devices', 2)
        d1 = jax.devices()[1]
        a0 = jnp.ones(2)
        with jax.default_device(d1):
            made = [jnp.zeros(3), jnp.arange(3), jax.jit(lambda: jnp.ones(2))(),
                    jax.device_put(np.ones(2)), jnp.asarray(3.0),
                    jax.random.normal(jax.random.PRNGKey(0), (2,)), jax.jit(lambda a: a * 2)(a0)]
            print([sorted(d.id for d in t.devices()) for t in made], made[0].committed,
                  made[3].committed, made[6].committed, jax.config.jax_default_device)
            print(np.asarray(made[6]).tolist(), np.asarray(made[1] + made[0]).tolist())
        print(jnp.zeros(1).devices(), jax.config.jax_default_device)
        x = jax.device_put(1.0, d1)
        with jax.default_device(jax.devices()[0]):
            print((x + 1).devices(), jax.jit(lambda a: a + 1)(x).devices())
        @jax.default_device(d1)
        def f():
            return jnp.ones(1)
        print(f().devices())
        jax.config.update('jax_default_device', d1)
        print(jnp.zeros(1).devices(), jax.config.jax_default_device)
        jax.config.update('jax_default_device', 'cpu')
        print(jnp.zeros(1).devices())
        jax.config.update('jax_default_device', None)
    """)
    assert out.splitlines() == [
        "[[1], [1], [1], [1], [1], [1], [1]] False False False cpu:1",
        "[2.0, 2.0] [0.0, 1.0, 2.0]",
        "{CpuDevice(id=0)} None",
        "{CpuDevice(id=1)} {CpuDevice(id=1)}",
        "{CpuDevice(id=1)}",
        "{CpuDevice(id=1)} cpu:1",
        "{CpuDevice(id=0)}",
    ]


def test_default_device_bad_values():
    for bad in (3, object()):
        with pytest.raises(ValueError, match=r"^jax.default_device must be passed either a "
                           r"Device object \(e.g. `jax.devices\('cpu'\)\[0\]`\) or a platform "
                           r"name string like 'cpu' or 'gpu', got: "):
            jax.default_device(bad)
    # An unknown platform is accepted by the option and refused at use, as in JAX.
    with jax.default_device("gpu"):
        assert jax.config.jax_default_device == "gpu"
        with pytest.raises(RuntimeError, match="^Unknown backend: 'gpu' requested, but no "
                           "platforms that are instances of gpu are present. Platforms present "
                           "are: cpu$"):
            jnp.zeros(1)
    assert jax.config.jax_default_device is None
    assert jnp.zeros(1).devices() == {jax.devices()[0]}


def test_live_arrays_lists_the_arrays_alive_and_not_deleted():
    x, y = jnp.ones(3), jnp.arange(4)
    live = jax.live_arrays()
    assert isinstance(live, list)
    assert any(a is x for a in live) and any(a is y for a in live)
    assert all(isinstance(a, jax.Array) for a in live)
    y.delete()
    assert not any(a is y for a in jax.live_arrays("cpu"))
    with pytest.raises(RuntimeError, match="^Unknown backend: 'gpu' requested"):
        jax.live_arrays("gpu")
