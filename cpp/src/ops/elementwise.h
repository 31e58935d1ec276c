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

// XLA's simplifier computes x / y as x * (1 / y) when the divisor y is broadcast (or a
// constant) and of a real floating type: one rounding more, one division per element of y.
// JAX's results are its, eager ones included (jnp's division runs jitted there), so eager
// division (runtime/ops.cc) and the simplify pass both take that form where this holds.
inline bool divides_by_reciprocal(BinaryOp op, DType dtype) {
  return op == BinaryOp::div && is_floating(dtype);
}

}  // namespace tinyxla::ops
