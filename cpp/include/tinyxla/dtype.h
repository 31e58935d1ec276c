// Element types of tinyxla arrays and their storage types.
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>

namespace tinyxla {

// The order is part of the Python binding (codes 0..14) and of the text form.
enum class DType : uint8_t {
  Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128
};
constexpr int kNumDTypes = 15;

size_t itemsize(DType t);
const char* dtype_name(DType t);  // numpy spelling: "float32", "bool", ...
DType dtype_from_name(const std::string& name);  // throws Error on an unknown name
inline bool is_bool(DType t) { return t == DType::Bool; }
inline bool is_signed_int(DType t) { return t >= DType::I8 && t <= DType::I64; }
inline bool is_unsigned_int(DType t) { return t >= DType::U8 && t <= DType::U64; }
inline bool is_integral(DType t) { return is_signed_int(t) || is_unsigned_int(t); }
inline bool is_floating(DType t) { return t >= DType::F16 && t <= DType::F64; }
inline bool is_complex(DType t) { return t == DType::C64 || t == DType::C128; }
inline bool is_inexact(DType t) { return is_floating(t) || is_complex(t); }
// The real type of a complex type (abs, real, imag); other types map to themselves.
DType real_dtype(DType t);

// IEEE half and bfloat16 storage; arithmetic happens in float32.
struct half {
  uint16_t bits;
};
struct bfloat16 {
  uint16_t bits;
};

inline float bits_to_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t float_to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline float to_float(bfloat16 h) { return bits_to_float(uint32_t(h.bits) << 16); }
inline bfloat16 to_bfloat16(float f) {
  uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bfloat16{uint16_t((u >> 16) | 0x40)};  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return bfloat16{uint16_t(u >> 16)};
}
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
inline float to_float(half h) { return half_to_float(h.bits); }
inline half to_half(float f) { return half{float_to_half(f)}; }

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

// Calls f(T{}) with T the storage type of `t`.
template <typename F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(bool{});
    case DType::I8: return f(int8_t{});
    case DType::I16: return f(int16_t{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
    case DType::U8: return f(uint8_t{});
    case DType::U16: return f(uint16_t{});
    case DType::U32: return f(uint32_t{});
    case DType::U64: return f(uint64_t{});
    case DType::F16: return f(half{});
    case DType::BF16: return f(bfloat16{});
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::C64: return f(complex64{});
    case DType::C128: return f(complex128{});
  }
  return f(float{});
}

}  // namespace tinyxla
