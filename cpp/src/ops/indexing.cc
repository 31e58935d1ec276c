// Definitions of the indexing ops: dynamic_slice, dynamic_update_slice, gather, scatter.
#include "indexing.h"

#include "../cpu/kernels.h"

namespace tinyxla::ops {
namespace {

using Types = std::vector<infer::TypeRef>;
using Arrays = std::vector<Array>;

class DynamicSliceDef final : public TypedOpDef<DynamicSliceAttrs> {
 public:
  DynamicSliceDef() : TypedOpDef(OpKind::dynamic_slice) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    if (ins.empty()) invalid("dynamic_slice takes an operand");
    infer::dynamic_slice(*ins[0].shape, Types(ins.begin() + 1, ins.end()), get(a).slice_sizes);
    return {{get(a).slice_sizes, ins[0].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::dynamic_slice(ins[0], Arrays(ins.begin() + 1, ins.end()), outs[0]);
  }
};

class DynamicUpdateSliceDef final : public TypedOpDef<NoAttrs> {
 public:
  DynamicUpdateSliceDef() : TypedOpDef(OpKind::dynamic_update_slice) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    if (ins.size() < 2) invalid("dynamic_update_slice takes an operand and an update");
    infer::dynamic_update_slice(ins[0], ins[1], Types(ins.begin() + 2, ins.end()));
    return {{*ins[0].shape, ins[0].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::dynamic_update_slice(ins[0], ins[1], Arrays(ins.begin() + 2, ins.end()), outs[0]);
  }
};

void check_mode(const OpDef& def, IndexMode mode) {
  if (mode != IndexMode::clip && mode != IndexMode::fill_or_drop)
    throw_error(ErrorKind::InvalidArgument, def.name(), "unknown mode " + std::to_string(int(mode)));
}

// Operands: x, indices, and in fill_or_drop mode the fill value (a scalar of x's dtype).
class GatherDef final : public TypedOpDef<GatherAttrs> {
 public:
  GatherDef() : TypedOpDef(OpKind::gather) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    const GatherAttrs& at = get(a);
    check_mode(*this, at.index_mode);
    const bool fill = at.index_mode == IndexMode::fill_or_drop;
    need(ins, fill ? 3 : 2);
    if (fill && (!ins[2].shape->empty() || ins[2].dtype != ins[0].dtype))
      invalid("the fill value must be a scalar of the operand's dtype, got " +
              type_str({*ins[2].shape, ins[2].dtype}));
    return {{infer::gather(ins[0], ins[1], at.dims, at.slice_sizes), ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const GatherAttrs& at = get(a);
    cpu::gather(ins[0], ins[1], at.dims, at.slice_sizes, at.index_mode,
                ins.size() > 2 ? ins[2] : Array(), outs[0]);
  }
};

// Operands: x, indices, updates.
class ScatterDef final : public TypedOpDef<ScatterAttrs> {
 public:
  ScatterDef() : TypedOpDef(OpKind::scatter) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    const ScatterAttrs& at = get(a);
    need(ins, 3);
    check_mode(*this, at.index_mode);
    infer::scatter(at.op, ins[0], ins[1], ins[2], at.dims);
    return {{*ins[0].shape, ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const ScatterAttrs& at = get(a);
    cpu::scatter(at.op, ins[0], ins[1], ins[2], at.dims, at.index_mode, outs[0]);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return double(ins[0].size()) + double(ins[2].size());
  }

 protected:
  // "scatter" for set, "scatter_add" etc.
  std::string spell(int index, const char* enum_name) const override {
    return index == int(ScatterOp::set) ? "scatter" : std::string("scatter_") + enum_name;
  }
};

}  // namespace

TINYXLA_REGISTER_OP(dynamic_slice, DynamicSliceDef)
TINYXLA_REGISTER_OP(dynamic_update_slice, DynamicUpdateSliceDef)
TINYXLA_REGISTER_OP(gather, GatherDef)
TINYXLA_REGISTER_OP(scatter, ScatterDef)

}  // namespace tinyxla::ops
