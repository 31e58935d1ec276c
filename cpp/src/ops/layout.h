// Attribute records of the layout ops (their definitions: layout.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

// reshape: the result shape.
struct ReshapeAttrs {
  Shape shape;
  template <class V> void visit(V& v) { v("shape", shape, kResultShape); }
};
struct TransposeAttrs {
  std::vector<int64_t> perm;
  template <class V> void visit(V& v) { v("perm", perm); }
};
struct BroadcastInDimAttrs {
  Shape shape;
  std::vector<int64_t> dims;  // the result dimension of each operand dimension
  template <class V> void visit(V& v) {
    v("shape", shape, kResultShape);
    v("dims", dims);
  }
};
struct SliceAttrs {
  std::vector<int64_t> start, limit, strides;
  template <class V> void visit(V& v) {
    v("start", start);
    v("limit", limit);
    v("strides", strides);
  }
};
struct PadAttrs {
  std::vector<int64_t> low, high, interior;
  template <class V> void visit(V& v) {
    v("low", low);
    v("high", high);
    v("interior", interior);
  }
};
struct ConcatenateAttrs {
  int64_t dimension = 0;
  template <class V> void visit(V& v) { v("dimension", dimension); }
};
struct RevAttrs {
  std::vector<int64_t> dims;
  template <class V> void visit(V& v) { v("dims", dims); }
};

}  // namespace tinyxla::ops
