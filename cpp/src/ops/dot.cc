// Definition of dot_general.
#include "dot.h"

#include <algorithm>

#include "../cpu/kernels.h"

namespace tinyxla::ops {
namespace {

using Types = std::vector<infer::TypeRef>;
using Arrays = std::vector<Array>;

class DotGeneralDef final : public TypedOpDef<DotGeneralAttrs> {
 public:
  DotGeneralDef() : TypedOpDef(OpKind::dot_general) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 2);
    DotGeneralAttrs& at = get(a);
    double k = 1;
    Shape shape = infer::dot_general(ins[0], ins[1], at.dims, &k);
    if (at.preferred == ins[0].dtype) at.preferred.reset();  // the default needs no attribute
    return {{std::move(shape), at.preferred.value_or(ins[0].dtype)}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::dot_general(ins[0], ins[1], get(a).dims, outs[0]);
  }
  // Result elements times the contracted size.
  double cost(const std::any& a, const Arrays& ins, const std::vector<ValueType>& outs) const override {
    double k = 1;
    for (int64_t d : get(a).dims.lhs_contracting) k *= double(ins[0].shape()[size_t(d)]);
    return double(num_elements(outs[0].shape)) * std::max(k, 1.0);
  }
};

}  // namespace

TINYXLA_REGISTER_OP(dot_general, DotGeneralDef)

}  // namespace tinyxla::ops
