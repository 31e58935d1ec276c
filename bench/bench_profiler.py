"""The profiler's cost (issue 17): tinyxla's compiled MLP train step (bench_mlp.py's) and
run.py's dispatch rows (eager ``x + 1``, jitted ``x + 1``, one element) with the profiler
off and on.

    python bench/bench_profiler.py [--quick]
    python bench/run.py --only profiler      # the same

Each figure is the median of repeats (7, or 3 with --quick) of a loop calibrated to at
least 0.2 s (0.05 s); the off and on loops alternate, and each "on" loop runs inside its
own recording session (spans are kept in memory, then dropped, not written), so what is
measured is the recording itself. Measured, not asserted.
"""
import argparse
import statistics
import time

import numpy as np

from run import DISPATCH_OPS, calibrate  # bench/ is on sys.path when run as a script


def _rows(tinyxla, tnp):
    from tinyxla.example_libraries import optimizers, stax
    import bench_mlp
    mlp = bench_mlp.build(tinyxla, tnp, stax, optimizers)[0]["compiled step (ms)"]
    x = tnp.asarray(np.ones(1, np.float32))
    f = tinyxla.jit(lambda x: x + 1)

    def dispatch():
        for _ in range(DISPATCH_OPS):
            y = x + 1
        y.block_until_ready()

    def jit_dispatch():
        for _ in range(DISPATCH_OPS):
            y = f(x)
        y.block_until_ready()

    # (figure, function, seconds per call -> figure's unit)
    return [("MLP compiled step (ms)", mlp, 1e3),
            ("dispatch, eager x + 1 (µs/op)", dispatch, 1e6 / DISPATCH_OPS),
            ("jit dispatch, x + 1 (µs/call)", jit_dispatch, 1e6 / DISPATCH_OPS)]


def measure(quick: bool) -> dict[str, tuple[float, float]]:
    """{figure: (profiler off, profiler on)}."""
    import tinyxla
    import tinyxla.numpy as tnp
    from tinyxla import _core
    repeats, min_time = (3, 0.05) if quick else (7, 0.2)
    out = {}
    for name, fn, scale in _rows(tinyxla, tnp):
        n = calibrate(fn, min_time)
        times = {False: [], True: []}
        for _ in range(repeats):
            for on in (False, True):
                if on:
                    _core.profiler_start()
                fn()
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                times[on].append((time.perf_counter() - t0) / n)
                if on:
                    _core.profiler_stop()
        out[name] = (statistics.median(times[False]) * scale,
                     statistics.median(times[True]) * scale)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    figures = measure(parser.parse_args(argv).quick)
    width = max(len(n) for n in figures)
    print(f"{'figure':{width}} {'off':>9} {'on':>9} {'on/off':>7}")
    for name, (off, on) in figures.items():
        print(f"{name:{width}} {off:9.3f} {on:9.3f} {on / off:7.3f}")


if __name__ == "__main__":
    main()
