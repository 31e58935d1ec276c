// The batched FFT kernels of every ISA build this CPU can run (fft() itself only uses the
// best one), against a plain DFT in double precision: batches of rows and of columns, for
// the four transform types, float32 and float64.
#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <tuple>

#include "cpu/fft.h"
#include "test_harness.h"

using namespace tinyxla;
using namespace tinyxla::testing;
using cpu::FftType;
namespace vmath = cpu::vmath;
using Cd = std::complex<double>;

namespace {

// The 2-D DFT (exp(sign 2 pi i ...)) of each of `batch` a x b blocks of x, unnormalized.
std::vector<Cd> dft(const std::vector<Cd>& x, int64_t batch, int64_t a, int64_t b, int sign) {
  std::vector<Cd> y(x.size()), wa(static_cast<size_t>(a)), wb(static_cast<size_t>(b));
  for (int64_t k = 0; k < a; ++k) wa[size_t(k)] = std::polar(1.0, sign * 2 * M_PI * k / a);
  for (int64_t k = 0; k < b; ++k) wb[size_t(k)] = std::polar(1.0, sign * 2 * M_PI * k / b);
  for (int64_t o = 0; o < batch; ++o)
    for (int64_t k1 = 0; k1 < a; ++k1)
      for (int64_t k2 = 0; k2 < b; ++k2) {
        Cd s = 0;
        for (int64_t j1 = 0; j1 < a; ++j1)
          for (int64_t j2 = 0; j2 < b; ++j2)
            s += x[size_t(o * a * b + j1 * b + j2)] * wa[size_t((j1 * k1) % a)] *
                 wb[size_t((j2 * k2) % b)];
        y[size_t(o * a * b + k1 * b + k2)] = s;
      }
  return y;
}

// max |got - want| / max |want|.
template <class T, class U>
double rel_err(const std::vector<T>& got, const std::vector<U>& want) {
  CHECK(got.size() == want.size());
  double err = 0, scale = 1e-300;
  for (size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, std::abs(Cd(got[i]) - Cd(want[i])));
    scale = std::max(scale, std::abs(Cd(want[i])));
  }
  return err / scale;
}

// fft, ifft, rfft and irfft over the last two axes (a x b; a == 1 for rows) of `batch` blocks.
template <class R>
void check_transforms(int64_t batch, int64_t a, int64_t b, std::mt19937& rng) {
  const bool wide = sizeof(R) == 8;
  const DType real = wide ? DType::F64 : DType::F32, cx = wide ? DType::C128 : DType::C64;
  const double tol = wide ? 1e-12 : 1e-5;
  const int64_t size = batch * a * b, h = b / 2 + 1;
  const Shape shape{batch, a, b}, half{batch, a, h};
  const std::vector<int64_t> lengths =
      a == 1 ? std::vector<int64_t>{b} : std::vector<int64_t>{a, b};
  std::normal_distribution<double> normal;
  std::vector<Cd> xd(static_cast<size_t>(size)), rd(static_cast<size_t>(size));
  std::vector<std::complex<R>> x(static_cast<size_t>(size));
  std::vector<R> r(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    x[size_t(i)] = {R(normal(rng)), R(normal(rng))};
    r[size_t(i)] = R(normal(rng));
    xd[size_t(i)] = Cd(x[size_t(i)]);
    rd[size_t(i)] = double(r[size_t(i)]);
  }
  const Array xa = from(x, shape, cx), ra = from(r, shape, real);
  const auto run = [&](FftType type, const Array& in, const Shape& out_shape, DType dtype) {
    Array out(out_shape, dtype, 0, Event::ready());
    cpu::fft(type, lengths, in, out);
    return out;
  };
  CHECK(rel_err(host<std::complex<R>>(run(FftType::fft, xa, shape, cx)), dft(xd, batch, a, b, -1)) <
        tol);
  std::vector<Cd> inv = dft(xd, batch, a, b, 1);
  for (Cd& v : inv) v /= double(a * b);
  CHECK(rel_err(host<std::complex<R>>(run(FftType::ifft, xa, shape, cx)), inv) < tol);
  // The real transform keeps the first b/2+1 frequencies of the last axis.
  const std::vector<Cd> full = dft(rd, batch, a, b, -1);
  std::vector<Cd> spectrum(static_cast<size_t>(batch * a * h));
  for (int64_t row = 0; row < batch * a; ++row)
    for (int64_t k = 0; k < h; ++k) spectrum[size_t(row * h + k)] = full[size_t(row * b + k)];
  CHECK(rel_err(host<std::complex<R>>(run(FftType::rfft, ra, half, cx)), spectrum) < tol);
  std::vector<std::complex<R>> spectrum_r(spectrum.size());
  for (size_t i = 0; i < spectrum.size(); ++i) spectrum_r[i] = std::complex<R>(spectrum[i]);
  CHECK(rel_err(host<R>(run(FftType::irfft, from(spectrum_r, half, cx), shape, real)), r) <
        tol);
}

template <class R>
void check_isa(vmath::Isa isa) {
  if (!vmath::isa_supported(isa)) return;
  cpu::set_fft_isa_for_testing(isa);
  std::mt19937 rng(7);
  // Rows: batches around the lane counts (2 to 16), every radix kind, lengths below and not
  // a multiple of the lane count.
  for (int64_t n : {4, 12, 38, 45, 64, 77, 118, 250})
    for (int64_t batch : {4, 5, 9, 17, 33}) check_transforms<R>(batch, 1, n, rng);
  // Columns: strides that are and are not multiples of the lane count, batches of blocks.
  for (auto [batch, a, b] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 5}, {1, 12, 17},
                             {3, 20, 9}, {1, 45, 32}, {2, 7, 40}})
    check_transforms<R>(batch, a, b, rng);
}

void test_isa(vmath::Isa isa) {
  check_isa<float>(isa);
  check_isa<double>(isa);
}

}  // namespace

int main() {
  const std::vector<Test> tests = {
      {"generic_kernels_against_dft", [] { test_isa(vmath::Isa::Generic); }},
      {"avx2_kernels_against_dft", [] { test_isa(vmath::Isa::Avx2); }},
      {"avx512_kernels_against_dft", [] { test_isa(vmath::Isa::Avx512); }},
  };
  return run_tests("fft", tests);
}
