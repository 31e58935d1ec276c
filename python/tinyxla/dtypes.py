"""The ``jax.dtypes`` module: dtype helpers, the bfloat16 type and the extended-dtype classes."""
from tinyxla._src.dtypes import (  # noqa: F401
    TypePromotionError, bfloat16, canonicalize_dtype, extended, finfo, float0, iinfo,
    issubdtype, itemsize_bits, prng_key, promote_types, result_type, scalar_type_of)
