// Example: tinyxla's eager C++ API from a program built against the installed package.
// Runs add, exp, dot_general and reduce on device 0, waits on the results, checks them
// against hand-computed values and shows that bad ops are reported as tinyxla::Error.
// Build and run: see CMakeLists.txt beside this file. Exits 1 when a value is wrong.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tinyxla/tinyxla.h"

namespace tx = tinyxla;

namespace {

int failures = 0;

tx::Array from_floats(const std::vector<float>& v, const tx::Shape& shape) {
  return tx::Array::from_host(v.data(), shape, tx::DType::F32, /*device=*/0);
}

// Waits for `a` (ops return at once; the kernel runs on the device thread), prints its
// values and compares them with `want` to a relative tolerance.
void show(const char* name, const tx::Array& a, const std::vector<float>& want) {
  a.wait();
  std::vector<float> got(size_t(a.size()));
  a.copy_to_host(got.data());
  bool ok = got.size() == want.size();
  std::printf("%s %s = [", name, tx::shape_str(a.shape()).c_str());
  for (size_t i = 0; i < got.size(); ++i) {
    std::printf(i ? ", %g" : "%g", double(got[i]));
    ok = ok && std::fabs(got[i] - want[i]) <= 1e-6f * std::fabs(want[i]);
  }
  std::printf("]%s\n", ok ? "" : "  <-- MISMATCH");
  if (!ok) ++failures;
}

// Runs `op`, which must throw a tinyxla::Error of `kind`, and prints the error.
template <typename Op>
void expect_error(const char* name, tx::ErrorKind kind, Op op) {
  try {
    op();
  } catch (const tx::Error& e) {
    bool ok = e.kind() == kind;
    std::printf("%s raised tinyxla::Error: %s%s\n", name, e.what(), ok ? "" : "  <-- WRONG KIND");
    if (!ok) ++failures;
    return;
  }
  std::printf("%s did not raise  <-- MISMATCH\n", name);
  ++failures;
}

}  // namespace

int main() {
  std::printf("tinyxla devices: %d\n", tx::num_devices());

  tx::Array a = from_floats({1, 2, 3, 4, 5, 6}, {2, 3});
  tx::Array row = from_floats({10, 20, 30}, {3});
  tx::Array b = from_floats({1, 0, 0, 1, 1, 1}, {3, 2});

  // Every op returns a future at once; the four below may still be running.
  tx::Array sum = tx::binary(tx::BinaryOp::add, a, row);  // broadcasts (3,) over (2, 3)
  tx::Array e = tx::unary(tx::UnaryOp::exp, from_floats({0, 1, std::log(2.0f)}, {3}));
  tx::Array prod = tx::dot_general(a, b, tx::DotDims{{1}, {0}, {}, {}});  // a @ b
  tx::Array rows = tx::reduce(tx::ReduceOp::sum, a, {1});

  show("add", sum, {11, 22, 33, 14, 25, 36});
  show("exp", e, {1, 2.7182817f, 2});
  show("dot_general", prod, {4, 5, 10, 11});
  show("reduce_sum", rows, {6, 15});

  // Errors are thrown at the call, before anything runs, and leave the runtime usable.
  expect_error("dot_general (2,3)x(2,3)", tx::ErrorKind::TypeError,
               [&] { tx::dot_general(a, a, tx::DotDims{{1}, {0}, {}, {}}); });
  // A 1 PiB result: `full` is a broadcast view (no memory); the add must allocate it.
  tx::Array huge = tx::full({int64_t(1) << 24, int64_t(1) << 24}, tx::DType::F32,
                            tx::Scalar::of_float(1), 0);
  expect_error("add of 2^48 elements", tx::ErrorKind::ResourceExhausted,
               [&] { tx::binary(tx::BinaryOp::add, huge, huge); });

  show("after errors: add", tx::binary(tx::BinaryOp::add, rows, rows), {12, 30});

  if (failures) {
    std::printf("eager_ops: %d check(s) FAILED\n", failures);
    return 1;
  }
  std::printf("eager_ops: all checks passed\n");
  return 0;
}
