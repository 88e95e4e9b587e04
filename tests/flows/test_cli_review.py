"""`gozero review`: a game and a model in, an annotated SGF, a win-rate PNG and a table of mistakes out."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from flows.cli import app
from gocore.nn.nets import NetConfig, build_net
from gocore.rules import sgf
from gocore.rules.sgf_read import read_games
from storage.checkpoints import save_model
from tests.helpers import random_game

RUNNER = CliRunner()


def tiny_model(where, size: int):
    torch.manual_seed(0)
    config = NetConfig(board_size=size, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    return save_model(where / f"tiny{size}", build_net(config).eval(), dataclasses.asdict(config))


@pytest.fixture
def game_file(tmp_path):
    moves, _ = random_game(7, np.random.default_rng(5), max_moves=20)
    record = sgf.GameRecord(size=7, komi=7.5, moves=[(1 if i % 2 == 0 else -1, m) for i, m in enumerate(moves)],
                            player_black="me", result="W+R")
    path = tmp_path / "my game.sgf"
    path.write_text(sgf.write(record), encoding="utf-8")
    return path, record


def test_review_writes_the_annotated_game_and_the_graph_and_prints_the_mistakes(tmp_path, game_file):
    path, record = game_file
    model = tiny_model(tmp_path, 7)
    result = RUNNER.invoke(app, ["review", str(path), "--model", str(model), "--visits", "8", "--threads", "1"])
    assert result.exit_code == 0, result.output
    assert "biggest mistakes (20 moves" in result.output
    annotated_path, graph = tmp_path / "my game-review.sgf", tmp_path / "my game-winrate.png"
    assert str(annotated_path) in result.output.replace("\n", "")
    (annotated,) = read_games(annotated_path.read_bytes())
    assert annotated.moves == record.moves and annotated.player_black == "me" and annotated.result == "W+R"
    assert len(annotated.comments) == 20 and all("win rate" in c for c in annotated.comments.values())
    assert graph.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    height, width, _ = matplotlib.image.imread(graph).shape
    assert (width, height) == (800, 320)


def test_review_refuses_a_model_of_another_size_and_an_unreadable_game_in_one_line(tmp_path, game_file):
    path, _ = game_file
    model = tiny_model(tmp_path, 9)
    wrong_size = RUNNER.invoke(app, ["review", str(path), "--model", str(model), "--visits", "4"])
    assert wrong_size.exit_code == 1
    assert "plays 9x9; " in wrong_size.output and "is a 7x7 game" in wrong_size.output
    missing = RUNNER.invoke(app, ["review", str(tmp_path / "nope.sgf"), "--model", str(model)])
    assert missing.exit_code == 1 and "cannot read" in missing.output
    assert not list(tmp_path.glob("*-review.sgf"))


def test_a_game_without_a_champion_of_its_size_names_its_size_and_the_model_option(tmp_path, game_file):
    path, _ = game_file
    result = RUNNER.invoke(app, ["review", str(path), "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 1
    assert "is a 7x7 game and there is no models:/gozero-7x7@champion" in result.output
    assert "give one with --model" in result.output and "Traceback" not in result.output
