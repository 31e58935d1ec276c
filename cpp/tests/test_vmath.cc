// Accuracy test for the vmath kernels: every function of every ISA variant this CPU supports,
// checked against long double references over dense sweeps, random values and special values,
// plus in-place / odd-length calls. Runs with FTZ|DAZ like the runtime's threads.
#include <xmmintrin.h>

#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu/vmath.h"

namespace vm = tinyxla::cpu::vmath;
using vm::Binary;
using vm::Isa;
using vm::Unary;
using ld = long double;

namespace {

constexpr ld kPiL = 3.141592653589793238462643383279502884L;
constexpr ld kNanL = std::numeric_limits<ld>::quiet_NaN();
constexpr ld kInfL = std::numeric_limits<ld>::infinity();

// ---------------------------------------------------------------- references

ld logistic_ref(ld x) { return 1.0L / (1.0L + expl(-x)); }
ld rsqrt_ref(ld x) { return 1.0L / sqrtl(x); }
ld lgamma_ref(ld x) {
  int sign;
  return lgammal_r(x, &sign);
}

// XLA's convention: NaN at 0, negative integers and -inf.
ld digamma_ref(ld x) {
  if (std::isnan(x) || x == -kInfL || (x <= 0 && x == floorl(x))) return kNanL;
  if (x == kInfL) return kInfL;
  ld r = 0;
  if (x < 0) {  // psi(x) = psi(1-x) - pi*cot(pi*x), with the argument reduced exactly
    r = -kPiL / tanl(kPiL * (x - nearbyintl(x)));
    x = 1 - x;
  }
  for (; x < 20; x += 1) r -= 1 / x;
  const ld iz2 = 1 / (x * x);
  const ld ser = iz2 * (1.0L / 12 - iz2 * (1.0L / 120 - iz2 * (1.0L / 252 - iz2 * (1.0L / 240 -
                 iz2 * (1.0L / 132 - iz2 * (691.0L / 32760 - iz2 * (1.0L / 12)))))));
  return r + logl(x) - 0.5L / x - ser;
}

// Newton on erf (or on erfc near +-1) from Winitzki's approximation.
ld erfinv_ref(ld x) {
  const ld a = fabsl(x);
  if (std::isnan(x) || a > 1) return kNanL;
  if (a == 1) return copysignl(kInfL, x);
  if (a == 0) return x;
  const ld l = logl((1 - a) * (1 + a)), k = 2 / (kPiL * 0.147L) + l / 2;
  ld y = sqrtl(sqrtl(k * k - l / 0.147L) - k);
  for (int i = 0; i < 12; ++i) {
    const ld resid = a < 0.5L ? erfl(y) - a : (1 - a) - erfcl(y);
    y -= resid / (2 / sqrtl(kPiL) * expl(-y * y));
  }
  return copysignl(y, x);
}

// ---------------------------------------------------------------- comparison

template <typename T>
T flush(T v) {
  return std::fabs(v) < std::numeric_limits<T>::min() ? std::copysign(T(0), v) : v;
}

template <typename T>
ld ulp_of(ld r) {
  constexpr int kDigits = std::numeric_limits<T>::digits;
  constexpr int kMinExp = std::numeric_limits<T>::min_exponent - 1;
  const int e = ilogbl(r);
  return ldexpl(1.0L, (e < kMinExp ? kMinExp : e) - (kDigits - 1));
}

struct Tol {
  double ulps;     // strict bound in ulps (used when rel == 0)
  double rel;      // relaxed: relative bound ...
  double abs_err;  // ... or absolute bound (for functions with zeros)
};

// Checks one result; sets ulp to the measured error (or -1 where the result is flushed/special).
template <typename T>
bool check(T got, ld ref, const Tol& tol, double& ulp) {
  ulp = -1;
  got = flush(got);
  const ld g = got;
  if (std::isnan(ref)) return std::isnan(got);
  if (std::isnan(got)) return false;
  if (std::isinf(ref)) return g == ref;
  const ld aref = fabsl(ref), maxv = std::numeric_limits<T>::max();
  if (std::isinf(got))  // accept overflow where the exact result rounds (or nearly rounds) to inf
    return std::signbit(got) == std::signbit(ref) && aref > maxv * (1 - 8 * ldexpl(1, -std::numeric_limits<T>::digits));
  if (tol.abs_err > 0 && fabsl(g - ref) <= tol.abs_err) return true;
  if (aref < std::numeric_limits<T>::min()) {
    if (ref == 0 && tol.rel == 0) return got == 0 && std::signbit(got) == std::signbit(ref);
    return fabsl(g) <= std::numeric_limits<T>::min();
  }
  const ld err = fabsl(g - ref);
  ulp = double(err / ulp_of<T>(ref));
  return tol.rel > 0 ? err <= tol.rel * aref : ulp <= tol.ulps;
}

struct Stats {
  double max_ulp = 0;
  double arg_at_max = 0, arg2_at_max = 0;
  long fails = 0;
  long checks = 0;
};

long g_checks = 0, g_fails = 0;

template <typename T>
void report_fail(const char* isa, const char* name, Stats& st, T a, const T* b, T got, ld ref) {
  if (st.fails < 5) {
    if (b)
      std::printf("  FAIL %s %s(%.9g, %.9g) = %.17g, want %.20Lg\n", isa, name, double(a), double(*b),
                  double(got), ref);
    else
      std::printf("  FAIL %s %s(%.9g) = %.17g, want %.20Lg\n", isa, name, double(a), double(got), ref);
  }
  ++st.fails;
}

// ---------------------------------------------------------------- inputs

struct Range {
  double lo, hi;
};

template <typename T>
T special_values[] = {T(0), -T(0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                      std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::max(),
                      -std::numeric_limits<T>::max(), std::numeric_limits<T>::min(),
                      -std::numeric_limits<T>::min(), std::numeric_limits<T>::denorm_min(),
                      -std::numeric_limits<T>::denorm_min(), T(1e-30), T(-1e-30), T(1e-10), T(-1e-10),
                      T(0.5), T(-0.5), T(1), T(-1), T(2), T(-2), T(3), T(-3), T(-4), T(-5), T(-100),
                      T(10), T(100), T(1e10), T(-1e10), T(1e30), T(-1e30), T(0.25), T(1.5), T(-1.5),
                      T(88.72283935546875), T(-87.33654), T(89), T(-104), T(709.78), T(-745.1),
                      std::nextafter(T(1), T(0)), std::nextafter(T(-1), T(0)), std::nextafter(T(1), T(2)),
                      std::nextafter(T(-1), T(-2)), T(1.4616321449683623), T(-2.4570247), T(-0.5)};

// Dense sweeps of the given ranges, a sweep over all binades (bit patterns), random values.
template <typename T, typename U>
std::vector<T> make_inputs(const Range* ranges, int nranges, int dense, int sweep, int random,
                           std::mt19937_64& rng) {
  std::vector<T> v(std::begin(special_values<T>), std::end(special_values<T>));
  for (int r = 0; r < nranges; ++r)
    for (int i = 0; i < dense; ++i)
      v.push_back(T(ranges[r].lo + (ranges[r].hi - ranges[r].lo) * i / (dense - 1)));
  const U inf_bits = [] {
    T inf = std::numeric_limits<T>::infinity();
    U b;
    std::memcpy(&b, &inf, sizeof b);
    return b;
  }();
  const U sign = U(1) << (8 * sizeof(U) - 1);
  for (int i = 0; i < sweep; ++i) {
    U b = U(inf_bits / U(sweep) * U(i));
    T t;
    std::memcpy(&t, &b, sizeof t);
    v.push_back(t);
    b |= sign;
    std::memcpy(&t, &b, sizeof t);
    v.push_back(t);
  }
  std::uniform_real_distribution<double> uni(0, 1);
  for (int i = 0; i < random; ++i) {
    const Range& rg = ranges[i % nranges];
    v.push_back(T(rg.lo + (rg.hi - rg.lo) * uni(rng)));
    U b = U(rng()) % inf_bits;
    if (rng() & 1) b |= sign;
    T t;
    std::memcpy(&t, &b, sizeof t);
    v.push_back(t);
  }
  return v;
}

const char* isa_str(Isa isa) {
  return isa == Isa::Avx512 ? "avx512" : isa == Isa::Avx2 ? "avx2" : "generic";
}
constexpr Isa kIsas[] = {Isa::Avx512, Isa::Avx2, Isa::Generic};

// ---------------------------------------------------------------- unary

struct UnarySpec {
  const char* name;
  Unary op;
  ld (*ref)(ld);
  Range r1, r2;
  Tol tol32, tol64;
};

constexpr Tol kStrict{4, 0, 0};
constexpr Tol kRelaxed32{0, 1e-6, 0};
constexpr Tol kRelaxedZeros32{0, 1e-6, 1e-6};
// float32 erf_inv is XLA:CPU's kernel, bit for bit (random.normal must match JAX's); near
// +-1 its polynomial is 65 ulp (6e-6 relative) off the exact value.
constexpr Tol kXlaErfInv32{0, 1e-5, 0};
// float32 exp is XLA:CPU's Cephes kernel, bit for bit (JAX's values): near overflow, where
// XLA clamps n to 127, the reduced argument leaves the polynomial's range (5.5 ulp at 88.7).
constexpr Tol kXlaExp32{6, 0, 0};

const UnarySpec kUnary[] = {
    {"exp", Unary::Exp, expl, {-104, 89}, {-1, 1}, kXlaExp32, kStrict},
    {"exp2", Unary::Exp2, exp2l, {-151, 129}, {-1, 1}, kStrict, kStrict},
    {"log", Unary::Log, logl, {0.25, 4}, {0, 1e5}, kStrict, kStrict},
    {"log2", Unary::Log2, log2l, {0.25, 4}, {0, 1e5}, kStrict, kStrict},
    {"log10", Unary::Log10, log10l, {0.25, 4}, {0, 1e5}, kStrict, kStrict},
    {"log1p", Unary::Log1p, log1pl, {-1, 4}, {-0.01, 0.01}, kStrict, kStrict},
    {"expm1", Unary::Expm1, expm1l, {-30, 89}, {-1, 1}, kStrict, kStrict},
    {"tanh", Unary::Tanh, tanhl, {-10, 10}, {-1, 1}, kStrict, kStrict},
    {"logistic", Unary::Logistic, logistic_ref, {-105, 30}, {-2, 2}, kStrict, kStrict},
    {"sin", Unary::Sin, sinl, {-1e4, 1e4}, {-1e7, 1e7}, kStrict, kStrict},
    {"cos", Unary::Cos, cosl, {-1e4, 1e4}, {-1e7, 1e7}, kStrict, kStrict},
    {"tan", Unary::Tan, tanl, {-1e4, 1e4}, {-1e7, 1e7}, kStrict, kStrict},
    {"asin", Unary::Asin, asinl, {-1, 1}, {-1.1, 1.1}, kStrict, kStrict},
    {"acos", Unary::Acos, acosl, {-1, 1}, {-1.1, 1.1}, kStrict, kStrict},
    {"atan", Unary::Atan, atanl, {-20, 20}, {-1e4, 1e4}, kStrict, kStrict},
    {"sinh", Unary::Sinh, sinhl, {-90, 90}, {-1.5, 1.5}, kStrict, kStrict},
    {"cosh", Unary::Cosh, coshl, {-90, 90}, {-1.5, 1.5}, kStrict, kStrict},
    {"asinh", Unary::Asinh, asinhl, {-100, 100}, {-1, 1}, kStrict, kStrict},
    {"acosh", Unary::Acosh, acoshl, {1, 100}, {0, 2}, kStrict, kStrict},
    {"atanh", Unary::Atanh, atanhl, {-1, 1}, {-0.01, 0.01}, kStrict, kStrict},
    {"sqrt", Unary::Sqrt, sqrtl, {0, 100}, {-1, 1}, {0.5, 0, 0}, {0.5, 0, 0}},
    {"rsqrt", Unary::Rsqrt, rsqrt_ref, {0, 100}, {-1, 1}, kStrict, kStrict},
    {"cbrt", Unary::Cbrt, cbrtl, {-100, 100}, {-1, 1}, kStrict, kStrict},
    {"erf", Unary::Erf, erfl, {-5, 5}, {-0.6, 0.6}, kStrict, kStrict},
    {"erfc", Unary::Erfc, erfcl, {-5, 11}, {-0.6, 0.6}, kRelaxed32, kStrict},
    {"erf_inv", Unary::ErfInv, erfinv_ref, {-1, 1}, {0.99, 1}, kXlaErfInv32, {0, 1e-13, 0}},
    {"lgamma", Unary::Lgamma, lgamma_ref, {-20, 40}, {0, 3}, kRelaxedZeros32, {0, 1e-13, 1e-14}},
    {"digamma", Unary::Digamma, digamma_ref, {-20, 40}, {0, 3}, kRelaxedZeros32, {0, 1e-13, 1e-14}},
};

template <typename T>
void record(Stats& st, double ulp, T a, T b = T(0)) {
  if (ulp > st.max_ulp) {
    st.max_ulp = ulp;
    st.arg_at_max = double(a);
    st.arg2_at_max = double(b);
  }
}

// In-place calls and every short length must match the out-of-place full-array result.
template <typename T, typename Fn>
long check_inplace_tails(Fn fn, const std::vector<T>& x, const std::vector<T>& full) {
  long bad = 0;
  const int64_t lens[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 255, 256, 257, 1000};
  std::vector<T> buf;
  for (int64_t n : lens) {
    buf.assign(x.begin(), x.begin() + 1000);
    fn(buf.data(), buf.data(), n);
    for (int64_t i = 0; i < 1000; ++i) {
      const T want = i < n ? full[i] : x[i];
      if (std::memcmp(&buf[i], &want, sizeof(T)) != 0 && !(std::isnan(buf[i]) && std::isnan(want))) ++bad;
    }
  }
  return bad;
}

template <typename T, typename U>
void test_unary(const UnarySpec& s, std::mt19937_64& rng) {
  const bool f32 = sizeof(T) == 4;
  const Range ranges[] = {s.r1, s.r2};
  const std::vector<T> x = f32 ? make_inputs<T, U>(ranges, 2, 1 << 18, 1 << 16, 1 << 16, rng)
                               : make_inputs<T, U>(ranges, 2, 1 << 15, 1 << 14, 1 << 14, rng);
  // DAZ: denormal inputs read as 0; libm-backed kernels may also see their true value.
  std::vector<ld> ref(x.size()), ref_raw(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = s.ref(flush(x[i])), ref_raw[i] = s.ref(x[i]);
  const Tol& tol = f32 ? s.tol32 : s.tol64;
  std::vector<T> y(x.size());
  for (Isa isa : kIsas) {
    if (!vm::isa_supported(isa)) continue;
    const vm::Table& t = vm::table(isa);
    auto fn = [&](const T* a, T* b, int64_t n) {
      if constexpr (sizeof(T) == 4)
        t.unary_f32[int(s.op)](a, b, n);
      else
        t.unary_f64[int(s.op)](a, b, n);
    };
    fn(x.data(), y.data(), int64_t(x.size()));
    Stats st;
    for (size_t i = 0; i < x.size(); ++i) {
      double ulp;
      double ulp_raw;
      if (!check(y[i], ref[i], tol, ulp) && !(flush(x[i]) != x[i] && check(y[i], ref_raw[i], tol, ulp_raw)))
        report_fail<T>(isa_str(isa), s.name, st, x[i], nullptr, y[i], ref[i]);
      record(st, ulp, x[i]);
    }
    const long bad = check_inplace_tails<T>(fn, x, y);
    if (bad) std::printf("  FAIL %s %s: %ld in-place/short-length mismatches\n", isa_str(isa), s.name, bad);
    st.fails += bad;
    g_checks += long(x.size());
    g_fails += st.fails;
    std::printf("%-4s %-8s %-7s max %7.3f ulp at %-14.8g %s\n", f32 ? "f32" : "f64", s.name, isa_str(isa),
                st.max_ulp, st.arg_at_max, st.fails ? "FAILED" : "ok");
  }
}

// ---------------------------------------------------------------- binary

template <typename T, typename U>
bool denormal_bits(T v) {
  U u, min_normal;
  const T tiny = std::numeric_limits<T>::min();
  std::memcpy(&u, &v, sizeof u);
  std::memcpy(&min_normal, &tiny, sizeof min_normal);
  const U mag = u & ~(U(1) << (sizeof(U) * 8 - 1));
  return mag != 0 && mag < min_normal;
}

template <typename T, typename U>
void test_binary(const char* name, Binary op, ld (*ref)(ld, ld), std::mt19937_64& rng) {
  const bool f32 = sizeof(T) == 4;
  std::vector<T> a, b;
  // Every pair of special values.
  for (T u : special_values<T>)
    for (T v : special_values<T>) a.push_back(u), b.push_back(v);
  // Dense grid, then random pairs (magnitudes spread over the exponent range, mixed signs).
  const int grid = f32 ? 600 : 150;
  for (int i = 0; i < grid; ++i)
    for (int j = 0; j < grid; ++j) {
      if (op == Binary::Pow) {
        a.push_back(T(std::exp2(-20.0 + 40.0 * i / grid)));
        b.push_back(T(-40.0 + 80.0 * j / grid));
      } else {
        a.push_back(T(-10.0 + 20.0 * i / grid));
        b.push_back(T(-10.0 + 20.0 * j / grid));
      }
    }
  std::uniform_real_distribution<double> uni(-1, 1);
  for (int i = 0; i < (f32 ? 1 << 18 : 1 << 15); ++i) {
    a.push_back(T(std::copysign(std::exp2(60 * uni(rng)), uni(rng))));
    b.push_back(op == Binary::Pow ? T(i % 4 == 0 ? std::round(40 * uni(rng)) : 10 * uni(rng))
                                  : T(std::copysign(std::exp2(60 * uni(rng)), uni(rng))));
  }
  std::vector<ld> r(a.size()), r_raw(a.size());
  for (size_t i = 0; i < a.size(); ++i) r[i] = ref(flush(a[i]), flush(b[i])), r_raw[i] = ref(a[i], b[i]);
  std::vector<T> y(a.size());
  for (Isa isa : kIsas) {
    if (!vm::isa_supported(isa)) continue;
    const vm::Table& t = vm::table(isa);
    if constexpr (sizeof(T) == 4)
      t.binary_f32[int(op)](a.data(), b.data(), y.data(), int64_t(a.size()));
    else
      t.binary_f64[int(op)](a.data(), b.data(), y.data(), int64_t(a.size()));
    Stats st;
    for (size_t i = 0; i < a.size(); ++i) {
      double ulp;
      double ulp_raw;
      const bool denormal_in = flush(a[i]) != a[i] || flush(b[i]) != b[i];
      // float32 pow is the C library's powf, as in XLA:CPU: under DAZ it reads a denormal
      // operand's bits (pow(0, denorm_min) is 0), neither flushed nor exact. JAX's values for
      // those pairs are pinned in tests/test_xla_transcendentals.py. (Bits, since DAZ makes a
      // denormal compare equal to 0.)
      if (f32 && op == Binary::Pow && (denormal_bits<T, U>(a[i]) || denormal_bits<T, U>(b[i])))
        continue;
      if (!check(y[i], r[i], kStrict, ulp) && !(denormal_in && check(y[i], r_raw[i], kStrict, ulp_raw)))
        report_fail<T>(isa_str(isa), name, st, a[i], &b[i], y[i], r[i]);
      record(st, ulp, a[i], b[i]);
    }
    // In place on the first operand.
    std::vector<T> buf(a.begin(), a.begin() + 777);
    if constexpr (sizeof(T) == 4)
      t.binary_f32[int(op)](buf.data(), b.data(), buf.data(), 777);
    else
      t.binary_f64[int(op)](buf.data(), b.data(), buf.data(), 777);
    for (int i = 0; i < 777; ++i)
      if (std::memcmp(&buf[i], &y[i], sizeof(T)) != 0 && !(std::isnan(buf[i]) && std::isnan(y[i]))) ++st.fails;
    g_checks += long(a.size());
    g_fails += st.fails;
    std::printf("%-4s %-8s %-7s max %7.3f ulp at (%.8g, %.8g) %s\n", f32 ? "f32" : "f64", name, isa_str(isa),
                st.max_ulp, st.arg_at_max, st.arg2_at_max, st.fails ? "FAILED" : "ok");
  }
}

// ---------------------------------------------------------------- explicit special cases

template <typename T>
void expect(const char* what, T got, T want) {
  ++g_checks;
  const bool same = (std::isnan(got) && std::isnan(want)) ||
                    (got == want && std::signbit(got) == std::signbit(want));
  if (!same) {
    ++g_fails;
    std::printf("  FAIL special %s = %.9g, want %.9g\n", what, double(got), double(want));
  }
}

template <typename T>
void test_specials() {
  constexpr T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  auto u = [](Unary op, T x) {
    T y;
    if constexpr (sizeof(T) == 4)
      vm::unary_f32(op)(&x, &y, 1);
    else
      vm::unary_f64(op)(&x, &y, 1);
    return y;
  };
  auto p = [](T a, T b) {
    T y;
    if constexpr (sizeof(T) == 4)
      vm::binary_f32(Binary::Pow)(&a, &b, &y, 1);
    else
      vm::binary_f64(Binary::Pow)(&a, &b, &y, 1);
    return y;
  };
  expect("log(-1)", u(Unary::Log, -1), nan);
  expect("log(0)", u(Unary::Log, 0), -inf);
  expect("log(inf)", u(Unary::Log, inf), inf);
  expect("log1p(-1)", u(Unary::Log1p, -1), -inf);
  expect("atanh(1)", u(Unary::Atanh, 1), inf);
  expect("atanh(-1)", u(Unary::Atanh, -1), -inf);
  expect("acosh(0.5)", u(Unary::Acosh, T(0.5)), nan);
  expect("erf_inv(1)", u(Unary::ErfInv, 1), inf);
  expect("erf_inv(-1)", u(Unary::ErfInv, -1), -inf);
  expect("erf_inv(2)", u(Unary::ErfInv, 2), nan);
  expect("lgamma(0)", u(Unary::Lgamma, 0), inf);
  expect("lgamma(-3)", u(Unary::Lgamma, -3), inf);
  expect("lgamma(-inf)", u(Unary::Lgamma, -inf), inf);
  expect("lgamma(inf)", u(Unary::Lgamma, inf), inf);
  expect("digamma(0)", u(Unary::Digamma, 0), nan);
  expect("digamma(-2)", u(Unary::Digamma, -2), nan);
  expect("digamma(-inf)", u(Unary::Digamma, -inf), nan);
  expect("digamma(inf)", u(Unary::Digamma, inf), inf);
  expect("rsqrt(0)", u(Unary::Rsqrt, 0), inf);
  expect("rsqrt(-0)", u(Unary::Rsqrt, -T(0)), -inf);
  expect("tanh(-inf)", u(Unary::Tanh, -inf), T(-1));
  expect("logistic(-inf)", u(Unary::Logistic, -inf), T(0));
  expect("exp(-inf)", u(Unary::Exp, -inf), T(0));
  expect("expm1(-inf)", u(Unary::Expm1, -inf), T(-1));
  expect("sin(inf)", u(Unary::Sin, inf), nan);
  expect("cbrt(-8)", u(Unary::Cbrt, -8), T(-2));
  expect("pow(nan,0)", p(nan, 0), T(1));
  expect("pow(1,nan)", p(1, nan), T(1));
  expect("pow(-1,inf)", p(-1, inf), T(1));
  expect("pow(-2,3)", p(-2, 3), T(-8));
  expect("pow(-2,0.5)", p(-2, T(0.5)), nan);
  expect("pow(-0,-3)", p(-T(0), -3), -inf);
  expect("pow(0,-2)", p(0, -2), inf);
  expect("pow(-inf,3)", p(-inf, 3), -inf);
  expect("pow(-inf,-3)", p(-inf, -3), -T(0));
  expect("pow(0.5,-inf)", p(T(0.5), -inf), inf);
  expect("pow(2,10)", p(2, 10), T(1024));
}

}  // namespace

int main() {
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ, as the runtime's worker threads
  std::printf("vmath: dispatch picks %s\n", vm::isa_name());
  std::mt19937_64 rng(12345);
  for (const UnarySpec& s : kUnary) test_unary<float, uint32_t>(s, rng);
  test_binary<float, uint32_t>("atan2", Binary::Atan2, atan2l, rng);
  test_binary<float, uint32_t>("pow", Binary::Pow, powl, rng);
  for (const UnarySpec& s : kUnary) test_unary<double, uint64_t>(s, rng);
  test_binary<double, uint64_t>("atan2", Binary::Atan2, atan2l, rng);
  test_binary<double, uint64_t>("pow", Binary::Pow, powl, rng);
  test_specials<float>();
  test_specials<double>();
  std::printf("vmath: %ld checks, %ld failures: %s\n", g_checks, g_fails, g_fails ? "FAIL" : "PASS");
  return g_fails ? 1 : 0;
}
