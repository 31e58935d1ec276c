"""FFT figures: complex float32 transforms of 2^20 points, of 3*5*7*11*13*17 = 255255
points (mixed radix) and of the prime 1,000,003 (Bluestein), a batch of 4096 real rows of
1024, and a 1024x1024 2-D transform, against numpy (pocketfft), jax and torch in one table.

    python bench/bench_fft.py [--quick]       # the same as run.py --only fft

Its metrics are part of bench/run.py's table (run.py imports metrics() from here). jax is
eager (each jnp.fft call is one compiled XLA FFT). Measured, not asserted.
"""
import sys

import numpy as np

_DATA = {}


def _signal(key):
    """The operand of metric `key`, made once (complex64, or float32 for real rows)."""
    if key not in _DATA:
        rng = np.random.default_rng(0)
        if key == "rows":
            _DATA[key] = rng.standard_normal((4096, 1024), dtype=np.float32)
        elif key == "image":
            _DATA[key] = (rng.standard_normal((1024, 1024), dtype=np.float32) +
                          1j * rng.standard_normal((1024, 1024), dtype=np.float32)
                          ).astype(np.complex64)
        else:
            n = int(key)
            _DATA[key] = (rng.standard_normal(n, dtype=np.float32) +
                          1j * rng.standard_normal(n, dtype=np.float32)).astype(np.complex64)
    return _DATA[key]


def _transform(key, fname, ref):
    def make(lib, d):
        x = lib.put(_signal(key))
        f = getattr(lib.xp.fft, fname)
        return lambda: lib.block(f(x))

    def reference(d):
        return ref(_signal(key).astype(np.complex128 if key != "rows" else np.float64))
    return make, reference


def metrics():
    from run import Metric  # bench/ is on sys.path when run.py runs
    rows = []
    for name, key, fname, label, ref in (
            ("fft_2p20", str(1 << 20), "fft", "fft c64, n=2^20", np.fft.fft),
            ("fft_255255", str(255255), "fft", "fft c64, n=3*5*7*11*13*17", np.fft.fft),
            ("fft_prime", str(1000003), "fft", "fft c64, n=1000003 (prime)", np.fft.fft),
            ("fft_rfft_rows", "rows", "rfft", "rfft f32, 4096 rows of 1024",
             lambda x: np.fft.rfft(x)),
            ("fft_fft2", "image", "fft2", "fft2 c64, 1024x1024", np.fft.fft2)):
        make, reference = _transform(key, fname, ref)
        rows.append(Metric(name, label, "ms", make, ref=reference, rtol=1e-5))
    return rows


if __name__ == "__main__":
    import run
    run.main(["--only", "fft"] + sys.argv[1:])
