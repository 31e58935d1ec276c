"""Pins JAX 0.10.2's exception class and message for every case in tests/bad_calls.py.

Run with an environment that has jax (not a tinyxla dependency):
    python tests/data/make_bad_calls.py  ->  tests/data/bad_calls_jax.json
Cases that JAX does not reject are listed on stdout and left out of the file.
"""
import json
import pathlib
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, random, tree_util
from jax.sharding import NamedSharding, PartitionSpec as P

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from bad_calls import CASES  # noqa: E402

NAMESPACE = dict(jax=jax, jnp=jnp, lax=lax, random=random, np=np, tree_util=tree_util,
                 P=P, NamedSharding=NamedSharding)


def main() -> None:
    pinned = {}
    for name, expr in CASES.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = eval(expr, dict(NAMESPACE))
                jax.block_until_ready(out)
        except Exception as e:  # noqa: BLE001 - recording whatever JAX raises
            pinned[name] = {"class": type(e).__name__,
                            "bases": [c.__name__ for c in type(e).__mro__[1:-2]],
                            "message": str(e)}
        else:
            print("not rejected by jax:", name)
    (HERE / "bad_calls_jax.json").write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n")
    print(len(pinned), "cases pinned")


if __name__ == "__main__":
    main()
