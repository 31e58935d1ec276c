"""Control-flow figures, tinyxla against jax.jit in one run (issue 12):

- ``fori_loop(0, n, lambda i, x: x * 0.999 + 1.0, 0.0)`` under jit: µs per trip (n = 1e6);
- an Elman RNN in ``scan`` (hidden 256, batch 32, T = 200, tanh): jit forward, and
  ``jit(grad)`` of a loss through it (ms);
- ``jit(vmap)`` of a ``while_loop`` Newton solve for sqrt over 1e5 inputs, whose trip
  counts depend on the data (ms);
- ``associative_scan(add, x)`` on 1e7 float32 under jit, and ``jnp.cumsum`` of the same (ms);
- the first call (trace + compile + run) of a jitted RNN step scan (ms).

    python bench/bench_control_flow.py [--quick]
    python bench/run.py --only cf_          # the same rows in run.py's table

Each figure is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after two warm-up calls; results are waited for inside the loop. Measured, not
asserted.
"""
import functools
import importlib
from typing import Any, Callable

import numpy as np

from run import Metric, compare_figures, median_time  # bench/ is on sys.path as a script

FORI_TRIPS = 1_000_000
HIDDEN, BATCH, STEPS = 256, 32, 200
NEWTON_N = 100_000
ASSOC_N = 10_000_000
FIGURES = (
    "fori_loop per trip (µs)", "RNN scan forward, jit (ms)", "RNN scan jit(grad) (ms)",
    "vmap while Newton sqrt 1e5 (ms)", "associative_scan add 1e7 (ms)", "cumsum 1e7 (ms)",
    "first call, RNN step scan (ms)")


def _rnn(jnp: Any, lax: Any) -> Callable[..., Any]:
    def rnn(W, U, h0, xs):
        def step(h, x):
            h = jnp.tanh(h @ W + x @ U)
            return h, h
        return lax.scan(step, h0, xs)
    return rnn


def _data() -> dict[str, np.ndarray]:
    rng = np.random.RandomState(0)
    return {"W": (rng.randn(HIDDEN, HIDDEN) / np.sqrt(HIDDEN)).astype(np.float32),
            "U": (rng.randn(HIDDEN, HIDDEN) / np.sqrt(HIDDEN)).astype(np.float32),
            "h0": np.zeros((BATCH, HIDDEN), np.float32),
            "xs": rng.randn(STEPS, BATCH, HIDDEN).astype(np.float32),
            "newton": rng.uniform(0.1, 1e4, NEWTON_N).astype(np.float32),
            "assoc": rng.standard_normal(ASSOC_N).astype(np.float32)}


def cases(jax: Any, jnp: Any, lax: Any) -> dict[str, Callable[[], Any]]:
    """Zero-argument functions running each figure's computation to completion (after
    one call each, so the compiled ones are warm), by figure name."""
    d = {k: jnp.asarray(v) for k, v in _data().items()}
    rnn = _rnn(jnp, lax)
    fori = jax.jit(lambda x: lax.fori_loop(0, FORI_TRIPS, lambda i, x: x * 0.999 + 1.0, x))
    fwd = jax.jit(lambda W, U, h0, xs: rnn(W, U, h0, xs)[0])
    loss = lambda W, U, h0, xs: jnp.sum(rnn(W, U, h0, xs)[1] ** 2)
    grad = jax.jit(jax.grad(loss, argnums=(0, 1)))

    def newton(a):
        return lax.while_loop(lambda c: jnp.abs(c * c - a) > 1e-3 * a,
                              lambda c: 0.5 * (c + a / c), a)
    vnewton = jax.jit(jax.vmap(newton))
    assoc = jax.jit(lambda x: lax.associative_scan(jnp.add, x))
    cumsum = jax.jit(jnp.cumsum)
    args = (d["W"], d["U"], d["h0"], d["xs"])

    def first_call():  # a new function, and no cache of earlier compiles: trace and compile
        jax.clear_caches()
        step = lambda h, x: (jnp.tanh(h @ d["W"] + x @ d["U"]), None)
        return jax.jit(lambda h, xs: lax.scan(step, h, xs)[0])(d["h0"], d["xs"][:4])

    fns = dict(zip(FIGURES, (
        lambda: fori(0.0).block_until_ready(),
        lambda: fwd(*args).block_until_ready(),
        lambda: jax.block_until_ready(grad(*args)),
        lambda: vnewton(d["newton"]).block_until_ready(),
        lambda: assoc(d["assoc"]).block_until_ready(),
        lambda: cumsum(d["assoc"]).block_until_ready(),
        lambda: first_call().block_until_ready())))
    for f in fns.values():
        f()
    return fns


# Per figure: the unit scale of seconds per call, and the loop's trips per call.
SCALES = {FIGURES[0]: (1e6, FORI_TRIPS)}


def figures(jax: Any, jnp: Any, quick: bool) -> dict[str, float]:
    fns = cases(jax, jnp, jax.lax)
    out = {}
    for name, fn in fns.items():
        scale, per_call = SCALES.get(name, (1e3, 1))
        out[name] = median_time(fn, quick) * scale / per_call
    return out


@functools.lru_cache(maxsize=None)
def library_cases(name: str) -> dict[str, Callable[[], Any]]:
    """``cases`` of the library ``name`` ("tinyxla" or "jax"), built once (run.py's rows)."""
    lib = importlib.import_module(name)
    return cases(lib, importlib.import_module(f"{name}.numpy"), lib.lax)


def metrics() -> list[Metric]:
    """The figures as rows of run.py's table (``--only cf_``): tinyxla and jax only."""
    def make(label):
        return lambda lib, d: (library_cases(lib.name)[label]
                               if lib.name in ("tinyxla", "jax") else None)
    rows = []
    for i, label in enumerate(FIGURES):
        scale, per_call = SCALES.get(label, (1e3, 1))
        name, unit = label.rsplit(" (", 1)
        rows.append(Metric(f"cf_{i}", f"{name} (compiled)", unit.rstrip(")"), make(label),
                           scale=scale, per_call=per_call))
    return rows


def main() -> None:
    ours, peers = compare_figures(figures)
    key_a, key_c = "associative_scan add 1e7 (ms)", "cumsum 1e7 (ms)"
    print(f"associative_scan / cumsum: tinyxla {ours[key_a] / ours[key_c]:.2f}" +
          "".join(f", {p} {r[key_a] / r[key_c]:.2f}" for p, r in peers.items()))


if __name__ == "__main__":
    main()
