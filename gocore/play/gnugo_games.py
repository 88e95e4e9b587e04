"""GNU Go playing itself: expert games for AlphaGo's supervised stage, with no internet.

Game `index` of a run with base seed S (`play_gnugo_game`): each side is its own GNU Go process
with its own ``--seed`` (`match.game_seeds(S, index)`); the first `opening` moves are random legal
points off the first two lines, drawn from the same seeds, so that games differ; then GNU Go plays
both sides (Chinese rules, positional superko, komi 7.5, ``--capture-all-dead``, ``--never-resign``)
until both pass. `match.play_match_game` plays it: our rules engine checks every move and counts
the final position by Tromp-Taylor area, and plays a cleanup phase (``kgs-genmove_cleanup``) when
GNU Go's own count disagrees, so the RE of the record is always our count of its final position.
The opening moves are ordinary moves of the record; a comment on the last one says so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from gocore.errors import GozeroError
from gocore.play.gtp_client import GNUGO_TROMP_TAYLOR, gnugo_command
from gocore.play.match import GtpAgent, MatchConfig, game_seeds, play_match_game
from gocore.play.openings import ScriptedOpening, opening_moves
from gocore.rules.sgf import GameRecord


class GnugoGameError(GozeroError, RuntimeError):
    """GNU Go did not finish a game (it crashed, timed out or played an illegal move)."""


@dataclass(frozen=True)
class GnugoGameConfig:
    """How GNU Go plays its games against itself."""

    size: int = 9
    """Board size N."""
    level: int = 1
    """GNU Go's level, 0..10, for both sides."""
    komi: float = 7.5
    """Komi for white (area scoring)."""
    opening: int = 4
    """Random moves played before GNU Go takes over."""
    seed: int = 0
    """Base seed: game i depends on (seed, i) alone."""
    timeout: float = 120.0
    """Seconds GNU Go may take for one GTP command (level-10 moves can take several)."""
    binary: str | None = None
    """The gnugo program; default: on PATH, else /usr/games/gnugo."""

    @property
    def label(self) -> str:
        """The player name written to PB and PW."""
        return f"GNU Go level {self.level}"


def play_gnugo_game(config: GnugoGameConfig, index: int) -> GameRecord:
    """Game `index`: GNU Go against itself after a random opening, counted by Tromp-Taylor; the
    SGF record (RE is our area count; KM and RU Chinese set). GnugoGameError if it did not finish."""
    seed_black, seed_white = game_seeds(config.seed, index)
    rng = np.random.default_rng([config.seed, index])
    opening = dict(enumerate(opening_moves(config.size, config.opening, rng, config.komi)))
    base = [*gnugo_command(config.level, config.size, config.komi, config.binary), *GNUGO_TROMP_TAYLOR,
            "--never-resign"]
    with (GtpAgent([*base, "--seed", str(seed_black)], config.label, config.timeout) as black,
          GtpAgent([*base, "--seed", str(seed_white)], config.label, config.timeout) as white):
        # Each engine plays the scripted opening moves of its colour (told them by `observe`), then its own.
        # Index 0 of the match gives black to player A: colours do not alternate between games.
        played = play_match_game(0, ScriptedOpening(black, opening), ScriptedOpening(white, opening),
                                 MatchConfig(config.size, config.komi, opening=0))
    if not played.game.is_counted:
        raise GnugoGameError(f"GNU Go level {config.level} did not finish game {index} "
                             f"({played.game.reason}: {played.game.detail or played.game.result})")
    record = played.record()
    if opening:
        note = f"moves 1-{len(opening)}: random opening of game {index}, seed {config.seed}"
        last = len(opening) - 1
        comments = {**record.comments, last: "\n".join(filter(None, (note, record.comments.get(last))))}
        record = dataclasses.replace(record, comments=comments)
    return record
