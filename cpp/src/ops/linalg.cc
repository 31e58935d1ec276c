// Definitions of the LAPACK-backed eigendecompositions (eig, eigh) and cholesky; the other
// factorizations are in linalg_factorizations.cc.
#include "linalg.h"

#include <algorithm>

#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

// Checks lax.linalg.eig / eigh's operand (`op` names it): a batch [..., n, n] of float32,
// float64, complex64 or complex128 matrices. Returns the dtype of its eigenvalues
// (complex for eig, real for eigh).
DType eig(const char* op, const TypeRef& x) {
  const Shape& s = *x.shape;
  if (s.size() < 2)
    throw_error(ErrorKind::TypeError, op,
                "Input 0 to " + std::string(op) + " must have rank at least 2, but got shape=" +
                    shape_str(s));
  if (s[s.size() - 1] != s[s.size() - 2])
    invalid(op, "The input to " + std::string(op) + " must be a square matrix. Got shape " +
                    shape_str(s) + ".");
  switch (x.dtype) {
    case DType::F32: return std::string(op) == "eig" ? DType::C64 : DType::F32;
    case DType::F64: return std::string(op) == "eig" ? DType::C128 : DType::F64;
    case DType::C64: case DType::C128: return std::string(op) == "eig" ? x.dtype : real_dtype(x.dtype);
    default:
      throw_error(ErrorKind::TypeError, op, std::string(op) +
                  " supports float32, float64, complex64 and complex128, got " + dtype_name(x.dtype));
  }
}

}  // namespace
}  // namespace tinyxla::ops::infer

namespace tinyxla::ops {
namespace {

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

// The lower Cholesky factor of each matrix [..., n, n] (float or complex), read from its
// lower triangle.
class CholeskyDef final : public TypedOpDef<NoAttrs> {
 public:
  CholeskyDef() : TypedOpDef(OpKind::cholesky) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 1);
    const Shape& s = *ins[0].shape;
    if (s.size() < 2)
      throw_error(ErrorKind::TypeError, name(),
                  "Input 0 to cholesky must have rank at least 2, but got shape=" + shape_str(s));
    if (s[s.size() - 1] != s[s.size() - 2])
      invalid("The input to cholesky must be a square matrix. Got shape " +
              shape_str(Shape(s.end() - 2, s.end())) + ".");
    if (!is_floating(ins[0].dtype) && !is_complex(ins[0].dtype))
      throw_error(ErrorKind::TypeError, name(),
                  std::string("cholesky does not accept dtype ") + dtype_name(ins[0].dtype));
    if (ins[0].dtype != DType::F32 && ins[0].dtype != DType::F64 && !is_complex(ins[0].dtype))
      throw_error(ErrorKind::TypeError, name(),
                  std::string("cholesky supports float32, float64, complex64 and complex128, got ") +
                      dtype_name(ins[0].dtype));
    return {{s, ins[0].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::cholesky(ins[0], outs[0]);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return decomposition_cost(ins[0]) / 30;
  }
};

}  // namespace

TINYXLA_REGISTER_OP(eig, EigDef)
TINYXLA_REGISTER_OP(eigh, EighDef)
TINYXLA_REGISTER_OP(cholesky, CholeskyDef)

}  // namespace tinyxla::ops
