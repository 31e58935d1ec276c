"""Automatic differentiation: numerical checks of every differentiable primitive and jnp
function (orders 1 and 2, forward and reverse, float64), rule coverage, the seed cases,
composition with jit, printed gradient jaxprs and error texts pinned from JAX 0.10.2."""
import functools
import sys

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla._src import core
from tinyxla._src.interpreters import ad
from tinyxla._src.lax import lax as lax_internal
from tinyxla._src.lax import slicing as lax_slicing
from tinyxla._src.lax import cumulative as lax_cumulative
from tinyxla._src.lax import sorting as lax_sorting
from tinyxla.test_util import check_grads


_rng = np.random.RandomState(1)
A = _rng.randn(3, 4)
B = _rng.randn(3, 4)
P = _rng.rand(3, 4) + 0.5          # positive
U = _rng.rand(3, 4) * 1.6 - 0.8    # in (-0.8, 0.8)
C = _rng.randn(3, 4) + 1j * _rng.randn(3, 4)
C2 = _rng.randn(3, 4) + 1j * _rng.randn(3, 4)
V = _rng.randn(4)
M = _rng.randn(4, 5)
NEAR_HALF = _rng.rand(3, 4) * 0.3 + 0.1  # away from integers, for floor/round/rem

# name -> (function, args). Every differentiable lax primitive appears at least once.
_ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                   start_index_map=(0,))
_ELEMS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0, 1))
_ROWS_S = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))

LAX_CASES = {
    "neg": (lax.neg, (A,)),
    "sign": (lax.sign, (A,)),
    "floor": (lax.floor, (A + NEAR_HALF,)),
    "ceil": (lax.ceil, (A + NEAR_HALF,)),
    "round": (lax.round, (A + NEAR_HALF,)),
    "exp": (lax.exp, (A,)),
    "exp_complex": (lax.exp, (C,)),
    "exp2": (lax.exp2, (A,)),
    "log": (lax.log, (P,)),
    "log_complex": (lax.log, (C,)),
    "log1p": (lax.log1p, (P,)),
    "expm1": (lax.expm1, (A,)),
    "tanh": (lax.tanh, (A,)),
    "logistic": (lax.logistic, (A,)),
    "sin": (lax.sin, (A,)),
    "sin_complex": (lax.sin, (C,)),
    "cos": (lax.cos, (A,)),
    "tan": (lax.tan, (U,)),
    "asin": (lax.asin, (U,)),
    "acos": (lax.acos, (U,)),
    "atan": (lax.atan, (A,)),
    "sinh": (lax.sinh, (A,)),
    "cosh": (lax.cosh, (A,)),
    "asinh": (lax.asinh, (A,)),
    "acosh": (lax.acosh, (P + 1,)),
    "atanh": (lax.atanh, (U,)),
    "sqrt": (lax.sqrt, (P,)),
    "sqrt_complex": (lax.sqrt, (C,)),
    "rsqrt": (lax.rsqrt, (P,)),
    "cbrt": (lax.cbrt, (P,)),
    "abs": (lax.abs, (A,)),
    "abs_complex": (lax.abs, (C,)),
    "square": (lax.square, (A,)),
    "erf": (lax.erf, (A,)),
    "erfc": (lax.erfc, (A,)),
    "erf_inv": (lax.erf_inv, (U,)),
    "lgamma": (lax.lgamma, (P,)),
    "digamma": (lax.digamma, (P,)),
    "digamma_negative": (lax.digamma, (-P * 0.3 - 0.3,)),
    "real": (lax.real, (C,)),
    "imag": (lax.imag, (C,)),
    "conj": (lax.conj, (C,)),
    "conj_of_real": (lax.conj, (A,)),
    "complex": (lax.complex, (A, B)),
    "integer_pow_3": (lambda x: lax.integer_pow(x, 3), (A,)),
    "integer_pow_-2": (lambda x: lax.integer_pow(x, -2), (P,)),
    "integer_pow_0": (lambda x: lax.integer_pow(x, 0) * x, (A,)),
    "add": (lax.add, (A, B)),
    "add_scalar_broadcast": (lax.add, (A, 1.5)),
    "sub": (lax.sub, (A, B)),
    "mul": (lax.mul, (A, B)),
    "mul_complex": (lax.mul, (C, C2)),
    "mul_size1_broadcast": (lambda x, y: lax.mul(x, y[:, :1]), (A, B)),
    "div": (lax.div, (A, P)),
    "div_complex": (lax.div, (C, C2)),
    "rem": (lax.rem, (A, P + 2)),
    "max": (lax.max, (A, B)),
    "max_ties": (lambda x: lax.max(x, x), (A,)),
    "min": (lax.min, (A, B)),
    "atan2": (lax.atan2, (A, B)),
    "pow": (lax.pow, (P, A)),
    "pow_int_exponent": (lambda x: lax.pow(x, np.int64(3)), (A,)),
    "pow_complex": (lax.pow, (C, C2)),
    "convert_element_type": (lambda x: lax.convert_element_type(x, np.complex128), (A,)),
    "convert_complex_to_real": (lambda x: lax.real(lax.convert_element_type(x, np.complex128))
                                * lax.convert_element_type(x, np.float64), (A,)),
    "select_n_bool": (lambda x, y: lax.select(x > y, x * y, y), (A, B)),
    "select_n_int": (lambda x, y: lax.select_n(jnp.array([[0, 1, 2, 0]] * 3), x, y, x * y),
                     (A, B)),
    "clamp_scalar_bounds": (lambda x: lax.clamp(-0.5, x, 0.5), (A,)),
    "clamp_array_bounds": (lambda lo, x, hi: lax.clamp(lo, x, hi), (A - 1, A + 0.1 * B, A + 1)),
    "reduce_sum": (lambda x: lax.reduce_sum(x, (1,)), (A,)),
    "reduce_prod": (lambda x: lax.reduce_prod(x, (0,)), (A,)),
    "reduce_prod_all": (lambda x: lax.reduce_prod(x, (0, 1)), (A,)),
    "reduce_prod_with_zero": (lambda x: lax.reduce_prod(x * jnp.array([1., 0., 1., 1.]), (1,)),
                              (A,)),
    "reduce_max": (lambda x: lax.reduce_max(x, (1,)), (A,)),
    "reduce_min": (lambda x: lax.reduce_min(x, (0, 1)), (A,)),
    "reshape": (lambda x: lax.reshape(x, (4, 3)), (A,)),
    "reshape_dimensions": (lambda x: lax.reshape(x, (2, 6), (1, 0)), (A,)),
    "transpose": (lambda x: lax.transpose(x, (1, 0)), (A,)),
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), (A,)),
    "broadcast_in_dim_size1": (lambda x: lax.broadcast_in_dim(x[:, :1], (3, 5), (0, 1)), (A,)),
    "broadcast_in_dim_unsorted": (lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (2, 0)), (A,)),
    "squeeze": (lambda x: lax.squeeze(x[:1], (0,)), (A,)),
    "slice": (lambda x: lax.slice(x, (0, 1), (3, 4)), (A,)),
    "slice_strided": (lambda x: lax.slice(x, (0, 1), (3, 4), (2, 2)), (A,)),
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), (A,)),
    "dynamic_slice_clamped": (lambda x: lax.dynamic_slice(x, (2, 3), (2, 2)), (A,)),
    "gather_rows": (lambda x: lax.gather(x, np.array([[2], [0], [2]]), _ROWS, (1, 4),
                                         mode="clip"), (A,)),
    "gather_fill": (lambda x: lax.gather(x, np.array([[1, 0], [2, 3], [5, 0]]), _ELEMS, (1, 2),
                                         mode="fill", fill_value=0.5), (A,)),
    "cumsum": (lambda x: lax.cumsum(x, axis=1, reverse=True), (A,)),
    "cumprod": (lambda x: lax.cumprod(x, axis=0), (P,)),
    "cummax": (lambda x: lax.cummax(x, axis=1), (A,)),
    "cummin": (lambda x: lax.cummin(x, axis=0, reverse=True), (A,)),
    "cumlogsumexp": (lambda x: lax.cumlogsumexp(x, axis=1), (A,)),
    "sort": (lambda x, y: lax.sort((x, y), dimension=0, num_keys=1)[1], (A, B)),
    "scatter_add": (lambda x, u: lax.scatter_add(x, np.array([[2], [0], [2]]), u, _ROWS_S),
                    (A, B)),
    "scatter_dup": (lambda x, u: lax.scatter(x, np.array([[2], [0], [2]]), u, _ROWS_S), (A, B)),
    "scatter_unique": (lambda x, u: lax.scatter(x, np.array([[2], [0]]), u, _ROWS_S,
                                                unique_indices=True), (A, B[:2])),
    "scatter_mul": (lambda x, u: lax.scatter_mul(x, np.array([[2], [0]]), u, _ROWS_S,
                                                 unique_indices=True), (A, B[:2])),
    "scatter_max": (lambda x, u: lax.scatter_max(x, np.array([[2], [0], [2]]), u, _ROWS_S),
                    (A, B + 0.05)),
    "scatter_min": (lambda x, u: lax.scatter_min(x, np.array([[1], [1]]), u, _ROWS_S),
                    (A, B[:2] + 0.05)),
    "dynamic_update_slice": (lambda x, u: lax.dynamic_update_slice(x, u, (1, 1)), (A, A[:2, :2])),
    "dynamic_update_slice_clamped": (lambda x, u: lax.dynamic_update_slice(x, u, (2, -1)),
                                     (A, A[1:, 2:] * 2)),
    "copy": (lax_internal._array_copy, (A,)),
    "rev": (lambda x: lax.rev(x, (0, 1)), (A,)),
    "pad": (lambda x: lax.pad(x, 0.5, [(1, -1, 1), (0, 2, 0)]), (A,)),
    "pad_value": (lambda x, v: lax.pad(x, v, [(1, 2, 1), (0, 2, 0)]), (A, 0.3)),
    "concatenate": (lambda x, y: lax.concatenate([x, y, x], 1), (A, B)),
    "dot_general_matmul": (lambda x, y: lax.dot(x, y), (A, M)),
    "dot_general_batch": (lambda x, y: lax.dot_general(
        x.reshape(3, 2, 2), y.reshape(3, 2, 2), (((2,), (1,)), ((0,), (0,)))), (A, B)),
    "dot_general_contract_first": (lambda x, y: lax.dot_general(
        x, y, (((0,), (0,)), ((), ()))), (A, B)),
    "dot_general_complex": (lambda x, y: lax.dot(x, y.T), (C, C2)),
}

JNP_CASES = {
    "sum": (lambda x: jnp.sum(x, axis=0), (A,)),
    "mean": (jnp.mean, (A,)),
    "var": (lambda x: jnp.var(x, axis=1), (A,)),
    "std": (jnp.std, (A,)),
    "prod": (lambda x: jnp.prod(x, axis=1), (A,)),
    "max": (lambda x: jnp.max(x, axis=0), (A,)),
    "min": (jnp.min, (A,)),
    "ptp": (lambda x: jnp.ptp(x, axis=1), (A,)),
    "dot": (jnp.dot, (A, M)),
    "matmul_vec": (jnp.matmul, (A, V)),
    "tensordot": (lambda x, y: jnp.tensordot(x, y, axes=([1], [0])), (A, M)),
    "outer": (jnp.outer, (V, V)),
    "inner": (jnp.inner, (A, B)),
    "vdot": (jnp.vdot, (C, C2)),
    "where": (lambda x, y: jnp.where(x > 0, x, y), (A, B)),
    "maximum": (jnp.maximum, (A, B)),
    "minimum": (jnp.minimum, (A, 0.1)),
    "clip": (lambda x: jnp.clip(x, -0.5, 0.5), (A,)),
    "abs": (jnp.abs, (A,)),
    "power": (jnp.power, (P, A)),
    "power_int": (lambda x: x ** 3, (A,)),
    "float_power": (jnp.float_power, (P, B)),
    "reciprocal": (jnp.reciprocal, (P,)),
    "log2": (jnp.log2, (P,)),
    "log10": (jnp.log10, (P,)),
    "logaddexp": (jnp.logaddexp, (A, B)),
    "hypot": (jnp.hypot, (A, B)),
    "arctan2": (jnp.arctan2, (A, B)),
    "deg2rad": (jnp.deg2rad, (A,)),
    "sinc": (jnp.sinc, (A + 0.1,)),
    "mod": (jnp.mod, (A, P + 2)),
    "fmod": (jnp.fmod, (A, P + 2)),
    "copysign": (jnp.copysign, (P, A)),
    "transpose": (lambda x: jnp.transpose(x).reshape(2, 6), (A,)),
    "stack": (lambda x, y: jnp.stack([x, y], axis=1), (A, B)),
    "concatenate": (lambda x, y: jnp.concatenate([x, y]), (A, B)),
    "flip": (lambda x: jnp.flip(x, 1), (A,)),
    "moveaxis": (lambda x: jnp.moveaxis(x[None], 0, 2), (A,)),
    "broadcast_to": (lambda x: jnp.broadcast_to(x, (2, 3, 4)), (A,)),
    "expand_squeeze": (lambda x: jnp.squeeze(jnp.expand_dims(x, 1), 1), (A,)),
    "ravel": (jnp.ravel, (A,)),
    "getitem_slices": (lambda x: x[1:, ::-2], (A,)),
    "getitem_int": (lambda x: x[1] * x[:, 2].sum(), (A,)),
    "linspace_scale": (lambda x: x * jnp.linspace(0, 1, 4), (A,)),
    "real_imag_angle": (lambda z: jnp.real(z) * jnp.imag(z) + jnp.angle(z), (C,)),
    "conjugate_mul": (lambda z: jnp.conjugate(z) * z, (C,)),
    "complex_abs_sum": (lambda z: jnp.sum(jnp.abs(z) ** 2), (C,)),
    "chain": (lambda x: jnp.sum(jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x)), (A,)),
}


@pytest.mark.parametrize("name", sorted(LAX_CASES))
def test_lax_primitive_grads(x64, name):
    fun, args = LAX_CASES[name]
    check_grads(fun, args, 2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(JNP_CASES))
def test_jnp_function_grads(x64, name):
    fun, args = JNP_CASES[name]
    check_grads(fun, args, 2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["sin", "mul", "reduce_prod", "dot_general_batch", "pad"])
def test_linearize_mode_grads(x64, name):
    fun, args = LAX_CASES[name]
    check_grads(fun, args, 2, modes=("lin",))


def test_float32_grads_with_jax_tolerances():
    x = np.float32(_rng.randn(5))
    check_grads(lambda x: jnp.sum(jnp.tanh(x) * jnp.exp(-x * x)), (x,), 2)


# ---------------------------------------------------------------------------------------
# Rule coverage.

def _module_primitives() -> dict[str, core.Primitive]:
    prims = {}
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("tinyxla"):
            for v in vars(mod).values():
                if isinstance(v, core.Primitive):
                    prims[v.name] = v
    return prims


# Primitives without operands: nothing to differentiate.
NO_OPERANDS = {"iota"}


def test_every_primitive_has_a_jvp_rule():
    missing = sorted(name for name, p in _module_primitives().items()
                     if p not in ad.primitive_jvps and name not in NO_OPERANDS)
    assert not missing, f"primitives without a JVP rule: {missing}"


LINEAR = ["cumsum", "neg", "add", "sub", "mul", "div", "convert_element_type", "reduce_sum", "reshape",
          "transpose", "broadcast_in_dim", "squeeze", "slice", "dynamic_slice",
          "dynamic_update_slice", "gather", "scatter-add", "rev", "pad",
          "concatenate", "select_n", "copy", "real", "imag", "complex", "conj", "dot_general",
          "add_any", "jit", "remat2", "custom_lin"]


def test_every_linear_primitive_has_a_transpose_rule():
    prims = _module_primitives()
    missing = [n for n in LINEAR if prims[n] not in ad.primitive_transposes]
    assert not missing, f"linear primitives without a transpose rule: {missing}"


def _jaxpr_primitives(jaxpr: core.Jaxpr) -> set:
    out, todo = set(), [jaxpr]
    while todo:
        j = todo.pop()
        for eqn in j.eqns:
            out.add(eqn.primitive)
            todo.extend(v.jaxpr if isinstance(v, core.ClosedJaxpr) else v
                        for v in eqn.params.values()
                        if isinstance(v, (core.Jaxpr, core.ClosedJaxpr)))
    return out


def test_linearized_jaxprs_only_use_transposable_primitives(x64):
    """Every primitive a JVP rule stages into a linear jaxpr can be transposed."""
    missing = set()
    for name, (fun, args) in {**LAX_CASES, **JNP_CASES}.items():
        leaves = [jnp.asarray(a) for a in args]
        lin = ad.linearize_flat(lambda *xs: [fun(*xs)], leaves)
        for p in _jaxpr_primitives(lin.jaxpr.jaxpr):
            if p not in ad.primitive_transposes:
                missing.add((name, p.name))
    assert not missing


NOT_DIFFERENTIABLE = {
    "iota", "is_finite", "not", "and", "or", "xor", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge", "population_count", "clz",
    "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin", "bitcast_convert_type",
    "nextafter", "stop_gradient"}


def test_every_lax_primitive_has_a_numerical_check(x64):
    covered = set()
    for fun, args in LAX_CASES.values():
        covered |= {p.name for p in _jaxpr_primitives(jax.make_jaxpr(fun)(*args).jaxpr)}
    lax_prims = {v.name for mod in (lax_internal, lax_slicing, lax_sorting, lax_cumulative)
                 for v in vars(mod).values()
                 if isinstance(v, core.Primitive)}
    missing = sorted(lax_prims - covered - NOT_DIFFERENTIABLE)
    assert not missing, f"lax primitives without a check_grads case: {missing}"


def test_zero_derivative_primitives():
    x = jnp.array([0.3, -1.7, 2.5])
    for f in (lambda x: lax.floor(x), lambda x: lax.sign(x), lambda x: lax.round(x),
              lambda x: lax.convert_element_type(x > 0, jnp.float32) * 1.0,
              lambda x: lax.argmax(x, 0, jnp.int32).astype(jnp.float32),
              lambda x: lax.nextafter(x, x + 1), lambda x: lax.stop_gradient(x) * 2):
        np.testing.assert_array_equal(jax.grad(lambda x: jnp.sum(f(x)))(x), np.zeros(3))
    # stop_gradient blocks only its operand.
    assert float(jax.grad(lambda x: x * lax.stop_gradient(x))(3.0)) == 3.0


def test_missing_jvp_rule_error():
    p = core.Primitive("no_rule")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'no_rule' not "
                                                  "implemented"):
        jax.grad(lambda x: p.bind(x))(1.0)


# ---------------------------------------------------------------------------------------
# The seed cases.

def test_seed_quadratic():
    f = lambda x: 2 * x * x + 3 * x + 3
    g = jax.grad(f)(3.0)
    assert float(g) == 15.0 and g.dtype == jnp.float32 and g.weak_type
    v, g = jax.value_and_grad(f)(3.0)
    assert (float(v), float(g)) == (30.0, 15.0)


def test_seed_value_and_grad_argnums():
    ff = lambda x, y: x ** 2 + y
    v, gx = jax.value_and_grad(ff, argnums=0)(2.0, 3.0)
    assert (float(v), float(gx)) == (7.0, 4.0)
    assert float(jax.grad(ff, argnums=1)(2.0, 3.0)) == 1.0


def test_seed_third_derivative_and_argnums():
    expo = lambda x, y: x ** 4 + 2 ** y + 3
    g1 = jax.grad(expo)
    g2 = jax.grad(g1)
    g3 = jax.grad(g2)
    assert [float(g(1.0, 2.0)) for g in (g1, g2, g3)] == [4.0, 12.0, 24.0]
    gy = jax.grad(expo, argnums=1)(1.0, 2.0)
    np.testing.assert_allclose(gy, np.log(2) * 4, rtol=1e-6)
    gx, gy2 = jax.grad(expo, argnums=(0, 1))(1.0, 2.0)
    assert float(gx) == 4.0 and float(gy2) == float(gy)


def test_seed_has_aux_dict():
    def poly(x, y):
        return x ** 4 + (y - 1) ** 2 + 3, ({"y": y}, 1337)
    g, aux = jax.grad(poly, has_aux=True)(1.0, 2.0)
    assert float(g) == 4.0
    assert float(aux[0]["y"]) == 2.0 and aux[1] == 1337
    (value, aux), g = jax.value_and_grad(poly, has_aux=True)(1.0, 2.0)
    assert float(value) == 5.0 and float(g) == 4.0 and aux[1] == 1337


def test_seed_second_derivative_and_grad_of_jit_of_grad():
    squared = lambda x: x ** 2
    assert float(jax.grad(squared)(4.0)) == 8.0
    assert float(jax.grad(jax.grad(squared))(4.0)) == 2.0
    f = lambda x: jnp.sin(x) * x ** 3
    np.testing.assert_allclose(jax.grad(jax.jit(jax.grad(f)))(0.7),
                               jax.grad(jax.grad(f))(0.7), rtol=1e-6)


def test_python_control_flow_under_grad():
    f = lambda x: x if x > 0 else 2 * x
    assert float(jax.grad(f)(3.0)) == 1.0
    assert float(jax.grad(f)(-3.0)) == 2.0

    def g(x, n):
        for i in range(n):
            x = jnp.sin(x) if i % 2 else x * x
        while x > 10:
            x = x / 2
        return x
    assert np.isclose(float(jax.grad(g)(1.3, 3)),
                      float(jax.grad(lambda x: jnp.sin(x * x) ** 2)(1.3)))

    def h(x):  # bool/int/index of a traced value use its concrete primal, as in JAX
        return x * int(x) + jnp.arange(3.0)[x.astype(jnp.int32)] * x.item()
    assert float(jax.grad(h)(2.0)) == 2.0


def test_recursion_and_closures():
    def fact_like(x, n):
        return x if n == 0 else x * fact_like(x, n - 1)
    assert float(jax.grad(fact_like)(2.0, 3)) == 32.0
    scale = jnp.float32(3.0)
    assert float(jax.grad(lambda x: scale * x * x)(2.0)) == 12.0


def test_pytrees_and_dict_params():
    params = {"w": jnp.array([1.0, 2.0]), "b": 0.5}
    loss = lambda p, x: jnp.sum((p["w"] * x + p["b"]) ** 2)
    g = jax.grad(loss)(params, jnp.array([3.0, -1.0]))
    r = np.array([1.0, 2.0]) * np.array([3.0, -1.0]) + 0.5
    np.testing.assert_allclose(g["w"], 2 * r * np.array([3.0, -1.0]))
    np.testing.assert_allclose(g["b"], 2 * r.sum())
    out, vjp_fun = jax.vjp(lambda a, b: (a * b, {"s": a + b}), 2.0, 3.0)
    ga, gb = vjp_fun((1.0, {"s": 1.0}))
    assert (float(ga), float(gb)) == (4.0, 3.0)


def test_integer_inputs_allow_int():
    g = jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(g[0]) == 3.0
    assert g[1].dtype == jax.dtypes.float0 and g[1].shape == ()


def test_grad_with_respect_to_integer_used_as_index():
    x = jnp.arange(4.0)
    assert float(jax.grad(lambda s: s * x[2])(2.0)) == 2.0


# ---------------------------------------------------------------------------------------
# Complex numbers (JAX's convention).

def test_complex_conventions():
    # Real-valued function of complex input: the conjugate of PyTorch's gradient.
    g = jax.grad(lambda z: jnp.abs(z) ** 2)(1.0 + 2.0j)
    assert complex(g) == 2 - 4j
    # Holomorphic function: f'(z).
    g = jax.grad(lambda z: z * z, holomorphic=True)(1.0 + 2.0j)
    assert complex(g) == 2 + 4j
    g = jax.grad(lambda z: jnp.sin(z), holomorphic=True)(0.5 + 0.3j)
    np.testing.assert_allclose(complex(g), np.cos(0.5 + 0.3j), rtol=1e-6)
    # Values from JAX 0.10.2.
    g = jax.grad(lambda z: jnp.real(z * jnp.conj(z) + jnp.exp(z)))(0.5 + 0.3j)
    np.testing.assert_allclose(complex(g), 2.5750837326049805 - 0.11276957392692566j, rtol=1e-6)
    g = jax.grad(lambda z: jnp.imag(jnp.exp(z)))(0.5 + 0.3j)
    np.testing.assert_allclose(complex(g), 0.48723044991493225 - 1.575083613395691j, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# jvp, linearize, vjp.

def test_jvp_linearize_vjp_basics():
    p, t = jax.jvp(jnp.sin, (0.1,), (0.2,))
    np.testing.assert_allclose([p, t], [np.sin(0.1), 0.2 * np.cos(0.1)], rtol=1e-6)
    y, f_jvp = jax.linearize(lambda x: jnp.sin(x) * x, 2.0)
    np.testing.assert_allclose(f_jvp(1.0), np.cos(2.0) * 2 + np.sin(2.0), rtol=1e-6)
    np.testing.assert_allclose(f_jvp(2.0), 2 * (np.cos(2.0) * 2 + np.sin(2.0)), rtol=1e-6)
    y, vjp_fun = jax.vjp(lambda x, y: x * y, 2.0, 5.0)
    assert tuple(float(c) for c in vjp_fun(1.0)) == (5.0, 2.0)
    y, vjp_fun, aux = jax.vjp(lambda x: (x * x, x + 1), 3.0, has_aux=True)
    assert float(vjp_fun(1.0)[0]) == 6.0 and float(aux) == 4.0
    p, t, aux = jax.jvp(lambda x: (x * x, {"a": x}), (3.0,), (1.0,), has_aux=True)
    assert float(t) == 6.0 and float(aux["a"]) == 3.0


def test_jvp_of_integer_function_uses_float0():
    p, t = jax.jvp(lambda n: n * 2, (3,), (np.zeros((), jax.dtypes.float0),))
    assert int(p) == 6 and t.dtype == jax.dtypes.float0


def test_tracer_reprs():
    seen = []
    jax.grad(lambda x: seen.append(repr(x)) or x * 2)(1.0)
    jax.jvp(lambda x: seen.append(repr(x)) or x * 2, (1.0,), (1.0,))
    assert seen == ["GradTracer(primal=1.0, typeof(tangent)=f32[])",
                    "JVPTracer(primal=1.0, tangent=1.0)"]


# ---------------------------------------------------------------------------------------
# Jacobians and Hessians against analytic results.

def test_jacobians_and_hessian():
    def f(x):
        return jnp.stack([x[0], 5 * x[2], 4 * x[1] ** 2 - 2 * x[2], x[2] * jnp.sin(x[0])])
    x = jnp.array([1.0, 2.0, 3.0])
    expected = np.array([[1, 0, 0], [0, 0, 5], [0, 16, -2],
                         [3 * np.cos(1.0), 0, np.sin(1.0)]])
    np.testing.assert_allclose(jax.jacfwd(f)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jacrev(f)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jacobian(f)(x), expected, rtol=1e-6)
    g = lambda x: x[0] ** 3 - 2 * x[0] * x[1] - x[1] ** 6
    np.testing.assert_allclose(jax.hessian(g)(jnp.array([1.0, 2.0])),
                               [[6.0, -2.0], [-2.0, -480.0]], rtol=1e-6)


def test_jacobian_pytrees_and_shapes():
    f = lambda d: {"c": jnp.power(d["a"], d["b"])}
    h = jax.hessian(f)({"a": jnp.arange(2.0) + 1.0, "b": jnp.arange(2.0) + 2.0})
    assert h["c"]["a"]["a"].shape == (2, 2, 2)
    np.testing.assert_allclose(h["c"]["a"]["a"][1, 1, 1], 12.0, rtol=1e-6)
    np.testing.assert_allclose(h["c"]["b"]["b"][1, 1, 1], 8 * np.log(2) ** 2, rtol=1e-5)
    j = jax.jacrev(lambda x, y: (x * y, x.sum()), argnums=(0, 1))(jnp.ones((2, 3)), 2.0)
    assert j[0][0].shape == (2, 3, 2, 3) and j[0][1].shape == (2, 3) and j[1][0].shape == (2, 3)
    j = jax.jacfwd(lambda x: x @ x.T)(jnp.ones((2, 3)))
    assert j.shape == (2, 2, 2, 3)


# ---------------------------------------------------------------------------------------
# Composition with jit, and the printed gradient graph.

def test_jit_of_grad_equals_grad():
    f = lambda x: jnp.sum(jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x))
    x = jnp.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(jax.jit(jax.grad(f))(x), jax.grad(f)(x), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(jax.jit(f))(x), jax.grad(f)(x), rtol=1e-6)
    np.testing.assert_allclose(jax.jvp(jax.jit(f), (x,), (jnp.ones(7),))[1],
                               jax.jvp(f, (x,), (jnp.ones(7),))[1], rtol=1e-6)
    assert float(jax.grad(lambda x: jax.jit(lambda y: x * y)(2.0))(3.0)) == 2.0


def test_nested_jit_and_grad_compositions():
    f = lambda x: jnp.sin(x) * x ** 3
    J, G = jax.jit, jax.grad
    g1, g2 = float(G(f)(0.7)), float(G(G(f))(0.7))
    for h in (G(J(f)), J(G(f)), J(G(J(f)))):
        np.testing.assert_allclose(h(0.7), g1, rtol=1e-6)
    for h in (G(G(J(f))), G(J(G(f))), J(G(G(J(f)))), G(J(G(J(f)))), J(G(J(G(J(f)))))):
        np.testing.assert_allclose(h(0.7), g2, rtol=1e-6)
    s = lambda x: jnp.sum(jnp.sin(x) * x ** 3)
    x = jnp.array([0.3, 0.7, 1.1])
    hess = jax.hessian(s)(x)
    np.testing.assert_allclose(jax.hessian(J(s))(x), hess, rtol=1e-6)
    np.testing.assert_allclose(J(jax.hessian(s))(x), hess, rtol=1e-6)
    np.testing.assert_allclose(np.diag(hess), [G(G(f))(v) for v in (0.3, 0.7, 1.1)], rtol=1e-5)
    np.testing.assert_array_equal(hess - np.diag(np.diag(hess)), np.zeros((3, 3)))


def test_vmap_compositions():
    f = lambda x: jnp.sin(x) * x ** 2
    xs = jnp.linspace(0.0, 1.0, 4)
    expected = [float(jax.grad(f)(x)) for x in xs]
    np.testing.assert_allclose(jax.vmap(jax.grad(f))(xs), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda x: jax.vmap(f)(x).sum())(xs), expected, rtol=1e-6)

    @jax.custom_jvp
    def g(x):
        return jnp.sin(x)
    g.defjvp(lambda p, t: (g(p[0]), 3.0 * t[0]))
    np.testing.assert_array_equal(jax.grad(lambda x: jax.vmap(g)(x).sum())(xs), [3.0] * 4)

    @jax.custom_vjp
    def h(x, y):
        return jnp.sin(x) * y
    h.defvjp(lambda x, y: (jnp.sin(x) * y, (x, y)),
             lambda r, g: (10 * g * r[1], 100 * g * r[0]))
    gx, gy = jax.grad(lambda x, y: jax.vmap(h, in_axes=(0, None))(x, y).sum(),
                      argnums=(0, 1))(xs, 2.0)
    np.testing.assert_allclose(gx, [20.0] * 4)
    np.testing.assert_allclose(gy, 200.0, rtol=1e-6)


def test_partial_eval_and_dce_jaxpr():
    closed = jax.make_jaxpr(lambda x, y: (jnp.sin(x) * 2, jnp.cos(x) * y))(1.0, 2.0)
    known, unknown, out_unknowns, num_res = ad.partial_eval_jaxpr(closed.jaxpr, [False, True])
    assert out_unknowns == [False, True] and num_res == 1
    res = core.eval_jaxpr(known, closed.consts, 1.0)
    assert np.isclose(float(res[0]), 2 * np.sin(1.0))
    out, = core.eval_jaxpr(unknown, [], *res[1:], 2.0)
    assert np.isclose(float(out), np.cos(1.0) * 2)
    dced = ad.dce_jaxpr(closed.jaxpr, [False, True])
    assert [e.primitive.name for e in dced.eqns] == ["cos", "mul"]


def test_make_jaxpr_of_grad_matches_jax():
    assert str(jax.make_jaxpr(jax.grad(lambda x: 2 * x * x + 3 * x + 3))(3.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = mul 2.0:f32[] a\n"
        "    c:f32[] = mul b a\n"
        "    d:f32[] = mul 3.0:f32[] a\n"
        "    e:f32[] = add c d\n"
        "    f:f32[] = add e 3.0:f32[]\n"
        "    g:f32[] = mul 3.0:f32[] 1.0:f32[]\n"
        "    h:f32[] = mul b 1.0:f32[]\n"
        "    i:f32[] = add_any g h\n"
        "    j:f32[] = mul 1.0:f32[] a\n"
        "    k:f32[] = mul 2.0:f32[] j\n"
        "    l:f32[] = add_any i k\n"
        "  in (l,) }")
    assert str(jax.make_jaxpr(jax.grad(lambda x: jnp.sin(x) * x))(3.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = sin a\n"
        "    c:f32[] = cos a\n"
        "    d:f32[] = mul b a\n"
        "    e:f32[] = mul b 1.0:f32[]\n"
        "    f:f32[] = mul 1.0:f32[] a\n"
        "    g:f32[] = mul f c\n"
        "    h:f32[] = add_any e g\n"
        "  in (h,) }")


def test_make_jaxpr_of_grad_of_jit_splits_known_and_linear_parts():
    jaxpr = jax.make_jaxpr(jax.grad(jax.jit(lambda x: jnp.sin(x) * x)))(3.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit", "jit"]
    known, transposed = (e.params["jaxpr"] for e in jaxpr.eqns)
    assert [e.primitive.name for e in known.eqns] == ["sin", "cos", "mul"]
    assert [e.primitive.name for e in transposed.eqns] == ["mul", "mul", "mul", "add_any"]


def test_tracer_errors_under_jit_of_grad():
    with pytest.raises(jax.errors.TracerBoolConversionError,
                       match="Attempted boolean conversion of traced array with shape bool"):
        jax.jit(jax.grad(lambda x: x if x > 0 else 2 * x))(3.0)
    with pytest.raises(jax.errors.ConcretizationTypeError, match="The problem arose with the "
                                                                 "`float` function"):
        jax.grad(lambda x: x * float(x))(3.0)
    with pytest.raises(jax.errors.TracerArrayConversionError):
        jax.grad(lambda x: x * np.asarray(x))(3.0)


def test_leaked_grad_tracer():
    leaked = []
    jax.grad(lambda x: leaked.append(x) or x * 2)(1.0)
    with pytest.raises(jax.errors.UnexpectedTracerError):
        jnp.sin(leaked[0])


# ---------------------------------------------------------------------------------------
# custom_jvp, custom_vjp, checkpoint.

def test_custom_jvp():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return f(x), 3.0 * t

    assert float(jax.grad(f)(1.0)) == 3.0
    assert float(jax.jvp(f, (1.0,), (2.0,))[1]) == 6.0
    assert float(jax.jit(jax.grad(f))(1.0)) == 3.0
    assert float(jax.grad(jax.jit(f))(1.0)) == 3.0
    assert float(f(1.0)) == float(jnp.sin(1.0))
    text = str(jax.make_jaxpr(f)(1.0))
    assert "custom_jvp_call[" in text and "jvp=f_jvp" in text

    @jax.custom_jvp
    def k(x, y):
        return x * y
    k.defjvps(lambda g, ans, x, y: g * y * 10, lambda g, ans, x, y: g * x * 100)
    assert tuple(map(float, jax.grad(k, argnums=(0, 1))(1.0, 2.0))) == (20.0, 100.0)


def test_custom_jvp_safe_log1pexp():
    @jax.custom_jvp
    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))

    assert float(jax.grad(log1pexp)(100.0)) == 1.0
    assert float(jax.grad(jax.grad(log1pexp))(0.0)) == 0.25


def test_custom_vjp():
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    def f_fwd(x):
        return jnp.sin(x), jnp.cos(x)

    def f_bwd(res, g):
        return (res * g * 2,)

    f.defvjp(f_fwd, f_bwd)
    np.testing.assert_allclose(jax.grad(f)(1.0), 2 * np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(f))(1.0), 2 * np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(jax.jit(f))(1.0), 2 * np.cos(1.0), rtol=1e-6)
    with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a "
                                        r"custom_vjp function."):
        jax.jvp(f, (1.0,), (1.0,))
    assert str(jax.make_jaxpr(jax.grad(f))(1.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = sin a\n"
        "    c:f32[] = cos a\n"
        "    d:f32[] = mul c 1.0:f32[]\n"
        "    e:f32[] = mul d 2.0:f32[]\n"
        "  in (e,) }")


def test_custom_vjp_nondiff_argnums_and_pytrees():
    @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)
    app.defvjp(lambda f, x: (f(x), x), lambda f, x, g: (g * 2,))
    assert float(jax.grad(lambda x: app(jnp.sin, x))(1.0)) == 2.0

    @jax.custom_vjp
    def clip_gradient(d):
        return d
    clip_gradient.defvjp(lambda d: (d, None),
                         lambda _, g: ({"a": jnp.clip(g["a"], -1, 1), "b": None},))
    g = jax.grad(lambda d: jnp.sum(clip_gradient(d)["a"] * 5) + d["b"] * 2)(
        {"a": jnp.ones(2), "b": 1.0})
    np.testing.assert_array_equal(g["a"], [1.0, 1.0])
    assert float(g["b"]) == 2.0


def test_custom_derivative_errors():
    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function <lambda> "
                                             "using defvjp."):
        jax.custom_vjp(lambda x: x)(1.0)
    with pytest.raises(AttributeError, match="No JVP defined for custom_jvp function <lambda> "
                                             "using defjvp."):
        jax.custom_jvp(lambda x: x)(1.0)

    @jax.custom_vjp
    def h(x, y):
        return x * y
    h.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (res[1] * g,))
    with pytest.raises(TypeError) as e:
        jax.grad(h)(1.0, 2.0)
    assert str(e.value) == (
        "Custom VJP bwd rule must produce an output with the same container (pytree) "
        "structure as the args tuple of the primal function, and in particular must produce "
        "a tuple of length equal to the number of arguments to the primal function, but got "
        "bwd output structure PyTreeDef((*,)) for primal input structure PyTreeDef((*, *)).")


def test_checkpoint_recomputes():
    calls = []
    orig = lax_internal.sin_p.impl

    def counting_sin(x, **params):
        calls.append(1)
        return orig(x, **params)

    f = lambda x: jnp.sin(jnp.sin(x))
    lax_internal.sin_p.def_impl(counting_sin)
    try:
        expected = jax.grad(f)(1.0)
        plain = len(calls)
        calls.clear()
        g = jax.grad(jax.checkpoint(f))(1.0)
        remat = len(calls)
    finally:
        lax_internal.sin_p.def_impl(orig)
    assert float(g) == float(expected)
    # The backward pass recomputes the inner sin, which cos(sin(x)) * cos(x) needs.
    assert (plain, remat) == (2, 3)
    jaxpr = jax.make_jaxpr(jax.grad(jax.remat(f)))(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "sin", "remat2"]
    inner = jaxpr.eqns[2].params["jaxpr"]
    assert [e.primitive.name for e in inner.eqns] == ["sin", "cos", "cos", "mul", "mul"]
    np.testing.assert_allclose(jax.jvp(jax.checkpoint(f), (1.0,), (1.0,))[1], expected,
                               rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(jax.checkpoint(f)))(1.0), expected, rtol=1e-6)


def test_checkpoint_static_argnums_and_error():
    f = jax.checkpoint(lambda x, n: x ** n if n > 1 else x, static_argnums=(1,))
    assert float(jax.grad(f)(2.0, 3)) == 12.0
    with pytest.raises(jax.errors.TracerBoolConversionError) as e:
        jax.checkpoint(lambda x: x if x > 0 else -x)(1.0)
    assert "for checkpoint / remat" in str(e.value)
    assert "Consider using the `static_argnums` parameter for `jax.remat`" in str(e.value)


# ---------------------------------------------------------------------------------------
# Errors, with JAX's texts.

def _error(fun, *args):
    with pytest.raises(Exception) as e:
        fun(*args)
    return type(e.value).__name__, str(e.value)


def test_grad_errors():
    assert _error(jax.grad(lambda x: x), jnp.ones(2)) == (
        "TypeError", "Gradient only defined for scalar-output functions. Output had shape: (2,).")
    assert _error(jax.grad(lambda x: None), 1.0) == (
        "TypeError", "Gradient only defined for scalar-output functions. Output was None.")
    assert _error(jax.grad(lambda x: x * 2), 1) == (
        "TypeError", "grad requires real- or complex-valued inputs (input dtype that is a "
        "sub-dtype of np.inexact), but got int32. If you want to use Boolean- or "
        "integer-valued inputs, use vjp or set allow_int to True.")
    assert _error(jax.grad(lambda x: 1.0), True)[1].endswith("but got bool. If you want to "
                                                            "use Boolean- or integer-valued "
                                                            "inputs, use vjp or set allow_int "
                                                            "to True.")
    assert _error(jax.grad(lambda x: x * 2, allow_int=True), 1) == (
        "TypeError", "grad requires real-valued outputs (output dtype that is a sub-dtype of "
        "np.floating), but got int32. For differentiation of functions with integer outputs, "
        "use jax.vjp directly.")
    assert _error(jax.grad(lambda x: x * 2, holomorphic=True), 1.0) == (
        "TypeError", "grad with holomorphic=True requires inputs with complex dtype, but got "
        "float32.")
    assert _error(jax.grad(lambda x: x * 2), 1.0 + 1j) == (
        "TypeError", "grad requires real-valued outputs (output dtype that is a sub-dtype of "
        "np.floating), but got complex64. For holomorphic differentiation, pass "
        "holomorphic=True. For differentiation of non-holomorphic functions involving complex "
        "outputs, use jax.vjp directly.")
    assert _error(jax.grad(lambda x: x * 2, argnums=1), 1.0) == (
        "TypeError", "differentiating with respect to argnums=1 requires at least 2 positional "
        "arguments to be passed by the caller, but got only 1 positional arguments.")
    assert _error(jax.grad(lambda x, y: x * 2, argnums=(0, 5)), 1.0, 2.0) == (
        "TypeError", "differentiating with respect to argnums=(0, 5) requires at least 6 "
        "positional arguments to be passed by the caller, but got only 2 positional "
        "arguments.")
    assert _error(jax.grad, lambda x, y: x, 1.0) == ("TypeError",
                                                     "'float' object is not iterable")
    assert _error(jax.grad(lambda x, y: x * y, argnums=()), 1.0, 2.0) == (
        "ValueError", "max() arg is an empty sequence")
    assert _error(jax.grad(lambda x: x), "a") == (
        "TypeError", "Argument 'a' of type <class 'str'> is not a valid JAX type.")
    name, msg = _error(jax.grad(lambda x: x * 2, has_aux=True), 1.0)
    assert name == "TypeError" and msg.startswith(
        "expected function with aux output to return a two-element tuple, but got type")
    assert float(jax.grad(lambda x, y: x * y, argnums=-1)(1.0, 2.0)) == 1.0
    assert float(jax.grad(lambda x: 1.0)(2.0)) == 0.0


def test_jvp_errors():
    assert _error(jax.jvp, jnp.sin, 1.0, 1.0) == (
        "TypeError", "primal and tangent arguments to jax.jvp must be tuples or lists; found "
        "float and float.")
    assert _error(jax.jvp, lambda x: x, (1.0,), (jnp.ones(2),)) == (
        "ValueError", "jvp called with different primal and tangent shapes;Got primal shape "
        "() and tangent shape as (2,)")
    name, msg = _error(jax.jvp, lambda x: x, (1.0,), (1,))
    assert name == "TypeError" and msg.startswith(
        "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
        "case of int/bool primal dtype the tangent dtype must be float0.")


def test_vjp_cotangent_errors():
    _, vjp_fun = jax.vjp(lambda x: x * 2, jnp.ones(2))
    assert _error(vjp_fun, jnp.ones(3)) == (
        "ValueError", "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: "
        "got float32[3], but expected float32[2] because the corresponding output of the "
        "differentiated function had JAX type float32[2]")


def test_closure_convert_with_custom_vjp():
    """The pattern of JAX's custom_vjp docs: a function closing over a differentiated
    value is passed to a custom_vjp through closure_convert."""
    @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
    def apply(f, x, *consts):
        return f(x, *consts)

    def fwd(f, x, *consts):
        return f(x, *consts), (x, consts)

    def bwd(f, res, g):
        x, consts = res
        _, vjp = jax.vjp(f, x, *consts)
        return vjp(g)

    apply.defvjp(fwd, bwd)

    def outer(a, x):
        g = lambda x: jnp.sin(a * x)
        converted, consts = jax.closure_convert(g, x)
        assert len(consts) == (1 if isinstance(a, jax.core.Tracer) else 0)
        return apply(converted, x, *consts)

    np.testing.assert_allclose(outer(2.0, 3.0), np.sin(6.0), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(outer, argnums=0)(2.0, 3.0), 3 * np.cos(6.0), rtol=1e-5)
    np.testing.assert_allclose(jax.grad(outer, argnums=1)(2.0, 3.0), 2 * np.cos(6.0), rtol=1e-5)
