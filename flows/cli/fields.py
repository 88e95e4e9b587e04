"""A settings dataclass's fields, defaults and docstrings, read from its source without importing it.

The CLI's options take their help text and shown default from the declaration itself (the field's
docstring, the string right under it), so a setting is documented once. Reading the source with
`ast` keeps `gozero --help` fast: importing `tasks.app.loop_settings` would import numba and MLflow.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import typer


@dataclass(frozen=True)
class Field:
    """One declared field: its name, its default as source text, its docstring's first paragraph."""

    name: str
    default: str
    doc: str


def _source(module: str) -> ast.Module:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(module)
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


@cache
def declared_fields(module: str, cls: str) -> dict[str, Field]:
    """The annotated fields of class `cls` in `module`, in declaration order."""
    (node,) = [item for item in _source(module).body if isinstance(item, ast.ClassDef) and item.name == cls]
    fields: dict[str, Field] = {}
    body = node.body
    for index, item in enumerate(body):
        if not isinstance(item, ast.AnnAssign) or not isinstance(item.target, ast.Name):
            continue
        following = body[index + 1] if index + 1 < len(body) else None
        doc = ""
        if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant) \
                and isinstance(following.value.value, str):
            doc = " ".join(following.value.value.split("\n\n")[0].split())
        default = "" if item.value is None else item.value.value if isinstance(item.value, ast.Constant) \
            and isinstance(item.value.value, str) else ast.unparse(item.value)
        fields[item.target.id] = Field(item.target.id, default, doc)
    return fields


@cache
def declared_keys(module: str, name: str) -> tuple[str, ...]:
    """The string keys of the dict literal assigned to `name` at the top of `module`."""
    for item in _source(module).body:
        target = item.target if isinstance(item, ast.AnnAssign) else \
            item.targets[0] if isinstance(item, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id == name and isinstance(item.value, ast.Dict):
            return tuple(key.value for key in item.value.keys if isinstance(key, ast.Constant))
    raise LookupError(f"{module}.{name} is not a dict literal")


def settings_epilog(fields: dict[str, Field], shown: set[str]) -> str:
    """Every field not already an option, as `--set` help: name, default and doc on one line each
    (click keeps the lines as they are after its no-rewrap marker)."""
    lines = [f"  {field.name} (default {field.default}): {field.doc}" for field in fields.values()
             if field.name not in shown]
    return "\b\nEvery other setting, with --set NAME=VALUE:\n" + "\n".join(lines)


def field_option(fields: dict[str, Field], name: str, *flags: str, **limits: Any) -> Any:
    """A typer option for settings field `name`: its docstring as help and its declared default shown
    (the option's own default stays None, so an option not given leaves the field to the settings;
    a default of None or none is not shown: the docstring says what it means)."""
    field = fields[name]
    shown = field.default if field.default not in ("", "None") else False
    return typer.Option(*flags, help=field.doc.replace("``", "'"), show_default=shown, **limits)
