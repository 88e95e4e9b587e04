"""`gozero models list|show|promote`: the model registry from the command line.

A typer sub-app that flows/cli/root.py mounts as ``models``. It reads and moves the registry through
`storage.registry` only, imported inside each command so ``gozero --help`` stays fast. Errors a
user can fix print one red line and exit 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Column, Table

from flows.cli.common import DATA_DIR_HELP, console, fail, fit_columns

models_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                         help="Registered models: list them, show one, promote a champion.")
DataDir = Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)]


@models_app.command("list")
def list_models(
    size: Annotated[int | None, typer.Option(min=5, max=19, help="only this board size")] = None,
    data_dir: DataDir = None,
) -> None:
    """Every registered gozero model version: family, aliases, generation, key metrics, strength
    (a rough rank from the Elo ladder's GNU Go anchors, with the games behind it)."""
    from storage.registry_records import local_versions

    versions = local_versions(size, data_dir)  # a SQLite registry is read without importing MLflow
    if versions is None:
        from storage import registry

        try:
            versions = [v for name in registry.list_models(size, data_dir)
                        for v in registry.list_versions(name, data_dir)]
        except registry.RegistryError as error:
            raise fail(str(error)) from None
    if not versions:
        console.print("no registered gozero models yet" + (f" for {size}x{size}" if size else ""))
        return
    table = Table(Column("name", no_wrap=True), Column("version", no_wrap=True), "family", "aliases",
                  "gen", "created", Column("key metrics", no_wrap=True), "strength", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    for v in versions:
        metrics = "\n".join(f"{k}={value}" for k, value in v.key_metrics().items())
        table.add_row(v.name, str(v.version), v.tags.get("family", "?"), ", ".join(v.aliases),
                      v.tags.get("generation", ""), f"{v.created:%Y-%m-%d}", metrics, v.tags.get("strength", ""))
    # A pipe or file has no width: never cut metric names to rich's 80-column guess. A narrow
    # terminal loses the columns it can best do without.
    table, width = fit_columns(table, console.width if console.is_terminal else None, ("created", "gen", "family"))
    Console(width=width, force_terminal=console.is_terminal).print(table)


@models_app.command()
def show(
    uri_or_name: Annotated[str, typer.Argument(help="models:/NAME/VERSION, models:/NAME@ALIAS, or NAME")],
    version: Annotated[str | None,
                       typer.Argument(help="version or alias (default: champion, else latest)")] = None,
    data_dir: DataDir = None,
) -> None:
    """One version's aliases, source, tags, run params and metrics."""
    from storage import registry

    try:
        name, selector = (registry.parse_model_uri(uri_or_name) if uri_or_name.startswith("models:/")
                          else (uri_or_name, version))
        info = registry.describe(name, selector, data_dir)
    except registry.RegistryError as error:
        raise fail(str(error)) from None
    console.print(f"[bold]{info.uri}[/]  aliases: {', '.join(info.aliases) or '-'}  "
                  f"created {info.created:%Y-%m-%d %H:%M:%S} UTC")
    console.print(f"source: {info.source}", soft_wrap=True)
    if info.run is not None:
        console.print(f"run: {info.run.run_id} ({info.run.status})")
    for title, values in (("tags", info.tags), ("params", info.run.params if info.run else {}),
                          ("metrics", info.run.metrics if info.run else {})):
        console.print(_key_value_table(title, values))
    if line := lineage(info.tags, data_dir):
        console.print(line, soft_wrap=True)


def lineage(tags: dict[str, str], data_dir: Path | None) -> str | None:
    """Whether the dataset a version was trained on is still that build (its content key, tagged at
    registration, against the manifest on disk); None for versions without a dataset key."""
    from storage import datasets, layout

    name, key = tags.get("dataset"), tags.get("dataset_key")
    if not name or not key:
        return None
    try:
        now = datasets.manifest_id(datasets.read_manifest(layout.dataset_dir(layout.data_dir(data_dir), name)))
    except (datasets.DatasetError, layout.LayoutError, OSError):
        return f"dataset {name}: not in this data dir (trained on its build {key})"
    if now == key:
        return f"dataset {name}: the build it was trained on ({key})"
    return (f"[yellow]dataset {name} has been rebuilt since this model was trained[/]: its key is now {now}, "
            f"the model's is {key}")


@models_app.command()
def promote(
    name: Annotated[str, typer.Argument(help="models:/NAME/VERSION, or a registered model's NAME, e.g. gozero-9x9")],
    version: Annotated[int | None, typer.Argument(help="version to make champion (with NAME)")] = None,
    reason: Annotated[str, typer.Option(help="why (recorded on the version)")] = ...,
    evidence: Annotated[list[str] | None,
                        typer.Option(help="KEY=VALUE to record, e.g. gate_win_rate=0.58; repeatable")] = None,
    data_dir: DataDir = None,
) -> None:
    """Move the alias `champion` to VERSION, recording the reason, evidence and previous champion."""
    from storage import registry
    from tasks.promotion import promote as promote_version

    try:
        if name.startswith("models:/"):
            name, selector = registry.parse_model_uri(name)
            if version is not None or not selector.isdigit():
                raise fail(f"give models:/{name}/VERSION alone (a version number, not an alias), or NAME VERSION")
            version = int(selector)
        elif version is None:
            raise fail(f"which version of {name}? e.g. gozero models promote {name} 3 (or models:/{name}/3)")
        # with PREFECT_API_URL set, the promotion event triggers the ladder deployment
        previous = promote_version(name, version, reason, _evidence(evidence or []), data_dir)
    except registry.RegistryError as error:
        raise fail(str(error)) from None
    if previous == version:
        console.print(f"{name}: version {version} already is the champion; nothing changed")
    else:
        was = "no champion" if previous is None else f"version {previous}"
        console.print(f"{name}: champion is now version {version} (was {was})")


def _evidence(items: list[str]) -> dict[str, str]:
    """{key: value} of KEY=VALUE strings; exits with one line on anything else."""
    facts = {}
    for item in items:
        key, equals, value = item.partition("=")
        if not key or not equals:
            raise fail(f"--evidence takes KEY=VALUE, got {item!r}")
        facts[key.strip()] = value.strip()
    return facts


def _key_value_table(title: str, values: dict) -> Table:
    """A two-column table of `values`, sorted by key."""
    table = Table("key", "value", title=title, title_justify="left")
    for key in sorted(values):
        table.add_row(key, str(values[key]))
    return table
