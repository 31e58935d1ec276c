"""``jax.scipy.stats`` distributions (so far: ``norm``)."""
