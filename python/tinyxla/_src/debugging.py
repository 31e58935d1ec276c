"""``jax.debug``: print, callback, breakpoint and sharding pictures (mirrors
``jax._src.debugging`` and ``jax._src.debugger``).

All of them bind ``debug_callback`` (``_src/callback.py``), which runs on the host in
program order, eagerly and inside jit, vmap (once per batch member), grad (on primals),
pmap and the control-flow primitives.
"""
from __future__ import annotations

import cmd
import inspect
import os
import pprint
import string
import sys
import threading
import traceback
from typing import IO, Any, Callable, Sequence

import numpy as np

from tinyxla._src import core, tree_util
from tinyxla._src.array import Array
from tinyxla._src.callback import bind_debug_callback


def _split_args(args: tuple, kwargs: dict) -> tuple[Any, list[Any], dict[int, Any]]:
    """The tree of ``(args, kwargs)``, its array leaves (staged) and its other leaves (kept
    by position), as JAX's ``_split_callback_args``."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    dyn, static = [], {}
    for i, x in enumerate(leaves):
        if isinstance(x, (Array, core.Tracer, np.ndarray, np.generic, bool, int, float, complex)):
            dyn.append(x)
        else:
            static[i] = x
    return in_tree, dyn, static


def debug_callback(callback: Callable[..., None] | None = None, *args: Any, ordered: bool = False,
                   partitioned: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Calls ``callback(*args, **kwargs)`` on the host with the arrays' values
    (``jax.debug.callback``), in the single-call form or the two-call form
    ``debug.callback(ordered=True)(callback, *args)``. ``partitioned`` is accepted and has
    no effect (every value is whole on the host)."""
    def _debug_callback(callback: Callable[..., None], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(callback):
            raise TypeError("first argument to jax.debug.callback must be callable, "
                            f"but got an object of type {type(callback)}")
        in_tree, dyn, static = _split_args(c_args, c_kwargs)
        bind_debug_callback(callback, in_tree, dyn, static, ordered, partitioned)

    if callback is not None:
        _debug_callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_callback received unexpected arguments in the two-call form:"
                        f" args={args!r} kwargs={kwargs!r}")
    return _debug_callback


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting (JAX's)."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                "You may be passing an f-string (i.e, `f\"{x}\"`) into "
                "`jax.debug.print` and instead should pass in a regular string.")


_checker = _FormatChecker()


try:  # numpy's print options live in a context variable that set_printoptions replaces
    from numpy._core.printoptions import format_options as _np_format_options
except ImportError:  # numpy < 2
    _np_format_options = None


class _PrintFormatted:
    """Formats and writes one ``debug.print`` line; equal for equal format strings and
    print options, so re-traced prints share their compiled callback. The numpy print
    options of the trace apply, as in JAX: entered only when they differ from the current
    ones, which is checked once per change of options, not per print."""

    __slots__ = ("fmt", "np_printoptions", "has_placeholders", "_options", "_same_as")

    def __init__(self, fmt: str, np_printoptions: tuple, has_placeholders: bool):
        self.fmt = fmt
        self.np_printoptions = np_printoptions
        self.has_placeholders = has_placeholders
        self._options = dict(np_printoptions)
        self._same_as = None  # the options object last found equal to ours

    def _options_current(self) -> bool:
        if _np_format_options is None:
            return self._options == np.get_printoptions()
        current = _np_format_options.get()
        if self._options != np.get_printoptions():
            return False
        self._same_as = current
        return True

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        if self.has_placeholders:
            if ((_np_format_options is not None and _np_format_options.get() is self._same_as)
                    or self._options_current()):
                msg = self.fmt.format(*args, **kwargs)
            else:
                with np.printoptions(**self._options):
                    msg = self.fmt.format(*args, **kwargs)
        else:
            msg = " ".join((self.fmt, *(str(a) for a in args)))
        sys.stdout.write(msg + "\n")

    def _key(self):
        return (self.fmt, self.np_printoptions, self.has_placeholders)

    def __eq__(self, other):
        return type(other) is _PrintFormatted and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    __name__ = "debug_print"


def _formats_values_only(fmt: str) -> bool:
    """Whether ``fmt`` only formats its arguments' values (no ``!r``/``!a`` conversion,
    attribute or item access), so numpy values print as the Arrays would."""
    for _, field, spec, conversion in string.Formatter().parse(fmt):
        if field is not None and (conversion in ("r", "a") or "." in field or "[" in field
                                  or (spec and not _formats_values_only(spec))):
            return False
    return True


def debug_print(fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False,
                skip_format_check: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Prints ``fmt.format(*args, **kwargs)`` with the arrays' values, from staged code too
    (``jax.debug.print``); numpy's print options at the call apply. Without placeholders
    the arguments follow the text, separated by spaces. Also the two-call form
    ``debug.print(ordered=True)(fmt, ...)``. Not for f-strings: formatting is delayed."""
    def _debug_print(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not skip_format_check:
            _checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field_name is not None
        in_tree, dyn, static = _split_args(c_args, c_kwargs)
        printer = _PrintFormatted(fmt, tuple(np.get_printoptions().items()), has_placeholders)
        bind_debug_callback(printer, in_tree, dyn, static, ordered, partitioned, "jax.debug.print",
                            host_values=_formats_values_only(fmt))

    if fmt is not None:
        _debug_print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_print received unexpected arguments in the two-call form:"
                        f" args={args!r} kwargs={kwargs!r}")
    return _debug_print


# ---------------------------------------------------------------------------------------
# breakpoint: a pdb-like prompt over the Python frames of the call site.

class DebuggerFrame:
    """One Python frame of a breakpoint's call site (``jax``'s ``DebuggerFrame``)."""

    __slots__ = ("filename", "locals", "globals", "code_context", "source", "lineno", "offset")

    def __init__(self, filename, locals, globals, code_context, source, lineno, offset):
        self.filename = filename
        self.locals = locals
        self.globals = globals
        self.code_context = code_context
        self.source = source
        self.lineno = lineno
        self.offset = offset

    @classmethod
    def from_frameinfo(cls, info: inspect.FrameInfo) -> "DebuggerFrame":
        try:
            _, start = inspect.getsourcelines(info.frame)
            source = inspect.getsource(info.frame).split("\n")
            offset = info.lineno - max(start, 1)
            if offset >= len(source):
                source, offset = [], None
        except (OSError, TypeError):
            source, offset = [], None
        return cls(info.filename, dict(info.frame.f_locals), {}, info.code_context, source,
                   info.lineno, offset)

    def with_locals(self, values: dict[str, Any]) -> "DebuggerFrame":
        return DebuggerFrame(self.filename, {**self.locals, **values}, self.globals,
                             self.code_context, self.source, self.lineno, self.offset)


class CliDebugger(cmd.Cmd):
    """The text debugger of ``jax.debug.breakpoint`` (JAX's ``CliDebugger``): ``p``/``pp``
    expressions, ``u``/``d`` frames, ``l`` list, ``w`` where, ``c`` continue, ``q`` quit;
    any other line is evaluated in the current frame."""

    prompt = "(jdb) "

    def __init__(self, frames: list[DebuggerFrame], thread_id: int | None,
                 stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 completekey: str = "tab"):
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.frame_index = 0
        self.thread_id = thread_id
        self.intro = "Entering jdb:"

    def evaluate(self, expr: str) -> Any:
        frame = self.frames[self.frame_index]
        return eval(expr, {}, {**frame.globals, **frame.locals})

    def default(self, line):
        self.do_p(line)

    def _error_message(self):
        exc_info = sys.exc_info()[:2]
        print("***", traceback.format_exception_only(*exc_info)[-1].strip(), file=self.stdout)

    def print_backtrace(self):
        lines = ["Traceback:"]
        for frame in self.frames[::-1]:
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    <no source>" if frame.offset is None
                         else f"    {frame.source[frame.offset].strip()}")
        print("\n".join(lines), file=self.stdout)

    def print_context(self, num_lines: int = 2):
        frame = self.frames[self.frame_index]
        lines = [f"> {frame.filename}({frame.lineno})"]
        for i, line in enumerate(frame.source):
            if frame.offset is not None and frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                lines.append(f"->  {line}" if i == frame.offset else f"    {line}")
        print("\n".join(lines), file=self.stdout)

    def do_p(self, arg):
        """p expression
        Evaluates and prints the value of an expression
        """
        try:
            print(repr(self.evaluate(arg)), file=self.stdout)
        except BaseException:
            self._error_message()

    def do_pp(self, arg):
        """pp expression
        Evaluates and pretty-prints the value of an expression
        """
        try:
            print(pprint.pformat(self.evaluate(arg)), file=self.stdout)
        except BaseException:
            self._error_message()

    def do_up(self, arg, /):
        """u(p)
        Move up a stack frame.
        """
        if self.frame_index == len(self.frames) - 1:
            print("At topmost frame.", file=self.stdout)
        else:
            self.frame_index += 1
        self.print_context()
    do_u = do_up

    def do_down(self, arg, /):
        """d(own)
        Move down a stack frame.
        """
        if self.frame_index == 0:
            print("At bottommost frame.", file=self.stdout)
        else:
            self.frame_index -= 1
        self.print_context()
    do_d = do_down

    def do_list(self, _):
        """l(ist)
        List source code for the current file.
        """
        self.print_context(num_lines=5)
    do_l = do_list

    def do_continue(self, _):
        """c(ont(inue))
        Continue the program's execution.
        """
        return True
    do_c = do_cont = do_continue

    def do_quit(self, _):
        """q(uit)\n(exit)
        Quit the debugger. The program is given an exit command.
        """
        sys.exit(0)
    do_q = do_EOF = do_exit = do_quit

    def do_where(self, _):
        """w(here)
        Prints a stack trace with the most recent frame on the bottom.
        'bt' is an alias for this command.
        """
        self.print_backtrace()
    do_w = do_bt = do_where

    def run(self):
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


_debug_lock = threading.Lock()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frame(info: inspect.FrameInfo) -> bool:
    return not os.path.abspath(info.filename).startswith(_PACKAGE_DIR)


class _Breakpoint:
    """Runs the debugger on the frames, each traced local replaced by its value."""

    __slots__ = ("frames", "names", "kwargs", "skip")

    def __init__(self, frames: list[DebuggerFrame], names: list[tuple[int, str]], kwargs: dict,
                 skip: int):
        self.frames = frames
        self.names = names  # (frame, local) of each traced value, in argument order
        self.kwargs = kwargs
        self.skip = skip  # leading arguments that only order the call (a token's leaves)

    def __call__(self, *values: Any) -> None:
        values = values[self.skip:]
        frames = list(self.frames)
        per_frame: dict[int, dict[str, Any]] = {}
        for (f, name), v in zip(self.names, values):
            per_frame.setdefault(f, {})[name] = v
        for f, vals in per_frame.items():
            frames[f] = frames[f].with_locals(vals)
        thread_id = None if threading.current_thread() is threading.main_thread() else threading.get_ident()
        with _debug_lock:
            CliDebugger(frames, thread_id, **self.kwargs).run()


def breakpoint(*, backend: str | None = None, filter_frames: bool = True, num_frames: int | None = None,
               ordered: bool = False, token: Any = None, **kwargs: Any) -> Any:
    """Stops at this point of the program with a pdb-like prompt, ``(jdb)``, over the call
    site's frames (``jax.debug.breakpoint``); traced locals show their values. Only the
    CLI debugger exists (``backend`` is ignored); ``stdin``/``stdout`` keywords go to it.
    With ``token``, the breakpoint runs once the token is computed and returns it."""
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    if filter_frames:
        infos = [i for i in infos if _user_frame(i)]
    frames = [DebuggerFrame.from_frameinfo(i) for i in infos]
    if num_frames is not None:
        frames = frames[:num_frames]
    names, values = [], []
    for f, frame in enumerate(frames):
        for name, v in frame.locals.items():
            if isinstance(v, core.Tracer):
                names.append((f, name))
                values.append(v)
        frame.locals = {k: v for k, v in frame.locals.items() if not isinstance(v, core.Tracer)}
    token_leaves = tree_util.tree_leaves(token)
    debug_callback(_Breakpoint(frames, names, kwargs, len(token_leaves)), *token_leaves, *values,
                   ordered=ordered)
    return token


# ---------------------------------------------------------------------------------------
# Sharding pictures: the text JAX's ``visualize_sharding`` draws with ``rich`` (no colour,
# square box, a line between rows).

def _chunk_index(size: int, slc: slice) -> int:
    if slc.start is None and slc.stop is None:
        return 0
    return slc.start // (slc.stop - slc.start)


def _as_slice(s: Any) -> slice:
    return slice(s, s + 1) if isinstance(s, int) else s


def _layout(shape: Sequence[int], sharding: Any, scale: float, min_width: int, max_width: int
            ) -> list[list[tuple[str, int, int, int, int]]]:
    """Rows of cells (text, top, right, bottom, left padding), as JAX computes them."""
    base_height = int(10 * scale)
    aspect = (shape[1] if len(shape) == 2 else 1) / shape[0]
    base_width = int(base_height * aspect)
    kind = next(iter(sharding.device_set)).platform.upper()
    slices: dict[tuple[int, int], set[int]] = {}
    heights: dict[tuple[int, int], float | None] = {}
    widths: dict[tuple[int, int], float] = {}
    for dev, slcs in sharding.devices_indices_map(tuple(shape)).items():
        slcs = tuple(map(_as_slice, slcs))
        idx = tuple(_chunk_index(n, s) for n, s in zip(shape, slcs))
        if len(slcs) == 2:
            vert, horiz = slcs
            heights[idx] = ((vert.stop - vert.start) if vert.stop is not None else shape[0]) / shape[0]
            widths[idx] = ((horiz.stop - horiz.start) if horiz.stop is not None else shape[1]) / shape[1]
        else:
            horiz, = slcs
            idx = (0, *idx)
            heights[idx] = None
            widths[idx] = ((horiz.stop - horiz.start) if horiz.stop is not None else shape[0]) / shape[0]
        slices.setdefault(idx, set()).add(dev.id)
    rows = max(k[0] for k in slices) + 1
    cols = max(k[1] for k in slices) + 1
    table = []
    for i in range(rows):
        row = []
        for j in range(cols):
            entry = f"{kind} " + ",".join(str(s) for s in sorted(slices[i, j]))
            width = min(max(int(widths[i, j] * base_width * 2.5), min_width), max_width)
            height = 1 if heights[i, j] is None else int(heights[i, j] * base_height)
            left, rem = divmod(width - len(entry) - 2, 2)
            top, vrem = divmod(height - 2, 2)
            row.append((entry, max(top, 0), max(left + rem, 0), max(top + vrem, 0), max(left, 0)))
        table.append(row)
    return table


def _render(table: list[list[tuple[str, int, int, int, int]]]) -> str:
    """The table in rich's SQUARE box with lines between rows, cells centred."""
    ncols = len(table[0])
    widths = [max(len(t) + r + l for t, _, r, _, l in (row[j] for row in table)) for j in range(ncols)]
    hline = lambda a, b, c: a + b.join("─" * w for w in widths) + c
    out = [hline("┌", "┬", "┐")]
    for k, row in enumerate(table):
        height = max(top + 1 + bottom for _, top, _, bottom, _ in row)
        cells = []
        for (text, top, right, bottom, left), w in zip(row, widths):
            inner = w - left - right
            pad_l = (inner - len(text)) // 2
            line = " " * left + " " * pad_l + text + " " * (inner - len(text) - pad_l) + " " * right
            cells.append([" " * w] * top + [line] + [" " * w] * (height - top - 1))
        for r in range(height):
            out.append("│" + "│".join(c[r] for c in cells) + "│")
        if k < len(table) - 1:
            out.append(hline("├", "┼", "┤"))
    out.append(hline("└", "┴", "┘"))
    return "\n".join(out)


def visualize_sharding(shape: Sequence[int], sharding: Any, *, use_color: bool = True,
                       scale: float = 1., min_width: int = 9, max_width: int = 80,
                       color_map: Any = None) -> None:
    """Draws how ``sharding`` splits an array of ``shape`` over devices
    (``jax.debug.visualize_sharding``), as JAX's text without colour: tinyxla draws no
    colours (``use_color``, ``color_map`` are ignored) and needs no ``rich``."""
    if len(shape) > 2 or len(shape) < 1:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    sys.stdout.write(_render(_layout(shape, sharding, scale, min_width, max_width)) + "\n\n")


def inspect_array_sharding(value: Any, *, callback: Callable[[Any], None]) -> None:
    """Calls ``callback`` with ``value``'s sharding (``jax.debug.inspect_array_sharding``);
    inside staged code, with the sharding of the value the program holds when it runs."""
    if isinstance(value, core.Tracer):
        debug_callback(lambda v: callback(v.sharding), value)
    else:
        callback(value.sharding)


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """``visualize_sharding`` of ``arr``'s shape and sharding
    (``jax.debug.visualize_array_sharding``)."""
    inspect_array_sharding(arr, callback=lambda s: visualize_sharding(arr.shape, s, **kwargs))
