// Definitions of the elementwise ops (unary, binary, select_n, clamp, convert,
// bitcast_convert) and iota.
#include "elementwise.h"

#include "../cpu/elementwise_ops.h"
#include "../cpu/kernels.h"

namespace tinyxla::ops {
namespace {

using Types = std::vector<infer::TypeRef>;
using Arrays = std::vector<Array>;

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
