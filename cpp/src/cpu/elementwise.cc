// Elementwise kernels (unary, binary, select_n, clamp). Each op has a dense tile function
// per accepted dtype (the tables of elementwise_ops.h); the driver at the bottom feeds it
// dense, splat and strided (broadcast, transposed) operands in L1-sized tiles, on the
// worker pool for large arrays.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/element_semantics.h"
#include "cpu/elementwise_ops.h"
#include "cpu/kernels.h"
#include "cpu/strided.h"
#include "cpu/vmath.h"
#include "core/thread_pool.h"
#include "tinyxla/error.h"

namespace tinyxla::cpu {
namespace {

// ---- Dtype traits ----

template <class S>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<S, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<S, int8_t>) return DType::I8;
  else if constexpr (std::is_same_v<S, int16_t>) return DType::I16;
  else if constexpr (std::is_same_v<S, int32_t>) return DType::I32;
  else if constexpr (std::is_same_v<S, int64_t>) return DType::I64;
  else if constexpr (std::is_same_v<S, uint8_t>) return DType::U8;
  else if constexpr (std::is_same_v<S, uint16_t>) return DType::U16;
  else if constexpr (std::is_same_v<S, uint32_t>) return DType::U32;
  else if constexpr (std::is_same_v<S, uint64_t>) return DType::U64;
  else if constexpr (std::is_same_v<S, half>) return DType::F16;
  else if constexpr (std::is_same_v<S, bfloat16>) return DType::BF16;
  else if constexpr (std::is_same_v<S, float>) return DType::F32;
  else if constexpr (std::is_same_v<S, double>) return DType::F64;
  else if constexpr (std::is_same_v<S, complex64>) return DType::C64;
  else return DType::C128;
}

// Sets of dtypes an op accepts.
using Mask = uint32_t;
constexpr Mask bit(DType t) { return Mask(1) << int(t); }
constexpr Mask kBool = bit(DType::Bool);
constexpr Mask kSigned = bit(DType::I8) | bit(DType::I16) | bit(DType::I32) | bit(DType::I64);
constexpr Mask kUnsigned = bit(DType::U8) | bit(DType::U16) | bit(DType::U32) | bit(DType::U64);
constexpr Mask kInt = kSigned | kUnsigned;
constexpr Mask kFloat = bit(DType::F16) | bit(DType::BF16) | bit(DType::F32) | bit(DType::F64);
constexpr Mask kComplex = bit(DType::C64) | bit(DType::C128);
constexpr Mask kNum = kInt | kFloat | kComplex;
constexpr Mask kAll = kNum | kBool;

template <class T> constexpr bool kIsComplex = false;
template <class T> constexpr bool kIsComplex<std::complex<T>> = true;
template <class T> constexpr bool kIsFloat = std::is_floating_point_v<T>;
template <class T> constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> constexpr bool kIsSigned = kIsInt<T> && std::is_signed_v<T>;
// Integer arithmetic runs in this unsigned type so overflow wraps instead of being UB.
template <class T> using Wide = std::make_unsigned_t<decltype(T() + T())>;

// half and bfloat16 are stored as such and computed in float.
template <class S> constexpr bool kIsHalf = std::is_same_v<S, half> || std::is_same_v<S, bfloat16>;
template <class S> using Compute = std::conditional_t<kIsHalf<S>, float, S>;
template <class S>
inline Compute<S> load(S x) {
  if constexpr (kIsHalf<S>) return to_float(x);
  else return x;
}
template <class O, class R>
inline O store(R r) {
  if constexpr (std::is_same_v<O, half>) return to_half(r);
  else if constexpr (std::is_same_v<O, bfloat16>) return to_bfloat16(r);
  else return O(r);
}
// Storage type of a result computed as R from inputs stored as S (float results of half
// inputs stay half; bool and real-of-complex results are stored as computed).
template <class S, class R> using OutOf = std::conditional_t<std::is_same_v<R, Compute<S>>, S, R>;

// ---- Scalar helpers ----

template <class T>
constexpr T kInf = std::numeric_limits<T>::infinity();

// 2^(mantissa bits): adding and subtracting it rounds |x| below it to an integer.
template <class T>
constexpr T kRoundMagic = T(uint64_t(1) << (std::numeric_limits<T>::digits - 1));

// Branch-free rounding that vectorizes on SSE2 (floorf and friends are calls there).
template <class T>
inline T round_even(T x) {
  T ax = std::fabs(x);
  T r = (ax + kRoundMagic<T>) - kRoundMagic<T>;
  return std::copysign(ax < kRoundMagic<T> ? r : ax, x);
}
template <class T>
inline T floor_(T x) {
  T r = round_even(x);
  return std::copysign(r > x ? r - T(1) : r, x);
}
template <class T>
inline T ceil_(T x) {
  T r = round_even(x);
  return std::copysign(r < x ? r + T(1) : r, x);  // ceil(-0.5) is -0
}
template <class T>
inline T round_away(T x) {
  T ax = std::fabs(x);
  T t = floor_(ax);
  return std::copysign(ax - t >= T(0.5) ? t + T(1) : t, x);  // ax - t is exact
}

// std::signbit through the bits (GCC 12 crashes vectorizing std::signbit of a bfloat16 load).
template <class T>
inline bool sign_bit(T x) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U u;
  std::memcpy(&u, &x, sizeof(T));
  return (u >> (8 * sizeof(T) - 1)) != 0;
}

// XLA's complex multiply: the plain formula, without C99's NaN recovery (__mulsc3).
template <class T>
inline std::complex<T> cmul(std::complex<T> a, std::complex<T> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

template <class T>
std::complex<T> clog1p(std::complex<T> z) {
  T x = z.real(), y = z.imag();
  if (std::fabs(x) < T(0.5) && std::fabs(y) < T(0.5))  // |1+z|^2 - 1 without cancellation
    return {T(0.5) * std::log1p(x * (T(2) + x) + y * y), std::atan2(y, T(1) + x)};
  return std::log(T(1) + z);
}

template <class T>
std::complex<T> cexpm1(std::complex<T> z) {
  T x = z.real(), y = z.imag();
  if (y == 0) return {std::expm1(x), y};
  if (!std::isfinite(x) || !std::isfinite(y)) {  // C99's cexp special values, less one
    const std::complex<T> e = std::exp(z);
    return {e.real() - T(1), e.imag()};
  }
  T s = std::sin(y * T(0.5));
  // e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2)
  return {std::expm1(x) * std::cos(y) - T(2) * s * s, std::exp(x) * std::sin(y)};
}

// ---- Unary element functors: f(compute value) -> result ----

struct Neg {
  template <class T> static T f(T a) {
    if constexpr (kIsInt<T>) return T(Wide<T>(0) - Wide<T>(a));
    else return -a;
  }
};
struct Abs {
  template <class T> static auto f(T a) {
    if constexpr (kIsComplex<T>) return std::abs(a);
    else if constexpr (kIsFloat<T>) return std::fabs(a);
    else return a < 0 ? T(Wide<T>(0) - Wide<T>(a)) : a;  // abs(INT_MIN) wraps, as XLA
  }
};
struct Sign {
  template <class T> static T f(T a) {
    if constexpr (kIsComplex<T>) {
      auto r = std::abs(a);
      return a == T(0) ? T(0) : T(a.real() / r, a.imag() / r);
    } else if constexpr (kIsFloat<T>) {
      return a > 0 ? T(1) : (a < 0 ? T(-1) : a);  // keeps NaN and -0
    } else if constexpr (kIsSigned<T>) {
      return T((a > 0) - (a < 0));
    } else {
      return T(a != 0);
    }
  }
};
struct Floor { template <class T> static T f(T a) { return floor_(a); } };
struct Ceil { template <class T> static T f(T a) { return ceil_(a); } };
struct Round { template <class T> static T f(T a) { return round_away(a); } };
struct RoundEven { template <class T> static T f(T a) { return round_even(a); } };
struct IsFinite {
  template <class T> static bool f(T a) {
    if constexpr (kIsComplex<T>) return std::isfinite(a.real()) && std::isfinite(a.imag());
    else if constexpr (kIsFloat<T>) return std::fabs(a) < kInf<T>;
    else return true;
  }
};
struct IsNan {
  template <class T> static bool f(T a) {
    if constexpr (kIsComplex<T>) return a.real() != a.real() || a.imag() != a.imag();
    else if constexpr (kIsFloat<T>) return a != a;
    else return false;
  }
};
struct IsInf {
  template <class T> static bool f(T a) {
    if constexpr (kIsComplex<T>) return std::isinf(a.real()) || std::isinf(a.imag());
    else if constexpr (kIsFloat<T>) return std::fabs(a) == kInf<T>;
    else return false;
  }
};
struct Signbit {
  template <class T> static bool f(T a) {
    if constexpr (kIsFloat<T>) return sign_bit(a);
    else if constexpr (kIsSigned<T>) return a < 0;
    else return false;
  }
};
struct LogicalNot { template <class T> static bool f(T a) { return !a; } };
struct BitwiseNot {
  template <class T> static T f(T a) {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return T(~a);
  }
};
struct Real {
  template <class T> static auto f(T a) {
    if constexpr (kIsComplex<T>) return a.real();
    else return a;
  }
};
struct Imag {
  template <class T> static auto f(T a) {
    if constexpr (kIsComplex<T>) return a.imag();
    else return T(0);
  }
};
struct Conj {
  template <class T> static T f(T a) {
    if constexpr (kIsComplex<T>) return std::conj(a);
    else return a;
  }
};
struct Square {
  template <class T> static T f(T a) {
    // XLA's complex square: (x - y)(x + y) + 2xy i, with a real part of exactly 0 when
    // |x| == |y| is finite (so 1e30+1e30j squares to 0+inf j in complex64, not nan+inf j).
    if constexpr (kIsComplex<T>) {
      using R = typename T::value_type;
      const R x = a.real(), y = a.imag();
      const R re = std::fabs(x) == std::fabs(y) && std::isfinite(x) ? R(0) : (x - y) * (x + y);
      return T(re, R(2) * (x * y));
    }
    else if constexpr (kIsInt<T>) return T(Wide<T>(a) * Wide<T>(a));
    else return a * a;
  }
};
struct Reciprocal { template <class T> static T f(T a) { return T(1) / a; } };
struct PopulationCount {
  // SWAR bit count: vectorizes where popcnt is not in the baseline ISA.
  template <class T> static T f(T a) {
    using U = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;
    U x = U(std::make_unsigned_t<T>(a));
    constexpr U k1 = U(0x5555555555555555ull), k2 = U(0x3333333333333333ull);
    constexpr U k4 = U(0x0f0f0f0f0f0f0f0full), k8 = U(0x0101010101010101ull);
    x = x - ((x >> 1) & k1);
    x = (x & k2) + ((x >> 2) & k2);
    x = (x + (x >> 4)) & k4;
    return T((x * k8) >> (8 * sizeof(U) - 8));
  }
};
struct Clz {
  template <class T> static T f(T a) {
    constexpr int kBits = 8 * sizeof(T);
    auto u = std::make_unsigned_t<T>(a);
    if constexpr (kBits <= 32) return u == 0 ? T(kBits) : T(__builtin_clz(u) - (32 - kBits));
    else return u == 0 ? T(64) : T(__builtin_clzll(u));
  }
};

// Complex transcendentals (real ones go through vmath).
template <class T> using RealOf = typename T::value_type;
#define TINYXLA_COMPLEX_FN(Name, expr)                  \
  struct Name {                                         \
    template <class T> static T f(T a) { return expr; } \
  };
TINYXLA_COMPLEX_FN(CExp, std::exp(a))
TINYXLA_COMPLEX_FN(CExp2, std::exp(a * RealOf<T>(0.693147180559945309417)))
TINYXLA_COMPLEX_FN(CLog, std::log(a))
TINYXLA_COMPLEX_FN(CLog2, std::log(a) * RealOf<T>(1.44269504088896340736))
TINYXLA_COMPLEX_FN(CLog10, std::log10(a))
TINYXLA_COMPLEX_FN(CLog1p, clog1p(a))
TINYXLA_COMPLEX_FN(CExpm1, cexpm1(a))
TINYXLA_COMPLEX_FN(CTanh, std::tanh(a))
TINYXLA_COMPLEX_FN(CLogistic, T(1) / (T(1) + std::exp(-a)))
TINYXLA_COMPLEX_FN(CSin, std::sin(a))
TINYXLA_COMPLEX_FN(CCos, std::cos(a))
TINYXLA_COMPLEX_FN(CTan, std::tan(a))
TINYXLA_COMPLEX_FN(CAsin, std::asin(a))
TINYXLA_COMPLEX_FN(CAcos, std::acos(a))
TINYXLA_COMPLEX_FN(CAtan, std::atan(a))
TINYXLA_COMPLEX_FN(CSinh, std::sinh(a))
TINYXLA_COMPLEX_FN(CCosh, std::cosh(a))
TINYXLA_COMPLEX_FN(CAsinh, std::asinh(a))
TINYXLA_COMPLEX_FN(CAcosh, std::acosh(a))
TINYXLA_COMPLEX_FN(CAtanh, std::atanh(a))
TINYXLA_COMPLEX_FN(CSqrt, std::sqrt(a))
TINYXLA_COMPLEX_FN(CRsqrt, T(1) / std::sqrt(a))
#undef TINYXLA_COMPLEX_FN

// ---- Binary element functors ----

struct Add {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (kIsInt<T>) return T(Wide<T>(a) + Wide<T>(b));
    else return a + b;
  }
};
struct Sub {
  template <class T> static T f(T a, T b) {
    if constexpr (kIsInt<T>) return T(Wide<T>(a) - Wide<T>(b));
    else return a - b;
  }
};
struct Mul {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (kIsInt<T>) return T(Wide<T>(a) * Wide<T>(b));
    else if constexpr (kIsComplex<T>) return cmul(a, b);
    else return a * b;
  }
};
// Integer x/0 is -1 (all ones), INT_MIN/-1 is INT_MIN; the divisor is patched before
// dividing so no SIGFPE can happen.
struct Div {
  template <class T> static T f(T a, T b) {
    if constexpr (kIsSigned<T>) {
      bool zero = b == 0, ovf = a == std::numeric_limits<T>::min() && b == T(-1);
      T q = T(a / (zero || ovf ? T(1) : b));
      return zero ? T(-1) : q;
    } else if constexpr (kIsInt<T>) {
      T q = T(a / (b == 0 ? T(1) : b));
      return b == 0 ? T(~T(0)) : q;
    } else {
      return a / b;
    }
  }
};
// Sign of the dividend; x%0 is x, INT_MIN%-1 is 0.
struct Rem {
  template <class T> static T f(T a, T b) {
    if constexpr (kIsSigned<T>) {
      bool zero = b == 0, ovf = a == std::numeric_limits<T>::min() && b == T(-1);
      T r = T(a % (zero || ovf ? T(1) : b));
      return zero ? a : r;
    } else if constexpr (kIsInt<T>) {
      T r = T(a % (b == 0 ? T(1) : b));
      return b == 0 ? a : r;
    } else {
      return std::fmod(a, b);
    }
  }
};
// Integer and complex pow (real floats go through vmath).
struct Pow {
  template <class T> static T f(T a, T b) {
    if constexpr (kIsComplex<T>) {
      using R = typename T::value_type;
      if (a == T(0)) {
        if (b == T(0)) return T(1);
        if (b.imag() == 0 && b.real() > 0) return T(0);
        R nan = std::numeric_limits<R>::quiet_NaN();
        return T(nan, nan);
      }
      return std::exp(cmul(b, std::log(a)));
    } else {
      if constexpr (kIsSigned<T>) {
        // XLA: a negative exponent gives 0 unless the base is 1 or -1.
        if (b < 0) return a == 1 ? T(1) : a == T(-1) ? T((b & 1) ? -1 : 1) : T(0);
      }
      Wide<T> r = 1, x = Wide<T>(a);
      for (auto e = std::make_unsigned_t<T>(b); e; e >>= 1) {
        if (e & 1) r *= x;
        x *= x;
      }
      return T(r);
    }
  }
};
// core/element_semantics.h: NaN wins and -0 < +0 for real floats; complex compares
// lexicographically.
struct Max {
  template <class T> static T f(T a, T b) { return semantics::max_of(a, b); }
};
struct Min {
  template <class T> static T f(T a, T b) { return semantics::min_of(a, b); }
};
// Complex atan2 as XLA: -i log((b + i a) / sqrt(a^2 + b^2)).
struct CAtan2 {
  template <class T> static T f(T a, T b) {
    T ia(-a.imag(), a.real());
    T w = (b + ia) / std::sqrt(cmul(a, a) + cmul(b, b));
    T l = std::log(w);
    return T(l.imag(), -l.real());
  }
};
struct And { template <class T> static T f(T a, T b) { return T(a & b); } };
struct Or { template <class T> static T f(T a, T b) { return T(a | b); } };
struct Xor { template <class T> static T f(T a, T b) { return T(a ^ b); } };
// Shifts: core/element_semantics.inc's, at 32 bits for the narrower integers.
struct ShiftLeft {
  template <class T> static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if constexpr (sizeof(T) == 8) return T(semantics::tx_shl64(U(a), U(b)));
    else return T(semantics::tx_shl32(U(a), U(b), 8 * sizeof(T)));
  }
  static __m128i v32(__m128i a, __m128i count) { return _mm_sll_epi32(a, count); }
};
struct ShiftRightLogical {
  template <class T> static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if constexpr (sizeof(T) == 8) return T(semantics::tx_shrl64(U(a), U(b)));
    else return T(semantics::tx_shrl32(U(a), U(b), 8 * sizeof(T)));
  }
  static __m128i v32(__m128i a, __m128i count) { return _mm_srl_epi32(a, count); }
};
struct ShiftRightArithmetic {
  template <class T> static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    using S = std::make_signed_t<T>;
    if constexpr (sizeof(T) == 8) return T(semantics::tx_shra64(S(a), U(b)));
    else return T(semantics::tx_shra32(S(a), U(b), 8 * sizeof(T)));
  }
  static __m128i v32(__m128i a, __m128i count) { return _mm_sra_epi32(a, count); }
};
struct Eq { template <class T> static bool f(T a, T b) { return a == b; } };
struct Ne { template <class T> static bool f(T a, T b) { return a != b; } };
struct Lt { template <class T> static bool f(T a, T b) { return a < b; } };
struct Le { template <class T> static bool f(T a, T b) { return a <= b; } };
struct Gt { template <class T> static bool f(T a, T b) { return a > b; } };
struct Ge { template <class T> static bool f(T a, T b) { return a >= b; } };
struct MakeComplex {
  template <class T> static std::complex<T> f(T a, T b) { return {a, b}; }
};
// jnp.floor_divide: Python semantics from XLA's div (so x//0 follows div's convention).
struct FloorDiv {
  template <class T> static T f(T a, T b) {
    if constexpr (kIsSigned<T>) {
      T q = Div::f(a, b);
      bool adjust = Sign::f(a) != Sign::f(b) && Rem::f(a, b) != 0;
      return adjust ? T(Wide<T>(q) - 1) : q;
    } else if constexpr (kIsInt<T>) {
      return Div::f(a, b);
    } else {
      T mod = std::fmod(a, b);
      T div = (b == 0 ? a : a - mod) / b;
      bool adjust = mod != 0 && Sign::f(b) != Sign::f(mod);
      return round_away(adjust ? div - T(1) : div);
    }
  }
};
// jnp.remainder: sign of the divisor; x%0 is 0 for integers.
struct FloorMod {
  template <class T> static T f(T a, T b) {
    if constexpr (kIsSigned<T>) {
      T d = b == 0 ? T(1) : b;
      T t = Rem::f(a, d);
      return (t < 0) != (d < 0) && t != 0 ? T(Wide<T>(t) + Wide<T>(d)) : t;
    } else if constexpr (kIsInt<T>) {
      return T(a % (b == 0 ? T(1) : b));
    } else {
      T t = std::fmod(a, b);
      return (t < 0) != (b < 0) && t != 0 ? t + b : t;
    }
  }
};
struct Copysign { template <class T> static T f(T a, T b) { return std::copysign(a, b); } };
struct Hypot {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_same_v<T, float>) {
      // Exact enough in double, and vectorizes; inf wins over NaN.
      float r = float(std::sqrt(double(a) * double(a) + double(b) * double(b)));
      return std::fabs(a) == kInf<float> || std::fabs(b) == kInf<float> ? kInf<float> : r;
    } else {
      return std::hypot(a, b);
    }
  }
};

// ---- Dense tile functions ----

template <class Op, class S>
void unary_tile(const void* in, void* out, int64_t n) {
  using O = OutOf<S, decltype(Op::f(Compute<S>()))>;
  const S* __restrict a = static_cast<const S*>(in);
  O* __restrict o = static_cast<O*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = store<O>(Op::f(load(a[i])));
}

template <class Op, class S>
void binary_tile(const void* in0, const void* in1, void* out, int64_t n) {
  using O = OutOf<S, decltype(Op::f(Compute<S>(), Compute<S>()))>;
  const S* __restrict a = static_cast<const S*>(in0);
  const S* __restrict b = static_cast<const S*>(in1);
  O* __restrict o = static_cast<O*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = store<O>(Op::f(load(a[i]), load(b[i])));
}

// A shift by one amount for the whole tile (a constant operand, as in threefry's rotations):
// the baseline ISA has no per-lane variable shifts, so the generic tile runs scalar (a
// compare and a branch per element), while one amount shifts four 32-bit lanes at a time.
// Checking that the amounts agree costs one vectorized pass. 32-bit types only.
template <class Op, class S>
void shift_tile(const void* in0, const void* in1, void* out, int64_t n) {
  static_assert(sizeof(S) == 4);
  const S* __restrict a = static_cast<const S*>(in0);
  const S* __restrict b = static_cast<const S*>(in1);
  S* __restrict o = static_cast<S*>(out);
  const S s = n > 0 ? b[0] : S(0);
  const __m128i amount = _mm_set1_epi32(int(s));
  __m128i same = _mm_set1_epi32(-1);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    same = _mm_and_si128(same, _mm_cmpeq_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)), amount));
  bool uniform = _mm_movemask_epi8(same) == 0xFFFF;
  for (; i < n; ++i) uniform &= b[i] == s;
  if (!uniform || uint32_t(s) >= 32) return binary_tile<Op, S>(in0, in1, out, n);
  const __m128i count = _mm_cvtsi32_si128(int(s));
  for (i = 0; i + 4 <= n; i += 4) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i), Op::v32(v, count));
  }
  for (; i < n; ++i) o[i] = Op::f(a[i], s);
}

// Tiles that call out to vmath or convert half data run in sub-tiles of this many elements
// held on the stack.
constexpr int64_t kSub = 256;

template <class T, vmath::Unary U>
void vm_unary(const void* in, void* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    static const vmath::UnaryF32 fn = vmath::unary_f32(U);
    fn(static_cast<const float*>(in), static_cast<float*>(out), n);
  } else {
    static const vmath::UnaryF64 fn = vmath::unary_f64(U);
    fn(static_cast<const double*>(in), static_cast<double*>(out), n);
  }
}

template <class T, vmath::Binary B>
void vm_binary(const void* in0, const void* in1, void* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    static const vmath::BinaryF32 fn = vmath::binary_f32(B);
    fn(static_cast<const float*>(in0), static_cast<const float*>(in1), static_cast<float*>(out), n);
  } else {
    static const vmath::BinaryF64 fn = vmath::binary_f64(B);
    fn(static_cast<const double*>(in0), static_cast<const double*>(in1),
       static_cast<double*>(out), n);
  }
}

// Runs a float32 tile function on half or bfloat16 data.
template <class S, UnaryTileFn F>
void via_f32(const void* in, void* out, int64_t n) {
  const S* a = static_cast<const S*>(in);
  S* o = static_cast<S*>(out);
  float x[kSub], y[kSub];
  for (int64_t i = 0; i < n; i += kSub) {
    int64_t m = std::min(kSub, n - i);
    for (int64_t j = 0; j < m; ++j) x[j] = to_float(a[i + j]);
    F(x, y, m);
    for (int64_t j = 0; j < m; ++j) o[i + j] = store<S>(y[j]);
  }
}

template <class S, BinaryTileFn F>
void via_f32(const void* in0, const void* in1, void* out, int64_t n) {
  const S* a = static_cast<const S*>(in0);
  const S* b = static_cast<const S*>(in1);
  S* o = static_cast<S*>(out);
  float x[kSub], y[kSub], z[kSub];
  for (int64_t i = 0; i < n; i += kSub) {
    int64_t m = std::min(kSub, n - i);
    for (int64_t j = 0; j < m; ++j) {
      x[j] = to_float(a[i + j]);
      y[j] = to_float(b[i + j]);
    }
    F(x, y, z, m);
    for (int64_t j = 0; j < m; ++j) o[i + j] = store<S>(z[j]);
  }
}

// max(a, b) + log1p(exp(-|a - b|)), as jnp.logaddexp; a NaN difference (NaN inputs or
// infinities of one sign) gives a + b.
template <class T>
void logaddexp_tile(const void* in0, const void* in1, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in0);
  const T* b = static_cast<const T*>(in1);
  T* o = static_cast<T*>(out);
  T d[kSub], t[kSub], u[kSub];
  for (int64_t i = 0; i < n; i += kSub) {
    int64_t m = std::min(kSub, n - i);
    for (int64_t j = 0; j < m; ++j) {
      d[j] = a[i + j] - b[i + j];
      t[j] = -std::fabs(d[j]);
    }
    vm_unary<T, vmath::Unary::Exp>(t, u, m);
    vm_unary<T, vmath::Unary::Log1p>(u, t, m);
    for (int64_t j = 0; j < m; ++j) {
      T x = a[i + j], y = b[i + j];
      o[i + j] = d[j] != d[j] ? x + y : (x > y ? x : y) + t[j];
    }
  }
}

// Steps one ulp of the storage format towards b (so half and bfloat16 step in their own
// precision).
template <class S>
void nextafter_tile(const void* in0, const void* in1, void* out, int64_t n) {
  using Bits = std::conditional_t<sizeof(S) == 2, uint16_t,
                                  std::conditional_t<sizeof(S) == 4, uint32_t, uint64_t>>;
  constexpr Bits kSignBit = Bits(Bits(1) << (8 * sizeof(S) - 1));
  const S* a = static_cast<const S*>(in0);
  const S* b = static_cast<const S*>(in1);
  S* o = static_cast<S*>(out);
  for (int64_t i = 0; i < n; ++i) {
    auto x = load(a[i]), y = load(b[i]);
    Bits ux, uy;
    std::memcpy(&ux, &a[i], sizeof(S));
    std::memcpy(&uy, &b[i], sizeof(S));
    Bits r = (x < y) == (x > 0) ? Bits(ux + 1) : Bits(ux - 1);
    r = x == 0 ? Bits((uy & kSignBit) | 1) : r;
    r = x == y ? uy : r;
    std::memcpy(&o[i], &r, sizeof(S));
    if (x != x || y != y) o[i] = store<S>(x + y);
  }
}

struct Bytes16 {
  uint64_t lo, hi;
};

// out = cases[which]; blends through bit masks, which vectorize where ternaries on loads
// do not. W is uint8_t for bool selectors.
template <class W, class E>
void select_tile(const void* which, const void* const* cases, int64_t k, void* out, int64_t n) {
  const W* __restrict w = static_cast<const W*>(which);
  E* __restrict o = static_cast<E*>(out);
  const E* __restrict c0 = static_cast<const E*>(cases[0]);
  if constexpr (!std::is_same_v<E, Bytes16>) {
    if (k == 2) {  // one pass: the common where(pred, x, y)
      const E* __restrict c1 = static_cast<const E*>(cases[1]);
      for (int64_t i = 0; i < n; ++i) {
        E m = E(E(0) - E(w[i] == W(1)));
        o[i] = E((c1[i] & m) | (c0[i] & E(~m)));
      }
      return;
    }
  }
  std::copy_n(c0, n, o);
  for (int64_t c = 1; c < k; ++c) {
    if (int64_t(W(c)) != c) break;  // not representable in W: never selected
    const W wc = W(c);
    const E* __restrict cc = static_cast<const E*>(cases[c]);
    if constexpr (std::is_same_v<E, Bytes16>) {
      for (int64_t i = 0; i < n; ++i) o[i] = w[i] == wc ? cc[i] : o[i];
    } else {
      for (int64_t i = 0; i < n; ++i) {
        E m = E(E(0) - E(w[i] == wc));
        o[i] = E((cc[i] & m) | (o[i] & E(~m)));
      }
    }
  }
}

template <class S>
void clamp_tile(const void* lo, const void* x, const void* hi, void* out, int64_t n) {
  const S* __restrict l = static_cast<const S*>(lo);
  const S* __restrict v = static_cast<const S*>(x);
  const S* __restrict h = static_cast<const S*>(hi);
  S* __restrict o = static_cast<S*>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = store<S>(Min::f(Max::f(load(v[i]), load(l[i])), load(h[i])));
}

// ---- Tables ----

// The element-functor tile of Op for dtype t, when t is in M; only those are instantiated.
template <class Op, Mask M>
UnaryTileFn elem1(DType t) {
  return visit_dtype(t, [](auto s) -> UnaryTileFn {
    using S = decltype(s);
    if constexpr ((M & bit(dtype_of<S>())) != 0) return &unary_tile<Op, S>;
    else return nullptr;
  });
}
template <class Op, Mask M>
BinaryTileFn elem2(DType t) {
  return visit_dtype(t, [](auto s) -> BinaryTileFn {
    using S = decltype(s);
    if constexpr ((M & bit(dtype_of<S>())) != 0) return &binary_tile<Op, S>;
    else return nullptr;
  });
}
template <class Op>
BinaryTileFn shift2(DType t) {
  return visit_dtype(t, [](auto s) -> BinaryTileFn {
    using S = decltype(s);
    if constexpr ((kInt & bit(dtype_of<S>())) == 0) return nullptr;
    else if constexpr (sizeof(S) == 4) return &shift_tile<Op, S>;
    else return &binary_tile<Op, S>;
  });
}

// A transcendental: vmath for real floats (half via float32), Cplx per element for complex
// (void: complex not accepted).
template <vmath::Unary U, class Cplx = void>
UnaryTileFn transcendental(DType t) {
  switch (t) {
    case DType::F16: return &via_f32<half, &vm_unary<float, U>>;
    case DType::BF16: return &via_f32<bfloat16, &vm_unary<float, U>>;
    case DType::F32: return &vm_unary<float, U>;
    case DType::F64: return &vm_unary<double, U>;
    case DType::C64:
    case DType::C128:
      if constexpr (!std::is_void_v<Cplx>) return elem1<Cplx, kComplex>(t);
      return nullptr;
    default: return nullptr;
  }
}

// A real-float binary op from its float and double tiles, with half and bfloat16 through
// the float one.
template <BinaryTileFn F32, BinaryTileFn F64>
BinaryTileFn real_float2(DType t) {
  switch (t) {
    case DType::F16: return &via_f32<half, F32>;
    case DType::BF16: return &via_f32<bfloat16, F32>;
    case DType::F32: return F32;
    case DType::F64: return F64;
    default: return nullptr;
  }
}

[[noreturn]] void reject(const char* op, DType t) {
  throw_error(ErrorKind::TypeError, op,
              std::string(op) + " does not accept dtype " + dtype_name(t));
}

}  // namespace

UnaryTileFn unary_tile_fn(UnaryOp op, DType t) {
  using Op = UnaryOp;
  using U = vmath::Unary;
  switch (op) {
    case Op::neg: return elem1<Neg, kNum>(t);
    case Op::abs: return elem1<Abs, kSigned | kFloat | kComplex>(t);
    case Op::sign: return elem1<Sign, kNum>(t);
    case Op::floor: return elem1<Floor, kFloat>(t);
    case Op::ceil: return elem1<Ceil, kFloat>(t);
    case Op::round: return elem1<Round, kFloat>(t);
    case Op::round_even: return elem1<RoundEven, kFloat>(t);
    case Op::is_finite: return elem1<IsFinite, kAll>(t);
    case Op::exp: return transcendental<U::Exp, CExp>(t);
    case Op::exp2: return transcendental<U::Exp2, CExp2>(t);
    case Op::log: return transcendental<U::Log, CLog>(t);
    case Op::log2: return transcendental<U::Log2, CLog2>(t);
    case Op::log10: return transcendental<U::Log10, CLog10>(t);
    case Op::log1p: return transcendental<U::Log1p, CLog1p>(t);
    case Op::expm1: return transcendental<U::Expm1, CExpm1>(t);
    case Op::tanh: return transcendental<U::Tanh, CTanh>(t);
    case Op::logistic: return transcendental<U::Logistic, CLogistic>(t);
    case Op::sin: return transcendental<U::Sin, CSin>(t);
    case Op::cos: return transcendental<U::Cos, CCos>(t);
    case Op::tan: return transcendental<U::Tan, CTan>(t);
    case Op::asin: return transcendental<U::Asin, CAsin>(t);
    case Op::acos: return transcendental<U::Acos, CAcos>(t);
    case Op::atan: return transcendental<U::Atan, CAtan>(t);
    case Op::sinh: return transcendental<U::Sinh, CSinh>(t);
    case Op::cosh: return transcendental<U::Cosh, CCosh>(t);
    case Op::asinh: return transcendental<U::Asinh, CAsinh>(t);
    case Op::acosh: return transcendental<U::Acosh, CAcosh>(t);
    case Op::atanh: return transcendental<U::Atanh, CAtanh>(t);
    case Op::sqrt: return transcendental<U::Sqrt, CSqrt>(t);
    case Op::rsqrt: return transcendental<U::Rsqrt, CRsqrt>(t);
    case Op::cbrt: return transcendental<U::Cbrt>(t);
    case Op::erf: return transcendental<U::Erf>(t);
    case Op::erfc: return transcendental<U::Erfc>(t);
    case Op::erf_inv: return transcendental<U::ErfInv>(t);
    case Op::lgamma: return transcendental<U::Lgamma>(t);
    case Op::digamma: return transcendental<U::Digamma>(t);
    case Op::logical_not: return elem1<LogicalNot, kBool>(t);
    case Op::bitwise_not: return elem1<BitwiseNot, kBool | kInt>(t);
    case Op::real: return elem1<Real, kAll>(t);
    case Op::imag: return elem1<Imag, kAll>(t);
    case Op::conj: return elem1<Conj, kAll>(t);
    case Op::square: return elem1<Square, kNum>(t);
    case Op::population_count: return elem1<PopulationCount, kInt>(t);
    case Op::clz: return elem1<Clz, kInt>(t);
    case Op::isnan: return elem1<IsNan, kAll>(t);
    case Op::isinf: return elem1<IsInf, kAll>(t);
    case Op::signbit: return elem1<Signbit, kBool | kInt | kFloat>(t);
    case Op::reciprocal: return elem1<Reciprocal, kFloat | kComplex>(t);
  }
  return nullptr;
}

BinaryTileFn binary_tile_fn(BinaryOp op, DType t) {
  using Op = BinaryOp;
  switch (op) {
    case Op::add: return elem2<Add, kAll>(t);
    case Op::sub: return elem2<Sub, kNum>(t);
    case Op::mul: return elem2<Mul, kAll>(t);
    case Op::div: return elem2<Div, kNum>(t);
    case Op::rem: return elem2<Rem, kInt | kFloat>(t);
    case Op::pow:
      if (!is_floating(t)) return elem2<Pow, kInt | kComplex>(t);
      return real_float2<&vm_binary<float, vmath::Binary::Pow>,
                         &vm_binary<double, vmath::Binary::Pow>>(t);
    case Op::max: return elem2<Max, kAll>(t);
    case Op::min: return elem2<Min, kAll>(t);
    case Op::atan2:
      if (is_complex(t)) return elem2<CAtan2, kComplex>(t);
      return real_float2<&vm_binary<float, vmath::Binary::Atan2>,
                         &vm_binary<double, vmath::Binary::Atan2>>(t);
    case Op::and_: return elem2<And, kBool | kInt>(t);
    case Op::or_: return elem2<Or, kBool | kInt>(t);
    case Op::xor_: return elem2<Xor, kBool | kInt>(t);
    case Op::shift_left: return shift2<ShiftLeft>(t);
    case Op::shift_right_arithmetic: return shift2<ShiftRightArithmetic>(t);
    case Op::shift_right_logical: return shift2<ShiftRightLogical>(t);
    case Op::eq: return elem2<Eq, kAll>(t);
    case Op::ne: return elem2<Ne, kAll>(t);
    case Op::lt: return elem2<Lt, kBool | kInt | kFloat>(t);
    case Op::le: return elem2<Le, kBool | kInt | kFloat>(t);
    case Op::gt: return elem2<Gt, kBool | kInt | kFloat>(t);
    case Op::ge: return elem2<Ge, kBool | kInt | kFloat>(t);
    case Op::nextafter:
      switch (t) {
        case DType::F16: return &nextafter_tile<half>;
        case DType::BF16: return &nextafter_tile<bfloat16>;
        case DType::F32: return &nextafter_tile<float>;
        case DType::F64: return &nextafter_tile<double>;
        default: return nullptr;
      }
    case Op::complex: return elem2<MakeComplex, bit(DType::F32) | bit(DType::F64)>(t);
    case Op::floor_div: return elem2<FloorDiv, kInt | kFloat>(t);
    case Op::floor_mod: return elem2<FloorMod, kInt | kFloat>(t);
    case Op::logaddexp: return real_float2<&logaddexp_tile<float>, &logaddexp_tile<double>>(t);
    case Op::copysign: return elem2<Copysign, kFloat>(t);
    case Op::hypot: return elem2<Hypot, kFloat>(t);
  }
  return nullptr;
}

ClampTileFn clamp_tile_fn(DType t) {
  return visit_dtype(t, [](auto s) -> ClampTileFn { return &clamp_tile<decltype(s)>; });
}

SelectTileFn select_tile_fn(DType which, DType cases) {
  if (which != DType::Bool && which != DType::I32) return nullptr;
  auto pick = [&](auto w) -> SelectTileFn {
    using W = decltype(w);
    switch (itemsize(cases)) {
      case 1: return &select_tile<W, uint8_t>;
      case 2: return &select_tile<W, uint16_t>;
      case 4: return &select_tile<W, uint32_t>;
      case 8: return &select_tile<W, uint64_t>;
      default: return &select_tile<W, Bytes16>;
    }
  };
  return which == DType::Bool ? pick(uint8_t{}) : pick(int32_t{});
}

bool is_expensive(UnaryOp op) {
  switch (op) {
    case UnaryOp::neg: case UnaryOp::abs: case UnaryOp::sign: case UnaryOp::floor:
    case UnaryOp::ceil: case UnaryOp::round: case UnaryOp::round_even:
    case UnaryOp::is_finite: case UnaryOp::logical_not: case UnaryOp::bitwise_not:
    case UnaryOp::real: case UnaryOp::imag: case UnaryOp::conj: case UnaryOp::square:
    case UnaryOp::population_count: case UnaryOp::clz: case UnaryOp::isnan:
    case UnaryOp::isinf: case UnaryOp::signbit: case UnaryOp::reciprocal:
      return false;
    default:
      return true;
  }
}

bool is_expensive(BinaryOp op) {
  return op == BinaryOp::pow || op == BinaryOp::atan2 || op == BinaryOp::logaddexp ||
         op == BinaryOp::hypot || op == BinaryOp::rem || op == BinaryOp::floor_div ||
         op == BinaryOp::floor_mod;
}

// ---- Driver ----

namespace {

constexpr int64_t kTile = 512;             // elements per tile: operand tiles stay in L1
constexpr int64_t kTileBytes = kTile * 16;
constexpr int64_t kBlockRows = 16;         // blocked tiles: kBlockRows x (kTile / kBlockRows)
constexpr int64_t kCheapGrain = 1 << 16;   // per-thread work below which threads don't pay
constexpr int64_t kHeavyGrain = 1 << 14;
constexpr int kStackOperands = 4;
// Outputs this large are written with streaming stores: they skip reading each line before
// overwriting it (a quarter of a binary op's memory traffic), and so big a result would
// have left the cache before its next use anyway.
constexpr int64_t kStreamBytes = int64_t(32) << 20;

int64_t grain_for(bool expensive, DType t) {
  // Half types convert in software and complex math calls libm: both count as heavy.
  bool heavy = expensive || t == DType::F16 || t == DType::BF16 || is_complex(t);
  return heavy ? kHeavyGrain : kCheapGrain;
}

enum class Access { Dense, Splat, Strided };
struct Operand {
  const char* data;
  size_t esize;
  Access access;
  Strides strides;  // over the driver's iteration shape, when Strided
};

void classify(const Array& x, const Shape& shape, int64_t n, Operand* op) {
  op->data = x.data();
  op->esize = itemsize(x.dtype());
  if (n == 1 || (x.shape() == shape && x.is_contiguous())) {
    op->access = Access::Dense;
  } else if (x.size() == 1) {
    op->access = Access::Splat;
  } else {
    Strides s = broadcast_strides(x, shape);
    op->access = is_dense(shape, s) ? Access::Dense : is_splat(s) ? Access::Splat : Access::Strided;
    if (op->access == Access::Strided) op->strides = std::move(s);
  }
}

// Merges dimensions that every strided operand walks as one run (and drops size-1 ones),
// so gathers copy few, long rows.
Shape coalesce(const Shape& shape, Operand* ops, int nops) {
  Shape out;
  std::vector<Strides> st(static_cast<size_t>(nops));
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !out.empty();
    for (int k = 0; k < nops && merge; ++k)
      if (ops[k].access == Access::Strided)
        merge = st[size_t(k)].back() == ops[k].strides[d] * shape[d];
    if (merge) {
      out.back() *= shape[d];
      for (int k = 0; k < nops; ++k)
        if (ops[k].access == Access::Strided) st[size_t(k)].back() = ops[k].strides[d];
    } else {
      out.push_back(shape[d]);
      for (int k = 0; k < nops; ++k)
        if (ops[k].access == Access::Strided) st[size_t(k)].push_back(ops[k].strides[d]);
    }
  }
  for (int k = 0; k < nops; ++k)
    if (ops[k].access == Access::Strided) ops[k].strides = std::move(st[size_t(k)]);
  return out;
}

// Transposed operands (each element of a row on its own cache line, a smaller stride
// across rows) are read in 2-d blocks over the last two dimensions, so that each line
// fetched serves kBlockRows elements.
bool wants_blocks(const Shape& shape, const Operand* ops, int nops) {
  const size_t nd = shape.size();
  if (nd < 2) return false;
  for (int k = 0; k < nops; ++k) {
    if (ops[k].access != Access::Strided) continue;
    int64_t sr = std::abs(ops[k].strides[nd - 2]), sc = std::abs(ops[k].strides[nd - 1]);
    if (sc * int64_t(ops[k].esize) >= 64 && sr < sc) return true;
  }
  return false;
}

// Copies a rows x cols block (element strides sr, sc) into dense row-major `dst`.
template <size_t kSize>
void gather_block_typed(const char* base, int64_t rows, int64_t cols, int64_t sr, int64_t sc,
                        char* dst) {
  using Elem = semantics::ElementBits<kSize>;
  const Elem* src = reinterpret_cast<const Elem*>(base);
  Elem* out = reinterpret_cast<Elem*>(dst);
  for (int64_t r = 0; r < rows; ++r, out += cols) {
    const Elem* p = src + r * sr;
    if (sc == 1) {
      std::memcpy(out, p, size_t(cols) * kSize);
    } else {
      for (int64_t c = 0; c < cols; ++c) out[c] = p[c * sc];
    }
  }
}
void gather_block(const char* base, size_t esize, int64_t rows, int64_t cols, int64_t sr,
                  int64_t sc, char* dst) {
  switch (esize) {
    case 1: return gather_block_typed<1>(base, rows, cols, sr, sc, dst);
    case 2: return gather_block_typed<2>(base, rows, cols, sr, sc, dst);
    case 4: return gather_block_typed<4>(base, rows, cols, sr, sc, dst);
    case 8: return gather_block_typed<8>(base, rows, cols, sr, sc, dst);
    default: return gather_block_typed<16>(base, rows, cols, sr, sc, dst);
  }
}

// memcpy with non-temporal stores (SSE2); callers fence before the data is handed on.
void stream_copy_sse2(char* dst, const char* src, int64_t bytes) {
  int64_t head = std::min<int64_t>(int64_t(-reinterpret_cast<uintptr_t>(dst) & 15), bytes);
  std::memcpy(dst, src, size_t(head));
  int64_t i = head;
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  std::memcpy(dst + i, src + i, size_t(bytes - i));
}
// Whole-line stores: a 64-byte non-temporal store fills a write-combining buffer at once,
// about 15% more bandwidth than four 16-byte ones.
__attribute__((target("avx512f"))) void stream_copy_avx512(char* dst, const char* src,
                                                           int64_t bytes) {
  int64_t head = std::min<int64_t>(int64_t(-reinterpret_cast<uintptr_t>(dst) & 63), bytes);
  std::memcpy(dst, src, size_t(head));
  int64_t i = head;
  for (; i + 64 <= bytes; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i),
                        _mm512_loadu_si512(reinterpret_cast<const void*>(src + i)));
  std::memcpy(dst + i, src + i, size_t(bytes - i));
}

// One thread's tile buffers and tile-function input pointers, on its stack for few
// operands; the extra buffer stages output.
class Scratch {
 public:
  explicit Scratch(int nins) : ptrs(local_ptrs_), nins_(nins) {
    if (nins > kStackOperands) {
      heap_ptrs_.resize(size_t(nins));
      heap_bufs_.resize(size_t(nins + 1) * kTileBytes);
      ptrs = heap_ptrs_.data();
    }
  }
  char* buf(int k) {
    return nins_ > kStackOperands ? heap_bufs_.data() + size_t(k) * kTileBytes : bufs_[k];
  }
  char* out_buf() { return buf(nins_); }

  const void** ptrs;

 private:
  int nins_;
  const void* local_ptrs_[kStackOperands];
  alignas(64) char bufs_[kStackOperands + 1][kTileBytes];
  std::vector<const void*> heap_ptrs_;
  std::vector<char> heap_bufs_;
};

// Runs tile(inputs, out, m) over all of `out`: straight over each thread's range when every
// operand is dense and the output is not streamed; else in tiles, with splat operands
// pre-filled once per thread and strided ones gathered (in 2-d blocks for transposes).
template <class TileFn>
void run(const Array* const* ins, int nins, const Array& out, int64_t grain, const TileFn& tile) {
  const int64_t n = out.size();
  if (n == 0) return;
  Operand local[kStackOperands];
  std::vector<Operand> heap;
  Operand* ops = local;
  if (nins > kStackOperands) {
    heap.resize(size_t(nins));
    ops = heap.data();
  }
  bool all_dense = true, any_strided = false;
  for (int k = 0; k < nins; ++k) {
    classify(*ins[k], out.shape(), n, &ops[k]);
    all_dense = all_dense && ops[k].access == Access::Dense;
    any_strided = any_strided || ops[k].access == Access::Strided;
  }
  char* const dst = out.mutable_data();
  const int64_t osize = int64_t(itemsize(out.dtype()));
  const bool long_op = n * (grain == kHeavyGrain ? 10 : 1) >= kLongOpWork;
  auto parallel = [&](int64_t units, int64_t unit_grain, const auto& fn) {
    if (units <= unit_grain || pool_size() == 1) {
      fn(0, units);
    } else {
      parallel_for(units, unit_grain, fn, long_op);
    }
  };

  const bool stream = n * osize >= kStreamBytes;
  if (all_dense && !stream) {
    parallel(n, grain, [&](int64_t begin, int64_t end) {
      Scratch s(nins);
      for (int k = 0; k < nins; ++k) s.ptrs[k] = ops[k].data + begin * int64_t(ops[k].esize);
      tile(s.ptrs, dst + begin * osize, end - begin);
    });
    return;
  }

  const Shape shape = any_strided ? coalesce(out.shape(), ops, nins) : Shape();
  auto fill_splats = [&](Scratch& s, int64_t m) {
    for (int k = 0; k < nins; ++k) {
      if (ops[k].access != Access::Splat) continue;
      gather(ops[k].data, ops[k].esize, Shape(), Strides(), 0, m, s.buf(k));
      s.ptrs[k] = s.buf(k);
    }
  };

  if (!wants_blocks(shape, ops, nins)) {
    parallel(n, grain, [&](int64_t begin, int64_t end) {
      Scratch s(nins);
      fill_splats(s, std::min(kTile, end - begin));
      for (int64_t i = begin; i < end; i += kTile) {
        const int64_t m = std::min(kTile, end - i);
        for (int k = 0; k < nins; ++k) {
          const Operand& op = ops[k];
          if (op.access == Access::Dense) {
            s.ptrs[k] = op.data + i * int64_t(op.esize);
          } else if (op.access == Access::Strided) {
            gather(op.data, op.esize, shape, op.strides, i, i + m, s.buf(k));
            s.ptrs[k] = s.buf(k);
          }
        }
        if (stream) {
          tile(s.ptrs, s.out_buf(), m);
          stream_copy(dst + i * osize, s.out_buf(), size_t(m * osize));
        } else {
          tile(s.ptrs, dst + i * osize, m);
        }
      }
      if (stream) _mm_sfence();
    });
    return;
  }

  // Blocked: a unit is kBlockRows rows (of the last two dimensions) by all columns.
  const size_t nd = shape.size();
  const int64_t rows_total = shape[nd - 2], cols_total = shape[nd - 1];
  const int64_t row_blocks = (rows_total + kBlockRows - 1) / kBlockRows;
  const int64_t units = n / (rows_total * cols_total) * row_blocks;
  const int64_t block_cols = kTile / kBlockRows;
  parallel(units, std::max<int64_t>(1, grain / (kBlockRows * cols_total)),
           [&](int64_t ubegin, int64_t uend) {
    Scratch s(nins);
    fill_splats(s, kTile);
    for (int64_t u = ubegin; u < uend; ++u) {
      const int64_t outer = u / row_blocks, r0 = (u % row_blocks) * kBlockRows;
      const int64_t rows = std::min(kBlockRows, rows_total - r0);
      const int64_t first = (outer * rows_total + r0) * cols_total;  // dense index of (r0, 0)
      for (int64_t c0 = 0; c0 < cols_total; c0 += block_cols) {
        const int64_t cols = std::min(block_cols, cols_total - c0);
        for (int k = 0; k < nins; ++k) {
          const Operand& op = ops[k];
          const int64_t es = int64_t(op.esize);
          if (op.access == Access::Dense) {
            gather_block(op.data + (first + c0) * es, op.esize, rows, cols, cols_total, 1,
                         s.buf(k));
          } else if (op.access == Access::Strided) {
            int64_t off = r0 * op.strides[nd - 2] + c0 * op.strides[nd - 1];
            for (int64_t d = int64_t(nd) - 3, rem = outer; d >= 0; --d) {
              off += rem % shape[size_t(d)] * op.strides[size_t(d)];
              rem /= shape[size_t(d)];
            }
            gather_block(op.data + off * es, op.esize, rows, cols, op.strides[nd - 2],
                         op.strides[nd - 1], s.buf(k));
          }
          if (op.access != Access::Splat) s.ptrs[k] = s.buf(k);
        }
        tile(s.ptrs, s.out_buf(), rows * cols);
        for (int64_t r = 0; r < rows; ++r)
          std::memcpy(dst + (first + r * cols_total + c0) * osize,
                      s.out_buf() + r * cols * osize, size_t(cols * osize));
      }
    }
  });
}

}  // namespace

void unary(UnaryOp op, const Array& x, const Array& out) {
  UnaryTileFn fn = unary_tile_fn(op, x.dtype());
  if (!fn) reject(op_name(op), x.dtype());
  const Array* ins[] = {&x};
  run(ins, 1, out, grain_for(is_expensive(op), x.dtype()),
      [fn](const void* const* p, char* o, int64_t m) { fn(p[0], o, m); });
}

void binary(BinaryOp op, const Array& x, const Array& y, const Array& out) {
  BinaryTileFn fn = binary_tile_fn(op, x.dtype());
  if (!fn) reject(op_name(op), x.dtype());
  const Array* ins[] = {&x, &y};
  run(ins, 2, out, grain_for(is_expensive(op), x.dtype()),
      [fn](const void* const* p, char* o, int64_t m) { fn(p[0], p[1], o, m); });
}

void select_n(const Array& which, const std::vector<Array>& cases, const Array& out) {
  SelectTileFn fn = select_tile_fn(which.dtype(), out.dtype());
  if (!fn) reject("select_n", which.dtype());
  std::vector<const Array*> ins{&which};
  for (const Array& c : cases) ins.push_back(&c);
  const int64_t k = int64_t(cases.size());
  run(ins.data(), int(ins.size()), out, kCheapGrain,
      [fn, k](const void* const* p, char* o, int64_t m) { fn(p[0], p + 1, k, o, m); });
}

void clamp(const Array& lo, const Array& x, const Array& hi, const Array& out) {
  ClampTileFn fn = clamp_tile_fn(x.dtype());
  const Array* ins[] = {&lo, &x, &hi};
  run(ins, 3, out, grain_for(false, x.dtype()),
      [fn](const void* const* p, char* o, int64_t m) { fn(p[0], p[1], p[2], o, m); });
}

void stream_copy(void* dst, const void* src, size_t bytes) {
  static const bool avx512 = vmath::isa_supported(vmath::Isa::Avx512);
  if (avx512) stream_copy_avx512(static_cast<char*>(dst), static_cast<const char*>(src), int64_t(bytes));
  else stream_copy_sse2(static_cast<char*>(dst), static_cast<const char*>(src), int64_t(bytes));
}

}  // namespace tinyxla::cpu
