// Batch-major kernels for batches of tiny real matrices (n <= kMaxSmallN): a group of one
// vector's worth of matrices is held element-major (element (i, j) of every matrix of the
// group adjacent), so that each step of the unrolled LU or substitution is one vector
// operation over the group, and the per-matrix pivot choices are selects. They do the
// operations of the one-matrix loops in factorizations.cc in the same order.
#pragma once
#include <cstdint>

#include "factorizations.h"

namespace tinyxla::cpu::small {

constexpr int64_t kMaxSmallN = 8;
// The largest other dimension (right-hand sides) of a batch-major triangular solve.
constexpr int64_t kMaxSmallCols = 8;

// LU with partial pivoting (as lu_small) of `count` row-major n x n matrices src -> lu, with
// the 0-based pivot rows in piv [count, n]. n <= kMaxSmallN.
template <typename T>
void lu(const T* src, int64_t count, int64_t n, T* lu, int32_t* piv);

// Solves op(a) x = b (left side) or x op(a) = b for `count` triangular a (m x m) and b
// (rows x cols), as substitute() does. m <= kMaxSmallN, and the other dimension of b (cols
// on the left side, rows on the right) <= kMaxSmallCols.
template <typename T>
void triangular_solve(const T* a, const T* b, int64_t count, int64_t m, int64_t rows,
                      int64_t cols, const TriangularSolveFlags& flags, T* x);

}  // namespace tinyxla::cpu::small
