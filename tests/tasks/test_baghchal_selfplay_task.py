"""The Baghchal loop's self-play knobs reach its games: the playout cap keeps a row only for a fully
searched move, and `temperature_plies` samples the opening by visits and then plays the most visited;
`cpu_bf16` reaches its training and its self-play's conv path (float32 without it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gocore.nn.baghchal_net import UniformBaghchalEvaluator
from gocore.search.baghchal_selfplay import play_games
from tasks.app.baghchal_settings import BaghchalLoopSettings
from tasks.baghchal import play_batch, selfplay_config, train_config


def settings(**changes) -> BaghchalLoopSettings:
    return BaghchalLoopSettings(**{"loop": "knobs", "games": 4, "games_per_task": 4, "sims": 8, "max_plies": 40,
                                   **changes})


def test_the_playout_cap_keeps_rows_of_full_searches_only(tmp_path: Path):
    capped = play_batch(settings(full_search_prob=0.3, fast_sims=2), "uniform", 1, 7, 4, str(tmp_path / "a"))
    full = play_batch(settings(), "uniform", 1, 7, 4, str(tmp_path / "b"))
    assert 0 < capped["full_searches"] < 0.6 * capped["positions"]
    assert capped["rows"] == 8 * capped["full_searches"]
    assert full["full_searches"] == full["positions"] and full["rows"] == 8 * full["positions"]


def test_temperature_plies_sample_the_opening_then_the_most_visited_is_played():
    config = selfplay_config(settings(sims=32, temperature_plies=4))
    assert config.search.temperature_moves == 4
    games = play_games(UniformBaghchalEvaluator(), config, 4, seed=3)
    opening = [game.pis[i][game.actions[i]] < game.pis[i].max() for game in games for i in range(4)]
    later = [game.pis[i][game.actions[i]] == game.pis[i].max() for game in games for i in range(4, len(game.actions))]
    assert any(opening), "no opening move was sampled away from the most visited"
    assert all(later) and len(later) > 40
    assert np.isclose(games[0].pis[5].sum(), 1.0)


def test_cpu_bf16_reaches_training_and_a_rerun_may_change_it():
    from tasks.app.baghchal_settings import ADDED_LATER, BAGHCHAL_RESUMABLE

    assert not train_config(settings(), 3, 100, "cpu").cpu_bf16
    assert train_config(settings(cpu_bf16=True), 3, 100, "cpu").cpu_bf16
    assert "cpu_bf16" in BAGHCHAL_RESUMABLE and ADDED_LATER["cpu_bf16"] is False  # older loops trained in float32


def test_self_play_runs_float32_unless_cpu_bf16_asks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from gocore.nn import baghchal_net, conv_paths
    from storage.checkpoints import save_model

    monkeypatch.setattr(conv_paths, "_cpu_does_bf16", lambda: True)
    monkeypatch.delenv("GOZERO_CPU_BF16", raising=False)
    monkeypatch.setattr(conv_paths, "measure_paths", lambda net, *args, paths=None, **kwargs: {
        path: {"bf16": 9.0, "channels_last": 5.0}.get(path, 1.0) for path in paths or conv_paths.candidate_paths()})
    used: list[str] = []
    monkeypatch.setattr(baghchal_net.BaghchalNetEvaluator, "evaluate", lambda self, positions: used.append(
        self.conv_path) or UniformBaghchalEvaluator().evaluate(positions))
    net = baghchal_net.build(baghchal_net.net_config("tiny"))
    model = str(save_model(tmp_path / "net", net, net.config.to_dict()))
    paths = {}
    for name, bf16 in (("default", False), ("cpu_bf16", True)):
        used.clear()
        play_batch(settings(games=1, games_per_task=1, max_plies=4, cpu_bf16=bf16), model, 1, 0, 1, str(tmp_path / name))
        paths[name] = set(used)
    assert paths == {"default": {"channels_last"}, "cpu_bf16": {"bf16"}}
