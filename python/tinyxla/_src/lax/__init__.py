"""The lax primitives, a module per family (``lax.py`` gathers them for the layers above);
``tinyxla.lax`` is their public face."""
