"""Settings from text: ``name=value`` pairs read as typed changes of a settings dataclass.

One parser for every place a user (or a benchmark) changes a field by name: ``gozero train --set
value_weight=0.25``, ``benchmarks.strength --b "aux_heads=true,sims=32"``. The field's annotation
decides the type (``X | None`` accepts ``none``; booleans accept true/false/1/0/yes/no), and an unknown
name or a badly typed value is a ValueError that lists the fields there are.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable
from typing import Any


def dataclass_changes(cls: type, items: Iterable[str], split_commas: bool = False) -> dict[str, Any]:
    """``["lr=0.01", "aux_heads=true"]`` as typed changes of `cls`'s fields; with `split_commas`, an
    item may hold several (``"lr=0.01,aux_heads=true"``). A tuple field takes its elements separated
    by ``;`` (``expert=gnugo-9x9:level=1,games=800;gnugo-9x9:level=5,games=200``)."""
    hints = typing.get_type_hints(cls)
    fields = [field.name for field in dataclasses.fields(cls)]
    changes: dict[str, Any] = {}
    parts = (part for text in items for part in (text.split(",") if split_commas else [text]))
    for item in (part.strip() for part in parts):
        if not item:
            continue
        name, equals, value = (part.strip() for part in item.partition("="))
        if not equals or name not in fields:
            raise ValueError(f"{item!r} is not name=value with a field of {cls.__name__}: {', '.join(fields)}")
        changes[name] = typed_value(value, hints[name], name)
    return changes


def typed_value(value: str, kind: Any, name: str) -> Any:
    """`value` read as the annotation `kind` says; ValueError naming `name` if it cannot be."""
    options = typing.get_args(kind) if isinstance(kind, types.UnionType) else (kind,)
    if value.lower() == "none" and type(None) in options:
        return None
    kind = next(option for option in options if option is not type(None))
    if typing.get_origin(kind) is tuple:
        element = typing.get_args(kind)[0]
        return tuple(typed_value(part.strip(), element, name) for part in value.split(";") if part.strip())
    if kind is bool:
        if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"{name} is true or false, not {value!r}")
        return value.lower() in ("true", "1", "yes")
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a {getattr(kind, '__name__', kind)}, not {value!r}") from None
