// Zero-copy numpy views of Arrays (numpy_views.h).
#include "numpy_views.h"

#include <vector>

namespace py = pybind11;

namespace tinyxla {

py::array to_numpy(const Array& a, py::dtype dt) {
  if (!a.is_ready()) {
    py::gil_scoped_release release;
    a.wait();
  }
  a.wait();  // ready: throws a failed array's error
  auto* keep = new Array(a);
  py::capsule base(keep, [](void* p) { delete static_cast<Array*>(p); });
  std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end()), strides;
  for (int64_t s : a.strides()) strides.push_back(s * py::ssize_t(itemsize(a.dtype())));
  py::array out(dt, shape, strides, a.size() ? a.data() : nullptr, base);
  py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return out;
}

}  // namespace tinyxla
