// The element semantics of tinyxla, in one place: conversion between dtypes, the max/min
// and ordering rules, and the reduce identities and combiners. The eager kernels
// (cpu/convert.cc, reduce.cc, cumulative.cc, elementwise.cc), the fused interpreter
// (fused/interpreter.cc) and the upper tier's generated C (codegen/c_emitter.cc, through
// element_semantics.inc) all take them from here. They follow JAX on XLA:CPU:
//
// - Conversion: complex to anything real takes the real part (lax.convert_element_type;
//   jnp's astype(bool) tests x != 0 itself); float to integer truncates and saturates, NaN
//   gives 0; to bool is "non-zero" (NaN is true); integers wrap modulo 2^bits; float16 and
//   bfloat16 round to nearest even from float32 (bfloat16 keeps NaN quiet).
// - Denormals (XLA:CPU runs its kernels with FTZ and DAZ, and so do the runtime's threads):
//   float32, float64 and bfloat16 arithmetic and comparisons read denormal operands as
//   zero and flush denormal results to zero; operations that only move bits keep them
//   (copies, abs, neg, select, the exact bfloat16 <-> float32 widening and the integer
//   rounding of float32 to bfloat16). float16 denormals are normal float32 numbers and are
//   kept. Conversion to bool: float32/float64 denormals are false (DAZ), bfloat16 and
//   float16 denormals true (as XLA:CPU, see element_semantics.inc).
// - max/min: a NaN wins and -0 < +0 for real floats; complex values order
//   lexicographically and a NaN does not win (XLA's comparisons are false on NaN).
//   Reductions and cumulative max/min fold with these same functions.
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tinyxla/dtype.h"

namespace tinyxla::semantics {

#define TX_SEMANTICS(...) __VA_ARGS__
#include "element_semantics.inc"
#undef TX_SEMANTICS

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <typename T>
constexpr bool kIsComplex = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

// The type an element computes in: half types widen to float32.
template <typename T>
using Compute = std::conditional_t<kIsHalf<T>, float, T>;

template <typename T>
inline Compute<T> widen(T v) {
  if constexpr (kIsHalf<T>) return to_float(v);
  else return v;
}
template <typename T, typename A>
inline T narrow(A a) {
  if constexpr (std::is_same_v<T, half>) return to_half(float(a));
  else if constexpr (std::is_same_v<T, bfloat16>) return to_bfloat16(float(a));
  else return T(a);
}

template <typename T>
inline bool is_nan(T v) {
  if constexpr (kIsComplex<T>) return v.real() != v.real() || v.imag() != v.imag();
  else if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

// ---- conversion ----

// Float to integer as XLA: truncate, saturate to the integer's range, NaN to 0.
template <typename To, typename F>
inline To float_to_int(F f) {
  constexpr To lo = std::numeric_limits<To>::min(), hi = std::numeric_limits<To>::max();
  if (f != f) return To(0);
  // F(hi) rounds to the next power of two when hi is not representable, so >= saturates.
  if (f >= F(hi)) return hi;
  if (f <= F(lo)) return lo;
  return To(f);
}

template <typename From>
inline bool to_bool(From x) {
  if constexpr (std::is_same_v<From, bfloat16>) return tx_bf16_to_bool(x.bits);
  else if constexpr (std::is_same_v<From, half>) return tx_f32_to_bool(to_float(x));
  else if constexpr (kIsComplex<From>) return to_bool(x.real());
  else if constexpr (std::is_same_v<From, float>) return tx_f32_to_bool(x);
  else if constexpr (std::is_same_v<From, double>) return tx_f64_to_bool(x);
  else return x != From(0);
}

// lax.convert_element_type of one element.
template <typename To, typename From>
inline To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    return to_bool(x);
  } else if constexpr (kIsHalf<From>) {
    return convert<To>(to_float(x));
  } else if constexpr (kIsComplex<From> && !kIsComplex<To>) {
    return convert<To>(x.real());
  } else if constexpr (kIsHalf<To>) {
    if constexpr (std::is_same_v<To, half>) return to_half(float(x));
    else return to_bfloat16(float(x));
  } else if constexpr (kIsComplex<To>) {
    if constexpr (kIsComplex<From>)
      return To(typename To::value_type(x.real()), typename To::value_type(x.imag()));
    else return To(typename To::value_type(x), 0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return float_to_int<To>(x);
  } else {
    return static_cast<To>(x);  // integers wrap modulo 2^bits; to float rounds
  }
}

// Whether convert<To, From> is C's cast `(To)x` (so generated C may write the cast):
// between integers and bool sources, and from integers, bool or real floats to a real float.
inline bool convert_is_c_cast(DType from, DType to) {
  const bool real_float = [](DType t) { return t == DType::F32 || t == DType::F64; }(to);
  const bool from_real = from == DType::F32 || from == DType::F64;
  if (real_float) return from_real || is_integral(from) || is_bool(from);
  return is_integral(to) && (is_integral(from) || is_bool(from));
}

// ---- ordering, max and min ----

// a > b: lexicographic on complex values, as lax.max orders them.
template <typename T>
inline bool greater(T a, T b) {
  if constexpr (kIsComplex<T>) return a.real() > b.real() || (a.real() == b.real() && a.imag() > b.imag());
  else return a > b;
}

template <typename T>
inline T max_of(T a, T b) {
  if constexpr (std::is_same_v<T, float>) return tx_maxf(a, b);
  else if constexpr (std::is_same_v<T, double>) return tx_max(a, b);
  else if constexpr (kIsComplex<T>) return greater(a, b) ? a : b;
  else return a > b ? a : b;
}
template <typename T>
inline T min_of(T a, T b) {
  if constexpr (std::is_same_v<T, float>) return tx_minf(a, b);
  else if constexpr (std::is_same_v<T, double>) return tx_min(a, b);
  else if constexpr (kIsComplex<T>) return greater(b, a) ? a : b;
  else return a < b ? a : b;
}

// max/min of real floats known not to be NaN, in a form that vectorises to two max (min)
// instructions and a bitwise and (or): `a > b ? a : b` is x86's maxps(a, b), which returns b
// when they are equal, so the two orders differ only on -0 against +0, where the and gives
// max(-0, +0) = +0 (the or min(-0, +0) = -0). A compare-and-select with a separate test for
// equality compiled to nine instructions a vector and left a 2x2 max_pool compute-bound.
template <typename T>
inline T merge_bits(T a, T b, bool with_and) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U ua, ub;
  std::memcpy(&ua, &a, sizeof(T));
  std::memcpy(&ub, &b, sizeof(T));
  const U merged = with_and ? (ua & ub) : (ua | ub);
  T r;
  std::memcpy(&r, &merged, sizeof(T));
  return r;
}
template <typename T>
inline T max_no_nan(T a, T b) {
  return merge_bits(a > b ? a : b, b > a ? b : a, true);
}
template <typename T>
inline T min_no_nan(T a, T b) {
  return merge_bits(a < b ? a : b, b < a ? b : a, false);
}

// ---- reductions: identity and combiner of each reduce op ----

template <typename T>
T highest() {
  if constexpr (kIsComplex<T>) {
    auto inf = std::numeric_limits<typename T::value_type>::infinity();
    return T(inf, inf);
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}
template <typename T>
T lowest() {
  if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::lowest();
  else return -highest<T>();
}

struct SumOp {
  template <typename A> static A identity() { return A(0); }
  template <typename A> static A apply(A a, A b) { return A(a + b); }
};
struct ProdOp {
  template <typename A> static A identity() { return A(1); }
  template <typename A> static A apply(A a, A b) { return A(a * b); }
};
struct MaxOp {
  template <typename A> static A identity() { return lowest<A>(); }
  template <typename A> static A apply(A a, A b) { return max_of(a, b); }
  template <typename A> static A no_nan(A a, A b) { return max_no_nan(a, b); }
};
struct MinOp {
  template <typename A> static A identity() { return highest<A>(); }
  template <typename A> static A apply(A a, A b) { return min_of(a, b); }
  template <typename A> static A no_nan(A a, A b) { return min_no_nan(a, b); }
};
struct AndOp {
  template <typename A> static A identity() {
    if constexpr (std::is_same_v<A, bool>) return true;
    else return A(~A(0));
  }
  template <typename A> static A apply(A a, A b) { return A(a & b); }
};
struct OrOp {
  template <typename A> static A identity() { return A(0); }
  template <typename A> static A apply(A a, A b) { return A(a | b); }
};
struct XorOp {
  template <typename A> static A identity() { return A(0); }
  template <typename A> static A apply(A a, A b) { return A(a ^ b); }
};

// Integer sums and products wrap: they accumulate in an unsigned type of at least 32 bits,
// so neither signed overflow nor promotion to int can happen. Others accumulate in their
// compute type.
template <typename Op, typename T>
using AccOf = std::conditional_t<(std::is_same_v<Op, SumOp> || std::is_same_v<Op, ProdOp>) &&
                                     std::is_integral_v<T> && !std::is_same_v<T, bool>,
                                 std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>,
                                 Compute<T>>;

// The bits of one element of kSize bytes, for kernels that only move elements: an unsigned
// integer (two for 16-byte complex128), not a char array. A store through a char type may
// alias any object, so the compiler reloads everything after it: x[idx] of a float32
// vector ran 3.5x slower so.
template <size_t kSize>
struct ElementBitsOf;
template <>
struct ElementBitsOf<1> { using type = uint8_t; };
template <>
struct ElementBitsOf<2> { using type = uint16_t; };
template <>
struct ElementBitsOf<4> { using type = uint32_t; };
template <>
struct ElementBitsOf<8> { using type = uint64_t; };
template <>
struct ElementBitsOf<16> { struct type { uint64_t lo, hi; }; };
template <size_t kSize>
using ElementBits = typename ElementBitsOf<kSize>::type;

}  // namespace tinyxla::semantics
