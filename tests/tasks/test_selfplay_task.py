"""tasks.selfplay through `selfplay_games.fn`: one shard + SGF per batch, readable by the training
stream; reruns skip; a saved tiny net plays too."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from gocore.nn.nets import build_net, preset
from storage.checkpoints import save_model
from storage.selfplay import games_done, shard_path, sidecar_path
from storage.stream import BatchStream
from tasks.app.models import local_model
from tasks.app.rows import ROW_DECODER
from tasks.app.selfplay_settings import SelfPlaySettings
from tasks.selfplay import SelfPlayError, selfplay_games

TINY = {"size": 5, "komi": 2.5, "max_moves": 30}


def settings(model: str = "uniform", sims: int = 4) -> SelfPlaySettings:
    return SelfPlaySettings(model, sims, **TINY)


def files_under(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def read_all(shard: Path):
    stream = BatchStream([shard], batch_size=4, decoder=ROW_DECODER, val_percent=0, epochs=1, shuffle_buffer=64, ids=True)
    return list(stream)


def test_uniform_writes_one_shard_with_pi_and_every_game_as_sgf_and_a_rerun_skips(data_dir: Path):
    stats = selfplay_games.fn(settings("uniform"), 2, 3, 7, str(data_dir))
    shard = shard_path(data_dir, 3, 7)
    assert stats.shard == str(shard) and not stats.skipped and stats.counts.games == 2
    assert shard.parent == data_dir / "selfplay" / "gen=3" and sidecar_path(data_dir, 3, 7).exists()
    assert sorted(p.stem for p in (shard.parent / "games").glob("*.sgf")) == list(stats.game_ids)
    batches = read_all(shard)
    assert sum(len(b) for b in batches) == stats.rows == stats.counts.positions
    assert all(b.pi is not None and b.pi.shape[1] == 26 for b in batches)
    assert {g for b in batches for g in b.game_id} == set(stats.game_ids)
    assert games_done(data_dir, 3, [6, 7, 8]) == 2

    before = files_under(data_dir)
    again = selfplay_games.fn(settings("uniform"), 2, 3, 7, str(data_dir))
    assert again.skipped and again.rows == stats.rows and again.counts == stats.counts
    assert files_under(data_dir) == before  # nothing new, nothing rewritten


def test_a_batch_whose_shard_was_lost_is_played_again(data_dir: Path):
    first = selfplay_games.fn(settings(), 1, 0, 2, str(data_dir))
    Path(first.shard).unlink()
    again = selfplay_games.fn(settings(), 1, 0, 2, str(data_dir))
    assert not again.skipped and Path(again.shard).exists() and again.game_ids == first.game_ids


def test_the_same_batch_with_other_settings_is_refused(data_dir: Path):
    selfplay_games.fn(settings("uniform"), 1, 0, 1, str(data_dir))
    with pytest.raises(SelfPlayError, match="other settings") as refused:
        selfplay_games.fn(settings("uniform", sims=8), 1, 0, 1, str(data_dir))
    changed = str(refused.value).split("other settings: ")[1].split("; ")[0]
    assert changed.startswith("sims ") and "(now 8)" in changed and "," not in changed  # the differing field only


def test_a_saved_tiny_net_plays_with_its_encoder_and_is_named_in_the_rows(data_dir: Path, tmp_path: Path):
    config = preset("tiny", 5, 2, encoder="oneplane")
    model = save_model(tmp_path / "tiny-net", build_net(config), config.to_dict())
    stats = selfplay_games.fn(settings(str(model)), 2, 1, 0, str(data_dir))
    assert stats.model_version == str(model.resolve())
    batches = read_all(Path(stats.shard))
    assert batches[0].planes.shape[1:] == (2, 5, 5)  # the net's oneplane encoder, not the default agz17
    assert sum(len(b) for b in batches) == stats.rows


def test_a_net_for_another_board_size_is_refused(data_dir: Path, tmp_path: Path):
    config = preset("tiny", 7, 17, encoder="agz17")
    model = save_model(tmp_path / "seven", build_net(config), config.to_dict())
    with pytest.raises(SelfPlayError, match="plays 7x7, not 5x5"):
        selfplay_games.fn(settings(str(model)), 1, 0, 0, str(data_dir))


def test_a_registered_champion_plays_and_rows_name_its_version(data_dir: Path, monkeypatch: pytest.MonkeyPatch):
    from storage import registry, runs

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the registry of this data dir
    net = build_net(preset("tiny", 5, 17, encoder="agz17")).eval()
    model_dir = save_model(data_dir / "net", net, net.config.to_dict())
    with runs.training_run(5, {"net": net.config}, data=data_dir) as run_id:
        runs.log_model(run_id, model_dir, data=data_dir)
    version = registry.register(run_id, generation=0, data=data_dir)
    registry.promote("gozero-5x5", 1, "first net", data=data_dir)
    stats = selfplay_games.fn(settings("models:/gozero-5x5@champion"), 1, 1, 0, str(data_dir))
    assert stats.model_version == "gozero-5x5/1", version
    assert {b.game_id[0] for b in read_all(Path(stats.shard))} == set(stats.game_ids)

    # what the flow hands its workers: the version's artifact directory, so they need no MLflow
    local = local_model("models:/gozero-5x5@champion", data_dir)
    assert local is not None and local[1] == "gozero-5x5/1"
    assert Path(local[0]).is_relative_to(data_dir / "mlartifacts") and (Path(local[0]) / "config.json").exists()
    resolved = dataclasses.replace(settings("models:/gozero-5x5@champion"), local_model=local)
    assert selfplay_games.fn(resolved, 1, 1, 1, str(data_dir)).model_version == "gozero-5x5/1"
    assert local_model("uniform", data_dir) is None
    probe = ("import sys; from tasks.selfplay import load_evaluator; "
             f"print(load_evaluator('models:/gozero-5x5@champion', 5, None, {local!r})[1], 'mlflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["gozero-5x5/1", "False"]


def test_a_worker_writes_its_shard_without_importing_pandas(tmp_path: Path):
    # pa.array on numpy imports pandas (~40 MB in every self-play worker): the shard is built from buffers
    probe = ("import sys; from tasks.app.selfplay_settings import SelfPlaySettings; from tasks.selfplay import play_shard; "
             f"result = play_shard(SelfPlaySettings('uniform', 4, size=5, komi=2.5, max_moves=30), 2, 0, 1, {str(tmp_path)!r}); "
             "print(result.rows, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    rows, has_pandas = out.stdout.split()
    assert int(rows) > 0 and has_pandas == "False"

