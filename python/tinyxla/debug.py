"""``jax.debug``: printing, callbacks, breakpoints and sharding pictures from inside
transformed code."""
from tinyxla._src.debugging import (  # noqa: F401
    breakpoint, debug_callback as callback, debug_print as print, inspect_array_sharding,
    visualize_array_sharding, visualize_sharding)
