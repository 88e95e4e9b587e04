"""The inference device travels with the settings to the evaluator of every stage (issue #28):
self-play tasks, match players, the AlphaGo RL stage and its value games. Run on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gocore.nn.nets import NetConfig, build_net
from gocore.play.match import MatchConfig
from tasks.app.evaluate import MatchSettings
from tasks.app.models import ModelRef
from tasks.app.players import PlayerSettings, build_player
from tasks.app.selfplay_settings import SelfPlaySettings
from tests.tasks.app.test_players import tiny_model

CPU = torch.device("cpu")


def test_selfplay_workers_default_to_the_cpu_and_the_device_is_not_recorded():
    assert SelfPlaySettings("uniform").device == "cpu"
    assert "device" not in SelfPlaySettings("uniform", device="cpu").recorded(4)


def test_a_selfplay_task_builds_its_evaluator_on_the_settings_device(tmp_path: Path, monkeypatch):
    import tasks.selfplay as selfplay

    built = []
    real = selfplay.load_evaluator

    def spy(*args, **kwargs):
        evaluator, version, encoder = real(*args, **kwargs)
        built.append(evaluator)
        return evaluator, version, encoder

    monkeypatch.setattr(selfplay, "load_evaluator", spy)
    settings = SelfPlaySettings(tiny_model(tmp_path / "dual"), 2, size=5, komi=2.5, max_moves=6, device="cpu")
    selfplay.play_shard(settings, 1, 0, 1, str(tmp_path / "data"))
    assert [evaluator.device for evaluator in built] == [CPU]


@pytest.mark.parametrize("family", ["dual", "policy"])
def test_a_match_player_runs_its_net_on_the_match_device(family, tmp_path: Path):
    match = MatchSettings("a", "b", 2, 4, MatchConfig(5, 7.5), device="cpu")
    assert match.player_settings().device == "cpu" and "device" not in match.to_dict()
    player = build_player(tiny_model(tmp_path / family, family), match.player_settings())
    assert player.make(0).evaluator.device == CPU


def test_alphago_players_run_both_nets_on_the_device(tmp_path: Path):
    policy, value = tiny_model(tmp_path / "policy", "policy"), tiny_model(tmp_path / "value", "value")
    player = build_player(f"alphago:{policy},{value}", PlayerSettings(size=5, sims=4, device="cpu"))
    evaluator = player.make(0).evaluator
    assert evaluator.device == CPU
    assert {p.device for net in (evaluator.policy_net, evaluator.value_net) for p in net.parameters()} == {CPU}


class Stop(Exception):
    """Ends the RL stage at its first game: the devices are known by then."""


def test_the_rl_stage_plays_and_learns_on_its_device(tmp_path: Path, monkeypatch):
    import tasks.reinforce as reinforce
    from tasks.app.alphago_settings import AlphaGoSettings

    config = NetConfig(board_size=5, in_planes=17, encoder="agz17", blocks=1, filters=8, family="policy")
    monkeypatch.setattr(reinforce, "load_net", lambda uri, data: build_net(config))
    monkeypatch.setattr(reinforce, "_resume", lambda *args: (0, [1], {}))
    seen = []

    def games(learner, opponent, *args):
        seen.extend({p.device for p in net.parameters()} for net in (learner, opponent))
        raise Stop

    monkeypatch.setattr(reinforce, "play_policy_games", games)
    with pytest.raises(Stop):
        reinforce.train_rl_policy.fn(AlphaGoSettings(size=5), ModelRef("sl", 1), str(tmp_path), device="cpu")
    assert seen == [{CPU}, {CPU}]


def test_a_device_the_rl_stage_cannot_have_is_refused_before_any_game(tmp_path: Path):
    import tasks.reinforce as reinforce
    from gocore.nn.device import DeviceError
    from tasks.app.alphago_settings import AlphaGoSettings

    with pytest.raises(DeviceError):
        reinforce.train_rl_policy.fn(AlphaGoSettings(size=5), ModelRef("sl", 1), str(tmp_path), device="tpu")
