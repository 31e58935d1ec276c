"""Regenerates random_reference.json from installed JAX (the oracle); tests/test_random.py only
reads the JSON.

Usage: python tests/data/make_random_reference.py

Each case is an expression over ``random`` (jax.random / tinyxla.random), ``jnp`` and ``np``,
evaluated with x64 off or on and with ``jax_threefry_partitionable`` on (JAX's default) or off.
A result is recorded as dtype, shape and the hex of its bytes (exact cases) plus its values
as floats (tolerance cases), or as the exception class and message it raised, or as a string
(``repr`` cases).
"""

import json
import pathlib
import subprocess
import sys

# (name, expression, kind): kind "exact" compares bytes, "close" compares values with a
# tolerance, "error" compares the exception, "str" compares a string.
CASES = [
    ("PRNGKey_0", "random.PRNGKey(0)", "exact"),
    ("PRNGKey_42", "random.PRNGKey(42)", "exact"),
    ("PRNGKey_neg1", "random.PRNGKey(-1)", "exact"),
    ("PRNGKey_big", "random.PRNGKey(2**40 + 5)", "exact"),
    ("PRNGKey_np_uint32", "random.PRNGKey(np.uint32(4000000000))", "exact"),
    ("PRNGKey_jnp", "random.PRNGKey(jnp.asarray(1234))", "exact"),
    ("key_data_key_1", "random.key_data(random.key(1))", "exact"),
    ("split_0", "random.split(random.PRNGKey(0))", "exact"),
    ("split_0_3", "random.split(random.PRNGKey(0), 3)", "exact"),
    ("split_7_shape", "random.split(random.PRNGKey(7), (2, 3))", "exact"),
    ("split_typed", "random.key_data(random.split(random.key(5), 4))", "exact"),
    ("split_split", "random.split(random.split(random.PRNGKey(1))[1], 5)", "exact"),
    ("fold_in_4", "random.fold_in(random.PRNGKey(0), 4)", "exact"),
    ("fold_in_big", "random.fold_in(random.PRNGKey(3), 4000000000)", "exact"),
    ("fold_in_typed", "random.key_data(random.fold_in(random.key(9), 123))", "exact"),
    ("bits_1701", "random.bits(random.PRNGKey(1701), (3,))", "exact"),
    ("bits_2d", "random.bits(random.PRNGKey(2), (4, 5))", "exact"),
    ("bits_scalar", "random.bits(random.PRNGKey(2))", "exact"),
    ("bits_u8", "random.bits(random.PRNGKey(3), (7,), jnp.uint8)", "exact"),
    ("bits_u16", "random.bits(random.PRNGKey(3), (5,), jnp.uint16)", "exact"),
    ("bits_u64", "random.bits(random.PRNGKey(3), (5,), jnp.uint64)", "exact"),
    ("uniform_3", "random.uniform(random.PRNGKey(0), (3,))", "exact"),
    ("uniform_scalar", "random.uniform(random.PRNGKey(1337))", "exact"),
    ("uniform_1000", "random.uniform(random.PRNGKey(11), (1000,))", "exact"),
    ("uniform_odd", "random.uniform(random.PRNGKey(11), (3, 7))", "exact"),
    ("uniform_range", "random.uniform(random.PRNGKey(4), (50,), minval=-3., maxval=5.)", "exact"),
    ("uniform_range_arr", "random.uniform(random.PRNGKey(4), (2, 3), minval=jnp.array([0., 1., 2.]), maxval=10.)", "exact"),
    ("uniform_f32", "random.uniform(random.PRNGKey(5), (20,), dtype=jnp.float32)", "exact"),
    ("uniform_f64", "random.uniform(random.PRNGKey(5), (20,), dtype=jnp.float64)", "exact"),
    ("uniform_f16", "random.uniform(random.PRNGKey(5), (20,), dtype=jnp.float16)", "exact"),
    ("uniform_bf16", "random.uniform(random.PRNGKey(5), (20,), dtype=jnp.bfloat16)", "exact"),
    ("uniform_typed", "random.uniform(random.key(5), (20,))", "exact"),
    ("normal_3", "random.normal(random.PRNGKey(0), (3,))", "close"),
    ("normal_1000", "random.normal(random.PRNGKey(12), (1000,))", "close"),
    ("normal_2d", "random.normal(random.key(1), (15, 10))", "close"),
    ("normal_f64", "random.normal(random.PRNGKey(12), (200,), dtype=jnp.float64)", "close"),
    ("normal_c64", "random.normal(random.PRNGKey(12), (10,), dtype=jnp.complex64)", "close"),
    ("randint_3x3", "random.randint(random.PRNGKey(0), (3, 3), 0, 8)", "exact"),
    ("randint_wide", "random.randint(random.PRNGKey(1), (100,), -5, 1000)", "exact"),
    ("randint_empty_range", "random.randint(random.PRNGKey(1), (5,), 3, 3)", "exact"),
    ("randint_int8", "random.randint(random.PRNGKey(2), (20,), -100, 100, dtype=jnp.int8)", "exact"),
    ("randint_uint8_full", "random.randint(random.PRNGKey(2), (20,), 0, 256, dtype=jnp.uint8)", "exact"),
    ("randint_int64", "random.randint(random.PRNGKey(2), (10,), -2**40, 2**40, dtype=jnp.int64)", "exact"),
    ("randint_arr", "random.randint(random.PRNGKey(3), (2, 3), jnp.array([0, 10, 100]), 1000)", "exact"),
    ("bernoulli", "random.bernoulli(random.PRNGKey(0), 0.3, (100,))", "exact"),
    ("bernoulli_p", "random.bernoulli(random.PRNGKey(1), jnp.array([0.1, 0.5, 0.9]))", "exact"),
    ("bernoulli_high", "random.bernoulli(random.PRNGKey(1), 0.25, (50,), mode='high')", "exact"),
    ("choice_int", "random.choice(random.PRNGKey(0), 5, (4,))", "exact"),
    ("choice_arr", "random.choice(random.PRNGKey(1), jnp.arange(10.) * 2, (2, 3))", "exact"),
    ("choice_axis1", "random.choice(random.PRNGKey(1), jnp.arange(12).reshape(3, 4), (2,), axis=1)", "exact"),
    ("permutation_int", "random.permutation(random.PRNGKey(0), 10)", "exact"),
    ("permutation_3000", "random.permutation(random.PRNGKey(5), 3000)", "exact"),
    ("permutation_arr", "random.permutation(random.key(1), jnp.arange(7.) * 3)", "exact"),
    ("permutation_axis1", "random.permutation(random.PRNGKey(1), jnp.arange(12).reshape(3, 4), axis=1)", "exact"),
    ("permutation_indep_1d", "random.permutation(random.PRNGKey(2), jnp.arange(9), independent=True)", "exact"),
    ("permutation_indep_2d", "random.permutation(random.PRNGKey(4), jnp.arange(24).reshape(2, 3, 4), axis=1, independent=True)", "exact"),
    ("permutation_indep_last", "random.permutation(random.key(4), jnp.arange(60.).reshape(3, 20), axis=-1, independent=True)", "exact"),
    ("choice_noreplace", "random.choice(random.PRNGKey(2), 10, (4,), replace=False)", "exact"),
    ("choice_noreplace_arr", "random.choice(random.PRNGKey(2), jnp.arange(20.).reshape(5, 4), (2,), replace=False)", "exact"),
    ("choice_p", "random.choice(random.PRNGKey(3), 4, (50,), p=jnp.array([0.1, 0.2, 0.3, 0.4]))", "exact"),
    ("choice_p_arr", "random.choice(random.PRNGKey(9), jnp.arange(74).reshape(37, 2), (5, 3), p=jnp.linspace(0., 1., 37))", "exact"),
    ("choice_p_many", "random.choice(random.PRNGKey(4), 37, (5000,), p=jnp.cos(jnp.arange(37.)) + 1.5)", "exact"),
    ("choice_p_noreplace", "random.choice(random.PRNGKey(5), 10, (4,), replace=False, p=jnp.arange(1., 11.))", "exact"),
    ("choice_p_noreplace_arr", "random.choice(random.PRNGKey(6), jnp.arange(30).reshape(10, 3), (2, 2), replace=False, p=jnp.arange(10.) + 0.5)", "exact"),
    ("categorical_noreplace", "random.categorical(random.PRNGKey(7), jnp.arange(24.).reshape(4, 6) / 5, shape=(3, 4), replace=False)", "exact"),
    ("categorical_noreplace_axis0", "random.categorical(random.PRNGKey(8), jnp.arange(24.).reshape(6, 4) / 5, axis=0, shape=(2, 4), replace=False)", "exact"),
    ("err_categorical_too_many", "random.categorical(random.PRNGKey(7), jnp.zeros(3), shape=(4,), replace=False)", "error"),
    ("err_choice_p_shape", "random.choice(random.PRNGKey(0), 4, (2,), p=jnp.ones(3))", "error"),
    ("err_permutation_float", "random.permutation(random.PRNGKey(0), 2.5)", "error"),
    ("categorical", "random.categorical(random.PRNGKey(3), jnp.log(jnp.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])))", "exact"),
    ("categorical_shape", "random.categorical(random.PRNGKey(4), jnp.array([0., 1., 2., 3.]), shape=(20,))", "exact"),
    ("truncated_normal", "random.truncated_normal(random.PRNGKey(0), -1., 2., (100,))", "close"),
    ("gumbel", "random.gumbel(random.PRNGKey(0), (100,))", "close"),
    ("gumbel_high", "random.gumbel(random.PRNGKey(0), (100,), mode='high')", "close"),
    ("exponential", "random.exponential(random.PRNGKey(0), (100,))", "close"),
    ("laplace", "random.laplace(random.PRNGKey(0), (100,))", "close"),
    ("logistic", "random.logistic(random.PRNGKey(0), (100,))", "close"),
    ("cauchy", "random.cauchy(random.PRNGKey(3), (100,))", "close"),
    ("maxwell", "random.maxwell(random.PRNGKey(3), (20,))", "close"),
    ("lognormal", "random.lognormal(random.PRNGKey(3), 0.5, (30,))", "close"),
    ("lognormal_default", "random.lognormal(random.PRNGKey(4))", "close"),
    ("pareto", "random.pareto(random.PRNGKey(3), jnp.array([1., 2., 3.]))", "close"),
    ("rayleigh", "random.rayleigh(random.PRNGKey(3), 1.5, (30,))", "close"),
    ("triangular", "random.triangular(random.PRNGKey(3), 0., 1., 3., (30,))", "close"),
    ("weibull_min", "random.weibull_min(random.PRNGKey(3), 2., 1.5, (30,))", "close"),
    ("rademacher", "random.rademacher(random.PRNGKey(3), (20,))", "exact"),
    ("geometric", "random.geometric(random.PRNGKey(3), 0.3, (30,))", "exact"),
    ("err_pareto_shape", "random.pareto(random.PRNGKey(3), jnp.ones(3), (2,))", "error"),
    ("repr_key", "repr(random.key(1))", "str"),
    ("repr_keys", "repr(random.split(random.key(0), 2))", "str"),
    ("key_dtype", "str(random.key(0).dtype)", "str"),
    ("key_shape", "str(random.split(random.key(0), (2, 3)).shape)", "str"),
    ("err_split_typed_batch", "random.split(random.split(random.key(0)))", "error"),
    ("err_split_raw_batch", "random.split(random.split(random.PRNGKey(0)))", "error"),
    ("err_normal_raw_batch", "random.normal(random.split(random.PRNGKey(0)))", "error"),
    ("err_key_shape", "random.split(jnp.zeros(3, jnp.uint32))", "error"),
    ("err_key_dtype", "random.uniform(jnp.zeros(2, jnp.int32))", "error"),
    ("err_key_list", "random.split([0, 0])", "error"),
    ("err_seed_array", "random.PRNGKey(jnp.array([1, 2]))", "error"),
    ("err_seed_key", "random.key(random.key(0))", "error"),
    ("err_uniform_int", "random.uniform(random.PRNGKey(0), dtype=jnp.int32)", "error"),
    ("err_normal_int", "random.normal(random.PRNGKey(0), dtype=jnp.int32)", "error"),
    ("err_randint_float", "random.randint(random.PRNGKey(0), (2,), 0, 5, dtype=jnp.float32)", "error"),
    ("err_bits_signed", "random.bits(random.PRNGKey(0), dtype=jnp.int32)", "error"),
    ("err_bernoulli_int", "random.bernoulli(random.PRNGKey(0), 1)", "error"),
    ("err_bernoulli_mode", "random.bernoulli(random.PRNGKey(0), 0.5, mode='mid')", "error"),
    ("err_fold_in_array", "random.fold_in(random.PRNGKey(0), jnp.array([1, 2]))", "error"),
    ("err_uniform_shape", "random.randint(random.PRNGKey(0), (3,), jnp.zeros(4, int), 5)", "error"),
    ("err_choice_big", "random.choice(random.PRNGKey(0), 3, (5,), replace=False)", "error"),
    ("err_iter_scalar_key", "list(random.key(0))", "error"),
    ("err_len_scalar_key", "len(random.key(0))", "error"),
    ("err_bool_key", "bool(random.key(0))", "error"),
]

# Cases also run with jax_threefry_partitionable=False (JAX's default before 0.5).
LEGACY = ["split_0", "split_0_3", "split_7_shape", "fold_in_4", "bits_1701", "bits_2d", "bits_u8",
          "bits_u16", "bits_u64", "uniform_3", "uniform_1000", "uniform_odd", "uniform_f64",
          "uniform_bf16", "normal_3", "normal_1000", "randint_3x3", "randint_wide", "randint_int8",
          "randint_int64", "bernoulli", "permutation_int", "permutation_3000",
          "choice_noreplace"]


def encode(value, kind):
    import numpy as np
    if kind == "str":
        return {"str": value}
    arr = np.asarray(value)
    out = {"dtype": str(arr.dtype), "shape": list(arr.shape), "hex": arr.tobytes().hex()}
    if kind == "close":
        out["values"] = arr.astype(np.complex128 if arr.dtype.kind == "c" else np.float64).view(np.float64).ravel().tolist()
    return out


def run_mode(x64: bool) -> dict:
    import warnings
    import jax
    jax.config.update("jax_enable_x64", x64)
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
    if len(sys.argv) > 1 and sys.argv[1] == "--mode":
        print(json.dumps(run_mode(sys.argv[2] == "x64")))
        return
    import jax
    out = {"jax_version": jax.__version__, "cases": [list(c) for c in CASES], "results": {}}
    for mode in ("x32", "x64"):
        text = subprocess.run([sys.executable, __file__, "--mode", mode], check=True,
                              capture_output=True, text=True).stdout
        out["results"][mode] = json.loads(text)
    path = pathlib.Path(__file__).with_name("random_reference.json")
    path.write_text(json.dumps(out, indent=0) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
