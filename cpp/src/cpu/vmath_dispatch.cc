// Runtime ISA selection for the vmath kernels (cpuid via __builtin_cpu_supports, resolved once).
#include "vmath.h"

#include <cpuid.h>

namespace tinyxla::cpu::vmath {
namespace {

Isa detect() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c"))
    return Isa::Avx2;
  return Isa::Generic;
}

Isa best_isa() {
  static const Isa isa = detect();  // thread-safe one-time init; later calls are a load
  return isa;
}

const Table& best() {
  static const Table& t = table(best_isa());
  return t;
}

}  // namespace

bool isa_supported(Isa isa) {
  return static_cast<int>(isa) <= static_cast<int>(best_isa());
}

bool avx512_in_halves() {
  static const bool halves = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
    const bool amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;  // "AuthenticAMD"
    if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return false;
    const unsigned family = ((a >> 8) & 0xF) + ((a >> 20) & 0xFF);
    return family == 0x19;
  }();
  return halves;
}

const Table& table(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return avx512::table();
    case Isa::Avx2: return avx2::table();
    case Isa::Generic: break;
  }
  return generic::table();
}

UnaryF32 unary_f32(Unary f) { return best().unary_f32[static_cast<int>(f)]; }
UnaryF64 unary_f64(Unary f) { return best().unary_f64[static_cast<int>(f)]; }
BinaryF32 binary_f32(Binary f) { return best().binary_f32[static_cast<int>(f)]; }
BinaryF64 binary_f64(Binary f) { return best().binary_f64[static_cast<int>(f)]; }

const char* isa_name() {
  switch (best_isa()) {
    case Isa::Avx512: return "avx512";
    case Isa::Avx2: return "avx2";
    case Isa::Generic: break;
  }
  return "generic";
}

}  // namespace tinyxla::cpu::vmath
