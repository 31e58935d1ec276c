// Kernels of the windowed ops: convolution (im2col onto gemm) and reduce_window.
#pragma once
#include <vector>

#include "tinyxla/array.h"
#include "tinyxla/ops.h"

namespace tinyxla::cpu {

// Where the windows sit along each spatial dimension (see ops::window_count).
struct WindowGeometry {
  std::vector<int64_t> window, strides, pad_lo, pad_hi, base_dilation, window_dilation;
};

// lax.conv_general_dilated with lhs [N, S..., C], rhs [K..., C/G, O] into out
// [N/B, OS..., O] (G feature groups, B batch groups; `geometry.window` unused: rhs has it;
// base_dilation is lhs_dilation, window_dilation rhs_dilation).
void conv(const Array& lhs, const Array& rhs, const WindowGeometry& geometry,
          int64_t feature_groups, int64_t batch_groups, const Array& out);

// lax.reduce_window_{sum,max,min}: padding and dilation holes read as the identity.
void reduce_window(ReduceOp op, const Array& x, const WindowGeometry& geometry, const Array& out);

}  // namespace tinyxla::cpu
