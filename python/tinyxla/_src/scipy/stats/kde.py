"""``jax.scipy.stats.gaussian_kde``: a Gaussian kernel density estimate. JAX whitens with
a Cholesky factor of the precision and solves with ``cho_solve``; there is no Cholesky
here yet, so the covariance's eigendecomposition (``jnp.linalg.eigh``) gives the same
whitening (another square root of the precision, the same quadratic forms and
determinants). ``resample`` (which needs ``random.multivariate_normal``'s Cholesky to
match JAX's samples) is not provided."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import check_arraylike, promote_dtypes_inexact
from tinyxla._src.scipy.logsumexp import logsumexp
from tinyxla._src.scipy.special import ndtr
from tinyxla._src.tree_util import register_pytree_node_class
from tinyxla._src.vmap import vmap


def _eigh_inverse_root(cov: Any) -> tuple[Any, Any]:
    """A matrix ``W`` with ``W W^T = cov^-1`` and ``log det cov``."""
    w, v = jnp.linalg.eigh(cov)
    return v / jnp.sqrt(w), jnp.sum(jnp.log(w))


@register_pytree_node_class
class gaussian_kde:
    """Mirrors ``jax.scipy.stats.gaussian_kde``: ``dataset`` of shape (d, n) (or (n,)),
    ``bw_method`` 'scott', 'silverman', a scalar or a callable, optional ``weights``."""

    __slots__ = ("neff", "dataset", "weights", "covariance", "inv_cov")

    def __init__(self, dataset: Any, bw_method: Any = None, weights: Any = None):
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if dtypes.issubdtype(dataset.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            dataset, = promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self.dataset, self.weights = dataset, weights
        self.neff = neff = 1 / jnp.sum(weights ** 2)
        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = jnp.power(neff, -1. / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1. / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                             "callable.")
        # The weighted covariance with numpy's unbiased aweights correction (jnp.cov's).
        mean = jnp.sum(dataset * weights, axis=1, keepdims=True)
        centered = dataset - mean
        data_covariance = (centered * weights) @ centered.T / (1 - jnp.sum(weights ** 2))
        inv_root, _ = _eigh_inverse_root(data_covariance)
        self.covariance = data_covariance * factor ** 2
        self.inv_cov = inv_root @ inv_root.T / factor ** 2

    def tree_flatten(self) -> tuple[tuple, None]:
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> "gaussian_kde":
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        return kde

    @property
    def d(self) -> int:
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        return self.dataset.shape[1]

    def _kernel_sum(self, points: Any, in_log: bool) -> Any:
        """sum_i w_i N(x; data_i, covariance) at each point (its log if ``in_log``)."""
        check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        whitening, log_det_cov = _eigh_inverse_root(self.covariance)
        data = self.dataset.T @ whitening
        xs = points.T @ whitening
        log_norm = -0.5 * log_det_cov - 0.5 * self.d * float(np.log(2 * np.pi))
        sq = jnp.sum((xs[:, None, :] - data[None, :, :]) ** 2, axis=-1)
        if in_log:
            return logsumexp(log_norm - 0.5 * sq, axis=1, b=self.weights[None, :])
        return jnp.sum(self.weights[None, :] * jnp.exp(log_norm - 0.5 * sq), axis=1)

    def evaluate(self, points: Any) -> Any:
        """The density at ``points`` (shape (d, m), or (m,) when d = 1)."""
        return self._kernel_sum(points, in_log=False)

    def __call__(self, points: Any) -> Any:
        return self.evaluate(points)

    def pdf(self, x: Any) -> Any:
        """The density at ``x`` (``evaluate``)."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """The log density at ``x``."""
        check_arraylike("logpdf", x)
        return self._kernel_sum(x, in_log=True)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the density times the Gaussian N(mean, cov)."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        return _gaussian_convolve(self.covariance + cov, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The mass of a one-dimensional density between ``low`` and ``high``."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        low = jnp.squeeze((low - self.dataset) / sigma)
        high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (ndtr(high) - ndtr(low)))

    def integrate_kde(self, other: "gaussian_kde") -> Any:
        """The integral of the product of two densities."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        small, large = (self, other) if self.n < other.n else (other, self)
        total = self.covariance + other.covariance
        per_point = vmap(lambda m: _gaussian_convolve(total, large.dataset, large.weights, m),
                         in_axes=1)(small.dataset)
        return jnp.sum(per_point * small.weights)

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        """Not supported, as in JAX."""
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method: Any = None) -> None:
        """Not supported, as in JAX."""
        raise NotImplementedError("dynamically changing the bandwidth method is not "
                                  "supported")

    def _reshape_points(self, points: Any) -> Any:
        if dtypes.issubdtype(jnp.result_type(points), np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _gaussian_convolve(cov: Any, target: Any, weights: Any, mean: Any) -> Any:
    """sum_i w_i N(target_i; mean, cov)."""
    whitening, log_det = _eigh_inverse_root(cov)
    diff = (target - mean[:, None]).T @ whitening
    d = cov.shape[0]
    norm = jnp.exp(-0.5 * log_det - 0.5 * d * float(np.log(2 * np.pi)))
    return norm * jnp.sum(jnp.exp(-0.5 * jnp.sum(diff * diff, axis=1)) * weights)
