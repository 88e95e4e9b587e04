"""The AlphaGo pipeline end to end on 5x5 in a real SQLite MLflow, crashed once inside every stage
(after a training checkpoint, between an RL snapshot's registration and its checkpoint, between
value batches, between match games) and rerun each time: every family registered once, nothing
played or registered twice, the evaluation rated on the shared ladder."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import ModuleType

import pytest
from prefect.task_runners import ThreadPoolTaskRunner

import storage.checkpoints
import storage.matches
import storage.selfplay
import tasks.reinforce
from flows.alphago import AlphaGoError, alphago, parse_stages
from storage import layout, loops, ratings, registry, run_dirs
from tasks.alphago import value_run
from tasks.app.alphago_settings import PRESETS
from tests.helpers import build_uct_dataset, read_artifact

SETTINGS = dataclasses.replace(PRESETS["tiny"], name="ag5", dataset="uct5", size=5, eval_sims=(2, 4), uct_sims=4)
STAGES = ("sl", "rollout", "rl", "value", "eval")


class PlantedCrash(Exception):
    """Stands for a process killed at this point."""


def crash_on_call(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str, call: int, mark: str = "") -> None:
    """Make the `call`-th call of module.name whose first argument contains `mark` raise
    PlantedCrash before doing anything."""
    original, calls = getattr(module, name), [0]

    def planted(*args, **kwargs):
        calls[0] += mark in str(args[0])
        if calls[0] == call and mark in str(args[0]):
            raise PlantedCrash(f"planted crash at call {call} of {name}")
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, planted)


def run(data: Path, stages: tuple[str, ...] = STAGES, settings=SETTINGS):
    return alphago.with_options(task_runner=ThreadPoolTaskRunner(max_workers=2))(settings, stages, str(data), "cpu")


@pytest.fixture(scope="module")
def crashed_and_resumed(tmp_path_factory: pytest.TempPathFactory, prefect_harness) -> tuple[Path, dict]:
    """The pipeline crashed once in each stage and rerun after each crash; what was seen between runs."""
    data = tmp_path_factory.mktemp("alphago") / "data"
    seen: dict = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
        build_uct_dataset(data.parent / "sgf", layout.dataset_dir(data, "uct5"), 12, size=5)
        crashes = [(storage.checkpoints, "save_training_checkpoint", 2, "ag5-policy"),  # sl: after a checkpoint
                   (storage.checkpoints, "save_model", 1, "rollout-"),  # rollout: trained, not yet saved
                   (tasks.reinforce, "_checkpoint", 2, ""),  # rl: snapshot 4 registered, its checkpoint not written
                   (storage.selfplay, "write_batch", 2, ""),  # value: after the first batch
                   (storage.matches, "write_game", 5, "")]  # eval: after four games
        for stage, (module, name, call, mark) in zip(STAGES, crashes):
            with pytest.MonkeyPatch.context() as planted:
                crash_on_call(planted, module, name, call, mark)
                with pytest.raises(PlantedCrash):
                    run(data)
            assert loops.read_step(data, SETTINGS.name, 0, stage) is None
            if stage == "value":
                seen["first_value_shard"] = _value_shards(data)
        seen["summary"] = run(data)
    return data, seen


def _value_shards(data: Path) -> dict[str, int]:
    directory = layout.selfplay_dir(data, 0, value_run(SETTINGS)).parent
    return {str(p.relative_to(directory)): p.stat().st_mtime_ns for p in directory.rglob("*.parquet")}


def own_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


def test_every_family_is_registered_once_with_champions_where_checks_passed(crashed_and_resumed,
                                                                            monkeypatch: pytest.MonkeyPatch):
    data, seen = crashed_and_resumed
    own_store(monkeypatch)
    stages = seen["summary"].stages
    assert list(stages) == list(STAGES)
    versions = {family: registry.list_versions(f"gozero-5x5-{family}", data)
                for family in ("policy", "rollout", "rl", "value")}
    assert {family: len(found) for family, found in versions.items()} == {"policy": 1, "rollout": 1, "rl": 3, "value": 1}
    assert [v.tags["iteration"] for v in versions["rl"]] == ["0", "2", "4"]
    assert all(v.tags["alphago"] == "ag5" for found in versions.values() for v in found)
    assert "champion" in versions["policy"][0].aliases and "champion" in versions["rollout"][0].aliases
    assert ("champion" in versions["rl"][-1].aliases) == stages["rl"]["check"]["passed"]
    assert ("champion" in versions["value"][0].aliases) == stages["value"]["check"]["passed"]
    assert stages["value"]["check"]["heldout_games"] == SETTINGS.value_heldout_games


def test_each_stage_resumed_where_it_crashed(crashed_and_resumed):
    data, seen = crashed_and_resumed
    stages = seen["summary"].stages
    result = run_dirs.read_result(run_dirs.run_dir(data, "ag5-policy"))
    assert 0 < result["start_step"] < SETTINGS.sl_steps and result["step"] == SETTINGS.sl_steps  # from a checkpoint
    # the rollout policy has no checkpoints (it trains in seconds): trained again, registered once
    assert stages["rollout"]["champion"] and stages["rollout"]["val_move_top1"] > stages["rollout"]["uniform_top1"]
    assert stages["rl"]["resumed_from"] == 2 and stages["rl"]["snapshots"] == [1, 2, 3]
    shards = _value_shards(data)
    assert len(shards) == 3 and all(shards[name] == stamp for name, stamp in seen["first_value_shard"].items())
    assert stages["value"]["value_rows"] == SETTINGS.value_games + SETTINGS.value_heldout_games


def test_the_round_robin_is_rated_on_the_shared_ladder_and_published(crashed_and_resumed,
                                                                     monkeypatch: pytest.MonkeyPatch):
    data, seen = crashed_and_resumed
    table = seen["summary"].table
    labels = {row.label for row in table.players}
    assert labels == {"alphago-2-r1", "alphago-4-r1", "sl", "rl", "value", "uct-4", "random"}  # r1: rollouts
    assert len(table.pairs) == 21 and all(pair.games == SETTINGS.eval_games for pair in table.pairs)
    games = ratings.read_games(data, 5).to_pylist()
    eval_games = [g for g in games if g["match_id"].startswith("ag5-eval-")]
    assert len(eval_games) == 21 * SETTINGS.eval_games  # the crashed match's four games were not replayed
    assert len({(g["match_id"], g["game"]) for g in eval_games}) == len(eval_games)
    for pair in table.pairs:  # each row is its own match's, whatever order the matches finished in
        summary = storage.matches.read_summary(layout.match_dir(data, pair.match))
        assert pair.match == f"ag5-eval-{pair.a}-vs-{pair.b}" and pair.a_wins == summary["a_wins"]
        assert summary["player_a"].startswith("alphago" if pair.a.startswith("alphago") else "")
    rated = {row.label: row for row in table.players}
    assert rated["random"].elo == 0 and all(row.elo is not None for row in table.players)
    assert rated["alphago-4-r1"].ladder_name.startswith("alphago-4:gozero-5x5-policy/1,gozero-5x5-value/")
    assert rated["alphago-4-r1"].ladder_name.endswith(",gozero-5x5-rollout/1")  # it rolled out with the policy
    assert read_artifact("alphago-eval-ag5") is not None and read_artifact("alphago-ag5") is not None
    own_store(monkeypatch)
    assert seen["summary"].stages["eval"]["mlflow_run"]


def test_a_finished_pipeline_reruns_without_playing_or_registering(crashed_and_resumed,
                                                                   monkeypatch: pytest.MonkeyPatch):
    data, _ = crashed_and_resumed
    own_store(monkeypatch)
    games = ratings.read_games(data, 5).num_rows
    summary = run(data)
    assert len(registry.list_versions("gozero-5x5-rl", data)) == 3
    assert ratings.read_games(data, 5).num_rows == games and summary.table is not None


def test_a_stage_before_its_prerequisites_is_refused(tmp_path: Path, prefect_harness,
                                                     monkeypatch: pytest.MonkeyPatch):
    own_store(monkeypatch)
    with pytest.raises(AlphaGoError, match="needs stage sl, rl of ag5 first"):
        run(tmp_path / "data", ("value",))
    with pytest.raises(AlphaGoError, match="no dataset 'uct5'"):
        run(tmp_path / "data", ("sl",))
    with pytest.raises(AlphaGoError, match="unknown stage"):
        parse_stages("sl,mcts")
    assert parse_stages("eval,sl") == ("sl", "eval")


def test_the_papers_inputs_policy_nets_on_alphago48_and_the_value_net_on_alphago49(tmp_path: Path, prefect_harness,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    """On an alphago48 dataset the SL and RL policies read its 48 planes and the value net the 49 of
    the paper (the colour to play added), all of the net size asked for (the paper's shape: a 5x5 conv,
    then 3x3 convs; here 2 of 24 filters, as cheap as `tiny`); AlphaGo's search plays with the pair."""
    from gocore.play.match import play_game
    from gocore.search.agents import RandomAgent
    from tasks.app.models import load_net
    from tasks.app.players import PlayerSettings, build_player

    own_store(monkeypatch)
    data = tmp_path / "data"
    build_uct_dataset(tmp_path / "sgf", layout.dataset_dir(data, "uct5-ag48"), 8, size=5, encoder="alphago48")
    settings = dataclasses.replace(SETTINGS, name="ag48", dataset="uct5-ag48", iterations=2, snapshot_every=1,
                                   check_games=2, preset="b2c24")
    run(data, ("sl", "rl", "value"), settings)
    planes = {family: (net.config.encoder, net.config.in_planes, net.config.blocks, net.config.filters)
              for family in ("policy", "rl", "value")
              for net in [load_net(f"models:/gozero-5x5-{family}/1", data)]}
    assert planes == {"policy": ("alphago48", 48, 2, 24), "rl": ("alphago48", 48, 2, 24),
                      "value": ("alphago49", 49, 2, 24)}
    spec = "alphago-4:models:/gozero-5x5-policy/1,models:/gozero-5x5-value/1"
    player = build_player(spec, PlayerSettings(size=5, sims=4), data)
    try:
        game = play_game(player.make(0), RandomAgent(seed=1), size=5, komi=7.5)
    finally:
        player.close()
    assert game.reason in ("two-passes", "resign", "move-cap") and len(game.moves) > 0


def test_a_finished_stage_line_says_what_the_stage_found():
    from flows.alphago import headline

    sl = {"model": {"name": "gozero-9x9-policy", "version": 1}, "step": "sl", "val_policy_top1": 0.481}
    rollout = {"model": {"name": "gozero-9x9-rollout", "version": 1}, "val_move_top1": 0.307, "uniform_top1": 0.0218}
    assert headline("sl", sl) == "gozero-9x9-policy/1, validation top-1 48.1%"
    assert headline("rollout", rollout) == "gozero-9x9-rollout/1, held-out top-1 30.7% (uniform 2.2%)"
    assert headline("sl", {"model": {"name": "gozero-9x9-policy", "version": 2}}) == "gozero-9x9-policy/2"
