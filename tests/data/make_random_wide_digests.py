"""Regenerates random_wide_digests.json (read by tests/test_random_wide.py) from installed
JAX: the rejection samplers on shapes wide enough (tens of thousands of lanes) that
tinyxla's loops compact their pending lanes, each sample's bytes hashed with sha256 (first
16 hex digits), with ``jax_threefry_partitionable`` on (|1) and off (|0).

Usage: /work/oracle/bin/python tests/data/make_random_wide_digests.py
"""
import hashlib
import json
import pathlib

import numpy as np

import jax
import jax.numpy as jnp
from jax import random

CASES = {
    "poisson_4": "random.poisson(random.PRNGKey(31), 4.0, (60000,))",
    "poisson_mix": "random.poisson(random.PRNGKey(32), jnp.linspace(0., 40., 60001))",
    "poisson_vmap": "jax.vmap(lambda k: random.poisson(k, jnp.linspace(5., 25., 30000)))"
                    "(random.split(random.PRNGKey(33), 3))",
    "binomial_mix": "random.binomial(random.PRNGKey(34), jnp.linspace(1., 200., 60000), 0.3)",
    "binomial_vmap": "jax.vmap(lambda k: random.binomial(k, 60., 0.4, (25001,)))"
                     "(random.split(random.PRNGKey(35), 2))",
    "gamma_2": "random.gamma(random.PRNGKey(36), 2.0, (60000,))",
    # gamma's samples are JAX's bit for bit: lax.rsqrt, exp, log and pow are XLA:CPU's.
    "gamma_mix": "random.gamma(random.PRNGKey(37), np.linspace(1, 12, 40000, dtype=np.float32))",
    "gamma_vmap": "jax.vmap(lambda k: random.gamma(k, 3.3, (20001,)))"
                  "(random.split(random.PRNGKey(38), 2))",
    "gamma_below_one": "random.gamma(random.PRNGKey(40), np.linspace(0.05, 1, 40000, dtype=np.float32))",
    "beta_mix": "random.beta(random.PRNGKey(41), np.linspace(0.1, 5, 20000, dtype=np.float32), 2.5)",
    "loggamma_mix": "random.loggamma(random.PRNGKey(39), np.linspace(0.05, 6, 40000, dtype=np.float32))",
}

env = {"jax": jax, "jnp": jnp, "random": random, "np": np}
digests = {}
for partitionable in (True, False):
    jax.config.update("jax_threefry_partitionable", partitionable)
    for name, expr in CASES.items():
        value = np.asarray(eval(expr, env))
        digests[f"{name}|{int(partitionable)}"] = hashlib.sha256(value.tobytes()).hexdigest()[:16]
out = pathlib.Path(__file__).parent / "random_wide_digests.json"
out.write_text(json.dumps({"jax_version": jax.__version__, "cases": CASES, "digests": digests},
                          indent=1) + "\n")
