"""Writes control_flow_jax.npz: the results of tests/control_flow_cases.py under JAX 0.10.2.

Run with the oracle's Python from the repository root:
    /work/oracle/bin/python tests/data/make_control_flow_jax.py
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from control_flow_cases import flat_results, run_cases  # noqa: E402

np.savez(os.path.join(os.path.dirname(__file__), "control_flow_jax.npz"),
         **flat_results(run_cases(jax, jnp, lax)))
