"""The two-tier CPU compiler: the upper tier (generated C, compiled by the system compiler
and swapped in) gives the base tier's answers, its disk cache, the TINYXLA_CODEGEN modes,
and the fallbacks (no compiler, a failing or hanging compiler)."""
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and not os.environ.get("CC"),
                                reason="no C compiler")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "codegen-cache"
    monkeypatch.setenv("TINYXLA_CACHE_DIR", str(d))
    monkeypatch.delenv("TINYXLA_CC", raising=False)
    return d


@pytest.fixture(autouse=True)
def x64():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # float64 and int64 stay what they say
    yield
    jax.config.update("jax_enable_x64", prev)


def _compile(fn, args, mode, monkeypatch):
    """A fresh executable of ``fn`` (a new function object: nothing is shared with other
    compiles) under ``TINYXLA_CODEGEN=mode``."""
    monkeypatch.setenv("TINYXLA_CODEGEN", mode)
    return jax.jit(lambda *a: fn(*a)).lower(*args).compile()


def _both_tiers(fn, args, monkeypatch, expect_upper=True):
    base = _compile(fn, args, "0", monkeypatch)
    upper = _compile(fn, args, "1", monkeypatch)
    upper.wait_codegen()
    assert base.tier == "base" and base.codegen_status == "off"
    assert upper.codegen_status in ("loaded", "cached"), upper.codegen_status
    assert upper.tier == "upper"
    before = upper._executable.codegen_kernel_runs
    result = upper(*args)
    jax.block_until_ready(result)
    # Generated code ran (a body it does not cover, or a non-dense input, takes the base tier).
    assert upper._executable.codegen_kernel_runs > before or not expect_upper
    return base(*args), result


def _assert_same(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        # Both tiers compute with the same functions and no FMA contraction: bit equality.
        np.testing.assert_array_equal(x.reshape(-1).view(np.uint8), y.reshape(-1).view(np.uint8))


def _special(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32) * 3
    flat = x.reshape(-1)
    flat[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30][:flat.size]
    return jnp.asarray(x).astype(dtype)


FLOAT_DTYPES = [jnp.float32, jnp.float64, jnp.float16, jnp.bfloat16]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_ops_same_on_both_tiers(dtype, monkeypatch):
    x, y = _special(dtype, (67, 33), 0), _special(dtype, (67, 33), 1)

    def f(x, y):
        return (x + y, x - y * 2, x * y / (y + 3), jnp.maximum(x, y), jnp.minimum(x, -y),
                jnp.abs(x) - x, -x, jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x),
                jnp.log(jnp.abs(x) + 1) + jnp.sqrt(jnp.abs(y)), jnp.where(x > y, x, y * 3),
                (x < y) & (x != 0), jnp.cos(x) ** 2 + jnp.floor(y), jnp.clip(x, -1, 1) + y,
                jax.lax.logistic(x) + jnp.arctan2(x, y), (x * 3).astype(jnp.int32),
                (x + 1).astype(jnp.float32), jnp.square(x) + 1 / (y + 10))

    _assert_same(*_both_tiers(f, (x, y), monkeypatch))


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.int8, jnp.uint32, jnp.int64])
def test_integer_ops_same_on_both_tiers(dtype, monkeypatch):
    rng = np.random.default_rng(2)
    info = np.iinfo(np.dtype(dtype))
    x = jnp.asarray(rng.integers(info.min, info.max, (40, 50), dtype=np.dtype(dtype)))
    y = jnp.asarray(rng.integers(1, 100, (40, 50), dtype=np.dtype(dtype)))

    def f(x, y):
        return (x + y, x * y - y, -x, jnp.maximum(x, y), jnp.minimum(x, y * 2), x // y, x % y,
                (x & y) | (x ^ 7), (x > y) | (x == y), jnp.where(x < y, x, y),
                (x + y).astype(jnp.float32) * 0.5, (x * 3).astype(jnp.int16), x << 3)

    _assert_same(*_both_tiers(f, (x, y), monkeypatch))


def test_broadcasts_and_bool_same_on_both_tiers(monkeypatch):
    rng = np.random.default_rng(3)
    x = jnp.asarray(rng.standard_normal((300, 17)).astype(np.float32))
    row = jnp.asarray(rng.standard_normal((17,)).astype(np.float32))
    col = jnp.asarray(rng.standard_normal((300, 1)).astype(np.float32))
    s = jnp.float32(2.5)

    def f(x, row, col, s):
        m = (x > row) ^ (x < col)
        return (x * row + col, (x - row) / (col + 5), jnp.where(m, x, s), ~m,
                jnp.exp(x - row) * s, m.astype(jnp.float32) + row)

    _assert_same(*_both_tiers(f, (x, row, col, s), monkeypatch))


@pytest.mark.parametrize("rows,cols,dtype", [
    (300, 1000, np.float32),   # a row's pattern spans two tiles and does not divide them
    (40, 4096, np.float32),    # the longest pattern kept whole (8 tiles)
    (20, 5000, np.float32),    # longer: read a run at a time
    (200, 700, np.float64),    # another tile size
    (100, 3000, np.int8),
])
def test_long_row_and_column_broadcasts_same_on_both_tiers(rows, cols, dtype, monkeypatch):
    """Rows broadcast over many tiles (kept as a repeating pattern), columns broadcast over
    long rows and a middle dim broadcast (read a run at a time), against numpy."""
    rng = np.random.default_rng(rows)
    gen = lambda *s: (rng.standard_normal(s) * 20).astype(dtype)  # noqa: E731
    hx, hrow, hcol, hmid = gen(rows, cols), gen(cols), gen(rows), gen(2, cols)

    def f(x, row, col, mid):
        return (x * row[None, :] + col[:, None], row[None, :] - col[:, None],
                jnp.maximum(x, row) - x[:1], mid[:, None, :] + x[None, :3])

    args = tuple(jnp.asarray(a) for a in (hx, hrow, hcol, hmid))
    base, upper = _both_tiers(f, args, monkeypatch)
    _assert_same(base, upper)
    with np.errstate(over="ignore"):
        want = (hx * hrow[None, :] + hcol[:, None], hrow[None, :] - hcol[:, None],
                np.maximum(hx, hrow) - hx[:1], hmid[:, None, :] + hx[None, :3])
    for got, w in zip(upper, want):
        np.testing.assert_array_equal(np.asarray(got), w.astype(dtype))


@pytest.mark.parametrize("n,m,k", [(1000, 1000, 0), (700, 1300, 3), (1500, 40, -2)])
def test_iota_masks_fuse_on_both_tiers(n, m, k, monkeypatch):
    """eye and tri read their iotas as broadcasts of one line: same answers as numpy."""
    x = jnp.asarray(np.random.default_rng(n).standard_normal((n, m)).astype(np.float32))

    def f(x):
        return (x + 2.0 * jnp.eye(n, m, k=k, dtype=x.dtype), jnp.where(jnp.tri(n, m, k=k, dtype=bool), x, 0.0),
                jnp.triu(x, k))

    compiled = jax.jit(f).lower(x).compile()
    assert "iota() {dimension=0} : i32[" in compiled.as_text()
    assert f"iota() {{dimension=0}} : i32[{n},{m}]" not in compiled.as_text()
    base, upper = _both_tiers(f, (x,), monkeypatch)
    _assert_same(base, upper)
    h = np.asarray(x)
    for got, want in zip(upper, (h + 2.0 * np.eye(n, m, k=k, dtype=np.float32),
                                 np.where(np.tri(n, m, k=k, dtype=bool), h, 0), np.triu(h, k))):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_large_parallel_and_streamed_same_on_both_tiers(monkeypatch):
    x = jnp.asarray(np.random.default_rng(4).standard_normal(5_000_001).astype(np.float32))

    def f(x):
        return jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x)

    base, upper = _both_tiers(f, (x,), monkeypatch)
    _assert_same(base, upper)
    h = np.asarray(x)
    np.testing.assert_allclose(np.asarray(upper), np.tanh(h * 2 + 1) * 0.5 + np.exp(-h * h) - np.sin(h),
                               rtol=2e-6, atol=2e-6)


def test_strided_view_inputs_run_generated_code(monkeypatch):
    """Transposes, stepped and column slices and reversals of dense values feed fused
    kernels with their own strides (vmapped PRNG keys are column slices of (n, 2) keys)."""
    x = jnp.asarray(np.random.default_rng(5).standard_normal((64, 48)).astype(np.float32))

    def f(x):
        return (jnp.exp(x.T * 2) + 1, x[::2, 1::3] * 3, x[:, 7] - x[:, 0], x[::-1] + 1)

    base, upper = _both_tiers(f, (x,), monkeypatch)
    _assert_same(base, upper)
    h = np.asarray(x)
    for got, want in zip(upper, (np.exp(h.T * 2) + 1, h[::2, 1::3] * 3, h[:, 7] - h[:, 0],
                                 h[::-1] + 1)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_threefry_over_a_batch_of_keys_runs_generated_code(monkeypatch):
    keys = jax.random.split(jax.random.PRNGKey(3), 1000)

    def f(keys):
        return jax.vmap(lambda k: jax.random.uniform(k, ()))(keys)

    base, upper = _both_tiers(f, (keys,), monkeypatch)
    _assert_same(base, upper)


def test_shifts_and_bitcasts_same_on_both_tiers(monkeypatch):
    rng = np.random.default_rng(6)
    for dtype in (np.int8, np.uint16, np.int32, np.uint32, np.int64):
        info = np.iinfo(dtype)
        x = jnp.asarray(rng.integers(info.min, info.max, 300, dtype=dtype, endpoint=True))
        # Amounts past the width (and negative ones) give 0 or the sign fill.
        s = jnp.asarray(rng.integers(-3, 8 * np.dtype(dtype).itemsize + 4, 300).astype(dtype))
        as_float = {1: None, 2: jnp.float16, 4: jnp.float32, 8: jnp.float64}[np.dtype(dtype).itemsize]

        def f(x, s):
            out = (jax.lax.shift_left(x, s), jax.lax.shift_right_logical(x, s),
                   jax.lax.shift_right_arithmetic(x, s) + 1)
            if as_float is not None and (as_float != jnp.float64 or jax.config.jax_enable_x64):
                out += (jax.lax.bitcast_convert_type(x ^ s, as_float) * 1,)
            return out

        _assert_same(*_both_tiers(f, (x, s), monkeypatch))


def test_generated_source_is_c_with_the_kernels(monkeypatch):
    x = jnp.ones((1000,), jnp.float32)
    c = _compile(lambda x: jnp.sin(x) * 2 + x, (x,), "0", monkeypatch)
    src = c.codegen_source
    assert "void tx_init(" in src and "void tx_kernel" in src
    assert c.codegen_status == "off" and c.tier == "base"


def test_cache_hit(cache_dir, monkeypatch):
    x = jnp.asarray(np.linspace(-3, 3, 4096, dtype=np.float32))
    fn = lambda x: jnp.exp(x) * 3 - x  # noqa: E731
    first = _compile(fn, (x,), "1", monkeypatch)
    first.wait_codegen()
    assert first.codegen_status == "loaded"
    assert len(list(cache_dir.glob("*.so"))) == 1
    second = _compile(fn, (x,), "1", monkeypatch)
    second.wait_codegen()
    assert second.codegen_status == "cached" and second.tier == "upper"
    _assert_same(first(x), second(x))
    # The key covers the source: another function is another module.
    third = _compile(lambda x: jnp.exp(x) * 4 - x, (x,), "1", monkeypatch)
    third.wait_codegen()
    assert third.codegen_status == "loaded"
    assert len(list(cache_dir.glob("*.so"))) == 2
    # ... and so does the compiler (named by another path here).
    monkeypatch.setenv("TINYXLA_CC", os.path.realpath(shutil.which("cc")))
    fourth = _compile(fn, (x,), "1", monkeypatch)
    fourth.wait_codegen()
    assert fourth.codegen_status == "loaded"
    assert len(list(cache_dir.glob("*.so"))) == 3


def test_disk_cache_is_bounded_and_evicts_the_least_recently_used(cache_dir, monkeypatch):
    x = jnp.asarray(np.linspace(-3, 3, 256, dtype=np.float32))
    fns = [lambda x: jnp.exp(x) * 3 - x, lambda x: jnp.sin(x) * 5 + x,
           lambda x: jnp.tanh(x) - 7 * x]
    first = _compile(fns[0], (x,), "1", monkeypatch)
    first.wait_codegen()
    (module,) = cache_dir.glob("*.so")
    # Room for two modules: the third build evicts the least recently used one.
    monkeypatch.setenv("TINYXLA_CACHE_MAX_BYTES", str(int(module.stat().st_size * 2.5)))
    second = _compile(fns[1], (x,), "1", monkeypatch)
    second.wait_codegen()
    time.sleep(0.05)  # mtimes of distinct uses differ
    again = _compile(fns[0], (x,), "1", monkeypatch)  # a cache hit marks the first as used
    again.wait_codegen()
    assert again.codegen_status == "cached"
    time.sleep(0.05)
    third = _compile(fns[2], (x,), "1", monkeypatch)
    third.wait_codegen()
    assert third.codegen_status == "loaded"
    left = set(cache_dir.glob("*.so"))
    assert len(left) == 2 and module in left  # the second one went
    # An evicted module is rebuilt on its next use, and computes the same.
    rebuilt = _compile(fns[1], (x,), "1", monkeypatch)
    rebuilt.wait_codegen()
    assert rebuilt.codegen_status == "loaded"
    _assert_same(second(x), rebuilt(x))
    assert len(list(cache_dir.glob("*.so"))) == 2


def test_cache_directory_and_modules_are_private(cache_dir, monkeypatch):
    x = jnp.asarray(np.linspace(-3, 3, 64, dtype=np.float32))
    c = _compile(lambda x: jnp.sin(x) * 2, (x,), "1", monkeypatch)
    c.wait_codegen()
    assert c.codegen_status == "loaded"
    assert cache_dir.stat().st_mode & 0o777 == 0o700
    (so,) = cache_dir.glob("*.so")
    assert so.stat().st_mode & 0o022 == 0


@pytest.mark.parametrize("mode", [0o777, 0o770])
def test_a_shared_cache_directory_is_refused(mode, tmp_path, monkeypatch, capfd):
    shared, private = tmp_path / "shared", tmp_path / "tmp"
    shared.mkdir()
    private.mkdir()
    shared.chmod(mode)
    monkeypatch.setenv("TINYXLA_CACHE_DIR", str(shared))
    monkeypatch.setenv("TMPDIR", str(private))
    x = jnp.asarray(np.linspace(-3, 3, 64, dtype=np.float32))
    fn = lambda x: jnp.cos(x) * 2 + x  # noqa: E731
    c = _compile(fn, (x,), "1", monkeypatch)
    c.wait_codegen()
    assert c.codegen_status == "loaded" and c.tier == "upper"
    assert not list(shared.iterdir())
    (fresh,) = private.glob("tinyxla-codegen-*")
    assert len(list(fresh.glob("*.so"))) == 1 and fresh.stat().st_mode & 0o777 == 0o700
    err = capfd.readouterr().err
    assert f"the codegen cache directory {shared} is not private to this user" in err
    assert f"built afresh in {fresh}" in err
    _assert_same(c(x), fn(x))


def test_a_module_file_that_is_not_its_key_is_rebuilt(cache_dir, monkeypatch):
    x = jnp.asarray(np.linspace(-3, 3, 64, dtype=np.float32))
    fn = lambda x: jnp.tanh(x) * 5 - 1  # noqa: E731
    first = _compile(fn, (x,), "1", monkeypatch)
    first.wait_codegen()
    (mine,) = cache_dir.glob("*.so")
    other = _compile(lambda x: jnp.exp(x) + 7, (x,), "1", monkeypatch)
    other.wait_codegen()
    (theirs,) = set(cache_dir.glob("*.so")) - {mine}

    def replace_with(data):  # a new file: the loaded one stays mapped as it was
        tmp = cache_dir / "tampered"
        tmp.write_bytes(data)
        tmp.chmod(0o700)
        os.replace(tmp, mine)

    # Another module under this one's name, a truncated file, a file others may write.
    for tamper in (lambda: replace_with(theirs.read_bytes()),
                   lambda: replace_with(mine.read_bytes()[:100]),
                   lambda: mine.chmod(0o666)):
        tamper()
        again = _compile(fn, (x,), "1", monkeypatch)
        again.wait_codegen()
        assert again.codegen_status == "loaded", again.codegen_status
        assert mine.stat().st_mode & 0o022 == 0
        _assert_same(again(x), fn(x))
    cached = _compile(fn, (x,), "1", monkeypatch)
    cached.wait_codegen()
    assert cached.codegen_status == "cached"


def test_auto_mode_compiles_on_second_run(monkeypatch):
    x = jnp.asarray(np.linspace(-3, 3, 1000, dtype=np.float32))
    c = _compile(lambda x: jnp.cos(x) * x + 1, (x,), "auto", monkeypatch)
    first = c(x)
    assert c.codegen_status == "pending" and c.tier == "base"
    second = c(x)
    c.wait_codegen()
    assert c.codegen_status == "loaded" and c.tier == "upper"
    _assert_same(first, second)
    _assert_same(first, c(x))


def test_mode_off_never_compiles(cache_dir, monkeypatch):
    x = jnp.ones((100,), jnp.float32)
    c = _compile(lambda x: jnp.exp(x) + 2, (x,), "0", monkeypatch)
    for _ in range(3):
        c(x)
    c.wait_codegen()
    assert c.tier == "base" and c.codegen_status == "off"
    assert not cache_dir.exists() or not list(cache_dir.glob("*.so"))


def test_missing_compiler_stays_on_base_tier(monkeypatch):
    monkeypatch.setenv("TINYXLA_CC", "/nonexistent/cc")
    x = jnp.asarray(np.linspace(-3, 3, 1000, dtype=np.float32))
    c = _compile(lambda x: jnp.exp(x) - 1, (x,), "1", monkeypatch)
    c.wait_codegen()
    assert c.tier == "base" and c.codegen_status == "failed: no C compiler found"
    np.testing.assert_allclose(np.asarray(c(x)), np.expm1(np.asarray(x)), rtol=1e-5, atol=1e-6)


def test_failing_compiler_stays_on_base_tier(monkeypatch):
    monkeypatch.setenv("TINYXLA_CC", shutil.which("false") or "/bin/false")
    x = jnp.asarray(np.linspace(-3, 3, 1000, dtype=np.float32))
    c = _compile(lambda x: jnp.exp(x) + 5, (x,), "1", monkeypatch)
    c.wait_codegen()
    assert c.tier == "base" and c.codegen_status.startswith("failed: the compiler failed")
    np.testing.assert_allclose(np.asarray(c(x)), np.exp(np.asarray(x)) + 5, rtol=1e-6)


def test_killed_compiler_stays_on_base_tier(tmp_path, monkeypatch):
    script = tmp_path / "killedcc"
    script.write_text("#!/bin/sh\nkill -9 $$\n")  # as the OOM killer would end it
    script.chmod(0o755)
    monkeypatch.setenv("TINYXLA_CC", str(script))
    x = jnp.asarray(np.linspace(-3, 3, 1000, dtype=np.float32))
    c = _compile(lambda x: jnp.exp(x) + 6, (x,), "1", monkeypatch)
    c.wait_codegen()
    assert c.tier == "base" and c.codegen_status == "failed: the compiler was killed by signal 9"
    np.testing.assert_allclose(np.asarray(c(x)), np.exp(np.asarray(x)) + 6, rtol=1e-6)


@pytest.mark.parametrize("compiler", ["/nonexistent/cc", "killed"])
def test_fallback_warns_once(tmp_path, compiler):
    if compiler == "killed":
        script = tmp_path / "killedcc"
        script.write_text("#!/bin/sh\nkill -9 $$\n")
        script.chmod(0o755)
        compiler = str(script)
    program = ("import numpy as np, tinyxla as jax, tinyxla.numpy as jnp\n"
               "x = jnp.arange(64.0)\n"
               "for f in (jnp.sin, jnp.cos, jnp.tanh):\n"
               "    c = jax.jit(lambda x: f(x) * 2 + 1).lower(x).compile()\n"
               "    c.wait_codegen()\n"
               "    assert c.tier == 'base'\n"
               "    np.testing.assert_allclose(np.asarray(c(x)), f(np.arange(64.0)) * 2 + 1,"
               " rtol=1e-5)\n")
    env = dict(os.environ, TINYXLA_CC=compiler, TINYXLA_CODEGEN="1",
               TINYXLA_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-c", program], env=env, timeout=120,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("tinyxla: warning: the upper tier is unavailable") == 1, run.stderr
    why = "no C compiler found" if compiler.startswith("/nonexistent") else "killed by signal 9"
    assert why in run.stderr


def test_hanging_compiler_is_killed(tmp_path, monkeypatch):
    pidfile = tmp_path / "pid"
    script = tmp_path / "slowcc"
    # A driver that starts a child (as cc starts cc1) and hangs.
    script.write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {pidfile}\nwait\n")
    script.chmod(0o755)
    monkeypatch.setenv("TINYXLA_CC", str(script))
    monkeypatch.setenv("TINYXLA_CODEGEN_TIMEOUT", "1")
    x = jnp.ones((100,), jnp.float32)
    c = _compile(lambda x: jnp.sin(x) + 7, (x,), "1", monkeypatch)
    c.wait_codegen()
    assert c.tier == "base" and c.codegen_status == "failed: the compiler timed out"
    child = int(pidfile.read_text())
    for _ in range(100):  # the kill is asynchronous to the reaping of the grandchild
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child}/stat") as f:
            if f.read().split()[2] == "Z":  # killed, waiting for init to reap it
                break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the compiler's child survived the timeout")
    np.testing.assert_allclose(np.asarray(c(x)), np.sin(1.0) + 7, rtol=1e-6)


def _assert_close(a, b, rtol):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        # Sums fold in another order than the base tier's: equal up to rounding.
        np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * np.nanmax(np.abs(x), initial=1))


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
@pytest.mark.parametrize("shape,axes", [((1000,), 0), ((37, 200), 1), ((300, 16), 0),
                                        ((5, 40, 7), 1), ((3, 1, 50_000), (1, 2)),
                                        ((2_000_000,), 0), ((10, 6000), 0)])
def test_reductions_close_on_both_tiers(dtype, shape, axes, monkeypatch):
    rng = np.random.default_rng(6)
    x = jnp.asarray(rng.standard_normal(shape)).astype(dtype)

    def f(x):
        y = jnp.exp(-x * x) * 2 + x
        return y.sum(axes), jnp.max(y * 3, axes), jnp.min(jnp.sin(x), axes)

    base, upper = _both_tiers(f, (x,), monkeypatch)
    _assert_close(base, upper, 1e-5 if dtype == jnp.float32 else 1e-12)
    h = np.asarray(x).astype(np.float64)
    np.testing.assert_allclose(np.asarray(upper[0]), (np.exp(-h * h) * 2 + h).sum(axes),
                               rtol=1e-4, atol=1e-3 * np.sqrt(h.size))


def test_bool_any_all_same_on_both_tiers(monkeypatch):
    x = jnp.asarray(np.random.default_rng(6).standard_normal((300, 70)).astype(np.float32))
    f = lambda x: (jnp.any(x > 2.5, axis=1), jnp.all(x > -3, axis=0), jnp.any(x > 9),
                   jnp.all(jnp.abs(x) < 5))
    base, upper = _both_tiers(f, (x,), monkeypatch)
    _assert_same(base, upper)
    np.testing.assert_array_equal(upper[0], np.any(np.asarray(x) > 2.5, axis=1))


def test_reductions_nan_and_norm(monkeypatch):
    x = np.random.default_rng(7).standard_normal((1000, 10)).astype(np.float32)
    x[3, 4] = np.nan
    xs = jnp.asarray(x)
    base, upper = _both_tiers(lambda x: (jnp.max(x, 0), jnp.min(x, 0), x.sum(0)), (xs,),
                              monkeypatch)
    _assert_close(base, upper, 1e-5)
    assert np.isnan(np.asarray(upper[0])[4]) and np.isnan(np.asarray(upper[1])[4])
    norm = lambda X: (X - X.mean(0)) / X.std(0)  # noqa: E731
    clean = jnp.asarray(np.nan_to_num(x))
    base, upper = _both_tiers(norm, (clean,), monkeypatch)
    _assert_close(base, upper, 1e-5)


def test_compiler_killed_at_exit(tmp_path):
    pidfile = tmp_path / "pid"
    script = tmp_path / "slowcc"
    script.write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {pidfile}\nwait\n")
    script.chmod(0o755)
    program = ("import time, tinyxla as jax, tinyxla.numpy as jnp\n"
               "c = jax.jit(lambda x: jnp.cos(x) + 3).lower(jnp.ones(8)).compile()\n"
               f"while not __import__('os').path.exists({str(pidfile)!r}): time.sleep(0.01)\n")
    env = dict(os.environ, TINYXLA_CC=str(script), TINYXLA_CODEGEN="1",
               TINYXLA_CODEGEN_TIMEOUT="100", TINYXLA_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-c", program], env=env, timeout=60, check=True)
    child = int(pidfile.read_text())
    for _ in range(400):  # generous: a loaded machine reaps slowly
        try:
            with open(f"/proc/{child}/stat") as f:
                if f.read().split()[2] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the compiler's child outlived the process")


def test_forked_child_builds_its_own_modules(tmp_path):
    program = """
import multiprocessing as mp
import tinyxla as jax, tinyxla.numpy as jnp
x = jnp.ones(100)
c = jax.jit(lambda x: jnp.sin(x) * 2).lower(x).compile()
c.wait_codegen()
assert c.tier == "upper", c.codegen_status
e = jax.jit(lambda x: jnp.exp(x) * 5).lower(x).compile()  # building while we fork
def child(q):
    d = jax.jit(lambda x: jnp.cos(x) * 3).lower(x).compile()
    d.wait_codegen()
    e.wait_codegen()  # the parent's build does not reach the child: it builds again
    q.put((d.tier + e.tier, float(d(x)[0])))
ctx = mp.get_context("fork")
q = ctx.Queue()
p = ctx.Process(target=child, args=(q,))
p.start()
tier, value = q.get(timeout=60)
p.join()
assert tier == "upperupper" and abs(value - 3 * 0.5403023) < 1e-5, (tier, value)
"""
    env = dict(os.environ, TINYXLA_CODEGEN="1", TINYXLA_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-c", program], env=env, timeout=120, check=True)


@pytest.mark.parametrize("dtype", [jnp.complex64, jnp.complex128])
def test_complex_ops_same_on_both_tiers(dtype, monkeypatch):
    rng = np.random.default_rng(8)
    x = jnp.asarray(rng.standard_normal((31, 20)) + 1j * rng.standard_normal((31, 20))).astype(dtype)
    y = jnp.asarray(rng.standard_normal((20,)) - 2j).astype(dtype)

    def f(x, y):
        return x * y + jnp.exp(x) - jnp.conj(y) / (x + 3), jnp.abs(x * 2) + jnp.real(y), x == y

    _assert_same(*_both_tiers(f, (x, y), monkeypatch))


# ---- whole loops: a while_loop of one-element values runs as one generated function -----

@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64, jnp.float16])
def test_scalar_loops_run_whole_on_the_upper_tier(dtype, monkeypatch):
    def f(x, n):
        decay = jax.lax.fori_loop(0, 1000, lambda i, c: c * dtype(0.999) + dtype(1), x)
        # Tile-function ops (tanh, exp), a select and a data-dependent trip count.
        wave = jax.lax.fori_loop(0, 50, lambda i, c: jnp.tanh(c + i.astype(dtype)) * jnp.exp(-c), x)
        halve = jax.lax.while_loop(lambda c: c[1] > 1, lambda c: (jnp.where(c[1] % 2 == 0, c[0], -c[0]) + 1,
                                                                   c[1] // 2), (x, n))
        return decay, wave, halve

    args = (dtype(0.25), jnp.int32(1_000_003))
    base, upper = _both_tiers(f, args, monkeypatch)
    _assert_same(base, upper)
    src = _compile(f, args, "1", monkeypatch).codegen_source
    assert src.count("while (go)") == 3


def test_integer_and_permuted_carry_loops_on_the_upper_tier(monkeypatch):
    def fib(n):  # the carry's elements swap places each trip; int32 and uint8 wrap
        return jax.lax.fori_loop(0, n, lambda i, c: (c[1], c[0] + c[1], c[2] * jnp.uint8(3) + jnp.uint8(1),
                                                      c[3] ^ (c[1] > 100)),
                                 (jnp.int32(0), jnp.int32(1), jnp.uint8(0), jnp.bool_(False)))

    base, upper = _both_tiers(fib, (jnp.int32(60),), monkeypatch)
    _assert_same(base, upper)
    a, b = 0, 1
    for _ in range(60):
        a, b = b, (a + b + 2**31) % 2**32 - 2**31
    assert int(upper[0]) == a and int(upper[1]) == b


def test_ten_million_trip_loop(monkeypatch):
    f = lambda x: jax.lax.fori_loop(0, 10_000_000, lambda i, c: (c[0] + 1, c[1] * 0.9999999 + 1.0), (0, x))
    upper = _compile(f, (1.0,), "1", monkeypatch)
    upper.wait_codegen()
    assert upper.tier == "upper"
    count, value = upper(1.0)
    assert int(count) == 10_000_000
    # The fixed point 1 / (1 - 0.9999999) = 1e7, approached as 1 - exp(-1) of the way.
    assert float(value) == pytest.approx(1e7 * (1 - np.exp(-1.0)), rel=1e-4)


def test_a_long_first_run_switches_to_the_generated_loop(monkeypatch):
    # Auto mode: the first call asks for the upper tier after some trips and finishes the
    # loop there, with the base tier's bits.
    f = lambda x: jax.lax.fori_loop(0, 3_000_000, lambda i, c: (c[0] + 1, c[1] * 0.999 + 1.0), (0, x))
    auto = _compile(f, (2.0,), "auto", monkeypatch)
    count, value = auto(2.0)
    assert int(count) == 3_000_000
    # The body's own kernels may have run generated code before the whole loop did.
    assert auto._executable.codegen_kernel_runs >= 1
    before = auto._executable.codegen_kernel_runs
    jax.block_until_ready(auto(2.0))
    assert auto._executable.codegen_kernel_runs - before == 1  # the whole loop, one call
    short = lambda x: jax.lax.fori_loop(0, 5000, lambda i, c: c * 0.999 + 1.0, x)
    _assert_same(_compile(short, (2.0,), "0", monkeypatch)(2.0), _compile(short, (2.0,), "auto", monkeypatch)(2.0))
    assert float(value) == pytest.approx(1000.0, rel=1e-5)


def test_loops_with_arrays_stay_on_the_base_tier(monkeypatch):
    f = lambda x: jax.lax.fori_loop(0, 20, lambda i, c: c * 0.5 + jnp.sum(c), x)
    x = jnp.arange(4.0)
    upper = _compile(f, (x,), "1", monkeypatch)
    upper.wait_codegen()
    assert upper.codegen_status == "none"  # nothing outside the loop to generate either
    _assert_same(_compile(f, (x,), "0", monkeypatch)(x), upper(x))


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.uint32])
def test_integer_sums_same_on_both_tiers(dtype, monkeypatch):
    rng = np.random.default_rng(7)
    info = np.iinfo(np.dtype(dtype))
    x = jnp.asarray(rng.integers(info.min, info.max, (300, 70), dtype=np.dtype(dtype)))

    def f(x):
        # Wrapping sums (full and along each axis) and a count of a predicate.
        return (jnp.sum(x * 3), jnp.sum(x + 1, axis=0), jnp.sum(x ^ 5, axis=1),
                jnp.sum((x > 7).astype(dtype)))

    base, upper = _both_tiers(f, (x,), monkeypatch)
    _assert_same(base, upper)
    h = np.asarray(x)
    total = np.asarray(upper[0])  # int64 with x64 on, as jnp.sum promotes
    np.testing.assert_array_equal(total, np.sum(h * np.array(3, h.dtype), dtype=total.dtype))
    np.testing.assert_array_equal(np.asarray(upper[3]), np.sum(h > 7))


# ---- loop bodies over arrays: their fused kernels are generated C ----------------------------

def _generated_runs_per_call(compiled, args):
    """Fused-kernel runs of generated code (loop bodies' included) in one call."""
    compiled.wait_codegen()
    before = compiled._executable.codegen_kernel_runs
    result = jax.block_until_ready(compiled(*args))
    return compiled._executable.codegen_kernel_runs - before, result


def test_a_loop_body_reading_a_broadcast_carry_runs_generated_code(monkeypatch):
    """A lane constant made by a broadcast (stride 0) is copied dense when the loop starts,
    so the body's kernels, which read their parameters dense, run on every trip."""
    def f(s, x):
        rate = jnp.full(x.shape, s)  # passes through the loop unchanged

        def body(c):
            return c[0], c[1] * 0.5 + c[0]
        return jax.lax.while_loop(lambda c: jnp.sum((c[1] < 2.9).astype(jnp.int32)) > 0, body,
                                  (rate, x))[1]

    args = (jnp.float32(1.5), jnp.asarray(np.linspace(-1, 1, 5000, dtype=np.float32)))
    upper = _compile(f, args, "1", monkeypatch)
    runs, result = _generated_runs_per_call(upper, args)
    want = np.asarray(args[1])
    trips = 0
    while (want < 2.9).any():
        want, trips = want * np.float32(0.5) + np.float32(1.5), trips + 1
    assert trips == 6 and runs >= trips  # the body's kernel on every trip
    _assert_same(_compile(f, args, "0", monkeypatch)(*args), result)
    np.testing.assert_array_equal(np.asarray(result), want)


def test_a_body_of_one_trip_per_run_is_generated_in_auto_mode(monkeypatch):
    """A cond's branch (a loop region of one trip) builds its module on its second trip,
    in a later run: in auto mode its kernels then run generated code, as when built at
    compile time."""
    def f(p, x):
        def heavy(x):
            for _ in range(3):
                x = jnp.tanh(jnp.sin(x) * 2 + jnp.cos(x * 3)) * 0.9
            return x
        return jax.lax.cond(p, heavy, lambda x: jnp.sqrt(jnp.abs(x)) + jnp.log1p(x * x) - x, x)

    args = (jnp.bool_(True), jnp.asarray(np.linspace(-2, 2, 3000, dtype=np.float32)))
    auto = _compile(f, args, "auto", monkeypatch)
    for _ in range(2):
        jax.block_until_ready(auto(*args))
    auto_runs, result = _generated_runs_per_call(auto, args)
    eager = _compile(f, args, "1", monkeypatch)
    eager_runs, _ = _generated_runs_per_call(eager, args)
    assert auto_runs == eager_runs >= 1
    _assert_same(_compile(f, args, "0", monkeypatch)(*args), result)
    h = np.asarray(args[1])
    for _ in range(3):
        h = np.tanh(np.sin(h) * 2 + np.cos(h * 3)) * 0.9
    np.testing.assert_allclose(np.asarray(result), h, rtol=1e-5, atol=1e-6)
