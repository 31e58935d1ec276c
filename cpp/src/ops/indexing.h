// Attribute records of the indexing ops (their definitions: indexing.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

struct DynamicSliceAttrs {
  Shape slice_sizes;  // the result shape
  template <class V> void visit(V& v) { v("slice_sizes", slice_sizes, kResultShape); }
};
struct GatherAttrs {
  GatherDims dims;
  std::vector<int64_t> slice_sizes;
  IndexMode index_mode = IndexMode::clip;
  // Each index component below zero first gets its operand dim's size added (numpy's
  // negative indices), before the mode clamps or fills: the simplifier sets it in place of
  // jnp indexing's select(i < 0, i + n, i), which would otherwise be a pass of its own
  // over the indices. ScatterAttrs has the same field.
  bool wrap_negative = false;
  template <class V> void visit(V& v) {
    v("offset_dims", dims.offset_dims);
    v("collapsed_slice_dims", dims.collapsed_slice_dims);
    v("start_index_map", dims.start_index_map);
    v("operand_batching_dims", dims.operand_batching_dims, kOmitEmpty);
    v("start_indices_batching_dims", dims.start_indices_batching_dims, kOmitEmpty);
    v("slice_sizes", slice_sizes);
    v("mode", index_mode);
    v("wrap_negative", wrap_negative, kOmitEmpty);
  }
};
// The scatter dimension numbers in gather terms (see GatherDims), under JAX's names.
struct ScatterAttrs {
  ScatterOp op = ScatterOp::set;
  GatherDims dims;
  IndexMode index_mode = IndexMode::clip;
  bool wrap_negative = false;  // as GatherAttrs::wrap_negative, for the scatter's indices
  template <class V> void visit(V& v) {
    v("op", op, kInName);
    v("update_window_dims", dims.offset_dims);
    v("inserted_window_dims", dims.collapsed_slice_dims);
    v("scatter_dims_to_operand_dims", dims.start_index_map);
    v("operand_batching_dims", dims.operand_batching_dims, kOmitEmpty);
    v("scatter_indices_batching_dims", dims.start_indices_batching_dims, kOmitEmpty);
    v("mode", index_mode);
    v("wrap_negative", wrap_negative, kOmitEmpty);
  }
};

}  // namespace tinyxla::ops
