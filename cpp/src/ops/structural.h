// Attribute records of the structural (graph inputs, constants, fused regions) ops (their definitions: structural.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

namespace infer {
// A filled array's shape (full, the graph builder's constants): no negative dimension.
void full(const Shape& shape);
}  // namespace infer

struct ParameterAttrs {
  int64_t index = 0;  // position among the graph's parameters (printed as "parameter(0)")
  Shape shape;
  DType dtype = DType::F32;
  template <class V> void visit(V& v) {
    v("index", index, kPositional);
    v("shape", shape, kResultShape);
    v("dtype", dtype, kResultDtype);
  }
};

}  // namespace tinyxla::ops
