// Definition of lax.sort: operands of one shape sorted together by their first num_keys.
#include "sorting.h"

#include <algorithm>
#include <cmath>

#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

// Checks a lax.sort (operands of one shape, the dimension, num_keys) and canonicalizes
// the dimension.
void sort(const std::vector<TypeRef>& xs, int64_t* dimension, int num_keys) {
  if (xs.empty()) invalid("sort", "sort requires at least one operand");
  if (num_keys < 1 || size_t(num_keys) > xs.size())
    invalid("sort", "num_keys=" + std::to_string(num_keys) + " must be between 1 and len(operand)=" +
                        std::to_string(xs.size()));
  const Shape& shape = *xs[0].shape;
  for (const TypeRef& x : xs)
    if (*x.shape != shape)
      throw_error(ErrorKind::TypeError, "sort",
                  "Arguments to sort must have equal shapes, got: " + shapes_str(xs, " "));
  if (shape.empty()) invalid("sort", "sort requires an operand of rank at least 1");
  *dimension = canonical_axis(*dimension, int64_t(shape.size()), "sort");
}

}  // namespace
}  // namespace tinyxla::ops::infer

namespace tinyxla::ops {
namespace {

class SortDef final : public TypedOpDef<SortAttrs> {
 public:
  SortDef() : TypedOpDef(OpKind::sort) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    SortAttrs& at = get(a);
    infer::sort(ins, &at.dimension, int(at.num_keys));
    std::vector<ValueType> types;
    for (const infer::TypeRef& x : ins) types.push_back({*x.shape, x.dtype});
    return types;
  }
  bool multiple_results() const override { return true; }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::sort(ins, get(a).dimension, int(get(a).num_keys), outs);
  }
  double cost(const std::any& a, const Arrays& ins, const std::vector<ValueType>&) const override {
    const double n = double(ins[0].shape()[size_t(get(a).dimension)]);
    return double(ins[0].size()) * std::max(1.0, std::log2(std::max(n, 1.0)));
  }
};

}  // namespace

TINYXLA_REGISTER_OP(sort, SortDef)

}  // namespace tinyxla::ops
