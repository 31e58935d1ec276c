"""Scatter-add figures: 1e6 random updates (duplicates ~10 per row) into 1e5 rows, compiled
``x.at[idx].add(v)`` against jax.jit, numpy's unbuffered ``np.add.at`` on a copy and torch's
``index_add``; once into a vector of 1e5 float32 and once into 1e5 rows of 16.

    python bench/bench_scatter.py [--quick]     # the same as run.py --only scatter

Its metrics are part of bench/run.py's table (run.py imports metrics() from here).
Measured, not asserted.
"""
import sys

import numpy as np

ROWS, UPDATES = 100_000, 1_000_000
_DATA = {}


def _operands(width):
    """(x, idx, v) of the scatter into rows `width` wide (0: a vector), made once."""
    if width not in _DATA:
        rng = np.random.default_rng(0)
        tail = (width,) if width else ()
        _DATA[width] = (rng.standard_normal((ROWS,) + tail).astype(np.float32),
                        rng.integers(0, ROWS, UPDATES).astype(np.int32),
                        rng.standard_normal((UPDATES,) + tail).astype(np.float32))
    return _DATA[width]


def _scatter_add(width):
    def make(lib, d):
        x, idx, v = (lib.put(a) for a in _operands(width))
        if lib.name == "numpy":
            def run():
                y = x.copy()
                np.add.at(y, idx, v)
                return y
            return run
        if lib.name == "torch":
            import torch
            i = idx.to(torch.int64)
            return lambda: x.index_add(0, i, v)
        f = lib.jit(lambda a, i, u: a.at[i].add(u))
        return lambda: lib.block(f(x, idx, v))

    def reference(d):
        x, idx, v = _operands(width)
        y = x.astype(np.float64)
        np.add.at(y, idx, v)
        return y
    return make, reference


def metrics():
    from run import Metric  # bench/ is on sys.path when run.py runs
    rows = []
    for name, width, label in (
            ("scatter_add_1e5", 0, "scatter-add 1e6 into 1e5 f32, jit"),
            ("scatter_add_rows", 16, "scatter-add 1e6 rows into (1e5,16) f32, jit")):
        make, reference = _scatter_add(width)
        rows.append(Metric(name, label, "ms", make, ref=reference, rtol=1e-4))
    return rows


if __name__ == "__main__":
    import run
    run.main(["--only", "scatter"] + sys.argv[1:])
