"""Regenerates numpy_tables.json from installed JAX (the oracle); tinyxla's tests only read the JSON.

Usage: python tests/data/make_numpy_tables.py [--exprs-only]

(--exprs-only re-runs only the expressions and keeps the other tables of the JSON.)

Three tables, each taken from jax.numpy in a fresh subprocess per x64 mode:
  "unary":  {function: {operand: cell}} for every unary function and operand;
  "binary": {function: {"a|b": cell}} for every binary function and operand pair;
  "exprs":  {expression: outcome} for the expressions in numpy_exprs.txt (x64:
            numpy_exprs_x64.txt), evaluated with ``jnp`` and ``np`` in scope (the tests
            evaluate the same text with tinyxla.numpy as jnp).
Operand names: "float32" is a strong array of ones of shape (2,); "weak:float32" is
jnp.full((2,), 1.0) (weak float32; likewise weak:int32 and weak:complex64); "py:int"
is the Python value 1 (py:float 1.0, py:complex 1j, py:bool True).
A cell is the result dtype name, suffixed "*" when weakly typed, "!Class: message" when
JAX raised, or "?" where JAX crashed. An outcome is {"dtype", "weak", "shape", "value"}
(value as nested lists; complex as [re, im]; NaN/inf as strings), {"error": [class,
message]}, {"python": value} for non-array results or {"tuple": [outcomes]}; "warnings"
lists the warning texts raised.
"""

import json
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np

HERE = pathlib.Path(__file__).parent
STRONG = ['bool', 'int8', 'int32', 'uint8', 'uint32', 'float16', 'bfloat16', 'float32',
          'complex64']
WEAK = ['weak:int32', 'weak:float32', 'weak:complex64']
PY = ['py:bool', 'py:int', 'py:float', 'py:complex']
# x64 mode adds the 64-bit dtypes.
STRONG_X64 = STRONG + ['int64', 'uint64', 'float64', 'complex128']

UNARY = """exp exp2 log log2 log10 log1p expm1 tanh sin cos tan arcsin arccos arctan sinh cosh
arcsinh arccosh arctanh sqrt cbrt square reciprocal sign abs absolute negative positive floor
ceil round around trunc rint isnan isinf isfinite logical_not bitwise_not invert conj conjugate
real imag angle deg2rad rad2deg degrees radians sinc signbit sum prod mean var std max min amax
amin all any argmax argmin nansum nanmean ptp zeros_like ones_like empty_like asarray array copy
ravel transpose flip atleast_1d atleast_2d atleast_3d squeeze isscalar""".split()
BINARY = """add subtract multiply divide true_divide floor_divide mod remainder fmod power
float_power maximum minimum fmax fmin arctan2 hypot logaddexp copysign nextafter heaviside
logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor left_shift right_shift
equal not_equal less less_equal greater greater_equal dot vdot outer inner matmul tensordot
isclose allclose array_equal divmod""".split()
# Binary functions also tried with weak and Python operands on both sides.
BINARY_SIDES = """add subtract multiply true_divide floor_divide remainder power maximum
arctan2 logaddexp bitwise_and left_shift equal less dot""".split()


def _cell(fn, args):
  try:
    out = fn(*args)
  except Exception as e:  # noqa: BLE001 - the table records any error
    return f'!{type(e).__name__}: {e}'
  if isinstance(out, (tuple, list)):
    return ','.join(_dtype_cell(o) for o in out)
  if isinstance(out, (bool, np.bool_)):
    return 'pybool'
  return _dtype_cell(out)


def _dtype_cell(out):
  return np.dtype(out.dtype).name + ('*' if getattr(out, 'weak_type', False) else '')


def _jsonable(v):
  if isinstance(v, list):
    return [_jsonable(x) for x in v]
  if isinstance(v, complex):
    return [_jsonable(v.real), _jsonable(v.imag)]
  if isinstance(v, float) and not np.isfinite(v):
    return str(v)
  return v


def outcome(thunk):
  """What evaluating ``thunk`` gives, as JSON (see the module docstring)."""
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    try:
      out = thunk()
    except Exception as e:  # noqa: BLE001 - the table records any error
      res = {'error': [type(e).__name__, str(e)]}
    else:
      res = _value(out)
  if caught:
    res['warnings'] = [f'{w.category.__name__}: {w.message}' for w in caught]
  return res


def _value(out):
  if isinstance(out, (tuple, list)):
    return {'tuple': [_value(o) for o in out]}
  if not hasattr(out, 'dtype'):
    return {'python': _jsonable(out)}
  arr = np.asarray(out)
  if arr.dtype.name == 'bfloat16':
    arr = arr.astype(np.float32)
  return {'dtype': np.dtype(out.dtype).name, 'weak': bool(getattr(out, 'weak_type', False)),
          'shape': list(arr.shape), 'value': _jsonable(arr.tolist())}


def operands(jnp, strong):
  ops = {d: jnp.ones((2,), d) for d in strong}
  ops.update({'weak:int32': jnp.full((2,), 1), 'weak:float32': jnp.full((2,), 1.0),
              'weak:complex64': jnp.full((2,), 1j)})
  ops.update({'py:bool': True, 'py:int': 1, 'py:float': 1.0, 'py:complex': 1j})
  return ops


def tasks(x64, exprs_only=False):
  """The table cells in a fixed order: (section, name, key, (function, operand names))."""
  out = []
  names = list(operands_names(x64))
  for f in [] if exprs_only else UNARY:
    out += [('unary', f, n, (f, (n,))) for n in names]
  for f in [] if exprs_only else BINARY:
    left = names if f in BINARY_SIDES else [n for n in names if ':' not in n]
    out += [('binary', f, f'{a}|{b}', (f, (a, b))) for a in left for b in names
            if f in BINARY_SIDES or ':' not in a or ':' not in b]
  exprs_file = HERE / ('numpy_exprs_x64.txt' if x64 else 'numpy_exprs.txt')
  for line in exprs_file.read_text().splitlines():
    if line.strip() and not line.startswith('#'):
      out.append(('exprs', line, None, None))
  return out


def operands_names(x64):
  return (STRONG_X64 if x64 else STRONG) + WEAK + PY


def run_tasks(start, exprs_only):
  """Child process: print one JSON line [index, result] per task from ``start`` on."""
  import jax
  import jax.numpy as jnp
  warnings.simplefilter('ignore')
  x64 = jax.config.jax_enable_x64
  ops = operands(jnp, STRONG_X64 if x64 else STRONG)
  scope = {'jnp': jnp, 'np': np}
  for i, (section, name, _, spec) in enumerate(tasks(x64, exprs_only)):
    if i < start:
      continue
    if section == 'exprs':
      res = outcome(lambda: eval(name, dict(scope)))  # noqa: S307 - trusted test data
    else:
      f, args = spec
      res = _cell(getattr(jnp, f), tuple(ops[a] for a in args))
    print(json.dumps([i, res]), flush=True)


def run_mode(x64, exprs_only):
  """All cells of one mode. JAX itself segfaults on a few inputs (int8 & weak int32 in
  bitwise_and, in 0.10.2): the child is restarted after such a cell, recorded as "?"."""
  env = dict(os.environ, JAX_ENABLE_X64=str(int(x64)), JAX_PLATFORMS='cpu')
  all_tasks = tasks(x64, exprs_only)
  results = {}
  start = 0
  while start < len(all_tasks):
    proc = subprocess.run([sys.executable, __file__, '--child', str(start),
                           str(int(exprs_only))], env=env, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
      i, res = json.loads(line)
      results[i] = res
    start = max(results, default=-1) + 1
    if proc.returncode != 0 and start < len(all_tasks):
      results[start] = '?'
      start += 1
  table = {'unary': {}, 'binary': {}, 'exprs': {}}
  for i, (section, name, key, _) in enumerate(all_tasks):
    if section == 'exprs':
      table['exprs'][name] = results[i]
    else:
      table[section].setdefault(name, {})[key] = results[i]
  return table


def main(exprs_only):
  import jax
  path = HERE / 'numpy_tables.json'
  table = {'jax_version': jax.__version__}
  for x64 in (False, True):
    mode = 'x64' if x64 else 'x32'
    table[mode] = run_mode(x64, exprs_only)
    if exprs_only:
      old = json.loads(path.read_text())[mode]
      table[mode] = {'unary': old['unary'], 'binary': old['binary'],
                     'exprs': table[mode]['exprs']}
  # One function (or expression) per line: compact, yet diffs stay readable.
  with open(path, 'w') as f:
    f.write('{"jax_version": %s' % json.dumps(table['jax_version']))
    for mode in ('x32', 'x64'):
      f.write(f',\n"{mode}": {{')
      for k, section in enumerate(('unary', 'binary', 'exprs')):
        rows = ',\n  '.join(f'{json.dumps(name)}: {json.dumps(v)}'
                            for name, v in table[mode][section].items())
        f.write(f'{"," if k else ""}\n "{section}": {{\n  {rows}}}')
      f.write('}')
    f.write('}\n')
  json.loads(path.read_text())  # sanity: the hand-formatted file parses
  print(f'wrote {path}')


if __name__ == '__main__':
  if sys.argv[1:2] == ['--child']:
    run_tasks(int(sys.argv[2]), bool(int(sys.argv[3])))
  else:
    main(sys.argv[1:] == ['--exprs-only'])
