"""``tinyxla.lax`` (``jax.lax``): the primitive operations, without NumPy's type promotion."""
from tinyxla._src.lax.lax import (  # noqa: F401
    Precision, RoundingMethod, abs, acos, acosh, add, add_p, and_p, argmax, argmax_p, argmin,
    argmin_p, asin, asinh, atan, atan2, atanh, batch_matmul, bitcast_convert_type,
    bitcast_convert_type_p, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, broadcast,
    broadcast_in_dim, broadcast_in_dim_p, broadcasted_iota, cbrt, ceil, clamp, clamp_p, clz,
    complex, concatenate, concatenate_p, conj, convert_element_type, convert_element_type_p,
    cos, cosh, digamma, div, dot, dot_general, dot_general_p, eq, erf, erf_inv, erfc, exp,
    exp2, expand_dims, expm1, floor, full, full_like, ge, gt, imag, integer_pow, iota, iota_p,
    is_finite, le, lgamma, log, log1p, logistic, lt, max, min, mul, ne, neg, nextafter,
    not_p, or_p, pad, pad_p, population_count, pow, real, reduce_and, reduce_and_p,
    reduce_max, reduce_max_p, reduce_min, reduce_min_p, reduce_or, reduce_or_p, reduce_prod,
    reduce_prod_p, reduce_sum, reduce_sum_p, reduce_xor, reduce_xor_p, rem, reshape,
    reshape_p, rev, rev_p, round, rsqrt, select, select_n, select_n_p, shift_left,
    shift_right_arithmetic, shift_right_logical, sign, sin, sinh, slice, slice_p, sqrt,
    square, squeeze, squeeze_p, stop_gradient, sub, tan, tanh, transpose, transpose_p, xor_p)
from tinyxla._src.lax.parallel import (  # noqa: F401
    all_gather, all_gather_p, all_to_all, all_to_all_p, axis_index, axis_index_p, axis_size,
    pmax, pmax_p, pmean, pmin, pmin_p, ppermute, ppermute_p, pshuffle, psum, psum_p,
    psum_scatter, reduce_scatter_p)
from tinyxla._src.sharding_constraint import with_sharding_constraint  # noqa: F401
from tinyxla._src.custom_solves import custom_linear_solve, custom_root  # noqa: F401
from tinyxla._src.lax.cumulative import (  # noqa: F401
    cumlogsumexp, cumlogsumexp_p, cummax, cummax_p, cummin, cummin_p, cumprod, cumprod_p, cumsum,
    cumsum_p)
from tinyxla._src.lax.sorting import sort, sort_key_val, sort_p, top_k  # noqa: F401
from tinyxla._src.lax.slicing import (  # noqa: F401
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, dynamic_index_in_dim,
    dynamic_slice, dynamic_slice_in_dim, dynamic_slice_p, dynamic_update_index_in_dim,
    dynamic_update_slice, dynamic_update_slice_in_dim, dynamic_update_slice_p, gather, gather_p,
    scatter, scatter_add, scatter_add_p, scatter_max, scatter_max_p, scatter_min, scatter_min_p,
    scatter_mul, scatter_mul_p, scatter_p)
from tinyxla._src.lax.special import (  # noqa: F401
    bessel_i0e, bessel_i0e_p, bessel_i1e, bessel_i1e_p, betainc, igamma, igamma_grad_a,
    igamma_grad_a_p, igamma_p, igammac, igammac_p, polygamma, polygamma_p, random_gamma_grad,
    regularized_incomplete_beta_p, zeta, zeta_p)
from tinyxla._src.lax.fft import FftType, fft, fft_p  # noqa: F401,E402
from tinyxla.lax import linalg  # noqa: F401,E402
from tinyxla._src.lax.control_flow import (  # noqa: F401,E402
    associative_scan, cond, cond_p, fori_loop, map, scan, scan_p, switch, while_loop, while_p)
from tinyxla._src.lax.convolution import (  # noqa: F401,E402
    ConvDimensionNumbers, ConvGeneralDilatedDimensionNumbers, PaddingType, conv,
    conv_dimension_numbers, conv_general_dilated, conv_general_dilated_p,
    conv_general_shape_tuple, conv_transpose, conv_transpose_shape_tuple,
    conv_with_general_padding, padtype_to_pads)
from tinyxla._src.lax.conv_patches import conv_general_dilated_patches  # noqa: F401,E402
from tinyxla._src.lax.windowed_reductions import (  # noqa: F401,E402
    reduce, reduce_window, reduce_window_max_p, reduce_window_min_p, reduce_window_shape_tuple,
    reduce_window_sum_p)
from tinyxla._src.lax.window_select import (  # noqa: F401,E402
    select_and_gather_add_p, select_and_scatter_add_p)
