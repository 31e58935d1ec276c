"""Convolution and pooling figures: a 3x3 convolution (N=32, 32x32, 64 -> 64 channels,
float32, NHWC) forward and jit(grad) with respect to input and kernel, in GFLOP/s beside
a gemm of the same flops in its im2col shape (the own-gemm peak it runs on); a stax CNN
training step on MNIST-shaped data (Conv 32 3x3, Relu, Conv 64 3x3, Relu, MaxPool 2x2,
Flatten, Dense 128, Relu, Dense 10, LogSoftmax; batch 128; Adam) and its first call
(trace + compile); per-example gradients of that network under vmap(grad) (batch 64);
max_pool 2x2 stride 2 on (32, 64, 64, 64) float32 and its gradient beside a copy of its
input's bytes; conv + bias + relu with its epilogue fused and kept apart.

    python bench/run.py --only conv,cnn,maxpool

Its metrics are part of bench/run.py's table (run.py imports metrics() from here); jax runs
compiled (jax.jit) in every row, torch where it has the operation. Measured, not asserted.
"""
import numpy as np

_DATA = {}

_CONV_X, _CONV_W = (32, 32, 32, 64), (3, 3, 64, 64)
_CONV_FLOPS = 2.0 * 32 * 32 * 32 * 64 * 64 * 9
_DN = ("NHWC", "HWIO", "NHWC")
_POOL = (32, 64, 64, 64)


def _data(key):
    if key not in _DATA:
        rng = np.random.default_rng(0)
        if key == "conv":
            _DATA[key] = (rng.standard_normal(_CONV_X, dtype=np.float32),
                          rng.standard_normal(_CONV_W, dtype=np.float32) * 0.05)
        elif key == "gemm":
            _DATA[key] = (rng.standard_normal((32 * 32 * 32, 9 * 64), dtype=np.float32),
                          rng.standard_normal((9 * 64, 64), dtype=np.float32))
        elif key == "pool":
            _DATA[key] = rng.standard_normal(_POOL, dtype=np.float32)
        elif key == "mnist":
            _DATA[key] = (rng.standard_normal((128, 28, 28, 1), dtype=np.float32),
                          np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)],
                          _cnn_params(rng))
    return _DATA[key]


def _cnn_params(rng):
    """He-normal weights of the CNN, as stax's init_fun shapes them."""
    def he(*shape):
        fan_in = int(np.prod(shape[:-1]))
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    z = lambda *s: np.zeros(s, np.float32)
    return [(he(3, 3, 1, 32), z(1, 1, 1, 32)), (), (he(3, 3, 32, 64), z(1, 1, 1, 64)), (), (),
            (), (he(12 * 12 * 64, 128), z(128)), (), (he(128, 10), z(10)), ()]


def _modules(lib):
    """(jax-like module, lax, stax, optimizers) of tinyxla or jax; None for other peers."""
    if lib.name == "tinyxla":
        import tinyxla
        from tinyxla import lax
        from tinyxla.example_libraries import optimizers, stax
        return tinyxla, lax, stax, optimizers
    if lib.name == "jax":
        import jax
        from jax import lax
        from jax.example_libraries import optimizers, stax
        return jax, lax, stax, optimizers
    return None


def _conv_fwd(lib, d):
    if lib.name == "torch":
        import torch
        x, w = _data("conv")
        xt = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous(
            memory_format=torch.channels_last)
        wt = torch.from_numpy(w).permute(3, 2, 0, 1).contiguous()
        return lambda: torch.nn.functional.conv2d(xt, wt, padding=1)
    mods = _modules(lib)
    if mods is None:
        return None
    jax, lax = mods[:2]
    x, w = (lib.put(a) for a in _data("conv"))
    f = jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                      dimension_numbers=_DN))
    return lambda: lib.block(f(x, w))


def _conv_bias_relu(apart):
    """relu(conv + bias); `apart` also returns the conv's result, which keeps the epilogue
    out of the conv's kernel (the unfused program: one more pass over the result)."""
    def make(lib, d):
        mods = _modules(lib)
        if mods is None:
            return None
        jax, lax = mods[:2]
        x, w = (lib.put(a) for a in _data("conv"))
        b = lib.put(np.linspace(-1, 1, 64, dtype=np.float32).reshape(1, 1, 1, 64))

        def f(x, w, b):
            y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=_DN)
            out = jax.nn.relu(y + b)
            return (out, y) if apart else out
        f = jax.jit(f)
        return lambda: jax.block_until_ready(f(x, w, b))
    return make


def _conv_grad(lib, d):
    mods = _modules(lib)
    if mods is None:
        return None
    jax, lax = mods[:2]
    x, w = (lib.put(a) for a in _data("conv"))

    def loss(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=_DN)
        return (y * y).sum()
    f = jax.jit(jax.grad(loss, argnums=(0, 1)))
    return lambda: jax.block_until_ready(f(x, w))


def _gemm(lib, d):
    if lib.name == "numpy":
        return None
    a, b = (lib.put(m) for m in _data("gemm"))
    return lambda: lib.block(a @ b)


def _cnn(stax):
    return stax.serial(stax.Conv(32, (3, 3)), stax.Relu, stax.Conv(64, (3, 3)), stax.Relu,
                       stax.MaxPool((2, 2), (2, 2)), stax.Flatten, stax.Dense(128), stax.Relu,
                       stax.Dense(10), stax.LogSoftmax)


def _train_step(lib):
    mods = _modules(lib)
    if mods is None:
        return None
    jax, _, stax, optimizers = mods
    x_np, y_np, params = _data("mnist")
    _, apply_fun = _cnn(stax)
    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    x, y = lib.put(x_np), lib.put(y_np)

    def loss(p, x, y):
        return -(apply_fun(p, x) * y).sum(-1).mean()

    def step(i, state, x, y):
        value, grads = jax.value_and_grad(loss)(get_params(state), x, y)
        return opt_update(i, grads, state), value
    return jax, step, opt_init(params), x, y


def _cnn_step(lib, d):
    made = _train_step(lib)
    if made is None:
        return None
    jax, step, state, x, y = made
    f = jax.jit(step)
    box = {"state": state, "i": 0}

    def run():
        box["state"], value = f(box["i"], box["state"], x, y)
        box["i"] += 1
        return jax.block_until_ready(value)
    return run


def _cnn_first_call(lib, d):
    made = _train_step(lib)
    if made is None:
        return None
    jax, step, state, x, y = made
    # A fresh function each call: jit's cache misses, so this is trace + compile + one run.
    return lambda: jax.block_until_ready(jax.jit(lambda *a: step(*a))(0, state, x, y))


def _per_example(lib, d):
    mods = _modules(lib)
    if mods is None:
        return None
    jax, _, stax, _ = mods
    x_np, y_np, params = _data("mnist")
    _, apply_fun = _cnn(stax)
    x, y = lib.put(x_np[:64, None]), lib.put(y_np[:64])

    def loss(p, xi, yi):
        return -(apply_fun(p, xi) * yi).sum()
    f = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    return lambda: jax.block_until_ready(f(params, x, y))


def _maxpool(lib, d):
    if lib.name == "torch":
        import torch
        xt = torch.from_numpy(_data("pool")).permute(0, 3, 1, 2)  # an NHWC tensor, viewed NCHW
        return lambda: torch.nn.functional.max_pool2d(xt, 2, 2)
    mods = _modules(lib)
    if mods is None:
        return None
    jax, lax = mods[:2]
    x = lib.put(_data("pool"))
    f = jax.jit(lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                            "VALID"))
    return lambda: lib.block(f(x))


def _maxpool_grad(lib, d):
    mods = _modules(lib)
    if mods is None:
        return None
    jax, lax = mods[:2]
    x = lib.put(_data("pool"))
    g = lib.put(_data("pool")[:, ::2, ::2, :] * 0.5)
    pool = lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    f = jax.jit(lambda x, g: jax.vjp(pool, x)[1](g)[0])
    return lambda: jax.block_until_ready(f(x, g))


def _copy(lib, d):
    if lib.name == "torch":
        import torch
        xt = torch.from_numpy(_data("pool"))
        return lambda: xt.clone()
    if lib.name == "numpy":
        x = _data("pool")
        return lambda: x.copy()
    x = lib.put(_data("pool"))
    f = lib.jit(lambda x: x * 2.0)
    return lambda: lib.block(f(x))


def _pool_ref(d):
    x = _data("pool")
    return x.reshape(32, 32, 2, 32, 2, 64).max((2, 4))


def _conv_ref(d):
    x, w = _data("conv")
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))).astype(np.float64)
    out = np.zeros(_CONV_X[:3] + (64,))
    for i in range(3):
        for j in range(3):
            out += xp[:, i:i + 32, j:j + 32, :] @ w[i, j].astype(np.float64)
    return out


def metrics():
    from run import Metric  # bench/ is on sys.path when run.py runs
    return [
        Metric("conv_fwd", "conv 3x3 NHWC 32x32x32x64->64 fwd, jit", "GFLOP/s", _conv_fwd,
               ref=_conv_ref, flops=_CONV_FLOPS, rtol=1e-3),
        Metric("conv_bias_relu", "conv 3x3 + bias + relu fwd, jit (fused epilogue)", "GFLOP/s",
               _conv_bias_relu(False), flops=_CONV_FLOPS),
        Metric("conv_bias_relu_apart", "conv 3x3 + bias + relu, conv result kept (unfused)",
               "GFLOP/s", _conv_bias_relu(True), flops=_CONV_FLOPS),
        Metric("conv_grad", "conv 3x3 jit(grad) wrt input+kernel", "GFLOP/s", _conv_grad,
               flops=2 * _CONV_FLOPS),
        Metric("conv_gemm_peak", "gemm 32768x576x64 (the conv's im2col)", "GFLOP/s", _gemm,
               flops=_CONV_FLOPS),
        Metric("cnn_step", "stax CNN train step, MNIST b=128, jit", "ms", _cnn_step),
        Metric("cnn_first_call", "stax CNN train step, first call", "ms", _cnn_first_call),
        Metric("cnn_per_example", "CNN vmap(grad) per-example, b=64, jit", "ms", _per_example),
        Metric("maxpool", "max_pool 2x2/2 (32,64,64,64) f32", "ms", _maxpool, ref=_pool_ref),
        Metric("maxpool_grad", "max_pool 2x2/2 gradient (vjp), jit", "ms", _maxpool_grad),
        Metric("maxpool_copy", "copy of max_pool's input (32 MB)", "ms", _copy),
    ]


if __name__ == "__main__":
    import sys
    import run
    sys.exit(run.main(["--only", "conv,cnn,maxpool"] + sys.argv[1:]))
