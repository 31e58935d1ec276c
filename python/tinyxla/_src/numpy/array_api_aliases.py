"""The Array API's names for existing jnp functions (acos, atan2, bitwise_invert, ...).

Mirrors ``jax.numpy``, where these are the same functions under a second name.
"""
from __future__ import annotations

from tinyxla._src.numpy.ufuncs import (
    arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, invert, left_shift,
    right_shift)

acos = arccos
acosh = arccosh
asin = arcsin
asinh = arcsinh
atan = arctan
atan2 = arctan2
atanh = arctanh
bitwise_invert = invert
bitwise_left_shift = left_shift
bitwise_right_shift = right_shift
