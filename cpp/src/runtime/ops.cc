// The eager ops of ops.h: each runs its kind's definition as a one-node graph (eager.h).
// Layout ops (reshape of dense data, transpose, broadcast, slice, rev, bitcast) return views
// that share the operand's buffer and event.
#include "tinyxla/ops.h"

#include <string>

#include "../cpu/kernels.h"
#include "../ops/dot.h"
#include "../ops/elementwise.h"
#include "../ops/indexing.h"
#include "../ops/layout.h"
#include "../ops/linalg.h"
#include "../ops/reductions.h"
#include "../ops/sorting.h"
#include "../ops/structural.h"
#include "eager.h"
#include "tinyxla/device.h"

namespace tinyxla {

#define TINYXLA_NAME_CASE(name) \
  case Op::name:                \
    return #name;
const char* op_name(UnaryOp op) {
  using Op = UnaryOp;
  switch (op) { TINYXLA_UNARY_OPS(TINYXLA_NAME_CASE) }
  return "?";
}
const char* op_name(BinaryOp op) {
  using Op = BinaryOp;
  switch (op) { TINYXLA_BINARY_OPS(TINYXLA_NAME_CASE) }
  return "?";
}
const char* op_name(ReduceOp op) {
  using Op = ReduceOp;
  switch (op) { TINYXLA_REDUCE_OPS(TINYXLA_NAME_CASE) }
  return "?";
}
const char* op_name(CumulativeOp op) {
  using Op = CumulativeOp;
  switch (op) { TINYXLA_CUMULATIVE_OPS(TINYXLA_NAME_CASE) }
  return "?";
}
const char* op_name(ScatterOp op) {
  using Op = ScatterOp;
  switch (op) { TINYXLA_SCATTER_OPS(TINYXLA_NAME_CASE) }
  return "?";
}
#undef TINYXLA_NAME_CASE

using namespace ops;
using runtime::run_op;

namespace {

Array run1(OpKind kind, const std::any& attrs, const std::vector<Array>& ins, int dev = 0) {
  return std::move(run_op(kind, attrs, ins, dev)[0]);
}

// The operands as run_op takes them, each copied once (a braced list copies twice).
template <class... A>
std::vector<Array> operands(const A&... xs) {
  std::vector<Array> ins;
  ins.reserve(sizeof...(xs));
  (ins.push_back(xs), ...);
  return ins;
}

std::vector<Array> with(const Array& first, const std::vector<Array>& rest) {
  std::vector<Array> all{first};
  all.insert(all.end(), rest.begin(), rest.end());
  return all;
}

}  // namespace

Array unary(UnaryOp op, const Array& x) { return run1(OpKind::unary, UnaryAttrs{op}, operands(x)); }

Array binary(BinaryOp op, const Array& x, const Array& y) {
  // JAX's eager division by a broadcast divisor (the result, as the op infers it, has more
  // elements) is XLA's product with its reciprocal.
  if (op == BinaryOp::div && has_xla_float_rewrites(y.dtype()) && x.shape() != y.shape() &&
      x.dtype() == y.dtype() && x.device() == y.device() &&
      y.size() < num_elements(infer::binary_shape("div", x.shape(), y.shape())))
    return binary(BinaryOp::mul, x,
                  run1(OpKind::binary, BinaryAttrs{BinaryOp::div},
                       operands(scalar(y.dtype(), Scalar::of_float(1), y.device()), y)));
  return run1(OpKind::binary, BinaryAttrs{op}, operands(x, y));
}

Array select_n(const Array& which, const std::vector<Array>& cases) {
  return run1(OpKind::select_n, NoAttrs{}, with(which, cases));
}

Array clamp(const Array& lo, const Array& x, const Array& hi) {
  return run1(OpKind::clamp, NoAttrs{}, operands(lo, x, hi));
}

Array convert(const Array& x, DType dtype) {
  if (dtype == x.dtype()) return x;
  return run1(OpKind::convert, ConvertAttrs{dtype}, operands(x));
}

Array bitcast_convert(const Array& x, DType dtype) {
  return run1(OpKind::bitcast_convert, ConvertAttrs{dtype}, operands(x));
}

Array scalar(DType dtype, const Scalar& value, int dev) {
  Array a(Shape{}, dtype, dev, Event::ready());
  value.store(dtype, a.mutable_data());
  return a;
}

Array full(const Shape& shape, DType dtype, const Scalar& value, int dev) {
  ops::infer::full(shape);
  return broadcast_in_dim(scalar(dtype, value, dev), shape, {});
}

Array iota(DType dtype, const Shape& shape, int64_t dimension, int dev) {
  return run1(OpKind::iota, IotaAttrs{dimension, shape, dtype}, {}, dev);
}

// A copy, not an op of the graph (the executor makes its own dense copies).
Array contiguous(const Array& x) {
  if (x.is_contiguous()) return x;
  auto ev = std::make_shared<Event>();
  Array out(x.shape(), x.dtype(), x.device(), ev);
  std::vector<EventPtr> deps;
  if (!x.is_ready()) deps.push_back(x.event());
  device(x.device()).submit(std::move(deps), [x, out]() {
    const EventPtr& ev = out.event();
    if (x.event()->has_error()) return ev->set_error(x.event()->error());
    try {
      cpu::copy(x, out);
      ev->set_ready();
    } catch (...) {
      ev->set_error(std::current_exception());
    }
  }, x.size() < (1 << 15));
  return out;
}

Array reduce(ReduceOp op, const Array& x, const std::vector<int64_t>& axes) {
  return run1(OpKind::reduce, ReduceAttrs{op, axes}, operands(x));
}

Array argreduce(bool is_max, const Array& x, int64_t axis, DType index_dtype) {
  return run1(is_max ? OpKind::argmax : OpKind::argmin, ArgReduceAttrs{axis, index_dtype},
              operands(x));
}

Array reshape(const Array& x, const Shape& shape) {
  return run1(OpKind::reshape, ReshapeAttrs{shape}, operands(x));
}

Array transpose(const Array& x, const std::vector<int64_t>& perm) {
  return run1(OpKind::transpose, TransposeAttrs{perm}, operands(x));
}

Array broadcast_in_dim(const Array& x, const Shape& shape, const std::vector<int64_t>& dims) {
  return run1(OpKind::broadcast_in_dim, BroadcastInDimAttrs{shape, dims}, operands(x));
}

Array slice(const Array& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& strides) {
  return run1(OpKind::slice, SliceAttrs{start, limit, strides}, operands(x));
}

Array rev(const Array& x, const std::vector<int64_t>& dims) {
  return run1(OpKind::rev, RevAttrs{dims}, operands(x));
}

Array pad(const Array& x, const Array& padding_value, const std::vector<int64_t>& lo,
          const std::vector<int64_t>& hi, const std::vector<int64_t>& interior) {
  return run1(OpKind::pad, PadAttrs{lo, hi, interior}, operands(x, padding_value));
}

Array concatenate(const std::vector<Array>& xs, int64_t dimension) {
  return run1(OpKind::concatenate, ConcatenateAttrs{dimension}, xs);
}

Array dynamic_slice(const Array& x, const std::vector<Array>& starts,
                    const std::vector<int64_t>& sizes) {
  return run1(OpKind::dynamic_slice, DynamicSliceAttrs{sizes}, with(x, starts));
}

Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts) {
  return run1(OpKind::dynamic_update_slice, NoAttrs{}, with(x, with(update, starts)));
}

Array gather(const Array& x, const Array& indices, const GatherDims& dims,
             const std::vector<int64_t>& slice_sizes, IndexMode mode, const Array& fill_value) {
  std::vector<Array> ins = operands(x, indices);
  if (mode == IndexMode::fill_or_drop) {
    if (!fill_value.buffer())
      throw_error(ErrorKind::InvalidArgument, "gather", "fill mode needs a fill value");
    ins.push_back(fill_value);
  }
  return run1(OpKind::gather, GatherAttrs{dims, slice_sizes, mode}, ins);
}

Array scatter(ScatterOp op, const Array& x, const Array& indices, const Array& updates,
              const GatherDims& dims, IndexMode mode) {
  return run1(OpKind::scatter, ScatterAttrs{op, dims, mode}, operands(x, indices, updates));
}

std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension, int num_keys) {
  return run_op(OpKind::sort, SortAttrs{dimension, num_keys}, operands);
}

Array cumulative(CumulativeOp op, const Array& x, int64_t axis, bool reverse) {
  return run1(OpKind::cumulative, CumulativeAttrs{op, axis, reverse}, operands(x));
}

std::vector<Array> eig(const Array& x, bool compute_left, bool compute_right) {
  return run_op(OpKind::eig, EigAttrs{compute_left, compute_right}, operands(x));
}

std::vector<Array> eigh(const Array& x, bool lower) {
  return run_op(OpKind::eigh, EighAttrs{lower}, operands(x));
}

Array dot_general(const Array& lhs, const Array& rhs, const DotDims& dims,
                  std::optional<DType> preferred) {
  return run1(OpKind::dot_general, DotGeneralAttrs{dims, preferred}, operands(lhs, rhs));
}

}  // namespace tinyxla
