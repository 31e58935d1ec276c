// Definitions of the reductions (reduce, argmax, argmin) and the cumulative scans.
#include "reductions.h"

#include <algorithm>

#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

// Returns the result shape; `canon` gets the sorted non-negative axes (negative ones count
// from the end, which lax does not allow).
Shape reduce(ReduceOp op, const TypeRef& x, const std::vector<int64_t>& axes,
             std::vector<int64_t>* canon) {
  const std::string name = "reduce_" + detail::enum_text(op_name(op));
  const bool logical = op == ReduceOp::and_ || op == ReduceOp::or_ || op == ReduceOp::xor_;
  if (logical && !is_bool(x.dtype) && !is_integral(x.dtype))
    throw_error(ErrorKind::TypeError, name,
                std::string("logical reduction requires operand dtype bool or int, got ") +
                    dtype_name(x.dtype) + ".");
  if ((op == ReduceOp::sum || op == ReduceOp::prod) && is_bool(x.dtype))
    throw_error(ErrorKind::TypeError, name,
                name + " does not accept dtype bool. Accepted dtypes are subtypes of number.");
  const int64_t rank = int64_t(x.shape->size());
  std::vector<bool> reduced(x.shape->size(), false);
  canon->clear();
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      std::string aval = std::string(dtype_name(x.dtype)) + "[";
      for (size_t i = 0; i < x.shape->size(); ++i)
        aval += (i ? "," : "") + std::to_string((*x.shape)[i]);
      invalid(name, "reduction axes " + ints_str(axes) + " contains out-of-bounds indices for " +
                        aval + "].");
    }
    const int64_t c = a < 0 ? a + rank : a;
    if (reduced[size_t(c)]) invalid(name, "duplicate value in 'axes' of reduction: " + ints_str(axes));
    reduced[size_t(c)] = true;
    canon->push_back(c);
  }
  std::sort(canon->begin(), canon->end());
  Shape shape;
  for (size_t i = 0; i < x.shape->size(); ++i)
    if (!reduced[i]) shape.push_back((*x.shape)[i]);
  return shape;
}

// Returns the result shape; `axis` is made non-negative.
Shape argreduce(bool is_max, const Shape& x, int64_t* axis, DType index_dtype) {
  const char* name = is_max ? "argmax" : "argmin";
  const int64_t rank = int64_t(x.size());
  if (*axis < -rank || *axis >= rank)
    invalid(name, "Invalid axis " + std::to_string(*axis) + " for operand shape " + shape_str(x));
  if (*axis < 0) *axis += rank;
  if (!is_integral(index_dtype))
    throw_error(ErrorKind::TypeError, name,
                std::string("index_dtype must be an integer type, but got ") +
                    dtype_name(index_dtype));
  if (x[size_t(*axis)] == 0)
    invalid(name, std::string("attempt to get ") + name + " of an empty sequence");
  Shape shape = x;
  shape.erase(shape.begin() + *axis);
  return shape;
}

// Checks a cumulative op's axis (canonicalized) and dtype.
void cumulative(CumulativeOp op, const TypeRef& x, int64_t* axis) {
  const std::string name = std::string("cum") + op_name(op);
  if (*axis < 0) invalid(name, "XLA operations do not allow negative axes");
  if (*axis >= int64_t(x.shape->size()))
    invalid(name, "axis " + std::to_string(*axis) + " is out of bounds for array of shape " +
                      shape_str(*x.shape));
  if (op != CumulativeOp::logsumexp && is_bool(x.dtype))
    throw_error(ErrorKind::TypeError, name,
                name + " does not accept dtype bool. Accepted dtypes are subtypes of number.");
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
    Shape shape = infer::reduce(at.op, ins[0], at.axes, &canon);
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
