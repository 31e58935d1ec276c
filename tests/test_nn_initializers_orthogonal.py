"""``nn.initializers.orthogonal`` / ``delta_orthogonal`` against values pinned from JAX 0.10.2
(JAX takes LAPACK's QR; tinyxla's Householder QR in lax ops agrees to rounding), the
orthogonality they promise, jit, vmap and JAX's errors."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.nn import initializers

KEY = jax.random.PRNGKey(42)
ATOL = 1e-6  # rounding of two different QR algorithms (and 2% of normal samples an ulp off)


def test_pinned_jax_values():
    np.testing.assert_allclose(initializers.orthogonal()(KEY, (2, 3)), [
        [-0.08792734146118164, 0.918591320514679, -0.3853037655353546],
        [0.8722633719444275, 0.2578020691871643, 0.41556572914123535]], atol=ATOL)
    np.testing.assert_allclose(initializers.orthogonal(column_axis=0)(KEY, (4, 3)), [
        [-0.01653873920440674, 0.9798700213432312, -0.14570090174674988],
        [0.0897190272808075, -0.10146704316139221, 0.20810870826244354],
        [-0.8419257998466492, 0.06932306289672852, 0.5343054533004761],
        [0.5318253040313721, 0.15733349323272705, 0.8062130808830261]], atol=ATOL)
    expect = np.zeros((3, 2, 4), np.float32)
    expect[1] = [[-0.01917135715484619, 0.20028646290302277, -0.0840103030204773,
                  -0.9759407043457031],
                 [0.799323320388794, 0.5303018689155579, 0.2739070653915405,
                  0.06955063343048096]]
    np.testing.assert_allclose(initializers.delta_orthogonal()(KEY, (3, 2, 4)), expect,
                               atol=ATOL)


@pytest.mark.parametrize("shape, column_axis", [((5, 3), -1), ((3, 5), -1), ((16, 16), -1),
                                                ((2, 3, 4), -1), ((3, 2, 4), 1),
                                                ((40, 7), 0)])
def test_orthonormal(shape, column_axis):
    w = np.asarray(initializers.orthogonal(scale=2.0, column_axis=column_axis)(KEY, shape),
                   np.float64) / 2
    assert w.shape == shape
    m = np.moveaxis(w, column_axis, -1).reshape(-1, shape[column_axis])
    small = min(m.shape)
    gram = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
    np.testing.assert_allclose(gram, np.eye(small), atol=2e-6)


def test_sign_convention_matches_numpy_qr():
    # JAX's Q is the QR of a normal sample with each column times sign(diag(R)).
    for shape in [(6, 4), (8, 8)]:
        z = np.asarray(jax.random.normal(KEY, shape), np.float64)
        q, r = np.linalg.qr(z)
        expect = q * np.sign(np.diag(r))
        got = initializers.orthogonal()(KEY, shape)
        np.testing.assert_allclose(got, expect, atol=2e-6)


def test_dtypes_jit_vmap():
    init = initializers.orthogonal()
    assert init(KEY, (3, 3), jnp.bfloat16).dtype == jnp.bfloat16
    assert init(KEY, (3, 3), jnp.float16).dtype == jnp.float16
    assert init(KEY, (0, 3)).shape == (0, 3)
    np.testing.assert_allclose(jax.jit(init, static_argnums=1)(KEY, (4, 3)), init(KEY, (4, 3)),
                               atol=1e-6)
    keys = jax.random.split(KEY, 3)
    got = jax.vmap(lambda k: init(k, (4, 3)))(keys)
    np.testing.assert_allclose(got, np.stack([init(k, (4, 3)) for k in keys]), atol=1e-6)
    with jax.enable_x64(True):
        w = np.asarray(init(KEY, (6, 6), jnp.float64))
        assert w.dtype == np.float64
        np.testing.assert_allclose(w.T @ w, np.eye(6), atol=1e-12)
    d = initializers.delta_orthogonal()(KEY, (3, 3, 2, 2))
    np.testing.assert_array_equal(np.asarray(d)[0], 0)
    np.testing.assert_allclose(np.asarray(d)[1, 1].T @ np.asarray(d)[1, 1], np.eye(2), atol=1e-6)
    assert initializers.delta_orthogonal()(KEY, (2, 3, 1, 2, 3)).shape == (2, 3, 1, 2, 3)


def test_errors():
    with pytest.raises(ValueError, match="orthogonal initializer requires at least a 2D shape"):
        initializers.orthogonal()(KEY, (3,))
    with pytest.raises(ValueError, match="Delta orthogonal initializer requires a 3D, 4D or 5D "
                                         "shape."):
        initializers.delta_orthogonal()(KEY, (3, 3))
    with pytest.raises(ValueError, match="`fan_in` must be less or equal than `fan_out`. "):
        initializers.delta_orthogonal()(KEY, (3, 4, 3))
