// Eager ops: validate, compute the result's shape and dtype, then launch the kernel on the
// operands' device. Layout ops (reshape of dense data, transpose, broadcast, slice, rev,
// bitcast of equal width) return views that share the operand's buffer and event.
#include "tinyxla/ops.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "../cpu/kernels.h"
#include "../ir/shape_inference.h"
#include "tinyxla/device.h"
#include "tinyxla/error.h"
#include "tinyxla/graph.h"

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

namespace {

// Work below this many element-operations runs on the caller when the stream is idle.
constexpr double kInlineCost = 1 << 15;

[[noreturn]] void invalid(const std::string& op, const std::string& msg) {
  throw_error(ErrorKind::InvalidArgument, op, msg);
}

int common_device(const std::string& op, const std::vector<const Array*>& xs) {
  int dev = xs.empty() ? 0 : xs[0]->device();
  for (const Array* x : xs)
    if (x->device() != dev)
      invalid(op, "operands are on different devices (" + std::to_string(dev) + " and " +
                      std::to_string(x->device()) + ")");
  return dev;
}

// Allocates the result and runs `kernel` once the inputs are ready. An input that failed
// passes its error on; a kernel that throws stores its error in the result.
template <typename Kernel>
Array launch(std::vector<Array> inputs, Shape shape, DType dtype, int dev, double cost,
             Kernel kernel) {
  auto ev = std::make_shared<Event>();
  Array out(std::move(shape), dtype, dev, ev);
  std::vector<EventPtr> deps;
  for (const Array& in : inputs)
    if (!in.is_ready()) deps.push_back(in.event());
  auto task = [inputs = std::move(inputs), out, kernel = std::move(kernel)]() {
    const EventPtr& ev = out.event();
    for (const Array& in : inputs) {
      if (in.event()->has_error()) {
        ev->set_error(in.event()->error());
        return;
      }
    }
    try {
      kernel(out);
      ev->set_ready();
    } catch (...) {
      ev->set_error(std::current_exception());
    }
  };
  device(dev).submit(std::move(deps), std::move(task), cost < kInlineCost);
  return out;
}

Array view(const Array& x, Shape shape, Strides strides, int64_t offset, DType dtype) {
  return Array(std::move(shape), std::move(strides), offset, dtype, x.device(), x.buffer(),
               x.event());
}

bool is_transcendental(UnaryOp op) {
  switch (op) {
    case UnaryOp::neg: case UnaryOp::abs: case UnaryOp::sign: case UnaryOp::floor:
    case UnaryOp::ceil: case UnaryOp::round: case UnaryOp::round_even:
    case UnaryOp::logical_not: case UnaryOp::bitwise_not: case UnaryOp::real:
    case UnaryOp::imag: case UnaryOp::conj: case UnaryOp::square: case UnaryOp::isnan:
    case UnaryOp::isinf: case UnaryOp::is_finite: case UnaryOp::signbit:
      return false;
    default:
      return true;
  }
}

infer::TypeRef type_of(const Array& x) { return {&x.shape(), x.dtype()}; }

}  // namespace

Array unary(UnaryOp op, const Array& x) {
  double cost = double(x.size()) * (is_transcendental(op) ? 8 : 1);
  return launch({x}, x.shape(), infer::unary_dtype(op, x.dtype()), x.device(), cost,
                [op, x](const Array& out) { cpu::unary(op, x, out); });
}

Array binary(BinaryOp op, const Array& x, const Array& y) {
  const char* name = op_name(op);
  int dev = common_device(name, {&x, &y});
  infer::check_same_dtypes(name, {x.dtype(), y.dtype()});
  Shape shape = infer::binary_shape(op, x.shape(), y.shape());
  DType dtype = infer::binary_dtype(op, x.dtype());
  bool heavy = op == BinaryOp::pow || op == BinaryOp::atan2 || op == BinaryOp::logaddexp ||
               op == BinaryOp::nextafter || op == BinaryOp::hypot;
  double cost = double(num_elements(shape)) * (heavy ? 8 : 1);
  return launch({x, y}, std::move(shape), dtype, dev, cost,
                [op, x, y](const Array& out) { cpu::binary(op, x, y, out); });
}

Array select_n(const Array& which, const std::vector<Array>& cases) {
  if (cases.empty()) invalid("select_n", "select_n requires at least one case");
  std::vector<const Array*> ptrs{&which};
  std::vector<infer::TypeRef> case_types;
  for (const Array& c : cases) {
    ptrs.push_back(&c);
    case_types.push_back(type_of(c));
  }
  int dev = common_device("select_n", ptrs);
  infer::select_n(type_of(which), case_types);
  std::vector<Array> inputs{which};
  inputs.insert(inputs.end(), cases.begin(), cases.end());
  return launch(inputs, cases[0].shape(), cases[0].dtype(), dev, double(cases[0].size()),
                [which, cases](const Array& out) { cpu::select_n(which, cases, out); });
}

Array clamp(const Array& lo, const Array& x, const Array& hi) {
  int dev = common_device("clamp", {&lo, &x, &hi});
  infer::clamp(type_of(lo), type_of(x), type_of(hi));
  return launch({lo, x, hi}, x.shape(), x.dtype(), dev, double(x.size()),
                [lo, x, hi](const Array& out) { cpu::clamp(lo, x, hi, out); });
}

Array convert(const Array& x, DType dtype) {
  if (dtype == x.dtype()) return x;
  return launch({x}, x.shape(), dtype, x.device(), double(x.size()),
                [x](const Array& out) { cpu::convert(x, out); });
}

Array bitcast_convert(const Array& x, DType dtype) {
  size_t from = itemsize(x.dtype()), to = itemsize(dtype);
  Shape shape = infer::bitcast_convert(x.shape(), x.dtype(), dtype);
  Array dense = contiguous(x);
  int64_t offset_bytes = dense.offset() * int64_t(from);
  return view(dense, shape, row_major_strides(shape), offset_bytes / int64_t(to), dtype);
}

Array scalar(DType dtype, const Scalar& value, int dev) {
  Array a(Shape{}, dtype, dev, Event::ready());
  value.store(dtype, a.mutable_data());
  return a;
}

Array full(const Shape& shape, DType dtype, const Scalar& value, int dev) {
  infer::full(shape);
  Array s = scalar(dtype, value, dev);
  return view(s, shape, Strides(shape.size(), 0), 0, dtype);
}

Array iota(DType dtype, const Shape& shape, int64_t dimension, int dev) {
  dimension = infer::iota(shape, dimension);
  return launch({}, shape, dtype, dev, double(num_elements(shape)),
                [dimension](const Array& out) { cpu::iota(dimension, out); });
}

Array contiguous(const Array& x) {
  if (x.is_contiguous()) return x;
  return launch({x}, x.shape(), x.dtype(), x.device(), double(x.size()),
                [x](const Array& out) { cpu::copy(x, out); });
}

Array reduce(ReduceOp op, const Array& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> canon;
  Shape shape = infer::reduce(op, x.shape(), axes, &canon);
  return launch({x}, std::move(shape), x.dtype(), x.device(), double(x.size()),
                [op, x, canon](const Array& out) { cpu::reduce(op, x, canon, out); });
}

Array argreduce(bool is_max, const Array& x, int64_t axis, DType index_dtype) {
  Shape shape = infer::argreduce(is_max, x.shape(), &axis, index_dtype);
  return launch({x}, std::move(shape), index_dtype, x.device(), double(x.size()),
                [is_max, x, axis](const Array& out) { cpu::argreduce(is_max, x, axis, out); });
}

Array reshape(const Array& x, const Shape& shape) {
  infer::reshape(x.shape(), shape);
  Array dense = contiguous(x);
  return view(dense, shape, row_major_strides(shape), dense.offset(), dense.dtype());
}

Array transpose(const Array& x, const std::vector<int64_t>& perm) {
  Shape shape = infer::transpose(x.shape(), perm);
  Strides strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = x.strides()[size_t(perm[i])];
  return view(x, shape, strides, x.offset(), x.dtype());
}

Array broadcast_in_dim(const Array& x, const Shape& shape, const std::vector<int64_t>& dims) {
  infer::broadcast_in_dim(x.shape(), shape, dims);
  Strides strides(shape.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    strides[size_t(dims[i])] = x.shape()[i] == 1 ? 0 : x.strides()[i];
  return view(x, shape, strides, x.offset(), x.dtype());
}

Array slice(const Array& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& steps) {
  Shape shape = infer::slice(x.shape(), start, limit, steps);
  size_t n = shape.size();
  Strides strides(n);
  int64_t offset = x.offset();
  for (size_t i = 0; i < n; ++i) {
    strides[i] = x.strides()[i] * (steps.empty() ? 1 : steps[i]);
    if (shape[i] > 0) offset += start[i] * x.strides()[i];
  }
  return view(x, shape, strides, offset, x.dtype());
}

Array rev(const Array& x, const std::vector<int64_t>& dims) {
  Strides strides = x.strides();
  int64_t offset = x.offset();
  for (int64_t c : infer::rev(x.shape(), dims)) {
    if (x.shape()[size_t(c)] > 0) offset += (x.shape()[size_t(c)] - 1) * strides[size_t(c)];
    strides[size_t(c)] = -strides[size_t(c)];
  }
  return view(x, x.shape(), strides, offset, x.dtype());
}

Array dynamic_slice(const Array& x, const std::vector<Array>& starts,
                    const std::vector<int64_t>& sizes) {
  std::vector<const Array*> ptrs{&x};
  std::vector<infer::TypeRef> types;
  for (const Array& s : starts) {
    ptrs.push_back(&s);
    types.push_back(type_of(s));
  }
  int dev = common_device("dynamic_slice", ptrs);
  infer::dynamic_slice(x.shape(), types, sizes);
  std::vector<Array> inputs{x};
  inputs.insert(inputs.end(), starts.begin(), starts.end());
  return launch(std::move(inputs), sizes, x.dtype(), dev, double(num_elements(sizes)),
                [x, starts](const Array& out) { cpu::dynamic_slice(x, starts, out); });
}

Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts) {
  std::vector<const Array*> ptrs{&x, &update};
  std::vector<infer::TypeRef> types;
  for (const Array& s : starts) {
    ptrs.push_back(&s);
    types.push_back(type_of(s));
  }
  int dev = common_device("dynamic_update_slice", ptrs);
  infer::dynamic_update_slice(type_of(x), type_of(update), types);
  std::vector<Array> inputs{x, update};
  inputs.insert(inputs.end(), starts.begin(), starts.end());
  return launch(std::move(inputs), x.shape(), x.dtype(), dev, double(x.size()),
                [x, update, starts](const Array& out) {
                  cpu::dynamic_update_slice(x, update, starts, out);
                });
}

Array gather(const Array& x, const Array& indices, const GatherDims& dims,
             const std::vector<int64_t>& slice_sizes, IndexMode mode, const Array& fill_value) {
  const bool fill = mode == IndexMode::fill_or_drop;
  if (fill && (!fill_value.buffer() || fill_value.ndim() != 0 || fill_value.dtype() != x.dtype()))
    invalid("gather", "fill mode needs a scalar fill value of the operand's dtype");
  std::vector<const Array*> ptrs{&x, &indices};
  if (fill) ptrs.push_back(&fill_value);
  int dev = common_device("gather", ptrs);
  Shape shape = infer::gather(type_of(x), type_of(indices), dims, slice_sizes);
  std::vector<Array> inputs{x, indices};
  if (fill) inputs.push_back(fill_value);
  return launch(std::move(inputs), shape, x.dtype(), dev, double(num_elements(shape)),
                [x, indices, dims, slice_sizes, mode, fill_value](const Array& out) {
                  cpu::gather(x, indices, dims, slice_sizes, mode, fill_value, out);
                });
}

std::vector<Array> sort(const std::vector<Array>& operands, int64_t dimension, int num_keys) {
  std::vector<const Array*> ptrs;
  std::vector<infer::TypeRef> types;
  for (const Array& x : operands) {
    ptrs.push_back(&x);
    types.push_back(type_of(x));
  }
  infer::sort(types, &dimension, num_keys);
  int dev = common_device("sort", ptrs);
  // The results share one event: the kernel writes them all at once.
  auto ev = std::make_shared<Event>();
  std::vector<Array> outs;
  for (const Array& x : operands) outs.emplace_back(x.shape(), x.dtype(), dev, ev);
  std::vector<EventPtr> deps;
  for (const Array& x : operands)
    if (!x.is_ready()) deps.push_back(x.event());
  const double n = double(operands[0].shape()[size_t(dimension)]);
  const double cost = double(operands[0].size()) * std::max(1.0, std::log2(std::max(n, 1.0)));
  auto task = [operands, outs, dimension, num_keys]() {
    const EventPtr& ev = outs[0].event();
    for (const Array& x : operands) {
      if (x.event()->has_error()) {
        ev->set_error(x.event()->error());
        return;
      }
    }
    try {
      cpu::sort(operands, dimension, num_keys, outs);
      ev->set_ready();
    } catch (...) {
      ev->set_error(std::current_exception());
    }
  };
  device(dev).submit(std::move(deps), std::move(task), cost < kInlineCost);
  return outs;
}

namespace {

// Runs `kernel(outs)` on x's device once x is ready; the results share one event.
template <typename Kernel>
std::vector<Array> launch_results(const Array& x, const std::vector<ValueType>& types,
                                  double cost, Kernel kernel) {
  auto ev = std::make_shared<Event>();
  std::vector<Array> outs;
  for (const ValueType& t : types) outs.emplace_back(t.shape, t.dtype, x.device(), ev);
  std::vector<EventPtr> deps;
  if (!x.is_ready()) deps.push_back(x.event());
  auto task = [x, outs, kernel = std::move(kernel)]() {
    const EventPtr& ev = outs[0].event();
    if (x.event()->has_error()) {
      ev->set_error(x.event()->error());
      return;
    }
    try {
      kernel(outs);
      ev->set_ready();
    } catch (...) {
      ev->set_error(std::current_exception());
    }
  };
  device(x.device()).submit(std::move(deps), std::move(task), cost < kInlineCost);
  return outs;
}

// About 10 n^3 flops a matrix for either decomposition.
double eig_cost(const Array& x) {
  const double n = x.ndim() ? double(x.shape().back()) : 0.0;
  return 10.0 * double(x.size()) * n;
}

}  // namespace

std::vector<Array> eig(const Array& x, bool compute_left, bool compute_right) {
  const DType w_dtype = infer::eig("eig", type_of(x));
  Shape w_shape(x.shape().begin(), x.shape().end() - 1);
  std::vector<ValueType> types{{w_shape, w_dtype}};
  if (compute_left) types.push_back({x.shape(), w_dtype});
  if (compute_right) types.push_back({x.shape(), w_dtype});
  return launch_results(x, types, eig_cost(x),
                        [x, compute_left, compute_right](const std::vector<Array>& outs) {
                          cpu::eig(x, compute_left, compute_right, outs);
                        });
}

std::vector<Array> eigh(const Array& x, bool lower) {
  const DType w_dtype = infer::eig("eigh", type_of(x));
  Shape w_shape(x.shape().begin(), x.shape().end() - 1);
  return launch_results(x, {{x.shape(), x.dtype()}, {w_shape, w_dtype}}, eig_cost(x),
                        [x, lower](const std::vector<Array>& outs) { cpu::eigh(x, lower, outs); });
}

Array cumulative(CumulativeOp op, const Array& x, int64_t axis, bool reverse) {
  infer::cumulative(op, type_of(x), &axis);
  return launch({x}, x.shape(), x.dtype(), x.device(), double(x.size()),
                [op, x, axis, reverse](const Array& out) {
                  cpu::cumulative(op, x, axis, reverse, out);
                });
}

Array scatter(ScatterOp op, const Array& x, const Array& indices, const Array& updates,
              const GatherDims& dims, IndexMode mode) {
  int dev = common_device("scatter", {&x, &indices, &updates});
  infer::scatter(op, type_of(x), type_of(indices), type_of(updates), dims);
  return launch({x, indices, updates}, x.shape(), x.dtype(), dev,
                double(x.size()) + double(updates.size()),
                [op, x, indices, updates, dims, mode](const Array& out) {
                  cpu::scatter(op, x, indices, updates, dims, mode, out);
                });
}

Array pad(const Array& x, const Array& padding_value, const std::vector<int64_t>& lo,
          const std::vector<int64_t>& hi, const std::vector<int64_t>& interior) {
  int dev = common_device("pad", {&x, &padding_value});
  Shape shape = infer::pad(type_of(x), type_of(padding_value), lo, hi, interior);
  double cost = double(num_elements(shape));
  return launch({x, padding_value}, std::move(shape), x.dtype(), dev, cost,
                [x, padding_value, lo, hi, interior](const Array& out) {
                  cpu::pad(x, padding_value, lo, hi, interior, out);
                });
}

Array concatenate(const std::vector<Array>& xs, int64_t dimension) {
  if (xs.empty()) invalid("concatenate", "concatenate requires at least one operand");
  std::vector<const Array*> ptrs;
  std::vector<infer::TypeRef> types;
  for (const Array& x : xs) {
    ptrs.push_back(&x);
    types.push_back(type_of(x));
  }
  int dev = common_device("concatenate", ptrs);
  Shape shape = infer::concatenate(types, &dimension);
  double cost = double(num_elements(shape));
  return launch(xs, std::move(shape), xs[0].dtype(), dev, cost,
                [xs, dimension](const Array& out) { cpu::concatenate(xs, dimension, out); });
}

Array dot_general(const Array& lhs, const Array& rhs, const DotDims& dims,
                  std::optional<DType> preferred) {
  int dev = common_device("dot_general", {&lhs, &rhs});
  double k = 1;
  Shape shape = infer::dot_general(type_of(lhs), type_of(rhs), dims, &k);
  DType out_dtype = preferred.value_or(lhs.dtype());
  double cost = double(num_elements(shape)) * std::max(k, 1.0);
  return launch({lhs, rhs}, std::move(shape), out_dtype, dev, cost,
                [lhs, rhs, dims](const Array& out) { cpu::dot_general(lhs, rhs, dims, out); });
}

}  // namespace tinyxla
