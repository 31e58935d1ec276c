"""``jax.flatten_util``: ``ravel_pytree``."""
from tinyxla._src.flatten_util import ravel_pytree  # noqa: F401
