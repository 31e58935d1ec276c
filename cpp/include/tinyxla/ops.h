// Eager operations: each validates its operands, returns its result at once, and runs
// its kernel asynchronously on the device of its operands.
#pragma once
#include <optional>
#include <vector>

#include "tinyxla/array.h"

namespace tinyxla {

// Names follow the lax primitives; the X-macro lists are the one place an op is named.
#define TINYXLA_UNARY_OPS(X)                                                            \
  X(neg) X(abs) X(sign) X(floor) X(ceil) X(round) X(round_even) X(is_finite) X(exp)   \
  X(exp2) X(log) X(log2) X(log10) X(log1p) X(expm1) X(tanh) X(logistic) X(sin) X(cos) \
  X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(asinh) X(acosh) X(atanh) X(sqrt)  \
  X(rsqrt) X(cbrt) X(erf) X(erfc) X(erf_inv) X(lgamma) X(digamma) X(logical_not)      \
  X(bitwise_not) X(real) X(imag) X(conj) X(square) X(population_count) X(clz)        \
  X(isnan) X(isinf) X(signbit) X(reciprocal)

#define TINYXLA_BINARY_OPS(X)                                                         \
  X(add) X(sub) X(mul) X(div) X(rem) X(pow) X(max) X(min) X(atan2) X(and_) X(or_)     \
  X(xor_) X(shift_left) X(shift_right_arithmetic) X(shift_right_logical) X(eq) X(ne) \
  X(lt) X(le) X(gt) X(ge) X(nextafter) X(complex) X(floor_div) X(floor_mod)         \
  X(logaddexp) X(copysign) X(hypot)

#define TINYXLA_REDUCE_OPS(X) X(sum) X(prod) X(max) X(min) X(and_) X(or_) X(xor_)

// How a scatter combines an update with the element it lands on (lax.scatter,
// scatter_add, scatter_mul, scatter_min, scatter_max).
#define TINYXLA_SCATTER_OPS(X) X(set) X(add) X(mul) X(min) X(max)

// The running combination of lax.cumsum, cumprod, cummax, cummin and cumlogsumexp.
#define TINYXLA_CUMULATIVE_OPS(X) X(sum) X(prod) X(max) X(min) X(logsumexp)

#define TINYXLA_ENUM_ITEM(name) name,
enum class UnaryOp { TINYXLA_UNARY_OPS(TINYXLA_ENUM_ITEM) };
enum class BinaryOp { TINYXLA_BINARY_OPS(TINYXLA_ENUM_ITEM) };
enum class ReduceOp { TINYXLA_REDUCE_OPS(TINYXLA_ENUM_ITEM) };
enum class ScatterOp { TINYXLA_SCATTER_OPS(TINYXLA_ENUM_ITEM) };
enum class CumulativeOp { TINYXLA_CUMULATIVE_OPS(TINYXLA_ENUM_ITEM) };
#undef TINYXLA_ENUM_ITEM

const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);
const char* op_name(ReduceOp op);
const char* op_name(ScatterOp op);
const char* op_name(CumulativeOp op);

// A host scalar of any dtype (Python numbers cross the binding as one of these).
struct Scalar {
  enum class Kind { Bool, Int, UInt, Float, Complex } kind = Kind::Float;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0, imag = 0;
  static Scalar of_bool(bool v) { Scalar s; s.kind = Kind::Bool; s.i = v; return s; }
  static Scalar of_int(int64_t v) { Scalar s; s.kind = Kind::Int; s.i = v; return s; }
  static Scalar of_uint(uint64_t v) { Scalar s; s.kind = Kind::UInt; s.u = v; return s; }
  static Scalar of_float(double v) { Scalar s; s.kind = Kind::Float; s.f = v; return s; }
  static Scalar of_complex(double re, double im) {
    Scalar s; s.kind = Kind::Complex; s.f = re; s.imag = im; return s;
  }
  // Stores this value converted to `dtype` (C++ conversion, as numpy's astype) at `dst`.
  void store(DType dtype, void* dst) const;
};

struct DotDims {
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};

// lax.GatherDimensionNumbers. A scatter's ScatterDimensionNumbers map onto it field by
// field: update_window_dims -> offset_dims, inserted_window_dims -> collapsed_slice_dims,
// scatter_dims_to_operand_dims -> start_index_map, scatter_indices_batching_dims ->
// start_indices_batching_dims. Indices hold their index vectors in their last dimension.
struct GatherDims {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map,
      operand_batching_dims, start_indices_batching_dims;
};

// Windows that do not fit in the operand: `clip` clamps their start (JAX's clip and
// promise_in_bounds); `fill_or_drop` makes a gather yield its fill value for the whole
// window and a scatter skip the whole window.
enum class IndexMode { clip = 0, fill_or_drop = 1 };

// Elementwise ops take operands of equal shape, or 0-d operands, or (as numpy)
// broadcastable shapes; the result has the broadcast shape. Binary ops need equal dtypes.
Array unary(UnaryOp op, const Array& x);
Array binary(BinaryOp op, const Array& x, const Array& y);
Array select_n(const Array& which, const std::vector<Array>& cases);
Array clamp(const Array& lo, const Array& x, const Array& hi);
// lax.convert_element_type: C++ conversion, float→int saturating, NaN→0.
Array convert(const Array& x, DType dtype);
Array bitcast_convert(const Array& x, DType dtype);

Array full(const Shape& shape, DType dtype, const Scalar& value, int device);
Array scalar(DType dtype, const Scalar& value, int device);
Array iota(DType dtype, const Shape& shape, int64_t dimension, int device);
// A dense row-major copy (or x itself when already dense).
Array contiguous(const Array& x);

Array reduce(ReduceOp op, const Array& x, const std::vector<int64_t>& axes);
// lax.argmax / argmin: first index of the extreme value along `axis`; NaN counts as the max/min.
Array argreduce(bool is_max, const Array& x, int64_t axis, DType index_dtype);

Array reshape(const Array& x, const Shape& shape);
Array transpose(const Array& x, const std::vector<int64_t>& perm);
Array broadcast_in_dim(const Array& x, const Shape& shape, const std::vector<int64_t>& dims);
Array slice(const Array& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& strides);
Array pad(const Array& x, const Array& padding_value, const std::vector<int64_t>& lo,
          const std::vector<int64_t>& hi, const std::vector<int64_t>& interior);
Array concatenate(const std::vector<Array>& xs, int64_t dimension);
Array rev(const Array& x, const std::vector<int64_t>& dims);
// lax.dynamic_slice / dynamic_update_slice: `starts` are scalar integers of one dtype, read
// when the kernel runs; each is clamped to [0, dim - window size] as XLA does.
Array dynamic_slice(const Array& x, const std::vector<Array>& starts,
                    const std::vector<int64_t>& sizes);
Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts);

// lax.gather: `indices` are integers of any dtype; `fill_value` (a scalar of x's dtype) is
// used by fill_or_drop mode only and may be empty otherwise.
Array gather(const Array& x, const Array& indices, const GatherDims& dims,
             const std::vector<int64_t>& slice_sizes, IndexMode mode, const Array& fill_value);
// lax.scatter*: `x` with each update window combined into it by `op`, in index order
// (duplicates accumulate; for `set` the last one wins).
Array scatter(ScatterOp op, const Array& x, const Array& indices, const Array& updates,
              const GatherDims& dims, IndexMode mode);

// lax.sort: the operands (one shape) sorted together along `dimension` by their first
// `num_keys` operands, lexicographically and stably; NaNs last, -0.0 equal to 0.0.
std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension, int num_keys);
// lax.cumsum etc.: out[..., k, ...] combines x's elements up to k along `axis` (from the
// end when `reverse`).
Array cumulative(CumulativeOp op, const Array& x, int64_t axis, bool reverse);

// lax.linalg.eig of each matrix of x ([..., n, n], float or complex): the eigenvalues
// [..., n], then the left eigenvectors if `compute_left` and the right ones if
// `compute_right` ([..., n, n], column j for eigenvalue j, unit 2-norm), all complex. A
// matrix whose decomposition fails (or holds inf/NaN) gets NaN results.
std::vector<Array> eig(const Array& x, bool compute_left, bool compute_right);
// lax.linalg.eigh of each Hermitian matrix of x, reading its lower (or upper) triangle:
// {eigenvectors [..., n, n] (x's dtype), eigenvalues [..., n] (real, ascending)}.
std::vector<Array> eigh(const Array& x, bool lower);

Array dot_general(const Array& lhs, const Array& rhs, const DotDims& dims,
                  std::optional<DType> preferred = std::nullopt);

}  // namespace tinyxla
