// The LAPACK-backed factorizations and solves of lax.linalg beyond the eigensolvers and
// Cholesky (kernels.h): on batches of matrices [..., m, n], each matrix a work item of the
// pool (small matrices several to an item, and LU and triangular solves of small matrices by
// our own loops rather than one LAPACK call each). A matrix whose factorization fails gets
// NaN results, as JAX on CPU.
#pragma once
#include <cstdint>
#include <vector>

#include "tinyxla/array.h"

namespace tinyxla::cpu {

// outs = {lu (the unit-lower L below the diagonal, U on and above), pivots (int32, the
// row swapped with row i at step i), permutation (int32)}: P x = L U, partial pivoting.
void lu(const Array& x, const std::vector<Array>& outs);
// The permutation [..., size] that the row swaps `pivots` [..., k] (int32) make of iota.
void lu_pivots_to_permutation(const Array& pivots, const Array& out);

struct TriangularSolveFlags {
  bool left_side, lower, transpose_a, conjugate_a, unit_diagonal;
};
// Solves op(a) x = b (left side) or x op(a) = b, reading a's `lower` (or upper) triangle.
void triangular_solve(const Array& a, const Array& b, const TriangularSolveFlags& flags,
                      const Array& out);

// outs = {a (R above the diagonal, the Householder vectors below), taus}.
void geqrf(const Array& x, const std::vector<Array>& outs);
// outs = {a, jpvt (1-based, as LAPACK's), taus}; column-pivoted QR.
void geqp3(const Array& x, const Array& jpvt, const std::vector<Array>& outs);
// The first n columns of the product of the Householder reflectors (a's columns, taus).
void householder_product(const Array& a, const Array& taus, const Array& out);
// outs = {s} or {s, u, vt} (gesdd).
void svd(const Array& x, bool full_matrices, bool compute_uv, const std::vector<Array>& outs);
// outs = {t} or {t, vs}: x = vs t vs^H, t (quasi-)upper triangular (gees).
void schur(const Array& x, bool compute_vectors, const std::vector<Array>& outs);
// outs = {a (H on and above the subdiagonal, reflectors below), taus} (gehrd).
void hessenberg(const Array& x, const std::vector<Array>& outs);
// outs = {a (reflectors), d, e (real diagonals), taus} (sytrd / hetrd).
void tridiagonal(const Array& x, bool lower, const std::vector<Array>& outs);
// The solution of the tridiagonal system (dl, d, du) x = b, b [..., m, n] (gtsv).
void tridiagonal_solve(const Array& dl, const Array& d, const Array& du, const Array& b,
                       const Array& out);

}  // namespace tinyxla::cpu
