// Definitions of the LAPACK-backed eigendecompositions (eig, eigh, eigh_tridiagonal) and
// cholesky; the other
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

// Operands: the diagonal d [..., n] and off-diagonal e [..., n-1] of real symmetric
// tridiagonal matrices and the bisection's absolute tolerance tol [...] (float32 or float64,
// all alike). Results: the eigenvalues lower_index..upper_index [..., k] (ascending), then
// with compute_vectors the eigenvectors as columns [..., n, k].
class EighTridiagonalDef final : public TypedOpDef<EighTridiagonalAttrs> {
 public:
  EighTridiagonalDef() : TypedOpDef(OpKind::eigh_tridiagonal) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 3);
    const Shape& d = *ins[0].shape;
    if (d.empty())
      throw_error(ErrorKind::TypeError, name(),
                  "eigh_tridiagonal requires a diagonal of rank at least 1, got shape " +
                      shape_str(d));
    if (ins[0].dtype != DType::F32 && ins[0].dtype != DType::F64)
      throw_error(ErrorKind::TypeError, name(), std::string("eigh_tridiagonal supports float32 "
                  "and float64, got ") + dtype_name(ins[0].dtype));
    const int64_t n = d.back();
    const Shape batch(d.begin(), d.end() - 1);
    Shape e_shape = batch;
    e_shape.push_back(std::max<int64_t>(0, n - 1));
    if (ins[1].dtype != ins[0].dtype || ins[2].dtype != ins[0].dtype)
      throw_error(ErrorKind::TypeError, name(), std::string("eigh_tridiagonal requires "
                  "operands of one dtype, got ") + dtype_name(ins[0].dtype) + ", " +
                  dtype_name(ins[1].dtype) + " and " + dtype_name(ins[2].dtype));
    if (*ins[1].shape != e_shape || *ins[2].shape != batch)
      invalid("eigh_tridiagonal requires an off-diagonal of shape " + shape_str(e_shape) +
              " and a tolerance of shape " + shape_str(batch) + ", got " +
              shape_str(*ins[1].shape) + " and " + shape_str(*ins[2].shape));
    const auto& at = get(a);
    if (at.lower_index < 0 || at.upper_index >= n || at.lower_index > at.upper_index + 1)
      invalid("eigh_tridiagonal: eigenvalue indices " + std::to_string(at.lower_index) + ".." +
              std::to_string(at.upper_index) + " out of range for order " + std::to_string(n));
    Shape w = batch;
    w.push_back(at.upper_index - at.lower_index + 1);
    std::vector<ValueType> types{{w, ins[0].dtype}};
    if (at.compute_vectors) {
      Shape v = batch;
      v.push_back(n);
      v.push_back(w.back());
      types.push_back({v, ins[0].dtype});
    }
    return types;
  }
  bool multiple_results() const override { return true; }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const auto& at = get(a);
    cpu::eigh_tridiagonal(ins[0], ins[1], ins[2], at.compute_vectors, at.lower_index,
                          at.upper_index, outs);
  }
  double cost(const std::any& a, const Arrays& ins, const std::vector<ValueType>&) const override {
    const double k = double(get(a).upper_index - get(a).lower_index + 1);
    return 60.0 * double(ins[0].size()) * k;
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
TINYXLA_REGISTER_OP(eigh_tridiagonal, EighTridiagonalDef)
TINYXLA_REGISTER_OP(cholesky, CholeskyDef)

}  // namespace tinyxla::ops
