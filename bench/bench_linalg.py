"""Linear algebra figures: solve, cholesky, qr and svd of 512x512 and 1024x1024 float32
against numpy; 4096 batched 3x3 inverses and 4x4 solves, and the gradient of a Gaussian
process's negative log marginal likelihood (n = 1000, jitted), against jax.

    python bench/bench_linalg.py [--quick]
    python bench/run.py --only linalg        # the same rows in run.py's table

Each figure is the median of repeats of a loop calibrated to at least 0.2 s (0.05 s with
--quick) after warm-up; results are waited for inside the loop. jax columns need jax
installed. Measured, not asserted.
"""
from importlib import import_module

import numpy as np

from run import Metric, compare_figures, median_time  # bench/ is on sys.path as a script

_rng = np.random.RandomState(0)
SIZES = (512, 1024)


def _spd(n):
    a = _rng.randn(n, n).astype(np.float32)
    return (a @ a.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)


MATRICES = {n: _rng.randn(n, n).astype(np.float32) + n ** 0.5 * np.eye(n, dtype=np.float32)
            for n in SIZES}
SPD = {n: _spd(n) for n in SIZES}
RHS = {n: _rng.randn(n).astype(np.float32) for n in SIZES}
SMALL3 = (_rng.randn(4096, 3, 3) + 3 * np.eye(3)).astype(np.float32)
SMALL4 = (_rng.randn(4096, 4, 4) + 3 * np.eye(4)).astype(np.float32)
SMALL4_RHS = _rng.randn(4096, 4, 1).astype(np.float32)
GP_X = np.sort(_rng.uniform(-3, 3, 1000)).astype(np.float32)
GP_Y = (np.sin(2 * GP_X) + 0.1 * _rng.randn(1000)).astype(np.float32)
GP_THETA = np.array([0.0, -0.5, -2.0], np.float32)  # log amplitude, length scale, noise


def gp_nll(xp, solve_triangular, theta, x, y):
    """The negative log marginal likelihood of a squared-exponential GP (the seed's GP
    regression): cholesky, a triangular solve and a log-determinant."""
    amp, ls, noise = xp.exp(theta[0]), xp.exp(theta[1]), xp.exp(theta[2])
    d = x[:, None] - x[None, :]
    k = amp * xp.exp(-0.5 * (d / ls) ** 2) + (noise + 1e-4) * xp.eye(x.shape[0])
    l = xp.linalg.cholesky(k)
    alpha = solve_triangular(l, y, lower=True)
    return (0.5 * xp.dot(alpha, alpha) + xp.sum(xp.log(xp.diagonal(l)))
            + 0.5 * x.shape[0] * np.log(2 * np.pi))


def _decomposition(op, n):
    args = {"solve": (MATRICES[n], RHS[n]), "cholesky": (SPD[n],), "qr": (MATRICES[n],),
            "svd": (MATRICES[n],)}[op]

    def make(xp, put, root):
        fn, xs = getattr(xp.linalg, op), [put(a) for a in args]
        return lambda: fn(*xs)
    return make


def _batched(op, args):
    def make(xp, put, root):
        fn, xs = getattr(xp.linalg, op), [put(a) for a in args]
        return lambda: fn(*xs)
    return make


def _gp_grad(xp, put, root):
    if root is None:
        return None  # numpy has no grad
    solve_triangular = import_module(f"{root.__name__}.scipy.linalg").solve_triangular
    grad = root.jit(root.grad(lambda t, x, y: gp_nll(xp, solve_triangular, t, x, y)))
    theta, x, y = (put(a) for a in (GP_THETA, GP_X, GP_Y))
    return lambda: grad(theta, x, y)


# name -> (label, make(xp, put, root module or None) -> a call, or None where it does not
# apply).
CASES = {
    **{f"linalg_{op}_{n}": (f"{op} {n}x{n} f32", _decomposition(op, n))
       for op in ("solve", "cholesky", "qr", "svd") for n in SIZES},
    "linalg_inv_4096x3x3": ("inv 4096 x 3x3 f32", _batched("inv", (SMALL3,))),
    "linalg_solve_4096x4x4": ("solve 4096 x 4x4 f32", _batched("solve", (SMALL4, SMALL4_RHS))),
    "linalg_gp_grad_1000": ("grad GP NLL n=1000 (jit)", _gp_grad),
}


def _wait(out, block):
    for leaf in out if isinstance(out, tuple) else (out,):
        block(leaf)
    return out


def figures(root, xp, quick):
    out = {}
    for label, make in CASES.values():
        call = make(xp, xp.asarray, root)
        out[label + " (ms)"] = median_time(
            lambda: _wait(call(), lambda r: r.block_until_ready()), quick) * 1e3
    return out


def numpy_figures(quick):
    out = {}
    for label, make in CASES.values():
        call = make(np, np.asarray, None)
        if call is not None:
            out[label + " (ms)"] = median_time(call, quick) * 1e3
    return out


def metrics():
    """The rows of run.py's table (``--only linalg``)."""
    def row(name, label, make):
        def make_lib(lib, d):
            if lib.name == "torch":
                return None
            root = None if lib.name == "numpy" else import_module(lib.name)
            call = make(lib.xp, lib.put, root)
            return None if call is None else (lambda: _wait(call(), lib.block))
        return Metric(name, label, "ms", make_lib)
    return [row(name, label, make) for name, (label, make) in CASES.items()]


def main():
    compare_figures(figures, numpy_figures)


if __name__ == "__main__":
    main()
