// lax.sort: operands sorted together along one dimension by their first `num_keys` operands
// (lexicographically), stably. Floats order as JAX's total order for sorting: -0.0 and 0.0
// compare equal (stability keeps their order), every NaN is equal to every other and last.
// Complex values order by real part, then imaginary part, each as a float.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "../core/thread_pool.h"
#include "radix_sort.h"
#include "kernels.h"
#include "tinyxla/error.h"

namespace tinyxla::cpu {
namespace {

template <typename F>
bool float_less(F a, F b) {
  return !std::isnan(a) && (std::isnan(b) || a < b);
}

template <typename T>
bool key_less(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    return float_less(to_float(a), to_float(b));
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    if (float_less(a.real(), b.real())) return true;
    if (float_less(b.real(), a.real())) return false;
    return float_less(a.imag(), b.imag());
  } else if constexpr (std::is_floating_point_v<T>) {
    return float_less(a, b);
  } else {
    return a < b;
  }
}

// Three-way comparison of elements i and j of one key row (dense, stride `inner`).
using KeyCompare = int (*)(const char* row, int64_t inner, int64_t i, int64_t j);

template <typename T>
int compare_key(const char* row, int64_t inner, int64_t i, int64_t j) {
  const T* p = reinterpret_cast<const T*>(row);
  const T& a = p[i * inner];
  const T& b = p[j * inner];
  return key_less(a, b) ? -1 : key_less(b, a) ? 1 : 0;
}

KeyCompare key_compare(DType t) {
  return visit_dtype(t, [](auto zero) -> KeyCompare { return &compare_key<decltype(zero)>; });
}

// out[k] = in[perm[k]] along a row of stride `inner`, for elements of `size` bytes.
void permute_row(const char* in, char* out, size_t size, int64_t inner,
                 const std::vector<int64_t>& perm) {
  const int64_t step = inner * int64_t(size);
  for (size_t k = 0; k < perm.size(); ++k)
    std::memcpy(out + int64_t(k) * step, in + perm[k] * step, size);
}

// The dtypes with radix keys (ValueKeys below).
template <typename T>
constexpr bool has_radix_key_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    (std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) >= 2);

// The radix keys of sort and argsort, as bits: unsigned integers K whose order is key_less's.
// Floats map bijectively (sign-magnitude to offset) except that every zero, and under DAZ
// every denormal, maps to the key of +0.0 and every NaN to the top key; sort refills those
// runs from the input afterwards, argsort's stable order keeps their indices in input order.
template <typename T>
struct ValueKeys {
  using K = std::make_unsigned_t<T>;  // integers: the sign bit flipped
  static constexpr K kSign = std::is_signed_v<T> ? K(K(1) << (sizeof(K) * 8 - 1)) : K(0);
  static constexpr bool kSpecials = false;
  static K key(K u, K) { return K(u ^ kSign); }
  static K value(K k) { return K(k ^ kSign); }
};

template <typename U, U kInf>
struct FloatKeys {
  using K = U;
  static constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
  static constexpr K kZeroKey = kSign;
  static constexpr K kNanKey = K(~K(0));
  static constexpr bool kSpecials = true;
  // zero_limit: magnitudes below it are zeros (1, or the smallest normal under DAZ).
  static K key(K u, K zero_limit) {
    using S = std::make_signed_t<K>;
    const K mag = u & K(~kSign);
    const K k = u ^ (K(S(u) >> (sizeof(K) * 8 - 1)) | kSign);
    return mag > kInf ? kNanKey : mag < zero_limit ? kZeroKey : k;
  }
  static K value(K k) {
    using S = std::make_signed_t<K>;
    return k ^ (K(S(K(~k)) >> (sizeof(K) * 8 - 1)) | kSign);
  }
};

template <>
struct ValueKeys<float> : FloatKeys<uint32_t, 0x7f800000u> {};
template <>
struct ValueKeys<double> : FloatKeys<uint64_t, 0x7ff0000000000000ull> {};

// Magnitudes (as bits) below which floats count as zero: under DAZ denormals compare equal
// to zero, and the sort must order them as the comparisons do.
template <typename K>
K zero_limit(bool daz) {
  if (!daz) return 1;
  return sizeof(K) == 4 ? K(0x00800000u) : K(uint64_t(0x0010000000000000ull));
}

// Stable LSD radix sort of `n` elements by key_of(element) (an unsigned integer), one
// byte a pass; passes whose byte is the same for every element are skipped. `tmp` holds n
// elements of scratch.
template <typename E, typename KeyOf>
void radix_sort(E* v, E* tmp, int64_t n, KeyOf key_of) {
  using K = decltype(key_of(*v));
  constexpr int kPasses = int(sizeof(K));
  std::vector<int64_t> counts(size_t(kPasses) * 256, 0);
  for (int64_t i = 0; i < n; ++i) {
    const K k = key_of(v[i]);
    for (int p = 0; p < kPasses; ++p) ++counts[size_t(p * 256 + int((k >> (8 * p)) & 0xff))];
  }
  E* src = v;
  E* dst = tmp;
  for (int p = 0; p < kPasses; ++p) {
    int64_t* c = &counts[size_t(p * 256)];
    if (*std::max_element(c, c + 256) == n) continue;  // one bucket: order unchanged
    int64_t sum = 0;
    for (int b = 0; b < 256; ++b) {
      const int64_t t = c[b];
      c[b] = sum;
      sum += t;
    }
    for (int64_t i = 0; i < n; ++i) dst[c[int((key_of(src[i]) >> (8 * p)) & 0xff)]++] = src[i];
    std::swap(src, dst);
  }
  if (src != v) std::copy(src, src + n, v);
}

// The stable order of one key row (stride `inner`) by radix: perm[k] = source index.
// Equal keys (every zero, every NaN) keep their input order, as the comparisons' stable sort.
template <typename T>
void radix_order(const T* row, int64_t inner, int64_t n, bool daz, std::vector<int64_t>& perm) {
  using Keys = ValueKeys<T>;
  using K = typename Keys::K;
  struct Item {
    K key;
    int64_t index;
  };
  const K limit = zero_limit<K>(daz);
  std::vector<Item> items(static_cast<size_t>(n)), tmp(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    K u;
    std::memcpy(&u, &row[i * inner], sizeof(K));
    items[size_t(i)] = {Keys::key(u, limit), i};
  }
  radix_sort(items.data(), tmp.data(), n, [](const Item& it) { return it.key; });
  for (int64_t i = 0; i < n; ++i) perm[size_t(i)] = items[size_t(i)].index;
}

// A row's stable order by one key of dtype `t` via radix, when that dtype has radix keys.
bool radix_order_of(DType t, const char* row, int64_t inner, int64_t n, bool daz,
                    std::vector<int64_t>& perm) {
  return visit_dtype(t, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (has_radix_key_v<T>) {
      radix_order(reinterpret_cast<const T*>(row), inner, n, daz, perm);
      return true;
    } else {
      return false;
    }
  });
}

// Runs fn(i) for i in [0, count) over the pool.
struct PoolParallel {
  template <typename Fn>
  void operator()(int64_t count, const Fn& fn) const {
    parallel_for(count, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) fn(i);
    });
  }
};

// Sorts one row of n values by radix: keys are made once into `o`, sorted with `tmp`
// (n keys) as scratch, and mapped back; zeros and NaNs (one key each) are then refilled
// from `x` in their input order, which the sort must keep.
template <typename T, typename Parallel>
void radix_sort_row(const T* x, T* o, typename ValueKeys<T>::K* tmp, int64_t n,
                    typename ValueKeys<T>::K zero_limit, const Parallel& parallel) {
  using Keys = ValueKeys<T>;
  using K = typename Keys::K;
  const K* xu = reinterpret_cast<const K*>(x);
  K* keys = reinterpret_cast<K*>(o);
  const auto finish = [](K k) { return Keys::value(k); };
  int64_t below = 0, zeros = 0, nans = 0;
  // Rows the least-significant-digit sort takes count their digits as the keys are made.
  const bool counted = n <= radix::kLsdMax;
  uint32_t counts[sizeof(K)][radix::kBuckets];
  if (counted) std::memset(counts, 0, sizeof(counts));
  for (int64_t i = 0; i < n; ++i) {
    const K k = Keys::key(xu[i], zero_limit);
    keys[i] = k;
    if (counted) radix::count_digits<int(sizeof(K))>(k, counts);
    if constexpr (Keys::kSpecials) {
      below += k < Keys::kZeroKey;
      zeros += k == Keys::kZeroKey;
      nans += k == Keys::kNanKey;
    }
  }
  if (counted) {
    radix::lsd_passes<int(sizeof(K))>(keys, tmp, n, counts, false, finish);
  } else {
    radix::sort_keys(keys, tmp, n, finish, parallel);
  }
  if constexpr (Keys::kSpecials) {
    if (zeros + nans == 0) return;
    int64_t z = below, q = n - nans;
    for (int64_t i = 0; i < n; ++i) {
      const K k = Keys::key(xu[i], zero_limit);
      if (k == Keys::kZeroKey) keys[z++] = xu[i];
      else if (k == Keys::kNanKey) keys[q++] = xu[i];
    }
  }
}

// One operand, one key, rows contiguous: sort the values themselves.
template <typename T>
void sort_values(const Array& x, const Array& out, int64_t rows, int64_t n) {
  const T* in = reinterpret_cast<const T*>(x.data());
  T* o = reinterpret_cast<T*>(out.mutable_data());
  if constexpr (has_radix_key_v<T>) {
    if (n >= 256) {
      using K = typename ValueKeys<T>::K;
      // The refill reads the input after the output is written: keep it when they share.
      std::vector<T> kept;
      if (static_cast<const void*>(in) == static_cast<const void*>(o)) {
        kept.assign(in, in + rows * n);
        in = kept.data();
      }
      const K limit = zero_limit<K>(denormals_are_zero());
      if (rows == 1) {
        // Scratch from the caching allocator: a fresh vector is zeroed and page-faulted on
        // every call (a millisecond at 1e6 keys).
        const DType kt = sizeof(K) == 4 ? DType::U32 : sizeof(K) == 8 ? DType::U64 : DType::U16;
        Array tmp(Shape{n}, kt, out.device(), Event::ready());
        radix_sort_row(in, o, reinterpret_cast<K*>(tmp.mutable_data()), n, limit, PoolParallel{});
        return;
      }
      parallel_for(rows, std::max<int64_t>(1, (1 << 16) / n), [&](int64_t b, int64_t e) {
        std::vector<K> tmp(static_cast<size_t>(n));
        for (int64_t r = b; r < e; ++r)
          radix_sort_row(in + r * n, o + r * n, tmp.data(), n, limit, radix::Serial{});
      });
      return;
    }
  }
  parallel_for(rows, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(n, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   std::copy(in + r * n, in + (r + 1) * n, o + r * n);
                   std::stable_sort(o + r * n, o + (r + 1) * n, key_less<T>);
                 }
               });
}

}  // namespace

void sort(const std::vector<Array>& operands, int64_t dimension, int num_keys,
          const std::vector<Array>& outs) {
  const Array& first = outs[0];
  if (first.size() == 0) return;
  // Dense operands: each row then is (outer, inner) with elements `inner` apart.
  std::vector<Array> xs;
  xs.reserve(operands.size());
  for (const Array& x : operands) {
    if (x.is_contiguous()) {
      xs.push_back(x);
    } else {
      Array dense(x.shape(), x.dtype(), x.device(), Event::ready());
      copy(x, dense);
      xs.push_back(std::move(dense));
    }
  }
  const Shape& shape = first.shape();
  const int64_t n = shape[size_t(dimension)];
  int64_t inner = 1;
  for (size_t d = size_t(dimension) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t rows = first.size() / n;
  if (xs.size() == 1 && inner == 1) {
    visit_dtype(xs[0].dtype(), [&](auto zero) {
      sort_values<decltype(zero)>(xs[0], outs[0], rows, n);
    });
    return;
  }
  std::vector<KeyCompare> compares;
  for (int k = 0; k < num_keys; ++k) compares.push_back(key_compare(xs[size_t(k)].dtype()));
  const bool daz = denormals_are_zero();
  parallel_for(rows, std::max<int64_t>(1, (1 << 14) / n), [&](int64_t b, int64_t e) {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::vector<const char*> keys(static_cast<size_t>(num_keys));
    for (int64_t r = b; r < e; ++r) {
      const int64_t start = (r / inner) * n * inner + r % inner;  // element offset of the row
      for (int k = 0; k < num_keys; ++k)
        keys[size_t(k)] = xs[size_t(k)].data() + start * int64_t(itemsize(xs[size_t(k)].dtype()));
      const bool by_radix =
          num_keys == 1 && n >= 256 && radix_order_of(xs[0].dtype(), keys[0], inner, n, daz, perm);
      if (!by_radix) {
        std::iota(perm.begin(), perm.end(), 0);
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t i, int64_t j) {
        for (int k = 0; k < num_keys; ++k) {
          const int c = compares[size_t(k)](keys[size_t(k)], inner, i, j);
          if (c) return c < 0;
        }
        return false;
        });
      }
      for (size_t o = 0; o < xs.size(); ++o) {
        const size_t size = itemsize(xs[o].dtype());
        const int64_t off = start * int64_t(size);
        permute_row(xs[o].data() + off, outs[o].mutable_data() + off, size, inner, perm);
      }
    }
  });
}

}  // namespace tinyxla::cpu
