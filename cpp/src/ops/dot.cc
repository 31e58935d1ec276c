// Definition of dot_general.
#include "dot.h"

#include <algorithm>

#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

// Returns the result shape; `k` gets the product of the contracting sizes.
Shape dot_general(const TypeRef& lhs, const TypeRef& rhs, const DotDims& dims, double* k) {
  check_same_dtypes("dot_general", {lhs.dtype, rhs.dtype});
  const Shape& ls = *lhs.shape;
  const Shape& rs = *rhs.shape;
  if (dims.lhs_contracting.size() != dims.rhs_contracting.size() ||
      dims.lhs_batch.size() != dims.rhs_batch.size())
    invalid("dot_general", "dot_general requires equal numbers of lhs and rhs contracting and "
                           "batch dimensions");
  std::vector<bool> lused(ls.size(), false), rused(rs.size(), false);
  auto use = [](std::vector<bool>& used, int64_t d, const char* what) {
    if (d < 0 || d >= int64_t(used.size()) || used[size_t(d)])
      invalid("dot_general", std::string("dot_general requires ") + what +
                                 " dimensions to be unique and in range");
    used[size_t(d)] = true;
  };
  Shape shape;
  *k = 1;
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    use(lused, dims.lhs_batch[i], "lhs batch");
    use(rused, dims.rhs_batch[i], "rhs batch");
    int64_t a = ls[size_t(dims.lhs_batch[i])], b = rs[size_t(dims.rhs_batch[i])];
    if (a != b)
      invalid("dot_general", "dot_general requires lhs batch dimensions and rhs batch dimensions "
                             "to have the same shape, got " + std::to_string(a) + " and " +
                             std::to_string(b) + ".");
    shape.push_back(a);
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    use(lused, dims.lhs_contracting[i], "lhs contracting");
    use(rused, dims.rhs_contracting[i], "rhs contracting");
    int64_t a = ls[size_t(dims.lhs_contracting[i])];
    int64_t b = rs[size_t(dims.rhs_contracting[i])];
    if (a != b)
      invalid("dot_general", "dot_general requires contracting dimensions to have the same "
                             "shape, got " + std::to_string(a) + " and " + std::to_string(b) + ".");
    *k *= double(a);
  }
  for (size_t i = 0; i < ls.size(); ++i)
    if (!lused[i]) shape.push_back(ls[i]);
  for (size_t i = 0; i < rs.size(); ++i)
    if (!rused[i]) shape.push_back(rs[i]);
  return shape;
}

}  // namespace
}  // namespace tinyxla::ops::infer

namespace tinyxla::ops {
namespace {

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
