"""Global configuration options for tinyxla, mirroring ``jax.config``.

Options are process-global (JAX additionally has thread-local overrides via
context managers; tinyxla does not). Reading an option is a plain instance
attribute read, so it is cheap enough for dispatch hot paths. ``config.version``
is bumped on every update so caches can key on one integer instead of on every
option that affects them.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
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


# Levels of the jax_transfer_guard options, as in JAX.
_TRANSFER_GUARDS = ('allow', 'log', 'disallow', 'log_explicit', 'disallow_explicit')


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


def _enum_option(name: str, values: tuple[str, ...], default: str) -> _Option:
  default = os.getenv(name.upper(), default)
  if default not in values:
    raise ValueError(f'Invalid value "{default}" for JAX flag {name}')

  def parse(val: Any) -> str:
    if type(val) is not str or val not in values:
      raise ValueError(f'new enum value must be in {list(values)}, '
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


def _default_device_option() -> _Option:
  """A Device (anything with ``platform`` and ``id``), a platform name, or None."""
  def parse(val: Any) -> Any:
    if val is None or isinstance(val, str) or (
        hasattr(val, 'platform') and hasattr(val, 'id')):
      return val
    raise ValueError('jax.default_device must be passed either a Device object (e.g. '
                     "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                     f"'gpu', got: {val}")
  return _Option(None, parse)


def _default_options() -> dict[str, _Option]:
  return {
      'jax_enable_x64': _bool_option('jax_enable_x64', False),
      'jax_numpy_dtype_promotion': _promotion_option('jax_numpy_dtype_promotion'),
      'jax_numpy_rank_promotion': _enum_option(
          'jax_numpy_rank_promotion', ('allow', 'warn', 'raise'), 'allow'),
      'jax_num_cpu_devices': _int_option('jax_num_cpu_devices', -1),
      'jax_platforms': _optional_str_option('jax_platforms'),
      'jax_default_device': _default_device_option(),
      'jax_default_matmul_precision': _optional_enum_option(
          'jax_default_matmul_precision', _MATMUL_PRECISIONS),
      'jax_log_compiles': _bool_option('jax_log_compiles', False),
      'jax_explain_cache_misses': _bool_option('jax_explain_cache_misses', False),
      'jax_threefry_partitionable': _bool_option('jax_threefry_partitionable', True),
      'jax_debug_nans': _bool_option('jax_debug_nans', False),
      'jax_debug_infs': _bool_option('jax_debug_infs', False),
      'jax_enable_checks': _bool_option('jax_enable_checks', False),
      'jax_disable_jit': _bool_option('jax_disable_jit', False),
      'jax_check_tracer_leaks': _bool_option('jax_check_tracer_leaks', False),
      'jax_transfer_guard': _optional_enum_option('jax_transfer_guard', _TRANSFER_GUARDS),
      'jax_transfer_guard_host_to_device': _optional_enum_option(
          'jax_transfer_guard_host_to_device', _TRANSFER_GUARDS),
      'jax_transfer_guard_device_to_device': _optional_enum_option(
          'jax_transfer_guard_device_to_device', _TRANSFER_GUARDS),
      'jax_transfer_guard_device_to_host': _optional_enum_option(
          'jax_transfer_guard_device_to_host', _TRANSFER_GUARDS),
      # tinyxla's: the bound on compiled executables held (interpreters/executable_budget).
      'tinyxla_executable_cache_max_entries': _int_option(
          'tinyxla_executable_cache_max_entries', 4096),
      'tinyxla_executable_cache_max_bytes': _int_option(
          'tinyxla_executable_cache_max_bytes', 1 << 30),
  }


class Config:
  """The global option store (mirrors ``jax.config``).

  Read an option as an attribute (``config.jax_enable_x64``); change it with
  ``config.update(name, value)`` or a context manager (``jax.enable_x64(True)``).
  Differences from JAX: the context managers set the process-wide value (JAX's are
  thread-local), and only the options tinyxla uses exist.
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
    value = self.parse(name, value)
    # Hooks run under the lock so concurrent updates cannot leave a hook's
    # derived state describing an older value than the one stored.
    with self._lock:
      self.__dict__[name] = value
      self.__dict__['version'] += 1
      for hook in self._hooks:
        hook(name, value)

  def parse(self, name: str, value: Any) -> Any:
    """``value`` as option ``name`` would store it; JAX's error if it is not valid."""
    opt = self._options.get(name)
    if opt is None:
      raise AttributeError(f"Unrecognized config option: {name}")
    return opt.parse(value)

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

  def config_with_absl(self) -> None:
    """Defines an absl flag per option, read once absl has parsed the command line
    (``jax.config.config_with_absl``; needs absl-py, as JAX does)."""
    from absl import app, flags as absl_flags
    for name, opt in self._options.items():
      value = self.__dict__[name]
      if isinstance(value, bool):
        absl_flags.DEFINE_bool(name, value, name)
      elif isinstance(value, int):
        absl_flags.DEFINE_integer(name, value, name)
      else:
        absl_flags.DEFINE_string(name, None if value is None else str(value), name)
    app.call_after_init(lambda: self._complete_absl_config(absl_flags))

  def _complete_absl_config(self, absl_flags: Any) -> None:
    for name in self._options:
      flag = absl_flags.FLAGS[name] if name in absl_flags.FLAGS else None
      if flag is not None and flag.present:
        self.update(name, flag.value)

  def parse_flags_with_absl(self) -> None:
    """Reads the ``--jax*`` command-line flags (before any ``--``) into the options
    (``jax.config.parse_flags_with_absl``); later calls do nothing, as in JAX."""
    if self.__dict__.get('_absl_parsed'):
      return
    from absl import flags as absl_flags
    argv = []
    for a in sys.argv[1:]:
      if a == '--':
        break
      if a.startswith('--jax'):
        argv.append(a)
    self.config_with_absl()
    absl_flags.FLAGS(['', *argv], known_only=True)
    self._complete_absl_config(absl_flags)
    self.__dict__['_absl_parsed'] = True

  def __setattr__(self, name: str, value: Any) -> None:
    # JAX options are read-only properties; assignment must go through update().
    raise AttributeError(f"property of '{type(self).__name__}' object has no setter")


config = Config()


class _NoDefault:
  pass


_NO_DEFAULT = _NoDefault()


class State:
  """An option as a context manager and decorator (mirrors ``jax._src.config.State``:
  ``with jax.enable_x64(True): ...``, ``@jax.numpy_rank_promotion('raise')``).

  The value set inside the block is the process-wide value (JAX's is the calling
  thread's); leaving the block restores the value found on entry.
  """

  def __init__(self, name: str, default_context_manager_value: Any = _NO_DEFAULT,
               help: str = ''):
    self._name = name
    self.__name__ = name[4:] if name.startswith('jax_') else name
    self.__doc__ = f"Context manager for `{name}` config option.\n\n{help}"
    self._default_cm_value = default_context_manager_value

  @property
  def name(self) -> str:
    return self._name

  @property
  def value(self) -> Any:
    return getattr(config, self._name)

  def __bool__(self):
    raise TypeError(
        "bool() not supported for instances of type '{0}' "
        "(did you mean to use '{0}.value' instead?)".format(type(self).__name__))

  def __call__(self, new_val: Any = _NO_DEFAULT) -> "StateContextManager":
    if new_val is _NO_DEFAULT:
      if self._default_cm_value is _NO_DEFAULT:
        raise TypeError(f"Context manager for {self.__name__} config option requires an "
                        "argument representing the new value for the config option.")
      new_val = self._default_cm_value
    return StateContextManager(self, config.parse(self._name, new_val))

  def __repr__(self) -> str:
    return f"State({self._name}={self.value!r})"


class StateContextManager:
  """Sets a State's option for a ``with`` block or a decorated function's calls."""

  __slots__ = ('state', 'new_val', 'prev')

  def __init__(self, state: State, new_val: Any):
    self.state = state
    self.new_val = new_val

  def __enter__(self) -> None:
    self.prev = getattr(config, self.state.name)
    config.update(self.state.name, self.new_val)

  def __exit__(self, *exc: Any) -> None:
    config.update(self.state.name, self.prev)

  def __call__(self, func: Callable) -> Callable:
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
      with StateContextManager(self.state, self.new_val):
        return func(*args, **kwargs)
    return wrapper


enable_x64 = State('jax_enable_x64', True, 'Enable 64-bit types to be used')
numpy_dtype_promotion = State(
    'jax_numpy_dtype_promotion',
    help='Specify the rules used for implicit type promotion in operations between '
         'arrays. Options are "standard" or "strict"; in strict-mode, binary operations '
         'between arrays of differing strongly-specified dtypes will result in an error.')
numpy_rank_promotion = State(
    'jax_numpy_rank_promotion',
    help='Control NumPy-style automatic rank promotion broadcasting '
         '("allow", "warn", or "raise").')
default_matmul_precision = State(
    'jax_default_matmul_precision',
    help='Control the default matmul and conv precision for 32bit inputs.')
log_compiles = State('jax_log_compiles', True,
                     'Log a message each time `jit` or `pmap` compiles an XLA computation.')
explain_cache_misses = State('jax_explain_cache_misses', True,
                             'Each time there is a miss on one of the main caches (e.g. the '
                             'tracing cache), log an explanation.')
debug_nans = State('jax_debug_nans', True,
                   'Add nan checks to every operation. When a nan is detected on the output '
                   'of a jit-compiled computation, call into the un-compiled version in an '
                   'attempt to more precisely identify the operation which produced the nan.')
debug_infs = State('jax_debug_infs', True,
                   'Add inf checks to every operation. When an inf is detected on the output '
                   'of a jit-compiled computation, call into the un-compiled version in an '
                   'attempt to more precisely identify the operation which produced the inf.')
enable_checks = State('jax_enable_checks', True,
                      'Turn on invariant checking for JAX internals. Makes things slower. '
                      '(tinyxla: every jaxpr that jit, make_jaxpr and eval_shape trace goes '
                      'through the type checker, ``core.check_jaxpr``.)')
check_tracer_leaks = State(
    'jax_check_tracer_leaks', True,
    'Turn on checking for leaked tracers as soon as a trace completes. Enabling leak '
    'checking may have performance impacts: some caching is disabled, and other overheads '
    'may be added. Additionally, be aware that some Python debuggers can cause false '
    'positives, so it is recommended to disable any debuggers while leak checking is '
    'enabled.')
checking_leaks = check_tracer_leaks
_TRANSFER_GUARD_HELP = ('Select the transfer guard level for {} transfers. Default is '
                        '"allow".')
transfer_guard_host_to_device = State('jax_transfer_guard_host_to_device',
                                      help=_TRANSFER_GUARD_HELP.format('host-to-device'))
transfer_guard_device_to_device = State('jax_transfer_guard_device_to_device',
                                        help=_TRANSFER_GUARD_HELP.format('device-to-device'))
transfer_guard_device_to_host = State('jax_transfer_guard_device_to_host',
                                      help=_TRANSFER_GUARD_HELP.format('device-to-host'))
_transfer_guard = State('jax_transfer_guard',
                        help=_TRANSFER_GUARD_HELP.format('all'))


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
  """Sets the transfer guard level of every kind of transfer for the block
  (``jax.transfer_guard``)."""
  with contextlib.ExitStack() as stack:
    stack.enter_context(transfer_guard_host_to_device(new_val))
    stack.enter_context(transfer_guard_device_to_device(new_val))
    stack.enter_context(transfer_guard_device_to_host(new_val))
    stack.enter_context(_transfer_guard(new_val))
    yield


default_device = State(
    'jax_default_device',
    help='Configure the default device for JAX operations. Set to a Device object (e.g. '
         '``jax.devices("cpu")[0]``) to use that Device as the default device for JAX '
         "operations and jit'd function calls (there is no effect on multi-device "
         'computations, e.g. pmapped function calls). Set to None to use the system default '
         'device. (tinyxla: arrays made from host values and jit calls without committed '
         'arguments go to it; an eager op on uncommitted arrays made outside the block runs '
         'where they are, where JAX would move them.)')
threefry_partitionable = State('jax_threefry_partitionable', True,
                               'Enables internal threefry PRNG implementation changes that '
                               'render it automatically partitionable.')
