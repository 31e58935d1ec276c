// Shape arithmetic shared by ops and kernels.
#include "tinyxla/shape.h"

#include <string>

#include "tinyxla/error.h"

namespace tinyxla {

int64_t num_elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Strides row_major_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw_error(ErrorKind::InvalidArgument, op,
                  "Incompatible shapes for broadcasting: " + shape_str(a) + " and " + shape_str(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t canonical_axis(int64_t axis, int64_t rank, const char* op) {
  if (axis < -rank || axis >= rank)
    throw_error(ErrorKind::InvalidArgument, op,
                "axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                    std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

namespace {
[[noreturn]] void overflows(int64_t a, const char* sign, int64_t b, const char* op) {
  throw_error(ErrorKind::InvalidArgument, op,
              "shape arithmetic overflows int64: " + std::to_string(a) + sign +
                  std::to_string(b));
}
}  // namespace

int64_t checked_add(int64_t a, int64_t b, const char* op) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflows(a, " + ", b, op);
  return r;
}

int64_t checked_mul(int64_t a, int64_t b, const char* op) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflows(a, " * ", b, op);
  return r;
}

}  // namespace tinyxla
