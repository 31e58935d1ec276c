// Array construction and host transfer.
#include "tinyxla/array.h"

#include <cstring>

#include "tinyxla/device.h"
#include "tinyxla/ops.h"
#include "profiler.h"

namespace tinyxla {

namespace {

bool row_major_dense(const Shape& shape, const Strides& strides, int64_t size) {
  int64_t expect = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expect) return shape[i] == 0 || size == 0;
    expect *= shape[i];
  }
  return true;
}

}  // namespace

Layout::Layout(Shape s)
    : shape(std::move(s)), strides(row_major_strides(shape)), size(num_elements(shape)),
      contiguous(true) {}

Layout::Layout(Shape s, Strides st)
    : shape(std::move(s)), strides(std::move(st)), size(num_elements(shape)),
      contiguous(row_major_dense(shape, strides, size)) {}

Array::Array(Shape shape, DType dtype, int device, EventPtr event)
    : Array(of_layout(std::make_shared<const Layout>(std::move(shape)), dtype, device,
                      std::move(event))) {}

Array::Array(Shape shape, Strides strides, int64_t offset, DType dtype, int device,
             std::shared_ptr<Buffer> buffer, EventPtr event)
    : Array(of_layout(std::make_shared<const Layout>(std::move(shape), std::move(strides)),
                      offset, dtype, device, std::move(buffer), std::move(event))) {}

Array Array::of_layout(std::shared_ptr<const Layout> layout, DType dtype, int device,
                       EventPtr event) {
  const size_t bytes = size_t(layout->size) * itemsize(dtype);
  return of_layout(std::move(layout), 0, dtype, device,
                   std::make_shared<Buffer>(std::max<size_t>(bytes, 1)), std::move(event));
}

Array Array::of_layout(std::shared_ptr<const Layout> layout, int64_t offset, DType dtype,
                       int device, std::shared_ptr<Buffer> buffer, EventPtr event) {
  Array a;
  a.size_ = layout->size;
  a.layout_ = std::move(layout);
  a.offset_ = offset;
  a.dtype_ = dtype;
  a.device_ = device;
  a.buffer_ = std::move(buffer);
  a.event_ = std::move(event);
  return a;
}

Array Array::from_host(const void* data, const Shape& shape, DType dtype, int device) {
  profiler::Span span("host to device copy", "transfer");
  Array a(shape, dtype, device, Event::ready());
  if (a.nbytes()) std::memcpy(a.buffer_->data(), data, a.nbytes());
  return a;
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
