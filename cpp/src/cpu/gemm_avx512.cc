// AVX-512 float32 gemm in the GotoBLAS/BLIS structure. For each KC x NC block of b, packed
// once into NR-wide panels (shared by the pool's threads), each thread packs MC x KC blocks
// of a into MR-row panels, and a register-blocked microkernel computes MR x NR tiles of c
// with zmm FMAs. Small products read a (and a row-major b) in place: packing would cost
// as much as the product.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

#include "../core/thread_pool.h"
#include "gemm.h"

namespace tinyxla::cpu::gemm {
namespace {

// The microkernel: kMR rows x kNV zmm vectors of c in registers (kMR * kNV accumulators of
// the 32 zmm registers, plus kNV for b and one broadcast of a).
constexpr int kMR = 14;
constexpr int kNV = 2;
constexpr int kNR = 16 * kNV;
// Blocking: a KC x NC block of b is packed once and shared from L3; the microkernel streams
// an MC x KC block of a (packed or in place) from L2 (1 MiB) against a KC x NR panel of b.
// On one core of Zen 5 (48 KiB L1), n = 512..2048: KC 384 / MC 112 against 256 / 168 took
// n = 2048 from 200 to 215 GFLOP/s; NC from 512 to 4096 made no difference; 12x32 and 6x64
// tiles came within 3% of 14x32, 8x48 was slower below n = 256. On one core of Zen 4
// (32 KiB L1; thread CPU time), KC 1152 against 384 took n = 1024 from 99 to 105 GFLOP/s,
// 2048 from 100 to 104, 32768x576x64 from 98 to 106, 16384x1152x64 from 99 to 110: each
// KC block loads and stores c once more (and cuts in-place rows of a into shorter strided
// runs), while a panel of b beyond L1 cost little. The block of a (504 KiB) and the panel
// (144 KiB) still fit L2. NC 2048 keeps the packed block of b (and its scratch) at 9 MiB,
// near the 6 MiB of 384 x 4096: n = 4096 ran at 107 GFLOP/s with NC 2048 and with 4096.
constexpr int64_t kKC = 1152;
constexpr int64_t kMC = kMR * 8;
constexpr int64_t kNC = 2048;
// Floats ahead of the broadcasts at which a's rows are prefetched into L1 when read in
// place (two cache lines): its rows come from memory (a convolution's patches are read
// once), one line per 16 steps, and the hardware prefetchers fall behind on 14 strided
// streams. 32768x576x64 on one core: from 99 to 105 GFLOP/s; 64 and 128 floats were
// slower, prefetching into L2 gained nothing.
constexpr int64_t kPrefetchA = 32;
// m * n * k up to which a (and b when row-major) are read in place.
constexpr double kInPlace = double(1 << 18);
// Rows of a up to which a row-major b is read in place at any size: each panel of b
// would serve too few rows to repay packing it.
constexpr int64_t kFewRows = 28;
// Columns of c up to which a row-major a is read in place at any size: each panel of a
// serves few panels of b, and packing it (a transpose) cost more than the strided
// broadcasts: 16384x576x64 (a convolution's patches) went from 78 to 91 GFLOP/s on one
// core, 8192x768x64 from 80 to 96. Not when a's rows are a multiple of 4 KiB apart: they
// then share one L1 set, and 4096x1024x128 lost 10%.
constexpr int64_t kFewCols = 256;
// m * n * k of a pool chunk from which a worker is woken even on a busy machine
// (as dot.cc's kLongChunkWork).
constexpr double kLongChunkWork = double(1 << 24);

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The lanes of vector v (16 columns each) among the first `cols` columns.
__mmask16 lane_mask(int64_t cols, int v) {
  const int64_t r = cols - 16 * int64_t(v);
  return r >= 16 ? __mmask16(0xFFFF) : r <= 0 ? __mmask16(0) : __mmask16((1u << r) - 1);
}

// c[MR x cols] = (or += when `accumulate`) a[MR x k] * b[k x cols], cols <= kNR.
// a: element (i, p) at a[i * as + p] when ARows, else at a[p * as + i] (a packed panel:
// as = kMR). b: row p at b + p * bs; a packed panel (BPacked, bs = kNR) is zero-padded to
// kNR columns and loads whole, rows in place load masked to `cols`.
template <int MR, bool ARows, bool BPacked>
void kernel(int64_t k, const float* a, int64_t as, const float* b, int64_t bs, int64_t cols,
            float* c, int64_t ldc, bool accumulate) {
  // The loops over i and v unroll fully (pragmas: without them GCC keeps acc in memory).
  __mmask16 mask[kNV];
#pragma GCC unroll 4
  for (int v = 0; v < kNV; ++v) mask[v] = lane_mask(cols, v);
  __m512 acc[MR][kNV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    // The tile of c is fetched while the k loop runs: rows of a large c are in L3 or
    // memory, and a row stride of a multiple of 4 KiB maps them all to one L1 set.
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + kNR - 1), _MM_HINT_T0);
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) acc[i][v] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    __m512 bv[kNV];
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v)
      bv[v] = BPacked ? _mm512_load_ps(b + 16 * v) : _mm512_maskz_loadu_ps(mask[v], b + 16 * v);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(ARows ? a[i * as] : a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < kNV; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    if (ARows) {
      // One row per step: each of the MR rows is prefetched once every 16 steps (one
      // line); the two steps with p % 16 >= MR repeat the last row.
      const int64_t r = std::min<int64_t>(p & 15, MR - 1);
      _mm_prefetch(reinterpret_cast<const char*>(a + r * as + kPrefetchA), _MM_HINT_T0);
    }
    a += ARows ? 1 : as;
    b += bs;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) {
      float* ci = c + i * ldc + 16 * v;
      __m512 r = acc[i][v];
      if (accumulate) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(mask[v], ci));
      _mm512_mask_storeu_ps(ci, mask[v], r);
    }
}

using Kernel = void (*)(int64_t, const float*, int64_t, const float*, int64_t, int64_t, float*,
                        int64_t, bool);

// Kernels for 1..kMR rows (the last panel of a has m % kMR rows).
template <bool ARows, bool BPacked, size_t... I>
constexpr std::array<Kernel, kMR> kernels(std::index_sequence<I...>) {
  return {&kernel<int(I) + 1, ARows, BPacked>...};
}
template <bool ARows, bool BPacked>
constexpr std::array<Kernel, kMR> kKernels =
    kernels<ARows, BPacked>(std::make_index_sequence<kMR>{});

Kernel pick(bool a_rows, bool b_packed, int64_t rows) {
  const size_t r = size_t(rows - 1);
  if (a_rows) return b_packed ? kKernels<true, true>[r] : kKernels<true, false>[r];
  return b_packed ? kKernels<false, true>[r] : kKernels<false, false>[r];
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};

// A grow-only 64-byte-aligned buffer, one per thread and use, so that packing allocates
// only when a product is larger than any before it on that thread.
class Scratch {
 public:
  float* get(int64_t n) {
    if (n > size_) {
      const size_t bytes = size_t(ceil_div(n * int64_t(sizeof(float)), 64) * 64);
      buf_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      if (!buf_) throw std::bad_alloc();
      size_ = n;
    }
    return buf_.get();
  }

 private:
  std::unique_ptr<float, FreeDeleter> buf_;
  int64_t size_ = 0;
};

thread_local Scratch a_scratch, b_scratch;

// Transposes the 16 x 16 block in r (rows in, columns out): pairs, quads, then lanes.
void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    t[j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
    t[4 + j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
    t[8 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xDD);
    r[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
    r[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xDD);
  }
}

// dst[p * dstride + i] = src[i * ld + p] for i < rows (<= 16), p < n, and 0 for
// rows <= i < 16; lanes outside `store` are left alone.
void pack_transposed(const float* src, int64_t ld, int64_t rows, int64_t n, float* dst,
                     int64_t dstride, __mmask16 store) {
  for (int64_t p0 = 0; p0 < n; p0 += 16) {
    const int64_t np = std::min<int64_t>(16, n - p0);
    const __mmask16 pm = lane_mask(np, 0);
    __m512 r[16];
    for (int i = 0; i < 16; ++i)
      r[i] = i < rows ? _mm512_maskz_loadu_ps(pm, src + i * ld + p0) : _mm512_setzero_ps();
    transpose16(r);
    for (int64_t q = 0; q < np; ++q) _mm512_mask_storeu_ps(dst + (p0 + q) * dstride, store, r[q]);
  }
}

// Packs b[kc x cols] (cols <= kNR) into a panel: row p at dst + p * kNR, zero-padded.
void pack_b_panel(int64_t kc, int64_t cols, const float* b, int64_t rs, int64_t cs, float* dst) {
  if (cs == 1) {
    for (int64_t p = 0; p < kc; ++p)
      for (int v = 0; v < kNV; ++v)
        _mm512_store_ps(dst + p * kNR + 16 * v,
                        _mm512_maskz_loadu_ps(lane_mask(cols, v), b + p * rs + 16 * v));
    return;
  }
  // Transposed storage (rs == 1): column j is contiguous in b.
  for (int v = 0; v < kNV; ++v)
    pack_transposed(b + 16 * v * cs, cs, cols - 16 * v, kc, dst + 16 * v, kNR, 0xFFFF);
}

// Packs a[rows x kc] (rows <= kMR) into a panel: column p at dst + p * kMR.
void pack_a_panel(int64_t kc, int64_t rows, const float* a, int64_t rs, int64_t cs, float* dst) {
  const __mmask16 m = lane_mask(kMR, 0);
  if (rs == 1) {
    for (int64_t p = 0; p < kc; ++p)
      _mm512_mask_storeu_ps(dst + p * kMR, m, _mm512_maskz_loadu_ps(lane_mask(rows, 0), a + p * cs));
    return;
  }
  pack_transposed(a, rs, rows, kc, dst, kMR, m);  // row-major storage (cs == 1)
}

}  // namespace

void sgemm(int64_t m, int64_t n, int64_t k, Operand a, Operand b, float* c, int64_t ldc,
           bool parallel) {
  const bool in_place = double(m) * double(n) * double(k) <= kInPlace;
  const bool rows_in_place =
      a.cs == 1 && n <= kFewCols && a.rs * int64_t(sizeof(float)) % 4096 != 0;
  const bool pack_a = !in_place && !rows_in_place;
  const bool pack_b = b.cs != 1 || !(in_place || m <= kFewRows);
  // In place, a is read along its unit stride: rows (a_rows) or columns.
  const bool a_rows = !pack_a && a.cs == 1 && a.rs != 1;
  const int64_t a_step = pack_a ? kMR : a_rows ? a.rs : a.cs;

  // Each KC x NC block of b meets `mblocks` blocks of a, of whole MR-row panels (at most
  // MC rows), as even as the panels allow. Over the pool, their count is a multiple of its
  // threads (of 4 per thread when larger: the pool hands out up to 4 chunks per thread),
  // so each thread gets as many rows: 1024 in 10 blocks had run 6 on one thread, 4 on the
  // other (378 GFLOP/s). With fewer row panels than threads, each block is split further
  // into `groups` of NR-column panels.
  const int64_t threads = parallel ? int64_t(pool_size()) : 1, row_panels = ceil_div(m, kMR);
  int64_t mblocks = ceil_div(m, kMC);
  if (parallel) {
    const int64_t step = mblocks <= 4 * threads ? threads : 4 * threads;
    mblocks = ceil_div(mblocks, step) * step;
    // Too few panels to share evenly (16 rows: 14 and 2): one block, split by columns.
    if (mblocks * 2 > row_panels) mblocks = 1;
  }
  const int64_t mc = ceil_div(row_panels, mblocks) * kMR;  // the largest block

  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = std::min(kNC, n - jc), panels = ceil_div(nc, kNR);
    const int64_t groups = std::min(panels, ceil_div(threads, mblocks));
    // k in even blocks of at most KC: a thin last block would load and store c for little.
    const int64_t kblocks = ceil_div(k, kKC), kstep = ceil_div(k, kblocks);
    for (int64_t pc = 0; pc < k; pc += kstep) {
      const int64_t kc = std::min(kstep, k - pc);
      // The pool hands out up to 4 chunks per thread, each of several items when there
      // are more: 32768x576x64's items (4M) are short, its chunks (37 items) are not, and
      // on a busy machine the whole product had run on the calling thread. The packing of
      // b before them wakes the worker too: on one thread it is 3% of n = 1024's time.
      const int64_t items = mblocks * groups;
      const int64_t per_chunk = ceil_div(items, std::min(items, 4 * threads));
      const double item = double(mc) * double(nc) / double(groups) * double(kc);
      const bool long_chunks = item * double(per_chunk) >= kLongChunkWork;
      const float* bblock = b.data + pc * b.rs + jc * b.cs;
      float* bpacked = nullptr;
      if (pack_b) {
        bpacked = b_scratch.get(panels * kc * kNR);
        auto pack = [&](int64_t lo, int64_t hi) {
          for (int64_t jp = lo; jp < hi; ++jp)
            pack_b_panel(kc, std::min<int64_t>(kNR, nc - jp * kNR), bblock + jp * kNR * b.cs, b.rs,
                         b.cs, bpacked + jp * kc * kNR);
        };
        if (parallel) parallel_for(panels, 4, pack, long_chunks);
        else pack(0, panels);
      }
      auto run = [&](int64_t lo, int64_t hi) {
        for (int64_t t = lo; t < hi; ++t) {
          const int64_t ib = t / groups, g = t % groups;
          const int64_t ic = row_panels * ib / mblocks * kMR;
          const int64_t rows = std::min(m, row_panels * (ib + 1) / mblocks * kMR) - ic;
          const float* ablock = a.data + ic * a.rs + pc * a.cs;
          if (pack_a) {
            float* ap = a_scratch.get(ceil_div(rows, kMR) * kMR * kc);
            for (int64_t ir = 0; ir < rows; ir += kMR)
              pack_a_panel(kc, std::min<int64_t>(kMR, rows - ir), ablock + ir * a.rs, a.rs, a.cs,
                           ap + ir * kc);
            ablock = ap;
          }
          const int64_t jp0 = panels * g / groups, jp1 = panels * (g + 1) / groups;
          for (int64_t jp = jp0; jp < jp1; ++jp) {
            const int64_t jr = jp * kNR, cols = std::min<int64_t>(kNR, nc - jr);
            const float* bp = pack_b ? bpacked + jp * kc * kNR : bblock + jr;
            for (int64_t ir = 0; ir < rows; ir += kMR) {
              const int64_t r = std::min<int64_t>(kMR, rows - ir);
              const float* ap = pack_a ? ablock + ir * kc : ablock + ir * a.rs;
              pick(a_rows, pack_b, r)(kc, ap, a_step, bp, pack_b ? kNR : b.rs, cols,
                                      c + (ic + ir) * ldc + jc + jr, ldc, pc > 0);
            }
          }
        }
      };
      if (parallel) parallel_for(items, 1, run, long_chunks);
      else run(0, items);
    }
  }
}

}  // namespace tinyxla::cpu::gemm
