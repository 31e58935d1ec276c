// Attribute records of the reduction and scan ops (their definitions: reductions.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

struct ReduceAttrs {
  ReduceOp op = ReduceOp::sum;
  std::vector<int64_t> axes;  // sorted, non-negative once inferred
  template <class V> void visit(V& v) {
    v("op", op, kInName);
    v("axes", axes);
  }
};
// argmax and argmin.
struct ArgReduceAttrs {
  int64_t axis = 0;
  DType index_dtype = DType::I32;
  template <class V> void visit(V& v) {
    v("axis", axis);
    v("index_dtype", index_dtype, kResultDtype);
  }
};
struct CumulativeAttrs {
  CumulativeOp op = CumulativeOp::sum;
  int64_t dimension = 0;
  bool reverse = false;
  template <class V> void visit(V& v) {
    v("op", op, kInName);
    v("dimension", dimension);
    v("reverse", reverse);
  }
};

}  // namespace tinyxla::ops
