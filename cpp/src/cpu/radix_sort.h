// Sorting of bare unsigned keys (no payload) by radix: least-significant digit first for
// ranges the caches hold, most-significant digit first above that (its buckets then sort
// independently, in parallel), insertion sort for tiny ranges. Equal keys are identical, so
// stability does not matter and the result does not depend on how the work is split;
// callers that map several values to one key restore those runs themselves.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace tinyxla::cpu::radix {

constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;
// Ranges up to this many keys sort by insertion.
constexpr int64_t kInsertionMax = 32;
// Ranges up to this many keys sort least-significant digit first.
constexpr int64_t kLsdMax = int64_t(1) << 18;
// Scatter passes over up to this many keys run from both ends (see scatter); above it the
// second stream of misses costs more than the shorter chains gain.
constexpr int64_t kHalvesMax = int64_t(1) << 15;
// Ranges above this many keys split their most-significant-digit pass into chunks.
constexpr int64_t kChunk = int64_t(1) << 16;

template <typename K>
inline int digit_of(K k, int shift) {
  return int((k >> shift) & K(kBuckets - 1));
}

// Runs fn(i) for i in [0, count) one after the other.
struct Serial {
  template <typename Fn>
  void operator()(int64_t count, const Fn& fn) const {
    for (int64_t i = 0; i < count; ++i) fn(i);
  }
};

// Exclusive prefix sums of one digit's counts; false when one bucket holds all n keys (the
// pass would not move anything).
template <typename C>
bool to_offsets(C* c, int64_t n) {
  C sum = 0;
  for (int b = 0; b < kBuckets; ++b) {
    const C t = c[b];
    if (int64_t(t) == n) return false;
    c[b] = sum;
    sum += t;
  }
  return true;
}

template <typename K, typename Finish>
void insertion_sort(K* a, int64_t n, const Finish& finish) {
  for (int64_t i = 1; i < n; ++i) {
    const K k = a[i];
    int64_t j = i;
    for (; j > 0 && a[j - 1] > k; --j) a[j] = a[j - 1];
    a[j] = k;
  }
  for (int64_t i = 0; i < n; ++i) a[i] = finish(a[i]);
}

// dst[positions] = map(src[i]) by the digit at `shift`, c holding each bucket's first
// position. The first half of src fills buckets from their starts forward and the second
// half from their ends backward, in order both: two chains of counter updates, not one,
// where consecutive keys share a bucket (the top digits of floats), and stable all the same;
// ranges above kHalvesMax run forward only.
template <typename K, typename Map>
void scatter(const K* src, K* dst, int64_t n, uint32_t* c, int shift, const Map& map) {
  if (n > kHalvesMax) {
    for (int64_t i = 0; i < n; ++i) {
      const K k = src[i];
      dst[c[digit_of(k, shift)]++] = map(k);
    }
    return;
  }
  uint32_t end[kBuckets];
  for (int b = 0; b + 1 < kBuckets; ++b) end[b] = c[b + 1];
  end[kBuckets - 1] = uint32_t(n);
  const int64_t half = n / 2;
  for (int64_t i = 0; i < half; ++i) {
    const K k = src[i];
    const K q = src[n - 1 - i];
    dst[c[digit_of(k, shift)]++] = map(k);
    dst[--end[digit_of(q, shift)]] = map(q);
  }
  if (n % 2) dst[c[digit_of(src[half], shift)]] = map(src[half]);
}

// Counts each of the low `Digits` digits of k into counts.
template <int Digits, typename K>
inline void count_digits(K k, uint32_t (*counts)[kBuckets]) {
  for (int d = 0; d < Digits; ++d) ++counts[d][digit_of(k, d * kDigitBits)];
}

// Sorts a[0, n) by their low `Digits` digits (any higher digits all equal) least significant
// digit first, n < 2^32, given the counts of those digits (count_digits over a); the result,
// mapped through finish, lands in `a` or `b` as `to_b` says.
template <int Digits, typename K, typename Finish>
void lsd_passes(K* a, K* b, int64_t n, uint32_t (*counts)[kBuckets], bool to_b,
                const Finish& finish) {
  bool moves[Digits];
  int last = -1;  // the last digit whose pass moves keys
  for (int d = 0; d < Digits; ++d) {
    moves[d] = to_offsets(counts[d], n);
    if (moves[d]) last = d;
  }
  K* src = a;
  K* dst = b;
  const auto same = [](K k) { return k; };
  for (int d = 0; d < last; ++d) {
    if (!moves[d]) continue;
    scatter(src, dst, n, counts[d], d * kDigitBits, same);
    std::swap(src, dst);
  }
  K* want = to_b ? b : a;
  if (last >= 0) {
    if (dst == want) return scatter(src, dst, n, counts[last], last * kDigitBits, finish);
    scatter(src, dst, n, counts[last], last * kDigitBits, same);
    std::swap(src, dst);
  }
  for (int64_t i = 0; i < n; ++i) want[i] = finish(src[i]);
}

template <int Digits, typename K, typename Finish>
void lsd(K* a, K* b, int64_t n, bool to_b, const Finish& finish) {
  uint32_t counts[Digits][kBuckets];
  std::memset(counts, 0, sizeof(counts));
  for (int64_t i = 0; i < n; ++i) count_digits<Digits>(a[i], counts);
  lsd_passes<Digits>(a, b, n, counts, to_b, finish);
}

template <typename K, typename Finish>
void lsd_digits(int digits, K* a, K* b, int64_t n, bool to_b, const Finish& finish) {
  switch (digits) {
    case 1: return lsd<1>(a, b, n, to_b, finish);
    case 2: return lsd<2>(a, b, n, to_b, finish);
    case 3: return lsd<3>(a, b, n, to_b, finish);
    case 4: return lsd<4>(a, b, n, to_b, finish);
    case 5: return lsd<5>(a, b, n, to_b, finish);
    case 6: return lsd<6>(a, b, n, to_b, finish);
    case 7: return lsd<7>(a, b, n, to_b, finish);
    default: return lsd<8>(a, b, n, to_b, finish);
  }
}

// Sorts a[0, n) by their `digits` low digits (any higher digits all equal); the result,
// mapped through finish (key -> key), lands in `a` or, when `to_b`, in `b` (n keys of scratch
// either way). parallel(count, fn) runs fn(i) for i in [0, count), possibly at once; the
// buckets of a most-significant-digit pass run under it, and below them all runs serially.
template <typename K, typename Finish, typename Parallel>
void sort_range(K* a, K* b, int64_t n, int digits, bool to_b, const Finish& finish,
                const Parallel& parallel) {
  if (n <= kInsertionMax || digits == 0) {
    if (to_b) std::copy(a, a + n, b);
    insertion_sort(to_b ? b : a, n, finish);
    return;
  }
  if (n <= kLsdMax) return lsd_digits(digits, a, b, n, to_b, finish);
  // Most significant digit first: chunks count their keys by digit, then scatter them.
  const int shift = (digits - 1) * kDigitBits;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<int64_t> counts(size_t(chunks) * kBuckets, 0);
  parallel(chunks, [&](int64_t c) {
    int64_t* h = &counts[size_t(c) * kBuckets];
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i) ++h[digit_of(a[i], shift)];
  });
  std::vector<int64_t> start(kBuckets + 1, 0);
  for (int64_t c = 0; c < chunks; ++c)
    for (int d = 0; d < kBuckets; ++d) start[size_t(d) + 1] += counts[size_t(c * kBuckets + d)];
  if (std::find(start.begin() + 1, start.end(), n) != start.end())
    return sort_range(a, b, n, digits - 1, to_b, finish, parallel);
  for (int d = 0; d < kBuckets; ++d) start[size_t(d) + 1] += start[size_t(d)];
  // counts becomes each chunk's next write position per digit.
  for (int d = 0; d < kBuckets; ++d) {
    int64_t pos = start[size_t(d)];
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t t = counts[size_t(c * kBuckets + d)];
      counts[size_t(c * kBuckets + d)] = pos;
      pos += t;
    }
  }
  parallel(chunks, [&](int64_t c) {
    int64_t* next = &counts[size_t(c) * kBuckets];
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i) {
      const K k = a[i];
      b[next[digit_of(k, shift)]++] = k;
    }
  });
  // The buckets in up to kGroups runs of about equal key counts, so that a few large buckets
  // next to each other do not all fall to one thread.
  constexpr int64_t kGroups = 8;
  std::vector<int> group_end;
  for (int d = 1; d <= kBuckets; ++d)
    if (d == kBuckets || start[size_t(d)] * kGroups / n > start[size_t(d) - 1] * kGroups / n)
      group_end.push_back(d);
  parallel(int64_t(group_end.size()), [&](int64_t g) {
    for (int d = g == 0 ? 0 : group_end[size_t(g) - 1]; d < group_end[size_t(g)]; ++d) {
      const int64_t off = start[size_t(d)];
      sort_range(b + off, a + off, start[size_t(d) + 1] - off, digits - 1, !to_b, finish,
                 Serial{});
    }
  });
}

// Sorts keys[0, n) ascending, with n keys of scratch, and maps each through finish; see
// sort_range for parallel.
template <typename K, typename Finish, typename Parallel>
void sort_keys(K* keys, K* scratch, int64_t n, const Finish& finish, const Parallel& parallel) {
  sort_range(keys, scratch, n, int(sizeof(K)), false, finish, parallel);
}

}  // namespace tinyxla::cpu::radix
