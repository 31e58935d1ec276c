"""The ``jax.nn`` implementation: activation functions and initializers; ``tinyxla.nn`` is
its public face."""
