"""Every command takes its board size from its sources or models, and refuses a --size they
contradict in one line, exit 1, before any work (issue #28)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from flows.cli import app

REFUSALS = [
    (["ingest", "gnugo-19x19:level=0,games=3", "--dataset", "d", "--size", "9"],
     "--size 9 contradicts gnugo-19x19:level=0,games=3 (19x19)"),
    (["play", "--black", "models:/gozero-13x13@champion", "--white", "random", "--size", "5"],
     "--size 5 contradicts models:/gozero-13x13@champion (13x13)"),
    (["evaluate", "random", "models:/gozero-7x7/1", "--size", "9"], "--size 9 contradicts models:/gozero-7x7/1 (7x7)"),
    (["selfplay", "--model", "models:/gozero-7x7@champion", "--games", "1", "--size", "5"],
     "--size 5 contradicts models:/gozero-7x7@champion (7x7)"),
    (["ladder", "--player", "models:/gozero-7x7/2", "--size", "9"], "--size 9 contradicts models:/gozero-7x7/2 (7x7)"),
    (["loop", "--warm-start", "models:/gozero-7x7@champion", "--size", "9"],
     "--size 9 contradicts models:/gozero-7x7@champion (7x7)"),
    (["loop", "--settings", "quick-5x5", "--warm-start", "models:/gozero-7x7@champion"],
     "--size 5 contradicts models:/gozero-7x7@champion (7x7)"),
    (["alphago", "--source", "gnugo-7x7:level=0,games=2", "--size", "9"],
     "--size 9 contradicts gnugo-7x7:level=0,games=2 (7x7)"),
    (["strong", "--set", "expert=gnugo-7x7:level=1,games=2", "--size", "9"],
     "--size 9 contradicts gnugo-7x7:level=1,games=2 (7x7)"),
    (["analysis", "--model", "models:/gozero-7x7@champion", "--size", "9"],
     "--size 9 contradicts models:/gozero-7x7@champion (7x7)"),
]


@pytest.mark.parametrize(("args", "line"), REFUSALS, ids=[args[0] for args, _ in REFUSALS])
def test_a_size_the_inputs_contradict_is_one_line_and_exit_1_before_any_work(args, line, tmp_path):
    result = CliRunner().invoke(app, [*args, "--data-dir", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 1, result.output
    assert result.output == f"error: {line}\n"
    assert list(tmp_path.iterdir()) == []  # no game played, no server started, nothing written


def test_inputs_of_two_sizes_are_refused_in_one_line(tmp_path):
    result = CliRunner().invoke(app, ["ingest", "gnugo-7x7:level=0,games=1", "cgos-9x9:2023-01", "--dataset", "d",
                                      "--data-dir", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "gnugo-7x7:level=0,games=1 (7x7) and cgos-9x9:2023-01 (9x9)" in result.output


def test_play_takes_its_size_from_a_model_directory(tmp_path):
    import dataclasses

    from gocore.nn.nets import NetConfig, build_net
    from storage.checkpoints import save_model

    config = NetConfig(board_size=5, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    model_dir = save_model(tmp_path / "tiny", build_net(config), dataclasses.asdict(config))
    result = CliRunner().invoke(app, ["play", "--black", str(model_dir), "--white", "random", "--sims", "4",
                                      "--data-dir", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 0, result.output
    assert "(white), 5x5" in result.output  # no --size: the model's, not 9


def write_games(folder, sizes: list[int]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index, size in enumerate(sizes):
        (folder / f"g{index}.sgf").write_text(f"(;GM[1]FF[4]SZ[{size}]KM[7.5]RE[B+R];B[aa];W[bb];B[cc])")


def test_an_ingest_takes_the_one_size_its_local_games_say(tmp_path):
    from tasks.app.sizes import resolve_ingest_size

    write_games(tmp_path / "fives", [5, 5, 5])
    write_games(tmp_path / "data" / "selfplay" / "gen=0" / "games", [7, 7])
    (tmp_path / "noSZ.sgf").write_text("(;GM[1]FF[4];B[aa])(;GM[1]FF[4];B[bb])")  # no SZ: 19x19, twice
    assert resolve_ingest_size(None, [str(tmp_path / "fives")]) == 5
    assert resolve_ingest_size(None, ["data:selfplay/gen=0/games"], tmp_path / "data") == 7
    assert resolve_ingest_size(None, [str(tmp_path / "noSZ.sgf")]) == 19
    assert resolve_ingest_size(9, [str(tmp_path / "fives")]) == 9  # asked: other sizes are refused game by game
    assert resolve_ingest_size(None, ["https://example.org/games.zip"]) == 9  # unknown until fetched


def test_an_ingest_of_games_of_several_sizes_names_them_in_one_line(tmp_path):
    import zipfile

    write_games(tmp_path / "mixed", [9, 9, 13])
    with zipfile.ZipFile(tmp_path / "mixed" / "more.zip", "w") as archive:
        archive.writestr("a/x.sgf", "(;GM[1]SZ[13];B[aa])")
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "mixed"), "--dataset", "d", "--data-dir",
                                      str(tmp_path / "data")], terminal_width=300)
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "several board sizes: 9x9 (2 games), 13x13 (2 games); give --size N" in result.output
    assert not (tmp_path / "data").exists()


def test_self_play_games_of_5x5_ingest_without_a_size(prefect_harness, tmp_path):
    from storage import datasets

    data = tmp_path / "data"
    played = CliRunner().invoke(app, ["selfplay", "--model", "uniform", "--games", "4", "--sims", "2", "--size", "5",
                                      "--workers", "1", "--data-dir", str(data)], terminal_width=300)
    assert played.exit_code == 0, played.output
    result = CliRunner().invoke(app, ["ingest", "data:selfplay/gen=0/games", "--dataset", "d", "--workers", "1",
                                      "--data-dir", str(data)], terminal_width=300)
    assert result.exit_code == 0, result.output  # all 4 were refused as "filter:size" (the filters were --size 9)
    manifest = datasets.read_manifest(data / "datasets" / "d")
    assert manifest["options"]["size"] == 5 and manifest["games_accepted"] == 4 and manifest["games_refused"] == 0
