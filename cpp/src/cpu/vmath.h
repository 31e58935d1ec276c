// Internal SIMD vector math: elementwise transcendental kernels, one build per ISA, chosen at runtime.
#pragma once

#include <cstdint>

namespace tinyxla::cpu::vmath {

enum class Unary { Exp, Exp2, Log, Log2, Log10, Log1p, Expm1, Tanh, Logistic, Sin, Cos, Tan,
                   Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Sqrt, Rsqrt, Cbrt,
                   Erf, Erfc, ErfInv, Lgamma, Digamma };
enum class Binary { Atan2, Pow };

inline constexpr int kNumUnary = static_cast<int>(Unary::Digamma) + 1;
inline constexpr int kNumBinary = static_cast<int>(Binary::Pow) + 1;

// y[i] = f(x[i]). x and y may be the same array (in place) but must not partially overlap.
using UnaryF32 = void (*)(const float* x, float* y, int64_t n);
using UnaryF64 = void (*)(const double* x, double* y, int64_t n);
using BinaryF32 = void (*)(const float* a, const float* b, float* y, int64_t n);
using BinaryF64 = void (*)(const double* a, const double* b, double* y, int64_t n);

// Best kernel for the running CPU; the ISA is resolved once (cpuid) on first use.
UnaryF32 unary_f32(Unary f);
UnaryF64 unary_f64(Unary f);
BinaryF32 binary_f32(Binary f);
BinaryF64 binary_f64(Binary f);
const char* isa_name();  // "avx512", "avx2" or "generic"

// Per-ISA kernel tables, indexed by the enums. Exposed so tests can check every variant.
struct Table {
  UnaryF32 unary_f32[kNumUnary];
  UnaryF64 unary_f64[kNumUnary];
  BinaryF32 binary_f32[kNumBinary];
  BinaryF64 binary_f64[kNumBinary];
};
enum class Isa { Generic, Avx2, Avx512 };
bool isa_supported(Isa isa);  // whether this CPU can run that variant
// Whether the CPU runs a 512-bit FMA as two 256-bit halves (AMD family 19h: Zen 4, the only
// one of that family with AVX-512), so that AVX2 code has the same FMA rate.
bool avx512_in_halves();
const Table& table(Isa isa);  // callers must check isa_supported first

namespace generic { const Table& table(); }
namespace avx2 { const Table& table(); }
namespace avx512 { const Table& table(); }

}  // namespace tinyxla::cpu::vmath
