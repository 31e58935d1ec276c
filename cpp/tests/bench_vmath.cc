// Throughput of the f32 vmath kernels (Gelem/s on a 4096-element, L1/L2-resident array) next to a
// scalar std:: loop. Usage: bench_vmath [avx512|avx2|generic]  (default: what dispatch picks).
#include <xmmintrin.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/vmath.h"

namespace vm = tinyxla::cpu::vmath;
using vm::Binary;
using vm::Unary;

namespace {

constexpr int kN = 4096;

struct Bench {
  const char* name;
  Unary op;
  float (*scalar)(float);  // nullptr: no std:: counterpart
  float lo, hi;
};

float logistic_s(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float rsqrt_s(float x) { return 1.0f / std::sqrt(x); }
float lgamma_s(float x) {
  int sign;
  return lgammaf_r(x, &sign);
}

const Bench kBenches[] = {
    {"exp", Unary::Exp, [](float x) { return std::exp(x); }, -80, 80},
    {"exp2", Unary::Exp2, [](float x) { return std::exp2(x); }, -100, 100},
    {"log", Unary::Log, [](float x) { return std::log(x); }, 1e-3f, 1e3f},
    {"log2", Unary::Log2, [](float x) { return std::log2(x); }, 1e-3f, 1e3f},
    {"log10", Unary::Log10, [](float x) { return std::log10(x); }, 1e-3f, 1e3f},
    {"log1p", Unary::Log1p, [](float x) { return std::log1p(x); }, -0.9f, 10},
    {"expm1", Unary::Expm1, [](float x) { return std::expm1(x); }, -10, 10},
    {"tanh", Unary::Tanh, [](float x) { return std::tanh(x); }, -5, 5},
    {"logistic", Unary::Logistic, logistic_s, -10, 10},
    {"sin", Unary::Sin, [](float x) { return std::sin(x); }, -100, 100},
    {"cos", Unary::Cos, [](float x) { return std::cos(x); }, -100, 100},
    {"tan", Unary::Tan, [](float x) { return std::tan(x); }, -100, 100},
    {"asin", Unary::Asin, [](float x) { return std::asin(x); }, -1, 1},
    {"acos", Unary::Acos, [](float x) { return std::acos(x); }, -1, 1},
    {"atan", Unary::Atan, [](float x) { return std::atan(x); }, -10, 10},
    {"sinh", Unary::Sinh, [](float x) { return std::sinh(x); }, -10, 10},
    {"cosh", Unary::Cosh, [](float x) { return std::cosh(x); }, -10, 10},
    {"asinh", Unary::Asinh, [](float x) { return std::asinh(x); }, -100, 100},
    {"acosh", Unary::Acosh, [](float x) { return std::acosh(x); }, 1, 100},
    {"atanh", Unary::Atanh, [](float x) { return std::atanh(x); }, -0.99f, 0.99f},
    {"sqrt", Unary::Sqrt, [](float x) { return std::sqrt(x); }, 0, 100},
    {"rsqrt", Unary::Rsqrt, rsqrt_s, 1e-3f, 100},
    {"cbrt", Unary::Cbrt, [](float x) { return std::cbrt(x); }, -100, 100},
    {"erf", Unary::Erf, [](float x) { return std::erf(x); }, -4, 4},
    {"erfc", Unary::Erfc, [](float x) { return std::erfc(x); }, -4, 9},
    {"erf_inv", Unary::ErfInv, nullptr, -0.999f, 0.999f},
    {"lgamma", Unary::Lgamma, lgamma_s, -10, 20},
    {"digamma", Unary::Digamma, nullptr, -10, 20},
};

// Best-of-30 Gelem/s of f over the array; short samples so that some run unshared on a busy box.
template <typename F>
double gelems(F f) {
  double best = 0;
  for (int rep = 0; rep < 30; ++rep) {
    int iters = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double sec;
    do {
      f();
      ++iters;
      sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (sec < 0.002);
    const double g = double(iters) * kN / sec * 1e-9;
    best = g > best ? g : best;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ, as the runtime's worker threads
  const vm::Table* table = &vm::table(vm::Isa::Generic);
  const char* isa = vm::isa_name();
  if (argc > 1) isa = argv[1];
  const vm::Isa isas[] = {vm::Isa::Avx512, vm::Isa::Avx2, vm::Isa::Generic};
  const char* names[] = {"avx512", "avx2", "generic"};
  bool found = false;
  for (int i = 0; i < 3; ++i)
    if (std::strcmp(isa, names[i]) == 0 && vm::isa_supported(isas[i])) table = &vm::table(isas[i]), found = true;
  if (!found) {
    std::fprintf(stderr, "ISA %s not available here\n", isa);
    return 1;
  }
  std::printf("vmath f32 throughput, %s, %d-element array, 1 thread\n", isa, kN);
  std::printf("%-9s %10s %10s %8s\n", "function", "vmath G/s", "std G/s", "speedup");
  std::mt19937 rng(1);
  std::vector<float> x(kN), y(kN), b(kN);
  for (const Bench& bench : kBenches) {
    std::uniform_real_distribution<float> uni(bench.lo, bench.hi);
    for (float& v : x) v = uni(rng);
    const vm::UnaryF32 fn = table->unary_f32[int(bench.op)];
    const double gv = gelems([&] { fn(x.data(), y.data(), kN); });
    if (bench.scalar) {
      const double gs = gelems([&] {
        for (int i = 0; i < kN; ++i) y[i] = bench.scalar(x[i]);
      });
      std::printf("%-9s %10.3f %10.3f %7.1fx\n", bench.name, gv, gs, gv / gs);
    } else {
      std::printf("%-9s %10.3f %10s %8s\n", bench.name, gv, "-", "-");
    }
  }
  // Binary functions.
  std::uniform_real_distribution<float> pos(0.01f, 100), any(-10, 10);
  for (int i = 0; i < kN; ++i) x[i] = pos(rng), b[i] = any(rng);
  const struct {
    const char* name;
    Binary op;
    float (*scalar)(float, float);
  } binaries[] = {{"atan2", Binary::Atan2, [](float p, float q) { return std::atan2(p, q); }},
                  {"pow", Binary::Pow, [](float p, float q) { return std::pow(p, q); }}};
  for (const auto& bench : binaries) {
    const vm::BinaryF32 fn = table->binary_f32[int(bench.op)];
    const double gv = gelems([&] { fn(x.data(), b.data(), y.data(), kN); });
    const double gs = gelems([&] {
      for (int i = 0; i < kN; ++i) y[i] = bench.scalar(x[i], b[i]);
    });
    std::printf("%-9s %10.3f %10.3f %7.1fx\n", bench.name, gv, gs, gv / gs);
  }
  return 0;
}
