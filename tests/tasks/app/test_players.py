"""tasks.app.players and tasks.app.models: every player spec, nets playing as what they are, model loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from gocore.nn.nets import NetConfig, build_net
from gocore.play.match import GtpAgent
from gocore.rules.board import Position
from gocore.search.agents import AlphaZeroAgent, PolicyAgent, RandomAgent, UCTAgent, ValueGreedyAgent
from storage.checkpoints import save_model
from tasks.app.models import ModelError, load_model, load_net
from tasks.app.players import PlayerError, PlayerSettings, build_player, parse_player

SETTINGS = PlayerSettings(size=5, komi=7.5, sims=8)


def tiny_model(path: Path, family: str = "dual", size: int = 5) -> str:
    config = NetConfig(board_size=size, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16,
                       family=family)
    return str(save_model(path, build_net(config), config.to_dict()))


def test_specs_parse_to_their_kind_and_number():
    assert parse_player("random").kind == "random"
    assert (parse_player("uct-7").kind, parse_player("uct-7").number) == ("uct", 7)
    assert (parse_player("gnugo").kind, parse_player("gnugo").number) == ("gnugo", None)
    assert parse_player("gtp:gnugo --mode gtp").command == ("gnugo", "--mode", "gtp")
    assert parse_player("models:/gozero-9x9@champion").kind == "model"


@pytest.mark.parametrize("spec", ["gnugo-11", "gnugo-99"])
def test_gnugo_levels_outside_0_to_10_are_refused_before_gnugo_starts(spec):
    with pytest.raises(PlayerError, match="levels are 0 to 10"):
        parse_player(spec)
    assert parse_player("gnugo-0").number == 0 and parse_player("gnugo-10").number == 10


def test_specs_build_our_agents_seeded_per_game():
    random_player = build_player("random", SETTINGS)
    assert isinstance(random_player.make(1), RandomAgent) and random_player.make(1) is not random_player.make(1)
    assert build_player("uct-7", SETTINGS).make(0).sims == 7
    assert build_player("uct", SETTINGS).make(0).sims == 8  # a bare uct searches `sims`
    assert isinstance(build_player("uct-3", SETTINGS).make(0), UCTAgent)


def test_engine_specs_share_one_engine_per_side(gnugo_path: str):
    player = build_player("gnugo-1", SETTINGS)
    engine = player.make(0)
    assert isinstance(engine, GtpAgent) and player.make(1) is engine and player.engine is engine
    assert engine.command[engine.command.index("--level") + 1] == "1"
    assert "--capture-all-dead" in engine.command and engine.command[engine.command.index("--boardsize") + 1] == "5"
    gtp = build_player("gtp:gnugo --mode gtp --level 0", SETTINGS).engine
    assert Path(gtp.command[0]).name == "gnugo" and gtp.command[1:] == ["--mode", "gtp", "--level", "0"]
    assert gtp.name == "gtp:gnugo --mode gtp --level 0"
    player.close()
    gtp.close()


@pytest.mark.parametrize("spec, message", [
    ("alphabeta", "unknown player"), ("uct-x", "unknown player"), ("gtp:", "needs an engine command"),
    ("gtp:no-such-engine-here --gtp", "not found"),
])
def test_bad_specs_are_refused_with_a_reason(spec: str, message: str, data_dir: Path):
    with pytest.raises(PlayerError, match=message):
        build_player(spec, SETTINGS)


def test_nets_play_as_what_they_are(tmp_path: Path):
    dual = build_player(tiny_model(tmp_path / "dual"), SETTINGS)
    assert dual.kind == "alphazero-8" and isinstance(dual.make(0), AlphaZeroAgent)
    assert dual.make(0).config.sims == 8 and dual.board_size == 5
    policy = build_player(tiny_model(tmp_path / "policy", "policy"), SETTINGS)
    assert policy.kind == "policy" and isinstance(policy.make(0), PolicyAgent)
    assert dual.display.endswith("(alphazero-8)") and policy.display.endswith("(policy)")
    assert build_player("uct-3", SETTINGS).display == "uct-3"
    assert build_player("uct", SETTINGS).display == "uct (uct-8)"
    value = build_player(tiny_model(tmp_path / "value", "value"), SETTINGS)
    assert value.kind == "value-greedy" and isinstance(value.make(0), ValueGreedyAgent)
    rl = build_player(tiny_model(tmp_path / "rl", "rl"), SETTINGS)
    assert rl.kind == "rl" and isinstance(rl.make(0), PolicyAgent)
    with pytest.raises(PlayerError, match="plays 5x5, not 9x9"):
        build_player(str(tmp_path / "dual"), PlayerSettings(size=9))


def test_nets_play_the_most_visited_move_from_the_start_unless_asked_to_sample(tmp_path: Path):
    model = tiny_model(tmp_path / "dual")
    greedy = build_player(model, SETTINGS).make(0).config
    sampled = build_player(model, PlayerSettings(size=5, sims=8, sample_opening=True)).make(0).config
    assert sampled.temperature_moves is None and greedy.temperature_moves == 0
    assert greedy.leaves_per_game == 1  # one leaf a round: matches search as deep as the net allows
    assert greedy.resign_threshold is None  # matches play every game out
    resigning = build_player(model, PlayerSettings(size=5, sims=8, resign_threshold=-0.9)).make(0).config
    assert resigning.resign_threshold == -0.9


def test_load_net_reads_a_model_directory_and_reloads_it_when_saved_again(tmp_path: Path):
    path = tmp_path / "m"
    first = load_net(tiny_model(path))
    assert first.config.board_size == 5 and not first.training
    assert load_net(path) is first  # cached per process
    import os
    tiny_model(path, size=7)  # saved again in place
    config = path / "config.json"
    os.utime(config, ns=(config.stat().st_atime_ns, config.stat().st_mtime_ns + 10**9))
    again = load_model(path)
    assert again.net.config.board_size == 7 and again.version == str(path.resolve())


def test_missing_models_say_where_they_were_looked_for(data_dir: Path, tmp_path: Path):
    with pytest.raises(ModelError, match=f"data dir {data_dir}") as missing:
        load_net("models:/gozero-9x9@champion")
    assert str(missing.value).count("mlflow.db") == 1, "the registry is named once"
    with pytest.raises(ModelError, match="no such model directory"):
        load_net(str(tmp_path / "nothing-here"))


def test_ladder_names_name_the_same_player_for_good_and_lead_back_to_a_spec(tmp_path: Path):
    from tasks.app.players import ladder_name, ladder_spec

    names = {spec: ladder_name(spec, 8) for spec in ("random", "uct", "uct-30", "gnugo", "gnugo-0", "gnugo-1",
                                                      "gtp:gnugo --mode gtp --level 2")}
    assert names == {"random": "random", "uct": "uct-8", "uct-30": "uct-30", "gnugo": "gnugo-5", "gnugo-0": "gnugo-0",
                     "gnugo-1": "gnugo-1", "gtp:gnugo --mode gtp --level 2": "gtp:gnugo --mode gtp --level 2"}
    assert ladder_name(tiny_model(tmp_path / "gen7"), 8) == "dir:gen7"
    assert [ladder_spec(name) for name in ("gozero-9x9/3", "uct-30", "random", "gtp:x --y", "dir:gen7")] == [
        "models:/gozero-9x9/3", "uct-30", "random", "gtp:x --y", None]
    with pytest.raises(PlayerError, match="unknown player"):
        ladder_name("alphabeta", 8)


def test_alphago_specs_search_over_their_two_nets_and_keep_their_names(tmp_path: Path):
    from gocore.search.agents import AlphaGoAgent
    from tasks.app.players import ladder_name, ladder_spec

    policy, value = tiny_model(tmp_path / "p", "policy"), tiny_model(tmp_path / "v", "value")
    parsed = parse_player(f"alphago-12:{policy},{value}")
    assert (parsed.kind, parsed.number, parsed.command) == ("alphago", 12, (policy, value))
    assert parse_player("alphago").kind == "alphago" and parse_player("alphago").command == ()
    player = build_player(f"alphago-12:{policy},{value}", SETTINGS)
    agent = player.make(0)
    assert isinstance(agent, AlphaGoAgent) and player.kind == "alphago-12"
    assert agent.config.sims == 12 and agent.config.rollout_lambda == 0.5 and agent.config.c_puct == 5.0
    assert ladder_name(f"alphago:{policy},{value}", 8, size=5) == "alphago-8:dir:p,dir:v"
    assert ladder_spec("alphago-8:gozero-5x5-policy/2,gozero-5x5-value/1") == (
        "alphago-8:models:/gozero-5x5-policy/2,models:/gozero-5x5-value/1")
    assert ladder_spec("alphago-8:dir:p,dir:v") is None  # a directory is only a name on the ladder
    with pytest.raises(PlayerError, match="needs a policy net and a value net"):
        build_player(f"alphago:{value},{policy}", SETTINGS)
    for bad in ("alphago-x", "alphago:only-one", "alphago:a,", "alphago:a,b,c,d"):
        with pytest.raises(PlayerError, match="alphago"):
            parse_player(bad)


def test_a_third_model_is_the_rollout_policy_alphago_rolls_out_with(tmp_path: Path):
    from gocore.search.rollout import PatternRollouts
    from tasks.app.players import ladder_name

    policy, value = tiny_model(tmp_path / "p", "policy"), tiny_model(tmp_path / "v", "value")
    rollout = tiny_model(tmp_path / "r", "rollout")
    agent = build_player(f"alphago-6:{policy},{value},{rollout}", SETTINGS).make(0)
    assert isinstance(agent.rollout_policy, PatternRollouts)
    assert build_player(f"alphago-6:{policy},{value}", SETTINGS).make(0).rollout_policy is None  # uniform
    assert ladder_name(f"alphago:{policy},{value},{rollout}", 8, size=5) == "alphago-8:dir:p,dir:v,dir:r"
    with pytest.raises(PlayerError, match="rollout policy"):
        build_player(f"alphago-6:{policy},{value},{value}", SETTINGS)
    assert 0 <= agent.select_move(Position.initial(5)) <= 25  # a search whose leaves roll out with it


def test_a_net_at_its_own_simulations_is_its_own_player(tmp_path: Path):
    """``alphazero-N:MODEL`` searches N simulations whatever the match's sims (one net against itself at
    4x the search, without a GTP engine that resigns on one side only) and is its own ladder player."""
    from tasks.app.players import ladder_name, ladder_spec
    from tasks.app.sizes import size_of

    dual, policy = tiny_model(tmp_path / "gen7"), tiny_model(tmp_path / "sl", "policy")
    parsed = parse_player(f"alphazero-32:{dual}")
    assert (parsed.kind, parsed.number, parsed.command) == ("model", 32, (dual,))
    player = build_player(f"alphazero-32:{dual}", SETTINGS)
    agent = player.make(0)
    assert isinstance(agent, AlphaZeroAgent) and agent.config.sims == 32 and player.kind == "alphazero-32"
    assert player.label == f"alphazero-32:{dual}" and build_player(dual, SETTINGS).make(0).config.sims == 8
    assert 0 <= agent.select_move(Position.initial(5)) <= 25
    assert ladder_name(f"alphazero-32:{dual}", 8) == "alphazero-32:dir:gen7" != ladder_name(dual, 8)
    assert ladder_spec("alphazero-32:gozero-9x9/6") == "alphazero-32:models:/gozero-9x9/6"
    assert ladder_spec("alphazero-32:dir:gen7") is None
    assert size_of("alphazero-256:models:/gozero-13x13/2") == 13
    with pytest.raises(PlayerError, match="only a dual net searches"):
        build_player(f"alphazero-32:{policy}", SETTINGS)
    for bad in ("alphazero", "alphazero-0:x", "alphazero-x:models:/a/1", "alphazero-5:", "alphazero-5:gnugo-1"):
        with pytest.raises(PlayerError, match="alphazero"):
            parse_player(bad)


def test_a_net_searching_with_the_score_lead_is_its_own_player(tmp_path: Path):
    from gocore.search.score_utility import ScoreUtilityEvaluator
    from tasks.app.players import ladder_name

    config = NetConfig(board_size=5, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16,
                       aux_heads=True)
    heads = str(save_model(tmp_path / "heads", build_net(config), config.to_dict()))
    player = build_player(f"alphazero-16,score=0.3:{heads}", SETTINGS)
    agent = player.make(0)
    assert isinstance(agent.evaluator, ScoreUtilityEvaluator) and agent.evaluator.weight == 0.3
    assert agent.evaluator.scale == 5 and agent.config.sims == 16  # the board's side in points
    assert not isinstance(build_player(f"alphazero-16:{heads}", SETTINGS).make(0).evaluator, ScoreUtilityEvaluator)
    assert ladder_name(f"alphazero-16,score=0.3:{heads}", 8) == "alphazero-16,score=0.3:dir:heads"
    assert ladder_name(f"alphazero-16,score=0:{heads}", 8) == "alphazero-16:dir:heads"
    with pytest.raises(PlayerError, match="score head"):
        build_player(f"alphazero-16,score=0.3:{tiny_model(tmp_path / 'plain')}", SETTINGS)
    for bad in ("alphazero-16,score=2:x", "alphazero-16,score=x:x", "alphazero-16,sims=3:x", "alphazero-16,:x"):
        with pytest.raises(PlayerError, match="alphazero-N"):
            parse_player(bad.replace(":x", f":{heads}"))
