"""Regenerates promotion_table.json from installed JAX (the oracle); tinyxla's tests only read the JSON.

Usage: python tests/data/make_promotion_table.py

For each mode (x64 off/on x standard/strict promotion) it runs JAX in a fresh
subprocess and records jax._src.dtypes.result_type(a, b, return_weak_type_flag=True)
and lattice_result_type(a, b) for every ordered pair of operands, and for every
unordered triple of a subset of them. Operand names:
  "float32"      a strong dtype (passed as np.dtype; JAX canonicalizes it)
  "weak:int16"   a weak-typed JAX array of that dtype (only dtypes that exist in the mode)
  "value:int"    a Python scalar value (1, 1.0, 1j, True)
  "type:int"     a Python scalar type (int, float, complex, bool)
A result is the dtype name, suffixed "*" when weak, or "!" when JAX raised
TypePromotionError. A cell is "R" when result_type and lattice_result_type
agree, else "R/L". "pairs" is a matrix over "operands" (row = first argument);
"triples" lists the cells for itertools.combinations_with_replacement(
TRIPLE_OPERANDS, 3) in order.
"""

import itertools
import json
import os
import pathlib
import subprocess
import sys

DTYPES = ['bool', 'uint8', 'uint16', 'uint32', 'uint64', 'int8', 'int16', 'int32',
          'int64', 'bfloat16', 'float16', 'float32', 'float64', 'complex64',
          'complex128']
TRIPLE_OPERANDS = ['bool', 'uint8', 'uint32', 'int8', 'int32', 'int64', 'bfloat16',
                   'float16', 'float32', 'complex64', 'weak:uint8', 'weak:int16',
                   'weak:bfloat16', 'value:int', 'value:float', 'value:complex']
MODES = [(x64, promo) for x64 in (False, True) for promo in ('standard', 'strict')]


def mode_name(x64, promo):
  return f"x64={int(x64)},{promo}"


def run_mode():
  """Child process: print this mode's table as JSON."""
  import warnings
  warnings.simplefilter('ignore')  # x64-off truncation warnings are expected here
  import numpy as np
  import jax
  import jax.numpy as jnp
  from jax._src import dtypes
  from jax._src.lax import lax as lax_internal
  jax.config.update('jax_numpy_dtype_promotion', os.environ['PROMO'])
  x64 = jax.config.jax_enable_x64

  operands = {d: np.dtype(d) for d in DTYPES}
  for d in DTYPES:
    if x64 or d not in ('int64', 'uint64', 'float64', 'complex128'):
      dt = np.dtype(d)
      operands[f'weak:{d}'] = lax_internal._convert_element_type(
          jnp.ones((), dt), dt, weak_type=True)
  values = {'int': 1, 'float': 1.0, 'complex': 1j, 'bool': True}
  types = {'int': int, 'float': float, 'complex': complex, 'bool': bool}
  operands.update({f'value:{k}': v for k, v in values.items()})
  operands.update({f'type:{k}': v for k, v in types.items()})

  def cell(fn, args):
    try:
      dt, weak = fn(*args)
    except dtypes.TypePromotionError:
      return '!'
    return np.dtype(dt).name + ('*' if weak else '')

  def both(args):
    r = cell(lambda *a: dtypes.result_type(*a, return_weak_type_flag=True), args)
    lat = cell(dtypes.lattice_result_type, args)
    return r if r == lat else f'{r}/{lat}'

  names = list(operands)
  out = {
      'operands': names,
      'pairs': [[both((operands[a], operands[b])) for b in names] for a in names],
      'triples': [both([operands[c] for c in combo])
                  for combo in itertools.combinations_with_replacement(TRIPLE_OPERANDS, 3)],
  }
  json.dump(out, sys.stdout)


def main():
  import jax
  table = {'jax_version': jax.__version__, 'modes': {}}
  for x64, promo in MODES:
    env = dict(os.environ, JAX_ENABLE_X64=str(int(x64)), PROMO=promo,
               JAX_PLATFORMS='cpu')
    proc = subprocess.run([sys.executable, __file__, '--child'], env=env,
                          capture_output=True, text=True, check=True)
    table['modes'][mode_name(x64, promo)] = json.loads(proc.stdout)
  path = pathlib.Path(__file__).with_name('promotion_table.json')
  # One matrix row (or 16 triples) per line: compact, yet diffs stay readable.
  with open(path, 'w') as f:
    f.write('{"jax_version": %s,\n"triple_operands": %s,\n"modes": {\n'
            % (json.dumps(table['jax_version']), json.dumps(TRIPLE_OPERANDS)))
    for i, (mode, data) in enumerate(table['modes'].items()):
      f.write(f' {json.dumps(mode)}: {{\n  "operands": {json.dumps(data["operands"])},\n')
      rows = ',\n   '.join(json.dumps(r) for r in data['pairs'])
      f.write(f'  "pairs": [\n   {rows}],\n')
      t = data['triples']
      rows = ',\n   '.join(json.dumps(t[j:j + 16])[1:-1] for j in range(0, len(t), 16))
      f.write(f'  "triples": [\n   {rows}]}}')
      f.write(',\n' if i < len(table['modes']) - 1 else '\n')
    f.write('}}\n')
  json.loads(path.read_text())  # sanity: the hand-formatted file parses
  print(f"wrote {path}")


if __name__ == '__main__':
  if sys.argv[1:] == ['--child']:
    run_mode()
  else:
    main()
