// Definition of the while_loop region op. Its body is a graph the executor runs once per
// trip (runtime/executable.cc), so the definition has no kernel: it types the node, and
// check_while_body checks the body against the operands.
#include "control_flow.h"

namespace tinyxla::ops {
namespace {

class WhileLoopDef final : public TypedOpDef<WhileLoopAttrs> {
 public:
  WhileLoopDef() : TypedOpDef(OpKind::while_loop) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    const int64_t nc = get(a).num_consts;
    if (ins.empty() || ins[0].dtype != DType::Bool || !ins[0].shape->empty())
      invalid("the first operand must be the predicate, a bool[]");
    if (nc < 0 || size_t(nc) + 1 >= ins.size())
      invalid("num_consts=" + std::to_string(nc) + " with " + std::to_string(ins.size()) +
              " operands (a loop carries at least one value)");
    std::vector<ValueType> types;
    for (size_t i = size_t(nc) + 1; i < ins.size(); ++i) types.push_back({*ins[i].shape, ins[i].dtype});
    return types;
  }
  bool multiple_results() const override { return true; }
  void run(const std::any&, const std::vector<Array>&, const std::vector<Array>&) const override {
    throw_error(ErrorKind::Internal, name(), "a region runs in the executor, not as a kernel");
  }
};

}  // namespace

void check_while_body(const Graph& body, const std::vector<ValueType>& operands, int64_t num_consts) {
  auto fail = [](const std::string& msg) { throw_error(ErrorKind::InvalidArgument, "while_loop", msg); };
  const size_t n = operands.size() - 1;  // consts and carry
  const size_t carry = n - size_t(num_consts);
  if (body.parameters().size() != n)
    fail("the body takes " + std::to_string(body.parameters().size()) + " parameters, got " +
         std::to_string(n) + " operands after the predicate");
  for (size_t i = 0; i < n; ++i)
    if (body.type(body.parameters()[i]) != operands[i + 1])
      fail("parameter " + std::to_string(i) + " of the body has type " +
           type_str(body.type(body.parameters()[i])) + ", its operand " + type_str(operands[i + 1]));
  if (body.outputs().size() != carry + 1)
    fail("the body returns " + std::to_string(body.outputs().size()) + " values; the carry and the "
         "predicate are " + std::to_string(carry + 1));
  for (size_t i = 0; i < carry; ++i)
    if (body.type(body.outputs()[i]) != operands[1 + size_t(num_consts) + i])
      fail("output " + std::to_string(i) + " of the body has type " +
           type_str(body.type(body.outputs()[i])) + ", the carry " +
           type_str(operands[1 + size_t(num_consts) + i]));
  const ValueType& pred = body.type(body.outputs().back());
  if (pred.dtype != DType::Bool || !pred.shape.empty())
    fail("the body's last output must be the predicate, a bool[]; got " + type_str(pred));
}

TINYXLA_REGISTER_OP(while_loop, WhileLoopDef)

}  // namespace tinyxla::ops
