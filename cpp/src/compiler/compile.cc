// compile_program (see program.h): the pass pipeline, then one step per node.
#include <limits>

#include "../core/profiler.h"
#include "../ir/fused_body.h"
#include "../ops/op_def.h"
#include "../ops/structural.h"
#include "../passes/passes.h"
#include "cpu_target.h"
#include "program.h"

namespace tinyxla::compiler {
namespace {

// A one-node body for a lone elementwise node, so that it runs through the interpreter.
std::unique_ptr<cpu::FusedKernel> single_op_kernel(const Graph& g, const Node& n) {
  Graph body;
  Node copy = n;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ValueType& t = g.type(n.inputs[i]);
    copy.inputs[i] = body.add_node(
        ops::make_node(OpKind::parameter, ops::ParameterAttrs{0, t.shape, t.dtype}), {t});
  }
  ValueId v = body.add_node(std::move(copy), {g.type(n.first_result)});
  body.set_outputs({v});
  return std::make_unique<cpu::FusedKernel>(body);
}

// The profiler's name of kernel node `n`: its op, or a fused node's ops in order.
const char* kernel_label(const Node& n) {
  if (n.kind != OpKind::fused) return profiler::intern(ops::op_def(n.kind).spelling(n.attrs));
  std::string label = "fusion:";
  int shown = 0, more = 0;
  for (const Node& b : n.body->nodes()) {
    if (b.kind == OpKind::parameter || b.kind == OpKind::constant) continue;
    if (shown == 8) {
      ++more;
      continue;
    }
    label += (shown++ ? "," : " ") + ops::op_def(b.kind).spelling(b.attrs);
  }
  if (more) label += ",+" + std::to_string(more);
  return profiler::intern(label);
}

const char* result_types(const Graph& g, const Node& n) {
  std::string types;
  for (int r = 0; r < n.num_results; ++r)
    types += (r ? ", " : "") + type_str(g.type(n.first_result + r));
  return profiler::intern(types);
}

// A loop's trips are unknown: it always runs on the device's stream, never on the caller.
constexpr double kLoopCost = 1e12;

}  // namespace

Program compile_program(const Graph& graph, const CompileOptions& options) {
  const CpuFusionTarget target;
  graph.verify();
  Graph g = graph;
  if (options.simplify) {
    profiler::Span span("passes: simplify, cse, dce", "compile");
    g = passes::dce(passes::cse(passes::simplify(g)));
  }
  if (options.fuse) {
    profiler::Span span("passes: fusion", "compile");
    g = passes::dce(passes::fuse(g, target));
    if (options.fuse_epilogues) g = passes::fuse_epilogues(g, target);
  }
  g.verify();
  profiler::Span span("passes: memory plan and steps", "compile");
  Program p;
  p.name = profiler::intern(options.name.empty() ? "jit" : options.name);
  const passes::MemoryPlan plan = passes::plan_memory(g);
  p.is_output.assign(size_t(g.num_values()), 0);
  p.output_donors = plan.output_donors;
  for (ValueId v : g.outputs()) p.is_output[size_t(v)] = 1;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    Step step;
    step.release = plan.release[size_t(i)];
    step.inplace = plan.inplace[size_t(i)];
    if (n.kind == OpKind::parameter) {
      step.kind = StepKind::Parameter;
    } else if (n.kind == OpKind::constant) {
      step.kind = StepKind::Constant;
      p.constants.push_back(n.constant);
    } else if (ops::op_def(n.kind).is_view()) {
      step.kind = StepKind::View;
    } else if (n.kind == OpKind::while_loop) {
      step.kind = StepKind::Loop;
      step.label = kernel_label(n);
      step.detail = result_types(g, n);
      p.num_kernels += 1;
      p.cost += kLoopCost;
      for (const Node& b : n.body->nodes())
        if (b.kind == OpKind::constant) p.constants.push_back(b.constant);
    } else {
      p.num_kernels += 1;
      if (ops::op_def(n.kind).stream_only()) p.cost = std::numeric_limits<double>::infinity();
      step.label = kernel_label(n);
      step.detail = result_types(g, n);
      if (passes::is_update(n.kind)) {
        // Mostly written in place: the work is the update (its operand is copied only
        // when it is still live, which then runs wherever the graph runs).
        p.cost += double(num_elements(g.type(n.inputs[n.kind == OpKind::scatter ? 2 : 1]).shape));
      } else {
        for (int r = 0; r < n.num_results; ++r)
          p.cost += double(num_elements(g.type(n.first_result + r).shape));
      }
      if (n.kind == OpKind::fused) {
        const FusedBodyInfo info = check_fused_body(*n.body);
        p.cost += double(info.size);
        for (const Node& b : n.body->nodes())
          if (b.kind == OpKind::constant) p.constants.push_back(b.constant);
        if (info.anchor >= 0) {
          // Else (an epilogue op the interpreter lacks) the body runs node by node.
          try {
            step.kernel = std::make_unique<cpu::FusedKernel>(epilogue_body(*n.body, info.anchor));
            step.anchor = info.anchor;
          } catch (const Error&) {
            step.kernel.reset();
          }
          step.kind = step.kernel ? StepKind::Anchored : StepKind::Body;
          p.steps.push_back(std::move(step));
          continue;
        }
      }
      // Elementwise and fused nodes go through the interpreter when it has their ops;
      // otherwise the ops' kernels run them (and report unsupported dtypes their way).
      try {
        if (n.kind == OpKind::fused) step.kernel = std::make_unique<cpu::FusedKernel>(*n.body);
        else if (is_elementwise(n.kind) && target.can_fuse_elementwise(n, g))
          step.kernel = single_op_kernel(g, n);
      } catch (const Error&) {
        step.kernel.reset();
      }
      step.kind = step.kernel ? StepKind::Interpreted
                              : n.kind == OpKind::fused ? StepKind::Body : StepKind::Kernel;
    }
    p.steps.push_back(std::move(step));
  }
  // Only the interpreter is known to read each element before writing it in place; an
  // update's kernel writes in place by design.
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const int i = g.defining_node(g.outputs()[k]);
    if (p.steps[size_t(i)].kind != StepKind::Interpreted && !passes::is_update(g.node(i).kind))
      p.output_donors[k].clear();
  }
  p.graph = std::move(g);
  return p;
}

}  // namespace tinyxla::compiler
