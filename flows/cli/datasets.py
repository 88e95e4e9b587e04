"""`gozero datasets list|show`: the encoded datasets of a data dir, read from their manifests.

A typer sub-app that flows/cli/root.py mounts as ``datasets``. It reads `<data>/datasets/*/manifest.json`
and the quarantine through `storage.datasets` only: no Prefect, no torch, so it answers at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.common import DATA_DIR_HELP, console, fail

datasets_app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                           help="Encoded datasets: list them, show one with its refused games.")
DataDir = Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)]


def dataset_manifests(data: Path) -> list[tuple[str, dict[str, Any] | None]]:
    """(name, manifest) of every dataset folder in `data`, sorted by name; None for a folder
    without a manifest (an ingest that has not finished)."""
    from storage import datasets, layout

    root = layout.datasets_root(data)
    found = []
    for folder in sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else []:
        try:
            found.append((folder.name, datasets.read_manifest(folder)))
        except datasets.DatasetError:
            found.append((folder.name, None))
    return found


@datasets_app.command("list")
def list_datasets(data_dir: DataDir = None) -> None:
    """Every dataset: board size, encoder, augmentation, games accepted and refused, rows, sources."""
    from storage import layout

    data = layout.data_dir(data_dir)
    facts = dataset_manifests(data)
    if not facts:
        console.print(f"no datasets yet in {data}")
        return
    for name, manifest in facts:
        console.print(_line(name, manifest), soft_wrap=True)


@datasets_app.command("show")
def show_dataset(
    name: Annotated[str, typer.Argument(help="the dataset's name (gozero datasets list)")],
    data_dir: DataDir = None,
) -> None:
    """One dataset's facts, its options and sources, and why each refused game was refused."""
    from storage import datasets, layout

    data = layout.data_dir(data_dir)
    folder = layout.dataset_dir(data, name)
    if not folder.is_dir():
        known = [known for known, _ in dataset_manifests(data)]
        raise fail(f"no dataset {name!r} in {data}" + (f"; datasets: {', '.join(known)}" if known else ""))
    try:
        manifest = datasets.read_manifest(folder)
    except datasets.DatasetError as error:
        raise fail(str(error)) from None
    console.print(_line(name, manifest), soft_wrap=True)
    options = manifest.get("options", {})
    console.print("options: " + ", ".join(f"{key}={value}" for key, value in sorted(options.items())), soft_wrap=True)
    console.print(f"shards: {len(manifest.get('shards', []))}, {manifest.get('bytes', 0) / 1e6:.1f} MB, "
                  f"in {folder}", soft_wrap=True)
    refused = datasets.refusal_counts(folder)
    console.print("refused games: " + (", ".join(f"{reason} {count}" for reason, count in refused.items())
                                       if refused else "none"), soft_wrap=True)


def _line(name: str, manifest: dict[str, Any] | None) -> str:
    if manifest is None:
        return f"{name}: not finished (rerun its ingest to complete it)"
    options = manifest.get("options", {})
    return (f"{name}: {options.get('size', '?')}x{options.get('size', '?')}, {manifest.get('encoder', '?')}, "
            f"{manifest.get('augment', '?')}, {manifest.get('games_accepted', 0):,} games "
            f"({manifest.get('games_refused', 0):,} refused), {manifest.get('rows', 0):,} rows, "
            f"from {', '.join(manifest.get('sources', []))}")
