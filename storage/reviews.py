"""Where `gozero review` writes: the annotated game and its win-rate graph, beside the game reviewed.

    GAME.sgf  ->  GAME-review.sgf   the game with comments, BM/TE marks and the best moves as variations
                  GAME-winrate.png  black's win rate after every move

An output directory, when given, takes both files instead. Both are written atomically, so a
review killed midway leaves the old files or none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from storage import atomic


@dataclass(frozen=True)
class ReviewPaths:
    """The two files of one review."""

    sgf: Path
    graph: Path


def review_paths(game: Path, out_dir: Path | None = None) -> ReviewPaths:
    """Where the review of `game` goes: beside it, or in `out_dir`."""
    where = game.parent if out_dir is None else out_dir
    return ReviewPaths(where / f"{game.stem}-review.sgf", where / f"{game.stem}-winrate.png")


def write_review(paths: ReviewPaths, sgf_text: str, graph_png: bytes) -> None:
    """Write the annotated SGF (UTF-8) and the graph, each atomically."""
    atomic.write_bytes(paths.sgf, sgf_text.encode("utf-8"))
    atomic.write_bytes(paths.graph, graph_png)
