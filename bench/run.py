"""Benchmarks tinyxla against numpy, jax and torch in one run and prints one table.

    python bench/run.py [--quick] [--only NAME[,NAME...]] [--json FILE] [--plot out.png]
    python bench/run.py --only sharding    (bench_sharding.py: meshes and processes)
    python bench/run.py --only cb_         (bench_callbacks.py: host callbacks, debug.print)
    python bench/run.py --only profiler    (bench_profiler.py: the profiler off and on)

Each cell is the median over repeats of a timeit-style loop (warmed up, calibrated to a
minimum duration); asynchronous results are waited for (block_until_ready) inside the
loop. Ratios are peer time / tinyxla time (for GFLOP/s: tinyxla rate / peer rate), so a
ratio above 1 means tinyxla is faster. jax is eager except in rows marked compiled.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
import traceback

import numpy as np

N = 10_000_000  # elements of the large elementwise and reduction operands
DISPATCH_OPS = 100  # ops per timed call in the dispatch rows: dispatch cost dominates
PEERS = ("numpy", "jax", "torch")
LIBS = ("tinyxla",) + PEERS


class Lib:
    """One array library behind a common face: put host data on it, wait for a result."""

    def __init__(self, name, xp, put, block, jit=None):
        self.name, self.xp, self.put, self.block, self.jit = name, xp, put, block, jit


def load_libs():
    libs, errors = {"numpy": Lib("numpy", np, lambda a: a, lambda r: r)}, {}
    try:
        import tinyxla
        import tinyxla.numpy as tnp
        libs["tinyxla"] = Lib("tinyxla", tnp, tnp.asarray, lambda r: r.block_until_ready(),
                              getattr(tinyxla, "jit", None))
    except Exception as e:  # noqa: BLE001 - report any import failure, run the peers anyway
        errors["tinyxla"] = f"import failed: {e!r}"
    try:
        import jax
        import jax.numpy as jnp
        libs["jax"] = Lib("jax", jnp, jax.device_put, lambda r: r.block_until_ready(), jax.jit)
    except ImportError as e:
        errors["jax"] = f"not importable: {e}"
    try:
        import torch
        libs["torch"] = Lib("torch", torch, torch.from_numpy, lambda r: r)
    except ImportError as e:
        errors["torch"] = f"not importable: {e}"
    return libs, errors


class Metric:
    """A row of the table. `make(lib, data)` returns a zero-argument function that runs the
    operation to completion and returns its result, or None where the row does not apply
    to that library. Rates (GFLOP/s) are `flops` / time; times are scaled by `scale`."""

    def __init__(self, name, label, unit, make, ref=None, scale=1e3, per_call=1, flops=None,
                 rtol=1e-5):
        self.name, self.label, self.unit, self.make, self.ref = name, label, unit, make, ref
        self.scale, self.per_call, self.flops, self.rtol = scale, per_call, flops, rtol

    def value(self, seconds):
        if self.flops:
            return self.flops / seconds / 1e9
        return seconds / self.per_call * self.scale


def _dispatch(lib, d):
    x = lib.put(d["one"])

    def run():
        for _ in range(DISPATCH_OPS):
            y = x + 1
        return lib.block(y)
    return run


def _jit_dispatch(lib, d):
    if lib.jit is None:
        return None
    f = lib.jit(lambda x: x + 1)
    x = lib.put(d["one"])

    def run():
        for _ in range(DISPATCH_OPS):
            y = f(x)
        return lib.block(y)
    return run


def _unary(fname):
    def make(lib, d):
        f, x = getattr(lib.xp, fname), lib.put(d["a"])
        return lambda: lib.block(f(x))
    return make


def _binary(op):
    def make(lib, d):
        x, y = lib.put(d["a"]), lib.put(d["b"])
        return lambda: lib.block(op(x, y))
    return make


def _copy_ref(lib, d):
    """What numpy needs to move the bytes of `a + b`: copy a into a reused output (read +
    write), then stream through b once more (a max-reduction, memory-bound)."""
    if lib.name != "numpy":
        return None
    a, b, out = d["a"], d["b"], np.empty_like(d["a"])

    def run():
        np.copyto(out, a)
        b.max()
    return run


def _sum(lib, d):
    x = lib.put(d["a"])
    return lambda: lib.block(x.sum())


def _sum_2d(axis):
    def make(lib, d):
        x = lib.put(d["a16"])
        return lambda: lib.block(x.sum(axis=axis))
    return make


def _matmul(n):
    def make(lib, d):
        x, y = lib.put(d[f"m{n}a"]), lib.put(d[f"m{n}b"])
        return lambda: lib.block(x @ y)
    return make


def metrics():
    ms = [
        Metric("dispatch", "eager x + 1, 1 element", "µs/op", _dispatch,
               ref=lambda d: d["one"] + 1, scale=1e6, per_call=DISPATCH_OPS),
        Metric("jit_dispatch", "compiled x + 1, 1 element (jit)", "µs/call", _jit_dispatch,
               ref=lambda d: d["one"] + 1, scale=1e6, per_call=DISPATCH_OPS),
        Metric("exp", "exp, 1e7 f32", "ms", _unary("exp"), ref=lambda d: np.exp(d["a"])),
        Metric("tanh", "tanh, 1e7 f32", "ms", _unary("tanh"), ref=lambda d: np.tanh(d["a"])),
        # The bytes of exp and tanh with no arithmetic: a unary op's memory floor.
        Metric("negative", "negative, 1e7 f32", "ms", _unary("negative"),
               ref=lambda d: -d["a"], rtol=0),
        Metric("add", "add, 1e7 f32", "ms", _binary(lambda x, y: x + y),
               ref=lambda d: d["a"] + d["b"], rtol=0),
        Metric("multiply", "multiply, 1e7 f32", "ms", _binary(lambda x, y: x * y),
               ref=lambda d: d["a"] * d["b"], rtol=0),
        Metric("copy_ref", "numpy copy of the same bytes", "ms", _copy_ref),
        Metric("sum", "sum, 1e7 f32", "ms", _sum,
               ref=lambda d: np.sum(d["a"], dtype=np.float64), rtol=1e-4),
        # Issue 18's reduction figures: 64 MB read once (memory bound on this machine).
        Metric("sum_1e6x16", "sum, (1e6,16) f32", "ms", _sum_2d(None),
               ref=lambda d: np.sum(d["a16"], dtype=np.float64), rtol=1e-4),
        Metric("sum_1e6x16_axis0", "sum axis 0, (1e6,16) f32", "ms", _sum_2d(0),
               ref=lambda d: np.sum(d["a16"], axis=0, dtype=np.float64), rtol=1e-4),
    ]
    for n in (256, 1024, 2048):
        ms.append(Metric(f"matmul_{n}", f"matmul f32, n={n}", "GFLOP/s", _matmul(n),
                         ref=lambda d, n=n: d[f"m{n}a"].astype(np.float64) @ d[f"m{n}b"],
                         flops=2.0 * n ** 3, rtol=1e-4))
    import bench_convolution  # bench/ is on sys.path: the conv rows live beside their script
    ms += bench_convolution.metrics()
    import bench_linalg  # its module imports Metric from here
    ms.extend(bench_linalg.metrics())
    import bench_control_flow  # likewise
    ms.extend(bench_control_flow.metrics())
    import bench_fft  # bench/ is on sys.path: the FFT rows live beside their own script
    ms.extend(bench_fft.metrics())
    import bench_callbacks  # likewise: host callbacks and jax.debug.print
    ms.extend(bench_callbacks.metrics())
    import bench_scatter  # likewise: scatter-add against np.add.at
    ms.extend(bench_scatter.metrics())
    return ms


def make_data(names):
    rng = np.random.default_rng(0)
    d = {"one": np.ones((1,), np.float32)}
    if any(n in names for n in ("exp", "tanh", "negative", "add", "multiply", "copy_ref", "sum")):
        d["a"] = rng.standard_normal(N, dtype=np.float32)
        d["b"] = rng.uniform(1, 2, N).astype(np.float32)
    if any(n.startswith("sum_1e6x16") for n in names):
        d["a16"] = rng.standard_normal((1_000_000, 16), dtype=np.float32)
    for n in (256, 1024, 2048):
        if f"matmul_{n}" in names:
            d[f"m{n}a"] = rng.standard_normal((n, n), dtype=np.float32)
            d[f"m{n}b"] = rng.standard_normal((n, n), dtype=np.float32)
    return d


def check(metric, result, d):
    """tinyxla's answer against numpy's (float64 where it matters); raises on a mismatch."""
    got, want = np.asarray(result, dtype=np.float64), np.asarray(metric.ref(d), np.float64)
    if got.shape != want.shape:
        raise AssertionError(f"shape {got.shape} != {want.shape}")
    # Relative to the largest magnitude: sums and dot products cancel terms.
    err = np.max(np.abs(got - want), initial=0) / max(np.max(np.abs(want), initial=0), 1e-30)
    if not err <= max(metric.rtol, 1e-7):
        raise AssertionError(f"wrong result: max relative error {err:.2e}")


def calibrate(fn, min_time):
    """Warms `fn` up and returns how many calls make one repeat last at least min_time."""
    fn()
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time or number >= 1 << 20:
            return number
        number = max(number * 2, int(number * min_time / max(elapsed, 1e-9) * 1.2))


def _settle(fn, seconds):
    """Runs fn untimed for a while before its timed loop. The library timed just before may
    leave threads spinning for up to ~0.1 s after its last call (OpenBLAS, OpenMP, XLA's
    pool), taking a core from the next library; and a loop that starts on cold, idle cores
    runs 10-20% slower for its first tens of milliseconds on this machine kind. Settling
    gives every library the same warm start."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()


def _interleaved(rows, repeats, min_time):
    loops = [calibrate(fn, min_time) for _, fn in rows]
    times = [[] for _ in rows]
    for _ in range(repeats):
        for (_, fn), n, ts in zip(rows, loops, times):
            _settle(fn, min_time / 2)
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            ts.append((time.perf_counter() - t0) / n)
    return {name: statistics.median(ts) for (name, _), ts in zip(rows, times)}


def interleaved_medians(rows, quick):
    """Median seconds per call of each (name, fn) row in the list `rows`, as {name: median}:
    each fn is calibrated to at least 0.2 s (0.05 s if quick), then 7 repeats (3 if quick)
    run every row in turn, so load from elsewhere on the machine hits all rows alike."""
    return _interleaved(rows, *((3, 0.05) if quick else (7, 0.2)))


def median_time(fn, quick):
    """Median seconds per call of `fn`: 7 repeats (3 if quick) of a loop calibrated to at
    least 0.2 s (0.05 s if quick)."""
    return interleaved_medians([(None, fn)], quick)[None]


def print_figures(ours: dict, peers: dict) -> None:
    """One table of named figures (times: lower is better): tinyxla's, each peer's
    (``peers``: {library: {figure: value}}), then peer / tinyxla per peer."""
    width = max(len("figure"), *(len(n) for n in ours))
    names = list(peers)
    print(f"{'figure':{width}} {'tinyxla':>9} " + " ".join(f"{p:>9}" for p in names) + " " +
          " ".join(f"{p + '/tx':>9}" for p in names))
    for name, t in ours.items():
        vals = [peers[p].get(name) for p in names]
        print(f"{name:{width}} {t:9.3f} " +
              " ".join(f"{v:9.3f}" if v else f"{'-':>9}" for v in vals) + " " +
              " ".join(f"{v / t:9.2f}" if v else f"{'-':>9}" for v in vals))


def compare_figures(figures, numpy_figures=None) -> tuple[dict, dict]:
    """The main of a bench script: parses ``--quick``, runs ``figures(lib, numpy_module,
    quick)`` for tinyxla and (when installed) jax, and ``numpy_figures(quick)`` when given,
    prints the table and returns (tinyxla's figures, {peer: figures})."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    import tinyxla
    import tinyxla.numpy as tnp
    ours = figures(tinyxla, tnp, quick)
    peers = {}
    try:
        import jax
        import jax.numpy as jnp
        peers["jax"] = figures(jax, jnp, quick)
    except ImportError:
        pass
    if numpy_figures is not None:
        peers["numpy"] = numpy_figures(quick)
    print_figures(ours, peers)
    return ours, peers


def run_metric(metric, libs, d, repeats, min_time):
    """Times every library on one metric. Repeats are interleaved across libraries so a
    burst of load from elsewhere on the machine hits all of them alike."""
    fns, values, errors = {}, {}, {}
    for name, lib in libs.items():
        try:
            fn = metric.make(lib, d)
            if fn is None:
                continue
            result = fn()  # a library that fails here is left out of the timing
            if name == "tinyxla" and metric.ref is not None:
                check(metric, result, d)
            fns[name] = fn
        except Exception as e:  # noqa: BLE001 - one failing cell must not stop the table
            errors[name] = "".join(traceback.format_exception_only(type(e), e)).strip()
    medians = _interleaved(list(fns.items()), repeats, min_time)
    for name, t in medians.items():
        values[name] = metric.value(t)
    return values, errors


def ratio(metric, tx, peer):
    if tx is None or peer is None:
        return None
    return tx / peer if metric.flops else peer / tx


def build_rows(ms, results):
    copy = results.get("copy_ref", ({}, {}))[0].get("numpy")
    rows = []
    for m in ms:
        values, errors = results[m.name]
        tx = values.get("tinyxla")
        row = {"metric": m.name, "label": m.label, "unit": m.unit,
               "values": {lib: values.get(lib) for lib in LIBS},
               "ratios": {p: ratio(m, tx, values.get(p)) for p in PEERS},
               "errors": errors}
        if m.name in ("add", "multiply"):
            row["vs_copy"] = ratio(m, tx, copy)
        rows.append(row)
    return rows


def fmt(v, ratio_col=False):
    if v is None:
        return "–"
    if ratio_col:
        return f"{v:.2f}x"
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def print_table(rows, lib_errors):
    head = ["metric", "unit", *LIBS, *(f"{p}/tx" for p in PEERS), "copy/tx"]
    body = []
    for r in rows:
        cells = [r["label"], r["unit"]]
        for lib in LIBS:
            cells.append("err" if lib in r["errors"] else fmt(r["values"][lib]))
        cells += [fmt(r["ratios"][p], True) for p in PEERS]
        cells.append(fmt(r.get("vs_copy"), True))
        body.append(cells)
    widths = [max(len(str(row[i])) for row in [head] + body) for i in range(len(head))]

    def line(cells):  # text columns left-aligned, numbers right-aligned
        return "  ".join(str(c).ljust(w) if i < 2 else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(head))
    print("  ".join("-" * w for w in widths))
    for cells in body:
        print(line(cells))
    print("ratios: peer time / tinyxla time (GFLOP/s: tinyxla / peer); >1 means tinyxla is "
          "faster. copy/tx: the numpy copy of the same bytes / tinyxla (1 = memory speed).")
    for lib, msg in lib_errors.items():
        print(f"note: {lib}: {msg}")
    for r in rows:
        for lib, msg in r["errors"].items():
            print(f"error: {r['metric']} / {lib}: {msg.splitlines()[-1]}")


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    rows = [r for r in rows if any(v is not None for v in r["ratios"].values())]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(rows)), 4.5))
    width = 0.8 / len(PEERS)
    for i, peer in enumerate(PEERS):
        xs = [j + (i - (len(PEERS) - 1) / 2) * width for j in range(len(rows))]
        ys = [r["ratios"][peer] or float("nan") for r in rows]  # nan: no bar
        bars = ax.bar(xs, ys, width, label=f"{peer} / tinyxla")
        ax.bar_label(bars, fmt="%.2g", fontsize=6)
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_yscale("log")
    found = [v for r in rows for v in r["ratios"].values() if v]
    ax.set_yticks([t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)
                   if min(found) / 2 <= t <= max(found) * 2])
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["label"] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("speed-up of tinyxla (log scale, >1 is faster)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def versions(libs):
    out = {"python": sys.version.split()[0], "machine": platform.machine(),
           "platform": platform.platform()}
    for name in LIBS:
        mod = sys.modules.get(name)
        if name in libs and mod is not None:
            out[name] = getattr(mod, "__version__", "?")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    p.add_argument("--only", help="comma-separated metric names or prefixes (e.g. matmul)")
    p.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    p.add_argument("--plot", metavar="PNG", help="write a bar chart of the ratios")
    args = p.parse_args(argv)

    if args.only and args.only.strip() == "sharding":
        # Multi-device and multi-process figures run in their own processes.
        import bench_sharding
        bench_sharding.main(["--repeats", "3" if args.quick else "7"])
        return
    if args.only and args.only.strip() == "profiler":
        import bench_profiler
        bench_profiler.main(["--quick"] if args.quick else [])
        return
    ms = metrics()
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        chosen = {m.name for m in ms if any(m.name == w or m.name.startswith(w) for w in wanted)}
        if not chosen:
            p.error(f"no metric matches {args.only!r}; known: " + ", ".join(m.name for m in ms))
        if chosen & {"add", "multiply"}:
            chosen.add("copy_ref")  # their copy/tx column needs it
        ms = [m for m in ms if m.name in chosen]
    repeats, min_time = (3, 0.05) if args.quick else (7, 0.2)

    libs, lib_errors = load_libs()
    d = make_data({m.name for m in ms})
    load = [os.getloadavg()[0]]
    results = {}
    for m in ms:
        print(f"... {m.label}", file=sys.stderr, flush=True)
        results[m.name] = run_metric(m, libs, d, repeats, min_time)
    load.append(os.getloadavg()[0])
    rows = build_rows(ms, results)
    print_table(rows, lib_errors)
    # Other processes skew every column (2-thread BLAS pools collapse under load): say so.
    print(f"load average (1 min) before/after: {load[0]:.2f} / {load[1]:.2f} on "
          f"{os.cpu_count()} CPUs")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"versions": versions(libs), "quick": args.quick, "repeats": repeats,
                       "load_average": load, "lib_errors": lib_errors, "rows": rows}, f,
                      indent=1)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
