"""``tinyxla.image`` (``jax.image``): resizing and resampling."""
from tinyxla._src.image.scale import (  # noqa: F401
    ResizeMethod, resize, scale_and_translate)
