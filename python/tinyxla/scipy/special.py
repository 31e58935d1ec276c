"""``tinyxla.scipy.special`` (``jax.scipy.special``)."""
from tinyxla._src.scipy.special import (  # noqa: F401
    digamma, entr, erf, erfc, erfinv, expit, gammaln, logit, logsumexp, ndtr, ndtri, xlog1py,
    xlogy)
