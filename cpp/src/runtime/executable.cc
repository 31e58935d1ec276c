// Executable: runs a compiler::Program node by node inside one device task, calling the
// ops' kernels directly, and swaps in the upper tier's generated code when it is built.
// Results are allocated up front (they are the futures run() returns); intermediates are
// dropped after their last use, and a dead dense intermediate nobody else holds becomes the
// output buffer of an elementwise step. compile() wraps compiler::compile_program.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "../codegen/module.h"
#include "../codegen/toolchain.h"
#include "../core/host_calls.h"
#include "../compiler/program.h"
#include "../core/profiler.h"
#include "../cpu/kernels.h"
#include "../ops/control_flow.h"
#include "../ops/structural.h"
#include "../passes/passes.h"
#include "tinyxla/compiler.h"
#include "tinyxla/device.h"
#include "tinyxla/error.h"
#include "fault_injection.h"

namespace tinyxla {
namespace {

// Graphs cheaper than this (element-ops, some tens of microseconds) run on the caller when
// the stream is idle: waking the stream thread would cost as much.
constexpr double kInlineCost = 1 << 17;
// A loop the upper tier can run whole asks for it after this many trips on the base tier,
// and looks for it every kNativeCheck trips.
constexpr int64_t kNativeAfter = 1000;
constexpr int64_t kNativeCheck = 256;

// Runs a fused body node by node with the eager kernels (for bodies the interpreter
// does not take).
void run_body(const Graph& body, const std::vector<Array>& ins, const std::vector<Array>& outs) {
  std::vector<Array> vals(size_t(body.num_values()));
  for (const Node& n : body.nodes()) {
    const ValueId v = n.first_result;
    const ValueType& t = body.type(v);
    if (n.kind == OpKind::parameter) {
      vals[size_t(v)] = ins[size_t(n.attr<ops::ParameterAttrs>().index)];
    } else if (n.kind == OpKind::constant) {
      vals[size_t(v)] = n.constant;
    } else if (ops::op_def(n.kind).is_view()) {
      vals[size_t(v)] = ops::ready_view(n, t, vals[size_t(n.inputs[0])]);
    } else {
      std::vector<Array> args;
      for (ValueId in : n.inputs) args.push_back(vals[size_t(in)]);
      Array out(t.shape, t.dtype, ins.empty() ? 0 : ins[0].device(), Event::ready());
      ops::op_def(n.kind).run(n.attrs, args, {out});
      vals[size_t(v)] = out;
    }
  }
  for (size_t o = 0; o < outs.size(); ++o) {
    const Array& src = vals[size_t(body.outputs()[o])];
    if (src.size()) cpu::copy(src, outs[o]);
  }
}

// A fused body that starts with an anchor op: the op's kernel runs the rest of the body
// (`step.kernel`, which reads the anchor's result last) on each part of its result as it
// writes it. That result goes straight into its own output when the body returns it, else
// into an output the epilogue may overwrite in place, else into a temporary.
void run_anchored(const Graph& body, const compiler::Step& step, const std::vector<Array>& ins,
                  const std::vector<Array>& outs) {
  const Node& a = body.node(step.anchor);
  const ValueType& t = body.type(a.first_result);
  std::vector<Array> operands;
  for (ValueId v : a.inputs) operands.push_back(ins[size_t(body.node(body.defining_node(v)).attr<ops::ParameterAttrs>().index)]);
  Array result;
  std::vector<Array> epilogue_outs;
  for (size_t o = 0; o < outs.size(); ++o) {
    if (body.outputs()[o] == a.first_result) result = outs[o];
    else epilogue_outs.push_back(outs[o]);
  }
  const int last = int(ins.size());
  for (size_t o = 0; o < epilogue_outs.size() && !result.buffer(); ++o) {
    const Array& out = epilogue_outs[o];
    if (out.dtype() == t.dtype && out.shape() == t.shape && out.is_contiguous() &&
        step.kernel->may_alias(last, int(o)))
      result = out;
  }
  if (!result.buffer()) result = Array(t.shape, t.dtype, outs[0].device(), Event::ready());
  std::vector<Array> epilogue_ins = ins;
  epilogue_ins.push_back(result);
  const cpu::FusedKernel::Bound epilogue = step.kernel->bind(epilogue_ins, epilogue_outs);
  ops::op_def(a.kind).run_with_epilogue(a.attrs, operands, {result},
                                        [&](int64_t b, int64_t e) { epilogue.run(b, e); });
}

// A run's vectors for one step's operands and results, reused from step to step (and run to
// run) so that a step allocates none; empty between steps.
struct StepScratch {
  std::vector<Array> ins, results;
};

// Empties a scratch vector when the step ends, by return or throw.
struct Emptied {
  std::vector<Array>& v;
  ~Emptied() { v.clear(); }
};

// A step's operands, moved out of the value table (into `scratch`) for the kernel's call and
// back when it returns or throws: no reference count changes hands. An operand named twice
// is copied the second time.
struct LentOperands {
  std::vector<Array>& vals;
  const std::vector<ValueId>& ids;
  std::vector<Array>& ins;

  LentOperands(std::vector<Array>& table, const std::vector<ValueId>& inputs,
               std::vector<Array>& scratch)
      : vals(table), ids(inputs), ins(scratch) {
    ins.clear();
    ins.reserve(ids.size());
    for (size_t k = 0; k < ids.size(); ++k) {
      const size_t first = first_use(k);
      ins.push_back(first < k ? ins[first] : std::move(vals[size_t(ids[k])]));
    }
  }
  ~LentOperands() {
    for (size_t k = 0; k < ids.size(); ++k)
      if (first_use(k) == k) vals[size_t(ids[k])] = std::move(ins[k]);
    ins.clear();
  }
  LentOperands(const LentOperands&) = delete;
  LentOperands& operator=(const LentOperands&) = delete;

 private:
  size_t first_use(size_t k) const {
    return size_t(std::find(ids.begin(), ids.begin() + std::ptrdiff_t(k), ids[k]) - ids.begin());
  }
};

}  // namespace

struct Executable::Impl {
  compiler::Program program;
  const Graph& graph = program.graph;
  // Per node: a while_loop's compiled body (compiled with the graph).
  std::vector<std::shared_ptr<Executable>> bodies;
  bool side_effects = false;  // the graph or a body of it calls the host
  // Per value: its dense layout, shared by the results of every run.
  std::vector<std::shared_ptr<const Layout>> layouts;

  // The upper tier: generated when first needed, then read by runs without a lock.
  codegen::Mode codegen_mode = codegen::Mode::Off;
  mutable std::mutex codegen_m;
  mutable bool generated = false;
  mutable std::shared_ptr<codegen::Module> module;
  mutable std::atomic<const codegen::Module*> module_ptr{nullptr};
  mutable std::atomic<int> runs{0};
  codegen::Environment environment;  // as compile() found it, for the module's build

  const std::shared_ptr<codegen::Module>& ensure_module() const {
    std::lock_guard<std::mutex> lock(codegen_m);
    if (!generated) {
      profiler::Span span("codegen: generate C", "compile", program.name);
      module = codegen::Module::generate(graph);
      generated = true;
      module_ptr.store(module.get(), std::memory_order_release);
    }
    return module;
  }
  void start_codegen() const {
    if (const auto& m = ensure_module()) m->start(environment);
  }
  // The modules of this graph and of its loop bodies, nested ones included (a worklist,
  // no recursion); those not generated yet are left out.
  std::vector<const codegen::Module*> modules_within() const {
    std::vector<const codegen::Module*> found;
    std::vector<const Impl*> todo{this};
    while (!todo.empty()) {
      const Impl* impl = todo.back();
      todo.pop_back();
      if (const codegen::Module* m = impl->module_ptr.load(std::memory_order_acquire)) found.push_back(m);
      for (const auto& body : impl->bodies)
        if (body) todo.push_back(body->impl_.get());
    }
    return found;
  }

  // Value tables of finished runs, kept for the next: a table of this graph's values is a
  // large allocation, and each large allocation made glibc consolidate its fast bins (a
  // few percent of a small graph's run).
  mutable std::mutex tables_m;
  struct RunTable {
    std::vector<Array> vals;
    StepScratch scratch;
  };
  mutable std::vector<RunTable> tables;

  // One run's values, by value id: taken from `tables` (or made), emptied and given back
  // when the run ends, so the buffers it held die with the run as before.
  struct ValueTable {
    const Impl& impl;
    RunTable run;
    std::vector<Array>& vals = run.vals;
    explicit ValueTable(const Impl& owner) : impl(owner) {
      {
        std::lock_guard<std::mutex> lock(impl.tables_m);
        if (!impl.tables.empty()) {
          run = std::move(impl.tables.back());
          impl.tables.pop_back();
        }
      }
      vals.resize(size_t(impl.graph.num_values()));
    }
    ~ValueTable() {
      for (Array& a : vals) a = Array();
      std::lock_guard<std::mutex> lock(impl.tables_m);
      impl.tables.push_back(std::move(run));
    }
    ValueTable(const ValueTable&) = delete;
    ValueTable& operator=(const ValueTable&) = delete;
  };

  // The body of the device task; `outs` (the task's copies of the results) move into the
  // run's values.
  void execute(std::vector<Array>& args, std::vector<Array>& outs, const EventPtr& ev) const {
    for (const Array& a : args)
      if (a.event()->has_error()) return ev->set_error(a.event()->error());
    for (const Array& c : program.constants)
      if (c.event()->has_error()) return ev->set_error(c.event()->error());
    try {
      {
        // Recorded before the results are ready: whoever waited for them sees the span.
        profiler::Span span(program.name, "executable");
        // Host calls without results may run behind the graph; the results wait for them.
        std::optional<DeferredHostCalls> host_calls;
        if (side_effects) host_calls.emplace();
        ValueTable table(*this);
        std::vector<Array>& vals = table.vals;
        const int dev = outs.empty() ? 0 : outs[0].device();
        for (size_t k = 0; k < outs.size(); ++k)
          if (outs[k].event() == ev) vals[size_t(graph.outputs()[k])] = std::move(outs[k]);
        for (size_t i = 0; i < program.steps.size(); ++i) {
          run_named_step(int(i), args, vals, table.run.scratch, dev);
          for (ValueId v : program.steps[i].release) vals[size_t(v)] = Array();
        }
        if (host_calls) host_calls->finish();
      }
      ev->set_ready();
    } catch (...) {
      ev->set_error(std::current_exception());
    }
  }

  // A body's state across the trips of one loop run: its values, and the buffers of
  // values that died in the last trip, by the value that takes them in the next one.
  struct Frame {
    std::vector<Array> vals, spare;
    StepScratch scratch;
  };

  // Per value of a loop body: the value whose result its buffer becomes once it is dead
  // (itself for a computed value; for carry parameter k, the body's output k, so that the
  // carry is double-buffered), or -1 (views, constants, loop constants).
  std::vector<ValueId> reuse_as;

  void plan_reuse(size_t num_consts) {
    reuse_as.assign(size_t(graph.num_values()), -1);
    auto computed = [&](ValueId v) {
      const compiler::StepKind k = program.steps[size_t(graph.defining_node(v))].kind;
      return k == compiler::StepKind::Kernel || k == compiler::StepKind::Interpreted ||
             k == compiler::StepKind::Body || k == compiler::StepKind::Loop;
    };
    for (int v = 0; v < graph.num_values(); ++v)
      if (computed(v)) reuse_as[size_t(v)] = v;
    const auto& params = graph.parameters();
    for (size_t k = 0; num_consts + k < params.size() && k + 1 < graph.outputs().size(); ++k) {
      const ValueId out = graph.outputs()[k];
      if (computed(out)) reuse_as[size_t(params[num_consts + k])] = out;
    }
  }

  // Drops the executor's reference to value v; a buffer nobody else holds is kept for
  // the value that reuses it (a loop body's frame only).
  void release(ValueId v, std::vector<Array>& vals, Frame* frame) const {
    Array& a = vals[size_t(v)];
    if (frame && a.buffer() && reuse_as[size_t(v)] >= 0 && a.buffer().use_count() == 1 &&
        !a.buffer()->borrowed() && a.offset() == 0 && a.is_contiguous())
      frame->spare[size_t(reuse_as[size_t(v)])] = std::move(a);
    a = Array();
  }

  // One trip of a loop body on this thread: `args` are the body's parameters (moved in);
  // returns its outputs; throws the error of a failing kernel.
  std::vector<Array> run_trip(std::vector<Array>& args, Frame& f, int dev) const {
    for (size_t i = 0; i < program.steps.size(); ++i) {
      run_named_step(int(i), args, f.vals, f.scratch, dev, &f);
      for (ValueId v : program.steps[i].release) release(v, f.vals, &f);
    }
    const std::vector<ValueId>& outputs = graph.outputs();
    std::vector<Array> outs(outputs.size());
    for (size_t k = outputs.size(); k-- > 0;) {  // a value returned twice is one array
      bool again = false;
      for (size_t j = 0; j < k; ++j) again = again || outputs[j] == outputs[k];
      outs[k] = again ? f.vals[size_t(outputs[k])] : std::move(f.vals[size_t(outputs[k])]);
    }
    for (Array& a : f.vals) a = Array();
    return outs;
  }

  // A while_loop node: the body runs until its predicate is false. The carry moves from
  // one trip to the next (a buffer nobody else holds is updated in place by the body), the
  // body's dead buffers are reused by the next trip, and the loop constants are shared.
  void run_loop(int i, const std::vector<Array>& vals, std::vector<Array>& results, int dev) const {
    const Node& n = graph.node(i);
    const Impl& body = *bodies[size_t(i)]->impl_;
    const size_t nc = size_t(n.attr<ops::WhileLoopAttrs>().num_consts);
    auto truth = [](const Array& pred) { return *reinterpret_cast<const bool*>(pred.data()); };
    bool go = truth(vals[size_t(n.inputs[0])]);
    // The body's generated kernels read its parameters dense: a strided operand (a
    // broadcast lane constant) is copied dense once here, not refused on every trip.
    const bool densify = go && body.codegen_mode != codegen::Mode::Off;
    auto operand = [&](size_t k) {
      const Array& x = vals[size_t(n.inputs[k])];
      if (!densify || x.is_contiguous()) return x;
      Array d(x.shape(), x.dtype(), dev, Event::ready());
      cpu::copy(x, d);
      return d;
    };
    std::vector<Array> consts, carry;
    for (size_t k = 1; k <= nc; ++k) consts.push_back(operand(k));
    for (size_t k = 1 + nc; k < n.inputs.size(); ++k) carry.push_back(operand(k));
    Frame f;
    f.vals.resize(size_t(body.graph.num_values()));
    f.spare.resize(size_t(body.graph.num_values()));
    std::vector<Array> args;
    for (int64_t trip = 0;; ++trip) {
      // The upper tier runs a loop it generated whole from the current carry on: from the
      // start when built, else once a long loop has asked for it (a run of many trips
      // need not wait for the graph's second run).
      if (go && (trip == 0 || trip % kNativeCheck == 0) && run_native(i, vals, carry, results, dev))
        return;
      if (trip == kNativeAfter && codegen_mode == codegen::Mode::Auto) start_codegen();
      if (!go) break;
      // A body's second trip, in this run or a later one (a cond branch or a compacted
      // lane loop may take one trip per run), builds its module.
      if (body.codegen_mode == codegen::Mode::Auto && body.runs.load(std::memory_order_relaxed) < 2 &&
          body.runs.fetch_add(1) == 1)
        body.start_codegen();
      args.assign(consts.begin(), consts.end());
      for (Array& c : carry) args.push_back(std::move(c));
      carry = body.run_trip(args, f, dev);
      go = truth(carry.back());
      carry.pop_back();
    }
    for (size_t r = 0; r < carry.size(); ++r) {
      if (results[r].buffer()) {
        if (carry[r].size()) cpu::copy(carry[r], results[r]);
      } else {
        results[r] = std::move(carry[r]);
      }
    }
  }

  // Runs loop node i to its end with the upper tier's function for it, from `carry` (the
  // predicate is true); false when there is none (yet).
  bool run_native(int i, const std::vector<Array>& vals, const std::vector<Array>& carry,
                  std::vector<Array>& results, int dev) const {
    const codegen::Module* m = module_ptr.load(std::memory_order_acquire);
    if (!m || !m->has_loop(i)) return false;
    const Node& n = graph.node(i);
    const size_t nc = size_t(n.attr<ops::WhileLoopAttrs>().num_consts);
    std::vector<Array> ins;
    for (size_t k = 1; k <= nc; ++k) ins.push_back(vals[size_t(n.inputs[k])]);
    ins.insert(ins.end(), carry.begin(), carry.end());
    for (size_t r = 0; r < results.size(); ++r)
      if (!results[r].buffer()) {
        const ValueType& t = graph.type(n.first_result + int(r));
        results[r] = Array::of_layout(layouts[size_t(n.first_result) + r], t.dtype, dev,
                                      Event::ready());
      }
    return m->run_loop(i, ins, results);
  }

  // run_step, with an error that does not name the failing op (an allocation failure)
  // told which op it stopped.
  void run_named_step(int i, std::vector<Array>& args, std::vector<Array>& vals,
                      StepScratch& scratch, int dev, Frame* frame = nullptr) const {
    try {
      run_step(i, args, vals, scratch, dev, frame);
    } catch (const Error& e) {
      const std::string op = op_kind_name(graph.node(i).kind);
      const std::string msg = e.what();
      if (msg.rfind("[" + op + "]", 0) == 0) throw;
      throw Error(e.kind(), msg + " (while running " + op + ")");
    }
  }

  void run_step(int i, std::vector<Array>& args, std::vector<Array>& vals, StepScratch& scratch,
                int dev, Frame* frame = nullptr) const {
    const compiler::Step& step = program.steps[size_t(i)];
    const Node& n = graph.node(i);
    const ValueId v0 = n.first_result;
    switch (step.kind) {
      case compiler::StepKind::Loop: {
        profiler::Span span(step.label, "kernel", step.detail);
        std::vector<Array> results(size_t(n.num_results));
        for (int r = 0; r < n.num_results; ++r) results[size_t(r)] = vals[size_t(v0 + r)];
        run_loop(i, vals, results, dev);
        for (int r = 0; r < n.num_results; ++r) vals[size_t(v0 + r)] = std::move(results[size_t(r)]);
        return;
      }
      case compiler::StepKind::Parameter:
        // Moved: once the caller drops its handle, the buffer is ours alone to reuse.
        if (!vals[size_t(v0)].buffer())
          vals[size_t(v0)] = std::move(args[size_t(n.attr<ops::ParameterAttrs>().index)]);
        return;
      case compiler::StepKind::Constant:
        if (!vals[size_t(v0)].buffer()) vals[size_t(v0)] = n.constant;
        return;
      case compiler::StepKind::View: {
        Array view = ops::ready_view(n, graph.type(v0), vals[size_t(n.inputs[0])]);
        if (program.is_output[size_t(v0)]) {
          // A loop body's outputs are not preallocated: the carry gets its own buffer.
          const ValueType& t = graph.type(v0);
          if (!vals[size_t(v0)].buffer())
            vals[size_t(v0)] = Array::of_layout(layouts[size_t(v0)], t.dtype, dev, Event::ready());
          cpu::copy(view, vals[size_t(v0)]);
        } else {
          vals[size_t(v0)] = std::move(view);
        }
        return;
      }
      default:
        break;
    }
    // Results: the preallocated outputs, a dead input's buffer, or fresh buffers.
    // Inputs given to an earlier result (only a node of several results records them).
    std::vector<size_t> taken;
    std::vector<Array>& results = scratch.results;
    const Emptied emptied{results};
    results.clear();
    results.resize(size_t(n.num_results));
    const bool update = passes::is_update(n.kind);
    for (int r = 0; r < n.num_results; ++r) {
      const ValueId v = v0 + r;
      const ValueType& t = graph.type(v);
      Array& preallocated = vals[size_t(v)];
      for (const auto& [j, rr] : step.inplace) {
        if (rr != r || (step.kind != compiler::StepKind::Interpreted && !update) ||
            std::find(taken.begin(), taken.end(), size_t(j)) != taken.end())
          continue;
        Array& x = vals[size_t(n.inputs[size_t(j)])];
        if (x.buffer().use_count() != 1 || x.buffer()->borrowed() || x.offset() != 0 ||
            !x.is_contiguous() ||
            x.nbytes() != size_t(num_elements(t.shape)) * itemsize(t.dtype))
          continue;
        if (r + 1 < n.num_results) taken.push_back(size_t(j));
        if (preallocated.buffer()) {
          // An output, not yet written: it takes the dead operand's memory (and data),
          // which the update then only patches.
          preallocated.buffer()->exchange_storage(*x.buffer());
          x = Array::of_layout(x.layout(), 0, x.dtype(), x.device(), preallocated.buffer(),
                               x.event());
        } else {
          results[size_t(r)] = Array::of_layout(layouts[size_t(v)], 0, t.dtype, dev, x.buffer(),
                                                Event::ready());
        }
        break;
      }
      // Moved (the step's results go back to `vals` once it has run): no copy of its shape.
      if (preallocated.buffer()) results[size_t(r)] = std::move(preallocated);
      if (results[size_t(r)].buffer()) continue;
      if (frame) {  // a loop body: the buffer this value had, or the carry's other half
        Array& spare = frame->spare[size_t(v)];
        if (spare.buffer() && spare.buffer().use_count() == 1 &&
            spare.nbytes() == size_t(num_elements(t.shape)) * itemsize(t.dtype)) {
          results[size_t(r)] = Array::of_layout(layouts[size_t(v)], 0, t.dtype, dev,
                                                spare.buffer(), Event::ready());
          spare = Array();
          continue;
        }
      }
      results[size_t(r)] = Array::of_layout(layouts[size_t(v)], t.dtype, dev, Event::ready());
    }
    const LentOperands lent(vals, n.inputs, scratch.ins);
    const std::vector<Array>& ins = lent.ins;
    runtime::check_fault(op_kind_name(n.kind));
    profiler::Span span(step.label, "kernel", step.detail);
    switch (step.kind) {
      case compiler::StepKind::Interpreted: {
        const codegen::Module* m = module_ptr.load(std::memory_order_acquire);
        if (!m || !m->run(i, ins, results)) step.kernel->run(ins, results);
        break;
      }
      case compiler::StepKind::Body: run_body(*n.body, ins, results); break;
      case compiler::StepKind::Anchored: run_anchored(*n.body, step, ins, results); break;
      default: ops::op_def(n.kind).run(n.attrs, ins, results); break;
    }
    for (int r = 0; r < n.num_results; ++r) vals[size_t(v0 + r)] = std::move(results[size_t(r)]);
  }
};

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executable::~Executable() = default;

std::string Executable::text() const { return impl_->graph.to_text(); }
const Graph& Executable::graph() const { return impl_->graph; }
int Executable::num_kernels() const { return impl_->program.num_kernels; }

namespace {

// The memory plan run on paper: which intermediate buffer each value lives in (-1 for
// parameters, constants and outputs; a view shares its operand's buffer, a result written
// into a dead operand's buffer takes that buffer), and the peak bytes alive at once.
struct BufferPlan {
  std::vector<int> owner;
  int64_t peak = 0;
};

int64_t value_bytes(const Graph& g, ValueId v) {
  const ValueType& t = g.type(v);
  return num_elements(t.shape) * int64_t(itemsize(t.dtype));
}

BufferPlan plan_buffers(const compiler::Program& p) {
  const Graph& g = p.graph;
  struct Held {
    int64_t bytes;
    int refs;
  };
  std::vector<Held> buffers;
  BufferPlan plan;
  plan.owner.assign(size_t(g.num_values()), -1);
  std::vector<int>& owner = plan.owner;
  int64_t live = 0;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const compiler::Step& step = p.steps[size_t(i)];
    const Node& n = g.node(i);
    if (step.kind == compiler::StepKind::View) {
      const int b = owner[size_t(n.inputs[0])];
      if (b >= 0 && !p.is_output[size_t(n.first_result)]) {
        owner[size_t(n.first_result)] = b;
        ++buffers[size_t(b)].refs;
      }
    } else if (step.kind != compiler::StepKind::Parameter &&
               step.kind != compiler::StepKind::Constant) {
      // As Impl::run_step: only the interpreter and updates write into an operand.
      const bool may_reuse =
          step.kind == compiler::StepKind::Interpreted || passes::is_update(n.kind);
      std::vector<char> taken(n.inputs.size(), 0);
      for (int r = 0; r < n.num_results; ++r) {
        const ValueId v = n.first_result + r;
        if (p.is_output[size_t(v)]) continue;
        for (const auto& [j, rr] : step.inplace) {
          const int b = owner[size_t(n.inputs[size_t(j)])];
          if (!may_reuse || rr != r || taken[size_t(j)] || b < 0 || buffers[size_t(b)].refs != 1 ||
              buffers[size_t(b)].bytes != value_bytes(g, v))
            continue;
          taken[size_t(j)] = 1;
          owner[size_t(v)] = b;
          ++buffers[size_t(b)].refs;
          break;
        }
        if (owner[size_t(v)] < 0) {
          owner[size_t(v)] = int(buffers.size());
          buffers.push_back(Held{value_bytes(g, v), 1});
          live += value_bytes(g, v);
        }
      }
      plan.peak = std::max(plan.peak, live);
    }
    for (ValueId v : step.release) {
      const int b = owner[size_t(v)];
      if (b >= 0 && --buffers[size_t(b)].refs == 0) live -= buffers[size_t(b)].bytes;
    }
  }
  return plan;
}

}  // namespace

Executable::MemoryAnalysis Executable::memory_analysis(const std::vector<char>& donated) const {
  const compiler::Program& p = impl_->program;
  const Graph& g = p.graph;
  MemoryAnalysis m;
  for (ValueId v : g.parameters()) m.argument_bytes += value_bytes(g, v);
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    m.output_bytes += value_bytes(g, g.outputs()[k]);
    for (int donor : p.output_donors[k])
      if (size_t(donor) < donated.size() && donated[size_t(donor)]) {
        m.alias_bytes += value_bytes(g, g.outputs()[k]);
        break;
      }
  }
  m.temp_bytes = plan_buffers(p).peak;
  return m;
}

std::vector<int> Executable::buffer_ids() const { return plan_buffers(impl_->program).owner; }

std::string Executable::tier() const {
  const codegen::Module* m = impl_->module_ptr.load(std::memory_order_acquire);
  return m && m->loaded() ? "upper" : "base";
}

void Executable::wait_codegen() const {
  for (const codegen::Module* m : impl_->modules_within()) m->wait();
}

std::string Executable::codegen_status() const {
  if (impl_->codegen_mode == codegen::Mode::Off) return "off";
  std::lock_guard<std::mutex> lock(impl_->codegen_m);
  if (!impl_->generated) return "pending";
  return impl_->module ? impl_->module->status() : "none";
}

int64_t Executable::codegen_kernel_runs() const {
  int64_t runs = 0;
  for (const codegen::Module* m : impl_->modules_within()) runs += m->runs();
  return runs;
}

std::string Executable::codegen_source() const {
  const auto& m = impl_->ensure_module();
  return m ? m->source() : "";
}

std::vector<Array> Executable::run(std::vector<Array> args, int dev,
                                   const std::vector<char>& donated) const {
  const Graph& g = impl_->graph;
  const auto& params = g.parameters();
  if (args.size() != params.size())
    throw_error(ErrorKind::InvalidArgument, "jit",
                "expected " + std::to_string(params.size()) + " arguments, got " +
                    std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const ValueType& want = g.type(params[i]);
    if (!args[i].buffer() || args[i].shape() != want.shape || args[i].dtype() != want.dtype)
      throw_error(ErrorKind::InvalidArgument, "jit",
                  "argument " + std::to_string(i) + " has type " +
                      (args[i].buffer() ? type_str({args[i].shape(), args[i].dtype()}) : "<none>") +
                      ", the compiled graph takes " + type_str(want));
  }
  Device& target = device(dev);
  auto ev = std::make_shared<Event>();
  std::vector<Array> outs;
  outs.reserve(g.outputs().size());
  std::vector<char> taken(donated.size(), 0);
  std::vector<std::pair<int, std::shared_ptr<Buffer>>> late_donations;
  bool computes = false;
  for (ValueId v : g.outputs()) {
    const Node& n = g.node(g.defining_node(v));
    if (n.kind == OpKind::parameter) {
      outs.push_back(args[size_t(n.attr<ops::ParameterAttrs>().index)]);
    } else if (n.kind == OpKind::constant) {
      outs.push_back(n.constant);
    } else {
      // A value returned twice is one array.
      Array same;
      for (size_t k = 0; k < outs.size(); ++k)
        if (g.outputs()[k] == v) same = outs[k];
      const ValueType& t = g.type(v);
      const std::shared_ptr<const Layout>& layout = impl_->layouts[size_t(v)];
      for (int donor : impl_->program.output_donors[outs.size()]) {
        if (same.buffer() || size_t(donor) >= donated.size() || !donated[size_t(donor)] ||
            taken[size_t(donor)])
          continue;
        const Array& a = args[size_t(donor)];
        // Borrowed memory (dlpack) belongs to its producer: never written.
        if (a.offset() != 0 || !a.is_contiguous() || a.buffer()->borrowed() ||
            a.nbytes() != size_t(num_elements(t.shape)) * itemsize(t.dtype))
          continue;
        taken[size_t(donor)] = 1;
        if (a.buffer().use_count() == 1) {  // ours alone: nobody can see the buffer change
          same = Array::of_layout(layout, 0, t.dtype, dev, a.buffer(), ev);
        } else {  // still held by the op producing it: decide when the graph runs
          same = Array::of_layout(layout, t.dtype, dev, ev);
          late_donations.push_back({donor, same.buffer()});
        }
      }
      outs.push_back(same.buffer() ? same : Array::of_layout(layout, t.dtype, dev, ev));
      computes = true;
    }
  }
  if (!computes && !impl_->side_effects) return outs;
  if (impl_->codegen_mode == codegen::Mode::Auto && impl_->runs.fetch_add(1) == 1)
    impl_->start_codegen();
  std::vector<EventPtr> deps;
  for (const Array& a : args)
    if (!a.is_ready()) deps.push_back(a.event());
  for (const Array& c : impl_->program.constants)
    if (!c.is_ready()) deps.push_back(c.event());
  auto self = shared_from_this();
  auto task = [self, args = std::move(args), outs, ev,
               late = std::move(late_donations)]() mutable {
    // The producers have finished: a donated argument nobody else holds now gives its
    // memory to the result (which nobody can have read: its event is pending).
    for (auto& [donor, result] : late) {
      Array& a = args[size_t(donor)];
      if (a.buffer().use_count() != 1 || a.buffer()->borrowed()) continue;
      result->exchange_storage(*a.buffer());
      // The argument's data now lives in the result's buffer: read it from there.
      a = Array::of_layout(a.layout(), 0, a.dtype(), a.device(), result, a.event());
    }
    self->impl_->execute(args, outs, ev);
  };
  target.submit(std::move(deps), std::move(task), impl_->program.cost < kInlineCost);
  return outs;
}

std::shared_ptr<Executable> compile(const Graph& graph, const CompileOptions& options) {
  profiler::Span span("compile", "compile", options.name.empty() ? nullptr : profiler::intern(options.name));
  const codegen::Mode mode = codegen::mode_from_env();
  const codegen::Environment environment =
      mode == codegen::Mode::Off ? nullptr : codegen::capture_environment();
  auto make = [&](const Graph& g) {
    auto impl = std::make_unique<Executable::Impl>();
    impl->program = compiler::compile_program(g, options);
    impl->codegen_mode = mode;
    impl->environment = environment;
    impl->side_effects = impl->program.graph.has_side_effects();
    for (int v = 0; v < impl->program.graph.num_values(); ++v)
      impl->layouts.push_back(std::make_shared<const Layout>(impl->program.graph.type(v).shape));
    impl->bodies.resize(size_t(impl->program.graph.num_nodes()));
    if (mode == codegen::Mode::Eager) impl->start_codegen();
    return std::shared_ptr<Executable>(new Executable(std::move(impl)));
  };
  // Loop bodies nest: each is compiled beside its graph, from a worklist (no recursion).
  std::shared_ptr<Executable> root = make(graph);
  std::vector<Executable::Impl*> todo{root->impl_.get()};
  while (!todo.empty()) {
    Executable::Impl* impl = todo.back();
    todo.pop_back();
    const Graph& g = impl->program.graph;
    for (int i = 0; i < g.num_nodes(); ++i) {
      const Node& n = g.node(i);
      if (n.kind != OpKind::while_loop) continue;
      std::shared_ptr<Executable> body = make(*n.body);
      body->impl_->plan_reuse(size_t(n.attr<ops::WhileLoopAttrs>().num_consts));
      todo.push_back(body->impl_.get());
      impl->bodies[size_t(i)] = std::move(body);
    }
  }
  return root;
}

}  // namespace tinyxla
