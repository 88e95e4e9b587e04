"""Auxiliary heads: ownership and score targets of finished games (side to move's view), their
storage and symmetries, training with and without them, inference, and loading old nets."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from gocore.nn import features
from gocore.nn.encode import EncodeOptions, ShardEncoder
from gocore.nn.inference import NetEvaluator, UniformEvaluator, has_ownership, has_score
from gocore.nn.nets import NetConfig, NetConfigError, build_net, preset
from gocore.nn.training import TrainConfig, evaluate, train
from gocore.rules import symmetry
from gocore.rules.board import Position
from gocore.rules.coords import pass_move
from gocore.search.selfplay import SearchedGame, training_columns
from storage import datasets
from storage.checkpoints import save_model
from storage.schemas import AUX_COLUMNS, encoded_rows_table, selfplay_table
from storage.stream import BatchStream, StreamFactory
from tasks.app.rows import ROW_DECODER
from tests.corpus import agent_records
from tests.helpers import position_from_ascii

SIZE = 5
KOMI = 0.5


def walls_game() -> SearchedGame:
    """5x5, komi 0.5: black walls column 2, white column 3, both pass. Black owns columns 0-2
    (15 points), white 3-4 (10): B+4.5."""
    moves = [m for r in range(SIZE) for m in (r * SIZE + 2, r * SIZE + 3)] + [pass_move(SIZE)] * 2
    position = Position.initial(SIZE, KOMI)
    for move in moves:
        position = position.play(move)
    uniform = np.full(SIZE * SIZE + 1, 1 / (SIZE * SIZE + 1), np.float32)
    return SearchedGame(Position.initial(SIZE, KOMI), moves, [uniform] * len(moves), [0.0] * len(moves),
                        final=position, winner=1, result="B+4.5", reason="two-passes")


def resigned_game() -> SearchedGame:
    """Two moves, then white resigns: no final board to learn from."""
    game = walls_game()
    return SearchedGame(game.start, game.moves[:2], game.pis[:2], [0.0, 0.0], final=game.start.play(2).play(3),
                        winner=1, result="B+R", reason="resign")


BLACK_VIEW = np.repeat([[1, 1, 1, -1, -1]], SIZE, axis=0).reshape(-1)  # (N*N,) final owner, +1 black


# ---------------------------------------------------------------- targets
def test_ownership_map_is_tromp_taylor_area_and_sums_to_the_score() -> None:
    position = position_from_ascii("""
        . X . O .
        X X . O O
        . . X O .
        X X X O .
        . . X O .""", komi=KOMI)
    expected = np.array([[1, 1, 0, -1, -1],
                         [1, 1, 0, -1, -1],
                         [1, 1, 1, -1, -1],
                         [1, 1, 1, -1, -1],
                         [1, 1, 1, -1, -1]])  # the top two empties of column 2 touch both colours
    assert (position.ownership() == expected).all()
    assert position.ownership().sum() - KOMI == position.score()
    assert (Position.initial(SIZE).ownership() == 0).all()  # an empty region touching no stone is no one's


def test_targets_of_a_finished_game_are_from_the_side_to_move() -> None:
    columns = training_columns([walls_game()], ["g"], encoder="agz17", generation=1, model_version="v")
    movers = np.where(np.arange(len(columns["z"])) % 2 == 0, 1, -1)  # black moves first
    assert (columns["ownership"] == movers[:, None] * BLACK_VIEW).all()
    assert np.allclose(columns["score"], movers * 4.5)
    assert (np.sign(columns["score"]) == columns["z"]).all()  # the lead agrees with who won


def test_a_resigned_game_has_no_targets_and_stores_nulls(tmp_path: Path) -> None:
    columns = training_columns([walls_game(), resigned_game()], ["a", "b"], encoder="agz17", generation=1,
                               model_version="v")
    resigned = columns["game_id"] == "b"
    assert np.isnan(columns["score"][resigned]).all() and (columns["ownership"][resigned] == 0).all()
    path = tmp_path / "shard.parquet"
    datasets.write_parquet(path, selfplay_table(columns))
    table = pq.read_table(path)
    assert table.column("ownership").null_count == table.column("score").null_count == resigned.sum()
    first = np.frombuffer(table.column("ownership")[0].as_py(), np.int8)
    assert (first == BLACK_VIEW).all()


# ---------------------------------------------------------------- streams
def write_shards(tmp_path: Path, games: int = 12) -> tuple[Path, Path]:
    """A shard with the auxiliary columns (finished games) and an old-style shard without them."""
    columns = training_columns([walls_game()] * games, [f"g{i}" for i in range(games)], encoder="agz17",
                               generation=1, model_version="v")
    new, old = tmp_path / "new.parquet", tmp_path / "old.parquet"
    datasets.write_parquet(new, selfplay_table(columns))
    datasets.write_parquet(old, selfplay_table(columns).drop_columns(list(AUX_COLUMNS)))
    return new, old


def test_old_shards_without_aux_columns_stream_masked(tmp_path: Path) -> None:
    new, old = write_shards(tmp_path)
    rows = len(pq.read_table(new))
    batch = next(iter(BatchStream([new, old], 2 * rows, decoder=ROW_DECODER, val_percent=0, epochs=1,
                                  prefetch=0, aux_targets=True)))
    assert batch.aux_mask.sum() == rows  # exactly the new shard's rows
    known = batch.aux_mask == 1
    assert (np.abs(batch.score[known]) == 4.5).all() and (batch.score[~known] == 0).all()
    plain = next(iter(BatchStream([old], rows, decoder=ROW_DECODER, val_percent=0, epochs=1, prefetch=0)))
    assert plain.ownership is None and plain.aux_mask is None  # nothing changes unless asked


def test_expert_rows_of_played_out_games_stream_their_targets_and_resigned_ones_masked(tmp_path: Path) -> None:
    first, second = agent_records(2)
    resigned = dataclasses.replace(second, result="W+R", winner=-1)
    encoder = ShardEncoder(EncodeOptions(augment="none"), seed=0)
    for index, record in enumerate((first, resigned)):
        assert encoder.add_game(record, f"g{index}#0") is None
    rows = encoder.finish()
    path = tmp_path / "expert.parquet"
    datasets.write_parquet(path, encoded_rows_table(rows))
    batch = next(iter(BatchStream([path], len(rows), decoder=ROW_DECODER, val_percent=0, epochs=1, prefetch=0,
                                  aux_targets=True)))
    assert batch.pi is None and batch.aux_mask.sum() == len(first.moves)  # the played-out game's rows only
    assert np.abs(batch.score[batch.aux_mask == 1]).max() > 0 and (batch.score[batch.aux_mask == 0] == 0).all()


def test_random_symmetries_move_ownership_with_the_planes(tmp_path: Path) -> None:
    new, _ = write_shards(tmp_path, games=2)
    stream = BatchStream([new], 24, decoder=ROW_DECODER, val_percent=0, epochs=1, prefetch=0,
                         random_symmetry=True, aux_targets=True, seed=3)
    batch = next(iter(stream))
    assert len(set(batch.symmetry.tolist())) > 2
    stones = (batch.planes[:, 0] - batch.planes[:, 1]).reshape(len(batch), -1)  # (B, N*N) +1: side to move's
    full = np.abs(stones).sum(axis=1) == 2 * SIZE  # rows after all ten stones are down
    assert full.sum() == 4  # two games, two passes each
    on_stones = stones[full] != 0
    assert (batch.ownership[full][on_stones] == stones[full][on_stones]).all()  # planes and ownership agree
    expected = np.zeros((len(batch), SIZE * SIZE))
    for row, k in enumerate(batch.symmetry):
        expected[row, symmetry.move_table(SIZE)[k][:SIZE * SIZE]] = BLACK_VIEW  # point m goes to table[k][m]
    sign = np.where(batch.planes[:, 16, 0, 0] == 1, 1, -1)  # black to move: +1
    assert (batch.ownership == expected * sign[:, None]).all()


# ---------------------------------------------------------------- nets, training, inference
def aux_config(aux: bool = True) -> NetConfig:
    return NetConfig(board_size=SIZE, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16,
                     aux_heads=aux)


def test_config_defaults_off_and_old_dicts_load() -> None:
    old = {"board_size": 9, "in_planes": 17, "encoder": "agz17", "family": "dual", "blocks": 4,
           "filters": 32, "value_hidden": 64}  # a config saved before aux_heads existed
    assert NetConfig.from_dict(old).aux_heads is False
    assert NetConfig.from_dict(old).to_dict() == old  # unchanged JSON: same run keys and identities
    assert NetConfig.from_dict(aux_config().to_dict()).aux_heads is True
    with pytest.raises(NetConfigError, match="dual"):
        preset("tiny", 9, 17, family="policy", aux_heads=True)
    assert set(build_net(aux_config(False)).state_dict()) < set(build_net(aux_config()).state_dict())


def test_training_lowers_the_aux_losses_and_masks_old_rows(tmp_path: Path) -> None:
    new, old = write_shards(tmp_path)
    torch.manual_seed(0)
    net = build_net(aux_config())
    factory = StreamFactory((new, old), 32, ROW_DECODER, val_percent=0, shuffle_buffer=64, prefetch=0,
                            aux_targets=True)
    fixed = lambda: BatchStream([new], 64, decoder=ROW_DECODER, val_percent=0, epochs=1, prefetch=0,
                                aux_targets=True)
    before = evaluate(net, fixed())
    reports: dict[int, dict[str, float]] = {}
    config = TrainConfig(steps=40, batch_size=32, optimizer="adamw", lr=3e-3, lr_steps=(), checkpoint_every=0,
                         val_every=0, log_every=10, device="cpu")
    train(net, factory, config, on_metrics=lambda step, metrics: reports.__setitem__(step, metrics))
    after = evaluate(net, fixed())
    assert 0.2 < reports[10]["train/aux_rows"] < 0.8  # about half the rows come from the old shard
    assert after["ownership_loss"] < 0.8 * before["ownership_loss"]
    assert after["score_error"] < 0.5 * before["score_error"]  # points off the 4.5 lead
    plain = build_net(aux_config(False))  # a net without heads trains on the same data, unaware of them
    assert "ownership_loss" not in train(plain, factory, config).metrics


def test_evaluator_reports_ownership_and_score_only_with_the_heads() -> None:
    positions = [Position.initial(SIZE, KOMI), walls_game().final]
    assert not has_ownership(UniformEvaluator()) and not has_score(UniformEvaluator())
    plain = NetEvaluator(build_net(aux_config(False)), device="cpu")
    assert not plain.has_ownership
    with pytest.raises(ValueError, match="no ownership"):
        plain.evaluate_aux(positions)
    net = build_net(aux_config())
    evaluator = NetEvaluator(net, device="cpu", average_symmetries=True)
    assert has_ownership(evaluator) and has_score(evaluator)
    out = evaluator.evaluate_aux(positions)
    priors, values = evaluator.evaluate(positions)  # unchanged for existing callers
    assert np.allclose(out.priors, priors) and np.allclose(out.values, values)
    assert out.ownership.shape == (2, SIZE * SIZE) and (np.abs(out.ownership) <= 1).all()
    single = NetEvaluator(net, device="cpu").evaluate_aux(positions)
    planes = torch.from_numpy(features.encode_positions(positions, "agz17")).float()
    with torch.no_grad():
        raw = net.eval()(planes, aux=True)
    assert np.allclose(single.ownership, torch.tanh(raw.ownership).numpy(), atol=1e-6)
    assert np.allclose(single.score, raw.score.numpy() * SIZE, atol=1e-6)  # points = head output * N


def test_nets_with_and_without_heads_load_through_the_registry(tmp_path: Path, monkeypatch) -> None:
    from storage import registry, runs
    from tasks.app.models import load_net

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    planes = torch.rand(3, 17, SIZE, SIZE)
    for version, aux in ((1, False), (2, True)):
        net = build_net(aux_config(aux)).eval()
        model_dir = save_model(tmp_path / f"net{version}", net, aux_config(aux).to_dict())
        with runs.training_run(SIZE, {"net": aux_config(aux).to_dict()}, data=tmp_path) as run_id:
            runs.log_model(run_id, model_dir, data=tmp_path)
        assert registry.register(run_id, generation=version, data=tmp_path) == version
        loaded = load_net(f"models:/{registry.model_name(SIZE)}/{version}", tmp_path)
        assert loaded.config.aux_heads is aux
        with torch.no_grad():
            assert torch.allclose(loaded(planes)[1], net(planes)[1])
    old = build_net(aux_config(False)).eval()  # a checkpoint written before the field existed
    config = {k: v for k, v in aux_config(False).to_dict().items() if k != "aux_heads"}
    loaded = load_net(save_model(tmp_path / "old", old, config), tmp_path)
    assert not NetEvaluator(loaded, device="cpu").has_ownership


def test_the_zero_loop_records_aux_heads_only_when_on() -> None:
    from tasks.app.loop_settings import TECHNIQUES_OFF, LoopSettings, loop_record

    assert "aux_heads" not in loop_record(LoopSettings(**TECHNIQUES_OFF).resolved(None))  # older loops resume
    assert loop_record(LoopSettings(aux_heads=True).resolved(None))["aux_heads"] is True
