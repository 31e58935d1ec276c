// Definitions of the LAPACK-backed decompositions: eig, eigh.
#include "linalg.h"

#include "../cpu/kernels.h"

namespace tinyxla::ops {
namespace {

using Types = std::vector<infer::TypeRef>;
using Arrays = std::vector<Array>;

// About 10 n^3 flops a matrix for either decomposition.
double decomposition_cost(const Array& x) {
  const double n = x.ndim() ? double(x.shape().back()) : 0.0;
  return 10.0 * double(x.size()) * n;
}

Shape batch_vector_shape(const Shape& matrices) {
  return Shape(matrices.begin(), matrices.end() - 1);
}

// Results: the eigenvalues, then the left and the right eigenvectors as requested.
class EigDef final : public TypedOpDef<EigAttrs> {
 public:
  EigDef() : TypedOpDef(OpKind::eig) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    const DType w = infer::eig("eig", ins[0]);
    std::vector<ValueType> types{{batch_vector_shape(*ins[0].shape), w}};
    if (get(a).compute_left) types.push_back({*ins[0].shape, w});
    if (get(a).compute_right) types.push_back({*ins[0].shape, w});
    return types;
  }
  bool multiple_results() const override { return true; }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::eig(ins[0], get(a).compute_left, get(a).compute_right, outs);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return decomposition_cost(ins[0]);
  }
};

// Results: the eigenvectors, then the eigenvalues (real, ascending).
class EighDef final : public TypedOpDef<EighAttrs> {
 public:
  EighDef() : TypedOpDef(OpKind::eigh) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 1);
    const DType w = infer::eig("eigh", ins[0]);
    return {{*ins[0].shape, ins[0].dtype}, {batch_vector_shape(*ins[0].shape), w}};
  }
  bool multiple_results() const override { return true; }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::eigh(ins[0], get(a).lower, outs);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return decomposition_cost(ins[0]);
  }
};

}  // namespace

TINYXLA_REGISTER_OP(eig, EigDef)
TINYXLA_REGISTER_OP(eigh, EighDef)

}  // namespace tinyxla::ops
