"""Stax, a minimal neural-network library; mirrors ``jax.example_libraries.stax``.

A layer is a pair ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape) ->
(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs) -> outputs``; the
combinators ``serial`` and ``parallel`` build models from layers. Random numbers come from
``tinyxla.random``, imported when a layer needs them.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla._src.nn.functions import (
    elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize)
from tinyxla._src.nn.initializers import glorot_normal, normal, ones, zeros

Layer = tuple[Callable[..., Any], Callable[..., Any]]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def _random() -> Any:
    from tinyxla import random
    return random


def Dense(out_dim: int, W_init: Callable = glorot_normal(), b_init: Callable = normal()
          ) -> Layer:
    """Mirrors ``stax.Dense``: ``inputs @ W + b``, W of shape (in, out_dim)."""
    def init_fun(rng, input_shape):
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = _random().split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _conv_init(dimension_numbers: tuple[str, str, str], out_chan: int,
               filter_shape: tuple[int, ...], W_init: Callable, b_init: Callable,
               output_shape_of: Callable) -> Callable:
    """The init_fun of a (transposed) conv layer: the kernel laid out as the rhs spec says,
    a bias broadcasting over the output's channel axis."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers

    def init_fun(rng, input_shape):
        sizes = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                        if c == "I" else next(sizes) for c in rhs_spec]
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = _random().split(rng)
        return (output_shape_of(input_shape, kernel_shape),
                (W_init(k1, kernel_shape), b_init(k2, bias_shape)))
    return init_fun


def GeneralConv(dimension_numbers: tuple[str, str, str], out_chan: int,
                filter_shape: tuple[int, ...], strides: tuple[int, ...] | None = None,
                padding: Any = "VALID", W_init: Callable | None = None,
                b_init: Callable = normal(1e-6)) -> Layer:
    """Mirrors ``stax.GeneralConv``: ``conv_general_dilated(inputs, W) + b`` in the layout
    ``dimension_numbers``; W glorot-normal over its I and O axes."""
    rhs_spec = dimension_numbers[1]
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    init_fun = _conv_init(dimension_numbers, out_chan, filter_shape, W_init, b_init,
                          lambda shape, kernel: lax.conv_general_shape_tuple(
                              shape, kernel, strides, padding, dimension_numbers))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers: tuple[str, str, str], out_chan: int,
                         filter_shape: tuple[int, ...], strides: tuple[int, ...] | None = None,
                         padding: Any = "VALID", W_init: Callable | None = None,
                         b_init: Callable = normal(1e-6)) -> Layer:
    """Mirrors ``stax.GeneralConvTranspose``: ``conv_transpose(inputs, W) + b``."""
    rhs_spec = dimension_numbers[1]
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    init_fun = _conv_init(dimension_numbers, out_chan, filter_shape, W_init, b_init,
                          lambda shape, kernel: lax.conv_transpose_shape_tuple(
                              shape, kernel, strides, padding, dimension_numbers))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def _pooling_layer(reducer: Callable, init_val: float,
                   rescaler: Callable | None = None) -> Callable[..., Layer]:
    def PoolingLayer(window_shape: tuple[int, ...], strides: tuple[int, ...] | None = None,
                     padding: str = "VALID", spec: str | None = None) -> Layer:
        """A pooling layer (``stax.MaxPool`` / ``SumPool`` / ``AvgPool``): a windowed
        reduction over the spatial axes; ``spec`` names the layout (default NHWC)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial = (0, len(window_shape) + 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones = (1,) * len(window_shape)
            return lax.reduce_window_shape_tuple(input_shape, window_shape, strides, pads,
                                                 ones, ones), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)


def _normalize_by_window_size(dims: tuple[int, ...], strides: tuple[int, ...],
                              padding: str) -> Callable:
    """AvgPool's rescaling: each output over the number of real inputs its window saw."""
    def rescale(outputs, inputs, spec):
        non_spatial = (0, inputs.ndim - 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        spatial = tuple(d for i, d in enumerate(inputs.shape) if i not in non_spatial)
        sizes = lax.reduce_window(jnp.ones(spatial, inputs.dtype), 0., lax.add, dims,
                                  strides, padding)
        for i in sorted(non_spatial):
            sizes = jnp.expand_dims(sizes, i)
        return outputs / sizes
    return rescale


AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)


def BatchNorm(axis: Any = (0, 1, 2), epsilon: float = 1e-5, center: bool = True,
              scale: bool = True, beta_init: Callable = zeros, gamma_init: Callable = ones
              ) -> Layer:
    """Mirrors ``stax.BatchNorm``: standardizes over ``axis`` (batch statistics), then
    ``gamma * z + beta`` with parameters over the remaining axes."""
    def _beta_init(rng, shape):
        return beta_init(rng, shape) if center else ()

    def _gamma_init(rng, shape):
        return gamma_init(rng, shape) if scale else ()
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = _random().split(rng)
        return input_shape, (_beta_init(k1, shape), _gamma_init(k2, shape))

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z
    return init_fun, apply_fun


def elementwise(fun: Callable, **fun_kwargs: Any) -> Layer:
    """Mirrors ``stax.elementwise``: a parameterless layer applying ``fun(inputs, **fun_kwargs)``."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _flatten() -> Layer:
    """Mirrors ``stax.Flatten``: reshapes (batch, ...) inputs to (batch, -1)."""
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity() -> Layer:
    """Mirrors ``stax.Identity``: returns its input."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity()


def FanOut(num: int) -> Layer:
    """Mirrors ``stax.FanOut``: ``num`` copies of the input, for a following ``parallel``."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum() -> Layer:
    """Mirrors ``stax.FanInSum``: sums a list of inputs."""
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> Layer:
    """Mirrors ``stax.FanInConcat``: concatenates a list of inputs along ``axis``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = input_shape[0][:ax] + (concat_size,) + input_shape[0][ax + 1:]
        return out_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Mirrors ``stax.Dropout``: in ``'train'`` mode keeps each input with probability
    ``rate`` (JAX's convention: ``rate`` is the keep rate) scaled by ``1 / rate``; needs
    ``rng=`` at apply time."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key (e.g. from "
                "`jax.random.key`).")
        if mode == "train":
            keep = _random().bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


def serial(*layers: Layer) -> Layer:
    """Mirrors ``stax.serial``: the layers applied one after another; ``init_fun`` splits
    the key once per layer, ``apply_fun`` splits an ``rng=`` keyword into one per layer."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        random = _random()
        for layer_init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = layer_init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _random().split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Mirrors ``stax.parallel``: layer i applied to input i of a sequence (after
    ``FanOut``), outputs as a list."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = _random().split(rng, nlayers)
        return zip(*[init(layer_rng, shape)
                     for init, layer_rng, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _random().split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """Mirrors ``stax.shape_dependent``: a layer built from the input shape at init and
    at apply time."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
