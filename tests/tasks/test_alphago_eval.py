"""The evaluation round robin's roster and game counts (tasks/alphago_eval.py)."""

from __future__ import annotations

from pathlib import Path

from tasks.alphago_eval import eval_players, round_robin
from tasks.app.alphago_settings import AlphaGoSettings
from tasks.app.models import ModelRef


def _nets() -> dict[str, ModelRef]:
    return {family: ModelRef(f"gozero-9x9-{family}", 1)
            for family in ("policy", "rl", "value", "rollout")}


def test_key_pairs_play_key_games_and_every_other_pair_eval_games(tmp_path: Path) -> None:
    settings = AlphaGoSettings(eval_games=10, key_games=100, eval_sims=(10, 50), uct_sims=100, gnugo_levels=(1,))
    players = eval_players(settings, _nets(), has_gnugo=True)
    games = {(settings_.black, settings_.white): settings_.games for _, settings_ in round_robin(settings, players, tmp_path)}
    by_label = {p.spec: p.label for p in players}
    keyed = {tuple(sorted((by_label[b], by_label[w]))) for (b, w), n in games.items() if n == 100}
    assert keyed == {("alphago-10-r1", "sl"), ("alphago-10-r1", "uct-100"), ("alphago-50-r1", "sl"),
                     ("alphago-50-r1", "uct-100")}
    assert sum(1 for n in games.values() if n == 10) == len(games) - 4


def test_without_key_games_every_pair_plays_eval_games(tmp_path: Path) -> None:
    settings = AlphaGoSettings(eval_games=12, eval_sims=(10,), gnugo_levels=())
    pairs = round_robin(settings, eval_players(settings, _nets(), has_gnugo=False), tmp_path)
    assert {match.games for _, match in pairs} == {12}
