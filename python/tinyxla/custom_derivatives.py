"""``jax.custom_derivatives``: the custom differentiation rules."""
from tinyxla._src.custom_derivatives import (  # noqa: F401
    closure_convert, custom_jvp, custom_jvp_call_p, custom_vjp, custom_vjp_call_p)
from tinyxla._src.custom_gradient import custom_gradient  # noqa: F401
