// The kernels of small_matrices.h. Each works on a group of W matrices, one 16-byte vector
// (GCC's vector extension; SSE2, which every x86-64 has: wider vectors without the
// instructions for them compiled to scalar selects) per matrix element, n a template parameter so that the loops
// unroll: every step is a vector operation over the group.
#include "small_matrices.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace tinyxla::cpu::small {
namespace {

template <typename T>
constexpr int kLanes = int(16 / sizeof(T));

// One element of W matrices, and the same-sized integers (comparison results, pivot rows).
template <typename T>
struct Lanes {
  typedef T vec __attribute__((vector_size(16)));
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef I ivec __attribute__((vector_size(16)));
};
template <typename T> using vec_t = typename Lanes<T>::vec;
template <typename T> using ivec_t = typename Lanes<T>::ivec;

template <typename V>
V abs_of(const V& x) {
  return x < V{} ? -x : x;  // NaN stays NaN
}

template <typename V, typename S>
V splat(const S& s) {
  return V{} + s;
}

template <int N, typename T>
void lu_group(const T* src, int lanes, T* dst, int32_t* piv) {
  using V = vec_t<T>;
  using IV = ivec_t<T>;
  using I = typename Lanes<T>::I;
  constexpr int W = kLanes<T>;
  V a[N][N];
  IV arg[N];
  // Lanes past the batch's end hold identities.
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      for (int l = 0; l < W; ++l) a[i][j][l] = l < lanes ? src[l * N * N + i * N + j] : T(i == j);
  const V sfmin = splat<V>(std::numeric_limits<T>::min()), zero{}, one = splat<V>(T(1));
  for (int j = 0; j < N; ++j) {
    V best = abs_of(a[j][j]);
    arg[j] = splat<IV>(I(j));
    for (int i = j + 1; i < N; ++i) {
      const V mag = abs_of(a[i][j]);
      const IV more = mag > best;
      best = more ? mag : best;
      arg[j] = more ? splat<IV>(I(i)) : arg[j];
    }
    for (int i = j + 1; i < N; ++i) {
      const IV swap = arg[j] == I(i);
      for (int c = 0; c < N; ++c) {
        const V x = a[j][c], y = a[i][c];
        a[j][c] = swap ? y : x;
        a[i][c] = swap ? x : y;
      }
    }
    // As getrf2: scaled by the reciprocal unless that would overflow; a zero pivot (its
    // column is zero below it) leaves the column.
    const V p = a[j][j], r = one / p;
    const IV reciprocal = abs_of(p) >= sfmin, nonzero = p != zero;
    for (int i = j + 1; i < N; ++i) {
      const V v = a[i][j];
      a[i][j] = nonzero ? (reciprocal ? v * r : v / p) : v;
    }
    for (int i = j + 1; i < N; ++i) {
      const V m = a[i][j];
      const IV live = m != zero;
      for (int c = j + 1; c < N; ++c) a[i][c] = live ? a[i][c] - m * a[j][c] : a[i][c];
    }
  }
  for (int l = 0; l < lanes; ++l) {
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) dst[l * N * N + i * N + j] = a[i][j][l];
    for (int j = 0; j < N; ++j) piv[l * N + j] = int32_t(arg[j][l]);
  }
}

template <int N, typename T>
void lu_n(const T* src, int64_t count, T* dst, int32_t* piv) {
  constexpr int W = kLanes<T>;
  for (int64_t b = 0; b < count; b += W)
    lu_group<N>(src + b * N * N, int(std::min<int64_t>(W, count - b)), dst + b * N * N,
                piv + b * N);
}

// One group: t = op(a) (or its transpose on the right side, which turns x op(a) = b into
// op(a)^T x^T = b^T), then substitution over the C right-hand sides.
template <int N, typename T>
void solve_group(const T* a, const T* b, int lanes, int64_t rows, int64_t cols, int C,
                 const TriangularSolveFlags& f, T* x) {
  using V = vec_t<T>;
  using IV = ivec_t<T>;
  constexpr int W = kLanes<T>;
  const bool flip = f.transpose_a != !f.left_side;  // t[i][j] reads a[j][i]
  const bool lower = f.lower != flip;
  const int64_t mat = rows * cols;
  V t[N][N];
  V v[N][kMaxSmallCols];
  // A full group with its layout known at compile time loads without a branch per element.
  const auto load = [&](auto full, auto flipped, auto left) {
    const int used = full ? W : lanes;
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j)
        for (int l = 0; l < W; ++l)
          t[i][j][l] = !full && l >= used ? T(i == j) : flipped ? a[l * N * N + j * N + i]
                                                                : a[l * N * N + i * N + j];
    for (int i = 0; i < N; ++i)
      for (int c = 0; c < C; ++c)
        for (int l = 0; l < W; ++l)
          v[i][c][l] = !full && l >= used ? T(0) : left ? b[l * mat + i * cols + c]
                                                        : b[l * mat + c * cols + i];
  };
  using Yes = std::true_type;
  using No = std::false_type;
  if (lanes < W) load(No{}, flip, f.left_side);
  else if (flip && f.left_side) load(Yes{}, Yes{}, Yes{});
  else if (flip) load(Yes{}, Yes{}, No{});
  else if (f.left_side) load(Yes{}, No{}, Yes{});
  else load(Yes{}, No{}, No{});
  const V zero{};
  for (int step = 0; step < N; ++step) {
    const int i = lower ? step : N - 1 - step;
    const int j0 = lower ? 0 : i + 1, j1 = lower ? i : N;
    for (int c = 0; c < C; ++c) {
      V acc = v[i][c];
      for (int j = j0; j < j1; ++j) {
        const IV live = t[i][j] != zero;
        acc = live ? acc - t[i][j] * v[j][c] : acc;
      }
      v[i][c] = f.unit_diagonal ? acc : acc / t[i][i];
    }
  }
  for (int l = 0; l < lanes; ++l) {
    T* xm = x + l * mat;
    if (f.left_side) {
      for (int i = 0; i < N; ++i)
        for (int c = 0; c < C; ++c) xm[i * cols + c] = v[i][c][l];
    } else {
      for (int i = 0; i < N; ++i)
        for (int c = 0; c < C; ++c) xm[c * cols + i] = v[i][c][l];
    }
  }
}

template <int N, typename T>
void solve_n(const T* a, const T* b, int64_t count, int64_t rows, int64_t cols,
             const TriangularSolveFlags& f, T* x) {
  constexpr int W = kLanes<T>;
  const int C = int(f.left_side ? cols : rows);
  for (int64_t g = 0; g < count; g += W)
    solve_group<N>(a + g * N * N, b + g * rows * cols, int(std::min<int64_t>(W, count - g)),
                   rows, cols, C, f, x + g * rows * cols);
}

// Calls f(std::integral_constant<int, n>) for n in 1..kMaxSmallN.
template <typename F>
void with_n(int64_t n, F&& f) {
  switch (n) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 7: return f(std::integral_constant<int, 7>{});
    case 8: return f(std::integral_constant<int, 8>{});
  }
}

}  // namespace

template <typename T>
void lu(const T* src, int64_t count, int64_t n, T* dst, int32_t* piv) {
  with_n(n, [&](auto c) { lu_n<decltype(c)::value>(src, count, dst, piv); });
}

template <typename T>
void triangular_solve(const T* a, const T* b, int64_t count, int64_t m, int64_t rows,
                      int64_t cols, const TriangularSolveFlags& flags, T* x) {
  with_n(m, [&](auto c) { solve_n<decltype(c)::value>(a, b, count, rows, cols, flags, x); });
}

template void lu<float>(const float*, int64_t, int64_t, float*, int32_t*);
template void lu<double>(const double*, int64_t, int64_t, double*, int32_t*);
template void triangular_solve<float>(const float*, const float*, int64_t, int64_t, int64_t,
                                      int64_t, const TriangularSolveFlags&, float*);
template void triangular_solve<double>(const double*, const double*, int64_t, int64_t,
                                       int64_t, int64_t, const TriangularSolveFlags&, double*);

}  // namespace tinyxla::cpu::small
