"""``tinyxla.nn`` (``jax.nn``): activation functions, softmax, one_hot, standardize and
``initializers``."""
from tinyxla._src.nn.functions import (  # noqa: F401
    celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity, leaky_relu,
    log_sigmoid, log_softmax, logsumexp, mish, one_hot, relu, relu6, selu, sigmoid, silu,
    soft_sign, softmax, softplus, standardize, swish)
from tinyxla.nn import initializers  # noqa: F401
