// Python bindings of the profiler's recorder (core/profiler.h): start, stop (the spans as
// tuples), and spans recorded from Python (annotations, tracing and lowering).
#include "profiler_bindings.h"

#include <pybind11/stl.h>

#include "core/profiler.h"

namespace py = pybind11;

namespace tinyxla {

void bind_profiler(py::module_& m) {
  profiler::set_thread_name("python main thread");
  m.def("profiler_start", &profiler::start);
  m.def("profiler_on", &profiler::on);
  m.def("profiler_now", &profiler::now_ns);
  m.def("profiler_record", [](const std::string& name, const std::string& cat, uint64_t t0,
                              uint64_t t1, const std::string& detail) {
    profiler::record_copy(name, cat, t0, t1, detail);
  }, py::arg("name"), py::arg("cat"), py::arg("t0"), py::arg("t1"), py::arg("detail") = "");
  // (events as (name, category, detail, start ns, end ns, thread id), {thread id: name}),
  // or None when no session is running.
  m.def("profiler_stop", []() -> py::object {
    profiler::Trace trace;
    bool stopped;
    {
      py::gil_scoped_release release;
      stopped = profiler::stop(&trace);
    }
    if (!stopped) return py::none();
    py::list events;
    for (const profiler::Event& e : trace.events)
      events.append(py::make_tuple(e.name, e.cat, e.detail, e.t0, e.t1, e.tid));
    py::dict threads;
    for (const profiler::Thread& t : trace.threads) threads[py::int_(t.tid)] = t.name;
    return py::make_tuple(events, threads);
  });
}

}  // namespace tinyxla
