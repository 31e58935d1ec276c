"""Tests for tinyxla._src.dtypes and tinyxla._src.config against JAX 0.10.2 behaviour.

Promotion results are compared with tests/data/promotion_table.json, which
tests/data/make_promotion_table.py records from JAX; these tests do not need JAX.
"""

import itertools
import json
import pathlib
import warnings

import ml_dtypes
import numpy as np
import pytest

from tinyxla._src import dtypes
from tinyxla._src.config import Config, NumpyDtypePromotion, config

TABLE = json.loads(
    (pathlib.Path(__file__).parent / 'data' / 'promotion_table.json').read_text())

X64_WARNING = (
    "Explicitly requested dtype float64 requested in zeros is not available, "
    "and will be truncated to dtype float32. To enable more dtypes, set the "
    "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
    "environment variable. See https://github.com/jax-ml/jax#current-gotchas "
    "for more.")


@pytest.fixture
def mode():
  """Returns set_mode(x64, promotion); restores the config afterwards."""
  saved = (config.jax_enable_x64, config.jax_numpy_dtype_promotion)

  def set_mode(x64: bool, promotion: str = 'standard') -> None:
    config.update('jax_enable_x64', x64)
    config.update('jax_numpy_dtype_promotion', promotion)
  yield set_mode
  config.update('jax_enable_x64', saved[0])
  config.update('jax_numpy_dtype_promotion', saved[1])


class WeakArray:
  """Stands in for a weak-typed tinyxla array: promotion only reads dtype and weak_type."""

  def __init__(self, dt):
    self.dtype = np.dtype(dt)
    self.weak_type = True


def operand(name):
  """Builds the promotion argument a promotion_table.json operand name describes."""
  kind, _, rest = name.rpartition(':')
  if kind == 'weak':
    return WeakArray(rest)
  if kind == 'value':
    return {'int': 1, 'float': 1.0, 'complex': 1j, 'bool': True}[rest]
  if kind == 'type':
    return {'int': int, 'float': float, 'complex': complex, 'bool': bool}[rest]
  return np.dtype(rest)


def cell(fn, args):
  try:
    dt, weak = fn(*args)
  except dtypes.TypePromotionError:
    return '!'
  return dt.name + ('*' if weak else '')


def both(args):
  """The table's cell format: "R" or "R/L" for result_type R and lattice_result_type L."""
  r = cell(lambda *a: dtypes.result_type(*a, return_weak_type_flag=True), args)
  lat = cell(dtypes.lattice_result_type, args)
  return r if r == lat else f'{r}/{lat}'


def set_table_mode(mode, name):
  x64, promotion = name.split(',')
  mode(x64 == 'x64=1', promotion)


# Explicit 64-bit dtype operands warn with x64 off; that is tested separately.
@pytest.mark.filterwarnings('ignore:Explicitly requested dtype')
@pytest.mark.parametrize('name', list(TABLE['modes']))
def test_pairs_match_jax(mode, name):
  set_table_mode(mode, name)
  data = TABLE['modes'][name]
  ops = data['operands']
  # Twice: the first pass fills the memo tables, the second reads them.
  for _ in range(2):
    bad = [(a, b, both((operand(a), operand(b))), data['pairs'][i][j])
           for i, a in enumerate(ops) for j, b in enumerate(ops)
           if both((operand(a), operand(b))) != data['pairs'][i][j]]
    assert not bad, bad[:20]


# Explicit 64-bit dtype operands warn with x64 off; that is tested separately.
@pytest.mark.filterwarnings('ignore:Explicitly requested dtype')
@pytest.mark.parametrize('name', list(TABLE['modes']))
def test_triples_match_jax(mode, name):
  set_table_mode(mode, name)
  data = TABLE['modes'][name]
  combos = itertools.combinations_with_replacement(TABLE['triple_operands'], 3)
  bad = [(c, got, want) for c, want in zip(combos, data['triples'])
         if (got := both([operand(o) for o in c])) != want]
  assert not bad, bad[:20]


# Explicit 64-bit dtype operands warn with x64 off; that is tested separately.
@pytest.mark.filterwarnings('ignore:Explicitly requested dtype')
@pytest.mark.parametrize('name', list(TABLE['modes']))
def test_fast_pair_entry_matches_lattice_result_type(mode, name):
  set_table_mode(mode, name)
  data = TABLE['modes'][name]
  ops = data['operands']
  for i, a in enumerate(ops):
    for j, b in enumerate(ops):
      want = data['pairs'][i][j].split('/')[-1]
      da, wa = dtypes._operand(operand(a))
      db, wb = dtypes._operand(operand(b))
      assert cell(dtypes._lattice_result, (da, wa, db, wb)) == want, (a, b)


@pytest.mark.parametrize('x64', [False, True])
def test_notes_examples(mode, x64):
  # Examples verified against JAX in /work/shared/notes/jax-semantics.md §2.
  mode(x64)
  rt = lambda *a: dtypes.result_type(*a, return_weak_type_flag=True)
  default_int = dtypes.int64 if x64 else dtypes.int32
  default_float = dtypes.float64 if x64 else dtypes.float32
  assert rt(np.int8(1), 1) == (dtypes.int8, False)
  assert rt(WeakArray(default_int), 5.0) == (default_float, True)
  assert rt(WeakArray(default_float), np.float16(1)) == (dtypes.float16, False)
  assert rt(dtypes.int8, 300) == (dtypes.int8, False)
  assert rt(dtypes.uint8, dtypes.int8) == (dtypes.int16, False)
  assert rt(dtypes.int32, dtypes.float16) == (dtypes.float16, False)
  assert rt(dtypes.bfloat16, dtypes.float16) == (dtypes.float32, False)
  assert rt(dtypes.uint32, dtypes.int32) == ((dtypes.int64 if x64 else dtypes.int32), False)
  assert rt(np.int16(1), np.array(1)) == (default_int, False)  # numpy arrays are strong
  assert rt(2) == (default_int, True)
  assert rt(None) == (default_float, False)


def test_result_type_argument_forms(mode):
  mode(False)
  assert dtypes.result_type('float32', int) == dtypes.float32
  assert dtypes.result_type(np.float32, 1.0) == dtypes.float32
  assert dtypes.result_type(np.zeros(3, np.float64)) == dtypes.float32
  assert dtypes.result_type(ml_dtypes.bfloat16(1), 1.0) == dtypes.bfloat16
  assert dtypes.result_type(dtypes.int8, dtypes.int8, dtypes.int8, 2) == dtypes.int8
  # Long argument lists dedupe to the same answer as the short form.
  assert dtypes.result_type(*[dtypes.int8] * 50, dtypes.uint8) == dtypes.int16
  with pytest.raises(ValueError, match="at least one array or dtype is required"):
    dtypes.result_type()
  with pytest.raises(ValueError, match="at least one array or dtype is required"):
    dtypes.lattice_result_type()
  with pytest.raises(TypeError, match="Cannot determine dtype of"):
    dtypes.result_type([1, 2])


def test_weak_array_dtype_not_canonicalized(mode):
  # An array made under x64 keeps its dtype after x64 is turned off, as in JAX.
  mode(False)
  strong64 = WeakArray('int64')
  strong64.weak_type = False
  assert dtypes.dtype(strong64) == dtypes.int64
  assert dtypes.result_type(strong64, strong64) == dtypes.int64
  assert dtypes.result_type(np.zeros(2, np.int64)) == dtypes.int32


def test_strict_promotion_error(mode):
  mode(False, 'strict')
  assert issubclass(dtypes.TypePromotionError, ValueError)
  with pytest.raises(dtypes.TypePromotionError) as e:
    dtypes.result_type(dtypes.int32, dtypes.float32)
  assert str(e.value) == (
      "Input dtypes ('int32', 'float32') have no available implicit dtype "
      "promotion path when jax_numpy_dtype_promotion=strict. Try explicitly "
      "casting inputs to the desired output type, or set "
      "jax_numpy_dtype_promotion=standard.")
  with pytest.raises(dtypes.TypePromotionError, match=r"\('int8', \"<class 'float'>\"\)"):
    dtypes.result_type(dtypes.int8, 1.0)
  with pytest.raises(dtypes.TypePromotionError):
    dtypes.promote_types('int32', 'float32')
  # Same dtype, and weak scalars of the same kind, are still allowed.
  assert dtypes.result_type(dtypes.int8, dtypes.int8, 1) == dtypes.int8
  assert dtypes.result_type(1, 2.0, return_weak_type_flag=True) == (dtypes.float32, True)


@pytest.mark.parametrize('x64', [False, True])
def test_canonicalize_dtype(mode, x64):
  mode(x64)
  pairs = {'int64': 'int32', 'uint64': 'uint32', 'float64': 'float32',
           'complex128': 'complex64'}
  for dt in dtypes.SUPPORTED_DTYPES:
    want = dt if x64 else np.dtype(pairs.get(dt.name, dt.name))
    assert dtypes.canonicalize_dtype(dt) == want
    assert dtypes.canonicalize_dtype(dt.name) == want
  assert dtypes.canonicalize_dtype(float) == (dtypes.float64 if x64 else dtypes.float32)
  with pytest.raises(TypeError, match="dtype 'foo' not understood"):
    dtypes.canonicalize_dtype('foo')


def test_default_dtypes(mode):
  mode(False)
  assert not dtypes.x64_enabled()
  assert (dtypes.default_int_dtype(), dtypes.default_uint_dtype(),
          dtypes.default_float_dtype(), dtypes.default_complex_dtype()) == (
              dtypes.int32, dtypes.uint32, dtypes.float32, dtypes.complex64)
  mode(True)
  assert dtypes.x64_enabled()
  assert (dtypes.default_int_dtype(), dtypes.default_uint_dtype(),
          dtypes.default_float_dtype(), dtypes.default_complex_dtype()) == (
              dtypes.int64, dtypes.uint64, dtypes.float64, dtypes.complex128)


def test_x64_truncation_warning(mode):
  mode(False)
  with pytest.warns(UserWarning) as rec:
    assert dtypes.check_user_dtype_supported(np.float64, 'zeros') == dtypes.float32
  assert [str(w.message) for w in rec] == [X64_WARNING]
  with pytest.warns(UserWarning, match="^Explicitly requested dtype int64 is not available"):
    assert dtypes.check_user_dtype_supported('int64') == dtypes.int32
  with pytest.warns(UserWarning, match="requested in dtype is not available"):
    assert dtypes.dtype(np.float64) == dtypes.float32
  # Repeated explicit requests warn every time, also through the memoised path.
  for _ in range(2):
    with pytest.warns(UserWarning):
      dtypes.result_type('float64')
  with warnings.catch_warnings():
    warnings.simplefilter('error')
    assert dtypes.check_user_dtype_supported(float, 'zeros') == dtypes.float32
    assert dtypes.check_user_dtype_supported(int) == dtypes.int32
    assert dtypes.dtype(np.zeros(3)) == dtypes.float32
    assert dtypes.dtype(np.float64(1.0)) == dtypes.float32
    assert dtypes.dtype(2**40) == dtypes.int32
  mode(True)
  with warnings.catch_warnings():
    warnings.simplefilter('error')
    assert dtypes.check_user_dtype_supported(np.float64, 'zeros') == dtypes.float64
    assert dtypes.result_type('float64') == dtypes.float64


def test_unsupported_dtype_errors():
  for bad, shown in [(object, "<class 'object'>"), (str, "<class 'str'>"),
                     ('datetime64[s]', 'datetime64[s]'), ('U3', 'U3')]:
    with pytest.raises(TypeError) as e:
      dtypes.check_user_dtype_supported(bad, 'zeros')
    assert str(e.value) == (
        f'JAX only supports number, bool, and string dtypes, got dtype {shown} in zeros')
  with pytest.raises(ValueError, match="^dtype must be specified.$"):
    dtypes.check_user_dtype_supported(None)
  with pytest.raises(ValueError, match="Passing an array as a dtype argument"):
    dtypes.check_user_dtype_supported(WeakArray('float32'))
  with pytest.raises(TypeError) as e:
    dtypes.dtype('datetime64[s]')
  assert str(e.value) == (
      "Value 'datetime64[s]' with dtype datetime64[s] is not a valid JAX array "
      "type. Only arrays of numeric types are supported by JAX.")
  with pytest.raises(TypeError, match=r"^Value '\['a'\]' with dtype <U1 is not a valid"):
    dtypes.dtype(np.array(['a']))
  with pytest.raises(TypeError, match="^Value '<class 'object'>' with dtype object"):
    dtypes.dtype(object)
  with pytest.raises(ValueError, match=r"^Invalid argument to dtype: None\.$"):
    dtypes.dtype(None)
  with pytest.raises(TypeError, match=r"^Cannot determine dtype of \[1, 2\]$"):
    dtypes.dtype([1, 2])
  with pytest.raises(ValueError, match="is not a valid dtype for JAX type promotion"):
    dtypes.promote_types('int32', object)


def test_dtype_of_values(mode):
  mode(False)
  assert dtypes.dtype(True) == dtypes.bool_dtype
  assert dtypes.dtype(bool) == dtypes.bool_dtype
  assert dtypes.dtype(1j) == dtypes.complex64
  assert dtypes.dtype(np.int8) == dtypes.int8
  assert dtypes.dtype('bfloat16') == dtypes.bfloat16
  assert dtypes.dtype(ml_dtypes.bfloat16) == dtypes.bfloat16
  assert dtypes.dtype(dtypes.float0) == dtypes.float0


def test_is_weakly_typed_and_scalar_type_of():
  assert dtypes.is_weakly_typed(1) and dtypes.is_weakly_typed(1.0)
  assert dtypes.is_weakly_typed(1j)
  assert not dtypes.is_weakly_typed(True)  # Python bools are strong in JAX
  assert not dtypes.is_weakly_typed(np.float32(1))
  assert not dtypes.is_weakly_typed(int)
  assert dtypes.is_weakly_typed(WeakArray('int16'))
  assert dtypes.scalar_type_of(np.zeros(2, ml_dtypes.bfloat16)) is float
  assert dtypes.scalar_type_of(np.uint8(1)) is int
  assert dtypes.scalar_type_of(True) is bool
  assert dtypes.scalar_type_of(1j) is complex


def test_promote_types(mode):
  mode(False)
  assert dtypes.promote_types('int64', 'float32') == dtypes.float32
  assert dtypes.promote_types('int64', 'int64') == dtypes.int64  # not canonicalized
  assert dtypes.promote_types('uint32', 'int32') == dtypes.int32
  assert dtypes.promote_types('uint8', int) == dtypes.uint8
  assert dtypes.promote_types('float16', float) == dtypes.float16
  assert dtypes.promote_types(int, float) == dtypes.float64  # np.dtype(float)
  assert dtypes.promote_types(bool, int) == dtypes.int64
  assert dtypes.promote_types(np.int32, np.float32) == dtypes.float32
  mode(True)
  assert dtypes.promote_types('uint32', 'int32') == dtypes.int64


def test_issubdtype():
  cases = [
      (dtypes.bfloat16, np.floating, True), ('bfloat16', dtypes.inexact, True),
      (ml_dtypes.bfloat16, dtypes.number, True), (dtypes.bfloat16, np.integer, False),
      (dtypes.bfloat16, dtypes.bfloat16, True), (dtypes.bfloat16, np.float16, False),
      (np.int32, dtypes.integer, True), ('uint8', dtypes.signedinteger, False),
      ('uint8', dtypes.unsignedinteger, True), (np.dtype('complex64'), dtypes.complexfloating, True),
      ('complex64', np.integer, False), (bool, dtypes.bool_, True), (bool, np.number, False),
      (float, np.float64, True), (int, dtypes.signedinteger, True),
      (dtypes.float16, dtypes.generic, True), (np.float32, np.float64, False),
  ]
  for _ in range(2):  # cold, then memoised
    for a, b, want in cases:
      assert dtypes.issubdtype(a, b) is want, (a, b)
  assert np.floating is dtypes.floating and np.bool_ is dtypes.bool_


def test_isdtype():
  assert dtypes.isdtype(dtypes.bfloat16, 'real floating')
  assert dtypes.isdtype(dtypes.uint8, ('bool', 'unsigned integer'))
  assert dtypes.isdtype(dtypes.complex64, 'numeric')
  assert not dtypes.isdtype(dtypes.bool_dtype, 'numeric')
  assert dtypes.isdtype('int32', np.int32)
  with pytest.raises(ValueError, match="Unrecognized kind='floating'"):
    dtypes.isdtype('float32', 'floating')


def test_finfo_iinfo():
  for dt in [dtypes.float16, dtypes.float32, dtypes.float64]:
    ours, ref = dtypes.finfo(dt), np.finfo(dt)
    assert (ours.eps, ours.max, ours.tiny, ours.bits) == (ref.eps, ref.max, ref.tiny, ref.bits)
  bf = dtypes.finfo(dtypes.bfloat16)
  assert bf.eps == 2.0**-7 and bf.bits == 16
  assert float(bf.max) == float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
  assert dtypes.finfo(dtypes.complex64).dtype == dtypes.float32
  for dt in dtypes.SUPPORTED_DTYPES:
    if dt.kind in 'iu':
      ours, ref = dtypes.iinfo(dt), np.iinfo(dt)
      assert (ours.min, ours.max, ours.bits) == (ref.min, ref.max, ref.bits)


def test_python_int_overflow(mode):
  mode(False)
  with pytest.raises(OverflowError) as e:
    dtypes.check_python_int_range(2**40, dtypes.int32)
  assert str(e.value) == "Python int 1099511627776 too large to convert to int32"
  with pytest.raises(OverflowError, match="^Python int -2147483649 too large to convert to int32$"):
    dtypes.scalar_type_to_dtype(int, -2**31 - 1)
  dtypes.check_python_int_range(2**31 - 1, dtypes.int32)
  dtypes.check_python_int_range(255, dtypes.uint8)
  with pytest.raises(OverflowError):
    dtypes.check_python_int_range(-1, dtypes.uint32)
  mode(True)
  assert dtypes.scalar_type_to_dtype(int, 2**40) == dtypes.int64
  with pytest.raises(OverflowError, match="^Python int 9223372036854775808 too large to convert to int64$"):
    dtypes.scalar_type_to_dtype(int, 2**63)


def test_to_dtype_helpers():
  assert dtypes.to_numeric_dtype(bool) == dtypes.int32
  assert dtypes.to_numeric_dtype(dtypes.uint8) == dtypes.uint8
  assert dtypes.to_inexact_dtype(dtypes.int8) == dtypes.float32
  assert dtypes.to_inexact_dtype(dtypes.int32) == dtypes.float32
  assert dtypes.to_inexact_dtype(dtypes.uint64) == dtypes.float64
  assert dtypes.to_inexact_dtype(dtypes.bfloat16) == dtypes.bfloat16
  assert dtypes.to_floating_dtype(dtypes.complex128) == dtypes.float64
  assert dtypes.to_complex_dtype(dtypes.float16) == dtypes.complex64
  assert dtypes.to_complex_dtype(dtypes.int64) == dtypes.complex128
  assert [dtypes.short_dtype_name(d) for d in
          (dtypes.float32, dtypes.bfloat16, dtypes.uint8, dtypes.complex64, dtypes.bool_dtype)
          ] == ['f32', 'bf16', 'u8', 'c64', 'bool']
  assert dtypes.python_scalar_dtypes[int] == dtypes.int64


def test_config_options_and_errors(monkeypatch):
  for name in config.values:
    monkeypatch.delenv(name.upper(), raising=False)
  c = Config()
  assert (c.jax_enable_x64, c.jax_num_cpu_devices, c.jax_platforms,
          c.jax_default_matmul_precision, c.jax_log_compiles,
          c.jax_explain_cache_misses, c.jax_threefry_partitionable,
          c.jax_debug_nans, c.jax_disable_jit) == (
              False, -1, None, None, False, False, True, False, False)
  assert c.jax_numpy_dtype_promotion == 'standard'
  assert repr(c.jax_numpy_dtype_promotion) == "<NumpyDtypePromotion.STANDARD: 'standard'>"
  v = c.version
  c.update('jax_numpy_dtype_promotion', 'strict')
  assert c.jax_numpy_dtype_promotion is NumpyDtypePromotion.STRICT and c.version == v + 1
  c.update('jax_num_cpu_devices', 4)
  assert c.jax_num_cpu_devices == 4 and c.values['jax_num_cpu_devices'] == 4
  with pytest.raises(AttributeError, match="^Unrecognized config option: jax_foo$"):
    c.update('jax_foo', 1)
  with pytest.raises(AttributeError):
    c.jax_foo
  with pytest.raises(AttributeError, match="has no setter"):
    c.jax_enable_x64 = True
  with pytest.raises(ValueError, match="'foo' is not a valid NumpyDtypePromotion"):
    c.update('jax_numpy_dtype_promotion', 'foo')
  with pytest.raises(ValueError, match="new int config value must be None or of type int"):
    c.update('jax_num_cpu_devices', 'x')
  with pytest.raises(ValueError, match="new enum value must be None or in"):
    c.update('jax_default_matmul_precision', 'fastest')
  c.update('jax_default_matmul_precision', 'highest')
  assert c.jax_default_matmul_precision == 'highest'


def test_config_environment(monkeypatch):
  monkeypatch.setenv('JAX_ENABLE_X64', 'true')
  monkeypatch.setenv('JAX_NUMPY_DTYPE_PROMOTION', 'strict')
  monkeypatch.setenv('JAX_NUM_CPU_DEVICES', '8')
  monkeypatch.setenv('JAX_PLATFORMS', 'cpu')
  c = Config()
  assert c.jax_enable_x64 is True
  assert c.jax_numpy_dtype_promotion == 'strict'
  assert c.jax_num_cpu_devices == 8 and c.jax_platforms == 'cpu'
  monkeypatch.setenv('JAX_ENABLE_X64', '1')
  assert Config().jax_enable_x64 is True
  monkeypatch.setenv('JAX_ENABLE_X64', 'bogus')
  with pytest.raises(ValueError, match="invalid truth value 'bogus' for environment 'JAX_ENABLE_X64'"):
    Config()
  monkeypatch.setenv('JAX_ENABLE_X64', '0')
  monkeypatch.setenv('JAX_NUMPY_DTYPE_PROMOTION', 'loose')
  with pytest.raises(ValueError, match='Invalid value "loose" for JAX flag jax_numpy_dtype_promotion'):
    Config()


def test_config_update_switches_promotion_tables(mode):
  mode(False)
  assert dtypes.result_type(1) == dtypes.int32
  v = config.version
  mode(True)
  assert config.version == v + 2
  assert dtypes.result_type(1) == dtypes.int64
  assert dtypes._lattice_result(dtypes.uint32, False, dtypes.int32, False) == (dtypes.int64, False)
  mode(False)
  assert dtypes._lattice_result(dtypes.uint32, False, dtypes.int32, False) == (dtypes.int32, False)
