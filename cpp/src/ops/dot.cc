// Definition of dot_general.
#include "dot.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

// Returns the result shape; `k` gets the product of the contracting sizes. JAX's checks,
// in its order (all TypeErrors).
Shape dot_general(const TypeRef& lhs, const TypeRef& rhs, const DotDims& dims, double* k) {
  auto fail = [](const std::string& msg) {
    throw_error(ErrorKind::TypeError, "dot_general", "dot_general requires " + msg);
  };
  const Shape& ls = *lhs.shape;
  const Shape& rs = *rhs.shape;
  const auto in_range = [](const std::vector<int64_t>& v, size_t rank) {
    return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d >= 0 && d < int64_t(rank); });
  };
  for (const auto& [side, batch, contracting, rank] :
       {std::tuple{"lhs", &dims.lhs_batch, &dims.lhs_contracting, ls.size()},
        std::tuple{"rhs", &dims.rhs_batch, &dims.rhs_contracting, rs.size()}})
    if (!in_range(*batch, rank) || !in_range(*contracting, rank))
      fail(std::string(side) + " dimension numbers to be nonnegative and less than the number " +
           "of axes of the " + side + " value, got " + side + "_batch of " + ints_str(*batch) +
           " and " + side + "_contracting of " + ints_str(*contracting) + " for " + side +
           " of rank " + std::to_string(rank));
  if (dims.lhs_batch.size() != dims.rhs_batch.size())
    fail("equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch " +
         ints_str(dims.lhs_batch) + " and rhs_batch " + ints_str(dims.rhs_batch) + ".");
  const auto distinct = [](const std::vector<int64_t>& v) {
    std::vector<int64_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  };
  for (const auto& [what, v] : {std::pair{"lhs batch", &dims.lhs_batch},
                                std::pair{"rhs batch", &dims.rhs_batch},
                                std::pair{"lhs contracting", &dims.lhs_contracting},
                                std::pair{"rhs contracting", &dims.rhs_contracting}}) {
    if (!distinct(*v)) {
      std::string field = what;
      field[3] = '_';
      fail(std::string(what) + " dimensions to be distinct, got " + field + " " + ints_str(*v) +
           ".");
    }
  }
  for (const auto& [side, batch, contracting] :
       {std::tuple{"lhs", &dims.lhs_batch, &dims.lhs_contracting},
        std::tuple{"rhs", &dims.rhs_batch, &dims.rhs_contracting}})
    for (int64_t d : *batch)
      if (std::find(contracting->begin(), contracting->end(), d) != contracting->end())
        fail(std::string(side) + " batch dimensions to be disjoint from contracting dimensions, "
             "got " + side + "_batch " + ints_str(*batch) + " and " + side + "_contracting " +
             ints_str(*contracting) + ".");
  const auto sizes = [](const Shape& s, const std::vector<int64_t>& ds) {
    Shape out;
    for (int64_t d : ds) out.push_back(s[size_t(d)]);
    return out;
  };
  const Shape batch = sizes(ls, dims.lhs_batch);
  if (batch != sizes(rs, dims.rhs_batch))
    fail("lhs batch dimensions and rhs batch dimensions to have the same shape, got " +
         shape_str(batch) + " and " + shape_str(sizes(rs, dims.rhs_batch)) + ".");
  const Shape contracted = sizes(ls, dims.lhs_contracting);
  if (contracted != sizes(rs, dims.rhs_contracting))
    fail("contracting dimensions to have the same shape, got " + shape_str(contracted) +
         " and " + shape_str(sizes(rs, dims.rhs_contracting)) + ".");
  // Our kernels take one dtype (lax would promote with preferred_element_type).
  check_same_dtypes("dot_general", {lhs.dtype, rhs.dtype});
  *k = 1;
  for (int64_t d : contracted) *k *= double(d);
  Shape shape = batch;
  std::vector<bool> lused(ls.size(), false), rused(rs.size(), false);
  for (int64_t d : dims.lhs_batch) lused[size_t(d)] = true;
  for (int64_t d : dims.lhs_contracting) lused[size_t(d)] = true;
  for (int64_t d : dims.rhs_batch) rused[size_t(d)] = true;
  for (int64_t d : dims.rhs_contracting) rused[size_t(d)] = true;
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
