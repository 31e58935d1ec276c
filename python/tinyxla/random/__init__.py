"""``tinyxla.random`` (``jax.random``): stateless random numbers from threefry2x32 keys."""
from tinyxla._src.prng import PRNGKeyArray  # noqa: F401
from tinyxla._src.random import (  # noqa: F401
    PRNGKey, bernoulli, bits, categorical, choice, exponential, fold_in, gumbel, key, key_data,
    key_impl, laplace, logistic, normal, permutation, randint, split, truncated_normal, uniform,
    wrap_key_data)
