"""lax.fft (the C++ op in cpp/src/ops/fft.cc, our own mixed-radix and Bluestein kernels)
and jax.numpy.fft: against numpy's pocketfft over every length 1..4096 and some large
primes, over 1-3 (and more) axes, with n / s / axes / norm; values, dtypes and errors
pinned from JAX 0.10.2; jit and vmap against eager; derivatives against numerical ones;
round trips and Parseval."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.test_util import check_grads

RNG = np.random.default_rng(1234)


def _rel_err(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(np.max(np.abs(want), initial=0.0), 1e-30)
    return np.max(np.abs(got - want), initial=0.0) / scale


def _signal(shape, complex_=True):
    x = RNG.standard_normal(shape)
    return x + 1j * RNG.standard_normal(shape) if complex_ else x


# JAX's fft tests compare with numpy at 1e-4 (single) and 1e-12 (double); relative to the
# largest output magnitude.
F32_TOL, F64_TOL = 1e-5, 1e-12


def _check_all_types(n, real_dtype, tol, inverse=True):
    cdtype = np.complex64 if real_dtype == np.float32 else np.complex128
    x = _signal((n,))
    xc, xr = x.astype(cdtype), x.real.astype(real_dtype)
    assert _rel_err(lax.fft(xc, "fft", (n,)), np.fft.fft(xc)) < tol, n
    if inverse:
        assert _rel_err(lax.fft(xc, "ifft", (n,)), np.fft.ifft(xc)) < tol, n
    assert _rel_err(lax.fft(xr, "rfft", (n,)), np.fft.rfft(xr)) < tol, n
    half = np.fft.rfft(xr).astype(cdtype)
    assert _rel_err(lax.fft(half, "irfft", (n,)), np.fft.irfft(half, n)) < tol, n


def test_every_length_up_to_4096_float32():
    # IFFT is FFT's code with the other sign: every 16th length is enough for it.
    for n in range(1, 4097):
        _check_all_types(n, np.float32, F32_TOL, inverse=n % 16 == 1)


@pytest.mark.parametrize("n", [4099, 10007, 65537, 100003, 3 * 5 * 7 * 11 * 13, 2 * 127 * 131,
                               59 * 61, 2 ** 16])
def test_large_primes_and_mixed_lengths(n):
    _check_all_types(n, np.float32, F32_TOL)


def test_lengths_float64(x64):
    for n in list(range(1, 300)) + [509, 1024, 1031, 4096, 4097, 65537, 3 * 5 * 7 * 11 * 13 * 17]:
        _check_all_types(n, np.float64, F64_TOL)


@pytest.mark.parametrize("fft_type", ["fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("lengths", [(6,), (4, 6), (3, 5, 8), (1, 7), (9, 1)])
def test_trailing_axes_against_numpy(fft_type, lengths):
    k = len(lengths)
    batch = (2, 3)
    axes = tuple(range(len(batch), len(batch) + k))
    if fft_type in ("fft", "ifft"):
        # A transposed (strided) operand.
        x = _signal(batch + lengths[::-1]).astype(np.complex64)
        x = np.ascontiguousarray(x)
        perm = tuple(range(len(batch))) + tuple(range(len(batch) + k - 1, len(batch) - 1, -1))
        arg = jnp.transpose(jnp.asarray(x), perm)
        want = (np.fft.fftn if fft_type == "fft" else np.fft.ifftn)(
            np.transpose(x, perm), axes=axes)
    elif fft_type == "rfft":
        arg = _signal(batch + lengths, complex_=False).astype(np.float32)
        want = np.fft.rfftn(arg, axes=axes)
    else:
        spectrum = np.fft.rfftn(_signal(batch + lengths, complex_=False), axes=axes)
        arg = spectrum.astype(np.complex64)
        want = np.fft.irfftn(spectrum, lengths, axes=axes)
    got = lax.fft(arg, fft_type, lengths)
    assert _rel_err(got, want) < F32_TOL
    assert _rel_err(jax.jit(lambda v: lax.fft(v, fft_type, lengths))(arg), want) < F32_TOL


def test_irfft_ignores_imaginary_zero_and_nyquist():
    spectrum = _signal((3, 5)).astype(np.complex64)
    for n in (8, 9):
        got = lax.fft(spectrum, "irfft", (n,))
        np.testing.assert_allclose(got, np.fft.irfft(spectrum, n), rtol=1e-5, atol=1e-5)


# Batches of lines go through the lanes kernels (L lines at once, one per SIMD lane; L is 2
# to 16 by ISA and precision) from 4 lines on: batch sizes around multiples of 16, every
# radix kind (4, 2, 3, 5, 7, 11, 13, 17, a generic prime), lines shorter than L and not a
# multiple of it (the element-by-element tail of the row transposes).
_LANE_LENGTHS = [2, 3, 4, 8, 12, 17, 38, 45, 64, 77, 121, 169, 289, 1000, 1024, 2 * 59]
_LANE_BATCHES = [4, 5, 15, 16, 17, 33]


def _check_batch(x, lengths, tol):
    """lax.fft of every type over the trailing `lengths` of x (complex) against numpy."""
    axes = tuple(range(-len(lengths), 0))
    cdtype = np.complex64 if tol == F32_TOL else np.complex128
    xc, xr = x.astype(cdtype), x.real.astype(cdtype(0).real.dtype)
    assert _rel_err(lax.fft(xc, "fft", lengths), np.fft.fftn(xc, axes=axes)) < tol
    assert _rel_err(lax.fft(xc, "ifft", lengths), np.fft.ifftn(xc, axes=axes)) < tol
    assert _rel_err(lax.fft(xr, "rfft", lengths), np.fft.rfftn(xr, axes=axes)) < tol
    half = np.fft.rfftn(xr, axes=axes).astype(cdtype)
    assert _rel_err(lax.fft(half, "irfft", lengths),
                    np.fft.irfftn(half, lengths, axes=axes)) < tol


@pytest.mark.parametrize("n", _LANE_LENGTHS)
def test_batched_rows_against_numpy(n):
    for rows in _LANE_BATCHES:
        _check_batch(_signal((rows, n)), (n,), F32_TOL)


def test_batched_rows_float64(x64):
    for n in (12, 64, 77, 1024):
        for rows in (4, 9, 17):
            _check_batch(_signal((rows, n)), (n,), F64_TOL)


# Axes other than the last: columns L adjacent at a time, the last batch of a block part
# full when the stride is not a multiple of L; blocks of a batch dimension in front.
@pytest.mark.parametrize("shape, k", [((64, 5), 2), ((12, 17), 2), ((256, 33), 2),
                                      ((45, 16), 2), ((4, 7, 19), 3), ((3, 12, 17), 2),
                                      ((5, 3, 40), 3)])
def test_batched_columns_against_numpy(shape, k):
    x = _signal(shape)
    _check_batch(x, shape[-k:], F32_TOL)
    # A transposed (strided) operand.
    xt = np.ascontiguousarray(x.astype(np.complex64).T)
    got = lax.fft(jnp.transpose(jnp.asarray(xt)), "fft", shape[-k:])
    assert _rel_err(got, np.fft.fftn(xt.T, axes=tuple(range(-k, 0)))) < F32_TOL


def test_batched_columns_float64(x64):
    for shape in ((64, 5), (12, 17), (3, 20, 9)):
        _check_batch(_signal(shape), shape[-2:], F64_TOL)


def test_lax_fft_types_and_dtypes():
    assert lax.FftType.RFFT == 2 and lax.FftType(3) is lax.FftType.IRFFT
    x = np.arange(8, dtype=np.int32)
    assert lax.fft(x, lax.FftType.FFT, (8,)).dtype == np.complex64
    assert lax.fft(x, "RFFT", (8,)).dtype == np.complex64
    assert lax.fft(x, "rfft", (8,)).shape == (5,)
    assert lax.fft(x, "irfft", (14,)).dtype == np.float32
    out = lax.fft(x.astype(np.float32), "fft", ())
    assert out.dtype == np.complex64 and out.shape == (8,)


@pytest.mark.parametrize("call, error, message", [
    (lambda: lax.fft(np.ones(4, np.complex64), "foo", (4,)), ValueError, "Unknown FFT type 'foo'"),
    (lambda: lax.fft(np.ones(4, np.complex64), 3, (4,)), TypeError, "Unknown FFT type value '3'"),
    (lambda: lax.fft(np.ones(4, np.complex64), "rfft", (4,)), ValueError,
     "only real valued inputs supported for rfft"),
    (lambda: lax.fft(np.ones((2, 3), np.complex64), "fft", (3, 4)), ValueError,
     "FFT input shape (2, 3) minor dimensions must be equal to fft_lengths (3, 4)"),
    (lambda: lax.fft(np.ones((2, 3), np.complex64), "fft", (4,)), ValueError,
     "FFT input shape (2, 3) minor dimensions must be equal to fft_lengths (4,)"),
    (lambda: lax.fft(np.ones(3, np.complex64), "fft", (3, 1)), ValueError,
     "FFT input shape (3,) must have at least as many input dimensions as fft_lengths (3, 1)."),
    (lambda: lax.fft(np.ones((2, 4), np.float32), "rfft", (2, 5)), ValueError,
     "RFFT input shape (2, 4) minor dimensions must be equal to fft_lengths (2, 5)"),
    (lambda: lax.fft(np.ones((2, 4), np.complex64), "irfft", (3, 6)), ValueError,
     "IRFFT input shape (2, 4) minor dimensions must be equal to all except the last "
     "fft_length, got fft_lengths=(3, 6)"),
    (lambda: lax.fft(np.ones(4, np.complex64), "irfft", (4,)), ValueError,
     "IRFFT requires innermost dimension to be compatible with fft_length[-1]/2+1. "
     "Got: 4 but fft_length is 4."),
])
def test_lax_fft_errors(call, error, message):
    with pytest.raises(error) as e:
        call()
    assert message in str(e.value)
    with pytest.raises(error):
        jax.jit(call)()


def test_pinned_jax_values():
    x = jnp.array([[1, 2, 5, 6], [4, 1, 3, 7], [5, 9, 2, 1]])
    want = np.array([[46, 2j, -6, -2j],
                     [-2 + 1.7320508j, 6.1243553 + 6.732051j, -1.7320508j, -18.124355 - 3.267949j],
                     [-2 - 1.7320508j, -18.124355 + 3.267949j, 1.7320508j, 6.1243553 - 6.732051j]])
    got = jnp.fft.fftn(x)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(
        jnp.fft.rfft(jnp.array([1., 2., 3., 4., 5.]), norm="ortho"),
        [6.708204, -1.1180339 + 1.5388418j, -1.1180339 + 0.36327124j], rtol=1e-6)
    np.testing.assert_allclose(jnp.fft.hfft(jnp.array([1., 2. + 1j, 3.])), [8, 0, 0, -4],
                               atol=1e-6)
    np.testing.assert_allclose(jnp.fft.ihfft(jnp.array([1., 2., 3., 4.])),
                               [2.5, -0.5 - 0.5j, -0.5], atol=1e-6)
    np.testing.assert_allclose(jnp.fft.fftfreq(5, d=0.5), [0, 0.4, 0.8, -0.8, -0.4], rtol=1e-6)
    f16 = jnp.fft.rfftfreq(5, dtype=jnp.float16)
    assert f16.dtype == np.float16
    np.testing.assert_allclose(f16, [0, 0.2, 0.4], rtol=1e-3)
    ints = jnp.fft.fftfreq(4, dtype=jnp.int32)
    assert ints.dtype == np.int32 and np.all(np.asarray(ints) == 0)
    empty = jnp.fft.irfft(jnp.ones((3, 1)))
    assert empty.shape == (3, 0) and empty.dtype == np.float32


def test_jnp_dtypes():
    x = jnp.array([[1, 2, 5, 6], [4, 1, 3, 7]])
    assert jnp.fft.fft(x).dtype == np.complex64
    assert jnp.fft.fft(x.astype(jnp.float16)).dtype == np.complex64
    assert jnp.fft.rfft(x.astype(bool)).dtype == np.complex64
    assert jnp.fft.irfft(x).dtype == np.float32
    assert jnp.fft.fftfreq(4).dtype == np.float32


def test_jnp_dtypes_x64(x64):
    x = np.arange(6.0)
    assert jnp.fft.fft(x).dtype == np.complex128
    assert jnp.fft.rfft(x).dtype == np.complex128
    assert jnp.fft.irfft(x).dtype == np.float64
    assert jnp.fft.fft(x.astype(np.float32)).dtype == np.complex64
    assert jnp.fft.fftfreq(4).dtype == np.float64


_X = jnp.array([[1, 2, 5, 6], [4, 1, 3, 7], [5, 9, 2, 1]])


@pytest.mark.parametrize("call, error, message", [
    (lambda: jnp.fft.fft([1, 2]), TypeError,
     "jax.numpy.fft.fft requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    (lambda: jnp.fft.fft(_X, n=0), ValueError, "Shape should be positive."),
    (lambda: jnp.fft.fftn(_X, s=(2,), axes=(0, 1)), ValueError,
     "Shape and axes have different lengths."),
    (lambda: jnp.fft.fftn(_X, axes=(0, 0)), ValueError,
     "jax.numpy.fft.fftn does not support repeated axes. Got axes (0, 0)."),
    (lambda: jnp.fft.fft(_X, axis=(0, 1)), ValueError,
     "jax.numpy.fft.fft does not support multiple axes. Please use jax.numpy.fft.fftn. "
     "Got axis = (0, 1)."),
    (lambda: jnp.fft.fft2(_X, axes=(0,)), ValueError,
     "jax.numpy.fft.fft2 only supports 2 axes. Got axes = (0,)."),
    (lambda: jnp.fft.fft(_X, norm="bad"), ValueError,
     'Invalid norm value bad; should be "backward","ortho" or "forward".'),
    (lambda: jnp.fft.fftfreq([3]), ValueError,
     "The n argument of jax.numpy.fft.fftfreq only takes an int. Got n = [3]."),
    (lambda: jnp.fft.rfftfreq(4, d=[1.]), ValueError,
     "The d argument of jax.numpy.fft.rfftfreq only takes a single value. Got d = [1.0]."),
    (lambda: jnp.fft.fft(_X, axis=2), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda: jnp.fft.rfft(_X + 1j), ValueError, "only real valued inputs supported for rfft"),
    (lambda: jnp.fft.fftshift([1, 2]), TypeError,
     "fftshift requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    (lambda: jnp.fft.fft(jnp.float32(2.0)), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
])
def test_jnp_errors(call, error, message):
    with pytest.raises(error) as e:
        call()
    assert message in str(e.value)


_X3 = RNG.standard_normal((4, 6, 5)).astype(np.float32)
_ONE_D_ARGS = [{}, dict(n=7), dict(n=3, axis=0), dict(norm="ortho"), dict(norm="forward", axis=1),
               dict(norm="backward", n=10, axis=-2)]


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "hfft", "ihfft"])
@pytest.mark.parametrize("kwargs", _ONE_D_ARGS)
def test_jnp_1d_against_numpy(name, kwargs):
    x = _X3 if name in ("rfft", "ihfft") else (_X3 + 0.5j * _X3[::-1]).astype(np.complex64)
    got = getattr(jnp.fft, name)(x, **kwargs)
    want = getattr(np.fft, name)(x, **kwargs)
    assert _rel_err(got, want) < F32_TOL
    jitted = jax.jit(lambda v: getattr(jnp.fft, name)(v, **kwargs))(x)
    assert _rel_err(jitted, want) < F32_TOL


@pytest.mark.parametrize("kwargs", _ONE_D_ARGS)
def test_jnp_irfft_against_numpy(kwargs):
    spectrum = np.fft.rfft(_X3, axis=kwargs.get("axis", -1)).astype(np.complex64)
    assert _rel_err(jnp.fft.irfft(spectrum, **kwargs), np.fft.irfft(spectrum, **kwargs)) < F32_TOL


_ND_ARGS = [{}, dict(s=(3, 4), axes=(1, 2)), dict(axes=(0, 2)), dict(axes=(2, 0)),
            dict(s=(5, 3), axes=(2, 0), norm="ortho"), dict(s=(8, 2), axes=(-1, 1), norm="forward")]


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "fft2", "ifft2", "rfft2"])
@pytest.mark.parametrize("kwargs", _ND_ARGS)
def test_jnp_nd_against_numpy(name, kwargs):
    if name.endswith("2") and kwargs.get("axes") is None:
        kwargs = dict(kwargs, axes=(-2, -1))
    got = getattr(jnp.fft, name)(_X3, **kwargs)
    assert _rel_err(got, getattr(np.fft, name)(_X3, **kwargs)) < F32_TOL


@pytest.mark.parametrize("name", ["irfftn", "irfft2"])
@pytest.mark.parametrize("kwargs", _ND_ARGS)
def test_jnp_inverse_real_nd_against_numpy(name, kwargs):
    axes = kwargs.get("axes", (-2, -1) if name.endswith("2") else None)
    kwargs = dict(kwargs, axes=axes)
    spectrum = np.fft.rfftn(_X3, axes=axes).astype(np.complex64)
    got = getattr(jnp.fft, name)(spectrum, **kwargs)
    assert _rel_err(got, getattr(np.fft, name)(spectrum, **kwargs)) < F32_TOL


def test_more_than_three_axes():
    x = RNG.standard_normal((2, 3, 4, 5, 3)).astype(np.float32)
    for name in ("fftn", "ifftn", "rfftn"):
        assert _rel_err(getattr(jnp.fft, name)(x), getattr(np.fft, name)(x)) < F32_TOL
    spectrum = np.fft.rfftn(x).astype(np.complex64)
    axes = tuple(range(5))
    assert _rel_err(jnp.fft.irfftn(spectrum, x.shape, axes),
                    np.fft.irfftn(spectrum, x.shape, axes)) < F32_TOL


def test_freqs_and_shifts():
    for n in (1, 4, 5, 8):
        for d in (1.0, 0.25):
            np.testing.assert_allclose(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), rtol=1e-6)
            np.testing.assert_allclose(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), rtol=1e-6)
    x = np.arange(30).reshape(5, 6)
    for axes in (None, 0, 1, (0, 1), (-1,)):
        np.testing.assert_array_equal(jnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))
    np.testing.assert_array_equal(jax.jit(jnp.fft.fftshift)(x), np.fft.fftshift(x))


def test_round_trips_and_parseval():
    x = _signal((3, 40)).astype(np.complex64)
    np.testing.assert_allclose(jnp.fft.ifft(jnp.fft.fft(x)), x, atol=1e-5)
    np.testing.assert_allclose(jnp.fft.ifftn(jnp.fft.fftn(x)), x, atol=1e-5)
    r = x.real
    for n in (40, 39):
        np.testing.assert_allclose(jnp.fft.irfft(jnp.fft.rfft(r[:, :n]), n), r[:, :n], atol=1e-5)
    np.testing.assert_allclose(jnp.fft.irfftn(jnp.fft.rfftn(r), r.shape), r, atol=1e-5)
    big = _signal((1031,)).astype(np.complex64)  # a prime: Bluestein
    for v in (x[0], big):
        energy = np.sum(np.abs(v) ** 2)
        spectrum = np.asarray(jnp.fft.fft(v, norm="ortho"))
        np.testing.assert_allclose(np.sum(np.abs(spectrum) ** 2), energy, rtol=1e-5)
        np.testing.assert_allclose(np.sum(np.abs(np.asarray(jnp.fft.fft(v))) ** 2) / len(v),
                                   energy, rtol=1e-5)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "fft2", "rfftn", "irfftn"])
def test_vmap_matches_loop(name):
    x = RNG.standard_normal((3, 4, 6)).astype(np.float32)
    if name.startswith("i"):
        x = (x + 1j * x[::-1]).astype(np.complex64)
    f = getattr(jnp.fft, name)
    for in_axes in (0, 1, 2):
        got = jax.vmap(f, in_axes=in_axes)(x)
        want = np.stack([np.asarray(f(np.take(x, i, axis=in_axes)))
                         for i in range(x.shape[in_axes])])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fft_type, lengths, complex_in", [
    ("fft", (5,), True), ("ifft", (4, 3), True), ("fft", (2, 3, 4), True),
    ("rfft", (6,), False), ("rfft", (7,), False), ("rfft", (3, 4), False),
    ("irfft", (6,), True), ("irfft", (7,), True), ("irfft", (3, 4), True)])
def test_grads_against_numerical(x64, fft_type, lengths, complex_in):
    shape = (2,) + lengths
    if fft_type == "irfft":
        shape = shape[:-1] + (lengths[-1] // 2 + 1,)
    x = _signal(shape, complex_in)
    check_grads(lambda v: lax.fft(v, fft_type, lengths), (x,), order=2, modes=("fwd", "rev"))


def test_grad_of_a_jnp_loss(x64):
    w = RNG.standard_normal(5)

    def loss(x):
        spectrum = jnp.fft.rfft(x, norm="ortho")
        return jnp.sum(jnp.abs(spectrum) ** 2 * w) + jnp.sum(jnp.fft.irfft(spectrum * w, n=8) ** 3)

    x = RNG.standard_normal(8)
    check_grads(loss, (x,), order=1, modes=("rev",))
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(x), jax.grad(loss)(x), rtol=1e-12)
