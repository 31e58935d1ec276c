// lax.fft on the CPU with our own kernels (no FFT library is needed to build).
//
// A complex transform of length n is a plan of Stockham auto-sort passes, one per factor
// of n (radix 4 first, then 2, then the odd primes; 3, 5, 7, 11, 13 and 17 have unrolled
// butterflies, other primes up to kMaxRadix a generic one), ping-ponging between the data
// and a work buffer so that no bit-reversal pass is needed. A length with a prime factor
// above kMaxRadix goes through Bluestein's algorithm: a chirp product and a convolution
// done by two transforms of a 2,3,5,7-smooth length >= 2n-1. Real transforms of even
// length pack the n reals as n/2 complex numbers and untangle the half-length transform.
// Twiddles are computed in double precision. Batches of lines (rows, or the columns of an
// axis other than the last) go through the same passes L lines at a time, one line per SIMD
// lane (fft_lanes.h); a single line, Bluestein's lengths and long lines run one at a time.
#include "fft.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>

#include "../core/thread_pool.h"
#include "fft_lanes.h"
#include "kernels.h"
#include "vmath.h"
#include "tinyxla/error.h"

namespace tinyxla::cpu {

// The generic build of the kernels (16-byte vectors), which also serves single lines.
namespace fft_lanes::generic {
#define TINYXLA_FFT_VBYTES 16
#include "fft_kernels.inc"
#undef TINYXLA_FFT_VBYTES
}  // namespace fft_lanes::generic

namespace {

using fft_lanes::PassView;
using fft_lanes::generic::C;
using fft_lanes::generic::conj;
using fft_lanes::generic::dispatch_pass;
using fft_lanes::generic::irfft_tangle;
using fft_lanes::generic::kMaxRadix;
using fft_lanes::generic::mul;
using fft_lanes::generic::rfft_untangle;
using fft_lanes::generic::scale;

// exp(-2 pi i k / n), from k reduced mod n, in double precision.
template <class R>
C<R> root(int64_t k, int64_t n) {
  k %= n;
  const double a = -2.0 * M_PI * double(k) / double(n);
  return {R(std::cos(a)), R(std::sin(a))};
}

template <class R>
struct Pass {
  int radix;
  int64_t m, s;            // sub-transforms of length radix*m, s of them interleaved
  std::vector<C<R>> tw;    // tw[p*(radix-1) + k-1] = exp(-2 pi i p k / (radix*m))
  std::vector<R> cs, sn;   // cos, sin of 2 pi k / radix (odd radices)
};

// The smallest 2,3,5,7-smooth number >= n.
int64_t smooth_size(int64_t n) {
  int64_t best = int64_t(1) << 62;
  for (int64_t f7 = 1; f7 < best; f7 *= 7)
    for (int64_t f5 = f7; f5 < best; f5 *= 5)
      for (int64_t f3 = f5; f3 < best; f3 *= 3) {
        int64_t v = f3;
        while (v < n) v *= 2;
        best = std::min(best, v);
      }
  return best;
}

// Elements a thread should get at least, so that waking it pays off.
constexpr int64_t kGrainElements = 1 << 14;

template <class R>
class Plan {
 public:
  explicit Plan(int64_t n) : n_(n) {
    std::vector<int> factors;
    int64_t rest = n;
    while (rest % 4 == 0) factors.push_back(4), rest /= 4;
    if (rest % 2 == 0) factors.push_back(2), rest /= 2;
    for (int64_t f = 3; f * f <= rest; f += 2)
      while (rest % f == 0) factors.push_back(int(f)), rest /= f;
    if (rest > 1) {
      factors.push_back(int(std::min<int64_t>(rest, kMaxRadix + 1)));
    }
    if (!factors.empty() && *std::max_element(factors.begin(), factors.end()) > kMaxRadix) {
      make_bluestein();
      return;
    }
    int64_t len = n, s = 1;
    for (int f : factors) {
      Pass<R> ps;
      ps.radix = f;
      ps.m = len / f;
      ps.s = s;
      ps.tw.resize(size_t(ps.m * (f - 1)));
      for (int64_t p = 0; p < ps.m; ++p)
        for (int k = 1; k < f; ++k) ps.tw[size_t(p * (f - 1) + k - 1)] = root<R>(p * k, len);
      if (f % 2 == 1 && f != 3) {
        ps.cs.resize(size_t(f));
        ps.sn.resize(size_t(f));
        for (int k = 0; k < f; ++k) {
          ps.cs[size_t(k)] = R(std::cos(2.0 * M_PI * k / f));
          ps.sn[size_t(k)] = R(std::sin(2.0 * M_PI * k / f));
        }
      }
      passes_.push_back(std::move(ps));
      len /= f;
      s *= f;
    }
    for (const Pass<R>& ps : passes_)
      views_.push_back({ps.radix, ps.m, ps.s, &ps.tw[0].re, ps.cs.data(), ps.sn.data()});
  }
  // views_ points into passes_.
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  int64_t size() const { return n_; }
  bool is_bluestein() const { return sub_ != nullptr; }
  // The passes (none for Bluestein's plans), for the lanes kernels.
  const std::vector<PassView<R>>& passes() const { return views_; }
  // Complex elements of scratch that run() needs.
  int64_t work_size() const { return sub_ ? m_ + sub_->work_size() : n_; }

  // The unnormalized transform of data[0..n) in place; `parallel` splits each pass over the
  // pool (for a transform long enough to be worth it).
  void run(C<R>* data, C<R>* work, bool inverse, bool parallel) const {
    if (sub_) return bluestein(data, work, inverse, parallel);
    C<R>* x = data;
    C<R>* y = work;
    for (const PassView<R>& ps : views_) {
      run_split(ps, x, y, inverse, parallel);
      std::swap(x, y);
    }
    if (x != data) copy_n(x, n_, data, parallel);
  }

 private:
  void make_bluestein() {
    m_ = smooth_size(2 * n_ - 1);
    sub_ = std::make_shared<const Plan<R>>(m_);
    chirp_.resize(size_t(n_));
    const int64_t two_n = 2 * n_;
    for (int64_t k = 0; k < n_; ++k) {
      // exp(-pi i k^2 / n) = root(k^2 mod 2n, 2n); k^2 < 2^62 for the sizes we accept.
      const uint64_t k2 = (uint64_t(k) * uint64_t(k)) % uint64_t(two_n);
      chirp_[size_t(k)] = root<R>(int64_t(k2), two_n);
    }
    // The convolution kernel conj(chirp) at offsets -(n-1)..n-1, transformed, with the
    // inverse transform's 1/m folded in.
    kernel_.assign(size_t(m_), C<R>{0, 0});
    for (int64_t k = 0; k < n_; ++k) {
      kernel_[size_t(k)] = conj(chirp_[size_t(k)]);
      if (k) kernel_[size_t(m_ - k)] = conj(chirp_[size_t(k)]);
    }
    std::vector<C<R>> work(static_cast<size_t>(sub_->work_size()));
    sub_->run(kernel_.data(), work.data(), false, false);
    const R inv_m = R(1) / R(m_);
    for (C<R>& v : kernel_) v = scale(v, inv_m);
  }

  void bluestein(C<R>* data, C<R>* work, bool inverse, bool parallel) const {
    C<R>* a = work;
    C<R>* sub_work = work + m_;
    // The inverse transform is the conjugate of the forward one of the conjugate.
    for_range(n_, parallel, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const C<R> v = inverse ? conj(data[k]) : data[k];
        a[k] = mul(v, chirp_[size_t(k)]);
      }
    });
    std::fill(a + n_, a + m_, C<R>{0, 0});
    sub_->run(a, sub_work, false, parallel);
    for_range(m_, parallel, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) a[k] = mul(a[k], kernel_[size_t(k)]);
    });
    sub_->run(a, sub_work, true, parallel);
    for_range(n_, parallel, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const C<R> v = mul(a[k], chirp_[size_t(k)]);
        data[k] = inverse ? conj(v) : v;
      }
    });
  }

  template <class F>
  static void for_range(int64_t n, bool parallel, const F& f) {
    if (parallel && n >= 2 * kGrainElements) parallel_for(n, kGrainElements, f);
    else f(0, n);
  }

  static void copy_n(const C<R>* x, int64_t n, C<R>* y, bool parallel) {
    for_range(n, parallel, [&](int64_t b, int64_t e) {
      std::memcpy(y + b, x + b, size_t(e - b) * sizeof(C<R>));
    });
  }

  void run_split(const PassView<R>& ps, const C<R>* x, C<R>* y, bool inverse, bool parallel) const {
    const auto go = [&](int64_t p0, int64_t p1, int64_t q0, int64_t q1) {
      if (inverse) dispatch_pass<true>(ps, x, y, p0, p1, q0, q1);
      else dispatch_pass<false>(ps, x, y, p0, p1, q0, q1);
    };
    if (!parallel || n_ < 2 * kGrainElements) return go(0, ps.m, 0, ps.s);
    const int64_t per_p = ps.s * ps.radix;  // elements one p covers
    if (ps.m >= 2 * pool_size())
      parallel_for(ps.m, std::max<int64_t>(1, kGrainElements / per_p),
                   [&](int64_t b, int64_t e) { go(b, e, 0, ps.s); });
    else
      parallel_for(ps.s, std::max<int64_t>(1, kGrainElements / (ps.m * ps.radix)),
                   [&](int64_t b, int64_t e) { go(0, ps.m, b, e); });
  }

  int64_t n_;
  std::vector<Pass<R>> passes_;
  std::vector<PassView<R>> views_;
  // Bluestein: the plan of length m_ >= 2n-1, the chirp exp(-pi i k^2/n) and the
  // transformed convolution kernel.
  std::shared_ptr<const Plan<R>> sub_;
  int64_t m_ = 0;
  std::vector<C<R>> chirp_, kernel_;
};

// Plans are built once per length and precision and shared (a bounded cache).
template <class R>
std::shared_ptr<const Plan<R>> plan_for(int64_t n) {
  static std::mutex mu;
  static std::map<int64_t, std::shared_ptr<const Plan<R>>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(n);
    if (it != cache.end()) return it->second;
  }
  auto plan = std::make_shared<const Plan<R>>(n);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 64) cache.clear();
  return cache.emplace(n, std::move(plan)).first->second;
}

// Work of one transform of length n, in element-operations, for grain sizes.
int64_t transform_cost(int64_t n) {
  int64_t lg = 1;
  while ((int64_t(1) << lg) < n) ++lg;
  return 5 * n * lg;
}

std::atomic<vmath::Isa> lane_isa{vmath::isa_supported(vmath::Isa::Avx512) ? vmath::Isa::Avx512
                                  : vmath::isa_supported(vmath::Isa::Avx2) ? vmath::Isa::Avx2
                                                                            : vmath::Isa::Generic};

// The lanes kernels for this CPU.
template <class R>
const fft_lanes::Kernels<R>& lane_kernels() {
  const vmath::Isa isa = lane_isa.load(std::memory_order_relaxed);
  const fft_lanes::Table& table = isa == vmath::Isa::Avx512 ? fft_lanes::avx512::table()
                                  : isa == vmath::Isa::Avx2 ? fft_lanes::avx2::table()
                                                            : fft_lanes::generic::table();
  if constexpr (std::is_same_v<R, float>) return table.f32;
  else return table.f64;
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
// The calling thread's lanes buffer of at least `count` reals, 64-byte aligned (the kernels
// read it as vectors). It only grows and is kept between calls: a fresh buffer of a few
// hundred KiB per parallel_for chunk was an mmap and its page faults each time.
template <class R>
R* lane_buffer(int64_t count) {
  thread_local std::unique_ptr<R[], FreeDeleter> buf;
  thread_local int64_t size = 0;
  if (count > size) {
    R* p = static_cast<R*>(std::aligned_alloc(64, (size_t(count) * sizeof(R) + 63) / 64 * 64));
    if (!p) throw std::bad_alloc();
    buf.reset(p);
    size = count;
  }
  return buf.get();
}

// Lines of at most this length go through the lanes kernels (L of them and their scratch
// then stay within a core's L2 cache), from kMinLaneLines of them on (fewer would leave
// most lanes idle).
constexpr int64_t kMaxLaneLength = 1 << 13;
constexpr int64_t kMinLaneLines = 4;

template <class R>
bool use_lanes(const Plan<R>* plan, int64_t lines) {
  return plan && !plan->is_bluestein() && plan->size() <= kMaxLaneLength &&
         lines >= kMinLaneLines;
}

// Grain, in batches of L lines of length n, for parallel_for.
int64_t lane_grain(int64_t n, int64_t lanes) {
  return std::max<int64_t>(1, kGrainElements * 8 / (transform_cost(n) * lanes));
}

// The twiddles of a real transform of even length n: w[k] = root(k, n), k < n/2.
template <class R>
std::vector<C<R>> half_twiddles(int64_t n) {
  std::vector<C<R>> w(static_cast<size_t>(n / 2));
  for (int64_t k = 0; k < n / 2; ++k) w[size_t(k)] = root<R>(k, n);
  return w;
}

// Runs block(k, a, work, r0, used) for the rows in blocks of the lane count L (rows r0 to
// r0 + used), spread over the pool; a and work each hold L lines of `width` complex values.
// `n` is the transform length (for the grain).
template <class R, class Block>
void for_lane_blocks(int64_t rows, int64_t n, int64_t width, Block&& block) {
  const fft_lanes::Kernels<R>& k = lane_kernels<R>();
  const int64_t L = k.lanes;
  parallel_for((rows + L - 1) / L, lane_grain(n, L), [&](int64_t b, int64_t e) {
    R* a = lane_buffer<R>(4 * L * width);
    R* work = a + 2 * L * width;
    for (int64_t i = b; i < e; ++i) block(k, a, work, i * L, int(std::min(L, rows - i * L)));
  });
}

// Transforms `outer` blocks of `stride` lines of length n (line c of block o starts at
// src + o*n*stride + c, its elements stride apart) into the same places of data (src may be
// data) L at a time: L consecutive rows when stride is 1, else L adjacent columns, whose
// values at one position are one contiguous run.
template <class R>
void transform_lanes(const C<R>* src, C<R>* data, int64_t outer, int64_t n, int64_t stride,
                     bool inverse, const Plan<R>& plan) {
  const fft_lanes::Kernels<R>& k = lane_kernels<R>();
  const int64_t L = k.lanes;
  const int64_t col_batches = (stride + L - 1) / L;
  const int64_t batches = stride == 1 ? (outer + L - 1) / L : outer * col_batches;
  const std::vector<PassView<R>>& passes = plan.passes();
  parallel_for(batches, lane_grain(n, L), [&](int64_t b, int64_t e) {
    R* a = lane_buffer<R>(4 * L * n);
    R* work = a + 2 * L * n;
    for (int64_t i = b; i < e; ++i) {
      int64_t offset, line_stride, used;
      if (stride == 1) {
        offset = i * L * n;
        line_stride = n;
        used = std::min(L, outer - i * L);
      } else {
        const int64_t c0 = (i % col_batches) * L;
        offset = (i / col_batches) * n * stride + c0;
        line_stride = 1;
        used = std::min(L, stride - c0);
      }
      k.load(&src[offset].re, line_stride, stride, n, int(used), a);
      const R* z = k.run(passes.data(), int(passes.size()), a, work, inverse);
      k.store(z, n, int(used), &data[offset].re, line_stride, stride);
    }
  });
}

// Transforms `rows` contiguous rows of length n in place, one at a time.
template <class R>
void transform_rows(C<R>* data, int64_t rows, int64_t n, bool inverse, const Plan<R>& plan) {
  if (rows < pool_size() && n >= 4 * kGrainElements) {
    std::vector<C<R>> work(static_cast<size_t>(plan.work_size()));
    for (int64_t r = 0; r < rows; ++r) plan.run(data + r * n, work.data(), inverse, true);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainElements * 8 / transform_cost(n));
  parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    std::vector<C<R>> work(static_cast<size_t>(plan.work_size()));
    for (int64_t r = b; r < e; ++r) plan.run(data + r * n, work.data(), inverse, false);
  });
}

// Transforms src along an axis of length n whose elements are `stride` apart, in `outer`
// blocks of n*stride elements, into data (src may be data). Batches go through the lanes;
// otherwise data is transformed in place, columns gathered kBlock at a time into
// contiguous lines.
template <class R>
void transform_axis(const C<R>* src, C<R>* data, int64_t outer, int64_t n, int64_t stride,
                    bool inverse) {
  if (outer * stride == 0) return;
  const auto plan = n > 1 ? plan_for<R>(n) : nullptr;
  if (use_lanes(plan.get(), outer * stride))
    return transform_lanes(src, data, outer, n, stride, inverse, *plan);
  if (src != data) std::memcpy(data, src, size_t(outer * n * stride) * sizeof(C<R>));
  if (!plan) return;
  if (stride == 1) return transform_rows(data, outer, n, inverse, *plan);
  constexpr int64_t kBlock = 8;
  const int64_t col_blocks = (stride + kBlock - 1) / kBlock;
  const int64_t items = outer * col_blocks;
  const bool inner_parallel = items < pool_size() && n >= 4 * kGrainElements;
  const int64_t grain =
      std::max<int64_t>(1, kGrainElements * 8 / (transform_cost(n) * kBlock));
  const auto body = [&](int64_t b, int64_t e) {
    std::vector<C<R>> lines(static_cast<size_t>(n * kBlock));
    std::vector<C<R>> work(static_cast<size_t>(plan->work_size()));
    for (int64_t item = b; item < e; ++item) {
      C<R>* base = data + (item / col_blocks) * n * stride;
      const int64_t c0 = (item % col_blocks) * kBlock;
      const int64_t cols = std::min(kBlock, stride - c0);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < cols; ++c) lines[size_t(c * n + i)] = base[i * stride + c0 + c];
      for (int64_t c = 0; c < cols; ++c)
        plan->run(lines.data() + c * n, work.data(), inverse, inner_parallel);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < cols; ++c) base[i * stride + c0 + c] = lines[size_t(c * n + i)];
    }
  };
  if (inner_parallel) body(0, items);
  else parallel_for(items, grain, body);
}

template <class R>
void scale_all(C<R>* data, int64_t count, R factor) {
  parallel_for(count, kGrainElements, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) data[i] = scale(data[i], factor);
  });
}

// Complex transforms of src (dense, shape `shape`; it may be data) over its trailing axes
// into data, unnormalized; the last axis first (from src, the others in place).
template <class R>
void transform_trailing(const C<R>* src, C<R>* data, const Shape& shape, size_t axes,
                        bool inverse) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (total == 0) return;
  if (axes == 0 && src != data) std::memcpy(data, src, size_t(total) * sizeof(C<R>));
  int64_t stride = 1;
  for (size_t i = 0; i < axes; ++i) {
    const int64_t n = shape[shape.size() - 1 - i];
    transform_axis(i == 0 ? src : data, data, total / (n * stride), n, stride, inverse);
    stride *= n;
  }
}

// Each row x[0..n) (real) to its n/2+1 non-negative frequencies out[0..n/2].
template <class R>
void rfft_rows(const R* x, int64_t rows, int64_t n, C<R>* out) {
  const int64_t h = n / 2, width = h + 1;
  if (n % 2) {
    const auto plan = plan_for<R>(n);
    const bool inner = rows < pool_size() && n >= 4 * kGrainElements;
    const auto body = [&](int64_t b, int64_t e) {
      std::vector<C<R>> line(static_cast<size_t>(n)), work(static_cast<size_t>(plan->work_size()));
      for (int64_t r = b; r < e; ++r) {
        for (int64_t i = 0; i < n; ++i) line[size_t(i)] = {x[r * n + i], R(0)};
        plan->run(line.data(), work.data(), false, inner);
        std::memcpy(out + r * width, line.data(), size_t(width) * sizeof(C<R>));
      }
    };
    if (inner) body(0, rows);
    else parallel_for(rows, std::max<int64_t>(1, kGrainElements * 8 / transform_cost(n)), body);
    return;
  }
  // Even n: the transform of z_j = x_{2j} + i x_{2j+1}, untangled (rfft_untangle).
  const std::vector<C<R>> w = half_twiddles<R>(n);
  const auto plan = h > 1 ? plan_for<R>(h) : nullptr;
  if (use_lanes(plan.get(), rows)) {
    const std::vector<PassView<R>>& passes = plan->passes();
    for_lane_blocks<R>(rows, h, width, [&](const fft_lanes::Kernels<R>& k, R* a, R* work,
                                           int64_t r0, int used) {
      // A row's reals read as h complex values are its z.
      k.load(x + r0 * n, h, 1, h, used, a);
      R* z = k.run(passes.data(), int(passes.size()), a, work, false);
      k.rfft_untangle(z, h, &w[0].re);
      k.store(z, width, used, &out[r0 * width].re, width, 1);
    });
    return;
  }
  for (int64_t r = 0; r < rows; ++r) std::memcpy(out + r * width, x + r * n, size_t(n) * sizeof(R));
  // The packed rows are width apart; transform each in place.
  const bool inner = rows < pool_size() && h >= 4 * kGrainElements;
  const auto body = [&](int64_t b, int64_t e) {
    std::vector<C<R>> work(static_cast<size_t>(plan ? plan->work_size() : 0));
    for (int64_t r = b; r < e; ++r) {
      C<R>* z = out + r * width;
      if (plan) plan->run(z, work.data(), false, inner);
      rfft_untangle(z, h, w.data());
    }
  };
  if (inner) body(0, rows);
  else parallel_for(rows, std::max<int64_t>(1, kGrainElements * 8 / transform_cost(n)), body);
}

// Each row of n/2+1 frequencies x (Hermitian half; the imaginary parts of the zero and
// Nyquist frequencies are ignored) to n reals, times `factor` (1/n for a normalized
// inverse).
template <class R>
void irfft_rows(const C<R>* x, int64_t rows, int64_t n, R factor, R* out) {
  const int64_t h = n / 2, width = h + 1;
  const bool inner = rows < pool_size() && n >= 8 * kGrainElements;
  const int64_t grain = std::max<int64_t>(1, kGrainElements * 8 / transform_cost(n));
  if (n % 2) {
    const auto plan = plan_for<R>(n);
    const auto body = [&](int64_t b, int64_t e) {
      std::vector<C<R>> line(static_cast<size_t>(n)), work(static_cast<size_t>(plan->work_size()));
      for (int64_t r = b; r < e; ++r) {
        const C<R>* xr = x + r * width;
        line[0] = {xr[0].re, R(0)};
        for (int64_t k = 1; k <= h; ++k) {
          line[size_t(k)] = xr[k];
          line[size_t(n - k)] = conj(xr[k]);
        }
        plan->run(line.data(), work.data(), true, inner);
        for (int64_t i = 0; i < n; ++i) out[r * n + i] = line[size_t(i)].re * factor;
      }
    };
    if (inner) body(0, rows);
    else parallel_for(rows, grain, body);
    return;
  }
  // Even n: the inverse half-length transform of the tangled spectrum (irfft_tangle) holds
  // the even reals in its real and the odd ones in its imaginary parts.
  const std::vector<C<R>> w = half_twiddles<R>(n);
  const auto plan = h > 1 ? plan_for<R>(h) : nullptr;
  if (use_lanes(plan.get(), rows)) {
    const std::vector<PassView<R>>& passes = plan->passes();
    for_lane_blocks<R>(rows, h, width, [&](const fft_lanes::Kernels<R>& k, R* a, R* work,
                                           int64_t r0, int used) {
      k.load(&x[r0 * width].re, width, 1, width, used, a);
      k.irfft_tangle(a, work, h, &w[0].re);
      R* z = k.run(passes.data(), int(passes.size()), work, a, true);
      k.scale(z, h, factor);
      // h complex values of a row are its n reals.
      k.store(z, h, used, out + r0 * n, h, 1);
    });
    return;
  }
  const auto body = [&](int64_t b, int64_t e) {
    std::vector<C<R>> work(static_cast<size_t>(plan ? plan->work_size() : 0));
    for (int64_t r = b; r < e; ++r) {
      const C<R>* xr = x + r * width;
      C<R>* z = reinterpret_cast<C<R>*>(out + r * n);
      irfft_tangle(xr, z, h, w.data());
      if (plan) plan->run(z, work.data(), true, inner);
      const R f = factor;
      for (int64_t k = 0; k < h; ++k) z[k] = scale(z[k], f);
    }
  };
  if (inner) body(0, rows);
  else parallel_for(rows, grain, body);
}

// `x` as a dense array (a copy when it is a strided view).
Array dense_array(const Array& x) {
  if (x.is_contiguous()) return x;
  Array d(x.shape(), x.dtype(), x.device(), Event::ready());
  copy(x, d);
  return d;
}

template <class R>
void fft_typed(FftType type, const std::vector<int64_t>& lengths, const Array& x,
               const Array& out) {
  using Cx = C<R>;
  const size_t k = lengths.size();
  const Shape& out_shape = out.shape();
  if (out.size() == 0) return;
  const int64_t n_last = lengths.back();
  int64_t total_length = 1;
  for (int64_t l : lengths) total_length *= l;
  switch (type) {
    case FftType::fft:
    case FftType::ifft: {
      Cx* o = reinterpret_cast<Cx*>(out.mutable_data());
      // The first pass reads a dense x in place of a copy.
      const Cx* src = reinterpret_cast<const Cx*>(x.data());
      if (!x.is_contiguous()) {
        copy(x, out);
        src = o;
      }
      const bool inverse = type == FftType::ifft;
      transform_trailing(src, o, out_shape, k, inverse);
      if (inverse && total_length > 1) scale_all(o, out.size(), R(1) / R(total_length));
      return;
    }
    case FftType::rfft: {
      const Array xd = dense_array(x);
      Cx* o = reinterpret_cast<Cx*>(out.mutable_data());
      const int64_t width = out_shape.back();
      const int64_t rows = out.size() / width;
      if (n_last == 0) {
        std::fill(o, o + out.size(), Cx{0, 0});
        return;
      }
      rfft_rows(reinterpret_cast<const R*>(xd.data()), rows, n_last, o);
      // The other axes: complex transforms of the half spectrum.
      int64_t stride = width;
      for (size_t i = 1; i < k; ++i) {
        const int64_t n = out_shape[out_shape.size() - 1 - i];
        transform_axis(o, o, out.size() / (n * stride), n, stride, false);
        stride *= n;
      }
      return;
    }
    case FftType::irfft: {
      R* o = reinterpret_cast<R*>(out.mutable_data());
      const Shape& in_shape = x.shape();
      const int64_t width = in_shape.back();
      const int64_t in_size = x.size();
      if (in_size == 0 || n_last == 0) {
        std::fill(o, o + out.size(), R(0));
        return;
      }
      // The complex inverse transforms over the other axes need a scratch copy.
      Array spectrum(in_shape, x.dtype(), x.device(), Event::ready());
      copy(x, spectrum);
      Cx* s = reinterpret_cast<Cx*>(spectrum.mutable_data());
      int64_t stride = width;
      for (size_t i = 1; i < k; ++i) {
        const int64_t n = in_shape[in_shape.size() - 1 - i];
        transform_axis(s, s, in_size / (n * stride), n, stride, true);
        stride *= n;
      }
      irfft_rows(s, in_size / width, n_last, R(1) / R(total_length), o);
      return;
    }
  }
}

}  // namespace

void set_fft_isa_for_testing(vmath::Isa isa) {
  if (!vmath::isa_supported(isa))
    throw_error(ErrorKind::InvalidArgument, "fft", "this CPU cannot run the kernels of that ISA");
  lane_isa.store(isa, std::memory_order_relaxed);
}

void fft(FftType type, const std::vector<int64_t>& lengths, const Array& x, const Array& out) {
  const DType real = type == FftType::irfft ? out.dtype() : x.dtype();
  const bool wide = real == DType::F64 || real == DType::C128;
  if (wide) fft_typed<double>(type, lengths, x, out);
  else fft_typed<float>(type, lengths, x, out);
}

}  // namespace tinyxla::cpu
