// Attribute records of the linear algebra ops (their definitions: linalg.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

struct EigAttrs {
  bool compute_left = false, compute_right = true;
  template <class V> void visit(V& v) {
    v("left", compute_left);
    v("right", compute_right);
  }
};
struct EighAttrs {
  bool lower = true;
  template <class V> void visit(V& v) { v("lower", lower); }
};

// The eigenpairs lower_index..upper_index (inclusive) of a symmetric tridiagonal matrix.
struct EighTridiagonalAttrs {
  bool compute_vectors = false;
  int64_t lower_index = 0, upper_index = -1;
  template <class V> void visit(V& v) {
    v("compute_vectors", compute_vectors);
    v("lower_index", lower_index);
    v("upper_index", upper_index);
  }
};

struct LuPivotsToPermutationAttrs {
  int64_t permutation_size = 0;
  template <class V> void visit(V& v) { v("permutation_size", permutation_size); }
};
struct TriangularSolveAttrs {
  bool left_side = false, lower = false, transpose_a = false, conjugate_a = false,
       unit_diagonal = false;
  template <class V> void visit(V& v) {
    v("left_side", left_side);
    v("lower", lower);
    v("transpose_a", transpose_a);
    v("conjugate_a", conjugate_a);
    v("unit_diagonal", unit_diagonal);
  }
};
struct SvdAttrs {
  bool full_matrices = true, compute_uv = true;
  template <class V> void visit(V& v) {
    v("full_matrices", full_matrices);
    v("compute_uv", compute_uv);
  }
};
struct SchurAttrs {
  bool compute_vectors = true;
  template <class V> void visit(V& v) { v("compute_vectors", compute_vectors); }
};
struct TridiagonalAttrs {
  bool lower = true;
  template <class V> void visit(V& v) { v("lower", lower); }
};

}  // namespace tinyxla::ops
