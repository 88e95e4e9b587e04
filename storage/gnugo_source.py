"""GNU Go self-play as a source of expert games: the source string and where its games live.

    gnugo-NxN:level=L,games=G[,seed=S][,opening=K]

N is the board size (5..19), L GNU Go's level (0..10), G how many games (at least 1), S the base
seed (default 0; game i's seeds come from S and i alone), K the random opening moves played before
GNU Go takes over (default 4, at most N*N/4). Keys are comma-separated, in any order, each once.
Example: ``gnugo-9x9:level=1,games=1000``. The games are generated, not fetched, so this source
needs no internet (`flows.ingest` generates them with `tasks.gnugo_games`).

    <data>/raw/gnugo-9x9-level=1-opening=4-seed=0/sgf/game-000017.sgf

The directory names everything that decides a game except G, so ``games=40`` after ``games=20``
reuses the first 20 and plays 20 more; each game is written atomically under a name made from its
index, so a killed run resumes where it stopped and a rerun plays nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gocore.errors import GozeroError
from storage.atomic import write_bytes
from storage.layout import raw_dir

PREFIX = "gnugo-"
"""Every GNU Go source string starts with this."""
_FORM = re.compile(r"^gnugo-(\d+)x(\d+)(?::(.*))?$")
_KEYS = ("level", "games", "seed", "opening")
MIN_SIZE, MAX_SIZE = 5, 19
MAX_LEVEL = 10
DEFAULT_OPENING = 4
EXAMPLE = "gnugo-9x9:level=1,games=100"


class GnugoSourceError(GozeroError, ValueError):
    """A GNU Go source string that breaks the grammar; `reason` says which rule."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class GnugoSource:
    """What a ``gnugo-NxN:...`` source string asks for."""

    size: int
    """Board size N."""
    level: int
    """GNU Go's level, 0..10 (both sides)."""
    games: int
    """Games to have: indices 0..games-1."""
    seed: int = 0
    """Base seed: game i's engine seeds and opening come from (seed, i)."""
    opening: int = DEFAULT_OPENING
    """Random moves on the board's inner points before GNU Go plays, so that games differ."""

    @property
    def name(self) -> str:
        """Directory name under ``<data>/raw/``: everything that decides a game, not the count."""
        return f"gnugo-{self.size}x{self.size}-level={self.level}-opening={self.opening}-seed={self.seed}"

    @property
    def text(self) -> str:
        """The canonical source string."""
        return (f"gnugo-{self.size}x{self.size}:level={self.level},games={self.games},seed={self.seed},"
                f"opening={self.opening}")


def is_gnugo_source(text: str) -> bool:
    """Whether `text` means a GNU Go source (well formed or not: `parse_gnugo_source` says)."""
    return text.strip().lower().startswith(PREFIX) and not Path(text.strip()).exists()


def parse_gnugo_source(text: str) -> GnugoSource:
    """The `GnugoSource` of ``gnugo-NxN:level=L,games=G[,seed=S][,opening=K]``; else GnugoSourceError."""
    match = _FORM.match(text.strip().lower())
    if match is None or match.group(1) != match.group(2):
        raise GnugoSourceError("bad-form", f"{text!r}: a GNU Go source is gnugo-NxN:level=L,games=G"
                                           f"[,seed=S][,opening=K], e.g. {EXAMPLE}")
    size = int(match.group(1))
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise GnugoSourceError("bad-size", f"{text!r}: board size {size} is outside {MIN_SIZE}..{MAX_SIZE}")
    values = _key_values(text, match.group(3) or "")
    for key in ("level", "games"):
        if key not in values:
            raise GnugoSourceError("missing-key", f"{text!r} needs {key}=..., e.g. {EXAMPLE}")
    source = GnugoSource(size, **values)
    _check_ranges(text, source)
    return source


def _key_values(text: str, body: str) -> dict[str, int]:
    values: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in body.split(","))):
        key, equals, value = (part.strip() for part in item.partition("="))
        if key not in _KEYS:
            raise GnugoSourceError("unknown-key", f"{text!r}: unknown key {key!r}; "
                                                  f"the keys are {', '.join(_KEYS)}")
        if key in values:
            raise GnugoSourceError("repeated-key", f"{text!r}: {key} is given twice")
        if not equals or not re.fullmatch(r"-?\d{1,9}", value):
            raise GnugoSourceError("bad-value", f"{text!r}: {key} takes a whole number, like {key}=1")
        values[key] = int(value)
    return values


def _check_ranges(text: str, source: GnugoSource) -> None:
    if not 0 <= source.level <= MAX_LEVEL:
        raise GnugoSourceError("bad-level", f"{text!r}: level {source.level} is outside 0..{MAX_LEVEL}")
    if source.games <= 0:
        raise GnugoSourceError("bad-games", f"{text!r}: games must be at least 1")
    if source.seed < 0:
        raise GnugoSourceError("bad-seed", f"{text!r}: seed must be 0 or more")
    if not 0 <= source.opening <= source.size ** 2 // 4:
        raise GnugoSourceError("bad-opening", f"{text!r}: opening {source.opening} is outside "
                                              f"0..{source.size ** 2 // 4} on {source.size}x{source.size}")


def games_dir(data: Path, source: GnugoSource) -> Path:
    """Where the source's SGF files are written (the ingest flow encodes them from here)."""
    return raw_dir(data, source.name) / "sgf"


def game_path(data: Path, source: GnugoSource, index: int) -> Path:
    """The SGF file of game `index`."""
    return games_dir(data, source) / f"game-{index:06d}.sgf"


def missing_games(data: Path, source: GnugoSource) -> list[int]:
    """Indices below `source.games` whose SGF file is not written yet."""
    return [index for index in range(source.games) if not game_path(data, source, index).exists()]


def game_files(data: Path, source: GnugoSource) -> list[str]:
    """The SGF files of games 0..games-1 (not more: the directory may hold an earlier, larger run)."""
    return [str(game_path(data, source, index)) for index in range(source.games)]


def write_game(data: Path, source: GnugoSource, index: int, sgf_text: str) -> Path:
    """Write game `index` atomically: the file appears complete or not at all."""
    path = game_path(data, source, index)
    write_bytes(path, sgf_text.encode("utf-8"))
    return path
