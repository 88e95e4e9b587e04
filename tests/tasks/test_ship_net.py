"""benchmarks/ship.py copies a registered version, measured by a finished match, into the shipped
nets' folder with its provenance; a fresh data dir then registers it as the shipped net."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from benchmarks.ship import main
from gocore.nn.nets import NetConfig, build_net
from gocore.play.match import MatchConfig
from storage import layout, registry, shipped
from storage.checkpoints import save_model
from tasks.app.evaluate import MatchSettings, play_match_here


@pytest.fixture
def made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data dir with a registered 5x5 net (through the shipped mechanism) and 6 games it played."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    shelf = tmp_path / "made"
    config = NetConfig(board_size=5, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    save_model(shelf / "gozero-5x5", build_net(config), dataclasses.asdict(config))
    (shelf / "gozero-5x5" / shipped.PROVENANCE_FILE).write_text("{}")
    monkeypatch.setattr(shipped, "_HERE", shelf)
    data = tmp_path / "data"
    assert shipped.ensure_registered(5, data) == 1
    settings = MatchSettings("models:/gozero-5x5-shipped/1", "random", 6, 4, MatchConfig(size=5, seed=0, opening=2))
    monkeypatch.setenv("GOZERO_DATA", str(data))
    play_match_here(str(layout.match_dir(data, "net-vs-random")), settings)
    return data


def test_a_measured_version_ships_with_its_results_and_registers_in_a_fresh_data_dir(
        made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    out = tmp_path / "shelf"
    assert main(["--data-dir", str(made), "--model", "models:/gozero-5x5-shipped/1", "--command", "gozero strong ...",
                 "--match", "net-vs-random", "--note", "a test", "--out", str(out)]) == 0
    facts = json.loads((out / "gozero-5x5" / shipped.PROVENANCE_FILE).read_text())
    summary = json.loads((layout.match_dir(made, "net-vs-random") / "summary.json").read_text())
    assert facts["matches"][0]["games"] == 6 and facts["matches"][0]["a_winrate"] == summary["a_winrate"]
    assert facts["note"] == "a test" and "of 6 games vs random" in facts["strength"]
    assert "shipped gozero-5x5-shipped/1" in capsys.readouterr().out
    monkeypatch.setattr(shipped, "_HERE", out)
    fresh = tmp_path / "fresh"
    assert shipped.prepared("shipped-5x5", fresh) == "models:/gozero-5x5-shipped@champion"
    assert registry.list_versions("gozero-5x5-shipped", fresh)[0].tags["shipped"] == "true"


def test_an_alias_or_an_unfinished_match_is_refused(made: Path, tmp_path: Path):
    with pytest.raises(SystemExit, match="pinned version"):
        main(["--data-dir", str(made), "--model", "models:/gozero-5x5-shipped@champion", "--command", "x",
              "--out", str(tmp_path / "shelf")])
    with pytest.raises(SystemExit, match="no-such-match is not complete"):
        main(["--data-dir", str(made), "--model", "models:/gozero-5x5-shipped/1", "--command", "x",
              "--match", "no-such-match", "--out", str(tmp_path / "shelf")])
    assert not (tmp_path / "shelf").exists()
