"""``jax.experimental``: the experimental modules tinyxla provides."""

from tinyxla._src.callback import io_callback  # noqa: E402,F401
