// The C++ API's part of the bad-call table (tests/bad_calls.py holds the Python part):
// each call of the public eager API with bad operands or attributes must throw a
// tinyxla::Error whose kind is the class JAX raises for the lax call it mirrors
// (ErrorKind::TypeError for TypeError, InvalidArgument for ValueError; the Python binding
// maps them so) and whose message is "[op] " followed by JAX 0.10.2's first line for that
// call, pinned here (less the "(Tip: jnp.add is ...)" that JAX adds for Python users).
// Calls with no lax counterpart (devices, graphs, exported files, buffers, overflowing
// attributes) pin tinyxla's own message.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "test_harness.h"
#include "tinyxla/executable.h"
#include "tinyxla/export.h"
#include "tinyxla/graph.h"

using namespace tinyxla;
using tinyxla::testing::Failure;

namespace {

Array ones(DType dtype, const Shape& shape) { return full(shape, dtype, Scalar::of_int(1), 0); }
Array f32(const Shape& shape) { return ones(DType::F32, shape); }
Array i32(const Shape& shape) { return ones(DType::I32, shape); }
Array pred(const Shape& shape) { return ones(DType::Bool, shape); }

struct BadCall {
  const char* name;
  std::function<void()> call;
  ErrorKind kind;
  std::string message;  // the whole first line of what()
};

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::vector<BadCall> bad_calls() {
  using K = ErrorKind;
  const K T = K::TypeError, V = K::InvalidArgument;
  return {
      // elementwise: dtypes and shapes (JAX's lax messages)
      {"add dtypes", [] { binary(BinaryOp::add, i32({3}), f32({3})); }, T,
       "[add] lax.add requires arguments to have the same dtypes, got int32, float32."},
      {"add shapes", [] { binary(BinaryOp::add, f32({2}), f32({3})); }, T,
       "[add] add got incompatible shapes for broadcasting: (2,), (3,)."},
      {"rem shapes", [] { binary(BinaryOp::rem, i32({3}), i32({2})); }, T,
       "[rem] rem got incompatible shapes for broadcasting: (3,), (2,)."},
      {"max dtypes", [] { binary(BinaryOp::max, pred({3}), f32({3})); }, T,
       "[max] lax.max requires arguments to have the same dtypes, got bool, float32."},
      {"neg bool", [] { unary(UnaryOp::neg, pred({3})); }, T,
       "[neg] neg does not accept dtype bool. Accepted dtypes are subtypes of integer, "
       "floating, complexfloating."},
      {"sign bool", [] { unary(UnaryOp::sign, pred({3})); }, T,
       "[sign] sign does not accept dtype bool. Accepted dtypes are subtypes of integer, "
       "floating, complexfloating."},
      {"sin int32", [] { unary(UnaryOp::sin, i32({3})); }, T,
       "[sin] sin does not accept dtype int32. Accepted dtypes are subtypes of floating, "
       "complexfloating."},
      {"logistic int32", [] { unary(UnaryOp::logistic, i32({3})); }, T,
       "[logistic] logistic does not accept dtype int32. Accepted dtypes are subtypes of "
       "floating, complexfloating."},
      {"floor int32", [] { unary(UnaryOp::floor, i32({3})); }, T,
       "[floor] floor does not accept dtype int32. Accepted dtypes are subtypes of floating."},
      {"round int32", [] { unary(UnaryOp::round, i32({3})); }, T,
       "[round] round does not accept dtype int32. Accepted dtypes are subtypes of floating."},
      {"is_finite int32", [] { unary(UnaryOp::is_finite, i32({3})); }, T,
       "[is_finite] is_finite does not accept dtype int32. Accepted dtypes are subtypes of "
       "floating."},
      {"erf_inv int32", [] { unary(UnaryOp::erf_inv, i32({3})); }, T,
       "[erf_inv] erf_inv does not accept dtype int32. Accepted dtypes are subtypes of "
       "floating."},
      {"real float32", [] { unary(UnaryOp::real, f32({3})); }, T,
       "[real] real does not accept dtype float32. Accepted dtypes are subtypes of "
       "complexfloating."},
      {"not float32", [] { unary(UnaryOp::bitwise_not, f32({3})); }, T,
       "[not] not does not accept dtype float32. Accepted dtypes are subtypes of integer, "
       "bool."},
      {"population_count float32", [] { unary(UnaryOp::population_count, f32({3})); }, T,
       "[population_count] population_count does not accept dtype float32. Accepted dtypes "
       "are subtypes of integer."},
      {"clz float32", [] { unary(UnaryOp::clz, f32({3})); }, T,
       "[clz] clz does not accept dtype float32. Accepted dtypes are subtypes of integer."},
      {"and float32", [] { binary(BinaryOp::and_, f32({3}), f32({3})); }, T,
       "[and] and does not accept dtype float32 at position 0. Accepted dtypes at position 0 "
       "are subtypes of integer, bool."},
      {"shift_left float32", [] { binary(BinaryOp::shift_left, f32({3}), f32({3})); }, T,
       "[shift_left] shift_left does not accept dtype float32 at position 0. Accepted dtypes "
       "at position 0 are subtypes of integer."},
      {"atan2 int32", [] { binary(BinaryOp::atan2, i32({3}), i32({3})); }, T,
       "[atan2] atan2 does not accept dtype int32 at position 0. Accepted dtypes at position "
       "0 are subtypes of floating, complexfloating."},
      {"nextafter int32", [] { binary(BinaryOp::nextafter, i32({3}), i32({3})); }, T,
       "[nextafter] nextafter does not accept dtype int32 at position 0. Accepted dtypes at "
       "position 0 are subtypes of floating."},
      {"pow bool", [] { binary(BinaryOp::pow, pred({3}), pred({3})); }, T,
       "[pow] pow does not accept dtype bool at position 0. Accepted dtypes at position 0 "
       "are subtypes of floating, complexfloating."},
      {"complex int32", [] { binary(BinaryOp::complex, i32({3}), i32({3})); }, T,
       "[complex] complex does not accept dtype int32 at position 0. Accepted dtypes at "
       "position 0 are subtypes of float32, float64."},
      {"select_n float which", [] { select_n(f32({3}), {f32({3}), f32({3})}); }, T,
       "[select_n] select `which` must be boolean or integer type, got float32."},
      {"select_n case shapes", [] { select_n(pred({3}), {f32({3}), f32({2})}); }, T,
       "[select_n] select cases must have the same shapes, got [(3,), (2,)]."},
      {"clamp dtypes", [] { clamp(i32({}), f32({3}), f32({})); }, T,
       "[clamp] lax.clamp requires arguments to have the same dtypes, got int32, float32, "
       "float32."},
      // creation
      {"iota negative shape", [] { iota(DType::I32, {-2, 3}, 0, 0); }, T,
       "[iota] iota shape must have every element be nonnegative, got (-2, 3)."},
      {"iota dimension", [] { iota(DType::F32, {2, 3}, 2, 0); }, V,
       "[iota] iota dimension must be between 0 and len(shape), got dimension=2 for "
       "shape=(2, 3)"},
      {"full negative shape", [] { full({-1}, DType::F32, Scalar::of_float(0), 0); }, T,
       "[full] broadcast_in_dim shape must have every element be nonnegative, got (-1,)."},
      // reductions
      {"reduce axis out of bounds", [] { reduce(ReduceOp::sum, f32({2, 3}), {2}); }, V,
       "[reduce_sum] reduction axes (2,) contains out-of-bounds indices for float32[2,3]."},
      {"reduce duplicate axes", [] { reduce(ReduceOp::sum, f32({2, 3}), {1, 1}); }, V,
       "[reduce_sum] duplicate value in 'axes' of reduction: (1, 1)"},
      {"reduce_and float32", [] { reduce(ReduceOp::and_, f32({3}), {0}); }, T,
       "[reduce_and] logical reduction requires operand dtype bool or int, got float32."},
      {"reduce_xor float32", [] { reduce(ReduceOp::xor_, f32({3}), {0}); }, T,
       "[reduce_xor] logical reduction requires operand dtype bool or int, got float32."},
      {"argmax axis", [] { argreduce(true, f32({2, 3}), 2, DType::I32); }, V,
       "[argmax] Invalid axis 2 for operand shape (2, 3)"},
      {"argmax float index dtype", [] { argreduce(true, f32({2, 3}), 1, DType::F32); }, T,
       "[argmax] index_dtype must be an integer type, but got float32"},
      // layout
      {"reshape negative", [] { reshape(f32({2, 3}), {-1, 6}); }, T,
       "[reshape] reshape new_sizes must all be positive, got (-1, 6)."},
      {"transpose repeated", [] { transpose(f32({2, 3}), {0, 0}); }, T,
       "[transpose] transpose permutation isn't a permutation of operand dimensions, got "
       "permutation (0, 0) for operand shape (2, 3)."},
      {"transpose short", [] { transpose(f32({2, 3}), {0}); }, T,
       "[transpose] transpose permutation isn't a permutation of operand dimensions, got "
       "permutation (0,) for operand shape (2, 3)."},
      {"broadcast_in_dim rank", [] { broadcast_in_dim(f32({2, 3}), {2, 3}, {0}); }, T,
       "[broadcast_in_dim] broadcast_in_dim broadcast_dimensions must have length equal to "
       "operand ndim; got broadcast_dimensions (0,) for operand ndim 2."},
      {"broadcast_in_dim sizes", [] { broadcast_in_dim(f32({2}), {3}, {0}); }, T,
       "[broadcast_in_dim] broadcast_in_dim operand dimension sizes must either be 1, or be "
       "equal to their corresponding dimensions in the target broadcast shape; got operand "
       "of shape (2,), target broadcast shape (3,), broadcast_dimensions (0,) "},
      {"slice past the end", [] { slice(f32({2, 3}), {0, 0}, {3, 1}, {}); }, T,
       "[slice] slice limit_indices must be less than or equal to operand shape, got "
       "limit_indices (3, 1) for operand shape (2, 3)."},
      {"slice zero stride", [] { slice(f32({2, 3}), {0, 0}, {2, 1}, {0, 1}); }, T,
       "[slice] slice strides must be positive, got (0, 1)"},
      {"pad negative interior", [] { pad(f32({3}), f32({}), {0}, {0}, {-1}); }, V,
       "[pad] interior padding in padding_config must be nonnegative, got padding_config "
       "((0, 0, -1),)"},
      {"pad below zero", [] { pad(f32({3}), f32({}), {-4}, {0}, {0}); }, V,
       "[pad] Dimension size after padding is not at least 0, got result shape (-1,), for "
       "padding_config ((-4, 0, 0),) and operand shape (3,)"},
      {"pad config length", [] { pad(f32({3}), f32({}), {0, 0}, {0, 0}, {0, 0}); }, V,
       "[pad] length of padding_config must equal the number of axes of operand, got "
       "padding_config ((0, 0, 0), (0, 0, 0)) for operand shape (3,)"},
      {"pad dtypes", [] { pad(f32({3}), i32({}), {0}, {0}, {0}); }, T,
       "[pad] pad operand and padding_value must be same dtype: got float32 and int32."},
      {"pad overflowing interior", [] { pad(f32({3}), f32({}), {0}, {0}, {kMax}); }, V,
       "[pad] shape arithmetic overflows int64: 2 * 9223372036854775807"},
      {"pad overflowing edges", [] { pad(f32({3}), f32({}), {kMax}, {kMax}, {0}); }, V,
       "[pad] shape arithmetic overflows int64: 9223372036854775807 + 3"},
      {"concatenate ranks", [] { concatenate({f32({2, 3}), f32({3})}, 0); }, T,
       "[concatenate] Cannot concatenate arrays with different numbers of dimensions: got "
       "(2, 3), (3,)."},
      {"concatenate shapes", [] { concatenate({f32({2, 3}), f32({2, 2})}, 0); }, T,
       "[concatenate] Cannot concatenate arrays with shapes that differ in dimensions other "
       "than the one being concatenated: concatenating along dimension 0 for shapes (2, 3), "
       "(2, 2)."},
      {"concatenate dimension", [] { concatenate({f32({2, 3}), f32({2, 3})}, 2); }, T,
       "[concatenate] concatenate dimension out of bounds: dimension 2 for shapes (2, 3), "
       "(2, 3)."},
      {"concatenate dtypes", [] { concatenate({f32({2, 3}), i32({2, 3})}, 0); }, T,
       "[concatenate] lax.concatenate requires arguments to have the same dtypes, got "
       "float32, int32."},
      {"concatenate nothing", [] { concatenate({}, 0); }, V,
       "[concatenate] concatenate requires a non-empty sequences of arrays"},
      {"rev dimension", [] { rev(f32({2, 3}), {2}); }, T,
       "[rev] rev dimensions must all be less than operand ndim, got dimensions (2,) for "
       "operand ndim 2."},
      {"rev repeated", [] { rev(f32({2, 3}), {0, 0}); }, T,
       "[rev] rev dimensions must be unique, got (0, 0)."},
      {"dynamic_slice index count", [] { dynamic_slice(f32({2, 3}), {i32({})}, {1, 1}); }, V,
       "[dynamic_slice] Length of slice indices must match number of operand dimensions (1 "
       "vs (2, 3))"},
      {"dynamic_slice too large",
       [] { dynamic_slice(f32({2, 3}), {i32({}), i32({})}, {3, 1}); }, T,
       "[dynamic_slice] slice slice_sizes must be less than or equal to operand shape, got "
       "slice_sizes (3, 1) for operand shape (2, 3)."},
      {"dynamic_slice negative",
       [] { dynamic_slice(f32({2, 3}), {i32({}), i32({})}, {-1, 1}); }, T,
       "[dynamic_slice] slice slice_sizes must be greater than or equal to zero, got "
       "slice_sizes of (-1, 1)."},
      {"dynamic_update_slice larger",
       [] { dynamic_update_slice(f32({2, 3}), f32({3, 3}), {i32({}), i32({})}); }, T,
       "[dynamic_update_slice] dynamic_update_slice update shape must be smaller than "
       "operand shape, got update shape (3, 3) for operand shape (2, 3)."},
      {"dynamic_update_slice dtypes",
       [] { dynamic_update_slice(f32({2, 3}), i32({1, 1}), {i32({}), i32({})}); }, T,
       "[dynamic_update_slice] lax.dynamic_update_slice requires arguments to have the same "
       "dtypes, got float32, int32."},
      {"dynamic_update_slice rank",
       [] { dynamic_update_slice(f32({2, 3}), f32({1}), {i32({}), i32({})}); }, T,
       "[dynamic_update_slice] dynamic_update_slice update must have the same rank as "
       "operand, got update shape (1,) for operand shape (2, 3)."},
      // dot
      {"dot_general contracting sizes",
       [] { dot_general(f32({2, 3}), f32({2, 3}), DotDims{{1}, {0}, {}, {}}); }, T,
       "[dot_general] dot_general requires contracting dimensions to have the same shape, "
       "got (3,) and (2,)."},
      {"dot_general batch sizes",
       [] { dot_general(f32({2, 3, 4}), f32({3, 4, 5}), DotDims{{2}, {1}, {0}, {0}}); }, T,
       "[dot_general] dot_general requires lhs batch dimensions and rhs batch dimensions to "
       "have the same shape, got (2,) and (3,)."},
      {"dot_general dimension out of range",
       [] { dot_general(f32({2, 3}), f32({3, 4}), DotDims{{2}, {0}, {}, {}}); }, T,
       "[dot_general] dot_general requires lhs dimension numbers to be nonnegative and less "
       "than the number of axes of the lhs value, got lhs_batch of () and lhs_contracting of "
       "(2,) for lhs of rank 2"},
      // gather and scatter
      {"gather float indices",
       [] {
         gather(f32({5}), f32({1, 1}), GatherDims{{}, {0}, {0}, {}, {}}, {1}, IndexMode::clip,
                Array());
       },
       V, "[gather] indices must have an integer type"},
      {"gather slice size",
       [] {
         gather(f32({5}), i32({1, 1}), GatherDims{{}, {0}, {0}, {}, {}}, {6}, IndexMode::clip,
                Array());
       },
       T,
       "[gather] Slice size at index 0 in gather op is out of range, must be within [0, 5 + "
       "1), got 6."},
      {"gather collapsed bound",
       [] {
         gather(f32({5}), i32({1, 1}), GatherDims{{}, {0}, {0}, {}, {}}, {2}, IndexMode::clip,
                Array());
       },
       T,
       "[gather] Gather op can only collapse slice dims with bound 1, but bound is 2 for "
       "index 0 at position 0."},
      {"gather start_index_map",
       [] {
         gather(f32({5}), i32({1, 1}), GatherDims{{}, {0}, {1}, {}, {}}, {1}, IndexMode::clip,
                Array());
       },
       T, "[gather] Invalid start_index_map; domain is [0, 1), got: 0->1."},
      {"gather slice sizes length",
       [] {
         gather(f32({5}), i32({1, 1}), GatherDims{{}, {0}, {0}, {}, {}}, {1, 1},
                IndexMode::clip, Array());
       },
       T,
       "[gather] Gather op must have one slice size for every input dimension; got: "
       "len(slice_sizes)=2, input_shape.rank=1"},
      {"scatter dtypes",
       [] {
         scatter(ScatterOp::add, f32({5}), i32({1, 1}), i32({1}),
                 GatherDims{{}, {0}, {0}, {}, {}}, IndexMode::fill_or_drop);
       },
       T, "[scatter_add] lax.scatter requires arguments to have the same dtypes, got float32, int32."},
      {"scatter update bounds",
       [] {
         scatter(ScatterOp::add, f32({5}), i32({1, 1}), f32({2}),
                 GatherDims{{}, {0}, {0}, {}, {}}, IndexMode::fill_or_drop);
       },
       T,
       "[scatter_add] Bounds of the scatter dimensions of updates must be the same as the "
       "bounds of the corresponding dimensions of scatter indices. For scatter dimension 0, "
       "updates bound is 2, indices bound is 1."},
      // sort and scans
      {"sort num_keys", [] { sort({f32({3}), f32({3})}, 0, 3); }, V,
       "[sort] num_keys=3 must be between 1 and len(operand)=2"},
      {"sort shapes", [] { sort({f32({3}), f32({2})}, 0, 1); }, T,
       "[sort] Arguments to sort must have equal shapes, got: (3,) (2,)"},
      {"sort dimension", [] { sort({f32({3})}, 1, 1); }, V,
       "[sort] axis 1 is out of bounds for array of dimension 1"},
      {"cumsum axis", [] { cumulative(CumulativeOp::sum, f32({3}), 1, false); }, V,
       "[cumsum] axis 1 is out of bounds for array of shape (3,)"},
      {"cumsum negative axis", [] { cumulative(CumulativeOp::sum, f32({3}), -1, false); }, V,
       "[cumsum] XLA operations do not allow negative axes"},
      {"cumsum bool", [] { cumulative(CumulativeOp::sum, pred({3}), 0, false); }, T,
       "[cumsum] cumsum does not accept dtype bool. Accepted dtypes are subtypes of number."},
      // linear algebra
      {"eig not square", [] { eig(f32({2, 3}), false, true); }, V,
       "[eig] The input to eig must be a square matrix. Got shape (2, 3)."},
      {"eig rank 1", [] { eig(f32({3}), false, true); }, T,
       "[eig] Input 0 to eig must have rank at least 2, but got shape=(3,)"},
      // devices, buffers, graphs and exported files: tinyxla's own messages
      {"unknown device", [] { device(99); }, V, "[device] no device with id 99"},
      {"operands on two devices",
       [] {
         binary(BinaryOp::add, f32({2}), full({2}, DType::F32, Scalar::of_float(1), 1));
       },
       V, "[binary] operands are on different devices (0 and 1)"},
      {"buffer larger than memory", [] { Buffer(size_t(1) << 50); }, K::ResourceExhausted,
       "[allocate] RESOURCE_EXHAUSTED: Out of memory allocating 1125899906842624 bytes."},
      {"graph text", [] { parse_graph("%0 = frobnicate()"); }, V,
       "[parse_graph] line 1: unknown op (at 'frobnicate')"},
      {"exported file", [] { deserialize_exported("not an export"); }, V,
       "[export] not a tinyxla exported function: it does not start with 'tinyxla-export'"},
  };
}

void check(const BadCall& c) {
  try {
    c.call();
  } catch (const Error& e) {
    const std::string what = e.what();
    const std::string first = what.substr(0, what.find('\n'));
    if (e.kind() != c.kind || first != c.message)
      throw Failure{std::string(c.name) + ": got kind " + std::to_string(int(e.kind())) +
                    " '" + first + "', expected kind " + std::to_string(int(c.kind)) + " '" +
                    c.message + "'"};
    return;
  }
  throw Failure{std::string(c.name) + ": no error, expected '" + c.message + "'"};
}

}  // namespace

int main() {
  std::vector<testing::Test> tests;
  static const std::vector<BadCall> calls = bad_calls();
  for (const BadCall& c : calls) tests.push_back({c.name, [&c] { check(c); }});
  return testing::run_tests("test_bad_calls", tests);
}
