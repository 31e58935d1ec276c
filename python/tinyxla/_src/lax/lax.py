"""The lax operations of every family in one namespace: the import site of
``jax._src.lax.lax`` (``from tinyxla._src.lax import lax``) for the layers above lax.

The primitives and their rules live by family: ``elementwise``, ``conversion``,
``reductions``, ``shape_ops`` and ``dot``; ``type_rules`` and ``eager`` hold what their
abstract-eval rules and impls share. The private names re-exported here are JAX's own
(``lax._convert_element_type``, ``lax._const``, ...) that jnp, random and the lax modules
beside this one use.
"""
from tinyxla._src.lax.type_rules import (  # noqa: F401
    _canonicalize_axis, canonicalize_shape, _check_naryop_dtypes, _dtype, _FLOAT_COMPLEX,
    _shape)
from tinyxla._src.lax.eager import (  # noqa: F401
    _BINARY_OP, _colocated, _operand, _reject, _result)
from tinyxla._src.lax.conversion import (  # noqa: F401
    asarray, bitcast_convert_type, bitcast_convert_type_p, _canonical_dtype, _const,
    _convert_element_type, convert_element_type, convert_element_type_p, weak_scalar)
from tinyxla._src.lax.elementwise import (  # noqa: F401
    abs, abs_p, acos, acos_p, acosh, acosh_p, add, add_p, and_p, asin, asin_p, asinh,
    asinh_p, atan, atan2, atan2_p, atan_p, atanh, atanh_p, bitwise_and, bitwise_not,
    bitwise_or, bitwise_xor, _brcast_to, _broadcast_shapes, cbrt, cbrt_p, ceil, ceil_p,
    clamp, clamp_p, clz, clz_p, complex, complex_p, conj, conj_p, cos, cos_p, cosh, cosh_p,
    digamma, digamma_p, div, div_p, eq, eq_p, erf, erf_inv, erf_inv_p, erf_p, erfc, erfc_p,
    exp, exp2, exp2_p, exp_p, expm1, expm1_p, floor, floor_p, ge, ge_p, gt, gt_p, imag,
    imag_p, integer_pow, integer_pow_p, is_finite, is_finite_p, le, le_p, lgamma, lgamma_p,
    log, log1p, log1p_p, log_p, logistic, logistic_p, lt, lt_p, max, max_p, min, min_p,
    mul, mul_p, ne, ne_p, neg, neg_p, nextafter, nextafter_p, not_p, or_p,
    population_count, population_count_p, pow, pow_p, real, real_p, rem, rem_p, round,
    round_p, RoundingMethod, rsqrt, rsqrt_p, select, select_n, select_n_p, shift_left,
    shift_left_p, shift_right_arithmetic, shift_right_arithmetic_p, shift_right_logical,
    shift_right_logical_p, sign, sign_p, sin, sin_p, sinh, sinh_p, sqrt, sqrt_p, square,
    square_p, stop_gradient, stop_gradient_p, sub, sub_p, tan, tan_p, tanh, tanh_p, xor_p)
from tinyxla._src.lax.reductions import (  # noqa: F401
    argmax, argmax_p, argmin, argmin_p, reduce_and, reduce_and_p, reduce_max, reduce_max_p,
    reduce_min, reduce_min_p, reduce_or, reduce_or_p, reduce_prod, reduce_prod_p,
    reduce_sum, reduce_sum_p, reduce_xor, reduce_xor_p)
from tinyxla._src.lax.shape_ops import (  # noqa: F401
    _array_copy, broadcast, broadcast_in_dim, broadcast_in_dim_p, broadcasted_iota,
    concatenate, concatenate_p, copy_p, expand_dims, full, full_like, iota, iota_p, _ones,
    pad, pad_p, reshape, reshape_p, rev, rev_p, slice, slice_p, squeeze, squeeze_p,
    transpose, transpose_p, zeros_like_array)
from tinyxla._src.lax.dot import (  # noqa: F401
    batch_matmul, canonicalize_precision, dot, dot_general, dot_general_p, Precision)
