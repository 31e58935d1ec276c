// Definitions of the LAPACK-backed factorizations and solves of lax.linalg: lu,
// lu_pivots_to_permutation, triangular_solve, geqrf, geqp3, householder_product, svd,
// schur, hessenberg, tridiagonal, tridiagonal_solve. Operands carry any leading batch
// dims, equal across operands (the Python batching rules broadcast them).
#include <algorithm>

#include "../cpu/factorizations.h"
#include "linalg.h"

namespace tinyxla::ops {
namespace {

bool is_lapack_dtype(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::C64 || t == DType::C128;
}

// Checks that `x` is a batch of matrices of a LAPACK dtype (square ones when `square`).
void check_matrices(const char* op, const infer::TypeRef& x, bool square) {
  const Shape& s = *x.shape;
  if (s.size() < 2)
    throw_error(ErrorKind::TypeError, op, std::string(op) +
                " requires an operand of rank at least 2, got shape " + shape_str(s));
  if (square && s[s.size() - 1] != s[s.size() - 2])
    throw_error(ErrorKind::InvalidArgument, op,
                std::string(op) + " requires square matrices, got shape " + shape_str(s));
  if (!is_lapack_dtype(x.dtype))
    throw_error(ErrorKind::TypeError, op, std::string(op) +
                " supports float32, float64, complex64 and complex128, got " + dtype_name(x.dtype));
}

// Checks that `x` has `rank_offset` fewer dims than the matrices `like` and the same batch.
void check_batch(const char* op, const Shape& like, const infer::TypeRef& x, size_t rank) {
  const Shape& s = *x.shape;
  if (s.size() != rank || !std::equal(like.begin(), like.end() - 2, s.begin()))
    throw_error(ErrorKind::InvalidArgument, op, std::string(op) +
                ": operand shapes " + shape_str(like) + " and " + shape_str(s) +
                " do not share their batch dimensions");
}

Shape batch_with(const Shape& s, std::initializer_list<int64_t> tail) {
  Shape out(s.begin(), s.end() - 2);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

int64_t rows(const Shape& s) { return s[s.size() - 2]; }
int64_t cols(const Shape& s) { return s.back(); }

// About `factor` * m n min(m, n) flops a matrix.
double cubic_cost(const Array& x, double factor) {
  const Shape& s = x.shape();
  if (s.size() < 2) return 0;
  return factor * double(x.size()) * double(std::min(rows(s), cols(s)));
}

class LuDef final : public TypedOpDef<NoAttrs> {
 public:
  LuDef() : TypedOpDef(OpKind::lu) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 1);
    check_matrices("lu", ins[0], false);
    const Shape& s = *ins[0].shape;
    return {{s, ins[0].dtype},
            {batch_with(s, {std::min(rows(s), cols(s))}), DType::I32},
            {batch_with(s, {rows(s)}), DType::I32}};
  }
  bool multiple_results() const override { return true; }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::lu(ins[0], outs);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return cubic_cost(ins[0], 1.0);
  }
};

class LuPivotsToPermutationDef final : public TypedOpDef<LuPivotsToPermutationAttrs> {
 public:
  LuPivotsToPermutationDef() : TypedOpDef(OpKind::lu_pivots_to_permutation) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    const Shape& s = *ins[0].shape;
    if (s.empty() || ins[0].dtype != DType::I32)
      throw_error(ErrorKind::TypeError, name(),
                  "lu_pivots_to_permutation requires int32 pivots of rank at least 1, got " +
                      shape_str(s) + " " + dtype_name(ins[0].dtype));
    const int64_t size = get(a).permutation_size;
    if (size < s.back())
      invalid("Output permutation size " + std::to_string(size) +
              " has to exceed the trailing dimension of the pivots. Got pivots size " +
              std::to_string(s.back()));
    Shape out(s.begin(), s.end() - 1);
    out.push_back(size);
    return {{out, DType::I32}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::lu_pivots_to_permutation(ins[0], outs[0]);
  }
};

class TriangularSolveDef final : public TypedOpDef<TriangularSolveAttrs> {
 public:
  TriangularSolveDef() : TypedOpDef(OpKind::triangular_solve) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 2);
    check_matrices("triangular_solve", ins[0], true);
    check_matrices("triangular_solve", ins[1], false);
    if (ins[0].dtype != ins[1].dtype)
      throw_error(ErrorKind::TypeError, name(), "triangular_solve requires operands of one dtype");
    const Shape& as = *ins[0].shape;
    const Shape& bs = *ins[1].shape;
    check_batch("triangular_solve", as, ins[1], as.size());
    const int64_t common = get(a).left_side ? rows(bs) : cols(bs);
    if (common != cols(as))
      invalid("triangular_solve: a " + shape_str(as) + " does not match b " + shape_str(bs));
    return {{bs, ins[1].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const TriangularSolveAttrs& at = get(a);
    cpu::triangular_solve(ins[0], ins[1],
                          {at.left_side, at.lower, at.transpose_a, at.conjugate_a, at.unit_diagonal},
                          outs[0]);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return double(ins[1].size()) * double(cols(ins[0].shape()));
  }
};

class GeqrfDef final : public TypedOpDef<NoAttrs> {
 public:
  GeqrfDef() : TypedOpDef(OpKind::geqrf) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 1);
    check_matrices("geqrf", ins[0], false);
    const Shape& s = *ins[0].shape;
    return {{s, ins[0].dtype}, {batch_with(s, {std::min(rows(s), cols(s))}), ins[0].dtype}};
  }
  bool multiple_results() const override { return true; }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::geqrf(ins[0], outs);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return cubic_cost(ins[0], 2.0);
  }
};

class Geqp3Def final : public TypedOpDef<NoAttrs> {
 public:
  Geqp3Def() : TypedOpDef(OpKind::geqp3) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 2);
    check_matrices("geqp3", ins[0], false);
    const Shape& s = *ins[0].shape;
    check_batch("geqp3", s, ins[1], s.size() - 1);
    if (ins[1].dtype != DType::I32 || ins[1].shape->back() != cols(s))
      throw_error(ErrorKind::TypeError, name(), "geqp3 requires int32 jpvt of shape " +
                  shape_str(batch_with(s, {cols(s)})));
    return {{s, ins[0].dtype}, {*ins[1].shape, DType::I32},
            {batch_with(s, {std::min(rows(s), cols(s))}), ins[0].dtype}};
  }
  bool multiple_results() const override { return true; }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::geqp3(ins[0], ins[1], outs);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return cubic_cost(ins[0], 2.0);
  }
};

class HouseholderProductDef final : public TypedOpDef<NoAttrs> {
 public:
  HouseholderProductDef() : TypedOpDef(OpKind::householder_product) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 2);
    check_matrices("householder_product", ins[0], false);
    const Shape& s = *ins[0].shape;
    check_batch("householder_product", s, ins[1], s.size() - 1);
    if (ins[1].dtype != ins[0].dtype)
      throw_error(ErrorKind::TypeError, name(), "householder_product requires operands of one dtype");
    if (rows(s) < cols(s) || ins[1].shape->back() > cols(s))
      invalid("householder_product requires m >= n >= k, got a " + shape_str(s) + " and taus " +
              shape_str(*ins[1].shape));
    return {{s, ins[0].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::householder_product(ins[0], ins[1], outs[0]);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return cubic_cost(ins[0], 2.0);
  }
};

class SvdDef final : public TypedOpDef<SvdAttrs> {
 public:
  SvdDef() : TypedOpDef(OpKind::svd) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    check_matrices("svd", ins[0], false);
    const Shape& s = *ins[0].shape;
    const int64_t m = rows(s), n = cols(s), k = std::min(m, n);
    std::vector<ValueType> types{{batch_with(s, {k}), real_dtype(ins[0].dtype)}};
    if (get(a).compute_uv) {
      const bool full = get(a).full_matrices;
      types.push_back({batch_with(s, {m, full ? m : k}), ins[0].dtype});
      types.push_back({batch_with(s, {full ? n : k, n}), ins[0].dtype});
    }
    return types;
  }
  bool multiple_results() const override { return true; }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::svd(ins[0], get(a).full_matrices, get(a).compute_uv, outs);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return cubic_cost(ins[0], 10.0);
  }
};

class SchurDef final : public TypedOpDef<SchurAttrs> {
 public:
  SchurDef() : TypedOpDef(OpKind::schur) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    check_matrices("schur", ins[0], true);
    std::vector<ValueType> types{{*ins[0].shape, ins[0].dtype}};
    if (get(a).compute_vectors) types.push_back({*ins[0].shape, ins[0].dtype});
    return types;
  }
  bool multiple_results() const override { return true; }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::schur(ins[0], get(a).compute_vectors, outs);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return cubic_cost(ins[0], 25.0);
  }
};

class HessenbergDef final : public TypedOpDef<NoAttrs> {
 public:
  HessenbergDef() : TypedOpDef(OpKind::hessenberg) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 1);
    check_matrices("hessenberg", ins[0], true);
    const Shape& s = *ins[0].shape;
    return {{s, ins[0].dtype}, {batch_with(s, {std::max<int64_t>(0, cols(s) - 1)}), ins[0].dtype}};
  }
  bool multiple_results() const override { return true; }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::hessenberg(ins[0], outs);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return cubic_cost(ins[0], 3.0);
  }
};

class TridiagonalDef final : public TypedOpDef<TridiagonalAttrs> {
 public:
  TridiagonalDef() : TypedOpDef(OpKind::tridiagonal) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 1);
    check_matrices("tridiagonal", ins[0], true);
    const Shape& s = *ins[0].shape;
    const int64_t n = cols(s), e = std::max<int64_t>(0, n - 1);
    const DType real = real_dtype(ins[0].dtype);
    return {{s, ins[0].dtype}, {batch_with(s, {n}), real}, {batch_with(s, {e}), real},
            {batch_with(s, {e}), ins[0].dtype}};
  }
  bool multiple_results() const override { return true; }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::tridiagonal(ins[0], get(a).lower, outs);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return cubic_cost(ins[0], 2.0);
  }
};

class TridiagonalSolveDef final : public TypedOpDef<NoAttrs> {
 public:
  TridiagonalSolveDef() : TypedOpDef(OpKind::tridiagonal_solve) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 4);
    check_matrices("tridiagonal_solve", ins[3], false);
    const Shape& bs = *ins[3].shape;
    for (int i = 0; i < 3; ++i) {
      const Shape& s = *ins[size_t(i)].shape;
      if (ins[size_t(i)].dtype != ins[3].dtype || s.size() + 1 != bs.size() ||
          !std::equal(s.begin(), s.end(), bs.begin()))
        throw_error(ErrorKind::TypeError, name(),
                    "tridiagonal_solve requires diagonals of b's dtype and shape " +
                        shape_str(Shape(bs.begin(), bs.end() - 1)) + ", got " + shape_str(s));
    }
    return {{bs, ins[3].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::tridiagonal_solve(ins[0], ins[1], ins[2], ins[3], outs[0]);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return 8.0 * double(ins[3].size());
  }
};

}  // namespace

TINYXLA_REGISTER_OP(lu, LuDef)
TINYXLA_REGISTER_OP(lu_pivots_to_permutation, LuPivotsToPermutationDef)
TINYXLA_REGISTER_OP(triangular_solve, TriangularSolveDef)
TINYXLA_REGISTER_OP(geqrf, GeqrfDef)
TINYXLA_REGISTER_OP(geqp3, Geqp3Def)
TINYXLA_REGISTER_OP(householder_product, HouseholderProductDef)
TINYXLA_REGISTER_OP(svd, SvdDef)
TINYXLA_REGISTER_OP(schur, SchurDef)
TINYXLA_REGISTER_OP(hessenberg, HessenbergDef)
TINYXLA_REGISTER_OP(tridiagonal, TridiagonalDef)
TINYXLA_REGISTER_OP(tridiagonal_solve, TridiagonalSolveDef)

}  // namespace tinyxla::ops
