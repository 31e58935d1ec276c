// Attribute records of the windowed ops (definitions: windows.cc, convolution.cc) and the
// window arithmetic they share with their kernels.
#pragma once
#include <cstdint>
#include <vector>

#include "op_def.h"
#include "tinyxla/shape.h"

namespace tinyxla::ops {

// The number of window positions along one dimension of size `in` (JAX's
// lax._dilate_shape then reduce_window_shape_tuple): the input dilated by `base_dilation`
// and padded by `lo`, `hi` (either may be negative), the window of `window` taps dilated by
// `window_dilation`, moved by `stride`; 0 when the window does not fit. Attributes that
// overflow int64 throw an InvalidArgument Error naming `op`.
inline int64_t window_count(int64_t in, int64_t window, int64_t stride, int64_t lo, int64_t hi,
                            int64_t base_dilation, int64_t window_dilation, const char* op) {
  const int64_t dilated = in == 0 ? 0 : checked_add(checked_mul(in - 1, base_dilation, op), 1, op);
  const int64_t padded = checked_add(checked_add(dilated, lo, op), hi, op);
  const int64_t span =
      window == 0 ? 0 : checked_add(checked_mul(window - 1, window_dilation, op), 1, op);
  if (padded < span) return 0;
  return (padded - span) / stride + 1;
}

// lax.reduce_window_{sum,max,min}: padding reads as the reduction's identity.
struct ReduceWindowAttrs {
  ReduceOp op = ReduceOp::sum;
  std::vector<int64_t> window_dimensions, window_strides, padding_lo, padding_hi,
      base_dilation, window_dilation;
  template <class V> void visit(V& v) {
    v("op", op, kInName);
    v("window_dimensions", window_dimensions);
    v("window_strides", window_strides);
    v("padding_lo", padding_lo);
    v("padding_hi", padding_hi);
    v("base_dilation", base_dilation);
    v("window_dilation", window_dilation);
  }
};

// lax.conv_general_dilated in one layout, channels last: lhs [N, spatial..., C], rhs
// [spatial..., C / feature_group_count, O], result [N / batch_group_count, spatial..., O].
// The Python lowering transposes other dimension numbers into it.
struct ConvAttrs {
  std::vector<int64_t> window_strides, padding_lo, padding_hi, lhs_dilation, rhs_dilation;
  int64_t feature_group_count = 1, batch_group_count = 1;
  std::optional<DType> preferred_element_type;  // the result dtype; none: the operands'
  template <class V> void visit(V& v) {
    v("window_strides", window_strides);
    v("padding_lo", padding_lo);
    v("padding_hi", padding_hi);
    v("lhs_dilation", lhs_dilation);
    v("rhs_dilation", rhs_dilation);
    v("feature_group_count", feature_group_count);
    v("batch_group_count", batch_group_count);
    v("preferred_element_type", preferred_element_type);
  }
};

}  // namespace tinyxla::ops
