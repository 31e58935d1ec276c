// Definitions of the reductions (reduce, argmax, argmin) and the cumulative scans.
#include "reductions.h"

#include "../cpu/kernels.h"

namespace tinyxla::ops {
namespace {

using Types = std::vector<infer::TypeRef>;
using Arrays = std::vector<Array>;

double operand_elements(const Arrays& ins) { return double(ins[0].size()); }

class ReduceDef final : public TypedOpDef<ReduceAttrs> {
 public:
  ReduceDef() : TypedOpDef(OpKind::reduce, "reduce_") {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    ReduceAttrs& at = get(a);
    std::vector<int64_t> canon;
    Shape shape = infer::reduce(at.op, *ins[0].shape, at.axes, &canon);
    at.axes = std::move(canon);
    return {{std::move(shape), ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::reduce(get(a).op, ins[0], get(a).axes, outs[0]);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return operand_elements(ins);
  }
};

// The first index of the extreme value along an axis: argmax or argmin.
class ArgReduceDef : public TypedOpDef<ArgReduceAttrs> {
 public:
  explicit ArgReduceDef(bool is_max)
      : TypedOpDef(is_max ? OpKind::argmax : OpKind::argmin), is_max_(is_max) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    ArgReduceAttrs& at = get(a);
    return {{infer::argreduce(is_max_, *ins[0].shape, &at.axis, at.index_dtype), at.index_dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::argreduce(is_max_, ins[0], get(a).axis, outs[0]);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return operand_elements(ins);
  }

 private:
  bool is_max_;
};
struct ArgMaxDef : ArgReduceDef { ArgMaxDef() : ArgReduceDef(true) {} };
struct ArgMinDef : ArgReduceDef { ArgMinDef() : ArgReduceDef(false) {} };

class CumulativeDef final : public TypedOpDef<CumulativeAttrs> {
 public:
  CumulativeDef() : TypedOpDef(OpKind::cumulative, "cum") {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    CumulativeAttrs& at = get(a);
    infer::cumulative(at.op, ins[0], &at.dimension);
    return {{*ins[0].shape, ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const CumulativeAttrs& at = get(a);
    cpu::cumulative(at.op, ins[0], at.dimension, at.reverse, outs[0]);
  }
};

}  // namespace

TINYXLA_REGISTER_OP(reduce, ReduceDef)
TINYXLA_REGISTER_OP(argmax, ArgMaxDef)
TINYXLA_REGISTER_OP(argmin, ArgMinDef)
TINYXLA_REGISTER_OP(cumulative, CumulativeDef)

}  // namespace tinyxla::ops
