"""JAX's error classes (``jax.errors``)."""
from tinyxla._src.errors import (  # noqa: F401
    ConcretizationTypeError, InconclusiveDimensionOperation, JAXIndexError, JAXTypeError,
    JaxprTypeError, JaxRuntimeError, KeyReuseError, NonConcreteBooleanIndexError,
    TracerArrayConversionError, TracerBoolConversionError, TracerIntegerConversionError,
    UnexpectedTracerError)
