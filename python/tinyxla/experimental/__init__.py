"""``jax.experimental``: the experimental modules tinyxla provides."""
