"""Host-callback figures, tinyxla against jax in one run (issue 17):

- ``jax.debug.print("i={}", i)`` inside a jitted ``fori_loop`` of 10^4 trips, µs per print,
  with stdout sent to a sink; beside it, the same prints done by a plain Python loop
  (``sys.stdout.write("i={}".format(v) + "\\n")`` over the trips' values as numpy int32
  scalars: the print itself), and the difference: what a print costs beyond formatting
  and writing (the goal: at most 2 µs);
- ``jax.pure_callback`` of the identity on a float32 scalar under jit, µs per round trip
  (call, callback, result waited for; the goal: at most 1/3 of JAX's).

    python bench/bench_callbacks.py [--quick]
    python bench/run.py --only cb_          # the same rows in run.py's table

Medians of repeats of loops calibrated as in run.py. Measured, not asserted.
"""
import functools
import importlib
import io
import sys
from typing import Any, Callable

import numpy as np

from run import Metric, compare_figures, median_time  # bench/ is on sys.path as a script

TRIPS = 10_000
FIGURES = ("debug.print in jit fori_loop (µs/print)", "Python print of the same (µs/print)",
           "debug.print beyond the print (µs)", "pure_callback round trip, jit scalar (µs)")


class _Sink(io.TextIOBase):
    """A stdout that keeps nothing (the prints' cost without a terminal's)."""

    def write(self, s):
        return len(s)


def _silenced(fn: Callable[[], Any]) -> Callable[[], Any]:
    def run():
        old, sys.stdout = sys.stdout, _Sink()
        try:
            return fn()
        finally:
            sys.stdout = old
    return run


_VALUES = list(np.arange(TRIPS, dtype=np.int32))


def python_prints() -> None:
    """The loop's prints done by Python: the same text from the same values."""
    write = sys.stdout.write
    for v in _VALUES:
        write("i={}".format(v) + "\n")


def cases(jax: Any, jnp: Any, lax: Any) -> dict[str, Callable[[], Any]]:
    """Zero-argument functions running each timed computation to completion (warm)."""
    loop = jax.jit(lambda n: lax.fori_loop(
        0, TRIPS, lambda i, c: (jax.debug.print("i={}", i), c + 1)[1], n))

    def printed():
        out = loop(0)
        jax.effects_barrier()
        return out

    identity = jax.jit(lambda x: jax.pure_callback(
        lambda v: v, jax.ShapeDtypeStruct((), jnp.float32), x))
    x = jnp.float32(1.5)
    fns = {FIGURES[0]: _silenced(printed), FIGURES[1]: _silenced(python_prints),
           FIGURES[3]: lambda: identity(x).block_until_ready()}
    for f in fns.values():
        f()
    return fns


def figures(jax: Any, jnp: Any, quick: bool) -> dict[str, float]:
    fns = cases(jax, jnp, jax.lax)
    out = {name: median_time(fn, quick) * 1e6 / (TRIPS if name != FIGURES[3] else 1)
           for name, fn in fns.items()}
    out[FIGURES[2]] = out[FIGURES[0]] - out[FIGURES[1]]
    return {name: out[name] for name in FIGURES}


@functools.lru_cache(maxsize=None)
def library_cases(name: str) -> dict[str, Callable[[], Any]]:
    """``cases`` of the library ``name`` ("tinyxla" or "jax"), built once (run.py's rows)."""
    lib = importlib.import_module(name)
    return cases(lib, importlib.import_module(f"{name}.numpy"), lib.lax)


@functools.lru_cache(maxsize=None)
def python_print_us() -> float:
    """µs per print of ``python_prints`` (median of run.py's repeats), measured once."""
    return median_time(_silenced(python_prints), False) * 1e6 / TRIPS


class _BeyondThePrint(Metric):
    """The debug.print loop's µs per print less the Python loop's (``python_print_us``)."""

    def value(self, seconds):
        return seconds / TRIPS * 1e6 - python_print_us()


def metrics() -> list[Metric]:
    """The timed figures as rows of run.py's table (``--only cb_``): tinyxla and jax only,
    the Python print row for every library alike."""
    def make(label):
        return lambda lib, d: (library_cases(lib.name)[label]
                               if lib.name in ("tinyxla", "jax") else None)
    rows = []
    for i, label in enumerate(FIGURES):
        name, unit = label.rsplit(" (", 1)
        unit = unit.rstrip(")")
        if label == FIGURES[2]:
            rows.append(_BeyondThePrint(f"cb_{i}", name, unit, make(FIGURES[0])))
            continue
        per_call = 1 if label == FIGURES[3] else TRIPS
        rows.append(Metric(f"cb_{i}", name, unit, make(label), scale=1e6, per_call=per_call))
    return rows


def main() -> None:
    ours, peers = compare_figures(figures)
    for p, r in peers.items():
        print(f"pure_callback round trip: tinyxla / {p} = "
              f"{ours[FIGURES[3]] / r[FIGURES[3]]:.3f} (goal <= 0.333)")
    print(f"debug.print beyond the print: {ours[FIGURES[2]]:.2f} µs (goal <= 2)")


if __name__ == "__main__":
    main()
