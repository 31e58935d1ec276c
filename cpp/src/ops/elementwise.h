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

namespace infer {
// A binary op's result shape: numpy's broadcast of its operands' (JAX's TypeError if none).
Shape binary_shape(const char* op, const Shape& x, const Shape& y);
}  // namespace infer

// XLA's simplifier rewrites float divisions and powers inexactly (passes/simplify.cc lists
// the rules), for real floating types but bfloat16 (XLA:CPU computes it through converts to
// float32, which hide the patterns), and JAX's results are its. Eagerly too where a division's
// own divisor broadcasts (jnp's division runs jitted there): eager division by a broadcast
// divisor (runtime/ops.cc) is x * (1 / y) as well.
inline bool has_xla_float_rewrites(DType dtype) {
  return is_floating(dtype) && dtype != DType::BF16;
}

}  // namespace tinyxla::ops
