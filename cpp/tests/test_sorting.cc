// Tests of lax.sort and the cumulative ops: sort against std::stable_sort orders (NaNs
// last, -0.0 equal to 0.0), several operands and keys, validation errors, the graph
// node's text round trip and run; cumsum/cumprod/cummax/cummin/cumlogsumexp forward and
// reversed, and their graph node.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "tinyxla/compiler.h"
#include "tinyxla/graph.h"
#include "test_harness.h"
#include "tinyxla/tinyxla.h"

using namespace tinyxla;
using namespace tinyxla::testing;

namespace {

// Stable index sort along a row by NaN-last keys, as the kernel must order.
std::vector<int64_t> stable_order(const std::vector<float>& keys) {
  std::vector<int64_t> idx(keys.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = int64_t(i);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    const float x = keys[size_t(a)], y = keys[size_t(b)];
    return !std::isnan(x) && (std::isnan(y) || x < y);
  });
  return idx;
}

void test_sort_one_operand_nan_last_and_zero_order() {
  const float nan = std::nanf("");
  std::vector<float> x{3, nan, -0.0f, 1, 0.0f, -2, -0.0f, nan};
  auto out = sort({from(x, {8}, DType::F32)}, 0, 1);
  auto v = host<float>(out[0]);
  const std::vector<float> want{-2, -0.0f, 0.0f, -0.0f, 1, 3};
  for (size_t i = 0; i < want.size(); ++i) CHECK(v[i] == want[i]);
  CHECK(std::signbit(v[1]) && !std::signbit(v[2]) && std::signbit(v[3]));
  CHECK(std::isnan(v[6]) && std::isnan(v[7]));
}

void test_sort_columns_of_several_operands() {
  // 3 x 4, sorted along dimension 0 by the first operand; the second follows.
  std::vector<float> k{2, 0, 1, 5, 1, 0, 3, 4, 0, 0, 2, 3};
  std::vector<int32_t> v{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  auto out = sort({from(k, {3, 4}, DType::F32), from(v, {3, 4}, DType::I32)}, 0, 1);
  auto sk = host<float>(out[0]);
  auto sv = host<int32_t>(out[1]);
  for (int c = 0; c < 4; ++c) {
    std::vector<float> col{k[size_t(c)], k[size_t(4 + c)], k[size_t(8 + c)]};
    auto order = stable_order(col);
    for (int r = 0; r < 3; ++r) {
      CHECK(sk[size_t(r * 4 + c)] == col[size_t(order[size_t(r)])]);
      CHECK(sv[size_t(r * 4 + c)] == v[size_t(order[size_t(r)] * 4 + c)]);
    }
  }
}

void test_sort_two_keys_and_validation() {
  std::vector<int32_t> a{1, 0, 1, 0};
  std::vector<float> b{2, 3, 1, 3};
  std::vector<int32_t> i{0, 1, 2, 3};
  auto out = sort({from(a, {4}, DType::I32), from(b, {4}, DType::F32),
                   from(i, {4}, DType::I32)}, -1, 2);
  CHECK((host<int32_t>(out[2]) == std::vector<int32_t>{1, 3, 2, 0}));
  CHECK_THROWS(sort({from(a, {4}, DType::I32), from(b, {2, 2}, DType::F32)}, 0, 1),
               "Arguments to sort must have equal shapes");
  CHECK_THROWS(sort({from(a, {4}, DType::I32)}, 1, 1), "sort");
  CHECK_THROWS(sort({from(a, {4}, DType::I32)}, 0, 2), "num_keys=2 must be between 1 and len(operand)=1");
}

void test_sort_graph_text_round_trip_and_run() {
  GraphBuilder b;
  ValueId x = b.parameter({2, 5}, DType::F32);
  ValueId i = b.iota(DType::I32, {2, 5}, 1);
  ValueId s = b.sort({x, i}, 1, 1);
  b.set_outputs({s, s + 1});
  const std::string text = b.graph().to_text();
  CHECK(text.find("%2, %3 = sort(%0, %1) {dimension=1, num_keys=1} : f32[2,5]") !=
        std::string::npos);
  Graph parsed = parse_graph(text);
  CHECK(parsed.identical_to(b.graph()));
  CHECK(parsed.to_text() == text);
  auto exe = compile(b.graph());
  std::vector<float> xv{5, 1, 4, 1, 0, -1, -2, 7, 7, 3};
  auto outs = exe->run({from(xv, {2, 5}, DType::F32)});
  CHECK((host<float>(outs[0]) == std::vector<float>{0, 1, 1, 4, 5, -2, -1, 3, 7, 7}));
  CHECK((host<int32_t>(outs[1]) == std::vector<int32_t>{4, 1, 3, 2, 0, 1, 0, 4, 2, 3}));
}

void test_sort_large_rows_in_parallel() {
  const int64_t rows = 64, n = 1000;
  std::vector<float> x(size_t(rows * n));
  uint32_t state = 1;
  for (float& f : x) {
    state = state * 1664525u + 1013904223u;
    f = float(state >> 20);
  }
  auto v = host<float>(sort({from(x, {rows, n}, DType::F32)}, 1, 1)[0]);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> want(x.begin() + r * n, x.begin() + (r + 1) * n);
    std::sort(want.begin(), want.end());
    CHECK(std::equal(want.begin(), want.end(), v.begin() + r * n));
  }
}

void test_cumulative_ops_and_reverse() {
  std::vector<float> x{1, 2, 3, 4, 5, 6};  // 2 x 3
  auto sum0 = host<float>(cumulative(CumulativeOp::sum, from(x, {2, 3}, DType::F32), 0, false));
  CHECK((sum0 == std::vector<float>{1, 2, 3, 5, 7, 9}));
  auto sum1r = host<float>(cumulative(CumulativeOp::sum, from(x, {2, 3}, DType::F32), 1, true));
  CHECK((sum1r == std::vector<float>{6, 5, 3, 15, 11, 6}));
  auto prod = host<float>(cumulative(CumulativeOp::prod, from(x, {6}, DType::F32), 0, false));
  CHECK(prod[5] == 720);
  std::vector<int32_t> y{3, 1, 4, 1, 5, 9, 2, 6};
  CHECK((host<int32_t>(cumulative(CumulativeOp::max, from(y, {8}, DType::I32), 0, false)) ==
         std::vector<int32_t>{3, 3, 4, 4, 5, 9, 9, 9}));
  CHECK((host<int32_t>(cumulative(CumulativeOp::min, from(y, {8}, DType::I32), 0, true)) ==
         std::vector<int32_t>{1, 1, 1, 1, 2, 2, 2, 6}));
  auto lse = host<float>(cumulative(CumulativeOp::logsumexp, from(x, {6}, DType::F32), 0, false));
  CHECK(std::abs(lse[1] - std::log(std::exp(1.0f) + std::exp(2.0f))) < 1e-5f);
  CHECK_THROWS(cumulative(CumulativeOp::logsumexp, from(y, {8}, DType::I32), 0, false),
               "cumlogsumexp requires a floating-point operand");
  CHECK_THROWS(cumulative(CumulativeOp::sum, from(y, {8}, DType::I32), 1, false), "cumsum");
}

void test_cumulative_graph_text_round_trip_and_run() {
  GraphBuilder b;
  ValueId x = b.parameter({2, 3}, DType::F32);
  ValueId c = b.cumulative(CumulativeOp::max, x, 1, true);
  ValueId d = b.cumulative(CumulativeOp::sum, c, 0, false);
  b.set_outputs({d});
  const std::string text = b.graph().to_text();
  CHECK(text.find("cummax(%0) {dimension=1, reverse=1} : f32[2,3]") != std::string::npos);
  CHECK(text.find("cumsum(%1) {dimension=0, reverse=0}") != std::string::npos);
  Graph parsed = parse_graph(text);
  CHECK(parsed.identical_to(b.graph()));
  CHECK(parsed.to_text() == text);
  auto exe = compile(b.graph());
  auto out = host<float>(exe->run({from(std::vector<float>{1, 5, 2, 7, 0, 3}, {2, 3},
                                         DType::F32)})[0]);
  // cummax reversed along rows: [5,5,2], [7,3,3]; then cumsum down the columns.
  CHECK((out == std::vector<float>{5, 5, 2, 12, 8, 5}));
}

}  // namespace

int main() {
  const std::vector<Test> tests = {
      {"sort_one_operand_nan_last_and_zero_order", test_sort_one_operand_nan_last_and_zero_order},
      {"sort_columns_of_several_operands", test_sort_columns_of_several_operands},
      {"sort_two_keys_and_validation", test_sort_two_keys_and_validation},
      {"sort_graph_text_round_trip_and_run", test_sort_graph_text_round_trip_and_run},
      {"sort_large_rows_in_parallel", test_sort_large_rows_in_parallel},
      {"cumulative_ops_and_reverse", test_cumulative_ops_and_reverse},
      {"cumulative_graph_text_round_trip_and_run", test_cumulative_graph_text_round_trip_and_run},
  };
  return run_tests("sorting", tests);
}
