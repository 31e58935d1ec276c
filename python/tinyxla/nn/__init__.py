"""``tinyxla.nn`` (``jax.nn``): activation functions, softmax, one_hot, standardize,
``dot_product_attention`` and ``initializers``."""
from tinyxla._src.nn.attention import dot_product_attention  # noqa: F401
from tinyxla._src.nn.functions import (  # noqa: F401
    celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity, leaky_relu,
    log1mexp, log_sigmoid, log_softmax, logmeanexp, logsumexp, mish, one_hot, relu, relu6, selu,
    sigmoid, silu, soft_sign, softmax, softplus, sparse_plus, sparse_sigmoid, squareplus,
    standardize, swish)
from tinyxla._src.numpy.ufuncs import tanh  # noqa: F401  (jax.nn.tanh is jnp.tanh)
from tinyxla.nn import initializers  # noqa: F401
