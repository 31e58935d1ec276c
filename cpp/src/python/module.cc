// tinyxla._core: the pybind11 binding. Thin: argument conversion and calls, no logic.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>

#include "python/eager_operator_bindings.h"
#include "python/graph_bindings.h"
#include "python/host_callback_bindings.h"
#include "python/numpy_views.h"
#include "python/op_bindings.h"
#include "python/profiler_bindings.h"
#include "python/pytree_bindings.h"
#include "python/stages_bindings.h"
#include "core/thread_pool.h"
#include "runtime/fault_injection.h"
#include "tinyxla/graph.h"
#include "tinyxla/tinyxla.h"

namespace py = pybind11;
using namespace tinyxla;

namespace {

// Picks the dtype and device of the first Array among the operands for scalar ones.
std::pair<DType, int> like(std::initializer_list<py::handle> hs) {
  for (py::handle h : hs)
    if (py::isinstance<Array>(h)) {
      const Array& a = h.cast<const Array&>();
      return {a.dtype(), a.device()};
    }
  throw py::type_error("at least one operand must be an Array");
}

DType to_dtype(int code) {
  if (code < 0 || code >= kNumDTypes) throw py::value_error("bad dtype code");
  return static_cast<DType>(code);
}

py::tuple shape_tuple(const Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

Array from_numpy(py::array arr, int code, int device) {
  DType t = to_dtype(code);
  if (size_t(arr.itemsize()) != itemsize(t)) throw py::value_error("from_numpy: itemsize mismatch");
  py::array c = py::array::ensure(arr, py::array::c_style);
  Shape shape(c.shape(), c.shape() + c.ndim());
  return Array::from_host(c.data(), shape, t, device);
}

// DLPack (https://dmlc.github.io/dlpack): the C ABI structs of versions 0.8 and 1.0.
struct DLDevice { int32_t device_type; int32_t device_id; };
struct DLDataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct DLTensor {
  void* data; DLDevice device; int32_t ndim; DLDataType dtype;
  int64_t* shape; int64_t* strides; uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor; void* manager_ctx; void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion { uint32_t major; uint32_t minor; };
struct DLManagedTensorVersioned {
  DLPackVersion version; void* manager_ctx; void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags; DLTensor dl_tensor;
};
constexpr uint64_t kDLFlagReadOnly = 1;
constexpr uint64_t kDLFlagIsCopied = 2;
constexpr int32_t kDLCPU = 1, kDLCUDAHost = 3;

// What an exported capsule owns: the array (so its buffer outlives the consumer's use).
struct DLPackHolder {
  Array array;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed;
  DLManagedTensorVersioned versioned;
};

DLDataType dl_dtype(DType t) {
  uint8_t bits = uint8_t(itemsize(t) * 8);
  if (t == DType::Bool) return {6, 8, 1};
  if (is_signed_int(t)) return {0, bits, 1};
  if (is_unsigned_int(t)) return {1, bits, 1};
  if (t == DType::BF16) return {4, 16, 1};
  if (is_complex(t)) return {5, bits, 1};
  return {2, bits, 1};
}

void fill_tensor(DLTensor& t, DLPackHolder* h) {
  const Array& dense = h->array;
  t.data = dense.size() ? const_cast<char*>(dense.data()) : nullptr;
  t.device = {kDLCPU, 0};
  t.ndim = dense.ndim();
  t.dtype = dl_dtype(dense.dtype());
  t.shape = h->shape.data();
  t.strides = h->strides.data();
  t.byte_offset = 0;
}

// A capsule of the dense values (waits). Versioned (DLPack 1.0) capsules are marked
// read-only unless `copied`: buffers are immutable, so a consumer must not write them.
py::capsule to_dlpack(const Array& a, bool versioned, bool copy) {
  Array dense = contiguous(a);
  {
    py::gil_scoped_release release;
    dense.wait();
  }
  if (copy && dense.buffer() == a.buffer()) {
    Array fresh = Array::from_host(dense.data(), dense.shape(), dense.dtype(), dense.device());
    dense = fresh;
  }
  auto* h = new DLPackHolder{dense, dense.shape(), dense.strides(), {}, {}};
  if (versioned) {
    DLManagedTensorVersioned& m = h->versioned;
    m.version = {1, 0};
    m.manager_ctx = h;
    m.deleter = [](DLManagedTensorVersioned* p) {
      delete static_cast<DLPackHolder*>(p->manager_ctx);
    };
    m.flags = copy ? kDLFlagIsCopied : kDLFlagReadOnly;
    fill_tensor(m.dl_tensor, h);
    return py::capsule(&m, "dltensor_versioned", [](PyObject* cap) {
      // A consumer renames the capsule to "used_dltensor_versioned" and takes ownership.
      if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        auto* p = static_cast<DLManagedTensorVersioned*>(
            PyCapsule_GetPointer(cap, "dltensor_versioned"));
        p->deleter(p);
      }
    });
  }
  DLManagedTensor& m = h->managed;
  m.manager_ctx = h;
  m.deleter = [](DLManagedTensor* p) { delete static_cast<DLPackHolder*>(p->manager_ctx); };
  fill_tensor(m.dl_tensor, h);
  return py::capsule(&m, "dltensor", [](PyObject* cap) {
    // A consumer renames the capsule to "used_dltensor" and takes ownership.
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* p = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      p->deleter(p);
    }
  });
}

// Runs a consumed capsule's deleter exactly once. The producer's deleter may touch Python
// objects (numpy's drops a reference), so it runs under the GIL: at once on a thread that
// holds it, else as a pending call of the interpreter (a device thread must never wait
// for the GIL: the thread holding it may be waiting for that device).
class DLPackOwner {
 public:
  explicit DLPackOwner(std::function<void()> release) : release_(std::move(release)) {}
  DLPackOwner(const DLPackOwner&) = delete;
  DLPackOwner& operator=(const DLPackOwner&) = delete;
  ~DLPackOwner() {
    if (!Py_IsInitialized()) return;  // at exit: the producer is gone too
    if (PyGILState_Check()) {
      release_();
      return;
    }
    auto* pending = new std::function<void()>(std::move(release_));
    auto run = [](void* p) -> int {
      auto* f = static_cast<std::function<void()>*>(p);
      (*f)();
      delete f;
      return 0;
    };
    if (Py_AddPendingCall(run, pending) != 0) {
      PyGILState_STATE s = PyGILState_Ensure();
      run(pending);
      PyGILState_Release(s);
    }
  }

 private:
  std::function<void()> release_;
};

DType dtype_of_dl(DLDataType t) {
  if (t.lanes != 1) throw py::buffer_error("from_dlpack: vector dtypes (lanes > 1) are not supported");
  const int bits = t.bits;
  switch (t.code) {
    case 0:
      if (bits == 8) return DType::I8;
      if (bits == 16) return DType::I16;
      if (bits == 32) return DType::I32;
      if (bits == 64) return DType::I64;
      break;
    case 1:
      if (bits == 8) return DType::U8;
      if (bits == 16) return DType::U16;
      if (bits == 32) return DType::U32;
      if (bits == 64) return DType::U64;
      break;
    case 2:
      if (bits == 16) return DType::F16;
      if (bits == 32) return DType::F32;
      if (bits == 64) return DType::F64;
      break;
    case 4:
      if (bits == 16) return DType::BF16;
      break;
    case 5:
      if (bits == 64) return DType::C64;
      if (bits == 128) return DType::C128;
      break;
    case 6:
      if (bits == 8) return DType::Bool;
      break;
  }
  throw py::buffer_error("from_dlpack: unsupported DLPack dtype (code " + std::to_string(t.code) +
                         ", bits " + std::to_string(bits) + ")");
}

// An Array of a DLPack capsule's tensor. Dense, naturally aligned host memory is
// borrowed (zero copy; the capsule's deleter runs when the last array using it dies);
// anything else is copied, unless `copy` is False, which then raises. `copy` True always
// copies.
Array from_dlpack(const py::capsule& cap, std::optional<bool> copy, int device) {
  PyObject* c = cap.ptr();
  const bool versioned = PyCapsule_IsValid(c, "dltensor_versioned");
  if (!versioned && !PyCapsule_IsValid(c, "dltensor"))
    throw py::value_error("from_dlpack: expected a DLPack capsule that was not consumed yet");
  DLTensor* t;
  std::shared_ptr<DLPackOwner> owner;
  if (versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned"));
    if (m->version.major > 1)
      throw py::buffer_error("from_dlpack: DLPack version " + std::to_string(m->version.major) +
                             " is newer than the supported 1.x");
    t = &m->dl_tensor;
    owner = std::make_shared<DLPackOwner>([m] { if (m->deleter) m->deleter(m); });
    PyCapsule_SetName(c, "used_dltensor_versioned");
  } else {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
    t = &m->dl_tensor;
    owner = std::make_shared<DLPackOwner>([m] { if (m->deleter) m->deleter(m); });
    PyCapsule_SetName(c, "used_dltensor");
  }
  if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDAHost)
    throw py::buffer_error("from_dlpack: only CPU tensors can be imported (device type " +
                           std::to_string(t->device.device_type) + ")");
  const DType dtype = dtype_of_dl(t->dtype);
  const int64_t item = int64_t(itemsize(dtype));
  Shape shape(t->shape, t->shape + t->ndim);
  const Strides dense = row_major_strides(shape);
  int64_t size = 1;
  for (int64_t d : shape) size *= d;
  bool is_dense = true;
  if (t->strides)
    for (int i = 0; i < t->ndim; ++i)
      if (shape[size_t(i)] > 1 && t->strides[i] != dense[size_t(i)]) is_dense = false;
  const char* data = static_cast<const char*>(t->data) + t->byte_offset;
  const bool aligned = reinterpret_cast<uintptr_t>(data) % uintptr_t(item) == 0;
  if (size == 0) {
    const char none = 0;
    return Array::from_host(&none, shape, dtype, device);
  }
  if (is_dense && aligned && copy != true) {
    auto buffer = std::make_shared<Buffer>(const_cast<char*>(data), size_t(size * item),
                                           [owner] {});
    return Array(shape, dense, 0, dtype, device, std::move(buffer), Event::ready());
  }
  if (copy == false)
    throw py::value_error(
        "Specified input which requires a copy since the source data buffer is not dense "
        "and naturally aligned. However copy=False. Set copy=True or copy=None to perform "
        "the requested operation.");
  // Gather the (possibly strided) elements into a dense host copy.
  std::vector<char> host(size_t(size * item));
  std::vector<int64_t> index(size_t(t->ndim), 0);
  for (int64_t k = 0; k < size; ++k) {
    int64_t off = 0;
    for (int i = 0; i < t->ndim; ++i)
      off += index[size_t(i)] * (t->strides ? t->strides[i] : dense[size_t(i)]);
    std::memcpy(host.data() + k * item, data + off * item, size_t(item));
    for (int i = t->ndim - 1; i >= 0; --i) {
      if (++index[size_t(i)] < shape[size_t(i)]) break;
      index[size_t(i)] = 0;
    }
  }
  return Array::from_host(host.data(), shape, dtype, device);
}

std::vector<Array> array_list(const py::sequence& seq) {
  std::vector<Array> out;
  for (py::handle h : seq) out.push_back(h.cast<Array>());
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "tinyxla's C++ runtime: arrays, devices and eager ops.";

  // JAX's classes: runtime failures are JaxRuntimeError; running out of memory is also a
  // MemoryError, as issue 19 asks.
  static py::exception<Error> runtime_error(m, "JaxRuntimeError", PyExc_RuntimeError);
  static py::object resource_exhausted = py::reinterpret_steal<py::object>(PyErr_NewException(
      "tinyxla._core.ResourceExhaustedError",
      py::make_tuple(runtime_error, py::handle(PyExc_MemoryError)).ptr(), nullptr));
  m.attr("ResourceExhaustedError") = resource_exhausted;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      switch (e.kind()) {
        case ErrorKind::TypeError: PyErr_SetString(PyExc_TypeError, e.what()); return;
        case ErrorKind::IndexError: PyErr_SetString(PyExc_IndexError, e.what()); return;
        case ErrorKind::ResourceExhausted: PyErr_SetString(resource_exhausted.ptr(), e.what()); return;
        case ErrorKind::Internal: PyErr_SetString(runtime_error.ptr(), e.what()); return;
        case ErrorKind::InvalidArgument: PyErr_SetString(PyExc_ValueError, e.what()); return;
      }
    }
  });

  py::class_<Array>(m, "Array")
      .def_property_readonly("shape", [](const Array& a) { return shape_tuple(a.shape()); })
      .def_property_readonly("dtype_code", [](const Array& a) { return int(a.dtype()); })
      .def_property_readonly("ndim", &Array::ndim)
      .def_property_readonly("size", &Array::size)
      .def_property_readonly("nbytes", &Array::nbytes)
      .def_property_readonly("device", &Array::device)
      .def_property_readonly("is_contiguous", &Array::is_contiguous)
      .def("is_ready", &Array::is_ready)
      .def("wait", &Array::wait, py::call_guard<py::gil_scoped_release>())
      .def("numpy", &to_numpy)
      .def("dlpack", &to_dlpack, py::arg("versioned") = false, py::arg("copy") = false)
      // After the wait: a late donation moves storage between buffers when the graph runs.
      .def("unsafe_buffer_pointer", [](const Array& a) {
        {
          py::gil_scoped_release release;
          a.wait();
        }
        return reinterpret_cast<uintptr_t>(a.data());
      });

  m.def("_arm_fault", &runtime::arm_fault, py::arg("op"), py::arg("count"),
        "Test hook: the next `count` kernels of `op` (eager or compiled) throw.");
  m.def("from_numpy", &from_numpy);
  m.def("from_dlpack", &from_dlpack, py::arg("capsule"), py::arg("copy") = py::none(),
        py::arg("device") = 0);
  m.def("scalar", [](py::handle v, int code, int device) {
    Scalar s;
    if (!to_scalar(v, &s)) throw py::type_error("scalar: expected a Python number");
    return scalar(to_dtype(code), s, device);
  });
  m.def("full", [](std::vector<int64_t> shape, py::handle v, int code, int device) {
    Scalar s;
    if (!to_scalar(v, &s)) throw py::type_error("full: expected a Python number");
    return full(shape, to_dtype(code), s, device);
  });
  m.def("iota", [](int code, std::vector<int64_t> shape, int64_t dim, int device) {
    return iota(to_dtype(code), shape, dim, device);
  });

  m.def("unary", [](int op, const Array& x) { return unary(static_cast<UnaryOp>(op), x); });
  m.def("binary", [](int op, py::handle x, py::handle y) {
    auto [dtype, dev] = like({x, y});
    return binary(static_cast<BinaryOp>(op), operand(x, dtype, dev), operand(y, dtype, dev));
  });
  m.def("select_n", [](const Array& which, py::sequence cases) {
    return select_n(which, array_list(cases));
  });
  m.def("clamp", [](py::handle lo, const Array& x, py::handle hi) {
    return clamp(operand(lo, x.dtype(), x.device()), x, operand(hi, x.dtype(), x.device()));
  });
  m.def("convert", [](const Array& x, int code) { return convert(x, to_dtype(code)); });
  m.def("bitcast_convert", [](const Array& x, int code) { return bitcast_convert(x, to_dtype(code)); });
  m.def("contiguous", &contiguous);
  m.def("reduce", [](int op, const Array& x, std::vector<int64_t> axes) {
    return reduce(static_cast<ReduceOp>(op), x, axes);
  });
  m.def("argreduce", [](bool is_max, const Array& x, int64_t axis, int code) {
    return argreduce(is_max, x, axis, to_dtype(code));
  });
  m.def("reshape", &reshape);
  m.def("transpose", &transpose);
  m.def("broadcast_in_dim", &broadcast_in_dim);
  m.def("slice", &slice);
  m.def("rev", &rev);
  m.def("cumulative", [](int op, const Array& x, int64_t axis, bool reverse) {
    return cumulative(static_cast<CumulativeOp>(op), x, axis, reverse);
  });
  m.def("eig", &eig);
  m.def("eigh", &eigh);
  m.def("sort", [](const std::vector<Array>& xs, int64_t dimension, int num_keys) {
    return sort(xs, dimension, num_keys);
  });
  m.def("gather", [](const Array& x, const Array& indices, std::vector<int64_t> offset_dims,
                     std::vector<int64_t> collapsed, std::vector<int64_t> start_index_map,
                     std::vector<int64_t> operand_batching, std::vector<int64_t> indices_batching,
                     std::vector<int64_t> slice_sizes, int mode, py::object fill_value) {
    GatherDims d{offset_dims, collapsed, start_index_map, operand_batching, indices_batching};
    Array fill = fill_value.is_none() ? Array() : operand(fill_value, x.dtype(), x.device());
    return gather(x, indices, d, slice_sizes, static_cast<IndexMode>(mode), fill);
  });
  m.def("scatter", [](int op, const Array& x, const Array& indices, const Array& updates,
                      std::vector<int64_t> update_window_dims, std::vector<int64_t> inserted,
                      std::vector<int64_t> scatter_dims_to_operand_dims,
                      std::vector<int64_t> operand_batching, std::vector<int64_t> indices_batching,
                      int mode) {
    GatherDims d{update_window_dims, inserted, scatter_dims_to_operand_dims, operand_batching,
                 indices_batching};
    return scatter(static_cast<ScatterOp>(op), x, indices, updates, d, static_cast<IndexMode>(mode));
  });
  m.def("dynamic_slice", [](const Array& x, py::sequence starts, std::vector<int64_t> sizes) {
    return dynamic_slice(x, array_list(starts), sizes);
  });
  m.def("dynamic_update_slice", [](const Array& x, const Array& update, py::sequence starts) {
    return dynamic_update_slice(x, update, array_list(starts));
  });
  m.def("pad", [](const Array& x, py::handle padval, std::vector<int64_t> lo,
                  std::vector<int64_t> hi, std::vector<int64_t> interior) {
    return pad(x, operand(padval, x.dtype(), x.device()), lo, hi, interior);
  });
  m.def("concatenate", [](py::sequence xs, int64_t dim) { return concatenate(array_list(xs), dim); });
  m.def("dot_general", [](const Array& lhs, const Array& rhs, std::vector<int64_t> lc,
                          std::vector<int64_t> rc, std::vector<int64_t> lb,
                          std::vector<int64_t> rb, int preferred) {
    DotDims d{lc, rc, lb, rb};
    std::optional<DType> p;
    if (preferred >= 0) p = to_dtype(preferred);
    return dot_general(lhs, rhs, d, p);
  });

  auto names = [](auto name_of, int count) {
    py::list out;
    for (int i = 0; i < count; ++i) out.append(name_of(i));
    return out;
  };
#define TINYXLA_COUNT(name) +1
  m.attr("UNARY_OPS") = names([](int i) { return op_name(static_cast<UnaryOp>(i)); },
                              0 TINYXLA_UNARY_OPS(TINYXLA_COUNT));
  m.attr("BINARY_OPS") = names([](int i) { return op_name(static_cast<BinaryOp>(i)); },
                               0 TINYXLA_BINARY_OPS(TINYXLA_COUNT));
  m.attr("REDUCE_OPS") = names([](int i) { return op_name(static_cast<ReduceOp>(i)); },
                               0 TINYXLA_REDUCE_OPS(TINYXLA_COUNT));
  m.attr("SCATTER_OPS") = names([](int i) { return op_name(static_cast<ScatterOp>(i)); },
                                0 TINYXLA_SCATTER_OPS(TINYXLA_COUNT));
  // The graph's op kinds, for tests that check every kind is reached.
  m.attr("OP_KINDS") = names([](int i) { return op_kind_name(static_cast<OpKind>(i)); },
                             0 TINYXLA_GRAPH_OPS(TINYXLA_COUNT));
#undef TINYXLA_COUNT

  m.def("num_devices", &num_devices);
  m.def("set_num_devices", &set_num_devices);
  m.def("synchronize", [](int id) { device(id).synchronize(); },
        py::call_guard<py::gil_scoped_release>());
  m.def("memory_stats", []() {
    MemoryStats s = memory_stats();
    py::dict d;
    d["bytes_in_use"] = s.bytes_in_use;
    d["peak_bytes_in_use"] = s.peak_bytes_in_use;
    d["num_allocs"] = s.num_allocs;
    d["largest_alloc_size"] = s.largest_alloc_size;
    d["bytes_limit"] = s.bytes_limit;
    d["bytes_reserved"] = s.bytes_in_use + s.bytes_cached;
    return d;
  });
  m.def("reset_peak_memory", &reset_peak_memory);
  m.def("trim_memory_cache", &trim_memory_cache);
  m.def("pool_size", &pool_size);
  bind_graph(m);
  bind_ops(m);
  bind_eager_operators(m);
  bind_host_callbacks(m);
  bind_profiler(m);
  bind_pytree(m);
  bind_stages(m);
}
