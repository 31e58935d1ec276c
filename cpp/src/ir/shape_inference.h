// Validation and result types of every op, shared by the eager ops (ops.cc) and the graph
// builder, so that jit and eager accept the same programs with the same messages.
#pragma once
#include <string>
#include <vector>

#include "tinyxla/dtype.h"
#include "tinyxla/ops.h"
#include "tinyxla/shape.h"

namespace tinyxla::infer {

// An operand's type without copying its shape.
struct TypeRef {
  const Shape* shape;
  DType dtype;
};

// Elementwise ops broadcast numpy-style; binary operands need equal dtypes.
DType unary_dtype(UnaryOp op, DType t);
DType binary_dtype(BinaryOp op, DType t);
void check_same_dtypes(const std::string& op, const std::vector<DType>& dtypes);
Shape binary_shape(BinaryOp op, const Shape& x, const Shape& y);
// Checks `which` and the cases; the result has cases[0]'s type.
void select_n(const TypeRef& which, const std::vector<TypeRef>& cases);
void clamp(const TypeRef& lo, const TypeRef& x, const TypeRef& hi);
// The shape after reinterpreting `shape` of dtype `from` as `to`.
Shape bitcast_convert(const Shape& shape, DType from, DType to);
void full(const Shape& shape);
// Returns the canonical (non-negative) dimension.
int64_t iota(const Shape& shape, int64_t dimension);
// Returns the result shape; `canon` gets the sorted non-negative axes.
Shape reduce(ReduceOp op, const Shape& x, const std::vector<int64_t>& axes,
             std::vector<int64_t>* canon);
// Returns the result shape; `axis` is made non-negative.
Shape argreduce(bool is_max, const Shape& x, int64_t* axis, DType index_dtype);
// Checks a lax.sort (operands of one shape, the dimension, num_keys) and canonicalizes
// the dimension.
void sort(const std::vector<TypeRef>& xs, int64_t* dimension, int num_keys);
// Checks a cumulative op's axis (canonicalized) and dtype.
void cumulative(CumulativeOp op, const TypeRef& x, int64_t* axis);
void reshape(const Shape& x, const Shape& shape);
Shape transpose(const Shape& x, const std::vector<int64_t>& perm);
void broadcast_in_dim(const Shape& x, const Shape& shape, const std::vector<int64_t>& dims);
// `steps` may be empty (all 1).
Shape slice(const Shape& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& steps);
// Returns the canonical dims in the given order.
std::vector<int64_t> rev(const Shape& x, const std::vector<int64_t>& dims);
Shape pad(const TypeRef& x, const TypeRef& padding_value, const std::vector<int64_t>& lo,
          const std::vector<int64_t>& hi, const std::vector<int64_t>& interior);
// Checks the operand against the slice sizes and the start indices (scalar integers of
// one dtype, one per axis).
void dynamic_slice(const Shape& x, const std::vector<TypeRef>& starts,
                   const std::vector<int64_t>& sizes);
void dynamic_update_slice(const TypeRef& x, const TypeRef& update,
                          const std::vector<TypeRef>& starts);
// Checks a gather (JAX's rules) and returns its result shape.
Shape gather(const TypeRef& x, const TypeRef& indices, const GatherDims& dims,
             const std::vector<int64_t>& slice_sizes);
// Checks a scatter (JAX's rules; `dims` in gather terms, see GatherDims).
void scatter(ScatterOp op, const TypeRef& x, const TypeRef& indices, const TypeRef& updates,
             const GatherDims& dims);
// Returns the result shape; `dimension` is made non-negative.
Shape concatenate(const std::vector<TypeRef>& xs, int64_t* dimension);
// Checks lax.linalg.eig / eigh's operand (`op` names it): a batch [..., n, n] of float32,
// float64, complex64 or complex128 matrices. Returns the dtype of its eigenvalues
// (complex for eig, real for eigh).
DType eig(const char* op, const TypeRef& x);
// Returns the result shape; `k` gets the product of the contracting sizes.
Shape dot_general(const TypeRef& lhs, const TypeRef& rhs, const DotDims& dims, double* k);

}  // namespace tinyxla::infer
