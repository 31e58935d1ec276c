// One graph node on ready arrays: views for layout nodes, the CPU kernels for the rest.
#include "node_runner.h"

#include "../cpu/kernels.h"
#include "tinyxla/error.h"

namespace tinyxla::runtime {

bool is_view(OpKind kind) {
  switch (kind) {
    case OpKind::reshape: case OpKind::transpose: case OpKind::broadcast_in_dim:
    case OpKind::slice: case OpKind::rev: case OpKind::bitcast_convert:
      return true;
    default:
      return false;
  }
}

Array dense_copy(const Array& x) {
  Array out(x.shape(), x.dtype(), x.device(), Event::ready());
  if (x.size()) cpu::copy(x, out);
  return out;
}

Array make_view(const Node& n, const ValueType& type, const Array& x) {
  auto view = [&](Shape strides, int64_t offset, const Array& src) {
    return Array(type.shape, std::move(strides), offset, type.dtype, src.device(), src.buffer(),
                 src.event());
  };
  switch (n.kind) {
    case OpKind::reshape:
    case OpKind::bitcast_convert: {
      const Array dense = x.is_contiguous() ? x : dense_copy(x);
      int64_t offset = dense.offset();
      if (n.kind == OpKind::bitcast_convert)
        offset = offset * int64_t(itemsize(x.dtype())) / int64_t(itemsize(type.dtype));
      return view(row_major_strides(type.shape), offset, dense);
    }
    case OpKind::transpose: {
      Strides s(n.axes.size());
      for (size_t i = 0; i < n.axes.size(); ++i) s[i] = x.strides()[size_t(n.axes[i])];
      return view(std::move(s), x.offset(), x);
    }
    case OpKind::broadcast_in_dim: {
      Strides s(type.shape.size(), 0);
      for (size_t i = 0; i < n.axes.size(); ++i)
        s[size_t(n.axes[i])] = x.shape()[i] == 1 ? 0 : x.strides()[i];
      return view(std::move(s), x.offset(), x);
    }
    case OpKind::slice: {
      Strides s(type.shape.size());
      int64_t offset = x.offset();
      for (size_t i = 0; i < s.size(); ++i) {
        s[i] = x.strides()[i] * n.step[i];
        if (type.shape[i] > 0) offset += n.lo[i] * x.strides()[i];
      }
      return view(std::move(s), offset, x);
    }
    case OpKind::rev: {
      Strides s = x.strides();
      int64_t offset = x.offset();
      for (int64_t d : n.axes) {
        if (x.shape()[size_t(d)] > 0) offset += (x.shape()[size_t(d)] - 1) * s[size_t(d)];
        s[size_t(d)] = -s[size_t(d)];
      }
      return view(std::move(s), offset, x);
    }
    default:
      throw_error(ErrorKind::Internal, op_kind_name(n.kind), "not a layout op");
  }
}

void run_kernel(const Node& n, const std::vector<Array>& ins, const std::vector<Array>& outs) {
  const Array& out = outs[0];
  switch (n.kind) {
    case OpKind::unary: return cpu::unary(UnaryOp(n.op), ins[0], out);
    case OpKind::binary: return cpu::binary(BinaryOp(n.op), ins[0], ins[1], out);
    case OpKind::select_n:
      return cpu::select_n(ins[0], std::vector<Array>(ins.begin() + 1, ins.end()), out);
    case OpKind::clamp: return cpu::clamp(ins[0], ins[1], ins[2], out);
    case OpKind::convert: return cpu::convert(ins[0], out);
    case OpKind::iota: return cpu::iota(n.dimension, out);
    case OpKind::reduce: return cpu::reduce(ReduceOp(n.op), ins[0], n.axes, out);
    case OpKind::argmax:
    case OpKind::argmin: return cpu::argreduce(n.kind == OpKind::argmax, ins[0], n.dimension, out);
    case OpKind::pad: return cpu::pad(ins[0], ins[1], n.lo, n.hi, n.step, out);
    case OpKind::concatenate: return cpu::concatenate(ins, n.dimension, out);
    case OpKind::dot_general: return cpu::dot_general(ins[0], ins[1], n.dot, out);
    case OpKind::gather:
      return cpu::gather(ins[0], ins[1], n.gather, n.lo, IndexMode(n.dimension),
                         ins.size() > 2 ? ins[2] : Array(), out);
    case OpKind::scatter:
      return cpu::scatter(ScatterOp(n.op), ins[0], ins[1], ins[2], n.gather,
                          IndexMode(n.dimension), out);
    case OpKind::cumulative:
      return cpu::cumulative(CumulativeOp(n.op), ins[0], n.dimension, n.axes[0] != 0, out);
    case OpKind::sort: return cpu::sort(ins, n.dimension, n.op, outs);
    case OpKind::eig: return cpu::eig(ins[0], (n.op & 1) != 0, (n.op & 2) != 0, outs);
    case OpKind::eigh: return cpu::eigh(ins[0], n.op != 0, outs);
    case OpKind::dynamic_slice:
      return cpu::dynamic_slice(ins[0], std::vector<Array>(ins.begin() + 1, ins.end()), out);
    case OpKind::dynamic_update_slice:
      return cpu::dynamic_update_slice(ins[0], ins[1],
                                       std::vector<Array>(ins.begin() + 2, ins.end()), out);
    default:
      throw_error(ErrorKind::Internal, op_kind_name(n.kind), "not a kernel op");
  }
}

}  // namespace tinyxla::runtime
