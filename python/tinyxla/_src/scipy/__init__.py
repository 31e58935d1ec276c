"""The ``jax.scipy`` implementation: ``special`` and ``stats``; ``tinyxla.scipy`` is its public face."""
