// Definitions of the reductions (reduce, argmax, argmin) and the cumulative scans.
#include "reductions.h"

#include <algorithm>

#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

// Returns the result shape; `canon` gets the sorted non-negative axes.
Shape reduce(ReduceOp op, const Shape& x, const std::vector<int64_t>& axes,
             std::vector<int64_t>* canon) {
  std::string name = std::string("reduce_") + op_name(op);
  const int64_t rank = int64_t(x.size());
  std::vector<bool> reduced(x.size(), false);
  canon->clear();
  for (int64_t a : axes) {
    int64_t c = canonical_axis(a, rank, name.c_str());
    if (reduced[size_t(c)]) invalid(name, "duplicate value in 'axes': " + ints_str(axes));
    reduced[size_t(c)] = true;
    canon->push_back(c);
  }
  std::sort(canon->begin(), canon->end());
  Shape shape;
  for (size_t i = 0; i < x.size(); ++i)
    if (!reduced[i]) shape.push_back(x[i]);
  return shape;
}

// Returns the result shape; `axis` is made non-negative.
Shape argreduce(bool is_max, const Shape& x, int64_t* axis, DType index_dtype) {
  const char* name = is_max ? "argmax" : "argmin";
  *axis = canonical_axis(*axis, int64_t(x.size()), name);
  if (!is_integral(index_dtype))
    throw_error(ErrorKind::TypeError, name, "index_dtype must be an integer type");
  if (x[size_t(*axis)] == 0)
    invalid(name, std::string("attempt to get ") + name + " of an empty sequence");
  Shape shape = x;
  shape.erase(shape.begin() + *axis);
  return shape;
}

// Checks a cumulative op's axis (canonicalized) and dtype.
void cumulative(CumulativeOp op, const TypeRef& x, int64_t* axis) {
  const std::string name = std::string("cum") + op_name(op);
  *axis = canonical_axis(*axis, int64_t(x.shape->size()), name.c_str());
  if (op == CumulativeOp::logsumexp && !is_inexact(x.dtype))
    throw_error(ErrorKind::TypeError, name, name + " requires a floating-point operand");
  if ((op == CumulativeOp::max || op == CumulativeOp::min) && is_complex(x.dtype))
    throw_error(ErrorKind::TypeError, name, name + " does not accept complex operands");
}

}  // namespace
}  // namespace tinyxla::ops::infer

namespace tinyxla::ops {
namespace {

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
