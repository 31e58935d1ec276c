"""The ``jax.dtypes`` module: dtype helpers and the bfloat16 type."""
from tinyxla._src.dtypes import (  # noqa: F401
    TypePromotionError, bfloat16, canonicalize_dtype, finfo, float0, iinfo, issubdtype,
    promote_types, result_type)
