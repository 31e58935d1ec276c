// Definitions of the elementwise ops (unary, binary, select_n, clamp, convert,
// bitcast_convert) and iota.
#include "elementwise.h"

#include <algorithm>

#include "../cpu/elementwise_ops.h"
#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::eq || op == BinaryOp::ne || op == BinaryOp::lt ||
         op == BinaryOp::le || op == BinaryOp::gt || op == BinaryOp::ge;
}

// Elementwise ops broadcast numpy-style; binary operands need equal dtypes.
DType unary_dtype(UnaryOp op, DType t) {
  switch (op) {
    case UnaryOp::is_finite: case UnaryOp::isnan: case UnaryOp::isinf: case UnaryOp::signbit:
      return DType::Bool;
    case UnaryOp::abs: case UnaryOp::real: case UnaryOp::imag:
      return real_dtype(t);
    default:
      return t;
  }
}

DType binary_dtype(BinaryOp op, DType t) {
  if (is_comparison(op)) return DType::Bool;
  if (op == BinaryOp::complex) return t == DType::F64 ? DType::C128 : DType::C64;
  return t;
}

Shape binary_shape(BinaryOp op, const Shape& x, const Shape& y) {
  return x == y ? x : broadcast_shapes(x, y, op_name(op));
}

// Checks `which` and the cases; the result has cases[0]'s type.
void select_n(const TypeRef& which, const std::vector<TypeRef>& cases) {
  if (cases.empty()) invalid("select_n", "select_n requires at least one case");
  std::vector<DType> dtypes;
  for (const TypeRef& c : cases) dtypes.push_back(c.dtype);
  check_same_dtypes("select_n", dtypes);
  const Shape& shape = *cases[0].shape;
  for (const TypeRef& c : cases)
    if (*c.shape != shape)
      invalid("select_n", "select_n cases must have the same shapes, got " + shape_str(shape) +
                              " and " + shape_str(*c.shape));
  if (!which.shape->empty() && *which.shape != shape)
    invalid("select_n", "select_n selector must be scalar or have the same shape as cases, got " +
                            shape_str(*which.shape));
  if (which.dtype != DType::Bool && which.dtype != DType::I32)
    throw_error(ErrorKind::TypeError, "select_n", "which must be a boolean or int32 type");
}

void clamp(const TypeRef& lo, const TypeRef& x, const TypeRef& hi) {
  check_same_dtypes("clamp", {lo.dtype, x.dtype, hi.dtype});
  for (const TypeRef* b : {&lo, &hi})
    if (!b->shape->empty() && *b->shape != *x.shape)
      invalid("clamp", "clamp bounds must be scalars or have the operand's shape " +
                           shape_str(*x.shape) + ", got " + shape_str(*b->shape));
}

// The shape after reinterpreting `shape` of dtype `from` as `to`.
Shape bitcast_convert(const Shape& x, DType from_t, DType to_t) {
  size_t from = itemsize(from_t), to = itemsize(to_t);
  Shape shape = x;
  if (to < from) {
    shape.push_back(int64_t(from / to));
  } else if (to > from) {
    if (shape.empty() || shape.back() != int64_t(to / from))
      invalid("bitcast_convert_type",
              std::string("when converting to a wider type, the last dimension must be ") +
                  std::to_string(to / from) + ", got shape " + shape_str(shape));
    shape.pop_back();
  }
  return shape;
}

// Returns the canonical (non-negative) dimension.
int64_t iota(const Shape& shape, int64_t dimension) {
  return canonical_axis(dimension, int64_t(shape.size()), "iota");
}

}  // namespace
}  // namespace tinyxla::ops::infer

namespace tinyxla::ops {
namespace {

double elements(const std::vector<ValueType>& outs) { return double(num_elements(outs[0].shape)); }

class UnaryDef final : public TypedOpDef<UnaryAttrs> {
 public:
  UnaryDef() : TypedOpDef(OpKind::unary) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    return {{*ins[0].shape, infer::unary_dtype(get(a).op, ins[0].dtype)}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::unary(get(a).op, ins[0], outs[0]);
  }
  double cost(const std::any& a, const Arrays&, const std::vector<ValueType>& outs) const override {
    return elements(outs) * (cpu::is_expensive(get(a).op) ? 8 : 1);
  }
};

class BinaryDef final : public TypedOpDef<BinaryAttrs> {
 public:
  BinaryDef() : TypedOpDef(OpKind::binary) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 2);
    const BinaryOp op = get(a).op;
    infer::check_same_dtypes(op_name(op), {ins[0].dtype, ins[1].dtype});
    return {{infer::binary_shape(op, *ins[0].shape, *ins[1].shape),
             infer::binary_dtype(op, ins[0].dtype)}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::binary(get(a).op, ins[0], ins[1], outs[0]);
  }
  double cost(const std::any& a, const Arrays&, const std::vector<ValueType>& outs) const override {
    return elements(outs) * (cpu::is_expensive(get(a).op) ? 8 : 1);
  }
};

class SelectNDef final : public TypedOpDef<NoAttrs> {
 public:
  SelectNDef() : TypedOpDef(OpKind::select_n) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    if (ins.size() < 2) invalid("select_n requires at least one case");
    infer::select_n(ins[0], Types(ins.begin() + 1, ins.end()));
    return {{*ins[1].shape, ins[1].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::select_n(ins[0], Arrays(ins.begin() + 1, ins.end()), outs[0]);
  }
};

class ClampDef final : public TypedOpDef<NoAttrs> {
 public:
  ClampDef() : TypedOpDef(OpKind::clamp) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 3);
    infer::clamp(ins[0], ins[1], ins[2]);
    return {{*ins[1].shape, ins[1].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::clamp(ins[0], ins[1], ins[2], outs[0]);
  }
};

class ConvertDef final : public TypedOpDef<ConvertAttrs> {
 public:
  ConvertDef() : TypedOpDef(OpKind::convert) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    return {{*ins[0].shape, get(a).dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::convert(ins[0], outs[0]);
  }
};

// Reinterprets the bytes of a dense operand: a view.
class BitcastConvertDef final : public TypedOpDef<ConvertAttrs> {
 public:
  BitcastConvertDef() : TypedOpDef(OpKind::bitcast_convert) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    const DType to = get(a).dtype;
    return {{infer::bitcast_convert(*ins[0].shape, ins[0].dtype, to), to}};
  }
  bool is_view() const override { return true; }
  bool view_needs_dense() const override { return true; }
  Array view(const std::any&, const ValueType& t, const Array& x) const override {
    const int64_t offset = x.offset() * int64_t(itemsize(x.dtype())) / int64_t(itemsize(t.dtype));
    return view_of(x, t, row_major_strides(t.shape), offset);
  }
};

class IotaDef final : public TypedOpDef<IotaAttrs> {
 public:
  IotaDef() : TypedOpDef(OpKind::iota) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 0);
    IotaAttrs& at = get(a);
    at.dimension = infer::iota(at.shape, at.dimension);
    return {{at.shape, at.dtype}};
  }
  void run(const std::any& a, const Arrays&, const Arrays& outs) const override {
    cpu::iota(get(a).dimension, outs[0]);
  }
};

}  // namespace

TINYXLA_REGISTER_OP(unary, UnaryDef)
TINYXLA_REGISTER_OP(binary, BinaryDef)
TINYXLA_REGISTER_OP(select_n, SelectNDef)
TINYXLA_REGISTER_OP(clamp, ClampDef)
TINYXLA_REGISTER_OP(convert, ConvertDef)
TINYXLA_REGISTER_OP(bitcast_convert, BitcastConvertDef)
TINYXLA_REGISTER_OP(iota, IotaDef)

}  // namespace tinyxla::ops
