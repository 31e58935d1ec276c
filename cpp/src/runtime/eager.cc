// The eager runner (see eager.h).
#include "eager.h"

#include "../core/profiler.h"
#include "../core/thread_pool.h"
#include "../ops/op_def.h"
#include "fault_injection.h"
#include "tinyxla/device.h"

namespace tinyxla::runtime {
namespace {

// Work below this many element-operations runs on the caller when the stream is idle.
constexpr double kInlineCost = 1 << 15;

// The device all of `ins` live on.
int common_device(const char* op, const std::vector<Array>& ins, int dev) {
  if (ins.empty()) return dev;
  dev = ins[0].device();
  for (const Array& x : ins)
    if (x.device() != dev)
      throw_error(ErrorKind::InvalidArgument, op,
                  "operands are on different devices (" + std::to_string(dev) + " and " +
                      std::to_string(x.device()) + ")");
  return dev;
}

// Runs `def`'s kernel on ready `ins` into `outs`: the error it (or a failed operand) gives
// the results, or null.
std::exception_ptr run_kernel(const ops::OpDef& def, const std::any& attrs,
                              const std::vector<Array>& ins, const std::vector<Array>& outs,
                              const char* label, const char* detail) {
  profiler::Span span(label ? label : def.name(), "kernel", detail);
  for (const Array& x : ins)
    if (x.event()->has_error()) return x.event()->error();
  try {
    check_fault(def.name());
    def.run(attrs, ins, outs);
    return nullptr;
  } catch (...) {
    return std::current_exception();
  }
}

}  // namespace

std::vector<Array> run_op(OpKind kind, const std::any& attrs, const std::vector<Array>& ins,
                          int device_id) {
  const ops::OpDef& def = ops::op_def(kind);
  if (!def.runs()) throw_error(ErrorKind::InvalidArgument, def.name(), "does not run as an op");
  if (attrs.type() != def.attrs_type())
    throw_error(ErrorKind::InvalidArgument, def.name(), "the attributes are of another kind");
  const int dev = common_device(def.name(), ins, device_id);
  std::vector<ops::infer::TypeRef> types;
  types.reserve(ins.size());
  for (const Array& x : ins) types.push_back({&x.shape(), x.dtype()});
  std::any canonical = attrs;
  std::vector<ValueType> result_types = def.infer(canonical, types);
  if (def.is_view()) {
    const Array& x = ins[0];
    const Array operand = def.view_needs_dense() && !x.is_contiguous() ? contiguous(x) : x;
    return {def.view(canonical, result_types[0], operand)};
  }
  // The results share one event: the kernel writes them all at once. An operand that
  // failed passes its error on; a kernel that throws stores its error in the results.
  const double cost = def.cost(canonical, ins, result_types);
  std::vector<EventPtr> deps;
  for (const Array& x : ins)
    if (!x.is_ready()) deps.push_back(x.event());
  // Small work on ready operands runs here when the stream is idle, with no task to build:
  // its results are ready (or failed) before anyone sees them.
  const bool now = deps.empty() && cost < kInlineCost && device(dev).runs_small_now();
  const EventPtr ev = now ? Event::ready() : std::make_shared<Event>();
  std::vector<Array> outs;
  outs.reserve(result_types.size());
  for (ValueType& t : result_types) outs.emplace_back(std::move(t.shape), t.dtype, dev, ev);
  // The profiler's names, made only while a trace runs (interning takes a lock).
  const char* label = nullptr;
  const char* detail = nullptr;
  if (profiler::on()) {
    label = profiler::intern(def.spelling(canonical));
    std::string types;
    for (const Array& o : outs) types += (types.empty() ? "" : ", ") + type_str({o.shape(), o.dtype()});
    detail = profiler::intern(types);
  }
  if (now) {
    ScopedFlushDenormals ftz;
    if (std::exception_ptr e = run_kernel(def, canonical, ins, outs, label, detail)) {
      auto failed = std::make_shared<Event>();
      failed->set_error(e);
      for (Array& o : outs)
        o = Array(o.shape(), o.strides(), o.offset(), o.dtype(), dev, o.buffer(), failed);
    }
    return outs;
  }
  auto task = [&def, attrs = std::move(canonical), ins, outs, label, detail]() {
    const EventPtr& ev = outs[0].event();
    if (std::exception_ptr e = run_kernel(def, attrs, ins, outs, label, detail)) ev->set_error(e);
    else ev->set_ready();
  };
  device(dev).submit(std::move(deps), std::move(task), false);
  return outs;
}

}  // namespace tinyxla::runtime
