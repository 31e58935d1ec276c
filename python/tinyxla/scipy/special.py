"""``tinyxla.scipy.special`` (``jax.scipy.special``)."""
from tinyxla._src.scipy.bessel import bessel_jn, i0, i0e, i1, i1e  # noqa: F401
from tinyxla._src.scipy.boxcox import boxcox, boxcox1p  # noqa: F401
from tinyxla._src.scipy.divergences import kl_div, rel_entr  # noqa: F401
from tinyxla._src.scipy.error_functions import erfcx, log_ndtr  # noqa: F401
from tinyxla._src.scipy.faddeeva import dawsn, fresnel, wofz  # noqa: F401
from tinyxla._src.scipy.exponential_integrals import exp1, expi, expn  # noqa: F401
from tinyxla._src.scipy.gamma_functions import (  # noqa: F401
    bernoulli, beta, betainc, betaln, comb, factorial, gamma, gammainc, gammaincc, gammasgn,
    loggamma, multigammaln, poch, polygamma, zeta)
from tinyxla._src.scipy.hypergeometric import hyp1f1, hyp2f1  # noqa: F401
from tinyxla._src.scipy.owens_t import owens_t  # noqa: F401
from tinyxla._src.scipy.sici import sici  # noqa: F401
from tinyxla._src.scipy.softmax import log_softmax, softmax  # noqa: F401
from tinyxla._src.scipy.special import (  # noqa: F401
    digamma, entr, erf, erfc, erfinv, expit, gammaln, logit, logsumexp, ndtr, ndtri, xlog1py,
    xlogy)
from tinyxla._src.scipy.spence import spence  # noqa: F401
from tinyxla._src.scipy.spherical_harmonics import sph_harm_y  # noqa: F401
