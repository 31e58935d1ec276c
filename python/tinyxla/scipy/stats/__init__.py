"""``tinyxla.scipy.stats`` (``jax.scipy.stats``): the distributions as modules
(``stats.norm.logpdf``), ``gaussian_kde``, ``mode``, ``rankdata`` and ``sem``."""
from tinyxla.scipy.stats import (  # noqa: F401
    bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom,
    gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm,
    pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from tinyxla._src.scipy.stats._core import mode, rankdata, sem  # noqa: F401
from tinyxla._src.scipy.stats.kde import gaussian_kde  # noqa: F401
