"""JAX's error classes (``jax.errors``)."""
from tinyxla._src.errors import (  # noqa: F401
    ConcretizationTypeError, JAXIndexError, JAXTypeError, NonConcreteBooleanIndexError,
    TracerArrayConversionError, TracerBoolConversionError, TracerIntegerConversionError,
    UnexpectedTracerError)
