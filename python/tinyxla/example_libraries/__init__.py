"""``tinyxla.example_libraries`` (``jax.example_libraries``): the minimal neural-network
library ``stax`` and the ``optimizers`` that go with it."""
