// dynamic_slice and dynamic_update_slice: start indices are scalar integer arrays read when
// the kernel runs, each clamped to [0, dim - window] as XLA does, so a window always fits.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels.h"
#include "tinyxla/error.h"

namespace tinyxla::cpu {
namespace {

int64_t read_index(const Array& s) {
  const char* p = s.data();
  auto get = [p](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (s.dtype()) {
    case DType::I8: return get(int8_t());
    case DType::I16: return get(int16_t());
    case DType::I32: return get(int32_t());
    case DType::I64: return get(int64_t());
    case DType::U8: return get(uint8_t());
    case DType::U16: return get(uint16_t());
    case DType::U32: return get(uint32_t());
    case DType::U64: {
      uint64_t v = get(uint64_t());
      return v > uint64_t(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                               : int64_t(v);
    }
    default:
      throw_error(ErrorKind::TypeError, "dynamic_slice", "start indices must be integers");
  }
}

// The view of `base` (dense, or any strides) over the window of `window` at the clamped
// starts.
Array window_view(const Array& base, const std::vector<Array>& starts, const Shape& window) {
  int64_t offset = base.offset();
  for (size_t d = 0; d < window.size(); ++d) {
    const int64_t room = base.shape()[d] - window[d];
    const int64_t start = std::clamp<int64_t>(read_index(starts[d]), 0, room);
    if (window[d] > 0) offset += start * base.strides()[d];
  }
  return Array(window, base.strides(), offset, base.dtype(), base.device(), base.buffer(),
               base.event());
}

}  // namespace

void dynamic_slice(const Array& x, const std::vector<Array>& starts, const Array& out) {
  if (out.size() == 0) return;
  copy(window_view(x, starts, out.shape()), out);
}

void dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts,
                          const Array& out) {
  if (out.size() == 0) return;
  const bool in_place = out.buffer() == x.buffer() && out.offset() == x.offset() &&
                        out.strides() == x.strides();
  if (!in_place) copy(x, out);
  if (update.size() == 0) return;
  copy_into(update, window_view(out, starts, update.shape()));
}

}  // namespace tinyxla::cpu
