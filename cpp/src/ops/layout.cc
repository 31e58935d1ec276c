// Definitions of the layout ops. reshape, transpose, broadcast_in_dim, slice and rev are
// views of their operand's buffer (eager and jit make the same view); pad and concatenate
// copy.
#include "layout.h"

#include "../cpu/kernels.h"

namespace tinyxla::ops {
namespace {

using Types = std::vector<infer::TypeRef>;
using Arrays = std::vector<Array>;

class ReshapeDef final : public TypedOpDef<ReshapeAttrs> {
 public:
  ReshapeDef() : TypedOpDef(OpKind::reshape) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    infer::reshape(*ins[0].shape, get(a).shape);
    return {{get(a).shape, ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  bool view_needs_dense() const override { return true; }
  Array view(const std::any&, const ValueType& t, const Array& x) const override {
    return view_of(x, t, row_major_strides(t.shape), x.offset());
  }
};

class TransposeDef final : public TypedOpDef<TransposeAttrs> {
 public:
  TransposeDef() : TypedOpDef(OpKind::transpose) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    return {{infer::transpose(*ins[0].shape, get(a).perm), ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  Array view(const std::any& a, const ValueType& t, const Array& x) const override {
    const std::vector<int64_t>& perm = get(a).perm;
    Strides s(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) s[i] = x.strides()[size_t(perm[i])];
    return view_of(x, t, std::move(s), x.offset());
  }
};

class BroadcastInDimDef final : public TypedOpDef<BroadcastInDimAttrs> {
 public:
  BroadcastInDimDef() : TypedOpDef(OpKind::broadcast_in_dim) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    infer::broadcast_in_dim(*ins[0].shape, get(a).shape, get(a).dims);
    return {{get(a).shape, ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  Array view(const std::any& a, const ValueType& t, const Array& x) const override {
    const std::vector<int64_t>& dims = get(a).dims;
    Strides s(t.shape.size(), 0);
    for (size_t i = 0; i < dims.size(); ++i)
      s[size_t(dims[i])] = x.shape()[i] == 1 ? 0 : x.strides()[i];
    return view_of(x, t, std::move(s), x.offset());
  }
};

class SliceDef final : public TypedOpDef<SliceAttrs> {
 public:
  SliceDef() : TypedOpDef(OpKind::slice) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    SliceAttrs& at = get(a);
    Shape shape = infer::slice(*ins[0].shape, at.start, at.limit, at.strides);
    if (at.strides.empty()) at.strides.assign(shape.size(), 1);
    return {{std::move(shape), ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  Array view(const std::any& a, const ValueType& t, const Array& x) const override {
    const SliceAttrs& at = get(a);
    Strides s(t.shape.size());
    int64_t offset = x.offset();
    for (size_t i = 0; i < s.size(); ++i) {
      s[i] = x.strides()[i] * at.strides[i];
      if (t.shape[i] > 0) offset += at.start[i] * x.strides()[i];
    }
    return view_of(x, t, std::move(s), offset);
  }
};

class RevDef final : public TypedOpDef<RevAttrs> {
 public:
  RevDef() : TypedOpDef(OpKind::rev) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    get(a).dims = infer::rev(*ins[0].shape, get(a).dims);
    return {{*ins[0].shape, ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  Array view(const std::any& a, const ValueType& t, const Array& x) const override {
    Strides s = x.strides();
    int64_t offset = x.offset();
    for (int64_t d : get(a).dims) {
      if (x.shape()[size_t(d)] > 0) offset += (x.shape()[size_t(d)] - 1) * s[size_t(d)];
      s[size_t(d)] = -s[size_t(d)];
    }
    return view_of(x, t, std::move(s), offset);
  }
};

class PadDef final : public TypedOpDef<PadAttrs> {
 public:
  PadDef() : TypedOpDef(OpKind::pad) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 2);
    const PadAttrs& at = get(a);
    return {{infer::pad(ins[0], ins[1], at.low, at.high, at.interior), ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const PadAttrs& at = get(a);
    cpu::pad(ins[0], ins[1], at.low, at.high, at.interior, outs[0]);
  }
};

class ConcatenateDef final : public TypedOpDef<ConcatenateAttrs> {
 public:
  ConcatenateDef() : TypedOpDef(OpKind::concatenate) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    Shape shape = infer::concatenate(ins, &get(a).dimension);
    return {{std::move(shape), ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::concatenate(ins, get(a).dimension, outs[0]);
  }
};

}  // namespace

TINYXLA_REGISTER_OP(reshape, ReshapeDef)
TINYXLA_REGISTER_OP(transpose, TransposeDef)
TINYXLA_REGISTER_OP(broadcast_in_dim, BroadcastInDimDef)
TINYXLA_REGISTER_OP(slice, SliceDef)
TINYXLA_REGISTER_OP(rev, RevDef)
TINYXLA_REGISTER_OP(pad, PadDef)
TINYXLA_REGISTER_OP(concatenate, ConcatenateDef)

}  // namespace tinyxla::ops
