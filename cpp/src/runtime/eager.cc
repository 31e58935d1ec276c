// The eager runner (see eager.h).
#include "eager.h"

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
  auto ev = std::make_shared<Event>();
  std::vector<Array> outs;
  outs.reserve(result_types.size());
  for (ValueType& t : result_types) outs.emplace_back(std::move(t.shape), t.dtype, dev, ev);
  std::vector<EventPtr> deps;
  for (const Array& x : ins)
    if (!x.is_ready()) deps.push_back(x.event());
  auto task = [&def, attrs = std::move(canonical), ins, outs]() {
    const EventPtr& ev = outs[0].event();
    for (const Array& x : ins) {
      if (x.event()->has_error()) {
        ev->set_error(x.event()->error());
        return;
      }
    }
    try {
      check_fault(def.name());
      def.run(attrs, ins, outs);
      ev->set_ready();
    } catch (...) {
      ev->set_error(std::current_exception());
    }
  };
  device(dev).submit(std::move(deps), std::move(task), cost < kInlineCost);
  return outs;
}

}  // namespace tinyxla::runtime
