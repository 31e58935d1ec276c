// Definition of host_callback: a node that calls a host (Python) function on its operands
// and returns the function's results. It has a side effect, so the passes neither drop,
// merge nor fold it (OpDef::has_side_effects).
#include "host_callback.h"

#include "../core/host_calls.h"
#include "../cpu/kernels.h"

namespace tinyxla::ops {
namespace {

const ValueType kDone{Shape{0}, DType::Bool};

class HostCallbackDef final : public TypedOpDef<HostCallbackAttrs> {
 public:
  HostCallbackDef() : TypedOpDef(OpKind::host_callback) {}
  std::vector<ValueType> infer(std::any& a, const Types&) const override {
    const HostCallbackAttrs& at = get(a);
    if (at.result_ranks.size() != at.result_dtypes.size())
      invalid("result_ranks has " + std::to_string(at.result_ranks.size()) +
              " entries, result_dtypes " + std::to_string(at.result_dtypes.size()));
    std::vector<ValueType> types;
    size_t d = 0;
    for (size_t r = 0; r < at.result_dtypes.size(); ++r) {
      const int64_t code = at.result_dtypes[r], rank = at.result_ranks[r];
      if (code < 0 || code >= kNumDTypes) invalid("no dtype code " + std::to_string(code));
      if (rank < 0 || d + size_t(rank) > at.result_dims.size())
        invalid("result_dims is too short for result_ranks");
      Shape shape(at.result_dims.begin() + int64_t(d), at.result_dims.begin() + int64_t(d) + rank);
      for (int64_t n : shape)
        if (n < 0) invalid("negative result dimension " + std::to_string(n));
      d += size_t(rank);
      types.push_back({std::move(shape), DType(code)});
    }
    if (d != at.result_dims.size()) invalid("result_dims is longer than result_ranks need");
    types.push_back(kDone);
    return types;
  }
  bool multiple_results() const override { return true; }
  bool has_side_effects() const override { return true; }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    // An operand that is also a result of the running graph is written but its event is
    // the graph's, set when the graph ends: the callback gets it as a ready array.
    Arrays args;
    for (const Array& x : ins)
      args.push_back(x.is_ready() ? x
                                  : Array(x.shape(), x.strides(), x.offset(), x.dtype(), x.device(),
                                          x.buffer(), Event::ready()));
    if (outs.size() == 1 && may_defer_host_calls()) {
      // No results: the call may run later on the host-call thread, on copies (a loop
      // writes its carry in place on the next trip).
      Arrays copies;
      for (const Array& x : args) {
        copies.emplace_back(x.shape(), x.dtype(), x.device(), Event::ready());
        if (x.size()) cpu::copy(x, copies.back());
      }
      return defer_host_call(get(a).callback, std::move(copies));
    }
    call_host(get(a).callback, args, Arrays(outs.begin(), outs.end() - 1));
  }
};

}  // namespace

TINYXLA_REGISTER_OP(host_callback, HostCallbackDef)

}  // namespace tinyxla::ops
