"""``jax.scipy.stats``: the distributions, one module each, and the sample statistics."""
