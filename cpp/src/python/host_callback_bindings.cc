// Host callbacks: a HostCallable owns a Python function and its entry in the table that
// host_callback nodes name by id; the handler installed here runs on the device thread
// and holds the GIL only while it converts the operands, calls the function and copies its
// results out. The function takes a list of _core.Array and returns one array per result,
// C-contiguous and of the result's dtype and size (the Python layer converts).
#include "host_callback_bindings.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <unordered_map>

#include "core/host_calls.h"
#include "tinyxla/error.h"

namespace py = pybind11;

namespace tinyxla {
namespace {

// id -> function. Read and written only under the GIL.
std::unordered_map<int64_t, py::object>& table() {
  static auto* t = new std::unordered_map<int64_t, py::object>();  // outlives the interpreter
  return *t;
}
int64_t next_id = 1;

class HostCallable {
 public:
  explicit HostCallable(py::object fn) : id_(next_id++) { table().emplace(id_, std::move(fn)); }
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

void call_python(int64_t id, const std::vector<Array>& args, const std::vector<Array>& results) {
  if (interpreter_gone()) throw_error(ErrorKind::Internal, "host_callback", "Python has exited");
  if (PyGILState_GetThisThreadState() == nullptr) {
    // A device thread's first call: it keeps a Python thread state from now on (made once,
    // never torn down), so each call only takes and drops the GIL.
    PyGILState_Ensure();
    PyEval_SaveThread();
  }
  py::gil_scoped_acquire gil;
  try {
    auto it = table().find(id);
    if (it == table().end())
      throw_error(ErrorKind::Internal, "host_callback",
                  "callback " + std::to_string(id) + " was released before the graph ran");
    py::object fn = it->second;  // the table may change while it runs
    py::list py_args;
    for (const Array& a : args) py_args.append(py::cast(a));
    py::sequence outs = fn(py_args);
    if (outs.size() != results.size())
      throw_error(ErrorKind::Internal, "host_callback",
                  "the callback returned " + std::to_string(outs.size()) + " values, expected " +
                      std::to_string(results.size()));
    for (size_t k = 0; k < results.size(); ++k) {
      py::array a = py::array::ensure(outs[k], py::array::c_style);
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

}  // namespace

void bind_host_callbacks(py::module_& m) {
  set_host_call_handler(&call_python);
  py::class_<HostCallable, std::shared_ptr<HostCallable>>(m, "HostCallable", R"doc(
A Python function that host_callback nodes can call: HostCallable(fn).id is the value of
their `callback` attribute while this object lives. fn(list of Array) returns one array
per result, of the result's dtype and size.)doc")
      .def(py::init<py::object>())
      .def_property_readonly("id", &HostCallable::id);
  m.def("in_host_call", &in_host_call,
        "Whether this thread runs a host callback (inside a device's task).");
}

}  // namespace tinyxla
