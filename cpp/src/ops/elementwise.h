// Attribute records of the elementwise ops (their definitions: elementwise.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

struct UnaryAttrs {
  UnaryOp op = UnaryOp::neg;
  template <class V> void visit(V& v) { v("op", op, kInName); }
};
struct BinaryAttrs {
  BinaryOp op = BinaryOp::add;
  template <class V> void visit(V& v) { v("op", op, kInName); }
};
// convert and bitcast_convert: the result dtype.
struct ConvertAttrs {
  DType dtype = DType::F32;
  template <class V> void visit(V& v) { v("dtype", dtype, kResultDtype); }
};
struct IotaAttrs {
  int64_t dimension = 0;
  Shape shape;
  DType dtype = DType::F32;
  template <class V> void visit(V& v) {
    v("dimension", dimension);
    v("shape", shape, kResultShape);
    v("dtype", dtype, kResultDtype);
  }
};

}  // namespace tinyxla::ops
