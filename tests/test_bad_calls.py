"""Issue 19, item 7: bad calls across jnp, lax, random, jit, grad, vmap, pmap, sharding and
pytrees raise JAX's exception class with JAX's message.

The calls are in ``tests/bad_calls.py``; JAX 0.10.2's class and message for each are pinned in
``tests/data/bad_calls_jax.json`` (made by ``tests/data/make_bad_calls.py``). A case passes
when the raised exception is (a subclass of a class named like) JAX's, and its first line
equals JAX's first line once object addresses and a leading ``[op]`` tag are removed.
"""
import json
import pathlib
import re
import warnings

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax, random, tree_util
from tinyxla.sharding import NamedSharding, PartitionSpec as P

from bad_calls import CASES, OWN_CASES

PINNED = json.loads((pathlib.Path(__file__).parent / "data" / "bad_calls_jax.json").read_text())
NAMESPACE = dict(jax=jax, jnp=jnp, lax=lax, random=random, np=np, tree_util=tree_util,
                 P=P, NamedSharding=NamedSharding)

# Where JAX 0.10.2 fails with an internal error (an MLIR verifier or binding error, an
# AssertionError, an IndexError from its own tuple handling), tinyxla raises the public
# class a user would catch, with a message naming the problem.
CLASS_DEPARTURES = {
    "tile_negative": "TypeError",             # JAX: MLIRError "invalid tensor dimension size"
    "random_split_negative": "TypeError",     # JAX: MLIRError
    "random_normal_negative_shape": "ValueError",  # JAX: MLIRError
    "lax_reshape_bad": "TypeError",           # JAX: ValueError from the MLIR verifier
    "lax_slice_rank": "TypeError",            # JAX: ValueError "safe_map() argument 2 is longer"
    "linear_transpose_nonlinear": "TypeError",  # JAX: AssertionError
    "pmap_in_axes_out_of_range": "ValueError",  # JAX: IndexError "tuple index out of range"
    "pmap_devices_bad": "ValueError",         # JAX: AttributeError on int.process_index
}

# Same class as JAX, other words, because JAX's message shows its internals: its reprs of
# objects tinyxla does not have (PRNGImpl's functions, LinearizeTracer, TypedFloat,
# jaxlib module paths), numpy scalar reprs (np.int64(5)), the tracer of a function JAX
# happens to jit internally, or an internal failure in place of the user's mistake.
MESSAGE_DEPARTURES = {
    "digitize_two_dim_bins", "diff_scalar", "std_bad_ddof_type", "hash_of_array",
    "lax_slice_out_of_range", "lax_slice_start_after_limit", "lax_dynamic_slice_too_big",
    "random_normal_not_key", "random_wrap_bad_shape", "random_key_bad_impl",
    "grad_has_aux_not_tuple", "grad_returns_tuple", "pmap_too_many_devices",
    "pmap_size_mismatch",
}


def _first_line(message: str) -> str:
    line = message.strip().split("\n")[0].strip()
    line = re.sub(r" at 0x[0-9a-f]+", "", line)
    return re.sub(r"^\[\w+\] ", "", line)


def _raise(expr: str) -> BaseException:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            jax.block_until_ready(eval(expr, dict(NAMESPACE)))
        except Exception as e:  # noqa: BLE001 - the exception is what the test checks
            return e
    pytest.fail(f"{expr} did not raise")


def _class_names(e: BaseException) -> list[str]:
    return [c.__name__ for c in type(e).__mro__]


def test_the_table_is_large_enough():
    assert len(CASES) + len(OWN_CASES) >= 200
    assert set(CASES) == set(PINNED), "re-run tests/data/make_bad_calls.py"


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_call_raises_jax_class_and_message(name):
    want = PINNED[name]
    e = _raise(CASES[name])
    assert CLASS_DEPARTURES.get(name, want["class"]) in _class_names(e), (
        f"{type(e).__name__}: {e}\nJAX: {want['class']}: {want['message']}")
    if name not in MESSAGE_DEPARTURES and name not in CLASS_DEPARTURES:
        assert _first_line(str(e)) == _first_line(want["message"])


@pytest.mark.parametrize("name", sorted(OWN_CASES))
def test_bad_call_where_jax_aborts(name):
    expr, cls, text = OWN_CASES[name]
    e = _raise(expr)
    assert cls in _class_names(e), f"{type(e).__name__}: {e}"
    assert text in str(e)


def test_the_runtime_works_after_every_bad_call():
    for expr in list(CASES.values())[::7]:
        _raise(expr)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: x * 2)(jnp.arange(3))), [0, 2, 4])
