// Kernels of the windowed ops: convolution (im2col onto gemm) and reduce_window.
#pragma once
#include <functional>
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
// `epilogue`, when given, runs on each range of out's elements once it is written (see
// OpDef::run_with_epilogue): row chunks as the gemm finishes them, without groups.
void conv(const Array& lhs, const Array& rhs, const WindowGeometry& geometry,
          int64_t feature_groups, int64_t batch_groups, const Array& out,
          const std::function<void(int64_t, int64_t)>* epilogue = nullptr);

// lax.reduce_window_{sum,max,min}: padding and dilation holes read as the identity.
void reduce_window(ReduceOp op, const Array& x, const WindowGeometry& geometry, const Array& out);

// Max (op max) and min (op min) pooling's derivatives: each window of `operand` selects its
// first maximum (minimum). select_and_gather_add: out (the windows' shape) takes the
// selected elements of `tangent` (operand's shape); select_and_scatter_add: out (operand's
// shape) is zero but for each window's `source` element added at its selected element.
void select_and_gather_add(ReduceOp op, const Array& tangent, const Array& operand,
                           const WindowGeometry& geometry, const Array& out);
void select_and_scatter_add(ReduceOp op, const Array& source, const Array& operand,
                            const WindowGeometry& geometry, const Array& out);

}  // namespace tinyxla::cpu
