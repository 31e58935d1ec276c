"""``jax.export``: exporting jitted functions to a versioned file that Python and C++
programs read back. See ``tinyxla._src.export`` for where tinyxla differs from JAX."""
from tinyxla._src.export import (
    Exported, deserialize, export, maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version)

__all__ = ["Exported", "deserialize", "export", "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version"]
