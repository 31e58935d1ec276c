"""Regenerates xla_transcendentals.json (read by tests/test_xla_transcendentals.py) from
installed JAX: float32 exp, log, log1p, pow and the functions JAX composes from them, over
about a million float32 bit patterns spread over every exponent (and specials), each
result's bytes hashed with sha256 (first 16 hex digits) after NaNs are made one NaN.

Usage: /work/oracle/bin/python tests/data/make_xla_transcendentals.py
"""
import hashlib
import json
import pathlib

import numpy as np

import jax
import jax.numpy as jnp

# The inputs, rebuilt identically by the test.
INPUTS = {
    "spread": "np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)",
    "unit": "np.linspace(-1, 1, 200001, dtype=np.float32)",
    "base": "np.abs(np.arange(0, 2**32, 65537, dtype=np.uint64).astype(np.uint32).view(np.float32))",
    "power": "np.linspace(-40, 40, 65536, dtype=np.float32)",
}
CASES = {
    "exp": ("jnp.exp", "spread"),
    "exp_unit": ("jnp.exp", "unit"),
    "log": ("jnp.log", "spread"),
    "log1p": ("jnp.log1p", "spread"),
    "log1p_unit": ("jnp.log1p", "unit"),
    "pow": ("lambda x: jnp.power(x, {})".format(INPUTS["power"]), "base"),
    "sigmoid": ("jax.nn.sigmoid", "spread"),
    "softplus": ("jax.nn.softplus", "spread"),
    "log_sigmoid": ("jax.nn.log_sigmoid", "spread"),
    "exp_jit": ("jax.jit(jnp.exp)", "spread"),
}


def digest(value) -> str:
    v = np.asarray(value)
    v = np.where(np.isnan(v), np.float32(np.nan), v)  # NaN payloads are not compared
    return hashlib.sha256(v.tobytes()).hexdigest()[:16]


def main() -> None:
    env = {"jax": jax, "jnp": jnp, "np": np}
    digests = {}
    for name, (fn, arg) in CASES.items():
        digests[name] = digest(eval(fn, env)(eval(INPUTS[arg], env)))
    out = pathlib.Path(__file__).with_name("xla_transcendentals.json")
    out.write_text(json.dumps({"jax_version": jax.__version__, "inputs": INPUTS, "cases": CASES,
                               "digests": digests}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
