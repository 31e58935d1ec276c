// Array construction and host transfer.
#include "tinyxla/array.h"

#include <cstring>

#include "tinyxla/device.h"
#include "tinyxla/ops.h"
#include "profiler.h"

namespace tinyxla {

Array::Array(Shape shape, DType dtype, int device, EventPtr event)
    : shape_(std::move(shape)), dtype_(dtype), device_(device), event_(std::move(event)) {
  strides_ = row_major_strides(shape_);
  size_ = num_elements(shape_);
  buffer_ = std::make_shared<Buffer>(std::max<size_t>(nbytes(), 1));
}

Array::Array(Shape shape, Strides strides, int64_t offset, DType dtype, int device,
             std::shared_ptr<Buffer> buffer, EventPtr event)
    : shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset), dtype_(dtype),
      device_(device), buffer_(std::move(buffer)), event_(std::move(event)) {
  size_ = num_elements(shape_);
}

Array Array::from_host(const void* data, const Shape& shape, DType dtype, int device) {
  profiler::Span span("host to device copy", "transfer");
  Array a(shape, dtype, device, Event::ready());
  if (a.nbytes()) std::memcpy(a.buffer_->data(), data, a.nbytes());
  return a;
}

bool Array::is_contiguous() const {
  int64_t expect = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] != 1 && strides_[i] != expect) return shape_[i] == 0 || size_ == 0;
    expect *= shape_[i];
  }
  return true;
}

void Array::wait() const {
  if (event_->is_ready()) return event_->wait();  // rethrows a stored error
  profiler::Span span("wait for device", "wait");
  tinyxla::device(device_).help(*event_);
  event_->wait();
}

void Array::copy_to_host(void* dst) const {
  wait();
  if (nbytes() == 0) return;
  profiler::Span span("device to host copy", "transfer");
  if (is_contiguous()) {
    std::memcpy(dst, data(), nbytes());
    return;
  }
  Array dense = contiguous(*this);
  dense.wait();
  std::memcpy(dst, dense.data(), nbytes());
}

}  // namespace tinyxla
