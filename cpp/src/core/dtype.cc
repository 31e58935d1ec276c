// Dtype names, sizes and the software half-float conversions.
#include "tinyxla/dtype.h"

#include "tinyxla/error.h"

namespace tinyxla {

namespace {
struct Info {
  const char* name;
  size_t size;
};
constexpr Info kInfo[kNumDTypes] = {
    {"bool", 1},    {"int8", 1},     {"int16", 2},    {"int32", 4},    {"int64", 8},
    {"uint8", 1},   {"uint16", 2},   {"uint32", 4},   {"uint64", 8},   {"float16", 2},
    {"bfloat16", 2}, {"float32", 4}, {"float64", 8}, {"complex64", 8}, {"complex128", 16}};
}  // namespace

size_t itemsize(DType t) { return kInfo[static_cast<int>(t)].size; }
const char* dtype_name(DType t) { return kInfo[static_cast<int>(t)].name; }

DType dtype_from_name(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == kInfo[i].name) return static_cast<DType>(i);
  throw_error(ErrorKind::TypeError, "dtype", "unknown dtype " + name);
}

DType real_dtype(DType t) {
  if (t == DType::C64) return DType::F32;
  if (t == DType::C128) return DType::F64;
  return t;
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return bits_to_float(sign);
    // Subnormal half: scale exactly in float.
    float f = float(man) * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t float_to_half(float f) {
  uint32_t u = float_to_bits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // overflows to inf after rounding
  if (a < 0x38800000u) {                        // result is subnormal or zero
    float af = bits_to_float(a);
    // Adding 0.5 moves the value's bits into the low mantissa, rounded to nearest even.
    float r = af + 0.5f;
    return sign | uint16_t(float_to_bits(r) - float_to_bits(0.5f));
  }
  uint32_t mant_odd = (a >> 13) & 1u;
  a += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return sign | uint16_t(a >> 13);
}

}  // namespace tinyxla
