"""Records JAX 0.10.2's outcome of every case of tests/jax_differential_cases.py.

Run with an environment that has jax (not a tinyxla dependency):
    python tests/data/make_jax_differential.py
writes tests/data/jax_differential.json (dtype, weak type or exception class of each case)
and tests/data/jax_differential.npz (the values).
"""
from __future__ import annotations

import json
import pathlib
import sys
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import jax_differential_cases as cases  # noqa: E402


def outcome(jax, fn, *args):
    """(result arrays, dtype name, weak type) or the exception class name."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args)
            leaves = out if isinstance(out, tuple) else (out,)
            jax.block_until_ready(leaves)
    except Exception as e:  # noqa: BLE001 - the class is the outcome
        return type(e).__name__
    vals = [np.asarray(x.astype("float32") if x.dtype.name == "bfloat16" else x) for x in leaves]
    return vals, [x.dtype.name for x in leaves], [bool(getattr(x, "weak_type", False))
                                                  for x in leaves]


def case_functions(jax, jnp):
    """(name, dtype, callable, operands) of every case, for either library."""
    for dt in cases.DTYPES:
        x = jnp.asarray(cases.edge_values(dt), dtype=dt)
        a, b = (jnp.asarray(v, dtype=dt) for v in cases.binary_operands(dt))
        for name in cases.UNARY:
            yield f"{name}|{dt}", getattr(jnp, name), (x,)
        for name in cases.BINARY:
            if name in cases.NO_MIN_INT and dt in ("int8", "int32"):
                continue
            yield f"{name}|{dt}", getattr(jnp, name), (a, b)
        for name in cases.REDUCTIONS:
            yield f"{name}|{dt}", getattr(jnp, name), (x,)
        for name in cases.NN:
            yield f"nn.{name}|{dt}", getattr(jax.nn, name), (x,)
    pts = jnp.asarray(cases.GRAD_POINTS)
    for name in cases.GRAD_UNARY:
        f = (lambda v: jnp.logaddexp(v, 0.0)) if name == "logaddexp_0" else (
            getattr(jax.nn, name) if hasattr(jax.nn, name) and not hasattr(jnp, name)
            else getattr(jnp, name))
        yield f"grad.{name}|float32", jax.vmap(jax.grad(f)), (pts,)
        yield f"grad2.{name}|float32", jax.vmap(jax.grad(jax.grad(f))), (pts,)


def main() -> None:
    import jax
    import jax.numpy as jnp
    meta, arrays = {}, {}
    for key, fn, args in case_functions(jax, jnp):
        out = outcome(jax, fn, *args)
        if isinstance(out, str):
            meta[key] = {"error": out}
            continue
        vals, dts, weak = out
        meta[key] = {"dtypes": dts, "weak": weak}
        for i, v in enumerate(vals):
            arrays[f"{key}#{i}"] = v
    (HERE / "jax_differential.json").write_text(json.dumps(meta, indent=0, sort_keys=True) + "\n")
    np.savez_compressed(HERE / "jax_differential.npz", **arrays)
    print(len(meta), "cases,", sum("error" in m for m in meta.values()), "rejected by jax")


if __name__ == "__main__":
    main()
