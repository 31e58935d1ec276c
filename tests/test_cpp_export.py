"""Export to C++: a jitted function's graph text (``jit(f).lower(*args).as_text()``) parses
back to the same graph, and examples/cpp/run_exported (linked with libtinyxla only) runs
it on .npy inputs with the Python jit's results."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import _core, lax
from tinyxla._src.interpreters import lowering

from conftest import run_checked

_rng = np.random.default_rng(0)
_W = _rng.standard_normal((16, 8)).astype(np.float32)

CASES = {
    "elementwise": (lambda x: jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x),
                    [_rng.standard_normal(1000).astype(np.float32)]),
    "norm": (lambda X: (X - X.mean(0)) / X.std(0),
             [_rng.standard_normal((100, 16)).astype(np.float32)]),
    # A closed-over matrix becomes a constant printed as hex bytes.
    "matmul_const": (lambda x: jnp.maximum(x @ _W, 0),
                     [_rng.standard_normal((5, 16)).astype(np.float32)]),
    "two_outputs_int": (lambda a, b: (a * b + 3, (a > b).astype(jnp.int32).sum()),
                        [_rng.integers(-50, 50, (7, 9)).astype(np.int32),
                         _rng.integers(-50, 50, (7, 9)).astype(np.int32)]),
    "bool_and_f16": (lambda x, m: jnp.where(m, x * 2, -x).astype(jnp.float16),
                     [_rng.standard_normal((4, 6)).astype(np.float32),
                      _rng.random((4, 6)) > 0.5]),
    # while_loop regions holding their bodies: a scan whose body runs a fori_loop.
    "loop_regions": (lambda c, xs: lax.scan(
        lambda c, x: (c * 0.5 + x, lax.fori_loop(0, 3, lambda i, d: d * 1.5 + c, x)), c, xs),
        [_rng.standard_normal(4).astype(np.float32),
         _rng.standard_normal((6, 4)).astype(np.float32)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_text_round_trips(name):
    fn, args = CASES[name]
    text = jax.jit(fn).lower(*args).as_text()
    graph = _core.parse_graph(text)
    assert graph.text() == text
    # A graph parsed back compiles and runs like the original.
    compiled = jax.jit(fn).lower(*args).compile()
    reparsed = lowering.GraphExecutable(compiled._executable.closed, _core.compile(graph))
    for w, g in zip(jax.tree_util.tree_leaves(compiled(*args)), reparsed(args)):
        np.testing.assert_array_equal(np.asarray(w), np.asarray(g))


@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_graph_runs_from_cpp(name, cpp_examples, clean_env, tmp_path):
    fn, args = CASES[name]
    text = jax.jit(fn).lower(*args).as_text()
    (tmp_path / "f.graph").write_text(text)
    paths = []
    for i, a in enumerate(args):
        paths.append(tmp_path / f"in{i}.npy")
        np.save(paths[-1], a)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    clean_env["TINYXLA_CACHE_DIR"] = str(tmp_path / "cache")
    run_checked([cpp_examples / "run_exported", tmp_path / "f.graph", *paths, "--out", out_dir],
                env=clean_env)
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    for i, w in enumerate(want):
        got = np.load(out_dir / f"out{i}.npy")
        w = np.asarray(w)
        assert got.dtype == w.dtype and got.shape == w.shape
        np.testing.assert_allclose(got.astype(np.float64), w.astype(np.float64), rtol=1e-6,
                                   atol=1e-6)
    assert not (out_dir / f"out{len(want)}.npy").exists()


def test_run_exported_reports_bad_input(cpp_examples, clean_env, tmp_path):
    import subprocess
    (tmp_path / "bad.graph").write_text("%0 = parameter(0) : f32[3]\n%1 = frobnicate(%0) : f32[3]\n")
    np.save(tmp_path / "x.npy", np.ones(3, np.float32))
    proc = subprocess.run([cpp_examples / "run_exported", tmp_path / "bad.graph",
                           tmp_path / "x.npy"], capture_output=True, text=True, env=clean_env)
    assert proc.returncode == 1
    assert proc.stderr.startswith("run_exported: ") and "line 2" in proc.stderr


def test_run_exported_refuses_malformed_npy(cpp_examples, clean_env, tmp_path):
    import subprocess
    (tmp_path / "f.graph").write_text("%0 = parameter(0) : f32[3]\n%1 = exp(%0) : f32[3]\nreturn %1\n")
    np.save(tmp_path / "good.npy", np.ones(3, np.float32))
    good = (tmp_path / "good.npy").read_bytes()
    header_end = good.index(b"\n") + 1
    bad = {
        "truncated_data": good[:-4],
        "truncated_header": good[:20],
        "negative_dim": good.replace(b"(3,)", b"(-3,"),
        "huge_dims": good.replace(b"'shape': (3,), }", b"'shape': (4294967296, 4294967296), }"),
        "overflowing_dim": good.replace(b"'shape': (3,), }", b"'shape': (99999999999999999999,), }"),
        "no_colon": good.replace(b"'descr':", b"'descr' "),
        "bad_version": good[:6] + b"\x09" + good[7:],
        "header_past_end": good[:8] + b"\xff\xff" + good[10:header_end],
    }
    for name, data in bad.items():
        (tmp_path / f"{name}.npy").write_bytes(data)
        proc = subprocess.run([cpp_examples / "run_exported", tmp_path / "f.graph",
                               tmp_path / f"{name}.npy", "--out", tmp_path],
                              capture_output=True, text=True, env=clean_env)
        assert proc.returncode == 1, (name, proc.returncode, proc.stderr)
        assert proc.stderr.startswith("run_exported: "), (name, proc.stderr)
