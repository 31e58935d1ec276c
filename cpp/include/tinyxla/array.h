// Array: the runtime's handle to a (possibly not yet computed) n-d array on a device.
#pragma once
#include <memory>

#include "tinyxla/buffer.h"
#include "tinyxla/dtype.h"
#include "tinyxla/future.h"
#include "tinyxla/shape.h"

namespace tinyxla {

// An array's shape and strides, shared by the arrays that have them: copying an Array then
// allocates nothing, and a compiled graph's runs make their results from one per value.
struct Layout {
  explicit Layout(Shape shape);  // row-major dense
  Layout(Shape shape, Strides strides);
  const Shape shape;
  const Strides strides;
  const int64_t size;
  const bool contiguous;  // row-major dense from the array's offset
};

// Shape, dtype and device are known at once; the buffer's contents are valid once
// event() is ready. Views (transpose, broadcast, slice, reshape of dense data) share
// their source's buffer with other strides and offset; buffers are never written twice.
class Array {
 public:
  Array() = default;
  // A dense array backed by a fresh buffer, computed later by whoever sets `event`.
  Array(Shape shape, DType dtype, int device, EventPtr event);
  // A view of `buffer` (offset and strides in elements).
  Array(Shape shape, Strides strides, int64_t offset, DType dtype, int device,
        std::shared_ptr<Buffer> buffer, EventPtr event);
  // The two above with a layout made beforehand (no allocation for shape and strides).
  static Array of_layout(std::shared_ptr<const Layout> layout, DType dtype, int device,
                         EventPtr event);
  static Array of_layout(std::shared_ptr<const Layout> layout, int64_t offset, DType dtype,
                         int device, std::shared_ptr<Buffer> buffer, EventPtr event);
  // Copies `nbytes` of dense row-major host data.
  static Array from_host(const void* data, const Shape& shape, DType dtype, int device);

  const Shape& shape() const { return layout_ ? layout_->shape : no_shape(); }
  const Strides& strides() const { return layout_ ? layout_->strides : no_shape(); }
  const std::shared_ptr<const Layout>& layout() const { return layout_; }
  int64_t offset() const { return offset_; }
  DType dtype() const { return dtype_; }
  int device() const { return device_; }
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t size() const { return size_; }
  size_t nbytes() const { return static_cast<size_t>(size_) * itemsize(dtype_); }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  const EventPtr& event() const { return event_; }

  // Row-major dense from offset: kernels can read it as a flat vector.
  bool is_contiguous() const { return !layout_ || layout_->contiguous; }
  bool is_ready() const { return event_->is_ready(); }
  // Blocks until the values are computed, running the device's queued work meanwhile.
  void wait() const;
  // The first element (valid after wait()).
  const char* data() const {
    return static_cast<const char*>(buffer_->data()) + offset_ * int64_t(itemsize(dtype_));
  }
  char* mutable_data() const { return const_cast<char*>(data()); }
  // Dense row-major host copy of the values; waits.
  void copy_to_host(void* dst) const;

 private:
  static const Shape& no_shape() {
    static const Shape none;
    return none;
  }
  std::shared_ptr<const Layout> layout_;
  int64_t offset_ = 0;
  int64_t size_ = 0;
  DType dtype_ = DType::F32;
  int device_ = 0;
  std::shared_ptr<Buffer> buffer_;
  EventPtr event_;
};

}  // namespace tinyxla
