"""benchmarks/paired.py pairs two matches game by game: the same openings and colours, or a refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.paired import main, paired_rows
from gocore.play.match import MatchConfig
from storage import layout
from tasks.app.evaluate import MatchSettings, play_match_here


def play(data: Path, match_id: str, black: str, seed: int = 0) -> None:
    settings = MatchSettings(black, "random", 6, 4, MatchConfig(size=5, seed=seed, opening=2))
    play_match_here(str(layout.match_dir(data, match_id)), settings)


def test_two_matches_from_the_same_openings_pair_and_others_are_refused(tmp_path: Path, capsys):
    play(tmp_path, "uct", "uct-4")
    play(tmp_path, "random", "random")
    play(tmp_path, "other-openings", "random", seed=5)
    scores_uct, scores_random, clusters = paired_rows(tmp_path, "uct", "random")
    assert len(scores_uct) == len(scores_random) == 6 and len(set(clusters)) <= 3  # an opening's two colours
    assert main(["--data-dir", str(tmp_path), "uct", "random"]) == 0
    assert f"A - B: {(sum(scores_uct) - sum(scores_random)) / 6:+.1%}" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="game 0 is not the same game start"):
        paired_rows(tmp_path, "uct", "other-openings")
