"""Global configuration options for tinyxla, mirroring ``jax.config``.

Options are process-global (JAX additionally has thread-local overrides via
context managers; tinyxla does not). Reading an option is a plain instance
attribute read, so it is cheap enough for dispatch hot paths. ``config.version``
is bumped on every update so caches can key on one integer instead of on every
option that affects them.
"""

from __future__ import annotations

import enum
import os
import threading
from collections.abc import Callable
from typing import Any


class NumpyDtypePromotion(str, enum.Enum):
  """Values of ``jax_numpy_dtype_promotion`` (mirrors ``jax._src.config.NumpyDtypePromotion``).

  A ``str`` subclass, so members compare equal to ``'standard'``/``'strict'``.
  """
  STANDARD = 'standard'
  STRICT = 'strict'

  # Match JAX's StrEnum: str() and format() give the bare value.
  def __str__(self) -> str:
    return self.value

  __format__ = str.__format__


# Legal values of jax_default_matmul_precision in JAX 0.10.
_MATMUL_PRECISIONS = (
    'default', 'high', 'highest', 'bfloat16', 'tensorfloat32', 'float32',
    'ANY_F8_ANY_F8_F32', 'ANY_F8_ANY_F8_F32_FAST_ACCUM', 'ANY_F8_ANY_F8_ANY',
    'ANY_F8_ANY_F8_ANY_FAST_ACCUM', 'F16_F16_F16', 'F16_F16_F32',
    'BF16_BF16_BF16', 'BF16_BF16_F32', 'BF16_BF16_F32_X3',
    'BF16_BF16_F32_X6', 'BF16_BF16_F32_X9', 'TF32_TF32_F32',
    'TF32_TF32_F32_X3', 'F32_F32_F32', 'F64_F64_F64',
)


def _bool_env(varname: str, default: bool) -> bool:
  """Reads a boolean environment variable the way ``jax._src.config.bool_env`` does."""
  val = os.getenv(varname, str(default)).lower()
  if val in ('y', 'yes', 't', 'true', 'on', '1'):
    return True
  if val in ('n', 'no', 'f', 'false', 'off', '0'):
    return False
  raise ValueError(f"invalid truth value {val!r} for environment {varname!r}")


class _Option:
  """One option: its default (after the environment) and the parser for updates."""
  __slots__ = ('default', 'parse')

  def __init__(self, default: Any, parse: Callable[[Any], Any]):
    self.default = default
    self.parse = parse


def _bool_option(name: str, default: bool) -> _Option:
  # JAX's bool_state parser is plain bool(): any truthy value is accepted.
  return _Option(_bool_env(name.upper(), default), bool)


def _int_option(name: str, default: int) -> _Option:
  env = os.getenv(name.upper())
  if env is not None:
    try:
      default = int(env)
    except ValueError:
      raise ValueError(f'Invalid value "{env}" for JAX flag {name}') from None

  def parse(val: Any) -> int | None:
    if val is not None and not isinstance(val, int):
      raise ValueError('new int config value must be None or of type int, '
                       f'got {val} of type {type(val)}')
    return val
  return _Option(default, parse)


def _optional_str_option(name: str) -> _Option:
  def parse(val: Any) -> str | None:
    if val is not None and not isinstance(val, str):
      raise ValueError('new string config value must be None or of type str,'
                       f' got {val} of type {type(val)}.')
    return val
  return _Option(os.getenv(name.upper()), parse)


def _optional_enum_option(name: str, values: tuple[str, ...]) -> _Option:
  default = os.getenv(name.upper())
  if default is not None and default not in values:
    raise ValueError(f'Invalid value "{default}" for JAX flag {name}')

  def parse(val: Any) -> str | None:
    if val is not None and (type(val) is not str or val not in values):
      raise ValueError(f'new enum value must be None or in {list(values)}, '
                       f'got {val} of type {type(val)}.')
    return val
  return _Option(default, parse)


def _promotion_option(name: str) -> _Option:
  default = NumpyDtypePromotion.STANDARD
  env = os.getenv(name.upper())
  if env is not None:
    try:
      default = NumpyDtypePromotion(env)
    except ValueError as e:
      raise ValueError(f'Invalid value "{env}" for JAX flag {name}') from e

  def parse(val: Any) -> NumpyDtypePromotion:
    if isinstance(val, str):
      return NumpyDtypePromotion(val)  # ValueError for unknown strings, as in JAX
    raise TypeError(f'new enum value must be an instance of {NumpyDtypePromotion}, '
                    f'got {val} of type {type(val)}.')
  return _Option(default, parse)


def _default_options() -> dict[str, _Option]:
  return {
      'jax_enable_x64': _bool_option('jax_enable_x64', False),
      'jax_numpy_dtype_promotion': _promotion_option('jax_numpy_dtype_promotion'),
      'jax_num_cpu_devices': _int_option('jax_num_cpu_devices', -1),
      'jax_platforms': _optional_str_option('jax_platforms'),
      'jax_default_matmul_precision': _optional_enum_option(
          'jax_default_matmul_precision', _MATMUL_PRECISIONS),
      'jax_log_compiles': _bool_option('jax_log_compiles', False),
      'jax_explain_cache_misses': _bool_option('jax_explain_cache_misses', False),
      'jax_threefry_partitionable': _bool_option('jax_threefry_partitionable', True),
      'jax_debug_nans': _bool_option('jax_debug_nans', False),
      'jax_disable_jit': _bool_option('jax_disable_jit', False),
  }


class Config:
  """The global option store (mirrors ``jax.config``).

  Read an option as an attribute (``config.jax_enable_x64``); change it with
  ``config.update(name, value)``. Differences from JAX: no thread-local
  context managers, no absl flags, and only the options tinyxla uses.
  """

  version: int  # bumped on every update; caches may key on it

  def __init__(self) -> None:
    d = self.__dict__
    d['_options'] = _default_options()
    d['_lock'] = threading.RLock()
    d['_hooks'] = []
    d['version'] = 0
    for name, opt in self._options.items():
      d[name] = opt.default

  def update(self, name: str, value: Any) -> None:
    """Sets option ``name`` (mirrors ``jax.config.update``) and runs update hooks."""
    opt = self._options.get(name)
    if opt is None:
      raise AttributeError(f"Unrecognized config option: {name}")
    value = opt.parse(value)
    # Hooks run under the lock so concurrent updates cannot leave a hook's
    # derived state describing an older value than the one stored.
    with self._lock:
      self.__dict__[name] = value
      self.__dict__['version'] += 1
      for hook in self._hooks:
        hook(name, value)

  def add_update_hook(self, hook: Callable[[str, Any], None]) -> None:
    """Registers ``hook(name, value)``, called after every successful update.

    tinyxla-specific: modules that derive state from options (the dtype
    promotion tables) use it to refresh that state eagerly.
    """
    with self._lock:
      self._hooks.append(hook)

  @property
  def values(self) -> dict[str, Any]:
    """All option values by name (mirrors ``jax.config.values``)."""
    return {name: self.__dict__[name] for name in self._options}

  def __setattr__(self, name: str, value: Any) -> None:
    # JAX options are read-only properties; assignment must go through update().
    raise AttributeError(f"property of '{type(self).__name__}' object has no setter")


config = Config()
