"""Dtypes, x64 canonicalization and JAX's type-promotion lattice (mirrors ``jax._src.dtypes``).

Dtype objects are plain ``numpy.dtype`` instances, as in JAX; bfloat16 is
``ml_dtypes.bfloat16``'s dtype. Only the 15 dtypes in ``SUPPORTED_DTYPES`` (plus
``float0`` for tangents of integer primals) are valid array dtypes.

Promotion is the least upper bound on JAX's lattice. Because ``result_type`` and
``lattice_result_type`` sit on the eager dispatch path, results are memoised in
per-mode dicts (mode = x64 flag x promotion strictness) that a config hook swaps
in, so a cached two-operand query is a single dict lookup: see
``_lattice_result``.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from tinyxla._src.config import config

DTypeLike = Any  # anything np.dtype() accepts, Python scalar types, or objects with .dtype
_Node = Any  # a lattice node: a np.dtype, or int/float/complex for weak types
_Operand = tuple[np.dtype, bool]  # (dtype, weak_type)

# The 15 supported dtypes. The bool dtype is `bool_dtype` because `bool_` is the
# numpy scalar type (np.bool_), as in JAX.
bool_dtype: np.dtype = np.dtype('bool')
int8: np.dtype = np.dtype('int8')
int16: np.dtype = np.dtype('int16')
int32: np.dtype = np.dtype('int32')
int64: np.dtype = np.dtype('int64')
uint8: np.dtype = np.dtype('uint8')
uint16: np.dtype = np.dtype('uint16')
uint32: np.dtype = np.dtype('uint32')
uint64: np.dtype = np.dtype('uint64')
bfloat16: np.dtype = np.dtype(ml_dtypes.bfloat16)
float16: np.dtype = np.dtype('float16')
float32: np.dtype = np.dtype('float32')
float64: np.dtype = np.dtype('float64')
complex64: np.dtype = np.dtype('complex64')
complex128: np.dtype = np.dtype('complex128')

SUPPORTED_DTYPES: tuple[np.dtype, ...] = (
    bool_dtype, uint8, uint16, uint32, uint64, int8, int16, int32, int64,
    bfloat16, float16, float32, float64, complex64, complex128)

# Tangent dtype of integer and bool primals (jax.dtypes.float0).
float0: np.dtype = np.dtype([('float0', np.void, 0)])

# Abstract scalar types for issubdtype; these are numpy's own classes, as in JAX.
generic = np.generic
number = np.number
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
bool_ = np.bool_

_SUPPORTED_SET = frozenset(SUPPORTED_DTYPES)
_VALID_DTYPES = _SUPPORTED_SET | {float0}

# Default dtypes of Python scalars before x64 canonicalization
# (jax._src.dtypes.python_scalar_types_to_dtypes).
python_scalar_dtypes: dict[type, np.dtype] = {
    bool: bool_dtype, int: int64, float: float64, complex: complex128}

_WEAK_TYPES = (int, float, complex)  # the weak lattice nodes i*, f*, c*


def _is_weak_type(x: Any) -> bool:
  # Identity, not `in`: np.dtype('int64') == int is True.
  return x is int or x is float or x is complex


_TO_32BIT = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

# Bounds for check_python_int_range, precomputed because it runs per Python-int operand.
_INT_BOUNDS = {dt: (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
               for dt in SUPPORTED_DTYPES if dt.kind in 'iu'}


class TypePromotionError(ValueError):
  """Raised when JAX type promotion fails (mirrors ``jax.dtypes.TypePromotionError``)."""


# ---------------------------------------------------------------------------
# x64 mode and canonicalization

def x64_enabled() -> bool:
  """Whether 64-bit types are enabled (``jax.config.jax_enable_x64``)."""
  return config.jax_enable_x64


def default_int_dtype() -> np.dtype:
  """int64 with x64 on, else int32 (mirrors ``jax._src.dtypes.default_int_dtype``)."""
  return int64 if config.jax_enable_x64 else int32


def default_uint_dtype() -> np.dtype:
  """uint64 with x64 on, else uint32 (mirrors ``jax._src.dtypes.default_uint_dtype``)."""
  return uint64 if config.jax_enable_x64 else uint32


def default_float_dtype() -> np.dtype:
  """float64 with x64 on, else float32 (mirrors ``jax._src.dtypes.default_float_dtype``)."""
  return float64 if config.jax_enable_x64 else float32


def default_complex_dtype() -> np.dtype:
  """complex128 with x64 on, else complex64 (mirrors ``jax._src.dtypes.default_complex_dtype``)."""
  return complex128 if config.jax_enable_x64 else complex64


def _default_of_kind(dt: np.dtype, x64: bool) -> np.dtype:
  """The default dtype of dt's kind; what a weak-typed result becomes in result_type."""
  kind = 'f' if dt == bfloat16 else dt.kind
  if kind == 'i':
    return int64 if x64 else int32
  if kind == 'u':
    return uint64 if x64 else uint32
  if kind == 'f':
    return float64 if x64 else float32
  if kind == 'c':
    return complex128 if x64 else complex64
  return dt


@functools.cache
def _canonicalize(x64: bool, dtype: Any) -> np.dtype:
  try:
    dt = np.dtype(dtype)
  except TypeError as e:
    raise TypeError(f'dtype {dtype!r} not understood') from e
  return dt if x64 else _TO_32BIT.get(dt, dt)


def canonicalize_dtype(dtype: DTypeLike, allow_extended_dtype: bool = False) -> np.dtype:
  """Maps 64-bit dtypes to 32-bit ones when x64 is off (mirrors ``jax.dtypes.canonicalize_dtype``).

  ``allow_extended_dtype`` is accepted for signature compatibility only: tinyxla's array
  runtime has no extended dtypes.
  """
  return _canonicalize(config.jax_enable_x64, dtype)


def _truncate_explicit_dtype(dt: np.dtype, fun_name: str) -> np.dtype:
  """Canonicalizes an explicitly requested dtype, warning as JAX does when it is truncated.

  Mirrors ``jax._src.dtypes._maybe_canonicalize_explicit_dtype`` under JAX's
  default ``jax_explicit_x64_dtypes='warn'`` (tinyxla has no such option).
  """
  if config.jax_enable_x64:
    return dt
  canonical = _TO_32BIT.get(dt)
  if canonical is None:
    return dt
  where = f" requested in {fun_name}" if fun_name else ""
  warnings.warn(
      f"Explicitly requested dtype {dt}{where} is not available, and will be "
      f"truncated to dtype {canonical.name}. To enable more dtypes, set the "
      "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
      "environment variable. See https://github.com/jax-ml/jax#current-gotchas "
      "for more.", stacklevel=4)  # warning -> this -> checker -> jnp fn -> user
  return canonical


def _is_array(x: Any) -> bool:
  """Whether x is a tinyxla/JAX array or tracer: such objects carry ``weak_type``."""
  return not isinstance(x, type) and getattr(x, 'weak_type', None) is not None


def check_user_dtype_supported(dtype: DTypeLike, fun_name: str | None = None) -> np.dtype:
  """Validates a user-supplied ``dtype=`` argument and returns its canonical form.

  Mirrors ``jax._src.dtypes.check_and_canonicalize_user_dtype`` (the successor
  of JAX's ``check_user_dtype_supported``): Python types map to the default
  dtypes silently; an explicit 64-bit dtype with x64 off is truncated with
  JAX's UserWarning naming ``fun_name``; non-numeric dtypes raise TypeError.
  Unlike JAX, string dtypes, float8 and int4 types are rejected.
  """
  if dtype is None:
    raise ValueError("dtype must be specified.")
  if _is_array(dtype):
    raise ValueError("Passing an array as a dtype argument is no longer "
                     "supported; instead of dtype=arr use dtype=arr.dtype.")
  if dtype is bool:
    return bool_dtype
  if dtype is int:
    return default_int_dtype()
  if dtype is float:
    return default_float_dtype()
  if dtype is complex:
    return default_complex_dtype()
  np_dtype = np.dtype(dtype)
  if np_dtype not in _VALID_DTYPES:
    msg = f'JAX only supports number, bool, and string dtypes, got dtype {dtype}'
    msg += f" in {fun_name}" if fun_name else ""
    raise TypeError(msg)
  return _truncate_explicit_dtype(np_dtype, fun_name or "")


def _check_valid(dt: np.dtype, x: Any) -> np.dtype:
  if dt not in _VALID_DTYPES:
    raise TypeError(f"Value '{x}' with dtype {dt} is not a valid JAX array "
                    "type. Only arrays of numeric types are supported by JAX.")
  return dt


def dtype(x: Any) -> np.dtype:
  """The dtype of a value or dtype-like (mirrors ``jax._src.dtypes.dtype``).

  Python scalar types and values give the canonical default dtypes; numpy
  scalar types, strings and np.dtypes are canonicalized with JAX's truncation
  warning; numpy arrays/scalars and other objects with ``.dtype`` are
  canonicalized silently; tinyxla arrays and tracers keep their dtype whatever
  the x64 mode, as JAX arrays do. Note ``jax.numpy.dtype`` is plain
  ``numpy.dtype`` in JAX 0.10, not this function.
  """
  if x is None:
    raise ValueError(f"Invalid argument to dtype: {x}.")
  if isinstance(x, type):
    dt = python_scalar_dtypes.get(x)
    if dt is not None:
      return canonicalize_dtype(dt)
    if issubclass(x, np.generic):
      return _truncate_explicit_dtype(_check_valid(np.dtype(x), x), "dtype")
  else:
    dt = python_scalar_dtypes.get(type(x))
    if dt is not None:
      return canonicalize_dtype(dt)
    if _is_array(x):
      return x.dtype
  if isinstance(x, (str, np.dtype)):
    return _truncate_explicit_dtype(_check_valid(np.dtype(x), x), "dtype")
  dt = getattr(x, 'dtype', None)
  if not isinstance(dt, np.dtype):
    try:
      dt = np.result_type(x)
    except TypeError as err:
      raise TypeError(f"Cannot determine dtype of {x}") from err
  return canonicalize_dtype(_check_valid(dt, x))


def is_weakly_typed(x: Any) -> bool:
  """Mirrors ``jax._src.dtypes.is_weakly_typed``.

  Python int/float/complex values are weak; Python bools are not (as in JAX);
  arrays and tracers report their ``weak_type`` attribute.
  """
  if _is_weak_type(type(x)):
    return True
  return bool(getattr(x, 'weak_type', False))


def scalar_type_of(x: Any) -> type:
  """The Python scalar type (bool/int/float/complex) of a value's dtype (mirrors ``jax.dtypes.scalar_type_of``)."""
  dt = dtype(x)
  if dt == bfloat16:
    return float
  for abstract, typ in ((np.bool_, bool), (np.integer, int),
                        (np.floating, float), (np.complexfloating, complex)):
    if np.issubdtype(dt, abstract):
      return typ
  raise TypeError(f"Invalid scalar value {x}")


def check_python_int_range(value: int, dtype: DTypeLike) -> None:
  """Raises JAX's OverflowError when a Python int does not fit ``dtype``.

  Mirrors the check in ``jax._src.dtypes.scalar_type_to_dtype`` (what
  ``jnp.asarray(2**40)`` raises). Note JAX 0.10's jitted binary ops report
  ``jnp.arange(3) + 2**40`` through the jit argument parser instead, with
  "An overflow was encountered while parsing an argument to a jitted
  computation, whose argument path is y. Got <class 'int'> with value ...".
  """
  dt = np.dtype(dtype)
  lo, hi = _INT_BOUNDS[dt]
  if value < lo or value > hi:
    raise OverflowError(f"Python int {value} too large to convert to {dt}")


def scalar_type_to_dtype(typ: type, value: Any = None) -> np.dtype:
  """Canonical dtype of a Python scalar type, range-checking int values (mirrors ``jax._src.dtypes.scalar_type_to_dtype``)."""
  dt = canonicalize_dtype(python_scalar_dtypes[typ])
  if typ is int and value is not None:
    check_python_int_range(value, dt)
  return dt


# ---------------------------------------------------------------------------
# Dtype categories

_INEXACT = {bool_dtype: float32, uint8: float32, int8: float32, uint16: float32,
            int16: float32, uint32: float32, int32: float32,
            uint64: float64, int64: float64}


def to_numeric_dtype(dtype: DTypeLike) -> np.dtype:
  """bool becomes int32; other dtypes are unchanged (mirrors ``jax._src.dtypes.to_numeric_dtype``)."""
  dt = np.dtype(dtype)
  return int32 if dt == bool_dtype else dt


def to_inexact_dtype(dtype: DTypeLike) -> np.dtype:
  """Integers and bool become float32 (64-bit integers float64); inexact dtypes are unchanged.

  Mirrors ``jax._src.dtypes.to_inexact_dtype``; the result is not canonicalized.
  """
  dt = np.dtype(dtype)
  return _INEXACT.get(dt, dt)


def to_floating_dtype(dtype: DTypeLike) -> np.dtype:
  """Like to_inexact_dtype, but complex maps to its real component type (mirrors ``jax._src.dtypes.to_floating_dtype``)."""
  dt = to_inexact_dtype(dtype)
  return {complex64: float32, complex128: float64}.get(dt, dt)


def to_complex_dtype(dtype: DTypeLike) -> np.dtype:
  """complex128 for float64/complex128 (and 64-bit ints), else complex64 (mirrors ``jax._src.dtypes.to_complex_dtype``)."""
  return complex128 if to_inexact_dtype(dtype) in (float64, complex128) else complex64


class extended(np.generic):
  """The scalar type above every extended dtype (mirrors ``jax.dtypes.extended``): an
  ``issubdtype`` target, never instantiated."""


class prng_key(extended):
  """The scalar type of PRNG key dtypes such as ``key<fry>`` (mirrors ``jax.dtypes.prng_key``)."""


def itemsize_bits(dtype: DTypeLike) -> int:
  """Bits per element of ``dtype``, 8 for bool (mirrors ``jax.dtypes.itemsize_bits``)."""
  if dtype is None:
    raise ValueError("dtype cannot be None.")
  dt = np.dtype(dtype)
  if dt == bool_dtype:
    return 8
  if dt.kind == 'c':
    return 2 * finfo(dt).bits
  # ml_dtypes' int4 and float8 types are not under np.integer / np.floating.
  for info in (iinfo, finfo):
    try:
      return info(dt).bits
    except ValueError:
      pass
  raise ValueError(f"unexpected input: {dtype=}")


def _scalar_type(x: Any) -> type:
  if isinstance(x, type) and issubclass(x, np.generic):
    return x
  typ = getattr(x, 'type', None)  # an extended dtype such as key<fry>
  if isinstance(typ, type) and issubclass(typ, extended):
    return typ
  return np.dtype(x).type


# ml_dtypes' scalar types sit outside numpy's hierarchy; in JAX they are under these.
_ML_DTYPE_PARENTS = {
    **{t: np.floating for t in (
        ml_dtypes.bfloat16, ml_dtypes.float8_e3m4, ml_dtypes.float8_e4m3,
        ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
        ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e8m0fnu)},
    **{t: np.signedinteger for t in (ml_dtypes.int2, ml_dtypes.int4)},
    **{t: np.unsignedinteger for t in (ml_dtypes.uint2, ml_dtypes.uint4)},
}


def _issubdtype_uncached(a: DTypeLike, b: DTypeLike) -> bool:
  a_sc, b_sc = _scalar_type(a), _scalar_type(b)
  parent = _ML_DTYPE_PARENTS.get(a_sc)
  if parent is not None:
    return b_sc is a_sc or bool(np.issubdtype(parent, b_sc))
  return bool(np.issubdtype(a_sc, b_sc))


# Memo keyed by the raw arguments (dtype-likes are hashable). Keys that are
# equal but not identical (np.dtype('float64') == float) have equal answers.
_ISSUBDTYPE: dict[tuple[Any, Any], bool] = {}


def issubdtype(a: DTypeLike, b: DTypeLike) -> bool:
  """numpy.issubdtype that treats bfloat16 as floating (mirrors ``jax.numpy.issubdtype``)."""
  try:
    return _ISSUBDTYPE[a, b]
  except KeyError:
    out = _ISSUBDTYPE[a, b] = _issubdtype_uncached(a, b)
    return out
  except TypeError:  # an unhashable dtype-like
    return _issubdtype_uncached(a, b)


_DTYPE_KINDS: dict[str, frozenset[np.dtype]] = {
    'bool': frozenset({bool_dtype}),
    'signed integer': frozenset({int8, int16, int32, int64}),
    'unsigned integer': frozenset({uint8, uint16, uint32, uint64}),
    'integral': frozenset({int8, int16, int32, int64, uint8, uint16, uint32, uint64}),
    'real floating': frozenset({bfloat16, float16, float32, float64}),
    'complex floating': frozenset({complex64, complex128}),
}
_DTYPE_KINDS['numeric'] = (_DTYPE_KINDS['integral'] | _DTYPE_KINDS['real floating']
                           | _DTYPE_KINDS['complex floating'])


def isdtype(dtype: DTypeLike, kind: str | DTypeLike | tuple[str | DTypeLike, ...]) -> bool:
  """Array-API dtype kind test (mirrors ``jax.numpy.isdtype``)."""
  the_dtype = np.dtype(dtype)
  options: set[np.dtype] = set()
  for k in (kind if isinstance(kind, tuple) else (kind,)):
    if isinstance(k, str) and k in _DTYPE_KINDS:
      options.update(_DTYPE_KINDS[k])
      continue
    try:
      options.add(np.dtype(k))
    except TypeError as e:
      if isinstance(k, str):
        raise ValueError(
            f"Unrecognized kind={k!r} expected one of {list(_DTYPE_KINDS)}, "
            "or a compatible input for jnp.dtype()") from None
      raise TypeError(
          f"Expected kind to be a dtype, string, or tuple; got kind={k!r}") from e
  return the_dtype in options


# finfo/iinfo are ml_dtypes' classes, exactly as jax.numpy.finfo/iinfo are.
finfo = ml_dtypes.finfo
iinfo = ml_dtypes.iinfo


@functools.cache
def short_dtype_name(dtype: DTypeLike) -> str:
  """Abbreviated name used in avals and tracer reprs: f32, bf16, u8, c64, bool (mirrors ``jax._src.dtypes.short_dtype_name``)."""
  return (np.dtype(dtype).name.replace('float', 'f').replace('uint', 'u')
          .replace('int', 'i').replace('complex', 'c'))


# ---------------------------------------------------------------------------
# The promotion lattice

def _type_promotion_lattice(strict: bool, x64: bool) -> dict[_Node, list[_Node]]:
  """Each node's immediate successors (mirrors ``jax._src.dtypes._type_promotion_lattice``).

  JAX's sub-byte ints and float8/6/4 nodes are left out: they are leaves whose
  only predecessors are the weak nodes, so they never change the least upper
  bound of the dtypes supported here.
  """
  b1, u8, u16, u32, u64, i8, i16, i32, i64, bf16, f16, f32, f64, c64, c128 = SUPPORTED_DTYPES
  i_, f_, c_ = _WEAK_TYPES
  if strict:
    return {i_: [f_, u8, u16, u32, u64, i8, i16, i32, i64],
            f_: [c_, bf16, f16, f32, f64],
            c_: [c64, c128],
            **{t: [] for t in SUPPORTED_DTYPES}}
  return {
      b1: [i_],
      i_: [u8, i8],
      u8: [i16, u16],
      u16: [i32, u32],
      # With x64 off, u32 x i32 must not form int64: JAX routes u32 -> i32 instead.
      u32: [i64, u64] if x64 else [i32, u64],
      u64: [f_],
      i8: [i16],
      i16: [i32],
      i32: [i64],
      i64: [f_],
      f_: [bf16, f16, c_],
      bf16: [f32],
      f16: [f32],
      f32: [f64, c64],
      f64: [c128],
      c_: [c64],
      c64: [c128],
      c128: [],
  }


def _upper_bounds(lattice: dict[_Node, list[_Node]]) -> dict[_Node, frozenset[_Node]]:
  """Each node's set of upper bounds (itself and everything reachable from it)."""
  ubs: dict[_Node, frozenset[_Node]] = {}

  def visit(n: _Node) -> frozenset[_Node]:
    if n not in ubs:
      ubs[n] = frozenset({n}).union(*(visit(m) for m in lattice[n]))
    return ubs[n]
  for n in lattice:
    visit(n)
  return ubs


# Keyed by (strict, x64); the strict lattice does not depend on x64.
_LATTICE_UBS = {(strict, x64): _upper_bounds(_type_promotion_lattice(strict, x64))
                for strict in (False, True) for x64 in (False, True)}


@functools.lru_cache(maxsize=512)
def _least_upper_bound(strict: bool, x64: bool, *nodes: _Node) -> _Node:
  """The least upper bound of ``nodes`` (mirrors ``jax._src.dtypes._least_upper_bound``).

  LUB(N) is the common upper bound c with CUB(N) a subset of UB(c); if some
  input is itself a common upper bound, it is the LUB.
  """
  ubs = _LATTICE_UBS[strict, x64]
  for n in nodes:
    if n not in ubs:
      raise ValueError(f"dtype={n!r} is not a valid dtype for JAX type promotion.")
  cub = frozenset.intersection(*(ubs[n] for n in nodes))
  lub = (cub & set(nodes)) or {c for c in cub if cub <= ubs[c]}
  if len(lub) == 1:
    return next(iter(lub))
  # The lattices are well formed, so the LUB is unique when it exists.
  names = tuple(str(n) for n in nodes)
  if strict:
    msg = (f"Input dtypes {names} have no available implicit dtype promotion "
           "path when jax_numpy_dtype_promotion=strict. Try explicitly casting "
           "inputs to the desired output type, or set "
           "jax_numpy_dtype_promotion=standard.")
  else:
    msg = (f"Input dtypes {names} have no available implicit dtype promotion "
           "path. Try explicitly casting inputs to the desired output type.")
  raise TypePromotionError(msg)


def _jax_node(dt: np.dtype, weak: bool) -> _Node:
  """The lattice node of an operand: weak operands become i*, f* or c* (weak bool stays bool)."""
  if not weak or dt == bool_dtype or dt not in _SUPPORTED_SET:
    return dt
  if dt == bfloat16:
    return float
  return {'i': int, 'u': int, 'f': float, 'c': complex}[dt.kind]


def _node_dtype(node: _Node, x64: bool) -> np.dtype:
  """The canonical dtype of a lattice node (a weak node gives its default dtype).

  JAX warns when a LUB of 64-bit arrays is truncated with x64 off; this does
  it silently.
  """
  dt = python_scalar_dtypes[node] if _is_weak_type(node) else node
  return _canonicalize(x64, dt)


def _compute_lattice_result(operands: tuple[_Operand, ...], strict: bool,
                            x64: bool) -> _Operand:
  """Uncached ``lattice_result_type`` on (dtype, weak) operands."""
  dts = [d for d, _ in operands]
  weaks = [w for _, w in operands]
  if len(operands) == 1:
    out, weak = operands[0]
  elif len(set(dts)) == 1 and not all(weaks):
    out, weak = dts[0], False
  elif all(weaks) and not strict:
    # All weak: promote the strong counterparts and mark the result weak, so
    # e.g. two weak int16 arrays stay int16 instead of becoming weak int.
    out, weak = _node_dtype(_least_upper_bound(strict, x64, *dict.fromkeys(dts)), x64), True
  else:
    nodes = dict.fromkeys(_jax_node(d, w) for d, w in operands)
    node = _least_upper_bound(strict, x64, *nodes)
    out, weak = _node_dtype(node, x64), _is_weak_type(node)
  return out, weak and out != bool_dtype


# Per-mode memo tables, keyed by the flattened operands (d0, w0, d1, w1, ...):
# _LATTICE_TABLES for lattice_result_type, _RESULT_TABLES for result_type.
_LATTICE_TABLES: dict[tuple[bool, bool], dict[tuple, _Operand]] = {}
_RESULT_TABLES: dict[tuple[bool, bool], dict[tuple, _Operand]] = {}
# Per-mode (dtype, weak) of Python and numpy scalar values, keyed by type(value).
_VALUE_OPERAND_TABLES: dict[tuple[bool, bool], dict[type, _Operand]] = {}
# Per-mode (dtype, weak) of hashable dtype-likes (types, strings, np.dtypes).
_STATIC_OPERAND_TABLES: dict[tuple[bool, bool], dict[Any, _Operand]] = {}

# The current mode's tables, rebound by _refresh_mode whenever the config changes.
_MODE: tuple[bool, bool]
_LATTICE: dict[tuple, _Operand]
_RESULT: dict[tuple, _Operand]
_VALUE_OPERAND: dict[type, _Operand]
_STATIC_OPERAND: dict[Any, _Operand]


def _value_operands(x64: bool) -> dict[type, _Operand]:
  ops = {t: (_canonicalize(x64, dt), _is_weak_type(t)) for t, dt in python_scalar_dtypes.items()}
  ops.update({dt.type: (_canonicalize(x64, dt), False) for dt in SUPPORTED_DTYPES})
  return ops


def _refresh_mode(name: str | None = None, value: Any = None) -> None:
  """Config hook: points the module-level fast tables at the current mode's tables."""
  global _MODE, _LATTICE, _RESULT, _VALUE_OPERAND, _STATIC_OPERAND
  mode = (config.jax_numpy_dtype_promotion == 'strict', bool(config.jax_enable_x64))
  if mode not in _LATTICE_TABLES:
    _LATTICE_TABLES[mode] = {}
    _RESULT_TABLES[mode] = {}
    _VALUE_OPERAND_TABLES[mode] = _value_operands(mode[1])
    _STATIC_OPERAND_TABLES[mode] = {}
  _MODE = mode
  _LATTICE = _LATTICE_TABLES[mode]
  _RESULT = _RESULT_TABLES[mode]
  _VALUE_OPERAND = _VALUE_OPERAND_TABLES[mode]
  _STATIC_OPERAND = _STATIC_OPERAND_TABLES[mode]


_refresh_mode()
config.add_update_hook(_refresh_mode)


def _lattice_miss(key: tuple, mode: tuple[bool, bool]) -> _Operand:
  operands = tuple(zip(key[::2], key[1::2]))
  out = _compute_lattice_result(operands, *mode)
  _LATTICE_TABLES[mode][key] = out  # errors are not cached; they re-raise each time
  return out


def _result_miss(key: tuple, mode: tuple[bool, bool]) -> _Operand:
  dt, weak = _LATTICE_TABLES[mode].get(key) or _lattice_miss(key, mode)
  out = (_default_of_kind(dt, mode[1]), True) if weak else (dt, False)
  _RESULT_TABLES[mode][key] = out
  return out


def _lattice_result(dtype_a: np.dtype, weak_a: bool, dtype_b: np.dtype,
                    weak_b: bool) -> tuple[np.dtype, bool]:
  """Fast two-operand ``lattice_result_type`` on (dtype, weak_type) pairs.

  This is what jnp binary ops need to pick the common operand dtype. A cached
  query is one dict lookup in the current mode's table. Dtypes are taken as
  given (they should already be canonical, as array dtypes are).
  """
  try:
    return _LATTICE[dtype_a, weak_a, dtype_b, weak_b]
  except KeyError:
    return _lattice_miss((dtype_a, weak_a, dtype_b, weak_b), _MODE)


def _operand(x: Any) -> _Operand:
  """(dtype, weak_type) of one promotion argument (mirrors ``jax._src.dtypes._dtype_and_weaktype``).

  ``None`` means the default float dtype, as in ``jax.dtypes.result_type``.
  """
  return _VALUE_OPERAND.get(type(x)) or _operand_slow(x)


# Types seen to carry `weak_type` (tinyxla arrays and tracers), so later
# operands of these types skip the slower isinstance/getattr probing.
_ARRAY_TYPES: set[type] = set()


def _operand_slow(x: Any) -> _Operand:
  """_operand for arguments that are not Python or numpy scalar values."""
  if type(x) in _ARRAY_TYPES:
    return x.dtype, bool(x.weak_type)
  if isinstance(x, (np.dtype, type, str)):
    op = _STATIC_OPERAND.get(x)
    return op if op is not None else _static_operand_miss(x)
  weak = getattr(x, 'weak_type', None)
  if weak is not None:
    _ARRAY_TYPES.add(type(x))
    return x.dtype, bool(weak)  # arrays and tracers: dtype as is, never canonicalized
  if x is None:
    return default_float_dtype(), False
  return dtype(x), is_weakly_typed(x)


def _static_operand_miss(x: np.dtype | type | str) -> _Operand:
  op = (dtype(x), _is_weak_type(x))
  # Explicit 64-bit requests warn on every call with x64 off, so they are not
  # memoised; everything else is.
  explicit = not isinstance(x, type) or issubclass(x, np.generic)
  if _MODE[1] or not explicit or np.dtype(x) not in _TO_32BIT:
    _STATIC_OPERAND[x] = op
  return op


def _flat_key(args: tuple[Any, ...]) -> tuple:
  """Flattened (d0, w0, d1, w1, ...) of the distinct operands, in first-seen order.

  Once there are two or more operands, repeating one never changes the
  result, so duplicates are dropped (keeping keys for long argument lists such
  as concatenate's small), except that a lone repeated operand is kept twice:
  one operand and two equal ones are different cases.
  """
  if len(args) == 1:
    return _operand(args[0])
  if not args:
    raise ValueError("at least one array or dtype is required")
  ops = tuple(dict.fromkeys(map(_operand, args)))
  if len(ops) == 1:
    ops *= 2
  key: tuple = ()
  for op in ops:
    key += op
  return key


def lattice_result_type(*args: Any) -> tuple[np.dtype, bool]:
  """(dtype, weak_type) that operands promote to (mirrors ``jax._src.dtypes.lattice_result_type``).

  Unlike ``result_type``, a weak result keeps its dtype (two weak int16 arrays
  give weak int16); this is what jnp's ``promote_dtypes`` uses.
  """
  if len(args) == 2:  # the hot case, inlined
    a, b = args
    key = ((_VALUE_OPERAND.get(type(a)) or _operand_slow(a))
           + (_VALUE_OPERAND.get(type(b)) or _operand_slow(b)))
  else:
    key = _flat_key(args)
  try:
    return _LATTICE[key]
  except KeyError:
    return _lattice_miss(key, _MODE)


def result_type(*args: Any, return_weak_type_flag: bool = False) -> np.dtype | tuple[np.dtype, bool]:
  """The dtype that ``args`` promote to (mirrors ``jax.dtypes.result_type``).

  Arguments may be arrays, tracers, numpy arrays and scalars, Python scalars,
  Python scalar types (int/float/complex are weak), dtype-likes, or None (the
  default float dtype). A weak result is replaced by the default dtype of its
  kind (weak int16 -> int32 with x64 off). Raises TypePromotionError under
  ``jax_numpy_dtype_promotion='strict'`` for implicit promotions between
  different strong types.
  """
  if len(args) == 2:  # the hot case, inlined
    a, b = args
    key = ((_VALUE_OPERAND.get(type(a)) or _operand_slow(a))
           + (_VALUE_OPERAND.get(type(b)) or _operand_slow(b)))
  else:
    key = _flat_key(args)
  try:
    out = _RESULT[key]
  except KeyError:
    out = _result_miss(key, _MODE)
  return out if return_weak_type_flag else out[0]


def promote_types(a: DTypeLike, b: DTypeLike) -> np.dtype:
  """Promotion of two dtypes (mirrors ``jax.numpy.promote_types``).

  Dtypes are not canonicalized (``promote_types('int64', 'int64')`` is int64
  even with x64 off); the Python types int/float/complex are weak and give
  numpy's dtype for them when they win (``promote_types(int, float)`` is float64).
  """
  a_node = a if _is_weak_type(a) else np.dtype(a)
  b_node = b if _is_weak_type(b) else np.dtype(b)
  return np.dtype(_least_upper_bound(*_MODE, a_node, b_node))
