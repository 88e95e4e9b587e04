"""Value targets that mix the game result z with the search's root value q (KataGo): self-play rows
store q, and a stream with value_mix m trains on (1 - m) * z + m * q; shards written before q
existed, and rows without it, keep z; validation keeps z."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from storage import datasets
from storage.schemas import selfplay_table
from storage.stream import BatchStream, StreamFactory
from tasks.app.rows import ROW_DECODER

ROWS = 40


def shard(path: Path, q: np.ndarray | None) -> Path:
    rng = np.random.default_rng(0)
    columns = {"encoder": np.full(ROWS, "oneplane", object), "size": np.full(ROWS, 5, np.int8),
               "planes": np.zeros((ROWS, 7), np.uint8), "pi": np.full((ROWS, 26), 1 / 26, np.float32),
               "z": rng.choice([-1, 1], ROWS).astype(np.int8), "game_id": np.array([f"g{i}" for i in range(ROWS)], object),
               "move_number": np.zeros(ROWS, np.int16), "generation": np.zeros(ROWS, np.int32),
               "model_version": np.full(ROWS, "v", object), "symmetry": np.zeros(ROWS, np.int8),
               "komi": np.full(ROWS, 7.5, np.float32)}
    table = selfplay_table({**columns, **({"q": q} if q is not None else {})})
    if q is None:
        table = table.drop_columns(["q"])  # a shard written before the column existed
    datasets.write_parquet(path, table)
    return path


def values(path: Path, mix: float, ids: bool = True) -> dict[str, float]:
    stream = BatchStream([path], ROWS, decoder=ROW_DECODER, val_percent=0, epochs=1, prefetch=0, ids=ids,
                         value_mix=mix)
    batch = next(iter(stream))
    return dict(zip(batch.game_id, batch.value.tolist()))


def test_the_target_mixes_z_with_the_searched_value(tmp_path: Path):
    q = np.linspace(-0.9, 0.9, ROWS).astype(np.float32)
    q[3] = np.nan  # a row without a searched value: z alone
    path = shard(tmp_path / "new.parquet", q)
    plain, mixed = values(path, 0.0), values(path, 0.5)
    z = {game: value for game, value in plain.items()}
    assert set(z.values()) <= {-1.0, 1.0}
    for index in range(ROWS):
        game = f"g{index}"
        expected = z[game] if index == 3 else 0.5 * z[game] + 0.5 * float(q[index])
        assert mixed[game] == pytest.approx(expected, abs=1e-6)


def test_shards_without_q_keep_z_and_validation_keeps_z(tmp_path: Path):
    old = shard(tmp_path / "old.parquet", None)
    assert values(old, 0.5) == values(old, 0.0)
    new = shard(tmp_path / "new.parquet", np.zeros(ROWS, np.float32))
    factory = StreamFactory((new,), ROWS, ROW_DECODER, val_percent=100, value_mix=0.5, prefetch=0)
    validation = next(iter(factory("val")))
    assert set(validation.value.tolist()) <= {-1.0, 1.0}  # the result alone, comparable across runs


def test_a_mix_outside_0_1_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="value_mix"):
        BatchStream([shard(tmp_path / "s.parquet", None)], 8, decoder=ROW_DECODER, value_mix=1.5)


def test_the_mix_is_a_setting_of_loops_and_recipes_that_older_records_and_run_keys_lack():
    from gocore.nn.training import TrainConfig
    from tasks.app.loop_settings import LoopSettings, loop_record
    from tasks.app.strong import StrongSettings

    assert "value_mix" not in TrainConfig().to_dict()  # run keys of runs made before it stay the same
    assert TrainConfig(value_mix=0.25).to_dict()["value_mix"] == 0.25
    plain = LoopSettings(search="puct", aux_heads=False, playout_cap=False, forced_playouts=False)
    assert "value_mix" not in loop_record(plain)
    import dataclasses

    assert loop_record(dataclasses.replace(plain, value_mix=0.5))["value_mix"] == 0.5
    recipe = StrongSettings(value_mix=0.5)
    assert recipe.loop_settings("models:/x/1").value_mix == 0.5 and "value_mix" not in StrongSettings().record()
    with pytest.raises(ValueError, match="value_mix"):
        LoopSettings(value_mix=-0.1)


def test_the_expert_share_falls_from_its_start_to_its_final_share_and_stays():
    from tasks.app.loop_settings import LoopSettings, expert_share_at, loop_record

    constant = LoopSettings(expert="gnugo", expert_share=0.5)
    assert [expert_share_at(constant, g) for g in (1, 10, 50)] == [0.5, 0.5, 0.5]
    falling = LoopSettings(expert="gnugo", expert_share=0.5, expert_share_final=0.1, expert_share_generations=5)
    assert [expert_share_at(falling, g) for g in (1, 2, 3, 5, 9)] == [0.5, 0.4, 0.3, 0.1, 0.1]
    resolved = falling.resolved(None)
    assert loop_record(resolved)["expert_share_final"] == 0.1 and "expert_share_final" not in loop_record(
        constant.resolved(None))
    with pytest.raises(ValueError, match="expert_share_final"):
        LoopSettings(expert="gnugo", expert_share_final=1.0)
