"""The lax primitives (see ``lax.py``); ``tinyxla.lax`` is their public face."""
