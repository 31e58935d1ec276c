"""The jnp implementation, a module per idea; ``tinyxla.numpy`` is its public face."""
