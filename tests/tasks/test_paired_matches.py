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


def test_the_first_games_of_a_longer_match_pair_with_a_shorter_one(tmp_path: Path, capsys):
    play(tmp_path, "uct", "uct-4")
    settings = MatchSettings("random", "random", 4, 4, MatchConfig(size=5, seed=0, opening=2))
    play_match_here(str(layout.match_dir(tmp_path, "short")), settings)  # games 0..3 of the same starts
    with pytest.raises(SystemExit, match="not have the same games"):
        paired_rows(tmp_path, "uct", "short")
    scores_uct, scores_short, clusters = paired_rows(tmp_path, "uct", "short", first=4)
    assert len(scores_uct) == len(scores_short) == len(clusters) == 4
    assert scores_uct == paired_rows(tmp_path, "uct", "uct", first=4)[0]
    with pytest.raises(SystemExit, match="match short lacks game 4 of the first 6"):
        paired_rows(tmp_path, "uct", "short", first=6)
    with pytest.raises(SystemExit, match="at least 1"):
        paired_rows(tmp_path, "uct", "short", first=0)
    assert main(["--data-dir", str(tmp_path), "--first", "4", "uct", "short"]) == 0
    assert "of 4 (" in capsys.readouterr().out


def test_a_match_in_another_data_dir_pairs_with_one_here(tmp_path: Path, capsys):
    """An A/B arm trained in a copy of a run's data dir pairs its match with the original run's."""
    arm, run = tmp_path / "arm", tmp_path / "run"
    play(arm, "uct", "uct-4")
    play(run, "random", "random")
    with pytest.raises(SystemExit, match="match random has no finished game in"):
        paired_rows(arm, "uct", "random")
    scores_uct, scores_random, _ = paired_rows(arm, "uct", "random", data_b=run)
    assert scores_random == paired_rows(run, "random", "random")[0] and len(scores_uct) == 6
    assert main(["--data-dir", str(arm), "--data-dir-b", str(run), "uct", "random"]) == 0
    assert f"A - B: {(sum(scores_uct) - sum(scores_random)) / 6:+.1%}" in capsys.readouterr().out


def test_a_match_under_way_pairs_on_the_games_both_have_finished(tmp_path: Path, capsys):
    from storage import matches

    play(tmp_path, "uct", "uct-4")
    play(tmp_path, "random", "random")
    under_way = layout.match_dir(tmp_path, "random")
    (under_way / matches.RESULTS).unlink()  # as before the match wrote its results: its game rows only
    for game in (1, 4):
        (under_way / matches.WORK_DIR / f"game-{game:05d}.json").unlink()
    with pytest.raises(SystemExit, match="not have the same games"):
        paired_rows(tmp_path, "uct", "random")
    scores_uct, scores_random, _ = paired_rows(tmp_path, "uct", "random", common=True)
    assert len(scores_uct) == len(scores_random) == 4
    assert scores_uct == [paired_rows(tmp_path, "uct", "uct")[0][g] for g in (0, 2, 3, 5)]
    assert main(["--data-dir", str(tmp_path), "--common", "uct", "random"]) == 0
    assert "of 4 (" in capsys.readouterr().out
