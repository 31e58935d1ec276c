// CPU kernels. Each reads waited, possibly strided inputs and writes a fresh dense output
// (`out` owns a new buffer of out.shape()). Kernels throw tinyxla::Error on bad input.
#pragma once
#include <vector>

#include "tinyxla/array.h"
#include "tinyxla/ops.h"

namespace tinyxla::cpu {

// Elementwise: operands broadcast to out.shape() numpy-style (0-d operands included).
void unary(UnaryOp op, const Array& x, const Array& out);
void binary(BinaryOp op, const Array& x, const Array& y, const Array& out);
void select_n(const Array& which, const std::vector<Array>& cases, const Array& out);
void clamp(const Array& lo, const Array& x, const Array& hi, const Array& out);
void convert(const Array& x, const Array& out);
void fill(const Scalar& value, const Array& out);
void iota(int64_t dimension, const Array& out);
// Dense copy of any strided view (broadcast, transposed, reversed, sliced).
void copy(const Array& x, const Array& out);

void reduce(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out);
void argreduce(bool is_max, const Array& x, int64_t axis, const Array& out);

void pad(const Array& x, const Array& padding_value, const std::vector<int64_t>& lo,
         const std::vector<int64_t>& hi, const std::vector<int64_t>& interior, const Array& out);
void concatenate(const std::vector<Array>& xs, int64_t dimension, const Array& out);
// Copies `x` onto `dst`, a view of the same shape (any strides) into an existing buffer.
void copy_into(const Array& x, const Array& dst);
// memcpy with non-temporal stores, for large outputs that should not fill the caches
// (callers fence before handing the data on). Both compiler tiers use it.
void stream_copy(void* dst, const void* src, size_t bytes);

// The window of out.shape() at the clamped `starts` (scalar integers) of `x`.
void dynamic_slice(const Array& x, const std::vector<Array>& starts, const Array& out);
// `x` with `update` at the clamped `starts`; when `out` already is `x` (same buffer and
// layout: the executor let it take a dead operand's memory) only the window is written.
void dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts,
                          const Array& out);

// lax.gather into out (its result shape); `fill_value` is read in fill_or_drop mode only.
// With `wrap_negative`, a negative index component first gets its operand dim's size added.
void gather(const Array& x, const Array& indices, const GatherDims& dims,
            const std::vector<int64_t>& slice_sizes, IndexMode mode, bool wrap_negative,
            const Array& fill_value, const Array& out);
// lax.scatter*: out = x with the update windows combined in index order; when `out`
// already is `x` (a dead operand's buffer) only the windows are written. `wrap_negative`
// as gather's.
void scatter(ScatterOp op, const Array& x, const Array& indices, const Array& updates,
             const GatherDims& dims, IndexMode mode, bool wrap_negative, const Array& out);

// lax.sort: outs[i] = operands[i] permuted along `dimension` by a stable sort on the first
// `num_keys` operands (JAX's total order: NaNs last, -0.0 equal to 0.0).
void sort(const std::vector<Array>& operands, int64_t dimension, int num_keys,
          const std::vector<Array>& outs);

// lax.cumsum etc. along `axis` (from the end when `reverse`).
void cumulative(CumulativeOp op, const Array& x, int64_t axis, bool reverse, const Array& out);

// lax.linalg.eig into outs = {w, vl if compute_left, vr if compute_right} (see ops.h).
void eig(const Array& x, bool compute_left, bool compute_right, const std::vector<Array>& outs);
// lax.linalg.eigh into outs = {v, w}.
void eigh(const Array& x, bool lower, const std::vector<Array>& outs);
// The eigenvalues lower_index..upper_index (ascending, inclusive) of each real symmetric
// tridiagonal matrix of diagonal d [..., n] and off-diagonal e [..., n-1], found by bisection
// to the absolute tolerance tol [...] (LAPACK's default where <= 0), into outs = {w [..., k]}
// or, with compute_vectors, {w, v [..., n, k]} by inverse iteration (stebz, stein).
void eigh_tridiagonal(const Array& d, const Array& e, const Array& tol, bool compute_vectors,
                      int64_t lower_index, int64_t upper_index, const std::vector<Array>& outs);
// lax.linalg.cholesky into out: each matrix's lower factor (read from its lower
// triangle), zero above the diagonal, NaN on and below it where the matrix is not
// positive definite (as JAX on CPU).
void cholesky(const Array& x, const Array& out);

// out has shape batch + lhs free + rhs free; inputs keep their dtype, out may be wider.
void dot_general(const Array& lhs, const Array& rhs, const DotDims& dims, const Array& out);

}  // namespace tinyxla::cpu
