"""Key-path entries of pytrees and their printing (mirrors ``jax.tree_util.DictKey``,
``SequenceKey``, ``GetAttrKey``, ``FlattenedIndexKey`` and ``keystr``).

A key path is a tuple of entries naming the way from a tree's root to one of its leaves:
``tree['b'][1].x`` is ``(DictKey('b'), SequenceKey(1), GetAttrKey('x'))``. The entries are
immutable, compare and hash by class and value, and pickle, as JAX's (C++) ones do.
"""
from __future__ import annotations

from typing import Any, TypeVar

KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]


class _KeyEntry:
    """One entry of a key path: a single immutable field named by ``__match_args__``."""

    __slots__ = ("_value",)
    __match_args__: tuple[str, ...] = ()
    _field_type: type | None = None  # the type the constructor accepts (None: any)

    def __init__(self, value: Any):
        if self._field_type is not None and not isinstance(value, self._field_type):
            field = self.__match_args__[0]
            raise TypeError(
                "__init__(): incompatible function arguments. The following argument types "
                f"are supported:\n    1. __init__(self, {field}: {self._field_type.__name__}) "
                f"-> None\n\nInvoked with types: {type(self).__name__}, {type(value).__name__}")
        object.__setattr__(self, "_value", value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"property of '{type(self).__name__}' object has no setter")

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and other._value == self._value

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__match_args__[0]}={self._value!r})"

    def __reduce__(self):
        return type(self), (self._value,)


class DictKey(_KeyEntry):
    """The key of a mapping's child: prints as ``['a']`` (``jax.tree_util.DictKey``)."""

    __slots__ = ()
    __match_args__ = ("key",)

    @property
    def key(self) -> Any:
        return self._value

    def __str__(self) -> str:
        return f"[{self._value!r}]"


class SequenceKey(_KeyEntry):
    """The index of a sequence's child: prints as ``[0]`` (``jax.tree_util.SequenceKey``)."""

    __slots__ = ()
    __match_args__ = ("idx",)
    _field_type = int

    @property
    def idx(self) -> int:
        return self._value

    def __str__(self) -> str:
        return f"[{self._value}]"


class GetAttrKey(_KeyEntry):
    """The attribute holding a child (namedtuples, dataclasses): prints as ``.x``
    (``jax.tree_util.GetAttrKey``)."""

    __slots__ = ()
    __match_args__ = ("name",)
    _field_type = str

    @property
    def name(self) -> str:
        return self._value

    def __str__(self) -> str:
        return f".{self._value}"


class FlattenedIndexKey(_KeyEntry):
    """The position of a child among the flattened children of a node registered without
    keys: prints as ``[<flat index 0>]`` (``jax.tree_util.FlattenedIndexKey``)."""

    __slots__ = ()
    __match_args__ = ("key",)
    _field_type = int

    @property
    def key(self) -> int:
        return self._value

    def __str__(self) -> str:
        return f"[<flat index {self._value}>]"


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """The key path as a string (``jax.tree_util.keystr``): ``['a'][0].x`` by default;
    with ``simple=True`` each entry is its bare key (``a``, ``0``, ``x``), joined by
    ``separator``. Entries that are not key entries print with ``str``."""
    if simple:
        return separator.join(str(k._value) if isinstance(k, _KeyEntry) else str(k)
                              for k in keys)
    return separator.join(map(str, keys))
