// Host callbacks: a HostCallable owns a Python function and its entry in the table that
// host_callback nodes name by id; the handler installed here runs on the device thread (or
// on the host-call thread, for deferred calls, core/host_calls.h) and holds the GIL only
// while it converts the operands, calls the function and copies its results out. The
// function takes one argument per operand, a _core.Array or, for a HostCallable made with
// host dtypes, a read-only numpy array (a numpy scalar when 0-d), and returns one array
// per result, C-contiguous and of the result's dtype and size (the Python layer converts).
#include "host_callback_bindings.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "core/host_calls.h"
#include "python/numpy_views.h"
#include "tinyxla/error.h"

namespace py = pybind11;

namespace tinyxla {
namespace {

struct Entry {
  py::object fn;
  std::vector<py::dtype> host_dtypes;  // per operand; empty: the operands go as _core.Array
};

// id -> function. Read and written only under the GIL.
std::unordered_map<int64_t, std::shared_ptr<const Entry>>& table() {
  static auto* t = new std::unordered_map<int64_t, std::shared_ptr<const Entry>>();  // outlives the interpreter
  return *t;
}
int64_t next_id = 1;

class HostCallable {
 public:
  HostCallable(py::object fn, std::optional<std::vector<py::dtype>> host_dtypes) : id_(next_id++) {
    table().emplace(id_, std::make_shared<const Entry>(
                             Entry{std::move(fn), host_dtypes.value_or(std::vector<py::dtype>())}));
  }
  ~HostCallable() { table().erase(id_); }
  HostCallable(const HostCallable&) = delete;
  HostCallable& operator=(const HostCallable&) = delete;
  int64_t id() const { return id_; }

 private:
  int64_t id_;
};

bool interpreter_gone() {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

// A thread calling Python for the first time keeps a Python thread state from then on
// (made once, never torn down), so each call only takes and drops the GIL.
void ensure_thread_state() {
  if (PyGILState_GetThisThreadState() == nullptr) {
    PyGILState_Ensure();
    PyEval_SaveThread();
  }
}

// A bool or integer item as a Python bool or int (which format and print as numpy's
// scalars do); None for other dtypes.
py::object python_scalar(const void* p, DType t) {
  switch (t) {
    case DType::Bool: return py::bool_(*static_cast<const bool*>(p));
    case DType::I8: return py::int_(int64_t(*static_cast<const int8_t*>(p)));
    case DType::I16: return py::int_(int64_t(*static_cast<const int16_t*>(p)));
    case DType::I32: return py::int_(int64_t(*static_cast<const int32_t*>(p)));
    case DType::I64: return py::int_(*static_cast<const int64_t*>(p));
    case DType::U8: return py::int_(uint64_t(*static_cast<const uint8_t*>(p)));
    case DType::U16: return py::int_(uint64_t(*static_cast<const uint16_t*>(p)));
    case DType::U32: return py::int_(uint64_t(*static_cast<const uint32_t*>(p)));
    case DType::U64: return py::int_(*static_cast<const uint64_t*>(p));
    default: return py::none();
  }
}

// An operand as a host value: a numpy array, or for one element a scalar that formats and
// prints as numpy's (python_scalar, else a numpy scalar).
py::object host_value(const Array& a, const py::dtype& dt) {
  if (!a.shape().empty()) return to_numpy(a, dt);
  if (a.is_ready() && !a.event()->has_error()) {
    py::object v = python_scalar(a.data(), a.dtype());
    if (!v.is_none()) return v;
  }
  return to_numpy(a, dt)[py::tuple()];
}

// Operand k of a call as the function `entry` takes it.
py::object operand(const Entry& entry, const Array& a, size_t k) {
  return entry.host_dtypes.empty() ? py::cast(a) : host_value(a, entry.host_dtypes[k]);
}

py::object operand(const Entry& entry, const HostScalar& s, int device, size_t k) {
  if (!entry.host_dtypes.empty()) {
    py::object v = python_scalar(s.bytes, s.dtype);
    if (!v.is_none()) return v;
  }
  return operand(entry, Array::from_host(s.bytes, Shape{}, s.dtype, device), k);
}

// Calls function `id` on its `n` operands (`make(entry, k)` gives operand k) and copies
// its results into `results` (holding the GIL).
template <class MakeOperand>
void invoke(int64_t id, size_t n, MakeOperand make, const std::vector<Array>& results) {
  try {
    auto it = table().find(id);
    if (it == table().end())
      throw_error(ErrorKind::Internal, "host_callback",
                  "callback " + std::to_string(id) + " was released before the graph ran");
    const std::shared_ptr<const Entry> keep = it->second;  // the table may change while it runs
    const Entry& entry = *keep;
    std::vector<py::object> py_args;
    py_args.reserve(n);
    for (size_t k = 0; k < n; ++k) py_args.push_back(make(entry, k));
    // Called as fn(*args) without building an argument tuple (the per-print path).
    std::vector<PyObject*> raw(1 + n);
    for (size_t k = 0; k < n; ++k) raw[k + 1] = py_args[k].ptr();
    PyObject* result = PyObject_Vectorcall(entry.fn.ptr(), raw.data() + 1,
                                           n | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
    if (!result) throw py::error_already_set();
    py::object outs = py::reinterpret_steal<py::object>(result);
    if (results.empty()) return;
    py::sequence seq = outs;
    if (seq.size() != results.size())
      throw_error(ErrorKind::Internal, "host_callback",
                  "the callback returned " + std::to_string(seq.size()) + " values, expected " +
                      std::to_string(results.size()));
    for (size_t k = 0; k < results.size(); ++k) {
      py::array a = py::array::ensure(seq[k], py::array::c_style);
      if (!a || size_t(a.nbytes()) != results[k].nbytes())
        throw_error(ErrorKind::Internal, "host_callback",
                    "result " + std::to_string(k) + " has " + std::to_string(a ? a.nbytes() : 0) +
                        " bytes, expected " + std::to_string(results[k].nbytes()));
      if (a.nbytes()) std::memcpy(results[k].mutable_data(), a.data(), size_t(a.nbytes()));
    }
  } catch (py::error_already_set& e) {
    // The message only: the exception object must not leave the GIL's scope.
    std::string msg = py::str(e.value());
    throw_error(ErrorKind::Internal, "host_callback", msg);
  }
}

void call_python(int64_t id, const std::vector<Array>& args, const std::vector<Array>& results) {
  if (interpreter_gone()) throw_error(ErrorKind::Internal, "host_callback", "Python has exited");
  ensure_thread_state();
  py::gil_scoped_acquire gil;
  invoke(id, args.size(), [&](const Entry& e, size_t k) { return operand(e, args[k], k); }, results);
}

// A thread holding the GIL must not wait for the host-call thread, which needs it.
bool may_defer() { return !interpreter_gone() && !PyGILState_Check(); }

// The host-call thread's batch: one GIL acquisition for all of it.
void call_python_deferred(std::vector<DeferredHostCall>& calls) {
  if (interpreter_gone()) {
    for (DeferredHostCall& c : calls)
      c.error = std::make_exception_ptr(Error(ErrorKind::Internal, "[host_callback] Python has exited"));
    return;
  }
  ensure_thread_state();
  py::gil_scoped_acquire gil;
  std::vector<const void*> failed;  // runs with a failed call: their later calls are skipped
  for (DeferredHostCall& c : calls) {
    c.skip = c.skip || std::find(failed.begin(), failed.end(), c.run) != failed.end();
    if (c.skip) continue;
    try {
      if (c.num_scalars >= 0)
        invoke(c.callable, size_t(c.num_scalars),
               [&](const Entry& e, size_t k) { return operand(e, c.scalars[k], c.device, k); }, {});
      else
        invoke(c.callable, c.args.size(), [&](const Entry& e, size_t k) { return operand(e, c.args[k], k); }, {});
    } catch (...) {
      c.error = std::current_exception();
      failed.push_back(c.run);
    }
    c.args.clear();  // the copies go while the GIL is held (their numpy views may too)
  }
}

}  // namespace

void bind_host_callbacks(py::module_& m) {
  HostCallHandler handler;
  handler.call = &call_python;
  handler.may_defer = &may_defer;
  handler.call_deferred = &call_python_deferred;
  set_host_call_handler(handler);
  py::class_<HostCallable, std::shared_ptr<HostCallable>>(m, "HostCallable", R"doc(
A Python function that host_callback nodes can call: HostCallable(fn, host_dtypes).id is
the value of their `callback` attribute while this object lives. fn(*operands) returns
one array per result, of the result's dtype and size; the operands are Arrays, or with
`host_dtypes` (one numpy dtype per operand) read-only numpy arrays, scalars when 0-d.)doc")
      .def(py::init<py::object, std::optional<std::vector<py::dtype>>>(), py::arg("fn"),
           py::arg("host_dtypes") = py::none())
      .def_property_readonly("id", &HostCallable::id);
  m.def("in_host_call", &in_host_call,
        "Whether this thread runs a host callback (inside a device's task).");
}

}  // namespace tinyxla
