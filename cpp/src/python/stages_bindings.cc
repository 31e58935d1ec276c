// Python bindings for jax.stages and jax.export: an Executable's memory analysis and the
// exported-function file (tinyxla/export.h).
#include "stages_bindings.h"

#include <pybind11/stl.h>

#include "ops/op_def.h"
#include "tinyxla/executable.h"
#include "tinyxla/export.h"

namespace py = pybind11;

namespace tinyxla {

void bind_stages(py::module_& m) {
  m.def("memory_analysis", [](const Executable& e, const std::vector<bool>& donated) {
    const Executable::MemoryAnalysis a =
        e.memory_analysis(std::vector<char>(donated.begin(), donated.end()));
    py::dict d;
    d["argument_size_in_bytes"] = a.argument_bytes;
    d["output_size_in_bytes"] = a.output_bytes;
    d["alias_size_in_bytes"] = a.alias_bytes;
    d["temp_size_in_bytes"] = a.temp_bytes;
    return d;
  }, py::arg("executable"), py::arg("donated") = std::vector<bool>{});
  // The optimised graph for drawing it: per node its op's spelling, kind ("parameter",
  // "constant", "view" or "kernel"), operand value ids, results as (value id, type), and a
  // fused or loop node's body ops; then the outputs and each value's planned buffer.
  m.def("graph_description", [](const Executable& e) {
    const Graph& g = e.graph();
    py::list nodes;
    for (const Node& n : g.nodes()) {
      const ops::OpDef& def = ops::op_def(n.kind);
      py::dict d;
      d["op"] = def.spelling(n.attrs);
      d["kind"] = n.kind == OpKind::parameter ? "parameter"
                  : n.kind == OpKind::constant ? "constant"
                  : def.is_view()              ? "view"
                                               : "kernel";
      d["inputs"] = std::vector<int64_t>(n.inputs.begin(), n.inputs.end());
      py::list results;
      for (int r = 0; r < n.num_results; ++r)
        results.append(py::make_tuple(int64_t(n.first_result + r), type_str(g.type(n.first_result + r))));
      d["results"] = results;
      py::list body;
      if (n.body)
        for (const Node& b : n.body->nodes())
          if (b.kind != OpKind::parameter && b.kind != OpKind::constant)
            body.append(ops::op_def(b.kind).spelling(b.attrs));
      d["body"] = body;
      nodes.append(d);
    }
    py::dict out;
    out["nodes"] = nodes;
    out["outputs"] = std::vector<int64_t>(g.outputs().begin(), g.outputs().end());
    out["buffers"] = e.buffer_ids();
    return out;
  });
  m.def("inline_graph", [](GraphBuilder& b, const Graph& g, const std::vector<ValueId>& args) {
    return b.inline_graph(g, args);
  });
  m.attr("EXPORT_VERSION") = kExportVersion;
  m.def("serialize_exported", [](const py::bytes& metadata, const std::string& graph_text) {
    return py::bytes(serialize_exported(std::string(metadata), graph_text));
  });
  // (format version, metadata bytes, graph)
  m.def("deserialize_exported", [](const py::bytes& data) {
    ExportedFunction f = deserialize_exported(std::string(data));
    return py::make_tuple(f.version, py::bytes(f.metadata), std::make_shared<Graph>(std::move(f.graph)));
  });
}

}  // namespace tinyxla
