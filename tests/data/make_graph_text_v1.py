"""Writes graph_text_v1.txt (a graph with every op kind, in the text form the C++ code
printed before the op definitions moved to cpp/src/ops/), its compiled form
graph_text_v1_compiled.txt, and graph_text_v1.npz (inputs and the outputs that code
computed). Kept to show how the data was made: it ran on commit fd618a8."""
import os

import tinyxla._core as C
import numpy as np

DATA = os.path.dirname(os.path.abspath(__file__))
codes = {n: i for i, n in enumerate(['bool','i8','i16','i32','i64','u8','u16','u32','u64','f16','bf16','f32','f64','c64','c128'])}
U = {n: i for i, n in enumerate(C.UNARY_OPS)}
B = {n: i for i, n in enumerate(C.BINARY_OPS)}
R = {n: i for i, n in enumerate(C.REDUCE_OPS)}
S = {n: i for i, n in enumerate(C.SCATTER_OPS)}
b = C.GraphBuilder()
f32, i32 = codes['f32'], codes['i32']
x = b.parameter([3, 4], f32)
y = b.parameter([3, 4], f32)
i = b.parameter([2, 1], i32)
m = b.parameter([2, 3, 3], f32)
c = b.constant(C.from_numpy(np.array([1.5, -2.0, 3.25, 0.0], np.float32), f32, 0))
outs = []
outs.append(b.unary(U['exp'], x))
outs.append(b.binary(B['and_'], b.convert(x, codes['bool']), b.convert(y, codes['bool'])))
outs.append(b.binary(B['add'], x, b.broadcast_in_dim(c, [3, 4], [1])))
outs.append(b.select_n(b.binary(B['lt'], x, y), [x, y]))
outs.append(b.clamp(y, x, y))
outs.append(b.bitcast_convert(x, i32))
outs.append(b.iota(i32, [3, 4], 1))
outs.append(b.reduce(R['max'], x, [-1]))
outs.append(b.argreduce(True, x, 1, i32))
outs.append(b.argreduce(False, x, 0, i32))
outs.append(b.reshape(x, [4, 3]))
outs.append(b.transpose(x, [1, 0]))
outs.append(b.slice(x, [0, 1], [3, 4], [2, 1]))
outs.append(b.pad(x, b.constant(C.scalar(0.0, f32, 0)), [1, 0], [0, 2], [0, 1]))
outs.append(b.concatenate([x, y], 0))
outs.append(b.rev(x, [0, 1]))
outs.append(b.cumulative(0, x, 1, True))
outs.append(b.cumulative(4, x, 0, False))
outs += b.sort([x, y], 1, 1)
outs += b.eig(b.slice(m, [0, 0, 0], [1, 3, 3], [1, 1, 1]), True, False)
outs += b.eigh(m, False)
zero = b.constant(C.scalar(0, i32, 0))
outs.append(b.dynamic_slice(x, [zero, zero], [2, 2]))
outs.append(b.dynamic_update_slice(x, b.slice(y, [0, 0], [1, 2], [1, 1]), [zero, zero]))
outs.append(b.gather(x, i, [1], [0], [0], [], [], [1, 4], 1, b.constant(C.scalar(-1.0, f32, 0))))
outs.append(b.gather(x, i, [1], [0], [0], [], [], [1, 4], 0, -1))
outs.append(b.scatter(S['add'], x, i, b.slice(y, [0, 0], [2, 4], [1, 1]), [1], [0], [0], [], [], 0))
outs.append(b.scatter(S['set'], x, i, b.slice(y, [0, 0], [2, 4], [1, 1]), [1], [0], [0], [], [], 1))
outs.append(b.dot_general(x, y, [1], [1], [], [], -1))
outs.append(b.dot_general(b.convert(x, codes['bf16']), b.convert(y, codes['bf16']), [0], [0], [], [], f32))
b.set_outputs(outs)
text = b.text()
g = C.parse_graph(text)
assert g.text() == text
open(os.path.join(DATA, 'graph_text_v1.txt'), 'w').write(text)
# an optimised graph with a fused region, as jit exports it
exe = C.compile(b)
open(os.path.join(DATA, 'graph_text_v1_compiled.txt'), 'w').write(exe.text())

rng = np.random.default_rng(0)
args = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32),
        np.array([[2], [0]], np.int32), rng.standard_normal((2, 3, 3)).astype(np.float32)]
args[3] = (args[3] + args[3].transpose(0, 2, 1)).astype(np.float32)
hs = [C.from_numpy(a, codes[{np.float32: 'f32', np.int32: 'i32'}[a.dtype.type]], 0) for a in args]
res = C.compile(C.parse_graph(text)).run(hs)
dt = {i: n for n, i in codes.items()}
np_dt = {'f32': np.float32, 'i32': np.int32, 'bool': np.bool_, 'c64': np.complex64, 'bf16': None}
out = {}
for k, r in enumerate(res):
    name = dt[r.dtype_code]
    if name == 'bf16':
        continue
    out[f'out{k}'] = r.numpy(np.dtype(np_dt[name]))
np.savez(os.path.join(DATA, 'graph_text_v1.npz'), **{f'arg{k}': a for k, a in enumerate(args)}, **out)
