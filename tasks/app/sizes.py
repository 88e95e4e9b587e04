"""One board size per command: the size its sources, players, models and datasets name, checked
against the --size the user gave, before any work starts (issue #28).

    size = resolve_size(size, black, white)          # None given: the players' size, else 9
    resolve_size(9, "gnugo-19x19:level=0,games=3")   # SizeError: --size 9 contradicts gnugo-19x19:... (19x19)

What a single spec names is `size_of` (storage.sizes reads names and small JSON files, never MLflow
or torch: ``models:/gozero-13x13@champion`` costs a regular expression).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from gocore.errors import GozeroError
from storage.sizes import dataset_size, local_game_sizes, model_size, source_size

DEFAULT_SIZE = 9
"""The board size of a command whose --size is not given and whose inputs name none."""


class SizeError(GozeroError, ValueError):
    """A --size that contradicts what a source, model or dataset names, or inputs of different sizes."""


def size_of(spec: str) -> int | None:
    """The board size a spec names: an ingest source (``gnugo-NxN:...``, ``cgos-9x9:...``), a model
    (``models:/gozero-NxN...``, a model directory), an AlphaGo player over named nets (its policy's), a
    net at its own simulations (``alphazero-N:MODEL``: MODEL's); None for anything that plays or holds
    any size (random, uct, gnugo-5, a URL of SGF files...)."""
    if spec.partition(":")[0].partition("-")[0] in ("alphago", "alphazero"):
        from tasks.app.players import parse_player  # a malformed spec is PlayerError, as it would be later

        sizes = [size for model in parse_player(spec).command if (size := size_of(model)) is not None]
        return sizes[0] if sizes else None
    size = model_size(spec)
    return size if size is not None else source_size(spec)


def resolve_size(given: int | None, *specs: str | None, datasets: Iterable[Path] = (),
                 option: str = "--size") -> int:
    """`given` if every spec (and dataset) that names a size names it; with None given, the size they
    name, else DEFAULT_SIZE. SizeError, in one line, if `given` contradicts one or two disagree."""
    named = [(spec, size) for spec in specs if spec and (size := size_of(spec)) is not None]
    named += [(f"dataset {path.name}", size) for path in datasets if (size := dataset_size(path)) is not None]
    for spec, size in named:
        if given is not None and size != given:
            raise SizeError(f"{option} {given} contradicts {spec} ({size}x{size})")
    if len({size for _, size in named}) > 1:
        (first, a), (second, b) = next((one, two) for one in named for two in named if one[1] != two[1])
        raise SizeError(f"{first} ({a}x{a}) and {second} ({b}x{b}) are of different board sizes: give one size")
    if given is not None:
        return given
    return named[0][1] if named else DEFAULT_SIZE


def resolve_ingest_size(given: int | None, sources: Iterable[str], data: Path | None = None) -> int:
    """The board size an ingest keeps: `given` (games of other sizes are refused one by one, with
    their reason); else the one size its sources name (GNU Go, catalogs) and its local games say
    (folders, archives, SGF files: their SZ), else DEFAULT_SIZE. Sources of several sizes without
    `given`: SizeError naming the sizes found and their games."""
    sources = list(sources)
    if given is not None:
        return resolve_size(given, *sources)
    found: dict[int, int] = {}
    if any(size_of(source) for source in sources):
        found[resolve_size(None, *sources)] = 0  # named by the sources (SizeError if they disagree)
    for source in sources:
        for size, games in (local_game_sizes(source, data) or {}).items():
            found[size] = found.get(size, 0) + games
    if len(found) > 1:
        listed = ", ".join(f"{size}x{size} ({games:,} games)" if games else f"{size}x{size} (named)"
                           for size, games in sorted(found.items()) if size > 0)
        odd = f", {found[-1]:,} on rectangular boards" if -1 in found else ""
        raise SizeError(f"the sources hold games of several board sizes: {listed}{odd}; "
                        "give --size N to ingest the games of one size")
    only = next(iter(found), DEFAULT_SIZE)
    return only if only > 0 else DEFAULT_SIZE
