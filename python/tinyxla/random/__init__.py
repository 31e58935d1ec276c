"""``tinyxla.random`` (``jax.random``): stateless random numbers from threefry2x32 keys."""
from tinyxla._src.prng import PRNGKeyArray  # noqa: F401
from tinyxla._src.random import (  # noqa: F401
    PRNGKey, bernoulli, bits, categorical, cauchy, choice, exponential, fold_in, geometric,
    gumbel, key, key_data, key_impl, laplace, logistic, lognormal, maxwell, normal, pareto,
    permutation, rademacher, randint, rayleigh, split, triangular, truncated_normal, uniform,
    weibull_min, wrap_key_data)

from tinyxla._src.random_distributions import (  # noqa: F401
    ball, beta, binomial, chisquare, clone, dirichlet, double_sided_maxwell, f, gamma,
    generalized_normal, key_dtype, loggamma, multinomial, multivariate_normal, orthogonal,
    poisson, t, wald)
