// Definition of lax.sort: operands of one shape sorted together by their first num_keys.
#include "sorting.h"

#include <algorithm>
#include <cmath>

#include "../cpu/kernels.h"

namespace tinyxla::ops {
namespace {

using Types = std::vector<infer::TypeRef>;
using Arrays = std::vector<Array>;

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
