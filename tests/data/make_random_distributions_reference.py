"""Regenerates random_distributions_reference.json from installed JAX (the oracle);
tests/test_random_distributions.py only reads the JSON.

Usage: python tests/data/make_random_distributions_reference.py

Same scheme as make_random_reference.py: each case is an expression over ``random``,
``jnp`` and ``np``, evaluated with x64 off and ``jax_threefry_partitionable`` on (and off
for the LEGACY cases); "exact" compares bytes, "exact_amd" bytes on an AMD CPU (the gamma family passes
through rsqrtps's estimate, which differs between CPU makers) and values with a tolerance
elsewhere, "close" values with a tolerance, "error" the exception class and message.
"close" marks samplers whose ops XLA rewrites (divisions by constants into reciprocal
multiplies, (a/b)/(c/d) regrouped, softmax's division into a reciprocal multiply after a
sum in its own order): JAX's last bits there are not its ops' bits.
"""

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from make_random_reference import encode  # noqa: E402

LIN = "np.linspace({}, {}, {}, dtype=np.float32)"

CASES = [
    ("normal_f32_4096", "random.normal(random.PRNGKey(22), (4096,))", "exact"),
    ("normal_f32_2d", "random.normal(random.key(3), (64, 33))", "exact"),
    ("gamma_2", "random.gamma(random.PRNGKey(0), 2.0, (500,))", "exact"),
    ("gamma_1", "random.gamma(random.PRNGKey(1), 1.0, (500,))", "exact"),
    ("gamma_range", "random.gamma(random.PRNGKey(2), " + LIN.format(1., 20., 300) + ")", "exact_amd"),
    ("gamma_big", "random.gamma(random.PRNGKey(2), " + LIN.format(20., 1000., 300) + ")", "exact_amd"),
    ("gamma_small", "random.gamma(random.PRNGKey(3), 0.3, (500,))", "exact_amd"),
    ("gamma_2d", "random.gamma(random.key(4), jnp.array([[1.5], [7.]]), (2, 40))", "exact_amd"),
    ("gamma_typed", "random.gamma(random.key(5), 3.)", "exact_amd"),
    ("loggamma", "random.loggamma(random.PRNGKey(6), " + LIN.format(0.01, 5., 300) + ")", "exact_amd"),
    ("beta", "random.beta(random.PRNGKey(7), 0.5, 2., (300,))", "exact_amd"),
    ("beta_arr", "random.beta(random.PRNGKey(8), jnp.array([1., 3.]), jnp.array([[2.], [0.2]]))", "exact_amd"),
    ("dirichlet", "random.dirichlet(random.PRNGKey(9), jnp.array([0.5, 1., 3.]), (50,))", "close"),
    ("chisquare", "random.chisquare(random.PRNGKey(10), 3., (300,))", "exact_amd"),
    ("f", "random.f(random.PRNGKey(11), 3., 5., (300,))", "close"),
    ("t", "random.t(random.PRNGKey(12), 4., (500,))", "exact"),
    ("t_arr", "random.t(random.PRNGKey(13), jnp.array([1., 2., 30.]))", "exact"),
    ("generalized_normal", "random.generalized_normal(random.PRNGKey(14), 1.5, (300,))", "exact_amd"),
    ("ball", "random.ball(random.PRNGKey(15), 3, 2, (100,))", "close"),
    ("ball_p1", "random.ball(random.PRNGKey(16), 4, 1.)", "close"),
    ("poisson", "random.poisson(random.PRNGKey(17), 3.5, (1000,))", "exact"),
    ("poisson_big", "random.poisson(random.PRNGKey(18), 50., (1000,))", "exact"),
    ("poisson_mix", "random.poisson(random.PRNGKey(19), " + LIN.format(0., 40., 1000) + ")", "exact"),
    ("poisson_int8", "random.poisson(random.PRNGKey(20), 2., (10,), dtype=jnp.int8)", "exact"),
    ("binomial", "random.binomial(random.PRNGKey(21), 10., 0.3, (1000,))", "exact"),
    ("binomial_big", "random.binomial(random.PRNGKey(22), 200., 0.4, (1000,))", "exact"),
    ("binomial_mix", "random.binomial(random.PRNGKey(23), " + LIN.format(1., 100., 1000) + ", 0.8)", "exact"),
    ("binomial_edge", "random.binomial(random.PRNGKey(24), jnp.array([5., -1., np.nan, 7., np.inf]), jnp.array([0.5, 0.5, 0.5, np.nan, 0.5]))", "exact"),
    ("multinomial", "random.multinomial(random.PRNGKey(25), 20., jnp.array([0.2, 0.3, 0.5]), shape=(200, 3))", "exact"),
    ("multinomial_batch", "random.multinomial(random.PRNGKey(26), jnp.array([5., 50.]), jnp.array([[0.1, 0.9], [0.5, 0.5]]))", "exact"),
    ("double_sided_maxwell", "random.double_sided_maxwell(random.PRNGKey(27), 1., 2., (300,))", "close"),
    ("double_sided_maxwell_shape", "random.double_sided_maxwell(random.PRNGKey(28), jnp.array([1., 2.]), 0.5, (3,))", "close"),
    ("wald", "random.wald(random.PRNGKey(29), 1.5, (500,))", "exact"),
    ("wald_arr", "random.wald(random.PRNGKey(30), jnp.array([0.5, 4.]))", "exact"),
    ("mvn_eigh", "random.multivariate_normal(random.PRNGKey(31), jnp.array([1., 2.]), jnp.array([[2., 0.5], [0.5, 1.]]), (100,), method='eigh')", "exact"),
    ("gumbel_highest", "random.gumbel(random.PRNGKey(32), (300,), mode='highest')", "exact"),
    ("clone", "random.clone(random.PRNGKey(33))", "exact"),
    ("key_dtype", "str(random.key_dtype())", "str"),
    ("err_gamma_int", "random.gamma(random.PRNGKey(0), 1., dtype=jnp.int32)", "error"),
    ("err_gamma_shape", "random.gamma(random.PRNGKey(0), jnp.ones(3), (2,))", "error"),
    ("err_beta_cast", "random.beta(random.PRNGKey(0), jnp.float32(1), 1., dtype=jnp.float16)", "error"),
    ("err_dirichlet_ndim", "random.dirichlet(random.PRNGKey(0), 1.)", "error"),
    ("err_t_int", "random.t(random.PRNGKey(0), 3., dtype=jnp.int32)", "error"),
    ("err_mvn_method", "random.multivariate_normal(random.PRNGKey(0), jnp.zeros(2), jnp.eye(2), method='qr')", "error"),
    ("err_mvn_cov", "random.multivariate_normal(random.PRNGKey(0), jnp.zeros(2), jnp.eye(3), method='eigh')", "error"),
    ("err_mvn_mean", "random.multivariate_normal(random.PRNGKey(0), 1., jnp.eye(3), method='eigh')", "error"),
    ("err_binomial_int", "random.binomial(random.PRNGKey(0), 3., 0.5, dtype=jnp.int32)", "error"),
    ("err_key_dtype", "random.key_dtype('philox')", "error"),
]

# Cases also run with jax_threefry_partitionable=False.
LEGACY = ["normal_f32_4096", "gamma_2", "gamma_range", "t", "poisson", "poisson_big", "binomial",
          "binomial_big", "wald"]


def run() -> dict:
    import warnings
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import random
    results = {}
    for partitionable in (True, False):
        jax.config.update("jax_threefry_partitionable", partitionable)
        for name, expr, kind in CASES:
            if not partitionable and name not in LEGACY:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = eval(expr, {"random": random, "jnp": jnp, "np": np})
                res = encode(value, kind)
            except Exception as e:  # noqa: BLE001 - the exception is the recorded result
                res = {"error": type(e).__name__, "message": str(e)}
            results[f"{name}|{'p' if partitionable else 'legacy'}"] = res
    return results


def main() -> None:
    import jax
    out = {"jax_version": jax.__version__, "cases": [list(c) for c in CASES], "results": run()}
    path = pathlib.Path(__file__).with_name("random_distributions_reference.json")
    path.write_text(json.dumps(out, indent=0) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
